/* SPDX-License-Identifier: MIT */
/*
 * What a semaphore handle is, and where the registry keeps the semaphore
 * it names.  Inline: signal and wait decode every handle of every call
 * on the caller's thread.
 */
#ifndef HIPEXTSEM_HANDLES_H
#define HIPEXTSEM_HANDLES_H

#include <stdatomic.h>
#include <stdint.h>

#include "hipextsem/hip_api.h"
#include "registry.h"

/*
 * A handle is not a pointer: 0x4858 ("HX") in the top 16 bits (never a
 * canonical address, so anything that dereferences one faults at once),
 * a 24-bit generation and a 24-bit registry index + 1.  Lookups compare
 * the generation, and free indices are reused in FIFO order, so a stale
 * handle matches a new semaphore only after 2^24 reuses of its slot.
 */
#define HANDLE_TAG 0x4858000000000000ull /* "HX" in the top bits */
#define HANDLE_TAG_MASK 0xffff000000000000ull
#define INDEX_BITS 24
#define INDEX_MASK ((1u << INDEX_BITS) - 1)
#define GEN_MASK 0xffffffu

/* The position of index `idx`, or NULL if its chunk does not exist yet.
 * Lock-free: chunks are published once and never move.  Chunk 0 covers
 * the first REG_CHUNK0 semaphores, which is all of them in most
 * processes: that case skips the chunk arithmetic. */
static inline struct reg_entry *hx_reg_entry_at(uint32_t idx)
{
	struct reg_entry *chunk;
	unsigned c = 0;

	if (__builtin_expect(idx >= REG_CHUNK0, 0)) {
		c = 31u - (unsigned)__builtin_clz(idx / REG_CHUNK0 + 1);
		if (c >= REG_NCHUNKS)
			return NULL;
		idx -= REG_CHUNK0 * ((1u << c) - 1);
	}
	chunk = atomic_load_explicit(&hx_reg.chunks[c], memory_order_acquire);
	return chunk ? &chunk[idx] : NULL;
}

/* The position a handle names and the generation it carries; NULL if it
 * cannot be one of ours. */
static inline struct reg_entry *hx_reg_decode(hipExternalSemaphore_t h, uint32_t *gen)
{
	uint64_t v = (uint64_t)(uintptr_t)h;
	uint32_t idx = (uint32_t)(v & INDEX_MASK);

	if ((v & HANDLE_TAG_MASK) != HANDLE_TAG || idx == 0)
		return NULL;
	*gen = (uint32_t)((v >> INDEX_BITS) & GEN_MASK);
	return hx_reg_entry_at(idx - 1);
}

#endif
