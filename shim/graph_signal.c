/* SPDX-License-Identifier: MIT */
/*
 * Graph external-semaphore signal nodes, and signals enqueued on a
 * capturing stream.
 *
 * A signal node becomes a host node of the real runtime whose function
 * issues the syncobj signal when the graph runs (on the runtime's callback
 * thread, never blocking).  A signal on a capturing stream is enqueued with
 * hipLaunchHostFunc, which the runtime records as such a host node.  The
 * node's data is a persistent copy of the handles and values; handles are
 * looked up again at each run.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_guard.h"
#include "graph_common.h"
#include "hot.h"
#include "intercept.h"
#include "log.h"
#include "ops.h"
#include "runtime.h"
#include "streams.h"
#include "noise.h"

/* ---- graph signal nodes ------------------------------------------------ */

/* Persistent data of one signal node (or one captured signal).  Kept until
 * exit: the runtime gives no reliable hook for when the last graph or
 * exec using it is gone (see README).  About 64 bytes + 160 per semaphore. */
struct gsig {
	struct gsig *next;
	hipGraphNode_t node; /* NULL for captured signals, exec copies and nodes of
			      * a destroyed graph */
	hipGraph_t graph;    /* the graph `node` belongs to */
	hipGraph_t root;     /* the top-level graph holding it (graph_wait.h) */
	unsigned n;
	hipExternalSemaphore_t *handles;
	uint64_t *values;
	void *raw_params; /* the caller's params, for GetParams */
	/* A captured signal's own record, which no graph the shim has seen
	 * holds yet: a graph gets a copy when its capture ends (or the record
	 * itself, marked adopted, when no copy can be made).  If it runs
	 * while still unadopted, the runtime ran it outside any graph. */
	bool unadopted;
};

static struct gsig *gsigs;

static void gsig_run(void *data)
{
	struct gsig *s = data;

	/* A signal meant for a graph, run at once: 5.3 to 6.1 enqueue
	 * hipLaunchHostFunc for real on a stream whose capture was invalidated
	 * (clr rocm-6.1.2 hip_internal.hpp STREAM_CAPTURE captures Active
	 * streams only).  The shim refuses such a capture when it sees it;
	 * this is the capture invalidated by another thread between that
	 * check and the enqueue.  Signaling now would pass the Vulkan side
	 * before the captured work ever ran. */
	if (__atomic_load_n(&s->unadopted, __ATOMIC_ACQUIRE)) {
		hx_err("a captured semaphore signal ran outside any graph (its capture was "
		       "invalidated as it was recorded, and the runtime enqueued it); not "
		       "signaled");
		return;
	}
	hx_op_signal_handles(s->handles, s->values, s->n);
}

/* A record nothing refers to (never listed, or unlisted). */
static void gsig_free(struct gsig *s)
{
	if (s) {
		free(s->handles);
		free(s->values);
		free(s->raw_params);
	}
	free(s);
}

/* An empty record for n semaphores, not yet listed. */
static struct gsig *gsig_alloc(unsigned n)
{
	size_t stride = hx_abi_signal_params_stride(hx_rt.abi);
	struct gsig *s = calloc(1, sizeof(*s));

	if (s) {
		s->n = n;
		s->handles = calloc(n ? n : 1, sizeof(*s->handles));
		s->values = calloc(n ? n : 1, sizeof(*s->values));
		s->raw_params = calloc(n ? n : 1, stride);
	}
	if (s && s->handles && s->values && s->raw_params)
		return s;
	gsig_free(s);
	return NULL;
}

/* Records live until exit: listed once filled. */
static struct gsig *gsig_list(struct gsig *s)
{
	hx_graph_fork_setup();
	pthread_mutex_lock(&hx_gsig_lock);
	s->next = gsigs;
	gsigs = s;
	pthread_mutex_unlock(&hx_gsig_lock);
	return s;
}

static struct gsig *gsig_new(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			     const char *what, hipError_t *err)
{
	struct gsig *s;

