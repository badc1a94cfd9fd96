/* SPDX-License-Identifier: MIT */
/*
 * The failing libdrm definitions of the test harness (hxtest.h, "fault
 * injection"): one definition for each libdrm sync object call the shim
 * makes, and drmIoctl.  Linked into a test program (with export_dynamic),
 * they come ahead of libdrm in the symbol lookup order and so see every
 * call of the shim's; the program says which of them fail through the
 * fault plan and its hooks.
 */
#include "hxtest.h"

const char *const df_name[DF_N] = {
	[DF_CREATE] = "create",
	[DF_DESTROY] = "destroy",
	[DF_FD2H] = "fd-to-handle",
	[DF_H2FD] = "handle-to-fd",
	[DF_IMPORT_SF] = "import-sync-file",
	[DF_SIGNAL] = "signal",
	[DF_TLSIGNAL] = "timeline-signal",
	[DF_RESET] = "reset",
	[DF_QUERY] = "query",
	[DF_WAIT] = "wait",
	[DF_TLWAIT] = "timeline-wait",
	[DF_EVENTFD] = "eventfd",
	[DF_QUERY_IOCTL] = "query",
};

/* ---- the plan ---- */

static const int *_Atomic own_fd;
static atomic_bool counting;
static atomic_int counts[DF_N];
static atomic_int plan_call = -1;
static atomic_int plan_nth;    /* > 0: fail the call counted as this one */
static atomic_int plan_budget; /* else: failures still to inject */
static atomic_int plan_hits;

static bool (*_Atomic hook_match)(const struct df_args *);
static enum df_verdict (*_Atomic hook_before)(struct df_args *);
static void (*_Atomic hook_after)(const struct df_args *, int);

void df_own_fd(const int *fd)
{
	atomic_store(&own_fd, fd);
}

bool df_count(bool on)
{
	return atomic_exchange(&counting, on);
}

void df_count_reset(void)
{
	for (int i = 0; i < DF_N; i++)
		atomic_store(&counts[i], 0);
}

int df_counted(enum df_call c)
{
	return atomic_load(&counts[c]);
}

void df_fail_nth(enum df_call c, int n)
{
	atomic_store(&plan_nth, n);
	atomic_store(&plan_call, (int)c);
}

void df_fail_next(enum df_call c, int n)
{
	atomic_store(&plan_nth, 0);
	atomic_store(&plan_budget, n);
	atomic_store(&plan_call, (int)c);
}

void df_fail_none(void)
{
	atomic_store(&plan_call, -1);
}

int df_hits(void)
{
	return atomic_load(&plan_hits);
}

void df_hits_reset(void)
{
	atomic_store(&plan_hits, 0);
}

void df_hooks(bool (*match)(const struct df_args *a),
	      enum df_verdict (*before)(struct df_args *a),
	      void (*after)(const struct df_args *a, int ret))
{
	atomic_store(&hook_match, match);
	atomic_store(&hook_before, before);
	atomic_store(&hook_after, after);
}

/* Counts the call if it is the shim's; true if the plan fails it. */
static bool plan_fails(const struct df_args *a)
{
	const int *own = atomic_load(&own_fd);
	bool (*match)(const struct df_args *);
	int n = 0, nth, left;

	if (!own || *own < 0 || a->fd == *own)
		return false;
	if (atomic_load(&counting))
		n = atomic_fetch_add(&counts[a->call], 1) + 1;
	if (atomic_load(&plan_call) != (int)a->call)
		return false;
	nth = atomic_load(&plan_nth);
	if (nth > 0) {
		if (n != nth)
			return false;
	} else {
		match = atomic_load(&hook_match);
		if (match && !match(a))
			return false;
		left = atomic_load(&plan_budget);
		do {
			if (left <= 0)
				return false;
		} while (!atomic_compare_exchange_weak(&plan_budget, &left, left - 1));
	}
	atomic_fetch_add(&plan_hits, 1);
	return true;
}

/* The verdict on a call: the plan's, then the program's. */
static enum df_verdict decide(struct df_args *a)
{
	enum df_verdict (*before)(struct df_args *) = atomic_load(&hook_before);
	enum df_verdict v = plan_fails(a) ? DF_FAIL : before ? before(a) : DF_PASS;

	if (v == DF_FAIL)
		errno = EIO;
	return v;
}

static int done(const struct df_args *a, int ret)
{
	void (*after)(const struct df_args *, int) = atomic_load(&hook_after);

	if (after)
		after(a, ret);
	return ret;
}

/* ---- libdrm's definitions ----
 * Looked up once and kept: a lookup is a dlsym, which takes the loader's
 * lock (see df_init). */
static const char *const next_name[DF_N + 1] = {
	[DF_CREATE] = "drmSyncobjCreate",
	[DF_DESTROY] = "drmSyncobjDestroy",
	[DF_FD2H] = "drmSyncobjFDToHandle",
	[DF_H2FD] = "drmSyncobjHandleToFD",
	[DF_IMPORT_SF] = "drmSyncobjImportSyncFile",
	[DF_SIGNAL] = "drmSyncobjSignal",
	[DF_TLSIGNAL] = "drmSyncobjTimelineSignal",
	[DF_RESET] = "drmSyncobjReset",
	[DF_QUERY] = "drmSyncobjQuery",
	[DF_WAIT] = "drmSyncobjWait",
	[DF_TLWAIT] = "drmSyncobjTimelineWait",
	[DF_EVENTFD] = "drmIoctl",
	[DF_QUERY_IOCTL] = "drmIoctl",
	[DF_N] = "drmIoctl", /* every other request */
};
static void *next_fn[DF_N + 1];

