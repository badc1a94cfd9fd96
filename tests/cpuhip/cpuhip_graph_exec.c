/* SPDX-License-Identifier: MIT */
/*
 * cpuhip: node parameters and executable graphs (both flavours), after ROCm
 * clr rocm-6.2.2 hipamd/src/hip_graph.cpp and hip_graph_internal.hpp:
 *
 * - hipGraphInstantiate* clone the graph into the exec (ihipGraphInstantiate
 *   -> Graph::clone); hipGraph*SetParams change the graph only,
 *   hipGraphExec*SetParams the exec's copy only (GraphExec::GetClonedNode:
 *   top-level nodes of the instantiated graph);
 * - hipGraphLaunch enqueues the exec's nodes in insertion order (a
 *   topological order, since dependencies exist first), child graphs
 *   expanded in place at any depth: host nodes as host functions (one
 *   callback thread, each stalls the stream), event-wait / event-record
 *   nodes as hipStreamWaitEvent / hipEventRecord on the launch stream;
 * - hipGraphExecUpdate follows clr's rules (below).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuhip_graph_internal.h"
#include "cpuhip_test.h"

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
	CPUHIP_BOUNDARY("hipGraphEventWaitNodeGetEvent", NULL);
	return event_get(node, out, HX_GRAPH_NODE_WAIT_EVENT);
}

CPUHIP_EXPORT hipError_t hipGraphEventRecordNodeGetEvent(hipGraphNode_t node, hipEvent_t *out)
{
	CPUHIP_BOUNDARY("hipGraphEventRecordNodeGetEvent", NULL);
	return event_get(node, out, HX_GRAPH_NODE_EVENT_RECORD);
}

/* clr hipGraphEventWaitNodeSetEvent: a node clr does not know, a NULL
 * event or another node type -> hipErrorInvalidValue. */
