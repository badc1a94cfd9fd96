/* SPDX-License-Identifier: MIT */
#include "runtime.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "abi_rule.h"
#include "hot.h"
#include "log.h"
#include "noise.h"

struct hx_runtime hx_rt;

static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

/* Sonames tried, newest first, when the runtime is not in the global scope
 * yet (RTLD_NOLOAD: the shim never loads a runtime by itself). */
static const char *const runtime_sonames[] = {
	"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so",
};

struct sym_entry {
	const char *name;
	size_t offset;
	bool required;
};

#define SYM(field, req) { "hip" #field, offsetof(struct hx_runtime, field), req }
static const struct sym_entry runtime_syms[] = {
	SYM(StreamWaitValue64, true),
	SYM(StreamAddCallback, true),
	SYM(HostMalloc, true),
	SYM(GetDevice, true),
	SYM(LaunchHostFunc, false),
	SYM(ExtMallocWithFlags, false),
	SYM(DeviceGetAttribute, false),
	SYM(DeviceGetPCIBusId, false),
	SYM(RuntimeGetVersion, false),
	SYM(StreamIsCapturing, false),
	SYM(ImportExternalSemaphore, false),
	SYM(SignalExternalSemaphoresAsync, false),
	SYM(WaitExternalSemaphoresAsync, false),
	SYM(DestroyExternalSemaphore, false),
	SYM(GetProcAddress, false),
	SYM(GetDriverEntryPoint, false),
	SYM(GetDriverEntryPoint_spt, false),
	SYM(GetDevicePropertiesR0600, false),
	SYM(GraphAddExternalSemaphoresSignalNode, false),
	SYM(GraphAddExternalSemaphoresWaitNode, false),
	SYM(GraphExternalSemaphoresSignalNodeGetParams, false),
	SYM(GraphExternalSemaphoresSignalNodeSetParams, false),
	SYM(GraphExternalSemaphoresWaitNodeGetParams, false),
	SYM(GraphExternalSemaphoresWaitNodeSetParams, false),
	SYM(GraphExecExternalSemaphoresSignalNodeSetParams, false),
	SYM(GraphExecExternalSemaphoresWaitNodeSetParams, false),
	SYM(GraphAddNode, false),
	SYM(GraphNodeSetParams, false),
	SYM(GraphExecNodeSetParams, false),
	SYM(GraphAddHostNode, false),
	SYM(GraphHostNodeSetParams, false),
	SYM(GraphExecHostNodeSetParams, false),
	SYM(GraphAddEventWaitNode, false),
	SYM(GraphInstantiate, false),
	SYM(GraphInstantiateWithFlags, false),
	SYM(GraphInstantiateWithParams, false),
	SYM(GraphLaunch, false),
	SYM(GraphLaunch_spt, false),
	SYM(GraphExecDestroy, false),
	SYM(GraphDestroy, false),
	SYM(GraphClone, false),
	SYM(GraphDestroyNode, false),
	SYM(GraphAddChildGraphNode, false),
	SYM(GraphChildGraphNodeGetGraph, false),
	SYM(GraphExecUpdate, false),
	SYM(GraphGetNodes, false),
	SYM(GraphNodeGetType, false),
	SYM(GraphEventWaitNodeGetEvent, false),
	SYM(GraphEventWaitNodeSetEvent, false),
	SYM(GraphHostNodeGetParams, false),
	SYM(StreamGetCaptureInfo_v2, false),
	SYM(StreamUpdateCaptureDependencies, false),
	SYM(StreamEndCapture, false),
	SYM(StreamEndCapture_spt, false),
	SYM(StreamBeginCapture, false),
	SYM(StreamBeginCapture_spt, false),
	SYM(StreamBeginCaptureToGraph, false),
	SYM(ThreadExchangeStreamCaptureMode, false),
	SYM(EventCreateWithFlags, false),
	SYM(EventRecord, false),
	SYM(EventDestroy, false),
	SYM(StreamCreateWithFlags, false),
	SYM(StreamQuery, false),
	SYM(StreamGetDevice, false),
	SYM(StreamGetPriority, false),
	SYM(StreamGetFlags, false),
	SYM(StreamWaitEvent, false),
	SYM(StreamDestroy, false),
	SYM(GetProcAddress_spt, false),
	/* Graph launches: side streams on a wait node's device, their
	 * idleness (graph_exec.c). */
	SYM(SetDevice, false),
	SYM(EventQuery, false),
	SYM(StreamWriteValue64, false),
};
#undef SYM

