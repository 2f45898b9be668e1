/* The summary table on stderr, the JSON report, the exit status. */
#include "report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memguard/json.h"
#include "memguard/log.h"
#include "memguard/metrics.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "farm/sizing.h"
#include "report/memreason.h"
#include "options.h"

int mg_task_exit_status(const struct mg_task *t)
{
	if (t->spawn_errno)
		return MG_EXIT_USAGE;
	if (t->exec_errno)
		return t->exec_errno == ENOENT ? MG_EXIT_NOTFOUND : MG_EXIT_NOEXEC;
	if (!t->exited)
		return MG_EXIT_USAGE; /* never ran, e.g. the run was stopped first */
	if (WIFEXITED(t->wait_status))
		return WEXITSTATUS(t->wait_status);
	if (WIFSIGNALED(t->wait_status))
		return 128 + WTERMSIG(t->wait_status);
	return MG_EXIT_USAGE;
}

static bool oom_killed(const struct mg_task *t)
{
	return t->events.oom_kill > 0 || t->events.oom_group_kill > 0;
}

/* Which limit the kernel enforced: the task's own memory.max counts an
 * "oom" event; a kill without one came from above, the run's cap or the node.
 * share and peak come formatted. */
static const char *oom_cause(const struct mg_task *t, const char *share, const char *peak, char *buf,
                             size_t size)
{
	char limit[MG_SIZE_STRLEN];

	if (t->events.oom == 0)
		snprintf(buf, size,
		         "memory ran out above the task (the run's budget or the node) at %s against a %s "
		         "share",
		         peak, share);
	else if (t->limit > t->share)
		snprintf(buf, size, "%s limit exceeded (a %s share)", mg_size_format(t->limit, limit), share);
	else
		snprintf(buf, size, "%s share exceeded", share);
	return buf;
}

/* What a task that failed by itself had come near, if anything: "" or " after
 * reaching ..." (memreason.c). */
static const char *near_clause(const struct mg_task *t, char *buf, size_t size)
{
	struct mg_memreason v;

	mg_memreason_judge(t, &v);
	return mg_memreason_format(&v, t->share, buf, size);
}

const char *mg_task_reason(const struct mg_task *t, char *buf, size_t size)
{
	char share[MG_SIZE_STRLEN], peak[MG_SIZE_STRLEN], cause[160], near[192];

	mg_size_format(t->share, share);
	mg_size_format(t->peak, peak);
	if (t->spawn_errno)
		snprintf(buf, size, "not started: %s", strerror(t->spawn_errno));
	else if (t->exec_errno)
		snprintf(buf, size, "cannot execute: %s", strerror(t->exec_errno));
	else if (t->state == MG_TASK_PENDING)
		snprintf(buf, size, "not started: the run was stopped");
	else if (t->killed_by == MG_KILL_WATCHDOG)
		snprintf(buf, size, "killed by memguard: RSS %s exceeded the %s share", peak, share);
	else if (t->killed_by == MG_KILL_DAEMON)
		snprintf(buf, size, "killed by memguardd: %s", t->daemon_reason);
	else if (t->killed_by == MG_KILL_GRACE)
		snprintf(buf, size, "killed by memguard: still running after the grace period");
	else if (t->killed_by == MG_KILL_SIGNAL)
		snprintf(buf, size, "killed by memguard at once on a second SIG%s",
		         sigabbrev_np(t->kill_signal) ?: "?");
	else if (oom_killed(t))
		snprintf(buf, size, "%s by the kernel: %s",
		         WIFSIGNALED(t->wait_status) ? "killed" : "a process of the task was killed",
		         oom_cause(t, share, peak, cause, sizeof(cause)));
	else if (WIFSIGNALED(t->wait_status))
		snprintf(buf, size, "killed by signal %s%s", sigabbrev_np(WTERMSIG(t->wait_status)) ?: "?",
		         near_clause(t, near, sizeof(near)));
	else if (WEXITSTATUS(t->wait_status) != 0)
		snprintf(buf, size, "failed with exit code %d%s", WEXITSTATUS(t->wait_status),
		         near_clause(t, near, sizeof(near)));
	else
		snprintf(buf, size, "ok");
	return buf;
}

static const char *status_word(const struct mg_task *t, char *buf, size_t size)
{
	if (t->spawn_errno || t->exec_errno || !t->exited)
		snprintf(buf, size, "-");
	else if (WIFSIGNALED(t->wait_status))
		snprintf(buf, size, "SIG%s", sigabbrev_np(WTERMSIG(t->wait_status)) ?: "?");
	else
		snprintf(buf, size, "exit %d", WEXITSTATUS(t->wait_status));
	return buf;
}