CPUHIP_EXPORT hipError_t hipGraphEventWaitNodeSetEvent(hipGraphNode_t node, hipEvent_t event)
{
	CPUHIP_BOUNDARY("hipGraphEventWaitNodeSetEvent", NULL);
	hipError_t e = hipSuccess;

	/* clr hip_graph.cpp hipGraphEventWaitNodeSetEvent: HIP_INIT_API
	 * (hipErrorOutOfMemory); the node keeps its event. */
	if (cpuhip_take_fail_mine(CPUHIP_FAIL_GRAPH_EVENT_NODE))
		return cpuhip_set_last_error(hipErrorOutOfMemory);

	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	if (!n || !event || n->type != HX_GRAPH_NODE_WAIT_EVENT)
		e = hipErrorInvalidValue;
	else
		n->event = event;
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

/* The exec's copy of a graph node (clr GraphExec::GetClonedNode). */
static struct hipGraphNode *exec_clone_locked(hipGraphExec_t exec, hipGraphNode_t node)
{
	struct hipGraphExec *x = exec_ok_locked(exec);

	if (!x || !node)
		return NULL;
	for (struct hipGraphNode *c = x->g->head; c; c = c->next)
		if (c->orig == node)
			return c;
	return NULL;
}

/* clr hipGraphExecEventWaitNodeSetEvent: NULL exec, node or event, or a
 * node that is no event-wait node -> hipErrorInvalidValue; then the exec's
 * copy, none -> hipErrorInvalidValue. */
CPUHIP_EXPORT hipError_t hipGraphExecEventWaitNodeSetEvent(hipGraphExec_t exec,
							   hipGraphNode_t node, hipEvent_t event)
{
	CPUHIP_BOUNDARY("hipGraphExecEventWaitNodeSetEvent", NULL);
	hipError_t e = hipErrorInvalidValue;

	if (!exec || !node || !event)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	struct hipGraphNode *c = exec_clone_locked(exec, node);
	if (n && n->type == HX_GRAPH_NODE_WAIT_EVENT && c && c->type == n->type) {
		c->event = event;
		e = hipSuccess;
	}
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

static hipError_t es_get(hipGraphNode_t node, struct hx_ext_sem_node_params *out, int type)
{
	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	hipError_t e = hipSuccess;
	if (!n || !out || n->type != type)
		e = hipErrorInvalidValue;
	else
		*out = n->es; /* pointers to the node's own copy */
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

static hipError_t es_set(hipGraphExec_t exec, hipGraphNode_t node,
			 const struct hx_ext_sem_node_params *p, int type)
{
	struct hx_ext_sem_node_params copy = { 0 };
	hipError_t e;

	if (!p || (exec == NULL && node == NULL))
		return cpuhip_set_last_error(hipErrorInvalidValue);
	e = copy_es(&copy, p, type == HX_GRAPH_NODE_EXT_SEM_WAIT);
	if (e)
		return cpuhip_set_last_error(e);
	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	if (n && exec)
		n = exec_clone_locked(exec, node);
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

CPUHIP_EXPORT hipError_t hipGraphExternalSemaphoresSignalNodeGetParams(
	hipGraphNode_t hNode, struct hx_ext_sem_node_params *params_out)
{
	CPUHIP_BOUNDARY("hipGraphExternalSemaphoresSignalNodeGetParams", NULL);
	cpuhip_extsem_node_call("hipGraphExternalSemaphoresSignalNodeGetParams");
	return es_get(hNode, params_out, HX_GRAPH_NODE_EXT_SEM_SIGNAL);
}

CPUHIP_EXPORT hipError_t hipGraphExternalSemaphoresSignalNodeSetParams(
	hipGraphNode_t hNode, const struct hx_ext_sem_node_params *nodeParams)
{
	CPUHIP_BOUNDARY("hipGraphExternalSemaphoresSignalNodeSetParams", NULL);
	cpuhip_extsem_node_call("hipGraphExternalSemaphoresSignalNodeSetParams");
	return es_set(NULL, hNode, nodeParams, HX_GRAPH_NODE_EXT_SEM_SIGNAL);
}

CPUHIP_EXPORT hipError_t hipGraphExternalSemaphoresWaitNodeGetParams(
	hipGraphNode_t hNode, struct hx_ext_sem_node_params *params_out)
{
	CPUHIP_BOUNDARY("hipGraphExternalSemaphoresWaitNodeGetParams", NULL);
	cpuhip_extsem_node_call("hipGraphExternalSemaphoresWaitNodeGetParams");
	return es_get(hNode, params_out, HX_GRAPH_NODE_EXT_SEM_WAIT);
}

CPUHIP_EXPORT hipError_t hipGraphExternalSemaphoresWaitNodeSetParams(
	hipGraphNode_t hNode, const struct hx_ext_sem_node_params *nodeParams)
{
	CPUHIP_BOUNDARY("hipGraphExternalSemaphoresWaitNodeSetParams", NULL);
	cpuhip_extsem_node_call("hipGraphExternalSemaphoresWaitNodeSetParams");
	return es_set(NULL, hNode, nodeParams, HX_GRAPH_NODE_EXT_SEM_WAIT);
}

CPUHIP_EXPORT hipError_t hipGraphExecExternalSemaphoresSignalNodeSetParams(
	hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
	const struct hx_ext_sem_node_params *nodeParams)
{
	CPUHIP_BOUNDARY("hipGraphExecExternalSemaphoresSignalNodeSetParams", NULL);
	cpuhip_extsem_node_call("hipGraphExecExternalSemaphoresSignalNodeSetParams");
	if (!hGraphExec)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	return es_set(hGraphExec, hNode, nodeParams, HX_GRAPH_NODE_EXT_SEM_SIGNAL);
}

CPUHIP_EXPORT hipError_t hipGraphExecExternalSemaphoresWaitNodeSetParams(
	hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
	const struct hx_ext_sem_node_params *nodeParams)
{
	CPUHIP_BOUNDARY("hipGraphExecExternalSemaphoresWaitNodeSetParams", NULL);
	cpuhip_extsem_node_call("hipGraphExecExternalSemaphoresWaitNodeSetParams");
	if (!hGraphExec)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	return es_set(hGraphExec, hNode, nodeParams, HX_GRAPH_NODE_EXT_SEM_WAIT);
}

CPUHIP_EXPORT hipError_t hipGraphHostNodeGetParams(hipGraphNode_t node,
						   struct hx_host_node_params *p)
{
	CPUHIP_BOUNDARY("hipGraphHostNodeGetParams", NULL);
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
	CPUHIP_BOUNDARY("hipGraphHostNodeSetParams", NULL);
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
	CPUHIP_BOUNDARY("hipGraphExecHostNodeSetParams", NULL);
	hipError_t e = hipErrorInvalidValue;

	if (!exec || !p || !p->fn)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	pthread_mutex_lock(&glock);
	struct hipGraphNode *c = node_ok_locked(node) ? exec_clone_locked(exec, node) : NULL;
	if (c && c->type == HX_GRAPH_NODE_HOST) {
		c->host = *p;
		e = hipSuccess;
	}
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

/* ---- instantiate ------------------------------------------------------- */

static hipError_t instantiate(hipGraphExec_t *out, hipGraph_t graph, unsigned long long flags)
{
	struct hipGraphNode **from = NULL, **to = NULL;
	struct hipGraphExec *x;
	struct hipGraphNode **order;

	pthread_mutex_lock(&glock);
	struct ihipGraph *g = graph_ok_locked(graph);
	if (!g) {
		pthread_mutex_unlock(&glock);
		return hipErrorInvalidValue;
	}
	/* clr: a graph whose topological order fails -> hipErrorInvalidValue */
	order = graph_topo_locked(g);
	if (!order) {
		pthread_mutex_unlock(&glock);
		return hipErrorInvalidValue;
	}
	free(order);
	x = calloc(1, sizeof(*x));
	if (x)
		x->g = graph_clone_locked(g, false, &from, &to);
	if (!x || !x->g) {
		pthread_mutex_unlock(&glock);
		free(x);
		return hipErrorOutOfMemory;
	}
	for (size_t i = 0; i < g->n; i++)
		to[i]->orig = from[i];
	free(from);
	free(to);
	x->flags = flags;
	x->next_live = execs;
	execs = x;
	pthread_mutex_unlock(&glock);
	*out = x;
	return hipSuccess;
}

CPUHIP_EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
					     hipGraphNode_t *pErrorNode, char *pLogBuffer,
					     size_t bufferSize)
{
	CPUHIP_BOUNDARY("hipGraphInstantiate", NULL);
	(void)pErrorNode, (void)pLogBuffer, (void)bufferSize;
	if (!pGraphExec || !graph)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	return cpuhip_set_last_error(instantiate(pGraphExec, graph, 0));
}

/* hipGraphInstantiateFlag*: AutoFreeOnLaunch 1, Upload 2, DeviceLaunch 4,
 * UseNodePriority 8 (nothing to do for any of them here). */
CPUHIP_EXPORT hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *pGraphExec,
						      hipGraph_t graph, unsigned long long flags)
{
	CPUHIP_BOUNDARY("hipGraphInstantiateWithFlags", NULL);
	if (!pGraphExec || !graph || (flags != 0 && flags != 1 && flags != 8))
		return cpuhip_set_last_error(hipErrorInvalidValue);
	return cpuhip_set_last_error(instantiate(pGraphExec, graph, flags));
}

/* hipGraphInstantiateParams (hip_runtime_api.h, 6.x). */
struct instantiate_params {
	hipGraphNode_t errNode_out;
	unsigned long long flags;
	int result_out; /* hipGraphInstantiateSuccess 0, Error 1 */
	hipStream_t uploadStream;
};
_Static_assert(sizeof(struct instantiate_params) == 32, "hipGraphInstantiateParams is 32 bytes");

static hipError_t upload_check(hipGraphExec_t exec, hipStream_t stream)
{
	bool ok;

	/* clr ihipGraphUpload: NULL exec -> hipErrorInvalidValue, a dead
	 * stream -> hipErrorContextIsDestroyed, an exec clr does not know ->
	 * hipErrorInvalidValue; nothing to upload otherwise. */
	if (!exec)
		return hipErrorInvalidValue;
	if (!cpuhip_stream_valid(stream))
		return (hipError_t)709;
	pthread_mutex_lock(&glock);
	ok = exec_ok_locked(exec) != NULL;
	pthread_mutex_unlock(&glock);
	return ok ? hipSuccess : hipErrorInvalidValue;
}

/* clr hipGraphInstantiateWithParams: NULL arguments -> InvalidValue; flags
 * other than 0, 1, 2, 4, 8 -> result_out Error, InvalidValue; a failed
 * instantiation -> result_out Error; else result_out Success, errNode_out
 * NULL, and with the Upload flag alone the answer is hipGraphUpload's. */
CPUHIP_EXPORT hipError_t hipGraphInstantiateWithParams(hipGraphExec_t *pGraphExec,
						       hipGraph_t graph, void *instantiateParams)
{
	CPUHIP_BOUNDARY("hipGraphInstantiateWithParams", NULL);
	struct instantiate_params *p = instantiateParams;
	hipError_t e;

	if (!pGraphExec || !graph || !p)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	if (p->flags != 0 && p->flags != 1 && p->flags != 2 && p->flags != 4 && p->flags != 8) {
		p->result_out = 1;
		return cpuhip_set_last_error(hipErrorInvalidValue);
	}
	e = instantiate(pGraphExec, graph, p->flags);
	if (e) {
		p->result_out = 1;
		return cpuhip_set_last_error(e);
	}
	p->result_out = 0;
	p->errNode_out = NULL;
	if (p->flags == 2)
		return cpuhip_set_last_error(upload_check(*pGraphExec, p->uploadStream));
	return cpuhip_set_last_error(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipGraphUpload(hipGraphExec_t graphExec, hipStream_t stream)
{
	CPUHIP_BOUNDARY("hipGraphUpload", stream);
	return cpuhip_set_last_error(upload_check(graphExec, stream));
}

/* ---- launch ------------------------------------------------------------ */

struct run_item {
	int type;
	struct hx_host_node_params host;
	hipEvent_t event;
};

struct run_list {
	struct run_item *v;
	size_t n, cap;
};

static int flatten_locked(const struct ihipGraph *g, struct run_list *l)
{
	for (const struct hipGraphNode *n = g->head; n; n = n->next) {
		if (n->type == HX_GRAPH_NODE_GRAPH) {
			if (flatten_locked(n->child, l))
				return -1;
			continue;
		}
		if (n->type != HX_GRAPH_NODE_HOST && n->type != HX_GRAPH_NODE_WAIT_EVENT &&
		    n->type != HX_GRAPH_NODE_EVENT_RECORD)
			continue;
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 8;
			void *p = realloc(l->v, cap * sizeof(*l->v));
			if (!p)
				return -1;
			l->v = p;
			l->cap = cap;
		}
		l->v[l->n++] = (struct run_item){ n->type, n->host, n->event };
	}
	return 0;
}

/* Test-only fault mode: CPUHIP_FAULT_GRAPH_LAUNCH=N makes the process's
 * Nth hipGraphLaunch fail with hipErrorOutOfMemory, after every check and
 * before anything is enqueued (a runtime refusing a launch its caller had
 * no way to foresee). */
static bool launch_fault(void)
{
	static unsigned launches;
	const char *e = getenv("CPUHIP_FAULT_GRAPH_LAUNCH");
	unsigned n = __atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);

	return e && *e && strtoul(e, NULL, 10) == n;
}

CPUHIP_EXPORT hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t stream)
{
	CPUHIP_BOUNDARY("hipGraphLaunch", stream);
	struct run_list l = { 0 };
	hipError_t e = hipSuccess;
	bool ok;

	/* clr hipGraphLaunch_common: an unknown exec -> hipErrorInvalidValue,
	 * then a dead stream -> 709. */
	pthread_mutex_lock(&glock);
	ok = exec_ok_locked(exec) != NULL;
	pthread_mutex_unlock(&glock);
	if (!ok)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	if (!cpuhip_stream_valid(stream))
		return cpuhip_set_last_error((hipError_t)709);
	if (cpuhip_capture_active(stream))
		return cpuhip_set_last_error(hipErrorStreamCaptureUnsupported);
	if (launch_fault()) {
		fprintf(stderr, "cpuhip: hipGraphLaunch fails (CPUHIP_FAULT_GRAPH_LAUNCH)\n");
		return cpuhip_set_last_error(hipErrorOutOfMemory);
	}
	pthread_mutex_lock(&glock);
	struct hipGraphExec *x = exec_ok_locked(exec);
	if (!x || flatten_locked(x->g, &l))
		e = x ? hipErrorOutOfMemory : hipErrorInvalidValue;
	pthread_mutex_unlock(&glock);
	for (size_t i = 0; i < l.n && !e; i++) {
		if (l.v[i].type == HX_GRAPH_NODE_HOST)
			e = cpuhip_enqueue_host_fn(stream, l.v[i].host.fn, l.v[i].host.userData);
		else if (l.v[i].type == HX_GRAPH_NODE_WAIT_EVENT)
			e = hipStreamWaitEvent(stream, l.v[i].event, 0);
		else
			e = hipEventRecord(l.v[i].event, stream);
	}
	free(l.v);
	return cpuhip_set_last_error(e);
}

#if CPUHIP_ABI == 6
/* clr hipGraphLaunch_spt (hip_graph.cpp, rocm-5.3 to the development tree):
 * the null stream is the calling thread's per-thread stream
 * (PER_THREAD_DEFAULT_STREAM), then the same hipGraphLaunch_common. */
CPUHIP_EXPORT hipError_t hipGraphLaunch_spt(hipGraphExec_t exec, hipStream_t stream)
{
	return hipGraphLaunch(exec, stream ? stream : hipStreamPerThread);
}
#endif

CPUHIP_EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t exec)
{
	CPUHIP_BOUNDARY("hipGraphExecDestroy", NULL);
	pthread_mutex_lock(&glock);
	struct hipGraphExec *x = exec_ok_locked(exec);
	if (x) {
		for (struct hipGraphExec **pp = &execs; *pp; pp = &(*pp)->next_live)
			if (*pp == x) {
				*pp = x->next_live;
				break;
			}
		graph_free_locked(x->g);
		free(x);
	}
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(x ? hipSuccess : hipErrorInvalidValue);
}

/* ---- update ------------------------------------------------------------ */

/*
 * GraphNode::SetParams(GraphNode *) of rocm-6.2.2: host nodes take fn and
 * userData, event nodes the event, child-graph nodes pair their graphs'
 * nodes in insertion order and recurse (ChildGraphNode::SetParams);
 * empty and external-semaphore nodes keep the base class's, which changes
 * nothing and succeeds (hipGraphExternalSemSignalNode / WaitNode do not
 * override it in 6.2.2).  Where clr casts to the wrong type (child graphs
 * that differ in size or node types: undefined there) cpuhip answers
 * hipErrorInvalidValue.
 */
static hipError_t set_params_from_locked(struct hipGraphNode *old, const struct hipGraphNode *nw)
{
	const struct hipGraphNode *a;
	struct hipGraphNode *b;
	hipError_t e;

	switch (old->type) {
	case HX_GRAPH_NODE_HOST:
		old->host = nw->host;
		return hipSuccess;
	case HX_GRAPH_NODE_WAIT_EVENT:
	case HX_GRAPH_NODE_EVENT_RECORD:
		old->event = nw->event;
		return hipSuccess;
	case HX_GRAPH_NODE_GRAPH:
		if (old->child->n != nw->child->n)
			return hipErrorInvalidValue;
		for (a = nw->child->head, b = old->child->head; a; a = a->next, b = b->next) {
			if (a->type != b->type)
				return hipErrorInvalidValue;
			e = set_params_from_locked(b, a);
			if (e)
				return e;
		}
		return hipSuccess;
	default:
		return hipSuccess;
	}
}

/*
 * clr hipGraphExecUpdate (rocm-6.2.2): NULL arguments -> InvalidValue;
 * both graphs in topological order; different node counts ->
 * TopologyChanged, error node NULL; then pairwise: another node type ->
 * NodeTypeChanged, another dependency count -> TopologyChanged (the new
 * graph's node as error node), then SetParams (a failure with
 * hipErrorInvalidValue -> ParametersChanged, others NotSupported).  Each
 * failure answers hipErrorGraphExecUpdateFailure; nodes before the failing
 * one keep their new parameters (clr does not roll back).  Success sets
 * the result only.
 */
CPUHIP_EXPORT hipError_t hipGraphExecUpdate(hipGraphExec_t hGraphExec, hipGraph_t hGraph,
					    hipGraphNode_t *hErrorNode_out, int *updateResult_out)
{
	CPUHIP_BOUNDARY("hipGraphExecUpdate", NULL);
	struct hipGraphNode **nw = NULL, **old = NULL;
	hipError_t e = hipSuccess;
	int result = HX_GRAPH_EXEC_UPDATE_SUCCESS;
	hipGraphNode_t err_node = NULL;

	if (!hGraphExec || !hGraph || !hErrorNode_out || !updateResult_out)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	pthread_mutex_lock(&glock);
	struct hipGraphExec *x = exec_ok_locked(hGraphExec);
	struct ihipGraph *g = graph_ok_locked(hGraph);
	if (!x || !g) {
		pthread_mutex_unlock(&glock);
		return cpuhip_set_last_error(hipErrorInvalidValue);
	}
	nw = graph_topo_locked(g);
	old = graph_topo_locked(x->g);
	if (!nw || !old) {
		e = hipErrorInvalidValue;
		goto out;
	}
	if (g->n != x->g->n) {
		result = HX_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
		goto fail;
	}
	for (size_t i = 0; i < g->n; i++) {
		err_node = nw[i];
		if (nw[i]->type != old[i]->type) {
			result = HX_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
			goto fail;
		}
		if (nw[i]->deps.n != old[i]->deps.n) {
			result = HX_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
			goto fail;
		}
		hipError_t s = set_params_from_locked(old[i], nw[i]);
		if (s) {
			result = s == hipErrorInvalidValue ?
					 HX_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED :
					 HX_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED;
			goto fail;
		}
	}
	*updateResult_out = HX_GRAPH_EXEC_UPDATE_SUCCESS;
	goto out;
fail:
	*updateResult_out = result;
	*hErrorNode_out = result == HX_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED &&
					  g->n != x->g->n ? NULL : err_node;
	fprintf(stderr, "cpuhip: hipGraphExecUpdate: result %d\n", result);
	e = hipErrorGraphExecUpdateFailure;
out:
	free(nw);
	free(old);
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}
