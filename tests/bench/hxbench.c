/* SPDX-License-Identifier: MIT */
/*
 * hxbench: latency, enqueue-cost, stall and scale benchmarks of the shim,
 * each next to a baseline measured in the same process.
 *
 *   hxbench MODE OUTFILE [N]
 *
 * MODE: signal | wait | enqueue | pages | stall | scale | floor (N = number
 * of semaphores; floor: floor.c).
 * Runs inside the test VM (real kernel sync objects) on cpuhip abi6 with the
 * shim preloaded; exits 77 (skipped) where there is no render node.
 *
 * Every result is one line in OUTFILE (and on stdout):
 *   lat   NAME p50_ns p99_ns samples
 *   val   NAME value
 * scripts/bench turns them into the table (tests/bench/report.py).
 *
 * Time bounds: every sampling loop stops at its sample count or when
 * HXBENCH_SECONDS (default 40) have passed since the start, whichever comes
 * first.
 */
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include "floor.h"
#include "hxtest.h"

#ifndef DRM_IOCTL_SYNCOBJ_EVENTFD
struct drm_syncobj_eventfd {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__s32 fd;
	__u32 pad;
};
#define DRM_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct drm_syncobj_eventfd)
#endif

#include <sys/eventfd.h>

#define MAX_SAMPLES 4000

static int drm;
static FILE *out;
static int64_t deadline_ns;

/* ---- results ---------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

struct samples {
	int64_t v[MAX_SAMPLES];
	unsigned n;
};

static void add(struct samples *s, int64_t v)
{
	if (s->n < MAX_SAMPLES)
		s->v[s->n++] = v;
}

static int64_t pct(struct samples *s, double p)
{
	if (s->n == 0)
		return -1;
	qsort(s->v, s->n, sizeof(s->v[0]), cmp_i64);
	unsigned i = (unsigned)(p * (s->n - 1) + 0.5);
	return s->v[i];
}

static void report_lat(const char *name, struct samples *s)
{
	int64_t p50 = pct(s, 0.50), p99 = pct(s, 0.99);
	fprintf(out, "lat %s %" PRId64 " %" PRId64 " %u\n", name, p50, p99, s->n);
	printf("lat %-34s p50 %9.1f us  p99 %9.1f us  (n=%u)\n", name, p50 / 1e3, p99 / 1e3, s->n);
	fflush(out);
}

static void report_val(const char *name, double v)
{
	fprintf(out, "val %s %.6g\n", name, v);
	printf("val %-34s %.6g\n", name, v);
	fflush(out);
}

static bool time_left(void)
{
	return now_ns() < deadline_ns;
}

static int64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_us(unsigned us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- kernel side -------------------------------------------------------- */

static void arm_eventfd(uint32_t h, uint64_t point, int efd)
{
	struct drm_syncobj_eventfd a = { .handle = h, .point = point, .fd = efd };
	CHECK(drmIoctl(drm, DRM_IOCTL_SYNCOBJ_EVENTFD, &a) == 0, "SYNCOBJ_EVENTFD: %s",
	      strerror(errno));
}

/* A timeline syncobj on our DRM file, also imported into the shim. */
struct bsem {
	uint32_t h;
	hipExternalSemaphore_t s;
};

static void bsem_make(struct bsem *b)
{
	b->h = so_create(drm, false);
	int fd = so_export(drm, b->h);
	hipError_t e = import_fd(&b->s, fd, true);
	if (e != hipSuccess)
		FAIL("hipImportExternalSemaphore returned %d (is the shim preloaded?)", (int)e);
}

/* ---- completion hand-off (host function -> main thread) ---------------- */

static sem_t done_sem;
static int64_t t_mark;

static void hostfn_mark(void *arg)
{
	(void)arg;
	t_mark = now_ns();
	sem_post(&done_sem);
}

static void hostfn_t0(void *arg)
{
	*(int64_t *)arg = now_ns();
}

static void hostfn_noop(void *arg)
{
	(void)arg;
}

struct raw_signal {
	uint32_t h;
	uint64_t point;
};

/* What an application would write by hand: the signal ioctl in a host
 * function (the runtime primitive + the bare kernel call). */
static void hostfn_raw_signal(void *arg)
{
	struct raw_signal *r = arg;
	so_signal(drm, r->h, r->point);
}

static void wait_done(void)
{
	while (sem_wait(&done_sem) && errno == EINTR)
		;
}

/* ---- helper thread: blocks on an eventfd, then does an action ---------- */

enum helper_action { HELP_STAMP, HELP_RELEASE_SLOT };

