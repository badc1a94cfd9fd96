/* SPDX-License-Identifier: MIT */
/*
 * hipextsem-info --selftest, the parent's side: starts the child (this
 * program again, with the shim appended to LD_PRELOAD the way hipextsem-run
 * does it, so the shim is loaded exactly as an application gets it), reads
 * its records, enforces the deadlines, and prints the result.
 *
 * Records are lines of tab-separated fields (selftest_child.c writes them):
 *   fact KEY VALUE | begin CHECK | check CHECK 1|0 REASON |
 *   metric NAME P50 P99 BASE_P50 BASE_P99 SAMPLES WHAT BASELINE |
 *   not-measured NAME REASON | cannot-run REASON | done
 * A child that sends nothing for longer than a check's deadline (plus a
 * margin for a slow machine) is killed; the check it had begun fails with
 * that reason.
 *
 * The child loads a runtime, whose constructors may start processes of
 * their own, and those inherit the record and log pipes.  Nothing they do
 * may hold the tool past its deadline or outlive it: the child runs in its
 * own process group, this process is a child subreaper (so descendants
 * that leave the group, or whose parent dies, are reparented here rather
 * than to init), the pipes are read only until the child has exited plus
 * a short grace, and then whatever is left of the group and of our
 * reparented descendants is killed and reaped, with a bound on every wait.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "selfexe.h"
#include "selftest.h"
#include "sync.h"

/* Added to a check's deadline before the parent gives up on the child: the
 * child's own deadlines should always fire first. */
#define KILL_MARGIN_S 10.0
/* After the child has exited, how long its pipes are still read (records
 * written just before the exit); then how long what it left has, after
 * SIGTERM, to end on its own before SIGKILL. */
#define EXIT_GRACE_NS 500000000LL
/* The longest the clean-up after the child may take (killed processes are
 * reaped in well under that; one in uninterruptible sleep is left to init). */
#define REAP_LIMIT_NS 3000000000LL

struct reader {
	char buf[8192];
	size_t len;
};

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* Splits a record in place; returns the number of fields. */
static int split(char *line, char **f, int max)
{
	int n = 0;

	while (n < max) {
		f[n++] = line;
		line = strchr(line, '\t');
		if (!line)
			break;
		*line++ = '\0';
	}
	return n;
}

struct run_state {
	char begun[48];    /* the check the child is in, "" between checks */
	bool done;
};

static void handle_record(struct hx_selftest_report *r, struct run_state *st, char *line)
{
	char *f[10];
	int n = split(line, f, 10);

	if (!strcmp(f[0], "fact") && n >= 3 && r->n_facts < HX_ST_MAX_FACTS) {
		copy(r->facts[r->n_facts].key, sizeof(r->facts[0].key), f[1]);
		copy(r->facts[r->n_facts].value, sizeof(r->facts[0].value), f[2]);
		r->n_facts++;
	} else if (!strcmp(f[0], "begin") && n >= 2) {
		copy(st->begun, sizeof(st->begun), f[1]);
	} else if (!strcmp(f[0], "check") && n >= 4 && r->n_checks < HX_ST_MAX_CHECKS) {
		struct hx_st_check *c = &r->checks[r->n_checks++];
		copy(c->name, sizeof(c->name), f[1]);
		c->passed = !strcmp(f[2], "1");
		copy(c->reason, sizeof(c->reason), f[3]);
		st->begun[0] = '\0';
	} else if (!strcmp(f[0], "metric") && n >= 9 && r->n_metrics < HX_ST_MAX_METRICS) {
		struct hx_st_metric *m = &r->metrics[r->n_metrics++];
		copy(m->name, sizeof(m->name), f[1]);
		m->p50_ns = atof(f[2]);
		m->p99_ns = atof(f[3]);
		m->base_p50_ns = atof(f[4]);
		m->base_p99_ns = atof(f[5]);
		m->samples = (unsigned)atoi(f[6]);
		copy(m->what, sizeof(m->what), f[7]);
		copy(m->baseline, sizeof(m->baseline), f[8]);
	} else if (!strcmp(f[0], "not-measured") && n >= 3 && r->n_metrics < HX_ST_MAX_METRICS) {
		struct hx_st_metric *m = &r->metrics[r->n_metrics++];
		copy(m->name, sizeof(m->name), f[1]);
		m->samples = 0;
		copy(m->what, sizeof(m->what), f[2]);
	} else if (!strcmp(f[0], "cannot-run") && n >= 2) {
		copy(r->cannot_run, sizeof(r->cannot_run), f[1]);
	} else if (!strcmp(f[0], "done")) {
		st->done = true;
	}
}

