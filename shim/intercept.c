/* SPDX-License-Identifier: MIT */
/*
 * hipGetProcAddress / hipGetDriverEntryPoint, the R0600 capability report,
 * and graph nodes / stream capture of external-semaphore signals.
 *
 * Graphs: a signal node becomes a host node of the real runtime whose
 * function issues the syncobj signal when the graph runs (on the runtime's
 * callback thread, never blocking).  Capture: a signal on a capturing
 * stream is enqueued as hipLaunchHostFunc, which the runtime records as
 * such a host node.  The node's data is a persistent copy of the handles
 * and values; handles are looked up again at each run.  Wait nodes cannot
 * be host nodes without blocking the single callback thread: they become
 * event-wait nodes on a private event that the shim records, behind the
 * ordinary stream wait on a side stream, at each hipGraphLaunch (see
 * "graph wait nodes" below).  A captured wait holding a shim handle is
 * refused with hipErrorStreamCaptureUnsupported and a log line.  A shim
 * handle never reaches the runtime's graph API.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipextsem/hip_devprop.h"
#include "intercept.h"
#include "log.h"
#include "ops.h"
#include "runtime.h"

/* ---- export table ------------------------------------------------------ */

void *hx_intercept_lookup(const char *name, const char *version)
{
	if (!name || name[0] != 'h' || name[1] != 'i' || name[2] != 'p')
		return NULL;
	for (const struct hx_export *e = hx_exports; e->name; e++)
		if (strcmp(e->name, name) == 0)
			return !version || strcmp(version, e->node) == 0 ? e->fn : NULL;
	return NULL;
}

void *hx_intercept_replacement(const void *fn)
{
	const struct {
		void *rt;
		const char *name;
	} map[] = {
		{ (void *)hx_rt.ImportExternalSemaphore, "hipImportExternalSemaphore" },
		{ (void *)hx_rt.SignalExternalSemaphoresAsync, "hipSignalExternalSemaphoresAsync" },
		{ (void *)hx_rt.WaitExternalSemaphoresAsync, "hipWaitExternalSemaphoresAsync" },
		{ (void *)hx_rt.DestroyExternalSemaphore, "hipDestroyExternalSemaphore" },
		{ (void *)hx_rt.GetProcAddress, "hipGetProcAddress" },
		{ (void *)hx_rt.GetDriverEntryPoint, "hipGetDriverEntryPoint" },
		{ (void *)hx_rt.GetDevicePropertiesR0600, "hipGetDevicePropertiesR0600" },
		{ (void *)hx_rt.GraphAddExternalSemaphoresSignalNode,
		  "hipGraphAddExternalSemaphoresSignalNode" },
		{ (void *)hx_rt.GraphAddExternalSemaphoresWaitNode,
		  "hipGraphAddExternalSemaphoresWaitNode" },
		{ (void *)hx_rt.GraphExternalSemaphoresSignalNodeGetParams,
		  "hipGraphExternalSemaphoresSignalNodeGetParams" },
		{ (void *)hx_rt.GraphExternalSemaphoresSignalNodeSetParams,
		  "hipGraphExternalSemaphoresSignalNodeSetParams" },
		{ (void *)hx_rt.GraphExternalSemaphoresWaitNodeGetParams,
		  "hipGraphExternalSemaphoresWaitNodeGetParams" },
		{ (void *)hx_rt.GraphExternalSemaphoresWaitNodeSetParams,
		  "hipGraphExternalSemaphoresWaitNodeSetParams" },
		{ (void *)hx_rt.GraphExecExternalSemaphoresSignalNodeSetParams,
		  "hipGraphExecExternalSemaphoresSignalNodeSetParams" },
		{ (void *)hx_rt.GraphExecExternalSemaphoresWaitNodeSetParams,
		  "hipGraphExecExternalSemaphoresWaitNodeSetParams" },
		{ (void *)hx_rt.GraphAddNode, "hipGraphAddNode" },
		{ (void *)hx_rt.GraphNodeSetParams, "hipGraphNodeSetParams" },
		{ (void *)hx_rt.GraphExecNodeSetParams, "hipGraphExecNodeSetParams" },
		{ (void *)hx_rt.GraphInstantiate, "hipGraphInstantiate" },
		{ (void *)hx_rt.GraphInstantiateWithFlags, "hipGraphInstantiateWithFlags" },
		{ (void *)hx_rt.GraphInstantiateWithParams, "hipGraphInstantiateWithParams" },
		{ (void *)hx_rt.GraphLaunch, "hipGraphLaunch" },
		{ (void *)hx_rt.GraphLaunch_spt, "hipGraphLaunch_spt" },
		{ (void *)hx_rt.GraphExecDestroy, "hipGraphExecDestroy" },
		{ (void *)hx_rt.GraphDestroy, "hipGraphDestroy" },
	};
	if (!fn)
		return NULL;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].rt == fn)
			return hx_intercept_lookup(map[i].name, NULL);
	return NULL;
}

