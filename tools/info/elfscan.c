/* SPDX-License-Identifier: MIT */
/*
 * Reading a shared object's dynamic section and symbol versions with libelf
 * (elfscan.h).  The file may be anything a user points the tools at: every
 * count and offset it holds is checked against what libelf actually read,
 * and nothing of it is loaded.
 */
#include "elfscan.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_VERDEF 512

struct elf_scan {
	int fd;
	Elf *elf;
	int elfclass;
	int machine;
	const char *soname, *rpath, *runpath;
	const char **needed; /* every DT_NEEDED entry, in order */
	size_t n_needed, cap_needed;

	Elf_Data *dynsym;
	size_t dynsym_str;   /* section index of the dynsym string table */
	size_t n_syms;
	Elf_Data *versym;    /* may be NULL: no symbol versioning */
	/* verdef index -> node name */
	const char *verdef[MAX_VERDEF];
};

static int add_needed(struct elf_scan *es, const char *s)
{
	if (es->n_needed == es->cap_needed) {
		size_t cap = es->cap_needed ? 2 * es->cap_needed : 16;
		const char **n = realloc(es->needed, cap * sizeof(*n));
		if (!n)
			return -1;
		es->needed = n;
		es->cap_needed = cap;
	}
	es->needed[es->n_needed++] = s;
	return 0;
}

static void read_dynamic(struct elf_scan *es, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	GElf_Dyn dyn;

	if (!data || sh->sh_entsize == 0)
		return;
	/* The entry count is bounded by the data read, not by sh_size. */
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize && i < data->d_size / sh->sh_entsize;
	     i++) {
		if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		const char *s = NULL;
		switch (dyn.d_tag) {
		case DT_SONAME: case DT_RPATH: case DT_RUNPATH: case DT_NEEDED:
			s = elf_strptr(es->elf, sh->sh_link, dyn.d_un.d_val);
			break;
		default:
			continue;
		}
		if (!s)
			continue;
		if (dyn.d_tag == DT_SONAME)
			es->soname = s;
		else if (dyn.d_tag == DT_RPATH)
			es->rpath = s;
		else if (dyn.d_tag == DT_RUNPATH)
			es->runpath = s;
		else if (add_needed(es, s) != 0)
			break;
	}
}

static void read_verdef(struct elf_scan *es, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t off = 0;
	GElf_Verdef vd;
	GElf_Verdaux va;

	if (!data)
		return;
	for (size_t n = 0; n < sh->sh_info; n++) {
		if (!gelf_getverdef(data, (int)off, &vd))
			break;
		if (vd.vd_ndx < MAX_VERDEF && vd.vd_aux < data->d_size - off &&
		    gelf_getverdaux(data, (int)(off + vd.vd_aux), &va))
			es->verdef[vd.vd_ndx] = elf_strptr(es->elf, sh->sh_link, va.vda_name);
		if (vd.vd_next == 0 || vd.vd_next > data->d_size - off)
			break;
		off += vd.vd_next;
	}
}

