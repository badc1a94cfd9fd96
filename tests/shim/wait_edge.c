/* SPDX-License-Identifier: MIT */
/*
 * Edge cases of the wait path: waits that used to hold forever or be lost,
 * and the waiter's answer to failing kernel calls.  One case per argv[1],
 * run inside the test VM on a cpuhip flavour with the shim preloaded, in
 * each waiter mode (eventfd, or HIPEXTSEM_NO_EVENTFD=1 for the multi-wait
 * fallback) and, where it applies, on the host-blocking wait path
 * (HIPEXTSEM_HOST_WAIT=1).
 *
 *   tl-zero      a timeline wait for 0 is satisfied at once: on a fresh
 *                timeline (no fence at all), behind a later point still
 *                pending, and beside an entry that must hold
 *   bin-refire   a binary syncobj whose signal another consumer took (the
 *                same syncobj imported twice; a signal reset from outside)
 *                is waited for again: the next signal releases the wait
 *   tl-max       a wait for UINT64_MAX holds until that point and does not
 *                register the eventfd again for every wait and collect
 *   bin-one      two waits on one binary semaphore (two threads, two
 *                streams): each signal releases exactly one of them
 *   fault-*      HX_WAIT_FAULT=CALL:N makes the next N calls of CALL by the
 *                shim fail (query, arm, multiwait, reset, wake: the
 *                fallback's wake-up signal): the wait still holds until
 *                its signal, is released after it, and the failure is
 *                logged (HIPEXTSEM_LOG_FILE) as retried.  On the
 *                host-blocking path (reset only) the signal seen is taken
 *                once a retry works and the call succeeds.
 *   wake-many    HX_WAIT_FAULT=wake:N (multi-wait mode): every wake-up
 *                of a waiter thread fails while waits on 16 semaphores
 *                come (on every thread's list): each is released within
 *                4 s of its signal, none held until the faults stop
 *   giveup       HX_WAIT_FAULT=arm:N, N above the retries: the last
 *                resort releases the wait (logged as an error), and the
 *                next wait holds until its signal again.
 *
 * Fault injection: the harness's libdrm definitions (hxtest.h, hxfault.c)
 * come first in the symbol lookup order, ahead of libdrm, so they see the
 * shim's calls; the test's own calls use its own DRM file (`drm`) and are
 * never failed.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "hxtest.h"
#if HX_TEST_ABI == 6
#include "hipextsem/hip_graph.h"
#endif

static int drm = -1;

/* ---- fault injection --------------------------------------------------
 * The harness's fault plan (hxtest.h): the next N calls of one kind by the
 * shim fail, those of the kind that match the case's call below. */

enum fault_call { F_NONE, F_QUERY, F_ARM, F_MULTIWAIT, F_RESET, F_WAKE, F_LASTPT };
static enum fault_call fault_call;
/* The harness's call behind each: the points query, eventfd registration,
 * the fallback's multi-wait (its wake-up syncobj plus the set), the
 * consume of a binary signal, the fallback's wake-up (a new wait's kick:
 * while a fault case runs the test signals nothing through HIP), and the
 * shim's question before a binary signal or reset (does the object carry
 * timeline points?). */
static const enum df_call fault_drm[] = {
	[F_QUERY] = DF_QUERY,     [F_ARM] = DF_EVENTFD, [F_MULTIWAIT] = DF_TLWAIT,
	[F_RESET] = DF_RESET,     [F_WAKE] = DF_SIGNAL, [F_LASTPT] = DF_QUERY_IOCTL,
};

static bool host_wait_path(void);

static bool shim_fd(int fd)
{
	return drm >= 0 && fd != drm;
}

/* The failures to inject from now on (0: none) for fault_call. */
static void fault_left(int n)
{
	if (fault_call == F_NONE)
		df_fail_none();
	else
		df_fail_next(fault_drm[fault_call], n);
}

/* The handle this thread last found signaled with a zero-timeout wait: a
 * semaphore's reset follows one (the consume of a binary signal), while
 * the fallback threads' resets of their own wake-up syncobjs do not. */
static __thread uint32_t polled_signaled = UINT32_MAX;

