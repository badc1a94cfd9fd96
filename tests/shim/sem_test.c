/* SPDX-License-Identifier: MIT */
/*
 * The semantics of the four semaphore calls (docs/semantics.md), one case
 * per argv[1].  Run inside the test VM (real kernel sync objects) on a
 * cpuhip flavour, with the shim preloaded (HX_TEST_EXPECT=shim) or without
 * it (HX_TEST_EXPECT=stock: the stock Linux answers).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "hxtest.h"

struct hx_stats {
	unsigned live_sems, pending_waits, pending_signals, slots_allocated;
};

static int drm;
static bool shim;

/* Imports a fresh syncobj; in stock mode checks the stock answer and
 * returns NULL (the caller's case ends there). */
/* The stock runtime played is 5.2's (the abi5 flavour's default). */
static bool stock_52(void)
{
	const char *r = getenv("CPUHIP_ROCM");

	return HX_TEST_ABI == 5 && (!r || !*r || strcmp(r, "5.2") == 0);
}

static hipExternalSemaphore_t make_sem(uint32_t *h, bool timeline, bool signaled)
{
	hipExternalSemaphore_t s = NULL;
	int fd;
	hipError_t err;

	*h = so_create(drm, signaled);
	fd = so_export(drm, *h);
	err = import_fd(&s, fd, timeline);
	if (!shim) {
		/* Stock Linux: OpaqueFd gets past validation and the backend
		 * says no; the 6.x timeline type is out of the stock range.
		 * 5.2 answers 1 for every failed import (tests/cpuhip). */
		EXPECT_ERR(err, timeline || stock_52() ? hipErrorInvalidValue : hipErrorNotSupported);
		close(fd);
		return NULL;
	}
	CHECK(err == hipSuccess, "import returned %d", (int)err);
	CHECK(s != NULL, "import gave a NULL handle");
	return s;
}

struct waiter_arg {
	uint32_t h;
	uint64_t point;
	int ret;
	int64_t done_ns;
};

static void *external_waiter(void *p)
{
	struct waiter_arg *a = p;
	a->ret = so_wait(drm, a->h, a->point, 20000);
	a->done_ns = now_ns();
	return NULL;
}

/* signal cells: the other side is already waiting (wfs) or not (pre). */
static void signal_case(bool timeline, bool wfs)
{
	uint32_t h;
	hipExternalSemaphore_t s = make_sem(&h, timeline, false);
	struct waiter_arg a = { .h = h, .point = timeline ? 3 : 0 };
	pthread_t th;
	hipStream_t st;
	int64_t t0;

	if (!s)
		return;
	HIPCHECK(hipStreamCreate(&st));
	if (wfs)
		pthread_create(&th, NULL, external_waiter, &a);
	t0 = now_ns();
	stream_delay(st, 200 * 1000);
	HIPCHECK(signal1(s, timeline ? 3 : 1, st));
	/* Prior work is still running: the point must not be signaled yet.
	 * Only while the 200 ms of prior work surely last: on a loaded host
	 * the sleep can outlast them, and then a signaled point is right
	 * (the waiter's wake-up time below still orders it, for wfs). */
	sleep_ms(60);
	{
		int ret = so_wait(drm, h, a.point, 0);
		int64_t at = now_ns() - t0;

		if (at < 180 * 1000000LL)
			CHECK(ret == -ETIME, "signaled %" PRId64 " ms after the 200 ms of prior stream "
			      "work began", at / 1000000);
		else
			printf("# the look came %" PRId64 " ms after the prior work began (loaded host): "
			       "not a check\n", at / 1000000);
	}
	HIPCHECK(hipStreamSynchronize(st));
	if (wfs) {
		pthread_join(th, NULL);
		CHECK(a.ret == 0, "external waiter failed: %s", strerror(-a.ret));
		CHECK(a.done_ns - t0 >= 190 * 1000000LL, "external waiter woke after %" PRId64 " ns",
		      a.done_ns - t0);
	}
	/* The callback may run just after the stream looks idle. */
	CHECK(so_wait(drm, h, a.point, 5000) == 0, "not signaled after the stream drained");
	if (timeline)
		CHECK(so_query(drm, h) == 3, "timeline value %" PRIu64, so_query(drm, h));
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
}

/* wait cells: the producer signals after the wait is queued (wfs) or
 * before (pre). */
