/* SPDX-License-Identifier: MIT */
/*
 * What an OpaqueFd import does with fds that are not plain binary sync
 * objects (docs/semantics.md): sync_files (from a sync object, and the
 * pending implicit fence of a vgem dma-buf), fds that are neither, and
 * sync objects that carry timeline points (SYCL's HIP adapter imports
 * Vulkan timelines as OpaqueFd).  One case per argv[1], with the shim
 * preloaded, inside the test VM.
 *
 *   vgem-pending       a stream waits for a pending dma-buf fence and runs
 *                      on only once vgem signals it; a signal replaces the
 *                      payload of a sync_file semaphore
 *   syncobj-export     a sync object's exported sync_file, signaled and
 *                      pending, waited for; one wait per signal after it
 *   timeline-refused   a sync_file as TimelineSemaphoreFd: refused, fd kept
 *   bad-fds            closed fd, pipe, eventfd, regular file, DRM device
 *                      fd, dma-buf: refused, 1,000 tries leave no fd and
 *                      no sync object behind (good sync_files in between)
 *   opaque-timeline    a timeline with points imported as OpaqueFd acts as
 *                      a timeline with fence.value (the SYCL pattern)
 *   opaque-timeline-late  a timeline with no point yet at import: its
 *                      points survive the binary waits
 *   opaque-timeline-signal  a timeline with no point at import that has
 *                      points when HIP signals it: the signal adds its
 *                      fence.value as a point past the last one, one at
 *                      or below it is refused with a log line, and the
 *                      timeline never goes back
 *   opaque-binary      plain binary use of OpaqueFd, nonzero values ignored
 *   vm-nodes           renderD128 is virtio-gpu's, vgem has a card node
 *
 * The arguments name the cases to run, in order, in one process.
 */
#include <dirent.h>
#include <signal.h>
#include <sys/eventfd.h>

#include "vgem.h"

static int drm;

static void need_shim(void)
{
	CHECK(expect_shim(), "these cases test the shim (HX_TEST_EXPECT=shim)");
}

static hipExternalSemaphore_t import_ok(int fd, bool timeline)
{
	hipExternalSemaphore_t s = NULL;

	HIPCHECK(import_fd(&s, fd, timeline));
	CHECK(s != NULL, "import gave a NULL handle");
	/* The shim owns the fd on success and has closed it. */
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF, "fd %d still open after a successful "
	      "import", fd);
	return s;
}

/* Asserts that `mark` stays at `was` for `ms`: the stream is held. */
static void held(const uint64_t *mark, uint64_t was, unsigned ms, const char *why)
{
	sleep_ms(ms);
	CHECK(load64(mark) == was, "the stream ran past a wait: %s", why);
}

static void sync_and_check(hipStream_t st, const uint64_t *mark, uint64_t want, const char *why)
{
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(load64(mark) == want, "%s: mark %" PRIu64 ", expected %" PRIu64, why, load64(mark),
	      want);
}

/* A sync_file exported from one of the test's own sync objects. */
static int so_export_sync_file(uint32_t h)
{
	int fd = -1;

	CHECK(drmSyncobjExportSyncFile(drm, h, &fd) == 0 && fd >= 0,
	      "DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD (EXPORT_SYNC_FILE): %s", strerror(errno));
	return fd;
}

