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

#include "graph_common.h"
#include "graph_wait.h"
#include "intercept.h"
#include "log.h"
#include "ops.h"
#include "registry.h"
#include "runtime.h"
#include "noise.h"

hipError_t hx_graph_destroy(hipGraph_t graph)
{
	hipError_t err;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphDestroy, "hipGraphDestroy");
	err = hx_rt.GraphDestroy(graph);
	if (err || !graph)
		return err;
	hx_graph_signal_forget_graph(graph);
	hx_graph_wait_forget_graph(graph);
	return err;
}

/* A node removed from its graph no longer answers as a semaphore node (the
 * runtime may reuse its address for a node of its own), nor do the nodes
 * of the graph embedded in a child-graph node. */
hipError_t hx_graph_destroy_node(hipGraphNode_t node)
{
	hipGraph_t embedded = NULL;
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
	err = hx_rt.GraphDestroyNode(node);
	if (err || !node)
		return err;
	hx_graph_signal_forget_node(node);
	hx_graph_wait_forget_node(node);
	if (embedded) {
		hx_graph_signal_forget_graph(embedded);
		hx_graph_wait_forget_graph(embedded);
	}
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

/*
 * hx_captures_live counts the captures the shim saw begin and has not seen
 * end, each keyed by its origin stream (hipStreamPerThread, or the null
 * stream of a _spt call, with the calling thread).  A capture is over when
 * its stream no longer reports one after an end, whatever the end
 * answered: clr answers hipErrorStreamCaptureInvalidated to every end of
 * an invalidated capture that it leaves in place, so counting answers would
 * count one capture's end twice and hide another live capture.  An end of
 * a capture the shim never saw begin (a runtime call it does not wrap)
 * counts nothing.  Written under the capture guard's writer lock and
 * capture_lock; the count is read without either.
 */
atomic_int hx_captures_live;

struct capture_key {
	hipStream_t stream;
	pid_t tid; /* per-thread streams only, else 0 */
};

static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static struct capture_key *captures;
static size_t ncaptures, captures_cap;

static struct capture_key capture_key(hipStream_t stream, bool spt)
{
	struct capture_key k = { .stream = stream, .tid = 0 };

	if (stream == hipStreamPerThread || (spt && !stream)) {
		k.stream = hipStreamPerThread;
		k.tid = (pid_t)syscall(SYS_gettid);
	}
	return k;
}

static ssize_t capture_find_locked(struct capture_key k)
{
	for (size_t i = 0; i < ncaptures; i++)
		if (captures[i].stream == k.stream && captures[i].tid == k.tid)
			return (ssize_t)i;
	return -1;
}

/* After a successful begin: the capture is the shim's to count (counted
 * already, before it could start).  False if it could not be recorded. */
static bool capture_began(struct capture_key k)
{
	bool ok = true;

	pthread_mutex_lock(&capture_lock);
	if (capture_find_locked(k) >= 0) {
		/* The runtime let a second capture begin on a stream it still
		 * reports: counted once. */
		atomic_fetch_sub_explicit(&hx_captures_live, 1, memory_order_acq_rel);
	} else if (ncaptures == captures_cap) {
		size_t cap = captures_cap ? 2 * captures_cap : 8;
		struct capture_key *n = realloc(captures, cap * sizeof(*n));

		if (n) {
			captures = n;
			captures_cap = cap;
			captures[ncaptures++] = k;
		} else {
			ok = false;
		}
	} else {
		captures[ncaptures++] = k;
	}
	pthread_mutex_unlock(&capture_lock);
	return ok;
}

/* After an end: uncounted if the stream reports no capture now. */
static void capture_check_ended(struct capture_key k, hipStream_t stream)
{
	bool over = hx_runtime_capture_status(stream) == HX_CAPTURE_STATUS_NONE;
	ssize_t i;

	if (!over)
		return;
	pthread_mutex_lock(&capture_lock);
	i = capture_find_locked(k);
	if (i >= 0) {
		captures[i] = captures[--ncaptures];
		atomic_fetch_sub_explicit(&hx_captures_live, 1, memory_order_acq_rel);
	}
	pthread_mutex_unlock(&capture_lock);
}

/* Counted before the runtime's begin, so that no signal or wait decides
 * "no capture" while one starts; recorded or uncounted after it. */
static hipError_t capture_begin_done(hipError_t err, struct capture_key k, const char *what)
{
	if (err) {
		atomic_fetch_sub_explicit(&hx_captures_live, 1, memory_order_acq_rel);
		return err;
	}
	if (!capture_began(k))
		/* Still counted: the signal and wait paths ask the stream
		 * itself while any count is live (slower, never wrong). */
		hx_warn("%s: out of memory recording the capture of stream %p; it stays counted",
			what, (void *)k.stream);
	return err;
}

hipError_t hx_stream_begin_capture(hipStream_t stream, int mode, bool spt)
{
	hx_stream_begin_capture_fn *real =
		spt ? hx_rt.StreamBeginCapture_spt : hx_rt.StreamBeginCapture;
	hipError_t err;
	bool guarded;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	if (!real) {
		hx_err("%s: the HIP runtime has no such call",
		       spt ? "hipStreamBeginCapture_spt" : "hipStreamBeginCapture");
		return hipErrorNotSupported;
	}
	/* Under the capture guard: no signal, wait or launch is between its
	 * capture decision and its enqueue meanwhile (runtime.h).  Counted
	 * before the capture can start. */
	guarded = hx_capture_guard_lock();
	atomic_fetch_add_explicit(&hx_captures_live, 1, memory_order_acq_rel);
	hx_noise();
	err = real(stream, mode);
	err = capture_begin_done(err, capture_key(stream, spt),
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
	guarded = hx_capture_guard_lock();
	atomic_fetch_add_explicit(&hx_captures_live, 1, memory_order_acq_rel);
	err = hx_rt.StreamBeginCaptureToGraph(stream, graph, deps, edges, ndeps, mode);
	err = capture_begin_done(err, capture_key(stream, false), "hipStreamBeginCaptureToGraph");
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
	if (!err && clone)
		hx_graph_adopt(*clone);
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
	if (!err)
		hx_graph_adopt(graph);
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
	hx_stream_end_capture_fn *real = spt ? hx_rt.StreamEndCapture_spt : hx_rt.StreamEndCapture;
	hipError_t err;
	bool guarded;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	if (!real) {
		hx_err("%s: the HIP runtime has no such call",
		       spt ? "hipStreamEndCapture_spt" : "hipStreamEndCapture");
		return hipErrorNotSupported;
	}
	guarded = hx_capture_guard_lock();
	hx_noise();
	err = real(stream, graph);
	/* Over only if the stream says so now: a refused call (no pGraph,
	 * another thread, a joined stream) leaves it going, and so may an
	 * end that answers invalidated, again and again. */
	capture_check_ended(capture_key(stream, spt), spt && !stream ? hipStreamPerThread : stream);
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
