/* Carrying out a kill: mg_act_log_json and mg_act_kill on fake trees.
 *
 * mg_act_kill() on a tree without cgroup.kill SIGKILLs every pid that the
 * tree's cgroup.procs files list: these tests only ever list pids of children
 * they forked themselves (blocked in pause()), and reap them all. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "guard/act.h"
#include "fake_tree.h"
#include "memguard/contract.h"
#include "memguard/log.h"
#include "memguard/util.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

struct fixture {
	struct fake_tree tree;
	struct ft_children children;
	char log[PATH_MAX];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->tree.fd = -1;
	*state = f;
	mg_log_setup("mgtest", MG_LOG_STDERR, LOG_INFO);
	ft_new_xattr(&f->tree, "mg_act_kill");
	snprintf(f->log, sizeof(f->log), "%s/log/kills.jsonl", f->tree.path);
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ft_children_cleanup(&f->children);
	ft_free(&f->tree);
	free(f);
	return 0;
}

static void assert_killed_by_sigkill(struct fixture *f, pid_t pid)
{
	int status = ft_children_reap(&f->children, pid, 3000);

	if (status == -1 || !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		print_error("child %d: status %#x, want killed by SIGKILL\n", (int)pid, (unsigned)status);
	assert_true(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void assert_still_alive(struct fixture *f, pid_t pid)
{
	int status = ft_children_reap(&f->children, pid, 100);

	if (status != -1)
		print_error("child %d died (status %#x), want it alive\n", (int)pid, (unsigned)status);
	assert_int_equal(status, -1);
}

/* Lists pid, one of our children, in the fake cgroup's cgroup.procs. */
static void list_pid(int dirfd, const char *cgroup, pid_t pid)
{
	char rel[PATH_MAX], line[32];

	snprintf(rel, sizeof(rel), "%s/cgroup.procs", cgroup);
	snprintf(line, sizeof(line), "%d\n", (int)pid);
	ft_write(dirfd, rel, line);
}

/* --- the JSON checker --- */

static const char checker_py[] =
        "import json, sys\n"
        "def bad(c):\n"
        "    raise ValueError('not JSON: ' + c)\n"
        "raw = open(sys.argv[1], 'rb').read().decode('utf-8')\n"
        "assert raw.endswith('\\n'), 'no final newline'\n"
        "keys = {'time', 'cgroup', 'current_bytes', 'share_bytes', 'dry_run', 'killed',\n"
        "        'decide_to_freed_ms', 'reason'}\n"
        "def num(v):\n"
        "    return isinstance(v, (int, float)) and not isinstance(v, bool)\n"
        "for line in raw[:-1].split('\\n'):\n"
        "    d = json.loads(line, parse_constant=bad)\n"
        "    assert isinstance(d, dict), d\n"
        "    assert set(d) - {'error'} == keys, sorted(d)\n"
        "    assert isinstance(d.get('error', ''), str), d\n"
        "    assert num(d['time']) and num(d['decide_to_freed_ms']), d\n"
        "    for k in ('current_bytes', 'share_bytes', 'killed'):\n"
        "        assert isinstance(d[k], int) and not isinstance(d[k], bool), (k, d[k])\n"
        "    assert isinstance(d['dry_run'], bool), d\n"
        "    assert isinstance(d['cgroup'], str) and isinstance(d['reason'], str), d\n"
        "    print('record cgroup=%s current=%d share=%d dry_run=%s killed=%d ms=%.1f reason=%s time=%d' % "
        "(\n"
        "        d['cgroup'].encode('utf-8').hex(), d['current_bytes'], d['share_bytes'],\n"
        "        'true' if d['dry_run'] else 'false', d['killed'], d['decide_to_freed_ms'],\n"
        "        d['reason'].encode('utf-8').hex(), int(d['time'])))\n"
        "    if 'error' in d:\n"
        "        print('error %s' % d['error'])\n";

/* Runs the checker over path: its output (heap), one "record ..." line per
 * JSON line; fails the test unless every line is valid. */
static char *check_json(const char *path)
{
	return ft_check_python(checker_py, path);
}

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

/* The checker's line for rec, without the time, which varies. */
static void expect_record(const char *out, const struct mg_kill_record *rec, int killed, const char *ms)
{
	char want[8192], cg[2048], why[4096];

	ft_hex(rec->path, cg, sizeof(cg));
	ft_hex(rec->why, why, sizeof(why));
	snprintf(want, sizeof(want),
	         "record cgroup=%s current=%" PRIu64 " share=%" PRIu64
	         " dry_run=%s killed=%d ms=%s reason=%s time=",
	         cg, rec->current, rec->share, rec->dry_run ? "true" : "false", killed, ms, why);
	ft_assert_contains(out, want);
}

