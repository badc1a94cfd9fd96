/* SPDX-License-Identifier: MIT */
/*
 * cpuhip: the graph and stream-capture subset (6.x flavour), with ROCm's
 * semantics where the shim depends on them (clr hipamd/src/hip_graph.cpp):
 *
 * - nodes: host, empty, external-semaphore signal/wait; added with their
 *   dependencies (which must already exist, so insertion order is a
 *   topological order and launches run nodes in that order);
 * - hipGraphInstantiate copies node parameters into the exec:
 *   hipGraphHostNodeSetParams changes the graph only,
 *   hipGraphExecHostNodeSetParams the exec only;
 * - hipGraphLaunch enqueues every host node on the stream as a host
 *   function (one callback thread, stalls the stream, in order);
 * - external-semaphore nodes are accepted and do nothing when the graph
 *   runs: the stock Linux backend has no external semaphores;
 * - event-wait / event-record nodes enqueue hipStreamWaitEvent /
 *   hipEventRecord on the launch stream, in node order, when
 *   hipGraphLaunch runs (clr's GraphEventWaitNode::EnqueueCommands): a wait
 *   binds to the event's latest record made before hipGraphLaunch;
 * - hipGraphInstantiateWithFlags takes the flags clr accepts (0,
 *   AutoFreeOnLaunch, UseNodePriority) and otherwise is hipGraphInstantiate;
 * - capture: hipLaunchHostFunc on a capturing stream records a host node
 *   (clr STREAM_CAPTURE -> capturehipLaunchHostFunc), each depending on the
 *   previous one.  hipSignal/WaitExternalSemaphoresAsync are not captured
 *   by any release (they have no STREAM_CAPTURE): cpuhip.c lets them
 *   succeed without a node.  Other stream work during capture answers
 *   hipErrorStreamCaptureUnsupported here (ROCm records it; the shim's
 *   tests do not need it), as do hipStreamSynchronize and hipStreamQuery
 *   (ROCm too).
 * Error answers are rocm-6.4.3's (hip_graph.cpp; 6.0 to 6.2.2 alike unless
 * said); where clr casts a handle unchecked, cpuhip answers
 * hipErrorInvalidValue instead.
 */
#include <stdlib.h>
#include <string.h>

#include "cpuhip_internal.h"
#include "hipextsem/hip_graph.h"

#if CPUHIP_ABI == 6

#if CPUHIP_ABI == 6
typedef struct hx_sem_signal_params_v6 sem_signal_t;
typedef struct hx_sem_wait_params_v6 sem_wait_t;
#endif

struct hipGraphNode {
	struct hipGraphNode *next;
	struct ihipGraph *graph;
	int type;
	struct hx_host_node_params host;
	hipEvent_t event; /* event-wait / event-record nodes */
	struct hx_ext_sem_node_params es; /* arrays owned by the node */
};

struct ihipGraph {
	struct ihipGraph *next_live;
	struct hipGraphNode *head, *tail;
	size_t n;
};

struct exec_item {
	struct hipGraphNode *node;
	int type;
	struct hx_host_node_params host;
	hipEvent_t event;
};

struct hipGraphExec {
	struct hipGraphExec *next_live;
	size_t n;
	struct exec_item *items;
};

struct capture {
	struct capture *next;
	hipStream_t stream;
	struct ihipGraph *graph;
	struct hipGraphNode *last;
};

static pthread_mutex_t glock = PTHREAD_MUTEX_INITIALIZER;
static struct ihipGraph *graphs;
static struct hipGraphExec *execs;
static struct capture *captures;

static struct ihipGraph *graph_ok_locked(hipGraph_t g)
{
	for (struct ihipGraph *p = graphs; p; p = p->next_live)
		if (p == g)
			return p;
	return NULL;
}

static struct hipGraphNode *node_ok_locked(hipGraphNode_t n)
{
	for (struct ihipGraph *p = graphs; p; p = p->next_live)
		for (struct hipGraphNode *q = p->head; q; q = q->next)
			if (q == n)
				return q;
	return NULL;
}

