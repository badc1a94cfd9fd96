/* SPDX-License-Identifier: MIT */
/*
 * The paths to the semaphore calls that a plain preload misses (issue 4):
 * hipGetProcAddress, the R0600 capability report, graph nodes and stream
 * capture.  One case per argv[1]; built against the cpuhip 6.x flavour.
 * HX_TEST_EXPECT=shim|stock as in tests/shim: in stock mode each case
 * checks the stock runtime's answer, in shim mode the semantics, so a case
 * fails if the shim stops intercepting its path.
 */
#include "hxtest.h"
#include "hipextsem/hip_devprop.h"
#include "hipextsem/hip_graph.h"

static int drm = -1;
static bool shim;

static const char *file_of(const void *p)
{
	Dl_info i;
	return p && dladdr((void *)p, &i) && i.dli_fname ? i.dli_fname : "(none)";
}

static void expect_owner(const char *what, const void *p)
{
	const char *want = shim ? "libextsem" : "libamdhip64";
	CHECK(strstr(file_of(p), want), "%s comes from %s, expected %s", what, file_of(p), want);
}

/* ---- hipGetProcAddress ------------------------------------------------- */

static void *proc(const char *name, int version, hipError_t want_err, int want_status)
{
	hipDriverProcAddressQueryResult st = 77;
	void *p = (void *)1;
	hipError_t e = hipGetProcAddress(name, &p, version, HIP_GET_PROC_ADDRESS_DEFAULT, &st);
	CHECK(e == want_err, "hipGetProcAddress(%s): %d, expected %d", name, (int)e, (int)want_err);
	CHECK((int)st == want_status, "hipGetProcAddress(%s) status %d, expected %d", name, (int)st,
	      want_status);
	return p;
}

