/* SPDX-License-Identifier: MIT */
/*
 * The waiter: one thread, whatever the number of sync objects and streams,
 * that turns kernel syncobj signals into releases of stream waits.
 *
 * eventfd mode (Linux 6.6+): each object with pending waits owns an
 * eventfd armed with DRM_IOCTL_SYNCOBJ_EVENTFD for its lowest pending point;
 * the thread sleeps in epoll_wait and only ever looks at objects the
 * kernel reported.
 *
 * fallback mode: the thread sleeps in one multi-handle syncobj wait over
 * the lowest pending point of every object plus a private "wake"
 * syncobj that is signaled when the set changes.  The kernel's cost of
 * that wait grows with the number of objects; see multiwait_thread.
 *
 * New entries are handed over through a lock-free queue and queued and
 * armed by the thread itself: a wait call costs its caller one wake-up at
 * most (none while an earlier hand-over is still unread), never one ioctl
 * per semaphore, and never a wait for the thread's lock.  Neither mode
 * polls.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hot.h"
#include "log.h"
#include "waiter.h"

static struct {
	pthread_mutex_t lock;
	const struct hx_sync_dev *dev;
	const struct hx_waiter_ops *ops;
	bool use_eventfd;
	int epfd;
	int kick;                 /* eventfd mode: wakes the thread to free zombies */
	uint32_t wake;            /* fallback: wake-up syncobj */
	struct hx_waitable *list; /* objects with pending entries */
	unsigned nlist;
	struct hx_waitable *zombies; /* forgotten, released by the thread */
	/* Submitted, not yet queued on their objects: a lock-free stack (the
	 * newest first), so that a submitting thread never waits for the
	 * thread's lock; it kicks only when the stack was empty. */
	_Atomic(struct hx_wait_entry *) incoming;
	pthread_t thread;
} w = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.epfd = -1,
	.kick = -1,
};

/* Set under w.lock once the thread runs; read without it (waiter.h). */
atomic_bool hx_waiter_started;

static void drain_incoming_locked(struct hx_wait_entry **done);

const char *hx_waiter_mode(void)
{
	if (!atomic_load_explicit(&hx_waiter_started, memory_order_relaxed))
		return "not started";
	return w.use_eventfd ? "eventfd+epoll" : "multi-wait";
}

static void list_add_locked(struct hx_waitable *obj)
{
	if (obj->in_wlist)
		return;
	obj->wprev = NULL;
	obj->wnext = w.list;
	if (w.list)
		w.list->wprev = obj;
	w.list = obj;
	obj->in_wlist = true;
	w.nlist++;
}

static void list_remove_locked(struct hx_waitable *obj)
{
	if (!obj->in_wlist)
		return;
	if (obj->wprev)
		obj->wprev->wnext = obj->wnext;
	else
		w.list = obj->wnext;
	if (obj->wnext)
		obj->wnext->wprev = obj->wprev;
	obj->wnext = obj->wprev = NULL;
	obj->in_wlist = false;
	w.nlist--;
}

/* Arms the object's eventfd for its head entry, unless a registration
 * for that point (or an earlier one) is still outstanding. */
HX_HOT_PATH
static int arm_locked(struct hx_waitable *obj)
{
	uint64_t point;
	int ret;

	if (!obj->pending || !w.use_eventfd)
		return 0;
	point = obj->timeline ? obj->pending->value : 0;
	if (obj->armed != UINT64_MAX && obj->armed <= point)
		return 0;
	ret = hx_sync_eventfd(w.dev, obj->handle, point, obj->efd);
	if (ret) {
		hx_err("DRM_IOCTL_SYNCOBJ_EVENTFD(handle %u, point %llu) failed: %s", obj->handle,
		       (unsigned long long)point, strerror(-ret));
		return ret;
	}
	obj->armed = point;
	return 0;
}

/* Moves satisfied entries of `obj` to *done.  Binary objects give one
 * entry per signal and are reset to unsignaled when consumed. */
static void collect_known_locked(struct hx_waitable *obj, const uint64_t *known,
				 struct hx_wait_entry **done);

