/* SPDX-License-Identifier: MIT */
/*
 * The shared ABI rule (shim/abi_rule.h), on names as AMD, Debian and Python
 * wheels ship them, and the shim's in-memory soname reader on a runtime
 * loaded under its own name and under a wheel-style copy with no version
 * suffix (the case where the soname is the clue that decides).
 *
 *   abi-rule-test LIBAMDHIP64 SONAME   (a runtime file and its DT_SONAME)
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi_rule.h"

static int failures;

#define EXPECT(cond, ...)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);           \
			printf(__VA_ARGS__);                                  \
			printf("\n");                                         \
			failures++;                                           \
		}                                                             \
	} while (0)

static void names(void)
{
	static const struct {
		const char *name;
		enum hx_abi abi;
	} cases[] = {
		{ "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153", HX_ABI_5 },
		{ "/opt/rocm-5.7.1/lib/libamdhip64.so.5.7.50701", HX_ABI_5 },
		{ "/opt/rocm-6.4.3/lib/libamdhip64.so.6.4.60403", HX_ABI_6 },
		{ "libamdhip64.so.7", HX_ABI_6 },
		{ "libamdhip64.so.12", HX_ABI_6 },
		{ "libamdhip64.so.99999999999999999999", HX_ABI_6 },
		{ "libamdhip64.so.4", HX_ABI_UNKNOWN },
		{ "libamdhip64.so.0", HX_ABI_UNKNOWN },
		{ "libamdhip64.so", HX_ABI_UNKNOWN },
		{ "/venv/lib/python3.12/site-packages/torch/lib/libamdhip64.so", HX_ABI_UNKNOWN },
		{ "libamdhip64-3a1b2c4d.so", HX_ABI_UNKNOWN },
		{ "libamdhip64.so.x", HX_ABI_UNKNOWN },
		{ "libamdhip64.so.", HX_ABI_UNKNOWN },
		{ "/opt/x.so.5/libamdhip64.so", HX_ABI_UNKNOWN }, /* only the last component */
		{ "", HX_ABI_UNKNOWN },
		{ NULL, HX_ABI_UNKNOWN },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		EXPECT(hx_abi_from_name(cases[i].name) == cases[i].abi, "name %s: %d, expected %d",
		       cases[i].name ? cases[i].name : "(null)", hx_abi_from_name(cases[i].name),
		       cases[i].abi);
}

static void rule(void)
{
	enum hx_abi_clue by;

	/* The file name decides first, even against the soname. */
	EXPECT(hx_abi_rule("/opt/rocm/lib/libamdhip64.so.6.4.60403", "libamdhip64.so.6", &by) ==
			       HX_ABI_6 && by == HX_ABI_BY_FILE_NAME,
	       "AMD layout");
	EXPECT(hx_abi_rule("/x/libamdhip64.so.5.2.21153", "libamdhip64.so.6", &by) == HX_ABI_5 &&
		       by == HX_ABI_BY_FILE_NAME,
	       "file name before soname");
	/* A wheel's copy: no suffix, the soname tells. */
	EXPECT(hx_abi_rule("/w/torch/lib/libamdhip64.so", "libamdhip64.so.6", &by) == HX_ABI_6 &&
		       by == HX_ABI_BY_SONAME,
	       "wheel with a soname");
	EXPECT(hx_abi_rule("/w/torch/lib/libamdhip64.so", "libamdhip64.so", &by) ==
			       HX_ABI_UNKNOWN && by == HX_ABI_BY_NONE,
	       "nothing tells");
	EXPECT(hx_abi_rule("/w/libamdhip64.so", NULL, NULL) == HX_ABI_UNKNOWN, "no soname");
	EXPECT(!strcmp(hx_abi_clue_name(HX_ABI_BY_FILE_NAME), "file name") &&
		       !strcmp(hx_abi_clue_name(HX_ABI_BY_SONAME), "soname") &&
		       !strcmp(hx_abi_clue_name(HX_ABI_BY_VERSION), "hipRuntimeGetVersion") &&
		       !strcmp(hx_abi_clue_name(HX_ABI_BY_NONE), "nothing"),
	       "clue names");

	/* HIP_VERSION: major * 10^7 + minor * 10^5 + patch. */
	EXPECT(hx_abi_from_version(50221153) == HX_ABI_5, "5.2");
	EXPECT(hx_abi_from_version(50731921) == HX_ABI_5, "5.7");
	EXPECT(hx_abi_from_version(60443483) == HX_ABI_6, "6.4");
	EXPECT(hx_abi_from_version(70251234) == HX_ABI_6, "7.2");
	EXPECT(hx_abi_from_version(40400000) == HX_ABI_UNKNOWN, "4.4");
	EXPECT(hx_abi_from_version(0) == HX_ABI_UNKNOWN, "0");
	EXPECT(hx_abi_from_version(-1) == HX_ABI_UNKNOWN, "-1");
}

/* Loads `path` and reads the soname of the object holding one of its
 * functions from memory, as the shim does. */
static void loaded(const char *path, const char *want)
{
	char buf[128];
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	void *fn;
	const char *got;

	EXPECT(h != NULL, "dlopen %s: %s", path, dlerror());
	if (!h)
		return;
	fn = dlsym(h, "hipStreamWaitValue64");
	EXPECT(fn != NULL, "%s has no hipStreamWaitValue64", path);
	got = hx_abi_loaded_soname(fn, buf, sizeof(buf));
	EXPECT(got && !strcmp(got, want), "%s: soname %s, expected %s", path, got ? got : "(none)",
	       want);
	/* A short buffer truncates, never overruns. */
	got = hx_abi_loaded_soname(fn, buf, 4);
	EXPECT(got && strlen(got) == 3, "truncated soname %s", got ? got : "(none)");
	/* An address in no loaded object: none. */
	EXPECT(!hx_abi_loaded_soname((void *)16, buf, sizeof(buf)), "soname for address 16");
	printf("%s: soname %s from memory\n", path, want);
	dlclose(h);
}

/* A wheel-style copy, …/lib/libamdhip64.so with no version suffix. */
static void wheel_copy(const char *src, const char *want)
{
	char dir[] = "/tmp/hxabirule.XXXXXX", dst[64], buf[65536];
	enum hx_abi_clue by;
	ssize_t n;
	int in, out;

	if (!mkdtemp(dir)) {
		EXPECT(0, "mkdtemp");
		return;
	}
	snprintf(dst, sizeof(dst), "%s/libamdhip64.so", dir);
	in = open(src, O_RDONLY | O_CLOEXEC);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	EXPECT(in >= 0 && out >= 0, "copy %s to %s", src, dst);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		EXPECT(write(out, buf, (size_t)n) == n, "write");
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	loaded(dst, want);
	EXPECT(hx_abi_rule(dst, want, &by) == hx_abi_from_name(want) && by == HX_ABI_BY_SONAME,
	       "the wheel copy's ABI comes from its soname");
	unlink(dst);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: abi-rule-test LIBAMDHIP64 SONAME\n");
		return 2;
	}
	names();
	rule();
	loaded(argv[1], argv[2]);
	wheel_copy(argv[1], argv[2]);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