static struct hipGraphExec *exec_ok_locked(hipGraphExec_t e)
{
	for (struct hipGraphExec *p = execs; p; p = p->next_live)
		if (p == e)
			return p;
	return NULL;
}

static struct capture *capture_locked(hipStream_t s)
{
	for (struct capture *c = captures; c; c = c->next)
		if (c->stream == s)
			return c;
	return NULL;
}

static void free_es(struct hx_ext_sem_node_params *es)
{
	free(es->extSemArray);
	free((void *)es->paramsArray);
	memset(es, 0, sizeof(*es));
}

static hipError_t copy_es(struct hx_ext_sem_node_params *dst,
			  const struct hx_ext_sem_node_params *src, bool wait)
{
	size_t stride = wait ? sizeof(sem_wait_t) : sizeof(sem_signal_t);
	unsigned n = src->numExtSems;

	if (n && (!src->extSemArray || !src->paramsArray))
		return hipErrorInvalidValue;
	for (unsigned i = 0; i < n; i++)
		if (!src->extSemArray[i])
			return hipErrorInvalidValue;
	dst->numExtSems = n;
	dst->extSemArray = calloc(n ? n : 1, sizeof(*dst->extSemArray));
	dst->paramsArray = calloc(n ? n : 1, stride);
	if (!dst->extSemArray || !dst->paramsArray) {
		free_es(dst);
		return hipErrorOutOfMemory;
	}
	if (n) {
		memcpy(dst->extSemArray, src->extSemArray, n * sizeof(*dst->extSemArray));
		memcpy((void *)dst->paramsArray, src->paramsArray, n * stride);
	}
	return hipSuccess;
}

/* Adds a node (lock held).  Dependencies must be nodes of the same graph. */
static hipError_t add_node_locked(hipGraphNode_t *out, hipGraph_t graph,
				  const hipGraphNode_t *deps, size_t ndeps, int type,
				  const struct hx_host_node_params *host,
				  const struct hx_ext_sem_node_params *es, hipEvent_t event)
{
	struct ihipGraph *g = graph_ok_locked(graph);
	struct hipGraphNode *n;
	hipError_t e;

	if (!out || !g || (ndeps && !deps))
		return hipErrorInvalidValue;
	for (size_t i = 0; i < ndeps; i++) {
		struct hipGraphNode *d = node_ok_locked(deps[i]);
		if (!d || d->graph != g)
			return hipErrorInvalidValue;
	}
	if (type == HX_GRAPH_NODE_HOST && (!host || !host->fn))
		return hipErrorInvalidValue;
	if ((type == HX_GRAPH_NODE_WAIT_EVENT || type == HX_GRAPH_NODE_EVENT_RECORD) && !event)
		return hipErrorInvalidValue;
	n = calloc(1, sizeof(*n));
	if (!n)
		return hipErrorOutOfMemory;
	n->graph = g;
	n->type = type;
	n->event = event;
	if (host)
		n->host = *host;
	if (es) {
		e = copy_es(&n->es, es, type == HX_GRAPH_NODE_EXT_SEM_WAIT);
		if (e) {
			free(n);
			return e;
		}
	}
	if (g->tail)
		g->tail->next = n;
	else
		g->head = n;
	g->tail = n;
	g->n++;
	*out = n;
	return hipSuccess;
}

