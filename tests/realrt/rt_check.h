/* Failure macros of the programs run on AMD's real runtimes through
 * tests/realrt/with-device (accept.c, enqcost.c, modecost.c): the
 * harness's (hxtest.h, without its cpuhip HIP side); a failure names the
 * file and line and exits 1. */
#ifndef HIPEXTSEM_RT_CHECK_H
#define HIPEXTSEM_RT_CHECK_H

#include "hxtest.h"

#define HIPOK(x) HIPCHECK(x)

#endif
