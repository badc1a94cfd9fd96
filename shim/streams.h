/* SPDX-License-Identifier: MIT */
/*
 * Stream handles as each HIP release treats them (docs/streams.md).  The
 * releases differ in which entry points resolve hipStreamPerThread and
 * which check a handle at all; a wrong guess is a crash inside the
 * runtime, not an error code.  This module picks, once, from the entry
 * points the runtime exports, how signal and wait check a stream and
 * where a wait on hipStreamPerThread is enqueued, and releases pending
 * waits before the runtime's own per-thread-stream teardown at exit.
 */
#ifndef HIPEXTSEM_STREAMS_H
#define HIPEXTSEM_STREAMS_H

#include <stdbool.h>

#include "hipextsem/hip_api.h"

/* Is the handle one the runtime knows (the null and legacy streams
 * always are)?  Asked of an entry point that really checks the handle on
 * the loaded release and touches no capture state; true when the runtime
 * has none. */
bool hx_stream_valid(hipStream_t stream);

/* The check before a signal: hipErrorInvalidValue and a log line for a
 * stream the runtime does not know, where the release's hipLaunchHostFunc
 * might not check it itself (the development tree); hipSuccess otherwise,
 * without a runtime call where the release's own answer is trusted. */
hipError_t hx_stream_check_signal(const char *what, hipStream_t stream);

/*
 * Before a wait: checks the stream where the release's stream wait does
 * not (5.2), and names in *target the stream the wait is enqueued on: the
 * application's, or, for hipStreamPerThread on a release whose stream
 * wait does not resolve it (5.2), a stream of the shim's own for the
 * calling thread, which hx_stream_wait_join then makes the per-thread
 * stream wait for.  hipErrorInvalidValue (logged) for a bad stream.
 */
hipError_t hx_stream_wait_prepare(const char *what, hipStream_t stream, hipStream_t *target);
/* After the wait was enqueued on `target`: orders `stream` after it when
 * they differ. */
hipError_t hx_stream_wait_join(const char *what, hipStream_t stream, hipStream_t target);

/* Names `release`, the release of every pending wait, for the shim's
 * destructor that runs in exit() before the runtime's per-thread-stream
 * teardown (streams.c keeps it the main thread's newest thread_local
 * destructor, whichever thread made the semaphore calls); on the main
 * thread it also registers that destructor once, should the interposition
 * of __cxa_thread_atexit_impl not be reached.  Takes glibc's loader lock
 * once: call it under no lock of the shim's.  One thread-local load after
 * the first call. */
void hx_stream_exit_release_setup(const char *what, void (*release)(void));
/* On 5.2, on the main thread, once: resolves its per-thread stream, so
 * that the runtime's teardown of it is registered before the shim's
 * (import calls it early; the setup above, if import did not). */
void hx_stream_exit_prepare(void);

/* hipStreamLegacy names the legacy null stream, as NULL does, on every
 * release that knows it; releases before 6.3 read it as a stream object in
 * hipLaunchHostFunc (clr STREAM_CAPTURE: a crash on 5.3 to 6.2) and 5.x
 * does not know it at all.  The shim's own runtime calls get NULL. */
static inline hipStream_t hx_stream_canonical(hipStream_t stream)
{
	return stream == hipStreamLegacy ? NULL : stream;
}

#endif
