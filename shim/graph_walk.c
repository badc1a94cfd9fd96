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

/* A graph's nodes, listed, and how far the walk has visited them. */
struct walk_frame {
	hipGraph_t graph;
	hipGraphNode_t *nodes;
	size_t n, next;
};

/* The nodes of `graph` into *f; *refused: the runtime's answer when it
 * refused to list them, or hipErrorOutOfMemory. */
static bool list_nodes(hipGraph_t graph, struct walk_frame *f, hipError_t *refused)
{
	size_t n = 0, got;

	memset(f, 0, sizeof(*f));
	f->graph = graph;
	*refused = hx_rt.GraphGetNodes(graph, NULL, &n);
	if (*refused)
		return false;
	if (!n)
		return true;
	f->nodes = calloc(n, sizeof(*f->nodes));
	if (!f->nodes) {
		hx_err("graph %p: out of memory listing %zu nodes", (void *)graph, n);
		*refused = hipErrorOutOfMemory;
		return false;
	}
	got = n;
	*refused = hx_rt.GraphGetNodes(graph, f->nodes, &got);
	if (*refused) {
		free(f->nodes);
		f->nodes = NULL;
		return false;
	}
	f->n = got < n ? got : n;
	return true;
}

/* Depth first, each node visited before the graph it embeds, in the
 * runtime's node order.  Iterative, with the frames on the heap: child
 * graphs nest as deep as the application made them (no limit of the
 * shim's, which would refuse a graph that holds no semaphore node of its
 * own); the runtime's child graphs are copies, so a cycle cannot occur,
 * and a runaway depth ends as out of memory.  *refused: the runtime's
 * answer when it refused to list some graph's nodes, or
 * hipErrorOutOfMemory when a list could not be held. */
static bool walk(hipGraph_t graph, hx_graph_visit_fn *visit, void *ctx, hipError_t *refused)
{
	struct walk_frame *st = NULL;
	size_t depth = 0, cap = 0;
	bool ok = true;

	*refused = hipSuccess;
	for (;;) {
		struct walk_frame *f;
		hipGraph_t child = NULL;
		hipGraphNode_t node;
		int type = -1;

		if (graph) {
			if (depth == cap) {
				size_t ncap = cap ? cap * 2 : 8;
				struct walk_frame *g = realloc(st, ncap * sizeof(*st));

				if (!g) {
					hx_err("graph %p: out of memory walking %zu levels of child "
					       "graphs", (void *)graph, depth);
					*refused = hipErrorOutOfMemory;
					ok = false;
					break;
				}
				st = g;
				cap = ncap;
			}
			if (!list_nodes(graph, &st[depth], refused)) {
				ok = false;
				break;
			}
			depth++;
			graph = NULL;
		}
		if (!depth)
			break;
		f = &st[depth - 1];
		if (f->next == f->n) {
			free(f->nodes);
			depth--;
			continue;
		}
		node = f->nodes[f->next++];
		if (!node || !hx_graph_node_type(node, &type))
			continue;
		visit(f->graph, node, type, ctx);
		if (type == HX_GRAPH_NODE_GRAPH && hx_rt.GraphChildGraphNodeGetGraph &&
		    hx_rt.GraphChildGraphNodeGetGraph(node, &child) == hipSuccess && child)
			graph = child;
	}
	while (depth)
		free(st[--depth].nodes);
	free(st);
	return ok;
}

bool hx_graph_walk(hipGraph_t graph, hx_graph_visit_fn *visit, void *ctx)
{
	hipError_t refused = hipSuccess;

	if (!graph || !hx_rt.GraphGetNodes || !hx_rt.GraphNodeGetType)
		return false;
	return walk(graph, visit, ctx, &refused);
}

struct nested_ctx {
	hipGraph_t *g;
	size_t n, cap;
	bool oom;
};

static void nested_visit(hipGraph_t graph, hipGraphNode_t node, int type, void *ctx)
{
	struct nested_ctx *c = ctx;
	hipGraph_t child = NULL;

	(void)graph;
	if (type != HX_GRAPH_NODE_GRAPH || c->oom ||
	    hx_rt.GraphChildGraphNodeGetGraph(node, &child) != hipSuccess || !child)
		return;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 8;
		hipGraph_t *g = realloc(c->g, ncap * sizeof(*g));

		if (!g) {
			c->oom = true;
			return;
		}
		c->g = g;
		c->cap = ncap;
	}
	c->g[c->n++] = child;
}

hipGraph_t *hx_graph_nested(hipGraph_t graph, size_t *n)
{
	struct nested_ctx c = { NULL, 0, 0, false };

	*n = 0;
	if (!graph || !hx_rt.GraphChildGraphNodeGetGraph)
		return NULL;
	if (!hx_graph_walk(graph, nested_visit, &c) || c.oom) {
		hx_err("graph %p: its child graphs could not all be listed; records of semaphore "
		       "nodes copied into them may outlive them", (void *)graph);
		if (c.oom) {
			free(c.g);
			return NULL;
		}
	}
	*n = c.n;
	return c.g;
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
	if (!walk(graph, adopt_visit, &a, &refused) && refused) {
		hx_err("graph %p: its nodes could not be listed (error %d): the copies of "
		       "semaphore nodes in it (hipGraphClone, a child graph) and the signals "
		       "captured into it cannot be found", (void *)graph, (int)refused);
		return refused;
	}
	return a.err;
}