static void feed(struct reader *rd, const char *data, size_t n,
		 void (*line_fn)(void *, char *), void *arg)
{
	for (size_t i = 0; i < n; i++) {
		if (data[i] == '\n' || rd->len == sizeof(rd->buf) - 1) {
			rd->buf[rd->len] = '\0';
			line_fn(arg, rd->buf);
			rd->len = 0;
			if (data[i] == '\n')
				continue;
		}
		rd->buf[rd->len++] = data[i];
	}
}

struct rec_ctx {
	struct hx_selftest_report *r;
	struct run_state *st;
};

static void on_record(void *arg, char *line)
{
	struct rec_ctx *c = arg;
	handle_record(c->r, c->st, line);
}

/* Keeps the tail of the child's stderr (the shim's log lines). */
static void on_log(void *arg, char *line)
{
	struct hx_selftest_report *r = arg;
	size_t have = strlen(r->log), add = strlen(line) + 1;

	if (add >= sizeof(r->log))
		return;
	if (have + add >= sizeof(r->log)) {
		size_t drop = have + add - sizeof(r->log) + 1;
		char *nl = strchr(r->log + drop, '\n');
		drop = nl ? (size_t)(nl + 1 - r->log) : have;
		memmove(r->log, r->log + drop, have - drop + 1);
		have -= drop;
	}
	memcpy(r->log + have, line, add - 1);
	r->log[have + add - 1] = '\n';
	r->log[have + add] = '\0';
}

/* A copy of the shim under any name: the self-test must test one shim, the
 * one reported, never two at once. */
static bool is_a_shim(const char *entry, size_t n, const char *shim)
{
	const char *base = entry;

	for (size_t i = 0; i < n; i++)
		if (entry[i] == '/')
			base = entry + i + 1;
	n -= (size_t)(base - entry);
	if (n == strlen(shim) && !strncmp(entry, shim, n))
		return true;
	return (n == 12 && !strncmp(base, "libextsem.so", 12)) ||
	       (n > 12 && !strncmp(base, "libextsem.so.", 13));
}

/* LD_PRELOAD as given, without any other copy of the shim, and the shim
 * last (as hipextsem-run composes it).  What was dropped goes to `dropped`. */
static char *compose_preload(const char *shim, char *dropped, size_t dlen)
{
	const char *p = getenv("LD_PRELOAD");
	size_t cap = (p ? strlen(p) : 0) + strlen(shim) + 2, o = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	dropped[0] = '\0';
	while (p && *p) {
		size_t n = strcspn(p, ": ");
		if (n && is_a_shim(p, n, shim)) {
			if (!(strlen(shim) == n && !strncmp(p, shim, n)))
				snprintf(dropped + strlen(dropped), dlen - strlen(dropped), "%s%.*s",
					 dropped[0] ? " " : "", (int)n, p);
		} else if (n) {
			memcpy(out + o, p, n);
			o += n;
			out[o++] = ':';
		}
		p += n + (p[n] ? 1 : 0);
	}
	memcpy(out + o, shim, strlen(shim) + 1);
	return out;
}

static void set_cannot_run(struct hx_selftest_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_cannot_run(struct hx_selftest_report *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->cannot_run, sizeof(r->cannot_run), fmt, ap);
	va_end(ap);
}

/* Sends sig to the child's process group and to every process whose parent
 * we are (our own descendants reparented here: this process starts no other
 * children), then reaps.  With SIGKILL, repeated until nothing is left or
 * the time is up, as killing a process reparents its own children to us;
 * with another signal, the processes get until `until` to end. */
