/* The placement service's pure parts: where a run goes (mg_place_decide),
 * the request and reply lines, and job ids. No kernel; one test talks to a
 * fake memguardd on a socket in a temporary directory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_tree.h"
#include "run/askplace.h"
#include "memguard/devprog.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "place/place.h"
#include "place/placedrun.h"
#include "place/watches.h"

#define MiB (1ull << 20)
#define NONE MG_SIZE_UNLIMITED
/* [daemon] place_beside's default: Slurm's task cgroups. */
#define SLURM_TASKS "system.slice/*slurmstepd.scope/job_*/step_*/user/task_*"
/* A request's view of a caller alone in its task cgroup, with no run beside it. */
#define CALLER_OK                                                                                            \
	{                                                                                                    \
		.max_watches = MG_WATCHES_PER_UID                                                            \
	}
#define SESSIONS "user.slice/*/session-*.scope"
#define SLURM_N "system.slice/n_slurmstepd.scope/job_*/step_*/user/task_* s/job_*/step_*/user/task_*"

/* Slurm's chain for a batch step on Debian (deepest first), with --mem=400M on
 * the job and on the step's user cgroup. */
static const struct mg_place_origin slurm[] = {
        {.path = "system.slice/n_slurmstepd.scope/job_7/step_batch/user/task_0", .limit = NONE},
        {.path = "system.slice/n_slurmstepd.scope/job_7/step_batch/user", .limit = 400 * MiB},
        {.path = "system.slice/n_slurmstepd.scope/job_7/step_batch", .limit = NONE},
        {.path = "system.slice/n_slurmstepd.scope/job_7", .limit = 400 * MiB},
        {.path = "system.slice/n_slurmstepd.scope", .limit = NONE},
        {.path = "system.slice", .limit = NONE},
};

static const struct mg_place_origin session[] = {
        {.path = "user.slice/user-1000.slice/session-3.scope", .limit = NONE},
        {.path = "user.slice/user-1000.slice", .limit = NONE},
        {.path = "user.slice", .limit = NONE},
};

static const struct mg_place_job jobs[] = {
        {.name = "41.srv", .owner = 1000, .has_leaf = true},
        {.name = "42.srv", .owner = 1001, .has_leaf = true},
        {.name = "43[2].srv", .owner = 1001, .has_leaf = true},
        {.name = "44.srv", .owner = 1002, .has_leaf = false},
};

struct decide_case {
	const char *name;
	uid_t uid;
	const char *hint;
	unsigned runs;
	const struct mg_place_origin *chain;
	size_t n;
	enum mg_place_kind kind;
	size_t job;
	uint64_t limit;
	long limit_from, parent;
	const char *why_has;
	const char *beside; /* NULL: SLURM_TASKS */
	/* The caller's cgroup (struct mg_place_caller): a stranger in it, its own
	 * pids.max, the runs beside it, the user's watches (of 256). */
	pid_t stranger;
	bool own_pids_max;
	unsigned tether_runs, watches;
};

/* chain gets path's chain as memguardd reads it (MG_PLACE_CHAIN_MAX deep),
 * its paths in paths; returns its length. */
static size_t read_like_memguardd(const char *path, char (*paths)[MG_PLACE_PATH_MAX],
                                  struct mg_place_origin *chain)
{
	long n = mg_place_chain_paths(path, paths, MG_PLACE_CHAIN_MAX);

	assert_true(n >= 0);
	for (long i = 0; i < n; i++)
		chain[i] = (struct mg_place_origin){.path = paths[i], .limit = NONE};
	return (size_t)n;
}

/* The chain of a path, deepest first and cut at max. */
static void test_chain_paths(void **state)
{
	static char paths[4][MG_PLACE_PATH_MAX], long_path[MG_PLACE_PATH_MAX + 1];

	(void)state;
	assert_int_equal(mg_place_chain_paths("a/b/c", paths, 4), 3);
	assert_string_equal(paths[0], "a/b/c");
	assert_string_equal(paths[1], "a/b");
	assert_string_equal(paths[2], "a");
	assert_int_equal(mg_place_chain_paths("a/b/c/d/e", paths, 4), 4);
	assert_string_equal(paths[3], "a/b");
	assert_int_equal(mg_place_chain_paths("", paths, 4), 0);
	memset(long_path, 'x', MG_PLACE_PATH_MAX);
	assert_int_equal(mg_place_chain_paths(long_path, paths, 4), -ENAMETOOLONG);
}

/* A chain that stops short of the top (the user nested their own cgroups
 * deeper than memguardd reads) hides the limits above: refused, whether the
 * rest would have made a run, an unlimited one, or a job placement.
 * MG_PLACE_CHAIN_MAX cgroups are all read; one more is not. */
