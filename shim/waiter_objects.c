/* SPDX-License-Identifier: MIT */
/*
 * The waiter's objects: which objects have waits, on which thread's list,
 * their pending entries in order, arming their notification, collecting
 * what the kernel signaled, and freeing forgotten objects once no thread
 * can still hold a pointer to them (waiter_private.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "hot.h"
#include "log.h"
#include "waiter_private.h"

struct hxw_state hx_w = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.epfd = -1,
	.kick = -1,
	.retry_next = INT64_MAX,
};

/* An object that gets its first pending entry joins the shortest list. */
static void list_add_locked(struct hx_waitable *obj)
{
	struct hxw_shard *sh = &hx_w.shards[0];

	if (obj->in_wlist)
		return;
	obj->shard = 0;
	for (unsigned i = 1; i < hx_w.nshards; i++)
		if (hx_w.shards[i].nlist < sh->nlist) {
			sh = &hx_w.shards[i];
			obj->shard = (uint8_t)i;
		}
	obj->wprev = NULL;
	obj->wnext = sh->list;
	if (sh->list)
		sh->list->wprev = obj;
	sh->list = obj;
	obj->in_wlist = true;
	sh->nlist++;
}

void hxw_list_remove_locked(struct hx_waitable *obj)
{
	struct hxw_shard *sh = &hx_w.shards[obj->shard];

	if (!obj->in_wlist)
		return;
	if (obj->wprev)
		obj->wprev->wnext = obj->wnext;
	else
		sh->list = obj->wnext;
	if (obj->wnext)
		obj->wnext->wprev = obj->wprev;
	obj->wnext = obj->wprev = NULL;
	obj->in_wlist = false;
	sh->nlist--;
}

/* eventfd mode: the object's eventfd, made and added to the epoll set on
 * its first wait and kept until the object is forgotten. */
static int ensure_efd_locked(struct hx_waitable *obj)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = obj };
	int ret;

	if (obj->efd >= 0)
		return 0;
	obj->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (obj->efd < 0) {
		ret = -errno;
		hx_err("eventfd() for syncobj %u failed: %s (raise RLIMIT_NOFILE?)", obj->handle,
		       strerror(-ret));
		return ret;
	}
	if (epoll_ctl(hx_w.epfd, EPOLL_CTL_ADD, obj->efd, &ev)) {
		ret = -errno;
		hx_err("epoll_ctl(ADD) for syncobj %u failed: %s", obj->handle, strerror(-ret));
		close(obj->efd);
		obj->efd = -1;
		return ret;
	}
	obj->nregs = 0;
	return 0;
}

/*
 * Arms the object's eventfd for its head entry, unless a registration for
 * that point (or an earlier one) is still outstanding.  Each
 * DRM_IOCTL_SYNCOBJ_EVENTFD registration is one-shot: the kernel drops it
 * once it has bumped the eventfd (drm_syncobj.c, syncobj_eventfd_entry_fence_func).
 * So the object counts the registrations it made and takes off those the
 * eventfd's count says fired (hxw_collect_locked): "armed" means "a
 * registration still outstanding", never "armed once".  Several can be
 * outstanding on a timeline (a lower point armed while a higher one is).
 */
HX_HOT_PATH
static int arm_locked(struct hx_waitable *obj)
{
	uint64_t point;
	int ret;

	if (!obj->pending || !hx_w.use_eventfd)
		return 0;
	ret = ensure_efd_locked(obj);
	if (ret)
		return ret;
	point = obj->timeline ? obj->pending->value : 0;
	if (obj->nregs && obj->armed <= point)
		return 0;
	ret = hx_sync_eventfd(hx_w.dev, obj->handle, point, obj->efd);
	if (ret) {
		hx_err("DRM_IOCTL_SYNCOBJ_EVENTFD(handle %u, point %llu) failed: %s", obj->handle,
		       (unsigned long long)point, strerror(-ret));
		return ret;
	}
	if (!obj->nregs || point < obj->armed)
		obj->armed = point;
	obj->nregs++;
	return 0;
}

/* Moves every pending entry of `obj` to *done. */
static void give_up_locked(struct hx_waitable *obj, struct hx_wait_entry **done)
{
	while (obj->pending) {
		struct hx_wait_entry *e = obj->pending;
		obj->pending = e->next;
		e->next = *done;
		*done = e;
	}
	hxw_list_remove_locked(obj);
}

/*
 * `what` failed on `obj` with -err: its waits stay queued and the object is
 * looked at again after a backoff (the eventfd thread's retry deadline;
 * the fallback threads leave it out of their sets until then).  Only after
 * HXW_RETRY_MAX failures in a row are its waits released without their
 * signal: an early pass, which the semantics forbid, but a stream held
 * forever by a kernel that keeps failing is worse.  Logged at each
 * doubling of the streak, as an error when given up.
 */
static void retry_later_locked(struct hx_waitable *obj, const char *what, int err,
			       struct hx_wait_entry **done)
{
	unsigned n = ++obj->failures;
	int64_t ms;

