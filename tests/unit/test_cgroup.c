/* cgroup.h on fake trees in a temp directory; no real cgroup is touched.
 *
 * mg_cg_kill() on a tree without cgroup.kill SIGKILLs every pid that the
 * tree's cgroup.procs files list: these tests only ever list pids of children
 * they forked themselves (blocked in pause()). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_tree.h"
#include "memguard/cgroup.h"
#include "memguard/log.h"
#include "memguard/units.h"
#include "memguard/util.h"

struct fixture {
	struct fake_tree tree;
	struct ft_children children;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->tree.fd = -1;
	*state = f;
	mg_log_setup("mgtest", MG_LOG_STDERR, LOG_INFO);
	ft_new(&f->tree);
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

static void assert_file(int dirfd, const char *name, const char *expect)
{
	char *got = ft_read(dirfd, name, NULL);

	if (strcmp(got, expect) != 0)
		print_error("%s: \"%s\", want \"%s\"\n", name, got, expect);
	assert_string_equal(got, expect);
	free(got);
}

/* --- open, create, remove --- */

static void open_and_create(void **state)
{
	struct fixture *f = *state;
	int fd, fd2;

	assert_int_equal(mg_cg_open(f->tree.fd, "missing"), -ENOENT);
	ft_write(f->tree.fd, "memory.max", "max\n");
	assert_int_equal(mg_cg_open(f->tree.fd, "memory.max"), -ENOTDIR);

	fd = mg_cg_create(f->tree.fd, "job");
	assert_true(fd >= 0);
	assert_true(ft_exists(f->tree.fd, "job"));
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	/* The fd is the new directory: a file made through it lands inside. */
	ft_write(fd, "cgroup.procs", "");
	assert_true(ft_exists(f->tree.fd, "job/cgroup.procs"));
	assert_int_equal(mg_cg_create(f->tree.fd, "job"), -EEXIST);
	assert_int_equal(mg_cg_create(f->tree.fd, "nope/child"), -ENOENT);

	fd2 = mg_cg_open(f->tree.fd, "job");
	assert_true(fd2 >= 0);
	close(fd2);
	fd2 = mg_cg_create(fd, "nested");
	assert_true(fd2 >= 0);
	assert_true(ft_exists(f->tree.fd, "job/nested"));
	close(fd2);
	close(fd);
}

static void remove_nested_deepest_first(void **state)
{
	struct fixture *f = *state;

	/* Empty directories stand in for cgroups: rmdir of a parent before its
	 * children would fail with ENOTEMPTY, so success shows the order. */
	ft_mkdir(f->tree.fd, "job/a/b/c/d");
	ft_mkdir(f->tree.fd, "job/a/e");
	ft_mkdir(f->tree.fd, "job/f");
	ft_mkdir(f->tree.fd, "other");
	assert_int_equal(mg_cg_remove(f->tree.fd, "job"), 0);
	assert_false(ft_exists(f->tree.fd, "job"));
	assert_true(ft_exists(f->tree.fd, "other")); /* a sibling stays */

	/* Missing counts as removed, as does a second remove. */
	assert_int_equal(mg_cg_remove(f->tree.fd, "job"), 0);
	assert_int_equal(mg_cg_remove(f->tree.fd, "never-was"), 0);

	/* A single empty cgroup. */
	assert_int_equal(mg_cg_remove(f->tree.fd, "other"), 0);
	assert_false(ft_exists(f->tree.fd, "other"));
}

static void remove_reports_failure(void **state)
{
	struct fixture *f = *state;

	/* A directory that rmdir refuses (here: not empty, as a regular file
	 * keeps it busy) is an error, and the cgroup stays. */
	ft_mkdir(f->tree.fd, "job/a");
	ft_write(f->tree.fd, "job/a/keep", "x");
	assert_true(mg_cg_remove(f->tree.fd, "job") < 0);
	assert_true(ft_exists(f->tree.fd, "job/a/keep"));

	/* Not a directory. */
	ft_write(f->tree.fd, "file", "x");
	assert_int_equal(mg_cg_remove(f->tree.fd, "file"), -ENOTDIR);
	assert_true(ft_exists(f->tree.fd, "file"));
}

/* --- controllers --- */

static void has_controller_matches_whole_words(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(mg_cg_has_controller(f->tree.fd, "memory"), -ENOENT);
	ft_write(f->tree.fd, "cgroup.controllers", "cpu memory pids\n");
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "cpu"), 1);
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "memory"), 1);
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "pids"), 1);
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "mem"), 0);
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "memoryx"), 0);
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "emory"), 0);
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "pid"), 0);
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "io"), 0);
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "cpu memory"), 1); /* adjacent words */

	/* A near miss before the real word does not hide it. */
	ft_write(f->tree.fd, "cgroup.controllers", "memoryx xmemory memory\n");
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "memory"), 1);
	ft_write(f->tree.fd, "cgroup.controllers", "memoryx xmemory\n");
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "memory"), 0);

	/* An empty list (no controllers delegated). */
	ft_write(f->tree.fd, "cgroup.controllers", "\n");
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "memory"), 0);
	ft_write(f->tree.fd, "cgroup.controllers", "");
	assert_int_equal(mg_cg_has_controller(f->tree.fd, "memory"), 0);
}