static struct {
	int efd;
	enum helper_action action;
	volatile uint64_t *slot;
	uint64_t value;
	int64_t t_woke;
	sem_t ready, woke;
	bool quit;
} hp;

static void *helper_main(void *arg)
{
	(void)arg;
	for (;;) {
		uint64_t cnt;
		sem_wait(&hp.ready);
		if (hp.quit)
			return NULL;
		while (read(hp.efd, &cnt, sizeof(cnt)) < 0 && errno == EINTR)
			;
		if (hp.action == HELP_RELEASE_SLOT)
			__atomic_store_n(hp.slot, hp.value, __ATOMIC_RELEASE);
		hp.t_woke = now_ns();
		sem_post(&hp.woke);
	}
}

static pthread_t helper_thread;

static void helper_start(void)
{
	hp.efd = eventfd(0, EFD_CLOEXEC); /* blocking */
	CHECK(hp.efd >= 0, "eventfd: %s", strerror(errno));
	sem_init(&hp.ready, 0, 0);
	sem_init(&hp.woke, 0, 0);
	pthread_create(&helper_thread, NULL, helper_main, NULL);
}

static void helper_stop(void)
{
	hp.quit = true;
	sem_post(&hp.ready);
	pthread_join(helper_thread, NULL);
	close(hp.efd);
}

/* Arms the helper on (h, point) and lets it block before returning. */
static void helper_arm(uint32_t h, uint64_t point, enum helper_action act,
		       volatile uint64_t *slot, uint64_t value)
{
	hp.action = act;
	hp.slot = slot;
	hp.value = value;
	arm_eventfd(h, point, hp.efd);
	sem_post(&hp.ready);
}

static void helper_join(void)
{
	while (sem_wait(&hp.woke) && errno == EINTR)
		;
}

/* ---- signal latency ---------------------------------------------------- */

static void bench_signal(unsigned nsamples)
{
	struct samples *kern = calloc(1, sizeof(*kern)), *prim = calloc(1, sizeof(*prim)),
		       *shim = calloc(1, sizeof(*shim));
	uint32_t hk = so_create(drm, false), hp_raw = so_create(drm, false);
	struct bsem bs;
	hipStream_t st;
	int64_t t0;

	bsem_make(&bs);
	HIPCHECK(hipStreamCreate(&st));
	helper_start();
	for (uint64_t p = 1; p <= nsamples && time_left(); p++) {
		/* bare kernel path: signal ioctl -> eventfd wake in another thread */
		helper_arm(hk, p, HELP_STAMP, NULL, 0);
		sleep_us(300);
		t0 = now_ns();
		so_signal(drm, hk, p);
		helper_join();
		if (p > 3)
			add(kern, hp.t_woke - t0);

		/* primitive + kernel path: a host function doing the ioctl */
		struct raw_signal rs = { hp_raw, p };
		helper_arm(hp_raw, p, HELP_STAMP, NULL, 0);
		sleep_us(300);
		HIPCHECK(hipLaunchHostFunc(st, hostfn_t0, &t0));
		HIPCHECK(hipLaunchHostFunc(st, hostfn_raw_signal, &rs));
		helper_join();
		HIPCHECK(hipStreamSynchronize(st));
		if (p > 3)
			add(prim, hp.t_woke - t0);

		/* the shim: hipSignalExternalSemaphoresAsync after the same
		 * prior operation */
		helper_arm(bs.h, p, HELP_STAMP, NULL, 0);
		sleep_us(300);
		HIPCHECK(hipLaunchHostFunc(st, hostfn_t0, &t0));
		HIPCHECK(signal1(bs.s, p, st));
		helper_join();
		HIPCHECK(hipStreamSynchronize(st));
		if (p > 3)
			add(shim, hp.t_woke - t0);
	}
	helper_stop();
	report_lat("signal.kernel", kern);
	report_lat("signal.primitive", prim);
	report_lat("signal.shim", shim);
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipDestroyExternalSemaphore(bs.s));
}

/* ---- wait latency ------------------------------------------------------ */

