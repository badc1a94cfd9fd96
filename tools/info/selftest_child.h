/* SPDX-License-Identifier: MIT */
/*
 * Inside the self-test's child: selftest_child.c sets up and runs the
 * checks, selftest_measure.c the measurements, and selftest_stream.c
 * holds what both use, declared here.  Nothing here is seen by the parent.
 */
#ifndef HIPEXTSEM_SELFTEST_CHILD_H
#define HIPEXTSEM_SELFTEST_CHILD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hipextsem/hip_api.h"
#include "runtime.h"
#include "sync.h"

/* Words of pinned memory the stream writes (markers) or waits on (gates). */
enum { M_GATE, M_MARKER, M_HOSTFN, M_GATE2, M_COUNT };

struct st_state {
	int out;
	int64_t timeout_ns;
	unsigned rounds;
	enum hx_abi abi;

	/* the runtime, from its own handle */
	__typeof__(hipGetDeviceCount) *GetDeviceCount;
	__typeof__(hipGetDevice) *GetDevice;
	__typeof__(hipDeviceGetAttribute) *DeviceGetAttribute;
	__typeof__(hipDeviceGetPCIBusId) *DeviceGetPCIBusId;
	__typeof__(hipRuntimeGetVersion) *RuntimeGetVersion;
	__typeof__(hipStreamCreate) *StreamCreate;
	__typeof__(hipStreamDestroy) *StreamDestroy;
	__typeof__(hipStreamSynchronize) *StreamSynchronize;
	__typeof__(hipStreamWaitValue64) *StreamWaitValue64;
	__typeof__(hipStreamWriteValue64) *StreamWriteValue64;
	__typeof__(hipStreamAddCallback) *StreamAddCallback;
	__typeof__(hipLaunchHostFunc) *LaunchHostFunc;
	__typeof__(hipHostMalloc) *HostMalloc;
	__typeof__(hipGetErrorName) *GetErrorName;
	__typeof__(hipEventCreateWithFlags) *EventCreateWithFlags;
	__typeof__(hipEventRecord) *EventRecord;
	__typeof__(hipStreamWaitEvent) *StreamWaitEvent;
	/* the semaphore calls, bound as an application's references bind */
	__typeof__(hipImportExternalSemaphore) *Import;
	__typeof__(hipSignalExternalSemaphoresAsync) *Signal;
	__typeof__(hipWaitExternalSemaphoresAsync) *Wait;
	__typeof__(hipDestroyExternalSemaphore) *Destroy;

	hipStream_t s;        /* the stream the checks work on: `own`, or
				 hipStreamPerThread of the enqueuing thread */
	hipStream_t own;      /* the stream the child created */
	bool per_thread;      /* s is hipStreamPerThread: every enqueue goes
				 through one thread (selftest_stream.c) */
	hipEvent_t gate_event;
	volatile uint64_t *mem;
	uint64_t gate, marker, tl_next;
	atomic_ullong hostfn_runs;
	/* semaphores handed to hipSignalExternalSemaphoresAsync (per entry) */
	atomic_ullong signals_made;

	struct hx_sync_dev dev;
	uint32_t bin, tl;
	hipExternalSemaphore_t ebin, etl;
	bool have_bin, have_tl;

	int64_t deadline;  /* of the running check */
	bool timed_out;    /* set by a check that hit its deadline */
	bool stop;         /* an earlier check timed out: the rest is not run */
	bool waits_block;  /* a wait call did not return before its signal */
	char why[640];
};

extern struct st_state hx_st;

/* ---- selftest_stream.c ---- */

/* A result line to the parent (selftest.c reads them). */
void st_record(const char *type, int n, ...);
/* Set hx_st.why and return false; the second also marks a timeout. */
bool st_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool st_timeout_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *st_ename(hipError_t e);
double st_tsec(void);
void st_spin_pause(void);
/* Each round of a check gets the whole deadline; also tells the parent we live. */
void st_round_start(int64_t deadline_ns);

/* The stream: markers it writes, gates it waits at, and a drain. */
bool st_marker_reaches(uint64_t v);
hipError_t st_put_marker(uint64_t v);
hipError_t st_put_gate(uint64_t v);
void st_open_gate(uint64_t v);
bool st_stream_idle(void);

/* Switches the checks to hipStreamPerThread and back.  While on, the
 * markers, gates and semaphore calls above are handed to one long-lived
 * thread and run there, so that they all reach the same per-thread stream
 * whichever thread of the child asks; a call that thread does not finish
 * in time answers ST_NO_ANSWER.  On 5.2, whose stream value calls cannot
 * take hipStreamPerThread (docs/streams.md), a marker is written by a host
 * function and a gate is a wait on `own` the per-thread stream waits for
 * through an event.  False (with the reason) if it cannot be set up. */
bool st_per_thread_begin(void);
void st_per_thread_end(void);
#define ST_NO_ANSWER ((hipError_t)-1000)

/* The semaphore calls with the runtime's parameter layout, and the host
 * function the shim's signal uses on this runtime. */
void *st_params_array(unsigned n, const uint64_t *values);
/* Rewrites the values of n parameters made by st_params_array. */
void st_params_set(void *params, unsigned n, const uint64_t *values);
hipError_t st_sem_signal(hipExternalSemaphore_t *sems, const uint64_t *values, unsigned n);
hipError_t st_sem_wait(hipExternalSemaphore_t *sems, const uint64_t *values, unsigned n);
hipError_t st_host_fn(void);
const char *st_host_fn_name(void);
/* A new syncobj on the render node, exported and imported through the shim. */
bool st_import_one(bool timeline, uint32_t *handle, hipExternalSemaphore_t *ext);

/* Latency, enqueue cost and fence attachment (selftest_measure.c). */
void st_measure(void);

#endif
