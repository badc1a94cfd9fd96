/* SPDX-License-Identifier: MIT */
/*
 * The compile-time comparisons shared by abi_check.c (5.x header) and
 * abi_check6.c (6.x/7.x headers): a real HIP type R against the project's
 * own M, field by field.  Each use also counts one check in `nchecks`.
 */
#ifndef HIPEXTSEM_TESTS_ABI_CHECK_H
#define HIPEXTSEM_TESTS_ABI_CHECK_H

#include <stddef.h>

static int nchecks;

#define MEMBER_SIZE(T, f) sizeof(((T *)0)->f)
#define SAME_FIELD(R, M, f, mf)                                                        \
	_Static_assert(offsetof(R, f) == offsetof(M, mf), #R "." #f " offset");         \
	_Static_assert(MEMBER_SIZE(R, f) == MEMBER_SIZE(M, mf), #R "." #f " size");     \
	nchecks++
#define SAME_SIZE(R, M)                                                                \
	_Static_assert(sizeof(R) == sizeof(M), "sizeof " #R);                           \
	nchecks++
#define SAME_VALUE(a, b)                                                               \
	_Static_assert((long long)(a) == (long long)(b), #a " == " #b);                 \
	nchecks++

#endif
