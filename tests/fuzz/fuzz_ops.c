/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target over the four semaphore operations (issue 7).
 *
 * The shim's core sources are compiled into this binary with clang and
 * ASan+UBSan (tests/fuzz/build-fuzz); the harness calls hx_op_* directly
 * and runs on the cpuhip runtime it is linked against (abi5 or abi6).
 *
 * An input is a program: a sequence of operations (import / signal / wait /
 * destroy / external signal / raw calls) whose arguments come from the
 * input bytes -- handle types, descriptor bytes, descriptor kinds (syncobj,
 * -1, 0, closed, pipe, eventfd, /dev/null, regular file, any number),
 * parameter arrays with random flags and values, handle arrays mixing live,
 * destroyed, NULL and garbage handles, valid, destroyed and garbage streams.
 * With /dev/dri/renderD128 (the test VM) imports of real syncobjs succeed
 * and the sequences reach the registry and the waiter; without it they
 * exercise every host-side validation path.
 *
 * After each input the harness releases whatever it left pending (signals
 * every syncobj it owns until the shim reports no pending wait), destroys
 * its semaphores and checks that the shim is idle again and that no
 * descriptor leaked: a hang or a leak aborts, so the fuzzer reports it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "hipextsem/hip_api.h"
#include "ops.h"

#ifndef HX_FUZZ_ABI
#error "HX_FUZZ_ABI must be 5 or 6"
#endif
#if HX_FUZZ_ABI == 5
typedef struct hx_sem_desc_v5 fz_desc;
typedef struct hx_sem_signal_params_v5 fz_sig;
typedef struct hx_sem_wait_params_v5 fz_wait;
#else
typedef struct hx_sem_desc_v6 fz_desc;
typedef struct hx_sem_signal_params_v6 fz_sig;
typedef struct hx_sem_wait_params_v6 fz_wait;
#endif

#define NSLOTS 6
#define MAXN 8
#define MAXOPS 48
#define RELEASE_POINT (1ull << 40)

struct reader {
	const uint8_t *p;
	size_t n;
};

static uint8_t u8(struct reader *r)
{
	if (!r->n)
		return 0;
	r->n--;
	return *r->p++;
}

static uint32_t u32(struct reader *r)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v = v << 8 | u8(r);
	return v;
}

static void bytes(struct reader *r, void *dst, size_t len)
{
	size_t k = len < r->n ? len : r->n;
	memcpy(dst, r->p, k);
	memset((char *)dst + k, 0, len - k);
	r->p += k;
	r->n -= k;
}

static int drm = -1;
static hipStream_t streams[3]; /* [0] NULL stream, [1..2] created */
static hipStream_t dead_stream;

struct slot {
	hipExternalSemaphore_t sem; /* NULL: empty */
	hipExternalSemaphore_t stale;
	uint32_t kh;                /* our kernel handle for the same syncobj, 0: none */
	bool timeline;
};
static struct slot slots[NSLOTS];
static uint32_t owned[NSLOTS * MAXOPS];
static unsigned nowned;

/* Open descriptors, pipes excepted: libFuzzer and the sanitizer runtime
 * open pipe pairs of their own while fuzzing (the shim never creates a
 * pipe; its descriptors are DRM files, eventfds and an epoll set). */
static int fd_count(void)
{
	int n = 0;
	for (int fd = 0; fd < 1024; fd++) {
		char p[64], l[64];
		ssize_t k;
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		k = readlink(p, l, sizeof(l) - 1);
		if (k <= 0)
			continue;
		l[k] = 0;
		if (strncmp(l, "pipe:", 5) != 0)
			n++;
	}
	return n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (hipInit(0) != hipSuccess || hipSetDevice(0) != hipSuccess)
		abort();
	drm = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
	streams[0] = NULL;
	if (hipStreamCreate(&streams[1]) || hipStreamCreateWithFlags(&streams[2], hipStreamNonBlocking))
		abort();
	if (hipStreamCreate(&dead_stream) || hipStreamDestroy(dead_stream))
		abort();
	if (drm >= 0) {
		/* Warm up: the shim's device, waiter thread and slots exist from
		 * here on, so the descriptor count is a stable baseline. */
		fz_desc d;
		fz_wait w;
		hipExternalSemaphore_t s;
		uint32_t h;
		int fd;
		memset(&d, 0, sizeof(d));
		memset(&w, 0, sizeof(w));
		if (drmSyncobjCreate(drm, DRM_SYNCOBJ_CREATE_SIGNALED, &h) ||
		    drmSyncobjHandleToFD(drm, h, &fd))
			abort();
		d.type = 1;
		d.handle.fd = fd;
		if (hx_op_import(&s, &d) || hx_op_wait(&s, &w, 1, streams[1]) ||
		    hipStreamSynchronize(streams[1]) || hx_op_destroy(s))
			abort();
		drmSyncobjDestroy(drm, h);
	}
	fprintf(stderr, "fuzz_ops: abi%d, %s\n", HX_FUZZ_ABI,
		drm >= 0 ? "with DRM (real syncobjs)" : "without DRM (validation paths)");
	return 0;
}

