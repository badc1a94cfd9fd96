/* SPDX-License-Identifier: MIT */
/*
 * hipWaitExternalSemaphoresAsync: one hipStreamWaitValue64 per call on a
 * pinned 64-bit slot; the waiter thread writes the slot once every
 * semaphore of the call has reached its value, so the runtime's threads
 * never block on a syncobj.  Here: the wait paths and their fallbacks
 * (host-memory slots, signal-memory slots, a blocking host wait), the
 * pending-wait list with its stuck-wait watchdog, and the release of
 * pending waits at exit.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture_guard.h"
#include "exit_release.h"
#include "wait_slots.h"
#include "handles.h"
#include "hot.h"
#include "log.h"
#include "ops.h"
#include "registry.h"
#include "runtime.h"
#include "sem.h"
#include "streams.h"
#include "trace.h"
#include "waiter.h"

/* What the waiter calls back (waiter.h): completions, the stuck-wait
 * watchdog, and the release of a forgotten semaphore. */
static void entry_done(struct hx_wait_entry *we);
static void op_link_locked(struct hx_wait_op *op);
static void op_unlink_locked(struct hx_wait_op *op);
static int64_t watchdog(int64_t now);

static const struct hx_waiter_ops waiter_ops = {
	.entry_done = entry_done,
	.watchdog = watchdog,
	.release = hx_reg_release_waitable,
};

/* ---- exit -------------------------------------------------------------- */

/*
 * How long exit waits for the registry lock.  No section under the lock
 * blocks or calls the runtime, but a thread can be preempted inside one
 * (a loaded machine; a TCG VM stalls threads for 100 ms and more), and
 * exit must not go on without releasing the waits: the runtime's teardown
 * would then hang on a stream a wait holds.  A wait past the first bound
 * is logged; only a lock held past the second is given up on, as an error.
 */
#define EXIT_LOCK_WARN_MS 100
#define EXIT_LOCK_GIVE_UP_MS 5000

/* Takes the registry lock for at_exit; *waited_ms: how long that took
 * (-1: given up).  Once given up, later calls only try.  Polls with
 * trylock every millisecond rather than pthread_mutex_clocklock: exit is
 * not a hot path, the bound is on CLOCK_MONOTONIC either way, and the
 * sanitizers' lock tracking (ThreadSanitizer's in GCC 12) does not see a
 * clocklock, so the unlock that follows would be reported as one of a
 * mutex never locked. */
