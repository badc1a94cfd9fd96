/* SPDX-License-Identifier: MIT */
/*
 * Checks <hipextsem/hip_abi.h> and <hipextsem/hip_devprop.h> against
 * Debian's real HIP 5.2.3 header at compile time: every field the project
 * defines must have the real offset and size; error codes, handle types,
 * flags and attribute values must be equal.  Compiling is the test; running
 * prints what was compared.
 */
#include <hip/hip_runtime_api.h>

#include <stdio.h>

#include "hipextsem/hip_abi.h"
#include "hipextsem/hip_devprop.h"

#include "abi_check.h"

static void check_structs(void)
{
	/* external semaphore handle descriptor (5.x: 32 bytes) */
	SAME_SIZE(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v5);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v5, type, type);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v5, handle, handle);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v5, handle.fd, handle.fd);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v5, handle.win32.handle, handle.win32.handle);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v5, handle.win32.name, handle.win32.name);
	SAME_FIELD(hipExternalSemaphoreHandleDesc, struct hx_sem_desc_v5, flags, flags);
	/* hipExternalSemaphoreSignalParams (5.x: 136 bytes) */
	SAME_SIZE(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v5);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v5, params, params);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v5, params.fence, params.fence);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v5, params.fence.value, params.fence.value);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v5, params.keyedMutex, params.keyedMutex);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v5, params.keyedMutex.key, params.keyedMutex.key);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v5, params.reserved, params.reserved);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v5, flags, flags);
	SAME_FIELD(hipExternalSemaphoreSignalParams, struct hx_sem_signal_params_v5, reserved, reserved);
	/* hipExternalSemaphoreWaitParams (5.x: 136 bytes) */
	SAME_SIZE(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v5);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v5, params, params);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v5, params.fence, params.fence);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v5, params.fence.value, params.fence.value);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v5, params.keyedMutex, params.keyedMutex);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v5, params.keyedMutex.key, params.keyedMutex.key);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v5, params.keyedMutex.timeoutMs, params.keyedMutex.timeoutMs);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v5, params.reserved, params.reserved);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v5, flags, flags);
	SAME_FIELD(hipExternalSemaphoreWaitParams, struct hx_sem_wait_params_v5, reserved, reserved);
	/* hipDeviceProp_t (5.x: 792 bytes) */
	SAME_SIZE(hipDeviceProp_t, struct hx_device_prop_v5);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, name, name);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, totalGlobalMem, totalGlobalMem);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, sharedMemPerBlock, sharedMemPerBlock);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, regsPerBlock, regsPerBlock);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, warpSize, warpSize);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, maxThreadsPerBlock, maxThreadsPerBlock);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, maxThreadsDim, maxThreadsDim);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, maxGridSize, maxGridSize);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, clockRate, clockRate);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, memoryClockRate, memoryClockRate);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, memoryBusWidth, memoryBusWidth);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, totalConstMem, totalConstMem);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, major, major);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, minor, minor);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, multiProcessorCount, multiProcessorCount);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, l2CacheSize, l2CacheSize);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, maxThreadsPerMultiProcessor, maxThreadsPerMultiProcessor);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, computeMode, computeMode);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, clockInstructionRate, clockInstructionRate);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, arch, arch);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, concurrentKernels, concurrentKernels);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, pciDomainID, pciDomainID);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, pciBusID, pciBusID);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, pciDeviceID, pciDeviceID);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, maxSharedMemoryPerMultiProcessor, maxSharedMemoryPerMultiProcessor);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, isMultiGpuBoard, isMultiGpuBoard);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, canMapHostMemory, canMapHostMemory);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, gcnArch, gcnArch);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, gcnArchName, gcnArchName);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, integrated, integrated);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, cooperativeLaunch, cooperativeLaunch);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, cooperativeMultiDeviceLaunch, cooperativeMultiDeviceLaunch);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, maxTexture1DLinear, maxTexture1DLinear);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, maxTexture1D, maxTexture1D);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, maxTexture2D, maxTexture2D);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, maxTexture3D, maxTexture3D);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, hdpMemFlushCntl, hdpMemFlushCntl);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, hdpRegFlushCntl, hdpRegFlushCntl);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, memPitch, memPitch);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, textureAlignment, textureAlignment);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, texturePitchAlignment, texturePitchAlignment);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, kernelExecTimeoutEnabled, kernelExecTimeoutEnabled);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, ECCEnabled, ECCEnabled);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, tccDriver, tccDriver);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, cooperativeMultiDeviceUnmatchedFunc, cooperativeMultiDeviceUnmatchedFunc);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, cooperativeMultiDeviceUnmatchedGridDim, cooperativeMultiDeviceUnmatchedGridDim);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, cooperativeMultiDeviceUnmatchedBlockDim, cooperativeMultiDeviceUnmatchedBlockDim);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, cooperativeMultiDeviceUnmatchedSharedMem, cooperativeMultiDeviceUnmatchedSharedMem);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, isLargeBar, isLargeBar);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, asicRevision, asicRevision);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, managedMemory, managedMemory);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, directManagedMemAccessFromHost, directManagedMemAccessFromHost);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, concurrentManagedAccess, concurrentManagedAccess);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, pageableMemoryAccess, pageableMemoryAccess);
	SAME_FIELD(hipDeviceProp_t, struct hx_device_prop_v5, pageableMemoryAccessUsesHostPageTables, pageableMemoryAccessUsesHostPageTables);
}

