/* SPDX-License-Identifier: MIT */
/*
 * Graph external-semaphore wait nodes, and waits enqueued on a capturing
 * stream.
 *
 * A wait node cannot be a host node: it would block the runtime's single
 * callback thread.  Instead the shim builds, in the real graph, an
 * event-wait node on a private event, and drives the event from outside
 * the graph: hipGraphLaunch of an exec holding such nodes first enqueues,
 * for each of them, the ordinary stream-ordered wait (hx_op_wait, the path
 * of hipWaitExternalSemaphoresAsync) on a shim-private side stream, then
 * hipEventRecord(node event, side stream), then forwards the launch
 * (graph_exec.c).  The runtime binds an event-wait node to the event's
 * latest record when hipGraphLaunch enqueues the graph (clr
 * GraphEventWaitNode::EnqueueCommands -> streamWait), so only the nodes
 * that depend on the wait node are held; the rest of the graph runs.
 *
 * A wait on a capturing stream becomes the same node: added to the
 * capture's graph behind the stream's current dependencies
 * (hipStreamGetCaptureInfo_v2), and made the stream's only dependency
 * (hipStreamUpdateCaptureDependencies), which is what the runtime does for
 * the work it captures itself.
 *
 * Copies of a graph made by the runtime (hipGraphClone, the graph embedded
 * in a child-graph node) carry event-wait nodes on the original's event;
 * graph_walk.c finds them and hx_graph_wait_adopt gives each its own event
 * and params, so a copy is driven independently of its original.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_guard.h"
#include "graph_wait.h"
#include "hot.h"
#include "intercept.h"
#include "log.h"
#include "ops.h"
#include "runtime.h"
#include "streams.h"
#include "noise.h"

static struct gwait *gwaits;

void hx_gw_vals_free(struct gw_vals *v)
{
	free(v->handles);
	free(v->raw_params);
	memset(v, 0, sizeof(*v));
}

hipError_t hx_gw_vals_copy(struct gw_vals *dst, const hipExternalSemaphore_t *hs,
			   const void *params, unsigned n)
{
	size_t stride = hx_abi_wait_params_stride(hx_rt.abi);

	dst->n = n;
	dst->handles = calloc(n ? n : 1, sizeof(*dst->handles));
	dst->raw_params = calloc(n ? n : 1, stride);
	if (!dst->handles || !dst->raw_params) {
		hx_gw_vals_free(dst);
		return hipErrorOutOfMemory;
	}
	if (n) {
		memcpy(dst->handles, hs, n * sizeof(*hs));
		memcpy(dst->raw_params, params, n * stride);
	}
	return hipSuccess;
}

hipError_t hx_gw_vals_from_params(struct gw_vals *v, const struct hx_ext_sem_node_params *p,
				  const char *what)
{
	hipError_t err;

	if (!p) {
		hx_err("%s: nodeParams is NULL", what);
		return hipErrorInvalidValue;
	}
	err = hx_op_wait_validate(p->extSemArray, p->paramsArray, p->numExtSems, what);
	if (err)
		return err;
	if (hx_gw_vals_copy(v, p->extSemArray, p->paramsArray, p->numExtSems)) {
		hx_err("%s: out of memory", what);
		return hipErrorOutOfMemory;
	}
	return hipSuccess;
}

struct gwait *hx_gwait_find_locked(hipGraphNode_t node)
{
	for (struct gwait *w = gwaits; w && node; w = w->next)
		if (w->node == node)
			return w;
	return NULL;
}

struct gwait *hx_gw_next_of_graph_locked(struct gwait *prev, hipGraph_t graph)
{
	for (struct gwait *w = prev ? prev->next : gwaits; w && graph; w = w->next)
		if (w->graph == graph)
			return w;
	return NULL;
}

static bool gwait_known(hipGraphNode_t node)
{
	bool known;

	pthread_mutex_lock(&hx_gw_lock);
	known = hx_gwait_find_locked(node) != NULL;
	pthread_mutex_unlock(&hx_gw_lock);
	return known;
}

void hx_gwait_unref_locked(struct gwait *w)
{
	if (--w->refs)
		return;
	for (struct gwait **pp = &gwaits; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	if (hx_rt.EventDestroy)
		hx_rt.EventDestroy(w->event);
	hx_gw_vals_free(&w->v);
	free(w);
}

bool hx_gw_runtime_ok(const char *what)
{
	const char *missing = !hx_rt.GraphAddEventWaitNode      ? "hipGraphAddEventWaitNode"
			      : !hx_rt.EventCreateWithFlags     ? "hipEventCreateWithFlags"
			      : !hx_rt.EventRecord              ? "hipEventRecord"
			      : !hx_rt.StreamCreateWithFlags    ? "hipStreamCreateWithFlags"
			      : !hx_rt.GraphInstantiate         ? "hipGraphInstantiate"
			      : !hx_rt.GraphLaunch              ? "hipGraphLaunch"
							        : NULL;
	if (missing)
		hx_err("%s: the HIP runtime has no %s, which graph wait nodes on hipextsem "
		       "semaphores need", what, missing);
	return !missing;
}

/* A record with its own event, taking over *v (freed on failure too);
 * not yet listed. */
