/* SPDX-License-Identifier: MIT */
/*
 * The exported entry points.  Nothing but argument forwarding lives here:
 * everything the shim does not implement is not exported at all, so those
 * calls bind straight to libamdhip64.  Version nodes: libextsem.map.
 *
 * Each export also gets a hidden alias (hx_self_*): the address the shim
 * hands out from hipGetProcAddress and dlsym must be its own function even
 * when the runtime came first in the lookup scope.
 */
#include <string.h>

#include "hipextsem/hip_api.h"
#include "hipextsem/hip_graph.h"
#include "hot.h"
#include "intercept.h"
#include "ops.h"

#define HX_EXPORT __attribute__((visibility("default")))
#define HX_SELF(f) extern __typeof__(f) hx_self_##f __attribute__((alias(#f), copy(f), visibility("hidden")))

/* ---- hip_4.3: the four calls ------------------------------------------- */

HX_EXPORT hipError_t hipImportExternalSemaphore(hipExternalSemaphore_t *extSem_out,
						const hipExternalSemaphoreHandleDesc *semHandleDesc)
{
	return hx_intercept_import(extSem_out, semHandleDesc);
}

HX_HOT_PATH HX_HOT_PAGE_START
HX_EXPORT hipError_t
hipSignalExternalSemaphoresAsync(const hipExternalSemaphore_t *extSemArray,
				 const hipExternalSemaphoreSignalParams *paramsArray,
				 unsigned int numExtSems, hipStream_t stream)
{
	return hx_intercept_signal(extSemArray, paramsArray, numExtSems, stream);
}

HX_HOT_PATH
HX_EXPORT hipError_t hipWaitExternalSemaphoresAsync(const hipExternalSemaphore_t *extSemArray,
						    const hipExternalSemaphoreWaitParams *paramsArray,
						    unsigned int numExtSems, hipStream_t stream)
{
	return hx_intercept_wait(extSemArray, paramsArray, numExtSems, stream);
}

HX_EXPORT hipError_t hipDestroyExternalSemaphore(hipExternalSemaphore_t extSem)
{
	return hx_op_destroy(extSem);
}

/* ---- hip_5.3 / hip_5.5: graph nodes ------------------------------------ */

typedef struct hx_ext_sem_node_params hx_esnp;

HX_EXPORT hipError_t hipGraphAddExternalSemaphoresSignalNode(hipGraphNode_t *pGraphNode,
							     hipGraph_t graph,
							     const hipGraphNode_t *pDependencies,
							     size_t numDependencies,
							     const hx_esnp *nodeParams)
{
	return hx_graph_add_signal_node(pGraphNode, graph, pDependencies, numDependencies,
					nodeParams);
}

HX_EXPORT hipError_t hipGraphAddExternalSemaphoresWaitNode(hipGraphNode_t *pGraphNode,
							   hipGraph_t graph,
							   const hipGraphNode_t *pDependencies,
							   size_t numDependencies,
							   const hx_esnp *nodeParams)
{
	return hx_graph_add_wait_node(pGraphNode, graph, pDependencies, numDependencies,
				      nodeParams);
}

HX_EXPORT hipError_t hipGraphExternalSemaphoresSignalNodeGetParams(hipGraphNode_t hNode,
								   hx_esnp *params_out)
{
	return hx_graph_signal_get(hNode, params_out);
}

HX_EXPORT hipError_t hipGraphExternalSemaphoresSignalNodeSetParams(hipGraphNode_t hNode,
								   const hx_esnp *nodeParams)
{
	return hx_graph_signal_set(hNode, nodeParams);
}

HX_EXPORT hipError_t hipGraphExternalSemaphoresWaitNodeGetParams(hipGraphNode_t hNode,
								 hx_esnp *params_out)
{
	return hx_graph_wait_get(hNode, params_out);
}

HX_EXPORT hipError_t hipGraphExternalSemaphoresWaitNodeSetParams(hipGraphNode_t hNode,
								 const hx_esnp *nodeParams)
{
	return hx_graph_wait_set(hNode, nodeParams);
}

