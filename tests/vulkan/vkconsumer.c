/* SPDX-License-Identifier: MIT */
/*
 * vkconsumer: what a Vulkan application on Mesa/RADV + amdgpu experiences
 * when it shares semaphores with a HIP program that runs through the shim.
 *
 * The "Vulkan side" is played with raw syncobj ioctls on its own DRM file
 * (as RADV has its own), following the code paths of Mesa's common queue
 * code and of amdgpu's CS ioctl (facts, read from their sources):
 *
 *  - Mesa vk_device.c (vk_device_init, get_timeline_mode): the DRM-syncobj
 *    sync type has no VK_SYNC_FEATURE_WAIT_BEFORE_SIGNAL, so the device runs
 *    in timeline mode ASSISTED with submit mode THREADED_ON_DEMAND.
 *  - Mesa vk_queue.c (vk_queue_submit): each submission first probes its
 *    waits with a zero-timeout VK_SYNC_WAIT_PENDING wait; a wait that is not
 *    materialized yet switches the queue to a submit thread, for good
 *    (vk_queue_enable_submit_thread).  Then
 *    vk_queue_submit_move_binary_waits_to_temps does, for every binary wait
 *    on a shared permanent payload, a *blocking* VK_SYNC_WAIT_PENDING wait
 *    inside vkQueueSubmit (the spec says the signal is already submitted, so
 *    Mesa assumes it "won't block for long") and moves the payload into a
 *    temporary.  The submit thread (vk_queue_submit_thread_func) waits
 *    VK_SYNC_WAIT_PENDING on all waits, then calls the driver's submit.
 *  - Mesa vk_drm_syncobj.c (vk_drm_syncobj_wait_many): a WAIT_PENDING wait
 *    is DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT with WAIT_FOR_SUBMIT | WAIT_AVAILABLE
 *    (| WAIT_ALL), binary syncobjs included (point 0).  vk_drm_syncobj_move
 *    on a shared syncobj exports a sync_file, imports it into the
 *    destination and resets the source.
 *  - RADV's amdgpu winsys passes binary waits with flags 0 and timeline
 *    waits with DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT in the timeline-wait
 *    chunk; amdgpu_cs.c (amdgpu_cs_p2_syncobj_in / _timeline_wait ->
 *    amdgpu_syncobj_lookup_and_add) resolves each one with
 *    drm_syncobj_find_fence(flags): with flags 0 and no fence attached the
 *    submission fails with -EINVAL; with WAIT_FOR_SUBMIT the ioctl blocks
 *    (drm_syncobj.c: at most DRM_SYNCOBJ_WAIT_FOR_SUBMIT_TIMEOUT, 5 s).
 *
 * The harness's "CS ioctl" is DRM_IOCTL_SYNCOBJ_TRANSFER of each wait into a
 * job-private syncobj with those same flags: the kernel resolves it with
 * the same drm_syncobj_find_fence(), so a missing fence fails here exactly
 * where amdgpu's CS would.  A "GPU" thread then runs jobs in order, each
 * waiting on the fence captured at its submission, like a ring.
 * Simplification: a job's signal semaphores get their fence when the job
 * completes (amdgpu installs an unsignaled fence at the CS ioctl); the
 * shim's waits treat both alike (wait-for-submit).
 *
 * Usage: vkconsumer DIRECTION TYPE ORDER [options]
 *   DIRECTION  hip2vk (HIP signals, Vulkan waits) | vk2hip
 *   TYPE       binary | timeline
 *   ORDER      before | after: the consumer's wait is submitted before or
 *              after the producer's signal has run
 * Options: --rounds N (HX_VK_ROUNDS, default 1000), --work-us N (prior work
 *   per round, default 300), --results FILE (benchmark lines),
 *   --expect-early (a fault is injected: succeed only if an early pass is
 *   caught), --no-pending-wait (a consumer without Mesa's blocking wait:
 *   succeed only if a submission fails as the kernel's rule says).
 * Fault injection, for the test's own sensitivity (never in the shim):
 *   HX_VK_FAULT=no-reset makes the shim's drmSyncobjReset calls no-ops
 *   (interposed below); CPUHIP_FAULT_EAGER_HOST_FN=1 makes cpuhip run host
 *   functions at enqueue, i.e. signals before the stream's prior work.
 * HX_VK_NOTE_LOG=FILE: check the shim's one-time note on binary signals.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>

#include "hxtest.h"

#define DEADLINE_NS (10LL * 1000 * 1000 * 1000) /* a job or wait longer than this is a hang */

