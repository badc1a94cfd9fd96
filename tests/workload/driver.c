/* SPDX-License-Identifier: MIT */
/*
 * The workload's driver (docs/testing.md, "The randomized workload"): runs
 * one program, a few threads' sequences of the calls an application makes
 * around the shim plus a producer thread that plays the external (Vulkan)
 * side with raw DRM sync object ioctls, and logs every call, its answer
 * and every completion it observes to a file that tests/workload/hxwork
 * checks against its model.
 *
 *   hxwork-driver-abiN PROGRAM LOG
 *
 * PROGRAM: one op a line, "THREAD OP ARGS..." (THREAD T0 = main, T1..Tn
 * workers, P the producer), '#' comments, and a first line "threads N".
 * The ops run in the file's order ("lockstep"): an op starts once the one
 * before it has returned, or has been running for TURN_MS, or its thread
 * is still busy in an earlier op for that long (a call that blocks holds
 * up nothing but its own thread).  The grammar is listed in hxwork (OPS)
 * and docs/testing.md.
 *
 * LOG lines ("SEQ" from one process-wide counter, taken after the event;
 * "PRE" before a call):
 *   SEQ R OP RC PRE CAPST LIVE LOGGREW    a call returned (CAPST: the
 *        stream's capture status just before, -1 n/a; LIVE: 1 if the
 *        stream handle names a live stream, 0 a destroyed one, -2 one
 *        being destroyed or a destroyed one whose address a live stream
 *        now has, -1 n/a (null, legacy, per-thread);
 *        LOGGREW: 1 if the shim's log file grew during the call)
 *   SEQ M OP VALUE PRE   a marker (host callback / host node) enqueued
 *        after op OP ran; VALUE the semaphore's sync object's queried
 *        point then (-1: not queried)
 *   SEQ Q OP PRE VALUE   the producer queried a sync object
 *   SEQ E OP RC PRE      the producer's ioctl answered (0 or -errno)
 *   SEQ LATE OP          op started because its turn timed out
 *   SEQ U OP RESULT      a graph exec update's updateResult_out (-1: not set)
 *   SEQ FK OP EXIT SIG MS   a fork op's child ended: its exit status (-1:
 *        none), the signal that killed it (0: none), the ms from fork to
 *        its reaping
 *   SEQ FH OP CALL       a seeded fault (HXWORK_FAULTS): the shim's DRM call
 *        CALL failed with EIO, or the runtime call CALL (rt-hostfn,
 *        rt-eventrecord) the shim made for op OP failed; OP -1: on a thread
 *        of the shim's or the runtime's
 *   SEQ X return         main returns with whatever is pending
 *   SEQ X exit           a worker calls exit(0) with whatever is pending
 *   SEQ D phase ...      end-of-program phases (drain, leak checks)
 *   SEQ F reason         the driver itself found the run broken
 *
 * Exit status: 0, or 2 for a malformed program / broken environment.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <link.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "covdump.h"
#include "hxtest.h"
#include "hipextsem/hip_graph.h"
#include "hipextsem/hip_devprop.h"

#define MAXOPS 512
#define MAXT 8
#define MAXSEM 64
#define MAXQ 16
#define MAXG 16
#define TURN_MS 250
#define SETTLE_MS 300 /* the drain: no marker for this long first */
#define FORK_BOUND_S 20 /* a fork op's child: its alarm() */
#define SPAWN_BOUND_S 20 /* a nodev or load op's program (hxwork: SPAWN_BOUND) */

enum { K_NONE, K_BIN, K_TL, K_TLBIN, K_TLBINP, K_SYNC };

struct op {
	int thread; /* 0..nw main+workers, nw+1 producer */
	int line;
	char name[16];
	char a[4][24];
	int na;
};

static struct op ops[MAXOPS];
static int nops, nworkers;
static int logfd = -1;
static atomic_ulong seqctr;
static atomic_bool exiting;
static int pdrm = -1; /* the producer's DRM file */
static const char *shimlog;

/* semaphores */
static hipExternalSemaphore_t sem[MAXSEM];
static int sem_kind[MAXSEM];
static uint32_t sem_so[MAXSEM]; /* producer's sync object, 0 for sync_file */
static atomic_int sem_state[MAXSEM]; /* 0 never, 1 live, 2 destroyed */
static atomic_int sem_pub[MAXSEM];   /* sem_kind and sem_so written (snapshots) */
static char bogus[MAXSEM][64];

/* streams */
static hipStream_t qs[MAXQ];
static atomic_int q_state[MAXQ]; /* 0 never, 1 live, 2 destroyed, 3 being destroyed */
static int q_capthread[MAXQ] = { [0 ... MAXQ - 1] = -1 };
static hipGraph_t graphs[MAXG];
static atomic_int g_state[MAXG];
static hipGraphExec_t execs[MAXG];
static atomic_int x_state[MAXG];

/* turns */
static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tcond = PTHREAD_COND_INITIALIZER;
static bool released[MAXOPS], started[MAXOPS], finished[MAXOPS];
static int64_t start_ns[MAXOPS];
static int busy_op[MAXT + 2] = { [0 ... MAXT + 1] = -1 };
static atomic_bool cleanup_go, drain_on, producer_stop;
static bool drain_mode;
static bool forks_closed; /* under tlock: the process is about to end */

/* markers */
struct mark {
	int op, s;
};
static atomic_int marks_expected, marks_done;

static unsigned long next_seq(void)
{
	return atomic_fetch_add(&seqctr, 1) + 1;
}

static void wlog(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "%lu ", next_seq());
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(logfd, buf, (size_t)n);
}

static void die(const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (logfd >= 0)
		wlog("F %s", buf);
	fprintf(stderr, "hxwork-driver: %s\n", buf);
	exit(2);
}

static int64_t shimlog_size(void)
{
	struct stat st;
	if (!shimlog || stat(shimlog, &st))
		return -1;
	return st.st_size;
}

/* Whether the shim's log got a line holding both `text` and `also` since
 * it had `from` bytes: 1 or 0; -1 when there is no log file to read.
 * Another thread's lines may be in that span too, which the two texts
 * tell apart (1 MiB read at most). */
