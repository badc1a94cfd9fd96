/* SPDX-License-Identifier: MIT */
/*
 * Stream handles as each HIP release treats them (docs/streams.md), run on
 * cpuhip playing each release (CPUHIP_ROCM) with the shim preloaded, in
 * the test VM (real syncobjs).  Each case fails on a shim that hands the
 * runtime a handle the release does not accept: cpuhip stops with SIGABRT
 * where the real runtime would crash, and blocks where it would hang.
 *
 *   pts-bin, pts-tl     waits and signals on hipStreamPerThread: wait
 *                       before signal, no early pass, the signal after
 *                       the stream's earlier work
 *   legacy              waits and signals on hipStreamLegacy (the legacy
 *                       null stream): held until signaled, the signal
 *                       after the stream's earlier work, no crash on the
 *                       releases whose hipLaunchHostFunc reads the handle
 *                       as a stream object (5.3 to 6.2)
 *   dead-stream         a destroyed and a bogus stream given to signal and
 *                       wait: hipErrorInvalidValue, no crash; the null
 *                       stream keeps working
 *   capture-query       (abi6) a wait's stream check while a Global capture
 *                       is live elsewhere: the stream is valid and the
 *                       capture stays active (6.0's hipStreamQuery says 900)
 *   exit-pts-return, exit-pts-exit, exit-stream-return
 *                       a child that returns from main (or calls exit())
 *                       with a never-satisfied wait pending exits within
 *                       10 s with status 0
 *   exit-event-return, exit-null-return
 *                       the same when the main thread's per-thread stream
 *                       is ordered behind a wait on another stream (an
 *                       event of a created stream's wait; per-thread work
 *                       after a wait on the null stream)
 *   exit-worker-null-return, exit-worker-event-return
 *                       the same when a worker thread made the wait (on
 *                       the null stream; on a created stream with an
 *                       event) and the main thread only imported and
 *                       queued per-thread-stream work behind it: the
 *                       release must not depend on which thread waited
 *   exit-late-wait-worker
 *                       the main thread makes no HIP call: a worker
 *                       leaves a wait pending on the null stream and
 *                       registers an atexit handler whose own wait on the
 *                       null stream must pass once it signals it (the
 *                       release runs at the start of exit())
 *   exit-lock-held      the same when another thread is inside the shim's
 *                       registry lock when main returns, and stays there
 *                       300 ms (the test build libextsem-noise.so calls
 *                       hxTestRegistryLocked inside the lock)
 *   thread-exit-keeps   a thread that ends keeps its waits: its end waits
 *                       for them, as the runtime's own teardown does
 *   key-exhausted       (5.2's per-thread helper stream) with no pthread
 *                       key left, no other library's key is written
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "hipextsem/hip_graph.h"
#include "hxtest.h"

static int drm;

/* A write of `v` to *flag queued on the stream (hxtest.h: by a copy on
 * 5.2's hipStreamPerThread). */
static void mark(hipStream_t st, uint64_t *flag, unsigned v)
{
	stream_mark(st, flag, v);
}

static void pts(bool timeline)
{
	uint32_t hw, hs;
	hipExternalSemaphore_t w = sem_import_new(drm, &hw, timeline);
	hipExternalSemaphore_t s = sem_import_new(drm, &hs, timeline);
	uint64_t *flag = pinned(8);
	uint64_t v = timeline ? 5 : 0;
	int64_t t0;

	/* Wait before signal, behind earlier work; what follows it must not
	 * run before the semaphore is signaled. */
	stream_delay(hipStreamPerThread, 50000);
	HIPCHECK(wait1(w, v, hipStreamPerThread));
	mark(hipStreamPerThread, flag, 1);
	sleep_ms(300);
	CHECK(load64(flag) == 0, "hipStreamPerThread passed an unsignaled wait");
	so_signal(drm, hw, v);
	HIPCHECK(hipStreamSynchronize(hipStreamPerThread));
	CHECK(load64(flag) == 1, "hipStreamPerThread did not go on after the signal");

	/* A signal behind 300 ms of earlier work fires after it. */
	t0 = now_ns();
	stream_delay(hipStreamPerThread, 300000);
	HIPCHECK(signal1(s, timeline ? 7 : 0, hipStreamPerThread));
	CHECK(so_wait(drm, hs, timeline ? 7 : 0, 5000) == 0, "the signal never came");
	CHECK(now_ns() - t0 >= 290000000, "the signal came before the stream's earlier work");

	HIPCHECK(hipDestroyExternalSemaphore(w));
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipHostFree(flag));
}

