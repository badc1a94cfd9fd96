/* SPDX-License-Identifier: MIT */
/*
 * Makes the preloaded shim open its log and trace files (HIPEXTSEM_LOG_FILE,
 * HIPEXTSEM_TRACE): hipextsemGetStats runs its lazy initialisation.  With
 * the argument "fork" it then forks, so that the child opens its own
 * per-process trace file, and prints "child PID".  Linked against cpuhip,
 * as an application is linked against the runtime.  For check_outputs.py.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int hipRuntimeGetVersion(int *version);

int main(int argc, char **argv)
{
	void (*stats)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "hipextsemGetStats");
	_Alignas(16) unsigned char buf[4096];
	int v = 0;

	(void)hipRuntimeGetVersion(&v);
	if (!stats) {
		fprintf(stderr, "trace-open: the shim is not preloaded\n");
		return 3;
	}
	stats(buf);
	if (argc > 1 && !strcmp(argv[1], "fork")) {
		pid_t pid = fork();
		int st = 0;

		if (pid == 0) {
			stats(buf);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
			return 4;
		printf("child %d\n", (int)pid);
	}
	return 0;
}