static hipError_t add_node(hipGraphNode_t *out, hipGraph_t graph, const hipGraphNode_t *deps,
			   size_t ndeps, int type, const struct hx_host_node_params *host,
			   const struct hx_ext_sem_node_params *es, hipEvent_t event)
{
	pthread_mutex_lock(&glock);
	hipError_t e = add_node_locked(out, graph, deps, ndeps, type, host, es, event);
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

CPUHIP_EXPORT hipError_t hipGraphCreate(hipGraph_t *pGraph, unsigned int flags)
{
	struct ihipGraph *g;

	if (!pGraph || flags != 0)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	g = calloc(1, sizeof(*g));
	if (!g)
		return cpuhip_set_last_error(hipErrorOutOfMemory);
	pthread_mutex_lock(&glock);
	g->next_live = graphs;
	graphs = g;
	pthread_mutex_unlock(&glock);
	*pGraph = g;
	return cpuhip_set_last_error(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipGraphDestroy(hipGraph_t graph)
{
	/* clr: NULL -> hipErrorInvalidValue; a graph it no longer knows
	 * (isGraphValid) -> hipErrorIllegalState. */
	if (!graph)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	pthread_mutex_lock(&glock);
	struct ihipGraph *g = graph_ok_locked(graph);
	if (!g) {
		pthread_mutex_unlock(&glock);
		return cpuhip_set_last_error(hipErrorIllegalState);
	}
	for (struct ihipGraph **pp = &graphs; *pp; pp = &(*pp)->next_live)
		if (*pp == g) {
			*pp = g->next_live;
			break;
		}
	/* Execs keep pointers to nodes only for SetParams lookups: forget them. */
	for (struct hipGraphExec *x = execs; x; x = x->next_live)
		for (size_t i = 0; i < x->n; i++)
			if (x->items[i].node && x->items[i].node->graph == g)
				x->items[i].node = NULL;
	for (struct hipGraphNode *n = g->head, *nx; n; n = nx) {
		nx = n->next;
		free_es(&n->es);
		free(n);
	}
	free(g);
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipGraphAddHostNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
					     const hipGraphNode_t *pDependencies,
					     size_t numDependencies,
					     const struct hx_host_node_params *pNodeParams)
{
	return add_node(pGraphNode, graph, pDependencies, numDependencies, HX_GRAPH_NODE_HOST,
			pNodeParams, NULL, NULL);
}

CPUHIP_EXPORT hipError_t hipGraphAddEmptyNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
					      const hipGraphNode_t *pDependencies,
					      size_t numDependencies)
{
	return add_node(pGraphNode, graph, pDependencies, numDependencies, HX_GRAPH_NODE_EMPTY,
			NULL, NULL, NULL);
}

CPUHIP_EXPORT hipError_t hipGraphAddExternalSemaphoresSignalNode(
	hipGraphNode_t *pGraphNode, hipGraph_t graph, const hipGraphNode_t *pDependencies,
	size_t numDependencies, const struct hx_ext_sem_node_params *nodeParams)
{
	if (!nodeParams)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	return add_node(pGraphNode, graph, pDependencies, numDependencies,
			HX_GRAPH_NODE_EXT_SEM_SIGNAL, NULL, nodeParams, NULL);
}

CPUHIP_EXPORT hipError_t hipGraphAddExternalSemaphoresWaitNode(
	hipGraphNode_t *pGraphNode, hipGraph_t graph, const hipGraphNode_t *pDependencies,
	size_t numDependencies, const struct hx_ext_sem_node_params *nodeParams)
{
	if (!nodeParams)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	return add_node(pGraphNode, graph, pDependencies, numDependencies,
			HX_GRAPH_NODE_EXT_SEM_WAIT, NULL, nodeParams, NULL);
}

CPUHIP_EXPORT hipError_t hipGraphAddEventWaitNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
						  const hipGraphNode_t *pDependencies,
						  size_t numDependencies, hipEvent_t event)
{
	return add_node(pGraphNode, graph, pDependencies, numDependencies,
			HX_GRAPH_NODE_WAIT_EVENT, NULL, NULL, event);
}

CPUHIP_EXPORT hipError_t hipGraphAddEventRecordNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
						    const hipGraphNode_t *pDependencies,
						    size_t numDependencies, hipEvent_t event)
{
	return add_node(pGraphNode, graph, pDependencies, numDependencies,
			HX_GRAPH_NODE_EVENT_RECORD, NULL, NULL, event);
}