static void check_values(void)
{
	/* error codes */
	SAME_VALUE(hipSuccess, HX_SUCCESS);
	SAME_VALUE(hipErrorInvalidValue, HX_ERROR_INVALID_VALUE);
	SAME_VALUE(hipErrorOutOfMemory, HX_ERROR_OUT_OF_MEMORY);
	SAME_VALUE(hipErrorNotInitialized, HX_ERROR_NOT_INITIALIZED);
	SAME_VALUE(hipErrorInvalidMemcpyDirection, HX_ERROR_INVALID_MEMCPY_DIRECTION);
	SAME_VALUE(hipErrorNoDevice, HX_ERROR_NO_DEVICE);
	SAME_VALUE(hipErrorInvalidDevice, HX_ERROR_INVALID_DEVICE);
	SAME_VALUE(hipErrorInvalidContext, HX_ERROR_INVALID_CONTEXT);
	SAME_VALUE(hipErrorOperatingSystem, HX_ERROR_OPERATING_SYSTEM);
	SAME_VALUE(hipErrorInvalidHandle, HX_ERROR_INVALID_HANDLE);
	SAME_VALUE(hipErrorInvalidResourceHandle, HX_ERROR_INVALID_HANDLE);
	SAME_VALUE(hipErrorIllegalState, HX_ERROR_ILLEGAL_STATE);
	SAME_VALUE(hipErrorNotFound, HX_ERROR_NOT_FOUND);
	SAME_VALUE(hipErrorNotReady, HX_ERROR_NOT_READY);
	SAME_VALUE(hipErrorContextIsDestroyed, HX_ERROR_CONTEXT_IS_DESTROYED);
	SAME_VALUE(hipErrorLaunchFailure, HX_ERROR_LAUNCH_FAILURE);
	SAME_VALUE(hipErrorNotSupported, HX_ERROR_NOT_SUPPORTED);
	SAME_VALUE(hipErrorStreamCaptureUnsupported, HX_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	SAME_VALUE(hipErrorStreamCaptureInvalidated, HX_ERROR_STREAM_CAPTURE_INVALIDATED);
	SAME_VALUE(hipErrorStreamCaptureImplicit, HX_ERROR_STREAM_CAPTURE_IMPLICIT);
	SAME_VALUE(hipErrorCapturedEvent, HX_ERROR_CAPTURED_EVENT);
	SAME_VALUE(hipErrorUnknown, HX_ERROR_UNKNOWN);
	/* handle types present in 5.x */
	SAME_VALUE(hipExternalSemaphoreHandleTypeOpaqueFd, HX_SEM_HANDLE_OPAQUE_FD);
	SAME_VALUE(hipExternalSemaphoreHandleTypeOpaqueWin32, HX_SEM_HANDLE_OPAQUE_WIN32);
	SAME_VALUE(hipExternalSemaphoreHandleTypeOpaqueWin32Kmt, HX_SEM_HANDLE_OPAQUE_WIN32_KMT);
	SAME_VALUE(hipExternalSemaphoreHandleTypeD3D12Fence, HX_SEM_HANDLE_D3D12_FENCE);
	/* flags */
	SAME_VALUE(hipStreamDefault, HX_STREAM_DEFAULT);
	SAME_VALUE(hipStreamNonBlocking, HX_STREAM_NON_BLOCKING);
	SAME_VALUE(hipEventDefault, HX_EVENT_DEFAULT);
	SAME_VALUE(hipEventBlockingSync, HX_EVENT_BLOCKING_SYNC);
	SAME_VALUE(hipEventDisableTiming, HX_EVENT_DISABLE_TIMING);
	SAME_VALUE(hipEventInterprocess, HX_EVENT_INTERPROCESS);
	SAME_VALUE(hipStreamWaitValueGte, HX_WAIT_VALUE_GTE);
	SAME_VALUE(hipStreamWaitValueEq, HX_WAIT_VALUE_EQ);
	SAME_VALUE(hipStreamWaitValueAnd, HX_WAIT_VALUE_AND);
	SAME_VALUE(hipStreamWaitValueNor, HX_WAIT_VALUE_NOR);
	SAME_VALUE(hipHostMallocDefault, HX_HOST_MALLOC_DEFAULT);
	SAME_VALUE(hipMallocSignalMemory, HX_MALLOC_SIGNAL_MEMORY);
	SAME_VALUE(hipHostMallocPortable, HX_HOST_MALLOC_PORTABLE);
	SAME_VALUE(hipHostMallocMapped, HX_HOST_MALLOC_MAPPED);
	SAME_VALUE(hipHostMallocWriteCombined, HX_HOST_MALLOC_WRITE_COMBINED);
	SAME_VALUE(hipHostMallocCoherent, HX_HOST_MALLOC_COHERENT);
	SAME_VALUE(hipHostMallocNonCoherent, HX_HOST_MALLOC_NON_COHERENT);
	/* device attributes */
	SAME_VALUE(hipDeviceAttributeCanUseStreamWaitValue, HX_DEVATTR_CAN_USE_STREAM_WAIT_VALUE);
	SAME_VALUE(hipDeviceAttributePciBusId, HX_DEVATTR_PCI_BUS_ID);
	SAME_VALUE(hipDeviceAttributePciDeviceId, HX_DEVATTR_PCI_DEVICE_ID);
	SAME_VALUE(hipDeviceAttributePciDomainID, HX_DEVATTR_PCI_DOMAIN_ID);
	/* special stream handles */
	_Static_assert(sizeof(hipStream_t) == sizeof(void *), "stream handle is a pointer");
	nchecks++;
#ifdef hipStreamPerThread
	SAME_VALUE((uintptr_t)hipStreamPerThread, (uintptr_t)HX_STREAM_PER_THREAD);
#endif
}

int main(void)
{
	check_structs();
	int structs = nchecks;
	check_values();
	printf("abi: %d structure checks (sem desc, signal/wait params, hipDeviceProp_t) and "
	       "%d value checks (errors, handle types, flags, attributes) match HIP %d.%d\n",
	       structs, nchecks - structs, HIP_VERSION_MAJOR, HIP_VERSION_MINOR);
	return 0;
}
