/* Acceptance cases for the shim on AMD's real HIP runtimes, run with the
 * fake device (tests/realrt/with-device) and real sync objects on the
 * test VM's render node.  Built against the HIP headers of the ABI it
 * runs on (Debian's 5.2 headers for ABI 5; a 6.x/7.x release's own for
 * ABI 6), so the semaphore structs are the runtime's own, not ours.
 *
 *   accept CASE     runs one case in this process (status 0: pass)
 *   accept cases    runs every case but exit-pending in this process, one
 *                   after the other (the runtime starts once: under TCG
 *                   that is most of the time), one line per case passed
 *   accept all      runs "cases" and "exit-pending" each in a process of
 *                   its own, with a deadline, for each fake target in
 *                   HX_ACCEPT_TARGETS (default "gfx900 gfx1030"); status 1
 *                   if any failed.
 *                   Each child logs the shim at level 2 and must name
 *                   virtio-gpu's node: the shim must never use the fake
 *                   device's render node.
 *
 * On 6.x/7.x releases the children are started through the userland's
 * loader (HX_RT_LOADER, HX_RT_LIBDIR, set by with-device). */
#include <hip/hip_runtime_api.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "rt_check.h"

/* Type 9 (timeline fd) is in the 6.x header, not in 5.2's; the shim
 * accepts it on every ABI. */
#define TYPE_TIMELINE_FD 9

static int drm;

static uint32_t so_new(void)
{
	uint32_t h = 0;
	CHECK(drmSyncobjCreate(drm, 0, &h) == 0, "drmSyncobjCreate: %s", strerror(errno));
	return h;
}

static hipExternalSemaphore_t import(uint32_t h, bool timeline)
{
	hipExternalSemaphoreHandleDesc d;
	hipExternalSemaphore_t s = NULL;
	int fd = -1;
	CHECK(drmSyncobjHandleToFD(drm, h, &fd) == 0, "export: %s", strerror(errno));
	memset(&d, 0, sizeof(d));
	d.type = timeline ? (hipExternalSemaphoreHandleType)TYPE_TIMELINE_FD
			  : hipExternalSemaphoreHandleTypeOpaqueFd;
	d.handle.fd = fd;
	HIPOK(hipImportExternalSemaphore(&s, &d));
	CHECK(s != NULL, "import gave NULL");
	return s;
}

static hipError_t sig(hipExternalSemaphore_t s, uint64_t v, hipStream_t st)
{
	hipExternalSemaphoreSignalParams p;
	memset(&p, 0, sizeof(p));
	p.params.fence.value = v;
	return hipSignalExternalSemaphoresAsync(&s, &p, 1, st);
}

static hipError_t wait1(hipExternalSemaphore_t s, uint64_t v, hipStream_t st)
{
	hipExternalSemaphoreWaitParams p;
	memset(&p, 0, sizeof(p));
	p.params.fence.value = v;
	return hipWaitExternalSemaphoresAsync(&s, &p, 1, st);
}

/* A marker: a host callback behind the stream's work sets *flag. */
static void mark_cb(hipStream_t st, hipError_t e, void *p)
{
	(void)st;
	(void)e;
	__atomic_store_n((int *)p, 1, __ATOMIC_SEQ_CST);
}

static void mark(hipStream_t st, int *flag)
{
	*flag = 0;
	HIPOK(hipStreamAddCallback(st, mark_cb, flag, 0));
}

static bool marked(int *flag)
{
	return __atomic_load_n(flag, __ATOMIC_SEQ_CST) != 0;
}

static bool so_signaled(uint32_t h, uint64_t point, bool timeline, int ms)
{
	int64_t dl = deadline_ms(ms);
	uint32_t first;
	/* WAIT_FOR_SUBMIT: the signal may not have attached its fence yet. */
	if (timeline)
		return drmSyncobjTimelineWait(drm, &h, &point, 1, dl, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					      &first) == 0;
	return drmSyncobjWait(drm, &h, 1, dl, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, &first) == 0;
}

/* Signal from HIP: the syncobj (point) becomes signalled after the
 * stream's prior work, not before. */