static void case_procaddr_lookup(void)
{
	static const char *const sems[] = {
		"hipImportExternalSemaphore", "hipSignalExternalSemaphoresAsync",
		"hipWaitExternalSemaphoresAsync", "hipDestroyExternalSemaphore",
		"hipGraphAddExternalSemaphoresSignalNode", "hipGraphAddNode",
		"hipGetDevicePropertiesR0600", "hipGetProcAddress",
	};
	for (size_t i = 0; i < sizeof(sems) / sizeof(sems[0]); i++)
		expect_owner(sems[i], proc(sems[i], 603, hipSuccess, HIP_GET_PROC_ADDRESS_SUCCESS));
	/* The alias the runtime resolves by version: R0600 from 6.0 on. */
	expect_owner("hipGetDeviceProperties@600",
		     proc("hipGetDeviceProperties", 600, hipSuccess, HIP_GET_PROC_ADDRESS_SUCCESS));
	/* Everything else is the runtime's own, status included. */
	void *p = proc("hipStreamCreate", 603, hipSuccess, HIP_GET_PROC_ADDRESS_SUCCESS);
	CHECK(strstr(file_of(p), "libamdhip64"), "hipStreamCreate from %s", file_of(p));
	p = proc("hipNoSuchFunction", 603, hipErrorInvalidValue,
		 HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	CHECK(p == NULL, "unknown symbol gave %p", p);
	/* Bad flags: the runtime's answer, passed through. */
	void *q;
	EXPECT_ERR(hipGetProcAddress("hipImportExternalSemaphore", &q, 603, 0x80, NULL),
		   hipErrorInvalidValue);
	/* A pointer from hipGetProcAddress of hipGetProcAddress stays intercepted. */
	__typeof__(hipGetProcAddress) *gpa =
		proc("hipGetProcAddress", 603, hipSuccess, HIP_GET_PROC_ADDRESS_SUCCESS);
	HIPCHECK(gpa("hipImportExternalSemaphore", &q, 603, 0, NULL));
	expect_owner("hipImportExternalSemaphore via the handed-out hipGetProcAddress", q);
}

/* Import and signal through pointers handed out by hipGetProcAddress. */
static void case_procaddr_signal(void)
{
	__typeof__(hipImportExternalSemaphore) *imp =
		proc("hipImportExternalSemaphore", 603, hipSuccess, 0);
	__typeof__(hipSignalExternalSemaphoresAsync) *sig =
		proc("hipSignalExternalSemaphoresAsync", 603, hipSuccess, 0);
	__typeof__(hipDestroyExternalSemaphore) *des =
		proc("hipDestroyExternalSemaphore", 603, hipSuccess, 0);
	uint32_t h = so_create(drm, false);
	int fd = so_export(drm, h);
	test_desc d = { .type = HX_SEM_HANDLE_TIMELINE_FD };
	test_signal_params sp = { 0 };
	hipExternalSemaphore_t s = NULL;
	hipStream_t st;

	d.handle.fd = fd;
	hipError_t e = imp(&s, (const hipExternalSemaphoreHandleDesc *)&d);
	if (!shim) {
		EXPECT_ERR(e, hipErrorInvalidValue); /* type 9 is outside the stock range */
		close(fd);
		return;
	}
	HIPCHECK(e);
	HIPCHECK(hipStreamCreate(&st));
	sp.params.fence.value = 4;
	HIPCHECK(sig(&s, (const hipExternalSemaphoreSignalParams *)&sp, 1, st));
	CHECK(so_wait(drm, h, 4, 5000) == 0, "point 4 not signaled through the proc pointer");
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(des(s));
	HIPCHECK(hipStreamDestroy(st));
}

/* ---- capability report ------------------------------------------------- */

static void case_devprop(void)
{
	struct hx_device_prop_r0600 p;
	const char *e = getenv("HX_EXPECT_TIMELINE");
	int want = shim && e && strcmp(e, "1") == 0;

	memset(&p, 0xab, sizeof(p));
	HIPCHECK(hipGetDevicePropertiesR0600(&p, 0));
	CHECK(p.timelineSemaphoreInteropSupported == want,
	      "timelineSemaphoreInteropSupported = %d, expected %d", p.timelineSemaphoreInteropSupported,
	      want);
	/* Everything else is the runtime's answer. */
	CHECK(p.pciBusID == 3 && p.warpSize == 32, "other fields changed");
	EXPECT_ERR(hipGetDevicePropertiesR0600(&p, 7), hipErrorInvalidDevice);
	EXPECT_ERR(hipGetDevicePropertiesR0600(NULL, 0), hipErrorInvalidValue);
}

/* ---- graphs ------------------------------------------------------------ */

static uint64_t *flag;

static void host_mark(void *data)
{
	(void)data;
	/* Slow prior work: the signal must not fire before it finished. */
	sleep_ms(100);
	__atomic_add_fetch(flag, 1, __ATOMIC_RELEASE);
}

struct two {
	uint32_t hb, ht;                /* binary, timeline syncobjs */
	hipExternalSemaphore_t s[2];
	test_signal_params p[2];
	struct hx_ext_sem_node_params np;
};

static bool make_two(struct two *t, uint64_t point)
{
	int fb, ft;
	hipError_t e1, e2;

	memset(t, 0, sizeof(*t));
	t->hb = so_create(drm, false);
	t->ht = so_create(drm, false);
	fb = so_export(drm, t->hb);
	ft = so_export(drm, t->ht);
	e1 = import_fd(&t->s[0], fb, false);
	e2 = import_fd(&t->s[1], ft, true);
	t->p[1].params.fence.value = point;
	t->np.extSemArray = t->s;
	t->np.paramsArray = t->p;
	t->np.numExtSems = 2;
	if (!shim) {
		EXPECT_ERR(e1, hipErrorNotSupported);
		EXPECT_ERR(e2, hipErrorInvalidValue);
		close(fb);
		close(ft);
		/* Stock: stand-in handles that the stock runtime accepts in a node. */
		t->s[0] = (hipExternalSemaphore_t)(uintptr_t)0x1000;
		t->s[1] = (hipExternalSemaphore_t)(uintptr_t)0x2000;
		return false;
	}
	HIPCHECK(e1);
	HIPCHECK(e2);
	return true;
}

/* Launch and check: in shim mode both syncobjs get signaled after the
 * host node ran; in stock mode nothing is signaled (the stock backend
 * drops external-semaphore nodes). */
static void launch_and_check(hipGraphExec_t x, hipStream_t st, struct two *t, uint64_t point)
{
	uint64_t before = load64(flag);
	uint32_t hs[2] = { t->hb, t->ht };

	HIPCHECK(drmSyncobjReset(drm, &t->hb, 1) ? hipErrorUnknown : hipSuccess);
	HIPCHECK(hipGraphLaunch(x, st));
	if (shim) {
		CHECK(so_wait(drm, t->hb, 0, 5000) == 0, "binary syncobj not signaled by the graph");
		CHECK(load64(flag) == before + 1, "signaled before the prior host node finished");
		CHECK(so_wait(drm, t->ht, point, 5000) == 0, "point %llu not signaled",
		      (unsigned long long)point);
	}
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(load64(flag) == before + 1, "host node did not run once");
	if (!shim) {
		CHECK(so_wait(drm, hs[0], 0, 0) == -ETIME, "stock runtime signaled?");
		CHECK(so_query(drm, hs[1]) == 0, "stock runtime signaled the timeline?");
	}
}

static void case_graph_node(bool via_add_node)
{
	struct two t;
	hipGraph_t g;
	hipGraphNode_t a, s;
	hipGraphExec_t x;
	hipStream_t st;
	struct hx_host_node_params hp = { host_mark, NULL };

	make_two(&t, 5);
	flag = pinned(sizeof(*flag));
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipGraphCreate(&g, 0));
	HIPCHECK(hipGraphAddHostNode(&a, g, NULL, 0, &hp));
	if (via_add_node) {
		struct hx_graph_node_params np;
		memset(&np, 0, sizeof(np));
		np.type = HX_GRAPH_NODE_EXT_SEM_SIGNAL;
		np.u.extSemSignal = t.np;
		HIPCHECK(hipGraphAddNode(&s, g, &a, 1, &np));
	} else {
		HIPCHECK(hipGraphAddExternalSemaphoresSignalNode(&s, g, &a, 1, &t.np));
	}
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	/* Twice: a node signals at every launch. */
	launch_and_check(x, st, &t, 5);
	t.p[1].params.fence.value = 6; /* the node keeps its own copy */
	launch_and_check(x, st, &t, 5);
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(st));
	if (shim) {
		HIPCHECK(hipDestroyExternalSemaphore(t.s[0]));
		HIPCHECK(hipDestroyExternalSemaphore(t.s[1]));
	}
}

