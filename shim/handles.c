/* SPDX-License-Identifier: MIT */
/*
 * Handles: whether a handle is one of ours (graph nodes), the bad-argument
 * answers of the checks signal and wait inline from handles.h, and the
 * validation of a signal or wait that runs later (graph nodes).  What a
 * handle is and how it is looked up belong to the registry (registry.h),
 * which never calls into this file.
 */
#include <stdlib.h>

#include "handles.h"
#include "log.h"
#include "ops.h"
#include "registry.h"
#include "runtime.h"
#include "sem.h"

bool hx_op_is_shim_handle(hipExternalSemaphore_t h)
{
	uint64_t v = (uint64_t)(uintptr_t)h;

	/* The tag alone: no lock, no lookup.  Index 0 is never handed out. */
	return (v & HANDLE_TAG_MASK) == HANDLE_TAG && (v & INDEX_MASK) != 0;
}

/* Where semaphore i of a looked-up array is stored: `out` + i * `stride`
 * bytes (an array of pointers, or a field of each entry of a record). */
static inline struct hx_sem **sem_at(unsigned char *out, size_t stride, unsigned i)
{
	return (struct hx_sem **)(void *)(out + (size_t)i * stride);
}

hipError_t hx_null_array(const char *what, const hipExternalSemaphore_t *hs)
{
	hx_err("%s: %s is NULL", what, !hs ? "extSemArray" : "paramsArray");
	return hipErrorInvalidValue;
}

hipError_t hx_bad_flags(const char *what, struct hx_params p, unsigned i)
{
	hx_err("%s: paramsArray[%u].flags = %#x; must be 0", what, i, hx_param_flags(p, i));
	return hipErrorInvalidValue;
}

hipError_t hx_op_out_of_memory(const char *what, unsigned n)
{
	hx_err("%s: out of memory for %u semaphores", what, n);
	return hipErrorOutOfMemory;
}

/* Handle i is NULL, not ours, or destroyed: the references taken before
 * it go back, so that on failure nothing is held. */
static hipError_t drop_taken(const char *what, const hipExternalSemaphore_t *hs, unsigned i,
			     unsigned char *out, size_t stride)
{
	for (unsigned j = 0; j < i; j++)
		hx_sem_unref(*sem_at(out, stride, j));
	if (!hs[i]) {
		hx_err("%s: extSemArray[%u] is NULL", what, i);
		return hipErrorInvalidValue;
	}
	hx_err("%s: extSemArray[%u] = %p is not a semaphore imported by hipextsem (never "
	       "imported, or already destroyed)", what, i, hs[i]);
	return hipErrorInvalidResourceHandle;
}

hipError_t hx_take_failed(const char *what, const hipExternalSemaphore_t *hs, unsigned i,
			  enum hx_op_kind kind, void *op, size_t sem_field, size_t stride)
{
	hipError_t err = drop_taken(what, hs, i, (unsigned char *)op + sem_field, stride);

	hx_reg_op_free(kind, op);
	return err;
}

#define LOCAL_SEMS 16 /* validations of up to this many handles need no allocation */

hipError_t hx_reg_validate_args(const char *what, const hipExternalSemaphore_t *hs,
				const void *params, unsigned n, hx_reg_check_fn *check)
{
	struct hx_sem *local[LOCAL_SEMS];
	struct hx_sem **sems;
	hipError_t err;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	err = hx_check_args(what, hs, params, n);
	if (err || n == 0)
		return err;
	sems = n <= LOCAL_SEMS ? local : malloc((size_t)n * sizeof(*sems));
	if (!sems)
		return hx_op_out_of_memory(what, n);
	for (unsigned i = 0; i < n && !err; i++)
		if (!(sems[i] = hx_acquire(hs[i])))
			err = drop_taken(what, hs, i, (unsigned char *)sems, sizeof(*sems));
	if (!err) {
		if (check)
			err = check(what, hs, sems, params, n);
		for (unsigned i = 0; i < n; i++)
			hx_sem_unref(sems[i]);
	}
	if (sems != local)
		free(sems);
	return err;
}
