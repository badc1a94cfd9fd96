/* SPDX-License-Identifier: MIT */
/*
 * The main thread's first signal while another thread's dlopen runs a
 * constructor that forks (ctor_fork_lib.c).  The constructor holds glibc's
 * loader lock; the first signal registers the shim's exit hook, which takes
 * that lock; the fork runs the shim's fork handler, which takes the capture
 * guard.  The shim must never wait for the loader lock while it holds the
 * guard: both calls finish within 10 s.  argv[1]: the library's path.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#include "hxtest.h"

__attribute__((visibility("default"))) atomic_int hx_ctor_entered;

static void *load(void *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	CHECK(h != NULL, "dlopen %s: %s", (const char *)path, dlerror());
	return h;
}

int main(int argc, char **argv)
{
	struct timespec until;
	hipExternalSemaphore_t s;
	uint32_t h;
	pthread_t t;
	int drm;

	CHECK(argc == 2, "usage: ctor-fork LIBRARY");
	CHECK(expect_shim(), "this case tests the shim (HX_TEST_EXPECT=shim)");
	drm = drm_open();
	s = sem_import_new(drm, &h, false);
	CHECK(pthread_create(&t, NULL, load, argv[1]) == 0, "pthread_create");
	while (!atomic_load(&hx_ctor_entered))
		sleep_ms(1);
	/* The main thread's first signal, with the loader lock held. */
	HIPCHECK(signal1(s, 0, NULL));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	CHECK(pthread_timedjoin_np(t, NULL, &until) == 0,
	      "the dlopen whose constructor forks did not finish in 10 s");
	HIPCHECK(hipStreamSynchronize(NULL));
	CHECK(so_wait(drm, h, 0, 1000) == 0, "the signal did not arrive");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	printf("ok ctor-fork\n");
	return 0;
}
