/* SPDX-License-Identifier: MIT */
/*
 * The graph calls that concern both kinds of external-semaphore node: the
 * generic hipGraphAddNode / hipGraphNodeSetParams / hipGraphExecNodeSetParams,
 * dispatched to graph_signal.c or graph_wait.c, and hipGraphDestroy, after
 * which neither answers for the graph's nodes.  A shim handle never reaches
 * the runtime's graph API.
 */
#include "graph_common.h"
#include "intercept.h"
#include "log.h"
#include "ops.h"
#include "runtime.h"

hipError_t hx_graph_destroy(hipGraph_t graph)
{
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphDestroy, "hipGraphDestroy");
	err = hx_rt.GraphDestroy(graph);
	if (err || !graph)
		return err;
	hx_graph_signal_forget_graph(graph);
	hx_graph_wait_forget_graph(graph);
	return err;
}

hipError_t hx_graph_add_node(hipGraphNode_t *node, hipGraph_t graph, const hipGraphNode_t *deps,
			     size_t ndeps, struct hx_graph_node_params *p)
{
	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (p && hx_graph_usable()) {
		if (p->type == HX_GRAPH_NODE_EXT_SEM_SIGNAL && hx_graph_any_shim_handle(&p->u.extSemSignal))
			return hx_graph_add_signal_node(node, graph, deps, ndeps,
							&p->u.extSemSignal);
		if (p->type == HX_GRAPH_NODE_EXT_SEM_WAIT && hx_graph_any_shim_handle(&p->u.extSemWait))
			return hx_graph_add_wait_node(node, graph, deps, ndeps, &p->u.extSemWait);
	}
	FORWARD_OR_FAIL(GraphAddNode, "hipGraphAddNode", node, graph, deps, ndeps, p);
}

/* The generic setters (HIP 6.2): a signal node the shim built takes the
 * shim's path; external-semaphore params holding shim handles never reach
 * the runtime. */
hipError_t hx_graph_node_set_params(hipGraphNode_t node, struct hx_graph_node_params *p)
{
	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (p && p->type == HX_GRAPH_NODE_EXT_SEM_SIGNAL &&
	    (hx_graph_signal_known(node) || (hx_graph_usable() && hx_graph_any_shim_handle(&p->u.extSemSignal))))
		return hx_graph_signal_set(node, &p->u.extSemSignal);
	if (p && p->type == HX_GRAPH_NODE_EXT_SEM_WAIT &&
	    (hx_graph_wait_known(node) || (hx_graph_usable() && hx_graph_any_shim_handle(&p->u.extSemWait))))
		return hx_graph_wait_set(node, &p->u.extSemWait);
	FORWARD_OR_FAIL(GraphNodeSetParams, "hipGraphNodeSetParams", node, p);
}

hipError_t hx_graph_exec_node_set_params(hipGraphExec_t exec, hipGraphNode_t node,
					 struct hx_graph_node_params *p)
{
	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (p && p->type == HX_GRAPH_NODE_EXT_SEM_SIGNAL &&
	    (hx_graph_signal_known(node) || (hx_graph_usable() && hx_graph_any_shim_handle(&p->u.extSemSignal))))
		return hx_graph_exec_signal_set(exec, node, &p->u.extSemSignal);
	if (p && p->type == HX_GRAPH_NODE_EXT_SEM_WAIT &&
	    (hx_graph_wait_known(node) || (hx_graph_usable() && hx_graph_any_shim_handle(&p->u.extSemWait))))
		return hx_graph_exec_wait_set(exec, node, &p->u.extSemWait);
	FORWARD_OR_FAIL(GraphExecNodeSetParams, "hipGraphExecNodeSetParams", exec, node, p);
}
