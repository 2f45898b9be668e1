/* memguard --metrics (launcher/report/metrics.c): each task's outcome in a word,
 * the run's text, the exit status when it cannot be written, and promtool's
 * verdict on what both programs write. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "guard/metrics.h"
#include "fake_tree.h"
#include "memguard/util.h"
#include "report/metrics.h"
#include "options.h"

#define MiB (1ull << 20)

static struct mg_task done_task(unsigned index, int wait_status)
{
	return (struct mg_task){.index = index,
	                        .state = MG_TASK_DONE,
	                        .exited = true,
	                        .wait_status = wait_status,
	                        .share = 512 * MiB,
	                        .peak = 300 * MiB,
	                        .peak_known = true,
	                        .start_usec = 1000000,
	                        .end_usec = 3500000};
}

struct outcome_case {
	const char *what;
	struct mg_task t;
	const char *want;
};

static void outcomes(void **state)
{
	struct outcome_case cases[] = {
	        {"exit 0", done_task(0, 0), "ok"},
	        {"exit 3", done_task(0, 3 << 8), "failed"},
	        {"SIGSEGV", done_task(0, SIGSEGV), "killed_by_signal"},
	        {"kernel OOM, task killed", done_task(0, SIGKILL), "oom_killed"},
	        {"kernel OOM, a child killed", done_task(0, 1 << 8), "oom_killed"},
	        {"memguardd", done_task(0, SIGKILL), "killed_by_memguardd"},
	        {"watchdog", done_task(0, SIGKILL), "killed_by_watchdog"},
	        {"grace", done_task(0, SIGKILL), "killed_after_grace"},
	        {"second signal", done_task(0, SIGKILL), "killed_on_second_signal"},
	        {"cannot execute", done_task(0, 126 << 8), "cannot_execute"},
	        {"not created", {.index = 1, .spawn_errno = EAGAIN}, "not_started"},
	        {"never started", {.index = 1, .state = MG_TASK_PENDING}, "not_started"},
	};
	cases[3].t.events.oom_kill = 1;
	cases[4].t.events.oom_group_kill = 1;
	cases[5].t.killed_by = MG_KILL_DAEMON;
	cases[6].t.killed_by = MG_KILL_WATCHDOG;
	cases[7].t.killed_by = MG_KILL_GRACE;
	cases[8].t.killed_by = MG_KILL_SIGNAL;
	cases[9].t.exec_errno = EACCES;

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const char *got = mg_task_outcome(&cases[i].t);
		if (strcmp(got, cases[i].want) != 0)
			print_error("%s: %s\n", cases[i].what, got);
		assert_string_equal(got, cases[i].want);
	}
}

static const struct mg_run_info run_info = {
        .mode = "cgroup",
        .shares = "elastic",
        .where = "memguard/run-1",
        .share = 512 * MiB,
        .budget = 2048 * MiB,
        .runtime = MG_RUNTIME_CPYTHON,
        .parallel = 4,
};

/* Three tasks: ok, killed by memguardd, and one whose peak is unknown. */
static void three_tasks(struct mg_task t[3])
{
	t[0] = done_task(0, 0);
	t[1] = done_task(1, SIGKILL);
	t[1].killed_by = MG_KILL_DAEMON;
	snprintf(t[1].daemon_reason, sizeof(t[1].daemon_reason), "1.9GiB against a 512MiB share");
	t[2] = done_task(2, 0);
	t[2].peak_known = false;
	t[2].events.oom_kill = 0;
}

static void the_text(void **state)
{
	struct mg_task t[3];
	struct mg_metrics out = MG_METRICS_INIT;
	static const char *const want[] = {
	        "# TYPE memguard_run_info gauge",
	        "memguard_run_info{mode=\"cgroup\",shares=\"elastic\",runtime=\"cpython\",version="
	        "\"" MEMGUARD_VERSION "\"} 1",
	        "memguard_run_end_time_seconds 1795000000",
	        "memguard_run_share_bytes 536870912",
	        "memguard_run_budget_bytes 2147483648",
	        "memguard_run_tasks 3",
	        "memguard_run_parallel 4",
	        "memguard_run_exit_status 137",
	        "memguard_task_share_bytes{task=\"3\"} 536870912",
	        "memguard_task_peak_bytes{task=\"1\"} 314572800",
	        "memguard_task_peak_bytes{task=\"2\"} 314572800",
	        "memguard_task_seconds{task=\"2\"} 2.5",
	        "memguard_task_exit_status{task=\"1\"} 0",
	        "memguard_task_exit_status{task=\"2\"} 137",
	        "# TYPE memguard_task_oom_kills_total counter",
	        "memguard_task_oom_kills_total{task=\"3\"} 0",
	        "memguard_task_outcome{task=\"1\",outcome=\"ok\"} 1",
	        "memguard_task_outcome{task=\"2\",outcome=\"killed_by_memguardd\"} 1",
	        "memguard_task_outcome{task=\"3\",outcome=\"ok\"} 1",
	        NULL,
	};

	three_tasks(t);
	mg_run_metrics_format(&run_info, t, 3, 1795000000, &out);
	assert_int_equal(out.error, 0);
	for (size_t i = 0; want[i]; i++) {
		char line[256];
		snprintf(line, sizeof(line), "\n%s\n", want[i]);
		if (!strstr(out.buf, line))
			print_error("missing \"%s\" in:\n%s", want[i], out.buf);
		assert_non_null(strstr(out.buf, line));
	}
	/* An unknown peak is left out, not written as 0. */
	assert_null(strstr(out.buf, "memguard_task_peak_bytes{task=\"3\"}"));
	mg_metrics_done(&out);
}

