/* SPDX-License-Identifier: MIT */
/*
 * Which ABI (the 5.x or the 6.x layouts of hip_abi.h) a HIP runtime file
 * has: the one rule, shared by the shim (shim/runtime.c) and the tools
 * (hipextsem-info, hipextsem-abicheck), so that what a tool reports is
 * what the shim will do.  In order, the first clue that tells wins:
 *
 *   1. the file's name after symlinks: libamdhip64.so.6.4.60403 is 6.x
 *      (AMD's and Debian's packages both name the real file so);
 *   2. its DT_SONAME: libamdhip64.so.5 is 5.x (a runtime copied under
 *      another name, e.g. a Python wheel's lib/libamdhip64.so);
 *   3. the shim only, which runs the runtime anyway: hipRuntimeGetVersion.
 *      Tools that inspect never run the runtime; they report "cannot tell"
 *      and HIPEXTSEM_ABI=5 or 6 sets it.
 *
 * 6.x and 7.x share the layouts of 6.0 (the break came with the soname
 * bump to .so.6); majors below 5 are not HIP runtimes the shim supports.
 * Nothing here allocates, logs or calls the runtime.
 */
#ifndef HIPEXTSEM_ABI_RULE_H
#define HIPEXTSEM_ABI_RULE_H

#include <stddef.h>

#include "hipextsem/hip_abi.h"

/* Which clue decided (for logs and reports). */
enum hx_abi_clue {
	HX_ABI_BY_NONE = 0,
	HX_ABI_BY_FILE_NAME,
	HX_ABI_BY_SONAME,
	HX_ABI_BY_VERSION,
};

/* The ABI a library name says: the major after the first ".so." of its
 * last path component (".so.5..." is 5.x, ".so.6..." and later 6.x); UNKNOWN
 * when there is no such number (libamdhip64.so, a hashed wheel name). */
enum hx_abi hx_abi_from_name(const char *name);

/* The ABI hipRuntimeGetVersion's answer says (HIP_VERSION: major * 10^7 +
 * minor * 10^5 + patch); UNKNOWN below 5. */
enum hx_abi hx_abi_from_version(int version);

/* Steps 1 and 2: real_path is the file after symlinks (realpath), soname
 * its DT_SONAME or NULL.  *by (may be NULL) says which decided. */
enum hx_abi hx_abi_rule(const char *real_path, const char *soname, enum hx_abi_clue *by);

/* "file name", "soname", "hipRuntimeGetVersion", "nothing". */
const char *hx_abi_clue_name(enum hx_abi_clue by);

/* The shim's reading of DT_SONAME: the dynamic section of the loaded
 * object that contains `addr`, from memory (dl_iterate_phdr), without
 * opening the file.  Copies it into buf and returns buf, or NULL. */
const char *hx_abi_loaded_soname(const void *addr, char *buf, size_t len);

#endif
