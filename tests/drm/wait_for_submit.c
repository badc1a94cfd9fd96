/* Waiting on a binary syncobj that has no fence yet: EINVAL without
 * DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, a real wait with it. */
#include "hxtest.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	int fd = drm_open();
	uint32_t h = so_create(fd, false);
	int r;

	r = drmSyncobjWait(fd, &h, 1, deadline_ms(100), 0, NULL);
	CHECK(r == -EINVAL, "wait on an empty syncobj without WAIT_FOR_SUBMIT: got %d (%s), want EINVAL",
		 r, strerror(-r));
	hx_note("empty syncobj, no WAIT_FOR_SUBMIT -> EINVAL");

	int64_t t0 = now_ns();
	struct hx_later d;
	signal_later(&d, fd, h, 0, 50);
	r = drmSyncobjWait(fd, &h, 1, deadline_ms(10000), DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	int64_t took = now_ns() - t0;
	later_join(&d);
	CHECK(r == 0, "WAIT_FOR_SUBMIT wait: got %d (%s), want 0", r, strerror(-r));
	CHECK(took >= 40000000, "WAIT_FOR_SUBMIT wait returned after %.3f ms, before the signal (50 ms)",
		 (double)took / 1e6);
	hx_note("WAIT_FOR_SUBMIT wait returned after %.3f ms (signal at 50 ms)", (double)took / 1e6);

	/* Signaled now: a plain wait succeeds at once. */
	r = drmSyncobjWait(fd, &h, 1, deadline_ms(1000), 0, NULL);
	CHECK(r == 0, "wait on the signaled syncobj: %s", strerror(-r));
	hx_note("plain wait on the signaled syncobj -> 0");

	CHECK(drmSyncobjDestroy(fd, h) == 0, "destroy");
	close(fd);
	return 0;
}
