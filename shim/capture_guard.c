/* SPDX-License-Identifier: MIT */
/*
 * What decides whether a signal, a wait or a graph launch belongs to a
 * stream capture (capture_guard.h): the capture guard, which keeps every
 * capture's begin and end out of a call's window between its decision and
 * its enqueue, and the count of live captures, which lets a call skip the
 * runtime's question while no capture is going.
 */
#include "capture_guard.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "hot.h"
#include "log.h"
#include "noise.h"
#include "runtime.h"

/* ---- the capture guard -------------------------------------------------- */

/*
 * An asymmetric reader-writer guard: the signal and wait paths (readers)
 * pay two plain stores and a load on a slot of their own thread, no atomic
 * read-modify-write and no shared cache line; a capture's begin or end
 * (writers, rare) pays a process-wide barrier and a scan of the slots.
 *
 * Reader: sets its slot's `active`, then reads `writer`; if a writer is
 * there it clears `active`, waits for the writer's mutex and tries again.
 * Writer: takes the mutex, sets `writer`, then waits until no slot is
 * active.  Each side's store must be seen before its load (Dekker): the
 * writer's membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) makes every
 * running thread of the process pass a full barrier, which stands for the
 * readers' own fence (a compiler barrier then suffices there); where the
 * kernel has no such command (before 4.14) or under ThreadSanitizer, which
 * does not know it, readers use a full fence.  The reader's release store
 * of `active = 0` publishes what it enqueued to the writer that sees it.
 *
 * Slots are made at a thread's first guarded call, never freed: a thread
 * that ends gives its slot up (a pthread key) for the next thread to take.
 */
struct guard_slot {
	atomic_int active;
	atomic_bool taken;
	struct guard_slot *next; /* immutable once published */
};

static _Atomic(struct guard_slot *) guard_slots;
static atomic_bool guard_writer;
/* Calls that found a writer there and wait for it (hx_capture_guard_lock). */
static atomic_uint guard_waiting;
static pthread_mutex_t guard_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static pthread_key_t guard_key;
static bool guard_key_ok;
/* Set under guard_once; cleared for good by a writer whose membarrier
 * fails (a seccomp filter installed later, say). */
static atomic_bool guard_membarrier;
static __thread struct guard_slot *tls_slot __attribute__((tls_model("initial-exec")));
static __thread bool tls_guard __attribute__((tls_model("initial-exec")));

#ifndef MEMBARRIER_CMD_PRIVATE_EXPEDITED
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED (1 << 3)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED (1 << 4)
#endif
#if defined(__SANITIZE_THREAD__)
#define HX_GUARD_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HX_GUARD_TSAN 1
#endif
#endif

static void guard_slot_release(void *p)
{
	struct guard_slot *slot = p;

	atomic_store_explicit(&slot->active, 0, memory_order_release);
	/* The destructor runs on the slot's own thread: a guarded call from
	 * a later destructor of this exiting thread takes a slot afresh
	 * instead of one another thread may have taken by then. */
	if (tls_slot == slot)
		tls_slot = NULL;
	atomic_store_explicit(&slot->taken, false, memory_order_release);
}

static void guard_init(void)
{
#ifndef HX_GUARD_TSAN
	atomic_init(&guard_membarrier,
		    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0);
#endif
	guard_key_ok = pthread_key_create(&guard_key, guard_slot_release) == 0;
}

/* The calling thread's slot: a free one taken, or a new one published. */
static __attribute__((noinline, cold)) struct guard_slot *guard_slot_get(void)
{
	struct guard_slot *slot;

	pthread_once(&guard_once, guard_init);
	for (slot = atomic_load_explicit(&guard_slots, memory_order_acquire); slot;
	     slot = slot->next) {
		bool free_ = false;

		if (atomic_compare_exchange_strong(&slot->taken, &free_, true))
			break;
	}
	if (!slot) {
		slot = calloc(1, sizeof(*slot));
		if (!slot)
			return NULL;
		atomic_init(&slot->taken, true);
		slot->next = atomic_load_explicit(&guard_slots, memory_order_relaxed);
		while (!atomic_compare_exchange_weak_explicit(&guard_slots, &slot->next, slot,
							      memory_order_release,
							      memory_order_relaxed))
			;
	}
	/* Without the key the slot stays taken when the thread ends. */
	if (guard_key_ok)
		pthread_setspecific(guard_key, slot);
	tls_slot = slot;
	return slot;
}

/* Sets the slot active, then reads whether a writer is there (the Dekker
 * pair of hx_capture_guard_lock's store and scan). */
static inline bool guard_announce(struct guard_slot *slot)
{
	atomic_store_explicit(&slot->active, 1, memory_order_relaxed);
	if (atomic_load_explicit(&guard_membarrier, memory_order_relaxed))
		atomic_signal_fence(memory_order_seq_cst);
	else
		atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(&guard_writer, memory_order_acquire);
}

