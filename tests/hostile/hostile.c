/* SPDX-License-Identifier: MIT */
/*
 * Hostile input and hard conditions (issue 7), one case per argv[1].
 *
 * Built per cpuhip flavour (-DHX_TEST_ABI=5|6) and run with the shim
 * preloaded (HX_TEST_EXPECT=shim).  Cases that need kernel sync objects run
 * inside the test VM (drm suite); the rest run on the host too, where there
 * is no /dev/dri.  Every case checks that the shim really is loaded, and
 * every bad input is checked for (a) its HIP error, (b) exactly one log line
 * (HIPEXTSEM_LOG_FILE, default level), (c) no descriptor and no kernel
 * syncobj handle left behind.
 *
 * Kernel syncobj handles are counted by probing DRM_IOCTL_SYNCOBJ_QUERY on
 * handles 1..HANDLE_PROBE of the shim's own DRM file (found in
 * /proc/self/fd): the kernel hands out the lowest free handle (idr), so a
 * leak of k handles always shows up below base + k.
 */
#include <dirent.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/auxv.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "faults.h"
#include "hxtest.h"

extern char **environ;

struct hx_stats {
	unsigned live_sems, pending_waits, pending_signals, slots_allocated;
};

#define HANDLE_PROBE 1024

static int drm = -1;   /* the test's own DRM file ("the Vulkan side"), -1 on the host */
static bool have_drm;  /* /dev/dri/renderD128 exists (inside the VM) */
static char logpath[256];
static char *self_exe;

/* ---- helpers ------------------------------------------------------------ */

static void stats(struct hx_stats *st)
{
	static void (*fn)(struct hx_stats *);
	if (!fn)
		fn = (void (*)(struct hx_stats *))dlsym(RTLD_DEFAULT, "hipextsemGetStats");
	CHECK(fn != NULL, "hipextsemGetStats not found: the shim is not loaded");
	fn(st);
}

/* Waits (bounded) until the shim has no pending work and `live` semaphores. */
static void settle(unsigned live)
{
	struct hx_stats st;
	for (int i = 0; i < 500; i++) {
		stats(&st);
		if (st.pending_waits == 0 && st.pending_signals == 0 && st.live_sems == live)
			break;
		sleep_ms(10);
	}
	stats(&st);
	CHECK(st.pending_waits == 0 && st.pending_signals == 0 && st.live_sems == live,
	      "shim not idle: %u waits, %u signals, %u semaphores (want %u)", st.pending_waits,
	      st.pending_signals, st.live_sems, live);
}

static int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;
	CHECK(d != NULL, "opendir /proc/self/fd");
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

static bool is_render_fd(int fd)
{
	char p[64], l[256];
	ssize_t n;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlink(p, l, sizeof(l) - 1);
	if (n <= 0)
		return false;
	l[n] = 0;
	return strncmp(l, "/dev/dri/", 9) == 0;
}

/* The shim's DRM file: the render-node descriptor that is not ours. */
static int shim_drm_fd(void)
{
	int found = -1;
	for (int fd = 0; fd < 4096; fd++)
		if (fd != drm && is_render_fd(fd))
			found = fd;
	return found;
}

static int render_fd_count(void)
{
	int n = 0;
	for (int fd = 0; fd < 4096; fd++)
		if (is_render_fd(fd))
			n++;
	return n;
}

static int handle_count(int fd)
{
	int n = 0;
	if (fd < 0)
		return 0;
	for (uint32_t h = 1; h <= HANDLE_PROBE; h++) {
		uint64_t v;
		if (drmSyncobjQuery(fd, &h, &v, 1) == 0)
			n++;
	}
	return n;
}

static off_t log_size(void)
{
	struct stat st;
	return stat(logpath, &st) == 0 ? st.st_size : 0;
}

/* Number of lines logged since `mark`; the first one is copied to buf. */
static int log_since(off_t mark, char *buf, size_t len)
{
	int fd = open(logpath, O_RDONLY | O_CLOEXEC), lines = 0;
	char chunk[4096];
	ssize_t n;
	size_t used = 0;

	if (buf && len)
		buf[0] = 0;
	if (fd < 0)
		return 0;
	lseek(fd, mark, SEEK_SET);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (lines == 0 && buf && used + 1 < len && chunk[i] != '\n')
				buf[used++] = chunk[i];
			if (chunk[i] == '\n')
				lines++;
		}
	}
	if (buf && len)
		buf[used < len ? used : len - 1] = 0;
	close(fd);
	return lines;
}

static bool log_contains(off_t mark, const char *needle)
{
	int fd = open(logpath, O_RDONLY | O_CLOEXEC);
	static char all[1 << 16];
	ssize_t n;
	if (fd < 0)
		return false;
	lseek(fd, mark, SEEK_SET);
	n = read(fd, all, sizeof(all) - 1);
	close(fd);
	all[n > 0 ? n : 0] = 0;
	return strstr(all, needle) != NULL;
}

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "hipSuccess";
	case 1: return "hipErrorInvalidValue";
	case 2: return "hipErrorOutOfMemory";
	case 3: return "hipErrorNotInitialized";
	case 304: return "hipErrorOperatingSystem";
	case 400: return "hipErrorInvalidResourceHandle";
	case 801: return "hipErrorNotSupported";
	default: return "?";
	}
}

/* ---- the bad-input matrix ------------------------------------------------ */

struct mark {
	off_t log;
	int fds;
	int handles;
};

static int shim_fd = -1; /* known once the shim opened its device */
static FILE *table;      /* HX_TABLE_OUT: markdown rows */
static int rows;

static struct mark mark_now(void)
{
	struct mark m = { log_size(), fd_count(), handle_count(shim_fd) };
	return m;
}

/* fd_delta: expected change of the descriptor count, or 99 to skip. */
static void row_check(const char *call, const char *input, int got, int want, struct mark *m,
		      int fd_delta)
{
	char line[512];
	int lines = log_since(m->log, line, sizeof(line));
	int want_lines = want == 0 ? 0 : 1;

	rows++;
	if (got != want)
		FAIL("%s with %s returned %d (%s), expected %d (%s)", call, input, got, err_name(got),
		     want, err_name(want));
	if (lines != want_lines)
		FAIL("%s with %s logged %d lines, expected %d (first: \"%s\")", call, input, lines,
		     want_lines, line);
	if (fd_delta != 99 && fd_count() - m->fds != fd_delta)
		FAIL("%s with %s: descriptor count changed by %d (expected %d)", call, input,
		     fd_count() - m->fds, fd_delta);
	if (want != 0 && handle_count(shim_fd) != m->handles)
		FAIL("%s with %s: kernel syncobj handles %d -> %d", call, input, m->handles,
		     handle_count(shim_fd));
	if (table) {
		/* Strip the "hipextsem: error: " prefix for the table. */
		const char *msg = strstr(line, ": error: ");
		msg = msg ? msg + 9 : line;
		fprintf(table, "| `%s` | %s | %d `%s` | %s |\n", call, input, got, err_name(got),
			want == 0 ? "—" : msg);
	}
}