/* The n-th "key=" value of the checker's output, as a number. */
static double record_value(const char *out, int nth, const char *key)
{
	const char *p = out;
	char k[32];

	for (int i = 0; i <= nth; i++) {
		p = strstr(p, "record ");
		assert_non_null(p);
		p += 7;
	}
	snprintf(k, sizeof(k), " %s=", key);
	p = strstr(p, k);
	assert_non_null(p);
	return strtod(p + strlen(k), NULL);
}

/* --- mg_act_log_json --- */

static void log_json_fields_and_escaping(void **state)
{
	struct fixture *f = *state;
	const struct mg_kill_record recs[] = {
	        {.path = "memguard/run-1/task-3",
	         .current = 2 * GiB,
	         .share = GiB,
	         .why = "2GiB against a 1GiB share while node memory pressure (full avg10) was 38.00% and "
	                "MemAvailable 200MiB"},
	        {.path = "memguard/run-\"x\"/task\\1",
	         .current = 1,
	         .share = 0,
	         .dry_run = true,
	         .why = "quote \" backslash \\ slash / tab \t nl \n cr \r bell \x07 esc \x1b us \x1f del "
	                "\x7f "
	                "utf-8 \xc3\xa9\xe6\x97\xa5"},
	        {.path = "", .current = UINT64_MAX, .share = UINT64_MAX - 1, .why = ""},
	};
	const int killed[] = {3, 0, 4096};
	const uint64_t freed[] = {12345, 0, 1500000};
	const char *const ms[] = {"12.3", "0.0", "1500.0"};
	time_t before = time(NULL);

	assert_false(ft_exists(f->tree.fd, "log"));
	for (size_t i = 0; i < MG_ARRAY_SIZE(recs); i++)
		assert_int_equal(mg_act_log_json(f->log, &recs[i], killed[i], freed[i], 0), 0);
	time_t after = time(NULL);

	/* One line per record: the newline in the reason is escaped. */
	char *raw = ft_read(f->tree.fd, "log/kills.jsonl", NULL);
	assert_int_equal(count_char(raw, '\n'), 3);
	ft_assert_contains(raw, "\"cgroup\":\"memguard/run-\\\"x\\\"/task\\\\1\"");
	ft_assert_contains(raw, "tab \\u0009 nl \\u000a cr \\u000d bell \\u0007 esc \\u001b us \\u001f");
	for (const char *p = raw; *p; p++)
		assert_true(*p == '\n' || (unsigned char)*p >= 0x20);
	free(raw);

	char *out = check_json(f->log);
	assert_int_equal(count_char(out, '\n'), 3);
	for (size_t i = 0; i < MG_ARRAY_SIZE(recs); i++) {
		expect_record(out, &recs[i], killed[i], ms[i]);
		double t = record_value(out, (int)i, "time");
		assert_true(t >= (double)before - 1 && t <= (double)after + 1);
	}
	free(out);

	/* Appends: the earlier lines stay. */
	assert_int_equal(mg_act_log_json(f->log, &recs[0], 7, 999, 0), 0);
	out = check_json(f->log);
	assert_int_equal(count_char(out, '\n'), 4);
	expect_record(out, &recs[1], 0, "0.0");
	expect_record(out, &recs[0], 7, "1.0");
	free(out);
}

struct log_error_case {
	const char *what;
	const char *rel; /* below the tree */
	int err;
};

static void log_json_errors(void **state)
{
	static const struct log_error_case cases[] = {
	        {"the directory is a plain file", "plain/kills.jsonl", -ENOTDIR},
	        {"the log is a directory", "adir", -EISDIR},
	        {"two missing levels", "no/such/kills.jsonl", -ENOENT},
	};
	struct fixture *f = *state;
	const struct mg_kill_record rec = {
	        .path = "memguard/run-1/task-0", .current = 1, .share = 1, .why = "x"};
	char path[PATH_MAX + 64];

	ft_write(f->tree.fd, "plain", "not a directory\n");
	ft_mkdir(f->tree.fd, "adir");
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		snprintf(path, sizeof(path), "%s/%s", f->tree.path, cases[i].rel);
		int r = mg_act_log_json(path, &rec, 0, 0, 0);
		if (r != cases[i].err)
			print_error("%s (%s): %d, want %d\n", cases[i].what, path, r, cases[i].err);
		assert_int_equal(r, cases[i].err);
	}
	assert_false(ft_exists(f->tree.fd, "no"));
	char *plain = ft_read(f->tree.fd, "plain", NULL);
	assert_string_equal(plain, "not a directory\n");
	free(plain);
}