static hipError_t event_get(hipGraphNode_t node, hipEvent_t *out, int type)
{
	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	hipError_t e = hipSuccess;
	if (!n || !out || n->type != type)
		e = hipErrorInvalidValue;
	else
		*out = n->event;
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

CPUHIP_EXPORT hipError_t hipGraphEventWaitNodeGetEvent(hipGraphNode_t node, hipEvent_t *out)
{
	return event_get(node, out, HX_GRAPH_NODE_WAIT_EVENT);
}

CPUHIP_EXPORT hipError_t hipGraphEventRecordNodeGetEvent(hipGraphNode_t node, hipEvent_t *out)
{
	return event_get(node, out, HX_GRAPH_NODE_EVENT_RECORD);
}

CPUHIP_EXPORT hipError_t hipGraphAddNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
					 const hipGraphNode_t *pDependencies,
					 size_t numDependencies,
					 struct hx_graph_node_params *p)
{
	if (!p)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	switch (p->type) {
	case HX_GRAPH_NODE_HOST:
		return hipGraphAddHostNode(pGraphNode, graph, pDependencies, numDependencies,
					   &p->u.host);
	case HX_GRAPH_NODE_EMPTY:
		return hipGraphAddEmptyNode(pGraphNode, graph, pDependencies, numDependencies);
	case HX_GRAPH_NODE_EXT_SEM_SIGNAL:
		return hipGraphAddExternalSemaphoresSignalNode(pGraphNode, graph, pDependencies,
							       numDependencies,
							       &p->u.extSemSignal);
	case HX_GRAPH_NODE_EXT_SEM_WAIT:
		return hipGraphAddExternalSemaphoresWaitNode(pGraphNode, graph, pDependencies,
							     numDependencies, &p->u.extSemWait);
	default:
		return cpuhip_set_last_error(hipErrorNotSupported);
	}
}

