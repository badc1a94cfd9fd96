/* Timeline syncobj contract: signal/query a point, waits below and above
 * the current value, and a waiter blocked on a future point wakes when
 * another thread signals it. */
#include "hxtest.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct waiter {
	int fd;
	uint32_t handle;
	int result;
	int64_t woke_ns;
};

static void *wait7(void *arg)
{
	struct waiter *w = arg;
	uint64_t point = 7;
	w->result = drmSyncobjTimelineWait(w->fd, &w->handle, &point, 1, deadline_ms(10000),
					   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	w->woke_ns = now_ns();
	return NULL;
}

int main(void)
{
	int fd = drm_open();
	uint32_t h = so_create(fd, false);
	uint64_t p, v;
	int r;

	p = 5;
	r = drmSyncobjTimelineSignal(fd, &h, &p, 1);
	CHECK(r == 0, "timeline signal of point 5: %s", strerror(-r));
	v = 0;
	r = drmSyncobjQuery(fd, &h, &v, 1);
	CHECK(r == 0, "query: %s", strerror(-r));
	CHECK(v == 5, "query after signaling 5 gives %llu", (unsigned long long)v);
	hx_note("signal 5, query = 5");

	p = 3;
	int64_t t0 = now_ns();
	r = drmSyncobjTimelineWait(fd, &h, &p, 1, deadline_ms(5000), 0, NULL);
	CHECK(r == 0, "wait for point 3 (<= 5): %s", strerror(-r));
	CHECK(now_ns() - t0 < 2000000000LL, "wait for an already signaled point blocked");
	hx_note("wait for 3 returns at once");

	/* A point that was never submitted: without WAIT_FOR_SUBMIT the kernel
	 * rejects the wait; with it, the wait times out. */
	p = 7;
	r = drmSyncobjTimelineWait(fd, &h, &p, 1, deadline_ms(20), 0, NULL);
	CHECK(r == -EINVAL, "wait for unsubmitted point 7 without WAIT_FOR_SUBMIT: got %d (%s), want EINVAL",
		 r, strerror(-r));
	hx_note("wait for unsubmitted 7 without WAIT_FOR_SUBMIT -> EINVAL");
	r = drmSyncobjTimelineWait(fd, &h, &p, 1, deadline_ms(50),
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	CHECK(r == -ETIME, "wait for point 7 with a 50 ms timeout: got %d (%s), want ETIME",
		 r, strerror(-r));
	hx_note("wait for 7 with a short timeout -> ETIME");

	struct waiter w = { .fd = fd, .handle = h, .result = 12345 };
	pthread_t th;
	CHECK(pthread_create(&th, NULL, wait7, &w) == 0, "pthread_create");
	usleep(100000);
	int64_t sig_ns = now_ns();
	p = 7;
	r = drmSyncobjTimelineSignal(fd, &h, &p, 1);
	CHECK(r == 0, "timeline signal of point 7: %s", strerror(-r));
	pthread_join(th, NULL);
	CHECK(w.result == 0, "waiter blocked on 7 got %d (%s), want 0", w.result, strerror(-w.result));
	CHECK(w.woke_ns >= sig_ns, "waiter returned before point 7 was signaled");
	r = drmSyncobjQuery(fd, &h, &v, 1);
	CHECK(r == 0 && v == 7, "query after signaling 7 gives %llu", (unsigned long long)v);
	hx_note("waiter blocked on 7 woke %.3f ms after the signal, query = 7",
		(double)(w.woke_ns - sig_ns) / 1e6);

	CHECK(drmSyncobjDestroy(fd, h) == 0, "destroy");
	close(fd);
	return 0;
}