static bool fault_match(const struct df_args *a)
{
	switch (a->call) {
	case DF_TLWAIT:
		return a->count > 1;
	case DF_RESET:
		return a->count == 1 && a->handles[0] == polled_signaled;
	case DF_SIGNAL:
		return a->count == 1;
	case DF_QUERY_IOCTL:
		return ((struct drm_syncobj_timeline_array *)a->arg)->flags &
		       DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED;
	default:
		return true;
	}
}

static void after_call(const struct df_args *a, int ret)
{
	if (a->call == DF_TLWAIT && a->count == 1 && (a->timeout == 0 || host_wait_path()) &&
	    shim_fd(a->fd))
		polled_signaled = ret == 0 ? a->handles[0] : UINT32_MAX;
}

/* ---- helpers ---------------------------------------------------------- */

static bool host_wait_path(void)
{
	const char *e = getenv("HIPEXTSEM_HOST_WAIT");
	return e && strcmp(e, "1") == 0;
}

static hipExternalSemaphore_t import_new(uint32_t h, bool timeline)
{
	hipExternalSemaphore_t s = NULL;
	int fd = so_export(drm, h);

	HIPCHECK(import_fd(&s, fd, timeline));
	return s;
}

/* Waits up to `ms` for *flag to become nonzero. */
static bool flag_within(const uint64_t *flag, unsigned ms)
{
	int64_t until = now_ns() + (int64_t)ms * 1000000;

	while (!load64(flag)) {
		if (now_ns() > until)
			return false;
		sleep_ms(2);
	}
	return true;
}

/* A wait on several semaphores: values[i] for sems[i]. */
static hipError_t wait_n(hipExternalSemaphore_t *sems, const uint64_t *values, unsigned n,
			 hipStream_t st)
{
	test_wait_params p[4];

	memset(p, 0, sizeof(p));
	for (unsigned i = 0; i < n; i++)
		p[i].params.fence.value = values[i];
	return hipWaitExternalSemaphoresAsync(sems, (const hipExternalSemaphoreWaitParams *)p, n,
					      st);
}

/* ---- defect 1: a timeline wait for 0 ---------------------------------- */

static void case_tl_zero(void)
{
	uint64_t *flag = pinned(4 * sizeof(uint64_t));
	uint32_t fresh = so_create(drm, false), busy = so_create(drm, false);
	uint32_t other = so_create(drm, false);
	hipExternalSemaphore_t s_fresh = import_new(fresh, true);
	hipExternalSemaphore_t s_busy = import_new(busy, true);
	hipExternalSemaphore_t s_other = import_new(other, true);
	bool host = host_wait_path();
	hipStream_t st, held;
	struct hx_later ls;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamCreate(&held));

	/* A fresh timeline, as Vulkan's initialValue 0 leaves it: no fence. */
	HIPCHECK(wait1(s_fresh, 0, st));
	stream_mark(st, &flag[0], 1);
	CHECK(flag_within(&flag[0], 5000), "a wait for 0 on a fresh timeline held the stream");

	/* Behind a later point that is pending on another stream (the
	 * host-blocking path cannot hold one stream while the same thread
	 * goes on: there the later point is just never waited for). */
	if (!host)
		HIPCHECK(wait1(s_busy, 5, held));
	HIPCHECK(wait1(s_busy, 0, st));
	stream_mark(st, &flag[1], 1);
	CHECK(flag_within(&flag[1], 5000), "a wait for 0 held until a later point signaled");

	/* Beside an entry that must hold: the call holds for that one. */
	hipExternalSemaphore_t pair[2] = { s_fresh, s_other };
	uint64_t values[2] = { 0, 3 };
	signal_later(&ls, drm, other, 3, 300);
	HIPCHECK(wait_n(pair, values, 2, st));
	stream_mark(st, &flag[2], 1);
	CHECK(flag_within(&flag[2], 5000), "a wait for {0, 3} was not released by point 3");
	CHECK(atomic_load(&ls.due), "a wait for {0, 3} passed before point 3 was signaled");
	later_join(&ls);

	if (!host) {
		CHECK(!load64(&flag[3]), "bookkeeping");
		stream_mark(held, &flag[3], 1);
		sleep_ms(100);
		CHECK(!load64(&flag[3]), "the wait for point 5 passed without its signal");
		so_signal(drm, busy, 5);
		CHECK(flag_within(&flag[3], 5000), "the wait for point 5 was not released");
	}
