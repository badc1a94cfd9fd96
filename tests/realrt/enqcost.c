/* Enqueue cost on a real HIP runtime (run through tests/realrt/with-device
 * with the shim preloaded): the CPU time of one call, for the shim's
 * signal and wait (1 and 16 timeline semaphores) and for the runtime's
 * own primitives they stand against: hipLaunchHostFunc (or
 * hipStreamAddCallback where the runtime has no hipLaunchHostFunc, 5.2)
 * and hipStreamWaitValue64.  Only the call is timed (the stream is drained
 * between rounds, untimed); the median of ROUNDS x BATCH calls is printed
 * in ns, with its ratio to the primitive (ROW: wall time), and the median
 * of the calling thread's CPU time (ROWCPU).  The fake device makes the
 * runtime do its real CPU work (packets, markers); its doorbell is plain
 * memory, so the runtime's side is a little cheaper than on hardware and
 * the ratios err against the shim.  Waits are enqueued unsatisfied (the
 * shim's real path) and released from the CPU after each batch. */
#include <hip/hip_runtime_api.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xf86drm.h>

#include "rt_check.h"

#define ROUNDS 10
#define BATCH 20
#define NSEM 16

static int drm;
static uint32_t handles[NSEM];
static hipExternalSemaphore_t sems[NSEM];
static hipExternalSemaphoreSignalParams sp[NSEM];
static hipExternalSemaphoreWaitParams wp[NSEM];
static uint64_t next_value = 1;
static uint64_t *slot;

typedef hipError_t (*host_fn_t)(hipStream_t, hipHostFn_t, void *);
static host_fn_t launch_host_func;

static void host_fn(void *p) { (void)p; }
static void cb_fn(hipStream_t s, hipError_t e, void *p) { (void)s; (void)e; (void)p; }

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

enum op { OP_HOSTFN, OP_WAITVALUE, OP_SIGNAL, OP_WAIT };

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The calling thread's CPU time of the last call one() timed: the wall
 * time also counts what other threads (the shim's waiter, the runtime's,
 * the fake device's) ran on the VM's two vCPUs meanwhile. */
static int64_t last_cpu;

static int64_t one(enum op op, int n, hipStream_t st)
{
	int64_t c0 = thread_cpu_ns(), t0 = now_ns();
	switch (op) {
	case OP_HOSTFN:
		if (launch_host_func)
			HIPOK(launch_host_func(st, host_fn, NULL));
		else
			HIPOK(hipStreamAddCallback(st, cb_fn, NULL, 0));
		break;
	case OP_WAITVALUE:
		HIPOK(hipStreamWaitValue64(st, slot, 0, hipStreamWaitValueGte, ~0ULL));
		break;
	case OP_SIGNAL:
		for (int i = 0; i < n; i++)
			sp[i].params.fence.value = next_value;
		HIPOK(hipSignalExternalSemaphoresAsync(sems, sp, (unsigned)n, st));
		break;
	case OP_WAIT:
		for (int i = 0; i < n; i++)
			wp[i].params.fence.value = next_value;
		HIPOK(hipWaitExternalSemaphoresAsync(sems, wp, (unsigned)n, st));
		break;
	}
	int64_t t = now_ns() - t0;
	last_cpu = thread_cpu_ns() - c0;
	next_value++;
	return t;
}

/* Median wall time per call; *cpu gets the median CPU time. */
static int64_t median_cpu(enum op op, int n, hipStream_t st, int64_t *cpu)
{
	static int64_t t[ROUNDS * BATCH], c[ROUNDS * BATCH];
	int k = 0;
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t first = next_value;
		for (int b = 0; b < BATCH; b++) {
			t[k] = one(op, n, st);
			c[k++] = last_cpu;
		}
		if (op == OP_WAIT) {
			/* release the batch: every semaphore reaches the last value */
			uint64_t last = next_value - 1;
			uint64_t pts[NSEM];
			for (int i = 0; i < n; i++)
				pts[i] = last;
			if (drmSyncobjTimelineSignal(drm, handles, pts, (uint32_t)n) != 0)
				FAIL("timeline signal: %s", strerror(errno));
		}
		(void)first;
		HIPOK(hipStreamSynchronize(st));
	}
	qsort(t, (size_t)k, sizeof(t[0]), cmp);
	qsort(c, (size_t)k, sizeof(c[0]), cmp);
	if (cpu)
		*cpu = c[k / 2];
	return t[k / 2];
}

