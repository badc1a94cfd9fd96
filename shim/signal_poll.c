/* SPDX-License-Identifier: MIT */
/*
 * The poll signal mode (HIPEXTSEM_SIGNAL_MODE=poll, docs/signal-modes.md).
 *
 * A signal is one hipStreamWriteValue64(stream, slot, seq) of a sequence
 * number into a 64-bit slot of fine-grained host memory (hipHostMalloc
 * flags 0, as the wait slots: coherent for the GPU's write) instead of a
 * host function: the stream's queue is not held for a host round trip and
 * ROCr's async-events thread is not involved.  One shim thread (at most
 * one per process) polls the slots of the pending signals and runs each
 * signal, on its own thread, once its slot holds its number; it makes no
 * HIP call.
 *
 *  - Records and slots: each record owns one slot for good; a slot holds
 *    the last number written to it and numbers only grow (one process-wide
 *    counter), so a reused slot is never taken for reached.
 *  - Order: records are listed in the order their numbers were taken.  A
 *    scan walks them in that order and, once a record of a stream is not
 *    reached, leaves every later record of that stream for the next scan:
 *    the signals of one stream run in stream order, even when a later
 *    write lands between two reads.  Signals of different streams are not
 *    ordered with each other (as host functions on two streams are not).
 *  - Sleep: with nothing pending the thread waits on a condition variable
 *    without a time-out (an idle process makes no wake-ups); the first
 *    signal after that wakes it.  While signals are pending it sleeps for
 *    a period that adapts to how long they have been pending: a quarter of
 *    the age of the oldest pending signal, at least HIPEXTSEM_POLL_MIN_US
 *    (default 4 us) and at most HIPEXTSEM_POLL_MAX_US (default 1000 us).
 *    So a signal is seen at most max(min, age/4, max) after its stream
 *    reached it, and a signal pending for T costs about
 *    log(T/min)/log(1.25) wake-ups while T is under 4x the maximum, then
 *    one per maximum period.  The thread's timer slack is set to 1 us so
 *    that short periods are kept.
 *  - Fork: the child has no poll thread.  Its first poll signal starts
 *    afresh (new slots from its own runtime, a new thread); the parent's
 *    records are dropped, never touched (a fork handler of this file).
 *  - Exit: an atexit handler waits while the pending signals make progress
 *    (at most 1 s without any), so that signals whose streams finish
 *    during exit reach their sync objects as host functions would, then
 *    stops the thread before the runtime's teardown can free the slot
 *    memory; later signals use the host-function path.
 */
#include "signal_poll.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "log.h"
#include "runtime.h"
#include "sync.h"

/* ---- the mode ------------------------------------------------------- */

atomic_int hx_signal_mode_value = -1;

static enum hx_signal_mode read_mode(void)
{
	const char *v = hx_getenv("HIPEXTSEM_SIGNAL_MODE");

	if (!v || !*v || !strcmp(v, "hostfunc"))
		return HX_SIGNAL_HOSTFUNC;
	if (!strcmp(v, "poll"))
		return HX_SIGNAL_POLL;
	if (!strcmp(v, "sidestream"))
		hx_warn("HIPEXTSEM_SIGNAL_MODE=sidestream is not built in this version; "
			"signals use hostfunc (valid values: hostfunc, poll)");
	else
		hx_warn("HIPEXTSEM_SIGNAL_MODE=%s is not a signal mode; signals use hostfunc "
			"(valid values: hostfunc, poll)", v);
	return HX_SIGNAL_HOSTFUNC;
}

enum hx_signal_mode hx_signal_mode_read(void)
{
	int m = atomic_load_explicit(&hx_signal_mode_value, memory_order_relaxed);

	if (m < 0) {
		int expected = -1;

		m = (int)read_mode();
		if (!atomic_compare_exchange_strong(&hx_signal_mode_value, &expected, m))
			m = expected;
		else if (m == HX_SIGNAL_POLL)
			hx_info("signal mode: poll (hipStreamWriteValue64 + a poll thread)");
	}
	return (enum hx_signal_mode)m;
}

