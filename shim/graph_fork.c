/* SPDX-License-Identifier: MIT */
/*
 * The graph code's locks across fork(): held while a process forks, so
 * that a child never inherits a record list halfway through a change, or
 * a lock held by a thread that does not exist there.  Taken in the order
 * the graph code nests them: the capture guard (runtime.h), then the
 * signal records' lock and the wait records' lock (never nested with each
 * other), all before the registry's lock, whose handlers are registered
 * first (pthread_atfork runs prepare handlers in reverse order of
 * registration).  It only takes locks: it calls no other graph file.
 */
#include <pthread.h>

#include "capture_guard.h"
#include "graph_common.h"
#include "graph_wait.h"
#include "runtime.h"

/* The two graph locks are defined here, with the code that orders them
 * at fork: the signal records' (graph_signal.c) and the wait records'
 * (graph_wait.h). */
pthread_mutex_t hx_gsig_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t hx_gw_lock = PTHREAD_MUTEX_INITIALIZER;

static bool fork_guarded;

static void graph_fork_prepare(void)
{
	fork_guarded = hx_capture_guard_lock();
	pthread_mutex_lock(&hx_gsig_lock);
	pthread_mutex_lock(&hx_gw_lock);
}

static void graph_fork_release(void)
{
	pthread_mutex_unlock(&hx_gw_lock);
	pthread_mutex_unlock(&hx_gsig_lock);
	if (fork_guarded)
		hx_capture_guard_unlock();
}

static pthread_once_t graph_fork_once = PTHREAD_ONCE_INIT;

static void graph_fork_register(void)
{
	pthread_atfork(graph_fork_prepare, graph_fork_release, graph_fork_release);
}

/* Called once by the registry's set-up (hx_reg_init), right after it
 * registers its own handlers: every path that can take one of these locks
 * sets the registry up first. */
void hx_graph_fork_setup(void)
{
	pthread_once(&graph_fork_once, graph_fork_register);
}
