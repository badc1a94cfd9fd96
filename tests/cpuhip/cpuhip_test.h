/* SPDX-License-Identifier: MIT */
/*
 * Test-only extensions of the cpuhip reference runtime.  They exist only in
 * tests/cpuhip's libamdhip64 (version node CPUHIP_TEST), never in a real
 * runtime: resolve them with dlsym() when a test may run on either.
 */
#ifndef CPUHIP_TEST_H
#define CPUHIP_TEST_H

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
/* Number of streams created by hipStreamCreate* and not yet destroyed. */
int cpuhipTestLiveStreams(void);
/* 5 or 6: the flavour of the loaded library. */
int cpuhipTestAbi(void);
/* (6.x flavour) The next hipLaunchHostFunc of the process first begins a Global capture
 * on its stream, through the hipStreamBeginCapture the process resolves
 * (a capture begun on another thread as the host function is enqueued). */
void cpuhipTestCaptureRaceNext(void);
/* The next hipLaunchHostFunc: another thread begins and ends a capture of
 * its stream (waited for up to 300 ms) before it looks at the stream. */
void cpuhipTestCaptureRaceNextThread(void);

#ifdef __cplusplus
}
#endif

#endif /* CPUHIP_TEST_H */
