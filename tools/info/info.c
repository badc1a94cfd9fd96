/* SPDX-License-Identifier: MIT */
/*
 * hipextsem-info: can external semaphores work here, and if not, why?
 *
 * Looks at the three things the shim needs — a DRM render node with sync
 * objects, a HIP runtime the shim can sit in front of, and the shim itself
 * with matching symbol versions — without loading or running any of the
 * files it inspects: the runtime, the shim and the program named with
 * --program are read as files (ELF headers, dynamic section, symbol
 * versions) and the loader's search rules are applied by hand.  A user may
 * point this tool at a program they just downloaded; its directory's
 * libraries must not get to run.  Only --selftest loads the runtime, in a
 * child process, and says so.  The render nodes are probed through the
 * shim's own sync layer (extsem_core), so the answer is the one the shim
 * would get.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <xf86drm.h>

#include "json.h"
#include "abi_rule.h"
#include "elfscan.h"
#include "hipextsem/hip_abi.h"
#include "libsearch.h"
#include "runtime.h"
#include "selfexe.h"
#include "selftest.h"
#include "sync.h"

#define MAX_NODES 64
#define MAX_ALSO 8

/* The four calls the shim implements.  Their version node in the shim must
 * equal the runtime's for a preloaded definition to interpose (glibc binds
 * hipFoo@hip_4.3 only to a definition of that node or an unversioned one). */
static const char *const sem_calls[] = {
	"hipImportExternalSemaphore",
	"hipSignalExternalSemaphoresAsync",
	"hipWaitExternalSemaphoresAsync",
	"hipDestroyExternalSemaphore",
};
#define N_SEM_CALLS (sizeof(sem_calls) / sizeof(sem_calls[0]))

/* Implemented by clr but left out of its Linux version script: reported
 * as exported, handed out by hipGetProcAddress only, or absent. */
static const char mipmap_call[] = "hipExternalMemoryGetMappedMipmappedArray";

/* The runtime functions the shim cannot do without (the `required` entries
 * of the table in shim/runtime.c). */
static const char *const required_calls[] = {
	"hipStreamWaitValue64", "hipStreamAddCallback", "hipHostMalloc", "hipGetDevice",
};
#define N_REQUIRED (sizeof(required_calls) / sizeof(required_calls[0]))

/* Sonames an application may link, newest first (as shim/runtime.c). */
static const char *const runtime_sonames[] = {
	"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so",
};
#define N_SONAMES (sizeof(runtime_sonames) / sizeof(runtime_sonames[0]))

struct node_report {
	char path[PATH_MAX];
	int err;            /* errno of open(), 0 if opened */
	char driver[32];
	char pci_bus_id[32];
	bool syncobj, timeline, eventfd;
	bool selected;
};

struct runtime_report {
	bool found;
	char path[PATH_MAX];
	char real_path[PATH_MAX];
	const char *via;
	bool outside_loader;    /* found in AMD's layout, where the loader does not look */
	char error[PATH_MAX + 256];
	char soname[128];
	char version[64];
	enum hx_abi abi;
	enum hx_abi_clue abi_by; /* which clue of the shared rule (abi_rule.h) told */
	const char *sem_state; /* "stock", "hipextsem", "missing" */
	char sem_node[64];      /* version node of hipImportExternalSemaphore */
	bool is_cpuhip;         /* the project's CPU reference runtime */
	/* hipExternalMemoryGetMappedMipmappedArray (no Linux release exports
	 * it) and hipGetProcAddress, which might hand it out */
	bool mipmap_exported;
	char mipmap_node[64];
	bool has_proc_address;
	const char *missing[N_REQUIRED];
	size_t n_missing;
	char also[MAX_ALSO][PATH_MAX];
	size_t n_also;
	char program_note[PATH_MAX + 256];
	/* Without --program/--runtime: where each soname resolves, as the
	 * loader would resolve it for an application that names it. */
	struct {
		const char *soname;
		bool found;
		char path[PATH_MAX];
		const char *via;
	} by_soname[4];
	size_t n_by_soname;
};

struct shim_export {
	char name[96];
	char node[48];        /* "" if unversioned */
	bool rt_defines;
	char rt_node[48];
	bool binds;           /* a reference of the application's would bind to it */
};

#define MAX_EXPORTS 64

struct shim_report {
	bool found;
	char path[PATH_MAX];
	const char *via;
	char error[PATH_MAX + 256];
	struct shim_export exports[MAX_EXPORTS];
	size_t n_exports;
	bool interposes;     /* the four semaphore calls bind to the shim */
	char reason[1024];
	char partial[1024];  /* other exports that would not interpose */
};

struct report {
	struct utsname uts;
	struct node_report nodes[MAX_NODES];
	size_t n_nodes;
	const char *node_env;
	char selected[PATH_MAX];
	int select_err;
	bool selected_timeline, selected_eventfd;
	struct runtime_report rt;
	struct shim_report shim;
	bool ok;
	char verdict[3 * PATH_MAX + 1024];
	/* The wait path the shim will take, as far as it can be told without
	 * running the runtime (the plain report), and the self-test's result
	 * (--selftest), which loads the runtime in a child. */
	bool host_wait;      /* HIPEXTSEM_HOST_WAIT=1 */
	struct hx_selftest_report *selftest;
	struct hx_selftest_modes *modes; /* --selftest without --no-signal-modes */
};

/* ---- render nodes ---------------------------------------------------- */

static void probe_node(const char *path, struct node_report *nr)
{
	struct hx_sync_dev dev;
	drmVersionPtr ver;
	int fd;

	memset(nr, 0, sizeof(*nr));
	snprintf(nr->path, sizeof(nr->path), "%s", path);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		nr->err = errno;
		return;
	}
	/* The driver name is wanted for nodes without sync objects too;
	 * hx_sync_probe_fd stops early on those. */
	ver = drmGetVersion(fd);
	if (ver) {
		snprintf(nr->driver, sizeof(nr->driver), "%s", ver->name ? ver->name : "");
		drmFreeVersion(ver);
	}
	if (hx_sync_probe_fd(fd, &dev, true) == 0) {
		nr->syncobj = true;
		nr->timeline = dev.has_timeline;
		nr->eventfd = dev.has_eventfd;
		snprintf(nr->pci_bus_id, sizeof(nr->pci_bus_id), "%s", dev.pci_bus_id);
	}
	close(fd);
}

static int cmp_nodes(const void *a, const void *b)
{
	int ma = atoi(((const struct node_report *)a)->path + strlen("/dev/dri/renderD"));
	int mb = atoi(((const struct node_report *)b)->path + strlen("/dev/dri/renderD"));
	return ma - mb;
}

