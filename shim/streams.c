/* SPDX-License-Identifier: MIT */
/*
 * Stream handles as each release treats them (streams.h, docs/streams.md).
 *
 * What the releases do with a stream handle, in the calls the shim makes
 * (each read in the ROCm source named; docs/streams.md):
 *
 *  - 5.2 (hipamd rocm-5.2.3, Debian 12's runtime): hipStreamWaitValue64
 *    and the other stream operations use the handle unchecked
 *    (src/hip_stream_ops.cpp ihipStreamOperation -> hip::getQueue, a cast),
 *    so hipStreamPerThread there is a segfault and a destroyed stream a
 *    use-after-free.  hipStreamAddCallback and hipStreamGetPriority go
 *    through hip::isValid(hipStream_t&), which resolves hipStreamPerThread
 *    and checks the set of live streams.  hipamd 45a715c8 (5.3) added
 *    hip::isValid to ihipStreamOperation; it is still there in the
 *    development tree.  5.2 exports no hipLaunchHostFunc (node hip_5.3 of
 *    clr's hip_hcc.map.in) and no hipStreamGetDevice (5.6): that is how the
 *    family is told apart, without reading a version.
 *  - The development tree of clr (rocm-systems projects/clr at 02bb78cf;
 *    the first release without the checks is not known):
 *    hipStreamQuery_common, streamCallback_common (hipLaunchHostFunc,
 *    hipStreamAddCallback) and hipStreamGetPriority_common use the handle
 *    without hip::isValid; hipStreamGetDevice (hip_stream.cpp) keeps it, and
 *    reads no capture state.
 *  - 5.3 to 6.4.x check in streamCallback_common, but hipLaunchHostFunc
 *    runs the STREAM_CAPTURE macro first, which reads the stream object
 *    behind the handle (clr rocm-5.7.1 hipamd/src/hip_stream.cpp
 *    hipLaunchHostFunc_common, hip_internal.hpp STREAM_CAPTURE; the same
 *    order in 6.0.x, 6.1.x, 6.2.x, 6.3.0 to 6.3.3 and 6.4.1): Debian's
 *    5.7.1 on the fake AMD device died with SIGSEGV on a garbage handle.
 *    So every release with
 *    hipLaunchHostFunc gets the check before a signal, at the cost of one
 *    runtime call per signal on a created stream; 5.2's
 *    hipStreamAddCallback checks first and answers for itself.
 *  - hipStreamQuery is no check on any release: from 5.5.0 to 6.0.x it
 *    answers hipErrorStreamCaptureUnsupported for every stream while any
 *    Global capture is live (Stream::StreamCaptureOngoing asks the queried
 *    stream's own mode; clr rocm-5.7.1 hip_stream.cpp), in 6.2.x it
 *    invalidates Global captures unless the thread is Relaxed, and the
 *    development tree does not check the handle.
 *  - Every release destroys a thread's per-thread stream from a C++
 *    thread_local destructor (5.2.3 stream_per_thread::~stream_per_thread,
 *    clr's thread_local TlsAggregator) that waits for the stream's pending
 *    work (ROCclr HostQueue::terminate).  glibc runs thread_local
 *    destructors (registered with __cxa_thread_atexit_impl) in reverse order
 *    of registration, at a thread's end and, for the thread calling it, in
 *    exit() before the atexit handlers: a process that returns from main
 *    with a wait pending on hipStreamPerThread blocks there, before the
 *    shim's atexit release (wait.c) can run.
 */
#include "streams.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hot.h"
#include "intercept.h"
#include "log.h"
#include "runtime.h"
#include "noise.h"

bool hx_stream_valid(hipStream_t stream)
{
	int v;

	if (hx_stream_always_valid(stream))
		return true;
	/* hipStreamGetDevice checks on every release that has it (5.6 on, the
	 * development tree included); before 5.6, hipStreamGetPriority does
	 * (hip::isValid, rocm-5.2.3 to 6.2.2).  Neither touches capture. */
	if (hx_rt.StreamGetDevice)
		return hx_rt.StreamGetDevice(stream, &v) == hipSuccess;
	if (hx_rt.StreamGetPriority)
		return hx_rt.StreamGetPriority(stream, &v) == hipSuccess;
	return true;
}

