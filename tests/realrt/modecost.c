/* What a signal costs the application in the signal mode this process
 * runs in (HIPEXTSEM_SIGNAL_MODE, set by the caller), on a real HIP
 * runtime: run through tests/realrt/with-device with the shim preloaded,
 * alternately in each mode (tests/realrt/run-modecost).  Per round it
 * prints one row (ROW|...) of medians:
 *
 *  - enqueue: wall time of one call on a stream held at a gate, for the
 *    shim's 1-semaphore signal and for the runtime's host-function call
 *    (hipLaunchHostFunc, hipStreamAddCallback on 5.2), batches of each in
 *    turn;
 *  - stream time: the time the stream takes from the first to the last of
 *    K stream writes, and the same with a signal after each write; the
 *    difference per signal (K - 1 of them in between) is what a signal
 *    holds the application's queue for;
 *  - hand-off: on an idle stream, from the signal's call to the return
 *    of a kernel wait for its point; behind work, from the opening of the
 *    gate the signal waited behind for HELD_MS to that return; each also
 *    while another stream's host function keeps the runtime's callback
 *    thread busy for BUSY_MS;
 *
 * and at the end one row with the poll thread's CPU time per signal and
 * the wake-ups it made in IDLE_MS with nothing pending (both read from
 * /proc and the thread's CPU clock, not from the shim; -1 when the
 * process has no poll thread).  The fake device's clock is not a GPU's:
 * only the ratios between the modes, measured in one VM boot, mean
 * something (docs/bench.md). */
#include <hip/hip_runtime_api.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "rt_check.h"

#define ROUNDS 3
/* Enqueue: calls per batch, 4 batches of each kind per round; stream
 * time: writes per drain.  5.2's hipStreamAddCallback blocks its caller
 * once about a dozen callbacks wait behind a held stream, so there both
 * are 6 (set in main). */
#define BATCH_MAX 16
static int batch = BATCH_MAX, K = BATCH_MAX;
#define HANDOFFS 5 /* hand-off samples per round and kind */
#define BUSY_MS 5
#define HELD_MS 2
#define IDLE_MS 500

static int drm;
static uint32_t handle;
static hipExternalSemaphore_t sem;
static hipExternalSemaphoreSignalParams sp;
static uint64_t point;
static volatile uint64_t *mem; /* [0] gate, [1..K] stream writes */
static uint64_t gate_value;
static uint64_t signals_made;

typedef hipError_t (*host_fn_t)(hipStream_t, hipHostFn_t, void *);
static host_fn_t launch_host_func;

static void host_fn(void *p) { (void)p; }
static void cb_fn(hipStream_t s, hipError_t e, void *p) { (void)s; (void)e; host_fn(p); }

static atomic_int busy_started;
static void busy_fn(void *p)
{
	int64_t end = now_ns() + BUSY_MS * 1000000LL;

	(void)p;
	atomic_store(&busy_started, 1);
	while (now_ns() < end)
		usleep(200);
}
static void busy_cb(hipStream_t s, hipError_t e, void *p) { (void)s; (void)e; busy_fn(p); }

static void host_call(hipStream_t st, int busy)
{
	if (launch_host_func)
		HIPOK(launch_host_func(st, busy ? busy_fn : host_fn, NULL));
	else
		HIPOK(hipStreamAddCallback(st, busy ? busy_cb : cb_fn, NULL, 0));
}

static uint64_t signal_next(hipStream_t st)
{
	sp.params.fence.value = ++point;
	HIPOK(hipSignalExternalSemaphoresAsync(&sem, &sp, 1, st));
	signals_made++;
	return point;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int64_t med(int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp);
	return v[n / 2];
}

/* Holds the stream at the gate: it runs nothing queued after this until
 * open_gate(). */
static void hold(hipStream_t st)
{
	HIPOK(hipStreamSynchronize(st));
	gate_value++;
	HIPOK(hipStreamWaitValue64(st, (void *)&mem[0], gate_value, hipStreamWaitValueGte, ~0ULL));
}

static int64_t open_gate(void)
{
	int64_t t = now_ns();

	__atomic_store_n(&mem[0], gate_value, __ATOMIC_RELEASE);
	return t;
}