	*err = hx_op_signal_validate(hs, params, n, what);
	if (*err)
		return NULL;
	s = gsig_alloc(n);
	if (!s) {
		hx_err("%s: out of memory", what);
		*err = hipErrorOutOfMemory;
		return NULL;
	}
	for (unsigned i = 0; i < n; i++) {
		s->handles[i] = hs[i];
		s->values[i] = hx_param_value(hx_abi_params(params), i);
	}
	if (n)
		memcpy(s->raw_params, params, n * hx_abi_signal_params_stride(hx_rt.abi));
	return gsig_list(s);
}

/* A copy of `src` for a node the runtime copied (graph_walk.c), listed. */
static struct gsig *gsig_copy(const struct gsig *src)
{
	struct gsig *s = gsig_alloc(src->n);

	if (!s)
		return NULL;
	if (src->n) {
		memcpy(s->handles, src->handles, src->n * sizeof(*s->handles));
		memcpy(s->values, src->values, src->n * sizeof(*s->values));
		memcpy(s->raw_params, src->raw_params,
		       src->n * hx_abi_signal_params_stride(hx_rt.abi));
	}
	return gsig_list(s);
}

static struct gsig *gsig_find(hipGraphNode_t node)
{
	struct gsig *s;

	pthread_mutex_lock(&hx_gsig_lock);
	for (s = gsigs; s; s = s->next)
		if (s->node == node && node)
			break;
	pthread_mutex_unlock(&hx_gsig_lock);
	return s;
}

hipError_t hx_graph_add_signal_node(hipGraphNode_t *node, hipGraph_t graph,
				    const hipGraphNode_t *deps, size_t ndeps,
				    const struct hx_ext_sem_node_params *p)
{
	static const char what[] = "hipGraphAddExternalSemaphoresSignalNode";
	struct hx_host_node_params hp;
	struct gsig *s;
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	/* Parameters holding no hipextsem semaphore go to the runtime
	 * unchanged; none at all is answered here (7.x builds have no code
	 * behind the runtime's own call: hx_graph_foreign_node_check). */
	if (!hx_graph_usable() || (p && !hx_graph_any_shim_handle(p)))
		FORWARD_OR_FAIL(GraphAddExternalSemaphoresSignalNode,
				"hipGraphAddExternalSemaphoresSignalNode", node, graph, deps, ndeps, p);
	if (!node || !graph || !p) {
		hx_err("%s: %s is NULL", what, !node ? "pGraphNode" : !graph ? "graph" : "nodeParams");
		return hipErrorInvalidValue;
	}
	if (!hx_rt.GraphAddHostNode) {
		hx_err("%s: the HIP runtime has no hipGraphAddHostNode to build the node on", what);
		return hipErrorNotSupported;
	}
	s = gsig_new(p->extSemArray, p->paramsArray, p->numExtSems, what, &err);
	if (!s)
		return err;
	hp.fn = gsig_run;
	hp.userData = s;
	*node = NULL;
	err = hx_rt.GraphAddHostNode(node, graph, deps, ndeps, &hp);
	if (err)
		hx_err("%s: hipGraphAddHostNode failed (error %d)%s", what, (int)err,
		       *node ? "; the runtime kept the node in the graph: it stays a signal node"
			     : "");
	if (err && !*node)
		return err;
	/* A node the runtime kept despite its error (clr checks dependencies
	 * after adding the node) is a signal node like any other. */
	pthread_mutex_lock(&hx_gsig_lock);
	s->node = *node;
	s->graph = s->root = graph;
	pthread_mutex_unlock(&hx_gsig_lock);
	if (err)
		return err;
	hx_dbg("%s: %u semaphore(s) as host node %p", what, p->numExtSems, (void *)*node);
	return hipSuccess;
}

hipError_t hx_graph_signal_get(hipGraphNode_t node, struct hx_ext_sem_node_params *out)
{
	struct gsig *s;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	s = gsig_find(node);
	if (!s)
		FORWARD_FOREIGN_NODE(node, HX_GRAPH_NODE_EXT_SEM_SIGNAL,
				     GraphExternalSemaphoresSignalNodeGetParams,
				     "hipGraphExternalSemaphoresSignalNodeGetParams", node, out);
	if (!out)
		return hipErrorInvalidValue;
	out->extSemArray = s->handles;
	out->paramsArray = s->raw_params;
	out->numExtSems = s->n;
	return hipSuccess;
}

