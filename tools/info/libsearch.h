/* SPDX-License-Identifier: MIT */
/*
 * Where the dynamic loader would find a library, worked out without
 * loading it: DT_RPATH (when the program has no DT_RUNPATH), LD_LIBRARY_PATH,
 * DT_RUNPATH, /etc/ld.so.cache, then the default directories — glibc's
 * order (ld.so(8)).  A candidate counts only if it is an ELF file of this
 * process's class and machine, as for the loader.
 */
#ifndef HIPEXTSEM_INFO_LIBSEARCH_H
#define HIPEXTSEM_INFO_LIBSEARCH_H

#include <limits.h>
#include <stdbool.h>

struct lib_search_ctx {
	const char *rpath;   /* the program's DT_RPATH, NULL if none */
	const char *runpath; /* the program's DT_RUNPATH, NULL if none */
	const char *origin;  /* directory of the program, for $ORIGIN */
};

struct lib_hit {
	char path[PATH_MAX];
	const char *via; /* "DT_RPATH", "LD_LIBRARY_PATH", "DT_RUNPATH", "ld.so.cache",
			    "default directory" */
};

/* ctx may be NULL (no program: only the environment and the system). */
bool lib_search(const char *soname, const struct lib_search_ctx *ctx, struct lib_hit *hit);

#endif