/* ---- state ------------------------------------------------------------ */

#define RECS_PER_CHUNK 256u
#define MAX_BLOCKED 64u

struct poll_rec {
	struct poll_rec *next;
	uint64_t *slot;
	uint64_t seq;
	uintptr_t key; /* the stream, per thread for hipStreamPerThread */
	int64_t submit_ns;
	void (*run)(void *);
	void *arg;
};

static struct {
	/* Held while reached records are run, by the thread or by a flush
	 * (hx_poll_flush): one runner at a time, so that a flush never finds
	 * a reached record taken off the list and not yet run.  Taken before
	 * `lock`. */
	pthread_mutex_t run_lock;
	pthread_mutex_t lock;
	pthread_cond_t wake;    /* the thread's sleep */
	pthread_cond_t progress; /* exit's flush */
	struct poll_rec *head, *tail;
	struct poll_rec *free_recs;
	uint64_t next_seq;
	bool started;
	bool idle;              /* waiting without a time-out */
	bool stop;
	bool stopped;
	bool draining;          /* exit began: no new records, the rest drain */
	bool failed;            /* no slot memory or no thread: not tried again */
	bool atexit_registered;
	pthread_t thread;
	int64_t min_ns, max_ns;
	/* stats, under the lock */
	uint64_t submitted, signaled, npending, wakeups, idle_waits, period_ns, pending_ns_sum;
	uint64_t flushed; /* of `signaled`, run by a flush */
	/* Every record run, counted as it runs (`signaled` counts a batch
	 * once it ended): the exit drain's measure of progress, so that a
	 * long batch of slow ioctls is not taken for a stall. */
	uint64_t ran;
} P = {
	.run_lock = PTHREAD_MUTEX_INITIALIZER,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.next_seq = 1,
};

/* Set by the process's first poll signal: before it, a flush is one load. */
static atomic_bool poll_used;

static __thread char per_thread_key;

static uintptr_t stream_key(hipStream_t stream)
{
	if (stream == hipStreamPerThread)
		return (uintptr_t)&per_thread_key;
	return (uintptr_t)stream;
}

static void cond_init_monotonic(pthread_cond_t *c)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
}

static void wait_until(pthread_cond_t *c, int64_t when_ns)
{
	struct timespec ts = { .tv_sec = when_ns / 1000000000, .tv_nsec = when_ns % 1000000000 };

	pthread_cond_timedwait(c, &P.lock, &ts);
}

/* A forked child: the parent's thread does not exist here and its records
 * and slots belong to the parent's streams and runtime.  Dropped, not
 * walked (another thread may have been changing them at the fork); the
 * child's first poll signal starts afresh.  Registered from the library's
 * constructor, never from a call (pthread_atfork takes the lock fork()
 * holds while it runs the handlers, one of which waits for the capture
 * guard that calls hold). */
static void poll_fork_child(void)
{
	pthread_mutex_init(&P.run_lock, NULL);
	pthread_mutex_init(&P.lock, NULL);
	P.head = P.tail = P.free_recs = NULL;
	P.started = P.idle = P.stop = P.stopped = P.failed = P.draining = false;
	P.npending = P.submitted = P.signaled = P.wakeups = P.idle_waits = 0;
	P.pending_ns_sum = P.period_ns = P.flushed = P.ran = 0;
}

__attribute__((constructor)) static void poll_register_fork(void)
{
	pthread_atfork(NULL, NULL, poll_fork_child);
}

/* ---- the thread ------------------------------------------------------- */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Moves every reached record that no earlier record of its stream holds
 * back to *done, in order.  Returns the age base of the oldest one left. */
