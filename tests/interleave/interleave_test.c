/* SPDX-License-Identifier: MIT */
/*
 * One case of the interleaving matrix (docs/testing.md): one
 * shim operation, one interference run by cpuhip at one boundary point
 * (before or after the Nth call of a runtime entry point the operation
 * makes), or one failed DRM call of the sync layer, and one oracle.
 *
 *   interleave-test OP KIND POINT INTERFERENCE
 *   interleave-test --dry OP KIND        the boundary calls and DRM calls
 *                                        OP makes, one "point ENTRY N" /
 *                                        "fault CALL N" line each (N: count)
 *
 * OP: signal, wait, sem-destroy (all releases); graph-add, graph-set,
 * instantiate, launch, exec-update, exec-destroy (6.x).  KIND: the stream
 * of the operation: plain (created), spt (hipStreamPerThread), capture (a
 * created stream in a Global capture begun before the operation; the
 * operation is replayed by launching the graph).  POINT: ENTRY:N:before|after,
 * or fault:CALL:N (the Nth DRM call CALL the shim makes during the
 * operation fails with EIO; INTERFERENCE is then "none").
 *
 * The oracle (every case): no crash; a wait never passes before its
 * signal; each signal is delivered exactly once (directly or by the
 * captured graph's every launch), and the shim made exactly one signal
 * call on its handle for each delivery the case took (counted in the
 * libdrm definitions below); a refused call answers a code of the set
 * its case allows (refusal_rules) and the shim logs it; the semaphore
 * still works afterwards; no file descriptor, and nothing in the shim's
 * counters (hipextsemGetStats), is left over across the repeats; a
 * forked child can use the shim; nothing
 * blocks longer than its bound, except the interferences documented to
 * block until a signal (stream destroy with a wait pending), which must
 * complete once the case signals.  An interference that cannot affect
 * the operation is the generator's error: the case fails.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "hxtest.h"
#include "cpuhip_test.h"
#include "hipextsem/hip_graph.h"

static int drm = -1;

/* ---- the sync layer's DRM calls, counted and failed ------------------
 * The harness's libdrm definitions (hxtest.h, hxfault.c) see the shim's
 * calls (shim/sync.c); the test's own calls use its own DRM file and are
 * neither counted nor failed.  The calls a case may fail, by name: */
static const enum df_call dcalls[] = { DF_CREATE, DF_DESTROY, DF_FD2H, DF_H2FD,
					DF_SIGNAL, DF_TLSIGNAL, DF_RESET, DF_QUERY,
					DF_WAIT, DF_TLWAIT, DF_EVENTFD };
#define D_N (int)(sizeof(dcalls) / sizeof(dcalls[0]))
static int fault_kind = -1; /* the index in dcalls of the call that fails */

static bool shim_fd(int fd)
{
	return drm >= 0 && fd != drm;
}

/* ---- the shim's signals, counted per sync object ---------------------
 * A binary syncobj's state is idempotent: a signal delivered twice looks
 * like one.  So the oracle counts the signal calls the shim makes on its
 * own handle for each of the case's syncobjs (the one its
 * drmSyncobjFDToHandle gave it at the import) and holds them against the
 * deliveries the case took (a signaled syncobj seen and reset).  A call
 * is counted before it is made, so that one whose effect the case has
 * seen is always in the count; one that failed is taken back. */
struct tracked {
	_Atomic uint32_t shim_h; /* the shim's handle, 0 when it has none */
	atomic_int calls;        /* signal calls on it that reached the kernel */
	int seen;                /* deliveries the case took */
};
static struct tracked tr_h, tr_h2; /* c.h, c.h2 */
static _Atomic uint32_t last_import;

static void count_signals(const uint32_t *handles, uint32_t count, int by)
{
	struct tracked *const all[] = { &tr_h, &tr_h2 };

	for (uint32_t i = 0; i < count; i++)
		for (unsigned j = 0; j < sizeof(all) / sizeof(all[0]); j++)
			if (handles[i] && atomic_load(&all[j]->shim_h) == handles[i])
				atomic_fetch_add(&all[j]->calls, by);
}

static bool is_signal(enum df_call c)
{
	return c == DF_SIGNAL || c == DF_TLSIGNAL;
}

/* A call the plan lets go. */
static enum df_verdict before_call(struct df_args *a)
{
	if (is_signal(a->call) && shim_fd(a->fd))
		count_signals(a->handles, a->count, 1);
	return DF_PASS;
}

static void after_call(const struct df_args *a, int ret)
{
	if (!shim_fd(a->fd))
		return;
	if (is_signal(a->call) && ret)
		count_signals(a->handles, a->count, -1);
	if (a->call == DF_FD2H && ret == 0)
		atomic_store(&last_import, a->handles[0]);
	if (a->call == DF_DESTROY && ret == 0) {
		/* The number may name another object of the shim's from now on. */
		uint32_t h = a->handles[0];
		(void)atomic_compare_exchange_strong(&tr_h.shim_h, &h, 0);
		h = a->handles[0];
		(void)atomic_compare_exchange_strong(&tr_h2.shim_h, &h, 0);
	}
}

/* ---- the case -------------------------------------------------------- */

enum kind { K_PLAIN, K_SPT, K_CAPTURE };

static bool passed; /* main's last step: no log shown at exit */
static int exit_report_fd = -1; /* exit: the watcher's pipe (exit_watch) */

static struct ctx {
	const char *op, *interf;
	enum kind kind;
	hipStream_t st;           /* the operation's stream */
	atomic_bool st_gone;      /* destroyed by the interference */
	uint32_t h;               /* the semaphore's syncobj */
	hipExternalSemaphore_t s;
	atomic_bool s_gone;       /* destroyed by the interference */
	atomic_bool so_touched;   /* the interference signaled or reset h */
	uint64_t *flag;           /* marks set by stream work */
#if HX_TEST_ABI == 6
	uint32_t h2;              /* the graph's signal semaphore */
	hipExternalSemaphore_t s2;
	hipGraph_t g;
	hipGraphNode_t wnode, snode;
	hipGraphExec_t exec;
	atomic_bool exec_gone;
	hipGraphExec_t other;     /* an unrelated exec (exec-launch) */
	hipStream_t other_st;
#endif
	long log_from;
	bool late; /* the interference waited for the call (the capture guard) */
} c;

/* A capture owner: begins a capture on a thread that stays, so that the
 * capture (ThreadLocal and Global ones may be ended by their thread only)
 * can be ended after the operation.  The test's own capture (KIND
 * capture) has a thread of its own; a capture interference's owner is the
 * interference thread itself, which tells cpuhip it is done once the
 * capture has begun (so that a begin blocked by the shim's capture guard
 * is seen asleep in the shim, not in a wait for another thread). */
struct owner {
	pthread_t t;
	pthread_mutex_t m;
	pthread_cond_t cv;
	int mode;
	int cmd;              /* 0 none, 1 end */
	bool began, finished;
	hipError_t begin_err, end_err;
	hipGraph_t graph;
	bool ended;
	_Atomic bool live;
} own = { .m = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void say(const char *what, hipError_t e);

static void owner_reset(int mode)
{
	own.mode = mode;
	own.cmd = 0;
	own.began = own.ended = own.finished = false;
	own.graph = NULL;
	own.live = true;
}

/* Begins the capture, waits for owner_end, ends it. */
static void owner_body(const char *interference)
{
	hipError_t e = hipStreamBeginCapture(c.st, own.mode);
	pthread_mutex_lock(&own.m);
	own.begin_err = e;
	own.began = true;
	pthread_cond_broadcast(&own.cv);
	pthread_mutex_unlock(&own.m);
	if (interference) {
		say(interference, e);
		cpuhipTestInterferenceDone();
	}
	pthread_mutex_lock(&own.m);
	while (own.cmd == 0)
		pthread_cond_wait(&own.cv, &own.m);
	pthread_mutex_unlock(&own.m);
	hipGraph_t g = NULL;
	hipError_t ee = e == hipSuccess ? hipStreamEndCapture(c.st, &g) : hipErrorInvalidValue;
	pthread_mutex_lock(&own.m);
	own.end_err = ee;
	own.graph = g;
	own.ended = true;
	own.finished = true;
	pthread_cond_broadcast(&own.cv);
	pthread_mutex_unlock(&own.m);
}

static void *owner_main(void *arg)
{
	(void)arg;
	owner_body(NULL);
	return NULL;
}

static hipError_t owner_begin(int mode)
{
	owner_reset(mode);
	CHECK(pthread_create(&own.t, NULL, owner_main, NULL) == 0, "pthread_create");
	pthread_detach(own.t);
	pthread_mutex_lock(&own.m);
	while (!own.began)
		pthread_cond_wait(&own.cv, &own.m);
	pthread_mutex_unlock(&own.m);
	return own.begin_err;
}

/* Ends the owner's capture: its graph (NULL if none came out). */
static hipGraph_t owner_end(hipError_t *err)
{
	hipGraph_t g;

	if (!own.live) {
		*err = hipErrorInvalidValue;
		return NULL;
	}
	pthread_mutex_lock(&own.m);
	own.cmd = 1;
	pthread_cond_broadcast(&own.cv);
	while (!own.finished)
		pthread_cond_wait(&own.cv, &own.m);
	*err = own.end_err;
	g = own.graph;
	pthread_mutex_unlock(&own.m);
	own.live = false;
	return g;
}

/* ---- interferences -------------------------------------------------- */

static const char *point;   /* ENTRY:N:WHEN, fault:CALL:N, or NULL (dry run) */

static void say(const char *what, hipError_t e)
{
	printf("interference %s: %s\n", what, hipGetErrorName(e));
}

static void host_mark(void *p);
static hipError_t mark(hipStream_t st, uint64_t *flag);

#define CHILD_CHECK(cond, step)                                                              \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			printf("fork child: step %d failed: %s (%s)\n", step, #cond,           \
			       strerror(errno));                                             \
			fflush(stdout);                                                      \
			_exit(10 + step);                                                    \
		}                                                                            \
	} while (0)

