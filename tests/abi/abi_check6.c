/* SPDX-License-Identifier: MIT */
/*
 * Checks the 6.x layouts of <hipextsem/hip_abi.h> and
 * <hipextsem/hip_devprop.h> against a real HIP 6.x/7.x header at compile
 * time: the external-semaphore handle descriptor, the signal and wait
 * parameters and hipDeviceProp_tR0600, field by field (offset and size),
 * and the timeline handle type.  Built by tests/realrt/run-realrt with the
 * headers of Debian's HIP 6.4 and 7.2 (libamdhip64-dev); compiling is the
 * test, running prints what was compared.
 */
#include <hip/hip_runtime_api.h>

#include <stdio.h>

#include "hipextsem/hip_abi.h"
#include "hipextsem/hip_devprop.h"

#include "abi_check.h"

#if HIP_VERSION_MAJOR < 6
#error "this check needs a HIP 6.x or later header"
#endif

static void check_semaphores(void)
{
	/* external semaphore handle descriptor (6.x: 96 bytes) */
	SAME_SIZE(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v6);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v6, type, type);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v6, handle, handle);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v6, handle.fd, handle.fd);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v6, handle.win32.handle, handle.win32.handle);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v6, handle.win32.name, handle.win32.name);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v6, handle.NvSciSyncObj, handle.nvSciSyncObj);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v6, flags, flags);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v6, reserved, reserved);
	/* signal parameters (6.x: 144 bytes, flags at 72) */
	SAME_SIZE(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v6);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v6, params, params);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v6, params.fence, params.fence);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v6, params.fence.value, params.fence.value);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v6, params.nvSciSync, params.nvSciSync);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v6, params.nvSciSync.fence, params.nvSciSync.fence);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v6, params.nvSciSync.reserved, params.nvSciSync.reserved);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v6, params.keyedMutex, params.keyedMutex);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v6, params.keyedMutex.key, params.keyedMutex.key);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v6, params.reserved, params.reserved);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v6, flags, flags);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v6, reserved, reserved);
	/* wait parameters (6.x: 144 bytes, flags at 72) */
	SAME_SIZE(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6, params, params);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6, params.fence, params.fence);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6, params.fence.value, params.fence.value);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6, params.nvSciSync, params.nvSciSync);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6, params.nvSciSync.fence, params.nvSciSync.fence);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6, params.nvSciSync.reserved, params.nvSciSync.reserved);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6, params.keyedMutex, params.keyedMutex);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6, params.keyedMutex.key, params.keyedMutex.key);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6, params.keyedMutex.timeoutMs, params.keyedMutex.timeoutMs);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6, params.reserved, params.reserved);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6, flags, flags);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v6, reserved, reserved);
	SAME_VALUE(hipExternalSemaphoreHandleTypeOpaqueFd, HX_SEM_HANDLE_OPAQUE_FD);
	SAME_VALUE(hipExternalSemaphoreHandleTypeTimelineSemaphoreFd, HX_SEM_HANDLE_TIMELINE_FD);
}

