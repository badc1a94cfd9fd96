/* SPDX-License-Identifier: MIT */
/*
 * The export table's lookups, and the calls that hand out function
 * pointers or report capabilities: hipGetProcAddress,
 * hipGetDriverEntryPoint(_spt) and hipGetDevicePropertiesR0600.
 */
#include <stdio.h>
#include <string.h>

#include "hipextsem/hip_devprop.h"
#include "intercept.h"
#include "log.h"
#include "ops.h"
#include "runtime.h"

/* ---- export table ------------------------------------------------------ */

void *hx_intercept_lookup(const char *name, const char *version)
{
	if (!name || name[0] != 'h' || name[1] != 'i' || name[2] != 'p')
		return NULL;
	for (const struct hx_export *e = hx_exports; e->name; e++)
		if (strcmp(e->name, name) == 0)
			return !version || strcmp(version, e->node) == 0 ? e->fn : NULL;
	return NULL;
}

void *hx_intercept_replacement(const void *fn)
{
	const struct {
		void *rt;
		const char *name;
	} map[] = {
		{ (void *)hx_rt.ImportExternalSemaphore, "hipImportExternalSemaphore" },
		{ (void *)hx_rt.SignalExternalSemaphoresAsync, "hipSignalExternalSemaphoresAsync" },
		{ (void *)hx_rt.WaitExternalSemaphoresAsync, "hipWaitExternalSemaphoresAsync" },
		{ (void *)hx_rt.DestroyExternalSemaphore, "hipDestroyExternalSemaphore" },
		{ (void *)hx_rt.GetProcAddress, "hipGetProcAddress" },
		{ (void *)hx_rt.GetProcAddress_spt, "hipGetProcAddress_spt" },
		{ (void *)hx_rt.GetDriverEntryPoint, "hipGetDriverEntryPoint" },
		{ (void *)hx_rt.GetDevicePropertiesR0600, "hipGetDevicePropertiesR0600" },
		{ (void *)hx_rt.GraphAddExternalSemaphoresSignalNode,
		  "hipGraphAddExternalSemaphoresSignalNode" },
		{ (void *)hx_rt.GraphAddExternalSemaphoresWaitNode,
		  "hipGraphAddExternalSemaphoresWaitNode" },
		{ (void *)hx_rt.GraphExternalSemaphoresSignalNodeGetParams,
		  "hipGraphExternalSemaphoresSignalNodeGetParams" },
		{ (void *)hx_rt.GraphExternalSemaphoresSignalNodeSetParams,
		  "hipGraphExternalSemaphoresSignalNodeSetParams" },
		{ (void *)hx_rt.GraphExternalSemaphoresWaitNodeGetParams,
		  "hipGraphExternalSemaphoresWaitNodeGetParams" },
		{ (void *)hx_rt.GraphExternalSemaphoresWaitNodeSetParams,
		  "hipGraphExternalSemaphoresWaitNodeSetParams" },
		{ (void *)hx_rt.GraphExecExternalSemaphoresSignalNodeSetParams,
		  "hipGraphExecExternalSemaphoresSignalNodeSetParams" },
		{ (void *)hx_rt.GraphExecExternalSemaphoresWaitNodeSetParams,
		  "hipGraphExecExternalSemaphoresWaitNodeSetParams" },
		{ (void *)hx_rt.GraphAddNode, "hipGraphAddNode" },
		{ (void *)hx_rt.GraphNodeSetParams, "hipGraphNodeSetParams" },
		{ (void *)hx_rt.GraphExecNodeSetParams, "hipGraphExecNodeSetParams" },
		{ (void *)hx_rt.GraphInstantiate, "hipGraphInstantiate" },
		{ (void *)hx_rt.GraphInstantiateWithFlags, "hipGraphInstantiateWithFlags" },
		{ (void *)hx_rt.GraphInstantiateWithParams, "hipGraphInstantiateWithParams" },
		{ (void *)hx_rt.GraphLaunch, "hipGraphLaunch" },
		{ (void *)hx_rt.GraphLaunch_spt, "hipGraphLaunch_spt" },
		{ (void *)hx_rt.GraphExecDestroy, "hipGraphExecDestroy" },
		{ (void *)hx_rt.GraphDestroy, "hipGraphDestroy" },
		{ (void *)hx_rt.StreamDestroy, "hipStreamDestroy" },
		{ (void *)hx_rt.GraphClone, "hipGraphClone" },
		{ (void *)hx_rt.GraphDestroyNode, "hipGraphDestroyNode" },
		{ (void *)hx_rt.GraphAddChildGraphNode, "hipGraphAddChildGraphNode" },
		{ (void *)hx_rt.GraphExecUpdate, "hipGraphExecUpdate" },
		{ (void *)hx_rt.StreamBeginCapture, "hipStreamBeginCapture" },
		{ (void *)hx_rt.StreamBeginCapture_spt, "hipStreamBeginCapture_spt" },
		{ (void *)hx_rt.StreamBeginCaptureToGraph, "hipStreamBeginCaptureToGraph" },
		{ (void *)hx_rt.StreamEndCapture, "hipStreamEndCapture" },
		{ (void *)hx_rt.StreamEndCapture_spt, "hipStreamEndCapture_spt" },
	};
	if (!fn)
		return NULL;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].rt == fn)
			return hx_intercept_lookup(map[i].name, NULL);
	return NULL;
}

