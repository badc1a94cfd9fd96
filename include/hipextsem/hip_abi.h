/* SPDX-License-Identifier: MIT */
/*
 * The subset of the HIP runtime ABI that hipextsem relies on, written down
 * by the project itself so that it builds without ROCm installed.
 *
 * Every name here carries the hx_/HX_ prefix so that this header can be
 * compiled next to a real <hip/hip_runtime_api.h>; tests/abi checks it
 * against Debian's HIP 5.2.3 header field by field.  <hipextsem/hip_api.h>
 * maps these onto the usual hip* spellings for code that never sees the real
 * header.
 *
 * Two layouts of the external-semaphore structures exist.  ROCm 6.0 grew
 * the descriptor from 32 to 96 bytes (a NvSciSync member in the handle union
 * and a reserved tail) and the signal/wait parameters from 136 to 144 bytes
 * (a NvSciSync member after fence, which moves `flags` from offset 64 to 72).
 * The symbol versions did not change, so which layout a caller uses can only
 * be told from the runtime that is loaded (soname or hipRuntimeGetVersion).
 */
#ifndef HIPEXTSEM_HIP_ABI_H
#define HIPEXTSEM_HIP_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* hipError_t values (stable across 5.x, 6.x and 7.x). */
enum hx_error {
	HX_SUCCESS = 0,
	HX_ERROR_INVALID_VALUE = 1,
	HX_ERROR_OUT_OF_MEMORY = 2,
	HX_ERROR_NOT_INITIALIZED = 3,
	HX_ERROR_INVALID_MEMCPY_DIRECTION = 21,
	HX_ERROR_NO_DEVICE = 100,
	HX_ERROR_INVALID_DEVICE = 101,
	HX_ERROR_INVALID_CONTEXT = 201,
	HX_ERROR_OPERATING_SYSTEM = 304,
	HX_ERROR_INVALID_HANDLE = 400, /* also hipErrorInvalidResourceHandle */
	HX_ERROR_ILLEGAL_STATE = 401,
	HX_ERROR_NOT_FOUND = 500,
	HX_ERROR_NOT_READY = 600,
	HX_ERROR_CONTEXT_IS_DESTROYED = 709,
	HX_ERROR_LAUNCH_FAILURE = 719,
	HX_ERROR_NOT_SUPPORTED = 801,
	HX_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
	HX_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
	HX_ERROR_STREAM_CAPTURE_ISOLATION = 905,
	HX_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
	HX_ERROR_CAPTURED_EVENT = 907,
	HX_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910,
	HX_ERROR_UNKNOWN = 999,
};

/* hipExternalSemaphoreHandleType.  1..4 exist in every version; 5..9 were
 * added by the 6.0 headers.  Only 1 and 9 mean something on Linux. */
enum hx_sem_handle_type {
	HX_SEM_HANDLE_OPAQUE_FD = 1,
	HX_SEM_HANDLE_OPAQUE_WIN32 = 2,
	HX_SEM_HANDLE_OPAQUE_WIN32_KMT = 3,
	HX_SEM_HANDLE_D3D12_FENCE = 4,
	HX_SEM_HANDLE_D3D11_FENCE = 5,
	HX_SEM_HANDLE_NVSCISYNC = 6,
	HX_SEM_HANDLE_KEYED_MUTEX = 7,
	HX_SEM_HANDLE_KEYED_MUTEX_KMT = 8,
	HX_SEM_HANDLE_TIMELINE_FD = 9,
	HX_SEM_HANDLE_TIMELINE_WIN32 = 10,
};

/* Stream, event and wait-value flags. */
#define HX_STREAM_DEFAULT 0x0u
#define HX_STREAM_NON_BLOCKING 0x1u
#define HX_EVENT_DEFAULT 0x0u
#define HX_EVENT_BLOCKING_SYNC 0x1u
#define HX_EVENT_DISABLE_TIMING 0x2u
#define HX_EVENT_INTERPROCESS 0x4u
#define HX_WAIT_VALUE_GTE 0x0u
#define HX_WAIT_VALUE_EQ 0x1u
#define HX_WAIT_VALUE_AND 0x2u
#define HX_WAIT_VALUE_NOR 0x3u
#define HX_HOST_MALLOC_DEFAULT 0x0u
#define HX_HOST_MALLOC_PORTABLE 0x1u
#define HX_HOST_MALLOC_MAPPED 0x2u
#define HX_HOST_MALLOC_WRITE_COMBINED 0x4u
#define HX_HOST_MALLOC_COHERENT 0x40000000u
#define HX_HOST_MALLOC_NON_COHERENT 0x80000000u
/* hipExtMallocWithFlags: an HSA signal-backed 8-byte word (clr hip_memory.cpp) */
#define HX_MALLOC_SIGNAL_MEMORY 0x2u

