/* SPDX-License-Identifier: MIT */
/*
 * cpuhip: graphs and nodes (both flavours; 5.2 numbers node types from 1,
 * see hipGraphNodeGetType), with ROCm clr's semantics
 * (rocm-6.2.2 hipamd/src/hip_graph.cpp, hip_graph_internal.hpp/.cpp):
 *
 * - nodes: host, empty, event wait/record, external-semaphore signal/wait,
 *   child graph; each keeps its dependency list and its dependents (a DAG,
 *   clr GraphNode::dependencies_ / edges_);
 * - adding a node (ihipGraphAddNode): the node joins the graph first and
 *   the dependencies are checked after, so a refused node stays in the
 *   graph with the edges made before the bad entry, and *pGraphNode is set
 *   (clr sets it whatever the status);
 * - hipGraphGetNodes lists the top-level nodes in clr's topological order
 *   (Graph::TopologicalOrder: Kahn's algorithm, FIFO from the roots);
 * - hipGraphClone and child-graph nodes copy graphs deeply (Graph::clone,
 *   ChildGraphNode's constructor clones the graph it is given);
 * - external-semaphore nodes do nothing when the graph runs: the stock
 *   Linux backend has no external semaphores.
 * Where clr casts a handle unchecked, cpuhip answers hipErrorInvalidValue.
 * Instantiate/launch/update: cpuhip_graph_exec.c; capture: cpuhip_capture.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuhip_graph_internal.h"
#include "cpuhip_test.h"

pthread_mutex_t glock = PTHREAD_MUTEX_INITIALIZER;
struct ihipGraph *graphs;
struct hipGraphExec *execs;
static unsigned int next_node_id;

void cpuhip_graph_fork_lock(void)
{
	pthread_mutex_lock(&glock);
}

void cpuhip_graph_fork_unlock(void)
{
	pthread_mutex_unlock(&glock);
}

struct ihipGraph *graph_ok_locked(hipGraph_t g)
{
	for (struct ihipGraph *p = graphs; p; p = p->next_live)
		if (p == g)
			return p;
	return NULL;
}

struct hipGraphNode *node_ok_locked(hipGraphNode_t n)
{
	for (struct ihipGraph *p = graphs; p; p = p->next_live)
		for (struct hipGraphNode *q = p->head; q; q = q->next)
			if (q == n)
				return q;
	return NULL;
}

struct hipGraphExec *exec_ok_locked(hipGraphExec_t e)
{
	for (struct hipGraphExec *p = execs; p; p = p->next_live)
		if (p == e)
			return p;
	return NULL;
}

int nodevec_push(struct nodevec *v, struct hipGraphNode *n)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 4;
		void *p = realloc(v->v, cap * sizeof(*v->v));
		if (!p)
			return -1;
		v->v = p;
		v->cap = cap;
	}
	v->v[v->n++] = n;
	return 0;
}

bool nodevec_has(const struct nodevec *v, const struct hipGraphNode *n)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i] == n)
			return true;
	return false;
}

void nodevec_remove(struct nodevec *v, const struct hipGraphNode *n)
{
	size_t j = 0;

	for (size_t i = 0; i < v->n; i++)
		if (v->v[i] != n)
			v->v[j++] = v->v[i];
	v->n = j;
}

void free_es(struct hx_ext_sem_node_params *es)
{
	free(es->extSemArray);
	free((void *)es->paramsArray);
	memset(es, 0, sizeof(*es));
}

hipError_t copy_es(struct hx_ext_sem_node_params *dst, const struct hx_ext_sem_node_params *src,
		   bool wait)
{
	size_t stride = wait ? sizeof(sem_wait_t) : sizeof(sem_signal_t);
	unsigned n = src->numExtSems;

	if (n && (!src->extSemArray || !src->paramsArray))
		return hipErrorInvalidValue;
	for (unsigned i = 0; i < n; i++)
		if (!src->extSemArray[i])
			return hipErrorInvalidValue;
	cpuhip_foreign_sems(wait ? "an external-semaphore wait node" : "an external-semaphore signal node",
			    src->extSemArray, n);
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

struct ihipGraph *graph_new_locked(bool live)
{
	struct ihipGraph *g = calloc(1, sizeof(*g));

	if (g && live) {
		g->live = true;
		g->next_live = graphs;
		graphs = g;
	}
	return g;
}

/* Frees one node: its edges go from its neighbours (clr ~GraphNode). */
void node_unlink_free_locked(struct hipGraphNode *n)
{
	for (size_t i = 0; i < n->edges.n; i++)
		nodevec_remove(&n->edges.v[i]->deps, n);
	for (size_t i = 0; i < n->deps.n; i++)
		nodevec_remove(&n->deps.v[i]->edges, n);
	if (n->graph) {
		struct hipGraphNode **pp = &n->graph->head, *prev = NULL;
		for (; *pp; prev = *pp, pp = &(*pp)->next)
			if (*pp == n) {
				*pp = n->next;
				if (n->graph->tail == n)
					n->graph->tail = prev;
				n->graph->n--;
				break;
			}
	}
	if (n->child)
		graph_free_locked(n->child);
	free_es(&n->es);
	free(n->deps.v);
	free(n->edges.v);
	free(n);
}

