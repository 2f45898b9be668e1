/* The joblog: an attempt's outcome word, the command's escaping, a line
 * formatted and parsed back, hostile lines, whole files (a torn last line),
 * and the resume plan (mg_resume_decide) as a table. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "farm/joblog.h"
#include "farm/joblogfile.h"
#include "farm/merge.h"
#include "memguard/util.h"

#define MiB (1ull << 20)

static void outcome_words(void **state)
{
	struct mg_task ok = {.state = MG_TASK_DONE, .exited = true, .wait_status = 0};
	struct mg_task failed = {.state = MG_TASK_DONE, .exited = true, .wait_status = 1 << 8};
	struct mg_task oom = {.state = MG_TASK_DONE,
	                      .exited = true,
	                      .wait_status = SIGKILL,
	                      .killed_by = MG_KILL_KERNEL_OOM,
	                      .events = {.oom_kill = 1}};
	struct mg_task near = {.state = MG_TASK_DONE,
	                       .exited = true,
	                       .wait_status = 1 << 8,
	                       .in_cgroup = true,
	                       .share = 100 * MiB,
	                       .limit = 100 * MiB,
	                       .peak = 99 * MiB,
	                       .peak_known = true};
	struct mg_task stopped = failed;
	struct mg_task daemon = {
	        .state = MG_TASK_DONE, .exited = true, .wait_status = SIGKILL, .killed_by = MG_KILL_DAEMON};
	stopped.interrupted = true;

	assert_string_equal(mg_attempt_outcome(&ok), "ok");
	assert_string_equal(mg_attempt_outcome(&failed), "failed");
	assert_string_equal(mg_attempt_outcome(&oom), "oom_killed");
	assert_string_equal(mg_attempt_outcome(&near), "near_limit");
	assert_string_equal(mg_attempt_outcome(&stopped), "interrupted");
	assert_string_equal(mg_attempt_outcome(&daemon), "killed_by_memguardd");
	assert_true(mg_outcome_for_memory("oom_killed"));
	assert_true(mg_outcome_for_memory("near_limit"));
	assert_true(mg_outcome_for_memory("killed_by_memguardd"));
	assert_true(mg_outcome_for_memory("killed_by_watchdog"));
	assert_false(mg_outcome_for_memory("failed"));
	assert_false(mg_outcome_for_memory("interrupted"));
	assert_false(mg_outcome_for_memory("killed_after_grace"));
	assert_false(mg_outcome_for_memory("ok"));
}

static void command_escaped(void **state)
{
	char *argv[] = {"sh", "-c", "a\tb\nc\\d\re", "{x y}", NULL};
	char *s = mg_joblog_command(argv);

	assert_string_equal(s, "sh -c a\\tb\\nc\\\\d\\re {x y}");
	free(s);
}

static void format_parse_roundtrip(void **state)
{
	struct mg_task t = {.index = 6,
	                    .state = MG_TASK_DONE,
	                    .exited = true,
	                    .wait_status = SIGKILL,
	                    .killed_by = MG_KILL_KERNEL_OOM,
	                    .events = {.oom_kill = 2},
	                    .share = 100 * MiB,
	                    .peak = 100 * MiB,
	                    .peak_known = true,
	                    .start_usec = 1000000,
	                    .end_usec = 3500000,
	                    .start_wall_usec = 1700000000123456ull,
	                    .attempt = 2};
	struct mg_joblog_entry e, back;
	const char *why = NULL;

	mg_joblog_entry_of(&t, "node1", "sim.py\tx 7", &e);
	char *line = mg_joblog_format(&e);
	assert_non_null(line);
	assert_string_equal(line,
	                    "7\tnode1\t1700000000.123\t     2.500\t0\t0\t0\t9\t104857600\t104857600\t2\t"
	                    "oom_killed\t2\tsim.py\tx 7\n");
	line[strlen(line) - 1] = '\0';
	assert_int_equal(mg_joblog_parse_line(line, &back, &why), 0);
	assert_int_equal(back.seq, 7);
	assert_string_equal(back.host, "node1");
	assert_int_equal(back.exitval, 0);
	assert_int_equal(back.signal, 9);
	assert_int_equal(back.share, 100 * MiB);
	assert_true(back.peak_known);
	assert_int_equal(back.oom_kills, 2);
	assert_string_equal(back.outcome, "oom_killed");
	assert_int_equal(back.attempt, 2);
	assert_string_equal(back.command, "sim.py\tx 7"); /* the tab stays the command's */
	free(line);

	/* Never started: Exitval -1 in GNU parallel's sense is not what we
	 * write; a task memguard could not start exits 125, one that could not
	 * execute 126/127, and the peak is unknown. */
	struct mg_task noexec = {.index = 0, .state = MG_TASK_DONE, .exec_errno = ENOENT, .share = 1};
	mg_joblog_entry_of(&noexec, "h", "x", &e);
	line = mg_joblog_format(&e);
	assert_non_null(strstr(line, "\t127\t0\t1\t-\t0\tcannot_execute\t1\tx\n"));
	free(line);
}

