/* SPDX-License-Identifier: MIT */
/*
 * Coverage runs (hxwork cov): a process that ends with _exit skips
 * libgcov's write-out, and the counters of what it ran are lost.  libgcov
 * is linked into each object built with --coverage with hidden symbols
 * (the shim's version script makes them local too), so neither dlsym nor
 * another object's __gcov_dump reaches an object's counters; the write-out
 * is found in the symbol table of the object's file (a b_coverage build is
 * not stripped): __gcov_dump where the object refers to it, else
 * __gcov_exit, the destructor exit() would run (GCC 12's libgcov links
 * only what is referenced).  Used by the driver (a fork op's child) and by
 * libhxwork-covdump.so (the selftest op's tool and its children).
 */
#ifndef HXWORK_COVDUMP_H
#define HXWORK_COVDUMP_H

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef void hx_cov_dump_fn(void);

/* The write-out of the object loaded at `base` from file `path`, or NULL. */
static hx_cov_dump_fn *hx_cov_find(const char *path, ElfW(Addr) base)
{
	hx_cov_dump_fn *found = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *m;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
		close(fd);
		return NULL;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	const ElfW(Ehdr) *eh = m;
	const ElfW(Shdr) *sh = (const ElfW(Shdr) *)((const char *)m + eh->e_shoff);

	for (int i = 0; eh->e_shoff && i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		const ElfW(Sym) *sym = (const ElfW(Sym) *)((const char *)m + sh[i].sh_offset);
		const char *str = (const char *)m + sh[sh[i].sh_link].sh_offset;

		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++)
			if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_value &&
			    (!strcmp(str + sym[k].st_name, "__gcov_dump") ||
			     (!found && !strcmp(str + sym[k].st_name, "__gcov_exit"))))
				found = (hx_cov_dump_fn *)(base + sym[k].st_value);
	}
	munmap(m, (size_t)st.st_size);
	return found;
}

#endif