HX_EXPORT hipError_t hipGraphExecExternalSemaphoresSignalNodeSetParams(hipGraphExec_t hGraphExec,
								       hipGraphNode_t hNode,
								       const hx_esnp *nodeParams)
{
	return hx_graph_exec_signal_set(hGraphExec, hNode, nodeParams);
}

HX_EXPORT hipError_t hipGraphExecExternalSemaphoresWaitNodeSetParams(hipGraphExec_t hGraphExec,
								     hipGraphNode_t hNode,
								     const hx_esnp *nodeParams)
{
	return hx_graph_exec_wait_set(hGraphExec, hNode, nodeParams);
}

HX_EXPORT hipError_t hipGraphAddNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
				     const hipGraphNode_t *pDependencies, size_t numDependencies,
				     struct hx_graph_node_params *nodeParams)
{
	return hx_graph_add_node(pGraphNode, graph, pDependencies, numDependencies, nodeParams);
}

/* ---- hip_4.3 / hip_4.5 / hip_5.3 / hip_6.1: graph wait nodes ---------- */

HX_EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
					 hipGraphNode_t *pErrorNode, char *pLogBuffer,
					 size_t bufferSize)
{
	return hx_graph_instantiate(pGraphExec, graph, pErrorNode, pLogBuffer, bufferSize);
}

HX_EXPORT hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *pGraphExec, hipGraph_t graph,
						  unsigned long long flags)
{
	return hx_graph_instantiate_with_flags(pGraphExec, graph, flags);
}

/* hipGraphInstantiateParams *: forwarded untouched. */
HX_EXPORT hipError_t hipGraphInstantiateWithParams(hipGraphExec_t *pGraphExec, hipGraph_t graph,
						   void *instantiateParams)
{
	return hx_graph_instantiate_with_params(pGraphExec, graph, instantiateParams);
}

HX_EXPORT hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream)
{
	return hx_graph_launch(graphExec, stream);
}

HX_EXPORT hipError_t hipGraphLaunch_spt(hipGraphExec_t graphExec, hipStream_t stream)
{
	return hx_graph_launch_spt(graphExec, stream);
}

HX_EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec)
{
	return hx_graph_exec_destroy(graphExec);
}

HX_EXPORT hipError_t hipGraphDestroy(hipGraph_t graph)
{
	return hx_graph_destroy(graph);
}

/* ---- hip_4.2: a destroyed stream is checked again before a signal ----- */

HX_EXPORT hipError_t hipStreamDestroy(hipStream_t stream)
{
	return hx_stream_destroy(stream);
}

/* ---- hip_4.3 ... hip_6.1: copies of graphs, begin and end of capture -- */

HX_EXPORT hipError_t hipGraphClone(hipGraph_t *pGraphClone, hipGraph_t originalGraph)
{
	return hx_graph_clone(pGraphClone, originalGraph);
}

HX_EXPORT hipError_t hipGraphDestroyNode(hipGraphNode_t node)
{
	return hx_graph_destroy_node(node);
}

HX_EXPORT hipError_t hipGraphAddChildGraphNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
					       const hipGraphNode_t *pDependencies,
					       size_t numDependencies, hipGraph_t childGraph)
{
	return hx_graph_add_child_node(pGraphNode, graph, pDependencies, numDependencies,
				       childGraph);
}

/* hipGraphExecUpdateResult * is an int-sized enum. */
HX_EXPORT hipError_t hipGraphExecUpdate(hipGraphExec_t hGraphExec, hipGraph_t hGraph,
					hipGraphNode_t *hErrorNode_out, int *updateResult_out)
{
	return hx_graph_exec_update(hGraphExec, hGraph, hErrorNode_out, updateResult_out);
}

HX_EXPORT hipError_t hipStreamBeginCapture(hipStream_t stream, int mode)
{
	return hx_stream_begin_capture(stream, mode, false);
}

HX_EXPORT hipError_t hipStreamBeginCapture_spt(hipStream_t stream, int mode)
{
	return hx_stream_begin_capture(stream, mode, true);
}

