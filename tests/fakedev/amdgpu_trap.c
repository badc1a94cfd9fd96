/* libdrm_amdgpu calls the fake does not answer: they fail loudly when
 * they meet the fake device (declared here without libdrm's prototypes;
 * only the first argument, the device handle, is looked at). */
#include "fakedev.h"

#include <dlfcn.h>

void *as_fake(void *dev);

#define AMDGPU_TRAP(name)                                                      \
	int name(void *dev, ...)                                               \
	{                                                                      \
		if (as_fake(dev))                                              \
			fd_die(#name " on the fake device is not emulated");   \
		fd_die(#name " with a real device: not forwarded by the fake"); \
	}
AMDGPU_TRAP(amdgpu_query_info)
AMDGPU_TRAP(amdgpu_query_hw_ip_info)
AMDGPU_TRAP(amdgpu_bo_import)
AMDGPU_TRAP(amdgpu_bo_va_op)
AMDGPU_TRAP(amdgpu_bo_va_op_raw)
AMDGPU_TRAP(amdgpu_bo_alloc)
AMDGPU_TRAP(amdgpu_query_sensor_info)

