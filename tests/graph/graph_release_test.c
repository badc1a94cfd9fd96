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
 *       carry no record of it (no spurious wait, nothing read after free);
 *   hostwait-threads               every release, HIPEXTSEM_HOST_WAIT=1 or
 *       CPUHIP_STREAM_WAIT=refuse (the fall-back made during the launch): a
 *       launch blocked in its wait holds no lock another launch needs;
 *   failed-launch-stream, failed-launch-runtime, two-devices  every release:
 *       a launch that fails (a destroyed stream; the runtime refusing it)
 *       leaves no wait behind to take the next signal, and a wait node made
 *       on another device than the launch's works (CPUHIP_DEVICES=2);
 *   fork-graph                     every release: children forked while
 *       another thread works on graphs inherit no graph lock held.
 *   capture-race                   every release (6.x flavour): a capture
 *       begun on another thread while a signal is enqueued records its
 *       one-shot host function; every launch signals, nothing is read
 *       after free.
 *   capture-race-wait              every release (6.x flavour): a capture
 *       begun during a wait's stream wait (which no release captures or
 *       refuses: it goes to the stream's queue) leaves the wait in force
 *       on the stream and released by its signal; the process keeps its
 *       asynchronous wait path.
 *   launch-spt-capture             every release (6.x flavour):
 *       hipGraphLaunch_spt into a capturing stream is refused with nothing
 *       queued; the next launch takes the next signal.
 *   dead-handle-node               every release (6.x flavour), 7.x with its
 *       empty node-call slots: a destroyed semaphore's handle given to the
 *       node adds, alone or beside a live one, is answered by the shim
 *       (hipErrorInvalidResourceHandle, as signal and wait answer), never
 *       passed to the runtime's own node call.
 *   capture-idle                   every release (6.x flavour): captures
 *       that began and ended through the shim (one with a signal in
 *       it, one empty) leave none counted: a signal and a
 *       wait on an ordinary stream then ask the runtime no capture question
 *       (the one-load path of docs/graphs.md; tests/mutation
 *       began-not-recorded).
 *   end-twice                      6.0 and 6.3 (6.x flavour): ends of an
 *       invalidated Relaxed capture, which the runtime answers
 *       hipErrorStreamCaptureInvalidated each time and leaves in place,
 *       count as one end: another stream's live capture still records its
 *       signal as a node that every launch runs, the semaphore stays the
 *       application's, and the ended capture's stream takes a wait;
 *       once that capture ended, a signal on the invalidated one is still
 *       refused.
 *   capture-come-go                every release (6.x flavour): another
 *       thread's capture of the stream that begins and ends while a signal
 *       is enqueued neither takes nor loses the signal: it runs once.
 *   held-call                      every release (6.x flavour): a signal held
 *       inside the runtime's hipLaunchHostFunc (full rings, say) until a
 *       signal on another stream is delivered, while a third thread begins
 *       a capture: the capture's begin waits for the held call, but the
 *       other signal is not queued behind it (the hang that would be).
 *   exec-update-destroyed          every release (6.x flavour): an exec
 *       with no wait node, updated to a graph with one and destroyed by
 *       another thread while the runtime updates it, keeps no record.
 *
 * Only calls HIP 5.2 exports are linked; the shim's own graph calls for
 * semaphore nodes (5.3 and later) are looked up at run time.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "hxtest.h"
#include "hipextsem/hip_graph.h"
#include "graph_util.h"

static void work_cb(hipStream_t s, hipError_t status, void *data)
{
	(void)s, (void)status;
	work(data);
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

/* ---- every release: a capture begun on another thread mid-signal ----- */

/* The stream is not capturing when the shim looks and is by the time the
 * runtime takes the signal's host function (cpuhip begins the capture
 * inside hipLaunchHostFunc, through the shim's hipStreamBeginCapture, as
 * another thread would): the runtime records the one-shot host function
 * into the capture, and every launch of the graph runs it.  Each launch
 * must signal the semaphore it was given, and nothing may be read after
 * free: between launches an ordinary signal of another semaphore takes the
 * record a freed one would have gone back to. */
#if HX_TEST_ABI == 6
static void case_capture_race(void)
{
	void (*arm)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "cpuhipTestCaptureRaceNext");
	struct sem a = sem_new(false), b = sem_new(false);
	hipStream_t st, other;
	hipGraph_t g = NULL;
	hipGraphExec_t x = NULL;
	int status = -1;

	CHECK(arm, "cpuhipTestCaptureRaceNext not found: this case runs on cpuhip");
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamCreate(&other));
	arm();
	HIPCHECK(signal1(a.s, 0, st));
	HIPCHECK(hipStreamIsCapturing(st, &status));
	CHECK(status == HX_CAPTURE_STATUS_ACTIVE, "capture status %d after the raced signal, want "
	      "active (the test hook did not begin the capture)", status);
	HIPCHECK(hipStreamEndCapture(st, &g));
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	sleep_ms(50);
	CHECK(so_wait(drm, a.h, 0, 0) != 0, "the captured signal ran before any launch");
	for (unsigned i = 0; i < 4; i++) {
		HIPCHECK(signal1(b.s, 0, other));
		HIPCHECK(hipStreamSynchronize(other));
		CHECK(so_wait(drm, b.h, 0, 1000) == 0, "round %u: the ordinary signal was lost", i);
		CHECK(drmSyncobjReset(drm, &b.h, 1) == 0, "reset");
		HIPCHECK(hipGraphLaunch(x, st));
		HIPCHECK(hipStreamSynchronize(st));
		CHECK(so_wait(drm, a.h, 0, 1000) == 0,
		      "launch %u of the graph did not signal the semaphore its captured signal names",
		      i);
		CHECK(drmSyncobjReset(drm, &a.h, 1) == 0, "reset");
		sleep_ms(20);
		CHECK(so_wait(drm, b.h, 0, 0) != 0,
		      "launch %u signaled another semaphore than the captured one", i);
	}
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(other));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&b);
	sem_free(&a);
}
#endif