/* The fork interference's child uses the shim, as a child that goes on
 * with HIP would: a lock it inherited held (the parent's operation was
 * at a boundary point, another of its threads anywhere) hangs it, and
 * state of the parent's it kept (its render node file, its waiter
 * thread, its registry) fails a step; the child must have fresh state
 * (docs/semantics.md, fork).  It never returns: _exit, so that nothing of
 * the parent's (atexit handlers, destructors) runs twice; the alarm ends a
 * hang, and the parent names the step from the exit status. */
/* A runtime call of the child's: its answer, or the step's failure. */
static void child_hip(hipError_t e, int step, const char *what)
{
	if (e == hipSuccess)
		return;
	printf("fork child: step %d failed: %s answered %s\n", step, what, hipGetErrorName(e));
	fflush(stdout);
	_exit(10 + step);
}

static _Noreturn void fork_child(void)
{
	static uint64_t passed_wait;
	hipExternalSemaphore_t s = NULL;
	hipStream_t st = NULL;
	uint32_t h = 0;
	int fd, sofd = -1;

#if defined(__SANITIZE_ADDRESS__)
	/* GCC's AddressSanitizer does not hold its allocator across fork(): a
	 * child forked while another thread allocates can hang at its first
	 * allocation (seen: a stream worker the child started, blocked in
	 * SizeClassAllocator64::GetFromAllocator, 2 runs in 30).  The child's
	 * use of the shim is checked in the plain build. */
	_exit(0);
#endif
	alarm(10);
	/* Not the parent's file: its own, for the test's side (the shim's
	 * calls are on the others), and none of the parent's counting or
	 * faults. */
	fd = open(render_node_path(), O_RDWR | O_CLOEXEC);
	CHILD_CHECK(fd >= 0, 1);
	drm = fd;
	df_count(false);
	df_fail_none();
	fault_kind = -1;
	atomic_store(&tr_h.shim_h, 0);
	atomic_store(&tr_h2.shim_h, 0);
	/* The parent's captures (the case's, an interference's) are copied
	 * into the child's runtime but are nobody's here: the child's calls
	 * must not count as unsafe ones during them, which would refuse
	 * its synchronize (the child's thread in Relaxed mode). */
	int mode = HX_CAPTURE_MODE_RELAXED;
	child_hip(hipThreadExchangeStreamCaptureMode(&mode), 1,
		  "hipThreadExchangeStreamCaptureMode");
	CHILD_CHECK(drmSyncobjCreate(fd, 0, &h) == 0, 2);
	CHILD_CHECK(drmSyncobjHandleToFD(fd, h, &sofd) == 0, 2);
	child_hip(import_fd(&s, sofd, false), 3, "hipImportExternalSemaphore");
	child_hip(hipStreamCreate(&st), 4, "hipStreamCreate");
	/* A signal through the shim lands. */
	child_hip(signal1(s, 0, st), 5, "hipSignalExternalSemaphoresAsync");
	child_hip(hipStreamSynchronize(st), 5, "hipStreamSynchronize");
	CHILD_CHECK(so_wait(fd, h, 0, 5000) == 0, 6);
	CHILD_CHECK(drmSyncobjReset(fd, &h, 1) == 0, 6);
	/* A wait through the shim holds the stream until the signal. */
	child_hip(wait1(s, 0, st), 7, "hipWaitExternalSemaphoresAsync");
	child_hip(mark(st, &passed_wait), 7, "the host callback's enqueue");
	sleep_ms(50);
	CHILD_CHECK(!load64(&passed_wait), 8);
	CHILD_CHECK(drmSyncobjSignal(fd, &h, 1) == 0, 9);
	for (int i = 0; i < 5000 && !load64(&passed_wait); i++)
		sleep_ms(1);
	CHILD_CHECK(load64(&passed_wait), 9);
	child_hip(hipStreamSynchronize(st), 10, "hipStreamSynchronize");
	child_hip(hipStreamDestroy(st), 10, "hipStreamDestroy");
	child_hip(hipDestroyExternalSemaphore(s), 11, "hipDestroyExternalSemaphore");
	CHILD_CHECK(drmSyncobjDestroy(fd, h) == 0, 11);
	close(fd);
	_exit(0);
}

static void interfere(void *arg, hipStream_t call_stream)
{
	const char *a = c.interf;
	(void)arg;
	(void)call_stream;

	if (strcmp(a, "capture-global") == 0 || strcmp(a, "capture-thread") == 0 ||
	    strcmp(a, "capture-relaxed") == 0) {
		/* A begin on a stream the case captures already is refused and
		 * changes nothing: a case that tests nothing. */
		if (own.live)
			FAIL("generator error: %s at %s: the operation's stream is captured "
			     "already, the interference does nothing", a, point);
		/* This thread owns the capture until owner_end. */
		owner_reset(a[8] == 'g' ? 0 : a[8] == 't' ? 1 : 2);
		owner_body(a);
	} else if (strcmp(a, "capture-end") == 0) {
		hipError_t e;
		if (!own.live)
			FAIL("generator error: %s at %s: no capture of the case's is live, the "
			     "interference does nothing", a, point);
		hipGraph_t g = owner_end(&e);
		say(a, e);
		/* The test's own capture is over: its graph is the test's to
		 * launch (kept as if it were still the owner's). */
		own.graph = g;
		own.ended = true;
	} else if (strcmp(a, "capture-invalidate") == 0) {
		/* (A query of a stream not capturing invalidates nothing.) */
		if (!own.live)
			FAIL("generator error: %s at %s: the operation's stream is not capturing, "
			     "the interference does nothing", a, point);
		say(a, hipStreamQuery(c.st));
	} else if (strcmp(a, "stream-destroy") == 0) {
		atomic_store(&c.st_gone, true);
		say(a, hipStreamDestroy(c.st));
	} else if (strcmp(a, "sem-destroy") == 0) {
		hipError_t (*destroy)(hipExternalSemaphore_t) =
			(hipError_t(*)(hipExternalSemaphore_t))dlsym(RTLD_DEFAULT,
								    "hipDestroyExternalSemaphore");
		atomic_store(&c.s_gone, true);
		say(a, destroy(c.s));
	} else if (strcmp(a, "so-signal") == 0) {
		atomic_store(&c.so_touched, true);
		so_signal(drm, c.h, 0);
	} else if (strcmp(a, "so-reset") == 0) {
		atomic_store(&c.so_touched, true);
		drmSyncobjReset(drm, &c.h, 1);
#if HX_TEST_ABI == 6
	} else if (strcmp(a, "exec-launch") == 0) {
		say(a, hipGraphLaunch(c.other, c.other_st));
	} else if (strcmp(a, "exec-destroy") == 0) {
		/* The operation's own exec only for an update (an update racing
		 * the destroy of its exec, issue 36); else an unrelated one. */
		if (strcmp(c.op, "exec-update") == 0 && !atomic_exchange(&c.exec_gone, true)) {
			say(a, hipGraphExecDestroy(c.exec));
		} else {
			say(a, hipGraphExecDestroy(c.other));
			c.other = NULL;
		}
#endif
	} else if (strcmp(a, "refuse-wait") == 0) {
		cpuhipTestRefuseNextStreamWait();
	} else if (strcmp(a, "fail-host-fn") == 0) {
		cpuhipTestFailNextHostFunc();
	} else if (strcmp(a, "fail-event-record") == 0) {
		cpuhipTestFailNextEventRecord();
	} else if (strcmp(a, "fork") == 0) {
		pid_t pid = fork();
		int status = 0;
		if (pid == 0)
			fork_child();
		CHECK(pid > 0, "fork: %s", strerror(errno));
		CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the forked child failed (%s %d; the step it failed at is printed above)",
		      WIFSIGNALED(status) ? "signal" : "exit status",
		      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		printf("interference fork: the child used the shim and exited 0\n");
	} else if (strcmp(a, "exit") == 0) {
		int64_t t = now_ns();

		printf("interference exit: exit(0) from another thread\n");
		passed = true; /* the exit status tells */
		fflush(stdout);
		/* The watcher (exit_watch) times the exit from here. */
		if (exit_report_fd >= 0)
			(void)!write(exit_report_fd, &t, sizeof(t));
		exit(0);
	} else if (strcmp(a, "none") != 0) {
		FAIL("unknown interference %s", a);
	}
}