/* An empty controller name is in no list. Runs in a child with an alarm so
 * that a hang fails the test instead of the whole run. */
static void has_controller_empty_name(void **state)
{
	struct fixture *f = *state;
	int status;
	pid_t pid;

	ft_write(f->tree.fd, "cgroup.controllers", "cpu memory pids\n");
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(2);
		_exit(mg_cg_has_controller(f->tree.fd, "") == 0 ? 0 : 1);
	}
	ft_children_add(&f->children, pid);
	status = ft_children_reap(&f->children, pid, 5000);
	if (WIFSIGNALED(status))
		print_error("mg_cg_has_controller(fd, \"\") did not return (killed by signal %d)\n",
		            WTERMSIG(status));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void enable_controllers_writes_spec(void **state)
{
	struct fixture *f = *state;

	ft_write(f->tree.fd, "cgroup.controllers", "cpu memory pids\n");
	ft_write(f->tree.fd, "cgroup.subtree_control", "");
	assert_int_equal(mg_cg_enable_controllers(f->tree.fd, "/fake", "memory pids", NULL, 0), 0);
	assert_file(f->tree.fd, "cgroup.subtree_control", "+memory +pids");

	ft_write(f->tree.fd, "cgroup.subtree_control", "");
	assert_int_equal(mg_cg_enable_controllers(f->tree.fd, "/fake", "  memory   pids  ", NULL, 0), 0);
	assert_file(f->tree.fd, "cgroup.subtree_control", "+memory +pids");

	ft_write(f->tree.fd, "cgroup.subtree_control", "");
	assert_int_equal(mg_cg_enable_controllers(f->tree.fd, "/fake", "memory", NULL, 0), 0);
	assert_file(f->tree.fd, "cgroup.subtree_control", "+memory");
}

static void enable_controllers_missing_controller(void **state)
{
	struct fixture *f = *state;
	struct ft_capture c;
	char *out, err[256];
	int r;

	ft_write(f->tree.fd, "cgroup.controllers", "cpu memory\n");
	ft_write(f->tree.fd, "cgroup.subtree_control", "");
	ft_capture_begin(&c);
	r = mg_cg_enable_controllers(f->tree.fd, "/fake/memguard", "memory pids", err, sizeof(err));
	out = ft_capture_end(&c);
	assert_string_equal(out, ""); /* lib/ logs nothing: the caller decides */
	assert_int_equal(r, -ENOENT);
	ft_assert_contains(err, "controller pids not enabled in /fake/memguard");
	free(out);
	/* Nothing half-enabled. */
	assert_file(f->tree.fd, "cgroup.subtree_control", "");

	/* "mem" is not "memory". */
	ft_capture_begin(&c);
	r = mg_cg_enable_controllers(f->tree.fd, "/fake", "mem", err, sizeof(err));
	out = ft_capture_end(&c);
	assert_string_equal(out, "");
	assert_int_equal(r, -ENOENT);
	ft_assert_contains(err, "controller mem not enabled");
	free(out);
	assert_file(f->tree.fd, "cgroup.subtree_control", "");
}

/* A controller name too long for the internal buffer must not be skipped
 * silently, which would report success for a controller nobody checked. */
static void enable_controllers_rejects_overlong_name(void **state)
{
	struct fixture *f = *state;
	struct ft_capture c;
	char *out, err[256];
	int r;

	ft_write(f->tree.fd, "cgroup.controllers", "cpu memory pids\n");
	ft_write(f->tree.fd, "cgroup.subtree_control", "");
	ft_capture_begin(&c);
	r = mg_cg_enable_controllers(f->tree.fd, "/fake", "memory_controller_with_a_very_long_name", err,
	                             sizeof(err));
	out = ft_capture_end(&c);
	assert_string_equal(out, "");
	free(out);
	if (r == 0)
		print_error("an unknown 39-character controller name was reported as enabled\n");
	assert_int_equal(r, -EINVAL);
	ft_assert_contains(err, "name too long");

	/* No room for a reason, or a short one: the error still comes back. */
	r = mg_cg_enable_controllers(f->tree.fd, "/fake", "memory_controller_with_a_very_long_name", NULL, 0);
	assert_int_equal(r, -EINVAL);
	r = mg_cg_enable_controllers(f->tree.fd, "/fake", "memory_controller_with_a_very_long_name", err, 8);
	assert_int_equal(r, -EINVAL);
	assert_string_equal(err, "enable ");
}

static void enable_controllers_other_errors(void **state)
{
	struct fixture *f = *state;
	struct ft_capture c;
	char *out, err[256];
	int r;

	/* No cgroup.controllers at all. */
	ft_capture_begin(&c);
	r = mg_cg_enable_controllers(f->tree.fd, "/fake", "memory", err, sizeof(err));
	out = ft_capture_end(&c);
	assert_string_equal(out, "");
	assert_int_equal(r, -ENOENT);
	ft_assert_contains(err, "/fake/cgroup.controllers");
	free(out);

	/* Controllers listed but no cgroup.subtree_control to write. */
	ft_write(f->tree.fd, "cgroup.controllers", "memory\n");
	ft_capture_begin(&c);
	r = mg_cg_enable_controllers(f->tree.fd, "/fake", "memory", err, sizeof(err));
	out = ft_capture_end(&c);
	assert_string_equal(out, "");
	assert_int_equal(r, -ENOENT);
	ft_assert_contains(err, "cgroup.subtree_control");
	ft_assert_contains(err, "+memory");
	free(out);
}

