/* SPDX-License-Identifier: MIT */
/*
 * The checks of the cpuhip tests: each failed check is printed and counted
 * in `failures`, which the including file defines; the test goes on.
 */
#ifndef CPUHIP_CHECK_H
#define CPUHIP_CHECK_H

#include <stdio.h>

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                              \
			failures++;                                                  \
		}                                                                    \
	} while (0)

#define CHECK_ERR(call, want)                                                          \
	do {                                                                           \
		hipError_t e_ = (call);                                                \
		if (e_ != (want)) {                                                    \
			fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d\n", __FILE__, \
				__LINE__, #call, (int)e_, hipGetErrorName(e_), (int)(want)); \
			failures++;                                                    \
		}                                                                      \
	} while (0)

#define OK(call) CHECK_ERR(call, hipSuccess)

#endif