/* ---- hipGetProcAddress / hipGetDriverEntryPoint ------------------------ */

/* The runtime answers first (version, flags and status are its business);
 * a pointer it hands out for a call the shim implements is swapped for the
 * shim's.  The swap goes by pointer (covers aliases such as
 * hipGetDeviceProperties -> R0600 for hipVersion >= 600) and by name. */
static void swap_pointer(const char *symbol, void **pfn)
{
	void *mine;

	if (!*pfn)
		return;
	mine = hx_intercept_replacement(*pfn);
	if (!mine)
		mine = hx_intercept_lookup(symbol, NULL);
	if (mine) {
		hx_dbg("%s: handing out the shim's %s", symbol, symbol);
		*pfn = mine;
	}
}

hipError_t hx_intercept_get_proc_address(const char *symbol, void **pfn, int hipVersion,
					 uint64_t flags, hipDriverProcAddressQueryResult *status)
{
	hipError_t err;

	if (!hx_runtime_init() || !hx_rt.GetProcAddress) {
		hx_err("hipGetProcAddress: the HIP runtime%s has no hipGetProcAddress (HIP 6.1+)",
		       hx_rt.path[0] ? "" : " (not loaded)");
		return hipErrorNotSupported;
	}
	err = hx_rt.GetProcAddress(symbol, pfn, hipVersion, flags, status);
	if (err == hipSuccess && pfn && symbol)
		swap_pointer(symbol, pfn);
	return err;
}

/* hipGetDriverEntryPoint and its per-thread-stream twin (HIP 7.1+; the
 * _spt one hands out the same functions, so it is a way around the shim
 * too).  `spt` picks which of the runtime's two answers first. */
hipError_t hx_intercept_get_driver_entry_point(const char *symbol, void **pfn,
					       unsigned long long flags, int *status, bool spt)
{
	const char *name = spt ? "hipGetDriverEntryPoint_spt" : "hipGetDriverEntryPoint";
	hx_get_driver_entry_point_fn *real = NULL;
	hipError_t err;

	if (hx_runtime_init())
		real = spt ? hx_rt.GetDriverEntryPoint_spt : hx_rt.GetDriverEntryPoint;
	if (!real) {
		hx_err("%s: the HIP runtime has no %s (HIP 7.1+)", name, name);
		return hipErrorNotSupported;
	}
	err = real(symbol, pfn, flags, status);
	if (err == hipSuccess && pfn && symbol)
		swap_pointer(symbol, pfn);
	return err;
}

/* ---- capability report ------------------------------------------------- */

hipError_t hx_intercept_device_props_r0600(void *prop, int device)
{
	static bool told;
	char why[256];
	hipError_t err;
	bool ok;

	if (!hx_runtime_init() || !hx_rt.GetDevicePropertiesR0600) {
		hx_err("hipGetDevicePropertiesR0600: the HIP runtime has none (HIP 6.0+)");
		return hipErrorNotSupported;
	}
	err = hx_rt.GetDevicePropertiesR0600(prop, device);
	if (err != hipSuccess || !prop || !hx_runtime_usable())
		return err;
	/* Any render node with timeline syncobjs imports the fds for every
	 * device of the process, so the answer is the same for each. */
	ok = hx_op_timeline_supported(why, sizeof(why));
	((struct hx_device_prop_r0600 *)prop)->timelineSemaphoreInteropSupported = ok ? 1 : 0;
	if (!ok && !__atomic_exchange_n(&told, true, __ATOMIC_RELAXED))
		hx_warn("timelineSemaphoreInteropSupported = 0: %s", why);
	return err;
}