/* ---- repeated ends of an invalidated capture ------------------------- */

#if HX_TEST_ABI == 6
static void case_end_twice(void)
{
	struct sem a = sem_new(false);
	hipStream_t inv, live;
	hipGraph_t g = NULL, none = NULL;
	hipGraphExec_t x = NULL;
	int status = -1;

	HIPCHECK(hipStreamCreate(&inv));
	HIPCHECK(hipStreamCreate(&live));
	HIPCHECK(hipStreamBeginCapture(inv, HX_CAPTURE_MODE_RELAXED));
	/* A synchronize of a capturing stream invalidates its capture
	 * (Stream::StreamCaptureOngoing). */
	CHECK(hipStreamSynchronize(inv) != hipSuccess,
	      "hipStreamSynchronize of a capturing stream was allowed");
	HIPCHECK(hipStreamIsCapturing(inv, &status));
	CHECK(status == HX_CAPTURE_STATUS_INVALIDATED, "capture status %d, want invalidated",
	      status);
	HIPCHECK(hipStreamBeginCapture(live, HX_CAPTURE_MODE_RELAXED));
	for (int i = 0; i < 3; i++)
		EXPECT_ERR(hipStreamEndCapture(inv, &none), hipErrorStreamCaptureInvalidated);
	/* The live capture is still one: its signal becomes a node. */
	HIPCHECK(signal1(a.s, 0, live));
	HIPCHECK(hipStreamEndCapture(live, &g));
	CHECK(g != NULL, "the live capture handed out no graph");
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	sleep_ms(50);
	CHECK(so_wait(drm, a.h, 0, 0) != 0, "the captured signal ran before any launch");
	for (unsigned i = 0; i < 3; i++) {
		HIPCHECK(hipGraphLaunch(x, live));
		HIPCHECK(hipStreamSynchronize(live));
		CHECK(so_wait(drm, a.h, 0, 1000) == 0, "launch %u did not signal", i);
		CHECK(drmSyncobjReset(drm, &a.h, 1) == 0, "reset");
	}
	/* The semaphore is still the application's, and a stream whose
	 * capture ended takes a wait. */
	HIPCHECK(wait1(a.s, 0, live));
	so_signal(drm, a.h, 0);
	HIPCHECK(hipStreamSynchronize(live));
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	/* The invalidated capture is still in place (every end answered
	 * 901), and now the only one: a signal there is still refused and
	 * signals nothing, as CUDA does; 6.0 would run its host function for
	 * real (tests/mutation end-uncounts-always). */
	status = -1;
	HIPCHECK(hipStreamIsCapturing(inv, &status));
	CHECK(status == HX_CAPTURE_STATUS_INVALIDATED, "capture status %d after the ends, want "
	      "invalidated", status);
	EXPECT_ERR(signal1(a.s, 0, inv), hipErrorStreamCaptureInvalidated);
	sleep_ms(50);
	CHECK(so_wait(drm, a.h, 0, 0) != 0,
	      "a signal on a stream whose capture is invalidated signaled");
	HIPCHECK(hipStreamDestroy(live));
	HIPCHECK(hipStreamDestroy(inv));
	sem_free(&a);
}
#endif

/* Captures that ended leave none counted: a signal and a wait on a stream
 * that never captured make no capture query of the runtime (graph.c keeps
 * the count of live captures; while it is 0 one load decides). */
#if HX_TEST_ABI == 6
static void case_capture_idle(void)
{
	void (*trace)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "cpuhipTestBoundaryTrace");
	size_t (*calls)(char *, size_t) =
		(size_t (*)(char *, size_t))dlsym(RTLD_DEFAULT, "cpuhipTestBoundaryCalls");
	/* (hipThreadExchangeStreamCaptureMode is no question: the wait's slot
	 * allocation makes it.) */
	static const char *const queries[] = { "hipStreamIsCapturing", "hipStreamGetCaptureInfo",
					       "hipStreamGetCaptureInfo_v2" };
	struct sem a = sem_new(false);
	hipStream_t cap, st;
	hipGraph_t g = NULL, none = NULL;
	char buf[4096];

	CHECK(trace && calls, "cpuhipTestBoundaryTrace not found: this case runs on cpuhip");
	HIPCHECK(hipStreamCreate(&cap));
	HIPCHECK(hipStreamCreate(&st));
	/* A capture ended with its graph (a signal in it).  (An invalidated
	 * one that clr leaves in place stays counted, rightly: end-twice.) */
	HIPCHECK(hipStreamBeginCapture(cap, HX_CAPTURE_MODE_GLOBAL));
	HIPCHECK(signal1(a.s, 0, cap));
	HIPCHECK(hipStreamEndCapture(cap, &g));
	CHECK(g != NULL, "the capture handed out no graph");
	HIPCHECK(hipGraphDestroy(g));
	/* and one more on the same stream, ended empty */
	HIPCHECK(hipStreamBeginCapture(cap, HX_CAPTURE_MODE_RELAXED));
	HIPCHECK(hipStreamEndCapture(cap, &none));
	if (none)
		HIPCHECK(hipGraphDestroy(none));
	trace(1);
	HIPCHECK(signal1(a.s, 0, st));
	HIPCHECK(wait1(a.s, 0, st));
	trace(0);
	CHECK(calls(buf, sizeof(buf)) != (size_t)-1, "boundary trace overflow");
	for (unsigned i = 0; i < sizeof(queries) / sizeof(queries[0]); i++)
		CHECK(!strstr(buf, queries[i]),
		      "with every capture ended, a signal and a wait asked %s (a capture is "
		      "still counted); their calls:\n%s", queries[i], buf);
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(so_wait(drm, a.h, 0, 0) != 0, "the wait did not consume the signal");
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipStreamDestroy(cap));
	sem_free(&a);
}
#endif