#define ROW(call, input, want, fd_delta, expr)                                               \
	do {                                                                                 \
		struct mark m_ = mark_now();                                                 \
		int got_ = (int)(expr);                                                      \
		row_check(call, input, got_, (int)(want), &m_, fd_delta);                    \
	} while (0)

static hipError_t import_typed(hipExternalSemaphore_t *out, int type, int fd, unsigned flags)
{
	test_desc d;
	memset(&d, 0, sizeof(d));
	d.type = type;
	d.handle.fd = fd;
	d.flags = flags;
	return hipImportExternalSemaphore(out, (const hipExternalSemaphoreHandleDesc *)&d);
}

/* A fresh syncobj fd from the test's own DRM file (VM only). */
static int new_syncobj_fd(uint32_t *h)
{
	uint32_t hh = so_create(drm, false);
	int fd = so_export(drm, hh);
	if (h)
		*h = hh;
	else
		drmSyncobjDestroy(drm, hh);
	return fd;
}

static hipExternalSemaphore_t import_new(bool timeline, uint32_t *h)
{
	hipExternalSemaphore_t s = NULL;
	int fd = new_syncobj_fd(h);
	hipError_t e = import_fd(&s, fd, timeline);
	CHECK(e == hipSuccess, "import returned %d", (int)e);
	return s;
}

