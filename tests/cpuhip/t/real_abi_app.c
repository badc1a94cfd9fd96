/* SPDX-License-Identifier: MIT */
/*
 * Acceptance program: an ordinary HIP application, compiled against
 * Debian's real <hip/hip_runtime_api.h> and linked against Debian's real
 * libamdhip64.so.5.  Run with LD_LIBRARY_PATH pointing at cpuhip's abi5
 * build directory, it must load (every versioned reference resolves) and
 * behave like a GPU runtime.
 */
#include <hip/hip_runtime_api.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                                   \
	do {                                                                          \
		hipError_t e_ = (call);                                               \
		if (e_ != hipSuccess) {                                               \
			fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
				hipGetErrorName(e_));                                 \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

#define REQUIRE(cond)                                                                  \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: requirement failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                \
			exit(1);                                                       \
		}                                                                      \
	} while (0)

static pid_t cb_tid[3];
static int cb_order[3];
static int cb_count;
static unsigned int *shared_flag;

static void callback(hipStream_t stream, hipError_t status, void *user)
{
	int idx = (int)(long)user;
	cb_tid[idx] = (pid_t)syscall(SYS_gettid);
	cb_order[idx] = __atomic_add_fetch(&cb_count, 1, __ATOMIC_SEQ_CST);
	if (idx == 0)
		usleep(50000);
	(void)stream;
	(void)status;
}

static void *release_later(void *p)
{
	(void)p;
	usleep(50000);
	__atomic_store_n(shared_flag, 1u, __ATOMIC_RELEASE);
	return NULL;
}

int main(void)
{
	int n = 0, ver = 0, attr = -1;
	CHECK(hipInit(0));
	CHECK(hipGetDeviceCount(&n));
	REQUIRE(n >= 1);
	CHECK(hipRuntimeGetVersion(&ver));
	printf("runtime version %d\n", ver);
	CHECK(hipDeviceGetAttribute(&attr, hipDeviceAttributeCanUseStreamWaitValue, 0));
	REQUIRE(attr == 1);
	hipDeviceProp_t prop;
	CHECK(hipGetDeviceProperties(&prop, 0));
	printf("device: %s (%s), PCI %04x:%02x:%02x\n", prop.name, prop.gcnArchName,
	       prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);

	hipStream_t a, b;
	hipEvent_t start, done;
	CHECK(hipStreamCreate(&a));
	CHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
	CHECK(hipEventCreate(&start));
	CHECK(hipEventCreate(&done));

	unsigned int *host;
	CHECK(hipHostMalloc((void **)&host, 4096, hipHostMallocDefault));
	memset(host, 0, 4096);
	shared_flag = &host[0];
	unsigned int *devcopy;
	CHECK(hipMalloc((void **)&devcopy, 4));

	/* stream a: wait for a host thread's store, then write and copy */
	CHECK(hipEventRecord(start, a));
	CHECK(hipStreamWaitValue32(a, &host[0], 1, hipStreamWaitValueEq, 0xffffffff));
	CHECK(hipStreamWriteValue32(a, &host[1], 0xabcd, 0));
	/* into device memory: between two host allocations the copy would
	 * wait for the stream here, before the releasing thread exists (ROCclr
	 * copies host to host on the CPU after a GPU stall) */
	CHECK(hipMemcpyAsync(devcopy, &host[1], 4, hipMemcpyHostToDevice, a));
	CHECK(hipStreamAddCallback(a, callback, (void *)0L, 0));
	CHECK(hipEventRecord(done, a));

	/* stream b: ordered after a through the event */
	CHECK(hipStreamWaitEvent(b, done, 0));
	CHECK(hipStreamWriteValue64(b, &host[4], 0x1122334455667788ull, 0));
	CHECK(hipStreamAddCallback(b, callback, (void *)1L, 0));
	CHECK(hipMemsetAsync(&host[8], 0x5a, 16, b));

	REQUIRE(hipStreamQuery(a) == hipErrorNotReady);
	REQUIRE(hipStreamQuery(b) == hipErrorNotReady);
	REQUIRE(hipEventQuery(done) == hipErrorNotReady);

	pthread_t t;
	pthread_create(&t, NULL, release_later, NULL);
	CHECK(hipStreamSynchronize(b));
	pthread_join(t, NULL);

	REQUIRE(hipEventQuery(done) == hipSuccess);
	CHECK(hipMemcpy(&host[2], devcopy, 4, hipMemcpyDeviceToHost));
	REQUIRE(host[1] == 0xabcd && host[2] == 0xabcd);
	REQUIRE(*(unsigned long long *)&host[4] == 0x1122334455667788ull);
	REQUIRE(host[8] == 0x5a5a5a5a && host[11] == 0x5a5a5a5a);
	REQUIRE(cb_order[0] == 1 && cb_order[1] == 2);

	/* null stream callback */
	CHECK(hipStreamAddCallback(NULL, callback, (void *)2L, 0));
	CHECK(hipDeviceSynchronize());
	REQUIRE(cb_order[2] == 3);
	pid_t me = (pid_t)syscall(SYS_gettid);
	REQUIRE(cb_tid[0] == cb_tid[1] && cb_tid[1] == cb_tid[2]);
	REQUIRE(cb_tid[0] != me);

	float ms = 0;
	CHECK(hipEventElapsedTime(&ms, start, done));
	REQUIRE(ms >= 40.0f);
	printf("elapsed %.1f ms\n", ms);

	unsigned int out = 0;
	CHECK(hipMemcpy(&out, &host[2], 4, hipMemcpyHostToHost));
	REQUIRE(out == 0xabcd);

	CHECK(hipEventDestroy(start));
	CHECK(hipEventDestroy(done));
	CHECK(hipStreamDestroy(a));
	CHECK(hipStreamDestroy(b));
	CHECK(hipFree(devcopy));
	CHECK(hipHostFree(host));
	printf("real_abi_app: ok\n");
	return 0;
}