/* A log path longer than 255 characters (well within PATH_MAX) gets its
 * directory created like a short one. */
static void log_json_long_path(void **state)
{
	struct fixture *f = *state;
	const struct mg_kill_record rec = {
	        .path = "memguard/run-1/task-0", .current = 1, .share = 1, .why = "x"};
	char dir[300], rel[400], path[PATH_MAX + 512];

	memset(dir, 'd', sizeof(dir) - 1);
	dir[sizeof(dir) - 1] = '\0';
	ft_mkdir(f->tree.fd, "a");
	snprintf(rel, sizeof(rel), "a/%.250s", dir); /* a 250-character directory name */
	snprintf(path, sizeof(path), "%s/%s/kills.jsonl", f->tree.path, rel);
	assert_true(strlen(path) > 256 && strlen(path) < PATH_MAX);

	int r = mg_act_log_json(path, &rec, 1, 0, 0);
	if (r != 0)
		print_error("mg_act_log_json(<%zu characters>/kills.jsonl): %d (%s), want 0\n",
		            strlen(path) - strlen("/kills.jsonl"), r, strerror(-r));
	assert_int_equal(r, 0);
	assert_true(ft_exists(f->tree.fd, rel));
	char *out = check_json(path);
	expect_record(out, &rec, 1, "0.0");
	free(out);
}

/* --- mg_act_kill --- */

#define TASK "memguard/run-1/task-0"
#define WHY                                                                                                  \
	"2GiB against a 1GiB share while node memory pressure (full avg10) was 38.00% and MemAvailable "     \
	"200MiB"

static ssize_t get_killed_xattr(int dirfd, char *buf, size_t size)
{
	int cg = ft_open_dir(dirfd, TASK);
	ssize_t n = fgetxattr(cg, MG_XATTR_KILLED, buf, size - 1);
	int err = errno;

	close(cg);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	return n;
}

static void kill_dry_run(void **state)
{
	struct fixture *f = *state;
	struct mg_kill_record rec = {
	        .path = TASK,
	        .current = 2 * GiB,
	        .share = GiB,
	        .why = WHY,
	        .dry_run = true,
	        .decided_usec = mg_now_usec(),
	};
	struct ft_capture cap;
	char xattr[512];
	pid_t top = ft_children_fork(&f->children), nested = ft_children_fork(&f->children);

	/* No cgroup.kill: acting for real would SIGKILL the children. */
	list_pid(f->tree.fd, TASK, top);
	list_pid(f->tree.fd, TASK "/sub", nested);
	ft_write(f->tree.fd, TASK "/cgroup.events", "populated 1\nfrozen 0\n");

	ft_capture_begin(&cap);
	int r = mg_act_kill(f->tree.fd, &rec, f->log);
	int r_nolog = mg_act_kill(f->tree.fd, &rec, NULL);
	char *err = ft_capture_end(&cap);
	assert_int_equal(r, 0);
	assert_int_equal(r_nolog, 0);
	ft_assert_contains(err, "dry run: would be killing cgroup " TASK ": " WHY);
	free(err);

	assert_still_alive(f, top);
	assert_still_alive(f, nested);
	assert_int_equal(get_killed_xattr(f->tree.fd, xattr, sizeof(xattr)), -ENODATA);
	assert_false(ft_exists(f->tree.fd, TASK "/cgroup.kill"));
	assert_false(ft_exists(f->tree.fd, TASK "/cgroup.freeze"));

	/* Exactly one line, from the call with a log. */
	char *out = check_json(f->log);
	assert_int_equal(count_char(out, '\n'), 1);
	expect_record(out, &rec, 0, "0.0");
	free(out);
}