static void pts_bin(void)
{
	pts(false);
}

static void pts_tl(void)
{
	pts(true);
}

static void dead_stream(void)
{
	uint32_t h;
	hipExternalSemaphore_t s = sem_import_new(drm, &h, true);
	hipStream_t dead, bogus = (hipStream_t)(uintptr_t)0xdeadbeef0;

	uint32_t h2;
	hipExternalSemaphore_t s2 = sem_import_new(drm, &h2, true);

	/* A stream a signal found valid, then destroyed: checked again (the
	 * shim remembers the streams it checked until a destroy). */
	HIPCHECK(hipStreamCreate(&dead));
	HIPCHECK(signal1(s2, 1, dead));
	HIPCHECK(hipStreamSynchronize(dead));
	/* The poll signal mode signals after the stream got there. */
	CHECK(so_wait(drm, h2, 1, 2000) == 0, "the signal on a live stream did not arrive");
	HIPCHECK(hipStreamDestroy(dead));
	EXPECT_ERR(signal1(s2, 2, dead), hipErrorInvalidValue);
	sleep_ms(50);
	CHECK(so_query(drm, h2) == 1, "a signal on a destroyed stream signaled (point %" PRIu64 ")",
	      so_query(drm, h2));
	HIPCHECK(hipDestroyExternalSemaphore(s2));
	HIPCHECK(hipStreamCreate(&dead));
	HIPCHECK(hipStreamDestroy(dead));
	EXPECT_ERR(signal1(s, 1, dead), hipErrorInvalidValue);
	EXPECT_ERR(wait1(s, 1, dead), hipErrorInvalidValue);
	EXPECT_ERR(signal1(s, 1, bogus), hipErrorInvalidValue);
	EXPECT_ERR(wait1(s, 1, bogus), hipErrorInvalidValue);
	/* nothing was signaled by the refused calls */
	CHECK(so_query(drm, h) == 0, "a refused signal signaled");
	/* the null stream keeps working */
	HIPCHECK(signal1(s, 2, NULL));
	HIPCHECK(wait1(s, 2, NULL));
	HIPCHECK(hipStreamSynchronize(NULL));
	CHECK(so_query(drm, h) == 2, "the null stream's signal did not arrive");
	HIPCHECK(hipDestroyExternalSemaphore(s));
}

#if HX_TEST_ABI == 6
struct capture_arg {
	hipStream_t s;
	pthread_barrier_t begun, done;
};

static void *capture_thread(void *p)
{
	struct capture_arg *a = p;
	hipGraph_t g = NULL;

	HIPCHECK(hipStreamBeginCapture(a->s, HX_CAPTURE_MODE_GLOBAL));
	pthread_barrier_wait(&a->begun);
	pthread_barrier_wait(&a->done);
	HIPCHECK(hipStreamEndCapture(a->s, &g));
	HIPCHECK(hipGraphDestroy(g));
	return NULL;
}

/* The host-blocking wait path checks its stream before it blocks; with a
 * Global capture live on another thread, 6.0's hipStreamQuery would call a
 * good stream bad.  The check must say valid and leave the capture be. */
