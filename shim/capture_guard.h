/* SPDX-License-Identifier: MIT */
/*
 * Whether a call belongs to a stream capture (capture_guard.c).
 */
#ifndef HIPEXTSEM_CAPTURE_GUARD_H
#define HIPEXTSEM_CAPTURE_GUARD_H

#include <stdatomic.h>
#include <stdbool.h>

#include "hipextsem/hip_api.h"
#include "runtime.h"

/*
 * The capture guard.  A signal, a wait or a graph launch decides once
 * whether its stream is capturing and then acts on that decision (records
 * into the capture, or enqueues for real).  Captures begin and end only
 * through the shim's wrappers, which take the guard exclusively, while a
 * call holds it shared from its decision to its enqueue: no capture can
 * begin or end in between.  Held per thread, not nested (a call that
 * holds it enters again for free); dropped before any wait that blocks the
 * calling thread (hx_capture_guard_leave is then a no-op for the caller).
 * Taken exclusively across fork() as well (graph.c), so that a child never
 * inherits it held.
 */
void hx_capture_guard_enter(void);
void hx_capture_guard_leave(void);
/* Exclusive, around a capture's begin or end; false (nothing taken) when
 * the calling thread holds it shared (a call the runtime made back into
 * the shim from inside one of the shim's own calls). */
bool hx_capture_guard_lock(void);
void hx_capture_guard_unlock(void);

/* Captures begun through the shim's hipStreamBeginCapture* and not yet
 * ended (capture_guard.c).  Every capture starts with one of those calls (a stream
 * joins a capture only through an event captured in one already going),
 * so while it is 0 no stream can be capturing and the per-call query of the
 * runtime is skipped.  A capture whose end the shim does not see (its
 * stream destroyed while capturing) keeps it above 0: the query is made,
 * which is only slower. */
extern atomic_int hx_captures_live;

/* Around the runtime's begin of a capture, under the guard's writer lock:
 * counted before the runtime's call, so that no signal or wait decides "no
 * capture" while one starts; then recorded (or uncounted when the begin
 * failed) by hx_capture_begin_done, which returns `err`.  spt: a _spt
 * call, whose null stream is the per-thread stream. */
void hx_capture_count_begin(void);
hipError_t hx_capture_begin_done(hipError_t err, hipStream_t stream, bool spt, const char *what);
/* After the runtime's end of a capture on `stream`: uncounted if the
 * stream reports no capture now, whatever the end answered. */
void hx_capture_end_check(hipStream_t stream, bool spt);

/* Some stream of the process is capturing (one load). */
static inline bool hx_capture_live(void)
{
	return atomic_load_explicit(&hx_captures_live, memory_order_acquire) != 0;
}

/* Active or invalidated: work on the stream belongs to its capture (an
 * invalidated one refuses it, as CUDA does), not to the stream. */
static inline bool hx_capturing(hipStream_t stream)
{
	if (!hx_capture_live())
		return false;
	return hx_runtime_capture_status(stream) != HX_CAPTURE_STATUS_NONE;
}

#endif