/* A writer is there: step back, wait for its mutex, try again.  Counted
 * in guard_waiting, which a writer that lets calls through looks at. */
static __attribute__((noinline, cold)) void guard_enter_wait(struct guard_slot *slot)
{
	atomic_fetch_add_explicit(&guard_waiting, 1, memory_order_relaxed);
	do {
		atomic_store_explicit(&slot->active, 0, memory_order_release);
		pthread_mutex_lock(&guard_mutex);
		pthread_mutex_unlock(&guard_mutex);
	} while (guard_announce(slot));
	atomic_fetch_sub_explicit(&guard_waiting, 1, memory_order_relaxed);
}

HX_HOT_PATH
void hx_capture_guard_enter(void)
{
	struct guard_slot *slot = tls_slot;

	if (tls_guard)
		return;
	if (__builtin_expect(!slot, 0)) {
		slot = guard_slot_get();
		if (!slot) {
			/* Out of memory: the writers' mutex stands in. */
			pthread_mutex_lock(&guard_mutex);
			pthread_mutex_unlock(&guard_mutex);
			return;
		}
	}
	if (__builtin_expect(guard_announce(slot), 0))
		guard_enter_wait(slot);
	tls_guard = true;
	hx_noise();
}

HX_HOT_PATH
void hx_capture_guard_leave(void)
{
	if (!tls_guard)
		return;
	tls_guard = false;
	atomic_store_explicit(&tls_slot->active, 0, memory_order_release);
}

/* How long a writer waits for the calls in flight before it lets new calls
 * through for a moment (see hx_capture_guard_lock): 10 ms, doubled at each
 * try up to 320 ms, so that calls that are merely slow (an emulator, a
 * loaded host) do not hold a writer off for good. */
#define HX_GUARD_WRITER_PATIENCE_NS (10 * 1000000LL)
#define HX_GUARD_WRITER_PATIENCE_MAX_SHIFT 5

static int64_t guard_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Raises `writer` and waits for every slot to be inactive.  False if one
 * stayed active past the writer's patience (`writer` is still raised). */
static bool guard_writer_drain(unsigned tries)
{
	unsigned shift = tries < HX_GUARD_WRITER_PATIENCE_MAX_SHIFT ? tries
								   : HX_GUARD_WRITER_PATIENCE_MAX_SHIFT;
	int64_t give_up = guard_now_ns() + (HX_GUARD_WRITER_PATIENCE_NS << shift);

	atomic_store_explicit(&guard_writer, true, memory_order_seq_cst);
	if (atomic_load_explicit(&guard_membarrier, memory_order_relaxed) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
		/* Readers fence for themselves from their next entry on.  One
		 * that entered without a fence just before may have its
		 * `active` store still buffered: its enqueue takes far longer
		 * than a store buffer holds a store, and the pause lets it
		 * drain before the scan looks. */
		atomic_store_explicit(&guard_membarrier, false, memory_order_seq_cst);
		hx_warn("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed now (%m) after "
			"working at start-up: the capture guard's readers use a full fence from "
			"here on");
		usleep(2000);
	}
	atomic_thread_fence(memory_order_seq_cst);
	for (struct guard_slot *slot = atomic_load_explicit(&guard_slots, memory_order_acquire);
	     slot; slot = slot->next) {
		/* A call in flight: it enqueues and leaves. */
		unsigned us = 50;
		while (atomic_load_explicit(&slot->active, memory_order_acquire)) {
			if (guard_now_ns() > give_up)
				return false;
			usleep(us);
			if (us < 2000)
				us *= 2;
		}
	}
	return true;
}

/*
 * A call can stay in flight for long: one blocked inside the runtime, by
 * full rings say, behind a stream wait that only a signal can release.  If
 * the writer kept `writer` raised all that time, every new call would
 * queue behind it, the signal that would unblock the first call among
 * them: the process would hang where it does not without the shim.  So a
 * writer that has waited past its patience lowers `writer` and gives the
 * mutex up for a moment, lets the calls waiting for it through (they
 * decide before the capture begins, which is right: it has not), and
 * tries again; it returns only once it has seen every slot inactive with
 * `writer` raised.  Another writer may go first meanwhile: each returns
 * exclusive.
 */
bool hx_capture_guard_lock(void)
{
	unsigned tries = 0;

	if (tls_guard)
		return false;
	pthread_once(&guard_once, guard_init);
	pthread_mutex_lock(&guard_mutex);
	while (!guard_writer_drain(tries)) {
		atomic_store_explicit(&guard_writer, false, memory_order_release);
		pthread_mutex_unlock(&guard_mutex);
		if (++tries == 7)
			hx_warn("a capture's begin or end (or a fork) has waited about a second for "
				"a semaphore call or graph launch still inside the HIP runtime "
				"(blocked there?); other calls go on meanwhile");
		/* Until the calls that queued behind it are through (each has
		 * set its slot active by then), 5 ms at most. */
		for (int i = 0; i < 20 && atomic_load_explicit(&guard_waiting, memory_order_relaxed);
		     i++)
			usleep(250);
		pthread_mutex_lock(&guard_mutex);
	}
	hx_noise();
	return true;
}