static hipError_t refuse(const char *what, hipStream_t stream)
{
	hx_err("%s: stream %p is not a valid stream (destroyed, or never created)", what,
	       (void *)stream);
	return hipErrorInvalidValue;
}

/*
 * The signal's stream check costs a runtime call; a stream found valid
 * stays so until it is destroyed.  Each thread remembers the last few
 * streams it checked, with the count of hipStreamDestroy calls seen
 * through the shim at the time: any destroy since (of any stream) makes
 * them checked again, so a handle the runtime recycled for a new stream
 * is never taken for the old one.  The count is read before the check: a
 * destroy during it is seen next time.  A destroy on another thread
 * racing a signal on the same stream stays the application's race
 * (docs/streams.md).  hipGetProcAddress and dlsym of the runtime hand out
 * the shim's hipStreamDestroy, so the count sees every destroy but one
 * made through a pointer the runtime handed out before the shim was
 * loaded.
 */
atomic_uint_fast64_t hx_streams_destroyed;
__thread struct hx_checked_stream hx_checked_streams[HX_CHECKED_SLOTS]
	__attribute__((tls_model("initial-exec")));

hipError_t hx_stream_destroy(hipStream_t stream)
{
	if (!hx_runtime_init())
		return hipErrorNotInitialized;
	if (!hx_rt.StreamDestroy) {
		hx_err("hipStreamDestroy: the HIP runtime has no such call");
		return hipErrorNotSupported;
	}
	atomic_fetch_add_explicit(&hx_streams_destroyed, 1, memory_order_acq_rel);
	hx_noise();
	return hx_rt.StreamDestroy(stream);
}

/* A stream not in the calling thread's cache (streams.h): asked of the
 * runtime, and remembered when valid, with the count of destroys read
 * before the question. */
hipError_t hx_stream_check_signal_slow(const char *what, hipStream_t stream, uint64_t gen)
{
	struct hx_checked_stream *c = &hx_checked_streams[((uintptr_t)stream >> 4) % HX_CHECKED_SLOTS];

	if (!hx_stream_valid(stream))
		return refuse(what, stream);
	c->stream = stream;
	c->gen = gen;
	return hipSuccess;
}

/* ---- hipStreamPerThread on 5.2 ------------------------------------------ */

/*
 * 5.2's stream wait cannot be given hipStreamPerThread, and no entry point
 * hands out the stream it stands for.  The wait goes on a non-blocking
 * stream of the shim's own, one per calling thread (so that one thread's
 * pending wait never holds back another thread's per-thread stream), and
 * the per-thread stream waits for an event recorded after it
 * (hipStreamWaitEvent resolves hipStreamPerThread through hip::isValid).
 * Work the thread queues on its per-thread stream after the call starts
 * only once the semaphores are signaled; work queued before is not held.
 * The helper goes with its thread (hipStreamDestroy waits for its pending
 * wait, as the runtime's own per-thread teardown does).
 */
struct helper {
	hipStream_t stream;
	hipEvent_t event;
};

static __thread struct helper tls_helper;
static pthread_key_t helper_key;
static bool helper_key_ok; /* written once under helper_once */
static pthread_once_t helper_once = PTHREAD_ONCE_INIT;

static void helper_destroy(void *p)
{
	struct helper *h = p;

	if (h->event && hx_rt.EventDestroy)
		hx_rt.EventDestroy(h->event);
	if (h->stream && hx_rt.StreamDestroy)
		hx_rt.StreamDestroy(h->stream);
	h->event = NULL;
	h->stream = NULL;
}

static void helper_key_create(void)
{
	/* Only a key that was made is ever used: a failed pthread_key_create
	 * leaves helper_key unset, and 0 may be another library's key. */
	helper_key_ok = pthread_key_create(&helper_key, helper_destroy) == 0;
	if (!helper_key_ok)
		hx_warn("cannot register the per-thread helper streams' clean-up: each thread "
			"that waits on hipStreamPerThread keeps one stream after it ends");
}

