/* SPDX-License-Identifier: MIT */
/*
 * The waiter: turns kernel syncobj signals into completions of waits.
 *
 * It knows sync objects (through sync.h) and the records below, nothing of
 * semaphores, handles or streams.  Its owner (the semaphore registry)
 * embeds a struct hx_waitable in each semaphore, hands in wait entries,
 * and learns of their completion through the callbacks it registers: calls
 * only go down, from the registry to the waiter.
 */
#ifndef HIPEXTSEM_WAITER_H
#define HIPEXTSEM_WAITER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sync.h"

/* A failed kernel call on a wait's way is retried after 1, 2, 4 ... ms, at
 * most a second apart; after HXW_RETRY_MAX failures in a row (about 8 s)
 * the object's waits are given up (waiter_objects.c, retry_later_locked),
 * and the host-blocking wait's consume of a binary signal fails (wait.c). */
#define HXW_RETRY_MAX 16
#define HXW_RETRY_CAP_MS 1000

/* One sync object as the waiter sees it, embedded in its owner's object.
 * `handle` and `timeline` are set by the owner before the first wait and
 * never change; everything else belongs to the waiter (under its lock). */
struct hx_waitable {
	uint32_t handle;
	bool timeline;

	int efd;           /* eventfd, -1 until the first wait; kept until forgotten */
	uint32_t nregs;    /* kernel eventfd registrations on efd not yet seen to fire */
	uint64_t armed;    /* the lowest point registered; meaningful while nregs > 0 */
	struct hx_wait_entry *pending; /* timeline: ascending by value; binary: FIFO */
	struct hx_waitable *wnext, *wprev; /* the waiter's list of objects with waits */
	bool in_wlist;
	uint8_t shard;    /* the waiter thread whose list holds it (while in_wlist) */
	uint8_t unseen;   /* forgotten: threads that may still hold a pointer to it */
	uint8_t failures; /* consecutive failed collects or arms (retried, then given up) */
	int64_t retry_at; /* CLOCK_MONOTONIC time of the next retry after a failure, 0 none */
};

/* One condition: `obj` reaches `value` (timeline) or is signaled (binary;
 * the waiter then resets it, one entry per signal).  A timeline condition
 * for value 0 holds at once: every timeline is at 0 or above (the kernel
 * would read point 0 as "the current fence", which is not that).  The
 * owner embeds it in a larger record and finds that again from the entry. */
struct hx_wait_entry {
	struct hx_wait_entry *next; /* submission list, then the object's pending list */
	struct hx_waitable *obj;
	uint64_t value;
};

struct hx_waiter_ops {
	/* An entry's condition holds (or, as a last resort after the kernel
	 * failed it again and again, it is given up, logged as an error).
	 * Called without the waiter's lock, once per entry. */
	void (*entry_done)(struct hx_wait_entry *entry);
	/* Stuck-wait watchdog: reports what is due at `now_ns` and returns
	 * the CLOCK_MONOTONIC time at which it next has something to check,
	 * INT64_MAX for never.  Run by the waiter thread before each sleep. */
	int64_t (*watchdog)(int64_t now_ns);
	/* An object handed to hx_waiter_forget may be freed now. */
	void (*release)(struct hx_waitable *obj);
};

/* Starts the threads on first call (later calls return 0 at once, with
 * one load: every wait calls it). */
extern atomic_bool hx_waiter_started;
int hx_waiter_start_slow(const struct hx_sync_dev *dev, const struct hx_waiter_ops *ops);
static inline int hx_waiter_start(const struct hx_sync_dev *dev, const struct hx_waiter_ops *ops)
{
	if (atomic_load_explicit(&hx_waiter_started, memory_order_acquire))
		return 0;
	return hx_waiter_start_slow(dev, ops);
}

/* Hands a list of entries (linked through `next`, in order) to the
 * thread, which queues each on its object and arms the notification.
 * Lock-free; wakes the thread only if nothing was waiting to be taken.
 * The entries belong to the waiter until entry_done is called for each. */
void hx_waiter_submit(struct hx_wait_entry *head);

/* The object has no entries and will get none: the waiter drops its
 * eventfd.  True if the caller may free it at once; false if the thread
 * may still hold a pointer to it and will call ops->release later. */
bool hx_waiter_forget(struct hx_waitable *obj);

/* The watchdog's next deadline moved earlier than the waiter's sleep. */
void hx_waiter_kick(void);

void hx_waiter_reset_after_fork(void);
const char *hx_waiter_mode(void);

#endif