hipError_t hx_graph_signal_set(hipGraphNode_t node, const struct hx_ext_sem_node_params *p)
{
	static const char what[] = "hipGraphExternalSemaphoresSignalNodeSetParams";
	struct hx_host_node_params hp;
	struct gsig *old, *s;
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	old = gsig_find(node);
	if (!old) {
		if (hx_graph_refuse_foreign(node, p, what))
			return hipErrorInvalidValue;
		FORWARD_FOREIGN_NODE(node, HX_GRAPH_NODE_EXT_SEM_SIGNAL,
				     GraphExternalSemaphoresSignalNodeSetParams,
				     "hipGraphExternalSemaphoresSignalNodeSetParams", node, p);
	}
	if (!p || !hx_rt.GraphHostNodeSetParams)
		return !p ? hipErrorInvalidValue : hipErrorNotSupported;
	s = gsig_new(p->extSemArray, p->paramsArray, p->numExtSems, what, &err);
	if (!s)
		return err;
	hp.fn = gsig_run;
	hp.userData = s;
	err = hx_rt.GraphHostNodeSetParams(node, &hp);
	if (err)
		return err;
	/* Existing execs keep the old copy, as CUDA says they must. */
	pthread_mutex_lock(&hx_gsig_lock);
	s->node = node;
	s->graph = old->graph;
	s->root = old->root;
	old->node = NULL;
	old->graph = old->root = NULL;
	pthread_mutex_unlock(&hx_gsig_lock);
	return hipSuccess;
}

hipError_t hx_graph_exec_signal_set(hipGraphExec_t exec, hipGraphNode_t node,
				    const struct hx_ext_sem_node_params *p)
{
	static const char what[] = "hipGraphExecExternalSemaphoresSignalNodeSetParams";
	struct hx_host_node_params hp;
	struct gsig *s;
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (!gsig_find(node)) {
		if (hx_graph_refuse_foreign(node, p, what))
			return hipErrorInvalidValue;
		FORWARD_FOREIGN_NODE(node, HX_GRAPH_NODE_EXT_SEM_SIGNAL,
				     GraphExecExternalSemaphoresSignalNodeSetParams,
				     "hipGraphExecExternalSemaphoresSignalNodeSetParams", exec, node, p);
	}
	if (!p || !hx_rt.GraphExecHostNodeSetParams)
		return !p ? hipErrorInvalidValue : hipErrorNotSupported;
	s = gsig_new(p->extSemArray, p->paramsArray, p->numExtSems, what, &err);
	if (!s)
		return err;
	hp.fn = gsig_run;
	hp.userData = s;
	return hx_rt.GraphExecHostNodeSetParams(exec, node, &hp);
}

/* `node`, a host node of `graph`, is a runtime-made copy of a signal node
 * (or a captured signal) when it runs the shim's function on a record of
 * the shim's and is not known itself: it gets a copy of that record. */
void hx_graph_signal_adopt(hipGraph_t graph, hipGraphNode_t node, hipGraph_t root)
{
	struct hx_host_node_params hp = { 0 };
	struct gsig *src = NULL, *s;
	hipError_t err;

	if (!hx_rt.GraphHostNodeGetParams || !hx_rt.GraphHostNodeSetParams ||
	    hx_rt.GraphHostNodeGetParams(node, &hp) != hipSuccess || hp.fn != gsig_run)
		return;
	pthread_mutex_lock(&hx_gsig_lock);
	for (s = gsigs; s && s->node != node; s = s->next)
		;
	/* Only a record the shim made is read: the data pointer is checked. */
	if (!s)
		for (src = gsigs; src && src != hp.userData; src = src->next)
			;
	pthread_mutex_unlock(&hx_gsig_lock);
	if (!src)
		return;
	s = gsig_copy(src);
	if (!s) {
		hx_err("signal node %p of graph %p (a copy): out of memory; it keeps the "
		       "original's data", (void *)node, (void *)graph);
		__atomic_store_n(&src->unadopted, false, __ATOMIC_RELEASE);
		return;
	}
	hp.userData = s;
	err = hx_rt.GraphHostNodeSetParams(node, &hp);
	if (err) {
		hx_err("hipGraphHostNodeSetParams on node %p failed (error %d); the copy keeps "
		       "the original's data", (void *)node, (int)err);
		__atomic_store_n(&src->unadopted, false, __ATOMIC_RELEASE);
		/* No node holds the copy (the runtime refused to give it to
		 * one): unlisted and freed, not left for the process's life. */
		pthread_mutex_lock(&hx_gsig_lock);
		for (struct gsig **pp = &gsigs; *pp; pp = &(*pp)->next)
			if (*pp == s) {
				*pp = s->next;
				break;
			}
		pthread_mutex_unlock(&hx_gsig_lock);
		gsig_free(s);
		return;
	}
	pthread_mutex_lock(&hx_gsig_lock);
	s->node = node;
	s->graph = graph;
	s->root = root;
	pthread_mutex_unlock(&hx_gsig_lock);
}

