/* The summary of a run: a table on stderr and JSON for tools. */
#pragma once

#include <stdio.h>

#include "runtime.h"
#include "task.h"

struct mg_run_info {
	const char *mode;   /* "cgroup" or "degraded" */
	const char *shares; /* "strict" or "elastic" */
	const char *where;  /* the run's cgroup, or why it is degraded */
	const char
	        *placed_by; /* "placed by memguardd ..." when the daemon made the cgroup, else NULL or "" */
	uint64_t share;
	uint64_t budget; /* what the tasks may use together */
	bool run_capped; /* the run's cgroup has memory.max = budget */
	enum mg_runtime runtime;
	unsigned parallel;           /* tasks at once */
	const char *signal_received; /* a forwarded SIGTERM etc., or NULL */
};

void mg_report_table(FILE *out, const struct mg_run_info *info, const struct mg_task *tasks, size_t n);

/* Writes the JSON report to path (atomically, through a temporary file). */
int mg_report_json(const char *path, const struct mg_run_info *info, const struct mg_task *tasks, size_t n);

/* The launcher's exit status: 0 when every task succeeded, else the status of
 * the first failing task by index. */
int mg_run_exit_status(const struct mg_task *tasks, size_t n);