/* Another thread's capture that comes and goes while a signal is enqueued
 * on the stream (through the shim's capture calls): the signal is not
 * recorded into that capture and lost with its graph, nor run after free;
 * it runs on the stream, once. */
#if HX_TEST_ABI == 6
static void case_capture_come_go(void)
{
	void (*arm)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "cpuhipTestCaptureRaceNextThread");
	struct sem a = sem_new(false);
	hipStream_t st;
	int status = -1;

	CHECK(arm, "cpuhipTestCaptureRaceNextThread not found: this case runs on cpuhip");
	HIPCHECK(hipStreamCreate(&st));
	arm();
	HIPCHECK(signal1(a.s, 0, st));
	CHECK(so_wait(drm, a.h, 0, 2000) == 0,
	      "the signal was lost: recorded into another thread's capture that ended");
	/* The other thread's capture comes and goes once the signal was
	 * enqueued (the stream cannot be synchronized while it is live). */
	sleep_ms(100);
	for (int i = 0; i < 200; i++) {
		HIPCHECK(hipStreamIsCapturing(st, &status));
		if (status == HX_CAPTURE_STATUS_NONE)
			break;
		sleep_ms(10);
	}
	CHECK(status == HX_CAPTURE_STATUS_NONE, "the other thread's capture never ended");
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(drmSyncobjReset(drm, &a.h, 1) == 0, "reset");
	HIPCHECK(signal1(a.s, 0, st));
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(so_wait(drm, a.h, 0, 2000) == 0, "the next signal did not arrive");
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&a);
}
#endif

/* A capture that appears on the stream while a wait is enqueued (begun from
 * inside the enqueue, past the shim's capture check).  Every release takes
 * hipStreamWaitValue64 on a capturing stream into the stream's queue, not
 * into the capture (tests/realrt/capture_probe.c on 5.2.3, 5.7.1, 6.4.3,
 * 7.2.4), and cpuhip plays that: the wait is in force on the stream, the
 * capture's graph has no node of it, its signal releases it, and the
 * process keeps its asynchronous wait path; a later wait on another stream
 * does not block its caller. */
#if HX_TEST_ABI == 6
static void case_capture_race_wait(void)
{
	void (*arm)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "cpuhipTestCaptureRaceNext");
	int (*path)(int *, char *, size_t) =
		(int (*)(int *, char *, size_t))dlsym(RTLD_DEFAULT, "hipextsemGetWaitPath");
	struct sem a = sem_new(true);
	hipStream_t st, other;
	hipGraph_t g = NULL;
	int status = -1;
	int64_t t0;

	CHECK(arm && path, "cpuhipTestCaptureRaceNext or hipextsemGetWaitPath not found");
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamCreate(&other));
	arm();
	HIPCHECK(wait1(a.s, 1, st));
	HIPCHECK(hipStreamIsCapturing(st, &status));
	CHECK(status == HX_CAPTURE_STATUS_ACTIVE, "capture status %d after the raced wait, want "
	      "active (the test hook did not begin the capture)", status);
	HIPCHECK(hipStreamEndCapture(st, &g));
	CHECK(g, "no graph");
	{
		size_t nodes = 99;

		HIPCHECK(hipGraphGetNodes(g, NULL, &nodes));
		CHECK(nodes == 0, "the capture's graph has %zu node(s); the stream wait went to the "
		      "stream's queue, so it should have none", nodes);
	}
	HIPCHECK(hipGraphDestroy(g));
	CHECK(path(NULL, NULL, 0) == 0,
	      "a capture during a wait moved the process to host-blocking waits");
	CHECK(hipStreamQuery(st) == hipErrorNotReady,
	      "the raced wait is not in force on the stream before its signal");
	t0 = now_ns();
	HIPCHECK(wait1(a.s, 2, other));
	CHECK(now_ns() - t0 < 1000000000ll, "a later wait blocked its caller");
	so_signal(drm, a.h, 2);
	HIPCHECK(hipStreamSynchronize(other));
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipStreamDestroy(other));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&a);
}
#endif

/* The shim's counters (ops.h struct hx_stats, exported as
 * hipextsemGetStats). */
struct hx_stats_view {
	unsigned live_sems, pending_waits, pending_signals, slots_allocated;
};
static hipGraphExec_t wait_work_exec(const struct sem *s, hipGraph_t *g, int dev);
static void good_launch(hipGraphExec_t x, hipStream_t st, const struct sem *s, const char *after);

/* hipGraphLaunch_spt into a capturing stream: refused before anything is
 * queued, as hipGraphLaunch is (a wait queued at capture time would take a
 * signal meant for a later launch). */