static void case_graph_params(void)
{
	struct two t;
	hipGraph_t g;
	hipGraphNode_t a, s;
	hipGraphExec_t x, x2;
	hipStream_t st;
	struct hx_host_node_params hp = { host_mark, NULL };
	struct hx_ext_sem_node_params got;
	test_signal_params p2[2];

	make_two(&t, 5);
	flag = pinned(sizeof(*flag));
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipGraphCreate(&g, 0));
	HIPCHECK(hipGraphAddHostNode(&a, g, NULL, 0, &hp));
	HIPCHECK(hipGraphAddExternalSemaphoresSignalNode(&s, g, &a, 1, &t.np));
	HIPCHECK(hipGraphExternalSemaphoresSignalNodeGetParams(s, &got));
	CHECK(got.numExtSems == 2 && got.extSemArray[0] == t.s[0] && got.extSemArray[1] == t.s[1],
	      "GetParams handles");
	CHECK(((const test_signal_params *)got.paramsArray)[1].params.fence.value == 5,
	      "GetParams value");
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	/* The graph node gets 7: new instantiations see it, x keeps 5. */
	memcpy(p2, t.p, sizeof(p2));
	p2[1].params.fence.value = 7;
	t.np.paramsArray = p2;
	HIPCHECK(hipGraphExternalSemaphoresSignalNodeSetParams(s, &t.np));
	HIPCHECK(hipGraphExternalSemaphoresSignalNodeGetParams(s, &got));
	CHECK(((const test_signal_params *)got.paramsArray)[1].params.fence.value == 7,
	      "GetParams after SetParams");
	launch_and_check(x, st, &t, 5);
	if (shim)
		CHECK(so_query(drm, t.ht) == 5, "exec instantiated before SetParams signaled %llu",
		      (unsigned long long)so_query(drm, t.ht));
	HIPCHECK(hipGraphInstantiate(&x2, g, NULL, NULL, 0));
	launch_and_check(x2, st, &t, 7);
	/* The exec's own copy: 9, the graph keeps 7. */
	p2[1].params.fence.value = 9;
	HIPCHECK(hipGraphExecExternalSemaphoresSignalNodeSetParams(x2, s, &t.np));
	launch_and_check(x2, st, &t, 9);
	HIPCHECK(hipGraphExternalSemaphoresSignalNodeGetParams(s, &got));
	CHECK(((const test_signal_params *)got.paramsArray)[1].params.fence.value == 7,
	      "exec SetParams changed the graph");
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphExecDestroy(x2));
	HIPCHECK(hipGraphDestroy(g));
	/* A node of a destroyed graph is refused, as the runtime refuses it. */
	CHECK(hipGraphExternalSemaphoresSignalNodeGetParams(s, &got) == hipErrorInvalidValue,
	      "GetParams on a node of a destroyed graph did not answer hipErrorInvalidValue");
	HIPCHECK(hipStreamDestroy(st));
}

