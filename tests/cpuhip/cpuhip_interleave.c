/* SPDX-License-Identifier: MIT */
/*
 * Test-only: interferences at the runtime boundary (cpuhip_test.h,
 * tests/interleave).  Every entry point a client of the runtime calls
 * passes CPUHIP_BOUNDARY on entry and on return; while a plan is armed the
 * calls of the armed thread (or of every thread, for a plan from
 * CPUHIP_INTERLEAVE) are counted by name, and before or after the Nth call
 * of the chosen entry point an interference runs on a thread of its own,
 * to completion (joined, within a bound) before the call goes on.  Calls
 * an entry point makes to another one are not counted (depth), nor are
 * the interference's own calls.
 *
 * No ROCm release has any of this: it models no runtime behaviour.  The
 * one-shot faults (the next stream wait refused, the next host function
 * enqueue or event record failed) give the answers CPUHIP_STREAM_WAIT=refuse
 * and an allocation failure give.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpuhip_internal.h"
#include "cpuhip_test.h"

static atomic_bool il_on;           /* a plan or a trace is armed */
static atomic_bool refuse_next_wait;
static atomic_bool fail_next_host_fn;
static atomic_bool fail_next_event_record;
static __thread int il_depth;       /* entry points this thread is inside */
static __thread bool il_interfering; /* this thread is an interference */

static pthread_mutex_t il_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool any_thread;           /* count every thread's calls (env plan) */
	pthread_t thread;          /* else this one's */
	char entry[64];
	unsigned nth, seen_target;
	bool after;
	bool has_plan;
	cpuhipTestInterference fn;
	void *arg;
	char action[32];
	unsigned timeout_ms;
	int state;                 /* CPUHIP_IL_* */
	struct worker_arg *worker; /* an interference not done yet */
	char trace[8192];
	size_t trace_len;
	bool trace_full;
} il;

/* One interference: shared by its (detached) thread and the thread that
 * waits for it, freed by the last of the two. */
struct worker_arg {
	cpuhipTestInterference fn;
	void *arg;
	char action[32];
	hipStream_t stream;
	atomic_int tid;
	atomic_bool done; /* returned, or said it is done (cpuhipTestInterferenceDone) */
	atomic_int refs;
};

/* The interference running now (one plan at a time); its own thread
 * finds it by thread id.  No pointer in thread-local storage: LeakSanitizer
 * crashed at exit scanning such a block of this library once it was
 * unloaded (hostile-*-unload). */
static _Atomic(struct worker_arg *) current_worker;

static void builtin_action(const char *action, hipStream_t s);

static void worker_put(struct worker_arg *w)
{
	if (atomic_fetch_sub(&w->refs, 1) == 1)
		free(w);
}

static void *worker_main(void *p)
{
	struct worker_arg *w = p;

	il_interfering = true;
	atomic_store(&w->tid, (int)cpuhip_tid());
	if (w->fn)
		w->fn(w->arg, w->stream);
	else
		builtin_action(w->action, w->stream);
	atomic_store(&w->done, true);
	worker_put(w);
	return NULL;
}

