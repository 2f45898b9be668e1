/* The run's summary: mg_task_exit_status, mg_run_exit_status, mg_task_reason,
 * mg_report_table and mg_report_json. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_tree.h"
#include "memguard/util.h"
#include "options.h"
#include "report/report.h"
#include "task.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* --- tasks built by hand --- */

static struct mg_task base_task(unsigned index)
{
	struct mg_task t = {
	        .index = index,
	        .state = MG_TASK_DONE,
	        .pid = (pid_t)(1000 + index),
	        .cgfd = -1,
	        .exited = true,
	        .share = 2 * GiB,
	        .peak = 1536 * MiB,
	        .peak_known = true,
	        .start_usec = 1000000,
	        .end_usec = 3500000,
	};
	return t;
}

static struct mg_task exited_task(unsigned index, int code)
{
	struct mg_task t = base_task(index);
	t.wait_status = W_EXITCODE(code, 0);
	return t;
}

static struct mg_task signaled_task(unsigned index, int sig)
{
	struct mg_task t = base_task(index);
	t.wait_status = sig; /* what waitpid() reports for a death by sig, without a core */
	return t;
}

static struct mg_task oom_task(unsigned index)
{
	struct mg_task t = signaled_task(index, SIGKILL);
	t.killed_by = MG_KILL_KERNEL_OOM;
	t.events.oom = 1;
	t.events.oom_kill = 1;
	t.events.max = 12;
	t.peak = 2 * GiB;
	return t;
}

static struct mg_task exec_failed_task(unsigned index, int err)
{
	struct mg_task t = base_task(index);
	/* The child reports the exec error, then exits with the shell's code. */
	t.exec_errno = err;
	t.wait_status = W_EXITCODE(err == ENOENT ? 127 : 126, 0);
	t.peak_known = false;
	t.peak = 0;
	return t;
}

/* A task that never ran: no pid, no peak, no times. */
static struct mg_task unstarted_task(unsigned index, enum mg_task_state state)
{
	struct mg_task t = base_task(index);
	t.state = state;
	t.exited = false;
	t.pid = 0;
	t.peak_known = false;
	t.peak = 0;
	t.start_usec = t.end_usec = 0;
	return t;
}

static struct mg_task spawn_failed_task(unsigned index, int err)
{
	struct mg_task t = unstarted_task(index, MG_TASK_DONE);
	t.spawn_errno = err;
	return t;
}

static struct mg_task pending_task(unsigned index)
{
	return unstarted_task(index, MG_TASK_PENDING);
}

static struct mg_task watchdog_task(unsigned index)
{
	struct mg_task t = signaled_task(index, SIGKILL);
	t.killed_by = MG_KILL_WATCHDOG;
	t.peak = 3 * GiB;
	return t;
}

static struct mg_task grace_task(unsigned index)
{
	struct mg_task t = signaled_task(index, SIGKILL);
	t.killed_by = MG_KILL_GRACE;
	return t;
}

static struct mg_task second_signal_task(unsigned index, int sig)
{
	struct mg_task t = signaled_task(index, SIGKILL);
	t.killed_by = MG_KILL_SIGNAL;
	t.kill_signal = sig;
	return t;
}

/* --- exit statuses --- */

struct status_case {
	const char *name;
	struct mg_task task;
	int want;
};

static void task_exit_status_table(void **state)
{
	struct mg_task core = signaled_task(0, SIGSEGV);
	core.wait_status |= 0x80; /* WCOREDUMP */
	const struct status_case cases[] = {
	        {"exit 0", exited_task(0, 0), 0},
	        {"exit 1", exited_task(0, 1), 1},
	        {"exit 3", exited_task(0, 3), 3},
	        {"exit 255", exited_task(0, 255), 255},
	        {"SIGKILL", signaled_task(0, SIGKILL), 137},
	        {"SIGTERM", signaled_task(0, SIGTERM), 143},
	        {"SIGINT", signaled_task(0, SIGINT), 130},
	        {"SIGSEGV with core", core, 139},
	        {"kernel OOM", oom_task(0), 137},
	        {"watchdog", watchdog_task(0), 137},
	        {"grace kill", grace_task(0), 137},
	        {"exec ENOENT", exec_failed_task(0, ENOENT), MG_EXIT_NOTFOUND},
	        {"exec EACCES", exec_failed_task(0, EACCES), MG_EXIT_NOEXEC},
	        {"exec ENOEXEC", exec_failed_task(0, ENOEXEC), MG_EXIT_NOEXEC},
	        {"spawn EAGAIN", spawn_failed_task(0, EAGAIN), MG_EXIT_USAGE},
	        {"spawn ENOMEM", spawn_failed_task(0, ENOMEM), MG_EXIT_USAGE},
	        {"pending, never run", pending_task(0), MG_EXIT_USAGE},
	};

	assert_int_equal(MG_EXIT_USAGE, 125);
	assert_int_equal(MG_EXIT_NOEXEC, 126);
	assert_int_equal(MG_EXIT_NOTFOUND, 127);
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		int got = mg_task_exit_status(&cases[i].task);
		if (got != cases[i].want)
			print_error("%s: %d; want %d\n", cases[i].name, got, cases[i].want);
		assert_int_equal(got, cases[i].want);
	}
}