static void signal_case(bool tl)
{
	uint32_t h = so_new();
	hipExternalSemaphore_t s = import(h, tl);
	hipStream_t st;
	HIPOK(hipStreamCreate(&st));
	HIPOK(sig(s, 5, st));
	CHECK(so_signaled(h, 5, tl, 10000), "not signalled by the stream");
	HIPOK(hipStreamSynchronize(st));
	HIPOK(hipDestroyExternalSemaphore(s));
	HIPOK(hipStreamDestroy(st));
}

/* Wait before signal: work behind the wait does not run until the
 * syncobj is signalled from the other side. */
static void wait_case(bool tl)
{
	static int flag;
	uint32_t h = so_new();
	hipExternalSemaphore_t s = import(h, tl);
	hipStream_t st;
	HIPOK(hipStreamCreate(&st));
	HIPOK(wait1(s, 3, st));
	mark(st, &flag);
	sleep_ms(300);
	CHECK(!marked(&flag), "the stream passed an unsignalled wait");
	CHECK(hipStreamQuery(st) == hipErrorNotReady, "query: not 'not ready' while waiting");
	so_signal(drm, h, tl ? 3 : 0);
	HIPOK(hipStreamSynchronize(st));
	CHECK(marked(&flag), "work behind the wait did not run");
	HIPOK(hipDestroyExternalSemaphore(s));
	HIPOK(hipStreamDestroy(st));
}

/* Satisfied waits: binary already signalled, timeline past the value. */
static void satisfied_case(void)
{
	static int f1, f2;
	uint32_t hb = so_new(), ht = so_new();
	so_signal(drm, hb, 0);
	so_signal(drm, ht, 7);
	hipExternalSemaphore_t b = import(hb, false), t = import(ht, true);
	hipStream_t st;
	HIPOK(hipStreamCreate(&st));
	HIPOK(wait1(b, 0, st));
	mark(st, &f1);
	HIPOK(wait1(t, 5, st));
	mark(st, &f2);
	HIPOK(hipStreamSynchronize(st));
	CHECK(marked(&f1) && marked(&f2), "a satisfied wait held the stream");
	HIPOK(hipDestroyExternalSemaphore(b));
	HIPOK(hipDestroyExternalSemaphore(t));
	HIPOK(hipStreamDestroy(st));
}

/* Destroy: after destroy nothing else is needed; the syncobj lives on. */
static void destroy_case(void)
{
	uint32_t h = so_new();
	hipExternalSemaphore_t s = import(h, true);
	hipStream_t st;
	HIPOK(hipStreamCreate(&st));
	HIPOK(sig(s, 2, st));
	HIPOK(hipStreamSynchronize(st));
	HIPOK(hipDestroyExternalSemaphore(s));
	CHECK(so_signaled(h, 2, true, 1000), "the signal before destroy is lost");
	HIPOK(hipStreamDestroy(st));
}

/* A timeline wait for 0 is satisfied at once. */
static void tl_wait_zero(void)
{
	static int flag;
	uint32_t h = so_new();
	hipExternalSemaphore_t s = import(h, true);
	hipStream_t st;
	HIPOK(hipStreamCreate(&st));
	HIPOK(wait1(s, 0, st));
	mark(st, &flag);
	HIPOK(hipStreamSynchronize(st));
	CHECK(marked(&flag), "a wait for 0 held the stream");
	HIPOK(hipDestroyExternalSemaphore(s));
	HIPOK(hipStreamDestroy(st));
}

/* One binary syncobj imported twice: a signal through one import
 * releases a wait through the other. */
static void import_twice(void)
{
	static int flag;
	uint32_t h = so_new();
	hipExternalSemaphore_t a = import(h, false), b = import(h, false);
	hipStream_t s1, s2;
	CHECK(a != b, "two imports gave one handle");
	HIPOK(hipStreamCreate(&s1));
	HIPOK(hipStreamCreate(&s2));
	HIPOK(wait1(b, 0, s2));
	mark(s2, &flag);
	sleep_ms(200);
	CHECK(!marked(&flag), "the wait through the second import did not wait");
	HIPOK(sig(a, 0, s1));
	HIPOK(hipStreamSynchronize(s2));
	CHECK(marked(&flag), "the second import's wait was not released");
	HIPOK(hipDestroyExternalSemaphore(a));
	HIPOK(hipDestroyExternalSemaphore(b));
	HIPOK(hipStreamDestroy(s1));
	HIPOK(hipStreamDestroy(s2));
}

