/* SPDX-License-Identifier: MIT */
/*
 * The graph calls that concern both kinds of external-semaphore node: the
 * generic hipGraphAddNode / hipGraphNodeSetParams / hipGraphExecNodeSetParams,
 * dispatched to graph_signal.c or graph_wait.c, and hipGraphDestroy, after
 * which neither answers for the graph's nodes.  A shim handle never reaches
 * the runtime's graph API.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "capture_guard.h"
#include "graph_common.h"
#include "graph_wait.h"
#include "intercept.h"
#include "log.h"
#include "ops.h"
#include "registry.h"
#include "runtime.h"
#include "noise.h"
#include "streams.h"

/* The graph's semaphore nodes no longer answer, nor those of the graphs
 * embedded in it at any depth: a node added to an embedded graph
 * (hipGraphChildGraphNodeGetGraph), or a copy adopted by a call on one,
 * is that graph's, not the top-level one's.  The graphs below are listed
 * before the runtime frees them and forgotten once it has. */
hipError_t hx_graph_destroy(hipGraph_t graph)
{
	hipGraph_t *nested = NULL;
	size_t nnested = 0;
	hipError_t err;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphDestroy, "hipGraphDestroy");
	if (graph && (hx_graph_wait_any() || hx_graph_signal_any()))
		nested = hx_graph_nested(graph, &nnested);
	err = hx_rt.GraphDestroy(graph);
	if (err || !graph) {
		free(nested);
		return err;
	}
	hx_graph_signal_forget_graph(graph);
	hx_graph_wait_forget_graph(graph);
	for (size_t i = 0; i < nnested; i++) {
		hx_graph_signal_forget_graph(nested[i]);
		hx_graph_wait_forget_graph(nested[i]);
	}
	free(nested);
	return err;
}

/* A node removed from its graph no longer answers as a semaphore node (the
 * runtime may reuse its address for a node of its own), nor do the nodes
 * of the graph embedded in a child-graph node, at any depth: the graphs
 * below are listed before the node goes (they go with it) and forgotten
 * once the runtime destroyed it. */
hipError_t hx_graph_destroy_node(hipGraphNode_t node)
{
	hipGraph_t embedded = NULL, *nested = NULL;
	size_t nnested = 0;
	hipError_t err;
	int type = -1;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphDestroyNode, "hipGraphDestroyNode");
	if (node && hx_rt.GraphChildGraphNodeGetGraph &&
	    (hx_graph_wait_any() || hx_graph_signal_any()) &&
	    hx_graph_node_type(node, &type) && type == HX_GRAPH_NODE_GRAPH &&
	    hx_rt.GraphChildGraphNodeGetGraph(node, &embedded) != hipSuccess)
		embedded = NULL;
	if (embedded)
		nested = hx_graph_nested(embedded, &nnested);
	err = hx_rt.GraphDestroyNode(node);
	if (err || !node) {
		free(nested);
		return err;
	}
	hx_graph_signal_forget_node(node);
	hx_graph_wait_forget_node(node);
	if (embedded) {
		hx_graph_signal_forget_graph(embedded);
		hx_graph_wait_forget_graph(embedded);
	}
	for (size_t i = 0; i < nnested; i++) {
		hx_graph_signal_forget_graph(nested[i]);
		hx_graph_wait_forget_graph(nested[i]);
	}
	free(nested);
	return err;
}

hipError_t hx_graph_add_node(hipGraphNode_t *node, hipGraph_t graph, const hipGraphNode_t *deps,
			     size_t ndeps, struct hx_graph_node_params *p)
{
	if (!hx_reg_init())
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
	if (!hx_reg_init())
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
	if (!hx_reg_init())
		return hipErrorNotInitialized;
	if (p && p->type == HX_GRAPH_NODE_EXT_SEM_SIGNAL &&
	    (hx_graph_signal_known(node) || (hx_graph_usable() && hx_graph_any_shim_handle(&p->u.extSemSignal))))
		return hx_graph_exec_signal_set(exec, node, &p->u.extSemSignal);
	if (p && p->type == HX_GRAPH_NODE_EXT_SEM_WAIT &&
	    (hx_graph_wait_known(node) || (hx_graph_usable() && hx_graph_any_shim_handle(&p->u.extSemWait))))
		return hx_graph_exec_wait_set(exec, node, &p->u.extSemWait);
	FORWARD_OR_FAIL(GraphExecNodeSetParams, "hipGraphExecNodeSetParams", exec, node, p);
}

/* ---- captures ----------------------------------------------------------- */

