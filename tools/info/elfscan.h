/* SPDX-License-Identifier: MIT */
/*
 * Read-only look at a shared object's dynamic section, dynamic symbols and
 * symbol versions with libelf.  Nothing is loaded or run: hipextsem-info
 * must be able to inspect the real ROCm runtime without executing its
 * constructors.
 */
#ifndef HIPEXTSEM_INFO_ELFSCAN_H
#define HIPEXTSEM_INFO_ELFSCAN_H

#include <stdbool.h>
#include <stddef.h>

struct elf_scan;

/* Returns NULL and a reason in err when path is not a readable ELF file. */
struct elf_scan *elf_scan_open(const char *path, char *err, size_t errlen);
void elf_scan_close(struct elf_scan *es);

/* ELFCLASS32/64 and EM_* of the file. */
int elf_scan_class(const struct elf_scan *es);
int elf_scan_machine(const struct elf_scan *es);
/* True if the file could be loaded into this process (same class and
 * machine), which is the test the dynamic loader applies to candidates. */
bool elf_scan_matches_self(const struct elf_scan *es);

/* DT_SONAME, DT_RPATH, DT_RUNPATH; NULL when absent. */
const char *elf_scan_soname(const struct elf_scan *es);
const char *elf_scan_rpath(const struct elf_scan *es);
const char *elf_scan_runpath(const struct elf_scan *es);
size_t elf_scan_needed_count(const struct elf_scan *es);
const char *elf_scan_needed(const struct elf_scan *es, size_t i);

/* Whether the file defines (and exports) dynamic symbol `name`.  *node is
 * set to its version node name, or NULL if the definition is unversioned. */
bool elf_scan_defines(const struct elf_scan *es, const char *name, const char **node);

/* Calls fn for every exported definition (name, version node or NULL). */
void elf_scan_foreach_defined(const struct elf_scan *es,
			      void (*fn)(const char *name, const char *node, void *arg), void *arg);

#endif
