/* SPDX-License-Identifier: MIT */
/*
 * cpuhip: stream capture (both flavours), after ROCm clr rocm-6.2.2
 * (hipamd/src/hip_graph.cpp hipStreamBeginCapture_common,
 * hipStreamEndCapture_common, hipStreamGetCaptureInfo_v2_common,
 * ihipStreamUpdateCaptureDependencies, hipThreadExchangeStreamCaptureMode,
 * capturehipLaunchHostFunc; hip_stream.cpp hipStreamWaitEvent_common,
 * Stream::EndCapture, Stream::StreamCaptureOngoing; hip_event.cpp
 * hipEventRecord_common; hip_internal.hpp hip::Stream capture state and
 * CHECK_STREAM_CAPTURE_SUPPORTED).
 *
 * Per stream: status, graph, id, mode, origin flag, parent, the current
 * dependency set (lastCapturedNodes_), the nodes removed from it by
 * hipStreamUpdateCaptureDependencies(Set), the streams joined through its
 * events, the events recorded into it.  The thread's capture list
 * (tls.capture_streams_) is modelled by the owner thread and a flag, the
 * global list (g_captureStreams) and g_allCapturingStreams by flags.
 * Per event: the stream of its latest record and the dependency set it
 * captured (SetNodesPrevToRecorded).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuhip_graph_internal.h"

struct cstream {
	struct cstream *next;
	hipStream_t s;
	int status;
	struct ihipGraph *graph;
	unsigned long long id;
	int mode;
	bool origin;
	hipStream_t parent;
	struct nodevec deps, removed;
	hipStream_t *par;
	size_t npar;
	hipEvent_t *evs;
	size_t nevs;
	bool in_tls, in_global, in_all;
	pthread_t tls_thread;
};

struct cevent {
	struct cevent *next;
	hipEvent_t e;
	hipStream_t stream; /* clr Event::GetCaptureStream */
	struct nodevec prev; /* clr Event::GetNodesPrevToRecorded */
};

static struct cstream *cstreams;
static struct cevent *cevents;
static unsigned long long capture_ids;
static __thread int thread_mode = HX_CAPTURE_MODE_GLOBAL;

/* clr resolves hipStreamPerThread to the calling thread's own stream
 * before it looks at capture state (hip::getStream, hip_stream.cpp): the
 * state is kept by that stream, never by the shared handle, so one
 * thread's capture of its per-thread stream is not another's. */
static hipStream_t cs_key(hipStream_t s)
{
	hipStream_t own;

	if (s != hipStreamPerThread)
		return s;
	own = cpuhip_tls_per_thread();
	return own ? own : s;
}

static struct cstream *cs_find_locked(hipStream_t s)
{
	s = cs_key(s);
	for (struct cstream *c = cstreams; c; c = c->next)
		if (c->s == s)
			return c;
	return NULL;
}

static struct cstream *cs_get_locked(hipStream_t s)
{
	struct cstream *c = cs_find_locked(s);

	s = cs_key(s);

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->s = s;
		c->next = cstreams;
		cstreams = c;
	}
	return c;
}

static struct cevent *ce_find_locked(hipEvent_t e)
{
	for (struct cevent *c = cevents; c; c = c->next)
		if (c->e == e)
			return c;
	return NULL;
}

static int status_locked(hipStream_t s)
{
	struct cstream *c = s ? cs_find_locked(s) : NULL;

	return c ? c->status : HX_CAPTURE_STATUS_NONE;
}

/* clr AddCrossCapturedNode: Set moves the current set to the removed list
 * first; nodes already in the set are not added twice. */
static int add_cross_locked(struct cstream *c, struct hipGraphNode *const *v, size_t n,
			    bool replace)
{
	if (replace) {
		for (size_t i = 0; i < c->deps.n; i++)
			if (nodevec_push(&c->removed, c->deps.v[i]))
				return -1;
		c->deps.n = 0;
	}
	for (size_t i = 0; i < n; i++)
		if (!nodevec_has(&c->deps, v[i]) && nodevec_push(&c->deps, v[i]))
			return -1;
	return 0;
}

