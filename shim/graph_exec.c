/* SPDX-License-Identifier: MIT */
/*
 * The execs made from graphs holding wait nodes (graph_wait.c): their
 * instantiation, launch, update and destruction.
 *
 * One gexec per exec holding wait nodes: its own copy of each node's params
 * (as CUDA specifies for execs) and one side stream per wait node, so that
 * one pending wait never queues behind another.  hx_gw_lock is held across
 * a whole launch: record + launch of one exec are atomic, so two launches
 * in flight of the same exec (or of two execs sharing a node's event) each
 * bind to their own record; not across a wait that blocks the thread (the
 * host-wait path, gw_host_waits_locked).  The capture guard (runtime.h) is
 * taken before it, and left, with it, before a wait that blocks.  A node's event lives until its
 * graph and every exec made from it are gone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_guard.h"
#include "exit_release.h"
#include "graph_wait.h"
#include "intercept.h"
#include "log.h"
#include "ops.h"
#include "runtime.h"
#include "streams.h"

struct gexec_entry {
	struct gwait *w;
	struct gw_vals v;     /* the exec's copy */
	hipStream_t side;     /* created at first launch */
	int side_dev;
	/* A wait on `v` is queued on `side` for a launch the runtime then
	 * refused: it serves the exec's next launch instead of a second
	 * one (which would leave the first to take the semaphore's next
	 * signal from it). */
	bool armed;
};

struct gexec {
	struct gexec *next;
	hipGraphExec_t exec;
	unsigned n;
	struct gexec_entry *e;
	/* A failed hipGraphExecUpdate left the exec's nodes in a state no
	 * record describes: launches are refused. */
	bool poisoned;
};

static struct gexec *gexecs;
static int gw_nexecs; /* atomic: fast path of hipGraphLaunch */

static struct gexec *gexec_find_locked(hipGraphExec_t exec)
{
	for (struct gexec *x = gexecs; x && exec; x = x->next)
		if (x->exec == exec)
			return x;
	return NULL;
}

static struct gexec *gexec_unlink_locked(hipGraphExec_t exec)
{
	for (struct gexec **pp = &gexecs; *pp; pp = &(*pp)->next)
		if ((*pp)->exec == exec) {
			struct gexec *x = *pp;
			*pp = x->next;
			__atomic_sub_fetch(&gw_nexecs, 1, __ATOMIC_RELAXED);
			return x;
		}
	return NULL;
}

static void gexec_free_locked(struct gexec *x)
{
	for (unsigned i = 0; i < x->n; i++) {
		struct gexec_entry *e = &x->e[i];

		if (e->armed)
			hx_warn("exec %p destroyed with a wait queued for a launch the runtime "
				"refused: it stays pending and takes a signal of its semaphore",
				(void *)x->exec);
		/* Never destroyed: a stream may still hold a pending wait, and
		 * hipStreamDestroy may wait for it. */
		if (e->side)
			hx_gw_side_pool_locked(e->side, e->side_dev);
		hx_gw_vals_free(&e->v);
		if (e->w)
			hx_gwait_unref_locked(e->w);
	}
	free(x->e);
	free(x);
}

/* ---- the wait nodes of a graph, child graphs included ------------------- */

struct gw_found {
	struct gwait **w;
	unsigned n, cap;
	bool oom;
};

static void found_visit(hipGraph_t graph, hipGraphNode_t node, int type, void *ctx)
{
	struct gw_found *f = ctx;
	struct gwait *w;

	(void)graph;
	if (type != HX_GRAPH_NODE_WAIT_EVENT || !(w = hx_gwait_find_locked(node)))
		return;
	if (f->n == f->cap) {
		unsigned cap = f->cap ? 2 * f->cap : 8;
		struct gwait **grown = realloc(f->w, cap * sizeof(*grown));
		if (!grown) {
			f->oom = true;
			return;
		}
		f->w = grown;
		f->cap = cap;
	}
	f->w[f->n++] = w;
}