void graph_free_locked(struct ihipGraph *g)
{
	if (g->live) {
		for (struct ihipGraph **pp = &graphs; *pp; pp = &(*pp)->next_live)
			if (*pp == g) {
				*pp = g->next_live;
				break;
			}
		/* Execs name graph nodes only for the Exec*SetParams lookups
		 * (clr GetClonedNode): forget this graph's. */
		for (struct hipGraphExec *x = execs; x; x = x->next_live)
			for (struct hipGraphNode *c = x->g->head; c; c = c->next)
				if (c->orig && c->orig->graph == g)
					c->orig = NULL;
		capture_graph_gone_locked(g);
	}
	for (struct hipGraphNode *n = g->head, *nx; n; n = nx) {
		nx = n->next;
		if (n->child)
			graph_free_locked(n->child);
		free_es(&n->es);
		free(n->deps.v);
		free(n->edges.v);
		free(n);
	}
	free(g);
}

static struct hipGraphNode *node_dup(const struct hipGraphNode *s, bool live)
{
	struct hipGraphNode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->type = s->type;
	n->id = s->id;
	n->host = s->host;
	n->event = s->event;
	if ((s->type == HX_GRAPH_NODE_EXT_SEM_SIGNAL || s->type == HX_GRAPH_NODE_EXT_SEM_WAIT) &&
	    copy_es(&n->es, &s->es, s->type == HX_GRAPH_NODE_EXT_SEM_WAIT)) {
		free(n);
		return NULL;
	}
	if (s->child) {
		n->child = graph_clone_locked(s->child, live, NULL, NULL);
		if (!n->child) {
			free_es(&n->es);
			free(n);
			return NULL;
		}
		n->child->embedded = true;
	}
	return n;
}

static size_t index_of(const struct ihipGraph *g, const struct hipGraphNode *n)
{
	size_t i = 0;

	for (const struct hipGraphNode *p = g->head; p; p = p->next, i++)
		if (p == n)
			return i;
	return (size_t)-1;
}

/* clr Graph::clone: same nodes (ids kept), same edges, child graphs
 * cloned in turn.  map_from/map_to, when given, receive the top-level
 * node pairs (malloc'd, g->n entries each). */
struct ihipGraph *graph_clone_locked(const struct ihipGraph *src, bool live,
				     struct hipGraphNode ***map_from, struct hipGraphNode ***map_to)
{
	struct ihipGraph *g = graph_new_locked(live);
	struct hipGraphNode **from = calloc(src->n ? src->n : 1, sizeof(*from));
	struct hipGraphNode **to = calloc(src->n ? src->n : 1, sizeof(*to));
	size_t i = 0;

