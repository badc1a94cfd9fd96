/* SPDX-License-Identifier: MIT */
/*
 * What the graph tests share: the render node, the "work" their host
 * nodes do (a counter), and a semaphore made of a real syncobj imported
 * through HIP.  Each test program includes it once, after hxtest.h.
 */
#ifndef HX_GRAPH_UTIL_H
#define HX_GRAPH_UTIL_H

static int drm = -1;
static uint64_t counter; /* the work of the graphs: each host node adds 1 */

static void work(void *data)
{
	(void)data;
	__atomic_add_fetch(&counter, 1, __ATOMIC_RELEASE);
}

static uint64_t count(void)
{
	return __atomic_load_n(&counter, __ATOMIC_ACQUIRE);
}

/* Whether the work reaches `want` within `ms` milliseconds. */
static bool count_reaches(uint64_t want, unsigned ms)
{
	int64_t end = now_ns() + (int64_t)ms * 1000000;

	while (count() < want && now_ns() < end)
		sleep_ms(1);
	return count() >= want;
}

struct sem {
	uint32_t h; /* the syncobj, on drm */
	hipExternalSemaphore_t s;
	bool timeline;
};

static struct sem sem_new(bool timeline)
{
	struct sem x = { .timeline = timeline };

	x.s = sem_import_new(drm, &x.h, timeline);
	return x;
}

static void sem_free(struct sem *x)
{
	HIPCHECK(hipDestroyExternalSemaphore(x->s));
	drmSyncobjDestroy(drm, x->h);
}

#endif