static void parse_hostile_lines(void **state)
{
	static const char *const bad[] = {
	        "",
	        "1\th",
	        "x\th\t1.0\t1.0\t0\t0\t0\t0\t1\t1\t0\tok\t1\tcmd",
	        "0\th\t1.0\t1.0\t0\t0\t0\t0\t1\t1\t0\tok\t1\tcmd",
	        "1\th\tnow\t1.0\t0\t0\t0\t0\t1\t1\t0\tok\t1\tcmd",
	        "1\th\t1.0\t1.0\t0\t0\tzero\t0\t1\t1\t0\tok\t1\tcmd",
	        "1\th\t1.0\t1.0\t0\t0\t0\t0\t-1\t1\t0\tok\t1\tcmd",
	        "1\th\t1.0\t1.0\t0\t0\t0\t0\t1\t?\t0\tok\t1\tcmd",
	        "1\th\t1.0\t1.0\t0\t0\t0\t0\t1\t1\t0\t\t1\tcmd",
	        "1\th\t1.0\t1.0\t0\t0\t0\t0\t1\t1\t0\tok go\t1\tcmd",
	        "1\th\t1.0\t1.0\t0\t0\t0\t0\t1\t1\t0\tok\t0\tcmd",
	        "1\th\t1.0\t1.0\t0\t0\t0\t0\t18446744073709551616\t1\t0\tok\t1\tcmd",
	        "1\th\t1.0\t1.0\t0\t0\t0\t0\t1\t1\t0\tok\t1", /* no Command */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char *copy = strdup(bad[i]);
		struct mg_joblog_entry e;
		const char *why = NULL;
		int r = mg_joblog_parse_line(copy, &e, &why);
		if (r != -EBADMSG)
			print_error("accepted: \"%s\"\n", bad[i]);
		assert_int_equal(r, -EBADMSG);
		assert_non_null(why);
		free(copy);
	}
}