static __attribute__((unused)) int shimlog_has(int64_t from, const char *text, const char *also)
{
	size_t cap = 1 << 20, got = 0;
	char *buf, *line;
	int fd, found = 0;

	if (!shimlog || from < 0)
		return -1;
	fd = open(shimlog, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	buf = malloc(cap + 1);
	if (!buf)
		die("out of memory");
	while (got < cap) {
		ssize_t n = pread(fd, buf + got, cap - got, from + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	for (line = buf; line && *line && !found;) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = 0;
		found = strstr(line, text) && strstr(line, also);
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
	return found;
}

/* ---- seeded faults --------------------------------------------------
 * A program's "faults SEED:PERMILLE[:KIND,...]" line (HXWORK_FAULTS): from
 * the start of the program to the drain (or main's return, or a worker's
 * exit), each DRM sync object call the shim makes fails with EIO with the
 * given probability, and each semaphore or graph call of a driver thread
 * arms, with the same probability, a refusal of one of the runtime calls
 * the shim may make in it, taken by that thread's next such call: a host
 * function (hipLaunchHostFunc / hipStreamAddCallback), hipEventRecord, the
 * stream wait (hipStreamWaitValue64), an event's or a stream's creation,
 * an event-wait node's add or its SetEvent, hipGraphGetNodes (cpuhip's
 * cpuhipTestFailOnThisThread; the real runtimes have no such hook).  The
 * kinds are all of them unless the line names some (drm for the DRM
 * calls, the rest by rt_fail_name).  The draws come from one seeded sequence; which call takes which
 * draw depends on the threads' timing.  Every failure is logged (FH) with
 * the op it belongs to, for the model.  The failing definitions below come
 * ahead of libdrm in the lookup order; a call counts as the shim's when
 * its return address lies in the shim's object, so libdrm's own calls and
 * the driver's (the producer) go through untouched.  Not failed: destroy
 * (the kernel's fails for a bad handle only, and a failed one would leak
 * the kernel object whatever the shim did). */
static __thread int cur_op = -1; /* the op a driver thread is running */
static __thread bool thread_called; /* this thread ran an op (a runtime call) */
static __thread bool thread_used_pts; /* an op of this thread named hipStreamPerThread */
static atomic_bool null_used; /* an op named the null or the legacy stream */
static atomic_bool faults_on;
static unsigned fault_permille;
static _Atomic uint64_t fault_rng;
static uintptr_t shim_lo, shim_hi;
static int (*fail_mine)(int); /* cpuhipTestFailOnThisThread */
/* cpuhip_test.h: CPUHIP_FAIL_* (the real runtimes' driver does not include
 * it), and the names the FH lines and the faults line give them */
#define RT_FAIL_HOST_FN 1
#define RT_FAIL_EVENT_RECORD 2
#define RT_FAIL_STREAM_WAIT 4
#define RT_FAIL_EVENT_CREATE 8
#define RT_FAIL_STREAM_CREATE 16
#define RT_FAIL_EVENT_NODE 32
#define RT_FAIL_GET_NODES 64
#define RT_FAIL_WRITE_VALUE 128
#define RT_FAIL_HOST_MALLOC 256
#define RT_FAIL_KINDS 9
static const char *const rt_fail_name[RT_FAIL_KINDS] = {
	"hostfn", "eventrecord", "streamwait", "eventcreate", "streamcreate", "eventnode", "getnodes",
	"writevalue", "hostmalloc",
};
/* The fault kinds the faults line allows (all by default): RT_FAIL_* bits,
 * and the DRM calls' EIO. */
static int rt_kinds = (1 << RT_FAIL_KINDS) - 1;
static bool drm_kind = true;
/* oom: the shim's own malloc / calloc / realloc / aligned_alloc calls made in a driver
 * thread's op fail (ENOMEM, logged FH OP oom); only when the faults line
 * names it, never in the shim's threads (a waiter's allocation has nobody
 * to answer to), not in the sanitizer builds (their allocators own
 * malloc).  The definitions below come ahead of glibc's in the lookup
 * order (built with HXWORK_OOM: tests/workload/meson.build defines it when
 * no sanitizer is on); a call is the shim's when its return address lies
 * in the shim's object. */
static bool oom_kind;
static pid_t driver_pid; /* a fork child's own handlers are not failed */
/* The runtime's refusals of hipStreamWaitValue64 still allowed: the shim
 * moves from host memory to signal memory at the first (still
 * asynchronous), to the host-blocking path at the second, where a wait
 * blocks its thread; hxwork allows that (HXWORK_FAULT_HOSTPATH=1) only in
 * programs whose threads may block in a wait (the generator's rule for
 * the hostwait mode). */
static atomic_int streamwait_left = 1;

static bool fault_draw(void)
{
	uint64_t x = atomic_load(&fault_rng), y;

	do {
		y = x;
		y ^= y << 13;
		y ^= y >> 7;
		y ^= y << 17;
	} while (!atomic_compare_exchange_weak(&fault_rng, &x, y));
	return (y >> 11) % 1000 < fault_permille;
}

static int find_shim(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libextsem"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!shim_lo || lo < shim_lo)
			shim_lo = lo;
		if (hi > shim_hi)
			shim_hi = hi;
	}
	return 1;
}

static void faults_setup(void)
{
	const char *f = getenv("HXWORK_FAULTS");
	unsigned long long seed;
	unsigned pm;

	if (getenv("HXWORK_MUTANT") && !shim_hi)
		dl_iterate_phdr(find_shim, NULL);
	if (!f || sscanf(f, "%llu:%u", &seed, &pm) != 2 || !pm)
		return;
	/* SEED:PERMILLE[:KIND,...] */
	if ((f = strchr(f, ':')) && (f = strchr(f + 1, ':'))) {
		char buf[200], *save = NULL;

		snprintf(buf, sizeof(buf), "%s", f + 1);
		rt_kinds = 0;
		drm_kind = false;
		for (char *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
			int i;

			for (i = 0; i < RT_FAIL_KINDS && strcmp(k, rt_fail_name[i]); i++)
				;
			if (i < RT_FAIL_KINDS)
				rt_kinds |= 1 << i;
			else if (!strcmp(k, "drm"))
				drm_kind = true;
			else if (!strcmp(k, "oom"))
				oom_kind = true;
			else
				die("HXWORK_FAULTS: unknown fault kind %s", k);
		}
	}
	if (getenv("HXWORK_FAULT_HOSTPATH") && !strcmp(getenv("HXWORK_FAULT_HOSTPATH"), "1"))
		atomic_store(&streamwait_left, 2);
	driver_pid = getpid();
	fault_permille = pm > 1000 ? 1000 : pm;
	atomic_store(&fault_rng, (uint64_t)seed * 0x9e3779b97f4a7c15ULL | 1);
	dl_iterate_phdr(find_shim, NULL);
	if (!shim_hi)
		die("HXWORK_FAULTS: the shim (libextsem) is not loaded");
	*(void **)&fail_mine = dlsym(RTLD_DEFAULT, "cpuhipTestFailOnThisThread");
}

#ifdef HXWORK_OOM
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static bool oom_fault(const void *ra)
{
	if (!oom_kind || cur_op < 0 || !atomic_load_explicit(&faults_on, memory_order_relaxed) ||
	    (uintptr_t)ra < shim_lo || (uintptr_t)ra >= shim_hi || getpid() != driver_pid ||
	    !fault_draw())
		return false;
	wlog("FH %d oom", cur_op);
	errno = ENOMEM;
	return true;
}

void *malloc(size_t n)
{
	return oom_fault(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return oom_fault(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return oom_fault(__builtin_return_address(0)) ? NULL : __libc_realloc(p, n);
}

/* the shim's op pool (op_pool.c) */
void *aligned_alloc(size_t align, size_t n)
{
	return oom_fault(__builtin_return_address(0)) ? NULL : __libc_memalign(align, n);
}
#endif

/* True when the shim's call `call`, returning to ra, is to fail. */
static bool drm_fault(const char *call, const void *ra)
{
	if (!drm_kind || !atomic_load_explicit(&faults_on, memory_order_relaxed) ||
	    (uintptr_t)ra < shim_lo || (uintptr_t)ra >= shim_hi || !fault_draw())
		return false;
	wlog("FH %d %s", cur_op, call);
	errno = EIO;
	return true;
}

/* Arms a runtime failure for the calling thread's next call into the
 * shim, one of the kinds in `which` (the runtime calls the shim may make
 * in that call) the faults line allows, each as likely;
 * rt_fault_done() disarms it and logs it if it was taken. */
static int rt_fault_arm(int which)
{
	int kinds[RT_FAIL_KINDS], n = 0, what;

	which &= rt_kinds;
	if (!fail_mine || !which || !atomic_load_explicit(&faults_on, memory_order_relaxed) ||
	    !fault_draw())
		return 0;
	for (int i = 0; i < RT_FAIL_KINDS; i++)
		if (which & (1 << i))
			kinds[n++] = 1 << i;
	what = kinds[(atomic_load(&fault_rng) >> 17) % (unsigned)n];
	if (what == RT_FAIL_STREAM_WAIT && atomic_fetch_sub(&streamwait_left, 1) <= 0) {
		atomic_fetch_add(&streamwait_left, 1);
		return 0;
	}
	fail_mine(what);
	return what;
}

static void rt_fault_done(int opi, int armed)
{
	int taken;

	if (!armed)
		return;
	taken = armed & ~fail_mine(0);
	for (int i = 0; i < RT_FAIL_KINDS; i++)
		if (taken & (1 << i))
			wlog("FH %d rt-%s", opi, rt_fail_name[i]);
	if ((armed & RT_FAIL_STREAM_WAIT) && !taken)
		atomic_fetch_add(&streamwait_left, 1);
}

/* ---- coverage runs (hxwork cov: HXWORK_COV_DUMP) ----------------------
 * A fork op's child ends with _exit: the shim's write-out (covdump.h) is
 * looked up at start and called in the child just before _exit. */
static hx_cov_dump_fn *cov_dump;

static int find_cov_dump(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libextsem"))
		return 0;
	cov_dump = hx_cov_find(info->dlpi_name, info->dlpi_addr);
	return 1;
}

static void cov_setup(void)
{
	if (!getenv("HXWORK_COV_DUMP"))
		return;
	dl_iterate_phdr(find_cov_dump, NULL);
	if (!cov_dump)
		die("HXWORK_COV_DUMP: no __gcov_dump in the shim (not a b_coverage build?)");
}

static __attribute__((noreturn)) void child_exit(int code)
{
	atomic_store(&faults_on, false); /* the write-out allocates (oom) */
	if (cov_dump)
		cov_dump();
	_exit(code);
}

/* The kinds each op's shim call may meet (rt_fault_arm).  A signal: its
 * host function or event record, or in poll mode its stream write and the
 * poll slots' memory (a wait: its slots' memory as well). */
#define RT_SIG (RT_FAIL_HOST_FN | RT_FAIL_EVENT_RECORD | RT_FAIL_WRITE_VALUE | RT_FAIL_HOST_MALLOC)
/* a wait: the stream wait, 5.2's per-thread helper stream and event, a
 * captured wait's event and event-wait node */
#define RT_WAIT (RT_SIG | RT_FAIL_STREAM_WAIT | RT_FAIL_STREAM_CREATE | RT_FAIL_EVENT_CREATE | \
		 RT_FAIL_EVENT_NODE)
/* a wait node's event and event-wait node */
#define RT_GNWAIT (RT_SIG | RT_FAIL_EVENT_CREATE | RT_FAIL_EVENT_NODE)
/* a launch: the side streams, their waits, the events recorded there */
#define RT_LAUNCH (RT_SIG | RT_FAIL_STREAM_WAIT | RT_FAIL_STREAM_CREATE | RT_FAIL_EVENT_CREATE)
/* instantiation, update, clone, a capture's end: the walk of the graph's
 * nodes (hipGraphGetNodes), a copied wait node's own event
 * (hipEventCreateWithFlags, hipGraphEventWaitNodeSetEvent); a side stream
 * pooled with an event that says when it is idle */
#define RT_GRAPH (RT_FAIL_GET_NODES | RT_FAIL_EVENT_CREATE | RT_FAIL_EVENT_NODE)

/* The failing libdrm definitions are the harness's (hxtest.h, hxfault.c):
 * drm_hook() below says which calls fail.  libdrm's definitions are looked
 * up before the program starts (next_init, from main): a lookup is a
 * dlsym, which takes glibc's loader lock, and a dlopen op's constructor
 * holds that lock while it waits for a signal the runtime's callback
 * thread makes through these definitions. */
static enum df_verdict drm_hook(struct df_args *a);

static void next_init(void)
{
	df_init();
	df_hooks(NULL, drm_hook, NULL);
}

/* HXWORK_MUTANT (a seeded defect, to show that the model's properties
 * fail): the shim's signal ioctls are changed as a defective shim would
 * make them.  "delay": each issued 1.7 s late (stream-order, sync-order,
 * signal-live); "drop": the first one dropped, answered 0 (stream-order,
 * exit-lost, stuck); "bump": timeline points 5 higher (phantom-signal);
 * "pollonly": the first one dropped in poll-mode processes only (differ). */
static atomic_bool mutant_on; /* from the program's start (not the warm-up) */

static const char *mutant(const void *ra)
{
	static const char *m;
	static atomic_bool dropped;

	if ((uintptr_t)ra < shim_lo || (uintptr_t)ra >= shim_hi || !atomic_load(&mutant_on))
		return NULL;
	if (!m)
		m = getenv("HXWORK_MUTANT") ? getenv("HXWORK_MUTANT") : "";
	if (!strcmp(m, "delay")) {
		sleep_ms(1700);
		return NULL;
	}
	if (!strcmp(m, "drop") || (!strcmp(m, "pollonly") && getenv("HIPEXTSEM_SIGNAL_MODE") &&
				    !strcmp(getenv("HIPEXTSEM_SIGNAL_MODE"), "poll")))
		return atomic_exchange(&dropped, true) ? NULL : m;
	if (!strcmp(m, "pollonly") || !strcmp(m, "waitlate"))
		return NULL;
	return *m ? m : NULL;
}

/* HXWORK_MUTANT=waitlate (wait-live): the shim's timeline waits, by
 * eventfd or by a multi-wait, are made for a point 1000 higher, which only
 * the drain reaches. */
static bool wait_mutant(const void *ra)
{
	const char *m = getenv("HXWORK_MUTANT");

	return m && !strcmp(m, "waitlate") && (uintptr_t)ra >= shim_lo &&
	       (uintptr_t)ra < shim_hi && atomic_load(&mutant_on);
}

/* Each call of the shim's but destroy (the mutant first, on a signal). */
static enum df_verdict drm_hook(struct df_args *a)
{
	const char *mu = a->call == DF_SIGNAL || a->call == DF_TLSIGNAL ? mutant(a->ra) : NULL;

	if (mu && strcmp(mu, "bump"))
		return DF_SKIP;
	if (mu && a->call == DF_TLSIGNAL && a->count <= 8) {
		for (uint32_t i = 0; i < a->count; i++)
			a->scratch[i] = a->points[i] + 5;
		a->points = a->scratch;
	}
	if (a->call == DF_DESTROY)
		return DF_PASS;
	if (drm_fault(df_name[a->call], a->ra))
		return DF_FAIL;
	if (a->call == DF_TLWAIT && a->count <= 8 && wait_mutant(a->ra)) {
		for (uint32_t i = 0; i < a->count; i++)
			a->scratch[i] = a->points[i] ? a->points[i] + 1000 : 0;
		a->points = a->scratch;
	}
	if (a->call == DF_EVENTFD && wait_mutant(a->ra)) {
		struct {
			uint32_t handle, flags;
			uint64_t point;
		} *ev = a->arg;

		if (ev->point)
			ev->point += 1000;
	}
	return DF_PASS;
}

/* ---- syncobj side -------------------------------------------------- */

static uint64_t query_so(uint32_t h)
{
	uint64_t v = 0;
	if (drmSyncobjQuery(pdrm, &h, &v, 1))
		return (uint64_t)-1;
	return v;
}

/* ---- snapshots -------------------------------------------------------
 * What every semaphore's sync object holds now, as the model's
 * observation across semaphores: " S:V" per sync object the producer
 * holds (V: the timeline's point, or for a binary one 1 signaled / 0
 * not), after " t=MS" (ms since the program started). */
static int64_t t_start;

static void snap(char *buf, size_t n)
{
	size_t k = (size_t)snprintf(buf, n, " t=%lld", (long long)((now_ns() - t_start) / 1000000));

	for (int s = 0; s < MAXSEM && k + 24 < n; s++) {
		uint32_t h;
		long long v;

		if (!atomic_load_explicit(&sem_pub[s], memory_order_acquire))
			continue;
		h = sem_so[s];
		if (!h)
			continue;
		if (sem_kind[s] == K_BIN) {
			v = drmSyncobjWait(pdrm, &h, 1, 0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					   NULL) == 0;
		} else {
			uint64_t p = query_so(h);
			v = p == (uint64_t)-1 ? -1LL : (long long)p;
		}
		k += (size_t)snprintf(buf + k, n - k, " %d:%lld", s, v);
	}
}

/* ---- arguments ------------------------------------------------------ */

static int num(const struct op *o, int i)
{
	if (i >= o->na)
		die("line %d: %s needs more arguments", o->line, o->name);
	return atoi(o->a[i]);
}

static int semarg(const struct op *o, int i)
{
	int s = num(o, i);
	if (s < 0 || s >= MAXSEM)
		die("line %d: semaphore %d out of range", o->line, s);
	return s;
}

static int slot(const struct op *o, int i, int max)
{
	int s = num(o, i);
	if (s < 0 || s >= max)
		die("line %d: slot %d out of range", o->line, s);
	return s;
}

static hipExternalSemaphore_t sem_handle(int s)
{
	return atomic_load(&sem_state[s]) ? sem[s] : (hipExternalSemaphore_t)bogus[s];
}

/* A stream argument: null, legacy, pts or qN.  *live: 1/0 for qN, -1. */
static hipStream_t stream_arg(const struct op *o, int i, int *live, int *qi)
{
	const char *s;

	if (i >= o->na)
		die("line %d: %s needs a stream", o->line, o->name);
	s = o->a[i];
	*live = -1;
	if (qi)
		*qi = -1;
	if (!strcmp(s, "null")) {
		atomic_store(&null_used, true);
		return NULL;
	}
	if (!strcmp(s, "legacy")) {
		atomic_store(&null_used, true);
		return hipStreamLegacy;
	}
	if (!strcmp(s, "pts")) {
		thread_used_pts = true;
		return hipStreamPerThread;
	}
	if (s[0] == 'q') {
		int q = atoi(s + 1);
		if (q < 0 || q >= MAXQ)
			die("line %d: stream %s out of range", o->line, s);
		int qst = atomic_load(&q_state[q]);
		if (qi)
			*qi = q;
		if (!qst)
			die("line %d: stream %s was never created", o->line, s);
		*live = qst == 1 ? 1 : qst == 3 ? -2 : 0;
		for (int j = 0; j < MAXQ && *live == 0; j++)
			if (j != q && atomic_load(&q_state[j]) == 1 && qs[j] == qs[q])
				*live = -2; /* its address is a live stream's now */
		return qs[q];
	}
	die("line %d: bad stream %s", o->line, s);
	return NULL;
}

static int capture_status(hipStream_t st)
{
	int cs = -1;
	if (hipStreamGetCaptureInfo_v2(st, &cs, NULL, NULL, NULL, NULL) != hipSuccess)
		return -1;
	return cs;
}

/* ---- markers -------------------------------------------------------- */

static void mark_run(struct mark *m)
{
	uint64_t v = (uint64_t)-1;
	unsigned long pre;

	if (atomic_load(&exiting))
		return;
	pre = next_seq();
	char sn[400];

	if (m->s >= 0 && sem_so[m->s] && sem_kind[m->s] != K_BIN)
		v = query_so(sem_so[m->s]);
	snap(sn, sizeof(sn));
	wlog("M %d %lld %lu%s", m->op, v == (uint64_t)-1 ? -1LL : (long long)v, pre, sn);
	atomic_fetch_add(&marks_done, 1);
}

static void mark_cb(hipStream_t st, hipError_t e, void *p)
{
	(void)st;
	(void)e;
	mark_run(p);
}

static __attribute__((unused)) void mark_fn(void *p)
{
	mark_run(p);
}

/* A marker after op `opi` on st (capture status cs). */
static void add_marker(int opi, int s, hipStream_t st, int cs, int live)
{
	struct mark *m;
	hipError_t e;

	if (live == 0 || live == -2 || cs == HX_CAPTURE_STATUS_INVALIDATED || cs < 0)
		return;
	m = malloc(sizeof(*m));
	if (!m)
		die("out of memory");
	m->op = opi;
	m->s = s;
	if (cs == HX_CAPTURE_STATUS_ACTIVE) {
#if HX_TEST_ABI == 6
		e = hipLaunchHostFunc(st, mark_fn, m);
		wlog("MC %d %d", opi, (int)e); /* captured: runs per launch */
#else
		free(m);
#endif
		return;
	}
	atomic_fetch_add(&marks_expected, 1);
	e = hipStreamAddCallback(st, mark_cb, m, 0);
	if (e != hipSuccess) {
		atomic_fetch_sub(&marks_expected, 1);
		wlog("MF %d %d", opi, (int)e);
	}
}

/* ---- the ops -------------------------------------------------------- */

static void rlog(int opi, hipError_t rc, unsigned long pre, int cs, int live, int64_t l0)
{
	int64_t l1 = shimlog_size();
	wlog("R %d %d %lu %d %d %d", opi, (int)rc, pre, cs, live, l1 > l0 ? 1 : 0);
}

static void watch_send(int s, uint32_t h);

static void op_import(int opi, const struct op *o)
{
	int s = semarg(o, 0), kind, fd = -1;
	const char *k = o->na > 1 ? o->a[1] : "bin";
	hipError_t e;
	uint32_t h;
	unsigned long pre;
	int64_t l0;
	hipExternalSemaphore_t out = NULL;

	if (atomic_load(&sem_state[s]))
		die("line %d: semaphore %d imported twice", o->line, s);
	kind = !strcmp(k, "bin")      ? K_BIN
	       : !strcmp(k, "tl")     ? K_TL
	       : !strcmp(k, "tlbin")  ? K_TLBIN
	       : !strcmp(k, "tlbinp") ? K_TLBINP
	       : !strcmp(k, "sync")   ? K_SYNC
				      : K_NONE;
	if (kind == K_NONE)
		die("line %d: bad kind %s", o->line, k);
	if (drmSyncobjCreate(pdrm, kind == K_SYNC ? DRM_SYNCOBJ_CREATE_SIGNALED : 0, &h))
		die("drmSyncobjCreate: %s", strerror(errno));
	if (kind == K_TLBINP) {
		uint64_t p = 1;
		if (drmSyncobjTimelineSignal(pdrm, &h, &p, 1))
			die("drmSyncobjTimelineSignal: %s", strerror(errno));
	}
	if (kind == K_SYNC) {
		if (drmSyncobjExportSyncFile(pdrm, h, &fd))
			die("drmSyncobjExportSyncFile: %s", strerror(errno));
		drmSyncobjDestroy(pdrm, h);
		h = 0;
	} else if (drmSyncobjHandleToFD(pdrm, h, &fd)) {
		die("drmSyncobjHandleToFD: %s", strerror(errno));
	}
	sem_kind[s] = kind;
	sem_so[s] = h;
	atomic_store_explicit(&sem_pub[s], 1, memory_order_release); /* for snap() */
	if (h)
		watch_send(s, h);
	{
		test_desc d;
		memset(&d, 0, sizeof(d));
		d.type = kind == K_TL ? HX_SEM_HANDLE_TIMELINE_FD : HX_SEM_HANDLE_OPAQUE_FD;
		d.handle.fd = fd;
		l0 = shimlog_size();
		pre = next_seq();
		e = hipImportExternalSemaphore(&out, (const hipExternalSemaphoreHandleDesc *)&d);
	}
	if (e == hipSuccess) {
		sem[s] = out;
		atomic_store(&sem_state[s], 1);
	} else {
		close(fd);
	}
	rlog(opi, e, pre, -1, -1, l0);
}

/* HXWORK_WATCH_FD: a socket of the runner's, which keeps every sync
 * object of the program (an fd of each, sent here) past the process's
 * end and reads what they hold once it is gone (the after-exit check). */
static int watch_fd = -1;

static void watch_send(int s, uint32_t h)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *c;
	int fd, one = s;

	if (watch_fd < 0 || drmSyncobjHandleToFD(pdrm, h, &fd))
		return;
	memset(&mh, 0, sizeof(mh));
	memset(cbuf, 0, sizeof(cbuf));
	iov.iov_base = &one;
	iov.iov_len = sizeof(one);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(watch_fd, &mh, MSG_NOSIGNAL) < 0)
		wlog("F watch send: %s", strerror(errno));
	close(fd);
}

/* The "proc" argument: the call through the pointer hipGetProcAddress
 * hands out (6.x; 5.2 has no hipGetProcAddress: the direct call). */
static hipError_t sigwait_proc(hipExternalSemaphore_t h, uint64_t v, hipStream_t st,
			       bool is_signal)
{
#if HX_TEST_ABI == 6
	typedef hipError_t (*sig_fn)(const hipExternalSemaphore_t *,
				     const hipExternalSemaphoreSignalParams *, unsigned, hipStream_t);
	typedef hipError_t (*wait_fn)(const hipExternalSemaphore_t *,
				      const hipExternalSemaphoreWaitParams *, unsigned, hipStream_t);
	void *fn = NULL;

	if (hipGetProcAddress(is_signal ? "hipSignalExternalSemaphoresAsync"
					: "hipWaitExternalSemaphoresAsync",
			      &fn, 600, 0, NULL) != hipSuccess || !fn)
		die("hipGetProcAddress of the semaphore calls failed");
	if (is_signal) {
		test_signal_params p;

		memset(&p, 0, sizeof(p));
		p.params.fence.value = v;
		return ((sig_fn)fn)(&h, (const hipExternalSemaphoreSignalParams *)&p, 1, st);
	} else {
		test_wait_params p;

		memset(&p, 0, sizeof(p));
		p.params.fence.value = v;
		return ((wait_fn)fn)(&h, (const hipExternalSemaphoreWaitParams *)&p, 1, st);
	}
#else
	return is_signal ? signal1(h, v, st) : wait1(h, v, st);
#endif
}

/* The "dl" argument: the call through dlsym() of the runtime's own
 * library handle (dlopen of its soname, RTLD_NOLOAD), as a loader that
 * binds the runtime by hand does (docs/interposition.md). */
static hipError_t sigwait_dl(hipExternalSemaphore_t h, uint64_t v, hipStream_t st,
			     bool is_signal)
{
	typedef hipError_t (*fn_t)(const hipExternalSemaphore_t *, const void *, unsigned,
				   hipStream_t);
	static const char *const soname[] = { "libamdhip64.so.6", "libamdhip64.so.5",
					      "libamdhip64.so.7", "libamdhip64.so" };
	void *lib = NULL, *fn;
	union {
		test_signal_params s;
		test_wait_params w;
	} p;

	for (unsigned i = 0; i < sizeof(soname) / sizeof(soname[0]) && !lib; i++)
		lib = dlopen(soname[i], RTLD_NOW | RTLD_NOLOAD);
	if (!lib)
		die("dl: the runtime's library is not loaded under a known soname");
	fn = dlsym(lib, is_signal ? "hipSignalExternalSemaphoresAsync"
				  : "hipWaitExternalSemaphoresAsync");
	dlclose(lib);
	if (!fn)
		die("dl: dlsym of the semaphore calls failed");
	memset(&p, 0, sizeof(p));
	if (is_signal)
		p.s.params.fence.value = v;
	else
		p.w.params.fence.value = v;
	return ((fn_t)fn)(&h, &p, 1, st);
}

static void op_sigwait(int opi, const struct op *o, bool is_signal)
{
	int s = semarg(o, 0), live, cs, armed;
	uint64_t v = (uint64_t)num(o, 1);
	hipStream_t st = stream_arg(o, 2, &live, NULL);
	hipExternalSemaphore_t h = sem_handle(s);
	unsigned long pre;
	int64_t l0;
	hipError_t e;

	bool proc = o->na > 3 && !strcmp(o->a[3], "proc");
	bool dl = o->na > 3 && !strcmp(o->a[3], "dl");
	/* A thread's first HIP call may be this semaphore call, as in an
	 * application's interop thread: on a stream only this thread can
	 * capture (null, legacy, its hipStreamPerThread: none capturing yet)
	 * the capture status is read after the call, so that no runtime call
	 * of the driver's comes first. */
	bool first = !thread_called && live == -1;

	cs = live == 0 || live == -2 || first ? -1 : capture_status(st);
	l0 = shimlog_size();
	armed = rt_fault_arm(is_signal ? RT_SIG : RT_WAIT);
	pre = next_seq();
	if (proc)
		e = sigwait_proc(h, v, st, is_signal);
	else if (dl)
		e = sigwait_dl(h, v, st, is_signal);
	else
		e = is_signal ? signal1(h, v, st) : wait1(h, v, st);
	if (first)
		cs = capture_status(st);
	rlog(opi, e, pre, cs, live, l0);
	rt_fault_done(opi, armed);
	if (e == hipSuccess)
		add_marker(opi, s, st, cs, live);
}

static void op_destroy(int opi, const struct op *o)
{
	int s = semarg(o, 0);
	hipExternalSemaphore_t h = sem_handle(s);
	unsigned long pre;
	int64_t l0 = shimlog_size();
	int armed = rt_fault_arm(RT_SIG);
	hipError_t e;

	pre = next_seq();
	e = hipDestroyExternalSemaphore(h);
	rt_fault_done(opi, armed);
	if (e == hipSuccess && atomic_load(&sem_state[s]) == 1)
		atomic_store(&sem_state[s], 2);
	rlog(opi, e, pre, -1, -1, l0);
}

/* The work op: MS ms of stream work that is not the shim's (a kernel):
 * cpuhip's delay item, or on a real runtime a host callback that sleeps. */
static void work_cb(hipStream_t st, hipError_t e, void *p)
{
	(void)st;
	(void)e;
	sleep_ms((unsigned)(uintptr_t)p);
}

static hipError_t (*work_delay)(hipStream_t, unsigned); /* looked up in main */

static hipError_t enqueue_work(hipStream_t st, unsigned ms)
{
	if (work_delay)
		return work_delay(st, ms * 1000);
	return hipStreamAddCallback(st, work_cb, (void *)(uintptr_t)ms, 0);
}

static void op_stream(int opi, const struct op *o, int me)
{
	int live, qi, cs = -1;
	unsigned long pre;
	hipError_t e = hipSuccess;
	int64_t l0 = shimlog_size();

	if (!strcmp(o->name, "screate")) {
		int q = slot(o, 0, MAXQ);
		bool nb = o->na > 1 && !strcmp(o->a[1], "nb");
		if (atomic_load(&q_state[q]))
			die("line %d: stream q%d created twice", o->line, q);
		pre = next_seq();
		e = hipStreamCreateWithFlags(&qs[q], nb ? hipStreamNonBlocking : hipStreamDefault);
		if (e == hipSuccess)
			atomic_store(&q_state[q], 1);
		else
			die("hipStreamCreateWithFlags: %d", (int)e);
		rlog(opi, e, pre, -1, 1, l0);
		return;
	}
	if (!strcmp(o->name, "sdestroy")) {
		int q = slot(o, 0, MAXQ);
		if (atomic_load(&q_state[q]) != 1) {
			wlog("S %d dead", opi);
			return;
		}
		atomic_store(&q_state[q], 3);
		pre = next_seq();
		e = hipStreamDestroy(qs[q]);
		atomic_store(&q_state[q], 2);
		rlog(opi, e, pre, -1, 1, l0);
		return;
	}
	hipStream_t st = stream_arg(o, 0, &live, &qi);
	if (live == 0 || live == -2) { /* runtime calls on a destroyed stream: the application's crash */
		wlog("S %d dead", opi);
		return;
	}
	cs = capture_status(st);
	if (!strcmp(o->name, "touch")) {
		pre = next_seq();
		rlog(opi, hipSuccess, pre, cs, live, l0);
		add_marker(opi, -1, st, cs, live);
	} else if (!strcmp(o->name, "ssync")) {
		char sn[400];
		int armed = rt_fault_arm(RT_SIG);

		pre = next_seq();
		e = hipStreamSynchronize(st);
		snap(sn, sizeof(sn));
		rlog(opi, e, pre, cs, live, l0);
		rt_fault_done(opi, armed);
		wlog("SY %d%s", opi, sn);
	} else if (!strcmp(o->name, "cquery")) {
		pre = next_seq();
		e = hipStreamQuery(st);
		rlog(opi, e, pre, cs, live, l0);
	} else if (!strcmp(o->name, "cbegin")) {
		const char *m = o->na > 1 ? o->a[1] : "g";
		int mode = m[0] == 'g' ? HX_CAPTURE_MODE_GLOBAL
			   : m[0] == 't' ? HX_CAPTURE_MODE_THREAD_LOCAL
					 : HX_CAPTURE_MODE_RELAXED;
		pre = next_seq();
		e = hipStreamBeginCapture(st, mode);
		if (e == hipSuccess && qi >= 0)
			q_capthread[qi] = me;
		rlog(opi, e, pre, cs, live, l0);
	} else if (!strcmp(o->name, "cend")) {
		int g = slot(o, 1, MAXG);
		hipGraph_t gr = NULL;
		int armed = rt_fault_arm(RT_GRAPH);
		pre = next_seq();
		e = hipStreamEndCapture(st, &gr);
		rt_fault_done(opi, armed);
		if (e == hipSuccess && gr) {
			if (atomic_load(&g_state[g]) == 1)
				hipGraphDestroy(graphs[g]); /* slot reused: the old one goes */
			graphs[g] = gr;
			atomic_store(&g_state[g], 1);
		}
		rlog(opi, e, pre, cs, live, l0);
	} else if (!strcmp(o->name, "evwait")) {
		int live2;
		hipStream_t st2 = stream_arg(o, 1, &live2, NULL);
		hipEvent_t ev;
		if (live2 == 0 || live2 == -2) {
			wlog("S %d dead", opi);
			return;
		}
		if (hipEventCreateWithFlags(&ev, hipEventDisableTiming))
			die("hipEventCreate");
		pre = next_seq();
		e = hipEventRecord(ev, st);
		if (e == hipSuccess)
			e = hipStreamWaitEvent(st2, ev, 0);
		rlog(opi, e, pre, cs, live, l0);
		hipEventDestroy(ev);
	} else if (!strcmp(o->name, "work")) {
		pre = next_seq();
		e = cs == HX_CAPTURE_STATUS_NONE ? enqueue_work(st, (unsigned)num(o, 1))
						 : hipSuccess; /* no work in a capture */
		rlog(opi, e, pre, cs, live, l0);
	} else {
		die("line %d: unknown op %s", o->line, o->name);
	}
}

static void op_graph(int opi, const struct op *o)
{
	unsigned long pre;
	hipError_t e = hipSuccess;
	int64_t l0 = shimlog_size();

	if (!strcmp(o->name, "gcreate")) {
		int g = slot(o, 0, MAXG);
		hipGraph_t gr;
		pre = next_seq();
		e = hipGraphCreate(&gr, 0);
		if (e == hipSuccess) {
			if (atomic_load(&g_state[g]) == 1)
				hipGraphDestroy(graphs[g]);
			graphs[g] = gr;
			atomic_store(&g_state[g], 1);
		}
		rlog(opi, e, pre, -1, -1, l0);
	} else if (!strcmp(o->name, "gdestroy")) {
		int g = slot(o, 0, MAXG);
		if (atomic_load(&g_state[g]) != 1) {
			wlog("S %d dead", opi);
			return;
		}
		pre = next_seq();
		e = hipGraphDestroy(graphs[g]);
		atomic_store(&g_state[g], 2);
		rlog(opi, e, pre, -1, -1, l0);
	} else if (!strcmp(o->name, "gnsig") || !strcmp(o->name, "gnwait")) {
#if HX_TEST_ABI == 6
		int g = slot(o, 0, MAXG), s = semarg(o, 1), armed;
		bool is_sig = !strcmp(o->name, "gnsig");
		hipExternalSemaphore_t h = sem_handle(s);
		hipGraphNode_t node = NULL, hn;
		struct hx_ext_sem_node_params np;
		test_signal_params sp;
		test_wait_params wp;
		if (atomic_load(&g_state[g]) != 1) {
			hipGraph_t gr;
			if (hipGraphCreate(&gr, 0) != hipSuccess)
				die("hipGraphCreate");
			graphs[g] = gr;
			atomic_store(&g_state[g], 1);
		}
		memset(&sp, 0, sizeof(sp));
		memset(&wp, 0, sizeof(wp));
		sp.params.fence.value = wp.params.fence.value = (uint64_t)num(o, 2);
		np.extSemArray = &h;
		np.paramsArray = is_sig ? (const void *)&sp : (const void *)&wp;
		np.numExtSems = 1;
		armed = rt_fault_arm(is_sig ? RT_SIG : RT_GNWAIT);
		pre = next_seq();
		e = is_sig ? hipGraphAddExternalSemaphoresSignalNode(&node, graphs[g], NULL, 0, &np)
			   : hipGraphAddExternalSemaphoresWaitNode(&node, graphs[g], NULL, 0, &np);
		rlog(opi, e, pre, -1, -1, l0);
		rt_fault_done(opi, armed);
		if (e == hipSuccess && !is_sig) {
			struct mark *m = malloc(sizeof(*m));
			struct hx_host_node_params hp = { mark_fn, m };
			m->op = opi;
			m->s = s;
			e = hipGraphAddHostNode(&hn, graphs[g], &node, 1, &hp);
			wlog("MC %d %d", opi, (int)e);
		}
#else
		wlog("S %d abi5", opi);
#endif
	} else if (!strcmp(o->name, "ginst")) {
		int g = slot(o, 0, MAXG), x = slot(o, 1, MAXG);
		hipGraphExec_t ex;
		int armed;
		if (atomic_load(&g_state[g]) != 1) {
			wlog("S %d dead", opi);
			return;
		}
		armed = rt_fault_arm(RT_GRAPH);
		pre = next_seq();
		if (o->na > 2 && !strcmp(o->a[2], "flags"))
			e = hipGraphInstantiateWithFlags(&ex, graphs[g], 0);
		else
			e = hipGraphInstantiate(&ex, graphs[g], NULL, NULL, 0);
		rt_fault_done(opi, armed);
		if (e == hipSuccess) {
			if (atomic_load(&x_state[x]) == 1)
				hipGraphExecDestroy(execs[x]);
			execs[x] = ex;
			atomic_store(&x_state[x], 1);
		}
		rlog(opi, e, pre, -1, -1, l0);
	} else if (!strcmp(o->name, "glaunch")) {
		int x = slot(o, 0, MAXG), live, cs, armed;
		hipStream_t st = stream_arg(o, 1, &live, NULL);
		if (atomic_load(&x_state[x]) != 1 || live == 0 || live == -2) {
			wlog("S %d dead", opi);
			return;
		}
		cs = capture_status(st);
		armed = rt_fault_arm(RT_LAUNCH);
		pre = next_seq();
		e = hipGraphLaunch(execs[x], st);
		rlog(opi, e, pre, cs, live, l0);
		rt_fault_done(opi, armed);
		if (e == hipSuccess)
			add_marker(opi, -1, st, cs, live); /* the launch's end, in stream order */
	} else if (!strcmp(o->name, "gxdestroy")) {
		int x = slot(o, 0, MAXG);
		if (atomic_load(&x_state[x]) != 1) {
			wlog("S %d dead", opi);
			return;
		}
		int armed = rt_fault_arm(RT_GRAPH);
		pre = next_seq();
		e = hipGraphExecDestroy(execs[x]);
		rt_fault_done(opi, armed);
		atomic_store(&x_state[x], 2);
		rlog(opi, e, pre, -1, -1, l0);
	} else if (!strcmp(o->name, "gxupdate")) {
		int x = slot(o, 0, MAXG), g = slot(o, 1, MAXG), result = -1;
		hipGraphNode_t bad = NULL;
		if (atomic_load(&x_state[x]) != 1 || atomic_load(&g_state[g]) != 1) {
			wlog("S %d dead", opi);
			return;
		}
		int armed = rt_fault_arm(RT_GRAPH);
		pre = next_seq();
		e = hipGraphExecUpdate(execs[x], graphs[g], &bad, &result);
		rt_fault_done(opi, armed);
		rlog(opi, e, pre, -1, -1, l0);
		wlog("U %d %d", opi, result);
	} else if (!strcmp(o->name, "gclone")) {
#if HX_TEST_ABI == 6
		int g = slot(o, 0, MAXG), g2 = slot(o, 1, MAXG);
		hipGraph_t gr = NULL;
		if (atomic_load(&g_state[g]) != 1) {
			wlog("S %d dead", opi);
			return;
		}
		int armed = rt_fault_arm(RT_GRAPH);
		pre = next_seq();
		e = hipGraphClone(&gr, graphs[g]);
		rt_fault_done(opi, armed);
		if (e == hipSuccess && gr) {
			if (atomic_load(&g_state[g2]) == 1)
				hipGraphDestroy(graphs[g2]); /* slot reused: the old one goes */
			graphs[g2] = gr;
			atomic_store(&g_state[g2], 1);
		}
		rlog(opi, e, pre, -1, -1, l0);
#else
		wlog("S %d abi5", opi);
#endif
	} else {
		die("line %d: unknown op %s", o->line, o->name);
	}
}

/* ---- fork ----------------------------------------------------------- */

/* The child's steps, its exit status when one fails (hxwork names them). */
enum {
	FK_DRM = 3,  /* its own render node file */
	FK_SYNCOBJ,  /* a sync object and its fd */
	FK_IMPORT,   /* hipImportExternalSemaphore (OpaqueFd) */
	FK_SCREATE,  /* hipStreamCreateWithFlags */
	FK_SIGNAL,   /* the HIP signal */
	FK_SIGNALED, /* the sync object signaled within the bound */
	FK_WAIT,     /* the HIP waits */
	FK_MARKER,   /* hipStreamAddCallback */
	FK_CONSUMED, /* the first wait (the HIP signal) passed within the bound */
	FK_EARLY,    /* the second wait passed before the producer's signal */
	FK_PSIG,     /* the producer's ioctl */
	FK_PASSED,   /* the second wait passed within the bound */
	FK_SYNC,     /* hipStreamSynchronize */
	FK_DESTROY,  /* hipDestroyExternalSemaphore */
	FK_SDESTROY, /* hipStreamDestroy */
};

static atomic_int fork_marks;
static __thread bool fork_by_exit; /* the fork op's `exit`: the child ends by exit(0) */

static void fork_mark_cb(hipStream_t st, hipError_t e, void *p)
{
	(void)st;
	(void)e;
	(void)p;
	atomic_fetch_add(&fork_marks, 1);
}

static __attribute__((noreturn)) void fork_fail(int opi, int step, int rc)
{
	char buf[128];
	int n = snprintf(buf, sizeof(buf),
			 "hxwork-driver: op %d: the forked child failed at step %d (%d)\n", opi,
			 step, rc);

	(void)!write(2, buf, (size_t)n);
	child_exit(step);
}

static bool fork_marks_reach(int n, int64_t until)
{
	while (atomic_load(&fork_marks) < n) {
		if (now_ns() > until)
			return false;
		sleep_ms(2);
	}
	return true;
}

/* A fork op's child: nothing of the parent's is used (its handles are not
 * valid here, docs/semantics.md), only the shim afresh: its own render
 * node file and sync object, imported, signalled by HIP, then a wait the
 * HIP signal satisfies and one only the producer's ioctl may release,
 * each with a host callback after it; everything destroyed, _exit(0).
 * The alarm ends a child that deadlocks. */
static __attribute__((noreturn)) void fork_child(int opi)
{
	const char *node = getenv("HIPEXTSEM_RENDER_NODE");
	hipExternalSemaphore_t s = NULL;
	int64_t bound = 10000000000LL;
	hipStream_t st;
	test_desc d;
	sigset_t ss;
	uint32_t h;
	int drm, fd = -1;
	hipError_t e;

	sigemptyset(&ss);
	sigaddset(&ss, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &ss, NULL);
	signal(SIGALRM, SIG_DFL);
	alarm(FORK_BOUND_S);
	atomic_store(&faults_on, false); /* the child's steps must pass */
	atomic_store(&exiting, true);    /* the log is the parent's */
	/* The forking thread may have a Global or ThreadLocal capture going:
	 * the child, a copy of it, would have its synchronize refused (900)
	 * by the runtime, for the parent's capture.  Its own calls are not
	 * part of that. */
	{
		int mode = HX_CAPTURE_MODE_RELAXED;
		(void)hipThreadExchangeStreamCaptureMode(&mode);
	}
	drm = open(node ? node : "/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
	if (drm < 0)
		fork_fail(opi, FK_DRM, -errno);
	if (drmSyncobjCreate(drm, 0, &h) || drmSyncobjHandleToFD(drm, h, &fd))
		fork_fail(opi, FK_SYNCOBJ, -errno);
	memset(&d, 0, sizeof(d));
	d.type = HX_SEM_HANDLE_OPAQUE_FD;
	d.handle.fd = fd;
	e = hipImportExternalSemaphore(&s, (const hipExternalSemaphoreHandleDesc *)&d);
	if (e != hipSuccess)
		fork_fail(opi, FK_IMPORT, e);
	e = hipStreamCreateWithFlags(&st, hipStreamNonBlocking);
	if (e != hipSuccess)
		fork_fail(opi, FK_SCREATE, e);
	e = signal1(s, 0, st);
	if (e != hipSuccess)
		fork_fail(opi, FK_SIGNAL, e);
	if (so_wait(drm, h, 0, bound / 1000000))
		fork_fail(opi, FK_SIGNALED, -ETIME);
	/* On the host-blocking path (HIPEXTSEM_HOST_WAIT=1) a wait blocks
	 * this thread until it holds: the raw signal comes first there. */
	const char *hw = getenv("HIPEXTSEM_HOST_WAIT");
	bool hostwait = hw && atoi(hw) == 1;

	for (int i = 1; i <= 2; i++) {
		if (i == 2 && hostwait && drmSyncobjSignal(drm, &h, 1))
			fork_fail(opi, FK_PSIG, -errno);
		e = wait1(s, 0, st);
		if (e != hipSuccess)
			fork_fail(opi, FK_WAIT, e);
		e = hipStreamAddCallback(st, fork_mark_cb, NULL, 0);
		if (e != hipSuccess)
			fork_fail(opi, FK_MARKER, e);
		if (i == 1 && !fork_marks_reach(1, now_ns() + bound))
			fork_fail(opi, FK_CONSUMED, atomic_load(&fork_marks));
	}
	sleep_ms(50);
	if (!hostwait && atomic_load(&fork_marks) != 1)
		fork_fail(opi, FK_EARLY, atomic_load(&fork_marks));
	if (!hostwait && drmSyncobjSignal(drm, &h, 1))
		fork_fail(opi, FK_PSIG, -errno);
	if (!fork_marks_reach(2, now_ns() + bound))
		fork_fail(opi, FK_PASSED, atomic_load(&fork_marks));
	e = hipStreamSynchronize(st);
	if (e != hipSuccess)
		fork_fail(opi, FK_SYNC, e);
	/* `fork exit`: the child ends as a process does, by exit(0), with a
	 * wait nothing will satisfy pending on its (the forking thread's)
	 * hipStreamPerThread: docs/streams.md, the exit releases it (not on
	 * the host-blocking path, where the wait would block this thread).
	 * Only when the parent's streams the child's exit would tear down
	 * hold nothing of the parent's (docs/semantics.md: nothing of the
	 * parent's is the child's): the forking thread never used its
	 * per-thread stream, nobody used the null or the legacy stream, with
	 * which the per-thread stream synchronizes.  Otherwise the child ends
	 * as the plain fork op's does. */
	if (fork_by_exit && !thread_used_pts && !atomic_load(&null_used)) {
		if (!hostwait) {
			e = wait1(s, 0, hipStreamPerThread);
			if (e != hipSuccess)
				fork_fail(opi, FK_WAIT, e);
		}
		exit(0);
	}
	e = hipDestroyExternalSemaphore(s);
	if (e != hipSuccess)
		fork_fail(opi, FK_DESTROY, e);
	e = hipStreamDestroy(st);
	if (e != hipSuccess)
		fork_fail(opi, FK_SDESTROY, e);
	drmSyncobjDestroy(drm, h);
	close(drm);
	child_exit(0);
}

/* fork() from this thread while the others may be inside any call; the
 * child (fork_child) ends with _exit, and is reaped here: its exit status
 * (-1: none), the signal that killed it (0: none), the ms it took.  The
 * parent kills a child its alarm did not end. */
static void fork_reap(int opi, int *code, int *sig, int64_t *ms)
{
	int64_t t0 = now_ns();
	int status = 0;
	pid_t pid, r;

	*code = -1;
	*sig = 0;
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0)
		fork_child(opi);
	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (now_ns() - t0 > (FORK_BOUND_S + 5) * 1000000000LL) {
			kill(pid, SIGKILL);
			r = waitpid(pid, &status, 0);
			break;
		}
		sleep_ms(10);
	}
	if (r != pid)
		die("waitpid: %s", strerror(errno));
	if (WIFEXITED(status))
		*code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		*sig = WTERMSIG(status);
	*ms = (now_ns() - t0) / 1000000;
}

