/* hxwork-load: the load op's program (driver.c, op_load).  Not linked
 * against the runtime: the shim is preloaded, and the runtime is loaded
 * (or not) the way a loader does it, so that the shim must find it
 * outside the application's own link scope (docs/install.md,
 * docs/interposition.md).
 *
 *   hxwork-load local NODE LIB     LIB dlopen()ed with RTLD_LOCAL
 *   hxwork-load renamed NODE LIB   a copy of LIB under a name that tells no
 *                                  ABI (the soname must), RTLD_LOCAL
 *   hxwork-load none NODE          no runtime at all
 *
 * A timeline made on NODE is imported through the shim's own export
 * (found with dlsym(RTLD_DEFAULT)), then destroyed.  With a runtime both
 * must answer 0; without one the import must be refused.  Exit status:
 * 0 as expected, else the step that was not. */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xf86drm.h>

#include "hipextsem/hip_abi.h"

typedef int rt_error;
typedef rt_error import_fn(void **, const void *);
typedef rt_error destroy_fn(void *);
typedef rt_error init_fn(unsigned);

/* LIB copied into a directory of its own under a name without an ABI
 * clue; the copy's path in `out`. */
static int copy_renamed(const char *lib, char *out, size_t len)
{
	char dir[] = "/tmp/hxwork-load-XXXXXX";
	struct stat st;
	off_t off = 0;
	int in, o;

	if (!mkdtemp(dir))
		return -1;
	snprintf(out, len, "%s/libhxwork-renamed.so", dir);
	in = open(lib, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st))
		return -1;
	o = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (o < 0) {
		rmdir(dir);
		return -1;
	}
	while (off < st.st_size)
		if (sendfile(o, in, &off, (size_t)(st.st_size - off)) <= 0) {
			unlink(out);
			rmdir(dir);
			return -1;
		}
	close(in);
	close(o);
	return 0;
}

int main(int argc, char **argv)
{
	char path[4200];
	import_fn *import;
	destroy_fn *destroy;
	struct hx_sem_desc_v6 d;
	void *rt = NULL, *sem = NULL;
	bool none;
	uint32_t h;
	int drm, fd, ret = 0;

	if (argc < 3 || (strcmp(argv[1], "none") && argc != 4)) {
		fprintf(stderr, "usage: hxwork-load local|renamed|none NODE [LIB]\n");
		return 2;
	}
	none = !strcmp(argv[1], "none");
	if (!strcmp(argv[1], "renamed")) {
		if (copy_renamed(argv[3], path, sizeof(path)))
			return 3;
	} else if (!none) {
		snprintf(path, sizeof(path), "%s", argv[3]);
	}
	if (!none) {
		init_fn *init;

		rt = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!strcmp(argv[1], "renamed")) {
			/* mapped now, or refused: the copy is not needed again */
			unlink(path);
			*strrchr(path, '/') = 0;
			rmdir(path);
		}
		if (!rt) {
			fprintf(stderr, "hxwork-load: %s\n", dlerror());
			return 4;
		}
		init = (init_fn *)dlsym(rt, "hipInit");
		if (!init || init(0))
			return 5;
	}
	import = (import_fn *)dlsym(RTLD_DEFAULT, "hipImportExternalSemaphore");
	destroy = (destroy_fn *)dlsym(RTLD_DEFAULT, "hipDestroyExternalSemaphore");
	if (!import || !destroy)
		return 6;
	drm = open(argv[2], O_RDWR | O_CLOEXEC);
	if (drm < 0 || drmSyncobjCreate(drm, 0, &h) || drmSyncobjHandleToFD(drm, h, &fd))
		return 7;
	memset(&d, 0, sizeof(d));
	d.type = HX_SEM_HANDLE_TIMELINE_FD;
	d.handle.fd = fd;
	ret = import(&sem, &d);
	if (none)
		return ret != 0 && !sem ? 0 : 8;
	if (ret || !sem)
		return 9;
	if (destroy(sem))
		return 10;
	return 0;
}