bool capture_graph_in_use_locked(const struct ihipGraph *g)
{
	for (struct cstream *c = cstreams; c; c = c->next)
		if (c->in_all && c->graph == g)
			return true;
	return false;
}

static void drop_graph_nodes(struct nodevec *v, const struct ihipGraph *g)
{
	size_t j = 0;

	for (size_t i = 0; i < v->n; i++)
		if (v->v[i]->graph != g)
			v->v[j++] = v->v[i];
	v->n = j;
}

/* A graph is being freed: forget every reference to it or its nodes (clr
 * would keep dangling pointers). */
void capture_graph_gone_locked(const struct ihipGraph *g)
{
	for (struct cstream *c = cstreams; c; c = c->next) {
		if (c->graph == g)
			c->graph = NULL;
		drop_graph_nodes(&c->deps, g);
		drop_graph_nodes(&c->removed, g);
	}
	for (struct cevent *e = cevents; e; e = e->next)
		drop_graph_nodes(&e->prev, g);
}

bool cpuhip_capture_active(hipStream_t h)
{
	int st;

	pthread_mutex_lock(&glock);
	st = status_locked(h);
	pthread_mutex_unlock(&glock);
	return st != HX_CAPTURE_STATUS_NONE;
}

int cpuhip_capture_status(hipStream_t h)
{
	int st;

	pthread_mutex_lock(&glock);
	st = status_locked(h);
	pthread_mutex_unlock(&glock);
	return st;
}

/* clr CHECK_STREAM_CAPTURE_SUPPORTED (hip_internal.hpp), in hipMalloc,
 * hipHostMalloc, hipFree, hipHostFree: in ThreadLocal or Global mode the
 * calling thread's captures are invalidated -> Unsupported; in Global mode
 * then every Global capture of any thread likewise; Relaxed: no check. */
hipError_t cpuhip_capture_check_supported(void)
{
	hipError_t e = hipSuccess;
	bool any = false;

	if (thread_mode == HX_CAPTURE_MODE_RELAXED)
		return hipSuccess;
	pthread_mutex_lock(&glock);
	for (struct cstream *c = cstreams; c; c = c->next)
		if (c->in_tls && pthread_equal(c->tls_thread, pthread_self())) {
			c->status = HX_CAPTURE_STATUS_INVALIDATED;
			any = true;
		}
	if (!any && thread_mode == HX_CAPTURE_MODE_GLOBAL)
		for (struct cstream *c = cstreams; c; c = c->next)
			if (c->in_global) {
				c->status = HX_CAPTURE_STATUS_INVALIDATED;
				any = true;
			}
	pthread_mutex_unlock(&glock);
	if (any) {
		fprintf(stderr, "cpuhip: call not allowed during stream capture: captures "
			"invalidated\n");
		e = hipErrorStreamCaptureUnsupported;
	}
	return e;
}

/* clr Stream::StreamCaptureOngoing (hipStreamSynchronize, hipStreamQuery):
 * a stream not capturing: unless the thread is Relaxed, any Global capture
 * (then any capture of this thread) is invalidated and the call refused;
 * a capturing stream is invalidated and refused; an invalidated one
 * refused. */
/* Is a Global-mode capture live anywhere in the process (5.5 to 6.0.x
 * hipStreamQuery, cpuhip.c)? */
bool cpuhip_capture_global_live(void)
{
	bool on = false;

	pthread_mutex_lock(&glock);
	for (struct cstream *c = cstreams; c && !on; c = c->next)
		on = c->in_global;
	pthread_mutex_unlock(&glock);
	return on;
}