static struct gwait *gwait_new(struct gw_vals *v, const char *what, hipError_t *err)
{
	struct gwait *w = calloc(1, sizeof(*w));

	if (!w) {
		hx_gw_vals_free(v);
		hx_err("%s: out of memory", what);
		*err = hipErrorOutOfMemory;
		return NULL;
	}
	w->v = *v;
	memset(v, 0, sizeof(*v));
	if (hx_rt.GetDevice(&w->dev) != hipSuccess)
		w->dev = 0;
	*err = hx_rt.EventCreateWithFlags(&w->event, hipEventDisableTiming);
	if (*err) {
		hx_err("%s: hipEventCreateWithFlags failed (error %d)", what, (int)*err);
		hx_gw_vals_free(&w->v);
		free(w);
		return NULL;
	}
	w->refs = 1;
	return w;
}

static void gwait_discard(struct gwait *w)
{
	if (hx_rt.EventDestroy)
		hx_rt.EventDestroy(w->event);
	hx_gw_vals_free(&w->v);
	free(w);
}

static void gwait_list(struct gwait *w, hipGraph_t graph, hipGraph_t root, hipGraphNode_t node)
{
	hx_graph_fork_setup();
	pthread_mutex_lock(&hx_gw_lock);
	w->graph = graph;
	w->root = root;
	w->node = node;
	w->next = gwaits;
	gwaits = w;
	pthread_mutex_unlock(&hx_gw_lock);
}

/* The event-wait node standing for a wait node on *v (checked params,
 * taken over), added with the caller's dependencies: the runtime checks
 * them and gives its own answers. */
static hipError_t add_wait_node(hipGraphNode_t *node, hipGraph_t graph,
				const hipGraphNode_t *deps, size_t ndeps, struct gw_vals *v,
				const char *what)
{
	unsigned n = v->n;
	struct gwait *w;
	hipError_t err;

	w = gwait_new(v, what, &err);
	if (!w)
		return err;
	*node = NULL;
	err = hx_rt.GraphAddEventWaitNode(node, graph, deps, ndeps, w->event);
	if (err && !*node) {
		hx_err("%s: hipGraphAddEventWaitNode failed (error %d)", what, (int)err);
		gwait_discard(w);
		return err;
	}
	/* clr adds the node to the graph before it checks the dependencies,
	 * and hands it out even when it refuses one: such a node stays in the
	 * graph with the event, so it stays a wait node (its event must not
	 * be destroyed under it). */
	gwait_list(w, graph, graph, *node);
	if (err) {
		hx_err("%s: hipGraphAddEventWaitNode failed (error %d); the runtime kept node %p "
		       "in the graph, which stays a wait node", what, (int)err, (void *)*node);
		return err;
	}
	hx_dbg("%s: %u semaphore(s) as event-wait node %p (event %p)", what, n, (void *)*node,
	       (void *)w->event);
	return hipSuccess;
}

