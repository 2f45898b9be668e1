/* Which cgroups memguardd guards: mg_scope_expand, mg_scope_read and
 * mg_scope_holds_protected, on fake trees in a temp directory. No real
 * cgroup is touched, and nothing is ever signalled: the pids in these
 * trees are made-up numbers that only name files in a fake /proc. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fake_tree.h"
#include "scope.h"
#include "memguard/paths.h"
#include "memguard/units.h"
#include "memguard/util.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define SEC 1000000ull

/* Sorts the found paths so that tests compare sets, not glob order. */
static int cmp_path(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static void assert_paths(char (*got)[512], int n, const char *const *want, size_t n_want)
{
	assert_true(n >= 0);
	qsort(got, (size_t)n, sizeof(got[0]), cmp_path);
	if ((size_t)n != n_want) {
		for (int i = 0; i < n; i++)
			print_error("found: %s\n", got[i]);
		print_error("found %d paths, want %zu\n", n, n_want);
	}
	assert_int_equal(n, n_want);
	for (size_t i = 0; i < n_want; i++)
		assert_string_equal(got[i], want[i]);
}

/* The launcher's layout, and decoys the globs match that are no cgroups. */
static void make_guard_tree(int fd)
{
	ft_write(fd, "memguard/cgroup.procs", "");
	ft_write(fd, "memguard/run-1/cgroup.procs", "");
	ft_write(fd, "memguard/run-1/task-0/cgroup.procs", "");
	ft_write(fd, "memguard/run-1/task-1/cgroup.procs", "");
	ft_write(fd, "memguard/run-1/task-2/cgroup.procs", "");
	ft_write(fd, "memguard/run-2/cgroup.procs", "");
	ft_write(fd, "memguard/run-2/task-0/cgroup.procs", "");
	ft_write(fd, "memguard/run-1/task-9", "a plain file\n"); /* matches, no cgroup */
	ft_mkdir(fd, "memguard/run-2/task-x");                   /* a dir without cgroup.procs */
	ft_write(fd, "memguard/run-2/task-x/memory.current", "0\n");
	ft_write(fd, "other/run-1/task-0/cgroup.procs", "");
	ft_write(fd, "other/run-1/task-1/cgroup.procs", "");
}

static const char *const all_tasks[] = {
        "memguard/run-1/task-0",
        "memguard/run-1/task-1",
        "memguard/run-1/task-2",
        "memguard/run-2/task-0",
};

static void expand_launcher_layout(void **state)
{
	struct fake_tree *t = *state;
	char paths[16][512];

	make_guard_tree(t->fd);
	assert_paths(paths, mg_scope_expand(t->path, "memguard/run-*/task-*", paths, 16), all_tasks, 4);
	/* A leading slash is relative to the mount all the same. */
	assert_paths(paths, mg_scope_expand(t->path, "/memguard/run-*/task-*", paths, 16), all_tasks, 4);
	/* The default guard. */
	assert_paths(paths, mg_scope_expand(t->path, "memguard/*/*", paths, 16), all_tasks, 4);
	/* One level up: the runs. */
	static const char *const runs[] = {"memguard/run-1", "memguard/run-2"};
	assert_paths(paths, mg_scope_expand(t->path, "memguard/*", paths, 16), runs, 2);
	/* A literal path. */
	static const char *const one[] = {"memguard/run-2/task-0"};
	assert_paths(paths, mg_scope_expand(t->path, "memguard/run-2/task-0", paths, 16), one, 1);
}

struct expand_case {
	const char *globs;
	size_t n;
	const char *want[8];
};

static void expand_several_globs(void **state)
{
	static const struct expand_case cases[] = {
	        {"memguard/run-1/task-* other/*/task-*",
	         5,
	         {"memguard/run-1/task-0", "memguard/run-1/task-1", "memguard/run-1/task-2",
	          "other/run-1/task-0", "other/run-1/task-1"}},
	        {"  memguard/run-2/task-0\t other/run-1/task-1  ",
	         2,
	         {"memguard/run-2/task-0", "other/run-1/task-1"}},
	        {"nothing/* memguard/run-2/task-?", 1, {"memguard/run-2/task-0"}},
	        {"memguard/run-1/task-[02]\tmemguard/run-9/*",
	         2,
	         {"memguard/run-1/task-0", "memguard/run-1/task-2"}},
	};
	struct fake_tree *t = *state;
	char paths[16][512];

	make_guard_tree(t->fd);
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		int n = mg_scope_expand(t->path, cases[i].globs, paths, 16);
		if (n != (int)cases[i].n)
			print_error("globs \"%s\": %d paths, want %zu\n", cases[i].globs, n, cases[i].n);
		assert_paths(paths, n, cases[i].want, cases[i].n);
	}
}

