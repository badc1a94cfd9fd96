/* SPDX-License-Identifier: MIT */
/*
 * Graphs and stream capture with hipextsem semaphores (6.x flavour):
 * captured waits, clones, child graphs, exec update, instantiation
 * variants, capture modes and node parameter rules.  Each case drives real
 * syncobjs (the VM's render node) from the "Vulkan side" and checks that
 * the HIP side waits and signals exactly when it must.
 *
 *   graph-test CASE      (HX_TEST_EXPECT=shim|stock, as every test here)
 */
#include <pthread.h>

#include "hxtest.h"
#include "hipextsem/hip_graph.h"
#include "graph_util.h"

static bool shim;

static uint64_t side_count; /* host functions of an unrelated stream */

static void side_work(void *data)
{
	(void)data;
	__atomic_add_fetch(&side_count, 1, __ATOMIC_RELEASE);
}

/* Node params for n semaphores (values: timeline points, 0 for binary). */
struct esp {
	hipExternalSemaphore_t s[4];
	test_wait_params w[4];
	test_signal_params g[4];
	struct hx_ext_sem_node_params wait, signal;
};

static void esp_set(struct esp *p, const struct sem *const *sems, const uint64_t *vals, unsigned n)
{
	memset(p, 0, sizeof(*p));
	for (unsigned i = 0; i < n; i++) {
		p->s[i] = sems[i]->s;
		p->w[i].params.fence.value = vals[i];
		p->g[i].params.fence.value = vals[i];
	}
	p->wait = (struct hx_ext_sem_node_params){ p->s, p->w, n };
	p->signal = (struct hx_ext_sem_node_params){ p->s, p->g, n };
}

/* wait(a) -> work -> signal(b), with the explicit node calls. */
struct chain {
	hipGraphNode_t wait, work, signal;
};

static struct chain build_chain(hipGraph_t g, const struct sem *a, const struct sem *b)
{
	struct hx_host_node_params hp = { work, NULL };
	uint64_t zero = 0;
	struct esp pw, ps;
	struct chain c;

	esp_set(&pw, &a, &zero, 1);
	esp_set(&ps, &b, &zero, 1);
	HIPCHECK(hipGraphAddExternalSemaphoresWaitNode(&c.wait, g, NULL, 0, &pw.wait));
	HIPCHECK(hipGraphAddHostNode(&c.work, g, &c.wait, 1, &hp));
	HIPCHECK(hipGraphAddExternalSemaphoresSignalNode(&c.signal, g, &c.work, 1, &ps.signal));
	return c;
}

/* One launch of a wait(a) -> work -> signal(b) exec: held until a is
 * signaled, then b is signaled after the work. */
static void run_chain(hipGraphExec_t x, hipStream_t st, const struct sem *a,
		      const struct sem *b, const struct sem *other, unsigned hold_ms)
{
	uint64_t before = count();

	HIPCHECK(drmSyncobjReset(drm, (uint32_t *)&b->h, 1) ? hipErrorUnknown : hipSuccess);
	HIPCHECK(hipGraphLaunch(x, st));
	if (hold_ms) {
		sleep_ms(hold_ms);
		CHECK(count() == before, "the work ran before its semaphore was signaled");
	}
	if (other) {
		/* Another graph's semaphore must not release this one. */
		so_signal(drm, other->h, 0);
		sleep_ms(hold_ms ? hold_ms : 30);
		CHECK(count() == before, "released by another graph's semaphore");
		/* Unsignaled again: the other graph waits afresh. */
		HIPCHECK(drmSyncobjReset(drm, (uint32_t *)&other->h, 1) ? hipErrorUnknown
									 : hipSuccess);
	}
	so_signal(drm, a->h, 0);
	CHECK(so_wait(drm, b->h, 0, 5000) == 0, "the graph did not signal its semaphore");
	CHECK(count() == before + 1, "signaled %s the work", count() == before ? "before" : "around");
	HIPCHECK(hipStreamSynchronize(st));
}

/* ---- captured render loop ---------------------------------------------- */

/* Captured once, replayed n times: the Vulkan side signals `acquire`, HIP
 * waits, works, signals `release`, which the Vulkan side waits for.  The
 * timeline variant waits {binary, timeline point i} and signals point i,
 * updating the exec's params every frame, as CUDA render loops do. */