/* The graph is gone (with the graphs embedded in its child-graph nodes):
 * its signal nodes' data stays (execs may still run it) but no longer
 * answers for the nodes, whose calls then go to the runtime, which refuses
 * a node of a destroyed graph. */
void hx_graph_signal_forget_graph(hipGraph_t graph)
{
	pthread_mutex_lock(&hx_gsig_lock);
	for (struct gsig *s = gsigs; s; s = s->next)
		if (graph && (s->graph == graph || s->root == graph))
			s->node = NULL, s->graph = s->root = NULL;
	pthread_mutex_unlock(&hx_gsig_lock);
}

void hx_graph_signal_forget_node(hipGraphNode_t node)
{
	pthread_mutex_lock(&hx_gsig_lock);
	for (struct gsig *s = gsigs; s; s = s->next)
		if (node && s->node == node)
			s->node = NULL, s->graph = s->root = NULL;
	pthread_mutex_unlock(&hx_gsig_lock);
}

/* As hx_graph_wait_forget_dead (graph_wait.c): records of nodes the
 * runtime freed no longer answer for their addresses. */
void hx_graph_signal_forget_dead(void)
{
	hipGraph_t dead;
	int type;

	if (!hx_rt.GraphNodeGetType)
		return;
	pthread_mutex_lock(&hx_gsig_lock);
	do {
		dead = NULL;
		for (struct gsig *s = gsigs; s && !dead; s = s->next)
			if (s->node && hx_rt.GraphNodeGetType(s->node, &type) != hipSuccess)
				dead = s->root;
		for (struct gsig *s = gsigs; s && dead; s = s->next)
			if (s->node && (s->graph == dead || s->root == dead))
				s->node = NULL, s->graph = s->root = NULL;
	} while (dead);
	pthread_mutex_unlock(&hx_gsig_lock);
}

bool hx_graph_signal_any(void)
{
	bool any;

	pthread_mutex_lock(&hx_gsig_lock);
	any = gsigs != NULL;
	pthread_mutex_unlock(&hx_gsig_lock);
	return any;
}

bool hx_graph_signal_known(hipGraphNode_t node)
{
	return gsig_find(node) != NULL;
}

/* ---- stream capture ---------------------------------------------------- */

/* graph_common.h.  The caller (dispatch.c) decided that `stream` is
 * actively capturing and that the runtime has hipLaunchHostFunc. */
hipError_t hx_graph_capture_signal(const hipExternalSemaphore_t *hs, const void *params,
				   unsigned n, hipStream_t stream)
{
	static const char what[] = "hipSignalExternalSemaphoresAsync (captured)";
	struct gsig *s;
	hipError_t err;

	/* Recorded as a host node: runs at every launch of the graph. */
	s = gsig_new(hs, params, n, what, &err);
	if (!s)
		return err;
	__atomic_store_n(&s->unadopted, true, __ATOMIC_RELEASE);
	err = hx_rt.LaunchHostFunc(stream, gsig_run, s);
	if (err)
		hx_err("%s: hipLaunchHostFunc on capturing stream %p failed (error %d)", what,
		       (void *)stream, (int)err);
	else
		hx_dbg("%s: %u semaphore(s) recorded into the capture of stream %p", what, n,
		       (void *)stream);
	return err;
}
