/* SPDX-License-Identifier: MIT */
/*
 * The real runtime: typed pointers to the libamdhip64 functions the shim
 * calls, and the ABI flavour of the loaded runtime.  This is the only place
 * that knows about 5.x versus 6.x layouts.
 */
#ifndef HIPEXTSEM_RUNTIME_H
#define HIPEXTSEM_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hipextsem/hip_api.h"
#include "hipextsem/hip_graph.h"

typedef hipError_t (*hx_stream_is_capturing_fn)(hipStream_t stream, int *status);
/* hipStreamGetDevice (5.6+; streams.c) */
typedef hipError_t (*hx_stream_get_device_fn)(hipStream_t stream, hipDevice_t *device);

struct hx_runtime {
	/* required */
	__typeof__(hipStreamWaitValue64) *StreamWaitValue64;
	__typeof__(hipStreamAddCallback) *StreamAddCallback;
	__typeof__(hipHostMalloc) *HostMalloc;
	__typeof__(hipGetDevice) *GetDevice;
	/* optional */
	__typeof__(hipLaunchHostFunc) *LaunchHostFunc;
	__typeof__(hipExtMallocWithFlags) *ExtMallocWithFlags;
	__typeof__(hipDeviceGetAttribute) *DeviceGetAttribute;
	__typeof__(hipDeviceGetPCIBusId) *DeviceGetPCIBusId;
	__typeof__(hipRuntimeGetVersion) *RuntimeGetVersion;
	hx_stream_is_capturing_fn StreamIsCapturing;
	/* the runtime's own semaphore calls, for what the shim passes through */
	__typeof__(hipImportExternalSemaphore) *ImportExternalSemaphore;
	__typeof__(hipSignalExternalSemaphoresAsync) *SignalExternalSemaphoresAsync;
	__typeof__(hipWaitExternalSemaphoresAsync) *WaitExternalSemaphoresAsync;
	__typeof__(hipDestroyExternalSemaphore) *DestroyExternalSemaphore;
	/* optional: the other paths to the semaphore calls (procaddr.c, graph_*.c) */
	__typeof__(hipGetProcAddress) *GetProcAddress;
	hx_get_driver_entry_point_fn *GetDriverEntryPoint;
	hx_get_driver_entry_point_fn *GetDriverEntryPoint_spt;
	hx_get_device_props_r0600_fn *GetDevicePropertiesR0600;
	hx_graph_add_ext_sem_node_fn *GraphAddExternalSemaphoresSignalNode;
	hx_graph_add_ext_sem_node_fn *GraphAddExternalSemaphoresWaitNode;
	hx_graph_ext_sem_get_fn *GraphExternalSemaphoresSignalNodeGetParams;
	hx_graph_ext_sem_set_fn *GraphExternalSemaphoresSignalNodeSetParams;
	hx_graph_ext_sem_get_fn *GraphExternalSemaphoresWaitNodeGetParams;
	hx_graph_ext_sem_set_fn *GraphExternalSemaphoresWaitNodeSetParams;
	hx_graph_exec_ext_sem_set_fn *GraphExecExternalSemaphoresSignalNodeSetParams;
	hx_graph_exec_ext_sem_set_fn *GraphExecExternalSemaphoresWaitNodeSetParams;
	hx_graph_add_node_fn *GraphAddNode;
	hx_graph_node_set_params_fn *GraphNodeSetParams;
	hx_graph_exec_node_set_params_fn *GraphExecNodeSetParams;
	hx_graph_add_host_node_fn *GraphAddHostNode;
	hx_graph_host_node_set_fn *GraphHostNodeSetParams;
	hx_graph_exec_host_node_set_fn *GraphExecHostNodeSetParams;
	/* optional: graph wait nodes (graph_wait.c) */
	hx_graph_add_event_node_fn *GraphAddEventWaitNode;
	hx_graph_instantiate_fn *GraphInstantiate;
	hx_graph_instantiate_flags_fn *GraphInstantiateWithFlags;
	hx_graph_instantiate_params_fn *GraphInstantiateWithParams;
	hx_graph_launch_fn *GraphLaunch;
	hx_graph_launch_fn *GraphLaunch_spt;
	hx_graph_exec_destroy_fn *GraphExecDestroy;
	hx_graph_destroy_fn *GraphDestroy;
	/* optional: clones, child graphs, exec update, captured waits (graph.c,
	 * graph_wait.c, graph_exec.c) */
	hx_graph_clone_fn *GraphClone;
	hx_graph_destroy_node_fn *GraphDestroyNode;
	hx_graph_add_child_fn *GraphAddChildGraphNode;
	hx_graph_child_get_fn *GraphChildGraphNodeGetGraph;
	hx_graph_exec_update_fn *GraphExecUpdate;
	hx_graph_get_nodes_fn *GraphGetNodes;
	hx_graph_node_get_type_fn *GraphNodeGetType;
	hx_graph_event_node_get_fn *GraphEventWaitNodeGetEvent;
	hx_graph_event_node_set_fn *GraphEventWaitNodeSetEvent;
	hx_graph_host_node_get_fn *GraphHostNodeGetParams;
	hx_stream_get_capture_info_v2_fn *StreamGetCaptureInfo_v2;
	hx_stream_update_capture_deps_fn *StreamUpdateCaptureDependencies;
	hx_stream_end_capture_fn *StreamEndCapture;
	hx_stream_end_capture_fn *StreamEndCapture_spt;
	hx_stream_begin_capture_fn *StreamBeginCapture;
	hx_stream_begin_capture_fn *StreamBeginCapture_spt;
	hx_stream_begin_capture_to_graph_fn *StreamBeginCaptureToGraph;
	hx_thread_exchange_capture_mode_fn *ThreadExchangeStreamCaptureMode;
	__typeof__(hipEventCreateWithFlags) *EventCreateWithFlags;
	__typeof__(hipEventRecord) *EventRecord;
	__typeof__(hipEventDestroy) *EventDestroy;
	__typeof__(hipStreamCreateWithFlags) *StreamCreateWithFlags;
	__typeof__(hipStreamQuery) *StreamQuery;
	/* optional: the stream checks and the 5.2 per-thread-stream wait
	 * (streams.c) */
	hx_stream_get_device_fn StreamGetDevice;
	__typeof__(hipStreamGetPriority) *StreamGetPriority;
	/* optional: resolves the main thread's per-thread stream before the
	 * exit release is registered (streams.c) */
	__typeof__(hipStreamGetFlags) *StreamGetFlags;
	__typeof__(hipStreamWaitEvent) *StreamWaitEvent;
	__typeof__(hipStreamDestroy) *StreamDestroy;
	/* optional: the development tree's per-thread lookup (procaddr.c) */
	__typeof__(hipGetProcAddress) *GetProcAddress_spt;
	__typeof__(hipSetDevice) *SetDevice;
	__typeof__(hipEventQuery) *EventQuery;
	/* optional: the poll signal mode (signal_poll.c) */
	__typeof__(hipStreamWriteValue64) *StreamWriteValue64;