/* Under hx_gw_lock: the graph's wait nodes in the runtime's node order. */
static bool gw_find_locked(hipGraph_t graph, struct gw_found *f)
{
	memset(f, 0, sizeof(*f));
	if (!hx_graph_walk(graph, found_visit, f)) {
		/* A runtime that cannot list nodes: the graph's own nodes. */
		free(f->w);
		memset(f, 0, sizeof(*f));
		for (struct gwait *w = NULL; (w = hx_gw_next_of_graph_locked(w, graph));)
			found_visit(graph, w->node, HX_GRAPH_NODE_WAIT_EVENT, f);
	}
	return !f->oom;
}

/* ---- instantiation ------------------------------------------------------ */

/* The records an exec made from `graph` needs: NULL in *out when the graph
 * holds no wait node built by the shim.  Every allocation is made here, so
 * that installing the result cannot fail.  False: out of memory. */
static bool gw_build_locked(hipGraph_t graph, struct gexec **out)
{
	struct gexec *x = NULL;
	struct gw_found f;

	*out = NULL;
	if (!gw_find_locked(graph, &f))
		goto oom;
	if (!f.n) {
		free(f.w);
		return true;
	}
	x = calloc(1, sizeof(*x));
	if (x)
		x->e = calloc(f.n, sizeof(*x->e));
	if (!x || !x->e)
		goto oom;
	for (unsigned i = 0; i < f.n; i++) {
		struct gwait *w = f.w[i];
		if (hx_gw_vals_copy(&x->e[i].v, w->v.handles, w->v.raw_params, w->v.n))
			goto oom;
		x->e[i].w = w;
		w->refs++;
		x->n = i + 1;
	}
	free(f.w);
	*out = x;
	return true;
oom:
	if (x)
		gexec_free_locked(x);
	free(f.w);
	return false;
}

/* Makes `x` (may be NULL) the records of `exec`, replacing any it had. */
static void gw_install_locked(hipGraphExec_t exec, struct gexec *x)
{
	struct gexec *old = gexec_unlink_locked(exec);

	if (old)
		gexec_free_locked(old);
	if (!x)
		return;
	x->exec = exec;
	x->next = gexecs;
	gexecs = x;
	__atomic_add_fetch(&gw_nexecs, 1, __ATOMIC_RELAXED);
}

/* After a successful instantiation: remember the exec if its graph holds
 * wait nodes built by the shim (an earlier record at the same address is
 * of an exec destroyed behind the shim).  Out of memory, the exec, which
 * the application has not seen yet, is destroyed again. */
static hipError_t gw_instantiated(hipGraphExec_t exec, hipGraph_t graph, const char *what)
{
	struct gexec *x;
	bool ok;

	pthread_mutex_lock(&hx_gw_lock);
	ok = gw_build_locked(graph, &x);
	gw_install_locked(exec, ok ? x : NULL);
	pthread_mutex_unlock(&hx_gw_lock);
	if (!ok) {
		hx_err("%s: out of memory for the exec's wait nodes; exec destroyed", what);
		if (hx_rt.GraphExecDestroy)
			hx_rt.GraphExecDestroy(exec);
		return hipErrorOutOfMemory;
	}
	if (x)
		hx_dbg("%s: exec %p has %u hipextsem wait node(s)", what, (void *)exec, x->n);
	return hipSuccess;
}

/* Before an instantiation or an update: the graph's copies of wait nodes
 * and its captured signals adopted (graph_walk.c), or the call refused
 * with nothing done. */
static hipError_t gw_adopt(hipGraph_t graph, const char *what)
{
	hipError_t err = hx_graph_adopt(graph);

	if (err)
		hx_err("%s: graph %p not taken: its semaphore nodes could not all be made its "
		       "own (error %d)", what, (void *)graph, (int)err);
	return err;
}

hipError_t hx_graph_instantiate(hipGraphExec_t *exec, hipGraph_t graph, hipGraphNode_t *errNode,
				char *log, size_t logSize)
{
	hipError_t err;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphInstantiate, "hipGraphInstantiate");
	err = gw_adopt(graph, "hipGraphInstantiate");
	if (err)
		return err;
	err = hx_rt.GraphInstantiate(exec, graph, errNode, log, logSize);
	return err || !exec ? err : gw_instantiated(*exec, graph, "hipGraphInstantiate");
}