static void wait_case(bool timeline, bool wfs)
{
	uint32_t h;
	hipExternalSemaphore_t s = make_sem(&h, timeline, false);
	uint64_t *mark;
	hipStream_t st;

	if (!s)
		return;
	mark = pinned(sizeof(*mark));
	HIPCHECK(hipStreamCreate(&st));
	if (!wfs)
		so_signal(drm, h, timeline ? 7 : 0);
	HIPCHECK(wait1(s, 5, st));
	stream_mark(st, mark, 1);
	if (wfs) {
		sleep_ms(150);
		CHECK(load64(mark) == 0, "stream ran past a wait whose semaphore is unsignaled");
		if (timeline) {
			so_signal(drm, h, 3); /* below the awaited value */
			sleep_ms(150);
			CHECK(load64(mark) == 0, "stream ran past a wait for 5 at timeline value 3");
			so_signal(drm, h, 5);
		} else {
			so_signal(drm, h, 0);
		}
	}
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(load64(mark) == 1, "later work did not run");
	if (timeline)
		CHECK(so_query(drm, h) == (wfs ? 5u : 7u), "timeline value changed by a wait");
	else
		CHECK(so_wait(drm, h, 0, 0) == -ETIME, "binary semaphore not reset after its wait");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipHostFree(mark));
}

/* Stream B signals what stream A waits for, in one process. */
static void hip_to_hip(bool timeline)
{
	uint32_t h;
	hipExternalSemaphore_t s = make_sem(&h, timeline, false);
	hipStream_t a, b;
	uint64_t *mark;
	int64_t t0;

	if (!s)
		return;
	mark = pinned(8);
	HIPCHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
	HIPCHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
	t0 = now_ns();
	HIPCHECK(wait1(s, 1, a));
	stream_mark(a, mark, 1);
	stream_delay(b, 200 * 1000);
	HIPCHECK(signal1(s, 1, b));
	sleep_ms(80);
	CHECK(load64(mark) == 0, "stream A passed its wait before stream B signaled");
	HIPCHECK(hipStreamSynchronize(a));
	CHECK(load64(mark) == 1, "stream A's later work did not run");
	CHECK(now_ns() - t0 >= 190 * 1000000LL, "stream A finished too early");
	HIPCHECK(hipStreamSynchronize(b));
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(a));
	HIPCHECK(hipStreamDestroy(b));
	HIPCHECK(hipHostFree(mark));
}

/* The wait path the shim reports (hipextsemGetWaitPath) after one wait,
 * so that any fallback has happened: HX_EXPECT_WAIT_PATH (0 asynchronous,
 * default; 1 the calling thread blocks) and HX_EXPECT_ATTR (the device's
 * hipDeviceAttributeCanUseStreamWaitValue, default 1). */
static void wait_path(void)
{
	int (*get)(int *, char *, size_t) =
		(int (*)(int *, char *, size_t))dlsym(RTLD_DEFAULT, "hipextsemGetWaitPath");
	const char *ep = getenv("HX_EXPECT_WAIT_PATH"), *ea = getenv("HX_EXPECT_ATTR");
	int want = ep ? atoi(ep) : 0, want_attr = ea ? atoi(ea) : 1, attr = -2, path;
	uint32_t h;
	hipExternalSemaphore_t s = make_sem(&h, true, false);
	hipStream_t st;
	char why[256];

	if (!s) {
		CHECK(get == NULL, "hipextsemGetWaitPath found without the shim");
		return;
	}
	CHECK(get != NULL, "hipextsemGetWaitPath is not exported");
	HIPCHECK(hipStreamCreate(&st));
	so_signal(drm, h, 1);
	HIPCHECK(wait1(s, 1, st));
	HIPCHECK(hipStreamSynchronize(st));
	path = get(&attr, why, sizeof(why));
	printf("wait path %d, attribute %d: %s\n", path, attr, why);
	CHECK(path == want, "wait path %d, expected %d (%s)", path, want, why);
	CHECK(attr == want_attr, "attribute read as %d, expected %d", attr, want_attr);
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
}

/* A destroyed stream is refused before anything waits, on every wait path
 * (the host-blocking one included): never a wait that cannot end. */
static void wait_bad_stream(void)
{
	uint32_t h;
	hipExternalSemaphore_t s = make_sem(&h, false, false);
	hipStream_t st;

	if (!s)
		return;
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamDestroy(st));
	EXPECT_ERR(wait1(s, 1, st), hipErrorInvalidValue);
	HIPCHECK(hipDestroyExternalSemaphore(s));
}

