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
 * be built the same way without blocking the single callback thread, so a
 * wait node or a captured wait holding a shim handle is refused with
 * hipErrorNotSupported / hipErrorStreamCaptureUnsupported and a log line.
 * A shim handle never reaches the runtime's graph API.
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

hipError_t hx_intercept_get_driver_entry_point(const char *symbol, void **pfn,
					       unsigned long long flags, int *status)
{
	hipError_t err;

	if (!hx_runtime_init() || !hx_rt.GetDriverEntryPoint) {
		hx_err("hipGetDriverEntryPoint: the HIP runtime has no hipGetDriverEntryPoint "
		       "(HIP 7.1+)");
		return hipErrorNotSupported;
	}
	err = hx_rt.GetDriverEntryPoint(symbol, pfn, flags, status);
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
	hipGraphNode_t node; /* NULL for captured signals and exec copies */
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
#define FORWARD_OR_FAIL(fn, name, ...)                                                      \
	do {                                                                                \
		if (!hx_rt.fn) {                                                            \
			hx_err(name ": the HIP runtime has no " name);                      \
			return hipErrorNotSupported;                                        \
		}                                                                           \
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
	pthread_mutex_unlock(&gsig_lock);
	hx_dbg("%s: %u semaphore(s) as host node %p", what, p->numExtSems, (void *)*node);
	return hipSuccess;
}

static hipError_t refuse_wait(const char *what)
{
	hx_err("%s: graph wait nodes on hipextsem semaphores are not supported (a host node "
	       "would block the runtime's only callback thread); use "
	       "hipWaitExternalSemaphoresAsync on the stream before hipGraphLaunch", what);
	return hipErrorNotSupported;
}

hipError_t hx_graph_add_wait_node(hipGraphNode_t *node, hipGraph_t graph,
				  const hipGraphNode_t *deps, size_t ndeps,
				  const struct hx_ext_sem_node_params *p)
{
	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (graph_usable() && any_shim_handle(p))
		return refuse_wait("hipGraphAddExternalSemaphoresWaitNode");
	FORWARD_OR_FAIL(GraphAddExternalSemaphoresWaitNode, "hipGraphAddExternalSemaphoresWaitNode",
			node, graph, deps, ndeps, p);
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
	old->node = NULL;
	s->node = node;
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
	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	/* The shim never creates wait nodes: every one is the runtime's. */
	FORWARD_OR_FAIL(GraphExternalSemaphoresWaitNodeGetParams,
			"hipGraphExternalSemaphoresWaitNodeGetParams", node, out);
}

hipError_t hx_graph_wait_set(hipGraphNode_t node, const struct hx_ext_sem_node_params *p)
{
	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (graph_usable() && any_shim_handle(p))
		return refuse_wait("hipGraphExternalSemaphoresWaitNodeSetParams");
	FORWARD_OR_FAIL(GraphExternalSemaphoresWaitNodeSetParams,
			"hipGraphExternalSemaphoresWaitNodeSetParams", node, p);
}

hipError_t hx_graph_exec_wait_set(hipGraphExec_t exec, hipGraphNode_t node,
				  const struct hx_ext_sem_node_params *p)
{
	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (graph_usable() && any_shim_handle(p))
		return refuse_wait("hipGraphExecExternalSemaphoresWaitNodeSetParams");
	FORWARD_OR_FAIL(GraphExecExternalSemaphoresWaitNodeSetParams,
			"hipGraphExecExternalSemaphoresWaitNodeSetParams", exec, node, p);
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
			return refuse_wait("hipGraphAddNode");
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
	if (p && p->type == HX_GRAPH_NODE_EXT_SEM_WAIT && graph_usable() &&
	    any_shim_handle(&p->u.extSemWait))
		return refuse_wait("hipGraphNodeSetParams");
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
	if (p && p->type == HX_GRAPH_NODE_EXT_SEM_WAIT && graph_usable() &&
	    any_shim_handle(&p->u.extSemWait))
		return refuse_wait("hipGraphExecNodeSetParams");
	FORWARD_OR_FAIL(GraphExecNodeSetParams, "hipGraphExecNodeSetParams", exec, node, p);
}

/* ---- stream capture ---------------------------------------------------- */

static bool capturing(hipStream_t stream)
{
	int status = 0;

	/* The legacy null stream cannot be captured. */
	if (!stream || !hx_rt.StreamIsCapturing)
		return false;
	return hx_rt.StreamIsCapturing(stream, &status) == hipSuccess &&
	       status == HX_CAPTURE_STATUS_ACTIVE;
}

hipError_t hx_intercept_signal(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			       hipStream_t stream)
{
	static const char what[] = "hipSignalExternalSemaphoresAsync (captured)";
	struct gsig *s;
	hipError_t err;

	if (hx_runtime_init() && hx_runtime_usable() && capturing(stream) && hs && n &&
	    hx_rt.LaunchHostFunc) {
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