#if HX_TEST_ABI == 6
static void case_launch_spt_capture(void)
{
	hipError_t (*launch_spt)(hipGraphExec_t, hipStream_t) =
		(hipError_t(*)(hipGraphExec_t, hipStream_t))dlsym(RTLD_DEFAULT, "hipGraphLaunch_spt");
	void (*stats)(struct hx_stats_view *) =
		(void (*)(struct hx_stats_view *))dlsym(RTLD_DEFAULT, "hipextsemGetStats");
	struct sem s = sem_new(false);
	struct hx_stats_view st0, st1;
	hipGraphExec_t x;
	hipGraph_t g, cg = NULL;
	hipStream_t st;

	CHECK(launch_spt && stats, "hipGraphLaunch_spt or hipextsemGetStats not found");
	x = wait_work_exec(&s, &g, 0);
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamBeginCapture(st, HX_CAPTURE_MODE_GLOBAL));
	stats(&st0);
	EXPECT_ERR(launch_spt(x, st), hipErrorStreamCaptureUnsupported);
	stats(&st1);
	CHECK(st1.pending_waits == st0.pending_waits,
	      "the refused launch queued %u wait(s)", st1.pending_waits - st0.pending_waits);
	HIPCHECK(hipStreamEndCapture(st, &cg));
	if (cg)
		HIPCHECK(hipGraphDestroy(cg));
	/* The next launch takes the next signal, and runs once. */
	good_launch(x, st, &s, "after the refused launch");
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&s);
}
#endif

/* ---- the development tree: failed captures free their graph ---------- */

#if defined(__SANITIZE_ADDRESS__)
#define HX_FREED_ADDRESSES_REUSED false /* ASan holds freed memory back */
#else
#define HX_FREED_ADDRESSES_REUSED true
#endif

#define NEW_NODES 64

/* Host function for the unjoined capture's side branch (6.x flavour). */
#if HX_TEST_ABI == 6
static hipError_t side_work(hipStream_t s)
{
	return hipLaunchHostFunc(s, work, NULL);
}
#endif

/* A captured wait in a capture that ends invalidated (round 0) or, on the
 * 6.x flavour, unjoined (round 1); the runtime frees the graph.  Then a
 * new graph of plain event-wait nodes on an application event, one of
 * them (without a sanitizer holding freed memory back) at the freed wait
 * node's address: none may answer as a semaphore node, and launching it
 * must queue no semaphore wait: the next signal goes to the next real
 * consumer. */
static void case_stale_record(void)
{
	wait_get_fn *wait_get = shim_call("hipGraphExternalSemaphoresWaitNodeGetParams");
	struct hx_host_node_params hp = { work, NULL };
	struct sem a = sem_new(false);
	int rounds = HX_TEST_ABI == 6 ? 2 : 1;

	for (int round = 0; round < rounds; round++) {
		const hipGraphNode_t *deps = NULL;
		hipGraphNode_t old, nodes[NEW_NODES], hnode;
		hipStream_t st, side, run;
		hipEvent_t fork, uev;
		hipGraph_t cg = NULL, g2, none = NULL;
		hipGraphExec_t x;
		size_t nd = 0;
		int status = 0;
		bool reused = false;
		uint64_t before;
		void *p = NULL;

		HIPCHECK(hipStreamCreate(&st));
		HIPCHECK(hipStreamCreate(&side));
		HIPCHECK(hipStreamCreate(&run));
		HIPCHECK(hipEventCreateWithFlags(&fork, hipEventDisableTiming));
		HIPCHECK(hipEventCreateWithFlags(&uev, hipEventDisableTiming));
		/* Recorded first: nothing else allocates between the free and
		 * the new nodes. */
		HIPCHECK(hipEventRecord(uev, run));
		HIPCHECK(hipStreamSynchronize(run));
		HIPCHECK(hipStreamBeginCapture(st, HX_CAPTURE_MODE_GLOBAL));
		HIPCHECK(wait1(a.s, 0, st));
		HIPCHECK(hipStreamGetCaptureInfo_v2(st, &status, NULL, &cg, &deps, &nd));
		CHECK(status == HX_CAPTURE_STATUS_ACTIVE && nd == 1, "capture status %d, %zu deps",
		      status, nd);
		old = deps[0];
		CHECK(wait_get(old, &(struct hx_ext_sem_node_params){ 0 }) == hipSuccess,
		      "the captured wait is no wait node");
		if (round == 0) {
			CHECK(hipMalloc(&p, 64) != hipSuccess, "hipMalloc allowed during capture");
			EXPECT_ERR(hipStreamEndCapture(st, &none), hipErrorStreamCaptureInvalidated);
		} else {
#if HX_TEST_ABI == 6
			HIPCHECK(hipEventRecord(fork, st));
			HIPCHECK(hipStreamWaitEvent(side, fork, 0));
			HIPCHECK(side_work(side));
			EXPECT_ERR(hipStreamEndCapture(st, &none), (hipError_t)904);
#endif
		}
		CHECK(!none, "a failed capture handed out a graph");
		/* A graph of the application's own event-wait nodes. */
		HIPCHECK(hipGraphCreate(&g2, 0));
		for (int i = 0; i < NEW_NODES; i++) {
			HIPCHECK(hipGraphAddEventWaitNode(&nodes[i], g2, NULL, 0, uev));
			reused |= nodes[i] == old;
		}
		printf("round %d: freed wait node %p %s\n", round, (void *)old,
		       reused ? "reused by a new node" : "not reused");
		if (HX_FREED_ADDRESSES_REUSED)
			CHECK(reused, "the freed node's address did not come back: the case shows "
			      "nothing (is the capture graph freed under this profile?)");
		for (int i = 0; i < NEW_NODES; i++)
			CHECK(wait_get(nodes[i], &(struct hx_ext_sem_node_params){ 0 }) != hipSuccess,
			      "round %d: node %p of a new graph answers as a semaphore wait (a stale "
			      "record)", round, (void *)nodes[i]);
		HIPCHECK(hipGraphAddHostNode(&hnode, g2, nodes, NEW_NODES, &hp));
		HIPCHECK(hipGraphInstantiate(&x, g2, NULL, NULL, 0));
		before = count();
		HIPCHECK(hipGraphLaunch(x, run));
		CHECK(count_reaches(before + 1, 5000), "round %d: the new graph did not run", round);
		HIPCHECK(hipStreamSynchronize(run));
		/* No wait was queued for it: one signal releases the next
		 * consumer. */
		HIPCHECK(wait1(a.s, 0, run));
		HIPCHECK(hipStreamAddCallback(run, work_cb, NULL, 0));
		so_signal(drm, a.h, 0);
		CHECK(count_reaches(before + 2, 3000),
		      "round %d: the signal went to a wait nobody asked for", round);
		HIPCHECK(hipStreamSynchronize(run));
		HIPCHECK(hipGraphExecDestroy(x));
		HIPCHECK(hipGraphDestroy(g2));
		HIPCHECK(hipEventDestroy(fork));
		HIPCHECK(hipEventDestroy(uev));
		HIPCHECK(hipStreamDestroy(run));
		HIPCHECK(hipStreamDestroy(side));
		HIPCHECK(hipStreamDestroy(st));
	}
	sem_free(&a);
}