static void capture_query(void)
{
	uint32_t h;
	hipExternalSemaphore_t s = sem_import_new(drm, &h, true);
	struct capture_arg a;
	hipStream_t st;
	pthread_t t;
	int status = -1;

	HIPCHECK(hipStreamCreate(&a.s));
	HIPCHECK(hipStreamCreate(&st));
	pthread_barrier_init(&a.begun, NULL, 2);
	pthread_barrier_init(&a.done, NULL, 2);
	pthread_create(&t, NULL, capture_thread, &a);
	pthread_barrier_wait(&a.begun);
	so_signal(drm, h, 3);
	HIPCHECK(wait1(s, 3, st));
	HIPCHECK(hipStreamIsCapturing(a.s, &status));
	CHECK(status == HX_CAPTURE_STATUS_ACTIVE, "the other thread's capture is %d", status);
	pthread_barrier_wait(&a.done);
	pthread_join(t, NULL);
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipStreamDestroy(a.s));
	HIPCHECK(hipDestroyExternalSemaphore(s));
}
#endif

/* ---- exit with waits pending ------------------------------------------ */

struct worker_wait {
	hipExternalSemaphore_t s;
	hipStream_t st;
	hipEvent_t ev;
};

/* The interop thread: the only one that makes a semaphore call. */
static void *worker_wait_thread(void *p)
{
	struct worker_wait *w = p;

	if (w->ev)
		HIPCHECK(hipStreamCreate(&w->st));
	HIPCHECK(wait1(w->s, 1, w->st));
	if (w->ev)
		HIPCHECK(hipEventRecord(w->ev, w->st));
	return NULL;
}

/* A wait made only by a graph: a wait node, instantiated and launched on
 * `st`; the process makes no direct signal or wait call. */
static void graph_wait_launch(hipExternalSemaphore_t s, uint64_t v, hipStream_t st)
{
	hx_graph_add_ext_sem_node_fn *add_wait =
		(hx_graph_add_ext_sem_node_fn *)dlsym(RTLD_DEFAULT,
						      "hipGraphAddExternalSemaphoresWaitNode");
	static test_wait_params p;
	static hipExternalSemaphore_t sems[1];
	struct hx_ext_sem_node_params np = { sems, &p, 1 };
	hipGraphNode_t n;
	hipGraphExec_t x;
	hipGraph_t g;

	CHECK(add_wait, "hipGraphAddExternalSemaphoresWaitNode not found");
	memset(&p, 0, sizeof(p));
	p.params.fence.value = v;
	sems[0] = s;
	HIPCHECK(hipGraphCreate(&g, 0));
	HIPCHECK(add_wait(&n, g, NULL, 0, &np));
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	HIPCHECK(hipGraphLaunch(x, st));
}

static void *worker_graph_thread(void *p)
{
	struct worker_wait *w = p;

	HIPCHECK(hipStreamCreate(&w->st));
	graph_wait_launch(w->s, 1, w->st);
	HIPCHECK(hipEventRecord(w->ev, w->st));
	return NULL;
}

/* Called by the test build of the shim (libextsem-noise.so, noise.h)
 * inside the registry lock, in hipDestroyExternalSemaphore: once armed,
 * it says so and keeps the lock for 300 ms, as a thread preempted there
 * on a loaded machine would. */
static atomic_int lock_hold; /* 1: armed, 2: inside the lock */

void hxTestRegistryLocked(void);
void hxTestRegistryLocked(void)
{
	int armed = 1;

	if (!atomic_compare_exchange_strong(&lock_hold, &armed, 2))
		return;
	sleep_ms(300);
}

static void *lock_holder(void *p)
{
	HIPCHECK(hipDestroyExternalSemaphore(*(hipExternalSemaphore_t *)p));
	return NULL;
}

/* ---- waits made by exit-time code wait for their semaphores ---------------
 * An atexit handler or a destructor of the program's that waits for the
 * other side's last signal and then queues work behind it: the wait must
 * hold that work until the semaphore is signaled, although the shim's
 * release of the waits pending at exit ran first. */
