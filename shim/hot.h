/* SPDX-License-Identifier: MIT */
/*
 * The code every signal and wait runs on the application's thread is
 * marked HX_HOT_PATH: GCC places such functions in .text.hot, which the
 * linker keeps together, so that a call touches one or two pages of the
 * library's code instead of one per source file.  After a context switch
 * each page's translation has to be found again (a page walk in
 * hardware, a software refill under an emulator), so a call that
 * follows a blocking hipStreamSynchronize pays per page touched.
 */
#ifndef HIPEXTSEM_HOT_H
#define HIPEXTSEM_HOT_H

#define HX_HOT_PATH __attribute__((hot))

/* On the first function of .text.hot (the signal's entry point, entry.c,
 * the first hot object the library links): the section then starts on a
 * page, so that the whole caller-side path of a signal (entry point,
 * intercept, capture guard, hx_op_signal, settle: about 2.5 KiB) lies in
 * one page of code and a wait's in two, instead of straddling whatever
 * page boundary the cold code before them happens to put there. */
#define HX_HOT_PAGE_START __attribute__((aligned(4096)))

/* Inlined into signal and wait, which run it for every call. */
#define HX_INLINE static inline __attribute__((always_inline))

#endif