/* ---- the exit interference's oracle ---------------------------------
 * exit(0) from another thread while the operation runs, whatever it
 * left pending: the process must end with status 0 (no crash, no abort,
 * no sanitizer report in a destructor) within EXIT_BOUND_S of the
 * exit() (the shim releases what it holds so the runtime's teardown
 * does not wait for a signal that will never come).  The case runs in a
 * child; this process only watches it, and kills it at the bound. */
#define EXIT_BOUND_S 10

static void exit_watch(void)
{
	int p[2];
	int64_t at = 0; /* when the exit() was called */
	int status = 0;
	pid_t pid;

	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(p[0]);
		exit_report_fd = p[1];
		return;
	}
	close(p[1]);
	CHECK(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0, "fcntl");
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		int64_t now = now_ns();

		if (!at && read(p[0], &at, sizeof(at)) != (ssize_t)sizeof(at))
			at = 0;
		if (r == pid)
			break;
		CHECK(r == 0 || errno == EINTR, "waitpid: %s", strerror(errno));
		if (at && now - at > EXIT_BOUND_S * 1000000000LL) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			FAIL("exit(0) from another thread: the process had not ended %d s later "
			     "(killed)", EXIT_BOUND_S);
		}
		/* Before the exit, the case's own bounds hold (DRM_CASE_TIMEOUT). */
		sleep_ms(5);
	}
	if (WIFSIGNALED(status))
		FAIL("the case died by signal %d%s", WTERMSIG(status),
		     at ? " after exit(0) from another thread" : "");
	if (WEXITSTATUS(status) != 0)
		exit(WEXITSTATUS(status)); /* the case said why */
	CHECK(at, "the case ended with status 0 but its exit interference never ran");
	printf("interference exit: the process ended %.0f ms after exit(0), status 0\n",
	       (double)(now_ns() - at) / 1e6);
	exit(0);
}

/* ---- helpers --------------------------------------------------------- */

static long log_mark(void)
{
	const char *path = getenv("HIPEXTSEM_LOG_FILE");
	long off = 0;
	FILE *f = path ? fopen(path, "r") : NULL;

	if (f) {
		fseek(f, 0, SEEK_END);
		off = ftell(f);
		fclose(f);
	}
	return off;
}

static bool logged_since(long from)
{
	const char *path = getenv("HIPEXTSEM_LOG_FILE");
	FILE *f = path ? fopen(path, "r") : NULL;
	long end;

	if (!f)
		return false;
	fseek(f, 0, SEEK_END);
	end = ftell(f);
	fclose(f);
	return end > from;
}

static bool so_signaled(uint32_t h)
{
	return so_wait(drm, h, 0, 0) == 0;
}

/* Whether h is signaled within ms. */
static bool so_within(uint32_t h, unsigned ms)
{
	return so_wait(drm, h, 0, ms) == 0;
}

static void so_reset(uint32_t h)
{
	CHECK(drmSyncobjReset(drm, &h, 1) == 0, "reset");
}

/* Imports a fresh syncobj as a binary semaphore; its signals by the shim
 * are counted in t from here. */
static hipExternalSemaphore_t import_tracked(uint32_t *h, struct tracked *t)
{
	hipExternalSemaphore_t s;

	atomic_store(&t->shim_h, 0);
	atomic_store(&last_import, 0);
	s = sem_import_new(drm, h, false);
	CHECK(atomic_load(&last_import) != 0, "the shim's import made no drmSyncobjFDToHandle "
	      "call: its signals cannot be counted");
	atomic_store(&t->calls, 0);
	t->seen = 0;
	atomic_store(&t->shim_h, atomic_load(&last_import));
	return s;
}

/* Whether h was signaled; if so, a delivery taken (h reset). */
static int take(struct tracked *t, uint32_t h)
{
	if (!so_signaled(h))
		return 0;
	so_reset(h);
	t->seen++;
	return 1;
}

/* Every signal call the shim made on the syncobj was a delivery the case
 * took: none issued twice, none that went nowhere the case looked.  Once
 * the runtime has run everything queued. */
static void check_deliveries(struct tracked *t, const char *what)
{
	int n = atomic_load(&t->calls);

	printf("%s: %d signal call%s by the shim, %d deliver%s taken\n", what, n,
	       n == 1 ? "" : "s", t->seen, t->seen == 1 ? "y" : "ies");
	CHECK(n == t->seen, "%s: the shim made %d signal calls on its syncobj for %d deliveries "
	      "the case took (a signal issued more than once shows as one)", what, n, t->seen);
}

static bool flag_within(uint64_t *f, unsigned ms)
{
	int64_t end = now_ns() + (int64_t)ms * 1000000;

	while (!load64(f) && now_ns() < end)
		sleep_ms(1);
	return load64(f) != 0;
}

static void host_mark(void *p)
{
	__atomic_store_n((uint64_t *)p, 1, __ATOMIC_RELEASE);
}

#if HX_TEST_ABI == 5
static void mark_cb(hipStream_t st, hipError_t status, void *p)
{
	(void)st;
	(void)status;
	host_mark(p);
}
#endif

/* Marks *flag when the stream's earlier work is done (a host function:
 * captured like the operation on a capturing stream). */
static hipError_t mark(hipStream_t st, uint64_t *flag)
{
#if HX_TEST_ABI == 6
	return hipLaunchHostFunc(st, host_mark, flag);
#else
	return hipStreamAddCallback(st, mark_cb, flag, 0);
#endif
}

static bool interf_is(const char *s)
{
	return strcmp(c.interf, s) == 0;
}

/* A dry run records the release's own answer, refusal or not. */
static bool dry;

/* The rescuer: a wait the runtime fell back to host-blocking on blocks
 * the operation's thread until its signal; signaled after 6 s (beyond an
 * interference's bound) so that the case ends (and says so). */
static atomic_bool op_returned, rescued;
static void *rescuer(void *arg)
{
	(void)arg;
	/* Where blocking is what the shim does (an injected refusal or
	 * failure), 2 s tells it; else 6 s, so that a slow call is not taken
	 * for a blocked one. */
	int bound = interf_is("refuse-wait") || interf_is("fail-event-record") ? 2000 : 6000;
	for (int i = 0; i < bound && !atomic_load(&op_returned); i++)
		sleep_ms(1);
	if (!atomic_load(&op_returned)) {
		atomic_store(&rescued, true);
		so_signal(drm, c.h, 0);
	}
	return NULL;
}

static void stream_sync_if_live(hipStream_t st)
{
	if (st && !atomic_load(&c.st_gone))
		(void)hipStreamSynchronize(st);
}

/* After the operation: ends a capture still live (the test's or the
 * interference's) and returns its graph's exec, NULL if none. */
static hipGraphExec_t end_capture_exec(void)
{
	hipGraph_t g = NULL;
	hipGraphExec_t x = NULL;
	hipError_t e = hipSuccess;

	if (own.live)
		g = owner_end(&e);
	else if (own.ended)
		g = own.graph;
	own.ended = false;
	own.graph = NULL;
	if (!g)
		return NULL;
	e = hipGraphInstantiate(&x, g, NULL, NULL, 0);
	(void)hipGraphDestroy(g);
	if (e != hipSuccess) {
		printf("the captured graph does not instantiate: %s\n", hipGetErrorName(e));
		return NULL;
	}
	return x;
}

/* Launches x on a fresh stream and waits: the number of deliveries to h
 * it made (0 or 1; h is reset after). */
static int launch_count(hipGraphExec_t x, struct tracked *t, uint32_t h, uint64_t *flag)
{
	hipStream_t ls;
	int n;

	HIPCHECK(hipStreamCreate(&ls));
	hipError_t e = hipGraphLaunch(x, ls);
	CHECK(e == hipSuccess, "launching the captured graph: %s", hipGetErrorName(e));
	if (flag)
		CHECK(flag_within(flag, 10000), "the captured graph's work did not run");
	HIPCHECK(hipStreamSynchronize(ls));
	HIPCHECK(hipStreamDestroy(ls));
	n = take(t, h);
	return n;
}

/* The semaphore still works: a signal on a fresh stream is delivered. */
static void sem_still_works(void)
{
	hipStream_t fs;

	if (atomic_load(&c.s_gone))
		return;
	HIPCHECK(hipStreamCreate(&fs));
	so_reset(c.h);
	hipError_t e = signal1(c.s, 0, fs);
	CHECK(e == hipSuccess, "a later signal of the semaphore answers %s", hipGetErrorName(e));
	HIPCHECK(hipStreamSynchronize(fs));
	CHECK(so_within(c.h, 5000), "a later signal of the semaphore was not delivered");
	(void)take(&tr_h, c.h);
	/* A wait on another fresh stream stays asynchronous and holds. */
	uint64_t *f = &c.flag[7];
	__atomic_store_n(f, 0, __ATOMIC_RELAXED);
	int64_t t0 = now_ns();
	atomic_store(&op_returned, false);
	atomic_store(&rescued, false);
	pthread_t r;
	CHECK(pthread_create(&r, NULL, rescuer, NULL) == 0, "pthread_create");
	e = wait1(c.s, 0, fs);
	atomic_store(&op_returned, true);
	pthread_join(r, NULL);
	CHECK(e == hipSuccess, "a later wait on the semaphore answers %s", hipGetErrorName(e));
	HIPCHECK(mark(fs, f));
	if (!interf_is("refuse-wait") && fault_kind < 0)
		CHECK(!atomic_load(&rescued), "a later wait on a fresh stream blocked its caller "
		      "%.1f s until the signal: the process fell back to host-blocking waits",
		      (double)(now_ns() - t0) / 1e9);
	if (!atomic_load(&rescued)) {
		sleep_ms(50);
		CHECK(!load64(f), "a later wait passed before its signal");
		so_signal(drm, c.h, 0);
	}
	CHECK(flag_within(f, 5000), "a later wait was not released by its signal");
	HIPCHECK(hipStreamSynchronize(fs));
	HIPCHECK(hipStreamDestroy(fs));
}