static void fd_ownership(void)
{
	uint32_t h = so_create(drm, false);
	int fd = so_export(drm, h);
	int p[2];
	hipExternalSemaphore_t s = NULL;
	hipError_t err;

	err = import_fd(&s, fd, false);
	if (!shim) {
		EXPECT_ERR(err, stock_52() ? hipErrorInvalidValue : hipErrorNotSupported);
		CHECK(fcntl(fd, F_GETFD) != -1, "stock import closed the caller's fd");
		close(fd);
		return;
	}
	HIPCHECK(err);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF, "fd still open after a successful import");
	HIPCHECK(hipDestroyExternalSemaphore(s));

	/* Failure: a pipe is not a syncobj; the caller keeps its fd. */
	CHECK(pipe(p) == 0, "pipe");
	s = (hipExternalSemaphore_t)0x1;
	EXPECT_ERR(import_fd(&s, p[0], false), hipErrorInvalidValue);
	CHECK(fcntl(p[0], F_GETFD) != -1, "failed import closed the caller's fd");
	CHECK(s == (hipExternalSemaphore_t)0x1, "failed import wrote the out handle");
	EXPECT_ERR(import_fd(&s, p[0], true), hipErrorInvalidValue);
	CHECK(fcntl(p[0], F_GETFD) != -1, "failed import closed the caller's fd");
	close(p[0]);
	close(p[1]);
	/* A closed descriptor. */
	EXPECT_ERR(import_fd(&s, p[0], false), hipErrorInvalidValue);
	EXPECT_ERR(import_fd(&s, -1, false), hipErrorInvalidValue);
}

static void bad_handles(void)
{
	hipExternalSemaphore_t garbage = (hipExternalSemaphore_t)(uintptr_t)0x1234;
	hipExternalSemaphore_t null_elem = NULL;
	test_signal_params sp;
	test_wait_params wp;
	uint32_t h;
	hipExternalSemaphore_t s;

	memset(&sp, 0, sizeof(sp));
	memset(&wp, 0, sizeof(wp));
	/* Common to stock and shim. */
	EXPECT_ERR(hipImportExternalSemaphore(NULL, NULL), hipErrorInvalidValue);
	EXPECT_ERR(hipDestroyExternalSemaphore(NULL), hipErrorInvalidValue);
	EXPECT_ERR(hipSignalExternalSemaphoresAsync(NULL, (void *)&sp, 1, 0), hipErrorInvalidValue);
	EXPECT_ERR(hipWaitExternalSemaphoresAsync(&garbage, NULL, 1, 0), hipErrorInvalidValue);
	EXPECT_ERR(hipSignalExternalSemaphoresAsync(&null_elem, (void *)&sp, 1, 0),
		   hipErrorInvalidValue);
	EXPECT_ERR(hipSignalExternalSemaphoresAsync(&garbage, (void *)&sp, 0, 0), hipSuccess);

	if (!shim) {
		/* The stock runtime does not look at what the handle is. */
		EXPECT_ERR(hipSignalExternalSemaphoresAsync(&garbage, (void *)&sp, 1, 0), hipSuccess);
		return;
	}
	EXPECT_ERR(hipSignalExternalSemaphoresAsync(&garbage, (void *)&sp, 1, 0),
		   hipErrorInvalidResourceHandle);
	EXPECT_ERR(hipWaitExternalSemaphoresAsync(&garbage, (void *)&wp, 1, 0),
		   hipErrorInvalidResourceHandle);
	EXPECT_ERR(hipDestroyExternalSemaphore(garbage), hipErrorInvalidResourceHandle);

	s = make_sem(&h, true, false);
	sp.flags = 1;
	EXPECT_ERR(hipSignalExternalSemaphoresAsync(&s, (void *)&sp, 1, 0), hipErrorInvalidValue);
	wp.flags = 2;
	EXPECT_ERR(hipWaitExternalSemaphoresAsync(&s, (void *)&wp, 1, 0), hipErrorInvalidValue);
	EXPECT_ERR(signal1(s, 1, (hipStream_t)(uintptr_t)0xdead0), hipErrorInvalidValue);
	EXPECT_ERR(wait1(s, 1, (hipStream_t)(uintptr_t)0xdead0), hipErrorInvalidValue);
	HIPCHECK(hipDestroyExternalSemaphore(s));
	EXPECT_ERR(hipDestroyExternalSemaphore(s), hipErrorInvalidResourceHandle);
	EXPECT_ERR(signal1(s, 1, 0), hipErrorInvalidResourceHandle);
	EXPECT_ERR(wait1(s, 1, 0), hipErrorInvalidResourceHandle);
	/* Nothing was signaled by the rejected calls. */
	CHECK(so_query(drm, h) == 0, "a rejected call signaled the syncobj");
}

