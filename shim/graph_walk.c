/* SPDX-License-Identifier: MIT */
/*
 * Walking a graph's nodes, into the graphs embedded in child-graph nodes,
 * and adopting the copies of semaphore nodes found there.
 *
 * The runtime copies nodes behind the shim's back: hipGraphClone, and
 * hipGraphAddChildGraphNode (clr's ChildGraphNode holds a clone of the
 * child graph).  A copied signal node is a host node whose data is the
 * original's record; a copied wait node is an event-wait node on the
 * original's event.  Adoption gives each copy a record (and, for a wait
 * node, an event) of its own, so that its params can be read and set, it is
 * driven at launch independently of the original, and it is forgotten with
 * the top-level graph it belongs to.
 */
#include <stdlib.h>

#include "graph_common.h"
#include "log.h"
#include "runtime.h"

/* HIP 5.2 and earlier number hipGraphNodeType from 1 (Kernel 1, Memcpy 2,
 * Memset 3, Host 4, Graph 5, Empty 6, WaitEvent 7, EventRecord 8: the
 * hip_runtime_api.h of 5.2.3); HIP 64a4f67f5 (5.3) renumbered from 0, the
 * numbering of hip_graph.h.  Read with the newer numbers, a 5.2 event-wait
 * node is an event-record node and would never be found as a wait node,
 * so nothing would hold a launch.  The runtime's version says which
 * numbering it speaks; without one, hipLaunchHostFunc (new in 5.3, with
 * the renumbering) does.  Known once, kept. */
static int numbering_base = -1; /* 0, 1, or -1 while not known */

static int node_type_base(void)
{
	int base = __atomic_load_n(&numbering_base, __ATOMIC_RELAXED);
	int version = hx_rt.version;

	if (base >= 0)
		return base;
	if (!version && hx_rt.RuntimeGetVersion && hx_rt.RuntimeGetVersion(&version) != hipSuccess)
		version = 0;
	if (hx_rt.abi != HX_ABI_5)
		base = 0;
	else if (version)
		base = version < 50300000 ? 1 : 0;
	else
		base = hx_rt.LaunchHostFunc ? 0 : 1;
	if (base)
		hx_info("the HIP runtime (version %d) numbers graph node types from 1 (HIP 5.2 "
			"and earlier); read as such", version);
	__atomic_store_n(&numbering_base, base, __ATOMIC_RELAXED);
	return base;
}

bool hx_graph_node_type(hipGraphNode_t node, int *type)
{
	int raw = -1;

	if (!node || !hx_rt.GraphNodeGetType || hx_rt.GraphNodeGetType(node, &raw) != hipSuccess)
		return false;
	*type = raw - node_type_base();
	return true;
}

/* The shim answers for every external-semaphore node it built; a node it
 * did not build goes to the runtime's own node call only when the runtime
 * reports it as a node of that call's kind (one the runtime made itself).
 * Anything else is refused here with hipErrorInvalidValue: a NULL or
 * unknown node (clr's own answer), or a node of another kind, such as a
 * host node probed with a semaphore node call (CUDA's answer; clr 6.4.1
 * checks only that the node is valid and copies from the wrong node type).
 * No 7.x build has code behind those calls (each tail-calls a dispatch
 * slot clr never fills, docs/testing.md): a forwarded probe on Debian's
 * 7.2.4 jumped to address 0.  When the runtime cannot tell a node's kind
 * at all (no hipGraphNodeGetType), the call goes to the runtime. */
hipError_t hx_graph_foreign_node_check(hipGraphNode_t node, int kind, const char *what)
{
	int type = -1;

	if (!node) {
		hx_warn("%s: node is NULL", what);
		return hipErrorInvalidValue;
	}
	if (!hx_rt.GraphNodeGetType)
		return hipSuccess;
	if (!hx_graph_node_type(node, &type)) {
		hx_warn("%s: node %p is not a node the HIP runtime knows", what, (void *)node);
		return hipErrorInvalidValue;
	}
	if (type != kind) {
		hx_warn("%s: node %p is not an external semaphore %s node (its type is %d)", what,
			(void *)node, kind == HX_GRAPH_NODE_EXT_SEM_WAIT ? "wait" : "signal", type);
		return hipErrorInvalidValue;
	}
	return hipSuccess;
}