/* Waits and signals on hipStreamPerThread. */
static void per_thread(void)
{
	static int flag;
	uint32_t h = so_new();
	hipExternalSemaphore_t s = import(h, true);
	HIPOK(wait1(s, 4, hipStreamPerThread));
	mark(hipStreamPerThread, &flag);
	sleep_ms(300);
	CHECK(!marked(&flag), "hipStreamPerThread passed an unsignalled wait");
	so_signal(drm, h, 4);
	HIPOK(hipStreamSynchronize(hipStreamPerThread));
	CHECK(marked(&flag), "hipStreamPerThread did not continue");
	HIPOK(sig(s, 6, hipStreamPerThread));
	CHECK(so_signaled(h, 6, true, 10000), "hipStreamPerThread did not signal");
	HIPOK(hipDestroyExternalSemaphore(s));
}

/* A destroyed stream handed to every call: an error, not a crash. */
static void destroyed_stream(void)
{
	uint32_t h = so_new();
	hipExternalSemaphore_t s = import(h, true);
	hipStream_t st;
	HIPOK(hipStreamCreate(&st));
	HIPOK(hipStreamDestroy(st));
	hipError_t e1 = wait1(s, 1, st), e2 = sig(s, 1, st);
	CHECK(e1 == hipErrorInvalidValue, "wait on a destroyed stream answered %d", (int)e1);
	CHECK(e2 == hipErrorInvalidValue, "signal on a destroyed stream answered %d", (int)e2);
	CHECK(!so_signaled(h, 1, true, 200), "a signal on a destroyed stream reached the syncobj");
	HIPOK(hipDestroyExternalSemaphore(s));
}

/* Returning from main with waits pending (a created stream and
 * hipStreamPerThread): the process must still end, with status 0 (the
 * parent gives it 10 s). */
static void exit_pending(void)
{
	uint32_t h = so_new();
	hipExternalSemaphore_t s = import(h, true);
	hipStream_t st;
	HIPOK(hipStreamCreate(&st));
	HIPOK(wait1(s, 9, st));
	HIPOK(wait1(s, 9, hipStreamPerThread));
	/* The parent measures from here to the end of the process. */
	const char *tmp = getenv("TMPDIR");
	char path[256];
	snprintf(path, sizeof(path), "%s/accept-exit.stamp", tmp && *tmp ? tmp : "/tmp");
	FILE *f = fopen(path, "w");
	CHECK(f != NULL, "%s: %s", path, strerror(errno));
	fprintf(f, "%lld\n", (long long)now_ns());
	fclose(f);
	printf("  returning from main with waits pending\n");
	fflush(stdout);
}


/* Graph cases (HIP 5.3 and later; not claimed on 5.2, whose runtime has
 * no hipLaunchHostFunc): a wait captured from a stream, and the same
 * wait node in a clone of the graph, each holding its launch until the
 * syncobj is signalled. */
typedef hipError_t (*host_fn_t)(hipStream_t, hipHostFn_t, void *);

static void host_mark(void *p)
{
	__atomic_store_n((int *)p, 1, __ATOMIC_SEQ_CST);
}

static host_fn_t launch_host_func(void)
{
	host_fn_t f = (host_fn_t)dlsym(RTLD_DEFAULT, "hipLaunchHostFunc");
	CHECK(f != NULL, "this runtime has no hipLaunchHostFunc (graph cases need HIP 5.3 or later)");
	return f;
}

static void capture_graph(hipGraph_t *g, hipExternalSemaphore_t s, uint64_t v, int *flag)
{
	hipStream_t st;
	HIPOK(hipStreamCreate(&st));
	HIPOK(hipStreamBeginCapture(st, hipStreamCaptureModeGlobal));
	HIPOK(wait1(s, v, st));
	HIPOK(launch_host_func()(st, host_mark, flag));
	HIPOK(hipStreamEndCapture(st, g));
	HIPOK(hipStreamDestroy(st));
}

