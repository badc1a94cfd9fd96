/* SPDX-License-Identifier: MIT */
/*
 * The C tests' one harness (tests/README.md, "The test harness"):
 *
 *  - checks that end the case with a message (FAIL, CHECK; HIPCHECK and
 *    EXPECT_ERR for HIP calls) and a progress line (hx_note);
 *  - clocks and sleeps (now_ns, deadline_ms, sleep_ms);
 *  - raw sync objects on the test's own DRM file, the "Vulkan side":
 *    drm_open, so_create/so_export/so_import/so_signal/so_query/so_wait,
 *    and the delayed signal (signal_later: a thread signals later);
 *  - the HIP side, when built with -DHX_TEST_ABI=5 or 6 to match the
 *    runtime it links against: the per-flavour parameter layouts,
 *    import/signal/wait of one semaphore, stream marks;
 *  - the failing libdrm definitions (hxfault.c, linked only into the
 *    programs that inject faults into the shim's DRM calls): declared at
 *    the end, "fault injection".
 *
 * HX_TEST_EXPECT=shim|stock in the environment says whether the preload is
 * expected; every HIP case checks that this matches reality, so a case can
 * never pass for the wrong reason.  The DRM cases fail (never pass) where
 * there is no render node: they run inside the test VM (scripts/vm-run).
 */
#ifndef HXTEST_H
#define HXTEST_H

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#ifdef HX_TEST_ABI
#include "hipextsem/hip_api.h"
#endif

/* DRM_IOCTL_SYNCOBJ_EVENTFD appeared in Linux 6.6 and in libdrm's copy of
 * drm.h after Debian 12's 2.4.114: the uAPI, where the headers lack it. */
#ifndef DRM_IOCTL_SYNCOBJ_EVENTFD
struct drm_syncobj_eventfd {
	uint32_t handle;
	uint32_t flags; /* 0 or DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE */
	uint64_t point;
	int32_t fd;
	uint32_t pad;
};
#define DRM_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct drm_syncobj_eventfd)
#endif
#ifndef DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE
#define DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE (1 << 2)
#endif

/* The HIP side: only with -DHX_TEST_ABI=5 or 6. */
#ifdef HX_TEST_ABI
#if HX_TEST_ABI == 5
typedef struct hx_sem_desc_v5 test_desc;
typedef struct hx_sem_signal_params_v5 test_signal_params;
typedef struct hx_sem_wait_params_v5 test_wait_params;
#elif HX_TEST_ABI == 6
typedef struct hx_sem_desc_v6 test_desc;
typedef struct hx_sem_signal_params_v6 test_signal_params;
typedef struct hx_sem_wait_params_v6 test_wait_params;
#else
#error "HX_TEST_ABI must be 5 or 6"
#endif
#endif

#define FAIL(...)                                                                            \
	do {                                                                                 \
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                         \
		fprintf(stderr, __VA_ARGS__);                                                \
		fputc('\n', stderr);                                                         \
		fflush(NULL);                                                                \
		exit(1);                                                                     \
	} while (0)