static void parse_files(void **state)
{
	struct mg_joblog_entry *e = NULL;
	size_t n = 0;
	char err[256] = "";
	char *text = strdup(MG_JOBLOG_HEADER "1\th\t1.0\t1.0\t0\t0\t0\t0\t1\t-\t0\tok\t1\ta\n"
	                                     "\n"
	                                     "2\th\t1.0\t1.0\t0\t0\t1\t0\t1\t5\t0\tfailed\t1\tb\n"
	                                     "3\th\t1.0\t1.0\t0\t0\t0\t0\t1\t5\t0\tok\t1\tc"); /* torn */

	assert_int_equal(mg_joblog_parse(text, "log", &e, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(e[1].seq, 2);
	assert_int_equal(e[1].lineno, 4);
	assert_false(e[0].peak_known);
	free(text);

	text = strdup("Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n");
	assert_int_equal(mg_joblog_parse(text, "log", &e, &n, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "line 1 is not memguard's header"));
	free(text);

	text = strdup(MG_JOBLOG_HEADER "1\th\tgarbage\n2\th\n");
	assert_int_equal(mg_joblog_parse(text, "log", &e, &n, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "joblog log: line 2: fewer columns"));
	free(text);

	text = strdup("");
	assert_int_equal(mg_joblog_parse(text, "log", &e, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	free(text);
	free(e);
}

#define NT 6

struct resume_case {
	const char *name;
	enum mg_resume_mode mode;
	size_t nentries;
	struct mg_joblog_entry entries[8];
	struct mg_resume_plan want[NT];
};

#define E(s_, o_, a_, sh_, pk_)                                                                              \
	{                                                                                                    \
		.seq = s_, .host = "h", .outcome = o_, .attempt = a_, .share = sh_, .peak = pk_,             \
		.peak_known = pk_ != 0, .command = cmds[s_ - 1], .file = "j", .lineno = 10 + s_              \
	}
/* What a resume does with a task: run it or not, from which attempt, at
 * what share (0: the run's), how many attempts the joblog has of it, how
 * many of them were memory failures the retries count, failed for good. */
#define P(run_, attempt_, share_, prior_, retried_, failed_)                                                 \
	{                                                                                                    \
		.run = run_, .attempt = attempt_, .share = share_, .prior = prior_, .retried = retried_,     \
		.failed_before = failed_                                                                     \
	}
/* A task the joblog does not have: it runs from attempt 1. */
#define FRESH P(true, 1, 0, 0, 0, false)

static char *cmds[NT] = {"t 1", "t 2", "t 3", "t 4", "t 5", "t 6"};

static void resume_table(void **state)
{
	const struct resume_case cases[] = {
	        {"empty joblog: everything from attempt 1",
	         MG_RESUME,
	         0,
	         {{0}},
	         {FRESH, FRESH, FRESH, FRESH, FRESH, FRESH}},
	        {"--resume: ok and plain failures are done; an unlogged and an interrupted line run",
	         MG_RESUME,
	         3,
	         {E(1, "ok", 1, 100 * MiB, 10 * MiB), E(2, "failed", 1, 100 * MiB, 10 * MiB),
	          E(3, "interrupted", 1, 100 * MiB, 10 * MiB)},
	         {P(false, 2, 0, 1, 0, false), P(false, 2, 0, 1, 0, true), P(true, 2, 0, 1, 0, false), FRESH,
	          FRESH, FRESH}},
	        {"--resume: what never finished runs, as with parallel's --resume (B2: not_started)",
	         MG_RESUME,
	         3,
	         {E(1, "not_started", 1, 100 * MiB, 0), E(2, "killed_after_grace", 1, 100 * MiB, 10 * MiB),
	          E(3, "killed_on_second_signal", 2, 100 * MiB, 10 * MiB)},
	         {P(true, 2, 0, 1, 0, false), P(true, 2, 0, 1, 0, false), P(true, 3, 0, 2, 0, false), FRESH,
	          FRESH, FRESH}},
	        {"--resume-failed: failures and interrupted tasks run again, at the next attempt",
	         MG_RESUME_FAILED,
	         3,
	         {E(1, "ok", 1, 100 * MiB, 10 * MiB), E(2, "failed", 1, 100 * MiB, 10 * MiB),
	          E(3, "interrupted", 1, 100 * MiB, 10 * MiB)},
	         {P(false, 2, 0, 1, 0, false), P(true, 2, 0, 1, 0, true), P(true, 2, 0, 1, 0, false), FRESH,
	          FRESH, FRESH}},
	        {"a retry that a stop cut off is made on --resume, with its share",
	         MG_RESUME,
	         1,
	         {E(4, "oom_killed", 1, 100 * MiB, 100 * MiB)},
	         {FRESH, FRESH, FRESH, P(true, 2, 200 * MiB, 1, 1, false), FRESH, FRESH}},
	        {"B3: a retry interrupted while it ran keeps its larger share, and its retries count on",
	         MG_RESUME_FAILED,
	         2,
	         {E(4, "oom_killed", 1, 100 * MiB, 100 * MiB), E(4, "interrupted", 2, 200 * MiB, 120 * MiB)},
	         {FRESH, FRESH, FRESH, P(true, 3, 200 * MiB, 2, 1, false), FRESH, FRESH}},
	        {"B3: the same under --resume",
	         MG_RESUME,
	         2,
	         {E(4, "oom_killed", 1, 100 * MiB, 100 * MiB), E(4, "interrupted", 2, 200 * MiB, 120 * MiB)},
	         {FRESH, FRESH, FRESH, P(true, 3, 200 * MiB, 2, 1, false), FRESH, FRESH}},
	        {"an interrupted first attempt runs at this run's share",
	         MG_RESUME,
	         2,
	         {E(4, "interrupted", 1, 100 * MiB, 100 * MiB), E(5, "interrupted", 2, 300 * MiB, 10 * MiB)},
	         {FRESH, FRESH, FRESH, P(true, 2, 0, 1, 0, false), P(true, 3, 0, 2, 0, false), FRESH}},
	        {"an interrupted attempt between memory failures does not use up a retry",
	         MG_RESUME,
	         3,
	         {E(4, "oom_killed", 1, 100 * MiB, 100 * MiB), E(4, "interrupted", 2, 200 * MiB, 12 * MiB),
	          E(4, "oom_killed", 3, 200 * MiB, 200 * MiB)},
	         {FRESH, FRESH, FRESH, P(true, 4, 400 * MiB, 3, 2, false), FRESH, FRESH}},
	        {"ok at a retry: done; the earlier failure does not count",
	         MG_RESUME_FAILED,
	         2,
	         {E(5, "oom_killed", 1, 100 * MiB, 100 * MiB), E(5, "ok", 2, 200 * MiB, 150 * MiB)},
	         {FRESH, FRESH, FRESH, FRESH, P(false, 3, 0, 2, 1, false), FRESH}},
	        {"retries used up: done under --resume",
	         MG_RESUME,
	         3,
	         {E(6, "oom_killed", 1, 100 * MiB, 100 * MiB), E(6, "oom_killed", 3, 400 * MiB, 400 * MiB),
	          E(6, "oom_killed", 2, 200 * MiB, 200 * MiB)},
	         {FRESH, FRESH, FRESH, FRESH, FRESH, P(false, 4, 0, 3, 3, true)}},
	        {"retries used up: --resume-failed runs it with a larger share",
	         MG_RESUME_FAILED,
	         3,
	         {E(6, "oom_killed", 1, 100 * MiB, 100 * MiB), E(6, "oom_killed", 3, 400 * MiB, 400 * MiB),
	          E(6, "oom_killed", 2, 200 * MiB, 200 * MiB)},
	         {FRESH, FRESH, FRESH, FRESH, FRESH, P(true, 4, 800 * MiB, 3, 0, true)}},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		const struct resume_case *k = &cases[c];
		struct mg_resume_input in = {.mode = k->mode,
		                             .commands = cmds,
		                             .ntasks = NT,
		                             .entries = k->entries,
		                             .nentries = k->nentries,
		                             .retries = 2,
		                             .budget = 800 * MiB,
		                             .page_size = 4096};
		struct mg_resume_plan got[NT];
		char err[256] = "";

		assert_int_equal(mg_resume_decide(&in, got, err, sizeof(err)), 0);
		for (size_t i = 0; i < NT; i++) {
			const struct mg_resume_plan *w = &k->want[i], *g = &got[i];
			if (g->run != w->run || g->attempt != w->attempt || g->share != w->share ||
			    g->prior != w->prior || g->retried != w->retried ||
			    g->failed_before != w->failed_before)
				print_error("%s: task %zu: run %d attempt %u share %llu prior %u retried %u "
				            "failed %d\n",
				            k->name, i + 1, g->run, g->attempt, (unsigned long long)g->share,
				            g->prior, g->retried, g->failed_before);
			assert_int_equal(g->run, w->run);
			assert_int_equal(g->attempt, w->attempt);
			assert_int_equal(g->share, w->share);
			assert_int_equal(g->prior, w->prior);
			assert_int_equal(g->retried, w->retried);
			assert_int_equal(g->failed_before, w->failed_before);
		}
	}
}

/* The first line that no longer matches is named, with what changed: the
 * task list (some lines differ) or the command (every line does). */
static void resume_changed_task_file(void **state)
{
	struct mg_joblog_entry e[] = {E(1, "ok", 1, 1, 1), E(2, "ok", 1, 1, 1)};
	struct mg_resume_plan got[NT];
	char err[512] = "";
	struct mg_resume_input in = {
	        .mode = MG_RESUME, .commands = cmds, .ntasks = NT, .entries = e, .nentries = 2, .budget = 1};

	e[1].command = "t 2 edited";
	assert_int_equal(mg_resume_decide(&in, got, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "joblog j: line 12: task 2 ran \"t 2 edited\""));
	assert_non_null(strstr(err, "this run makes it \"t 2\": the task file changed"));

	/* Every line differs: the command changed, not the task file. */
	e[0].command = "u 1";
	e[1].command = "u 2";
	assert_int_equal(mg_resume_decide(&in, got, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err,
	                       "joblog j: line 11: task 1 ran \"u 1\", and this run makes it \"t 1\": the "
	                       "command changed since the joblog was written"));
	assert_null(strstr(err, "task file"));

	/* With {%}, lines match by Seq alone: the slot may differ. */
	in.seq_only = true;
	assert_int_equal(mg_resume_decide(&in, got, err, sizeof(err)), 0);
	in.seq_only = false;

	e[0].command = cmds[0];
	e[1].command = cmds[1];
	e[1].seq = 7; /* beyond the list's 6 */
	in.list = "inputs";
	assert_int_equal(mg_resume_decide(&in, got, err, sizeof(err)), -EBADMSG);
	assert_non_null(
	        strstr(err, "joblog j: line 12 is task 7, and this run has 6 tasks: the inputs changed"));
}

/* A control byte is written \xHH; a joblog with it raw (from before) still matches. */
static void command_control_bytes(void **state)
{
	char *argv[] = {"echo", "a\033[31mb\x7f", NULL};
	char *s = mg_joblog_command(argv);

	assert_string_equal(s, "echo a\\x1b[31mb\\x7f");
	assert_true(mg_joblog_command_equal(s, "echo a\033[31mb\x7f"));
	assert_true(mg_joblog_command_equal("a\\tb", "a\tb"));
	assert_false(mg_joblog_command_equal(s, "echo a[31mb"));
	assert_false(mg_joblog_command_equal("a\\\\x41", "aA")); /* an escaped backslash, then x41 */
	assert_true(mg_joblog_command_equal("a\\x41", "aA"));
	free(s);
}

static char *file_text(const char *path)
{
	char *text = NULL;
	assert_true(mg_read_file(path, &text) >= 0);
	return text;
}

/* B1: a cut last line is cut off before the next line is appended, so the
 * joblog still parses; a new run empties it; one memguard holds its lock. */
static void joblog_file_mended_and_locked(void **state)
{
	char dir[] = "/tmp/mgtest-joblog.XXXXXX", path[64], *text;
	const char *line = "1\th\t1.0\t1.0\t0\t0\t0\t0\t1\t-\t0\tok\t1\ta\n";
	struct mg_joblog_entry *e = NULL;
	size_t n = 0;
	char err[256];
	int fd, other;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/j.log", dir);
	assert_int_equal(mg_joblog_open(path, false, true), -ENOENT);
	fd = mg_joblog_open(path, true, true);
	assert_true(fd >= 0);
	assert_int_equal(mg_joblog_open(path, true, true), -EWOULDBLOCK); /* a second memguard */
	other = mg_joblog_open(path, true, false);                        /* a node of its own needs none */
	assert_true(other >= 0);
	close(other);

	assert_int_equal(mg_joblog_prepare(fd, true), 0); /* new: the header */
	assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	assert_int_equal(write(fd, "2\th\t1.0\t1", 10), 10); /* cut off */
	assert_int_equal(mg_joblog_prepare(fd, true), 10);
	assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	text = file_text(path);
	assert_int_equal(mg_joblog_parse(text, "j", &e, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	free(text);
	assert_int_equal(mg_joblog_prepare(fd, true), 0); /* whole: nothing to cut */

	/* The header itself cut off: written again. */
	assert_int_equal(ftruncate(fd, 5), 0);
	assert_int_equal(mg_joblog_prepare(fd, true), 5);
	text = file_text(path);
	assert_string_equal(text, MG_JOBLOG_HEADER);
	free(text);

	/* Not resuming: emptied, as GNU parallel does. */
	assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	assert_true(mg_joblog_prepare(fd, false) > 0);
	text = file_text(path);
	assert_string_equal(text, MG_JOBLOG_HEADER);
	free(text);

	close(fd);
	fd = mg_joblog_open(path, false, true); /* the lock went with the fd */
	assert_true(fd >= 0);
	close(fd);
	free(e);
	unlink(path);
	rmdir(dir);
}

/* memguard report: lines of several joblogs grouped by Seq. */
static void merge_joblogs(void **state)
{
	struct mg_joblog_entry e[] = {
	        E(1, "ok", 1, 100 * MiB, 10 * MiB),
	        E(2, "oom_killed", 1, 100 * MiB, 100 * MiB),
	        E(2, "ok", 2, 200 * MiB, 150 * MiB), /* from another node's joblog, say */
	        E(4, "oom_killed", 1, 100 * MiB, 100 * MiB),
	        E(4, "killed_by_memguardd", 3, 400 * MiB, 400 * MiB),
	        E(4, "oom_killed", 2, 200 * MiB, 200 * MiB),
	        E(5, "interrupted", 1, 100 * MiB, 1 * MiB),
	        E(5, "ok", 1, 100 * MiB, 1 * MiB),
	};
	struct mg_merged m;

	e[7].command = "edited"; /* seq 5 with two command texts */
	assert_int_equal(mg_merge_joblogs(e, 8, &m), 0);
	assert_int_equal(m.ntasks, 5);
	assert_int_equal(m.seen, 4); /* seq 3 has no line */
	assert_null(m.tasks[2].last);
	assert_int_equal(m.ok, 3);
	assert_int_equal(m.failed, 1);
	assert_int_equal(m.retries, 1 + 2 + 1);
	assert_int_equal(m.memory_kills, 4);
	assert_int_equal(m.conflicts, 1);
	assert_true(m.tasks[1].ok);
	assert_int_equal(m.tasks[1].last->attempt, 2);
	assert_false(m.tasks[3].ok);
	assert_int_equal(m.tasks[3].attempts, 3);
	assert_string_equal(m.tasks[3].last->outcome, "killed_by_memguardd"); /* the highest attempt */
	assert_true(m.tasks[4].ok);
	assert_string_equal(m.tasks[4].last->outcome, "ok");
	mg_merge_done(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(outcome_words),
	        cmocka_unit_test(command_escaped),
	        cmocka_unit_test(format_parse_roundtrip),
	        cmocka_unit_test(parse_hostile_lines),
	        cmocka_unit_test(parse_files),
	        cmocka_unit_test(resume_table),
	        cmocka_unit_test(resume_changed_task_file),
	        cmocka_unit_test(command_control_bytes),
	        cmocka_unit_test(joblog_file_mended_and_locked),
	        cmocka_unit_test(merge_joblogs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