static const char *const newer_syms[] = {
	"hipStreamBatchMemOp", "hipEventRecordWithFlags", "hipLaunchKernelExC",
	"hipGetDriverEntryPoint", "hipStreamGetId", "hipGetProcAddress_spt",
};

static void *find_handle(void)
{
	for (size_t i = 0; i < sizeof(runtime_sonames) / sizeof(runtime_sonames[0]); i++) {
		void *h = dlopen(runtime_sonames[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h)
			return h;
	}
	return NULL;
}

/*
 * The runtime's ABI by the shared rule (abi_rule.h): the file name after
 * symlinks, then the soname (read from memory), then -- only when neither
 * tells -- hipRuntimeGetVersion.  The version call comes last because it
 * initialises the runtime, and with no device some releases answer that
 * first initialisation differently (5.7.1: 101 to the first call, 100
 * afterwards), an answer that belongs to the application's first call, not
 * to ours.  A soname that contradicts the file name is said (a runtime
 * renamed by hand); the file name wins, as in the tools.  *by_name and
 * *by_soname get each clue's own verdict, for the HIPEXTSEM_ABI check.
 */
static enum hx_abi detect_abi(enum hx_abi *by_name, enum hx_abi *by_soname)
{
	char real[PATH_MAX], soname_buf[128];
	const char *soname = hx_abi_loaded_soname((const void *)hx_rt.StreamWaitValue64,
						   soname_buf, sizeof(soname_buf));
	enum hx_abi_clue clue;
	enum hx_abi abi;

	if (!realpath(hx_rt.path, real))
		snprintf(real, sizeof(real), "%s", hx_rt.path);
	*by_name = hx_abi_from_name(real);
	*by_soname = hx_abi_from_name(soname);
	abi = hx_abi_rule(real, soname, &clue);
	if (*by_name != HX_ABI_UNKNOWN && *by_soname != HX_ABI_UNKNOWN && *by_name != *by_soname)
		hx_warn("runtime %s has soname %s but its file name says %s ABI; using %s",
			real, soname, hx_abi_name(*by_name), hx_abi_name(*by_name));
	if (abi == HX_ABI_UNKNOWN && hx_rt.RuntimeGetVersion &&
	    hx_rt.RuntimeGetVersion(&hx_rt.version) == hipSuccess) {
		abi = hx_abi_from_version(hx_rt.version);
		clue = abi != HX_ABI_UNKNOWN ? HX_ABI_BY_VERSION : HX_ABI_BY_NONE;
	}
	if (abi != HX_ABI_UNKNOWN)
		hx_dbg("ABI %s of %s from its %s", hx_abi_name(abi), real, hx_abi_clue_name(clue));
	return abi;
}

static void resolve(void)
{
	void *handle = RTLD_NEXT;
	enum hx_abi by_path, by_soname, by_version;
	const char *forced;
	Dl_info info;

	hx_log_init();
	memset(&hx_rt, 0, sizeof(hx_rt));

	/* RTLD_NEXT finds the runtime the application links against.  A
	 * runtime that was dlopen()ed with RTLD_LOCAL is not in that scope:
	 * look for it by soname then. */
	if (!dlsym(RTLD_NEXT, "hipStreamWaitValue64")) {
		handle = find_handle();
		if (!handle) {
			hx_err("libamdhip64 is not loaded: the shim has no runtime to drive");
			return;
		}
	}

	hx_rt.ok = true;
	for (size_t i = 0; i < sizeof(runtime_syms) / sizeof(runtime_syms[0]); i++) {
		void *p = dlsym(handle, runtime_syms[i].name);
		memcpy((char *)&hx_rt + runtime_syms[i].offset, &p, sizeof(p));
		if (!p && runtime_syms[i].required) {
			hx_err("the HIP runtime lacks %s, which the shim needs", runtime_syms[i].name);
			hx_rt.ok = false;
		}
	}
	if (!hx_rt.ok)
		return;
	/* Entry points of clr's nodes after hip_6.2 (hip_hcc.map.in: hip_6.4
	 * hipStreamBatchMemOp and hipEventRecordWithFlags, hip_6.5
	 * hipLaunchKernelExC, hip_7.1 hipGetDriverEntryPoint and
	 * hipStreamGetId) and the development tree's hipGetProcAddress_spt:
	 * a runtime newer than 6.2, where the stream checks of some calls may be
	 * gone (streams.c). */
	for (size_t i = 0; i < sizeof(newer_syms) / sizeof(newer_syms[0]); i++)
		if (dlsym(handle, newer_syms[i]))
			hx_rt.newer_than_6_2 = true;

	if (dladdr((void *)hx_rt.StreamWaitValue64, &info) && info.dli_fname) {
		snprintf(hx_rt.path, sizeof(hx_rt.path), "%s", info.dli_fname);
		/* Hold a reference of our own: RTLD_NEXT takes none, so an
		 * application that dlopen()ed the runtime could dlclose() it
		 * and leave every pointer above dangling (the shim is
		 * nodelete and outlives it).  Never released. */
		if (!dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))
			hx_warn("cannot pin the HIP runtime %s: %s", info.dli_fname, dlerror());
	}

	hx_rt.abi = detect_abi(&by_path, &by_soname);
	by_version = hx_abi_from_version(hx_rt.version);

	forced = hx_getenv("HIPEXTSEM_ABI");
	if (forced && (!strcmp(forced, "5") || !strcmp(forced, "6"))) {
		enum hx_abi want = forced[0] == '5' ? HX_ABI_5 : HX_ABI_6;
		/* The override is for runtimes whose flavour cannot be told (or
		 * whose name and version disagree).  One that contradicts every
		 * clue would make the shim read the caller's arrays with the
		 * wrong stride -- past their end for 6.x on a 5.x runtime -- so
		 * it is refused, loudly. */
		if (hx_rt.abi != HX_ABI_UNKNOWN && want != by_path && want != by_soname &&
		    want != by_version) {
			hx_err("ignoring HIPEXTSEM_ABI=%s: the loaded runtime %s (version %d) has "
			       "the %s ABI", forced, hx_rt.path, hx_rt.version,
			       hx_abi_name(hx_rt.abi));
		} else {
			hx_rt.abi = want;
			hx_info("ABI forced to %s by HIPEXTSEM_ABI", hx_abi_name(hx_rt.abi));
		}
	} else if (forced) {
		hx_warn("ignoring HIPEXTSEM_ABI=\"%s\" (expected 5 or 6)", forced);
	}
	if (hx_rt.abi == HX_ABI_UNKNOWN) {
		hx_err("cannot tell the ABI of the HIP runtime %s; set HIPEXTSEM_ABI=5 or 6",
		       hx_rt.path[0] ? hx_rt.path : "(unknown)");
		hx_rt.ok = false;
		return;
	}
	hx_info("runtime %s, %s ABI", hx_rt.path, hx_abi_name(hx_rt.abi));
}