hipError_t hx_graph_instantiate_with_flags(hipGraphExec_t *exec, hipGraph_t graph,
					   unsigned long long flags)
{
	hipError_t err;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphInstantiateWithFlags, "hipGraphInstantiateWithFlags");
	err = gw_adopt(graph, "hipGraphInstantiateWithFlags");
	if (err)
		return err;
	err = hx_rt.GraphInstantiateWithFlags(exec, graph, flags);
	return err || !exec ? err
			    : gw_instantiated(*exec, graph, "hipGraphInstantiateWithFlags");
}

hipError_t hx_graph_instantiate_with_params(hipGraphExec_t *exec, hipGraph_t graph, void *params)
{
	hipError_t err;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphInstantiateWithParams, "hipGraphInstantiateWithParams");
	err = gw_adopt(graph, "hipGraphInstantiateWithParams");
	if (err)
		return err;
	err = hx_rt.GraphInstantiateWithParams(exec, graph, params);
	return err || !exec ? err
			    : gw_instantiated(*exec, graph, "hipGraphInstantiateWithParams");
}

/* ---- launch ------------------------------------------------------------- */

/* Would the runtime take `stream` for a launch?  Asked before anything is
 * queued for it: a wait queued for a launch that then fails stays pending
 * and takes the semaphore's next signal from the next good launch.  The
 * check is the one streams.c makes for waits (hipStreamGetDevice, or
 * hipStreamGetPriority before 5.6): it reads no capture state, and unlike
 * hipStreamQuery it checks the handle on every release (the development
 * tree's hipStreamQuery_common does not).  A stream it refuses gets the
 * launch's own answer on every release, hipErrorContextIsDestroyed
 * (clr hip_graph.cpp hipGraphLaunch_common, hip::isValid). */
static hipError_t gw_stream_check(hipStream_t stream, const char *what)
{
	if (hx_stream_valid(stream))
		return hipSuccess;
	hx_err("%s: stream %p is not a stream the runtime knows (destroyed, or never created); "
	       "nothing launched, no wait queued", what, (void *)stream);
	return hipErrorContextIsDestroyed;
}

/* The host-wait path: the waits of exec `x` block the calling thread, so
 * they are made on copies of its params with hx_gw_lock released (held,
 * it would stall every other graph call, and the thread whose graph
 * signals the semaphore would never get to launch it).  Entered and left
 * with the lock held; `x` may be gone on return. */
static hipError_t gw_host_waits_locked(struct gexec *x, hipStream_t stream, const char *what)
{
	struct gw_vals *v = calloc(x->n ? x->n : 1, sizeof(*v));
	unsigned n = x->n, copied = 0;
	hipError_t err = hipSuccess;

	if (!v) {
		hx_err("%s: out of memory", what);
		return hipErrorOutOfMemory;
	}
	/* An entry whose wait is already queued on its side stream (armed:
	 * before the process fell back to this path) is not waited for a
	 * second time: that would take a second signal. */
	for (; copied < n && !err; copied++)
		if (!x->e[copied].armed &&
		    hx_gw_vals_copy(&v[copied], x->e[copied].v.handles, x->e[copied].v.raw_params,
				    x->e[copied].v.n))
			err = hipErrorOutOfMemory;
	pthread_mutex_unlock(&hx_gw_lock);
	for (unsigned i = 0; i < n && !err; i++)
		if (v[i].n)
			err = hx_op_wait(v[i].handles, v[i].raw_params, v[i].n, stream);
	for (unsigned i = 0; i < copied; i++)
		hx_gw_vals_free(&v[i]);
	free(v);
	/* The blocking wait left the capture guard: taken again before the
	 * graph lock, in the order every caller takes them. */
	hx_capture_guard_enter();
	pthread_mutex_lock(&hx_gw_lock);
	if (err)
		hx_err("%s: a wait node's blocking wait failed (error %d)", what, (int)err);
	return err;
}

/* Is the stream the launch goes to capturing?  Under hipGraphLaunch_spt the
 * null stream is the calling thread's per-thread stream, which can be. */
