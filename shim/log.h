/* SPDX-License-Identifier: MIT */
#ifndef HIPEXTSEM_LOG_H
#define HIPEXTSEM_LOG_H

#include <stdatomic.h>
#include <stdbool.h>

/*
 * One switch, HIPEXTSEM_DEBUG=0..3:
 *   0 errors only   1 + warnings (default)   2 + info   3 + debug (per call)
 * Every line starts with "hipextsem: ".  HIPEXTSEM_LOG_FILE=path appends the
 * lines to a file instead of stderr (ignored in setuid processes; created
 * 0600; a symbolic link at path is not followed to a regular file).
 */
enum hx_log_level {
	HX_LOG_ERROR = 0,
	HX_LOG_WARN = 1,
	HX_LOG_INFO = 2,
	HX_LOG_DEBUG = 3,
};

extern int hx_log_level_current;

void hx_log_init(void);
void hx_log_reset_after_fork(void);
void hx_logf(enum hx_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define hx_log_enabled(lvl) ((int)(lvl) <= hx_log_level_current)

#define hx_err(...) hx_logf(HX_LOG_ERROR, __VA_ARGS__)
#define hx_warn(...)                                                                         \
	do {                                                                                 \
		if (hx_log_enabled(HX_LOG_WARN))                                             \
			hx_logf(HX_LOG_WARN, __VA_ARGS__);                                   \
	} while (0)
#define hx_info(...)                                                                         \
	do {                                                                                 \
		if (hx_log_enabled(HX_LOG_INFO))                                             \
			hx_logf(HX_LOG_INFO, __VA_ARGS__);                                   \
	} while (0)
#define hx_dbg(...)                                                                          \
	do {                                                                                 \
		if (hx_log_enabled(HX_LOG_DEBUG))                                            \
			hx_logf(HX_LOG_DEBUG, __VA_ARGS__);                                  \
	} while (0)

/* Logs at most once per call site per process (warnings that would
 * otherwise repeat on every frame). */
#define hx_warn_once(...)                                                                    \
	do {                                                                                 \
		static atomic_bool hx_once_;                                                 \
		if (!atomic_exchange_explicit(&hx_once_, true, memory_order_relaxed))        \
			hx_logf(HX_LOG_WARN, __VA_ARGS__);                                   \
	} while (0)

/* Environment lookups never trust a setuid/setgid process's environment. */
const char *hx_getenv(const char *name);

/* Opens a file named by the environment for writing (the log, the trace):
 * O_CREAT with mode 0600, plus `flags` (O_APPEND, O_TRUNC, O_EXCL); the
 * last component is not followed through a symbolic link to a regular file
 * (-ELOOP), except /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N.
 * *regular tells whether the file was opened as a regular file by its own
 * name (it can be rewritten in place); false for devices, pipes and the
 * process's own descriptors.  Returns the descriptor or -errno. */
int hx_open_output(const char *path, int flags, bool *regular);
/* The reason for an hx_open_output failure, in words. */
const char *hx_open_output_error(int neg_errno);
long hx_getenv_long(const char *name, long def, long min, long max);

#endif