static void bench_wait(unsigned nsamples)
{
	struct samples *kern = calloc(1, sizeof(*kern)), *rt = calloc(1, sizeof(*rt)),
		       *prim = calloc(1, sizeof(*prim)), *shim = calloc(1, sizeof(*shim));
	uint32_t hk = so_create(drm, false), hb = so_create(drm, false);
	volatile uint64_t *slot = pinned(2 * sizeof(uint64_t));
	struct bsem bs;
	hipStream_t st;
	int64_t t0;

	bsem_make(&bs);
	HIPCHECK(hipStreamCreate(&st));
	helper_start();
	for (uint64_t p = 1; p <= nsamples && time_left(); p++) {
		/* bare kernel path */
		helper_arm(hk, p, HELP_STAMP, NULL, 0);
		sleep_us(300);
		t0 = now_ns();
		so_signal(drm, hk, p);
		helper_join();
		if (p > 3)
			add(kern, hp.t_woke - t0);

		/* the runtime's wait-value release alone: a host store */
		HIPCHECK(hipStreamWaitValue64(st, (void *)&slot[1], p, hipStreamWaitValueGte, ~0ull));
		HIPCHECK(hipLaunchHostFunc(st, hostfn_mark, NULL));
		sleep_us(1000);
		t0 = now_ns();
		__atomic_store_n(&slot[1], p, __ATOMIC_RELEASE);
		wait_done();
		if (p > 3)
			add(rt, t_mark - t0);

		/* baseline: kernel path + wait-value release by a thread woken
		 * by the eventfd */
		HIPCHECK(hipStreamWaitValue64(st, (void *)&slot[0], p, hipStreamWaitValueGte, ~0ull));
		HIPCHECK(hipLaunchHostFunc(st, hostfn_mark, NULL));
		helper_arm(hb, p, HELP_RELEASE_SLOT, &slot[0], p);
		sleep_us(1000);
		t0 = now_ns();
		so_signal(drm, hb, p);
		wait_done();
		helper_join();
		if (p > 3)
			add(prim, t_mark - t0);

		/* the shim */
		HIPCHECK(wait1(bs.s, p, st));
		HIPCHECK(hipLaunchHostFunc(st, hostfn_mark, NULL));
		sleep_us(1000);
		t0 = now_ns();
		so_signal(drm, bs.h, p);
		wait_done();
		if (p > 3)
			add(shim, t_mark - t0);
	}
	HIPCHECK(hipStreamSynchronize(st));
	helper_stop();
	report_lat("wait.kernel", kern);
	report_lat("wait.runtime", rt);
	report_lat("wait.primitive", prim);
	report_lat("wait.shim", shim);
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipDestroyExternalSemaphore(bs.s));
}

/* ---- enqueue cost ------------------------------------------------------ */

#define BATCH 8
/* The semaphores of one batch: 16 per call, a distinct set per call. */
#define BATCH_SEMS (16 * BATCH)

/* What bench_enqueue measures: the shim's calls, and the primitives each
 * is judged against. */
enum enq_kind {
	ENQ_SIGNAL1,
	ENQ_SIGNAL16,
	ENQ_WAIT1,
	ENQ_WAIT16,
	ENQ_HOSTFUNC,
	ENQ_WAITVALUE,
	ENQ_ARM1,
	ENQ_ARM16,
	ENQ_KINDS
};

static const char *const enq_names[ENQ_KINDS] = {
	[ENQ_SIGNAL1] = "enqueue.signal1",
	[ENQ_SIGNAL16] = "enqueue.signal16",
	[ENQ_WAIT1] = "enqueue.wait1",
	[ENQ_WAIT16] = "enqueue.wait16",
	[ENQ_HOSTFUNC] = "enqueue.launchhostfunc",
	[ENQ_WAITVALUE] = "enqueue.waitvalue64",
	[ENQ_ARM1] = "enqueue.arm1",
	[ENQ_ARM16] = "enqueue.arm16",
};

struct enq {
	hipExternalSemaphore_t hs[BATCH_SEMS];
	uint32_t raw[BATCH_SEMS];
	uint64_t pts[BATCH_SEMS];
	test_signal_params sp[16];
	test_wait_params wp[16];
	volatile uint64_t *gate; /* [0] holds the stream, [1] the timed stream waits */
	int efd;
	hipStream_t st;
	uint64_t p;
};

/*
 * One batch of BATCH calls of `kind`; returns the CPU time per call.
 * Every kind runs the same sequence around its batch: the stream is idle
 * (hipStreamSynchronize), then held at a gate as a busy GPU holds it, so
 * that no callback runs and the CPU runtime's worker sleeps while we
 * measure; after the batch the gate opens and the stream drains.  A call
 * measured right after another batch, or after a run of ioctls, finds
 * the translations of its pages still there, one measured after a
 * synchronisation does not (docs/bench.md: pages): all kinds are
 * measured after one.  What the batch before did still matters (which
 * pages, which threads it left busy), so every kind follows every other
 * equally often (enq_order).
 */
