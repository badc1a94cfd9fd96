/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace-event JSON (the "JSON array" form), one event per write.
 *
 * The file is valid JSON after every event: each write replaces the closing
 * "]" with ",\n{event}\n]\n" at the same offset, so a crash or a kill
 * leaves a complete document behind.  Streams and semaphores each get a
 * track (a "thread" in trace terms) named after them.  A trace sent to
 * something that cannot be rewritten in place (/dev/stderr, a pipe, a
 * character device) is written as a stream instead: events are appended
 * and the array is left open, which the trace-event format allows.
 *
 * The file is opened with hx_open_output (log.c): a symbolic link planted
 * at the path is not followed to a regular file, a new file is 0600.  A
 * forked child writes <path>.<pid>, created exclusively: should that name
 * exist already (left by an earlier process, or planted), a fresh suffix
 * is tried and the log says which file the child writes.
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

bool hx_trace_on;

#define TRACK_SLOTS 4096 /* open addressing; tracks beyond this share one */
#define STREAM_TID_BASE 1000
#define SEM_TID_BASE 100000

static struct {
	pthread_mutex_t lock;
	int fd;
	bool stream; /* appended, not rewritten in place (not a regular file) */
	bool any_event;
	off_t pos; /* where the closing bracket starts */
	int pid;
	char path[4096];
	const void *keys[TRACK_SLOTS];
	int tids[TRACK_SLOTS];
	int next_stream_tid;
	unsigned long long flow_id; /* signal enqueue -> fence attached arrows */
} t = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
};

static double us(int64_t ns)
{
	return (double)ns / 1000.0;
}

/* Appends one event (a JSON object without separators). */
static void emit_locked(const char *ev, int len)
{
	char buf[1200];
	int n;

	if (t.fd < 0)
		return;
	if (t.stream) {
		n = snprintf(buf, sizeof(buf), "%s%.*s\n", t.any_event ? "," : "", len, ev);
		if (n >= (int)sizeof(buf))
			return;
		/* One write per event: whole events even on a shared pipe. */
		if (write(t.fd, buf, (size_t)n) != n) {
			hx_warn_once("writing the trace failed: %m; tracing stops");
			close(t.fd);
			t.fd = -1;
			hx_trace_on = false;
		}
		t.any_event = true;
		return;
	}
	n = snprintf(buf, sizeof(buf), "%s%.*s\n]\n", t.pos > 2 ? ",\n" : "", len, ev);
	if (n >= (int)sizeof(buf))
		return;
	if (pwrite(t.fd, buf, (size_t)n, t.pos) != n) {
		hx_warn_once("writing the trace file failed: %m; tracing stops");
		close(t.fd);
		t.fd = -1;
		hx_trace_on = false;
		return;
	}
	t.pos += n - 2;
}