static void test_decide_chain_cut(void **state)
{
	static const struct mg_place_origin cut[] = {{.path = "job/n/n", .limit = NONE},
	                                             {.path = "job/n", .limit = NONE}};
	static char paths[MG_PLACE_CHAIN_MAX][MG_PLACE_PATH_MAX];
	static struct mg_place_origin chain[MG_PLACE_CHAIN_MAX];
	char deep[128] = "job";
	const struct {
		uid_t uid;
		const struct mg_place_origin *chain;
		size_t n;
	} cases[] = {{1003, cut, 2}, {1000, cut, 2}, {1003, cut, 1}};
	struct mg_place_request req = {.max_runs_per_uid = 4, .beside = "job/n/n", .who = CALLER_OK};
	struct mg_place_verdict v;

	(void)state;
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		req.uid = cases[i].uid;
		assert_int_equal(mg_place_decide(&req, cases[i].chain, cases[i].n, jobs, 4, &v),
		                 MG_PLACE_REFUSE);
		assert_non_null(strstr(v.why, "nested deeper than memguardd reads"));
		assert_non_null(strstr(v.why, cases[i].chain[0].path));
	}

	req.uid = 1003;
	for (int i = 1; i < MG_PLACE_CHAIN_MAX; i++)
		strcat(deep, "/n");
	req.beside = deep; /* a glob that is the path itself */
	assert_int_equal(mg_place_decide(&req, chain, read_like_memguardd(deep, paths, chain), jobs, 4, &v),
	                 MG_PLACE_RUN);
	strcat(deep, "/n");
	assert_int_equal(mg_place_decide(&req, chain, read_like_memguardd(deep, paths, chain), jobs, 4, &v),
	                 MG_PLACE_REFUSE);
	assert_non_null(strstr(v.why, "nested deeper than memguardd reads"));
}

/* Whether a cgroup is in a placed run or job cgroup already, wherever an
 * earlier or this memguardd made it: a run is placed from outside runs. */
static void test_path_placed_table(void **state)
{
	static const struct {
		const char *path;
		bool placed;
	} cases[] = {
	        {"memguard/user-1000-3/task-1", true},
	        {"memguard/user-1000-3/supervisor", true},
	        {"memguard.jobs/41.srv/job", true},
	        {"memguard.slice/memguard-user-1000-3.scope/task-0", true},
	        {"memguard.slice/memguard-user-1000-3.scope/a/b/c", true},
	        {"s/job_7/step_0/user/memguard-run-1000-3/task-1", true},
	        {"s/job_7/step_0/user/memguard-run-1000-3", true},
	        {"memguard-run-1000-3/supervisor", true},
	        {"s/job_7/step_0/user/xmemguard-run-1000-3", false},
	        {"s/job_7/step_0/user/memguard-runner", false},
	        {"memguard", false},
	        {"memguard.slice", false},
	        {"memguardx/user-1", false},
	        {"memguard.slicey/a", false},
	        {"user.slice/user-1000.slice/session-3.scope", false},
	        {"system.slice/slurmstepd.scope/job_7/step_0/user/task_0", false},
	        {"", false},
	};

	(void)state;
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		print_message("case: %s\n", cases[i].path);
		assert_int_equal(mg_place_path_placed(cases[i].path), cases[i].placed);
	}
}