hipError_t hx_stream_begin_capture(hipStream_t stream, int mode, bool spt)
{
	hx_stream_begin_capture_fn *real;
	hipError_t err;
	bool guarded;

	/* The runtime's entry points are known once the shim is set up: read
	 * before, the process's first call (a capture before any import)
	 * found none and answered 801. */
	if (!hx_reg_init())
		return hipErrorNotInitialized;
	real = spt ? hx_rt.StreamBeginCapture_spt : hx_rt.StreamBeginCapture;
	if (!real) {
		hx_err("%s: the HIP runtime has no such call",
		       spt ? "hipStreamBeginCapture_spt" : "hipStreamBeginCapture");
		return hipErrorNotSupported;
	}
	/* Before the guard (streams.h). */
	hx_stream_pts_prepare(spt && !stream ? hipStreamPerThread : stream);
	/* Under the capture guard: no signal, wait or launch is between its
	 * capture decision and its enqueue meanwhile (runtime.h).  Counted
	 * before the capture can start. */
	guarded = hx_capture_guard_lock();
	hx_capture_count_begin();
	hx_noise();
	err = real(stream, mode);
	err = hx_capture_begin_done(err, stream, spt,
				    spt ? "hipStreamBeginCapture_spt" : "hipStreamBeginCapture");
	if (guarded)
		hx_capture_guard_unlock();
	return err;
}

hipError_t hx_stream_begin_capture_to_graph(hipStream_t stream, hipGraph_t graph,
					    const hipGraphNode_t *deps, const void *edges,
					    size_t ndeps, int mode)
{
	hipError_t err;
	bool guarded;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(StreamBeginCaptureToGraph, "hipStreamBeginCaptureToGraph");
	hx_stream_pts_prepare(stream);
	guarded = hx_capture_guard_lock();
	hx_capture_count_begin();
	err = hx_rt.StreamBeginCaptureToGraph(stream, graph, deps, edges, ndeps, mode);
	err = hx_capture_begin_done(err, stream, false, "hipStreamBeginCaptureToGraph");
	if (guarded)
		hx_capture_guard_unlock();
	return err;
}

/* ---- copies made by the runtime, and the end of a capture -------------- */

hipError_t hx_graph_clone(hipGraph_t *clone, hipGraph_t original)
{
	hipError_t err;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphClone, "hipGraphClone");
	err = hx_rt.GraphClone(clone, original);
	if (err || !clone)
		return err;
	/* A copy of a wait node not made the clone's own would go on waiting
	 * for the original's event, which the original's destroy frees: the
	 * clone is refused rather than handed out so (nothing of it stays). */
	err = hx_graph_adopt(*clone);
	if (err) {
		hx_err("hipGraphClone: the copies of the semaphore nodes of graph %p could not be "
		       "made the clone's own (error %d): clone refused", (void *)original,
		       (int)err);
		(void)hx_graph_destroy(*clone);
		*clone = NULL;
	}
	return err;
}

/* clr's child-graph node holds a clone of `child`: its semaphore nodes are
 * adopted as nodes of `graph`. */
hipError_t hx_graph_add_child_node(hipGraphNode_t *node, hipGraph_t graph,
				   const hipGraphNode_t *deps, size_t ndeps, hipGraph_t child)
{
	hipError_t err;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphAddChildGraphNode, "hipGraphAddChildGraphNode");
	err = hx_rt.GraphAddChildGraphNode(node, graph, deps, ndeps, child);
	if (err || !node)
		return err;
	/* As hipGraphClone: the node's copies must be `graph`'s own before
	 * the child (which the application may destroy at once) goes. */
	err = hx_graph_adopt(graph);
	if (err) {
		hx_err("hipGraphAddChildGraphNode: the copies of the semaphore nodes of graph %p "
		       "could not be made graph %p's own (error %d): node refused", (void *)child,
		       (void *)graph, (int)err);
		(void)hx_graph_destroy_node(*node);
		*node = NULL;
	}
	return err;
}

/* A capture that ends gets its captured signals adopted as signal nodes.
 * One that ends invalidated or unjoined hands out no graph; up to 6.2.2
 * clr leaves that graph allocated (and with hipStreamBeginCaptureToGraph
 * it is the application's, with nodes added before the capture, so its
 * records must stay), while the development tree deletes it (rocm-systems
 * projects/clr hipamd/src/hip_graph.cpp hipStreamEndCapture_common ->
 * Stream::ReleaseCaptureGraph), the application's too.  So the runtime is
 * asked which nodes it still knows, and the records of freed ones go
 * before their addresses can name a node of another graph. */
hipError_t hx_stream_end_capture(hipStream_t stream, hipGraph_t *graph, bool spt)
{
	hx_stream_end_capture_fn *real;
	hipError_t err;
	bool guarded;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	real = spt ? hx_rt.StreamEndCapture_spt : hx_rt.StreamEndCapture;
	if (!real) {
		hx_err("%s: the HIP runtime has no such call",
		       spt ? "hipStreamEndCapture_spt" : "hipStreamEndCapture");
		return hipErrorNotSupported;
	}
	hx_stream_pts_prepare(spt && !stream ? hipStreamPerThread : stream);
	guarded = hx_capture_guard_lock();
	hx_noise();
	err = real(stream, graph);
	/* Over only if the stream says so now: a refused call (no pGraph,
	 * another thread, a joined stream) leaves it going, and so may an
	 * end that answers invalidated, again and again. */
	hx_capture_end_check(stream, spt);
	if (guarded)
		hx_capture_guard_unlock();
	if (!err && graph)
		hx_graph_adopt(*graph);
	if (err == hipErrorStreamCaptureInvalidated || err == HX_ERR_CAPTURE_UNJOINED) {
		hx_graph_wait_forget_dead();
		hx_graph_signal_forget_dead();
	}
	return err;
}