/* ---- operations ------------------------------------------------------ */

static void make_stream(void)
{
	atomic_store(&c.st_gone, false);
	if (c.kind == K_SPT) {
		c.st = hipStreamPerThread;
		return;
	}
	HIPCHECK(hipStreamCreate(&c.st));
	if (c.kind == K_CAPTURE)
		HIPCHECK(owner_begin(0));
}

static void drop_stream(void)
{
	if (c.kind != K_SPT && !atomic_load(&c.st_gone)) {
		hipError_t e = hipStreamDestroy(c.st);
		CHECK(e == hipSuccess, "destroying the operation's stream: %s", hipGetErrorName(e));
	}
}

static void make_sem(void)
{
	c.s = import_tracked(&c.h, &tr_h);
	atomic_store(&c.s_gone, false);
	atomic_store(&c.so_touched, false);
}

static void drop_sem(void)
{
	if (!atomic_load(&c.s_gone))
		HIPCHECK(hipDestroyExternalSemaphore(c.s));
	drmSyncobjDestroy(drm, c.h);
}

/* ---- the refusals the oracle accepts ----------------------------------
 * An operation may answer an error only where the case gave it a reason:
 * the interference at its point, or the release itself.  Each row names
 * the interferences it covers ("*": any, a fault included; "fault": every
 * fault:CALL:N), the operations and stream kinds, the flavour (0: all, 5:
 * the 5.2 profile, 6: the 6.x ones) and the codes, with the path that
 * answers them (shim/, and cpuhip for the release's own answer).  The
 * allowed set of a refusal is the union of the rows that match it: a code
 * outside it fails the case, as does a refusal no row allows.  The shim
 * logs every refusal it answers; that is required as well.
 *
 * The operation of a refusal is the case's, except for the launches of a
 * graph the case made (a wait's captured graph, a later launch of the
 * exec), which are launches ("launch").
 *
 * Interferences with no row cannot make a call of the case fail: fork and
 * exit (the shim's atfork handlers and exit release hold nothing a call
 * answers for), so-signal and so-reset (the waiter's business, after the
 * call), exec-launch and exec-destroy of the unrelated exec, refuse-wait
 * (wait.c op_wait falls back to another wait path: fall_back_locked; a
 * launch's wait retries on the host-blocking path, gw_launch).  A sync-layer
 * fault (fault:CALL:N) has no row of its own: every DRM call the matrix
 * fails (destroy, signal, reset, timeline-wait, eventfd; create and
 * fd-to-handle come at the import, before the case arms) is made after
 * the call returned, by the waiter thread, a signal's host function or the
 * last unref of a semaphore (shim/sync.c, waiter.c, signal.c), and is
 * logged there; no call of the case answers for it.
 */
#define RULE_CODES 3

struct refusal_rule {
	const char *interf; /* space-separated; "*" any, "fault" fault:CALL:N */
	const char *ops;    /* space-separated operations */
	const char *kinds;  /* space-separated: plain spt capture; "*" any */
	int abi;            /* 0 every flavour, 5 or 6 */
	hipError_t codes[RULE_CODES];
	const char *why;
};

#define CAPTURES "capture-global capture-thread capture-relaxed"

static const struct refusal_rule refusal_rules[] = {
	/* The release's own answer, whatever the interference. */
	{ "*", "signal", "capture", 5, { hipErrorStreamCaptureUnsupported },
	  "graph_signal.c signal_maybe_captured: 5.2 has no hipLaunchHostFunc to record a "
	  "signal into a capture (docs/graphs.md)" },
	/* sem-destroy: the semaphore's handle is gone. */
	{ "sem-destroy", "signal wait", "*", 0, { hipErrorInvalidResourceHandle },
	  "handles.c drop_taken: HX_TAKE_OR_RETURN in signal.c hx_op_signal and wait.c "
	  "op_wait; captured, hx_reg_validate_args from graph_signal.c gsig_new and "
	  "graph_wait.c hx_gw_vals_from_params" },
	{ "sem-destroy", "sem-destroy", "*", 0, { hipErrorInvalidResourceHandle },
	  "registry.c hx_op_destroy: already destroyed" },
	{ "sem-destroy", "graph-add graph-set", "*", 6, { hipErrorInvalidResourceHandle },
	  "graph_signal.c gsig_new, graph_wait.c hx_gw_vals_from_params (hx_reg_validate_args)" },
	{ "sem-destroy", "launch", "*", 0, { hipErrorInvalidResourceHandle },
	  "graph_exec.c gw_launch: hx_op_wait_validate before anything is queued, or "
	  "wait.c op_wait for a wait node's wait (on 5.2 too: a captured wait's graph)" },
	/* stream-destroy: the operation's stream is gone. */
	{ "stream-destroy", "signal wait", "plain capture", 0, { hipErrorInvalidValue },
	  "streams.c refuse (hx_stream_check_signal, hx_stream_wait_prepare), wait.c host_wait, "
	  "registry.c hx_reg_map_enqueue_error (the stock calls' answer to an invalid stream)" },
	{ "stream-destroy", "wait", "capture", 0, { hipErrorContextIsDestroyed },
	  "graph_wait.c capture_wait passes on hipStreamGetCaptureInfo_v2's answer for a "
	  "stream it does not know (clr hip::isValid; cpuhip_capture.c, 709)" },
	{ "stream-destroy", "launch", "plain", 6, { hipErrorContextIsDestroyed },
	  "graph_exec.c gw_stream_check: the launch's own answer (clr hip_graph.cpp "
	  "hipGraphLaunch_common, hip::isValid; cpuhip hipGraphLaunch)" },
	/* Another thread's capture of the operation's stream. */
	{ CAPTURES, "signal", "plain", 5, { hipErrorStreamCaptureUnsupported },
	  "graph_signal.c signal_maybe_captured: no hipLaunchHostFunc on 5.2" },
	{ CAPTURES, "wait", "plain", 0,
	  { hipErrorStreamCaptureUnsupported, hipErrorStreamCaptureInvalidated },
	  "wait.c op_wait: a stream wait refused by the capture (the runtime's answer, "
	  "cpuhip_capture.c), graph_wait.c capture_wait" },
	{ CAPTURES, "launch", "plain", 6, { hipErrorStreamCaptureUnsupported },
	  "graph_exec.c gw_launch: an exec with wait nodes into a capture" },
	/* The case's own capture ended or invalidated by another thread. */
	{ "capture-end", "wait", "capture", 0, { hipErrorStreamCaptureUnsupported },
	  "graph_wait.c capture_wait: the stream is no longer capturing" },
	{ "capture-invalidate", "signal wait", "capture", 0, { hipErrorStreamCaptureInvalidated },
	  "graph_signal.c signal_maybe_captured, graph_wait.c capture_wait; cpuhip "
	  "hipLaunchHostFunc on an invalidated capture (6.2 on)" },
	/* One-shot faults of the runtime's calls (cpuhip.c). */
	{ "fail-host-fn", "signal", "*", 0, { hipErrorOutOfMemory },
	  "cpuhip hipLaunchHostFunc/hipStreamAddCallback answer hipErrorOutOfMemory; "
	  "signal.c hx_op_signal passes it on (hx_reg_map_enqueue_error), as does "
	  "graph_signal.c signal_maybe_captured" },
	{ "fail-event-record", "launch", "*", 6, { hipErrorOutOfMemory },
	  "cpuhip hipEventRecord answers hipErrorOutOfMemory; graph_exec.c gw_launch (the "
	  "side stream's record) passes it on" },
	/* The exec updated destroyed by another thread. */
	{ "exec-destroy", "exec-update", "*", 6, { hipErrorInvalidValue },
	  "graph_exec.c hx_graph_exec_update: the runtime's answer for an exec it does not "
	  "know (cpuhip hipGraphExecUpdate)" },
};

/* Whether `word` is one of the space-separated words of `list` ("*": any). */
static bool word_in(const char *list, const char *word)
{
	size_t n = strlen(word);

	if (strcmp(list, "*") == 0)
		return true;
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, " ");
		if (len == n && strncmp(p, word, n) == 0)
			return true;
		p += len;
		p += strspn(p, " ");
	}
	return false;
}

static const char *kind_name(enum kind k)
{
	return k == K_SPT ? "spt" : k == K_CAPTURE ? "capture" : "plain";
}