static void kernel_wait(uint64_t pt)
{
	uint64_t p = pt;

	if (drmSyncobjTimelineWait(drm, &handle, &p, 1, INT64_MAX,
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL) != 0)
		FAIL("timeline wait for %llu: %s", (unsigned long long)pt, strerror(errno));
}

/* Median wall time of one call, signal (1) or host function (0). */
static void enqueue_round(hipStream_t st, int64_t *hf, int64_t *sig)
{
	static int64_t t[2][4 * BATCH_MAX];
	int n[2] = { 0, 0 };

	for (int b = 0; b < 8; b++) {
		int kind = (b + b / 4) % 2; /* 0101 1010: each kind first as often */

		hold(st);
		for (int i = 0; i < batch; i++) {
			int64_t t0 = now_ns();

			if (kind)
				signal_next(st);
			else
				host_call(st, 0);
			t[kind][n[kind]++] = now_ns() - t0;
		}
		open_gate();
		HIPOK(hipStreamSynchronize(st));
	}
	kernel_wait(point);
	*hf = med(t[0], n[0]);
	*sig = med(t[1], n[1]);
}

/* Watches mem[i] until it holds v; returns when it saw it. */
static int64_t landed(int i, uint64_t v)
{
	while (__atomic_load_n(&mem[i], __ATOMIC_ACQUIRE) != v)
		sched_yield();
	return now_ns();
}

/* The time the stream takes from its first write landing to its last (K
 * writes, with a signal after each write or not), watched from this
 * thread: the fake device's command processor notices the gate after a
 * back-off of up to milliseconds, which would swamp what is measured. */
static int64_t drain(hipStream_t st, int with_signals)
{
	int64_t t0;
	uint64_t base = (gate_value + 1) * 100;

	hold(st);
	for (int i = 1; i <= K; i++) {
		HIPOK(hipStreamWriteValue64(st, (void *)&mem[i], base + (uint64_t)i, 0));
		if (with_signals)
			signal_next(st);
	}
	open_gate();
	t0 = landed(1, base + 1);
	t0 = landed(K, base + (uint64_t)K) - t0;
	HIPOK(hipStreamSynchronize(st));
	for (int i = 1; i <= K; i++)
		if (mem[i] != base + (uint64_t)i)
			FAIL("stream write %d not done after hipStreamSynchronize", i);
	if (with_signals)
		kernel_wait(point);
	return t0;
}

static void drain_round(hipStream_t st, int64_t *base, int64_t *sig)
{
	int64_t a[6], b[6];

	for (int i = 0; i < 6; i++) {
		/* alternate which comes first */
		if (i % 2) {
			b[i] = drain(st, 1);
			a[i] = drain(st, 0);
		} else {
			a[i] = drain(st, 0);
			b[i] = drain(st, 1);
		}
	}
	*base = med(a, 6);
	*sig = med(b, 6);
}

/* Idle: the signal's call -> the kernel wait for its point returns.
 * Held: the gate the signal waited behind for HELD_MS opens -> the same. */
static int64_t handoff(hipStream_t st, hipStream_t other, int busy, int held)
{
	uint64_t pt = 0;
	int64_t t0;

	if (held) {
		hold(st);
		pt = signal_next(st);
	} else {
		HIPOK(hipStreamSynchronize(st));
	}
	if (busy) {
		atomic_store(&busy_started, 0);
		host_call(other, 1);
		while (!atomic_load(&busy_started))
			usleep(50);
	}
	if (held) {
		usleep(HELD_MS * 1000);
		t0 = open_gate();
	} else {
		t0 = now_ns();
		pt = signal_next(st);
	}
	kernel_wait(pt);
	t0 = now_ns() - t0;
	HIPOK(hipStreamSynchronize(st));
	HIPOK(hipStreamSynchronize(other));
	return t0;
}

/* The shim's poll thread (named hxsem-poll): its tid, or 0. */
static long poll_tid(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	long found = 0;

	while (d && (de = readdir(d)) && !found) {
		char path[64], comm[32] = "";
		long tid = strtol(de->d_name, NULL, 10);
		FILE *f;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", tid);
		if (!(f = fopen(path, "re")))
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "hxsem-poll", 10))
			found = tid;
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

