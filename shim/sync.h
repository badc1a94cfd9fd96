/* SPDX-License-Identifier: MIT */
/*
 * The sync layer: the only code in the project that issues DRM ioctls.
 *
 * Every function returns 0 or a negative errno and never logs on the hot
 * path (one exception, once per process: hx_sync_reset); callers decide
 * what is worth a log line.  libdrm's wrappers return
 * -1 with errno set (drmIoctl) — they are wrapped here so the convention is
 * uniform.
 */
#ifndef HIPEXTSEM_SYNC_H
#define HIPEXTSEM_SYNC_H

#include <stdbool.h>
#include <stdint.h>

struct hx_sync_dev {
	int fd;
	char path[64];
	char driver[32];
	char pci_bus_id[32]; /* "dddd:bb:dd.f", empty if not a PCI device */
	bool has_timeline;   /* DRM_CAP_SYNCOBJ_TIMELINE */
	bool has_eventfd;    /* DRM_IOCTL_SYNCOBJ_EVENTFD works (Linux 6.6+) */
};

/* What the caller would like: a specific node, or the node of a PCI
 * device, and whether timelines are required. */
struct hx_sync_open_opts {
	const char *node_path;  /* HIPEXTSEM_RENDER_NODE; NULL: pick one */
	const char *pci_bus_id; /* the HIP device's bus id, NULL if unknown */
	bool want_timeline;
	bool allow_eventfd;     /* false forces the multi-wait fallback */
};

int hx_sync_open(struct hx_sync_dev *dev, const struct hx_sync_open_opts *opts);
void hx_sync_close(struct hx_sync_dev *dev);

/* Probe one already-open DRM fd (used by hx_sync_open and by tools). */
int hx_sync_probe_fd(int fd, struct hx_sync_dev *dev, bool allow_eventfd);

int hx_sync_create(const struct hx_sync_dev *dev, bool signaled, uint32_t *handle);
int hx_sync_import_fd(const struct hx_sync_dev *dev, int syncobj_fd, uint32_t *handle);
/* A new binary syncobj whose fence is the one `sync_file_fd` holds
 * (DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE with IMPORT_SYNC_FILE).  -EINVAL when the
 * kernel finds the file is not a sync_file; nothing is left behind on any
 * failure.  The caller may close sync_file_fd afterwards. */
int hx_sync_import_sync_file(const struct hx_sync_dev *dev, int sync_file_fd, uint32_t *handle,
			     const char **step);
int hx_sync_export_fd(const struct hx_sync_dev *dev, uint32_t handle, int *syncobj_fd);
int hx_sync_destroy(const struct hx_sync_dev *dev, uint32_t handle);

/* point == 0 means a binary syncobj. */
int hx_sync_signal(const struct hx_sync_dev *dev, uint32_t handle, uint64_t point);
/* Resets a binary syncobj (consumes its signal).  A syncobj that carries
 * timeline points is never reset: that would drop the producer's whole
 * timeline.  Such a syncobj is left as it is, 0 is returned, and the
 * process's first such skip writes one warning line (the one log line of
 * this layer: it marks a semaphore imported with the wrong type).  A
 * failed query of its points fails the reset (never a reset in the dark). */
int hx_sync_reset(const struct hx_sync_dev *dev, uint32_t handle);
/* A binary semaphore's signal, decided from the syncobj's state now: one
 * that carries timeline points (a timeline imported as OpaqueFd that had
 * none at import) gets point `value` if that is past its last point, so
 * that the chain is kept; a binary signal there would replace the chain
 * and take the timeline back to 0.  -ERANGE (nothing signaled) when
 * `value` is not past the last point, whose value then goes to *last.
 * Otherwise an ordinary binary signal.  A point the other side adds
 * between the query and the binary signal is still replaced: the kernel
 * has no conditional signal.  A failed query fails the signal (nothing
 * signaled; the caller retries). */
int hx_sync_signal_binary(const struct hx_sync_dev *dev, uint32_t handle, uint64_t value,
			  uint64_t *last);
/* The last point submitted to a timeline syncobj (DRM_IOCTL_SYNCOBJ_QUERY
 * with LAST_SUBMITTED): 0 for a syncobj that carries no timeline points (a
 * binary one, or a timeline with none yet).  -EOPNOTSUPP on a device
 * without timelines. */
int hx_sync_last_point(const struct hx_sync_dev *dev, uint32_t handle, uint64_t *point);
/* Whether the object carries timeline points, asked wherever the shim
 * decides between binary and timeline (the import, a binary signal, a
 * reset): 0 with *last its last point (0: none, or a device without
 * timelines, or a kernel that does not know LAST_SUBMITTED, EINVAL: then
 * nothing can be known and the object is taken as binary).  Any other
 * failure is returned as -errno with *last 0, and is the caller's failure:
 * never taken for "no points". */
int hx_sync_points(const struct hx_sync_dev *dev, uint32_t handle, uint64_t *last);
int hx_sync_query(const struct hx_sync_dev *dev, uint32_t handle, uint64_t *value);
/* Current values of many timeline syncobjs in one ioctl. */
int hx_sync_query_many(const struct hx_sync_dev *dev, uint32_t *handles, uint64_t *values,
		       uint32_t count);
/* Zero-timeout check; 0 = signaled, -ETIME = not yet (also not submitted). */
int hx_sync_poll(const struct hx_sync_dev *dev, uint32_t handle, uint64_t point);
/* Arm `efd` to be incremented once `point` signals (wait-for-submit
 * semantics: an unsubmitted point is waited for, not an error). */
int hx_sync_eventfd(const struct hx_sync_dev *dev, uint32_t handle, uint64_t point, int efd);
/* Blocks until any of the points signals or abs_timeout_ns (CLOCK_MONOTONIC,
 * INT64_MAX = forever) passes.  WAIT_FOR_SUBMIT semantics. */
int hx_sync_wait_any(const struct hx_sync_dev *dev, uint32_t *handles, uint64_t *points,
		     uint32_t count, int64_t abs_timeout_ns, uint32_t *first);
/* Blocking wait for one point with an absolute deadline. */
int hx_sync_wait_one(const struct hx_sync_dev *dev, uint32_t handle, uint64_t point,
		     int64_t abs_timeout_ns);

int64_t hx_now_ns(void);

#endif
