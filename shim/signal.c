/* SPDX-License-Identifier: MIT */
/*
 * hipSignalExternalSemaphoresAsync: one host function per call
 * (hipLaunchHostFunc, or hipStreamAddCallback on runtimes without it) that
 * issues the syncobj signal ioctl.  It runs on the runtime's callback
 * thread when all prior work of the stream is done, never blocks, and
 * frees itself.  With HIPEXTSEM_SIGNAL_MODE=poll the same record is handed
 * to the poll thread instead (signal_poll.c) behind a hipStreamWriteValue64.
 * Also the signal helpers of graph signal nodes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture_guard.h"
#include "graph_common.h"
#include "handles.h"
#include "hot.h"
#include "log.h"
#include "ops.h"
#include "registry.h"
#include "runtime.h"
#include "sem.h"
#include "signal_poll.h"
#include "streams.h"
#include "trace.h"
#include "noise.h"

/* Signals `sem` (at `value` if it is a timeline); a failure is logged. */
static void signal_sem(const struct hx_sem *sem, uint64_t value)
{
	uint64_t last = 0;
	int ret = 0;

	/* On the runtime's callback thread, which must not block: a failed
	 * ioctl is tried again at once, a few times (the other side would
	 * otherwise wait for a signal that never comes).  A binary
	 * semaphore's object may have become a timeline since its import
	 * (sync.h: hx_sync_signal_binary): decided at each signal. */
	for (unsigned tries = 0; tries < 3; tries++) {
		ret = sem->w.timeline ? hx_sync_signal(&hx_reg.dev, sem->w.handle, value)
				      : hx_sync_signal_binary(&hx_reg.dev, sem->w.handle, value, &last);
		if (!ret || ret == -ERANGE)
			break;
	}
	if (ret == -ERANGE)
		hx_err("binary semaphore %p (syncobj %u) carries timeline points now (last point "
		       "%llu): not signaled, a binary signal would drop its timeline and point "
		       "%llu would not be past the last one; signal it with fence.value past the "
		       "last point, or import it as TimelineSemaphoreFd (9)",
		       hx_reg_handle(sem), sem->w.handle, (unsigned long long)last,
		       (unsigned long long)value);
	else if (ret)
		hx_err("%s(handle %u, point %llu) failed: %s",
		       sem->w.timeline ? "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL" : "DRM_IOCTL_SYNCOBJ_SIGNAL",
		       sem->w.handle, (unsigned long long)value, strerror(-ret));
}

/*
 * Who frees a signal's record.  The host function normally does, after
 * the signal.  But a capture that another thread begins on the stream
 * between the shim's capture check and its enqueue (hx_intercept_signal)
 * records the host function into a graph, which runs it at every launch:
 * a record freed after the first run would be read after free at the
 * second.  So the enqueuing call settles the record once the runtime has
 * taken it, saying whether a capture may have recorded it, and whichever
 * of the two comes last frees it; a record that may have been captured is
 * kept (with its semaphore references) until exit and signals at every
 * run, as a captured signal does.
 */
enum {
	SIG_QUEUED,  /* neither side done */
	SIG_SETTLED, /* the caller is done: the host function frees */
	SIG_RAN,     /* the host function ran first: the caller frees */
	SIG_KEPT,    /* kept for a capture: never freed */
};

static void signal_entries(struct signal_op *op)
{
	for (unsigned i = 0; i < op->count; i++) {
		struct signal_entry *e = &op->entries[i];
		/* Stamped before the ioctl: whoever sees the signal sees it
		 * after this time, so the trace never shows a wait satisfied
		 * before the signal that satisfied it. */
		int64_t t = hx_trace_on ? hx_now_ns() : 0;

		signal_sem(e->sem, e->value);
		HX_TRACE(signal, hx_reg_handle(e->sem), e->value, op->stream, op->enqueued_ns, t);
	}
}

static void signal_free(struct signal_op *op)
{
	for (unsigned i = 0; i < op->count; i++)
		hx_sem_unref(op->entries[i].sem);
	hx_reg_op_free(HX_OP_SIGNAL, op);
}

static void run_signal(struct signal_op *op)
{
	unsigned st = atomic_load_explicit(&op->state, memory_order_acquire);

	signal_entries(op);
	if (st == SIG_KEPT)
		return;
	st = SIG_QUEUED;
	if (atomic_compare_exchange_strong_explicit(&op->state, &st, SIG_RAN, memory_order_acq_rel,
						    memory_order_acquire))
		return; /* the caller settles it */
	if (st == SIG_SETTLED)
		signal_free(op);
	/* SIG_RAN (a second run before the caller settled) or SIG_KEPT:
	 * the record stays. */
}

