/* SPDX-License-Identifier: MIT */
/*
 * hip* spellings of the ABI subset in <hipextsem/hip_abi.h>, plus the
 * prototypes of the runtime functions the project implements or calls.
 *
 * Never include this together with a real <hip/hip_runtime_api.h>: it
 * declares the same names.  Code that must see both (the ABI test) includes
 * only <hipextsem/hip_abi.h>.
 *
 * Structure-typed parameters of the semaphore calls are declared with
 * incomplete types: their layout depends on the runtime's ABI and is read
 * through hx_sem_*_v5 / hx_sem_*_v6.
 */
#ifndef HIPEXTSEM_HIP_API_H
#define HIPEXTSEM_HIP_API_H

#include "hipextsem/hip_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hx_error hipError_t;
typedef int hipDevice_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef void *hipExternalSemaphore_t;
typedef struct hipExternalSemaphoreHandleDesc_st hipExternalSemaphoreHandleDesc;
typedef struct hipExternalSemaphoreSignalParams_st hipExternalSemaphoreSignalParams;
typedef struct hipExternalSemaphoreWaitParams_st hipExternalSemaphoreWaitParams;
typedef void (*hipStreamCallback_t)(hipStream_t stream, hipError_t status, void *userData);
typedef void (*hipHostFn_t)(void *userData);

#define hipSuccess HX_SUCCESS
#define hipErrorInvalidValue HX_ERROR_INVALID_VALUE
#define hipErrorOutOfMemory HX_ERROR_OUT_OF_MEMORY
#define hipErrorNotInitialized HX_ERROR_NOT_INITIALIZED
#define hipErrorInvalidMemcpyDirection HX_ERROR_INVALID_MEMCPY_DIRECTION
#define hipErrorNoDevice HX_ERROR_NO_DEVICE
#define hipErrorInvalidDevice HX_ERROR_INVALID_DEVICE
#define hipErrorInvalidContext HX_ERROR_INVALID_CONTEXT
#define hipErrorOperatingSystem HX_ERROR_OPERATING_SYSTEM
#define hipErrorInvalidHandle HX_ERROR_INVALID_HANDLE
#define hipErrorInvalidResourceHandle HX_ERROR_INVALID_HANDLE
#define hipErrorIllegalState HX_ERROR_ILLEGAL_STATE
#define hipErrorNotFound HX_ERROR_NOT_FOUND
#define hipErrorNotReady HX_ERROR_NOT_READY
#define hipErrorContextIsDestroyed HX_ERROR_CONTEXT_IS_DESTROYED
#define hipErrorLaunchFailure HX_ERROR_LAUNCH_FAILURE
#define hipErrorNotSupported HX_ERROR_NOT_SUPPORTED
#define hipErrorStreamCaptureUnsupported HX_ERROR_STREAM_CAPTURE_UNSUPPORTED
#define hipErrorStreamCaptureInvalidated HX_ERROR_STREAM_CAPTURE_INVALIDATED
#define hipErrorStreamCaptureImplicit HX_ERROR_STREAM_CAPTURE_IMPLICIT
#define hipErrorCapturedEvent HX_ERROR_CAPTURED_EVENT
#define hipErrorStreamCaptureIsolation HX_ERROR_STREAM_CAPTURE_ISOLATION
#define hipErrorGraphExecUpdateFailure HX_ERROR_GRAPH_EXEC_UPDATE_FAILURE
#define hipErrorUnknown HX_ERROR_UNKNOWN

#define hipStreamDefault HX_STREAM_DEFAULT
#define hipStreamNonBlocking HX_STREAM_NON_BLOCKING
#define hipStreamLegacy HX_STREAM_LEGACY
#define hipStreamPerThread HX_STREAM_PER_THREAD
#define hipEventDefault HX_EVENT_DEFAULT
#define hipEventBlockingSync HX_EVENT_BLOCKING_SYNC
#define hipEventDisableTiming HX_EVENT_DISABLE_TIMING
#define hipEventInterprocess HX_EVENT_INTERPROCESS
#define hipStreamWaitValueGte HX_WAIT_VALUE_GTE
#define hipStreamWaitValueEq HX_WAIT_VALUE_EQ
#define hipStreamWaitValueAnd HX_WAIT_VALUE_AND
#define hipStreamWaitValueNor HX_WAIT_VALUE_NOR
#define hipHostMallocDefault HX_HOST_MALLOC_DEFAULT
#define hipHostMallocPortable HX_HOST_MALLOC_PORTABLE
#define hipHostMallocMapped HX_HOST_MALLOC_MAPPED
#define hipHostMallocCoherent HX_HOST_MALLOC_COHERENT
#define hipHostMallocNonCoherent HX_HOST_MALLOC_NON_COHERENT
#define hipMallocSignalMemory HX_MALLOC_SIGNAL_MEMORY
#define hipDeviceAttributeCanUseStreamWaitValue HX_DEVATTR_CAN_USE_STREAM_WAIT_VALUE

