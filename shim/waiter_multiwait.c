/* SPDX-License-Identifier: MIT */
/*
 * The fallback waiter threads (Linux before 6.6, no DRM_IOCTL_SYNCOBJ_EVENTFD):
 * each sleeps in one multi-handle syncobj wait over the lowest pending
 * point of the objects on its own list, plus its wake-up syncobj.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"
#include "waiter_private.h"

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
	if (nt && hx_sync_query_many(hx_w.dev, handles, values, nt) == 0)
		for (unsigned i = 0; i < nt; i++)
			hxw_collect_locked(objs[i], &values[i], 0, done);
	return *done != before;
}

/*
 * Each multi-wait costs the kernel O(set size) to arm and, once woken, to
 * tear down before it returns: that tear-down is on every release's path
 * and is the price of the fallback (docs/bench.md, "floor").  Nothing else
 * is added to that path: the object the kernel named is collected and
 * its waits released before anything else is looked at.  A timeline is
 * not even queried: its point is the one the kernel just reported
 * signaled, and a later point it may have reached too makes the next
 * wait return at once.  The set is swept for further signals (one query
 * over it) only when the wait did not sleep (counted after the release,
 * off its path), i.e. when signals may have piled up while the thread was
 * busy: a lone signal costs one wait's set-up and tear-down and no sweep,
 * a burst of M signals a few waits and sweeps rather than M waits.  When
 * signals come one at a time but faster than the thread re-arms (many
 * thousands of objects), every wait returns without sleeping and a sweep
 * would find nothing but cost another O(N) ioctl per release: sweeps that
 * find nothing make the next ones rarer (1 in 2, 4, ... 64 such waits),
 * one that finds something restores them.  A burst then waits for at most
 * 64 extra multi-waits.
 *
 * With several threads each waits over its own list only, so a release
 * costs the tear-down and re-arm of about 1/nshards of the handles.  The
 * first thread takes the hand-overs, queues each entry on its object and
 * signals the wake-up syncobj of every other thread whose set changed;
 * only it runs the watchdog.
 */