static struct {
	int drm;
	uint32_t h;
	hipExternalSemaphore_t s;
	hipStream_t st;
	uint64_t *flag;
	bool in_dtor;
} xw;

static void exit_time_wait(void)
{
	HIPCHECK(wait1(xw.s, 0, xw.st));
	mark(xw.st, xw.flag, 1);
	sleep_ms(300);
	if (load64(xw.flag)) {
		fprintf(stderr, "FAIL: a wait enqueued during exit passed before its semaphore was "
			"signaled (the work behind it ran)\n");
		_exit(1);
	}
	so_signal(xw.drm, xw.h, 0);
	HIPCHECK(hipStreamSynchronize(xw.st));
	if (load64(xw.flag) != 1) {
		fprintf(stderr, "FAIL: the work behind the exit-time wait did not run once its "
			"semaphore was signaled\n");
		_exit(1);
	}
	_exit(0);
}

__attribute__((destructor)) static void exit_time_dtor(void)
{
	if (xw.in_dtor)
		exit_time_wait();
}

/* The same wait from a C++ thread_local's destructor (registered as
 * libstdc++ does, after the runtime's own); the check runs in an atexit
 * handler, after every thread_local destructor. */
extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso);
extern void *__dso_handle;

static void exit_tls_dtor(void *unused)
{
	(void)unused;
	HIPCHECK(wait1(xw.s, 0, xw.st));
	mark(xw.st, xw.flag, 1);
}

static void exit_tls_check(void)
{
	sleep_ms(300);
	if (load64(xw.flag)) {
		fprintf(stderr, "FAIL: a wait enqueued by a thread_local destructor passed before "
			"its semaphore was signaled\n");
		_exit(1);
	}
	so_signal(xw.drm, xw.h, 0);
	HIPCHECK(hipStreamSynchronize(xw.st));
	_exit(load64(xw.flag) == 1 ? 0 : 1);
}

/* The main thread makes no HIP call at all: a worker imports, leaves a
 * wait pending on the null stream that is never satisfied, and registers
 * the exit-time wait (on the null stream too, behind the pending one)
 * after the process's first wait, so the handler runs before the shim's
 * own atexit handler.  The release of the waits pending at exit must
 * still run at the start of exit(), or the exit-time wait cannot pass
 * once its semaphore is signaled and hipStreamSynchronize in the handler
 * never returns. */
static void *late_wait_worker(void *unused)
{
	uint32_t h;
	hipExternalSemaphore_t s = sem_import_new(drm, &h, true);

	(void)unused;
	xw.drm = drm;
	xw.s = sem_import_new(drm, &xw.h, false);
	xw.flag = pinned(8);
	xw.st = NULL;
	HIPCHECK(wait1(s, 1, NULL));
	atexit(exit_time_wait);
	return NULL;
}

static int child_late_wait_worker(void)
{
	pthread_t t;

	CHECK(pthread_create(&t, NULL, late_wait_worker, NULL) == 0, "pthread_create");
	CHECK(pthread_join(t, NULL) == 0, "pthread_join");
	return 0;
}

