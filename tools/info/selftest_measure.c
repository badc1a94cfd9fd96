/* SPDX-License-Identifier: MIT */
/*
 * The self-test's measurements, run by its child after the checks:
 * signal and wait latency, what the semaphore calls cost the calling
 * thread, and when a signal's fence is attached.  Each figure comes with
 * the bare runtime or kernel primitive measured in the same run, and
 * every wait in it has the check's deadline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "selftest_child.h"

#define SETTLE_NS 1000000LL /* lets a stream park in a wait before a latency sample */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void pct(int64_t *v, unsigned n, double *p50, double *p99)
{
	unsigned i99;

	qsort(v, n, sizeof(*v), cmp_i64);
	i99 = (unsigned)(((uint64_t)n * 99) / 100);
	if (i99 >= n)
		i99 = n - 1;
	*p50 = (double)v[n / 2];
	*p99 = (double)v[i99];
}

static void metric(const char *name, int64_t *shim, int64_t *base, unsigned n,
		   const char *what, const char *baseline)
{
	double a50, a99, b50, b99;
	char f[5][32];

	pct(shim, n, &a50, &a99);
	pct(base, n, &b50, &b99);
	snprintf(f[0], sizeof(f[0]), "%.0f", a50);
	snprintf(f[1], sizeof(f[1]), "%.0f", a99);
	snprintf(f[2], sizeof(f[2]), "%.0f", b50);
	snprintf(f[3], sizeof(f[3]), "%.0f", b99);
	snprintf(f[4], sizeof(f[4]), "%u", n);
	st_record("metric", 8, name, f[0], f[1], f[2], f[3], f[4], what, baseline);
}

static void settle(void)
{
	struct timespec ts = { 0, SETTLE_NS };
	nanosleep(&ts, NULL);
}

/* The bare primitive of both latencies: a host write opens the gate the
 * stream is parked at (hipStreamWaitValue64) and the stream writes the
 * next marker (hipStreamWriteValue64); the time until the host sees it.
 * False if the marker never came. */
static bool gate_round_ns(int64_t *out)
{
	uint64_t g = ++hx_st.gate, m = ++hx_st.marker;
	int64_t t0;

	st_put_gate(g);
	st_put_marker(m);
	settle();
	t0 = hx_now_ns();
	st_open_gate(g);
	if (!st_marker_reaches(m))
		return false;
	*out = hx_now_ns() - t0;
	return true;
}

static void not_measured(const char *name, const char *why)
{
	st_record("not-measured", 2, name, why);
}

/* ---- enqueue cost ----------------------------------------------------- */

/*
 * What a signal or wait call costs the calling thread, measured the way
 * the project's benchmark does (docs/bench.md, "Enqueue cost on the
 * calling thread"): the thread's CPU time over a batch of ENQ_BATCH calls
 * on a stream held at a gate, as a busy GPU holds it, each batch right
 * after the stream drained.  Against this runtime's own primitives: a
 * signal against the host function it enqueues, a wait against
 * hipStreamWaitValue64 plus the eventfd arming ioctl per semaphore that
 * an eventfd-based wait issues.  What ran just before a batch changes its
 * cost, so the kinds follow each other in a balanced order.
 */
enum enq_kind {
	EQ_SIGNAL1,
	EQ_SIGNAL16,
	EQ_WAIT1,
	EQ_WAIT16,
	EQ_HOSTFN,
	EQ_WAITVALUE,
	EQ_ARM1,
	EQ_ARM16,
	EQ_KINDS
};

static const char *const enq_names[EQ_KINDS] = {
	[EQ_SIGNAL1] = "1-semaphore signals",
	[EQ_SIGNAL16] = "16-semaphore signals",
	[EQ_WAIT1] = "1-semaphore waits",
	[EQ_WAIT16] = "16-semaphore waits",
	[EQ_HOSTFN] = "empty host functions",
	[EQ_WAITVALUE] = "hipStreamWaitValue64 calls",
	[EQ_ARM1] = "DRM_IOCTL_SYNCOBJ_EVENTFD arms",
	[EQ_ARM16] = "16-fold DRM_IOCTL_SYNCOBJ_EVENTFD arms",
};

#define ENQ_BATCH 8
#define ENQ_SEMS (16 * ENQ_BATCH) /* a distinct set for every call of a batch */
#define ENQ_WARMUP 4              /* rounds not counted */

