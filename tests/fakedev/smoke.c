/* The fake device under AMD's real HIP runtime, no shim: what the shim
 * relies on must work for real before the shim is tested on it.  One
 * device; streams; host memory; events; a stream callback that runs on a
 * thread other than the caller's (ROCr's async-events thread); a
 * stream wait-value that holds its stream (and a stream waiting on an
 * event recorded behind it) until another thread writes the value, the
 * stream querying "not ready" meanwhile; write-value; clean teardown.
 * Built against the HIP headers of the release it runs on.
 *
 * "fakedev-smoke unknown-kernel": a kernel the fake does not execute (clr's
 * memset kernel, here) must abort the process with the fake's message,
 * never complete as a no-op. */
#include <hip/hip_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(x)                                                                    \
	do {                                                                        \
		hipError_t e_ = (x);                                                \
		if (e_ != hipSuccess) {                                             \
			fprintf(stderr, "FAIL %s:%d: %s -> %d\n", __FILE__, __LINE__, #x, \
				(int)e_);                                           \
			exit(1);                                                    \
		}                                                                   \
	} while (0)
#define EXPECT(c, ...)                                                              \
	do {                                                                        \
		if (!(c)) {                                                         \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);    \
			fprintf(stderr, __VA_ARGS__);                               \
			fputc('\n', stderr);                                        \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

static long cb_tid;
static void cb(hipStream_t s, hipError_t st, void *a)
{
	(void)s;
	(void)st;
	*(volatile int *)a = 42;
	cb_tid = syscall(SYS_gettid);
}

static volatile uint64_t *slot;
static void *writer(void *a)
{
	(void)a;
	usleep(300000);
	__atomic_store_n(slot, 5, __ATOMIC_SEQ_CST);
	return NULL;
}

/* The child dispatches clr's fill kernel; the parent wants SIGABRT and
 * "fakedev: FATAL" on the child's stderr within 60 s. */
static int unknown_kernel(void)
{
	int p[2];
	char buf[4096] = "";
	size_t got = 0;
	if (pipe(p) != 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		void *d;
		dup2(p[1], 2);
		alarm(60);
		CHECK(hipMalloc(&d, 4096));
		CHECK(hipMemsetAsync(d, 0x5a, 4096, NULL));
		CHECK(hipDeviceSynchronize());
		_exit(0); /* reached only if the kernel "ran" */
	}
	close(p[1]);
	ssize_t r;
	while (got < sizeof(buf) - 1 && (r = read(p[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)r;
	int st = 0;
	waitpid(pid, &st, 0);
	EXPECT(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "the child ended with status %#x", st);
	EXPECT(strstr(buf, "fakedev: FATAL: dispatch of kernel __amd_rocclr_fillBuffer") != NULL,
	       "no fatal message for the unknown kernel; stderr was: %s", buf);
	printf("fakedev smoke: an unknown kernel aborts\n");
	return 0;
}

int main(int argc, char **argv)
{
	int n = 0;
	hipStream_t s, s2;
	hipEvent_t ev;
	volatile uint64_t *h;
	pthread_t t;

	if (argc > 1 && strcmp(argv[1], "unknown-kernel") == 0)
		return unknown_kernel();
	CHECK(hipGetDeviceCount(&n));
	EXPECT(n == 1, "%d devices", n);
	CHECK(hipStreamCreate(&s));
	CHECK(hipStreamCreate(&s2));
	CHECK(hipHostMalloc((void **)&h, 4096, 0));
	for (int i = 0; i < 512; i++)
		h[i] = 0;
	CHECK(hipEventCreate(&ev));
	CHECK(hipEventRecord(ev, s));
	CHECK(hipEventSynchronize(ev));

	CHECK(hipStreamAddCallback(s, cb, (void *)h, 0));
	CHECK(hipStreamSynchronize(s));
	EXPECT(*(volatile int *)h == 42, "callback did not run");
	EXPECT(cb_tid != 0 && cb_tid != syscall(SYS_gettid), "callback ran on thread %ld", cb_tid);

	slot = h + 8;
	CHECK(hipStreamWaitValue64(s, (void *)slot, 5, hipStreamWaitValueGte, ~0ULL));
	CHECK(hipStreamWriteValue64(s, (void *)(h + 16), 77, 0));
	CHECK(hipEventRecord(ev, s));
	CHECK(hipStreamWaitEvent(s2, ev, 0));
	CHECK(hipStreamWriteValue64(s2, (void *)(h + 24), 88, 0));
	pthread_create(&t, NULL, writer, NULL);
	usleep(100000);
	hipError_t q = hipStreamQuery(s);
	EXPECT(q == hipErrorNotReady, "query while held answered %d", (int)q);
	EXPECT(h[16] == 0 && h[24] == 0, "work behind the wait ran early (%llu %llu)",
	       (unsigned long long)h[16], (unsigned long long)h[24]);
	CHECK(hipStreamSynchronize(s2));
	EXPECT(h[16] == 77 && h[24] == 88, "after the write: %llu %llu", (unsigned long long)h[16],
	       (unsigned long long)h[24]);
	pthread_join(t, NULL);

	CHECK(hipStreamDestroy(s));
	CHECK(hipStreamDestroy(s2));
	CHECK(hipEventDestroy(ev));
	CHECK(hipHostFree((void *)h));
	printf("fakedev smoke: ok (callback on thread %ld)\n", cb_tid);
	return 0;
}