/* --- writing and reading files --- */

static void write_missing_controller_file_explains(void **state)
{
	struct fixture *f = *state;
	struct ft_capture c;
	char *out, err[256];
	int child, r;

	ft_write(f->tree.fd, "cgroup.subtree_control", "cpu pids\n");
	ft_mkdir(f->tree.fd, "job");
	child = ft_open_dir(f->tree.fd, "job");

	ft_capture_begin(&c);
	r = mg_cg_write(child, "/fake/job", "memory.max", "1073741824", err, sizeof(err));
	out = ft_capture_end(&c);
	assert_string_equal(out, "");
	assert_int_equal(r, -ENOENT);
	ft_assert_contains(err, "controller memory not enabled");
	ft_assert_contains(err, "/fake/job");
	free(out);
	assert_false(ft_exists(child, "memory.max")); /* never created */

	/* With memory enabled in the parent the plain error is reported instead. */
	ft_write(f->tree.fd, "cgroup.subtree_control", "cpu memory pids\n");
	ft_capture_begin(&c);
	r = mg_cg_write(child, "/fake/job", "memory.max", "1073741824", err, sizeof(err));
	out = ft_capture_end(&c);
	assert_string_equal(out, "");
	assert_int_equal(r, -ENOENT);
	ft_assert_not_contains(err, "not enabled");
	ft_assert_contains(err, "write \"1073741824\" to /fake/job/memory.max: No such file or directory");
	free(out);

	/* cgroup.* files belong to no controller. */
	ft_write(f->tree.fd, "cgroup.subtree_control", "");
	ft_capture_begin(&c);
	r = mg_cg_write(child, "/fake/job", "cgroup.procs", "1", err, sizeof(err));
	out = ft_capture_end(&c);
	assert_string_equal(out, "");
	assert_int_equal(r, -ENOENT);
	ft_assert_not_contains(err, "not enabled");
	ft_assert_contains(err, "cgroup.procs");
	free(out);
	close(child);
}

static void write_and_write_size(void **state)
{
	struct fixture *f = *state;

	ft_write(f->tree.fd, "memory.high", "");
	assert_int_equal(mg_cg_write(f->tree.fd, "/fake", "memory.high", "12345", NULL, 0), 0);
	assert_file(f->tree.fd, "memory.high", "12345");

	ft_write(f->tree.fd, "memory.max", "");
	assert_int_equal(mg_cg_write_size(f->tree.fd, "/fake", "memory.max", MG_SIZE_UNLIMITED, NULL, 0), 0);
	assert_file(f->tree.fd, "memory.max", "max");

	ft_write(f->tree.fd, "memory.max", "");
	assert_int_equal(mg_cg_write_size(f->tree.fd, "/fake", "memory.max", 4ull << 30, NULL, 0), 0);
	assert_file(f->tree.fd, "memory.max", "4294967296");

	ft_write(f->tree.fd, "memory.swap.max", "");
	assert_int_equal(mg_cg_write_size(f->tree.fd, "/fake", "memory.swap.max", 0, NULL, 0), 0);
	assert_file(f->tree.fd, "memory.swap.max", "0");

	ft_write(f->tree.fd, "memory.max", "");
	assert_int_equal(mg_cg_write_size(f->tree.fd, "/fake", "memory.max", UINT64_MAX - 1, NULL, 0), 0);
	assert_file(f->tree.fd, "memory.max", "18446744073709551614");
}

struct read_case {
	const char *content;
	int r;
	uint64_t value;
};

