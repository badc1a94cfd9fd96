/* SPDX-License-Identifier: MIT */
/*
 * Semaphore objects and pending wait operations of the registry (registry.h;
 * signal.c, wait.c).
 * What the waiter thread sees of them is in waiter.h.
 */
#ifndef HIPEXTSEM_SEM_H
#define HIPEXTSEM_SEM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hipextsem/hip_api.h"
#include "sync.h"
#include "waiter.h"

/* One (semaphore, value) condition of a wait call. */
struct hx_sem_wait {
	struct hx_wait_entry w; /* what the waiter sees */
	struct hx_wait_op *op;
	struct hx_sem *sem;
	bool done; /* satisfied (set under the registry lock) */
};

/* A wait that blocks its calling thread (the host-blocking path, wait.c):
 * on the caller's stack, set done when every condition is satisfied. */
struct hx_host_block {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
};

/* One hipWaitExternalSemaphoresAsync call: the stream waits on one 64-bit
 * slot until it holds >= gen; the slot is written once every condition is
 * satisfied.  A host-blocking wait has no slot: `host` is woken instead. */
struct hx_wait_op {
	volatile uint64_t *slot;
	uint64_t gen;
	uint32_t slot_index;
	uint8_t slot_kind; /* which pool of wait.c the slot came from */
	atomic_uint remaining;
	hipStream_t stream;
	/* When the call was made if the trace is on; otherwise 0 until the
	 * watchdog first sees the wait pending (wait.c: watchdog). */
	int64_t enqueued_ns;
	struct hx_host_block *host; /* NULL: a stream waits on the slot */
	struct hx_wait_op *all_next, *all_prev; /* every pending op, for exit */
	unsigned count;
	struct hx_sem_wait entries[];
};

struct hx_sem {
	uint32_t index, gen; /* registry position; the handle encodes both */
	atomic_int refs;     /* registry + each pending op or callback; 0: free */
	struct hx_waitable w; /* kernel handle (on the registry's device), timeline or not */
	struct hx_sem *spare_next; /* on the registry's list of free records */
};

#endif