static void case_capture_signal(void)
{
	struct two t;
	hipGraph_t g;
	hipGraphExec_t x;
	hipStream_t st;
	int status = -1;

	make_two(&t, 3);
	flag = pinned(sizeof(*flag));
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamBeginCapture(st, HX_CAPTURE_MODE_GLOBAL));
	HIPCHECK(hipStreamIsCapturing(st, &status));
	CHECK(status == HX_CAPTURE_STATUS_ACTIVE, "not capturing");
	HIPCHECK(hipLaunchHostFunc(st, host_mark, NULL));
	HIPCHECK(hipSignalExternalSemaphoresAsync(t.s, (const hipExternalSemaphoreSignalParams *)t.p,
						  2, st));
	HIPCHECK(hipStreamEndCapture(st, &g));
	/* Nothing ran during capture. */
	sleep_ms(50);
	CHECK(load64(flag) == 0, "captured work ran at capture time");
	if (shim)
		CHECK(so_wait(drm, t.hb, 0, 0) == -ETIME, "signaled at capture time");
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	launch_and_check(x, st, &t, 3);
	launch_and_check(x, st, &t, 3);
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	/* After capture, the same call is a plain stream signal again. */
	if (shim) {
		t.p[1].params.fence.value = 8;
		HIPCHECK(hipSignalExternalSemaphoresAsync(
			t.s, (const hipExternalSemaphoreSignalParams *)t.p, 2, st));
		CHECK(so_wait(drm, t.ht, 8, 5000) == 0, "plain signal after capture");
	}
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipStreamDestroy(st));
}

/* Waits: graph wait nodes are built by the shim (event-wait node driven at
 * launch), and so is a captured wait.  The stock runtime accepts and
 * ignores both (no node is captured). */
