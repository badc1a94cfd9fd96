/* DRM_IOCTL_SYNCOBJ_EVENTFD (Linux 6.6): an eventfd becomes readable when a
 * binary syncobj or a timeline point signals (flags 0), or when the fence
 * for it is submitted (WAIT_AVAILABLE) -- and not before. */
#include "hxtest.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static int readable(int efd, int timeout_ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	int r = poll(&p, 1, timeout_ms);
	CHECK(r >= 0, "poll: %s", strerror(errno));
	return r == 1 && (p.revents & POLLIN);
}

static int attach(int fd, uint32_t h, uint64_t point, uint32_t flags, int efd)
{
	struct drm_syncobj_eventfd a;
	memset(&a, 0, sizeof(a));
	a.handle = h;
	a.flags = flags;
	a.point = point;
	a.fd = efd;
	return drmIoctl(fd, DRM_IOCTL_SYNCOBJ_EVENTFD, &a) == 0 ? 0 : -errno;
}

static int new_eventfd(void)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	CHECK(efd >= 0, "eventfd: %s", strerror(errno));
	return efd;
}

/* Attach an eventfd to (h, point) with flags, check it is quiet, call
 * `fire` points in order, and check it is readable only after the last. */
static void check(int fd, const char *what, uint64_t point, uint32_t flags,
		  const uint64_t *steps, int nsteps)
{
	uint32_t h = so_create(fd, false);
	int efd = new_eventfd();
	int r = attach(fd, h, point, flags, efd);
	CHECK(r == 0, "%s: DRM_IOCTL_SYNCOBJ_EVENTFD: %s", what, strerror(-r));
	CHECK(!readable(efd, 0), "%s: eventfd readable before any signal", what);
	for (int i = 0; i < nsteps; i++) {
		uint64_t p = steps[i];
		r = p ? drmSyncobjTimelineSignal(fd, &h, &p, 1) : drmSyncobjSignal(fd, &h, 1);
		CHECK(r == 0, "%s: signal %llu: %s", what, (unsigned long long)p, strerror(-r));
		if (i < nsteps - 1)
			CHECK(!readable(efd, 20), "%s: eventfd readable after signaling only %llu",
				 what, (unsigned long long)p);
	}
	CHECK(readable(efd, 2000), "%s: eventfd not readable after the signal", what);
	uint64_t cnt = 0;
	CHECK(read(efd, &cnt, sizeof(cnt)) == sizeof(cnt) && cnt >= 1, "%s: eventfd read", what);
	hx_note("%s", what);
	close(efd);
	CHECK(drmSyncobjDestroy(fd, h) == 0, "destroy");
}

int main(void)
{
	int fd = drm_open();

	/* Is the ioctl there at all?  An unknown ioctl gives EINVAL/ENOTTY;
	 * a bad handle with a valid eventfd must give ENOENT. */
	int efd = new_eventfd();
	int r = attach(fd, 0x7fffffff, 0, 0, efd);
	CHECK(r == -ENOENT, "DRM_IOCTL_SYNCOBJ_EVENTFD on a bad handle: got %d (%s), want ENOENT "
		 "(ioctl missing? needs Linux >= 6.6)", r, strerror(-r));
	close(efd);

	/* Flags other than 0/WAIT_AVAILABLE are rejected. */
	uint32_t h = so_create(fd, false);
	efd = new_eventfd();
	r = attach(fd, h, 0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, efd);
	CHECK(r == -EINVAL, "eventfd with WAIT_FOR_SUBMIT: got %d (%s), want EINVAL", r, strerror(-r));
	close(efd);
	drmSyncobjDestroy(fd, h);
	hx_note("ioctl present; bad handle -> ENOENT, bad flags -> EINVAL");

	static const uint64_t bin[] = { 0 };
	static const uint64_t tl[] = { 2, 4 };
	static const uint64_t tl_over[] = { 3, 8 };
	check(fd, "binary syncobj, flags 0", 0, 0, bin, 1);
	check(fd, "binary syncobj, WAIT_AVAILABLE", 0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE, bin, 1);
	check(fd, "timeline point 4, flags 0 (2 then 4)", 4, 0, tl, 2);
	check(fd, "timeline point 6, WAIT_AVAILABLE (3 then 8)", 6, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
	      tl_over, 2);

	/* Attaching to a point that is already signaled fires at once. */
	h = so_create(fd, false);
	uint64_t p = 5;
	CHECK(drmSyncobjTimelineSignal(fd, &h, &p, 1) == 0, "signal 5");
	efd = new_eventfd();
	r = attach(fd, h, 5, 0, efd);
	CHECK(r == 0, "eventfd on a signaled point: %s", strerror(-r));
	CHECK(readable(efd, 2000), "eventfd on an already signaled point is not readable");
	close(efd);
	drmSyncobjDestroy(fd, h);
	hx_note("eventfd on an already signaled point is readable");

	close(fd);
	return 0;
}