static bool rule_matches(const struct refusal_rule *r, const char *op)
{
	bool interf = fault_kind >= 0 ? strcmp(r->interf, "*") == 0 || word_in(r->interf, "fault")
				      : word_in(r->interf, c.interf);

	return interf && word_in(r->ops, op) && word_in(r->kinds, kind_name(c.kind)) &&
	       (!r->abi || r->abi == HX_TEST_ABI);
}

/* What an armed operation (`op`, the row's name for it) answered, for the
 * oracle: a code of its allowed set, and a log line of the shim's. */
static void refused(const char *what, const char *op, hipError_t e)
{
	char allowed[512] = "";
	size_t len = 0;
	bool ok = dry;

	for (size_t i = 0; i < sizeof(refusal_rules) / sizeof(refusal_rules[0]); i++) {
		const struct refusal_rule *r = &refusal_rules[i];
		if (!rule_matches(r, op))
			continue;
		for (int j = 0; j < RULE_CODES && r->codes[j]; j++) {
			const char *name = hipGetErrorName(r->codes[j]);
			ok |= r->codes[j] == e;
			if (!strstr(allowed, name) && len + strlen(name) + 3 < sizeof(allowed))
				len += (size_t)snprintf(allowed + len, sizeof(allowed) - len, "%s%s",
							len ? ", " : "", name);
		}
	}
	CHECK(ok, "%s answered %s under %s (%s %s): allowed {%s}", what, hipGetErrorName(e),
	      fault_kind >= 0 ? point : c.interf, op, kind_name(c.kind), allowed);
	CHECK(logged_since(c.log_from), "%s answered %s and the shim logged nothing", what,
	      hipGetErrorName(e));
	printf("%s refused: %s (logged; allowed {%s})\n", what, hipGetErrorName(e), allowed);
}

static void arm(void);
static void disarm(void);

static void op_signal(void)
{
	hipError_t e;
	make_sem();
	make_stream();
	arm();
	e = signal1(c.s, 0, c.st);
	disarm();
	if (e != hipSuccess)
		refused("the signal", "signal", e);
	hipGraphExec_t x = end_capture_exec();
	stream_sync_if_live(c.st);
	/* (A destroyed stream was not synchronized: what it ran comes first.) */
	if (atomic_load(&c.st_gone))
		(void)hipDeviceSynchronize();
	int direct = take(&tr_h, c.h);
	int l1 = x ? launch_count(x, &tr_h, c.h, NULL) : 0;
	int l2 = x ? launch_count(x, &tr_h, c.h, NULL) : 0;
	if (x)
		HIPCHECK(hipGraphExecDestroy(x));
	printf("signal: %s, delivered %d directly, %d and %d by the captured graph's launches\n",
	       hipGetErrorName(e), direct, l1, l2);
	/* Whether a signal whose stream was destroyed, whose semaphore was
	 * destroyed or reset, or whose capture was invalidated (its graph
	 * is discarded) is delivered is not defined: at most once. */
	bool racy = atomic_load(&c.s_gone) || atomic_load(&c.so_touched) ||
		    interf_is("stream-destroy") || interf_is("capture-invalidate");
	CHECK(l1 == l2, "the captured graph signaled at one launch and not at the other");
	if (e != hipSuccess)
		CHECK(direct + l1 == 0, "a refused signal was delivered");
	else if (!racy)
		CHECK(direct + l1 == 1, "the signal was delivered %d times (1 expected)", direct + l1);
	else
		CHECK(direct + l1 <= 1, "the signal was delivered %d times (at most 1 expected)",
		      direct + l1);
	if (c.kind == K_CAPTURE && e == hipSuccess && !racy && !interf_is("capture-end") &&
	    !interf_is("capture-invalidate"))
		CHECK(direct == 0, "a signal on a capturing stream ran outside the graph");
	sem_still_works();
	so_reset(c.h);
	sleep_ms(20);
	CHECK(!so_signaled(c.h), "a signal was delivered after the case was over");
	(void)hipDeviceSynchronize();
	check_deliveries(&tr_h, "the semaphore");
	drop_stream();
	drop_sem();
}

static void op_wait(void)
{
	hipError_t e;
	uint64_t *f = &c.flag[0];
	pthread_t r;

	__atomic_store_n(f, 0, __ATOMIC_RELAXED);
	make_sem();
	make_stream();
	atomic_store(&op_returned, false);
	atomic_store(&rescued, false);
	CHECK(pthread_create(&r, NULL, rescuer, NULL) == 0, "pthread_create");
	arm();
	e = wait1(c.s, 0, c.st);
	disarm();
	atomic_store(&op_returned, true);
	pthread_join(r, NULL);
	if (atomic_load(&rescued)) {
		printf("the wait blocked its caller until the signal (host-blocking)\n");
		CHECK(interf_is("refuse-wait") || interf_is("fail-event-record") || fault_kind >= 0,
		      "the wait blocked its caller until its signal (no refusal was injected)");
	}
#if HX_TEST_ABI == 5
	/* 5.2: the per-thread stream is ordered after the wait queued on the
	 * shim's stream by an event; when that step fails, the wait is still
	 * queued and will take a signal, so the caller waits for it instead
	 * and the call succeeds (docs/streams.md). */
	if (interf_is("fail-event-record") && c.kind == K_SPT && !dry)
		CHECK(atomic_load(&rescued) && e == hipSuccess,
		      "a wait on hipStreamPerThread whose ordering event failed %s",
		      e != hipSuccess ? "returned an error with its wait still queued"
				      : "returned before its signal");
#endif
	if (e != hipSuccess)
		refused("the wait", "wait", e);
	/* (Another thread's capture of hipStreamPerThread is of its own
	 * per-thread stream: nothing of this thread's is in it.) */
	if (c.late && e == hipSuccess && strncmp(c.interf, "capture-", 8) == 0 &&
	    !interf_is("capture-end") && c.kind != K_SPT) {
		/* The capture began after the wait was enqueued on the stream
		 * itself (the capture guard): that wait takes a signal of its
		 * own, given now; the waiter consumes it (binary). */
		so_signal(drm, c.h, 0);
		for (int i = 0; i < 500 && so_signaled(c.h); i++)
			sleep_ms(10);
		CHECK(!so_signaled(c.h), "the wait enqueued before the capture did not take its "
		      "signal");
	}
	/* Else the mark runs on the stream (on hipStreamPerThread another
	 * thread's capture is of its own per-thread stream). */
	bool mark_captured = own.live && c.kind != K_SPT;
	hipError_t me = atomic_load(&c.st_gone) ? hipSuccess : mark(c.st, f);
	hipGraphExec_t x = end_capture_exec();
	/* A mark the release did not capture (refused, or run at once). */
	if (me != hipSuccess || load64(f))
		mark_captured = false;
	/* The case's capture invalidated by the interference once the wait
	 * was in it (after the shim's last look): the capture ends in error
	 * and its graph, wait included, is gone; the stream holds nothing, so
	 * the mark may run at once.  Nothing is left to check there. */
	if (!x && c.kind == K_CAPTURE && interf_is("capture-invalidate") && e == hipSuccess)
		me = hipErrorStreamCaptureInvalidated;
	if (x && !mark_captured && c.late && interf_is("capture-end") && me == hipSuccess) {
		/* The capture's end waited for the call (the capture guard):
		 * the wait went into the graph, the stream holds nothing, and
		 * the mark runs without a signal. */
		CHECK(flag_within(f, 10000), "the stream held work queued after its capture ended, "
		      "which the wait recorded into the capture must not hold");
	}
	if (x && !mark_captured) {
		/* The capture ended before the operation, or it was another
		 * thread's capture of its own hipStreamPerThread (cpuhip keys
		 * capture state by the stream the handle resolves to on the
		 * calling thread, as clr's hip::getStream does): its graph
		 * holds nothing of the case's; launched once for what it has. */
		hipStream_t ls;
		HIPCHECK(hipStreamCreate(&ls));
		hipError_t le = hipGraphLaunch(x, ls);
		if (le != hipSuccess) {
			CHECK(atomic_load(&c.s_gone), "launching the captured graph: %s",
			      hipGetErrorName(le));
			refused("the launch of a graph whose semaphore was destroyed", "launch",
				le);
		}
		/* A created stream's capture may hold the wait without the
		 * mark (the mark refused, or run once the capture ended): it
		 * takes a signal of its own.  Another thread's per-thread
		 * stream holds nothing of this thread's: no signal, so that
		 * the wait on this thread's stream is still checked below. */
		if (c.kind != K_SPT)
			so_signal(drm, c.h, 0);
		HIPCHECK(hipStreamSynchronize(ls));
		HIPCHECK(hipStreamDestroy(ls));
		HIPCHECK(hipGraphExecDestroy(x));
		x = NULL;
		/* That signal may have released the wait on the stream as
		 * well: the mark ran, nothing is left to check there. */
		if (c.kind != K_SPT && load64(f))
			me = hipErrorStreamCaptureUnsupported;
	}
	bool gone = atomic_load(&c.st_gone) || atomic_load(&c.s_gone);
	bool signaled_by_interf = atomic_load(&c.so_touched) && interf_is("so-signal");
	if (x) {
		/* The wait and the mark were captured: the graph holds until a
		 * signal, at each launch. */
		for (int i = 0; i < 2; i++) {
			hipStream_t ls;
			__atomic_store_n(f, 0, __ATOMIC_RELAXED);
			HIPCHECK(hipStreamCreate(&ls));
			hipError_t le = hipGraphLaunch(x, ls);
			if (le != hipSuccess && atomic_load(&c.s_gone)) {
				/* Its semaphore destroyed: the launch may be refused. */
				refused("the launch of a graph whose semaphore was destroyed", "launch",
				le);
				HIPCHECK(hipStreamDestroy(ls));
				break;
			}
			HIPCHECK(le);
			sleep_ms(100);
			/* A capture that waited for the call began after the wait was
			 * enqueued on the stream itself: its graph holds only what
			 * came after. */
			if (e == hipSuccess && !signaled_by_interf && !gone && !atomic_load(&rescued) &&
			    !c.late)
				CHECK(!load64(f), "launch %d: the captured wait passed before its "
				      "signal", i + 1);
			so_signal(drm, c.h, 0);
			CHECK(flag_within(f, 10000), "launch %d: the captured graph did not complete "
			      "after the signal", i + 1);
			HIPCHECK(hipStreamSynchronize(ls));
			HIPCHECK(hipStreamDestroy(ls));
			so_reset(c.h);
			signaled_by_interf = false;
		}
		HIPCHECK(hipGraphExecDestroy(x));
	} else if (me == hipSuccess && !atomic_load(&c.st_gone)) {
		sleep_ms(100);
		if (e == hipSuccess && !signaled_by_interf && !gone && !atomic_load(&rescued))
			CHECK(!load64(f), "the wait passed before its signal");
		so_signal(drm, c.h, 0);
		CHECK(flag_within(f, 10000), "the stream did not go on after the signal");
		stream_sync_if_live(c.st);
		if (e == hipSuccess && !signaled_by_interf && !gone && !atomic_load(&rescued) &&
		    c.kind != K_CAPTURE)
			CHECK(!so_signaled(c.h), "the wait left its binary signal for the next wait");
	} else {
		so_signal(drm, c.h, 0);
		stream_sync_if_live(c.st);
	}
	so_reset(c.h);
	sem_still_works();
	(void)hipDeviceSynchronize();
	check_deliveries(&tr_h, "the semaphore");
	drop_stream();
	drop_sem();
}