/* No fork once the process is about to end: no child may outlive it. */
static bool forks_allowed(int opi)
{
	bool closed;

	pthread_mutex_lock(&tlock);
	closed = forks_closed;
	pthread_mutex_unlock(&tlock);
	if (closed)
		wlog("S %d ending", opi);
	return !closed;
}

/* The child's end is logged (FK). */
static void op_fork(int opi, const struct op *o)
{
	int64_t ms, l0 = shimlog_size();
	int code, sig;
	unsigned long pre;

	if (!forks_allowed(opi))
		return;
	fork_by_exit = o->na > 0 && !strcmp(o->a[0], "exit");
	pre = next_seq();
	fork_reap(opi, &code, &sig, &ms);
	fork_by_exit = false;
	rlog(opi, hipSuccess, pre, -1, -1, l0);
	wlog("FK %d %d %d %lld", opi, code, sig, (long long)ms);
}

/* ---- dlopen of a library whose constructor forks or captures --------
 * libhxwork-ctor.so (ctor_lib.c, next to this driver) runs
 * hxwork_ctor_req.fn from its constructor, that is inside dlopen, with
 * glibc's loader lock held: a fork there (the fork op's child), or a
 * stream capture with a captured signal (ctor_capture).  The library is
 * closed again at once, so that the next dlopen runs its constructor
 * again. */