CPUHIP_EXPORT void cpuhipTestInterferenceDone(void)
{
	pthread_mutex_lock(&il_lock);
	struct worker_arg *w = atomic_load(&current_worker);
	if (w && atomic_load(&w->tid) == (int)cpuhip_tid())
		atomic_store(&w->done, true);
	pthread_mutex_unlock(&il_lock);
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether thread `tid` of this process sleeps in futex(2) or in a timed
 * sleep now (a lock, a condition, or a poll that backs off): the first
 * field of /proc/self/task/TID/syscall is the number of the system call
 * it is blocked in ("running" while it runs). */
static bool sleeping(int tid)
{
	char path[64], buf[32];
	FILE *f;
	long nr;

	if (tid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(buf, sizeof(buf), f) && sscanf(buf, "%ld", &nr) == 1;
	fclose(f);
	return ok && (nr == SYS_futex || nr == SYS_nanosleep || nr == SYS_clock_nanosleep);
}

/* How long the interference must have slept, sampled every 2 ms with at
 * most two samples in a row finding it awake (a poll's wake-ups), to count
 * as blocked: by a lock or a condition of the call it interrupts (which
 * cannot go on until the interference returns), or by work pending on a
 * stream. */
#define BLOCKED_SLEEP_MS 400

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Waits for the interference to be done, at most ms; with `early`, false
 * as soon as it has slept for BLOCKED_SLEEP_MS: waiting out the whole
 * bound for an interference that waits for the interrupted call decides
 * nothing more and cost seconds a case. */
static bool wait_done(struct worker_arg *w, unsigned ms, bool early)
{
	int64_t end = mono_ms() + ms, since = -1;
	int awake = 0;

	for (;;) {
		int64_t now = mono_ms();
		if (atomic_load(&w->done))
			return true;
		if (now >= end)
			return false;
		if (early && sleeping(atomic_load(&w->tid))) {
			awake = 0;
			if (since < 0)
				since = now;
			else if (now - since >= BLOCKED_SLEEP_MS)
				return false;
		} else if (++awake > 2) {
			since = -1;
		}
		sleep_ms(2);
	}
}

/* Runs the plan's interference on a thread of its own and waits for it
 * (called without il_lock). */
static void fire(hipStream_t s)
{
	struct worker_arg *w = calloc(1, sizeof(*w));
	pthread_t t;
	unsigned ms;

	if (!w) {
		fprintf(stderr, "cpuhip: interleave: out of memory\n");
		abort();
	}
	pthread_mutex_lock(&il_lock);
	w->fn = il.fn;
	w->arg = il.arg;
	memcpy(w->action, il.action, sizeof(w->action));
	w->stream = s;
	atomic_init(&w->refs, 2);
	ms = il.timeout_ms;
	il.state = CPUHIP_IL_RUNNING;
	atomic_store(&current_worker, w);
	pthread_mutex_unlock(&il_lock);
	if (pthread_create(&t, NULL, worker_main, w) != 0) {
		fprintf(stderr, "cpuhip: interleave: cannot start the interference thread\n");
		abort();
	}
	pthread_detach(t);
	bool done = wait_done(w, ms, true);
	pthread_mutex_lock(&il_lock);
	if (done) {
		il.state = CPUHIP_IL_DONE;
		atomic_store(&current_worker, NULL);
		worker_put(w);
	} else {
		il.state = CPUHIP_IL_BLOCKED;
		il.worker = w;
	}
	pthread_mutex_unlock(&il_lock);
}

static void trace_add_locked(const char *name)
{
	size_t n = strlen(name);

	if (il.trace_len + n + 2 > sizeof(il.trace)) {
		il.trace_full = true;
		return;
	}
	memcpy(il.trace + il.trace_len, name, n);
	il.trace_len += n;
	il.trace[il.trace_len++] = '\n';
	il.trace[il.trace_len] = '\0';
}

static void parse_env(void);
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

struct cpuhip_boundary cpuhip_boundary_enter(const char *name, hipStream_t s)
{
	struct cpuhip_boundary b = { NULL, s, false };
	bool now = false;

	cpuhip_noise();
	cpuhip_pts_touch(s);
	pthread_once(&env_once, parse_env);
	if (!atomic_load_explicit(&il_on, memory_order_acquire) || il_interfering)
		return b;
	b.name = name;
	if (il_depth++ > 0)
		return b;
	pthread_mutex_lock(&il_lock);
	if (il.any_thread || pthread_equal(il.thread, pthread_self())) {
		trace_add_locked(name);
		if (il.has_plan && il.state == CPUHIP_IL_PENDING && strcmp(il.entry, name) == 0 &&
		    ++il.seen_target == il.nth) {
			if (il.after)
				b.fire_after = true;
			else
				now = true;
		}
	}
	pthread_mutex_unlock(&il_lock);
	if (now)
		fire(s);
	return b;
}

void cpuhip_boundary_leave(struct cpuhip_boundary *b)
{
	cpuhip_noise();
	if (!b->name)
		return;
	il_depth--;
	if (b->fire_after)
		fire(b->stream);
}

static void reset_locked(void)
{
	il.has_plan = false;
	il.fn = NULL;
	il.arg = NULL;
	il.action[0] = '\0';
	il.entry[0] = '\0';
	il.seen_target = 0;
	il.state = CPUHIP_IL_PENDING;
	il.trace_len = 0;
	il.trace[0] = '\0';
	il.trace_full = false;
}

CPUHIP_EXPORT int cpuhipTestInterleave(const char *entry, unsigned nth, int after,
				       cpuhipTestInterference fn, void *arg, unsigned timeout_ms)
{
	if (!entry || nth == 0 || strlen(entry) >= sizeof(il.entry))
		return -1;
	pthread_mutex_lock(&il_lock);
	if (il.worker) {
		pthread_mutex_unlock(&il_lock);
		return -1;
	}
	reset_locked();
	il.any_thread = false;
	il.thread = pthread_self();
	snprintf(il.entry, sizeof(il.entry), "%s", entry);
	il.nth = nth;
	il.after = after != 0;
	il.fn = fn;
	il.arg = arg;
	il.timeout_ms = timeout_ms ? timeout_ms : 5000;
	il.has_plan = true;
	pthread_mutex_unlock(&il_lock);
	atomic_store(&il_on, true);
	return 0;
}

CPUHIP_EXPORT void cpuhipTestBoundaryTrace(int on)
{
	pthread_mutex_lock(&il_lock);
	if (on) {
		reset_locked();
		il.any_thread = false;
		il.thread = pthread_self();
	}
	pthread_mutex_unlock(&il_lock);
	atomic_store(&il_on, on != 0);
}

CPUHIP_EXPORT size_t cpuhipTestBoundaryCalls(char *buf, size_t len)
{
	size_t n;

	pthread_mutex_lock(&il_lock);
	n = il.trace_full ? (size_t)-1 : il.trace_len;
	if (buf && len) {
		snprintf(buf, len, "%s", il.trace);
	}
	pthread_mutex_unlock(&il_lock);
	return n;
}

CPUHIP_EXPORT int cpuhipTestInterleaveState(void)
{
	int st;

	pthread_mutex_lock(&il_lock);
	st = il.state;
	pthread_mutex_unlock(&il_lock);
	return st;
}

CPUHIP_EXPORT int cpuhipTestInterleaveFinish(unsigned timeout_ms)
{
	struct worker_arg *w;
	int st;

	atomic_store(&il_on, false);
	pthread_mutex_lock(&il_lock);
	w = il.worker;
	pthread_mutex_unlock(&il_lock);
	if (w) {
		if (!wait_done(w, timeout_ms, false))
			return CPUHIP_IL_BLOCKED;
		pthread_mutex_lock(&il_lock);
		il.worker = NULL;
		il.state = CPUHIP_IL_DONE;
		atomic_store(&current_worker, NULL);
		pthread_mutex_unlock(&il_lock);
		worker_put(w);
	}
	pthread_mutex_lock(&il_lock);
	st = il.state;
	il.has_plan = false;
	pthread_mutex_unlock(&il_lock);
	return st;
}

CPUHIP_EXPORT void cpuhipTestRefuseNextStreamWait(void)
{
	atomic_store(&refuse_next_wait, true);
}

CPUHIP_EXPORT void cpuhipTestFailNextHostFunc(void)
{
	atomic_store(&fail_next_host_fn, true);
}

/* The same faults armed for the calling thread's calls only (the
 * workload's seeded faults: a failure is then known to belong to the op
 * that thread is running, whatever the other threads call meanwhile).
 * Kept in a table by thread id, not in thread-local storage: a test
 * unloads this library, and LeakSanitizer's exit-time scan of the threads'
 * dynamic TLS then crashed on the freed block (hostile-*-unload). */
#define FAIL_MINE_SLOTS 32
static pthread_mutex_t fail_mine_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int fail_mine_armed; /* slots in use: the fast path's check */
static struct {
	pid_t tid;
	int what;
} fail_mine[FAIL_MINE_SLOTS];

CPUHIP_EXPORT int cpuhipTestFailOnThisThread(int what)
{
	pid_t tid = cpuhip_tid();
	int old = 0, free_slot = -1, i;

	pthread_mutex_lock(&fail_mine_lock);
	for (i = 0; i < FAIL_MINE_SLOTS; i++) {
		if (fail_mine[i].tid == tid)
			break;
		if (!fail_mine[i].tid && free_slot < 0)
			free_slot = i;
	}
	if (i < FAIL_MINE_SLOTS) {
		old = fail_mine[i].what;
		fail_mine[i].what = what;
		if (!what) {
			fail_mine[i].tid = 0;
			atomic_fetch_sub(&fail_mine_armed, 1);
		}
	} else if (what && free_slot >= 0) {
		fail_mine[free_slot].tid = tid;
		fail_mine[free_slot].what = what;
		atomic_fetch_add(&fail_mine_armed, 1);
	} else if (what) {
		fprintf(stderr, "cpuhip: cpuhipTestFailOnThisThread: %d threads have faults "
			"armed already; thread %d's are not armed\n", FAIL_MINE_SLOTS, (int)tid);
	}
	pthread_mutex_unlock(&fail_mine_lock);
	return old;
}

static bool take_mine(int bit)
{
	bool taken = false;
	pid_t tid;

	if (!atomic_load_explicit(&fail_mine_armed, memory_order_relaxed))
		return false;
	tid = cpuhip_tid();
	pthread_mutex_lock(&fail_mine_lock);
	for (int i = 0; i < FAIL_MINE_SLOTS; i++)
		if (fail_mine[i].tid == tid) {
			taken = fail_mine[i].what & bit;
			fail_mine[i].what &= ~bit;
			break;
		}
	pthread_mutex_unlock(&fail_mine_lock);
	return taken;
}

bool cpuhip_take_fail_mine(int bit)
{
	return take_mine(bit);
}

bool cpuhip_take_refuse_wait(void)
{
	if (take_mine(CPUHIP_FAIL_STREAM_WAIT))
		return true;
	return atomic_load_explicit(&refuse_next_wait, memory_order_relaxed) &&
	       atomic_exchange(&refuse_next_wait, false);
}

bool cpuhip_take_fail_event_record(void)
{
	if (take_mine(CPUHIP_FAIL_EVENT_RECORD))
		return true;
	return atomic_load_explicit(&fail_next_event_record, memory_order_relaxed) &&
	       atomic_exchange(&fail_next_event_record, false);
}

CPUHIP_EXPORT void cpuhipTestFailNextEventRecord(void)
{
	atomic_store(&fail_next_event_record, true);
}

bool cpuhip_take_fail_host_fn(void)
{
	if (take_mine(CPUHIP_FAIL_HOST_FN))
		return true;
	return atomic_load_explicit(&fail_next_host_fn, memory_order_relaxed) &&
	       atomic_exchange(&fail_next_host_fn, false);
}

/* ---- interferences named by a string (CPUHIP_INTERLEAVE, or fn NULL) -- */

typedef hipError_t (*begin_fn)(hipStream_t, int);
typedef hipError_t (*end_fn)(hipStream_t, void **);
typedef hipError_t (*stream_fn)(hipStream_t);

/* Through the process's own lookup: a preloaded library's wrappers see
 * the interference as they would see another thread's call. */
static void *sym(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	if (!p) {
		fprintf(stderr, "cpuhip: interleave: %s not found\n", name);
		abort();
	}
	return p;
}

static void report(const char *action, hipError_t e)
{
	fprintf(stderr, "cpuhip: interleave: %s: %s\n", action, cpuhip_error_name(e));
}

static void builtin_action(const char *a, hipStream_t s)
{
	if (strcmp(a, "refuse-wait") == 0) {
		cpuhipTestRefuseNextStreamWait();
	} else if (strcmp(a, "fail-host-fn") == 0) {
		cpuhipTestFailNextHostFunc();
	} else if (strcmp(a, "fail-event-record") == 0) {
		cpuhipTestFailNextEventRecord();
	} else if (strncmp(a, "capture-", 8) == 0 && strcmp(a, "capture-end") != 0 &&
		   strcmp(a, "capture-invalidate") != 0) {
		int mode = strcmp(a, "capture-thread") == 0 ? 1 : strcmp(a, "capture-relaxed") == 0 ? 2 : 0;
		report(a, ((begin_fn)sym("hipStreamBeginCapture"))(s, mode));
	} else if (strcmp(a, "capture-end") == 0) {
		void *g = NULL;
		report(a, ((end_fn)sym("hipStreamEndCapture"))(s, &g));
		if (g)
			((hipError_t(*)(void *))sym("hipGraphDestroy"))(g);
	} else if (strcmp(a, "capture-invalidate") == 0) {
		/* clr Stream::StreamCaptureOngoing: a query of a capturing
		 * stream invalidates its capture. */
		report(a, ((stream_fn)sym("hipStreamQuery"))(s));
	} else if (strcmp(a, "stream-destroy") == 0) {
		report(a, ((stream_fn)sym("hipStreamDestroy"))(s));
	} else if (strcmp(a, "fork") == 0) {
		pid_t pid = fork();
		int status = 0;
		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "cpuhip: interleave: fork: the child failed\n");
			abort();
		}
	} else if (strcmp(a, "exit") == 0) {
		exit(0);
	} else if (strcmp(a, "none") != 0) {
		fprintf(stderr, "cpuhip: interleave: unknown interference '%s'\n", a);
		abort();
	}
}