static bool gw_capturing(hipStream_t stream, bool spt)
{
	return hx_capturing(spt && !stream ? hipStreamPerThread : stream);
}

/*
 * The launch decides once, under the capture guard (runtime.h), whether its
 * stream is capturing, and holds the guard until the launch is enqueued.
 * Its stream waits never block the thread under hx_gw_lock: a wait that
 * would (the process fell back to the host-blocking path, maybe during
 * this very launch) is retried on the host-blocking path, which waits with
 * the lock and the guard released.
 */
static hipError_t gw_launch(hipGraphExec_t exec, hipStream_t stream, bool spt)
{
	const char *what = spt ? "hipGraphLaunch_spt" : "hipGraphLaunch";
	hx_graph_launch_fn *real;
	struct gexec *x = NULL;
	hipError_t err = hipSuccess;
	unsigned queued = 0;
	bool blocking;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	real = spt ? hx_rt.GraphLaunch_spt : hx_rt.GraphLaunch;
	if (!real) {
		hx_err("%s: the HIP runtime has no %s", what, what);
		return hipErrorNotSupported;
	}
	if (!__atomic_load_n(&gw_nexecs, __ATOMIC_RELAXED))
		return real(exec, stream);
	/* 1: waits block the calling thread (the host-wait path). */
	blocking = hx_op_wait_path(NULL, NULL, 0) == 1;
	hx_capture_guard_enter();
again:
	pthread_mutex_lock(&hx_gw_lock);
	x = gexec_find_locked(exec);
	if (!x || !x->n) {
		/* None, or the placeholder of an update in progress (an
		 * application's race: the runtime answers for it). */
		pthread_mutex_unlock(&hx_gw_lock);
		err = real(exec, stream);
		hx_capture_guard_leave();
		return err;
	}
	if (x->poisoned) {
		hx_err("%s: exec %p is refused: a hipGraphExecUpdate of it failed part-way (the "
		       "runtime does not roll back); update it again or instantiate anew", what,
		       (void *)exec);
		err = hipErrorGraphExecUpdateFailure;
		goto out;
	}
	/* Captured, the pre-launch wait would run now, not at replay (through
	 * hipGraphLaunch_spt as well). */
	if (gw_capturing(stream, spt)) {
		hx_err("%s: exec %p holds hipextsem wait nodes and cannot be launched into a "
		       "stream capture", what, (void *)exec);
		err = hipErrorStreamCaptureUnsupported;
		goto out;
	}
	/* Every semaphore must still exist: fail before enqueuing anything. */
	for (unsigned i = 0; i < x->n && !err; i++)
		err = hx_op_wait_validate(x->e[i].v.handles, x->e[i].v.raw_params, x->e[i].v.n,
					  what);
	if (err) {
		hx_err("%s: exec %p not launched: a wait node's semaphore is no longer valid "
		       "(error %d)", what, (void *)exec, (int)err);
		goto out;
	}
	err = gw_stream_check(stream, what);
	if (err)
		goto out;
	if (blocking) {
		/* Waited for already; each node's event is then recorded on an
		 * idle side stream, complete at once, and no other launch can
		 * be bound to a record that is not (the path is the same for
		 * every wait of the process). */
		err = gw_host_waits_locked(x, stream, what);
		if (err)
			goto out;
		x = gexec_find_locked(exec);
		if (!x || !x->n) {
			/* Destroyed meanwhile: the runtime answers for it. */
			pthread_mutex_unlock(&hx_gw_lock);
			err = real(exec, stream);
			hx_capture_guard_leave();
			return err;
		}
		/* The guard was left while the thread blocked. */
		if (gw_capturing(stream, spt)) {
			hx_err("%s: stream %p began a capture while the launch of exec %p waited; not "
			       "launched, and the signals its waits took are not given back", what,
			       (void *)stream, (void *)exec);
			err = hipErrorStreamCaptureUnsupported;
			goto out;
		}
	}
	/* Every side stream before any wait: none fails after a wait is
	 * queued. */
	for (unsigned i = 0; i < x->n && !err; i++)
		err = hx_gw_side_stream_locked(&x->e[i].side, &x->e[i].side_dev, x->e[i].w->dev, what);
	for (unsigned i = 0; i < x->n && !err; i++) {
		struct gexec_entry *e = &x->e[i];
		if (!blocking && !e->armed) {
			err = hx_op_wait_noblock(e->v.handles, e->v.raw_params, e->v.n, e->side);
			if (err == HX_ERR_WOULD_BLOCK) {
				/* The runtime refused the stream wait and the process
				 * fell back: start again on the host-blocking path
				 * (the waits already queued stay, and are not waited
				 * for twice). */
				hx_warn("%s: the stream wait was refused during the launch of exec %p; "
					"its waits now block the calling thread", what, (void *)exec);
				pthread_mutex_unlock(&hx_gw_lock);
				blocking = true;
				err = hipSuccess;
				goto again;
			}
			e->armed = !err;
		}
		if (!err) {
			err = hx_rt.EventRecord(e->w->event, e->side);
			if (err)
				hx_err("%s: hipEventRecord on the side stream failed (error %d)",
				       what, (int)err);
		}
	}
	if (!err)
		err = real(exec, stream);
	if (err) {
		for (unsigned i = 0; i < x->n; i++)
			queued += x->e[i].armed;
		hx_err("%s: exec %p not launched (error %d)%s", what, (void *)exec, (int)err,
		       queued     ? "; the waits queued for it serve its next launch"
		       : blocking ? "; the signals its waits took are not given back"
				  : "");
		goto out;
	}
	for (unsigned i = 0; i < x->n; i++)
		x->e[i].armed = false;
	hx_dbg("%s: exec %p with %u wait node(s): %d", what, (void *)exec, x->n, (int)err);
out:
	pthread_mutex_unlock(&hx_gw_lock);
	hx_capture_guard_leave();
	return err;
}