static int64_t enq_batch(struct enq *q, enum enq_kind kind)
{
	unsigned n = (kind == ENQ_SIGNAL16 || kind == ENQ_WAIT16 || kind == ENQ_ARM16) ? 16 : 1;
	uint64_t p = ++q->p;
	int64_t c0, dt;

	HIPCHECK(hipStreamSynchronize(q->st));
	HIPCHECK(hipStreamWaitValue64(q->st, (void *)q->gate, p, hipStreamWaitValueGte, ~0ull));
	for (unsigned i = 0; i < n; i++) {
		q->sp[i].params.fence.value = p;
		q->wp[i].params.fence.value = p; /* a point not yet signaled */
	}
	c0 = cpu_ns();
	for (unsigned b = 0; b < BATCH; b++) {
		const hipExternalSemaphore_t *hs = &q->hs[b * 16];

		switch (kind) {
		case ENQ_SIGNAL1:
		case ENQ_SIGNAL16:
			HIPCHECK(hipSignalExternalSemaphoresAsync(
				hs, (const hipExternalSemaphoreSignalParams *)q->sp, n, q->st));
			break;
		case ENQ_WAIT1:
		case ENQ_WAIT16:
			HIPCHECK(hipWaitExternalSemaphoresAsync(
				hs, (const hipExternalSemaphoreWaitParams *)q->wp, n, q->st));
			break;
		case ENQ_HOSTFUNC:
			HIPCHECK(hipLaunchHostFunc(q->st, hostfn_noop, NULL));
			break;
		case ENQ_WAITVALUE:
			HIPCHECK(hipStreamWaitValue64(q->st, (void *)&q->gate[1], p,
						      hipStreamWaitValueGte, ~0ull));
			break;
		case ENQ_ARM1:
		case ENQ_ARM16:
			/* the kernel floor of a wait: one eventfd arm per
			 * semaphore, for the point the wait would use; it
			 * fires after the batch, as the wait's does */
			for (unsigned i = 0; i < n; i++)
				arm_eventfd(q->raw[b * 16 + i], p, q->efd);
			break;
		case ENQ_KINDS:
			break;
		}
	}
	dt = (cpu_ns() - c0) / BATCH;
	if (kind == ENQ_WAIT1 || kind == ENQ_WAIT16 || kind == ENQ_ARM1 || kind == ENQ_ARM16) {
		uint64_t cnt;

		for (int i = 0; i < BATCH_SEMS; i++)
			q->pts[i] = p;
		CHECK(drmSyncobjTimelineSignal(drm, q->raw, q->pts, BATCH_SEMS) == 0, "signal: %s",
		      strerror(errno));
		(void)!read(q->efd, &cnt, sizeof(cnt));
	}
	__atomic_store_n(&q->gate[1], p, __ATOMIC_RELEASE);
	__atomic_store_n(&q->gate[0], p, __ATOMIC_RELEASE);
	HIPCHECK(hipStreamSynchronize(q->st));
	return dt;
}

/*
 * The kind measured at position `pos` of round `round`.  The rounds form
 * a balanced Latin square (a Williams design, for an even number of
 * kinds): the first round is 0, 1, n-1, 2, n-2, ..., each later one adds
 * one to every kind, so that over n rounds each kind comes right after
 * every other kind exactly once.  Merely starting each round at another
 * kind would leave most kinds behind the same predecessor every time.
 */
_Static_assert(ENQ_KINDS % 2 == 0, "a Williams design of this form needs an even number of kinds");
static enum enq_kind enq_order(unsigned round, unsigned pos)
{
	unsigned first = pos == 0 ? 0 : pos % 2 ? (pos + 1) / 2 : ENQ_KINDS - pos / 2;

	return (enum enq_kind)((first + round) % ENQ_KINDS);
}

static void bench_enqueue(unsigned nsamples)
{
	struct enq *q = calloc(1, sizeof(*q));
	struct bsem *bs = calloc(BATCH_SEMS, sizeof(*bs));
	struct samples *s[ENQ_KINDS];

	for (int k = 0; k < ENQ_KINDS; k++)
		s[k] = calloc(1, sizeof(struct samples));
	for (int i = 0; i < BATCH_SEMS; i++) {
		bsem_make(&bs[i]);
		q->hs[i] = bs[i].s;
		q->raw[i] = bs[i].h;
	}
	q->gate = pinned(2 * sizeof(uint64_t));
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	CHECK(q->efd >= 0, "eventfd: %s", strerror(errno));
	HIPCHECK(hipStreamCreate(&q->st));

	/* The first rounds warm up (first eventfds, slot chunk, ...). */
	for (unsigned k = 0; k < nsamples + 4 && time_left(); k++)
		for (unsigned j = 0; j < ENQ_KINDS; j++) {
			enum enq_kind kind = enq_order(k, j);
			int64_t dt = enq_batch(q, kind);

			if (k >= 4)
				add(s[kind], dt);
		}
	for (int k = 0; k < ENQ_KINDS; k++)
		report_lat(enq_names[k], s[k]);
	HIPCHECK(hipStreamDestroy(q->st));
	for (int i = 0; i < BATCH_SEMS; i++)
		HIPCHECK(hipDestroyExternalSemaphore(bs[i].s));
	close(q->efd);
	free(bs);
	free(q);
	for (int k = 0; k < ENQ_KINDS; k++)
		free(s[k]);
}