	if (!g || !from || !to)
		goto fail;
	g->cloned = true;
	for (const struct hipGraphNode *s = src->head; s; s = s->next, i++) {
		struct hipGraphNode *n = node_dup(s, live);
		if (!n)
			goto fail;
		n->graph = g;
		if (g->tail)
			g->tail->next = n;
		else
			g->head = n;
		g->tail = n;
		g->n++;
		from[i] = (struct hipGraphNode *)s;
		to[i] = n;
	}
	i = 0;
	for (const struct hipGraphNode *s = src->head; s; s = s->next, i++) {
		for (size_t k = 0; k < s->deps.n; k++)
			if (nodevec_push(&to[i]->deps, to[index_of(src, s->deps.v[k])]))
				goto fail;
		for (size_t k = 0; k < s->edges.n; k++)
			if (nodevec_push(&to[i]->edges, to[index_of(src, s->edges.v[k])]))
				goto fail;
	}
	if (map_from) {
		*map_from = from;
		*map_to = to;
	} else {
		free(from);
		free(to);
	}
	return g;
fail:
	if (g)
		graph_free_locked(g);
	free(from);
	free(to);
	return NULL;
}

struct hipGraphNode **graph_topo_locked(const struct ihipGraph *g)
{
	struct hipGraphNode **order = calloc(g->n ? g->n : 1, sizeof(*order));
	size_t *indeg = calloc(g->n ? g->n : 1, sizeof(*indeg));
	size_t head = 0, tail = 0, i = 0;

	if (!order || !indeg) {
		free(order);
		free(indeg);
		return NULL;
	}
	for (struct hipGraphNode *n = g->head; n; n = n->next, i++) {
		indeg[i] = n->deps.n;
		if (!indeg[i])
			order[tail++] = n;
	}
	while (head < tail) {
		struct hipGraphNode *n = order[head++];
		for (size_t k = 0; k < n->edges.n; k++) {
			size_t j = index_of(g, n->edges.v[k]);
			if (j != (size_t)-1 && --indeg[j] == 0)
				order[tail++] = n->edges.v[k];
		}
	}
	free(indeg);
	if (tail != g->n) { /* a cycle: clr's TopologicalOrder fails too */
		free(order);
		return NULL;
	}
	return order;
}

/*
 * clr ihipGraphAddNode: the node joins the graph, then each dependency is
 * checked in turn (a node clr does not know, one of another graph, or one
 * given twice -> hipErrorInvalidValue), making the edges as it goes; with
 * manual_ok (the hipGraphAdd*Node calls that pass capture = false) a node
 * added to a graph some stream captures into is marked manual.  *out is
 * set whatever the answer, as clr's callers do.  proto is consumed.
 */
hipError_t add_node_locked(hipGraphNode_t *out, struct ihipGraph *g, const hipGraphNode_t *deps,
			   size_t ndeps, bool manual_ok, struct hipGraphNode *proto)
{
	struct hipGraphNode *n = proto;

	n->graph = g;
	n->id = next_node_id++;
	if (g->tail)
		g->tail->next = n;
	else
		g->head = n;
	g->tail = n;
	g->n++;
	*out = n;
	for (size_t i = 0; i < ndeps; i++) {
		struct hipGraphNode *d = node_ok_locked(deps[i]);
		if (!d || d->graph != g) {
			fprintf(stderr, "cpuhip: graph node dependency %zu (%p) is not a node of "
				"graph %p\n", i, (void *)deps[i], (void *)g);
			return hipErrorInvalidValue;
		}
		if (nodevec_has(&n->deps, d)) {
			fprintf(stderr, "cpuhip: graph node dependency %p given twice\n",
				(void *)d);
			return hipErrorInvalidValue;
		}
		if (nodevec_push(&d->edges, n))
			return hipErrorOutOfMemory;
		if (nodevec_push(&n->deps, d)) {
			nodevec_remove(&d->edges, n);
			return hipErrorOutOfMemory;
		}
	}
	if (manual_ok && capture_graph_in_use_locked(g))
		n->manual = true;
	return hipSuccess;
}

/* The argument checks every clr hipGraphAdd*Node makes first. */
static hipError_t add_checks(hipGraphNode_t *out, hipGraph_t graph, const hipGraphNode_t *deps,
			     size_t ndeps)
{
	if (!out || !graph || (ndeps && !deps))
		return hipErrorInvalidValue;
	return hipSuccess;
}

