/* SPDX-License-Identifier: MIT */
/*
 * demo-consumer: an ordinary HIP program.  It knows nothing about
 * hipextsem: it imports the producer's syncobjs through the HIP external
 * semaphore API and, every round, has its stream wait for the producer's
 * point, copy the frame, and signal back.  Run it with the shim preloaded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "demo_common.h"
#include "hipextsem/hip_api.h"

#define CHECK(call)                                                                          \
	do {                                                                                 \
		hipError_t e_ = (call);                                                      \
		if (e_ != hipSuccess) {                                                      \
			fprintf(stderr, "consumer: %s failed: %s (%d)\n", #call,             \
				hipGetErrorName(e_), (int)e_);                               \
			exit(1);                                                             \
		}                                                                            \
	} while (0)

/* The layouts of the runtime it is linked against (demo-consumer: 6.x,
 * demo-consumer-abi5: 5.x). */
#if DEMO_ABI == 5
typedef struct hx_sem_desc_v5 demo_desc;
typedef struct hx_sem_wait_params_v5 demo_wait_params;
typedef struct hx_sem_signal_params_v5 demo_signal_params;
#else
typedef struct hx_sem_desc_v6 demo_desc;
typedef struct hx_sem_wait_params_v6 demo_wait_params;
typedef struct hx_sem_signal_params_v6 demo_signal_params;
#endif

static hipExternalSemaphore_t import(int fd, int type)
{
	demo_desc d = { .type = type, .handle.fd = fd };
	hipExternalSemaphore_t s = NULL;
	CHECK(hipImportExternalSemaphore(&s, (const hipExternalSemaphoreHandleDesc *)&d));
	return s;
}

int main(void)
{
	const char *env = getenv("DEMO_SOCK_FD");
	int fds[3], version = 0;
	uint32_t rounds;
	struct demo_frame *frame;
	hipExternalSemaphore_t bin, tl;
	hipStream_t stream;
	uint64_t *staging;

	if (!env || demo_recv_fds(atoi(env), fds, 3, &rounds)) {
		fprintf(stderr, "consumer: no descriptors from the producer (DEMO_SOCK_FD)\n");
		return 1;
	}
	frame = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fds[2], 0);
	if (frame == MAP_FAILED) {
		perror("consumer: mmap");
		return 1;
	}
	CHECK(hipInit(0));
	CHECK(hipRuntimeGetVersion(&version));
	CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
	CHECK(hipHostMalloc((void **)&staging, sizeof(*staging), 0));
	bin = import(fds[0], HX_SEM_HANDLE_OPAQUE_FD);
	tl = import(fds[1], HX_SEM_HANDLE_TIMELINE_FD);
	printf("consumer: HIP runtime %d, imported binary %p and timeline %p\n", version, bin, tl);
	fflush(stdout);

	for (uint32_t r = 1; r <= rounds; r++) {
		demo_wait_params wp = { .params.fence.value = 2ull * r - 1 };
		demo_signal_params sp[2] = { { .params.fence.value = 0 },
						 { .params.fence.value = 2ull * r } };
		hipExternalSemaphore_t out[2] = { bin, tl };

		/* Everything is enqueued up front.  The shared page is memory
		 * the runtime did not allocate, so a copy into it (every
		 * release) or out of it (up to 6.3) returns only once done
		 * (clr ihipMemcpy): this thread waits there for the round's
		 * semaphore wait.  The semaphore calls never block. */
		CHECK(hipWaitExternalSemaphoresAsync(&tl, (const void *)&wp, 1, stream));
		CHECK(hipMemcpyAsync(staging, (const void *)&frame->produced, sizeof(*staging),
				     hipMemcpyHostToHost, stream));
		CHECK(hipMemcpyAsync((void *)&frame->consumed, staging, sizeof(*staging),
				     hipMemcpyHostToHost, stream));
		CHECK(hipSignalExternalSemaphoresAsync(out, (const void *)sp, 2, stream));
	}
	CHECK(hipStreamSynchronize(stream));
	CHECK(hipDestroyExternalSemaphore(bin));
	CHECK(hipDestroyExternalSemaphore(tl));
	CHECK(hipStreamDestroy(stream));
	CHECK(hipHostFree(staging));
	printf("consumer: %u rounds enqueued and drained\n", rounds);
	return 0;
}
