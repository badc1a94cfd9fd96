/* SPDX-License-Identifier: MIT */
/* A program that loads AMD's HIP runtime by soname (the newest of 7, 6, 5
 * found) and asks it a few questions that need no GPU; it prints the
 * answers.  debian/tests/regress runs it without and with the shim. */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*count_fn)(int *);

int main(void)
{
	static const char *const names[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"};
	void *rt = NULL;
	const char *name = NULL;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]) && !rt; i++)
		if ((rt = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL)))
			name = names[i];
	if (!rt) {
		printf("no HIP runtime: %s\n", dlerror());
		return 2;
	}
	printf("runtime %s\n", name);
	count_fn count = (count_fn)dlsym(rt, "hipGetDeviceCount");
	int n = -1;
	printf("hipGetDeviceCount: %d\n", count ? count(&n) : -1);
	printf("hipImportExternalSemaphore: %s\n",
	       dlsym(rt, "hipImportExternalSemaphore") ? "present" : "absent");
	return 0;
}
