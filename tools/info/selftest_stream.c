/* SPDX-License-Identifier: MIT */
/*
 * What the self-test's checks and measurements share (selftest_child.h):
 * the state, result lines to the parent, the stream's markers and gates,
 * the semaphore calls in the runtime's parameter layout, the host function
 * the shim's signal uses on this runtime, a syncobj imported through the
 * shim, and the thread that enqueues when the checks run on
 * hipStreamPerThread.  Calls come here from selftest_child.c and selftest_measure.c
 * and never go back.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "selftest.h"
#include "selftest_child.h"

struct st_state hx_st;

/* One line: the type and its fields, tab-separated; tabs and newlines in a
 * field become spaces.  A line is written with one write(), so the parent
 * never sees half of one (pipe writes up to PIPE_BUF are atomic). */
void st_record(const char *type, int n, ...)
{
	char buf[2048];
	size_t len = 0;
	va_list ap;

	for (const char *p = type; *p && len < sizeof(buf) - 2; p++)
		buf[len++] = *p;
	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		const char *f = va_arg(ap, const char *);
		if (len < sizeof(buf) - 2)
			buf[len++] = '\t';
		for (; *f && len < sizeof(buf) - 2; f++)
			buf[len++] = *f == '\t' || *f == '\n' ? ' ' : *f;
	}
	va_end(ap);
	buf[len++] = '\n';
	if (write(hx_st.out, buf, len) < 0)
		_exit(1); /* the parent is gone: nobody to report to */
}

bool st_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool st_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(hx_st.why, sizeof(hx_st.why), fmt, ap);
	va_end(ap);
	return false;
}

bool st_timeout_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool st_timeout_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(hx_st.why, sizeof(hx_st.why), fmt, ap);
	va_end(ap);
	hx_st.timed_out = true;
	return false;
}

const char *st_ename(hipError_t e)
{
	static __thread char buf[64];
	const char *n;

	if (e == ST_NO_ANSWER)
		return "nothing: the thread that enqueues on hipStreamPerThread did not come back "
		       "in time";
	n = hx_st.GetErrorName ? hx_st.GetErrorName(e) : NULL;
	snprintf(buf, sizeof(buf), "%d %s", (int)e, n ? n : "");
	return buf;
}

double st_tsec(void)
{
	return (double)hx_st.timeout_ns / 1e9;
}

void st_spin_pause(void)
{
	sched_yield();
}

/* Waits until the stream wrote marker >= v; false at the check's deadline. */
bool st_marker_reaches(uint64_t v)
{
	while (__atomic_load_n(&hx_st.mem[M_MARKER], __ATOMIC_ACQUIRE) < v) {
		if (hx_now_ns() > hx_st.deadline)
			return false;
		st_spin_pause();
	}
	return true;
}

/* st_put_marker and st_put_gate: see "one thread for hipStreamPerThread". */

void st_open_gate(uint64_t v)
{
	__atomic_store_n(&hx_st.mem[M_GATE], v, __ATOMIC_RELEASE);
}

bool st_stream_idle(void)
{
	/* Everything queued so far has passed; a stuck stream is a timeout. */
	uint64_t m = ++hx_st.marker;

	if (st_put_marker(m) != hipSuccess)
		return st_fail("hipStreamWriteValue64 failed");
	if (!st_marker_reaches(m))
		return st_timeout_fail("the stream did not finish its queued work within %.0f s",
				    st_tsec());
	return true;
}

static size_t params_stride(void)
{
	return hx_st.abi == HX_ABI_5 ? sizeof(struct hx_sem_signal_params_v5) :
				       sizeof(struct hx_sem_signal_params_v6);
}

void st_params_set(void *params, unsigned n, const uint64_t *values)
{
	/* fence.value is at offset 0 of both layouts, for signal and wait */
	for (unsigned i = 0; i < n; i++)
		memcpy((char *)params + i * params_stride(), &values[i], sizeof(values[i]));
}