static void test_decide_table(void **state)
{
	static const struct mg_place_origin nested[] = {
	        {.path = "memguard/user-1000-3/task-1", .limit = 100 * MiB},
	        {.path = "memguard/user-1000-3", .limit = 400 * MiB},
	        {.path = "memguard", .limit = NONE},
	};
	static const struct mg_place_origin nested_in_job[] = {
	        {.path = "s/job_7/step_0/user/memguard-run-1000-3/task-1", .limit = NONE},
	        {.path = "s/job_7/step_0/user/memguard-run-1000-3", .limit = NONE},
	        {.path = "s/job_7/step_0/user", .limit = 400 * MiB},
	        {.path = "s/job_7/step_0", .limit = NONE},
	        {.path = "s/job_7", .limit = 400 * MiB},
	        {.path = "s", .limit = NONE},
	};
	static const struct mg_place_origin tighter_inside[] = {
	        {.path = "a/b/c", .limit = NONE},
	        {.path = "a/b", .limit = 300 * MiB},
	        {.path = "a", .limit = 300 * MiB},
	};
	/* A cgroup that limits itself: a run beside it would escape the limit. */
	static const struct mg_place_origin own_limit[] = {
	        {.path = "jobs/job1", .limit = 300 * MiB, .own_limit = "memory.max"},
	        {.path = "jobs", .limit = NONE},
	};
	static const struct mg_place_origin own_cpuset[] = {
	        {.path = "s/job_7/step_0/user/task_0", .limit = NONE, .own_limit = "cpuset.cpus"},
	        {.path = "s/job_7/step_0/user", .limit = 400 * MiB},
	        {.path = "s/job_7/step_0", .limit = NONE},
	        {.path = "s/job_7", .limit = 400 * MiB},
	        {.path = "s", .limit = NONE},
	};
	static const struct mg_place_origin top_level[] = {{.path = "jobs", .limit = NONE}};
	/* A cron job's cgroup, shared by every user's cron jobs and the root daemon, under a limited slice.
	 */
	static const struct mg_place_origin cron[] = {
	        {.path = "system.slice/cron.service", .limit = NONE},
	        {.path = "system.slice", .limit = 540 * MiB},
	};
	static const struct mg_place_origin device[] = {
	        {.path = "s/job_7/step_0/user/task_0",
	         .limit = NONE,
	         .own_limit = "a device program its parent does not apply"},
	        {.path = "s/job_7/step_0/user", .limit = 400 * MiB},
	        {.path = "s/job_7/step_0", .limit = NONE},
	        {.path = "s/job_7", .limit = 400 * MiB},
	        {.path = "s", .limit = NONE},
	};
	static const struct decide_case cases[] = {
	        {"slurm: beside the task, inside the step", 1003, NULL, 0, slurm, 6, MG_PLACE_RUN, 0,
	         400 * MiB, 3, 1, "memory.max 400MiB of cgroup system.slice/n_slurmstepd.scope/job_7", NULL,
	         0, false, 0, 0},
	        {"a second run from the same job: beside the first, under the same limit", 1003, NULL, 1,
	         slurm, 6, MG_PLACE_RUN, 0, 400 * MiB, 3, 1, NULL, NULL, 0, false, 1, 0},
	        {"a login session is no job's task cgroup", 1003, NULL, 0, session, 3, MG_PLACE_REFUSE, 0,
	         NONE, -1, -1, "user.slice/user-1000.slice/session-3.scope is not a job's task cgroup", NULL,
	         0, false, 0, 0},
	        {"a login session where the site lists them: in the user's slice", 1003, NULL, 0, session, 3,
	         MG_PLACE_RUN, 0, NONE, -1, 1,
	         "no limit on cgroup user.slice/user-1000.slice/session-3.scope", SESSIONS, 0, false, 0, 0},
	        {"a cron job under a limited slice: refused, never capped", 1003, NULL, 0, cron, 2,
	         MG_PLACE_REFUSE, 0, NONE, -1, -1, "system.slice/cron.service is not a job's task cgroup",
	         NULL, 0, false, 0, 0},
	        {"a shared unit the site listed, with another uid's process in it: refused", 1003, NULL, 0,
	         cron, 2, MG_PLACE_REFUSE, 0, NONE, -1, -1, "holds pid 812 of another uid",
	         "system.slice/*.service", 812, false, 0, 0},
	        {"whose processes cannot be told: refused", 1003, NULL, 0, slurm, 6, MG_PLACE_REFUSE, 0, NONE,
	         -1, -1, "could not be told", NULL, -1, false, 0, 0},
	        {"equal limits: the outermost", 1003, NULL, 0, tighter_inside, 3, MG_PLACE_RUN, 0, 300 * MiB,
	         2, 1, "of cgroup a", "a/b/*", 0, false, 0, 0},
	        {"a top-level cgroup: in no job", 1003, NULL, 0, top_level, 1, MG_PLACE_REFUSE, 0, NONE, -1,
	         -1, "cgroup jobs is in no job", "*", 0, false, 0, 0},
	        {"the root cgroup: in no job", 1003, NULL, 0, slurm, 0, MG_PLACE_REFUSE, 0, NONE, -1, -1,
	         "in no job", "*", 0, false, 0, 0},
	        {"the only job of the uid, no hint", 1000, NULL, 0, session, 3, MG_PLACE_JOB, 0, NONE, -1, -1,
	         "memguard.jobs/41.srv", NULL, 0, false, 0, 0},
	        {"two jobs, no hint: a run, not a guess", 1001, NULL, 0, session, 3, MG_PLACE_RUN, 0, NONE,
	         -1, 1, NULL, SESSIONS, 0, false, 0, 0},
	        {"two jobs, the hint chooses", 1001, "43[2].srv", 0, session, 3, MG_PLACE_JOB, 2, NONE, -1,
	         -1, NULL, NULL, 0, false, 0, 0},
	        {"a job cgroup is never taken from under a limit", 1001, "43[2].srv", 0, slurm, 6,
	         MG_PLACE_RUN, 0, 400 * MiB, 3, 1, NULL, NULL, 0, false, 0, 0},
	        {"another uid's job by hint: never", 1000, "42.srv", 0, session, 3, MG_PLACE_RUN, 0, NONE, -1,
	         1, NULL, SESSIONS, 0, false, 0, 0},
	        {"another uid's only job: never", 1003, NULL, 0, session, 3, MG_PLACE_RUN, 0, NONE, -1, 1,
	         NULL, SESSIONS, 0, false, 0, 0},
	        {"a job without its leaf is not ready", 1002, "44.srv", 0, session, 3, MG_PLACE_RUN, 0, NONE,
	         -1, 1, NULL, SESSIONS, 0, false, 0, 0},
	        {"per-uid limit", 1003, NULL, 4, slurm, 6, MG_PLACE_REFUSE, 0, NONE, -1, -1,
	         "has 4 placed runs already (the limit is 4)", NULL, 0, false, 0, 0},
	        {"the limit does not stop a job placement", 1000, NULL, 4, session, 3, MG_PLACE_JOB, 0, NONE,
	         -1, -1, NULL, NULL, 0, false, 0, 0},
	        {"already placed, below the root", 1000, NULL, 0, nested, 3, MG_PLACE_REFUSE, 0, NONE, -1, -1,
	         "is a placed run or a job cgroup already", NULL, 0, false, 0, 0},
	        {"already placed, in a job", 1003, NULL, 0, nested_in_job, 6, MG_PLACE_REFUSE, 0, NONE, -1,
	         -1, "is a placed run or a job cgroup already", "s/*/*/*/*/*", 0, false, 0, 0},
	        {"a cgroup with its own memory.max", 1003, NULL, 0, own_limit, 2, MG_PLACE_REFUSE, 0, NONE,
	         -1, -1, "cgroup jobs/job1 sets memory.max itself", "jobs/*", 0, false, 0, 0},
	        {"a cgroup with its own cpuset", 1003, NULL, 0, own_cpuset, 5, MG_PLACE_REFUSE, 0, NONE, -1,
	         -1, "sets cpuset.cpus itself", SLURM_N, 0, false, 0, 0},
	        {"a cgroup with a device program of its own", 1003, NULL, 0, device, 5, MG_PLACE_REFUSE, 0,
	         NONE, -1, -1, "sets a device program its parent does not apply itself", SLURM_N, 0, false, 0,
	         0},
	        {"a cgroup with its own limit is not left for a job cgroup", 1000, NULL, 0, own_limit, 2,
	         MG_PLACE_REFUSE, 0, NONE, -1, -1, "sets memory.max itself", NULL, 0, false, 0, 0},
	        {"its own pids.max, no run beside it yet: the run takes it along", 1003, NULL, 0, slurm, 6,
	         MG_PLACE_RUN, 0, 400 * MiB, 3, 1, NULL, NULL, 0, true, 0, 0},
	        {"its own pids.max and a run beside it: a second would double the budget", 1003, NULL, 1,
	         slurm, 6, MG_PLACE_REFUSE, 0, NONE, -1, -1, "sets pids.max itself, and the run beside it",
	         NULL, 0, true, 1, 0},
	        {"the user's watches leave room for a run's two", 1003, NULL, 0, slurm, 6, MG_PLACE_RUN, 0,
	         400 * MiB, 3, 1, NULL, NULL, 0, false, 0, 254},
	        {"the user's watches are used up: refused", 1003, NULL, 0, slurm, 6, MG_PLACE_REFUSE, 0, NONE,
	         -1, -1, "hold 255 of memguardd's inotify watches (the limit is 256)", NULL, 0, false, 0,
	         255},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct decide_case *c = &cases[i];
		struct mg_place_request req = {.uid = c->uid,
		                               .job_hint = c->hint,
		                               .runs_of_uid = c->runs,
		                               .max_runs_per_uid = 4,
		                               .beside = c->beside ? c->beside : SLURM_TASKS,
		                               .who = {.stranger = c->stranger,
		                                       .own_pids_max = c->own_pids_max,
		                                       .runs = c->tether_runs,
		                                       .watches = c->watches,
		                                       .max_watches = MG_WATCHES_PER_UID}};
		struct mg_place_verdict v;

		print_message("case: %s\n", c->name);
		assert_int_equal(mg_place_decide(&req, c->chain, c->n, jobs, 4, &v), c->kind);
		assert_int_equal(v.kind, c->kind);
		if (c->kind == MG_PLACE_JOB)
			assert_int_equal(v.job, c->job);
		if (c->kind == MG_PLACE_RUN) {
			assert_int_equal(v.limit, c->limit);
			assert_int_equal(v.limit_from, c->limit_from);
			assert_int_equal(v.parent, c->parent);
		}
		if (c->why_has && !strstr(v.why, c->why_has))
			fail_msg("why: \"%s\", not \"%s\"", v.why, c->why_has);
	}
}