static void case_render_loop(bool timeline, unsigned frames)
{
	struct sem acq = sem_new(false), tacq = sem_new(true), rel = sem_new(timeline);
	const struct sem *ws[2] = { &acq, &tacq };
	const struct sem *ss[1] = { &rel };
	uint64_t wv[2] = { 0, 1 }, sv[1] = { timeline ? 1 : 0 };
	hipGraphNode_t nodes[8], wnode = NULL, snode = NULL;
	size_t nn = 8;
	hipGraphExec_t x;
	hipStream_t st, side;
	struct esp pw, ps;
	hipGraph_t g;
	int fds = 0;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamCreate(&side));
	esp_set(&pw, ws, wv, timeline ? 2 : 1);
	esp_set(&ps, ss, sv, 1);
	HIPCHECK(hipStreamBeginCapture(st, HX_CAPTURE_MODE_GLOBAL));
	HIPCHECK(hipWaitExternalSemaphoresAsync(pw.s, (const hipExternalSemaphoreWaitParams *)pw.w,
						pw.wait.numExtSems, st));
	HIPCHECK(hipLaunchHostFunc(st, work, NULL));
	HIPCHECK(hipSignalExternalSemaphoresAsync(ps.s,
						  (const hipExternalSemaphoreSignalParams *)ps.g, 1,
						  st));
	HIPCHECK(hipStreamEndCapture(st, &g));
	HIPCHECK(hipGraphGetNodes(g, nodes, &nn));
	CHECK(nn == 3, "captured %zu nodes, want 3", nn);
	for (size_t i = 0; i < nn; i++) {
		struct hx_ext_sem_node_params got;
		if (hipGraphExternalSemaphoresWaitNodeGetParams(nodes[i], &got) == hipSuccess)
			wnode = nodes[i];
		if (hipGraphExternalSemaphoresSignalNodeGetParams(nodes[i], &got) == hipSuccess)
			snode = nodes[i];
	}
	CHECK(wnode && snode, "captured wait/signal nodes not found (%p, %p)", (void *)wnode,
	      (void *)snode);
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	for (unsigned i = 0; i < frames; i++) {
		uint64_t before = count();

		if (timeline) {
			wv[1] = sv[0] = i + 1;
			esp_set(&pw, ws, wv, 2);
			esp_set(&ps, ss, sv, 1);
			HIPCHECK(hipGraphExecExternalSemaphoresWaitNodeSetParams(x, wnode, &pw.wait));
			HIPCHECK(hipGraphExecExternalSemaphoresSignalNodeSetParams(x, snode,
										   &ps.signal));
		} else {
			HIPCHECK(drmSyncobjReset(drm, &rel.h, 1) ? hipErrorUnknown : hipSuccess);
		}
		HIPCHECK(hipGraphLaunch(x, st));
		/* No early pass: checked at once every frame, after a pause every
		 * 100th, and with only half of a mixed wait signaled. */
		if (i % 100 == 0) {
			/* The held graph never blocks the runtime's callback
			 * thread: another stream's host function runs meanwhile. */
			uint64_t side_before = __atomic_load_n(&side_count, __ATOMIC_ACQUIRE);
			int64_t end = now_ns() + 5000 * 1000000LL;
			HIPCHECK(hipLaunchHostFunc(side, side_work, NULL));
			while (__atomic_load_n(&side_count, __ATOMIC_ACQUIRE) == side_before &&
			       now_ns() < end)
				sleep_ms(1);
			CHECK(__atomic_load_n(&side_count, __ATOMIC_ACQUIRE) == side_before + 1,
			      "frame %u: the callback thread is blocked by the held graph", i);
			sleep_ms(20);
		}
		CHECK(count() == before, "frame %u: the work ran before acquire was signaled", i);
		if (timeline) {
			so_signal(drm, tacq.h, i + 1);
			if (i % 100 == 0)
				sleep_ms(20);
			CHECK(count() == before, "frame %u: released by half of a mixed wait", i);
		}
		so_signal(drm, acq.h, 0);
		CHECK(so_wait(drm, rel.h, timeline ? i + 1 : 0, 5000) == 0,
		      "frame %u: release not signaled", i);
		CHECK(count() == before + 1, "frame %u: release signaled before the work", i);
		/* The shim's own descriptors (DRM file, waiter) exist from here. */
		if (i == 0)
			fds = count_fds();
	}
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipStreamDestroy(side));
	CHECK(count_fds() == fds, "fds leaked over %u frames: %d -> %d", frames, fds, count_fds());
	sem_free(&acq);
	sem_free(&tacq);
	sem_free(&rel);
	printf("%u frames\n", frames);
}

/* A capture begun through a pointer from hipGetProcAddress is seen by the
 * shim like any other: the captured wait and signal are nodes, replayed.
 * An end the runtime refuses (no pGraph, before 7.x) does not end it. */
static void case_capture_procaddr(void)
{
	struct sem a = sem_new(false), b = sem_new(false);
	__typeof__(hipStreamBeginCapture) *begin = NULL;
	int version = 0, status = -1;
	hipGraphExec_t x;
	hipStream_t st;
	hipGraph_t g;

	HIPCHECK(hipGetProcAddress("hipStreamBeginCapture", (void **)&begin, 600, 0, NULL));
	CHECK(begin != NULL, "no hipStreamBeginCapture from hipGetProcAddress");
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(begin(st, HX_CAPTURE_MODE_GLOBAL));
	HIPCHECK(wait1(a.s, 0, st));
	HIPCHECK(hipLaunchHostFunc(st, work, NULL));
	HIPCHECK(signal1(b.s, 0, st));
	HIPCHECK(hipRuntimeGetVersion(&version));
	if (version < 70000000) {
		/* A refused end leaves the capture going, its wait node still
		 * driven. */
		EXPECT_ERR(hipStreamEndCapture(st, NULL), hipErrorInvalidValue);
	} else {
		/* 7.x ends the capture and hands its graph to no one (clr's
		 * hipStreamEndCapture no longer checks pGraph): the stream
		 * works uncaptured, and a second capture starts afresh. */
		HIPCHECK(hipStreamEndCapture(st, NULL));
		HIPCHECK(hipStreamIsCapturing(st, &status));
		CHECK(status == HX_CAPTURE_STATUS_NONE, "still capturing (status %d)", status);
		HIPCHECK(begin(st, HX_CAPTURE_MODE_GLOBAL));
		HIPCHECK(wait1(a.s, 0, st));
		HIPCHECK(hipLaunchHostFunc(st, work, NULL));
		HIPCHECK(signal1(b.s, 0, st));
	}
	HIPCHECK(hipStreamEndCapture(st, &g));
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	for (int i = 0; i < 3; i++)
		run_chain(x, st, &a, &b, NULL, 30);
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&a);
	sem_free(&b);
}

/* ---- capture across streams -------------------------------------------- */

static bool same_deps(hipGraphNode_t n, const hipGraphNode_t *want, size_t nwant)
{
	hipGraphNode_t got[8];
	size_t ngot = 8;

	HIPCHECK(hipGraphNodeGetDependencies(n, got, &ngot));
	if (ngot != nwant)
		return false;
	for (size_t i = 0; i < nwant; i++) {
		bool found = false;
		for (size_t j = 0; j < ngot; j++)
			found |= got[j] == want[i];
		if (!found)
			return false;
	}
	return true;
}

/* st1: work0, record e1 | st2: wait e1, WAIT(a), work1, record e2 |
 * st1: wait e2, SIGNAL(b).  The wait node depends on work0 alone, work1
 * on the wait node alone. */
