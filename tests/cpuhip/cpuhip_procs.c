/* SPDX-License-Identifier: MIT */
/* Name -> function table behind hipGetProcAddress (6.x flavour): this
 * library's own exported entry points. */
#include <string.h>

#include "cpuhip_graph_internal.h"

#if CPUHIP_ABI == 6
#define PROC(f) { #f, (void *)&f }

static const struct {
	const char *name;
	void *fn;
} procs[] = {
	PROC(hipDestroyExternalSemaphore),
	PROC(hipDeviceGetAttribute),
	PROC(hipDeviceGetPCIBusId),
	PROC(hipDeviceGetStreamPriorityRange),
	PROC(hipDeviceSynchronize),
	PROC(hipDriverGetVersion),
	PROC(hipEventCreate),
	PROC(hipEventCreateWithFlags),
	PROC(hipEventDestroy),
	PROC(hipEventElapsedTime),
	PROC(hipEventQuery),
	PROC(hipEventRecord),
	PROC(hipEventSynchronize),
	PROC(hipFree),
	PROC(hipGetDevice),
	PROC(hipGetDeviceCount),
	PROC(hipGetDeviceProperties),
	PROC(hipGetDevicePropertiesR0600),
	PROC(hipGetErrorName),
	PROC(hipGetErrorString),
	PROC(hipGetLastError),
	PROC(hipGetProcAddress),
#ifdef CPUHIP_DEV_TREE
	PROC(hipGetProcAddress_spt),
#endif
	PROC(hipHostFree),
	PROC(hipHostMalloc),
	PROC(hipExtMallocWithFlags),
	PROC(hipImportExternalSemaphore),
	PROC(hipInit),
	PROC(hipLaunchHostFunc),
	PROC(hipMalloc),
	PROC(hipMemcpy),
	PROC(hipMemcpyAsync),
	PROC(hipMemset),
	PROC(hipMemsetAsync),
	PROC(hipPeekAtLastError),
	PROC(hipRuntimeGetVersion),
	PROC(hipSetDevice),
	PROC(hipSignalExternalSemaphoresAsync),
	PROC(hipStreamAddCallback),
	PROC(hipStreamCreate),
	PROC(hipStreamCreateWithFlags),
	PROC(hipStreamCreateWithPriority),
	PROC(hipStreamDestroy),
	PROC(hipStreamGetDevice),
	PROC(hipStreamGetFlags),
	PROC(hipStreamGetPriority),
	PROC(hipStreamQuery),
	PROC(hipStreamSynchronize),
	PROC(hipStreamWaitEvent),
	PROC(hipStreamWaitValue32),
	PROC(hipStreamWaitValue64),
	PROC(hipStreamWriteValue32),
	PROC(hipStreamWriteValue64),
	PROC(hipWaitExternalSemaphoresAsync),
	PROC(hipGraphCreate),
	PROC(hipGraphDestroy),
	PROC(hipGraphExecDestroy),
	PROC(hipGraphInstantiate),
	PROC(hipGraphLaunch),
	PROC(hipStreamBeginCapture),
	PROC(hipStreamEndCapture),
	PROC(hipStreamIsCapturing),
	PROC(hipGraphAddEmptyNode),
	PROC(hipGraphGetNodes),
	PROC(hipGraphAddHostNode),
	PROC(hipGraphExecHostNodeSetParams),
	PROC(hipGraphHostNodeGetParams),
	PROC(hipGraphHostNodeSetParams),
	PROC(hipGraphNodeGetType),
	PROC(hipGraphAddExternalSemaphoresSignalNode),
	PROC(hipGraphAddExternalSemaphoresWaitNode),
	PROC(hipGraphExecExternalSemaphoresSignalNodeSetParams),
	PROC(hipGraphExecExternalSemaphoresWaitNodeSetParams),
	PROC(hipGraphExternalSemaphoresSignalNodeGetParams),
	PROC(hipGraphExternalSemaphoresSignalNodeSetParams),
	PROC(hipGraphExternalSemaphoresWaitNodeGetParams),
	PROC(hipGraphExternalSemaphoresWaitNodeSetParams),
	PROC(hipGraphAddNode),
	PROC(hipGraphAddEventRecordNode),
	PROC(hipGraphAddEventWaitNode),
	PROC(hipGraphEventRecordNodeGetEvent),
	PROC(hipGraphEventWaitNodeGetEvent),
	PROC(hipGraphInstantiateWithFlags),
	PROC(hipGraphNodeGetDependencies),
	PROC(hipGraphClone),
	PROC(hipGraphDestroyNode),
	PROC(hipGraphNodeFindInClone),
	PROC(hipGraphAddChildGraphNode),
	PROC(hipGraphChildGraphNodeGetGraph),
	PROC(hipGraphEventWaitNodeSetEvent),
	PROC(hipGraphExecEventWaitNodeSetEvent),
	PROC(hipGraphExecUpdate),
	PROC(hipGraphInstantiateWithParams),
	PROC(hipGraphUpload),
	PROC(hipStreamGetCaptureInfo_v2),
	PROC(hipStreamUpdateCaptureDependencies),
	PROC(hipThreadExchangeStreamCaptureMode),
};

void *cpuhip_lookup_proc(const char *name)
{
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		if (strcmp(procs[i].name, name) == 0)
			return procs[i].fn;
	return NULL;
}
#else
void *cpuhip_lookup_proc(const char *name)
{
	(void)name;
	return NULL;
}
#endif