/* ---- hipGetProcAddress / hipGetDriverEntryPoint ------------------------ */

/* The runtime answers first (version, flags and status are its business);
 * a pointer it hands out for a call the shim implements is swapped for the
 * shim's.  The swap goes by pointer (covers aliases such as
 * hipGetDeviceProperties -> R0600 for hipVersion >= 600) and by name. */
static void swap_pointer(const char *symbol, void **pfn)
{
	void *mine;

	if (!*pfn)
		return;
	mine = hx_intercept_replacement(*pfn);
	if (!mine)
		mine = hx_intercept_lookup(symbol, NULL);
	if (mine) {
		hx_dbg("%s: handing out the shim's %s", symbol, symbol);
		*pfn = mine;
	}
}

hipError_t hx_intercept_get_proc_address(const char *symbol, void **pfn, int hipVersion,
					 uint64_t flags, hipDriverProcAddressQueryResult *status)
{
	hipError_t err;

	if (!hx_runtime_init() || !hx_rt.GetProcAddress) {
		hx_err("hipGetProcAddress: the HIP runtime%s has no hipGetProcAddress (HIP 6.1+)",
		       hx_rt.path[0] ? "" : " (not loaded)");
		return hipErrorNotSupported;
	}
	err = hx_rt.GetProcAddress(symbol, pfn, hipVersion, flags, status);
	if (err == hipSuccess && pfn && symbol)
		swap_pointer(symbol, pfn);
	return err;
}

/* hipGetProcAddress_spt: new in the development tree after 7.2 (not in
 * Debian's 7.2.4), the lookup per-thread-default-stream builds use; it hands
 * out the same four semaphore calls (they have no _spt form), so it is a
 * way around the shim unless it swaps them too.  Its node, hip_7.2, is the
 * one a loader's symbol test of that tree expects; clr's hip_hcc.map.in as
 * stored here does not list it yet. */
hipError_t hx_intercept_get_proc_address_spt(const char *symbol, void **pfn, int hipVersion,
					     uint64_t flags, hipDriverProcAddressQueryResult *status)
{
	hipError_t err;

	if (!hx_runtime_init() || !hx_rt.GetProcAddress_spt) {
		hx_err("hipGetProcAddress_spt: the HIP runtime%s has no hipGetProcAddress_spt (the "
		       "development tree after 7.2)", hx_rt.path[0] ? "" : " (not loaded)");
		return hipErrorNotSupported;
	}
	err = hx_rt.GetProcAddress_spt(symbol, pfn, hipVersion, flags, status);
	if (err == hipSuccess && pfn && symbol)
		swap_pointer(symbol, pfn);
	return err;
}

/* hipGetDriverEntryPoint and its per-thread-stream twin (HIP 7.1+; the
 * _spt one hands out the same functions, so it is a way around the shim
 * too).  `spt` picks which of the runtime's two answers first. */
hipError_t hx_intercept_get_driver_entry_point(const char *symbol, void **pfn,
					       unsigned long long flags, int *status, bool spt)
{
	const char *name = spt ? "hipGetDriverEntryPoint_spt" : "hipGetDriverEntryPoint";
	hx_get_driver_entry_point_fn *real = NULL;
	hipError_t err;

	if (hx_runtime_init())
		real = spt ? hx_rt.GetDriverEntryPoint_spt : hx_rt.GetDriverEntryPoint;
	if (!real) {
		hx_err("%s: the HIP runtime has no %s (HIP 7.1+)", name, name);
		return hipErrorNotSupported;
	}
	err = real(symbol, pfn, flags, status);
	if (err == hipSuccess && pfn && symbol)
		swap_pointer(symbol, pfn);
	return err;
}

/* ---- capability report ------------------------------------------------- */

hipError_t hx_intercept_device_props_r0600(void *prop, int device)
{
	static bool told;
	char why[256];
	hipError_t err;
	bool ok;

	if (!hx_runtime_init() || !hx_rt.GetDevicePropertiesR0600) {
		hx_err("hipGetDevicePropertiesR0600: the HIP runtime has none (HIP 6.0+)");
		return hipErrorNotSupported;
	}
	err = hx_rt.GetDevicePropertiesR0600(prop, device);
	if (err != hipSuccess || !prop || !hx_runtime_usable())
		return err;
	/* Any render node with timeline syncobjs imports the fds for every
	 * device of the process, so the answer is the same for each. */
	ok = hx_op_timeline_supported(why, sizeof(why));
	((struct hx_device_prop_r0600 *)prop)->timelineSemaphoreInteropSupported = ok ? 1 : 0;
	if (!ok && !__atomic_exchange_n(&told, true, __ATOMIC_RELAXED))
		hx_warn("timelineSemaphoreInteropSupported = 0: %s", why);
	return err;
}
