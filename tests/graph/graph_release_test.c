/* SPDX-License-Identifier: MIT */
/*
 * Graphs and stream capture where HIP releases differ (docs/graphs.md),
 * built for both flavours and run under the cpuhip release profile that
 * shows each difference (CPUHIP_ROCM):
 *
 *   hold-binary|hold-timeline [N]  5.2 numbers graph node types from 1: a
 *       captured wait still holds the graph's later work until the
 *       semaphore is signaled, over N launches;
 *   invalidated-signal             5.3 to 6.1 enqueue hipLaunchHostFunc for
 *       real on a stream whose capture was invalidated: a signal there is
 *       refused and the semaphore stays unsignaled;
 *   stale-record                   the development tree frees the capture
 *       graph of an invalidated or unjoined capture: graphs built after it
 *       carry no record of it (no spurious wait, nothing read after free).
 *
 * Only calls HIP 5.2 exports are linked; the shim's own graph calls for
 * semaphore nodes (5.3 and later) are looked up at run time.
 */
#include <pthread.h>

#include "hxtest.h"
#include "hipextsem/hip_graph.h"

static int drm = -1;
static uint64_t counter;

static void work(void *data)
{
	(void)data;
	__atomic_add_fetch(&counter, 1, __ATOMIC_RELEASE);
}

static uint64_t count(void)
{
	return __atomic_load_n(&counter, __ATOMIC_ACQUIRE);
}

static bool count_reaches(uint64_t want, unsigned ms)
{
	int64_t end = now_ns() + (int64_t)ms * 1000000;

	while (count() < want && now_ns() < end)
		sleep_ms(1);
	return count() >= want;
}

struct sem {
	uint32_t h;
	hipExternalSemaphore_t s;
};

static struct sem sem_new(bool timeline)
{
	struct sem x;

	x.h = so_create(drm, false);
	HIPCHECK(import_fd(&x.s, so_export(drm, x.h), timeline));
	return x;
}

static void sem_free(struct sem *x)
{
	HIPCHECK(hipDestroyExternalSemaphore(x->s));
	drmSyncobjDestroy(drm, x->h);
}

/* The release the run plays, as major * 100 + minor (0: the default). */
static int profile(void)
{
	const char *e = getenv("CPUHIP_ROCM");
	unsigned major, minor;

	return e && sscanf(e, "%u.%u", &major, &minor) == 2 ? (int)(major * 100 + minor) : 0;
}

typedef hipError_t wait_get_fn(hipGraphNode_t, struct hx_ext_sem_node_params *);
typedef hipError_t exec_wait_set_fn(hipGraphExec_t, hipGraphNode_t,
				    const struct hx_ext_sem_node_params *);

static void *shim_call(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);

	CHECK(f, "%s not found (the shim provides it on every release)", name);
	return f;
}

/* ---- 5.2: node types numbered from 1 ----------------------------------- */

/* Captured: wait(acq); added after it: an event-record node, then a host
 * node.  Every launch must stay held (event not reached, host node not
 * run) until the Vulkan side signals, with a pause every 10th launch. */
