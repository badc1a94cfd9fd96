/* SPDX-License-Identifier: MIT */
/*
 * A library whose constructor forks (ctor_fork.c loads it with dlopen):
 * it tells the program it is running, holding glibc's loader lock as every
 * constructor run by dlopen does, waits a little so that the program's
 * main thread is inside its first semaphore call by then, and forks.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((constructor)) static void fork_in_constructor(void)
{
	atomic_int *entered = dlsym(RTLD_DEFAULT, "hx_ctor_entered");
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	pid_t pid;

	if (entered)
		atomic_store(entered, 1);
	nanosleep(&ts, NULL);
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}
