/* SPDX-License-Identifier: MIT */
/*
 * Test-only extensions of the cpuhip reference runtime.  They exist only in
 * tests/cpuhip's libamdhip64 (version node CPUHIP_TEST), never in a real
 * runtime: resolve them with dlsym() when a test may run on either.
 */
#ifndef CPUHIP_TEST_H
#define CPUHIP_TEST_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueue a command whose execution sleeps `usec` microseconds: makes a
 * stream observably busy. */
hipError_t cpuhipTestEnqueueDelay(hipStream_t stream, unsigned int usec);
/* Kernel thread id of the worker that executes `stream`'s commands. */
hipError_t cpuhipTestStreamWorkerTid(hipStream_t stream, pid_t *tid);
/* Thread id of the process-wide callback handler thread (0 if not started). */
hipError_t cpuhipTestCallbackThreadTid(pid_t *tid);
/* 6.x flavours: calls of the hidden hipExternalMemoryGetMappedMipmappedArray
 * that CPUHIP_MIPMAP=hidden hands out through hipGetProcAddress. */
int cpuhipTestMipmapCalls(void);
/* Number of streams created by hipStreamCreate* and not yet destroyed. */
int cpuhipTestLiveStreams(void);
/* Number of events created and not yet destroyed. */
int cpuhipTestLiveEvents(void);
/* One of CPUHIP_NOISE's points, for a test build of the shim. */
void cpuhipTestNoise(void);
/* 5 or 6: the flavour of the loaded library. */
int cpuhipTestAbi(void);
/* (6.x flavour) The next hipLaunchHostFunc of the process first begins a Global capture
 * on its stream, through the hipStreamBeginCapture the process resolves
 * (a capture begun on another thread as the host function is enqueued). */
void cpuhipTestCaptureRaceNext(void);
/* The next hipLaunchHostFunc: another thread begins and ends a capture of
 * its stream (waited for up to 300 ms) before it looks at the stream. */
void cpuhipTestCaptureRaceNextThread(void);

/* ---- The runtime boundary (cpuhip_interleave.c, tests/interleave) ----
 * Every entry point counts as a boundary point on entry ("before") and on
 * return ("after"); calls an entry point makes to another are not
 * counted, nor the calls of an interference. */
#define CPUHIP_IL_PENDING 0 /* the point was not reached */
#define CPUHIP_IL_RUNNING 1 /* the interference is running */
#define CPUHIP_IL_DONE 2    /* it ran to completion */
#define CPUHIP_IL_BLOCKED 3 /* it did not complete within its bound: still running */
/* An interference: `stream` is the stream argument of the call at whose
 * boundary it runs (NULL for a call without one). */
typedef void (*cpuhipTestInterference)(void *arg, hipStream_t stream);
/* Arms one plan for the calling thread's calls: before (after = 0) or
 * after the nth call of `entry` (counted from now), fn(arg, stream) runs
 * on a new thread, and the call waits for it to complete, at most
 * timeout_ms (0: 5000), or less once the interference has slept (futex or
 * a timed sleep) for 400 ms (blocked by a lock or a condition); then
 * the call goes on with the interference still running
 * (CPUHIP_IL_BLOCKED).  Also starts a new trace.  -1 if a previous
 * interference is still running or the arguments are wrong. */
int cpuhipTestInterleave(const char *entry, unsigned nth, int after,
			 cpuhipTestInterference fn, void *arg, unsigned timeout_ms);
/* As cpuhipTestInterleave with an interference named: refuse-wait,
 * fail-host-fn, fail-event-record, capture-global, capture-thread, capture-relaxed,
 * capture-end, capture-invalidate, stream-destroy (each on the call's
 * stream), fork (a child that exits at once, waited for), exit (exit(0)
 * from the interference thread), none.  CPUHIP_INTERLEAVE=ENTRY:N:WHEN:ACTION
 * (WHEN before or after) arms the same for every thread from the start. */