/* The child: a wait that is never satisfied, then the end of the process. */
static int child(const char *how)
{
	uint32_t h;
	hipExternalSemaphore_t s;
	hipStream_t st = hipStreamPerThread;

	if (strstr(how, "late-wait-worker"))
		return child_late_wait_worker();
	s = sem_import_new(drm, &h, true);
	if (strstr(how, "lock-held")) {
		/* A wait pending on the main thread's per-thread stream,
		 * whose teardown in exit() waits for it; main returns while
		 * another thread holds the registry lock. */
		static hipExternalSemaphore_t s2;
		int64_t until = now_ns() + 5 * 1000000000ll;
		uint32_t h2;
		pthread_t t;

		s2 = sem_import_new(drm, &h2, true);
		HIPCHECK(wait1(s, 1, st));
		mark(st, pinned(8), 1);
		atomic_store(&lock_hold, 1);
		CHECK(pthread_create(&t, NULL, lock_holder, &s2) == 0, "pthread_create");
		/* Still running when main returns, by design: detached, so
		 * that ThreadSanitizer does not report it as leaked. */
		CHECK(pthread_detach(t) == 0, "pthread_detach");
		while (atomic_load(&lock_hold) != 2) {
			CHECK(now_ns() < until, "the shim's test point inside the registry lock "
			      "was not reached (the case needs libextsem-noise.so)");
			sleep_ms(1);
		}
		return 0;
	}

	if (strstr(how, "late-wait")) {
		xw.drm = drm;
		xw.s = sem_import_new(drm, &xw.h, false);
		xw.flag = pinned(8);
		HIPCHECK(hipStreamCreate(&xw.st));
		if (strstr(how, "dtor")) {
			/* A destructor, in a process that made no wait before
			 * exit (docs/streams.md: after the shim's atexit
			 * handler, a wait passes at once). */
			xw.in_dtor = true;
			return 0;
		}
		/* A pending wait on the per-thread stream first, so that the
		 * shim's release runs at the start of exit(); the handler,
		 * registered after the shim's, runs before it. */
		HIPCHECK(wait1(s, 1, hipStreamPerThread));
		if (strstr(how, "tls")) {
			CHECK(__cxa_thread_atexit_impl(exit_tls_dtor, NULL, &__dso_handle) == 0,
			      "__cxa_thread_atexit_impl");
			atexit(exit_tls_check);
			return 0;
		}
		atexit(exit_time_wait);
		return 0;
	}

	if (strstr(how, "fork-worker"))
		return 0; /* not reached: exit_fork_worker forks itself */

	if (strstr(how, "graph")) {
		/* The process's only wait is a graph's wait node: on the
		 * main thread's per-thread stream, or on a worker's stream
		 * that the main thread's per-thread stream then waits for. */
		if (strstr(how, "worker")) {
			struct worker_wait w = { .s = s, .st = NULL, .ev = NULL };
			pthread_t t;

			HIPCHECK(hipEventCreateWithFlags(&w.ev, hipEventDisableTiming));
			CHECK(pthread_create(&t, NULL, worker_graph_thread, &w) == 0,
			      "pthread_create");
			pthread_join(t, NULL);
			HIPCHECK(hipStreamWaitEvent(hipStreamPerThread, w.ev, 0));
		} else {
			graph_wait_launch(s, 1, hipStreamPerThread);
		}
		mark(hipStreamPerThread, pinned(8), 1);
		if (strstr(how, "exit"))
			exit(0);
		return 0;
	}

	if (strstr(how, "worker")) {
		/* Main imported; a worker waits; main orders its per-thread
		 * stream behind that wait (the legacy stream, or an event)
		 * and returns, never having waited or signaled itself. */
		struct worker_wait w = { .s = s, .st = NULL, .ev = NULL };
		pthread_t t;

		if (strstr(how, "event"))
			HIPCHECK(hipEventCreateWithFlags(&w.ev, hipEventDisableTiming));
		CHECK(pthread_create(&t, NULL, worker_wait_thread, &w) == 0, "pthread_create");
		pthread_join(t, NULL);
		if (w.ev)
			HIPCHECK(hipStreamWaitEvent(hipStreamPerThread, w.ev, 0));
		mark(hipStreamPerThread, pinned(8), 1);
		return 0;
	}

	if (strstr(how, "stream") || strstr(how, "event"))
		HIPCHECK(hipStreamCreate(&st));
	if (strstr(how, "null"))
		st = NULL;
	HIPCHECK(wait1(s, 1, st));
	mark(st, pinned(8), 1);
	if (strstr(how, "event")) {
		/* The main thread's per-thread stream ordered behind a wait on
		 * another stream. */
		hipEvent_t ev;

		HIPCHECK(hipEventCreateWithFlags(&ev, hipEventDisableTiming));
		HIPCHECK(hipEventRecord(ev, st));
		HIPCHECK(hipStreamWaitEvent(hipStreamPerThread, ev, 0));
		mark(hipStreamPerThread, pinned(8), 1);
	}
	if (strstr(how, "null"))
		/* A blocking stream's work waits for the null stream's. */
		mark(hipStreamPerThread, pinned(8), 1);
	if (strstr(how, "exit"))
		exit(0);
	return 0;
}