static void case_graph_wait(void)
{
	struct two t;
	hipGraph_t g;
	hipGraphNode_t n;
	hipStream_t st;
	test_wait_params wp[2];
	struct hx_ext_sem_node_params np, got;
	struct hx_graph_node_params gp;

	make_two(&t, 1);
	memset(wp, 0, sizeof(wp));
	wp[1].params.fence.value = 1;
	np.extSemArray = t.s;
	np.paramsArray = wp;
	np.numExtSems = 2;
	HIPCHECK(hipGraphCreate(&g, 0));
	HIPCHECK(hipGraphAddExternalSemaphoresWaitNode(&n, g, NULL, 0, &np));
	HIPCHECK(hipGraphExternalSemaphoresWaitNodeGetParams(n, &got));
	CHECK(got.numExtSems == 2 && got.extSemArray[1] == t.s[1] &&
	      ((const test_wait_params *)got.paramsArray)[1].params.fence.value == 1,
	      "wait node GetParams");
	memset(&gp, 0, sizeof(gp));
	gp.type = HX_GRAPH_NODE_EXT_SEM_WAIT;
	gp.u.extSemWait = np;
	HIPCHECK(hipGraphAddNode(&n, g, NULL, 0, &gp));
	if (shim) {
		/* A wait node holding a destroyed/unknown handle next to a shim one. */
		hipExternalSemaphore_t mixed[2] = { t.s[0], (hipExternalSemaphore_t)(uintptr_t)0x3000 };
		struct hx_ext_sem_node_params bad = { mixed, wp, 2 };
		EXPECT_ERR(hipGraphAddExternalSemaphoresWaitNode(&n, g, NULL, 0, &bad),
			   hipErrorInvalidResourceHandle);
	}
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamBeginCapture(st, HX_CAPTURE_MODE_GLOBAL));
	HIPCHECK(hipWaitExternalSemaphoresAsync(t.s, (const hipExternalSemaphoreWaitParams *)wp,
						2, st));
	hipGraph_t cg;
	hipGraphNode_t cn[2] = { NULL, NULL };
	size_t ncn = 2;
	int type = -1;
	HIPCHECK(hipStreamEndCapture(st, &cg));
	HIPCHECK(hipGraphGetNodes(cg, cn, &ncn));
	CHECK(ncn == (shim ? 1u : 0u), "captured graph has %zu node(s)", ncn);
	if (shim) {
		HIPCHECK(hipGraphNodeGetType(cn[0], &type));
		CHECK(type == HX_GRAPH_NODE_WAIT_EVENT, "captured wait is a node of type %d", type);
		HIPCHECK(hipGraphExternalSemaphoresWaitNodeGetParams(cn[0], &got));
		CHECK(got.numExtSems == 2 && got.extSemArray[0] == t.s[0],
		      "captured wait node GetParams");
	}
	HIPCHECK(hipGraphDestroy(cg));
	/* A foreign handle goes to the runtime unchanged, shim or not. */
	hipExternalSemaphore_t foreign = (hipExternalSemaphore_t)(uintptr_t)0x3000;
	np.extSemArray = &foreign;
	np.numExtSems = 1;
	HIPCHECK(hipGraphAddExternalSemaphoresWaitNode(&n, g, NULL, 0, &np));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(st));
}

/* ---- graph wait nodes at launch ---------------------------------------- */

static void host_mark_fast(void *data)
{
	(void)data;
	__atomic_add_fetch(flag, 1, __ATOMIC_RELEASE);
}

static bool flag_reaches(uint64_t want, unsigned ms)
{
	int64_t end = now_ns() + (int64_t)ms * 1000000;
	while (load64(flag) < want && now_ns() < end)
		sleep_ms(2);
	return load64(flag) >= want;
}

/* Launch x (wait node on {binary, timeline point} -> host node) and check:
 * shim: the host node stays held until both the binary syncobj and the
 * timeline point are signaled, then runs, and the binary is consumed;
 * stock: the wait node does nothing, the host node runs at once. */