#if HX_TEST_ABI == 6
	/* A graph wait node for 0 on a fresh timeline (cpuhip has graphs in
	 * its 6.x flavour): the launch's work after it runs. */
	{
		uint32_t g_h = so_create(drm, false);
		hipExternalSemaphore_t g_s = import_new(g_h, true);
		test_wait_params wp;
		struct hx_ext_sem_node_params np = { &g_s, &wp, 1 };
		hipGraph_t g;
		hipGraphExec_t x;
		hipGraphNode_t n;
		uint64_t *gflag = pinned(sizeof(uint64_t));

		memset(&wp, 0, sizeof(wp));
		HIPCHECK(hipGraphCreate(&g, 0));
		HIPCHECK(hipGraphAddExternalSemaphoresWaitNode(&n, g, NULL, 0, &np));
		HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
		HIPCHECK(hipGraphLaunch(x, st));
		stream_mark(st, gflag, 1);
		CHECK(flag_within(gflag, 5000), "a graph wait node for 0 held its launch");
		HIPCHECK(hipStreamSynchronize(st));
		HIPCHECK(hipGraphExecDestroy(x));
		HIPCHECK(hipGraphDestroy(g));
		HIPCHECK(hipDestroyExternalSemaphore(g_s));
	}
#endif
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipStreamSynchronize(held));
	HIPCHECK(hipDestroyExternalSemaphore(s_fresh));
	HIPCHECK(hipDestroyExternalSemaphore(s_busy));
	HIPCHECK(hipDestroyExternalSemaphore(s_other));
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipStreamDestroy(held));
	printf("tl-zero: ok (%s)\n", host ? "host-blocking wait" : "stream wait");
}

/* ---- a failed points query before a binary signal or reset -----------
 * A timeline with no point at import, imported as OpaqueFd, that carries
 * point 1 now: the shim's binary signal and its reset after a wait would
 * drop the chain, so each asks first.  When that query fails (EIO), the
 * signal and the reset must not go ahead as if there were no points: the
 * timeline keeps point 1. */
static uint64_t so_point(uint32_t h)
{
	uint64_t v = 0;

	CHECK(drmSyncobjQuery(drm, &h, &v, 1) == 0, "drmSyncobjQuery: %s", strerror(errno));
	return v;
}

static void case_tl_keep(void)
{
	uint64_t *flag = pinned(sizeof(uint64_t));
	uint32_t h = so_create(drm, false);
	hipExternalSemaphore_t s = import_new(h, false);
	hipStream_t st;
	int hits;

	HIPCHECK(hipStreamCreate(&st));
	so_signal(drm, h, 1);
	/* The signal: three tries, each query failing. */
	fault_call = F_LASTPT;
	fault_left(3);
	HIPCHECK(signal1(s, 0, st));
	HIPCHECK(hipStreamSynchronize(st));
	hits = df_hits();
	CHECK(so_point(h) == 1, "a binary signal whose points query failed took the timeline from "
	      "point 1 to %llu", (unsigned long long)so_point(h));
	CHECK(hits == 3, "the signal asked %d times (3 failures injected, 3 tries expected)", hits);
	/* The reset after a wait: one query fails, the consume is retried. */
	fault_left(1);
	HIPCHECK(wait1(s, 0, st));
	stream_mark(st, flag, 1);
	CHECK(flag_within(flag, 5000), "a wait on a signaled timeline (point 1) did not pass");
	HIPCHECK(hipStreamSynchronize(st));
	for (int i = 0; i < 100 && df_hits() < 4; i++)
		sleep_ms(10);
	sleep_ms(100); /* the retried consume */
	CHECK(df_hits() == 4, "the wait's consume never asked for the points");
	CHECK(so_point(h) == 1, "a reset whose points query failed took the timeline from point 1 "
	      "to %llu", (unsigned long long)so_point(h));
	fault_call = F_NONE;
	fault_left(0);
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	drmSyncobjDestroy(drm, h);
	printf("tl-keep: ok\n");
}