static void collect_locked(struct hx_waitable *obj, struct hx_wait_entry **done)
{
	collect_known_locked(obj, NULL, done);
}

/* As collect_locked, with the timeline's current value already known. */
static void collect_known_locked(struct hx_waitable *obj, const uint64_t *known,
				 struct hx_wait_entry **done)
{
	if (obj->timeline) {
		uint64_t cur = 0;
		int ret = known ? (cur = *known, 0) : hx_sync_query(w.dev, obj->handle, &cur);
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
		if (hx_sync_poll(w.dev, obj->handle, 0) == 0) {
			struct hx_wait_entry *e = obj->pending;
			int ret = hx_sync_reset(w.dev, obj->handle);
			if (ret)
				hx_warn_once("DRM_IOCTL_SYNCOBJ_RESET failed: %s", strerror(-ret));
			obj->armed = UINT64_MAX;
			obj->pending = e->next;
			e->next = *done;
			*done = e;
		}
	}
	if (!obj->pending)
		list_remove_locked(obj);
	else
		arm_locked(obj);
}

/* An object the thread may still hold a stale pointer to (from the last
 * epoll_wait or multi-wait) is freed by the thread itself, between two
 * waits, when no such pointer can exist any more. */
static void free_zombies_locked(void)
{
	while (w.zombies) {
		struct hx_waitable *z = w.zombies;
		w.zombies = z->wnext;
		w.ops->release(z);
	}
}

static void complete(struct hx_wait_entry *done)
{
	while (done) {
		struct hx_wait_entry *next = done->next;
		w.ops->entry_done(done);
		done = next;
	}
}

static void *eventfd_thread(void *arg)
{
	struct epoll_event evs[64];

	(void)arg;
	for (;;) {
		/* The only timed wake-up: the stuck-wait watchdog's next
		 * deadline, if a wait is pending at all.  Reports what is due. */
		int64_t next = w.ops->watchdog(hx_now_ns());
		int timeout = -1, n;

		if (next != INT64_MAX) {
			int64_t ms = (next - hx_now_ns() + 999999) / 1000000;
			timeout = ms < 0 ? 0 : ms > 3600000 ? 3600000 : (int)ms;
		}
		n = epoll_wait(w.epfd, evs, 64, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			hx_err("epoll_wait failed: %m; the waiter thread stops");
			return NULL;
		}
		struct hx_wait_entry *done = NULL;
		uint64_t cnt;
		/* The kick is consumed before the queue is taken: a hand-over
		 * after this read finds the queue empty and kicks again. */
		for (int i = 0; i < n; i++)
			if (!evs[i].data.ptr)
				(void)!read(w.kick, &cnt, sizeof(cnt));
		pthread_mutex_lock(&w.lock);
		drain_incoming_locked(&done);
		for (int i = 0; i < n; i++) {
			struct hx_waitable *obj = evs[i].data.ptr;
			if (!obj)
				continue;
			/* The object may have been forgotten (and its fd
			 * closed) after epoll_wait returned; a forgotten one has
			 * efd == -1 and is skipped.  It cannot be freed while
			 * entries are pending, and an object without entries is
			 * not worth looking at. */
			if (obj->efd < 0)
				continue;
			(void)!read(obj->efd, &cnt, sizeof(cnt));
			collect_locked(obj, &done);
		}
		free_zombies_locked();
		pthread_mutex_unlock(&w.lock);
		complete(done);
	}
	return NULL;
}

/* The voluntary context switches of the calling thread: tells a multi-wait
 * that slept (one signal woke it) from one that found a point already
 * signaled on entry (signals arrived while the thread was busy, maybe
 * many).  -1 if unknown, which reads as "did not sleep". */
static long voluntary_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nvcsw;
}

/* Collects the timelines of the last multi-wait's set from index `from`
 * on, with one query.  The kernel reports only the lowest signaled index;
 * the objects before it were seen unsignaled an instant earlier, and
 * anything missed here makes the next multi-wait return at once.  The
 * arrays are compacted in place (they are rebuilt before the next wait). */
