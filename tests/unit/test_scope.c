/* Which cgroups memguardd guards: mg_scope_expand, mg_scope_admit,
 * mg_scope_read (the trusted share), the protect list and
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
#include "guard/scope.h"
#include "memguard/config.h"
#include "memguard/contract.h"
#include "memguard/units.h"
#include "memguard/util.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define SEC 1000000ull

/* The list is sorted by path, so tests compare it in order. */
static void assert_paths(const struct mg_scope_list *got, int n, const char *const *want, size_t n_want)
{
	assert_true(n >= 0);
	assert_int_equal((size_t)n, got->n);
	if ((size_t)n != n_want) {
		for (size_t i = 0; i < got->n; i++)
			print_error("found: %s\n", got->c[i].path);
		print_error("found %d paths, want %zu\n", n, n_want);
	}
	assert_int_equal(n, n_want);
	for (size_t i = 0; i < n_want; i++)
		assert_string_equal(got->c[i].path, want[i]);
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
	struct mg_scope_list l = {0};

	make_guard_tree(t->fd);
	assert_paths(&l, mg_scope_expand(t->path, "memguard/run-*/task-*", &l), all_tasks, 4);
	/* A leading slash is relative to the mount all the same. */
	assert_paths(&l, mg_scope_expand(t->path, "/memguard/run-*/task-*", &l), all_tasks, 4);
	/* The default guard. */
	assert_paths(&l, mg_scope_expand(t->path, "memguard/*/*", &l), all_tasks, 4);
	/* One level up: the runs. */
	static const char *const runs[] = {"memguard/run-1", "memguard/run-2"};
	assert_paths(&l, mg_scope_expand(t->path, "memguard/*", &l), runs, 2);
	/* A literal path. */
	static const char *const one[] = {"memguard/run-2/task-0"};
	assert_paths(&l, mg_scope_expand(t->path, "memguard/run-2/task-0", &l), one, 1);
	mg_scope_list_free(&l);
}

/* A user can fill their own run with children: MG_SCOPE_MAX_PER_DIR of one
 * directory are taken, by the globs and from a placed run, and another
 * directory's all the same. */
static void expand_caps_each_directory(void **state)
{
	struct fake_tree *t = *state;
	struct mg_scope_list l = {0};
	char path[64];

	for (unsigned i = 0; i < MG_SCOPE_MAX_PER_DIR + 200; i++) {
		snprintf(path, sizeof(path), "memguard/run-1/c%u/cgroup.procs", i);
		ft_write(t->fd, path, "");
	}
	ft_write(t->fd, "memguard/run-2/task-0/cgroup.procs", "");
	ft_write(t->fd, "memguard/run-2/task-1/cgroup.procs", "");
	assert_int_equal(mg_scope_expand(t->path, "memguard/*/*", &l), MG_SCOPE_MAX_PER_DIR + 2);
	size_t other = 0;
	for (size_t i = 0; i < l.n; i++)
		other += strncmp(l.c[i].path, "memguard/run-2/", 15) == 0;
	assert_int_equal(other, 2);

	/* The same two directories as placed runs. */
	static const char *const runs[] = {"memguard/run-1", "memguard/run-2"};
	int mountfd = ft_open_dir(t->fd, ".");
	mg_scope_list_free(&l);
	l = (struct mg_scope_list){0};
	assert_int_equal(mg_scope_add_children(mountfd, runs, 2, &l), MG_SCOPE_MAX_PER_DIR + 2);
	close(mountfd);
	mg_scope_list_free(&l);
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
	struct mg_scope_list l = {0};

	make_guard_tree(t->fd);
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		int n = mg_scope_expand(t->path, cases[i].globs, &l);
		if (n != (int)cases[i].n)
			print_error("globs \"%s\": %d paths, want %zu\n", cases[i].globs, n, cases[i].n);
		assert_paths(&l, n, cases[i].want, cases[i].n);
	}
	mg_scope_list_free(&l);
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
	struct mg_scope_list l = {0};

	make_guard_tree(t->fd);
	for (size_t i = 0; i < MG_ARRAY_SIZE(globs); i++) {
		int n = mg_scope_expand(t->path, globs[i], &l);
		if (n != 0)
			print_error("globs \"%s\": %d paths (first %.40s), want 0\n", globs[i], n,
			            l.c[0].path);
		assert_int_equal(n, 0);
		assert_int_equal(l.n, 0);
	}
	/* An empty mount directory. */
	struct fake_tree empty;
	ft_new(&empty);
	int n = mg_scope_expand(empty.path, "memguard/*/*", &l);
	ft_free(&empty);
	assert_int_equal(n, 0);
	mg_scope_list_free(&l);
}

/* Overlapping globs: each cgroup once; and a list reused is emptied first. */
static void expand_overlapping_globs(void **state)
{
	struct fake_tree *t = *state;
	struct mg_scope_list l = {0};

	make_guard_tree(t->fd);
	assert_paths(&l, mg_scope_expand(t->path, "memguard/*/* memguard/run-1/task-* memguard/*/task-0", &l),
	             all_tasks, 4);
	static const char *const one[] = {"other/run-1/task-1"};
	assert_paths(&l, mg_scope_expand(t->path, "other/*/task-1 other/run-1/task-1", &l), one, 1);
	mg_scope_list_free(&l);
}