/* ---- a failed points query at import ---------------------------------
 * A timeline at point 1 imported as OpaqueFd is a timeline (the shim asks
 * the kernel at import).  When that question fails, the import must not
 * take the object for binary: a wait for point 2 would pass at once and a
 * binary signal would be refused.  One failure: asked again, imported as
 * the timeline it is.  Failures on every try: the import fails with
 * hipErrorOperatingSystem and the fd stays the caller's. */
static void case_tl_import(void)
{
	uint64_t *flag = pinned(sizeof(uint64_t));
	uint32_t h = so_create(drm, false);
	hipExternalSemaphore_t s = NULL;
	hipStream_t st;
	hipError_t err;
	int fd;

	HIPCHECK(hipStreamCreate(&st));
	so_signal(drm, h, 1);
	fault_call = F_LASTPT;
	fault_left(1);
	s = import_new(h, false);
	CHECK(df_hits() == 1, "the import did not ask for the points (%d failures "
	      "injected)", df_hits());
	HIPCHECK(wait1(s, 2, st));
	stream_mark(st, flag, 1);
	sleep_ms(200);
	CHECK(!load64(flag), "a wait for point 2 passed at point 1: the import took the timeline "
	      "for binary after a failed points query");
	so_signal(drm, h, 2);
	CHECK(flag_within(flag, 5000), "the wait for point 2 did not pass once point 2 was signaled");
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipDestroyExternalSemaphore(s));

	fault_left(1 << 20);
	fd = so_export(drm, h);
	err = import_fd(&s, fd, false);
	fault_call = F_NONE;
	fault_left(0);
	CHECK(err == hipErrorOperatingSystem, "an import whose points query always failed answered "
	      "%d, expected %d (hipErrorOperatingSystem)", (int)err, (int)hipErrorOperatingSystem);
	CHECK(fcntl(fd, F_GETFD) != -1, "the failed import closed the caller's fd");
	close(fd);
	HIPCHECK(hipStreamDestroy(st));
	drmSyncobjDestroy(drm, h);
	printf("tl-import: ok\n");
}

/* ---- defect 2: a binary signal taken by someone else ------------------ */

static void case_bin_refire(void)
{
	uint64_t *flag = pinned(3 * sizeof(uint64_t));
	uint32_t h = so_create(drm, false), g = so_create(drm, false);
	hipExternalSemaphore_t a = import_new(h, false), b = import_new(h, false);
	hipExternalSemaphore_t c = import_new(g, false);
	hipStream_t sa, sb, sc;
	unsigned released;

	HIPCHECK(hipStreamCreate(&sa));
	HIPCHECK(hipStreamCreate(&sb));
	HIPCHECK(hipStreamCreate(&sc));

	/* One syncobj, two imports, a wait on each: one signal releases one
	 * of them (whichever the waiter looks at first consumes and resets
	 * it); the other must be waited for again, not forgotten. */
	HIPCHECK(wait1(a, 0, sa));
	stream_mark(sa, &flag[0], 1);
	HIPCHECK(wait1(b, 0, sb));
	stream_mark(sb, &flag[1], 1);
	sleep_ms(100);
	CHECK(!load64(&flag[0]) && !load64(&flag[1]), "a binary wait passed without a signal");
	so_signal(drm, h, 0);
	int64_t until = now_ns() + 5000000000ll;
	while (!load64(&flag[0]) && !load64(&flag[1]) && now_ns() < until)
		sleep_ms(2);
	sleep_ms(200);
	released = (load64(&flag[0]) != 0) + (load64(&flag[1]) != 0);
	CHECK(released == 1, "one signal released %u of two binary waits (want 1)", released);
	CHECK(so_wait(drm, h, 0, 0) == -ETIME, "the consumed signal was not reset");
	so_signal(drm, h, 0);
	CHECK(flag_within(&flag[0], 5000) && flag_within(&flag[1], 5000),
	      "the second binary wait was lost: a second signal did not release it");

	/* A signal reset from outside before (or after) the waiter saw it:
	 * the next signal releases the wait. */
	HIPCHECK(wait1(c, 0, sc));
	stream_mark(sc, &flag[2], 1);
	sleep_ms(100);
	so_signal(drm, g, 0);
	CHECK(drmSyncobjReset(drm, &g, 1) == 0, "drmSyncobjReset: %s", strerror(errno));
	sleep_ms(200);
	if (!load64(&flag[2])) {
		so_signal(drm, g, 0);
		CHECK(flag_within(&flag[2], 5000),
		      "a binary wait whose signal was reset from outside was lost");
		printf("bin-refire: the outside reset took the first signal\n");
	} else {
		printf("bin-refire: the waiter consumed the first signal before the reset\n");
	}

	HIPCHECK(hipStreamSynchronize(sa));
	HIPCHECK(hipStreamSynchronize(sb));
	HIPCHECK(hipStreamSynchronize(sc));
	HIPCHECK(hipDestroyExternalSemaphore(a));
	HIPCHECK(hipDestroyExternalSemaphore(b));
	HIPCHECK(hipDestroyExternalSemaphore(c));
	HIPCHECK(hipStreamDestroy(sa));
	HIPCHECK(hipStreamDestroy(sb));
	HIPCHECK(hipStreamDestroy(sc));
	printf("bin-refire: ok\n");
}