static void check_device_props(void)
{
	/* hipDeviceProp_tR0600 (1472 bytes), every field */
	SAME_SIZE(hipDeviceProp_tR0600, struct hx_device_prop_r0600);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, name, name);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, uuid, uuid);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, luid, luid);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, luidDeviceNodeMask, luidDeviceNodeMask);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, totalGlobalMem, totalGlobalMem);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, sharedMemPerBlock, sharedMemPerBlock);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, regsPerBlock, regsPerBlock);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, warpSize, warpSize);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, memPitch, memPitch);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxThreadsPerBlock, maxThreadsPerBlock);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxThreadsDim, maxThreadsDim);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxGridSize, maxGridSize);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, clockRate, clockRate);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, totalConstMem, totalConstMem);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, major, major);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, minor, minor);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, textureAlignment, textureAlignment);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, texturePitchAlignment, texturePitchAlignment);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, deviceOverlap, deviceOverlap);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, multiProcessorCount, multiProcessorCount);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, kernelExecTimeoutEnabled, kernelExecTimeoutEnabled);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, integrated, integrated);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, canMapHostMemory, canMapHostMemory);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, computeMode, computeMode);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTexture1D, maxTexture1D);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTexture1DMipmap, maxTexture1DMipmap);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTexture1DLinear, maxTexture1DLinear);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTexture2D, maxTexture2D);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTexture2DMipmap, maxTexture2DMipmap);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTexture2DLinear, maxTexture2DLinear);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTexture2DGather, maxTexture2DGather);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTexture3D, maxTexture3D);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTexture3DAlt, maxTexture3DAlt);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTextureCubemap, maxTextureCubemap);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTexture1DLayered, maxTexture1DLayered);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTexture2DLayered, maxTexture2DLayered);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxTextureCubemapLayered, maxTextureCubemapLayered);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxSurface1D, maxSurface1D);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxSurface2D, maxSurface2D);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxSurface3D, maxSurface3D);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxSurface1DLayered, maxSurface1DLayered);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxSurface2DLayered, maxSurface2DLayered);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxSurfaceCubemap, maxSurfaceCubemap);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxSurfaceCubemapLayered, maxSurfaceCubemapLayered);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, surfaceAlignment, surfaceAlignment);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, concurrentKernels, concurrentKernels);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, ECCEnabled, ECCEnabled);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, pciBusID, pciBusID);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, pciDeviceID, pciDeviceID);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, pciDomainID, pciDomainID);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, tccDriver, tccDriver);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, asyncEngineCount, asyncEngineCount);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, unifiedAddressing, unifiedAddressing);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, memoryClockRate, memoryClockRate);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, memoryBusWidth, memoryBusWidth);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, l2CacheSize, l2CacheSize);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, persistingL2CacheMaxSize, persistingL2CacheMaxSize);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxThreadsPerMultiProcessor, maxThreadsPerMultiProcessor);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, streamPrioritiesSupported, streamPrioritiesSupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, globalL1CacheSupported, globalL1CacheSupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, localL1CacheSupported, localL1CacheSupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, sharedMemPerMultiprocessor, sharedMemPerMultiprocessor);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, regsPerMultiprocessor, regsPerMultiprocessor);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, managedMemory, managedMemory);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, isMultiGpuBoard, isMultiGpuBoard);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, multiGpuBoardGroupID, multiGpuBoardGroupID);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, hostNativeAtomicSupported, hostNativeAtomicSupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, singleToDoublePrecisionPerfRatio, singleToDoublePrecisionPerfRatio);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, pageableMemoryAccess, pageableMemoryAccess);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, concurrentManagedAccess, concurrentManagedAccess);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, computePreemptionSupported, computePreemptionSupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, canUseHostPointerForRegisteredMem, canUseHostPointerForRegisteredMem);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, cooperativeLaunch, cooperativeLaunch);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, cooperativeMultiDeviceLaunch, cooperativeMultiDeviceLaunch);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, sharedMemPerBlockOptin, sharedMemPerBlockOptin);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, pageableMemoryAccessUsesHostPageTables, pageableMemoryAccessUsesHostPageTables);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, directManagedMemAccessFromHost, directManagedMemAccessFromHost);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxBlocksPerMultiProcessor, maxBlocksPerMultiProcessor);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, accessPolicyMaxWindowSize, accessPolicyMaxWindowSize);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, reservedSharedMemPerBlock, reservedSharedMemPerBlock);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, hostRegisterSupported, hostRegisterSupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, sparseHipArraySupported, sparseHipArraySupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, hostRegisterReadOnlySupported, hostRegisterReadOnlySupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, timelineSemaphoreInteropSupported, timelineSemaphoreInteropSupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, memoryPoolsSupported, memoryPoolsSupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, gpuDirectRDMASupported, gpuDirectRDMASupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, gpuDirectRDMAFlushWritesOptions, gpuDirectRDMAFlushWritesOptions);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, gpuDirectRDMAWritesOrdering, gpuDirectRDMAWritesOrdering);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, memoryPoolSupportedHandleTypes, memoryPoolSupportedHandleTypes);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, deferredMappingHipArraySupported, deferredMappingHipArraySupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, ipcEventSupported, ipcEventSupported);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, clusterLaunch, clusterLaunch);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, unifiedFunctionPointers, unifiedFunctionPointers);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, reserved, reserved);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, hipReserved, hipReserved);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, gcnArchName, gcnArchName);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, maxSharedMemoryPerMultiProcessor, maxSharedMemoryPerMultiProcessor);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, clockInstructionRate, clockInstructionRate);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, arch, arch);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, hdpMemFlushCntl, hdpMemFlushCntl);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, hdpRegFlushCntl, hdpRegFlushCntl);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, cooperativeMultiDeviceUnmatchedFunc, cooperativeMultiDeviceUnmatchedFunc);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, cooperativeMultiDeviceUnmatchedGridDim, cooperativeMultiDeviceUnmatchedGridDim);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, cooperativeMultiDeviceUnmatchedBlockDim, cooperativeMultiDeviceUnmatchedBlockDim);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, cooperativeMultiDeviceUnmatchedSharedMem, cooperativeMultiDeviceUnmatchedSharedMem);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, isLargeBar, isLargeBar);
	SAME_FIELD(hipDeviceProp_tR0600, struct hx_device_prop_r0600, asicRevision, asicRevision);
}

int main(void)
{
	check_semaphores();
	check_device_props();
	printf("ok: %d layout and value checks against HIP %d.%d (hipDeviceProp_tR0600 %zu bytes)\n",
	       nchecks, HIP_VERSION_MAJOR, HIP_VERSION_MINOR, sizeof(hipDeviceProp_tR0600));
	return 0;
}