/* hipGraphEdgeData * is opaque here. */
HX_EXPORT hipError_t hipStreamBeginCaptureToGraph(hipStream_t stream, hipGraph_t graph,
						  const hipGraphNode_t *dependencies,
						  const void *dependencyData, size_t numDependencies,
						  int mode)
{
	return hx_stream_begin_capture_to_graph(stream, graph, dependencies, dependencyData,
						numDependencies, mode);
}

HX_EXPORT hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph)
{
	return hx_stream_end_capture(stream, pGraph, false);
}

HX_EXPORT hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t *pGraph)
{
	return hx_stream_end_capture(stream, pGraph, true);
}

/* ---- hip_6.2: the generic node setters --------------------------------- */

HX_EXPORT hipError_t hipGraphNodeSetParams(hipGraphNode_t node,
					   struct hx_graph_node_params *nodeParams)
{
	return hx_graph_node_set_params(node, nodeParams);
}

HX_EXPORT hipError_t hipGraphExecNodeSetParams(hipGraphExec_t graphExec, hipGraphNode_t node,
					       struct hx_graph_node_params *nodeParams)
{
	return hx_graph_exec_node_set_params(graphExec, node, nodeParams);
}

/* ---- hip_6.0, hip_6.1, hip_7.1 ----------------------------------------- */

HX_EXPORT hipError_t hipGetDevicePropertiesR0600(struct hx_device_prop_r0600 *prop, int deviceId)
{
	return hx_intercept_device_props_r0600(prop, deviceId);
}

HX_EXPORT hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion,
				       uint64_t flags, hipDriverProcAddressQueryResult *symbolStatus)
{
	return hx_intercept_get_proc_address(symbol, pfn, hipVersion, flags, symbolStatus);
}

/* The development tree's per-thread-stream lookup (after 7.2). */
HX_EXPORT hipError_t hipGetProcAddress_spt(const char *symbol, void **pfn, int hipVersion,
					   uint64_t flags,
					   hipDriverProcAddressQueryResult *symbolStatus)
{
	return hx_intercept_get_proc_address_spt(symbol, pfn, hipVersion, flags, symbolStatus);
}

HX_EXPORT hipError_t hipGetDriverEntryPoint(const char *symbol, void **funcPtr,
					    unsigned long long flags, int *driverStatus)
{
	return hx_intercept_get_driver_entry_point(symbol, funcPtr, flags, driverStatus, false);
}

HX_EXPORT hipError_t hipGetDriverEntryPoint_spt(const char *symbol, void **funcPtr,
						unsigned long long flags, int *driverStatus)
{
	return hx_intercept_get_driver_entry_point(symbol, funcPtr, flags, driverStatus, true);
}

/* Introspection for the project's own tests and tools; not a HIP API. */
HX_EXPORT void hipextsemGetStats(struct hx_stats *st)
{
	hx_op_stats(st);
}

HX_EXPORT int hipextsemGetWaitPath(int *attr, char *why, size_t len)
{
	return hx_op_wait_path(attr, why, len);
}

/* ---- the table behind hipGetProcAddress and dlsym ---------------------- */

HX_SELF(hipImportExternalSemaphore);
HX_SELF(hipSignalExternalSemaphoresAsync);
HX_SELF(hipWaitExternalSemaphoresAsync);
HX_SELF(hipDestroyExternalSemaphore);
HX_SELF(hipGraphAddExternalSemaphoresSignalNode);
HX_SELF(hipGraphAddExternalSemaphoresWaitNode);
HX_SELF(hipGraphExternalSemaphoresSignalNodeGetParams);
HX_SELF(hipGraphExternalSemaphoresSignalNodeSetParams);
HX_SELF(hipGraphExternalSemaphoresWaitNodeGetParams);
HX_SELF(hipGraphExternalSemaphoresWaitNodeSetParams);
HX_SELF(hipGraphExecExternalSemaphoresSignalNodeSetParams);
HX_SELF(hipGraphExecExternalSemaphoresWaitNodeSetParams);
HX_SELF(hipGraphAddNode);
HX_SELF(hipGraphInstantiate);
HX_SELF(hipGraphInstantiateWithFlags);
HX_SELF(hipGraphInstantiateWithParams);
HX_SELF(hipGraphLaunch);
HX_SELF(hipGraphLaunch_spt);
HX_SELF(hipGraphExecDestroy);
HX_SELF(hipGraphDestroy);
HX_SELF(hipStreamDestroy);
HX_SELF(hipGraphClone);
HX_SELF(hipGraphDestroyNode);
HX_SELF(hipGraphAddChildGraphNode);
HX_SELF(hipGraphExecUpdate);
HX_SELF(hipStreamBeginCapture);
HX_SELF(hipStreamBeginCapture_spt);
HX_SELF(hipStreamBeginCaptureToGraph);
HX_SELF(hipStreamEndCapture);
HX_SELF(hipStreamEndCapture_spt);
HX_SELF(hipGraphNodeSetParams);
HX_SELF(hipGraphExecNodeSetParams);
HX_SELF(hipGetDevicePropertiesR0600);
HX_SELF(hipGetProcAddress);
HX_SELF(hipGetProcAddress_spt);
HX_SELF(hipGetDriverEntryPoint);
HX_SELF(hipGetDriverEntryPoint_spt);