void *st_params_array(unsigned n, const uint64_t *values)
{
	/* flags (at 64 or 72) stay 0 */
	void *p = calloc(n ? n : 1, params_stride());

	if (p)
		st_params_set(p, n, values);
	return p;
}

/* Each round gets the full deadline (a slow machine with many rounds is
 * not a stuck stream), and the parent hears from us at least twice a
 * second, so its own watchdog only fires on a real hang. */
void st_round_start(int64_t deadline_ns)
{
	static int64_t last;
	int64_t now = hx_now_ns();

	hx_st.deadline = now + deadline_ns;
	if (now - last > 500000000LL) {
		st_record("progress", 0);
		last = now;
	}
}

static void count_hostfn(void *arg)
{
	(void)arg;
	/* What the stream had written when this function ran. */
	__atomic_store_n(&hx_st.mem[M_HOSTFN], __atomic_load_n(&hx_st.mem[M_MARKER], __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	atomic_fetch_add(&hx_st.hostfn_runs, 1);
}

static void count_callback(hipStream_t s, hipError_t e, void *arg)
{
	(void)s;
	(void)e;
	count_hostfn(arg);
}

/* The host function the shim's signal uses on this runtime. */
hipError_t st_host_fn(void)
{
	if (hx_st.LaunchHostFunc)
		return hx_st.LaunchHostFunc(hx_st.s, count_hostfn, NULL);
	return hx_st.StreamAddCallback(hx_st.s, count_callback, NULL, 0);
}

const char *st_host_fn_name(void)
{
	return hx_st.LaunchHostFunc ? "hipLaunchHostFunc" : "hipStreamAddCallback";
}

bool st_import_one(bool timeline, uint32_t *handle, hipExternalSemaphore_t *ext)
{
	const char *kind = timeline ? "timeline" : "binary";
	union {
		struct hx_sem_desc_v5 v5;
		struct hx_sem_desc_v6 v6;
	} d;
	int fd, ret;
	hipError_t e;

	ret = hx_sync_create(&hx_st.dev, false, handle);
	if (ret)
		return st_fail("DRM_IOCTL_SYNCOBJ_CREATE on %s: %s", hx_st.dev.path, strerror(-ret));
	ret = hx_sync_export_fd(&hx_st.dev, *handle, &fd);
	if (ret)
		return st_fail("DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD on %s: %s", hx_st.dev.path, strerror(-ret));
	memset(&d, 0, sizeof(d));
	/* type, handle.fd and flags sit at the same offsets in both layouts */
	d.v6.type = timeline ? HX_SEM_HANDLE_TIMELINE_FD : HX_SEM_HANDLE_OPAQUE_FD;
	d.v6.handle.fd = fd;
	e = hx_st.Import(ext, (const hipExternalSemaphoreHandleDesc *)(const void *)&d);
	if (e != hipSuccess) {
		close(fd);
		return st_fail("hipImportExternalSemaphore of a %s syncobj fd answered %s", kind,
			    st_ename(e));
	}
	if (!*ext)
		return st_fail("hipImportExternalSemaphore (%s) succeeded with a NULL handle", kind);
	if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) {
		close(fd);
		return st_fail("hipImportExternalSemaphore (%s) succeeded but left fd %d open (a "
			    "successful import takes the fd)", kind, fd);
	}
	return true;
}

/* ---- the stream calls, and one thread for hipStreamPerThread -------------- */

/* 5.2 (no hipLaunchHostFunc): hipStreamWriteValue64 and hipStreamWaitValue64
 * use the handle unchecked, so hipStreamPerThread must not reach them. */
static bool value_calls_take_per_thread(void)
{
	return hx_st.LaunchHostFunc != NULL;
}

static void write_marker(void *arg)
{
	__atomic_store_n(&hx_st.mem[M_MARKER], (uint64_t)(uintptr_t)arg, __ATOMIC_RELEASE);
}

static void write_marker_callback(hipStream_t s, hipError_t e, void *arg)
{
	(void)s;
	(void)e;
	write_marker(arg);
}

static hipError_t do_put_marker(uint64_t v)
{
	if (hx_st.s == hipStreamPerThread && !value_calls_take_per_thread())
		return hx_st.StreamAddCallback(hx_st.s, write_marker_callback,
					       (void *)(uintptr_t)v, 0);
	return hx_st.StreamWriteValue64(hx_st.s, (void *)&hx_st.mem[M_MARKER], v, 0);
}

static hipError_t do_put_gate(uint64_t v)
{
	void *gate = (void *)&hx_st.mem[M_GATE];
	hipError_t e;

	if (hx_st.s != hipStreamPerThread || value_calls_take_per_thread())
		return hx_st.StreamWaitValue64(hx_st.s, gate, v, HX_WAIT_VALUE_GTE, ~0ull);
	/* The gate goes on the created stream, and the per-thread stream
	 * waits for an event recorded behind it (hipStreamWaitEvent resolves
	 * hipStreamPerThread on every release). */
	if (!hx_st.EventRecord || !hx_st.StreamWaitEvent || !hx_st.gate_event)
		return hipErrorNotSupported;
	e = hx_st.StreamWaitValue64(hx_st.own, gate, v, HX_WAIT_VALUE_GTE, ~0ull);
	if (e == hipSuccess)
		e = hx_st.EventRecord(hx_st.gate_event, hx_st.own);
	if (e == hipSuccess)
		e = hx_st.StreamWaitEvent(hx_st.s, hx_st.gate_event, 0);
	return e;
}

static hipError_t do_sem_signal(hipExternalSemaphore_t *sems, const uint64_t *values, unsigned n)
{
	void *p = st_params_array(n, values);
	hipError_t e = p ? hx_st.Signal(sems, p, n, hx_st.s) : hipErrorOutOfMemory;

	if (p)
		atomic_fetch_add(&hx_st.signals_made, n);

	free(p);
	return e;
}

static hipError_t do_sem_wait(hipExternalSemaphore_t *sems, const uint64_t *values, unsigned n)
{
	void *p = st_params_array(n, values);
	hipError_t e = p ? hx_st.Wait(sems, p, n, hx_st.s) : hipErrorOutOfMemory;

	free(p);
	return e;
}

/*
 * hipStreamPerThread names the calling thread's stream, and the checks
 * enqueue from more than one thread (a wait that may block runs on a
 * thread of its own).  While the checks work on it, every enqueue is a
 * job for one thread that lives until the child ends.  A job's arguments
 * are copied into the slot, so a caller that gives up waiting leaves
 * nothing of its own in use; once a job is not done in time the thread is
 * taken as stuck and gets no further job.
 */
enum job_kind { JOB_MARKER, JOB_GATE, JOB_SIGNAL, JOB_WAIT };

#define JOB_MAX_SEMS 2

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;   /* on CLOCK_MONOTONIC, as hx_now_ns */
	bool started, stuck, busy, queued, done;
	enum job_kind kind;
	hipExternalSemaphore_t sems[JOB_MAX_SEMS];
	uint64_t values[JOB_MAX_SEMS];
	unsigned n;
	uint64_t v;
	hipError_t err;
} job = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void *job_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&job.mu);
	for (;;) {
		hipError_t e;

		while (!job.queued)
			pthread_cond_wait(&job.cv, &job.mu);
		job.queued = false;
		pthread_mutex_unlock(&job.mu);
		switch (job.kind) {
		case JOB_MARKER: e = do_put_marker(job.v); break;
		case JOB_GATE: e = do_put_gate(job.v); break;
		case JOB_SIGNAL: e = do_sem_signal(job.sems, job.values, job.n); break;
		default: e = do_sem_wait(job.sems, job.values, job.n); break;
		}
		pthread_mutex_lock(&job.mu);
		job.err = e;
		job.done = true;
		pthread_cond_broadcast(&job.cv);
	}
	return NULL;
}