/* ---- what a call costs after a context switch --------------------------- */

/*
 * The same batch of signals three times on a held stream: first right
 * after hipStreamSynchronize (the thread slept), then again at once, then
 * after a 300 us sleep; hipLaunchHostFunc alike.  Under the emulator a
 * batch after a sleep costs what the first does: the call pays for the
 * pages it touches, not only for its instructions (shim/hot.h).
 */
static void bench_pages(unsigned nsamples)
{
	struct bsem *bs = calloc(BATCH_SEMS, sizeof(*bs));
	hipExternalSemaphore_t hs[BATCH_SEMS];
	test_signal_params sp[16];
	volatile uint64_t *gate = pinned(sizeof(uint64_t));
	static const char *const when[3] = { "first", "again", "slept" };
	struct samples *s_sig[2][3], *s_hf[3];
	const unsigned ns[2] = { 1, 16 };
	hipStream_t st;
	char name[64];

	for (int w = 0; w < 3; w++) {
		s_hf[w] = calloc(1, sizeof(struct samples));
		for (int v = 0; v < 2; v++)
			s_sig[v][w] = calloc(1, sizeof(struct samples));
	}
	for (int i = 0; i < BATCH_SEMS; i++) {
		bsem_make(&bs[i]);
		hs[i] = bs[i].s;
	}
	memset(sp, 0, sizeof(sp));
	HIPCHECK(hipStreamCreate(&st));
	uint64_t p = 0;
	for (unsigned k = 0; k < nsamples + 4 && time_left(); k++) {
		bool keep = k >= 4;

		for (int v = 0; v < 3; v++) { /* 1 semaphore, 16, hipLaunchHostFunc */
			p++;
			HIPCHECK(hipStreamWaitValue64(st, (void *)gate, p, hipStreamWaitValueGte, ~0ull));
			for (unsigned i = 0; i < 16; i++)
				sp[i].params.fence.value = p;
			for (int w = 0; w < 3; w++) {
				int64_t c0;

				if (w == 2)
					sleep_us(300);
				c0 = cpu_ns();
				for (unsigned b = 0; b < BATCH; b++) {
					if (v == 2)
						HIPCHECK(hipLaunchHostFunc(st, hostfn_noop, NULL));
					else
						HIPCHECK(hipSignalExternalSemaphoresAsync(
							&hs[b * 16],
							(const hipExternalSemaphoreSignalParams *)sp,
							ns[v], st));
				}
				if (keep)
					add(v == 2 ? s_hf[w] : s_sig[v][w], (cpu_ns() - c0) / BATCH);
			}
			__atomic_store_n(gate, p, __ATOMIC_RELEASE);
			HIPCHECK(hipStreamSynchronize(st));
		}
	}
	for (int w = 0; w < 3; w++) {
		for (int v = 0; v < 2; v++) {
			snprintf(name, sizeof(name), "pages.signal%u.%s", ns[v], when[w]);
			report_lat(name, s_sig[v][w]);
		}
		snprintf(name, sizeof(name), "pages.launchhostfunc.%s", when[w]);
		report_lat(name, s_hf[w]);
	}
	HIPCHECK(hipStreamDestroy(st));
	for (int i = 0; i < BATCH_SEMS; i++)
		HIPCHECK(hipDestroyExternalSemaphore(bs[i].s));
}

/* ---- stream stall ------------------------------------------------------ */