/* ---- the host-wait path: no lock held across a blocking wait ---------- */

typedef hipError_t add_sem_node_fn(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t,
				   const struct hx_ext_sem_node_params *);

struct launch_arg {
	hipGraphExec_t x;
	hipStream_t st;
	hipError_t err;
};

static void *launch_and_sync(void *p)
{
	struct launch_arg *a = p;

	a->err = hipGraphLaunch(a->x, a->st);
	if (!a->err)
		a->err = hipStreamSynchronize(a->st);
	return NULL;
}

/* HIPEXTSEM_HOST_WAIT=1: one thread launches a graph that waits for S
 * (the launch blocks until S is signaled), another then launches a graph
 * that signals S.  Both must finish. */
static void case_hostwait_threads(void)
{
	add_sem_node_fn *add_wait = shim_call("hipGraphAddExternalSemaphoresWaitNode");
	add_sem_node_fn *add_signal = shim_call("hipGraphAddExternalSemaphoresSignalNode");
	struct hx_host_node_params hp = { work, NULL };
	struct sem s = sem_new(false);
	test_wait_params wp;
	test_signal_params sp;
	struct hx_ext_sem_node_params w = { &s.s, &wp, 1 }, g = { &s.s, &sp, 1 };
	struct launch_arg la, lb;
	hipGraphNode_t wn, hn, sn;
	hipGraph_t gw, gs;
	pthread_t ta, tb;
	struct timespec until;

	CHECK((getenv("HIPEXTSEM_HOST_WAIT") && !strcmp(getenv("HIPEXTSEM_HOST_WAIT"), "1")) ||
	      (getenv("CPUHIP_STREAM_WAIT") && !strcmp(getenv("CPUHIP_STREAM_WAIT"), "refuse")),
	      "run with HIPEXTSEM_HOST_WAIT=1, or CPUHIP_STREAM_WAIT=refuse (the launch's "
	      "stream wait refused: the process falls back during the launch)");
	memset(&wp, 0, sizeof(wp));
	memset(&sp, 0, sizeof(sp));
	HIPCHECK(hipGraphCreate(&gw, 0));
	HIPCHECK(add_wait(&wn, gw, NULL, 0, &w));
	HIPCHECK(hipGraphAddHostNode(&hn, gw, &wn, 1, &hp));
	HIPCHECK(hipGraphCreate(&gs, 0));
	HIPCHECK(add_signal(&sn, gs, NULL, 0, &g));
	HIPCHECK(hipGraphInstantiate(&la.x, gw, NULL, NULL, 0));
	HIPCHECK(hipGraphInstantiate(&lb.x, gs, NULL, NULL, 0));
	HIPCHECK(hipStreamCreate(&la.st));
	HIPCHECK(hipStreamCreate(&lb.st));
	la.err = lb.err = hipErrorUnknown;
	CHECK(!pthread_create(&ta, NULL, launch_and_sync, &la), "pthread_create");
	sleep_ms(200); /* the waiting launch blocks first */
	CHECK(count() == 0, "the waiting graph ran before its semaphore was signaled");
	CHECK(!pthread_create(&tb, NULL, launch_and_sync, &lb), "pthread_create");
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	CHECK(pthread_timedjoin_np(tb, NULL, &until) == 0,
	      "the signaling launch did not finish in 10 s (blocked behind the waiting one)");
	CHECK(pthread_timedjoin_np(ta, NULL, &until) == 0,
	      "the waiting launch did not finish in 10 s after its semaphore was signaled");
	HIPCHECK(la.err);
	HIPCHECK(lb.err);
	CHECK(count() == 1, "the waiting graph's work ran %llu times", (unsigned long long)count());
	HIPCHECK(hipGraphExecDestroy(la.x));
	HIPCHECK(hipGraphExecDestroy(lb.x));
	HIPCHECK(hipGraphDestroy(gw));
	HIPCHECK(hipGraphDestroy(gs));
	HIPCHECK(hipStreamDestroy(la.st));
	HIPCHECK(hipStreamDestroy(lb.st));
	sem_free(&s);
}

/* ---- a destroyed semaphore's handle in a node add --------------------- */

