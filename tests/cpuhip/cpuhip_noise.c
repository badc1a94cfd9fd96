/* SPDX-License-Identifier: MIT */
/*
 * Test-only: seeded scheduling noise (tests/workload, docs/testing.md).
 * CPUHIP_NOISE=SEED:PERMILLE, read once at start-up: at every runtime
 * entry and return (the CPUHIP_BOUNDARY of every exported entry point),
 * before each stream command a stream's worker runs and before each host
 * callback the callback thread runs, PERMILLE in 1000 of those points
 * yield the CPU, and a quarter of those sleep 50 to 1000 us instead, so
 * that the shim's threads and the application's interleave differently
 * from run to run.  The choices come from a per-thread generator seeded
 * from SEED and the thread's order of first use, so a seed is a
 * distribution, not an exact schedule.  Unset or 0 permille: nothing
 * (one relaxed load per point).  No ROCm release has any of this.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpuhip_internal.h"

static unsigned noise_permille;
static uint64_t noise_seed;
/* One process-wide sequence, not thread-local state: a TLS block of this
 * library crashes LeakSanitizer's exit-time scan in the ASan tests that
 * unload the runtime (hostile-*-unload, paths-dlopen-mipmap-*). */
static _Atomic uint64_t noise_count;

__attribute__((constructor)) static void noise_init(void)
{
	const char *e = getenv("CPUHIP_NOISE");
	unsigned long long seed;
	unsigned pm;

	if (!e || !*e)
		return;
	if (sscanf(e, "%llu:%u", &seed, &pm) != 2 || pm > 1000) {
		fprintf(stderr, "cpuhip: CPUHIP_NOISE=%s is not SEED:PERMILLE (0-1000)\n", e);
		abort();
	}
	noise_seed = seed;
	noise_permille = pm;
}

static uint64_t noise_next(void)
{
	/* splitmix64 */
	uint64_t z = noise_seed * 0xbf58476d1ce4e5b9ULL +
		     (atomic_fetch_add(&noise_count, 1) + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void cpuhip_noise(void)
{
	uint64_t r;

	if (!noise_permille)
		return;
	r = noise_next();
	if (r % 1000 >= noise_permille)
		return;
	if ((r >> 20) % 4 == 0) {
		struct timespec ts = { 0, (long)(50 + (r >> 32) % 951) * 1000L };
		nanosleep(&ts, NULL);
	} else {
		sched_yield();
	}
}

/* The same noise for a test build of the shim (its noise points, shim/noise.h). */
CPUHIP_EXPORT void cpuhipTestNoise(void)
{
	cpuhip_noise();
}
