/* SPDX-License-Identifier: MIT */
/*
 * The semaphore registry: handles, import and destroy, the DRM device,
 * stats and fork handling, and the argument checks signal.c and wait.c
 * share.  Its state (registry.h) is one struct under one lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph_common.h"
#include "log.h"
#include "noise.h"
#include "ops.h"
#include "registry.h"
#include "runtime.h"
#include "sem.h"
#include "streams.h"
#include "trace.h"

struct hx_registry hx_reg = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.dev = { .fd = -1 },
	.wait_value_attr = -1,
	.waiter_wakes_at = INT64_MAX,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
atomic_bool hx_reg_ready;

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

static void init_once_fn(void)
{
	hx_runtime_init();
	hx_trace_init();
	hx_reg.stuck_ns = hx_getenv_long("HIPEXTSEM_STUCK_MS", 5000, 0, 86400000) * 1000000LL;
	hx_reg.pid = getpid();
	hx_reg_op_pool_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	/* Registered after the registry's: run before it at fork, so the
	 * capture guard and the graph locks are taken before the registry
	 * lock, in the order every call takes them (graph_fork.c). */
	hx_graph_fork_setup();
}

bool hx_reg_init(void)
{
	/* First, outside init_once: the runtime's look-ups take glibc's
	 * loader lock (runtime.c: rt_lookup). */
	(void)hx_runtime_init();
	pthread_once(&init_once, init_once_fn);
	/* The graph calls and the import, before any lock of theirs. */
	if (hx_rt.ok)
		hx_runtime_thread_prepare();
	return hx_rt.ok;
}

void hx_reg_mark_ready(void)
{
	atomic_store_explicit(&hx_reg_ready, true, memory_order_release);
}

/* ---- registry ---------------------------------------------------------- */

/* The free indices form a ring of hx_reg.cap entries starting at
 * hx_reg.free_head.  Growing adds the next chunk. */
static int grow_locked(void)
{
	unsigned c = 0;
	uint32_t size, ncap;
	struct reg_entry *chunk;
	uint32_t *f;

	while (c < REG_NCHUNKS && atomic_load_explicit(&hx_reg.chunks[c], memory_order_relaxed))
		c++;
	if (c == REG_NCHUNKS || hx_reg.cap >= INDEX_MASK)
		return -ENOSPC;
	size = REG_CHUNK0 << c;
	ncap = hx_reg.cap + size;
	if (ncap > INDEX_MASK) /* index INDEX_MASK would not fit a handle */
		ncap = INDEX_MASK;
	f = malloc(ncap * sizeof(*f));
	if (!f)
		return -ENOMEM;
	chunk = calloc(size, sizeof(*chunk));
	if (!chunk) {
		free(f);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < hx_reg.nfree; i++)
		f[i] = hx_reg.free_idx[(hx_reg.free_head + i) % hx_reg.cap];
	for (uint32_t i = hx_reg.cap; i < ncap; i++)
		f[hx_reg.nfree++] = i;
	free(hx_reg.free_idx);
	hx_reg.free_idx = f;
	hx_reg.free_head = 0;
	hx_reg.cap = ncap;
	atomic_store_explicit(&hx_reg.chunks[c], chunk, memory_order_release);
	return 0;
}

static int register_locked(struct hx_sem *sem)
{
	struct reg_entry *e;
	uint32_t idx, gen;

	if (hx_reg.nfree == 0) {
		int ret = grow_locked();
		if (ret)
			return ret;
	}
	idx = hx_reg.free_idx[hx_reg.free_head];
	hx_reg.free_head = (hx_reg.free_head + 1) % hx_reg.cap;
	hx_reg.nfree--;
	e = hx_reg_entry_at(idx);
	gen = (atomic_load_explicit(&e->gen, memory_order_relaxed) + 1) & GEN_MASK;
	sem->index = idx;
	sem->gen = gen;
	atomic_store_explicit(&e->gen, gen, memory_order_relaxed);
	/* Publishes the record's fields to lock-free lookups. */
	atomic_store_explicit(&e->sem, sem, memory_order_release);
	hx_reg.nlive++;
	return 0;
}

static void unregister_locked(struct hx_sem *sem)
{
	atomic_store_explicit(&hx_reg_entry_at(sem->index)->sem, NULL, memory_order_release);
	hx_reg.free_idx[(hx_reg.free_head + hx_reg.nfree) % hx_reg.cap] = sem->index;
	hx_reg.nfree++;
	hx_reg.nlive--;
}