bool cpuhip_capture_ongoing(hipStream_t h)
{
	bool on = false;

	if (!h)
		return false;
	pthread_mutex_lock(&glock);
	struct cstream *s = cs_find_locked(h);
	int st = s ? s->status : HX_CAPTURE_STATUS_NONE;
	if (st == HX_CAPTURE_STATUS_NONE && thread_mode != HX_CAPTURE_MODE_RELAXED) {
		for (struct cstream *c = cstreams; c; c = c->next)
			if (c->in_global) {
				c->status = HX_CAPTURE_STATUS_INVALIDATED;
				on = true;
			}
		if (!on)
			for (struct cstream *c = cstreams; c; c = c->next)
				if (c->in_tls && pthread_equal(c->tls_thread, pthread_self())) {
					c->status = HX_CAPTURE_STATUS_INVALIDATED;
					on = true;
				}
	} else if (st == HX_CAPTURE_STATUS_ACTIVE) {
		s->status = HX_CAPTURE_STATUS_INVALIDATED;
		on = true;
	} else if (st == HX_CAPTURE_STATUS_INVALIDATED) {
		on = true;
	}
	pthread_mutex_unlock(&glock);
	return on;
}

CPUHIP_EXPORT hipError_t hipThreadExchangeStreamCaptureMode(int *mode)
{
	CPUHIP_BOUNDARY("hipThreadExchangeStreamCaptureMode", NULL);
	int old;

	if (!mode || *mode < HX_CAPTURE_MODE_GLOBAL || *mode > HX_CAPTURE_MODE_RELAXED)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	old = thread_mode;
	thread_mode = *mode;
	*mode = old;
	return cpuhip_set_last_error(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipStreamBeginCapture(hipStream_t stream, int mode)
{
	CPUHIP_BOUNDARY("hipStreamBeginCapture", stream);
	struct ihipGraph *g;

	/* clr hipStreamBeginCapture_common: a dead stream -> 709, the null
	 * stream -> hipErrorStreamCaptureUnsupported, a bad mode ->
	 * hipErrorInvalidValue, an Active capture -> IllegalState (an
	 * invalidated one may begin again, keeping its old dependency set:
	 * clr resets it only in Stream::EndCapture). */
	if (!cpuhip_stream_valid(stream))
		return cpuhip_set_last_error((hipError_t)709);
	if (!stream || stream == hipStreamLegacy)
		return cpuhip_set_last_error(hipErrorStreamCaptureUnsupported);
	if (mode < HX_CAPTURE_MODE_GLOBAL || mode > HX_CAPTURE_MODE_RELAXED)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	pthread_mutex_lock(&glock);
	struct cstream *c = cs_get_locked(stream);
	if (c && c->status == HX_CAPTURE_STATUS_ACTIVE) {
		pthread_mutex_unlock(&glock);
		return cpuhip_set_last_error(hipErrorIllegalState);
	}
	g = c ? graph_new_locked(true) : NULL;
	if (!g) {
		pthread_mutex_unlock(&glock);
		return cpuhip_set_last_error(hipErrorOutOfMemory);
	}
	c->graph = g;
	c->status = HX_CAPTURE_STATUS_ACTIVE;
	c->id = ++capture_ids;
	c->mode = mode;
	c->origin = true;
	if (mode != HX_CAPTURE_MODE_RELAXED) {
		c->in_tls = true;
		c->tls_thread = pthread_self();
	}
	if (mode == HX_CAPTURE_MODE_GLOBAL)
		c->in_global = true;
	c->in_all = true;
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(hipSuccess);
}

/* clr Stream::EndCapture: events recorded into the capture forget their
 * stream, joined streams end too, the state is reset (not the removed
 * dependencies: clr keeps removedDependencies_). */
static void end_capture_locked(struct cstream *c)
{
	for (size_t i = 0; i < c->nevs; i++) {
		struct cevent *e = ce_find_locked(c->evs[i]);
		if (e)
			e->stream = NULL;
	}
	for (size_t i = 0; i < c->npar; i++) {
		struct cstream *p = cs_find_locked(c->par[i]);
		if (p && p != c)
			end_capture_locked(p);
	}
	c->status = HX_CAPTURE_STATUS_NONE;
	c->graph = NULL;
	c->origin = false;
	c->parent = NULL;
	c->deps.n = 0;
	c->npar = 0;
	c->nevs = 0;
}

static hipError_t end_locked(struct cstream *c, hipGraph_t *pGraph)
{
	struct hipGraphNode *tmp;
	hipGraphNode_t tn;
	struct ihipGraph *g = c->graph;
	size_t leaves = 0, counted = 0;
	bool in_removed = false;

	/* Not origin -> Unmatched; not Relaxed: only the thread that began
	 * may end it -> WrongThread; then off the lists. */
	if (!c->origin)
		return CPUHIP_ERR_CAPTURE_UNMATCHED;
	if (c->mode != HX_CAPTURE_MODE_RELAXED) {
		if (!c->in_tls || !pthread_equal(c->tls_thread, pthread_self()))
			return CPUHIP_ERR_CAPTURE_WRONG_THREAD;
		c->in_tls = false;
	}
	c->in_global = false;
	c->in_all = false;
	if (c->status == HX_CAPTURE_STATUS_INVALIDATED) {
		/* clr returns no graph and leaves the stream's state as it is
		 * (status stays Invalidated until a new capture).  Up to 6.2.2
		 * the graph is left allocated; the development tree deletes it
		 * (rocm-systems projects/clr hipamd/src/hip_graph.cpp
		 * hipStreamEndCapture_common -> Stream::ReleaseCaptureGraph),
		 * a hipStreamBeginCaptureToGraph graph, the application's, too
		 * (cpuhip has no such call); cpuhip plays that tree as 7.x. */
		*pGraph = NULL;
		if (g && cpuhip_release() >= 700)
			graph_free_locked(g);
		return hipErrorStreamCaptureInvalidated;
	}
	if (!g) {
		*pGraph = NULL;
		return hipErrorInvalidValue;
	}
	/* The unjoined check: a temporary node after the current set; more
	 * than one leaf then, other than manually added nodes, and none of
	 * them a removed dependency -> Unjoined. */
	tmp = calloc(1, sizeof(*tmp));
	if (!tmp)
		return hipErrorOutOfMemory;
	tmp->type = HX_GRAPH_NODE_EMPTY;
	(void)add_node_locked(&tn, g, (const hipGraphNode_t *)c->deps.v, c->deps.n, false, tmp);
	for (struct hipGraphNode *n = g->head; n; n = n->next)
		if (!n->edges.n) {
			leaves++;
			if (!n->manual) {
				counted++;
				if (nodevec_has(&c->removed, n))
					in_removed = true;
			}
		}
	node_unlink_free_locked(tmp);
	if (leaves > 1) {
		for (struct hipGraphNode *n = g->head; n; n = n->next)
			n->manual = false;
		if (counted > 1 && !in_removed) {
			/* clr leaves *pGraph unset and the stream Active; the
			 * development tree (7.x here) deletes the graph too, "as
			 * it can't be retrieved anymore" (hipStreamEndCapture_common,
			 * Stream::ReleaseCaptureGraph). */
			*pGraph = NULL;
			if (cpuhip_release() >= 700)
				graph_free_locked(g);
			fprintf(stderr, "cpuhip: hipStreamEndCapture: capture has unjoined work\n");
			return CPUHIP_ERR_CAPTURE_UNJOINED;
		}
	}
	*pGraph = g;
	end_capture_locked(c);
	return hipSuccess;
}

CPUHIP_EXPORT hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph)
{
	CPUHIP_BOUNDARY("hipStreamEndCapture", stream);
	hipGraph_t unclaimed = NULL;
	hipError_t e;

	/* clr hipStreamEndCapture_common: NULL pGraph -> InvalidValue, the null
	 * stream -> IllegalState, a dead stream -> 709, not capturing ->
	 * IllegalState, then end_locked's checks.  The 7.x tree dropped the
	 * pGraph check: hipStreamEndCapture hands _common a graph variable of
	 * its own and copies it out only to a non-NULL pGraph (rocm-systems
	 * projects/clr hipamd/src/hip_graph.cpp hipStreamEndCapture; Debian's
	 * 7.2.4 answers 0), so the capture ends and its graph goes to no one,
	 * left allocated. */
	if (!pGraph && cpuhip_release() >= 700)
		pGraph = &unclaimed;
	if (!pGraph)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	if (!stream || stream == hipStreamLegacy)
		return cpuhip_set_last_error(hipErrorIllegalState);
	if (!cpuhip_stream_valid(stream))
		return cpuhip_set_last_error((hipError_t)709);
	pthread_mutex_lock(&glock);
	struct cstream *c = cs_find_locked(stream);
	if (!c || c->status == HX_CAPTURE_STATUS_NONE)
		e = hipErrorIllegalState;
	else
		e = end_locked(c, pGraph);
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

#if CPUHIP_ABI == 6
/* clr hipStreamBeginCapture_spt / hipStreamEndCapture_spt (hip_graph.cpp,
 * rocm-5.3 to the development tree, as hipGraphLaunch_spt): the null
 * stream is the calling thread's per-thread stream
 * (PER_THREAD_DEFAULT_STREAM), then the plain call's common path. */
CPUHIP_EXPORT hipError_t hipStreamBeginCapture_spt(hipStream_t stream, int mode)
{
	return hipStreamBeginCapture(stream ? stream : hipStreamPerThread, mode);
}

CPUHIP_EXPORT hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t *pGraph)
{
	return hipStreamEndCapture(stream ? stream : hipStreamPerThread, pGraph);
}
#endif

CPUHIP_EXPORT hipError_t hipStreamIsCapturing(hipStream_t stream, int *pCaptureStatus)
{
	CPUHIP_BOUNDARY("hipStreamIsCapturing", stream);
	if (!pCaptureStatus)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	if (stream && !cpuhip_stream_valid(stream))
		return cpuhip_set_last_error((hipError_t)709);
	*pCaptureStatus = cpuhip_capture_status(stream);
	return cpuhip_set_last_error(hipSuccess);
}

/* clr hipStreamGetCaptureInfo_v2_common: NULL status -> InvalidValue; the
 * null stream -> None; a dead stream -> 709; the rest is filled only while
 * Active (each pointer optional); the dependency array is the stream's
 * own, valid until its set changes. */
CPUHIP_EXPORT hipError_t hipStreamGetCaptureInfo_v2(hipStream_t stream, int *status_out,
						    unsigned long long *id_out,
						    hipGraph_t *graph_out,
						    const hipGraphNode_t **deps_out,
						    size_t *ndeps_out)
{
	CPUHIP_BOUNDARY("hipStreamGetCaptureInfo_v2", stream);
	if (!status_out)
		return cpuhip_set_last_error(hipErrorInvalidValue);
	if (!stream) {
		*status_out = HX_CAPTURE_STATUS_NONE;
		return cpuhip_set_last_error(hipSuccess);
	}
	if (!cpuhip_stream_valid(stream))
		return cpuhip_set_last_error((hipError_t)709);
	pthread_mutex_lock(&glock);
	struct cstream *c = cs_find_locked(stream);
	*status_out = c ? c->status : HX_CAPTURE_STATUS_NONE;
	if (c && c->status == HX_CAPTURE_STATUS_ACTIVE) {
		if (id_out)
			*id_out = c->id;
		if (graph_out)
			*graph_out = c->graph;
		if (deps_out)
			*deps_out = (const hipGraphNode_t *)c->deps.v;
		if (ndeps_out)
			*ndeps_out = c->deps.n;
	}
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(hipSuccess);
}

/* clr ihipStreamUpdateCaptureDependencies: a dead stream -> 709; not
 * capturing (None) -> IllegalState; more dependencies than the graph has
 * nodes, a NULL array with a count, or flags other than Add (0) / Set (1)
 * -> InvalidValue; a NULL entry or one that is no top-level node of the
 * capture graph -> InvalidValue; then Add appends (no duplicates), Set
 * replaces (the old set counts as removed for the unjoined check). */
CPUHIP_EXPORT hipError_t hipStreamUpdateCaptureDependencies(hipStream_t stream,
							    hipGraphNode_t *deps, size_t n,
							    unsigned int flags)
{
	CPUHIP_BOUNDARY("hipStreamUpdateCaptureDependencies", stream);
	hipError_t e = hipSuccess;

	if (stream && !cpuhip_stream_valid(stream))
		return cpuhip_set_last_error((hipError_t)709);
	pthread_mutex_lock(&glock);
	struct cstream *c = stream ? cs_find_locked(stream) : NULL;
	if (!c || c->status == HX_CAPTURE_STATUS_NONE) {
		e = hipErrorIllegalState;
	} else if (!c->graph || c->graph->n < n || (n && !deps) ||
		   (flags != HX_STREAM_ADD_CAPTURE_DEPENDENCIES &&
		    flags != HX_STREAM_SET_CAPTURE_DEPENDENCIES)) {
		e = hipErrorInvalidValue;
	} else {
		for (size_t i = 0; i < n && !e; i++) {
			struct hipGraphNode *d = deps[i] ? node_ok_locked(deps[i]) : NULL;
			if (!d || d->graph != c->graph)
				e = hipErrorInvalidValue;
		}
		if (!e && add_cross_locked(c, (struct hipGraphNode *const *)deps, n,
					   flags == HX_STREAM_SET_CAPTURE_DEPENDENCIES))
			e = hipErrorOutOfMemory;
	}
	pthread_mutex_unlock(&glock);
	return cpuhip_set_last_error(e);
}

/* clr capturehipLaunchHostFunc: a host node depending on the stream's
 * current set, which becomes that node alone. */
hipError_t cpuhip_capture_host_fn(hipStream_t h, hipHostFn_t fn, void *data)
{
	struct hipGraphNode *n;
	hipGraphNode_t out;
	hipError_t e;

	if (!fn)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&glock);
	struct cstream *c = cs_find_locked(h);
	if (!c || c->status != HX_CAPTURE_STATUS_ACTIVE || !c->graph) {
		pthread_mutex_unlock(&glock);
		return hipErrorStreamCaptureInvalidated;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		pthread_mutex_unlock(&glock);
		return hipErrorOutOfMemory;
	}
	n->type = HX_GRAPH_NODE_HOST;
	n->host.fn = fn;
	n->host.userData = data;
	e = add_node_locked(&out, c->graph, (const hipGraphNode_t *)c->deps.v, c->deps.n, false,
			    n);
	if (!e) {
		c->deps.n = 0;
		if (nodevec_push(&c->deps, n))
			e = hipErrorOutOfMemory;
	}
	pthread_mutex_unlock(&glock);
	return e;
}

