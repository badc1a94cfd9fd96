/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target over what hipextsem-info reads from files a user may not
 * trust: the ELF scanner (tools/info/elfscan.c), the loader-rule search
 * (tools/info/libsearch.c) and the output escaping (tools/info/json.c).
 *
 * The first byte picks what the rest is:
 *   even: an ELF file.  It is scanned through every accessor; then the
 *         library search runs with its DT_RPATH/DT_RUNPATH and its first
 *         DT_NEEDED name, as --program does.
 *   odd:  NUL-separated strings: RPATH, RUNPATH, ORIGIN, SONAME and
 *         LD_LIBRARY_PATH for a search by hand.
 * Every string that came out of the input is also written as JSON and as
 * safe text; both must come out as valid UTF-8 (checked here: a failure
 * aborts), the text without control characters other than newline.
 *
 * Built with clang by build-fuzz-elf, run for a bounded time by run-fuzz
 * over seeds made from small ELF files of the build (tests/fuzz/meson.build).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfscan.h"
#include "json.h"
#include "libsearch.h"

static void must_be_utf8(const char *buf, size_t len, bool text)
{
	const unsigned char *s = (const unsigned char *)buf;

	while (len) {
		size_t n = hx_utf8_len(s, len);
		if (n == 0)
			abort(); /* escaped output that is not UTF-8 */
		if (text && n == 1 && ((s[0] < 0x20 && s[0] != '\n') || s[0] == 0x7f))
			abort(); /* a raw control character in text output */
		if (text && n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
			abort(); /* a raw C1 control */
		s += n, len -= n;
	}
}

static void check_output(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (!s)
		return;
	m = open_memstream(&buf, &len);
	if (!m)
		return;
	hx_json_str(m, s);
	fclose(m);
	must_be_utf8(buf, len, false);
	free(buf);
	buf = NULL;
	m = open_memstream(&buf, &len);
	if (!m)
		return;
	hx_text_write_safe(m, s, strlen(s));
	fclose(m);
	must_be_utf8(buf, len, true);
	free(buf);
}

static void on_defined(const char *name, const char *node, void *arg)
{
	size_t *count = arg;

	(*count)++;
	if (*count < 64) {
		check_output(name);
		check_output(node);
	}
}

static void search(const char *rpath, const char *runpath, const char *origin,
		   const char *soname)
{
	struct lib_search_ctx ctx = { .rpath = rpath, .runpath = runpath, .origin = origin };
	struct lib_hit hit;

	if (!soname || !*soname)
		return;
	if (lib_search(soname, &ctx, &hit))
		check_output(hit.path);
}

static void scan_elf(const uint8_t *data, size_t size)
{
	char path[64], err[128];
	struct elf_scan *es;
	const char *node;
	size_t count = 0;
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	es = elf_scan_open(path, err, sizeof(err));
	if (es) {
		(void)elf_scan_class(es);
		(void)elf_scan_machine(es);
		(void)elf_scan_matches_self(es);
		check_output(elf_scan_soname(es));
		check_output(elf_scan_rpath(es));
		check_output(elf_scan_runpath(es));
		for (size_t i = 0; i < elf_scan_needed_count(es); i++)
			check_output(elf_scan_needed(es, i));
		(void)elf_scan_needed(es, elf_scan_needed_count(es));
		if (elf_scan_defines(es, "hipImportExternalSemaphore", &node))
			check_output(node);
		(void)elf_scan_defines(es, "hipextsemGetStats", &node);
		elf_scan_foreach_defined(es, on_defined, &count);
		search(elf_scan_rpath(es), elf_scan_runpath(es), "/nonexistent/origin",
		       elf_scan_needed_count(es) ? elf_scan_needed(es, 0) : "libamdhip64.so.6");
		elf_scan_close(es);
	} else {
		check_output(err);
	}
	close(fd);
}

/* The i-th NUL-separated string of buf (of len bytes, NUL-terminated). */
static const char *field(const char *buf, size_t len, int i)
{
	size_t o = 0;

	while (i-- > 0) {
		o += strlen(buf + o) + 1;
		if (o >= len)
			return NULL;
	}
	return buf + o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if ((data[0] & 1) == 0) {
		scan_elf(data + 1, size - 1);
	} else if (size < 4096) {
		char *buf = malloc(size);
		const char *llp;

		if (!buf)
			return 0;
		memcpy(buf, data + 1, size - 1);
		buf[size - 1] = '\0';
		llp = field(buf, size, 4);
		if (llp)
			setenv("LD_LIBRARY_PATH", llp, 1);
		else
			unsetenv("LD_LIBRARY_PATH");
		search(field(buf, size, 0), field(buf, size, 1), field(buf, size, 2),
		       field(buf, size, 3));
		for (int i = 0; i < 5; i++)
			check_output(field(buf, size, i));
		unsetenv("LD_LIBRARY_PATH");
		free(buf);
	}
	return 0;
}
