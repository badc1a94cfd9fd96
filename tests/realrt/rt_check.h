/* Failure macros of the programs run on AMD's real runtimes through
 * tests/realrt/with-device (accept.c, enqcost.c, modecost.c): a failure
 * names the file and line and exits 1 (FAIL of the harness, hxtest.h). */
#ifndef HIPEXTSEM_RT_CHECK_H
#define HIPEXTSEM_RT_CHECK_H

#include "hxtest.h"

#define HIPOK(x)                                                                    \
	do {                                                                        \
		hipError_t e_ = (x);                                                \
		if (e_ != hipSuccess)                                               \
			FAIL("%s returned %d", #x, (int)e_);                        \
	} while (0)

#endif
