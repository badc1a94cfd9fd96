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

/* Arms the object's eventfd for its head entry, unless a registration
 * for that point (or an earlier one) is still outstanding. */
HX_HOT_PATH
static int arm_locked(struct hx_waitable *obj)
{
	uint64_t point;
	int ret;

	if (!obj->pending || !hx_w.use_eventfd)
		return 0;
	point = obj->timeline ? obj->pending->value : 0;
	if (obj->armed != UINT64_MAX && obj->armed <= point)
		return 0;
	ret = hx_sync_eventfd(hx_w.dev, obj->handle, point, obj->efd);
	if (ret) {
		hx_err("DRM_IOCTL_SYNCOBJ_EVENTFD(handle %u, point %llu) failed: %s", obj->handle,
		       (unsigned long long)point, strerror(-ret));
		return ret;
	}
	obj->armed = point;
	return 0;
}

void hxw_collect_locked(struct hx_waitable *obj, struct hx_wait_entry **done)
{
	hxw_collect_known_locked(obj, NULL, done);
}

/* The body of both (waiter_private.h). */
void hxw_collect_known_locked(struct hx_waitable *obj, const uint64_t *known,
			      struct hx_wait_entry **done)
{
	if (obj->timeline) {
		uint64_t cur = 0;
		int ret = known ? (cur = *known, 0) : hx_sync_query(hx_w.dev, obj->handle, &cur);
		if (ret) {
			hx_warn_once("DRM_IOCTL_SYNCOBJ_QUERY failed: %s", strerror(-ret));
			return;
		}
		if (obj->armed != UINT64_MAX && cur >= obj->armed)
			obj->armed = UINT64_MAX; /* that registration has fired */
		while (obj->pending && obj->pending->value <= cur) {
			struct hx_wait_entry *e = obj->pending;
			obj->pending = e->next;
			e->next = *done;
			*done = e;
		}
	} else if (obj->pending) {
		if (hx_sync_poll(hx_w.dev, obj->handle, 0) == 0) {
			struct hx_wait_entry *e = obj->pending;
			int ret = hx_sync_reset(hx_w.dev, obj->handle);
			if (ret)
				hx_warn_once("DRM_IOCTL_SYNCOBJ_RESET failed: %s", strerror(-ret));
			obj->armed = UINT64_MAX;
			obj->pending = e->next;
			e->next = *done;
			*done = e;
		}
	}
	if (!obj->pending)
		hxw_list_remove_locked(obj);
	else
		arm_locked(obj);
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
 * An entry that cannot be armed is handed back through *done (released):
 * a stream held forever is worse than a wait that did not hold. */
HX_HOT_PATH
void hxw_adopt_locked(struct hx_wait_entry *e, struct hx_wait_entry **done)
{
	struct hx_waitable *obj = e->obj;

	if (hx_w.use_eventfd && obj->efd < 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = obj };
		obj->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (obj->efd < 0) {
			hx_err("eventfd() for a semaphore failed: %m; its wait is released "
			       "without waiting (raise RLIMIT_NOFILE?)");
			goto fail;
		}
		if (epoll_ctl(hx_w.epfd, EPOLL_CTL_ADD, obj->efd, &ev)) {
			hx_err("epoll_ctl(ADD) failed: %m; a wait is released without waiting");
			close(obj->efd);
			obj->efd = -1;
			goto fail;
		}
		obj->armed = UINT64_MAX;
	}
	insert_locked(e);
	list_add_locked(obj);
	if (!hx_w.use_eventfd && obj->pending == e)
		hx_w.shards[obj->shard].stale = true; /* a new head: the set changed */
	if (hx_w.use_eventfd) {
		if (arm_locked(obj)) {
			for (struct hx_wait_entry **p = &obj->pending; *p; p = &(*p)->next)
				if (*p == e) {
					*p = e->next;
					break;
				}
			if (!obj->pending)
				hxw_list_remove_locked(obj);
			hx_err("a wait is released without waiting (see the error above)");
			goto fail;
		}
		/* Already signaled: the eventfd fires at once and the thread
		 * collects it on its next pass. */
	}
	return;
fail:
	e->next = *done;
	*done = e;
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
void hxw_wake_locked(struct hxw_shard *sh)
{
	int ret = hx_sync_signal(hx_w.dev, sh->wake, 0);
	if (ret)
		hx_err("signaling the waiter's wake-up syncobj failed: %s", strerror(-ret));
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