void *hxw_multiwait_thread(void *arg)
{
	const unsigned me = (unsigned)(uintptr_t)arg;
	struct hxw_shard *const sh = &hx_w.shards[me];
	uint32_t *handles = NULL;
	uint64_t *points = NULL;
	struct hx_waitable **objs = NULL;
	unsigned cap = 0;
	unsigned backoff = 0, skip = 0; /* sweeps: see above */
	unsigned wait_failures = 0, reset_failures = 0;

	for (;;) {
		unsigned n = 0, need;
		unsigned base;
		uint32_t first = 0;
		bool wake_ok;
		int64_t next, retry, now;
		long csw;
		bool slept;
		int ret;

		struct hx_wait_entry *failed = NULL;

		pthread_mutex_lock(&hx_w.lock);
		hxw_free_zombies_locked(me);
		/* A wake-up syncobj that cannot be reset stays signaled and
		 * would end every wait at its own index: it is left out of the
		 * set, which is then rebuilt every HXW_RETRY_CAP_MS / 10. */
		wake_ok = hx_sync_reset(hx_w.dev, sh->wake) == 0;
		if (!wake_ok && reset_failures++ == 0)
			hx_err("resetting the waiter's wake-up syncobj failed; the thread looks "
			       "again every %u ms instead (retried)", HXW_RETRY_CAP_MS / 10);
		else if (wake_ok && reset_failures)
			reset_failures = 0;
		sh->stale = false;
		if (me == 0) {
			hxw_drain_incoming_locked(&failed);
			/* A wake-up that fails is tried again at the next
			 * look (within HXW_RETRY_CAP_MS, see below). */
			for (unsigned i = 1; i < hx_w.nshards; i++)
				if (hx_w.shards[i].stale)
					hx_w.shards[i].stale = !hxw_wake_locked(&hx_w.shards[i]);
		}
		/* The first thread also watches the objects of every thread
		 * whose wake-up failed (stale): that thread sleeps over a set
		 * built before their waits came, and nothing else reaches it
		 * while the kernel refuses its wake-ups.  It takes them back
		 * once a wake-up gets through; until then both may watch an
		 * object, and whichever collects it first under the lock takes
		 * its signal. */
		need = sh->nlist + 1;
		if (me == 0)
			for (unsigned i = 1; i < hx_w.nshards; i++)
				if (hx_w.shards[i].stale)
					need += hx_w.shards[i].nlist;
		if (need > cap) {
			unsigned ncap = need * 2;
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
				pthread_mutex_unlock(&hx_w.lock);
				hxw_complete(failed); /* given up by the hand-over above */
				hx_err("out of memory in the waiter; retrying");
				sleep(1);
				continue;
			}
			cap = ncap;
		}
		if (wake_ok) {
			handles[n] = sh->wake;
			points[n] = 0;
			objs[n++] = NULL;
		}
		base = n;
		retry = wake_ok ? INT64_MAX : hx_now_ns() + HXW_RETRY_CAP_MS * 100000LL;
		now = hx_now_ns();
		for (unsigned k = me; k < (me == 0 ? hx_w.nshards : me + 1); k++) {
			if (k != me && !hx_w.shards[k].stale)
				continue;
			for (struct hx_waitable *s = hx_w.shards[k].list; s; s = s->wnext) {
				/* An object whose last collect failed sits out its
				 * backoff (it may be signaled: it would end every
				 * wait at once); the wait ends when the backoff
				 * does. */
				if (s->retry_at > now) {
					if (s->retry_at < retry)
						retry = s->retry_at;
					continue;
				}
				if (k == me)
					s->retry_at = 0;
				handles[n] = s->handle;
				points[n] = s->timeline ? s->pending->value : 0;
				objs[n++] = s;
			}
		}
		pthread_mutex_unlock(&hx_w.lock);
		hxw_complete(failed);

		/* After the reset above: a kick from now on is not lost, unless
		 * the kernel fails to signal the wake-up syncobj (hxw_wake_locked).
		 * Nothing else reaches a thread asleep in the kernel, so the
		 * first thread, which takes the hand-overs, sleeps at most
		 * HXW_RETRY_CAP_MS: a wait whose kick was lost is late by that
		 * at most, never held.  It wakes the others again at each look
		 * while their wake-ups fail (stale stays set), and they too
		 * look that often while any wake-up has failed. */
		next = me == 0 ? hx_w.ops->watchdog(hx_now_ns()) : INT64_MAX;
		if (retry < next)
			next = retry;
		if ((me == 0 || atomic_load_explicit(&hx_w.wake_failures, memory_order_relaxed)) &&
		    now + HXW_RETRY_CAP_MS * 1000000LL < next)
			next = now + HXW_RETRY_CAP_MS * 1000000LL;
		if (n == 0) {
			usleep(HXW_RETRY_CAP_MS * 100);
			continue;
		}
		csw = voluntary_switches();
		ret = hx_sync_wait_any(hx_w.dev, handles, points, n, next, &first);
		/* ENOENT: an object was destroyed while the set was being
		 * built; the rebuilt set will not have it. */
		if (ret == -EINTR || ret == -ETIME || ret == -ENOENT)
			continue;
		if (ret) {
			/* Retried (the waits stay queued), after a pause that
			 * keeps a dead device from becoming a busy loop. */
			if (wait_failures++ == 0)
				hx_err("DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT over %u handles failed: %s; "
				       "retried every %u ms", n, strerror(-ret), HXW_RETRY_CAP_MS / 10);
			usleep(HXW_RETRY_CAP_MS * 100);
			continue;
		}
		if (wait_failures) {
			hx_info("DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT works again after %u failure(s)",
				wait_failures);
			wait_failures = 0;
		}
		if (first < base || first >= n)
			continue; /* the set changed */

		struct hx_wait_entry *done = NULL;
		struct hx_waitable *hit = objs[first];

		/* Objects are freed only once every thread has been back at
		 * the top of its loop, so `hit` is still readable; in_wlist
		 * says whether it still has waits (if it moved to another
		 * thread's list meanwhile, collecting it here is as good). */
		pthread_mutex_lock(&hx_w.lock);
		if (hit->in_wlist)
			hxw_collect_locked(hit, hit->timeline ? &points[first] : NULL, 0, &done);
		pthread_mutex_unlock(&hx_w.lock);
		hxw_complete(done);
		/* Read after the release, not before: a switch while releasing
		 * counts as a sleep too, which only delays the next sweep. */
		slept = csw >= 0 && voluntary_switches() != csw;
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
		pthread_mutex_lock(&hx_w.lock);
		found = sweep_locked(handles, points, objs, first + 1, n, &done);
		pthread_mutex_unlock(&hx_w.lock);
		hxw_complete(done);
		if (found)
			backoff = 0;
		else
			skip = backoff = backoff ? (backoff < 64 ? backoff * 2 : 64) : 1;
	}
	return NULL;
}
