/* SPDX-License-Identifier: MIT */
/*
 * The waiter: a fixed number of threads, whatever the number of sync
 * objects and streams, that turn kernel syncobj signals into releases of
 * stream waits.
 *
 * eventfd mode (Linux 6.6+): each object with pending waits owns an
 * eventfd armed with DRM_IOCTL_SYNCOBJ_EVENTFD for its lowest pending point;
 * the thread sleeps in epoll_wait and only ever looks at objects the
 * kernel reported.
 *
 * fallback mode: HIPEXTSEM_WAIT_THREADS threads (8 unless set), each
 * asleep in one multi-handle syncobj wait over the lowest pending point of
 * the objects in its own list plus its private "wake" syncobj, signaled
 * when that set changes.  An object joins the shortest list when it gets
 * its first pending wait.  The kernel's cost of a multi-wait grows with
 * its number of handles and lies on every release's path; splitting the
 * objects over a few threads divides it (waiter_multiwait.c).  The
 * first thread also takes the hand-overs and runs the watchdog.
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
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "hot.h"
#include "log.h"
#include "waiter_private.h"
#include "noise.h"

/* Set under hx_w.lock once the threads run; read without it (waiter.h). */
atomic_bool hx_waiter_started;

const char *hx_waiter_mode(void)
{
	if (!atomic_load_explicit(&hx_waiter_started, memory_order_relaxed))
		return "not started";
	return hx_w.use_eventfd ? "eventfd+epoll" : "multi-wait";
}

/* eventfd mode: the epoll set and the kick, closed (either may be -1). */
static void close_epoll(void)
{
	if (hx_w.epfd >= 0)
		close(hx_w.epfd);
	if (hx_w.kick >= 0)
		close(hx_w.kick);
	hx_w.epfd = hx_w.kick = -1;
}

static void *eventfd_thread(void *arg)
{
	struct epoll_event evs[64];
	unsigned epoll_failures = 0;

	(void)arg;
	for (;;) {
		/* The only timed wake-ups: the stuck-wait watchdog's next
		 * deadline, if a wait is pending at all (it reports what is
		 * due), and the retry of an object whose collect or arm failed. */
		int64_t next = hx_w.ops->watchdog(hx_now_ns());
		int timeout = -1, n;

		pthread_mutex_lock(&hx_w.lock);
		if (hx_w.retry_next < next)
			next = hx_w.retry_next;
		pthread_mutex_unlock(&hx_w.lock);
		if (next != INT64_MAX) {
			int64_t ms = (next - hx_now_ns() + 999999) / 1000000;
			timeout = ms < 0 ? 0 : ms > 3600000 ? 3600000 : (int)ms;
		}
		n = epoll_wait(hx_w.epfd, evs, 64, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* Never stop: pending waits would have nothing left to
			 * release them.  Retried after a pause. */
			if (epoll_failures++ == 0)
				hx_err("epoll_wait failed: %m; the waiter retries every 100 ms");
			usleep(100 * 1000);
			continue;
		}
		epoll_failures = 0;
		hx_noise();
		struct hx_wait_entry *done = NULL;
		uint64_t cnt;
		/* The kick is consumed before the queue is taken: a hand-over
		 * after this read finds the queue empty and kicks again. */
		for (int i = 0; i < n; i++)
			if (!evs[i].data.ptr)
				(void)!read(hx_w.kick, &cnt, sizeof(cnt));
		pthread_mutex_lock(&hx_w.lock);
		hxw_drain_incoming_locked(&done);
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
			/* The count is the number of registrations that fired
			 * since the last read: each was one-shot. */
			if (read(obj->efd, &cnt, sizeof(cnt)) != (ssize_t)sizeof(cnt))
				cnt = 0;
			hxw_collect_locked(obj, NULL, cnt, &done);
		}
		hxw_retry_due_locked(hx_now_ns(), &done);
		hxw_free_zombies_locked(0);
		pthread_mutex_unlock(&hx_w.lock);
		hxw_complete(done);
	}
	return NULL;
}

/* Starts thread `i` (its shard's wake-up syncobj first, in fallback mode). */
static int start_thread_locked(unsigned i)
{
	struct hxw_shard *sh = &hx_w.shards[i];
	pthread_attr_t attr;
	sigset_t all, old;
	char name[16];
	int ret;

	if (!hx_w.use_eventfd) {
		ret = hx_sync_create(hx_w.dev, false, &sh->wake);
		if (ret) {
			hx_err("DRM_IOCTL_SYNCOBJ_CREATE for the waiter failed: %s", strerror(-ret));
			return ret;
		}
	}
	/* The application's signals are not ours to receive. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	ret = -pthread_create(&sh->thread, &attr,
			      hx_w.use_eventfd ? eventfd_thread : hxw_multiwait_thread,
			      (void *)(uintptr_t)i);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		hx_err("cannot start waiter thread %u: %s", i, strerror(-ret));
		if (!hx_w.use_eventfd)
			hx_sync_destroy(hx_w.dev, sh->wake);
		return ret;
	}
	/* "hipextsem-wait", then "hipextsem-wait1" ... (15 characters at most) */
	snprintf(name, sizeof(name), "hipextsem-wait%.*s", i ? 1 : 0, &"01234567"[i]);
	pthread_setname_np(sh->thread, name);
	return 0;
}