/* --- mg_scope_probe and mg_scope_admit --- */

static void probe_reads_owner_and_state(void **state)
{
	struct fake_tree *t = *state;
	struct mg_scope_candidate c = {.path = "memguard/run-1/task-0"};

	ft_write(t->fd, "memguard/run-1/task-0/cgroup.events", "populated 1\nfrozen 0\n");
	ft_write(t->fd, "memguard/run-1/task-0/memory.current", "4096\n");
	ft_chown(t->fd, "memguard/run-1/task-0", 1234);
	assert_int_equal(mg_scope_probe(t->fd, &c), 0);
	assert_int_equal(c.owner, 1234);
	assert_true(c.populated && c.has_memory);

	ft_write(t->fd, "memguard/run-1/task-0/cgroup.events", "populated 0\nfrozen 0\n");
	assert_int_equal(unlinkat(t->fd, "memguard/run-1/task-0/memory.current", 0), 0);
	assert_int_equal(mg_scope_probe(t->fd, &c), 0);
	assert_false(c.populated || c.has_memory);
	c.path = "memguard/run-1/task-404";
	assert_int_equal(mg_scope_probe(t->fd, &c), -ENOENT);
}

#define FULL .populated = true, .has_memory = true

struct admit_case {
	const char *what;
	size_t max, per_owner;
	struct mg_scope_candidate c[10];
	size_t n;
	const char *admitted; /* one char per candidate: 'y' admitted, '.' not */
	size_t dropped;
	uid_t dropped_owners[3];
	size_t n_dropped_owners;
	bool global;
};

static void admit_table(void **state)
{
	static const struct admit_case cases[] = {
	        {"all fit",
	         10,
	         3,
	         {{.owner = 0, FULL}, {.owner = 1000, FULL}, {.owner = 1001, FULL}},
	         3,
	         "yyy",
	         0,
	         {0},
	         0,
	         false},
	        {"empty cgroups count against nothing",
	         10,
	         2,
	         {{.owner = 1000, .has_memory = true},
	          {.owner = 1000, .has_memory = true},
	          {.owner = 1000, .has_memory = true},
	          {.owner = 1000, FULL},
	          {.owner = 1000, FULL}},
	         5,
	         "...yy",
	         0,
	         {0},
	         0,
	         false},
	        {"no memory controller counts against nothing",
	         2,
	         5,
	         {{.owner = 1000, .populated = true},
	          {.owner = 1000, .populated = true},
	          {.owner = 1001, FULL},
	          {.owner = 1002, FULL}},
	         4,
	         "..yy",
	         0,
	         {0},
	         0,
	         false},
	        {"protected ones are not guarded",
	         10,
	         1,
	         {{.owner = 1000, FULL, .protected_ = true}, {.owner = 1000, FULL}},
	         2,
	         ".y",
	         0,
	         {0},
	         0,
	         false},
	        {"a flooding user drops only their own",
	         6,
	         2,
	         {{.owner = 1000, FULL},
	          {.owner = 1000, FULL},
	          {.owner = 1000, FULL},
	          {.owner = 1000, FULL},
	          {.owner = 1000, FULL},
	          {.owner = 2000, FULL},
	          {.owner = 0, FULL}},
	         7,
	         "yy...yy",
	         3,
	         {1000},
	         1,
	         false},
	        {"root is capped only by the total",
	         4,
	         1,
	         {{.owner = 0, FULL},
	          {.owner = 0, FULL},
	          {.owner = 0, FULL},
	          {.owner = 1000, FULL},
	          {.owner = 0, FULL}},
	         5,
	         "yyyy.",
	         1,
	         {0},
	         1,
	         true},
	        {"the total cap, several owners",
	         3,
	         5,
	         {{.owner = 1000, FULL},
	          {.owner = 1001, FULL},
	          {.owner = 1002, FULL},
	          {.owner = 1003, FULL},
	          {.owner = 1003, FULL},
	          {.owner = 1000, FULL}},
	         6,
	         "yyy...",
	         3,
	         {1003, 1000},
	         2,
	         true},
	        {"per-owner cap 0 admits only root",
	         5,
	         0,
	         {{.owner = 7, FULL}, {.owner = 0, FULL}},
	         2,
	         ".y",
	         1,
	         {7},
	         1,
	         false},
	        {"nothing", 5, 5, {{0}}, 0, "", 0, {0}, 0, false},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct admit_case *k = &cases[i];
		struct mg_scope_candidate c[10];
		struct mg_scope_dropped dr;
		char got[11] = "";
		size_t want_n = 0;

		memcpy(c, k->c, sizeof(c));
		for (size_t j = 0; j < k->n; j++)
			c[j].admitted = j % 2 == 0; /* stale marks are overwritten */
		size_t n = mg_scope_admit(c, k->n, k->max, k->per_owner, &dr);
		for (size_t j = 0; j < k->n; j++) {
			got[j] = c[j].admitted ? 'y' : '.';
			want_n += k->admitted[j] == 'y';
		}
		got[k->n] = '\0';
		if (strcmp(got, k->admitted) != 0 || n != want_n || dr.n != k->dropped)
			print_error("case %zu (%s): admitted %s (%zu), dropped %zu; want %s, dropped %zu\n",
			            i, k->what, got, n, dr.n, k->admitted, k->dropped);
		assert_string_equal(got, k->admitted);
		assert_int_equal(n, want_n);
		assert_int_equal(dr.n, k->dropped);
		assert_int_equal(dr.n_owners, k->n_dropped_owners);
		for (size_t j = 0; j < k->n_dropped_owners; j++)
			assert_int_equal(dr.owners[j], k->dropped_owners[j]);
		assert_int_equal(dr.global, k->global);
		assert_false(dr.more_owners);
	}
}