static void bench_stall(unsigned nsamples)
{
	const size_t work = 256 * 1024;
	struct samples *s[3];
	static const char *const names[3] = { "stall.plain", "stall.hostfunc", "stall.shim" };
	struct bsem bs;
	hipStream_t st;
	hipEvent_t e0, e1;
	void *buf;

	for (int i = 0; i < 3; i++)
		s[i] = calloc(1, sizeof(struct samples));
	bsem_make(&bs);
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipEventCreate(&e0));
	HIPCHECK(hipEventCreate(&e1));
	HIPCHECK(hipMalloc(&buf, work));

	uint64_t p = 0;
	for (unsigned k = 0; k < nsamples + 4 && time_left(); k++) {
		for (int v = 0; v < 3; v++) {
			float ms = 0;
			HIPCHECK(hipEventRecord(e0, st));
			HIPCHECK(hipMemsetAsync(buf, (int)k, work, st));
			if (v == 1)
				HIPCHECK(hipLaunchHostFunc(st, hostfn_noop, NULL));
			else if (v == 2)
				HIPCHECK(signal1(bs.s, ++p, st));
			HIPCHECK(hipMemsetAsync(buf, (int)k + 1, work, st));
			HIPCHECK(hipEventRecord(e1, st));
			HIPCHECK(hipEventSynchronize(e1));
			HIPCHECK(hipEventElapsedTime(&ms, e0, e1));
			if (k >= 4)
				add(s[v], (int64_t)(ms * 1e6));
		}
	}
	for (int i = 0; i < 3; i++)
		report_lat(names[i], s[i]);
	HIPCHECK(hipFree(buf));
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipDestroyExternalSemaphore(bs.s));
}

/* ---- scale ------------------------------------------------------------- */

#define NSTREAMS 64

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static long slab_kib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* Threads of this process: all, and those the shim named hipextsem-*. */
static void count_threads(int *all, int *shim)
{
	*all = list_threads("hipextsem", NULL, 0, shim);
}

/* What both halves of the scale benchmark share.  The shim's semaphores are
 * imported for the whole run; each half queues its own pending waits. */
struct scale {
	unsigned n;
	struct bsem *bs;
	uint32_t *raw;
	uint64_t *pts;
	int64_t *t1;
	volatile uint64_t *slots;
	hipStream_t st[NSTREAMS];
	struct samples *shim, *prim;
	uint64_t point;     /* last timeline point used, by either half */
	uint64_t round, gen; /* rounds so far: the shim's, the baseline's */
	/* taken while the shim's first round is pending */
	size_t h2;
	long r2, k2;
	int thr_all, thr_shim;
	/* heap taken by the first round of wait-values */
	size_t hp0, hp1;
	hipError_t werr;
	unsigned nfail, lost;
};

/* Host function queued behind each wait of the scale benchmark: stamps its
 * time and wakes the measuring thread, which sleeps meanwhile (as in the
 * other latency benchmarks) instead of polling for the stamp. */
static sem_t scale_sem;

static void hostfn_scale(void *arg)
{
	__atomic_store_n((int64_t *)arg, now_ns(), __ATOMIC_RELEASE);
	sem_post(&scale_sem);
}

/* Waits (2 s at most) for the host function behind wait i to stamp t1[i]. */
static bool scale_stamped(struct scale *c, unsigned i, int64_t t0)
{
	struct timespec dl;
	int64_t end = t0 + 2000000000;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 2;
	while (!__atomic_load_n(&c->t1[i], __ATOMIC_ACQUIRE) && now_ns() < end)
		if (sem_timedwait(&scale_sem, &dl) && errno == ETIMEDOUT)
			break;
	return __atomic_load_n(&c->t1[i], __ATOMIC_ACQUIRE) != 0;
}

/* Takes back the wake-ups of the host functions that were not measured. */
static void scale_drain(void)
{
	while (sem_trywait(&scale_sem) == 0)
		;
}

/* One round of the shim: one wait (on the next point) plus a time-stamping
 * host function per semaphore, spread over the streams; the first `want`
 * semaphores are signaled one at a time (each is then at the head of its
 * stream's queue), the rest at once.  Returns the samples taken. */
static unsigned scale_shim_round(struct scale *c, unsigned want)
{
	unsigned n = c->n;
	uint64_t point = ++c->point;
	c->round++;
	for (unsigned i = 0; i < n; i++) {
		hipError_t e = wait1(c->bs[i].s, point, c->st[i % NSTREAMS]);
		if (e != hipSuccess && !c->nfail++)
			c->werr = e;
		HIPCHECK(hipLaunchHostFunc(c->st[i % NSTREAMS], hostfn_scale, &c->t1[i]));
	}
	if (c->round == 1) {
		c->h2 = heap_used();
		c->r2 = rss_kib();
		c->k2 = slab_kib();
		count_threads(&c->thr_all, &c->thr_shim);
	}
	unsigned i;
	for (i = 0; i < n && i < want && time_left(); i++) {
		sleep_us(1000);
		c->t1[i] = 0;
		int64_t t0 = now_ns();
		so_signal(drm, c->raw[i], point);
		if (scale_stamped(c, i, t0))
			add(c->shim, c->t1[i] - t0);
		else
			c->lost++;
	}
	for (unsigned j = i; j < n; j++)
		c->pts[j] = point;
	if (i < n)
		CHECK(drmSyncobjTimelineSignal(drm, c->raw + i, c->pts + i, n - i) == 0,
		      "bulk signal: %s", strerror(errno));
	for (int s = 0; s < NSTREAMS; s++)
		HIPCHECK(hipStreamSynchronize(c->st[s]));
	scale_drain();
	return i;
}