/* The status a run ends with: stopped, parallel's, or the first failure's. */
static void final_status_table(void **state)
{
	struct mg_task ok[] = {exited_task(0, 0), exited_task(1, 0)};
	struct mg_task failed[] = {exited_task(0, 0), exited_task(1, 3), signaled_task(2, SIGKILL)};
	static const struct {
		int signal;
		bool parallel;
		int parallel_status;
		bool fails;
		int want;
	} cases[] = {
	        {0, false, 0, false, 0},        {0, false, 0, true, 3},
	        {SIGTERM, false, 0, true, 143}, {SIGTERM, false, 0, false, 143},
	        {SIGINT, false, 0, false, 130}, {SIGHUP, true, 2, true, 129},
	        {0, true, 2, true, 2},          {0, true, 101, true, 101},
	        {0, true, 0, false, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct mg_task *t = cases[i].fails ? failed : ok;
		size_t n = cases[i].fails ? MG_ARRAY_SIZE(failed) : MG_ARRAY_SIZE(ok);
		assert_int_equal(mg_run_final_status(cases[i].signal, cases[i].parallel,
		                                     cases[i].parallel_status, t, n),
		                 cases[i].want);
	}
	assert_int_equal(mg_stop_signal(sigdescr_np(SIGTERM)), SIGTERM);
	assert_int_equal(mg_stop_signal(sigdescr_np(SIGINT)), SIGINT);
	assert_int_equal(mg_stop_signal(sigdescr_np(SIGHUP)), SIGHUP);
	assert_int_equal(mg_stop_signal(sigdescr_np(SIGUSR1)), 0); /* forwarded, stops nothing */
	assert_int_equal(mg_stop_signal(NULL), 0);
	assert_int_equal(mg_stop_signal("Terminated?"), 0);
}

static void run_exit_status_first_failure_by_index(void **state)
{
	struct mg_task all_ok[] = {exited_task(0, 0), exited_task(1, 0), exited_task(2, 0)};
	struct mg_task second_fails[] = {exited_task(0, 0), exited_task(1, 3), signaled_task(2, SIGKILL)};
	struct mg_task third_fails[] = {exited_task(0, 0), exited_task(1, 0), signaled_task(2, SIGTERM)};
	struct mg_task oom_first[] = {oom_task(0), exited_task(1, 3), exec_failed_task(2, ENOENT)};
	struct mg_task pending_last[] = {exited_task(0, 0), exited_task(1, 0), pending_task(2)};
	struct mg_task exec_then_exit[] = {exited_task(0, 0), exec_failed_task(1, EACCES), exited_task(2, 1)};

	assert_int_equal(mg_run_exit_status(all_ok, 3), 0);
	assert_int_equal(mg_run_exit_status(second_fails, 3), 3);
	assert_int_equal(mg_run_exit_status(third_fails, 3), 143);
	assert_int_equal(mg_run_exit_status(oom_first, 3), 137);
	assert_int_equal(mg_run_exit_status(pending_last, 3), 125);
	assert_int_equal(mg_run_exit_status(exec_then_exit, 3), 126);
	/* Only the first n count. */
	assert_int_equal(mg_run_exit_status(third_fails, 2), 0);
	assert_int_equal(mg_run_exit_status(NULL, 0), 0);
}

/* --- reasons --- */

struct reason_case {
	const char *name;
	struct mg_task task;
	const char *want;   /* exact, or NULL */
	const char *prefix; /* and/or the start */
	const char *has[3]; /* and/or pieces */
};

static void task_reason_table(void **state)
{
	struct mg_task oom_exit = exited_task(0, 1);
	oom_exit.events.oom_kill = 2; /* a child was OOM-killed, the task exited 1 */
	struct mg_task group_kill = signaled_task(0, SIGKILL);
	group_kill.events.oom = 1;
	group_kill.events.oom_group_kill = 1;
	oom_exit.events.oom = 1;
	/* Elastic: memory.max is the whole budget, above the share. */
	struct mg_task elastic = oom_task(0);
	elastic.limit = 7 * GiB;
	/* The run's cap or the node ran out: no "oom" event in the task's own cgroup. */
	struct mg_task above = oom_task(0);
	above.events.oom = 0;
	above.peak = 3 * GiB;
	struct mg_task above_child = exited_task(0, 1);
	above_child.events.oom_kill = 1;
	/* Failed by itself near a limit (memreason.c): the reason says which. */
	struct mg_task near_as = exited_task(0, 1);
	near_as.rlimit_as = 2 * GiB;
	near_as.as_peak = 2 * GiB - 10 * MiB;
	near_as.as_peak_known = true;
	struct mg_task near_as_abort = near_as;
	near_as_abort.wait_status = SIGABRT;
	struct mg_task near_max = exited_task(0, 1);
	near_max.limit = 2 * GiB;
	near_max.peak = 1950 * MiB;
	near_max.events.max = 4;
	struct mg_task far = near_as;
	far.as_peak = 1 * GiB;
	const struct reason_case cases[] = {
	        {"ok", exited_task(0, 0), "ok", NULL, {NULL}},
	        {"exit 3", exited_task(0, 3), "failed with exit code 3", NULL, {NULL}},
	        {"exit 255", exited_task(0, 255), "failed with exit code 255", NULL, {NULL}},
	        {"kernel OOM", oom_task(0), "killed by the kernel: 2GiB share exceeded", NULL, {NULL}},
	        {"OOM group kill", group_kill, "killed by the kernel: 2GiB share exceeded", NULL, {NULL}},
	        {"OOM of a child", oom_exit, NULL, NULL, {"killed by the kernel", "2GiB share exceeded"}},
	        {"elastic OOM",
	         elastic,
	         "killed by the kernel: 7GiB limit exceeded (a 2GiB share)",
	         NULL,
	         {NULL}},
	        {"OOM above the task",
	         above,
	         "killed by the kernel: memory ran out above the task (the run's budget or the node) at 3GiB "
	         "against a 2GiB share",
	         NULL,
	         {NULL}},
	        {"OOM of a child, above the task",
	         above_child,
	         NULL,
	         "a process of the task was killed by the kernel: memory ran out above the task",
	         {NULL}},
	        {"watchdog",
	         watchdog_task(0),
	         NULL,
	         "killed by memguard: RSS ",
	         {"3GiB", "2GiB", "exceeded"}},
	        {"grace", grace_task(0), NULL, "killed by memguard", {"grace", NULL}},
	        {"second SIGTERM",
	         second_signal_task(0, SIGTERM),
	         "killed by memguard at once on a second SIGTERM",
	         NULL,
	         {NULL}},
	        {"second SIGINT",
	         second_signal_task(0, SIGINT),
	         "killed by memguard at once on a second SIGINT",
	         NULL,
	         {NULL}},
	        {"exit 1 near RLIMIT_AS",
	         near_as,
	         "failed with exit code 1 after reaching at least 99% of its 2GiB address-space limit "
	         "(RLIMIT_AS): likely out of address space (a MemoryError in Python)",
	         NULL,
	         {NULL}},
	        {"SIGABRT near RLIMIT_AS",
	         near_as_abort,
	         NULL,
	         "killed by signal ABRT after reaching at least 99% of its 2GiB address-space limit",
	         {NULL}},
	        {"exit 1 near memory.max",
	         near_max,
	         "failed with exit code 1 after reaching 95% of its 2GiB share (memory.max), hit 4 times: "
	         "possibly out of memory",
	         NULL,
	         {NULL}},
	        {"exit 1 far below RLIMIT_AS", far, "failed with exit code 1", NULL, {NULL}},
	        {"SIGTERM", signaled_task(0, SIGTERM), NULL, "killed by signal", {"TERM", NULL}},
	        {"SIGSEGV", signaled_task(0, SIGSEGV), NULL, "killed by signal", {"SEGV", NULL}},
	        {"exec ENOENT", exec_failed_task(0, ENOENT), NULL, "cannot execute", {"No such file", NULL}},
	        {"exec EACCES",
	         exec_failed_task(0, EACCES),
	         NULL,
	         "cannot execute",
	         {"Permission denied", NULL}},
	        {"spawn EAGAIN", spawn_failed_task(0, EAGAIN), NULL, "not started", {"temporarily", NULL}},
	        {"pending", pending_task(0), NULL, "not started", {NULL}},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		char buf[256];
		const char *got;

		memset(buf, 'X', sizeof(buf));
		got = mg_task_reason(&cases[i].task, buf, sizeof(buf));
		assert_ptr_equal(got, buf);
		if (cases[i].want && strcmp(got, cases[i].want) != 0)
			print_error("%s: \"%s\"; want \"%s\"\n", cases[i].name, got, cases[i].want);
		if (cases[i].want)
			assert_string_equal(got, cases[i].want);
		if (cases[i].prefix && strncmp(got, cases[i].prefix, strlen(cases[i].prefix)) != 0) {
			print_error("%s: \"%s\" does not start with \"%s\"\n", cases[i].name, got,
			            cases[i].prefix);
			fail();
		}
		for (size_t j = 0; j < 3 && cases[i].has[j]; j++)
			ft_assert_contains(got, cases[i].has[j]);
		assert_null(strchr(got, '\n'));
	}
}

static void task_reason_odd_share_and_small_buffer(void **state)
{
	struct mg_task t = oom_task(0);
	char buf[256], small[12];

	t.share = 2469606195ull; /* about 2.3 GiB */
	assert_string_equal(mg_task_reason(&t, buf, sizeof(buf)),
	                    "killed by the kernel: 2.3GiB share exceeded");
	memset(small, 'X', sizeof(small));
	mg_task_reason(&t, small, sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_true(strncmp(small, "killed by t", sizeof(small) - 1) == 0);
}

/* --- the table --- */

static char *table_text(const struct mg_run_info *info, const struct mg_task *tasks, size_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	mg_report_table(out, info, tasks, n);
	assert_int_equal(fclose(out), 0);
	assert_non_null(text);
	return text;
}

/* Splits text into lines in place; returns how many. */
static size_t split_lines(char *text, char **lines, size_t max)
{
	size_t n = 0;

	for (char *p = text; *p && n < max;) {
		char *eol = strchr(p, '\n');
		assert_non_null(eol); /* every line ends with a newline */
		*eol = '\0';
		lines[n++] = p;
		p = eol + 1;
	}
	return n;
}

static void report_table_rows_and_summary(void **state)
{
	const struct mg_run_info info = {
	        .mode = "cgroup",
	        .where = "/sys/fs/cgroup/memguard.slice/run-4242",
	        .share = 2 * GiB,
	        .runtime = MG_RUNTIME_PYPY,
	        .parallel = 4,
	};
	struct mg_task tasks[] = {
	        exited_task(0, 0), exited_task(1, 3),           oom_task(2),
	        pending_task(3),   exec_failed_task(4, ENOENT),
	};
	tasks[0].param = "--seed 1 --out a.dat";
	tasks[1].param = "--seed 2 --out b.dat";
	tasks[2].param = "--seed 3";
	char *text = table_text(&info, tasks, MG_ARRAY_SIZE(tasks));
	char *lines[16];
	size_t n = split_lines(text, lines, 16);

	assert_int_equal(n, 2 + MG_ARRAY_SIZE(tasks) + 1);
	ft_assert_contains(lines[0], "5 tasks");
	ft_assert_contains(lines[0], "4 at once");
	ft_assert_contains(lines[0], "2GiB");
	ft_assert_contains(lines[0], "pypy");
	ft_assert_contains(lines[0], "cgroup mode");
	ft_assert_contains(lines[0], "/sys/fs/cgroup/memguard.slice/run-4242");
	ft_assert_contains(lines[1], "task");
	ft_assert_contains(lines[1], "reason");

	/* One row per task, in order, with its reason and its parameter. */
	for (size_t i = 0; i < MG_ARRAY_SIZE(tasks); i++) {
		char idx[16], why[256];
		const char *row = lines[2 + i];

		snprintf(idx, sizeof(idx), "%6zu  ", i + 1); /* numbered from 1 */
		assert_true(strncmp(row, idx, strlen(idx)) == 0);
		ft_assert_contains(row, mg_task_reason(&tasks[i], why, sizeof(why)));
		ft_assert_contains(row, "2GiB");
		if (tasks[i].param)
			ft_assert_contains(row, tasks[i].param);
	}
	ft_assert_contains(lines[2], "exit 0");
	ft_assert_contains(lines[2], "1.5GiB / 2GiB");
	ft_assert_contains(lines[2], "2.5"); /* seconds */
	ft_assert_contains(lines[3], "exit 3");
	ft_assert_contains(lines[4], "SIGKILL");
	ft_assert_contains(lines[4], "2GiB / 2GiB");
	ft_assert_contains(lines[5], "? / 2GiB"); /* peak unknown */
	ft_assert_not_contains(lines[5], "|");    /* no parameter */
	ft_assert_contains(lines[6], "? / 2GiB");

	assert_string_equal(lines[n - 1], "memguard: 1 succeeded, 4 failed");
	free(text);
}

static void report_table_counts_and_signal(void **state)
{
	const struct mg_run_info degraded = {
	        .mode = "degraded",
	        .where = "no cgroup v2 memory controller",
	        .share = 512 * MiB,
	        .runtime = MG_RUNTIME_GENERIC,
	        .parallel = 1,
	        .signal_received = "SIGTERM",
	};
	struct mg_task one[] = {exited_task(0, 0)};
	struct mg_task all_ok[] = {exited_task(0, 0), exited_task(1, 0), exited_task(2, 0)};
	char *lines[16], *text;
	size_t n;

	text = table_text(&degraded, one, 1);
	n = split_lines(text, lines, 16);
	assert_int_equal(n, 4);
	ft_assert_contains(lines[0], "1 task,");
	ft_assert_contains(lines[0], "degraded mode");
	ft_assert_contains(lines[0], "no cgroup v2 memory controller");
	ft_assert_contains(lines[0], "512MiB");
	ft_assert_contains(lines[0], "generic");
	assert_string_equal(lines[3], "memguard: 1 succeeded, 0 failed; received SIGTERM");
	free(text);

	text = table_text(&degraded, all_ok, 3);
	n = split_lines(text, lines, 16);
	assert_int_equal(n, 6);
	assert_string_equal(lines[5], "memguard: 3 succeeded, 0 failed; received SIGTERM");
	free(text);

	text = table_text(&degraded, NULL, 0);
	n = split_lines(text, lines, 16);
	assert_int_equal(n, 3);
	ft_assert_contains(lines[0], "0 tasks");
	assert_string_equal(lines[2], "memguard: 0 succeeded, 0 failed; received SIGTERM");
	free(text);
}

/* The runtime line says what a generic task got; other runtimes and an
 * empty note keep the plain name. */
static void report_table_runtime_note(void **state)
{
	struct mg_run_info info = {
	        .mode = "cgroup",
	        .where = "run-1",
	        .share = 233 * MiB,
	        .runtime = MG_RUNTIME_GENERIC,
	        .runtime_note = "sh: PYPY_GC_MAX, GOMEMLIMIT set for any runtime the task starts",
	        .parallel = 3,
	};
	struct mg_task one[] = {exited_task(0, 0)};
	char *lines[8], *text;

	(void)state;
	text = table_text(&info, one, 1);
	assert_int_equal(split_lines(text, lines, 8), 4);
	ft_assert_contains(lines[0], ", runtime generic (sh: PYPY_GC_MAX, GOMEMLIMIT set for any runtime the "
	                             "task starts), cgroup mode (run-1)");
	free(text);

	info.runtime_note = "";
	text = table_text(&info, one, 1);
	assert_int_equal(split_lines(text, lines, 8), 4);
	ft_assert_contains(lines[0], ", runtime generic, cgroup mode (run-1)");
	free(text);

	info.runtime = MG_RUNTIME_PYPY;
	info.runtime_note = NULL;
	text = table_text(&info, one, 1);
	assert_int_equal(split_lines(text, lines, 8), 4);
	ft_assert_contains(lines[0], ", runtime pypy, cgroup mode (run-1)");
	free(text);
}

/* --- JSON --- */

/* Flattens a report into lines that C can compare exactly; strings as hex
 * of their UTF-8 bytes, so that escaping is checked byte for byte. Exits
 * nonzero when the file is not strict JSON in UTF-8 or a field is missing. */
static const char checker_py[] =
        "import json, sys\n"
        "raw = open(sys.argv[1], 'rb').read()\n"
        "d = json.loads(raw.decode('utf-8'))\n"
        "def s(v):\n"
        "    return 'null' if v is None else 'x' + v.encode('utf-8').hex()\n"
        "def n(v):\n"
        "    assert v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)), v\n"
        "    return 'null' if v is None else str(v)\n"
        "print('run', s(d['mode']), s(d['where']), n(d['share_bytes']), n(d['budget_bytes']),\n"
        "      n(d['run_max_bytes']), s(d['runtime']),\n"
        "      n(d['parallel']), n(d['exit_status']), len(d['tasks']))\n"
        "for t in d['tasks']:\n"
        "    print('task', n(t['index']), s(t['param']), n(t['status']), n(t['exit_code']), s(t['signal']),\n"
        "          n(t['share_bytes']), n(t['peak_bytes']), n(t['oom_kills']), '%.3f' % t['seconds'],\n"
        "          s(t['reason']))\n";

/* A string of the checker's output: "null", or "x" and its bytes in hex. */
static void hex(const char *s, char *out, size_t size)
{
	if (!s) {
		snprintf(out, size, "null");
		return;
	}
	snprintf(out, size, "x");
	ft_hex(s, out + 1, size - 1);
}

/* Runs the checker over path: its output (heap); fails the test unless the
 * file is a valid report. */
static char *check_json(const char *path)
{
	return ft_check_python(checker_py, path);
}

static void expect_task_line(char *out, const struct mg_task *t, const char *exit_code, const char *sig)
{
	char line[4096], param[1024], reason[1024], sigh[64], why[256], peak[32];

	hex(t->param, param, sizeof(param));
	hex(mg_task_reason(t, why, sizeof(why)), reason, sizeof(reason));
	hex(sig, sigh, sizeof(sigh));
	if (t->peak_known)
		snprintf(peak, sizeof(peak), "%" PRIu64, t->peak);
	else
		snprintf(peak, sizeof(peak), "null");
	snprintf(line, sizeof(line), "task %u %s %d %s %s %" PRIu64 " %s %" PRIu64 " %.3f %s\n", t->index + 1,
	         param, mg_task_exit_status(t), exit_code, sigh, t->share, peak, t->events.oom_kill,
	         t->end_usec > t->start_usec ? (double)(t->end_usec - t->start_usec) / 1e6 : 0.0, reason);
	ft_assert_contains(out, line);
}

/* Entries of dir not named in keep (NULL-terminated): temp files left behind. */
static size_t count_other_entries(const char *dir, const char *const keep[])
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		bool kept = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
		for (size_t i = 0; keep && keep[i]; i++)
			kept = kept || strcmp(de->d_name, keep[i]) == 0;
		if (!kept) {
			print_error("left behind: %s/%s\n", dir, de->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

static const char *const only_report[] = {"report.json", NULL};

static void report_json_fields(void **state)
{
	const struct mg_run_info info = {
	        .mode = "cgroup",
	        .where = "/sys/fs/cgroup/odd \"name\"\\here",
	        .share = 2 * GiB,
	        .budget = 6 * GiB,
	        .run_capped = true,
	        .runtime = MG_RUNTIME_JVM,
	        .parallel = 3,
	};
	struct mg_task tasks[] = {
	        exited_task(0, 0),         exited_task(1, 3), oom_task(2),
	        pending_task(3),           watchdog_task(4),  exec_failed_task(5, EACCES),
	        signaled_task(6, SIGTERM),
	};
	struct fake_tree t;
	char path[PATH_MAX + 16], *out, want[1024], w1[256], w2[256];

	ft_require_python(); /* before the tree, which a failure would leave behind */
	tasks[0].param = "plain";
	tasks[1].param =
	        "quote \" backslash \\ slash / tab \t nl \n cr \r bell \x07 esc \x1b us \x1f del \x7f";
	tasks[2].param = "utf-8: \xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80";
	tasks[4].param = "";
	tasks[2].events.oom_kill = 3;

	ft_new(&t);
	snprintf(path, sizeof(path), "%s/report.json", t.path);
	assert_int_equal(mg_report_json(path, &info, tasks, MG_ARRAY_SIZE(tasks)), 0);
	out = check_json(path);

	hex(info.mode, w1, sizeof(w1));
	hex(info.where, w2, sizeof(w2));
	snprintf(want, sizeof(want), "run %s %s %" PRIu64 " %" PRIu64 " %" PRIu64 " x%s %u %d %zu\n", w1, w2,
	         info.share, info.budget, info.budget, "6a766d" /* jvm */, info.parallel,
	         mg_run_exit_status(tasks, MG_ARRAY_SIZE(tasks)), MG_ARRAY_SIZE(tasks));
	ft_assert_contains(out, want);
	assert_int_equal(mg_run_exit_status(tasks, MG_ARRAY_SIZE(tasks)), 3);

	expect_task_line(out, &tasks[0], "0", NULL);
	expect_task_line(out, &tasks[1], "3", NULL);
	expect_task_line(out, &tasks[2], "null", "SIGKILL");
	expect_task_line(out, &tasks[3], "null", NULL); /* never ran: no code, no signal */
	expect_task_line(out, &tasks[4], "null", "SIGKILL");
	expect_task_line(out, &tasks[5], "126", NULL);
	expect_task_line(out, &tasks[6], "null", "SIGTERM");
	/* param null, not "" or "null", for a task without one. */
	ft_assert_contains(out, "task 4 null 125 null null");
	ft_assert_contains(out, "task 5 x 137 null x5349474b494c4c"); /* "" and "SIGKILL" */
	free(out);

	assert_int_equal(count_other_entries(t.path, only_report), 0);
	ft_free(&t);
}

/* The verdict's fields: what it rests on, and which limit a failed task came
 * near, or null. */
static const char memory_checker_py[] =
        "import json, sys\n"
        "d = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))\n"
        "for t in d['tasks']:\n"
        "    print('task', t['index'], t['rlimit_as_bytes'], t['address_space_peak_bytes'],\n"
        "          t['memory_max_bytes'], t['memory_max_events'], t['near_limit'], "
        "t['near_limit_percent'])\n";

static void report_json_memory_fields(void **state)
{
	const struct mg_run_info info = {.mode = "cgroup", .where = "run", .share = 2 * GiB, .parallel = 4};
	struct mg_task tasks[] = {exited_task(0, 1), exited_task(1, 1), exited_task(2, 0), oom_task(3)};
	struct fake_tree t;
	char path[PATH_MAX + 16], *out;

	ft_require_python();
	tasks[0].rlimit_as = 2 * GiB;
	tasks[0].as_peak = 1946 * MiB; /* 95% */
	tasks[0].as_peak_known = true;
	tasks[1].limit = 4 * GiB;
	tasks[1].events.max = 2;
	tasks[2].rlimit_as = 2 * GiB; /* near, but it succeeded */
	tasks[2].as_peak = 2 * GiB;
	tasks[2].as_peak_known = true;
	tasks[3].limit = 2 * GiB;
	ft_new(&t);
	snprintf(path, sizeof(path), "%s/report.json", t.path);
	assert_int_equal(mg_report_json(path, &info, tasks, MG_ARRAY_SIZE(tasks)), 0);
	out = ft_check_python(memory_checker_py, path);
	ft_assert_contains(out, "task 1 2147483648 2040528896 None 0 RLIMIT_AS 95\n");
	ft_assert_contains(out, "task 2 None None 4294967296 2 memory.max 37\n");
	ft_assert_contains(out, "task 3 2147483648 2147483648 None 0 None None\n");
	ft_assert_contains(out,
	                   "task 4 None None 2147483648 12 None None\n"); /* an OOM kill says so itself */
	free(out);
	assert_int_equal(count_other_entries(t.path, only_report), 0);
	ft_free(&t);
}

static void report_json_raw_text(void **state)
{
	const struct mg_run_info info = {
	        .mode = "degraded", .where = "no cgroups", .share = 4096, .parallel = 1};
	struct mg_task tasks[] = {exited_task(0, 0), pending_task(1)};
	struct fake_tree t;
	char *text;

	tasks[0].param = "a\"b\\c\td\x01";
	tasks[0].peak_known = false;
	ft_new(&t);
	{
		char path[PATH_MAX + 16];
		snprintf(path, sizeof(path), "%s/r.json", t.path);
		assert_int_equal(mg_report_json(path, &info, tasks, 2), 0);
	}
	text = ft_read(t.fd, "r.json", NULL);
	/* The escapes themselves, as JSON wants them. */
	ft_assert_contains(text, "\"param\":\"a\\\"b\\\\c\\u0009d\\u0001\"");
	ft_assert_contains(text, "\"param\":null");
	ft_assert_contains(text, "\"peak_bytes\":null");
	ft_assert_contains(text, "\"run_max_bytes\":null"); /* degraded: no run cgroup to cap */
	ft_assert_contains(text, "\"exit_status\":125");
	ft_assert_contains(text, "\"index\":1");
	ft_assert_contains(text, "\"oom_kills\":0");
	ft_assert_not_contains(text, "\t");
	ft_assert_not_contains(text, "\x01");
	assert_int_equal(text[strlen(text) - 1], '\n');
	free(text);
	ft_free(&t);
}

static void report_json_empty_run_and_overwrite(void **state)
{
	const struct mg_run_info info = {.mode = "cgroup", .where = "/x", .share = 1 * GiB, .parallel = 8};
	struct mg_task one[] = {exited_task(0, 0)};
	struct fake_tree t;
	char path[PATH_MAX + 16], *out;

	ft_require_python();
	ft_new(&t);
	snprintf(path, sizeof(path), "%s/report.json", t.path);

	assert_int_equal(mg_report_json(path, &info, NULL, 0), 0);
	out = check_json(path);
	ft_assert_contains(out, " 8 0 0\n"); /* parallel 8, exit_status 0, no tasks */
	free(out);

	/* An existing report, even a longer one, is replaced whole. */
	char *junk = malloc(100000);
	assert_non_null(junk);
	memset(junk, '#', 99999);
	junk[99999] = '\0';
	ft_write(t.fd, "report.json", junk);
	free(junk);
	assert_int_equal(mg_report_json(path, &info, one, 1), 0);
	out = check_json(path);
	ft_assert_contains(out, "task 1 null 0 0 null");
	free(out);
	assert_int_equal(count_other_entries(t.path, only_report), 0);
	ft_free(&t);
}

/* A task-file line is whatever bytes the file held: a Latin-1 line must not
 * make the report invalid JSON (RFC 8259: JSON text is UTF-8). */
static void report_json_non_utf8_param(void **state)
{
	const struct mg_run_info info = {.mode = "cgroup", .where = "/x", .share = 1 * GiB, .parallel = 1};
	struct mg_task tasks[] = {exited_task(0, 0), exited_task(1, 0)};
	struct fake_tree t;
	char path[PATH_MAX + 16], *out;
	int status;
	bool ok;

	ft_require_python();
	tasks[0].param = "caf\xe9 --input r\xe9sum\xe9.dat"; /* Latin-1 */
	tasks[1].param = "cut \xe6\x97";                     /* truncated UTF-8 */
	ft_new(&t);
	snprintf(path, sizeof(path), "%s/report.json", t.path);
	assert_int_equal(mg_report_json(path, &info, tasks, 2), 0);
	out = ft_run_python(checker_py, path, &status);
	ft_free(&t);
	if (status != 0)
		print_error("report with a Latin-1 param is not valid UTF-8 JSON:\n%s\n", out);
	ok = status == 0 && strstr(out, "task 1 x636166"); /* "caf..." */
	free(out);
	assert_true(ok);
}

static void report_json_unwritable_paths(void **state)
{
	const struct mg_run_info info = {.mode = "cgroup", .where = "/x", .share = 1 * GiB, .parallel = 1};
	struct mg_task one[] = {exited_task(0, 0)};
	struct fake_tree t;
	char path[PATH_MAX + 64];

	ft_new(&t);
	ft_write(t.fd, "file", "x");
	ft_mkdir(t.fd, "dir");

	snprintf(path, sizeof(path), "%s/missing/report.json", t.path);
	assert_int_equal(mg_report_json(path, &info, one, 1), -ENOENT);

	snprintf(path, sizeof(path), "%s/file/report.json", t.path);
	assert_int_equal(mg_report_json(path, &info, one, 1), -ENOTDIR);

	/* A directory in the way: the temp file is written, the rename fails,
	 * and the temp file must go. */
	snprintf(path, sizeof(path), "%s/dir", t.path);
	assert_int_equal(mg_report_json(path, &info, one, 1), -EISDIR);
	assert_int_equal(count_other_entries(t.path, (const char *const[]){"file", "dir", NULL}), 0);
	assert_int_equal(count_other_entries(path, NULL), 0);
	ft_free(&t);
}

/* A 10 MB task line would fill the terminal: the table shows its start, the
 * JSON report all of it. */
static void report_table_truncates_long_params(void **state)
{
	const struct mg_run_info info = {.mode = "cgroup", .where = "/x", .share = 2 * GiB, .parallel = 1};
	const size_t big = 10 * 1000 * 1000;
	char *huge = malloc(big + 1), *exact = malloc(MG_TABLE_PARAM_MAX + 1);
	char *over = malloc(MG_TABLE_PARAM_MAX + 2), utf8[MG_TABLE_PARAM_MAX * 2 + 8];
	struct mg_task tasks[] = {exited_task(0, 0), exited_task(1, 0), exited_task(2, 0), exited_task(3, 0),
	                          exited_task(4, 0)};
	char *lines[8], *text;

	assert_non_null(huge);
	assert_non_null(exact);
	assert_non_null(over);
	memset(huge, 'a', big);
	huge[big] = '\0';
	memset(exact, 'b', MG_TABLE_PARAM_MAX);
	exact[MG_TABLE_PARAM_MAX] = '\0';
	memset(over, 'c', MG_TABLE_PARAM_MAX + 1);
	over[MG_TABLE_PARAM_MAX + 1] = '\0';
	/* 61 two-byte characters: cut after the 60th, never inside one */
	utf8[0] = '\0';
	for (int i = 0; i <= MG_TABLE_PARAM_MAX; i++)
		strcat(utf8, "\xc3\xa9");
	tasks[0].param = huge;
	tasks[1].param = exact;
	tasks[2].param = over;
	tasks[3].param = utf8;
	tasks[4].param = "short";

	text = table_text(&info, tasks, 5);
	assert_int_equal(split_lines(text, lines, 8), 8);
	ft_assert_contains(lines[2], "  | aaaaaaaaaa");
	assert_true(strlen(lines[2]) < 200);
	char want[MG_TABLE_PARAM_MAX * 2 + 16];
	snprintf(want, sizeof(want), "  | %.*s...", MG_TABLE_PARAM_MAX, huge);
	assert_true(strlen(lines[2]) >= strlen(want));
	assert_string_equal(lines[2] + strlen(lines[2]) - strlen(want), want);
	/* exactly the limit: whole, no ellipsis */
	snprintf(want, sizeof(want), "  | %s", exact);
	assert_string_equal(lines[3] + strlen(lines[3]) - strlen(want), want);
	/* one more: cut */
	snprintf(want, sizeof(want), "  | %.*s...", MG_TABLE_PARAM_MAX, over);
	assert_string_equal(lines[4] + strlen(lines[4]) - strlen(want), want);
	snprintf(want, sizeof(want), "  | %.*s...", 2 * MG_TABLE_PARAM_MAX, utf8);
	assert_string_equal(lines[5] + strlen(lines[5]) - strlen(want), want);
	ft_assert_contains(lines[6], "  | short");
	ft_assert_not_contains(lines[6], "...");
	free(text);

	/* the JSON report keeps the line whole */
	struct fake_tree t;
	char path[PATH_MAX + 16];
	ft_new(&t);
	snprintf(path, sizeof(path), "%s/report.json", t.path);
	assert_int_equal(mg_report_json(path, &info, tasks, 1), 0);
	size_t len;
	char *json = ft_read(t.fd, "report.json", &len);
	assert_true(len > big);
	assert_non_null(strstr(json, huge));
	free(json);
	ft_free(&t);
	free(huge);
	free(exact);
	free(over);
}

/* The temporary file used to be path.tmp.<pid>, opened with fopen: a symlink
 * planted at that name made the report overwrite whatever it pointed to. */
static void report_json_ignores_a_planted_symlink(void **state)
{
	const struct mg_run_info info = {.mode = "cgroup", .where = "/x", .share = 1 * GiB, .parallel = 1};
	struct mg_task one[] = {exited_task(0, 0)};
	struct fake_tree t;
	char path[PATH_MAX + 16], victim[PATH_MAX + 16], planted[PATH_MAX + 64];

	ft_new(&t);
	ft_write(t.fd, "victim", "precious\n");
	snprintf(path, sizeof(path), "%s/report.json", t.path);
	snprintf(victim, sizeof(victim), "%s/victim", t.path);
	snprintf(planted, sizeof(planted), "%s.tmp.%d", path, (int)getpid());
	assert_int_equal(symlink(victim, planted), 0);

	assert_int_equal(mg_report_json(path, &info, one, 1), 0);
	char *v = ft_read(t.fd, "victim", NULL);
	assert_string_equal(v, "precious\n");
	free(v);
	char *out = ft_read(t.fd, "report.json", NULL);
	ft_assert_contains(out, "\"tasks\":[");
	free(out);
	/* the report is a file of its own, not a link, and nothing else was left */
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(count_other_entries(t.path, (const char *const[]){"report.json", "victim",
	                                                                   strrchr(planted, '/') + 1, NULL}),
	                 0);
	ft_free(&t);
}

static void report_check_paths(void **state)
{
	struct fake_tree t;
	char path[PATH_MAX + 64];

	ft_new(&t);
	ft_write(t.fd, "file", "x");
	ft_mkdir(t.fd, "dir");

	snprintf(path, sizeof(path), "%s/report.json", t.path);
	assert_int_equal(mg_report_check(path), 0);
	snprintf(path, sizeof(path), "%s/file", t.path); /* an existing report is replaced */
	assert_int_equal(mg_report_check(path), 0);
	snprintf(path, sizeof(path), "%s/missing/report.json", t.path);
	assert_int_equal(mg_report_check(path), -ENOENT);
	snprintf(path, sizeof(path), "%s/file/report.json", t.path);
	assert_int_equal(mg_report_check(path), -ENOTDIR);
	snprintf(path, sizeof(path), "%s/dir", t.path);
	assert_int_equal(mg_report_check(path), -EISDIR);
	assert_int_equal(mg_report_check(""), -ENOENT);
	assert_int_equal(mg_report_check("/"), -EISDIR);
	/* a bare name is in the cwd */
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(cwd >= 0);
	assert_int_equal(chdir(t.path), 0);
	assert_int_equal(mg_report_check("report.json"), 0);
	assert_int_equal(mg_report_check("dir"), -EISDIR);
	assert_int_equal(fchdir(cwd), 0);
	close(cwd);
	/* a directory we may not write (root may write anywhere) */
	if (geteuid() != 0) {
		assert_int_equal(fchmodat(t.fd, "dir", 0555, 0), 0);
		snprintf(path, sizeof(path), "%s/dir/report.json", t.path);
		assert_int_equal(mg_report_check(path), -EACCES);
		assert_int_equal(fchmodat(t.fd, "dir", 0755, 0), 0);
	}
	ft_free(&t);
}

/* A report that cannot be written must not look like success: exit 125, said
 * on one line, whatever the tasks did. */
static void report_finish_status(void **state)
{
	const struct mg_run_info info = {.mode = "cgroup", .where = "/x", .share = 1 * GiB, .parallel = 1};
	struct mg_task ok[] = {exited_task(0, 0)}, failed[] = {exited_task(0, 3)};
	struct fake_tree t;
	struct ft_capture cap;
	char path[PATH_MAX + 64];

	ft_new(&t);
	snprintf(path, sizeof(path), "%s/report.json", t.path);
	assert_int_equal(mg_report_finish(NULL, NULL, &info, ok, 1), 0);
	assert_int_equal(mg_report_finish(NULL, NULL, &info, failed, 1), 3);
	assert_int_equal(mg_report_finish(NULL, path, &info, ok, 1), 0);
	assert_true(ft_exists(t.fd, "report.json"));
	assert_int_equal(mg_report_finish(NULL, path, &info, failed, 1), 3);

	snprintf(path, sizeof(path), "%s/missing/report.json", t.path);
	for (int i = 0; i < 2; i++) {
		char *table = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&table, &len);
		assert_non_null(out);
		ft_capture_begin(&cap);
		int status = mg_report_finish(out, path, &info, i ? failed : ok, 1);
		char *err = ft_capture_end(&cap);
		assert_int_equal(fclose(out), 0);
		assert_int_equal(status, MG_EXIT_USAGE);
		/* the table is still there, the error is one line naming the file */
		ft_assert_contains(table, "succeeded");
		ft_assert_contains(err, path);
		ft_assert_contains(err, "No such file or directory");
		assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
		free(err);
		free(table);
	}
	ft_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(task_exit_status_table),
	        cmocka_unit_test(run_exit_status_first_failure_by_index),
	        cmocka_unit_test(final_status_table),
	        cmocka_unit_test(task_reason_table),
	        cmocka_unit_test(task_reason_odd_share_and_small_buffer),
	        cmocka_unit_test(report_table_rows_and_summary),
	        cmocka_unit_test(report_table_runtime_note),
	        cmocka_unit_test(report_table_counts_and_signal),
	        cmocka_unit_test(report_json_fields),
	        cmocka_unit_test(report_json_memory_fields),
	        cmocka_unit_test(report_json_raw_text),
	        cmocka_unit_test(report_json_empty_run_and_overwrite),
	        cmocka_unit_test(report_json_non_utf8_param),
	        cmocka_unit_test(report_json_unwritable_paths),
	        cmocka_unit_test(report_table_truncates_long_params),
	        cmocka_unit_test(report_json_ignores_a_planted_symlink),
	        cmocka_unit_test(report_check_paths),
	        cmocka_unit_test(report_finish_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