static void destroy_pending(void)
{
	uint32_t h;
	hipExternalSemaphore_t s = make_sem(&h, true, false);
	struct hx_stats st0, st1;
	void (*stats)(struct hx_stats *);
	hipStream_t st;
	uint64_t *mark;

	if (!s)
		return;
	stats = (void (*)(struct hx_stats *))dlsym(RTLD_DEFAULT, "hipextsemGetStats");
	CHECK(stats != NULL, "hipextsemGetStats");
	mark = pinned(8);
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(wait1(s, 1, st));
	stream_mark(st, mark, 1);
	stats(&st0);
	CHECK(st0.pending_waits == 1, "pending waits %u", st0.pending_waits);
	HIPCHECK(hipDestroyExternalSemaphore(s));
	EXPECT_ERR(wait1(s, 2, st), hipErrorInvalidResourceHandle);
	sleep_ms(100);
	CHECK(load64(mark) == 0, "destroy released the pending wait");
	/* Documented outcome: the pending wait still completes on signal. */
	so_signal(drm, h, 1);
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(load64(mark) == 1, "wait did not complete after destroy + signal");
	sleep_ms(50);
	stats(&st1);
	CHECK(st1.pending_waits == 0 && st1.live_sems == 0, "left: %u waits, %u semaphores",
	      st1.pending_waits, st1.live_sems);
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipHostFree(mark));
}

static void mixed_array(void)
{
	uint32_t hb, ht;
	hipExternalSemaphore_t sems[2];
	test_signal_params sp[2];
	test_wait_params wp[2];
	hipStream_t a, b;
	uint64_t *mark;

	sems[0] = make_sem(&hb, false, false);
	sems[1] = make_sem(&ht, true, false);
	if (!shim)
		return;
	memset(sp, 0, sizeof(sp));
	memset(wp, 0, sizeof(wp));
	sp[1].params.fence.value = 4;
	wp[1].params.fence.value = 4;
	mark = pinned(8);
	HIPCHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
	HIPCHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
	HIPCHECK(hipWaitExternalSemaphoresAsync(sems, (void *)wp, 2, a));
	stream_mark(a, mark, 1);
	/* Only one of the two: the wait must hold. */
	so_signal(drm, ht, 4);
	sleep_ms(150);
	CHECK(load64(mark) == 0, "wait released with the binary semaphore unsignaled");
	so_signal(drm, hb, 0);
	HIPCHECK(hipStreamSynchronize(a));
	CHECK(load64(mark) == 1, "wait on a mixed array did not complete");
	/* The signal path with a mixed array (stride of the flavour). */
	sp[1].params.fence.value = 9;
	HIPCHECK(hipSignalExternalSemaphoresAsync(sems, (void *)sp, 2, b));
	HIPCHECK(hipStreamSynchronize(b));
	CHECK(so_wait(drm, hb, 0, 5000) == 0, "binary not signaled by a mixed array");
	CHECK(so_wait(drm, ht, 9, 5000) == 0, "timeline 9 not signaled by a mixed array");
	HIPCHECK(hipDestroyExternalSemaphore(sems[0]));
	HIPCHECK(hipDestroyExternalSemaphore(sems[1]));
	HIPCHECK(hipStreamDestroy(a));
	HIPCHECK(hipStreamDestroy(b));
	HIPCHECK(hipHostFree(mark));
}

/* The null stream and hipStreamPerThread. */
static void special_streams(void)
{
	uint32_t h;
	hipExternalSemaphore_t s = make_sem(&h, true, false);
	hipStream_t streams[2] = { NULL, hipStreamPerThread };
	uint64_t *mark;

	if (!s)
		return;
	mark = pinned(8);
	for (int i = 0; i < 2; i++) {
		uint64_t v = 10 * (uint64_t)(i + 1);
		HIPCHECK(wait1(s, v, streams[i]));
		stream_mark(streams[i], mark, v);
		sleep_ms(100);
		CHECK(load64(mark) != v, "stream %d passed an unsignaled wait", i);
		so_signal(drm, h, v);
		HIPCHECK(hipStreamSynchronize(streams[i]));
		CHECK(load64(mark) == v, "stream %d did not continue", i);
		HIPCHECK(signal1(s, v + 1, streams[i]));
		HIPCHECK(hipStreamSynchronize(streams[i]));
		CHECK(so_wait(drm, h, v + 1, 5000) == 0, "stream %d did not signal", i);
	}
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipHostFree(mark));
}

/* Another process owns the syncobj and passes it over a unix socket. */
static void send_fd(int sock, int fd)
{
	char byte = 'F';
	struct iovec iov = { &byte, 1 };
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	CHECK(sendmsg(sock, &msg, 0) == 1, "sendmsg: %s", strerror(errno));
}