#ifndef DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE
#define DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE (1 << 2)
#endif

/* ---- fault injection: the shim's reset of consumed binary semaphores ---- */

static atomic_uint reset_faults;

/* The executable's definition comes first in symbol lookup, so the
 * preloaded shim's calls land here.  The harness itself never calls it
 * (it uses raw ioctls). */
int drmSyncobjReset(int fd, const uint32_t *handles, uint32_t count)
{
	static int (*real)(int, const uint32_t *, uint32_t);
	const char *f = getenv("HX_VK_FAULT");

	if (f && strstr(f, "no-reset")) {
		atomic_fetch_add(&reset_faults, 1);
		return 0;
	}
	if (!real)
		real = (int (*)(int, const uint32_t *, uint32_t))dlsym(RTLD_NEXT,
								       "drmSyncobjReset");
	return real(fd, handles, count);
}

/* ---- raw syncobj ioctls (the Vulkan driver's own DRM file) ---- */

static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;
	do
		r = ioctl(fd, req, arg);
	while (r == -1 && (errno == EINTR || errno == EAGAIN));
	return r == -1 ? -errno : 0;
}

static uint32_t sy_create(int fd)
{
	struct drm_syncobj_create a = { 0 };
	int r = xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &a);
	CHECK(r == 0, "SYNCOBJ_CREATE: %s", strerror(-r));
	return a.handle;
}

static void sy_destroy(int fd, uint32_t h)
{
	struct drm_syncobj_destroy a = { .handle = h };
	xioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &a);
}

static int sy_export_fd(int fd, uint32_t h)
{
	struct drm_syncobj_handle a = { .handle = h, .fd = -1 };
	int r = xioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &a);
	CHECK(r == 0, "SYNCOBJ_HANDLE_TO_FD: %s", strerror(-r));
	return a.fd;
}

static void sy_reset(int fd, uint32_t h)
{
	struct drm_syncobj_array a = { .handles = (uintptr_t)&h, .count_handles = 1 };
	int r = xioctl(fd, DRM_IOCTL_SYNCOBJ_RESET, &a);
	CHECK(r == 0, "SYNCOBJ_RESET: %s", strerror(-r));
}

static void sy_signal(int fd, uint32_t h, bool timeline, uint64_t point)
{
	int r;
	if (timeline) {
		struct drm_syncobj_timeline_array a = {
			.handles = (uintptr_t)&h, .points = (uintptr_t)&point, .count_handles = 1,
		};
		r = xioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a);
	} else {
		struct drm_syncobj_array a = { .handles = (uintptr_t)&h, .count_handles = 1 };
		r = xioctl(fd, DRM_IOCTL_SYNCOBJ_SIGNAL, &a);
	}
	CHECK(r == 0, "SYNCOBJ_(TIMELINE_)SIGNAL: %s", strerror(-r));
}

/* vk_drm_syncobj_wait_many with VK_SYNC_WAIT_PENDING. */
static int sy_wait_pending(int fd, uint32_t h, uint64_t point, int64_t abs_ns)
{
	struct drm_syncobj_timeline_wait a = {
		.handles = (uintptr_t)&h,
		.points = (uintptr_t)&point,
		.timeout_nsec = abs_ns,
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL |
			 DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
	};
	return xioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &a);
}

/* The fence is present (captured at CS): wait for it to signal, flags 0. */
static int sy_wait_signaled(int fd, uint32_t h, int64_t abs_ns)
{
	struct drm_syncobj_wait a = {
		.handles = (uintptr_t)&h, .timeout_nsec = abs_ns, .count_handles = 1,
	};
	return xioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &a);
}