/* ---- graph signal nodes ------------------------------------------------ */

/* Persistent data of one signal node (or one captured signal).  Kept until
 * exit: the runtime gives no reliable hook for when the last graph or
 * exec using it is gone (see README).  About 64 bytes + 160 per semaphore. */
struct gsig {
	struct gsig *next;
	hipGraphNode_t node; /* NULL for captured signals, exec copies and nodes of
			      * a destroyed graph */
	hipGraph_t graph;    /* the graph `node` belongs to */
	unsigned n;
	hipExternalSemaphore_t *handles;
	uint64_t *values;
	void *raw_params; /* the caller's params, for GetParams */
};

static pthread_mutex_t gsig_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gsig *gsigs;

static void gsig_run(void *data)
{
	struct gsig *s = data;
	hx_op_signal_handles(s->handles, s->values, s->n);
}

static bool any_shim_handle(const struct hx_ext_sem_node_params *p)
{
	if (!p || !p->extSemArray)
		return false;
	for (unsigned i = 0; i < p->numExtSems; i++)
		if (p->extSemArray[i] && hx_op_is_shim_handle(p->extSemArray[i]))
			return true;
	return false;
}

static struct gsig *gsig_new(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			     const char *what, hipError_t *err)
{
	size_t stride = hx_abi_signal_params_stride(hx_rt.abi);
	struct gsig *s;

	*err = hx_op_signal_validate(hs, params, n, what);
	if (*err)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s) {
		s->n = n;
		s->handles = calloc(n ? n : 1, sizeof(*s->handles));
		s->values = calloc(n ? n : 1, sizeof(*s->values));
		s->raw_params = calloc(n ? n : 1, stride);
	}
	if (!s || !s->handles || !s->values || !s->raw_params) {
		if (s) {
			free(s->handles);
			free(s->values);
			free(s->raw_params);
		}
		free(s);
		hx_err("%s: out of memory", what);
		*err = hipErrorOutOfMemory;
		return NULL;
	}
	for (unsigned i = 0; i < n; i++) {
		s->handles[i] = hs[i];
		s->values[i] = hx_abi_signal_value(params, i);
	}
	if (n)
		memcpy(s->raw_params, params, n * stride);
	pthread_mutex_lock(&gsig_lock);
	s->next = gsigs;
	gsigs = s;
	pthread_mutex_unlock(&gsig_lock);
	return s;
}

static struct gsig *gsig_find(hipGraphNode_t node)
{
	struct gsig *s;

	pthread_mutex_lock(&gsig_lock);
	for (s = gsigs; s; s = s->next)
		if (s->node == node && node)
			break;
	pthread_mutex_unlock(&gsig_lock);
	return s;
}

/* Shared preamble: the runtime's own function when the shim steps aside. */
/* The runtime function a call goes on to; a runtime without it gets a
 * clear error, never a NULL call. */
#define REQUIRE_REAL(fn, name)                                                              \
	do {                                                                                \
		if (!hx_rt.fn) {                                                            \
			hx_err(name ": the HIP runtime has no " name);                      \
			return hipErrorNotSupported;                                        \
		}                                                                           \
	} while (0)

#define FORWARD_OR_FAIL(fn, name, ...)                                                      \
	do {                                                                                \
		REQUIRE_REAL(fn, name);                                                     \
		return hx_rt.fn(__VA_ARGS__);                                               \
	} while (0)

