/* Failure macros of the programs run on AMD's real runtimes through
 * tests/realrt/with-device (accept.c, enqcost.c, modecost.c): a failure
 * names the file and line and exits 1 (tests/drm/drm_util.c du_fail). */
#ifndef HIPEXTSEM_RT_CHECK_H
#define HIPEXTSEM_RT_CHECK_H

#include "../drm/drm_util.h"

#define FAIL(...) du_fail(__FILE__, __LINE__, __VA_ARGS__)
#define HIPOK(x)                                                                    \
	do {                                                                        \
		hipError_t e_ = (x);                                                \
		if (e_ != hipSuccess)                                               \
			FAIL("%s returned %d", #x, (int)e_);                        \
	} while (0)

#endif
