#include "drm_util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *du_node_path(void)
{
	const char *p = getenv("DRM_TEST_NODE");
	return p && *p ? p : "/dev/dri/renderD128";
}

void du_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(NULL);
	exit(1);
}

void du_note(const char *fmt, ...)
{
	va_list ap;
	fputs("ok: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

int du_open_render(void)
{
	const char *path = du_node_path();
	struct stat st;
	if (stat(path, &st) != 0)
		du_fail(__FILE__, __LINE__, "%s: %s (these tests need the test VM: scripts/vm-run)",
			path, strerror(errno));
	if (!S_ISCHR(st.st_mode))
		du_fail(__FILE__, __LINE__, "%s is not a character device", path);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		du_fail(__FILE__, __LINE__, "open %s: %s", path, strerror(errno));
	return fd;
}

int64_t du_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t du_deadline_ms(int64_t ms)
{
	return du_now_ns() + ms * 1000000;
}

uint32_t du_syncobj_create(int fd)
{
	uint32_t h = 0;
	int r = drmSyncobjCreate(fd, 0, &h);
	DU_CHECK(r == 0, "drmSyncobjCreate: %s", strerror(-r));
	DU_CHECK(h != 0, "drmSyncobjCreate returned handle 0");
	return h;
}

struct du_delayed {
	pthread_t thread;
	int fd;
	uint32_t handle;
	uint64_t point;
	int delay_ms;
};

static void *delayed_main(void *arg)
{
	struct du_delayed *d = arg;
	struct timespec ts = { d->delay_ms / 1000, (long)(d->delay_ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	int r = d->point ? drmSyncobjTimelineSignal(d->fd, &d->handle, &d->point, 1)
			 : drmSyncobjSignal(d->fd, &d->handle, 1);
	DU_CHECK(r == 0, "signal from thread (point %llu): %s",
		 (unsigned long long)d->point, strerror(-r));
	return NULL;
}

struct du_delayed *du_signal_later(int fd, uint32_t handle, uint64_t point, int delay_ms)
{
	struct du_delayed *d = calloc(1, sizeof(*d));
	DU_CHECK(d != NULL, "out of memory");
	d->fd = fd;
	d->handle = handle;
	d->point = point;
	d->delay_ms = delay_ms;
	int r = pthread_create(&d->thread, NULL, delayed_main, d);
	DU_CHECK(r == 0, "pthread_create: %s", strerror(r));
	return d;
}

void du_join(struct du_delayed *d)
{
	pthread_join(d->thread, NULL);
	free(d);
}