/* ---- defect 4: a wait for UINT64_MAX ---------------------------------- */

static void case_tl_max(void)
{
	enum { WAITS = 20 };
	uint64_t *flag = pinned(2 * sizeof(uint64_t));
	uint32_t h = so_create(drm, false);
	hipExternalSemaphore_t s = import_new(h, true);
	hipStream_t st, st2;
	int arms_before, arms;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamCreate(&st2));
	HIPCHECK(wait1(s, UINT64_MAX, st));
	stream_mark(st, &flag[0], 1);
	sleep_ms(100);
	arms_before = df_counted(DF_EVENTFD);
	for (int i = 0; i < WAITS; i++)
		HIPCHECK(wait1(s, UINT64_MAX, st2));
	stream_mark(st2, &flag[1], 1);
	/* Collects on the way: points below the one waited for. */
	so_signal(drm, h, 1);
	so_signal(drm, h, UINT64_MAX - 1);
	sleep_ms(100);
	CHECK(!load64(&flag[0]) && !load64(&flag[1]), "a wait for UINT64_MAX passed early");
	arms = df_counted(DF_EVENTFD) - arms_before;
	/* One registration for the point is outstanding; another may be made
	 * when a collect finds the first fired, never one per wait. */
	CHECK(arms <= 3, "%d eventfd registrations for %d waits on one point", arms, WAITS);
	so_signal(drm, h, UINT64_MAX);
	CHECK(flag_within(&flag[0], 5000) && flag_within(&flag[1], 5000),
	      "waits for UINT64_MAX were not released by it");
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipStreamSynchronize(st2));
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipStreamDestroy(st2));
	printf("tl-max: ok (%d eventfd registrations for %d waits)\n", arms, WAITS + 1);
}

/* ---- failing kernel calls --------------------------------------------- */

/* The log's size now: log_has() reads only what comes after it (the file
 * is appended to, and may hold earlier runs). */
static long log_mark(void)
{
	const char *path = getenv("HIPEXTSEM_LOG_FILE");
	FILE *f = path ? fopen(path, "r") : NULL;
	long off = 0;

	if (f) {
		fseek(f, 0, SEEK_END);
		off = ftell(f);
		fclose(f);
	}
	return off;
}