static void vgem_pending(void)
{
	int card = vgem_open();
	struct vgem_fence vf, vf2;
	hipExternalSemaphore_t s, s2;
	hipStream_t st, st2;
	uint64_t *mark = pinned(2 * sizeof(*mark));
	int64_t t0;
	int sf;

	need_shim();
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamCreate(&st2));

	/* The stream waits for the dma-buf's pending fence. */
	sf = vgem_pending_sync_file(card, &vf);
	CHECK(!sync_file_signaled(sf), "vgem's fence signaled before the test signaled it");
	s = import_ok(sf, false);
	HIPCHECK(wait1(s, 0, st));
	stream_mark(st, &mark[0], 1);
	held(&mark[0], 0, 200, "the dma-buf's fence is pending");
	t0 = now_ns();
	vgem_signal(&vf);
	sync_and_check(st, &mark[0], 1, "wait for the signaled dma-buf fence");
	/* vgem's own timeout (about 10 s) must not be what released it. */
	CHECK(now_ns() - t0 < 5000000000LL, "the wait passed %.1f s after the fence signaled",
	      (double)(now_ns() - t0) / 1e9);
	/* A binary semaphore: the wait consumed the fence. */
	HIPCHECK(wait1(s, 0, st));
	stream_mark(st, &mark[0], 2);
	held(&mark[0], 1, 150, "its one signal was taken by the first wait");
	HIPCHECK(signal1(s, 0, st2));
	sync_and_check(st, &mark[0], 2, "wait after a HIP signal");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	vgem_release(&vf);

	/* A signal replaces a pending fence: the wait passes while vgem's
	 * fence is still pending. */
	sf = vgem_pending_sync_file(card, &vf2);
	s2 = import_ok(sf, false);
	HIPCHECK(signal1(s2, 0, st2));
	HIPCHECK(hipStreamSynchronize(st2));
	HIPCHECK(wait1(s2, 0, st));
	stream_mark(st, &mark[1], 1);
	sync_and_check(st, &mark[1], 1, "wait after a signal replaced the pending fence");
	vgem_signal(&vf2);
	HIPCHECK(hipDestroyExternalSemaphore(s2));
	vgem_release(&vf2);

	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipStreamDestroy(st2));
	HIPCHECK(hipHostFree(mark));
	close(card);
}

static void syncobj_export(void)
{
	int card = vgem_open();
	struct vgem_fence vf;
	hipExternalSemaphore_t s;
	hipStream_t st, st2;
	uint64_t *mark = pinned(2 * sizeof(*mark));
	uint32_t h;
	int sf;

	need_shim();
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamCreate(&st2));

	/* After it signaled: the wait passes at once, and takes the signal. */
	h = so_create(drm, false);
	so_signal(drm, h, 0);
	sf = so_export_sync_file(h);
	CHECK(sync_file_signaled(sf), "a signaled sync object exported a pending sync_file");
	s = import_ok(sf, false);
	HIPCHECK(wait1(s, 0, st));
	stream_mark(st, &mark[0], 1);
	sync_and_check(st, &mark[0], 1, "wait for a signaled sync_file");
	HIPCHECK(wait1(s, 0, st));
	stream_mark(st, &mark[0], 2);
	held(&mark[0], 1, 150, "one wait per signal");
	/* The semaphore is its own sync object: the test's is not touched. */
	CHECK(so_wait(drm, h, 0, 0) == 0, "the exporting sync object was reset");
	HIPCHECK(signal1(s, 0, st2));
	sync_and_check(st, &mark[0], 2, "wait after a HIP signal");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	drmSyncobjDestroy(drm, h);

	/* Before it signals: the sync object holds vgem's pending fence. */
	h = so_create(drm, false);
	sf = vgem_pending_sync_file(card, &vf);
	CHECK(drmSyncobjImportSyncFile(drm, h, sf) == 0, "IMPORT_SYNC_FILE: %s", strerror(errno));
	close(sf);
	sf = so_export_sync_file(h);
	CHECK(!sync_file_signaled(sf), "the exported sync_file is already signaled");
	s = import_ok(sf, false);
	HIPCHECK(wait1(s, 0, st));
	stream_mark(st, &mark[1], 1);
	held(&mark[1], 0, 200, "the sync object's fence is pending");
	vgem_signal(&vf);
	sync_and_check(st, &mark[1], 1, "wait for the exported fence once signaled");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	drmSyncobjDestroy(drm, h);
	vgem_release(&vf);

	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipStreamDestroy(st2));
	HIPCHECK(hipHostFree(mark));
	close(card);
}

/* How many lines of the shim's log (HIPEXTSEM_LOG_FILE) hold `text`;
 * -1 when the case has no log file. */
static int log_count(const char *text)
{
	const char *path = getenv("HIPEXTSEM_LOG_FILE");
	char line[1024];
	int n = 0;
	FILE *f;

	if (!path)
		return -1;
	f = fopen(path, "r");
	CHECK(f != NULL, "cannot read the shim's log %s", path);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, text) != NULL;
	fclose(f);
	return n;
}

static void log_has(const char *text)
{
	CHECK(log_count(text) != 0, "the shim's log %s has no line with \"%s\"",
	      getenv("HIPEXTSEM_LOG_FILE"), text);
}

