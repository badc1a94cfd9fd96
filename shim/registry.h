/* SPDX-License-Identifier: MIT */
/*
 * The registry's state, shared by registry.c (import, destroy, device,
 * stats, fork), handles.c (the argument checks), op_pool.c (per-call
 * records), signal.c and wait.c: one struct under one lock, what a
 * handle is and where the table keeps the semaphore it names, and the
 * helpers the operations call.  Calls only go down: signal.c, wait.c and
 * handles.c call the registry, never the reverse, and the registry
 * reaches the waiter through waiter.h.
 */
#ifndef HIPEXTSEM_REGISTRY_H
#define HIPEXTSEM_REGISTRY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hipextsem/hip_api.h"
#include "hot.h"
#include "log.h"
#include "runtime.h"
#include "sem.h"
#include "sync.h"

#define SLOTS_PER_CHUNK 512u

/* One registry position.  Written under the lock, read without it by
 * the lock-free lookup of signal and wait (handles.h: hx_acquire). */
struct reg_entry {
	_Atomic(struct hx_sem *) sem;
	_Atomic uint32_t gen;
};

/* The table grows by chunks that never move: chunk c holds 256 << c
 * positions, so 17 of them cover the 2^24 indices a handle can name. */
#define REG_CHUNK0 256u
#define REG_NCHUNKS 17u
_Static_assert((uint64_t)REG_CHUNK0 * ((1u << REG_NCHUNKS) - 1) >= (1u << 24),
	       "the chunks cover every index a handle can name");

/* Wait slots: 64-bit words a stream waits on with hipStreamWaitValue64.
 * Host-memory slots come 512 at a time from hipHostMalloc(0), which clr
 * makes fine-grained (coherent) host memory.  Signal-memory slots, the
 * fallback for runtimes that refuse a wait on that memory (clr's
 * ihipStreamOperation does when GPU_STREAMOPS_CP_WAIT=1), are one
 * hipExtMallocWithFlags(8, hipMallocSignalMemory) each, made on first use. */
enum slot_kind {
	SLOT_HOST,
	SLOT_SIGNAL,
	SLOT_KINDS,
};

struct slot_chunk {
	volatile uint64_t *mem;                  /* SLOT_HOST: the chunk's array */
	volatile uint64_t *sig[SLOTS_PER_CHUNK]; /* SLOT_SIGNAL: one word each */
	uint64_t last[SLOTS_PER_CHUNK];
};

/* A slot given back recently, with the value its next wait uses. */
struct slot_recent {
	volatile uint64_t *slot;
	uint64_t next_gen;
	uint32_t index;
};

#define SLOT_RECENT 8

/* Free slots: the last few given back sit in `recent` (a wait takes and
 * returns its slot there without reading the pool's arrays and chunks,
 * three more pages after a context switch); the rest are on the
 * free_slots stack, their next value in their chunk's `last`. */
struct slot_pool {
	struct slot_chunk **chunks;
	uint32_t nchunks;
	uint32_t *free_slots;
	uint32_t nfree_slots;
	uint32_t nrecent;
	struct slot_recent recent[SLOT_RECENT];
};

struct signal_entry {
	struct hx_sem *sem;
	uint64_t value;
};

struct signal_op {
	hipStream_t stream;
	int64_t enqueued_ns;
	unsigned count;
	/* Who frees the record (signal.c): the host function, the enqueuing
	 * call once it has settled the record, or nobody when it was kept
	 * for a capture that may have recorded it. */
	_Atomic unsigned state;
	struct signal_entry entries[];
};

/* How a wait holds its stream.  The first two are asynchronous (the
 * waiter thread writes the slot); the last blocks the caller.  The path
 * only ever moves down this list, and only because the runtime refused
 * to enqueue the one above (or HIPEXTSEM_HOST_WAIT=1). */