static void signal_and_reap_all(pid_t pgid, pid_t child, int sig, int *status,
				bool *child_reaped, int64_t until)
{
	char self[16];
	int len = snprintf(self, sizeof(self), "%d", (int)getpid());
	bool sent = false;

	for (;;) {
		DIR *d = NULL;
		struct dirent *de;
		pid_t w;
		int st;

		if (!sent || sig == SIGKILL) {
			kill(-pgid, sig);
			d = opendir("/proc");
			sent = true;
		}
		while (d && (de = readdir(d))) {
			char path[64], buf[512], *p;
			ssize_t n;
			int fd;

			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%.32s/stat", de->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = '\0';
			/* pid (comm) state ppid ...: comm may hold anything */
			p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] && p[3] == ' ' && !strncmp(p + 4, self, len) &&
			    p[4 + len] == ' ')
				kill((pid_t)atoi(de->d_name), sig);
		}
		if (d)
			closedir(d);
		while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
			if (w == child) {
				*status = st;
				*child_reaped = true;
			}
		}
		if (w < 0 && errno == ECHILD)
			return;
		if (hx_now_ns() > until)
			return;
		usleep(10000);
	}
}

void hx_selftest_run(const struct hx_selftest_opts *o, struct hx_selftest_report *r)
{
	char fdarg[16], abiarg[8], roundsarg[16], msarg[24], dropped[512], self_err[PATH_MAX * 2 + 160];
	struct hx_self self;
	int rec[2], err[2], status = 0;
	struct run_state st = { "", false };
	struct rec_ctx ctx = { r, &st };
	struct reader rrd = { .len = 0 }, erd = { .len = 0 };
	int64_t start = hx_now_ns(), last, limit, exited_at = 0, killed_at = 0;
	bool rec_open = true, err_open = true, killed = false, reaped = false;
	char *preload;
	ssize_t n;
	pid_t pid;

	r->rounds = o->rounds;
	r->timeout_s = o->timeout_s;
	if (!hx_self_find(&self, self_err, sizeof(self_err))) {
		set_cannot_run(r, "%s", self_err);
		return;
	}
	preload = compose_preload(o->shim, dropped, sizeof(dropped));
	if (!preload || pipe2(rec, O_CLOEXEC) != 0) {
		set_cannot_run(r, "cannot set up the test process: %s", strerror(errno));
		free(preload);
		hx_self_free(&self);
		return;
	}
	if (pipe2(err, O_CLOEXEC) != 0) {
		set_cannot_run(r, "cannot set up the test process: %s", strerror(errno));
		close(rec[0]);
		close(rec[1]);
		free(preload);
		hx_self_free(&self);
		return;
	}
	if (dropped[0]) {
		char line[1200];
		snprintf(line, sizeof(line), "hipextsem-info: LD_PRELOAD also named %.500s: left out, "
			 "the self-test preloads only %.600s", dropped, o->shim);
		on_log(r, line);
	}
	/* Descendants of the child that outlive their parent come back to
	 * us, not to init, so that they can be found and ended. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		on_log(r, "hipextsem-info: cannot become a child subreaper; processes that "
		       "leave the test process's group may be left behind");
	snprintf(fdarg, sizeof(fdarg), "%d", rec[1]);
	snprintf(abiarg, sizeof(abiarg), "%d", o->abi == HX_ABI_5 ? 5 : 6);
	snprintf(roundsarg, sizeof(roundsarg), "%u", o->rounds);
	snprintf(msarg, sizeof(msarg), "%lld", (long long)(o->timeout_s * 1000.0));
	char *args[] = { self.prog, HX_SELFTEST_CHILD_ARG, fdarg, (char *)o->runtime,
			 (char *)o->shim, abiarg, roundsarg, msarg,
			 o->probe_only ? "probe" : o->measure_only ? "measure" : "full", NULL };
	/* Through the interpreter that started this process, if one did. */
	char **argv = hx_self_argv(&self, args);
	fflush(NULL);
	if (!argv)
		errno = ENOMEM;
	pid = argv ? fork() : -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		/* Its own group, so that everything it starts can be ended
		 * at once; no terminal input for it. */
		setpgid(0, 0);
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		/* The record pipe survives exec; stderr goes to the log pipe. */
		fcntl(rec[1], F_SETFD, 0);
		dup2(err[1], STDERR_FILENO);
		setenv("LD_PRELOAD", preload, 1);
		if (o->signal_mode)
			setenv("HIPEXTSEM_SIGNAL_MODE", o->signal_mode, 1);
		execv(self.exe, argv);
		dprintf(rec[1], "cannot-run\tcannot run %s: %s\n", self.exe, strerror(errno));
		_exit(127);
	}
	free(argv);
	hx_self_free(&self);
	free(preload);
	close(rec[1]);
	close(err[1]);
	if (pid < 0) {
		set_cannot_run(r, "fork: %s", strerror(errno));
		close(rec[0]);
		close(err[0]);
		return;
	}
	/* Set on both sides: whichever runs first, the group exists before
	 * the child can start anything. */
	setpgid(pid, pid);
	r->started = true;
	last = hx_now_ns();
	limit = (int64_t)((o->timeout_s + KILL_MARGIN_S) * 1e9);
	for (;;) {
		struct pollfd pfd[2] = { { rec_open ? rec[0] : -1, POLLIN, 0 },
					 { err_open ? err[0] : -1, POLLIN, 0 } };
		char buf[4096];
		int64_t now;
		int ret;

		if (!rec_open && !err_open && reaped)
			break;
		ret = poll(pfd, 2, 50);
		if (ret < 0 && errno != EINTR)
			break;
		if (ret > 0 && pfd[0].revents) {
			n = read(rec[0], buf, sizeof(buf));
			if (n > 0) {
				feed(&rrd, buf, (size_t)n, on_record, &ctx);
				last = hx_now_ns();
			} else if (n == 0 || errno != EINTR) {
				rec_open = false;
			}
		}
		if (ret > 0 && pfd[1].revents) {
			n = read(err[0], buf, sizeof(buf));
			if (n > 0)
				feed(&erd, buf, (size_t)n, on_log, r);
			else if (n == 0 || errno != EINTR)
				err_open = false;
		}
		now = hx_now_ns();
		if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
			reaped = true;
			exited_at = now;
		}
		/* Whatever the child left holds the pipes' write ends: they
		 * are read for a short grace after its exit, not to the end. */
		if (reaped && now - exited_at > EXIT_GRACE_NS)
			break;
		if (!killed && !reaped && now - last > limit) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			killed = true;
			killed_at = now;
		}
		/* A child that cannot be reaped after SIGKILL (stuck in the
		 * kernel) must not hold the tool either. */
		if (killed && !reaped && now - killed_at > REAP_LIMIT_NS)
			break;
	}
	close(rec[0]);
	close(err[0]);
	signal_and_reap_all(pid, pid, SIGTERM, &status, &reaped, hx_now_ns() + EXIT_GRACE_NS);
	signal_and_reap_all(pid, pid, SIGKILL, &status, &reaped, hx_now_ns() + REAP_LIMIT_NS);
	r->elapsed_s = (double)(hx_now_ns() - start) / 1e9;

	if (!st.done) {
		char why[512];
		if (killed)
			snprintf(why, sizeof(why), "did not finish within its deadline: the test "
				 "process sent nothing for %.0f s and was killed (a call into the "
				 "runtime or the shim blocked, or the stream never proceeded)",
				 (double)limit / 1e9);
		else if (!reaped)
			snprintf(why, sizeof(why), "the test process could not be waited for");
		else if (WIFSIGNALED(status))
			snprintf(why, sizeof(why), "the test process died (signal %d, %s)",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			snprintf(why, sizeof(why), "the test process ended without finishing "
				 "(exit status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		if (st.begun[0] && r->n_checks < HX_ST_MAX_CHECKS) {
			struct hx_st_check *c = &r->checks[r->n_checks++];
			copy(c->name, sizeof(c->name), st.begun);
			c->passed = false;
			copy(c->reason, sizeof(c->reason), why);
		} else if (!r->cannot_run[0]) {
			set_cannot_run(r, "%s", why);
		}
	}
	r->passed = st.done && !r->cannot_run[0] && r->n_checks > 0;
	for (size_t i = 0; i < r->n_checks; i++)
		r->passed &= r->checks[i].passed;
}

