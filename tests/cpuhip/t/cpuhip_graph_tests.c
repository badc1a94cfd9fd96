/* SPDX-License-Identifier: MIT */
/*
 * Graph and capture tests of cpuhip's 6.x flavour: the DAG, clones, child
 * graphs, exec update, instantiate parameters, capture across streams and
 * capture modes, each against the answers of ROCm clr rocm-6.2.2
 * (hip_graph.cpp, hip_graph_internal.hpp, hip_stream.cpp, hip_event.cpp,
 * hip_internal.hpp, hip_memory.cpp).  argv[1] names the case.
 */
#include "graph_test.h"

int failures;

/* Host nodes append their userData (a small integer) to a log. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int run_log[64];
static int run_n;

void log_fn(void *p)
{
	pthread_mutex_lock(&log_lock);
	if (run_n < 64)
		run_log[run_n++] = (int)(intptr_t)p;
	pthread_mutex_unlock(&log_lock);
}

void log_reset(void)
{
	pthread_mutex_lock(&log_lock);
	run_n = 0;
	pthread_mutex_unlock(&log_lock);
}

/* run_log equals want[0..n) */
int log_is(const int *want, int n)
{
	int same = 1;

	/* Under the lock: a caller may poll while the callback thread logs. */
	pthread_mutex_lock(&log_lock);
	if (run_n != n)
		same = 0;
	for (int i = 0; i < n && same; i++)
		if (run_log[i] != want[i])
			same = 0;
	pthread_mutex_unlock(&log_lock);
	return same;
}

hipGraphNode_t host_node(hipGraph_t g, const hipGraphNode_t *deps, size_t n, int tag)
{
	struct hx_host_node_params p = { log_fn, (void *)(intptr_t)tag };
	hipGraphNode_t node = NULL;
	OK(hipGraphAddHostNode(&node, g, deps, n, &p));
	return node;
}

size_t ndeps(hipGraphNode_t n)
{
	size_t k = 99;
	OK(hipGraphNodeGetDependencies(n, NULL, &k));
	return k;
}

size_t nnodes(hipGraph_t g)
{
	size_t k = 99;
	OK(hipGraphGetNodes(g, NULL, &k));
	return k;
}

void launch_and_wait(hipGraph_t g, hipStream_t s)
{
	hipGraphExec_t x;
	OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	OK(hipGraphLaunch(x, s));
	OK(hipStreamSynchronize(s));
	OK(hipGraphExecDestroy(x));
}

