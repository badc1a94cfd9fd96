/* SPDX-License-Identifier: MIT */
/*
 * An ordinary HIP program for the regression check: prints the result of
 * every call it makes (codes, values, never pointers), so that a run with
 * the shim preloaded can be compared line by line with a run without it.
 *
 *   regress-app nosem   streams, events, memory, host functions, errors
 *                       (and graphs, capture, hipGetProcAddress and
 *                       R0600 on the 6.x build): none touches external
 *                       semaphores, so the shim must change nothing
 *   regress-app sem     also the four semaphore calls with stock-visible
 *                       inputs: for the runtime WITHOUT a device, where
 *                       the shim must hand over the runtime's own answers
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hipextsem/hip_api.h"
#include "hipextsem/hip_devprop.h"
#if REGRESS_ABI == 6
#include "hipextsem/hip_graph.h"
#endif

#define R(call) printf("%-60s = %d\n", #call, (int)(call))

static int hits;
static void host_fn(void *p)
{
	(void)p;
	hits++;
}

static void cb(hipStream_t s, hipError_t st, void *p)
{
	(void)s, (void)st, (void)p;
	hits++;
}

static void nosem(void)
{
	int n = -1, v = -1, dev = -1;
	hipStream_t st = NULL;
	hipEvent_t e0 = NULL, e1 = NULL;
	void *d = NULL, *h = NULL;
	char buf[64] = "hello", out[64] = "";
	uint64_t *flag = NULL;

	R(hipGetDeviceCount(&n));
	printf("count %d\n", n);
	R(hipRuntimeGetVersion(&v));
	printf("version %d\n", v);
	R(hipGetDevice(&dev));
	R(hipDeviceGetAttribute(&v, hipDeviceAttributeCanUseStreamWaitValue, 0));
	R(hipStreamCreate(&st));
	R(hipEventCreate(&e0));
	R(hipEventCreateWithFlags(&e1, hipEventBlockingSync));
	R(hipMalloc(&d, 64));
	R(hipHostMalloc(&h, 64, 0));
	R(hipHostMalloc((void **)&flag, 8, 0));
	if (flag)
		*flag = 0;
	R(hipEventRecord(e0, st));
	R(hipMemcpyAsync(d, buf, 64, hipMemcpyHostToDevice, st));
	R(hipMemcpyAsync(out, d, 64, hipMemcpyDeviceToHost, st));
	R(hipStreamAddCallback(st, cb, NULL, 0));
	R(hipStreamWriteValue64(st, flag, 7, 0));
	R(hipStreamWaitValue64(st, flag, 7, hipStreamWaitValueGte, ~0ull));
#if REGRESS_ABI == 6
	R(hipLaunchHostFunc(st, host_fn, NULL));
#else
	(void)host_fn;
#endif
	R(hipEventRecord(e1, st));
	R(hipStreamSynchronize(st));
	R(hipEventSynchronize(e1));
	R(hipEventQuery(e1));
	printf("copied '%s', hits %d, flag %llu\n", out, hits,
	       flag ? (unsigned long long)*flag : 0ull);
	R(hipStreamQuery(st));
	R(hipGetLastError());
	R(hipStreamSynchronize((hipStream_t)(uintptr_t)0x1234));
	R(hipGetLastError());
	R(hipPeekAtLastError());
	R(hipEventDestroy(e0));
	R(hipEventDestroy(e1));
	R(hipFree(d));
	R(hipHostFree(h));
	R(hipFree((void *)(uintptr_t)0x10));
#if REGRESS_ABI == 6
	{
		struct hx_device_prop_r0600 p;
		hipGraph_t g = NULL;
		hipGraphExec_t x = NULL;
		hipGraphNode_t a;
		struct hx_host_node_params hp = { host_fn, NULL };
		int status = -1;
		void *fn = NULL;
		hipDriverProcAddressQueryResult qs = 9;

		memset(&p, 0, sizeof(p));
		R(hipGetDevicePropertiesR0600(&p, 0));
		printf("props %s %d %d\n", p.name, p.pciBusID, p.warpSize);
		R(hipGetDevicePropertiesR0600(&p, 5));
		R(hipGetProcAddress("hipStreamCreate", &fn, 600, 0, &qs));
		printf("status %d found %d\n", (int)qs, fn != NULL);
		R(hipGetProcAddress("hipNoSuch", &fn, 600, 0, &qs));
		printf("status %d found %d\n", (int)qs, fn != NULL);
		R(hipGetProcAddress("hipStreamCreate", &fn, 600, 99, &qs));
		R(hipGraphCreate(&g, 0));
		R(hipGraphAddHostNode(&a, g, NULL, 0, &hp));
		R(hipGraphInstantiate(&x, g, NULL, NULL, 0));
		R(hipGraphLaunch(x, st));
		R(hipStreamSynchronize(st));
		R(hipStreamBeginCapture(st, 0));
		R(hipStreamIsCapturing(st, &status));
		printf("capturing %d\n", status);
		R(hipLaunchHostFunc(st, host_fn, NULL));
		R(hipStreamEndCapture(st, &g));
		R(hipGraphExecDestroy(x));
		printf("hits %d\n", hits);
	}
#endif
	R(hipStreamDestroy(st));
	R(hipDeviceSynchronize());
}

static void sem(void)
{
	/* Both layouts' fields at the same offsets; big enough for either. */
	unsigned char desc[96], params[2 * 144];
	hipExternalSemaphore_t s = NULL, arr[2] = { NULL, NULL };
	int fd = open("/dev/null", O_RDONLY);

	memset(desc, 0, sizeof(desc));
	memset(params, 0, sizeof(params));
	R(hipImportExternalSemaphore(NULL, NULL));
	R(hipImportExternalSemaphore(&s, NULL));
	desc[0] = 1;
	memcpy(desc + 8, &fd, sizeof(fd));
	R(hipImportExternalSemaphore(&s, (const hipExternalSemaphoreHandleDesc *)desc));
	desc[0] = 2;
	R(hipImportExternalSemaphore(&s, (const hipExternalSemaphoreHandleDesc *)desc));
	desc[0] = 9;
	R(hipImportExternalSemaphore(&s, (const hipExternalSemaphoreHandleDesc *)desc));
	desc[0] = 77;
	R(hipImportExternalSemaphore(&s, (const hipExternalSemaphoreHandleDesc *)desc));
	R(hipSignalExternalSemaphoresAsync(NULL, NULL, 1, NULL));
	R(hipSignalExternalSemaphoresAsync(arr, (const void *)params, 0, NULL));
	R(hipSignalExternalSemaphoresAsync(arr, (const void *)params, 1, NULL));
	arr[0] = (hipExternalSemaphore_t)(uintptr_t)0x1000;
	R(hipSignalExternalSemaphoresAsync(arr, (const void *)params, 1, NULL));
	R(hipWaitExternalSemaphoresAsync(arr, (const void *)params, 1, NULL));
	R(hipWaitExternalSemaphoresAsync(NULL, (const void *)params, 1, NULL));
	R(hipDestroyExternalSemaphore(NULL));
	R(hipDestroyExternalSemaphore(arr[0]));
	R(hipGetLastError());
	close(fd);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2 || (strcmp(argv[1], "nosem") && strcmp(argv[1], "sem"))) {
		fprintf(stderr, "usage: regress-app nosem|sem\n");
		return 2;
	}
	if (!strcmp(argv[1], "sem"))
		sem();
	else
		nosem();
	return 0;
}