struct hxwork_ctor_req {
	int (*fn)(int);
	int arg;
	int result;
};
__attribute__((visibility("default"))) struct hxwork_ctor_req hxwork_ctor_req;
static pthread_mutex_t ctor_lock = PTHREAD_MUTEX_INITIALIZER;
static int ctor_sig;
static int64_t ctor_ms;

static unsigned ctor_delay_ms; /* `dlopen fork MS`: the constructor's work before its fork */

static int ctor_fork(int opi)
{
	int code;

	if (ctor_delay_ms)
		sleep_ms(ctor_delay_ms);
	fork_reap(opi, &code, &ctor_sig, &ctor_ms);
	return code;
}

/* The constructor's capture: a stream of its own, a Global capture with a
 * HIP signal of a semaphore of its own in it (6.x; 5.2 captures nothing
 * of the shim's, docs/graphs.md: an empty capture, then the signal on the
 * stream), the graph launched, the sync object signaled within 10 s,
 * everything destroyed.  Returns 0, or the step that failed (CTOR_STEPS
 * in hxwork). */
enum {
	CT_STREAM = 1, CT_IMPORT, CT_BEGIN, CT_SIGNAL, CT_END, CT_LAUNCH, CT_SIGNALED, CT_SYNC,
	CT_DESTROY
};

static int ctor_capture_steps(void);

static int ctor_capture(int opi)
{
	/* The dlopen's thread may have a Global or ThreadLocal capture of
	 * its own going (a cbegin earlier in the program): the runtime would
	 * refuse the constructor's synchronize for it (900), as a plugin's
	 * author would find out.  The constructor's calls are not part of it. */
	int mode = HX_CAPTURE_MODE_RELAXED, ret;

	(void)opi;
	(void)hipThreadExchangeStreamCaptureMode(&mode);
	ret = ctor_capture_steps();
	(void)hipThreadExchangeStreamCaptureMode(&mode);
	return ret;
}

static int ctor_capture_steps(void)
{
	hipExternalSemaphore_t s;
	hipGraph_t g = NULL;
	hipStream_t st;
	uint32_t h;
	int ret = 0;

	if (hipStreamCreateWithFlags(&st, hipStreamNonBlocking) != hipSuccess)
		return CT_STREAM;
	{
		int fd;

		h = so_create(pdrm, false);
		fd = so_export(pdrm, h);
		s = NULL;
		if (import_fd(&s, fd, false) != hipSuccess || !s) {
			/* a seeded fault's doing, or the shim's (the model tells) */
			close(fd);
			drmSyncobjDestroy(pdrm, h);
			hipStreamDestroy(st);
			return CT_IMPORT;
		}
	}
	if (hipStreamBeginCapture(st, HX_CAPTURE_MODE_GLOBAL) != hipSuccess) {
		ret = CT_BEGIN;
		goto out;
	}
#if HX_TEST_ABI == 6
	if (signal1(s, 0, st) != hipSuccess)
		ret = CT_SIGNAL;
#endif
	if (hipStreamEndCapture(st, &g) != hipSuccess || !g)
		ret = ret ? ret : CT_END;
	if (ret)
		goto out;
#if HX_TEST_ABI == 6
	{
		hipGraphExec_t x;

		if (hipGraphInstantiate(&x, g, NULL, NULL, 0) != hipSuccess) {
			ret = CT_LAUNCH;
			goto out;
		}
		if (hipGraphLaunch(x, st) != hipSuccess)
			ret = CT_LAUNCH;
		if (hipStreamSynchronize(st) != hipSuccess)
			ret = ret ? ret : CT_SYNC;
		if (hipGraphExecDestroy(x) != hipSuccess)
			ret = ret ? ret : CT_DESTROY;
	}
#else
	if (signal1(s, 0, st) != hipSuccess)
		ret = CT_SIGNAL;
#endif
	if (!ret && so_wait(pdrm, h, 0, 10000))
		ret = CT_SIGNALED;
	if (!ret && hipStreamSynchronize(st) != hipSuccess)
		ret = CT_SYNC;
out:
	if (g && hipGraphDestroy(g) != hipSuccess)
		ret = ret ? ret : CT_DESTROY;
	if (hipDestroyExternalSemaphore(s) != hipSuccess)
		ret = ret ? ret : CT_DESTROY;
	hipStreamSynchronize(st);
	if (hipStreamDestroy(st) != hipSuccess)
		ret = ret ? ret : CT_DESTROY;
	drmSyncobjDestroy(pdrm, h);
	return ret;
}

static void op_dlopen(int opi, const struct op *o)
{
	static char path[4096];
	bool fork_it = o->na > 0 && !strcmp(o->a[0], "fork");
	int64_t t0, l0 = shimlog_size();
	unsigned long pre;
	void *lib;

	if (o->na < 1 || (!fork_it && strcmp(o->a[0], "capture")))
		die("line %d: dlopen fork|capture", o->line);
	/* HXWORK_CTOR_LIB: a driver started through another release's
	 * dynamic loader, whose /proc/self/exe is that loader (hxwork) */
	if (!path[0] && getenv("HXWORK_CTOR_LIB"))
		snprintf(path, sizeof(path), "%s", getenv("HXWORK_CTOR_LIB"));
	if (!path[0]) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
		char *slash;

		if (n <= 0)
			die("readlink /proc/self/exe: %s", strerror(errno));
		path[n] = '\0';
		slash = strrchr(path, '/');
		strcpy(slash ? slash + 1 : path, "libhxwork-ctor.so");
	}
	if (fork_it && !forks_allowed(opi))
		return;
	pthread_mutex_lock(&ctor_lock);
	ctor_delay_ms = fork_it && o->na > 1 ? (unsigned)atoi(o->a[1]) : 0;
	hxwork_ctor_req.fn = fork_it ? ctor_fork : ctor_capture;
	hxwork_ctor_req.arg = opi;
	hxwork_ctor_req.result = -1;
	ctor_sig = 0;
	ctor_ms = 0;
	t0 = now_ns();
	pre = next_seq();
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		die("dlopen %s: %s", path, dlerror());
	rlog(opi, hipSuccess, pre, -1, -1, l0);
	if (fork_it)
		wlog("FK %d %d %d %lld", opi, hxwork_ctor_req.result, ctor_sig, (long long)ctor_ms);
	else
		wlog("FK %d %d 0 %lld", opi, hxwork_ctor_req.result,
		     (long long)((now_ns() - t0) / 1000000));
	hxwork_ctor_req.fn = NULL;
	dlclose(lib);
	pthread_mutex_unlock(&ctor_lock);
}

/* ---- a render loop nobody joins ---------------------------------------
 * `Tn loop`, a worker's last op: on a stream and a timeline semaphore of
 * its own (no other op names them), 2 ms of work then a signal of the next
 * point, over and over, as a render thread does, until the drain (then it
 * waits for its stream and destroys what it made) or the process's end,
 * which it does not stop for: a return or an exit meanwhile ends a process
 * where a thread is still signaling. */
static void op_loop(int opi, const struct op *o)
{
	hipExternalSemaphore_t s = NULL;
	int64_t l0 = shimlog_size();
	unsigned long pre = next_seq();
	uint32_t h = 0;
	hipStream_t st;
	hipError_t e;
	int fd = -1;

	(void)o;
	if (hipStreamCreateWithFlags(&st, hipStreamNonBlocking) != hipSuccess)
		die("loop: hipStreamCreateWithFlags");
	if (drmSyncobjCreate(pdrm, 0, &h) || drmSyncobjHandleToFD(pdrm, h, &fd))
		die("loop: a sync object: %s", strerror(errno));
	e = import_fd(&s, fd, true);
	if (e != hipSuccess) {
		close(fd); /* a seeded fault */
		s = NULL;
	}
	for (uint64_t v = 1; s && !atomic_load(&drain_on) && !atomic_load(&cleanup_go); v++) {
		(void)enqueue_work(st, 2);
		(void)signal1(s, v, st); /* a fault may refuse one: the loop goes on */
		sleep_ms(1);
	}
	(void)hipStreamSynchronize(st);
	if (s)
		(void)hipDestroyExternalSemaphore(s);
	(void)hipStreamDestroy(st);
	drmSyncobjDestroy(pdrm, h);
	rlog(opi, e, pre, -1, -1, l0);
}

/* ---- many streams that each wait ---------------------------------------
 * `T fan N S V`: N created streams (non-blocking), each with a wait of S
 * for V, then a signal of a timeline of its own (point 1) behind it: a
 * pipeline with a stream per frame in flight.  Nothing else names them;
 * they go at the drain (fan_cleanup) or with the process. */
struct fan {
	int n;
	hipStream_t *st;
	hipExternalSemaphore_t *own;
	uint32_t *h;
};
static struct fan fans[MAXOPS];
static int nfans;

static void op_fan(int opi, const struct op *o)
{
	int n = num(o, 0), s = semarg(o, 1);
	uint64_t v = (uint64_t)num(o, 2);
	int64_t l0 = shimlog_size();
	unsigned long pre = next_seq();
	hipError_t e = hipSuccess, e1;
	struct fan *f;

	if (n < 1 || n > 256)
		die("line %d: fan 1..256 streams", o->line);
	pthread_mutex_lock(&tlock);
	f = &fans[nfans++];
	pthread_mutex_unlock(&tlock);
	f->st = calloc((size_t)n, sizeof(*f->st));
	f->own = calloc((size_t)n, sizeof(*f->own));
	f->h = calloc((size_t)n, sizeof(*f->h));
	if (!f->st || !f->own || !f->h)
		die("out of memory");
	for (int i = 0; i < n; i++) {
		int fd = -1;

		if (hipStreamCreateWithFlags(&f->st[i], hipStreamNonBlocking) != hipSuccess)
			die("fan: hipStreamCreateWithFlags");
		f->n = i + 1;
		if (drmSyncobjCreate(pdrm, 0, &f->h[i]) || drmSyncobjHandleToFD(pdrm, f->h[i], &fd))
			die("fan: a sync object: %s", strerror(errno));
		if (import_fd(&f->own[i], fd, true) != hipSuccess) {
			close(fd); /* a seeded fault */
			f->own[i] = NULL;
		}
		e1 = wait1(sem_handle(s), v, f->st[i]);
		if (e1 != hipSuccess && e == hipSuccess)
			e = e1;
		if (f->own[i])
			(void)signal1(f->own[i], 1, f->st[i]);
	}
	rlog(opi, e, pre, -1, -1, l0);
}

/* The drain: every wait of S was satisfied by then. */
static void fan_cleanup(void)
{
	for (int k = 0; k < nfans; k++) {
		struct fan *f = &fans[k];

		for (int i = 0; i < f->n; i++) {
			(void)hipStreamSynchronize(f->st[i]);
			if (f->own[i])
				(void)hipDestroyExternalSemaphore(f->own[i]);
			(void)hipStreamDestroy(f->st[i]);
			drmSyncobjDestroy(pdrm, f->h[i]);
		}
	}
}

/* ---- exit-time code that waits -----------------------------------------
 * `T atexit S V STREAM [tls]`: registers, now, exit-time code of the
 * program's that waits for the other side's last signal (docs/streams.md):
 * an atexit handler, or (tls, on main) a C++ thread_local destructor
 * (__cxa_thread_atexit_impl, as libstdc++ registers one).  At the exit it
 * enqueues the wait of S for V on STREAM (a created stream or null) and a
 * host callback after it, looks 300 ms later whether the callback ran
 * (XA: the wait passed before anyone signaled S, when nothing had), then
 * signals S itself through the producer's file and waits up to 5 s for
 * the callback (XB).  A forked child that exits runs nothing of it. */
struct exit_wait {
	int op, s;
	uint64_t v;
	char stream[8];
	bool tls;
	atomic_int ran;   /* the callback after the wait ran */
	atomic_bool taken; /* an atexit call ran this entry */
};
static struct exit_wait exit_waits[MAXOPS];
static int n_exit_waits;
static pid_t driver_pid;

static void exit_wait_cb(hipStream_t st, hipError_t e, void *p)
{
	(void)st;
	(void)e;
	atomic_store(&((struct exit_wait *)p)->ran, 1);
}

static void exit_wait_run(void *p)
{
	struct exit_wait *x = p;
	hipStream_t st = NULL;
	unsigned long pre;
	int64_t until;
	uint32_t h;
	hipError_t e = hipSuccess;
	bool hostwait;
	int early;

	if (getpid() != driver_pid)
		return;
	if (x->stream[0] == 'q') {
		int q = atoi(x->stream + 1);

		if (q < 0 || q >= MAXQ || atomic_load(&q_state[q]) != 1) {
			wlog("XA %d skip", x->op);
			return;
		}
		st = qs[q];
	}
	if (atomic_load(&sem_state[x->s]) != 1 || !sem_so[x->s]) {
		wlog("XA %d skip", x->op);
		return;
	}
	h = sem_so[x->s];
	/* on the host-blocking path the wait blocks this thread until it
	 * holds: the signal comes first there, and nothing is looked at */
	hostwait = getenv("HIPEXTSEM_HOST_WAIT") && atoi(getenv("HIPEXTSEM_HOST_WAIT")) == 1;
	for (int step = hostwait ? 0 : 1; step < 3; step++) {
		if (step == 0 || (step == 2 && !hostwait)) {
			if (sem_kind[x->s] == K_BIN) {
				drmSyncobjSignal(pdrm, &h, 1);
			} else {
				uint64_t cur = query_so(h), v = x->v;
				if (cur == (uint64_t)-1 || cur < v)
					drmSyncobjTimelineSignal(pdrm, &h, &v, 1);
			}
		}
		if (step != 1)
			continue;
		pre = next_seq();
		e = wait1(sem[x->s], x->v, st);
		if (e == hipSuccess &&
		    hipStreamAddCallback(st, exit_wait_cb, x, 0) != hipSuccess)
			e = hipErrorUnknown;
		if (!hostwait)
			sleep_ms(300);
		early = hostwait ? -1 : atomic_load(&x->ran);
		wlog("XA %d %d %lu %d", x->op, (int)e, pre, early);
	}
	/* XB is judged for timelines only: a binary semaphore's one signal
	 * may go to another of its waits still pending (hxwork, wait-live),
	 * so its handler does not spend 5 s of the exit on it (that time
	 * counted against the exit bound: cov-6.0-exit-hang-loop-9295-82) */
	for (until = now_ns() + (sem_kind[x->s] == K_BIN ? 0 : 5000000000LL);
	     e == hipSuccess && !atomic_load(&x->ran) && now_ns() < until;)
		sleep_ms(5);
	wlog("XB %d %d", x->op, atomic_load(&x->ran));
}

static void exit_wait_atexit(void)
{
	/* handlers run last registered first: the newest entry not run */
	for (int i = n_exit_waits - 1; i >= 0; i--)
		if (!exit_waits[i].tls && !atomic_exchange(&exit_waits[i].taken, true)) {
			exit_wait_run(&exit_waits[i]);
			return;
		}
}

extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso);
extern void *__dso_handle;

static void op_atexit(int opi, const struct op *o)
{
	bool tls = o->na > 3 && !strcmp(o->a[3], "tls");
	int64_t l0 = shimlog_size();
	unsigned long pre = next_seq();
	struct exit_wait *x;
	int r;

	pthread_mutex_lock(&tlock);
	x = &exit_waits[n_exit_waits++];
	pthread_mutex_unlock(&tlock);
	x->op = opi;
	x->s = semarg(o, 0);
	x->v = (uint64_t)num(o, 1);
	snprintf(x->stream, sizeof(x->stream), "%s", o->na > 2 ? o->a[2] : "null");
	atomic_store(&x->ran, 0);
	x->tls = tls;
	r = tls ? __cxa_thread_atexit_impl(exit_wait_run, x, &__dso_handle)
		: atexit(exit_wait_atexit);
	rlog(opi, r ? hipErrorUnknown : hipSuccess, pre, -1, -1, l0);
}