/* Dependencies, hipGraphNodeGetDependencies, add-node errors, order. */
static void t_graph_deps(void)
{
	hipGraph_t g, other;
	hipGraphNode_t a, b, c, d, x, on, got[4];
	hipStream_t s;
	size_t k;

	OK(hipStreamCreate(&s));
	OK(hipGraphCreate(&g, 0));
	OK(hipGraphCreate(&other, 0));
	a = host_node(g, NULL, 0, 1);
	b = host_node(g, &a, 1, 2);
	c = host_node(g, NULL, 0, 3);
	hipGraphNode_t ab[2] = { a, b };
	d = host_node(g, ab, 2, 4);
	CHECK(ndeps(a) == 0 && ndeps(b) == 1 && ndeps(d) == 2);
	k = 2;
	OK(hipGraphNodeGetDependencies(d, got, &k));
	CHECK(k == 2 && got[0] == a && got[1] == b);
	got[0] = got[1] = got[2] = (void *)1;
	k = 3;
	OK(hipGraphNodeGetDependencies(b, got, &k));
	CHECK(k == 1 && got[0] == a && got[1] == NULL && got[2] == NULL);
	k = 1; /* a smaller array: the first entries, count unchanged */
	OK(hipGraphNodeGetDependencies(d, got, &k));
	CHECK(k == 1 && got[0] == a);
	CHECK_ERR(hipGraphNodeGetDependencies(d, got, NULL), hipErrorInvalidValue);
	CHECK_ERR(hipGraphNodeGetDependencies((void *)(uintptr_t)0x999, NULL, &k),
		  hipErrorInvalidValue);

	/* hipGraphGetNodes: Kahn order from the roots a, c: a c b d */
	k = 4;
	OK(hipGraphGetNodes(g, got, &k));
	CHECK(k == 4 && got[0] == a && got[1] == c && got[2] == b && got[3] == d);
	/* launch: insertion order */
	log_reset();
	launch_and_wait(g, s);
	CHECK(log_is((int[]){ 1, 2, 3, 4 }, 4));

	/* argument errors add nothing */
	struct hx_host_node_params hp = { log_fn, NULL };
	CHECK_ERR(hipGraphAddHostNode(&x, NULL, NULL, 0, &hp), hipErrorInvalidValue);
	CHECK_ERR(hipGraphAddHostNode(NULL, g, NULL, 0, &hp), hipErrorInvalidValue);
	CHECK_ERR(hipGraphAddHostNode(&x, g, NULL, 1, &hp), hipErrorInvalidValue);
	CHECK_ERR(hipGraphAddEmptyNode(&x, g, NULL, 2), hipErrorInvalidValue);
	CHECK(nnodes(g) == 4);
	/* dependency errors come after the node joined the graph: clr keeps
	 * it (with the edges made before the bad entry) and sets *out */
	on = host_node(other, NULL, 0, 9);
	x = NULL;
	hipGraphNode_t foreign[2] = { a, on };
	CHECK_ERR(hipGraphAddEmptyNode(&x, g, foreign, 2), hipErrorInvalidValue);
	CHECK(x != NULL && nnodes(g) == 5 && ndeps(x) == 1);
	hipGraphNode_t dup[2] = { c, c };
	x = NULL;
	CHECK_ERR(hipGraphAddEmptyNode(&x, g, dup, 2), hipErrorInvalidValue);
	CHECK(x != NULL && nnodes(g) == 6 && ndeps(x) == 1);
	hipGraphNode_t nul[1] = { NULL };
	CHECK_ERR(hipGraphAddEmptyNode(&x, g, nul, 1), hipErrorInvalidValue);
	CHECK(nnodes(g) == 7 && ndeps(x) == 0);
	CHECK_ERR(hipGraphAddEventRecordNode(&x, g, NULL, 0, NULL), hipErrorInvalidValue);
	CHECK(nnodes(g) == 7);
	OK(hipGraphDestroy(g));
	OK(hipGraphDestroy(other));
	OK(hipStreamDestroy(s));
}