static bool sweep_locked(uint32_t *handles, uint64_t *values, struct hx_waitable **objs,
			 unsigned from, unsigned n, struct hx_wait_entry **done)
{
	struct hx_wait_entry *before = *done;
	unsigned nt = 0;

	for (unsigned i = from; i < n; i++) {
		struct hx_waitable *s = objs[i];

		if (s->timeline && s->in_wlist) {
			handles[nt] = s->handle;
			objs[nt++] = s;
		}
	}
	if (nt && hx_sync_query_many(w.dev, handles, values, nt) == 0)
		for (unsigned i = 0; i < nt; i++)
			collect_known_locked(objs[i], &values[i], done);
	return *done != before;
}

/*
 * Each multi-wait costs the kernel O(set size) to arm and, once woken, to
 * tear down before it returns: that tear-down is on every release's path
 * and is the price of the fallback (docs/bench.md, "floor").  Nothing else
 * is added to that path: the object the kernel named is collected (one
 * query) and its waits released before anything else is looked at.  The
 * set is swept for further signals (one query over it) only when the wait
 * did not sleep, i.e. when signals may have piled up while the thread was
 * busy: a lone signal costs one wait's set-up and tear-down and no sweep,
 * a burst of M signals a few waits and sweeps rather than M waits.  When
 * signals come one at a time but faster than the thread re-arms (many
 * thousands of objects), every wait returns without sleeping and a sweep
 * would find nothing but cost another O(N) ioctl per release: sweeps that
 * find nothing make the next ones rarer (1 in 2, 4, ... 64 such waits),
 * one that finds something restores them.  A burst then waits for at most
 * 64 extra multi-waits.
 */
static void *multiwait_thread(void *arg)
{
	uint32_t *handles = NULL;
	uint64_t *points = NULL;
	struct hx_waitable **objs = NULL;
	unsigned cap = 0;
	unsigned backoff = 0, skip = 0; /* sweeps: see above */

	(void)arg;
	for (;;) {
		unsigned n = 0;
		uint32_t first = 0;
		int64_t next;
		long csw;
		bool slept;
		int ret;

		struct hx_wait_entry *failed = NULL;

		pthread_mutex_lock(&w.lock);
		free_zombies_locked();
		hx_sync_reset(w.dev, w.wake);
		drain_incoming_locked(&failed);
		if (w.nlist + 1 > cap) {
			unsigned ncap = (w.nlist + 1) * 2;
			uint32_t *h = realloc(handles, ncap * sizeof(*h));
			if (h)
				handles = h;
			uint64_t *p = realloc(points, ncap * sizeof(*p));
			if (p)
				points = p;
			struct hx_waitable **s = realloc(objs, ncap * sizeof(*s));
			if (s)
				objs = s;
			if (!h || !p || !s) {
				pthread_mutex_unlock(&w.lock);
				hx_err("out of memory in the waiter; retrying");
				sleep(1);
				continue;
			}
			cap = ncap;
		}
		handles[n] = w.wake;
		points[n] = 0;
		objs[n++] = NULL;
		for (struct hx_waitable *s = w.list; s; s = s->wnext) {
			handles[n] = s->handle;
			points[n] = s->timeline ? s->pending->value : 0;
			objs[n++] = s;
		}
		pthread_mutex_unlock(&w.lock);
		complete(failed);

		/* After the reset above: a kick from now on is not lost. */
		next = w.ops->watchdog(hx_now_ns());
		csw = voluntary_switches();
		ret = hx_sync_wait_any(w.dev, handles, points, n, next, &first);
		slept = csw >= 0 && voluntary_switches() != csw;
		/* ENOENT: an object was destroyed while the set was being
		 * built; the rebuilt set will not have it. */
		if (ret == -EINTR || ret == -ETIME || ret == -ENOENT)
			continue;
		if (ret) {
			hx_err("DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT over %u handles failed: %s", n,
			       strerror(-ret));
			sleep(1); /* a dead device must not become a busy loop */
			continue;
		}
		if (first == 0 || first >= n)
			continue; /* the set changed */

		struct hx_wait_entry *done = NULL;
		struct hx_waitable *hit = objs[first];

		/* Semaphores are freed only at the top of the loop, so `hit`
		 * is still readable; in_wlist says whether it is still ours. */
		pthread_mutex_lock(&w.lock);
		if (hit->in_wlist)
			collect_locked(hit, &done);
		pthread_mutex_unlock(&w.lock);
		complete(done);
		if (slept) {
			/* Keeping up: a pile-up after this is a real one. */
			backoff = skip = 0;
			continue;
		}
		if (skip) {
			skip--;
			continue;
		}

		bool found;

		done = NULL;
		pthread_mutex_lock(&w.lock);
		found = sweep_locked(handles, points, objs, first + 1, n, &done);
		pthread_mutex_unlock(&w.lock);
		complete(done);
		if (found)
			backoff = 0;
		else
			skip = backoff = backoff ? (backoff < 64 ? backoff * 2 : 64) : 1;
	}
	return NULL;
}