/* One round of the baseline: the runtime primitive with N pending
 * wait-values, the signaled one released by a thread woken by its eventfd
 * on the next point of the same syncobj.  The syncobjs not signaled in this
 * round stay below that point; the shim's next round waits above it. */
static unsigned scale_prim_round(struct scale *c, unsigned want)
{
	unsigned n = c->n;
	uint64_t point = ++c->point;
	bool first = ++c->gen == 1;
	if (first)
		c->hp0 = heap_used();
	for (unsigned i = 0; i < n; i++) {
		HIPCHECK(hipStreamWaitValue64(c->st[i % NSTREAMS], (void *)&c->slots[i], c->gen,
					      hipStreamWaitValueGte, ~0ull));
		HIPCHECK(hipLaunchHostFunc(c->st[i % NSTREAMS], hostfn_scale, &c->t1[i]));
	}
	if (first)
		c->hp1 = heap_used();
	unsigned i;
	for (i = 0; i < n && i < want && time_left(); i++) {
		c->t1[i] = 0;
		helper_arm(c->raw[i], point, HELP_RELEASE_SLOT, &c->slots[i], c->gen);
		sleep_us(1000);
		int64_t t0 = now_ns();
		so_signal(drm, c->raw[i], point);
		helper_join();
		if (scale_stamped(c, i, t0))
			add(c->prim, c->t1[i] - t0);
	}
	for (unsigned j = i; j < n; j++)
		__atomic_store_n(&c->slots[j], c->gen, __ATOMIC_RELEASE);
	for (int s = 0; s < NSTREAMS; s++)
		HIPCHECK(hipStreamSynchronize(c->st[s]));
	scale_drain();
	return i;
}

/* Samples per stretch of one kind: the shim and the baseline take turns in
 * stretches of this many, in the order shim, baseline, baseline, shim, ...,
 * so that a drift of the machine over the run weighs on both alike.  (They
 * used to run one after the other, each in its half of the time budget.) */
#define SCALE_STRETCH 25