/* Waits up to 10 s for the child `pid` (killed after that) and checks that
 * it exited 0; `what` names it in the failure. */
static void reap_child(pid_t pid, const char *what)
{
	int64_t until = now_ns() + 10 * 1000000000ll;
	int status;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now_ns() > until) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			FAIL("%s did not exit within 10 s", what);
		}
		sleep_ms(20);
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s ended with status %#x", what,
	      status);
}

static void exit_pending(const char *how)
{
	char arg[64];
	int64_t t0 = now_ns();
	pid_t pid;

	snprintf(arg, sizeof(arg), "child-%s", how);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		execl("/proc/self/exe", "streams-test", arg, (char *)NULL);
		_exit(127);
	}
	snprintf(arg, sizeof(arg), "the child (%s)", how);
	reap_child(pid, arg);
	printf("# the child (%s) ran and exited in %.2f s\n", how, (double)(now_ns() - t0) / 1e9);
}

static void exit_pts_return(void)
{
	exit_pending("pts-return");
}

static void exit_pts_exit(void)
{
	exit_pending("pts-exit");
}

static void exit_stream_return(void)
{
	exit_pending("stream-return");
}

static void exit_event_return(void)
{
	exit_pending("event-return");
}

static void exit_null_return(void)
{
	exit_pending("null-return");
}

static void exit_worker_null_return(void)
{
	exit_pending("worker-null-return");
}

static void exit_worker_event_return(void)
{
	exit_pending("worker-event-return");
}

static void exit_graph_pts_return(void)
{
	exit_pending("graph-pts-return");
}

static void exit_graph_pts_exit(void)
{
	exit_pending("graph-pts-exit");
}

static void exit_graph_worker_return(void)
{
	exit_pending("graph-worker-return");
}

static void exit_late_wait_atexit(void)
{
	exit_pending("late-wait-atexit");
}

static void exit_late_wait_dtor(void)
{
	exit_pending("late-wait-dtor");
}

static void exit_late_wait_tls(void)
{
	exit_pending("late-wait-tls");
}

static void exit_late_wait_worker(void)
{
	exit_pending("late-wait-worker");
}

/* A child forked by a worker thread that had made semaphore calls: the
 * forking thread is the child's main thread, and the child's exit must
 * release its pending wait on hipStreamPerThread as any process's does.
 *
 * LeakSanitizer's hook (ASan builds): in that child, the parent's main
 * thread is gone, and glibc's record of the thread_local destructors
 * registered on it (the shim registers its exit hook there at load) is
 * reachable only from that thread's memory: reported as a leak at the
 * child's exit, though nobody could free it. */
static volatile int forked_by_worker;

int __lsan_is_turned_off(void);
__attribute__((visibility("default"))) int __lsan_is_turned_off(void)
{
	return forked_by_worker;
}

static void *fork_worker(void *p)
{
	uint32_t h, h2;
	hipExternalSemaphore_t s = sem_import_new(drm, &h, false);
	hipStream_t st;
	pid_t pid;

	(void)p;
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(signal1(s, 0, st));
	HIPCHECK(hipStreamSynchronize(st));
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		hipExternalSemaphore_t c;

		forked_by_worker = 1;
		c = sem_import_new(drm, &h2, false);

		if (wait1(c, 0, hipStreamPerThread) != hipSuccess)
			_exit(3);
		exit(0);
	}
	reap_child(pid, "the child forked by a worker thread");
	HIPCHECK(hipStreamDestroy(st));
	return NULL;
}