static void scan_locked(struct poll_rec **done, struct poll_rec ***done_tail)
{
	uintptr_t blocked_local[MAX_BLOCKED], *blocked = blocked_local;
	unsigned nblocked = 0, cap = MAX_BLOCKED;
	struct poll_rec **pp = &P.head, *r;

	P.tail = NULL;
	while ((r = *pp)) {
		bool held = false;

		for (unsigned i = 0; i < nblocked && !held; i++)
			held = blocked[i] == r->key;
		/* More streams held than the table keeps: the records left
		 * on the list before this one are exactly the held ones (the
		 * reached were taken off), so one of its stream among them is
		 * the answer.  Holding every record once the table is full
		 * would hold a reached signal that the held streams wait for:
		 * a deadlock. */
		if (!held && nblocked == cap)
			for (struct poll_rec *t = P.head; t != r && !held; t = t->next)
				held = t->key == r->key;
		if (!held &&
		    (int64_t)(__atomic_load_n(r->slot, __ATOMIC_ACQUIRE) - r->seq) >= 0) {
			*pp = r->next;
			r->next = NULL;
			**done_tail = r;
			*done_tail = &r->next;
			continue;
		}
		if (!held && nblocked == cap) {
			/* More held streams: a larger table, so that the walk
			 * above stays the answer of a failed allocation only. */
			uintptr_t *more = malloc(2 * cap * sizeof(*more));

			if (more) {
				memcpy(more, blocked, nblocked * sizeof(*more));
				if (blocked != blocked_local)
					free(blocked);
				blocked = more;
				cap *= 2;
			}
		}
		if (!held && nblocked < cap)
			blocked[nblocked++] = r->key;
		P.tail = r;
		pp = &r->next;
	}
	if (blocked != blocked_local)
		free(blocked);
}

/* With run_lock and the lock held: runs every reached record (the lock
 * dropped meanwhile, run_lock kept, so that the thread and a flush take
 * turns) and gives the records back.  Returns how many ran. */
