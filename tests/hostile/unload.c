/* SPDX-License-Identifier: MIT */
/*
 * hostile-unload LIBNAME: an application that loads the HIP runtime with
 * dlopen (not linked against it), uses the preloaded shim, then dlclose()s
 * the runtime.  The shim must hold its own reference: code it calls can
 * never be unmapped under it (a later call, or exit, would jump into
 * nothing).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*init_fn)(unsigned);
typedef int (*import_fn)(void **, const void *);
typedef int (*signal_fn)(void *const *, const void *, unsigned, void *);

#define FAIL(...)                                                                            \
	do {                                                                                 \
		fprintf(stderr, "FAIL: " __VA_ARGS__);                                       \
		fputc('\n', stderr);                                                         \
		exit(1);                                                                     \
	} while (0)

int main(int argc, char **argv)
{
	void *rt, *again, *s = NULL, *garbage = (void *)0x1234;
	unsigned char params[144] = { 0 };
	import_fn imp;
	signal_fn sig;
	init_fn init;

	if (argc != 2)
		return 2;
	if (!dlsym(RTLD_DEFAULT, "hipextsemGetStats"))
		FAIL("the shim is not preloaded");
	rt = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!rt)
		FAIL("dlopen %s: %s", argv[1], dlerror());
	init = (init_fn)dlsym(rt, "hipInit");
	imp = (import_fn)dlsym(RTLD_DEFAULT, "hipImportExternalSemaphore");
	sig = (signal_fn)dlsym(RTLD_DEFAULT, "hipSignalExternalSemaphoresAsync");
	if (!init || !imp || !sig || init(0) != 0)
		FAIL("runtime setup");
	if (imp(&s, NULL) != 1) /* resolves the runtime inside the shim */
		FAIL("import(NULL desc) did not return hipErrorInvalidValue");
	if (dlclose(rt) != 0)
		FAIL("dlclose: %s", dlerror());
	again = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
	if (!again)
		FAIL("the runtime was unmapped although the shim still uses it");
	dlclose(again);
	if (sig(&garbage, params, 1, NULL) != 400)
		FAIL("signal with a garbage handle after dlclose");
	printf("ok unload %s\n", argv[1]);
	return 0;
}
