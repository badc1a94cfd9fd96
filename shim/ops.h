/* SPDX-License-Identifier: MIT */
/*
 * The four external-semaphore operations, called by the thin exported
 * entry points.  They take the caller's arguments as the runtime's ABI
 * defines them and return a hipError_t.  Import, destroy and the handle
 * check live in registry.c, signal in signal.c, wait in wait.c.
 */
#ifndef HIPEXTSEM_OPS_H
#define HIPEXTSEM_OPS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hipextsem/hip_api.h"
#include "streams.h"

/* True once the runtime is resolved, the registry set up and the device
 * known usable (the first signal or wait says so): the per-call paths then
 * skip the set-up checks with this one load. */
extern atomic_bool hx_reg_ready;
static inline bool hx_op_ready(void)
{
	return atomic_load_explicit(&hx_reg_ready, memory_order_acquire);
}

hipError_t hx_op_import(hipExternalSemaphore_t *out, const void *desc);
/* `queued`: NULL, or where the record of an enqueued signal is handed
 * back (NULL if none was enqueued); the caller must then settle it with
 * hx_op_signal_settle, saying whether a capture may have recorded it. */
struct signal_op;
hipError_t hx_op_signal(const hipExternalSemaphore_t *sems, const void *params, unsigned n,
			hipStream_t stream, struct signal_op **queued);
void hx_op_signal_settle(struct signal_op *op, bool kept);
hipError_t hx_op_wait(const hipExternalSemaphore_t *sems, const void *params, unsigned n,
		      hipStream_t stream);
/* The same for a caller that must not block (it holds a lock others need:
 * a graph launch): where the wait would block the calling thread (the
 * host-blocking path, now or by falling back to it), nothing is done and
 * HX_ERR_WOULD_BLOCK is returned; the caller retries with hx_op_wait once
 * it can block. */
#define HX_ERR_WOULD_BLOCK ((hipError_t)-2)
hipError_t hx_op_wait_noblock(const hipExternalSemaphore_t *sems, const void *params, unsigned n,
			      hipStream_t stream);
hipError_t hx_op_destroy(hipExternalSemaphore_t sem);
/* True if `h` carries the shim's tag, live or destroyed (graph and proc
 * address paths use it to keep shim handles away from the runtime: a
 * destroyed one is the shim's to refuse, with hipErrorInvalidResourceHandle,
 * as signal and wait do; the runtime's own node calls would take it for
 * theirs, or jump through an empty slot on 7.x). */
bool hx_op_is_shim_handle(hipExternalSemaphore_t h);

/* Introspection for tests and tools. */
struct hx_stats {
	unsigned live_sems;
	unsigned pending_waits;
	unsigned pending_signals;
	unsigned slots_allocated;
};
void hx_op_stats(struct hx_stats *st);
/* Exported (HIPEXTSEM_0.1) for the project's tests and tools. */
void hipextsemGetStats(struct hx_stats *st);

/* The wait path of this process: 0 asynchronous (hipStreamWaitValue64
 * released by the waiter thread), 1 waits block the calling thread, -1 no
 * usable device (every call goes to the runtime).  *attr gets the device's
 * hipDeviceAttributeCanUseStreamWaitValue (-1 if unreadable; reported
 * only, never used to choose); `why` says why this path. */
int hx_op_wait_path(int *attr, char *why, size_t len);
/* Exported (HIPEXTSEM_0.1) as the same, for hipextsem-info. */
int hipextsemGetWaitPath(int *attr, char *why, size_t len);

/* Graph nodes and stream capture (graph_signal.c). */
hipError_t hx_op_signal_validate(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
				 const char *what);
void hx_op_signal_handles(const hipExternalSemaphore_t *hs, const uint64_t *values, unsigned n);
/* Capability report: can timeline syncobjs be imported?  `why` on false. */
bool hx_op_timeline_supported(char *why, size_t n);

/* Graph wait nodes (graph_wait.c): validates like hx_op_wait, no stream. */
hipError_t hx_op_wait_validate(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			       const char *what);

#endif
