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
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <xf86drm.h>

#include "hipextsem/hip_api.h"
#include "runtime.h"
#include "selftest.h"
#include "sync.h"

#define HOLD_FIRST_NS 20000000LL /* how long a held stream is watched, first rounds */
#define HOLD_NS 1000000LL        /* ... and later rounds */
#define SETTLE_NS 1000000LL      /* lets a stream park in a wait before a latency sample */
#define MAX_SAMPLES 100000u

enum { M_GATE, M_MARKER, M_HOSTFN, M_GATE2, M_COUNT };

typedef int (*get_wait_path_fn)(int *attr, char *reason, size_t reason_len);
typedef void (*get_stats_fn)(void *st);

static struct {
	int out;
	int64_t timeout_ns;
	unsigned rounds;
	enum hx_abi abi;

	/* the runtime, from its own handle */
	__typeof__(hipGetDeviceCount) *GetDeviceCount;
	__typeof__(hipGetDevice) *GetDevice;
	__typeof__(hipDeviceGetAttribute) *DeviceGetAttribute;
	__typeof__(hipDeviceGetPCIBusId) *DeviceGetPCIBusId;
	__typeof__(hipRuntimeGetVersion) *RuntimeGetVersion;
	__typeof__(hipStreamCreate) *StreamCreate;
	__typeof__(hipStreamDestroy) *StreamDestroy;
	__typeof__(hipStreamSynchronize) *StreamSynchronize;
	__typeof__(hipStreamWaitValue64) *StreamWaitValue64;
	__typeof__(hipStreamWriteValue64) *StreamWriteValue64;
	__typeof__(hipStreamAddCallback) *StreamAddCallback;
	__typeof__(hipLaunchHostFunc) *LaunchHostFunc;
	__typeof__(hipHostMalloc) *HostMalloc;
	__typeof__(hipGetErrorName) *GetErrorName;
	/* the semaphore calls, bound as an application's references bind */
	__typeof__(hipImportExternalSemaphore) *Import;
	__typeof__(hipSignalExternalSemaphoresAsync) *Signal;
	__typeof__(hipWaitExternalSemaphoresAsync) *Wait;
	__typeof__(hipDestroyExternalSemaphore) *Destroy;

	hipStream_t s;
	volatile uint64_t *mem;
	uint64_t gate, marker, tl_next;
	atomic_ullong hostfn_runs;

	struct hx_sync_dev dev;
	uint32_t bin, tl;
	hipExternalSemaphore_t ebin, etl;
	bool have_bin, have_tl;

	int64_t deadline;  /* of the running check */
	bool timed_out;    /* set by a check that hit its deadline */
	bool stop;         /* an earlier check timed out: the rest is not run */
	bool waits_block;  /* a wait call did not return before its signal */
	char why[640];
} C;

/* ---- records ------------------------------------------------------------ */

/* One line: the type and its fields, tab-separated; tabs and newlines in a
 * field become spaces.  A line is written with one write(), so the parent
 * never sees half of one (pipe writes up to PIPE_BUF are atomic). */
static void record(const char *type, int n, ...)
{
	char buf[2048];
	size_t len = 0;
	va_list ap;

	for (const char *p = type; *p && len < sizeof(buf) - 2; p++)
		buf[len++] = *p;
	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		const char *f = va_arg(ap, const char *);
		if (len < sizeof(buf) - 2)
			buf[len++] = '\t';
		for (; *f && len < sizeof(buf) - 2; f++)
			buf[len++] = *f == '\t' || *f == '\n' ? ' ' : *f;
	}
	va_end(ap);
	buf[len++] = '\n';
	if (write(C.out, buf, len) < 0)
		_exit(1); /* the parent is gone: nobody to report to */
}

static void fact(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fact(const char *key, const char *fmt, ...)
{
	char v[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	record("fact", 2, key, v);
}

static void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fatal(const char *fmt, ...)
{
	char v[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	record("cannot-run", 1, v);
	record("done", 0);
	_exit(0);
}

static bool fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(C.why, sizeof(C.why), fmt, ap);
	va_end(ap);
	return false;
}

static bool timeout_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool timeout_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(C.why, sizeof(C.why), fmt, ap);
	va_end(ap);
	C.timed_out = true;
	return false;
}

static const char *ename(hipError_t e)
{
	static __thread char buf[64];
	const char *n = C.GetErrorName ? C.GetErrorName(e) : NULL;

	snprintf(buf, sizeof(buf), "%d %s", (int)e, n ? n : "");
	return buf;
}

static double tsec(void)
{
	return (double)C.timeout_ns / 1e9;
}

/* ---- host side: markers, gates and syncobjs -------------------------- */

static void spin_pause(void)
{
	sched_yield();
}

/* Waits until the stream wrote marker >= v; false at the check's deadline. */
static bool marker_reaches(uint64_t v)
{
	while (__atomic_load_n(&C.mem[M_MARKER], __ATOMIC_ACQUIRE) < v) {
		if (hx_now_ns() > C.deadline)
			return false;
		spin_pause();
	}
	return true;
}

/* True if the marker stays below v for hold_ns (the stream is held). */
static bool marker_stays_below(uint64_t v, int64_t hold_ns)
{
	int64_t end = hx_now_ns() + hold_ns;

	do {
		if (__atomic_load_n(&C.mem[M_MARKER], __ATOMIC_ACQUIRE) >= v)
			return false;
		spin_pause();
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
		if (hx_sync_poll(&C.dev, h, point) == 0)
			return false;
		spin_pause();
	} while (hx_now_ns() < end);
	return true;
}

static hipError_t put_marker(uint64_t v)
{
	return C.StreamWriteValue64(C.s, (void *)&C.mem[M_MARKER], v, 0);
}

static hipError_t put_gate(uint64_t v)
{
	return C.StreamWaitValue64(C.s, (void *)&C.mem[M_GATE], v, HX_WAIT_VALUE_GTE, ~0ull);
}

static void open_gate(uint64_t v)
{
	__atomic_store_n(&C.mem[M_GATE], v, __ATOMIC_RELEASE);
}

static bool stream_idle(void)
{
	/* Everything queued so far has passed; a stuck stream is a timeout. */
	uint64_t m = ++C.marker;

	if (put_marker(m) != hipSuccess)
		return fail("hipStreamWriteValue64 failed");
	if (!marker_reaches(m))
		return timeout_fail("the stream did not finish its queued work within %.0f s",
				    tsec());
	return true;
}

/* ---- the semaphore calls, with the runtime's layout ---------------------- */

static void *params_array(unsigned n, const uint64_t *values)
{
	size_t stride = C.abi == HX_ABI_5 ? sizeof(struct hx_sem_signal_params_v5) :
					    sizeof(struct hx_sem_signal_params_v6);
	char *p = calloc(n ? n : 1, stride);

	/* fence.value is at offset 0 of both layouts, for signal and wait;
	 * flags (64 or 72) stays 0. */
	for (unsigned i = 0; p && i < n; i++)
		memcpy(p + i * stride, &values[i], sizeof(values[i]));
	return p;
}

static hipError_t sem_signal(hipExternalSemaphore_t *sems, const uint64_t *values, unsigned n)
{
	void *p = params_array(n, values);
	hipError_t e = p ? C.Signal(sems, p, n, C.s) : hipErrorOutOfMemory;

	free(p);
	return e;
}

static hipError_t sem_wait(hipExternalSemaphore_t *sems, const uint64_t *values, unsigned n)
{
	void *p = params_array(n, values);
	hipError_t e = p ? C.Wait(sems, p, n, C.s) : hipErrorOutOfMemory;

	free(p);
	return e;
}

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

	g->err = sem_wait(g->sems, g->values, g->n);
	atomic_store(&g->done, true);
	return NULL;
}