static hipError_t add_node(hipGraphNode_t *out, hipGraph_t graph, const hipGraphNode_t *deps,
			   size_t ndeps, bool manual_ok, int type,
			   const struct hx_host_node_params *host,
			   const struct hx_ext_sem_node_params *es, hipEvent_t event, hipGraph_t child)
{
	struct hipGraphNode *n;
	hipError_t e = add_checks(out, graph, deps, ndeps);

	if (e)
		return cpuhip_set_last_error(e);
	pthread_mutex_lock(&glock);
	struct ihipGraph *g = graph_ok_locked(graph);
	struct ihipGraph *cg = child ? graph_ok_locked(child) : NULL;
	if (!g || (child && !cg)) {
		/* clr uses the handle unchecked */
		pthread_mutex_unlock(&glock);
		fprintf(stderr, "cpuhip: %s %p is not a live graph\n", g ? "child graph" : "graph",
			g ? (void *)child : (void *)graph);
		return cpuhip_set_last_error(hipErrorInvalidValue);
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		pthread_mutex_unlock(&glock);
		return cpuhip_set_last_error(hipErrorOutOfMemory);
	}
	n->type = type;
	n->event = event;
	if (host)
		n->host = *host;
	if (es) {
		e = copy_es(&n->es, es, type == HX_GRAPH_NODE_EXT_SEM_WAIT);
		if (e) {
			free(n);
			pthread_mutex_unlock(&glock);
			return cpuhip_set_last_error(e);
		}
	}
	if (cg) {
		n->child = graph_clone_locked(cg, true, NULL, NULL);
		if (!n->child) {
			free_es(&n->es);
			free(n);
			pthread_mutex_unlock(&glock);
			return cpuhip_set_last_error(hipErrorOutOfMemory);
		}
		n->child->embedded = true;
	}
	e = add_node_locked(out, g, deps, ndeps, manual_ok, n);
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

CPUHIP_EXPORT hipError_t hipGraphCreate(hipGraph_t *pGraph, unsigned int flags)
{
	CPUHIP_BOUNDARY("hipGraphCreate", NULL);
	struct ihipGraph *g;

	if (!pGraph || flags != 0)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	pthread_mutex_lock(&glock);
	g = graph_new_locked(true);
	pthread_mutex_unlock(&glock);
	if (!g)
		return cpuhip_set_last_error(hipErrorOutOfMemory);
	*pGraph = g;
	return cpuhip_set_last_error(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipGraphDestroy(hipGraph_t graph)
{
	CPUHIP_BOUNDARY("hipGraphDestroy", NULL);
	/* clr: NULL -> hipErrorInvalidValue; a graph it no longer knows
	 * (isGraphValid) -> hipErrorIllegalState.  The graph a child node
	 * embeds is the node's: clr would free it under the node (undefined);
	 * cpuhip refuses with hipErrorInvalidValue. */
	if (!graph)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	pthread_mutex_lock(&glock);
	struct ihipGraph *g = graph_ok_locked(graph);
	hipError_t e = !g ? hipErrorIllegalState : g->embedded ? hipErrorInvalidValue : hipSuccess;
	if (!e)
		graph_free_locked(g);
	pthread_mutex_unlock(&glock);
	if (e == hipErrorInvalidValue)
		fprintf(stderr, "cpuhip: hipGraphDestroy: graph %p belongs to a child-graph node\n",
			(void *)graph);
	return cpuhip_set_last_error(e);
}

CPUHIP_EXPORT hipError_t hipGraphAddHostNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
					     const hipGraphNode_t *pDependencies,
					     size_t numDependencies,
					     const struct hx_host_node_params *pNodeParams)
{
	CPUHIP_BOUNDARY("hipGraphAddHostNode", NULL);
	if (!pNodeParams || !pNodeParams->fn)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	return add_node(pGraphNode, graph, pDependencies, numDependencies, true,
			HX_GRAPH_NODE_HOST, pNodeParams, NULL, NULL, NULL);
}

CPUHIP_EXPORT hipError_t hipGraphAddEmptyNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
					      const hipGraphNode_t *pDependencies,
					      size_t numDependencies)
{
	CPUHIP_BOUNDARY("hipGraphAddEmptyNode", NULL);
	return add_node(pGraphNode, graph, pDependencies, numDependencies, true,
			HX_GRAPH_NODE_EMPTY, NULL, NULL, NULL, NULL);
}

/* clr hipGraphAddChildGraphNode: the node gets a clone of childGraph
 * (ChildGraphNode's constructor), so later changes to childGraph do not
 * reach it. */
CPUHIP_EXPORT hipError_t hipGraphAddChildGraphNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
						   const hipGraphNode_t *pDependencies,
						   size_t numDependencies, hipGraph_t childGraph)
{
	CPUHIP_BOUNDARY("hipGraphAddChildGraphNode", NULL);
	if (!childGraph)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	return add_node(pGraphNode, graph, pDependencies, numDependencies, true,
			HX_GRAPH_NODE_GRAPH, NULL, NULL, NULL, childGraph);
}

