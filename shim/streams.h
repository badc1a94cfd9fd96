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

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hipextsem/hip_api.h"
#include "runtime.h"

/* Is the handle one the runtime knows (the null and legacy streams
 * always are)?  Asked of an entry point that really checks the handle on
 * the loaded release and touches no capture state; true when the runtime
 * has none. */
bool hx_stream_valid(hipStream_t stream);

/* Is the handle one every release resolves without asking it?  The null
 * and legacy streams, and hipStreamPerThread, which names the calling
 * thread's stream (created on first use). */
static inline bool hx_stream_always_valid(hipStream_t stream)
{
	return !stream || stream == hipStreamLegacy || stream == hipStreamPerThread;
}

/* The 5.2 family: no hipLaunchHostFunc (hip_5.3). */
static inline bool hx_stream_ops_unchecked(void)
{
	return !hx_rt.LaunchHostFunc;
}

/*
 * The check before a signal: hipErrorInvalidValue and a log line for a
 * stream the runtime does not know, where the release's hipLaunchHostFunc
 * might not check it itself (5.3 on); hipSuccess otherwise, without a
 * runtime call where the release's own answer is trusted (5.2) or the
 * calling thread checked the stream already since the last destroy
 * (streams.c).  The look at that cache is inline: every signal makes it,
 * and a call into another source file is another page of code.
 */
struct hx_checked_stream {
	hipStream_t stream;
	uint64_t gen;
};
#define HX_CHECKED_SLOTS 4
extern __thread struct hx_checked_stream hx_checked_streams[HX_CHECKED_SLOTS]
	__attribute__((tls_model("initial-exec")));
extern atomic_uint_fast64_t hx_streams_destroyed;
hipError_t hx_stream_check_signal_slow(const char *what, hipStream_t stream, uint64_t gen);

static inline hipError_t hx_stream_check_signal(const char *what, hipStream_t stream)
{
	const struct hx_checked_stream *c;
	uint64_t gen;

	/* 5.2's hipStreamAddCallback checks first and its answer is
	 * mapped (registry.c). */
	if (hx_stream_always_valid(stream) || hx_stream_ops_unchecked())
		return hipSuccess;
	gen = atomic_load_explicit(&hx_streams_destroyed, memory_order_acquire);
	c = &hx_checked_streams[((uintptr_t)stream >> 4) % HX_CHECKED_SLOTS];
	if (c->stream == stream && c->gen == gen)
		return hipSuccess;
	return hx_stream_check_signal_slow(what, stream, gen);
}

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
/* 0: the calling thread has not been through the setup above yet; 1: the
 * main thread, hook registered by an import, a wait, a signal or a graph
 * launch; 2: another thread, or
 * the registration failed.  Read inline by every signal and wait
 * (exit_release.h: hx_op_exit_release_setup). */
extern __thread unsigned char hx_exit_hook_state __attribute__((tls_model("initial-exec")));
/* In a forked child (the registry's fork handler): the forking thread is
 * the child's main thread now.  If it was another thread in the parent,
 * its state says "not the main thread" and the child's exit would never
 * get the hook: the child's next call sets it up afresh. */
void hx_stream_reset_after_fork(void);
/* On 5.2, on the main thread, once: resolves its per-thread stream, so
 * that the runtime's teardown of it is registered before the shim's
 * (import calls it early; the setup above, if import did not). */
void hx_stream_exit_prepare(void);

/*
 * Before the capture guard, once per thread, by every call given
 * hipStreamPerThread (a signal, a wait, a graph launch, a capture's begin
 * or end): up to 5.4 the thread's per-thread stream lives in a
 * thread_local made when hipStreamPerThread is first resolved (hipamd
 * src/hip_stream.cpp, streamPerThreadObj, rocm-5.2.3 to 5.4.4), and
 * registering its destructor takes glibc's loader lock.  Resolved first
 * inside the guard, by the runtime call the shim makes on it, it could
 * wait for the loader lock held by a library constructor run by dlopen
 * that forks, whose fork handler waits for the guard: a deadlock
 * (streams.*.fork-ctor-*-pts).  5.5 on keep it in the TlsAggregator the
 * thread's first call makes (runtime.h: hx_runtime_thread_prepare).  One
 * thread-local load after the first such call.
 */
extern __thread bool hx_pts_ready __attribute__((tls_model("initial-exec")));
void hx_stream_pts_prepare_slow(void);
static inline void hx_stream_pts_prepare(hipStream_t stream)
{
	if (__builtin_expect(stream == hipStreamPerThread && !hx_pts_ready, 0))
		hx_stream_pts_prepare_slow();
}

/* hipStreamLegacy names the legacy null stream, as NULL does, on every
 * release that knows it; releases before 6.3 read it as a stream object in
 * hipLaunchHostFunc (clr STREAM_CAPTURE: a crash on 5.3 to 6.2) and 5.x
 * does not know it at all.  The shim's own runtime calls get NULL. */
static inline hipStream_t hx_stream_canonical(hipStream_t stream)
{
	return stream == hipStreamLegacy ? NULL : stream;
}

#endif
