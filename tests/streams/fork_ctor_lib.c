/* SPDX-License-Identifier: MIT */
/*
 * A plugin whose constructor forks, as run by dlopen with glibc's loader
 * lock held (fork_ctor.c).  Before the fork it calls the program's hook,
 * which lets another thread make its first HIP call meanwhile.
 */
#include <sys/wait.h>
#include <unistd.h>

extern void (*hx_fork_ctor_hook)(void) __attribute__((weak));

__attribute__((constructor)) static void fork_ctor(void)
{
	pid_t p;

	if (&hx_fork_ctor_hook && hx_fork_ctor_hook)
		hx_fork_ctor_hook();
	p = fork();
	if (p == 0)
		_exit(0);
	if (p > 0)
		waitpid(p, NULL, 0);
}
