/* SPDX-License-Identifier: MIT */
/*
 * The log (HIPEXTSEM_DEBUG, HIPEXTSEM_LOG_FILE), the environment lookups
 * (never trusted in a setuid/setgid process), and the one way the shim
 * opens a file a variable names (the log file and the trace).
 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

int hx_log_level_current = HX_LOG_WARN;
static int log_fd = STDERR_FILENO;

const char *hx_getenv(const char *name)
{
	return secure_getenv(name);
}

long hx_getenv_long(const char *name, long def, long min, long max)
{
	const char *s = hx_getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < min || v > max) {
		hx_logf(HX_LOG_WARN, "ignoring %s=\"%s\": expected an integer in [%ld, %ld]", name,
			s, min, max);
		return def;
	}
	return v;
}

/* /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: names for a
 * descriptor the process already holds, so what they lead to was chosen by
 * whoever started it (a shell redirection, say), not planted. */
static bool names_own_descriptor(const char *path)
{
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/" };

	if (!strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr"))
		return true;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t n = strlen(dirs[i]);
		if (!strncmp(path, dirs[i], n) && path[n] &&
		    strspn(path + n, "0123456789") == strlen(path + n))
			return true;
	}
	return false;
}

/*
 * A file named in the environment may sit in a directory others can write
 * (/tmp): a symbolic link planted there must not make the shim write, or
 * truncate, a file of the user's elsewhere.  The last component is never
 * followed to a regular file (O_NOFOLLOW, and a check of what a link leads
 * to), except for the names of the process's own descriptors; links to
 * character devices, pipes and sockets (/dev/stderr, /dev/tty) are
 * followed, never created or truncated through.  A new file is private
 * (0600).
 */
int hx_open_output(const char *path, int flags, bool *regular)
{
	struct stat st;
	bool via_link = false;
	int fd, err;

	*regular = false;
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
	if (fd < 0 && errno == ELOOP && !(flags & O_EXCL)) {
		/* A symbolic link: followed only to what is not a regular
		 * file (a character device, /dev/fd/N), never created through. */
		fd = open(path, O_WRONLY | O_CLOEXEC | (flags & O_APPEND));
		via_link = true;
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		err = errno;
		close(fd);
		return -err;
	}
	if (!via_link) {
		*regular = S_ISREG(st.st_mode);
		return fd;
	}
	if (S_ISREG(st.st_mode) && !names_own_descriptor(path)) {
		close(fd);
		return -ELOOP;
	}
	return fd;
}

const char *hx_open_output_error(int neg_errno)
{
	return neg_errno == -ELOOP ? "it is a symbolic link to a regular file, which is not "
				     "followed (name the file itself)"
				   : strerror(-neg_errno);
}

void hx_log_init(void)
{
	const char *file;
	bool regular;

	hx_log_level_current = (int)hx_getenv_long("HIPEXTSEM_DEBUG", HX_LOG_WARN, 0, 3);
	file = hx_getenv("HIPEXTSEM_LOG_FILE");
	if (file && *file && !getauxval(AT_SECURE)) {
		int fd = hx_open_output(file, O_APPEND, &regular);
		if (fd >= 0)
			log_fd = fd;
		else
			hx_logf(HX_LOG_WARN, "cannot open HIPEXTSEM_LOG_FILE %s: %s; logging to "
				"stderr", file, hx_open_output_error(fd));
	}
}

void hx_log_reset_after_fork(void)
{
	/* The descriptor is inherited and still valid: nothing to redo. */
}

void hx_logf(enum hx_log_level level, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	char buf[1024];
	int saved_errno = errno;
	va_list ap;
	int n;

	if (!hx_log_enabled(level))
		return;
	n = snprintf(buf, sizeof(buf), "hipextsem: %s: ", names[level]);
	va_start(ap, fmt);
	errno = saved_errno; /* for %m */
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	/* One write() per line keeps lines whole when threads log at once. */
	(void)!write(log_fd, buf, (size_t)n);
	errno = saved_errno;
}
