/* SPDX-License-Identifier: MIT */
/*
 * A HIP program for the real-runtime checks (tests/realrt/run-realrt):
 * loads the runtime by soname, as loaders such as Orochi or hipew do, and
 * calls a broad set of HIP APIs through dlsym, printing each answer.
 *
 *   rt-app SONAME calls       the API sweep (hipextsem-regress compares it
 *                             with and without the shim); its first call is
 *                             a semaphore call, so that the run also shows
 *                             which call sees the runtime's initialisation
 *   rt-app SONAME procaddr    hipGetProcAddress and hipGetDriverEntryPoint(_spt)
 *                             as dlsym on the handle hands them out, and
 *                             the four semaphore calls as dlsym and those
 *                             hand them out: each must be the shim's (exit
 *                             1 otherwise); and dlsym of
 *                             hipExternalMemoryGetMappedMipmappedArray must
 *                             give what hipGetProcAddress gives (NULL where
 *                             it gives nothing)
 *
 * No HIP header: the few types are spelled out (their layout does not
 * matter for the calls made here, which pass NULL or scalars).
 */

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*fn_int_p)(int *);
typedef int (*fn_void)(void);
typedef int (*fn_p)(void *);
typedef int (*fn_pp)(void *, void *);
typedef int (*fn_pu)(void *, unsigned);
typedef int (*fn_pz)(void *, size_t);
typedef int (*fn_pzu)(void *, size_t, unsigned);
typedef int (*fn_ppup)(void *, void *, unsigned, void *);
typedef const char *(*fn_str)(int);
typedef int (*fn_attr)(int *, int, int);
typedef int (*fn_procaddr)(const char *, void **, int, uint64_t, int *);
typedef int (*fn_entry)(const char *, void **, unsigned long long, int *);

static void *h;

static void *sym(const char *name)
{
	return dlsym(h, name);
}

#define CALL(name, type, ...)                                                               \
	do {                                                                                \
		type f_ = (type)sym(name);                                                  \
		if (!f_)                                                                    \
			printf("%-36s absent\n", name);                                     \
		else                                                                        \
			printf("%-36s %d\n", name, f_(__VA_ARGS__));                        \
	} while (0)

static void calls(void)
{
	int v = -7, i;
	void *p = NULL;

	/* First: a semaphore call (it sees initialisation without a shim). */
	CALL("hipImportExternalSemaphore", fn_pp, NULL, NULL);
	CALL("hipImportExternalSemaphore", fn_pp, NULL, NULL);
	CALL("hipSignalExternalSemaphoresAsync", fn_ppup, NULL, NULL, 0, NULL);
	CALL("hipWaitExternalSemaphoresAsync", fn_ppup, NULL, NULL, 0, NULL);
	CALL("hipDestroyExternalSemaphore", fn_p, NULL);
	CALL("hipGetDeviceCount", fn_int_p, &v);
	printf("  count %d\n", v);
	CALL("hipGetDevice", fn_int_p, &v);
	CALL("hipSetDevice", fn_pu, (void *)0, 0);
	CALL("hipDeviceSynchronize", fn_void);
	CALL("hipGetLastError", fn_void);
	CALL("hipPeekAtLastError", fn_void);
	CALL("hipMalloc", fn_pz, &p, 64);
	CALL("hipHostMalloc", fn_pzu, &p, 64, 0);
	CALL("hipStreamCreate", fn_p, &p);
	CALL("hipEventCreate", fn_p, &p);
	CALL("hipStreamSynchronize", fn_p, NULL);
	CALL("hipStreamQuery", fn_p, NULL);
	{
		fn_attr f = (fn_attr)sym("hipDeviceGetAttribute");
		printf("%-36s %d\n", "hipDeviceGetAttribute(10013)", f ? f(&i, 10013, 0) : -1);
	}
	CALL("hipDriverGetVersion", fn_int_p, &v);
	CALL("hipInit", fn_pu, NULL, 0);
	{
		fn_str f = (fn_str)sym("hipGetErrorName");
		for (i = 0; f && i < 4; i++) {
			static const int codes[] = { 0, 1, 100, 801 };
			printf("hipGetErrorName(%d) %s\n", codes[i], f(codes[i]));
		}
	}
	CALL("hipGetLastError", fn_void);
}

