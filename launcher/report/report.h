/* The summary of a run: a table on stderr and JSON for tools. */
#pragma once

#include <stdio.h>

#include "runtime/runtime.h"
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
	const char *runtime_note;    /* after the runtime's name in parentheses, unless NULL or "" */
	unsigned parallel;           /* tasks at once */
	const char *signal_received; /* a forwarded SIGTERM etc., or NULL */
	bool advise;                 /* a sweep (--tasks): end with the sizing advice */
	unsigned cpus;               /* CPUs memguard may run on: the advice's -n stays within them */
	bool status_set;             /* exit_status is the run's; else mg_run_exit_status() */
	int exit_status;
};

/* Characters of a task-file line the table shows; the JSON report has it all. */
#define MG_TABLE_PARAM_MAX 60

/* s as a table shows it: its first max characters (UTF-8), a control byte
 * as \xHH so that none reaches a terminal raw, and "..." when there is
 * more. Into buf (max * 4 + 8 bytes hold any); returns buf. */
const char *mg_report_shown(const char *s, unsigned max, char *buf, size_t size);

/* Above this many tasks the table shows only the failed ones, first, and
 * sums up the rest: hundreds of "ok" rows would bury them. The JSON report
 * and the joblog keep every row. */
#define MG_TABLE_FULL_MAX 40

/* The sizing advice line (farm/sizing.c) for the tasks that succeeded with
 * a known peak, into buf; "" when there is none. Returns buf. */
const char *mg_report_sizing(const struct mg_run_info *info, const struct mg_task *tasks, size_t n, char *buf,
                             size_t size);

void mg_report_table(FILE *out, const struct mg_run_info *info, const struct mg_task *tasks, size_t n);

/* Writes the JSON report to path atomically: into a new file at an
 * unpredictable name in path's directory (O_EXCL, no symlink followed),
 * renamed over path when complete. Returns 0 or -errno; no temporary file
 * is left behind. */
int mg_report_json(const char *path, const struct mg_run_info *info, const struct mg_task *tasks, size_t n);

/* Whether a report could be written to path, asked before the run so that a
 * typo does not cost the run's report: 0, or -errno (-EISDIR when path is a
 * directory; the directory's error when it is missing or not writable). */
int mg_report_check(const char *path);

/* The end of a run: the table on table (NULL: none), the JSON report to
 * json_path (NULL: none), and the exit status: mg_run_exit_status(), or
 * MG_EXIT_USAGE when the report could not be written (said in one line). */
int mg_report_finish(FILE *table, const char *json_path, const struct mg_run_info *info,
                     const struct mg_task *tasks, size_t n);

/* The launcher's exit status: 0 when every task succeeded, else the status of
 * the first failing task by index. */
int mg_run_exit_status(const struct mg_task *tasks, size_t n);

/* The run's exit status: info's when set, else mg_run_exit_status(). */
int mg_run_status(const struct mg_run_info *info, const struct mg_task *tasks, size_t n);

/* The signal that stopped a run, from its description as mg_supervise
 * gives it (sigdescr_np: "Terminated"): SIGTERM, SIGINT or SIGHUP, else 0. */
int mg_stop_signal(const char *description);

/* The exit status a run ends with, pure: 128 + stop_signal when memguard was
 * stopped, whatever its tasks did; else with GNU parallel's inputs
 * parallel_status (farm/halt.h); else mg_run_exit_status(). */
int mg_run_final_status(int stop_signal, bool parallel, int parallel_status, const struct mg_task *tasks,
                        size_t n);