static bool graph_usable(void)
{
	return hx_runtime_init() && hx_runtime_usable();
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
	if (!graph_usable() || !any_shim_handle(p))
		FORWARD_OR_FAIL(GraphAddExternalSemaphoresSignalNode,
				"hipGraphAddExternalSemaphoresSignalNode", node, graph, deps, ndeps, p);
	if (!node || !graph) {
		hx_err("%s: %s is NULL", what, !node ? "pGraphNode" : "graph");
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
	err = hx_rt.GraphAddHostNode(node, graph, deps, ndeps, &hp);
	if (err) {
		hx_err("%s: hipGraphAddHostNode failed (error %d)", what, (int)err);
		return err;
	}
	pthread_mutex_lock(&gsig_lock);
	s->node = *node;
	s->graph = graph;
	pthread_mutex_unlock(&gsig_lock);
	hx_dbg("%s: %u semaphore(s) as host node %p", what, p->numExtSems, (void *)*node);
	return hipSuccess;
}

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
	if (!graph_usable() || !any_shim_handle(p))
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

static bool capturing(hipStream_t stream);

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
	if (!spt && capturing(stream)) {
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

hipError_t hx_graph_destroy(hipGraph_t graph)
{
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphDestroy, "hipGraphDestroy");
	err = hx_rt.GraphDestroy(graph);
	if (err || !graph)
		return err;
	/* The signal nodes' data stays (execs may still run it), but no
	 * longer answers for the nodes: their calls go to the runtime, which
	 * refuses a node of a destroyed graph, as for wait nodes. */
	pthread_mutex_lock(&gsig_lock);
	for (struct gsig *s = gsigs; s; s = s->next)
		if (s->graph == graph)
			s->node = NULL, s->graph = NULL;
	pthread_mutex_unlock(&gsig_lock);
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
	return err;
}

hipError_t hx_graph_signal_get(hipGraphNode_t node, struct hx_ext_sem_node_params *out)
{
	struct gsig *s;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	s = gsig_find(node);
	if (!s)
		FORWARD_OR_FAIL(GraphExternalSemaphoresSignalNodeGetParams,
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
		if (graph_usable() && any_shim_handle(p)) {
			hx_err("%s: node %p was created by the runtime (with no hipextsem "
			       "semaphore); it cannot take hipextsem semaphores", what, (void *)node);
			return hipErrorInvalidValue;
		}
		FORWARD_OR_FAIL(GraphExternalSemaphoresSignalNodeSetParams,
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
	pthread_mutex_lock(&gsig_lock);
	s->node = node;
	s->graph = old->graph;
	old->node = NULL;
	old->graph = NULL;
	pthread_mutex_unlock(&gsig_lock);
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
		if (graph_usable() && any_shim_handle(p)) {
			hx_err("%s: node %p was created by the runtime; it cannot take hipextsem "
			       "semaphores", what, (void *)node);
			return hipErrorInvalidValue;
		}
		FORWARD_OR_FAIL(GraphExecExternalSemaphoresSignalNodeSetParams,
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

hipError_t hx_graph_wait_set(hipGraphNode_t node, const struct hx_ext_sem_node_params *p)
{
	static const char what[] = "hipGraphExternalSemaphoresWaitNodeSetParams";
	struct gw_vals v, old;
	struct gwait *w;
	hipError_t err;

	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (!gwait_known(node)) {
		if (graph_usable() && any_shim_handle(p)) {
			hx_err("%s: node %p was created by the runtime (with no hipextsem "
			       "semaphore); it cannot take hipextsem semaphores", what, (void *)node);
			return hipErrorInvalidValue;
		}
		FORWARD_OR_FAIL(GraphExternalSemaphoresWaitNodeSetParams,
				"hipGraphExternalSemaphoresWaitNodeSetParams", node, p);
	}
	if (!p)
		return hipErrorInvalidValue;
	err = hx_op_wait_validate(p->extSemArray, p->paramsArray, p->numExtSems, what);
	if (err)
		return err;
	if (gw_vals_copy(&v, p->extSemArray, p->paramsArray, p->numExtSems))
		return hipErrorOutOfMemory;
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
		if (graph_usable() && any_shim_handle(p)) {
			hx_err("%s: node %p was created by the runtime; it cannot take hipextsem "
			       "semaphores", what, (void *)node);
			return hipErrorInvalidValue;
		}
		FORWARD_OR_FAIL(GraphExecExternalSemaphoresWaitNodeSetParams,
				"hipGraphExecExternalSemaphoresWaitNodeSetParams", exec, node, p);
	}
	if (!p)
		return hipErrorInvalidValue;
	err = hx_op_wait_validate(p->extSemArray, p->paramsArray, p->numExtSems, what);
	if (err)
		return err;
	if (gw_vals_copy(&v, p->extSemArray, p->paramsArray, p->numExtSems))
		return hipErrorOutOfMemory;
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

hipError_t hx_graph_add_node(hipGraphNode_t *node, hipGraph_t graph, const hipGraphNode_t *deps,
			     size_t ndeps, struct hx_graph_node_params *p)
{
	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (p && graph_usable()) {
		if (p->type == HX_GRAPH_NODE_EXT_SEM_SIGNAL && any_shim_handle(&p->u.extSemSignal))
			return hx_graph_add_signal_node(node, graph, deps, ndeps,
							&p->u.extSemSignal);
		if (p->type == HX_GRAPH_NODE_EXT_SEM_WAIT && any_shim_handle(&p->u.extSemWait))
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
	    (gsig_find(node) || (graph_usable() && any_shim_handle(&p->u.extSemSignal))))
		return hx_graph_signal_set(node, &p->u.extSemSignal);
	if (p && p->type == HX_GRAPH_NODE_EXT_SEM_WAIT &&
	    (gwait_known(node) || (graph_usable() && any_shim_handle(&p->u.extSemWait))))
		return hx_graph_wait_set(node, &p->u.extSemWait);
	FORWARD_OR_FAIL(GraphNodeSetParams, "hipGraphNodeSetParams", node, p);
}

hipError_t hx_graph_exec_node_set_params(hipGraphExec_t exec, hipGraphNode_t node,
					 struct hx_graph_node_params *p)
{
	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (p && p->type == HX_GRAPH_NODE_EXT_SEM_SIGNAL &&
	    (gsig_find(node) || (graph_usable() && any_shim_handle(&p->u.extSemSignal))))
		return hx_graph_exec_signal_set(exec, node, &p->u.extSemSignal);
	if (p && p->type == HX_GRAPH_NODE_EXT_SEM_WAIT &&
	    (gwait_known(node) || (graph_usable() && any_shim_handle(&p->u.extSemWait))))
		return hx_graph_exec_wait_set(exec, node, &p->u.extSemWait);
	FORWARD_OR_FAIL(GraphExecNodeSetParams, "hipGraphExecNodeSetParams", exec, node, p);
}

/* ---- stream capture ---------------------------------------------------- */

static bool capturing(hipStream_t stream)
{
	return hx_runtime_capture_status(stream) == HX_CAPTURE_STATUS_ACTIVE;
}

hipError_t hx_intercept_signal(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			       hipStream_t stream)
{
	static const char what[] = "hipSignalExternalSemaphoresAsync (captured)";
	struct gsig *s;
	hipError_t err;

	if (hx_runtime_init() && hx_runtime_usable() && hs && n && capturing(stream)) {
		if (!hx_rt.LaunchHostFunc) {
			hx_err("%s: this runtime has no hipLaunchHostFunc to record the signal "
			       "into the graph", what);
			return hipErrorStreamCaptureUnsupported;
		}
		/* Recorded as a host node: runs at every launch of the graph. */
		s = gsig_new(hs, params, n, what, &err);
		if (!s)
			return err;
		err = hx_rt.LaunchHostFunc(stream, gsig_run, s);
		if (err)
			hx_err("%s: hipLaunchHostFunc on capturing stream %p failed (error %d)",
			       what, (void *)stream, (int)err);
		else
			hx_dbg("%s: %u semaphore(s) recorded into the capture of stream %p", what,
			       n, (void *)stream);
		return err;
	}
	return hx_op_signal(hs, params, n, stream);
}
