/* Small helpers shared by the DRM kernel-contract tests (tests/drm).
 *
 * Every test must fail loudly when the behaviour it checks is missing, and
 * also when there is no render node at all: these tests never "pass" on a
 * machine without /dev/dri (they are meant to run inside scripts/vm-run). */
#ifndef HIPEXTSEM_TESTS_DRM_UTIL_H
#define HIPEXTSEM_TESTS_DRM_UTIL_H

#include <stdint.h>
#include <linux/types.h>
#include <sys/ioctl.h>
#include <xf86drm.h>

/* DRM_IOCTL_SYNCOBJ_EVENTFD appeared in Linux 6.6 and in libdrm's copy of
 * drm.h after Debian 12's 2.4.114: define the uAPI here when absent. */
#ifndef DRM_IOCTL_SYNCOBJ_EVENTFD
struct drm_syncobj_eventfd {
	__u32 handle;
	__u32 flags; /* 0 or DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE */
	__u64 point;
	__s32 fd;
	__u32 pad;
};
#define DRM_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct drm_syncobj_eventfd)
#endif

#ifndef DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE
#define DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE (1 << 2)
#endif

/* The render node the tests use: $DRM_TEST_NODE or /dev/dri/renderD128. */
const char *du_node_path(void);

/* Opens a new DRM file on the render node; exits with a failure if absent. */
int du_open_render(void);

/* Monotonic clock in ns, and an absolute deadline `ms` from now suitable for
 * the syncobj wait ioctls (absolute CLOCK_MONOTONIC). */
int64_t du_now_ns(void);
int64_t du_deadline_ms(int64_t ms);

/* Reports a failure and exits 1. */
void du_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

/* Creates a syncobj (flags 0: unsignaled, no fence) or fails. */
uint32_t du_syncobj_create(int fd);

/* Prints a "# ok:" progress line (TAP comment friendly). */
void du_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Signals `handle` (binary: point 0, timeline: point > 0) after `delay_ms`
 * from a new thread.  du_join() waits for it. */
struct du_delayed;
struct du_delayed *du_signal_later(int fd, uint32_t handle, uint64_t point, int delay_ms);
void du_join(struct du_delayed *d);

#define DU_CHECK(cond, ...) \
	do { \
		if (!(cond)) \
			du_fail(__FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

#endif