/* A record whose count reached 0 goes back for reuse, from any thread. */
static void sem_recycle(struct hx_sem *sem)
{
	struct hx_sem *old = atomic_load_explicit(&hx_reg.spare_in, memory_order_relaxed);

	do
		sem->spare_next = old;
	while (!atomic_compare_exchange_weak_explicit(&hx_reg.spare_in, &old, sem,
						      memory_order_release, memory_order_relaxed));
}

/* A record for import: a recycled one if any (its count is 0, so no
 * lookup can take it), else a new one. */
static struct hx_sem *sem_new_locked(void)
{
	struct hx_sem *sem;

	if (!hx_reg.spare)
		hx_reg.spare = atomic_exchange_explicit(&hx_reg.spare_in, NULL, memory_order_acquire);
	sem = hx_reg.spare;
	if (!sem)
		return calloc(1, sizeof(*sem));
	hx_reg.spare = sem->spare_next;
	sem->spare_next = NULL;
	return sem;
}

void hx_reg_release_waitable(struct hx_waitable *obj)
{
	sem_recycle(container_of(obj, struct hx_sem, w));
}

void hx_sem_unref(struct hx_sem *sem)
{
	if (atomic_fetch_sub_explicit(&sem->refs, 1, memory_order_acq_rel) != 1)
		return;
	/* Last reference: no op can reach the kernel handle any more. */
	if (hx_reg.dev.fd >= 0) {
		int ret = hx_sync_destroy(&hx_reg.dev, sem->w.handle);
		if (ret)
			hx_warn("DRM_IOCTL_SYNCOBJ_DESTROY(handle %u) failed: %s", sem->w.handle,
				strerror(-ret));
	}
	if (hx_waiter_forget(&sem->w))
		sem_recycle(sem); /* else the waiter does, through hx_reg_release_waitable */
}

/* ---- device ------------------------------------------------------------ */

/* The HIP device's PCI bus id, for open_device_locked to choose the render
 * node by: asked of the runtime before the registry lock is taken (no
 * runtime call is made under it: at_exit waits for it), and only while the
 * device has not been opened yet. */
struct dev_hint {
	char bus[32];
	int hdev;
};

static void device_hint(struct dev_hint *hint)
{
	hint->bus[0] = '\0';
	hint->hdev = 0;
	if (__atomic_load_n(&hx_reg.dev_tried, __ATOMIC_RELAXED))
		return;
	if (hx_rt.DeviceGetPCIBusId && hx_rt.GetDevice(&hint->hdev) == hipSuccess &&
	    hx_rt.DeviceGetPCIBusId(hint->bus, (int)sizeof(hint->bus), hint->hdev) != hipSuccess)
		hint->bus[0] = '\0';
}

static int open_device_locked(const struct dev_hint *hint)
{
	struct hx_sync_open_opts opts = { 0 };
	int hdev = hint->hdev, ret;

	if (hx_reg.dev_tried)
		return hx_reg.dev_err;
	__atomic_store_n(&hx_reg.dev_tried, true, __ATOMIC_RELAXED);

	opts.node_path = hx_getenv("HIPEXTSEM_RENDER_NODE");
	opts.allow_eventfd = hx_getenv_long("HIPEXTSEM_NO_EVENTFD", 0, 0, 1) == 0;
	if (hint->bus[0])
		opts.pci_bus_id = hint->bus;

	opts.want_timeline = true;
	ret = hx_sync_open(&hx_reg.dev, &opts);
	/* No timelines (ENOTSUP == EOPNOTSUPP): binary semaphores still work,
	 * on an explicitly chosen node too. */
	if (ret == -EOPNOTSUPP) {
		opts.want_timeline = false;
		ret = hx_sync_open(&hx_reg.dev, &opts);
	}
	hx_reg.dev_err = ret;
	if (ret) {
		hx_reg.dev.fd = -1;
		if (opts.node_path)
			hx_err("cannot use HIPEXTSEM_RENDER_NODE=%s: %s", opts.node_path,
			       ret == -ENOTSUP || ret == -EOPNOTSUPP ?
				       "the driver has no sync object support" : strerror(-ret));
		else if (ret == -ENOENT)
			hx_err("no DRM render node (/dev/dri/renderD*) found: external semaphores "
			       "need one with sync object support");
		else if (ret == -EACCES || ret == -EPERM)
			hx_err("permission denied opening the DRM render nodes (is the user in "
			       "the 'render' group?)");
		else
			hx_err("no usable DRM render node with sync objects: %s", strerror(-ret));
		return ret;
	}
	hx_info("using %s (driver %s%s%s), timeline %s, wake-ups via %s", hx_reg.dev.path,
		hx_reg.dev.driver, hx_reg.dev.pci_bus_id[0] ? ", " : "", hx_reg.dev.pci_bus_id,
		hx_reg.dev.has_timeline ? "yes" : "no",
		hx_reg.dev.has_eventfd ? "eventfd" : "multi-handle wait");
	if (opts.pci_bus_id && strcasecmp(opts.pci_bus_id, hx_reg.dev.pci_bus_id) != 0)
		hx_info("HIP device %d (%s) has no render node of its own here; any syncobj "
			"node works for import", hdev, opts.pci_bus_id);
	return 0;
}