/* hipGraphClone and hipGraphNodeFindInClone. */
static void t_graph_clone(void)
{
	hipGraph_t g, c, plain;
	hipGraphNode_t a, b, ev, es, ca, cb, cev, ces, n;
	hipEvent_t e;
	hipStream_t s;

	OK(hipStreamCreate(&s));
	OK(hipEventCreate(&e));
	OK(hipGraphCreate(&g, 0));
	a = host_node(g, NULL, 0, 1);
	b = host_node(g, &a, 1, 2);
	OK(hipGraphAddEventRecordNode(&ev, g, &b, 1, e));
	hipExternalSemaphore_t sems[2] = { (void *)0x10, (void *)0x20 };
	struct hx_sem_signal_params_v6 sp[2];
	memset(sp, 0, sizeof(sp));
	sp[1].params.fence.value = 77;
	struct hx_ext_sem_node_params esp = { sems, sp, 2 };
	OK(hipGraphAddExternalSemaphoresSignalNode(&es, g, &a, 1, &esp));

	CHECK_ERR(hipGraphClone(NULL, g), hipErrorInvalidValue);
	CHECK_ERR(hipGraphClone(&c, NULL), hipErrorInvalidValue);
	OK(hipGraphClone(&c, g));
	CHECK(c != g && nnodes(c) == 4);
	OK(hipGraphNodeFindInClone(&ca, a, c));
	OK(hipGraphNodeFindInClone(&cb, b, c));
	OK(hipGraphNodeFindInClone(&cev, ev, c));
	OK(hipGraphNodeFindInClone(&ces, es, c));
	CHECK(ca != a && cb != b && cev != ev && ces != es);
	/* same structure */
	hipGraphNode_t dep;
	size_t k = 1;
	OK(hipGraphNodeGetDependencies(cb, &dep, &k));
	CHECK(k == 1 && dep == ca);
	k = 1;
	OK(hipGraphNodeGetDependencies(cev, &dep, &k));
	CHECK(k == 1 && dep == cb);
	/* same parameters; ext-sem arrays copied */
	struct hx_host_node_params hp;
	OK(hipGraphHostNodeGetParams(cb, &hp));
	CHECK(hp.fn == log_fn && hp.userData == (void *)2);
	hipEvent_t got;
	OK(hipGraphEventRecordNodeGetEvent(cev, &got));
	CHECK(got == e);
	struct hx_ext_sem_node_params o, q;
	OK(hipGraphExternalSemaphoresSignalNodeGetParams(es, &o));
	OK(hipGraphExternalSemaphoresSignalNodeGetParams(ces, &q));
	CHECK(q.numExtSems == 2 && q.extSemArray != o.extSemArray &&
	      q.extSemArray[1] == sems[1] &&
	      ((const struct hx_sem_signal_params_v6 *)q.paramsArray)[1].params.fence.value == 77);
	/* independent: changing the clone leaves the original */
	struct hx_host_node_params np = { log_fn, (void *)5 };
	OK(hipGraphHostNodeSetParams(cb, &np));
	OK(hipGraphHostNodeGetParams(b, &hp));
	CHECK(hp.userData == (void *)2);
	host_node(c, &cb, 1, 6);
	CHECK(nnodes(g) == 4 && nnodes(c) == 5);
	log_reset();
	launch_and_wait(c, s);
	CHECK(log_is((int[]){ 1, 5, 6 }, 3));
	/* FindInClone errors: not a clone, NULLs, no such node */
	OK(hipGraphCreate(&plain, 0));
	CHECK_ERR(hipGraphNodeFindInClone(&n, a, plain), hipErrorInvalidValue);
	CHECK_ERR(hipGraphNodeFindInClone(NULL, a, c), hipErrorInvalidValue);
	CHECK_ERR(hipGraphNodeFindInClone(&n, NULL, c), hipErrorInvalidValue);
	CHECK_ERR(hipGraphNodeFindInClone(&n, a, NULL), hipErrorInvalidValue);
	hipGraphNode_t late = host_node(g, NULL, 0, 7);
	CHECK_ERR(hipGraphNodeFindInClone(&n, late, c), hipErrorInvalidValue);
	/* a clone of a clone finds the first original's nodes too (ids) */
	hipGraph_t cc;
	OK(hipGraphClone(&cc, c));
	OK(hipGraphNodeFindInClone(&n, a, cc));
	OK(hipGraphDestroy(cc));
	OK(hipGraphDestroy(plain));
	OK(hipGraphDestroy(c));
	OK(hipGraphDestroy(g));
	OK(hipEventDestroy(e));
	OK(hipStreamDestroy(s));
}

