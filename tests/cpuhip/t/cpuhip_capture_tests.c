/* SPDX-License-Identifier: MIT */
/*
 * Capture tests of cpuhip's 6.x flavour against ROCm clr rocm-6.2.2:
 * capture info and dependency updates, capture across streams through
 * events, capture modes and their invalidations.
 */
#include <unistd.h>

#include "graph_test.h"

static hipGraphNode_t only_dep(hipGraphNode_t n)
{
	hipGraphNode_t d = NULL;
	size_t k = 1;
	OK(hipGraphNodeGetDependencies(n, &d, &k));
	return k == 1 ? d : NULL;
}

/* The node a stream's next captured work will depend on (a single one). */
static hipGraphNode_t cur_dep(hipStream_t s)
{
	int st = -1;
	const hipGraphNode_t *deps = NULL;
	size_t n = 99;
	OK(hipStreamGetCaptureInfo_v2(s, &st, NULL, NULL, &deps, &n));
	return st == HX_CAPTURE_STATUS_ACTIVE && n == 1 ? deps[0] : NULL;
}

void t_capture_info(void)
{
	hipStream_t s, dead;
	hipGraph_t g = NULL, out, other;
	hipGraphNode_t a, b, m, dep[4];
	const hipGraphNode_t *deps;
	unsigned long long id1 = 0, id2 = 0;
	size_t n;
	int st;

	OK(hipStreamCreate(&s));
	OK(hipStreamCreate(&dead));
	OK(hipStreamDestroy(dead));
	CHECK_ERR(hipStreamGetCaptureInfo_v2(s, NULL, NULL, NULL, NULL, NULL),
		  hipErrorInvalidValue);
	st = -1;
	OK(hipStreamGetCaptureInfo_v2(NULL, &st, NULL, NULL, NULL, NULL));
	CHECK(st == HX_CAPTURE_STATUS_NONE);
	CHECK_ERR(hipStreamGetCaptureInfo_v2(dead, &st, NULL, NULL, NULL, NULL), ERR_DESTROYED);
	n = 77;
	OK(hipStreamGetCaptureInfo_v2(s, &st, &id1, &g, &deps, &n));
	CHECK(st == HX_CAPTURE_STATUS_NONE && n == 77 && g == NULL);
	CHECK_ERR(hipStreamUpdateCaptureDependencies(s, NULL, 0, 0), hipErrorIllegalState);
	CHECK_ERR(hipStreamUpdateCaptureDependencies(dead, NULL, 0, 0), ERR_DESTROYED);

	OK(hipStreamBeginCapture(s, HX_CAPTURE_MODE_GLOBAL));
	OK(hipStreamGetCaptureInfo_v2(s, &st, &id1, &g, &deps, &n));
	CHECK(st == HX_CAPTURE_STATUS_ACTIVE && g != NULL && n == 0 && id1 != 0);
	OK(hipLaunchHostFunc(s, log_fn, (void *)1));
	OK(hipStreamGetCaptureInfo_v2(s, &st, NULL, NULL, &deps, &n));
	CHECK(n == 1 && nnodes(g) == 1);
	a = n == 1 ? deps[0] : NULL;
	OK(hipLaunchHostFunc(s, log_fn, (void *)2));
	b = cur_dep(s);
	CHECK(b != NULL && b != a && only_dep(b) == a);

	/* a node added by hand: Set makes it the stream's whole set, so the
	 * next captured node depends on it alone */
	struct hx_host_node_params hp = { log_fn, (void *)3 };
	OK(hipGraphAddHostNode(&m, g, &b, 1, &hp));
	CHECK_ERR(hipStreamUpdateCaptureDependencies(s, &m, 1, 2), hipErrorInvalidValue);
	CHECK_ERR(hipStreamUpdateCaptureDependencies(s, NULL, 1, 0), hipErrorInvalidValue);
	/* more entries than the graph has nodes (3) */
	dep[0] = dep[1] = dep[2] = dep[3] = m;
	CHECK_ERR(hipStreamUpdateCaptureDependencies(s, dep, 4, 0), hipErrorInvalidValue);
	OK(hipGraphCreate(&other, 0));
	dep[0] = host_node(other, NULL, 0, 9);
	CHECK_ERR(hipStreamUpdateCaptureDependencies(s, dep, 1, 0), hipErrorInvalidValue);
	dep[0] = NULL;
	CHECK_ERR(hipStreamUpdateCaptureDependencies(s, dep, 1, 0), hipErrorInvalidValue);
	OK(hipStreamUpdateCaptureDependencies(s, &m, 1, HX_STREAM_SET_CAPTURE_DEPENDENCIES));
	CHECK(cur_dep(s) == m);
	OK(hipLaunchHostFunc(s, log_fn, (void *)4));
	hipGraphNode_t c = cur_dep(s);
	CHECK(c != NULL && only_dep(c) == m);
	/* Add: the set grows (no duplicates) */
	OK(hipStreamUpdateCaptureDependencies(s, &a, 1, HX_STREAM_ADD_CAPTURE_DEPENDENCIES));
	OK(hipStreamUpdateCaptureDependencies(s, &a, 1, HX_STREAM_ADD_CAPTURE_DEPENDENCIES));
	OK(hipStreamGetCaptureInfo_v2(s, &st, NULL, NULL, &deps, &n));
	CHECK(n == 2 && deps[0] == c && deps[1] == a);
	OK(hipLaunchHostFunc(s, log_fn, (void *)5));
	hipGraphNode_t d = cur_dep(s);
	CHECK(d && ndeps(d) == 2);
	OK(hipStreamEndCapture(s, &out));
	CHECK(out == g && nnodes(out) == 5);
	OK(hipStreamGetCaptureInfo_v2(s, &st, NULL, NULL, NULL, NULL));
	CHECK(st == HX_CAPTURE_STATUS_NONE);
	log_reset();
	launch_and_wait(out, s);
	CHECK(log_is((int[]){ 1, 2, 3, 4, 5 }, 5));
	/* a new capture has a new id and starts from an empty set */
	OK(hipStreamBeginCapture(s, HX_CAPTURE_MODE_RELAXED));
	OK(hipStreamGetCaptureInfo_v2(s, &st, &id2, NULL, NULL, &n));
	CHECK(id2 != id1 && n == 0);
	OK(hipStreamEndCapture(s, &g));
	OK(hipGraphDestroy(g));
	OK(hipGraphDestroy(out));
	OK(hipGraphDestroy(other));
	OK(hipStreamDestroy(s));
}