hipError_t hx_reg_map_enqueue_error(hipError_t err, const char *prim, hipStream_t stream)
{
	/* The stock calls answer an invalid stream with hipErrorInvalidValue;
	 * runtimes answer the primitive with InvalidHandle or
	 * ContextIsDestroyed (709). */
	if (err == hipErrorInvalidHandle || err == hipErrorInvalidValue || (int)err == 709) {
		hx_err("%s on stream %p failed (error %d): invalid stream", prim, (void *)stream,
		       (int)err);
		return hipErrorInvalidValue;
	}
	hx_err("%s on stream %p failed (error %d)", prim, (void *)stream, (int)err);
	return err;
}

void hx_reg_note_binary_value(const char *what, hipExternalSemaphore_t h,
			      unsigned long long value)
{
	hx_warn_once("%s: binary semaphore %p given fence.value %llu: ignored, as in CUDA (a "
		     "binary semaphore has no value; a Vulkan timeline is imported as "
		     "TimelineSemaphoreFd, 9); logged once", what, h, value);
}

/* What the fd names, for a log line: " (pipe:[1234])" and the like, or
 * nothing when /proc cannot say. */
static const char *describe_fd(int fd, char *buf, size_t n)
{
	char path[40], target[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	len = readlink(path, target, sizeof(target) - 1);
	if (len <= 0) {
		buf[0] = '\0';
		return buf;
	}
	target[len] = '\0';
	snprintf(buf, n, " (%s)", target);
	return buf;
}

/* Takes `fd` into a new kernel handle on the registry's device: a sync
 * object as itself, a sync_file as a binary sync object holding its
 * fence (*sync_file set).  Which of the two the fd is, the kernel says:
 * each import checks the file's type and refuses any other (EINVAL), so
 * nothing is guessed from names, /proc or ioctls sent to the fd itself.
 * On failure *step names the ioctl that failed; -EINVAL from both
 * imports means the fd is neither. */
static int import_locked(int fd, uint32_t *handle, bool *sync_file, const char **step)
{
	int ret = hx_sync_import_fd(&hx_reg.dev, fd, handle);

	*sync_file = false;
	*step = "DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE";
	if (ret != -EINVAL)
		return ret;
	ret = hx_sync_import_sync_file(&hx_reg.dev, fd, handle, step);
	if (ret == 0)
		*sync_file = true;
	return ret;
}

/* The handle type of an import's descriptor: hipSuccess with *timeline
 * set for the two Linux types, otherwise the answer, logged. */
static hipError_t import_type(const void *desc, bool *timeline)
{
	int type = hx_abi_desc_type(desc);

	switch (type) {
	case HX_SEM_HANDLE_OPAQUE_FD:
		*timeline = false;
		return hipSuccess;
	case HX_SEM_HANDLE_TIMELINE_FD:
		*timeline = true;
		return hipSuccess;
	case HX_SEM_HANDLE_OPAQUE_WIN32:
	case HX_SEM_HANDLE_OPAQUE_WIN32_KMT:
	case HX_SEM_HANDLE_D3D12_FENCE:
	case HX_SEM_HANDLE_D3D11_FENCE:
	case HX_SEM_HANDLE_KEYED_MUTEX:
	case HX_SEM_HANDLE_KEYED_MUTEX_KMT:
	case HX_SEM_HANDLE_TIMELINE_WIN32:
		hx_err("hipImportExternalSemaphore: handle type %d is a Windows handle type; on "
		       "Linux only OpaqueFd (1) and TimelineSemaphoreFd (9) exist", type);
		return hipErrorNotSupported;
	case HX_SEM_HANDLE_NVSCISYNC:
		hx_err("hipImportExternalSemaphore: NvSciSync (6) is not supported on AMD devices");
		return hipErrorNotSupported;
	default:
		hx_err("hipImportExternalSemaphore: unknown handle type %d", type);
		return hipErrorInvalidValue;
	}
}

/* Under the registry lock, for an object imported as OpaqueFd: does it
 * carry timeline points (then it is used as the timeline it is: SYCL's HIP
 * adapter imports every fd so, with timeline values in fence.value; taken
 * for binary, its first wait would reset it and drop the producer's
 * timeline)?  A failed query is not "no points" (sync.h): asked again a
 * few times, then the import fails (the caller destroys the handle). */
static int import_points_locked(uint32_t handle, uint64_t *last_point)
{
	int ret = 0;

	for (unsigned tries = 0; tries < 3; tries++) {
		ret = hx_sync_points(&hx_reg.dev, handle, last_point);
		if (!ret)
			break;
	}
	return ret;
}

/* Opens the device on first use and takes the registry lock, held on
 * success only; checks what can be checked before the kernel sees `fd`. */
static hipError_t import_device_lock(bool timeline, int fd)
{
	struct dev_hint hint;
	bool first;
	int ret;

	device_hint(&hint);
	pthread_mutex_lock(&hx_reg.lock);
	first = !hx_reg.dev_tried;
	ret = open_device_locked(&hint);
	if (ret) {
		pthread_mutex_unlock(&hx_reg.lock);
		/* The first failure said why at length; every failed call
		 * still gets its line. */
		if (!first)
			hx_err("hipImportExternalSemaphore: no usable DRM render node with sync "
			       "objects (%s; see the first error)", strerror(-ret));
		return hipErrorNotSupported;
	}
	if (timeline && !hx_reg.dev.has_timeline) {
		pthread_mutex_unlock(&hx_reg.lock);
		hx_err("hipImportExternalSemaphore: %s (%s) has no timeline sync objects "
		       "(DRM_CAP_SYNCOBJ_TIMELINE, Linux 5.2+)", hx_reg.dev.path, hx_reg.dev.driver);
		return hipErrorNotSupported;
	}
	if (fcntl(fd, F_GETFD) == -1) {
		int e = errno;
		pthread_mutex_unlock(&hx_reg.lock);
		hx_err("hipImportExternalSemaphore: fd %d is not an open file descriptor (%s)", fd,
		       strerror(e));
		return hipErrorInvalidValue;
	}
	return hipSuccess;
}

hipError_t hx_op_import(hipExternalSemaphore_t *out, const void *desc)
{
	struct hx_sem *sem;
	bool timeline, sync_file = false, as_timeline = false;
	uint64_t last_point = 0;
	uint32_t handle;
	const char *step;
	hipError_t err;
	int fd, ret;

	SET_UP_OR_FORWARD(ImportExternalSemaphore, out, desc);
	if (!out || !desc) {
		hx_err("hipImportExternalSemaphore: %s is NULL", !out ? "extSem_out" : "semHandleDesc");
		return hipErrorInvalidValue;
	}
	/* 5.2: the main thread's per-thread stream made now, early (streams.c:
	 * exit). */
	hx_stream_exit_prepare();
	err = import_type(desc, &timeline);
	if (err)
		return err;
	fd = hx_abi_desc_fd(desc);
	if (fd <= 0) {
		hx_err("hipImportExternalSemaphore: fd %d is not a usable descriptor", fd);
		return hipErrorInvalidValue;
	}

	err = import_device_lock(timeline, fd);
	if (err)
		return err;
	ret = import_locked(fd, &handle, &sync_file, &step);
	if (ret) {
		char what[80];
		pthread_mutex_unlock(&hx_reg.lock);
		if (ret == -EINVAL) {
			hx_err("hipImportExternalSemaphore: fd %d%s is neither a DRM sync object "
			       "nor a sync_file (DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE: %s)", fd,
			       describe_fd(fd, what, sizeof(what)), strerror(-ret));
			return hipErrorInvalidValue;
		}
		/* The kernel failed a call the fd was fine for (memory, a
		 * handle limit, a driver error): not the caller's input. */
		hx_err("hipImportExternalSemaphore: fd %d%s: %s failed: %s", fd,
		       describe_fd(fd, what, sizeof(what)), step, strerror(-ret));
		return ret == -ENOMEM ? hipErrorOutOfMemory : hipErrorOperatingSystem;
	}
	if (sync_file && timeline) {
		hx_sync_destroy(&hx_reg.dev, handle);
		pthread_mutex_unlock(&hx_reg.lock);
		hx_err("hipImportExternalSemaphore: fd %d is a sync_file (one fence, no timeline "
		       "points): import it as OpaqueFd (1), not as TimelineSemaphoreFd (9)", fd);
		return hipErrorInvalidValue;
	}
	if (!sync_file && !timeline) {
		ret = import_points_locked(handle, &last_point);
		if (ret) {
			hx_sync_destroy(&hx_reg.dev, handle);
			pthread_mutex_unlock(&hx_reg.lock);
			hx_err("hipImportExternalSemaphore: fd %d: DRM_IOCTL_SYNCOBJ_QUERY of its "
			       "timeline points failed (%s): not imported, the fd is still the "
			       "caller's (binary or timeline cannot be told)", fd, strerror(-ret));
			return ret == -ENOMEM ? hipErrorOutOfMemory : hipErrorOperatingSystem;
		}
		if (last_point) {
			timeline = true;
			as_timeline = true;
		}
	}
	sem = sem_new_locked();
	if (!sem) {
		hx_sync_destroy(&hx_reg.dev, handle);
		pthread_mutex_unlock(&hx_reg.lock);
		hx_err("hipImportExternalSemaphore: out of memory");
		return hipErrorOutOfMemory;
	}
	memset(&sem->w, 0, sizeof(sem->w));
	sem->w.timeline = timeline;
	sem->w.handle = handle;
	sem->w.efd = -1;
	/* Live from here; published by register_locked.  A lock-free lookup
	 * (hx_acquire) that still holds this record from its previous life
	 * may take a reference as soon as the count is not 0, then re-reads
	 * the table: the release orders every field written above before the
	 * count its acquiring compare-exchange reads, so whatever that re-read
	 * decides, the lookup never sees the record half set up. */
	atomic_store_explicit(&sem->refs, 1, memory_order_release);
	if (register_locked(sem)) {
		atomic_store_explicit(&sem->refs, 0, memory_order_relaxed);
		sem_recycle(sem);
		hx_sync_destroy(&hx_reg.dev, handle);
		pthread_mutex_unlock(&hx_reg.lock);
		hx_err("hipImportExternalSemaphore: out of memory, or 2^24 semaphores live");
		return hipErrorOutOfMemory;
	}
	*out = hx_reg_handle(sem);
	pthread_mutex_unlock(&hx_reg.lock);
	HX_TRACE(import, *out, handle, timeline, hx_now_ns());

	/* The kernel holds its own reference now (to the sync object, or to
	 * the sync_file's fence); the fd is ours to close. */
	close(fd);
	if (as_timeline) {
		hx_warn_once("a sync object imported as OpaqueFd (1) carries timeline points: it "
			     "is used as a timeline (TimelineSemaphoreFd, 9), fence.value naming "
			     "the point, and never reset");
		hx_info("fd %d: sync object at timeline point %llu imported as OpaqueFd: timeline "
			"semaphore %p (syncobj %u)", fd, (unsigned long long)last_point, *out, handle);
	}
	hx_dbg("imported fd %d (%s) as %s semaphore %p (syncobj %u)", fd,
	       sync_file ? "a sync_file" : "a sync object", timeline ? "timeline" : "binary", *out,
	       handle);
	return hipSuccess;
}

hipError_t hx_op_destroy(hipExternalSemaphore_t h)
{
	struct hx_sem *sem;

	SET_UP_OR_FORWARD(DestroyExternalSemaphore, h);
	if (!h) {
		hx_err("hipDestroyExternalSemaphore: extSem is NULL");
		return hipErrorInvalidValue;
	}
	pthread_mutex_lock(&hx_reg.lock);
	hx_noise_locked();
	sem = hx_reg_lookup_locked(h);
	if (sem)
		unregister_locked(sem);
	pthread_mutex_unlock(&hx_reg.lock);
	if (!sem) {
		hx_err("hipDestroyExternalSemaphore: %p is not a semaphore imported by hipextsem "
		       "(never imported, or already destroyed)", h);
		return hipErrorInvalidResourceHandle;
	}
	HX_TRACE(destroy, h, hx_now_ns());
	if (atomic_load(&sem->refs) > 1)
		hx_info("semaphore %p destroyed with operations pending; its sync object is "
			"released when they complete", h);
	hx_sem_unref(sem);
	return hipSuccess;
}

void hx_op_stats(struct hx_stats *st)
{
	hx_reg_init();
	pthread_mutex_lock(&hx_reg.lock);
	st->live_sems = hx_reg.nlive;
	st->pending_waits = hx_reg.npending_waits;
	st->pending_signals = hx_reg_op_outstanding(HX_OP_SIGNAL);
	st->slots_allocated = (hx_reg.pools[SLOT_HOST].nchunks + hx_reg.pools[SLOT_SIGNAL].nchunks) *
			      SLOTS_PER_CHUNK;
	pthread_mutex_unlock(&hx_reg.lock);
}

/* ---- fork -------------------------------------------------------------- */

static void fork_prepare(void)
{
	pthread_mutex_lock(&hx_reg.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&hx_reg.lock);
}

static void fork_child(void)
{
	/* The child has none of the parent's threads and must not touch the
	 * parent's DRM file (syncobj handles live in the open file, which the
	 * child shares).  Drop everything; the next call starts afresh. */
	pthread_mutex_init(&hx_reg.lock, NULL);
	for (uint32_t i = 0; i < hx_reg.cap; i++) {
		struct reg_entry *e = hx_reg_entry_at(i);
		struct hx_sem *sem = atomic_load_explicit(&e->sem, memory_order_relaxed);
		if (!sem)
			continue;
		if (sem->w.efd >= 0)
			close(sem->w.efd);
		free(sem);
	}
	for (unsigned c = 0; c < REG_NCHUNKS; c++) {
		free(atomic_load_explicit(&hx_reg.chunks[c], memory_order_relaxed));
		atomic_store_explicit(&hx_reg.chunks[c], NULL, memory_order_relaxed);
	}
	/* Only this thread exists: the free records can go. */
	for (int k = 0; k < 2; k++) {
		struct hx_sem *sem = k ? hx_reg.spare :
				 atomic_exchange_explicit(&hx_reg.spare_in, NULL, memory_order_relaxed);
		while (sem) {
			struct hx_sem *next = sem->spare_next;
			free(sem);
			sem = next;
		}
	}
	hx_reg.spare = NULL;
	free(hx_reg.free_idx);
	hx_reg.free_idx = NULL;
	hx_reg.cap = hx_reg.nfree = hx_reg.nlive = hx_reg.free_head = 0;
	/* Pending ops and their entries belong to the parent's streams. */
	hx_reg.ops = hx_reg.ops_tail = hx_reg.watch = NULL;
	hx_reg.npending_waits = 0;
	hx_reg_op_pool_reset();
	/* Wait slots belong to the parent's runtime context. */
	memset(hx_reg.pools, 0, sizeof(hx_reg.pools));
	if (hx_reg.dev.fd >= 0)
		close(hx_reg.dev.fd);
	hx_reg.dev.fd = -1;
	hx_reg.dev_tried = false;
	hx_reg.dev_err = 0;
	hx_reg.waiter_wakes_at = INT64_MAX;
	hx_reg.watchdog_idle = false;
	hx_reg.wait_path = WAIT_PATH_UNKNOWN;
	hx_reg.wait_value_attr = -1;
	hx_reg.wait_path_why[0] = '\0';
	hx_reg.exiting = false;
	hx_reg.pid = getpid();
	hx_stream_reset_after_fork();
	hx_waiter_reset_after_fork();
	hx_log_reset_after_fork();
	hx_trace_reset_after_fork();
}

/* Can the shim import timeline sync objects?  Opens the device the same
 * lazy way import does.  On false, `why` says why. */
bool hx_op_timeline_supported(char *why, size_t n)
{
	struct dev_hint hint;
	bool ok = false;
	int ret;

	if (!hx_reg_init()) {
		snprintf(why, n, "the HIP runtime could not be resolved");
		return false;
	}
	device_hint(&hint);
	pthread_mutex_lock(&hx_reg.lock);
	ret = open_device_locked(&hint);
	if (ret)
		snprintf(why, n, "no usable DRM render node with sync objects (%s)", strerror(-ret));
	else if (!hx_reg.dev.has_timeline)
		snprintf(why, n, "%s (%s) has no timeline sync objects (DRM_CAP_SYNCOBJ_TIMELINE)",
			 hx_reg.dev.path, hx_reg.dev.driver);
	else
		ok = true;
	pthread_mutex_unlock(&hx_reg.lock);
	return ok;
}