/* A launch leaves its wait nodes' waits pending on the stream: the release
 * at exit is set up on the launching thread too (the main thread's hook
 * where the shim's interposition of __cxa_thread_atexit_impl is not
 * reached), before the capture guard (streams.c, wait.c). */
hipError_t hx_graph_launch(hipGraphExec_t exec, hipStream_t stream)
{
	hx_op_exit_release_setup("hipGraphLaunch");
	stream = hx_stream_canonical(stream);
	hx_stream_pts_prepare(stream);
	return gw_launch(exec, stream, false);
}

hipError_t hx_graph_launch_spt(hipGraphExec_t exec, hipStream_t stream)
{
	hx_op_exit_release_setup("hipGraphLaunch_spt");
	hx_stream_pts_prepare(stream ? stream : hipStreamPerThread);
	/* Not hx_stream_canonical: NULL means the per-thread stream here. */
	return gw_launch(exec, stream, true);
}

hipError_t hx_graph_exec_destroy(hipGraphExec_t exec)
{
	struct gexec *x;
	hipError_t err;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphExecDestroy, "hipGraphExecDestroy");
	err = hx_rt.GraphExecDestroy(exec);
	if (err || !exec)
		return err;
	pthread_mutex_lock(&hx_gw_lock);
	x = gexec_unlink_locked(exec);
	if (x)
		gexec_free_locked(x);
	pthread_mutex_unlock(&hx_gw_lock);
	return err;
}

/* ---- exec parameters ---------------------------------------------------- */