/* clr hipEventRecord_common (event and stream already checked): the event
 * remembers the stream; on an Active capture it is recorded as captured,
 * with the stream's current set when that is not empty (an empty set
 * leaves the event's earlier one), and nothing is enqueued (true). */
bool cpuhip_capture_event_record_locked(hipEvent_t ev, hipStream_t s)
{
	bool captured = false;

	pthread_mutex_lock(&glock);
	struct cevent *e = ce_find_locked(ev);
	if (!e && (e = calloc(1, sizeof(*e)))) {
		e->e = ev;
		e->next = cevents;
		cevents = e;
	}
	struct cstream *c = s ? cs_find_locked(s) : NULL;
	if (e)
		e->stream = s;
	if (e && c && c->status == HX_CAPTURE_STATUS_ACTIVE) {
		captured = true;
		bool known = false;
		for (size_t i = 0; i < c->nevs; i++)
			known |= c->evs[i] == ev;
		if (!known) {
			void *p = realloc(c->evs, (c->nevs + 1) * sizeof(*c->evs));
			if (p) {
				c->evs = p;
				c->evs[c->nevs++] = ev;
			}
		}
		if (c->deps.n) {
			e->prev.n = 0;
			for (size_t i = 0; i < c->deps.n; i++)
				nodevec_push(&e->prev, c->deps.v[i]);
		}
	}
	pthread_mutex_unlock(&glock);
	return captured;
}