const char *mg_report_shown(const char *s, unsigned max, char *buf, size_t size)
{
	size_t w = 0, len = 0;

	for (unsigned chars = 0; s[len] && chars < max && w + 8 < size; chars++) {
		unsigned char c = (unsigned char)s[len];
		size_t n = mg_utf8_len(s + len);
		if (c < 0x20 || c == 0x7f) {
			w += (size_t)snprintf(buf + w, size - w, "\\x%02x", c);
			len++;
			continue;
		}
		n = n ? n : 1;
		memcpy(buf + w, s + len, n);
		w += n;
		len += n;
	}
	buf[w] = '\0';
	if (s[len] && w + 4 <= size)
		memcpy(buf + w, "...", 4);
	return buf;
}

void mg_report_table(FILE *out, const struct mg_run_info *info, const struct mg_task *tasks, size_t n)
{
	char share[MG_SIZE_STRLEN], peak[MG_SIZE_STRLEN], st[32], why[256], param[MG_TABLE_PARAM_MAX * 4 + 8];
	size_t failed = 0;

	for (size_t i = 0; i < n; i++)
		failed += mg_task_exit_status(&tasks[i]) != 0;
	bool placed = info->placed_by && *info->placed_by;
	bool noted = info->runtime_note && *info->runtime_note;

	fprintf(out, "memguard: %zu task%s, %u at once, %s share %s, runtime %s%s%s%s, %s mode (%s%s%s)\n", n,
	        n == 1 ? "" : "s", info->parallel, info->shares ?: "strict",
	        mg_size_format(info->share, share), mg_runtime_name(info->runtime), noted ? " (" : "",
	        noted ? info->runtime_note : "", noted ? ")" : "", info->mode, info->where,
	        placed ? "; " : "", placed ? info->placed_by : "");
	bool brief = n > MG_TABLE_FULL_MAX;
	if (!brief || failed)
		fprintf(out, "%6s  %-10s %21s  %3s  %8s  %s\n", "task", "status", "peak / share", "oom",
		        "seconds", "reason");
	for (size_t i = 0; i < n; i++) {
		const struct mg_task *t = &tasks[i];
		char ps[2 * MG_SIZE_STRLEN + 4];
		double secs = t->end_usec > t->start_usec ? (double)(t->end_usec - t->start_usec) / 1e6 : 0.0;

		if (brief && mg_task_exit_status(t) == 0)
			continue;
		/* "~": the largest sample, not the kernel's own peak. */
		snprintf(ps, sizeof(ps), "%s%s / %s", t->peak_sampled ? "~" : "",
		         t->peak_known ? mg_size_format(t->peak, peak) : "?",
		         mg_size_format(t->share, share));
		fprintf(out, "%6u  %-10s %21s  %3" PRIu64 "  %8.1f  %s%s%s\n", t->index + 1,
		        status_word(t, st, sizeof(st)), ps, t->events.oom_kill, secs,
		        mg_task_reason(t, why, sizeof(why)), t->param ? "  | " : "",
		        t->param ? mg_report_shown(t->param, MG_TABLE_PARAM_MAX, param, sizeof(param)) : "");
	}
	if (brief)
		fprintf(out,
		        "memguard: %zu task%s that succeeded not shown (every row is in --report and "
		        "--joblog)\n",
		        n - failed, n - failed == 1 ? "" : "s");
	fprintf(out, "memguard: %zu succeeded, %zu failed%s%s\n", n - failed, failed,
	        info->signal_received ? "; received " : "",
	        info->signal_received ? info->signal_received : "");
	char advice[768];
	if (info->advise && *mg_report_sizing(info, tasks, n, advice, sizeof(advice)))
		fprintf(out, "memguard: %s\n", advice);
}