static int recv_fd(int sock)
{
	char byte;
	struct iovec iov = { &byte, 1 };
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;
	CHECK(recvmsg(sock, &msg, 0) == 1, "recvmsg: %s", strerror(errno));
	c = CMSG_FIRSTHDR(&msg);
	CHECK(c && c->cmsg_type == SCM_RIGHTS, "no fd received");
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static void two_processes(void)
{
	int sv[2];
	pid_t pid;
	int fd, status;
	hipExternalSemaphore_t s = NULL;
	hipStream_t st;
	uint64_t *mark;
	char go = 'g';

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		/* The producer: its own DRM file, no HIP. */
		int d = drm_open();
		uint32_t h = so_create(d, false);
		char c;
		close(sv[0]);
		send_fd(sv[1], so_export(d, h));
		for (uint64_t i = 1; i <= 3; i++) {
			if (read(sv[1], &c, 1) != 1)
				_exit(2);
			so_signal(d, h, i);
		}
		/* The consumer signals 100 back from its stream. */
		_exit(so_wait(d, h, 100, 20000) == 0 ? 0 : 3);
	}
	close(sv[1]);
	fd = recv_fd(sv[0]);
	if (!shim) {
		EXPECT_ERR(import_fd(&s, fd, true), hipErrorInvalidValue);
		close(fd);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return;
	}
	HIPCHECK(import_fd(&s, fd, true));
	mark = pinned(8);
	HIPCHECK(hipStreamCreate(&st));
	for (uint64_t i = 1; i <= 3; i++) {
		HIPCHECK(wait1(s, i, st));
		stream_mark(st, mark, i);
		sleep_ms(50);
		CHECK(load64(mark) == i - 1, "round %" PRIu64 ": stream ran ahead of the producer", i);
		CHECK(write(sv[0], &go, 1) == 1, "write");
		HIPCHECK(hipStreamSynchronize(st));
		CHECK(load64(mark) == i, "round %" PRIu64 ": stream did not continue", i);
	}
	HIPCHECK(signal1(s, 100, st));
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "producer saw status %d", status);
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipHostFree(mark));
}

/* Several threads at once, each with its own stream, sharing one
 * semaphore pair between neighbours. */
#define NTHREADS 6
#define NROUNDS 40
static hipExternalSemaphore_t tsems[NTHREADS];
static uint32_t thandles[NTHREADS];

static void *thread_body(void *p)
{
	int id = (int)(intptr_t)p;
	hipStream_t st;
	hipExternalSemaphore_t mine = tsems[id];
	for (int r = 1; r <= NROUNDS; r++) {
		HIPCHECK(hipStreamCreateWithFlags(&st, hipStreamNonBlocking));
		HIPCHECK(signal1(mine, (uint64_t)r, st));
		HIPCHECK(wait1(mine, (uint64_t)r, st));
		HIPCHECK(hipStreamSynchronize(st));
		HIPCHECK(hipStreamDestroy(st));
		/* Import/destroy churn next to the others' traffic. */
		uint32_t h;
		hipExternalSemaphore_t tmp = make_sem(&h, r & 1, false);
		HIPCHECK(hipDestroyExternalSemaphore(tmp));
		drmSyncobjDestroy(drm, h);
	}
	return NULL;
}

static void threads(void)
{
	pthread_t th[NTHREADS];
	if (!shim) {
		uint32_t h;
		make_sem(&h, false, false);
		return;
	}
	for (int i = 0; i < NTHREADS; i++)
		tsems[i] = make_sem(&thandles[i], true, false);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, thread_body, (void *)(intptr_t)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NTHREADS; i++) {
		CHECK(so_query(drm, thandles[i]) == NROUNDS, "thread %d reached %" PRIu64, i,
		      so_query(drm, thandles[i]));
		HIPCHECK(hipDestroyExternalSemaphore(tsems[i]));
	}
}

/*
 * Handles are looked up without the registry's lock, while other threads
 * destroy semaphores and import new ones into the freed positions and
 * records.  A destroyed handle must be refused with
 * hipErrorInvalidResourceHandle on every call, even when its position and
 * its record already serve a new semaphore, and that new semaphore must
 * never be signaled through it; a live semaphore signaled all along must
 * reach every value.
 */
#define CHURN_ROUNDS 400
/* With at most three semaphores live, import j and import j + 255 take the
 * same one of the table's first 256 positions (its first chunk: one is the
 * live semaphore's, the others come back in order). */
#define CHURN_SAME_POSITION 255
static hipExternalSemaphore_t churn_stale[CHURN_ROUNDS];
static atomic_int churn_latest = -1, churn_seen[2] = { -1, -1 }, churn_ready;
static atomic_bool churn_done;

static void churn_wait_callers(int r)
{
	int64_t until = now_ns() + 10 * 1000000000LL;

	while (atomic_load(&churn_seen[0]) < r || atomic_load(&churn_seen[1]) < r) {
		CHECK(now_ns() < until, "the stale-handle callers stopped at round %d", r);
		sched_yield();
	}
}