const char *hx_selftest_fact(const struct hx_selftest_report *r, const char *key)
{
	for (size_t i = 0; i < r->n_facts; i++)
		if (!strcmp(r->facts[i].key, key))
			return r->facts[i].value;
	return NULL;
}

static int fact_int(const struct hx_selftest_report *r, const char *key, int dflt)
{
	const char *v = hx_selftest_fact(r, key);
	return v && *v ? atoi(v) : dflt;
}

int hx_selftest_wait_path(const struct hx_selftest_report *r, char *text, size_t len)
{
	const char *path = hx_selftest_fact(r, "wait_path");
	const char *reason = hx_selftest_fact(r, "wait_path_reason");

	if (path && !strcmp(path, "stream")) {
		snprintf(text, len, "stream: waits are asynchronous, they do not block the calling "
			 "thread (%s)", reason && *reason ? reason : "no reason given");
		return 0;
	}
	if (path && !strcmp(path, "host")) {
		snprintf(text, len, "host: waits BLOCK the calling thread until the semaphore is "
			 "signaled (%s)", reason && *reason ? reason : "no reason given");
		return 1;
	}
	snprintf(text, len, "unknown: %s", reason && *reason ? reason :
		 r->cannot_run[0] ? r->cannot_run : "not reported");
	return -1;
}