hipError_t hx_graph_exec_wait_set(hipGraphExec_t exec, hipGraphNode_t node,
				  const struct hx_ext_sem_node_params *p)
{
	static const char what[] = "hipGraphExecExternalSemaphoresWaitNodeSetParams";
	struct gexec_entry *e = NULL;
	struct gw_vals v, old;
	struct gexec *x;
	hipError_t err;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	if (!hx_graph_wait_known(node)) {
		if (hx_graph_refuse_foreign(node, p, what))
			return hipErrorInvalidValue;
		FORWARD_FOREIGN_NODE(node, HX_GRAPH_NODE_EXT_SEM_WAIT,
				     GraphExecExternalSemaphoresWaitNodeSetParams,
				     "hipGraphExecExternalSemaphoresWaitNodeSetParams", exec, node, p);
	}
	err = hx_gw_vals_from_params(&v, p, what);
	if (err)
		return err;
	/* Under hx_gw_lock: never changes the params of a launch being enqueued. */
	pthread_mutex_lock(&hx_gw_lock);
	x = gexec_find_locked(exec);
	for (unsigned i = 0; x && i < x->n && !e; i++)
		if (x->e[i].w->node == node)
			e = &x->e[i];
	if (e) {
		/* CUDA: the number of semaphores of an instantiated node is fixed. */
		if (e->v.n != v.n) {
			pthread_mutex_unlock(&hx_gw_lock);
			hx_err("%s: node %p was instantiated with %u semaphore(s), not %u", what,
			       (void *)node, e->v.n, v.n);
			hx_gw_vals_free(&v);
			return hipErrorInvalidValue;
		}
		old = e->v;
		e->v = v;
		if (e->armed)
			hx_warn("%s: exec %p had a wait queued on node %p's old params for a "
				"launch the runtime refused: it stays pending", what,
				(void *)exec, (void *)node);
		e->armed = false;
	}
	pthread_mutex_unlock(&hx_gw_lock);
	hx_gw_vals_free(e ? &old : &v);
	if (!e) {
		hx_err("%s: exec %p has no wait node %p (not instantiated from its graph, or "
		       "instantiated by a call the shim does not intercept)", what, (void *)exec,
		       (void *)node);
		return hipErrorInvalidValue;
	}
	return hipSuccess;
}

static bool gw_vals_same(const struct gw_vals *a, const struct gw_vals *b)
{
	struct hx_params pa = hx_abi_params(a->raw_params), pb = hx_abi_params(b->raw_params);

	if (a->n != b->n || memcmp(a->handles, b->handles, a->n * sizeof(*a->handles)))
		return false;
	for (unsigned i = 0; i < a->n; i++)
		if (hx_param_value(pa, i) != hx_param_value(pb, i))
			return false;
	return true;
}

/* After a successful update, before the new records replace the old: a
 * wait queued for a launch the runtime refused (armed) serves the exec's
 * next launch, as without the update, when its node (paired by position,
 * as the runtime pairs them) kept its semaphores and values and its
 * device; its side stream goes with it.  Dropped, it would stay pending
 * and take the semaphore's next signal from that launch.  One whose node
 * changed stays pending, said once. */
static void gw_carry_armed_locked(struct gexec *old, struct gexec *nx, hipGraphExec_t exec)
{
	if (!old)
		return;
	if (!nx || old->n != nx->n) {
		for (unsigned i = 0; i < old->n; i++)
			if (old->e[i].armed) {
				hx_warn("hipGraphExecUpdate: exec %p had a wait queued for a launch the "
					"runtime refused; the new graph's wait nodes differ, so that "
					"wait stays pending and takes a signal of its semaphore",
					(void *)exec);
				old->e[i].armed = false;
			}
		return;
	}
	for (unsigned i = 0; i < nx->n; i++) {
		struct gexec_entry *o = &old->e[i], *e = &nx->e[i];

		if (!o->armed)
			continue;
		if (!e->side && o->side_dev == e->w->dev && gw_vals_same(&o->v, &e->v)) {
			e->side = o->side;
			e->side_dev = o->side_dev;
			e->armed = true;
			o->side = NULL;
		} else {
			hx_warn("hipGraphExecUpdate: exec %p had a wait queued on a node's old "
				"semaphores for a launch the runtime refused; the node changed, so "
				"that wait stays pending and takes a signal of its semaphore",
				(void *)exec);
		}
		o->armed = false;
	}
}

/* hipGraphExecUpdate: the runtime pairs the exec's nodes with the new
 * graph's (clr: in topological order, types and dependency counts must
 * match, then each exec node takes the new node's params, an event-wait
 * node its event).  The shim refuses first, as CUDA does, a wait node whose
 * number of semaphores changed.  All or nothing in the shim's records: the
 * new records are built before the runtime is called (out of memory, the
 * exec is left as it was, the runtime not asked), and installed once it
 * succeeded.  A failed update is not rolled back by any release: past the
 * topology and node-type checks the exec may hold some of the new graph's
 * events and some of the old's, which no records describe, so it is
 * refused at launch (logged) until updated again. */