static void badinput(void)
{
	const int fd_want = have_drm ? 1 : 801; /* a valid type reaches the device */
	hipExternalSemaphore_t s = NULL, live = NULL, dead = NULL, h;
	hipExternalSemaphore_t garbage[] = {
		(hipExternalSemaphore_t)(uintptr_t)0x1234,
		(hipExternalSemaphore_t)(uintptr_t)UINTPTR_MAX,
		(hipExternalSemaphore_t)(uintptr_t)0x4858000000000001ull, /* right tag, no entry */
		(hipExternalSemaphore_t)(uintptr_t)0x48580000ffffffffull, /* right tag, index too big */
		(hipExternalSemaphore_t)&s,                                 /* a real pointer */
	};
	static const char *const garbage_names[] = {
		"garbage handle 0x1234", "garbage handle ~0", "handle with the shim's tag, no entry",
		"handle with the shim's tag, index 2^32-1", "pointer to a stack variable",
	};
	test_signal_params sp[2];
	test_wait_params wp[2];
	hipStream_t st, gone;
	int p[2], efd, rfd, closed;
	char path[256], input[128];
	uint32_t hk;

	memset(sp, 0, sizeof(sp));
	memset(wp, 0, sizeof(wp));
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamCreate(&gone));

	/* Warm up: the first import opens the shim's device (VM) or tries to. */
	if (have_drm) {
		live = import_new(true, &hk);
		HIPCHECK(signal1(live, 1, st));
		HIPCHECK(wait1(live, 1, st));
		HIPCHECK(hipStreamSynchronize(st));
		shim_fd = shim_drm_fd();
		CHECK(shim_fd >= 0, "the shim's DRM file not found in /proc/self/fd");
		dead = import_new(false, NULL);
		HIPCHECK(hipDestroyExternalSemaphore(dead));
	} else {
		CHECK(pipe(p) == 0, "pipe");
		EXPECT_ERR(import_typed(&s, 1, p[0], 0), hipErrorNotSupported);
		close(p[0]);
		close(p[1]);
	}
	/* Destroyed after the warm-up: the shim's first import on 5.2 makes
	 * the main thread's per-thread stream (streams.c: exit), which could
	 * take the memory of a stream destroyed before and make its handle
	 * name a live stream again. */
	HIPCHECK(hipStreamDestroy(gone));

	/* hipImportExternalSemaphore: pointers. */
	ROW("hipImportExternalSemaphore", "extSem_out = NULL", 1, 0,
	    import_typed(NULL, 1, 5, 0));
	ROW("hipImportExternalSemaphore", "semHandleDesc = NULL", 1, 0,
	    hipImportExternalSemaphore(&s, NULL));
	ROW("hipImportExternalSemaphore", "both NULL", 1, 0, hipImportExternalSemaphore(NULL, NULL));

	/* Every handle type 0..11 and garbage types, with an fd that would
	 * otherwise be importable. */
	for (int type = -1; type <= 12; type++) {
		int fd, want;
		if (type == 1 || type == 9)
			continue; /* the supported types: below */
		want = (type >= 2 && type <= 8) || type == 10 ? 801 : 1;
		CHECK(pipe(p) == 0, "pipe");
		fd = have_drm ? new_syncobj_fd(NULL) : p[0];
		snprintf(input, sizeof(input), "type = %d%s", type,
			 type == 6 ? " (NvSciSync)" : type == 10 ? " (TimelineSemaphoreWin32)" :
			 (type >= 2 && type <= 8) ? " (a Windows/D3D type)" : " (not a type)");
		ROW("hipImportExternalSemaphore", input, want, 0, import_typed(&s, type, fd, 0));
		CHECK(fcntl(fd, F_GETFD) != -1, "a failed import closed the caller's fd");
		if (fd != p[0])
			close(fd);
		close(p[0]);
		close(p[1]);
	}
	ROW("hipImportExternalSemaphore", "type = 0x7fffffff", 1, 0,
	    import_typed(&s, 0x7fffffff, 5, 0));

	/* Descriptors that are not syncobjs, for both supported types. */
	for (int type = 1; type <= 9; type += 8) {
		const char *tn = type == 1 ? "OpaqueFd" : "TimelineSemaphoreFd";
		snprintf(input, sizeof(input), "%s, fd = -1", tn);
		ROW("hipImportExternalSemaphore", input, 1, 0, import_typed(&s, type, -1, 0));
		snprintf(input, sizeof(input), "%s, fd = 0 (stdin)", tn);
		ROW("hipImportExternalSemaphore", input, 1, 0, import_typed(&s, type, 0, 0));
		snprintf(input, sizeof(input), "%s, fd = INT_MIN", tn);
		ROW("hipImportExternalSemaphore", input, 1, 0, import_typed(&s, type, INT_MIN, 0));

		closed = dup(2);
		close(closed);
		snprintf(input, sizeof(input), "%s, a closed fd", tn);
		ROW("hipImportExternalSemaphore", input, fd_want, 0, import_typed(&s, type, closed, 0));
		snprintf(input, sizeof(input), "%s, fd = INT_MAX", tn);
		ROW("hipImportExternalSemaphore", input, fd_want, 0,
		    import_typed(&s, type, INT_MAX, 0));

		CHECK(pipe(p) == 0, "pipe");
		snprintf(input, sizeof(input), "%s, a pipe", tn);
		ROW("hipImportExternalSemaphore", input, fd_want, 0, import_typed(&s, type, p[0], 0));
		CHECK(fcntl(p[0], F_GETFD) != -1, "a failed import closed the caller's pipe");
		close(p[0]);
		close(p[1]);

		snprintf(path, sizeof(path), "/proc/self/exe");
		rfd = open(path, O_RDONLY | O_CLOEXEC);
		snprintf(input, sizeof(input), "%s, a regular file", tn);
		ROW("hipImportExternalSemaphore", input, fd_want, 0, import_typed(&s, type, rfd, 0));
		CHECK(fcntl(rfd, F_GETFD) != -1, "a failed import closed the caller's file");
		close(rfd);

		efd = eventfd(0, EFD_CLOEXEC);
		snprintf(input, sizeof(input), "%s, an eventfd", tn);
		ROW("hipImportExternalSemaphore", input, fd_want, 0, import_typed(&s, type, efd, 0));
		close(efd);

		if (have_drm) {
			int dfd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
			snprintf(input, sizeof(input), "%s, a DRM render node fd (not a syncobj)", tn);
			ROW("hipImportExternalSemaphore", input, 1, 0, import_typed(&s, type, dfd, 0));
			CHECK(fcntl(dfd, F_GETFD) != -1, "a failed import closed the caller's fd");
			close(dfd);
		}
	}

	if (have_drm) {
		/* The supported types succeed and take the fd (fd count -1);
		 * descriptor flags are ignored, as by the stock runtime. */
		int fd = new_syncobj_fd(NULL);
		ROW("hipImportExternalSemaphore", "OpaqueFd, a syncobj fd", 0, -1,
		    import_typed(&h, 1, fd, 0));
		HIPCHECK(hipDestroyExternalSemaphore(h));
		fd = new_syncobj_fd(NULL);
		ROW("hipImportExternalSemaphore", "TimelineSemaphoreFd, a syncobj fd", 0, -1,
		    import_typed(&h, 9, fd, 0));
		HIPCHECK(hipDestroyExternalSemaphore(h));
		fd = new_syncobj_fd(NULL);
		ROW("hipImportExternalSemaphore", "OpaqueFd, desc.flags = 0xffffffff", 0, -1,
		    import_typed(&h, 1, fd, 0xffffffffu));
		HIPCHECK(hipDestroyExternalSemaphore(h));
	}

	/* Signal and wait. */
	for (int w = 0; w < 2; w++) {
		const char *call = w ? "hipWaitExternalSemaphoresAsync" : "hipSignalExternalSemaphoresAsync";
#define SW(arr, params, n, stream)                                                           \
	(w ? hipWaitExternalSemaphoresAsync(arr, (const hipExternalSemaphoreWaitParams *)(params), \
					    n, stream)                                       \
	   : hipSignalExternalSemaphoresAsync(arr,                                           \
					      (const hipExternalSemaphoreSignalParams *)(params), \
					      n, stream))
		void *params = w ? (void *)wp : (void *)sp;
		hipExternalSemaphore_t null_elem = NULL;

		ROW(call, "extSemArray = NULL", 1, 0, SW(NULL, params, 1, st));
		ROW(call, "paramsArray = NULL", 1, 0, SW(garbage, NULL, 1, st));
		ROW(call, "numExtSems = 0, NULL arrays", 1, 0, SW(NULL, NULL, 0, st));
		ROW(call, "numExtSems = 0, garbage handle", 0, 0, SW(garbage, params, 0, st));
		ROW(call, "numExtSems = UINT_MAX, NULL arrays", 1, 0, SW(NULL, NULL, UINT_MAX, st));
		ROW(call, "extSemArray[0] = NULL", 1, 0, SW(&null_elem, params, 1, st));
		for (size_t g = 0; g < sizeof(garbage) / sizeof(garbage[0]); g++)
			ROW(call, garbage_names[g], 400, 0, SW(&garbage[g], params, 1, st));
		if (have_drm) {
			hipExternalSemaphore_t two[2] = { live, garbage[0] };
			ROW(call, "destroyed handle", 400, 0, SW(&dead, params, 1, st));
			ROW(call, "[live, garbage]", 400, 0, SW(two, params, 2, st));
			two[1] = NULL;
			ROW(call, "[live, NULL]", 1, 0, SW(two, params, 2, st));
			if (w)
				wp[0].flags = 1;
			else
				sp[0].flags = 1;
			ROW(call, "params.flags = 1", 1, 0, SW(&live, params, 1, st));
			if (w)
				wp[0].flags = 0x80000000u;
			else
				sp[0].flags = 0x80000000u;
			ROW(call, "params.flags = 0x80000000", 1, 0, SW(&live, params, 1, st));
			if (w)
				wp[0].flags = 0;
			else
				sp[0].flags = 0;
			if (!w) {
				sp[0].params.fence.value = 0;
				ROW(call, "timeline semaphore, value = 0", 1, 0,
				    SW(&live, params, 1, st));
			}
			sp[0].params.fence.value = 1;
			wp[0].params.fence.value = 1;
			ROW(call, "stream = 0xdead0 (not a stream)", 1, 0,
			    SW(&live, params, 1, (hipStream_t)(uintptr_t)0xdead0));
			ROW(call, "a destroyed stream", 1, 0, SW(&live, params, 1, gone));
		} else {
			/* Flags are checked before the handles. */
			if (w)
				wp[0].flags = 1;
			else
				sp[0].flags = 1;
			ROW(call, "params.flags = 1", 1, 0, SW(garbage, params, 1, st));
			wp[0].flags = sp[0].flags = 0;
		}
#undef SW
	}

	/* Destroy. */
	ROW("hipDestroyExternalSemaphore", "NULL", 1, 0, hipDestroyExternalSemaphore(NULL));
	for (size_t g = 0; g < sizeof(garbage) / sizeof(garbage[0]); g++)
		ROW("hipDestroyExternalSemaphore", garbage_names[g], 400, 0,
		    hipDestroyExternalSemaphore(garbage[g]));
	if (have_drm) {
		ROW("hipDestroyExternalSemaphore", "a destroyed handle (double destroy)", 400, 0,
		    hipDestroyExternalSemaphore(dead));
		HIPCHECK(hipStreamSynchronize(st));
		HIPCHECK(hipDestroyExternalSemaphore(live));
		drmSyncobjDestroy(drm, hk);
		settle(0);
		/* Every semaphore destroyed and idle: no kernel handle left.  A
		 * refused call that kept a reference shows only now (the rows
		 * above check while `live` is still held; tests/mutation). */
		CHECK(handle_count(shim_fd) == 0, "%d kernel syncobj handle(s) left after every "
		      "semaphore was destroyed: a refused call kept a reference",
		      handle_count(shim_fd));
	}
	HIPCHECK(hipStreamDestroy(st));
	printf("badinput: %d inputs checked\n", rows);
}