static void case_fork_join(void)
{
	struct sem a = sem_new(false), b = sem_new(false), other = sem_new(false);
	hipGraphNode_t nodes[8], wnode = NULL, w0 = NULL, w1 = NULL;
	struct hx_host_node_params hp;
	hipStream_t st1, st2;
	hipEvent_t e1, e2;
	hipGraphExec_t x;
	size_t nn = 8;
	hipGraph_t g;

	HIPCHECK(hipStreamCreate(&st1));
	HIPCHECK(hipStreamCreate(&st2));
	HIPCHECK(hipEventCreateWithFlags(&e1, hipEventDisableTiming));
	HIPCHECK(hipEventCreateWithFlags(&e2, hipEventDisableTiming));
	HIPCHECK(hipStreamBeginCapture(st1, HX_CAPTURE_MODE_GLOBAL));
	HIPCHECK(hipLaunchHostFunc(st1, work, (void *)1));
	HIPCHECK(hipEventRecord(e1, st1));
	HIPCHECK(hipStreamWaitEvent(st2, e1, 0));
	HIPCHECK(wait1(a.s, 0, st2));
	HIPCHECK(hipLaunchHostFunc(st2, work, (void *)2));
	HIPCHECK(hipEventRecord(e2, st2));
	HIPCHECK(hipStreamWaitEvent(st1, e2, 0));
	HIPCHECK(signal1(b.s, 0, st1));
	HIPCHECK(hipStreamEndCapture(st1, &g));
	HIPCHECK(hipGraphGetNodes(g, nodes, &nn));
	for (size_t i = 0; i < nn; i++) {
		struct hx_ext_sem_node_params got;
		if (hipGraphExternalSemaphoresWaitNodeGetParams(nodes[i], &got) == hipSuccess)
			wnode = nodes[i];
		else if (hipGraphHostNodeGetParams(nodes[i], &hp) == hipSuccess && hp.fn == work)
			*(hp.userData == (void *)1 ? &w0 : &w1) = nodes[i];
	}
	CHECK(wnode && w0 && w1, "captured nodes missing (wait %p, work0 %p, work1 %p)",
	      (void *)wnode, (void *)w0, (void *)w1);
	CHECK(same_deps(wnode, &w0, 1), "the captured wait does not depend on work0 alone");
	CHECK(same_deps(w1, &wnode, 1), "work1 does not depend on the captured wait alone");
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	counter = 0;
	HIPCHECK(drmSyncobjReset(drm, &b.h, 1) ? hipErrorUnknown : hipSuccess);
	HIPCHECK(hipGraphLaunch(x, st1));
	CHECK(count_reaches(1, 5000), "work0 did not run");
	sleep_ms(50);
	CHECK(count() == 1, "work1 ran before the captured wait was released");
	so_signal(drm, other.h, 0);
	sleep_ms(30);
	CHECK(count() == 1, "released by an unrelated semaphore");
	so_signal(drm, a.h, 0);
	CHECK(so_wait(drm, b.h, 0, 5000) == 0, "b not signaled");
	CHECK(count() == 2, "b signaled before work1 (count %llu)", (unsigned long long)count());
	HIPCHECK(hipStreamSynchronize(st1));
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipEventDestroy(e1));
	HIPCHECK(hipEventDestroy(e2));
	HIPCHECK(hipStreamDestroy(st1));
	HIPCHECK(hipStreamDestroy(st2));
	sem_free(&a);
	sem_free(&b);
	sem_free(&other);
}

/* ---- clones, child graphs, exec update --------------------------------- */

static void set_one(hipGraphNode_t n, const struct sem *s, bool wait)
{
	uint64_t zero = 0;
	struct esp p;

	esp_set(&p, &s, &zero, 1);
	if (wait)
		HIPCHECK(hipGraphExternalSemaphoresWaitNodeSetParams(n, &p.wait));
	else
		HIPCHECK(hipGraphExternalSemaphoresSignalNodeSetParams(n, &p.signal));
}

static void case_clone(void)
{
	struct sem a = sem_new(false), b = sem_new(false), a2 = sem_new(false),
		   b2 = sem_new(false);
	struct hx_ext_sem_node_params got;
	hipGraphNode_t cw, cs;
	hipGraphExec_t xg, xc;
	hipGraph_t g, c;
	struct chain ch;
	hipStream_t st;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipGraphCreate(&g, 0));
	ch = build_chain(g, &a, &b);
	HIPCHECK(hipGraphClone(&c, g));
	HIPCHECK(hipGraphNodeFindInClone(&cw, ch.wait, c));
	HIPCHECK(hipGraphNodeFindInClone(&cs, ch.signal, c));
	/* The clone's nodes are nodes of their own: read and set there. */
	HIPCHECK(hipGraphExternalSemaphoresWaitNodeGetParams(cw, &got));
	CHECK(got.numExtSems == 1 && got.extSemArray[0] == a.s, "clone's wait node params");
	set_one(cw, &a2, true);
	set_one(cs, &b2, false);
	HIPCHECK(hipGraphExternalSemaphoresWaitNodeGetParams(ch.wait, &got));
	CHECK(got.extSemArray[0] == a.s, "setting the clone changed the original");
	HIPCHECK(hipGraphInstantiate(&xg, g, NULL, NULL, 0));
	HIPCHECK(hipGraphInstantiate(&xc, c, NULL, NULL, 0));
	/* The original goes first: neither the clone nor the exec needs it. */
	HIPCHECK(hipGraphDestroy(g));
	for (int i = 0; i < 3; i++) {
		HIPCHECK(drmSyncobjReset(drm, &b.h, 1) ? hipErrorUnknown : hipSuccess);
		run_chain(xc, st, &a2, &b2, &a, 40);
		CHECK(so_wait(drm, b.h, 0, 0) == -ETIME,
		      "the clone signaled the original's semaphore");
		run_chain(xg, st, &a, &b, &a2, 0);
	}
	HIPCHECK(hipGraphExecDestroy(xg));
	HIPCHECK(hipGraphExecDestroy(xc));
	HIPCHECK(hipGraphDestroy(c));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&a);
	sem_free(&b);
	sem_free(&a2);
	sem_free(&b2);
}

/* A chain inside a child graph inside a child graph; the child graphs are
 * destroyed once added (the nodes hold copies). */
static void case_child(void)
{
	struct sem a = sem_new(false), b = sem_new(false), other = sem_new(false);
	hipGraph_t k, k2, p;
	hipGraphNode_t n, pre;
	hipGraphExec_t x;
	hipStream_t st;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipGraphCreate(&k, 0));
	build_chain(k, &a, &b);
	HIPCHECK(hipGraphCreate(&k2, 0));
	HIPCHECK(hipGraphAddChildGraphNode(&n, k2, NULL, 0, k));
	HIPCHECK(hipGraphCreate(&p, 0));
	HIPCHECK(hipGraphAddEmptyNode(&pre, p, NULL, 0));
	HIPCHECK(hipGraphAddChildGraphNode(&n, p, &pre, 1, k2));
	HIPCHECK(hipGraphDestroy(k));
	HIPCHECK(hipGraphDestroy(k2));
	HIPCHECK(hipGraphInstantiate(&x, p, NULL, NULL, 0));
	for (int i = 0; i < 3; i++)
		run_chain(x, st, &a, &b, i ? NULL : &other, 40);
	/* The parent graph goes before its exec; the exec keeps working. */
	HIPCHECK(hipGraphDestroy(p));
	run_chain(x, st, &a, &b, NULL, 0);
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&a);
	sem_free(&b);
	sem_free(&other);
}