hipError_t hx_graph_exec_update(hipGraphExec_t exec, hipGraph_t graph, hipGraphNode_t *errNode,
				int *result)
{
	static const char what[] = "hipGraphExecUpdate";
	hipGraphNode_t bad = NULL;
	struct gexec *x, *nx;
	hipError_t err;
	bool ok;

	if (!hx_reg_init())
		return hipErrorNotInitialized;
	REQUIRE_REAL(GraphExecUpdate, "hipGraphExecUpdate");
	if (!exec || !graph || !errNode || !result)
		return hx_rt.GraphExecUpdate(exec, graph, errNode, result);
	err = gw_adopt(graph, what);
	if (err) {
		/* nothing updated: the outputs say so, as for a refused update */
		*errNode = NULL;
		*result = HX_GRAPH_EXEC_UPDATE_ERROR;
		return err;
	}
	if (!hx_graph_wait_any())
		return hx_rt.GraphExecUpdate(exec, graph, errNode, result);
	pthread_mutex_lock(&hx_gw_lock);
	ok = gw_build_locked(graph, &nx);
	x = gexec_find_locked(exec);
	if (ok && !x && nx) {
		/* An exec without records yet: a placeholder (no wait node)
		 * stands for it during the update, so that a destroy meanwhile
		 * is seen (it unlinks it) and no records go to a dead exec. */
		struct gexec *ph = calloc(1, sizeof(*ph));

		if (!ph) {
			gexec_free_locked(nx);
			ok = false;
		} else {
			gw_install_locked(exec, ph);
			x = ph;
		}
	}
	if (ok && x && nx && x->n && nx->n == x->n)
		for (unsigned i = 0; i < nx->n && !bad; i++)
			if (nx->e[i].v.n != x->e[i].v.n)
				bad = nx->e[i].w->node;
	if (bad && nx) {
		gexec_free_locked(nx);
		nx = NULL;
	}
	pthread_mutex_unlock(&hx_gw_lock);
	if (!ok) {
		hx_err("%s: out of memory for the new graph's wait nodes; exec %p not updated", what,
		       (void *)exec);
		return hipErrorOutOfMemory;
	}
	if (bad) {
		hx_err("%s: wait node %p has a different number of semaphores than the exec's "
		       "node; not updated", what, (void *)bad);
		*errNode = bad;
		*result = HX_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
		return hipErrorGraphExecUpdateFailure;
	}
	err = hx_rt.GraphExecUpdate(exec, graph, errNode, result);
	pthread_mutex_lock(&hx_gw_lock);
	if (x && !gexec_find_locked(exec)) {
		/* Destroyed by another thread during the update (x is gone):
		 * nothing is left to update. */
		if (nx)
			gexec_free_locked(nx);
		pthread_mutex_unlock(&hx_gw_lock);
		hx_err("%s: exec %p was destroyed while it was updated", what, (void *)exec);
		return err;
	}
	if (!err) {
		gw_carry_armed_locked(gexec_find_locked(exec), nx, exec);
		gw_install_locked(exec, nx);
	} else if (*result == HX_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED ||
		   *result == HX_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED || (!x && !nx)) {
		/* Refused before any node changed, or no wait node either side. */
		if (nx)
			gexec_free_locked(nx);
		if (x && !x->n)
			gw_install_locked(exec, NULL); /* the placeholder */
	} else {
		/* The new records, or the old ones when the new graph has no
		 * wait node, stand for the exec, marked. */
		if (!nx)
			nx = gexec_unlink_locked(exec);
		if (nx) {
			nx->poisoned = true;
			gw_install_locked(exec, nx);
		}
		hx_err("%s: the runtime failed to update exec %p (error %d, result %d) and does "
		       "not roll back: its wait nodes may hold either graph's events; it will "
		       "not be launched until updated again", what, (void *)exec, (int)err,
		       *result);
	}
	pthread_mutex_unlock(&hx_gw_lock);
	return err;
}