	if (n >= HXW_RETRY_MAX) {
		unsigned count = 0;
		for (struct hx_wait_entry *e = obj->pending; e; e = e->next)
			count++;
		hx_err("%s on syncobj %u failed %u times in a row (last: %s): its %u pending "
		       "wait(s) are released WITHOUT their signal", what, obj->handle, n,
		       strerror(err), count);
		give_up_locked(obj, done);
		obj->failures = 0;
		obj->retry_at = 0;
		return;
	}
	ms = (int64_t)1 << (n - 1);
	if (ms > HXW_RETRY_CAP_MS)
		ms = HXW_RETRY_CAP_MS;
	if ((n & (n - 1)) == 0)
		hx_warn("%s on syncobj %u failed: %s; its waits stay queued, retried in %lld ms "
			"(failure %u of at most %u)", what, obj->handle, strerror(err),
			(long long)ms, n, HXW_RETRY_MAX);
	obj->retry_at = hx_now_ns() + ms * 1000000;
	if (hx_w.use_eventfd && obj->retry_at < hx_w.retry_next) {
		hx_w.retry_next = obj->retry_at;
		hxw_kick(); /* the thread may be asleep with a later deadline */
	}
}

/* The body of hxw_collect_locked for a timeline: false on a failure. */
static bool collect_timeline_locked(struct hx_waitable *obj, const uint64_t *known,
				    uint64_t fired, struct hx_wait_entry **done)
{
	uint64_t cur = 0;
	int ret = known ? (cur = *known, 0) : hx_sync_query(hx_w.dev, obj->handle, &cur);

	/* Registrations at or below the current value have fired, or are
	 * firing now (the count arrives with the next event and is then
	 * taken off a fresh registration: at worst one spare, never one
	 * missing).  Higher ones may still be outstanding and are forgotten
	 * here: a spare registration later, never a missing one. */
	if (obj->nregs && (fired >= obj->nregs || (!ret && cur >= obj->armed)))
		obj->nregs = 0;
	else if (obj->nregs)
		obj->nregs -= (uint32_t)fired;
	if (ret) {
		retry_later_locked(obj, "DRM_IOCTL_SYNCOBJ_QUERY", -ret, done);
		return false;
	}
	while (obj->pending && obj->pending->value <= cur) {
		struct hx_wait_entry *e = obj->pending;
		obj->pending = e->next;
		e->next = *done;
		*done = e;
	}
	return true;
}

/* The body of hxw_collect_locked for a binary object: false on a failure. */
static bool collect_binary_locked(struct hx_waitable *obj, uint64_t fired,
				  struct hx_wait_entry **done)
{
	struct hx_wait_entry *e;
	int ret;

	/* At most one registration is outstanding on a binary object (all
	 * are for point 0).  If it fired, it is gone, whatever the syncobj
	 * holds now: another consumer (the same syncobj imported twice, a
	 * second process) or an external reset may have taken the signal,
	 * and then the object must be armed again for the next one. */
	if (fired)
		obj->nregs = fired >= obj->nregs ? 0 : obj->nregs - (uint32_t)fired;
	if (!obj->pending)
		return true;
	ret = hx_sync_poll(hx_w.dev, obj->handle, 0);
	if (ret == -ETIME)
		return true; /* not signaled (any more): armed again below */
	if (ret) {
		retry_later_locked(obj, "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT (poll)", -ret, done);
		return false;
	}
	/* One wait per signal: the signal is consumed only once the reset
	 * took, or the next wait would pass on the same signal. */
	ret = hx_sync_reset(hx_w.dev, obj->handle);
	if (ret) {
		retry_later_locked(obj, "DRM_IOCTL_SYNCOBJ_RESET", -ret, done);
		return false;
	}
	e = obj->pending;
	obj->pending = e->next;
	e->next = *done;
	*done = e;
	return true;
}

/* (waiter_private.h) */
void hxw_collect_locked(struct hx_waitable *obj, const uint64_t *known, uint64_t fired,
			struct hx_wait_entry **done)
{
	bool ok = obj->timeline ? collect_timeline_locked(obj, known, fired, done)
				: collect_binary_locked(obj, fired, done);
	int ret;

	if (!ok)
		return;
	if (!obj->pending) {
		hxw_list_remove_locked(obj);
		obj->failures = 0;
		obj->retry_at = 0;
		return;
	}
	ret = arm_locked(obj);
	if (ret) {
		retry_later_locked(obj, "arming the eventfd", -ret, done);
		return;
	}
	obj->failures = 0;
	obj->retry_at = 0;
}

