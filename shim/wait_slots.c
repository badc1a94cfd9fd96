/* SPDX-License-Identifier: MIT */
/*
 * The slots stream waits wait on (wait_slots.h): pinned 64-bit words, in
 * host memory (chunks) or signal memory (one word each), reused with a
 * growing generation so that a late write to a reused slot is never taken
 * for a new release.
 */
#include "wait_slots.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "registry.h"
#include "runtime.h"

/*
 * No runtime call is made under the registry lock (at_exit waits for it):
 * the memory a slot needs, a chunk of host memory or one word of signal
 * memory, is allocated with the lock not held (hx_slot_memory) and handed to
 * the pool under it (hx_slot_pool_take_locked).
 */
void *hx_slot_memory(enum slot_kind kind)
{
	size_t size = kind == SLOT_HOST ? SLOTS_PER_CHUNK * sizeof(uint64_t) : sizeof(uint64_t);
	int mode = hx_runtime_capture_relaxed();
	void *mem = NULL;
	hipError_t err;

	if (kind == SLOT_HOST)
		err = hx_rt.HostMalloc(&mem, size, 0);
	else
		err = hx_rt.ExtMallocWithFlags ?
			      hx_rt.ExtMallocWithFlags(&mem, size, HX_MALLOC_SIGNAL_MEMORY) :
			      hipErrorNotSupported;
	hx_runtime_capture_restore(mode);
	if (err != hipSuccess || !mem) {
		if (kind == SLOT_HOST)
			hx_err("hipHostMalloc for wait slots failed (error %d)", (int)err);
		else
			hx_err("hipExtMallocWithFlags(hipMallocSignalMemory) for a wait slot failed "
			       "(error %d)", (int)err);
		return NULL;
	}
	/* Signal memory: the word is written only by us. */
	memset(mem, 0, size);
	return mem;
}

/* A chunk of SLOTS_PER_CHUNK free slots; `mem` is its host memory
 * (SLOT_HOST) or NULL (SLOT_SIGNAL: each slot gets its word later). */
static int pool_grow_locked(struct slot_pool *pool, void *mem)
{
	struct slot_chunk **nc;
	struct slot_chunk *c;
	uint32_t *nf;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->mem = mem;
	nc = realloc(pool->chunks, (pool->nchunks + 1) * sizeof(*nc));
	if (nc)
		pool->chunks = nc;
	nf = realloc(pool->free_slots, (pool->nchunks + 1) * SLOTS_PER_CHUNK * sizeof(*nf));
	if (nf)
		pool->free_slots = nf;
	if (!nc || !nf) {
		free(c);
		return -ENOMEM;
	}
	pool->chunks[pool->nchunks] = c;
	for (uint32_t i = SLOTS_PER_CHUNK; i > 0; i--)
		pool->free_slots[pool->nfree_slots++] = pool->nchunks * SLOTS_PER_CHUNK + i - 1;
	pool->nchunks++;
	return 0;
}

/* Memory from slot_memory joins the pool, whatever other threads did
 * meanwhile: host memory as a new chunk, a signal word on the free slot
 * nearest the top of the stack that has none (a new chunk's if none
 * has).  On failure the memory stays with the runtime. */
int hx_slot_pool_take_locked(enum slot_kind kind, void *mem)
{
	struct slot_pool *pool = &hx_reg.pools[kind];

	if (kind == SLOT_HOST)
		return pool_grow_locked(pool, mem);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t n = pool->nfree_slots; n > 0; n--) {
			uint32_t i = pool->free_slots[n - 1];
			struct slot_chunk *c = pool->chunks[i / SLOTS_PER_CHUNK];

			if (!c->sig[i % SLOTS_PER_CHUNK]) {
				c->sig[i % SLOTS_PER_CHUNK] = mem;
				return 0;
			}
		}
		if (pass == 0) {
			int ret = pool_grow_locked(pool, NULL);
			if (ret)
				return ret;
		}
	}
	return -ENOMEM;
}

/* -EAGAIN: the slot needs memory from the runtime; the caller gets it
 * with the lock dropped (hx_slot_memory) and gives it to the pool. */
int hx_slot_alloc_locked(enum slot_kind kind, uint32_t *index, volatile uint64_t **slot,
			 uint64_t *gen)
{
	struct slot_pool *pool = &hx_reg.pools[kind];
	struct slot_chunk *c;
	uint32_t i, k;

	if (pool->nrecent) {
		const struct slot_recent *r = &pool->recent[--pool->nrecent];

		*index = r->index;
		*slot = r->slot;
		*gen = r->next_gen;
		return 0;
	}
	if (pool->nfree_slots == 0) {
		int ret;

		if (kind == SLOT_HOST)
			return -EAGAIN;
		ret = pool_grow_locked(pool, NULL);
		if (ret)
			return ret;
	}
	i = pool->free_slots[pool->nfree_slots - 1];
	c = pool->chunks[i / SLOTS_PER_CHUNK];
	k = i % SLOTS_PER_CHUNK;
	if (kind == SLOT_SIGNAL && !c->sig[k])
		return -EAGAIN;
	pool->nfree_slots--;
	*index = i;
	*slot = kind == SLOT_HOST ? &c->mem[k] : c->sig[k];
	/* Values only grow: a stream still reading an older value of this
	 * slot (>= its own gen) stays released. */
	*gen = c->last[k] + 1;
	return 0;
}

/* The slot is free again once written (released) or never enqueued.
 * Its next wait uses a value above `gen`, the one this wait was given:
 * values only grow, so a stream still reading an older value of the
 * slot stays released. */
void hx_slot_free_locked(enum slot_kind kind, uint32_t index, volatile uint64_t *slot,
			 uint64_t gen)
{
	struct slot_pool *pool = &hx_reg.pools[kind];
	struct slot_chunk *c;

	if (pool->nrecent < SLOT_RECENT) {
		pool->recent[pool->nrecent++] = (struct slot_recent){
			.slot = slot, .next_gen = gen + 1, .index = index
		};
		return;
	}
	c = pool->chunks[index / SLOTS_PER_CHUNK];
	if (gen > c->last[index % SLOTS_PER_CHUNK])
		c->last[index % SLOTS_PER_CHUNK] = gen;
	pool->free_slots[pool->nfree_slots++] = index;
}

void hx_slot_release(volatile uint64_t *slot, uint64_t gen)
{
	__atomic_store_n(slot, gen, __ATOMIC_RELEASE);
}
