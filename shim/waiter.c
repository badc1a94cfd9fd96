/* SPDX-License-Identifier: MIT */
/*
 * The waiter: one thread, whatever the number of semaphores and streams,
 * that turns kernel syncobj signals into releases of stream waits.
 *
 * eventfd mode (Linux 6.6+): each semaphore with pending waits owns an
 * eventfd armed with DRM_IOCTL_SYNCOBJ_EVENTFD for its lowest pending point;
 * the thread sleeps in epoll_wait and only ever looks at semaphores the
 * kernel reported.
 *
 * fallback mode: the thread sleeps in one multi-handle syncobj wait over
 * the lowest pending point of every semaphore plus a private "wake"
 * syncobj that is signaled when the set changes.
 *
 * New entries are handed over through a queue and armed by the thread
 * itself, so that a wait call costs the caller one wake-up at most rather
 * than one ioctl per semaphore.  Neither mode polls.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"
#include "sem.h"

static struct {
	pthread_mutex_t lock;
	const struct hx_sync_dev *dev;
	bool started;
	bool use_eventfd;
	int epfd;
	int kick;                 /* eventfd mode: wakes the thread to free zombies */
	uint32_t wake;            /* fallback: wake-up syncobj */
	struct hx_sem *list;      /* semaphores with pending entries */
	unsigned nlist;
	struct hx_sem *zombies;   /* forgotten, freed by the thread */
	struct hx_wait_entry *in_head, *in_tail; /* submitted, not yet armed */
	bool kicked;              /* a wake-up is on its way to the thread */
	pthread_t thread;
} w = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.epfd = -1,
	.kick = -1,
};

static void drain_incoming_locked(struct hx_wait_entry **done);

const char *hx_waiter_mode(void)
{
	if (!w.started)
		return "not started";
	return w.use_eventfd ? "eventfd+epoll" : "multi-wait";
}

static void list_add_locked(struct hx_sem *sem)
{
	if (sem->in_wlist)
		return;
	sem->wprev = NULL;
	sem->wnext = w.list;
	if (w.list)
		w.list->wprev = sem;
	w.list = sem;
	sem->in_wlist = true;
	w.nlist++;
}

static void list_remove_locked(struct hx_sem *sem)
{
	if (!sem->in_wlist)
		return;
	if (sem->wprev)
		sem->wprev->wnext = sem->wnext;
	else
		w.list = sem->wnext;
	if (sem->wnext)
		sem->wnext->wprev = sem->wprev;
	sem->wnext = sem->wprev = NULL;
	sem->in_wlist = false;
	w.nlist--;
}

/* Arms the semaphore's eventfd for its head entry, unless a registration
 * for that point (or an earlier one) is still outstanding. */
static int arm_locked(struct hx_sem *sem)
{
	uint64_t point;
	int ret;

	if (!sem->pending || !w.use_eventfd)
		return 0;
	point = sem->timeline ? sem->pending->value : 0;
	if (sem->armed != UINT64_MAX && sem->armed <= point)
		return 0;
	ret = hx_sync_eventfd(w.dev, sem->handle, point, sem->efd);
	if (ret) {
		hx_err("DRM_IOCTL_SYNCOBJ_EVENTFD(handle %u, point %llu) failed: %s", sem->handle,
		       (unsigned long long)point, strerror(-ret));
		return ret;
	}
	sem->armed = point;
	return 0;
}

/* Moves satisfied entries of `sem` to *done.  Binary semaphores give one
 * entry per signal and are reset to unsignaled when consumed. */
static void collect_known_locked(struct hx_sem *sem, const uint64_t *known,
				 struct hx_wait_entry **done);

static void collect_locked(struct hx_sem *sem, struct hx_wait_entry **done)
{
	collect_known_locked(sem, NULL, done);
}