static void kill_with_cgroup_kill(void **state)
{
	struct fixture *f = *state;
	struct mg_kill_record rec = {
	        .path = TASK,
	        .current = 2 * GiB,
	        .share = GiB,
	        .why = WHY,
	        .decided_usec = mg_now_usec() - 20000, /* decided 20 ms ago */
	};
	struct ft_capture cap;
	char xattr[512];
	pid_t child = ft_children_fork(&f->children);

	/* A plain file stands in for the kernel's cgroup.kill: what dies, the
	 * pidfd's SIGKILL killed, which comes first. */
	list_pid(f->tree.fd, TASK, child);
	ft_write(f->tree.fd, TASK "/cgroup.kill", "");
	ft_write(f->tree.fd, TASK "/cgroup.events", "populated 1\nfrozen 0\n");

	ft_capture_begin(&cap);
	int r = mg_act_kill(f->tree.fd, &rec, f->log);
	char *err = ft_capture_end(&cap);
	/* One process had a pidfd when cgroup.kill was written. */
	assert_int_equal(r, 1);
	ft_assert_contains(err, "killing cgroup " TASK ": " WHY);
	ft_assert_not_contains(err, "dry run");
	free(err);

	char *kill = ft_read(f->tree.fd, TASK "/cgroup.kill", NULL);
	assert_string_equal(kill, "1");
	free(kill);
	assert_int_equal(get_killed_xattr(f->tree.fd, xattr, sizeof(xattr)), (ssize_t)strlen(WHY));
	assert_string_equal(xattr, WHY);
	assert_false(ft_exists(f->tree.fd, TASK "/cgroup.freeze"));

	char *out = check_json(f->log);
	assert_int_equal(count_char(out, '\n'), 1);
	ft_assert_contains(out, " dry_run=false killed=1 ");
	double ms = record_value(out, 0, "ms");
	assert_true(ms >= 20.0 && ms < 60000.0);
	free(out);

	assert_killed_by_sigkill(f, child);
}

/* Issue 36, hole 4: the walk for pidfds before cgroup.kill goes
 * MG_KILL_WALK_DEPTH levels deep at most (before, it went down every level,
 * a directory held open at each: 9,000 nested cgroups cost memguardd 75 MiB
 * of locked memory). A process deeper gets no pidfd; cgroup.kill, written
 * on the victim, kills it all the same. */
static void kill_walk_is_bounded(void **state)
{
	struct fixture *f = *state;
	struct mg_kill_record rec = {.path = TASK, .why = WHY, .decided_usec = mg_now_usec()};
	struct ft_capture cap;
	char path[PATH_MAX] = TASK;
	pid_t shallow = ft_children_fork(&f->children), deep = ft_children_fork(&f->children);

	ft_write(f->tree.fd, TASK "/cgroup.kill", "");
	ft_write(f->tree.fd, TASK "/cgroup.procs", "");
	for (unsigned depth = 1; depth <= MG_KILL_WALK_DEPTH + 8; depth++) {
		strcat(path, "/d");
		ft_mkdir(f->tree.fd, path);
		if (depth == 3)
			list_pid(f->tree.fd, path, shallow);
		else if (depth == MG_KILL_WALK_DEPTH + 1)
			list_pid(f->tree.fd, path, deep);
	}
	ft_capture_begin(&cap);
	int r = mg_act_kill(f->tree.fd, &rec, NULL);
	char *err = ft_capture_end(&cap);
	assert_int_equal(r, 1); /* the shallow one's pidfd only */
	ft_assert_contains(err, "at least 1 process killed");
	ft_assert_contains(err, "cgroup.kill took the rest");
	free(err);
	char *kill = ft_read(f->tree.fd, TASK "/cgroup.kill", NULL);
	assert_string_equal(kill, "1");
	free(kill);

	static const struct {
		unsigned depth;
		size_t cgroups;
		bool want;
	} cases[] = {
	        {0, 0, true},     {MG_KILL_WALK_DEPTH, 0, true},       {MG_KILL_WALK_DEPTH + 1, 0, false},
	        {9000, 0, false}, {1, MG_KILL_WALK_CGROUPS - 1, true}, {1, MG_KILL_WALK_CGROUPS, false},
	};
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++)
		assert_int_equal(mg_act_walk_within(cases[i].depth, cases[i].cgroups), cases[i].want);
}