typedef enum hipMemcpyKind {
	hipMemcpyHostToHost = 0,
	hipMemcpyHostToDevice = 1,
	hipMemcpyDeviceToHost = 2,
	hipMemcpyDeviceToDevice = 3,
	hipMemcpyDefault = 4,
} hipMemcpyKind;

/* Runtime, device and errors. */
hipError_t hipInit(unsigned int flags);
hipError_t hipRuntimeGetVersion(int *runtimeVersion);
hipError_t hipDriverGetVersion(int *driverVersion);
hipError_t hipGetDeviceCount(int *count);
hipError_t hipGetDevice(int *deviceId);
hipError_t hipSetDevice(int deviceId);
hipError_t hipDeviceGetAttribute(int *pi, int attr, int deviceId);
hipError_t hipDeviceGetPCIBusId(char *pciBusId, int len, int device);
hipError_t hipDeviceSynchronize(void);
hipError_t hipGetLastError(void);
hipError_t hipPeekAtLastError(void);
const char *hipGetErrorName(hipError_t hip_error);
const char *hipGetErrorString(hipError_t hipError);

/* Streams. */
hipError_t hipStreamCreate(hipStream_t *stream);
hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags);
hipError_t hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags, int priority);
hipError_t hipStreamDestroy(hipStream_t stream);
hipError_t hipStreamSynchronize(hipStream_t stream);
hipError_t hipStreamQuery(hipStream_t stream);
hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int *flags);
hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags);
hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback, void *userData,
				unsigned int flags);
hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void *userData);
hipError_t hipStreamWaitValue32(hipStream_t stream, void *ptr, uint32_t value, unsigned int flags,
				uint32_t mask);
hipError_t hipStreamWaitValue64(hipStream_t stream, void *ptr, uint64_t value, unsigned int flags,
				uint64_t mask);
hipError_t hipStreamWriteValue32(hipStream_t stream, void *ptr, uint32_t value, unsigned int flags);
hipError_t hipStreamWriteValue64(hipStream_t stream, void *ptr, uint64_t value, unsigned int flags);

/* Events. */
hipError_t hipEventCreate(hipEvent_t *event);
hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags);
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream);
hipError_t hipEventSynchronize(hipEvent_t event);
hipError_t hipEventQuery(hipEvent_t event);
hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop);
hipError_t hipEventDestroy(hipEvent_t event);

/* Memory. */
hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags);
hipError_t hipExtMallocWithFlags(void **ptr, size_t sizeBytes, unsigned int flags);
hipError_t hipHostFree(void *ptr);
hipError_t hipMalloc(void **ptr, size_t size);
hipError_t hipFree(void *ptr);
hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind);
hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
			  hipStream_t stream);
hipError_t hipMemset(void *dst, int value, size_t sizeBytes);
hipError_t hipMemsetAsync(void *dst, int value, size_t sizeBytes, hipStream_t stream);

/* External semaphores (node hip_4.3). */
hipError_t hipImportExternalSemaphore(hipExternalSemaphore_t *extSem_out,
				      const hipExternalSemaphoreHandleDesc *semHandleDesc);
hipError_t hipSignalExternalSemaphoresAsync(const hipExternalSemaphore_t *extSemArray,
					    const hipExternalSemaphoreSignalParams *paramsArray,
					    unsigned int numExtSems, hipStream_t stream);
hipError_t hipWaitExternalSemaphoresAsync(const hipExternalSemaphore_t *extSemArray,
					  const hipExternalSemaphoreWaitParams *paramsArray,
					  unsigned int numExtSems, hipStream_t stream);
hipError_t hipDestroyExternalSemaphore(hipExternalSemaphore_t extSem);

/* 6.1+: flags and symbol status as in the 6.x headers. */
typedef enum hipDriverProcAddressQueryResult {
	HIP_GET_PROC_ADDRESS_SUCCESS = 0,
	HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
	HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
} hipDriverProcAddressQueryResult;
#define HIP_GET_PROC_ADDRESS_DEFAULT 0x0
#define HIP_GET_PROC_ADDRESS_LEGACY_STREAM 0x1
#define HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 0x2
hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
			     hipDriverProcAddressQueryResult *symbolStatus);

/* ---- additions by tests/cpuhip (append below; do not change the above) ---- */

/* Device properties: the unsuffixed symbol fills the 5.x layout (R0000 in
 * 6.x runtimes); the R0600 symbol exists in 6.x runtimes only. */
struct hx_device_prop_v5;
struct hx_device_prop_r0600;
hipError_t hipGetDeviceProperties(struct hx_device_prop_v5 *prop, int deviceId);
hipError_t hipGetDevicePropertiesR0600(struct hx_device_prop_r0600 *prop, int deviceId);
hipError_t hipStreamGetPriority(hipStream_t stream, int *priority);
hipError_t hipDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
/* hipGetProcAddress_spt: the development tree after 7.2 (not in Debian's
 * 7.2.4); hipStreamGetDevice: 5.6 on. */
hipError_t hipGetProcAddress_spt(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
				 hipDriverProcAddressQueryResult *symbolStatus);
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device);

#ifdef __cplusplus
}
#endif

#endif /* HIPEXTSEM_HIP_API_H */