/* As collect_locked, with the timeline's current value already known. */
static void collect_known_locked(struct hx_sem *sem, const uint64_t *known,
				 struct hx_wait_entry **done)
{
	if (sem->timeline) {
		uint64_t cur = 0;
		int ret = known ? (cur = *known, 0) : hx_sync_query(w.dev, sem->handle, &cur);
		if (ret) {
			hx_warn_once("DRM_IOCTL_SYNCOBJ_QUERY failed: %s", strerror(-ret));
			return;
		}
		if (sem->armed != UINT64_MAX && cur >= sem->armed)
			sem->armed = UINT64_MAX; /* that registration has fired */
		while (sem->pending && sem->pending->value <= cur) {
			struct hx_wait_entry *e = sem->pending;
			sem->pending = e->next;
			e->next = *done;
			*done = e;
		}
	} else if (sem->pending) {
		if (hx_sync_poll(w.dev, sem->handle, 0) == 0) {
			struct hx_wait_entry *e = sem->pending;
			int ret = hx_sync_reset(w.dev, sem->handle);
			if (ret)
				hx_warn_once("DRM_IOCTL_SYNCOBJ_RESET failed: %s", strerror(-ret));
			sem->armed = UINT64_MAX;
			sem->pending = e->next;
			e->next = *done;
			*done = e;
		}
	}
	if (!sem->pending)
		list_remove_locked(sem);
	else
		arm_locked(sem);
}

/* A semaphore the thread may still hold a stale pointer to (from the last
 * epoll_wait or multi-wait) is freed by the thread itself, between two
 * waits, when no such pointer can exist any more. */
static void free_zombies_locked(void)
{
	while (w.zombies) {
		struct hx_sem *z = w.zombies;
		w.zombies = z->wnext;
		free(z);
	}
}

static void complete(struct hx_wait_entry *done)
{
	while (done) {
		struct hx_wait_entry *next = done->next;
		hx_sem_entry_done(done);
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
		int64_t next = hx_sem_watchdog(hx_now_ns());
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
		pthread_mutex_lock(&w.lock);
		drain_incoming_locked(&done);
		for (int i = 0; i < n; i++) {
			struct hx_sem *sem = evs[i].data.ptr;
			uint64_t cnt;
			if (!sem) {
				(void)!read(w.kick, &cnt, sizeof(cnt));
				continue;
			}
			/* The semaphore may have been forgotten (and its fd
			 * closed) after epoll_wait returned; a forgotten one has
			 * efd == -1 and is skipped.  It cannot be freed while
			 * entries are pending, and a semaphore without entries is
			 * not worth looking at. */
			if (sem->efd < 0)
				continue;
			(void)!read(sem->efd, &cnt, sizeof(cnt));
			collect_locked(sem, &done);
		}
		free_zombies_locked();
		pthread_mutex_unlock(&w.lock);
		complete(done);
	}
	return NULL;
}

static void *multiwait_thread(void *arg)
{
	uint32_t *handles = NULL;
	uint64_t *points = NULL;
	struct hx_sem **sems = NULL;
	unsigned cap = 0;

	(void)arg;
	for (;;) {
		unsigned n = 0;
		uint32_t first = 0;
		int64_t next;
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
			struct hx_sem **s = realloc(sems, ncap * sizeof(*s));
			if (s)
				sems = s;
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
		sems[n++] = NULL;
		for (struct hx_sem *s = w.list; s; s = s->wnext) {
			handles[n] = s->handle;
			points[n] = s->timeline ? s->pending->value : 0;
			sems[n++] = s;
		}
		pthread_mutex_unlock(&w.lock);
		complete(failed);

		/* After the reset above: a kick from now on is not lost. */
		next = hx_sem_watchdog(hx_now_ns());
		ret = hx_sync_wait_any(w.dev, handles, points, n, next, &first);
		/* ENOENT: a semaphore was destroyed while the set was being
		 * built; the rebuilt set will not have it. */
		if (ret == -EINTR || ret == -ETIME || ret == -ENOENT)
			continue;
		if (ret) {
			hx_err("DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT over %u handles failed: %s", n,
			       strerror(-ret));
			sleep(1); /* a dead device must not become a busy loop */
			continue;
		}
		if (first == 0)
			continue; /* the set changed */

		struct hx_wait_entry *done = NULL;
		struct hx_sem *hit = sems[first];
		unsigned nt = 0;

		pthread_mutex_lock(&w.lock);
		/* One wake-up may stand for many signals: look at every timeline
		 * in one query rather than at one semaphore per wake-up.  The
		 * list only shrank since the snapshot, so the arrays fit.
		 * Semaphores are freed only at the top of the loop, so `hit`
		 * is still readable; in_wlist says whether it is still ours. */
		for (struct hx_sem *s = w.list; s; s = s->wnext)
			if (s->timeline) {
				handles[nt] = s->handle;
				sems[nt++] = s;
			}
		if (nt && hx_sync_query_many(w.dev, handles, points, nt) == 0) {
			for (unsigned i = 0; i < nt; i++)
				collect_known_locked(sems[i], &points[i], &done);
		} else if (hit->timeline && hit->in_wlist) {
			collect_locked(hit, &done);
		}
		if (!hit->timeline && hit->in_wlist)
			collect_locked(hit, &done);
		pthread_mutex_unlock(&w.lock);
		complete(done);
	}
	return NULL;
}