/* Which cgroups a run goes beside: globs whose '*' stops at '/'. */
static void test_beside(void **state)
{
	static const struct {
		const char *path, *globs;
		bool beside;
	} cases[] = {
	        {"system.slice/slurmvm_slurmstepd.scope/job_42/step_batch/user/task_0", SLURM_TASKS, true},
	        {"system.slice/slurmstepd.scope/job_42/step_0/user/task_3", SLURM_TASKS, true},
	        {"system.slice/slurmstepd.scope/job_42/step_0/user", SLURM_TASKS, false},
	        {"system.slice/slurmstepd.scope/job_42/step_0/user/task_0/x", SLURM_TASKS, false},
	        {"system.slice/x/slurmstepd.scope/job_42/step_0/user/task_0", SLURM_TASKS, false},
	        {"system.slice/cron.service", SLURM_TASKS, false},
	        {"job1/task", "  jobs/*  job*/task ", true},
	        {"job1/task", "", false},
	        {"job1/task", "job1/*/", false},
	};

	(void)state;
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		print_message("case: %s in \"%s\"\n", cases[i].path, cases[i].globs);
		assert_int_equal(mg_place_beside(cases[i].path, cases[i].globs), cases[i].beside);
	}
}

/* Every limit file of the cgroup's controllers counts, by its default; the
 * four a review found escaped (hugetlb, zswap, the core descendants and
 * depth) among them. */