/* More owners over their caps than the summary holds: counted all the same. */
static void admit_many_owners(void **state)
{
	struct mg_scope_candidate c[40];
	struct mg_scope_dropped dr;

	for (size_t i = 0; i < MG_ARRAY_SIZE(c); i++)
		c[i] = (struct mg_scope_candidate){.owner = (uid_t)(1000 + i / 2), FULL};
	assert_int_equal(mg_scope_admit(c, MG_ARRAY_SIZE(c), 1000, 1, &dr), 20);
	assert_int_equal(dr.n, 20);
	assert_int_equal(dr.n_owners, MG_ARRAY_SIZE(dr.owners));
	assert_int_equal(dr.owners[7], 1007);
	assert_true(dr.more_owners);
	assert_false(dr.global);
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
	ft_require_trusted_xattr(t, "mg_scope_read");
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
	ft_set_xattr(fd, TASK, MG_XATTR_SHARE, value);
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
	const char *trusted;    /* trusted.memguard.share, NULL: none */
	const char *hint;       /* user.memguard.share, NULL: none */
	const char *memory_max; /* the task's, NULL: no such file */
	uid_t max_owner;        /* of the task's memory.max */
	const char *run_max;    /* memguard/run-1/memory.max, NULL: none */
	uid_t run_max_owner;
	uint64_t share;
};

#define USER 1000

static void read_share_table(void **state)
{
	static const struct share_case cases[] = {
	        {"trusted only", "536870912", NULL, NULL, 0, NULL, 0, 512 * MiB},
	        {"trusted wins over memory.max", "536870912", NULL, "2147483648\n", 0, NULL, 0, 512 * MiB},
	        {"trusted wins over memory.max max", "1", NULL, "max\n", 0, NULL, 0, 1},
	        {"trusted of the largest share", "18446744073709551614", NULL, "max\n", 0, NULL, 0,
	         UINT64_MAX - 1},
	        {"trusted wins over a tighter ancestor", "536870912", NULL, NULL, 0, "4096\n", 0, 512 * MiB},
	        {"no share: root's memory.max", NULL, NULL, "2147483648\n", 0, NULL, 0, 2 * GiB},
	        {"no share, memory.max max: unknown", NULL, NULL, "max\n", 0, NULL, 0, 0},
	        {"no share, no memory.max: unknown", NULL, NULL, NULL, 0, NULL, 0, 0},
	        {"trusted 0 counts as none", "0", NULL, "1048576\n", 0, NULL, 0, MiB},
	        {"garbage trusted counts as none", "lots", NULL, "1048576\n", 0, NULL, 0, MiB},
	        {"negative trusted counts as none", "-5", NULL, "max\n", 0, NULL, 0, 0},
	        {"trusted that overflows counts as none", "99999999999999999999", NULL, "4096\n", 0, NULL, 0,
	         4096},
	        {"garbage memory.max: unknown", NULL, NULL, "plenty\n", 0, NULL, 0, 0},
	        /* What a user who owns the cgroup can write decides nothing in their favour. */
	        {"forged huge hint under a trusted share", "536870912", "18446744073709551615", NULL, 0, NULL,
	         0, 512 * MiB},
	        {"forged huge hint under root's memory.max", NULL, "18446744073709551615", "1073741824\n", 0,
	         NULL, 0, GiB},
	        {"forged huge hint under root's ancestor limit", NULL, "18446744073709551614", "max\n", 0,
	         "2147483648\n", 0, 2 * GiB},
	        {"a hint lowers the trusted share", "1073741824", "536870912", NULL, 0, NULL, 0, 512 * MiB},
	        {"a hint lowers root's memory.max", NULL, "536870912", "1073741824\n", 0, NULL, 0, 512 * MiB},
	        {"a hint alone is no share", NULL, "536870912", NULL, 0, NULL, 0, 0},
	        {"a forged huge hint alone is no share", NULL, "18446744073709551615", "max\n", 0, NULL, 0,
	         0},
	        {"garbage hint counts as none", NULL, "lots", "1073741824\n", 0, NULL, 0, GiB},
	        {"a zero hint counts as none", "1073741824", "0", NULL, 0, NULL, 0, GiB},
	        {"user-owned memory.max is ignored", NULL, NULL, "1073741824\n", USER, NULL, 0, 0},
	        {"user-owned memory.max, root-owned ancestor limit", NULL, NULL, "1073741824\n", USER,
	         "4294967296\n", 0, 4 * GiB},
	        {"user-owned huge memory.max, root-owned ancestor", NULL, NULL, "9223372036854771712\n", USER,
	         "2147483648\n", 0, 2 * GiB},
	        {"user-owned ancestor limit is ignored too", NULL, NULL, "max\n", 0, "4096\n", USER, 0},
	        {"tightest of root-owned limits", NULL, NULL, "4294967296\n", 0, "2147483648\n", 0, 2 * GiB},
	        {"tightest of root-owned limits, the task's", NULL, NULL, "1073741824\n", 0, "2147483648\n",
	         0, GiB},
	        {"user hint under a user-owned limit: no share", NULL, "536870912", "1073741824\n", USER,
	         NULL, 0, 0},
	};
	struct fake_tree *t = *state;

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct share_case *c = &cases[i];
		struct mg_scope_entry e = {.path = TASK};

		make_task(t->fd, "4096\n", "populated 1\n", c->memory_max);
		if (c->memory_max)
			ft_chown(t->fd, TASK "/memory.max", c->max_owner);
		else
			(void)unlinkat(t->fd, TASK "/memory.max", 0);
		if (c->run_max) {
			ft_write(t->fd, "memguard/run-1/memory.max", c->run_max);
			ft_chown(t->fd, "memguard/run-1/memory.max", c->run_max_owner);
		} else {
			(void)unlinkat(t->fd, "memguard/run-1/memory.max", 0);
		}
		set_share_xattr(t->fd, c->trusted);
		ft_set_xattr(t->fd, TASK, MG_XATTR_SHARE_HINT, c->hint);
		e.snap.share = 12345;
		int r = mg_scope_read(t->fd, &e, SEC);
		if (r != 0 || e.snap.share != c->share)
			print_error("case %zu (%s): r %d, share %" PRIu64 ", want %" PRIu64 "\n", i, c->what,
			            r, e.snap.share, c->share);
		assert_int_equal(r, 0);
		assert_true(e.snap.share == c->share);
	}
}

