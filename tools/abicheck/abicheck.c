/* SPDX-License-Identifier: MIT */
/*
 * hipextsem-abicheck: does the shim interpose this libamdhip64?
 *
 *   hipextsem-abicheck [--run] RUNTIME SHIM
 *   hipextsem-abicheck --symbols SHIM           (NAME@NODE per line)
 *
 * For every HIP symbol the shim exports, prints its version node and the
 * node the runtime exports the same name under.  glibc binds an
 * application's versioned reference (hipFoo@hip_4.3, recorded at link time
 * from the runtime) to a preloaded definition only when the nodes are
 * equal: a different node means the call silently bypasses the shim
 * ("MISMATCH", exit status 1).  A name the runtime lacks is harmless
 * ("not in runtime": no application linked against it references it).
 *
 * About the runtime, read from the ELF file without loading it:
 *   soname and ABI flavour: the soname's major (.so.5 = 5.x layouts,
 *     .so.6/.so.7 = 6.x), as the shim itself decides;
 *   version: the file name's version suffix (libamdhip64.so.5.2.21153)
 *     and the newest hip_X.Y node it defines (its API level); with --run
 *     also hipRuntimeGetVersion, by dlopen()ing it (runs its constructors);
 *   stock semaphore calls: heuristic — the stock Linux runtime implements
 *     no external semaphores, so it neither imports libdrm's drmSyncobj*
 *     nor mentions "syncobj"/"SYNCOBJ" anywhere in its read-only data;
 *     with --run, hipImportExternalSemaphore is called on an OpaqueFd
 *     descriptor holding /dev/null, which the stock runtime answers with
 *     hipErrorNotSupported (801) and a syncobj implementation with
 *     hipErrorInvalidValue or a DRM error.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi_rule.h"

struct sym {
	char *name;
	char *node; /* NULL: unversioned */
	bool hidden;
};

struct lib {
	const char *path;
	char soname[128];
	struct sym *syms;
	size_t nsyms;
	char top_node[32];
	bool imports_syncobj;
	bool mentions_syncobj;
};

static void unload(struct lib *l)
{
	for (size_t i = 0; i < l->nsyms; i++) {
		free(l->syms[i].name);
		free(l->syms[i].node);
	}
	free(l->syms);
	l->syms = NULL;
	l->nsyms = 0;
}

/* Prints "PATH: WHAT: the reason" and returns -1.  The reason is libelf's
 * when libelf failed, errno's when the system did, and never libelf's
 * "no error". */
static int fail(const char *path, const char *what, int err)
{
	int e = elf_errno();

	if (err)
		fprintf(stderr, "hipextsem-abicheck: %s: %s: %s\n", path, what, strerror(err));
	else if (e)
		fprintf(stderr, "hipextsem-abicheck: %s: %s: %s\n", path, what, elf_errmsg(e));
	else
		fprintf(stderr, "hipextsem-abicheck: %s: %s\n", path, what);
	return -1;
}

static bool node_newer(const char *a, const char *b)
{
	int am, an, bm, bn;
	if (sscanf(a, "hip_%d.%d", &am, &an) != 2)
		return false;
	if (!b[0] || sscanf(b, "hip_%d.%d", &bm, &bn) != 2)
		return true;
	return am > bm || (am == bm && an > bn);
}

static bool contains(const char *buf, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(buf + i, needle, k) == 0)
			return true;
	return false;
}

/* Reads what the checks need from the ELF file at path.  On an error it
 * says why (naming the file) and returns -1 with everything released. */
