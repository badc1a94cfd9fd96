/* SPDX-License-Identifier: MIT */
/*
 * A pending dma_fence the test controls, from the kernel's vgem driver:
 * a dumb buffer on vgem's primary node (vgem makes dumb buffers only
 * there, not on its render node), a write fence attached to it
 * (VGEM_FENCE_ATTACH), the buffer exported as a dma-buf (PRIME), and the
 * dma-buf's implicit fence taken as a sync_file (DMA_BUF_IOCTL_EXPORT_SYNC_FILE
 * for reading: the fences a reader waits for, i.e. the write fence).  The
 * fence signals on VGEM_FENCE_SIGNAL, or by itself after about 10 s, so a
 * test's pending window must stay well below that.
 */
#ifndef HXTEST_VGEM_H
#define HXTEST_VGEM_H

#include <linux/dma-buf.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <xf86drm.h>

#include "hxtest.h"

/* vgem's uAPI (include/uapi/drm/vgem_drm.h; libdrm does not ship it). */
struct vgem_fence_attach_args {
	uint32_t handle;
	uint32_t flags; /* VGEM_WRITE: an exclusive (write) fence */
	uint32_t out_fence;
	uint32_t pad;
};
struct vgem_fence_signal_args {
	uint32_t fence;
	uint32_t flags;
};
#define VGEM_WRITE 0x1
#define VGEM_IOCTL_FENCE_ATTACH DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct vgem_fence_attach_args)
#define VGEM_IOCTL_FENCE_SIGNAL DRM_IOW(DRM_COMMAND_BASE + 0x2, struct vgem_fence_signal_args)

/* Opens vgem's primary node (/dev/dri/cardN whose driver is "vgem"). */
static inline int vgem_open(void)
{
	for (int i = 0; i < 16; i++) {
		char path[32];
		drmVersionPtr v;
		int fd;
		bool is_vgem;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		is_vgem = v && v->name && strcmp(v->name, "vgem") == 0;
		drmFreeVersion(v);
		if (is_vgem)
			return fd;
		close(fd);
	}
	FAIL("no vgem card node in /dev/dri: the test VM loads the vgem module "
	     "(HX_VM_MODULES in scripts/lib/vm.sh)");
}

struct vgem_fence {
	int card;
	uint32_t bo;
	uint32_t fence;
	int dmabuf;
};

/* A new buffer with a pending write fence; returns a sync_file of it. */
static inline int vgem_pending_sync_file(int card, struct vgem_fence *vf)
{
	struct drm_mode_create_dumb dumb = { .height = 1, .width = 64, .bpp = 32 };
	struct vgem_fence_attach_args at = { 0 };
	struct dma_buf_export_sync_file ex = { .flags = DMA_BUF_SYNC_READ, .fd = -1 };

	CHECK(drmIoctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &dumb) == 0,
	      "DRM_IOCTL_MODE_CREATE_DUMB on vgem: %s", strerror(errno));
	at.handle = dumb.handle;
	at.flags = VGEM_WRITE;
	CHECK(drmIoctl(card, VGEM_IOCTL_FENCE_ATTACH, &at) == 0, "VGEM_FENCE_ATTACH: %s",
	      strerror(errno));
	vf->card = card;
	vf->bo = dumb.handle;
	vf->fence = at.out_fence;
	CHECK(drmPrimeHandleToFD(card, dumb.handle, DRM_CLOEXEC | DRM_RDWR, &vf->dmabuf) == 0,
	      "PRIME export of the vgem buffer: %s", strerror(errno));
	CHECK(ioctl(vf->dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &ex) == 0 && ex.fd >= 0,
	      "DMA_BUF_IOCTL_EXPORT_SYNC_FILE: %s", strerror(errno));
	return ex.fd;
}

static inline void vgem_signal(struct vgem_fence *vf)
{
	struct vgem_fence_signal_args sig = { .fence = vf->fence };

	CHECK(drmIoctl(vf->card, VGEM_IOCTL_FENCE_SIGNAL, &sig) == 0, "VGEM_FENCE_SIGNAL: %s",
	      strerror(errno));
}

static inline void vgem_release(struct vgem_fence *vf)
{
	struct drm_gem_close gc = { .handle = vf->bo };

	close(vf->dmabuf);
	CHECK(drmIoctl(vf->card, DRM_IOCTL_GEM_CLOSE, &gc) == 0, "GEM_CLOSE: %s", strerror(errno));
}

/* Is the fence of a sync_file signaled?  (poll: readable once it is.) */
static inline bool sync_file_signaled(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

#endif
