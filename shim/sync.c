/* SPDX-License-Identifier: MIT */
#include "sync.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "hot.h"
#include "log.h"

/* Linux 6.6 added DRM_IOCTL_SYNCOBJ_EVENTFD; libdrm < 2.4.116 headers (Debian
 * 12 has 2.4.114) do not know it.  The layout is fixed uAPI. */
#ifndef DRM_IOCTL_SYNCOBJ_EVENTFD
struct drm_syncobj_eventfd {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__s32 fd;
	__u32 pad;
};
#define DRM_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct drm_syncobj_eventfd)
#endif

#ifndef DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT
#define DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT (1 << 1)
#endif

static int neg_errno(int ret)
{
	/* libdrm wrappers return -1 and set errno; a few return -errno. */
	if (ret == 0)
		return 0;
	if (ret == -1)
		return errno ? -errno : -EIO;
	return ret < 0 ? ret : -EIO;
}

HX_HOT_PATH
int64_t hx_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}


int hx_sync_create(const struct hx_sync_dev *dev, bool signaled, uint32_t *handle)
{
	return neg_errno(drmSyncobjCreate(dev->fd, signaled ? DRM_SYNCOBJ_CREATE_SIGNALED : 0,
					  handle));
}

int hx_sync_import_fd(const struct hx_sync_dev *dev, int syncobj_fd, uint32_t *handle)
{
	/* The kernel checks that the file really is a syncobj (EINVAL if not)
	 * and takes its own reference: the caller may close syncobj_fd. */
	return neg_errno(drmSyncobjFDToHandle(dev->fd, syncobj_fd, handle));
}

int hx_sync_import_sync_file(const struct hx_sync_dev *dev, int sync_file_fd, uint32_t *handle,
			     const char **step)
{
	uint32_t h;
	int ret = hx_sync_create(dev, false, &h);

	*step = "DRM_IOCTL_SYNCOBJ_CREATE";
	if (ret)
		return ret;
	/* The kernel takes the fence only from a file whose operations are
	 * the sync_file ones (anything else: EINVAL), and holds its own
	 * reference to the fence. */
	*step = "DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE (IMPORT_SYNC_FILE)";
	ret = neg_errno(drmSyncobjImportSyncFile(dev->fd, h, sync_file_fd));
	if (ret) {
		hx_sync_destroy(dev, h);
		return ret;
	}
	*handle = h;
	return 0;
}

int hx_sync_export_fd(const struct hx_sync_dev *dev, uint32_t handle, int *syncobj_fd)
{
	return neg_errno(drmSyncobjHandleToFD(dev->fd, handle, syncobj_fd));
}

int hx_sync_destroy(const struct hx_sync_dev *dev, uint32_t handle)
{
	return neg_errno(drmSyncobjDestroy(dev->fd, handle));
}

int hx_sync_signal(const struct hx_sync_dev *dev, uint32_t handle, uint64_t point)
{
	if (point == 0)
		return neg_errno(drmSyncobjSignal(dev->fd, &handle, 1));
	return neg_errno(drmSyncobjTimelineSignal(dev->fd, &handle, &point, 1));
}

int hx_sync_last_point(const struct hx_sync_dev *dev, uint32_t handle, uint64_t *point)
{
	struct drm_syncobj_timeline_array args = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)point,
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED,
	};

	*point = 0;
	/* The kernel answers 0 unless the syncobj's fence is a chain of
	 * timeline points; then the newest point, signaled or not. */
	return neg_errno(drmIoctl(dev->fd, DRM_IOCTL_SYNCOBJ_QUERY, &args));
}

/* sync.h.  The one answer to "does this object carry timeline points?",
 * for the import, a binary signal and a reset alike. */
int hx_sync_points(const struct hx_sync_dev *dev, uint32_t handle, uint64_t *last)
{
	int ret;

	*last = 0;
	if (!dev->has_timeline)
		return 0;
	ret = hx_sync_last_point(dev, handle, last);
	if (ret == -EINVAL) {
		*last = 0;
		return 0;
	}
	return ret;
}

int hx_sync_signal_binary(const struct hx_sync_dev *dev, uint32_t handle, uint64_t value,
			  uint64_t *last)
{
	int ret = hx_sync_points(dev, handle, last);

	if (ret)
		return ret;
	if (*last) {
		if (value <= *last)
			return -ERANGE;
		return hx_sync_signal(dev, handle, value);
	}
	return hx_sync_signal(dev, handle, 0);
}

