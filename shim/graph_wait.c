/* SPDX-License-Identifier: MIT */
/*
 * Graph external-semaphore wait nodes.
 *
 * A wait node cannot be a host node without blocking the runtime's single
 * callback thread: it becomes an event-wait node on a private event that
 * the shim records, behind the ordinary stream wait on a side stream, at
 * each hipGraphLaunch; instantiation, launch and destruction of graphs and
 * execs are intercepted for that.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_common.h"
#include "intercept.h"
#include "log.h"
#include "ops.h"
#include "runtime.h"

/* ---- graph wait nodes -------------------------------------------------- */

/* A wait node cannot be a host node (it would block the runtime's only
 * callback thread).  Instead the shim builds, in the real graph, an
 * event-wait node on a private event, and drives the event from outside
 * the graph: hipGraphLaunch of an exec holding such nodes first enqueues,
 * for each of them, the ordinary stream-ordered wait (hx_op_wait, the path
 * of hipWaitExternalSemaphoresAsync) on a shim-private side stream, then
 * hipEventRecord(node event, side stream), then forwards the launch.  The
 * runtime binds an event-wait node to the event's latest record when
 * hipGraphLaunch enqueues the graph (clr GraphEventWaitNode::
 * EnqueueCommands -> streamWait), so only the nodes that depend on the
 * wait node are held; the rest of the graph runs.
 *
 * Records: one gwait per wait node (graph node, event, the node's params),
 * one gexec per exec holding wait nodes (its own copy of each node's
 * params, as CUDA specifies for execs, and one side stream per wait node so
 * that one pending wait never queues behind another).  gw_lock covers the
 * tables and is held across a whole launch: record + launch of one exec
 * are atomic, so two launches in flight of the same exec (or two execs of
 * one graph, which share the node's event) each bind to their own record.
 * The event lives until its graph and every exec made from it are gone. */
struct gw_vals {
	unsigned n;
	hipExternalSemaphore_t *handles;
	void *raw_params; /* the caller's wait params, runtime ABI layout */
};

struct gwait {
	struct gwait *next;
	hipGraph_t graph;     /* NULL once the graph is destroyed */
	hipGraphNode_t node;  /* idem */
	hipEvent_t event;
	struct gw_vals v;     /* the graph node's params */
	unsigned refs;        /* the graph + one per exec entry */
};

struct gexec_entry {
	struct gwait *w;
	struct gw_vals v;     /* the exec's copy */
	hipStream_t side;     /* created at first launch */
	int side_dev;
};

struct gexec {
	struct gexec *next;
	hipGraphExec_t exec;
	unsigned n;
	struct gexec_entry *e;
};

/* Idle side streams of destroyed execs, reused once they are idle. */
struct gw_pooled {
	struct gw_pooled *next;
	hipStream_t s;
	int dev;
};

static pthread_mutex_t gw_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gwait *gwaits;
static struct gexec *gexecs;
static struct gw_pooled *gw_pool;
static int gw_nexecs; /* atomic: fast path of hipGraphLaunch */

static void gw_vals_free(struct gw_vals *v)
{
	free(v->handles);
	free(v->raw_params);
	memset(v, 0, sizeof(*v));
}

static hipError_t gw_vals_copy(struct gw_vals *dst, const hipExternalSemaphore_t *hs,
			       const void *params, unsigned n)
{
	size_t stride = hx_abi_wait_params_stride(hx_rt.abi);

	dst->n = n;
	dst->handles = calloc(n ? n : 1, sizeof(*dst->handles));
	dst->raw_params = calloc(n ? n : 1, stride);
	if (!dst->handles || !dst->raw_params) {
		gw_vals_free(dst);
		return hipErrorOutOfMemory;
	}
	if (n) {
		memcpy(dst->handles, hs, n * sizeof(*hs));
		memcpy(dst->raw_params, params, n * stride);
	}
	return hipSuccess;
}

static struct gwait *gwait_find_locked(hipGraphNode_t node)
{
	for (struct gwait *w = gwaits; w && node; w = w->next)
		if (w->node == node)
			return w;
	return NULL;
}