/* The external-semaphore adds pass capture = true in clr: never manual. */
CPUHIP_EXPORT hipError_t hipGraphAddExternalSemaphoresSignalNode(
	hipGraphNode_t *pGraphNode, hipGraph_t graph, const hipGraphNode_t *pDependencies,
	size_t numDependencies, const struct hx_ext_sem_node_params *nodeParams)
{
	CPUHIP_BOUNDARY("hipGraphAddExternalSemaphoresSignalNode", NULL);
	cpuhip_extsem_node_call("hipGraphAddExternalSemaphoresSignalNode");
	if (!nodeParams)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	return add_node(pGraphNode, graph, pDependencies, numDependencies, false,
			HX_GRAPH_NODE_EXT_SEM_SIGNAL, NULL, nodeParams, NULL, NULL);
}

CPUHIP_EXPORT hipError_t hipGraphAddExternalSemaphoresWaitNode(
	hipGraphNode_t *pGraphNode, hipGraph_t graph, const hipGraphNode_t *pDependencies,
	size_t numDependencies, const struct hx_ext_sem_node_params *nodeParams)
{
	CPUHIP_BOUNDARY("hipGraphAddExternalSemaphoresWaitNode", NULL);
	cpuhip_extsem_node_call("hipGraphAddExternalSemaphoresWaitNode");
	if (!nodeParams)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	return add_node(pGraphNode, graph, pDependencies, numDependencies, false,
			HX_GRAPH_NODE_EXT_SEM_WAIT, NULL, nodeParams, NULL, NULL);
}

CPUHIP_EXPORT hipError_t hipGraphAddEventWaitNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
						  const hipGraphNode_t *pDependencies,
						  size_t numDependencies, hipEvent_t event)
{
	CPUHIP_BOUNDARY("hipGraphAddEventWaitNode", NULL);
	if (!event)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	/* clr hip_graph.cpp hipGraphAddEventWaitNode: HIP_INIT_API (a thread state
	 * that cannot be made: hipErrorOutOfMemory) before any node. */
	if (cpuhip_take_fail_mine(CPUHIP_FAIL_GRAPH_EVENT_NODE))
		return cpuhip_set_last_error(hipErrorOutOfMemory);
	return add_node(pGraphNode, graph, pDependencies, numDependencies, true,
			HX_GRAPH_NODE_WAIT_EVENT, NULL, NULL, event, NULL);
}

CPUHIP_EXPORT hipError_t hipGraphAddEventRecordNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
						    const hipGraphNode_t *pDependencies,
						    size_t numDependencies, hipEvent_t event)
{
	CPUHIP_BOUNDARY("hipGraphAddEventRecordNode", NULL);
	if (!event)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	/* clr hip_graph.cpp hipGraphAddEventRecordNode: HIP_INIT_API (a thread state
	 * that cannot be made: hipErrorOutOfMemory) before any node. */
	if (cpuhip_take_fail_mine(CPUHIP_FAIL_GRAPH_EVENT_NODE))
		return cpuhip_set_last_error(hipErrorOutOfMemory);
	return add_node(pGraphNode, graph, pDependencies, numDependencies, true,
			HX_GRAPH_NODE_EVENT_RECORD, NULL, NULL, event, NULL);
}

/* clr hipGraphAddNode: NULL checks, then by type; an unknown type ->
 * hipErrorInvalidValue.  Kernel, memcpy, memset and memory nodes are not
 * modelled (hipErrorNotSupported).  The graph / event members of the
 * union are one pointer at its start. */
