/* SPDX-License-Identifier: MIT */
/*
 * cpuhip core: streams, events, host callbacks, wait/write value, memory.
 *
 * Model (mirrors ROCm clr's observable behaviour, not its structure):
 *
 * - Every stream feeds a hardware queue ("hwq").  By default each stream has
 *   its own hwq served by its own worker thread.  GPU_MAX_HW_QUEUES=N maps
 *   streams round-robin onto N shared hwqs, so a pending wait-value blocks
 *   every stream behind it on the same queue, as on real hardware.
 * - Commands carry a per-stream sequence number; a stream's `completed`
 *   advances in order.  Cross-stream ordering (hipStreamWaitEvent, the
 *   legacy null stream) is expressed as dependencies (stream, seq) that the
 *   worker waits for before running the command.
 * - One global lock protects all bookkeeping; one global condition variable
 *   (`progress`) is broadcast whenever anything completes.
 * - Host callbacks run on ONE lazily created handler thread for the whole
 *   process; the worker that reached the callback waits for it to return,
 *   stalling its queue, exactly like ROCm.
 * - Wait-value re-reads memory: spin a little, then sleep on `progress` with
 *   a timeout that backs off to WAIT_VALUE_MAX_SLEEP_US (150 us).  A write
 *   by WriteValue on another stream wakes it at once; a plain store by any
 *   host thread is noticed within that cap.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cpuhip_internal.h"
#include "cpuhip_test.h"

#if CPUHIP_ABI == 5
#define RUNTIME_VERSION 50221153 /* HIP 5.2.21153, Debian's libamdhip64-5 */
#define DEFAULT_RELEASE 502
#elif defined(CPUHIP_DEV_TREE)
#define RUNTIME_VERSION 79900000 /* above every 7.x played; the tree's own number is not modelled */
#define DEFAULT_RELEASE 799
#else
#define RUNTIME_VERSION 60342134 /* HIP 6.3.42134 */
#define DEFAULT_RELEASE 603
#endif

/* The development tree of clr (rocm-systems projects/clr at 02bb78cf),
 * newer than every numbered release the abi6 flavour plays: the abi6dev
 * build, whose exports add the tree's later entry points, plays it by
 * default (CPUHIP_ROCM=dev names it there).  Which release first has its
 * behaviour is not known, so it is played under its own name, never under
 * a number. */
#define RELEASE_DEV 799

#define WAIT_VALUE_SPIN_NS 20000
#define WAIT_VALUE_MAX_SLEEP_US 150
#define EVENT_SPIN_NS 100000

/* What clr answers for a stream handle that names no live stream (a
 * destroyed or garbage hipStream_t): hip::isValid() (hip_stream.cpp) fails
 * and the call returns hipErrorContextIsDestroyed, 5.2 to 6.4.3; the calls
 * that answer otherwise say so where they are defined. */
#define STREAM_GONE ((hipError_t)709)

/* The ROCm release played (CPUHIP_ROCM=M.m), major * 100 + minor.  Where
 * clr's answers changed between releases, the code below asks for it; the
 * README lists every such place with its clr source. */
static int release = DEFAULT_RELEASE;

/* ------------------------------------------------------------------ */
/* Data structures                                                     */

struct stream;

struct dep {
	struct stream *stream; /* holds a reference */
	uint64_t seq;
};

enum cmd_kind {
	CMD_NOP,
	CMD_DELAY,
	CMD_COPY,
	CMD_SET,
	CMD_WAIT_VALUE,
	CMD_WRITE_VALUE,
	CMD_RECORD,
	CMD_CALLBACK,
	CMD_HOST_FN,
};

struct event;

struct cmd {
	struct cmd *next;
	enum cmd_kind kind;
	struct stream *stream; /* holds a reference */
	hipStream_t user_stream; /* handle as the caller passed it (callbacks) */
	uint64_t seq;
	struct dep *deps;
	unsigned int ndeps;
	union {
		unsigned int usec;
		struct {
			void *dst;
			const void *src;
			size_t size;
		} copy;
		struct {
			void *dst;
			int value;
			size_t size;
		} set;
		struct {
			void *ptr;
			uint64_t value;
			uint64_t mask;
			unsigned int flags;
			bool is64;
		} wv;
		struct {
			struct event *ev; /* holds a reference */
			uint64_t gen;
		} rec;
		struct {
			hipStreamCallback_t fn;
			hipHostFn_t hfn;
			void *data;
		} cb;
	} u;
};

struct hwq {
	struct cmd *head, *tail;
	pthread_cond_t work;
	pthread_t thread;
	pid_t tid;
	bool started;
	struct stream *owner; /* private queue: exits once the owner is gone */
	unsigned int users; /* shared queue: live streams mapped onto it */
};

struct stream {
	struct stream *next_live; /* registry */
	int dev; /* CPUHIP_DEVICES: the device current at creation */
	unsigned int flags;
	int priority;
	bool is_null;
	bool per_thread;
	bool dead; /* destroyed by the application */
	unsigned int refs;
	uint64_t last_enq;
	uint64_t completed;
	struct hwq *q;
};

struct event {
	struct event *next_live;
	int dev; /* CPUHIP_DEVICES: the device current at creation */
	unsigned int flags;
	unsigned int refs;
	bool dead;
	bool recorded;
	uint64_t gen; /* bumped by every hipEventRecord */
	bool done; /* the latest record has executed */
	struct timespec ts;
	struct stream *stream; /* stream of the latest record, referenced */
	uint64_t seq;
};

struct cb_req {
	struct cb_req *next;
	struct cmd *cmd;
	bool done;
};

struct alloc {
	void *ptr;
	size_t size;
	bool host;
	bool signal; /* hipExtMallocWithFlags(hipMallocSignalMemory) */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t progress;
	struct stream *streams; /* live registry */
	struct event *events;
	struct stream *null_stream;
	unsigned int nstreams_alive;

	unsigned int max_hw_queues; /* 0: one private queue per stream */
	struct hwq **shared_q[3]; /* one pool per priority (high, normal, low) */

	/* callback handler thread */
	bool cb_started;
	pthread_t cb_thread;
	pid_t cb_tid;
	pthread_cond_t cb_work;
	struct cb_req *cb_head, *cb_tail;

	/* allocations */
	struct alloc *allocs;
	size_t nallocs, cap_allocs;

	bool no_wait_value; /* CPUHIP_NO_STREAM_WAIT_VALUE=1 */
	bool attrs_zero;    /* CPUHIP_DEVICE_ATTRS=zero */
	bool cp_wait;       /* GPU_STREAMOPS_CP_WAIT=1 */
	bool wait_refused;  /* CPUHIP_STREAM_WAIT=refuse (test-only fault) */
	bool mipmap_hidden; /* CPUHIP_MIPMAP=hidden (6.x flavours; hypothetical) */
	bool extsem_nodes_empty; /* CPUHIP_EXTSEM_NODE_CALLS=empty (7.x builds) */
	int pci_domain, pci_bus, pci_device, pci_function;
} g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static __thread hipError_t tls_last_error;
static __thread struct stream *tls_per_thread;
static __thread int tls_device;
/* CPUHIP_DEVICES=2 (opt-in, for the cases that need a second device): two
 * devices to choose with hipSetDevice; streams and events belong to the
 * device current when they are made, and hipEventRecord refuses an event
 * of another device than the stream's, as clr does (hip_event.cpp
 * hipEventRecord_common: hipErrorInvalidResourceHandle, 400).  Every other
 * call still answers for device 0 only. */
static int ndevices = 1;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void abs_deadline(struct timespec *ts, long usec)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += usec * 1000;
	while (ts->tv_nsec >= 1000000000) {
		ts->tv_nsec -= 1000000000;
		ts->tv_sec++;
	}
}

static void cond_init_mono(pthread_cond_t *c)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
}

/* The last error, as HIP_RETURN records it (hipamd/src/hip_internal.hpp).
 * clr through rocm-6.2.2 (and its 2024 tree) stores every result, success
 * included; the rocm-systems tree of the 7.x releases
 * (HIP_UPDATE_ERROR_STATE) keeps the last failure other than
 * hipErrorNotReady until hipGetLastError, like CUDA.  Default: the former;
 * CPUHIP_LAST_ERROR=failures plays the latter. */
static bool last_error_failures_only;

static hipError_t ret(hipError_t e)
{
	if (!last_error_failures_only)
		tls_last_error = e;
	else if (e != hipSuccess && e != hipErrorNotReady)
		tls_last_error = e;
	return e;
}

/*
 * A stream handle a release uses without checking it (a cast to
 * hip::Stream*): a destroyed or bogus handle, or hipStreamPerThread where
 * the release does not resolve it, is a segfault or a use-after-free on
 * ROCm.  The stand-in stops loudly at the same point instead, so that a
 * test sees the crash the real runtime would have.  `where` names the
 * release's function that uses the handle unchecked.
 */
static void crash_on_handle(const char *call, hipStream_t h, const char *where)
{
	if (release == RELEASE_DEV)
		fprintf(stderr, "cpuhip: %s(stream %p) on the clr development tree: %s uses the handle "
			"unchecked; a real runtime crashes here\n", call, (void *)h, where);
	else
		fprintf(stderr, "cpuhip: %s(stream %p) on ROCm %d.%d: %s uses the handle unchecked; a "
			"real runtime crashes here\n", call, (void *)h, release / 100, release % 100,
			where);
	fflush(stderr);
	abort();
}

/*
 * Test-only fault modes (CPUHIP_BROKEN), so that tools which claim to
 * detect a broken device can be shown to detect one.  Each plays one way a
 * real device or runtime can fail the stream contract the shim relies on:
 *   wait-value-passes     hipStreamWaitValue* lets the stream go on at once
 *   host-func-never-runs  host functions are dropped (the stream goes on)
 *   host-func-early       host functions run when enqueued, on the caller's
 *                         thread, before the stream's prior work (also
 *                         CPUHIP_FAULT_EAGER_HOST_FN=1)
 * Read once; unset or any other value is the normal runtime.
 */
enum broken_mode {
	BROKEN_NONE,
	BROKEN_WAIT_VALUE_PASSES,
	BROKEN_HOST_FUNC_NEVER_RUNS,
	BROKEN_HOST_FUNC_EARLY,
};

static pthread_once_t broken_once = PTHREAD_ONCE_INIT;
static enum broken_mode broken;

static void broken_read(void)
{
	const char *e = getenv("CPUHIP_FAULT_EAGER_HOST_FN");

	/* The older spelling of host-func-early (tests/vulkan uses it). */
	if (e && !strcmp(e, "1"))
		broken = BROKEN_HOST_FUNC_EARLY;
	e = getenv("CPUHIP_BROKEN");
	if (!e)
		return;
	if (!strcmp(e, "wait-value-passes"))
		broken = BROKEN_WAIT_VALUE_PASSES;
	else if (!strcmp(e, "host-func-never-runs"))
		broken = BROKEN_HOST_FUNC_NEVER_RUNS;
	else if (!strcmp(e, "host-func-early"))
		broken = BROKEN_HOST_FUNC_EARLY;
	else if (*e)
		fprintf(stderr, "cpuhip: unknown CPUHIP_BROKEN=%s ignored\n", e);
}

static enum broken_mode broken_mode(void)
{
	pthread_once(&broken_once, broken_read);
	return broken;
}

static void stream_unref_locked(struct stream *s);
static void ensure_init(void);

static void wait_stream_locked(struct stream *s, uint64_t seq);

/*
 * A thread's per-thread stream goes away with the thread, as the runtime's
 * does: hipamd rocm-5.2.3 keeps it in a thread_local `stream_per_thread`
 * whose destructor (`stream_per_thread::~stream_per_thread`,
 * src/hip_stream.cpp) destroys the stream; clr's newer trees keep it in the
 * thread_local `TlsAggregator` (hip_internal.hpp).  Destroying the stream
 * waits for its pending work (ROCclr `HostQueue::terminate` enqueues a
 * marker and `awaitCompletion`s it).  A C++ thread_local's destructor is
 * registered with __cxa_thread_atexit_impl when the object is first
 * constructed, and glibc runs those destructors at a thread's end and in
 * exit() (for the thread that calls it, before the atexit handlers), in
 * reverse order of registration.  So the destructor below is registered
 * the same way, when 5.2.3 first resolves hipStreamPerThread (pts_object
 * below; from 5.3: at the thread's first call, tls_aggregator below), and
 * blocks until the stream's work is done: a never-satisfied wait on it
 * hangs the thread's end, or exit(), as on ROCm.
 */
extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso_symbol);
extern void *__dso_handle;

static void pts_destructor(void *p)
{
	struct stream *s = p;
	pthread_mutex_lock(&g.lock);
	wait_stream_locked(s, s->last_enq);
	/* Unlink from the registry. */
	for (struct stream **pp = &g.streams; *pp; pp = &(*pp)->next_live) {
		if (*pp == s) {
			*pp = s->next_live;
			break;
		}
	}
	s->dead = true;
	if (s->q && s->q->owner == s)
		pthread_cond_signal(&s->q->work);
	else if (s->q)
		s->q->users--;
	stream_unref_locked(s);
	pthread_mutex_unlock(&g.lock);
	tls_per_thread = NULL;
}

