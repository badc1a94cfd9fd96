/* The render node advertises binary and timeline syncobjs, and it is the
 * virtio-gpu driver (the one the test VM provides). */
#include "hxtest.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	int fd = drm_open();
	uint64_t v = 0;
	int r = drmGetCap(fd, DRM_CAP_SYNCOBJ, &v);
	CHECK(r == 0, "drmGetCap(DRM_CAP_SYNCOBJ) failed: %d", r);
	CHECK(v == 1, "DRM_CAP_SYNCOBJ = %llu, want 1", (unsigned long long)v);
	hx_note("DRM_CAP_SYNCOBJ = 1");

	v = 0;
	r = drmGetCap(fd, DRM_CAP_SYNCOBJ_TIMELINE, &v);
	CHECK(r == 0, "drmGetCap(DRM_CAP_SYNCOBJ_TIMELINE) failed: %d", r);
	CHECK(v == 1, "DRM_CAP_SYNCOBJ_TIMELINE = %llu, want 1", (unsigned long long)v);
	hx_note("DRM_CAP_SYNCOBJ_TIMELINE = 1");

	drmVersionPtr ver = drmGetVersion(fd);
	CHECK(ver != NULL, "drmGetVersion failed");
	CHECK(ver->name && strcmp(ver->name, "virtio_gpu") == 0,
		 "driver is '%s', want 'virtio_gpu'", ver->name ? ver->name : "(null)");
	hx_note("driver %s %d.%d.%d", ver->name, ver->version_major, ver->version_minor,
		ver->version_patchlevel);
	drmFreeVersion(ver);
	close(fd);
	return 0;
}