static void expand_no_match(void **state)
{
	static const char *const globs[] = {
	        "",
	        "   ",
	        "nothing",
	        "nothing/*",
	        "memguard/run-1/task-9",  /* a plain file */
	        "memguard/run-2/task-x",  /* no cgroup.procs */
	        "memguard/run-*/task-9*", /* the same through a glob */
	        "memguard/run-*/task-x memguard/run-1/task-9",
	};
	struct fake_tree *t = *state;
	char paths[4][512];

	make_guard_tree(t->fd);
	for (size_t i = 0; i < MG_ARRAY_SIZE(globs); i++) {
		memset(paths, 'x', sizeof(paths));
		int n = mg_scope_expand(t->path, globs[i], paths, 4);
		if (n != 0)
			print_error("globs \"%s\": %d paths (first %.40s), want 0\n", globs[i], n, paths[0]);
		assert_int_equal(n, 0);
		assert_int_equal(paths[0][0], 'x');
	}
	/* An empty mount directory. */
	struct fake_tree empty;
	ft_new(&empty);
	int n = mg_scope_expand(empty.path, "memguard/*/*", paths, 4);
	ft_free(&empty);
	assert_int_equal(n, 0);
}

static void expand_respects_max(void **state)
{
	struct fake_tree *t = *state;
	char paths[8][512];

	make_guard_tree(t->fd);
	for (size_t max = 0; max <= 5; max++) {
		memset(paths, 'x', sizeof(paths));
		int n = mg_scope_expand(t->path, "memguard/run-*/task-*", paths, max);
		assert_int_equal(n, max < 4 ? max : 4);
		/* Nothing written past max, and each one written is a real task. */
		assert_int_equal(paths[max][0], 'x');
		for (int i = 0; i < n; i++) {
			bool known = false;
			for (size_t k = 0; k < MG_ARRAY_SIZE(all_tasks); k++)
				known = known || strcmp(paths[i], all_tasks[k]) == 0;
			if (!known)
				print_error("unexpected path \"%.60s\"\n", paths[i]);
			assert_true(known);
		}
	}
	/* max counts across globs too. */
	memset(paths, 'x', sizeof(paths));
	assert_int_equal(mg_scope_expand(t->path, "memguard/run-1/task-* other/*/task-*", paths, 4), 4);
	assert_int_equal(paths[4][0], 'x');
}

/* --- mg_scope_read --- */

static int xattr_setup(void **state)
{
	struct fake_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	t->fd = -1;
	*state = t;
	ft_new_xattr(t, "mg_scope_read");
	return 0;
}

#define TASK "memguard/run-1/task-0"

static void make_task(int fd, const char *current, const char *events, const char *max)
{
	ft_write(fd, TASK "/cgroup.procs", "");
	if (current)
		ft_write(fd, TASK "/memory.current", current);
	if (events)
		ft_write(fd, TASK "/cgroup.events", events);
	if (max)
		ft_write(fd, TASK "/memory.max", max);
}

static void set_share_xattr(int fd, const char *value)
{
	int cg = ft_open_dir(fd, TASK);

	if (value) {
		if (fsetxattr(cg, MG_XATTR_SHARE, value, strlen(value), 0) < 0)
			fail_msg("setxattr %s: %s", MG_XATTR_SHARE, strerror(errno));
	} else if (fremovexattr(cg, MG_XATTR_SHARE) < 0 && errno != ENODATA) {
		fail_msg("removexattr %s: %s", MG_XATTR_SHARE, strerror(errno));
	}
	close(cg);
}

