/* SPDX-License-Identifier: MIT */
/*
 * A HIP runtime that misbehaves as soon as it is loaded: cpuhip (HIP 5.x
 * flavour) plus a constructor that leaves a mark and can leave processes
 * behind.  It stands for a library a user might inspect without trusting
 * it (a downloaded program's $ORIGIN runtime, a file given with --runtime).
 *
 *   HX_HOSTILE_MARK=FILE    the constructor appends "loaded PID" to FILE:
 *                           hipextsem-info without --selftest must never
 *                           let that happen
 *   HX_HOSTILE_LINGER=FILE  the constructor starts two processes that sleep
 *                           for HX_HOSTILE_SECS (default 300) holding every
 *                           descriptor the loading process had: one stays
 *                           in the process group, one leaves it (setsid);
 *                           their pids are written to FILE.  The self-test must
 *                           still end within its deadline and leave neither
 *                           running.
 *   HX_HOSTILE_HANG=1       the constructor never returns: the loading
 *                           process hangs until it is killed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <signal.h>
#include <unistd.h>

static void append_pid(const char *file, const char *what, pid_t pid)
{
	char line[64];
	int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	int n = snprintf(line, sizeof(line), "%s %d\n", what, (int)pid);

	if (fd < 0)
		return;
	(void)!write(fd, line, (size_t)n);
	close(fd);
}

static void linger(const char *file, int leave_group)
{
	const char *secs = getenv("HX_HOSTILE_SECS");
	pid_t pid = fork();

	if (pid > 0) {
		/* Written here, before the loader goes on, so that the test
		 * knows every pid whatever happens to the process later. */
		append_pid(file, leave_group ? "session" : "group", pid);
		return;
	}
	if (pid < 0)
		return;
	if (leave_group)
		setsid();
	sleep(secs && *secs ? (unsigned)atoi(secs) : 300);
	_exit(0);
}

__attribute__((constructor)) static void hostile_init(void)
{
	const char *mark = getenv("HX_HOSTILE_MARK");
	const char *lingerers = getenv("HX_HOSTILE_LINGER");

	if (mark && *mark)
		append_pid(mark, "loaded", getpid());
	if (lingerers && *lingerers) {
		linger(lingerers, 0);
		linger(lingerers, 1);
	}
	if (getenv("HX_HOSTILE_HANG"))
		for (;;)
			pause();
}