static void launch_held(hipGraph_t g, uint32_t h, uint64_t v, int *flag, const char *what)
{
	hipGraphExec_t ge;
	hipStream_t st;
	HIPOK(hipStreamCreate(&st));
	HIPOK(hipGraphInstantiate(&ge, g, NULL, NULL, 0));
	*flag = 0;
	HIPOK(hipGraphLaunch(ge, st));
	sleep_ms(300);
	CHECK(!marked(flag), "%s: the launch passed an unsignalled wait", what);
	so_signal(drm, h, v);
	HIPOK(hipStreamSynchronize(st));
	CHECK(marked(flag), "%s: the launch did not continue after the signal", what);
	HIPOK(hipGraphExecDestroy(ge));
	HIPOK(hipStreamDestroy(st));
}

static void captured_wait(void)
{
	static int flag;
	uint32_t h = so_new();
	hipExternalSemaphore_t s = import(h, true);
	hipGraph_t g;
	capture_graph(&g, s, 5, &flag);
	CHECK(!marked(&flag), "the captured host function ran at capture");
	launch_held(g, h, 5, &flag, "captured wait");
	HIPOK(hipGraphDestroy(g));
	HIPOK(hipDestroyExternalSemaphore(s));
}

static void cloned_wait(void)
{
	static int flag;
	uint32_t h = so_new();
	hipExternalSemaphore_t s = import(h, true);
	hipGraph_t g, c;
	capture_graph(&g, s, 7, &flag);
	HIPOK(hipGraphClone(&c, g));
	HIPOK(hipGraphDestroy(g));
	launch_held(c, h, 7, &flag, "cloned wait node");
	HIPOK(hipGraphDestroy(c));
	HIPOK(hipDestroyExternalSemaphore(s));
}

static void bin_signal(void) { signal_case(false); }
static void tl_signal(void) { signal_case(true); }
static void bin_wait(void) { wait_case(false); }
static void tl_wait(void) { wait_case(true); }

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "bin-signal", bin_signal },     { "tl-signal", tl_signal },
	{ "bin-wait", bin_wait },         { "tl-wait", tl_wait },
	{ "satisfied", satisfied_case },  { "destroy", destroy_case },
	{ "tl-wait-zero", tl_wait_zero }, { "import-twice", import_twice },
	{ "per-thread", per_thread },     { "destroyed-stream", destroyed_stream },
	{ "exit-pending", exit_pending }, { "captured-wait", captured_wait },
	{ "cloned-wait", cloned_wait },
};

/* The graph cases are claimed from HIP 5.3 on: with-device names the
 * release (HX_RT_VERSION); 5.2 runs without them. */