#define EXP(f, node) { #f, node, (void *)&hx_self_##f }
const struct hx_export hx_exports[] = {
	EXP(hipImportExternalSemaphore, "hip_4.3"),
	EXP(hipSignalExternalSemaphoresAsync, "hip_4.3"),
	EXP(hipWaitExternalSemaphoresAsync, "hip_4.3"),
	EXP(hipDestroyExternalSemaphore, "hip_4.3"),
	EXP(hipGraphAddExternalSemaphoresSignalNode, "hip_5.3"),
	EXP(hipGraphAddExternalSemaphoresWaitNode, "hip_5.3"),
	EXP(hipGraphExternalSemaphoresSignalNodeGetParams, "hip_5.3"),
	EXP(hipGraphExternalSemaphoresSignalNodeSetParams, "hip_5.3"),
	EXP(hipGraphExternalSemaphoresWaitNodeGetParams, "hip_5.3"),
	EXP(hipGraphExternalSemaphoresWaitNodeSetParams, "hip_5.3"),
	EXP(hipGraphExecExternalSemaphoresSignalNodeSetParams, "hip_5.3"),
	EXP(hipGraphExecExternalSemaphoresWaitNodeSetParams, "hip_5.3"),
	EXP(hipGraphAddNode, "hip_5.5"),
	EXP(hipGraphInstantiate, "hip_4.3"),
	EXP(hipGraphInstantiateWithFlags, "hip_4.5"),
	EXP(hipGraphInstantiateWithParams, "hip_6.1"),
	EXP(hipGraphLaunch, "hip_4.3"),
	EXP(hipGraphLaunch_spt, "hip_5.3"),
	EXP(hipGraphExecDestroy, "hip_4.3"),
	EXP(hipGraphDestroy, "hip_4.3"),
	EXP(hipStreamDestroy, "hip_4.2"),
	EXP(hipGraphClone, "hip_4.5"),
	EXP(hipGraphDestroyNode, "hip_4.5"),
	EXP(hipGraphAddChildGraphNode, "hip_4.5"),
	EXP(hipGraphExecUpdate, "hip_4.5"),
	EXP(hipStreamBeginCapture, "hip_4.3"),
	EXP(hipStreamBeginCapture_spt, "hip_5.3"),
	EXP(hipStreamBeginCaptureToGraph, "hip_6.1"),
	EXP(hipStreamEndCapture, "hip_4.3"),
	EXP(hipStreamEndCapture_spt, "hip_5.3"),
	EXP(hipGraphNodeSetParams, "hip_6.2"),
	EXP(hipGraphExecNodeSetParams, "hip_6.2"),
	EXP(hipGetDevicePropertiesR0600, "hip_6.0"),
	EXP(hipGetProcAddress, "hip_6.1"),
	EXP(hipGetProcAddress_spt, "hip_7.2"),
	EXP(hipGetDriverEntryPoint, "hip_7.1"),
	EXP(hipGetDriverEntryPoint_spt, "hip_7.1"),
	{ NULL, NULL, NULL },
};
