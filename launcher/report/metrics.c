/* --metrics FILE: the end of a run in Prometheus' text format, from the
 * records the summary and the JSON report are made of. */
#include "report/metrics.h"

#include <inttypes.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include "memguard/log.h"
#include "options.h"
#include "runtime/runtime.h"

const char *mg_task_outcome(const struct mg_task *t)
{
	static const char *const by_killer[] = {
	        [MG_KILL_KERNEL_OOM] = "oom_killed",          [MG_KILL_GRACE] = "killed_after_grace",
	        [MG_KILL_SIGNAL] = "killed_on_second_signal", [MG_KILL_WATCHDOG] = "killed_by_watchdog",
	        [MG_KILL_DAEMON] = "killed_by_memguardd",
	};

	if (t->spawn_errno || t->state == MG_TASK_PENDING)
		return "not_started";
	if (t->exec_errno)
		return "cannot_execute";
	if (t->killed_by > MG_KILL_NONE && (size_t)t->killed_by < sizeof(by_killer) / sizeof(*by_killer))
		return by_killer[t->killed_by];
	if (t->events.oom_kill > 0 || t->events.oom_group_kill > 0)
		return "oom_killed";
	if (!t->exited)
		return "not_started";
	if (WIFSIGNALED(t->wait_status))
		return "killed_by_signal";
	return mg_task_exit_status(t) == 0 ? "ok" : "failed";
}

static void gauge(struct mg_metrics *out, const char *name, const char *help, uint64_t value)
{
	mg_metrics_family(out, name, "gauge", help);
	mg_metrics_sample_u64(out, name, NULL, value);
}

/* One family with a sample per task, labelled task="<number>": from 1, as
 * the summary, the joblog's Seq and {#} count. */
static void per_task(struct mg_metrics *out, const char *name, const char *type, const char *help,
                     const struct mg_task *tasks, size_t n, double (*value)(const struct mg_task *))
{
	mg_metrics_family(out, name, type, help);
	for (size_t i = 0; i < n; i++) {
		double v = value(&tasks[i]);
		char index[16];
		snprintf(index, sizeof(index), "%u", tasks[i].index + 1);
		const char *labels[] = {"task", index, NULL};
		if (v >= 0)
			mg_metrics_sample(out, name, labels, v);
	}
}

/* The values per task; a negative one is left out (a peak not known). */
static double task_share(const struct mg_task *t)
{
	return (double)t->share;
}
static double task_peak(const struct mg_task *t)
{
	return t->peak_known ? (double)t->peak : -1;
}
static double task_seconds(const struct mg_task *t)
{
	return t->end_usec > t->start_usec ? (double)(t->end_usec - t->start_usec) / 1e6 : 0.0;
}
static double task_status(const struct mg_task *t)
{
	return mg_task_exit_status(t);
}
static double task_oom_kills(const struct mg_task *t)
{
	return (double)t->events.oom_kill;
}

void mg_run_metrics_format(const struct mg_run_info *info, const struct mg_task *tasks, size_t n,
                           uint64_t end_time_sec, struct mg_metrics *out)
{
	const char *run[] = {"mode",    info->mode,
	                     "shares",  info->shares ?: "strict",
	                     "runtime", mg_runtime_name(info->runtime),
	                     "version", MEMGUARD_VERSION,
	                     NULL};

	mg_metrics_reset(out);
	mg_metrics_family(out, "memguard_run_info", "gauge",
	                  "The run: cgroup or degraded mode, strict or elastic shares, the runtime, "
	                  "memguard's version.");
	mg_metrics_sample_u64(out, "memguard_run_info", run, 1);
	gauge(out, "memguard_run_end_time_seconds", "When the run ended, seconds since the epoch.",
	      end_time_sec);
	gauge(out, "memguard_run_share_bytes", "Each task's share.", info->share);
	gauge(out, "memguard_run_budget_bytes", "What the tasks may use together.", info->budget);
	gauge(out, "memguard_run_tasks", "Tasks in the run.", n);
	gauge(out, "memguard_run_parallel", "Tasks at once.", info->parallel);
	gauge(out, "memguard_run_exit_status", "memguard's exit status for the run.",
	      (uint64_t)mg_run_status(info, tasks, n));
	per_task(out, "memguard_task_share_bytes", "gauge", "The task's share.", tasks, n, task_share);
	per_task(out, "memguard_task_peak_bytes", "gauge",
	         "The task's peak memory (memory.peak, or the largest memory.current or RSS sampled); absent "
	         "when "
	         "unknown.",
	         tasks, n, task_peak);
	per_task(out, "memguard_task_seconds", "gauge", "How long the task ran.", tasks, n, task_seconds);
	per_task(out, "memguard_task_exit_status", "gauge",
	         "The task's exit status: its exit code, 128+signal, 126/127 when it could not run, 125 "
	         "when it did not start.",
	         tasks, n, task_status);
	per_task(out, "memguard_task_oom_kills_total", "counter", "Kernel OOM kills in the task's cgroup.",
	         tasks, n, task_oom_kills);
	mg_metrics_family(out, "memguard_task_outcome", "gauge",
	                  "1 for each task, its outcome in the label (the summary says it in words).");
	for (size_t i = 0; i < n; i++) {
		char index[16];
		snprintf(index, sizeof(index), "%u", tasks[i].index + 1);
		const char *labels[] = {"task", index, "outcome", mg_task_outcome(&tasks[i]), NULL};
		mg_metrics_sample_u64(out, "memguard_task_outcome", labels, 1);
	}
}

int mg_run_metrics_write(const char *path, const struct mg_run_info *info, const struct mg_task *tasks,
                         size_t n)
{
	struct mg_metrics m = MG_METRICS_INIT;
	int r;

	mg_run_metrics_format(info, tasks, n, (uint64_t)time(NULL), &m);
	r = mg_metrics_write(&m, path, false);
	mg_metrics_done(&m);
	return r;
}

int mg_run_metrics_finish(const char *path, const struct mg_run_info *info, const struct mg_task *tasks,
                          size_t n, int status)
{
	int r;

	if (path && (r = mg_run_metrics_write(path, info, tasks, n)) < 0) {
		mg_log_errno(LOG_ERR, r, "cannot write the metrics file %s: %m", path);
		return MG_EXIT_USAGE;
	}
	return status;
}
