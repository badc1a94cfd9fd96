/* SPDX-License-Identifier: MIT */
/*
 * cpuhip (both flavours): graph objects shared by cpuhip_graph.c (graphs and
 * nodes), cpuhip_graph_exec.c (instantiate, launch, update) and
 * cpuhip_capture.c (stream capture).  One lock, glock, guards all of them.
 * Lock order: cpuhip.c's stream lock may be held when glock is taken, never
 * the other way round.
 */
#ifndef CPUHIP_GRAPH_INTERNAL_H
#define CPUHIP_GRAPH_INTERNAL_H

#include "cpuhip_internal.h"
#include "hipextsem/hip_graph.h"

/* Not declared in hip_graph.h (the shim does not use it). */
hipError_t hipGraphExecEventWaitNodeSetEvent(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
					     hipEvent_t event);

/* Errors hip_api.h does not name (HIP's hipError_t values). */
#define CPUHIP_ERR_CAPTURE_UNMATCHED ((hipError_t)903)
#define CPUHIP_ERR_CAPTURE_UNJOINED ((hipError_t)904)
#define CPUHIP_ERR_CAPTURE_WRONG_THREAD ((hipError_t)908)

#if CPUHIP_ABI == 5
typedef struct hx_sem_signal_params_v5 sem_signal_t;
typedef struct hx_sem_wait_params_v5 sem_wait_t;
#else
typedef struct hx_sem_signal_params_v6 sem_signal_t;
typedef struct hx_sem_wait_params_v6 sem_wait_t;
#endif

struct nodevec {
	struct hipGraphNode **v;
	size_t n, cap;
};

struct hipGraphNode {
	struct hipGraphNode *next; /* insertion order in the graph */
	struct ihipGraph *graph;
	int type;
	/* clr GraphNode::id_: a clone keeps the id of the node it copies
	 * (hipGraphNodeFindInClone matches on it). */
	unsigned int id;
	struct hx_host_node_params host;
	hipEvent_t event; /* event-wait / event-record nodes */
	struct hx_ext_sem_node_params es; /* arrays owned by the node */
	struct ihipGraph *child; /* HX_GRAPH_NODE_GRAPH: the embedded copy */
	struct nodevec deps; /* clr dependencies_, in the order given */
	struct nodevec edges; /* clr edges_: the nodes depending on this one */
	/* Exec copies: the graph node instantiated from (clr GraphExec
	 * clonedNodes_), top level only. */
	struct hipGraphNode *orig;
	/* Added by a hipGraphAdd*Node call while a stream captured into the
	 * graph (clr Graph::AddManualNodeDuringCapture). */
	bool manual;
};

struct ihipGraph {
	struct ihipGraph *next_live;
	struct hipGraphNode *head, *tail;
	size_t n;
	bool live; /* on the list of graphs user handles may name */
	bool cloned; /* clr pOriginalGraph_ != NULL */
	bool embedded; /* owned by a child-graph node */
};

struct hipGraphExec {
	struct hipGraphExec *next_live;
	struct ihipGraph *g; /* clr clonedGraph_ (not live) */
	unsigned long long flags;
};

extern pthread_mutex_t glock;
extern struct ihipGraph *graphs;
extern struct hipGraphExec *execs;

struct ihipGraph *graph_ok_locked(hipGraph_t g);
struct hipGraphNode *node_ok_locked(hipGraphNode_t n);
struct hipGraphExec *exec_ok_locked(hipGraphExec_t e);
int nodevec_push(struct nodevec *v, struct hipGraphNode *n);
bool nodevec_has(const struct nodevec *v, const struct hipGraphNode *n);
void nodevec_remove(struct nodevec *v, const struct hipGraphNode *n);
struct ihipGraph *graph_new_locked(bool live);
void graph_free_locked(struct ihipGraph *g);
struct ihipGraph *graph_clone_locked(const struct ihipGraph *src, bool live,
				     struct hipGraphNode ***map_from, struct hipGraphNode ***map_to);
void node_unlink_free_locked(struct hipGraphNode *n);
/* clr Graph::TopologicalOrder (Kahn, FIFO from the roots in insertion
 * order).  Returns a malloc'd array of g->n nodes, or NULL. */
struct hipGraphNode **graph_topo_locked(const struct ihipGraph *g);
hipError_t add_node_locked(hipGraphNode_t *out, struct ihipGraph *g, const hipGraphNode_t *deps,
			   size_t ndeps, bool manual_ok, struct hipGraphNode *proto);
hipError_t copy_es(struct hx_ext_sem_node_params *dst, const struct hx_ext_sem_node_params *src,
		   bool wait);
void free_es(struct hx_ext_sem_node_params *es);

/* cpuhip_capture.c, glock held */
bool capture_graph_in_use_locked(const struct ihipGraph *g);
void capture_graph_gone_locked(const struct ihipGraph *g);

#endif