static void *churn_importer(void *arg)
{
	uint32_t *hs = arg;
	hipExternalSemaphore_t cur, next = NULL;

	while (atomic_load(&churn_ready) < 2)
		sched_yield();
	cur = make_sem(&hs[0], false, false);
	for (int r = 0; r < CHURN_ROUNDS; r++) {
		if (r + 1 < CHURN_ROUNDS)
			next = make_sem(&hs[r + 1], (r + 1) & 1, false);
		HIPCHECK(hipDestroyExternalSemaphore(cur));
		/* Stale from here on: its record goes to the next import, and
		 * the position of round r - 254 holds `next`. */
		churn_stale[r] = cur;
		atomic_store(&churn_latest, r);
		churn_wait_callers(r);
		cur = next;
	}
	atomic_store(&churn_done, true);
	return NULL;
}

static void *churn_caller(void *arg)
{
	int id = (int)(intptr_t)arg, last = -1;
	hipStream_t st;

	HIPCHECK(hipStreamCreateWithFlags(&st, hipStreamNonBlocking));
	atomic_fetch_add(&churn_ready, 1);
	while (!atomic_load(&churn_done)) {
		int r = atomic_load(&churn_latest);
		if (r == last) {
			sched_yield();
			continue;
		}
		last = r;
		/* The handle just destroyed, and one whose position holds a
		 * live semaphore under a newer generation (every refusal logs
		 * a line). */
		EXPECT_ERR(signal1(churn_stale[r], 7, st), hipErrorInvalidResourceHandle);
		EXPECT_ERR(wait1(churn_stale[r], 7, st), hipErrorInvalidResourceHandle);
		if (r + 1 >= CHURN_SAME_POSITION) {
			hipExternalSemaphore_t old = churn_stale[r + 1 - CHURN_SAME_POSITION];
			EXPECT_ERR(signal1(old, 7, st), hipErrorInvalidResourceHandle);
			EXPECT_ERR(wait1(old, 7, st), hipErrorInvalidResourceHandle);
		}
		atomic_store(&churn_seen[id], r);
	}
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipStreamDestroy(st));
	return NULL;
}

static void *churn_live(void *arg)
{
	hipExternalSemaphore_t s = arg;
	hipStream_t st;
	uint64_t v = 0;

	HIPCHECK(hipStreamCreateWithFlags(&st, hipStreamNonBlocking));
	while (!atomic_load(&churn_done)) {
		v++;
		HIPCHECK(signal1(s, v, st));
		HIPCHECK(wait1(s, v, st));
		/* Completions (references dropped on the runtime's callback
		 * thread and the waiter thread) next to the churn. */
		HIPCHECK(hipStreamSynchronize(st));
	}
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipStreamDestroy(st));
	return (void *)(uintptr_t)v;
}

static void lookup_churn(void)
{
	static uint32_t hs[CHURN_ROUNDS];
	pthread_t imp, callers[2], live;
	hipExternalSemaphore_t ls;
	uint32_t lh;
	void *last;

	if (!shim) {
		uint32_t h;
		make_sem(&h, false, false);
		return;
	}
	ls = make_sem(&lh, true, false);
	pthread_create(&live, NULL, churn_live, ls);
	for (int i = 0; i < 2; i++)
		pthread_create(&callers[i], NULL, churn_caller, (void *)(intptr_t)i);
	pthread_create(&imp, NULL, churn_importer, hs);
	pthread_join(imp, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(callers[i], NULL);
	pthread_join(live, &last);
	CHECK(so_query(drm, lh) == (uint64_t)(uintptr_t)last, "live semaphore at %" PRIu64
	      ", signaled up to %" PRIu64, so_query(drm, lh), (uint64_t)(uintptr_t)last);
	for (int r = 0; r < CHURN_ROUNDS; r++) {
		/* Binary ones (odd r) must be unsignaled, timelines at 0. */
		if (r & 1)
			CHECK(drmSyncobjWait(drm, &hs[r], 1, 0, 0, NULL) != 0,
			      "destroyed binary semaphore %d was signaled", r);
		else
			CHECK(so_query(drm, hs[r]) == 0, "destroyed timeline %d reached %" PRIu64, r,
			      so_query(drm, hs[r]));
		drmSyncobjDestroy(drm, hs[r]);
	}
	HIPCHECK(hipDestroyExternalSemaphore(ls));
}

/* The shim's waiter threads (named hipextsem-wait*) and the voluntary
 * context switches of each: a thread that was woken to release waits has
 * switched since the last look.  Returns how many there are (at most
 * max), in the same order each time. */
static int waiter_switches(long *csw, int max)
{
	long tids[16];
	int n;

	if (max > 16)
		max = 16;
	list_threads("hipextsem-wait", tids, max, &n);
	for (int t = 0; t < n && t < max; t++) {
		char path[64], line[128];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tids[t]);
		f = fopen(path, "r");
		CHECK(f != NULL, "cannot read %s", path);
		csw[t] = -1;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &csw[t]) == 1)
				break;
		fclose(f);
	}
	return n < max ? n : max;
}