/* Destroys a semaphore a wait is pending on; the stream must go on once
 * the syncobj is signaled. */
static void op_sem_destroy(void)
{
	uint64_t *f = &c.flag[0];
	hipError_t e;

	__atomic_store_n(f, 0, __ATOMIC_RELAXED);
	make_sem();
	make_stream();
	if (c.kind == K_CAPTURE) {
		/* 5.2 cannot capture a signal (docs/graphs.md): refused. */
		hipError_t se = signal1(c.s, 0, c.st);
		CHECK(se == hipSuccess || se == hipErrorStreamCaptureUnsupported,
		      "the captured signal answered %s", hipGetErrorName(se));
	} else {
		HIPCHECK(wait1(c.s, 0, c.st));
		HIPCHECK(mark(c.st, f));
	}
	arm();
	e = atomic_load(&c.s_gone) ? hipSuccess : hipDestroyExternalSemaphore(c.s);
	disarm();
	if (e != hipSuccess && !atomic_load(&c.s_gone))
		refused("the destroy", "sem-destroy", e);
	atomic_store(&c.s_gone, true);
	hipGraphExec_t x = end_capture_exec();
	if (x) {
		int n = launch_count(x, &tr_h, c.h, NULL);
		printf("the captured signal of the destroyed semaphore delivered %d\n", n);
		HIPCHECK(hipGraphExecDestroy(x));
	} else if (c.kind != K_CAPTURE && !atomic_load(&c.st_gone)) {
		so_signal(drm, c.h, 0);
		CHECK(flag_within(f, 10000), "the stream did not go on after the signal of the "
		      "destroyed semaphore");
	}
	stream_sync_if_live(c.st);
	(void)hipDeviceSynchronize();
	check_deliveries(&tr_h, "the destroyed semaphore");
	drop_stream();
	drop_sem();
}

#if HX_TEST_ABI == 6
static uint64_t counter;
static void work(void *p)
{
	(void)p;
	__atomic_add_fetch(&counter, 1, __ATOMIC_RELEASE);
}

static bool count_within(uint64_t want, unsigned ms)
{
	int64_t end = now_ns() + (int64_t)ms * 1000000;

	while (__atomic_load_n(&counter, __ATOMIC_ACQUIRE) < want && now_ns() < end)
		sleep_ms(1);
	return __atomic_load_n(&counter, __ATOMIC_ACQUIRE) >= want;
}

static test_wait_params gwp;
static test_signal_params gsp;

/* wait(s) -> host work -> signal(s2) */
static hipError_t graph_nodes(hipGraph_t g, hipGraphNode_t *wn, hipGraphNode_t *sn)
{
	struct hx_ext_sem_node_params wp = { &c.s, &gwp, 1 }, sp = { &c.s2, &gsp, 1 };
	struct hx_host_node_params hp = { work, NULL };
	hipGraphNode_t hn;
	hipError_t e;

	e = hipGraphAddExternalSemaphoresWaitNode(wn, g, NULL, 0, &wp);
	if (e)
		return e;
	HIPCHECK(hipGraphAddHostNode(&hn, g, wn, 1, &hp));
	return hipGraphAddExternalSemaphoresSignalNode(sn, g, &hn, 1, &sp);
}

/* One launch of the graph on st: holds until s is signaled, then works
 * and signals s2. */
static void check_launch(hipGraphExec_t x, hipStream_t st, const char *what)
{
	uint64_t before = __atomic_load_n(&counter, __ATOMIC_ACQUIRE);
	hipError_t e = hipGraphLaunch(x, st);

	if (e != hipSuccess) {
		refused(what, "launch", e);
		return;
	}
	sleep_ms(100);
	CHECK(__atomic_load_n(&counter, __ATOMIC_ACQUIRE) == before && !so_signaled(c.h2),
	      "%s: the graph ran before its wait's signal", what);
	so_signal(drm, c.h, 0);
	CHECK(count_within(before + 1, 10000), "%s: the graph did not run after the signal", what);
	CHECK(so_within(c.h2, 10000), "%s: the graph's signal was not delivered", what);
	(void)take(&tr_h2, c.h2);
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(!so_signaled(c.h), "%s: the graph's wait left its binary signal", what);
}

static uint64_t other_counter;
static void other_work(void *p)
{
	(void)p;
	__atomic_add_fetch(&other_counter, 1, __ATOMIC_RELEASE);
}

static void make_other(void)
{
	hipGraph_t g;
	hipGraphNode_t n;
	struct hx_host_node_params hp = { other_work, NULL };

	HIPCHECK(hipGraphCreate(&g, 0));
	HIPCHECK(hipGraphAddHostNode(&n, g, NULL, 0, &hp));
	HIPCHECK(hipGraphInstantiate(&c.other, g, NULL, NULL, 0));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamCreate(&c.other_st));
}

