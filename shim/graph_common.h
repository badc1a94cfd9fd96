/* SPDX-License-Identifier: MIT */
/*
 * What the graph files share (graph.c dispatches to graph_signal.c and
 * graph_wait.c; those two never call each other).
 */
#ifndef HIPEXTSEM_GRAPH_COMMON_H
#define HIPEXTSEM_GRAPH_COMMON_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "hipextsem/hip_graph.h"
#include "log.h"
#include "ops.h"
#include "runtime.h"

/* The runtime function a call goes on to; a runtime without it gets a
 * clear error, never a NULL call. */
#define REQUIRE_REAL(fn, name)                                                              \
	do {                                                                                \
		if (!hx_rt.fn) {                                                            \
			hx_err(name ": the HIP runtime has no " name);                      \
			return hipErrorNotSupported;                                        \
		}                                                                           \
	} while (0)

/* The runtime's own function, when the shim steps aside. */
#define FORWARD_OR_FAIL(fn, name, ...)                                                      \
	do {                                                                                \
		REQUIRE_REAL(fn, name);                                                     \
		return hx_rt.fn(__VA_ARGS__);                                               \
	} while (0)

/* A node call on a node the shim did not build: refused unless the
 * runtime reports the node as one of `kind` (hx_graph_foreign_node_check),
 * then forwarded. */
#define FORWARD_FOREIGN_NODE(node, kind, fn, name, ...)                                     \
	do {                                                                                \
		hipError_t foreign_err_ = hx_graph_foreign_node_check(node, kind, name);   \
		if (foreign_err_ != hipSuccess)                                             \
			return foreign_err_;                                                \
		FORWARD_OR_FAIL(fn, name, __VA_ARGS__);                                     \
	} while (0)

/* hipErrorStreamCaptureUnjoined (HIP's number; hip_api.h does not name
 * it). */
#define HX_ERR_CAPTURE_UNJOINED ((hipError_t)904)

/* The graph locks across fork() (graph_fork.c): registered once, by the
 * registry's set-up after its own handlers, so that they are taken before the registry lock
 * at fork, in the order graph code takes them (the capture guard, then a
 * launch holds the wait lock while it queues a wait). */
void hx_graph_fork_setup(void);

/* Without a usable device every graph call goes to the runtime. */
bool hx_reg_init(void);
static inline bool hx_graph_usable(void)
{
	return hx_reg_init() && hx_runtime_usable();
}

/* Does the node's array hold a semaphore the shim handed out? */
static inline bool hx_graph_any_shim_handle(const struct hx_ext_sem_node_params *p)
{
	if (!p || !p->extSemArray)
		return false;
	for (unsigned i = 0; i < p->numExtSems; i++)
		if (p->extSemArray[i] && hx_op_is_shim_handle(p->extSemArray[i]))
			return true;
	return false;
}


/* New params for a node the shim did not build: a hipextsem semaphore
 * cannot go into the runtime's own node (refused, logged: true); anything
 * else is the runtime's business (false: the caller forwards). */
static inline bool hx_graph_refuse_foreign(hipGraphNode_t node,
					   const struct hx_ext_sem_node_params *p, const char *what)
{
	if (!hx_graph_usable() || !hx_graph_any_shim_handle(p))
		return false;
	hx_err("%s: node %p was created by the runtime (with no hipextsem semaphore); it "
	       "cannot take hipextsem semaphores", what, (void *)node);
	return true;
}

/* Records a signal or a wait into the capture of `stream` (graph_signal.c,
 * graph_wait.c); dispatch.c decided that the stream is capturing. */
hipError_t hx_graph_capture_signal(const hipExternalSemaphore_t *hs, const void *params,
				   unsigned n, hipStream_t stream);
hipError_t hx_graph_capture_wait(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
				 hipStream_t stream);

/* graph_walk.c */
/* The type of `node` in hip_graph.h's numbering (that of HIP 5.3 and
 * later), whatever the numbering of the runtime in front of the shim: HIP
 * 5.2 and earlier number hipGraphNodeType from 1.  False when the runtime
 * cannot say. */
bool hx_graph_node_type(hipGraphNode_t node, int *type);
/* hipSuccess when a node call on `node`, which the shim did not build, may
 * go to the runtime's own call: the runtime reports it as an external
 * semaphore node of `kind` (HX_GRAPH_NODE_EXT_SEM_SIGNAL or _WAIT), or it
 * cannot tell kinds.  Otherwise hipErrorInvalidValue, logged. */
hipError_t hx_graph_foreign_node_check(hipGraphNode_t node, int kind, const char *what);
typedef void hx_graph_visit_fn(hipGraph_t graph, hipGraphNode_t node, int type, void *ctx);
/* Visits every node of `graph` and, below each child-graph node, of the
 * graph embedded in it (any depth), in the runtime's node order.  False
 * when the runtime cannot list a graph's nodes. */
bool hx_graph_walk(hipGraph_t graph, hx_graph_visit_fn *visit, void *ctx);
/* The graphs embedded below `graph` at any depth (malloc'ed, *n of them;
 * NULL when none or out of memory, logged), for forgetting the records of
 * the semaphore node copies in them. */
hipGraph_t *hx_graph_nested(hipGraph_t graph, size_t *n);
/* Gives the copies of semaphore nodes that the runtime made (hipGraphClone,
 * child-graph nodes) records of their own, owned by `graph`, and marks the
 * signals captured into it as the graph's.  Not hipSuccess when the
 * runtime refused to list the nodes, or a copied wait node its own event:
 * such a copy still waits for the original's event, and a captured signal
 * not marked would not signal, so the graph must not be instantiated
 * (a later call adopts them again). */
hipError_t hx_graph_adopt(hipGraph_t graph);

/* graph_signal.c */
bool hx_graph_signal_known(hipGraphNode_t node);
bool hx_graph_signal_any(void);
void hx_graph_signal_adopt(hipGraph_t graph, hipGraphNode_t node, hipGraph_t root);
void hx_graph_signal_forget_graph(hipGraph_t graph);
void hx_graph_signal_forget_node(hipGraphNode_t node);
void hx_graph_signal_forget_dead(void);
/* The signal records' lock (graph_signal.c), taken across fork. */
extern pthread_mutex_t hx_gsig_lock;
/* graph_wait.c */
bool hx_graph_wait_known(hipGraphNode_t node);
bool hx_graph_wait_any(void);
hipError_t hx_graph_wait_adopt(hipGraph_t graph, hipGraphNode_t node, hipGraph_t root);
void hx_graph_wait_forget_graph(hipGraph_t graph);
void hx_graph_wait_forget_node(hipGraphNode_t node);
void hx_graph_wait_forget_dead(void);

#endif
