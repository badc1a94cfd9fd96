/* SPDX-License-Identifier: MIT */
/*
 * Semaphore objects and pending operations, shared by the operations
 * (sem.c) and the waiter thread (waiter.c).
 */
#ifndef HIPEXTSEM_SEM_H
#define HIPEXTSEM_SEM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hipextsem/hip_api.h"
#include "sync.h"

struct hx_wait_op;

/* One (semaphore, value) condition of a wait call. */
struct hx_wait_entry {
	struct hx_wait_entry *next; /* in the semaphore's pending list */
	struct hx_wait_op *op;
	struct hx_sem *sem;
	uint64_t value; /* timeline point; 0 for binary */
	bool done;      /* satisfied (set under the registry lock) */
};

/* One hipWaitExternalSemaphoresAsync call: the stream waits on one pinned
 * 64-bit slot until it holds >= gen; the slot is written once every entry
 * is satisfied. */
struct hx_wait_op {
	volatile uint64_t *slot;
	uint64_t gen;
	uint32_t slot_index;
	uint8_t slot_kind; /* which pool of sem.c the slot came from */
	atomic_uint remaining;
	hipStream_t stream;
	int64_t enqueued_ns;
	struct hx_wait_op *all_next, *all_prev; /* every pending op, for exit */
	unsigned count;
	struct hx_wait_entry entries[];
};

struct hx_sem {
	uint32_t index, gen;   /* registry position; the handle encodes both */
	atomic_int refs;       /* registry + each pending op or callback */
	bool timeline;
	uint32_t handle;       /* kernel syncobj handle on hx_sem_dev() */

	/* Owned by the waiter, under its lock. */
	int efd;                      /* eventfd, -1 until the first wait */
	uint64_t armed;               /* point the eventfd is armed for, or UINT64_MAX */
	struct hx_wait_entry *pending; /* timeline: ascending by value; binary: FIFO */
	struct hx_sem *wnext, *wprev; /* waiter's list of semaphores with waits */
	bool in_wlist;
};

const struct hx_sync_dev *hx_sem_dev(void);
void hx_sem_unref(struct hx_sem *sem);

/* Completion hook, called by the waiter (without its lock held) once an
 * entry's condition holds. */
void hx_sem_entry_done(struct hx_wait_entry *entry);

/* Stuck-wait watchdog, run by the waiter thread: logs (once) every wait
 * pending longer than HIPEXTSEM_STUCK_MS and returns the CLOCK_MONOTONIC
 * time at which it next has something to check, INT64_MAX for never. */
int64_t hx_sem_watchdog(int64_t now_ns);

/* ---- waiter.c ---- */
int hx_waiter_start(const struct hx_sync_dev *dev);
/* Hands the entries of one wait call to the waiter thread, which queues
 * each on its semaphore and arms the kernel notification.  One wake-up per
 * call at most (none if the thread is already due to look). */
void hx_waiter_submit(struct hx_wait_entry *entries, unsigned n);
/* The semaphore is dead: the waiter drops its eventfd and frees it (the
 * caller must not touch it afterwards). */
void hx_waiter_forget(struct hx_sem *sem);
/* The watchdog's next deadline may have moved earlier: recompute it. */
void hx_waiter_kick(void);
void hx_waiter_reset_after_fork(void);
const char *hx_waiter_mode(void);

#endif