static void op_graph(void)
{
	const char *op = c.op;
	hipError_t e = hipSuccess;
	hipStream_t ls;

	memset(&gwp, 0, sizeof(gwp));
	memset(&gsp, 0, sizeof(gsp));
	make_sem();
	c.s2 = import_tracked(&c.h2, &tr_h2);
	make_other();
	atomic_store(&c.exec_gone, false);
	c.exec = NULL;
	c.st = NULL;
	c.kind = c.kind == K_SPT ? K_SPT : K_PLAIN;
	make_stream();
	ls = c.st;
	HIPCHECK(hipGraphCreate(&c.g, 0));
	bool add = strcmp(op, "graph-add") == 0;
	if (add)
		arm();
	e = graph_nodes(c.g, &c.wnode, &c.snode);
	if (add) {
		disarm();
		if (e != hipSuccess) {
			refused("adding the nodes", c.op, e);
			goto out;
		}
	}
	HIPCHECK(e);
	if (strcmp(op, "graph-set") == 0) {
		struct hx_ext_sem_node_params sp = { &c.s2, &gsp, 1 };
		arm();
		e = hipGraphExternalSemaphoresSignalNodeSetParams(c.snode, &sp);
		disarm();
		if (e != hipSuccess) {
			refused("setting the signal node", c.op, e);
			goto out;
		}
	}
	bool inst = strcmp(op, "instantiate") == 0;
	if (inst)
		arm();
	e = hipGraphInstantiate(&c.exec, c.g, NULL, NULL, 0);
	if (inst) {
		disarm();
		if (e != hipSuccess) {
			refused("the instantiate", c.op, e);
			c.exec = NULL;
			goto out;
		}
	}
	HIPCHECK(e);
	if (strcmp(op, "exec-update") == 0) {
		hipGraph_t g2;
		hipGraphNode_t w2, s2, err_node = NULL;
		int result = 0;
		HIPCHECK(hipGraphCreate(&g2, 0));
		HIPCHECK(graph_nodes(g2, &w2, &s2));
		arm();
		e = hipGraphExecUpdate(c.exec, g2, &err_node, &result);
		disarm();
		HIPCHECK(hipGraphDestroy(g2));
		if (e != hipSuccess)
			refused("the exec update", c.op, e);
	}
	if (strcmp(op, "launch") == 0) {
		uint64_t before = __atomic_load_n(&counter, __ATOMIC_ACQUIRE);
		pthread_t r;
		atomic_store(&op_returned, false);
		atomic_store(&rescued, false);
		CHECK(pthread_create(&r, NULL, rescuer, NULL) == 0, "pthread_create");
		arm();
		e = atomic_load(&c.exec_gone) ? hipErrorInvalidValue : hipGraphLaunch(c.exec, ls);
		disarm();
		atomic_store(&op_returned, true);
		pthread_join(r, NULL);
		if (atomic_load(&rescued)) {
			/* The launch's waits fell back to blocking its caller. */
			printf("the launch blocked its caller until the signal (host-blocking)\n");
			CHECK(interf_is("refuse-wait") || interf_is("fail-event-record") ||
			      fault_kind >= 0,
			      "the launch blocked its caller until its signal (no refusal was "
			      "injected)");
			so_reset(c.h);
			(void)so_within(c.h2, 10000);
			(void)take(&tr_h2, c.h2);
			stream_sync_if_live(ls);
		} else if (e != hipSuccess) {
			refused("the launch", c.op, e);
		} else {
			sleep_ms(100);
			if (!atomic_load(&c.s_gone) && !atomic_load(&c.so_touched))
				CHECK(__atomic_load_n(&counter, __ATOMIC_ACQUIRE) == before,
				      "the launch ran before its wait's signal");
			so_signal(drm, c.h, 0);
			if (!atomic_load(&c.st_gone)) {
				CHECK(count_within(before + 1, 10000), "the launch did not run after "
				      "the signal");
				if (!atomic_load(&c.exec_gone))
					CHECK(so_within(c.h2, 10000), "the launch's signal was not "
					      "delivered");
				stream_sync_if_live(ls);
			}
			(void)take(&tr_h2, c.h2);
			so_reset(c.h);
		}
	}
	/* Another thread's capture of the launch's stream: ended, its
	 * graph discarded (what it holds depends on when it began). */
	if (own.live || own.ended) {
		hipGraphExec_t x = end_capture_exec();
		if (x)
			HIPCHECK(hipGraphExecDestroy(x));
		so_reset(c.h);
		(void)take(&tr_h2, c.h2);
	}
	if (strcmp(op, "exec-destroy") == 0) {
		uint64_t before = __atomic_load_n(&counter, __ATOMIC_ACQUIRE);
		HIPCHECK(hipGraphLaunch(c.exec, ls));
		arm();
		e = atomic_exchange(&c.exec_gone, true) ? hipSuccess : hipGraphExecDestroy(c.exec);
		disarm();
		if (e != hipSuccess)
			refused("the exec destroy", c.op, e);
		sleep_ms(50);
		if (!atomic_load(&c.so_touched))
			CHECK(__atomic_load_n(&counter, __ATOMIC_ACQUIRE) == before,
			      "the launch ran before its wait's signal");
		so_signal(drm, c.h, 0);
		if (!atomic_load(&c.st_gone)) {
			CHECK(count_within(before + 1, 10000), "the destroyed exec's launch did not "
			      "run after the signal");
			CHECK(so_within(c.h2, 10000), "the destroyed exec's signal was not delivered");
			stream_sync_if_live(ls);
		}
		(void)take(&tr_h2, c.h2);
		so_reset(c.h);
	}
	/* The exec, if still there, works at every later launch (after a
	 * refused wait the launches block their caller until the signal,
	 * which the case gives after them: documented, not tried). */
	if (!atomic_load(&c.exec_gone) && c.exec && !atomic_load(&c.s_gone) &&
	    !interf_is("refuse-wait")) {
		hipStream_t fs;
		HIPCHECK(hipStreamCreate(&fs));
		check_launch(c.exec, fs, "a later launch");
		check_launch(c.exec, fs, "a second later launch");
		HIPCHECK(hipStreamDestroy(fs));
	}
out:
	if (c.exec && !atomic_load(&c.exec_gone))
		HIPCHECK(hipGraphExecDestroy(c.exec));
	if (c.other)
		HIPCHECK(hipGraphExecDestroy(c.other));
	c.other = NULL;
	stream_sync_if_live(c.other_st);
	HIPCHECK(hipStreamDestroy(c.other_st));
	HIPCHECK(hipGraphDestroy(c.g));
	so_reset(c.h);
	sem_still_works();
	(void)hipDeviceSynchronize();
	/* Each run of the graph signaled once (a run the case did not
	 * look for is taken here). */
	(void)take(&tr_h2, c.h2);
	check_deliveries(&tr_h2, "the graph's signal semaphore");
	check_deliveries(&tr_h, "the graph's wait semaphore");
	drop_stream();
	HIPCHECK(hipDestroyExternalSemaphore(c.s2));
	drmSyncobjDestroy(drm, c.h2);
	drop_sem();
}
#endif

/* ---- arming ---------------------------------------------------------- */

static void arm(void)
{
	c.log_from = log_mark();
	/* The DRM calls are counted from here to the end of the case's
	 * run: the shim makes most of them later, as the stream runs. */
	if (!df_count(true))
		df_count_reset();
	if (dry) {
		cpuhipTestBoundaryTrace(1);
		return;
	}
	if (fault_kind >= 0)
		return;
	char entry[64], when[16];
	unsigned n;
	int fields = sscanf(point, "%63[^:]:%u:%15s", entry, &n, when);
	CHECK(fields == 3 && (strcmp(when, "before") == 0 || strcmp(when, "after") == 0),
	      "bad point %s (ENTRY:N:before|after)", point);
	CHECK(cpuhipTestInterleave(entry, n, strcmp(when, "after") == 0, interfere, NULL, 3000) == 0,
	      "cpuhipTestInterleave refused the plan");
}

static int reached;

static void disarm(void)
{
	if (dry) {
		static char buf[8192];
		cpuhipTestBoundaryTrace(0);
		CHECK(cpuhipTestBoundaryCalls(buf, sizeof(buf)) != (size_t)-1, "trace overflow");
		/* ENTRY counts, in order of first call. */
		char *names[256];
		int counts[256], n = 0;
		for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
			int i;
			for (i = 0; i < n && strcmp(names[i], line) != 0; i++)
				;
			if (i == n && n < 256) {
				names[n] = line;
				counts[n++] = 0;
			}
			if (i < 256)
				counts[i]++;
		}
		for (int i = 0; i < n; i++)
			printf("point %s %d\n", names[i], counts[i]);
		return;
	}
	if (fault_kind >= 0)
		return;
	int st = cpuhipTestInterleaveState();
	if (st == CPUHIP_IL_BLOCKED) {
		/* Documented blocking: destroying a stream a wait is pending on
		 * returns once the wait's signal came; the case signals.  A
		 * capture begun or ended through the shim while a signal, wait or
		 * launch is between its capture decision and its enqueue waits
		 * for that call (the capture guard, docs/graphs.md): it must then
		 * complete once the operation has returned. */
		bool guarded = interf_is("capture-global") || interf_is("capture-thread") ||
			       interf_is("capture-relaxed") || interf_is("capture-end");
		/* fork() takes the capture guard and the graph locks (graph_fork.c):
		 * it waits for a call between its decision and its enqueue, and
		 * for a graph operation, which holds the graph lock across its
		 * runtime calls (docs/graphs.md); so does another thread's
		 * launch or exec destroy during a graph operation. */
		bool graph_op = !strcmp(c.op, "instantiate") || !strcmp(c.op, "launch") ||
				!strcmp(c.op, "exec-update") || !strcmp(c.op, "exec-destroy");
		guarded = guarded || interf_is("fork") ||
			  (graph_op && (interf_is("exec-launch") || interf_is("exec-destroy")));
		bool documented = interf_is("stream-destroy") || guarded;
		if (guarded) {
			/* Held until the call left the guard: it runs now, after the
			 * operation, with no signal of the case's. */
			st = cpuhipTestInterleaveFinish(10000);
			printf("the interference %s waited for the call at %s (documented: the "
			       "capture guard); it ran after the operation\n", c.interf, point);
			CHECK(st == CPUHIP_IL_DONE, "the interference %s did not complete within 10 s "
			      "after the operation returned", c.interf);
			c.late = true;
			reached |= st == CPUHIP_IL_DONE;
			return;
		}
		printf("the interference %s was blocked at %s%s: signaling\n",
		       c.interf, point, documented ? " (documented: a wait is pending)" : "");
		so_signal(drm, c.h, 0);
		st = cpuhipTestInterleaveFinish(10000);
		CHECK(documented, "the interference %s was blocked at %s: it "
		      "waited for the operation (%s after the operation returned)", c.interf, point,
		      st == CPUHIP_IL_DONE ? "it completed" : "still blocked 10 s");
		CHECK(st == CPUHIP_IL_DONE, "the interference %s did not complete after the signal",
		      c.interf);
	} else {
		st = cpuhipTestInterleaveFinish(0);
	}
	reached |= st == CPUHIP_IL_DONE;
}