/* Issue 36's fake tree: alice's run has no limit above it and she wrote her
 * own share, 2^64 - 1, on her task at 40 GiB; bob's task holds 2 GiB of
 * the 4 GiB his root-owned job limit gives. What the daemon reads and
 * decides from that tree must name alice's task, not bob's. */
static void forged_share_on_unlimited_run(void **state)
{
	struct fake_tree *t = *state;
	struct mg_scope_entry e[2] = {{.path = "jobs/alice/task"}, {.path = "jobs/bob/task"}};
	struct mg_guarded g[2];
	uid_t scratch[4];
	struct mg_policy p = {.available_min = 256 * MiB, .available_pressure = GiB, .full_avg10_max = 1000};
	struct mg_node_state node = {.mem = {.mem_total = 64 * GiB, .mem_available = 128 * MiB}};
	struct mg_decision dec;

	ft_write(t->fd, "jobs/alice/memory.max", "max\n");
	ft_write(t->fd, "jobs/alice/task/memory.current", "42949672960\n");
	ft_write(t->fd, "jobs/alice/task/memory.max", "max\n");
	ft_write(t->fd, "jobs/alice/task/cgroup.events", "populated 1\n");
	ft_chown(t->fd, "jobs/alice/task", USER);
	ft_chown(t->fd, "jobs/alice/task/memory.max", USER);
	ft_set_xattr(t->fd, "jobs/alice/task", MG_XATTR_SHARE_HINT, "18446744073709551615");
	ft_write(t->fd, "jobs/bob/memory.max", "4294967296\n");
	ft_write(t->fd, "jobs/bob/task/memory.current", "2147483648\n");
	ft_write(t->fd, "jobs/bob/task/memory.max", "max\n");
	ft_write(t->fd, "jobs/bob/task/cgroup.events", "populated 1\n");
	ft_chown(t->fd, "jobs/bob/task", USER + 1);
	ft_chown(t->fd, "jobs/bob/task/memory.max", USER + 1);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(mg_scope_read(t->fd, &e[i], SEC), 0);
		g[i] = e[i].snap;
	}
	assert_true(g[0].share == 0 && g[0].hint == UINT64_MAX && g[0].owner == USER);
	assert_true(g[1].share == 4 * GiB && g[1].owner == USER + 1);
	mg_policy_split_shares(&p, node.mem.mem_total, g, 2, scratch);
	/* Two owners: half of what the node gives above available_min. */
	assert_true(g[0].split && g[0].share == (64 * GiB - 256 * MiB) / 2);
	assert_true(!g[1].split && g[1].share == 4 * GiB);
	mg_policy_decide(&p, &node, g, 2, &dec);
	assert_int_equal(dec.verdict, MG_VERDICT_KILL);
	assert_int_equal(dec.victim, 0);
}

