/* SPDX-License-Identifier: MIT */
/*
 * A plugin whose constructor forks, run by dlopen with glibc's loader
 * lock held (cpuhip_tests.c, pts_ctor_fork).  Before the fork it calls the
 * program's hook, which lets another thread make its first call with
 * hipStreamPerThread meanwhile.
 */
#include <sys/wait.h>
#include <unistd.h>

extern void (*cpuhip_ctor_hook)(void) __attribute__((weak));

__attribute__((constructor)) static void ctor_fork(void)
{
	pid_t p;

	if (&cpuhip_ctor_hook && cpuhip_ctor_hook)
		cpuhip_ctor_hook();
	p = fork();
	if (p == 0)
		_exit(0);
	if (p > 0)
		waitpid(p, NULL, 0);
}
