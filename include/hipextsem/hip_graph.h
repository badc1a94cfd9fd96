/* SPDX-License-Identifier: MIT */
/*
 * The graph and stream-capture subset of the HIP ABI that the shim and the
 * CPU reference runtime need, hx_-prefixed like <hipextsem/hip_abi.h>.
 *
 * Checked against ROCm clr (hipamd/include/hip/hip_runtime_api.h and
 * hipamd/src/hip_hcc.map.in): node types are the 6.x numbering (the 5.2
 * header numbers them from 1 and has no external-semaphore nodes; those
 * arrived in 5.3, node hip_5.3; hipGraphAddNode in hip_5.5).
 *
 *   hipExternalSemaphore{Signal,Wait}NodeParams: extSemArray@0,
 *     paramsArray@8, numExtSems@16, 24 bytes.  paramsArray has the loaded
 *     runtime's params layout (136-byte 5.x or 144-byte 6.x stride).
 *   hipGraphNodeParams: type@0, reserved0[3], union@16 (232 bytes),
 *     reserved2@248, 256 bytes.
 *   hipHostNodeParams: fn@0, userData@8.
 */
#ifndef HIPEXTSEM_HIP_GRAPH_H
#define HIPEXTSEM_HIP_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "hipextsem/hip_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ihipGraph *hipGraph_t;
typedef struct hipGraphNode *hipGraphNode_t;
typedef struct hipGraphExec *hipGraphExec_t;

enum hx_graph_node_type {
	HX_GRAPH_NODE_KERNEL = 0,
	HX_GRAPH_NODE_MEMCPY = 1,
	HX_GRAPH_NODE_MEMSET = 2,
	HX_GRAPH_NODE_HOST = 3,
	HX_GRAPH_NODE_GRAPH = 4,
	HX_GRAPH_NODE_EMPTY = 5,
	HX_GRAPH_NODE_WAIT_EVENT = 6,
	HX_GRAPH_NODE_EVENT_RECORD = 7,
	HX_GRAPH_NODE_EXT_SEM_SIGNAL = 8,
	HX_GRAPH_NODE_EXT_SEM_WAIT = 9,
};

enum hx_stream_capture_status {
	HX_CAPTURE_STATUS_NONE = 0,
	HX_CAPTURE_STATUS_ACTIVE = 1,
	HX_CAPTURE_STATUS_INVALIDATED = 2,
};

enum hx_stream_capture_mode {
	HX_CAPTURE_MODE_GLOBAL = 0,
	HX_CAPTURE_MODE_THREAD_LOCAL = 1,
	HX_CAPTURE_MODE_RELAXED = 2,
};

struct hx_host_node_params {
	hipHostFn_t fn;
	void *userData;
};

/* hipExternalSemaphoreSignalNodeParams / hipExternalSemaphoreWaitNodeParams */
struct hx_ext_sem_node_params {
	hipExternalSemaphore_t *extSemArray;
	const void *paramsArray;
	unsigned int numExtSems;
};

/* hipGraphNodeParams */
struct hx_graph_node_params {
	int type;
	int reserved0[3];
	union {
		long long reserved1[29];
		struct hx_host_node_params host;
		struct hx_ext_sem_node_params extSemSignal;
		struct hx_ext_sem_node_params extSemWait;
	} u;
	long long reserved2;
};

_Static_assert(sizeof(struct hx_ext_sem_node_params) == 24, "ext-sem node params are 24 bytes");
_Static_assert(offsetof(struct hx_graph_node_params, u) == 16, "hipGraphNodeParams union@16");
_Static_assert(sizeof(struct hx_graph_node_params) == 256, "hipGraphNodeParams is 256 bytes");

/* Function types, for the shim's runtime table and cpuhip's definitions. */
typedef hipError_t hx_graph_add_ext_sem_node_fn(hipGraphNode_t *node, hipGraph_t graph,
						const hipGraphNode_t *deps, size_t ndeps,
						const struct hx_ext_sem_node_params *params);
typedef hipError_t hx_graph_ext_sem_get_fn(hipGraphNode_t node,
					   struct hx_ext_sem_node_params *out);
