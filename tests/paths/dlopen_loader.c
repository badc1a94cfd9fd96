/* SPDX-License-Identifier: MIT */
/*
 * A loader in the style of sgl, Orochi and hipew: NOT linked to
 * libamdhip64; it dlopen()s the runtime (RTLD_LOCAL, after program start)
 * and takes every function from dlsym(handle, ...).
 *
 *   dlopen-loader SONAME lookup   pointers: the four semaphore calls come
 *                                 from the shim (HX_TEST_EXPECT=shim) or the
 *                                 runtime (stock); everything else from the
 *                                 runtime either way; dlvsym likewise
 *   dlopen-loader SONAME signal   (VM) import a timeline syncobj, signal it
 *                                 from a stream, destroy: all through the
 *                                 dlsym'd pointers
 */
#include "hxtest.h"

static void *rt;
static bool shim;

#define LOAD(var, name)                                                                      \
	do {                                                                                 \
		*(void **)&(var) = dlsym(rt, name);                                          \
		CHECK((var) != NULL, "dlsym(%s): %s", name, dlerror());                      \
	} while (0)

static const char *file_of(const void *p)
{
	Dl_info i;
	return p && dladdr((void *)p, &i) && i.dli_fname ? i.dli_fname : "(none)";
}

static void lookup(void)
{
	static const char *const sems[] = {
		"hipImportExternalSemaphore", "hipSignalExternalSemaphoresAsync",
		"hipWaitExternalSemaphoresAsync", "hipDestroyExternalSemaphore",
	};
	const char *want = shim ? "libextsem" : "libamdhip64";
	void *p;

	for (size_t i = 0; i < 4; i++) {
		p = dlsym(rt, sems[i]);
		CHECK(p && strstr(file_of(p), want), "dlsym(%s) from %s, expected %s", sems[i],
		      file_of(p), want);
		p = dlvsym(rt, sems[i], "hip_4.3");
		CHECK(p && strstr(file_of(p), want), "dlvsym(%s, hip_4.3) from %s", sems[i],
		      file_of(p));
	}
	/* A version the runtime does not define: no answer, as without the shim. */
	CHECK(dlvsym(rt, "hipImportExternalSemaphore", "hip_9.9") == NULL, "dlvsym bad version");
	p = dlsym(rt, "hipStreamCreate");
	CHECK(p && strstr(file_of(p), "libamdhip64"), "hipStreamCreate from %s", file_of(p));
	CHECK(dlsym(rt, "hipNoSuchFunction") == NULL, "unknown name found");
	/* The shim's extra 6.x exports are not made up for a runtime lacking them. */
	if (!dlsym(rt, "hipLaunchHostFunc"))
		CHECK(dlsym(rt, "hipGetProcAddress") == NULL, "hipGetProcAddress on a 5.x runtime");
}

/* The runtime loaded is a 5.x one (its soname ends in .5). */
static bool rt_abi5;

static void signal_case(void)
{
	__typeof__(hipImportExternalSemaphore) *imp;
	__typeof__(hipSignalExternalSemaphoresAsync) *sig;
	__typeof__(hipDestroyExternalSemaphore) *des;
	__typeof__(hipStreamCreate) *screate;
	__typeof__(hipStreamSynchronize) *ssync;
	__typeof__(hipStreamDestroy) *sdestroy;
	int drm = drm_open();
	uint32_t h = so_create(drm, false);
	int fd = so_export(drm, h);
	hipExternalSemaphore_t s = NULL;
	hipStream_t st;
	hipError_t e;
	/* Large enough for either layout; the runtime reads its own. */
	union {
		struct hx_sem_desc_v5 v5;
		struct hx_sem_desc_v6 v6;
	} d;
	union {
		struct hx_sem_signal_params_v5 v5;
		struct hx_sem_signal_params_v6 v6;
	} sp;

	LOAD(imp, "hipImportExternalSemaphore");
	LOAD(sig, "hipSignalExternalSemaphoresAsync");
	LOAD(des, "hipDestroyExternalSemaphore");
	LOAD(screate, "hipStreamCreate");
	LOAD(ssync, "hipStreamSynchronize");
	LOAD(sdestroy, "hipStreamDestroy");
	memset(&d, 0, sizeof(d));
	memset(&sp, 0, sizeof(sp));
	d.v6.type = HX_SEM_HANDLE_OPAQUE_FD; /* type@0 and fd@8 in both layouts */
	d.v6.handle.fd = fd;
	e = imp(&s, (const hipExternalSemaphoreHandleDesc *)&d);
	if (!shim) {
		/* 5.2 (the abi5 flavour's default) answers 1 for every failed
		 * import, later releases 801 (tests/cpuhip). */
		const char *r = getenv("CPUHIP_ROCM");
		bool r52 = rt_abi5 && (!r || !*r || strcmp(r, "5.2") == 0);

		EXPECT_ERR(e, r52 ? hipErrorInvalidValue : hipErrorNotSupported);
		close(fd);
		return;
	}
	HIPCHECK(e);
	HIPCHECK(screate(&st));
	HIPCHECK(sig(&s, (const hipExternalSemaphoreSignalParams *)&sp, 1, st));
	CHECK(so_wait(drm, h, 0, 5000) == 0, "not signaled through the dlsym'd pointer");
	HIPCHECK(ssync(st));
	HIPCHECK(des(s));
	HIPCHECK(sdestroy(st));
}

int main(int argc, char **argv)
{
	CHECK(argc == 3, "usage: dlopen-loader SONAME lookup|signal");
	shim = expect_shim();
	CHECK(dlsym(RTLD_DEFAULT, "hipStreamCreate") == NULL,
	      "this program must not be linked to libamdhip64");
	rt_abi5 = strlen(argv[1]) > 2 && strcmp(argv[1] + strlen(argv[1]) - 2, ".5") == 0;
	rt = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	CHECK(rt != NULL, "dlopen(%s): %s", argv[1], dlerror());
	if (!strcmp(argv[2], "lookup"))
		lookup();
	else if (!strcmp(argv[2], "signal"))
		signal_case();
	else
		FAIL("unknown case %s", argv[2]);
	printf("ok %s %s (%s)\n", argv[1], argv[2], shim ? "shim" : "stock");
	return 0;
}