int hx_waiter_start_slow(const struct hx_sync_dev *dev, const struct hx_waiter_ops *ops)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int ret;

	pthread_mutex_lock(&w.lock);
	if (atomic_load_explicit(&hx_waiter_started, memory_order_relaxed)) {
		pthread_mutex_unlock(&w.lock);
		return 0;
	}
	w.dev = dev;
	w.ops = ops;
	w.use_eventfd = dev->has_eventfd;
	if (w.use_eventfd) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
		w.epfd = epoll_create1(EPOLL_CLOEXEC);
		w.kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (w.epfd < 0 || w.kick < 0 || epoll_ctl(w.epfd, EPOLL_CTL_ADD, w.kick, &ev)) {
			ret = -errno;
			hx_err("setting up epoll for the waiter failed: %m");
			if (w.epfd >= 0)
				close(w.epfd);
			if (w.kick >= 0)
				close(w.kick);
			w.epfd = w.kick = -1;
			pthread_mutex_unlock(&w.lock);
			return ret;
		}
	} else {
		ret = hx_sync_create(dev, false, &w.wake);
		if (ret) {
			hx_err("DRM_IOCTL_SYNCOBJ_CREATE for the waiter failed: %s", strerror(-ret));
			pthread_mutex_unlock(&w.lock);
			return ret;
		}
	}
	/* The application's signals are not ours to receive. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	ret = -pthread_create(&w.thread, &attr, w.use_eventfd ? eventfd_thread : multiwait_thread,
			      NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		hx_err("cannot start the waiter thread: %s", strerror(-ret));
		if (w.use_eventfd) {
			close(w.epfd);
			close(w.kick);
			w.epfd = w.kick = -1;
		} else {
			hx_sync_destroy(dev, w.wake);
		}
		pthread_mutex_unlock(&w.lock);
		return ret;
	}
	pthread_setname_np(w.thread, "hipextsem-wait");
	atomic_store_explicit(&hx_waiter_started, true, memory_order_release);
	hx_info("waiter thread started (%s)", hx_waiter_mode());
	pthread_mutex_unlock(&w.lock);
	return 0;
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
static void adopt_locked(struct hx_wait_entry *e, struct hx_wait_entry **done)
{
	struct hx_waitable *obj = e->obj;

	if (w.use_eventfd && obj->efd < 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = obj };
		obj->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (obj->efd < 0) {
			hx_err("eventfd() for a semaphore failed: %m; its wait is released "
			       "without waiting (raise RLIMIT_NOFILE?)");
			goto fail;
		}
		if (epoll_ctl(w.epfd, EPOLL_CTL_ADD, obj->efd, &ev)) {
			hx_err("epoll_ctl(ADD) failed: %m; a wait is released without waiting");
			close(obj->efd);
			obj->efd = -1;
			goto fail;
		}
		obj->armed = UINT64_MAX;
	}
	insert_locked(e);
	list_add_locked(obj);
	if (w.use_eventfd) {
		if (arm_locked(obj)) {
			for (struct hx_wait_entry **p = &obj->pending; *p; p = &(*p)->next)
				if (*p == e) {
					*p = e->next;
					break;
				}
			if (!obj->pending)
				list_remove_locked(obj);
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

static void drain_incoming_locked(struct hx_wait_entry **done)
{
	struct hx_wait_entry *stack = atomic_exchange_explicit(&w.incoming, NULL,
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
		adopt_locked(e, done);
		e = next;
	}
}

HX_HOT_PATH
static void kick(void)
{
	if (w.use_eventfd) {
		uint64_t one = 1;
		(void)!write(w.kick, &one, sizeof(one));
	} else {
		int ret = hx_sync_signal(w.dev, w.wake, 0);
		if (ret)
			hx_err("signaling the waiter's wake-up syncobj failed: %s", strerror(-ret));
	}
}

HX_HOT_PATH
void hx_waiter_submit(struct hx_wait_entry *head)
{
	struct hx_wait_entry *rev = NULL, *last = head, *old;

	/* One entry in eventfd mode: arming it here costs the one ioctl the
	 * thread would issue, and saves waking the thread.  Only if its lock
	 * is free: never wait behind the thread's own work.  Entries handed
	 * over earlier and not yet taken go first (per-object order). */
	if (w.use_eventfd && !head->next &&
	    !atomic_load_explicit(&w.incoming, memory_order_relaxed) &&
	    pthread_mutex_trylock(&w.lock) == 0) {
		struct hx_wait_entry *failed = NULL;

		if (!atomic_load_explicit(&w.incoming, memory_order_acquire)) {
			adopt_locked(head, &failed);
			pthread_mutex_unlock(&w.lock);
			complete(failed);
			return;
		}
		pthread_mutex_unlock(&w.lock);
	}

	/* Pushed reversed, so that the thread's reversal of the whole stack
	 * gives every submission's entries in order, submissions in order. */
	while (head) {
		struct hx_wait_entry *next = head->next;
		head->next = rev;
		rev = head;
		head = next;
	}
	old = atomic_load_explicit(&w.incoming, memory_order_relaxed);
	do
		last->next = old;
	while (!atomic_compare_exchange_weak_explicit(&w.incoming, &old, rev, memory_order_release,
						      memory_order_relaxed));
	/* A non-empty stack means a kick is on its way or the thread has not
	 * taken the stack yet: it will see these entries too.  The kick's fd
	 * and syncobj are fixed once the thread runs. */
	if (!old)
		kick();
}