static bool gwait_known(hipGraphNode_t node)
{
	bool known;

	pthread_mutex_lock(&gw_lock);
	known = gwait_find_locked(node) != NULL;
	pthread_mutex_unlock(&gw_lock);
	return known;
}

static void gwait_unref_locked(struct gwait *w)
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
	gw_vals_free(&w->v);
	free(w);
}

static struct gexec *gexec_unlink_locked(hipGraphExec_t exec)
{
	for (struct gexec **pp = &gexecs; *pp; pp = &(*pp)->next)
		if ((*pp)->exec == exec) {
			struct gexec *x = *pp;
			*pp = x->next;
			__atomic_sub_fetch(&gw_nexecs, 1, __ATOMIC_RELAXED);
			return x;
		}
	return NULL;
}

static void gexec_free_locked(struct gexec *x)
{
	for (unsigned i = 0; i < x->n; i++) {
		struct gexec_entry *e = &x->e[i];
		struct gw_pooled *p;

		if (e->side) {
			/* Never destroyed: a stream may still hold a pending wait,
			 * and hipStreamDestroy may wait for it. */
			p = malloc(sizeof(*p));
			if (p) {
				p->s = e->side;
				p->dev = e->side_dev;
				p->next = gw_pool;
				gw_pool = p;
			}
		}
		gw_vals_free(&e->v);
		if (e->w)
			gwait_unref_locked(e->w);
	}
	free(x->e);
	free(x);
}

static bool wait_node_runtime_ok(const char *what)
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

hipError_t hx_graph_add_wait_node(hipGraphNode_t *node, hipGraph_t graph,
				  const hipGraphNode_t *deps, size_t ndeps,
				  const struct hx_ext_sem_node_params *p)
{
	static const char what[] = "hipGraphAddExternalSemaphoresWaitNode";
	struct gwait *w;
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (!hx_graph_usable() || !hx_graph_any_shim_handle(p))
		FORWARD_OR_FAIL(GraphAddExternalSemaphoresWaitNode,
				"hipGraphAddExternalSemaphoresWaitNode", node, graph, deps, ndeps, p);
	if (!node || !graph) {
		hx_err("%s: %s is NULL", what, !node ? "pGraphNode" : "graph");
		return hipErrorInvalidValue;
	}
	if (!wait_node_runtime_ok(what))
		return hipErrorNotSupported;
	err = hx_op_wait_validate(p->extSemArray, p->paramsArray, p->numExtSems, what);
	if (err)
		return err;
	w = calloc(1, sizeof(*w));
	if (!w || gw_vals_copy(&w->v, p->extSemArray, p->paramsArray, p->numExtSems)) {
		free(w);
		hx_err("%s: out of memory", what);
		return hipErrorOutOfMemory;
	}
	err = hx_rt.EventCreateWithFlags(&w->event, hipEventDisableTiming);
	if (err) {
		hx_err("%s: hipEventCreateWithFlags failed (error %d)", what, (int)err);
		goto fail;
	}
	err = hx_rt.GraphAddEventWaitNode(node, graph, deps, ndeps, w->event);
	if (err) {
		hx_err("%s: hipGraphAddEventWaitNode failed (error %d)", what, (int)err);
		hx_rt.EventDestroy ? (void)hx_rt.EventDestroy(w->event) : (void)0;
		goto fail;
	}
	w->graph = graph;
	w->node = *node;
	w->refs = 1;
	pthread_mutex_lock(&gw_lock);
	w->next = gwaits;
	gwaits = w;
	pthread_mutex_unlock(&gw_lock);
	hx_dbg("%s: %u semaphore(s) as event-wait node %p (event %p)", what, p->numExtSems,
	       (void *)*node, (void *)w->event);
	return hipSuccess;
fail:
	gw_vals_free(&w->v);
	free(w);
	return err;
}

/* After a successful instantiation: remember the exec if its graph holds
 * wait nodes built by the shim.  On failure the exec is destroyed again. */
