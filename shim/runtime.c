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

/*
 * What resolve() needs from glibc's loader: every lookup (dlsym, dlopen
 * with RTLD_NOLOAD, dladdr) takes glibc's loader lock.  They are made
 * before rt_once, by each thread that comes first, into a record of its
 * own: made inside the once, a thread waiting there for the loader lock
 * (held by another thread's dlopen while a plugin's constructor runs)
 * would hold up that constructor's own first call of the shim, which
 * waits for the once -- a deadlock no runtime has without the shim
 * (streams.*.ctor-first-call).  The first record published is the one
 * the once reads; a later one is freed.
 */
struct rt_lookup {
	struct hx_runtime rt;
	bool no_runtime;       /* libamdhip64 in neither scope */
	const char *missing;   /* a required symbol the runtime lacks */
	bool pinned;
	char pin_error[160];
};

static struct rt_lookup *_Atomic rt_staged;

static void lookup(struct rt_lookup *l)
{
	void *handle = RTLD_NEXT;
	Dl_info info;

	/* RTLD_NEXT finds the runtime the application links against.  A
	 * runtime that was dlopen()ed with RTLD_LOCAL is not in that scope:
	 * look for it by soname then. */
	if (!dlsym(RTLD_NEXT, "hipStreamWaitValue64")) {
		handle = find_handle();
		if (!handle) {
			l->no_runtime = true;
			return;
		}
	}
	l->rt.ok = true;
	for (size_t i = 0; i < sizeof(runtime_syms) / sizeof(runtime_syms[0]); i++) {
		void *p = dlsym(handle, runtime_syms[i].name);
		memcpy((char *)&l->rt + runtime_syms[i].offset, &p, sizeof(p));
		if (!p && runtime_syms[i].required && !l->missing) {
			l->missing = runtime_syms[i].name;
			l->rt.ok = false;
		}
	}
	if (!l->rt.ok)
		return;
	/* Entry points of clr's nodes after hip_6.2 (hip_hcc.map.in: hip_6.4
	 * hipStreamBatchMemOp and hipEventRecordWithFlags, hip_6.5
	 * hipLaunchKernelExC, hip_7.1 hipGetDriverEntryPoint and
	 * hipStreamGetId) and the development tree's hipGetProcAddress_spt:
	 * a runtime newer than 6.2, where the stream checks of some calls may be
	 * gone (streams.c). */
	for (size_t i = 0; i < sizeof(newer_syms) / sizeof(newer_syms[0]); i++)
		if (dlsym(handle, newer_syms[i]))
			l->rt.newer_than_6_2 = true;

	l->pinned = true;
	if (dladdr((void *)l->rt.StreamWaitValue64, &info) && info.dli_fname) {
		snprintf(l->rt.path, sizeof(l->rt.path), "%s", info.dli_fname);
		/* Hold a reference of our own: RTLD_NEXT takes none, so an
		 * application that dlopen()ed the runtime could dlclose() it
		 * and leave every pointer above dangling (the shim is
		 * nodelete and outlives it).  Never released (each thread
		 * that looked up takes one). */
		if (!dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) {
			const char *e = dlerror();

			l->pinned = false;
			snprintf(l->pin_error, sizeof(l->pin_error), "%s", e ? e : "?");
		}
	}
}

static void resolve(void)
{
	struct rt_lookup *l = atomic_load_explicit(&rt_staged, memory_order_acquire), own;
	enum hx_abi by_path, by_soname, by_version;
	const char *forced;

	hx_log_init();
	if (!l) {
		/* no record (out of memory): looked up here */
		memset(&own, 0, sizeof(own));
		lookup(&own);
		l = &own;
	}
	memcpy(&hx_rt, &l->rt, sizeof(hx_rt));
	if (l->no_runtime) {
		hx_err("libamdhip64 is not loaded: the shim has no runtime to drive");
		return;
	}
	if (l->missing) {
		hx_err("the HIP runtime lacks %s, which the shim needs", l->missing);
		return;
	}
	if (!hx_rt.ok)
		return;
	if (!l->pinned)
		hx_warn("cannot pin the HIP runtime %s: %s", hx_rt.path, l->pin_error);

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
	static atomic_bool resolved;

	if (!atomic_load_explicit(&resolved, memory_order_acquire)) {
		if (!atomic_load_explicit(&rt_staged, memory_order_acquire)) {
			struct rt_lookup *l = calloc(1, sizeof(*l)), *none = NULL;

			if (l) {
				lookup(l);
				if (!atomic_compare_exchange_strong_explicit(
					    &rt_staged, &none, l, memory_order_acq_rel,
					    memory_order_acquire))
					free(l);
			}
		}
		pthread_once(&rt_once, resolve);
		atomic_store_explicit(&resolved, true, memory_order_release);
	}
	return hx_rt.ok;
}

__thread bool hx_rt_thread_ready __attribute__((tls_model("initial-exec")));

/* runtime.h.  hipGetDevice: every release makes the thread's state in it
 * (clr HIP_INIT_API and HIP_RETURN use hip::tls), it touches no stream and
 * no capture, and it cannot fail in a way that matters here.  After the
 * process's device probe (probe_device, whose first answer a runtime
 * without a device must keep giving), and only with a device: without one
 * every call goes to the runtime unchanged and no lock of the shim's is
 * taken around a runtime call. */
void hx_runtime_thread_prepare_slow(void)
{
	int dev;

	hx_rt_thread_ready = true;
	if (hx_runtime_init() && hx_runtime_usable() && hx_rt.GetDevice)
		(void)hx_rt.GetDevice(&dev);
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