static void read_basic(void **state)
{
	struct fake_tree *t = *state;
	struct mg_scope_entry e = {.path = TASK};

	make_task(t->fd, "1073741824\n", "populated 1\nfrozen 0\n", "max\n");
	set_share_xattr(t->fd, "536870912");
	memset(&e.snap, 0xa5, sizeof(e.snap));
	e.snap.path = NULL;
	assert_int_equal(mg_scope_read(t->fd, &e, 5 * SEC), 0);
	assert_ptr_equal(e.snap.path, e.path);
	assert_true(e.snap.current == GiB);
	assert_true(e.snap.share == 512 * MiB);
	assert_true(e.snap.populated);
	assert_true(e.snap.growth_bps == 0); /* no earlier reading */
	assert_true(e.prev_current == GiB);
	assert_true(e.prev_usec == 5 * SEC);

	/* Emptied: populated follows cgroup.events. */
	ft_write(t->fd, TASK "/cgroup.events", "populated 0\nfrozen 0\n");
	assert_int_equal(mg_scope_read(t->fd, &e, 6 * SEC), 0);
	assert_false(e.snap.populated);
	/* No cgroup.events at all: not known to be populated. */
	assert_int_equal(unlinkat(t->fd, TASK "/cgroup.events", 0), 0);
	assert_int_equal(mg_scope_read(t->fd, &e, 7 * SEC), 0);
	assert_false(e.snap.populated);
	assert_true(e.snap.current == GiB);
}

struct share_case {
	const char *what;
	const char *xattr;      /* NULL: none */
	const char *memory_max; /* NULL: no such file */
	uint64_t share;
};

static void read_share_table(void **state)
{
	static const struct share_case cases[] = {
	        {"xattr only", "536870912", NULL, 512 * MiB},
	        {"xattr wins over memory.max", "536870912", "2147483648\n", 512 * MiB},
	        {"xattr wins over memory.max max", "1", "max\n", 1},
	        {"xattr of the largest share", "18446744073709551614", "max\n", UINT64_MAX - 1},
	        {"no xattr: memory.max", NULL, "2147483648\n", 2 * GiB},
	        {"no xattr, memory.max max: unknown", NULL, "max\n", 0},
	        {"no xattr, no memory.max: unknown", NULL, NULL, 0},
	        {"xattr 0 counts as none", "0", "1048576\n", MiB},
	        {"garbage xattr counts as none", "lots", "1048576\n", MiB},
	        {"negative xattr counts as none", "-5", "max\n", 0},
	        {"xattr that overflows counts as none", "99999999999999999999", "4096\n", 4096},
	        {"garbage memory.max: unknown", NULL, "plenty\n", 0},
	};
	struct fake_tree *t = *state;

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct share_case *c = &cases[i];
		struct mg_scope_entry e = {.path = TASK};

		make_task(t->fd, "4096\n", "populated 1\n", c->memory_max);
		if (!c->memory_max)
			(void)unlinkat(t->fd, TASK "/memory.max", 0);
		set_share_xattr(t->fd, c->xattr);
		e.snap.share = 12345;
		int r = mg_scope_read(t->fd, &e, SEC);
		if (r != 0 || e.snap.share != c->share)
			print_error("case %zu (%s): r %d, share %" PRIu64 ", want %" PRIu64 "\n", i, c->what,
			            r, e.snap.share, c->share);
		assert_int_equal(r, 0);
		assert_true(e.snap.share == c->share);
	}
}

struct growth_step {
	uint64_t now_usec;
	const char *current;
	uint64_t growth_bps;
};