/* A descriptor of the kind the input picks; *mine is set if it is open
 * (the harness closes it when the import did not take it). */
static int make_fd(struct reader *r, uint32_t *kh, bool *is_syncobj, bool *mine)
{
	int p[2], fd;

	*kh = 0;
	*is_syncobj = false;
	*mine = true;
	switch (u8(r) % 10) {
	case 0:
	case 1:
	case 2:
		if (drm >= 0 && nowned < sizeof(owned) / sizeof(owned[0])) {
			uint32_t h;
			if (drmSyncobjCreate(drm, (u8(r) & 1) ? DRM_SYNCOBJ_CREATE_SIGNALED : 0, &h))
				abort();
			if (drmSyncobjHandleToFD(drm, h, &fd))
				abort();
			owned[nowned++] = h;
			*kh = h;
			*is_syncobj = true;
			return fd;
		}
		*mine = false;
		return -1;
	case 3:
		*mine = false;
		return -1;
	case 4:
		*mine = false;
		return 0;
	case 5:
		*mine = false;
		fd = dup(2);
		close(fd);
		return fd; /* closed */
	case 6:
		if (pipe(p))
			abort();
		close(p[1]);
		return p[0];
	case 7:
		return eventfd(0, EFD_CLOEXEC);
	case 8:
		return open(u8(r) & 1 ? "/dev/null" : "/proc/self/exe", O_RDONLY | O_CLOEXEC);
	default:
		*mine = false;
		return (int)u32(r) | 0x40000000; /* a number no descriptor has */
	}
}

static hipExternalSemaphore_t pick_handle(struct reader *r)
{
	uint8_t b = u8(r);
	struct slot *s = &slots[(b >> 3) % NSLOTS];

	switch (b & 7) {
	case 0:
	case 1:
	case 2:
	case 3:
		return s->sem ? s->sem : s->stale;
	case 4:
		return s->stale;
	case 5:
		return NULL;
	case 6:
		return (hipExternalSemaphore_t)(uintptr_t)(0x4858000000000000ull | u32(r));
	default:
		return (hipExternalSemaphore_t)(uintptr_t)u32(r);
	}
}

static hipStream_t pick_stream(struct reader *r)
{
	uint8_t b = u8(r) % 8;
	if (b < 3)
		return streams[b];
	if (b < 6)
		return streams[1 + (b & 1)];
	if (b == 6)
		return dead_stream;
	return (hipStream_t)(uintptr_t)(0xdead0000u | u8(r));
}

static void op_import(struct reader *r)
{
	fz_desc d;
	struct slot *s = &slots[u8(r) % NSLOTS];
	hipExternalSemaphore_t out = (hipExternalSemaphore_t)0x1;
	uint32_t kh;
	bool is_syncobj, mine;
	int fd, type;
	hipError_t err;

	bytes(r, &d, (u8(r) & 1) ? sizeof(d) : 0); /* raw descriptor bytes, or zeros */
	type = u8(r);
	type = type < 200 ? (type % 13) - 1 : (int)((unsigned)type << 24);
	fd = make_fd(r, &kh, &is_syncobj, &mine);
	d.type = type == 0 && is_syncobj ? 9 : type;
	d.handle.fd = fd;
	err = hx_op_import(u8(r) == 0xff ? NULL : &out, u8(r) == 0xfe ? NULL : &d);
	if (err == hipSuccess) {
		if (!is_syncobj || (d.type != 1 && d.type != 9))
			abort(); /* the shim accepted something it must reject */
		if (fcntl(fd, F_GETFD) != -1)
			abort(); /* it must own (and close) the fd on success */
		if (s->sem)
			hx_op_destroy(s->sem);
		s->sem = out;
		s->kh = kh;
		s->timeline = d.type == 9;
		return;
	}
	if (out != (hipExternalSemaphore_t)0x1)
		abort(); /* a failed import wrote the handle */
	if (mine) {
		if (fcntl(fd, F_GETFD) == -1)
			abort(); /* a failed import closed the caller's fd */
		close(fd);
	}
}