struct enq {
	uint32_t raw[ENQ_SEMS];
	hipExternalSemaphore_t hs[ENQ_SEMS];
	uint64_t pts[ENQ_SEMS];
	unsigned nsems;
	void *sp, *wp; /* 16 signal / wait parameters in the runtime's layout */
	int efd;
	uint64_t point;
	int64_t *t[EQ_KINDS];
};

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Round `round`, position `pos`: a Williams design (0, 1, 7, 2, 6, 3, 5, 4,
 * then +1 per round), so over EQ_KINDS rounds every kind comes right
 * after every other kind once. */
_Static_assert(EQ_KINDS % 2 == 0, "the Williams design below needs an even number of kinds");
static enum enq_kind enq_order(unsigned round, unsigned pos)
{
	unsigned first = pos == 0 ? 0 : pos % 2 ? (pos + 1) / 2 : EQ_KINDS - pos / 2;

	return (enum enq_kind)((first + round) % EQ_KINDS);
}

/* One batch of `kind` into *out (CPU ns per call); false if a call failed
 * or the stream did not drain (hx_st.why says which). */
static bool enq_batch(struct enq *q, enum enq_kind kind, int64_t *out)
{
	unsigned n = kind == EQ_SIGNAL16 || kind == EQ_WAIT16 || kind == EQ_ARM16 ? 16 : 1;
	uint64_t g = ++hx_st.gate, p = ++q->point, cnt;
	hipError_t e = hipSuccess;
	int64_t t0;

	if (!st_stream_idle())
		return false;
	if ((e = st_put_gate(g)) != hipSuccess)
		return st_fail("holding the stream at a gate answered %s", st_ename(e));
	for (unsigned i = 0; i < 16; i++)
		q->pts[i] = p;
	st_params_set(q->sp, 16, q->pts);
	st_params_set(q->wp, 16, q->pts); /* a point not signaled yet */
	t0 = thread_cpu_ns();
	for (unsigned b = 0; b < ENQ_BATCH && e == hipSuccess; b++) {
		hipExternalSemaphore_t *hs = &q->hs[b * 16];

		switch (kind) {
		case EQ_SIGNAL1:
		case EQ_SIGNAL16:
			e = hx_st.Signal(hs, q->sp, n, hx_st.s);
			atomic_fetch_add(&hx_st.signals_made, n);
			break;
		case EQ_WAIT1:
		case EQ_WAIT16:
			e = hx_st.Wait(hs, q->wp, n, hx_st.s);
			break;
		case EQ_HOSTFN:
			e = st_host_fn();
			break;
		case EQ_WAITVALUE:
			e = hx_st.StreamWaitValue64(hx_st.s, (void *)&hx_st.mem[M_GATE2], p, HX_WAIT_VALUE_GTE,
						~0ull);
			break;
		case EQ_ARM1:
		case EQ_ARM16:
			for (unsigned i = 0; i < n && e == hipSuccess; i++)
				if (hx_sync_eventfd(&hx_st.dev, q->raw[b * 16 + i], p, q->efd))
					e = hipErrorUnknown;
			break;
		case EQ_KINDS:
			break;
		}
	}
	*out = (thread_cpu_ns() - t0) / ENQ_BATCH;
	/* What the waits and arms wait for, then the gates: the stream drains. */
	if (kind == EQ_WAIT1 || kind == EQ_WAIT16 || kind == EQ_ARM1 || kind == EQ_ARM16) {
		for (unsigned i = 0; i < q->nsems; i++)
			q->pts[i] = p;
		if (drmSyncobjTimelineSignal(hx_st.dev.fd, q->raw, q->pts, q->nsems))
			e = e ? e : hipErrorUnknown;
		(void)!read(q->efd, &cnt, sizeof(cnt));
	}
	__atomic_store_n(&hx_st.mem[M_GATE2], p, __ATOMIC_RELEASE);
	st_open_gate(g);
	if (e != hipSuccess)
		return st_fail("enqueue cost: a batch of %s failed (%s)", enq_names[kind], st_ename(e));
	return true;
}

static void enq_free(struct enq *q)
{
	st_stream_idle(); /* nothing of ours left in the stream */
	for (unsigned i = 0; i < q->nsems; i++) {
		hx_st.Destroy(q->hs[i]);
		hx_sync_destroy(&hx_st.dev, q->raw[i]);
	}
	if (q->efd >= 0)
		close(q->efd);
	for (int k = 0; k < EQ_KINDS; k++)
		free(q->t[k]);
	free(q->sp);
	free(q->wp);
	free(q);
}