/* The producer's ops: raw ioctls on its own DRM file. */
static void op_producer(int opi, const struct op *o)
{
	int s = semarg(o, 0), r = 0;
	unsigned long pre;
	uint32_t h = sem_so[s];

	if (!h) {
		wlog("S %d nosyncobj", opi);
		return;
	}
	pre = next_seq();
	if (!strcmp(o->name, "psig")) {
		r = drmSyncobjSignal(pdrm, &h, 1) ? -errno : 0;
		wlog("E %d %d %lu", opi, r, pre);
	} else if (!strcmp(o->name, "ptsig")) {
		uint64_t p = (uint64_t)num(o, 1);
		r = drmSyncobjTimelineSignal(pdrm, &h, &p, 1) ? -errno : 0;
		wlog("E %d %d %lu", opi, r, pre);
	} else if (strcmp(o->name, "pquery") != 0) {
		die("line %d: unknown producer op %s", o->line, o->name);
	}
	if (sem_kind[s] != K_BIN) {
		pre = next_seq();
		uint64_t v = query_so(h);
		wlog("Q %d %lu %lld", opi, pre, v == (uint64_t)-1 ? -1LL : (long long)v);
	}
}

/* ---- node parameters, child graphs, _spt entries, lookups ------------
 * Ops that each make their own semaphore (a timeline sync object of the
 * producer's file, imported), graphs and stream, run one scenario a user
 * runs and log every answer ("C OP STEP RC VALUE"; VALUE -1 when there is
 * none) for hxwork's model, which holds the expected answers (CSTEPS),
 * then destroy all of it.  The program's own semaphores are untouched, so
 * the other properties do not see these ops.  A helper thread plays the
 * Vulkan side for the waits: it signals the point the graph's stale wait
 * value names, reads the point (the signal node behind the wait must not
 * have run: a wait that passes early shows the later point), then the
 * point the current wait value names.  Waiting for the stream is bounded
 * (CWAIT_MS): a stream that never finishes is logged, not hung on. */
static void cstep(int opi, int step, int rc, long long v)
{
	wlog("C %d %d %d %lld", opi, step, rc, v);
}

#define CWAIT_MS 10000
#if HX_TEST_ABI == 6
struct cpriv {
	uint32_t so;
	hipExternalSemaphore_t h;
	hipStream_t q;
	uint64_t early, late; /* the helper's two points; 0: none */
	pthread_t helper;
	bool helper_on;
	int opi;
	int mode; /* the thread's capture interaction mode before the op */
};

static void *cpriv_helper(void *arg)
{
	struct cpriv *c = arg;

	sleep_ms(20);
	if (c->early) {
		so_signal(pdrm, c->so, c->early);
		sleep_ms(40);
		cstep(c->opi, 90, 0, (long long)query_so(c->so)); /* before the late point */
	}
	sleep_ms(10);
	so_signal(pdrm, c->so, c->late);
	return NULL;
}

/* Step 1: the import; 2: the stream. */
static bool cpriv_open(int opi, struct cpriv *c)
{
	test_desc d;
	hipError_t e;
	int fd = -1;

	memset(c, 0, sizeof(*c));
	c->opi = opi;
	/* Relaxed for the op: its synchronizes and queries neither fail on
	 * nor invalidate the program's own captures (of this thread, or
	 * Global ones of others), which the model follows */
	c->mode = HX_CAPTURE_MODE_RELAXED;
	hipThreadExchangeStreamCaptureMode(&c->mode);
	if (drmSyncobjCreate(pdrm, 0, &c->so) || drmSyncobjHandleToFD(pdrm, c->so, &fd))
		die("cov op: sync object: %s", strerror(errno));
	memset(&d, 0, sizeof(d));
	d.type = HX_SEM_HANDLE_TIMELINE_FD;
	d.handle.fd = fd;
	e = hipImportExternalSemaphore(&c->h, (const hipExternalSemaphoreHandleDesc *)&d);
	cstep(opi, 1, e, -1);
	if (e) {
		close(fd);
		drmSyncobjDestroy(pdrm, c->so);
		hipThreadExchangeStreamCaptureMode(&c->mode);
		return false;
	}
	e = hipStreamCreateWithFlags(&c->q, hipStreamNonBlocking);
	cstep(opi, 2, e, -1);
	if (e) {
		hipDestroyExternalSemaphore(c->h);
		drmSyncobjDestroy(pdrm, c->so);
		hipThreadExchangeStreamCaptureMode(&c->mode);
		return false;
	}
	return true;
}

static void cpriv_helper_start(struct cpriv *c, uint64_t early, uint64_t late)
{
	c->early = early;
	c->late = late;
	c->helper_on = !pthread_create(&c->helper, NULL, cpriv_helper, c);
	if (!c->helper_on)
		so_signal(pdrm, c->so, late);
}

/* Step 80: the stream finished (rc of the last hipStreamQuery: 0, or 600
 * when it did not within CWAIT_MS); 81: the point then. */
static void cpriv_finish(int opi, struct cpriv *c)
{
	int64_t until = now_ns() + (int64_t)CWAIT_MS * 1000000;
	hipError_t e;

	while ((e = hipStreamQuery(c->q)) == hipErrorNotReady && now_ns() < until)
		sleep_ms(2);
	if (c->helper_on)
		pthread_join(c->helper, NULL);
	c->helper_on = false;
	cstep(opi, 80, e, -1);
	cstep(opi, 81, 0, (long long)query_so(c->so));
}

/* Step 82: the destroy of the semaphore. */
static void cpriv_close(int opi, struct cpriv *c)
{
	if (c->helper_on)
		pthread_join(c->helper, NULL);
	if (hipStreamQuery(c->q) == hipErrorNotReady)
		so_signal(pdrm, c->so, 1000); /* releases what still waits */
	hipStreamSynchronize(c->q);
	cstep(opi, 82, hipDestroyExternalSemaphore(c->h), -1);
	hipStreamDestroy(c->q);
	drmSyncobjDestroy(pdrm, c->so);
	hipThreadExchangeStreamCaptureMode(&c->mode);
}

static hipError_t cnode_add(hipGraphNode_t *n, hipGraph_t g, const hipGraphNode_t *dep,
			    bool sig, hipExternalSemaphore_t *h, uint64_t v)
{
	struct hx_ext_sem_node_params np;
	test_signal_params sp;
	test_wait_params wp;

	memset(&sp, 0, sizeof(sp));
	memset(&wp, 0, sizeof(wp));
	sp.params.fence.value = wp.params.fence.value = v;
	np.extSemArray = h;
	np.paramsArray = sig ? (const void *)&sp : (const void *)&wp;
	np.numExtSems = 1;
	return sig ? hipGraphAddExternalSemaphoresSignalNode(n, g, dep, dep ? 1 : 0, &np)
		   : hipGraphAddExternalSemaphoresWaitNode(n, g, dep, dep ? 1 : 0, &np);
}

/* The generic calls' params (hipGraphAddNode, hipGraph(Exec)NodeSetParams)
 * for one semaphore: a signal node's (value in *sp) or a wait node's (in
 * *wp), which must outlive *gp. */
static void generic_params(struct hx_graph_node_params *gp, bool sig, hipExternalSemaphore_t *h,
			   test_signal_params *sp, test_wait_params *wp, uint64_t v)
{
	struct hx_ext_sem_node_params *np = sig ? &gp->u.extSemSignal : &gp->u.extSemWait;

	memset(gp, 0, sizeof(*gp));
	if (sig) {
		memset(sp, 0, sizeof(*sp));
		sp->params.fence.value = v;
	} else {
		memset(wp, 0, sizeof(*wp));
		wp->params.fence.value = v;
	}
	gp->type = sig ? HX_GRAPH_NODE_EXT_SEM_SIGNAL : HX_GRAPH_NODE_EXT_SEM_WAIT;
	np->extSemArray = h;
	np->paramsArray = sig ? (const void *)sp : (const void *)wp;
	np->numExtSems = 1;
}

/* set: 0 the graph's node, 1 the exec's (exec x). */
static hipError_t cnode_set(hipGraphExec_t x, hipGraphNode_t n, bool sig,
			    hipExternalSemaphore_t *h, uint64_t v)
{
	struct hx_ext_sem_node_params np;
	test_signal_params sp;
	test_wait_params wp;

	memset(&sp, 0, sizeof(sp));
	memset(&wp, 0, sizeof(wp));
	sp.params.fence.value = wp.params.fence.value = v;
	np.extSemArray = h;
	np.paramsArray = sig ? (const void *)&sp : (const void *)&wp;
	np.numExtSems = 1;
	if (x)
		return sig ? hipGraphExecExternalSemaphoresSignalNodeSetParams(x, n, &np)
			   : hipGraphExecExternalSemaphoresWaitNodeSetParams(x, n, &np);
	return sig ? hipGraphExternalSemaphoresSignalNodeSetParams(n, &np)
		   : hipGraphExternalSemaphoresWaitNodeSetParams(n, &np);
}

/* The value GetParams answers: -2 when it names another semaphore or not
 * one, -3 when the call failed. */
static long long cnode_get(int opi, int step, hipGraphNode_t n, bool sig,
			   hipExternalSemaphore_t h)
{
	struct hx_ext_sem_node_params np;
	long long v = -3;
	hipError_t e;

	memset(&np, 0, sizeof(np));
	e = sig ? hipGraphExternalSemaphoresSignalNodeGetParams(n, &np)
		: hipGraphExternalSemaphoresWaitNodeGetParams(n, &np);
	if (!e && (np.numExtSems != 1 || !np.extSemArray || np.extSemArray[0] != h ||
		   !np.paramsArray))
		v = -2;
	else if (!e)
		v = sig ? (long long)((const test_signal_params *)np.paramsArray)->params.fence.value
			: (long long)((const test_wait_params *)np.paramsArray)->params.fence.value;
	cstep(opi, step, e, v);
	return v;
}

/* nparams: a wait node W (value 2) and a signal node S (value 3) behind
 * it; each node's GetParams answers what was added, SetParams changes it
 * (W 4, S 5) and GetParams answers that, a timeline signal value of 0 is
 * refused (hipErrorInvalidValue) and leaves the node as it was, a
 * semaphore destroyed meanwhile is refused (hipErrorInvalidHandle); the
 * exec's SetParams (W 6, S 9) leaves the graph's nodes alone; launched,
 * the exec waits for 6 (not the graph's 4: the helper gives 4 first) and
 * signals 9.  A third node S2 behind S goes through the generic calls
 * (hipGraphAddNode 8, hipGraphNodeSetParams 7, hipGraphExecNodeSetParams
 * 8), below 9 so that the end point still tells S's exec value.  A
 * wait node for 100 is added and destroyed (hipGraphDestroyNode) before
 * the instantiation: the exec does not wait for it. */
static void op_nparams(int opi)
{
	struct cpriv c;
	hipGraph_t g = NULL;
	hipGraphExec_t x = NULL;
	/* the generic setters: the shim's (the runtime before 6.2 has none) */
	typedef hipError_t gnset_fn(hipGraphNode_t, struct hx_graph_node_params *);
	typedef hipError_t gxnset_fn(hipGraphExec_t, hipGraphNode_t, struct hx_graph_node_params *);
	gnset_fn *gnset = (gnset_fn *)dlsym(RTLD_DEFAULT, "hipGraphNodeSetParams");
	gxnset_fn *gxnset = (gxnset_fn *)dlsym(RTLD_DEFAULT, "hipGraphExecNodeSetParams");
	hipGraphNode_t w = NULL, s = NULL, s2 = NULL;
	hipExternalSemaphore_t dead = NULL;
	uint32_t dso = 0;
	hipError_t e;

	if (!cpriv_open(opi, &c))
		return;
	e = hipGraphCreate(&g, 0);
	cstep(opi, 3, e, -1);
	if (e)
		goto out;
	cstep(opi, 4, cnode_add(&w, g, NULL, false, &c.h, 2), -1);
	cstep(opi, 5, cnode_add(&s, g, w ? &w : NULL, true, &c.h, 3), -1);
	if (!w || !s)
		goto out;
	cnode_get(opi, 10, w, false, c.h);
	cnode_get(opi, 11, s, true, c.h);
	cstep(opi, 12, cnode_set(NULL, w, false, &c.h, 4), -1);
	cstep(opi, 13, cnode_set(NULL, s, true, &c.h, 5), -1);
	cnode_get(opi, 14, w, false, c.h);
	cnode_get(opi, 15, s, true, c.h);
	cstep(opi, 16, cnode_set(NULL, s, true, &c.h, 0), -1);
	cnode_get(opi, 17, s, true, c.h);
	/* a semaphore of its own, destroyed: the set names a dead handle */
	dead = sem_import_new(pdrm, &dso, true);
	hipDestroyExternalSemaphore(dead);
	drmSyncobjDestroy(pdrm, dso);
	cstep(opi, 18, cnode_set(NULL, s, true, &dead, 7), -1);
	cstep(opi, 19, cnode_set(NULL, w, false, &dead, 7), -1);
	cnode_get(opi, 20, w, false, c.h);
	/* the generic calls (HIP 6.2): a signal node (value 8) behind S added
	 * with hipGraphAddNode, set (7) with hipGraphNodeSetParams */
	{
		struct hx_graph_node_params gp;
		test_signal_params sp;

		generic_params(&gp, true, &c.h, &sp, NULL, 8);
		cstep(opi, 21, hipGraphAddNode(&s2, g, &s, 1, &gp), -1);
		if (s2) {
			cnode_get(opi, 22, s2, true, c.h);
			sp.params.fence.value = 7;
			cstep(opi, 23, gnset ? (int)gnset(s2, &gp) : -1, -1);
			cnode_get(opi, 24, s2, true, c.h);
		}
	}
	/* the generic setter on the wait node, with the value it has (4) */
	{
		struct hx_graph_node_params gp;
		test_wait_params wp;

		generic_params(&gp, false, &c.h, NULL, &wp, 4);
		cstep(opi, 27, gnset ? (int)gnset(w, &gp) : -1, -1);
	}
	/* a wait node for 100 (nobody signals it) destroyed before the
	 * instantiation: the exec must not wait for it */
	{
		hipGraphNode_t w2 = NULL;

		cstep(opi, 25, cnode_add(&w2, g, NULL, false, &c.h, 100), -1);
		if (w2)
			cstep(opi, 26, hipGraphDestroyNode(w2), -1);
	}
	e = hipGraphInstantiate(&x, g, NULL, NULL, 0);
	cstep(opi, 30, e, -1);
	if (e)
		goto out;
	cstep(opi, 31, cnode_set(x, w, false, &c.h, 6), -1);
	cstep(opi, 32, cnode_set(x, s, true, &c.h, 9), -1);
	cstep(opi, 33, cnode_set(x, s, true, &c.h, 0), -1);
	/* the exec's wait node through the generic exec setter, with the
	 * value it has there (6) */
	{
		struct hx_graph_node_params gp;
		test_wait_params wp;

		generic_params(&gp, false, &c.h, NULL, &wp, 6);
		cstep(opi, 42, gxnset ? (int)gxnset(x, w, &gp) : -1, -1);
	}
	/* the exec's wait node given two semaphores (instantiated with one),
	 * and a wait node of another graph: each refused, the exec unchanged */
	{
		hipExternalSemaphore_t two[2] = { c.h, c.h };
		test_wait_params wp2[2];
		struct hx_ext_sem_node_params np = { two, wp2, 2 };
		hipGraphNode_t w3 = NULL;
		hipGraph_t g3 = NULL;

		memset(wp2, 0, sizeof(wp2));
		wp2[0].params.fence.value = wp2[1].params.fence.value = 6;
		cstep(opi, 38, hipGraphExecExternalSemaphoresWaitNodeSetParams(x, w, &np), -1);
		if (hipGraphCreate(&g3, 0) == hipSuccess) {
			cstep(opi, 39, cnode_add(&w3, g3, NULL, false, &c.h, 6), -1);
			if (w3)
				cstep(opi, 41, cnode_set(x, w3, false, &c.h, 6), -1);
			hipGraphDestroy(g3);
		}
	}
	cnode_get(opi, 34, w, false, c.h);
	cnode_get(opi, 35, s, true, c.h);
	if (s2) {
		struct hx_graph_node_params gp;
		test_signal_params sp;

		generic_params(&gp, true, &c.h, &sp, NULL, 8);
		cstep(opi, 36, gxnset ? (int)gxnset(x, s2, &gp) : -1, -1);
		cnode_get(opi, 37, s2, true, c.h);
	}
	cpriv_helper_start(&c, 4, 6);
	e = hipGraphLaunch(x, c.q);
	cstep(opi, 40, e, -1);
	cpriv_finish(opi, &c);
	/* semaphore node calls on nodes that are none (docs/graphs.md): NULL,
	 * and an empty node of the runtime's own, in a graph and its exec:
	 * each refused (hipErrorInvalidValue) */
	{
		hipGraph_t g2 = NULL;
		hipGraphExec_t x2 = NULL;
		hipGraphNode_t en = NULL;

		cnode_get(opi, 44, NULL, true, c.h);
		if (hipGraphCreate(&g2, 0) == hipSuccess) {
			cstep(opi, 46, hipGraphAddEmptyNode(&en, g2, NULL, 0), -1);
			if (en) {
				cnode_get(opi, 47, en, true, c.h);
				cnode_get(opi, 48, en, false, c.h);
				cstep(opi, 49, cnode_set(NULL, en, true, &c.h, 3), -1);
				cstep(opi, 50, cnode_set(NULL, en, false, &c.h, 3), -1);
				if (hipGraphInstantiate(&x2, g2, NULL, NULL, 0) == hipSuccess) {
					cstep(opi, 51, cnode_set(x2, en, true, &c.h, 3), -1);
					cstep(opi, 52, cnode_set(x2, en, false, &c.h, 3), -1);
					hipGraphExecDestroy(x2);
				}
			}
			hipGraphDestroy(g2);
		}
	}
out:
	if (x)
		hipGraphExecDestroy(x);
	if (g)
		hipGraphDestroy(g);
	cpriv_close(opi, &c);
}

/* child: a graph C with a wait node (value 2) and a signal node (value 3)
 * behind it, embedded in graph P as a child-graph node; C is destroyed
 * (P holds its own copy); P cloned; the clone instantiated and launched:
 * at the helper's point 1 the signal has not run, and point 3 is there at
 * the end. */