static atomic_ulong resets_skipped;

int hx_sync_reset(const struct hx_sync_dev *dev, uint32_t handle)
{
	uint64_t point = 0;
	int ret = hx_sync_points(dev, handle, &point);

	/* A binary semaphore's syncobj that holds timeline points (a
	 * timeline imported as OpaqueFd that had no point yet at import) is
	 * never reset: the wait passes, the timeline stays. */
	if (ret)
		return ret;
	if (point) {
		if (atomic_fetch_add_explicit(&resets_skipped, 1, memory_order_relaxed) == 0)
			hx_warn("syncobj %u, imported as a binary semaphore (OpaqueFd), carries "
				"timeline points (point %llu): it is not reset after a wait, which "
				"would drop the timeline; import it as TimelineSemaphoreFd (9) so "
				"that waits and signals use fence.value", handle,
				(unsigned long long)point);
		return 0;
	}
	return neg_errno(drmSyncobjReset(dev->fd, &handle, 1));
}

int hx_sync_query(const struct hx_sync_dev *dev, uint32_t handle, uint64_t *value)
{
	return neg_errno(drmSyncobjQuery(dev->fd, &handle, value, 1));
}

int hx_sync_query_many(const struct hx_sync_dev *dev, uint32_t *handles, uint64_t *values,
		       uint32_t count)
{
	return neg_errno(drmSyncobjQuery(dev->fd, handles, values, count));
}

int hx_sync_wait_any(const struct hx_sync_dev *dev, uint32_t *handles, uint64_t *points,
		     uint32_t count, int64_t abs_timeout_ns, uint32_t *first)
{
	const uint32_t flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;

	if (dev->has_timeline)
		return neg_errno(drmSyncobjTimelineWait(dev->fd, handles, points, count,
							abs_timeout_ns, flags, first));
	/* Binary-only kernel: points are all 0 by construction. */
	return neg_errno(drmSyncobjWait(dev->fd, handles, count, abs_timeout_ns, flags, first));
}

int hx_sync_wait_one(const struct hx_sync_dev *dev, uint32_t handle, uint64_t point,
		     int64_t abs_timeout_ns)
{
	return hx_sync_wait_any(dev, &handle, &point, 1, abs_timeout_ns, NULL);
}

int hx_sync_poll(const struct hx_sync_dev *dev, uint32_t handle, uint64_t point)
{
	/* A zero deadline makes the kernel check and return at once; without
	 * WAIT_FOR_SUBMIT an unsubmitted binary syncobj would be EINVAL, with
	 * it the answer is simply ETIME. */
	return hx_sync_wait_one(dev, handle, point, 0);
}

HX_HOT_PATH
int hx_sync_eventfd(const struct hx_sync_dev *dev, uint32_t handle, uint64_t point, int efd)
{
	struct drm_syncobj_eventfd args = {
		.handle = handle,
		.flags = 0, /* wait for the point to signal, not just to appear */
		.point = point,
		.fd = efd,
	};
	return neg_errno(drmIoctl(dev->fd, DRM_IOCTL_SYNCOBJ_EVENTFD, &args));
}

static bool probe_eventfd(struct hx_sync_dev *dev)
{
	uint32_t handle;
	bool ok = false;
	int efd;

	if (!dev->has_timeline)
		return false; /* the ioctl needs DRIVER_SYNCOBJ_TIMELINE */
	if (hx_sync_create(dev, true, &handle))
		return false;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd >= 0) {
		/* A signaled syncobj must bump the counter immediately; some
		 * early 6.6 kernels accepted the ioctl but never fired for
		 * binary syncobjs, so check the effect, not just the return. */
		uint64_t v = 0;
		if (hx_sync_eventfd(dev, handle, 0, efd) == 0 &&
		    read(efd, &v, sizeof(v)) == (ssize_t)sizeof(v) && v >= 1)
			ok = true;
		close(efd);
	}
	hx_sync_destroy(dev, handle);
	return ok;
}