static hipError_t gw_instantiated(hipGraphExec_t exec, hipGraph_t graph, const char *what)
{
	struct gexec *x, *stale;
	unsigned n = 0, i = 0;

	pthread_mutex_lock(&gw_lock);
	/* An exec address reused by the runtime (destroyed behind the shim). */
	stale = gexec_unlink_locked(exec);
	if (stale)
		gexec_free_locked(stale);
	for (struct gwait *w = gwaits; w; w = w->next)
		n += w->graph == graph && graph;
	if (!n) {
		pthread_mutex_unlock(&gw_lock);
		return hipSuccess;
	}
	x = calloc(1, sizeof(*x));
	if (x)
		x->e = calloc(n, sizeof(*x->e));
	if (!x || !x->e)
		goto oom;
	x->exec = exec;
	for (struct gwait *w = gwaits; w; w = w->next) {
		if (w->graph != graph)
			continue;
		if (gw_vals_copy(&x->e[i].v, w->v.handles, w->v.raw_params, w->v.n))
			goto oom;
		x->e[i].w = w;
		w->refs++;
		x->n = ++i;
	}
	x->next = gexecs;
	gexecs = x;
	__atomic_add_fetch(&gw_nexecs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&gw_lock);
	hx_dbg("%s: exec %p has %u hipextsem wait node(s)", what, (void *)exec, n);
	return hipSuccess;
oom:
	if (x)
		gexec_free_locked(x);
	pthread_mutex_unlock(&gw_lock);
	hx_err("%s: out of memory for the exec's wait nodes; exec destroyed", what);
	if (hx_rt.GraphExecDestroy)
		hx_rt.GraphExecDestroy(exec);
	return hipErrorOutOfMemory;
}

hipError_t hx_graph_instantiate(hipGraphExec_t *exec, hipGraph_t graph, hipGraphNode_t *errNode,
				char *log, size_t logSize)
{
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphInstantiate, "hipGraphInstantiate");
	err = hx_rt.GraphInstantiate(exec, graph, errNode, log, logSize);
	return err || !exec ? err : gw_instantiated(*exec, graph, "hipGraphInstantiate");
}

hipError_t hx_graph_instantiate_with_flags(hipGraphExec_t *exec, hipGraph_t graph,
					   unsigned long long flags)
{
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphInstantiateWithFlags, "hipGraphInstantiateWithFlags");
	err = hx_rt.GraphInstantiateWithFlags(exec, graph, flags);
	return err || !exec ? err
			    : gw_instantiated(*exec, graph, "hipGraphInstantiateWithFlags");
}

hipError_t hx_graph_instantiate_with_params(hipGraphExec_t *exec, hipGraph_t graph, void *params)
{
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphInstantiateWithParams, "hipGraphInstantiateWithParams");
	err = hx_rt.GraphInstantiateWithParams(exec, graph, params);
	return err || !exec ? err
			    : gw_instantiated(*exec, graph, "hipGraphInstantiateWithParams");
}

static hipError_t gw_side_stream_locked(struct gexec_entry *e, int dev, const char *what)
{
	hipError_t err;

	if (e->side && e->side_dev == dev)
		return hipSuccess;
	/* A pooled stream is taken only when idle: never behind a pending wait. */
	for (struct gw_pooled **pp = &gw_pool; *pp; pp = &(*pp)->next) {
		struct gw_pooled *p = *pp;
		if (p->dev == dev && (!hx_rt.StreamQuery || hx_rt.StreamQuery(p->s) == hipSuccess)) {
			*pp = p->next;
			e->side = p->s;
			e->side_dev = dev;
			free(p);
			return hipSuccess;
		}
	}
	err = hx_rt.StreamCreateWithFlags(&e->side, hipStreamNonBlocking);
	if (err) {
		hx_err("%s: cannot create the side stream for a wait node (error %d)", what,
		       (int)err);
		e->side = NULL;
		return err;
	}
	e->side_dev = dev;
	return hipSuccess;
}

