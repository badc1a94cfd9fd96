/* SPDX-License-Identifier: MIT */
/*
 * The records of graph wait nodes, shared by graph_wait.c (the nodes:
 * add, capture, get/set, adoption of copies) and graph_exec.c (the execs
 * made from their graphs: instantiate, launch, update, destroy).
 *
 * A wait node is, in the real graph, an event-wait node on a private event
 * (see graph_wait.c).  One gwait per such node; hx_gw_lock covers the list
 * and every gwait field.
 */
#ifndef HIPEXTSEM_GRAPH_WAIT_H
#define HIPEXTSEM_GRAPH_WAIT_H

#include <pthread.h>

#include "graph_common.h"

/* A wait node's semaphores and the caller's params (runtime ABI layout). */
struct gw_vals {
	unsigned n;
	hipExternalSemaphore_t *handles;
	void *raw_params;
};

struct gwait {
	struct gwait *next;
	hipGraph_t graph;    /* the graph holding `node`; NULL once destroyed */
	hipGraph_t root;     /* the top-level graph whose destruction ends the
			      * node: `graph` itself, or the graph holding the
			      * child-graph node `graph` is embedded in */
	hipGraphNode_t node; /* NULL once the graph is destroyed */
	hipEvent_t event;
	int dev;             /* the device current when the event was made: its
			      * records must be on a stream of that device */
	struct gw_vals v;    /* the graph node's params */
	unsigned refs;       /* the graph + one per exec entry */
};

extern pthread_mutex_t hx_gw_lock;

void hx_gw_vals_free(struct gw_vals *v);
hipError_t hx_gw_vals_copy(struct gw_vals *dst, const hipExternalSemaphore_t *hs,
			   const void *params, unsigned n);
/* The new params of a wait node, checked and copied. */
hipError_t hx_gw_vals_from_params(struct gw_vals *v, const struct hx_ext_sem_node_params *p,
				  const char *what);
struct gwait *hx_gwait_find_locked(hipGraphNode_t node);
void hx_gwait_unref_locked(struct gwait *w);
/* The next record (after `prev`, NULL: the first) of a node of `graph`. */
struct gwait *hx_gw_next_of_graph_locked(struct gwait *prev, hipGraph_t graph);
/* Every runtime call graph wait nodes need is there (logged if not). */
bool hx_gw_runtime_ok(const char *what);

/* graph_side_streams.c, under hx_gw_lock.  A stream no exec uses any
 * more, to the pool (never destroyed). */
void hx_gw_side_pool_locked(hipStream_t s, int dev);
/* *side (on *side_dev) made a stream on `dev`, the device of the node's
 * event (a record on another device's stream is refused by every
 * release): kept if it is on `dev` already, else a pooled idle one (never
 * one behind a pending wait) or a new non-blocking one. */
hipError_t hx_gw_side_stream_locked(hipStream_t *side, int *side_dev, int dev, const char *what);

#endif
