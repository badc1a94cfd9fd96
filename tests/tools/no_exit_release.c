/* SPDX-License-Identifier: MIT */
/*
 * Preloaded in front of the shim by the selftest-no-exit-release case
 * (check_selftest.py): it plays a shim that lost its release of pending
 * waits at exit on the main thread.  The shim registers that release with
 * __cxa_thread_atexit_impl (shim/streams.c); this library drops every
 * registration made on behalf of libextsem.so and passes every other one
 * (the runtime's teardown of its per-thread stream included) on to libc.
 * With it, a process that returns from main with a wait pending on
 * hipStreamPerThread blocks in the runtime's teardown, which is what
 * hipextsem-info --selftest's exit-with-wait-pending must notice.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*thread_atexit_fn)(void (*fn)(void *), void *obj, void *dso_symbol);

int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso_symbol);

static int from_shim(void *dso_symbol)
{
	Dl_info di;
	const char *base;

	if (!dladdr(dso_symbol, &di) || !di.dli_fname)
		return 0;
	base = strrchr(di.dli_fname, '/');
	base = base ? base + 1 : di.dli_fname;
	return !strncmp(base, "libextsem.so", 12);
}

int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso_symbol)
{
	static thread_atexit_fn next;

	if (from_shim(dso_symbol)) {
		fprintf(stderr, "no-exit-release: dropped the shim's thread-exit handler\n");
		return 0;
	}
	if (!next)
		next = (thread_atexit_fn)dlsym(RTLD_NEXT, "__cxa_thread_atexit_impl");
	return next ? next(fn, obj, dso_symbol) : -1;
}