/* vk_drm_syncobj_move for a shared syncobj: sync_file out, in, reset. */
static uint32_t sy_move_to_temp(int fd, uint32_t src)
{
	struct drm_syncobj_handle ex = {
		.handle = src, .flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE, .fd = -1,
	};
	uint32_t temp = sy_create(fd);
	int r = xioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &ex);
	CHECK(r == 0, "export sync_file from a binary semaphore: %s", strerror(-r));
	struct drm_syncobj_handle im = {
		.handle = temp, .flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE, .fd = ex.fd,
	};
	r = xioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &im);
	close(ex.fd);
	CHECK(r == 0, "import sync_file: %s", strerror(-r));
	sy_reset(fd, src);
	return temp;
}

/* The CS ioctl's dependency lookup: drm_syncobj_find_fence(src, point,
 * flags), the fence installed into `dst`.  flags 0 on a syncobj without a
 * fence gives -EINVAL, as amdgpu_syncobj_lookup_and_add does. */
static int sy_capture(int fd, uint32_t src, uint64_t point, uint32_t flags, uint32_t dst)
{
	struct drm_syncobj_transfer a = {
		.src_handle = src, .dst_handle = dst, .src_point = point, .dst_point = 0,
		.flags = flags,
	};
	return xioctl(fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &a);
}

/* ---- the emulated queue ---- */

struct job {
	struct job *next;
	bool has_wait, wait_timeline;
	uint32_t wait_handle; /* the semaphore, or the temporary its payload moved to */
	uint32_t moved_temp;  /* 0 unless a binary payload was moved */
	uint64_t wait_point;
	uint32_t dep;         /* fences captured at CS */
	unsigned work_us;     /* "GPU" work before the body */
	const uint64_t *read_ptr;
	uint64_t got;
	uint64_t *write_ptr;
	uint64_t write_val;
	bool has_signal, signal_timeline;
	uint32_t signal_handle;
	uint64_t signal_point;
	int cs_error;         /* the CS ioctl's answer */
};

struct queue {
	int fd;
	bool threaded;        /* VK_QUEUE_SUBMIT_MODE_THREADED (on demand) */
	bool mesa_pending_wait; /* false: a consumer without Mesa's blocking wait */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *sub_head, *sub_tail;  /* for the submit thread */
	struct job *ring_head, *ring_tail; /* on the "GPU" */
	unsigned submitted, completed;
	atomic_uint failed_cs;
	pthread_t submit_thread, gpu_thread;
	bool stop;
};

static void push(struct job **head, struct job **tail, struct job *j)
{
	j->next = NULL;
	if (*tail)
		(*tail)->next = j;
	else
		*head = j;
	*tail = j;
}

static struct job *pop(struct job **head, struct job **tail)
{
	struct job *j = *head;
	if (j) {
		*head = j->next;
		if (!*head)
			*tail = NULL;
	}
	return j;
}