static void test_limit_files(void **state)
{
	const char *ctl = "cpuset cpu io memory hugetlb pids rdma misc\n";
	static const struct {
		const char *name;
		bool limit;
	} files[] = {
	        {"memory.max", true},
	        {"memory.high", true},
	        {"memory.swap.max", true},
	        {"memory.zswap.max", true},
	        {"memory.swap.high", true},
	        {"hugetlb.2MB.max", true},
	        {"hugetlb.1GB.rsvd.max", true},
	        {"cpu.max", true},
	        {"cpu.uclamp.max", true},
	        {"io.max", true},
	        {"rdma.max", true},
	        {"misc.max", true},
	        {"cpuset.cpus", true},
	        {"cpuset.mems", true},
	        {"cpuset.cpus.partition", true},
	        {"cpuset.cpus.exclusive", true},
	        {"cgroup.max.descendants", true},
	        {"cgroup.max.depth", true},
	        {"pids.max", false},
	        {"cpuset.cpus.effective", false},
	        {"cpuset.mems.effective", false},
	        {"memory.min", false},
	        {"memory.low", false},
	        {"cpu.weight", false},
	        {"io.weight", false},
	        {"cpu.max.burst", false},
	        {"memory.peak", false},
	        {"memory.oom.group", false},
	        {"cgroup.procs", false},
	        {"cgroup.freeze", false},
	        {"unknown.max", false},
	        {"memory", false},
	};
	static const struct {
		const char *name, *value;
		bool set;
	} values[] = {
	        {"memory.max", "max\n", false},
	        {"memory.max", "314572800\n", true},
	        {"memory.zswap.max", "max\n", false},
	        {"memory.zswap.max", "0\n", true},
	        {"hugetlb.2MB.max", "0\n", true},
	        {"cgroup.max.descendants", "max\n", false},
	        {"cgroup.max.descendants", "10\n", true},
	        {"cgroup.max.depth", "1\n", true},
	        {"cpu.max", "max 100000\n", false},
	        {"cpu.max", "max 50000\n", false},
	        {"cpu.max", "50000 100000\n", true},
	        {"cpu.max", "maxx 100000\n", true},
	        {"io.max", "", false},
	        {"io.max", "8:0 rbps=max wbps=max riops=max wiops=max\n", false},
	        {"io.max", "8:0 rbps=max wbps=1048576 riops=max wiops=max\n", true},
	        {"io.max", "8:0 rbps=max\n8:16 wiops=100\n", true},
	        {"rdma.max", "mlx4_0 hca_handle=max hca_object=max\n", false},
	        {"rdma.max", "mlx4_0 hca_handle=2 hca_object=max\n", true},
	        {"misc.max", "sev max\nsev_es max\n", false},
	        {"misc.max", "sev 10\nsev_es max\n", true},
	        {"cpuset.cpus", "\n", false},
	        {"cpuset.cpus", "0-1\n", true},
	        {"cpuset.mems", "0\n", true},
	        {"cpuset.cpus.partition", "member\n", false},
	        {"cpuset.cpus.partition", "root\n", true},
	        {"cpu.uclamp.max", "max\n", false},
	        {"cpu.uclamp.max", "80.00\n", true},
	};

	(void)state;
	for (size_t i = 0; i < MG_ARRAY_SIZE(files); i++) {
		print_message("file: %s\n", files[i].name);
		assert_int_equal(mg_place_limit_file(files[i].name, ctl), files[i].limit);
	}
	/* Only the controllers the cgroup has. */
	assert_false(mg_place_limit_file("hugetlb.2MB.max", "cpu memory\n"));
	assert_true(mg_place_limit_file("cgroup.max.depth", ""));
	for (size_t i = 0; i < MG_ARRAY_SIZE(values); i++) {
		print_message("value: %s = \"%s\"\n", values[i].name, values[i].value);
		assert_int_equal(mg_place_limit_set(values[i].name, values[i].value), values[i].set);
	}
}

/* A device program on the caller's own cgroup is escaped by a run beside
 * it unless its parent applies the same (Slurm's on the job, by tag). */
static void test_devprog_covered(void **state)
{
	const struct mg_devprog_tag job = {{0xff, 0x5c, 0x5e, 0xa2, 0xef, 0x75, 0x30, 0x7f}};
	const struct mg_devprog_tag task = {{1, 2, 3, 4, 5, 6, 7, 8}};
	const struct mg_devprog_tag both[] = {job, task};

	(void)state;
	assert_true(mg_devprog_covered(NULL, 0, NULL, 0));
	assert_true(mg_devprog_covered(&job, 1, &job, 1));
	assert_true(mg_devprog_covered(&task, 1, both, 2));
	assert_false(mg_devprog_covered(&task, 1, &job, 1));
	assert_false(mg_devprog_covered(both, 2, &job, 1));
	assert_false(mg_devprog_covered(&job, 1, NULL, 0));
}