static void case_hold(bool timeline, unsigned launches)
{
	wait_get_fn *wait_get = shim_call("hipGraphExternalSemaphoresWaitNodeGetParams");
	exec_wait_set_fn *exec_wait_set =
		shim_call("hipGraphExecExternalSemaphoresWaitNodeSetParams");
	struct hx_host_node_params hp = { work, NULL };
	struct hx_ext_sem_node_params got;
	struct sem acq = sem_new(timeline);
	hipGraphNode_t wnode = NULL, rnode, hnode;
	int rtype = -1, htype = -1;
	bool old = profile() && profile() < 503;
	hipGraphExec_t x;
	hipStream_t st;
	hipEvent_t ev;
	hipGraph_t g;
	size_t nn = 1;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipEventCreateWithFlags(&ev, hipEventDisableTiming));
	HIPCHECK(hipStreamBeginCapture(st, HX_CAPTURE_MODE_GLOBAL));
	HIPCHECK(wait1(acq.s, timeline ? 1 : 0, st));
	HIPCHECK(hipStreamEndCapture(st, &g));
	HIPCHECK(hipGraphGetNodes(g, &wnode, &nn));
	CHECK(nn == 1 && wnode, "captured %zu nodes, want 1", nn);
	HIPCHECK(wait_get(wnode, &got));
	HIPCHECK(hipGraphAddEventRecordNode(&rnode, g, &wnode, 1, ev));
	HIPCHECK(hipGraphAddHostNode(&hnode, g, &rnode, 1, &hp));
	/* The profile must really speak its numbering, or this case shows
	 * nothing: 5.2's EventRecord is 8 and Host 4 (7 and 3 from 5.3). */
	HIPCHECK(hipGraphNodeGetType(rnode, &rtype));
	HIPCHECK(hipGraphNodeGetType(hnode, &htype));
	CHECK(rtype == HX_GRAPH_NODE_EVENT_RECORD + old && htype == HX_GRAPH_NODE_HOST + old,
	      "node types %d, %d under %s", rtype, htype, old ? "5.2" : "this release");
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	for (unsigned i = 0; i < launches; i++) {
		uint64_t before = count();

		if (timeline) {
			test_wait_params w;
			struct hx_ext_sem_node_params p = { &acq.s, &w, 1 };
			memset(&w, 0, sizeof(w));
			w.params.fence.value = i + 1;
			HIPCHECK(exec_wait_set(x, wnode, &p));
		}
		HIPCHECK(hipGraphLaunch(x, st));
		if (i % 10 == 0)
			sleep_ms(20);
		CHECK(count() == before, "launch %u: the work ran before the semaphore was signaled",
		      i);
		CHECK(hipEventQuery(ev) == hipErrorNotReady,
		      "launch %u: the captured event record passed the wait", i);
		so_signal(drm, acq.h, timeline ? i + 1 : 0);
		CHECK(count_reaches(before + 1, 5000), "launch %u: not released by the signal", i);
		HIPCHECK(hipStreamSynchronize(st));
		HIPCHECK(hipEventQuery(ev));
	}
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipEventDestroy(ev));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&acq);
	printf("%u launches held\n", launches);
}

/* ---- 5.3 to 6.1: invalidated captures let host functions through ------- */

static void case_invalidated_signal(void)
{
	struct sem a = sem_new(false);
	hipStream_t st;
	hipGraph_t g = (hipGraph_t)0x1;
	void *p = NULL;
	int status = -1;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamBeginCapture(st, HX_CAPTURE_MODE_GLOBAL));
	/* Not allowed during a global capture: invalidates it. */
	CHECK(hipMalloc(&p, 64) != hipSuccess, "hipMalloc was allowed during a global capture");
	HIPCHECK(hipStreamIsCapturing(st, &status));
	CHECK(status == HX_CAPTURE_STATUS_INVALIDATED, "capture status %d, want invalidated",
	      status);
	EXPECT_ERR(signal1(a.s, 0, st), hipErrorStreamCaptureInvalidated);
	sleep_ms(50);
	CHECK(so_wait(drm, a.h, 0, 100) != 0,
	      "the semaphore was signaled by a signal on an invalidated capture");
	EXPECT_ERR(hipStreamEndCapture(st, &g), hipErrorStreamCaptureInvalidated);
	sleep_ms(50);
	CHECK(so_wait(drm, a.h, 0, 50) != 0, "the semaphore was signaled after the capture ended");
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&a);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	CHECK(expect_shim(), "this suite drives hipextsem semaphores: run it with the shim");
	drm = drm_open();
	if (!strcmp(c, "hold-binary"))
		case_hold(false, argc > 2 ? (unsigned)atoi(argv[2]) : 100);
	else if (!strcmp(c, "hold-timeline"))
		case_hold(true, argc > 2 ? (unsigned)atoi(argv[2]) : 100);
	else if (!strcmp(c, "invalidated-signal"))
		case_invalidated_signal();
	else
		FAIL("unknown case '%s'", c);
	printf("ok %s\n", c);
	return 0;
}