/* numExtSems large: a huge count is only defined with arrays that long
 * (reading past a shorter array is the caller's undefined behaviour, as
 * with the stock runtime).  2^16 entries, all valid. */
static void bigcount(void)
{
	enum { N = 1 << 16, NW = 1 << 11 };
	hipExternalSemaphore_t *arr = malloc(N * sizeof(*arr));
	test_signal_params *sp = calloc(N, sizeof(*sp));
	test_wait_params *wp = calloc(N, sizeof(*wp));
	hipExternalSemaphore_t sem[4];
	uint32_t h[4];
	hipStream_t st;
	int64_t t0;

	CHECK(arr && sp && wp, "out of memory");
	HIPCHECK(hipStreamCreate(&st));
	for (int i = 0; i < 4; i++)
		sem[i] = import_new(true, &h[i]);
	for (unsigned i = 0; i < N; i++) {
		arr[i] = sem[i % 4];
		sp[i].params.fence.value = i / 4 + 1;
		wp[i].params.fence.value = i / 4 + 1;
	}
	t0 = now_ns();
	HIPCHECK(hipSignalExternalSemaphoresAsync(arr, (void *)sp, N, st));
	HIPCHECK(hipStreamSynchronize(st));
	for (int i = 0; i < 4; i++)
		CHECK(so_wait(drm, h[i], N / 4, 10000) == 0, "point %d not signaled", N / 4);
	printf("signal of %d entries: %.1f ms\n", N, (now_ns() - t0) / 1e6);
	t0 = now_ns();
	HIPCHECK(hipWaitExternalSemaphoresAsync(arr, (void *)wp, NW, st));
	HIPCHECK(hipStreamSynchronize(st));
	printf("wait of %d satisfied entries: %.1f ms\n", NW, (now_ns() - t0) / 1e6);
	for (int i = 0; i < 4; i++) {
		HIPCHECK(hipDestroyExternalSemaphore(sem[i]));
		drmSyncobjDestroy(drm, h[i]);
	}
	HIPCHECK(hipStreamDestroy(st));
	settle(0);
	free(arr);
	free(sp);
	free(wp);
}

/* A destroyed handle stays invalid however often its registry slot is
 * reused (the handle carries a generation). */
static void stale_handle(void)
{
	enum { CYCLES = 70000 };
	hipExternalSemaphore_t first = import_new(false, NULL), s;
	uint32_t h = so_create(drm, false);
	int64_t t0 = now_ns();

	HIPCHECK(hipDestroyExternalSemaphore(first));
	for (int i = 0; i < CYCLES; i++) {
		int fd = so_export(drm, h);
		HIPCHECK(import_fd(&s, fd, false));
		CHECK(s != first || i < 0, "cycle %d: a new semaphore got the handle of a destroyed "
		      "one (%p)", i, s);
		HIPCHECK(hipDestroyExternalSemaphore(s));
		if (i == 65535 || i == CYCLES - 1)
			EXPECT_ERR(hipDestroyExternalSemaphore(first), hipErrorInvalidResourceHandle);
	}
	printf("%d import/destroy cycles in %.1f s\n", CYCLES, (now_ns() - t0) / 1e9);
	drmSyncobjDestroy(drm, h);
}

/* ---- ABI flavour mismatch ---------------------------------------------- */

/* HIPEXTSEM_ABI contradicting the loaded runtime (set by the test
 * definition).  A params array of exactly numExtSems elements in the
 * runtime's real layout must be read with the runtime's stride: with the
 * wrong one the flags of element 1 are missed (and, 6.x on 5.x, reads run
 * past the end of the array, which ASan reports). */
static void abi_mismatch(void)
{
	enum { N = 16 };
	const char *forced = getenv("HIPEXTSEM_ABI");
	test_signal_params *sp = calloc(N, sizeof(*sp));
	test_wait_params *wp = calloc(N, sizeof(*wp));
	hipExternalSemaphore_t arr[N];
	off_t m = log_size();
	char line[512];
	int lines;

	CHECK(forced && atoi(forced) != HX_TEST_ABI, "set HIPEXTSEM_ABI to the other flavour");
	for (int i = 0; i < N; i++)
		arr[i] = (hipExternalSemaphore_t)(uintptr_t)(0x1000 + i);
	sp[1].flags = 1;
	wp[1].flags = 1;
	/* The first call resolves the runtime: one line about the override. */
	EXPECT_ERR(hipSignalExternalSemaphoresAsync(arr, (void *)sp, N, NULL), hipErrorInvalidValue);
	lines = log_since(m, line, sizeof(line));
	CHECK(lines == 2, "expected 2 lines (the ignored override, the flags), got %d: \"%s\"",
	      lines, line);
	CHECK(strstr(line, "HIPEXTSEM_ABI") != NULL, "first line does not name HIPEXTSEM_ABI: %s",
	      line);
	m = log_size();
	EXPECT_ERR(hipWaitExternalSemaphoresAsync(arr, (void *)wp, N, NULL), hipErrorInvalidValue);
	CHECK(log_since(m, line, sizeof(line)) == 1 && strstr(line, "paramsArray[1].flags"),
	      "wait: %s", line);
	/* Element 15 is the last one: read with the right stride, its flags
	 * are inside the array. */
	sp[1].flags = 0;
	sp[N - 1].flags = 2;
	EXPECT_ERR(hipSignalExternalSemaphoresAsync(arr, (void *)sp, N, NULL), hipErrorInvalidValue);
	free(sp);
	free(wp);
}

/* ---- environment failures ---------------------------------------------- */

/* Import fails with a clear message (checked against `needle`), once per
 * call, the caller keeps its fd, nothing leaks; the other calls still
 * answer. */
