/* SPDX-License-Identifier: MIT */
/*
 * The side streams of graph wait nodes (graph_wait.h): at launch, each
 * wait node of an exec waits on a stream of its own, which the launch's
 * stream then waits for through the node's event.  A destroyed exec's side
 * streams are never destroyed (a stream may still hold a pending wait, and
 * hipStreamDestroy would wait for it): they are pooled and reused once
 * idle.  Everything here runs under hx_gw_lock.
 */
#include <stdlib.h>

#include "graph_wait.h"
#include "log.h"
#include "runtime.h"

/* Side streams of destroyed execs, reused once idle.  Idle means that
 * `idle`, recorded on the stream when it was pooled, has completed.
 * hipStreamQuery answers 900 for every stream from 5.5 to 6.0 while any
 * global capture is live, whatever the caller's mode (clr
 * hipStreamQuery_common -> StreamCaptureOngoing in hip_stream.cpp, read at
 * rocm-5.7.1; docs/streams.md), so
 * that no pooled stream was ever taken then. */
struct gw_pooled {
	struct gw_pooled *next;
	hipStream_t s;
	hipEvent_t idle; /* NULL: ask hipStreamQuery */
	int dev;
};

static struct gw_pooled *gw_pool;

/* Makes `dev` current for a call that creates or records on its objects;
 * returns what gw_dev_leave restores (-1: nothing). */
static int gw_dev_enter(int dev)
{
	int cur = -1;

	if (!hx_rt.SetDevice || hx_rt.GetDevice(&cur) != hipSuccess || cur == dev)
		return -1;
	return hx_rt.SetDevice(dev) == hipSuccess ? cur : -1;
}

static void gw_dev_leave(int prev)
{
	if (prev >= 0)
		hx_rt.SetDevice(prev);
}

void hx_gw_side_pool_locked(hipStream_t s, int dev)
{
	struct gw_pooled *p = malloc(sizeof(*p));
	int prev;

	if (!p)
		return; /* kept by nobody: a leaked stream, never a freed one */
	p->s = s;
	p->dev = dev;
	p->idle = NULL;
	if (hx_rt.EventQuery) {
		prev = gw_dev_enter(dev);
		if (hx_rt.EventCreateWithFlags(&p->idle, hipEventDisableTiming) != hipSuccess)
			p->idle = NULL;
		else if (hx_rt.EventRecord(p->idle, s) != hipSuccess) {
			hx_rt.EventDestroy(p->idle);
			p->idle = NULL;
		}
		gw_dev_leave(prev);
	}
	p->next = gw_pool;
	gw_pool = p;
}

/* hipEventQuery, like hipStreamQuery, passes clr's StreamCaptureOngoing
 * for the stream of the event's latest record (clr hip_event.cpp
 * ihipEventQuery): asked in Relaxed mode, as the shim's own calls are
 * (runtime.h). */
static bool gw_pooled_idle(const struct gw_pooled *p)
{
	hipError_t q;
	int mode;

	if (!p->idle)
		return hx_runtime_stream_query(p->s) == hipSuccess;
	mode = hx_runtime_capture_relaxed();
	q = hx_rt.EventQuery(p->idle);
	hx_runtime_capture_restore(mode);
	return q == hipSuccess;
}

hipError_t hx_gw_side_stream_locked(hipStream_t *side, int *side_dev, int dev, const char *what)
{
	hipError_t err;
	int prev;

	if (*side && *side_dev == dev)
		return hipSuccess;
	if (*side) {
		hx_gw_side_pool_locked(*side, *side_dev);
		*side = NULL;
	}
	/* A pooled stream is taken only when idle: never behind a pending
	 * wait. */
	for (struct gw_pooled **pp = &gw_pool; *pp; pp = &(*pp)->next) {
		struct gw_pooled *p = *pp;
		if (p->dev == dev && gw_pooled_idle(p)) {
			*pp = p->next;
			*side = p->s;
			*side_dev = dev;
			if (p->idle)
				hx_rt.EventDestroy(p->idle);
			free(p);
			return hipSuccess;
		}
	}
	prev = gw_dev_enter(dev);
	err = hx_rt.StreamCreateWithFlags(&*side, hipStreamNonBlocking);
	gw_dev_leave(prev);
	if (err) {
		hx_err("%s: cannot create the side stream for a wait node on device %d (error %d)",
		       what, dev, (int)err);
		*side = NULL;
		return err;
	}
	*side_dev = dev;
	return hipSuccess;
}