/* A chain nested in child graphs, one level more at each step, to 100
 * levels (the shim's walk once stopped at 64 and left the copies below
 * unsearched, then refused them: a graph's fate hung on its depth).  At
 * 10, 64, 65 and 100 levels the copies are adopted (each original is
 * destroyed once embedded) and the launch waits for its semaphore, then
 * signals.  Then a plain nest of 100 empty levels with no semaphore node
 * instantiates and clones. */
static void case_deep(void)
{
	struct sem a = sem_new(false), b = sem_new(false);
	hipGraph_t k, top, c;
	hipGraphNode_t n;
	hipGraphExec_t x;
	hipStream_t st;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipGraphCreate(&k, 0));
	build_chain(k, &a, &b);
	for (int depth = 1; depth <= 100; depth++) {
		HIPCHECK(hipGraphCreate(&top, 0));
		HIPCHECK(hipGraphAddChildGraphNode(&n, top, NULL, 0, k));
		HIPCHECK(hipGraphDestroy(k));
		k = top;
		if (depth == 10 || depth == 64 || depth == 65 || depth == 100) {
			HIPCHECK(hipGraphInstantiate(&x, k, NULL, NULL, 0));
			run_chain(x, st, &a, &b, NULL, 40);
			HIPCHECK(hipGraphExecDestroy(x));
		}
	}
	HIPCHECK(hipGraphDestroy(k));
	HIPCHECK(hipGraphCreate(&k, 0));
	for (int depth = 1; depth <= 100; depth++) {
		HIPCHECK(hipGraphCreate(&top, 0));
		HIPCHECK(hipGraphAddChildGraphNode(&n, top, NULL, 0, k));
		HIPCHECK(hipGraphDestroy(k));
		k = top;
	}
	HIPCHECK(hipGraphInstantiate(&x, k, NULL, NULL, 0));
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphClone(&c, k));
	HIPCHECK(hipGraphDestroy(c));
	HIPCHECK(hipGraphDestroy(k));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&a);
	sem_free(&b);
}

static bool answers_as_wait(hipGraphNode_t n)
{
	struct hx_ext_sem_node_params got;

	return hipGraphExternalSemaphoresWaitNodeGetParams(n, &got) == hipSuccess;
}

/* Semaphore nodes below the top-level graph are forgotten with it, and
 * with a child-graph node, at every depth: a wait node added straight
 * into an embedded graph (its record is that graph's), then
 * hipGraphDestroy of the top; a chain two child levels down, then
 * hipGraphDestroyNode of the outer child node.  A node left answering
 * would take a foreign event-wait node later made at its address for a
 * semaphore wait.  The freed nodes are asked through the shim only: it
 * must hand them to the runtime, which refuses an unknown node. */
static void case_destroy_nested(void)
{
	struct sem a = sem_new(false), b = sem_new(false);
	const struct sem *pa = &a;
	uint64_t zero = 0;
	hipGraph_t t, k, k2, e, e2;
	hipGraphNode_t x, n, w, in[8], in2[8];
	size_t nin = 8, nin2 = 8;
	struct esp pw;
	int before = 0, after = 0;

	esp_set(&pw, &pa, &zero, 1);
	HIPCHECK(hipGraphCreate(&t, 0));
	HIPCHECK(hipGraphCreate(&k, 0));
	HIPCHECK(hipGraphAddChildGraphNode(&x, t, NULL, 0, k));
	HIPCHECK(hipGraphDestroy(k));
	HIPCHECK(hipGraphChildGraphNodeGetGraph(x, &e));
	HIPCHECK(hipGraphAddExternalSemaphoresWaitNode(&w, e, NULL, 0, &pw.wait));
	CHECK(answers_as_wait(w), "the wait node in the embedded graph does not answer");
	HIPCHECK(hipGraphDestroy(t));
	CHECK(!answers_as_wait(w), "hipGraphDestroy: a wait node of its embedded graph still "
	      "answers as the shim's");

	HIPCHECK(hipGraphCreate(&t, 0));
	HIPCHECK(hipGraphCreate(&k, 0));
	build_chain(k, &a, &b);
	HIPCHECK(hipGraphCreate(&k2, 0));
	HIPCHECK(hipGraphAddChildGraphNode(&n, k2, NULL, 0, k));
	HIPCHECK(hipGraphAddChildGraphNode(&x, t, NULL, 0, k2));
	HIPCHECK(hipGraphDestroy(k));
	HIPCHECK(hipGraphDestroy(k2));
	HIPCHECK(hipGraphChildGraphNodeGetGraph(x, &e));
	HIPCHECK(hipGraphGetNodes(e, in, &nin));
	CHECK(nin == 1, "the embedded graph holds %zu nodes, want 1", nin);
	HIPCHECK(hipGraphChildGraphNodeGetGraph(in[0], &e2));
	HIPCHECK(hipGraphGetNodes(e2, in2, &nin2));
	for (size_t i = 0; i < nin2; i++)
		before += answers_as_wait(in2[i]);
	CHECK(before == 1, "%d wait nodes two levels down answer, want 1", before);
	HIPCHECK(hipGraphDestroyNode(x));
	for (size_t i = 0; i < nin2; i++)
		after += answers_as_wait(in2[i]);
	CHECK(after == 0, "hipGraphDestroyNode: %d wait nodes two levels below still answer", after);
	HIPCHECK(hipGraphDestroy(t));
	sem_free(&a);
	sem_free(&b);
}

/* A launch the runtime refuses after the exec's wait was queued leaves that
 * wait for the exec's next launch.  An update of the exec in between (here
 * with its own graph: the node keeps its semaphore) must keep it so: one
 * signal then releases the next launch.  Dropped, the queued wait would
 * take that signal and the launch would wait for ever. */