/* The names are the contract: a user may set only the hint. */
static void share_xattr_names(void **state)
{
	assert_string_equal(MG_XATTR_SHARE, "trusted.memguard.share");
	assert_string_equal(MG_XATTR_SHARE_HINT, "user.memguard.share");
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

/* --- the protect list --- */

struct parse_case {
	const char *word;
	enum mg_protect_kind kind;
	const char *text; /* NULL: the word itself */
	uid_t uid;
};

static void protect_parse_table(void **state)
{
	static const struct parse_case cases[] = {
	        {"init.scope", MG_PROTECT_CGROUP, NULL, 0},
	        {"system.slice/ssh.service", MG_PROTECT_CGROUP, NULL, 0},
	        {"/system.slice/ssh.service", MG_PROTECT_CGROUP, "system.slice/ssh.service", 0},
	        {"system.slice/", MG_PROTECT_CGROUP, "system.slice", 0},
	        {"user.slice/user-*.slice", MG_PROTECT_CGROUP, NULL, 0},
	        {"machine.slice", MG_PROTECT_CGROUP, NULL, 0},
	        {"memguard/run-*/task-0", MG_PROTECT_CGROUP, NULL, 0},
	        {"/usr/sbin/sshd", MG_PROTECT_EXE, NULL, 0},
	        {"/usr/sbin/sshd:0", MG_PROTECT_EXE, "/usr/sbin/sshd", 0},
	        {"/usr/sbin/sshd:root", MG_PROTECT_EXE, "/usr/sbin/sshd", 0},
	        {"/opt/app/bin/server:1234", MG_PROTECT_EXE, "/opt/app/bin/server", 1234},
	        {"/opt/a:b/c", MG_PROTECT_EXE, NULL, 0},
	        {"/usr/sbin/x.service:0", MG_PROTECT_EXE, "/usr/sbin/x.service", 0},
	        {"/opt/x:no-such-user-memguard", MG_PROTECT_IGNORED, NULL, 0},
	        {"/opt/x:", MG_PROTECT_IGNORED, NULL, 0},
	        {"/opt/x:99999999999", MG_PROTECT_IGNORED, NULL, 0},
	        {"sshd", MG_PROTECT_IGNORED, NULL, 0},
	        {"systemd-journal", MG_PROTECT_IGNORED, NULL, 0},
	};
	static struct mg_protect p;
	char list[2048] = "";

	/* All in one list, with tabs and extra spaces between them. */
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i % 2 ? " \t " : "  ",
		         cases[i].word);
	assert_int_equal(mg_protect_parse(list, &p), MG_ARRAY_SIZE(cases));
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct parse_case *c = &cases[i];
		const struct mg_protect_entry *e = &p.e[i];
		const char *text = c->text ? c->text : c->word;
		if (e->kind != c->kind || strcmp(e->text, text) != 0 || e->uid != c->uid)
			print_error("\"%s\": kind %d \"%s\" uid %u, want kind %d \"%s\" uid %u\n", c->word,
			            e->kind, e->text, (unsigned)e->uid, c->kind, text, (unsigned)c->uid);
		assert_int_equal(e->kind, c->kind);
		assert_string_equal(e->text, text);
		assert_int_equal(e->uid, c->uid);
		assert_true((e->kind == MG_PROTECT_IGNORED) == (e->why != NULL));
	}
	/* The warning says why a process name is no protection. */
	assert_non_null(strstr(p.e[16].why, "process name, which any user can take"));
	assert_non_null(strstr(p.e[16].why, "name its unit's cgroup or its executable"));
	assert_int_equal(mg_protect_parse("", &p), 0);
	assert_int_equal(mg_protect_parse(" \t ", &p), 0);
	/* Too many words: the first MG_PROTECT_MAX count. */
	list[0] = '\0';
	for (size_t i = 0; i < MG_PROTECT_MAX + 5; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), " a%zu.scope", i);
	assert_int_equal(mg_protect_parse(list, &p), MG_PROTECT_MAX);
	assert_string_equal(p.e[MG_PROTECT_MAX - 1].text, "a63.scope");
}

struct cgroup_match_case {
	const char *protect, *path;
	bool want;
};

static void protect_match_cgroup_table(void **state)
{
	static const struct cgroup_match_case cases[] = {
	        {"system.slice/ssh.service", "system.slice/ssh.service", true},
	        {"system.slice/ssh.service", "system.slice/ssh.service/sub", true},
	        {"system.slice/ssh.service", "/system.slice/ssh.service", true},
	        {"system.slice/ssh.service", "system.slice/ssh.service2", false},
	        {"system.slice/ssh.service", "system.slice", false},
	        {"system.slice/ssh.service", "user.slice/system.slice/ssh.service", false},
	        {"init.scope", "init.scope", true},
	        {"init.scope", "system.slice/init.scope", false},
	        {"system.slice", "system.slice/cron.service/x", true},
	        {"user.slice/user-*.slice", "user.slice/user-1000.slice/session-3.scope", true},
	        {"user.slice/user-*.slice", "user.slice/user-1000.slice", true},
	        {"user.slice/user-*.slice", "user.slice", false},
	        {"memguard/*/task-0", "memguard/run-1/task-0", true},
	        {"memguard/*/task-0", "memguard/run-1/task-1", false},
	        /* A glob does not cross a slash. */
	        {"memguard/*", "memguard/run-1/task-0", true}, /* below memguard/run-1 */
	        {"*.service", "system.slice/ssh.service", false},
	        {"sshd", "sshd", false}, /* a process name is no cgroup entry */
	        {"/usr/sbin/sshd", "usr/sbin/sshd", false},
	        {"", "system.slice", false},
	};
	static struct mg_protect p;

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		mg_protect_parse(cases[i].protect, &p);
		bool got = mg_protect_match_cgroup(&p, cases[i].path);
		if (got != cases[i].want)
			print_error("protect \"%s\", cgroup \"%s\": %d, want %d\n", cases[i].protect,
			            cases[i].path, got, cases[i].want);
		assert_int_equal(got, cases[i].want);
	}
}