static void op_child(int opi)
{
	struct cpriv c;
	hipGraph_t cg = NULL, p = NULL, p2 = NULL;
	hipGraphExec_t x = NULL;
	hipGraphNode_t w = NULL, s = NULL, cn = NULL;
	hipError_t e;

	if (!cpriv_open(opi, &c))
		return;
	if (hipGraphCreate(&cg, 0) || hipGraphCreate(&p, 0))
		die("hipGraphCreate");
	cstep(opi, 4, cnode_add(&w, cg, NULL, false, &c.h, 2), -1);
	cstep(opi, 5, cnode_add(&s, cg, w ? &w : NULL, true, &c.h, 3), -1);
	e = hipGraphAddChildGraphNode(&cn, p, NULL, 0, cg);
	cstep(opi, 50, e, -1);
	cstep(opi, 51, hipGraphDestroy(cg), -1);
	cg = NULL;
	e = hipGraphClone(&p2, p);
	cstep(opi, 52, e, -1);
	if (e)
		goto out;
	/* the original's child-graph node destroyed: its embedded copies go
	 * with it, the clone's stay (docs/graphs.md) */
	cstep(opi, 53, hipGraphDestroyNode(cn), -1);
	{
		struct {
			hipGraphNode_t err_node;
			unsigned long long flags;
			int result;
			hipStream_t upload;
		} ip = { NULL, 0, -1, NULL }; /* hipGraphInstantiateParams */

		e = hipGraphInstantiateWithParams(&x, p2, &ip);
		cstep(opi, 30, e, ip.result);
	}
	if (e)
		goto out;
	cpriv_helper_start(&c, 1, 2);
	cstep(opi, 40, hipGraphLaunch(x, c.q), -1);
	cpriv_finish(opi, &c);
out:
	if (x)
		hipGraphExecDestroy(x);
	if (p2)
		hipGraphDestroy(p2);
	if (p)
		hipGraphDestroy(p);
	if (cg)
		hipGraphDestroy(cg);
	cpriv_close(opi, &c);
}

/* poison: an exec updated by a call the runtime refuses part-way, then
 * a launch refused after its wait was queued, then updated with its own
 * graph (docs/graphs.md, "Updates").  Graph A: a wait node W (value 2), a
 * signal node S (value 3) behind it, and a child-graph node holding one
 * empty node; graph B the same with two empty nodes in the child.  The
 * update of A's exec with B is refused after the runtime paired W and S
 * (the child's nodes differ: result ParametersChanged, 5), so the shim
 * refuses the exec's launch (910) until an update succeeds.  Then, on
 * cpuhip, the launch's first hipEventRecord refused (the wait already
 * queued: answered 2), the exec updated with A again (the queued wait
 * carried over to the new records), and launched: at the helper's point
 * 1 the signal has not run, and point 3 is there at the end; step 36:
 * whether the shim said the queued wait stays pending (it must not: the
 * node kept its semaphore and value).  The carried steps need cpuhip's per-thread refusal and a wait that does
 * not block the launching thread (not the host-blocking path). */
static hipError_t poison_graph(hipGraph_t *g, int empties, struct cpriv *c, int opi, int base)
{
	hipGraphNode_t w = NULL, s = NULL, cn = NULL, en = NULL;
	hipGraph_t cg = NULL;
	hipError_t e;

	if (hipGraphCreate(g, 0) || hipGraphCreate(&cg, 0))
		die("hipGraphCreate");
	cstep(opi, base, cnode_add(&w, *g, NULL, false, &c->h, 2), -1);
	cstep(opi, base + 1, cnode_add(&s, *g, w ? &w : NULL, true, &c->h, 3), -1);
	for (int i = 0; i < empties; i++)
		if (hipGraphAddEmptyNode(&en, cg, NULL, 0))
			die("hipGraphAddEmptyNode");
	e = hipGraphAddChildGraphNode(&cn, *g, NULL, 0, cg);
	cstep(opi, base + 2, e, -1);
	hipGraphDestroy(cg);
	return e;
}

static void op_poison(int opi)
{
	typedef int fail_fn(int);
	fail_fn *fail = (fail_fn *)dlsym(RTLD_DEFAULT, "cpuhipTestFailOnThisThread");
	const char *hw = getenv("HIPEXTSEM_HOST_WAIT");
	struct cpriv c;
	hipGraph_t a = NULL, b = NULL;
	hipGraphExec_t x = NULL;
	hipGraphNode_t bad = NULL;
	int result = -1;
	int64_t l0;
	hipError_t e;

	if (!cpriv_open(opi, &c))
		return;
	if (poison_graph(&a, 1, &c, opi, 4) || poison_graph(&b, 2, &c, opi, 7))
		goto out;
	e = hipGraphInstantiate(&x, a, NULL, NULL, 0);
	cstep(opi, 30, e, -1);
	if (e)
		goto out;
	e = hipGraphExecUpdate(x, b, &bad, &result);
	cstep(opi, 31, e, result);
	cstep(opi, 32, hipGraphLaunch(x, c.q), -1);
	result = -1;
	e = hipGraphExecUpdate(x, a, &bad, &result);
	cstep(opi, 33, e, result);
	if (e)
		goto out;
	if (fail && !(hw && !strcmp(hw, "1"))) {
		int left;

		fail(RT_FAIL_EVENT_RECORD);
		e = hipGraphLaunch(x, c.q);
		left = fail(0);
		cstep(opi, 34, e, left & RT_FAIL_EVENT_RECORD ? 0 : 1);
		result = -1;
		l0 = shimlog_size();
		e = hipGraphExecUpdate(x, a, &bad, &result);
		cstep(opi, 35, e, result);
		/* the queued wait carried over, not left pending (a timeline's
		 * wait is not used up: only the shim's word tells) */
		{
			char who[64];

			snprintf(who, sizeof(who), "exec %p ", (void *)x);
			cstep(opi, 36, 0, shimlog_has(l0, "stays pending", who));
		}
		if (e)
			goto out;
	}
	cpriv_helper_start(&c, 1, 2);
	cstep(opi, 40, hipGraphLaunch(x, c.q), -1);
	cpriv_finish(opi, &c);
out:
	if (x)
		hipGraphExecDestroy(x);
	if (a)
		hipGraphDestroy(a);
	if (b)
		hipGraphDestroy(b);
	cpriv_close(opi, &c);
}

/* spt: the per-thread-default-stream entry points (looked up: the
 * runtime may not export them, the shim does): a capture begun and
 * ended with the _spt calls holding a wait (value 2) and a signal (value
 * 5), launched with hipGraphLaunch_spt: at the helper's point 1 the
 * signal has not run, and point 5 is there at the end. */
static void op_spt(int opi)
{
	struct cpriv c;
	typedef hipError_t begin_fn(hipStream_t, int);
	typedef hipError_t end_fn(hipStream_t, hipGraph_t *);
	typedef hipError_t launch_fn(hipGraphExec_t, hipStream_t);
	begin_fn *begin = (begin_fn *)dlsym(RTLD_DEFAULT, "hipStreamBeginCapture_spt");
	end_fn *end = (end_fn *)dlsym(RTLD_DEFAULT, "hipStreamEndCapture_spt");
	launch_fn *launch = (launch_fn *)dlsym(RTLD_DEFAULT, "hipGraphLaunch_spt");
	hipGraph_t g = NULL;
	hipGraphExec_t x = NULL;
	hipError_t e;

	if (!begin || !end || !launch)
		die("spt: the shim's _spt entry points are not found");
	if (!cpriv_open(opi, &c))
		return;
	e = begin(c.q, HX_CAPTURE_MODE_THREAD_LOCAL);
	cstep(opi, 60, e, -1);
	if (e == hipErrorNotSupported) { /* the runtime has no _spt capture calls */
		e = hipStreamBeginCapture(c.q, HX_CAPTURE_MODE_THREAD_LOCAL);
		cstep(opi, 64, e, -1);
		end = hipStreamEndCapture;
	}
	if (e)
		goto out;
	cstep(opi, 61, wait1(c.h, 2, c.q), -1);
	cstep(opi, 62, signal1(c.h, 5, c.q), -1);
	e = end(c.q, &g);
	cstep(opi, 63, e, -1);
	if (e || !g)
		goto out;
	/* hipStreamBeginCaptureToGraph (6.2+; the runtime may have none:
	 * hipErrorNotSupported): a capture into the graph just made, with
	 * nothing captured, ended at once: the graph stays what it was */
	{
		typedef hipError_t to_graph_fn(hipStream_t, hipGraph_t, const hipGraphNode_t *,
					       const void *, size_t, int);
		to_graph_fn *to_graph = (to_graph_fn *)dlsym(RTLD_DEFAULT,
							     "hipStreamBeginCaptureToGraph");
		hipGraph_t g2 = NULL;

		e = to_graph ? to_graph(c.q, g, NULL, NULL, 0, HX_CAPTURE_MODE_THREAD_LOCAL)
			     : hipErrorNotSupported;
		cstep(opi, 65, e, -1);
		if (!e) {
			e = hipStreamEndCapture(c.q, &g2);
			cstep(opi, 66, e, g2 == g);
		}
	}
	e = hipGraphInstantiateWithFlags(&x, g, 0);
	cstep(opi, 30, e, -1);
	if (e)
		goto out;
	cpriv_helper_start(&c, 1, 2);
	cstep(opi, 40, launch(x, c.q), -1);
	cpriv_finish(opi, &c);
out:
	if (x)
		hipGraphExecDestroy(x);
	if (g)
		hipGraphDestroy(g);
	cpriv_close(opi, &c);
}
#endif

/* lookup: a loader's lookups of the semaphore and graph calls, an
 * ordinary runtime call and a name nobody has, through hipGetProcAddress,
 * hipGetProcAddress_spt, hipGetDriverEntryPoint(_spt) (found with dlsym:
 * the runtime may have none) and dlsym / dlvsym of the runtime library's
 * own handle.  Logged: "L OP HOW NAME RC WHERE", WHERE the object the
 * pointer lies in: shim, rt (the runtime's library), null, other. */
static const char *const lookup_names[] = {
	"hipSignalExternalSemaphoresAsync",
	"hipWaitExternalSemaphoresAsync",
	"hipImportExternalSemaphore",
	"hipDestroyExternalSemaphore",
	"hipGraphAddExternalSemaphoresSignalNode",
	"hipGraphExternalSemaphoresWaitNodeGetParams",
	"hipGraphExecExternalSemaphoresSignalNodeSetParams",
	"hipGraphLaunch",
	"hipGraphLaunch_spt",
	"hipStreamBeginCapture_spt",
	"hipGraphAddChildGraphNode",
	"hipGetProcAddress",
	"hipStreamCreate",
	"hipExternalMemoryGetMappedMipmappedArray",
	"hipNoSuchCall",
};

static const char *where_is(const void *p)
{
	Dl_info info;

	if (!p)
		return "null";
	if (!dladdr(p, &info) || !info.dli_fname)
		return "other";
	if (strstr(info.dli_fname, "libextsem"))
		return "shim";
	if (strstr(info.dli_fname, "libamdhip64") || strstr(info.dli_fname, "cpuhip"))
		return "rt";
	return "other";
}

static void op_lookup(int opi, const struct op *o)
{
	typedef hipError_t gpa_fn(const char *, void **, int, uint64_t, void *);
	typedef hipError_t gdep_fn(const char *, void **, unsigned long long, int *);
	static const char *const soname[] = { "libamdhip64.so.6", "libamdhip64.so.5",
					      "libamdhip64.so.7", "libamdhip64.so" };
	bool dl = o->na > 0 && !strcmp(o->a[0], "dl");
	void *lib = NULL;

	for (unsigned i = 0; i < sizeof(soname) / sizeof(soname[0]) && !lib; i++)
		lib = dlopen(soname[i], RTLD_NOW | RTLD_NOLOAD);
	for (unsigned i = 0; i < sizeof(lookup_names) / sizeof(lookup_names[0]); i++) {
		const char *n = lookup_names[i];
		void *fn = NULL;
		int st = 0;
		hipError_t e;

		if (dl) {
			if (!lib)
				die("lookup: the runtime's library is not loaded under a known soname");
			fn = dlsym(lib, n);
			wlog("L %d dlsym %s 0 %s", opi, n, where_is(fn));
			fn = dlvsym(lib, n, "hip_5.3");
			wlog("L %d dlvsym53 %s 0 %s", opi, n, where_is(fn));
			fn = dlvsym(lib, n, "hip_4.3");
			wlog("L %d dlvsym43 %s 0 %s", opi, n, where_is(fn));
			continue;
		}
#if HX_TEST_ABI == 6
		hipDriverProcAddressQueryResult pst;

		e = hipGetProcAddress(n, &fn, 600, 0, &pst);
		wlog("L %d proc %s %d %s", opi, n, (int)e, where_is(e ? NULL : fn));
#endif
		const char *gn[] = { "hipGetProcAddress_spt", "hipGetDriverEntryPoint",
				     "hipGetDriverEntryPoint_spt" };
		for (unsigned k = 0; k < 3; k++) {
			void *g = dlsym(RTLD_DEFAULT, gn[k]);

			fn = NULL;
			if (!g) {
				wlog("L %d %s %s -1 none", opi, gn[k], n);
				continue;
			}
			e = k == 0 ? ((gpa_fn *)g)(n, &fn, 600, 0, &st)
				   : ((gdep_fn *)g)(n, &fn, 0, &st);
			wlog("L %d %s %s %d %s", opi, gn[k], n, (int)e, where_is(e ? NULL : fn));
		}
	}
	if (lib)
		dlclose(lib);
#if HX_TEST_ABI == 6
	/* the capability the shim reports (docs/interposition.md): 1 where the
	 * render node has timeline sync objects, as the test VM's has */
	if (!dl) {
		typedef hipError_t props_fn(struct hx_device_prop_r0600 *, int);
		props_fn *props = (props_fn *)dlsym(RTLD_DEFAULT, "hipGetDevicePropertiesR0600");
		struct hx_device_prop_r0600 *dp = calloc(1, sizeof(*dp));
		hipError_t e = props && dp ? props(dp, 0) : hipErrorNotSupported;

		wlog("L %d devprops timelineSemaphoreInteropSupported %d %d", opi, (int)e,
		     e ? -1 : dp->timelineSemaphoreInteropSupported);
		free(dp);
	}
#endif
}

/* The bad-input op: every malformed call of docs/semantics.md ("Errors"),
 * each logged as a step ("C OP STEP RC VALUE") for hxwork's model (CSTEPS
 * 'bad'): the import's NULL out or descriptor, fds that are not sync
 * objects, unsupported and unknown types; signal and wait with NULL
 * arrays, a NULL element, flags, a zero count, a handle never made or
 * destroyed, a timeline signal of 0, a destroyed stream; destroy of NULL
 * and twice.  A refused call has no effect: the op's timeline (signalled
 * by a refused two-semaphore signal whose second element is bad) shows
 * point 0 after it (step 30's value).  Both ABIs. */
static hipError_t bad_signal(hipExternalSemaphore_t *s, unsigned n, uint64_t v, unsigned flags,
			     hipStream_t st, bool wait, bool null_params)
{
	test_signal_params sp[2];
	test_wait_params wp[2];

	memset(sp, 0, sizeof(sp));
	memset(wp, 0, sizeof(wp));
	for (int i = 0; i < 2; i++) {
		sp[i].params.fence.value = wp[i].params.fence.value = v;
		sp[i].flags = wp[i].flags = flags;
	}
	if (wait)
		return hipWaitExternalSemaphoresAsync(
			s, null_params ? NULL : (const hipExternalSemaphoreWaitParams *)wp, n, st);
	return hipSignalExternalSemaphoresAsync(
		s, null_params ? NULL : (const hipExternalSemaphoreSignalParams *)sp, n, st);
}

static hipError_t bad_import(hipExternalSemaphore_t *out, int type, int fd, bool null_desc)
{
	test_desc d;

	memset(&d, 0, sizeof(d));
	d.type = type;
	d.handle.fd = fd;
	return hipImportExternalSemaphore(out, null_desc ? NULL :
					  (const hipExternalSemaphoreHandleDesc *)&d);
}