static hipError_t es_get(hipGraphNode_t node, struct hx_ext_sem_node_params *out, int type)
{
	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	hipError_t e = hipSuccess;
	if (!n || !out || n->type != type)
		e = hipErrorInvalidValue;
	else
		*out = n->es; /* pointers to the node's own copy, as clr does */
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

static hipError_t es_set(hipGraphNode_t node, const struct hx_ext_sem_node_params *p, int type)
{
	struct hx_ext_sem_node_params copy = { 0 };
	hipError_t e;

	if (!p)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	e = copy_es(&copy, p, type == HX_GRAPH_NODE_EXT_SEM_WAIT);
	if (e)
		return cpuhip_set_last_error(e);
	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	if (!n || n->type != type) {
		e = hipErrorInvalidValue;
		free_es(&copy);
	} else {
		free_es(&n->es);
		n->es = copy;
	}
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

static hipError_t exec_es_set(hipGraphExec_t exec, hipGraphNode_t node,
			      const struct hx_ext_sem_node_params *p, int type)
{
	hipError_t e = hipErrorInvalidValue;

	if (!p)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	pthread_mutex_lock(&glock);
	struct hipGraphExec *x = exec_ok_locked(exec);
	for (size_t i = 0; x && i < x->n; i++)
		if (x->items[i].node == node && x->items[i].type == type)
			e = hipSuccess; /* nothing runs for it: nothing to store */
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

CPUHIP_EXPORT hipError_t hipGraphExternalSemaphoresSignalNodeGetParams(
	hipGraphNode_t hNode, struct hx_ext_sem_node_params *params_out)
{
	return es_get(hNode, params_out, HX_GRAPH_NODE_EXT_SEM_SIGNAL);
}

CPUHIP_EXPORT hipError_t hipGraphExternalSemaphoresSignalNodeSetParams(
	hipGraphNode_t hNode, const struct hx_ext_sem_node_params *nodeParams)
{
	return es_set(hNode, nodeParams, HX_GRAPH_NODE_EXT_SEM_SIGNAL);
}

CPUHIP_EXPORT hipError_t hipGraphExternalSemaphoresWaitNodeGetParams(
	hipGraphNode_t hNode, struct hx_ext_sem_node_params *params_out)
{
	return es_get(hNode, params_out, HX_GRAPH_NODE_EXT_SEM_WAIT);
}

CPUHIP_EXPORT hipError_t hipGraphExternalSemaphoresWaitNodeSetParams(
	hipGraphNode_t hNode, const struct hx_ext_sem_node_params *nodeParams)
{
	return es_set(hNode, nodeParams, HX_GRAPH_NODE_EXT_SEM_WAIT);
}

CPUHIP_EXPORT hipError_t hipGraphExecExternalSemaphoresSignalNodeSetParams(
	hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
	const struct hx_ext_sem_node_params *nodeParams)
{
	return exec_es_set(hGraphExec, hNode, nodeParams, HX_GRAPH_NODE_EXT_SEM_SIGNAL);
}

CPUHIP_EXPORT hipError_t hipGraphExecExternalSemaphoresWaitNodeSetParams(
	hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
	const struct hx_ext_sem_node_params *nodeParams)
{
	return exec_es_set(hGraphExec, hNode, nodeParams, HX_GRAPH_NODE_EXT_SEM_WAIT);
}

CPUHIP_EXPORT hipError_t hipGraphHostNodeGetParams(hipGraphNode_t node,
						   struct hx_host_node_params *p)
{
	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	hipError_t e = hipSuccess;
	if (!n || !p || n->type != HX_GRAPH_NODE_HOST)
		e = hipErrorInvalidValue;
	else
		*p = n->host;
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

CPUHIP_EXPORT hipError_t hipGraphHostNodeSetParams(hipGraphNode_t node,
						   const struct hx_host_node_params *p)
{
	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	hipError_t e = hipSuccess;
	if (!n || !p || !p->fn || n->type != HX_GRAPH_NODE_HOST)
		e = hipErrorInvalidValue;
	else
		n->host = *p;
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

CPUHIP_EXPORT hipError_t hipGraphExecHostNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
						       const struct hx_host_node_params *p)
{
	hipError_t e = hipErrorInvalidValue;

	if (!p || !p->fn)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	pthread_mutex_lock(&glock);
	struct hipGraphExec *x = exec_ok_locked(exec);
	for (size_t i = 0; x && i < x->n; i++)
		if (x->items[i].node == node && x->items[i].type == HX_GRAPH_NODE_HOST) {
			x->items[i].host = *p;
			e = hipSuccess;
		}
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

CPUHIP_EXPORT hipError_t hipGraphNodeGetType(hipGraphNode_t node, int *pType)
{
	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	if (n && pType)
		*pType = n->type;
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(n && pType ? hipSuccess : hipErrorInvalidValue);
}

CPUHIP_EXPORT hipError_t hipGraphGetNodes(hipGraph_t graph, hipGraphNode_t *nodes,
					  size_t *numNodes)
{
	hipError_t e = hipSuccess;

	pthread_mutex_lock(&glock);
	struct ihipGraph *g = graph_ok_locked(graph);
	if (!g || !numNodes) {
		e = hipErrorInvalidValue;
	} else if (!nodes) {
		*numNodes = g->n;
	} else {
		/* clr fills min(*numNodes, count) entries, NULLs the rest of a
		 * larger array, and then reports the count. */
		size_t i = 0;
		for (struct hipGraphNode *n = g->head; n && i < *numNodes; n = n->next)
			nodes[i++] = n;
		if (*numNodes > g->n) {
			for (; i < *numNodes; i++)
				nodes[i] = NULL;
			*numNodes = g->n;
		}
	}
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

CPUHIP_EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
					     hipGraphNode_t *pErrorNode, char *pLogBuffer,
					     size_t bufferSize)
{
	struct hipGraphExec *x;
	size_t i = 0;

	if (!pGraphExec)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	pthread_mutex_lock(&glock);
	struct ihipGraph *g = graph_ok_locked(graph);
	if (!g) {
		pthread_mutex_unlock(&glock);
		return cpuhip_set_last_error(hipErrorInvalidValue);
	}
	x = calloc(1, sizeof(*x));
	if (x)
		x->items = calloc(g->n ? g->n : 1, sizeof(*x->items));
	if (!x || !x->items) {
		pthread_mutex_unlock(&glock);
		free(x);
		return cpuhip_set_last_error(hipErrorOutOfMemory);
	}
	for (struct hipGraphNode *n = g->head; n; n = n->next, i++) {
		x->items[i].node = n;
		x->items[i].type = n->type;
		x->items[i].host = n->host;
		x->items[i].event = n->event;
	}
	x->n = g->n;
	x->next_live = execs;
	execs = x;
	pthread_mutex_unlock(&glock);
	*pGraphExec = x;
	return cpuhip_set_last_error(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *pGraphExec,
						      hipGraph_t graph, unsigned long long flags)
{
	/* hipGraphInstantiateFlagAutoFreeOnLaunch (1) and
	 * hipGraphInstantiateFlagUseNodePriority (8): nothing to do here. */
	if (pGraphExec && graph && flags != 0 && flags != 1 && flags != 8)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	return hipGraphInstantiate(pGraphExec, graph, NULL, NULL, 0);
}

CPUHIP_EXPORT hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t stream)
{
	struct exec_item *items;
	size_t n;
	hipError_t e = hipSuccess;

	/* clr hipGraphLaunch_common: an unknown exec -> hipErrorInvalidValue,
	 * then a dead stream -> 709 (rocm-6.4.3 first lets an exec with no
	 * nodes succeed on any stream). */
	pthread_mutex_lock(&glock);
	struct hipGraphExec *x = exec_ok_locked(exec);
	if (!x) {
		pthread_mutex_unlock(&glock);
		return cpuhip_set_last_error(hipErrorInvalidValue);
	}
	pthread_mutex_unlock(&glock);
	if (!cpuhip_stream_valid(stream))
		return cpuhip_set_last_error((hipError_t)709);
	if (cpuhip_capture_active(stream))
		return cpuhip_set_last_error(hipErrorStreamCaptureUnsupported);
	pthread_mutex_lock(&glock);
	x = exec_ok_locked(exec);
	if (!x) {
		pthread_mutex_unlock(&glock);
		return cpuhip_set_last_error(hipErrorInvalidValue);
	}
	n = x->n;
	items = malloc((n ? n : 1) * sizeof(*items));
	if (items)
		memcpy(items, x->items, n * sizeof(*items));
	pthread_mutex_unlock(&glock);
	if (!items)
		return cpuhip_set_last_error(hipErrorOutOfMemory);
	for (size_t i = 0; i < n && !e; i++) {
		if (items[i].type == HX_GRAPH_NODE_HOST)
			e = cpuhip_enqueue_host_fn(stream, items[i].host.fn, items[i].host.userData);
		else if (items[i].type == HX_GRAPH_NODE_WAIT_EVENT)
			e = hipStreamWaitEvent(stream, items[i].event, 0);
		else if (items[i].type == HX_GRAPH_NODE_EVENT_RECORD)
			e = hipEventRecord(items[i].event, stream);
	}
	free(items);
	return cpuhip_set_last_error(e);
}

CPUHIP_EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t exec)
{
	pthread_mutex_lock(&glock);
	struct hipGraphExec *x = exec_ok_locked(exec);
	if (x)
		for (struct hipGraphExec **pp = &execs; *pp; pp = &(*pp)->next_live)
			if (*pp == x) {
				*pp = x->next_live;
				break;
			}
	pthread_mutex_unlock(&glock);
	if (!x)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	free(x->items);
	free(x);
	return cpuhip_set_last_error(hipSuccess);
}

/* ---- capture ----------------------------------------------------------- */

bool cpuhip_capture_active(hipStream_t h)
{
	bool on;

	if (!h)
		return false;
	pthread_mutex_lock(&glock);
	on = capture_locked(h) != NULL;
	pthread_mutex_unlock(&glock);
	return on;
}

CPUHIP_EXPORT hipError_t hipStreamBeginCapture(hipStream_t stream, int mode)
{
	struct capture *c;
	hipGraph_t g;
	hipError_t e;

	/* clr hipStreamBeginCapture_common: a dead stream -> 709, the legacy
	 * null stream -> hipErrorStreamCaptureUnsupported, a bad mode ->
	 * hipErrorInvalidValue, a stream already capturing -> IllegalState. */
	if (!cpuhip_stream_valid(stream))
		return cpuhip_set_last_error((hipError_t)709);
	if (!stream || stream == hipStreamLegacy)
		return cpuhip_set_last_error(hipErrorStreamCaptureUnsupported);
	if (mode < HX_CAPTURE_MODE_GLOBAL || mode > HX_CAPTURE_MODE_RELAXED)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	if (cpuhip_capture_active(stream))
		return cpuhip_set_last_error(hipErrorIllegalState);
	e = hipGraphCreate(&g, 0);
	if (e)
		return e;
	c = calloc(1, sizeof(*c));
	if (!c) {
		hipGraphDestroy(g);
		return cpuhip_set_last_error(hipErrorOutOfMemory);
	}
	c->stream = stream;
	c->graph = g;
	pthread_mutex_lock(&glock);
	c->next = captures;
	captures = c;
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph)
{
	struct capture *c = NULL;

	/* clr hipStreamEndCapture_common: NULL pGraph -> InvalidValue, the null
	 * stream -> IllegalState, a dead stream -> 709, not capturing ->
	 * IllegalState. */
	if (!pGraph)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	if (!stream || stream == hipStreamLegacy)
		return cpuhip_set_last_error(hipErrorIllegalState);
	if (!cpuhip_stream_valid(stream))
		return cpuhip_set_last_error((hipError_t)709);
	pthread_mutex_lock(&glock);
	for (struct capture **pp = &captures; *pp; pp = &(*pp)->next)
		if ((*pp)->stream == stream) {
			c = *pp;
			*pp = c->next;
			break;
		}
	pthread_mutex_unlock(&glock);
	if (!c)
		return cpuhip_set_last_error(hipErrorIllegalState);
	*pGraph = c->graph;
	free(c);
	return cpuhip_set_last_error(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipStreamIsCapturing(hipStream_t stream, int *pCaptureStatus)
{
	if (!pCaptureStatus)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	if (stream && !cpuhip_stream_valid(stream))
		return cpuhip_set_last_error((hipError_t)709);
	*pCaptureStatus = cpuhip_capture_active(stream) ? HX_CAPTURE_STATUS_ACTIVE
						       : HX_CAPTURE_STATUS_NONE;
	return cpuhip_set_last_error(hipSuccess);
}

static hipError_t capture_add(hipStream_t h, int type, const struct hx_host_node_params *host,
			      const struct hx_ext_sem_node_params *es)
{
	hipError_t e;
	hipGraphNode_t n;

	pthread_mutex_lock(&glock);
	struct capture *c = capture_locked(h);
	if (!c) {
		pthread_mutex_unlock(&glock);
		return hipErrorStreamCaptureInvalidated;
	}
	e = add_node_locked(&n, c->graph, c->last ? (hipGraphNode_t *)&c->last : NULL,
			    c->last ? 1 : 0, type, host, es, NULL);
	if (!e)
		c->last = n;
	pthread_mutex_unlock(&glock);
	return e;
}

hipError_t cpuhip_capture_host_fn(hipStream_t h, hipHostFn_t fn, void *data)
{
	struct hx_host_node_params p = { fn, data };
	return capture_add(h, HX_GRAPH_NODE_HOST, &p, NULL);
}

/* hipStreamDestroy ends the capture of the stream it destroys (clr
 * s->EndCapture()); the graph it was building goes with it. */
void cpuhip_capture_forget(hipStream_t h)
{
	struct capture *c = NULL;

	pthread_mutex_lock(&glock);
	for (struct capture **pp = &captures; *pp; pp = &(*pp)->next)
		if ((*pp)->stream == h) {
			c = *pp;
			*pp = c->next;
			break;
		}
	pthread_mutex_unlock(&glock);
	if (c) {
		hipGraphDestroy(c->graph);
		free(c);
	}
}

#else /* 5.x flavour: no graphs here */

bool cpuhip_capture_active(hipStream_t h)
{
	(void)h;
	return false;
}

hipError_t cpuhip_capture_host_fn(hipStream_t h, hipHostFn_t fn, void *data)
{
	(void)h, (void)fn, (void)data;
	return hipErrorNotSupported;
}

void cpuhip_capture_forget(hipStream_t h)
{
	(void)h;
}

#endif