void hx_selftest_attribute(const struct hx_selftest_report *r, char *text, size_t len)
{
	int read_here = fact_int(r, "attribute_read", -1);
	int shim = fact_int(r, "wait_path_attribute", -2);

	if (read_here < 0 && shim < 0)
		snprintf(text, len, "hipDeviceAttributeCanUseStreamWaitValue (10013): could not be "
			 "read");
	else
		snprintf(text, len, "hipDeviceAttributeCanUseStreamWaitValue (10013) = %d%s; "
			 "reported only: it does not choose the wait path (the wait works without "
			 "it)", read_here >= 0 ? read_here : shim,
			 shim >= 0 && read_here >= 0 && shim != read_here ? " (the shim read a "
			 "different value)" : "");
}

static const char *ms(double ns, char *buf, size_t len)
{
	/* enqueue costs are microseconds: one more digit below 0.1 ms */
	snprintf(buf, len, ns < 100000 ? "%.4f" : "%.3f", ns / 1e6);
	return buf;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

void hx_selftest_print_text(const struct hx_selftest_report *r, FILE *f)
{
	static const char *const order[][2] = {
		{ "runtime_loaded", "runtime:     " }, { "runtime_version", "version:     " },
		{ "abi", "ABI:         " }, { "device", "HIP device:  " },
		{ "render_node", "render node: " }, { "render_driver", "driver:      " },
		{ "interposed", "shim:        " }, { "host_function", "signals use: " },
	};
	char wp[768], at[256], b[4][32];
	size_t failed = 0;

	fprintf(f, "\nSelf-test (%u rounds per check, %g s deadline per wait, %.1f s):\n",
		r->rounds, r->timeout_s, r->elapsed_s);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const char *v = hx_selftest_fact(r, order[i][0]);
		if (v)
			fprintf(f, "  %s %s\n", order[i][1], v);
	}
	if (hx_selftest_fact(r, "wait_path")) {
		hx_selftest_wait_path(r, wp, sizeof(wp));
		hx_selftest_attribute(r, at, sizeof(at));
		fprintf(f, "  wait path:    %s\n  attribute:    %s\n", wp, at);
	}
	if (r->cannot_run[0])
		fprintf(f, "  cannot run:   %s\n", r->cannot_run);
	for (size_t i = 0; i < r->n_checks; i++) {
		const struct hx_st_check *c = &r->checks[i];
		failed += !c->passed;
		fprintf(f, "  %-6s %s: %s\n", c->passed ? "passed" : "FAILED", c->name, c->reason);
	}
	if (r->n_metrics)
		fputs("Measured (ms, p50 / p99; ratio = shim / bare primitive, same run):\n", f);
	for (size_t i = 0; i < r->n_metrics; i++) {
		const struct hx_st_metric *m = &r->metrics[i];
		if (!m->samples) {
			fprintf(f, "  %-16s not measured: %s\n", m->name, m->what);
			continue;
		}
		fprintf(f, "  %-16s %s / %s  vs %s / %s  ratio %.2f / %.2f  (%s; baseline: %s)\n",
			m->name, ms(m->p50_ns, b[0], sizeof(b[0])), ms(m->p99_ns, b[1], sizeof(b[1])),
			ms(m->base_p50_ns, b[2], sizeof(b[2])),
			ms(m->base_p99_ns, b[3], sizeof(b[3])), ratio(m->p50_ns, m->base_p50_ns),
			ratio(m->p99_ns, m->base_p99_ns), m->what, m->baseline);
	}
	if (!r->passed && r->log[0]) {
		fputs("Log of the test process:\n", f);
		for (const char *p = r->log; *p;) {
			size_t n = strcspn(p, "\n");
			fprintf(f, "  | %.*s\n", (int)n, p);
			p += n + (p[n] ? 1 : 0);
		}
	}
	if (r->passed)
		fprintf(f, "\nSelf-test: PASSED: all %zu checks passed\n", r->n_checks);
	else if (r->cannot_run[0])
		fprintf(f, "\nSelf-test: FAILED: cannot run here: %s\n", r->cannot_run);
	else {
		fprintf(f, "\nSelf-test: FAILED: %zu of %zu checks failed:", failed, r->n_checks);
		for (size_t i = 0; i < r->n_checks; i++)
			if (!r->checks[i].passed)
				fprintf(f, " %s", r->checks[i].name);
		fputc('\n', f);
	}
}

