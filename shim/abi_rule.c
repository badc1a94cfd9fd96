/* SPDX-License-Identifier: MIT */
/*
 * The ABI rule of abi_rule.h, and the shim's in-memory DT_SONAME reader.
 * Compiled into the shim's core library, which the tools link too.
 */
#include "abi_rule.h"

#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static enum hx_abi abi_from_major(long major)
{
	if (major == 5)
		return HX_ABI_5;
	if (major >= 6)
		return HX_ABI_6;
	return HX_ABI_UNKNOWN;
}

enum hx_abi hx_abi_from_name(const char *name)
{
	const char *base, *p;
	long major = 0;

	if (!name)
		return HX_ABI_UNKNOWN;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	p = strstr(base, ".so.");
	if (!p || p[4] < '0' || p[4] > '9')
		return HX_ABI_UNKNOWN;
	/* Bounded by hand: atoi on "99999999999" is undefined. */
	for (p += 4; *p >= '0' && *p <= '9' && major < 1000; p++)
		major = major * 10 + (*p - '0');
	return abi_from_major(major);
}

enum hx_abi hx_abi_from_version(int version)
{
	return version > 0 ? abi_from_major(version / 10000000) : HX_ABI_UNKNOWN;
}

enum hx_abi hx_abi_rule(const char *real_path, const char *soname, enum hx_abi_clue *by)
{
	enum hx_abi abi = hx_abi_from_name(real_path);
	enum hx_abi_clue clue = HX_ABI_BY_FILE_NAME;

	if (abi == HX_ABI_UNKNOWN) {
		abi = hx_abi_from_name(soname);
		clue = HX_ABI_BY_SONAME;
	}
	if (abi == HX_ABI_UNKNOWN)
		clue = HX_ABI_BY_NONE;
	if (by)
		*by = clue;
	return abi;
}

const char *hx_abi_clue_name(enum hx_abi_clue by)
{
	switch (by) {
	case HX_ABI_BY_FILE_NAME:
		return "file name";
	case HX_ABI_BY_SONAME:
		return "soname";
	case HX_ABI_BY_VERSION:
		return "hipRuntimeGetVersion";
	default:
		return "nothing";
	}
}

struct soname_search {
	uintptr_t addr;
	char *buf;
	size_t len;
	const char *found;
};

static int soname_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct soname_search *s = arg;
	const ElfW(Phdr) *dyn = NULL;
	bool inside = false;
	uintptr_t strtab = 0;
	size_t strsz = 0, soname = (size_t)-1;

	(void)size;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && s->addr >= start && s->addr - start < ph->p_memsz)
			inside = true;
		else if (ph->p_type == PT_DYNAMIC)
			dyn = ph;
	}
	if (!inside)
		return 0;
	if (!dyn)
		return 1;
	for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + dyn->p_vaddr);
	     d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			strtab = d->d_un.d_ptr;
		else if (d->d_tag == DT_STRSZ)
			strsz = d->d_un.d_val;
		else if (d->d_tag == DT_SONAME)
			soname = d->d_un.d_val;
	}
	if (!strtab || soname >= strsz)
		return 1;
	/* glibc relocates the dynamic section's addresses in place on most
	 * targets and leaves them as link-time values on others (a read-only
	 * dynamic section): a shared object is linked at 0, so a value below
	 * the load address has not been relocated. */
	if (strtab < info->dlpi_addr)
		strtab += info->dlpi_addr;
	snprintf(s->buf, s->len, "%.*s", (int)(strsz - soname), (const char *)strtab + soname);
	s->found = s->buf;
	return 1;
}

const char *hx_abi_loaded_soname(const void *addr, char *buf, size_t len)
{
	struct soname_search s = { (uintptr_t)addr, buf, len, NULL };

	if (!addr || !buf || !len)
		return NULL;
	dl_iterate_phdr(soname_cb, &s);
	return s.found;
}
