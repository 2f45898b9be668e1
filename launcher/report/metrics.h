/* The run's metrics for Prometheus (--metrics FILE): the run's share and
 * budget and each task's peak, share, time and outcome, in the text format
 * of node_exporter's textfile collector. */
#pragma once

#include <stddef.h>

#include "memguard/metrics.h"
#include "report/report.h"
#include "task.h"

/* A task's outcome in one word, for the outcome label: ok, failed,
 * killed_by_signal, oom_killed, killed_by_memguardd, killed_by_watchdog,
 * killed_after_grace, killed_on_second_signal, cannot_execute or
 * not_started. mg_task_reason() says the same in words. */
const char *mg_task_outcome(const struct mg_task *t);

/* The run's metrics into out (reset first); out->error says whether it
 * failed. end_time_sec is when the run ended (seconds since the epoch). */
void mg_run_metrics_format(const struct mg_run_info *info, const struct mg_task *tasks, size_t n,
                           uint64_t end_time_sec, struct mg_metrics *out);

/* Formats and writes them to path atomically (mg_metrics_write, mode 0644).
 * Returns 0 or -errno. */
int mg_run_metrics_write(const char *path, const struct mg_run_info *info, const struct mg_task *tasks,
                         size_t n);

/* The end of a run after mg_report_finish: writes the metrics to path (NULL:
 * none) and returns status, or MG_EXIT_USAGE when they could not be written
 * (said in one line). */
int mg_run_metrics_finish(const char *path, const struct mg_run_info *info, const struct mg_task *tasks,
                          size_t n, int status);
