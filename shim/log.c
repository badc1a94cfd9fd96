/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
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

void hx_log_init(void)
{
	const char *file;

	hx_log_level_current = (int)hx_getenv_long("HIPEXTSEM_DEBUG", HX_LOG_WARN, 0, 3);
	file = hx_getenv("HIPEXTSEM_LOG_FILE");
	if (file && *file && !getauxval(AT_SECURE)) {
		int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0)
			log_fd = fd;
		else
			hx_logf(HX_LOG_WARN, "cannot open HIPEXTSEM_LOG_FILE %s: %s", file,
				strerror(errno));
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