const char *mg_report_sizing(const struct mg_run_info *info, const struct mg_task *tasks, size_t n, char *buf,
                             size_t size)
{
	_cleanup_free_ uint64_t *peaks = calloc(n ? n : 1, sizeof(*peaks));
	char med[MG_SIZE_STRLEN], p95[MG_SIZE_STRLEN], max[MG_SIZE_STRLEN], share[MG_SIZE_STRLEN],
	        suggest[MG_SIZE_STRLEN], budget[MG_SIZE_STRLEN], as[MG_SIZE_STRLEN], rss[MG_SIZE_STRLEN],
	        address[3 * MG_SIZE_STRLEN + 96] = "", lift[MG_SIZE_STRLEN + 48] = "", cpus[48] = "";
	uint64_t as_max = 0;
	/* More at once than CPUs only share them; the run's own -n may have been more on purpose. */
	unsigned max_n = info->cpus ? (info->cpus > info->parallel ? info->cpus : info->parallel) : 0;
	struct mg_sizing z;
	size_t k = 0;

	buf[0] = '\0';
	for (size_t i = 0; peaks && i < n; i++) {
		const struct mg_task *t = &tasks[i];
		if (mg_task_exit_status(t) != 0 || !t->peak_known)
			continue;
		peaks[k++] = t->peak;
		/* Its RLIMIT_AS is its share (CPython, PyPy, R; strict or degraded):
		 * a smaller share is a smaller address space. */
		if (t->rlimit_as && t->rlimit_as == t->share && t->as_peak_known && t->as_peak > as_max)
			as_max = t->as_peak;
	}
	if (!peaks || mg_sizing_advise(peaks, k, info->budget, max_n, &z) < 0)
		return buf;
	uint64_t resident = z.suggest_share;
	/* The advice must fit under RLIMIT_AS (B4: from resident memory alone it
	 * was below what the interpreter's address space needs, and every task
	 * of the next run failed with MemoryError). */
	if (mg_sizing_share(as_max, info->budget) > z.suggest_share) {
		z.suggest_share = mg_sizing_share(as_max, info->budget);
		uint64_t fit = info->budget / z.suggest_share;
		z.suggest_fit = fit == 0 ? 1 : fit > UINT32_MAX ? UINT32_MAX : (unsigned)fit;
		z.suggest_n = max_n && z.suggest_fit > max_n ? max_n : z.suggest_fit;
		snprintf(address, sizeof(address),
		         "; their address space reached %s under RLIMIT_AS, which is the share",
		         mg_size_format(as_max, as));
		snprintf(lift, sizeof(lift), " (%s with --rlimit-as off)", mg_size_format(resident, rss));
	}
	if (z.suggest_n < z.suggest_fit && max_n == info->cpus)
		snprintf(cpus, sizeof(cpus), ", as many as the %u CPUs", max_n);
	else if (z.suggest_n < z.suggest_fit)
		snprintf(cpus, sizeof(cpus), ", as many as this run had at once");
	snprintf(buf, size,
	         "sizing: the peaks of the %zu task%s that succeeded: median %s, 95th percentile %s, max %s, "
	         "against a %s share%s; --mem-per-task %s would fit them all with %u%% to spare%s, and %u "
	         "such "
	         "task%s fit the %s budget (-n %u%s)",
	         z.n, z.n == 1 ? "" : "s", mg_size_format(z.median, med), mg_size_format(z.p95, p95),
	         mg_size_format(z.max, max), mg_size_format(info->share, share), address,
	         mg_size_format(z.suggest_share, suggest), MG_SIZING_HEADROOM_PERCENT, lift, z.suggest_fit,
	         z.suggest_fit == 1 ? "" : "s", mg_size_format(info->budget, budget), z.suggest_n, cpus);
	return buf;
}

/* The report's temporary file (mg_atomic_open) as a stream; the name comes
 * back in tmp. */
static FILE *open_temp(const char *path, char *tmp, size_t size)
{
	int fd = mg_atomic_open(path, 0666, tmp, size);

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int saved = errno;
		close(fd);
		unlink(tmp);
		errno = saved;
	}
	return f;
}

static void json_u64_or_null(FILE *f, const char *key, bool known, uint64_t value)
{
	if (known)
		fprintf(f, "\"%s\":%" PRIu64 ",", key, value);
	else
		fprintf(f, "\"%s\":null,", key);
}

/* What the verdict on a failed task rests on (memreason.c), and the verdict:
 * which limit it came near and how far, or null. */
static void json_memory(FILE *f, const struct mg_task *t)
{
	struct mg_memreason v;

	json_u64_or_null(f, "rlimit_as_bytes", t->rlimit_as > 0, t->rlimit_as);
	json_u64_or_null(f, "address_space_peak_bytes", t->as_peak_known, t->as_peak);
	json_u64_or_null(f, "memory_max_bytes", t->limit > 0 && t->limit != MG_SIZE_UNLIMITED, t->limit);
	fprintf(f, "\"memory_max_events\":%" PRIu64 ",", t->events.max);
	if (mg_memreason_judge(t, &v)) {
		fprintf(f, "\"near_limit\":\"%s\",", mg_near_limit_name(v.near));
		json_u64_or_null(f, "near_limit_percent", v.peak_known, v.percent);
	} else {
		fputs("\"near_limit\":null,\"near_limit_percent\":null,", f);
	}
}