static void kill_freeze_fallback(void **state)
{
	struct fixture *f = *state;
	struct mg_kill_record rec = {
	        .path = TASK,
	        .current = 3 * GiB,
	        .share = GiB,
	        .why = WHY,
	        .decided_usec = mg_now_usec(),
	};
	struct ft_capture cap;
	char xattr[512];
	pid_t top = ft_children_fork(&f->children), nested = ft_children_fork(&f->children),
	      deeper = ft_children_fork(&f->children);

	/* No cgroup.kill: freeze, SIGKILL each pid in the subtree, thaw. */
	list_pid(f->tree.fd, TASK, top);
	list_pid(f->tree.fd, TASK "/a", nested);
	list_pid(f->tree.fd, TASK "/a/b", deeper);
	ft_write(f->tree.fd, TASK "/c/cgroup.procs", "");
	ft_write(f->tree.fd, TASK "/cgroup.freeze", "0");

	ft_capture_begin(&cap);
	int r = mg_act_kill(f->tree.fd, &rec, f->log);
	char *err = ft_capture_end(&cap);
	free(err);
	assert_int_equal(r, 3);

	assert_killed_by_sigkill(f, top);
	assert_killed_by_sigkill(f, nested);
	assert_killed_by_sigkill(f, deeper);
	/* Thawed again. */
	char *freeze = ft_read(f->tree.fd, TASK "/cgroup.freeze", NULL);
	assert_string_equal(freeze, "0");
	free(freeze);
	assert_int_equal(get_killed_xattr(f->tree.fd, xattr, sizeof(xattr)), (ssize_t)strlen(WHY));
	assert_string_equal(xattr, WHY);

	char *out = check_json(f->log);
	assert_int_equal(count_char(out, '\n'), 1);
	ft_assert_contains(out, " dry_run=false killed=3 ");
	free(out);
}

static void kill_gone_or_not_a_cgroup(void **state)
{
	struct fixture *f = *state;
	struct mg_kill_record rec = {
	        .path = "memguard/run-1/task-404", .current = GiB, .share = 1, .why = WHY};
	struct ft_capture cap;

	ft_write(f->tree.fd, "memguard/run-1/cgroup.procs", "");
	ft_write(f->tree.fd, "memguard/run-1/plain", "x\n");
	ft_capture_begin(&cap);
	int gone = mg_act_kill(f->tree.fd, &rec, f->log);
	rec.path = "memguard/run-9/task-0";
	int gone_run = mg_act_kill(f->tree.fd, &rec, f->log);
	rec.dry_run = true;
	int gone_dry = mg_act_kill(f->tree.fd, &rec, f->log);
	rec.dry_run = false;
	rec.path = "memguard/run-1/plain";
	int plain = mg_act_kill(f->tree.fd, &rec, f->log);
	char *err = ft_capture_end(&cap);

	assert_int_equal(gone, 0);
	assert_int_equal(gone_run, 0);
	assert_int_equal(gone_dry, 0);
	assert_int_equal(plain, -ENOTDIR);
	ft_assert_contains(err, "memguard/run-1/plain");
	free(err);
	/* Nothing was killed, so nothing was logged. */
	assert_false(ft_exists(f->tree.fd, "log/kills.jsonl"));
	assert_false(ft_exists(f->tree.fd, "memguard/run-1/task-404"));
}

/* A cgroup.kill that cannot be written: nothing died, so the kill is an
 * error, and the kill log says so instead of counting the pidfds. */
static void kill_that_fails_is_an_error(void **state)
{
	struct fixture *f = *state;
	struct mg_kill_record rec = {
	        .path = TASK, .current = 2 * GiB, .share = GiB, .why = WHY, .decided_usec = mg_now_usec()};
	struct ft_capture cap;
	pid_t child = ft_children_fork(&f->children);

	list_pid(f->tree.fd, TASK, child);
	ft_mkdir(f->tree.fd, TASK "/cgroup.kill");

	ft_capture_begin(&cap);
	int r = mg_act_kill(f->tree.fd, &rec, f->log);
	char *err = ft_capture_end(&cap);
	assert_int_equal(r, -EISDIR);
	ft_assert_contains(err, "kill cgroup " TASK ": ");
	ft_assert_contains(err, "1 process it holds killed through pidfds");
	free(err);
	/* The pidfds' SIGKILL came before the cgroup.kill that failed. */
	assert_killed_by_sigkill(f, child);

	char *out = check_json(f->log);
	ft_assert_contains(out, " dry_run=false killed=1 ");
	ft_assert_contains(out, "error Is a directory\n");
	free(out);
}