static void collect_nodes(struct report *r)
{
	DIR *dir = opendir("/dev/dri");
	struct dirent *de;
	struct hx_sync_open_opts opts = { 0 };
	struct hx_sync_dev dev;
	int ret;

	while (dir && (de = readdir(dir)) && r->n_nodes < MAX_NODES) {
		char path[PATH_MAX];
		if (strncmp(de->d_name, "renderD", 7) != 0)
			continue;
		snprintf(path, sizeof(path), "/dev/dri/%s", de->d_name);
		probe_node(path, &r->nodes[r->n_nodes++]);
	}
	if (dir)
		closedir(dir);
	qsort(r->nodes, r->n_nodes, sizeof(r->nodes[0]), cmp_nodes);

	/* A forced node outside /dev/dri/renderD* is listed too. */
	r->node_env = getenv("HIPEXTSEM_RENDER_NODE");
	if (r->node_env && !*r->node_env)
		r->node_env = NULL;
	if (r->node_env) {
		bool listed = false;
		for (size_t i = 0; i < r->n_nodes; i++)
			listed |= !strcmp(r->nodes[i].path, r->node_env);
		if (!listed && r->n_nodes < MAX_NODES)
			probe_node(r->node_env, &r->nodes[r->n_nodes++]);
	}

	/* Which node the shim would pick, asked the way shim/registry.c asks: a
	 * timeline-capable node first, any syncobj node otherwise.  The HIP
	 * device's PCI bus id is unknown without loading the runtime: with
	 * several GPUs the shim may prefer another node (its log says). */
	opts.node_path = r->node_env;
	opts.allow_eventfd = true;
	opts.want_timeline = true;
	ret = hx_sync_open(&dev, &opts);
	if (ret == -EOPNOTSUPP && !opts.node_path) {
		opts.want_timeline = false;
		ret = hx_sync_open(&dev, &opts);
	}
	r->select_err = ret;
	if (ret == 0) {
		snprintf(r->selected, sizeof(r->selected), "%s", dev.path);
		r->selected_timeline = dev.has_timeline;
		r->selected_eventfd = dev.has_eventfd;
		hx_sync_close(&dev);
		for (size_t i = 0; i < r->n_nodes; i++)
			r->nodes[i].selected = !strcmp(r->nodes[i].path, r->selected);
	}
}

/* ---- the HIP runtime ------------------------------------------------- */

static void inspect_runtime(struct runtime_report *rt)
{
	char err[128];
	struct elf_scan *es;
	const char *node, *base, *p;

	if (!realpath(rt->path, rt->real_path))
		snprintf(rt->real_path, sizeof(rt->real_path), "%s", rt->path);
	es = elf_scan_open(rt->path, err, sizeof(err));
	if (!es) {
		snprintf(rt->error, sizeof(rt->error), "cannot read %s: %s", rt->path, err);
		return;
	}
	snprintf(rt->soname, sizeof(rt->soname), "%s",
		 elf_scan_soname(es) ? elf_scan_soname(es) : "");
	/* The full version is in the real file's name (libamdhip64.so.5.2.21153);
	 * the runtime carries no version string that can be read without
	 * running it. */
	base = strrchr(rt->real_path, '/');
	base = base ? base + 1 : rt->real_path;
	p = strstr(base, ".so.");
	snprintf(rt->version, sizeof(rt->version), "%s", p ? p + 4 : "");
	/* The shim's rule, minus the version call (nothing is run here). */
	rt->abi = hx_abi_rule(rt->real_path, rt->soname[0] ? rt->soname : NULL, &rt->abi_by);

	rt->is_cpuhip = elf_scan_defines(es, "cpuhipTestEnqueueDelay", &node);
	rt->mipmap_exported = elf_scan_defines(es, mipmap_call, &node);
	if (rt->mipmap_exported)
		snprintf(rt->mipmap_node, sizeof(rt->mipmap_node), "%s", node ? node : "");
	rt->has_proc_address = elf_scan_defines(es, "hipGetProcAddress", &node);
	if (elf_scan_defines(es, "hipextsemGetStats", &node)) {
		rt->sem_state = "hipextsem";
	} else {
		size_t have = 0;
		for (size_t i = 0; i < N_SEM_CALLS; i++) {
			if (!elf_scan_defines(es, sem_calls[i], &node))
				continue;
			have++;
			if (i == 0)
				snprintf(rt->sem_node, sizeof(rt->sem_node), "%s", node ? node : "");
		}
		rt->sem_state = have == N_SEM_CALLS ? "stock" : "missing";
	}
	for (size_t i = 0; i < N_REQUIRED; i++)
		if (!elf_scan_defines(es, required_calls[i], &node))
			rt->missing[rt->n_missing++] = required_calls[i];
	elf_scan_close(es);
}

static const char *program_path(const char *prog, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/'))
		return prog;
	/* As execvp searches: a directory of that name in PATH is skipped,
	 * it does not shadow the program further on. */
	while (path && *path) {
		size_t n = strcspn(path, ":");
		struct stat st;
		snprintf(buf, len, "%.*s/%s", (int)n, n ? path : ".", prog);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return buf;
		path += n + (path[n] ? 1 : 0);
	}
	return NULL;
}

