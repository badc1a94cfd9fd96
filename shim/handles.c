/* SPDX-License-Identifier: MIT */
/*
 * Handles and the argument checks of signal and wait: a handle's lookup
 * (under the registry lock for import and destroy, without it for signal
 * and wait), and the checks both operations share, in the stock
 * runtime's order.
 */
#include <stdlib.h>

#include "handles.h"
#include "log.h"
#include "ops.h"
#include "registry.h"
#include "runtime.h"
#include "sem.h"

hipExternalSemaphore_t hx_reg_handle(const struct hx_sem *sem)
{
	return (hipExternalSemaphore_t)(uintptr_t)(HANDLE_TAG |
						   ((uint64_t)(sem->gen & GEN_MASK) << INDEX_BITS) |
						   ((uint64_t)sem->index + 1));
}

struct hx_sem *hx_reg_lookup_locked(hipExternalSemaphore_t h)
{
	uint32_t gen;
	struct reg_entry *e = hx_reg_decode(h, &gen);
	struct hx_sem *sem;

	if (!e)
		return NULL;
	sem = atomic_load_explicit(&e->sem, memory_order_relaxed);
	if (!sem || atomic_load_explicit(&e->gen, memory_order_relaxed) != gen)
		return NULL;
	return sem;
}

/* Inlined, like the two checks below: they run for every signal and wait. */
#define HOT static inline __attribute__((always_inline))

/*
 * The lookup of signal and wait, without the lock: a reference on the
 * live semaphore `h` names, or NULL.  The record read from the table may
 * be destroyed and even reused by another import meanwhile; records are
 * never freed (see spare_in), so the reference is taken only while the
 * count is not 0 (a destroyed record stays at 0 until import reuses it),
 * and then the table is read again: if the position no longer holds this
 * record under the handle's generation, the reference goes back.
 */
HOT struct hx_sem *acquire(hipExternalSemaphore_t h)
{
	uint32_t gen;
	struct reg_entry *e = hx_reg_decode(h, &gen);
	struct hx_sem *sem;
	int r;

	if (!e)
		return NULL;
	sem = atomic_load_explicit(&e->sem, memory_order_acquire);
	if (!sem)
		return NULL;
	r = atomic_load_explicit(&sem->refs, memory_order_relaxed);
	do {
		if (r <= 0)
			return NULL;
	} while (!atomic_compare_exchange_weak_explicit(&sem->refs, &r, r + 1, memory_order_acquire,
							memory_order_relaxed));
	if (atomic_load_explicit(&e->sem, memory_order_acquire) != sem ||
	    atomic_load_explicit(&e->gen, memory_order_relaxed) != gen) {
		hx_sem_unref(sem);
		return NULL;
	}
	return sem;
}

bool hx_op_is_shim_handle(hipExternalSemaphore_t h)
{
	bool live;

	if (!hx_reg_init())
		return false;
	pthread_mutex_lock(&hx_reg.lock);
	live = hx_reg_lookup_locked(h) != NULL;
	pthread_mutex_unlock(&hx_reg.lock);
	return live;
}

/* Where semaphore i of a looked-up array is stored: `out` + i * `stride`
 * bytes (an array of pointers, or a field of each entry of a record). */
static inline struct hx_sem **sem_at(unsigned char *out, size_t stride, unsigned i)
{
	return (struct hx_sem **)(void *)(out + (size_t)i * stride);
}

/* Looks up every handle of a signal/wait array and takes a reference on
 * each, without the registry lock.  On failure nothing is held. */
HOT hipError_t lookup_array(const char *what, const hipExternalSemaphore_t *hs, unsigned n,
			    unsigned char *out, size_t stride)
{
	hipError_t err = hipSuccess;
	unsigned i;

	for (i = 0; i < n; i++) {
		struct hx_sem *sem = hs[i] ? acquire(hs[i]) : NULL;

		*sem_at(out, stride, i) = sem;
		if (!sem) {
			if (!hs[i]) {
				hx_err("%s: extSemArray[%u] is NULL", what, i);
				err = hipErrorInvalidValue;
			} else {
				hx_err("%s: extSemArray[%u] = %p is not a semaphore imported by "
				       "hipextsem (never imported, or already destroyed)",
				       what, i, hs[i]);
				err = hipErrorInvalidResourceHandle;
			}
			break;
		}
	}
	if (err)
		while (i-- > 0)
			hx_sem_unref(*sem_at(out, stride, i));
	return err;
}

/* The argument checks of signal and wait that need no lookup, in the
 * stock runtime's order. */
HOT hipError_t check_args(const char *what, const hipExternalSemaphore_t *hs, const void *params,
			  unsigned n)
{
	struct hx_params p;

	if (!hs || !params) {
		hx_err("%s: %s is NULL", what, !hs ? "extSemArray" : "paramsArray");
		return hipErrorInvalidValue;
	}
	p = hx_abi_params(params);
	for (unsigned i = 0; i < n; i++) {
		unsigned flags = hx_param_flags(p, i);
		if (flags != 0) {
			hx_err("%s: paramsArray[%u].flags = %#x; must be 0", what, i, flags);
			return hipErrorInvalidValue;
		}
	}
	return hipSuccess;
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
	err = check_args(what, hs, params, n);
	if (err || n == 0)
		return err;
	sems = n <= LOCAL_SEMS ? local : malloc((size_t)n * sizeof(*sems));
	if (!sems) {
		hx_err("%s: out of memory for %u semaphores", what, n);
		return hipErrorOutOfMemory;
	}
	err = lookup_array(what, hs, n, (unsigned char *)sems, sizeof(*sems));
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

hipError_t hx_reg_prepare_op(const char *what, const hipExternalSemaphore_t *hs,
			     const void *params, unsigned n, enum hx_op_kind kind, size_t op_size,
			     size_t sem_field, size_t stride, void **op)
{
	hipError_t err = check_args(what, hs, params, n);

	*op = NULL;
	if (err || n == 0)
		return err;
	/* Every field is set by the caller: no zeroing on this path. */
	*op = hx_reg_op_alloc(kind, op_size);
	if (!*op) {
		hx_err("%s: out of memory for %u semaphores", what, n);
		return hipErrorOutOfMemory;
	}
	err = lookup_array(what, hs, n, (unsigned char *)*op + sem_field, stride);
	if (err) {
		hx_reg_op_free(kind, *op);
		*op = NULL;
	}
	return err;
}
