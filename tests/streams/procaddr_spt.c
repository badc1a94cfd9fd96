/* SPDX-License-Identifier: MIT */
/*
 * hipGetProcAddress_spt (the development tree after 7.2) hands out the
 * shim's semaphore calls as hipGetProcAddress does, and everything else as
 * the runtime's; with HX_TEST_EXPECT=stock every pointer is the runtime's.
 * Host only: nothing here touches a syncobj.
 */
#include "hxtest.h"

static const char *file_of(const void *p)
{
	Dl_info i;
	return p && dladdr((void *)p, &i) && i.dli_fname ? i.dli_fname : "(none)";
}

static void *lookup(const char *name, hipError_t want)
{
	hipDriverProcAddressQueryResult st = 77;
	void *p = (void *)1;

	EXPECT_ERR(hipGetProcAddress_spt(name, &p, 603, 0, &st), want);
	CHECK(want != hipSuccess || st == HIP_GET_PROC_ADDRESS_SUCCESS, "%s: status %d", name,
	      (int)st);
	return p;
}

int main(void)
{
	static const char *const sems[] = {
		"hipImportExternalSemaphore", "hipSignalExternalSemaphoresAsync",
		"hipWaitExternalSemaphoresAsync", "hipDestroyExternalSemaphore",
		"hipGetProcAddress", "hipGetProcAddress_spt",
	};
	bool shim = expect_shim();
	const char *want = shim ? "libextsem" : "libamdhip64";
	void *p;

	p = dlsym(RTLD_DEFAULT, "hipGetProcAddress_spt");
	CHECK(strstr(file_of(p), want), "dlsym hipGetProcAddress_spt from %s", file_of(p));
	for (size_t i = 0; i < sizeof(sems) / sizeof(sems[0]); i++) {
		p = lookup(sems[i], hipSuccess);
		CHECK(strstr(file_of(p), want), "%s from %s, expected %s", sems[i], file_of(p),
		      want);
	}
	p = lookup("hipStreamCreate", hipSuccess);
	CHECK(strstr(file_of(p), "libamdhip64"), "hipStreamCreate from %s", file_of(p));
	p = lookup("hipNoSuchFunction", hipErrorInvalidValue);
	CHECK(p == NULL, "an unknown symbol gave %p", p);
	printf("ok\n");
	return 0;
}
