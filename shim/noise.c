/* SPDX-License-Identifier: MIT */
/* The test build's noise points (noise.h). */
#include <dlfcn.h>

#include "noise.h"

#ifdef HX_NOISE
static void (*noise_fn)(void);
static void (*locked_fn)(void);

/* Resolved once, at load, never at a noise point: a point may sit under
 * the capture guard, where nothing may take the loader's lock (graphs.md).
 * The runtime a program links is mapped before any constructor runs. */
__attribute__((constructor)) static void noise_resolve(void)
{
	*(void **)&noise_fn = dlsym(RTLD_DEFAULT, "cpuhipTestNoise");
	*(void **)&locked_fn = dlsym(RTLD_DEFAULT, "hxTestRegistryLocked");
}

void hx_noise(void)
{
	if (noise_fn)
		noise_fn();
}

void hx_noise_locked(void)
{
	if (locked_fn)
		locked_fn();
}
#endif
