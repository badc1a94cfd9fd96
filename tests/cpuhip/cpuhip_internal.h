/* SPDX-License-Identifier: MIT */
/*
 * cpuhip: a CPU reference implementation of the parts of libamdhip64 that
 * hipextsem relies on.  Internal declarations shared by its source files.
 */
#ifndef CPUHIP_INTERNAL_H
#define CPUHIP_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "hipextsem/hip_api.h"
#include "hipextsem/hip_devprop.h"

#ifndef CPUHIP_ABI
#error "build with -DCPUHIP_ABI=5 or -DCPUHIP_ABI=6"
#endif

#define CPUHIP_EXPORT __attribute__((visibility("default")))

/* Error names and strings (cpuhip_errors.c). */
const char *cpuhip_error_name(hipError_t e);
const char *cpuhip_error_string(hipError_t e);

/* Proc address table (cpuhip_procs.c, 6.x flavour only). */
void *cpuhip_lookup_proc(const char *name);

#endif /* CPUHIP_INTERNAL_H */