static int shim_drm_fd(void);
static uint32_t next_handle(int shim_fd);
static void good_sync_file(uint32_t signaled_h);

static void timeline_refused(void)
{
	hipExternalSemaphore_t s = (hipExternalSemaphore_t)0x1;
	uint32_t h = so_create(drm, true), next0, next1;
	int sf, shim_fd;

	need_shim();
	good_sync_file(h); /* the shim's DRM file open */
	shim_fd = shim_drm_fd();
	next0 = next_handle(shim_fd);
	sf = so_export_sync_file(h);
	EXPECT_ERR(import_fd(&s, sf, true), hipErrorInvalidValue);
	/* The sync object the kernel made for the sync_file before the type
	 * was refused is gone again (tests/mutation import-syncfile-tl-leak). */
	next1 = next_handle(shim_fd);
	CHECK(next1 == next0, "the refused import left a sync object on the shim's file (next "
	      "handle %u before, %u after)", next0, next1);
	CHECK(s == (hipExternalSemaphore_t)0x1, "a refused import wrote the out handle");
	CHECK(fcntl(sf, F_GETFD) != -1, "a refused import closed the caller's fd");
	log_has("is a sync_file");
	log_has("TimelineSemaphoreFd");
	/* Still the caller's, and still good as OpaqueFd. */
	s = import_ok(sf, false);
	HIPCHECK(hipDestroyExternalSemaphore(s));
	drmSyncobjDestroy(drm, h);
}

/* The shim's DRM file: the descriptor on the render node that is not the
 * test's own. */
static int shim_drm_fd(void)
{
	const char *node = getenv("HIPEXTSEM_RENDER_NODE");
	char want[PATH_MAX];
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int found = -1;

	CHECK(realpath(node ? node : "/dev/dri/renderD128", want) != NULL, "realpath");
	CHECK(d != NULL, "/proc/self/fd: %s", strerror(errno));
	while ((de = readdir(d))) {
		char path[300], target[PATH_MAX];
		ssize_t n;
		int fd = atoi(de->d_name);

		if (de->d_name[0] == '.' || fd == drm || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, want) == 0) {
			CHECK(found < 0, "two DRM files besides the test's own");
			found = fd;
		}
	}
	closedir(d);
	CHECK(found >= 0, "the shim has no DRM file open");
	return found;
}

/* The handle a new sync object gets on the shim's DRM file: the kernel
 * hands out the lowest free one, so it moves up if the shim leaves sync
 * objects behind. */
static uint32_t next_handle(int shim_fd)
{
	uint32_t h;

	CHECK(drmSyncobjCreate(shim_fd, 0, &h) == 0, "drmSyncobjCreate: %s", strerror(errno));
	CHECK(drmSyncobjDestroy(shim_fd, h) == 0, "drmSyncobjDestroy: %s", strerror(errno));
	return h;
}

enum bad_kind { BAD_CLOSED, BAD_PIPE, BAD_EVENTFD, BAD_FILE, BAD_DRM, BAD_DMABUF, BAD_KINDS };
static const char *const bad_names[BAD_KINDS] = { "closed fd",     "pipe",
						  "eventfd",       "regular file",
						  "DRM device fd", "dma-buf" };
static int dmabuf = -1; /* a vgem buffer's dma-buf: not its fence */