#if HX_TEST_ABI == 6
static void case_dead_handle_node(void)
{
	add_sem_node_fn *add_wait = shim_call("hipGraphAddExternalSemaphoresWaitNode");
	add_sem_node_fn *add_signal = shim_call("hipGraphAddExternalSemaphoresSignalNode");
	struct sem live = sem_new(false), dead = sem_new(false);
	hipExternalSemaphore_t one[1], two[2];
	test_wait_params wp[2];
	test_signal_params sp[2];
	struct hx_ext_sem_node_params w1 = { one, wp, 1 }, s1 = { one, sp, 1 };
	struct hx_ext_sem_node_params w2 = { two, wp, 2 }, s2 = { two, sp, 2 };
	hipGraphNode_t n = NULL;
	hipGraph_t g;

	memset(wp, 0, sizeof(wp));
	memset(sp, 0, sizeof(sp));
	one[0] = dead.s;
	two[0] = live.s;
	two[1] = dead.s;
	HIPCHECK(hipDestroyExternalSemaphore(dead.s));
	EXPECT_ERR(signal1(dead.s, 0, NULL), hipErrorInvalidResourceHandle);
	HIPCHECK(hipGraphCreate(&g, 0));
	EXPECT_ERR(add_signal(&n, g, NULL, 0, &s1), hipErrorInvalidResourceHandle);
	EXPECT_ERR(add_wait(&n, g, NULL, 0, &w1), hipErrorInvalidResourceHandle);
	EXPECT_ERR(add_signal(&n, g, NULL, 0, &s2), hipErrorInvalidResourceHandle);
	EXPECT_ERR(add_wait(&n, g, NULL, 0, &w2), hipErrorInvalidResourceHandle);
	/* The live one still makes a node. */
	one[0] = live.s;
	HIPCHECK(add_signal(&n, g, NULL, 0, &s1));
	HIPCHECK(hipGraphDestroy(g));
	dead.s = NULL;
	sem_free(&live);
	drmSyncobjDestroy(drm, dead.h);
}
#endif

/* ---- launches that fail leave no wait behind ----------------------- */

/* wait(S) -> work, built and instantiated while `dev` is current. */
static hipGraphExec_t wait_work_exec(const struct sem *s, hipGraph_t *g, int dev)
{
	add_sem_node_fn *add_wait = shim_call("hipGraphAddExternalSemaphoresWaitNode");
	struct hx_host_node_params hp = { work, NULL };
	static test_wait_params wp; /* binary: value 0 */
	struct hx_ext_sem_node_params w = { (hipExternalSemaphore_t *)&s->s, &wp, 1 };
	hipGraphNode_t wn, hn;
	hipGraphExec_t x;

	HIPCHECK(hipSetDevice(dev));
	HIPCHECK(hipGraphCreate(g, 0));
	HIPCHECK(add_wait(&wn, *g, NULL, 0, &w));
	HIPCHECK(hipGraphAddHostNode(&hn, *g, &wn, 1, &hp));
	HIPCHECK(hipGraphInstantiate(&x, *g, NULL, NULL, 0));
	HIPCHECK(hipSetDevice(0));
	return x;
}

/* One good launch: held until one signal of S, then released by it. */
static void good_launch(hipGraphExec_t x, hipStream_t st, const struct sem *s, const char *after)
{
	uint64_t before = count();

	HIPCHECK(hipGraphLaunch(x, st));
	sleep_ms(30);
	CHECK(count() == before, "%s: the launch ran before its semaphore was signaled", after);
	so_signal(drm, s->h, 0);
	CHECK(count_reaches(before + 1, 3000),
	      "%s: one signal did not release the next good launch (a wait left behind took it)",
	      after);
	HIPCHECK(hipStreamSynchronize(st));
}

/* A launch on a destroyed stream fails before anything is queued. */
static void case_failed_launch_stream(void)
{
	struct sem s = sem_new(false);
	hipStream_t st, dead;
	hipGraphExec_t x;
	hipGraph_t g;

	x = wait_work_exec(&s, &g, 0);
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamCreate(&dead));
	HIPCHECK(hipStreamDestroy(dead));
	CHECK(hipGraphLaunch(x, dead) != hipSuccess, "a launch on a destroyed stream succeeded");
	good_launch(x, st, &s, "after a launch on a destroyed stream");
	good_launch(x, st, &s, "the launch after");
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&s);
}

/* CPUHIP_FAULT_GRAPH_LAUNCH=1: the runtime refuses the first launch after
 * the shim has queued its wait; that wait serves the next launch. */
static void case_failed_launch_runtime(void)
{
	struct sem s = sem_new(false);
	hipGraphExec_t x;
	hipStream_t st;
	hipGraph_t g;

	x = wait_work_exec(&s, &g, 0);
	HIPCHECK(hipStreamCreate(&st));
	CHECK(hipGraphLaunch(x, st) != hipSuccess,
	      "the first launch succeeded (run with CPUHIP_FAULT_GRAPH_LAUNCH=1)");
	good_launch(x, st, &s, "after a launch the runtime refused");
	good_launch(x, st, &s, "the launch after");
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&s);
}

/* CPUHIP_DEVICES=2: the wait node (and its event) made on device 1, the
 * launch from device 0 onto a device-0 stream: it works, twice. */
static void case_two_devices(void)
{
	struct sem s = sem_new(false);
	hipGraphExec_t x;
	hipStream_t st;
	hipGraph_t g;
	int n = 0;

	HIPCHECK(hipGetDeviceCount(&n));
	CHECK(n == 2, "run with CPUHIP_DEVICES=2 (%d device(s))", n);
	x = wait_work_exec(&s, &g, 1);
	HIPCHECK(hipStreamCreate(&st));
	good_launch(x, st, &s, "a launch from another device than the node's");
	good_launch(x, st, &s, "the launch after");
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&s);
}

