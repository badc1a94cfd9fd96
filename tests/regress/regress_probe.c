/* SPDX-License-Identifier: MIT */
/*
 * A HIP program (linked against the CPU reference runtime) for the checks
 * of hipextsem-regress itself (tests/regress/regress-cases):
 *
 *   regress-probe [print]   prints whether the shim is loaded: output that
 *                           differs between the runs, which must be caught
 *   regress-probe quiet     prints "ok" and makes no semaphore call
 *   regress-probe sem       calls hipDestroyExternalSemaphore once (its
 *                           answer is not printed: it is the runtime's
 *                           without the shim and the shim's with it)
 *
 * Any further arguments are ignored.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "hipextsem/hip_api.h"

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "print";
	int n = 0;

	/* A call into the runtime, so that it is loaded and used. */
	(void)hipGetDeviceCount(&n);
	if (!strcmp(mode, "print")) {
		printf("shim %s\n", dlsym(RTLD_DEFAULT, "hipextsemGetStats") ? "loaded" : "absent");
	} else if (!strcmp(mode, "quiet")) {
		printf("ok\n");
	} else if (!strcmp(mode, "sem")) {
		(void)hipDestroyExternalSemaphore(NULL);
		printf("ok\n");
	} else {
		fprintf(stderr, "usage: regress-probe [print|quiet|sem] [ARG...]\n");
		return 2;
	}
	return 0;
}
