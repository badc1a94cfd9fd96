/* SPDX-License-Identifier: MIT */
/*
 * The self-test's child: hipextsem-info re-executed with the shim preloaded.
 *
 * It plays an application that shares semaphores with Vulkan: it loads the
 * HIP runtime, opens the render node the shim will use, creates its own
 * binary and timeline syncobjs there, exports them as fds and imports them
 * through hipImportExternalSemaphore (resolved the way a linked application
 * binds it: the default scope, version hip_4.3, where the preloaded shim
 * comes first).  Then it sends semaphores through a real HIP stream and
 * watches what the stream does with markers it writes (hipStreamWriteValue64
 * into pinned memory) and gates it waits on (hipStreamWaitValue64).
 *
 * Every wait has a deadline; a wait call that may block the caller runs on
 * its own thread so that the test can say so instead of hanging.  Results
 * go to the parent as tab-separated lines on a pipe (see selftest.c).
 * Here: set-up, the helpers, and the checks; the measurements that follow
 * them are in selftest_measure.c (the state both share: selftest_child.h).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hipextsem/hip_api.h"
#include "runtime.h"
#include "selfexe.h"
#include "selftest.h"
#include "selftest_child.h"
#include "sync.h"

typedef int (*get_wait_path_fn)(int *attr, char *reason, size_t reason_len);

#define HOLD_FIRST_NS 20000000LL /* how long a held stream is watched, first rounds */
#define HOLD_NS 1000000LL        /* ... and later rounds */
/* The least time the process of exit-with-wait-pending gets to set up,
 * and then to exit once it returned from main (--timeout if longer). */
#define EXIT_CHILD_LIMIT_NS 10000000000LL

extern char **environ;

/* The runtime and shim the child was given, for the process it starts. */
static const char *child_runtime, *child_shim;

/* ---- facts and fatal errors, to the parent ------------------------------- */

