/* SPDX-License-Identifier: MIT */
/* A library that defines its own puts() and asks for the next one, as an
 * interposer would: RTLD_NEXT must stay relative to this library even with
 * the shim's dlsym in front. */
#include <dlfcn.h>
#include <stdio.h>

void *paths_helper_next(const char *name);
void *paths_helper_vnext(const char *name, const char *ver);
void *paths_helper_default(const char *name);

/* No tail calls: dlsym must see a return address inside this library
 * (a sibling call would make RTLD_NEXT relative to our caller). */
#define NO_TAIL __attribute__((optimize("no-optimize-sibling-calls")))

NO_TAIL __attribute__((visibility("default"))) int puts(const char *s)
{
	int (*next)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "puts");
	return next ? next(s) : -1;
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