typedef hipError_t hx_graph_ext_sem_set_fn(hipGraphNode_t node,
					   const struct hx_ext_sem_node_params *params);
typedef hipError_t hx_graph_exec_ext_sem_set_fn(hipGraphExec_t exec, hipGraphNode_t node,
						const struct hx_ext_sem_node_params *params);
typedef hipError_t hx_graph_add_node_fn(hipGraphNode_t *node, hipGraph_t graph,
					const hipGraphNode_t *deps, size_t ndeps,
					struct hx_graph_node_params *params);
typedef hipError_t hx_graph_add_host_node_fn(hipGraphNode_t *node, hipGraph_t graph,
					     const hipGraphNode_t *deps, size_t ndeps,
					     const struct hx_host_node_params *params);
typedef hipError_t hx_graph_host_node_set_fn(hipGraphNode_t node,
					     const struct hx_host_node_params *params);
typedef hipError_t hx_graph_exec_host_node_set_fn(hipGraphExec_t exec, hipGraphNode_t node,
						  const struct hx_host_node_params *params);
typedef hipError_t hx_graph_node_set_params_fn(hipGraphNode_t node,
					      struct hx_graph_node_params *params);
typedef hipError_t hx_graph_exec_node_set_params_fn(hipGraphExec_t exec, hipGraphNode_t node,
						   struct hx_graph_node_params *params);
typedef hipError_t hx_get_proc_address_fn(const char *symbol, void **pfn, int hipVersion,
					  uint64_t flags, int *symbolStatus);
typedef hipError_t hx_get_driver_entry_point_fn(const char *symbol, void **funcPtr,
						unsigned long long flags, int *driverStatus);
typedef hipError_t hx_get_device_props_r0600_fn(void *prop, int device);
/* Graph instantiate / launch / destroy and event nodes (graph wait nodes). */
typedef hipError_t hx_graph_instantiate_fn(hipGraphExec_t *exec, hipGraph_t graph,
					   hipGraphNode_t *errNode, char *log, size_t logSize);
typedef hipError_t hx_graph_instantiate_flags_fn(hipGraphExec_t *exec, hipGraph_t graph,
						 unsigned long long flags);
/* hipGraphInstantiateParams is opaque to the shim (forwarded as is). */
typedef hipError_t hx_graph_instantiate_params_fn(hipGraphExec_t *exec, hipGraph_t graph,
						  void *params);
typedef hipError_t hx_graph_launch_fn(hipGraphExec_t exec, hipStream_t stream);
typedef hipError_t hx_graph_exec_destroy_fn(hipGraphExec_t exec);
typedef hipError_t hx_graph_destroy_fn(hipGraph_t graph);
typedef hipError_t hx_graph_add_event_node_fn(hipGraphNode_t *node, hipGraph_t graph,
					      const hipGraphNode_t *deps, size_t ndeps,
					      hipEvent_t event);

/* hipGraphExecUpdateResult */
enum hx_graph_exec_update_result {
	HX_GRAPH_EXEC_UPDATE_SUCCESS = 0,
	HX_GRAPH_EXEC_UPDATE_ERROR = 1,
	HX_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED = 2,
	HX_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED = 3,
	HX_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED = 4,
	HX_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED = 5,
	HX_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED = 6,
};

/* hipStreamUpdateCaptureDependencies flags */
enum {
	HX_STREAM_ADD_CAPTURE_DEPENDENCIES = 0,
	HX_STREAM_SET_CAPTURE_DEPENDENCIES = 1,
};

/* Graph life cycle and capture introspection (all in hip_4.5). */
typedef hipError_t hx_graph_clone_fn(hipGraph_t *clone, hipGraph_t original);
typedef hipError_t hx_graph_destroy_node_fn(hipGraphNode_t node);
typedef hipError_t hx_graph_add_child_fn(hipGraphNode_t *node, hipGraph_t graph,
					 const hipGraphNode_t *deps, size_t ndeps, hipGraph_t child);