static bool exit_lock(int64_t *waited_ms)
{
	static bool gave_up;
	const struct timespec tick = { 0, 1000000 };
	struct timespec t0, now;
	int64_t ms;

	*waited_ms = 0;
	if (pthread_mutex_trylock(&hx_reg.lock) == 0)
		return true;
	if (__atomic_load_n(&gave_up, __ATOMIC_RELAXED)) {
		*waited_ms = -1;
		return false;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		nanosleep(&tick, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (pthread_mutex_trylock(&hx_reg.lock) == 0)
			break;
		if (ms >= EXIT_LOCK_GIVE_UP_MS) {
			__atomic_store_n(&gave_up, true, __ATOMIC_RELAXED);
			*waited_ms = -1;
			return false;
		}
	}
	*waited_ms = ms;
	return true;
}

/* Runs before the runtime's own exit-time teardown (it was registered
 * later): a stream held by a wait that can no longer be satisfied would
 * otherwise hang the runtime's destructors.  Pending waits are released. */
static void exit_release(bool final)
{
	static bool logged; /* under the registry lock */
	int64_t waited_ms;
	unsigned n = 0;
	bool first;

	if (!exit_lock(&waited_ms)) {
		hx_err("process exit: another thread has held the shim's registry lock for %d ms "
		       "or more; pending waits are NOT released, and the runtime's exit-time "
		       "teardown may hang on a stream one of them holds", EXIT_LOCK_GIVE_UP_MS);
		return;
	}
	/* Only the final release makes later waits pass at once: the
	 * runtime's teardown follows it.  Waits enqueued between the two
	 * releases (by the application's own thread_local destructors and
	 * atexit handlers) wait for their semaphores as any wait does. */
	if (final)
		hx_reg.exiting = true;
	for (struct hx_wait_op *op = hx_reg.ops; op; op = op->all_next) {
		/* A thread blocked in a host-side wait holds no stream. */
		if (!op->slot)
			continue;
		hx_slot_release(op->slot, op->gen);
		n++;
	}
	first = n && !logged;
	if (n)
		logged = true;
	pthread_mutex_unlock(&hx_reg.lock);
	if (waited_ms >= EXIT_LOCK_WARN_MS)
		hx_warn("process exit waited %lld ms for another thread to leave the shim's "
			"registry lock", (long long)waited_ms);
	if (first)
		hx_warn("process exit with %u pending wait(s): released so the runtime can "
			"drain its streams", n);
}

/* The atexit handler (registered at the first stream wait, so after the
 * runtime's own exit-time registrations: it runs before them). */
static void at_exit(void)
{
	exit_release(true);
}

/* The exit hook's release (streams.c), first thing in exit(): the waits
 * pending then, before the runtime's thread_local teardown of the main
 * thread's per-thread stream. */
static void exit_release_hook(void)
{
	static atomic_bool ran;

	/* Once: the hook is registered again after each thread_local
	 * registration of the main thread (streams.c), so it may be several
	 * entries of that thread's destructor list.  A later entry runs
	 * after destructors of the program's that may have enqueued waits
	 * of their own, which must wait for their semaphores. */
	if (atomic_exchange(&ran, true))
		return;
	exit_release(false);
}

/* The same release, earlier: before the runtime's thread_local teardown of
 * the main thread's per-thread stream in exit() (streams.c), whichever
 * thread waited and on whichever stream.  Called at every signal and wait
 * (one thread-local load after the first), outside the capture guard and
 * every lock of the shim's: registering a thread_local destructor takes
 * glibc's loader lock, which a library constructor run by dlopen holds
 * while it may fork (and the shim's fork handler takes the guard). */
void hx_op_exit_release_first(const char *what)
{
	/* A signal, a wait or a launch skips hx_reg_init once set up: the
	 * thread's runtime state is made here, before the guard (runtime.h). */
	hx_runtime_thread_prepare();
	hx_stream_exit_release_setup(what, exit_release_hook);
}


static void op_release(struct hx_wait_op *op)
{
	struct hx_host_block *hb = op->host;

	pthread_mutex_lock(&hx_reg.lock);
	op_unlink_locked(op);
	if (op->slot) {
		/* After exit's release (hx_reg.exiting) every slot was written
		 * already, and the runtime's teardown, which runs next, may
		 * free the slots' memory: the waiter writes no more. */
		if (!hx_reg.exiting)
			hx_slot_release(op->slot, op->gen);
		hx_slot_free_locked(op->slot_kind, op->slot_index, op->slot, op->gen);
	}
	pthread_mutex_unlock(&hx_reg.lock);
	if (!hb) {
		hx_reg_op_free(HX_OP_WAIT, op);
		return;
	}
	/* The blocked caller frees the op once woken; `hb` is on its stack
	 * and is not touched after the unlock. */
	pthread_mutex_lock(&hb->lock);
	hb->done = true;
	pthread_cond_signal(&hb->cond);
	pthread_mutex_unlock(&hb->lock);
}

static void entry_done(struct hx_wait_entry *we)
{
	struct hx_sem_wait *e = container_of(we, struct hx_sem_wait, w);
	struct hx_wait_op *op = e->op;
	struct hx_sem *sem = e->sem;

	HX_TRACE(wait, hx_reg_handle(sem), e->w.value, op->stream, op->enqueued_ns, hx_now_ns());
	/* Under the lock: the watchdog reads entries that are not done, and
	 * relies on their semaphore reference still being held. */
	pthread_mutex_lock(&hx_reg.lock);
	e->done = true;
	pthread_mutex_unlock(&hx_reg.lock);
	hx_sem_unref(sem);
	if (atomic_fetch_sub_explicit(&op->remaining, 1, memory_order_acq_rel) == 1)
		op_release(op);
}

static const char *wait_path_name(enum wait_path path)
{
	switch (path) {
	case WAIT_PATH_STREAM_VALUE:
		return "hipStreamWaitValue64 on host memory, released by the waiter thread";
	case WAIT_PATH_SIGNAL_MEMORY:
		return "hipStreamWaitValue64 on signal memory, released by the waiter thread";
	case WAIT_PATH_HOST:
		return "the calling thread blocks until the semaphores are signaled";
	default:
		return "not chosen yet";
	}
}

/*
 * The first choice is always the stream wait, whatever the device reports
 * for hipDeviceAttributeCanUseStreamWaitValue: clr sets that attribute from
 * aqlBarrierValue_ (whether the CP BARRIER_VALUE packet is used), which
 * releases before ROCm 5.5 left at 0 on every GPU but gfx900/904/908/90a,
 * while hipStreamWaitValue64 works on all of them (a blit kernel waits
 * instead).  The value is read and reported, never acted upon.
 */
/* The attribute, read before the registry lock is taken: no runtime call
 * is made under it (at_exit waits for it). */
static void read_wait_value_attr(int *hdev, int *v)
{
	*hdev = 0;
	*v = -1;
	if (hx_rt.DeviceGetAttribute && hx_rt.GetDevice(hdev) == hipSuccess &&
	    hx_rt.DeviceGetAttribute(v, hipDeviceAttributeCanUseStreamWaitValue, *hdev) !=
		    hipSuccess)
		*v = -1;
}

static enum wait_path choose_wait_path_locked(int hdev, int v)
{
	if (hx_reg.wait_path != WAIT_PATH_UNKNOWN)
		return hx_reg.wait_path;
	hx_reg.wait_value_attr = v;
	if (hx_getenv_long("HIPEXTSEM_HOST_WAIT", 0, 0, 1)) {
		hx_reg.wait_path = WAIT_PATH_HOST;
		snprintf(hx_reg.wait_path_why, sizeof(hx_reg.wait_path_why), "HIPEXTSEM_HOST_WAIT=1");
		hx_info("waits block the calling thread (HIPEXTSEM_HOST_WAIT=1)");
		return hx_reg.wait_path;
	}
	hx_reg.wait_path = WAIT_PATH_STREAM_VALUE;
	snprintf(hx_reg.wait_path_why, sizeof(hx_reg.wait_path_why),
		 "the default; hipDeviceAttributeCanUseStreamWaitValue reads %d%s", v,
		 v == 0 ? " (it only says whether the CP barrier-value packet is used)" : "");
	hx_info("waits use hipStreamWaitValue64 released by the waiter thread "
		"(HIP device %d reports hipDeviceAttributeCanUseStreamWaitValue = %d%s)", hdev, v,
		v == 0 ? ", which does not stop hipStreamWaitValue64 from working" : "");
	return hx_reg.wait_path;
}

/* The runtime refused to enqueue the stream wait on a valid stream: move
 * one step down the wait paths.  Logged once per step, with the reason. */
static enum wait_path fall_back_locked(enum wait_path failed, hipError_t err)
{
	if (hx_reg.wait_path != failed)
		return hx_reg.wait_path; /* another thread moved on already */
	if (failed == WAIT_PATH_STREAM_VALUE && hx_rt.ExtMallocWithFlags) {
		hx_reg.wait_path = WAIT_PATH_SIGNAL_MEMORY;
		snprintf(hx_reg.wait_path_why, sizeof(hx_reg.wait_path_why),
			 "hipStreamWaitValue64 on host memory failed with error %d", (int)err);
		hx_warn("hipStreamWaitValue64 refused host memory (error %d; clr does so with "
			"GPU_STREAMOPS_CP_WAIT=1): waits now use hipMallocSignalMemory slots, "
			"still asynchronous", (int)err);
	} else {
		hx_reg.wait_path = WAIT_PATH_HOST;
		snprintf(hx_reg.wait_path_why, sizeof(hx_reg.wait_path_why),
			 "the runtime refused every stream wait (hipStreamWaitValue64 on %s "
			 "memory: error %d)", failed == WAIT_PATH_SIGNAL_MEMORY ? "signal" : "host",
			 (int)err);
		hx_warn("the runtime cannot enqueue hipStreamWaitValue64 (error %d on %s memory): "
			"waits now BLOCK THE CALLING THREAD until their semaphores are signaled; "
			"a wait whose signal the same thread issues later will hang", (int)err,
			failed == WAIT_PATH_SIGNAL_MEMORY ? "signal" : "host");
	}
	return hx_reg.wait_path;
}

/* Is `stream` a stream the runtime knows?  Asked of an entry point that
 * checks the handle on the loaded release, never hipStreamQuery, which
 * answers wrongly or changes capture state on some releases and does not
 * check at all on others (streams.c). */
static bool stream_is_valid(hipStream_t stream)
{
	return hx_stream_valid(stream);
}

/* Hands the op's entries to the waiter and blocks the calling thread until
 * op_release wakes it through `hb` (set up by the caller, op->host = hb);
 * then frees the op.  `kick`: the waiter must look at the watchdog. */
static hipError_t submit_and_block(struct hx_wait_op *op, struct hx_host_block *hb, bool kick)
{
	if (kick)
		hx_waiter_kick();
	hx_waiter_submit(&op->entries[0].w);
	if (atomic_fetch_sub_explicit(&op->remaining, 1, memory_order_acq_rel) == 1)
		op_release(op);
	pthread_mutex_lock(&hb->lock);
	while (!hb->done)
		pthread_cond_wait(&hb->cond, &hb->lock);
	pthread_mutex_unlock(&hb->lock);
	pthread_cond_destroy(&hb->cond);
	pthread_mutex_destroy(&hb->lock);
	hx_reg_op_free(HX_OP_WAIT, op);
	return hipSuccess;
}

/*
 * The host-blocking path: the calling thread blocks until every semaphore
 * of the call is signaled.  Its conditions go to the waiter thread as a
 * stream wait's do, so that a binary signal is taken by exactly one wait,
 * whichever path each is on: the waiter alone consumes (resets) binary
 * signals, one pending wait per signal, in order.  Two waits that each
 * waited and then reset the sync object themselves could both see the
 * same signal.  The op is pending like any other (the stuck-wait watchdog
 * reports it) but holds no stream, so exit does not release it.  Consumes
 * the op and its semaphore references in every case.
 */
static hipError_t host_wait(struct hx_wait_op *op, hipStream_t stream)
{
	struct hx_host_block hb = { .done = false };
	bool kick;

	/* Every argument is checked before the thread blocks: a destroyed
	 * stream must not turn into a wait that never ends. */
	if (!stream_is_valid(stream)) {
		hx_err("hipWaitExternalSemaphoresAsync: stream %p is not a valid stream",
		       (void *)stream);
		for (unsigned i = 0; i < op->count; i++)
			hx_sem_unref(op->entries[i].sem);
		hx_reg_op_free(HX_OP_WAIT, op);
		return hipErrorInvalidValue;
	}
	pthread_mutex_init(&hb.lock, NULL);
	pthread_cond_init(&hb.cond, NULL);
	op->host = &hb;
	op->slot = NULL;
	op->stream = stream;
	op->enqueued_ns = hx_trace_on ? hx_now_ns() : 0;
	atomic_init(&op->remaining, op->count + 1); /* +1 until every entry is queued */
	pthread_mutex_lock(&hx_reg.lock);
	kick = hx_reg.stuck_ns && !hx_reg.watch && hx_reg.waiter_wakes_at == INT64_MAX;
	op_link_locked(op);
	pthread_mutex_unlock(&hx_reg.lock);
	return submit_and_block(op, &hb, kick);
}

/* The host-blocking path for a wait that got there: the capture guard is
 * left first (a thread blocked holding it would stop every capture's
 * begin and end, the one that signals included); a caller that must not
 * block gets HX_ERR_WOULD_BLOCK, with nothing held. */
static hipError_t blocking_wait(struct hx_wait_op *op, hipStream_t stream, bool may_block)
{
	if (!may_block) {
		for (unsigned i = 0; i < op->count; i++)
			hx_sem_unref(op->entries[i].sem);
		hx_reg_op_free(HX_OP_WAIT, op);
		return HX_ERR_WOULD_BLOCK;
	}
	hx_capture_guard_leave();
	return host_wait(op, stream);
}

static void op_link_locked(struct hx_wait_op *op)
{
	op->all_next = NULL;
	op->all_prev = hx_reg.ops_tail;
	if (hx_reg.ops_tail)
		hx_reg.ops_tail->all_next = op;
	else
		hx_reg.ops = op;
	hx_reg.ops_tail = op;
	hx_reg.npending_waits++;
	if (!hx_reg.watch)
		hx_reg.watch = op;
}

static void op_unlink_locked(struct hx_wait_op *op)
{
	if (hx_reg.watch == op)
		hx_reg.watch = op->all_next;
	if (op->all_prev)
		op->all_prev->all_next = op->all_next;
	else
		hx_reg.ops = op->all_next;
	if (op->all_next)
		op->all_next->all_prev = op->all_prev;
	else
		hx_reg.ops_tail = op->all_prev;
	hx_reg.npending_waits--;
}

/*
 * Takes a slot of the path's kind, makes the op pending (visible to the
 * watchdog and to exit) and enqueues the stream's wait on the slot, with
 * one lock round for the bookkeeping.  On failure nothing is held and the
 * result is the runtime's own answer.  *kick: the waiter must be woken for
 * the watchdog.
 */
HX_HOT_PATH
static hipError_t enqueue_stream_wait(struct hx_wait_op *op, enum wait_path path,
				      hipStream_t stream, bool *kick)
{
	enum slot_kind kind = path == WAIT_PATH_SIGNAL_MEMORY ? SLOT_SIGNAL : SLOT_HOST;
	hipError_t err;
	bool late;
	int ret;

	pthread_mutex_lock(&hx_reg.lock);
	while ((ret = hx_slot_alloc_locked(kind, &op->slot_index, &op->slot, &op->gen)) == -EAGAIN) {
		void *mem;

		pthread_mutex_unlock(&hx_reg.lock);
		mem = hx_slot_memory(kind);
		if (!mem)
			return hipErrorOutOfMemory;
		pthread_mutex_lock(&hx_reg.lock);
		ret = hx_slot_pool_take_locked(kind, mem);
		if (ret)
			break;
	}
	if (ret) {
		pthread_mutex_unlock(&hx_reg.lock);
		return hipErrorOutOfMemory;
	}
	if (!hx_reg.atexit_registered) {
		atexit(at_exit);
		hx_reg.atexit_registered = true;
	}
	op->slot_kind = kind;
	/* The waiter sleeps until its next watchdog look at most: wake it
	 * only if it has none planned, so that this wait is looked at. */
	*kick = hx_reg.stuck_ns && !hx_reg.watch && hx_reg.waiter_wakes_at == INT64_MAX;
	op_link_locked(op);
	late = hx_reg.exiting;
	if (late)
		hx_slot_release(op->slot, op->gen);
	pthread_mutex_unlock(&hx_reg.lock);
	if (late) {
		static atomic_bool said;

		if (!atomic_exchange(&said, true))
			hx_warn("hipWaitExternalSemaphoresAsync: a wait enqueued after the shim's "
				"exit-time release (an atexit handler registered before the process's "
				"first wait, or a static destructor) does not wait: the runtime's "
				"teardown follows (docs/streams.md)");
	}

	err = hx_rt.StreamWaitValue64(stream, (void *)op->slot, op->gen, hipStreamWaitValueGte,
				      ~0ull);
	if (err) {
		pthread_mutex_lock(&hx_reg.lock);
		op_unlink_locked(op);
		hx_slot_free_locked(kind, op->slot_index, op->slot, op->gen);
		pthread_mutex_unlock(&hx_reg.lock);
		*kick = false;
	}
	return err;
}

HX_HOT_PATH
static hipError_t op_wait(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			  hipStream_t stream, bool may_block)
{
	static const char what[] = "hipWaitExternalSemaphoresAsync";
	struct hx_wait_op *op;
	struct hx_params p;
	enum wait_path path;
	hipStream_t target;
	hipError_t err;
	bool kick = false;

	SET_UP_ONCE_OR_FORWARD(WaitExternalSemaphoresAsync, hs, params, n, stream);
	err = hx_begin_op(what, hs, params, n, HX_OP_WAIT,
			  sizeof(*op) + (size_t)n * sizeof(op->entries[0]), (void **)&op);
	if (err || !op)
		return err;
	/* One pass: every handle taken, its entry filled in. */
	p = hx_abi_params(params);
	for (unsigned i = 0; i < n; i++) {
		struct hx_sem_wait *e = &op->entries[i];

		HX_TAKE_OR_RETURN(what, hs, i, HX_OP_WAIT, op);
		e->op = op;
		e->done = false;
		e->w.obj = &e->sem->w;
		e->w.value = hx_param_value(p, i);
		if (!e->sem->w.timeline) {
			hx_reg_binary_value(what, hs[i], e->w.value);
			e->w.value = 0;
		}
		e->w.next = i + 1 < n ? &op->entries[i + 1].w : NULL;
	}
	op->count = n;
	op->host = NULL;
	/* A capturing stream never gets here: graph_wait.c records the wait
	 * into the capture instead (hx_intercept_wait). */

	path = atomic_load_explicit(&hx_reg.wait_path, memory_order_acquire);
	if (path == WAIT_PATH_UNKNOWN) {
		int hdev, v;

		read_wait_value_attr(&hdev, &v);
		pthread_mutex_lock(&hx_reg.lock);
		path = choose_wait_path_locked(hdev, v);
		pthread_mutex_unlock(&hx_reg.lock);
	}
	if (hx_waiter_start(&hx_reg.dev, &waiter_ops)) {
		err = hipErrorOperatingSystem;
		goto unref;
	}
	if (path == WAIT_PATH_HOST)
		return blocking_wait(op, stream, may_block);
	/* The stream the release accepts the wait on (streams.c). */
	err = hx_stream_wait_prepare(what, stream, &target);
	if (err)
		goto unref;

	/* Complete before the op becomes visible (the watchdog reads it). */
	op->stream = stream;
	/* The trace wants the call's time; the watchdog makes do with its
	 * own first look, which saves the caller a clock read. */
	op->enqueued_ns = hx_trace_on ? hx_now_ns() : 0;
	atomic_init(&op->remaining, n + 1); /* +1 until every entry is queued */
	for (;;) {
		err = enqueue_stream_wait(op, path, target, &kick);
		if (!err)
			break;
		if (err == hipErrorOutOfMemory) {
			hx_err("%s: out of memory for a wait slot; the wait is not queued", what);
			goto unref;
		}
		/* A refusal is the stream's fault or the primitive's: only
		 * the second is a reason to change paths. */
		if (!stream_is_valid(stream)) {
			err = hx_reg_map_enqueue_error(err, "hipStreamWaitValue64", stream);
			goto unref;
		}
		/* Refused because of a capture (the stream's own, joined since
		 * the caller's decision, or another thread's Global one): the
		 * primitive works, the stream is not free to take it now. */
		if (hx_is_capture_error(err) ||
		    hx_runtime_capture_status(stream) != HX_CAPTURE_STATUS_NONE) {
			hx_err("%s: hipStreamWaitValue64 on stream %p refused by stream capture "
			       "(error %d); nothing enqueued", what, (void *)stream, (int)err);
			goto unref;
		}
		pthread_mutex_lock(&hx_reg.lock);
		path = fall_back_locked(path, err);
		pthread_mutex_unlock(&hx_reg.lock);
		if (path == WAIT_PATH_HOST)
			return blocking_wait(op, stream, may_block);
	}

	/* From here on the stream is held: every path must end in a release. */
	if (hx_stream_wait_join(what, stream, target) != hipSuccess) {
		/* 5.2's per-thread stream could not be ordered after the wait
		 * queued on the shim's stream for it, which will still take the
		 * semaphores' signals: the calling thread waits for them instead,
		 * so that what it queues next runs after them, and the call
		 * succeeds, as the wait it asked for is kept. */
		struct hx_host_block hb = { .done = false };

		hx_warn("%s: the calling thread waits for the semaphores instead", what);
		pthread_mutex_init(&hb.lock, NULL);
		pthread_cond_init(&hb.cond, NULL);
		op->host = &hb;
		hx_capture_guard_leave();
		return submit_and_block(op, &hb, kick);
	}
	if (kick)
		hx_waiter_kick();
	hx_dbg("%s: %u semaphore(s) on stream %p, slot %u gen %llu", what, n, (void *)stream,
	       op->slot_index, (unsigned long long)op->gen);
	hx_waiter_submit(&op->entries[0].w);
	/* Drop the guard; the op may be gone after this. */
	if (atomic_fetch_sub_explicit(&op->remaining, 1, memory_order_acq_rel) == 1)
		op_release(op);
	return hipSuccess;

unref:
	for (unsigned i = 0; i < n; i++)
		hx_sem_unref(op->entries[i].sem);
	hx_reg_op_free(HX_OP_WAIT, op);
	return err;
}

hipError_t hx_op_wait(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
		      hipStream_t stream)
{
	return op_wait(hs, params, n, stream, true);
}

hipError_t hx_op_wait_noblock(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			      hipStream_t stream)
{
	return op_wait(hs, params, n, stream, false);
}

int hx_op_wait_path(int *attr, char *why, size_t len)
{
	enum wait_path path;
	int hdev, v;

	if (attr)
		*attr = -1;
	if (why && len)
		why[0] = '\0';
	if (!hx_reg_init() || !hx_runtime_usable()) {
		if (why && len)
			snprintf(why, len, "the HIP runtime has no usable device");
		return -1;
	}
	read_wait_value_attr(&hdev, &v);
	pthread_mutex_lock(&hx_reg.lock);
	path = choose_wait_path_locked(hdev, v);
	if (attr)
		*attr = hx_reg.wait_value_attr;
	if (why && len)
		snprintf(why, len, "%s: %s", wait_path_name(path), hx_reg.wait_path_why);
	pthread_mutex_unlock(&hx_reg.lock);
	return path == WAIT_PATH_HOST ? 1 : 0;
}

static void report_stuck_locked(struct hx_wait_op *op, int64_t now)
{
	for (unsigned i = 0; i < op->count; i++) {
		struct hx_sem_wait *e = &op->entries[i];
		uint64_t cur = 0;
		const char *state = "";

		if (e->done)
			continue;
		if (e->sem->w.timeline)
			hx_sync_query(&hx_reg.dev, e->sem->w.handle, &cur);
		else
			state = hx_sync_poll(&hx_reg.dev, e->sem->w.handle, 0) == 0 ? " (signaled)"
									      : " (unsignaled)";
		hx_warn("stuck wait: %s %p has waited %.1f s or more for %s semaphore %p (syncobj %u) "
			"to reach %llu; current value %llu%s (work queued behind it, or "
			"hipStreamDestroy of its stream, can block the calling thread: docs/streams.md)",
			op->host ? "the thread blocked in a wait on stream" : "stream",
			(void *)op->stream, (double)(now - op->enqueued_ns) / 1e9,
			e->sem->w.timeline ? "timeline" : "binary", hx_reg_handle(e->sem), e->sem->w.handle,
			(unsigned long long)e->w.value, (unsigned long long)cur, state);
		HX_TRACE(stuck, hx_reg_handle(e->sem), e->w.value, cur, op->stream, op->enqueued_ns, now);
	}
}

static int64_t watchdog(int64_t now)
{
	int64_t next = INT64_MAX;

	if (!hx_reg.stuck_ns)
		return INT64_MAX;
	pthread_mutex_lock(&hx_reg.lock);
	/* Waits enqueued since the last look were made at or before `now`:
	 * their age counts from here (never reported early; reported at most
	 * one look late).  They sit at the end of the list. */
	for (struct hx_wait_op *op = hx_reg.ops_tail; op && !op->enqueued_ns; op = op->all_prev)
		op->enqueued_ns = now;
	/* Waits are in enqueue order: only the oldest unreported one can be
	 * due next, so each wait is looked at once. */
	while (hx_reg.watch && hx_reg.watch->enqueued_ns + hx_reg.stuck_ns <= now) {
		report_stuck_locked(hx_reg.watch, now);
		hx_reg.watch = hx_reg.watch->all_next;
	}
	if (hx_reg.watch) {
		next = hx_reg.watch->enqueued_ns + hx_reg.stuck_ns;
		hx_reg.watchdog_idle = false;
	} else if (!hx_reg.watchdog_idle) {
		/* Nothing pending: one more look a period from now rather
		 * than none, so that a wait enqueued meanwhile (the next
		 * frame's, usually) is covered without waking the thread. */
		next = now + hx_reg.stuck_ns;
		hx_reg.watchdog_idle = true;
	}
	hx_reg.waiter_wakes_at = next;
	pthread_mutex_unlock(&hx_reg.lock);
	return next;
}

/* Validates a wait array as hx_op_wait does, without a stream: used when
 * the wait becomes a graph node (at node creation and before each launch,
 * so a semaphore destroyed since then fails the launch cleanly). */
hipError_t hx_op_wait_validate(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			       const char *what)
{
	return hx_reg_validate_args(what, hs, params, n, NULL);
}
