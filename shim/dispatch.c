/* SPDX-License-Identifier: MIT */
/*
 * The entry of the semaphore calls, and the one decision each makes: does
 * this signal or wait belong to a stream capture (then graph_signal.c or
 * graph_wait.c records it into the capture's graph) or to the stream (then
 * signal.c or wait.c enqueues it)?  The decision is made under the capture
 * guard (capture_guard.h), so that no capture begins or ends through the
 * shim between the question and the enqueue that acts on the answer.
 *
 * The release of pending waits at exit (exit_release.h) is set up here,
 * before the guard, by every call that can leave work pending at exit: the
 * import (every wait needs a semaphore, whatever path enqueues it later),
 * a signal and a wait (graph_exec.c does it for a graph launch).
 */
#include "intercept.h"

#include "capture_guard.h"
#include "exit_release.h"
#include "graph_common.h"
#include "hot.h"
#include "log.h"
#include "noise.h"
#include "ops.h"
#include "runtime.h"
#include "streams.h"

hipError_t hx_intercept_import(hipExternalSemaphore_t *out, const void *desc)
{
	/* No lock of the shim's is held here (the set-up may take glibc's
	 * loader lock: wait.c). */
	hx_op_exit_release_setup("hipImportExternalSemaphore");
	return hx_op_import(out, desc);
}

/* ---- signal ----------------------------------------------------------- */

/* A capture is live somewhere: is it this stream's?  Out of line, so
 * that the common call saves no registers for it. */
static __attribute__((noinline)) hipError_t signal_maybe_captured(const hipExternalSemaphore_t *hs,
								  const void *params, unsigned n,
								  hipStream_t stream,
								  struct signal_op **queued)
{
	static const char what[] = "hipSignalExternalSemaphoresAsync (captured)";
	int status;

	if (!hx_runtime_init() || !hx_runtime_usable())
		return hx_op_signal(hs, params, n, stream, queued);
	status = hx_runtime_capture_status(stream);
	if (status == HX_CAPTURE_STATUS_NONE)
		return hx_op_signal(hs, params, n, stream, queued);
	/* Refused here on every release: 5.3 to 6.1 would enqueue the host
	 * function for real (signaling at once, before the captured work ever
	 * ran), 6.2 refuses it itself (clr 19b4660cb), 5.2 has no
	 * hipLaunchHostFunc. */
	if (status == HX_CAPTURE_STATUS_INVALIDATED) {
		hx_err("%s: the capture of stream %p was invalidated; signal not recorded", what,
		       (void *)stream);
		return hipErrorStreamCaptureInvalidated;
	}
	if (!hx_rt.LaunchHostFunc) {
		hx_err("%s: this runtime has no hipLaunchHostFunc to record the signal into the "
		       "graph", what);
		return hipErrorStreamCaptureUnsupported;
	}
	return hx_graph_capture_signal(hs, params, n, stream);
}

HX_HOT_PATH
hipError_t hx_intercept_signal(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			       hipStream_t stream)
{
	struct signal_op *op = NULL;
	hipError_t err;

	stream = hx_stream_canonical(stream);
	/* Before the guard: they may take glibc's loader lock (wait.c,
	 * streams.h). */
	hx_op_exit_release_setup("hipSignalExternalSemaphoresAsync");
	hx_stream_pts_prepare(stream);
	/* One decision per call, under the capture guard (capture_guard.h): no
	 * capture begins or ends through the shim between the question "is
	 * the stream capturing?" and the enqueue that acts on the answer. */
	hx_capture_guard_enter();
	/* Cheapest first: with no capture live (one load) nothing else is
	 * asked; a live one implies the runtime was resolved. */
	if (hs && n && hx_capture_live())
		err = signal_maybe_captured(hs, params, n, stream, &op);
	else
		err = hx_op_signal(hs, params, n, stream, &op);
	hx_noise();
	/* Could a capture have recorded the signal just enqueued?  None began
	 * or ended through the shim meanwhile (the guard), so only if the
	 * stream joined a live one (hipStreamWaitEvent on an event captured
	 * elsewhere, a call the shim does not wrap) between the decision and
	 * the enqueue, or one began from inside the enqueue itself (the
	 * runtime calling back into the shim, which the guard cannot hold
	 * off): either way a capture is counted live and the stream is
	 * capturing now, and stays so until the guard is left.  A capture
	 * begun through a call the shim does not wrap is not seen
	 * (docs/graphs.md). */
	if (op)
		hx_op_signal_settle(op, hx_capture_live() &&
						hx_runtime_capture_status(stream) !=
							HX_CAPTURE_STATUS_NONE);
	hx_capture_guard_leave();
	return err;
}

/* ---- wait ------------------------------------------------------------- */

/* A capture is live somewhere: is it this stream's?  Out of line, so
 * that the common call saves no registers for it.  *recorded says whether
 * the wait went the capture's way (whatever the answer). */
static __attribute__((noinline)) hipError_t wait_maybe_captured(const hipExternalSemaphore_t *hs,
								const void *params, unsigned n,
								hipStream_t stream, bool *recorded)
{
	if (hx_capturing(stream) && hx_runtime_init() && hx_runtime_usable()) {
		*recorded = true;
		return hx_graph_capture_wait(hs, params, n, stream);
	}
	return hx_op_wait(hs, params, n, stream);
}

HX_HOT_PATH
hipError_t hx_intercept_wait(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			     hipStream_t stream)
{
	bool recorded = false;
	hipError_t err;

	stream = hx_stream_canonical(stream);
	/* Before the guard: they may take glibc's loader lock (wait.c,
	 * streams.h). */
	hx_op_exit_release_setup("hipWaitExternalSemaphoresAsync");
	hx_stream_pts_prepare(stream);
	/* One decision per call, under the capture guard (capture_guard.h); a wait
	 * that blocks the thread leaves the guard before it blocks. */
	hx_capture_guard_enter();
	/* Cheapest first: with no capture live (one load) nothing else is
	 * asked; a live one implies the runtime was resolved. */
	if (hs && n && hx_capture_live())
		err = wait_maybe_captured(hs, params, n, stream, &recorded);
	else
		err = hx_op_wait(hs, params, n, stream);
	hx_noise();
	/* Refused because of a capture after all: the stream joined one (an
	 * event captured elsewhere, through a call the shim does not wrap)
	 * between the decision and the enqueue, or one began from inside the
	 * enqueue.  The wait belongs to that capture (wait.c never takes such
	 * a refusal for a reason to change wait paths).  Not when the wait was
	 * being recorded already: a capture error from the recording (the
	 * dependency update refused after the node went in) is the answer,
	 * and a second try would add a second node. */
	if (!recorded && hx_is_capture_error(err) && hx_capturing(stream)) {
		hx_info("hipWaitExternalSemaphoresAsync: stream %p began capturing while the wait "
			"was enqueued; the wait is recorded into the capture", (void *)stream);
		err = hx_graph_capture_wait(hs, params, n, stream);
	}
	hx_capture_guard_leave();
	return err;
}