struct exe_match_case {
	const char *exe;
	uid_t uid;
	bool wants_uid, want;
};

static void protect_match_exe_table(void **state)
{
	static const struct exe_match_case cases[] = {
	        {"/usr/sbin/sshd", 0, true, true},
	        {"/usr/sbin/sshd", 1000, false, false},       /* a user running sshd: theirs */
	        {"/usr/sbin/sshd (deleted)", 0, true, false}, /* replaced on disk */
	        {"/home/u/sshd", 1000, false, false},         /* a renamed copy */
	        {"/home/u/sshd", 0, true, false},
	        {"/usr/sbin/sshd2", 0, true, false},
	        {"/usr/sbin/ssh", 0, true, false},
	        {"/opt/app/bin/server", 1234, true, true},
	        {"/opt/app/bin/server", 0, true, false},
	        {"/usr/lib/openssh/sshd-session", 0, true, true},
	        {"", 0, true, false},
	};
	static struct mg_protect p;

	mg_protect_parse(
	        "sshd /usr/sbin/sshd /usr/lib/openssh/sshd-session /opt/app/bin/server:1234 init.scope", &p);
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct exe_match_case *c = &cases[i];
		bool wants = mg_protect_wants_uid(&p, c->uid), got = mg_protect_match_exe(&p, c->exe, c->uid);
		if (wants != c->wants_uid || got != c->want)
			print_error("exe \"%s\" uid %u: wants %d match %d, want %d %d\n", c->exe,
			            (unsigned)c->uid, wants, got, c->wants_uid, c->want);
		assert_int_equal(wants, c->wants_uid);
		assert_int_equal(got, c->want);
	}
}

/* The cache gives the same parse back until the list changes. */
static void protect_cache(void **state)
{
	bool changed;
	const struct mg_protect *a = mg_scope_protect("init.scope sshd", &changed);

	assert_true(changed);
	assert_int_equal(a->n, 2);
	assert_true(mg_scope_protect("init.scope sshd", &changed) == a);
	assert_false(changed);
	a = mg_scope_protect("/usr/sbin/sshd", &changed);
	assert_true(changed);
	assert_int_equal(a->n, 1);
	assert_int_equal(a->e[0].kind, MG_PROTECT_EXE);
}

/* --- mg_scope_holds_protected --- */

/* One walk with the whole budget of a decision. */
static int holds_protected(int fd, int proc, const char *protect)
{
	size_t budget = MG_PROTECT_WALK_BUDGET;

	return mg_scope_holds_protected(fd, proc, protect, &budget);
}

/* A fake /proc/PID: status with Name and Uid (real, effective, saved, fs),
 * exe a symlink (NULL: none, as for a kernel thread). */
static void fake_pid(int fd, int pid, const char *name, const char *uids, const char *exe)
{
	char path[64], status[256];

	snprintf(path, sizeof(path), "proc/%d/status", pid);
	snprintf(status, sizeof(status),
	         "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nPPid:\t1\n"
	         "TracerPid:\t0\nUid:\t%s\nGid:\t0\t0\t0\t0\n",
	         name, pid, pid, uids);
	ft_write(fd, path, status);
	snprintf(path, sizeof(path), "proc/%d/comm", pid);
	snprintf(status, sizeof(status), "%s\n", name);
	ft_write(fd, path, status);
	if (exe) {
		snprintf(path, sizeof(path), "proc/%d/exe", pid);
		assert_int_equal(symlinkat(exe, fd, path), 0);
	}
}

struct protect_case {
	const char *what;
	const char *top_procs, *child_procs, *grandchild_procs;
	const char *protect;
	int expect;
};