int mg_report_json(const char *path, const struct mg_run_info *info, const struct mg_task *tasks, size_t n)
{
	char tmp[PATH_MAX + 32], why[256];
	FILE *f = open_temp(path, tmp, sizeof(tmp));

	if (!f)
		return -errno;
	fprintf(f, "{\"mode\":");
	mg_json_string(f, info->mode);
	fprintf(f, ",\"shares\":");
	mg_json_string(f, info->shares ?: "strict");
	fprintf(f, ",\"where\":");
	mg_json_string(f, info->where);
	fprintf(f, ",\"placed_by\":");
	if (info->placed_by && *info->placed_by)
		mg_json_string(f, info->placed_by);
	else
		fputs("null", f);
	fprintf(f,
	        ",\"share_bytes\":%" PRIu64 ",\"budget_bytes\":%" PRIu64 ",\"run_max_bytes\":", info->share,
	        info->budget);
	if (info->run_capped)
		fprintf(f, "%" PRIu64, info->budget);
	else
		fputs("null", f);
	fprintf(f, ",\"runtime\":\"%s\",\"parallel\":%u,\"exit_status\":%d,\"tasks\":[",
	        mg_runtime_name(info->runtime), info->parallel, mg_run_status(info, tasks, n));
	for (size_t i = 0; i < n; i++) {
		const struct mg_task *t = &tasks[i];
		bool exited = t->exited && WIFEXITED(t->wait_status);
		bool signaled = t->exited && WIFSIGNALED(t->wait_status);

		fprintf(f, "%s\n{\"index\":%u,\"param\":", i ? "," : "", t->index + 1);
		if (t->param)
			mg_json_string(f, t->param);
		else
			fputs("null", f);
		fprintf(f, ",\"status\":%d,", mg_task_exit_status(t));
		if (exited)
			fprintf(f, "\"exit_code\":%d,\"signal\":null,", WEXITSTATUS(t->wait_status));
		else if (signaled)
			fprintf(f, "\"exit_code\":null,\"signal\":\"SIG%s\",",
			        sigabbrev_np(WTERMSIG(t->wait_status)) ?: "?");
		else
			fputs("\"exit_code\":null,\"signal\":null,", f);
		fprintf(f, "\"share_bytes\":%" PRIu64 ",", t->share);
		if (t->peak_known)
			fprintf(f, "\"peak_bytes\":%" PRIu64 ",\"peak_from\":\"%s\",", t->peak,
			        t->peak_sampled ? "sampled" : "memory.peak");
		else
			fputs("\"peak_bytes\":null,\"peak_from\":null,", f);
		json_memory(f, t);
		fprintf(f, "\"oom_kills\":%" PRIu64 ",\"seconds\":%.3f,\"reason\":", t->events.oom_kill,
		        t->end_usec > t->start_usec ? (double)(t->end_usec - t->start_usec) / 1e6 : 0.0);
		mg_json_string(f, mg_task_reason(t, why, sizeof(why)));
		/* Under the steps backend: the Slurm step it last ran as, for sacct. */
		if (t->step[0]) {
			fputs(",\"slurm_step\":", f);
			mg_json_string(f, t->step);
			fputs(",\"host\":", f);
			mg_json_string(f, t->host ? t->host : "");
		}
		fputc('}', f);
	}
	fputs("\n]}\n", f);
	bool write_failed = ferror(f);
	int r = fclose(f) != 0 ? -errno : write_failed ? -EIO : 0;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

int mg_report_check(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!*path)
		return -ENOENT;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0)
		return -errno;
	return 0;
}

int mg_report_finish(FILE *table, const char *json_path, const struct mg_run_info *info,
                     const struct mg_task *tasks, size_t n)
{
	int r;

	if (table)
		mg_report_table(table, info, tasks, n);
	if (json_path && (r = mg_report_json(json_path, info, tasks, n)) < 0) {
		mg_log_errno(LOG_ERR, r, "cannot write the report %s: %m", json_path);
		return MG_EXIT_USAGE;
	}
	return mg_run_status(info, tasks, n);
}

int mg_run_status(const struct mg_run_info *info, const struct mg_task *tasks, size_t n)
{
	return info->status_set ? info->exit_status : mg_run_exit_status(tasks, n);
}

int mg_stop_signal(const char *description)
{
	static const int stops[] = {SIGTERM, SIGINT, SIGHUP};

	for (size_t i = 0; description && i < MG_ARRAY_SIZE(stops); i++)
		if (strcmp(description, sigdescr_np(stops[i])) == 0)
			return stops[i];
	return 0;
}

int mg_run_final_status(int stop_signal, bool parallel, int parallel_status, const struct mg_task *tasks,
                        size_t n)
{
	if (stop_signal)
		return 128 + stop_signal;
	return parallel ? parallel_status : mg_run_exit_status(tasks, n);
}

int mg_run_exit_status(const struct mg_task *tasks, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int s = mg_task_exit_status(&tasks[i]);
		if (s != 0)
			return s;
	}
	return 0;
}