/* The floor of a wait, per round: the stream wait plus its arming ioctls
 * (none where the kernel has no eventfd notification). */
static void enq_floor(const struct enq *q, enum enq_kind arm, int64_t *out, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		out[k] = q->t[EQ_WAITVALUE][k] + (hx_st.dev.has_eventfd ? q->t[arm][k] : 0);
}

/* Emits signal_enqueue, signal_enqueue16, wait_enqueue, wait_enqueue16;
 * false if a batch failed (the rest is not measured either). */
static bool measure_enqueue(void)
{
	unsigned n = hx_st.rounds;
	struct enq *q = calloc(1, sizeof(*q));
	uint64_t zero[16] = { 0 };
	int64_t *base = calloc(n, sizeof(*base));
	char hf[160], wf[200];
	bool ok = q && base;

	if (q)
		q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	for (int k = 0; ok && k < EQ_KINDS; k++)
		ok = (q->t[k] = calloc(n, sizeof(int64_t))) != NULL;
	ok = ok && q->efd >= 0 && (q->sp = st_params_array(16, zero)) && (q->wp = st_params_array(16, zero));
	for (; ok && q->nsems < ENQ_SEMS; q->nsems++)
		if (!st_import_one(true, &q->raw[q->nsems], &q->hs[q->nsems]))
			break;
	if (!ok || q->nsems < ENQ_SEMS) {
		not_measured("enqueue", ok ? hx_st.why : "out of memory");
		if (q)
			enq_free(q);
		free(base);
		return true; /* nothing was left in the stream */
	}
	for (unsigned r = 0; r < n + ENQ_WARMUP; r++) {
		st_round_start(hx_st.timeout_ns * 4);
		for (unsigned j = 0; j < EQ_KINDS; j++) {
			enum enq_kind kind = enq_order(r, j);
			int64_t dt = 0;

			/* waits that block their caller would wait for this thread */
			if (hx_st.waits_block && (kind == EQ_WAIT1 || kind == EQ_WAIT16))
				continue;
			if (!hx_st.dev.has_eventfd && (kind == EQ_ARM1 || kind == EQ_ARM16))
				continue;
			if (!enq_batch(q, kind, &dt)) {
				not_measured("enqueue", hx_st.why);
				enq_free(q);
				free(base);
				return false;
			}
			if (r >= ENQ_WARMUP)
				q->t[kind][r - ENQ_WARMUP] = dt;
		}
	}
	snprintf(hf, sizeof(hf), "%s of an empty function", st_host_fn_name());
	/* metric() sorts both arrays: the host-function samples serve both
	 * signal rows as they are, the wait floors are summed per round
	 * (enq_floor) from arrays no metric has sorted. */
	metric("signal_enqueue", q->t[EQ_SIGNAL1], q->t[EQ_HOSTFN], n,
	       "hipSignalExternalSemaphoresAsync call, one timeline semaphore (CPU time, batch "
	       "of 8 on a held stream)", hf);
	metric("signal_enqueue16", q->t[EQ_SIGNAL16], q->t[EQ_HOSTFN], n, "the same, 16 semaphores",
	       hf);
	if (hx_st.waits_block) {
		not_measured("wait_enqueue", "waits block the calling thread");
		not_measured("wait_enqueue16", "waits block the calling thread");
	} else {
		snprintf(wf, sizeof(wf), "hipStreamWaitValue64 call%s",
			 hx_st.dev.has_eventfd ? " plus one DRM_IOCTL_SYNCOBJ_EVENTFD arming ioctl "
					     "per semaphore" :
					     " (no arming ioctl: this kernel has no syncobj eventfd)");
		enq_floor(q, EQ_ARM1, base, n);
		metric("wait_enqueue", q->t[EQ_WAIT1], base, n, "hipWaitExternalSemaphoresAsync "
		       "call, one timeline semaphore (CPU time, batch of 8 on a held stream)", wf);
		enq_floor(q, EQ_ARM16, base, n);
		metric("wait_enqueue16", q->t[EQ_WAIT16], base, n, "the same, 16 semaphores", wf);
	}
	enq_free(q);
	free(base);
	return true;
}