static void run_op(void)
{
	if (strcmp(c.op, "signal") == 0)
		op_signal();
	else if (strcmp(c.op, "wait") == 0)
		op_wait();
	else if (strcmp(c.op, "sem-destroy") == 0)
		op_sem_destroy();
#if HX_TEST_ABI == 6
	else if (!strcmp(c.op, "graph-add") || !strcmp(c.op, "graph-set") ||
		 !strcmp(c.op, "instantiate") || !strcmp(c.op, "launch") ||
		 !strcmp(c.op, "exec-update") || !strcmp(c.op, "exec-destroy"))
		op_graph();
#endif
	else
		FAIL("unknown operation %s", c.op);
}

/* A failed case shows the end of the shim's log. */
static void log_tail(void)
{
	const char *path = getenv("HIPEXTSEM_LOG_FILE");
	char line[512];
	long size;
	FILE *f;

	if (passed || !path || !(f = fopen(path, "r")))
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, size > 3000 ? size - 3000 : 0, SEEK_SET);
	printf("--- the end of the shim's log:\n");
	while (fgets(line, sizeof(line), f))
		fputs(line, stdout);
	fclose(f);
	fflush(stdout);
}

static enum kind parse_kind(const char *kind)
{
	enum kind k = strcmp(kind, "spt") == 0 ? K_SPT : strcmp(kind, "capture") == 0 ? K_CAPTURE
										 : K_PLAIN;
	CHECK(k != K_PLAIN || strcmp(kind, "plain") == 0, "unknown kind %s", kind);
	return k;
}

/* An interference that cannot affect the operation makes a case that
 * tests nothing and passes: refused as the generator's error
 * (tests/interleave/run-matrix), before anything runs.  The ones that
 * turn out to do nothing only as the case runs (a capture's begin on a
 * stream captured already) are refused by the interference itself. */
static void check_generated(void)
{
	bool graph = strcmp(c.op, "signal") != 0 && strcmp(c.op, "wait") != 0 &&
		     strcmp(c.op, "sem-destroy") != 0;
	const char *why = NULL;

	if (interf_is("capture-global") || interf_is("capture-thread") ||
	    interf_is("capture-relaxed")) {
		if (c.kind == K_CAPTURE)
			why = "the operation's stream is captured already: the begin is refused";
		else if (c.kind == K_SPT)
			why = "on another thread hipStreamPerThread is that thread's own stream: "
			      "its capture holds nothing of the operation's";
		else if (graph && strcmp(c.op, "launch") != 0)
			why = "the operation uses no stream";
	} else if (interf_is("capture-end") || interf_is("capture-invalidate")) {
		if (c.kind != K_CAPTURE)
			why = "the operation's stream is not capturing";
	} else if (interf_is("stream-destroy")) {
		if (c.kind == K_SPT)
			why = "hipStreamPerThread cannot be destroyed: the destroy is refused";
	} else if (interf_is("exec-launch") || interf_is("exec-destroy")) {
		if (!graph)
			why = "the case has no exec of its own";
	}
	if (why)
		FAIL("generator error: %s on %s %s: %s; the interference does nothing",
		     c.interf, c.op, c.kind == K_SPT ? "spt" : c.kind == K_CAPTURE ? "capture"
										: "plain", why);
}

/* The shim's counters (shim/ops.h struct hx_stats, exported as
 * hipextsemGetStats): what a run of the operation leaves behind in it. */
struct hx_stats_view {
	unsigned live_sems, pending_waits, pending_signals, slots_allocated;
};

static struct hx_stats_view shim_stats(void)
{
	static void (*get)(struct hx_stats_view *);
	struct hx_stats_view st = { 0 };

	if (!get)
		get = (void (*)(struct hx_stats_view *))dlsym(RTLD_DEFAULT, "hipextsemGetStats");
	CHECK(get, "hipextsemGetStats not found: the shim is not loaded");
	get(&st);
	return st;
}

static void warm_up(void)
{
	hipStream_t w;

	/* The shim opens its device and starts its waiter. */
	c.interf = "none";
	make_sem();
	HIPCHECK(hipStreamCreate(&w));
	HIPCHECK(signal1(c.s, 0, w));
	HIPCHECK(wait1(c.s, 0, w));
	HIPCHECK(hipStreamSynchronize(w));
	HIPCHECK(hipStreamDestroy(w));
	drop_sem();
}

int main(int argc, char **argv)
{
	int fds[2];
	struct hx_stats_view stats[2];
	const int reps = 2;

	df_own_fd(&drm);
	df_hooks(NULL, before_call, after_call);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && argc % 2 == 0 && strcmp(argv[1], "--dry") == 0) {
		dry = true;
	} else if (argc != 5) {
		FAIL("usage: %s OP KIND POINT INTERFERENCE | --dry OP KIND [OP KIND]...", argv[0]);
	}
	CHECK(expect_shim(), "the shim is not loaded");
	if (dry) {
		/* Each operation once, with no interference, in a child of its
		 * own that starts as a case does (the runtime not yet used):
		 * its boundary calls and DRM calls ("combo OP KIND", "point
		 * ENTRY N", "fault CALL N", "done OP KIND" if it passed). */
		for (int i = 2; i + 1 < argc; i += 2) {
			int status;
			printf("combo %s %s\n", argv[i], argv[i + 1]);
			fflush(stdout);
			pid_t pid = fork();
			CHECK(pid >= 0, "fork: %s", strerror(errno));
			if (pid == 0) {
				drm = drm_open();
				c.flag = pinned(8 * sizeof(uint64_t));
				warm_up();
				c.op = argv[i];
				c.kind = parse_kind(argv[i + 1]);
				c.interf = "none";
				run_op();
				(void)hipDeviceSynchronize();
				df_count(false);
				for (int d = 0; d < D_N; d++)
					if (df_counted(dcalls[d]))
						printf("fault %s %d\n", df_name[dcalls[d]],
						       df_counted(dcalls[d]));
				fflush(stdout);
				_exit(0);
			}
			CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
				printf("done %s %s\n", argv[i], argv[i + 1]);
			else
				printf("failed %s %s\n", argv[i], argv[i + 1]);
		}
		return 0;
	}
	if (strcmp(argv[4], "exit") == 0)
		exit_watch(); /* returns in the child, which runs the case */
	atexit(log_tail);
	drm = drm_open();
	c.flag = pinned(8 * sizeof(uint64_t));
	warm_up();
	c.op = argv[1];
	c.kind = parse_kind(argv[2]);
	point = argv[3];
	c.interf = argv[4];
	check_generated();
	if (strncmp(point, "fault:", 6) == 0) {
		char call[32];
		int n = 0;
		int fields = sscanf(point + 6, "%31[^:]:%d", call, &n);
		CHECK(fields == 2 && n > 0, "bad fault %s", point);
		for (int i = 0; i < D_N; i++)
			if (strcmp(call, df_name[dcalls[i]]) == 0)
				fault_kind = i;
		CHECK(fault_kind >= 0, "unknown DRM call %s", call);
		df_fail_nth(dcalls[fault_kind], n);
	}
	/* Twice: what one run leaves over (file descriptors) shows. */
	for (int i = 0; i < reps; i++) {
		reached = 0;
		df_hits_reset();
		run_op();
		(void)hipDeviceSynchronize();
		df_count(false);
		if (fault_kind >= 0)
			reached = df_hits() > 0;
		/* A point of a first use (a helper made once per thread or
		 * process) comes in the first run only. */
		CHECK(reached || i > 0, "the boundary point %s was not reached: the case "
		      "tested nothing", point);
		if (!reached)
			printf("repeat %d: %s not reached (a first use)\n", i + 1, point);
		fds[i] = count_fds();
		stats[i] = shim_stats();
		printf("repeat %d: %d fds; shim: %u live semaphores, %u pending waits, %u pending "
		       "signals, %u wait slots\n", i + 1, fds[i], stats[i].live_sems,
		       stats[i].pending_waits, stats[i].pending_signals, stats[i].slots_allocated);
	}
	CHECK(fds[1] <= fds[0], "file descriptors grew over the repeats: %d, then %d", fds[0],
	      fds[1]);
	/* What the first run made once (a slot chunk, a helper) stays; what
	 * the second adds to it is a leak: a semaphore, a wait or signal
	 * record never released, slots never given back. */
	CHECK(stats[1].live_sems <= stats[0].live_sems &&
	      stats[1].pending_waits <= stats[0].pending_waits &&
	      stats[1].pending_signals <= stats[0].pending_signals &&
	      stats[1].slots_allocated <= stats[0].slots_allocated,
	      "the shim's state grew over the repeats (live semaphores %u, then %u; pending waits "
	      "%u, then %u; pending signals %u, then %u; wait slots %u, then %u)",
	      stats[0].live_sems, stats[1].live_sems, stats[0].pending_waits,
	      stats[1].pending_waits, stats[0].pending_signals, stats[1].pending_signals,
	      stats[0].slots_allocated, stats[1].slots_allocated);
	passed = true;
	printf("ok: %s %s %s %s\n", c.op, argv[2], point, c.interf);
	return 0;
}