#define CHECK(cond, ...)                                                                     \
	do {                                                                                 \
		if (!(cond))                                                                 \
			FAIL("check failed: " #cond ": " __VA_ARGS__);                       \
	} while (0)

/* A progress line on stdout ("ok: ..."), TAP comment friendly. */
static inline __attribute__((format(printf, 1, 2))) void hx_note(const char *fmt, ...)
{
	va_list ap;

	fputs("ok: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

#define HIPCHECK(call)                                                                       \
	do {                                                                                 \
		hipError_t e_ = (call);                                                      \
		if (e_ != hipSuccess)                                                        \
			FAIL("%s returned %d", #call, (int)e_);                              \
	} while (0)

#define EXPECT_ERR(call, want)                                                               \
	do {                                                                                 \
		hipError_t e_ = (call);                                                      \
		if ((int)e_ != (int)(want))                                                  \
			FAIL("%s returned %d, expected %d", #call, (int)e_, (int)(want));    \
	} while (0)

static inline int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* An absolute CLOCK_MONOTONIC deadline `ms` from now, as the syncobj wait
 * ioctls take it. */
static inline int64_t deadline_ms(int64_t ms)
{
	return now_ns() + ms * 1000000;
}

static inline void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* True when the shim is preloaded (it exports hipextsemGetStats). */
static inline bool shim_loaded(void)
{
	return dlsym(RTLD_DEFAULT, "hipextsemGetStats") != NULL;
}

/* Returns true for "shim", false for "stock", and fails the case if the
 * environment and reality disagree. */
static inline bool expect_shim(void)
{
	const char *e = getenv("HX_TEST_EXPECT");
	bool want;
	if (!e)
		FAIL("HX_TEST_EXPECT is not set (shim or stock)");
	want = strcmp(e, "shim") == 0;
	if (want != shim_loaded())
		FAIL("HX_TEST_EXPECT=%s but the shim is %s", e, shim_loaded() ? "loaded" : "absent");
	return want;
}

/* ---- the "Vulkan side": raw syncobjs on the test's own DRM file ---- */

/* The render node: $HIPEXTSEM_RENDER_NODE (the one the shim opens too)
 * or /dev/dri/renderD128. */
static inline const char *render_node_path(void)
{
	const char *node = getenv("HIPEXTSEM_RENDER_NODE");
	return node && *node ? node : "/dev/dri/renderD128";
}

/* Opens a new DRM file on the render node, or fails the case. */
static inline int drm_open(void)
{
	const char *node = render_node_path();
	struct stat st;
	int fd;

	if (stat(node, &st) != 0)
		FAIL("%s: %s: this case must run inside the test VM (scripts/vm-run)", node,
		     strerror(errno));
	if (!S_ISCHR(st.st_mode))
		FAIL("%s is not a character device", node);
	fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		FAIL("cannot open the render node (%s): %s", node, strerror(errno));
	return fd;
}

static inline uint32_t so_create(int drm, bool signaled)
{
	uint32_t h = 0;
	CHECK(drmSyncobjCreate(drm, signaled ? DRM_SYNCOBJ_CREATE_SIGNALED : 0, &h) == 0,
	      "drmSyncobjCreate: %s", strerror(errno));
	CHECK(h != 0, "drmSyncobjCreate gave handle 0");
	return h;
}

static inline int so_export(int drm, uint32_t h)
{
	int fd = -1;
	CHECK(drmSyncobjHandleToFD(drm, h, &fd) == 0, "drmSyncobjHandleToFD: %s", strerror(errno));
	return fd;
}

/* A handle on `drm` for the syncobj behind `fd` (the fd stays open). */
static inline uint32_t so_import(int drm, int fd)
{
	uint32_t h = 0;
	CHECK(drmSyncobjFDToHandle(drm, fd, &h) == 0, "drmSyncobjFDToHandle: %s", strerror(errno));
	return h;
}

static inline void so_signal(int drm, uint32_t h, uint64_t point)
{
	if (point == 0)
		CHECK(drmSyncobjSignal(drm, &h, 1) == 0, "drmSyncobjSignal: %s", strerror(errno));
	else
		CHECK(drmSyncobjTimelineSignal(drm, &h, &point, 1) == 0,
		      "drmSyncobjTimelineSignal (point %" PRIu64 "): %s", point, strerror(errno));
}

static inline uint64_t so_query(int drm, uint32_t h)
{
	uint64_t v = 0;
	CHECK(drmSyncobjQuery(drm, &h, &v, 1) == 0, "drmSyncobjQuery: %s", strerror(errno));
	return v;
}

/* 0 if `point` (0: binary) is signaled within timeout_ms, else -ETIME. */
static inline int so_wait(int drm, uint32_t h, uint64_t point, int64_t timeout_ms)
{
	int ret = drmSyncobjTimelineWait(drm, &h, &point, 1, deadline_ms(timeout_ms),
					 DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	return ret ? -errno : 0;
}

/* The delayed signal: a thread signals (h, point) on `drm` (point 0:
 * binary) `after_ms` from now; `due` turns true just before it signals, so
 * that a case can tell a wait that passed before the signal was made.
 * later_join() waits for the thread. */
struct hx_later {
	pthread_t th;
	int drm;
	uint32_t h;
	uint64_t point;
	unsigned after_ms;
	atomic_bool due;
};

static inline void *hx_later_main(void *p)
{
	struct hx_later *l = p;

	sleep_ms(l->after_ms);
	atomic_store(&l->due, true);
	so_signal(l->drm, l->h, l->point);
	return NULL;
}

static inline void signal_later(struct hx_later *l, int drm, uint32_t h, uint64_t point,
				unsigned after_ms)
{
	int r;

	l->drm = drm;
	l->h = h;
	l->point = point;
	l->after_ms = after_ms;
	atomic_init(&l->due, false);
	r = pthread_create(&l->th, NULL, hx_later_main, l);
	CHECK(r == 0, "pthread_create: %s", strerror(r));
}

static inline void later_join(struct hx_later *l)
{
	CHECK(pthread_join(l->th, NULL) == 0, "pthread_join");
}

#ifdef HX_TEST_ABI

/* ---- HIP side ---- */

static inline hipError_t import_fd(hipExternalSemaphore_t *out, int fd, bool timeline)
{
	test_desc d;
	memset(&d, 0, sizeof(d));
	d.type = timeline ? HX_SEM_HANDLE_TIMELINE_FD : HX_SEM_HANDLE_OPAQUE_FD;
	d.handle.fd = fd;
	return hipImportExternalSemaphore(out, (const hipExternalSemaphoreHandleDesc *)&d);
}

/* A fresh unsignaled syncobj on `drm` (its handle in *h), imported
 * through HIP as a binary or timeline semaphore. */
static inline hipExternalSemaphore_t sem_import_new(int drm, uint32_t *h, bool timeline)
{
	hipExternalSemaphore_t s = NULL;

	*h = so_create(drm, false);
	HIPCHECK(import_fd(&s, so_export(drm, *h), timeline));
	CHECK(s != NULL, "import gave a NULL handle");
	return s;
}

static inline hipError_t signal1(hipExternalSemaphore_t s, uint64_t v, hipStream_t st)
{
	test_signal_params p;
	memset(&p, 0, sizeof(p));
	p.params.fence.value = v;
	return hipSignalExternalSemaphoresAsync(&s, (const hipExternalSemaphoreSignalParams *)&p,
						1, st);
}

static inline hipError_t wait1(hipExternalSemaphore_t s, uint64_t v, hipStream_t st)
{
	test_wait_params p;
	memset(&p, 0, sizeof(p));
	p.params.fence.value = v;
	return hipWaitExternalSemaphoresAsync(&s, (const hipExternalSemaphoreWaitParams *)&p, 1,
					      st);
}

/* cpuhip's test-only extension: the stream sleeps for usec.  Looked up at
 * run time so that these tests fail loudly on any other runtime. */
static inline void stream_delay(hipStream_t st, unsigned usec)
{
	typedef hipError_t (*delay_fn)(hipStream_t, unsigned);
	delay_fn f = (delay_fn)dlsym(RTLD_DEFAULT, "cpuhipTestEnqueueDelay");
	CHECK(f != NULL, "cpuhipTestEnqueueDelay not found: not running on cpuhip");
	HIPCHECK(f(st, usec));
}

struct hx_mark_req {
	uint64_t *flag;
	uint64_t v;
};

static inline void hx_mark_cb(hipStream_t st, hipError_t e, void *p)
{
	struct hx_mark_req *m = p;

	(void)st;
	(void)e;
	__atomic_store_n(m->flag, m->v, __ATOMIC_RELEASE);
	free(m);
}

/* Enqueues a write of `v` to *flag: proves when later stream work ran.
 * On 5.2's hipStreamPerThread by a stream callback: that release's stream
 * write does not take the handle (it crashes there, docs/streams.md), and
 * a copy would block this thread until the stream's earlier work (a
 * semaphore wait the test has not signalled yet) is done.  With a pageable
 * side hipamd rocm-5.2.3 src/hip_memory.cpp ihipMemcpy waits for the copy
 * (awaitCompletion); between two pinned allocations ROCclr's
 * DmaBlitManager::copyBuffer (clr rocm-5.7.1 to amd-staging 2024-10,
 * rocclr/device/rocm/rocblit.cpp) waits for the GPU
 * (releaseGpuMemoryFence) and copies on the CPU, in the caller's thread
 * under direct dispatch; real 5.2.3 blocked there too (docs/testing.md, "AMD's real runtimes", item 1).
 * hipStreamAddCallback resolves hipStreamPerThread on 5.2 (hip::isValid)
 * and only enqueues. */
static inline void stream_mark(hipStream_t st, uint64_t *flag, uint64_t v)
{
	struct hx_mark_req *m;
	int version = 0;

	if (st == hipStreamPerThread)
		HIPCHECK(hipRuntimeGetVersion(&version));
	if (st != hipStreamPerThread || version >= 50300000) {
		HIPCHECK(hipStreamWriteValue64(st, flag, v, 0));
		return;
	}
	m = malloc(sizeof(*m));
	if (!m)
		FAIL("out of memory");
	m->flag = flag;
	m->v = v;
	HIPCHECK(hipStreamAddCallback(st, hx_mark_cb, m, 0));
}

static inline uint64_t load64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void *pinned(size_t n)
{
	void *p = NULL;
	HIPCHECK(hipHostMalloc(&p, n, 0));
	memset(p, 0, n);
	return p;
}

#endif /* HX_TEST_ABI */

/* The threads of this process: returns how many there are.  The ids of
 * those whose name starts with `prefix` go to tids[] (the first `max` of
 * them; tids may be NULL with max 0), their number to *nmatch.  The order
 * is the same from one call to the next. */
static inline int list_threads(const char *prefix, long *tids, int max, int *nmatch)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int all = 0;

	*nmatch = 0;
	while (d && (de = readdir(d))) {
		char path[300], comm[64] = "";
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		all++;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && strncmp(comm, prefix, strlen(prefix)) == 0) {
			if (*nmatch < max)
				tids[*nmatch] = atol(de->d_name);
			(*nmatch)++;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return all;
}

static inline int count_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 4096; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			n++;
	return n;
}

/* ---- fault injection: the failing libdrm definitions (hxfault.c) ----
 * A program linked with hxfault.c (and export_dynamic) defines libdrm's
 * sync object calls itself; they come first in the lookup order, so they
 * see the shim's calls.  Each call goes: the fault plan (below), then the
 * program's before hook, then libdrm, then its after hook (df_hooks).  A
 * failed drmSyncobj* call answers -EIO, a failed drmIoctl -1, both with
 * errno EIO.  drmIoctl is taken apart only for the two requests the shim
 * makes directly (the last-point query and eventfd registration); any
 * other request goes straight to libdrm. */

enum df_call {
	DF_CREATE,
	DF_DESTROY,
	DF_FD2H,      /* drmSyncobjFDToHandle */
	DF_H2FD,      /* drmSyncobjHandleToFD */
	DF_IMPORT_SF, /* drmSyncobjImportSyncFile */
	DF_SIGNAL,
	DF_TLSIGNAL,
	DF_RESET,
	DF_QUERY,     /* drmSyncobjQuery */
	DF_WAIT,
	DF_TLWAIT,
	DF_EVENTFD,   /* drmIoctl(DRM_IOCTL_SYNCOBJ_EVENTFD) */
	DF_QUERY_IOCTL, /* drmIoctl(DRM_IOCTL_SYNCOBJ_QUERY) */
	DF_N
};

/* The calls' names as the tests write them ("create", "fd-to-handle",
 * ..., "eventfd"); DF_QUERY_IOCTL is "query" too: to a test, both are
 * the shim's query of a syncobj's points. */
extern const char *const df_name[DF_N];

/* One call as the definitions see it; a hook may change `points` (it may
 * point them at `scratch`). */
struct df_args {
	enum df_call call;
	int fd;
	const void *ra;           /* the caller's return address */
	const uint32_t *handles;  /* the handle(s); NULL where the call has none */
	uint64_t *points;         /* signal, query and timeline wait */
	uint32_t count;           /* the number of handles */
	int64_t timeout;          /* waits */
	unsigned flags;           /* create and waits */
	unsigned long request;    /* drmIoctl */
	void *arg;                /* drmIoctl's argument */
	uint64_t scratch[8];
};

enum df_verdict {
	DF_PASS, /* on to libdrm */
	DF_FAIL, /* fails with EIO */
	DF_SKIP, /* answers 0 without calling libdrm (a dropped call) */
};

/* The fault plan: which calls are the shim's, counted, and failed.  A call
 * is the shim's when it is not on the test's own DRM file: *own_fd, read
 * at each call (-1: nothing is the shim's; NULL, the default: the plan is
 * off, only the hooks see the calls). */
void df_own_fd(const int *own_fd);
/* While on, every call of the shim's is counted per kind (from 1); gives
 * the state before. */
bool df_count(bool on);
void df_count_reset(void);
int df_counted(enum df_call c);
/* Fails the shim's call of kind c whose count (df_count on) is n: the
 * Nth call of that kind. */
void df_fail_nth(enum df_call c, int n);
/* Fails the next n calls of kind c of the shim's for which the match hook
 * (if any) is true (n 0: none). */
void df_fail_next(enum df_call c, int n);
/* No call fails (the kind is forgotten, the counts stay). */
void df_fail_none(void);
/* The failures the plan injected. */
int df_hits(void);
void df_hits_reset(void);

/* The program's hooks (each may be NULL).  match: with df_fail_next,
 * whether this call of the planned kind is one to fail.  before: after
 * the plan let the call go, its verdict.  after: what libdrm answered. */
void df_hooks(bool (*match)(const struct df_args *a),
	      enum df_verdict (*before)(struct df_args *a),
	      void (*after)(const struct df_args *a, int ret));

/* Looks libdrm's definitions up now (they are also looked up, once, at
 * the first call): a program calls it before any thread may hold the
 * loader's lock (a dlopen's constructor) while it waits for one of these
 * calls.  Run from hxfault.c's constructor as well. */
void df_init(void);

#endif