static hipError_t gw_launch(hipGraphExec_t exec, hipStream_t stream, bool spt)
{
	const char *what = spt ? "hipGraphLaunch_spt" : "hipGraphLaunch";
	hx_graph_launch_fn *real;
	struct gexec *x = NULL;
	hipError_t err = hipSuccess;
	int dev = 0;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	real = spt ? hx_rt.GraphLaunch_spt : hx_rt.GraphLaunch;
	if (!real) {
		hx_err("%s: the HIP runtime has no %s", what, what);
		return hipErrorNotSupported;
	}
	if (!__atomic_load_n(&gw_nexecs, __ATOMIC_RELAXED))
		return real(exec, stream);
	pthread_mutex_lock(&gw_lock);
	for (x = gexecs; x; x = x->next)
		if (x->exec == exec && exec)
			break;
	if (!x) {
		pthread_mutex_unlock(&gw_lock);
		return real(exec, stream);
	}
	/* Captured, the pre-launch wait would run now, not at replay. */
	if (!spt && hx_graph_capturing(stream)) {
		hx_err("%s: exec %p holds hipextsem wait nodes and cannot be launched into a "
		       "stream capture", what, (void *)exec);
		err = hipErrorStreamCaptureUnsupported;
		goto out;
	}
	/* Every semaphore must still exist: fail before enqueuing anything. */
	for (unsigned i = 0; i < x->n && !err; i++)
		err = hx_op_wait_validate(x->e[i].v.handles, x->e[i].v.raw_params, x->e[i].v.n,
					  what);
	if (err) {
		hx_err("%s: exec %p not launched: a wait node's semaphore is no longer valid "
		       "(error %d)", what, (void *)exec, (int)err);
		goto out;
	}
	if (hx_rt.GetDevice && hx_rt.GetDevice(&dev) != hipSuccess)
		dev = 0;
	for (unsigned i = 0; i < x->n && !err; i++) {
		struct gexec_entry *e = &x->e[i];
		err = gw_side_stream_locked(e, dev, what);
		if (!err)
			err = hx_op_wait(e->v.handles, e->v.raw_params, e->v.n, e->side);
		if (!err) {
			err = hx_rt.EventRecord(e->w->event, e->side);
			if (err)
				hx_err("%s: hipEventRecord on the side stream failed (error %d)",
				       what, (int)err);
		}
	}
	if (err) {
		hx_err("%s: exec %p not launched (error %d)", what, (void *)exec, (int)err);
		goto out;
	}
	err = real(exec, stream);
	hx_dbg("%s: exec %p with %u wait node(s): %d", what, (void *)exec, x->n, (int)err);
out:
	pthread_mutex_unlock(&gw_lock);
	return err;
}

hipError_t hx_graph_launch(hipGraphExec_t exec, hipStream_t stream)
{
	return gw_launch(exec, stream, false);
}

hipError_t hx_graph_launch_spt(hipGraphExec_t exec, hipStream_t stream)
{
	return gw_launch(exec, stream, true);
}

hipError_t hx_graph_exec_destroy(hipGraphExec_t exec)
{
	struct gexec *x;
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphExecDestroy, "hipGraphExecDestroy");
	err = hx_rt.GraphExecDestroy(exec);
	if (err || !exec)
		return err;
	pthread_mutex_lock(&gw_lock);
	x = gexec_unlink_locked(exec);
	if (x)
		gexec_free_locked(x);
	pthread_mutex_unlock(&gw_lock);
	return err;
}

hipError_t hx_graph_wait_get(hipGraphNode_t node, struct hx_ext_sem_node_params *out)
{
	struct gwait *w;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	pthread_mutex_lock(&gw_lock);
	w = gwait_find_locked(node);
	if (w && out) {
		/* The node's own copy, as clr hands out. */
		out->extSemArray = w->v.handles;
		out->paramsArray = w->v.raw_params;
		out->numExtSems = w->v.n;
	}
	pthread_mutex_unlock(&gw_lock);
	if (w)
		return out ? hipSuccess : hipErrorInvalidValue;
	FORWARD_OR_FAIL(GraphExternalSemaphoresWaitNodeGetParams,
			"hipGraphExternalSemaphoresWaitNodeGetParams", node, out);
}