static void env_failure(const char *needle, int want)
{
	hipExternalSemaphore_t s = (hipExternalSemaphore_t)0x1, g = (hipExternalSemaphore_t)0x1234;
	struct hx_stats st;
	int fds0, fd;
	char line[512];
	off_t m;

	stats(&st); /* the shim's first call opens its log file */
	fds0 = fd_count();
	for (int round = 0; round < 3; round++) {
		uint32_t h = 0;
		int p[2] = { -1, -1 };
		if (have_drm) {
			fd = new_syncobj_fd(&h);
		} else {
			CHECK(pipe(p) == 0, "pipe");
			fd = p[0];
		}
		m = log_size();
		EXPECT_ERR(import_fd(&s, fd, round == 1), want);
		int n = log_since(m, line, sizeof(line));
		CHECK(n == 1, "round %d: import logged %d lines, expected 1 (first: \"%s\")", round, n,
		      line);
		if (round == 0)
			CHECK(strstr(line, needle) != NULL, "message \"%s\" does not say \"%s\"", line,
			      needle);
		CHECK(s == (hipExternalSemaphore_t)0x1, "a failed import wrote the handle");
		CHECK(fcntl(fd, F_GETFD) != -1, "a failed import closed the caller's fd");
		close(fd);
		if (p[1] >= 0)
			close(p[1]);
		if (have_drm)
			drmSyncobjDestroy(drm, h);
	}
	CHECK(render_fd_count() == (have_drm ? 1 : 0), "the shim kept a render node open: %d",
	      render_fd_count());
	EXPECT_ERR(signal1(g, 1, NULL), hipErrorInvalidResourceHandle);
	EXPECT_ERR(hipDestroyExternalSemaphore(g), hipErrorInvalidResourceHandle);
	CHECK(fd_count() == fds0, "descriptors: %d -> %d", fds0, fd_count());
	settle(0);
}

static void env_node_missing(void)
{
	env_failure("HIPEXTSEM_RENDER_NODE=/nonexistent", hipErrorNotSupported);
}

static void env_node_devnull(void)
{
	env_failure("no sync object support", hipErrorNotSupported);
}

static void env_no_dri(void)
{
	CHECK(access("/dev/dri", F_OK) != 0, "this case is for machines without /dev/dri");
	env_failure("no DRM render node", hipErrorNotSupported);
}

static void fault_no_syncobj(void)
{
	env_failure("no usable DRM render node with sync objects", hipErrorNotSupported);
	CHECK(hxf_hits > 0, "the fault never fired");
}

static void fault_eacces(void)
{
	env_failure(getenv("HIPEXTSEM_RENDER_NODE") ? "Permission denied" : "permission denied",
		    hipErrorNotSupported);
	CHECK(hxf_hits > 0, "the fault never fired");
}

/* Round trip: the stream waits for an external signal and then signals
 * back. */
static void round_trip(bool timeline)
{
	uint32_t h;
	hipExternalSemaphore_t s = import_new(timeline, &h);
	uint64_t *mark = pinned(8);
	hipStream_t st;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(wait1(s, 2, st));
	stream_mark(st, mark, 1);
	HIPCHECK(signal1(s, 3, st));
	sleep_ms(100);
	CHECK(load64(mark) == 0, "the stream passed an unsignaled wait");
	so_signal(drm, h, timeline ? 2 : 0);
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(load64(mark) == 1, "the stream did not continue after the signal");
	CHECK(so_wait(drm, h, timeline ? 3 : 0, 5000) == 0, "the stream's signal did not arrive");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	drmSyncobjDestroy(drm, h);
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipHostFree(mark));
}

/* A kernel or driver without timeline syncobjs: binary semaphores still
 * work, timeline imports fail clearly and leave the fd with the caller. */
static void fault_no_timeline(void)
{
	hipExternalSemaphore_t s = (hipExternalSemaphore_t)0x1;
	uint32_t h;
	int fd;
	char line[512];
	off_t m;

	round_trip(false);
	CHECK(hxf_hits > 0, "the fault never fired");
	fd = new_syncobj_fd(&h);
	m = log_size();
	EXPECT_ERR(import_fd(&s, fd, true), hipErrorNotSupported);
	CHECK(log_since(m, line, sizeof(line)) == 1 && strstr(line, "timeline"),
	      "expected one line about timelines: \"%s\"", line);
	CHECK(fcntl(fd, F_GETFD) != -1, "a failed import closed the caller's fd");
	close(fd);
	drmSyncobjDestroy(drm, h);
	settle(0);
}

/* A kernel without DRM_IOCTL_SYNCOBJ_EVENTFD (< 6.6): the waiter falls back
 * to the multi-handle wait and says so. */
static void fault_no_eventfd(void)
{
	off_t m = log_size();
	round_trip(true);
	round_trip(false);
	CHECK(hxf_hits > 0, "the fault never fired");
	CHECK(log_contains(m, "multi-handle wait"), "the log does not name the fallback");
	settle(0);
}

/* ---- setuid ---------------------------------------------------------- */