static void read_growth(void **state)
{
	static const struct growth_step steps[] = {
	        {1 * SEC, "104857600\n", 0},                            /* first reading: no rate */
	        {3 * SEC, "314572800\n", 100 * MiB},                    /* +200 MiB in 2 s */
	        {3 * SEC + 500000, "367001600\n", 100 * MiB},           /* +50 MiB in 0.5 s */
	        {4 * SEC + 500000, "262144000\n", 0},                   /* shrinking */
	        {4 * SEC + 500000, "999999999\n", 0},                   /* no time passed */
	        {5 * SEC + 500000, "999999999\n", 0},                   /* steady */
	        {5 * SEC + 500001, "1000000000\n", 1000000},            /* 1 byte in 1 us */
	        {2000 * SEC, "0\n", 0},                                 /* dropped to nothing */
	        {2001 * SEC, "18446744073709551614\n", UINT64_MAX - 1}, /* no overflow inside */
	};
	struct fake_tree *t = *state;
	struct mg_scope_entry e = {.path = TASK};

	make_task(t->fd, "0\n", "populated 1\n", "max\n");
	for (size_t i = 0; i < MG_ARRAY_SIZE(steps); i++) {
		uint64_t want = steps[i].growth_bps;
		ft_write(t->fd, TASK "/memory.current", steps[i].current);
		assert_int_equal(mg_scope_read(t->fd, &e, steps[i].now_usec), 0);
		if (e.snap.growth_bps != want)
			print_error("step %zu: growth %" PRIu64 " B/s, want %" PRIu64 "\n", i,
			            e.snap.growth_bps, want);
		assert_true(e.snap.growth_bps == want);
		assert_true(e.prev_usec == steps[i].now_usec);
	}
}

static void read_errors(void **state)
{
	static const char *const garbage[] = {
	        "lots\n", "", "\n", "-1\n", "12 34\n", "0x10\n", "99999999999999999999\n"};
	struct fake_tree *t = *state;
	struct mg_scope_entry e = {.path = TASK};

	make_task(t->fd, "1048576\n", "populated 1\n", "max\n");
	assert_int_equal(mg_scope_read(t->fd, &e, SEC), 0);
	for (size_t i = 0; i < MG_ARRAY_SIZE(garbage); i++) {
		ft_write(t->fd, TASK "/memory.current", garbage[i]);
		int r = mg_scope_read(t->fd, &e, 2 * SEC);
		if (r >= 0)
			print_error("memory.current \"%s\": %d, want an error\n", garbage[i], r);
		assert_true(r < 0);
		/* The previous reading stays for the next rate. */
		assert_true(e.prev_current == MiB);
		assert_true(e.prev_usec == SEC);
	}
	assert_int_equal(unlinkat(t->fd, TASK "/memory.current", 0), 0);
	assert_int_equal(mg_scope_read(t->fd, &e, 2 * SEC), -ENOENT);

	/* Vanished cgroups. */
	struct mg_scope_entry gone = {.path = "memguard/run-1/task-7"};
	assert_int_equal(mg_scope_read(t->fd, &gone, SEC), -ENOENT);
	struct mg_scope_entry gone_run = {.path = "memguard/run-9/task-0"};
	assert_int_equal(mg_scope_read(t->fd, &gone_run, SEC), -ENOENT);
}

/* --- mg_scope_holds_protected --- */

struct protect_case {
	const char *what;
	const char *top_procs, *child_procs, *grandchild_procs;
	const char *names;
	int expect;
};