hipError_t hx_graph_add_wait_node(hipGraphNode_t *node, hipGraph_t graph,
				  const hipGraphNode_t *deps, size_t ndeps,
				  const struct hx_ext_sem_node_params *p)
{
	static const char what[] = "hipGraphAddExternalSemaphoresWaitNode";
	struct gw_vals v = { 0 };
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	/* As in hx_graph_add_signal_node: parameters holding no hipextsem
	 * semaphore go to the runtime unchanged, NULL ones are refused below. */
	if (!hx_graph_usable() || (p && !hx_graph_any_shim_handle(p)))
		FORWARD_OR_FAIL(GraphAddExternalSemaphoresWaitNode,
				"hipGraphAddExternalSemaphoresWaitNode", node, graph, deps, ndeps, p);
	if (!node || !graph) {
		hx_err("%s: %s is NULL", what, !node ? "pGraphNode" : "graph");
		return hipErrorInvalidValue;
	}
	if (!hx_gw_runtime_ok(what))
		return hipErrorNotSupported;
	err = hx_gw_vals_from_params(&v, p, what);
	return err ? err : add_wait_node(node, graph, deps, ndeps, &v, what);
}

/* ---- stream capture ---------------------------------------------------- */

/* graph_common.h */
hipError_t hx_graph_capture_wait(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
				 hipStream_t stream)
{
	static const char what[] = "hipWaitExternalSemaphoresAsync (captured)";
	struct hx_ext_sem_node_params p = { (hipExternalSemaphore_t *)hs, params, n };
	struct gw_vals v = { 0 };
	const hipGraphNode_t *deps = NULL;
	hipGraphNode_t *depcopy = NULL, node = NULL;
	unsigned long long id = 0;
	hipGraph_t graph = NULL;
	size_t ndeps = 0;
	int status = 0;
	hipError_t err;

	err = hx_gw_vals_from_params(&v, &p, what);
	if (err)
		return err;
	if (!hx_rt.StreamGetCaptureInfo_v2 || !hx_rt.StreamUpdateCaptureDependencies ||
	    !hx_gw_runtime_ok(what)) {
		hx_err("%s: the HIP runtime has no hipStreamGetCaptureInfo_v2 / "
		       "hipStreamUpdateCaptureDependencies to record the wait into the graph", what);
		err = hipErrorStreamCaptureUnsupported;
		goto out;
	}
	err = hx_rt.StreamGetCaptureInfo_v2(stream, &status, &id, &graph, &deps, &ndeps);
	if (err) {
		hx_err("%s: hipStreamGetCaptureInfo_v2 on stream %p failed (error %d)", what,
		       (void *)stream, (int)err);
		goto out;
	}
	if (status == HX_CAPTURE_STATUS_INVALIDATED) {
		hx_err("%s: the capture of stream %p was invalidated", what, (void *)stream);
		err = hipErrorStreamCaptureInvalidated;
		goto out;
	}
	if (status != HX_CAPTURE_STATUS_ACTIVE || !graph) {
		hx_err("%s: stream %p is no longer capturing", what, (void *)stream);
		err = hipErrorStreamCaptureUnsupported;
		goto out;
	}
	/* The runtime's array lives until the stream's next capture call. */
	if (ndeps) {
		depcopy = malloc(ndeps * sizeof(*depcopy));
		if (!depcopy) {
			hx_err("%s: out of memory", what);
			err = hipErrorOutOfMemory;
			goto out;
		}
		memcpy(depcopy, deps, ndeps * sizeof(*depcopy));
	}
	/* Takes over v. */
	err = add_wait_node(&node, graph, depcopy, ndeps, &v, what);
	free(depcopy);
	if (err)
		return err;
	/* Later captured work depends on the wait node alone. */
	err = hx_rt.StreamUpdateCaptureDependencies(stream, &node, 1,
						    HX_STREAM_SET_CAPTURE_DEPENDENCIES);
	if (err) {
		hx_err("%s: hipStreamUpdateCaptureDependencies on stream %p failed (error %d); "
		       "the wait node %p is in the graph but later work does not depend on it",
		       what, (void *)stream, (int)err, (void *)node);
		return err;
	}
	/* Invalidated while the node went in (another thread's call): the
	 * capture's graph will never run, and 5.3 to 6.1 run the stream's
	 * later work for real past an invalidated capture, so a success here
	 * would let that work pass the wait. */
	if (hx_runtime_capture_status(stream) == HX_CAPTURE_STATUS_INVALIDATED) {
		hx_err("%s: the capture of stream %p was invalidated while the wait was recorded",
		       what, (void *)stream);
		return hipErrorStreamCaptureInvalidated;
	}
	hx_dbg("%s: %u semaphore(s) recorded into capture %llu of stream %p as node %p", what,
	       n, id, (void *)stream, (void *)node);
	return hipSuccess;
out:
	hx_gw_vals_free(&v);
	return err;
}