static void read_u64_table(void **state)
{
	struct fixture *f = *state;
	static const struct read_case cases[] = {
	        {"max\n", 0, MG_SIZE_UNLIMITED},
	        {"max", 0, MG_SIZE_UNLIMITED},
	        {"0\n", 0, 0},
	        {"123456789\n", 0, 123456789},
	        {"18446744073709551615\n", 0, UINT64_MAX},
	        {"", -EBADMSG, 0},
	        {"\n", -EBADMSG, 0},
	        {"garbage\n", -EBADMSG, 0},
	        {"maxx\n", -EBADMSG, 0},
	        {"MAX\n", -EBADMSG, 0},
	        {" 12\n", -EBADMSG, 0},
	        {"12 34\n", -EBADMSG, 0},
	        {"-1\n", -EBADMSG, 0},
	        {"18446744073709551616\n", -EBADMSG, 0},
	        {"1.5\n", -EBADMSG, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		uint64_t v = 77;

		ft_write(f->tree.fd, "memory.current", cases[i].content);
		int r = mg_cg_read_u64(f->tree.fd, "memory.current", &v);
		if (r != cases[i].r)
			print_error("content \"%s\": %d\n", cases[i].content, r);
		assert_int_equal(r, cases[i].r);
		if (r == 0)
			assert_true(v == cases[i].value);
	}
	assert_int_equal(mg_cg_read_u64(f->tree.fd, "memory.peak", &(uint64_t){0}), -ENOENT);
}

static void read_key(void **state)
{
	struct fixture *f = *state;
	uint64_t v = 0;

	ft_write(f->tree.fd, "memory.stat", "anon 4096\nfile 8192\nfile_mapped 12\nshmem 3\n");
	assert_int_equal(mg_cg_read_key(f->tree.fd, "memory.stat", "file", &v), 0);
	assert_true(v == 8192);
	assert_int_equal(mg_cg_read_key(f->tree.fd, "memory.stat", "shmem", &v), 0);
	assert_true(v == 3);
	assert_int_equal(mg_cg_read_key(f->tree.fd, "memory.stat", "kernel", &v), -ENOENT);
	assert_int_equal(mg_cg_read_key(f->tree.fd, "memory.none", "file", &v), -ENOENT);
}

static void memory_events_parse_real(void **state)
{
	struct mg_memory_events ev;

	memset(&ev, 0xaa, sizeof(ev));
	/* 5.17 and later. */
	assert_int_equal(
	        mg_memory_events_parse("low 1\nhigh 22\nmax 333\noom 4\noom_kill 5\noom_group_kill 6\n", &ev),
	        0);
	assert_true(ev.low == 1 && ev.high == 22 && ev.max == 333);
	assert_true(ev.oom == 4 && ev.oom_kill == 5 && ev.oom_group_kill == 6);

	/* Older kernels have no oom_group_kill. */
	memset(&ev, 0xaa, sizeof(ev));
	assert_int_equal(mg_memory_events_parse("low 0\nhigh 7\nmax 0\noom 2\noom_kill 1\n", &ev), 0);
	assert_true(ev.high == 7 && ev.oom == 2 && ev.oom_kill == 1);
	assert_true(ev.oom_group_kill == 0);

	/* Any order; oom must not be read from oom_kill or oom_group_kill. */
	assert_int_equal(
	        mg_memory_events_parse("oom_group_kill 9\noom_kill 8\nmax 3\nhigh 2\nlow 1\noom 7", &ev), 0);
	assert_true(ev.low == 1 && ev.high == 2 && ev.max == 3);
	assert_true(ev.oom == 7 && ev.oom_kill == 8 && ev.oom_group_kill == 9);

	/* Future keys are ignored. */
	assert_int_equal(
	        mg_memory_events_parse("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\nsock_throttled 4\n", &ev),
	        0);
}

static void memory_events_parse_rejects(void **state)
{
	static const char *const bad[] = {
	        "",
	        "\n",
	        "garbage",
	        "low 0\nhigh 0\nmax 0\noom 0\n",             /* truncated: no oom_kill */
	        "low 0\nhigh 0\nmax 0\noom 0\noom_kill",     /* cut in the middle */
	        "low 0\nhigh 0\nmax",                        /* cut earlier */
	        "low 0\nhigh 0\nmax 0\noom_kill 0\n",        /* no oom */
	        "low x\nhigh 0\nmax 0\noom 0\noom_kill 0\n", /* not a number */
	        "low 0\nhigh 0\nmax 0\noom 0\noom_kill -1\n",
	        "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill x\n",
	        "low 0\nhigh 0\nmax 0\noom 0\noom_kill 99999999999999999999\n",
	        "low=0 high=0 max=0 oom=0 oom_kill=0\n",
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(bad); i++) {
		struct mg_memory_events ev;
		int r = mg_memory_events_parse(bad[i], &ev);

		if (r != -EBADMSG)
			print_error("mg_memory_events_parse(\"%s\") = %d\n", bad[i], r);
		assert_int_equal(r, -EBADMSG);
	}
}

static void read_memory_events_from_tree(void **state)
{
	struct fixture *f = *state;
	struct mg_memory_events ev;

	assert_int_equal(mg_cg_read_memory_events(f->tree.fd, &ev), -ENOENT);
	ft_write(f->tree.fd, "memory.events", "low 0\nhigh 10\nmax 2\noom 1\noom_kill 1\noom_group_kill 0\n");
	assert_int_equal(mg_cg_read_memory_events(f->tree.fd, &ev), 0);
	assert_true(ev.high == 10 && ev.max == 2 && ev.oom_kill == 1);
	ft_write(f->tree.fd, "memory.events", "low 0\n");
	assert_int_equal(mg_cg_read_memory_events(f->tree.fd, &ev), -EBADMSG);
}

static void populated(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(mg_cg_populated(f->tree.fd), -ENOENT);
	ft_write(f->tree.fd, "cgroup.events", "populated 1\nfrozen 0\n");
	assert_int_equal(mg_cg_populated(f->tree.fd), 1);
	ft_write(f->tree.fd, "cgroup.events", "populated 0\nfrozen 0\n");
	assert_int_equal(mg_cg_populated(f->tree.fd), 0);
	ft_write(f->tree.fd, "cgroup.events", "frozen 1\npopulated 1");
	assert_int_equal(mg_cg_populated(f->tree.fd), 1);
	ft_write(f->tree.fd, "cgroup.events", "frozen 0\n");
	assert_int_equal(mg_cg_populated(f->tree.fd), -ENOENT);
	ft_write(f->tree.fd, "cgroup.events", "populated yes\n");
	assert_int_equal(mg_cg_populated(f->tree.fd), -EBADMSG);
}

static void move_pid(void **state)
{
	struct fixture *f = *state;

	/* A regular file: writing a pid here moves nothing. */
	assert_int_equal(mg_cg_move_pid(f->tree.fd, 4242), -ENOENT);
	ft_write(f->tree.fd, "cgroup.procs", "");
	assert_int_equal(mg_cg_move_pid(f->tree.fd, 4242), 0);
	assert_file(f->tree.fd, "cgroup.procs", "4242");
	ft_write(f->tree.fd, "cgroup.procs", "");
	assert_int_equal(mg_cg_move_pid(f->tree.fd, 2147483647), 0);
	assert_file(f->tree.fd, "cgroup.procs", "2147483647");
}

/* --- iteration --- */

struct names {
	char seen[8][32];
	size_t n;
	int stop_after; /* return 7 after this many calls; 0 = never */
};

static int collect_child(int childfd, const char *name, void *userdata)
{
	struct names *ns = userdata;
	struct stat st;

	assert_int_equal(fstat(childfd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_true(ns->n < 8);
	snprintf(ns->seen[ns->n++], sizeof(ns->seen[0]), "%s", name);
	return ns->stop_after > 0 && ns->n >= (size_t)ns->stop_after ? 7 : 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void for_each_child(void **state)
{
	struct fixture *f = *state;
	struct names ns = {.n = 0};

	ft_mkdir(f->tree.fd, "b/nested");
	ft_mkdir(f->tree.fd, "a");
	ft_mkdir(f->tree.fd, ".hidden");
	ft_write(f->tree.fd, "cgroup.procs", "");
	ft_write(f->tree.fd, "memory.max", "max\n");
	assert_int_equal(mg_cg_for_each_child(f->tree.fd, collect_child, &ns), 0);
	/* Directories only, no dot entries, one level deep. */
	assert_int_equal(ns.n, 2);
	qsort(ns.seen, ns.n, sizeof(ns.seen[0]), cmp_name);
	assert_string_equal(ns.seen[0], "a");
	assert_string_equal(ns.seen[1], "b");

	/* The first non-zero result stops the walk and is returned. */
	memset(&ns, 0, sizeof(ns));
	ns.stop_after = 1;
	assert_int_equal(mg_cg_for_each_child(f->tree.fd, collect_child, &ns), 7);
	assert_int_equal(ns.n, 1);

	/* No children. */
	int a = ft_open_dir(f->tree.fd, "a");
	memset(&ns, 0, sizeof(ns));
	assert_int_equal(mg_cg_for_each_child(a, collect_child, &ns), 0);
	assert_int_equal(ns.n, 0);
	close(a);
	assert_int_equal(mg_cg_for_each_child(-1, collect_child, &ns), -EBADF);
}

struct pids {
	pid_t seen[8];
	size_t n;
	size_t stop_after;
};

static int collect_pid(pid_t pid, void *userdata)
{
	struct pids *ps = userdata;

	assert_true(ps->n < 8);
	ps->seen[ps->n++] = pid;
	return ps->stop_after > 0 && ps->n >= ps->stop_after ? -EINTR : 0;
}

static void for_each_pid(void **state)
{
	struct fixture *f = *state;
	struct pids ps = {.n = 0};

	/* The callback only records numbers: nothing is signalled here. */
	assert_int_equal(mg_cg_for_each_pid(f->tree.fd, collect_pid, &ps), -ENOENT);
	ft_write(f->tree.fd, "cgroup.procs", "");
	assert_int_equal(mg_cg_for_each_pid(f->tree.fd, collect_pid, &ps), 0);
	assert_int_equal(ps.n, 0);

	/* Garbage, 0 and numbers beyond pid_t are skipped. */
	ft_write(f->tree.fd, "cgroup.procs",
	         "12\nabc\n0\n-3\n\n345\n4294967308\n2147483647\n2147483648\n6789");
	assert_int_equal(mg_cg_for_each_pid(f->tree.fd, collect_pid, &ps), 0);
	assert_int_equal(ps.n, 4);
	assert_int_equal(ps.seen[0], 12);
	assert_int_equal(ps.seen[1], 345);
	assert_int_equal(ps.seen[2], 2147483647);
	assert_int_equal(ps.seen[3], 6789);

	memset(&ps, 0, sizeof(ps));
	ps.stop_after = 2;
	assert_int_equal(mg_cg_for_each_pid(f->tree.fd, collect_pid, &ps), -EINTR);
	assert_int_equal(ps.n, 2);

	/* Only this cgroup, not its children. */
	ft_write(f->tree.fd, "child/cgroup.procs", "99\n");
	ft_write(f->tree.fd, "cgroup.procs", "");
	memset(&ps, 0, sizeof(ps));
	assert_int_equal(mg_cg_for_each_pid(f->tree.fd, collect_pid, &ps), 0);
	assert_int_equal(ps.n, 0);
}

/* --- killing --- */

static void kill_uses_cgroup_kill(void **state)
{
	struct fixture *f = *state;
	char procs[32];
	pid_t pid = ft_children_fork(&f->children);

	/* With cgroup.kill the kernel does the killing: the pids listed in
	 * cgroup.procs must not be signalled by memguard itself. */
	ft_write(f->tree.fd, "cgroup.kill", "");
	snprintf(procs, sizeof(procs), "%d\n", (int)pid);
	ft_write(f->tree.fd, "cgroup.procs", procs);
	assert_int_equal(mg_cg_kill(f->tree.fd), 0);
	assert_file(f->tree.fd, "cgroup.kill", "1");
	assert_int_equal(waitpid(pid, &(int){0}, WNOHANG), 0);        /* still alive */
	assert_int_equal(ft_children_reap(&f->children, pid, 0), -1); /* killed and reaped by us */
}

static void kill_reports_other_errors(void **state)
{
	struct fixture *f = *state;
	char procs[32];
	pid_t pid = ft_children_fork(&f->children);

	/* cgroup.kill exists but cannot be written: that error comes back, and
	 * there is no fallback to signalling pids one by one. */
	ft_mkdir(f->tree.fd, "cgroup.kill");
	snprintf(procs, sizeof(procs), "%d\n", (int)pid);
	ft_write(f->tree.fd, "cgroup.procs", procs);
	ft_write(f->tree.fd, "cgroup.freeze", "0");
	assert_int_equal(mg_cg_kill(f->tree.fd), -EISDIR);
	assert_int_equal(waitpid(pid, &(int){0}, WNOHANG), 0); /* still alive */
	assert_file(f->tree.fd, "cgroup.freeze", "0");         /* never frozen */
	assert_int_equal(ft_children_reap(&f->children, pid, 0), -1);
}

static void kill_fallback_kills_subtree(void **state)
{
	struct fixture *f = *state;
	char procs[64];
	pid_t a = ft_children_fork(&f->children), b = ft_children_fork(&f->children),
	      c = ft_children_fork(&f->children);
	int status;

	/* No cgroup.kill: freeze, SIGKILL every listed pid in the subtree, thaw. */
	ft_write(f->tree.fd, "cgroup.freeze", "0\n");
	ft_write(f->tree.fd, "cgroup.events", "populated 1\nfrozen 1\n");
	snprintf(procs, sizeof(procs), "%d\n", (int)a);
	ft_write(f->tree.fd, "cgroup.procs", procs);
	snprintf(procs, sizeof(procs), "%d\n%d\n", (int)b, (int)c);
	ft_write(f->tree.fd, "task/cgroup.procs", procs);
	ft_mkdir(f->tree.fd, "task/empty-child");

	assert_int_equal(mg_cg_kill(f->tree.fd), 3);

	for (size_t i = 0; i < 3; i++) {
		pid_t pid = i == 0 ? a : i == 1 ? b : c;
		status = ft_children_reap(&f->children, pid, 5000);
		assert_true(status != -1);
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGKILL);
	}
	/* Thawed at the end: "0" written over the "1". */
	assert_file(f->tree.fd, "cgroup.freeze", "0\n");
	assert_false(ft_exists(f->tree.fd, "cgroup.kill"));
}

static void kill_fallback_without_freezer(void **state)
{
	struct fixture *f = *state;
	char procs[96];
	pid_t a = ft_children_fork(&f->children), b = ft_children_fork(&f->children);
	int status;

	/* No cgroup.freeze either (before 5.2); garbage lines are skipped. */
	snprintf(procs, sizeof(procs), "abc\n0\n-5\n\n%d\n", (int)a);
	ft_write(f->tree.fd, "cgroup.procs", procs);
	snprintf(procs, sizeof(procs), "%d", (int)b); /* no final newline */
	ft_write(f->tree.fd, "x/y/z/cgroup.procs", procs);

	assert_int_equal(mg_cg_kill(f->tree.fd), 2);
	status = ft_children_reap(&f->children, a, 5000);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	status = ft_children_reap(&f->children, b, 5000);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_false(ft_exists(f->tree.fd, "cgroup.freeze"));
}

/* cgroup.procs holds pids; a number that only becomes a pid when cut to
 * pid_t's 32 bits must not be signalled. The value used here truncates to our
 * own paused child, so the current behaviour is safe to observe. */
static void kill_fallback_ignores_out_of_range_pids(void **state)
{
	struct fixture *f = *state;
	char procs[64];
	pid_t a = ft_children_fork(&f->children);
	int r;

	snprintf(procs, sizeof(procs), "%llu\n", (1ull << 32) + (unsigned long long)a);
	ft_write(f->tree.fd, "cgroup.procs", procs);
	r = mg_cg_kill(f->tree.fd);
	/* Still alive means it was not signalled; ft_children_reap() then kills it. */
	int alive = ft_children_reap(&f->children, a, 200) == -1;
	if (!alive || r != 0)
		print_error("\"%s\" in cgroup.procs killed pid %d (returned %d)\n", "2^32 + pid", (int)a, r);
	assert_true(alive);
	assert_int_equal(r, 0);
}

static void kill_empty_or_gone(void **state)
{
	struct fixture *f = *state;

	/* Nothing listed anywhere. */
	ft_write(f->tree.fd, "cgroup.procs", "");
	ft_mkdir(f->tree.fd, "child");
	ft_write(f->tree.fd, "cgroup.freeze", "0");
	assert_int_equal(mg_cg_kill(f->tree.fd), 0);
	assert_file(f->tree.fd, "cgroup.freeze", "0");

	/* An empty directory: no files at all. */
	int empty = mg_cg_create(f->tree.fd, "empty");
	assert_true(empty >= 0);
	assert_int_equal(mg_cg_kill(empty), 0);
	close(empty);
}

/* --- /proc/<pid>/cgroup --- */

static void proc_cgroup_parse(void **state)
{
	char *path = NULL;

	/* Hybrid: v1 hierarchies plus the unified one. */
	assert_int_equal(mg_proc_cgroup_parse("12:memory:/user.slice/x\n"
	                                      "11:pids:/user.slice/user-0.slice\n"
	                                      "1:name=systemd:/user.slice/x\n"
	                                      "0::/user.slice/x\n",
	                                      &path),
	                 0);
	assert_string_equal(path, "/user.slice/x");
	free(path);

	/* Pure v2. */
	assert_int_equal(mg_proc_cgroup_parse("0::/\n", &path), 0);
	assert_string_equal(path, "/");
	free(path);
	assert_int_equal(mg_proc_cgroup_parse("0::/system.slice/memguard.service", &path), 0);
	assert_string_equal(path, "/system.slice/memguard.service");
	free(path);
	/* The unified line first, then v1 lines. */
	assert_int_equal(mg_proc_cgroup_parse("0::/a b\n3:cpu:/c\n", &path), 0);
	assert_string_equal(path, "/a b");
	free(path);
}

static void proc_cgroup_parse_rejects(void **state)
{
	static const char *const bad[] = {
	        "",
	        "\n",
	        /* Pure v1. */
	        "12:memory:/user.slice\n11:pids:/user.slice\n1:name=systemd:/user.slice\n",
	        "0::\n",    /* no path */
	        "0:: /x\n", /* not a path */
	        "10::/x\n", /* not hierarchy 0 */
	        " 0::/x\n", /* not at the start of a line */
	        "1:name=0::/x\n",
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(bad); i++) {
		char *path = (char *)"untouched";
		int r = mg_proc_cgroup_parse(bad[i], &path);

		if (r != -ENOENT)
			print_error("mg_proc_cgroup_parse(\"%s\") = %d\n", bad[i], r);
		assert_int_equal(r, -ENOENT);
		assert_string_equal(path, "untouched");
	}
}

struct v1_case {
	const char *text;
	const char *controller;
	const char *path; /* NULL: -ENOENT */
};

static void proc_cgroup_v1_parse(void **state)
{
	static const char hybrid[] = "12:memory:/user.slice/job\n"
	                             "11:cpu,cpuacct:/user.slice\n"
	                             "10:net_cls,net_prio:/\n"
	                             "1:name=systemd:/user.slice/user-0.slice/session-1.scope\n"
	                             "0::/user.slice/user-0.slice/session-1.scope\n";
	static const struct v1_case cases[] = {
	        {hybrid, "memory", "/user.slice/job"},
	        {hybrid, "cpu", "/user.slice"},
	        {hybrid, "cpuacct", "/user.slice"},
	        {hybrid, "net_prio", "/"},
	        {hybrid, "name=systemd", "/user.slice/user-0.slice/session-1.scope"},
	        {hybrid, "cpua", NULL},
	        {hybrid, "mem", NULL},
	        {hybrid, "memoryx", NULL},
	        {hybrid, "pids", NULL},
	        {hybrid, "", NULL}, /* the unified line names no controller */
	        {"4:memory:/job/1", "memory", "/job/1"},
	        {"4:memory:/a:b\n", "memory", "/a:b"}, /* a colon in the path */
	        {"0::/x\n", "memory", NULL},
	        {"", "memory", NULL},
	        {"memory\n:memory\nmemory:/x\n", "memory", NULL},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		char *path = NULL;
		int r = mg_proc_cgroup_v1_parse(cases[i].text, cases[i].controller, &path);

		if (cases[i].path) {
			if (r != 0)
				print_error("case %zu (%s): %d\n", i, cases[i].controller, r);
			assert_int_equal(r, 0);
			assert_string_equal(path, cases[i].path);
			free(path);
		} else {
			if (r != -ENOENT)
				print_error("case %zu (%s): %d %s\n", i, cases[i].controller, r,
				            path ? path : "");
			assert_int_equal(r, -ENOENT);
			assert_null(path);
		}
	}
}

/* mg_cg_ancestor_limit() of path and file succeeds with want, found at
 * want_at (NULL: nothing limited anywhere). */
static void expect_ancestor_limit(int dirfd, const char *path, const char *file, uint64_t want,
                                  const char *want_at)
{
	uint64_t limit = 0;
	char *at = NULL;
	int r = mg_cg_ancestor_limit(dirfd, path, file, &limit, &at);

	if (r != 0 || limit != want)
		print_error("%s of %s: %d, limit %" PRIu64 " at %s; want %" PRIu64 " at %s\n", file, path, r,
		            limit, at ? at : "(none)", want, want_at ? want_at : "(none)");
	assert_int_equal(r, 0);
	assert_true(limit == want);
	if (want_at)
		assert_string_equal(at, want_at);
	else
		assert_null(at);
	free(at);
}

static void ancestor_limit(void **state)
{
	struct fixture *f = *state;

	/* Nothing limited anywhere: the root has no memory.max on v2. */
	ft_write(f->tree.fd, "a/memory.max", "max\n");
	ft_write(f->tree.fd, "a/b/memory.max", "max\n");
	ft_write(f->tree.fd, "a/b/c/memory.max", "max\n");
	expect_ancestor_limit(f->tree.fd, "/a/b/c", "memory.max", MG_SIZE_UNLIMITED, NULL);

	/* The smallest wins, wherever it is. */
	ft_write(f->tree.fd, "a/memory.max", "1073741824\n");
	ft_write(f->tree.fd, "a/b/c/memory.max", "2147483648\n");
	expect_ancestor_limit(f->tree.fd, "/a/b/c", "memory.max", 1073741824ull, "/a");

	ft_write(f->tree.fd, "a/b/c/memory.max", "536870912\n");
	expect_ancestor_limit(f->tree.fd, "/a/b/c", "memory.max", 536870912ull, "/a/b/c");

	/* The root of the mount counts, as "/". */
	ft_write(f->tree.fd, "memory.max", "4096\n");
	expect_ancestor_limit(f->tree.fd, "/a/b/c", "memory.max", 4096, "/");
	expect_ancestor_limit(f->tree.fd, "/", "memory.max", 4096, "/");
}

static void ancestor_limit_v1_and_gaps(void **state)
{
	struct fixture *f = *state;

	/* v1 says "unlimited" with a huge page-aligned number. */
	ft_write(f->tree.fd, "memory.limit_in_bytes", "9223372036854771712\n");
	ft_write(f->tree.fd, "job/memory.limit_in_bytes", "9223372036854771712\n");
	expect_ancestor_limit(f->tree.fd, "/job", "memory.limit_in_bytes", MG_SIZE_UNLIMITED, NULL);

	ft_write(f->tree.fd, "job/memory.limit_in_bytes", "8589934592\n");
	expect_ancestor_limit(f->tree.fd, "/job", "memory.limit_in_bytes", 8589934592ull, "/job");

	/* Cgroups that vanished below, or unreadable files, are passed over. */
	ft_write(f->tree.fd, "job/x/memory.limit_in_bytes", "garbage\n");
	expect_ancestor_limit(f->tree.fd, "/job/x/gone/deeper", "memory.limit_in_bytes", 8589934592ull,
	                      "/job");
}

static void pid_path_through_fake_proc(void **state)
{
	struct fixture *f = *state;
	char *path = NULL;

	ft_write(f->tree.fd, "self/cgroup", "0::/system.slice/memguard.service\n");
	ft_write(f->tree.fd, "4242/cgroup", "12:memory:/x\n0::/memguard/task-1\n");
	ft_write(f->tree.fd, "77/cgroup", "12:memory:/x\n");

	assert_int_equal(mg_cg_pid_path(f->tree.fd, 0, &path), 0);
	assert_string_equal(path, "/system.slice/memguard.service");
	free(path);
	assert_int_equal(mg_cg_pid_path(f->tree.fd, 4242, &path), 0);
	assert_string_equal(path, "/memguard/task-1");
	free(path);
	assert_int_equal(mg_cg_pid_path(f->tree.fd, 77, &path), -ENOENT); /* v1 only */
	assert_int_equal(mg_cg_pid_path(f->tree.fd, 99, &path), -ENOENT); /* no such pid */
	assert_int_equal(mg_cg_pid_path(f->tree.fd, -1, &path), -ENOENT);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	        T(open_and_create),
	        T(remove_nested_deepest_first),
	        T(remove_reports_failure),
	        T(has_controller_matches_whole_words),
	        T(has_controller_empty_name),
	        T(enable_controllers_writes_spec),
	        T(enable_controllers_missing_controller),
	        T(enable_controllers_rejects_overlong_name),
	        T(enable_controllers_other_errors),
	        T(write_missing_controller_file_explains),
	        T(write_and_write_size),
	        T(read_u64_table),
	        T(read_key),
	        cmocka_unit_test(memory_events_parse_real),
	        cmocka_unit_test(memory_events_parse_rejects),
	        T(read_memory_events_from_tree),
	        T(populated),
	        T(move_pid),
	        T(for_each_child),
	        T(for_each_pid),
	        T(kill_uses_cgroup_kill),
	        T(kill_reports_other_errors),
	        T(kill_fallback_kills_subtree),
	        T(kill_fallback_without_freezer),
	        T(kill_fallback_ignores_out_of_range_pids),
	        T(kill_empty_or_gone),
	        cmocka_unit_test(proc_cgroup_parse),
	        cmocka_unit_test(proc_cgroup_parse_rejects),
	        T(pid_path_through_fake_proc),
	        cmocka_unit_test(proc_cgroup_v1_parse),
	        T(ancestor_limit),
	        T(ancestor_limit_v1_and_gaps),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