static void exit_fork_worker(void)
{
	pthread_t t;

	CHECK(pthread_create(&t, NULL, fork_worker, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
}

/* A child forked by a thread that had waited on its hipStreamPerThread.
 * On 5.2 that wait went through a helper stream the shim made for the
 * thread (the runtime's stream wait does not resolve hipStreamPerThread);
 * the helper is the parent's, nothing of which is the child's
 * (docs/semantics.md): the child's own wait on its per-thread stream must
 * pass once signaled, and the child's synchronize return. */
static void fork_pts_used(void)
{
	uint32_t h, h2;
	hipExternalSemaphore_t s = sem_import_new(drm, &h, true);
	pid_t pid;

	so_signal(drm, h, 1);
	HIPCHECK(wait1(s, 1, hipStreamPerThread));
	HIPCHECK(hipStreamSynchronize(hipStreamPerThread));
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		hipExternalSemaphore_t c;

		forked_by_worker = 1; /* LeakSanitizer: as exit_fork_worker's child */
		c = sem_import_new(drm, &h2, true);
		so_signal(drm, h2, 1);
		if (wait1(c, 1, hipStreamPerThread) != hipSuccess)
			_exit(3);
		if (hipStreamSynchronize(hipStreamPerThread) != hipSuccess)
			_exit(4);
		_exit(0);
	}
	reap_child(pid, "the child (its wait on hipStreamPerThread, signalled before)");
	HIPCHECK(hipDestroyExternalSemaphore(s));
}

static void exit_lock_held(void)
{
	exit_pending("lock-held");
}

/* ---- a thread that ends keeps its waits --------------------------------- */

struct thread_arg {
	hipExternalSemaphore_t s;
	uint64_t *flag;
};

static void *waiting_thread(void *p)
{
	struct thread_arg *a = p;

	HIPCHECK(wait1(a->s, 4, hipStreamPerThread));
	mark(hipStreamPerThread, a->flag, 1);
	return NULL;
}

static void thread_exit_keeps(void)
{
	uint32_t h;
	struct thread_arg a;
	pthread_t t;

	a.s = sem_import_new(drm, &h, true);
	a.flag = pinned(8);
	pthread_create(&t, NULL, waiting_thread, &a);
	sleep_ms(300);
	CHECK(pthread_tryjoin_np(t, NULL) == EBUSY, "the thread ended with its wait pending");
	CHECK(load64(a.flag) == 0, "the ended thread's wait was released early");
	so_signal(drm, h, 4);
	CHECK(pthread_join(t, NULL) == 0, "join");
	CHECK(load64(a.flag) == 1, "the thread's stream did not go on");
	HIPCHECK(hipDestroyExternalSemaphore(a.s));
	HIPCHECK(hipHostFree(a.flag));
}

/* ---- no pthread key left (5.2's per-thread helper) ------------------------ */

static void *key_thread(void *p)
{
	struct thread_arg *a = p;
	void *before = pthread_getspecific(0);

	HIPCHECK(wait1(a->s, 2, hipStreamPerThread));
	CHECK(pthread_getspecific(0) == before,
	      "the thread's value of pthread key 0 (%p) was replaced by %p", before,
	      pthread_getspecific(0));
	mark(hipStreamPerThread, a->flag, 1);
	return NULL;
}

/* Every pthread key taken: the shim cannot make the key that tears its
 * per-thread helper stream down, and must then use none (not key 0, which
 * belongs to some other library). */
static void key_exhausted(void)
{
	static pthread_key_t keys[PTHREAD_KEYS_MAX + 1];
	unsigned nkeys = 0;
	struct thread_arg a;
	pthread_t t;
	uint32_t h;

	while (nkeys <= PTHREAD_KEYS_MAX && pthread_key_create(&keys[nkeys], NULL) == 0)
		nkeys++;
	CHECK(nkeys <= PTHREAD_KEYS_MAX, "could not use up the pthread keys");
	pthread_setspecific(0, &nkeys);
	a.s = sem_import_new(drm, &h, true);
	a.flag = pinned(8);
	pthread_create(&t, NULL, key_thread, &a);
	sleep_ms(200);
	so_signal(drm, h, 2);
	CHECK(pthread_join(t, NULL) == 0, "join");
	CHECK(load64(a.flag) == 1, "the thread's stream did not go on");
	CHECK(pthread_getspecific(0) == &nkeys, "the main thread's value of key 0 changed");
	for (unsigned i = 0; i < nkeys; i++)
		pthread_key_delete(keys[i]);
	HIPCHECK(hipDestroyExternalSemaphore(a.s));
	HIPCHECK(hipHostFree(a.flag));
}

static void legacy(void)
{
	uint32_t hw, hs;
	hipExternalSemaphore_t w = sem_import_new(drm, &hw, false);
	hipExternalSemaphore_t s = sem_import_new(drm, &hs, false);
	uint64_t *flag = pinned(8);

	HIPCHECK(wait1(w, 0, hipStreamLegacy));
	mark(hipStreamLegacy, flag, 1);
	HIPCHECK(signal1(s, 0, hipStreamLegacy));
	sleep_ms(150);
	CHECK(load64(flag) == 0, "hipStreamLegacy ran past an unsignaled wait");
	CHECK(so_wait(drm, hs, 0, 0) != 0, "the signal on hipStreamLegacy came before its wait");
	so_signal(drm, hw, 0);
	HIPCHECK(hipStreamSynchronize(hipStreamLegacy));
	CHECK(load64(flag) == 1, "the work after the wait did not run");
	CHECK(so_wait(drm, hs, 0, 1000) == 0, "the signal on hipStreamLegacy did not arrive");
	HIPCHECK(hipDestroyExternalSemaphore(w));
	HIPCHECK(hipDestroyExternalSemaphore(s));
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "legacy", legacy },
	{ "key-exhausted", key_exhausted },
	{ "pts-bin", pts_bin },
	{ "pts-tl", pts_tl },
	{ "dead-stream", dead_stream },
#if HX_TEST_ABI == 6
	{ "capture-query", capture_query },
#endif
	{ "exit-pts-return", exit_pts_return },
	{ "exit-pts-exit", exit_pts_exit },
	{ "exit-stream-return", exit_stream_return },
	{ "exit-event-return", exit_event_return },
	{ "exit-null-return", exit_null_return },
	{ "exit-worker-null-return", exit_worker_null_return },
	{ "exit-worker-event-return", exit_worker_event_return },
	{ "exit-graph-pts-return", exit_graph_pts_return },
	{ "exit-graph-pts-exit", exit_graph_pts_exit },
	{ "exit-graph-worker-return", exit_graph_worker_return },
	{ "exit-late-wait-atexit", exit_late_wait_atexit },
	{ "exit-late-wait-dtor", exit_late_wait_dtor },
	{ "exit-late-wait-tls", exit_late_wait_tls },
	{ "exit-late-wait-worker", exit_late_wait_worker },
	{ "exit-fork-worker", exit_fork_worker },
	{ "fork-pts-used", fork_pts_used },
	{ "exit-lock-held", exit_lock_held },
	{ "thread-exit-keeps", thread_exit_keeps },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			printf("%s\n", cases[i].name);
		return 0;
	}
	CHECK(expect_shim(), "these cases need the shim");
	drm = drm_open();
	if (strncmp(argv[1], "child-", 6) == 0)
		return child(argv[1] + 6);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(cases[i].name, argv[1]) == 0) {
			cases[i].fn();
			printf("ok %s\n", argv[1]);
			return 0;
		}
	}
	FAIL("unknown case %s", argv[1]);
}