/* Runs `argv` and returns its exit status (-1 if it did not exit). */
static int run(char *const argv[], char *const envp[])
{
	pid_t pid;
	int status;
	CHECK(posix_spawn(&pid, argv[0], NULL, NULL, argv, envp) == 0, "spawn %s", argv[0]);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* setuid-probe is run as nobody, once plain and once setuid (to root):
 * HIPEXTSEM_LOG_FILE must be honoured in the first run and ignored (not
 * even created) in the second.  The probe reports AT_SECURE, so the case
 * cannot pass because the setuid bit did not take. */
static void setuid_case(void)
{
	const char *probe_src = getenv("HX_SETUID_PROBE");
	const char *shim = getenv("HX_SHIM_PATH");
	/* A directory of this process's own: the drm suite runs cases side by
	 * side (tests/vm/run-cases). */
	char dir[64], log_env[96], node_env[96], probe[96], log_path[96];
	snprintf(dir, sizeof(dir), "/tmp/hx-setuid.%ld", (long)getpid());
	snprintf(log_env, sizeof(log_env), "HIPEXTSEM_LOG_FILE=%s/log", dir);
	snprintf(node_env, sizeof(node_env), "HIPEXTSEM_RENDER_NODE=%s/node", dir);
	snprintf(probe, sizeof(probe), "%s/probe", dir);
	snprintf(log_path, sizeof(log_path), "%s/log", dir);
	char *envp[] = { log_env, "HIPEXTSEM_DEBUG=3", node_env, NULL };
	char *argv[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			 probe, (char *)shim, NULL, NULL };
	char cmd[1024];
	struct stat st;

	CHECK(probe_src && shim, "HX_SETUID_PROBE and HX_SHIM_PATH must be set");
	CHECK(getuid() == 0, "this case needs root (it runs in the test VM)");
	snprintf(cmd, sizeof(cmd),
		 "rm -rf %s && mkdir -m 1777 %s && cp '%s' %s && chown root:root %s", dir, dir,
		 probe_src, probe, probe);
	CHECK(system(cmd) == 0, "%s", cmd);

	/* Control: not setuid, the variable is honoured. */
	chmod(probe, 0755);
	argv[6] = "0";
	CHECK(run(argv, envp) == 0, "the plain probe failed");
	CHECK(stat(log_path, &st) == 0 && st.st_size > 0,
	      "the plain probe did not write HIPEXTSEM_LOG_FILE: the check below would prove "
	      "nothing");
	unlink(log_path);

	/* setuid root, run by nobody: AT_SECURE. */
	chmod(probe, 04755);
	argv[6] = "1";
	CHECK(run(argv, envp) == 0, "the setuid probe failed");
	CHECK(stat(log_path, &st) != 0 && errno == ENOENT,
	      "a setuid process created HIPEXTSEM_LOG_FILE from its environment");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	system(cmd);
}

/* ---- leaks ------------------------------------------------------------- */

static void leak(void)
{
	int cycles = atoi(getenv("HX_LEAK_CYCLES") ? getenv("HX_LEAK_CYCLES") : "10000");
	hipStream_t st;
	int fds0, fds1, hc0, hc1, sfd;
	size_t heap0, heap1;
	int64_t t0;

	HIPCHECK(hipStreamCreate(&st));
	/* Warm-up: device, waiter thread, slot chunk. */
	for (int i = 0; i < 2; i++) {
		hipExternalSemaphore_t s = import_new(i, NULL);
		HIPCHECK(signal1(s, 1, st));
		HIPCHECK(wait1(s, 1, st));
		HIPCHECK(hipStreamSynchronize(st));
		HIPCHECK(hipDestroyExternalSemaphore(s));
	}
	settle(0);
	sfd = shim_drm_fd();
	CHECK(sfd >= 0, "the shim's DRM file not found");
	shim_fd = sfd;
	fds0 = fd_count();
	hc0 = handle_count(sfd);
	{
		/* The probe itself works: one live semaphore is one handle. */
		hipExternalSemaphore_t s = import_new(true, NULL);
		CHECK(handle_count(sfd) == hc0 + 1, "handle probe: %d with one more semaphore, %d "
		      "before", handle_count(sfd), hc0);
		HIPCHECK(hipDestroyExternalSemaphore(s));
		CHECK(handle_count(sfd) == hc0, "handle probe: destroy did not free the handle");
	}
	/* Heap in use (every arena): a record the shim keeps per call (a
	 * wait or signal record not freed: tests/mutation) grows it by at
	 * least 64 bytes a cycle, while nothing else here may keep growing.
	 * The sanitizers' allocators report 0 and check nothing. */
	heap0 = mallinfo2().uordblks;
	t0 = now_ns();
	for (int i = 1; i <= cycles; i++) {
		bool tl = i & 1;
		uint32_t h;
		hipExternalSemaphore_t s = import_new(tl, &h);
		HIPCHECK(signal1(s, 5, st));
		HIPCHECK(wait1(s, 5, st));
		if (i % 3 == 0) /* destroy with both still pending */
			HIPCHECK(hipDestroyExternalSemaphore(s));
		HIPCHECK(hipStreamSynchronize(st));
		if (i % 3 != 0)
			HIPCHECK(hipDestroyExternalSemaphore(s));
		drmSyncobjDestroy(drm, h);
		if (i % 2500 == 0 || i == cycles) {
			settle(0);
			fds1 = fd_count();
			hc1 = handle_count(sfd);
			printf("cycle %d: fds %d (start %d), kernel handles %d (start %d)\n", i, fds1,
			       fds0, hc1, hc0);
			CHECK(fds1 == fds0, "descriptor leak");
			CHECK(hc1 == hc0, "syncobj handle leak");
			heap1 = mallinfo2().uordblks;
			printf("cycle %d: heap in use %+lld bytes\n", i, (long long)heap1 - (long long)heap0);
			CHECK(heap1 <= heap0 + 65536 + (size_t)i * 16,
			      "heap grew by %zu bytes in %d cycles: records kept", heap1 - heap0, i);
		}
	}
	printf("%d cycles in %.1f s\n", cycles, (now_ns() - t0) / 1e9);
	HIPCHECK(hipStreamDestroy(st));
}

/* ---- concurrency ------------------------------------------------------- */

#define NT 16
#define NSHARED 8
#define NSTREAMS 4
static struct {
	pthread_mutex_t lock;
	hipExternalSemaphore_t sem;
	uint32_t h;
	uint64_t next; /* next value to signal */
} shared[NSHARED];
static hipStream_t shared_st[NSTREAMS];
static atomic_bool stop;
static atomic_ulong nops, nrejected;

static unsigned rnd(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

static void *stress_body(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;
	hipStream_t own;
	int iter = 0;

	HIPCHECK(hipStreamCreateWithFlags(&own, hipStreamNonBlocking));
	while (!atomic_load(&stop)) {
		unsigned op = rnd(&seed) % 6, k = rnd(&seed) % NSHARED;
		hipStream_t any = (rnd(&seed) & 1) ? own : shared_st[rnd(&seed) % NSTREAMS];
		hipExternalSemaphore_t s;
		uint64_t v;
		hipError_t e;

		switch (op) {
		case 0: { /* own semaphore: import, signal, wait, destroy while pending */
			bool tl = rnd(&seed) & 1;
			s = import_new(tl, NULL);
			HIPCHECK(signal1(s, 1, own));
			HIPCHECK(wait1(s, 1, any));
			HIPCHECK(hipDestroyExternalSemaphore(s));
			break;
		}
		case 1: /* signal a shared semaphore */
		case 2:
			pthread_mutex_lock(&shared[k].lock);
			v = ++shared[k].next;
			e = signal1(shared[k].sem, v, any);
			pthread_mutex_unlock(&shared[k].lock);
			CHECK(e == hipSuccess, "shared signal: %d", (int)e);
			break;
		case 3: /* wait for a value some stream will signal */
			pthread_mutex_lock(&shared[k].lock);
			v = shared[k].next;
			if (v)
				HIPCHECK(wait1(shared[k].sem, v - rnd(&seed) % (v < 4 ? v : 4), any));
			pthread_mutex_unlock(&shared[k].lock);
			break;
		case 4: { /* replace a shared semaphore; a stale copy is rejected */
			hipExternalSemaphore_t old;
			pthread_mutex_lock(&shared[k].lock);
			old = shared[k].sem;
			HIPCHECK(hipDestroyExternalSemaphore(old));
			drmSyncobjDestroy(drm, shared[k].h);
			shared[k].sem = import_new(true, &shared[k].h);
			shared[k].next = 0;
			pthread_mutex_unlock(&shared[k].lock);
			e = signal1(old, 1, any);
			CHECK(e == hipErrorInvalidResourceHandle, "stale handle: %d", (int)e);
			atomic_fetch_add(&nrejected, 1);
			break;
		}
		case 5: /* stream churn */
			if (++iter % 8 == 0) {
				HIPCHECK(hipStreamDestroy(own));
				HIPCHECK(hipStreamCreateWithFlags(&own, hipStreamNonBlocking));
			} else {
				HIPCHECK(hipStreamSynchronize(own));
			}
			break;
		}
		atomic_fetch_add(&nops, 1);
	}
	HIPCHECK(hipStreamSynchronize(own));
	HIPCHECK(hipStreamDestroy(own));
	return NULL;
}

static void stress(void)
{
	int secs = atoi(getenv("HX_STRESS_SECS") ? getenv("HX_STRESS_SECS") : "10");
	pthread_t th[NT];
	int fds0;
	struct hx_stats st;

	/* Watchdog: a deadlock fails the case instead of hanging the suite. */
	alarm((unsigned)secs + 60);
	round_trip(true);
	settle(0);
	fds0 = fd_count();
	for (int i = 0; i < NSTREAMS; i++)
		HIPCHECK(hipStreamCreateWithFlags(&shared_st[i], hipStreamNonBlocking));
	for (int i = 0; i < NSHARED; i++) {
		pthread_mutex_init(&shared[i].lock, NULL);
		shared[i].sem = import_new(true, &shared[i].h);
	}
	for (int i = 0; i < NT; i++)
		pthread_create(&th[i], NULL, stress_body, (void *)(uintptr_t)i);
	sleep((unsigned)secs);
	atomic_store(&stop, true);
	for (int i = 0; i < NT; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NSTREAMS; i++) {
		HIPCHECK(hipStreamSynchronize(shared_st[i]));
		HIPCHECK(hipStreamDestroy(shared_st[i]));
	}
	stats(&st);
	for (int i = 0; i < NSHARED; i++) {
		HIPCHECK(hipDestroyExternalSemaphore(shared[i].sem));
		drmSyncobjDestroy(drm, shared[i].h);
	}
	settle(0);
	CHECK(fd_count() == fds0, "descriptors: %d -> %d", fds0, fd_count());
	printf("%d threads, %d s: %lu operations, %lu stale handles rejected\n", NT, secs,
	       (unsigned long)atomic_load(&nops), (unsigned long)atomic_load(&nrejected));
	CHECK(atomic_load(&nops) > 100, "too little progress: %lu operations",
	      (unsigned long)atomic_load(&nops));
}

/* ---- fork -------------------------------------------------------------- */

static void fork_case(void)
{
	uint32_t h;
	hipExternalSemaphore_t s = import_new(true, &h);
	hipStream_t st;
	int status, sfd;
	pid_t pid;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(wait1(s, 1, st)); /* pending in the parent across the fork */
	sfd = shim_drm_fd();
	CHECK(sfd >= 0 && render_fd_count() == 2, "render fds before fork: %d", render_fd_count());

	/* A child that does not use the shim at all. */
	pid = fork();
	if (pid == 0)
		_exit(render_fd_count() == 1 ? 0 : 7);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "plain child: status %#x (7: the child kept the parent's shim DRM fd)", status);
	/* A child that execs: the test program itself (the shim is preloaded
	 * again; with the sanitizer builds an uninstrumented program could
	 * not take the instrumented preload). */
	pid = fork();
	if (pid == 0) {
		execl(self_exe, self_exe, "noop", (char *)NULL);
		_exit(127);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "exec child: status %#x", status);

	/* A child that uses the shim: fresh state. */
	pid = fork();
	if (pid == 0) {
		struct hx_stats cs;
		hipExternalSemaphore_t c;
		uint32_t ch;
		uint64_t *mark;
		hipStream_t cst;

		alarm(30);
		stats(&cs);
		CHECK(cs.live_sems == 0 && cs.pending_waits == 0,
		      "child inherited %u semaphores, %u waits", cs.live_sems, cs.pending_waits);
		EXPECT_ERR(signal1(s, 2, NULL), hipErrorInvalidResourceHandle);
		EXPECT_ERR(hipDestroyExternalSemaphore(s), hipErrorInvalidResourceHandle);
		CHECK(render_fd_count() == 1, "the child holds the parent's shim DRM fd");
		/* Its own device and waiter thread. */
		c = import_new(true, &ch);
		CHECK(render_fd_count() == 2, "the child did not open a DRM file of its own");
		mark = pinned(8);
		HIPCHECK(hipStreamCreate(&cst));
		HIPCHECK(wait1(c, 4, cst));
		stream_mark(cst, mark, 1);
		sleep_ms(50);
		CHECK(load64(mark) == 0, "child's stream passed an unsignaled wait");
		so_signal(drm, ch, 4);
		for (int i = 0; i < 500 && load64(mark) == 0; i++)
			sleep_ms(10);
		CHECK(load64(mark) == 1, "the child's waiter did not release its wait");
		HIPCHECK(hipDestroyExternalSemaphore(c));
		drmSyncobjDestroy(drm, ch);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "shim child: status %#x", status);

	/* The parent is unaffected: its pending wait completes, its
	 * semaphore still signals. */
	so_signal(drm, h, 1);
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(signal1(s, 2, st));
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(so_wait(drm, h, 2, 5000) == 0, "the parent's semaphore no longer works after fork");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	settle(0);
}

/* ---- exit and teardown ------------------------------------------------- */

/* Child modes for exit_case: set up pending work, then leave. */
static void *exit_from_thread(void *p)
{
	(void)p;
	exit(0);
}

static void exit_child(const char *mode)
{
	uint32_t h;
	hipExternalSemaphore_t s = import_new(true, &h), b = import_new(false, NULL);
	hipStream_t st;

	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(wait1(s, 10, st));   /* never signaled */
	HIPCHECK(wait1(b, 0, NULL));  /* never signaled, on the null stream */
	HIPCHECK(signal1(s, 11, st)); /* behind the wait */
	if (!strcmp(mode, "destroyed")) {
		HIPCHECK(hipDestroyExternalSemaphore(s));
		HIPCHECK(hipDestroyExternalSemaphore(b));
	}
	if (!strcmp(mode, "thread")) {
		pthread_t t;
		pthread_create(&t, NULL, exit_from_thread, NULL);
		pause();
	}
	exit(0);
}

static void exit_case(void)
{
	static const char *const modes[] = { "main", "destroyed", "thread" };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char *argv[] = { self_exe, "exit-child", (char *)modes[i], NULL };
		int64_t t0 = now_ns();
		off_t m = log_size();
		int rc = run(argv, environ);
		double secs = (now_ns() - t0) / 1e9;
		printf("exit with pending waits (%s): status %d after %.2f s\n", modes[i], rc, secs);
		CHECK(rc == 0, "the process did not exit cleanly (%d)", rc);
		CHECK(secs < 10, "exit took %.1f s", secs);
		CHECK(log_contains(m, "pending wait"), "no line about the released waits");
	}
}