static int64_t cpu_of[4][2]; /* [op][n == NSEM] */

static int64_t median(enum op op, int n, hipStream_t st)
{
	return median_cpu(op, n, st, &cpu_of[op][n == NSEM]);
}

int main(void)
{
	hipStream_t st;
	const char *ver = getenv("HX_RT_VERSION");

	drm = drm_open();
	launch_host_func = (host_fn_t)dlsym(RTLD_DEFAULT, "hipLaunchHostFunc");
	HIPOK(hipStreamCreate(&st));
	HIPOK(hipHostMalloc((void **)&slot, 64, 0));
	*slot = 0;
	for (int i = 0; i < NSEM; i++) {
		hipExternalSemaphoreHandleDesc d;
		int fd = -1;
		if (drmSyncobjCreate(drm, 0, &handles[i]) || drmSyncobjHandleToFD(drm, handles[i], &fd))
			FAIL("syncobj: %s", strerror(errno));
		memset(&d, 0, sizeof(d));
		d.type = (hipExternalSemaphoreHandleType)9; /* timeline fd */
		d.handle.fd = fd;
		HIPOK(hipImportExternalSemaphore(&sems[i], &d));
	}
	memset(sp, 0, sizeof(sp));
	memset(wp, 0, sizeof(wp));
	/* warm-up: every path once */
	median(OP_HOSTFN, 1, st);
	median(OP_WAITVALUE, 1, st);
	median(OP_SIGNAL, 1, st);
	median(OP_WAIT, 1, st);

	int64_t hf = median(OP_HOSTFN, 1, st), wv = median(OP_WAITVALUE, 1, st);
	int64_t s1 = median(OP_SIGNAL, 1, st), s16 = median(OP_SIGNAL, NSEM, st);
	int64_t w1 = median(OP_WAIT, 1, st), w16 = median(OP_WAIT, NSEM, st);
	const char *hfname = launch_host_func ? "hipLaunchHostFunc" : "hipStreamAddCallback";
	printf("HIP %s: median enqueue cost, ns per call (%d calls each)\n", ver ? ver : "?",
	       ROUNDS * BATCH);
	printf("  %-22s %8lld\n", hfname, (long long)hf);
	printf("  %-22s %8lld\n", "hipStreamWaitValue64", (long long)wv);
	printf("  %-22s %8lld  %.2fx %s\n", "signal, 1 semaphore", (long long)s1, (double)s1 / hf, hfname);
	printf("  %-22s %8lld  %.2fx %s\n", "signal, 16 semaphores", (long long)s16, (double)s16 / hf, hfname);
	printf("  %-22s %8lld  %.2fx hipStreamWaitValue64\n", "wait, 1 semaphore", (long long)w1, (double)w1 / wv);
	printf("  %-22s %8lld  %.2fx hipStreamWaitValue64\n", "wait, 16 semaphores", (long long)w16, (double)w16 / wv);
	printf("ROW|%s|%s|%lld|%lld|%lld|%lld|%lld|%lld\n", ver ? ver : "?", hfname, (long long)hf,
	       (long long)wv, (long long)s1, (long long)s16, (long long)w1, (long long)w16);
	/* The same medians in the calling thread's CPU time. */
	printf("ROWCPU|%s|%s|%lld|%lld|%lld|%lld|%lld|%lld\n", ver ? ver : "?", hfname,
	       (long long)cpu_of[OP_HOSTFN][0], (long long)cpu_of[OP_WAITVALUE][0],
	       (long long)cpu_of[OP_SIGNAL][0], (long long)cpu_of[OP_SIGNAL][1],
	       (long long)cpu_of[OP_WAIT][0], (long long)cpu_of[OP_WAIT][1]);
	for (int i = 0; i < NSEM; i++)
		HIPOK(hipDestroyExternalSemaphore(sems[i]));
	HIPOK(hipStreamDestroy(st));
	return 0;
}