/* queue->driver_submit: the CS ioctl. */
static void submit_final(struct queue *q, struct job *j)
{
	j->dep = 0;
	if (j->has_wait) {
		j->dep = sy_create(q->fd);
		j->cs_error = sy_capture(q->fd, j->wait_handle, j->wait_timeline ? j->wait_point : 0,
					 j->wait_timeline ? DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT : 0,
					 j->dep);
		if (j->moved_temp)
			sy_destroy(q->fd, j->moved_temp);
		else if (!j->wait_timeline && !j->cs_error)
			sy_reset(q->fd, j->wait_handle); /* a consumer that resets after CS */
		if (j->cs_error)
			atomic_fetch_add(&q->failed_cs, 1);
	}
	pthread_mutex_lock(&q->lock);
	push(&q->ring_head, &q->ring_tail, j);
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

static void *submit_thread_main(void *arg)
{
	struct queue *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct job *j;
		while (!q->sub_head && !q->stop)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->sub_head)
			break;
		j = pop(&q->sub_head, &q->sub_tail);
		pthread_mutex_unlock(&q->lock);
		if (j->has_wait && q->mesa_pending_wait) {
			int r = sy_wait_pending(q->fd, j->wait_handle,
						j->wait_timeline ? j->wait_point : 0,
						now_ns() + DEADLINE_NS);
			CHECK(r == 0, "deadlock: the submit thread waited %lld s for a point to "
			      "materialize: %s", DEADLINE_NS / 1000000000, strerror(-r));
		}
		submit_final(q, j);
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static void *gpu_main(void *arg)
{
	struct queue *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct job *j;
		while (!q->ring_head && !q->stop)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->ring_head)
			break;
		j = pop(&q->ring_head, &q->ring_tail);
		pthread_mutex_unlock(&q->lock);
		if (!j->cs_error) {
			if (j->dep) {
				int r = sy_wait_signaled(q->fd, j->dep, now_ns() + DEADLINE_NS);
				CHECK(r == 0, "deadlock: a job waited %lld s for its dependency "
				      "(amdgpu would reset the ring): %s",
				      DEADLINE_NS / 1000000000, strerror(-r));
			}
			if (j->work_us) {
				struct timespec ts = { j->work_us / 1000000,
						       (long)(j->work_us % 1000000) * 1000 };
				while (nanosleep(&ts, &ts) && errno == EINTR)
					;
			}
			if (j->read_ptr)
				j->got = __atomic_load_n(j->read_ptr, __ATOMIC_ACQUIRE);
			if (j->write_ptr)
				__atomic_store_n(j->write_ptr, j->write_val, __ATOMIC_RELEASE);
			if (j->has_signal)
				sy_signal(q->fd, j->signal_handle, j->signal_timeline, j->signal_point);
		}
		if (j->dep)
			sy_destroy(q->fd, j->dep);
		pthread_mutex_lock(&q->lock);
		q->completed++;
		pthread_cond_broadcast(&q->cond);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static void queue_init(struct queue *q, int fd, bool mesa_pending_wait)
{
	memset(q, 0, sizeof(*q));
	q->fd = fd;
	q->mesa_pending_wait = mesa_pending_wait;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	CHECK(pthread_create(&q->gpu_thread, NULL, gpu_main, q) == 0, "gpu thread");
}

static void queue_fini(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	if (q->threaded)
		pthread_join(q->submit_thread, NULL);
	pthread_join(q->gpu_thread, NULL);
}

/* vkQueueSubmit (vk_queue_submit).  Without mesa_pending_wait: a consumer
 * with neither a submit thread nor the blocking wait, which hands binary
 * waits straight to the CS and resets them afterwards. */
static void queue_submit(struct queue *q, struct job *j)
{
	if (!q->mesa_pending_wait) {
		j->moved_temp = 0;
		pthread_mutex_lock(&q->lock);
		q->submitted++;
		pthread_mutex_unlock(&q->lock);
		submit_final(q, j);
		return;
	}
	if (!q->threaded && j->has_wait) {
		int r = sy_wait_pending(q->fd, j->wait_handle, j->wait_timeline ? j->wait_point : 0, 0);
		if (r == -ETIME) {
			/* vk_queue_enable_submit_thread: for good. */
			CHECK(pthread_create(&q->submit_thread, NULL, submit_thread_main, q) == 0,
			      "submit thread");
			q->threaded = true;
		} else {
			CHECK(r == 0, "WAIT_PENDING probe: %s", strerror(-r));
		}
	}
	j->moved_temp = 0;
	if (j->has_wait && !j->wait_timeline && q->mesa_pending_wait) {
		/* vk_queue_submit_move_binary_waits_to_temps: blocking. */
		int r = sy_wait_pending(q->fd, j->wait_handle, 0, now_ns() + DEADLINE_NS);
		CHECK(r == 0, "deadlock: vkQueueSubmit waited %lld s for a binary semaphore's "
		      "signal to be submitted: %s", DEADLINE_NS / 1000000000, strerror(-r));
		j->moved_temp = sy_move_to_temp(q->fd, j->wait_handle);
		j->wait_handle = j->moved_temp;
	}
	pthread_mutex_lock(&q->lock);
	q->submitted++;
	if (q->threaded) {
		push(&q->sub_head, &q->sub_tail, j);
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
		return;
	}
	pthread_mutex_unlock(&q->lock);
	submit_final(q, j);
}

/* vkWaitForFences on everything submitted so far. */
static void queue_idle(struct queue *q)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += DEADLINE_NS / 1000000000;
	pthread_mutex_lock(&q->lock);
	while (q->completed < q->submitted) {
		if (pthread_cond_timedwait(&q->cond, &q->lock, &until) == ETIMEDOUT)
			FAIL("deadlock: %u of %u submissions still pending after %lld s",
			     q->submitted - q->completed, q->submitted, DEADLINE_NS / 1000000000);
	}
	pthread_mutex_unlock(&q->lock);
}