static void wait_launch_and_check(hipGraphExec_t x, hipStream_t st, struct two *t,
				  uint64_t point)
{
	uint64_t before = load64(flag);

	HIPCHECK(hipGraphLaunch(x, st));
	if (!shim) {
		HIPCHECK(hipStreamSynchronize(st));
		CHECK(load64(flag) == before + 1, "stock: host node after the wait node did not run");
		return;
	}
	sleep_ms(150);
	CHECK(load64(flag) == before, "host node ran before any semaphore was signaled");
	/* The held graph never blocks the callback thread: another stream's
	 * host function runs meanwhile. */
	{
		static uint64_t other;
		hipStream_t st2;
		uint64_t *saved = flag;
		HIPCHECK(hipStreamCreate(&st2));
		flag = &other;
		__atomic_store_n(&other, 0, __ATOMIC_RELAXED);
		HIPCHECK(hipLaunchHostFunc(st2, host_mark_fast, NULL));
		CHECK(flag_reaches(1, 5000), "a held wait node blocked another stream's host function");
		flag = saved;
		HIPCHECK(hipStreamSynchronize(st2));
		HIPCHECK(hipStreamDestroy(st2));
	}
	if (point > 1) {
		so_signal(drm, t->ht, point - 1); /* an earlier point is not enough */
		sleep_ms(100);
		CHECK(load64(flag) == before, "host node ran at timeline point %llu < %llu",
		      (unsigned long long)(point - 1), (unsigned long long)point);
	}
	so_signal(drm, t->hb, 0);
	sleep_ms(100);
	CHECK(load64(flag) == before, "host node ran with only the binary syncobj signaled");
	so_signal(drm, t->ht, point);
	CHECK(flag_reaches(before + 1, 5000), "host node did not run after both were signaled");
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(load64(flag) == before + 1, "host node ran %llu times",
	      (unsigned long long)(load64(flag) - before));
	CHECK(so_wait(drm, t->hb, 0, 0) == -ETIME, "binary syncobj not reset by the wait");
}

static void build_wait_graph(struct two *t, test_wait_params *wp, uint64_t point, bool add_node,
			     hipGraph_t *g, hipGraphNode_t *w)
{
	struct hx_host_node_params hp = { host_mark_fast, NULL };
	struct hx_ext_sem_node_params np;
	hipGraphNode_t h;

	memset(wp, 0, 2 * sizeof(*wp));
	wp[1].params.fence.value = point;
	np.extSemArray = t->s;
	np.paramsArray = wp;
	np.numExtSems = 2;
	HIPCHECK(hipGraphCreate(g, 0));
	if (add_node) {
		struct hx_graph_node_params gp;
		memset(&gp, 0, sizeof(gp));
		gp.type = HX_GRAPH_NODE_EXT_SEM_WAIT;
		gp.u.extSemWait = np;
		HIPCHECK(hipGraphAddNode(w, *g, NULL, 0, &gp));
	} else {
		HIPCHECK(hipGraphAddExternalSemaphoresWaitNode(w, *g, NULL, 0, &np));
	}
	HIPCHECK(hipGraphAddHostNode(&h, *g, w, 1, &hp));
}

static void case_graph_wait_launch(bool add_node)
{
	struct two t;
	test_wait_params wp[2];
	hipGraph_t g;
	hipGraphNode_t w;
	hipGraphExec_t x;
	hipStream_t st;

	make_two(&t, 5);
	flag = pinned(sizeof(*flag));
	HIPCHECK(hipStreamCreate(&st));
	build_wait_graph(&t, wp, 5, add_node, &g, &w);
	wp[1].params.fence.value = 99; /* the node keeps its own copy */
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	wait_launch_and_check(x, st, &t, 5);
	/* Launched again: the same point is already reached on the timeline,
	 * so only the binary holds it now. */
	HIPCHECK(hipGraphLaunch(x, st));
	if (shim) {
		sleep_ms(150);
		CHECK(load64(flag) == 1, "second launch ran before the binary was signaled");
		so_signal(drm, t.hb, 0);
		CHECK(flag_reaches(2, 5000), "second launch did not run");
	}
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(load64(flag) == 2, "host node ran %llu times in two launches",
	      (unsigned long long)load64(flag));
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(st));
	if (shim) {
		HIPCHECK(hipDestroyExternalSemaphore(t.s[0]));
		HIPCHECK(hipDestroyExternalSemaphore(t.s[1]));
	}
}

/* Exec and graph params, hipGraphInstantiateWithFlags, two execs of one
 * graph, and a semaphore destroyed before a launch. */