	enum hx_abi abi;
	/* exports an entry point newer than 6.2 (a node from hip_6.4 on, or
	 * the development tree's hipGetProcAddress_spt): streams.c */
	bool newer_than_6_2;
	int version;            /* hipRuntimeGetVersion, 0 if unknown */
	char path[256];         /* file the runtime was loaded from */
	bool ok;                /* every required symbol was found */
};

extern struct hx_runtime hx_rt;

/* Resolves the real runtime once (pthread_once).  Never calls a function
 * the shim exports.  Returns false, after logging which symbol is missing,
 * if the runtime cannot be used. */
bool hx_runtime_init(void);

/*
 * Once per thread, before the shim's first lock or capture guard on that
 * thread: the runtime makes the thread's own state now (clr's
 * `thread_local TlsAggregator hip::tls`, hip_internal.hpp, built at the
 * thread's first API call, whose destructor registration takes glibc's
 * loader lock), with no lock of the shim's held.  Made later, inside the
 * guard or under hx_gw_lock, it could wait for the loader lock held by a
 * library constructor run by dlopen that forks, whose fork handler waits
 * for that guard or lock: a deadlock.  One thread-local load after the
 * thread's first call.
 */
extern __thread bool hx_rt_thread_ready __attribute__((tls_model("initial-exec")));
void hx_runtime_thread_prepare_slow(void);
static inline void hx_runtime_thread_prepare(void)
{
	if (__builtin_expect(!hx_rt_thread_ready, 0))
		hx_runtime_thread_prepare_slow();
}

/* Second stage, on first use: does the runtime have a usable device?  If
 * not (no GPU, no driver), the shim hands every call to the runtime's own
 * implementation so the application sees the runtime's own answers. */
bool hx_runtime_usable(void);
/* Whether the shim has called into the runtime (its device probe), so
 * that the runtime has initialised: a lookup that would otherwise be what
 * initialises it (dlsym.c) can tell. */
