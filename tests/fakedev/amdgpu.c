/* The libdrm_amdgpu entry points ROCr 6.1+ and libhsakmt 6.x call on the
 * fake render node, answered by the fake; calls on any other device go to
 * the real libdrm_amdgpu. */
#include "fakedev.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libdrm/amdgpu.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern int memfd;

#define REAL(ret, name, ...)                                                   \
	static ret (*real_##name)(__VA_ARGS__);                                \
	if (!real_##name)                                                      \
		real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name);

/* ------------------------------------------------------- libdrm_amdgpu */

/* ROCr 6.1+ and libhsakmt 6.x query the device through libdrm_amdgpu;
 * for the fake node these calls are answered here.  libhsakmt 6.x closes
 * its own fd and keeps the one amdgpu_device_get_fd returns, so the
 * handle owns a duplicate. */
struct fake_amdgpu {
	uint32_t magic;
	int fd;
};
#define FAKE_AMDGPU_MAGIC 0xfa4eade5u

void *as_fake(void *dev)
{
	struct fake_amdgpu *f = dev;
	return f && f->magic == FAKE_AMDGPU_MAGIC ? f : NULL;
}

int amdgpu_device_initialize(int fd, uint32_t *major, uint32_t *minor, amdgpu_device_handle *dev)
{
	REAL(int, amdgpu_device_initialize, int, uint32_t *, uint32_t *, amdgpu_device_handle *);
	if (!fd_is_fake(fd)) {
		if (!real_amdgpu_device_initialize)
			return -ENOSYS;
		return real_amdgpu_device_initialize(fd, major, minor, dev);
	}
	struct fake_amdgpu *f = calloc(1, sizeof(*f));
	f->magic = FAKE_AMDGPU_MAGIC;
	f->fd = fcntl(memfd, F_DUPFD_CLOEXEC, 3);
	*major = 3;
	*minor = 57;
	*dev = (amdgpu_device_handle)f;
	fd_log(2, "amdgpu_device_initialize(%d) -> fake, fd %d", fd, f->fd);
	return 0;
}

int amdgpu_device_deinitialize(amdgpu_device_handle dev)
{
	REAL(int, amdgpu_device_deinitialize, amdgpu_device_handle);
	struct fake_amdgpu *f = as_fake(dev);
	if (!f)
		return real_amdgpu_device_deinitialize ? real_amdgpu_device_deinitialize(dev) : -ENOSYS;
	close(f->fd);
	f->magic = 0;
	free(f);
	return 0;
}

int amdgpu_device_get_fd(amdgpu_device_handle dev)
{
	REAL(int, amdgpu_device_get_fd, amdgpu_device_handle);
	struct fake_amdgpu *f = as_fake(dev);
	if (!f)
		return real_amdgpu_device_get_fd ? real_amdgpu_device_get_fd(dev) : -1;
	return f->fd;
}

const char *amdgpu_get_marketing_name(amdgpu_device_handle dev)
{
	REAL(const char *, amdgpu_get_marketing_name, amdgpu_device_handle);
	if (!as_fake(dev))
		return real_amdgpu_get_marketing_name ? real_amdgpu_get_marketing_name(dev) : NULL;
	return "hipextsem fake device";
}

/* struct amdgpu_gpu_info from libdrm's amdgpu.h: only the fields read are
 * set; the rest stays zero. */
int amdgpu_query_gpu_info(amdgpu_device_handle dev, struct amdgpu_gpu_info *info)
{
	REAL(int, amdgpu_query_gpu_info, amdgpu_device_handle, struct amdgpu_gpu_info *);
	if (!as_fake(dev))
		return real_amdgpu_query_gpu_info ? real_amdgpu_query_gpu_info(dev, info) : -ENOSYS;
	memset(info, 0, sizeof(*info));
	info->asic_id = fd_tgt->device_id;
	info->family_id = fd_tgt->family_id;
	info->gpu_counter_freq = 1000000; /* kHz: the fake's clock is ns */
	info->num_shader_engines = fd_tgt->array_count;
	info->num_shader_arrays_per_engine = 1;
	info->cu_active_number = fd_tgt->array_count * fd_tgt->cu_per_simd_array;
	info->max_engine_clk = 1500000;
	return 0;
}

