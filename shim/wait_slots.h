/* SPDX-License-Identifier: MIT */
/*
 * The slots stream waits wait on (wait_slots.c): a wait's stream waits
 * with hipStreamWaitValue64 until its slot holds at least the generation
 * the wait was given; the release writes that generation.  The pools live
 * in the registry (registry.h: struct slot_pool) under its lock.
 */
#ifndef HIPEXTSEM_WAIT_SLOTS_H
#define HIPEXTSEM_WAIT_SLOTS_H

#include <stdint.h>

#include "registry.h"

/* Memory for the pool of `kind`, allocated by the runtime with no lock of
 * the shim's held (no runtime call is made under the registry lock); NULL
 * when the runtime has none. */
void *hx_slot_memory(enum slot_kind kind);
/* Under the registry lock: hands `mem` from hx_slot_memory to the pool
 * (0), or fails (-ENOMEM: the pool's bookkeeping could not grow; `mem`
 * stays with the runtime, not freed under the lock). */
int hx_slot_pool_take_locked(enum slot_kind kind, void *mem);
/* Under the registry lock: a free slot, its index and the generation a
 * wait on it waits for.  -EAGAIN: the pool needs memory (hx_slot_memory,
 * with the lock dropped, then hx_slot_pool_take_locked); -ENOMEM. */
int hx_slot_alloc_locked(enum slot_kind kind, uint32_t *index, volatile uint64_t **slot,
			 uint64_t *gen);
/* Under the registry lock: the slot back to its pool; its next wait uses a
 * generation above `gen`. */
void hx_slot_free_locked(enum slot_kind kind, uint32_t index, volatile uint64_t *slot,
			 uint64_t gen);
/* Releases the stream waiting on `slot` for `gen` (a release store). */
void hx_slot_release(volatile uint64_t *slot, uint64_t gen);

#endif