bool hx_runtime_started(void);
/* When the runtime is not usable: the answer it gave the shim's probe if
 * that probe was the call that initialised it and later calls get another
 * one (hipSuccess otherwise, and after the first take).  The application
 * call that triggered the probe returns it instead of a second answer, so
 * that the shim never changes which call sees initialisation. */
hipError_t hx_runtime_take_first_answer(void);

/* The stream's capture status (hipStreamCaptureStatus: 0 none, 1 active,
 * 2 invalidated); 0 for the null stream, or when the runtime cannot say. */
int hx_runtime_capture_status(hipStream_t stream);
/* The runtime's memory and query calls obey stream capture: clr's
 * hipHostMalloc, hipMalloc, hipFree (CHECK_STREAM_CAPTURE_SUPPORTED) and
 * hipStreamQuery on a stream not capturing (Stream::StreamCaptureOngoing)
 * invalidate, in the calling thread's mode (Global or ThreadLocal), the
 * captures in progress and refuse the call.  The shim's own calls of that
 * kind (slot memory, stream checks) are not the application's work: they
 * run in Relaxed mode, so that a semaphore call never breaks a capture the
 * application has going on another stream.  Returns the mode to restore,
 * or -1 (nothing to restore). */
int hx_runtime_capture_relaxed(void);
void hx_runtime_capture_restore(int mode);
/* hipStreamQuery in Relaxed mode (see above); hipSuccess when the runtime
 * has none. */
hipError_t hx_runtime_stream_query(hipStream_t stream);

/* A refusal that comes from stream capture (hipErrorStreamCaptureUnsupported
 * 900 to hipErrorStreamCaptureWrongThread 908): never a sign that the
 * runtime lacks the primitive refused. */
static inline bool hx_is_capture_error(hipError_t err)
{
	return (int)err >= 900 && (int)err <= 908;
}

/* Layout of the semaphore structures for the loaded runtime. */
size_t hx_abi_signal_params_stride(enum hx_abi abi);
size_t hx_abi_wait_params_stride(enum hx_abi abi);
/*
 * Signal and wait params have one layout per ABI (hip_abi.h): the fence
 * value at offset 0, the flags at 64 (5.x) or 72 (6.x), elements 136 or
 * 144 bytes apart.  A view of the caller's array reads element i without
 * asking which ABI each time: signal and wait read every element on the
 * caller's thread.
 */
struct hx_params {
	const unsigned char *base;
	size_t stride, flags_at;
};
_Static_assert(offsetof(struct hx_sem_signal_params_v5, params.fence.value) == 0 &&
		       offsetof(struct hx_sem_wait_params_v5, params.fence.value) == 0 &&
		       offsetof(struct hx_sem_signal_params_v6, params.fence.value) == 0 &&
		       offsetof(struct hx_sem_wait_params_v6, params.fence.value) == 0,
	       "the fence value comes first");
_Static_assert(sizeof(struct hx_sem_signal_params_v5) == sizeof(struct hx_sem_wait_params_v5) &&
		       offsetof(struct hx_sem_signal_params_v5, flags) ==
			       offsetof(struct hx_sem_wait_params_v5, flags),
	       "5.x signal and wait params share a layout");
_Static_assert(sizeof(struct hx_sem_signal_params_v6) == sizeof(struct hx_sem_wait_params_v6) &&
		       offsetof(struct hx_sem_signal_params_v6, flags) ==
			       offsetof(struct hx_sem_wait_params_v6, flags),
	       "6.x signal and wait params share a layout");

static inline struct hx_params hx_abi_params(const void *params)
{
	if (hx_rt.abi == HX_ABI_5)
		return (struct hx_params){ params, sizeof(struct hx_sem_signal_params_v5),
					   offsetof(struct hx_sem_signal_params_v5, flags) };
	return (struct hx_params){ params, sizeof(struct hx_sem_signal_params_v6),
				   offsetof(struct hx_sem_signal_params_v6, flags) };
}

static inline unsigned long long hx_param_value(struct hx_params p, unsigned i)
{
	unsigned long long v;

	memcpy(&v, p.base + (size_t)i * p.stride, sizeof(v));
	return v;
}

static inline unsigned hx_param_flags(struct hx_params p, unsigned i)
{
	uint32_t f;

	memcpy(&f, p.base + (size_t)i * p.stride + p.flags_at, sizeof(f));
	return f;
}

int hx_abi_desc_type(const void *desc);
int hx_abi_desc_fd(const void *desc);

const char *hx_abi_name(enum hx_abi abi);

#endif