static void *next_get(int i)
{
	void *f = __atomic_load_n(&next_fn[i], __ATOMIC_ACQUIRE);

	if (!f) {
		f = dlsym(RTLD_NEXT, next_name[i]);
		if (!f)
			abort();
		__atomic_store_n(&next_fn[i], f, __ATOMIC_RELEASE);
	}
	return f;
}

__attribute__((constructor)) void df_init(void)
{
	for (int i = 0; i <= DF_N; i++)
		(void)next_get(i);
}

#define NEXT(i, type) ((type)next_get(i))
#define ARGS(c, ...) \
	struct df_args a = { .call = (c), .fd = fd, .ra = __builtin_return_address(0), __VA_ARGS__ }
#define VERDICT(failed)                                      \
	do {                                                 \
		enum df_verdict v_ = decide(&a);             \
		if (v_ != DF_PASS)                           \
			return v_ == DF_FAIL ? (failed) : 0; \
	} while (0)

int drmSyncobjCreate(int fd, uint32_t flags, uint32_t *handle)
{
	ARGS(DF_CREATE, .flags = flags);
	VERDICT(-EIO);
	return done(&a, NEXT(DF_CREATE, int (*)(int, uint32_t, uint32_t *))(fd, flags, handle));
}

int drmSyncobjDestroy(int fd, uint32_t handle)
{
	ARGS(DF_DESTROY, .handles = &handle, .count = 1);
	VERDICT(-EIO);
	return done(&a, NEXT(DF_DESTROY, int (*)(int, uint32_t))(fd, handle));
}

/* The after hook sees the new handle in *handles. */
int drmSyncobjFDToHandle(int fd, int obj_fd, uint32_t *handle)
{
	ARGS(DF_FD2H, .handles = handle, .count = 1);
	VERDICT(-EIO);
	return done(&a, NEXT(DF_FD2H, int (*)(int, int, uint32_t *))(fd, obj_fd, handle));
}

int drmSyncobjHandleToFD(int fd, uint32_t handle, int *obj_fd)
{
	ARGS(DF_H2FD, .handles = &handle, .count = 1);
	VERDICT(-EIO);
	return done(&a, NEXT(DF_H2FD, int (*)(int, uint32_t, int *))(fd, handle, obj_fd));
}

int drmSyncobjImportSyncFile(int fd, uint32_t handle, int sync_file_fd)
{
	ARGS(DF_IMPORT_SF, .handles = &handle, .count = 1);
	VERDICT(-EIO);
	return done(&a, NEXT(DF_IMPORT_SF, int (*)(int, uint32_t, int))(fd, handle,
									   sync_file_fd));
}

int drmSyncobjSignal(int fd, const uint32_t *handles, uint32_t count)
{
	ARGS(DF_SIGNAL, .handles = handles, .count = count);
	VERDICT(-EIO);
	return done(&a, NEXT(DF_SIGNAL, int (*)(int, const uint32_t *, uint32_t))(fd, handles,
										     count));
}

int drmSyncobjTimelineSignal(int fd, const uint32_t *handles, uint64_t *points, uint32_t count)
{
	ARGS(DF_TLSIGNAL, .handles = handles, .points = points, .count = count);
	VERDICT(-EIO);
	return done(&a, NEXT(DF_TLSIGNAL, int (*)(int, const uint32_t *, uint64_t *, uint32_t))(
				fd, handles, a.points, count));
}

int drmSyncobjReset(int fd, const uint32_t *handles, uint32_t count)
{
	ARGS(DF_RESET, .handles = handles, .count = count);
	VERDICT(-EIO);
	return done(&a, NEXT(DF_RESET, int (*)(int, const uint32_t *, uint32_t))(fd, handles,
										    count));
}

int drmSyncobjQuery(int fd, uint32_t *handles, uint64_t *points, uint32_t count)
{
	ARGS(DF_QUERY, .handles = handles, .points = points, .count = count);
	VERDICT(-EIO);
	return done(&a, NEXT(DF_QUERY, int (*)(int, uint32_t *, uint64_t *, uint32_t))(
				fd, handles, points, count));
}

int drmSyncobjWait(int fd, uint32_t *handles, unsigned count, int64_t timeout, unsigned flags,
		   uint32_t *first)
{
	ARGS(DF_WAIT, .handles = handles, .count = count, .timeout = timeout, .flags = flags);
	VERDICT(-EIO);
	return done(&a, NEXT(DF_WAIT, int (*)(int, uint32_t *, unsigned, int64_t, unsigned,
					       uint32_t *))(fd, handles, count, timeout, flags,
							    first));
}

int drmSyncobjTimelineWait(int fd, uint32_t *handles, uint64_t *points, unsigned count,
			   int64_t timeout, unsigned flags, uint32_t *first)
{
	ARGS(DF_TLWAIT, .handles = handles, .points = points, .count = count,
	     .timeout = timeout, .flags = flags);
	VERDICT(-EIO);
	return done(&a, NEXT(DF_TLWAIT, int (*)(int, uint32_t *, uint64_t *, unsigned, int64_t,
						 unsigned, uint32_t *))(fd, handles, points, count,
									timeout, flags, first));
}

/* The shim's raw ioctls: eventfd registration and the query of a
 * syncobj's last point. */
int drmIoctl(int fd, unsigned long request, void *arg)
{
	enum df_call c;

	if (request == DRM_IOCTL_SYNCOBJ_EVENTFD)
		c = DF_EVENTFD;
	else if (request == DRM_IOCTL_SYNCOBJ_QUERY)
		c = DF_QUERY_IOCTL;
	else
		return NEXT(DF_N, int (*)(int, unsigned long, void *))(fd, request, arg);

	ARGS(c, .request = request, .arg = arg);
	VERDICT(-1);
	return done(&a, NEXT(c, int (*)(int, unsigned long, void *))(fd, request, arg));
}