/* The per-uid count of memguardd's inotify watches: root is not capped. */
static void test_watches(void **state)
{
	struct mg_watches w = MG_WATCHES_INIT;

	(void)state;
	assert_true(mg_watches_take(&w, 1001, MG_WATCHES_PER_UID - 2));
	assert_true(mg_watches_take(&w, 1001, 2));
	assert_false(mg_watches_take(&w, 1001, 1));
	assert_int_equal(mg_watches_of(&w, 1001), MG_WATCHES_PER_UID);
	assert_true(mg_watches_take(&w, 1002, 1)); /* another user is not touched */
	assert_true(mg_watches_take(&w, 0, 10 * MG_WATCHES_PER_UID));
	mg_watches_give(&w, 1001, 3);
	assert_int_equal(mg_watches_of(&w, 1001), MG_WATCHES_PER_UID - 3);
	assert_true(mg_watches_take(&w, 1001, 3));
	mg_watches_give(&w, 1002, 5);
	assert_int_equal(mg_watches_of(&w, 1002), 0);
	assert_false(mg_watches_take(&w, 1003, MG_WATCHES_PER_UID + 1));
	mg_watches_done(&w);
}

/* A stranger that took a dead caller's pid, moved into a run by mistake,
 * goes back where it was: where the same process was before the move, or,
 * born after that look, its parent's cgroup. Fake /proc and cgroup trees. */
static void test_move_back(void **state)
{
	struct fake_tree *t = *state;
	char where[256], *procs;
	int mount, proc, leaf;

	ft_mkdir(t->fd, "cg/job/task");
	ft_mkdir(t->fd, "cg/job/run/supervisor");
	ft_mkdir(t->fd, "cg/bob/app");
	ft_mkdir(t->fd, "cg/bob/shell");
	ft_write(t->fd, "cg/bob/app/cgroup.procs", "");
	ft_write(t->fd, "cg/bob/shell/cgroup.procs", "");
	/* pid 4242, bob's, now in the run's leaf; its parent 4000 in bob/shell. */
	ft_write(t->fd, "cg/job/run/supervisor/cgroup.procs", "4242\n");
	ft_write(t->fd, "proc/4242/stat", "4242 (app) S 4000 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n");
	ft_write(t->fd, "proc/4242/status", "Name:\tapp\nPPid:\t4000\nUid:\t1002\t1002\t1002\t1002\n");
	ft_write(t->fd, "proc/4242/cgroup", "0::/job/run/supervisor\n");
	ft_write(t->fd, "proc/4000/cgroup", "0::/bob/shell\n");
	mount = ft_open_dir(t->fd, "cg");
	proc = ft_open_dir(t->fd, "proc");
	leaf = ft_open_dir(mount, "job/run/supervisor");

	/* The same process was at the pid when memguardd looked before the move. */
	assert_int_equal(mg_runs_move_back(mount, proc, leaf, 4242,
	                                   &(struct mg_run_origin){.path = "/bob/app", .start = 777}, where,
	                                   sizeof(where)),
	                 1);
	assert_string_equal(where, "bob/app");
	procs = ft_read(mount, "bob/app/cgroup.procs", NULL);
	assert_string_equal(procs, "4242");
	free(procs);

	/* Born after that look (another start time): its parent's cgroup. */
	assert_int_equal(mg_runs_move_back(mount, proc, leaf, 4242,
	                                   &(struct mg_run_origin){.path = "/job/task", .start = 500}, where,
	                                   sizeof(where)),
	                 1);
	assert_string_equal(where, "bob/shell");
	procs = ft_read(mount, "bob/shell/cgroup.procs", NULL);
	assert_string_equal(procs, "4242");
	free(procs);

	/* Nothing at the pid in the leaf (the caller died before the move): nothing to do. */
	ft_write(t->fd, "cg/job/run/supervisor/cgroup.procs", "");
	assert_int_equal(mg_runs_move_back(mount, proc, leaf, 4242,
	                                   &(struct mg_run_origin){.path = "/job/task", .start = 500}, where,
	                                   sizeof(where)),
	                 0);
	close(leaf);
	close(proc);
	close(mount);
}

/* Whether a cgroup's subtree holds a process of another uid: by real uid,
 * and with effective, by effective uid too (a setuid program). */
static void test_find_stranger(void **state)
{
	struct fake_tree *t = *state;
	pid_t pid = 0;
	int proc, cg;

	ft_write(t->fd, "cg/task/cgroup.procs", "10\n");
	ft_write(t->fd, "cg/task/sub/cgroup.procs", "11\n");
	ft_write(t->fd, "proc/10/status", "Uid:\t1001\t1001\t1001\t1001\n");
	ft_write(t->fd, "proc/11/status", "Uid:\t1001\t0\t0\t0\n");
	proc = ft_open_dir(t->fd, "proc");
	cg = ft_open_dir(t->fd, "cg/task");
	assert_int_equal(mg_runs_find_stranger(proc, cg, 1001, false, &pid), 0);
	assert_int_equal(mg_runs_find_stranger(proc, cg, 1001, true, &pid), 1);
	assert_int_equal(pid, 11);
	ft_write(t->fd, "proc/11/status", "Uid:\t0\t0\t0\t0\n");
	assert_int_equal(mg_runs_find_stranger(proc, cg, 1001, false, &pid), 1);
	assert_int_equal(pid, 11);
	/* A pid that is gone meanwhile holds nobody. */
	ft_write(t->fd, "cg/task/sub/cgroup.procs", "12\n");
	assert_int_equal(mg_runs_find_stranger(proc, cg, 1001, true, &pid), 0);
	close(cg);
	close(proc);
}