/* True if path is the runtime already reported or one already listed. */
static bool same_file(const struct runtime_report *rt, const char *path)
{
	struct stat a, b;

	if (stat(path, &a) != 0)
		return true;
	if (stat(rt->path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return true;
	for (size_t i = 0; i < rt->n_also; i++)
		if (stat(rt->also[i], &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return true;
	return false;
}

/* Returns false on a usage error (program not found or not readable). */
static bool find_runtime(struct runtime_report *rt, const char *forced, const char *program)
{
	struct lib_search_ctx ctx = { 0 }, *pctx = NULL;
	struct elf_scan *pes = NULL;
	char pbuf[PATH_MAX], origin[PATH_MAX], err[128], places[PATH_MAX + 256];
	const char *wanted = NULL;
	struct lib_hit hit;

	if (forced) {
		snprintf(rt->path, sizeof(rt->path), "%s", forced);
		rt->via = "--runtime";
		rt->found = access(forced, R_OK) == 0;
		if (!rt->found)
			snprintf(rt->error, sizeof(rt->error), "%s: %s", forced, strerror(errno));
		else
			inspect_runtime(rt);
		return true;
	}
	if (program) {
		const char *pp = program_path(program, pbuf, sizeof(pbuf));
		if (!pp || !(pes = elf_scan_open(pp, err, sizeof(err)))) {
			fprintf(stderr, "hipextsem-info: %s: %s\n", program,
				pp ? err : "not found in PATH");
			return false;
		}
		if (!realpath(pp, origin))
			snprintf(origin, sizeof(origin), "%s", pp);
		ctx.origin = dirname(origin);
		ctx.rpath = elf_scan_rpath(pes);
		ctx.runpath = elf_scan_runpath(pes);
		pctx = &ctx;
		for (size_t i = 0; i < elf_scan_needed_count(pes); i++)
			if (!strncmp(elf_scan_needed(pes, i), "libamdhip64.so", 14))
				wanted = elf_scan_needed(pes, i);
		if (!wanted)
			snprintf(rt->program_note, sizeof(rt->program_note),
				 "%s does not link libamdhip64 directly (it may dlopen it, or "
				 "load it through another library): showing what a search by "
				 "soname finds", program);
	}

	for (size_t i = 0; i < N_SONAMES; i++) {
		const char *soname = wanted ? wanted : runtime_sonames[i];
		bool hit_ok = lib_search(soname, pctx, &hit);

		if (!wanted && rt->n_by_soname < sizeof(rt->by_soname) / sizeof(rt->by_soname[0])) {
			size_t k = rt->n_by_soname++;
			rt->by_soname[k].soname = soname;
			rt->by_soname[k].found = hit_ok;
			if (hit_ok) {
				snprintf(rt->by_soname[k].path, PATH_MAX, "%s", hit.path);
				rt->by_soname[k].via = hit.via;
			}
		}
		if (hit_ok) {
			if (!rt->found) {
				rt->found = true;
				snprintf(rt->path, sizeof(rt->path), "%s", hit.path);
				rt->via = hit.via;
				rt->outside_loader = !hit.loader;
			} else if (rt->n_also < MAX_ALSO && !same_file(rt, hit.path)) {
				snprintf(rt->also[rt->n_also++], PATH_MAX, "%s", hit.path);
			}
		}
		if (wanted)
			break;
	}
	if (rt->found)
		inspect_runtime(rt);
	else
		snprintf(rt->error, sizeof(rt->error), "no %s found (searched %s); for a runtime "
			 "elsewhere, e.g. a Python wheel's torch/lib/libamdhip64.so, give "
			 "--runtime PATH", wanted ? wanted : "libamdhip64.so{.7,.6,.5,}",
			 lib_search_places(pctx != NULL, places, sizeof(places)));
	elf_scan_close(pes);
	return true;
}

/* ---- the shim ---------------------------------------------------------- */

/* The directory of this program's file (not of an ELF interpreter that
 * started it: selfexe.h). */
static bool exe_dir(char *buf, size_t len)
{
	struct hx_self self;
	char why[PATH_MAX * 2 + 160];
	char *slash;

	if (!hx_self_find(&self, why, sizeof(why)))
		return false;
	snprintf(buf, len, "%s", self.prog);
	hx_self_free(&self);
	slash = strrchr(buf, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

static void find_shim(struct shim_report *sh)
{
	const char *env = getenv("HIPEXTSEM_LIBRARY");
	char dir[PATH_MAX], cand[PATH_MAX + 64];
	bool have_dir = exe_dir(dir, sizeof(dir));

	if (env && *env) {
		if (!realpath(env, sh->path))
			snprintf(sh->path, sizeof(sh->path), "%s", env);
		sh->via = "HIPEXTSEM_LIBRARY";
	} else if (have_dir && !strcmp(dir, HX_INFO_BUILD_DIR)) {
		/* Running from the build tree: its own library. */
		snprintf(sh->path, sizeof(sh->path), "%s", HX_INFO_BUILD_SHIM);
		sh->via = "build tree";
	} else {
		/* Installed: libdir relative to bindir first, so that a
		 * relocated or DESTDIR-staged install checks its own copy. */
		if (HX_INFO_BIN_TO_SHIM[0] == '/')
			snprintf(cand, sizeof(cand), "%s", HX_INFO_BIN_TO_SHIM);
		else
			snprintf(cand, sizeof(cand), "%s/%s", have_dir ? dir : ".",
				 HX_INFO_BIN_TO_SHIM);
		if (have_dir && access(cand, F_OK) == 0 && realpath(cand, sh->path)) {
			sh->via = "next to the executable";
		} else {
			snprintf(sh->path, sizeof(sh->path), "%s", HX_INFO_INSTALLED_SHIM);
			sh->via = "install prefix";
		}
	}
	sh->found = access(sh->path, R_OK) == 0;
	if (!sh->found)
		snprintf(sh->error, sizeof(sh->error), "%s: %s", sh->path, strerror(errno));
}

static void add_export(const char *name, const char *node, void *arg)
{
	struct shim_report *sh = arg;
	struct shim_export *e;

	if (sh->n_exports >= MAX_EXPORTS)
		return;
	e = &sh->exports[sh->n_exports++];
	snprintf(e->name, sizeof(e->name), "%s", name);
	snprintf(e->node, sizeof(e->node), "%s", node ? node : "");
}

static int cmp_exports(const void *a, const void *b)
{
	const struct shim_export *ea = a, *eb = b;
	int c = strcmp(ea->node, eb->node);
	return c ? c : strcmp(ea->name, eb->name);
}

static const struct shim_export *find_export(const struct shim_report *sh, const char *name)
{
	for (size_t i = 0; i < sh->n_exports; i++)
		if (!strcmp(sh->exports[i].name, name))
			return &sh->exports[i];
	return NULL;
}

static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t o = strlen(buf);
	va_list ap;

	if (o + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + o, len - o, fmt, ap);
	va_end(ap);
}

static void check_interposition(struct shim_report *sh, const struct runtime_report *rt)
{
	char err[128];
	struct elf_scan *ses, *res = NULL;

	ses = elf_scan_open(sh->path, err, sizeof(err));
	if (!ses) {
		sh->found = false;
		snprintf(sh->error, sizeof(sh->error), "%s: %s", sh->path, err);
		return;
	}
	elf_scan_foreach_defined(ses, add_export, sh);
	qsort(sh->exports, sh->n_exports, sizeof(sh->exports[0]), cmp_exports);
	if (rt->found && !rt->error[0])
		res = elf_scan_open(rt->path, err, sizeof(err));
	if (!res) {
		snprintf(sh->reason, sizeof(sh->reason), "no runtime to compare with");
		goto out;
	}
	if (elf_scan_class(ses) != elf_scan_class(res) ||
	    elf_scan_machine(ses) != elf_scan_machine(res)) {
		snprintf(sh->reason, sizeof(sh->reason),
			 "the shim and the runtime are built for different machines");
		goto out;
	}
	/* glibc binds an application's reference hipFoo@node (recorded from
	 * the runtime it linked against) to a preloaded definition only if
	 * that definition is unversioned or carries the same node.  A call
	 * the runtime lacks cannot be referenced at all: harmless. */
	for (size_t i = 0; i < sh->n_exports; i++) {
		struct shim_export *e = &sh->exports[i];
		const char *rnode = NULL;
		e->rt_defines = elf_scan_defines(res, e->name, &rnode);
		snprintf(e->rt_node, sizeof(e->rt_node), "%s", rnode ? rnode : "");
		e->binds = !e->rt_defines || !e->node[0] || !strcmp(e->node, e->rt_node);
	}
	sh->interposes = true;
	for (size_t i = 0; i < N_SEM_CALLS; i++) {
		const struct shim_export *e = find_export(sh, sem_calls[i]);
		if (e && e->binds && e->rt_defines)
			continue;
		if (e && !e->rt_defines)
			continue; /* "missing" runtimes are judged by the verdict */
		sh->interposes = false;
		if (!e)
			append(sh->reason, sizeof(sh->reason), "%sthe shim does not export %s",
			       sh->reason[0] ? "; " : "", sem_calls[i]);
		else
			append(sh->reason, sizeof(sh->reason), "%s%s: shim @%s, runtime @%s",
			       sh->reason[0] ? "; " : "", e->name, e->node[0] ? e->node : "(none)",
			       e->rt_node[0] ? e->rt_node : "(none)");
	}
	for (size_t i = 0; i < sh->n_exports; i++) {
		const struct shim_export *e = &sh->exports[i];
		bool core = false;
		for (size_t j = 0; j < N_SEM_CALLS; j++)
			core |= !strcmp(e->name, sem_calls[j]);
		if (!core && !e->binds)
			append(sh->partial, sizeof(sh->partial), "%s%s@%s (runtime @%s)",
			       sh->partial[0] ? ", " : "", e->name, e->node, e->rt_node);
	}
	if (sh->interposes)
		snprintf(sh->reason, sizeof(sh->reason),
			 "the shim defines the four semaphore calls with the runtime's version "
			 "node%s%s", rt->sem_node[0] ? " " : "", rt->sem_node);
out:
	elf_scan_close(res);
	elf_scan_close(ses);
}

/* ---- verdict --------------------------------------------------------- */

static void decide(struct report *r)
{
	const struct runtime_report *rt = &r->rt;
	const struct shim_report *sh = &r->shim;
	char *v = r->verdict;
	const size_t vl = sizeof(r->verdict);
	bool any_eacces = false;

	for (size_t i = 0; i < r->n_nodes; i++)
		any_eacces |= r->nodes[i].err == EACCES || r->nodes[i].err == EPERM;

	r->ok = false;
	if (r->select_err) {
		if (r->node_env)
			snprintf(v, vl, "external semaphores will NOT work: HIPEXTSEM_RENDER_NODE=%s "
				 "cannot be used (%s); do unset it or name a render node with sync "
				 "object support", r->node_env,
				 r->select_err == -ENOTSUP || r->select_err == -EOPNOTSUPP ?
					 "no sync object support" : strerror(-r->select_err));
		else if (r->n_nodes == 0)
			snprintf(v, vl, "external semaphores will NOT work: no DRM render node exists "
				 "(/dev/dri/renderD* is missing), so there is no kernel sync object "
				 "to import into; do run on a machine whose GPU driver is loaded "
				 "(amdgpu, i915, xe, nouveau, or virtio-gpu on Linux 6.6+)");
		else if (any_eacces)
			snprintf(v, vl, "external semaphores will NOT work: permission denied on the "
				 "render nodes; do add the user to the group owning /dev/dri/renderD* "
				 "(usually 'render') and log in again");
		else
			snprintf(v, vl, "external semaphores will NOT work: no render node supports "
				 "DRM sync objects; do use a driver with syncobj support (amdgpu, i915, "
				 "xe, nouveau, virtio-gpu) or point HIPEXTSEM_RENDER_NODE at one");
		return;
	}
	if (!rt->found || rt->error[0]) {
		snprintf(v, vl, "external semaphores will NOT work: %s; do install the HIP runtime "
			 "(ROCm, or Debian's libamdhip64-5) or add its directory to LD_LIBRARY_PATH",
			 rt->error[0] ? rt->error : "no HIP runtime found");
		return;
	}
	if (!strcmp(rt->sem_state, "hipextsem")) {
		snprintf(v, vl, "external semaphores will NOT work: %s is the hipextsem shim, not "
			 "a HIP runtime; do make libamdhip64 resolve to the real runtime",
			 rt->path);
		return;
	}
	if (!strcmp(rt->sem_state, "missing")) {
		snprintf(v, vl, "external semaphores will NOT work: %s has no external semaphore "
			 "API (it needs HIP 4.3 or later); do upgrade the HIP runtime", rt->path);
		return;
	}
	if (rt->n_missing) {
		snprintf(v, vl, "external semaphores will NOT work: %s lacks %s, which the shim "
			 "needs; do use HIP 5.0 or later", rt->path, rt->missing[0]);
		return;
	}
	if (!sh->found) {
		snprintf(v, vl, "external semaphores will NOT work: the shim library is missing "
			 "(%s); do install hipextsem or set HIPEXTSEM_LIBRARY to libextsem.so",
			 sh->error);
		return;
	}
	if (!sh->interposes) {
		snprintf(v, vl, "external semaphores will NOT work: the shim would not interpose "
			 "(%s); do rebuild hipextsem with version nodes matching this runtime",
			 sh->reason);
		return;
	}
	r->ok = true;
	snprintf(v, vl, "external semaphores will work: run the application with hipextsem-run "
		 "(or LD_PRELOAD=%s); %s (HIP %s ABI) on %s%s%s", sh->path, rt->path,
		 hx_abi_name(rt->abi), r->selected,
		 r->selected_timeline ? "" : "; binary semaphores only: the kernel driver has no "
					     "timeline sync objects (Linux 5.2+)",
		 r->selected_eventfd ? "" : "; no syncobj eventfd (Linux 6.6+): waits use the "
					    "multi-handle wait thread");
	if (sh->partial[0])
		append(v, vl, "; not intercepted (version node differs): %s", sh->partial);
	/* The shim's last clue (abi_rule.h) needs the runtime running, which
	 * this report never does. */
	if (rt->abi == HX_ABI_UNKNOWN)
		append(v, vl, "; neither the file name nor the soname tells the ABI: the shim asks "
			      "hipRuntimeGetVersion when it loads (HIPEXTSEM_ABI=5 or 6 sets it)");
}

/* ---- output ------------------------------------------------------------ */

/* Static advice, true whatever this machine is (docs/vulkan.md):
 * a HIP signal attaches its fence only when the stream reaches it, and
 * Mesa/RADV block inside vkQueueSubmit on a binary wait until then. */
static const char vulkan_note[] =
	"binary semaphores signaled from HIP get their fence only when the stream "
	"reaches the signal, so a Vulkan (Mesa/RADV) vkQueueSubmit waiting on one blocks "
	"until the stream's prior work is done; timeline semaphores do not block there: "
	"prefer them for HIP -> Vulkan";

static const char *empty_null(const char *s) { return s && *s ? s : NULL; }
static const char *tf(bool b) { return b ? "true" : "false"; }

/* What cannot be known without running the runtime: the device, the
 * attribute the shim reads, whether the runtime accepts the stream wait. */
static const char not_read_msg[] =
	"not read: that needs the runtime loaded and running (run --selftest to see)";

/* The wait path the shim starts with, from what decides it before any call
 * into the runtime (shim/wait.c choose_wait_path_locked): HIPEXTSEM_HOST_WAIT,
 * else the stream wait.  A runtime that refuses hipStreamWaitValue64 moves
 * the shim down a step at run time; only --selftest can see that. */
static int static_wait_path(const struct report *r, char *text, size_t len)
{
	if (r->host_wait) {
		snprintf(text, len, "host: waits BLOCK the calling thread until the semaphore is "
			 "signaled (HIPEXTSEM_HOST_WAIT=1)");
		return 1;
	}
	snprintf(text, len, "stream: waits are asynchronous, they do not block the calling "
		 "thread (the default: hipStreamWaitValue64, released by the shim's waiter "
		 "thread; if the runtime refused it the shim would step down and log why: "
		 "run --selftest to see this runtime do it)");
	return 0;
}

/* The wait path: what the shim will do with a wait, and the attribute it
 * reads (reported only).  From the self-test's child when it ran, from the
 * static rule otherwise. */
static void print_wait_path_json(const struct report *r, FILE *f)
{
	const struct hx_selftest_report *p = r->selftest;
	const char *path = p ? hx_selftest_fact(p, "wait_path") : NULL;
	const char *attr = p ? hx_selftest_fact(p, "attribute_read") : NULL;
	char msg[768] = "", at[256] = "";
	int blocks;

	if (p) {
		blocks = hx_selftest_wait_path(p, msg, sizeof(msg));
		hx_selftest_attribute(p, at, sizeof(at));
	} else {
		blocks = static_wait_path(r, msg, sizeof(msg));
		path = blocks ? "host" : "stream";
		snprintf(at, sizeof(at), "%s", not_read_msg);
	}
	fprintf(f, "{\"probed\": %s, \"source\": \"%s\", \"path\": ", tf(p && p->started),
		p ? "selftest" : "static");
	hx_json_str(f, path ? path : "unknown");
	fprintf(f, ", \"blocks_caller\": %s, \"attribute\": ",
		blocks < 0 ? "null" : tf(blocks == 1));
	if (attr && atoi(attr) >= 0)
		fprintf(f, "%d", atoi(attr));
	else
		fputs("null", f);
	fputs(", \"reason\": ", f);
	hx_json_str(f, p ? hx_selftest_fact(p, "wait_path_reason")
		       : r->host_wait ? "HIPEXTSEM_HOST_WAIT=1" : "the default");
	fputs(", \"message\": ", f);
	hx_json_str(f, msg);
	fputs(", \"attribute_message\": ", f);
	hx_json_str(f, at);
	fputs("}", f);
}

/* Where a program gets hipExternalMemoryGetMappedMipmappedArray from on
 * this runtime: "exported", "hipGetProcAddress" (hidden, handed out by it;
 * the shim then answers dlsym on the runtime's handle with it too),
 * "absent", or "not_exported" (whether hipGetProcAddress hands it out needs
 * the runtime running: --selftest asks).  NULL without a runtime. */
static const char *mipmap_state(const struct report *r, char *msg, size_t len)
{
	const struct runtime_report *rt = &r->rt;
	const char *pa = r->selftest ? hx_selftest_fact(r->selftest, "mipmapped_proc_address") : NULL;
	const char *ans = r->selftest ? hx_selftest_fact(r->selftest, "mipmapped_proc_answer") : NULL;
	const char *dl = r->selftest ? hx_selftest_fact(r->selftest, "mipmapped_dlsym") : NULL;

	if (!rt->found || rt->error[0] || !rt->sem_state || !strcmp(rt->sem_state, "hipextsem")) {
		snprintf(msg, len, "%s", "");
		return NULL;
	}
	if (rt->mipmap_exported) {
		snprintf(msg, len, "exported by the runtime (@%s)",
			 rt->mipmap_node[0] ? rt->mipmap_node : "unversioned");
		return "exported";
	}
	if (!rt->has_proc_address) {
		snprintf(msg, len, "absent: not exported, and the runtime has no hipGetProcAddress "
			 "(HIP 6.1+) that could hand it out; a program gets \"not found\" with or "
			 "without the shim");
		return "absent";
	}
	if (pa && !strcmp(pa, "handed out")) {
		snprintf(msg, len, "not exported, but the runtime's hipGetProcAddress hands it out; "
			 "the shim passes that through and answers dlsym/dlvsym on the runtime's "
			 "handle with it too (dlsym on that handle in the self-test: %s)",
			 dl ? dl : "not asked");
		return "hipGetProcAddress";
	}
	if (pa && !strcmp(pa, "not found")) {
		snprintf(msg, len, "absent: not exported, and the runtime's hipGetProcAddress "
			 "answers not found (%s); a program gets \"not found\" with or without the "
			 "shim", ans ? ans : "?");
		return "absent";
	}
	snprintf(msg, len, "not exported; whether the runtime's hipGetProcAddress hands it out "
		 "needs the runtime running (%s; no release and not clr's development tree "
		 "does)", pa ? "its self-test got no answer" : "run --selftest to see");
	return "not_exported";
}

static void print_json(const struct report *r, FILE *f)
{
	const struct runtime_report *rt = &r->rt;
	const struct shim_report *sh = &r->shim;

	fputs("{\n  \"tool\": \"hipextsem-info\",\n  \"version\": ", f);
	hx_json_str(f, HX_INFO_VERSION);
	fputs(",\n  \"kernel\": {\"sysname\": ", f);
	hx_json_str(f, r->uts.sysname);
	fputs(", \"release\": ", f);
	hx_json_str(f, r->uts.release);
	fputs(", \"machine\": ", f);
	hx_json_str(f, r->uts.machine);
	fputs("},\n  \"render_nodes\": [", f);
	for (size_t i = 0; i < r->n_nodes; i++) {
		const struct node_report *n = &r->nodes[i];
		fputs(i ? ",\n    {" : "\n    {", f);
		fputs("\"path\": ", f);
		hx_json_str(f, n->path);
		fputs(", \"driver\": ", f);
		hx_json_str(f, empty_null(n->driver));
		fputs(", \"pci_bus_id\": ", f);
		hx_json_str(f, empty_null(n->pci_bus_id));
		fprintf(f, ", \"syncobj\": %s, \"timeline\": %s, \"eventfd\": %s, \"selected\": %s, "
			"\"error\": ", tf(n->syncobj), tf(n->timeline), tf(n->eventfd),
			tf(n->selected));
		hx_json_str(f, n->err ? strerror(n->err) : NULL);
		fputc('}', f);
	}
	fputs(r->n_nodes ? "\n  ],\n" : "],\n", f);
	fputs("  \"render_node_env\": ", f);
	hx_json_str(f, r->node_env);
	fputs(",\n  \"selected_render_node\": ", f);
	hx_json_str(f, empty_null(r->selected));

	fprintf(f, ",\n  \"runtime\": {\n    \"found\": %s,\n    \"path\": ", tf(rt->found));
	hx_json_str(f, rt->found ? rt->path : NULL);
	fputs(",\n    \"real_path\": ", f);
	hx_json_str(f, rt->found ? empty_null(rt->real_path) : NULL);
	fputs(",\n    \"found_via\": ", f);
	hx_json_str(f, rt->found ? rt->via : NULL);
	fprintf(f, ",\n    \"found_by_loader\": %s", tf(rt->found && !rt->outside_loader));
	fputs(",\n    \"soname\": ", f);
	hx_json_str(f, empty_null(rt->soname));
	fputs(",\n    \"version\": ", f);
	hx_json_str(f, empty_null(rt->version));
	fputs(",\n    \"abi\": ", f);
	hx_json_str(f, rt->found && !rt->error[0] ? hx_abi_name(rt->abi) : NULL);
	fputs(",\n    \"abi_from\": ", f);
	hx_json_str(f, rt->found && !rt->error[0] && rt->abi != HX_ABI_UNKNOWN
			       ? hx_abi_clue_name(rt->abi_by) : NULL);
	fputs(",\n    \"semaphore_calls\": ", f);
	hx_json_str(f, rt->sem_state);
	fputs(",\n    \"semaphore_version_node\": ", f);
	hx_json_str(f, empty_null(rt->sem_node));
	{
		char mmsg[512];
		const char *mst = mipmap_state(r, mmsg, sizeof(mmsg));
		fputs(",\n    \"mipmapped_array\": ", f);
		hx_json_str(f, mst);
		fputs(",\n    \"mipmapped_array_message\": ", f);
		hx_json_str(f, mst ? mmsg : NULL);
	}
	fprintf(f, ",\n    \"cpuhip\": %s,\n    \"missing_symbols\": [", tf(rt->is_cpuhip));
	for (size_t i = 0; i < rt->n_missing; i++) {
		fputs(i ? ", " : "", f);
		hx_json_str(f, rt->missing[i]);
	}
	fputs("],\n    \"also_found\": [", f);
	for (size_t i = 0; i < rt->n_also; i++) {
		fputs(i ? ", " : "", f);
		hx_json_str(f, rt->also[i]);
	}
	fputs("],\n    \"by_soname\": [", f);
	for (size_t i = 0; i < rt->n_by_soname; i++) {
		fputs(i ? ", " : "", f);
		fputs("{\"soname\": ", f);
		hx_json_str(f, rt->by_soname[i].soname);
		fputs(", \"path\": ", f);
		hx_json_str(f, rt->by_soname[i].found ? rt->by_soname[i].path : NULL);
		fputs(", \"via\": ", f);
		hx_json_str(f, rt->by_soname[i].found ? rt->by_soname[i].via : NULL);
		fputc('}', f);
	}
	fputs("],\n    \"note\": ", f);
	hx_json_str(f, empty_null(rt->program_note));
	fputs(",\n    \"error\": ", f);
	hx_json_str(f, empty_null(rt->error));

	fprintf(f, "\n  },\n  \"shim\": {\n    \"found\": %s,\n    \"path\": ", tf(sh->found));
	hx_json_str(f, sh->path);
	fputs(",\n    \"found_via\": ", f);
	hx_json_str(f, sh->via);
	fputs(",\n    \"exports\": [", f);
	for (size_t i = 0; i < sh->n_exports; i++) {
		const struct shim_export *e = &sh->exports[i];
		fputs(i ? ",\n      {\"name\": " : "\n      {\"name\": ", f);
		hx_json_str(f, e->name);
		fputs(", \"node\": ", f);
		hx_json_str(f, empty_null(e->node));
		fprintf(f, ", \"runtime_defines\": %s, \"runtime_node\": ", tf(e->rt_defines));
		hx_json_str(f, empty_null(e->rt_node));
		fprintf(f, ", \"binds\": %s}", tf(e->binds));
	}
	fputs(sh->n_exports ? "\n    ],\n    \"not_interposed\": " : "],\n    \"not_interposed\": ", f);
	hx_json_str(f, empty_null(sh->partial));
	fprintf(f, ",\n    \"interposes\": %s,\n    \"reason\": ", tf(sh->interposes));
	hx_json_str(f, empty_null(sh->reason));
	fputs(",\n    \"error\": ", f);
	hx_json_str(f, empty_null(sh->error));
	fputs("\n  },\n  \"vulkan_note\": ", f);
	hx_json_str(f, vulkan_note);
	fputs(",\n  \"wait_path\": ", f);
	print_wait_path_json(r, f);
	fprintf(f, ",\n  \"verdict\": {\"ok\": %s, \"message\": ", tf(r->ok));
	hx_json_str(f, r->verdict);
	fputc('}', f);
	if (r->selftest) {
		fputs(",\n  \"selftest\": ", f);
		hx_selftest_print_json(r->selftest, f);
	}
	if (r->modes && r->modes->ran) {
		fputs(",\n  \"signal_modes\": ", f);
		hx_selftest_print_modes_json(r->modes, f);
	}
	fputs("\n}\n", f);
}

static const char *yes_no(bool b) { return b ? "yes" : "no"; }


/* The verdict comes first (the answer a user came for), then what it rests
 * on; the shim's symbol exports only with -v. */
static void print_text(const struct report *r, FILE *f, bool verbose)
{
	const struct runtime_report *rt = &r->rt;
	const struct shim_report *sh = &r->shim;

	fprintf(f, "hipextsem-info %s\n", HX_INFO_VERSION);
	fprintf(f, "Verdict: %s\n\n", r->verdict);
	fprintf(f, "Kernel:         %s %s (%s)\n", r->uts.sysname, r->uts.release, r->uts.machine);

	fputs("Render nodes:", f);
	if (r->n_nodes == 0)
		fputs("   none (/dev/dri/renderD* does not exist: no GPU driver with a render "
		      "node is loaded here)\n", f);
	else
		fputc('\n', f);
	for (size_t i = 0; i < r->n_nodes; i++) {
		const struct node_report *n = &r->nodes[i];
		if (n->err) {
			fprintf(f, "  %-20s cannot open: %s\n", n->path, strerror(n->err));
			continue;
		}
		fprintf(f, "  %-20s driver %-10s syncobj %-3s timeline %-3s eventfd %-3s%s%s%s\n",
			n->path, n->driver[0] ? n->driver : "?", yes_no(n->syncobj), yes_no(n->timeline),
			yes_no(n->eventfd), n->pci_bus_id[0] ? " pci " : "", n->pci_bus_id,
			n->selected ? "  <- the shim uses this one" : "");
	}
	if (r->node_env)
		fprintf(f, "  (HIPEXTSEM_RENDER_NODE=%s)\n", r->node_env);

	fputs("\nHIP runtime:", f);
	if (!rt->found) {
		fprintf(f, "    not found: %s\n", rt->error);
	} else {
		fprintf(f, "    %s (found via %s)\n", rt->path, rt->via);
		if (rt->outside_loader)
			fprintf(f, "  note:         AMD's layout, where the loader does not look: a "
				"program finds it through LD_LIBRARY_PATH, an ld.so.conf.d entry "
				"(ldconfig) or its own RUNPATH\n");
		if (rt->error[0])
			fprintf(f, "  error:        %s\n", rt->error);
		if (strcmp(rt->real_path, rt->path) != 0)
			fprintf(f, "  file:         %s\n", rt->real_path);
		fprintf(f, "  soname:       %s\n", rt->soname[0] ? rt->soname : "(none)");
		fprintf(f, "  version:      %s\n", rt->version[0] ? rt->version : "(unknown)");
		fprintf(f, "  ABI:          %s%s%s\n", hx_abi_name(rt->abi),
			rt->abi == HX_ABI_5   ? " (32-byte handle descriptor, 136-byte params)" :
			rt->abi == HX_ABI_6   ? " (96-byte handle descriptor, 144-byte params)" :
						" (neither file name nor soname tells; the shim asks "
						"hipRuntimeGetVersion, HIPEXTSEM_ABI=5 or 6 forces it)",
			rt->abi == HX_ABI_UNKNOWN ? "" : rt->abi_by == HX_ABI_BY_SONAME
				? ", from the soname" : ", from the file name");
		if (rt->sem_state && !strcmp(rt->sem_state, "stock"))
			fprintf(f, "  semaphores:   stock: the runtime's own calls (@%s), which "
				"answer \"not supported\" on Linux%s\n",
				rt->sem_node[0] ? rt->sem_node : "unversioned",
				rt->is_cpuhip ? " (this is hipextsem's CPU reference runtime)" : "");
		else if (rt->sem_state && !strcmp(rt->sem_state, "hipextsem"))
			fputs("  semaphores:   this file is the hipextsem shim itself\n", f);
		else if (rt->sem_state)
			fputs("  semaphores:   missing (runtime older than HIP 4.3)\n", f);
		{
			char mmsg[512];
			if (mipmap_state(r, mmsg, sizeof(mmsg)))
				fprintf(f, "  mipmapped:    %s: %s\n", mipmap_call, mmsg);
		}
		if (rt->n_missing)
			fprintf(f, "  missing:      %s (needed by the shim)\n", rt->missing[0]);
		for (size_t i = 0; i < rt->n_also; i++)
			fprintf(f, "  also found:   %s (used by applications linked against it)\n",
				rt->also[i]);
	}
	if (rt->n_by_soname) {
		/* The shim sees whichever runtime the application loads: one
		 * linked against .so.5 gets the .so.5 line, whatever is newer. */
		fputs("  by soname:    what an application naming each soname loads here "
		      "(the shim sees that one; above: the newest; --program PROG for one "
		      "application)\n", f);
		for (size_t i = 0; i < rt->n_by_soname; i++) {
			if (rt->by_soname[i].found)
				fprintf(f, "    %-18s -> %s (via %s)\n", rt->by_soname[i].soname,
					rt->by_soname[i].path, rt->by_soname[i].via);
			else
				fprintf(f, "    %-18s -> not found\n", rt->by_soname[i].soname);
		}
	}
	if (rt->program_note[0])
		fprintf(f, "  note:         %s\n", rt->program_note);

	fputs("\nShim:", f);
	if (!sh->found) {
		fprintf(f, "           not found: %s (via %s)\n", sh->error, sh->via);
	} else {
		fprintf(f, "           %s (found via %s)\n", sh->path, sh->via);
		if (verbose) {
			for (size_t i = 0; i < sh->n_exports; i++) {
				const struct shim_export *e = &sh->exports[i];
				if (i == 0 || strcmp(e->node, sh->exports[i - 1].node) != 0)
					fprintf(f, "%s  exports @%-10s", i ? "\n" : "",
						e->node[0] ? e->node : "(none)");
				fprintf(f, " %s", e->name);
			}
			if (sh->n_exports)
				fputc('\n', f);
		} else {
			fprintf(f, "  exports:      %zu symbols (-v lists them with their version "
				"nodes)\n", sh->n_exports);
		}
		fprintf(f, "  interposes:   %s: %s\n", yes_no(sh->interposes), sh->reason);
		if (sh->partial[0])
			fprintf(f, "  not bound:    %s (version node differs from the runtime's)\n",
				sh->partial);
	}
	if (!r->selftest) {
		char msg[768];
		static_wait_path(r, msg, sizeof(msg));
		fprintf(f, "\nWait path:      %s\n  attribute:    "
			"hipDeviceAttributeCanUseStreamWaitValue (10013): %s\n", msg, not_read_msg);
	}
	fprintf(f, "\nVulkan:         note: %s\n", vulkan_note);
	if (r->selftest)
		hx_selftest_print_text(r->selftest, f);
	if (r->modes)
		hx_selftest_print_modes_text(r->modes, f);
}

/* --selftest: the only place the runtime is loaded, in a child with the
 * shim preloaded.  It needs a runtime and a shim that interposes on it. */
static void run_selftest(struct report *r, unsigned rounds, double timeout_s, bool modes)
{
	static struct hx_selftest_modes mode_runs;
	static struct hx_selftest_report result;
	char load_path[PATH_MAX + 2];
	struct hx_selftest_opts o = {
		.shim = r->shim.path, .runtime = load_path, .abi = r->rt.abi,
		.rounds = rounds, .timeout_s = timeout_s,
	};

	r->selftest = &result;
	if (!r->rt.found || r->rt.error[0] || !r->rt.sem_state ||
	    strcmp(r->rt.sem_state, "stock") != 0 || r->rt.n_missing ||
	    r->rt.abi == HX_ABI_UNKNOWN || !r->shim.found || !r->shim.interposes) {
		result.rounds = rounds;
		result.timeout_s = timeout_s;
		snprintf(result.cannot_run, sizeof(result.cannot_run), "%.1000s", r->verdict);
		return;
	}
	/* The child loads the very file reported: by its resolved path, never
	 * by a bare name the loader would look up in its own directories. */
	snprintf(load_path, sizeof(load_path), "%s%s", strchr(r->rt.real_path, '/') ? "" : "./",
		 r->rt.real_path);
	hx_selftest_run(&o, &result);
	/* The signal modes compared: only where the self-test itself passed
	 * (a figure from a runtime that fails the checks says nothing). */
	if (modes && result.passed) {
		r->modes = &mode_runs;
		hx_selftest_run_modes(&o, &mode_runs);
	}
}

/* Text output goes through a filter: every string in it may come from a
 * file or an environment the user does not control. */
static int print_text_safe(const struct report *r, FILE *out, bool verbose)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return -1;
	print_text(r, m, verbose);
	if (fclose(m) != 0) {
		free(buf);
		return -1;
	}
	hx_text_write_safe(out, buf, len);
	free(buf);
	return 0;
}

/* HIPEXTSEM_HOST_WAIT=1 read as the shim reads it (hx_getenv_long: an
 * integer in base 0, 0 or 1; anything else is ignored with a warning). */
static bool host_wait_forced(void)
{
	const char *s = getenv("HIPEXTSEM_HOST_WAIT");
	char *end;
	long v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtol(s, &end, 0);
	return !errno && !*end && v == 1;
}

static void usage(FILE *f)
{
	fputs("Usage: hipextsem-info [OPTIONS]\n"
	      "\n"
	      "Reports whether HIP external semaphores can work on this machine with the\n"
	      "hipextsem shim: a one-line verdict first, then what it rests on: the\n"
	      "kernel, each DRM render node (driver, sync object, timeline and eventfd\n"
	      "support), the HIP runtime an application would load, whether the shim\n"
	      "would interpose on it, the wait path the shim will take.  Without\n"
	      "--selftest nothing is loaded or run: the\n"
	      "runtime, the shim and PROG are read as files and the loader's search rules\n"
	      "are applied by hand, so pointing this at untrusted files is safe.\n"
	      "\n"
	      "Options:\n"
	      "  --selftest        also send semaphores through the shim on a real HIP\n"
	      "                    stream and this machine's render node: one line per\n"
	      "                    check (created streams and hipStreamPerThread, and a\n"
	      "                    process that exits with waits pending), latencies\n"
	      "                    against the bare runtime primitives, and a verdict.\n"
	      "                    This LOADS AND RUNS the runtime found (its\n"
	      "                    constructors included), in a child process with the\n"
	      "                    shim preloaded: use it only on a runtime you trust\n"
	      "                    Then each signal mode (HIPEXTSEM_SIGNAL_MODE: hostfunc,\n"
	      "                    poll) is measured in a process of its own (enqueue\n"
	      "                    cost, hand-off to the kernel, the poll thread's CPU per\n"
	      "                    signal) and the mode for this machine is recommended\n"
	      "  --no-signal-modes with --selftest: leave out the comparison of the modes\n"
	      "  --rounds N        rounds per check and measurement (default 100)\n"
	      "  --timeout SECONDS deadline of every wait in a check (default 5)\n"
	      "  --json            machine-readable output (one JSON object)\n"
	      "  -v, --verbose     also list the shim's exported symbols and their\n"
	      "                    version nodes\n"
	      "  --program PROG    look for the runtime the way PROG would load it (its\n"
	      "                    DT_NEEDED soname, RPATH/RUNPATH)\n"
	      "  --runtime FILE    inspect FILE as the HIP runtime instead of searching\n"
	      "                    (e.g. a Python wheel's torch/lib/libamdhip64.so; a name\n"
	      "                    without a slash is a file in the current directory)\n"
	      "  -h, --help        show this help and exit\n"
	      "  --version         show the version and exit\n"
	      "\n"
	      "Environment: HIPEXTSEM_RENDER_NODE (the node the shim must use),\n"
	      "HIPEXTSEM_LIBRARY (the shim to check), LD_LIBRARY_PATH and ROCM_PATH\n"
	      "(runtime search: the loader's rules, then $ROCM_PATH/lib, /opt/rocm/lib,\n"
	      "/opt/rocm-X.Y.Z/lib newest first).\n"
	      "\n"
	      "Exit status: 0 if external semaphores will work, 1 if not, 2 on bad usage;\n"
	      "with --selftest, 0 only if every check passed, 1 if one failed or the\n"
	      "self-test cannot run here (the reason is stated).\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "program", required_argument, NULL, 'p' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "selftest", no_argument, NULL, 'S' },
		{ "no-signal-modes", no_argument, NULL, 'M' },
		{ "rounds", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct report r;
	const char *program = NULL, *forced_rt = NULL;
	bool json = false, selftest = false, modes = true, modes_arg = false, verbose = false;
	const char *rounds_arg = NULL, *timeout_arg = NULL;
	unsigned rounds = 100;
	double timeout_s = 5.0;
	int c;

	if (argc > 1 && !strcmp(argv[1], HX_SELFTEST_CHILD_ARG))
		return hx_selftest_child_main(argc, argv);
	if (argc > 1 && !strcmp(argv[1], HX_SELFTEST_EXIT_ARG))
		return hx_selftest_exit_child_main(argc, argv);

	while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'v': verbose = true; break;
		case 'p': program = optarg; break;
		case 'r': forced_rt = optarg; break;
		case 'S': selftest = true; break;
		case 'M': modes = false; modes_arg = true; break;
		case 'n': rounds_arg = optarg; break;
		case 't': timeout_arg = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("hipextsem-info %s\n", HX_INFO_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hipextsem-info: unexpected argument '%s' (see --help)\n",
			argv[optind]);
		return 2;
	}

	if (modes_arg && !selftest) {
		fprintf(stderr, "hipextsem-info: --no-signal-modes needs --selftest\n");
		return 2;
	}
	if ((rounds_arg || timeout_arg) && !selftest) {
		fprintf(stderr, "hipextsem-info: --rounds and --timeout need --selftest\n");
		return 2;
	}
	if (rounds_arg) {
		char *end;
		unsigned long v = strtoul(rounds_arg, &end, 10);
		if (*end || !*rounds_arg || v < 1 || v > 100000) {
			fprintf(stderr, "hipextsem-info: --rounds takes 1..100000, not '%s'\n",
				rounds_arg);
			return 2;
		}
		rounds = (unsigned)v;
	}
	if (timeout_arg) {
		char *end;
		double v = strtod(timeout_arg, &end);
		if (*end || !*timeout_arg || !(v >= 0.1 && v <= 3600)) {
			fprintf(stderr, "hipextsem-info: --timeout takes 0.1..3600 seconds, not "
				"'%s'\n", timeout_arg);
			return 2;
		}
		timeout_s = v;
	}

	r.host_wait = host_wait_forced();
	if (uname(&r.uts) != 0)
		snprintf(r.uts.sysname, sizeof(r.uts.sysname), "unknown");
	collect_nodes(&r);
	if (!find_runtime(&r.rt, forced_rt, program))
		return 2;
	find_shim(&r.shim);
	if (r.shim.found)
		check_interposition(&r.shim, &r.rt);
	decide(&r);
	if (selftest)
		run_selftest(&r, rounds, timeout_s, modes);

	if (json)
		print_json(&r, stdout);
	else if (print_text_safe(&r, stdout, verbose) != 0)
		return 2;
	if (fflush(stdout) != 0)
		return 2;
	/* A mode that cannot signal here is a failure like a check's. */
	if (selftest)
		return r.selftest->passed && (!r.modes || r.modes->all_measured) ? 0 : 1;
	return r.ok ? 0 : 1;
}