static uint64_t run_reached_locked(void)
{
	struct poll_rec *done = NULL, **done_tail = &done;
	uint64_t n = 0, pend_sum = 0;
	int64_t now;

	scan_locked(&done, &done_tail);
	if (!done)
		return 0;
	pthread_mutex_unlock(&P.lock);
	now = hx_now_ns();
	for (struct poll_rec *r = done; r; r = r->next) {
		pend_sum += (uint64_t)(now - r->submit_ns);
		r->run(r->arg);
		n++;
		__atomic_add_fetch(&P.ran, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_lock(&P.lock);
	*done_tail = P.free_recs;
	P.free_recs = done;
	P.signaled += n;
	P.npending -= n;
	P.pending_ns_sum += pend_sum;
	pthread_cond_broadcast(&P.progress);
	return n;
}

static void *poll_thread(void *unused)
{
	int64_t period = 0;

	(void)unused;
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	pthread_mutex_lock(&P.lock);
	for (;;) {
		int64_t now;

		if (P.stop)
			break;
		if (!P.head) {
			P.idle = true;
			P.idle_waits++;
			pthread_cond_broadcast(&P.progress);
			pthread_cond_wait(&P.wake, &P.lock);
			P.idle = false;
			P.wakeups++;
			period = 0;
			continue;
		}
		pthread_mutex_unlock(&P.lock);
		pthread_mutex_lock(&P.run_lock);
		pthread_mutex_lock(&P.lock);
		(void)run_reached_locked();
		pthread_mutex_unlock(&P.run_lock);
		/* A flush may have taken every record meanwhile. */
		if (!P.head || P.stop)
			continue;
		now = hx_now_ns();
		period = clamp64((now - P.head->submit_ns) / 4, P.min_ns, P.max_ns);
		P.period_ns = (uint64_t)period;
		wait_until(&P.wake, now + period);
		P.wakeups++;
	}
	P.stopped = true;
	pthread_cond_broadcast(&P.progress);
	pthread_mutex_unlock(&P.lock);
	return NULL;
}

/* ---- exit ------------------------------------------------------------- */

static void poll_at_exit(void)
{
	struct hx_poll_stats st;
	uint64_t left, last_done;
	int64_t since;

	pthread_mutex_lock(&P.lock);
	if (!P.started || P.stopped) {
		pthread_mutex_unlock(&P.lock);
		return;
	}
	/* Signals whose streams finish during exit still reach their sync
	 * objects; give up after 1 s without progress.  Only the signals
	 * pending now: from here on a signal takes the host-function path
	 * (hx_poll_signal), so that threads that go on signaling during
	 * exit cannot keep it waiting for ever; those host functions issue
	 * the reached records of their streams first (hx_poll_flush). */
	P.draining = true;
	last_done = __atomic_load_n(&P.ran, __ATOMIC_RELAXED);
	since = hx_now_ns();
	while (P.head && hx_now_ns() - since < 1000000000LL) {
		uint64_t ran;

		wait_until(&P.progress, hx_now_ns() + 50000000LL);
		ran = __atomic_load_n(&P.ran, __ATOMIC_RELAXED);
		if (ran != last_done) {
			last_done = ran;
			since = hx_now_ns();
		}
	}
	pthread_mutex_unlock(&P.lock);
	hx_poll_get_stats(&st); /* the thread's CPU, while it runs */
	pthread_mutex_lock(&P.lock);
	P.stop = true;
	pthread_cond_signal(&P.wake);
	/* The thread stops after the batch it is running: wait while that
	 * batch makes progress, as above. */
	last_done = __atomic_load_n(&P.ran, __ATOMIC_RELAXED);
	since = hx_now_ns();
	while (!P.stopped && hx_now_ns() - since < 1000000000LL) {
		uint64_t ran;

		wait_until(&P.progress, hx_now_ns() + 10000000LL);
		ran = __atomic_load_n(&P.ran, __ATOMIC_RELAXED);
		if (ran != last_done) {
			last_done = ran;
			since = hx_now_ns();
		}
	}
	/* Pending: not run, whether on the list or in a batch cut off. */
	left = P.npending - (__atomic_load_n(&P.ran, __ATOMIC_RELAXED) - P.signaled);
	pthread_mutex_unlock(&P.lock);
	if (left)
		hx_warn("process exit with %llu poll signal(s) whose streams did not reach them "
			"within 1 s: not signaled", (unsigned long long)left);
	hx_info("signal poll thread: %llu signal(s), %llu wake-up(s) (%.1f per signal), "
		"CPU %.0f us (%.2f us per signal), mean time pending %.1f us",
		(unsigned long long)st.signaled, (unsigned long long)st.wakeups,
		st.signaled ? (double)st.wakeups / (double)st.signaled : 0.0,
		st.cpu_ns >= 0 ? st.cpu_ns / 1e3 : -1.0,
		st.signaled && st.cpu_ns >= 0 ? st.cpu_ns / 1e3 / (double)st.signaled : 0.0,
		st.signaled ? st.pending_ns_sum / 1e3 / (double)st.signaled : 0.0);
}

/* ---- submit ----------------------------------------------------------- */

static bool grow_locked(void)
{
	struct poll_rec *recs = calloc(RECS_PER_CHUNK, sizeof(*recs));
	void *mem = NULL;
	hipError_t err;
	int mode;

	if (!recs)
		return false;
	mode = hx_runtime_capture_relaxed();
	err = hx_rt.HostMalloc(&mem, RECS_PER_CHUNK * sizeof(uint64_t), 0);
	hx_runtime_capture_restore(mode);
	if (err != hipSuccess || !mem) {
		free(recs);
		hx_err("hipHostMalloc for poll signal slots failed (error %d); signals use "
		       "host functions", (int)err);
		return false;
	}
	memset(mem, 0, RECS_PER_CHUNK * sizeof(uint64_t));
	for (unsigned i = 0; i < RECS_PER_CHUNK; i++) {
		recs[i].slot = (uint64_t *)mem + i;
		recs[i].next = P.free_recs;
		P.free_recs = &recs[i];
	}
	return true;
}

static bool start_locked(void)
{
	pthread_attr_t attr;
	int ret;

	P.min_ns = hx_getenv_long("HIPEXTSEM_POLL_MIN_US", 4, 1, 100000) * 1000;
	P.max_ns = hx_getenv_long("HIPEXTSEM_POLL_MAX_US", 1000, 1, 1000000) * 1000;
	if (P.max_ns < P.min_ns)
		P.max_ns = P.min_ns;
	cond_init_monotonic(&P.wake);
	cond_init_monotonic(&P.progress);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	ret = pthread_create(&P.thread, &attr, poll_thread, NULL);
	pthread_attr_destroy(&attr);
	if (ret) {
		hx_err("cannot start the signal poll thread (%s); signals use host functions",
		       strerror(ret));
		return false;
	}
	pthread_setname_np(P.thread, "hxsem-poll");
	P.started = true;
	if (!P.atexit_registered) {
		atexit(poll_at_exit);
		P.atexit_registered = true;
	}
	return true;
}

hipError_t hx_poll_signal(hipStream_t stream, void (*run)(void *), void *arg)
{
	struct poll_rec *r;
	bool wake;
	uint64_t seq;
	hipError_t err;

	if (!hx_rt.StreamWriteValue64)
		return HX_POLL_UNAVAILABLE;
	pthread_mutex_lock(&P.lock);
	if (P.failed || P.stop || P.draining ||
	    (!P.free_recs && !grow_locked()) || (!P.started && !start_locked())) {
		if (!P.stop && !P.draining)
			P.failed = true;
		pthread_mutex_unlock(&P.lock);
		return HX_POLL_UNAVAILABLE;
	}
	r = P.free_recs;
	P.free_recs = r->next;
	r->next = NULL;
	seq = r->seq = P.next_seq++;
	r->key = stream_key(stream);
	r->run = run;
	r->arg = arg;
	r->submit_ns = hx_now_ns();
	if (P.tail)
		P.tail->next = r;
	else
		P.head = r;
	P.tail = r;
	P.npending++;
	P.submitted++;
	atomic_store_explicit(&poll_used, true, memory_order_release);
	wake = P.idle;
	P.idle = false; /* one wake-up is enough */
	pthread_mutex_unlock(&P.lock);

	/* The write is ordered after all earlier work of the stream: the
	 * number in the slot means the stream got there. */
	err = hx_rt.StreamWriteValue64(stream, r->slot, seq, 0);
	if (err) {
		struct poll_rec **pp;

		pthread_mutex_lock(&P.lock);
		for (pp = &P.head; *pp && *pp != r; pp = &(*pp)->next)
			;
		if (*pp) {
			*pp = r->next;
			if (P.tail == r) {
				P.tail = NULL;
				for (struct poll_rec *t = P.head; t; t = t->next)
					P.tail = t;
			}
			r->next = P.free_recs;
			P.free_recs = r;
			P.npending--;
			P.submitted--;
		}
		pthread_mutex_unlock(&P.lock);
	}
	if (wake)
		pthread_cond_signal(&P.wake);
	return err;
}

/* signal_poll.h.  Called by every signal that the runtime's callback
 * thread runs (a host-function signal, a graph's signal node, a captured
 * signal): the stream got there, so each earlier write of that stream has
 * landed, and its record is run here, before the caller's own ioctl,
 * rather than at the poll thread's next look. */
void hx_poll_flush(void)
{
	if (!atomic_load_explicit(&poll_used, memory_order_acquire))
		return;
	pthread_mutex_lock(&P.run_lock);
	pthread_mutex_lock(&P.lock);
	P.flushed += run_reached_locked();
	pthread_mutex_unlock(&P.lock);
	pthread_mutex_unlock(&P.run_lock);
}

void hx_poll_get_stats(struct hx_poll_stats *st)
{
	clockid_t cid;
	struct timespec ts;
	bool running;

	pthread_mutex_lock(&P.lock);
	running = P.started && !P.stopped;
	*st = (struct hx_poll_stats){
		.running = running,
		.submitted = P.submitted,
		.signaled = P.signaled,
		.pending = P.npending,
		.wakeups = P.wakeups,
		.idle_waits = P.idle_waits,
		.cpu_ns = -1,
		.period_ns = P.period_ns,
		.pending_ns_sum = P.pending_ns_sum,
		.flushed = P.flushed,
	};
	if (running && !pthread_getcpuclockid(P.thread, &cid) && !clock_gettime(cid, &ts))
		st->cpu_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	pthread_mutex_unlock(&P.lock);
}