static void op_bad(int opi)
{
/* a step that may be refused, and whether the shim's log grew during it
 * (G OP STEP GREW: refusal-log, every refused call writes a line; another
 * thread's line may make it grow too, never the other way) */
#define BSTEP(step, call)                                                  \
	do {                                                               \
		int64_t l0_ = shimlog_size();                              \
		cstep(opi, (step), (call), -1);                            \
		wlog("G %d %d %d", opi, (int)(step), shimlog_size() > l0_); \
	} while (0)
	hipExternalSemaphore_t h = NULL, dead = NULL, pair[2], out = NULL, nul[1] = {NULL};
	hipStream_t q = NULL, gone = NULL;
	uint32_t so = 0, dso = 0, fso = 0;
	int p[2] = {-1, -1}, efd, sfd = -1, fd = -1;
	hipError_t e;

	if (drmSyncobjCreate(pdrm, 0, &so) || drmSyncobjHandleToFD(pdrm, so, &fd))
		die("bad op: sync object: %s", strerror(errno));
	e = bad_import(&h, HX_SEM_HANDLE_TIMELINE_FD, fd, false);
	cstep(opi, 1, e, -1);
	if (e) {
		close(fd);
		drmSyncobjDestroy(pdrm, so);
		return;
	}
	e = hipStreamCreateWithFlags(&q, hipStreamNonBlocking);
	cstep(opi, 2, e, -1);
	/* the import */
	BSTEP(3, bad_import(NULL, HX_SEM_HANDLE_OPAQUE_FD, fd, false));
	BSTEP(4, bad_import(&out, HX_SEM_HANDLE_OPAQUE_FD, fd, true));
	BSTEP(5, bad_import(&out, HX_SEM_HANDLE_OPAQUE_FD, -1, false));
	BSTEP(6, bad_import(&out, HX_SEM_HANDLE_TIMELINE_FD, 0, false));
	if (pipe2(p, O_CLOEXEC))
		die("bad op: pipe: %s", strerror(errno));
	BSTEP(7, bad_import(&out, HX_SEM_HANDLE_OPAQUE_FD, p[0], false));
	BSTEP(8, bad_import(&out, HX_SEM_HANDLE_TIMELINE_FD, p[1], false));
	efd = eventfd(0, EFD_CLOEXEC);
	BSTEP(9, bad_import(&out, HX_SEM_HANDLE_OPAQUE_FD, efd, false));
	BSTEP(10, bad_import(&out, 2 /* OpaqueWin32 */, fd, false));
	BSTEP(11, bad_import(&out, 6 /* NvSciSync */, fd, false));
	BSTEP(12, bad_import(&out, 77, fd, false));
	/* a sync_file given as a timeline (type 9): refused */
	if (!drmSyncobjCreate(pdrm, DRM_SYNCOBJ_CREATE_SIGNALED, &fso) &&
	    !drmSyncobjExportSyncFile(pdrm, fso, &sfd))
		BSTEP(13, bad_import(&out, HX_SEM_HANDLE_TIMELINE_FD, sfd, false));
	/* the device's own fd: not a sync object */
	BSTEP(14, bad_import(&out, HX_SEM_HANDLE_OPAQUE_FD, pdrm, false));
	/* signal and wait */
	for (int w = 0; w <= 1; w++) {
		int b = 15 + 10 * w;

		BSTEP(b, bad_signal(NULL, 1, 1, 0, q, w, false));
		BSTEP(b + 1, bad_signal(&h, 1, 1, 0, q, w, true));
		BSTEP(b + 2, bad_signal(&h, 0, 1, 0, q, w, false));
		BSTEP(b + 3, bad_signal(nul, 1, 1, 0, q, w, false));
		BSTEP(b + 4, bad_signal(&h, 1, 1, 1, q, w, false));
		pair[0] = h;
		pair[1] = (hipExternalSemaphore_t)bogus[59];
		BSTEP(b + 5, bad_signal(pair, 2, 1, 0, q, w, false));
		if (!dead) {
			dead = sem_import_new(pdrm, &dso, false);
			hipDestroyExternalSemaphore(dead);
		}
		pair[1] = dead;
		BSTEP(b + 6, bad_signal(pair, 2, 1, 0, q, w, false));
		if (!w)
			BSTEP(b + 7, bad_signal(&h, 1, 0, 0, q, w, false));
		/* a destroyed stream: cpuhip's check (the real runtimes may
		 * crash on a freed stream: not made there) */
		if (!getenv("HXWORK_START_RUNTIME")) {
			if (!gone && hipStreamCreateWithFlags(&gone, hipStreamNonBlocking) == hipSuccess)
				hipStreamDestroy(gone);
			if (gone)
				BSTEP(b + 8, bad_signal(&h, 1, 1, 0, gone, w, false));
		}
	}
	if (q)
		hipStreamSynchronize(q);
	/* nothing of the refused calls took effect */
	cstep(opi, 35, 0, (long long)query_so(so));
	BSTEP(36, hipDestroyExternalSemaphore(NULL));
	BSTEP(37, hipDestroyExternalSemaphore(h));
	BSTEP(38, hipDestroyExternalSemaphore(h));
	if (q)
		hipStreamDestroy(q);
	if (dso)
		drmSyncobjDestroy(pdrm, dso);
	if (fso)
		drmSyncobjDestroy(pdrm, fso);
	drmSyncobjDestroy(pdrm, so);
	for (int i = 0; i < 2; i++)
		close(p[i]);
	if (efd >= 0)
		close(efd);
	if (sfd >= 0)
		close(sfd);
}
#undef BSTEP

/* The environment without the variables starting with one of drop[],
 * plus `extra` (when not NULL); free() it. */
static char **env_without(const char *const *drop, size_t ndrop, char *extra)
{
	size_t ne = 0, k = 0;
	char **env;

	while (environ[ne])
		ne++;
	env = calloc(ne + 2, sizeof(*env));
	if (!env)
		die("out of memory");
	for (size_t j = 0; j < ne; j++) {
		bool keep = true;

		for (size_t d = 0; d < ndrop; d++)
			keep = keep && strncmp(environ[j], drop[d], strlen(drop[d]));
		if (keep)
			env[k++] = environ[j];
	}
	if (extra)
		env[k++] = extra;
	return env;
}

/* Runs exe with argv and env, its stdout on /dev/null (the driver's is
 * the runner's pipe, which a child outliving the driver would hold) and
 * its stderr read into out (NUL-terminated); answers its exit status (128
 * + the signal that ended it; -1: not started; -2: killed at the
 * deadline, `secs` from its start). */
static int spawn_read(const char *exe, char *const *argv, char *const *env, char *out,
		      size_t len, int secs)
{
	int64_t until = now_ns() + (int64_t)secs * 1000000000LL;
	posix_spawn_file_actions_t fa;
	size_t got = 0;
	int pfd[2], st = 0, ret, dn;
	bool ended = false;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK))
		die("pipe2");
	dn = open("/dev/null", O_WRONLY | O_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	if (dn >= 0)
		posix_spawn_file_actions_adddup2(&fa, dn, 1);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
	ret = posix_spawn(&pid, exe, &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (dn >= 0)
		close(dn);
	close(pfd[1]);
	/* Until the child ends (a fork op's child may hold the write end
	 * past it), reading what it writes; then what is left. */
	while (!ret) {
		struct pollfd pf = { pfd[0], POLLIN, 0 };
		ssize_t r = 0;

		if (!ended) {
			pid_t w = waitpid(pid, &st, WNOHANG);

			ended = w == pid || (w < 0 && errno != EINTR);
			if (!ended && now_ns() > until) {
				kill(pid, SIGKILL);
				while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
					;
				close(pfd[0]);
				out[got] = 0;
				return -2;
			}
		}
		if (got < len - 1)
			r = read(pfd[0], out + got, len - 1 - got);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (ended)
			break;
		if (r == 0) /* the end of its stderr, or `out` full: its exit */
			sleep_ms(20);
		else
			(void)poll(&pf, 1, 20);
	}
	out[got] = 0;
	close(pfd[0]);
	if (ret)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The selftest op: hipextsem-info --selftest (one round a check, both
 * signal modes) run beside the program, under its modes, against the same
 * runtime and shim (hxwork names them: HXWORK_INFO, HXWORK_INFO_RUNTIME,
 * HIPEXTSEM_LIBRARY), as a user runs it on a busy machine.  Spawned
 * without the driver's preload, log file, trace file and seeded noise (the
 * tool preloads the shim in its own children); step 1 is its exit status
 * (0: every check passed), -1 when it could not be started, -2 when it
 * did not end within 120 s (then killed). */
extern char **environ;

static void op_selftest(int opi)
{
	const char *info = getenv("HXWORK_INFO"), *rt = getenv("HXWORK_INFO_RUNTIME");
	static const char *const drop[] = { "LD_PRELOAD=", "HIPEXTSEM_LOG_FILE=",
					    "HIPEXTSEM_TRACE=", "CPUHIP_NOISE=",
					    "HXWORK_" };
	char *argv[] = { (char *)info, "--selftest", "--rounds", "1", "--runtime", (char *)rt, NULL };
	char **env;
	int64_t until;
	pid_t pid;
	int st = 0, fd;
	posix_spawn_file_actions_t fa;

	if (!info || !rt) {
		cstep(opi, 1, -1, -1);
		return;
	}
	/* A coverage run: the tool and its children write their counters
	 * before _exit (covdump_lib.c); the tool keeps this preload for the
	 * children it starts. */
	if (cov_dump && getenv("HXWORK_COV_PRELOAD")) {
		static char preload[4200];

		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", getenv("HXWORK_COV_PRELOAD"));
		env = env_without(drop, sizeof(drop) / sizeof(drop[0]), preload);
	} else {
		env = env_without(drop, sizeof(drop) / sizeof(drop[0]), NULL);
	}
	posix_spawn_file_actions_init(&fa);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		posix_spawn_file_actions_adddup2(&fa, fd, 1);
		posix_spawn_file_actions_adddup2(&fa, fd, 2);
	}
	if (posix_spawn(&pid, info, &fa, NULL, argv, env)) {
		cstep(opi, 1, -1, -1);
	} else {
		until = now_ns() + 120 * 1000000000LL;
		while (waitpid(pid, &st, WNOHANG) == 0) {
			if (now_ns() > until) {
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
				st = -1;
				break;
			}
			sleep_ms(20);
		}
		cstep(opi, 1, st == -1 ? -2 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
		      -1);
	}
	posix_spawn_file_actions_destroy(&fa);
	if (fd >= 0)
		close(fd);
	free(env);
}

/* nodev: the shim of a process whose render node cannot be used
 * (README.md, "Environment variables": HIPEXTSEM_RENDER_NODE): the driver started again
 * (--nodev NODE OWN) with HIPEXTSEM_RENDER_NODE naming a device that is
 * not a DRM node (/dev/null), a path that does not exist, and, where the
 * machine has one, a render node whose driver has no sync objects (vgem).
 * The child imports a timeline and then a binary semaphore made on the
 * usable node OWN (so a shim that ignored the setting would take them):
 * each import must answer hipErrorNotSupported, and its log must name
 * the setting.  Step 10 + k: the child's exit status (0: both refused
 * with 801), and whether its log named HIPEXTSEM_RENDER_NODE=NODE. */
static int nodev_main(const char *own)
{
	hipExternalSemaphore_t s = NULL;
	uint32_t h[2];
	int drm = open(own, O_RDWR | O_CLOEXEC), fd[2] = { -1, -1 };

	if (drm < 0)
		return 2;
	for (int i = 0; i < 2; i++)
		if (drmSyncobjCreate(drm, 0, &h[i]) || drmSyncobjHandleToFD(drm, h[i], &fd[i]))
			return 3;
	if (bad_import(&s, HX_SEM_HANDLE_TIMELINE_FD, fd[0], false) != hipErrorNotSupported)
		return 4;
	if (bad_import(&s, HX_SEM_HANDLE_OPAQUE_FD, fd[1], false) != hipErrorNotSupported)
		return 5;
	return 0;
}

/* The render node of the DRM driver named `name`, or NULL. */
static const char *node_of_driver(const char *name, char *buf, size_t len)
{
	for (int m = 128; m < 136; m++) {
		drmVersionPtr v;
		bool is;
		int fd;

		snprintf(buf, len, "/dev/dri/renderD%d", m);
		fd = open(buf, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		is = v && v->name && !strcmp(v->name, name);
		drmFreeVersion(v);
		close(fd);
		if (is)
			return buf;
	}
	return NULL;
}

static void op_nodev(int opi)
{
	static const char *const drop[] = { "HIPEXTSEM_LOG_FILE=", "HIPEXTSEM_TRACE=",
					    "HIPEXTSEM_RENDER_NODE=", "HIPEXTSEM_DEBUG=",
					    "HXWORK_", "CPUHIP_NOISE=" };
	const char *own = render_node_path(); /* the node pdrm is on */
	char vgem[64], setting[300], exe[4096], out[8192];
	const char *nodes[3] = { "/dev/null", "/hxwork/no/such/node",
				 node_of_driver("vgem", vgem, sizeof(vgem)) };
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		die("readlink /proc/self/exe");
	exe[n] = 0;
	for (int i = 0; i < 3 && nodes[i]; i++) {
		char *argv[] = { exe, "--nodev", (char *)own, NULL };
		char **env;
		int st;

		snprintf(setting, sizeof(setting), "HIPEXTSEM_RENDER_NODE=%s", nodes[i]);
		env = env_without(drop, sizeof(drop) / sizeof(drop[0]), setting);
		st = spawn_read(exe, argv, env, out, sizeof(out), SPAWN_BOUND_S);
		free(env);
		cstep(opi, 10 + i, st, st < 0 ? -1 : strstr(out, setting) != NULL);
	}
}

/* load: the shim in a program that is not linked against the runtime
 * (load.c, hxwork-load, found through HXWORK_LOAD): the runtime
 * dlopen()ed with RTLD_LOCAL (step 20), a copy of it under a name that
 * tells no ABI (21: the soname must), and no runtime at all (22: the
 * import refused, the log saying why).  Each step: the program's exit
 * status (0: every answer as expected), and for 22 whether its log said
 * that the runtime is not loaded. */
static void op_load(int opi)
{
	static const char *const drop[] = { "HIPEXTSEM_LOG_FILE=", "HIPEXTSEM_TRACE=",
					    "HIPEXTSEM_DEBUG=", "HXWORK_", "CPUHIP_NOISE=" };
	static const char *const modes[] = { "local", "renamed", "none" };
	const char *exe = getenv("HXWORK_LOAD"), *rt = getenv("HXWORK_INFO_RUNTIME");
	const char *node = render_node_path();
	char out[8192];
	char **env;

	if (!exe || !rt) {
		cstep(opi, 20, -1, -1);
		return;
	}
	env = env_without(drop, sizeof(drop) / sizeof(drop[0]), NULL);
	for (int i = 0; i < 3; i++) {
		char *argv[] = { (char *)exe, (char *)modes[i], (char *)node, (char *)rt, NULL };
		int st = spawn_read(exe, argv, env, out, sizeof(out), SPAWN_BOUND_S);

		cstep(opi, 20 + i, st,
		      i == 2 && st >= 0 ? strstr(out, "libamdhip64 is not loaded") != NULL : -1);
	}
	free(env);
}

static void op_cov(int opi, const struct op *o)
{
	unsigned long pre = next_seq();
	int64_t l0 = shimlog_size();

#if HX_TEST_ABI == 6
	if (!strcmp(o->name, "nparams"))
		op_nparams(opi);
	else if (!strcmp(o->name, "child"))
		op_child(opi);
	else if (!strcmp(o->name, "poison"))
		op_poison(opi);
	else if (!strcmp(o->name, "spt"))
		op_spt(opi);
	else
#endif
	if (!strcmp(o->name, "lookup"))
		op_lookup(opi, o);
	else if (!strcmp(o->name, "bad"))
		op_bad(opi);
	else if (!strcmp(o->name, "selftest"))
		op_selftest(opi);
	else if (!strcmp(o->name, "nodev"))
		op_nodev(opi);
	else if (!strcmp(o->name, "load"))
		op_load(opi);
	else
		wlog("S %d abi5", opi);
	rlog(opi, hipSuccess, pre, -1, -1, l0);
}

static void run_op(int opi, int me)
{
	const struct op *o = &ops[opi];

	/* A stream another thread has not created yet (its thread is behind,
	 * blocked in an earlier op): the op is skipped and logged as such (K),
	 * as an application would not use a stream before it exists.  It has
	 * no result line, so the model counts nothing for it. */
	for (int i = 0; i < o->na; i++) {
		if (o->a[i][0] == 'q' && o->a[i][1] >= '0' && o->a[i][1] <= '9') {
			int q = atoi(o->a[i] + 1);

			if (q >= 0 && q < MAXQ && !atomic_load(&q_state[q])) {
				wlog("K %d %s", opi, o->a[i]);
				return;
			}
		}
	}
	/* Likewise a semaphore whose import, earlier in the program, has not
	 * returned yet (its thread is behind: on a real runtime the first call
	 * starts the runtime, seconds under TCG).  A semaphore the program
	 * never imports stays a handle the shim never made. */
	int sa = -1;
	if (!strcmp(o->name, "signal") || !strcmp(o->name, "wait") || !strcmp(o->name, "destroy"))
		sa = 0;
	else if (!strcmp(o->name, "gnsig") || !strcmp(o->name, "gnwait"))
		sa = 1;
	if (sa >= 0 && sa < o->na) {
		int s = atoi(o->a[sa]);

		if (s >= 0 && s < MAXSEM && !atomic_load(&sem_state[s])) {
			for (int j = 0; j < opi; j++) {
				if (!strcmp(ops[j].name, "import") && ops[j].na > 0 &&
				    atoi(ops[j].a[0]) == s) {
					wlog("K %d s%d", opi, s);
					return;
				}
			}
		}
	}
	if (!strcmp(o->name, "import"))
		op_import(opi, o);
	else if (!strcmp(o->name, "signal"))
		op_sigwait(opi, o, true);
	else if (!strcmp(o->name, "wait"))
		op_sigwait(opi, o, false);
	else if (!strcmp(o->name, "destroy"))
		op_destroy(opi, o);
	else if (!strcmp(o->name, "sleep"))
		sleep_ms((unsigned)num(o, 0));
	else if (!strcmp(o->name, "fork"))
		op_fork(opi, o);
	else if (!strcmp(o->name, "dlopen"))
		op_dlopen(opi, o);
	else if (!strcmp(o->name, "nparams") || !strcmp(o->name, "child") ||
		 !strcmp(o->name, "poison") || !strcmp(o->name, "spt") || !strcmp(o->name, "lookup") ||
		 !strcmp(o->name, "bad") || !strcmp(o->name, "selftest") ||
		 !strcmp(o->name, "nodev") || !strcmp(o->name, "load"))
		op_cov(opi, o);
	else if (!strcmp(o->name, "loop"))
		op_loop(opi, o);
	else if (!strcmp(o->name, "atexit"))
		op_atexit(opi, o);
	else if (!strcmp(o->name, "fan"))
		op_fan(opi, o);
	else if (o->name[0] == 'g')
		op_graph(opi, o);
	else if (o->name[0] == 'p')
		op_producer(opi, o);
	else
		op_stream(opi, o, me);
}

/* ---- turns ---------------------------------------------------------- */

/* Op p is out of the way of the ops after it: it returned or has run for a
 * turn, or it has not started because its thread is blocked in an earlier
 * op for a turn (it will run late), and the same holds for the op before. */
static bool passed_locked(int p, int64_t now)
{
	for (; p >= 0; p--) {
		int t = ops[p].thread;

		if (started[p])
			return finished[p] || now - start_ns[p] > TURN_MS * 1000000LL;
		if (!(busy_op[t] >= 0 && now - start_ns[busy_op[t]] > TURN_MS * 1000000LL))
			return false;
	}
	return true;
}

static bool may_start_locked(int i, int64_t now)
{
	return passed_locked(i - 1, now);
}

static void turn_wait(int i)
{
	bool late = false;

	pthread_mutex_lock(&tlock);
	for (;;) {
		int64_t now = now_ns();
		if (may_start_locked(i, now))
			break;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&tcond, &tlock, &ts);
	}
	late = i > 0 && !finished[i - 1];
	released[i] = started[i] = true;
	start_ns[i] = now_ns();
	busy_op[ops[i].thread] = i;
	pthread_cond_broadcast(&tcond);
	pthread_mutex_unlock(&tlock);
	if (late)
		wlog("LATE %d", i);
}

static void turn_done(int i)
{
	pthread_mutex_lock(&tlock);
	finished[i] = true;
	busy_op[ops[i].thread] = -1;
	pthread_cond_broadcast(&tcond);
	pthread_mutex_unlock(&tlock);
}

static bool all_released(void)
{
	bool r;
	pthread_mutex_lock(&tlock);
	r = nops == 0 || released[nops - 1] || passed_locked(nops - 1, now_ns());
	pthread_mutex_unlock(&tlock);
	return r;
}

