/* SPDX-License-Identifier: MIT */
#include "runtime.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

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
	SYM(EventCreateWithFlags, false),
	SYM(EventRecord, false),
	SYM(EventDestroy, false),
	SYM(StreamCreateWithFlags, false),
	SYM(StreamQuery, false),
};
#undef SYM

static void *find_handle(void)
{
	for (size_t i = 0; i < sizeof(runtime_sonames) / sizeof(runtime_sonames[0]); i++) {
		void *h = dlopen(runtime_sonames[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h)
			return h;
	}
	return NULL;
}

static enum hx_abi abi_from_path(const char *path)
{
	char real[PATH_MAX];
	const char *base, *p;

	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	p = strstr(base, ".so.");
	if (!p)
		return HX_ABI_UNKNOWN;
	switch (atoi(p + 4)) {
	case 0: case 1: case 2: case 3: case 4:
		return HX_ABI_UNKNOWN;
	case 5:
		return HX_ABI_5;
	default:
		return HX_ABI_6;
	}
}

static void resolve(void)
{
	void *handle = RTLD_NEXT;
	enum hx_abi by_path, by_version = HX_ABI_UNKNOWN;
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

	if (dladdr((void *)hx_rt.StreamWaitValue64, &info) && info.dli_fname) {
		snprintf(hx_rt.path, sizeof(hx_rt.path), "%s", info.dli_fname);
		/* Hold a reference of our own: RTLD_NEXT takes none, so an
		 * application that dlopen()ed the runtime could dlclose() it
		 * and leave every pointer above dangling (the shim is
		 * nodelete and outlives it).  Never released. */
		if (!dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))
			hx_warn("cannot pin the HIP runtime %s: %s", info.dli_fname, dlerror());
	}

	/* The soname is authoritative for the layout (the break came with the
	 * soname bump to .so.6); the version number confirms it and covers a
	 * runtime loaded through an unversioned file name. */
	by_path = abi_from_path(hx_rt.path);
	if (hx_rt.RuntimeGetVersion && hx_rt.RuntimeGetVersion(&hx_rt.version) == hipSuccess)
		by_version = hx_rt.version >= 60000000 ? HX_ABI_6 : HX_ABI_5;
	hx_rt.abi = by_path != HX_ABI_UNKNOWN ? by_path : by_version;
	if (by_path != HX_ABI_UNKNOWN && by_version != HX_ABI_UNKNOWN && by_path != by_version)
		hx_warn("runtime %s says version %d but its file name says %s ABI; using %s",
			hx_rt.path, hx_rt.version, hx_abi_name(by_path), hx_abi_name(by_path));

	forced = hx_getenv("HIPEXTSEM_ABI");
	if (forced && (!strcmp(forced, "5") || !strcmp(forced, "6"))) {
		enum hx_abi want = forced[0] == '5' ? HX_ABI_5 : HX_ABI_6;
		/* The override is for runtimes whose flavour cannot be told (or
		 * whose name and version disagree).  One that contradicts every
		 * clue would make the shim read the caller's arrays with the
		 * wrong stride -- past their end for 6.x on a 5.x runtime -- so
		 * it is refused, loudly. */
		if (hx_rt.abi != HX_ABI_UNKNOWN && want != by_path && want != by_version) {
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
	hx_info("runtime %s, version %d, %s ABI", hx_rt.path, hx_rt.version,
		hx_abi_name(hx_rt.abi));
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

bool hx_runtime_usable(void)
{
	/* 0 unknown, 1 usable, 2 not usable.  Whether a device exists does not
	 * change during the life of a process. */
	static atomic_int state;
	int dev, st = atomic_load_explicit(&state, memory_order_acquire);
	hipError_t err;

	if (st)
		return st == 1;
	if (!hx_runtime_init())
		return false;
	err = hx_rt.GetDevice(&dev);
	if (err == hipSuccess) {
		atomic_store_explicit(&state, 1, memory_order_release);
		return true;
	}
	if (err == hipErrorNoDevice || err == hipErrorInvalidDevice ||
	    err == hipErrorNotInitialized || err == 35 /* InsufficientDriver */) {
		hx_warn("the HIP runtime has no usable device (hipGetDevice: error %d); external "
			"semaphore calls go to the runtime unchanged", (int)err);
		atomic_store_explicit(&state, 2, memory_order_release);
	}
	return false;
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

unsigned long long hx_abi_signal_value(const void *params, unsigned i)
{
	if (hx_rt.abi == HX_ABI_5)
		return ((const struct hx_sem_signal_params_v5 *)params)[i].params.fence.value;
	return ((const struct hx_sem_signal_params_v6 *)params)[i].params.fence.value;
}

unsigned hx_abi_signal_flags(const void *params, unsigned i)
{
	if (hx_rt.abi == HX_ABI_5)
		return ((const struct hx_sem_signal_params_v5 *)params)[i].flags;
	return ((const struct hx_sem_signal_params_v6 *)params)[i].flags;
}

unsigned long long hx_abi_wait_value(const void *params, unsigned i)
{
	if (hx_rt.abi == HX_ABI_5)
		return ((const struct hx_sem_wait_params_v5 *)params)[i].params.fence.value;
	return ((const struct hx_sem_wait_params_v6 *)params)[i].params.fence.value;
}

unsigned hx_abi_wait_flags(const void *params, unsigned i)
{
	if (hx_rt.abi == HX_ABI_5)
		return ((const struct hx_sem_wait_params_v5 *)params)[i].flags;
	return ((const struct hx_sem_wait_params_v6 *)params)[i].flags;
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
