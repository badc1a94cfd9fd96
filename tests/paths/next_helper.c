/* SPDX-License-Identifier: MIT */
/* A library that defines its own paths_probe() and asks for the next one
 * (next_base.c's), as an interposer would: RTLD_NEXT must stay relative to
 * this library even with the shim's dlsym in front. */
#include <dlfcn.h>
#include <stdio.h>

int paths_probe(void);
int paths_base_anchor(void);

void *paths_helper_next(const char *name);
void *paths_helper_vnext(const char *name, const char *ver);
void *paths_helper_default(const char *name);

/* No tail calls: dlsym must see a return address inside this library
 * (a sibling call would make RTLD_NEXT relative to our caller). */
#define NO_TAIL __attribute__((optimize("no-optimize-sibling-calls")))

NO_TAIL __attribute__((visibility("default"))) int paths_probe(void)
{
	int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "paths_probe");
	return next ? 10 + next() : paths_base_anchor() - 1;
}

NO_TAIL __attribute__((visibility("default"))) void *paths_helper_next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

NO_TAIL __attribute__((visibility("default"))) void *paths_helper_vnext(const char *name, const char *ver)
{
	return dlvsym(RTLD_NEXT, name, ver);
}

NO_TAIL __attribute__((visibility("default"))) void *paths_helper_default(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}