static void try_bad(enum bad_kind k, bool timeline)
{
	hipExternalSemaphore_t s = (hipExternalSemaphore_t)0x1;
	int p[2] = { -1, -1 }, fd = -1;
	hipError_t err;

	switch (k) {
	case BAD_CLOSED:
		CHECK(pipe(p) == 0, "pipe");
		close(p[0]);
		close(p[1]);
		fd = p[0];
		p[0] = p[1] = -1;
		break;
	case BAD_PIPE:
		CHECK(pipe(p) == 0, "pipe");
		fd = p[0];
		break;
	case BAD_EVENTFD:
		fd = eventfd(0, EFD_CLOEXEC);
		break;
	case BAD_FILE:
		fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		break;
	case BAD_DRM:
		fd = drm;
		break;
	case BAD_DMABUF:
		fd = dmabuf;
		break;
	default:
		FAIL("bad kind %d", (int)k);
	}
	CHECK(fd >= 0, "cannot make a %s: %s", bad_names[k], strerror(errno));
	err = import_fd(&s, fd, timeline);
	if ((int)err != (int)hipErrorInvalidValue)
		FAIL("import of a %s as %s returned %d, expected %d", bad_names[k],
		     timeline ? "TimelineSemaphoreFd" : "OpaqueFd", (int)err,
		     (int)hipErrorInvalidValue);
	CHECK(s == (hipExternalSemaphore_t)0x1, "a refused import wrote the out handle");
	if (k != BAD_CLOSED)
		CHECK(fcntl(fd, F_GETFD) != -1, "a refused import closed the caller's %s",
		      bad_names[k]);
	if (k == BAD_PIPE) {
		close(p[0]);
		close(p[1]);
	} else if (k != BAD_CLOSED && k != BAD_DRM && k != BAD_DMABUF) {
		close(fd);
	}
}

static void good_sync_file(uint32_t signaled_h)
{
	hipExternalSemaphore_t s = import_ok(so_export_sync_file(signaled_h), false);

	HIPCHECK(wait1(s, 0, NULL));
	HIPCHECK(hipStreamSynchronize(NULL));
	HIPCHECK(hipDestroyExternalSemaphore(s));
}

static void bad_fds(void)
{
	const int tries = 1000;
	uint32_t sig = so_create(drm, true);
	int card = vgem_open(), shim_fd, fds0, fds1;
	struct drm_mode_create_dumb dumb = { .height = 1, .width = 64, .bpp = 32 };
	struct drm_gem_close gc = { 0 };
	uint32_t next0, next1;

	need_shim();
	CHECK(drmIoctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &dumb) == 0, "CREATE_DUMB: %s",
	      strerror(errno));
	CHECK(drmPrimeHandleToFD(card, dumb.handle, DRM_CLOEXEC, &dmabuf) == 0, "PRIME: %s",
	      strerror(errno));
	/* Warm-up: the shim's device, waiter and log opened. */
	good_sync_file(sig);
	for (int k = 0; k < BAD_KINDS; k++)
		try_bad((enum bad_kind)k, false);
	sleep_ms(50);
	shim_fd = shim_drm_fd();
	fds0 = count_fds();
	next0 = next_handle(shim_fd);

	for (int i = 0; i < tries; i++) {
		try_bad((enum bad_kind)(i % BAD_KINDS), (i / BAD_KINDS) % 2 == 1);
		if (i % 100 == 99)
			good_sync_file(sig); /* the refusals are of bad fds only */
	}
	sleep_ms(50);
	fds1 = count_fds();
	next1 = next_handle(shim_fd);
	CHECK(fds1 == fds0, "%d fds before %d refused imports, %d after", fds0, tries, fds1);
	CHECK(next1 == next0, "the next sync object handle on the shim's file moved from %u to "
	      "%u over %d refused imports: sync objects left behind", next0, next1, tries);
	log_has("is not an open file descriptor");
	log_has("is neither a DRM sync object nor a sync_file");
	drmSyncobjDestroy(drm, sig);
	close(dmabuf);
	gc.handle = dumb.handle;
	drmIoctl(card, DRM_IOCTL_GEM_CLOSE, &gc);
	close(card);
	printf("%d refused imports: %d fds, next handle %u, before and after\n", tries, fds1, next1);
}

/* The SYCL pattern: a Vulkan timeline (here the test's own timeline sync
 * object, its producer already at point 2) imported as OpaqueFd, with
 * timeline values in fence.value. */
