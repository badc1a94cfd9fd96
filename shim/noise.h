/* SPDX-License-Identifier: MIT */
/*
 * Seeded scheduling noise at the shim's decision points, for the
 * randomized workload (tests/workload, docs/testing.md).  Only the test
 * build libextsem-noise.so (HX_NOISE) has it; in the library that ships
 * hx_noise() is nothing.
 *
 * The points: inside the capture guard between a call's decision and its
 * enqueue, around a capture's begin and end, the waiter's and the poll
 * thread's steps, a signal's host function, a stream's destroy and the
 * exit release.  The noise itself is cpuhip's (CPUHIP_NOISE): the shim
 * draws from the same seeded sequence, so a program's noise line sets
 * both; a runtime without it (AMD's) makes the points do nothing.
 */
#ifndef HX_NOISE_H
#define HX_NOISE_H

#ifdef HX_NOISE
void hx_noise(void);
#else
static inline void hx_noise(void)
{
}
#endif

/*
 * The test build's point inside the registry lock, in
 * hipDestroyExternalSemaphore's section: it calls the program's
 * hxTestRegistryLocked when the program exports one, so that a test can
 * keep the lock held as a thread preempted there would
 * (tests/streams: exit-lock-held).
 */
#ifdef HX_NOISE
void hx_noise_locked(void);
#else
static inline void hx_noise_locked(void)
{
}
#endif

#endif