/* Child-graph nodes: embedded copies, launch at any depth. */
static void t_graph_child(void)
{
	hipGraph_t inner, mid, top, emb, emb2;
	hipGraphNode_t i1, m1, mc, t1, tc, t2, n;
	hipStream_t s;
	int type = -1;

	OK(hipStreamCreate(&s));
	OK(hipGraphCreate(&inner, 0));
	OK(hipGraphCreate(&mid, 0));
	OK(hipGraphCreate(&top, 0));
	i1 = host_node(inner, NULL, 0, 20);
	host_node(inner, &i1, 1, 21);
	m1 = host_node(mid, NULL, 0, 10);
	OK(hipGraphAddChildGraphNode(&mc, mid, &m1, 1, inner));
	host_node(mid, &mc, 1, 11);
	t1 = host_node(top, NULL, 0, 1);
	OK(hipGraphAddChildGraphNode(&tc, top, &t1, 1, mid));
	t2 = host_node(top, &tc, 1, 2);
	(void)t2;
	OK(hipGraphNodeGetType(tc, &type));
	CHECK(type == HX_GRAPH_NODE_GRAPH);
	/* later changes to the child graphs do not reach the nodes */
	host_node(inner, NULL, 0, 99);
	host_node(mid, NULL, 0, 98);
	OK(hipGraphChildGraphNodeGetGraph(tc, &emb));
	CHECK(emb != mid && nnodes(emb) == 3 && nnodes(top) == 3);
	OK(hipGraphGetNodes(emb, &n, &(size_t){ 1 }));
	hipGraphNode_t embnodes[3];
	size_t k = 3;
	OK(hipGraphGetNodes(emb, embnodes, &k));
	OK(hipGraphChildGraphNodeGetGraph(embnodes[1], &emb2));
	CHECK(nnodes(emb2) == 2);
	/* the embedded graph is the node's own: changes to it are seen */
	OK(hipGraphNodeGetType(embnodes[1], &type));
	CHECK(type == HX_GRAPH_NODE_GRAPH);
	log_reset();
	launch_and_wait(top, s);
	CHECK(log_is((int[]){ 1, 10, 20, 21, 11, 2 }, 6));
	host_node(emb2, NULL, 0, 22);
	log_reset();
	launch_and_wait(top, s);
	CHECK(log_is((int[]){ 1, 10, 20, 21, 22, 11, 2 }, 7));
	/* errors */
	CHECK_ERR(hipGraphAddChildGraphNode(&n, top, NULL, 0, NULL), hipErrorInvalidValue);
	CHECK_ERR(hipGraphAddChildGraphNode(&n, NULL, NULL, 0, inner), hipErrorInvalidValue);
	CHECK_ERR(hipGraphChildGraphNodeGetGraph(t1, &emb), hipErrorInvalidValue);
	CHECK_ERR(hipGraphChildGraphNodeGetGraph(tc, NULL), hipErrorInvalidValue);
	CHECK_ERR(hipGraphDestroy(emb), hipErrorInvalidValue);
	/* a clone copies the embedded graphs too */
	hipGraph_t c;
	OK(hipGraphClone(&c, top));
	OK(hipGraphNodeFindInClone(&n, tc, c));
	OK(hipGraphChildGraphNodeGetGraph(n, &emb2));
	CHECK(emb2 != emb && nnodes(emb2) == 3);
	OK(hipGraphDestroy(c));
	OK(hipGraphDestroy(top));
	CHECK_ERR(hipGraphNodeGetType(embnodes[0], &type), hipErrorInvalidValue);
	OK(hipGraphDestroy(mid));
	OK(hipGraphDestroy(inner));
	OK(hipStreamDestroy(s));
}

