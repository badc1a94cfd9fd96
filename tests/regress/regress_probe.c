/* SPDX-License-Identifier: MIT */
/* Prints whether the shim is loaded: hipextsem-regress must flag it. */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	printf("shim %s\n", dlsym(RTLD_DEFAULT, "hipextsemGetStats") ? "loaded" : "absent");
	return 0;
}
