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
 *   dlopen-loader SONAME mipmap   hipExternalMemoryGetMappedMipmappedArray,
 *                                 which no runtime exports: with
 *                                 HX_TEST_MIPMAP=hidden (cpuhip's
 *                                 CPUHIP_MIPMAP=hidden hands it out through
 *                                 hipGetProcAddress) dlsym/dlvsym on the
 *                                 handle give that function under the shim
 *                                 once the shim has used the runtime (NULL
 *                                 before: a lookup never starts it),
 *                                 NULL without it; with HX_TEST_MIPMAP=absent
 *                                 NULL and "not found" everywhere
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

typedef hipError_t mipmap_fn(void **mipmap, void *extMem, const void *desc);

/* A function answering as cpuhip's hidden one: hipErrorInvalidValue, and
 * cpuhip counts the call. */
static void mipmap_works(mipmap_fn *f, const char *how)
{
	int (*calls)(void);
	int before;
	hipError_t e;

	*(void **)&calls = dlsym(rt, "cpuhipTestMipmapCalls");
	CHECK(calls != NULL, "the runtime is not cpuhip's 6.x flavour");
	CHECK(strstr(file_of((void *)f), "libamdhip64"), "%s: %p lives in %s, not the runtime",
	      how, (void *)f, file_of((void *)f));
	before = calls();
	e = f(NULL, NULL, NULL);
	CHECK(e == hipErrorInvalidValue, "%s: answered %d, expected 1", how, (int)e);
	CHECK(calls() == before + 1, "%s: cpuhip's hidden function did not run", how);
}