bool hx_runtime_init(void)
{
	pthread_once(&rt_once, resolve);
	return hx_rt.ok;
}

void hx_runtime_reset_after_fork(void)
{
	/* The runtime's functions are still mapped at the same addresses in
	 * the child: the table stays valid. */
}

static pthread_once_t usable_once = PTHREAD_ONCE_INIT;
static bool usable;
/* The runtime's answer to the call that initialised it, when that call
 * was our probe and the answer differs from later ones; owed to the
 * application call that triggered the probe (hx_runtime_take_first_answer). */
static atomic_int first_answer;

static atomic_bool probed;

static void probe_device(void)
{
	hipError_t err, again;
	int dev;

	if (!hx_runtime_init())
		return;
	atomic_store_explicit(&probed, true, memory_order_release);
	err = hx_rt.GetDevice(&dev);
	if (err == hipSuccess) {
		usable = true;
		if (hx_rt.RuntimeGetVersion && !hx_rt.version)
			hx_rt.RuntimeGetVersion(&hx_rt.version);
		hx_info("runtime %s: version %d, device %d", hx_rt.path, hx_rt.version, dev);
		return;
	}
	/* Whether this probe was the call that initialised the runtime shows
	 * in a second answer that differs from the first. */
	again = hx_rt.GetDevice(&dev);
	if (again != err)
		atomic_store_explicit(&first_answer, (int)err, memory_order_release);
	hx_warn("the HIP runtime has no usable device (hipGetDevice: error %d); external "
		"semaphore calls go to the runtime unchanged", (int)err);
}

