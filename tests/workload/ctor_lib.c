/* SPDX-License-Identifier: MIT */
/*
 * The workload's dlopen op (driver.c, op_dlopen): a library whose
 * constructor runs what the driver asks for (a fork, a stream capture),
 * inside dlopen, with glibc's loader lock held, as a plugin's
 * constructor may.
 */
struct hxwork_ctor_req {
	int (*fn)(int);
	int arg;
	int result;
};

/* The driver's (exported from the executable). */
extern struct hxwork_ctor_req hxwork_ctor_req __attribute__((weak));

__attribute__((constructor)) static void hxwork_ctor(void)
{
	if (&hxwork_ctor_req && hxwork_ctor_req.fn)
		hxwork_ctor_req.result = hxwork_ctor_req.fn(hxwork_ctor_req.arg);
}
