/* SPDX-License-Identifier: MIT */
/*
 * A thread's first HIP call is a semaphore call while another thread's
 * dlopen runs a plugin constructor that forks (fork_ctor_lib.c): the
 * constructor holds glibc's loader lock, and the shim's fork handlers wait
 * for its capture guard and graph locks.  The runtime makes a thread's own
 * state at its first call (clr: thread_local hip::tls, whose destructor
 * registration takes the loader lock): made inside the guard, the two
 * threads would wait for each other.  The shim makes it before (runtime.h:
 * hx_runtime_thread_prepare).
 *
 *   fork-ctor CALL    CALL: signal, wait or launch (a graph with a wait
 *                     node); the program must end, and the call succeed.
 *   fork-ctor CALL-pts  the same on the worker's hipStreamPerThread, the
 *                     call its first use of it: on 5.2 that stream is a
 *                     thread_local whose destructor registration takes the
 *                     loader lock too (streams.h: hx_stream_pts_prepare).
 *   fork-ctor first   the worker's import is the process's first call of
 *                     the shim, and the constructor calls the shim too
 *                     (after 500 ms, the loader lock still held): the
 *                     shim's set-up must not wait for the loader's lock
 *                     in a once the constructor's call waits for.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "hipextsem/hip_graph.h"
#include "hxtest.h"

static atomic_int in_ctor;
static hipExternalSemaphore_t sem;
static hipStream_t stream;
static const char *call;
static bool pts; /* the worker's calls go to its hipStreamPerThread */
static hipError_t worker_err = hipErrorUnknown;

/* Called by the plugin's constructor (loader lock held). */
__attribute__((visibility("default"))) void (*hx_fork_ctor_hook)(void);

static void hook(void)
{
	atomic_store(&in_ctor, 1);
	sleep_ms(500); /* the worker makes its first call meanwhile */
	if (!strcmp(call, "first"))
		CHECK(hipDestroyExternalSemaphore(NULL) != hipSuccess,
		      "hipDestroyExternalSemaphore(NULL) succeeded");
}

static int first_drm;
static uint32_t first_h;

static hipGraphExec_t wait_exec(void)
{
	hx_graph_add_ext_sem_node_fn *add = (hx_graph_add_ext_sem_node_fn *)dlsym(
		RTLD_DEFAULT, "hipGraphAddExternalSemaphoresWaitNode");
	static test_wait_params p;
	struct hx_ext_sem_node_params np = { &sem, &p, 1 };
	hipGraphNode_t n;
	hipGraphExec_t x;
	hipGraph_t g;

	CHECK(add, "hipGraphAddExternalSemaphoresWaitNode not found");
	memset(&p, 0, sizeof(p));
	HIPCHECK(hipGraphCreate(&g, 0));
	HIPCHECK(add(&n, g, NULL, 0, &np));
	HIPCHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
	return x;
}

static void *worker(void *arg)
{
	hipGraphExec_t x = arg;
	hipStream_t s = pts ? hipStreamPerThread : stream;

	while (!atomic_load(&in_ctor))
		sleep_ms(1);
	sleep_ms(50);
	if (!strcmp(call, "first"))
		worker_err = import_fd(&sem, so_export(first_drm, first_h), false);
	else if (!strcmp(call, "signal"))
		worker_err = signal1(sem, 0, s);
	else if (!strcmp(call, "wait"))
		worker_err = wait1(sem, 0, s);
	else
		worker_err = hipGraphLaunch(x, s);
	/* the per-thread stream's work is done before the thread ends */
	if (pts && worker_err == hipSuccess)
		worker_err = hipStreamSynchronize(s);
	return NULL;
}

int main(int argc, char **argv)
{
	int drm = drm_open();
	hipGraphExec_t x = NULL;
	char path[4096], *slash;
	uint32_t h = 0;
	pthread_t t;
	void *lib;

	static char base[16];

	CHECK(argc == 2 && strlen(argv[1]) < sizeof(base), "usage: fork-ctor CALL");
	snprintf(base, sizeof(base), "%s", argv[1]);
	if (strlen(base) > 4 && !strcmp(base + strlen(base) - 4, "-pts")) {
		pts = true;
		base[strlen(base) - 4] = 0;
	}
	CHECK(!strcmp(base, "signal") || !strcmp(base, "wait") || !strcmp(base, "launch") ||
		      (!strcmp(base, "first") && !pts),
	      "usage: fork-ctor signal|wait|launch[-pts]|first");
	CHECK(expect_shim(), "run with the shim (HX_TEST_EXPECT=shim)");
	call = base;
	alarm(60);
	HIPCHECK(hipStreamCreate(&stream));
	if (!strcmp(call, "first")) {
		first_drm = drm;
		first_h = h = so_create(drm, false);
	} else {
		sem = sem_import_new(drm, &h, false);
	}
	if (strcmp(call, "signal") && strcmp(call, "first"))
		so_signal(drm, h, 0); /* the wait passes */
	if (!strcmp(call, "launch"))
		x = wait_exec();
	hx_fork_ctor_hook = hook;
	CHECK(pthread_create(&t, NULL, worker, x) == 0, "pthread_create");
	snprintf(path, sizeof(path) - 32, "%s", argv[0]);
	slash = strrchr(path, '/');
	CHECK(slash, "argv[0] %s has no directory", argv[0]);
	strcpy(slash + 1, "libhx-fork-ctor.so");
	lib = dlopen(path, RTLD_NOW);
	CHECK(lib, "dlopen: %s", dlerror());
	pthread_join(t, NULL);
	HIPCHECK(worker_err);
	HIPCHECK(hipStreamSynchronize(stream));
	if (!strcmp(call, "signal"))
		CHECK(so_wait(drm, h, 0, 5000) == 0, "the worker's signal was not issued");
	if (x)
		HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipStreamDestroy(stream));
	HIPCHECK(hipDestroyExternalSemaphore(sem));
	printf("ok fork-ctor %s%s\n", call, pts ? "-pts" : "");
	return 0;
}