enum wait_path {
	WAIT_PATH_UNKNOWN,
	WAIT_PATH_STREAM_VALUE,  /* hipStreamWaitValue64 on a host-memory slot */
	WAIT_PATH_SIGNAL_MEMORY, /* the same on a signal-memory slot */
	WAIT_PATH_HOST,          /* the calling thread blocks in the kernel */
};


struct hx_registry {
	pthread_mutex_t lock; /* everything below */
	pid_t pid;

	bool dev_tried;
	int dev_err;
	struct hx_sync_dev dev;

	_Atomic(struct reg_entry *) chunks[REG_NCHUNKS];
	uint32_t cap; /* positions in the chunks allocated so far */
	uint32_t *free_idx;
	uint32_t free_head, nfree;
	uint32_t nlive;
	/* Semaphore records are never handed back to malloc: a lock-free
	 * lookup may still touch one that was just destroyed (handles.h).
	 * Freed records are pushed on `spare_in` from any thread, and taken
	 * to `spare` (under the lock) by import. */
	_Atomic(struct hx_sem *) spare_in;
	struct hx_sem *spare;

	struct slot_pool pools[SLOT_KINDS];

	struct hx_wait_op *ops, *ops_tail; /* pending waits, oldest first */
	struct hx_wait_op *watch;         /* oldest wait the watchdog has not reported */
	int64_t stuck_ns;                 /* HIPEXTSEM_STUCK_MS; 0 = off */
	unsigned npending_waits;

	int64_t waiter_wakes_at; /* the waiter's next watchdog check */
	bool watchdog_idle;      /* it knows there is nothing pending */

	_Atomic enum wait_path wait_path; /* written under lock, read without */
	int wait_value_attr;     /* hipDeviceAttributeCanUseStreamWaitValue, -1 unread */
	char wait_path_why[200]; /* why wait_path is what it is */
	bool atexit_registered;
	bool exiting;
};

extern struct hx_registry hx_reg;

/* ---- handles ---------------------------------------------------------- */

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

/* The handle of a registered semaphore. */
static inline hipExternalSemaphore_t hx_reg_handle(const struct hx_sem *sem)
{
	return (hipExternalSemaphore_t)(uintptr_t)(HANDLE_TAG |
						   ((uint64_t)(sem->gen & GEN_MASK) << INDEX_BITS) |
						   ((uint64_t)sem->index + 1));
}

/* The semaphore a handle names, NULL for anything that is not a live
 * handle; under the registry lock (import, destroy, graph nodes). */