static void case_update_armed(void)
{
	void (*fail_next_record)(void) =
		(void (*)(void))dlsym(RTLD_DEFAULT, "cpuhipTestFailNextEventRecord");
	hx_graph_add_ext_sem_node_fn *add_wait = (hx_graph_add_ext_sem_node_fn *)dlsym(
		RTLD_DEFAULT, "hipGraphAddExternalSemaphoresWaitNode");
	struct hx_host_node_params hp = { work, NULL };
	struct sem a = sem_new(false);
	test_wait_params wp;
	struct hx_ext_sem_node_params np = { &a.s, &wp, 1 };
	hipGraphNode_t wn, hn, errn = NULL;
	hipGraphExec_t x;
	hipStream_t st;
	hipGraph_t g;
	uint64_t before;
	int result = 0;

	CHECK(fail_next_record && add_wait, "cpuhip's fault hook or the node call not found");
	memset(&wp, 0, sizeof(wp));
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipGraphCreate(&g, 0));
	HIPCHECK(add_wait(&wn, g, NULL, 0, &np));
	HIPCHECK(hipGraphAddHostNode(&hn, g, &wn, 1, &hp));
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	fail_next_record();
	CHECK(hipGraphLaunch(x, st) != hipSuccess, "the launch meant to be refused went through");
	HIPCHECK(hipGraphExecUpdate(x, g, &errn, &result));
	before = count();
	HIPCHECK(hipGraphLaunch(x, st));
	sleep_ms(100);
	CHECK(count() == before, "the launch ran before its semaphore was signaled");
	so_signal(drm, a.h, 0);
	CHECK(count_reaches(before + 1, 5000), "the launch after the update was not released by "
	      "its semaphore's signal (the wait queued for the refused launch took it)");
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&a);
}

static void case_exec_update(void)
{
	struct sem a = sem_new(false), b = sem_new(false), a2 = sem_new(false),
		   b2 = sem_new(false);
	const struct sem *two[2] = { &a, &a2 };
	uint64_t zeros[2] = { 0, 0 };
	hipGraph_t g1, g2, g3;
	hipGraphNode_t err_node = NULL;
	hipGraphExec_t x;
	hipStream_t st;
	struct chain c1, c3;
	struct esp p;
	int result = -1;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipGraphCreate(&g1, 0));
	HIPCHECK(hipGraphCreate(&g2, 0));
	HIPCHECK(hipGraphCreate(&g3, 0));
	c1 = build_chain(g1, &a, &b);
	build_chain(g2, &a2, &b2);
	c3 = build_chain(g3, &a, &b);
	esp_set(&p, two, zeros, 2);
	HIPCHECK(hipGraphExternalSemaphoresWaitNodeSetParams(c3.wait, &p.wait));
	HIPCHECK(hipGraphInstantiate(&x, g1, NULL, NULL, 0));
	/* An exec's node keeps its number of semaphores (CUDA): refused, and
	 * the exec still waits on its one semaphore. */
	EXPECT_ERR(hipGraphExecExternalSemaphoresWaitNodeSetParams(x, c1.wait, &p.wait),
		   hipErrorInvalidValue);
	run_chain(x, st, &a, &b, &a2, 30);
	HIPCHECK(hipGraphExecUpdate(x, g2, &err_node, &result));
	CHECK(result == HX_GRAPH_EXEC_UPDATE_SUCCESS, "update result %d", result);
	run_chain(x, st, &a2, &b2, &a, 30);
	/* CUDA: the number of semaphores of a node cannot change. */
	EXPECT_ERR(hipGraphExecUpdate(x, g3, &err_node, &result), hipErrorGraphExecUpdateFailure);
	CHECK(result == HX_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED && err_node == c3.wait,
	      "refused update: result %d, node %p (want %p)", result, (void *)err_node,
	      (void *)c3.wait);
	run_chain(x, st, &a2, &b2, &a, 30);
	HIPCHECK(hipGraphDestroy(g2)); /* the exec's params are its own */
	run_chain(x, st, &a2, &b2, NULL, 0);
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g1));
	HIPCHECK(hipGraphDestroy(g3));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&a);
	sem_free(&b);
	sem_free(&a2);
	sem_free(&b2);
}

/* hipGraphDestroyNode: the node (and the nodes embedded in a child-graph
 * node) no longer answers as a semaphore node; an exec made before keeps
 * working; the graph instantiated afterwards no longer waits. */
static void case_destroy_node(void)
{
	struct sem a = sem_new(false), b = sem_new(false);
	struct hx_ext_sem_node_params got;
	hipGraphNode_t child, inner[4];
	size_t ninner = 4;
	hipGraph_t g, k, emb;
	hipGraphExec_t x, x2;
	struct chain c;
	hipStream_t st;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipGraphCreate(&g, 0));
	c = build_chain(g, &a, &b);
	HIPCHECK(hipGraphCreate(&k, 0));
	build_chain(k, &a, &b);
	HIPCHECK(hipGraphAddChildGraphNode(&child, g, NULL, 0, k));
	HIPCHECK(hipGraphDestroy(k));
	HIPCHECK(hipGraphChildGraphNodeGetGraph(child, &emb));
	HIPCHECK(hipGraphGetNodes(emb, inner, &ninner));
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	HIPCHECK(hipGraphDestroyNode(child));
	HIPCHECK(hipGraphDestroyNode(c.wait));
	CHECK(hipGraphExternalSemaphoresWaitNodeGetParams(c.wait, &got) != hipSuccess,
	      "a destroyed wait node still answers");
	for (size_t i = 0; i < ninner; i++) {
		CHECK(hipGraphExternalSemaphoresWaitNodeGetParams(inner[i], &got) != hipSuccess &&
		      hipGraphExternalSemaphoresSignalNodeGetParams(inner[i], &got) != hipSuccess,
		      "a node of a destroyed child-graph node still answers");
	}
	/* The exec made before: both of its waits still hold. */
	{
		uint64_t before = count();
		HIPCHECK(drmSyncobjReset(drm, &b.h, 1) ? hipErrorUnknown : hipSuccess);
		HIPCHECK(hipGraphLaunch(x, st));
		sleep_ms(40);
		CHECK(count() == before, "the exec made before the destroy did not wait");
		so_signal(drm, a.h, 0);
		/* The second signal once the first wait took the first (a
		 * binary semaphore signaled twice before a wait holds one
		 * signal): not a fixed pause, which a loaded host outlasts. */
		for (int i = 0; i < 500 && so_wait(drm, a.h, 0, 0) == 0; i++)
			sleep_ms(10);
		so_signal(drm, a.h, 0);
		CHECK(count_reaches(before + 2, 5000), "the exec made before did not run its work");
		HIPCHECK(hipStreamSynchronize(st));
	}
	/* Instantiated now: work -> signal, no wait left. */
	HIPCHECK(hipGraphInstantiate(&x2, g, NULL, NULL, 0));
	HIPCHECK(drmSyncobjReset(drm, &b.h, 1) ? hipErrorUnknown : hipSuccess);
	HIPCHECK(hipGraphLaunch(x2, st));
	CHECK(so_wait(drm, b.h, 0, 5000) == 0, "the graph still waits for a destroyed node");
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphExecDestroy(x2));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(st));
	sem_free(&a);
	sem_free(&b);
}