CPUHIP_EXPORT hipError_t hipGraphAddNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
					 const hipGraphNode_t *pDependencies,
					 size_t numDependencies, struct hx_graph_node_params *p)
{
	CPUHIP_BOUNDARY("hipGraphAddNode", NULL);
	hipError_t e = add_checks(pGraphNode, graph, pDependencies, numDependencies);
	void *ptr;

	if (e || !p)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	memcpy(&ptr, &p->u, sizeof(ptr));
	switch (p->type) {
	case HX_GRAPH_NODE_HOST:
		return hipGraphAddHostNode(pGraphNode, graph, pDependencies, numDependencies,
					   &p->u.host);
	case HX_GRAPH_NODE_EMPTY:
		return hipGraphAddEmptyNode(pGraphNode, graph, pDependencies, numDependencies);
	case HX_GRAPH_NODE_GRAPH:
		return hipGraphAddChildGraphNode(pGraphNode, graph, pDependencies, numDependencies,
						 ptr);
	case HX_GRAPH_NODE_WAIT_EVENT:
		return hipGraphAddEventWaitNode(pGraphNode, graph, pDependencies, numDependencies,
						ptr);
	case HX_GRAPH_NODE_EVENT_RECORD:
		return hipGraphAddEventRecordNode(pGraphNode, graph, pDependencies,
						  numDependencies, ptr);
	case HX_GRAPH_NODE_EXT_SEM_SIGNAL:
		return hipGraphAddExternalSemaphoresSignalNode(pGraphNode, graph, pDependencies,
							       numDependencies,
							       &p->u.extSemSignal);
	case HX_GRAPH_NODE_EXT_SEM_WAIT:
		return hipGraphAddExternalSemaphoresWaitNode(pGraphNode, graph, pDependencies,
							     numDependencies, &p->u.extSemWait);
	case HX_GRAPH_NODE_KERNEL:
	case HX_GRAPH_NODE_MEMCPY:
	case HX_GRAPH_NODE_MEMSET:
	case 10: /* mem alloc */
	case 11: /* mem free */
		return cpuhip_set_last_error(hipErrorNotSupported);
	default:
		return cpuhip_set_last_error(hipErrorInvalidValue);
	}
}

/* clr hipGraphNodeGetDependencies: a node clr does not know or a NULL
 * count -> hipErrorInvalidValue; NULL array -> the count; a larger array
 * gets NULLs after the dependencies and the count is set. */