/* Kept records stay reachable (a leak checker sees them as kept, and so
 * does a reader of a core file). */
struct kept_signal {
	struct kept_signal *next;
	struct signal_op *op;
};
static struct kept_signal *_Atomic kept_signals;

static void keep_signal(struct signal_op *op)
{
	struct kept_signal *k = malloc(sizeof(*k));

	if (!k)
		return;
	k->op = op;
	k->next = atomic_load_explicit(&kept_signals, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&kept_signals, &k->next, k,
						      memory_order_release, memory_order_relaxed))
		;
}

HX_HOT_PATH
void hx_op_signal_settle(struct signal_op *op, bool kept)
{
	unsigned prev = atomic_exchange_explicit(&op->state, kept ? SIG_KEPT : SIG_SETTLED,
						 memory_order_acq_rel);

	if (kept)
		keep_signal(op);
	if (kept)
		hx_warn("hipSignalExternalSemaphoresAsync: a capture began on stream %p while the "
			"signal was enqueued (on another thread): the runtime may have recorded it "
			"into that capture, so its record (%u semaphore(s)) is kept until exit and "
			"signals each time it runs",
			(void *)op->stream, op->count);
	else if (prev == SIG_RAN)
		signal_free(op);
}

/* On the runtime's callback thread: an earlier poll signal of the same
 * stream is issued first (hx_poll_flush). */
static void signal_host_fn(void *data)
{
	hx_noise();
	hx_poll_flush();
	run_signal(data);
}

static void signal_stream_cb(hipStream_t stream, hipError_t status, void *data)
{
	if (status != hipSuccess)
		hx_warn("stream %p reported error %d before a semaphore signal; signaling "
			"anyway so the other side is not left waiting", (void *)stream, (int)status);
	hx_poll_flush();
	run_signal(data);
}

/* On the poll thread (signal_poll.c), which runs reached records itself. */
static void signal_poll_fn(void *data)
{
	hx_noise();
	run_signal(data);
}

/* A timeline point 0 can never be signaled. */
static hipError_t check_signal_value(const char *what, hipExternalSemaphore_t h,
				     const struct hx_sem *sem, unsigned long long value)
{
	if (sem->w.timeline && value == 0) {
		hx_err("%s: timeline semaphore %p signaled with value 0", what, h);
		return hipErrorInvalidValue;
	}
	return hipSuccess;
}

static hipError_t check_signal_values(const char *what, const hipExternalSemaphore_t *hs,
				      struct hx_sem **sems, const void *params, unsigned n)
{
	struct hx_params p = hx_abi_params(params);
	hipError_t err = hipSuccess;

	for (unsigned i = 0; i < n && !err; i++)
		err = check_signal_value(what, hs[i], sems[i], hx_param_value(p, i));
	return err;
}

/*
 * Does this signal take the poll path (HIPEXTSEM_SIGNAL_MODE=poll,
 * signal_poll.c)?  Not while any capture is live in the process: a
 * hipStreamWriteValue64 on a stream that joined a capture between the
 * caller's decision and the enqueue (graph_signal.c) would execute at once
 * and add no node (clr's stream operations have no capture handling), so
 * the host function, which the settle step can keep for the capture, is
 * used.  Not on 5.2 for hipStreamPerThread, which its stream operations do
 * not resolve (a crash: streams.c), nor for a created stream 5.2 does not
 * know (they do not check it either): the host-function call checks those.
 */
static bool use_poll(const char *what, hipStream_t stream)
{
	(void)what;
	if (hx_signal_mode() != HX_SIGNAL_POLL || hx_capture_live())
		return false;
	if (!hx_rt.LaunchHostFunc && stream &&
	    (stream == hipStreamPerThread || !hx_stream_valid(stream)))
		return false;
	return true;
}