int hx_sync_probe_fd(int fd, struct hx_sync_dev *dev, bool allow_eventfd)
{
	uint64_t cap = 0;
	drmVersionPtr ver;
	drmDevicePtr ddev = NULL;

	memset(dev, 0, sizeof(*dev));
	dev->fd = fd;
	if (drmGetCap(fd, DRM_CAP_SYNCOBJ, &cap) || !cap)
		return -ENOTSUP;
	cap = 0;
	dev->has_timeline = drmGetCap(fd, DRM_CAP_SYNCOBJ_TIMELINE, &cap) == 0 && cap;
	ver = drmGetVersion(fd);
	if (ver) {
		snprintf(dev->driver, sizeof(dev->driver), "%s", ver->name ? ver->name : "");
		drmFreeVersion(ver);
	}
	if (drmGetDevice2(fd, 0, &ddev) == 0 && ddev) {
		if (ddev->bustype == DRM_BUS_PCI && ddev->businfo.pci)
			snprintf(dev->pci_bus_id, sizeof(dev->pci_bus_id), "%04x:%02x:%02x.%x",
				 ddev->businfo.pci->domain, ddev->businfo.pci->bus,
				 ddev->businfo.pci->dev, ddev->businfo.pci->func);
		drmFreeDevice(&ddev);
	}
	dev->has_eventfd = allow_eventfd && probe_eventfd(dev);
	return 0;
}

static int open_node(const char *path, struct hx_sync_dev *dev, bool allow_eventfd)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = hx_sync_probe_fd(fd, dev, allow_eventfd);
	if (ret) {
		close(fd);
		return ret;
	}
	snprintf(dev->path, sizeof(dev->path), "%s", path);
	return 0;
}

static bool bus_id_equal(const char *a, const char *b)
{
	/* HIP reports "0000:03:00.0"; be lenient about case and a missing
	 * domain. */
	const char *ca = strchr(a, ':'), *cb = strchr(b, ':');
	if (ca && strchr(ca + 1, ':') == NULL)
		ca = a - 1;
	if (cb && strchr(cb + 1, ':') == NULL)
		cb = b - 1;
	if (!ca || !cb)
		return false;
	return strcasecmp(ca + 1, cb + 1) == 0;
}

int hx_sync_open(struct hx_sync_dev *dev, const struct hx_sync_open_opts *opts)
{
	char path[64];
	int best = -ENOENT;
	struct hx_sync_dev cand;
	bool have_any = false;
	DIR *dir;
	struct dirent *de;
	int names[64], n = 0;

	if (opts->node_path && *opts->node_path) {
		int ret = open_node(opts->node_path, dev, opts->allow_eventfd);
		if (ret == 0 && opts->want_timeline && !dev->has_timeline) {
			hx_sync_close(dev);
			return -EOPNOTSUPP;
		}
		return ret;
	}

	dir = opendir("/dev/dri");
	if (!dir)
		return -ENOENT;
	while ((de = readdir(dir)) && n < (int)(sizeof(names) / sizeof(names[0]))) {
		int minor;
		if (sscanf(de->d_name, "renderD%d", &minor) == 1)
			names[n++] = minor;
	}
	closedir(dir);
	/* Stable order: lowest minor first. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && names[j] < names[j - 1]; j--) {
			int t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}

	for (int i = 0; i < n; i++) {
		int ret;
		snprintf(path, sizeof(path), "/dev/dri/renderD%d", names[i]);
		ret = open_node(path, &cand, opts->allow_eventfd);
		if (ret) {
			if (best == -ENOENT || ret == -EACCES)
				best = ret;
			continue;
		}
		if (opts->want_timeline && !cand.has_timeline) {
			best = -EOPNOTSUPP;
			hx_sync_close(&cand);
			continue;
		}
		/* The HIP device's own node wins outright. */
		if (opts->pci_bus_id && *opts->pci_bus_id && cand.pci_bus_id[0] &&
		    bus_id_equal(opts->pci_bus_id, cand.pci_bus_id)) {
			if (have_any)
				hx_sync_close(dev);
			*dev = cand;
			return 0;
		}
		if (!have_any) {
			*dev = cand;
			have_any = true;
		} else {
			hx_sync_close(&cand);
		}
	}
	return have_any ? 0 : best;
}

void hx_sync_close(struct hx_sync_dev *dev)
{
	if (dev->fd >= 0)
		close(dev->fd);
	dev->fd = -1;
}