void t_capture_cross_stream(void)
{
	hipStream_t s1, s2, s3;
	hipEvent_t e1, e2, e3;
	hipGraph_t g, g1;
	hipGraphNode_t a, b, c;
	unsigned long long id1 = 1, id2 = 2;
	int st;

	OK(hipStreamCreate(&s1));
	OK(hipStreamCreate(&s2));
	OK(hipStreamCreate(&s3));
	OK(hipEventCreate(&e1));
	OK(hipEventCreate(&e2));
	OK(hipEventCreate(&e3));

	/* fork and join: s2 joins through e1 (flags unchecked for a captured
	 * event), s1 takes s2's node back through e2 */
	OK(hipStreamBeginCapture(s1, HX_CAPTURE_MODE_GLOBAL));
	OK(hipLaunchHostFunc(s1, log_fn, (void *)1));
	a = cur_dep(s1);
	OK(hipEventRecord(e1, s1));
	OK(hipStreamWaitEvent(s2, e1, 1));
	OK(hipStreamGetCaptureInfo_v2(s1, &st, &id1, &g1, NULL, NULL));
	OK(hipStreamGetCaptureInfo_v2(s2, &st, &id2, &g, NULL, NULL));
	CHECK(st == HX_CAPTURE_STATUS_ACTIVE && id1 == id2 && g == g1);
	CHECK(cur_dep(s2) == a);
	OK(hipLaunchHostFunc(s2, log_fn, (void *)2));
	b = cur_dep(s2);
	CHECK(b && only_dep(b) == a);
	OK(hipLaunchHostFunc(s1, log_fn, (void *)3));
	c = cur_dep(s1);
	CHECK(c && only_dep(c) == a);
	OK(hipEventRecord(e2, s2));
	OK(hipStreamWaitEvent(s1, e2, 0));
	OK(hipLaunchHostFunc(s1, log_fn, (void *)4));
	hipGraphNode_t d = cur_dep(s1);
	hipGraphNode_t dd[2] = { NULL, NULL };
	size_t k = 2;
	OK(hipGraphNodeGetDependencies(d, dd, &k));
	CHECK(k == 2 && dd[0] == c && dd[1] == b);
	/* the null stream cannot join a capture (clr: hipErrorInvalidHandle) */
	CHECK_ERR(hipStreamWaitEvent(NULL, e2, 0), hipErrorInvalidHandle);
	/* only the origin stream ends the capture */
	CHECK_ERR(hipStreamEndCapture(s2, &g), ERR_UNMATCHED);
	OK(hipStreamEndCapture(s1, &g));
	CHECK(g == g1 && nnodes(g) == 4);
	OK(hipStreamIsCapturing(s2, &st));
	CHECK(st == HX_CAPTURE_STATUS_NONE);
	/* after the capture the events are ordinary again */
	OK(hipStreamWaitEvent(s2, e1, 0));
	log_reset();
	launch_and_wait(g, s3);
	CHECK(log_is((int[]){ 1, 2, 3, 4 }, 4));
	OK(hipGraphDestroy(g));

	/* a forked stream never joined back: Unjoined, no graph */
	OK(hipStreamBeginCapture(s1, HX_CAPTURE_MODE_GLOBAL));
	OK(hipLaunchHostFunc(s1, log_fn, (void *)1));
	OK(hipEventRecord(e1, s1));
	OK(hipStreamWaitEvent(s2, e1, 0));
	OK(hipLaunchHostFunc(s2, log_fn, (void *)2));
	OK(hipLaunchHostFunc(s1, log_fn, (void *)3));
	g = (void *)1;
	CHECK_ERR(hipStreamEndCapture(s1, &g), ERR_UNJOINED);
	CHECK(g == NULL);

	/* isolation: an event recorded before its stream began capturing */
	OK(hipEventRecord(e3, s3));
	OK(hipStreamBeginCapture(s3, HX_CAPTURE_MODE_RELAXED));
	hipStream_t s4;
	OK(hipStreamCreate(&s4));
	CHECK_ERR(hipStreamWaitEvent(s4, e3, 0), hipErrorStreamCaptureIsolation);
	CHECK_ERR(hipStreamWaitEvent(s4, e3, 1), hipErrorInvalidValue);
	OK(hipStreamEndCapture(s3, &g));
	OK(hipStreamWaitEvent(s4, e3, 0));
	OK(hipGraphDestroy(g));
	OK(hipStreamDestroy(s4));
	OK(hipEventDestroy(e1));
	OK(hipEventDestroy(e2));
	OK(hipEventDestroy(e3));
	OK(hipStreamDestroy(s3));
	OK(hipStreamDestroy(s2));
	OK(hipStreamDestroy(s1));
}

