/* SPDX-License-Identifier: MIT */
/*
 * Where the dynamic loader would find a library, worked out without
 * loading it: DT_RPATH (when the program has no DT_RUNPATH), LD_LIBRARY_PATH,
 * DT_RUNPATH, /etc/ld.so.cache, then the default directories — glibc's
 * order (ld.so(8)).  A candidate counts only if it is an ELF file of this
 * process's class and machine, as for the loader.
 *
 * After the loader's own rules, where AMD's packages put the runtime:
 * $ROCM_PATH/lib, /opt/rocm/lib, then /opt/rocm-X.Y.Z/lib, newest version
 * first.  A runtime found there is reported as such (lib_hit.loader is
 * false): a program finds it only through LD_LIBRARY_PATH, ldconfig or its
 * own RUNPATH, and the tools never change the program's library path.
 */
#ifndef HIPEXTSEM_INFO_LIBSEARCH_H
#define HIPEXTSEM_INFO_LIBSEARCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct lib_search_ctx {
	const char *rpath;   /* the program's DT_RPATH, NULL if none */
	const char *runpath; /* the program's DT_RUNPATH, NULL if none */
	const char *origin;  /* directory of the program, for $ORIGIN */
};

struct lib_hit {
	char path[PATH_MAX];
	/* Which rule found it: "DT_RPATH", "LD_LIBRARY_PATH", "DT_RUNPATH",
	 * "ld.so.cache", "default directory" (the loader's), or "ROCM_PATH",
	 * "/opt/rocm", "/opt/rocm-*" (AMD's layout); "path" for a name with
	 * a slash.  A static string. */
	const char *via;
	bool loader; /* found by the loader's own rules */
};

/* ctx may be NULL (no program: only the environment and the system). */
bool lib_search(const char *soname, const struct lib_search_ctx *ctx, struct lib_hit *hit);

/* The places lib_search looks, in its order, for a "not found" message:
 * "LD_LIBRARY_PATH, ld.so.cache, the default directories, $ROCM_PATH/lib
 * (...), /opt/rocm/lib and /opt/rocm-X.Y.Z/lib"; with_program adds the
 * program's RPATH/RUNPATH.  Returns buf. */
const char *lib_search_places(bool with_program, char *buf, size_t len);

#endif