/* A cgroup path is bytes, not always UTF-8: the line must stay JSON. */
static void log_json_invalid_utf8(void **state)
{
	struct fixture *f = *state;
	const struct mg_kill_record rec = {.path = "memguard/run-\xff/task-\xc3(\xed\xa0\x80\xf4\x90\x80\x80",
	                                   .current = 1,
	                                   .share = 1,
	                                   .why = "ok \xc3\xa9 \xf0\x9f\x90\xa7"};

	assert_int_equal(mg_act_log_json(f->log, &rec, 1, 0, 0), 0);
	char *raw = ft_read(f->tree.fd, "log/kills.jsonl", NULL);
	/* Each bad byte (a stray lead, a truncated pair, a surrogate, above U+10FFFF) is U+FFFD. */
	ft_assert_contains(raw, "\"cgroup\":\"memguard/run-\\ufffd/task-\\ufffd(\\ufffd\\ufffd\\ufffd"
	                        "\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* Valid sequences pass through as they are. */
	ft_assert_contains(raw, "\"reason\":\"ok \xc3\xa9 \xf0\x9f\x90\xa7\"");
	free(raw);
	free(check_json(f->log));
}

/* --- the throttle step --- */

/* Sets TASK's memory.high to exactly value (the fake file is not truncated by writes). */
static void set_high(struct fixture *f, const char *value)
{
	ft_write(f->tree.fd, TASK "/memory.high", value);
}

/* TASK's memory.high, up to its first newline (a write leaves the old tail of a longer value), is want. */
static void assert_high(struct fixture *f, const char *want)
{
	char *high = ft_read(f->tree.fd, TASK "/memory.high", NULL);

	high[strcspn(high, "\n")] = '\0';
	assert_string_equal(high, want);
	free(high);
}

/* Unthrottles TASK, whose memory.high file starts empty, and expects want in it. */
static void assert_unthrottles_to(struct fixture *f, const char *want)
{
	set_high(f, "");
	assert_int_equal(mg_act_unthrottle(f->tree.fd, TASK), 0);
	assert_high(f, want);
	assert_int_equal(mg_act_is_throttled(f->tree.fd, TASK), 0);
}

static void throttle_and_restore(void **state)
{
	struct fixture *f = *state;

	/* The fence is saved in a trusted xattr: root on a filesystem with them. */
	ft_require_trusted_xattr(&f->tree, "mg_act_throttle");
	ft_mkdir(f->tree.fd, TASK);
	/* No memory.high of its own: a fence at 2 GiB + 100 MiB to spare, and back to max. */
	set_high(f, "max\n");
	assert_int_equal(mg_act_is_throttled(f->tree.fd, TASK), 0);
	assert_int_equal(mg_act_throttle(f->tree.fd, TASK, 2 * GiB, GiB, 100 * MiB), 1);
	assert_high(f, "2252341248");
	assert_int_equal(mg_act_is_throttled(f->tree.fd, TASK), 1);
	assert_unthrottles_to(f, "max");

	/* The launcher's memory.high comes back, not max. */
	set_high(f, "1900000000\n");
	assert_int_equal(mg_act_throttle(f->tree.fd, TASK, 1700000000, GiB, 100000000), 1);
	assert_high(f, "1800000000");
	assert_unthrottles_to(f, "1900000000");

	/* Never below the share: nothing to spare puts the fence at the share. */
	set_high(f, "max\n");
	assert_int_equal(mg_act_throttle(f->tree.fd, TASK, GiB / 2, GiB, 0), 1);
	assert_high(f, "1073741824");
	assert_unthrottles_to(f, "max");

	/* A saved "1" (what an older memguardd wrote) is no limit to restore. */
	int cg = ft_open_dir(f->tree.fd, TASK);
	assert_int_equal(fsetxattr(cg, MG_XATTR_FENCE, "1", 1, 0), 0);
	close(cg);
	assert_unthrottles_to(f, "max");
}

/* The saved memory.high is a trusted xattr: root's alone. */
static void throttle_saves_in_trusted_xattr(void **state)
{
	struct fixture *f = *state;
	char saved[32];

	/* The fence is saved in a trusted xattr: root on a filesystem with them. */
	ft_require_trusted_xattr(&f->tree, "mg_act_throttle");
	assert_string_equal(MG_XATTR_FENCE, "trusted.memguard.fence");
	ft_mkdir(f->tree.fd, TASK);
	set_high(f, "1900000000\n");
	assert_int_equal(mg_act_throttle(f->tree.fd, TASK, 1700000000, GiB, 100000000), 1);
	int cg = ft_open_dir(f->tree.fd, TASK);
	ssize_t n = fgetxattr(cg, "trusted.memguard.fence", saved, sizeof(saved) - 1);
	assert_int_equal(n, 10);
	saved[n] = '\0';
	assert_string_equal(saved, "1900000000");
	assert_int_equal(fgetxattr(cg, "user.memguard.throttled", saved, sizeof(saved)), -1);
	assert_int_equal(errno, ENODATA);
	close(cg);
	assert_unthrottles_to(f, "1900000000");
}

/* A user who owns their cgroup sets user.memguard.throttled in advance, as
 * older versions kept the fence there: it must not count as fenced (the fence
 * would then never apply), nor be restored as memory.high. */
static void forged_user_throttled_is_ignored(void **state)
{
	struct fixture *f = *state;
	static const char *const forged[] = {"max", "1", "1900000000", "99999999999"};

	/* The fence is saved in a trusted xattr: root on a filesystem with them. */
	ft_require_trusted_xattr(&f->tree, "mg_act_throttle");
	ft_mkdir(f->tree.fd, TASK);
	for (size_t i = 0; i < MG_ARRAY_SIZE(forged); i++) {
		int cg = ft_open_dir(f->tree.fd, TASK);
		assert_int_equal(fsetxattr(cg, "user.memguard.throttled", forged[i], strlen(forged[i]), 0),
		                 0);
		close(cg);
		set_high(f, "1200000000\n");
		assert_int_equal(mg_act_is_throttled(f->tree.fd, TASK), 0);
		/* The fence applies all the same, and lifting it restores the real value. */
		assert_int_equal(mg_act_throttle(f->tree.fd, TASK, 1000000000, GiB / 2, 100000000), 1);
		assert_high(f, "1100000000");
		assert_int_equal(mg_act_is_throttled(f->tree.fd, TASK), 1);
		assert_unthrottles_to(f, "1200000000");
	}
}

static void throttle_with_nothing_to_lower(void **state)
{
	struct fixture *f = *state;

	ft_mkdir(f->tree.fd, TASK);
	/* memory.high already at or below the fence. */
	set_high(f, "1000000000\n");
	assert_int_equal(mg_act_throttle(f->tree.fd, TASK, 2 * GiB, GiB / 2, 0), 0);
	assert_int_equal(mg_act_throttle(f->tree.fd, TASK, 900000000, GiB / 2, 100000000), 0);
	assert_high(f, "1000000000");
	assert_int_equal(mg_act_is_throttled(f->tree.fd, TASK), 0);
	/* Gone: nothing to do, not an error. */
	assert_int_equal(mg_act_throttle(f->tree.fd, "memguard/run-1/task-404", 2 * GiB, GiB, 0), 0);
	assert_int_equal(mg_act_unthrottle(f->tree.fd, "memguard/run-1/task-404"), 0);
}

/* A fence raised step by step from what the task holds, kept saved, and
 * lifted once it would reach the memory.high the task had before. */
static void widen_raises_then_lifts(void **state)
{
	struct fixture *f = *state;

	/* The fence is saved in a trusted xattr: root on a filesystem with them. */
	ft_require_trusted_xattr(&f->tree, "mg_act_widen");
	ft_mkdir(f->tree.fd, TASK);
	set_high(f, "1900000000\n");
	assert_int_equal(mg_act_throttle(f->tree.fd, TASK, 1700000000, GiB, 100000000), 1);
	assert_high(f, "1800000000");

	/* Held below the fence: from the fence. */
	ft_write(f->tree.fd, TASK "/memory.current", "1790000000\n");
	assert_int_equal(mg_act_widen(f->tree.fd, TASK, 50000000, "test"), 1);
	assert_high(f, "1850000000");
	assert_int_equal(mg_act_is_throttled(f->tree.fd, TASK), 1);
	/* Over it (memory.high is a throttle): from what it holds. */
	ft_write(f->tree.fd, TASK "/memory.current", "1860000000\n");
	assert_int_equal(mg_act_widen(f->tree.fd, TASK, 20000000, "test"), 1);
	assert_high(f, "1880000000");
	/* Nothing to add: nothing done. */
	assert_int_equal(mg_act_widen(f->tree.fd, TASK, 0, "test"), 0);
	assert_high(f, "1880000000");
	/* At the memory.high it had, the fence is lifted: saved value back, record gone. */
	assert_int_equal(mg_act_widen(f->tree.fd, TASK, 20000000, "test"), 2);
	assert_high(f, "1900000000");
	assert_int_equal(mg_act_is_throttled(f->tree.fd, TASK), 0);

	/* Without a memory.high of its own there is no ceiling. */
	set_high(f, "max\n");
	assert_int_equal(mg_act_throttle(f->tree.fd, TASK, 2 * GiB, GiB, 100 * MiB), 1);
	ft_write(f->tree.fd, TASK "/memory.current", "0\n");
	assert_int_equal(mg_act_widen(f->tree.fd, TASK, 64 * GiB, "test"), 1);
	assert_high(f, "70971817984");
	assert_int_equal(mg_act_is_throttled(f->tree.fd, TASK), 1);
	assert_unthrottles_to(f, "max");

	/* Gone: nothing to do, not an error. */
	assert_int_equal(mg_act_widen(f->tree.fd, "memguard/run-1/task-404", GiB, "test"), 0);
}

/* Kernels without process_mrelease (before 5.15) or without pidfds (before
 * 5.3): the freeze fallback still kills, and mg_act_kill must still say how
 * many. A forked helper runs mg_act_kill under a seccomp filter that makes
 * those system calls fail with ENOSYS, as the old kernel would. */
struct old_kernel_case {
	const char *what;
	int nr[3];
	size_t n_nr;
};

static void deny_syscalls(const int *nr, size_t n)
{
	struct sock_filter prog[16];
	size_t k = 0;

	prog[k++] =
	        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < n; i++) {
		prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr[i], 0, 1);
		prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		                                         SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
	}
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog fprog = {.len = (unsigned short)k, .filter = prog};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) < 0)
		_exit(201);
}