struct elf_scan *elf_scan_open(const char *path, char *err, size_t errlen)
{
	struct elf_scan *es;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	struct stat st;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		return NULL;
	}
	es = calloc(1, sizeof(*es));
	if (!es) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* O_NONBLOCK: a FIFO given as a library must not hang the open;
	 * only a regular file is read. */
	es->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (es->fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		free(es);
		return NULL;
	}
	if (fstat(es->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		elf_scan_close(es);
		return NULL;
	}
	es->elf = elf_begin(es->fd, ELF_C_READ, NULL);
	if (!es->elf || elf_kind(es->elf) != ELF_K_ELF || !gelf_getehdr(es->elf, &eh)) {
		snprintf(err, errlen, "not an ELF file");
		elf_scan_close(es);
		return NULL;
	}
	es->elfclass = gelf_getclass(es->elf);
	es->machine = eh.e_machine;

	while ((scn = elf_nextscn(es->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		switch (sh.sh_type) {
		case SHT_DYNAMIC:
			read_dynamic(es, scn, &sh);
			break;
		case SHT_DYNSYM:
			es->dynsym = elf_getdata(scn, NULL);
			es->dynsym_str = sh.sh_link;
			es->n_syms = sh.sh_entsize && es->dynsym ? sh.sh_size / sh.sh_entsize : 0;
			/* A count from the header, bounded by the data read. */
			if (es->n_syms && es->n_syms > es->dynsym->d_size / sh.sh_entsize)
				es->n_syms = es->dynsym->d_size / sh.sh_entsize;
			break;
		case SHT_GNU_versym:
			es->versym = elf_getdata(scn, NULL);
			break;
		case SHT_GNU_verdef:
			read_verdef(es, scn, &sh);
			break;
		}
	}
	return es;
}

void elf_scan_close(struct elf_scan *es)
{
	if (!es)
		return;
	if (es->elf)
		elf_end(es->elf);
	if (es->fd >= 0)
		close(es->fd);
	free(es->needed);
	free(es);
}

int elf_scan_class(const struct elf_scan *es) { return es->elfclass; }
int elf_scan_machine(const struct elf_scan *es) { return es->machine; }
const char *elf_scan_soname(const struct elf_scan *es) { return es->soname; }
const char *elf_scan_rpath(const struct elf_scan *es) { return es->rpath; }
const char *elf_scan_runpath(const struct elf_scan *es) { return es->runpath; }
size_t elf_scan_needed_count(const struct elf_scan *es) { return es->n_needed; }

const char *elf_scan_needed(const struct elf_scan *es, size_t i)
{
	return i < es->n_needed ? es->needed[i] : NULL;
}

bool elf_scan_matches_self(const struct elf_scan *es)
{
#if defined(__x86_64__)
	const int self_machine = EM_X86_64;
#elif defined(__aarch64__)
	const int self_machine = EM_AARCH64;
#elif defined(__i386__)
	const int self_machine = EM_386;
#elif defined(__powerpc64__)
	const int self_machine = EM_PPC64;
#else
	const int self_machine = -1; /* unknown: trust the class only */
#endif
	const int self_class = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;

	if (es->elfclass != self_class)
		return false;
	return self_machine < 0 || es->machine == self_machine;
}

/* Symbol i if it is an exported definition: its name, and its version
 * node in *node (NULL if unversioned). */
static const char *exported(const struct elf_scan *es, size_t i, const char **node)
{
	GElf_Sym sym;
	GElf_Versym vs;
	const char *s;

	if (!gelf_getsym(es->dynsym, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
		return NULL;
	if (GELF_ST_BIND(sym.st_info) == STB_LOCAL ||
	    GELF_ST_VISIBILITY(sym.st_other) == STV_HIDDEN ||
	    GELF_ST_VISIBILITY(sym.st_other) == STV_INTERNAL)
		return NULL;
	s = elf_strptr(es->elf, es->dynsym_str, sym.st_name);
	if (!s || !*s)
		return NULL;
	*node = NULL;
	if (es->versym && gelf_getversym(es->versym, (int)i, &vs)) {
		unsigned idx = vs & 0x7fff;
		if (idx == VER_NDX_LOCAL)
			return NULL; /* a local definition is not exported */
		/* Index 1 (VER_NDX_GLOBAL) is the file's base definition:
		 * unversioned. */
		if (idx > VER_NDX_GLOBAL && idx < MAX_VERDEF)
			*node = es->verdef[idx];
	}
	/* The linker emits one absolute symbol per version node, named
	 * after it: bookkeeping, not an export. */
	if (sym.st_shndx == SHN_ABS && *node && !strcmp(*node, s))
		return NULL;
	return s;
}

bool elf_scan_defines(const struct elf_scan *es, const char *name, const char **node)
{
	if (!es->dynsym)
		return false;
	for (size_t i = 1; i < es->n_syms; i++) {
		const char *n, *s = exported(es, i, &n);
		if (s && !strcmp(s, name)) {
			*node = n;
			return true;
		}
	}
	return false;
}

void elf_scan_foreach_defined(const struct elf_scan *es,
			      void (*fn)(const char *name, const char *node, void *arg), void *arg)
{
	const char *node;

	if (!es->dynsym)
		return;
	for (size_t i = 1; i < es->n_syms; i++) {
		const char *s = exported(es, i, &node);
		if (s)
			fn(s, node, arg);
	}
}
