/* SPDX-License-Identifier: MIT */
/*
 * cpuhip: a CPU reference implementation of the parts of libamdhip64 that
 * hipextsem relies on.  Internal declarations shared by its source files.
 */
#ifndef CPUHIP_INTERNAL_H
#define CPUHIP_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "hipextsem/hip_api.h"
#include "hipextsem/hip_devprop.h"

#ifndef CPUHIP_ABI
#error "build with -DCPUHIP_ABI=5 or -DCPUHIP_ABI=6"
#endif

#define CPUHIP_EXPORT __attribute__((visibility("default")))

/* The calling thread's kernel id. */
static inline pid_t cpuhip_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}


/* Error names and strings (cpuhip_errors.c). */
const char *cpuhip_error_name(hipError_t e);
const char *cpuhip_error_string(hipError_t e);

/* Proc address table (cpuhip_procs.c, 6.x flavour only). */
void *cpuhip_lookup_proc(const char *name);

/* Graphs and stream capture (cpuhip_graph*.c, cpuhip_capture.c; both flavours, the 5.x one
 * exporting what 5.2 exports). */
#include <stdbool.h>
bool cpuhip_capture_active(hipStream_t h);
hipError_t cpuhip_capture_host_fn(hipStream_t h, hipHostFn_t fn, void *data);
/* cpuhip.c, for cpuhip_graph.c */
hipError_t cpuhip_enqueue_host_fn(hipStream_t h, hipHostFn_t fn, void *data);
bool cpuhip_stream_valid(hipStream_t h);
hipError_t cpuhip_set_last_error(hipError_t e);
/* The ROCm release whose answers this instance plays, as major * 100 +
 * minor (CPUHIP_ROCM; 502 for abi5, 603 for abi6 by default). */
int cpuhip_release(void);
/* The calling thread's per-thread stream, NULL until it is made. */
hipStream_t cpuhip_tls_per_thread(void);
/* The development tree crashes on a semaphore handle it did not make:
 * under that profile, aborts if `arr` holds any (cpuhip.c). */
void cpuhip_foreign_sems(const char *what, const hipExternalSemaphore_t *arr, unsigned int n);
/* A stream being destroyed: drop its capture (cpuhip_capture.c). */
void cpuhip_capture_forget(hipStream_t h);
/* Capture hooks for cpuhip.c (cpuhip_capture.c).  The
 * _locked ones are called with cpuhip.c's stream lock held. */
int cpuhip_capture_status(hipStream_t h);
bool cpuhip_capture_ongoing(hipStream_t h);
bool cpuhip_capture_global_live(void);
hipError_t cpuhip_capture_check_supported(void);
/* The graph and capture lock around fork() (taken after the stream lock). */
void cpuhip_graph_fork_lock(void);
void cpuhip_graph_fork_unlock(void);
bool cpuhip_capture_event_record_locked(hipEvent_t ev, hipStream_t s);
hipError_t cpuhip_capture_wait_event_locked(hipStream_t ws, hipEvent_t ev, unsigned int flags,
					    bool (*stream_ok)(hipStream_t), bool *handled);
void cpuhip_capture_event_gone(hipEvent_t ev);

/* CPUHIP_EXTSEM_NODE_CALLS=empty plays a 7.x build of clr, whose eight
 * external-semaphore graph node calls tail-call dispatch slots clr never
 * fills (tests/cpuhip/README.md; Debian's 7.2.4: the slot at 0xd98 for
 * hipGraphExternalSemaphoresWaitNodeGetParams reads 0 at run time): each
 * such call ends the process here, naming itself, where 7.x jumps to
 * address 0.  A no-op otherwise. */
void cpuhip_extsem_node_call(const char *name);

/* Seeded scheduling noise (cpuhip_noise.c, CPUHIP_NOISE=SEED:PERMILLE):
 * maybe yields or sleeps briefly; nothing when unset. */
void cpuhip_noise(void);

/* The runtime boundary (cpuhip_interleave.c): first line of every entry
 * point a client calls; `stream` is its stream argument or NULL. */
struct cpuhip_boundary {
	const char *name;
	hipStream_t stream;
	bool fire_after;
};
struct cpuhip_boundary cpuhip_boundary_enter(const char *name, hipStream_t stream);
/* At the entry, before any lock: the first hipStreamPerThread of a thread
 * registers 5.2.3's thread_local per-thread stream object (cpuhip.c). */
void cpuhip_pts_touch(hipStream_t h);
void cpuhip_boundary_leave(struct cpuhip_boundary *b);
#define CPUHIP_BOUNDARY(name, stream)                                                      \
	__attribute__((cleanup(cpuhip_boundary_leave))) struct cpuhip_boundary cpuhip_bp_ = \
		cpuhip_boundary_enter(name, stream)
/* One-shot test faults armed by cpuhipTestRefuseNextStreamWait and
 * cpuhipTestFailNextHostFunc: true once each. */
bool cpuhip_take_refuse_wait(void);
bool cpuhip_take_fail_host_fn(void);
bool cpuhip_take_fail_event_record(void);
/* A CPUHIP_FAIL_* bit armed for the calling thread by
 * cpuhipTestFailOnThisThread: true once. */
bool cpuhip_take_fail_mine(int bit);

#endif /* CPUHIP_INTERNAL_H */
