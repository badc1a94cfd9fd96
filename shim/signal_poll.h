/* SPDX-License-Identifier: MIT */
/*
 * Signal modes (HIPEXTSEM_SIGNAL_MODE, docs/signal-modes.md) and the poll
 * mode's machinery: a signal enqueues hipStreamWriteValue64 of a sequence
 * number into a slot of the shim's, and one shim thread, which makes no
 * HIP call, polls the pending slots and runs the signal once its slot
 * holds the number.
 */
#ifndef HIPEXTSEM_SIGNAL_POLL_H
#define HIPEXTSEM_SIGNAL_POLL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hipextsem/hip_api.h"

enum hx_signal_mode {
	HX_SIGNAL_HOSTFUNC, /* hipLaunchHostFunc (hipStreamAddCallback on 5.2) */
	HX_SIGNAL_POLL,     /* hipStreamWriteValue64 + the poll thread */
};

/* The process's mode, read from HIPEXTSEM_SIGNAL_MODE once (an unknown
 * value, or sidestream, which is not built, is a warning and hostfunc).
 * Every signal asks: once read it is one load of a global, inline, so the
 * signal's path does not enter another page of the library's code. */
extern atomic_int hx_signal_mode_value; /* -1 until read */
enum hx_signal_mode hx_signal_mode_read(void);
static inline enum hx_signal_mode hx_signal_mode(void)
{
	int m = atomic_load_explicit(&hx_signal_mode_value, memory_order_relaxed);

	return m >= 0 ? (enum hx_signal_mode)m : hx_signal_mode_read();
}

/*
 * Enqueues, on `stream`, the write that hands the signal to the poll
 * thread, which calls run(arg) once the stream has reached it, in order
 * with the other poll signals of the same stream.  Returns hipSuccess
 * (run will be called), the runtime's error for the write (run will not
 * be), or HX_POLL_UNAVAILABLE when the poll machinery cannot take it (no
 * slot memory, no thread, the process is exiting): the caller then uses
 * the host-function path.
 */
#define HX_POLL_UNAVAILABLE ((hipError_t)-3)
hipError_t hx_poll_signal(hipStream_t stream, void (*run)(void *), void *arg);

/*
 * Runs, on the calling thread and now, every poll signal whose stream has
 * reached it.  Every signal that the runtime's callback thread runs calls
 * it before its own ioctl: the stream reached that host function, so an
 * earlier poll signal of the same stream has been reached too and must be
 * issued first (stream order across signal paths).  One load when the
 * process never made a poll signal.  Never called from the poll thread.
 */
void hx_poll_flush(void);

/* What the poll thread did (docs/signal-modes.md).  cpu_ns is the
 * thread's CPU time (-1 when unknown). */
struct hx_poll_stats {
	bool running;
	uint64_t submitted;
	uint64_t signaled;
	uint64_t pending;
	uint64_t wakeups;       /* returns from a timed sleep or an idle wait */
	uint64_t idle_waits;    /* sleeps with nothing pending (no time-out) */
	int64_t cpu_ns;
	uint64_t period_ns;     /* the last poll period */
	uint64_t pending_ns_sum; /* submit -> seen, summed over signals */
	uint64_t flushed;       /* of signaled, run by hx_poll_flush */
};
void hx_poll_get_stats(struct hx_poll_stats *st);

#endif