HX_HOT_PATH
hipError_t hx_op_signal(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			hipStream_t stream, struct signal_op **queued)
{
	static const char what[] = "hipSignalExternalSemaphoresAsync";
	struct signal_op *op;
	struct hx_params p;
	hipError_t err;
	int binary = -1;    /* index of the first binary semaphore */
	int bad_value = -1; /* index of the first timeline point 0 */

	if (queued)
		*queued = NULL;
	SET_UP_ONCE_OR_FORWARD(SignalExternalSemaphoresAsync, hs, params, n, stream);
	err = hx_begin_op(what, hs, params, n, HX_OP_SIGNAL,
			  sizeof(*op) + (size_t)n * sizeof(op->entries[0]), (void **)&op);
	if (err || !op)
		return err;
	/* One pass: every handle taken, every value read.  A timeline
	 * point 0 is reported only once every handle is known good: a bad
	 * handle further on is the answer, as it always was. */
	p = hx_abi_params(params);
	for (unsigned i = 0; i < n; i++) {
		struct signal_entry *e = &op->entries[i];

		HX_TAKE_OR_RETURN(what, hs, i, HX_OP_SIGNAL, op);
		e->value = hx_param_value(p, i);
		if (!e->sem->w.timeline) {
			if (binary < 0)
				binary = (int)i;
			hx_reg_binary_value(what, hs[i], e->value);
		} else if (e->value == 0 && bad_value < 0) {
			bad_value = (int)i;
		}
	}
	op->count = n;
	op->stream = stream;
	atomic_store_explicit(&op->state, SIG_QUEUED, memory_order_relaxed);
	/* Only the trace reads it: no clock read per call otherwise. */
	op->enqueued_ns = hx_trace_on ? hx_now_ns() : 0;
	if (bad_value >= 0)
		err = check_signal_value(what, hs[bad_value], op->entries[bad_value].sem,
					 op->entries[bad_value].value);
	/* A stream the release's host-function call might use unchecked
	 * (streams.c) is refused before it gets there. */
	if (!err)
		err = hx_stream_check_signal(what, stream);
	/* Capture was dealt with by the caller (graph_signal.c): a captured
	 * signal becomes a graph host node there. */
	if (!err) {
		const char *prim = hx_rt.LaunchHostFunc ? "hipLaunchHostFunc" : "hipStreamAddCallback";

		err = HX_POLL_UNAVAILABLE;
		if (use_poll(what, stream)) {
			err = hx_poll_signal(stream, signal_poll_fn, op);
			prim = "hipStreamWriteValue64";
		}
		if (err == HX_POLL_UNAVAILABLE) {
			prim = hx_rt.LaunchHostFunc ? "hipLaunchHostFunc" : "hipStreamAddCallback";
			if (hx_rt.LaunchHostFunc)
				err = hx_rt.LaunchHostFunc(stream, signal_host_fn, op);
			else
				err = hx_rt.StreamAddCallback(stream, signal_stream_cb, op, 0);
		}
		if (err)
			err = hx_reg_map_enqueue_error(err, prim, stream);
	}
	if (err) {
		for (unsigned i = 0; i < n; i++)
			hx_sem_unref(op->entries[i].sem);
		hx_reg_op_free(HX_OP_SIGNAL, op);
		return err;
	}
	hx_dbg("%s: %u semaphore(s) on stream %p", what, n, (void *)stream);
	/* From here on the host function may have run and the record be
	 * the caller's to settle: only `hs` and `stream` are read below. */
	if (queued)
		*queued = op;
	else
		hx_op_signal_settle(op, false);
	/* Once per process: the consequence users porting CUDA code meet as an
	 * unexplained stall on the Vulkan side. */
	if (binary >= 0 && hx_log_enabled(HX_LOG_INFO)) {
		static atomic_bool noted;
		if (!atomic_exchange(&noted, true))
			hx_info("note: binary semaphore %p is signaled from HIP: its fence is "
				"attached only when stream %p reaches the signal, so a Vulkan queue "
				"submission waiting on it (Mesa/RADV vkQueueSubmit) blocks until the "
				"stream's prior work is done; timeline semaphores do not block there "
				"(README: The Vulkan side)", hs[binary], (void *)stream);
	}
	return hipSuccess;
}

/* ---- graph signal nodes and captured signals (graph_signal.c) -------- */

/* Validates a signal array as hx_op_signal does, without a stream: used
 * when the signal becomes a graph node that runs later, maybe many times. */
hipError_t hx_op_signal_validate(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
				 const char *what)
{
	return hx_reg_validate_args(what, hs, params, n, check_signal_values);
}

/* Signals now (a graph's host node, on the runtime's callback thread).
 * Handles are looked up at each run: one destroyed since the node was
 * built is skipped with a log line, never dereferenced. */
void hx_op_signal_handles(const hipExternalSemaphore_t *hs, const uint64_t *values, unsigned n)
{
	/* Stream order with the poll signals before this node (signal_poll.h). */
	hx_poll_flush();
	for (unsigned i = 0; i < n; i++) {
		struct hx_sem *sem = hx_acquire(hs[i]);

		if (!sem) {
			hx_err("graph signal node: semaphore %p was destroyed before the graph ran; "
			       "not signaled", hs[i]);
			continue;
		}
		signal_sem(sem, values[i]);
		hx_sem_unref(sem);
	}
}