/* ---- node parameters --------------------------------------------------- */

hipError_t hx_graph_wait_get(hipGraphNode_t node, struct hx_ext_sem_node_params *out)
{
	struct gwait *w;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	pthread_mutex_lock(&hx_gw_lock);
	w = hx_gwait_find_locked(node);
	if (w && out) {
		/* The node's own copy, as clr hands out. */
		out->extSemArray = w->v.handles;
		out->paramsArray = w->v.raw_params;
		out->numExtSems = w->v.n;
	}
	pthread_mutex_unlock(&hx_gw_lock);
	if (w)
		return out ? hipSuccess : hipErrorInvalidValue;
	FORWARD_FOREIGN_NODE(node, HX_GRAPH_NODE_EXT_SEM_WAIT,
			     GraphExternalSemaphoresWaitNodeGetParams,
			     "hipGraphExternalSemaphoresWaitNodeGetParams", node, out);
}

hipError_t hx_graph_wait_set(hipGraphNode_t node, const struct hx_ext_sem_node_params *p)
{
	static const char what[] = "hipGraphExternalSemaphoresWaitNodeSetParams";
	struct gw_vals v, old;
	struct gwait *w;
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (!gwait_known(node)) {
		if (hx_graph_refuse_foreign(node, p, what))
			return hipErrorInvalidValue;
		FORWARD_FOREIGN_NODE(node, HX_GRAPH_NODE_EXT_SEM_WAIT,
				     GraphExternalSemaphoresWaitNodeSetParams,
				     "hipGraphExternalSemaphoresWaitNodeSetParams", node, p);
	}
	err = hx_gw_vals_from_params(&v, p, what);
	if (err)
		return err;
	pthread_mutex_lock(&hx_gw_lock);
	w = hx_gwait_find_locked(node);
	if (w) {
		/* Existing execs keep their own copies. */
		old = w->v;
		w->v = v;
	}
	pthread_mutex_unlock(&hx_gw_lock);
	hx_gw_vals_free(w ? &old : &v);
	return w ? hipSuccess : hipErrorInvalidValue;
}

/* ---- copies made by the runtime ---------------------------------------- */

/* `node` (an event-wait node of `graph`) is a runtime-made copy of a wait
 * node when its event is one of the shim's and the node itself is not
 * known: it gets its own record and event, so that its params, launches
 * and lifetime are its own. */