/* The new params of a wait node the shim built, checked and copied. */
static hipError_t gw_vals_from_params(struct gw_vals *v, const struct hx_ext_sem_node_params *p,
				      const char *what)
{
	hipError_t err;

	if (!p)
		return hipErrorInvalidValue;
	err = hx_op_wait_validate(p->extSemArray, p->paramsArray, p->numExtSems, what);
	if (err)
		return err;
	if (gw_vals_copy(v, p->extSemArray, p->paramsArray, p->numExtSems))
		return hipErrorOutOfMemory;
	return hipSuccess;
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
		if (hx_graph_usable() && hx_graph_any_shim_handle(p)) {
			hx_err("%s: node %p was created by the runtime (with no hipextsem "
			       "semaphore); it cannot take hipextsem semaphores", what, (void *)node);
			return hipErrorInvalidValue;
		}
		FORWARD_OR_FAIL(GraphExternalSemaphoresWaitNodeSetParams,
				"hipGraphExternalSemaphoresWaitNodeSetParams", node, p);
	}
	err = gw_vals_from_params(&v, p, what);
	if (err)
		return err;
	pthread_mutex_lock(&gw_lock);
	w = gwait_find_locked(node);
	if (w) {
		/* Existing execs keep their own copies. */
		old = w->v;
		w->v = v;
	}
	pthread_mutex_unlock(&gw_lock);
	gw_vals_free(w ? &old : &v);
	return w ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hx_graph_exec_wait_set(hipGraphExec_t exec, hipGraphNode_t node,
				  const struct hx_ext_sem_node_params *p)
{
	static const char what[] = "hipGraphExecExternalSemaphoresWaitNodeSetParams";
	struct gexec_entry *e = NULL;
	struct gw_vals v, old;
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (!gwait_known(node)) {
		if (hx_graph_usable() && hx_graph_any_shim_handle(p)) {
			hx_err("%s: node %p was created by the runtime; it cannot take hipextsem "
			       "semaphores", what, (void *)node);
			return hipErrorInvalidValue;
		}
		FORWARD_OR_FAIL(GraphExecExternalSemaphoresWaitNodeSetParams,
				"hipGraphExecExternalSemaphoresWaitNodeSetParams", exec, node, p);
	}
	err = gw_vals_from_params(&v, p, what);
	if (err)
		return err;
	/* Under gw_lock: never changes the params of a launch being enqueued. */
	pthread_mutex_lock(&gw_lock);
	for (struct gexec *x = gexecs; x && !e; x = x->next)
		if (x->exec == exec && exec)
			for (unsigned i = 0; i < x->n; i++)
				if (x->e[i].w->node == node)
					e = &x->e[i];
	if (e) {
		old = e->v;
		e->v = v;
	}
	pthread_mutex_unlock(&gw_lock);
	gw_vals_free(e ? &old : &v);
	if (!e) {
		hx_err("%s: exec %p has no wait node %p (not instantiated from its graph, or "
		       "instantiated by a call the shim does not intercept)", what, (void *)exec,
		       (void *)node);
		return hipErrorInvalidValue;
	}
	return hipSuccess;
}

/* The graph is gone: its wait nodes are forgotten (their events are freed
 * once no exec made from the graph is left). */
void hx_graph_wait_forget_graph(hipGraph_t graph)
{
	pthread_mutex_lock(&gw_lock);
	for (struct gwait *w = gwaits, *next; w; w = next) {
		next = w->next;
		if (w->graph == graph) {
			w->graph = NULL;
			w->node = NULL;
			gwait_unref_locked(w);
		}
	}
	pthread_mutex_unlock(&gw_lock);
}

bool hx_graph_wait_known(hipGraphNode_t node)
{
	return gwait_known(node);
}