static bool applies(const char *name)
{
	const char *v = getenv("HX_RT_VERSION");
	if (strcmp(name, "captured-wait") && strcmp(name, "cloned-wait"))
		return true;
	CHECK(v && *v, "HX_RT_VERSION is not set (run through tests/realrt/with-device)");
	return strcmp(v, "5.2") != 0;
}
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static int run_one(const char *self, const char *name, int idx)
{
	char log[256];
	const char *tmp = getenv("TMPDIR");
	snprintf(log, sizeof(log), "%s/accept-%s.log", tmp && *tmp ? tmp : "/tmp", name);
	unlink(log);
	int64_t t0 = now_ns();
	pid_t pid = fork();
	if (pid == 0) {
		const char *ld = getenv("HX_RT_LOADER"), *lib = getenv("HX_RT_LIBDIR");
		setenv("HIPEXTSEM_DEBUG", "2", 1);
		setenv("HIPEXTSEM_LOG_FILE", log, 1);
		if (ld && *ld)
			execl(ld, ld, "--library-path", lib ? lib : "", self, name, (char *)NULL);
		else
			execl(self, self, name, (char *)NULL);
		_exit(127);
	}
	int st = 0, waited = 0;
	const int limit_ms = 300000;
	char stamp[256];
	snprintf(stamp, sizeof(stamp), "%s/accept-exit.stamp", tmp && *tmp ? tmp : "/tmp");
	unlink(stamp);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (strcmp(name, "exit-pending") == 0 && waited % 500 == 0) {
			long long t_ret = 0;
			FILE *sf = fopen(stamp, "r");
			if (sf && fscanf(sf, "%lld", &t_ret) == 1 && now_ns() - t_ret > 10000000000LL)
				waited = limit_ms; /* main returned more than 10 s ago */
			if (sf)
				fclose(sf);
		}
		if (waited >= limit_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			printf("not ok %d - %s (killed: no exit in time)\n", idx, name);
			return 1;
		}
		sleep_ms(20);
		waited += 20;
	}
	int64_t t_end = now_ns();
	double secs = (double)(t_end - t0) / 1e9;
	if (strcmp(name, "exit-pending") == 0) {
		long long t_ret = 0;
		FILE *sf = fopen(stamp, "r");
		if (!sf || fscanf(sf, "%lld", &t_ret) != 1) {
			printf("not ok %d - %s (no stamp from the child)\n", idx, name);
			if (sf)
				fclose(sf);
			return 1;
		}
		fclose(sf);
		double tail = (double)(t_end - t_ret) / 1e9;
		if (tail > 10.0) {
			printf("not ok %d - %s (%.1f s from main's return to the end)\n", idx, name, tail);
			return 1;
		}
		printf("  exit %.2f s after main returned\n", tail);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("not ok %d - %s (%s %d, %.1f s)\n", idx, name,
		       WIFEXITED(st) ? "status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
		       secs);
		return 1;
	}
	/* The shim must have used virtio-gpu's node, never the fake's. */
	char line[512];
	bool used = false;
	FILE *f = fopen(log, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "using /dev/dri/renderD128 (driver virtio_gpu"))
			used = true;
	if (f)
		fclose(f);
	if (!used) {
		printf("not ok %d - %s (the shim's log %s does not name virtio-gpu's renderD128)\n", idx,
		       name, log);
		return 1;
	}
	printf("ok %d - %s (%.1f s)\n", idx, name, secs);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: accept CASE|all\n");
		return 2;
	}
	if (strcmp(argv[1], "all") == 0) {
		/* Every case on each fake target (FAKEDEV_TARGET in the children). */
		const char *env = getenv("HX_ACCEPT_TARGETS");
		char targets[128], *save = NULL;
		int bad = 0, idx = 0;
		snprintf(targets, sizeof(targets), "%s", env && *env ? env : "gfx900 gfx1030");
		for (char *t = strtok_r(targets, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			setenv("FAKEDEV_TARGET", t, 1);
			printf("# target %s\n", t);
			fflush(stdout);
			bad += run_one(argv[0], "cases", ++idx);
			fflush(stdout);
			bad += run_one(argv[0], "exit-pending", ++idx);
			fflush(stdout);
		}
		printf("1..%d\n", idx);
		return bad ? 1 : 0;
	}
	if (strcmp(argv[1], "cases") == 0) {
		drm = drm_open();
		int n = 0;
		HIPOK(hipGetDeviceCount(&n));
		CHECK(n == 1, "%d HIP devices (the fake device is not in place?)", n);
		const char *want = getenv("FAKEDEV_TARGET");
		hipDeviceProp_t prop;
		HIPOK(hipGetDeviceProperties(&prop, 0));
		CHECK(!want || !*want || strncmp(prop.gcnArchName, want, strlen(want)) == 0,
		      "the device is %s, not the fake's %s", prop.gcnArchName, want);
		printf("  device: %s\n", prop.gcnArchName);
		for (size_t i = 0; i < NCASES; i++) {
			if (strcmp(cases[i].name, "exit-pending") == 0)
				continue;
			if (!applies(cases[i].name)) {
				printf("  not claimed on HIP %s: %s\n", getenv("HX_RT_VERSION"), cases[i].name);
				continue;
			}
			int64_t t0 = now_ns();
			cases[i].fn();
			printf("  passed: %s (%.2f s)\n", cases[i].name, (double)(now_ns() - t0) / 1e9);
			fflush(stdout);
		}
		return 0;
	}
	for (size_t i = 0; i < NCASES; i++)
		if (strcmp(argv[1], cases[i].name) == 0) {
			drm = drm_open();
			int n = 0;
			HIPOK(hipGetDeviceCount(&n));
			CHECK(n == 1, "%d HIP devices (the fake device is not in place?)", n);
			cases[i].fn();
			return 0;
		}
	fprintf(stderr, "unknown case '%s'\n", argv[1]);
	return 2;
}