static hipError_t helper_get(const char *what, struct helper **out)
{
	struct helper *h = &tls_helper;
	hipError_t err;

	if (h->stream) {
		*out = h;
		return hipSuccess;
	}
	if (!hx_rt.StreamCreateWithFlags || !hx_rt.EventCreateWithFlags || !hx_rt.EventRecord ||
	    !hx_rt.StreamWaitEvent) {
		hx_err("%s: this runtime's hipStreamWaitValue64 does not resolve hipStreamPerThread "
		       "and it lacks the stream and event calls to wait another way", what);
		return hipErrorNotSupported;
	}
	err = hx_rt.StreamCreateWithFlags(&h->stream, hipStreamNonBlocking);
	if (err == hipSuccess) {
		err = hx_rt.EventCreateWithFlags(&h->event, hipEventDisableTiming);
		if (err != hipSuccess) {
			hx_rt.StreamDestroy(h->stream);
			h->stream = NULL;
		}
	}
	if (err != hipSuccess) {
		hx_err("%s: cannot create the stream that waits for hipStreamPerThread (error %d)",
		       what, (int)err);
		return err;
	}
	pthread_once(&helper_once, helper_key_create);
	if (helper_key_ok)
		pthread_setspecific(helper_key, h);
	hx_dbg("%s: waits on hipStreamPerThread of this thread go through stream %p", what,
	       (void *)h->stream);
	*out = h;
	return hipSuccess;
}

HX_HOT_PATH
hipError_t hx_stream_wait_prepare(const char *what, hipStream_t stream, hipStream_t *target)
{
	struct helper *h;
	hipError_t err;

	*target = stream;
	/* From 5.3 the stream wait checks the handle and resolves
	 * hipStreamPerThread itself: its own answer is trusted (wait.c maps
	 * it), with no call of ours. */
	if (!hx_stream_ops_unchecked() || !stream || stream == hipStreamLegacy)
		return hipSuccess;
	if (stream != hipStreamPerThread)
		return hx_stream_valid(stream) ? hipSuccess : refuse(what, stream);
	err = helper_get(what, &h);
	if (err == hipSuccess)
		*target = h->stream;
	return err;
}

/* ---- exit ----------------------------------------------------------------- */

/*
 * The release of pending waits in exit() must run before the runtime's
 * teardown of the main thread's per-thread stream, which waits for that
 * stream's pending work.  glibc runs thread_local destructors (registered
 * with __cxa_thread_atexit_impl, C++'s and cpuhip's alike) newest first, in
 * exit() before the atexit handlers.  So the shim keeps a destructor of its
 * own newest on the main thread: it interposes __cxa_thread_atexit_impl and,
 * after every registration made on the main thread by anyone else,
 * registers its hook again.  That no longer depends on which thread made
 * the semaphore calls (a worker may wait on the null stream while main
 * only queues per-thread-stream work behind it and returns), nor on when
 * the runtime made its thread-local state:
 *  - clr (5.3 on) keeps the per-thread stream in the thread_local
 *    TlsAggregator (hip_internal.hpp), made at the thread's first call
 *    into the runtime (HIP_INIT_API touches hip::tls);
 *  - 5.2.3 keeps it in a thread_local stream_per_thread (src/hip_stream.cpp),
 *    made when hipStreamPerThread is first resolved.
 * Both register through libstdc++'s __cxa_thread_atexit, which calls
 * __cxa_thread_atexit_impl@GLIBC_2.18: a preloaded definition of that
 * version interposes it.  The hook costs one list entry per thread_local
 * of the main thread, and nothing on any other thread.
 *
 * The hook is registered only on the main thread, where it runs only in
 * exit(): glibc's pthread_exit of the main thread runs the pthread_key
 * destructors and not the thread_local ones
 * (sysdeps/nptl/libc_start_call_main.h), and a return from main is an
 * exit().  Other threads get no hook: a thread that ends keeps its waits,
 * and its end waits for them as the runtime does (docs/streams.md: exit()
 * from a thread other than the main one).
 *
 * Should the interposition not be reached (the shim loaded late, a
 * runtime with a static C++ library), the main thread's own first wait or
 * signal registers the hook as well (hx_stream_exit_release_setup, before
 * the capture guard): newer than the runtime's teardown only if the thread
 * made its runtime state before (an import, or any HIP call, first, as
 * programs do); on 5.2 the main thread's
 * per-thread stream is resolved first (hx_stream_exit_prepare) by a call
 * that resolves it and changes nothing (hipStreamGetFlags, through
 * hip::isValid), at the thread's first import or wait: early, so that the
 * stream it makes cannot take the memory of a stream the application
 * destroys later and still names.
 */
