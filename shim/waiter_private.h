/* SPDX-License-Identifier: MIT */
/*
 * Inside the waiter (waiter.h is its outside): the state its threads
 * share and the bookkeeping of objects with waits that both kinds of
 * thread use.
 *
 *   waiter.c           starts the threads, takes hand-overs and forgets
 *                      objects (the API of waiter.h); the eventfd thread
 *   waiter_multiwait.c the fallback threads (multi-handle syncobj waits)
 *   waiter_objects.c   objects, their pending entries and their release
 *
 * Calls go from the first two to the last, never back.  Everything here
 * is under hx_w.lock unless it says otherwise.
 */
#ifndef HIPEXTSEM_WAITER_PRIVATE_H
#define HIPEXTSEM_WAITER_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "waiter.h"

#define HXW_THREADS_MAX 8     /* hx_waitable.unseen has a bit per thread */
#define HXW_THREADS_DEFAULT 8 /* fallback mode; eventfd mode has one */

/* One waiter thread and the objects it watches. */
struct hxw_shard {
	struct hx_waitable *list; /* objects with pending entries */
	unsigned nlist;
	uint32_t wake;            /* fallback: its wake-up syncobj */
	bool stale;               /* fallback: its set changed since it was built */
	pthread_t thread;
};

struct hxw_state {
	pthread_mutex_t lock;
	const struct hx_sync_dev *dev;
	const struct hx_waiter_ops *ops;
	bool use_eventfd;
	int epfd;
	int kick;                    /* eventfd mode: wakes the thread */
	struct hxw_shard shards[HXW_THREADS_MAX];
	unsigned nshards;            /* threads running; fixed once started */
	struct hx_waitable *zombies; /* forgotten, released by the threads */
	int64_t retry_next;          /* eventfd mode: earliest retry_at of any object */
	/* Submitted, not yet queued on their objects: a lock-free stack (the
	 * newest first), so that a submitting thread never waits for the
	 * lock; it kicks only when the stack was empty. */
	_Atomic(struct hx_wait_entry *) incoming;
	/* Fallback: wake-ups the kernel failed to deliver since the last one
	 * that worked (logged at the first; made up for within
	 * HXW_RETRY_CAP_MS: waiter_multiwait.c). */
	atomic_uint wake_failures;
};

extern struct hxw_state hx_w;

/* Moves the satisfied entries of `obj` to *done and re-arms it, or drops
 * it from its thread's list when none are left.  Binary objects give one
 * entry per signal and are reset to unsignaled when consumed.  `known`,
 * if not NULL, is the timeline's current value (no query); `fired` is how
 * many of the object's eventfd registrations the kernel reported fired
 * (the eventfd's count; 0 where there are none).  A failure is retried
 * later (retry_at), never left with nothing to wake it. */
void hxw_collect_locked(struct hx_waitable *obj, const uint64_t *known, uint64_t fired,
			struct hx_wait_entry **done);
/* eventfd mode: collects the objects whose retry is due at `now` and
 * returns the next retry time (INT64_MAX for none). */
int64_t hxw_retry_due_locked(int64_t now, struct hx_wait_entry **done);
void hxw_list_remove_locked(struct hx_waitable *obj);

/* Queues one submitted entry on its object (see waiter_objects.c). */
void hxw_adopt_locked(struct hx_wait_entry *e, struct hx_wait_entry **done);
/* Takes everything handed over so far, in submission order. */
void hxw_drain_incoming_locked(struct hx_wait_entry **done);
/* Frees the forgotten objects that thread `me` was the last to see. */
void hxw_free_zombies_locked(unsigned me);

/* Calls entry_done for each entry of a list; without the lock. */
void hxw_complete(struct hx_wait_entry *done);

/* Fallback mode: makes the shard's thread rebuild its set. */
bool hxw_wake_locked(struct hxw_shard *sh); /* false: the kernel refused (logged) */
/* Wakes the first thread, which takes the hand-overs. */
void hxw_kick(void);

void *hxw_multiwait_thread(void *arg);

#endif