/* Teardown with work pending: destroy while a wait is pending (the wait
 * still completes on the signal), and hipStreamDestroy of a stream held by
 * a wait: like ROCm, cpuhip's hipStreamDestroy returns once the stream has
 * drained, i.e. after the semaphore is signaled. */
struct destroy_arg {
	hipStream_t st;
	atomic_bool done;
	hipError_t err;
};

static void *stream_destroyer(void *p)
{
	struct destroy_arg *a = p;
	a->err = hipStreamDestroy(a->st);
	atomic_store(&a->done, true);
	return NULL;
}

static void teardown(void)
{
	uint32_t h;
	hipExternalSemaphore_t s = import_new(true, &h);
	struct destroy_arg a = { 0 };
	uint64_t *mark = pinned(8);
	pthread_t t;

	HIPCHECK(hipStreamCreate(&a.st));
	HIPCHECK(wait1(s, 3, a.st));
	stream_mark(a.st, mark, 1);
	HIPCHECK(hipDestroyExternalSemaphore(s)); /* destroy with the wait pending */
	pthread_create(&t, NULL, stream_destroyer, &a);
	sleep_ms(300);
	CHECK(!atomic_load(&a.done), "hipStreamDestroy returned while the stream was held");
	CHECK(load64(mark) == 0, "the stream passed the wait");
	so_signal(drm, h, 3);
	for (int i = 0; i < 500 && !atomic_load(&a.done); i++)
		sleep_ms(10);
	CHECK(atomic_load(&a.done), "hipStreamDestroy did not return after the signal");
	pthread_join(t, NULL);
	HIPCHECK(a.err);
	CHECK(load64(mark) == 1, "work after the wait did not run");
	drmSyncobjDestroy(drm, h);
	HIPCHECK(hipHostFree(mark));
	settle(0);

	/* A signal enqueued on a stream that is then destroyed still runs. */
	s = import_new(true, &h);
	HIPCHECK(hipStreamCreate(&a.st));
	stream_delay(a.st, 100 * 1000);
	HIPCHECK(signal1(s, 4, a.st));
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(a.st));
	CHECK(so_wait(drm, h, 4, 5000) == 0, "the signal was lost with its stream");
	drmSyncobjDestroy(drm, h);
	settle(0);
}