static void opaque_timeline(void)
{
	uint32_t h = so_create(drm, false);
	hipExternalSemaphore_t s;
	hipStream_t st;
	uint64_t *mark = pinned(sizeof(*mark));

	need_shim();
	so_signal(drm, h, 2);
	s = import_ok(so_export(drm, h), false);
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(wait1(s, 4, st));
	stream_mark(st, mark, 1);
	held(mark, 0, 150, "a wait for 4 with the timeline at 2");
	so_signal(drm, h, 3);
	held(mark, 0, 150, "a wait for 4 with the timeline at 3");
	so_signal(drm, h, 4);
	sync_and_check(st, mark, 1, "a wait for 4 with the timeline at 4");
	CHECK(so_query(drm, h) == 4, "the timeline was changed by a wait: at %" PRIu64,
	      so_query(drm, h));
	/* A signal sets the point fence.value names. */
	HIPCHECK(signal1(s, 6, st));
	HIPCHECK(hipStreamSynchronize(st));
	CHECK(so_query(drm, h) == 6, "a signal of 6 left the timeline at %" PRIu64,
	      so_query(drm, h));
	HIPCHECK(wait1(s, 6, st));
	stream_mark(st, mark, 2);
	sync_and_check(st, mark, 2, "a wait for 6 at 6");
	CHECK(so_query(drm, h) == 6, "the timeline was changed by a wait");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipHostFree(mark));
	drmSyncobjDestroy(drm, h);
}

/* A timeline imported as OpaqueFd before it has any point: the shim sees
 * a binary semaphore, but its waits must not wipe the points. */
static void opaque_timeline_late(void)
{
	uint32_t h = so_create(drm, false);
	hipExternalSemaphore_t s;
	hipStream_t st;
	uint64_t *mark = pinned(sizeof(*mark));

	need_shim();
	s = import_ok(so_export(drm, h), false);
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(wait1(s, 1, st));
	stream_mark(st, mark, 1);
	held(mark, 0, 150, "nothing submitted yet");
	so_signal(drm, h, 1);
	sync_and_check(st, mark, 1, "a wait once point 1 is signaled");
	sleep_ms(50);
	CHECK(so_query(drm, h) == 1, "a wait reset the timeline (now at %" PRIu64 ")",
	      so_query(drm, h));
	so_signal(drm, h, 2);
	HIPCHECK(wait1(s, 2, st));
	stream_mark(st, mark, 2);
	sync_and_check(st, mark, 2, "a second wait");
	sleep_ms(50);
	CHECK(so_query(drm, h) == 2, "a wait reset the timeline (now at %" PRIu64 ")",
	      so_query(drm, h));
	log_has("carries timeline points");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipHostFree(mark));
	drmSyncobjDestroy(drm, h);
}

static void opaque_timeline_signal(void)
{
	uint32_t h = so_create(drm, false);
	hipExternalSemaphore_t s;
	hipStream_t st;

	need_shim();
	s = import_ok(so_export(drm, h), false);
	HIPCHECK(hipStreamCreate(&st));
	/* The other side makes it a timeline after the import. */
	so_signal(drm, h, 1);
	HIPCHECK(signal1(s, 2, st));
	HIPCHECK(hipStreamSynchronize(st));
	sleep_ms(50);
	CHECK(so_query(drm, h) == 2, "a HIP signal of point 2 left the timeline at %" PRIu64,
	      so_query(drm, h));
	CHECK(so_wait(drm, h, 2, 1000) == 0, "a wait for point 2 did not complete");
	/* A value not past the last point: nothing signaled, the timeline
	 * kept, a log line. */
	HIPCHECK(signal1(s, 0, st));
	HIPCHECK(hipStreamSynchronize(st));
	sleep_ms(50);
	CHECK(so_query(drm, h) == 2, "a HIP signal of point 0 took the timeline to %" PRIu64,
	      so_query(drm, h));
	log_has("carries timeline points now");
	so_signal(drm, h, 3);
	CHECK(so_wait(drm, h, 3, 1000) == 0, "the other side's point 3 did not complete");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	drmSyncobjDestroy(drm, h);
}

/* Plain binary use of OpaqueFd: nonzero values are ignored, a wait takes
 * the signal. */