static int64_t thread_cpu_ns(long tid)
{
	struct timespec ts;

	/* Another thread's CPU clock: (~tid << 3) | per-thread | sched. */
	if (clock_gettime((clockid_t)((~(unsigned long)tid << 3) | 6), &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Context switches of the thread: each of its returns from a sleep. */
static long thread_switches(long tid)
{
	char path[64], line[128];
	long n = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
			n += v;
	fclose(f);
	return n;
}

int main(void)
{
	const char *ver = getenv("HX_RT_VERSION"), *mode = getenv("HIPEXTSEM_SIGNAL_MODE");
	hipExternalSemaphoreHandleDesc d;
	hipStream_t st, other;
	int fd = -1;
	long tid;

	if (!mode || !*mode)
		mode = "hostfunc";
	alarm(600); /* a hang is a failure, not a stuck VM */
	drm = drm_open();
	launch_host_func = (host_fn_t)dlsym(RTLD_DEFAULT, "hipLaunchHostFunc");
	if (!launch_host_func)
		batch = K = 6;
	HIPOK(hipStreamCreate(&st));
	HIPOK(hipStreamCreate(&other));
	HIPOK(hipHostMalloc((void **)&mem, 4096, 0));
	memset((void *)mem, 0, 4096);
	if (drmSyncobjCreate(drm, 0, &handle) || drmSyncobjHandleToFD(drm, handle, &fd))
		FAIL("syncobj: %s", strerror(errno));
	memset(&d, 0, sizeof(d));
	d.type = (hipExternalSemaphoreHandleType)9; /* timeline fd */
	d.handle.fd = fd;
	HIPOK(hipImportExternalSemaphore(&sem, &d));
	memset(&sp, 0, sizeof(sp));

	/* warm-up: every path once */
	{
		int64_t a, b;
		fprintf(stderr, "modecost: warm-up, enqueue\n");
		enqueue_round(st, &a, &b);
		fprintf(stderr, "modecost: warm-up, drains\n");
		drain(st, 0);
		drain(st, 1);
		fprintf(stderr, "modecost: warm-up, hand-offs\n");
		for (int i = 0; i < 4; i++)
			handoff(st, other, i & 1, i >> 1);
	}
	for (int r = 0; r < ROUNDS; r++) {
		int64_t hf, sig, base, drained, h[4][HANDOFFS];

		enqueue_round(st, &hf, &sig);
		drain_round(st, &base, &drained);
		for (int i = 0; i < HANDOFFS; i++)
			for (int k = 0; k < 4; k++) /* idle, idle+busy, held, held+busy */
				h[k][i] = handoff(st, other, k & 1, k >> 1);
		printf("ROW|%s|%s|%d|%d|%lld|%lld|%lld|%lld|%lld|%lld|%lld|%lld\n", ver ? ver : "?",
		       mode, r, K, (long long)hf, (long long)sig, (long long)base, (long long)drained,
		       (long long)med(h[0], HANDOFFS), (long long)med(h[1], HANDOFFS),
		       (long long)med(h[2], HANDOFFS), (long long)med(h[3], HANDOFFS));
		fflush(stdout);
	}
	HIPOK(hipStreamSynchronize(st));
	kernel_wait(point);
	tid = poll_tid();
	{
		int64_t cpu = tid ? thread_cpu_ns(tid) : -1;
		long s0, s1;

		usleep(100000); /* nothing is pending: the thread goes idle */
		s0 = tid ? thread_switches(tid) : -1;
		usleep(IDLE_MS * 1000);
		s1 = tid ? thread_switches(tid) : -1;
		printf("POLL|%s|%s|%lld|%llu|%ld\n", ver ? ver : "?", mode,
		       (long long)(cpu >= 0 && signals_made ? cpu / (int64_t)signals_made : -1),
		       (unsigned long long)signals_made, tid ? s1 - s0 : -1L);
	}
	HIPOK(hipDestroyExternalSemaphore(sem));
	HIPOK(hipStreamDestroy(st));
	HIPOK(hipStreamDestroy(other));
	return 0;
}