/* ---- instantiation variants, streams, threads -------------------------- */

struct hx_instantiate_params {
	hipGraphNode_t errNode_out;
	unsigned long long flags;
	int result_out;
	hipStream_t uploadStream;
};

struct launcher {
	hipGraphExec_t x;
	hipStream_t st;
	struct sem a, b;
	int rounds;
};

static void *launch_thread(void *arg)
{
	struct launcher *l = arg;

	for (int i = 0; i < l->rounds; i++) {
		HIPCHECK(drmSyncobjReset(drm, &l->b.h, 1) ? hipErrorUnknown : hipSuccess);
		HIPCHECK(hipGraphLaunch(l->x, l->st));
		so_signal(drm, l->a.h, 0);
		CHECK(so_wait(drm, l->b.h, 0, 5000) == 0, "concurrent exec: b not signaled");
		HIPCHECK(hipStreamSynchronize(l->st));
	}
	return NULL;
}

/* A capture as the process's first call into the shim (no import, no
 * signal or wait before it: a library that records its graphs at start
 * up): begun and ended on a created stream, and with the _spt calls on
 * the per-thread stream where the runtime has them.  Each answers 0; the
 * shim once read the runtime's entry points before setting itself up and
 * answered 801 ("the HIP runtime has no such call") to the first. */
static void case_capture_first(void)
{
	typedef hipError_t begin_fn(hipStream_t, int);
	typedef hipError_t end_fn(hipStream_t, hipGraph_t *);
	begin_fn *begin_spt = (begin_fn *)dlsym(RTLD_DEFAULT, "hipStreamBeginCapture_spt");
	end_fn *end_spt = (end_fn *)dlsym(RTLD_DEFAULT, "hipStreamEndCapture_spt");
	hipGraph_t g = NULL;
	hipStream_t q;
	hipError_t e;

	HIPCHECK(hipStreamCreate(&q));
	e = hipStreamBeginCapture(q, HX_CAPTURE_MODE_RELAXED);
	CHECK(e == hipSuccess, "the process's first call, hipStreamBeginCapture, answered %d", (int)e);
	e = hipStreamEndCapture(q, &g);
	CHECK(e == hipSuccess && g, "hipStreamEndCapture answered %d (graph %p)", (int)e, (void *)g);
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(q));
	CHECK(begin_spt && end_spt, "the shim exports the _spt capture calls");
	g = NULL;
	e = begin_spt(NULL, HX_CAPTURE_MODE_RELAXED);
	CHECK(e == hipSuccess, "hipStreamBeginCapture_spt(NULL) answered %d", (int)e);
	e = end_spt(NULL, &g);
	CHECK(e == hipSuccess && g, "hipStreamEndCapture_spt(NULL) answered %d (graph %p)", (int)e,
	      (void *)g);
	HIPCHECK(hipGraphDestroy(g));
}