static struct stream *stream_new_locked(unsigned int flags, int priority, bool is_null);

static void parse_pci(void)
{
	g.pci_domain = 0;
	g.pci_bus = 3;
	g.pci_device = 0;
	g.pci_function = 0;
	const char *e = getenv("CPUHIP_PCI_BUS_ID");
	if (e) {
		unsigned int d, b, dev, f;
		if (sscanf(e, "%x:%x:%x.%x", &d, &b, &dev, &f) == 4) {
			g.pci_domain = (int)d;
			g.pci_bus = (int)b;
			g.pci_device = (int)dev;
			g.pci_function = (int)f;
		}
	}
}

/* CPUHIP_ROCM=M.m: the release whose answers to play.  The flavour fixes
 * the ABI, so abi5 plays 5.x releases and abi6 6.x and 7.x ones (7.x keeps
 * the 6.x layouts); anything else keeps the flavour's default, loudly. */
static int parse_release(const char *e)
{
	unsigned int major, minor;
	int rel;

	if (!e || !*e)
		return DEFAULT_RELEASE;
	if (strcmp(e, "dev") == 0) {
		if (DEFAULT_RELEASE == RELEASE_DEV)
			return RELEASE_DEV;
		fprintf(stderr, "cpuhip: CPUHIP_ROCM=dev is played by the abi6dev build (its exports "
			"differ); playing %d.%d\n", DEFAULT_RELEASE / 100, DEFAULT_RELEASE % 100);
		return DEFAULT_RELEASE;
	}
	if (sscanf(e, "%u.%u", &major, &minor) != 2 || minor > 99) {
		fprintf(stderr, "cpuhip: CPUHIP_ROCM=%s is not M.m; playing %d.%d\n", e,
			DEFAULT_RELEASE / 100, DEFAULT_RELEASE % 100);
		return DEFAULT_RELEASE;
	}
	rel = (int)(major * 100 + minor);
	if ((CPUHIP_ABI == 5 && major != 5) || (CPUHIP_ABI == 6 && (major < 6 || major > 7)) ||
	    DEFAULT_RELEASE == RELEASE_DEV) {
		fprintf(stderr, "cpuhip: CPUHIP_ROCM=%s does not match the abi%d flavour; playing %d.%d\n",
			e, CPUHIP_ABI, DEFAULT_RELEASE / 100, DEFAULT_RELEASE % 100);
		return DEFAULT_RELEASE;
	}
	return rel;
}

int cpuhip_release(void)
{
	ensure_init();
	return release;
}

void cpuhip_extsem_node_call(const char *name)
{
	ensure_init();
	if (!g.extsem_nodes_empty)
		return;
	fprintf(stderr, "cpuhip: %s: the dispatch table slot of this call is empty "
		"(CPUHIP_EXTSEM_NODE_CALLS=empty, as in every 7.x build): a call to address 0\n",
		name);
	abort();
}

/* HIP_VERSION as clr's hipRuntimeGetVersion and hipDriverGetVersion both
 * answer it (hip_context.cpp): major * 10^7 + minor * 10^5 + build.  A
 * release chosen with CPUHIP_ROCM reports build 0 (cpuhip is no build). */
static int runtime_version(void)
{
	ensure_init();
	if (release == DEFAULT_RELEASE)
		return RUNTIME_VERSION;
	return (release / 100) * 10000000 + (release % 100) * 100000;
}

static void global_init(void)
{
	const char *ndev = getenv("CPUHIP_DEVICES");
	if (ndev && !strcmp(ndev, "2"))
		ndevices = 2;
	cond_init_mono(&g.progress);
	cond_init_mono(&g.cb_work);
	const char *e = getenv("GPU_MAX_HW_QUEUES");
	if (e && *e) {
		long n = strtol(e, NULL, 10);
		if (n > 0 && n < 1024) {
			g.max_hw_queues = (unsigned int)n;
			for (int p = 0; p < 3; p++)
				g.shared_q[p] = calloc(n, sizeof(*g.shared_q[p]));
		}
	}
	/* ROCm release variants of hipDeviceGetAttribute (README.md): the
	 * stream wait-value attribute, or every attribute, reading 0 while
	 * the wait/write-value calls keep working. */
	e = getenv("CPUHIP_NO_STREAM_WAIT_VALUE");
	g.no_wait_value = e && strcmp(e, "1") == 0;
	/* An explicit release before clr 261620a2e (Oct 2022, first tagged
	 * in rocm-5.6.0; 5.5 has it) reads 0 on this gfx1030 device.  The
	 * abi5 default keeps 1 so that the default suites run the common
	 * case; the attr0 suites play the other. */
	release = parse_release(getenv("CPUHIP_ROCM"));
	e = getenv("CPUHIP_ROCM");
	if (e && *e && release < 505)
		g.no_wait_value = true;
	e = getenv("CPUHIP_DEVICE_ATTRS");
	g.attrs_zero = e && strcmp(e, "zero") == 0;
	/* clr's flag (rocclr/utils/flags.hpp): stream waits use the CP
	 * barrier-value packet, which needs signal memory. */
	e = getenv("GPU_STREAMOPS_CP_WAIT");
	g.cp_wait = e && (strcmp(e, "1") == 0 || strcmp(e, "true") == 0);
	/* The 7.x tree keeps failures (HIP_UPDATE_ERROR_STATE); the knob
	 * overrides the release's choice either way. */
	last_error_failures_only = release >= 700;
	e = getenv("CPUHIP_LAST_ERROR");
	if (e && strcmp(e, "failures") == 0)
		last_error_failures_only = true;
	else if (e && strcmp(e, "all") == 0)
		last_error_failures_only = false;
	e = getenv("CPUHIP_STREAM_WAIT");
	g.wait_refused = e && strcmp(e, "refuse") == 0;
	e = getenv("CPUHIP_MIPMAP");
	g.mipmap_hidden = CPUHIP_ABI == 6 && e && strcmp(e, "hidden") == 0;
	e = getenv("CPUHIP_EXTSEM_NODE_CALLS");
	g.extsem_nodes_empty = e && strcmp(e, "empty") == 0;
	parse_pci();
	pthread_mutex_lock(&g.lock);
	g.null_stream = stream_new_locked(hipStreamDefault, 0, true);
	pthread_mutex_unlock(&g.lock);
}

/*
 * From 5.3 clr keeps the per-thread stream inside the thread_local
 * TlsAggregator (hip_internal.hpp: member stream_per_thread_obj_; defined
 * in hip_context.cpp), which every entry point touches (HIP_INIT_API reads
 * and writes hip::tls): its destructor is registered at the thread's first
 * call into the runtime, not when the per-thread stream is made, and tears
 * that stream down (waiting) at the thread's end or in exit().  5.2.3's
 * separate thread_local stream_per_thread is made, and its destructor
 * registered, when hipStreamPerThread is first resolved (pts_object).
 */
static __thread bool tls_aggregator;

static void tls_aggregator_destructor(void *p)
{
	(void)p;
	if (tls_per_thread)
		pts_destructor(tls_per_thread);
}

static void tls_aggregator_touch(void)
{
	if (tls_aggregator)
		return;
	tls_aggregator = true;
	__cxa_thread_atexit_impl(tls_aggregator_destructor, NULL, &__dso_handle);
}

static void ensure_init(void)
{
	pthread_once(&g_once, global_init);
	if (!tls_aggregator && release >= 503)
		tls_aggregator_touch();
}

/* fork(): the runtime's locks are held across it, so that a child never
 * inherits one held by a worker or the callback thread between two
 * commands (its next call would hang).  Registered when the library loads,
 * before any library loaded in front of it registers its own handlers
 * lazily: theirs run first at fork, which keeps their locks before these,
 * the order in which their calls into this runtime take them. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&g.lock);
	cpuhip_graph_fork_lock();
}

static void fork_release(void)
{
	cpuhip_graph_fork_unlock();
	pthread_mutex_unlock(&g.lock);
}

/* The child has none of the parent's threads: no callback thread, and the
 * parent's queued callbacks (records on its threads' stacks) are not its
 * own.  It starts a callback thread of its own at its first callback.
 * ROCm does not support HIP in the child of a process that initialised
 * it; cpuhip lets a child use it on streams it creates and on its own
 * hipStreamPerThread (made afresh in the child), so that the
 * shim's own state in a child (its locks, its waiter thread, its
 * registry) can be tested (tests/workload, tests/interleave). */
static void fork_child(void)
{
	g.cb_started = false;
	g.cb_head = g.cb_tail = NULL;
	/* The parent's threads that waited on these are not here, but glibc's
	 * condition variables remember them: a signal would wait for them to
	 * wake (seen: the child's first callback hung in pthread_cond_signal).
	 * The parent's streams keep theirs: the child cannot use them. */
	cond_init_mono(&g.progress);
	cond_init_mono(&g.cb_work);
	/* The forking thread's per-thread stream, if it made one, is the
	 * parent's: no thread of the child serves its queue, so work the
	 * child queued on hipStreamPerThread would never run and the
	 * thread_local teardown in the child's exit() would wait for it for
	 * good.  The child's main thread gets one of its own at its first
	 * use, as any new thread does; the destructor registered in the
	 * parent (pts_object, tls_aggregator) is in the list the child
	 * inherited and tears that one down.  The parent's stream stays in
	 * the registry, unusable like the parent's other streams. */
	tls_per_thread = NULL;
	fork_release();
}

__attribute__((constructor)) static void fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_child);
}

/* ------------------------------------------------------------------ */
/* Allocations                                                         */

static void *track_alloc(size_t size, bool host, bool signal)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, size) != 0)
		return NULL;
	memset(p, 0, size);
	pthread_mutex_lock(&g.lock);
	if (g.nallocs == g.cap_allocs) {
		size_t cap = g.cap_allocs ? g.cap_allocs * 2 : 64;
		struct alloc *n = realloc(g.allocs, cap * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&g.lock);
			free(p);
			return NULL;
		}
		g.allocs = n;
		g.cap_allocs = cap;
	}
	g.allocs[g.nallocs++] = (struct alloc){ p, size, host, signal };
	pthread_mutex_unlock(&g.lock);
	return p;
}

static bool untrack_alloc(void *p)
{
	bool found = false;
	pthread_mutex_lock(&g.lock);
	for (size_t i = 0; i < g.nallocs; i++) {
		if (g.allocs[i].ptr == p) {
			g.allocs[i] = g.allocs[--g.nallocs];
			found = true;
			break;
		}
	}
	if (g.nallocs == 0) {
		free(g.allocs);
		g.allocs = NULL;
		g.cap_allocs = 0;
	}
	pthread_mutex_unlock(&g.lock);
	if (found)
		free(p);
	return found;
}

/* ------------------------------------------------------------------ */
/* Streams and queues                                                  */

static void *worker_main(void *arg);

static void stream_free(struct stream *s)
{
	free(s);
}

static void stream_unref_locked(struct stream *s)
{
	if (--s->refs == 0)
		stream_free(s);
}

static struct hwq *hwq_new_locked(struct stream *owner)
{
	struct hwq *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	pthread_cond_init(&q->work, NULL);
	q->owner = owner;
	if (owner)
		owner->refs++;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&q->thread, &a, worker_main, q) != 0) {
		pthread_attr_destroy(&a);
		if (owner)
			owner->refs--;
		pthread_cond_destroy(&q->work);
		free(q);
		return NULL;
	}
	pthread_attr_destroy(&a);
	return q;
}

/*
 * The hardware queue of a new stream under GPU_MAX_HW_QUEUES=N, as rocclr's
 * Device::acquireQueue / getQueueFromPool choose it
 * (rocclr/device/rocm/rocdevice.cpp, rocm-5.6.0 to 6.4.3 alike): one pool
 * per priority; while a pool holds fewer than N queues, an idle queue of it
 * is reused, else a new one is created; a full pool hands out its least
 * used queue (the first of equals).  Streams of different priorities never
 * share a queue, so only streams of one priority block each other.
 */
static struct hwq *shared_queue_locked(int priority)
{
	struct hwq **pool = g.shared_q[priority + 1];
	struct hwq *best = NULL;
	unsigned int n = 0;

	while (n < g.max_hw_queues && pool[n])
		n++;
	for (unsigned int i = 0; i < n; i++)
		if (n < g.max_hw_queues ? !best && pool[i]->users == 0
					: !best || pool[i]->users < best->users)
			best = pool[i];
	if (!best && n < g.max_hw_queues)
		best = pool[n] = hwq_new_locked(NULL);
	if (best)
		best->users++;
	return best;
}

static struct stream *stream_new_locked(unsigned int flags, int priority, bool is_null)
{
	struct stream *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->dev = is_null ? -1 : tls_device; /* the null stream serves every device */
	s->flags = flags;
	s->priority = priority;
	s->is_null = is_null;
	s->refs = 1; /* the registry's (or the null stream's) reference */
	if (g.max_hw_queues) {
		s->q = shared_queue_locked(priority);
	} else {
		s->q = hwq_new_locked(s);
	}
	if (!s->q) {
		free(s);
		return NULL;
	}
	if (!is_null) {
		s->next_live = g.streams;
		g.streams = s;
	}
	return s;
}