static void json_num_or_null(FILE *f, double v, bool have)
{
	if (have)
		fprintf(f, "%.0f", v);
	else
		fputs("null", f);
}

void hx_selftest_print_json(const struct hx_selftest_report *r, FILE *f)
{
	const char *path = hx_selftest_fact(r, "wait_path");
	char wp[768];
	int blocks;

	fprintf(f, "{\n    \"passed\": %s,\n    \"cannot_run\": ", r->passed ? "true" : "false");
	hx_json_str(f, r->cannot_run[0] ? r->cannot_run : NULL);
	fprintf(f, ",\n    \"rounds\": %u,\n    \"timeout_s\": %g,\n    \"elapsed_s\": %.3f,\n",
		r->rounds, r->timeout_s, r->elapsed_s);
	fputs("    \"checks\": [", f);
	for (size_t i = 0; i < r->n_checks; i++) {
		fputs(i ? ",\n      {\"name\": " : "\n      {\"name\": ", f);
		hx_json_str(f, r->checks[i].name);
		fprintf(f, ", \"passed\": %s, \"reason\": ", r->checks[i].passed ? "true" : "false");
		hx_json_str(f, r->checks[i].reason);
		fputc('}', f);
	}
	fputs(r->n_checks ? "\n    ],\n" : "],\n", f);
	fputs("    \"latency\": [", f);
	for (size_t i = 0, k = 0; i < r->n_metrics; i++) {
		const struct hx_st_metric *m = &r->metrics[i];
		bool have = m->samples > 0;
		fputs(k++ ? ",\n      {\"name\": " : "\n      {\"name\": ", f);
		hx_json_str(f, m->name);
		fputs(", \"p50_ns\": ", f);
		json_num_or_null(f, m->p50_ns, have);
		fputs(", \"p99_ns\": ", f);
		json_num_or_null(f, m->p99_ns, have);
		fputs(", \"baseline_p50_ns\": ", f);
		json_num_or_null(f, m->base_p50_ns, have);
		fputs(", \"baseline_p99_ns\": ", f);
		json_num_or_null(f, m->base_p99_ns, have);
		if (have && m->base_p50_ns > 0 && m->base_p99_ns > 0)
			fprintf(f, ", \"ratio_p50\": %.3f, \"ratio_p99\": %.3f",
				ratio(m->p50_ns, m->base_p50_ns), ratio(m->p99_ns, m->base_p99_ns));
		else
			fputs(", \"ratio_p50\": null, \"ratio_p99\": null", f);
		fprintf(f, ", \"samples\": %u, \"what\": ", m->samples);
		hx_json_str(f, have ? m->what : NULL);
		fputs(", \"baseline\": ", f);
		hx_json_str(f, have ? m->baseline : NULL);
		fputs(", \"not_measured\": ", f);
		hx_json_str(f, have ? NULL : m->what);
		fputc('}', f);
	}
	fputs(r->n_metrics ? "\n    ],\n" : "],\n", f);
	blocks = hx_selftest_wait_path(r, wp, sizeof(wp));
	fputs("    \"wait_path\": {\"path\": ", f);
	hx_json_str(f, path ? path : "unknown");
	fprintf(f, ", \"blocks_caller\": %s, \"attribute\": ",
		blocks < 0 ? "null" : blocks ? "true" : "false");
	if (fact_int(r, "attribute_read", -1) >= 0)
		fprintf(f, "%d", fact_int(r, "attribute_read", -1));
	else
		fputs("null", f);
	fputs(", \"shim_attribute\": ", f);
	if (fact_int(r, "wait_path_attribute", -1) >= 0)
		fprintf(f, "%d", fact_int(r, "wait_path_attribute", -1));
	else
		fputs("null", f);
	fputs(", \"reason\": ", f);
	hx_json_str(f, hx_selftest_fact(r, "wait_path_reason"));
	fputs(", \"message\": ", f);
	hx_json_str(f, wp);
	fputs("},\n    \"facts\": {", f);
	for (size_t i = 0; i < r->n_facts; i++) {
		fputs(i ? ", " : "", f);
		hx_json_str(f, r->facts[i].key);
		fputs(": ", f);
		hx_json_str(f, r->facts[i].value);
	}
	fputs("},\n    \"log\": ", f);
	hx_json_str(f, r->log);
	fputs("\n  }", f);
}