static const struct {
	const char *name;
	void (*fn)(void);
	bool drm;
} cases[] = {
	{ "badinput", badinput, false },
	{ "bigcount", bigcount, true },
	{ "stale-handle", stale_handle, true },
	{ "abi-mismatch", abi_mismatch, false },
	{ "env-node-missing", env_node_missing, false },
	{ "env-node-devnull", env_node_devnull, false },
	{ "env-no-dri", env_no_dri, false },
	{ "fault-no-syncobj", fault_no_syncobj, true },
	{ "fault-no-timeline", fault_no_timeline, true },
	{ "fault-no-eventfd", fault_no_eventfd, true },
	{ "fault-eacces", fault_eacces, true },
	{ "setuid", setuid_case, true },
	{ "leak", leak, true },
	{ "stress", stress, true },
	{ "fork", fork_case, true },
	{ "exit", exit_case, true },
	{ "teardown", teardown, true },
};

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: case timed out (hang or deadlock)\n";
	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(124);
}

static unsigned parse_faults(const char *s)
{
	unsigned f = 0;
	if (!s)
		return 0;
	if (strstr(s, "no-syncobj"))
		f |= HXF_NO_SYNCOBJ;
	if (strstr(s, "no-timeline"))
		f |= HXF_NO_TIMELINE;
	if (strstr(s, "no-eventfd"))
		f |= HXF_NO_EVENTFD;
	if (strstr(s, "enotty"))
		f |= HXF_EVENTFD_ENOTTY;
	if (strstr(s, "eacces"))
		f |= HXF_OPEN_EACCES;
	return f;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "";
	bool own_log = false;
	size_t i;

	self_exe = realpath("/proc/self/exe", NULL);
	signal(SIGALRM, on_alarm);
	alarm(240);
	if (!strcmp(name, "noop"))
		return shim_loaded() ? 0 : 3;
	if (!strcmp(name, "exit-child")) {
		have_drm = true;
		drm = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
		exit_child(argc > 2 ? argv[2] : "main");
	}
	expect_shim();
	/* Before the first call into the shim, which reads it once. */
	if (getenv("HIPEXTSEM_LOG_FILE")) {
		snprintf(logpath, sizeof(logpath), "%s", getenv("HIPEXTSEM_LOG_FILE"));
	} else {
		int fd;
		snprintf(logpath, sizeof(logpath), "/tmp/hx-hostile-log.XXXXXX");
		fd = mkstemp(logpath);
		CHECK(fd >= 0, "mkstemp");
		close(fd);
		setenv("HIPEXTSEM_LOG_FILE", logpath, 1);
		own_log = true;
	}
	if (getenv("HX_TABLE_OUT"))
		table = fopen(getenv("HX_TABLE_OUT"), "a");

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(cases[i].name, name))
			break;
	if (i == sizeof(cases) / sizeof(cases[0])) {
		fprintf(stderr, "unknown case '%s'; cases:", name);
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			fprintf(stderr, " %s", cases[i].name);
		fputc('\n', stderr);
		return 2;
	}
	have_drm = access("/dev/dri/renderD128", F_OK) == 0;
	if (cases[i].drm && !have_drm)
		FAIL("case %s needs /dev/dri/renderD128: run it in the test VM", name);
	/* Not drm_open(): HIPEXTSEM_RENDER_NODE is the shim's, and some cases
	 * point it at something that is not a DRM device. */
	if (have_drm && (drm = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC)) < 0)
		FAIL("cannot open /dev/dri/renderD128: %s", strerror(errno));
	HIPCHECK(hipInit(0));
	HIPCHECK(hipSetDevice(0));
	/* Armed after the test's own setup: only the shim meets the faults. */
	hxf_faults = parse_faults(getenv("HX_FAULTS"));
	cases[i].fn();
	if (table)
		fclose(table);
	if (own_log)
		unlink(logpath);
	printf("ok %s (abi%d)\n", name, HX_TEST_ABI);
	return 0;
}