static int load(struct lib *l, const char *path)
{
	Elf_Scn *scn = NULL, *dynsym = NULL, *versym = NULL, *verdef = NULL, *dynamic = NULL;
	GElf_Shdr sh, dsh;
	GElf_Ehdr eh;
	char *vnames[1024] = { 0 };
	size_t shstrndx;
	struct stat st;
	Elf *e = NULL;
	int fd, ret = -1;

	memset(l, 0, sizeof(*l));
	l->path = path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(path, "cannot open", errno);
	if (fstat(fd, &st) != 0) {
		fail(path, "cannot read", errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		fail(path, "not a regular file", 0);
		goto out;
	}
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		fail(path, "not an ELF file", 0);
		goto out;
	}
	if (!gelf_getehdr(e, &eh) || elf_getshdrstrndx(e, &shstrndx)) {
		fail(path, "unreadable ELF headers", 0);
		goto out;
	}
	if (eh.e_type != ET_DYN) {
		fail(path, "not a shared library (ELF type is not ET_DYN)", 0);
		goto out;
	}
	while ((scn = elf_nextscn(e, scn))) {
		const char *sname;
		if (!gelf_getshdr(scn, &sh))
			continue;
		sname = elf_strptr(e, shstrndx, sh.sh_name);
		switch (sh.sh_type) {
		case SHT_DYNSYM:
			dynsym = scn;
			break;
		case SHT_GNU_versym:
			versym = scn;
			break;
		case SHT_GNU_verdef:
			verdef = scn;
			break;
		case SHT_DYNAMIC:
			dynamic = scn;
			break;
		case SHT_PROGBITS:
			if (sname && (!strcmp(sname, ".rodata") || !strncmp(sname, ".rodata.", 8))) {
				Elf_Data *d = elf_getdata(scn, NULL);
				if (d && d->d_buf &&
				    (contains(d->d_buf, d->d_size, "syncobj") ||
				     contains(d->d_buf, d->d_size, "SYNCOBJ")))
					l->mentions_syncobj = true;
			}
			break;
		}
	}
	if (!dynsym || !gelf_getshdr(dynsym, &dsh)) {
		fail(path, "no dynamic symbol table", 0);
		goto out;
	}
	/* version definitions: index -> name */
	if (verdef) {
		Elf_Data *d = elf_getdata(verdef, NULL);
		GElf_Shdr vsh;
		size_t off = 0;
		if (!gelf_getshdr(verdef, &vsh))
			d = NULL;
		for (unsigned i = 0; d && i < vsh.sh_info; i++) {
			GElf_Verdef vd;
			GElf_Verdaux va;
			if (!gelf_getverdef(d, (int)off, &vd) ||
			    !gelf_getverdaux(d, (int)(off + vd.vd_aux), &va))
				break;
			if (vd.vd_ndx < 1024 && !(vd.vd_flags & VER_FLG_BASE)) {
				vnames[vd.vd_ndx] = elf_strptr(e, vsh.sh_link, va.vda_name);
				if (vnames[vd.vd_ndx] && node_newer(vnames[vd.vd_ndx], l->top_node))
					snprintf(l->top_node, sizeof(l->top_node), "%s",
						 vnames[vd.vd_ndx]);
			}
			if (!vd.vd_next || off + vd.vd_next > d->d_size)
				break;
			off += vd.vd_next;
		}
	}
	if (dynamic) {
		Elf_Data *d = elf_getdata(dynamic, NULL);
		GElf_Shdr ysh;
		GElf_Dyn dyn;
		if (!gelf_getshdr(dynamic, &ysh))
			d = NULL;
		for (size_t i = 0; d && gelf_getdyn(d, (int)i, &dyn); i++) {
			if (dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag == DT_SONAME) {
				const char *s = elf_strptr(e, ysh.sh_link, dyn.d_un.d_val);
				snprintf(l->soname, sizeof(l->soname), "%s", s ? s : "");
			}
		}
	}
	{
		Elf_Data *d = elf_getdata(dynsym, NULL);
		Elf_Data *vd = versym ? elf_getdata(versym, NULL) : NULL;
		size_t n;

		if (!d) {
			fail(path, "unreadable dynamic symbol table", 0);
			goto out;
		}
		/* The count comes from the section header, which the file
		 * controls: bounded by the data libelf actually read. */
		if (dsh.sh_entsize == 0 || dsh.sh_size / dsh.sh_entsize > d->d_size / dsh.sh_entsize ||
		    d->d_size > (size_t)st.st_size) {
			fail(path, "dynamic symbol table larger than the file", 0);
			goto out;
		}
		n = dsh.sh_size / dsh.sh_entsize;
		l->syms = calloc(n ? n : 1, sizeof(*l->syms));
		if (!l->syms) {
			fail(path, "out of memory for the symbol table", ENOMEM);
			goto out;
		}
		for (size_t i = 1; i < n; i++) {
			GElf_Sym s;
			GElf_Versym v = 0;
			const char *name;
			struct sym *y;
			if (!gelf_getsym(d, (int)i, &s))
				continue;
			name = elf_strptr(e, dsh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			if (s.st_shndx == SHN_UNDEF) {
				if (!strncmp(name, "drmSyncobj", 10))
					l->imports_syncobj = true;
				continue;
			}
			if (s.st_shndx == SHN_ABS) /* version node markers */
				continue;
			if (GELF_ST_BIND(s.st_info) == STB_LOCAL)
				continue;
			if (vd)
				gelf_getversym(vd, (int)i, &v);
			y = &l->syms[l->nsyms];
			y->name = strdup(name);
			y->hidden = (v & 0x8000) != 0;
			v &= 0x7fff;
			y->node = v > 1 && v < 1024 && vnames[v] ? strdup(vnames[v]) : NULL;
			if (!y->name || (v > 1 && v < 1024 && vnames[v] && !y->node)) {
				free(y->name);
				free(y->node);
				fail(path, "out of memory for the symbol table", ENOMEM);
				goto out;
			}
			l->nsyms++;
		}
	}
	ret = 0;
out:
	if (ret)
		unload(l);
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

/* The default (non-hidden) definition of `name`, if any. */
static const struct sym *find(const struct lib *l, const char *name)
{
	const struct sym *any = NULL;
	for (size_t i = 0; i < l->nsyms; i++)
		if (!strcmp(l->syms[i].name, name)) {
			if (!l->syms[i].hidden)
				return &l->syms[i];
			any = &l->syms[i];
		}
	return any;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_symbols(const struct lib *shim)
{
	char **lines = calloc(shim->nsyms ? shim->nsyms : 1, sizeof(*lines));
	size_t n = 0;

	if (!lines)
		return fail(shim->path, "out of memory", ENOMEM), 2;
	for (size_t i = 0; i < shim->nsyms; i++) {
		const struct sym *s = &shim->syms[i];
		char buf[512];
		snprintf(buf, sizeof(buf), "%s%s%s", s->name, s->hidden ? "@" : "@@",
			 s->node ? s->node : "(none)");
		if (!(lines[n] = strdup(buf))) {
			while (n)
				free(lines[--n]);
			free(lines);
			return fail(shim->path, "out of memory", ENOMEM), 2;
		}
		n++;
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < n; i++) {
		printf("%s\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	return strcmp(((const struct sym *)a)->name, ((const struct sym *)b)->name);
}

typedef int (*version_fn)(int *);
typedef int (*import_fn)(void **, const void *);

static void run_probe(const char *path, int flavour)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	version_fn ver;
	import_fn imp;
	unsigned char desc[96];
	void *sem = NULL;
	int v = 0, fd, err;

	if (!h) {
		printf("  --run: dlopen failed: %s\n", dlerror());
		return;
	}
	ver = (version_fn)dlsym(h, "hipRuntimeGetVersion");
	if (ver && ver(&v) == 0)
		printf("  hipRuntimeGetVersion: %d (%d.%d.%d)\n", v, v / 10000000,
		       (v / 100000) % 100, v % 100000);
	else
		printf("  hipRuntimeGetVersion: unavailable\n");
	imp = (import_fn)dlsym(h, "hipImportExternalSemaphore");
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	memset(desc, 0, sizeof(desc));
	desc[0] = 1; /* OpaqueFd, type@0 in both layouts */
	memcpy(desc + 8, &fd, sizeof(fd)); /* handle.fd@8 in both */
	(void)flavour;
	if (imp) {
		err = imp(&sem, desc);
		printf("  probe: hipImportExternalSemaphore(OpaqueFd, /dev/null) = %d -> %s\n", err,
		       err == 801 ? "stock (hipErrorNotSupported)"
		       : err == 100 || err == 101 || err == 35 || err == 3
			       ? "stock answer for a runtime without a usable device"
			       : "NOT the stock answer");
	}
	close(fd);
}

/* What the file is, from what it exports: a HIP runtime defines the calls
 * an application links against; the shim defines hipextsemGetStats. */
static bool exports(const struct lib *l, const char *name)
{
	const struct sym *s = find(l, name);
	return s && !s->hidden;
}

static bool is_shim(const struct lib *l)
{
	return exports(l, "hipextsemGetStats");
}

static bool is_runtime(const struct lib *l)
{
	static const char *const calls[] = {
		"hipRuntimeGetVersion", "hipGetDeviceCount", "hipImportExternalSemaphore",
		"hipSignalExternalSemaphoresAsync", "hipWaitExternalSemaphoresAsync",
		"hipDestroyExternalSemaphore",
	};

	if (is_shim(l))
		return false;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (exports(l, calls[i]))
			return true;
	return false;
}

static void usage(FILE *f)
{
	fputs("Usage: hipextsem-abicheck [--run] LIBAMDHIP64 LIBEXTSEM\n"
	      "       hipextsem-abicheck --symbols LIBEXTSEM\n"
	      "\n"
	      "Compares the symbol version nodes of the hipextsem shim with those of a HIP\n"
	      "runtime, read with libelf (neither file is loaded), and says which ABI the\n"
	      "runtime has and whether its semaphore calls are the stock ones.  A shim\n"
	      "export under another node than the runtime's is a MISMATCH.\n"
	      "\n"
	      "Options:\n"
	      "  --run         also load the runtime (running its constructors) and ask it\n"
	      "                for its version and its answer to a semaphore import\n"
	      "  --symbols     print the shim's exports as NAME@@NODE lines\n"
	      "  -h, --help    show this help and exit\n"
	      "  --version     show the version and exit\n"
	      "\n"
	      "Exit status: 0 no mismatch, 1 a mismatch, 2 bad usage or a file that is not\n"
	      "a HIP runtime (or not the shim).\n",
	      f);
}

int main(int argc, char **argv)
{
	struct lib rt, shim;
	bool run = false;
	int i = 1, flavour = 0, mismatches = 0;
	const char *p;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("hipextsem-abicheck %s\n", HX_ABICHECK_VERSION);
		return 0;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "hipextsem-abicheck: libelf: %s\n", elf_errmsg(-1));
		return 2;
	}
	if (argc == 3 && !strcmp(argv[1], "--symbols")) {
		int ret;
		if (load(&shim, argv[2]))
			return 2;
		if (!is_shim(&shim)) {
			fprintf(stderr, "hipextsem-abicheck: %s is not the hipextsem shim (it does "
				"not export hipextsemGetStats)\n", argv[2]);
			unload(&shim);
			return 2;
		}
		ret = list_symbols(&shim);
		unload(&shim);
		return ret;
	}
	if (i < argc && !strcmp(argv[i], "--run")) {
		run = true;
		i++;
	}
	if (argc - i != 2) {
		usage(stderr);
		return 2;
	}
	if (load(&rt, argv[i]))
		return 2;
	if (load(&shim, argv[i + 1])) {
		unload(&rt);
		return 2;
	}
	/* A check that passes on the wrong file is worse than none: a CI gate
	 * given another library must fail, not report 0 mismatches. */
	if (!is_runtime(&rt) || !is_shim(&shim)) {
		if (!is_runtime(&rt))
			fprintf(stderr, "hipextsem-abicheck: %s is not a HIP runtime: %s\n", rt.path,
				is_shim(&rt) ? "it is the hipextsem shim itself"
					     : "it exports none of hipRuntimeGetVersion, "
					       "hipGetDeviceCount or the external semaphore calls");
		if (!is_shim(&shim))
			fprintf(stderr, "hipextsem-abicheck: %s is not the hipextsem shim (it does "
				"not export hipextsemGetStats)\n", shim.path);
		unload(&rt);
		unload(&shim);
		return 2;
	}

	char real[PATH_MAX];
	const char *base;
	if (!realpath(rt.path, real))
		snprintf(real, sizeof(real), "%s", rt.path);
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	/* The rule the shim applies (abi_rule.h), without its last step:
	 * this tool does not run the runtime unless --run says so. */
	enum hx_abi_clue by;
	flavour = (int)hx_abi_rule(real, rt.soname[0] ? rt.soname : NULL, &by);
	printf("runtime %s\n", rt.path);
	printf("  file: %s\n", real);
	printf("  soname: %s\n", rt.soname[0] ? rt.soname : "(none)");
	p = strstr(base, ".so.");
	printf("  version (file name): %s\n", p ? p + 4 : "(not in the file name)");
	printf("  newest version node: %s\n", rt.top_node[0] ? rt.top_node : "(none)");
	printf("  ABI flavour: %s%s%s\n",
	       flavour == HX_ABI_5 ? "5.x (32-byte handle desc, 136-byte params)"
	       : flavour == HX_ABI_6 ? "6.x (96-byte handle desc, 144-byte params)"
				     : "unknown (neither the file name nor the soname tells: the shim "
				       "asks hipRuntimeGetVersion)",
	       flavour ? ", told by the " : "", flavour ? hx_abi_clue_name(by) : "");
	printf("  semaphore calls: %s\n",
	       rt.imports_syncobj || rt.mentions_syncobj
		       ? "NOT stock: the runtime uses DRM sync objects itself (check before preloading)"
		       : "stock (no drmSyncobj* import, no syncobj strings: no Linux implementation)");
	if (run)
		run_probe(rt.path, flavour);

	qsort(shim.syms, shim.nsyms, sizeof(*shim.syms), cmp_sym);
	printf("shim %s\n", shim.path);
	printf("  %-52s %-10s %-10s %s\n", "symbol", "shim", "runtime", "result");
	for (size_t k = 0; k < shim.nsyms; k++) {
		const struct sym *s = &shim.syms[k], *r;
		const char *res;
		if (strncmp(s->name, "hip", 3) != 0 || !strncmp(s->name, "hipextsem", 9))
			continue;
		r = find(&rt, s->name);
		if (!r)
			res = "not in runtime (no app can reference it: harmless)";
		else if (!r->node || !s->node || strcmp(r->node, s->node) == 0)
			res = "ok: interposes";
		else {
			res = "MISMATCH: references bind to the runtime, the shim is bypassed";
			mismatches++;
		}
		printf("  %-52s %-10s %-10s %s\n", s->name, s->node ? s->node : "-",
		       r ? (r->node ? r->node : "(none)") : "-", res);
	}
	printf("%d mismatch(es)\n", mismatches);
	unload(&rt);
	unload(&shim);
	return mismatches ? 1 : 0;
}