static void emitf_locked(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emitf_locked(const char *fmt, ...)
{
	char ev[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(ev, sizeof(ev), fmt, ap);
	va_end(ap);
	if (n > 0 && n < (int)sizeof(ev))
		emit_locked(ev, n);
}

/* Track id of a stream (by pointer), naming the track on first use. */
static int stream_tid_locked(const void *stream)
{
	size_t h = ((uintptr_t)stream >> 3) * 0x9e3779b97f4a7c15ull % TRACK_SLOTS;

	for (size_t i = 0; i < TRACK_SLOTS; i++) {
		size_t s = (h + i) % TRACK_SLOTS;
		if (t.tids[s] && t.keys[s] == stream)
			return t.tids[s];
		if (!t.tids[s]) {
			t.keys[s] = stream;
			t.tids[s] = STREAM_TID_BASE + t.next_stream_tid++;
			if (stream == NULL)
				emitf_locked("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
					     "\"args\":{\"name\":\"stream NULL (default)\"}}",
					     t.pid, t.tids[s]);
			else
				emitf_locked("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
					     "\"args\":{\"name\":\"stream %p\"}}",
					     t.pid, t.tids[s], stream);
			return t.tids[s];
		}
	}
	return STREAM_TID_BASE - 1;
}

/* Semaphore handles encode a small index in their low bits. */
static int sem_tid(const void *sem)
{
	return SEM_TID_BASE + (int)((uintptr_t)sem & 0xffffff);
}

/* A new per-process track table and the process's name event. */
static void start_process_locked(void)
{
	t.pid = getpid();
	memset(t.tids, 0, sizeof(t.tids));
	t.next_stream_tid = 0;
	emitf_locked("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
		     "\"args\":{\"name\":\"hipextsem (pid %d)\"}}",
		     t.pid, t.pid);
}

/* flags: O_TRUNC for the file the user named, O_EXCL for a forked
 * child's own.  Returns 0 or -errno. */
static int open_trace(const char *path, int flags)
{
	static const char head[] = "[\n";
	bool regular;
	int fd = hx_open_output(path, flags, &regular);

	if (fd < 0)
		return fd;
	t.fd = fd;
	t.stream = !regular;
	t.any_event = false;
	if (write(t.fd, head, sizeof(head) - 1) != (ssize_t)sizeof(head) - 1) {
		close(t.fd);
		t.fd = -1;
		return -EIO;
	}
	t.pos = 2;
	start_process_locked();
	return 0;
}

void hx_trace_init(void)
{
	const char *path = hx_getenv("HIPEXTSEM_TRACE");
	int ret;

	if (!path || !*path)
		return;
	if (getauxval(AT_SECURE)) {
		hx_warn("HIPEXTSEM_TRACE ignored in a setuid/setgid process");
		return;
	}
	snprintf(t.path, sizeof(t.path), "%s", path);
	pthread_mutex_lock(&t.lock);
	ret = open_trace(t.path, O_TRUNC);
	pthread_mutex_unlock(&t.lock);
	if (ret) {
		hx_err("cannot open HIPEXTSEM_TRACE file %s: %s", path, hx_open_output_error(ret));
		return;
	}
	hx_trace_on = true;
	hx_info("tracing to %s", path);
}

void hx_trace_reset_after_fork(void)
{
	char path[4200];
	int ret = -EEXIST, i;

	pthread_mutex_init(&t.lock, NULL);
	if (t.fd < 0)
		return;
	if (t.stream) {
		/* A stream takes whole events from both processes. */
		start_process_locked();
		return;
	}
	/* The parent keeps writing its file; the child gets its own, a new
	 * file: never one that exists (an earlier process's, or a link
	 * planted at the predictable name). */
	close(t.fd);
	t.fd = -1;
	for (i = 0; i < 16 && ret == -EEXIST; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s.%d", t.path, (int)getpid());
		else
			snprintf(path, sizeof(path), "%s.%d.%d", t.path, (int)getpid(), i);
		ret = open_trace(path, O_EXCL);
	}
	if (ret) {
		hx_trace_on = false;
		hx_err("cannot create a trace file for process %d (%s): %s; it is not traced",
		       (int)getpid(), path, hx_open_output_error(ret));
		return;
	}
	if (i > 1)
		hx_warn("%s.%d existed already: process %d traces to %s", t.path, (int)getpid(),
			(int)getpid(), path);
	else
		hx_info("process %d traces to %s", (int)getpid(), path);
}

void hx_trace_import_(const void *sem, uint32_t syncobj, bool timeline, int64_t ts_ns)
{
	pthread_mutex_lock(&t.lock);
	emitf_locked("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
		     "\"args\":{\"name\":\"semaphore %p (%s, syncobj %u)\"}}",
		     t.pid, sem_tid(sem), sem, timeline ? "timeline" : "binary", syncobj);
	emitf_locked("{\"name\":\"import\",\"cat\":\"semaphore\",\"ph\":\"i\",\"s\":\"t\","
		     "\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{\"semaphore\":\"%p\","
		     "\"type\":\"%s\",\"syncobj\":%u}}",
		     t.pid, sem_tid(sem), us(ts_ns), sem, timeline ? "timeline" : "binary",
		     syncobj);
	pthread_mutex_unlock(&t.lock);
}

void hx_trace_destroy_(const void *sem, int64_t ts_ns)
{
	pthread_mutex_lock(&t.lock);
	emitf_locked("{\"name\":\"destroy\",\"cat\":\"semaphore\",\"ph\":\"i\",\"s\":\"t\","
		     "\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{\"semaphore\":\"%p\"}}",
		     t.pid, sem_tid(sem), us(ts_ns), sem);
	pthread_mutex_unlock(&t.lock);
}

static void op_locked(const char *what, const void *sem, uint64_t value, const void *stream,
		      int64_t enq_ns, int64_t done_ns)
{
	int tid = stream_tid_locked(stream);

	/* On the stream: from the call to when it took effect. */
	emitf_locked("{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
		     "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"semaphore\":\"%p\",\"value\":%" PRIu64
		     ",\"stream\":\"%p\",\"enqueued_us\":%.3f,\"satisfied_us\":%.3f}}",
		     what, what, t.pid, tid, us(enq_ns), us(done_ns - enq_ns), sem, value, stream,
		     us(enq_ns), us(done_ns));
	/* On the semaphore: the moment it happened. */
	emitf_locked("{\"name\":\"%s %" PRIu64 "\",\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"t\","
		     "\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{\"stream\":\"%p\"}}",
		     strcmp(what, "signal") ? "wait satisfied" : "signaled", value, what, t.pid,
		     sem_tid(sem), us(done_ns), stream);
}

/* A signal's fence is attached to the syncobj when the stream reaches the
 * signal, not when it is enqueued (CUDA attaches it at enqueue): a flow
 * arrow from the enqueue on the stream's track to the moment the fence was
 * attached on the semaphore's track makes that delay visible.  It is what a
 * Vulkan consumer's vkQueueSubmit on a binary semaphore waits for. */
void hx_trace_signal_(const void *sem, uint64_t value, const void *stream, int64_t enq_ns,
		      int64_t done_ns)
{
	pthread_mutex_lock(&t.lock);
	op_locked("signal", sem, value, stream, enq_ns, done_ns);
	t.flow_id++;
	emitf_locked("{\"name\":\"fence attached\",\"cat\":\"signal\",\"ph\":\"s\",\"id\":%llu,"
		     "\"pid\":%d,\"tid\":%d,\"ts\":%.3f}",
		     t.flow_id, t.pid, stream_tid_locked(stream), us(enq_ns));
	emitf_locked("{\"name\":\"fence attached\",\"cat\":\"signal\",\"ph\":\"f\",\"bp\":\"e\","
		     "\"id\":%llu,\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{\"semaphore\":\"%p\","
		     "\"value\":%" PRIu64 ",\"enqueued_us\":%.3f,\"fence_attached_us\":%.3f,"
		     "\"enqueue_to_attach_us\":%.3f}}",
		     t.flow_id, t.pid, sem_tid(sem), us(done_ns), sem, value, us(enq_ns), us(done_ns),
		     us(done_ns - enq_ns));
	pthread_mutex_unlock(&t.lock);
}

void hx_trace_wait_(const void *sem, uint64_t value, const void *stream, int64_t enq_ns,
		    int64_t done_ns)
{
	pthread_mutex_lock(&t.lock);
	op_locked("wait", sem, value, stream, enq_ns, done_ns);
	pthread_mutex_unlock(&t.lock);
}

void hx_trace_stuck_(const void *sem, uint64_t value, uint64_t current, const void *stream,
		     int64_t enq_ns, int64_t now_ns)
{
	pthread_mutex_lock(&t.lock);
	emitf_locked("{\"name\":\"stuck wait\",\"cat\":\"watchdog\",\"ph\":\"i\",\"s\":\"t\","
		     "\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{\"semaphore\":\"%p\","
		     "\"value\":%" PRIu64 ",\"current\":%" PRIu64 ",\"pending_ms\":%.1f}}",
		     t.pid, stream_tid_locked(stream), us(now_ns), sem, value, current,
		     (double)(now_ns - enq_ns) / 1e6);
	pthread_mutex_unlock(&t.lock);
}
