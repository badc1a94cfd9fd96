/* SPDX-License-Identifier: MIT */
/*
 * What hipextsem-run set up, seen from the inside: prints LD_PRELOAD, the
 * hipextsem variables and the file the shim was loaded from (by looking up
 * its own export, hipextsemGetStats), then exits with the status given as
 * argv[1].
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v ? v : dflt;
}

int main(int argc, char **argv)
{
	void *sym = dlsym(RTLD_DEFAULT, "hipextsemGetStats");
	Dl_info info;

	printf("LD_PRELOAD=%s\n", env_or("LD_PRELOAD", "(unset)"));
	printf("HIPEXTSEM_DEBUG=%s\n", env_or("HIPEXTSEM_DEBUG", "(unset)"));
	printf("HIPEXTSEM_TRACE=%s\n", env_or("HIPEXTSEM_TRACE", "(unset)"));
	printf("shim=%s\n", sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "(none)");
	return argc > 1 ? atoi(argv[1]) : 0;
}