/* ---- the case ---- */

struct opts {
	bool hip2vk, timeline, before;
	unsigned rounds, work_us;
	const char *results;
	bool expect_early, no_pending_wait;
};

static volatile unsigned cur_round;

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: deadlock: a round made no progress for 30 s\n";
	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/* Runs on the runtime's callback thread, right before the shim's signal:
 * the moment the stream reaches the signal. */
static void stamp_cb(hipStream_t s, hipError_t status, void *data)
{
	(void)s;
	(void)status;
	__atomic_store_n((int64_t *)data, now_ns(), __ATOMIC_RELEASE);
}

/* The HIP stream's consumer work: copies the payload (shared[0]) to
 * shared[1].  Atomic accesses: the producer's store is ordered before this
 * only through the kernel's sync object, which sanitizers cannot see. */
static void copy_cb(hipStream_t s, hipError_t status, void *data)
{
	uint64_t *p = data;
	(void)s;
	(void)status;
	__atomic_store_n(&p[1], __atomic_load_n(&p[0], __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void put_lat(FILE *f, const char *name, int64_t *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	fprintf(f, "lat %s %" PRId64 " %" PRId64 " %u\n", name, v[n / 2], v[(n * 99) / 100], n);
}

static void early_pass(const struct opts *o, unsigned r, uint64_t got, uint64_t want)
{
	if (o->expect_early) {
		printf("ok: the injected fault was caught: round %u passed early (saw %" PRIu64
		       ", expected %" PRIu64 ")\n", r, got, want);
		exit(0);
	}
	FAIL("early pass in round %u: the consumer saw %" PRIu64 " where the producer's "
	     "prior work writes %" PRIu64 " before signaling (a stale or early fence)",
	     r, got, want);
}

static void run(const struct opts *o)
{
	const char *name_dir = o->hip2vk ? "hip2vk" : "vk2hip";
	const char *name_type = o->timeline ? "timeline" : "binary";
	const char *name_order = o->before ? "before" : "after";
	int fd = drm_open();
	struct queue q;
	hipExternalSemaphore_t sem;
	hipStream_t s;
	uint64_t *shared = pinned(2 * sizeof(uint64_t));
	uint64_t *got = shared + 1;
	int64_t *blocked = calloc(o->rounds, sizeof(int64_t));
	int64_t *remaining = calloc(o->rounds, sizeof(int64_t));
	int64_t *ratio = calloc(o->rounds, sizeof(int64_t)); /* x 1e6 */
	unsigned fences_ok = 0;
	uint32_t handle;

	CHECK(blocked && remaining && ratio, "out of memory");
	expect_shim();
	queue_init(&q, fd, !o->no_pending_wait);

	/* The kernel's rule, live on this kernel: a binary wait whose syncobj
	 * has no fence fails the submission (flags 0); with WAIT_FOR_SUBMIT
	 * and a zero deadline a wait just times out. */
	{
		uint32_t empty = sy_create(fd), dst = sy_create(fd);
		int r = sy_capture(fd, empty, 0, 0, dst);
		CHECK(r == -EINVAL, "CS dependency on a syncobj without a fence gave %d, not "
		      "-EINVAL", r);
		CHECK(sy_wait_pending(fd, empty, 0, 0) == -ETIME, "zero-timeout WAIT_PENDING");
		sy_destroy(fd, empty);
		sy_destroy(fd, dst);
	}

	/* A VkSemaphore exported as OPAQUE_FD and imported into HIP. */
	{
		struct drm_syncobj_create c = { 0 };
		CHECK(xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c) == 0, "create");
		handle = c.handle;
	}
	HIPCHECK(import_fd(&sem, sy_export_fd(fd, handle), o->timeline));
	HIPCHECK(hipStreamCreate(&s));
	signal(SIGALRM, on_alarm);

	for (unsigned r = 0; r < o->rounds; r++) {
		uint64_t v = r + 1;
		int64_t t_reach = 0, t0, t1;
		struct job j;

		cur_round = r;
		alarm(30);
		memset(&j, 0, sizeof(j));
		__atomic_store_n(got, 0, __ATOMIC_RELEASE);
		if (o->hip2vk) {
			/* HIP: prior work, the payload, the signal. */
			stream_delay(s, o->work_us);
			HIPCHECK(hipStreamWriteValue64(s, shared, v, 0));
			HIPCHECK(hipStreamAddCallback(s, stamp_cb, &t_reach, 0));
			HIPCHECK(signal1(sem, o->timeline ? v : 0, s));
			if (!o->before)
				HIPCHECK(hipStreamSynchronize(s));
			/* Vulkan: a submission that waits, then reads the payload. */
			j.has_wait = true;
			j.wait_timeline = o->timeline;
			j.wait_handle = handle;
			j.wait_point = o->timeline ? v : 0;
			j.read_ptr = shared;
			t0 = now_ns();
			queue_submit(&q, &j);
			t1 = now_ns();
			queue_idle(&q);
			HIPCHECK(hipStreamSynchronize(s));
			if (j.cs_error) {
				if (o->no_pending_wait) {
					printf("ok: without the blocking wait, round %u's submission "
					       "failed (%s), as amdgpu's CS would\n", r,
					       strerror(-j.cs_error));
					exit(0);
				}
				FAIL("round %u: the submission failed (%s) although the "
				     "application followed Vulkan's rules", r, strerror(-j.cs_error));
			}
			if (j.got != v)
				early_pass(o, r, j.got, v);
			t_reach = __atomic_load_n(&t_reach, __ATOMIC_ACQUIRE);
			blocked[r] = t1 - t0;
			remaining[r] = t_reach > t0 ? t_reach - t0 : 0;
		} else {
			/* Vulkan: GPU work that writes the payload, then signals. */
			j.work_us = o->work_us;
			j.write_ptr = shared;
			j.write_val = v;
			j.has_signal = true;
			j.signal_timeline = o->timeline;
			j.signal_handle = handle;
			j.signal_point = o->timeline ? v : 0;
			stream_delay(s, o->work_us / 2);
			if (!o->before) {
				queue_submit(&q, &j);
				queue_idle(&q);
			}
			/* HIP: wait, then copy the payload. */
			t0 = now_ns();
			HIPCHECK(wait1(sem, o->timeline ? v : 0, s));
			t1 = now_ns();
			HIPCHECK(hipStreamAddCallback(s, copy_cb, shared, 0));
			if (o->before)
				queue_submit(&q, &j);
			HIPCHECK(hipStreamSynchronize(s));
			queue_idle(&q);
			if (load64(got) != v)
				early_pass(o, r, load64(got), v);
			blocked[r] = t1 - t0;
			remaining[r] = 0;
		}
		if (remaining[r] > 0)
			ratio[r] = blocked[r] * 1000000 / remaining[r];
		else
			ratio[r] = blocked[r] * 1000000 / ((int64_t)o->work_us * 1000);
		fences_ok++;
	}
	alarm(0);
	if (o->expect_early) {
		if (getenv("HX_VK_FAULT") && atomic_load(&reset_faults) == 0)
			FAIL("HX_VK_FAULT=no-reset never reached the shim's reset");
		FAIL("the injected fault went unnoticed in %u rounds", o->rounds);
	}
	if (o->no_pending_wait)
		FAIL("no submission failed without the blocking wait (the rule was never met)");
	CHECK(atomic_load(&q.failed_cs) == 0, "failed submissions");

	if (o->results) {
		FILE *f = fopen(o->results, "a");
		char name[96];
		CHECK(f, "cannot open %s: %s", o->results, strerror(errno));
		snprintf(name, sizeof(name), "%s-%s-%s", name_dir, name_type, name_order);
		fprintf(f, "# %s rounds %u work_us %u submit-thread %s\n", name, o->rounds,
			o->work_us, q.threaded ? "yes" : "no");
		{
			char n2[128];
			snprintf(n2, sizeof(n2), "%s.blocked", name);
			put_lat(f, n2, blocked, o->rounds);
			snprintf(n2, sizeof(n2), "%s.remaining", name);
			put_lat(f, n2, remaining, o->rounds);
			snprintf(n2, sizeof(n2), "%s.ratio_ppm", name);
			put_lat(f, n2, ratio, o->rounds);
			snprintf(n2, sizeof(n2), "%s.work_us", name);
			fprintf(f, "val %s %u\n", n2, o->work_us);
		}
		fclose(f);
	}
	queue_fini(&q);
	HIPCHECK(hipStreamDestroy(s));
	HIPCHECK(hipDestroyExternalSemaphore(sem));
	sy_destroy(fd, handle);
	close(fd);
	qsort(blocked, o->rounds, sizeof(*blocked), cmp_i64);
	printf("ok: %s %s %s: %u rounds, no early pass, no failed submission, no deadlock; "
	       "submitting thread blocked p50 %.1f us (prior work %u us per round)%s\n",
	       name_dir, name_type, name_order, fences_ok, (double)blocked[o->rounds / 2] / 1000.0,
	       o->work_us, q.threaded ? "; the queue switched to a submit thread" : "");
	free(blocked);
	free(remaining);
	free(ratio);
}

/* HX_VK_NOTE_LOG=FILE (the shim's HIPEXTSEM_LOG_FILE at HIPEXTSEM_DEBUG=2):
 * binary semaphores signaled from HIP are noted exactly once, naming the
 * consequence; timeline ones never. */
static void check_note(const char *path, bool want)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned n = 0;

	CHECK(f, "cannot read the shim's log %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "hipextsem: ") && strstr(line, "note: binary semaphore") &&
		    strstr(line, "blocks until the stream's prior work is done"))
			n++;
	fclose(f);
	CHECK(n == (want ? 1u : 0u), "%u binary-semaphore notes in the log, expected %u", n,
	      want ? 1u : 0u);
	printf("ok: the log has %u binary-semaphore note(s)\n", n);
}

static unsigned parse_uint(const char *s, const char *what)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v == 0 || v > 10000000)
		FAIL("bad %s '%s'", what, s);
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	struct opts o = { .rounds = 1000, .work_us = 300 };
	const char *e = getenv("HX_VK_ROUNDS");
	const char *note_log = getenv("HX_VK_NOTE_LOG");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 4)
		FAIL("usage: %s hip2vk|vk2hip binary|timeline before|after [--rounds N] "
		     "[--work-us N] [--results FILE] [--expect-early] [--no-pending-wait]", argv[0]);
	o.hip2vk = strcmp(argv[1], "hip2vk") == 0;
	CHECK(o.hip2vk || strcmp(argv[1], "vk2hip") == 0, "direction '%s'", argv[1]);
	o.timeline = strcmp(argv[2], "timeline") == 0;
	CHECK(o.timeline || strcmp(argv[2], "binary") == 0, "type '%s'", argv[2]);
	o.before = strcmp(argv[3], "before") == 0;
	CHECK(o.before || strcmp(argv[3], "after") == 0, "order '%s'", argv[3]);
	if (e && *e)
		o.rounds = parse_uint(e, "HX_VK_ROUNDS");
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			o.rounds = parse_uint(argv[++i], "--rounds");
		else if (!strcmp(argv[i], "--work-us") && i + 1 < argc)
			o.work_us = parse_uint(argv[++i], "--work-us");
		else if (!strcmp(argv[i], "--results") && i + 1 < argc)
			o.results = argv[++i];
		else if (!strcmp(argv[i], "--expect-early"))
			o.expect_early = true;
		else if (!strcmp(argv[i], "--no-pending-wait"))
			o.no_pending_wait = true;
		else
			FAIL("unknown argument '%s'", argv[i]);
	}
	if (note_log)
		unlink(note_log); /* the shim appends; it opens the file on first use */
	run(&o);
	if (note_log)
		check_note(note_log, !o.timeline && o.hip2vk);
	return 0;
}