int hx_waiter_start_slow(const struct hx_sync_dev *dev, const struct hx_waiter_ops *ops)
{
	unsigned want;
	int ret;

	pthread_mutex_lock(&hx_w.lock);
	if (atomic_load_explicit(&hx_waiter_started, memory_order_relaxed)) {
		pthread_mutex_unlock(&hx_w.lock);
		return 0;
	}
	hx_w.dev = dev;
	hx_w.ops = ops;
	hx_w.use_eventfd = dev->has_eventfd;
	if (hx_w.use_eventfd) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
		hx_w.epfd = epoll_create1(EPOLL_CLOEXEC);
		hx_w.kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (hx_w.epfd < 0 || hx_w.kick < 0 ||
		    epoll_ctl(hx_w.epfd, EPOLL_CTL_ADD, hx_w.kick, &ev)) {
			ret = -errno;
			hx_err("setting up epoll for the waiter failed: %m");
			close_epoll();
			pthread_mutex_unlock(&hx_w.lock);
			return ret;
		}
	}
	/* The number of threads is fixed here, whatever the number of
	 * semaphores to come: one with eventfds (the kernel's cost per release
	 * does not grow with the set), a few for multi-waits. */
	want = hx_w.use_eventfd ? 1
			     : (unsigned)hx_getenv_long("HIPEXTSEM_WAIT_THREADS",
							HXW_THREADS_DEFAULT, 1, HXW_THREADS_MAX);
	/* The threads wait for this lock before they look at nshards. */
	for (hx_w.nshards = 0; hx_w.nshards < want; hx_w.nshards++)
		if (start_thread_locked(hx_w.nshards))
			break;
	if (!hx_w.nshards) {
		close_epoll();
		pthread_mutex_unlock(&hx_w.lock);
		return -EAGAIN;
	}
	if (hx_w.nshards < want)
		hx_warn("only %u of %u waiter threads started; waits are spread over those",
			hx_w.nshards, want);
	atomic_store_explicit(&hx_waiter_started, true, memory_order_release);
	hx_info("waiter started (%s, %u thread%s)", hx_waiter_mode(), hx_w.nshards,
		hx_w.nshards == 1 ? "" : "s");
	pthread_mutex_unlock(&hx_w.lock);
	return 0;
}

HX_HOT_PATH
void hx_waiter_submit(struct hx_wait_entry *head)
{
	struct hx_wait_entry *rev = NULL, *last = head, *old;

	/* One entry in eventfd mode: arming it here costs the one ioctl the
	 * thread would issue, and saves waking the thread.  Only if its lock
	 * is free: never wait behind the thread's own work.  Entries handed
	 * over earlier and not yet taken go first (per-object order). */
	if (hx_w.use_eventfd && !head->next &&
	    !atomic_load_explicit(&hx_w.incoming, memory_order_relaxed) &&
	    pthread_mutex_trylock(&hx_w.lock) == 0) {
		struct hx_wait_entry *failed = NULL;

		if (!atomic_load_explicit(&hx_w.incoming, memory_order_acquire)) {
			hxw_adopt_locked(head, &failed);
			pthread_mutex_unlock(&hx_w.lock);
			hxw_complete(failed);
			return;
		}
		pthread_mutex_unlock(&hx_w.lock);
	}

	/* Pushed reversed, so that the thread's reversal of the whole stack
	 * gives every submission's entries in order, submissions in order. */
	while (head) {
		struct hx_wait_entry *next = head->next;
		head->next = rev;
		rev = head;
		head = next;
	}
	old = atomic_load_explicit(&hx_w.incoming, memory_order_relaxed);
	do
		last->next = old;
	while (!atomic_compare_exchange_weak_explicit(&hx_w.incoming, &old, rev, memory_order_release,
						      memory_order_relaxed));
	/* A non-empty stack means a kick is on its way or the thread has not
	 * taken the stack yet: it will see these entries too.  The kick's fd
	 * and syncobj are fixed once the thread runs. */
	if (!old)
		hxw_kick();
}

bool hx_waiter_forget(struct hx_waitable *obj)
{
	bool now;

	pthread_mutex_lock(&hx_w.lock);
	hxw_list_remove_locked(obj);
	if (obj->efd >= 0) {
		epoll_ctl(hx_w.epfd, EPOLL_CTL_DEL, obj->efd, NULL);
		close(obj->efd);
		obj->efd = -1;
	}
	obj->nregs = 0;
	obj->failures = 0;
	obj->retry_at = 0;
	now = !atomic_load_explicit(&hx_waiter_started, memory_order_relaxed);
	if (!now) {
		obj->unseen = (uint8_t)((1u << hx_w.nshards) - 1);
		obj->wnext = hx_w.zombies;
		hx_w.zombies = obj;
		hxw_kick();
		for (unsigned i = 1; i < hx_w.nshards; i++)
			if (!hxw_wake_locked(&hx_w.shards[i]))
				hx_w.shards[i].stale = true; /* the first thread tries again */
	}
	pthread_mutex_unlock(&hx_w.lock);
	return now;
}

HX_HOT_PATH
void hx_waiter_kick(void)
{
	pthread_mutex_lock(&hx_w.lock);
	if (atomic_load_explicit(&hx_waiter_started, memory_order_relaxed))
		hxw_kick();
	pthread_mutex_unlock(&hx_w.lock);
}

void hx_waiter_reset_after_fork(void)
{
	/* The thread does not exist in the child and the epoll set and wake
	 * syncobj belong to the parent's DRM file.  Start from scratch; the
	 * parent's objects were dropped by the owner. */
	pthread_mutex_init(&hx_w.lock, NULL);
	close_epoll();
	atomic_store_explicit(&hx_waiter_started, false, memory_order_relaxed);
	memset(hx_w.shards, 0, sizeof(hx_w.shards));
	hx_w.nshards = 0;
	hx_w.zombies = NULL;
	hx_w.retry_next = INT64_MAX;
	atomic_store(&hx_w.incoming, NULL);
	hx_w.dev = NULL;
}