void hx_capture_guard_unlock(void)
{
	atomic_store_explicit(&guard_writer, false, memory_order_release);
	pthread_mutex_unlock(&guard_mutex);
}

/* ---- the live captures ------------------------------------------------- */

/*
 * hx_captures_live counts the captures the shim saw begin and has not seen
 * end, each keyed by its origin stream (hipStreamPerThread, or the null
 * stream of a _spt call, with the calling thread).  A capture is over when
 * its stream no longer reports one after an end, whatever the end
 * answered: clr answers hipErrorStreamCaptureInvalidated to every end of
 * an invalidated capture that it leaves in place, so counting answers would
 * count one capture's end twice and hide another live capture.  An end of
 * a capture the shim never saw begin (a runtime call it does not wrap)
 * counts nothing.  Written under the capture guard's writer lock and
 * capture_lock; the count is read without either.
 */
atomic_int hx_captures_live;

struct capture_key {
	hipStream_t stream;
	pid_t tid; /* per-thread streams only, else 0 */
};

static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static struct capture_key *captures;
static size_t ncaptures, captures_cap;

static struct capture_key capture_key(hipStream_t stream, bool spt)
{
	struct capture_key k = { .stream = stream, .tid = 0 };

	if (stream == hipStreamPerThread || (spt && !stream)) {
		k.stream = hipStreamPerThread;
		k.tid = (pid_t)syscall(SYS_gettid);
	}
	return k;
}

static ssize_t capture_find_locked(struct capture_key k)
{
	for (size_t i = 0; i < ncaptures; i++)
		if (captures[i].stream == k.stream && captures[i].tid == k.tid)
			return (ssize_t)i;
	return -1;
}

/* After a successful begin: the capture is the shim's to count (counted
 * already, before it could start).  False if it could not be recorded. */
static bool capture_began(struct capture_key k)
{
	bool ok = true;

	pthread_mutex_lock(&capture_lock);
	if (capture_find_locked(k) >= 0) {
		/* The runtime let a second capture begin on a stream it still
		 * reports: counted once. */
		atomic_fetch_sub_explicit(&hx_captures_live, 1, memory_order_acq_rel);
	} else if (ncaptures == captures_cap) {
		size_t cap = captures_cap ? 2 * captures_cap : 8;
		struct capture_key *n = realloc(captures, cap * sizeof(*n));

		if (n) {
			captures = n;
			captures_cap = cap;
			captures[ncaptures++] = k;
		} else {
			ok = false;
		}
	} else {
		captures[ncaptures++] = k;
	}
	pthread_mutex_unlock(&capture_lock);
	return ok;
}

/* After an end: uncounted if the stream reports no capture now. */
static void capture_check_ended(struct capture_key k, hipStream_t stream)
{
	bool over = hx_runtime_capture_status(stream) == HX_CAPTURE_STATUS_NONE;
	ssize_t i;

	if (!over)
		return;
	pthread_mutex_lock(&capture_lock);
	i = capture_find_locked(k);
	if (i >= 0) {
		captures[i] = captures[--ncaptures];
		atomic_fetch_sub_explicit(&hx_captures_live, 1, memory_order_acq_rel);
	}
	pthread_mutex_unlock(&capture_lock);
}

/* Counted before the runtime's begin, so that no signal or wait decides
 * "no capture" while one starts; recorded or uncounted after it. */
static hipError_t capture_begin_done(hipError_t err, struct capture_key k, const char *what)
{
	if (err) {
		atomic_fetch_sub_explicit(&hx_captures_live, 1, memory_order_acq_rel);
		return err;
	}
	if (!capture_began(k))
		/* Still counted: the signal and wait paths ask the stream
		 * itself while any count is live (slower, never wrong). */
		hx_warn("%s: out of memory recording the capture of stream %p; it stays counted",
			what, (void *)k.stream);
	return err;
}

void hx_capture_count_begin(void)
{
	atomic_fetch_add_explicit(&hx_captures_live, 1, memory_order_acq_rel);
}

hipError_t hx_capture_begin_done(hipError_t err, hipStream_t stream, bool spt, const char *what)
{
	return capture_begin_done(err, capture_key(stream, spt), what);
}

void hx_capture_end_check(hipStream_t stream, bool spt)
{
	capture_check_ended(capture_key(stream, spt), spt && !stream ? hipStreamPerThread : stream);
}