/* A metrics file that cannot be written: one line, and 125 whatever the
 * tasks did; one that can: the tasks' status. */
static void finish(void **state)
{
	struct fake_tree *tree = *state;
	struct mg_task t[3];
	char path[PATH_MAX + 32];

	three_tasks(t);
	snprintf(path, sizeof(path), "%s/run.prom", tree->path);
	assert_int_equal(mg_run_metrics_finish(NULL, &run_info, t, 3, 137), 137);
	assert_int_equal(mg_run_metrics_finish(path, &run_info, t, 3, 137), 137);
	assert_true(ft_exists(tree->fd, "run.prom"));
	snprintf(path, sizeof(path), "%s/missing/run.prom", tree->path);
	assert_int_equal(mg_run_metrics_finish(path, &run_info, t, 3, 0), MG_EXIT_USAGE);
	assert_int_equal(mg_run_metrics_write(path, &run_info, t, 3), -ENOENT);
}

/* promtool check metrics < file: exit 0 and nothing said (no lint either). */
static void assert_promtool_accepts(const struct fake_tree *tree, const char *name, const char *text)
{
	char path[PATH_MAX + 64], cmd[PATH_MAX + 128], said[4096] = "";

	snprintf(path, sizeof(path), "%s/%s", tree->path, name);
	ft_write(tree->fd, name, text);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' 2>&1", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(said, 1, sizeof(said) - 1, p);
	said[n] = '\0';
	int status = pclose(p);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) == 127)
		fail_msg("promtool cannot run (Debian package prometheus; scripts/deps.sh test): %s", said);
	if (WEXITSTATUS(status) != 0 || n != 0)
		print_error("promtool on %s: exit %d: %s\n--- %s:\n%s", name, WEXITSTATUS(status), said, name,
		            text);
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(n, 0);
}

static void promtool_accepts_both(void **state)
{
	struct fake_tree *tree = *state;
	struct mg_task t[12];
	struct mg_metrics out = MG_METRICS_INIT;
	struct mg_daemon_metrics m = {.start_time_sec = 1795000000, .guarded = 3, .mem_available = 1 << 30};

	/* The launcher: every outcome there is. */
	three_tasks(t);
	for (unsigned i = 3; i < MG_ARRAY_SIZE(t); i++)
		t[i] = done_task(i, (int)i << 8);
	t[3].exec_errno = ENOENT;
	t[4] = (struct mg_task){.index = 4, .state = MG_TASK_PENDING};
	t[5].killed_by = MG_KILL_WATCHDOG;
	t[6].killed_by = MG_KILL_GRACE;
	t[7].killed_by = MG_KILL_SIGNAL;
	t[8].events.oom_kill = 2;
	t[9].wait_status = SIGTERM;
	mg_run_metrics_format(&run_info, t, MG_ARRAY_SIZE(t), 1795000000, &out);
	assert_int_equal(out.error, 0);
	assert_promtool_accepts(tree, "run.prom", out.buf);

	/* The daemon, with every counter and the kill time. */
	m.kills[MG_SHORT_PRESSURE] = 2;
	m.fences[MG_SHORT_FALLING] = 1;
	m.dry_run_kills[MG_SHORT_AVAILABLE_MIN] = 1;
	m.last_freed_usec = 40000;
	m.degraded = true;
	mg_daemon_metrics_format(&m, &out);
	assert_int_equal(out.error, 0);
	assert_promtool_accepts(tree, "memguardd.prom", out.buf);

	/* The writer itself: hostile label values and help text, odd numbers. */
	const char *labels[] = {"path", "a\\b\"c\nd {x=\"1\"} # not a comment", "empty", "", NULL};
	mg_metrics_reset(&out);
	mg_metrics_family(&out, "x_seconds", "gauge", "Help with \\ and a\nnewline and \"quotes\".");
	mg_metrics_sample(&out, "x_seconds", labels, 0.1);
	mg_metrics_sample(&out, "x_seconds", NULL, -1e-300);
	mg_metrics_family(&out, "y_total", "counter", "A counter.");
	mg_metrics_sample_u64(&out, "y_total", NULL, UINT64_MAX);
	mg_metrics_family(&out, "z", "gauge", "Not a number, and infinities.");
	const char *a[] = {"v", "nan", NULL}, *b[] = {"v", "inf", NULL}, *c[] = {"v", "-inf", NULL};
	mg_metrics_sample(&out, "z", a, NAN);
	mg_metrics_sample(&out, "z", b, INFINITY);
	mg_metrics_sample(&out, "z", c, -INFINITY);
	assert_int_equal(out.error, 0);
	assert_promtool_accepts(tree, "hostile.prom", out.buf);
	mg_metrics_done(&out);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, ft_setup, ft_teardown)
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(outcomes),
	        cmocka_unit_test(the_text),
	        T(finish),
	        T(promtool_accepts_both),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
