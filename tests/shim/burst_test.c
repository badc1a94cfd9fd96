/* SPDX-License-Identifier: MIT */
/*
 * burst: many pending waits released by one signal ioctl each for the
 * timelines and the binary semaphores, next to waits that stay pending.
 *
 * The waiter sees one kernel notification at a time; a burst must release
 * every satisfied wait (the fallback's sweep over the set, the eventfd
 * mode's per-object events) and nothing else: the waits on semaphores that
 * were not signaled, and the second point of a timeline signaled only to
 * its first, must still hold their streams afterwards.  Run with the shim
 * preloaded, in both waiter modes (HIPEXTSEM_NO_EVENTFD).
 */
#include <pthread.h>
#include <signal.h>

#include "hxtest.h"

enum { NT = 300, NB = 40, NLATE = 20, NSTREAMS = 8 };

static int drm;

static void burst(void)
{
	static hipExternalSemaphore_t ts[NT], bs[NB], ls[NLATE];
	static uint32_t th[NT], bh[NB], lh[NLATE];
	static uint64_t pts[NT];
	hipStream_t st[NSTREAMS], late_st, half_st;
	/* marks: [0, NT) timeline point 1, [NT, 2NT) point 2, then binary,
	 * late, and the half-signaled timeline's two points */
	uint64_t *m = pinned((2 * NT + NB + NLATE + 2) * sizeof(uint64_t));
	uint64_t *mb = m + 2 * NT, *ml = mb + NB, *mh = ml + NLATE;
	hipExternalSemaphore_t half;
	uint32_t hh;

	for (int i = 0; i < NSTREAMS; i++)
		HIPCHECK(hipStreamCreateWithFlags(&st[i], hipStreamNonBlocking));
	HIPCHECK(hipStreamCreateWithFlags(&late_st, hipStreamNonBlocking));
	HIPCHECK(hipStreamCreateWithFlags(&half_st, hipStreamNonBlocking));

	/* Interleaved, so that the waiter's set mixes every kind. */
	for (int i = 0; i < NT; i++) {
		ts[i] = sem_import_new(drm, &th[i], true);
		HIPCHECK(wait1(ts[i], 1, st[i % NSTREAMS]));
		stream_mark(st[i % NSTREAMS], &m[i], 1);
		HIPCHECK(wait1(ts[i], 2, st[(i + 1) % NSTREAMS]));
		stream_mark(st[(i + 1) % NSTREAMS], &m[NT + i], 1);
		if (i < NB) {
			bs[i] = sem_import_new(drm, &bh[i], false);
			HIPCHECK(wait1(bs[i], 0, st[i % NSTREAMS]));
			stream_mark(st[i % NSTREAMS], &mb[i], 1);
		}
		if (i < NLATE) {
			ls[i] = sem_import_new(drm, &lh[i], true);
			HIPCHECK(wait1(ls[i], 1, late_st));
			stream_mark(late_st, &ml[i], 1);
		}
	}
	half = sem_import_new(drm, &hh, true);
	HIPCHECK(wait1(half, 1, half_st));
	stream_mark(half_st, &mh[0], 1);
	HIPCHECK(wait1(half, 2, half_st));
	stream_mark(half_st, &mh[1], 1);
	/* Let the waiter take every wait into its set first. */
	sleep_ms(300);

	for (int i = 0; i < NT; i++)
		pts[i] = 2;
	CHECK(drmSyncobjTimelineSignal(drm, th, pts, NT) == 0, "bulk timeline signal: %s",
	      strerror(errno));
	CHECK(drmSyncobjSignal(drm, bh, NB) == 0, "bulk binary signal: %s", strerror(errno));
	so_signal(drm, hh, 1);

	int64_t t0 = now_ns();
	for (int i = 0; i < NSTREAMS; i++)
		HIPCHECK(hipStreamSynchronize(st[i]));
	printf("# %d timeline (2 waits each) and %d binary waits released in %.1f ms\n", NT, NB,
	       (now_ns() - t0) / 1e6);
	for (int i = 0; i < NT; i++) {
		CHECK(load64(&m[i]) == 1, "timeline %d: wait for point 1 not released", i);
		CHECK(load64(&m[NT + i]) == 1, "timeline %d: wait for point 2 not released", i);
	}
	for (int i = 0; i < NB; i++)
		CHECK(load64(&mb[i]) == 1, "binary %d: wait not released", i);

	/* What was not signaled still holds, after a while. */
	for (int k = 0; k < 20 && !load64(&mh[0]); k++)
		sleep_ms(50);
	CHECK(load64(&mh[0]) == 1, "timeline signaled to 1: wait for point 1 not released");
	sleep_ms(200);
	CHECK(load64(&mh[1]) == 0, "timeline signaled to 1: wait for point 2 released");
	for (int i = 0; i < NLATE; i++)
		CHECK(load64(&ml[i]) == 0, "unsignaled timeline %d: wait released", i);

	/* And is released by its own signal, one at a time. */
	so_signal(drm, hh, 2);
	for (int i = 0; i < NLATE; i++)
		so_signal(drm, lh[i], 1);
	HIPCHECK(hipStreamSynchronize(late_st));
	HIPCHECK(hipStreamSynchronize(half_st));
	for (int i = 0; i < NLATE; i++)
		CHECK(load64(&ml[i]) == 1, "late timeline %d: wait not released", i);
	CHECK(load64(&mh[1]) == 1, "timeline signaled to 2: wait for point 2 not released");

	for (int i = 0; i < NT; i++)
		HIPCHECK(hipDestroyExternalSemaphore(ts[i]));
	for (int i = 0; i < NB; i++)
		HIPCHECK(hipDestroyExternalSemaphore(bs[i]));
	for (int i = 0; i < NLATE; i++)
		HIPCHECK(hipDestroyExternalSemaphore(ls[i]));
	HIPCHECK(hipDestroyExternalSemaphore(half));
	for (int i = 0; i < NSTREAMS; i++)
		HIPCHECK(hipStreamDestroy(st[i]));
	HIPCHECK(hipStreamDestroy(late_st));
	HIPCHECK(hipStreamDestroy(half_st));
	HIPCHECK(hipHostFree(m));
}

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: case timed out (a wait was never released)\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(124);
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "burst") != 0) {
		fprintf(stderr, "usage: burst-test burst\n");
		return 2;
	}
	signal(SIGALRM, on_alarm);
	alarm(90);
	CHECK(expect_shim(), "the burst case needs the shim (HX_TEST_EXPECT=shim)");
	drm = drm_open();
	HIPCHECK(hipInit(0));
	burst();
	printf("ok burst\n");
	return 0;
}