/* The shim's own function for `name` (NULL if no shim is loaded). */
static void *shim_fn(const char *name)
{
	void *s = dlopen("libextsem.so", RTLD_LAZY | RTLD_NOLOAD);
	return s ? dlsym(s, name) : NULL;
}

static int procaddr(void)
{
	static const char *const names[] = {
		"hipImportExternalSemaphore", "hipSignalExternalSemaphoresAsync",
		"hipWaitExternalSemaphoresAsync", "hipDestroyExternalSemaphore",
	};
	fn_procaddr gpa = (fn_procaddr)sym("hipGetProcAddress");
	fn_entry gde = (fn_entry)sym("hipGetDriverEntryPoint");
	fn_entry gdes = (fn_entry)sym("hipGetDriverEntryPoint_spt");
	int bad = 0;

	/* The entry points that hand out functions are the shim's too
	 * (where the runtime has them): otherwise they are a way around it. */
	static const char *const getters[] = {
		"hipGetProcAddress", "hipGetDriverEntryPoint", "hipGetDriverEntryPoint_spt",
	};
	for (size_t i = 0; i < sizeof(getters) / sizeof(getters[0]); i++) {
		void *p = sym(getters[i]), *want = shim_fn(getters[i]);
		if (!p)
			continue;
		printf("dlsym %s: %s\n", getters[i], p == want ? "shim" : "RUNTIME");
		bad |= p != want;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *want = shim_fn(names[i]), *p;
		int st = -1, r;

		if (!want) {
			printf("FAIL no shim function for %s (is the shim preloaded?)\n", names[i]);
			return 1;
		}
		p = sym(names[i]);
		printf("dlsym %s: %s\n", names[i], p == want ? "shim" : "RUNTIME");
		bad |= p != want;
		if (gpa) {
			p = NULL;
			r = gpa(names[i], &p, 700, 0, &st);
			/* With no device the runtime may refuse; a pointer it does
			 * hand out must be the shim's. */
			printf("hipGetProcAddress %s: %d %s\n", names[i], r,
			       !p ? "(none)" : p == want ? "shim" : "RUNTIME");
			bad |= p && p != want;
		}
		if (gde) {
			p = NULL;
			r = gde(names[i], &p, 0, &st);
			printf("hipGetDriverEntryPoint %s: %d %s\n", names[i], r,
			       !p ? "(none)" : p == want ? "shim" : "RUNTIME");
			bad |= p && p != want;
		}
		if (gdes) {
			p = NULL;
			r = gdes(names[i], &p, 0, &st);
			printf("hipGetDriverEntryPoint_spt %s: %d %s\n", names[i], r,
			       !p ? "(none)" : p == want ? "shim" : "RUNTIME");
			bad |= p && p != want;
		}
	}
	/* hipExternalMemoryGetMappedMipmappedArray: no release exports it.
	 * dlsym on the runtime's handle gives, through the shim, what the
	 * runtime's hipGetProcAddress hands out, nothing more; never a symbol
	 * of the process. */
	{
		static const char mm[] = "hipExternalMemoryGetMappedMipmappedArray";
		void *by_dlsym = sym(mm), *by_proc = NULL;
		int st = -1, r = -1;

		if (gpa)
			r = gpa(mm, &by_proc, 700, 0, &st);
		printf("dlsym %s: %s; hipGetProcAddress: %d, status %d, %s\n", mm,
		       by_dlsym ? "found" : "(none)", r, st, by_proc ? "found" : "(none)");
		bad |= by_dlsym != by_proc;
		if (dlsym(RTLD_DEFAULT, mm)) {
			printf("FAIL %s is a symbol of the process\n", mm);
			bad = 1;
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: rt-app SONAME calls|procaddr\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen %s: %s\n", argv[1], dlerror());
		return 1;
	}
	if (!strcmp(argv[2], "calls")) {
		calls();
		return 0;
	}
	if (!strcmp(argv[2], "procaddr"))
		return procaddr();
	return 2;
}