bool hx_runtime_usable(void)
{
	/* Whether a device exists does not change during the life of a
	 * process: asked once. */
	pthread_once(&usable_once, probe_device);
	return usable;
}

bool hx_runtime_started(void)
{
	return atomic_load_explicit(&probed, memory_order_acquire);
}

hipError_t hx_runtime_take_first_answer(void)
{
	return (hipError_t)atomic_exchange_explicit(&first_answer, 0, memory_order_acq_rel);
}

int hx_runtime_capture_status(hipStream_t stream)
{
	int status = 0;

	/* The legacy null stream cannot be captured. */
	if (!stream || !hx_rt.StreamIsCapturing ||
	    hx_rt.StreamIsCapturing(stream, &status) != hipSuccess)
		return 0;
	return status;
}

int hx_runtime_capture_relaxed(void)
{
	int mode = HX_CAPTURE_MODE_RELAXED;

	if (!hx_rt.ThreadExchangeStreamCaptureMode ||
	    hx_rt.ThreadExchangeStreamCaptureMode(&mode) != hipSuccess)
		return -1;
	return mode;
}

void hx_runtime_capture_restore(int mode)
{
	if (mode >= 0 && hx_rt.ThreadExchangeStreamCaptureMode)
		hx_rt.ThreadExchangeStreamCaptureMode(&mode);
}

/* ---- the capture guard (runtime.h) ------------------------------------- */

/*
 * An asymmetric reader-writer guard: the signal and wait paths (readers)
 * pay two plain stores and a load on a slot of their own thread, no atomic
 * read-modify-write and no shared cache line; a capture's begin or end
 * (writers, rare) pays a process-wide barrier and a scan of the slots.
 *
 * Reader: sets its slot's `active`, then reads `writer`; if a writer is
 * there it clears `active`, waits for the writer's mutex and tries again.
 * Writer: takes the mutex, sets `writer`, then waits until no slot is
 * active.  Each side's store must be seen before its load (Dekker): the
 * writer's membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) makes every
 * running thread of the process pass a full barrier, which stands for the
 * readers' own fence (a compiler barrier then suffices there); where the
 * kernel has no such command (before 4.14) or under ThreadSanitizer, which
 * does not know it, readers use a full fence.  The reader's release store
 * of `active = 0` publishes what it enqueued to the writer that sees it.
 *
 * Slots are made at a thread's first guarded call, never freed: a thread
 * that ends gives its slot up (a pthread key) for the next thread to take.
 */
struct guard_slot {
	atomic_int active;
	atomic_bool taken;
	struct guard_slot *next; /* immutable once published */
};

static _Atomic(struct guard_slot *) guard_slots;
static atomic_bool guard_writer;
/* Calls that found a writer there and wait for it (hx_capture_guard_lock). */
static atomic_uint guard_waiting;
static pthread_mutex_t guard_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static pthread_key_t guard_key;
static bool guard_key_ok;
/* Set under guard_once; cleared for good by a writer whose membarrier
 * fails (a seccomp filter installed later, say). */
static atomic_bool guard_membarrier;
static __thread struct guard_slot *tls_slot __attribute__((tls_model("initial-exec")));
static __thread bool tls_guard __attribute__((tls_model("initial-exec")));

#ifndef MEMBARRIER_CMD_PRIVATE_EXPEDITED
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED (1 << 3)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED (1 << 4)
#endif
#if defined(__SANITIZE_THREAD__)
#define HX_GUARD_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HX_GUARD_TSAN 1
#endif
#endif

static void guard_slot_release(void *p)
{
	struct guard_slot *slot = p;

	atomic_store_explicit(&slot->active, 0, memory_order_release);
	/* The destructor runs on the slot's own thread: a guarded call from
	 * a later destructor of this exiting thread takes a slot afresh
	 * instead of one another thread may have taken by then. */
	if (tls_slot == slot)
		tls_slot = NULL;
	atomic_store_explicit(&slot->taken, false, memory_order_release);
}

static void guard_init(void)
{
#ifndef HX_GUARD_TSAN
	atomic_init(&guard_membarrier,
		    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0);
#endif
	guard_key_ok = pthread_key_create(&guard_key, guard_slot_release) == 0;
}

