/* SPDX-License-Identifier: MIT */
/*
 * The paths that reach the semaphore calls without calling the exported
 * functions directly: hipGetProcAddress / hipGetDriverEntryPoint, dlsym on
 * a libamdhip64 handle, graph nodes and stream capture, and the device
 * property that apps gate on.  Called by entry.c; the logic lives in
 * procaddr.c (procs, properties), graph.c, graph_signal.c, graph_wait.c,
 * graph_exec.c and graph_walk.c (graphs, capture) and dlsym.c (dlsym/dlvsym).
 */
#ifndef HIPEXTSEM_INTERCEPT_H
#define HIPEXTSEM_INTERCEPT_H

#include <stdbool.h>
#include <stdint.h>

#include "hipextsem/hip_api.h"
#include "hipextsem/hip_graph.h"

/* Every exported HIP name with its version node (entry.c), NULL-terminated. */
struct hx_export {
	const char *name;
	const char *node;
	void *fn;
};
extern const struct hx_export hx_exports[];

/* The shim's own function for an exported HIP name, or NULL.  `version`
 * (may be NULL) must then match the node the shim exports it under. */
void *hx_intercept_lookup(const char *name, const char *version);
/* The shim's function replacing `runtime_fn` (a pointer handed out by the
 * runtime), or NULL if the shim does not implement it. */
void *hx_intercept_replacement(const void *runtime_fn);

hipError_t hx_intercept_get_proc_address(const char *symbol, void **pfn, int hipVersion,
					 uint64_t flags, hipDriverProcAddressQueryResult *status);
/* hipGetProcAddress_spt (the development tree after 7.2): the same swap. */
hipError_t hx_intercept_get_proc_address_spt(const char *symbol, void **pfn, int hipVersion,
					     uint64_t flags,
					     hipDriverProcAddressQueryResult *status);
hipError_t hx_intercept_get_driver_entry_point(const char *symbol, void **pfn,
					       unsigned long long flags, int *status, bool spt);
hipError_t hx_intercept_device_props_r0600(void *prop, int device);

/* dispatch.c: the entry of the semaphore calls.  A signal or wait goes
 * into the capture of its stream (graph_signal.c, graph_wait.c) or to
 * hx_op_signal / hx_op_wait; the import sets up the release at exit and
 * goes to hx_op_import. */
hipError_t hx_intercept_import(hipExternalSemaphore_t *out, const void *desc);
hipError_t hx_intercept_signal(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			       hipStream_t stream);
hipError_t hx_intercept_wait(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			     hipStream_t stream);

hipError_t hx_graph_add_signal_node(hipGraphNode_t *node, hipGraph_t graph,
				    const hipGraphNode_t *deps, size_t ndeps,
				    const struct hx_ext_sem_node_params *p);
hipError_t hx_graph_add_wait_node(hipGraphNode_t *node, hipGraph_t graph,
				  const hipGraphNode_t *deps, size_t ndeps,
				  const struct hx_ext_sem_node_params *p);
hipError_t hx_graph_signal_get(hipGraphNode_t node, struct hx_ext_sem_node_params *out);
hipError_t hx_graph_signal_set(hipGraphNode_t node, const struct hx_ext_sem_node_params *p);
hipError_t hx_graph_wait_get(hipGraphNode_t node, struct hx_ext_sem_node_params *out);
hipError_t hx_graph_wait_set(hipGraphNode_t node, const struct hx_ext_sem_node_params *p);
hipError_t hx_graph_exec_signal_set(hipGraphExec_t exec, hipGraphNode_t node,
				    const struct hx_ext_sem_node_params *p);
hipError_t hx_graph_exec_wait_set(hipGraphExec_t exec, hipGraphNode_t node,
				  const struct hx_ext_sem_node_params *p);
hipError_t hx_graph_node_set_params(hipGraphNode_t node, struct hx_graph_node_params *p);
hipError_t hx_graph_exec_node_set_params(hipGraphExec_t exec, hipGraphNode_t node,
					 struct hx_graph_node_params *p);
/* Graph wait nodes: instantiation, launch and destruction (graph_exec.c). */
hipError_t hx_graph_instantiate(hipGraphExec_t *exec, hipGraph_t graph, hipGraphNode_t *errNode,
				char *log, size_t logSize);
hipError_t hx_graph_instantiate_with_flags(hipGraphExec_t *exec, hipGraph_t graph,
					   unsigned long long flags);
hipError_t hx_graph_instantiate_with_params(hipGraphExec_t *exec, hipGraph_t graph,
					    void *params);
hipError_t hx_graph_launch(hipGraphExec_t exec, hipStream_t stream);
hipError_t hx_graph_launch_spt(hipGraphExec_t exec, hipStream_t stream);
hipError_t hx_graph_exec_destroy(hipGraphExec_t exec);
hipError_t hx_graph_destroy(hipGraph_t graph);
/* Copies made by the runtime and the end of a capture (graph.c), exec
 * update (graph_exec.c). */
hipError_t hx_graph_clone(hipGraph_t *clone, hipGraph_t original);
hipError_t hx_graph_destroy_node(hipGraphNode_t node);
hipError_t hx_graph_add_child_node(hipGraphNode_t *node, hipGraph_t graph,
				   const hipGraphNode_t *deps, size_t ndeps, hipGraph_t child);
hipError_t hx_stream_end_capture(hipStream_t stream, hipGraph_t *graph, bool spt);
/* hipStreamDestroy: forwarded, after the streams a signal checked are
 * forgotten (streams.c). */
hipError_t hx_stream_destroy(hipStream_t stream);
hipError_t hx_stream_begin_capture(hipStream_t stream, int mode, bool spt);
hipError_t hx_stream_begin_capture_to_graph(hipStream_t stream, hipGraph_t graph,
					    const hipGraphNode_t *deps, const void *edges,
					    size_t ndeps, int mode);
hipError_t hx_graph_exec_update(hipGraphExec_t exec, hipGraph_t graph, hipGraphNode_t *errNode,
				int *result);
hipError_t hx_graph_add_node(hipGraphNode_t *node, hipGraph_t graph, const hipGraphNode_t *deps,
			     size_t ndeps, struct hx_graph_node_params *p);

#endif