static void opaque_binary(void)
{
	uint32_t h = so_create(drm, false);
	hipExternalSemaphore_t s;
	hipStream_t st, st2;
	uint64_t *mark = pinned(sizeof(*mark));

	need_shim();
	s = import_ok(so_export(drm, h), false);
	HIPCHECK(hipStreamCreate(&st));
	HIPCHECK(hipStreamCreate(&st2));
	HIPCHECK(signal1(s, 7, st2));
	HIPCHECK(hipStreamSynchronize(st2));
	CHECK(so_wait(drm, h, 0, 0) == 0, "a binary signal with value 7 did not signal");
	CHECK(so_query(drm, h) == 0, "a binary signal made a timeline point");
	HIPCHECK(wait1(s, 9, st));
	stream_mark(st, mark, 1);
	sync_and_check(st, mark, 1, "a wait for a signaled binary semaphore");
	sleep_ms(50);
	CHECK(so_wait(drm, h, 0, 0) == -ETIME, "the wait did not take the binary signal");
	HIPCHECK(wait1(s, 3, st));
	stream_mark(st, mark, 2);
	held(mark, 1, 150, "the binary semaphore is unsignaled");
	so_signal(drm, h, 0);
	sync_and_check(st, mark, 2, "a wait once signaled");
	/* Nonzero values (here and in any case before), one log line. */
	CHECK(log_count("given fence.value") <= 1, "a binary semaphore's value logged %d times",
	      log_count("given fence.value"));
	log_has(": ignored, as in CUDA");
	HIPCHECK(hipDestroyExternalSemaphore(s));
	HIPCHECK(hipStreamDestroy(st));
	HIPCHECK(hipStreamDestroy(st2));
	HIPCHECK(hipHostFree(mark));
	drmSyncobjDestroy(drm, h);
}

/* The test VM's nodes: vgem, loaded after virtio-gpu, leaves renderD128
 * to virtio-gpu (whose sync objects every case uses) and has a primary
 * node of its own. */
static void vm_nodes(void)
{
	drmVersionPtr v = drmGetVersion(drm);
	bool virtio;
	int card = vgem_open();

	CHECK(v != NULL, "drmGetVersion: %s", strerror(errno));
	virtio = v->name && strcmp(v->name, "virtio_gpu") == 0;
	printf("render node %s: driver %s; vgem has a card node\n",
	       getenv("HIPEXTSEM_RENDER_NODE") ? getenv("HIPEXTSEM_RENDER_NODE") : "/dev/dri/renderD128",
	       v->name ? v->name : "?");
	drmFreeVersion(v);
	CHECK(virtio, "the render node is not virtio-gpu's");
	close(card);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "vm-nodes", vm_nodes },
	{ "vgem-pending", vgem_pending },
	{ "syncobj-export", syncobj_export },
	{ "timeline-refused", timeline_refused },
	{ "bad-fds", bad_fds },
	{ "opaque-timeline", opaque_timeline },
	{ "opaque-timeline-late", opaque_timeline_late },
	{ "opaque-timeline-signal", opaque_timeline_signal },
	{ "opaque-binary", opaque_binary },
};

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: case timed out (hang)\n";
	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(124);
}

/* Runs the cases named by the arguments, in order, in one process (one
 * start-up of the runtime for several cases keeps the VM time short). */
int main(int argc, char **argv)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	size_t which[16];

	signal(SIGALRM, on_alarm);
	alarm(90);
	if (argc < 2 || argc - 1 > (int)(sizeof(which) / sizeof(which[0]))) {
		fprintf(stderr, "usage: %s CASE...\n", argv[0]);
		return 2;
	}
	for (int a = 1; a < argc; a++) {
		size_t i;

		for (i = 0; i < n; i++)
			if (!strcmp(cases[i].name, argv[a]))
				break;
		if (i == n) {
			fprintf(stderr, "unknown case '%s'; cases:", argv[a]);
			for (i = 0; i < n; i++)
				fprintf(stderr, " %s", cases[i].name);
			fputc('\n', stderr);
			return 2;
		}
		which[a - 1] = i;
	}
	/* The shim appends to its log: start this case's afresh (it opens
	 * the file on first use, after this). */
	if (getenv("HIPEXTSEM_LOG_FILE")) {
		FILE *f = fopen(getenv("HIPEXTSEM_LOG_FILE"), "w");
		CHECK(f != NULL, "cannot truncate %s", getenv("HIPEXTSEM_LOG_FILE"));
		fclose(f);
	}
	drm = drm_open();
	HIPCHECK(hipInit(0));
	HIPCHECK(hipSetDevice(0));
	for (int a = 1; a < argc; a++) {
		int64_t t0 = now_ns();

		cases[which[a - 1]].fn();
		printf("ok %s (abi%d, %.2f s)\n", argv[a], HX_TEST_ABI, (double)(now_ns() - t0) / 1e9);
	}
	return 0;
}