static void case_graph_wait_params(void)
{
	struct two t;
	test_wait_params wp[2], wp2[2];
	struct hx_ext_sem_node_params np, got;
	hipGraph_t g;
	hipGraphNode_t w;
	hipGraphExec_t x, x2;
	hipStream_t st;

	make_two(&t, 5);
	flag = pinned(sizeof(*flag));
	HIPCHECK(hipStreamCreate(&st));
	build_wait_graph(&t, wp, 5, false, &g, &w);
	HIPCHECK(hipGraphInstantiateWithFlags(&x, g, 0));
	wait_launch_and_check(x, st, &t, 5);
	/* The exec's own copy: 7; the graph keeps 5. */
	memcpy(wp2, wp, sizeof(wp2));
	wp2[1].params.fence.value = 7;
	np.extSemArray = t.s;
	np.paramsArray = wp2;
	np.numExtSems = 2;
	HIPCHECK(hipGraphExecExternalSemaphoresWaitNodeSetParams(x, w, &np));
	wait_launch_and_check(x, st, &t, 7);
	HIPCHECK(hipGraphExternalSemaphoresWaitNodeGetParams(w, &got));
	CHECK(((const test_wait_params *)got.paramsArray)[1].params.fence.value == 5,
	      "exec SetParams changed the graph node");
	/* The graph node gets 9: a new exec sees it, x keeps 7. */
	wp2[1].params.fence.value = 9;
	HIPCHECK(hipGraphExternalSemaphoresWaitNodeSetParams(w, &np));
	HIPCHECK(hipGraphInstantiate(&x2, g, NULL, NULL, 0));
	wait_launch_and_check(x2, st, &t, 9);
	/* x still waits for 7 (already reached): only the binary holds it. */
	HIPCHECK(hipGraphLaunch(x, st));
	if (shim) {
		sleep_ms(100);
		CHECK(load64(flag) == 3, "x ran before the binary was signaled");
		so_signal(drm, t.hb, 0);
		CHECK(flag_reaches(4, 5000), "x did not run");
	}
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(load64(flag) == 4, "host node ran %llu times", (unsigned long long)load64(flag));
	wp2[1].params.fence.value = 11;
	HIPCHECK(hipGraphExecExternalSemaphoresWaitNodeSetParams(x2, w, &np));
	wait_launch_and_check(x2, st, &t, 11);
	if (shim) {
		/* Destroyed semaphore: the launch fails and nothing runs. */
		HIPCHECK(hipDestroyExternalSemaphore(t.s[0]));
		EXPECT_ERR(hipGraphLaunch(x2, st), hipErrorInvalidResourceHandle);
		HIPCHECK(hipStreamSynchronize(st));
		CHECK(load64(flag) == 5, "a graph with a destroyed semaphore ran");
		HIPCHECK(hipDestroyExternalSemaphore(t.s[1]));
	}
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g)); /* before x2: the exec keeps working */
	HIPCHECK(hipGraphExecDestroy(x2));
	HIPCHECK(hipStreamDestroy(st));
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	shim = expect_shim();
	if (strcmp(c, "procaddr-lookup") && strcmp(c, "devprop"))
		drm = drm_open();
	if (!strcmp(c, "procaddr-lookup"))
		case_procaddr_lookup();
	else if (!strcmp(c, "procaddr-signal"))
		case_procaddr_signal();
	else if (!strcmp(c, "devprop"))
		case_devprop();
	else if (!strcmp(c, "graph-node"))
		case_graph_node(false);
	else if (!strcmp(c, "graph-add-node"))
		case_graph_node(true);
	else if (!strcmp(c, "graph-params"))
		case_graph_params();
	else if (!strcmp(c, "capture-signal"))
		case_capture_signal();
	else if (!strcmp(c, "graph-wait"))
		case_graph_wait();
	else if (!strcmp(c, "graph-wait-launch"))
		case_graph_wait_launch(false);
	else if (!strcmp(c, "graph-wait-add-node"))
		case_graph_wait_launch(true);
	else if (!strcmp(c, "graph-wait-params"))
		case_graph_wait_params();
	else
		FAIL("unknown case '%s'", c);
	printf("ok %s (%s)\n", c, shim ? "shim" : "stock");
	return 0;
}