static bool log_has(long from, const char *needle)
{
	const char *path = getenv("HIPEXTSEM_LOG_FILE");
	char line[1024];
	bool found = false;
	FILE *f;

	CHECK(path != NULL, "HIPEXTSEM_LOG_FILE is not set");
	f = fopen(path, "r");
	CHECK(f != NULL, "cannot open %s: %s", path, strerror(errno));
	fseek(f, from, SEEK_SET);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

/* The host-blocking wait: a binary signal seen, its consume (the reset)
 * fails n times; the call succeeds once a retry works and the signal is
 * taken, never left for the next wait. */
static void fault_hostwait_reset(int n)
{
	uint32_t h = so_create(drm, false);
	hipExternalSemaphore_t s = import_new(h, false);
	hipStream_t st;
	long log_from;

	HIPCHECK(hipStreamCreate(&st));
	so_signal(drm, h, 0);
	log_from = log_mark();
	fault_left(n);
	HIPCHECK(wait1(s, 0, st));
	CHECK(df_hits() == n, "%d of %d failures injected: the case tested "
	      "nothing", df_hits(), n);
	CHECK(so_wait(drm, h, 0, 0) != 0, "the signal the wait saw was not taken");
	CHECK(log_has(log_from, "retr"), "no log line says the failed reset is retried");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	drmSyncobjDestroy(drm, h);
	printf("fault reset:%d on the host-blocking wait: ok (retried, the signal taken)\n", n);
}

/* ---- the fallback's wake-ups failing, waits on every thread ------------- */

/* HX_WAIT_FAULT=wake:N, N large (multi-wait mode): every wake-up of a
 * waiter thread fails while new waits come.  Waits on many semaphores
 * land on every thread's list, not only the first's; each must still be
 * released soon after its signal (late by about a second at most), never
 * held until the faults stop. */
#define WAKE_MANY 16
static void case_wake_many(void)
{
	uint64_t *flag = pinned(WAKE_MANY * sizeof(uint64_t));
	hipExternalSemaphore_t s[WAKE_MANY];
	hipStream_t st[WAKE_MANY];
	uint32_t h[WAKE_MANY];
	int64_t t0;
	unsigned held;

	CHECK(fault_call == F_WAKE, "run with HX_WAIT_FAULT=wake:N");
	for (int i = 0; i < WAKE_MANY; i++) {
		h[i] = so_create(drm, false);
		s[i] = import_new(h[i], true);
		HIPCHECK(hipStreamCreate(&st[i]));
		HIPCHECK(wait1(s[i], 1, st[i]));
	}
	for (int i = 0; i < WAKE_MANY; i++)
		so_signal(drm, h[i], 1);
	for (int i = 0; i < WAKE_MANY; i++)
		HIPCHECK(hipStreamSynchronize(st[i]));
	sleep_ms(300); /* every waiter thread asleep over its set */
	fault_left(1 << 30);
	for (int i = 0; i < WAKE_MANY; i++) {
		HIPCHECK(wait1(s[i], 3, st[i]));
		stream_mark(st[i], &flag[i], 1);
	}
	sleep_ms(200);
	for (int i = 0; i < WAKE_MANY; i++)
		CHECK(!load64(&flag[i]), "wait %d passed before its signal", i);
	t0 = now_ns();
	for (int i = 0; i < WAKE_MANY; i++)
		so_signal(drm, h[i], 3);
	do {
		held = 0;
		for (int i = 0; i < WAKE_MANY; i++)
			held += !load64(&flag[i]);
		if (held)
			sleep_ms(10);
	} while (held && now_ns() - t0 < 4000000000ll);
	CHECK(df_hits() > 0, "no wake-up failed: the case tested nothing");
	CHECK(!held, "%u of %d waits still held 4 s after their signals while wake-ups failed "
	      "(%d failures injected)", held, WAKE_MANY, df_hits());
	fault_left(0);
	for (int i = 0; i < WAKE_MANY; i++) {
		HIPCHECK(hipStreamSynchronize(st[i]));
		HIPCHECK(hipStreamDestroy(st[i]));
		HIPCHECK(hipDestroyExternalSemaphore(s[i]));
		drmSyncobjDestroy(drm, h[i]);
	}
	printf("wake-many: ok (%d waits released within %.2f s, %d wake-up failures)\n",
	       WAKE_MANY, (double)(now_ns() - t0) / 1e9, df_hits());
}

/* ---- one wait per binary signal, whichever path ------------------------ */

struct one_arg {
	hipExternalSemaphore_t s;
	hipStream_t st;
	uint64_t *flag;
};

static void *one_waiter(void *p)
{
	struct one_arg *a = p;

	/* On the host-blocking path the call itself returns only after its
	 * signal; on the stream paths the stream holds the mark. */
	HIPCHECK(wait1(a->s, 0, a->st));
	stream_mark(a->st, a->flag, 1);
	return NULL;
}

/* Two waits on one binary semaphore, from two threads on two streams:
 * each signal releases exactly one of them. */
static void case_bin_one(void)
{
	uint32_t h = so_create(drm, false);
	hipExternalSemaphore_t s = import_new(h, false);
	uint64_t *flag = pinned(2 * sizeof(uint64_t));
	struct one_arg a[2];
	pthread_t t[2];
	unsigned passed;

	for (int i = 0; i < 2; i++) {
		a[i].s = s;
		a[i].flag = &flag[i];
		HIPCHECK(hipStreamCreate(&a[i].st));
		CHECK(pthread_create(&t[i], NULL, one_waiter, &a[i]) == 0, "pthread_create");
	}
	sleep_ms(300);
	CHECK(!load64(&flag[0]) && !load64(&flag[1]), "a wait passed before any signal");
	so_signal(drm, h, 0);
	for (int64_t until = now_ns() + 5000000000ll;
	     !load64(&flag[0]) && !load64(&flag[1]) && now_ns() < until;)
		sleep_ms(5);
	CHECK(load64(&flag[0]) || load64(&flag[1]), "neither wait was released by the signal");
	sleep_ms(500);
	passed = (unsigned)load64(&flag[0]) + (unsigned)load64(&flag[1]);
	CHECK(passed == 1, "one binary signal released %u waits", passed);
	so_signal(drm, h, 0);
	CHECK(flag_within(&flag[0], 5000) && flag_within(&flag[1], 5000),
	      "the second signal did not release the other wait");
	for (int i = 0; i < 2; i++) {
		CHECK(pthread_join(t[i], NULL) == 0, "join");
		HIPCHECK(hipStreamSynchronize(a[i].st));
		HIPCHECK(hipStreamDestroy(a[i].st));
	}
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipHostFree(flag));
	drmSyncobjDestroy(drm, h);
	printf("bin-one: ok (one signal, one wait; %s)\n",
	       host_wait_path() ? "host-blocking path" : "stream path");
}

