/* SPDX-License-Identifier: MIT */
/* The library search of libsearch.h: the loader's rules, then ROCm's. */
#include "libsearch.h"

#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfscan.h"

static bool usable(const char *path)
{
	char err[128];
	struct elf_scan *es = elf_scan_open(path, err, sizeof(err));
	bool ok = es && elf_scan_matches_self(es);

	elf_scan_close(es);
	return ok;
}

/* Length of the token $ORIGIN or ${ORIGIN} at s, 0 if s does not start
 * with one.  As ld.so reads it (glibc elf/dl-load.c is_dst): unbraced, the
 * name must not run on into identifier characters, so "$ORIGINfoo" is no
 * token and stays as written. */
static size_t origin_token(const char *s)
{
	if (!strncmp(s, "${ORIGIN}", 9))
		return 9;
	if (strncmp(s, "$ORIGIN", 7) != 0)
		return 0;
	return isalnum((unsigned char)s[7]) || s[7] == '_' ? 0 : 7;
}

/* Expands $ORIGIN / ${ORIGIN} (the only token that matters for a HIP
 * application; $LIB and $PLATFORM are left as they are).  Returns false
 * when the element holds $ORIGIN and there is no origin to put there:
 * ld.so drops such an element (elf/dl-load.c _dl_dst_substitute). */
static bool expand_origin(const char *dir, const char *origin, char *out, size_t len)
{
	size_t o = 0;

	while (*dir && o + 1 < len) {
		size_t skip = origin_token(dir);
		if (skip && !origin)
			return false;
		if (skip) {
			o += (size_t)snprintf(out + o, len - o, "%s", origin);
			if (o >= len)
				o = len - 1;
			dir += skip;
		} else {
			out[o++] = *dir++;
		}
	}
	out[o] = '\0';
	return true;
}

/* Tries every directory of a colon (or semicolon, for LD_LIBRARY_PATH)
 * separated list.  An empty element means the current directory. */
static bool search_list(const char *list, const char *seps, const char *soname,
			const char *origin, struct lib_hit *hit, const char *via)
{
	char dir[PATH_MAX], expanded[PATH_MAX];

	if (!list)
		return false;
	while (1) {
		size_t n = strcspn(list, seps);
		if (n < sizeof(dir)) {
			memcpy(dir, list, n);
			dir[n] = '\0';
			bool keep = expand_origin(dir, origin, expanded, sizeof(expanded));
			int len = snprintf(hit->path, sizeof(hit->path), "%s/%s",
					   expanded[0] ? expanded : ".", soname);
			if (keep && len > 0 && (size_t)len < sizeof(hit->path) &&
			    usable(hit->path)) {
				hit->via = via;
				hit->loader = true;
				return true;
			}
		}
		if (!list[n])
			return false;
		list += n + 1;
	}
}

/*
 * /etc/ld.so.cache, new format ("glibc-ld.so.cache1.1"), possibly after an
 * old-format ("ld.so-1.7.0") table.  String offsets are relative to the
 * start of the new-format header.  Layout from glibc's sysdeps/generic/
 * dl-cache.h; the format has been stable since glibc 2.2.
 */
#define CACHE_OLD_MAGIC "ld.so-1.7.0"
#define CACHE_NEW_MAGIC "glibc-ld.so.cache1.1"

struct cache_new_header {
	char magic[20];
	uint32_t nlibs;
	uint32_t len_strings;
	uint8_t flags;
	uint8_t pad[3];
	uint32_t extension_offset;
	uint32_t unused[3];
};

struct cache_new_entry {
	int32_t flags;
	uint32_t key, value;
	uint32_t osversion;
	uint64_t hwcap;
};

static bool search_cache(const char *soname, struct lib_hit *hit)
{
	FILE *f = fopen("/etc/ld.so.cache", "rbe");
	char *buf = NULL;
	size_t size = 0, off = 0;
	bool found = false;
	const struct cache_new_header *h;

	if (!f)
		return false;
	if (fseek(f, 0, SEEK_END) == 0) {
		long end = ftell(f);
		if (end > 0 && end < (64L << 20)) {
			size = (size_t)end;
			buf = malloc(size);
			rewind(f);
			if (buf && fread(buf, 1, size, f) != size) {
				free(buf);
				buf = NULL;
			}
		}
	}
	fclose(f);
	if (!buf)
		return false;

	if (size >= 16 && !memcmp(buf, CACHE_OLD_MAGIC, strlen(CACHE_OLD_MAGIC))) {
		uint32_t nold;
		memcpy(&nold, buf + 12, sizeof(nold));
		off = 16 + (size_t)nold * 12;
		off = (off + 7) & ~(size_t)7; /* aligned for the new header */
	}
	if (off + sizeof(*h) > size || memcmp(buf + off, CACHE_NEW_MAGIC, 20) != 0)
		goto out;
	h = (const struct cache_new_header *)(buf + off);
	if (h->nlibs > (size - off - sizeof(*h)) / sizeof(struct cache_new_entry))
		goto out;
	for (uint32_t i = 0; i < h->nlibs && !found; i++) {
		struct cache_new_entry e;
		memcpy(&e, buf + off + sizeof(*h) + i * sizeof(e), sizeof(e));
		if (off + e.key >= size || off + e.value >= size)
			continue;
		const char *key = buf + off + e.key, *value = buf + off + e.value;
		if (!memchr(key, '\0', size - off - e.key) ||
		    !memchr(value, '\0', size - off - e.value) || strcmp(key, soname) != 0)
			continue;
		/* Entries of other ABIs (32-bit, x32) share the key: the
		 * loader checks the flags, we check the file itself. */
		if (usable(value)) {
			snprintf(hit->path, sizeof(hit->path), "%s", value);
			hit->via = "ld.so.cache";
			hit->loader = true;
			found = true;
		}
	}
out:
	free(buf);
	return found;
}