/* With job.mu held: waits until *flag == want; false at `until`. */
static bool job_wait_for(bool *flag, bool want, int64_t until)
{
	struct timespec ts = { (time_t)(until / 1000000000LL), (long)(until % 1000000000LL) };

	while (*flag != want)
		if (pthread_cond_timedwait(&job.cv, &job.mu, &ts) == ETIMEDOUT)
			return *flag == want;
	return true;
}

/* Runs one job on the thread; ST_NO_ANSWER (and a timeout) if it is not
 * done by the check's deadline plus one more. */
static hipError_t run_job(enum job_kind kind, hipExternalSemaphore_t *sems, const uint64_t *values,
			  unsigned n, uint64_t v)
{
	int64_t now = hx_now_ns();
	int64_t until = (hx_st.deadline > now ? hx_st.deadline : now) + hx_st.timeout_ns;
	hipError_t e = ST_NO_ANSWER;

	if (n > JOB_MAX_SEMS)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&job.mu);
	if (!job.stuck && job_wait_for(&job.busy, false, until)) {
		job.busy = true;
		job.kind = kind;
		job.n = n;
		job.v = v;
		for (unsigned i = 0; i < n; i++) {
			job.sems[i] = sems[i];
			job.values[i] = values[i];
		}
		job.done = false;
		job.queued = true;
		pthread_cond_broadcast(&job.cv);
		if (job_wait_for(&job.done, true, until)) {
			e = job.err;
			job.busy = false;
			pthread_cond_broadcast(&job.cv);
		}
	}
	if (e == ST_NO_ANSWER) {
		job.stuck = true;
		hx_st.timed_out = true;
	}
	pthread_mutex_unlock(&job.mu);
	return e;
}