int cpuhipTestInterleaveAction(const char *entry, unsigned nth, int after, const char *action,
			       unsigned timeout_ms);
/* Called by an interference (fn) that goes on running: it counts as
 * done from now (a capture's owner that stays to end it later). */
void cpuhipTestInterferenceDone(void);
/* State of the armed plan (CPUHIP_IL_*). */
int cpuhipTestInterleaveState(void);
/* Disarms: waits at most timeout_ms for an interference still running
 * and returns the plan's final state. */
int cpuhipTestInterleaveFinish(unsigned timeout_ms);
/* on: starts recording the calling thread's boundary calls (no plan);
 * off: stops counting. */
void cpuhipTestBoundaryTrace(int on);
/* The calls recorded since the plan or trace began, one name a line, into
 * buf (truncated to len); returns the length, (size_t)-1 if the record
 * overflowed. */
size_t cpuhipTestBoundaryCalls(char *buf, size_t len);
/* One-shot faults: the next stream wait (hipStreamWaitValue32/64) answers
 * hipErrorNotSupported after its checks, as under CPUHIP_STREAM_WAIT=refuse;
 * the next hipLaunchHostFunc / hipStreamAddCallback answers
 * hipErrorOutOfMemory and enqueues nothing. */
void cpuhipTestRefuseNextStreamWait(void);
void cpuhipTestFailNextHostFunc(void);
/* The next hipEventRecord of any thread fails with hipErrorOutOfMemory and
 * records nothing (5.2's per-thread wait orders hipStreamPerThread after
 * the shim's stream with one). */
void cpuhipTestFailNextEventRecord(void);
/* The same three faults and the refusals below, one-shot each, for the
 * calling thread's own calls only: `what` is a mask of CPUHIP_FAIL_*,
 * replacing the thread's armed set; returns the set armed before (a bit
 * cleared since was taken). */
#define CPUHIP_FAIL_HOST_FN 1
#define CPUHIP_FAIL_EVENT_RECORD 2
#define CPUHIP_FAIL_STREAM_WAIT 4
/* The runtime refusing the set-up calls a layer above it makes, each with
 * hipErrorOutOfMemory and nothing made (clr hip_internal.hpp
 * HIP_INIT_API_INTERNAL answers it for any call whose thread state cannot
 * be made; the creations below can fail on their own as well):
 * hipEventCreate / hipEventCreateWithFlags (clr hip_event.cpp
 * ihipEventCreateWithFlags), */
#define CPUHIP_FAIL_EVENT_CREATE 8
/* hipStreamCreate / WithFlags / WithPriority (clr hip_stream.cpp
 * ihipStreamCreate: hip::Stream::Create, its hardware queue, failing), */
#define CPUHIP_FAIL_STREAM_CREATE 16
/* hipGraphAddEventWaitNode, hipGraphEventWaitNodeSetEvent and
 * hipGraphAddEventRecordNode (clr hip_graph.cpp: HIP_INIT_API; no node
 * is added, the node keeps its event), */
#define CPUHIP_FAIL_GRAPH_EVENT_NODE 32
/* hipGraphGetNodes (clr hip_graph.cpp: HIP_INIT_API). */
#define CPUHIP_FAIL_GRAPH_GET_NODES 64
/* hipStreamWriteValue64 (clr hip_stream_ops.cpp ihipStreamOperation:
 * HIP_INIT_API, then the stream-operation command's allocation; nothing
 * is enqueued). */
#define CPUHIP_FAIL_WRITE_VALUE 128
/* hipHostMalloc and hipExtMallocWithFlags (clr hip_memory.cpp
 * ihipMalloc: the allocation failing -> hipErrorOutOfMemory, nothing
 * allocated). */
#define CPUHIP_FAIL_HOST_MALLOC 256
int cpuhipTestFailOnThisThread(int what);

#ifdef __cplusplus
}
#endif

#endif /* CPUHIP_TEST_H */
