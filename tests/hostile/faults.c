/* SPDX-License-Identifier: MIT */
/*
 * Fault injection for the hostile tests: definitions in the executable
 * come first in the symbol lookup order, ahead of the preloaded shim and of
 * libdrm/libc, so these wrappers see every call the shim makes to them.
 * Each forwards to the next definition (RTLD_NEXT) unless the test armed a
 * fault (hxf_faults, set after the test's own setup so that only the
 * shim's calls are affected).
 *
 * What they simulate is what the test VM's 6.12 kernel cannot show: a
 * driver without sync objects or without timelines, a kernel without
 * DRM_IOCTL_SYNCOBJ_EVENTFD (< 6.6), and a node the user may not open.
 */
/* Both open() and open64() are defined below under their own names. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <xf86drm.h>

#include "faults.h"

#ifndef DRM_IOCTL_SYNCOBJ_EVENTFD
struct hxf_syncobj_eventfd {
	uint32_t handle, flags;
	uint64_t point;
	int32_t fd;
	uint32_t pad;
};
#define DRM_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct hxf_syncobj_eventfd)
#endif

volatile unsigned hxf_faults;
volatile unsigned hxf_hits;

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

int drmGetCap(int fd, uint64_t capability, uint64_t *value)
{
	static int (*real)(int, uint64_t, uint64_t *);
	int ret;

	if (!real)
		real = (int (*)(int, uint64_t, uint64_t *))next_sym("drmGetCap");
	ret = real(fd, capability, value);
	if (ret == 0 && capability == DRM_CAP_SYNCOBJ && (hxf_faults & HXF_NO_SYNCOBJ)) {
		*value = 0;
		hxf_hits++;
	}
	if (ret == 0 && capability == DRM_CAP_SYNCOBJ_TIMELINE && (hxf_faults & HXF_NO_TIMELINE)) {
		*value = 0;
		hxf_hits++;
	}
	return ret;
}

int drmIoctl(int fd, unsigned long request, void *arg)
{
	static int (*real)(int, unsigned long, void *);

	if (!real)
		real = (int (*)(int, unsigned long, void *))next_sym("drmIoctl");
	if (request == DRM_IOCTL_SYNCOBJ_EVENTFD && (hxf_faults & HXF_NO_EVENTFD)) {
		/* drm_ioctl() answers an ioctl number beyond its table with
		 * EINVAL; some stacks report ENOTTY.  The shim must take
		 * both as "not available". */
		hxf_hits++;
		errno = (hxf_faults & HXF_EVENTFD_ENOTTY) ? ENOTTY : EINVAL;
		return -1;
	}
	return real(fd, request, arg);
}

static int open_common(const char *sym, const char *path, int flags, mode_t mode)
{
	int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))next_sym(sym);

	if ((hxf_faults & HXF_OPEN_EACCES) && path && strncmp(path, "/dev/dri/", 9) == 0) {
		hxf_hits++;
		errno = EACCES;
		return -1;
	}
	return real(path, flags, mode);
}

#define OPEN_MODE(flags, mode)                                                               \
	do {                                                                                 \
		if ((flags) & (O_CREAT | O_TMPFILE)) {                                       \
			va_list ap;                                                          \
			va_start(ap, flags);                                                 \
			mode = va_arg(ap, mode_t);                                           \
			va_end(ap);                                                          \
		}                                                                            \
	} while (0)

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	OPEN_MODE(flags, mode);
	return open_common("open", path, flags, mode);
}

/* open64 too: the same function on x86-64, but a caller built with other
 * flags may bind to either name. */
int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	OPEN_MODE(flags, mode);
	return open_common("open64", path, flags, mode);
}