static void mipmap_case(void)
{
	static const char name[] = "hipExternalMemoryGetMappedMipmappedArray";
	const char *m = getenv("HX_TEST_MIPMAP");
	bool hidden = m && strcmp(m, "hidden") == 0;
	__typeof__(hipGetProcAddress) *gpa, *gpa_spt;
	hipDriverProcAddressQueryResult st = HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
	void *by_dlsym, *by_dlvsym, *by_proc = (void *)1;
	const char *err;
	hipError_t e;

	CHECK(m && (hidden || strcmp(m, "absent") == 0), "HX_TEST_MIPMAP must be hidden or absent");
	/* Never a symbol of the process: not exported by the runtime, nor by
	 * the shim (docs/interposition.md). */
	CHECK(dlsym(RTLD_DEFAULT, name) == NULL, "%s is exported by %s", name,
	      file_of(dlsym(RTLD_DEFAULT, name)));
	(void)dlerror();
	by_dlsym = dlsym(rt, name);
	err = dlerror();
	if (shim && !rt_abi5) {
		/* Before the shim has used the runtime, a lookup does not start
		 * it (its hipGetProcAddress would): NULL, glibc's message. */
		int (*gwp)(int *, char *, size_t);

		CHECK(!by_dlsym && err && strstr(err, name),
		      "dlsym(%s) before the runtime was in use gave %p (dlerror() %s): the lookup "
		      "asked the runtime, starting it", name, by_dlsym, err ? err : "(none)");
		*(void **)&gwp = dlsym(RTLD_DEFAULT, "hipextsemGetWaitPath");
		CHECK(gwp, "hipextsemGetWaitPath not found");
		(void)gwp(NULL, NULL, 0); /* the shim's first use of the runtime */
		(void)dlerror();
		by_dlsym = dlsym(rt, name);
		err = dlerror();
	}
	/* dlerror() agrees with the answer: glibc's message for a NULL, none
	 * for a pointer. */
	CHECK(by_dlsym ? err == NULL : err && strstr(err, name),
	      "dlsym(%s) = %p, dlerror() %s", name, by_dlsym, err ? err : "(none)");
	by_dlvsym = dlvsym(rt, name, "hip_6.2");
	err = dlerror();
	CHECK(by_dlvsym ? err == NULL : err != NULL, "dlvsym(%s) = %p, dlerror() %s", name,
	      by_dlvsym, err ? err : "(none)");
	*(void **)&gpa = dlsym(rt, "hipGetProcAddress");
	if (rt_abi5) {
		CHECK(!gpa, "a 5.x runtime with hipGetProcAddress");
		CHECK(!by_dlsym && !by_dlvsym, "dlsym(%s) on a 5.x runtime gave %p", name, by_dlsym);
		return;
	}
	CHECK(gpa != NULL, "no hipGetProcAddress on a 6.x runtime");
	/* The pointer a loader gets for hipGetProcAddress is the shim's under
	 * the shim; either way the runtime's answer comes through unchanged. */
	CHECK(strstr(file_of((void *)gpa), shim ? "libextsem" : "libamdhip64"),
	      "hipGetProcAddress from %s", file_of((void *)gpa));
	e = gpa(name, &by_proc, 603, 0, &st);
	if (!hidden) {
		CHECK(e == hipErrorInvalidValue && st == HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND &&
			      by_proc == NULL,
		      "hipGetProcAddress(%s) answered %d, status %d, %p; expected 1, not found",
		      name, (int)e, (int)st, by_proc);
		CHECK(!by_dlsym, "dlsym(%s) gave %p (%s) on a runtime that hands it out nowhere",
		      name, by_dlsym, file_of(by_dlsym));
		CHECK(!by_dlvsym, "dlvsym(%s) gave %p", name, by_dlvsym);
		return;
	}
	CHECK(e == hipSuccess && st == HIP_GET_PROC_ADDRESS_SUCCESS && by_proc,
	      "hipGetProcAddress(%s) answered %d, status %d", name, (int)e, (int)st);
	mipmap_works((mipmap_fn *)by_proc, "hipGetProcAddress");
	*(void **)&gpa_spt = dlsym(rt, "hipGetProcAddress_spt");
	if (gpa_spt) {
		void *p = NULL;
		CHECK(gpa_spt(name, &p, 603, 0, &st) == hipSuccess && p == by_proc,
		      "hipGetProcAddress_spt(%s) gave %p, hipGetProcAddress %p", name, p, by_proc);
	}
	if (!shim) {
		/* What the shim adds: without it a dlopen loader cannot reach it. */
		CHECK(!by_dlsym && !by_dlvsym, "dlsym(%s) found %p without the shim", name,
		      by_dlsym);
		return;
	}
	CHECK(by_dlsym == by_proc, "dlsym(%s) on the runtime's handle gave %p, hipGetProcAddress %p",
	      name, by_dlsym, by_proc);
	CHECK(by_dlvsym == by_proc, "dlvsym(%s, hip_6.2) gave %p, hipGetProcAddress %p", name,
	      by_dlvsym, by_proc);
	mipmap_works((mipmap_fn *)by_dlsym, "dlsym");
	/* Only on the runtime's own handle. */
	CHECK(dlsym(RTLD_NEXT, name) == NULL, "dlsym(RTLD_NEXT, %s) found it", name);
}

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
	CHECK(argc == 3, "usage: dlopen-loader SONAME lookup|mipmap|signal");
	shim = expect_shim();
	CHECK(dlsym(RTLD_DEFAULT, "hipStreamCreate") == NULL,
	      "this program must not be linked to libamdhip64");
	rt_abi5 = strlen(argv[1]) > 2 && strcmp(argv[1] + strlen(argv[1]) - 2, ".5") == 0;
	rt = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	CHECK(rt != NULL, "dlopen(%s): %s", argv[1], dlerror());
	if (!strcmp(argv[2], "lookup"))
		lookup();
	else if (!strcmp(argv[2], "mipmap"))
		mipmap_case();
	else if (!strcmp(argv[2], "signal"))
		signal_case();
	else
		FAIL("unknown case %s", argv[2]);
	printf("ok %s %s (%s)\n", argv[1], argv[2], shim ? "shim" : "stock");
	return 0;
}
