/* SPDX-License-Identifier: MIT */
/*
 * The semaphore registry and the four operations.
 *
 * Signal: one host function per call (hipLaunchHostFunc, or
 * hipStreamAddCallback on runtimes without it) that issues the syncobj
 * signal ioctl.  It runs on the runtime's callback thread when all prior
 * work of the stream is done, never blocks, and frees itself.
 *
 * Wait: one hipStreamWaitValue64 per call on a pinned 64-bit slot; the
 * waiter thread writes the slot once every semaphore of the call has
 * reached its value.  The runtime's threads never block on a syncobj.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "ops.h"
#include "runtime.h"
#include "sem.h"
#include "trace.h"

#define SLOTS_PER_CHUNK 512u
#define HANDLE_TAG 0x4858000000000000ull /* "HX" in the top bits */
#define HANDLE_TAG_MASK 0xffff000000000000ull

struct reg_entry {
	struct hx_sem *sem;
	uint32_t gen;
};

/* Wait slots: 64-bit words a stream waits on with hipStreamWaitValue64.
 * Host-memory slots come 512 at a time from hipHostMalloc(0), which clr
 * makes fine-grained (coherent) host memory.  Signal-memory slots, the
 * fallback for runtimes that refuse a wait on that memory (clr's
 * ihipStreamOperation does when GPU_STREAMOPS_CP_WAIT=1), are one
 * hipExtMallocWithFlags(8, hipMallocSignalMemory) each, made on first use. */
enum slot_kind {
	SLOT_HOST,
	SLOT_SIGNAL,
	SLOT_KINDS,
};

struct slot_chunk {
	volatile uint64_t *mem;                  /* SLOT_HOST: the chunk's array */
	volatile uint64_t *sig[SLOTS_PER_CHUNK]; /* SLOT_SIGNAL: one word each */
	uint64_t last[SLOTS_PER_CHUNK];
};

struct slot_pool {
	struct slot_chunk **chunks;
	uint32_t nchunks;
	uint32_t *free_slots;
	uint32_t nfree_slots;
};

struct signal_entry {
	struct hx_sem *sem;
	uint64_t value;
};

struct signal_op {
	hipStream_t stream;
	int64_t enqueued_ns;
	unsigned count;
	struct signal_entry entries[];
};

/* How a wait holds its stream.  The first two are asynchronous (the
 * waiter thread writes the slot); the last blocks the caller.  The path
 * only ever moves down this list, and only because the runtime refused
 * to enqueue the one above (or HIPEXTSEM_HOST_WAIT=1). */
enum wait_path {
	WAIT_PATH_UNKNOWN,
	WAIT_PATH_STREAM_VALUE,  /* hipStreamWaitValue64 on a host-memory slot */
	WAIT_PATH_SIGNAL_MEMORY, /* the same on a signal-memory slot */
	WAIT_PATH_HOST,          /* the calling thread blocks in the kernel */
};

static struct {
	pthread_mutex_t lock; /* everything below */
	pid_t pid;

	bool dev_tried;
	int dev_err;
	struct hx_sync_dev dev;

	struct reg_entry *tab;
	uint32_t cap;
	uint32_t *free_idx;
	uint32_t free_head, nfree;
	uint32_t nlive;

	struct slot_pool pools[SLOT_KINDS];

	struct hx_wait_op *ops, *ops_tail; /* pending waits, oldest first */
	struct hx_wait_op *watch;         /* oldest wait the watchdog has not reported */
	int64_t stuck_ns;                 /* HIPEXTSEM_STUCK_MS; 0 = off */
	unsigned npending_waits;
	atomic_uint npending_signals;

	int64_t waiter_wakes_at; /* the waiter's next watchdog check */
	bool watchdog_idle;      /* it knows there is nothing pending */

	_Atomic enum wait_path wait_path; /* written under lock, read without */
	int wait_value_attr;     /* hipDeviceAttributeCanUseStreamWaitValue, -1 unread */
	char wait_path_why[200]; /* why wait_path is what it is */
	bool atexit_registered;
	bool exiting;
} g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.dev = { .fd = -1 },
	.wait_value_attr = -1,
	.waiter_wakes_at = INT64_MAX,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* What the waiter calls back (waiter.h): completions, the stuck-wait
 * watchdog, and the release of a forgotten semaphore. */
static void entry_done(struct hx_wait_entry *we);
static void op_unlink_locked(struct hx_wait_op *op);
static int64_t watchdog(int64_t now);
static void release_waitable(struct hx_waitable *obj);

static const struct hx_waiter_ops waiter_ops = {
	.entry_done = entry_done,
	.watchdog = watchdog,
	.release = release_waitable,
};

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