static void case_instantiate(void)
{
	struct hx_instantiate_params ip;
	struct launcher l[2];
	hipStream_t st[3];
	pthread_t th[2];
	hipGraph_t g[2];

	for (int i = 0; i < 3; i++)
		HIPCHECK(hipStreamCreate(&st[i]));
	for (int i = 0; i < 2; i++) {
		l[i].a = sem_new(false);
		l[i].b = sem_new(false);
		l[i].rounds = 100;
		HIPCHECK(hipGraphCreate(&g[i], 0));
		build_chain(g[i], &l[i].a, &l[i].b);
	}
	HIPCHECK(hipGraphInstantiateWithFlags(&l[0].x, g[0], 0));
	memset(&ip, 0, sizeof(ip));
	ip.uploadStream = st[1];
	HIPCHECK(hipGraphInstantiateWithParams(&l[1].x, g[1], &ip));
	HIPCHECK(hipGraphUpload(l[0].x, st[2]));
	/* One exec, relaunched on different streams. */
	for (int i = 0; i < 6; i++)
		run_chain(l[i % 2].x, st[i % 3], &l[i % 2].a, &l[i % 2].b, NULL, i < 2 ? 30 : 0);
	/* Two execs launched concurrently from two threads. */
	counter = 0;
	for (int i = 0; i < 2; i++) {
		l[i].st = st[i];
		pthread_create(&th[i], NULL, launch_thread, &l[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK(count() == 200, "concurrent launches ran the work %llu times, want 200",
	      (unsigned long long)count());
	for (int i = 0; i < 2; i++) {
		HIPCHECK(hipGraphExecDestroy(l[i].x));
		HIPCHECK(hipGraphDestroy(g[i]));
		sem_free(&l[i].a);
		sem_free(&l[i].b);
	}
	for (int i = 0; i < 3; i++)
		HIPCHECK(hipStreamDestroy(st[i]));
}

/* ---- capture modes ------------------------------------------------------ */

/* The runtime's memory calls and stream queries invalidate the captures
 * going on (clr CHECK_STREAM_CAPTURE_SUPPORTED, Stream::
 * StreamCaptureOngoing).  The shim's own such calls (the first wait's
 * slots, the host-wait stream check, the reuse of a pooled side stream by
 * a graph launch) must not; import and destroy carry no capture check in
 * clr and pass in every mode.  Every wait here is on a semaphore already
 * signaled, so the host-wait variant does not block. */
static void case_capture_modes(void)
{
	struct sem a = sem_new(false), ga = sem_new(false), gb = sem_new(false);
	hipStream_t cap, other;
	hipGraphExec_t x1, x2;
	hipGraph_t g, wg;
	void *p = NULL;
	int status = -1;

	HIPCHECK(hipStreamCreate(&cap));
	HIPCHECK(hipStreamCreate(&other));
	/* An exec destroyed after a launch leaves its side stream pooled. */
	HIPCHECK(hipGraphCreate(&wg, 0));
	build_chain(wg, &ga, &gb);
	HIPCHECK(hipGraphInstantiate(&x1, wg, NULL, NULL, 0));
	so_signal(drm, ga.h, 0);
	HIPCHECK(hipGraphLaunch(x1, other));
	HIPCHECK(hipStreamSynchronize(other));
	HIPCHECK(hipGraphExecDestroy(x1));
	HIPCHECK(hipGraphInstantiate(&x2, wg, NULL, NULL, 0));
	for (int mode = HX_CAPTURE_MODE_GLOBAL; mode <= HX_CAPTURE_MODE_RELAXED; mode++) {
		struct sem t;

		HIPCHECK(hipStreamBeginCapture(cap, mode));
		so_signal(drm, a.h, 0);
		/* The first wait of the process allocates its slot here. */
		HIPCHECK(wait1(a.s, 0, other));
		t = sem_new(true);
		sem_free(&t);
		/* The first launch takes the pooled side stream. */
		so_signal(drm, ga.h, 0);
		HIPCHECK(hipGraphLaunch(x2, other));
		HIPCHECK(hipStreamIsCapturing(cap, &status));
		CHECK(status == HX_CAPTURE_STATUS_ACTIVE,
		      "mode %d: the capture was invalidated by a semaphore call (status %d)", mode,
		      status);
		HIPCHECK(hipStreamEndCapture(cap, &g));
		HIPCHECK(hipGraphDestroy(g));
		HIPCHECK(hipStreamSynchronize(other));
	}
	/* The rule itself, as the runtime plays it: a memory call invalidates. */
	HIPCHECK(hipStreamBeginCapture(cap, HX_CAPTURE_MODE_GLOBAL));
	EXPECT_ERR(hipHostMalloc(&p, 64, 0), hipErrorStreamCaptureUnsupported);
	/* Work on a stream whose capture is invalidated: refused as CUDA does. */
	so_signal(drm, a.h, 0);
	EXPECT_ERR(wait1(a.s, 0, cap), hipErrorStreamCaptureInvalidated);
	EXPECT_ERR(hipStreamEndCapture(cap, &g), hipErrorStreamCaptureInvalidated);
	HIPCHECK(hipGraphExecDestroy(x2));
	HIPCHECK(hipGraphDestroy(wg));
	HIPCHECK(hipStreamDestroy(cap));
	HIPCHECK(hipStreamDestroy(other));
	sem_free(&a);
	sem_free(&ga);
	sem_free(&gb);
}

/* ---- node parameters ----------------------------------------------------- */

/* Get returns what Set stored after the caller's arrays are gone; argument
 * errors are the runtime's own (compared with the same mistake made on an
 * empty node); nodes of a destroyed graph are refused alike. */
static void case_params(void)
{
	struct sem a = sem_new(false), b = sem_new(true);
	struct hx_ext_sem_node_params got, *heap;
	hipGraphNode_t e1, e2, foreign, n, dup[2], sn, wn;
	hipGraph_t g, g2;
	hipError_t want;

	HIPCHECK(hipGraphCreate(&g, 0));
	HIPCHECK(hipGraphCreate(&g2, 0));
	HIPCHECK(hipGraphAddEmptyNode(&e1, g, NULL, 0));
	HIPCHECK(hipGraphAddEmptyNode(&e2, g, NULL, 0));
	HIPCHECK(hipGraphAddEmptyNode(&foreign, g2, NULL, 0));
	heap = malloc(sizeof(*heap));
	heap->extSemArray = malloc(2 * sizeof(hipExternalSemaphore_t));
	heap->extSemArray[0] = a.s;
	heap->extSemArray[1] = b.s;
	test_wait_params *wp = calloc(2, sizeof(*wp));
	wp[1].params.fence.value = 7;
	heap->paramsArray = wp;
	heap->numExtSems = 2;
	HIPCHECK(hipGraphAddExternalSemaphoresWaitNode(&wn, g, &e1, 1, heap));
	test_signal_params *sp = calloc(2, sizeof(*sp));
	sp[1].params.fence.value = 9;
	struct hx_ext_sem_node_params sig = { heap->extSemArray, sp, 2 };
	HIPCHECK(hipGraphAddExternalSemaphoresSignalNode(&sn, g, &e1, 1, &sig));
	free(heap->extSemArray);
	free(wp);
	free(sp);
	free(heap);
	HIPCHECK(hipGraphExternalSemaphoresWaitNodeGetParams(wn, &got));
	CHECK(got.numExtSems == 2 && got.extSemArray[1] == b.s &&
	      ((const test_wait_params *)got.paramsArray)[1].params.fence.value == 7,
	      "wait node Get after the caller freed its arrays");
	HIPCHECK(hipGraphExternalSemaphoresSignalNodeGetParams(sn, &got));
	CHECK(got.numExtSems == 2 && got.extSemArray[0] == a.s &&
	      ((const test_signal_params *)got.paramsArray)[1].params.fence.value == 9,
	      "signal node Get after the caller freed its arrays");
	{
		uint64_t zero = 0;
		const struct sem *one = &a;
		struct esp p;
		esp_set(&p, &one, &zero, 1);
		/* Argument mistakes: the runtime's answer for the same mistake. */
		want = hipGraphAddEmptyNode(&n, g, (hipGraphNode_t[]){ foreign }, 1);
		EXPECT_ERR(hipGraphAddExternalSemaphoresWaitNode(&n, g, &foreign, 1, &p.wait),
			   want);
		EXPECT_ERR(hipGraphAddExternalSemaphoresSignalNode(&n, g, &foreign, 1, &p.signal),
			   want);
		dup[0] = dup[1] = e2;
		want = hipGraphAddEmptyNode(&n, g, dup, 2);
		EXPECT_ERR(hipGraphAddExternalSemaphoresWaitNode(&n, g, dup, 2, &p.wait), want);
		EXPECT_ERR(hipGraphAddExternalSemaphoresSignalNode(&n, g, dup, 2, &p.signal), want);
		want = hipGraphAddEmptyNode(&n, g, NULL, 1);
		EXPECT_ERR(hipGraphAddExternalSemaphoresWaitNode(&n, g, NULL, 1, &p.wait), want);
		EXPECT_ERR(hipGraphAddExternalSemaphoresSignalNode(&n, g, NULL, 1, &p.signal), want);
		EXPECT_ERR(hipGraphAddExternalSemaphoresWaitNode(NULL, g, NULL, 0, &p.wait),
			   hipErrorInvalidValue);
		EXPECT_ERR(hipGraphAddExternalSemaphoresWaitNode(&n, NULL, NULL, 0, &p.wait),
			   hipErrorInvalidValue);
		EXPECT_ERR(hipGraphAddExternalSemaphoresSignalNode(NULL, g, NULL, 0, &p.signal),
			   hipErrorInvalidValue);
		EXPECT_ERR(hipGraphAddExternalSemaphoresSignalNode(&n, NULL, NULL, 0, &p.signal),
			   hipErrorInvalidValue);
		/* No parameters, a NULL node, a node of another kind: answered
		 * by the shim (7.x builds have no code behind the runtime's own
		 * node calls). */
		EXPECT_ERR(hipGraphAddExternalSemaphoresWaitNode(&n, g, NULL, 0, NULL),
			   hipErrorInvalidValue);
		EXPECT_ERR(hipGraphAddExternalSemaphoresSignalNode(&n, g, NULL, 0, NULL),
			   hipErrorInvalidValue);
		EXPECT_ERR(hipGraphExternalSemaphoresWaitNodeGetParams(NULL, &got),
			   hipErrorInvalidValue);
		EXPECT_ERR(hipGraphExternalSemaphoresSignalNodeGetParams(NULL, &got),
			   hipErrorInvalidValue);
		EXPECT_ERR(hipGraphExternalSemaphoresWaitNodeGetParams(e2, &got),
			   hipErrorInvalidValue);
		EXPECT_ERR(hipGraphExternalSemaphoresSignalNodeGetParams(e2, &got),
			   hipErrorInvalidValue);
		EXPECT_ERR(hipGraphExternalSemaphoresWaitNodeSetParams(e2, &p.wait),
			   hipErrorInvalidValue);
		EXPECT_ERR(hipGraphExternalSemaphoresSignalNodeSetParams(e2, &p.signal),
			   hipErrorInvalidValue);
	}
	HIPCHECK(hipGraphDestroy(g));
	/* A wait node the runtime kept in the graph although it refused a
	 * dependency (clr adds first, checks after): still a wait node. */
	{
		struct hx_host_node_params hp = { work, NULL };
		hipGraphNode_t kept = NULL, after;
		uint64_t zero = 0, before;
		const struct sem *one = &a;
		hipGraphExec_t x;
		hipStream_t st;
		hipGraph_t h;
		struct esp p;

		esp_set(&p, &one, &zero, 1);
		HIPCHECK(hipStreamCreate(&st));
		HIPCHECK(hipGraphCreate(&h, 0));
		want = hipGraphAddEmptyNode(&n, h, &foreign, 1);
		EXPECT_ERR(hipGraphAddExternalSemaphoresWaitNode(&kept, h, &foreign, 1, &p.wait),
			   want);
		if (kept) {
			HIPCHECK(hipGraphAddHostNode(&after, h, &kept, 1, &hp));
			HIPCHECK(hipGraphInstantiate(&x, h, NULL, NULL, 0));
			before = count();
			HIPCHECK(hipGraphLaunch(x, st));
			sleep_ms(40);
			CHECK(count() == before, "a kept wait node did not wait");
			so_signal(drm, a.h, 0);
			CHECK(count_reaches(before + 1, 5000), "a kept wait node was not released");
			HIPCHECK(hipStreamSynchronize(st));
			HIPCHECK(hipGraphExecDestroy(x));
		}
		HIPCHECK(hipGraphDestroy(h));
		HIPCHECK(hipStreamDestroy(st));
	}
	HIPCHECK(hipGraphDestroy(g2));
	/* Both node kinds of a destroyed graph: refused, never read. */
	CHECK(hipGraphExternalSemaphoresWaitNodeGetParams(wn, &got) != hipSuccess,
	      "wait node of a destroyed graph answered");
	CHECK(hipGraphExternalSemaphoresSignalNodeGetParams(sn, &got) != hipSuccess,
	      "signal node of a destroyed graph answered");
	sem_free(&a);
	sem_free(&b);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	shim = expect_shim();
	CHECK(shim, "the graph suite drives hipextsem semaphores: run it with the shim");
	drm = drm_open();
	if (!strcmp(c, "render-loop-binary"))
		case_render_loop(false, argc > 2 ? (unsigned)atoi(argv[2]) : 1000);
	else if (!strcmp(c, "render-loop-timeline"))
		case_render_loop(true, argc > 2 ? (unsigned)atoi(argv[2]) : 1000);
	else if (!strcmp(c, "capture-procaddr"))
		case_capture_procaddr();
	else if (!strcmp(c, "fork-join"))
		case_fork_join();
	else if (!strcmp(c, "clone"))
		case_clone();
	else if (!strcmp(c, "child"))
		case_child();
	else if (!strcmp(c, "deep"))
		case_deep();
	else if (!strcmp(c, "destroy-nested"))
		case_destroy_nested();
	else if (!strcmp(c, "destroy-node"))
		case_destroy_node();
	else if (!strcmp(c, "exec-update"))
		case_exec_update();
	else if (!strcmp(c, "update-armed"))
		case_update_armed();
	else if (!strcmp(c, "instantiate"))
		case_instantiate();
	else if (!strcmp(c, "capture-first"))
		case_capture_first();
	else if (!strcmp(c, "capture-modes"))
		case_capture_modes();
	else if (!strcmp(c, "params"))
		case_params();
	else
		FAIL("unknown case '%s'", c);
	printf("ok %s\n", c);
	return 0;
}