/* The calling thread's slot: a free one taken, or a new one published. */
static __attribute__((noinline, cold)) struct guard_slot *guard_slot_get(void)
{
	struct guard_slot *slot;

	pthread_once(&guard_once, guard_init);
	for (slot = atomic_load_explicit(&guard_slots, memory_order_acquire); slot;
	     slot = slot->next) {
		bool free_ = false;

		if (atomic_compare_exchange_strong(&slot->taken, &free_, true))
			break;
	}
	if (!slot) {
		slot = calloc(1, sizeof(*slot));
		if (!slot)
			return NULL;
		atomic_init(&slot->taken, true);
		slot->next = atomic_load_explicit(&guard_slots, memory_order_relaxed);
		while (!atomic_compare_exchange_weak_explicit(&guard_slots, &slot->next, slot,
							      memory_order_release,
							      memory_order_relaxed))
			;
	}
	/* Without the key the slot stays taken when the thread ends. */
	if (guard_key_ok)
		pthread_setspecific(guard_key, slot);
	tls_slot = slot;
	return slot;
}

/* Sets the slot active, then reads whether a writer is there (the Dekker
 * pair of hx_capture_guard_lock's store and scan). */
static inline bool guard_announce(struct guard_slot *slot)
{
	atomic_store_explicit(&slot->active, 1, memory_order_relaxed);
	if (atomic_load_explicit(&guard_membarrier, memory_order_relaxed))
		atomic_signal_fence(memory_order_seq_cst);
	else
		atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(&guard_writer, memory_order_acquire);
}

/* A writer is there: step back, wait for its mutex, try again.  Counted
 * in guard_waiting, which a writer that lets calls through looks at. */
static __attribute__((noinline, cold)) void guard_enter_wait(struct guard_slot *slot)
{
	atomic_fetch_add_explicit(&guard_waiting, 1, memory_order_relaxed);
	do {
		atomic_store_explicit(&slot->active, 0, memory_order_release);
		pthread_mutex_lock(&guard_mutex);
		pthread_mutex_unlock(&guard_mutex);
	} while (guard_announce(slot));
	atomic_fetch_sub_explicit(&guard_waiting, 1, memory_order_relaxed);
}

HX_HOT_PATH
void hx_capture_guard_enter(void)
{
	struct guard_slot *slot = tls_slot;

	if (tls_guard)
		return;
	if (__builtin_expect(!slot, 0)) {
		slot = guard_slot_get();
		if (!slot) {
			/* Out of memory: the writers' mutex stands in. */
			pthread_mutex_lock(&guard_mutex);
			pthread_mutex_unlock(&guard_mutex);
			return;
		}
	}
	if (__builtin_expect(guard_announce(slot), 0))
		guard_enter_wait(slot);
	tls_guard = true;
	hx_noise();
}

HX_HOT_PATH
void hx_capture_guard_leave(void)
{
	if (!tls_guard)
		return;
	tls_guard = false;
	atomic_store_explicit(&tls_slot->active, 0, memory_order_release);
}

/* How long a writer waits for the calls in flight before it lets new calls
 * through for a moment (see hx_capture_guard_lock): 10 ms, doubled at each
 * try up to 320 ms, so that calls that are merely slow (an emulator, a
 * loaded host) do not hold a writer off for good. */
#define HX_GUARD_WRITER_PATIENCE_NS (10 * 1000000LL)
#define HX_GUARD_WRITER_PATIENCE_MAX_SHIFT 5

static int64_t guard_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Raises `writer` and waits for every slot to be inactive.  False if one
 * stayed active past the writer's patience (`writer` is still raised). */
