/* SPDX-License-Identifier: MIT */
/*
 * The shim's dlsym/dlvsym must leave RTLD_NEXT and RTLD_DEFAULT alone:
 * answers are compared with libc's own symbols, from the main program and
 * from a library (next_helper.c) that interposes paths_probe() and asks
 * for the next one (next_base.c).  Run with and without the preload; both must pass.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *paths_helper_next(const char *name);
void *paths_helper_vnext(const char *name, const char *ver);
void *paths_helper_default(const char *name);
int paths_probe(void);

#define CHECK(c, ...)                                                                        \
	do {                                                                                 \
		if (!(c)) {                                                                  \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);        \
			fprintf(stderr, __VA_ARGS__);                                        \
			fputc('\n', stderr);                                                 \
			exit(1);                                                             \
		}                                                                            \
	} while (0)

static const char *file_of(void *p)
{
	Dl_info i;
	return p && dladdr(p, &i) && i.dli_fname ? i.dli_fname : "(none)";
}

int main(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *base = dlopen("libpaths-next-base.so", RTLD_NOW | RTLD_NOLOAD);
	void *base_probe, *libc_getpid, *p;
	const char *e = getenv("HX_TEST_EXPECT");
	bool shim = dlsym(RTLD_DEFAULT, "hipextsemGetStats") != NULL;

	CHECK(e && (strcmp(e, "shim") == 0) == shim, "HX_TEST_EXPECT=%s, shim %s", e ? e : "",
	      shim ? "loaded" : "absent");
	CHECK(libc && base, "libc or libpaths-next-base not loaded?");
	base_probe = dlsym(base, "paths_probe");
	libc_getpid = dlsym(libc, "getpid");
	CHECK(base_probe && libc_getpid, "base/libc lookups");

	/* From the main program: the helper's paths_probe comes first. */
	p = dlsym(RTLD_DEFAULT, "paths_probe");
	CHECK(strstr(file_of(p), "paths-next-helper"), "RTLD_DEFAULT probe from %s", file_of(p));
	p = dlsym(RTLD_NEXT, "paths_probe");
	CHECK(strstr(file_of(p), "paths-next-helper"), "RTLD_NEXT probe from %s", file_of(p));
	CHECK(dlsym(RTLD_DEFAULT, "getpid") == libc_getpid, "RTLD_DEFAULT getpid");
	CHECK(dlsym(RTLD_NEXT, "getpid") == libc_getpid, "RTLD_NEXT getpid");
	CHECK(dlvsym(RTLD_NEXT, "getpid", "GLIBC_2.2.5") == libc_getpid, "dlvsym RTLD_NEXT getpid");
	CHECK(dlsym(RTLD_DEFAULT, "no_such_symbol_hx") == NULL, "missing symbol");
	CHECK(dlerror() != NULL, "dlerror after a failed lookup");

	/* From the helper: the next paths_probe is the base library's. */
	p = paths_helper_next("paths_probe");
	CHECK(p == base_probe, "helper RTLD_NEXT probe from %s", file_of(p));
	p = paths_helper_vnext("getpid", "GLIBC_2.2.5");
	CHECK(p == libc_getpid, "helper dlvsym RTLD_NEXT getpid from %s", file_of(p));
	p = paths_helper_default("paths_probe");
	CHECK(strstr(file_of(p), "paths-next-helper"), "helper RTLD_DEFAULT probe from %s",
	      file_of(p));
	CHECK(paths_probe() == 11, "paths_probe through the helper gave %d", paths_probe());

	/* A specific handle. */
	CHECK(dlsym(libc, "getpid") == libc_getpid, "handle lookup");
	CHECK(dlsym(libc, "no_such_symbol_hx") == NULL, "handle lookup of a missing symbol");
	printf("ok (%s)\n", shim ? "shim" : "stock");
	return 0;
}
