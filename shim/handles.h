/* SPDX-License-Identifier: MIT */
/*
 * The front half of signal and wait: argument checks, the per-call record
 * and the lock-free lookup of every handle (what a handle is and where the
 * registry keeps the semaphore it names: registry.h).  Inline: signal and
 * wait run it for every handle of every call on the caller's thread.
 */
#ifndef HIPEXTSEM_HANDLES_H
#define HIPEXTSEM_HANDLES_H

#include <stdatomic.h>
#include <stdint.h>

#include "hipextsem/hip_api.h"
#include "hot.h"
#include "log.h"
#include "registry.h"
#include "runtime.h"
#include "sem.h"

/* The bad-argument answers of the checks below, out of line: each logs
 * why and returns the stock runtime's error. */
#define HX_COLD __attribute__((cold, noinline))
HX_COLD hipError_t hx_null_array(const char *what, const hipExternalSemaphore_t *hs);
HX_COLD hipError_t hx_bad_flags(const char *what, struct hx_params p, unsigned i);
HX_COLD hipError_t hx_op_out_of_memory(const char *what, unsigned n);

/*
 * The lookup of signal and wait, without the lock: a reference on the
 * live semaphore `h` names, or NULL.  The record read from the table may
 * be destroyed and even reused by another import meanwhile; records are
 * never freed (registry.h: spare_in), so the reference is taken only
 * while the count is not 0 (a destroyed record stays at 0 until import
 * reuses it), and then the table is read again: if the position no
 * longer holds this record under the handle's generation, the reference
 * goes back.
 */
HX_INLINE struct hx_sem *hx_acquire(hipExternalSemaphore_t h)
{
	uint32_t gen;
	struct reg_entry *e;
	struct hx_sem *sem;
	int r;

	if (!h || !(e = hx_reg_decode(h, &gen)))
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

/* The argument checks of signal and wait that need no lookup, in the
 * stock runtime's order: the arrays, then every element's flags. */
HX_INLINE hipError_t hx_check_args(const char *what, const hipExternalSemaphore_t *hs,
				const void *params, unsigned n)
{
	struct hx_params p;

	if (!hs || !params)
		return hx_null_array(what, hs);
	p = hx_abi_params(params);
	for (unsigned i = 0; i < n; i++)
		if (hx_param_flags(p, i) != 0)
			return hx_bad_flags(what, p, i);
	return hipSuccess;
}

/*
 * The front half of signal and wait: the checks above, then a per-call
 * record of `size` bytes of pool `kind` (*op, NULL with hipSuccess when
 * there is nothing to do).  The caller then takes every handle with
 * hx_acquire() straight into the record.
 */
HX_INLINE hipError_t hx_begin_op(const char *what, const hipExternalSemaphore_t *hs,
			      const void *params, unsigned n, enum hx_op_kind kind, size_t size,
			      void **op)
{
	hipError_t err = hx_check_args(what, hs, params, n);

	*op = NULL;
	if (err || n == 0)
		return err;
	*op = hx_reg_op_alloc(kind, size);
	return *op ? hipSuccess : hx_op_out_of_memory(what, n);
}

/*
 * Handle i of a call could not be taken: says why, drops the references
 * already taken (semaphore j stored at byte `sem_field` + j * `stride`
 * of `op`), gives the record back and returns the call's error.
 */
HX_COLD hipError_t hx_take_failed(const char *what, const hipExternalSemaphore_t *hs, unsigned i,
				  enum hx_op_kind kind, void *op, size_t sem_field, size_t stride);

/* Takes handle i of the call into op->entries[i].sem (signal and wait
 * records both name it so), or returns the call's error from the calling
 * function, nothing held and the record given back. */
#define HX_TAKE_OR_RETURN(what, hs, i, kind, op)                                            \
	do {                                                                                 \
		if (!((op)->entries[i].sem = hx_acquire((hs)[i])))                           \
			return hx_take_failed(what, hs, i, kind, op,                         \
					      offsetof(__typeof__(*(op)), entries[0].sem),   \
					      sizeof((op)->entries[0]));                     \
	} while (0)

#endif
