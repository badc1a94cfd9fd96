/* SPDX-License-Identifier: MIT */
/* Shared by cpuhip_graph_tests.c and cpuhip_capture_tests.c. */
#ifndef CPUHIP_GRAPH_TEST_H
#define CPUHIP_GRAPH_TEST_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipextsem/hip_abi.h"
#include "hipextsem/hip_api.h"
#include "hipextsem/hip_graph.h"

extern int failures;

#include "check.h"

#define ERR_DESTROYED ((hipError_t)709)
#define ERR_UNMATCHED ((hipError_t)903)
#define ERR_UNJOINED ((hipError_t)904)
#define ERR_WRONG_THREAD ((hipError_t)908)

hipError_t hipGraphExecEventWaitNodeSetEvent(hipGraphExec_t exec, hipGraphNode_t node,
					     hipEvent_t event);

/* Host nodes and functions append their userData (a small integer) to a
 * log; log_is compares it with an expected sequence. */
void log_fn(void *p);
void log_reset(void);
int log_is(const int *want, int n);
hipGraphNode_t host_node(hipGraph_t g, const hipGraphNode_t *deps, size_t n, int tag);
size_t ndeps(hipGraphNode_t n);
size_t nnodes(hipGraph_t g);
void launch_and_wait(hipGraph_t g, hipStream_t s);

void t_capture_info(void);
void t_capture_cross_stream(void);
void t_capture_modes(void);

#endif
