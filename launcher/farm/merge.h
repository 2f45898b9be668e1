/* memguard report FILE...: the joblogs of a sweep (one per node, or one
 * per run) merged into one summary. Summarising is pure; reading and
 * printing are the report's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "farm/joblog.h"

/* One task across every joblog: its last attempt, and whether any was ok. */
struct mg_merged_task {
	const struct mg_joblog_entry *last; /* the highest attempt (the ok one when there is one) */
	unsigned attempts;                  /* lines it has */
	bool ok;
	bool conflict; /* two lines of one Seq with different Command texts */
};

struct mg_merged {
	struct mg_merged_task *tasks; /* by seq - 1, ntasks of them; a seq without lines has last NULL */
	size_t ntasks;                /* the highest seq */
	size_t seen, ok, failed;      /* tasks with lines; done; failed (not ok) */
	size_t retries;               /* attempts beyond each task's first */
	size_t memory_kills;          /* attempts killed for memory */
	size_t conflicts;
};

/* Groups entries by Seq. Returns 0, or -ENOMEM. Free with mg_merge_done. */
int mg_merge_joblogs(const struct mg_joblog_entry *e, size_t n, struct mg_merged *ret);
void mg_merge_done(struct mg_merged *m);

/* `memguard report [--svg FILE] JOBLOG...`: reads each joblog, prints the
 * merged summary on out (failed tasks first, one row each; the sums; the
 * sizing advice of the ok attempts), with --svg draws the peaks into FILE
 * (report/svg.h), and returns the exit status: 0 when every task seen is
 * done, 1 when some failed, 125 when a file cannot be read or parsed, or
 * the picture cannot be written (said). */
int mg_report_joblogs_main(int argc, char **argv, FILE *out);