static void init_once_fn(void)
{
	hx_runtime_init();
	hx_trace_init();
	g.stuck_ns = hx_getenv_long("HIPEXTSEM_STUCK_MS", 5000, 0, 86400000) * 1000000LL;
	g.pid = getpid();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static bool init(void)
{
	pthread_once(&init_once, init_once_fn);
	return hx_rt.ok;
}

/* ---- registry ---------------------------------------------------------- */

/*
 * A handle is not a pointer: 0x4858 ("HX") in the top 16 bits (never a
 * canonical address, so anything that dereferences one faults at once),
 * a 24-bit generation and a 24-bit registry index + 1.  Lookups compare
 * the generation, and free indices are reused in FIFO order, so a stale
 * handle matches a new semaphore only after 2^24 reuses of its slot.
 */
#define INDEX_BITS 24
#define INDEX_MASK ((1u << INDEX_BITS) - 1)
#define GEN_MASK 0xffffffu

static hipExternalSemaphore_t encode(const struct hx_sem *sem)
{
	return (hipExternalSemaphore_t)(uintptr_t)(HANDLE_TAG |
						   ((uint64_t)(sem->gen & GEN_MASK) << INDEX_BITS) |
						   ((uint64_t)sem->index + 1));
}

static struct hx_sem *lookup_locked(hipExternalSemaphore_t h)
{
	uint64_t v = (uint64_t)(uintptr_t)h;
	uint32_t idx;

	if ((v & HANDLE_TAG_MASK) != HANDLE_TAG)
		return NULL;
	idx = (uint32_t)(v & INDEX_MASK);
	if (idx == 0 || idx > g.cap)
		return NULL;
	idx--;
	if (!g.tab[idx].sem || (g.tab[idx].gen & GEN_MASK) != ((v >> INDEX_BITS) & GEN_MASK))
		return NULL;
	return g.tab[idx].sem;
}

/* The free indices form a ring of g.cap entries starting at g.free_head. */
static int grow_locked(void)
{
	uint32_t ncap = g.cap ? g.cap * 2 : 64;
	struct reg_entry *t;
	uint32_t *f;

	if (ncap > INDEX_MASK)
		ncap = INDEX_MASK;
	if (ncap <= g.cap)
		return -ENOSPC;
	t = realloc(g.tab, ncap * sizeof(*t));
	if (!t)
		return -ENOMEM;
	g.tab = t;
	f = malloc(ncap * sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (uint32_t i = 0; i < g.nfree; i++)
		f[i] = g.free_idx[(g.free_head + i) % g.cap];
	for (uint32_t i = g.cap; i < ncap; i++) {
		g.tab[i].sem = NULL;
		g.tab[i].gen = 0;
		f[g.nfree++] = i;
	}
	free(g.free_idx);
	g.free_idx = f;
	g.free_head = 0;
	g.cap = ncap;
	return 0;
}

static int register_locked(struct hx_sem *sem)
{
	uint32_t idx;

	if (g.nfree == 0) {
		int ret = grow_locked();
		if (ret)
			return ret;
	}
	idx = g.free_idx[g.free_head];
	g.free_head = (g.free_head + 1) % g.cap;
	g.nfree--;
	g.tab[idx].sem = sem;
	g.tab[idx].gen = (g.tab[idx].gen + 1) & GEN_MASK;
	sem->index = idx;
	sem->gen = g.tab[idx].gen;
	g.nlive++;
	return 0;
}

static void unregister_locked(struct hx_sem *sem)
{
	g.tab[sem->index].sem = NULL;
	g.free_idx[(g.free_head + g.nfree) % g.cap] = sem->index;
	g.nfree++;
	g.nlive--;
}

static void release_waitable(struct hx_waitable *obj)
{
	free(container_of(obj, struct hx_sem, w));
}

static void sem_ref(struct hx_sem *sem)
{
	atomic_fetch_add_explicit(&sem->refs, 1, memory_order_relaxed);
}

static void sem_unref(struct hx_sem *sem)
{
	if (atomic_fetch_sub_explicit(&sem->refs, 1, memory_order_acq_rel) != 1)
		return;
	/* Last reference: no op can reach the kernel handle any more. */
	if (g.dev.fd >= 0) {
		int ret = hx_sync_destroy(&g.dev, sem->w.handle);
		if (ret)
			hx_warn("DRM_IOCTL_SYNCOBJ_DESTROY(handle %u) failed: %s", sem->w.handle,
				strerror(-ret));
	}
	if (hx_waiter_forget(&sem->w))
		free(sem); /* else the waiter does, through release_waitable */
}

bool hx_op_is_shim_handle(hipExternalSemaphore_t h)
{
	bool live;

	if (!init())
		return false;
	pthread_mutex_lock(&g.lock);
	live = lookup_locked(h) != NULL;
	pthread_mutex_unlock(&g.lock);
	return live;
}

/* Looks up every handle of a signal/wait array and takes a reference on
 * each.  On failure nothing is held. */
static hipError_t lookup_array(const hipExternalSemaphore_t *hs, unsigned n,
			       struct hx_sem **out, const char *what)
{
	hipError_t err = hipSuccess;
	unsigned i;

	pthread_mutex_lock(&g.lock);
	for (i = 0; i < n; i++) {
		out[i] = hs[i] ? lookup_locked(hs[i]) : NULL;
		if (!out[i]) {
			if (!hs[i]) {
				hx_err("%s: extSemArray[%u] is NULL", what, i);
				err = hipErrorInvalidValue;
			} else {
				hx_err("%s: extSemArray[%u] = %p is not a semaphore imported by "
				       "hipextsem (never imported, or already destroyed)",
				       what, i, hs[i]);
				err = hipErrorInvalidResourceHandle;
			}
			break;
		}
		sem_ref(out[i]);
	}
	pthread_mutex_unlock(&g.lock);
	if (err)
		while (i-- > 0)
			sem_unref(out[i]);
	return err;
}

/* ---- device ------------------------------------------------------------ */

static int open_device_locked(void)
{
	struct hx_sync_open_opts opts = { 0 };
	char bus[32] = "";
	int hdev = 0, ret;

	if (g.dev_tried)
		return g.dev_err;
	g.dev_tried = true;

	opts.node_path = hx_getenv("HIPEXTSEM_RENDER_NODE");
	opts.allow_eventfd = hx_getenv_long("HIPEXTSEM_NO_EVENTFD", 0, 0, 1) == 0;
	if (hx_rt.DeviceGetPCIBusId && hx_rt.GetDevice(&hdev) == hipSuccess &&
	    hx_rt.DeviceGetPCIBusId(bus, (int)sizeof(bus), hdev) == hipSuccess)
		opts.pci_bus_id = bus;

	opts.want_timeline = true;
	ret = hx_sync_open(&g.dev, &opts);
	/* No timelines (ENOTSUP == EOPNOTSUPP): binary semaphores still work,
	 * on an explicitly chosen node too. */
	if (ret == -EOPNOTSUPP) {
		opts.want_timeline = false;
		ret = hx_sync_open(&g.dev, &opts);
	}
	g.dev_err = ret;
	if (ret) {
		g.dev.fd = -1;
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
	hx_info("using %s (driver %s%s%s), timeline %s, wake-ups via %s", g.dev.path,
		g.dev.driver, g.dev.pci_bus_id[0] ? ", " : "", g.dev.pci_bus_id,
		g.dev.has_timeline ? "yes" : "no",
		g.dev.has_eventfd ? "eventfd" : "multi-handle wait");
	if (opts.pci_bus_id && strcasecmp(opts.pci_bus_id, g.dev.pci_bus_id) != 0)
		hx_info("HIP device %d (%s) has no render node of its own here; any syncobj "
			"node works for import", hdev, opts.pci_bus_id);
	return 0;
}

/* ---- wait slots -------------------------------------------------------- */

static int pool_grow_locked(struct slot_pool *pool, enum slot_kind kind)
{
	struct slot_chunk **nc;
	struct slot_chunk *c;
	uint32_t *nf;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (kind == SLOT_HOST) {
		void *mem = NULL;
		hipError_t err = hx_rt.HostMalloc(&mem, SLOTS_PER_CHUNK * sizeof(uint64_t), 0);

		if (err != hipSuccess || !mem) {
			free(c);
			hx_err("hipHostMalloc for wait slots failed (error %d)", (int)err);
			return -ENOMEM;
		}
		memset(mem, 0, SLOTS_PER_CHUNK * sizeof(uint64_t));
		c->mem = mem;
	}
	nc = realloc(pool->chunks, (pool->nchunks + 1) * sizeof(*nc));
	if (nc)
		pool->chunks = nc;
	nf = realloc(pool->free_slots, (pool->nchunks + 1) * SLOTS_PER_CHUNK * sizeof(*nf));
	if (nf)
		pool->free_slots = nf;
	if (!nc || !nf) {
		/* Host memory stays with the runtime. */
		free(c);
		return -ENOMEM;
	}
	pool->chunks[pool->nchunks] = c;
	for (uint32_t i = SLOTS_PER_CHUNK; i > 0; i--)
		pool->free_slots[pool->nfree_slots++] = pool->nchunks * SLOTS_PER_CHUNK + i - 1;
	pool->nchunks++;
	return 0;
}

static int slot_alloc_locked(enum slot_kind kind, uint32_t *index, volatile uint64_t **slot,
			     uint64_t *gen)
{
	struct slot_pool *pool = &g.pools[kind];
	struct slot_chunk *c;
	uint32_t i, k;

	if (pool->nfree_slots == 0) {
		int ret = pool_grow_locked(pool, kind);
		if (ret)
			return ret;
	}
	i = pool->free_slots[pool->nfree_slots - 1];
	c = pool->chunks[i / SLOTS_PER_CHUNK];
	k = i % SLOTS_PER_CHUNK;
	if (kind == SLOT_SIGNAL && !c->sig[k]) {
		void *mem = NULL;
		hipError_t err = hx_rt.ExtMallocWithFlags ?
					 hx_rt.ExtMallocWithFlags(&mem, sizeof(uint64_t),
								  HX_MALLOC_SIGNAL_MEMORY) :
					 hipErrorNotSupported;

		if (err != hipSuccess || !mem) {
			hx_err("hipExtMallocWithFlags(hipMallocSignalMemory) for a wait slot failed "
			       "(error %d)", (int)err);
			return -ENOMEM;
		}
		/* The runtime's signal memory: the word is written only by us. */
		c->sig[k] = mem;
		*c->sig[k] = 0;
	}
	pool->nfree_slots--;
	*index = i;
	*slot = kind == SLOT_HOST ? &c->mem[k] : c->sig[k];
	/* Values only grow: a stream still reading an older value of this
	 * slot (>= its own gen) stays released. */
	*gen = c->last[k] + 1;
	return 0;
}

/* The slot is free again once written (released) or never enqueued. */
static void slot_free_locked(enum slot_kind kind, uint32_t index, uint64_t written)
{
	struct slot_pool *pool = &g.pools[kind];
	struct slot_chunk *c = pool->chunks[index / SLOTS_PER_CHUNK];

	if (written > c->last[index % SLOTS_PER_CHUNK])
		c->last[index % SLOTS_PER_CHUNK] = written;
	pool->free_slots[pool->nfree_slots++] = index;
}

static void release_slot(volatile uint64_t *slot, uint64_t gen)
{
	__atomic_store_n(slot, gen, __ATOMIC_RELEASE);
}

/* ---- exit -------------------------------------------------------------- */

/* Runs before the runtime's own exit-time teardown (it was registered
 * later): a stream held by a wait that can no longer be satisfied would
 * otherwise hang the runtime's destructors.  Pending waits are released. */
static void at_exit(void)
{
	struct timespec until;
	unsigned n = 0;

	/* Another thread may be inside the shim; never wait for it for long. */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 100 * 1000 * 1000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	if (pthread_mutex_timedlock(&g.lock, &until) != 0)
		return;
	g.exiting = true;
	for (struct hx_wait_op *op = g.ops; op; op = op->all_next) {
		release_slot(op->slot, op->gen);
		n++;
	}
	pthread_mutex_unlock(&g.lock);
	if (n)
		hx_warn("process exit with %u pending wait(s): released so the runtime can "
			"drain its streams", n);
}

/* ---- operations -------------------------------------------------------- */

/* Without a usable device the runtime's own answers are the right ones. */
#define FORWARD_IF_UNUSABLE(fn, ...)                                                        \
	do {                                                                                \
		if (!hx_runtime_usable()) {                                                 \
			hipError_t first_ = hx_runtime_take_first_answer();                 \
			if (first_ != hipSuccess)                                           \
				return first_;                                              \
			if (!hx_rt.fn) {                                                    \
				hx_err("the HIP runtime is unusable and lacks hip" #fn);    \
				return hipErrorNotSupported;                                \
			}                                                                   \
			return hx_rt.fn(__VA_ARGS__);                                       \
		}                                                                           \
	} while (0)

static hipError_t map_enqueue_error(hipError_t err, const char *prim, hipStream_t stream)
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

static hipError_t check_capture(hipStream_t stream, const char *what)
{
	if (hx_runtime_capture_status(stream) != 0) {
		hx_err("%s on a capturing stream %p is not supported", what, (void *)stream);
		return hipErrorStreamCaptureUnsupported;
	}
	return hipSuccess;
}

hipError_t hx_op_import(hipExternalSemaphore_t *out, const void *desc)
{
	struct hx_sem *sem;
	bool timeline, first;
	uint32_t handle;
	int type, fd, ret;

	if (!init())
		return hipErrorNotInitialized;
	FORWARD_IF_UNUSABLE(ImportExternalSemaphore, out, desc);
	if (!out || !desc) {
		hx_err("hipImportExternalSemaphore: %s is NULL", !out ? "extSem_out" : "semHandleDesc");
		return hipErrorInvalidValue;
	}
	type = hx_abi_desc_type(desc);
	switch (type) {
	case HX_SEM_HANDLE_OPAQUE_FD:
		timeline = false;
		break;
	case HX_SEM_HANDLE_TIMELINE_FD:
		timeline = true;
		break;
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
	fd = hx_abi_desc_fd(desc);
	if (fd <= 0) {
		hx_err("hipImportExternalSemaphore: fd %d is not a usable descriptor", fd);
		return hipErrorInvalidValue;
	}

	pthread_mutex_lock(&g.lock);
	first = !g.dev_tried;
	ret = open_device_locked();
	if (ret) {
		pthread_mutex_unlock(&g.lock);
		/* The first failure said why at length; every failed call
		 * still gets its line. */
		if (!first)
			hx_err("hipImportExternalSemaphore: no usable DRM render node with sync "
			       "objects (%s; see the first error)", strerror(-ret));
		return hipErrorNotSupported;
	}
	if (timeline && !g.dev.has_timeline) {
		pthread_mutex_unlock(&g.lock);
		hx_err("hipImportExternalSemaphore: %s (%s) has no timeline sync objects "
		       "(DRM_CAP_SYNCOBJ_TIMELINE, Linux 5.2+)", g.dev.path, g.dev.driver);
		return hipErrorNotSupported;
	}
	ret = hx_sync_import_fd(&g.dev, fd, &handle);
	if (ret) {
		pthread_mutex_unlock(&g.lock);
		hx_err("hipImportExternalSemaphore: fd %d is not a DRM sync object "
		       "(DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE: %s)", fd, strerror(-ret));
		return ret == -ENOMEM ? hipErrorOutOfMemory : hipErrorInvalidValue;
	}
	sem = calloc(1, sizeof(*sem));
	if (!sem || register_locked(sem)) {
		hx_sync_destroy(&g.dev, handle);
		pthread_mutex_unlock(&g.lock);
		free(sem);
		hx_err("hipImportExternalSemaphore: out of memory");
		return hipErrorOutOfMemory;
	}
	atomic_init(&sem->refs, 1);
	sem->w.timeline = timeline;
	sem->w.handle = handle;
	sem->w.efd = -1;
	sem->w.armed = UINT64_MAX;
	*out = encode(sem);
	pthread_mutex_unlock(&g.lock);
	HX_TRACE(import, *out, handle, timeline, hx_now_ns());

	/* The kernel holds its own reference now; the fd is ours to close. */
	close(fd);
	hx_dbg("imported fd %d as %s semaphore %p (syncobj %u)", fd,
	       timeline ? "timeline" : "binary", *out, handle);
	return hipSuccess;
}

static void run_signal(struct signal_op *op)
{
	for (unsigned i = 0; i < op->count; i++) {
		struct signal_entry *e = &op->entries[i];
		/* Stamped before the ioctl: whoever sees the signal sees it
		 * after this time, so the trace never shows a wait satisfied
		 * before the signal that satisfied it. */
		int64_t t = hx_trace_on ? hx_now_ns() : 0;
		int ret = hx_sync_signal(&g.dev, e->sem->w.handle, e->sem->w.timeline ? e->value : 0);
		if (ret)
			hx_err("%s(handle %u, point %llu) failed: %s",
			       e->sem->w.timeline ? "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL"
						: "DRM_IOCTL_SYNCOBJ_SIGNAL",
			       e->sem->w.handle, (unsigned long long)e->value, strerror(-ret));
		HX_TRACE(signal, encode(e->sem), e->value, op->stream, op->enqueued_ns, t);
		sem_unref(e->sem);
	}
	atomic_fetch_sub_explicit(&g.npending_signals, 1, memory_order_relaxed);
	free(op);
}

static void signal_host_fn(void *data)
{
	run_signal(data);
}

static void signal_stream_cb(hipStream_t stream, hipError_t status, void *data)
{
	if (status != hipSuccess)
		hx_warn("stream %p reported error %d before a semaphore signal; signaling "
			"anyway so the other side is not left waiting", (void *)stream, (int)status);
	run_signal(data);
}

static hipError_t check_params(const char *what, const void *params, unsigned n, bool wait)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned flags = wait ? hx_abi_wait_flags(params, i) : hx_abi_signal_flags(params, i);
		if (flags != 0) {
			hx_err("%s: paramsArray[%u].flags = %#x; must be 0", what, i, flags);
			return hipErrorInvalidValue;
		}
	}
	return hipSuccess;
}

#define LOCAL_SEMS 16 /* lookups of up to this many handles need no allocation */

static void free_sems(struct hx_sem **sems, struct hx_sem **local)
{
	if (sems != local)
		free(sems);
}

static void unref_all(struct hx_sem **sems, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sem_unref(sems[i]);
}

/* The argument checks of signal and wait, in the stock runtime's order,
 * then a referenced lookup of every handle (into `local` when it fits).
 * *sems == NULL with hipSuccess means numExtSems == 0: nothing to do. */
static hipError_t lookup_args(const char *what, const hipExternalSemaphore_t *hs,
			      const void *params, unsigned n, bool wait, struct hx_sem ***sems,
			      struct hx_sem **local)
{
	hipError_t err;

	*sems = NULL;
	if (!hs || !params) {
		hx_err("%s: %s is NULL", what, !hs ? "extSemArray" : "paramsArray");
		return hipErrorInvalidValue;
	}
	if (n == 0)
		return hipSuccess;
	err = check_params(what, params, n, wait);
	if (err)
		return err;
	*sems = n <= LOCAL_SEMS ? local : malloc((size_t)n * sizeof(**sems));
	if (!*sems) {
		hx_err("%s: out of memory for %u semaphores", what, n);
		return hipErrorOutOfMemory;
	}
	err = lookup_array(hs, n, *sems, what);
	if (err) {
		free_sems(*sems, local);
		*sems = NULL;
	}
	return err;
}

/* A timeline point 0 can never be signaled. */
static hipError_t check_signal_values(const char *what, const hipExternalSemaphore_t *hs,
				      struct hx_sem **sems, const void *params, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (sems[i]->w.timeline && hx_abi_signal_value(params, i) == 0) {
			hx_err("%s: timeline semaphore %p signaled with value 0", what, hs[i]);
			return hipErrorInvalidValue;
		}
	}
	return hipSuccess;
}

/* Shared front half of signal and wait: lookup_args, then the op.
 * *op == NULL with hipSuccess means there is nothing to do. */
static hipError_t prepare(const char *what, const hipExternalSemaphore_t *hs,
			  const void *params, unsigned n, bool wait, size_t op_size,
			  void **op, struct hx_sem ***sems, struct hx_sem **local)
{
	hipError_t err = lookup_args(what, hs, params, n, wait, sems, local);

	*op = NULL;
	if (err || !*sems)
		return err;
	/* Every field is set by the caller: no zeroing on this path. */
	*op = malloc(op_size);
	if (!*op) {
		hx_err("%s: out of memory for %u semaphores", what, n);
		unref_all(*sems, n);
		free_sems(*sems, local);
		*sems = NULL;
		return hipErrorOutOfMemory;
	}
	return hipSuccess;
}

hipError_t hx_op_signal(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			hipStream_t stream)
{
	static const char what[] = "hipSignalExternalSemaphoresAsync";
	struct hx_sem *local[LOCAL_SEMS];
	struct signal_op *op;
	struct hx_sem **sems;
	hipError_t err;
	int binary = -1; /* index of the first binary semaphore */

	if (!init())
		return hipErrorNotInitialized;
	FORWARD_IF_UNUSABLE(SignalExternalSemaphoresAsync, hs, params, n, stream);
	err = prepare(what, hs, params, n, false, sizeof(*op) + (size_t)n * sizeof(op->entries[0]),
		      (void **)&op, &sems, local);
	if (err || !op)
		return err;
	op->count = n;
	op->stream = stream;
	/* Only the trace reads it: no clock read per call otherwise. */
	op->enqueued_ns = hx_trace_on ? hx_now_ns() : 0;
	for (unsigned i = 0; i < n; i++) {
		op->entries[i].sem = sems[i];
		op->entries[i].value = hx_abi_signal_value(params, i);
		if (binary < 0 && !sems[i]->w.timeline)
			binary = (int)i;
	}
	err = check_signal_values(what, hs, sems, params, n);
	free_sems(sems, local);
	/* Capture was dealt with by the caller (graph_signal.c): a captured
	 * signal becomes a graph host node there. */
	if (!err) {
		atomic_fetch_add_explicit(&g.npending_signals, 1, memory_order_relaxed);
		if (hx_rt.LaunchHostFunc)
			err = hx_rt.LaunchHostFunc(stream, signal_host_fn, op);
		else
			err = hx_rt.StreamAddCallback(stream, signal_stream_cb, op, 0);
		if (err) {
			atomic_fetch_sub_explicit(&g.npending_signals, 1, memory_order_relaxed);
			err = map_enqueue_error(err, hx_rt.LaunchHostFunc ? "hipLaunchHostFunc"
									  : "hipStreamAddCallback",
						stream);
		}
	}
	if (err) {
		for (unsigned i = 0; i < n; i++)
			sem_unref(op->entries[i].sem);
		free(op);
		return err;
	}
	hx_dbg("%s: %u semaphore(s) on stream %p", what, n, (void *)stream);
	/* Once per process: the consequence users porting CUDA code meet as an
	 * unexplained stall on the Vulkan side. */
	if (binary >= 0 && hx_log_enabled(HX_LOG_INFO)) {
		static atomic_bool noted;
		if (!atomic_exchange(&noted, true))
			hx_info("note: binary semaphore %p is signaled from HIP: its fence is "
				"attached only when stream %p reaches the signal, so a Vulkan queue "
				"submission waiting on it (Mesa/RADV vkQueueSubmit) blocks until the "
				"stream's prior work is done; timeline semaphores do not block there "
				"(README: The Vulkan side)", hs[binary], (void *)stream);
	}
	return hipSuccess;
}

static void op_release(struct hx_wait_op *op)
{
	pthread_mutex_lock(&g.lock);
	release_slot(op->slot, op->gen);
	op_unlink_locked(op);
	slot_free_locked(op->slot_kind, op->slot_index, op->gen);
	pthread_mutex_unlock(&g.lock);
	free(op);
}

static void entry_done(struct hx_wait_entry *we)
{
	struct hx_sem_wait *e = container_of(we, struct hx_sem_wait, w);
	struct hx_wait_op *op = e->op;
	struct hx_sem *sem = e->sem;

	HX_TRACE(wait, encode(sem), e->w.value, op->stream, op->enqueued_ns, hx_now_ns());
	/* Under the lock: the watchdog reads entries that are not done, and
	 * relies on their semaphore reference still being held. */
	pthread_mutex_lock(&g.lock);
	e->done = true;
	pthread_mutex_unlock(&g.lock);
	sem_unref(sem);
	if (atomic_fetch_sub_explicit(&op->remaining, 1, memory_order_acq_rel) == 1)
		op_release(op);
}

static const char *wait_path_name(enum wait_path path)
{
	switch (path) {
	case WAIT_PATH_STREAM_VALUE:
		return "hipStreamWaitValue64 on host memory, released by the waiter thread";
	case WAIT_PATH_SIGNAL_MEMORY:
		return "hipStreamWaitValue64 on signal memory, released by the waiter thread";
	case WAIT_PATH_HOST:
		return "the calling thread blocks until the semaphores are signaled";
	default:
		return "not chosen yet";
	}
}

/*
 * The first choice is always the stream wait, whatever the device reports
 * for hipDeviceAttributeCanUseStreamWaitValue: clr sets that attribute from
 * aqlBarrierValue_ (whether the CP BARRIER_VALUE packet is used), which
 * releases before ROCm 5.5 left at 0 on every GPU but gfx900/904/908/90a,
 * while hipStreamWaitValue64 works on all of them (a blit kernel waits
 * instead).  The value is read and reported, never acted upon.
 */
static enum wait_path choose_wait_path_locked(void)
{
	int hdev = 0, v = -1;

	if (g.wait_path != WAIT_PATH_UNKNOWN)
		return g.wait_path;
	if (hx_rt.DeviceGetAttribute && hx_rt.GetDevice(&hdev) == hipSuccess &&
	    hx_rt.DeviceGetAttribute(&v, hipDeviceAttributeCanUseStreamWaitValue, hdev) !=
		    hipSuccess)
		v = -1;
	g.wait_value_attr = v;
	if (hx_getenv_long("HIPEXTSEM_HOST_WAIT", 0, 0, 1)) {
		g.wait_path = WAIT_PATH_HOST;
		snprintf(g.wait_path_why, sizeof(g.wait_path_why), "HIPEXTSEM_HOST_WAIT=1");
		hx_info("waits block the calling thread (HIPEXTSEM_HOST_WAIT=1)");
		return g.wait_path;
	}
	g.wait_path = WAIT_PATH_STREAM_VALUE;
	snprintf(g.wait_path_why, sizeof(g.wait_path_why),
		 "the default; hipDeviceAttributeCanUseStreamWaitValue reads %d%s", v,
		 v == 0 ? " (it only says whether the CP barrier-value packet is used)" : "");
	hx_info("waits use hipStreamWaitValue64 released by the waiter thread "
		"(HIP device %d reports hipDeviceAttributeCanUseStreamWaitValue = %d%s)", hdev, v,
		v == 0 ? ", which does not stop hipStreamWaitValue64 from working" : "");
	return g.wait_path;
}

/* The runtime refused to enqueue the stream wait on a valid stream: move
 * one step down the wait paths.  Logged once per step, with the reason. */
static enum wait_path fall_back_locked(enum wait_path failed, hipError_t err)
{
	if (g.wait_path != failed)
		return g.wait_path; /* another thread moved on already */
	if (failed == WAIT_PATH_STREAM_VALUE && hx_rt.ExtMallocWithFlags) {
		g.wait_path = WAIT_PATH_SIGNAL_MEMORY;
		snprintf(g.wait_path_why, sizeof(g.wait_path_why),
			 "hipStreamWaitValue64 on host memory failed with error %d", (int)err);
		hx_warn("hipStreamWaitValue64 refused host memory (error %d; clr does so with "
			"GPU_STREAMOPS_CP_WAIT=1): waits now use hipMallocSignalMemory slots, "
			"still asynchronous", (int)err);
	} else {
		g.wait_path = WAIT_PATH_HOST;
		snprintf(g.wait_path_why, sizeof(g.wait_path_why),
			 "the runtime refused every stream wait (hipStreamWaitValue64 on %s "
			 "memory: error %d)", failed == WAIT_PATH_SIGNAL_MEMORY ? "signal" : "host",
			 (int)err);
		hx_warn("the runtime cannot enqueue hipStreamWaitValue64 (error %d on %s memory): "
			"waits now BLOCK THE CALLING THREAD until their semaphores are signaled; "
			"a wait whose signal the same thread issues later will hang", (int)err,
			failed == WAIT_PATH_SIGNAL_MEMORY ? "signal" : "host");
	}
	return g.wait_path;
}

/* Is `stream` a stream the runtime knows?  Answered by hipStreamQuery,
 * which clr fails with hipErrorContextIsDestroyed (709) or
 * hipErrorInvalidHandle for a handle that names no live stream. */
static bool stream_is_valid(hipStream_t stream)
{
	hipError_t err;

	if (!hx_rt.StreamQuery)
		return true;
	err = hx_rt.StreamQuery(stream);
	return err == hipSuccess || err == hipErrorNotReady;
}

static hipError_t host_wait(struct hx_sem **sems, const void *params, unsigned n,
			    hipStream_t stream)
{
	hipError_t err = hipSuccess;

	/* Every argument is checked before the thread blocks: a destroyed
	 * stream must not turn into a wait that never ends. */
	if (!stream_is_valid(stream)) {
		hx_err("hipWaitExternalSemaphoresAsync: stream %p is not a valid stream",
		       (void *)stream);
		return hipErrorInvalidValue;
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t point = sems[i]->w.timeline ? hx_abi_wait_value(params, i) : 0;
		int64_t start = hx_now_ns();
		bool reported = false;
		int ret;

		/* Wait in slices of HIPEXTSEM_STUCK_MS so that a wait that
		 * never ends is reported, as the waiter's watchdog does. */
		for (;;) {
			int64_t until = g.stuck_ns ? hx_now_ns() + g.stuck_ns : INT64_MAX;

			ret = hx_sync_wait_one(&g.dev, sems[i]->w.handle, point, until);
			if (ret != -ETIME || !g.stuck_ns)
				break;
			if (!reported) {
				hx_warn("stuck wait: the calling thread has waited %.1f s for %s "
					"semaphore %p (syncobj %u) to reach %llu (HIPEXTSEM_HOST_WAIT "
					"path)", (double)(hx_now_ns() - start) / 1e9,
					sems[i]->w.timeline ? "timeline" : "binary", encode(sems[i]),
					sems[i]->w.handle, (unsigned long long)point);
				reported = true;
			}
		}
		if (ret == 0 && !sems[i]->w.timeline)
			ret = hx_sync_reset(&g.dev, sems[i]->w.handle);
		if (ret && !err) {
			hx_err("host-side wait on syncobj %u failed: %s", sems[i]->w.handle,
			       strerror(-ret));
			err = hipErrorOperatingSystem;
		}
	}
	return err;
}

static void op_link_locked(struct hx_wait_op *op)
{
	op->all_next = NULL;
	op->all_prev = g.ops_tail;
	if (g.ops_tail)
		g.ops_tail->all_next = op;
	else
		g.ops = op;
	g.ops_tail = op;
	g.npending_waits++;
	if (!g.watch)
		g.watch = op;
}

static void op_unlink_locked(struct hx_wait_op *op)
{
	if (g.watch == op)
		g.watch = op->all_next;
	if (op->all_prev)
		op->all_prev->all_next = op->all_next;
	else
		g.ops = op->all_next;
	if (op->all_next)
		op->all_next->all_prev = op->all_prev;
	else
		g.ops_tail = op->all_prev;
	g.npending_waits--;
}

/*
 * Takes a slot of the path's kind, makes the op pending (visible to the
 * watchdog and to exit) and enqueues the stream's wait on the slot, with
 * one lock round for the bookkeeping.  On failure nothing is held and the
 * result is the runtime's own answer.  *kick: the waiter must be woken for
 * the watchdog.
 */
static hipError_t enqueue_stream_wait(struct hx_wait_op *op, enum wait_path path,
				      hipStream_t stream, bool *kick)
{
	enum slot_kind kind = path == WAIT_PATH_SIGNAL_MEMORY ? SLOT_SIGNAL : SLOT_HOST;
	hipError_t err;
	int ret;

	pthread_mutex_lock(&g.lock);
	ret = slot_alloc_locked(kind, &op->slot_index, &op->slot, &op->gen);
	if (ret) {
		pthread_mutex_unlock(&g.lock);
		return hipErrorOutOfMemory;
	}
	if (!g.atexit_registered) {
		atexit(at_exit);
		g.atexit_registered = true;
	}
	op->slot_kind = kind;
	/* The waiter sleeps until its next watchdog check at most: wake it
	 * only if this wait would be due before that. */
	*kick = g.stuck_ns && !g.watch && g.waiter_wakes_at > op->enqueued_ns + g.stuck_ns;
	op_link_locked(op);
	if (g.exiting)
		release_slot(op->slot, op->gen);
	pthread_mutex_unlock(&g.lock);

	err = hx_rt.StreamWaitValue64(stream, (void *)op->slot, op->gen, hipStreamWaitValueGte,
				      ~0ull);
	if (err) {
		pthread_mutex_lock(&g.lock);
		op_unlink_locked(op);
		slot_free_locked(kind, op->slot_index, 0);
		pthread_mutex_unlock(&g.lock);
		*kick = false;
	}
	return err;
}

hipError_t hx_op_wait(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
		      hipStream_t stream)
{
	static const char what[] = "hipWaitExternalSemaphoresAsync";
	struct hx_sem *local[LOCAL_SEMS];
	struct hx_wait_op *op;
	struct hx_sem **sems;
	enum wait_path path;
	hipError_t err;
	bool kick = false;

	if (!init())
		return hipErrorNotInitialized;
	FORWARD_IF_UNUSABLE(WaitExternalSemaphoresAsync, hs, params, n, stream);
	err = prepare(what, hs, params, n, true, sizeof(*op) + (size_t)n * sizeof(op->entries[0]),
		      (void **)&op, &sems, local);
	if (err || !op)
		return err;
	err = check_capture(stream, what);
	if (err)
		goto unref;

	path = atomic_load_explicit(&g.wait_path, memory_order_acquire);
	if (path == WAIT_PATH_UNKNOWN) {
		pthread_mutex_lock(&g.lock);
		path = choose_wait_path_locked();
		pthread_mutex_unlock(&g.lock);
	}
	if (path == WAIT_PATH_HOST) {
		/* Done once it returns: the same clean-up as a failure. */
		err = host_wait(sems, params, n, stream);
		goto unref;
	}
	if (hx_waiter_start(&g.dev, &waiter_ops)) {
		err = hipErrorOperatingSystem;
		goto unref;
	}

	/* Complete before the op becomes visible (the watchdog reads it). */
	op->stream = stream;
	op->count = n;
	op->enqueued_ns = hx_now_ns();
	atomic_init(&op->remaining, n + 1); /* +1 until every entry is queued */
	for (unsigned i = 0; i < n; i++) {
		struct hx_sem_wait *e = &op->entries[i];

		e->op = op;
		e->sem = sems[i];
		e->done = false;
		e->w.obj = &sems[i]->w;
		e->w.value = sems[i]->w.timeline ? hx_abi_wait_value(params, i) : 0;
		e->w.next = i + 1 < n ? &op->entries[i + 1].w : NULL;
	}
	for (;;) {
		err = enqueue_stream_wait(op, path, stream, &kick);
		if (!err)
			break;
		if (err == hipErrorOutOfMemory)
			goto unref;
		/* A refusal is the stream's fault or the primitive's: only
		 * the second is a reason to change paths. */
		if (!stream_is_valid(stream)) {
			err = map_enqueue_error(err, "hipStreamWaitValue64", stream);
			goto unref;
		}
		pthread_mutex_lock(&g.lock);
		path = fall_back_locked(path, err);
		pthread_mutex_unlock(&g.lock);
		if (path == WAIT_PATH_HOST) {
			err = host_wait(sems, params, n, stream);
			goto unref;
		}
	}

	/* From here on the stream is held: every path must end in a release. */
	if (kick)
		hx_waiter_kick();
	hx_dbg("%s: %u semaphore(s) on stream %p, slot %u gen %llu", what, n, (void *)stream,
	       op->slot_index, (unsigned long long)op->gen);
	hx_waiter_submit(&op->entries[0].w);
	free_sems(sems, local);
	/* Drop the guard; the op may be gone after this. */
	if (atomic_fetch_sub_explicit(&op->remaining, 1, memory_order_acq_rel) == 1)
		op_release(op);
	return hipSuccess;

unref:
	unref_all(sems, n);
	free_sems(sems, local);
	free(op);
	return err;
}

int hx_op_wait_path(int *attr, char *why, size_t len)
{
	enum wait_path path;

	if (attr)
		*attr = -1;
	if (why && len)
		why[0] = '\0';
	if (!init() || !hx_runtime_usable()) {
		if (why && len)
			snprintf(why, len, "the HIP runtime has no usable device");
		return -1;
	}
	pthread_mutex_lock(&g.lock);
	path = choose_wait_path_locked();
	if (attr)
		*attr = g.wait_value_attr;
	if (why && len)
		snprintf(why, len, "%s: %s", wait_path_name(path), g.wait_path_why);
	pthread_mutex_unlock(&g.lock);
	return path == WAIT_PATH_HOST ? 1 : 0;
}

hipError_t hx_op_destroy(hipExternalSemaphore_t h)
{
	struct hx_sem *sem;

	if (!init())
		return hipErrorNotInitialized;
	FORWARD_IF_UNUSABLE(DestroyExternalSemaphore, h);
	if (!h) {
		hx_err("hipDestroyExternalSemaphore: extSem is NULL");
		return hipErrorInvalidValue;
	}
	pthread_mutex_lock(&g.lock);
	sem = lookup_locked(h);
	if (sem)
		unregister_locked(sem);
	pthread_mutex_unlock(&g.lock);
	if (!sem) {
		hx_err("hipDestroyExternalSemaphore: %p is not a semaphore imported by hipextsem "
		       "(never imported, or already destroyed)", h);
		return hipErrorInvalidResourceHandle;
	}
	HX_TRACE(destroy, h, hx_now_ns());
	if (atomic_load(&sem->refs) > 1)
		hx_info("semaphore %p destroyed with operations pending; its sync object is "
			"released when they complete", h);
	sem_unref(sem);
	return hipSuccess;
}

static void report_stuck_locked(struct hx_wait_op *op, int64_t now)
{
	for (unsigned i = 0; i < op->count; i++) {
		struct hx_sem_wait *e = &op->entries[i];
		uint64_t cur = 0;
		const char *state = "";

		if (e->done)
			continue;
		if (e->sem->w.timeline)
			hx_sync_query(&g.dev, e->sem->w.handle, &cur);
		else
			state = hx_sync_poll(&g.dev, e->sem->w.handle, 0) == 0 ? " (signaled)"
									      : " (unsignaled)";
		hx_warn("stuck wait: stream %p has waited %.1f s for %s semaphore %p (syncobj %u) "
			"to reach %llu; current value %llu%s",
			(void *)op->stream, (double)(now - op->enqueued_ns) / 1e9,
			e->sem->w.timeline ? "timeline" : "binary", encode(e->sem), e->sem->w.handle,
			(unsigned long long)e->w.value, (unsigned long long)cur, state);
		HX_TRACE(stuck, encode(e->sem), e->w.value, cur, op->stream, op->enqueued_ns, now);
	}
}

static int64_t watchdog(int64_t now)
{
	int64_t next = INT64_MAX;

	if (!g.stuck_ns)
		return INT64_MAX;
	pthread_mutex_lock(&g.lock);
	/* Waits are in enqueue order: only the oldest unreported one can be
	 * due next, so each wait is looked at once. */
	while (g.watch && g.watch->enqueued_ns + g.stuck_ns <= now) {
		report_stuck_locked(g.watch, now);
		g.watch = g.watch->all_next;
	}
	if (g.watch) {
		next = g.watch->enqueued_ns + g.stuck_ns;
		g.watchdog_idle = false;
	} else if (!g.watchdog_idle) {
		/* Nothing pending: one more look a period from now rather
		 * than none, so that a wait enqueued meanwhile (the next
		 * frame's, usually) is covered without waking the thread. */
		next = now + g.stuck_ns;
		g.watchdog_idle = true;
	}
	g.waiter_wakes_at = next;
	pthread_mutex_unlock(&g.lock);
	return next;
}

void hx_op_stats(struct hx_stats *st)
{
	init();
	pthread_mutex_lock(&g.lock);
	st->live_sems = g.nlive;
	st->pending_waits = g.npending_waits;
	st->pending_signals = atomic_load(&g.npending_signals);
	st->slots_allocated = (g.pools[SLOT_HOST].nchunks + g.pools[SLOT_SIGNAL].nchunks) *
			      SLOTS_PER_CHUNK;
	pthread_mutex_unlock(&g.lock);
}

/* ---- fork -------------------------------------------------------------- */

static void fork_prepare(void)
{
	pthread_mutex_lock(&g.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&g.lock);
}

static void fork_child(void)
{
	/* The child has none of the parent's threads and must not touch the
	 * parent's DRM file (syncobj handles live in the open file, which the
	 * child shares).  Drop everything; the next call starts afresh. */
	pthread_mutex_init(&g.lock, NULL);
	for (uint32_t i = 0; i < g.cap; i++) {
		struct hx_sem *sem = g.tab[i].sem;
		if (!sem)
			continue;
		if (sem->w.efd >= 0)
			close(sem->w.efd);
		free(sem);
		g.tab[i].sem = NULL;
	}
	free(g.tab);
	free(g.free_idx);
	g.tab = NULL;
	g.free_idx = NULL;
	g.cap = g.nfree = g.nlive = g.free_head = 0;
	/* Pending ops and their entries belong to the parent's streams. */
	g.ops = g.ops_tail = g.watch = NULL;
	g.npending_waits = 0;
	atomic_store(&g.npending_signals, 0);
	/* Wait slots belong to the parent's runtime context. */
	memset(g.pools, 0, sizeof(g.pools));
	if (g.dev.fd >= 0)
		close(g.dev.fd);
	g.dev.fd = -1;
	g.dev_tried = false;
	g.dev_err = 0;
	g.waiter_wakes_at = INT64_MAX;
	g.watchdog_idle = false;
	g.wait_path = WAIT_PATH_UNKNOWN;
	g.wait_value_attr = -1;
	g.wait_path_why[0] = '\0';
	g.exiting = false;
	g.pid = getpid();
	hx_waiter_reset_after_fork();
	hx_log_reset_after_fork();
	hx_trace_reset_after_fork();
}

/* ---- graph nodes, stream capture, capability report (graph_*.c) ------ */

/* Validates a signal array as hx_op_signal does, without a stream: used
 * when the signal becomes a graph node that runs later, maybe many times. */
hipError_t hx_op_signal_validate(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
				 const char *what)
{
	struct hx_sem *local[LOCAL_SEMS];
	struct hx_sem **sems;
	hipError_t err;

	if (!init())
		return hipErrorNotInitialized;
	err = lookup_args(what, hs, params, n, false, &sems, local);
	if (err || !sems)
		return err;
	err = check_signal_values(what, hs, sems, params, n);
	unref_all(sems, n);
	free_sems(sems, local);
	return err;
}

/* Signals now (a graph's host node, on the runtime's callback thread).
 * Handles are looked up at each run: one destroyed since the node was
 * built is skipped with a log line, never dereferenced. */
void hx_op_signal_handles(const hipExternalSemaphore_t *hs, const uint64_t *values, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct hx_sem *sem;
		int ret;

		pthread_mutex_lock(&g.lock);
		sem = lookup_locked(hs[i]);
		if (sem)
			sem_ref(sem);
		pthread_mutex_unlock(&g.lock);
		if (!sem) {
			hx_err("graph signal node: semaphore %p was destroyed before the graph ran; "
			       "not signaled", hs[i]);
			continue;
		}
		ret = hx_sync_signal(&g.dev, sem->w.handle, sem->w.timeline ? values[i] : 0);
		if (ret)
			hx_err("%s(handle %u, point %llu) failed: %s",
			       sem->w.timeline ? "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL"
					     : "DRM_IOCTL_SYNCOBJ_SIGNAL",
			       sem->w.handle, (unsigned long long)values[i], strerror(-ret));
		sem_unref(sem);
	}
}

/* Can the shim import timeline sync objects?  Opens the device the same
 * lazy way import does.  On false, `why` says why. */
bool hx_op_timeline_supported(char *why, size_t n)
{
	bool ok = false;
	int ret;

	if (!init()) {
		snprintf(why, n, "the HIP runtime could not be resolved");
		return false;
	}
	pthread_mutex_lock(&g.lock);
	ret = open_device_locked();
	if (ret)
		snprintf(why, n, "no usable DRM render node with sync objects (%s)", strerror(-ret));
	else if (!g.dev.has_timeline)
		snprintf(why, n, "%s (%s) has no timeline sync objects (DRM_CAP_SYNCOBJ_TIMELINE)",
			 g.dev.path, g.dev.driver);
	else
		ok = true;
	pthread_mutex_unlock(&g.lock);
	return ok;
}

/* Validates a wait array as hx_op_wait does, without a stream: used when
 * the wait becomes a graph node (at node creation and before each launch,
 * so a semaphore destroyed since then fails the launch cleanly). */
hipError_t hx_op_wait_validate(const hipExternalSemaphore_t *hs, const void *params, unsigned n,
			       const char *what)
{
	struct hx_sem *local[LOCAL_SEMS];
	struct hx_sem **sems;
	hipError_t err;

	if (!init())
		return hipErrorNotInitialized;
	err = lookup_args(what, hs, params, n, true, &sems, local);
	if (err || !sems)
		return err;
	unref_all(sems, n);
	free_sems(sems, local);
	return hipSuccess;
}
