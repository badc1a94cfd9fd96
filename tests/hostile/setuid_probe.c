/* SPDX-License-Identifier: MIT */
/*
 * setuid-probe SHIM EXPECT_SECURE: loads the shim by absolute path (the
 * loader ignores LD_PRELOAD paths in setuid processes) and makes the first
 * call, which reads the environment (HIPEXTSEM_LOG_FILE, HIPEXTSEM_DEBUG).
 * Exits 3 if AT_SECURE is not what the caller expects, so a test built on
 * it cannot pass because the setuid bit did not take.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>

struct hx_stats {
	unsigned live_sems, pending_waits, pending_signals, slots_allocated;
};

int main(int argc, char **argv)
{
	void (*stats)(struct hx_stats *);
	struct hx_stats st;
	void *h;

	if (argc != 3)
		return 2;
	if (getauxval(AT_SECURE) != (unsigned long)atoi(argv[2])) {
		fprintf(stderr, "setuid-probe: AT_SECURE is %lu, expected %s\n",
			getauxval(AT_SECURE), argv[2]);
		return 3;
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "setuid-probe: %s\n", dlerror());
		return 4;
	}
	stats = (void (*)(struct hx_stats *))dlsym(h, "hipextsemGetStats");
	if (!stats)
		return 5;
	/* No runtime is loaded: the shim logs an error line, to the log file
	 * if (and only if) it honoured HIPEXTSEM_LOG_FILE. */
	stats(&st);
	return 0;
}