static void holds_protected_table(void **state)
{
	static const struct protect_case cases[] = {
	        {"root's sshd in a nested child", "101\n", "102\n", "", "/usr/sbin/sshd", 1},
	        {"root's sshd at the top", "102\n", "", "", "/usr/sbin/sshd", 1},
	        {"root's sshd two levels down", "101\n", "106\n", "106\n102\n", "/usr/sbin/sshd", 1},
	        {"tabs and spaces", "", "102\n", "", "  /usr/bin/bash\t\t/usr/sbin/sshd  ", 1},
	        {"a user's copy named sshd is not sshd", "106\n", "106\n", "", "/usr/sbin/sshd", 0},
	        {"a user running the real sshd is not root's", "103\n", "", "", "/usr/sbin/sshd", 0},
	        {"... unless protected for that user", "103\n", "", "", "/usr/sbin/sshd:1000", 1},
	        {"an sshd deleted on disk", "104\n", "", "", "/usr/sbin/sshd", 0},
	        {"a process name protects nothing", "106\n102\n", "102\n", "", "sshd", 0},
	        {"a cgroup entry protects nothing here", "102\n", "", "", "system.slice/ssh.service", 0},
	        {"a user's own executable, their uid", "", "", "107\n", "/opt/app/bin/server:1000", 1},
	        {"a user's own executable, root by default", "", "", "107\n", "/opt/app/bin/server", 0},
	        {"gone is skipped", "105\n", "105\n102\n", "", "/usr/sbin/sshd", 1},
	        {"gone only", "105\n", "105\n", "105\n", "/usr/sbin/sshd", 0},
	        {"no Uid line", "108\n", "", "", "/usr/sbin/sshd", 0},
	        {"no exe (a kernel thread)", "109\n", "", "", "/usr/sbin/sshd", 0},
	        {"nothing listed", "102\n", "102\n", "102\n", "", 0},
	        {"empty cgroups", "", "", "", "/usr/sbin/sshd", 0},
	};
	struct fake_tree *cg = *state;

	/* The fake /proc lives in the same temp tree, removed even on failure. */
	fake_pid(cg->fd, 101, "bash", "0\t0\t0\t0", "/usr/bin/bash");
	fake_pid(cg->fd, 102, "sshd", "0\t0\t0\t0", "/usr/sbin/sshd");
	fake_pid(cg->fd, 103, "sshd", "1000\t0\t0\t0", "/usr/sbin/sshd"); /* effective root: real counts */
	fake_pid(cg->fd, 104, "sshd", "0\t0\t0\t0", "/usr/sbin/sshd (deleted)");
	ft_mkdir(cg->fd, "proc/105"); /* exited */
	fake_pid(cg->fd, 106, "sshd", "1000\t1000\t1000\t1000", "/home/u/sshd");
	fake_pid(cg->fd, 107, "server", "1000\t1000\t1000\t1000", "/opt/app/bin/server");
	ft_write(cg->fd, "proc/108/status", "Name:\tsshd\nGid:\t0\n");
	assert_int_equal(symlinkat("/usr/sbin/sshd", cg->fd, "proc/108/exe"), 0);
	fake_pid(cg->fd, 109, "kthreadd", "0\t0\t0\t0", NULL);
	int proc = ft_open_dir(cg->fd, "proc");

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct protect_case *c = &cases[i];

		ft_write(cg->fd, "task/cgroup.procs", c->top_procs);
		ft_write(cg->fd, "task/sub/cgroup.procs", c->child_procs);
		ft_write(cg->fd, "task/sub/deeper/cgroup.procs", c->grandchild_procs);
		ft_write(cg->fd, "task/other/cgroup.procs", "101\n");
		int fd = ft_open_dir(cg->fd, "task");
		int r = holds_protected(fd, proc, c->protect);
		close(fd);
		if (r != c->expect)
			print_error("case %zu (%s): %d, want %d\n", i, c->what, r, c->expect);
		assert_int_equal(r, c->expect);
	}
	close(proc);
}

/* Writes 40 nested cgroups deep/d/d/..., each holding pid 301, but the one
 * at level sshd_level, which holds root's sshd (pid 302). */
static void nest(int fd, unsigned sshd_level)
{
	char path[256] = "deep", procs[300];

	ft_write(fd, "deep/cgroup.procs", "301\n");
	for (unsigned level = 1; level <= 40; level++) {
		size_t len = strlen(path);
		snprintf(path + len, sizeof(path) - len, "/d");
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
		ft_write(fd, procs, level == sshd_level ? "302\n" : "301\n");
	}
}

/* What the owner of a guarded cgroup can make fail must not make it
 * protected (memguardd counts a failed walk as protected): a child without a
 * readable cgroup.procs (a threaded cgroup: EOPNOTSUPP on a kernel, which
 * daemon_trust_walk.sh makes; ENOENT in a fake tree), and nesting deeper
 * than the walk looks. A protected process within reach is still found. */
static void holds_protected_walk_failures(void **state)
{
	struct fake_tree *cg = *state;

	fake_pid(cg->fd, 301, "hog", "1000\t1000\t1000\t1000", "/home/u/hog");
	fake_pid(cg->fd, 302, "sshd", "0\t0\t0\t0", "/usr/sbin/sshd");
	int proc = ft_open_dir(cg->fd, "proc");
	ft_write(cg->fd, "task/cgroup.procs", "301\n");
	ft_mkdir(cg->fd, "task/threaded");
	int fd = ft_open_dir(cg->fd, "task");
	assert_int_equal(holds_protected(fd, proc, "/usr/sbin/sshd"), 0);
	ft_write(cg->fd, "task/threaded/inner/cgroup.procs", "302\n");
	assert_int_equal(holds_protected(fd, proc, "/usr/sbin/sshd"), 1);
	close(fd);
	/* The guarded cgroup itself gone: an error, as before (no victim). */
	ft_mkdir(cg->fd, "gone");
	fd = ft_open_dir(cg->fd, "gone");
	assert_int_equal(holds_protected(fd, proc, "/usr/sbin/sshd"), -ENOENT);
	close(fd);

	/* Within MG_PROTECT_WALK_DEPTH root's sshd is found; below it the walk
	 * stops looking, without an error. */
	nest(cg->fd, MG_PROTECT_WALK_DEPTH);
	fd = ft_open_dir(cg->fd, "deep");
	assert_int_equal(holds_protected(fd, proc, "/usr/sbin/sshd"), 1);
	nest(cg->fd, MG_PROTECT_WALK_DEPTH + 1);
	assert_int_equal(holds_protected(fd, proc, "/usr/sbin/sshd"), 0);
	close(fd);
	close(proc);
}