static void case_fault(const char *spec)
{
	static const struct { const char *name; enum fault_call c; bool timeline; } calls[] = {
		{ "query", F_QUERY, true },
		{ "arm", F_ARM, true },
		{ "multiwait", F_MULTIWAIT, true },
		{ "reset", F_RESET, false },
		{ "wake", F_WAKE, true },
	};
	const char *colon = strchr(spec, ':');
	uint64_t *flag = pinned(2 * sizeof(uint64_t));
	bool timeline = true;
	hipExternalSemaphore_t s;
	hipStream_t st;
	uint32_t h;
	long log_from;
	int n;

	CHECK(colon, "HX_WAIT_FAULT=%s is not CALL:N", spec);
	n = atoi(colon + 1);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (strncmp(spec, calls[i].name, (size_t)(colon - spec)) == 0 &&
		    calls[i].name[colon - spec] == '\0') {
			fault_call = calls[i].c;
			timeline = calls[i].timeline;
		}
	CHECK(fault_call != F_NONE && n > 0, "HX_WAIT_FAULT=%s: unknown call or count", spec);
	if (host_wait_path()) {
		CHECK(fault_call == F_RESET, "HX_WAIT_FAULT=%s: the host-blocking wait only "
		      "resets (reset:N)", spec);
		fault_hostwait_reset(n);
		return;
	}

	h = so_create(drm, false);
	s = import_new(h, timeline);
	HIPCHECK(hipStreamCreate(&st));
	/* Starts the waiter and opens the shim's device before the faults. */
	HIPCHECK(wait1(s, timeline ? 1 : 0, st));
	so_signal(drm, h, timeline ? 1 : 0);
	HIPCHECK(hipStreamSynchronize(st));

	log_from = log_mark();
	fault_left(n);
	HIPCHECK(wait1(s, timeline ? 3 : 0, st));
	stream_mark(st, &flag[0], 1);
	if (timeline)
		so_signal(drm, h, 2); /* below the point: a collect, no release */
	sleep_ms(100);
	CHECK(!load64(&flag[0]), "the wait passed before its signal");
	so_signal(drm, h, timeline ? 3 : 0);
	CHECK(flag_within(&flag[0], 10000), "the wait was not released after its signal "
	      "(%d of %d injected failures of %s)", df_hits(), n, spec);
	CHECK(df_hits() > 0, "no failure was injected: the case tested nothing");
	if (!timeline) {
		/* The signal was consumed: the next wait needs a signal of its own. */
		HIPCHECK(wait1(s, 0, st));
		stream_mark(st, &flag[1], 1);
		sleep_ms(100);
		CHECK(!load64(&flag[1]), "the next binary wait passed on the consumed signal");
		so_signal(drm, h, 0);
		CHECK(flag_within(&flag[1], 5000), "the next binary wait was not released");
	}
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(log_has(log_from, "retr"), "no log line says the failed call is retried");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	printf("fault %s: ok (%d failure(s) injected, wait held and released)\n", spec,
	       df_hits());
}