hipError_t hx_graph_wait_adopt(hipGraph_t graph, hipGraphNode_t node, hipGraph_t root)
{
	static const char what[] = "graph copy";
	struct gwait *src = NULL, *w;
	hipEvent_t ev = NULL;
	struct gw_vals v = { 0 };
	hipError_t err;

	if (!hx_rt.GraphEventWaitNodeGetEvent || !hx_rt.GraphEventWaitNodeSetEvent ||
	    hx_rt.GraphEventWaitNodeGetEvent(node, &ev) != hipSuccess || !ev)
		return hipSuccess;
	pthread_mutex_lock(&hx_gw_lock);
	if (!hx_gwait_find_locked(node))
		for (src = gwaits; src && src->event != ev; src = src->next)
			;
	if (src && hx_gw_vals_copy(&v, src->v.handles, src->v.raw_params, src->v.n)) {
		/* Not adoptable: refused, as when its event cannot be made
		 * (the copy would wait on the original's event). */
		pthread_mutex_unlock(&hx_gw_lock);
		hx_err("wait node %p of graph %p (a copy): out of memory; it keeps the "
		       "original's event", (void *)node, (void *)graph);
		return hipErrorOutOfMemory;
	}
	pthread_mutex_unlock(&hx_gw_lock);
	if (!src)
		return hipSuccess;
	w = gwait_new(&v, what, &err);
	if (!w) {
		hx_err("wait node %p of graph %p (a copy) keeps the original's event", (void *)node,
		       (void *)graph);
		return err;
	}
	err = hx_rt.GraphEventWaitNodeSetEvent(node, w->event);
	if (err) {
		hx_err("hipGraphEventWaitNodeSetEvent on node %p failed (error %d); the copy "
		       "keeps the original's event", (void *)node, (int)err);
		gwait_discard(w);
		return err;
	}
	gwait_list(w, graph, root, node);
	hx_dbg("wait node %p of graph %p (copy, in graph %p) has event %p", (void *)node,
	       (void *)graph, (void *)root, (void *)w->event);
	return hipSuccess;
}

static void gwait_forget_locked(struct gwait *w)
{
	w->graph = w->root = NULL;
	w->node = NULL;
	hx_gwait_unref_locked(w);
}

/* The node is gone (hipGraphDestroyNode): execs made before keep its
 * record. */
void hx_graph_wait_forget_node(hipGraphNode_t node)
{
	struct gwait *w;

	pthread_mutex_lock(&hx_gw_lock);
	w = hx_gwait_find_locked(node);
	if (w)
		gwait_forget_locked(w);
	pthread_mutex_unlock(&hx_gw_lock);
}

/* The graph is gone, with the graphs embedded in its child-graph nodes:
 * their wait nodes are forgotten (events freed once no exec made from
 * them is left). */
void hx_graph_wait_forget_graph(hipGraph_t graph)
{
	pthread_mutex_lock(&hx_gw_lock);
	for (struct gwait *w = gwaits, *next; w; w = next) {
		next = w->next;
		if (graph && w->node && (w->graph == graph || w->root == graph))
			gwait_forget_locked(w);
	}
	pthread_mutex_unlock(&hx_gw_lock);
}

/* The runtime may have freed graphs behind the shim (the development
 * tree's hipStreamEndCapture deletes the graph of an invalidated or
 * unjoined capture): every record whose node the runtime no longer knows
 * is dropped with the rest of its top-level graph's, before the address
 * can come back as a node of another graph.  Asking is safe where graphs
 * are freed (clr checks GraphNode::isNodeValid in hipGraphNodeGetType);
 * releases that do not check never free them. */
void hx_graph_wait_forget_dead(void)
{
	hipGraph_t dead;
	int type;

	if (!hx_rt.GraphNodeGetType)
		return;
	pthread_mutex_lock(&hx_gw_lock);
	do {
		dead = NULL;
		for (struct gwait *w = gwaits; w && !dead; w = w->next)
			if (w->node && hx_rt.GraphNodeGetType(w->node, &type) != hipSuccess)
				dead = w->root;
		for (struct gwait *w = gwaits, *next; w && dead; w = next) {
			next = w->next;
			if (w->node && (w->graph == dead || w->root == dead)) {
				hx_dbg("wait node %p of graph %p: freed by the runtime; forgotten",
				       (void *)w->node, (void *)dead);
				gwait_forget_locked(w);
			}
		}
	} while (dead);
	pthread_mutex_unlock(&hx_gw_lock);
}

bool hx_graph_wait_known(hipGraphNode_t node)
{
	return gwait_known(node);
}

bool hx_graph_wait_any(void)
{
	bool any;

	pthread_mutex_lock(&hx_gw_lock);
	any = gwaits != NULL;
	pthread_mutex_unlock(&hx_gw_lock);
	return any;
}
