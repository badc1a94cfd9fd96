/* A syncobj exported as an fd from one DRM file imports into another one
 * and both handles name the same object; a non-syncobj fd is refused. */
#include "hxtest.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	int fd1 = drm_open();
	int fd2 = drm_open();
	int r, sfd = -1;
	uint32_t h1 = so_create(fd1, false), h2 = 0;

	r = drmSyncobjHandleToFD(fd1, h1, &sfd);
	CHECK(r == 0 && sfd >= 0, "drmSyncobjHandleToFD: %s", strerror(-r));
	r = drmSyncobjFDToHandle(fd2, sfd, &h2);
	CHECK(r == 0 && h2 != 0, "drmSyncobjFDToHandle into the second file: %s", strerror(-r));
	close(sfd); /* the import holds its own reference */
	hx_note("exported from file 1, imported into file 2 (handle %u)", h2);

	r = drmSyncobjWait(fd1, &h1, 1, deadline_ms(20), DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	CHECK(r == -ETIME, "unsignaled syncobj wait: got %d (%s), want ETIME", r, strerror(-r));
	r = drmSyncobjSignal(fd2, &h2, 1);
	CHECK(r == 0, "signal through file 2: %s", strerror(-r));
	r = drmSyncobjWait(fd1, &h1, 1, deadline_ms(1000), 0, NULL);
	CHECK(r == 0, "file 1 does not see the signal made through file 2: %d (%s)", r, strerror(-r));
	hx_note("binary signal through file 2 is seen through file 1");

	/* The same with timeline points. */
	uint64_t p = 9, v = 0;
	r = drmSyncobjReset(fd1, &h1, 1);
	CHECK(r == 0, "reset: %s", strerror(-r));
	r = drmSyncobjTimelineSignal(fd2, &h2, &p, 1);
	CHECK(r == 0, "timeline signal through file 2: %s", strerror(-r));
	r = drmSyncobjQuery(fd1, &h1, &v, 1);
	CHECK(r == 0 && v == 9, "query through file 1 after signaling 9 through file 2: %llu",
		 (unsigned long long)v);
	hx_note("timeline point 9 signaled through file 2 is seen through file 1");

	int pfd[2];
	CHECK(pipe(pfd) == 0, "pipe: %s", strerror(errno));
	uint32_t bad = 0;
	errno = 0;
	r = drmSyncobjFDToHandle(fd1, pfd[0], &bad);
	int err = errno;
	CHECK(r != 0, "importing a pipe as a syncobj succeeded (handle %u)", bad);
	hx_note("importing a pipe fails: %d (errno %s)", r, strerror(err));
	close(pfd[0]);
	close(pfd[1]);

	CHECK(drmSyncobjDestroy(fd2, h2) == 0, "destroy in file 2");
	/* Still alive through file 1. */
	r = drmSyncobjQuery(fd1, &h1, &v, 1);
	CHECK(r == 0 && v == 9, "syncobj in file 1 lost after destroying the file 2 handle");
	CHECK(drmSyncobjDestroy(fd1, h1) == 0, "destroy in file 1");
	close(fd1);
	close(fd2);
	return 0;
}
