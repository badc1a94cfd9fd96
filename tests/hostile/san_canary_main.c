/* SPDX-License-Identifier: MIT */
/* san-canary-main WHAT: calls the preloaded canary library (san_canary.c). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int (*canary)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "hx_canary");
	if (argc != 2 || !canary) {
		fprintf(stderr, "usage: LD_PRELOAD=libhxcanary.so san-canary-main race|overflow|shift\n");
		return 2;
	}
	canary(argv[1]);
	return 0;
}