static void fact(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fact(const char *key, const char *fmt, ...)
{
	char v[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	st_record("fact", 2, key, v);
}

static void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fatal(const char *fmt, ...)
{
	char v[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	st_record("cannot-run", 1, v);
	st_record("done", 0);
	_exit(0);
}

/* ---- is the stream held? ------------------------------------------------- */

/* True if the marker stays below v for hold_ns (the stream is held). */
static bool marker_stays_below(uint64_t v, int64_t hold_ns)
{
	int64_t end = hx_now_ns() + hold_ns;

	do {
		if (__atomic_load_n(&hx_st.mem[M_MARKER], __ATOMIC_ACQUIRE) >= v)
			return false;
		st_spin_pause();
	} while (hx_now_ns() < end);
	return true;
}

static int64_t hold_ns(unsigned round)
{
	return round < 3 ? HOLD_FIRST_NS : HOLD_NS;
}

static bool syncobj_stays_unsignaled(uint32_t h, uint64_t point, int64_t hold)
{
	int64_t end = hx_now_ns() + hold;

	do {
		if (hx_sync_poll(&hx_st.dev, h, point) == 0)
			return false;
		st_spin_pause();
	} while (hx_now_ns() < end);
	return true;
}

/* ---- a wait call that may block its caller ------------------------------ */

/* A wait call whose semaphores are not signaled yet runs on its own
 * thread: on a shim that blocks the caller (the host-wait path) the test
 * must notice and release it, not hang. */
struct guarded_wait {
	hipExternalSemaphore_t sems[2];
	uint64_t values[2];
	unsigned n;
	hipError_t err;
	atomic_bool done;
	pthread_t th;
};

static void *guarded_wait_main(void *arg)
{
	struct guarded_wait *g = arg;

	g->err = st_sem_wait(g->sems, g->values, g->n);
	atomic_store(&g->done, true);
	return NULL;
}

/* 0: returned; 1: still blocked after the limit (the caller must signal
 * and then call guarded_wait_join); -1: could not start. */
static int guarded_wait_start(struct guarded_wait *g)
{
	int64_t limit = hx_now_ns() + hx_st.timeout_ns / 2;

	atomic_init(&g->done, false);
	if (pthread_create(&g->th, NULL, guarded_wait_main, g) != 0)
		return -1;
	while (!atomic_load(&g->done)) {
		if (hx_now_ns() > limit)
			return 1;
		st_spin_pause();
	}
	pthread_join(g->th, NULL);
	return 0;
}

static bool guarded_wait_join(struct guarded_wait *g)
{
	int64_t end = (hx_st.deadline > hx_now_ns() ? hx_st.deadline : hx_now_ns()) + hx_st.timeout_ns;

	while (!atomic_load(&g->done)) {
		if (hx_now_ns() > end)
			return false; /* the thread is left behind; the child ends soon */
		st_spin_pause();
	}
	pthread_join(g->th, NULL);
	return true;
}

/* ---- checks ---------------------------------------------------------------- */

typedef bool (*check_fn)(void);

/* A check that needs nothing of the child's stream (`independent`) runs
 * even after an earlier check hit its deadline. */
static void run_check_as(const char *name, check_fn fn, bool independent)
{
	bool ok;

	if (hx_st.stop && !independent) {
		st_record("check", 3, name, "0",
		       "not run: an earlier check hit its deadline, so the stream may be stuck");
		return;
	}
	st_record("begin", 1, name);
	hx_st.why[0] = '\0';
	hx_st.timed_out = false;
	hx_st.deadline = hx_now_ns() + hx_st.timeout_ns;
	ok = fn();
	if (!ok && !hx_st.why[0])
		snprintf(hx_st.why, sizeof(hx_st.why), "failed");
	st_record("check", 3, name, ok ? "1" : "0", hx_st.why);
	if (hx_st.timed_out)
		hx_st.stop = true;
}

static void run_check(const char *name, check_fn fn)
{
	run_check_as(name, fn, false);
}

/* The runtime's own primitives first: the shim is built on them, and a
 * device that breaks them is not the shim's fault. */
static bool check_runtime_primitives(void)
{
	unsigned rounds = hx_st.rounds < 20 ? hx_st.rounds : 20;

	for (unsigned k = 0; k < rounds; k++) {
		st_round_start(hx_st.timeout_ns);
		uint64_t g = ++hx_st.gate, m = ++hx_st.marker, runs = atomic_load(&hx_st.hostfn_runs);
		hipError_t e;

		if ((e = st_put_gate(g)) || (e = st_put_marker(m)) || (e = st_host_fn())) {
			st_open_gate(g);
			return st_fail("enqueueing hipStreamWaitValue64 / hipStreamWriteValue64 / %s "
				    "failed (error %s)", st_host_fn_name(), st_ename(e));
		}
		if (!marker_stays_below(m, hold_ns(k))) {
			st_open_gate(g);
			return st_fail("hipStreamWaitValue64 did not hold the stream: a value written "
				    "after the wait became visible before the awaited value was "
				    "written (round %u)", k + 1);
		}
		if (atomic_load(&hx_st.hostfn_runs) != runs) {
			st_open_gate(g); /* later checks need the stream moving */
			return st_fail("%s ran before the stream's prior work completed (the stream "
				    "was still held by hipStreamWaitValue64; round %u)",
				    st_host_fn_name(), k + 1);
		}
		st_open_gate(g);
		if (!st_marker_reaches(m))
			return st_timeout_fail("the stream did not proceed within %.0f s after the "
					    "value hipStreamWaitValue64 waits for was written",
					    st_tsec());
		while (atomic_load(&hx_st.hostfn_runs) == runs) {
			if (hx_now_ns() > hx_st.deadline)
				return st_timeout_fail("the host function enqueued with %s never ran "
						    "(waited %.0f s): signals could never happen",
						    st_host_fn_name(), st_tsec());
			st_spin_pause();
		}
		if (__atomic_load_n(&hx_st.mem[M_HOSTFN], __ATOMIC_ACQUIRE) < m)
			return st_fail("%s ran before a value the stream wrote ahead of it was "
				    "visible (round %u)", st_host_fn_name(), k + 1);
	}
	snprintf(hx_st.why, sizeof(hx_st.why), "hipStreamWaitValue64 holds the stream, "
		 "hipStreamWriteValue64 is seen by the host, %s runs in stream order",
		 st_host_fn_name());
	return true;
}

static bool check_import(void)
{
	if (!st_import_one(false, &hx_st.bin, &hx_st.ebin))
		return false;
	hx_st.have_bin = true;
	if (!hx_st.dev.has_timeline)
		return st_fail("binary imported; %s (%s) has no timeline syncobjs "
			    "(DRM_CAP_SYNCOBJ_TIMELINE, Linux 5.2+)", hx_st.dev.path, hx_st.dev.driver);
	if (!st_import_one(true, &hx_st.tl, &hx_st.etl))
		return false;
	hx_st.have_tl = true;
	snprintf(hx_st.why, sizeof(hx_st.why), "a binary and a timeline syncobj created on %s, exported "
		 "as fds and imported (the fds were taken)", hx_st.dev.path);
	return true;
}

static bool need_sems(bool tl)
{
	if (!hx_st.have_bin || (tl && !hx_st.have_tl))
		return st_fail("not run: no %s semaphore was imported", tl ? "timeline" : "binary");
	return true;
}

/* After a binary wait completed, the signal is consumed. */
static bool binary_consumed(unsigned k)
{
	if (hx_sync_poll(&hx_st.dev, hx_st.bin, 0) == 0)
		return st_fail("the binary syncobj was still signaled after a wait on it completed "
			    "(a wait must consume its signal; round %u)", k + 1);
	return true;
}

static bool host_signal_then_wait(bool tl)
{
	if (!need_sems(tl))
		return false;
	for (unsigned k = 0; k < hx_st.rounds; k++) {
		st_round_start(hx_st.timeout_ns);
		hipExternalSemaphore_t sem = tl ? hx_st.etl : hx_st.ebin;
		uint64_t v = tl ? ++hx_st.tl_next : 0, m = ++hx_st.marker;
		int ret = hx_sync_signal(&hx_st.dev, tl ? hx_st.tl : hx_st.bin, v);
		hipError_t e;

		if (ret)
			return st_fail("host signal (DRM syncobj ioctl): %s", strerror(-ret));
		if ((e = st_sem_wait(&sem, &v, 1)))
			return st_fail("hipWaitExternalSemaphoresAsync answered %s", st_ename(e));
		if ((e = st_put_marker(m)))
			return st_fail("hipStreamWriteValue64 answered %s", st_ename(e));
		if (!st_marker_reaches(m))
			return st_timeout_fail("the stream did not proceed within %.0f s past a wait "
					    "whose %s semaphore was already signaled (round %u)",
					    st_tsec(), tl ? "timeline" : "binary", k + 1);
		if (!tl && !binary_consumed(k))
			return false;
	}
	snprintf(hx_st.why, sizeof(hx_st.why), "%u rounds: host signal, then the stream's wait passed",
		 hx_st.rounds);
	return true;
}

static bool check_host_signal_binary(void) { return host_signal_then_wait(false); }
static bool check_host_signal_timeline(void) { return host_signal_then_wait(true); }

/* Signals what a guarded wait waits for, and joins it. */
static bool release_blocked(struct guarded_wait *g)
{
	for (unsigned i = 0; i < g->n; i++)
		hx_sync_signal(&hx_st.dev, g->sems[i] == hx_st.ebin ? hx_st.bin : hx_st.tl,
			       g->sems[i] == hx_st.ebin ? 0 : g->values[i]);
	if (!guarded_wait_join(g)) {
		hx_st.timed_out = true;
		return false;
	}
	return true;
}

/* Enqueues a wait that cannot pass yet, then a marker.  False (with the
 * reason) if the call blocked or failed. */
static bool enqueue_early_wait(struct guarded_wait *g, uint64_t m)
{
	int r = guarded_wait_start(g);
	hipError_t e;

	if (r < 0)
		return st_fail("cannot start a thread");
	if (r == 1) {
		hx_st.waits_block = true;
		st_fail("hipWaitExternalSemaphoresAsync did not return before its semaphore was "
		     "signaled: waits block the calling thread (an application that enqueues a "
		     "wait and then, on the same thread, the work that signals it would hang)");
		if (!release_blocked(g))
			snprintf(hx_st.why + strlen(hx_st.why), sizeof(hx_st.why) - strlen(hx_st.why),
				 "; the call did not return after the signal either");
		return false;
	}
	if (g->err)
		return st_fail("hipWaitExternalSemaphoresAsync answered %s", st_ename(g->err));
	if ((e = st_put_marker(m)))
		return st_fail("hipStreamWriteValue64 answered %s", st_ename(e));
	return true;
}

static bool check_wait_before_signal(void)
{
	if (!need_sems(true))
		return false;
	for (unsigned k = 0; k < hx_st.rounds; k++) {
		st_round_start(hx_st.timeout_ns);
		bool tl = k % 2;
		struct guarded_wait g = { .n = 1 };
		uint64_t m = ++hx_st.marker;
		int ret;

		g.sems[0] = tl ? hx_st.etl : hx_st.ebin;
		g.values[0] = tl ? ++hx_st.tl_next : 0;
		if (!enqueue_early_wait(&g, m))
			return false;
		if (!marker_stays_below(m, hold_ns(k)))
			return st_fail("a marker the stream writes after a wait on a %s semaphore "
				    "became visible before the semaphore was signaled: the stream "
				    "did not wait (round %u)", tl ? "timeline" : "binary", k + 1);
		ret = hx_sync_signal(&hx_st.dev, tl ? hx_st.tl : hx_st.bin, g.values[0]);
		if (ret)
			return st_fail("host signal: %s", strerror(-ret));
		if (!st_marker_reaches(m))
			return st_timeout_fail("the stream did not proceed within %.0f s after the %s "
					    "semaphore it waits on was signaled (round %u)", st_tsec(),
					    tl ? "timeline" : "binary", k + 1);
		if (!tl && !binary_consumed(k))
			return false;
	}
	snprintf(hx_st.why, sizeof(hx_st.why), "%u rounds (binary and timeline): the wait call returned "
		 "at once and held later stream work until the host signal", hx_st.rounds);
	return true;
}

static bool check_binary_consumes(void)
{
	unsigned rounds = hx_st.rounds < 20 ? hx_st.rounds : 20;

	if (!need_sems(false))
		return false;
	for (unsigned k = 0; k < rounds; k++) {
		st_round_start(hx_st.timeout_ns);
		struct guarded_wait g = { .n = 1, .sems = { hx_st.ebin } };
		uint64_t zero = 0, m1 = ++hx_st.marker, m2 = ++hx_st.marker;
		hipError_t e;

		hx_sync_signal(&hx_st.dev, hx_st.bin, 0);
		if ((e = st_sem_wait(&hx_st.ebin, &zero, 1)) || (e = st_put_marker(m1)))
			return st_fail("enqueue answered %s", st_ename(e));
		if (!st_marker_reaches(m1))
			return st_timeout_fail("the first wait did not pass within %.0f s", st_tsec());
		/* One signal, one wait: the second must hold. */
		if (!enqueue_early_wait(&g, m2))
			return false;
		if (!marker_stays_below(m2, hold_ns(k)))
			return st_fail("a second wait passed on the signal the first wait already "
				    "consumed (binary semaphores are one wait per signal; round %u)",
				    k + 1);
		hx_sync_signal(&hx_st.dev, hx_st.bin, 0);
		if (!st_marker_reaches(m2))
			return st_timeout_fail("the second wait did not pass within %.0f s after a new "
					    "signal", st_tsec());
		if (!binary_consumed(k))
			return false;
	}
	snprintf(hx_st.why, sizeof(hx_st.why), "%u rounds: the binary syncobj was reset by each wait, "
		 "and a second wait held until a second signal", rounds);
	return true;
}

static bool check_signal_after_prior_work(void)
{
	if (!need_sems(true))
		return false;
	for (unsigned k = 0; k < hx_st.rounds; k++) {
		st_round_start(hx_st.timeout_ns);
		bool tl = k % 2;
		hipExternalSemaphore_t sem = tl ? hx_st.etl : hx_st.ebin;
		uint32_t h = tl ? hx_st.tl : hx_st.bin;
		uint64_t g = ++hx_st.gate, m = ++hx_st.marker, v = tl ? ++hx_st.tl_next : 0;
		hipError_t e;
		int ret;

		if ((e = st_put_gate(g)) || (e = st_put_marker(m)) || (e = st_sem_signal(&sem, &v, 1))) {
			st_open_gate(g);
			return st_fail("enqueueing the prior work and the signal answered %s",
				    st_ename(e));
		}
		if (!syncobj_stays_unsignaled(h, v, hold_ns(k))) {
			st_open_gate(g); /* later checks need the stream moving */
			return st_fail("the %s semaphore was signaled while the stream's prior work "
				    "was still held (the signal did not wait for prior work; round "
				    "%u)", tl ? "timeline" : "binary", k + 1);
		}
		st_open_gate(g);
		ret = hx_sync_wait_one(&hx_st.dev, h, v, hx_st.deadline);
		if (ret == -ETIME)
			return st_timeout_fail("the %s semaphore was not signaled within %.0f s after "
					    "the stream's prior work completed: the stream never "
					    "ran the signal (round %u)", tl ? "timeline" : "binary",
					    st_tsec(), k + 1);
		if (ret)
			return st_fail("DRM syncobj wait: %s", strerror(-ret));
		if (__atomic_load_n(&hx_st.mem[M_MARKER], __ATOMIC_ACQUIRE) < m)
			return st_fail("the %s semaphore was signaled before a marker written by the "
				    "stream's prior work was visible (round %u)",
				    tl ? "timeline" : "binary", k + 1);
		if (!tl)
			hx_sync_reset(&hx_st.dev, hx_st.bin);
	}
	snprintf(hx_st.why, sizeof(hx_st.why), "%u rounds (binary and timeline): signaled only after "
		 "the stream's prior work, with its result visible", hx_st.rounds);
	return true;
}

/* A check run again with every enqueue on hipStreamPerThread, all from one
 * thread (selftest_stream.c); its reason says so. */
static bool on_per_thread(check_fn fn)
{
	const char *prefix = hx_st.LaunchHostFunc ? "on hipStreamPerThread: " :
		"on hipStreamPerThread (markers written by host functions and gates reached "
		"through an event: 5.2's value calls cannot take it): ";
	size_t plen = strlen(prefix), keep;
	bool ok;

	if (!need_sems(true))
		return false;
	if (!st_per_thread_begin())
		return false;
	ok = fn();
	st_per_thread_end();
	keep = strlen(hx_st.why);
	if (keep > sizeof(hx_st.why) - 1 - plen)
		keep = sizeof(hx_st.why) - 1 - plen;
	memmove(hx_st.why + plen, hx_st.why, keep);
	memcpy(hx_st.why, prefix, plen);
	hx_st.why[plen + keep] = '\0';
	return ok;
}

static bool check_wait_before_signal_pts(void) { return on_per_thread(check_wait_before_signal); }
static bool check_signal_after_prior_work_pts(void)
{
	return on_per_thread(check_signal_after_prior_work);
}

static bool check_timeline_values(void)
{
	uint64_t prev = 0;

	if (!need_sems(true))
		return false;
	hx_sync_query(&hx_st.dev, hx_st.tl, &prev);
	for (unsigned k = 0; k < hx_st.rounds; k++) {
		st_round_start(hx_st.timeout_ns);
		uint64_t v = ++hx_st.tl_next, cur = 0, m = ++hx_st.marker;
		hipError_t e;
		int ret;

		if ((e = st_sem_signal(&hx_st.etl, &v, 1)))
			return st_fail("hipSignalExternalSemaphoresAsync (point %llu) answered %s",
				    (unsigned long long)v, st_ename(e));
		ret = hx_sync_wait_one(&hx_st.dev, hx_st.tl, v, hx_st.deadline);
		if (ret == -ETIME)
			return st_timeout_fail("timeline point %llu was not signaled within %.0f s",
					    (unsigned long long)v, st_tsec());
		ret = ret ? ret : hx_sync_query(&hx_st.dev, hx_st.tl, &cur);
		if (ret)
			return st_fail("DRM syncobj wait/query: %s", strerror(-ret));
		if (cur != v || cur <= prev)
			return st_fail("after signaling point %llu the timeline reads %llu (before: "
				    "%llu): values must increase by exactly what was signaled",
				    (unsigned long long)v, (unsigned long long)cur,
				    (unsigned long long)prev);
		prev = cur;
		if ((e = st_sem_wait(&hx_st.etl, &v, 1)) || (e = st_put_marker(m)))
			return st_fail("enqueue answered %s", st_ename(e));
		if (!st_marker_reaches(m))
			return st_timeout_fail("a wait for the reached point %llu did not pass within "
					    "%.0f s", (unsigned long long)v, st_tsec());
	}
	snprintf(hx_st.why, sizeof(hx_st.why), "%u rounds: the stream signaled points %llu..%llu in "
		 "order, each read back exactly", hx_st.rounds,
		 (unsigned long long)(hx_st.tl_next - hx_st.rounds + 1), (unsigned long long)hx_st.tl_next);
	return true;
}

static bool check_mixed_array(void)
{
	if (!need_sems(true))
		return false;
	for (unsigned k = 0; k < hx_st.rounds; k++) {
		st_round_start(hx_st.timeout_ns);
		hipExternalSemaphore_t both[2] = { hx_st.ebin, hx_st.etl };
		uint64_t vals[2] = { 0, ++hx_st.tl_next }, m = ++hx_st.marker, m2 = ++hx_st.marker;
		struct guarded_wait g = { .n = 2, .sems = { hx_st.ebin, hx_st.etl } };
		hipError_t e;
		int ret;

		/* One signal call for both, then one wait call for both. */
		if ((e = st_sem_signal(both, vals, 2)))
			return st_fail("hipSignalExternalSemaphoresAsync([binary, timeline]) answered "
				    "%s", st_ename(e));
		ret = hx_sync_wait_one(&hx_st.dev, hx_st.bin, 0, hx_st.deadline);
		ret = ret ? ret : hx_sync_wait_one(&hx_st.dev, hx_st.tl, vals[1], hx_st.deadline);
		if (ret == -ETIME)
			return st_timeout_fail("a mixed signal did not reach both syncobjs within "
					    "%.0f s", st_tsec());
		if ((e = st_sem_wait(both, vals, 2)) || (e = st_put_marker(m)))
			return st_fail("hipWaitExternalSemaphoresAsync([binary, timeline]) answered %s",
				    st_ename(e));
		if (!st_marker_reaches(m))
			return st_timeout_fail("a mixed wait on signaled semaphores did not pass within "
					    "%.0f s", st_tsec());
		if (!binary_consumed(k))
			return false;
		/* A mixed wait before its signals needs every one of them. */
		g.values[1] = ++hx_st.tl_next;
		if (!enqueue_early_wait(&g, m2))
			return false;
		hx_sync_signal(&hx_st.dev, hx_st.bin, 0);
		if (!marker_stays_below(m2, hold_ns(k)))
			return st_fail("a wait on [binary, timeline] passed when only the binary "
				    "semaphore was signaled (round %u)", k + 1);
		hx_sync_signal(&hx_st.dev, hx_st.tl, g.values[1]);
		if (!st_marker_reaches(m2))
			return st_timeout_fail("a mixed wait did not pass within %.0f s after both "
					    "semaphores were signaled", st_tsec());
		if (!binary_consumed(k))
			return false;
	}
	snprintf(hx_st.why, sizeof(hx_st.why), "%u rounds: one call signaled and one waited on "
		 "[binary, timeline]; a wait needed both", hx_st.rounds);
	return true;
}

static bool check_destroy(void)
{
	uint64_t v = 1;
	hipError_t e;

	if (!need_sems(true))
		return false;
	if (!st_stream_idle())
		return false;
	if ((e = hx_st.Destroy(hx_st.ebin)) || (e = hx_st.Destroy(hx_st.etl)))
		return st_fail("hipDestroyExternalSemaphore with nothing pending answered %s",
			    st_ename(e));
	hx_st.have_bin = hx_st.have_tl = false;
	e = hx_st.Destroy(hx_st.ebin);
	if (e != HX_ERROR_INVALID_HANDLE)
		return st_fail("destroying the binary semaphore again answered %s, not 400 "
			    "hipErrorInvalidResourceHandle", st_ename(e));
	e = st_sem_signal(&hx_st.etl, &v, 1);
	if (e != HX_ERROR_INVALID_HANDLE)
		return st_fail("signaling a destroyed semaphore answered %s, not 400 "
			    "hipErrorInvalidResourceHandle", st_ename(e));
	snprintf(hx_st.why, sizeof(hx_st.why), "both destroyed with nothing pending; the handles are "
		 "refused afterwards (400)");
	return true;
}

/* ---- exit with waits pending ---------------------------------------------- */

/*
 * hipextsem-info once more, started by the child in a process group of its
 * own (hx_selftest_exit_child_main): it loads the runtime through the shim,
 * leaves a wait nobody will satisfy on hipStreamPerThread and one on a
 * stream it created, and returns from main.  Every release tears the
 * per-thread stream down from a thread_local destructor that waits for its
 * pending work, before any atexit handler (docs/streams.md): unless the
 * shim releases the waits first, that process never ends.  It must end,
 * with status 0, in time; otherwise its group is killed.  It stays inside
 * the tool's clean-up: whatever it leaves outside its group is reparented
 * to the tool (a subreaper) and ended there.
 */
struct exit_child {
	pid_t pid;
	int rfd;
	char buf[1024];
	size_t len;
	bool enqueued, eof;
	char cannot[640];
};

static void exit_child_line(struct exit_child *x, char *line)
{
	if (!strcmp(line, "enqueued"))
		x->enqueued = true;
	else if (!strncmp(line, "cannot-run\t", 11) && !x->cannot[0])
		snprintf(x->cannot, sizeof(x->cannot), "%s", line + 11);
}

static void exit_child_read(struct exit_child *x)
{
	ssize_t n;

	if (x->eof)
		return;
	n = read(x->rfd, x->buf + x->len, sizeof(x->buf) - 1 - x->len);
	if (n <= 0) {
		if (n == 0 || (errno != EINTR && errno != EAGAIN))
			x->eof = true;
		return;
	}
	x->len += (size_t)n;
	for (;;) {
		char *nl = memchr(x->buf, '\n', x->len);
		size_t used;

		if (!nl) {
			if (x->len == sizeof(x->buf) - 1)
				x->len = 0; /* an overlong line: not one of ours */
			break;
		}
		*nl = '\0';
		exit_child_line(x, x->buf);
		used = (size_t)(nl + 1 - x->buf);
		memmove(x->buf, nl + 1, x->len - used);
		x->len -= used;
	}
}

static bool exit_child_spawn(struct exit_child *x)
{
	char abiarg[8], why[PATH_MAX * 2 + 160];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	struct hx_self self;
	char **argv;
	int p[2], wfd, err;

	if (!hx_self_find(&self, why, sizeof(why)))
		return st_fail("%s", why);
	if (pipe2(p, O_CLOEXEC) != 0) {
		hx_self_free(&self);
		return st_fail("pipe: %s", strerror(errno));
	}
	/* The write end goes to fd 3 of the new process: it is moved above 3
	 * first, so that dup2 always makes a copy without close-on-exec. */
	wfd = fcntl(p[1], F_DUPFD_CLOEXEC, 10);
	close(p[1]);
	if (wfd < 0) {
		close(p[0]);
		hx_self_free(&self);
		return st_fail("fcntl: %s", strerror(errno));
	}
	snprintf(abiarg, sizeof(abiarg), "%d", hx_st.abi == HX_ABI_5 ? 5 : 6);
	char *args[] = { self.prog, HX_SELFTEST_EXIT_ARG, "3", (char *)child_runtime,
			 (char *)child_shim, abiarg, NULL };
	/* Through the interpreter that started this process, if one did. */
	argv = hx_self_argv(&self, args);
	if (!argv) {
		close(p[0]);
		close(wfd);
		hx_self_free(&self);
		return st_fail("out of memory");
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, wfd, 3);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
					   POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	/* The environment is this process's: LD_PRELOAD names the shim. */
	err = posix_spawn(&x->pid, self.exe, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(wfd);
	free(argv);
	if (err) {
		close(p[0]);
		st_fail("cannot start %s: %s", self.exe, strerror(err));
		hx_self_free(&self);
		return false;
	}
	hx_self_free(&self);
	x->rfd = p[0];
	return true;
}

/* Kills the process's group and reaps it, within a bound. */
static void exit_child_kill(struct exit_child *x)
{
	int64_t until = hx_now_ns() + 3000000000LL;

	kill(-x->pid, SIGKILL);
	kill(x->pid, SIGKILL);
	while (waitpid(x->pid, NULL, WNOHANG) == 0 && hx_now_ns() < until)
		usleep(10000);
}

static bool check_exit_with_wait_pending(void)
{
	struct exit_child x = { .pid = -1, .rfd = -1 };
	int64_t limit = hx_st.timeout_ns > EXIT_CHILD_LIMIT_NS ? hx_st.timeout_ns :
								 EXIT_CHILD_LIMIT_NS;
	int64_t start = hx_now_ns(), enqueued_at = 0, last_progress = start, now;
	bool reaped = false;
	int status = 0;

	if (hx_st.waits_block)
		return st_fail("not run: waits block the calling thread here (see "
			       "wait-before-signal), so none can be left pending");
	if (!exit_child_spawn(&x))
		return false;
	for (;;) {
		struct pollfd pfd = { x.eof ? -1 : x.rfd, POLLIN, 0 };

		if (poll(&pfd, 1, 20) > 0)
			exit_child_read(&x);
		now = hx_now_ns();
		if (x.enqueued && !enqueued_at)
			enqueued_at = now;
		if (waitpid(x.pid, &status, WNOHANG) == x.pid) {
			/* Records written just before the exit. */
			while (!x.eof && poll(&pfd, 1, 0) > 0)
				exit_child_read(&x);
			if (x.enqueued && !enqueued_at)
				enqueued_at = hx_now_ns();
			reaped = true;
			break;
		}
		if (now - (enqueued_at ? enqueued_at : start) > limit)
			break;
		/* The parent hears from us while we wait. */
		if (now - last_progress > 500000000LL) {
			st_record("progress", 0);
			last_progress = now;
		}
	}
	close(x.rfd);
	now = hx_now_ns();
	if (!reaped) {
		exit_child_kill(&x);
		if (!x.enqueued)
			return st_fail("the process that was to leave waits pending did not get "
				       "them enqueued within %.0f s (%s): killed", (double)limit / 1e9,
				       x.cannot[0] ? x.cannot : "it reported nothing");
		return st_fail("a process that returned from main with waits pending on "
			       "hipStreamPerThread and on a created stream had not exited %.0f s "
			       "later: the runtime's teardown of the per-thread stream waits for "
			       "the pending wait unless the shim releases it first; killed",
			       (double)limit / 1e9);
	}
	if (x.cannot[0])
		return st_fail("the process that was to leave waits pending could not set them "
			       "up: %s", x.cannot);
	if (!x.enqueued)
		return st_fail("the process that was to leave waits pending ended before it had "
			       "enqueued them (%s %d)", WIFSIGNALED(status) ? "signal" : "exit status",
			       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return st_fail("a process that returned from main with waits pending on "
			       "hipStreamPerThread and on a created stream died on its way out "
			       "(signal %d, %s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	if (WEXITSTATUS(status) != 0)
		return st_fail("a process that returned 0 from main with waits pending on "
			       "hipStreamPerThread and on a created stream exited with status %d",
			       WEXITSTATUS(status));
	snprintf(hx_st.why, sizeof(hx_st.why), "a process that returned from main with waits "
		 "nobody signals pending on hipStreamPerThread and on a created stream exited "
		 "with status 0, %.0f ms later", (double)(now - enqueued_at) / 1e6);
	return true;
}

/* ---- setup --------------------------------------------------------------- */

#define RESOLVE(field, name, required)                                                    \
	do {                                                                              \
		*(void **)&hx_st.field = dlsym(rt, name);                                     \
		if (!hx_st.field && (required))                                               \
			fatal("%s has no %s: not a usable HIP runtime", path, name);      \
	} while (0)

/* The runtime's own handle, as load_runtime opened it. */
static void *child_rt;

static void load_runtime(const char *path)
{
	void *rt = child_rt = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	Dl_info di;

	if (!rt)
		fatal("cannot load the HIP runtime %s: %s", path, dlerror());
	RESOLVE(GetDeviceCount, "hipGetDeviceCount", true);
	RESOLVE(GetDevice, "hipGetDevice", true);
	RESOLVE(DeviceGetAttribute, "hipDeviceGetAttribute", false);
	RESOLVE(DeviceGetPCIBusId, "hipDeviceGetPCIBusId", false);
	RESOLVE(RuntimeGetVersion, "hipRuntimeGetVersion", false);
	RESOLVE(StreamCreate, "hipStreamCreate", true);
	RESOLVE(StreamDestroy, "hipStreamDestroy", true);
	RESOLVE(StreamSynchronize, "hipStreamSynchronize", true);
	RESOLVE(StreamWaitValue64, "hipStreamWaitValue64", true);
	RESOLVE(StreamWriteValue64, "hipStreamWriteValue64", true);
	RESOLVE(StreamAddCallback, "hipStreamAddCallback", true);
	RESOLVE(LaunchHostFunc, "hipLaunchHostFunc", false);
	RESOLVE(HostMalloc, "hipHostMalloc", true);
	RESOLVE(GetErrorName, "hipGetErrorName", false);
	RESOLVE(EventCreateWithFlags, "hipEventCreateWithFlags", false);
	RESOLVE(EventRecord, "hipEventRecord", false);
	RESOLVE(StreamWaitEvent, "hipStreamWaitEvent", false);
	if (dladdr((void *)hx_st.StreamCreate, &di) && di.dli_fname)
		fact("runtime_loaded", "%s", di.dli_fname);
}

/* The four calls, bound as a program linked against libamdhip64 binds its
 * versioned references: the default scope, version hip_4.3. */
static void bind_semaphore_calls(const char *shim)
{
	const char *names[4] = { "hipImportExternalSemaphore", "hipSignalExternalSemaphoresAsync",
				 "hipWaitExternalSemaphoresAsync", "hipDestroyExternalSemaphore" };
	void **slots[4] = { (void **)&hx_st.Import, (void **)&hx_st.Signal, (void **)&hx_st.Wait,
			    (void **)&hx_st.Destroy };
	char real_shim[4096];

	if (!realpath(shim, real_shim))
		snprintf(real_shim, sizeof(real_shim), "%s", shim);
	for (int i = 0; i < 4; i++) {
		char real[4096];
		Dl_info di;

		*slots[i] = dlvsym(RTLD_DEFAULT, names[i], "hip_4.3");
		if (!*slots[i])
			fatal("%s@hip_4.3 is not defined by the runtime or the shim", names[i]);
		if (!dladdr(*slots[i], &di) || !di.dli_fname)
			fatal("cannot tell which library defines %s", names[i]);
		if (!realpath(di.dli_fname, real))
			snprintf(real, sizeof(real), "%s", di.dli_fname);
		if (strcmp(real, real_shim) != 0)
			fatal("the shim does not interpose: %s@hip_4.3 binds to %s, not to %s "
			      "(is it preloaded?)", names[i], di.dli_fname, shim);
	}
	fact("interposed", "yes: the four semaphore calls bind to %s", shim);
}

/* hipExternalMemoryGetMappedMipmappedArray, which Linux releases do not
 * export: does the runtime's hipGetProcAddress hand it out, and does a
 * dlsym on the runtime's handle give it (the shim forwards it there when
 * the runtime hands it out; docs/interposition.md)?  Asked the way a
 * program asks, through the shim; the shim passes the runtime's answer. */
static void report_mipmapped(int version)
{
	static const char name[] = "hipExternalMemoryGetMappedMipmappedArray";
	__typeof__(hipGetProcAddress) *gpa;
	/* -1: the runtime did not say (it failed before the lookup) */
	hipDriverProcAddressQueryResult st = (hipDriverProcAddressQueryResult)-1;
	void *p = NULL;
	hipError_t e;

	fact("mipmapped_dlsym", "%s", dlsym(child_rt, name) ? "yes" : "no");
	*(void **)&gpa = dlsym(child_rt, "hipGetProcAddress");
	if (!gpa) {
		fact("mipmapped_proc_address", "none");
		return;
	}
	e = gpa(name, &p, version > 0 ? version / 10000000 * 100 + version / 100000 % 100 : 600, 0,
		&st);
	fact("mipmapped_proc_address", "%s",
	     e == hipSuccess && st == HIP_GET_PROC_ADDRESS_SUCCESS && p ? "handed out"
	     : st == HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND               ? "not found"
									 : "no answer");
	fact("mipmapped_proc_answer", "error %d, status %d", (int)e, (int)st);
}

static void report_wait_path(int dev)
{
	get_wait_path_fn gwp = (get_wait_path_fn)dlsym(RTLD_DEFAULT, "hipextsemGetWaitPath");
	char reason[512] = "";
	int attr = -1, v = -1, path;

	if (hx_st.DeviceGetAttribute &&
	    hx_st.DeviceGetAttribute(&v, HX_DEVATTR_CAN_USE_STREAM_WAIT_VALUE, dev) != hipSuccess)
		v = -1;
	fact("attribute_read", "%d", v);
	if (!gwp) {
		fact("wait_path", "unknown");
		fact("wait_path_reason", "this shim does not report its wait path "
		     "(hipextsemGetWaitPath is not exported)");
		return;
	}
	path = gwp(&attr, reason, sizeof(reason));
	fact("wait_path", "%s", path == 0 ? "stream" : path == 1 ? "host" : "unknown");
	fact("wait_path_attribute", "%d", attr);
	fact("wait_path_reason", "%s", reason);
}

static void open_render_node(int dev)
{
	struct hx_sync_open_opts opts = { 0 };
	char bus[32] = "";
	const char *env = getenv("HIPEXTSEM_RENDER_NODE");
	int ret;

	/* Asked as the shim asks (shim/registry.c): the HIP device's node, the
	 * override, a timeline-capable node first. */
	opts.node_path = env && *env ? env : NULL;
	opts.allow_eventfd = true;
	if (hx_st.DeviceGetPCIBusId && hx_st.DeviceGetPCIBusId(bus, (int)sizeof(bus), dev) == hipSuccess)
		opts.pci_bus_id = bus;
	opts.want_timeline = true;
	ret = hx_sync_open(&hx_st.dev, &opts);
	if (ret == -EOPNOTSUPP) {
		opts.want_timeline = false;
		ret = hx_sync_open(&hx_st.dev, &opts);
	}
	if (ret == -ENOENT && !opts.node_path)
		fatal("no DRM render node (/dev/dri/renderD*): external semaphores need one with "
		      "sync objects");
	if (ret)
		fatal("no usable DRM render node with sync objects%s%s: %s",
		      opts.node_path ? " (HIPEXTSEM_RENDER_NODE=" : "",
		      opts.node_path ? opts.node_path : "",
		      ret == -EOPNOTSUPP ? "no sync object support" : strerror(-ret));
	if (opts.node_path)
		fact("render_node", "%s (HIPEXTSEM_RENDER_NODE)", hx_st.dev.path);
	else
		fact("render_node", "%s", hx_st.dev.path);
	fact("render_driver", "%s", hx_st.dev.driver);
	fact("render_timeline", "%s", hx_st.dev.has_timeline ? "yes" : "no");
	fact("render_eventfd", "%s", hx_st.dev.has_eventfd ? "yes" : "no");
}

/* The CPU time the shim's poll thread (named hxsem-poll) has used, or -1
 * when this process has none (the hostfunc mode). */
static int64_t poll_thread_cpu_ns(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int64_t ns = -1;

	if (!d)
		return -1;
	while ((de = readdir(d)) && ns < 0) {
		char path[64], comm[32] = "";
		long tid = strtol(de->d_name, NULL, 10);
		struct timespec ts;
		FILE *f;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", tid);
		if (!(f = fopen(path, "re")))
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
		comm[strcspn(comm, "\n")] = 0;
		if (strcmp(comm, "hxsem-poll") != 0)
			continue;
		/* The kernel's per-thread CPU clock of another thread of this
		 * process: (~tid << 3) | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED. */
		if (clock_gettime((clockid_t)((~(unsigned long)tid << 3) | 6), &ts) == 0)
			ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
	closedir(d);
	return ns;
}

int hx_selftest_child_main(int argc, char **argv)
{
	const char *runtime, *shim;
	bool probe_only, measure_only;
	int count = 0, dev = 0, ver = 0;
	hipError_t e;
	void *mem = NULL;

	/* argv: [1] the marker, [2] fd, [3] runtime, [4] shim, [5] abi,
	 * [6] rounds, [7] timeout in ms, [8] "probe", "full" or "measure"
	 * (the import and the measurements only: hipextsem-info's comparison
	 * of the signal modes, one child per mode) */
	if (argc != 9)
		return 2;
	hx_st.out = atoi(argv[2]);
	/* Programs the runtime may exec do not get the record pipe. */
	fcntl(hx_st.out, F_SETFD, FD_CLOEXEC);
	runtime = child_runtime = argv[3];
	shim = child_shim = argv[4];
	hx_st.abi = atoi(argv[5]) == 5 ? HX_ABI_5 : HX_ABI_6;
	hx_st.rounds = (unsigned)strtoul(argv[6], NULL, 10);
	hx_st.timeout_ns = strtoll(argv[7], NULL, 10) * 1000000LL;
	probe_only = !strcmp(argv[8], "probe");
	measure_only = !strcmp(argv[8], "measure");
	/* Nothing of this process may write to the parent's stdout. */
	dup2(STDERR_FILENO, STDOUT_FILENO);

	load_runtime(runtime);
	if (!dlsym(RTLD_DEFAULT, "hipextsemGetStats"))
		fatal("the shim is not loaded in the test process (LD_PRELOAD=%s did not take "
		      "effect)", shim);
	if (hx_st.RuntimeGetVersion && hx_st.RuntimeGetVersion(&ver) == hipSuccess)
		fact("runtime_version", "%d", ver);
	fact("abi", "%s", hx_abi_name(hx_st.abi));
	e = hx_st.GetDeviceCount(&count);
	if (e != hipSuccess || count <= 0)
		fatal("no HIP device: hipGetDeviceCount answered %s with %d device(s) (no GPU, "
		      "no amdgpu/KFD driver, or no permission on /dev/kfd)", st_ename(e), count);
	fact("device_count", "%d", count);
	if ((e = hx_st.GetDevice(&dev)) != hipSuccess)
		fatal("hipGetDevice answered %s", st_ename(e));
	{
		char bus[32] = "";
		if (hx_st.DeviceGetPCIBusId &&
		    hx_st.DeviceGetPCIBusId(bus, (int)sizeof(bus), dev) == hipSuccess)
			fact("device", "%d (PCI %s)", dev, bus);
		else
			fact("device", "%d", dev);
	}
	report_wait_path(dev);
	/* After the shim's first use of the runtime (the wait path): before
	 * it, a dlsym of the name does not ask the runtime. */
	report_mipmapped(ver);
	if (probe_only) {
		st_record("done", 0);
		_exit(0);
	}

	bind_semaphore_calls(shim);
	fact("host_function", "%s", st_host_fn_name());
	open_render_node(dev);
	if ((e = hx_st.StreamCreate(&hx_st.own)) != hipSuccess)
		fatal("hipStreamCreate answered %s", st_ename(e));
	hx_st.s = hx_st.own;
	if ((e = hx_st.HostMalloc(&mem, 4096, 0)) != hipSuccess || !mem)
		fatal("hipHostMalloc answered %s", st_ename(e));
	hx_st.mem = mem;
	memset(mem, 0, 4096);

	if (measure_only) {
		const char *mode = getenv("HIPEXTSEM_SIGNAL_MODE");
		int64_t cpu;

		fact("signal_mode", "%s", mode && *mode ? mode : "hostfunc");
		run_check("import", check_import);
		st_measure();
		cpu = poll_thread_cpu_ns();
		fact("signals_made", "%llu", (unsigned long long)atomic_load(&hx_st.signals_made));
		if (cpu >= 0)
			fact("poll_thread_cpu_ns", "%lld", (long long)cpu);
		st_record("done", 0);
		_exit(0);
	}
	run_check("runtime-primitives", check_runtime_primitives);
	run_check("import", check_import);
	run_check("host-signal-stream-wait-binary", check_host_signal_binary);
	run_check("host-signal-stream-wait-timeline", check_host_signal_timeline);
	run_check("wait-before-signal", check_wait_before_signal);
	run_check("wait-before-signal-per-thread", check_wait_before_signal_pts);
	run_check("binary-wait-consumes", check_binary_consumes);
	run_check("signal-after-prior-work", check_signal_after_prior_work);
	run_check("signal-after-prior-work-per-thread", check_signal_after_prior_work_pts);
	run_check("timeline-values-increase", check_timeline_values);
	run_check("mixed-array", check_mixed_array);
	st_measure();
	run_check("destroy", check_destroy);
	run_check_as("exit-with-wait-pending", check_exit_with_wait_pending, true);
	st_record("done", 0);
	/* A stuck stream or thread must not hold the exit: the runtime's own
	 * teardown would wait for it. */
	_exit(0);
}

/* The process check_exit_with_wait_pending starts.  argv: [1] the marker,
 * [2] the fd its records go to, [3] runtime, [4] shim, [5] abi.  It speaks
 * the child's record format (only "cannot-run" and "enqueued" are read)
 * and, past the set-up, does what an application may do: returns from
 * main with waits pending that nobody will satisfy. */
int hx_selftest_exit_child_main(int argc, char **argv)
{
	uint64_t zero = 0, one = 1;
	int count = 0, dev = 0;
	bool tl;
	hipError_t e;

	if (argc != 6)
		return 2;
	hx_st.out = atoi(argv[2]);
	fcntl(hx_st.out, F_SETFD, FD_CLOEXEC);
	hx_st.abi = atoi(argv[5]) == 5 ? HX_ABI_5 : HX_ABI_6;
	hx_st.timeout_ns = EXIT_CHILD_LIMIT_NS;
	dup2(STDERR_FILENO, STDOUT_FILENO);

	load_runtime(argv[3]);
	if (!dlsym(RTLD_DEFAULT, "hipextsemGetStats"))
		fatal("the shim is not loaded (LD_PRELOAD did not take effect)");
	e = hx_st.GetDeviceCount(&count);
	if (e != hipSuccess || count <= 0)
		fatal("no HIP device: hipGetDeviceCount answered %s", st_ename(e));
	if ((e = hx_st.GetDevice(&dev)) != hipSuccess)
		fatal("hipGetDevice answered %s", st_ename(e));
	bind_semaphore_calls(argv[4]);
	open_render_node(dev);
	if ((e = hx_st.StreamCreate(&hx_st.own)) != hipSuccess)
		fatal("hipStreamCreate answered %s", st_ename(e));
	tl = hx_st.dev.has_timeline;
	if (!st_import_one(false, &hx_st.bin, &hx_st.ebin) ||
	    !st_import_one(tl, &hx_st.tl, &hx_st.etl))
		fatal("%s", hx_st.why);
	/* On this (the main) thread: the thread whose per-thread stream the
	 * runtime's exit waits for. */
	hx_st.s = hipStreamPerThread;
	if ((e = st_sem_wait(&hx_st.ebin, &zero, 1)) != hipSuccess)
		fatal("hipWaitExternalSemaphoresAsync on hipStreamPerThread answered %s",
		      st_ename(e));
	hx_st.s = hx_st.own;
	if ((e = st_sem_wait(&hx_st.etl, tl ? &one : &zero, 1)) != hipSuccess)
		fatal("hipWaitExternalSemaphoresAsync on a created stream answered %s", st_ename(e));
	st_record("enqueued", 0);
	return 0;
}