/* ---- the signal modes compared ---------------------------------------- */

static const struct hx_st_metric *metric_of(const struct hx_selftest_report *r, const char *name)
{
	for (size_t i = 0; i < r->n_metrics; i++)
		if (!strcmp(r->metrics[i].name, name) && r->metrics[i].samples)
			return &r->metrics[i];
	return NULL;
}

/* The poll thread's CPU time per semaphore signaled, in ns, or -1. */
static double poll_cpu_per_signal(const struct hx_selftest_report *r)
{
	const char *cpu = hx_selftest_fact(r, "poll_thread_cpu_ns");
	const char *n = hx_selftest_fact(r, "signals_made");
	double c, k;

	if (!cpu || !n)
		return -1;
	c = strtod(cpu, NULL);
	k = strtod(n, NULL);
	return k > 0 ? c / k : -1;
}

void hx_selftest_run_modes(const struct hx_selftest_opts *o, struct hx_selftest_modes *m)
{
	static const char *const names[HX_ST_MODES] = { "hostfunc", "poll" };
	const struct hx_st_metric *hf_att, *po_att, *hf_enq, *po_enq;
	double cpu, saved;

	memset(m, 0, sizeof(*m));
	for (int i = 0; i < HX_ST_MODES; i++) {
		struct hx_selftest_opts mo = *o;

		mo.measure_only = true;
		mo.probe_only = false;
		mo.signal_mode = names[i];
		m->name[i] = names[i];
		hx_selftest_run(&mo, &m->run[i]);
	}
	m->ran = true;
	m->all_measured = true;
	for (int i = 0; i < HX_ST_MODES; i++) {
		if (!m->run[i].passed) {
			m->all_measured = false;
			snprintf(m->why, sizeof(m->why), "no recommendation: the %s run did not "
				 "complete (%s)", names[i], m->run[i].cannot_run[0] ?
				 m->run[i].cannot_run : "a check failed");
			return;
		}
	}
	hf_att = metric_of(&m->run[0], "fence_attach");
	po_att = metric_of(&m->run[1], "fence_attach");
	hf_enq = metric_of(&m->run[0], "signal_enqueue");
	po_enq = metric_of(&m->run[1], "signal_enqueue");
	cpu = poll_cpu_per_signal(&m->run[1]);
	if (!hf_att || !po_att || !hf_enq || !po_enq) {
		snprintf(m->why, sizeof(m->why), "no recommendation: a figure was not measured");
		return;
	}
	/* poll pays off where the hand-off it saves (the time a signal's
	 * stream waits for the host to take it) is larger than the CPU its
	 * thread spends per signal, and its enqueue is no dearer. */
	saved = hf_att->p50_ns - po_att->p50_ns;
	if (saved > 0 && cpu >= 0 && cpu < saved && po_enq->p50_ns <= hf_enq->p50_ns * 1.1) {
		m->recommended = "poll";
		snprintf(m->why, sizeof(m->why), "poll hands a signal to the kernel %.1f us sooner "
			 "than hostfunc and spends %.1f us of its thread's CPU per signal; its enqueue "
			 "is %.2fx of hostfunc's.  What poll promises: the shim's signals and waits "
			 "keep stream order on every path, but hipStreamSynchronize, "
			 "hipEventSynchronize, hipStreamQuery or a host function of yours may see the "
			 "stream past a poll signal up to HIPEXTSEM_POLL_MAX_US before the signal is "
			 "issued (docs/signal-modes.md)", saved / 1000.0, cpu / 1000.0,
			 po_enq->p50_ns / hf_enq->p50_ns);
	} else {
		m->recommended = "hostfunc";
		if (saved <= 0)
			snprintf(m->why, sizeof(m->why), "poll's hand-off is not shorter here (%.1f us "
				 "against %.1f us)", po_att->p50_ns / 1000.0, hf_att->p50_ns / 1000.0);
		else if (cpu < 0 || cpu >= saved)
			snprintf(m->why, sizeof(m->why), "poll's thread spends %s per signal, more than "
				 "the %.1f us of hand-off it saves",
				 cpu < 0 ? "an unknown CPU time" : "its CPU time", saved / 1000.0);
		else
			snprintf(m->why, sizeof(m->why), "poll's enqueue is %.2fx of hostfunc's here",
				 po_enq->p50_ns / hf_enq->p50_ns);
	}
}