bool hx_waiter_forget(struct hx_waitable *obj)
{
	bool now;

	pthread_mutex_lock(&w.lock);
	list_remove_locked(obj);
	if (obj->efd >= 0) {
		epoll_ctl(w.epfd, EPOLL_CTL_DEL, obj->efd, NULL);
		close(obj->efd);
		obj->efd = -1;
	}
	now = !atomic_load_explicit(&hx_waiter_started, memory_order_relaxed);
	if (!now) {
		obj->wnext = w.zombies;
		w.zombies = obj;
		kick();
	}
	pthread_mutex_unlock(&w.lock);
	return now;
}

HX_HOT_PATH
void hx_waiter_kick(void)
{
	pthread_mutex_lock(&w.lock);
	if (atomic_load_explicit(&hx_waiter_started, memory_order_relaxed))
		kick();
	pthread_mutex_unlock(&w.lock);
}

void hx_waiter_reset_after_fork(void)
{
	/* The thread does not exist in the child and the epoll set and wake
	 * syncobj belong to the parent's DRM file.  Start from scratch; the
	 * parent's objects were dropped by the owner. */
	pthread_mutex_init(&w.lock, NULL);
	if (w.epfd >= 0)
		close(w.epfd);
	if (w.kick >= 0)
		close(w.kick);
	w.epfd = w.kick = -1;
	atomic_store_explicit(&hx_waiter_started, false, memory_order_relaxed);
	w.list = NULL;
	w.nlist = 0;
	w.zombies = NULL;
	atomic_store(&w.incoming, NULL);
	w.dev = NULL;
}