/* 0: returned; 1: still blocked after the limit (the caller must signal
 * and then call guarded_wait_join); -1: could not start. */
static int guarded_wait_start(struct guarded_wait *g)
{
	int64_t limit = hx_now_ns() + C.timeout_ns / 2;

	atomic_init(&g->done, false);
	if (pthread_create(&g->th, NULL, guarded_wait_main, g) != 0)
		return -1;
	while (!atomic_load(&g->done)) {
		if (hx_now_ns() > limit)
			return 1;
		spin_pause();
	}
	pthread_join(g->th, NULL);
	return 0;
}

static bool guarded_wait_join(struct guarded_wait *g)
{
	int64_t end = (C.deadline > hx_now_ns() ? C.deadline : hx_now_ns()) + C.timeout_ns;

	while (!atomic_load(&g->done)) {
		if (hx_now_ns() > end)
			return false; /* the thread is left behind; the child ends soon */
		spin_pause();
	}
	pthread_join(g->th, NULL);
	return true;
}

/* Each round gets the full deadline (a slow machine with many rounds is
 * not a stuck stream), and the parent hears from us at least twice a
 * second, so its own watchdog only fires on a real hang. */
static void round_start(int64_t deadline_ns)
{
	static int64_t last;
	int64_t now = hx_now_ns();

	C.deadline = now + deadline_ns;
	if (now - last > 500000000LL) {
		record("progress", 0);
		last = now;
	}
}

/* ---- checks ---------------------------------------------------------------- */

typedef bool (*check_fn)(void);

static void run_check(const char *name, check_fn fn)
{
	bool ok;

	if (C.stop) {
		record("check", 3, name, "0",
		       "not run: an earlier check hit its deadline, so the stream may be stuck");
		return;
	}
	record("begin", 1, name);
	C.why[0] = '\0';
	C.timed_out = false;
	C.deadline = hx_now_ns() + C.timeout_ns;
	ok = fn();
	if (!ok && !C.why[0])
		snprintf(C.why, sizeof(C.why), "failed");
	record("check", 3, name, ok ? "1" : "0", C.why);
	if (C.timed_out)
		C.stop = true;
}