void st_measure(void)
{
	unsigned n = hx_st.rounds;
	int64_t *a = calloc(n, sizeof(*a)), *b = calloc(n, sizeof(*b));
	bool tl_ok = hx_st.have_tl && hx_st.have_bin;

	if (!a || !b || hx_st.stop || !tl_ok) {
		const char *why = hx_st.stop ? "an earlier check hit its deadline" :
				  !tl_ok ? "no semaphores were imported" : "out of memory";
		not_measured("latency", why);
		free(a);
		free(b);
		return;
	}
	/* Signal latency: the stream reaches the signal -> the syncobj is
	 * signaled (seen by a kernel wait), against a stream write-value seen
	 * by the host.  Both start when the host opens a gate the stream is
	 * parked at. */
	for (unsigned k = 0; k < n; k++) {
		st_round_start(hx_st.timeout_ns * 4);
		uint64_t g = ++hx_st.gate, v = ++hx_st.tl_next;
		int64_t t0;

		st_put_gate(g);
		st_sem_signal(&hx_st.etl, &v, 1);
		settle();
		t0 = hx_now_ns();
		st_open_gate(g);
		if (hx_sync_wait_one(&hx_st.dev, hx_st.tl, v, hx_st.deadline))
			goto late;
		a[k] = hx_now_ns() - t0;
		if (!gate_round_ns(&b[k]))
			goto late;
	}
	metric("signal_latency", a, b, n,
	       "stream reaches hipSignalExternalSemaphoresAsync -> syncobj signaled",
	       "stream reaches hipStreamWriteValue64 -> value seen by the host");

	/* Wait latency: the syncobj is signaled -> the stream proceeds, against
	 * a host write releasing hipStreamWaitValue64. */
	if (!hx_st.waits_block) {
		for (unsigned k = 0; k < n; k++) {
			st_round_start(hx_st.timeout_ns * 4);
			uint64_t v = ++hx_st.tl_next, m = ++hx_st.marker;
			int64_t t0;

			st_sem_wait(&hx_st.etl, &v, 1);
			st_put_marker(m);
			settle();
			t0 = hx_now_ns();
			hx_sync_signal(&hx_st.dev, hx_st.tl, v);
			if (!st_marker_reaches(m))
				goto late;
			a[k] = hx_now_ns() - t0;
			if (!gate_round_ns(&b[k]))
				goto late;
		}
		metric("wait_latency", a, b, n,
		       "syncobj signaled -> the stream proceeds past hipWaitExternalSemaphoresAsync",
		       "host write -> the stream proceeds past hipStreamWaitValue64");
	} else {
		not_measured("wait_latency", "waits block the calling thread");
	}

	/* Enqueue cost on the calling thread: a section of its own. */
	if (!measure_enqueue()) {
		hx_st.stop = true;
		free(a);
		free(b);
		return;
	}

	/* When is a signal's fence attached?  What a Vulkan consumer of a
	 * binary semaphore waits for inside vkQueueSubmit.  Against the time
	 * the runtime takes to start a host function on an idle stream. */
	for (unsigned k = 0; k < n; k++) {
		st_round_start(hx_st.timeout_ns * 4);
		uint64_t zero = 0, runs;
		uint32_t h = hx_st.bin;
		int64_t t0;
		int ret;

		hx_sync_reset(&hx_st.dev, hx_st.bin);
		t0 = hx_now_ns();
		st_sem_signal(&hx_st.ebin, &zero, 1);
		ret = drmSyncobjTimelineWait(hx_st.dev.fd, &h, &zero, 1, hx_st.deadline,
					     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE, NULL);
		if (ret)
			goto late;
		a[k] = hx_now_ns() - t0;
		runs = atomic_load(&hx_st.hostfn_runs);
		t0 = hx_now_ns();
		st_host_fn();
		while (atomic_load(&hx_st.hostfn_runs) == runs) {
			if (hx_now_ns() > hx_st.deadline)
				goto late;
			st_spin_pause();
		}
		b[k] = hx_now_ns() - t0;
		if (!st_stream_idle())
			goto late;
	}
	hx_sync_reset(&hx_st.dev, hx_st.bin);
	metric("fence_attach", a, b, n,
	       "hipSignalExternalSemaphoresAsync call -> a fence is attached to the syncobj "
	       "(idle stream; with prior work, also that work's duration)",
	       "enqueue -> an empty host function starts");
	free(a);
	free(b);
	return;
late:
	not_measured("latency", "a sample did not complete within its deadline");
	hx_st.stop = true;
	free(a);
	free(b);
}