/* The owner can also make children side by side without end: a walk reads
 * MG_PROTECT_WALK_CGROUPS at most and then says so (-E2BIG, which memguardd
 * counts as not protected), and all walks of a decision share one budget. */
static void holds_protected_walk_breadth(void **state)
{
	struct fake_tree *cg = *state;
	char path[64];

	fake_pid(cg->fd, 301, "hog", "1000\t1000\t1000\t1000", "/home/u/hog");
	fake_pid(cg->fd, 302, "sshd", "0\t0\t0\t0", "/usr/sbin/sshd");
	int proc = ft_open_dir(cg->fd, "proc");
	ft_write(cg->fd, "wide/cgroup.procs", "301\n");
	for (unsigned i = 0; i < MG_PROTECT_WALK_CGROUPS; i++) {
		snprintf(path, sizeof(path), "wide/c%u/cgroup.procs", i);
		ft_write(cg->fd, path, "");
	}
	int fd = ft_open_dir(cg->fd, "wide");
	size_t budget = MG_PROTECT_WALK_BUDGET;
	/* The guarded cgroup and its children: one more than a walk reads. */
	assert_int_equal(mg_scope_holds_protected(fd, proc, "/usr/sbin/sshd", &budget), -E2BIG);
	assert_int_equal(budget, MG_PROTECT_WALK_BUDGET - MG_PROTECT_WALK_CGROUPS);
	/* Found before the bound, it counts. */
	ft_write(cg->fd, "wide/cgroup.procs", "301\n302\n");
	budget = MG_PROTECT_WALK_BUDGET;
	assert_int_equal(mg_scope_holds_protected(fd, proc, "/usr/sbin/sshd", &budget), 1);
	assert_int_equal(budget, MG_PROTECT_WALK_BUDGET - 1);
	/* A budget spent by the walks before: this one reads only what is left. */
	ft_write(cg->fd, "wide/cgroup.procs", "301\n");
	budget = 10;
	assert_int_equal(mg_scope_holds_protected(fd, proc, "/usr/sbin/sshd", &budget), -E2BIG);
	assert_int_equal(budget, 0);
	assert_int_equal(mg_scope_holds_protected(fd, proc, "/usr/sbin/sshd", &budget), -E2BIG);
	/* Without an executable in the list there is nothing to walk. */
	assert_int_equal(mg_scope_holds_protected(fd, proc, "ssh.service", &budget), 0);
	close(fd);
	close(proc);
}

/* The default protect list of the config against a realistic subtree: the
 * executables count, a process named like a daemon does not, and every
 * word is one memguardd takes (no warning at start). */
static void holds_protected_default_list(void **state)
{
	struct fake_tree *cg = *state;
	struct mg_config cfg;
	static struct mg_protect p;

	mg_config_defaults(&cfg);
	mg_protect_parse(cfg.protect, &p);
	for (size_t i = 0; i < p.n; i++)
		if (p.e[i].kind == MG_PROTECT_IGNORED)
			fail_msg("default protect word '%s' %s", p.e[i].text, p.e[i].why);
	assert_true(mg_protect_match_cgroup(&p, "system.slice/ssh.service"));
	assert_true(mg_protect_match_cgroup(&p, "init.scope"));
	assert_false(mg_protect_match_cgroup(&p, "memguard/run-1/task-0"));
	assert_false(mg_protect_match_cgroup(&p, "user.slice/user-1000.slice/session-1.scope"));

	fake_pid(cg->fd, 2001, "java", "1000\t1000\t1000\t1000", "/usr/lib/jvm/bin/java");
	fake_pid(cg->fd, 2002, "slurmstepd", "1000\t1000\t1000\t1000", "/home/u/slurmstepd");
	fake_pid(cg->fd, 2003, "slurmstepd", "0\t0\t0\t0", "/usr/sbin/slurmstepd");
	ft_write(cg->fd, "task/cgroup.procs", "2001\n");
	ft_write(cg->fd, "task/a/cgroup.procs", "2002\n");
	ft_write(cg->fd, "task/a/b/cgroup.procs", "2001\n");
	int proc = ft_open_dir(cg->fd, "proc");
	int fd = ft_open_dir(cg->fd, "task");
	int clean = holds_protected(fd, proc, cfg.protect);
	ft_write(cg->fd, "task/a/b/cgroup.procs", "2001\n2003\n");
	int dirty = holds_protected(fd, proc, cfg.protect);
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
	        T(expand_caps_each_directory),
	        T(expand_overlapping_globs),
	        T(probe_reads_owner_and_state),
	        T(admit_table),
	        T(admit_many_owners),
	        TX(read_basic),
	        TX(read_share_table),
	        TX(forged_share_on_unlimited_run),
	        T(share_xattr_names),
	        TX(read_growth),
	        TX(read_errors),
	        T(protect_parse_table),
	        T(protect_match_cgroup_table),
	        T(protect_match_exe_table),
	        T(protect_cache),
	        T(holds_protected_table),
	        T(holds_protected_walk_breadth),
	        T(holds_protected_default_list),
	        T(holds_protected_walk_failures),
	};
#undef T
#undef TX

	return cmocka_run_group_tests(tests, NULL, NULL);
}