typedef hipError_t hx_graph_child_get_fn(hipGraphNode_t node, hipGraph_t *child);
typedef hipError_t hx_graph_exec_update_fn(hipGraphExec_t exec, hipGraph_t graph,
					   hipGraphNode_t *errNode, int *result);
typedef hipError_t hx_graph_get_nodes_fn(hipGraph_t graph, hipGraphNode_t *nodes, size_t *n);
typedef hipError_t hx_graph_node_get_type_fn(hipGraphNode_t node, int *type);
typedef hipError_t hx_graph_event_node_get_fn(hipGraphNode_t node, hipEvent_t *event);
typedef hipError_t hx_graph_event_node_set_fn(hipGraphNode_t node, hipEvent_t event);
typedef hipError_t hx_graph_host_node_get_fn(hipGraphNode_t node,
					     struct hx_host_node_params *params);
typedef hipError_t hx_stream_get_capture_info_v2_fn(hipStream_t stream, int *status,
						    unsigned long long *id, hipGraph_t *graph,
						    const hipGraphNode_t **deps, size_t *ndeps);
typedef hipError_t hx_stream_update_capture_deps_fn(hipStream_t stream, hipGraphNode_t *deps,
						    size_t ndeps, unsigned int flags);
typedef hipError_t hx_thread_exchange_capture_mode_fn(int *mode);
typedef hipError_t hx_stream_end_capture_fn(hipStream_t stream, hipGraph_t *graph);
typedef hipError_t hx_stream_begin_capture_fn(hipStream_t stream, int mode);
/* hipStreamBeginCaptureToGraph (hip_6.1); the edge data array is opaque. */
typedef hipError_t hx_stream_begin_capture_to_graph_fn(hipStream_t stream, hipGraph_t graph,
						       const hipGraphNode_t *deps,
						       const void *edgeData, size_t ndeps,
						       int mode);

/* The API itself (6.x signatures, hx_ types). */
hipError_t hipGraphCreate(hipGraph_t *pGraph, unsigned int flags);
hipError_t hipGraphDestroy(hipGraph_t graph);
hipError_t hipGraphAddHostNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
			       const hipGraphNode_t *pDependencies, size_t numDependencies,
			       const struct hx_host_node_params *pNodeParams);
hipError_t hipGraphAddEmptyNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
				const hipGraphNode_t *pDependencies, size_t numDependencies);
hipError_t hipGraphHostNodeGetParams(hipGraphNode_t node, struct hx_host_node_params *pNodeParams);
hipError_t hipGraphHostNodeSetParams(hipGraphNode_t node,
				     const struct hx_host_node_params *pNodeParams);
hipError_t hipGraphExecHostNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t node,
					 const struct hx_host_node_params *pNodeParams);
hipError_t hipGraphNodeGetType(hipGraphNode_t node, int *pType);
hipError_t hipGraphGetNodes(hipGraph_t graph, hipGraphNode_t *nodes, size_t *numNodes);
hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
			       hipGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize);
hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *pGraphExec, hipGraph_t graph,
					unsigned long long flags);
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t *pGraphExec, hipGraph_t graph,
					 void *instantiateParams);
hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream);
hipError_t hipGraphLaunch_spt(hipGraphExec_t graphExec, hipStream_t stream);
hipError_t hipGraphAddEventWaitNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
				    const hipGraphNode_t *pDependencies, size_t numDependencies,
				    hipEvent_t event);
hipError_t hipGraphAddEventRecordNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
				      const hipGraphNode_t *pDependencies, size_t numDependencies,
				      hipEvent_t event);
hipError_t hipGraphEventWaitNodeGetEvent(hipGraphNode_t node, hipEvent_t *event_out);
hipError_t hipGraphEventRecordNodeGetEvent(hipGraphNode_t node, hipEvent_t *event_out);
hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec);
hipError_t hipStreamBeginCapture(hipStream_t stream, int mode);
hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph);
hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t *pGraph);
hipError_t hipStreamBeginCapture_spt(hipStream_t stream, int mode);
hipError_t hipStreamBeginCaptureToGraph(hipStream_t stream, hipGraph_t graph,
					const hipGraphNode_t *dependencies, const void *dependencyData,
					size_t numDependencies, int mode);