/*
 * clr hipStreamWaitEvent_common after its handle checks (stream_ok tells
 * whether the event's stream still lives: if not, done with success).  An
 * event recorded into its stream's capture joins the waiting stream: a
 * stream that is not an origin takes the capture's graph, id and mode,
 * becomes Active, and its parent counts it among its joined streams; the
 * event's set is added to the waiting stream's set (flags unchecked).
 * Otherwise flags != 0 -> InvalidValue, and an event recorded outside a
 * capture whose stream now captures -> hipErrorStreamCaptureIsolation.
 * *handled false: cpuhip.c goes on with an ordinary wait.
 */
hipError_t cpuhip_capture_wait_event_locked(hipStream_t ws, hipEvent_t ev, unsigned int flags,
					    bool (*stream_ok)(hipStream_t), bool *handled)
{
	hipError_t err = hipSuccess;

	*handled = false;
	pthread_mutex_lock(&glock);
	struct cevent *e = ce_find_locked(ev);
	if (!e || !e->stream)
		goto out;
	if (!stream_ok(e->stream)) {
		*handled = true;
		goto out;
	}
	struct cstream *es = cs_find_locked(e->stream);
	bool captured = false;
	for (size_t i = 0; es && i < es->nevs; i++)
		captured |= es->evs[i] == ev;
	if (captured) {
		*handled = true;
		if (!ws) {
			err = hipErrorInvalidHandle;
			goto out;
		}
		struct cstream *w = cs_get_locked(ws);
		if (!w) {
			err = hipErrorOutOfMemory;
			goto out;
		}
		if (!w->origin) {
			w->graph = es->graph;
			w->status = HX_CAPTURE_STATUS_ACTIVE;
			w->id = es->id;
			w->mode = es->mode;
			w->parent = e->stream;
			bool known = false;
			for (size_t i = 0; i < es->npar; i++)
				known |= es->par[i] == ws;
			if (!known) {
				void *p = realloc(es->par, (es->npar + 1) * sizeof(*es->par));
				if (!p) {
					err = hipErrorOutOfMemory;
					goto out;
				}
				es->par = p;
				es->par[es->npar++] = ws;
			}
		}
		if (add_cross_locked(w, e->prev.v, e->prev.n, false))
			err = hipErrorOutOfMemory;
		goto out;
	}
	if (flags)
		goto out; /* cpuhip.c answers the flags */
	if (es && es->status == HX_CAPTURE_STATUS_ACTIVE) {
		*handled = true;
		err = hipErrorStreamCaptureIsolation;
	}
out:
	pthread_mutex_unlock(&glock);
	return err;
}

