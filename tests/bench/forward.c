/* SPDX-License-Identifier: MIT */
/*
 * The forwarding benchmark's program: calls that the shim does not
 * implement (hipGetDevice, hipStreamQuery), many times, inside fwd_loop().
 * tests/bench/forward-compare runs it under callgrind with and without the
 * preload and compares the instructions executed inside fwd_loop(); the
 * calls before the loop resolve the PLT entries so that lazy binding is
 * not counted.
 */
#include <stdio.h>
#include <stdlib.h>

#include "hipextsem/hip_api.h"

#define ITERS 10000

__attribute__((noinline)) int fwd_loop(hipStream_t st);

__attribute__((noinline)) int fwd_loop(hipStream_t st)
{
	int dev = 0, bad = 0;
	for (int i = 0; i < ITERS; i++) {
		bad |= hipGetDevice(&dev) != hipSuccess;
		bad |= hipStreamQuery(st) != hipSuccess;
	}
	return bad;
}

int main(void)
{
	hipStream_t st;
	int dev;

	if (hipStreamCreate(&st) != hipSuccess) {
		fprintf(stderr, "forward: hipStreamCreate failed\n");
		return 1;
	}
	/* Warm-up: binds both PLT entries and initialises the runtime. */
	if (hipGetDevice(&dev) != hipSuccess || hipStreamQuery(st) != hipSuccess ||
	    hipStreamSynchronize(st) != hipSuccess) {
		fprintf(stderr, "forward: warm-up calls failed\n");
		return 1;
	}
	if (fwd_loop(st)) {
		fprintf(stderr, "forward: a call failed\n");
		return 1;
	}
	printf("forward: %d x (hipGetDevice + hipStreamQuery)\n", ITERS);
	return hipStreamDestroy(st) == hipSuccess ? 0 : 1;
}
