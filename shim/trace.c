/* SPDX-License-Identifier: MIT */
#include "trace.h"

bool hx_trace_on;

void hx_trace_init(void)
{
}

void hx_trace_reset_after_fork(void)
{
}

void hx_trace_import_(const void *sem, uint32_t syncobj, bool timeline, int64_t ts_ns)
{
}

void hx_trace_destroy_(const void *sem, int64_t ts_ns)
{
}

void hx_trace_signal_(const void *sem, uint64_t value, const void *stream, int64_t enq_ns,
		      int64_t done_ns)
{
}

void hx_trace_wait_(const void *sem, uint64_t value, const void *stream, int64_t enq_ns,
		    int64_t done_ns)
{
}

void hx_trace_stuck_(const void *sem, uint64_t value, uint64_t current, const void *stream,
		     int64_t enq_ns, int64_t now_ns)
{
}
