/* SPDX-License-Identifier: MIT */
/*
 * libhxwork-covdump.so: preloaded by the driver's selftest op in a
 * coverage run (hxwork cov) into hipextsem-info, which keeps it in the
 * LD_PRELOAD of the self-test children it starts.  Those children end
 * with _exit (a stuck stream must not hold their exit), which skips
 * libgcov's write-out: this library's _exit writes the counters of the
 * program and of the shim first (covdump.h), then ends the process.
 */
#include <stdlib.h>
#include <sys/syscall.h>

#include "covdump.h"

static hx_cov_dump_fn *dumps[2];

static int find(struct dl_phdr_info *info, size_t size, void *arg)
{
	char exe[4096];
	ssize_t n;

	(void)size;
	(void)arg;
	if (info->dlpi_name && strstr(info->dlpi_name, "libextsem")) {
		dumps[1] = hx_cov_find(info->dlpi_name, info->dlpi_addr);
	} else if (info->dlpi_name && !info->dlpi_name[0] && !dumps[0]) {
		/* the program itself (listed first) */
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			dumps[0] = hx_cov_find(exe, info->dlpi_addr);
		}
	}
	return 0;
}

__attribute__((constructor)) static void setup(void)
{
	dl_iterate_phdr(find, NULL);
}

__attribute__((visibility("default"), noreturn)) void _exit(int code)
{
	for (int i = 0; i < 2; i++)
		if (dumps[i])
			dumps[i]();
	for (;;)
		syscall(SYS_exit_group, code);
}