void cpuhip_capture_event_gone(hipEvent_t ev)
{
	pthread_mutex_lock(&glock);
	for (struct cevent **pp = &cevents; *pp; pp = &(*pp)->next)
		if ((*pp)->e == ev) {
			struct cevent *e = *pp;
			*pp = e->next;
			free(e->prev.v);
			free(e);
			break;
		}
	pthread_mutex_unlock(&glock);
}

/* hipStreamDestroy (hip_stream.cpp): a capturing stream leaves its parent's
 * joined list and ends its capture (Stream::EndCapture), and leaves the
 * capture lists.  cpuhip also frees the graph an origin stream was
 * building, which no one can obtain any more. */
void cpuhip_capture_forget(hipStream_t h)
{
	pthread_mutex_lock(&glock);
	struct cstream *c = NULL;
	for (struct cstream **pp = &cstreams; *pp; pp = &(*pp)->next)
		if ((*pp)->s == h) {
			c = *pp;
			*pp = c->next;
			break;
		}
	if (c) {
		struct ihipGraph *g = c->origin && c->status != HX_CAPTURE_STATUS_NONE ? c->graph
										 : NULL;
		struct cstream *p = c->parent ? cs_find_locked(c->parent) : NULL;
		for (size_t i = 0; p && i < p->npar; i++)
			if (p->par[i] == h)
				p->par[i] = p->par[--p->npar];
		if (c->status != HX_CAPTURE_STATUS_NONE)
			end_capture_locked(c);
		if (g && !capture_graph_in_use_locked(g))
			graph_free_locked(g);
		free(c->deps.v);
		free(c->removed.v);
		free(c->par);
		free(c->evs);
		free(c);
	}
	for (struct cevent *e = cevents; e; e = e->next)
		if (e->stream == h)
			e->stream = NULL;
	pthread_mutex_unlock(&glock);
}