CPUHIP_EXPORT hipError_t hipGraphNodeGetDependencies(hipGraphNode_t node, hipGraphNode_t *deps,
						     size_t *pNum)
{
	CPUHIP_BOUNDARY("hipGraphNodeGetDependencies", NULL);
	hipError_t e = hipSuccess;

	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	if (!n || !pNum) {
		e = hipErrorInvalidValue;
	} else if (!deps) {
		*pNum = n->deps.n;
	} else {
		size_t i;
		for (i = 0; i < *pNum && i < n->deps.n; i++)
			deps[i] = n->deps.v[i];
		if (*pNum > n->deps.n) {
			for (; i < *pNum; i++)
				deps[i] = NULL;
			*pNum = n->deps.n;
		}
	}
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

/* Node types are kept in the numbering of 5.3 and later (hip_graph.h).
 * HIP 5.2 and earlier number hipGraphNodeType from 1 (Kernel 1 ... Host 4,
 * Graph 5, Empty 6, WaitEvent 7, EventRecord 8: the 5.2.3 hip_runtime_api.h
 * Debian ships); HIP 64a4f67f5 (5.3) renumbered from 0.  The type a
 * release hands out is the only place the numbering shows. */
static int node_type_out(int type)
{
	return cpuhip_release() < 503 ? type + 1 : type;
}

CPUHIP_EXPORT hipError_t hipGraphNodeGetType(hipGraphNode_t node, int *pType)
{
	CPUHIP_BOUNDARY("hipGraphNodeGetType", NULL);
	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	if (n && pType)
		*pType = node_type_out(n->type);
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(n && pType ? hipSuccess : hipErrorInvalidValue);
}

/* clr hipGraphGetNodes: the graph's own (top-level) nodes in topological
 * order; min(*numNodes, count) entries, NULLs after them in a larger
 * array, then the count. */
CPUHIP_EXPORT hipError_t hipGraphGetNodes(hipGraph_t graph, hipGraphNode_t *nodes,
					  size_t *numNodes)
{
	CPUHIP_BOUNDARY("hipGraphGetNodes", NULL);
	hipError_t e = hipSuccess;

	/* clr hip_graph.cpp hipGraphGetNodes: HIP_INIT_API, as above. */
	if (cpuhip_take_fail_mine(CPUHIP_FAIL_GRAPH_GET_NODES))
		return cpuhip_set_last_error(hipErrorOutOfMemory);

	pthread_mutex_lock(&glock);
	struct ihipGraph *g = graph_ok_locked(graph);
	struct hipGraphNode **order = g && numNodes ? graph_topo_locked(g) : NULL;
	if (!order) {
		e = hipErrorInvalidValue;
	} else if (!nodes) {
		*numNodes = g->n;
	} else {
		size_t i;
		for (i = 0; i < *numNodes && i < g->n; i++)
			nodes[i] = order[i];
		if (*numNodes > g->n) {
			for (; i < *numNodes; i++)
				nodes[i] = NULL;
			*numNodes = g->n;
		}
	}
	free(order);
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

/* clr hipGraphDestroyNode (rocm-6.2.2 hip_graph.cpp): a node clr does not
 * know -> hipErrorInvalidValue; else its edges in both directions go and
 * the graph drops and frees it (a child-graph node with its embedded
 * graph). */
CPUHIP_EXPORT hipError_t hipGraphDestroyNode(hipGraphNode_t node)
{
	CPUHIP_BOUNDARY("hipGraphDestroyNode", NULL);
	hipError_t e = hipSuccess;

	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node ? node_ok_locked(node) : NULL;
	if (n)
		node_unlink_free_locked(n);
	else
		e = hipErrorInvalidValue;
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

/* clr hipGraphClone: NULL arguments or a graph clr does not know ->
 * hipErrorInvalidValue; the clone remembers it is one (pOriginalGraph_). */
CPUHIP_EXPORT hipError_t hipGraphClone(hipGraph_t *pGraphClone, hipGraph_t originalGraph)
{
	CPUHIP_BOUNDARY("hipGraphClone", NULL);
	hipError_t e = hipSuccess;

	if (!pGraphClone || !originalGraph)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	pthread_mutex_lock(&glock);
	struct ihipGraph *g = graph_ok_locked(originalGraph);
	struct ihipGraph *c = g ? graph_clone_locked(g, true, NULL, NULL) : NULL;
	if (!g)
		e = hipErrorInvalidValue;
	else if (!c)
		e = hipErrorOutOfMemory;
	else
		*pGraphClone = c;
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

/* clr hipGraphNodeFindInClone: NULL arguments, or a graph that is not a
 * clone -> hipErrorInvalidValue; else the clone's top-level node with the
 * original's id, none -> hipErrorInvalidValue. */
CPUHIP_EXPORT hipError_t hipGraphNodeFindInClone(hipGraphNode_t *pNode, hipGraphNode_t originalNode,
						 hipGraph_t clonedGraph)
{
	CPUHIP_BOUNDARY("hipGraphNodeFindInClone", NULL);
	hipError_t e = hipErrorInvalidValue;

	if (!pNode || !originalNode || !clonedGraph)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	pthread_mutex_lock(&glock);
	struct ihipGraph *g = graph_ok_locked(clonedGraph);
	struct hipGraphNode *o = node_ok_locked(originalNode);
	if (g && o && g->cloned)
		for (struct hipGraphNode *n = g->head; n; n = n->next)
			if (n->id == o->id) {
				*pNode = n;
				e = hipSuccess;
				break;
			}
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

/* clr hipGraphChildGraphNodeGetGraph: the node's embedded graph (not a
 * copy); a node clr does not know, NULL pGraph or a node of another type
 * -> hipErrorInvalidValue. */
CPUHIP_EXPORT hipError_t hipGraphChildGraphNodeGetGraph(hipGraphNode_t node, hipGraph_t *pGraph)
{
	CPUHIP_BOUNDARY("hipGraphChildGraphNodeGetGraph", NULL);
	hipError_t e = hipSuccess;

	pthread_mutex_lock(&glock);
	struct hipGraphNode *n = node_ok_locked(node);
	if (!n || !pGraph) {
		e = hipErrorInvalidValue;
	} else {
		*pGraph = n->child;
		if (!n->child)
			e = hipErrorInvalidValue;
	}
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}
