/* SPDX-License-Identifier: MIT */
/*
 * Small helpers for the shim's tests: checks that abort the case with a
 * message, raw syncobj access (the "Vulkan side"), and the per-flavour
 * parameter layouts.
 *
 * Built with -DHX_TEST_ABI=5 or 6 to match the runtime it links against.
 * HX_TEST_EXPECT=shim|stock in the environment says whether the preload is
 * expected; every case checks that this matches reality, so a case can
 * never pass for the wrong reason.
 */
#ifndef HXTEST_H
#define HXTEST_H

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "hipextsem/hip_api.h"

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

#define FAIL(...)                                                                            \
	do {                                                                                 \
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                         \
		fprintf(stderr, __VA_ARGS__);                                                \
		fputc('\n', stderr);                                                         \
		exit(1);                                                                     \
	} while (0)

#define CHECK(cond, ...)                                                                     \
	do {                                                                                 \
		if (!(cond))                                                                 \
			FAIL("check failed: " #cond ": " __VA_ARGS__);                       \
	} while (0)

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

/* ---- the "Vulkan side": raw syncobjs on our own DRM file ---- */

static inline int drm_open(void)
{
	const char *node = getenv("HIPEXTSEM_RENDER_NODE");
	int fd = open(node ? node : "/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		FAIL("cannot open the render node (%s): %s — this case must run inside the "
		     "test VM", node ? node : "/dev/dri/renderD128", strerror(errno));
	return fd;
}

static inline uint32_t so_create(int drm, bool signaled)
{
	uint32_t h;
	CHECK(drmSyncobjCreate(drm, signaled ? DRM_SYNCOBJ_CREATE_SIGNALED : 0, &h) == 0,
	      "drmSyncobjCreate: %s", strerror(errno));
	return h;
}

static inline int so_export(int drm, uint32_t h)
{
	int fd = -1;
	CHECK(drmSyncobjHandleToFD(drm, h, &fd) == 0, "drmSyncobjHandleToFD: %s", strerror(errno));
	return fd;
}

static inline void so_signal(int drm, uint32_t h, uint64_t point)
{
	if (point == 0)
		CHECK(drmSyncobjSignal(drm, &h, 1) == 0, "drmSyncobjSignal: %s", strerror(errno));
	else
		CHECK(drmSyncobjTimelineSignal(drm, &h, &point, 1) == 0,
		      "drmSyncobjTimelineSignal: %s", strerror(errno));
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
	int64_t deadline = now_ns() + timeout_ms * 1000000;
	int ret = drmSyncobjTimelineWait(drm, &h, &point, 1, deadline,
					 DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	return ret ? -errno : 0;
}

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

#endif