static void test_job_id_valid(void **state)
{
	assert_true(mg_place_job_id_valid("123.srv"));
	assert_true(mg_place_job_id_valid("123[4].srv-01_a"));
	assert_false(mg_place_job_id_valid(""));
	assert_false(mg_place_job_id_valid(".."));
	assert_false(mg_place_job_id_valid(".hidden"));
	assert_false(mg_place_job_id_valid("a/b"));
	assert_false(mg_place_job_id_valid("a b"));
	assert_false(mg_place_job_id_valid("../../etc"));
	assert_false(mg_place_job_id_valid("x\n"));
	assert_false(
	        mg_place_job_id_valid("12345678901234567890123456789012345678901234567890123456789012345"));
}

static void test_caller_limit(void **state)
{
	static const struct {
		uint64_t limit, taken, current, want;
	} cases[] = {
	        {MG_SIZE_UNLIMITED, 100 * MiB, 0, MG_SIZE_UNLIMITED}, /* no limit to share */
	        {300 * MiB, 0, 0, MG_SIZE_UNLIMITED},           /* nothing taken: no run, an old launcher */
	        {300 * MiB, 285 * MiB, 0, MG_PLACE_CALLER_MIN}, /* 15 MiB left: the floor */
	        {300 * MiB, 200 * MiB, 0, 100 * MiB},           /* --mem 200M: the rest */
	        {300 * MiB, 300 * MiB, 0, MG_PLACE_CALLER_MIN}, /* all of it: the floor */
	        {300 * MiB, 600 * MiB, 0, MG_PLACE_CALLER_MIN}, /* two runs, more than the job */
	        {8 * MiB, 1 * MiB, 0, MG_PLACE_CALLER_MIN},     /* a job smaller than the floor */
	        {60 * 1024 * MiB, 60 * 1024 * MiB, 0, 3072 * MiB},  /* a big job: a twentieth of it */
	        {60 * 1024 * MiB, 50 * 1024 * MiB, 0, 10240 * MiB}, /* more left than that: all of it */
	        {300 * MiB, 300 * MiB, 100 * MiB, 116 * MiB},       /* 100 MiB in /dev/shm already: kept */
	        {300 * MiB, 200 * MiB, 50 * MiB, 100 * MiB},        /* what it holds fits in the rest */
	        {300 * MiB, 300 * MiB, UINT64_MAX, UINT64_MAX},     /* no overflow */
	        {UINT64_MAX - 1, 1, 0, UINT64_MAX - 2},             /* no overflow */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_true(mg_place_caller_limit(cases[i].limit, cases[i].taken, cases[i].current) ==
		            cases[i].want);
}

static void test_parse_request(void **state)
{
	struct {
		const char *line;
		int ret;
		const char *hint;
		uint64_t budget;
	} cases[] = {
	        {"place\n", 0, NULL, 0},
	        {"place", 0, NULL, 0},
	        {"place\r\n", 0, NULL, 0},
	        {"place job=7.srv\n", 0, "7.srv", 0},
	        {"place job=\n", -EINVAL, NULL, 0},
	        {"place job=../x\n", -EINVAL, NULL, 0},
	        {"place job=a b\n", -EINVAL, NULL, 0},
	        {"place uid=0\n", -EINVAL, NULL, 0},
	        {"PLACE\n", -EINVAL, NULL, 0},
	        {"\n", -EINVAL, NULL, 0},
	        {"place\nplace job=1\n", 0, NULL, 0},
	        {"place budget=314572800\n", 0, NULL, 314572800},
	        {"place job=7.srv budget=1048576\n", 0, "7.srv", 1048576},
	        {"place budget=1048576 job=7.srv\n", 0, "7.srv", 1048576},
	        {"place budget=0\n", -EINVAL, NULL, 0},
	        {"place budget=-1\n", -EINVAL, NULL, 0},
	        {"place budget=1 budget=2\n", -EINVAL, NULL, 0},
	        {"place job=1 job=2\n", -EINVAL, NULL, 0},
	        {"place budget=99999999999999999999999\n", -EINVAL, NULL, 0},
	        {"placed\n", -EINVAL, NULL, 0},
	        {"place job=7.srv junk\n", -EINVAL, NULL, 0}, /* refused: no hint left behind */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[64];
		const char *hint = "unset";
		uint64_t budget = 7;
		snprintf(buf, sizeof(buf), "%s", cases[i].line);
		assert_int_equal(mg_place_parse_request(buf, &hint, &budget), cases[i].ret);
		if (cases[i].ret == 0 && cases[i].hint)
			assert_string_equal(hint, cases[i].hint);
		if (cases[i].ret == 0) {
			assert_true(budget == cases[i].budget);
		} else {
			assert_null(hint);
			assert_true(budget == 0);
		}
	}
}

static void test_parse_reply(void **state)
{
	struct mg_place_answer a;
	char why[128];

	assert_int_equal(mg_place_parse_reply("ok run memguard/user-1000-3 419430400 system.slice/x/job_7\n",
	                                      &a, why, sizeof(why)),
	                 0);
	assert_int_equal(a.kind, MG_PLACE_ANSWER_RUN);
	assert_string_equal(a.cgroup, "memguard/user-1000-3");
	assert_int_equal(a.limit, 400 * MiB);
	assert_string_equal(a.limit_from, "system.slice/x/job_7");

	assert_int_equal(mg_place_parse_reply("ok run memguard/user-1-1 max -\n", &a, why, sizeof(why)), 0);
	assert_int_equal(a.limit, NONE);
	assert_string_equal(a.limit_from, "");

	assert_int_equal(mg_place_parse_reply("ok job memguard.jobs/41.srv\n", &a, why, sizeof(why)), 0);
	assert_int_equal(a.kind, MG_PLACE_ANSWER_JOB);
	assert_string_equal(a.cgroup, "memguard.jobs/41.srv");

	assert_int_equal(
	        mg_place_parse_reply("err this user has 32 placed runs already\n", &a, why, sizeof(why)),
	        -EPERM);
	assert_string_equal(why, "this user has 32 placed runs already");

	static const char *const bad[] = {
	        "",
	        "ok\n",
	        "ok run\n",
	        "ok run memguard/x 12\n",
	        "ok run memguard/x twelve -\n",
	        "ok run memguard/x 0 -\n",
	        "ok run /etc 12 -\n",
	        "ok run memguard/../../x 12 -\n",
	        "ok job\n",
	        "ok job a b\n",
	        "ok move x\n",
	        "hello\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mg_place_parse_reply(bad[i], &a, why, sizeof(why)), -EBADMSG);
}

/* A memguardd from before budgets: it refuses "budget=" as a bad request.
 * The client asks again without it and says so; the fake daemon (a child)
 * checks the two requests and exits 0 only when both were as expected. */
static void test_ask_old_daemon(void **state)
{
	static const char *const expect[] = {"place job=7 budget=1048576\n", "place job=7\n"};
	static const char *const replies[] = {"err bad request: expected \"place[ job=ID]\"\n",
	                                      "ok run memguard/user-1-1 max -\n"};
	char dir[] = "/tmp/memguard-test-place.XXXXXX", path[64], why[256];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct mg_place_answer a;
	int lfd, status;
	pid_t child;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/place.sock", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 2), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		for (int i = 0; i < 2; i++) {
			char buf[128] = "";
			int fd = accept(lfd, NULL, NULL);
			ssize_t n = fd < 0 ? -1 : recv(fd, buf, sizeof(buf) - 1, 0);
			if (n <= 0 || strcmp(buf, expect[i]) != 0)
				_exit(10 + i);
			if (send(fd, replies[i], strlen(replies[i]), MSG_NOSIGNAL) < 0)
				_exit(20 + i);
			close(fd);
		}
		_exit(0);
	}
	close(lfd);
	assert_int_equal(mg_place_ask(path, "7", 1 * MiB, 2000, &a, why, sizeof(why)), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	unlink(path);
	rmdir(dir);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(a.kind, MG_PLACE_ANSWER_RUN);
	assert_string_equal(a.cgroup, "memguard/user-1-1");
	assert_true(a.budget_refused);
}

/* The client against a socket nobody listens on: a one-line reason, no hang. */
static void test_ask_without_daemon(void **state)
{
	struct mg_place_answer a;
	char why[256];

	assert_true(mg_place_ask("/nonexistent/memguard/place.sock", NULL, 0, 100, &a, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "placement service at /nonexistent/memguard/place.sock"));
	assert_null(strchr(why, '\n'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_decide_table),
	        cmocka_unit_test(test_job_id_valid),
	        cmocka_unit_test(test_beside),
	        cmocka_unit_test(test_limit_files),
	        cmocka_unit_test(test_devprog_covered),
	        cmocka_unit_test(test_watches),
	        cmocka_unit_test_setup_teardown(test_move_back, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(test_find_stranger, ft_setup, ft_teardown),
	        cmocka_unit_test(test_parse_request),
	        cmocka_unit_test(test_caller_limit),
	        cmocka_unit_test(test_parse_reply),
	        cmocka_unit_test(test_ask_without_daemon),
	        cmocka_unit_test(test_ask_old_daemon),
	        cmocka_unit_test(test_path_placed_table),
	        cmocka_unit_test(test_decide_chain_cut),
	        cmocka_unit_test(test_chain_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
