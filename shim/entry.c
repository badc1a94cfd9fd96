/* SPDX-License-Identifier: MIT */
/*
 * The exported entry points.  Nothing but argument forwarding lives here:
 * everything the shim does not implement is not exported at all, so those
 * calls bind straight to libamdhip64.
 */
#include "hipextsem/hip_api.h"
#include "ops.h"

#define HX_EXPORT __attribute__((visibility("default")))

HX_EXPORT hipError_t hipImportExternalSemaphore(hipExternalSemaphore_t *extSem_out,
						const hipExternalSemaphoreHandleDesc *semHandleDesc)
{
	return hx_op_import(extSem_out, semHandleDesc);
}

HX_EXPORT hipError_t
hipSignalExternalSemaphoresAsync(const hipExternalSemaphore_t *extSemArray,
				 const hipExternalSemaphoreSignalParams *paramsArray,
				 unsigned int numExtSems, hipStream_t stream)
{
	return hx_op_signal(extSemArray, paramsArray, numExtSems, stream);
}

HX_EXPORT hipError_t hipWaitExternalSemaphoresAsync(const hipExternalSemaphore_t *extSemArray,
						    const hipExternalSemaphoreWaitParams *paramsArray,
						    unsigned int numExtSems, hipStream_t stream)
{
	return hx_op_wait(extSemArray, paramsArray, numExtSems, stream);
}

HX_EXPORT hipError_t hipDestroyExternalSemaphore(hipExternalSemaphore_t extSem)
{
	return hx_op_destroy(extSem);
}

/* Introspection for the project's own tests and tools; not a HIP API. */
HX_EXPORT void hipextsemGetStats(struct hx_stats *st)
{
	hx_op_stats(st);
}