static void bench_scale(unsigned n, unsigned nsamples)
{
	struct scale *c = calloc(1, sizeof(*c));
	struct rlimit rl;
	int thr_all0, thr_shim0;
	char name[64];

	c->n = n;
	c->bs = calloc(n, sizeof(*c->bs));
	c->raw = calloc(n, sizeof(*c->raw));
	c->pts = calloc(n, sizeof(*c->pts));
	c->t1 = calloc(n, sizeof(*c->t1));
	c->slots = pinned(n * sizeof(uint64_t));
	c->shim = calloc(1, sizeof(*c->shim));
	c->prim = calloc(1, sizeof(*c->prim));
	if (nsamples > 200)
		nsamples = 200;

	getrlimit(RLIMIT_NOFILE, &rl);
	report_val("scale.nofile_soft_before", (double)rl.rlim_cur);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	report_val("scale.nofile_soft", (double)rl.rlim_cur);
	report_val("scale.nofile_hard", (double)rl.rlim_max);

	for (int i = 0; i < NSTREAMS; i++)
		HIPCHECK(hipStreamCreate(&c->st[i]));
	/* Warm-up: device open, waiter thread, first slot chunk. */
	{
		struct bsem w;
		bsem_make(&w);
		HIPCHECK(wait1(w.s, 1, c->st[0]));
		so_signal(drm, w.h, 1);
		HIPCHECK(hipStreamSynchronize(c->st[0]));
		HIPCHECK(hipDestroyExternalSemaphore(w.s));
	}
	count_threads(&thr_all0, &thr_shim0);
	malloc_trim(0);

	size_t h0 = heap_used();
	long r0 = rss_kib(), k0 = slab_kib();
	for (unsigned i = 0; i < n; i++) {
		bsem_make(&c->bs[i]);
		c->raw[i] = c->bs[i].h;
	}
	size_t h1 = heap_used();
	long k1 = slab_kib();

	/* taken[0]: shim signals tried (lost ones too), taken[1]: baseline */
	unsigned taken[2] = { 0, 0 };
	sem_init(&scale_sem, 0, 0);
	helper_start();
	for (unsigned k = 0; (taken[0] < nsamples || taken[1] < nsamples) && time_left(); k++) {
		unsigned who = (k % 4 == 0 || k % 4 == 3) ? 0 : 1;
		unsigned stop = taken[who] + SCALE_STRETCH;
		if (stop > nsamples)
			stop = nsamples;
		while (taken[who] < stop && time_left())
			taken[who] += who == 0 ? scale_shim_round(c, stop - taken[who])
					       : scale_prim_round(c, stop - taken[who]);
	}
	helper_stop();

#define NAMED(suffix) (snprintf(name, sizeof(name), "scale.%u.%s", n, suffix), name)
	report_lat(NAMED("shim"), c->shim);
	report_lat(NAMED("primitive"), c->prim);
	report_val(NAMED("threads_shim"), c->thr_shim);
	report_val(NAMED("threads_shim_idle"), thr_shim0);
	report_val(NAMED("threads_all"), c->thr_all);
	report_val(NAMED("threads_all_idle"), thr_all0);
	report_val(NAMED("heap_import_per_sem"), (double)(h1 - h0) / n);
	report_val(NAMED("heap_wait_per_sem"), (double)(c->h2 - h1) / n);
	report_val(NAMED("heap_primitive_per_wait"), (double)(c->hp1 - c->hp0) / n);
	report_val(NAMED("heap_shim_per_sem"),
		   ((double)(c->h2 - h0) - (double)(c->hp1 - c->hp0)) / n);
	report_val(NAMED("rss_per_sem"), (double)(c->r2 - r0) * 1024 / n);
	report_val(NAMED("slab_import_per_sem"), (double)(k1 - k0) * 1024 / n);
	report_val(NAMED("slab_wait_per_sem"), (double)(c->k2 - k1) * 1024 / n);
	report_val(NAMED("wait_failures"), c->nfail);
	report_val(NAMED("lost_samples"), c->lost);
	report_val(NAMED("wait_first_error"), c->werr);
#undef NAMED

	for (unsigned i = 0; i < n; i++)
		HIPCHECK(hipDestroyExternalSemaphore(c->bs[i].s));
	for (int i = 0; i < NSTREAMS; i++)
		HIPCHECK(hipStreamDestroy(c->st[i]));
}

int main(int argc, char **argv)
{
	const char *node = getenv("HIPEXTSEM_RENDER_NODE");
	long secs = getenv("HXBENCH_SECONDS") ? atol(getenv("HXBENCH_SECONDS")) : 40;
	unsigned nsamples = getenv("HXBENCH_SAMPLES") ? (unsigned)atol(getenv("HXBENCH_SAMPLES")) : 300;

	if (argc < 3) {
		fprintf(stderr, "usage: hxbench signal|wait|enqueue|pages|stall|scale|floor OUTFILE [N]\n");
		return 2;
	}
	if (access(node ? node : "/dev/dri/renderD128", R_OK | W_OK) != 0) {
		fprintf(stderr, "hxbench: no DRM render node: run it inside the VM (scripts/bench)\n");
		return 77;
	}
	if (strcmp(argv[1], "floor") == 0) /* the kernel alone, no runtime */
		return hxbench_floor(argc - 1, argv + 1);
	if (!shim_loaded())
		FAIL("the shim is not preloaded");
	if (nsamples > MAX_SAMPLES)
		nsamples = MAX_SAMPLES;
	deadline_ns = now_ns() + secs * 1000000000LL;
	out = fopen(argv[2], "a");
	CHECK(out != NULL, "cannot open %s: %s", argv[2], strerror(errno));
	sem_init(&done_sem, 0, 0);
	drm = drm_open();
	HIPCHECK(hipInit(0));

	const char *mode = argv[1];
	const char *tag = getenv("HXBENCH_TAG");
	if (tag)
		fprintf(out, "# %s %s\n", mode, tag);
	if (strcmp(mode, "signal") == 0)
		bench_signal(nsamples);
	else if (strcmp(mode, "wait") == 0)
		bench_wait(nsamples);
	else if (strcmp(mode, "enqueue") == 0)
		bench_enqueue(nsamples);
	else if (strcmp(mode, "stall") == 0)
		bench_stall(nsamples);
	else if (strcmp(mode, "pages") == 0)
		bench_pages(nsamples);
	else if (strcmp(mode, "scale") == 0 && argc > 3)
		bench_scale((unsigned)atol(argv[3]), nsamples);
	else
		FAIL("unknown mode %s", mode);
	if (now_ns() >= deadline_ns)
		report_val("time_budget_hit", 1);
	fclose(out);
	return 0;
}