void hx_selftest_print_modes_text(const struct hx_selftest_modes *m, FILE *f)
{
	char b[3][32];

	if (!m->ran)
		return;
	fputs("\nSignal modes (HIPEXTSEM_SIGNAL_MODE; ms p50, each mode in a process of its "
	      "own):\n", f);
	for (int i = 0; i < HX_ST_MODES; i++) {
		const struct hx_selftest_report *r = &m->run[i];
		const struct hx_st_metric *enq = metric_of(r, "signal_enqueue");
		const struct hx_st_metric *att = metric_of(r, "fence_attach");
		const struct hx_st_metric *lat = metric_of(r, "signal_latency");
		double cpu = poll_cpu_per_signal(r);

		if (!r->passed) {
			fprintf(f, "  %-9s not measured: %s\n", m->name[i],
				r->cannot_run[0] ? r->cannot_run : "a check failed");
			continue;
		}
		fprintf(f, "  %-9s enqueue %s  hand-off %s  stream-to-signal %s", m->name[i],
			enq ? ms(enq->p50_ns, b[0], sizeof(b[0])) : "-",
			att ? ms(att->p50_ns, b[1], sizeof(b[1])) : "-",
			lat ? ms(lat->p50_ns, b[2], sizeof(b[2])) : "-");
		if (cpu >= 0)
			fprintf(f, "  poll thread CPU %.1f us per signal", cpu / 1000.0);
		fputc('\n', f);
	}
	fprintf(f, "  recommended: %s: %s\n", m->recommended ? m->recommended : "none", m->why);
	for (int i = 0; i < HX_ST_MODES; i++)
		if (!m->run[i].passed)
			fprintf(f, "\nSelf-test: FAILED: the signal mode %s does not work here\n",
				m->name[i]);
}

void hx_selftest_print_modes_json(const struct hx_selftest_modes *m, FILE *f)
{
	fputs("{\"modes\": [", f);
	for (int i = 0; i < HX_ST_MODES && m->ran; i++) {
		const struct hx_selftest_report *r = &m->run[i];
		const struct hx_st_metric *enq = metric_of(r, "signal_enqueue");
		const struct hx_st_metric *att = metric_of(r, "fence_attach");
		const struct hx_st_metric *lat = metric_of(r, "signal_latency");
		double cpu = poll_cpu_per_signal(r);

		fprintf(f, "%s{\"mode\": \"%s\", \"measured\": %s, \"signal_enqueue_p50_ns\": ",
			i ? ", " : "", m->name[i], r->passed ? "true" : "false");
		json_num_or_null(f, enq ? enq->p50_ns : 0, enq != NULL);
		fputs(", \"handoff_p50_ns\": ", f);
		json_num_or_null(f, att ? att->p50_ns : 0, att != NULL);
		fputs(", \"signal_latency_p50_ns\": ", f);
		json_num_or_null(f, lat ? lat->p50_ns : 0, lat != NULL);
		fputs(", \"poll_cpu_per_signal_ns\": ", f);
		json_num_or_null(f, cpu, cpu >= 0);
		fputc('}', f);
	}
	fputs("], \"recommended\": ", f);
	if (m->recommended)
		fprintf(f, "\"%s\"", m->recommended);
	else
		fputs("null", f);
	fputs(", \"why\": ", f);
	hx_json_str(f, m->why);
	fputc('}', f);
}