#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MULTIARCH "powerpc64le-linux-gnu"
#endif

static const char default_dirs[] =
#ifdef MULTIARCH
	"/lib/" MULTIARCH ":/usr/lib/" MULTIARCH ":"
#endif
	"/lib64:/usr/lib64:/lib:/usr/lib";

/* ---- AMD's layout --------------------------------------------------- */

/* dir/lib/soname, if usable. */
static bool try_rocm(const char *dir, const char *soname, struct lib_hit *hit, const char *via)
{
	int len = snprintf(hit->path, sizeof(hit->path), "%s/lib/%s", dir, soname);

	if (len <= 0 || (size_t)len >= sizeof(hit->path) || !usable(hit->path))
		return false;
	hit->via = via;
	hit->loader = false;
	return true;
}

/* Newest first: /opt/rocm-6.10.0 before /opt/rocm-6.9.1 (strverscmp). */
static int newest_first(const struct dirent **a, const struct dirent **b)
{
	return strverscmp((*b)->d_name, (*a)->d_name);
}

static int is_rocm_version(const struct dirent *d)
{
	return !strncmp(d->d_name, "rocm-", 5) && d->d_name[5] >= '0' && d->d_name[5] <= '9';
}

static bool search_rocm(const char *soname, struct lib_hit *hit)
{
	const char *env = getenv("ROCM_PATH");
	struct dirent **list = NULL;
	bool found = false;
	int n;

	if (env && env[0] == '/' && try_rocm(env, soname, hit, "ROCM_PATH"))
		return true;
	if (try_rocm("/opt/rocm", soname, hit, "/opt/rocm"))
		return true;
	n = scandir("/opt", &list, is_rocm_version, newest_first);
	for (int i = 0; i < n; i++) {
		char dir[PATH_MAX];

		if (!found && (size_t)snprintf(dir, sizeof(dir), "/opt/%s", list[i]->d_name) <
				      sizeof(dir))
			found = try_rocm(dir, soname, hit, "/opt/rocm-*");
		free(list[i]);
	}
	free(list);
	return found;
}

const char *lib_search_places(bool with_program, char *buf, size_t len)
{
	const char *env = getenv("ROCM_PATH");

	snprintf(buf, len,
		 "%sLD_LIBRARY_PATH, ld.so.cache, the default directories, %s%s%s"
		 "/opt/rocm/lib and /opt/rocm-*/lib",
		 with_program ? "the program's RPATH/RUNPATH, " : "",
		 env && env[0] == '/' ? "$ROCM_PATH/lib (" : "",
		 env && env[0] == '/' ? env : "", env && env[0] == '/' ? "/lib), " : "");
	return buf;
}

bool lib_search(const char *soname, const struct lib_search_ctx *ctx, struct lib_hit *hit)
{
	const char *origin = ctx ? ctx->origin : NULL;
	const char *llp;

	if (strchr(soname, '/')) {
		snprintf(hit->path, sizeof(hit->path), "%s", soname);
		hit->via = "path";
		hit->loader = true;
		return usable(soname);
	}
	/* DT_RPATH is ignored when DT_RUNPATH is present. */
	if (ctx && ctx->rpath && !ctx->runpath &&
	    search_list(ctx->rpath, ":", soname, origin, hit, "DT_RPATH"))
		return true;
	/* ld.so expands $ORIGIN in LD_LIBRARY_PATH too, to the directory of
	 * the program (elf/dl-load.c _dl_init_paths); without --program there
	 * is none and such an element is dropped. */
	llp = getenv("LD_LIBRARY_PATH");
	if (llp && *llp && search_list(llp, ":;", soname, origin, hit, "LD_LIBRARY_PATH"))
		return true;
	if (ctx && ctx->runpath &&
	    search_list(ctx->runpath, ":", soname, origin, hit, "DT_RUNPATH"))
		return true;
	if (search_cache(soname, hit))
		return true;
	if (search_list(default_dirs, ":", soname, NULL, hit, "default directory"))
		return true;
	return search_rocm(soname, hit);
}