/* hipGraphEventWaitNodeSetEvent, hipGraphExecEventWaitNodeSetEvent. */
static void t_graph_event_set(void)
{
	hipGraph_t g;
	hipGraphNode_t w, r, h;
	hipGraphExec_t x;
	hipEvent_t e1, e2, got;

	OK(hipEventCreate(&e1));
	OK(hipEventCreate(&e2));
	OK(hipGraphCreate(&g, 0));
	OK(hipGraphAddEventWaitNode(&w, g, NULL, 0, e1));
	OK(hipGraphAddEventRecordNode(&r, g, &w, 1, e1));
	h = host_node(g, NULL, 0, 1);
	OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	OK(hipGraphEventWaitNodeSetEvent(w, e2));
	OK(hipGraphEventWaitNodeGetEvent(w, &got));
	CHECK(got == e2);
	CHECK_ERR(hipGraphEventWaitNodeSetEvent(w, NULL), hipErrorInvalidValue);
	CHECK_ERR(hipGraphEventWaitNodeSetEvent(r, e2), hipErrorInvalidValue);
	CHECK_ERR(hipGraphEventWaitNodeSetEvent(h, e2), hipErrorInvalidValue);
	CHECK_ERR(hipGraphEventWaitNodeSetEvent((void *)(uintptr_t)0x999, e2),
		  hipErrorInvalidValue);
	OK(hipGraphExecEventWaitNodeSetEvent(x, w, e2));
	CHECK_ERR(hipGraphExecEventWaitNodeSetEvent(x, r, e2), hipErrorInvalidValue);
	CHECK_ERR(hipGraphExecEventWaitNodeSetEvent(NULL, w, e2), hipErrorInvalidValue);
	CHECK_ERR(hipGraphExecEventWaitNodeSetEvent(x, w, NULL), hipErrorInvalidValue);
	/* a node the exec was not instantiated from */
	hipGraphNode_t w2;
	OK(hipGraphAddEventWaitNode(&w2, g, NULL, 0, e1));
	CHECK_ERR(hipGraphExecEventWaitNodeSetEvent(x, w2, e2), hipErrorInvalidValue);
	OK(hipGraphExecDestroy(x));
	OK(hipGraphDestroy(g));
	OK(hipEventDestroy(e1));
	OK(hipEventDestroy(e2));
}

/* hipGraphExecUpdate. */
static void t_graph_exec_update(void)
{
	hipGraph_t g, g2, g3, g4, g5;
	hipGraphNode_t a, b, err, a2, b2;
	hipGraphExec_t x;
	hipStream_t s;
	int res = -1;

	OK(hipStreamCreate(&s));
	OK(hipGraphCreate(&g, 0));
	a = host_node(g, NULL, 0, 1);
	b = host_node(g, &a, 1, 2);
	(void)b;
	OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	/* same shape, new parameters: the exec takes them */
	OK(hipGraphCreate(&g2, 0));
	a2 = host_node(g2, NULL, 0, 3);
	b2 = host_node(g2, &a2, 1, 4);
	(void)b2;
	err = (void *)1;
	OK(hipGraphExecUpdate(x, g2, &err, &res));
	CHECK(res == HX_GRAPH_EXEC_UPDATE_SUCCESS && err == (void *)1);
	log_reset();
	OK(hipGraphLaunch(x, s));
	OK(hipStreamSynchronize(s));
	CHECK(log_is((int[]){ 3, 4 }, 2));
	/* more nodes: topology changed, no error node */
	host_node(g2, NULL, 0, 5);
	CHECK_ERR(hipGraphExecUpdate(x, g2, &err, &res), hipErrorGraphExecUpdateFailure);
	CHECK(res == HX_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED && err == NULL);
	/* another type at the second node; the first node is updated before
	 * the failure and stays so (clr does not roll back) */
	OK(hipGraphCreate(&g3, 0));
	a2 = host_node(g3, NULL, 0, 7);
	OK(hipGraphAddEmptyNode(&b2, g3, &a2, 1));
	CHECK_ERR(hipGraphExecUpdate(x, g3, &err, &res), hipErrorGraphExecUpdateFailure);
	CHECK(res == HX_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED && err == b2);
	log_reset();
	OK(hipGraphLaunch(x, s));
	OK(hipStreamSynchronize(s));
	CHECK(log_is((int[]){ 7, 4 }, 2));
	/* same count and types, another dependency count */
	OK(hipGraphCreate(&g4, 0));
	a2 = host_node(g4, NULL, 0, 8);
	b2 = host_node(g4, NULL, 0, 9);
	CHECK_ERR(hipGraphExecUpdate(x, g4, &err, &res), hipErrorGraphExecUpdateFailure);
	CHECK(res == HX_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED && err == b2);
	/* arguments */
	CHECK_ERR(hipGraphExecUpdate(NULL, g2, &err, &res), hipErrorInvalidValue);
	CHECK_ERR(hipGraphExecUpdate(x, NULL, &err, &res), hipErrorInvalidValue);
	CHECK_ERR(hipGraphExecUpdate(x, g2, NULL, &res), hipErrorInvalidValue);
	CHECK_ERR(hipGraphExecUpdate(x, g2, &err, NULL), hipErrorInvalidValue);
	OK(hipGraphExecDestroy(x));
	/* child graphs: their nodes' parameters follow */
	hipGraph_t ch, ch2;
	hipGraphNode_t cn;
	OK(hipGraphCreate(&ch, 0));
	host_node(ch, NULL, 0, 30);
	OK(hipGraphCreate(&g5, 0));
	OK(hipGraphAddChildGraphNode(&cn, g5, NULL, 0, ch));
	OK(hipGraphInstantiate(&x, g5, NULL, NULL, 0));
	OK(hipGraphCreate(&ch2, 0));
	host_node(ch2, NULL, 0, 31);
	hipGraph_t g6;
	OK(hipGraphCreate(&g6, 0));
	OK(hipGraphAddChildGraphNode(&cn, g6, NULL, 0, ch2));
	OK(hipGraphExecUpdate(x, g6, &err, &res));
	log_reset();
	OK(hipGraphLaunch(x, s));
	OK(hipStreamSynchronize(s));
	CHECK(log_is((int[]){ 31 }, 1));
	OK(hipGraphExecDestroy(x));
	hipGraph_t gs[] = { g, g2, g3, g4, g5, g6, ch, ch2 };
	for (size_t i = 0; i < sizeof(gs) / sizeof(gs[0]); i++)
		OK(hipGraphDestroy(gs[i]));
	OK(hipStreamDestroy(s));
}