/* Deeper nesting than any real graph; a cycle the runtime should never
 * produce stops here instead of recursing without end. */
#define HX_GRAPH_MAX_DEPTH 64

/* *refused: the runtime's answer when it refused to list a graph's nodes,
 * or hipErrorOutOfMemory when the list could not be held. */
static bool walk(hipGraph_t graph, hx_graph_visit_fn *visit, void *ctx, unsigned depth,
		 hipError_t *refused)
{
	hipGraphNode_t *nodes;
	size_t n = 0, got;
	bool ok = true;

	if (depth > HX_GRAPH_MAX_DEPTH) {
		/* A refusal, as when the runtime cannot list the nodes: a
		 * copy left unadopted down there would wait on the original's
		 * event (an early wait) or run on its data. */
		hx_err("graph %p: child graphs nested deeper than %d levels are not searched for "
		       "hipextsem nodes; refused", (void *)graph, HX_GRAPH_MAX_DEPTH);
		*refused = hipErrorNotSupported;
		return false;
	}
	*refused = hx_rt.GraphGetNodes(graph, NULL, &n);
	if (*refused)
		return false;
	if (!n)
		return true;
	nodes = calloc(n, sizeof(*nodes));
	if (!nodes) {
		hx_err("graph %p: out of memory listing %zu nodes", (void *)graph, n);
		*refused = hipErrorOutOfMemory;
		return false;
	}
	got = n;
	*refused = hx_rt.GraphGetNodes(graph, nodes, &got);
	if (*refused) {
		free(nodes);
		return false;
	}
	for (size_t i = 0; i < got && i < n && ok; i++) {
		hipGraph_t child = NULL;
		int type = -1;

		if (!nodes[i] || !hx_graph_node_type(nodes[i], &type))
			continue;
		visit(graph, nodes[i], type, ctx);
		if (type == HX_GRAPH_NODE_GRAPH && hx_rt.GraphChildGraphNodeGetGraph &&
		    hx_rt.GraphChildGraphNodeGetGraph(nodes[i], &child) == hipSuccess && child)
			ok = walk(child, visit, ctx, depth + 1, refused);
	}
	free(nodes);
	return ok;
}

bool hx_graph_walk(hipGraph_t graph, hx_graph_visit_fn *visit, void *ctx)
{
	hipError_t refused = hipSuccess;

	if (!graph || !hx_rt.GraphGetNodes || !hx_rt.GraphNodeGetType)
		return false;
	return walk(graph, visit, ctx, 0, &refused);
}

struct adopt_ctx {
	hipGraph_t root;
	hipError_t err; /* the first copy that could not be adopted */
};

static void adopt_visit(hipGraph_t graph, hipGraphNode_t node, int type, void *ctx)
{
	struct adopt_ctx *a = ctx;
	hipError_t err = hipSuccess;

	if (type == HX_GRAPH_NODE_WAIT_EVENT)
		err = hx_graph_wait_adopt(graph, node, a->root);
	else if (type == HX_GRAPH_NODE_HOST)
		hx_graph_signal_adopt(graph, node, a->root);
	if (err && !a->err)
		a->err = err;
}

hipError_t hx_graph_adopt(hipGraph_t graph)
{
	struct adopt_ctx a = { graph, hipSuccess };
	hipError_t refused = hipSuccess;

	/* Nothing to find while no semaphore node was ever built. */
	if (!graph || (!hx_graph_wait_any() && !hx_graph_signal_any()) || !hx_rt.GraphGetNodes ||
	    !hx_rt.GraphNodeGetType)
		return hipSuccess;
	if (!walk(graph, adopt_visit, &a, 0, &refused) && refused) {
		hx_err("graph %p: its nodes could not be listed (error %d): the copies of "
		       "semaphore nodes in it (hipGraphClone, a child graph) and the signals "
		       "captured into it cannot be found", (void *)graph, (int)refused);
		return refused;
	}
	return a.err;
}
