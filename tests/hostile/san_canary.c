/* SPDX-License-Identifier: MIT */
/*
 * A seeded bug, built into a shared library that is preloaded exactly like
 * the shim (san-canary-check runs it): proves that in the sanitizer builds a
 * bug in a preloaded, instrumented library is reported and fails the
 * process -- so a clean run of the suites means something.
 *   race      two threads write one global without a lock (TSan)
 *   overflow  a heap write one past the end (ASan)
 *   shift     an int shifted into the sign bit (UBSan)
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int racy;

static void *writer(void *p)
{
	racy += (int)(long)p;
	return NULL;
}

__attribute__((visibility("default"))) int hx_canary(const char *what);

int hx_canary(const char *what)
{
	if (!strcmp(what, "race")) {
		pthread_t a, b;
		pthread_create(&a, NULL, writer, (void *)1L);
		pthread_create(&b, NULL, writer, (void *)2L);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		return racy;
	}
	if (!strcmp(what, "overflow")) {
		char *volatile p = malloc(16);
		volatile size_t n = 17;
		int r;
		memset(p, 0, n);
		r = p[3];
		free(p);
		return r;
	}
	if (!strcmp(what, "shift")) {
		volatile int v = 1, s = 31 + (int)strlen(what) - 5;
		return v << s;
	}
	return -1;
}
