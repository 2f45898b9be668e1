/* The farm's side of a run: the joblog it appends to as each attempt ends,
 * the --results folders, and the status line of --progress. The supervisor
 * calls these; what they write is decided by the pure parts (joblog.h,
 * mg_farm_status_format). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "task.h"

struct mg_sweep;

struct mg_farm {
	int joblog_fd; /* O_APPEND, -1: no --joblog */
	const char *joblog_path;
	bool joblog_failed; /* a line could not be written (said); the run exits 125 */
	char host[64];      /* the joblog's Host: this node's name */
	char **commands;    /* each task's escaped command text, by index; NULL without a joblog */
	int results_fd;     /* --results DIR, -1: none */
	const char *results_path;
	int claims_fd; /* this run's claim folder (farm/nodes.h), -1: one node alone */
	const char *claims_path;
	uint64_t progress_usec; /* --progress interval, 0: none */
	bool progress_tty;      /* stderr is a terminal: one line, redrawn */
	struct mg_sweep *sweep; /* GNU parallel's inputs (farm/sweep.h), or NULL */
};

#define MG_FARM_INIT                                                                                         \
	{                                                                                                    \
		.joblog_fd = -1, .results_fd = -1, .claims_fd = -1                                           \
	}

/* What the status line says. */
struct mg_farm_counts {
	size_t total;        /* tasks in this run */
	size_t ok;           /* finished and succeeded */
	size_t failed;       /* finished and failed for good */
	size_t running;      /* attempts running now */
	size_t retried;      /* retries started or waiting */
	size_t elsewhere;    /* claimed by other nodes: not this run's to count */
	size_t memory_kills; /* attempts killed for memory (kernel, memguardd, watchdog) */
	uint64_t in_use, budget;
	uint64_t elapsed_usec;
};

/* "12/400 done (2 failed), 16 running, 3 retried, 1 OOM kill, budget
 * 30GiB/60GiB in use, ETA 5m12s": the ETA from the mean time per finished
 * task, "ETA ?" before the first. Pure. Returns buf. */
const char *mg_farm_status_format(const struct mg_farm_counts *c, char *buf, size_t size);

/* Appends the attempt's line to the joblog with one write(), at once, so a
 * job killed at its walltime loses nothing that ended. 0, or -errno (said
 * once; joblog_failed set). A no-op without a joblog. */
int mg_farm_log_attempt(struct mg_farm *f, const struct mg_task *t);

/* --results: creates DIR/<seq>/<attempt>/ and opens stdout and stderr in it
 * for the attempt (truncated; a retry gets a folder of its own). 0 with two
 * fds, 0 with -1s without --results, or -errno (said). */
int mg_farm_open_results(const struct mg_farm *f, const struct mg_task *t, int *ret_out, int *ret_err);

/* Claims t's line for this node: creates <seq> in the claim folder with
 * O_EXCL, which exactly one node's create wins, also on NFS (version 3 and
 * later create exclusively on the server). 1 when this node has it, 0 when
 * another node claimed it first, -errno (said) when the claim could not be
 * made. 1 without a claim folder. */
int mg_farm_claim(const struct mg_farm *f, const struct mg_task *t);

void mg_farm_done(struct mg_farm *f, size_t ntasks);