/* Special stream handles. */
#define HX_STREAM_LEGACY ((struct ihipStream_t *)1)
#define HX_STREAM_PER_THREAD ((struct ihipStream_t *)2)

/* hipDeviceAttribute_t values the project uses.  These moved between
 * releases (5.x and 6.x count the CUDA-compatible range differently), so
 * only the AMD-specific range, which has been stable, is listed. */
#define HX_DEVATTR_CAN_USE_STREAM_WAIT_VALUE 10013

/* ---- 5.x layout (HIP 4.3 .. 5.7) ---------------------------------- */

struct hx_sem_desc_v5 {
	int32_t type; /* enum hx_sem_handle_type */
	union {
		int fd;
		struct {
			void *handle;
			const void *name;
		} win32;
	} handle;
	uint32_t flags;
};

struct hx_sem_signal_params_v5 {
	struct {
		struct {
			unsigned long long value;
		} fence;
		struct {
			unsigned long long key;
		} keyedMutex;
		uint32_t reserved[12];
	} params;
	uint32_t flags;
	uint32_t reserved[16];
};

struct hx_sem_wait_params_v5 {
	struct {
		struct {
			unsigned long long value;
		} fence;
		struct {
			unsigned long long key;
			uint32_t timeoutMs;
		} keyedMutex;
		uint32_t reserved[10];
	} params;
	uint32_t flags;
	uint32_t reserved[16];
};

/* ---- 6.x/7.x layout ----------------------------------------------- */

struct hx_sem_desc_v6 {
	int32_t type;
	union {
		int fd;
		struct {
			void *handle;
			const void *name;
		} win32;
		const void *nvSciSyncObj;
	} handle;
	uint32_t flags;
	uint32_t reserved[16];
};

struct hx_sem_signal_params_v6 {
	struct {
		struct {
			unsigned long long value;
		} fence;
		union {
			void *fence;
			unsigned long long reserved;
		} nvSciSync;
		struct {
			unsigned long long key;
		} keyedMutex;
		uint32_t reserved[12];
	} params;
	uint32_t flags;
	uint32_t reserved[16];
};

struct hx_sem_wait_params_v6 {
	struct {
		struct {
			unsigned long long value;
		} fence;
		union {
			void *fence;
			unsigned long long reserved;
		} nvSciSync;
		struct {
			unsigned long long key;
			uint32_t timeoutMs;
		} keyedMutex;
		uint32_t reserved[10];
	} params;
	uint32_t flags;
	uint32_t reserved[16];
};

#define HX_STATIC_ASSERT(c, m) _Static_assert(c, m)
HX_STATIC_ASSERT(sizeof(struct hx_sem_desc_v5) == 32, "5.x descriptor is 32 bytes");
HX_STATIC_ASSERT(offsetof(struct hx_sem_desc_v5, handle) == 8, "handle at 8");
HX_STATIC_ASSERT(offsetof(struct hx_sem_desc_v5, flags) == 24, "flags at 24");
HX_STATIC_ASSERT(sizeof(struct hx_sem_desc_v6) == 96, "6.x descriptor is 96 bytes");
HX_STATIC_ASSERT(offsetof(struct hx_sem_desc_v6, handle) == 8, "handle at 8");
HX_STATIC_ASSERT(offsetof(struct hx_sem_desc_v6, flags) == 24, "flags at 24");
HX_STATIC_ASSERT(sizeof(struct hx_sem_signal_params_v5) == 136, "5.x signal params");
HX_STATIC_ASSERT(offsetof(struct hx_sem_signal_params_v5, flags) == 64, "5.x flags@64");
HX_STATIC_ASSERT(sizeof(struct hx_sem_wait_params_v5) == 136, "5.x wait params");
HX_STATIC_ASSERT(offsetof(struct hx_sem_wait_params_v5, flags) == 64, "5.x flags@64");
HX_STATIC_ASSERT(sizeof(struct hx_sem_signal_params_v6) == 144, "6.x signal params");
HX_STATIC_ASSERT(offsetof(struct hx_sem_signal_params_v6, flags) == 72, "6.x flags@72");
HX_STATIC_ASSERT(sizeof(struct hx_sem_wait_params_v6) == 144, "6.x wait params");
HX_STATIC_ASSERT(offsetof(struct hx_sem_wait_params_v6, flags) == 72, "6.x flags@72");

/* Which of the two layouts a runtime speaks. */
enum hx_abi {
	HX_ABI_UNKNOWN = 0,
	HX_ABI_5 = 5,
	HX_ABI_6 = 6, /* 6.x and 7.x */
};

#ifdef __cplusplus
}
#endif

#endif /* HIPEXTSEM_HIP_ABI_H */