/* Many pending waits on many semaphores, released in reverse order; the
 * second round must not leave more descriptors behind than the first. */
static void many_round(void)
{
	enum { N = 200 };
	static hipExternalSemaphore_t s[N];
	static uint32_t h[N];
	hipStream_t st[8];
	uint64_t *marks = pinned(N * sizeof(uint64_t));

	for (int i = 0; i < 8; i++)
		HIPCHECK(hipStreamCreateWithFlags(&st[i], hipStreamNonBlocking));
	for (int i = 0; i < N; i++) {
		s[i] = make_sem(&h[i], i % 2, false);
		HIPCHECK(wait1(s[i], 1, st[i % 8]));
		stream_mark(st[i % 8], &marks[i], 1);
	}
	/* HX_EXPECT_WAIT_THREADS: that many waiter threads, and the waits
	 * spread over all of them: each is woken by the signals below.  (The
	 * first, which also looks once a second by itself, shows less: the
	 * spread shows in the others.) */
	const char *want = getenv("HX_EXPECT_WAIT_THREADS");
	long before[16], after[16];
	int nthr = 0;
	if (want) {
		sleep_ms(200); /* the threads have taken the new waits */
		nthr = waiter_switches(before, 16);
		CHECK(nthr == atoi(want), "%d waiter threads, expected %s", nthr, want);
	}
	for (int i = N - 1; i >= 0; i--)
		so_signal(drm, h[i], (i % 2) ? 1 : 0);
	for (int i = 0; i < 8; i++)
		HIPCHECK(hipStreamSynchronize(st[i]));
	if (want) {
		/* A thread counts a switch when it goes back to sleep, which
		 * may come a little after its last release: give it 2 s. */
		int grown = 0;
		for (int tries = 0; tries < 200 && grown < nthr; tries++) {
			if (tries)
				sleep_ms(10);
			CHECK(waiter_switches(after, 16) == nthr, "the waiter threads changed");
			grown = 0;
			for (int t = 0; t < nthr; t++)
				grown += after[t] > before[t];
		}
		for (int t = 0; t < nthr; t++)
			CHECK(after[t] > before[t], "waiter thread %d of %d released none of %d "
			      "waits (context switches %ld -> %ld)", t, nthr, N, before[t], after[t]);
	}
	for (int i = 0; i < N; i++) {
		CHECK(load64(&marks[i]) == 1, "wait %d never completed", i);
		HIPCHECK(hipDestroyExternalSemaphore(s[i]));
		drmSyncobjDestroy(drm, h[i]);
	}
	for (int i = 0; i < 8; i++)
		HIPCHECK(hipStreamDestroy(st[i]));
	HIPCHECK(hipHostFree(marks));
	sleep_ms(50);
}

static void many(void)
{
	uint32_t h;
	int fds1;

	if (!shim) {
		make_sem(&h, true, false);
		return;
	}
	many_round();
	fds1 = count_fds();
	many_round();
	/* eventfds of destroyed semaphores are closed again */
	CHECK(count_fds() == fds1, "fds: %d after round 1, %d after round 2", fds1, count_fds());
}

/* Stuck-wait watchdog: HIPEXTSEM_STUCK_MS and HIPEXTSEM_LOG_FILE come from
 * the case's environment; the log must name the wait exactly once. */
static void stuck(void)
{
	const char *log = getenv("HIPEXTSEM_LOG_FILE");
	uint32_t h;
	hipExternalSemaphore_t s;
	hipStream_t st;
	char buf[8192] = "";
	const char *age;
	double waited;
	FILE *f;
	int lines = 0, stuck_ms;

	CHECK(log && getenv("HIPEXTSEM_STUCK_MS"), "needs HIPEXTSEM_LOG_FILE and HIPEXTSEM_STUCK_MS");
	stuck_ms = atoi(getenv("HIPEXTSEM_STUCK_MS"));
	CHECK(stuck_ms > 0 && stuck_ms <= 300, "HIPEXTSEM_STUCK_MS=%d: the case needs 1..300", stuck_ms);
	f = fopen(log, "w"); /* the shim opens it on first use, after this */
	CHECK(f != NULL, "cannot create %s", log);
	fclose(f);
	s = make_sem(&h, true, false);
	if (!s)
		return;
	HIPCHECK(hipStreamCreate(&st));
	so_signal(drm, h, 2);
	/* The waiter thread running, then quiet for long enough to have no
	 * look planned: the next wait wakes it and is looked at at once. */
	HIPCHECK(wait1(s, 1, st));
	HIPCHECK(hipStreamSynchronize(st));
	sleep_ms(2 * stuck_ms + 100);
	/* Satisfied well within the period: never reported. */
	HIPCHECK(wait1(s, 3, st));
	sleep_ms(stuck_ms / 2);
	so_signal(drm, h, 3);
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(wait1(s, 5, st));
	sleep_ms(900); /* three watchdog periods: still one report */
	so_signal(drm, h, 5);
	HIPCHECK(hipStreamSynchronize(st));
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	f = fopen(log, "r");
	CHECK(f != NULL, "no log file %s", log);
	while (fgets(buf, sizeof(buf), f)) {
		if (strstr(buf, "stuck wait")) {
			lines++;
			CHECK(strstr(buf, "hipextsem: ") == buf, "unprefixed line: %s", buf);
			CHECK(strstr(buf, "to reach 5; current value 3"), "wrong values: %s", buf);
			CHECK(strstr(buf, "timeline semaphore"), "no semaphore kind: %s", buf);
			/* Never reported before it has been pending that long
			 * (the age is printed to 0.1 s). */
			age = strstr(buf, "has waited ");
			waited = age ? strtod(age + strlen("has waited "), NULL) : 0;
			CHECK(waited * 1000 + 50 >= stuck_ms,
			      "reported too early (HIPEXTSEM_STUCK_MS=%d): %s", stuck_ms, buf);
		}
	}
	fclose(f);
	CHECK(lines == 1, "%d stuck-wait reports, expected exactly 1", lines);
}