CPUHIP_EXPORT int cpuhipTestInterleaveAction(const char *entry, unsigned nth, int after,
					     const char *action, unsigned timeout_ms)
{
	int r;

	if (!action || strlen(action) >= sizeof(il.action))
		return -1;
	r = cpuhipTestInterleave(entry, nth, after, NULL, NULL, timeout_ms);
	if (r == 0) {
		pthread_mutex_lock(&il_lock);
		snprintf(il.action, sizeof(il.action), "%s", action);
		pthread_mutex_unlock(&il_lock);
	}
	return r;
}

/* CPUHIP_INTERLEAVE=ENTRY:N:before|after:ACTION, for programs that know
 * nothing of it: every thread's calls are counted from the first one. */
static void parse_env(void)
{
	const char *e = getenv("CPUHIP_INTERLEAVE");
	char entry[64], when[16], action[32];
	unsigned n;

	if (!e || !*e)
		return;
	if (sscanf(e, "%63[^:]:%u:%15[^:]:%31s", entry, &n, when, action) != 4 || n == 0 ||
	    (strcmp(when, "before") != 0 && strcmp(when, "after") != 0)) {
		fprintf(stderr, "cpuhip: CPUHIP_INTERLEAVE=%s is not ENTRY:N:before|after:ACTION\n", e);
		abort();
	}
	pthread_mutex_lock(&il_lock);
	reset_locked();
	il.any_thread = true;
	snprintf(il.entry, sizeof(il.entry), "%s", entry);
	il.nth = n;
	il.after = strcmp(when, "after") == 0;
	snprintf(il.action, sizeof(il.action), "%s", action);
	il.timeout_ms = 5000;
	il.has_plan = true;
	pthread_mutex_unlock(&il_lock);
	atomic_store(&il_on, true);
}