int hx_waiter_start(const struct hx_sync_dev *dev)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int ret;

	pthread_mutex_lock(&w.lock);
	if (w.started) {
		pthread_mutex_unlock(&w.lock);
		return 0;
	}
	w.dev = dev;
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
	w.started = true;
	hx_info("waiter thread started (%s)", hx_waiter_mode());
	pthread_mutex_unlock(&w.lock);
	return 0;
}

static void insert_locked(struct hx_wait_entry *e)
{
	struct hx_sem *sem = e->sem;
	struct hx_wait_entry **p = &sem->pending;

	if (sem->timeline)
		while (*p && (*p)->value <= e->value)
			p = &(*p)->next;
	else
		while (*p)
			p = &(*p)->next;
	e->next = *p;
	*p = e;
}

/* Queues one submitted entry on its semaphore and arms the notification.
 * An entry that cannot be armed is handed back through *done (released):
 * a stream held forever is worse than a wait that did not hold. */
static void adopt_locked(struct hx_wait_entry *e, struct hx_wait_entry **done)
{
	struct hx_sem *sem = e->sem;

	if (w.use_eventfd && sem->efd < 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = sem };
		sem->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (sem->efd < 0) {
			hx_err("eventfd() for a semaphore failed: %m; its wait is released "
			       "without waiting (raise RLIMIT_NOFILE?)");
			goto fail;
		}
		if (epoll_ctl(w.epfd, EPOLL_CTL_ADD, sem->efd, &ev)) {
			hx_err("epoll_ctl(ADD) failed: %m; a wait is released without waiting");
			close(sem->efd);
			sem->efd = -1;
			goto fail;
		}
		sem->armed = UINT64_MAX;
	}
	insert_locked(e);
	list_add_locked(sem);
	if (w.use_eventfd) {
		if (arm_locked(sem)) {
			for (struct hx_wait_entry **p = &sem->pending; *p; p = &(*p)->next)
				if (*p == e) {
					*p = e->next;
					break;
				}
			if (!sem->pending)
				list_remove_locked(sem);
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
	struct hx_wait_entry *e = w.in_head;

	w.in_head = w.in_tail = NULL;
	w.kicked = false;
	while (e) {
		struct hx_wait_entry *next = e->next;
		e->next = NULL;
		adopt_locked(e, done);
		e = next;
	}
}

static void kick_locked(void)
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

void hx_waiter_submit(struct hx_wait_entry *entries, unsigned n)
{
	pthread_mutex_lock(&w.lock);
	for (unsigned i = 0; i < n; i++) {
		entries[i].next = NULL;
		if (w.in_tail)
			w.in_tail->next = &entries[i];
		else
			w.in_head = &entries[i];
		w.in_tail = &entries[i];
	}
	if (!w.kicked) {
		w.kicked = true;
		kick_locked();
	}
	pthread_mutex_unlock(&w.lock);
}

void hx_waiter_forget(struct hx_sem *sem)
{
	pthread_mutex_lock(&w.lock);
	list_remove_locked(sem);
	if (sem->efd >= 0) {
		epoll_ctl(w.epfd, EPOLL_CTL_DEL, sem->efd, NULL);
		close(sem->efd);
		sem->efd = -1;
	}
	if (w.started) {
		sem->wnext = w.zombies;
		w.zombies = sem;
		kick_locked();
	} else {
		free(sem);
	}
	pthread_mutex_unlock(&w.lock);
}

void hx_waiter_kick(void)
{
	pthread_mutex_lock(&w.lock);
	if (w.started)
		kick_locked();
	pthread_mutex_unlock(&w.lock);
}

void hx_waiter_reset_after_fork(void)
{
	/* The thread does not exist in the child and the epoll set and wake
	 * syncobj belong to the parent's DRM file.  Start from scratch; the
	 * parent's semaphores were dropped by the caller. */
	pthread_mutex_init(&w.lock, NULL);
	if (w.epfd >= 0)
		close(w.epfd);
	if (w.kick >= 0)
		close(w.kick);
	w.epfd = w.kick = -1;
	w.started = false;
	w.list = NULL;
	w.nlist = 0;
	w.zombies = NULL;
	w.in_head = w.in_tail = NULL;
	w.kicked = false;
	w.dev = NULL;
}