/* hipGraphInstantiateParams layout (hip_runtime_api.h, 6.x) */
struct inst_params {
	hipGraphNode_t errNode_out;
	unsigned long long flags;
	int result_out;
	hipStream_t uploadStream;
};

static void t_graph_instantiate_params(void)
{
	hipGraph_t g;
	hipGraphExec_t x;
	hipStream_t s, dead;
	struct inst_params p;

	OK(hipStreamCreate(&s));
	OK(hipStreamCreate(&dead));
	OK(hipStreamDestroy(dead));
	OK(hipGraphCreate(&g, 0));
	host_node(g, NULL, 0, 1);
	CHECK_ERR(hipGraphInstantiateWithParams(&x, g, NULL), hipErrorInvalidValue);
	CHECK_ERR(hipGraphInstantiateWithParams(NULL, g, &p), hipErrorInvalidValue);
	p = (struct inst_params){ (void *)1, 3, -1, s };
	CHECK_ERR(hipGraphInstantiateWithParams(&x, g, &p), hipErrorInvalidValue);
	CHECK(p.result_out == 1 && p.errNode_out == (void *)1);
	unsigned long long ok_flags[] = { 0, 1, 4, 8 };
	for (size_t i = 0; i < 4; i++) {
		p = (struct inst_params){ (void *)1, ok_flags[i], -1, s };
		OK(hipGraphInstantiateWithParams(&x, g, &p));
		CHECK(p.result_out == 0 && p.errNode_out == NULL);
		log_reset();
		OK(hipGraphLaunch(x, s));
		OK(hipStreamSynchronize(s));
		CHECK(log_is((int[]){ 1 }, 1));
		OK(hipGraphExecDestroy(x));
	}
	/* Upload: the exec is made, then hipGraphUpload's answer */
	p = (struct inst_params){ NULL, 2, -1, dead };
	CHECK_ERR(hipGraphInstantiateWithParams(&x, g, &p), ERR_DESTROYED);
	CHECK(p.result_out == 0);
	OK(hipGraphExecDestroy(x));
	p = (struct inst_params){ NULL, 2, -1, s };
	OK(hipGraphInstantiateWithParams(&x, g, &p));
	OK(hipGraphUpload(x, s));
	OK(hipGraphUpload(x, NULL));
	CHECK_ERR(hipGraphUpload(NULL, s), hipErrorInvalidValue);
	CHECK_ERR(hipGraphUpload(x, dead), ERR_DESTROYED);
	CHECK_ERR(hipGraphUpload((void *)(uintptr_t)0x5550, s), hipErrorInvalidValue);
	OK(hipGraphExecDestroy(x));
	CHECK_ERR(hipGraphUpload(x, s), hipErrorInvalidValue);
	OK(hipGraphDestroy(g));
	OK(hipStreamDestroy(s));
}

