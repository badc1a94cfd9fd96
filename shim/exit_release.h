/* SPDX-License-Identifier: MIT */
/*
 * The release of pending waits at exit (defined in wait.c; the hook that
 * runs it before the runtime's per-thread-stream teardown is streams.c's).
 */
#ifndef HIPEXTSEM_EXIT_RELEASE_H
#define HIPEXTSEM_EXIT_RELEASE_H

#include "streams.h"

/* Once per thread, by every call that can leave work pending at exit (the
 * import, a signal, a wait: dispatch.c; a graph launch: graph_exec.c):
 * pending waits are released in exit() before the runtime's teardown of
 * the main thread's per-thread stream.  After a thread's first call it is
 * one thread-local load, inline.  Call it under no lock of the shim's and
 * outside the capture guard: registering the hook takes glibc's loader
 * lock (wait.c). */
void hx_op_exit_release_first(const char *what);
static inline void hx_op_exit_release_setup(const char *what)
{
	if (__builtin_expect(hx_exit_hook_state == 0, 0))
		hx_op_exit_release_first(what);
}

#endif