static bool guard_writer_drain(unsigned tries)
{
	unsigned shift = tries < HX_GUARD_WRITER_PATIENCE_MAX_SHIFT ? tries
								   : HX_GUARD_WRITER_PATIENCE_MAX_SHIFT;
	int64_t give_up = guard_now_ns() + (HX_GUARD_WRITER_PATIENCE_NS << shift);

	atomic_store_explicit(&guard_writer, true, memory_order_seq_cst);
	if (atomic_load_explicit(&guard_membarrier, memory_order_relaxed) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
		/* Readers fence for themselves from their next entry on.  One
		 * that entered without a fence just before may have its
		 * `active` store still buffered: its enqueue takes far longer
		 * than a store buffer holds a store, and the pause lets it
		 * drain before the scan looks. */
		atomic_store_explicit(&guard_membarrier, false, memory_order_seq_cst);
		hx_warn("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed now (%m) after "
			"working at start-up: the capture guard's readers use a full fence from "
			"here on");
		usleep(2000);
	}
	atomic_thread_fence(memory_order_seq_cst);
	for (struct guard_slot *slot = atomic_load_explicit(&guard_slots, memory_order_acquire);
	     slot; slot = slot->next) {
		/* A call in flight: it enqueues and leaves. */
		unsigned us = 50;
		while (atomic_load_explicit(&slot->active, memory_order_acquire)) {
			if (guard_now_ns() > give_up)
				return false;
			usleep(us);
			if (us < 2000)
				us *= 2;
		}
	}
	return true;
}

/*
 * A call can stay in flight for long: one blocked inside the runtime, by
 * full rings say, behind a stream wait that only a signal can release.  If
 * the writer kept `writer` raised all that time, every new call would
 * queue behind it, the signal that would unblock the first call among
 * them: the process would hang where it does not without the shim.  So a
 * writer that has waited past its patience lowers `writer` and gives the
 * mutex up for a moment, lets the calls waiting for it through (they
 * decide before the capture begins, which is right: it has not), and
 * tries again; it returns only once it has seen every slot inactive with
 * `writer` raised.  Another writer may go first meanwhile: each returns
 * exclusive.
 */
bool hx_capture_guard_lock(void)
{
	unsigned tries = 0;

	if (tls_guard)
		return false;
	pthread_once(&guard_once, guard_init);
	pthread_mutex_lock(&guard_mutex);
	while (!guard_writer_drain(tries)) {
		atomic_store_explicit(&guard_writer, false, memory_order_release);
		pthread_mutex_unlock(&guard_mutex);
		if (++tries == 7)
			hx_warn("a capture's begin or end (or a fork) has waited about a second for "
				"a semaphore call or graph launch still inside the HIP runtime "
				"(blocked there?); other calls go on meanwhile");
		/* Until the calls that queued behind it are through (each has
		 * set its slot active by then), 5 ms at most. */
		for (int i = 0; i < 20 && atomic_load_explicit(&guard_waiting, memory_order_relaxed);
		     i++)
			usleep(250);
		pthread_mutex_lock(&guard_mutex);
	}
	hx_noise();
	return true;
}

void hx_capture_guard_unlock(void)
{
	atomic_store_explicit(&guard_writer, false, memory_order_release);
	pthread_mutex_unlock(&guard_mutex);
}

hipError_t hx_runtime_stream_query(hipStream_t stream)
{
	hipError_t err;
	int mode;

	if (!hx_rt.StreamQuery)
		return hipSuccess;
	mode = hx_runtime_capture_relaxed();
	err = hx_rt.StreamQuery(stream);
	hx_runtime_capture_restore(mode);
	return err;
}

const char *hx_abi_name(enum hx_abi abi)
{
	switch (abi) {
	case HX_ABI_5:
		return "5.x";
	case HX_ABI_6:
		return "6.x";
	default:
		return "unknown";
	}
}

size_t hx_abi_desc_size(enum hx_abi abi)
{
	return abi == HX_ABI_5 ? sizeof(struct hx_sem_desc_v5) : sizeof(struct hx_sem_desc_v6);
}

size_t hx_abi_signal_params_stride(enum hx_abi abi)
{
	return abi == HX_ABI_5 ? sizeof(struct hx_sem_signal_params_v5)
			       : sizeof(struct hx_sem_signal_params_v6);
}

size_t hx_abi_wait_params_stride(enum hx_abi abi)
{
	return abi == HX_ABI_5 ? sizeof(struct hx_sem_wait_params_v5)
			       : sizeof(struct hx_sem_wait_params_v6);
}

int hx_abi_desc_type(const void *desc)
{
	/* type sits at offset 0 in both layouts */
	return ((const struct hx_sem_desc_v5 *)desc)->type;
}

int hx_abi_desc_fd(const void *desc)
{
	/* handle.fd sits at offset 8 in both layouts */
	if (hx_rt.abi == HX_ABI_5)
		return ((const struct hx_sem_desc_v5 *)desc)->handle.fd;
	return ((const struct hx_sem_desc_v6 *)desc)->handle.fd;
}