/* ---- fork: the graph locks are held across it ----------------------- */

struct churn {
	const struct sem *s;
	bool stop; /* atomic */
};

/* Adds and removes wait nodes without pause: the graph locks are taken
 * and released all the time. */
static void *churn_thread(void *p)
{
	add_sem_node_fn *add_wait = shim_call("hipGraphAddExternalSemaphoresWaitNode");
	wait_get_fn *wait_get = shim_call("hipGraphExternalSemaphoresWaitNodeGetParams");
	struct churn *c = p;
	test_wait_params wp;
	struct hx_ext_sem_node_params w = { (hipExternalSemaphore_t *)&c->s->s, &wp, 1 }, got;

	memset(&wp, 0, sizeof(wp));
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		hipGraphNode_t n;
		hipGraph_t g;
		if (hipGraphCreate(&g, 0) || add_wait(&n, g, NULL, 0, &w))
			break;
		(void)wait_get(n, &got);
		hipGraphDestroy(g);
	}
	return NULL;
}

/* Children forked while another thread works on graphs can still use
 * them: none inherits a graph lock held by a thread it does not have. */
/* ---- a call held inside the runtime ------------------------------------- */

#if HX_TEST_ABI == 6
typedef int interleave_fn(const char *, unsigned, int, void (*)(void *, hipStream_t), void *,
			  unsigned);
typedef int interleave_state_fn(void);

struct held {
	struct sem *other;     /* signaled by the interference */
	hipStream_t other_st;  /* where */
	hipStream_t cap_st;    /* captured by a third thread meanwhile */
	pthread_t capturer;
	hipError_t begin_err, end_err, other_err;
	bool other_delivered;
	int began, end_now;
};

static void *held_capturer(void *p)
{
	struct held *h = p;
	hipGraph_t g = NULL;

	h->begin_err = hipStreamBeginCapture(h->cap_st, HX_CAPTURE_MODE_RELAXED);
	__atomic_store_n(&h->began, 1, __ATOMIC_RELEASE);
	if (h->begin_err)
		return NULL;
	while (!__atomic_load_n(&h->end_now, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	h->end_err = hipStreamEndCapture(h->cap_st, &g);
	if (g)
		(void)hipGraphDestroy(g);
	return NULL;
}

/* Runs while the operation's hipLaunchHostFunc is held: a capture begins on
 * a third thread (it must wait for the held call), then a signal on
 * another stream must get through and be delivered. */
static void held_interference(void *arg, hipStream_t stream)
{
	struct held *h = arg;

	(void)stream;
	CHECK(!pthread_create(&h->capturer, NULL, held_capturer, h), "pthread_create");
	sleep_ms(50);
	h->other_err = signal1(h->other->s, 0, h->other_st);
	if (h->other_err == hipSuccess)
		h->other_delivered = so_wait(drm, h->other->h, 0, 3000) == 0;
}

static void case_held_call(void)
{
	interleave_fn *arm = (interleave_fn *)dlsym(RTLD_DEFAULT, "cpuhipTestInterleave");
	interleave_state_fn *state = (interleave_state_fn *)dlsym(RTLD_DEFAULT,
								  "cpuhipTestInterleaveState");
	int (*finish)(unsigned) = (int (*)(unsigned))dlsym(RTLD_DEFAULT, "cpuhipTestInterleaveFinish");
	struct sem a = sem_new(false), b = sem_new(false);
	struct held h = { .other = &b };
	hipStream_t st;
	int st_state;

	CHECK(arm && state && finish, "cpuhip's interleave hooks not found");
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamCreate(&h.other_st));
	HIPCHECK(hipStreamCreate(&h.cap_st));
	/* Warm: the signal path's first-call work is not what is held. */
	HIPCHECK(signal1(a.s, 0, st));
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(so_wait(drm, a.h, 0, 3000) == 0, "the warm-up signal was not delivered");
	CHECK(drmSyncobjReset(drm, &a.h, 1) == 0, "reset");
	/* The interference completes, or is seen asleep for 400 ms. */
	CHECK(arm("hipLaunchHostFunc", 1, 0, held_interference, &h, 4000) == 0, "arming");
	HIPCHECK(signal1(a.s, 0, st));
	st_state = state();
	CHECK(finish(10000) == 2, "the interference did not complete");
	__atomic_store_n(&h.end_now, 1, __ATOMIC_RELEASE);
	pthread_join(h.capturer, NULL);
	CHECK(h.other_err == hipSuccess, "the other stream's signal answered %s",
	      hipGetErrorName(h.other_err));
	CHECK(st_state == 2 && h.other_delivered,
	      "a signal on another stream waited for a capture's begin, which waited for the "
	      "call held inside the runtime (state %d, delivered %d): a hang when that call is "
	      "held until the signal is delivered", st_state, (int)h.other_delivered);
	CHECK(h.begin_err == hipSuccess, "the third thread's capture begin answered %s",
	      hipGetErrorName(h.begin_err));
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(so_wait(drm, a.h, 0, 3000) == 0, "the held signal was not delivered");
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipStreamDestroy(h.other_st));
	HIPCHECK(hipStreamDestroy(h.cap_st));
	sem_free(&a);
	sem_free(&b);
}

/* An exec with no wait node (an event-wait node of the application's own)
 * updated to a graph whose node is a semaphore wait, destroyed by another
 * thread right after the runtime updated it: the shim keeps no record of
 * the dead exec, so the wait node's event goes once its graph goes. */
