/* SPDX-License-Identifier: MIT */
/*
 * demo-producer: plays the Vulkan side with raw DRM syncobj calls.
 *
 *   demo-producer [--rounds N] [--node PATH] -- CONSUMER [ARGS...]
 *
 * Creates a binary and a timeline syncobj and a shared frame page, starts
 * CONSUMER with a unix socket in DEMO_SOCK_FD, hands it the three fds, and
 * then for every round r: writes frame r, signals timeline point 2r-1,
 * waits until the HIP side signals the binary syncobj and timeline point
 * 2r, and checks that HIP's stream did its work in between.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "demo_common.h"

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *node = "/dev/dri/renderD128";
	uint32_t rounds = 10, bin, tl;
	int argi = 1, drm, sv[2], fds[3], memfd, status, failures = 0;
	struct demo_frame *frame;
	int64_t *lat;
	pid_t pid;

	for (; argi < argc; argi++) {
		if (!strcmp(argv[argi], "--rounds") && argi + 1 < argc)
			rounds = (uint32_t)strtoul(argv[++argi], NULL, 0);
		else if (!strcmp(argv[argi], "--node") && argi + 1 < argc)
			node = argv[++argi];
		else if (!strcmp(argv[argi], "--")) {
			argi++;
			break;
		} else
			break;
	}
	if (argi >= argc || rounds == 0 || rounds > 100000) {
		fprintf(stderr, "usage: %s [--rounds N] [--node PATH] -- CONSUMER [ARGS...]\n",
			argv[0]);
		return 2;
	}
	drm = open(node, O_RDWR | O_CLOEXEC);
	if (drm < 0) {
		fprintf(stderr, "producer: cannot open %s: %s\n", node, strerror(errno));
		return 1;
	}
	if (drmSyncobjCreate(drm, 0, &bin) || drmSyncobjCreate(drm, 0, &tl) ||
	    drmSyncobjHandleToFD(drm, bin, &fds[0]) || drmSyncobjHandleToFD(drm, tl, &fds[1])) {
		fprintf(stderr, "producer: syncobj setup failed: %s\n", strerror(errno));
		return 1;
	}
	memfd = memfd_create("demo-frame", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, 4096)) {
		perror("producer: memfd");
		return 1;
	}
	fds[2] = memfd;
	frame = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (frame == MAP_FAILED) {
		perror("producer: mmap");
		return 1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		perror("producer: socketpair");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		char num[16];
		int fd = dup(sv[1]); /* without CLOEXEC */
		snprintf(num, sizeof(num), "%d", fd);
		setenv("DEMO_SOCK_FD", num, 1);
		execvp(argv[argi], &argv[argi]);
		fprintf(stderr, "producer: cannot run %s: %s\n", argv[argi], strerror(errno));
		_exit(127);
	}
	close(sv[1]);
	if (demo_send_fds(sv[0], fds, 3, rounds)) {
		fprintf(stderr, "producer: sending fds failed\n");
		return 1;
	}
	close(fds[0]);
	close(fds[1]);

	printf("producer: %s, binary syncobj %u, timeline syncobj %u, %u rounds\n", node, bin, tl,
	       rounds);
	lat = calloc(rounds, sizeof(*lat));
	if (!lat) {
		perror("producer: calloc");
		return 1;
	}
	for (uint32_t r = 1; r <= rounds; r++) {
		uint64_t ready = 2ull * r - 1, done = 2ull * r, value = 0;
		int64_t t0, deadline;
		int ret;

		frame->produced = 1000 + r;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		t0 = now_ns();
		drmSyncobjTimelineSignal(drm, &tl, &ready, 1);
		deadline = now_ns() + 30ll * 1000000000;
		ret = drmSyncobjTimelineWait(drm, &tl, &done, 1, deadline,
					     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
		if (ret == 0)
			ret = drmSyncobjWait(drm, &bin, 1, deadline,
					     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
		lat[r - 1] = now_ns() - t0;
		if (ret) {
			printf("round %u: FAILED: no signal from the HIP side within 30 s (%s)\n", r,
			       strerror(errno));
			failures++;
			break;
		}
		drmSyncobjReset(drm, &bin, 1);
		drmSyncobjQuery(drm, &tl, &value, 1);
		if (frame->consumed != 1000 + r || value != done) {
			printf("round %u: FAILED: frame says %" PRIu64 " (want %u), timeline at %" PRIu64
			       " (want %" PRIu64 ")\n",
			       r, (uint64_t)frame->consumed, 1000 + r, value, done);
			failures++;
			break;
		}
		printf("round %u: producer signaled point %" PRIu64 " -> HIP stream waited, copied "
		       "frame %u, signaled binary + point %" PRIu64 ": %.3f ms\n",
		       r, ready, 1000 + r, done, (double)lat[r - 1] / 1e6);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("producer: the HIP consumer failed (status %d)\n", status);
		failures++;
	}
	if (!failures) {
		qsort(lat, rounds, sizeof(*lat), cmp_i64);
		printf("demo: %u rounds completed in order; round trip p50 %.3f ms, p99 %.3f ms, "
		       "max %.3f ms\n",
		       rounds, (double)lat[rounds / 2] / 1e6,
		       (double)lat[(rounds * 99) / 100 < rounds ? (rounds * 99) / 100 : rounds - 1] /
			       1e6,
		       (double)lat[rounds - 1] / 1e6);
	} else {
		printf("demo: FAILED\n");
	}
	free(lat);
	munmap(frame, 4096);
	close(memfd);
	close(sv[0]);
	close(drm);
	return failures ? 1 : 0;
}