/* HX_WAIT_FAULT=arm:N with N beyond the retries (eventfd mode): the
 * waiter's last resort.  The wait is released without its signal only after the
 * retries (about 6 s of backoff), logged as an error, and once the
 * kernel answers again the next wait holds until its own signal. */
static void case_giveup(const char *spec)
{
	uint64_t *flag = pinned(2 * sizeof(uint64_t));
	uint32_t h = so_create(drm, false);
	hipExternalSemaphore_t s = import_new(h, true);
	int64_t start, took;
	hipStream_t st;
	long log_from;

	CHECK(strncmp(spec, "arm:", 4) == 0 && atoi(spec + 4) > 16,
	      "HX_WAIT_FAULT=%s: the last resort needs arm:N, N above 16", spec);
	fault_call = F_ARM;
	HIPCHECK(hipStreamCreate(&st));
	/* Starts the waiter and opens the shim's device before the faults. */
	HIPCHECK(wait1(s, 1, st));
	so_signal(drm, h, 1);
	HIPCHECK(hipStreamSynchronize(st));

	log_from = log_mark();
	fault_left(atoi(spec + 4));
	start = now_ns();
	HIPCHECK(wait1(s, 3, st));
	stream_mark(st, &flag[0], 1);
	sleep_ms(1000);
	CHECK(!load64(&flag[0]), "the wait was released within 1 s of failures, before the "
	      "retries ran out");
	CHECK(flag_within(&flag[0], 20000), "the wait was held by an arm that keeps failing "
	      "(%d failures injected)", df_hits());
	took = now_ns() - start;
	CHECK(log_has(log_from, "WITHOUT their signal"), "no error says the wait was released "
	      "without its signal");
	fault_left(0);
	/* The kernel answers again: the next wait holds until its signal. */
	HIPCHECK(wait1(s, 4, st));
	stream_mark(st, &flag[1], 1);
	sleep_ms(100);
	CHECK(!load64(&flag[1]), "the next wait passed before its signal");
	so_signal(drm, h, 4);
	CHECK(flag_within(&flag[1], 5000), "the next wait was not released by its signal");
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	drmSyncobjDestroy(drm, h);
	printf("last resort: released after %.1f s and %d failed arms, logged; the next "
	       "wait held until its signal\n", (double)took / 1e9, df_hits());
}

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: the case did not finish within 60 s (a wait held)\n";
	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

int main(int argc, char **argv)
{
	const char *fault = getenv("HX_WAIT_FAULT");

	if (argc != 2)
		FAIL("usage: %s tl-zero|bin-refire|tl-max|bin-one|tl-keep|fault|giveup", argv[0]);
	df_own_fd(&drm);
	df_count(true);
	df_hooks(fault_match, NULL, after_call);
	signal(SIGALRM, on_alarm);
	alarm(60);
	CHECK(expect_shim(), "these cases test the shim: run them with HX_TEST_EXPECT=shim");
	drm = drm_open();
	if (strcmp(argv[1], "tl-zero") == 0)
		case_tl_zero();
	else if (strcmp(argv[1], "bin-refire") == 0)
		case_bin_refire();
	else if (strcmp(argv[1], "tl-max") == 0)
		case_tl_max();
	else if (strcmp(argv[1], "bin-one") == 0)
		case_bin_one();
	else if (strcmp(argv[1], "tl-keep") == 0)
		case_tl_keep();
	else if (strcmp(argv[1], "tl-import") == 0)
		case_tl_import();
	else if (strcmp(argv[1], "fault") == 0 && fault)
		case_fault(fault);
	else if (strcmp(argv[1], "giveup") == 0 && fault)
		case_giveup(fault);
	else if (strcmp(argv[1], "wake-many") == 0 && fault) {
		fault_call = F_WAKE;
		case_wake_many();
	}
	else
		FAIL("unknown case %s (fault and giveup need HX_WAIT_FAULT)", argv[1]);
	return 0;
}