static void ux_destroy(void *arg, hipStream_t st)
{
	(void)st;
	HIPCHECK(hipGraphExecDestroy(*(hipGraphExec_t *)arg));
}

static void case_exec_update_destroyed(void)
{
	add_sem_node_fn *add_wait = shim_call("hipGraphAddExternalSemaphoresWaitNode");
	interleave_fn *arm = (interleave_fn *)dlsym(RTLD_DEFAULT, "cpuhipTestInterleave");
	int (*finish)(unsigned) = (int (*)(unsigned))dlsym(RTLD_DEFAULT, "cpuhipTestInterleaveFinish");
	int (*live_events)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cpuhipTestLiveEvents");
	struct sem s = sem_new(false);
	test_wait_params wp;
	struct hx_ext_sem_node_params w = { &s.s, &wp, 1 };
	int result = 0;
	hipGraphNode_t n1, n2, bad = NULL;
	hipGraph_t g1, g2;
	hipGraphExec_t x;
	hipEvent_t ev;
	int base, st;

	CHECK(arm && finish && live_events, "cpuhip's test hooks not found");
	memset(&wp, 0, sizeof(wp));
	HIPCHECK(hipEventCreate(&ev));
	HIPCHECK(hipGraphCreate(&g1, 0));
	HIPCHECK(hipGraphAddEventWaitNode(&n1, g1, NULL, 0, ev));
	HIPCHECK(hipGraphInstantiate(&x, g1, NULL, NULL, 0));
	base = live_events();
	HIPCHECK(hipGraphCreate(&g2, 0));
	HIPCHECK(add_wait(&n2, g2, NULL, 0, &w));
	CHECK(live_events() == base + 1, "the wait node has %d events, want 1 (the shim's)",
	      live_events() - base);
	CHECK(arm("hipGraphExecUpdate", 1, 1, ux_destroy, &x, 3000) == 0, "arming");
	HIPCHECK(hipGraphExecUpdate(x, g2, &bad, &result));
	st = finish(5000);
	CHECK(st == 2, "the exec's destroy did not complete (state %d)", st);
	HIPCHECK(hipGraphDestroy(g2));
	CHECK(live_events() == base, "%d event(s) left once the graph and its exec are gone: "
	      "the shim kept records of the exec destroyed during its update",
	      live_events() - base);
	HIPCHECK(hipGraphDestroy(g1));
	HIPCHECK(hipEventDestroy(ev));
	sem_free(&s);
}
#endif

static void case_fork_graph(void)
{
	add_sem_node_fn *add_wait = shim_call("hipGraphAddExternalSemaphoresWaitNode");
	wait_get_fn *wait_get = shim_call("hipGraphExternalSemaphoresWaitNodeGetParams");
	struct sem s = sem_new(false);
	struct churn c = { &s, false };
	test_wait_params wp;
	struct hx_ext_sem_node_params w = { &s.s, &wp, 1 };
	hipGraphNode_t n;
	hipGraph_t g;
	pthread_t t;
	int hung = 0;

	memset(&wp, 0, sizeof(wp));
	HIPCHECK(hipGraphCreate(&g, 0));
	HIPCHECK(add_wait(&n, g, NULL, 0, &w));
	CHECK(!pthread_create(&t, NULL, churn_thread, &c), "pthread_create");
	for (int i = 0; i < 40; i++) {
		int64_t end = now_ns() + 3000 * 1000000LL;
		int status = 0;
		pid_t pid;

		sleep_ms(2);
		pid = fork();
		CHECK(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0) {
			struct hx_ext_sem_node_params got;
			_exit(wait_get(n, &got) == hipSuccess && got.numExtSems == 1 ? 0 : 1);
		}
		while (waitpid(pid, &status, WNOHANG) == 0 && now_ns() < end)
			sleep_ms(1);
		if (now_ns() >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			hung++;
			continue;
		}
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "fork %d: the child could not read its wait node", i);
	}
	__atomic_store_n(&c.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK(!hung, "%d of 40 forked children hung on a graph lock", hung);
	HIPCHECK(hipGraphDestroy(g));
	sem_free(&s);
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
	else if (!strcmp(c, "stale-record"))
		case_stale_record();
	else if (!strcmp(c, "hostwait-threads"))
		case_hostwait_threads();
	else if (!strcmp(c, "failed-launch-stream"))
		case_failed_launch_stream();
	else if (!strcmp(c, "failed-launch-runtime"))
		case_failed_launch_runtime();
	else if (!strcmp(c, "two-devices"))
		case_two_devices();
	else if (!strcmp(c, "fork-graph"))
		case_fork_graph();
#if HX_TEST_ABI == 6
	else if (!strcmp(c, "capture-race"))
		case_capture_race();
	else if (!strcmp(c, "dead-handle-node"))
		case_dead_handle_node();
	else if (!strcmp(c, "end-twice"))
		case_end_twice();
	else if (!strcmp(c, "capture-come-go"))
		case_capture_come_go();
	else if (!strcmp(c, "capture-idle"))
		case_capture_idle();
	else if (!strcmp(c, "capture-race-wait"))
		case_capture_race_wait();
	else if (!strcmp(c, "launch-spt-capture"))
		case_launch_spt_capture();
	else if (!strcmp(c, "held-call"))
		case_held_call();
	else if (!strcmp(c, "exec-update-destroyed"))
		case_exec_update_destroyed();
#endif
	else
		FAIL("unknown case '%s'", c);
	printf("ok %s\n", c);
	return 0;
}