typedef int thread_atexit_fn(void (*fn)(void *), void *obj, void *dso_symbol);

extern void *__dso_handle;
/* glibc's own dlvsym (dlsym.c explains why not the shim's). */
extern void *hx_libc_dlvsym_streams(void *handle, const char *name, const char *version);
__asm__(".symver hx_libc_dlvsym_streams, dlvsym@GLIBC_2.2.5");

/* Set once by the first wait (wait.c's release), read by the hook in exit. */
static void (*_Atomic exit_release)(void);
static thread_atexit_fn *_Atomic real_thread_atexit;
/* The first definition in the global scope: the shim's own, unless a
 * library preloaded in front of it interposes too (the test suite's
 * no_exit_release.c does, to play a shim that lost its hook): the shim's
 * own hook registrations go there, so that such a library sees them. */
static thread_atexit_fn *_Atomic global_thread_atexit;

__thread unsigned char hx_exit_hook_state __attribute__((tls_model("initial-exec")));

static void exit_hook(void *arg)
{
	void (*release)(void) = atomic_load_explicit(&exit_release, memory_order_acquire);

	(void)arg;
	if (release)
		release();
}

static thread_atexit_fn *thread_atexit_real(void)
{
	thread_atexit_fn *f = atomic_load_explicit(&real_thread_atexit, memory_order_acquire);

	if (!f) {
		/* Idempotent: racing threads store the same pointer. */
		f = (thread_atexit_fn *)hx_libc_dlvsym_streams(RTLD_NEXT, "__cxa_thread_atexit_impl",
							       "GLIBC_2.18");
		atomic_store_explicit(&real_thread_atexit, f, memory_order_release);
	}
	return f;
}

/* The global scope's definition (see global_thread_atexit). */
static thread_atexit_fn *global_thread_atexit_get(void)
{
	thread_atexit_fn *f = atomic_load_explicit(&global_thread_atexit, memory_order_acquire);

	if (!f) {
		/* Unversioned, as a reference from an unversioned object
		 * would bind: a preloaded test library defines it without a
		 * version, which dlvsym would pass over.  glibc's dlsym, not
		 * the shim's (dlsym.c). */
		void *(*libc_dlsym)(void *, const char *) =
			(void *(*)(void *, const char *))hx_libc_dlvsym_streams(RTLD_NEXT, "dlsym",
										"GLIBC_2.34");

		f = libc_dlsym ? (thread_atexit_fn *)libc_dlsym(RTLD_DEFAULT,
								"__cxa_thread_atexit_impl")
			       : NULL;
		if (!f)
			f = thread_atexit_real();
		atomic_store_explicit(&global_thread_atexit, f, memory_order_release);
	}
	return f;
}

/*
 * Both lookups, made once when the library loads.  Made lazily, the first
 * would happen inside the runtime's registration of a thread_local (the
 * shim's __cxa_thread_atexit_impl below, called with the runtime's own
 * lock held), and a lookup takes glibc's loader lock: a dlopen'd
 * constructor that forks holds the loader lock and waits in the
 * runtime's fork handler for the runtime's lock, a deadlock.  In a
 * constructor the loader lock is this thread's already.
 */
static int register_exit_hook(void)
{
	thread_atexit_fn *f = global_thread_atexit_get();

	/* The shim's own definition forwards exit_hook without registering
	 * it again. */
	return f ? f(exit_hook, NULL, &__dso_handle) : -1;
}

static bool on_main_thread(void)
{
	return syscall(SYS_gettid) == getpid();
}

/*
 * Also, when the library is loaded on the main thread (LD_PRELOAD), the
 * hook goes on the main thread's list at once.  The main thread may never
 * call the shim or the runtime (workers do all the semaphore work and
 * main only joins them and returns): without an entry of its own there,
 * nothing would release the waits pending at exit before the program's
 * atexit handlers registered after the first wait, which run before the
 * shim's atexit handler; a wait such a handler enqueues behind a pending
 * wait on the same stream could then never pass
 * (streams.*.exit-late-wait-worker).  The hook does nothing until the
 * first import, signal, wait or launch sets the release; registrations
 * made later on the main thread get a newer entry (hx_thread_atexit_impl).
 */