static void holds_protected_table(void **state)
{
	static const struct protect_case cases[] = {
	        {"sshd in a nested child", "101\n104\n", "102\n", "", "systemd sshd", 1},
	        {"sshd at the top", "102\n", "", "", "sshd", 1},
	        {"sshd two levels down", "101\n", "104\n", "104\n102\n", "sshd", 1},
	        {"names with tabs and extra spaces", "", "102\n", "", "  systemd\t\tsshd  ", 1},
	        {"ssh does not match sshd", "101\n", "102\n", "", "ssh", 0},
	        {"sshd does not match ssh", "103\n", "", "", "sshd", 0},
	        {"ssh matches ssh", "101\n", "103\n", "", "sshd ssh", 1},
	        {"a prefix of a listed name does not match", "101\n", "", "", "bashful", 0},
	        {"a suffix of a listed name does not match", "101\n", "", "", "dash", 0},
	        {"nothing protected", "101\n104\n", "103\n", "101\n", "systemd sshd", 0},
	        {"no names", "102\n", "102\n", "102\n", "", 0},
	        {"only spaces", "102\n", "", "", "   ", 0},
	        {"empty cgroups", "", "", "", "sshd", 0},
	        {"missing comm is skipped", "105\n", "105\n102\n", "", "sshd", 1},
	        {"missing comm only", "105\n", "105\n", "105\n", "sshd", 0},
	        {"a comm with a space", "106\n", "", "", "Web Content", 0},
	        {"python3 by name", "", "", "104\n", "python3", 1},
	};
	struct fake_tree *cg = *state;

	/* The fake /proc lives in the same temp tree, removed even on failure. */
	ft_write(cg->fd, "proc/101/comm", "bash\n");
	ft_write(cg->fd, "proc/102/comm", "sshd\n");
	ft_write(cg->fd, "proc/103/comm", "ssh\n");
	ft_write(cg->fd, "proc/104/comm", "python3\n");
	ft_mkdir(cg->fd, "proc/105"); /* exited: no comm */
	ft_write(cg->fd, "proc/106/comm", "Web Content\n");
	int proc = ft_open_dir(cg->fd, "proc");

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct protect_case *c = &cases[i];

		ft_write(cg->fd, "task/cgroup.procs", c->top_procs);
		ft_write(cg->fd, "task/sub/cgroup.procs", c->child_procs);
		ft_write(cg->fd, "task/sub/deeper/cgroup.procs", c->grandchild_procs);
		ft_write(cg->fd, "task/other/cgroup.procs", "101\n");
		int fd = ft_open_dir(cg->fd, "task");
		int r = mg_scope_holds_protected(fd, proc, c->names);
		close(fd);
		if (r != c->expect)
			print_error("case %zu (%s): %d, want %d\n", i, c->what, r, c->expect);
		assert_int_equal(r, c->expect);
	}
	close(proc);
}

/* The default protect list of the config against a realistic subtree. */
static void holds_protected_default_names(void **state)
{
	static const char names[] =
	        "systemd systemd-journal sshd sshd-session pbs_mom slurmd slurmstepd memguardd";
	struct fake_tree *cg = *state;

	ft_write(cg->fd, "proc/2001/comm", "java\n");
	ft_write(cg->fd, "proc/2002/comm", "slurmstepd\n");
	ft_write(cg->fd, "proc/2003/comm", "systemd-journald\n"); /* not systemd-journal */
	ft_write(cg->fd, "task/cgroup.procs", "2001\n");
	ft_write(cg->fd, "task/a/cgroup.procs", "2003\n");
	ft_write(cg->fd, "task/a/b/cgroup.procs", "2001\n");
	int proc = ft_open_dir(cg->fd, "proc");
	int fd = ft_open_dir(cg->fd, "task");
	int clean = mg_scope_holds_protected(fd, proc, names);
	ft_write(cg->fd, "task/a/b/cgroup.procs", "2001\n2002\n");
	int dirty = mg_scope_holds_protected(fd, proc, names);
	close(fd);
	close(proc);
	assert_int_equal(clean, 0);
	assert_int_equal(dirty, 1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, ft_setup, ft_teardown)
#define TX(fn) cmocka_unit_test_setup_teardown(fn, xattr_setup, ft_teardown)
	const struct CMUnitTest tests[] = {
	        T(expand_launcher_layout),
	        T(expand_several_globs),
	        T(expand_no_match),
	        T(expand_respects_max),
	        TX(read_basic),
	        TX(read_share_table),
	        TX(read_growth),
	        TX(read_errors),
	        T(holds_protected_table),
	        T(holds_protected_default_names),
	};
#undef T
#undef TX

	return cmocka_run_group_tests(tests, NULL, NULL);
}