/* The new calls are reachable through hipGetProcAddress, as this
 * library's own functions. */
static void t_graph_procs(void)
{
	static const struct {
		const char *name;
		void *fn;
	} want[] = {
		{ "hipGraphNodeGetDependencies", (void *)hipGraphNodeGetDependencies },
		{ "hipGraphClone", (void *)hipGraphClone },
		{ "hipGraphNodeFindInClone", (void *)hipGraphNodeFindInClone },
		{ "hipGraphAddChildGraphNode", (void *)hipGraphAddChildGraphNode },
		{ "hipGraphChildGraphNodeGetGraph", (void *)hipGraphChildGraphNodeGetGraph },
		{ "hipGraphEventWaitNodeSetEvent", (void *)hipGraphEventWaitNodeSetEvent },
		{ "hipGraphExecEventWaitNodeSetEvent", (void *)hipGraphExecEventWaitNodeSetEvent },
		{ "hipGraphExecUpdate", (void *)hipGraphExecUpdate },
		{ "hipGraphInstantiateWithParams", (void *)hipGraphInstantiateWithParams },
		{ "hipGraphUpload", (void *)hipGraphUpload },
		{ "hipStreamGetCaptureInfo_v2", (void *)hipStreamGetCaptureInfo_v2 },
		{ "hipStreamUpdateCaptureDependencies", (void *)hipStreamUpdateCaptureDependencies },
		{ "hipThreadExchangeStreamCaptureMode", (void *)hipThreadExchangeStreamCaptureMode },
		{ "hipGraphAddEventWaitNode", (void *)hipGraphAddEventWaitNode },
		{ "hipGraphAddEventRecordNode", (void *)hipGraphAddEventRecordNode },
		{ "hipGraphInstantiateWithFlags", (void *)hipGraphInstantiateWithFlags },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		void *fn = NULL;
		hipDriverProcAddressQueryResult st;
		OK(hipGetProcAddress(want[i].name, &fn, 602, 0, &st));
		if (fn != want[i].fn) {
			fprintf(stderr, "hipGetProcAddress(%s) = %p, want %p\n", want[i].name, fn,
				want[i].fn);
			failures++;
		}
	}
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "graph_procs", t_graph_procs },
	{ "graph_deps", t_graph_deps },
	{ "graph_clone", t_graph_clone },
	{ "graph_child", t_graph_child },
	{ "graph_event_set", t_graph_event_set },
	{ "graph_exec_update", t_graph_exec_update },
	{ "graph_instantiate_params", t_graph_instantiate_params },
	{ "capture_info", t_capture_info },
	{ "capture_cross_stream", t_capture_cross_stream },
	{ "capture_modes", t_capture_modes },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			printf("%s\n", cases[i].name);
		return 0;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (strcmp(cases[i].name, argv[1]) == 0)
			break;
	if (i == sizeof(cases) / sizeof(cases[0])) {
		fprintf(stderr, "unknown case %s\n", argv[1]);
		return 2;
	}
	cases[i].fn();
	if (failures) {
		fprintf(stderr, "%s: %d failure(s)\n", argv[1], failures);
		return 1;
	}
	printf("%s: ok\n", argv[1]);
	return 0;
}