/* (waiter_private.h)  Failures are rare, so the one list is walked. */
int64_t hxw_retry_due_locked(int64_t now, struct hx_wait_entry **done)
{
	int64_t next = INT64_MAX;

	if (hx_w.retry_next > now)
		return hx_w.retry_next;
	hx_w.retry_next = INT64_MAX;
	for (unsigned i = 0; i < hx_w.nshards; i++) {
		struct hx_waitable *s = hx_w.shards[i].list, *after;

		for (; s; s = after) {
			after = s->wnext; /* a give-up takes `s` off the list */
			if (!s->retry_at)
				continue;
			if (s->retry_at <= now) {
				s->retry_at = 0;
				hxw_collect_locked(s, NULL, 0, done);
			}
			if (s->retry_at && s->retry_at < next)
				next = s->retry_at;
		}
	}
	if (next < hx_w.retry_next)
		hx_w.retry_next = next;
	return hx_w.retry_next;
}

/* A forgotten object a thread may still hold a stale pointer to (from its
 * last epoll_wait or multi-wait) is freed once every thread has come back
 * here, between two of its waits, when no such pointer can exist any
 * more.  `me` is the calling thread's index. */
void hxw_free_zombies_locked(unsigned me)
{
	struct hx_waitable **p = &hx_w.zombies;

	while (*p) {
		struct hx_waitable *z = *p;

		z->unseen &= (uint8_t)~(1u << me);
		if (z->unseen) {
			p = &z->wnext;
			continue;
		}
		*p = z->wnext;
		hx_w.ops->release(z);
	}
}

void hxw_complete(struct hx_wait_entry *done)
{
	while (done) {
		struct hx_wait_entry *next = done->next;
		hx_w.ops->entry_done(done);
		done = next;
	}
}

static void insert_locked(struct hx_wait_entry *e)
{
	struct hx_waitable *obj = e->obj;
	struct hx_wait_entry **p = &obj->pending;

	if (obj->timeline)
		while (*p && (*p)->value <= e->value)
			p = &(*p)->next;
	else
		while (*p)
			p = &(*p)->next;
	e->next = *p;
	*p = e;
}

/* Queues one submitted entry on its object and arms the notification.
 * A timeline entry for value 0 holds already and is handed back at once.
 * An object that cannot be armed keeps the entry and is retried later. */
HX_HOT_PATH
void hxw_adopt_locked(struct hx_wait_entry *e, struct hx_wait_entry **done)
{
	struct hx_waitable *obj = e->obj;
	int ret;

	if (obj->timeline && e->value == 0) {
		e->next = *done;
		*done = e;
		return;
	}
	insert_locked(e);
	list_add_locked(obj);
	if (!hx_w.use_eventfd) {
		if (obj->pending == e)
			hx_w.shards[obj->shard].stale = true; /* a new head: the set changed */
		return;
	}
	/* Waiting out a failure: the retry arms it. */
	if (obj->retry_at)
		return;
	ret = arm_locked(obj);
	if (ret)
		retry_later_locked(obj, "arming the eventfd", -ret, done);
	/* Already signaled: the eventfd fires at once and the thread
	 * collects it on its next pass. */
}

void hxw_drain_incoming_locked(struct hx_wait_entry **done)
{
	struct hx_wait_entry *stack = atomic_exchange_explicit(&hx_w.incoming, NULL,
							      memory_order_acquire);
	struct hx_wait_entry *e = NULL;

	/* Newest first on the stack: reversed, submission order again. */
	while (stack) {
		struct hx_wait_entry *next = stack->next;
		stack->next = e;
		e = stack;
		stack = next;
	}
	while (e) {
		struct hx_wait_entry *next = e->next;
		e->next = NULL;
		hxw_adopt_locked(e, done);
		e = next;
	}
}

/* Fallback mode: makes the shard's thread rebuild its set. */
bool hxw_wake_locked(struct hxw_shard *sh)
{
	int ret = hx_sync_signal(hx_w.dev, sh->wake, 0);
	unsigned failed;

	if (ret) {
		/* The thread may be asleep over a set that lacks a new wait:
		 * the first thread looks again within HXW_RETRY_CAP_MS and
		 * wakes the others again (waiter_multiwait.c), so the wait is
		 * late, never held. */
		if (atomic_fetch_add_explicit(&hx_w.wake_failures, 1, memory_order_relaxed) == 0)
			hx_err("signaling the waiter's wake-up syncobj failed: %s; its thread "
			       "looks again within %u ms (retried at every wake-up)", strerror(-ret),
			       HXW_RETRY_CAP_MS);
		return false;
	}
	failed = atomic_load_explicit(&hx_w.wake_failures, memory_order_relaxed);
	if (failed && atomic_exchange_explicit(&hx_w.wake_failures, 0, memory_order_relaxed))
		hx_info("the waiter's wake-up syncobj can be signaled again after %u failure(s)",
			failed);
	return true;
}

/* Wakes the first thread, which takes the hand-overs.  The kick's fd and
 * syncobj are fixed once the threads run. */
HX_HOT_PATH
void hxw_kick(void)
{
	if (hx_w.use_eventfd) {
		uint64_t one = 1;
		(void)!write(hx_w.kick, &one, sizeof(one));
	} else {
		hxw_wake_locked(&hx_w.shards[0]);
	}
}