/* The process is about to end: no fork op starts after this, and one that
 * has started has reaped its child (bounded by the child's alarm), so that
 * no child outlives the run. */
static void forks_close(void)
{
	pthread_mutex_lock(&tlock);
	forks_closed = true;
	for (;;) {
		bool busy = false;

		for (int i = 0; i < nops; i++)
			if (started[i] && !finished[i] &&
			    (!strcmp(ops[i].name, "fork") || !strcmp(ops[i].name, "dlopen")))
				busy = true;
		if (!busy)
			break;
		pthread_cond_wait(&tcond, &tlock);
	}
	pthread_mutex_unlock(&tlock);
}

/* Nothing can start any more without the drain: every op not started
 * belongs to a thread blocked in an earlier op for longer than a turn (a
 * stream destroy waiting for a wait only the drain satisfies). */
static bool stalled(void)
{
	int64_t now = now_ns();
	bool r = true, any = false;

	pthread_mutex_lock(&tlock);
	for (int i = 0; i < nops && r; i++) {
		int t = ops[i].thread;
		if (started[i])
			continue;
		any = true;
		r = busy_op[t] >= 0 && now - start_ns[busy_op[t]] > 2 * TURN_MS * 1000000LL;
	}
	pthread_mutex_unlock(&tlock);
	return any && r;
}

/* ---- threads -------------------------------------------------------- */

static void end_own_captures(int me)
{
	for (int q = 0; q < MAXQ; q++)
		if (q_capthread[q] == me && atomic_load(&q_state[q]) == 1) {
			hipGraph_t g = NULL;
			int cs = capture_status(qs[q]);
			if (cs == HX_CAPTURE_STATUS_NONE || cs < 0)
				continue;
			if (hipStreamEndCapture(qs[q], &g) == hipSuccess && g)
				hipGraphDestroy(g);
			/* an invalidated Relaxed capture of another thread's:
			 * anyone may end it; nothing else to do */
		}
}

static atomic_int tended[MAXT + 2]; /* 1 ended by a tend op, 2 joined */
static atomic_bool snap_stop;
static pthread_t snap_thread;
static void join_snap_thread(void);
static pthread_t th[MAXT + 2];

static void *thread_main(void *arg)
{
	int me = (int)(intptr_t)arg;

	for (int i = 0; i < nops; i++) {
		if (ops[i].thread != me)
			continue;
		turn_wait(i);
		if (!strcmp(ops[i].name, "end")) {
			turn_done(i);
			break;
		}
		if (!strcmp(ops[i].name, "exit")) {
			/* a worker ends the process with whatever is pending */
			forks_close();
			atomic_store(&faults_on, false);
			atomic_store(&exiting, true);
			{
				char sn[400];

				snap(sn, sizeof(sn));
				wlog("X exit%s", sn);
			}
			/* main is not coming back: joined here */
			join_snap_thread();
			exit(0);
		}
		if (!strcmp(ops[i].name, "tend") && me >= 1 && me <= nworkers) {
			/* the worker ends here (its last op): the runtime's
			 * teardown of its hipStreamPerThread runs in its exit;
			 * the snapshot thread joins it and logs TE */
			unsigned long pre = next_seq();

			wlog("R %d 0 %lu -1 -1 0", i, pre);
			end_own_captures(me);
			atomic_store(&tended[me], 1);
			turn_done(i);
			return NULL;
		}
		cur_op = i;
		run_op(i, me);
		thread_called = true;
		cur_op = -1;
		turn_done(i);
	}
	if (me >= 1 && me <= nworkers) {
		while (!atomic_load(&cleanup_go))
			sleep_ms(5);
		end_own_captures(me);
	}
	return NULL;
}

/* The producer: its ops, then (drain) signals everything until told to
 * stop, so that every wait the program made can complete. */
static hipStream_t drain_stream; /* HIP signals of sync_file semaphores at the drain */

static void *producer_main(void *arg)
{
	thread_main(arg);
	while (!all_released() && !stalled() && !atomic_load(&producer_stop))
		sleep_ms(5);
	if (drain_mode && !atomic_load(&producer_stop)) {
		/* Settled: no marker ran for SETTLE_MS (at most 3 s); what the
		 * program reached without the drain (hxwork's differential
		 * check compares it across the modes). */
		char sn[400];
		int64_t until = now_ns() + 3000000000LL;
		int m0;

		do {
			m0 = atomic_load(&marks_done);
			sleep_ms(SETTLE_MS);
		} while (m0 != atomic_load(&marks_done) && now_ns() < until);
		snap(sn, sizeof(sn));
		wlog("D settled%s", sn);
		atomic_store(&faults_on, false);
		wlog("D drain");
		atomic_store(&drain_on, true);
	}
	while (!atomic_load(&producer_stop)) {
		if (atomic_load(&drain_on)) {
			for (int s = 0; s < MAXSEM; s++) {
				/* a slot an op is importing now (a worker still
				 * at its ops when the program settled): its kind
				 * and handle are read once published */
				if (!atomic_load_explicit(&sem_pub[s], memory_order_acquire))
					continue;
				uint32_t h = sem_so[s];
				if (sem_kind[s] == K_SYNC && atomic_load(&sem_state[s]) == 1)
					(void)signal1(sem[s], 0, drain_stream);
				if (!atomic_load(&sem_state[s]) || !h)
					continue;
				if (sem_kind[s] == K_BIN) {
					drmSyncobjSignal(pdrm, &h, 1);
				} else {
					uint64_t p = 1ULL << 40, cur = query_so(h);
					if (cur == (uint64_t)-1 || cur < p)
						drmSyncobjTimelineSignal(pdrm, &h, &p, 1);
				}
			}
		}
		sleep_ms(10);
	}
	return NULL;
}

/* Every SNAP_MS a snapshot (SN), for the model's liveness bounds, until
 * the drain or the process's end. */
#define SNAP_MS 50
static void *snap_main(void *arg)
{
	char sn[400];

	(void)arg;
	for (;;) {
		bool more = !atomic_load(&exiting) && !atomic_load(&drain_on) &&
			    !atomic_load(&producer_stop);

		for (int t = 1; t <= nworkers; t++)
			if (atomic_load(&tended[t]) == 1 && !pthread_tryjoin_np(th[t], NULL)) {
				atomic_store(&tended[t], 2);
				snap(sn, sizeof(sn));
				wlog("TE %d%s", t, sn);
			}
		if (atomic_load(&snap_stop))
			break;
		if (more) {
			snap(sn, sizeof(sn));
			wlog("SN%s", sn);
		}
		if (atomic_load(&exiting))
			break;
		sleep_ms(SNAP_MS);
	}
	return NULL;
}

/* Joins the snapshot thread (it stops on `exiting` or `snap_stop`).  The
 * workers that ended (tend) are not: a worker's end waits for the waits
 * pending on its hipStreamPerThread, which a returning program may have
 * left unsignaled (docs/streams.md). */
static void join_snap_thread(void)
{
	pthread_join(snap_thread, NULL);
}

/* ---- the program ---------------------------------------------------- */

static void parse(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	int ln = 0;

	if (!f)
		die("cannot open %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *save, *tok, *c = strchr(line, '#');
		struct op o;

		ln++;
		if (c)
			*c = '\0';
		memset(&o, 0, sizeof(o));
		o.line = ln;
		tok = strtok_r(line, " \t\r\n", &save);
		if (!tok)
			continue;
		if (!strcmp(tok, "noise") || !strcmp(tok, "mode") || !strcmp(tok, "faults"))
			continue; /* the runner's (CPUHIP_NOISE, the environment, HXWORK_FAULTS) */
		if (!strcmp(tok, "threads")) {
			tok = strtok_r(NULL, " \t\r\n", &save);
			nworkers = tok ? atoi(tok) : 0;
			if (nworkers < 0 || nworkers > MAXT - 1)
				die("line %d: threads 0..%d", ln, MAXT - 1);
			continue;
		}
		if (tok[0] == 'P' && !tok[1])
			o.thread = -2; /* fixed up below */
		else if (tok[0] == 'T')
			o.thread = atoi(tok + 1);
		else
			die("line %d: thread %s is not Tn or P", ln, tok);
		tok = strtok_r(NULL, " \t\r\n", &save);
		if (!tok)
			die("line %d: no op", ln);
		snprintf(o.name, sizeof(o.name), "%s", tok);
		while ((tok = strtok_r(NULL, " \t\r\n", &save)) && o.na < 4)
			snprintf(o.a[o.na++], sizeof(o.a[0]), "%s", tok);
		if (nops == MAXOPS)
			die("too many ops");
		ops[nops++] = o;
	}
	fclose(f);
	for (int i = 0; i < nops; i++) {
		if (ops[i].thread == -2)
			ops[i].thread = nworkers + 1;
		else if (ops[i].thread < 0 || ops[i].thread > nworkers)
			die("line %d: thread T%d but threads %d", ops[i].line, ops[i].thread,
			    nworkers);
	}
	for (int i = 0; i < nops; i++)
		for (int j = i + 1; j < nops && !strcmp(ops[i].name, "tend"); j++)
			if (ops[j].thread == ops[i].thread)
				die("line %d: an op of T%d after its tend", ops[j].line, ops[i].thread);
	for (int i = 0; i < nops; i++)
		if (!strcmp(ops[i].name, "tend") && (ops[i].thread < 1 || ops[i].thread > nworkers))
			die("line %d: tend is a worker's", ops[i].line);
	for (int i = 0; i + 1 < nops; i++)
		if (!strcmp(ops[i].name, "end") || !strcmp(ops[i].name, "exit"))
			die("line %d: only the last op may be an end or an exit", ops[i].line);
	if (nops && !strcmp(ops[nops - 1].name, "exit") && ops[nops - 1].thread >= 1 &&
	    ops[nops - 1].thread <= nworkers)
		return;
	if (!nops || strcmp(ops[nops - 1].name, "end") || ops[nops - 1].thread != 0)
		die("the last op must be \"T0 end drain|return\" or a worker's \"Tn exit\"");
}

/* A throw-away thread's import, signal, wait and destroy, so that the
 * shim's lasting descriptors (render node, waiter) exist before the
 * baseline is counted, without the main thread calling the shim. */
static void *warmup_main(void *arg)
{
	hipStream_t st;
	hipExternalSemaphore_t s = NULL;
	uint32_t h;

	(void)arg;
	if (hipStreamCreate(&st))
		die("warm-up: hipStreamCreate");
	s = sem_import_new(pdrm, &h, false);
	if (signal1(s, 0, st) || wait1(s, 0, st) || hipStreamSynchronize(st))
		die("warm-up: signal/wait/synchronize");
	if (hipDestroyExternalSemaphore(s) || hipStreamDestroy(st))
		die("warm-up: destroy");
	drmSyncobjDestroy(pdrm, h);
	if (hipStreamCreateWithFlags(&drain_stream, hipStreamNonBlocking))
		die("warm-up: hipStreamCreateWithFlags");
	return NULL;
}

/* HXWORK_START_RUNTIME=1 (hxwork's real-runtime profiles): the runtime is
 * started on a throw-away thread before the program, with no call of the
 * shim.  AMD's real 5.2.3 dies (SIGSEGV) when the process exits while
 * another thread is still inside the runtime's first call, with or
 * without the shim (threads 1 / T1 touch pts / T0 end return, 3 of 3 runs
 * on the fake device): the runtime's own limit, not one for the model. */
static void *start_runtime_main(void *arg)
{
	hipStream_t st;

	(void)arg;
	if (hipStreamCreate(&st) || hipStreamDestroy(st))
		die("runtime start: hipStreamCreate/hipStreamDestroy");
	return NULL;
}

struct hx_stats_view {
	unsigned live_sems, pending_waits, pending_signals, slots_allocated;
};

static int settle_stats(struct hx_stats_view *out)
{
	void (*get)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "hipextsemGetStats");
	int64_t until = now_ns() + 3000000000LL;

	if (!get)
		return -1;
	do {
		get(out);
		if (!out->live_sems && !out->pending_waits && !out->pending_signals)
			return 0;
		sleep_ms(20);
	} while (now_ns() < until);
	return 1;
}

int main(int argc, char **argv)
{
	pthread_t wt;
	bool drain;
	int fds0, fds1;

	if (argc == 3 && !strcmp(argv[1], "--nodev"))
		return nodev_main(argv[2]);
	if (argc != 3) {
		fprintf(stderr, "usage: %s PROGRAM LOG\n", argv[0]);
		return 2;
	}
	logfd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0)
		die("cannot open the log %s: %s", argv[2], strerror(errno));
	shimlog = getenv("HIPEXTSEM_LOG_FILE");
	next_init();
	driver_pid = getpid();
	*(void **)&work_delay = dlsym(RTLD_DEFAULT, "cpuhipTestEnqueueDelay");
	parse(argv[1]);
	drain = !strcmp(ops[nops - 1].name, "end") && ops[nops - 1].na > 0 &&
		!strcmp(ops[nops - 1].a[0], "drain");
	drain_mode = drain;
	pdrm = drm_open();
	if (getenv("HXWORK_WATCH_FD"))
		watch_fd = atoi(getenv("HXWORK_WATCH_FD"));
	t_start = now_ns();
	faults_setup();
	cov_setup();
	for (int s = 0; s < MAXSEM; s++)
		snprintf(bogus[s], sizeof(bogus[s]), "not a semaphore %d", s);

	if (drain) {
		pthread_create(&wt, NULL, warmup_main, NULL);
		pthread_join(wt, NULL);
	} else if (getenv("HXWORK_START_RUNTIME") && !strcmp(getenv("HXWORK_START_RUNTIME"), "1")) {
		pthread_create(&wt, NULL, start_runtime_main, NULL);
		pthread_join(wt, NULL);
	}
	fds0 = count_fds();
	wlog("D start fds %d workers %d ops %d", fds0, nworkers, nops);
	atomic_store(&mutant_on, true);
	if (fault_permille)
		atomic_store(&faults_on, true);

	for (int t = 1; t <= nworkers + 1; t++)
		if (pthread_create(&th[t], NULL, t == nworkers + 1 ? producer_main : thread_main,
				   (void *)(intptr_t)t))
			die("pthread_create");
	if (pthread_create(&snap_thread, NULL, snap_main, NULL))
		die("pthread_create");
	thread_main((void *)(intptr_t)0);
	if (!strcmp(ops[nops - 1].name, "exit")) {
		/* T0's ops have run; a worker's exit ends the process */
		for (;;)
			pause();
	}
	/* T0's "end" has run (the last op): everything was released. */
	(void)all_released();
	if (!drain) {
		forks_close();
		atomic_store(&faults_on, false);
		atomic_store(&exiting, true);
		{
			char sn[400];

			snap(sn, sizeof(sn));
			wlog("X return%s", sn);
		}
		join_snap_thread();
		return 0; /* with whatever is pending: docs/streams.md, exit */
	}

	/* drain: the producer signals everything; every marker must run. */
	while (!atomic_load(&drain_on))
		sleep_ms(5);
	{
		int64_t until = now_ns() + 10000000000LL;
		while (now_ns() < until) {
			bool idle = true;
			pthread_mutex_lock(&tlock);
			for (int t = 0; t <= nworkers + 1; t++)
				if (busy_op[t] >= 0)
					idle = false;
			for (int i = 0; i < nops; i++)
				if (!finished[i])
					idle = false;
			pthread_mutex_unlock(&tlock);
			if (idle && atomic_load(&marks_done) >= atomic_load(&marks_expected))
				break;
			sleep_ms(10);
		}
	}
	wlog("D drained marks %d/%d", atomic_load(&marks_done), atomic_load(&marks_expected));
	for (int i = 0; i < nops; i++)
		if (!finished[i])
			wlog("D stuck %d", i);
	forks_close();
	atomic_store(&cleanup_go, true);
	/* the snapshot thread ends here, once every tended worker is joined
	 * (within 10 s: a thread whose end does not come is logged) */
	for (int64_t until = now_ns() + 10000000000LL;;) {
		bool left = false;

		for (int t = 1; t <= nworkers; t++)
			left |= atomic_load(&tended[t]) == 1;
		if (!left)
			break;
		if (now_ns() > until) {
			for (int t = 1; t <= nworkers; t++)
				if (atomic_load(&tended[t]) == 1)
					wlog("D thread-end-stuck %d", t);
			break;
		}
		sleep_ms(5);
	}
	atomic_store(&snap_stop, true);
	join_snap_thread();
	for (int t = 1; t <= nworkers; t++)
		if (!atomic_load(&tended[t]))
			pthread_join(th[t], NULL);
	end_own_captures(0);
	for (int x = 0; x < MAXG; x++)
		if (atomic_load(&x_state[x]) == 1)
			hipGraphExecDestroy(execs[x]);
	for (int g = 0; g < MAXG; g++)
		if (atomic_load(&g_state[g]) == 1)
			hipGraphDestroy(graphs[g]);
	if (hipDeviceSynchronize() != hipSuccess)
		wlog("D devsync-failed");
	wlog("D synced marks %d/%d", atomic_load(&marks_done), atomic_load(&marks_expected));
	atomic_store(&drain_on, false);
	sleep_ms(20); /* the producer's round in progress */
	for (int s = 0; s < MAXSEM; s++)
		if (atomic_load(&sem_state[s]) == 1) {
			hipError_t e = hipDestroyExternalSemaphore(sem[s]);
			if (e != hipSuccess)
				wlog("D destroy-failed %d %d", s, (int)e);
		}
	for (int q = 0; q < MAXQ; q++)
		if (atomic_load(&q_state[q]) == 1)
			hipStreamDestroy(qs[q]);
	fan_cleanup();
	atomic_store(&producer_stop, true);
	pthread_join(th[nworkers + 1], NULL);
	hipStreamSynchronize(drain_stream);
	hipStreamDestroy(drain_stream);
	for (int s = 0; s < MAXSEM; s++)
		if (sem_so[s])
			drmSyncobjDestroy(pdrm, sem_so[s]);
	{
		struct hx_stats_view st = { 0 };
		int r = settle_stats(&st);
		wlog("D stats %d live %u waits %u signals %u", r, st.live_sems, st.pending_waits,
		     st.pending_signals);
	}
	fds1 = count_fds();
	wlog("D fds %d %d", fds0, fds1);
	wlog("D end");
	return 0;
}
