/* SPDX-License-Identifier: MIT */
/*
 * hipextsem-info --selftest: real semaphore round trips through the shim.
 *
 * hipextsem-info itself never loads the HIP runtime, and without
 * --selftest nothing loads it.  The self-test runs in a child:
 * hipextsem-info re-executed with the shim appended to LD_PRELOAD (as
 * hipextsem-run does), which loads the runtime the report found and sends
 * back one record per fact, check and measurement over a pipe.  The parent
 * keeps a deadline on every record and kills a child that stops answering,
 * so neither a stuck stream nor a blocked call can hang the tool, and ends
 * whatever the child leaves behind (selftest.c says how).
 */
#ifndef HIPEXTSEM_INFO_SELFTEST_H
#define HIPEXTSEM_INFO_SELFTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hipextsem/hip_abi.h"

/* The hidden first argument that makes hipextsem-info the child. */
#define HX_SELFTEST_CHILD_ARG "--selftest-child"
/* ... and the one that makes it the process the child starts to see an
 * exit with waits pending (check exit-with-wait-pending). */
#define HX_SELFTEST_EXIT_ARG "--selftest-exit-child"

struct hx_selftest_opts {
	const char *shim;     /* the library to preload */
	const char *runtime;  /* the runtime file the child loads */
	enum hx_abi abi;
	unsigned rounds;      /* per check and per measurement */
	double timeout_s;     /* deadline of every wait (per round) */
	bool probe_only;      /* device facts and the wait path only (the child
				 still offers it; hipextsem-info no longer asks) */
	bool measure_only;    /* the import and the measurements only */
	const char *signal_mode; /* HIPEXTSEM_SIGNAL_MODE for the child, or NULL
				    to leave the environment's */
};

struct hx_st_check {
	char name[48];
	bool passed;
	char reason[640];
};

/* A latency figure, in nanoseconds, and the bare runtime or kernel
 * primitive measured the same way in the same run. */
struct hx_st_metric {
	char name[32];
	double p50_ns, p99_ns;
	double base_p50_ns, base_p99_ns;
	unsigned samples;
	char what[160];
	char baseline[160];
};

struct hx_st_fact {
	char key[32];
	char value[512];
};

#define HX_ST_MAX_CHECKS 24
#define HX_ST_MAX_METRICS 8
#define HX_ST_MAX_FACTS 32

struct hx_selftest_report {
	bool started;             /* a child ran */
	bool passed;              /* every check ran and passed */
	char cannot_run[1024];    /* why the self-test cannot run here ("" if it can) */
	struct hx_st_check checks[HX_ST_MAX_CHECKS];
	size_t n_checks;
	struct hx_st_metric metrics[HX_ST_MAX_METRICS];
	size_t n_metrics;
	struct hx_st_fact facts[HX_ST_MAX_FACTS];
	size_t n_facts;
	unsigned rounds;
	double timeout_s;
	double elapsed_s;
	char log[4096];           /* the child's stderr (the shim's log lines), tail */
};

/* Runs the child and collects its records.  Never blocks longer than the
 * deadlines: a child that stops answering is killed and the check it was
 * in is failed with the reason. */
void hx_selftest_run(const struct hx_selftest_opts *o, struct hx_selftest_report *r);

/* A fact the child reported, or NULL. */
const char *hx_selftest_fact(const struct hx_selftest_report *r, const char *key);

/* The wait path the child reported, in words: returns 1 if waits block the
 * calling thread, 0 if not, -1 if unknown. */
int hx_selftest_wait_path(const struct hx_selftest_report *r, char *text, size_t len);
/* hipDeviceAttributeCanUseStreamWaitValue as read, in words. */
void hx_selftest_attribute(const struct hx_selftest_report *r, char *text, size_t len);

/* Output: the text section (one line per check, the figures, a verdict),
 * and the members of the JSON `selftest` object. */
void hx_selftest_print_text(const struct hx_selftest_report *r, FILE *f);
void hx_selftest_print_json(const struct hx_selftest_report *r, FILE *f);

/* The signal modes compared (hipextsem-info --selftest): each mode's
 * measurement in a child of its own, and the mode recommended here. */
#define HX_ST_MODES 2
struct hx_selftest_modes {
	const char *name[HX_ST_MODES];
	struct hx_selftest_report run[HX_ST_MODES];
	bool ran;
	bool all_measured;       /* every mode's run completed */
	const char *recommended; /* NULL: no recommendation (a mode failed) */
	char why[512];
};
void hx_selftest_run_modes(const struct hx_selftest_opts *o, struct hx_selftest_modes *m);
void hx_selftest_print_modes_text(const struct hx_selftest_modes *m, FILE *f);
void hx_selftest_print_modes_json(const struct hx_selftest_modes *m, FILE *f);

/* main() of the child (argv[1] == HX_SELFTEST_CHILD_ARG). */
int hx_selftest_child_main(int argc, char **argv);
/* main() of the child's own child (argv[1] == HX_SELFTEST_EXIT_ARG): its
 * return value is main's, and it returns with waits pending. */
int hx_selftest_exit_child_main(int argc, char **argv);

#endif
