#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memguard/units.h"
#include "memguard/util.h"
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

const char *mg_task_reason(const struct mg_task *t, char *buf, size_t size)
{
	char share[MG_SIZE_STRLEN], peak[MG_SIZE_STRLEN], cause[160];

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
	else if (oom_killed(t))
		snprintf(buf, size, "%s by the kernel: %s",
		         WIFSIGNALED(t->wait_status) ? "killed" : "a process of the task was killed",
		         oom_cause(t, share, peak, cause, sizeof(cause)));
	else if (WIFSIGNALED(t->wait_status))
		snprintf(buf, size, "killed by signal %s", sigabbrev_np(WTERMSIG(t->wait_status)) ?: "?");
	else if (WEXITSTATUS(t->wait_status) != 0)
		snprintf(buf, size, "failed with exit code %d", WEXITSTATUS(t->wait_status));
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

void mg_report_table(FILE *out, const struct mg_run_info *info, const struct mg_task *tasks, size_t n)
{
	char share[MG_SIZE_STRLEN], peak[MG_SIZE_STRLEN], st[32], why[256];
	size_t failed = 0;

	for (size_t i = 0; i < n; i++)
		failed += mg_task_exit_status(&tasks[i]) != 0;
	bool placed = info->placed_by && *info->placed_by;

	fprintf(out, "memguard: %zu task%s, %u at once, %s share %s, runtime %s, %s mode (%s%s%s)\n", n,
	        n == 1 ? "" : "s", info->parallel, info->shares ?: "strict",
	        mg_size_format(info->share, share), mg_runtime_name(info->runtime), info->mode, info->where,
	        placed ? "; " : "", placed ? info->placed_by : "");
	fprintf(out, "%6s  %-10s %21s  %3s  %8s  %s\n", "task", "status", "peak / share", "oom", "seconds",
	        "reason");
	for (size_t i = 0; i < n; i++) {
		const struct mg_task *t = &tasks[i];
		char ps[2 * MG_SIZE_STRLEN + 4];
		double secs = t->end_usec > t->start_usec ? (double)(t->end_usec - t->start_usec) / 1e6 : 0.0;

		snprintf(ps, sizeof(ps), "%s / %s", t->peak_known ? mg_size_format(t->peak, peak) : "?",
		         mg_size_format(t->share, share));
		fprintf(out, "%6u  %-10s %21s  %3" PRIu64 "  %8.1f  %s%s%s\n", t->index,
		        status_word(t, st, sizeof(st)), ps, t->events.oom_kill, secs,
		        mg_task_reason(t, why, sizeof(why)), t->param ? "  | " : "",
		        t->param ? t->param : "");
	}
	fprintf(out, "memguard: %zu succeeded, %zu failed%s%s\n", n - failed, failed,
	        info->signal_received ? "; received " : "",
	        info->signal_received ? info->signal_received : "");
}

/* Length of the valid UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n = *p >= 0xf0 && *p <= 0xf4 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 && *p <= 0xdf ? 2 : 0;

	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* No overlong forms, no surrogates, nothing above U+10FFFF. */
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) || (p[0] == 0xf0 && p[1] < 0x90) ||
	    (p[0] == 0xf4 && p[1] > 0x8f))
		return 0;
	return n;
}

/* Task-file lines may be in any encoding: invalid bytes become U+FFFD so the
 * report stays valid JSON. */
static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		size_t n;
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else if (*p < 0x80)
			fputc(*p, f);
		else if ((n = utf8_len(p)) > 0)
			fwrite(p, 1, n, f), p += n - 1;
		else
			fputs("\\ufffd", f);
	}
	fputc('"', f);
}

int mg_report_json(const char *path, const struct mg_run_info *info, const struct mg_task *tasks, size_t n)
{
	char tmp[4096], why[256];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "{\"mode\":");
	json_string(f, info->mode);
	fprintf(f, ",\"shares\":");
	json_string(f, info->shares ?: "strict");
	fprintf(f, ",\"where\":");
	json_string(f, info->where);
	fprintf(f, ",\"placed_by\":");
	if (info->placed_by && *info->placed_by)
		json_string(f, info->placed_by);
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
	        mg_runtime_name(info->runtime), info->parallel, mg_run_exit_status(tasks, n));
	for (size_t i = 0; i < n; i++) {
		const struct mg_task *t = &tasks[i];
		bool exited = t->exited && WIFEXITED(t->wait_status);
		bool signaled = t->exited && WIFSIGNALED(t->wait_status);

		fprintf(f, "%s\n{\"index\":%u,\"param\":", i ? "," : "", t->index);
		if (t->param)
			json_string(f, t->param);
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
			fprintf(f, "\"peak_bytes\":%" PRIu64 ",", t->peak);
		else
			fputs("\"peak_bytes\":null,", f);
		fprintf(f, "\"oom_kills\":%" PRIu64 ",\"seconds\":%.3f,\"reason\":", t->events.oom_kill,
		        t->end_usec > t->start_usec ? (double)(t->end_usec - t->start_usec) / 1e6 : 0.0);
		json_string(f, mg_task_reason(t, why, sizeof(why)));
		fputc('}', f);
	}
	fputs("\n]}\n", f);
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		int r = -errno;
		unlink(tmp);
		return r;
	}
	return 0;
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
