/* SPDX-License-Identifier: MIT */
/*
 * The per-call records of signal (struct signal_op) and wait (struct
 * hx_wait_op): a lock-free pool of 32 per kind, claimed and returned
 * through a bitmap, so that the common call takes no heap allocation.
 */
#include <stdlib.h>

#include "registry.h"
#include "sem.h"

/* Under AddressSanitizer every record comes from malloc, so that its
 * lifetime stays checked. */
#if defined(__SANITIZE_ADDRESS__)
#define OP_POOL_RECORDS 0
#else
#define OP_POOL_RECORDS 32
#endif
#define ALL_FREE (((uint64_t)1 << OP_POOL_RECORDS) - 1)
#define ROUND64(x) (((x) + 63) & ~(size_t)63)
#define SIGNAL_REC ROUND64(sizeof(struct signal_op) + HX_OP_POOL_ENTRIES * sizeof(struct signal_entry))
#define WAIT_REC ROUND64(sizeof(struct hx_wait_op) + HX_OP_POOL_ENTRIES * sizeof(struct hx_sem_wait))

struct hx_op_pool hx_op_pools[HX_OP_KINDS];

/* The records live on the heap, not in the library's .bss: there they
 * pushed the small globals every call reads onto pages of their own
 * (hot.h says why pages count). */
void hx_reg_op_pool_init(void)
{
	static const size_t rec[HX_OP_KINDS] = { [HX_OP_SIGNAL] = SIGNAL_REC,
						 [HX_OP_WAIT] = WAIT_REC };

	if (OP_POOL_RECORDS == 0)
		return;
	for (unsigned k = 0; k < HX_OP_KINDS; k++) {
		struct hx_op_pool *p = &hx_op_pools[k];
		unsigned char *mem = aligned_alloc(64, OP_POOL_RECORDS * rec[k]);

		if (!mem)
			continue; /* every record of this kind from malloc */
		p->mem = mem;
		p->rec = rec[k];
		atomic_store_explicit(&p->free, ALL_FREE, memory_order_release);
	}
}

/* hx_reg_op_alloc() is inline (registry.h); this is its way out when
 * the record is too large or the pool is empty. */
void *hx_reg_op_heap_alloc(enum hx_op_kind kind, size_t size)
{
	void *op = malloc(size);

	if (op)
		atomic_fetch_add_explicit(&hx_op_pools[kind].from_heap, 1, memory_order_relaxed);
	return op;
}

void hx_reg_op_free(enum hx_op_kind kind, void *op)
{
	struct hx_op_pool *p = &hx_op_pools[kind];
	/* As addresses: a malloc'd record is no part of the pool's block. */
	uintptr_t off = (uintptr_t)op - (uintptr_t)p->mem;

	if (p->mem && (uintptr_t)op >= (uintptr_t)p->mem && off < OP_POOL_RECORDS * p->rec) {
		atomic_fetch_or_explicit(&p->free, (uint64_t)1 << (off / p->rec), memory_order_release);
	} else {
		atomic_fetch_sub_explicit(&p->from_heap, 1, memory_order_relaxed);
		free(op);
	}
}

unsigned hx_reg_op_outstanding(enum hx_op_kind kind)
{
	struct hx_op_pool *p = &hx_op_pools[kind];
	uint64_t taken = p->mem ? ~atomic_load_explicit(&p->free, memory_order_relaxed) & ALL_FREE : 0;

	return (unsigned)__builtin_popcountll(taken) +
	       atomic_load_explicit(&p->from_heap, memory_order_relaxed);
}

/* A forked child: the records still out belong to the parent's pending
 * operations. */
void hx_reg_op_pool_reset(void)
{
	for (unsigned k = 0; k < HX_OP_KINDS; k++) {
		if (hx_op_pools[k].mem)
			atomic_store_explicit(&hx_op_pools[k].free, ALL_FREE, memory_order_relaxed);
		atomic_store_explicit(&hx_op_pools[k].from_heap, 0, memory_order_relaxed);
	}
}