/* Activity for the trace check (tests/shim/trace_check.py): one import,
 * a wait on stream A released by a signal from stream B, one destroy.
 * With "crash", the process dies by SIGKILL in the middle. */
static void trace_activity(bool crash)
{
	uint32_t h;
	hipExternalSemaphore_t s = make_sem(&h, true, false);
	hipStream_t a, b;

	if (!s)
		return;
	HIPCHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
	HIPCHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
	HIPCHECK(wait1(s, 1, a));
	stream_delay(b, 50 * 1000);
	HIPCHECK(signal1(s, 1, b));
	HIPCHECK(hipStreamSynchronize(a));
	HIPCHECK(hipStreamSynchronize(b));
	if (crash) {
		HIPCHECK(wait1(s, 2, a));
		raise(SIGKILL);
	}
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(a));
	HIPCHECK(hipStreamDestroy(b));
}

static void trace_run(void)
{
	trace_activity(false);
}

static void trace_crash(void)
{
	trace_activity(true);
}

#define CELL(fn, name, a, b)                                                                 \
	static void fn(void)                                                                 \
	{                                                                                    \
		name(a, b);                                                                  \
	}
CELL(bin_signal_pre, signal_case, false, false)
CELL(bin_signal_wfs, signal_case, false, true)
CELL(tl_signal_pre, signal_case, true, false)
CELL(tl_signal_wfs, signal_case, true, true)
CELL(bin_wait_pre, wait_case, false, false)
CELL(bin_wait_wfs, wait_case, false, true)
CELL(tl_wait_pre, wait_case, true, false)
CELL(tl_wait_wfs, wait_case, true, true)
#undef CELL
static void hip_to_hip_bin(void)
{
	hip_to_hip(false);
}
static void hip_to_hip_tl(void)
{
	hip_to_hip(true);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "bin-signal-pre", bin_signal_pre }, { "bin-signal-wfs", bin_signal_wfs },
	{ "tl-signal-pre", tl_signal_pre },   { "tl-signal-wfs", tl_signal_wfs },
	{ "bin-wait-pre", bin_wait_pre },     { "bin-wait-wfs", bin_wait_wfs },
	{ "tl-wait-pre", tl_wait_pre },       { "tl-wait-wfs", tl_wait_wfs },
	{ "hip-to-hip-bin", hip_to_hip_bin }, { "hip-to-hip-tl", hip_to_hip_tl },
	{ "fd-ownership", fd_ownership },     { "bad-handles", bad_handles },
	{ "destroy-pending", destroy_pending }, { "mixed-array", mixed_array },
	{ "special-streams", special_streams }, { "two-processes", two_processes },
	{ "threads", threads },               { "many", many },
	{ "stuck", stuck },                   { "trace-run", trace_run },
	{ "trace-crash", trace_crash },       { "wait-path", wait_path },
	{ "wait-bad-stream", wait_bad_stream }, { "lookup-churn", lookup_churn },
};

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: case timed out (hang)\n";
	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(124);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "";

	signal(SIGALRM, on_alarm);
	alarm(90);
	shim = expect_shim();
	drm = drm_open();
	HIPCHECK(hipInit(0));
	HIPCHECK(hipSetDevice(0));

	{
		size_t i;
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
		cases[i].fn();
	}
	printf("ok %s (%s, abi%d)\n", name, shim ? "shim" : "stock", HX_TEST_ABI);
	return 0;
}