hipError_t hipStreamIsCapturing(hipStream_t stream, int *pCaptureStatus);
hipError_t hipStreamGetCaptureInfo_v2(hipStream_t stream, int *captureStatus_out,
				      unsigned long long *id_out, hipGraph_t *graph_out,
				      const hipGraphNode_t **dependencies_out,
				      size_t *numDependencies_out);
hipError_t hipStreamUpdateCaptureDependencies(hipStream_t stream, hipGraphNode_t *dependencies,
					      size_t numDependencies, unsigned int flags);
hipError_t hipThreadExchangeStreamCaptureMode(int *mode);
hipError_t hipGraphClone(hipGraph_t *pGraphClone, hipGraph_t originalGraph);
hipError_t hipGraphDestroyNode(hipGraphNode_t node);
hipError_t hipGraphNodeFindInClone(hipGraphNode_t *pNode, hipGraphNode_t originalNode,
				   hipGraph_t clonedGraph);
hipError_t hipGraphAddChildGraphNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
				     const hipGraphNode_t *pDependencies, size_t numDependencies,
				     hipGraph_t childGraph);
hipError_t hipGraphChildGraphNodeGetGraph(hipGraphNode_t node, hipGraph_t *pGraph);
hipError_t hipGraphExecUpdate(hipGraphExec_t hGraphExec, hipGraph_t hGraph,
			      hipGraphNode_t *hErrorNode_out, int *updateResult_out);
hipError_t hipGraphEventWaitNodeSetEvent(hipGraphNode_t node, hipEvent_t event);
hipError_t hipGraphNodeGetDependencies(hipGraphNode_t node, hipGraphNode_t *pDependencies,
				       size_t *pNumDependencies);
hipError_t hipGraphUpload(hipGraphExec_t graphExec, hipStream_t stream);

hipError_t hipGraphAddExternalSemaphoresSignalNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
						   const hipGraphNode_t *pDependencies,
						   size_t numDependencies,
						   const struct hx_ext_sem_node_params *nodeParams);
hipError_t hipGraphAddExternalSemaphoresWaitNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
						 const hipGraphNode_t *pDependencies,
						 size_t numDependencies,
						 const struct hx_ext_sem_node_params *nodeParams);
hipError_t hipGraphExternalSemaphoresSignalNodeGetParams(hipGraphNode_t hNode,
							 struct hx_ext_sem_node_params *params_out);
hipError_t hipGraphExternalSemaphoresSignalNodeSetParams(
	hipGraphNode_t hNode, const struct hx_ext_sem_node_params *nodeParams);
hipError_t hipGraphExternalSemaphoresWaitNodeGetParams(hipGraphNode_t hNode,
						       struct hx_ext_sem_node_params *params_out);
hipError_t hipGraphExternalSemaphoresWaitNodeSetParams(
	hipGraphNode_t hNode, const struct hx_ext_sem_node_params *nodeParams);
hipError_t hipGraphExecExternalSemaphoresSignalNodeSetParams(
	hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
	const struct hx_ext_sem_node_params *nodeParams);
hipError_t hipGraphExecExternalSemaphoresWaitNodeSetParams(
	hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
	const struct hx_ext_sem_node_params *nodeParams);
hipError_t hipGraphAddNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
			   const hipGraphNode_t *pDependencies, size_t numDependencies,
			   struct hx_graph_node_params *nodeParams);
hipError_t hipGraphNodeSetParams(hipGraphNode_t node, struct hx_graph_node_params *nodeParams);
hipError_t hipGraphExecNodeSetParams(hipGraphExec_t graphExec, hipGraphNode_t node,
				     struct hx_graph_node_params *nodeParams);
hipError_t hipGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
				  int *driverStatus);
hipError_t hipGetDriverEntryPoint_spt(const char *symbol, void **funcPtr, unsigned long long flags,
				  int *driverStatus);

#ifdef __cplusplus
}
#endif

#endif