static void op_signal_wait(struct reader *r, bool wait)
{
	hipExternalSemaphore_t hs[MAXN];
	union {
		fz_sig s[MAXN];
		fz_wait w[MAXN];
	} p;
	unsigned n = u8(r) % (MAXN + 1);
	uint8_t shape = u8(r);

	memset(&p, 0, sizeof(p));
	for (unsigned i = 0; i < n; i++) {
		uint8_t b = u8(r);
		uint64_t v = 1 + (b & 0x1f);
		hs[i] = pick_handle(r);
		if (wait) {
			p.w[i].params.fence.value = v;
			p.w[i].flags = (b & 0xe0) == 0xe0 ? u32(r) : 0;
		} else {
			p.s[i].params.fence.value = (b & 0xc0) == 0xc0 ? 0 : v;
			p.s[i].flags = (b & 0xe0) == 0xe0 ? u32(r) : 0;
		}
	}
	if (shape == 0xff)
		n = n ? n : 1 << 20; /* count without arrays (NULL below) */
	if (wait)
		hx_op_wait(shape >= 0xfe ? NULL : hs, shape == 0xfd ? NULL : (void *)p.w, n,
			   pick_stream(r));
	else
		hx_op_signal(shape >= 0xfe ? NULL : hs, shape == 0xfd ? NULL : (void *)p.s, n,
			     pick_stream(r), NULL);
}

static void op_destroy(struct reader *r)
{
	uint8_t b = u8(r);
	struct slot *s = &slots[b % NSLOTS];
	hipError_t err;

	if (b & 0x80) {
		hx_op_destroy(pick_handle(r));
		return;
	}
	if (!s->sem)
		return;
	err = hx_op_destroy(s->sem);
	if (err != hipSuccess)
		abort(); /* a live handle must be destroyable */
	s->stale = s->sem;
	s->sem = NULL;
}

static void op_external_signal(struct reader *r)
{
	struct slot *s = &slots[u8(r) % NSLOTS];
	uint64_t v = 1 + (u8(r) & 0x1f);
	if (drm < 0 || !s->kh)
		return;
	if (s->timeline)
		drmSyncobjTimelineSignal(drm, &s->kh, &v, 1);
	else
		drmSyncobjSignal(drm, &s->kh, 1);
}

static void release_all(void)
{
	struct hx_stats st;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		hx_op_stats(&st);
		if (st.pending_waits == 0 && st.pending_signals == 0)
			break;
		for (unsigned i = 0; i < nowned; i++) {
			uint64_t v = RELEASE_POINT;
			drmSyncobjTimelineSignal(drm, &owned[i], &v, 1);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10) {
			fprintf(stderr, "fuzz_ops: %u waits / %u signals still pending after 10 s "
				"with every syncobj signaled: hang\n", st.pending_waits,
				st.pending_signals);
			abort();
		}
		usleep(200);
	}
	for (int i = 1; i < 3; i++)
		if (hipStreamSynchronize(streams[i]) != hipSuccess)
			abort();
	hipStreamSynchronize(NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fds_base = -1;
	struct reader r = { data, size };
	struct hx_stats st;

	for (int k = 0; k < MAXOPS && r.n; k++) {
		switch (u8(&r) % 8) {
		case 0:
		case 1:
			op_import(&r);
			break;
		case 2:
		case 3:
			op_signal_wait(&r, false);
			break;
		case 4:
			op_signal_wait(&r, true);
			break;
		case 5:
			op_destroy(&r);
			break;
		case 6:
			op_external_signal(&r);
			break;
		default:
			hx_op_is_shim_handle(pick_handle(&r));
			break;
		}
	}
	release_all();
	for (int i = 0; i < NSLOTS; i++) {
		if (slots[i].sem && hx_op_destroy(slots[i].sem) != hipSuccess)
			abort();
		memset(&slots[i], 0, sizeof(slots[i]));
	}
	for (unsigned i = 0; i < nowned; i++)
		drmSyncobjDestroy(drm, owned[i]);
	nowned = 0;
	/* Destroyed semaphores are freed by the waiter thread shortly after. */
	for (int i = 0; i < 2000; i++) {
		hx_op_stats(&st);
		if (st.live_sems == 0 && st.pending_waits == 0 && st.pending_signals == 0)
			break;
		usleep(500);
	}
	if (st.live_sems || st.pending_waits || st.pending_signals) {
		fprintf(stderr, "fuzz_ops: shim not idle after the input: %u sems %u waits %u "
			"signals\n", st.live_sems, st.pending_waits, st.pending_signals);
		abort();
	}
	/* The runtime opens a few descriptors of its own on first use: the
	 * baseline is what the first input leaves behind. */
	if (fds_base < 0) {
		fds_base = fd_count();
		return 0;
	}
	for (int i = 0; i < 200 && fd_count() > fds_base; i++)
		usleep(1000);
	if (fd_count() > fds_base) {
		fprintf(stderr, "fuzz_ops: descriptor leak: %d open, %d after the first input:\n",
			fd_count(), fds_base);
		for (int fd = 0; fd < 1024; fd++) {
			char p[64], l[256];
			ssize_t k;
			snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
			k = readlink(p, l, sizeof(l) - 1);
			if (k > 0) {
				l[k] = 0;
				fprintf(stderr, "  fd %d -> %s\n", fd, l);
			}
		}
		abort();
	}
	return 0;
}