hipStream_t cpuhip_tls_per_thread(void)
{
	return (hipStream_t)tls_per_thread;
}

/*
 * 5.2.3's thread_local `streamPerThreadObj` is constructed, and its
 * destructor registered, when the thread first resolves hipStreamPerThread
 * (getStreamPerThread, src/hip_stream.cpp, rocm-5.2.3 hipamd), which every
 * call does at its start, before any lock of the runtime: hip::isValid
 * resolves the handle and only then takes streamSetLock; STREAM_CAPTURE
 * and PER_THREAD_DEFAULT_STREAM (hip_internal.hpp) resolve it before the
 * call's work.  The registration (__cxa_thread_atexit_impl) takes glibc's
 * loader lock, so it is made here, at the entry (cpuhip_boundary_enter),
 * not under g.lock: a thread that waited for the loader lock with g.lock
 * held would deadlock against a dlopen'd constructor that forks (the
 * loader lock held, then g.lock in fork_prepare), a hang 5.2.3 does not
 * have (cpuhip test pts_ctor_fork).  The stream itself is made
 * at the first lookup (per_thread_stream_locked), as get() makes it.
 */
static __thread bool pts_object;

static void pts_object_destructor(void *p)
{
	(void)p;
	if (tls_per_thread)
		pts_destructor(tls_per_thread);
}

static void pts_object_touch(void)
{
	pts_object = true;
	__cxa_thread_atexit_impl(pts_object_destructor, NULL, &__dso_handle);
}

void cpuhip_pts_touch(hipStream_t h)
{
	if (h != hipStreamPerThread || pts_object)
		return;
	ensure_init(); /* the release, and from 5.3 the TlsAggregator */
	if (release < 503)
		pts_object_touch();
}

static struct stream *per_thread_stream_locked(void)
{
	if (!tls_per_thread) {
		struct stream *s = stream_new_locked(hipStreamDefault, 0, false);
		if (!s)
			return NULL;
		s->per_thread = true;
		tls_per_thread = s;
		if (release < 503) {
			/* Resolved by a path that passed no entry with the
			 * handle: registered here, under g.lock. */
			if (!pts_object)
				pts_object_touch();
		} else {
			tls_aggregator_touch();
		}
	}
	return tls_per_thread;
}

/* Resolve a handle; NULL if it names no live stream. */
static struct stream *lookup_stream_locked(hipStream_t h)
{
	if (h == NULL || h == hipStreamLegacy)
		return g.null_stream;
	if (h == hipStreamPerThread)
		return per_thread_stream_locked();
	for (struct stream *s = g.streams; s; s = s->next_live)
		if ((hipStream_t)s == h)
			return s;
	return NULL;
}

static bool stream_idle_locked(const struct stream *s)
{
	return s->completed >= s->last_enq;
}

static bool is_blocking(const struct stream *s)
{
	return !s->is_null && !(s->flags & hipStreamNonBlocking);
}

static int add_dep(struct cmd *c, struct stream *s, uint64_t seq)
{
	struct dep *n = realloc(c->deps, (c->ndeps + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->deps = n;
	s->refs++;
	c->deps[c->ndeps++] = (struct dep){ s, seq };
	return 0;
}

static void cmd_free_locked(struct cmd *c)
{
	for (unsigned int i = 0; i < c->ndeps; i++)
		stream_unref_locked(c->deps[i].stream);
	free(c->deps);
	if (c->kind == CMD_RECORD) {
		struct event *ev = c->u.rec.ev;
		if (--ev->refs == 0)
			free(ev);
	}
	stream_unref_locked(c->stream);
	free(c);
}

/* Append the implicit dependencies of the legacy null stream (clr
 * hip_context.cpp getNullStream -> Device::WaitActiveStreams; a blocking
 * stream's work waits for the null stream's). */
static int add_legacy_deps_locked(struct cmd *c, struct stream *s)
{
	if (s->is_null) {
		for (struct stream *b = g.streams; b; b = b->next_live)
			if (is_blocking(b) && !stream_idle_locked(b))
				if (add_dep(c, b, b->last_enq))
					return -ENOMEM;
	} else if (is_blocking(s) && !stream_idle_locked(g.null_stream)) {
		if (add_dep(c, g.null_stream, g.null_stream->last_enq))
			return -ENOMEM;
	}
	return 0;
}

static struct cmd *cmd_new(enum cmd_kind kind)
{
	struct cmd *c = calloc(1, sizeof(*c));
	if (c)
		c->kind = kind;
	return c;
}

/* Queue c on s (lock held).  Takes ownership of c; on failure frees it. */
static hipError_t submit_locked(struct stream *s, struct cmd *c, hipStream_t user)
{
	if (add_legacy_deps_locked(c, s)) {
		c->stream = s;
		s->refs++;
		cmd_free_locked(c);
		return hipErrorOutOfMemory;
	}
	c->stream = s;
	c->user_stream = user;
	s->refs++;
	c->seq = ++s->last_enq;
	struct hwq *q = s->q;
	if (q->tail)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	pthread_cond_signal(&q->work);
	return hipSuccess;
}

/* Set around the one enqueue that 5.3 to 6.1 let past an invalidated
 * capture (hipLaunchHostFunc, below). */
static __thread bool past_invalidated_capture;

/* Lookup + submit in one step.  With wait_done the caller then waits
 * until c has run, as clr's awaitCompletion() does for a copy it does not
 * leave asynchronous (memcpy_async). */
static hipError_t submit_common(hipStream_t h, struct cmd *c, bool wait_done)
{
	if (!c)
		return hipErrorOutOfMemory;
	ensure_init();
	/* Stream memory operations are not captured: every release goes
	 * straight to the stream's queue (clr ihipStreamOperation has no
	 * capture check, hip_stream_ops.cpp, rocm-5.2.3 hipamd to the
	 * development tree).  Measured on Debian's 5.2.3, 5.7.1, 6.4.3 and
	 * 7.2.4 with the fake device (tests/realrt/capture_probe.c): on a
	 * stream in a Relaxed capture hipStreamWaitValue64 and
	 * hipStreamWriteValue64 answer hipSuccess, the write lands only once
	 * the wait before it is satisfied, the capture stays active and its
	 * graph gets no node. */
	bool stream_op = c->kind == CMD_WAIT_VALUE || c->kind == CMD_WRITE_VALUE;

	if (!stream_op && !past_invalidated_capture && cpuhip_capture_active(h)) {
		/* This runtime records only host functions, event records and
		 * cross-stream waits into a capture (cpuhip_capture.c). */
		free(c->deps);
		free(c);
		return hipErrorStreamCaptureUnsupported;
	}
	pthread_mutex_lock(&g.lock);
	struct stream *s = lookup_stream_locked(h);
	if (!s) {
		pthread_mutex_unlock(&g.lock);
		free(c->deps);
		free(c);
		return STREAM_GONE;
	}
	hipError_t e = submit_locked(s, c, h);
	if (e == hipSuccess && wait_done) {
		uint64_t seq = s->last_enq;
		s->refs++;
		wait_stream_locked(s, seq);
		stream_unref_locked(s);
	}
	pthread_mutex_unlock(&g.lock);
	return e;
}

static hipError_t submit(hipStream_t h, struct cmd *c)
{
	return submit_common(h, c, false);
}

static void wait_stream_locked(struct stream *s, uint64_t seq)
{
	while (s->completed < seq)
		pthread_cond_wait(&g.progress, &g.lock);
}

/* ------------------------------------------------------------------ */
/* Callback handler thread                                             */

static void *cb_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g.lock);
	g.cb_tid = cpuhip_tid();
	for (;;) {
		while (!g.cb_head)
			pthread_cond_wait(&g.cb_work, &g.lock);
		struct cb_req *r = g.cb_head;
		g.cb_head = r->next;
		if (!g.cb_head)
			g.cb_tail = NULL;
		pthread_mutex_unlock(&g.lock);

		struct cmd *c = r->cmd;
		cpuhip_noise();
		/* clr StreamAddCallback::callback: the caller's handle and
		 * hipSuccess, always (hip_event.hpp). */
		if (c->kind == CMD_CALLBACK)
			c->u.cb.fn(c->user_stream, hipSuccess, c->u.cb.data);
		else
			c->u.cb.hfn(c->u.cb.data);

		pthread_mutex_lock(&g.lock);
		r->done = true;
		pthread_cond_broadcast(&g.progress);
	}
	return NULL;
}

/* One handler thread for the process, and the queue stalls until the
 * callback returns: rocvirtual.cpp hands host callbacks to
 * hsa_amd_signal_async_handler, which ROCr runs on its one async-events
 * thread, and clr's streamCallback_common enqueues a blocking marker
 * behind the callback's (hip_stream.cpp). */
static void run_callback(struct cmd *c)
{
	struct cb_req r = { .cmd = c };
	if (broken_mode() == BROKEN_HOST_FUNC_NEVER_RUNS)
		return; /* test-only fault mode */
	pthread_mutex_lock(&g.lock);
	if (!g.cb_started) {
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&g.cb_thread, &a, cb_main, NULL) == 0)
			g.cb_started = true;
		pthread_attr_destroy(&a);
		if (!g.cb_started) {
			/* Cannot happen in practice; never run on the caller. */
			pthread_mutex_unlock(&g.lock);
			fprintf(stderr, "cpuhip: cannot start the callback thread\n");
			abort();
		}
	}
	if (g.cb_tail)
		g.cb_tail->next = &r;
	else
		g.cb_head = &r;
	g.cb_tail = &r;
	pthread_cond_signal(&g.cb_work);
	/* The queue stalls until the callback has returned. */
	while (!r.done)
		pthread_cond_wait(&g.progress, &g.lock);
	pthread_mutex_unlock(&g.lock);
}

/* ------------------------------------------------------------------ */
/* Worker                                                              */

static bool wait_value_ok(const struct cmd *c)
{
	uint64_t v, m = c->u.wv.mask, want = c->u.wv.value;
	if (c->u.wv.is64) {
		v = __atomic_load_n((uint64_t *)c->u.wv.ptr, __ATOMIC_ACQUIRE);
	} else {
		v = __atomic_load_n((uint32_t *)c->u.wv.ptr, __ATOMIC_ACQUIRE);
		m &= 0xffffffffu;
		want &= 0xffffffffu;
	}
	uint64_t x = v & m;
	switch (c->u.wv.flags) {
	case hipStreamWaitValueGte:
		return x >= want;
	case hipStreamWaitValueEq:
		return x == want;
	case hipStreamWaitValueAnd:
		return (x & want) != 0;
	case hipStreamWaitValueNor: {
		uint64_t r = ~(x | (want & m));
		if (!c->u.wv.is64)
			r &= 0xffffffffu;
		return r != 0;
	}
	}
	return true;
}

static void do_wait_value(struct cmd *c)
{
	int64_t start = now_ns();
	if (broken_mode() == BROKEN_WAIT_VALUE_PASSES)
		return; /* test-only fault mode */
	while (!wait_value_ok(c)) {
		if (now_ns() - start < WAIT_VALUE_SPIN_NS) {
			sched_yield();
			continue;
		}
		break;
	}
	long sleep_us = 5;
	pthread_mutex_lock(&g.lock);
	while (!wait_value_ok(c)) {
		struct timespec dl;
		abs_deadline(&dl, sleep_us);
		pthread_cond_timedwait(&g.progress, &g.lock, &dl);
		if (sleep_us < WAIT_VALUE_MAX_SLEEP_US)
			sleep_us = sleep_us * 2 > WAIT_VALUE_MAX_SLEEP_US ? WAIT_VALUE_MAX_SLEEP_US
									: sleep_us * 2;
	}
	pthread_mutex_unlock(&g.lock);
}

static void execute(struct cmd *c)
{
	switch (c->kind) {
	case CMD_NOP:
		break;
	case CMD_DELAY: {
		struct timespec ts = { c->u.usec / 1000000, (long)(c->u.usec % 1000000) * 1000 };
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
		break;
	}
	case CMD_COPY:
		memmove(c->u.copy.dst, c->u.copy.src, c->u.copy.size);
		break;
	case CMD_SET:
		memset(c->u.set.dst, c->u.set.value, c->u.set.size);
		break;
	case CMD_WAIT_VALUE:
		do_wait_value(c);
		break;
	case CMD_WRITE_VALUE:
		if (c->u.wv.is64)
			__atomic_store_n((uint64_t *)c->u.wv.ptr, c->u.wv.value, __ATOMIC_RELEASE);
		else
			__atomic_store_n((uint32_t *)c->u.wv.ptr, (uint32_t)c->u.wv.value,
					 __ATOMIC_RELEASE);
		/* completion below broadcasts `progress`, waking wait-value loops */
		break;
	case CMD_RECORD: {
		struct event *ev = c->u.rec.ev;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		pthread_mutex_lock(&g.lock);
		if (ev->gen == c->u.rec.gen) {
			ev->ts = ts;
			ev->done = true;
		}
		pthread_mutex_unlock(&g.lock);
		break;
	}
	case CMD_CALLBACK:
	case CMD_HOST_FN:
		run_callback(c);
		break;
	}
}