bool st_per_thread_begin(void)
{
	pthread_condattr_t ca;
	pthread_t th;
	hipError_t e;

	if (!value_calls_take_per_thread() && !hx_st.gate_event) {
		if (!hx_st.EventCreateWithFlags || !hx_st.EventRecord || !hx_st.StreamWaitEvent)
			return st_fail("this runtime lacks hipEventCreateWithFlags, hipEventRecord "
				       "or hipStreamWaitEvent, which the check needs to hold "
				       "hipStreamPerThread at a gate");
		e = hx_st.EventCreateWithFlags(&hx_st.gate_event, hipEventDisableTiming);
		if (e != hipSuccess)
			return st_fail("hipEventCreateWithFlags answered %s", st_ename(e));
	}
	pthread_mutex_lock(&job.mu);
	if (job.stuck) {
		pthread_mutex_unlock(&job.mu);
		return st_fail("not run: the thread that enqueues on hipStreamPerThread is stuck "
			       "in an earlier check");
	}
	if (!job.started) {
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&job.cv, &ca);
		pthread_condattr_destroy(&ca);
		if (pthread_create(&th, NULL, job_thread, NULL) != 0) {
			pthread_mutex_unlock(&job.mu);
			return st_fail("cannot start a thread");
		}
		pthread_detach(th);
		job.started = true;
	}
	pthread_mutex_unlock(&job.mu);
	hx_st.s = hipStreamPerThread;
	hx_st.per_thread = true;
	return true;
}

void st_per_thread_end(void)
{
	hx_st.per_thread = false;
	hx_st.s = hx_st.own;
}

hipError_t st_put_marker(uint64_t v)
{
	return hx_st.per_thread ? run_job(JOB_MARKER, NULL, NULL, 0, v) : do_put_marker(v);
}

hipError_t st_put_gate(uint64_t v)
{
	return hx_st.per_thread ? run_job(JOB_GATE, NULL, NULL, 0, v) : do_put_gate(v);
}

hipError_t st_sem_signal(hipExternalSemaphore_t *sems, const uint64_t *values, unsigned n)
{
	return hx_st.per_thread ? run_job(JOB_SIGNAL, sems, values, n, 0) :
				  do_sem_signal(sems, values, n);
}

hipError_t st_sem_wait(hipExternalSemaphore_t *sems, const uint64_t *values, unsigned n)
{
	return hx_st.per_thread ? run_job(JOB_WAIT, sems, values, n, 0) :
				  do_sem_wait(sems, values, n);
}