static void count_hostfn(void *arg)
{
	(void)arg;
	/* What the stream had written when this function ran. */
	__atomic_store_n(&C.mem[M_HOSTFN], __atomic_load_n(&C.mem[M_MARKER], __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	atomic_fetch_add(&C.hostfn_runs, 1);
}

static void count_callback(hipStream_t s, hipError_t e, void *arg)
{
	(void)s;
	(void)e;
	count_hostfn(arg);
}

/* The host function the shim's signal uses on this runtime. */
static hipError_t host_fn(void)
{
	if (C.LaunchHostFunc)
		return C.LaunchHostFunc(C.s, count_hostfn, NULL);
	return C.StreamAddCallback(C.s, count_callback, NULL, 0);
}

static const char *host_fn_name(void)
{
	return C.LaunchHostFunc ? "hipLaunchHostFunc" : "hipStreamAddCallback";
}

/* The runtime's own primitives first: the shim is built on them, and a
 * device that breaks them is not the shim's fault. */
static bool check_runtime_primitives(void)
{
	unsigned rounds = C.rounds < 20 ? C.rounds : 20;

	for (unsigned k = 0; k < rounds; k++) {
		round_start(C.timeout_ns);
		uint64_t g = ++C.gate, m = ++C.marker, runs = atomic_load(&C.hostfn_runs);
		hipError_t e;

		if ((e = put_gate(g)) || (e = put_marker(m)) || (e = host_fn())) {
			open_gate(g);
			return fail("enqueueing hipStreamWaitValue64 / hipStreamWriteValue64 / %s "
				    "failed (error %s)", host_fn_name(), ename(e));
		}
		if (!marker_stays_below(m, hold_ns(k))) {
			open_gate(g);
			return fail("hipStreamWaitValue64 did not hold the stream: a value written "
				    "after the wait became visible before the awaited value was "
				    "written (round %u)", k + 1);
		}
		if (atomic_load(&C.hostfn_runs) != runs) {
			open_gate(g); /* later checks need the stream moving */
			return fail("%s ran before the stream's prior work completed (the stream "
				    "was still held by hipStreamWaitValue64; round %u)",
				    host_fn_name(), k + 1);
		}
		open_gate(g);
		if (!marker_reaches(m))
			return timeout_fail("the stream did not proceed within %.0f s after the "
					    "value hipStreamWaitValue64 waits for was written",
					    tsec());
		while (atomic_load(&C.hostfn_runs) == runs) {
			if (hx_now_ns() > C.deadline)
				return timeout_fail("the host function enqueued with %s never ran "
						    "(waited %.0f s): signals could never happen",
						    host_fn_name(), tsec());
			spin_pause();
		}
		if (__atomic_load_n(&C.mem[M_HOSTFN], __ATOMIC_ACQUIRE) < m)
			return fail("%s ran before a value the stream wrote ahead of it was "
				    "visible (round %u)", host_fn_name(), k + 1);
	}
	snprintf(C.why, sizeof(C.why), "hipStreamWaitValue64 holds the stream, "
		 "hipStreamWriteValue64 is seen by the host, %s runs in stream order",
		 host_fn_name());
	return true;
}

static bool import_one(bool timeline, uint32_t *handle, hipExternalSemaphore_t *ext)
{
	const char *kind = timeline ? "timeline" : "binary";
	union {
		struct hx_sem_desc_v5 v5;
		struct hx_sem_desc_v6 v6;
	} d;
	int fd, ret;
	hipError_t e;

	ret = hx_sync_create(&C.dev, false, handle);
	if (ret)
		return fail("DRM_IOCTL_SYNCOBJ_CREATE on %s: %s", C.dev.path, strerror(-ret));
	ret = hx_sync_export_fd(&C.dev, *handle, &fd);
	if (ret)
		return fail("DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD on %s: %s", C.dev.path, strerror(-ret));
	memset(&d, 0, sizeof(d));
	/* type, handle.fd and flags sit at the same offsets in both layouts */
	d.v6.type = timeline ? HX_SEM_HANDLE_TIMELINE_FD : HX_SEM_HANDLE_OPAQUE_FD;
	d.v6.handle.fd = fd;
	e = C.Import(ext, (const hipExternalSemaphoreHandleDesc *)(const void *)&d);
	if (e != hipSuccess) {
		close(fd);
		return fail("hipImportExternalSemaphore of a %s syncobj fd answered %s", kind,
			    ename(e));
	}
	if (!*ext)
		return fail("hipImportExternalSemaphore (%s) succeeded with a NULL handle", kind);
	if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) {
		close(fd);
		return fail("hipImportExternalSemaphore (%s) succeeded but left fd %d open (a "
			    "successful import takes the fd)", kind, fd);
	}
	return true;
}

static bool check_import(void)
{
	if (!import_one(false, &C.bin, &C.ebin))
		return false;
	C.have_bin = true;
	if (!C.dev.has_timeline)
		return fail("binary imported; %s (%s) has no timeline syncobjs "
			    "(DRM_CAP_SYNCOBJ_TIMELINE, Linux 5.2+)", C.dev.path, C.dev.driver);
	if (!import_one(true, &C.tl, &C.etl))
		return false;
	C.have_tl = true;
	snprintf(C.why, sizeof(C.why), "a binary and a timeline syncobj created on %s, exported "
		 "as fds and imported (the fds were taken)", C.dev.path);
	return true;
}

static bool need_sems(bool tl)
{
	if (!C.have_bin || (tl && !C.have_tl))
		return fail("not run: no %s semaphore was imported", tl ? "timeline" : "binary");
	return true;
}

/* After a binary wait completed, the signal is consumed. */
static bool binary_consumed(unsigned k)
{
	if (hx_sync_poll(&C.dev, C.bin, 0) == 0)
		return fail("the binary syncobj was still signaled after a wait on it completed "
			    "(a wait must consume its signal; round %u)", k + 1);
	return true;
}

static bool host_signal_then_wait(bool tl)
{
	if (!need_sems(tl))
		return false;
	for (unsigned k = 0; k < C.rounds; k++) {
		round_start(C.timeout_ns);
		hipExternalSemaphore_t sem = tl ? C.etl : C.ebin;
		uint64_t v = tl ? ++C.tl_next : 0, m = ++C.marker;
		int ret = hx_sync_signal(&C.dev, tl ? C.tl : C.bin, v);
		hipError_t e;

		if (ret)
			return fail("host signal (DRM syncobj ioctl): %s", strerror(-ret));
		if ((e = sem_wait(&sem, &v, 1)))
			return fail("hipWaitExternalSemaphoresAsync answered %s", ename(e));
		if ((e = put_marker(m)))
			return fail("hipStreamWriteValue64 answered %s", ename(e));
		if (!marker_reaches(m))
			return timeout_fail("the stream did not proceed within %.0f s past a wait "
					    "whose %s semaphore was already signaled (round %u)",
					    tsec(), tl ? "timeline" : "binary", k + 1);
		if (!tl && !binary_consumed(k))
			return false;
	}
	snprintf(C.why, sizeof(C.why), "%u rounds: host signal, then the stream's wait passed",
		 C.rounds);
	return true;
}

static bool check_host_signal_binary(void) { return host_signal_then_wait(false); }
static bool check_host_signal_timeline(void) { return host_signal_then_wait(true); }

/* Signals what a guarded wait waits for, and joins it. */
static bool release_blocked(struct guarded_wait *g)
{
	for (unsigned i = 0; i < g->n; i++)
		hx_sync_signal(&C.dev, g->sems[i] == C.ebin ? C.bin : C.tl,
			       g->sems[i] == C.ebin ? 0 : g->values[i]);
	if (!guarded_wait_join(g)) {
		C.timed_out = true;
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
		return fail("cannot start a thread");
	if (r == 1) {
		C.waits_block = true;
		fail("hipWaitExternalSemaphoresAsync did not return before its semaphore was "
		     "signaled: waits block the calling thread (an application that enqueues a "
		     "wait and then, on the same thread, the work that signals it would hang)");
		if (!release_blocked(g))
			snprintf(C.why + strlen(C.why), sizeof(C.why) - strlen(C.why),
				 "; the call did not return after the signal either");
		return false;
	}
	if (g->err)
		return fail("hipWaitExternalSemaphoresAsync answered %s", ename(g->err));
	if ((e = put_marker(m)))
		return fail("hipStreamWriteValue64 answered %s", ename(e));
	return true;
}

static bool check_wait_before_signal(void)
{
	if (!need_sems(true))
		return false;
	for (unsigned k = 0; k < C.rounds; k++) {
		round_start(C.timeout_ns);
		bool tl = k % 2;
		struct guarded_wait g = { .n = 1 };
		uint64_t m = ++C.marker;
		int ret;

		g.sems[0] = tl ? C.etl : C.ebin;
		g.values[0] = tl ? ++C.tl_next : 0;
		if (!enqueue_early_wait(&g, m))
			return false;
		if (!marker_stays_below(m, hold_ns(k)))
			return fail("a marker the stream writes after a wait on a %s semaphore "
				    "became visible before the semaphore was signaled: the stream "
				    "did not wait (round %u)", tl ? "timeline" : "binary", k + 1);
		ret = hx_sync_signal(&C.dev, tl ? C.tl : C.bin, g.values[0]);
		if (ret)
			return fail("host signal: %s", strerror(-ret));
		if (!marker_reaches(m))
			return timeout_fail("the stream did not proceed within %.0f s after the %s "
					    "semaphore it waits on was signaled (round %u)", tsec(),
					    tl ? "timeline" : "binary", k + 1);
		if (!tl && !binary_consumed(k))
			return false;
	}
	snprintf(C.why, sizeof(C.why), "%u rounds (binary and timeline): the wait call returned "
		 "at once and held later stream work until the host signal", C.rounds);
	return true;
}

static bool check_binary_consumes(void)
{
	unsigned rounds = C.rounds < 20 ? C.rounds : 20;

	if (!need_sems(false))
		return false;
	for (unsigned k = 0; k < rounds; k++) {
		round_start(C.timeout_ns);
		struct guarded_wait g = { .n = 1, .sems = { C.ebin } };
		uint64_t zero = 0, m1 = ++C.marker, m2 = ++C.marker;
		hipError_t e;

		hx_sync_signal(&C.dev, C.bin, 0);
		if ((e = sem_wait(&C.ebin, &zero, 1)) || (e = put_marker(m1)))
			return fail("enqueue answered %s", ename(e));
		if (!marker_reaches(m1))
			return timeout_fail("the first wait did not pass within %.0f s", tsec());
		/* One signal, one wait: the second must hold. */
		if (!enqueue_early_wait(&g, m2))
			return false;
		if (!marker_stays_below(m2, hold_ns(k)))
			return fail("a second wait passed on the signal the first wait already "
				    "consumed (binary semaphores are one wait per signal; round %u)",
				    k + 1);
		hx_sync_signal(&C.dev, C.bin, 0);
		if (!marker_reaches(m2))
			return timeout_fail("the second wait did not pass within %.0f s after a new "
					    "signal", tsec());
		if (!binary_consumed(k))
			return false;
	}
	snprintf(C.why, sizeof(C.why), "%u rounds: the binary syncobj was reset by each wait, "
		 "and a second wait held until a second signal", rounds);
	return true;
}

static bool check_signal_after_prior_work(void)
{
	if (!need_sems(true))
		return false;
	for (unsigned k = 0; k < C.rounds; k++) {
		round_start(C.timeout_ns);
		bool tl = k % 2;
		hipExternalSemaphore_t sem = tl ? C.etl : C.ebin;
		uint32_t h = tl ? C.tl : C.bin;
		uint64_t g = ++C.gate, m = ++C.marker, v = tl ? ++C.tl_next : 0;
		hipError_t e;
		int ret;

		if ((e = put_gate(g)) || (e = put_marker(m)) || (e = sem_signal(&sem, &v, 1))) {
			open_gate(g);
			return fail("enqueueing the prior work and the signal answered %s",
				    ename(e));
		}
		if (!syncobj_stays_unsignaled(h, v, hold_ns(k))) {
			open_gate(g); /* later checks need the stream moving */
			return fail("the %s semaphore was signaled while the stream's prior work "
				    "was still held (the signal did not wait for prior work; round "
				    "%u)", tl ? "timeline" : "binary", k + 1);
		}
		open_gate(g);
		ret = hx_sync_wait_one(&C.dev, h, v, C.deadline);
		if (ret == -ETIME)
			return timeout_fail("the %s semaphore was not signaled within %.0f s after "
					    "the stream's prior work completed: the stream never "
					    "ran the signal (round %u)", tl ? "timeline" : "binary",
					    tsec(), k + 1);
		if (ret)
			return fail("DRM syncobj wait: %s", strerror(-ret));
		if (__atomic_load_n(&C.mem[M_MARKER], __ATOMIC_ACQUIRE) < m)
			return fail("the %s semaphore was signaled before a marker written by the "
				    "stream's prior work was visible (round %u)",
				    tl ? "timeline" : "binary", k + 1);
		if (!tl)
			hx_sync_reset(&C.dev, C.bin);
	}
	snprintf(C.why, sizeof(C.why), "%u rounds (binary and timeline): signaled only after "
		 "the stream's prior work, with its result visible", C.rounds);
	return true;
}

static bool check_timeline_values(void)
{
	uint64_t prev = 0;

	if (!need_sems(true))
		return false;
	hx_sync_query(&C.dev, C.tl, &prev);
	for (unsigned k = 0; k < C.rounds; k++) {
		round_start(C.timeout_ns);
		uint64_t v = ++C.tl_next, cur = 0, m = ++C.marker;
		hipError_t e;
		int ret;

		if ((e = sem_signal(&C.etl, &v, 1)))
			return fail("hipSignalExternalSemaphoresAsync (point %llu) answered %s",
				    (unsigned long long)v, ename(e));
		ret = hx_sync_wait_one(&C.dev, C.tl, v, C.deadline);
		if (ret == -ETIME)
			return timeout_fail("timeline point %llu was not signaled within %.0f s",
					    (unsigned long long)v, tsec());
		ret = ret ? ret : hx_sync_query(&C.dev, C.tl, &cur);
		if (ret)
			return fail("DRM syncobj wait/query: %s", strerror(-ret));
		if (cur != v || cur <= prev)
			return fail("after signaling point %llu the timeline reads %llu (before: "
				    "%llu): values must increase by exactly what was signaled",
				    (unsigned long long)v, (unsigned long long)cur,
				    (unsigned long long)prev);
		prev = cur;
		if ((e = sem_wait(&C.etl, &v, 1)) || (e = put_marker(m)))
			return fail("enqueue answered %s", ename(e));
		if (!marker_reaches(m))
			return timeout_fail("a wait for the reached point %llu did not pass within "
					    "%.0f s", (unsigned long long)v, tsec());
	}
	snprintf(C.why, sizeof(C.why), "%u rounds: the stream signaled points %llu..%llu in "
		 "order, each read back exactly", C.rounds,
		 (unsigned long long)(C.tl_next - C.rounds + 1), (unsigned long long)C.tl_next);
	return true;
}

static bool check_mixed_array(void)
{
	if (!need_sems(true))
		return false;
	for (unsigned k = 0; k < C.rounds; k++) {
		round_start(C.timeout_ns);
		hipExternalSemaphore_t both[2] = { C.ebin, C.etl };
		uint64_t vals[2] = { 0, ++C.tl_next }, m = ++C.marker, m2 = ++C.marker;
		struct guarded_wait g = { .n = 2, .sems = { C.ebin, C.etl } };
		hipError_t e;
		int ret;

		/* One signal call for both, then one wait call for both. */
		if ((e = sem_signal(both, vals, 2)))
			return fail("hipSignalExternalSemaphoresAsync([binary, timeline]) answered "
				    "%s", ename(e));
		ret = hx_sync_wait_one(&C.dev, C.bin, 0, C.deadline);
		ret = ret ? ret : hx_sync_wait_one(&C.dev, C.tl, vals[1], C.deadline);
		if (ret == -ETIME)
			return timeout_fail("a mixed signal did not reach both syncobjs within "
					    "%.0f s", tsec());
		if ((e = sem_wait(both, vals, 2)) || (e = put_marker(m)))
			return fail("hipWaitExternalSemaphoresAsync([binary, timeline]) answered %s",
				    ename(e));
		if (!marker_reaches(m))
			return timeout_fail("a mixed wait on signaled semaphores did not pass within "
					    "%.0f s", tsec());
		if (!binary_consumed(k))
			return false;
		/* A mixed wait before its signals needs every one of them. */
		g.values[1] = ++C.tl_next;
		if (!enqueue_early_wait(&g, m2))
			return false;
		hx_sync_signal(&C.dev, C.bin, 0);
		if (!marker_stays_below(m2, hold_ns(k)))
			return fail("a wait on [binary, timeline] passed when only the binary "
				    "semaphore was signaled (round %u)", k + 1);
		hx_sync_signal(&C.dev, C.tl, g.values[1]);
		if (!marker_reaches(m2))
			return timeout_fail("a mixed wait did not pass within %.0f s after both "
					    "semaphores were signaled", tsec());
		if (!binary_consumed(k))
			return false;
	}
	snprintf(C.why, sizeof(C.why), "%u rounds: one call signaled and one waited on "
		 "[binary, timeline]; a wait needed both", C.rounds);
	return true;
}

static bool check_destroy(void)
{
	uint64_t v = 1;
	hipError_t e;

	if (!need_sems(true))
		return false;
	if (!stream_idle())
		return false;
	if ((e = C.Destroy(C.ebin)) || (e = C.Destroy(C.etl)))
		return fail("hipDestroyExternalSemaphore with nothing pending answered %s",
			    ename(e));
	C.have_bin = C.have_tl = false;
	e = C.Destroy(C.ebin);
	if (e != HX_ERROR_INVALID_HANDLE)
		return fail("destroying the binary semaphore again answered %s, not 400 "
			    "hipErrorInvalidResourceHandle", ename(e));
	e = sem_signal(&C.etl, &v, 1);
	if (e != HX_ERROR_INVALID_HANDLE)
		return fail("signaling a destroyed semaphore answered %s, not 400 "
			    "hipErrorInvalidResourceHandle", ename(e));
	snprintf(C.why, sizeof(C.why), "both destroyed with nothing pending; the handles are "
		 "refused afterwards (400)");
	return true;
}

/* ---- measurements ------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void pct(int64_t *v, unsigned n, double *p50, double *p99)
{
	unsigned i99;

	qsort(v, n, sizeof(*v), cmp_i64);
	i99 = (unsigned)(((uint64_t)n * 99) / 100);
	if (i99 >= n)
		i99 = n - 1;
	*p50 = (double)v[n / 2];
	*p99 = (double)v[i99];
}

static void metric(const char *name, int64_t *shim, int64_t *base, unsigned n,
		   const char *what, const char *baseline)
{
	double a50, a99, b50, b99;
	char f[5][32];

	pct(shim, n, &a50, &a99);
	pct(base, n, &b50, &b99);
	snprintf(f[0], sizeof(f[0]), "%.0f", a50);
	snprintf(f[1], sizeof(f[1]), "%.0f", a99);
	snprintf(f[2], sizeof(f[2]), "%.0f", b50);
	snprintf(f[3], sizeof(f[3]), "%.0f", b99);
	snprintf(f[4], sizeof(f[4]), "%u", n);
	record("metric", 8, name, f[0], f[1], f[2], f[3], f[4], what, baseline);
}

static void settle(void)
{
	struct timespec ts = { 0, SETTLE_NS };
	nanosleep(&ts, NULL);
}

/* The bare primitive of both latencies: a host write opens the gate the
 * stream is parked at (hipStreamWaitValue64) and the stream writes the
 * next marker (hipStreamWriteValue64); the time until the host sees it.
 * False if the marker never came. */
static bool gate_round_ns(int64_t *out)
{
	uint64_t g = ++C.gate, m = ++C.marker;
	int64_t t0;

	put_gate(g);
	put_marker(m);
	settle();
	t0 = hx_now_ns();
	open_gate(g);
	if (!marker_reaches(m))
		return false;
	*out = hx_now_ns() - t0;
	return true;
}

static void not_measured(const char *name, const char *why)
{
	record("not-measured", 2, name, why);
}

/* ---- enqueue cost ----------------------------------------------------- */

/*
 * What a signal or wait call costs the calling thread, measured the way
 * the project's benchmark does (docs/bench.md, "Enqueue cost on the
 * calling thread"): the thread's CPU time over a batch of ENQ_BATCH calls
 * on a stream held at a gate, as a busy GPU holds it, each batch right
 * after the stream drained.  Against this runtime's own primitives: a
 * signal against the host function it enqueues, a wait against
 * hipStreamWaitValue64 plus the eventfd arming ioctl per semaphore that
 * an eventfd-based wait issues.  What ran just before a batch changes its
 * cost, so the kinds follow each other in a balanced order.
 */
enum enq_kind {
	EQ_SIGNAL1,
	EQ_SIGNAL16,
	EQ_WAIT1,
	EQ_WAIT16,
	EQ_HOSTFN,
	EQ_WAITVALUE,
	EQ_ARM1,
	EQ_ARM16,
	EQ_KINDS
};

static const char *const enq_names[EQ_KINDS] = {
	[EQ_SIGNAL1] = "1-semaphore signals",
	[EQ_SIGNAL16] = "16-semaphore signals",
	[EQ_WAIT1] = "1-semaphore waits",
	[EQ_WAIT16] = "16-semaphore waits",
	[EQ_HOSTFN] = "empty host functions",
	[EQ_WAITVALUE] = "hipStreamWaitValue64 calls",
	[EQ_ARM1] = "DRM_IOCTL_SYNCOBJ_EVENTFD arms",
	[EQ_ARM16] = "16-fold DRM_IOCTL_SYNCOBJ_EVENTFD arms",
};

#define ENQ_BATCH 8
#define ENQ_SEMS (16 * ENQ_BATCH) /* a distinct set for every call of a batch */
#define ENQ_WARMUP 4              /* rounds not counted */

struct enq {
	uint32_t raw[ENQ_SEMS];
	hipExternalSemaphore_t hs[ENQ_SEMS];
	uint64_t pts[ENQ_SEMS];
	unsigned nsems;
	void *sp, *wp; /* 16 signal / wait parameters in the runtime's layout */
	int efd;
	uint64_t point;
	int64_t *t[EQ_KINDS];
};

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Round `round`, position `pos`: a Williams design (0, 1, 7, 2, 6, 3, 5, 4,
 * then +1 per round), so over EQ_KINDS rounds every kind comes right
 * after every other kind once. */
_Static_assert(EQ_KINDS % 2 == 0, "the Williams design below needs an even number of kinds");
static enum enq_kind enq_order(unsigned round, unsigned pos)
{
	unsigned first = pos == 0 ? 0 : pos % 2 ? (pos + 1) / 2 : EQ_KINDS - pos / 2;

	return (enum enq_kind)((first + round) % EQ_KINDS);
}

static void enq_set_values(void *params, uint64_t v)
{
	size_t stride = C.abi == HX_ABI_5 ? sizeof(struct hx_sem_signal_params_v5) :
					    sizeof(struct hx_sem_signal_params_v6);

	for (unsigned i = 0; i < 16; i++)
		memcpy((char *)params + i * stride, &v, sizeof(v)); /* fence.value */
}

/* One batch of `kind` into *out (CPU ns per call); false if a call failed
 * or the stream did not drain (C.why says which). */
static bool enq_batch(struct enq *q, enum enq_kind kind, int64_t *out)
{
	unsigned n = kind == EQ_SIGNAL16 || kind == EQ_WAIT16 || kind == EQ_ARM16 ? 16 : 1;
	uint64_t g = ++C.gate, p = ++q->point, cnt;
	hipError_t e = hipSuccess;
	int64_t t0;

	if (!stream_idle())
		return false;
	if ((e = put_gate(g)) != hipSuccess)
		return fail("holding the stream at a gate answered %s", ename(e));
	enq_set_values(q->sp, p);
	enq_set_values(q->wp, p); /* a point not signaled yet */
	t0 = thread_cpu_ns();
	for (unsigned b = 0; b < ENQ_BATCH && e == hipSuccess; b++) {
		hipExternalSemaphore_t *hs = &q->hs[b * 16];

		switch (kind) {
		case EQ_SIGNAL1:
		case EQ_SIGNAL16:
			e = C.Signal(hs, q->sp, n, C.s);
			break;
		case EQ_WAIT1:
		case EQ_WAIT16:
			e = C.Wait(hs, q->wp, n, C.s);
			break;
		case EQ_HOSTFN:
			e = host_fn();
			break;
		case EQ_WAITVALUE:
			e = C.StreamWaitValue64(C.s, (void *)&C.mem[M_GATE2], p, HX_WAIT_VALUE_GTE,
						~0ull);
			break;
		case EQ_ARM1:
		case EQ_ARM16:
			for (unsigned i = 0; i < n && e == hipSuccess; i++)
				if (hx_sync_eventfd(&C.dev, q->raw[b * 16 + i], p, q->efd))
					e = hipErrorUnknown;
			break;
		case EQ_KINDS:
			break;
		}
	}
	*out = (thread_cpu_ns() - t0) / ENQ_BATCH;
	/* What the waits and arms wait for, then the gates: the stream drains. */
	if (kind == EQ_WAIT1 || kind == EQ_WAIT16 || kind == EQ_ARM1 || kind == EQ_ARM16) {
		for (unsigned i = 0; i < q->nsems; i++)
			q->pts[i] = p;
		if (drmSyncobjTimelineSignal(C.dev.fd, q->raw, q->pts, q->nsems))
			e = e ? e : hipErrorUnknown;
		(void)!read(q->efd, &cnt, sizeof(cnt));
	}
	__atomic_store_n(&C.mem[M_GATE2], p, __ATOMIC_RELEASE);
	open_gate(g);
	if (e != hipSuccess)
		return fail("enqueue cost: a batch of %s failed (%s)", enq_names[kind], ename(e));
	return true;
}

static void enq_free(struct enq *q)
{
	stream_idle(); /* nothing of ours left in the stream */
	for (unsigned i = 0; i < q->nsems; i++) {
		C.Destroy(q->hs[i]);
		hx_sync_destroy(&C.dev, q->raw[i]);
	}
	if (q->efd >= 0)
		close(q->efd);
	for (int k = 0; k < EQ_KINDS; k++)
		free(q->t[k]);
	free(q->sp);
	free(q->wp);
	free(q);
}

/* The floor of a wait, per round: the stream wait plus its arming ioctls
 * (none where the kernel has no eventfd notification). */
static void enq_floor(const struct enq *q, enum enq_kind arm, int64_t *out, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		out[k] = q->t[EQ_WAITVALUE][k] + (C.dev.has_eventfd ? q->t[arm][k] : 0);
}

/* Emits signal_enqueue, signal_enqueue16, wait_enqueue, wait_enqueue16;
 * false if a batch failed (the rest is not measured either). */
static bool measure_enqueue(void)
{
	unsigned n = C.rounds;
	struct enq *q = calloc(1, sizeof(*q));
	uint64_t zero[16] = { 0 };
	int64_t *base = calloc(n, sizeof(*base));
	char hf[160], wf[200];
	bool ok = q && base;

	if (q)
		q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	for (int k = 0; ok && k < EQ_KINDS; k++)
		ok = (q->t[k] = calloc(n, sizeof(int64_t))) != NULL;
	ok = ok && q->efd >= 0 && (q->sp = params_array(16, zero)) && (q->wp = params_array(16, zero));
	for (; ok && q->nsems < ENQ_SEMS; q->nsems++)
		if (!import_one(true, &q->raw[q->nsems], &q->hs[q->nsems]))
			break;
	if (!ok || q->nsems < ENQ_SEMS) {
		not_measured("enqueue", ok ? C.why : "out of memory");
		if (q)
			enq_free(q);
		free(base);
		return true; /* nothing was left in the stream */
	}
	for (unsigned r = 0; r < n + ENQ_WARMUP; r++) {
		round_start(C.timeout_ns * 4);
		for (unsigned j = 0; j < EQ_KINDS; j++) {
			enum enq_kind kind = enq_order(r, j);
			int64_t dt = 0;

			/* waits that block their caller would wait for this thread */
			if (C.waits_block && (kind == EQ_WAIT1 || kind == EQ_WAIT16))
				continue;
			if (!C.dev.has_eventfd && (kind == EQ_ARM1 || kind == EQ_ARM16))
				continue;
			if (!enq_batch(q, kind, &dt)) {
				not_measured("enqueue", C.why);
				enq_free(q);
				free(base);
				return false;
			}
			if (r >= ENQ_WARMUP)
				q->t[kind][r - ENQ_WARMUP] = dt;
		}
	}
	snprintf(hf, sizeof(hf), "%s of an empty function", host_fn_name());
	for (unsigned k = 0; k < n; k++)
		base[k] = q->t[EQ_HOSTFN][k];
	metric("signal_enqueue", q->t[EQ_SIGNAL1], base, n, "hipSignalExternalSemaphoresAsync "
	       "call, one timeline semaphore (CPU time, batch of 8 on a held stream)", hf);
	for (unsigned k = 0; k < n; k++)
		base[k] = q->t[EQ_HOSTFN][k];
	metric("signal_enqueue16", q->t[EQ_SIGNAL16], base, n, "the same, 16 semaphores", hf);
	if (C.waits_block) {
		not_measured("wait_enqueue", "waits block the calling thread");
		not_measured("wait_enqueue16", "waits block the calling thread");
	} else {
		snprintf(wf, sizeof(wf), "hipStreamWaitValue64 call%s",
			 C.dev.has_eventfd ? " plus one DRM_IOCTL_SYNCOBJ_EVENTFD arming ioctl "
					     "per semaphore" :
					     " (no arming ioctl: this kernel has no syncobj eventfd)");
		enq_floor(q, EQ_ARM1, base, n);
		metric("wait_enqueue", q->t[EQ_WAIT1], base, n, "hipWaitExternalSemaphoresAsync "
		       "call, one timeline semaphore (CPU time, batch of 8 on a held stream)", wf);
		enq_floor(q, EQ_ARM16, base, n);
		metric("wait_enqueue16", q->t[EQ_WAIT16], base, n, "the same, 16 semaphores", wf);
	}
	enq_free(q);
	free(base);
	return true;
}

static void measure(void)
{
	unsigned n = C.rounds;
	int64_t *a = calloc(n, sizeof(*a)), *b = calloc(n, sizeof(*b));
	bool tl_ok = C.have_tl && C.have_bin;

	if (!a || !b || C.stop || !tl_ok) {
		const char *why = C.stop ? "an earlier check hit its deadline" :
				  !tl_ok ? "no semaphores were imported" : "out of memory";
		not_measured("latency", why);
		free(a);
		free(b);
		return;
	}
	/* Signal latency: the stream reaches the signal -> the syncobj is
	 * signaled (seen by a kernel wait), against a stream write-value seen
	 * by the host.  Both start when the host opens a gate the stream is
	 * parked at. */
	for (unsigned k = 0; k < n; k++) {
		round_start(C.timeout_ns * 4);
		uint64_t g = ++C.gate, v = ++C.tl_next;
		int64_t t0;

		put_gate(g);
		sem_signal(&C.etl, &v, 1);
		settle();
		t0 = hx_now_ns();
		open_gate(g);
		if (hx_sync_wait_one(&C.dev, C.tl, v, C.deadline))
			goto late;
		a[k] = hx_now_ns() - t0;
		if (!gate_round_ns(&b[k]))
			goto late;
	}
	metric("signal_latency", a, b, n,
	       "stream reaches hipSignalExternalSemaphoresAsync -> syncobj signaled",
	       "stream reaches hipStreamWriteValue64 -> value seen by the host");

	/* Wait latency: the syncobj is signaled -> the stream proceeds, against
	 * a host write releasing hipStreamWaitValue64. */
	if (!C.waits_block) {
		for (unsigned k = 0; k < n; k++) {
			round_start(C.timeout_ns * 4);
			uint64_t v = ++C.tl_next, m = ++C.marker;
			int64_t t0;

			sem_wait(&C.etl, &v, 1);
			put_marker(m);
			settle();
			t0 = hx_now_ns();
			hx_sync_signal(&C.dev, C.tl, v);
			if (!marker_reaches(m))
				goto late;
			a[k] = hx_now_ns() - t0;
			if (!gate_round_ns(&b[k]))
				goto late;
		}
		metric("wait_latency", a, b, n,
		       "syncobj signaled -> the stream proceeds past hipWaitExternalSemaphoresAsync",
		       "host write -> the stream proceeds past hipStreamWaitValue64");
	} else {
		not_measured("wait_latency", "waits block the calling thread");
	}

	/* Enqueue cost on the calling thread: a section of its own. */
	if (!measure_enqueue()) {
		C.stop = true;
		free(a);
		free(b);
		return;
	}

	/* When is a signal's fence attached?  What a Vulkan consumer of a
	 * binary semaphore waits for inside vkQueueSubmit.  Against the time
	 * the runtime takes to start a host function on an idle stream. */
	for (unsigned k = 0; k < n; k++) {
		round_start(C.timeout_ns * 4);
		uint64_t zero = 0, runs;
		uint32_t h = C.bin;
		int64_t t0;
		int ret;

		hx_sync_reset(&C.dev, C.bin);
		t0 = hx_now_ns();
		sem_signal(&C.ebin, &zero, 1);
		ret = drmSyncobjTimelineWait(C.dev.fd, &h, &zero, 1, C.deadline,
					     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE, NULL);
		if (ret)
			goto late;
		a[k] = hx_now_ns() - t0;
		runs = atomic_load(&C.hostfn_runs);
		t0 = hx_now_ns();
		host_fn();
		while (atomic_load(&C.hostfn_runs) == runs) {
			if (hx_now_ns() > C.deadline)
				goto late;
			spin_pause();
		}
		b[k] = hx_now_ns() - t0;
		if (!stream_idle())
			goto late;
	}
	hx_sync_reset(&C.dev, C.bin);
	metric("fence_attach", a, b, n,
	       "hipSignalExternalSemaphoresAsync call -> a fence is attached to the syncobj "
	       "(idle stream; with prior work, also that work's duration)",
	       "enqueue -> an empty host function starts");
	free(a);
	free(b);
	return;
late:
	not_measured("latency", "a sample did not complete within its deadline");
	C.stop = true;
	free(a);
	free(b);
}

/* ---- setup --------------------------------------------------------------- */

#define RESOLVE(field, name, required)                                                    \
	do {                                                                              \
		*(void **)&C.field = dlsym(rt, name);                                     \
		if (!C.field && (required))                                               \
			fatal("%s has no %s: not a usable HIP runtime", path, name);      \
	} while (0)

static void load_runtime(const char *path)
{
	void *rt = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
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
	if (dladdr((void *)C.StreamCreate, &di) && di.dli_fname)
		fact("runtime_loaded", "%s", di.dli_fname);
}

/* The four calls, bound as a program linked against libamdhip64 binds its
 * versioned references: the default scope, version hip_4.3. */
static void bind_semaphore_calls(const char *shim)
{
	const char *names[4] = { "hipImportExternalSemaphore", "hipSignalExternalSemaphoresAsync",
				 "hipWaitExternalSemaphoresAsync", "hipDestroyExternalSemaphore" };
	void **slots[4] = { (void **)&C.Import, (void **)&C.Signal, (void **)&C.Wait,
			    (void **)&C.Destroy };
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

static void report_wait_path(int dev)
{
	get_wait_path_fn gwp = (get_wait_path_fn)dlsym(RTLD_DEFAULT, "hipextsemGetWaitPath");
	char reason[512] = "";
	int attr = -1, v = -1, path;

	if (C.DeviceGetAttribute &&
	    C.DeviceGetAttribute(&v, HX_DEVATTR_CAN_USE_STREAM_WAIT_VALUE, dev) != hipSuccess)
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
	if (C.DeviceGetPCIBusId && C.DeviceGetPCIBusId(bus, (int)sizeof(bus), dev) == hipSuccess)
		opts.pci_bus_id = bus;
	opts.want_timeline = true;
	ret = hx_sync_open(&C.dev, &opts);
	if (ret == -EOPNOTSUPP) {
		opts.want_timeline = false;
		ret = hx_sync_open(&C.dev, &opts);
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
		fact("render_node", "%s (HIPEXTSEM_RENDER_NODE)", C.dev.path);
	else
		fact("render_node", "%s", C.dev.path);
	fact("render_driver", "%s", C.dev.driver);
	fact("render_timeline", "%s", C.dev.has_timeline ? "yes" : "no");
	fact("render_eventfd", "%s", C.dev.has_eventfd ? "yes" : "no");
}

int hx_selftest_child_main(int argc, char **argv)
{
	const char *runtime, *shim;
	bool probe_only;
	int count = 0, dev = 0, ver = 0;
	hipError_t e;
	void *mem = NULL;

	/* argv: [1] the marker, [2] fd, [3] runtime, [4] shim, [5] abi,
	 * [6] rounds, [7] timeout in ms, [8] "probe" or "full" */
	if (argc != 9)
		return 2;
	C.out = atoi(argv[2]);
	runtime = argv[3];
	shim = argv[4];
	C.abi = atoi(argv[5]) == 5 ? HX_ABI_5 : HX_ABI_6;
	C.rounds = (unsigned)strtoul(argv[6], NULL, 10);
	C.timeout_ns = strtoll(argv[7], NULL, 10) * 1000000LL;
	probe_only = !strcmp(argv[8], "probe");
	/* Nothing of this process may write to the parent's stdout. */
	dup2(STDERR_FILENO, STDOUT_FILENO);

	load_runtime(runtime);
	if (!dlsym(RTLD_DEFAULT, "hipextsemGetStats"))
		fatal("the shim is not loaded in the test process (LD_PRELOAD=%s did not take "
		      "effect)", shim);
	if (C.RuntimeGetVersion && C.RuntimeGetVersion(&ver) == hipSuccess)
		fact("runtime_version", "%d", ver);
	fact("abi", "%s", hx_abi_name(C.abi));
	e = C.GetDeviceCount(&count);
	if (e != hipSuccess || count <= 0)
		fatal("no HIP device: hipGetDeviceCount answered %s with %d device(s) (no GPU, "
		      "no amdgpu/KFD driver, or no permission on /dev/kfd)", ename(e), count);
	fact("device_count", "%d", count);
	if ((e = C.GetDevice(&dev)) != hipSuccess)
		fatal("hipGetDevice answered %s", ename(e));
	{
		char bus[32] = "";
		if (C.DeviceGetPCIBusId &&
		    C.DeviceGetPCIBusId(bus, (int)sizeof(bus), dev) == hipSuccess)
			fact("device", "%d (PCI %s)", dev, bus);
		else
			fact("device", "%d", dev);
	}
	report_wait_path(dev);
	if (probe_only) {
		record("done", 0);
		_exit(0);
	}

	bind_semaphore_calls(shim);
	fact("host_function", "%s", host_fn_name());
	open_render_node(dev);
	if ((e = C.StreamCreate(&C.s)) != hipSuccess)
		fatal("hipStreamCreate answered %s", ename(e));
	if ((e = C.HostMalloc(&mem, 4096, 0)) != hipSuccess || !mem)
		fatal("hipHostMalloc answered %s", ename(e));
	C.mem = mem;
	memset(mem, 0, 4096);

	run_check("runtime-primitives", check_runtime_primitives);
	run_check("import", check_import);
	run_check("host-signal-stream-wait-binary", check_host_signal_binary);
	run_check("host-signal-stream-wait-timeline", check_host_signal_timeline);
	run_check("wait-before-signal", check_wait_before_signal);
	run_check("binary-wait-consumes", check_binary_consumes);
	run_check("signal-after-prior-work", check_signal_after_prior_work);
	run_check("timeline-values-increase", check_timeline_values);
	run_check("mixed-array", check_mixed_array);
	measure();
	run_check("destroy", check_destroy);
	record("done", 0);
	/* A stuck stream or thread must not hold the exit: the runtime's own
	 * teardown would wait for it. */
	_exit(0);
}