static void *worker_main(void *arg)
{
	struct hwq *q = arg;
	pthread_mutex_lock(&g.lock);
	q->tid = cpuhip_tid();
	q->started = true;
	pthread_cond_broadcast(&g.progress);
	for (;;) {
		while (!q->head && !(q->owner && q->owner->dead))
			pthread_cond_wait(&q->work, &g.lock);
		if (!q->head)
			break; /* private queue of a destroyed stream, drained */
		struct cmd *c = q->head;
		q->head = c->next;
		if (!q->head)
			q->tail = NULL;
		for (unsigned int i = 0; i < c->ndeps; i++)
			wait_stream_locked(c->deps[i].stream, c->deps[i].seq);
		pthread_mutex_unlock(&g.lock);
		cpuhip_noise();

		execute(c);

		pthread_mutex_lock(&g.lock);
		c->stream->completed = c->seq;
		cmd_free_locked(c);
		pthread_cond_broadcast(&g.progress);
	}
	struct stream *owner = q->owner;
	pthread_cond_destroy(&q->work);
	free(q);
	stream_unref_locked(owner);
	pthread_mutex_unlock(&g.lock);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Runtime, device, errors                                             */

CPUHIP_EXPORT hipError_t hipInit(unsigned int flags)
{
	ensure_init();
	return ret(flags != 0 ? hipErrorInvalidValue : hipSuccess);
}

CPUHIP_EXPORT hipError_t hipRuntimeGetVersion(int *v)
{
	if (!v)
		return ret(hipErrorInvalidValue);
	*v = runtime_version();
	return ret(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipDriverGetVersion(int *v)
{
	if (!v)
		return ret(hipErrorInvalidValue);
	*v = runtime_version();
	return ret(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipGetDeviceCount(int *count)
{
	if (!count)
		return ret(hipErrorInvalidValue);
	ensure_init();
	*count = ndevices;
	return ret(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipGetDevice(int *id)
{
	if (!id)
		return ret(hipErrorInvalidValue);
	/* clr: HIP_INIT_API, and HIP_RETURN writes hip::tls (hip_internal.hpp),
	 * so a thread's first hipGetDevice makes its thread state too. */
	ensure_init();
	*id = tls_device;
	return ret(hipSuccess);
}

/* clr hipSetDevice (hip_device_runtime.cpp): an id outside [0, count) ->
 * hipErrorInvalidDevice. */
CPUHIP_EXPORT hipError_t hipSetDevice(int id)
{
	ensure_init();
	if (id < 0 || id >= ndevices)
		return ret(hipErrorInvalidDevice);
	tls_device = id;
	return ret(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipDeviceGetAttribute(int *pi, int attr, int dev)
{
	ensure_init();
	if (!pi)
		return ret(hipErrorInvalidValue);
	if (dev != 0)
		return ret(hipErrorInvalidDevice);
	if (g.attrs_zero) {
		*pi = 0;
		return ret(hipSuccess);
	}
	switch (attr) {
	case HX_DEVATTR_PCI_BUS_ID:
		*pi = g.pci_bus;
		break;
	case HX_DEVATTR_PCI_DEVICE_ID:
		*pi = g.pci_device;
		break;
	case HX_DEVATTR_PCI_DOMAIN_ID:
		*pi = g.pci_domain;
		break;
	case hipDeviceAttributeCanUseStreamWaitValue:
		*pi = g.no_wait_value ? 0 : 1;
		break;
	default:
		return ret(hipErrorInvalidValue);
	}
	return ret(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipDeviceGetPCIBusId(char *buf, int len, int dev)
{
	ensure_init();
	if (!buf || len <= 0)
		return ret(hipErrorInvalidValue);
	if (dev != 0)
		return ret(hipErrorInvalidDevice);
	snprintf(buf, (size_t)len, "%04x:%02x:%02x.%x", g.pci_domain, g.pci_bus, g.pci_device,
		 g.pci_function);
	return ret(hipSuccess);
}

static const char dev_name[] = "cpuhip reference device";
static const char dev_arch[] = "gfx1030";

CPUHIP_EXPORT hipError_t hipGetDeviceProperties(struct hx_device_prop_v5 *p, int dev)
{
	ensure_init();
	if (!p)
		return ret(hipErrorInvalidValue);
	if (dev != 0)
		return ret(hipErrorInvalidDevice);
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", dev_name);
	snprintf(p->gcnArchName, sizeof(p->gcnArchName), "%s", dev_arch);
	p->totalGlobalMem = (size_t)8 << 30;
	p->sharedMemPerBlock = 65536;
	p->warpSize = 32;
	p->maxThreadsPerBlock = 1024;
	p->major = 10;
	p->minor = 3;
	p->multiProcessorCount = 1;
	p->gcnArch = 1030;
	p->pciDomainID = g.pci_domain;
	p->pciBusID = g.pci_bus;
	p->pciDeviceID = g.pci_device;
	p->canMapHostMemory = 1;
	p->concurrentKernels = 1;
	return ret(hipSuccess);
}

#if CPUHIP_ABI == 6
CPUHIP_EXPORT hipError_t hipGetDevicePropertiesR0600(struct hx_device_prop_r0600 *p, int dev)
{
	ensure_init();
	if (!p)
		return ret(hipErrorInvalidValue);
	if (dev != 0)
		return ret(hipErrorInvalidDevice);
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", dev_name);
	snprintf(p->gcnArchName, sizeof(p->gcnArchName), "%s", dev_arch);
	p->totalGlobalMem = (size_t)8 << 30;
	p->sharedMemPerBlock = 65536;
	p->warpSize = 32;
	p->maxThreadsPerBlock = 1024;
	p->major = 10;
	p->minor = 3;
	p->multiProcessorCount = 1;
	p->pciDomainID = g.pci_domain;
	p->pciBusID = g.pci_bus;
	p->pciDeviceID = g.pci_device;
	p->canMapHostMemory = 1;
	p->concurrentKernels = 1;
	p->streamPrioritiesSupported = 1;
	p->timelineSemaphoreInteropSupported = 0; /* stock Linux runtime */
	return ret(hipSuccess);
}
#endif

/* hip_error.cpp: hipGetLastError reads and clears, hipPeekAtLastError
 * reads; the record is thread-local (clr hip::tls.last_error_). */
CPUHIP_EXPORT hipError_t hipGetLastError(void)
{
	hipError_t e = tls_last_error;
	tls_last_error = hipSuccess;
	return e;
}

CPUHIP_EXPORT hipError_t hipPeekAtLastError(void)
{
	return tls_last_error;
}

CPUHIP_EXPORT const char *hipGetErrorName(hipError_t e)
{
	return cpuhip_error_name(e);
}

CPUHIP_EXPORT const char *hipGetErrorString(hipError_t e)
{
	return cpuhip_error_string(e);
}

/* Wait for the null stream and every live stream (only the blocking ones
 * when `blocking_only`: the legacy null stream's view). */
static void sync_streams_locked(bool blocking_only)
{
	for (;;) {
		struct stream *busy = NULL;
		if (!stream_idle_locked(g.null_stream))
			busy = g.null_stream;
		for (struct stream *s = g.streams; s && !busy; s = s->next_live)
			if (!stream_idle_locked(s) && (!blocking_only || is_blocking(s)))
				busy = s;
		if (!busy)
			return;
		busy->refs++;
		wait_stream_locked(busy, busy->last_enq);
		stream_unref_locked(busy);
	}
}

static void sync_all_locked(void)
{
	sync_streams_locked(false);
}

CPUHIP_EXPORT hipError_t hipDeviceSynchronize(void)
{
	CPUHIP_BOUNDARY("hipDeviceSynchronize", NULL);
	ensure_init();
	pthread_mutex_lock(&g.lock);
	sync_all_locked();
	pthread_mutex_unlock(&g.lock);
	return ret(hipSuccess);
}

/* ------------------------------------------------------------------ */
/* Streams                                                             */

static hipError_t create_stream(hipStream_t *out, unsigned int flags, int priority)
{
	ensure_init();
	if (!out)
		return hipErrorInvalidValue;
	if (flags & ~hipStreamNonBlocking)
		return hipErrorInvalidValue;
	/* clr hip_stream.cpp ihipStreamCreate: hip::Stream::Create failing
	 * (no hardware queue, no memory) -> hipErrorOutOfMemory. */
	if (cpuhip_take_fail_mine(CPUHIP_FAIL_STREAM_CREATE))
		return hipErrorOutOfMemory;
	pthread_mutex_lock(&g.lock);
	struct stream *s = stream_new_locked(flags, priority, false);
	if (s)
		g.nstreams_alive++;
	pthread_mutex_unlock(&g.lock);
	if (!s)
		return hipErrorOutOfMemory;
	*out = (hipStream_t)s;
	return hipSuccess;
}

CPUHIP_EXPORT hipError_t hipStreamCreate(hipStream_t *out)
{
	CPUHIP_BOUNDARY("hipStreamCreate", NULL);
	return ret(create_stream(out, hipStreamDefault, 0));
}

CPUHIP_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *out, unsigned int flags)
{
	CPUHIP_BOUNDARY("hipStreamCreateWithFlags", NULL);
	return ret(create_stream(out, flags, 0));
}

CPUHIP_EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t *out, unsigned int flags,
						     int priority)
{
	CPUHIP_BOUNDARY("hipStreamCreateWithPriority", NULL);
	/* clr clamps into [High = -1, Low = 1] (hip::Stream::Priority,
	 * hipStreamCreateWithPriority in hip_stream.cpp, 5.2 to 7.x). */
	if (priority < -1)
		priority = -1;
	if (priority > 1)
		priority = 1;
	return ret(create_stream(out, flags, priority));
}

CPUHIP_EXPORT hipError_t hipDeviceGetStreamPriorityRange(int *least, int *greatest)
{
	/* hip::Stream::Priority::Low and ::High (hip_stream.cpp) */
	if (least)
		*least = 1;
	if (greatest)
		*greatest = -1;
	return ret(hipSuccess);
}

/* clr hipStreamDestroy (hip_stream.cpp): NULL -> hipErrorInvalidHandle,
 * hipStreamPerThread -> hipErrorInvalidResourceHandle (one value, 400),
 * a dead handle -> 709 (5.2 to 6.4.3; the 7.x tree checks no more); a
 * capturing stream's capture ends with it. */
CPUHIP_EXPORT hipError_t hipStreamDestroy(hipStream_t h)
{
	CPUHIP_BOUNDARY("hipStreamDestroy", h);
	ensure_init();
	if (h == NULL || h == hipStreamLegacy || h == hipStreamPerThread)
		return ret(hipErrorInvalidHandle);
	/* A handle that is capturing names a live stream (a destroyed one's
	 * capture was dropped here), so this never touches another's. */
	cpuhip_capture_forget(h);
	pthread_mutex_lock(&g.lock);
	struct stream *s = NULL;
	struct stream **pp;
	for (pp = &g.streams; *pp; pp = &(*pp)->next_live) {
		if ((hipStream_t)*pp == h && !(*pp)->per_thread) {
			s = *pp;
			break;
		}
	}
	if (!s) {
		pthread_mutex_unlock(&g.lock);
		return ret(STREAM_GONE);
	}
	*pp = s->next_live;
	g.nstreams_alive--;
	/* Like clr, pending work is not dropped: the call returns once the
	 * stream has drained (a never-satisfied wait-value hangs here, as it
	 * does on ROCm). */
	wait_stream_locked(s, s->last_enq);
	s->dead = true;
	if (s->q->owner == s)
		pthread_cond_signal(&s->q->work);
	else
		s->q->users--;
	stream_unref_locked(s);
	pthread_mutex_unlock(&g.lock);
	return ret(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipStreamSynchronize(hipStream_t h)
{
	CPUHIP_BOUNDARY("hipStreamSynchronize", h);
	ensure_init();
	/* clr hipStreamSynchronize_common: a dead stream -> 709, then
	 * Stream::StreamCaptureOngoing (which may invalidate captures). */
	if (!cpuhip_stream_valid(h))
		return ret(STREAM_GONE);
	if (cpuhip_capture_ongoing(h))
		return ret(hipErrorStreamCaptureUnsupported);
	pthread_mutex_lock(&g.lock);
	struct stream *s = lookup_stream_locked(h);
	if (!s) {
		pthread_mutex_unlock(&g.lock);
		return ret(STREAM_GONE);
	}
	s->refs++;
	if (s->is_null)
		sync_streams_locked(true); /* legacy: also waits for blocking streams */
	else
		wait_stream_locked(s, s->last_enq);
	stream_unref_locked(s);
	pthread_mutex_unlock(&g.lock);
	return ret(hipSuccess);
}

/* clr hipStreamQuery_common (hip_stream.cpp): a dead handle -> 709, then a
 * capturing stream -> hipErrorStreamCaptureUnsupported (6.x). */
CPUHIP_EXPORT hipError_t hipStreamQuery(hipStream_t h)
{
	CPUHIP_BOUNDARY("hipStreamQuery", h);
	ensure_init();
	pthread_mutex_lock(&g.lock);
	struct stream *s = lookup_stream_locked(h);
	hipError_t e = !s ? STREAM_GONE : stream_idle_locked(s) ? hipSuccess
									   : hipErrorNotReady;
	pthread_mutex_unlock(&g.lock);
	/* The development tree's hipStreamQuery_common (rocm-systems
	 * projects/clr/hipamd/src/hip_stream.cpp at 02bb78cf) uses the handle
	 * without hip::isValid. */
	if (!s && release == RELEASE_DEV)
		crash_on_handle("hipStreamQuery", h, "hipStreamQuery_common");
	/* 5.5.0 to 6.0.x: Stream::StreamCaptureOngoing asks the queried
	 * stream's own capture mode, Global for a stream not capturing, so any
	 * live Global capture in the process makes the query of any other
	 * stream answer hipErrorStreamCaptureUnsupported, whatever the calling
	 * thread's mode (clr rocm-5.7.1 hip_stream.cpp; the thread's Relaxed
	 * mode is honoured from 6.1, clr 59a6a6c12).  Only 6.0 of these is
	 * played by a flavour with capture (abi6). */
	if (s && h && h != hipStreamLegacy && release < 601 && cpuhip_capture_status(h) == 0 &&
	    cpuhip_capture_global_live())
		return ret(hipErrorStreamCaptureUnsupported);
	if (s && cpuhip_capture_ongoing(h))
		e = hipErrorStreamCaptureUnsupported;
	return ret(e);
}

/* clr hipStreamGetFlags_common (hip_stream.cpp, 5.2 to 7.x): the null
 * stream has no flags to read: NULL -> hipErrorInvalidValue. */
CPUHIP_EXPORT hipError_t hipStreamGetFlags(hipStream_t h, unsigned int *flags)
{
	CPUHIP_BOUNDARY("hipStreamGetFlags", h);
	ensure_init();
	if (!flags || h == NULL || h == hipStreamLegacy)
		return ret(hipErrorInvalidValue);
	pthread_mutex_lock(&g.lock);
	struct stream *s = lookup_stream_locked(h);
	if (s)
		*flags = s->flags;
	pthread_mutex_unlock(&g.lock);
	return ret(s ? hipSuccess : STREAM_GONE);
}

CPUHIP_EXPORT hipError_t hipStreamGetPriority(hipStream_t h, int *priority)
{
	CPUHIP_BOUNDARY("hipStreamGetPriority", h);
	ensure_init();
	if (!priority)
		return ret(hipErrorInvalidValue);
	pthread_mutex_lock(&g.lock);
	struct stream *s = lookup_stream_locked(h);
	if (s)
		*priority = s->priority;
	pthread_mutex_unlock(&g.lock);
	/* Development tree: hipStreamGetPriority_common (hip_stream.cpp at
	 * 02bb78cf) reads the priority through the handle unchecked. */
	if (!s && release == RELEASE_DEV)
		crash_on_handle("hipStreamGetPriority", h, "hipStreamGetPriority_common");
	return ret(s ? hipSuccess : STREAM_GONE);
}

#if CPUHIP_ABI == 6
/* hipStreamGetDevice (from 5.6; exported in node hip_4.2 as in clr's
 * hip_hcc.map.in): a NULL out pointer -> hipErrorInvalidValue, then
 * hip::isValid (709), which it keeps in the development tree; the null
 * stream answers the current device, hipStreamPerThread is resolved
 * (hip_stream.cpp, rocm-6.2.2 and the tree at 02bb78cf alike).  It reads
 * no capture state. */
CPUHIP_EXPORT hipError_t hipStreamGetDevice(hipStream_t h, hipDevice_t *device)
{
	CPUHIP_BOUNDARY("hipStreamGetDevice", h);
	ensure_init();
	if (!device)
		return ret(hipErrorInvalidValue);
	if (!cpuhip_stream_valid(h))
		return ret(STREAM_GONE);
	*device = tls_device;
	return ret(hipSuccess);
}
#endif

static hipError_t add_callback(hipStream_t h, enum cmd_kind kind, hipStreamCallback_t fn,
			       hipHostFn_t hfn, void *data)
{
	ensure_init();
	struct cmd *c = cmd_new(kind);
	if (!c)
		return hipErrorOutOfMemory;
	if (broken_mode() == BROKEN_HOST_FUNC_EARLY) {
		/* Test-only fault mode: run it now, ahead of the stream's prior
		 * work; the stream gets a no-op so that an invalid stream still
		 * answers as usual (checked first: nothing runs for it). */
		hipError_t e;
		c->kind = CMD_NOP;
		e = submit(h, c);
		if (e == hipSuccess && fn)
			fn(h, hipSuccess, data);
		else if (e == hipSuccess)
			hfn(data);
		return e;
	}
	c->u.cb.fn = fn;
	c->u.cb.hfn = hfn;
	c->u.cb.data = data;
	return submit(h, c);
}

/* clr: a NULL callback or flags != 0 -> hipErrorInvalidValue, then the
 * stream (709) (hipStreamAddCallback_common, hip_stream.cpp). */
/* The development tree's streamCallback_common (hip_stream.cpp at
 * 02bb78cf), behind hipStreamAddCallback and hipLaunchHostFunc, uses the
 * handle without hip::isValid. */
static void dev_callback_check(const char *call, hipStream_t h)
{
	if (cpuhip_release() == RELEASE_DEV && !cpuhip_stream_valid(h))
		crash_on_handle(call, h, "streamCallback_common");
}

CPUHIP_EXPORT hipError_t hipStreamAddCallback(hipStream_t h, hipStreamCallback_t fn, void *data,
					      unsigned int flags)
{
	CPUHIP_BOUNDARY("hipStreamAddCallback", h);
	if (!fn || flags != 0)
		return ret(hipErrorInvalidValue);
	dev_callback_check("hipStreamAddCallback", h);
	if (cpuhip_take_fail_host_fn())
		return ret(hipErrorOutOfMemory);
	return ret(add_callback(h, CMD_CALLBACK, fn, NULL, data));
}

#if CPUHIP_ABI == 6
/* Test-only: cpuhipTestCaptureRaceNext() makes the next hipLaunchHostFunc
 * or hipStreamWaitValue64 begin a Global capture on its stream before it looks at the stream, as
 * another thread beginning one at that instant would.  The capture is
 * begun through the process's own hipStreamBeginCapture (the shim's, when
 * it is preloaded), so a wrapper sees it as it would see the other
 * thread's call. */
static atomic_bool capture_race_armed;

CPUHIP_EXPORT void cpuhipTestCaptureRaceNext(void)
{
	atomic_store(&capture_race_armed, true);
}

/* Test-only: cpuhipTestCaptureRaceNextThread() makes the next
 * hipLaunchHostFunc race another thread's capture of its stream, through
 * the process's own calls (the shim's): before the call looks at the
 * stream, the other thread begins a Global capture (waited for up to
 * 300 ms); once the call is done with the stream, it ends the capture and
 * destroys its graph (waited for likewise) before the call returns.  A
 * shim that holds captures off while it enqueues makes the begin wait
 * for the whole call: the host function then runs on the stream, and the
 * capture comes and goes after. */
static atomic_bool capture_race_thread_armed;

CPUHIP_EXPORT void cpuhipTestCaptureRaceNextThread(void)
{
	atomic_store(&capture_race_thread_armed, true);
}

struct race_thread {
	hipStream_t h;
	atomic_int phase;   /* 0 started, 1 begun, 2 ended */
	atomic_bool go_end; /* the call is done with the stream */
};
static struct race_thread race_thr;
static bool race_thr_running; /* only the thread of the armed call */

static void race_wait_phase(int phase)
{
	for (int i = 0; i < 300 && atomic_load(&race_thr.phase) < phase; i++)
		usleep(1000);
}

static void *race_thread_main(void *p)
{
	struct race_thread *r = p;
	hipError_t (*begin)(hipStream_t, int) =
		(hipError_t(*)(hipStream_t, int))dlsym(RTLD_DEFAULT, "hipStreamBeginCapture");
	hipError_t (*end_fn)(hipStream_t, void **) =
		(hipError_t(*)(hipStream_t, void **))dlsym(RTLD_DEFAULT, "hipStreamEndCapture");
	hipError_t (*destroy_fn)(void *) =
		(hipError_t(*)(void *))dlsym(RTLD_DEFAULT, "hipGraphDestroy");
	void *graph = NULL;
	bool begun = begin && end_fn && destroy_fn && begin(r->h, 0 /* Global */) == hipSuccess;

	atomic_store(&r->phase, 1);
	while (!atomic_load(&r->go_end))
		usleep(1000);
	if (begun && end_fn(r->h, &graph) == hipSuccess && graph)
		destroy_fn(graph);
	atomic_store(&r->phase, 2);
	return NULL;
}

static void capture_race_thread_begin(hipStream_t h)
{
	pthread_t t;

	if (!atomic_exchange(&capture_race_thread_armed, false))
		return;
	race_thr.h = h;
	atomic_store(&race_thr.phase, 0);
	atomic_store(&race_thr.go_end, false);
	if (pthread_create(&t, NULL, race_thread_main, &race_thr)) {
		fprintf(stderr, "cpuhip: cpuhipTestCaptureRaceNextThread: no thread\n");
		return;
	}
	pthread_detach(t);
	race_thr_running = true;
	race_wait_phase(1);
}

static void capture_race_thread_end(void)
{
	if (!race_thr_running)
		return;
	race_thr_running = false;
	atomic_store(&race_thr.go_end, true);
	race_wait_phase(2);
}

static void capture_race(hipStream_t h)
{
	hipError_t (*begin)(hipStream_t, int);

	capture_race_thread_begin(h);
	if (!atomic_exchange(&capture_race_armed, false))
		return;
	begin = (hipError_t(*)(hipStream_t, int))dlsym(RTLD_DEFAULT, "hipStreamBeginCapture");
	if (!begin || begin(h, 0 /* Global */) != hipSuccess)
		fprintf(stderr, "cpuhip: cpuhipTestCaptureRaceNext: the capture did not begin\n");
}

static hipError_t launch_host_func(hipStream_t h, hipHostFn_t fn, void *data);

CPUHIP_EXPORT hipError_t hipLaunchHostFunc(hipStream_t h, hipHostFn_t fn, void *data)
{
	CPUHIP_BOUNDARY("hipLaunchHostFunc", h);
	hipError_t e = launch_host_func(h, fn, data);

	capture_race_thread_end();
	return e;
}

static hipError_t launch_host_func(hipStream_t h, hipHostFn_t fn, void *data)
{
	/* clr STREAM_CAPTURE: Active -> capturehipLaunchHostFunc, Invalidated
	 * -> hipErrorStreamCaptureInvalidated from 6.2.0 (clr 19b4660cb).  5.3
	 * to 6.1.x capture only Active streams and let an Invalidated one fall
	 * through to a real enqueue (clr rocm-6.1.2 hip_internal.hpp
	 * STREAM_CAPTURE): the function runs at once, outside any graph. */
	/* clr hipLaunchHostFunc_common runs STREAM_CAPTURE before anything
	 * checks the handle: the macro resolves hipStreamPerThread and reads
	 * the stream's capture status (GetCaptureStatus, a cast to
	 * hip::Stream*) for any other non-NULL handle, before the NULL
	 * function check and before streamCallback_common's hip::isValid.  A
	 * destroyed or garbage handle is a use-after-free or a segfault there
	 * (Debian's 5.7.1 died with SIGSEGV on the fake device).  Read in clr
	 * rocm-5.7.1 hipamd/src/hip_stream.cpp hipLaunchHostFunc_common and
	 * hip_internal.hpp STREAM_CAPTURE, the same in rocm-6.0.2, 6.1.2,
	 * 6.2.0 to 6.2.2, hipamd rocm-5.4.0 and 5.5.1 (5.3's entry point was
	 * not found in hipamd), and still in release/rocm-rel-6.3.0.1 (6.3),
	 * amd-staging of 2024-10 and the development tree, which all skip
	 * hipStreamLegacy there too; before 6.3 the macro did not, so the
	 * legacy handle (not a hip::Stream) is read as one.  Every release
	 * this flavour plays has it. */
	if (h != NULL && h != hipStreamPerThread &&
	    (h == hipStreamLegacy ? cpuhip_release() < 603 : !cpuhip_stream_valid(h)))
		crash_on_handle("hipLaunchHostFunc", h,
				"hipLaunchHostFunc_common (STREAM_CAPTURE reads the stream before "
				"hip::isValid)");
	if (!fn)
		return ret(hipErrorInvalidValue);
	dev_callback_check("hipLaunchHostFunc", h);
	if (cpuhip_take_fail_host_fn())
		return ret(hipErrorOutOfMemory);
	capture_race(h);
	int st = cpuhip_capture_status(h);
	if (st == 1)
		return ret(cpuhip_capture_host_fn(h, fn, data));
	if (st == 2 && cpuhip_release() >= 602)
		return ret(hipErrorStreamCaptureInvalidated);
	if (st == 2) {
		hipError_t e;
		past_invalidated_capture = true;
		e = add_callback(h, CMD_HOST_FN, NULL, fn, data);
		past_invalidated_capture = false;
		return ret(e);
	}
	return ret(add_callback(h, CMD_HOST_FN, NULL, fn, data));
}
#endif

/* For cpuhip_graph.c: graph launches enqueue their host nodes like this. */
hipError_t cpuhip_enqueue_host_fn(hipStream_t h, hipHostFn_t fn, void *data)
{
	return add_callback(h, CMD_HOST_FN, NULL, fn, data);
}

static bool stream_valid_locked(hipStream_t h)
{
	return lookup_stream_locked(h) != NULL;
}

bool cpuhip_stream_valid(hipStream_t h)
{
	ensure_init();
	pthread_mutex_lock(&g.lock);
	struct stream *s = lookup_stream_locked(h);
	bool ok = s != NULL;
	pthread_mutex_unlock(&g.lock);
	return ok;
}

hipError_t cpuhip_set_last_error(hipError_t e)
{
	return ret(e);
}

/* Are the len bytes at ptr inside memory the runtime allocated (clr's
 * getMemoryObject)?  *out gets a copy of that allocation's record (whether
 * it is host memory, signal memory). */
static bool find_alloc(const void *ptr, size_t len, struct alloc *out)
{
	bool found = false;

	pthread_mutex_lock(&g.lock);
	for (size_t i = 0; i < g.nallocs; i++) {
		const char *base = g.allocs[i].ptr;
		if ((const char *)ptr >= base && (const char *)ptr + len <= base + g.allocs[i].size) {
			*out = g.allocs[i];
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&g.lock);
	return found;
}

/* The checks of clr's ihipStreamOperation (hipamd/src/hip_stream_ops.cpp),
 * in its order: NULL pointer, then the stream, then memory the runtime
 * does not know, then (waits, GPU_STREAMOPS_CP_WAIT=1) memory that is not
 * signal memory, then the wait flags. */
static hipError_t check_stream_op(hipStream_t h, const void *ptr, size_t len, bool wait,
				  unsigned int flags)
{
	struct alloc a = { 0 };

	if (!ptr)
		return hipErrorInvalidValue;
	/* hipamd rocm-5.2.3 src/hip_stream_ops.cpp ihipStreamOperation has no
	 * stream check: hip::getQueue (src/hip_context.cpp) casts the handle to
	 * hip::Stream*, which neither resolves hipStreamPerThread nor knows a
	 * destroyed stream.  hipamd 45a715c8 (5.3) added hip::isValid here. */
	if (release < 503 && (h == hipStreamPerThread || !cpuhip_stream_valid(h)))
		crash_on_handle(wait ? "hipStreamWaitValue" : "hipStreamWriteValue", h,
				"hipamd rocm-5.2.3 ihipStreamOperation (hip::getQueue)");
	if (!cpuhip_stream_valid(h))
		return STREAM_GONE;
	if (!find_alloc(ptr, len, &a))
		return hipErrorInvalidValue;
	if (wait && g.cp_wait && !a.signal)
		return hipErrorInvalidValue;
	if (wait && flags > hipStreamWaitValueNor)
		return hipErrorInvalidValue;
	if (wait && (g.wait_refused || cpuhip_take_refuse_wait()))
		return hipErrorNotSupported;
	return hipSuccess;
}

static hipError_t wait_value(hipStream_t h, void *ptr, uint64_t value, unsigned int flags,
			     uint64_t mask, bool is64)
{
	hipError_t err = check_stream_op(h, ptr, is64 ? 8 : 4, true, flags);

	if (err)
		return err;
	struct cmd *c = cmd_new(CMD_WAIT_VALUE);
	if (!c)
		return hipErrorOutOfMemory;
	c->u.wv.ptr = ptr;
	c->u.wv.value = value;
	c->u.wv.mask = mask;
	c->u.wv.flags = flags;
	c->u.wv.is64 = is64;
	return submit(h, c);
}

CPUHIP_EXPORT hipError_t hipStreamWaitValue32(hipStream_t h, void *ptr, uint32_t value,
					      unsigned int flags, uint32_t mask)
{
	CPUHIP_BOUNDARY("hipStreamWaitValue32", h);
	return ret(wait_value(h, ptr, value, flags, mask, false));
}

CPUHIP_EXPORT hipError_t hipStreamWaitValue64(hipStream_t h, void *ptr, uint64_t value,
					      unsigned int flags, uint64_t mask)
{
	CPUHIP_BOUNDARY("hipStreamWaitValue64", h);
#if CPUHIP_ABI == 6
	capture_race(h); /* test-only: cpuhipTestCaptureRaceNext */
#endif
	return ret(wait_value(h, ptr, value, flags, mask, true));
}

static hipError_t write_value(hipStream_t h, void *ptr, uint64_t value, bool is64)
{
	hipError_t err = check_stream_op(h, ptr, is64 ? 8 : 4, false, 0);

	if (err)
		return err;
	struct cmd *c = cmd_new(CMD_WRITE_VALUE);
	if (!c)
		return hipErrorOutOfMemory;
	c->u.wv.ptr = ptr;
	c->u.wv.value = value;
	c->u.wv.is64 = is64;
	return submit(h, c);
}

CPUHIP_EXPORT hipError_t hipStreamWriteValue32(hipStream_t h, void *ptr, uint32_t value,
					       unsigned int flags)
{
	CPUHIP_BOUNDARY("hipStreamWriteValue32", h);
	return ret(write_value(h, ptr, value, false));
}

CPUHIP_EXPORT hipError_t hipStreamWriteValue64(hipStream_t h, void *ptr, uint64_t value,
					       unsigned int flags)
{
	CPUHIP_BOUNDARY("hipStreamWriteValue64", h);
	if (cpuhip_take_fail_mine(CPUHIP_FAIL_WRITE_VALUE))
		return ret(hipErrorOutOfMemory);
	return ret(write_value(h, ptr, value, true));
}

/* ------------------------------------------------------------------ */
/* Events                                                              */

static struct event *lookup_event_locked(hipEvent_t h)
{
	if (!h)
		return NULL;
	for (struct event *e = g.events; e; e = e->next_live)
		if ((hipEvent_t)e == h)
			return e;
	return NULL;
}

CPUHIP_EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *out, unsigned flags)
{
	CPUHIP_BOUNDARY("hipEventCreateWithFlags", NULL);
	ensure_init();
	if (!out)
		return ret(hipErrorInvalidValue);
	/* clr ihipEventCreateWithFlags (hip_event.cpp): unknown flags, more
	 * than one release flag, or interprocess without disable-timing are
	 * hipErrorInvalidValue.  hipEventDisableSystemFence is a release flag
	 * since clr 7fc5ae222 (rocm-5.6.0); before, it was unknown. */
	const unsigned fence = 0x20000000u /* hipEventDisableSystemFence */;
	const unsigned releases = 0x40000000u /* ReleaseToDevice */ | 0x80000000u /* ToSystem */ |
				  (release >= 506 ? fence : 0);
	const unsigned known = hipEventBlockingSync | hipEventDisableTiming | hipEventInterprocess |
			       releases;
	unsigned int rel_flags = flags & releases;
	if (flags & ~known)
		return ret(hipErrorInvalidValue);
	if (rel_flags & (rel_flags - 1))
		return ret(hipErrorInvalidValue);
	if ((flags & hipEventInterprocess) && !(flags & hipEventDisableTiming))
		return ret(hipErrorInvalidValue);
	/* clr ihipEventCreateWithFlags: the event's allocation failing ->
	 * hipErrorOutOfMemory (hipEventCreate comes through here). */
	if (cpuhip_take_fail_mine(CPUHIP_FAIL_EVENT_CREATE))
		return ret(hipErrorOutOfMemory);
	struct event *e = calloc(1, sizeof(*e));
	if (!e)
		return ret(hipErrorOutOfMemory);
	e->flags = flags;
	e->refs = 1;
	e->dev = tls_device;
	pthread_mutex_lock(&g.lock);
	e->next_live = g.events;
	g.events = e;
	pthread_mutex_unlock(&g.lock);
	*out = (hipEvent_t)e;
	return ret(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipEventCreate(hipEvent_t *out)
{
	CPUHIP_BOUNDARY("hipEventCreate", NULL);
	return hipEventCreateWithFlags(out, hipEventDefault);
}

CPUHIP_EXPORT hipError_t hipEventDestroy(hipEvent_t h)
{
	CPUHIP_BOUNDARY("hipEventDestroy", NULL);
	ensure_init();
	if (!h)
		return ret(hipErrorInvalidHandle);
	pthread_mutex_lock(&g.lock);
	struct event *e = NULL;
	for (struct event **pp = &g.events; *pp; pp = &(*pp)->next_live) {
		if ((hipEvent_t)*pp == h) {
			e = *pp;
			*pp = e->next_live;
			break;
		}
	}
	if (e) {
		e->dead = true;
		if (e->stream) {
			stream_unref_locked(e->stream);
			e->stream = NULL;
		}
		if (--e->refs == 0)
			free(e);
	}
	pthread_mutex_unlock(&g.lock);
	if (e)
		cpuhip_capture_event_gone(h);
	/* clr (rocm-5.6.0 on): an event it no longer knows answers 709 with
	 * a plain return, so the last error keeps its value (5.2 deleted the
	 * object again). */
	if (!e)
		return STREAM_GONE;
	return ret(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipEventRecord(hipEvent_t h, hipStream_t sh)
{
	CPUHIP_BOUNDARY("hipEventRecord", sh);
	ensure_init();
	if (cpuhip_take_fail_event_record())
		return ret(hipErrorOutOfMemory);
	pthread_mutex_lock(&g.lock);
	struct event *e = lookup_event_locked(h);
	if (!e) {
		pthread_mutex_unlock(&g.lock);
		return ret(hipErrorInvalidHandle);
	}
	struct stream *s = lookup_stream_locked(sh);
	if (!s) {
		pthread_mutex_unlock(&g.lock);
		return ret(STREAM_GONE);
	}
	/* clr hipEventRecord_common: on a capturing stream the record is
	 * captured (cpuhip_capture.c) and nothing is enqueued. */
	if (cpuhip_capture_event_record_locked(h, sh)) {
		pthread_mutex_unlock(&g.lock);
		return ret(hipSuccess);
	}
	if (s->dev >= 0 && s->dev != e->dev) {
		pthread_mutex_unlock(&g.lock);
		return ret(hipErrorInvalidHandle);
	}
	struct cmd *c = cmd_new(CMD_RECORD);
	if (!c) {
		pthread_mutex_unlock(&g.lock);
		return ret(hipErrorOutOfMemory);
	}
	e->gen++;
	e->recorded = true;
	e->done = false;
	e->refs++;
	c->u.rec.ev = e;
	c->u.rec.gen = e->gen;
	hipError_t err = submit_locked(s, c, sh);
	if (err == hipSuccess) {
		if (e->stream)
			stream_unref_locked(e->stream);
		e->stream = s;
		s->refs++;
		e->seq = s->last_enq;
	}
	pthread_mutex_unlock(&g.lock);
	return ret(err);
}

CPUHIP_EXPORT hipError_t hipEventQuery(hipEvent_t h)
{
	CPUHIP_BOUNDARY("hipEventQuery", NULL);
	ensure_init();
	pthread_mutex_lock(&g.lock);
	struct event *e = lookup_event_locked(h);
	hipError_t err = !e ? hipErrorInvalidHandle
			    : (e->recorded && !e->done) ? hipErrorNotReady : hipSuccess;
	pthread_mutex_unlock(&g.lock);
	return ret(err);
}

CPUHIP_EXPORT hipError_t hipEventSynchronize(hipEvent_t h)
{
	CPUHIP_BOUNDARY("hipEventSynchronize", NULL);
	ensure_init();
	pthread_mutex_lock(&g.lock);
	struct event *e = lookup_event_locked(h);
	if (!e) {
		pthread_mutex_unlock(&g.lock);
		return ret(hipErrorInvalidHandle);
	}
	if (!e->recorded || e->done) {
		pthread_mutex_unlock(&g.lock);
		return ret(hipSuccess);
	}
	uint64_t gen = e->gen;
	e->refs++;
	/* Blocking sync: spin ~100 us, then sleep until woken.  The default
	 * mode is an active wait on ROCm; here it yields instead of burning a
	 * whole core for the same observable result. */
	int64_t start = now_ns();
	while (!e->done && e->gen == gen && now_ns() - start < EVENT_SPIN_NS) {
		pthread_mutex_unlock(&g.lock);
		sched_yield();
		pthread_mutex_lock(&g.lock);
	}
	while (!e->done && e->gen == gen && !e->dead)
		pthread_cond_wait(&g.progress, &g.lock);
	if (--e->refs == 0)
		free(e);
	pthread_mutex_unlock(&g.lock);
	return ret(hipSuccess);
}

CPUHIP_EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b)
{
	CPUHIP_BOUNDARY("hipEventElapsedTime", NULL);
	ensure_init();
	if (!ms)
		return ret(hipErrorInvalidValue);
	pthread_mutex_lock(&g.lock);
	struct event *s = lookup_event_locked(a), *t = lookup_event_locked(b);
	hipError_t err = hipSuccess;
	if (!s || !t)
		err = hipErrorInvalidHandle;
	else if ((s->flags | t->flags) & hipEventDisableTiming)
		err = hipErrorInvalidHandle;
	else if (!s->recorded || !t->recorded)
		err = hipErrorInvalidHandle;
	else if (!s->done || !t->done)
		err = hipErrorNotReady;
	else {
		int64_t d = ((int64_t)t->ts.tv_sec - s->ts.tv_sec) * 1000000000 +
			    (t->ts.tv_nsec - s->ts.tv_nsec);
		*ms = (float)((double)d / 1e6);
	}
	pthread_mutex_unlock(&g.lock);
	return ret(err);
}

/*
 * hipStreamWaitEvent_common (hip_stream.cpp) changed its answers:
 *   5.2 (2022 tree): NULL event -> 400, flags -> 1, dead stream -> 709;
 *   rocm-5.6.x: NULL event -> 400, flags or dead stream -> 1;
 *   rocm-5.7.0 to 6.4.3 (clr 41bbdfca9, "fix the error to match cuda"):
 *     NULL event or dead stream -> 400, then flags -> 1;
 *   7.x tree: flags -> 1 first, NULL event -> 400, the stream unchecked
 *     (a dead handle is undefined there; 400 here).
 * An event cpuhip does not know is treated as NULL (clr would use it).
 */
static hipError_t wait_event_check_locked(struct stream *s, struct event *e, unsigned int flags)
{
	if (release >= 700 && flags != 0)
		return hipErrorInvalidValue;
	if (!e)
		return hipErrorInvalidHandle;
	if (release >= 507)
		return !s ? hipErrorInvalidHandle : flags ? hipErrorInvalidValue : hipSuccess;
	if (release >= 506)
		return flags || !s ? hipErrorInvalidValue : hipSuccess;
	return flags ? hipErrorInvalidValue : !s ? STREAM_GONE : hipSuccess;
}

CPUHIP_EXPORT hipError_t hipStreamWaitEvent(hipStream_t sh, hipEvent_t h, unsigned int flags)
{
	CPUHIP_BOUNDARY("hipStreamWaitEvent", sh);
	ensure_init();
	pthread_mutex_lock(&g.lock);
	struct event *e = lookup_event_locked(h);
	struct stream *s = lookup_stream_locked(sh);
	/* clr hipStreamWaitEvent_common (both flavours): after the handle checks, a
	 * captured event joins the waiting stream into its capture, before
	 * the flags are looked at (cpuhip_capture.c). */
	if (e && s) {
		bool handled;
		hipError_t ce = cpuhip_capture_wait_event_locked(sh, h, flags, stream_valid_locked,
								 &handled);
		if (handled) {
			pthread_mutex_unlock(&g.lock);
			return ret(ce);
		}
	}
	hipError_t check = wait_event_check_locked(s, e, flags);
	if (check != hipSuccess) {
		pthread_mutex_unlock(&g.lock);
		return ret(check);
	}
	hipError_t err = hipSuccess;
	if (e->recorded && e->stream && e->stream != s && e->stream->completed < e->seq) {
		struct cmd *c = cmd_new(CMD_NOP);
		if (!c || add_dep(c, e->stream, e->seq)) {
			free(c);
			err = hipErrorOutOfMemory;
		} else {
			err = submit_locked(s, c, sh);
		}
	}
	pthread_mutex_unlock(&g.lock);
	return ret(err);
}

/* ------------------------------------------------------------------ */
/* Memory                                                              */

/* clr rocm-6.2.2 hip_memory.cpp: hipMalloc, hipHostMalloc, hipFree and
 * hipHostFree start with CHECK_STREAM_CAPTURE_SUPPORTED (capture modes,
 * cpuhip_capture.c); hipExtMallocWithFlags does not. */
CPUHIP_EXPORT hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
	CPUHIP_BOUNDARY("hipHostMalloc", NULL);
	ensure_init();
	if (cpuhip_capture_check_supported())
		return ret(hipErrorStreamCaptureUnsupported);
	if (!ptr)
		return ret(hipErrorInvalidValue);
	if (size == 0) {
		*ptr = NULL;
		return ret(hipSuccess);
	}
	const unsigned int coh = hipHostMallocCoherent | hipHostMallocNonCoherent;
	if ((flags & coh) == coh)
		return ret(hipErrorInvalidValue);
	if (cpuhip_take_fail_mine(CPUHIP_FAIL_HOST_MALLOC))
		return ret(hipErrorOutOfMemory);
	*ptr = track_alloc(size, true, false);
	return ret(*ptr ? hipSuccess : hipErrorOutOfMemory);
}

/* clr hip_memory.cpp hipExtMallocWithFlags: hipMallocSignalMemory (0x2)
 * takes exactly 8 bytes; unknown flags are hipErrorInvalidValue. */
CPUHIP_EXPORT hipError_t hipExtMallocWithFlags(void **ptr, size_t size, unsigned int flags)
{
	CPUHIP_BOUNDARY("hipExtMallocWithFlags", NULL);
	ensure_init();
	if (!ptr)
		return ret(hipErrorInvalidValue);
	if (flags == hipMallocSignalMemory && size != 8)
		return ret(hipErrorInvalidValue);
	if (flags > 0x8) /* default, fine-grained (1), signal (2), uncached (3), contiguous (8) */
		return ret(hipErrorInvalidValue);
	if (size == 0) {
		*ptr = NULL;
		return ret(hipSuccess);
	}
	if (cpuhip_take_fail_mine(CPUHIP_FAIL_HOST_MALLOC))
		return ret(hipErrorOutOfMemory);
	*ptr = track_alloc(size, flags == hipMallocSignalMemory, flags == hipMallocSignalMemory);
	return ret(*ptr ? hipSuccess : hipErrorOutOfMemory);
}

CPUHIP_EXPORT hipError_t hipMalloc(void **ptr, size_t size)
{
	CPUHIP_BOUNDARY("hipMalloc", NULL);
	ensure_init();
	if (cpuhip_capture_check_supported())
		return ret(hipErrorStreamCaptureUnsupported);
	if (!ptr)
		return ret(hipErrorInvalidValue);
	if (size == 0) {
		*ptr = NULL;
		return ret(hipSuccess);
	}
	*ptr = track_alloc(size, false, false);
	return ret(*ptr ? hipSuccess : hipErrorOutOfMemory);
}

static hipError_t free_common(void *p)
{
	ensure_init();
	if (!p)
		return hipSuccess;
	/* clr synchronizes the device before releasing memory. */
	pthread_mutex_lock(&g.lock);
	sync_all_locked();
	pthread_mutex_unlock(&g.lock);
	return untrack_alloc(p) ? hipSuccess : hipErrorInvalidValue;
}

CPUHIP_EXPORT hipError_t hipFree(void *p)
{
	CPUHIP_BOUNDARY("hipFree", NULL);
	if (cpuhip_capture_check_supported())
		return ret(hipErrorStreamCaptureUnsupported);
	return ret(free_common(p));
}

CPUHIP_EXPORT hipError_t hipHostFree(void *p)
{
	CPUHIP_BOUNDARY("hipHostFree", NULL);
	if (cpuhip_capture_check_supported())
		return ret(hipErrorStreamCaptureUnsupported);
	return ret(free_common(p));
}

/* Does an asynchronous copy return only once it is done, i.e. after all
 * the stream's earlier work?  clr decides by whether each side is memory
 * it allocated or registered (getMemoryObject; here: find_alloc on
 * the side's first byte) and, below, by whether the GPU or the CPU copies.
 *
 * - Both sides host memory (pinned or pageable), every release: ROCclr's
 *   DmaBlitManager::copyBuffer (clr rocm-5.7.1, rocm-6.2.2 and amd-staging
 *   of 2024-10, rocclr/device/rocm/rocblit.cpp) stalls the GPU
 *   (releaseGpuMemoryFence, a CPU wait) and copies on the CPU, in the
 *   caller's thread under direct dispatch, Linux's default; the
 *   development tree's ihipMemcpy (rocm-systems projects/clr 003af007)
 *   also says "Any Host to any Host need host side synchronization".
 *   Real 5.2.3 on the fake device blocked a pinned-to-pinned copy on
 *   hipStreamPerThread behind a pending semaphore wait (docs/testing.md).
 * - One pageable side: hipamd rocm-5.2.3 src/hip_memory.cpp ihipMemcpy
 *   clears isAsync and awaits the copy (awaitCompletion); clr rocm-5.7.1
 *   to rocm-6.2.2 and release/rocm-rel-6.3.0.1 hipamd/src/hip_memory.cpp
 *   ihipMemcpy the same (isHostAsync = false).  clr 29cc678d8
 *   (2024-09-06, on amd-staging after rel-6.3.0.1 branched, so from 6.4)
 *   leaves a copy from pageable memory into device memory of at most the
 *   staging size (stagedXferSize_, 1 MiB by default:
 *   rocclr/device/rocm/rocsettings.cpp) asynchronous.
 * - Device memory and pinned memory: asynchronous (a GPU copy).
 * A capturing stream refuses the copy before any of this (submit). */
#define STAGED_XFER_SIZE (1u << 20)

static bool copy_waits_for_completion(void *dst, const void *src, size_t n)
{
	/* Each side is looked up by its first byte; unknown memory is host
	 * memory the runtime did not allocate (pageable). */
	struct alloc sa = { .host = true }, da = { .host = true };
	bool src_known = find_alloc(src, 1, &sa);
	bool dst_known = find_alloc(dst, 1, &da);

	if (sa.host && da.host)
		return true;
	if (!src_known || !dst_known)
		return release < 604 || src_known || n > STAGED_XFER_SIZE;
	return false;
}

static hipError_t memcpy_async(void *dst, const void *src, size_t n, hipMemcpyKind kind,
			       hipStream_t h)
{
	if (n == 0)
		return hipSuccess;
	if (!dst || !src)
		return hipErrorInvalidValue;
	if ((unsigned int)kind > hipMemcpyDefault)
		return hipErrorInvalidMemcpyDirection;
	struct cmd *c = cmd_new(CMD_COPY);
	if (!c)
		return hipErrorOutOfMemory;
	c->u.copy.dst = dst;
	c->u.copy.src = src;
	c->u.copy.size = n;
	return submit_common(h, c, copy_waits_for_completion(dst, src, n));
}

CPUHIP_EXPORT hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, hipMemcpyKind kind,
					hipStream_t h)
{
	CPUHIP_BOUNDARY("hipMemcpyAsync", h);
	return ret(memcpy_async(dst, src, n, kind, h));
}

static hipError_t sync_null(void)
{
	pthread_mutex_lock(&g.lock);
	struct stream *s = g.null_stream;
	wait_stream_locked(s, s->last_enq);
	pthread_mutex_unlock(&g.lock);
	return hipSuccess;
}

CPUHIP_EXPORT hipError_t hipMemcpy(void *dst, const void *src, size_t n, hipMemcpyKind kind)
{
	CPUHIP_BOUNDARY("hipMemcpy", NULL);
	ensure_init();
	/* Synchronous: queued on the legacy null stream (so ordered after
	 * prior work of blocking streams) and waited for. */
	hipError_t e = memcpy_async(dst, src, n, kind, NULL);
	if (e == hipSuccess)
		e = sync_null();
	return ret(e);
}

static hipError_t memset_async(void *dst, int value, size_t n, hipStream_t h)
{
	if (n == 0)
		return hipSuccess;
	if (!dst)
		return hipErrorInvalidValue;
	struct cmd *c = cmd_new(CMD_SET);
	if (!c)
		return hipErrorOutOfMemory;
	c->u.set.dst = dst;
	c->u.set.value = value;
	c->u.set.size = n;
	return submit(h, c);
}

CPUHIP_EXPORT hipError_t hipMemsetAsync(void *dst, int value, size_t n, hipStream_t h)
{
	CPUHIP_BOUNDARY("hipMemsetAsync", h);
	return ret(memset_async(dst, value, n, h));
}

CPUHIP_EXPORT hipError_t hipMemset(void *dst, int value, size_t n)
{
	CPUHIP_BOUNDARY("hipMemset", NULL);
	ensure_init();
	hipError_t e = memset_async(dst, value, n, NULL);
	if (e == hipSuccess)
		e = sync_null();
	return ret(e);
}

/* ------------------------------------------------------------------ */
/* External semaphores: the stock Linux answers                        */

#if CPUHIP_ABI == 5
typedef struct hx_sem_desc_v5 sem_desc_t;
typedef struct hx_sem_signal_params_v5 sem_signal_t;
typedef struct hx_sem_wait_params_v5 sem_wait_t;
#else
typedef struct hx_sem_desc_v6 sem_desc_t;
typedef struct hx_sem_signal_params_v6 sem_signal_t;
typedef struct hx_sem_wait_params_v6 sem_wait_t;
#endif

CPUHIP_EXPORT hipError_t hipImportExternalSemaphore(hipExternalSemaphore_t *out,
						    const hipExternalSemaphoreHandleDesc *desc)
{
	CPUHIP_BOUNDARY("hipImportExternalSemaphore", NULL);
	ensure_init();
	if (!out || !desc)
		return ret(hipErrorInvalidValue);
	const sem_desc_t *d = (const sem_desc_t *)desc;
	/* 5.2: no type check, and a failed backend import answers
	 * hipErrorInvalidValue (hipamd rocm-5.2.x src/hip_memory.cpp
	 * hipImportExternalSemaphore; Debian's 5.2.3 on the fake device answers
	 * 1 for every handle type, tests/realrt).  Later releases (5.7.1,
	 * 6.4.3, 7.2.4 measured the same way) check the type first. */
	if (release <= 502)
		return ret(hipErrorInvalidValue);
	/* clr accepts OpaqueFd..D3D12Fence here and rejects everything else. */
	if (d->type < HX_SEM_HANDLE_OPAQUE_FD || d->type > HX_SEM_HANDLE_D3D12_FENCE)
		return ret(hipErrorInvalidValue);
	if (d->handle.fd == 0)
		return ret(hipErrorInvalidValue);
	return ret(hipErrorNotSupported); /* the ROCm backend cannot import */
}

/*
 * clr hipSignalExternalSemaphoresAsync / hipWaitExternalSemaphoresAsync
 * (hip_memory.cpp), argument checks by release:
 *   NULL arrays -> hipErrorInvalidValue (every release);
 *   a dead stream -> hipErrorInvalidValue from rocm-5.7.0 (clr 5f93a5979;
 *     5.2 to 5.6 used the handle unchecked: cpuhip answers as 5.7 does);
 *   params[i].flags != 0 -> hipErrorInvalidValue from rocm-6.0.0 (clr
 *     d2cfb86dd); 5.x enqueues whatever the flags say;
 *   a NULL element -> hipErrorInvalidValue (every release), after the
 *     elements before it were enqueued (no-ops on Linux).
 * Then the ROCm device's submitExternalSemaphoreCmd does nothing
 * (rocclr/device/rocm/rocvirtual.hpp), so nothing is enqueued here.  No
 * release records these calls into a stream capture (no STREAM_CAPTURE in
 * them, rocm-6.4.3 and the 7.x tree): on a capturing stream they succeed
 * and leave the graph alone.
 */
/*
 * The development tree (rocm-systems projects/clr after PRs #6021 and #6632,
 * as AMD's TheRock builds pin it at d134b7823f61) imports through ROCr
 * (hsa_amd_external_semaphore_handle_open), reads every handle given to
 * signal, wait, destroy and the external-semaphore graph nodes as the HSA
 * handle its import made, and deletes it in hipDestroyExternalSemaphore: a
 * handle it did not make crashes it.  Its import still never makes one on
 * Linux (libhsakmt's extsem.c answers not supported: 801), so under that
 * profile every non-NULL handle reaching these calls is foreign, and
 * cpuhip stops the process where the tree would crash.
 */
void cpuhip_foreign_sems(const char *what, const hipExternalSemaphore_t *arr, unsigned int n)
{
	if (!arr || cpuhip_release() != RELEASE_DEV)
		return;
	for (unsigned int i = 0; i < n; i++)
		if (arr[i]) {
			fprintf(stderr, "cpuhip: %s was handed external semaphore %p, which this "
				"runtime did not make: the development tree reads it as its own "
				"HSA handle and crashes; aborting\n", what, (void *)arr[i]);
			abort();
		}
}

static hipError_t ext_sem_check(const char *what, const hipExternalSemaphore_t *arr,
				const void *params, size_t stride, size_t flags_off,
				unsigned int n, hipStream_t h)
{
	ensure_init();
	if (!arr || !params)
		return hipErrorInvalidValue;
	cpuhip_foreign_sems(what, arr, n);
	pthread_mutex_lock(&g.lock);
	struct stream *s = lookup_stream_locked(h);
	pthread_mutex_unlock(&g.lock);
	if (!s)
		return hipErrorInvalidValue;
	for (unsigned int i = 0; i < n; i++) {
		if (!arr[i])
			return hipErrorInvalidValue;
		uint32_t flags;
		memcpy(&flags, (const char *)params + i * stride + flags_off, sizeof(flags));
		if (flags != 0 && release >= 600)
			return hipErrorInvalidValue;
	}
	return hipSuccess;
}

CPUHIP_EXPORT hipError_t hipSignalExternalSemaphoresAsync(
	const hipExternalSemaphore_t *arr, const hipExternalSemaphoreSignalParams *params,
	unsigned int n, hipStream_t h)
{
	CPUHIP_BOUNDARY("hipSignalExternalSemaphoresAsync", h);
	return ret(ext_sem_check("hipSignalExternalSemaphoresAsync", arr, params,
				 sizeof(sem_signal_t), offsetof(sem_signal_t, flags), n, h));
}

CPUHIP_EXPORT hipError_t hipWaitExternalSemaphoresAsync(const hipExternalSemaphore_t *arr,
							const hipExternalSemaphoreWaitParams *params,
							unsigned int n, hipStream_t h)
{
	CPUHIP_BOUNDARY("hipWaitExternalSemaphoresAsync", h);
	return ret(ext_sem_check("hipWaitExternalSemaphoresAsync", arr, params,
				 sizeof(sem_wait_t), offsetof(sem_wait_t, flags), n, h));
}

CPUHIP_EXPORT hipError_t hipDestroyExternalSemaphore(hipExternalSemaphore_t sem)
{
	CPUHIP_BOUNDARY("hipDestroyExternalSemaphore", NULL);
	cpuhip_foreign_sems("hipDestroyExternalSemaphore", &sem, 1);
	return ret(sem ? hipSuccess : hipErrorInvalidValue);
}

/* ------------------------------------------------------------------ */
/* hipGetProcAddress (6.1+)                                            */

#if CPUHIP_ABI == 6
static hipError_t get_proc_address(const char *symbol, void **pfn, int hipVersion,
				   uint64_t flags, hipDriverProcAddressQueryResult *symbolStatus,
				   bool force_spt);

CPUHIP_EXPORT hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion,
					   uint64_t flags,
					   hipDriverProcAddressQueryResult *symbolStatus)
{
	return get_proc_address(symbol, pfn, hipVersion, flags, symbolStatus, false);
}

#ifdef CPUHIP_DEV_TREE
/* The development tree after 7.2 adds hipGetProcAddress_spt, the lookup
 * of per-thread-default-stream builds: the NAME_spt form first, as the
 * per-thread flag does (its node, hip_7.2, as a loader's symbol test of
 * that tree expects it; Debian's 7.2.4 does not export it).  Only the
 * abi6dev build exports it. */
CPUHIP_EXPORT hipError_t hipGetProcAddress_spt(const char *symbol, void **pfn, int hipVersion,
					       uint64_t flags,
					       hipDriverProcAddressQueryResult *symbolStatus)
{
	return get_proc_address(symbol, pfn, hipVersion, flags, symbolStatus, true);
}
#endif

/* CPUHIP_MIPMAP=hidden: hipExternalMemoryGetMappedMipmappedArray built
 * but not exported, handed out by hipGetProcAddress only.  No runtime
 * does this: clr implements the call (hip_memory.cpp) and its version
 * script leaves it out, and its hipGetProcAddress resolves every name
 * with dlsym on the library's own handle (hip_device.cpp,
 * hipGetProcAddress_common), so it answers SYMBOL_NOT_FOUND, as this
 * library does by default.  The mode plays a runtime whose lookup went
 * through its dispatch table instead, for hipextsem's dlsym forwarding.
 * cpuhip imports no external memory: the call counts itself and refuses
 * every handle (none is one it made) and NULL arguments with
 * hipErrorInvalidValue. */
static atomic_int mipmap_calls;

static hipError_t hidden_mipmapped_array(void **mipmap, void *extMem, const void *mipmapDesc)
{
	atomic_fetch_add(&mipmap_calls, 1);
	(void)mipmap;
	(void)extMem;
	(void)mipmapDesc;
	return ret(hipErrorInvalidValue);
}

CPUHIP_EXPORT int cpuhipTestMipmapCalls(void)
{
	return atomic_load(&mipmap_calls);
}

/* As clr's lookup does for every name: dlsym on the library's own handle
 * first (a dlopen of itself; the name is not exported, so it fails, and
 * with a preloaded dlsym hook it goes through that hook), and only then,
 * unlike clr, the internal table. */
static void *mipmap_lookup(const char *name)
{
	static void *handle; /* kept open, as clr keeps its handle */
	void *self = __atomic_load_n(&handle, __ATOMIC_ACQUIRE), *none = NULL, *p = NULL;
	Dl_info di;

	if (!self && dladdr((void *)&hidden_mipmapped_array, &di) && di.dli_fname &&
	    (self = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) &&
	    !__atomic_compare_exchange_n(&handle, &none, self, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		dlclose(self); /* another thread's is kept */
		self = none;
	}
	if (self)
		p = dlsym(self, name);
	return p ? p : (void *)&hidden_mipmapped_array;
}

static hipError_t get_proc_address(const char *symbol, void **pfn, int hipVersion,
				   uint64_t flags, hipDriverProcAddressQueryResult *symbolStatus,
				   bool force_spt)
{
	ensure_init();
	if (!symbol || !*symbol || !pfn)
		return ret(hipErrorInvalidValue);
	/* clr hipGetProcAddress (hip_device.cpp): rocm-6.1 to 6.4.3 ignore
	 * `flags`; the 7.x tree (hipGetProcAddress_common) refuses unknown
	 * flags and looks up NAME_spt first for the per-thread flag. */
	if (release >= 700 && flags != HIP_GET_PROC_ADDRESS_DEFAULT &&
	    flags != HIP_GET_PROC_ADDRESS_LEGACY_STREAM &&
	    flags != HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
		return ret(hipErrorInvalidValue);
	char name[256];
	bool spt = force_spt ||
		   (release >= 700 && flags == HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	if (strcmp(symbol, "hipGetDeviceProperties") == 0) {
		snprintf(name, sizeof(name), "%s",
			 hipVersion >= 600 ? "hipGetDevicePropertiesR0600" : symbol);
		spt = false;
	} else {
		snprintf(name, sizeof(name), "%s", symbol);
	}
	void *p = NULL;
	if (g.mipmap_hidden && strcmp(name, "hipExternalMemoryGetMappedMipmappedArray") == 0)
		p = mipmap_lookup(name);
	if (spt && !p) {
		char sname[300];
		snprintf(sname, sizeof(sname), "%s_spt", name);
		p = cpuhip_lookup_proc(sname);
	}
	if (!p)
		p = cpuhip_lookup_proc(name);
	*pfn = p;
	if (!p) {
		if (symbolStatus)
			*symbolStatus = HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		return ret(hipErrorInvalidValue);
	}
	if (symbolStatus)
		*symbolStatus = HIP_GET_PROC_ADDRESS_SUCCESS;
	return ret(hipSuccess);
}
#endif

/* ------------------------------------------------------------------ */
/* Test-only extensions                                                */

CPUHIP_EXPORT hipError_t cpuhipTestEnqueueDelay(hipStream_t h, unsigned int usec)
{
	struct cmd *c = cmd_new(CMD_DELAY);
	if (!c)
		return hipErrorOutOfMemory;
	c->u.usec = usec;
	return submit(h, c);
}

CPUHIP_EXPORT hipError_t cpuhipTestStreamWorkerTid(hipStream_t h, pid_t *tid)
{
	ensure_init();
	if (!tid)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&g.lock);
	struct stream *s = lookup_stream_locked(h);
	if (!s) {
		pthread_mutex_unlock(&g.lock);
		return STREAM_GONE;
	}
	while (!s->q->started)
		pthread_cond_wait(&g.progress, &g.lock);
	*tid = s->q->tid;
	pthread_mutex_unlock(&g.lock);
	return hipSuccess;
}

CPUHIP_EXPORT hipError_t cpuhipTestCallbackThreadTid(pid_t *tid)
{
	if (!tid)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&g.lock);
	*tid = g.cb_started ? g.cb_tid : 0;
	pthread_mutex_unlock(&g.lock);
	return hipSuccess;
}

CPUHIP_EXPORT int cpuhipTestLiveStreams(void)
{
	pthread_mutex_lock(&g.lock);
	int n = (int)g.nstreams_alive;
	pthread_mutex_unlock(&g.lock);
	return n;
}

CPUHIP_EXPORT int cpuhipTestLiveEvents(void)
{
	int n = 0;

	pthread_mutex_lock(&g.lock);
	for (struct event *e = g.events; e; e = e->next_live)
		n++;
	pthread_mutex_unlock(&g.lock);
	return n;
}

CPUHIP_EXPORT int cpuhipTestAbi(void)
{
	return CPUHIP_ABI;
}