__attribute__((constructor)) static void exit_lookups(void)
{
	(void)thread_atexit_real();
	(void)global_thread_atexit_get();
	if (on_main_thread())
		(void)register_exit_hook();
}

/* Exported as __cxa_thread_atexit_impl@@GLIBC_2.18 (libextsem.map). */
__attribute__((visibility("default"))) int hx_thread_atexit_impl(void (*fn)(void *), void *obj,
								   void *dso_symbol);
__attribute__((visibility("default"))) int hx_thread_atexit_impl(void (*fn)(void *), void *obj,
								   void *dso_symbol)
{
	thread_atexit_fn *real = thread_atexit_real();
	int ret;

	if (!real) {
		static const char msg[] =
			"hipextsem: cannot find glibc's __cxa_thread_atexit_impl; aborting\n";
		(void)!write(2, msg, sizeof(msg) - 1);
		abort();
	}
	ret = real(fn, obj, dso_symbol);
	if (ret == 0 && fn != exit_hook && on_main_thread())
		(void)register_exit_hook();
	return ret;
}
__asm__(".symver hx_thread_atexit_impl, __cxa_thread_atexit_impl@@GLIBC_2.18");

/* Per thread; a fork child's main thread (the forking thread) starts
 * again (hx_stream_reset_after_fork): as a worker, it only set the flag. */
static __thread bool exit_prepared;

void hx_stream_exit_prepare(void)
{
	unsigned int flags;

	if (__builtin_expect(exit_prepared, 1))
		return;
	exit_prepared = true;
	if (!hx_stream_ops_unchecked() || !on_main_thread())
		return;
	if (hx_rt.StreamGetFlags)
		(void)hx_rt.StreamGetFlags(hipStreamPerThread, &flags);
}

__thread bool hx_pts_ready __attribute__((tls_model("initial-exec")));

void hx_stream_pts_prepare_slow(void)
{
	unsigned int flags;

	hx_pts_ready = true;
	/* The same call as hx_stream_exit_prepare's: it resolves the
	 * per-thread stream and touches no capture.  5.2 and 5.3 have no
	 * hipLaunchHostFunc; 5.4 has, and is told by its version (known once
	 * the device probe made in hx_runtime_usable ran). */
	if (hx_runtime_init() && hx_runtime_usable() && hx_rt.StreamGetFlags &&
	    (hx_stream_ops_unchecked() || (hx_rt.version > 0 && hx_rt.version < 50500000)))
		(void)hx_rt.StreamGetFlags(hipStreamPerThread, &flags);
}

void hx_stream_exit_release_setup(const char *what, void (*release)(void))
{
	if (__builtin_expect(hx_exit_hook_state != 0, 1))
		return;
	hx_exit_hook_state = 2;
	if (!atomic_load_explicit(&exit_release, memory_order_relaxed))
		atomic_store_explicit(&exit_release, release, memory_order_release);
	if (!on_main_thread())
		return;
	if (register_exit_hook()) {
		hx_warn("%s: cannot register the release of pending waits at exit before the "
			"runtime's per-thread-stream teardown", what);
		return;
	}
	hx_exit_hook_state = 1;
}

void hx_stream_reset_after_fork(void)
{
	/* 1 (the main thread forked, its hook is in the inherited list of
	 * thread_local destructors) stays. */
	if (hx_exit_hook_state == 2)
		hx_exit_hook_state = 0;
	exit_prepared = false;
	/* The forking thread's helper stream and event are the parent's: the
	 * child's waits on hipStreamPerThread get a helper of the child's
	 * (helper_get).  Forgotten, not destroyed: they are not the child's
	 * runtime's to free (streams.*.fork-pts-used). */
	tls_helper.stream = NULL;
	tls_helper.event = NULL;
}

HX_HOT_PATH
hipError_t hx_stream_wait_join(const char *what, hipStream_t stream, hipStream_t target)
{
	hipError_t err = hipSuccess;

	if (target != stream) {
		struct helper *h = &tls_helper;

		err = hx_rt.EventRecord(h->event, target);
		if (err == hipSuccess)
			err = hx_rt.StreamWaitEvent(stream, h->event, 0);
		if (err != hipSuccess)
			hx_err("%s: cannot order hipStreamPerThread after its wait, queued on the "
			       "shim's stream %p (error %d)", what, (void *)target, (int)err);
	}
	return err;
}
