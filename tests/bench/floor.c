/* SPDX-License-Identifier: MIT */
/*
 * hxbench floor: the kernel's own cost of the wait the fallback waiter
 * sleeps in, without the shim or a runtime.
 *
 *   hxbench floor OUTFILE N
 *
 * One thread blocks in DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT (wait-for-submit,
 * wait-any) over N timeline syncobjs; the main thread signals one of them
 * and measures the time until the wait returns.  The same is measured with
 * a wait over that one syncobj only, alternating, in the same process: the
 * difference is what N pending semaphores add to every release in the
 * fallback mode, whatever user space does (the kernel arms N waits before
 * sleeping and takes all N down again before returning).
 *
 * Writes 'lat floor.N.multi', 'lat floor.N.single' and
 * 'val floor.N.ns_per_handle'.  The caller has checked for a render node.
 * Bounded by HXBENCH_SECONDS (default 40) and HXBENCH_SAMPLES (default
 * 300, at most 200 here).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "floor.h"

#define MAX_SAMPLES 200

static int drm;
static struct {
	uint32_t *handles;
	uint64_t *points;
	uint32_t count;
	int64_t t_ret;
	uint32_t first;
	int ret;
	bool quit;
	sem_t go, done;
} mw;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void *waiter(void *arg)
{
	(void)arg;
	for (;;) {
		while (sem_wait(&mw.go) && errno == EINTR)
			;
		if (mw.quit)
			return NULL;
		mw.ret = drmSyncobjTimelineWait(drm, mw.handles, mw.points, mw.count, INT64_MAX,
						DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, &mw.first);
		mw.t_ret = now_ns();
		sem_post(&mw.done);
	}
}

static void report(FILE *out, const char *name, int64_t *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	fprintf(out, "lat %s %lld %lld %u\n", name, (long long)v[n / 2],
		(long long)v[(unsigned)(0.99 * (n - 1) + 0.5)], n);
	printf("lat %s %lld %lld %u\n", name, (long long)v[n / 2],
	       (long long)v[(unsigned)(0.99 * (n - 1) + 0.5)], n);
}

int hxbench_floor(int argc, char **argv)
{
	const char *node = getenv("HIPEXTSEM_RENDER_NODE");
	long secs = getenv("HXBENCH_SECONDS") ? atol(getenv("HXBENCH_SECONDS")) : 40;
	unsigned nsamples = getenv("HXBENCH_SAMPLES") ? (unsigned)atol(getenv("HXBENCH_SAMPLES"))
						      : 300;
	static int64_t multi[MAX_SAMPLES], single[MAX_SAMPLES];
	unsigned nm = 0, ns = 0, n;
	uint32_t *all;
	uint64_t *pts, one_pt;
	pthread_t th;
	char name[64];
	FILE *out;

	/* argv[0] is the mode. */
	if (argc < 3 || atol(argv[2]) < 1) {
		fprintf(stderr, "usage: hxbench floor OUTFILE N\n");
		return 2;
	}
	n = (unsigned)atol(argv[2]);
	drm = open(node ? node : "/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
	if (drm < 0) {
		fprintf(stderr, "hxbench floor: %s: %s\n", node ? node : "/dev/dri/renderD128",
			strerror(errno));
		return 1;
	}
	if (nsamples > MAX_SAMPLES)
		nsamples = MAX_SAMPLES;
	all = calloc(n, sizeof(*all));
	pts = calloc(n, sizeof(*pts));
	if (!all || !pts)
		return 1;
	for (unsigned i = 0; i < n; i++)
		if (drmSyncobjCreate(drm, 0, &all[i])) {
			fprintf(stderr, "hxbench floor: syncobj %u of %u: %s\n", i, n, strerror(errno));
			return 1;
		}
	sem_init(&mw.go, 0, 0);
	sem_init(&mw.done, 0, 0);
	pthread_create(&th, NULL, waiter, NULL);

	/* Time for the kernel to arm the wide wait before the signal: its
	 * set-up is O(N) too and must not be counted. */
	long settle_us = 1000 + n;
	int64_t deadline = now_ns() + secs * 1000000000LL;

	for (unsigned s = 0; (nm < nsamples || ns < nsamples) && now_ns() < deadline; s++) {
		bool wide = s % 2 == 0;
		/* Spread the signaled one over the array: the kernel scans
		 * the entries up to it once woken. */
		unsigned i = (unsigned)(((uint64_t)s * 7919) % n);
		uint64_t point = s + 1; /* above every value signaled so far */

		if (wide) {
			for (unsigned j = 0; j < n; j++)
				pts[j] = point;
			mw.handles = all;
			mw.points = pts;
			mw.count = n;
		} else {
			one_pt = point;
			mw.handles = &all[i];
			mw.points = &one_pt;
			mw.count = 1;
		}
		sem_post(&mw.go);
		sleep_us(settle_us);
		int64_t t0 = now_ns();
		if (drmSyncobjTimelineSignal(drm, &all[i], &point, 1)) {
			fprintf(stderr, "hxbench floor: signal: %s\n", strerror(errno));
			return 1;
		}
		while (sem_wait(&mw.done) && errno == EINTR)
			;
		if (mw.ret || mw.first != (wide ? i : 0)) {
			fprintf(stderr, "hxbench floor: wait returned %d, index %u (expected %u)\n", mw.ret,
				mw.first, wide ? i : 0);
			return 1;
		}
		if (wide && nm < nsamples)
			multi[nm++] = mw.t_ret - t0;
		else if (!wide && ns < nsamples)
			single[ns++] = mw.t_ret - t0;
	}
	mw.quit = true;
	sem_post(&mw.go);
	pthread_join(th, NULL);
	if (!nm || !ns) {
		fprintf(stderr, "hxbench floor: no samples within %ld s\n", secs);
		return 1;
	}
	out = fopen(argv[1], "a");
	if (!out) {
		fprintf(stderr, "hxbench floor: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	snprintf(name, sizeof(name), "floor.%u.multi", n);
	report(out, name, multi, nm);
	snprintf(name, sizeof(name), "floor.%u.single", n);
	report(out, name, single, ns);
	fprintf(out, "val floor.%u.ns_per_handle %.1f\n", n,
		(double)(multi[nm / 2] - single[ns / 2]) / n);
	if (now_ns() >= deadline)
		fprintf(out, "val time_budget_hit 1\n");
	fclose(out);
	return 0;
}