static inline struct hx_sem *hx_reg_lookup_locked(hipExternalSemaphore_t h)
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

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* Without a usable device the runtime's own answers are the right ones. */
#define FORWARD_IF_UNUSABLE(fn, ...)                                                        \
	do {                                                                                \
		if (!hx_runtime_usable()) {                                                 \
			hipError_t first_ = hx_runtime_take_first_answer();                 \
			if (first_ != hipSuccess)                                           \
				return first_;                                              \
			if (!hx_rt.fn) {                                                    \
				hx_err("the HIP runtime is unusable and lacks hip" #fn);    \
				return hipErrorNotSupported;                                \
			}                                                                   \
			return hx_rt.fn(__VA_ARGS__);                                       \
		}                                                                           \
	} while (0)

/* How every operation starts: the registry set up, and the runtime's own
 * answer when there is no usable device. */
#define SET_UP_OR_FORWARD(fn, ...)                                                          \
	do {                                                                                \
		if (!hx_reg_init())                                                         \
			return hipErrorNotInitialized;                                      \
		FORWARD_IF_UNUSABLE(fn, __VA_ARGS__);                                       \
	} while (0)

/* The same for signal and wait, skipped with one load (hx_op_ready(),
 * ops.h) once it has succeeded. */
#define SET_UP_ONCE_OR_FORWARD(fn, ...)                                                     \
	do {                                                                                \
		if (!hx_op_ready()) {                                                       \
			SET_UP_OR_FORWARD(fn, __VA_ARGS__);                                 \
			hx_reg_mark_ready();                                                \
		}                                                                           \
	} while (0)

/* Resolves the runtime and sets up the registry once; false when the
 * runtime cannot be used at all. */
bool hx_reg_init(void);

/* Sets what hx_op_ready() reads (ops.h): hx_reg_init() succeeded and the
 * runtime has a usable device. */
void hx_reg_mark_ready(void);

/* The per-call records of signal (struct signal_op) and wait (struct
 * hx_wait_op) with up to HX_OP_POOL_ENTRIES semaphores come from a
 * lock-free pool of 32 per kind (op_pool.c); larger ones, or any when
 * the pool is empty or not set up, from malloc.  Any thread may free. */
enum hx_op_kind {
	HX_OP_SIGNAL,
	HX_OP_WAIT,
	HX_OP_KINDS,
};
#define HX_OP_POOL_ENTRIES 16

struct hx_op_pool {
	_Atomic uint64_t free; /* bit i: record i is free */
	unsigned char *mem;
	size_t rec;
	atomic_uint from_heap; /* records of this kind from malloc, not yet freed */
};
extern struct hx_op_pool hx_op_pools[HX_OP_KINDS];
void *hx_reg_op_heap_alloc(enum hx_op_kind kind, size_t size);

/* Inline: signal and wait take one record per call. */
HX_INLINE void *hx_reg_op_alloc(enum hx_op_kind kind, size_t size)
{
	struct hx_op_pool *p = &hx_op_pools[kind];

	if (size <= p->rec) {
		uint64_t m = atomic_load_explicit(&p->free, memory_order_relaxed);

		while (m) {
			unsigned i = (unsigned)__builtin_ctzll(m);

			if (atomic_compare_exchange_weak_explicit(&p->free, &m, m & ~((uint64_t)1 << i),
								  memory_order_acquire,
								  memory_order_relaxed))
				return p->mem + (size_t)i * p->rec;
		}
	}
	return hx_reg_op_heap_alloc(kind, size);
}
void hx_reg_op_free(enum hx_op_kind kind, void *op);
/* Once, at the registry's set-up: until then every record is malloc'd. */
void hx_reg_op_pool_init(void);
/* Records of `kind` out: the signals or waits enqueued and not yet done
 * (and any call between its record and its enqueue). */
unsigned hx_reg_op_outstanding(enum hx_op_kind kind);
void hx_reg_op_pool_reset(void);

/* The last reference destroys the kernel handle and frees the semaphore
 * (through the waiter when it still knows it). */
void hx_sem_unref(struct hx_sem *sem);
/* The waiter's release callback (waiter.h): frees a forgotten semaphore. */
void hx_reg_release_waitable(struct hx_waitable *obj);

/* The argument checks of a signal or wait that runs later (a graph node):
 * the same checks and lookups, then `check` (may be NULL) on the
 * looked-up semaphores, nothing held afterwards. */
typedef hipError_t hx_reg_check_fn(const char *what, const hipExternalSemaphore_t *hs,
				   struct hx_sem **sems, const void *params, unsigned n);
hipError_t hx_reg_validate_args(const char *what, const hipExternalSemaphore_t *hs,
				const void *params, unsigned n, hx_reg_check_fn *check);
/* The runtime refused to enqueue `prim` on `stream`: the stock answer. */
hipError_t hx_reg_map_enqueue_error(hipError_t err, const char *prim, hipStream_t stream);

/* A binary semaphore's fence.value is ignored, as in CUDA; a nonzero one
 * is logged, once per process (it may be a timeline imported as
 * OpaqueFd before it had a point: docs/semantics.md).  Signal and wait
 * call it for each binary semaphore. */
void hx_reg_note_binary_value(const char *what, hipExternalSemaphore_t h,
			      unsigned long long value);
HX_INLINE void hx_reg_binary_value(const char *what, hipExternalSemaphore_t h,
				   unsigned long long value)
{
	if (__builtin_expect(value != 0, 0))
		hx_reg_note_binary_value(what, h, value);
}

#endif