struct thread_call {
	int mode; /* the thread's capture mode */
	int what; /* 0: hipMalloc, 1: hipStreamEndCapture */
	hipStream_t s;
	hipError_t result;
	hipGraph_t g;
};

static void *thread_main(void *p)
{
	struct thread_call *t = p;
	int m = t->mode;
	void *ptr = NULL;

	OK(hipThreadExchangeStreamCaptureMode(&m));
	CHECK(m == HX_CAPTURE_MODE_GLOBAL); /* every thread starts Global */
	if (t->what == 0) {
		t->result = hipMalloc(&ptr, 64);
		if (!t->result)
			OK(hipFree(ptr));
	} else {
		t->result = hipStreamEndCapture(t->s, &t->g);
	}
	return NULL;
}

static hipError_t in_thread(int mode, int what, hipStream_t s, hipGraph_t *g)
{
	struct thread_call t = { mode, what, s, hipErrorUnknown, NULL };
	pthread_t th;

	pthread_create(&th, NULL, thread_main, &t);
	pthread_join(th, NULL);
	if (g)
		*g = t.g;
	return t.result;
}

static int status_of(hipStream_t s)
{
	int st = -1;
	OK(hipStreamIsCapturing(s, &st));
	return st;
}

void t_capture_modes(void)
{
	hipStream_t s, s2;
	hipGraph_t g;
	void *p = NULL;
	int m;

	OK(hipStreamCreate(&s));
	OK(hipStreamCreate(&s2));
	CHECK_ERR(hipThreadExchangeStreamCaptureMode(NULL), hipErrorInvalidValue);
	m = 3;
	CHECK_ERR(hipThreadExchangeStreamCaptureMode(&m), hipErrorInvalidValue);
	m = -1;
	CHECK_ERR(hipThreadExchangeStreamCaptureMode(&m), hipErrorInvalidValue);
	m = HX_CAPTURE_MODE_RELAXED;
	OK(hipThreadExchangeStreamCaptureMode(&m));
	CHECK(m == HX_CAPTURE_MODE_GLOBAL);
	m = HX_CAPTURE_MODE_GLOBAL;
	OK(hipThreadExchangeStreamCaptureMode(&m));
	CHECK(m == HX_CAPTURE_MODE_RELAXED);

	/* this thread's Global capture: hipMalloc refused, capture invalid */
	OK(hipStreamBeginCapture(s, HX_CAPTURE_MODE_GLOBAL));
	OK(hipExtMallocWithFlags(&p, 64, 0)); /* no check in clr */
	CHECK_ERR(hipMalloc(&p, 64), hipErrorStreamCaptureUnsupported);
	CHECK(status_of(s) == HX_CAPTURE_STATUS_INVALIDATED);
	{
		/* 6.2 and later refuse a host function on an invalidated
		 * capture; 5.3 to 6.1 enqueue it for real: it runs at once. */
		int rv = 0, want[] = { 7 };
		OK(hipRuntimeGetVersion(&rv));
		if (rv >= 60200000) {
			CHECK_ERR(hipLaunchHostFunc(s, log_fn, NULL),
				  hipErrorStreamCaptureInvalidated);
		} else {
			log_reset();
			OK(hipLaunchHostFunc(s, log_fn, (void *)7));
			for (int i = 0; i < 2000 && !log_is(want, 1); i++)
				usleep(1000);
			CHECK(log_is(want, 1));
		}
	}
	g = (void *)1;
	CHECK_ERR(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);
	CHECK(g == NULL);
	OK(hipFree(p));
	/* clr skips Stream::EndCapture for an invalidated capture: the stream
	 * stays Invalidated, and synchronize / query refuse it until a
	 * capture on it ends well */
	CHECK(status_of(s) == HX_CAPTURE_STATUS_INVALIDATED);
	CHECK_ERR(hipStreamSynchronize(s), hipErrorStreamCaptureUnsupported);
	CHECK_ERR(hipStreamQuery(s), hipErrorStreamCaptureUnsupported);
	/* ending it again: no longer on this thread's list -> WrongThread */
	CHECK_ERR(hipStreamEndCapture(s, &g), ERR_WRONG_THREAD);
	OK(hipStreamBeginCapture(s, HX_CAPTURE_MODE_RELAXED));
	OK(hipStreamEndCapture(s, &g));
	OK(hipGraphDestroy(g));
	OK(hipStreamSynchronize(s));
	OK(hipStreamQuery(s));
	/* hipHostMalloc, hipFree, hipHostFree carry the check too */
	void *calls_ok[3];
	for (int i = 0; i < 3; i++) {
		OK(hipHostMalloc(&calls_ok[i], 64, 0));
		OK(hipStreamBeginCapture(s, HX_CAPTURE_MODE_THREAD_LOCAL));
		hipError_t e = i == 0 ? hipHostMalloc(&p, 64, 0) :
			       i == 1 ? hipFree(calls_ok[i]) : hipHostFree(calls_ok[i]);
		CHECK_ERR(e, hipErrorStreamCaptureUnsupported);
		CHECK(status_of(s) == HX_CAPTURE_STATUS_INVALIDATED);
		CHECK_ERR(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);
		OK(hipHostFree(calls_ok[i]));
	}

	/* Relaxed thread mode: no check at all */
	OK(hipStreamBeginCapture(s, HX_CAPTURE_MODE_GLOBAL));
	m = HX_CAPTURE_MODE_RELAXED;
	OK(hipThreadExchangeStreamCaptureMode(&m));
	OK(hipMalloc(&p, 64));
	OK(hipFree(p));
	m = HX_CAPTURE_MODE_GLOBAL;
	OK(hipThreadExchangeStreamCaptureMode(&m));
	CHECK(status_of(s) == HX_CAPTURE_STATUS_ACTIVE);
	/* another thread: ThreadLocal mode looks at its own captures only;
	 * Global mode at every Global capture */
	OK(in_thread(HX_CAPTURE_MODE_THREAD_LOCAL, 0, NULL, NULL));
	CHECK(status_of(s) == HX_CAPTURE_STATUS_ACTIVE);
	CHECK_ERR(in_thread(HX_CAPTURE_MODE_GLOBAL, 0, NULL, NULL),
		  hipErrorStreamCaptureUnsupported);
	CHECK(status_of(s) == HX_CAPTURE_STATUS_INVALIDATED);
	/* a Global capture ends only on the thread that began it */
	CHECK_ERR(in_thread(HX_CAPTURE_MODE_GLOBAL, 1, s, NULL), ERR_WRONG_THREAD);
	CHECK_ERR(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);

	/* a ThreadLocal capture is not seen by other threads */
	OK(hipStreamBeginCapture(s, HX_CAPTURE_MODE_THREAD_LOCAL));
	OK(in_thread(HX_CAPTURE_MODE_GLOBAL, 0, NULL, NULL));
	CHECK(status_of(s) == HX_CAPTURE_STATUS_ACTIVE);
	CHECK_ERR(in_thread(HX_CAPTURE_MODE_GLOBAL, 1, s, NULL), ERR_WRONG_THREAD);
	OK(hipStreamEndCapture(s, &g));
	OK(hipGraphDestroy(g));

	/* a Relaxed capture: no one is refused, any thread may end it */
	OK(hipStreamBeginCapture(s, HX_CAPTURE_MODE_RELAXED));
	OK(hipMalloc(&p, 64));
	OK(hipFree(p));
	OK(in_thread(HX_CAPTURE_MODE_GLOBAL, 0, NULL, NULL));
	OK(in_thread(HX_CAPTURE_MODE_GLOBAL, 1, s, &g));
	CHECK(g != NULL && status_of(s) == HX_CAPTURE_STATUS_NONE);
	OK(hipGraphDestroy(g));

	/* hipStreamSynchronize of another stream during a Global capture
	 * (Stream::StreamCaptureOngoing): refused, the capture invalidated */
	OK(hipStreamBeginCapture(s, HX_CAPTURE_MODE_GLOBAL));
	CHECK_ERR(hipStreamSynchronize(s2), hipErrorStreamCaptureUnsupported);
	CHECK(status_of(s) == HX_CAPTURE_STATUS_INVALIDATED);
	CHECK_ERR(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);
	/* ... but not in a Relaxed thread */
	OK(hipStreamBeginCapture(s, HX_CAPTURE_MODE_GLOBAL));
	m = HX_CAPTURE_MODE_RELAXED;
	OK(hipThreadExchangeStreamCaptureMode(&m));
	OK(hipStreamSynchronize(s2));
	CHECK(status_of(s) == HX_CAPTURE_STATUS_ACTIVE);
	m = HX_CAPTURE_MODE_GLOBAL;
	OK(hipThreadExchangeStreamCaptureMode(&m));
	OK(hipStreamEndCapture(s, &g));
	OK(hipGraphDestroy(g));
	OK(hipStreamDestroy(s2));
	OK(hipStreamDestroy(s));
}