static void kill_counts_on_old_kernels(void **state)
{
#if !defined(__x86_64__)
	fail_msg("the seccomp filter of this test is written for x86_64");
#endif
	static const struct old_kernel_case cases[] = {
	        {"5.3 to 5.14: no process_mrelease", {SYS_process_mrelease}, 1},
	        {"before 5.3: no pidfds either",
	         {SYS_process_mrelease, SYS_pidfd_open, SYS_pidfd_send_signal},
	         3},
	};
	struct fixture *f = *state;
	char rel[64];

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_kill_record rec = {
		        .path = rel,
		        .current = 3 * GiB,
		        .share = GiB,
		        .why = WHY,
		        .decided_usec = mg_now_usec(),
		};
		pid_t top = ft_children_fork(&f->children), nested = ft_children_fork(&f->children);

		char sub[128];
		snprintf(rel, sizeof(rel), "memguard/run-1/task-%zu", i);
		snprintf(sub, sizeof(sub), "%s/sub", rel);
		list_pid(f->tree.fd, rel, top);
		list_pid(f->tree.fd, sub, nested);

		fflush(NULL);
		pid_t helper = fork();
		assert_true(helper >= 0);
		if (helper == 0) {
			int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
			if (devnull >= 0)
				dup2(devnull, STDERR_FILENO);
			deny_syscalls(cases[i].nr, cases[i].n_nr);
			int r = mg_act_kill(f->tree.fd, &rec, f->log);
			_exit(r < 0 ? 200 : r > 199 ? 199 : r);
		}
		int status;
		while (waitpid(helper, &status, 0) < 0)
			assert_int_equal(errno, EINTR);
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status) == 201)
			fail_msg("cannot install a seccomp filter here");
		assert_killed_by_sigkill(f, top);
		assert_killed_by_sigkill(f, nested);
		if (WEXITSTATUS(status) != 2)
			print_error("%s: mg_act_kill returned %d after killing 2 processes, want 2\n",
			            cases[i].what, WEXITSTATUS(status));
		assert_int_equal(WEXITSTATUS(status), 2);
	}
	char *out = check_json(f->log);
	assert_int_equal(count_char(out, '\n'), MG_ARRAY_SIZE(cases));
	ft_assert_not_contains(out, "killed=0");
	free(out);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	        T(log_json_fields_and_escaping),
	        T(log_json_errors),
	        T(log_json_long_path),
	        T(kill_dry_run),
	        T(kill_with_cgroup_kill),
	        T(kill_walk_is_bounded),
	        T(kill_freeze_fallback),
	        T(kill_gone_or_not_a_cgroup),
	        T(kill_counts_on_old_kernels),
	        T(kill_that_fails_is_an_error),
	        T(log_json_invalid_utf8),
	        T(throttle_and_restore),
	        T(throttle_with_nothing_to_lower),
	        T(widen_raises_then_lifts),
	        T(throttle_saves_in_trusted_xattr),
	        T(forged_user_throttled_is_ignored),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
