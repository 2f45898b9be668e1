/* The launcher's command line: mg_options_parse and mg_options_usage. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tree.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "options.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define MAX_ARGS 16

/* Every long option of the table in launcher/options.c, and whether it
 * takes an argument (with a valid one to pass). */
struct long_opt {
	const char *name;
	const char *arg; /* NULL: no argument */
};
/* clang-format off */
static const struct long_opt all_long_options[] = {
        {"ntasks", "4"},         {"tasks", "params.txt"},
        {"mem-per-task", "1G"},  {"mem", "8G"},
        {"reserve", "5%"},       {"runtime", "pypy"},
        {"no-heap-flags", NULL}, {"rlimit-as", "auto"},
        {"memory-high", "90%"},  {"elastic", NULL},
        {"strict", NULL},        {"require-cgroups", NULL},
        {"no-cgroups", NULL},    {"explain", NULL},
        {"dry-run", NULL},       {"report", "r.json"},
        {"config", "m.conf"},    {"cgroup-parent", "hpc"},
        {"grace", "5s"},         {"quiet", NULL},
        {"verbose", NULL},       {"help", NULL},
        {"version", NULL},       {"metrics", "m.prom"},
        {"joblog", "j.log"},     {"resume", NULL},
        {"resume-failed", NULL}, {"retries", "3"},
        {"results", "out"},      {"progress", NULL},
        {"share-job", NULL},     {"jobs", "4"},
        {"keep-order", NULL},    {"arg-file", "in.txt"},
        {"colsep", ","},         {"line-buffer", NULL},
        {"ungroup", NULL},       {"tag", NULL},
        {"halt", "now,fail=1"},  {"quote", NULL},
        {"backend", "steps"},    {"step-cpus", "2"},
        {NULL, NULL},
};
/* clang-format on */

/* argv as the parser gets it: a mutable, NULL-terminated copy of the
 * pointers (the strings stay literals; getopt never writes to them). */
struct args {
	int argc;
	char *argv[MAX_ARGS + 1];
};

static void args_set(struct args *a, const char *const list[])
{
	a->argc = 0;
	while (list[a->argc]) {
		assert_true(a->argc < MAX_ARGS);
		a->argv[a->argc] = (char *)list[a->argc];
		a->argc++;
	}
	a->argv[a->argc] = NULL;
}

/* a becomes "memguard", then the case's args, then tail (NULL: nothing);
 * name, when not NULL, the case's args quoted, for messages. */
static void args_set_case(struct args *a, const char *const args[], const char *const tail[], char *name,
                          size_t namesize)
{
	const char *list[MAX_ARGS + 1] = {"memguard"};
	size_t n = 1;

	if (name)
		name[0] = '\0';
	for (size_t j = 0; args[j]; j++) {
		assert_true(n < MAX_ARGS);
		list[n++] = args[j];
		if (name)
			snprintf(name + strlen(name), namesize - strlen(name), "'%s' ", args[j]);
	}
	for (size_t j = 0; tail && tail[j]; j++) {
		assert_true(n < MAX_ARGS);
		list[n++] = tail[j];
	}
	list[n] = NULL;
	args_set(a, list);
}

static int parse(struct args *a, struct mg_options *o, char *err, size_t errsize, FILE *out)
{
	memset(o, 0xa5, sizeof(*o));
	memset(err, 0, errsize);
	return mg_options_parse(a->argc, a->argv, o, err, errsize, out);
}

/* parse() of list (from "memguard" on) when only the result and the message
 * in err matter. */
static int parse_list(const char *const list[], char *err, size_t errsize)
{
	struct mg_options o;
	struct args a;

	args_set(&a, list);
	return parse(&a, &o, err, errsize, stdout);
}

static struct mg_options defaults(void)
{
	struct mg_options o = {.mem = MG_SIZE_UNLIMITED,
	                       .heap_flags = -1,
	                       .rlimit_as = -1,
	                       .memory_high = -1,
	                       .mode = -1,
	                       .grace_usec = MG_GRACE_UNSET,
	                       .retries = -1};
	return o;
}

static void assert_str_or_null(const char *got, const char *want, const char *field, const char *name)
{
	if (!want) {
		if (got)
			print_error("%s: %s is \"%s\"; want NULL\n", name, field, got);
		assert_null(got);
		return;
	}
	if (!got || strcmp(got, want) != 0)
		print_error("%s: %s is \"%s\"; want \"%s\"\n", name, field, got ? got : "(null)", want);
	assert_non_null(got);
	assert_string_equal(got, want);
}

/* Compares every field but command. */
static void assert_options_equal(const struct mg_options *got, const struct mg_options *want,
                                 const char *name)
{
#define SAME(field)                                                                                          \
	do {                                                                                                 \
		if (got->field != want->field)                                                               \
			print_error("%s: " #field " is %" PRIu64 "; want %" PRIu64 "\n", name,               \
			            (uint64_t)got->field, (uint64_t)want->field);                            \
		assert_true(got->field == want->field);                                                      \
	} while (0)
	SAME(ntasks);
	SAME(mem_per_task);
	SAME(mem);
	SAME(runtime_forced);
	if (want->runtime_forced)
		SAME(runtime);
	SAME(heap_flags);
	SAME(rlimit_as);
	SAME(memory_high);
	SAME(mode);
	SAME(require_cgroups);
	SAME(no_cgroups);
	SAME(share_job);
	SAME(explain);
	SAME(dry_run);
	SAME(quiet);
	SAME(verbose);
	SAME(grace_usec);
#undef SAME
	assert_str_or_null(got->tasks_file, want->tasks_file, "tasks_file", name);
	assert_str_or_null(got->reserve, want->reserve, "reserve", name);
	assert_str_or_null(got->report_path, want->report_path, "report_path", name);
	assert_str_or_null(got->metrics_path, want->metrics_path, "metrics_path", name);
	assert_str_or_null(got->config_path, want->config_path, "config_path", name);
	assert_str_or_null(got->cgroup_parent, want->cgroup_parent, "cgroup_parent", name);
}

/* --- the command --- */

static void command_after_double_dash(void **state)
{
	static const char *const list[] = {"memguard", "-n", "4", "--", "cmd", "a", "b", NULL};
	struct mg_options o, want = defaults();
	struct args a;
	char err[256];

	args_set(&a, list);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_ptr_equal(o.command, &a.argv[4]);
	assert_string_equal(o.command[0], "cmd");
	assert_string_equal(o.command[1], "a");
	assert_string_equal(o.command[2], "b");
	assert_null(o.command[3]);
	want.ntasks = 4;
	assert_options_equal(&o, &want, "-n 4 -- cmd a b");
}

static void command_without_double_dash(void **state)
{
	static const char *const list[] = {"memguard", "-n", "4", "cmd", "a", "b", NULL};
	struct mg_options o;
	struct args a;
	char err[256];

	args_set(&a, list);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_int_equal(o.ntasks, 4);
	assert_ptr_equal(o.command, &a.argv[3]);
	assert_string_equal(o.command[0], "cmd");
	assert_string_equal(o.command[2], "b");
	assert_null(o.command[3]);
}

struct command_case {
	const char *name;
	const char *argv[MAX_ARGS];
	int command_at;
	unsigned ntasks;
};

static void options_after_the_command_belong_to_it(void **state)
{
	static const struct command_case cases[] = {
	        {"bare command", {"memguard", "pypy3", "sim.py", NULL}, 1, 0},
	        {"command's own -n",
	         {"memguard", "-n", "4", "--", "cmd", "-n", "8", "--mem", "1G", NULL},
	         4,
	         4},
	        {"command's own -n without --", {"memguard", "-n", "4", "cmd", "-n", "8", NULL}, 3, 4},
	        {"command's --help", {"memguard", "cmd", "--help", NULL}, 1, 0},
	        {"command named --help", {"memguard", "--", "--help", NULL}, 2, 0},
	        {"command named -n", {"memguard", "-n", "2", "--", "-n", "3", NULL}, 4, 2},
	        {"second -- is the command's", {"memguard", "--", "--", "x", NULL}, 2, 0},
	        {"command named -", {"memguard", "-", NULL}, 1, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_options o;
		struct args a;
		char err[256];
		int r;

		args_set(&a, cases[i].argv);
		r = parse(&a, &o, err, sizeof(err), stdout);
		if (r != MG_PARSE_RUN)
			print_error("%s: %d (%s)\n", cases[i].name, r, err);
		assert_int_equal(r, MG_PARSE_RUN);
		assert_ptr_equal(o.command, &a.argv[cases[i].command_at]);
		assert_int_equal(o.ntasks, cases[i].ntasks);
		/* The command runs to the end of argv. */
		assert_null(o.command[a.argc - cases[i].command_at]);
	}
}

/* --- every option --- */

struct good_case {
	const char *argv[MAX_ARGS];
	struct mg_options want; /* starts from defaults(): only the changes */
};

static void every_option_table(void **state)
{
	/* Fields a case does not name keep the defaults; the int fields whose
	 * default is -1 (heap_flags, rlimit_as, memory_high, mode) hold the
	 * wanted value + 1, so that 0 can mean "not named". */
	static const struct good_case cases[] = {
	        {{"-n", "8"}, {.ntasks = 8}},
	        {{"-n8"}, {.ntasks = 8}},
	        {{"--ntasks", "16"}, {.ntasks = 16}},
	        {{"--ntasks=16"}, {.ntasks = 16}},
	        {{"-n", "1048576"}, {.ntasks = 1048576}},
	        {{"-n", "007"}, {.ntasks = 7}},
	        {{"-n", "2", "-n", "3"}, {.ntasks = 3}}, /* the last one wins */
	        {{"--tasks", "params.txt"}, {.tasks_file = "params.txt"}},
	        {{"--tasks=dir/p q.txt"}, {.tasks_file = "dir/p q.txt"}},
	        {{"--mem-per-task", "2G"}, {.mem_per_task = 2 * GiB}},
	        {{"--mem-per-task=1.5GiB"}, {.mem_per_task = 1536 * MiB}},
	        {{"--mem-per-task", "512M"}, {.mem_per_task = 512 * MiB}},
	        {{"--mem-per-task", "4096"}, {.mem_per_task = 4096}},
	        {{"--mem", "60G"}, {.mem = 60 * GiB}},
	        {{"--mem", "max"}, {.mem = MG_SIZE_UNLIMITED}},
	        {{"--mem=1T"}, {.mem = 1024 * GiB}},
	        {{"--mem", "8G", "--mem-per-task", "1G"}, {.mem = 8 * GiB, .mem_per_task = 1 * GiB}},
	        {{"--reserve", "10%"}, {.reserve = "10%"}},
	        {{"--reserve", "4G"}, {.reserve = "4G"}},
	        {{"--reserve", "0"}, {.reserve = "0"}},
	        {{"--reserve", "12.5%"}, {.reserve = "12.5%"}},
	        {{"--runtime", "pypy"}, {.runtime_forced = true, .runtime = MG_RUNTIME_PYPY}},
	        {{"--runtime", "generic"}, {.runtime_forced = true, .runtime = MG_RUNTIME_GENERIC}},
	        {{"--runtime", "cpython"}, {.runtime_forced = true, .runtime = MG_RUNTIME_CPYTHON}},
	        {{"--runtime", "jvm"}, {.runtime_forced = true, .runtime = MG_RUNTIME_JVM}},
	        {{"--runtime", "go"}, {.runtime_forced = true, .runtime = MG_RUNTIME_GO}},
	        {{"--runtime", "node"}, {.runtime_forced = true, .runtime = MG_RUNTIME_NODE}},
	        {{"--runtime", "dotnet"}, {.runtime_forced = true, .runtime = MG_RUNTIME_DOTNET}},
	        {{"--runtime=r"}, {.runtime_forced = true, .runtime = MG_RUNTIME_R}},
	        {{"--no-heap-flags"}, {.heap_flags = 0 + 1}},
	        {{"--rlimit-as", "auto"}, {.rlimit_as = MG_RLIMIT_AS_AUTO + 1}},
	        {{"--rlimit-as", "on"}, {.rlimit_as = MG_RLIMIT_AS_ON + 1}},
	        {{"--rlimit-as=off"}, {.rlimit_as = MG_RLIMIT_AS_OFF + 1}},
	        {{"--memory-high", "80%"}, {.memory_high = 80 + 1}},
	        {{"--memory-high", "1%"}, {.memory_high = 1 + 1}},
	        {{"--memory-high=100%"}, {.memory_high = 100 + 1}},
	        {{"--memory-high", "050%"}, {.memory_high = 50 + 1}},
	        {{"--elastic"}, {.mode = MG_SHARE_ELASTIC + 1}},
	        {{"--strict"}, {.mode = MG_SHARE_STRICT + 1}},
	        {{"--elastic", "--strict"}, {.mode = MG_SHARE_STRICT + 1}},
	        {{"--require-cgroups"}, {.require_cgroups = true}},
	        {{"--no-cgroups"}, {.no_cgroups = true}},
	        {{"--share-job"}, {.share_job = true}},
	        {{"--explain"}, {.explain = true}},
	        {{"--dry-run"}, {.dry_run = true, .explain = true}},
	        {{"--report", "out.json"}, {.report_path = "out.json"}},
	        {{"--report=/tmp/r.json"}, {.report_path = "/tmp/r.json"}},
	        {{"--metrics", "run.prom"}, {.metrics_path = "run.prom"}},
	        {{"--metrics=/tmp/m.prom"}, {.metrics_path = "/tmp/m.prom"}},
	        {{"--config", "my.conf"}, {.config_path = "my.conf"}},
	        {{"--cgroup-parent", "hpc/memguard"}, {.cgroup_parent = "hpc/memguard"}},
	        {{"--cgroup-parent=jobs"}, {.cgroup_parent = "jobs"}},
	        {{"--grace", "30s"}, {.grace_usec = 30000000}},
	        {{"--grace", "500ms"}, {.grace_usec = 500000}},
	        {{"--grace", "2"}, {.grace_usec = 2000000}},
	        {{"--grace=1.5s"}, {.grace_usec = 1500000}},
	        {{"--grace", "2m"}, {.grace_usec = 120000000}},
	        {{"-q"}, {.quiet = true}},
	        {{"--quiet"}, {.quiet = true}},
	        {{"-v"}, {.verbose = 1}},
	        {{"-vv"}, {.verbose = 2}},
	        {{"--verbose", "--verbose", "-v"}, {.verbose = 3}},
	        {{"-qvn2"}, {.quiet = true, .verbose = 1, .ntasks = 2}},
	        {{"-qv", "-n", "2", "--explain"},
	         {.quiet = true, .verbose = 1, .ntasks = 2, .explain = true}},
	        /* Unique prefixes of long options, as getopt_long allows. */
	        {{"--mem-per", "1G"}, {.mem_per_task = 1 * GiB}},
	        {{"--dry"}, {.dry_run = true, .explain = true}},
	        {{"--nt", "3"}, {.ntasks = 3}},
	};
	static const char *const command[] = {"--", "cmd", NULL}; /* after each case's args */

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_options o, want = defaults();
		const struct mg_options *c = &cases[i].want;
		char name[256], err[256];
		struct args a;
		int r;

		args_set_case(&a, cases[i].argv, command, name, sizeof(name));

		/* Merge the case's changes over the defaults. */
		if (c->ntasks)
			want.ntasks = c->ntasks;
		if (c->tasks_file)
			want.tasks_file = c->tasks_file;
		if (c->mem_per_task)
			want.mem_per_task = c->mem_per_task;
		if (c->mem)
			want.mem = c->mem;
		if (c->reserve)
			want.reserve = c->reserve;
		if (c->runtime_forced)
			want.runtime_forced = true, want.runtime = c->runtime;
		if (c->heap_flags)
			want.heap_flags = c->heap_flags - 1;
		if (c->rlimit_as)
			want.rlimit_as = c->rlimit_as - 1;
		if (c->memory_high)
			want.memory_high = c->memory_high - 1;
		if (c->mode)
			want.mode = c->mode - 1;
		want.require_cgroups = c->require_cgroups;
		want.no_cgroups = c->no_cgroups;
		want.share_job = c->share_job;
		want.explain = c->explain;
		want.dry_run = c->dry_run;
		want.quiet = c->quiet;
		want.verbose = c->verbose;
		if (c->report_path)
			want.report_path = c->report_path;
		if (c->metrics_path)
			want.metrics_path = c->metrics_path;
		if (c->config_path)
			want.config_path = c->config_path;
		if (c->cgroup_parent)
			want.cgroup_parent = c->cgroup_parent;
		if (c->grace_usec)
			want.grace_usec = c->grace_usec;

		r = parse(&a, &o, err, sizeof(err), stdout);
		if (r != MG_PARSE_RUN)
			print_error("%s: %d (%s)\n", name, r, err);
		assert_int_equal(r, MG_PARSE_RUN);
		assert_options_equal(&o, &want, name);
		assert_ptr_equal(o.command, &a.argv[a.argc - 1]);
		assert_string_equal(o.command[0], "cmd");
	}
}

/* The farm's options: values, defaults, and --progress with and without
 * its interval. */
static void farm_options(void **state)
{
	struct mg_options o;
	struct args a;
	char err[256];
	static const char *const plain[] = {"memguard", "--tasks", "t", "--", "x", NULL};
	static const char *const all[] = {"memguard",    "--joblog",  "j.log", "--resume-failed",
	                                  "--retries=0", "--results", "out",   "--progress=30s",
	                                  "x",           NULL};
	static const char *const bare[] = {"memguard", "--progress", "--joblog=j", "--resume", "x", NULL};

	args_set(&a, plain);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_null(o.joblog_path);
	assert_int_equal(o.resume, 0);
	assert_int_equal(o.retries, -1);
	assert_false(o.progress);

	args_set(&a, all);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_string_equal(o.joblog_path, "j.log");
	assert_int_equal(o.resume, 2);
	assert_int_equal(o.retries, 0);
	assert_string_equal(o.results_dir, "out");
	assert_true(o.progress);
	assert_int_equal(o.progress_usec, 30000000);

	args_set(&a, bare);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_true(o.progress);
	assert_int_equal(o.progress_usec, 0);
	assert_int_equal(o.resume, 1);
	assert_string_equal(o.command[0], "x");
}

static void backend_options(void **state)
{
	struct mg_options o;
	struct args a;
	char err[256];
	static const char *const none[] = {"memguard", "x", NULL};
	static const char *const steps[] = {"memguard", "--backend=steps", "--step-cpus", "2", "x", NULL};
	static const char *const old[] = {"memguard", "--no-cgroups", "x", NULL};
	static const char *const both[] = {"memguard", "--no-cgroups", "--backend", "degraded", "x", NULL};

	args_set(&a, none);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_int_equal(o.backend, MG_BACKEND_AUTO);
	assert_int_equal(o.step_cpus, 0);
	args_set(&a, steps);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_int_equal(o.backend, MG_BACKEND_STEPS);
	assert_int_equal(o.step_cpus, 2);
	/* --no-cgroups is --backend=degraded. */
	args_set(&a, old);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_int_equal(o.backend, MG_BACKEND_DEGRADED);
	args_set(&a, both);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_int_equal(o.backend, MG_BACKEND_DEGRADED);
	for (int b = MG_BACKEND_AUTO; b <= MG_BACKEND_DEGRADED; b++) {
		enum mg_backend back;
		assert_int_equal(mg_backend_from_name(mg_backend_name((enum mg_backend)b), &back), 0);
		assert_int_equal(back, b);
	}
}

static void option_arguments_point_into_argv(void **state)
{
	static const char *const list[] = {"memguard", "--tasks", "t.txt", "--report=r.json",
	                                   "--",       "x",       NULL};
	struct mg_options o;
	struct args a;
	char err[256];

	args_set(&a, list);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_ptr_equal(o.tasks_file, a.argv[2]);
	assert_ptr_equal(o.report_path, a.argv[3] + strlen("--report="));
}

/* --- bad input --- */

struct bad_case {
	const char *argv[MAX_ARGS];
	const char *needle; /* in the message: the bad value, quoted, or the option */
	const char *reason; /* and, where not NULL, why it is bad */
};

static const struct bad_case bad_cases[] = {
        {{"--backend", "slurm", "--", "x"}, "\"slurm\"", "auto, local, placed, steps or degraded"},
        {{"--backend=steps", "--elastic", "--", "x"}, "--elastic", "needs a cgroup memguard owns"},
        {{"--backend=steps", "--memory-high=90%", "--", "x"}, "--memory-high", "Slurm step"},
        {{"--backend=steps", "--share-job", "--", "x"}, "--share-job", "needs a cgroup"},
        {{"--backend=steps", "--cgroup-parent=a", "--", "x"}, "--cgroup-parent", "needs a cgroup"},
        {{"--backend=placed", "--cgroup-parent=a", "--", "x"}, "--cgroup-parent", "contradict"},
        {{"--backend=local", "--no-cgroups", "--", "x"}, "--no-cgroups", "contradict"},
        {{"--backend=degraded", "--require-cgroups", "--", "x"}, "--require-cgroups", "contradict"},
        {{"--backend=local", "--step-cpus=2", "--", "x"}, "--step-cpus", "not --backend=local"},
        {{"--step-cpus=0", "--", "x"}, "\"0\"", "1 to 4096"},
        {{"--resume", "--", "x"}, "--resume", "needs --joblog FILE"},
        {{"--resume-failed", "--", "x"}, "--resume-failed", "needs --joblog FILE"},
        {{"--joblog", "j", "--resume", "--resume-failed", "--", "x"}, "--resume", "contradict"},
        {{"--joblog", "", "--", "x"}, "--joblog", "file name"},
        {{"--results", "", "--", "x"}, "--results", "directory"},
        {{"--retries", "101", "--", "x"}, "\"101\"", "0 to 100"},
        {{"--retries", "-1", "--", "x"}, "\"-1\"", NULL},
        {{"--retries", "two", "--", "x"}, "\"two\"", NULL},
        {{"--progress=0", "--", "x"}, "\"0\"", "zero"},
        {{"--progress=fast", "--", "x"}, "\"fast\"", NULL},
        {{"-n", "0", "--", "x"}, "\"0\"", "1048576"},
        {{"-n", "abc", "--", "x"}, "\"abc\"", NULL},
        {{"-n", "99999999", "--", "x"}, "\"99999999\"", NULL},
        {{"-n", "1048577", "--", "x"}, "\"1048577\"", NULL},
        {{"-n", "18446744073709551616", "--", "x"}, "\"18446744073709551616\"", NULL},
        {{"-n", "-1", "--", "x"}, "\"-1\"", NULL},
        {{"-n", "", "--", "x"}, "\"\"", NULL},
        {{"-n", "4x", "--", "x"}, "\"4x\"", NULL},
        {{"-n", " 4", "--", "x"}, "\" 4\"", NULL},
        {{"-n", "4.0", "--", "x"}, "\"4.0\"", NULL},
        {{"--ntasks=0x10", "--", "x"}, "\"0x10\"", NULL},
        {{"--mem-per-task", "4XB", "--", "x"}, "\"4XB\"", NULL},
        {{"--mem-per-task", "0", "--", "x"}, "\"0\"", NULL},
        {{"--mem-per-task", "-1G", "--", "x"}, "\"-1G\"", NULL},
        {{"--mem-per-task", "50%", "--", "x"}, "\"50%\"", NULL},
        {{"--mem-per-task", "99999999999P", "--", "x"}, "\"99999999999P\"", NULL},
        {{"--mem", "0", "--", "x"}, "\"0\"", "zero"},
        /* 2^64-1 bytes is the "no limit" sentinel: as a number it is refused */
        {{"--mem", "18446744073709551615", "--", "x"}, "\"18446744073709551615\"", "too large"},
        {{"--mem-per-task", "18446744073709551615B", "--", "x"}, "\"18446744073709551615B\"", "too large"},
        {{"--mem", "0G", "--", "x"}, "\"0G\"", NULL},
        {{"--mem", "", "--", "x"}, "\"\"", NULL},
        {{"--mem=lots", "--", "x"}, "\"lots\"", NULL},
        {{"--reserve", "bogus", "--", "x"}, "\"bogus\"", NULL},
        {{"--reserve", "101%", "--", "x"}, "\"101%\"", NULL},
        {{"--reserve", "", "--", "x"}, "\"\"", NULL},
        {{"--reserve", "-5%", "--", "x"}, "\"-5%\"", NULL},
        {{"--runtime", "cobol", "--", "x"}, "\"cobol\"", "pypy"},
        {{"--runtime", "", "--", "x"}, "\"\"", NULL},
        {{"--runtime", "pypy3.10 ", "--", "x"}, "\"pypy3.10 \"", NULL},
        {{"--rlimit-as", "maybe", "--", "x"}, "\"maybe\"", "auto, on or off"},
        {{"--rlimit-as", "", "--", "x"}, "\"\"", NULL},
        {{"--rlimit-as", "onn", "--", "x"}, "\"onn\"", NULL},
        {{"--memory-high", "120%", "--", "x"}, "\"120%\"", "100%"},
        {{"--memory-high", "50", "--", "x"}, "\"50\"", "percentage"},
        {{"--memory-high", "0%", "--", "x"}, "\"0%\"", NULL},
        {{"--memory-high", "%", "--", "x"}, "\"%\"", NULL},
        {{"--memory-high", "", "--", "x"}, "\"\"", NULL},
        {{"--memory-high", "-5%", "--", "x"}, "\"-5%\"", NULL},
        {{"--memory-high", "50%%", "--", "x"}, "\"50%%\"", NULL},
        {{"--memory-high", "5 0%", "--", "x"}, "\"5 0%\"", NULL},
        {{"--memory-high", "12345678%", "--", "x"}, "\"12345678%\"", NULL},
        {{"--memory-high", "99999999999999999999999%", "--", "x"}, "\"99999999999999999999999%\"", NULL},
        {{"--memory-high", "50.5%", "--", "x"}, "\"50.5%\"", NULL},
        {{"--grace", "soon", "--", "x"}, "\"soon\"", NULL},
        {{"--grace", "", "--", "x"}, "\"\"", NULL},
        {{"--grace", "-1s", "--", "x"}, "\"-1s\"", NULL},
        {{"--grace", "10d", "--", "x"}, "\"10d\"", NULL},
        {{"--cgroup-parent", "../x", "--", "x"}, "\"../x\"", "without .."},
        {{"--cgroup-parent", "a/../b", "--", "x"}, "\"a/../b\"", NULL},
        {{"--cgroup-parent", "..", "--", "x"}, "\"..\"", NULL},
        {{"--cgroup-parent", "", "--", "x"}, "\"\"", NULL},
        {{"--bogus", "--", "x"}, "--bogus", "unknown option"},
        {{"--bogus=1", "--", "x"}, "--bogus", NULL},
        {{"-x", "--", "x"}, "-x", NULL},
        {{"--me", "1G", "--", "x"}, "--me", NULL}, /* ambiguous: --mem, --mem-per-task, --memory-high */
        {{"--quiet=yes", "--", "x"}, "--quiet", NULL},
        {{"-n"}, "-n", "argument"},
        {{"--ntasks"}, "--ntasks", NULL},
        {{"--mem"}, "--mem", "argument"},
        {{"--tasks"}, "--tasks", NULL},
        {{"--grace"}, "--grace", NULL},
        {{"-q", "-n"}, "-n", NULL},
        {{"-n", "4"}, "no command", NULL},
        {{"--"}, "no command", NULL},
        {{"-q", "--"}, "no command", NULL},
        {{NULL}, "no command", NULL},
        {{"--require-cgroups", "--no-cgroups", "--", "x"}, "--no-cgroups", "--require-cgroups"},
        {{"--no-cgroups", "-q", "--require-cgroups", "x"}, "--require-cgroups", NULL},
};

static void bad_input_is_einval_with_one_line(void **state)
{
	for (size_t i = 0; i < MG_ARRAY_SIZE(bad_cases); i++) {
		struct ft_capture cap;
		struct mg_options o;
		char err[256], name[256], *stderr_text;
		struct args a;
		bool ok;
		int r;

		args_set_case(&a, bad_cases[i].argv, NULL, name, sizeof(name));
		ft_capture_begin(&cap);
		r = parse(&a, &o, err, sizeof(err), stdout);
		stderr_text = ft_capture_end(&cap);
		if (r != -EINVAL || !strstr(err, bad_cases[i].needle) || strchr(err, '\n') || !err[0] ||
		    stderr_text[0])
			print_error("%s: %d \"%s\"; want -EINVAL and %s; stderr \"%s\"\n", name, r, err,
			            bad_cases[i].needle, stderr_text);
		/* opterr is off: getopt itself prints nothing. */
		ok = stderr_text[0] == '\0';
		free(stderr_text);
		assert_true(ok);
		assert_int_equal(r, -EINVAL);
		assert_true(err[0] != '\0');
		assert_null(strchr(err, '\n'));
		ft_assert_contains(err, bad_cases[i].needle);
	}
}

/* Where bad_cases gives a reason, the message says why the input is bad. */
static void bad_input_reasons(void **state)
{
	for (size_t i = 0; i < MG_ARRAY_SIZE(bad_cases); i++) {
		struct mg_options o;
		char err[256], name[256];
		struct args a;

		if (!bad_cases[i].reason)
			continue;
		args_set_case(&a, bad_cases[i].argv, NULL, name, sizeof(name));
		int r = parse(&a, &o, err, sizeof(err), stdout);
		if (r != -EINVAL)
			print_error("%s: %d \"%s\"; want -EINVAL\n", name, r, err);
		assert_int_equal(r, -EINVAL);
		ft_assert_contains(err, bad_cases[i].reason);
	}
}

/* getopt_long's optind points past a clustered short option only at the end
 * of the cluster: "-N4" (a typo for -n 4) must still name the bad option,
 * not some other argument. */
static void unknown_short_option_in_cluster_is_named(void **state)
{
	static const char *const lists[][6] = {
	        {"memguard", "-N4", "--", "x", NULL},
	        {"memguard", "-xq", "--", "x", NULL},
	        {"memguard", "-q", "-Zv", "--", "x", NULL},
	};
	static const char *const want[] = {"-N", "-x", "-Z"};
	size_t wrong = 0;

	for (size_t i = 0; i < MG_ARRAY_SIZE(lists); i++) {
		char err[256];
		int r = parse_list(lists[i], err, sizeof(err));

		if (r != -EINVAL || !strstr(err, want[i])) {
			print_error("%s: %d \"%s\"; want -EINVAL naming %s\n", lists[i][1], r, err, want[i]);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

/* A bad size must be explained as what it is, whatever parsed before it:
 * "zero" is only for a size that parsed as 0. */
static void bad_size_reason_does_not_depend_on_earlier_options(void **state)
{
	static const char *const lists[][8] = {
	        {"memguard", "--mem-per-task", "4XB", "--", "x", NULL},
	        {"memguard", "--reserve", "0", "--mem-per-task", "4XB", "--", "x", NULL},
	        {"memguard", "--reserve", "0", "--mem", "lots", "--", "x", NULL},
	        {"memguard", "--memory-high", "50%", "--mem", "4XB", "--", "x", NULL},
	};
	/* What mg_size_parse() says about each bad size. */
	static const char *const reasons[] = {"unknown unit", "unknown unit", "not a number", "unknown unit"};
	size_t wrong = 0;

	for (size_t i = 0; i < MG_ARRAY_SIZE(lists); i++) {
		char err[256];
		int r = parse_list(lists[i], err, sizeof(err));

		if (r != -EINVAL || strstr(err, "zero") || !strstr(err, reasons[i])) {
			print_error("%s %s: %d \"%s\"; want -EINVAL and \"%s\"\n", lists[i][1], lists[i][2],
			            r, err, reasons[i]);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

static void err_is_truncated_safely(void **state)
{
	static const char *const list[] = {"memguard", "--runtime", "cobol", "--", "x", NULL};
	struct mg_options o;
	struct args a;
	char err[10];

	args_set(&a, list);
	memset(err, 'X', sizeof(err));
	assert_int_equal(mg_options_parse(a.argc, a.argv, &o, err, sizeof(err), stdout), -EINVAL);
	assert_int_equal(strlen(err), sizeof(err) - 1);
}

/* --- --help and --version --- */

static char *run_for_text(const char *const list[], int want)
{
	struct mg_options o;
	char *text = NULL, err[256];
	size_t len = 0;
	struct args a;
	FILE *out = open_memstream(&text, &len);
	int r;

	assert_non_null(out);
	args_set(&a, list);
	r = parse(&a, &o, err, sizeof(err), out);
	if (r != want)
		print_error("%s: %d (%s); want %d\n", list[1], r, err, want);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(r, want);
	assert_non_null(text);
	return text;
}

static void help_mentions_every_long_option(void **state)
{
	static const char *const list[] = {"memguard", "--help", NULL};
	char *text = run_for_text(list, MG_PARSE_EXIT_OK);

	ft_assert_contains(text, "Usage: memguard");
	for (size_t i = 0; all_long_options[i].name; i++) {
		char opt[64];
		snprintf(opt, sizeof(opt), "--%s ", all_long_options[i].name);
		ft_assert_contains(text, opt);
	}
	ft_assert_contains(text, "-n, --ntasks");
	ft_assert_contains(text, "-q, --quiet");
	ft_assert_contains(text, "-v, --verbose");
	ft_assert_contains(text, "-h, --help");
	ft_assert_contains(text, "125");
	assert_int_equal(text[strlen(text) - 1], '\n');
	free(text);

	/* -h is the same text, and mg_options_usage() writes it directly. */
	static const char *const short_list[] = {"memguard", "-h", NULL};
	char *again = run_for_text(short_list, MG_PARSE_EXIT_OK);
	char *direct = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&direct, &len);
	assert_non_null(out);
	mg_options_usage(out);
	assert_int_equal(fclose(out), 0);
	assert_string_equal(again, direct);
	free(again);
	free(direct);
}

/* The table in options.c itself, read from the source tree when the test
 * runs under ctest (MEMGUARD_SOURCE_DIR): an option added there but not to
 * --help (or to the list above) fails here. */
static void help_matches_the_option_table_in_source(void **state)
{
	const char *src = getenv("MEMGUARD_SOURCE_DIR");
	static const char *const list[] = {"memguard", "--help", NULL};
	char path[4096], *code = NULL, *help;
	size_t found = 0;
	const char *p, *end;

	if (!src || !*src)
		fail_msg("MEMGUARD_SOURCE_DIR is not set: run this test through ctest");
	snprintf(path, sizeof(path), "%s/launcher/options.c", src);
	assert_true(mg_read_file(path, &code) > 0);
	help = run_for_text(list, MG_PARSE_EXIT_OK);
	p = strstr(code, "long_options[] = {");
	assert_non_null(p);
	end = strstr(p, "{NULL, 0, NULL, 0}");
	assert_non_null(end);
	while ((p = strstr(p, "{\"")) && p < end) {
		char name[64], opt[70];
		size_t len = strcspn(p + 2, "\"");
		bool known = false;

		assert_true(len > 0 && len < sizeof(name));
		memcpy(name, p + 2, len);
		name[len] = '\0';
		snprintf(opt, sizeof(opt), "--%s ", name);
		ft_assert_contains(help, opt);
		for (size_t i = 0; all_long_options[i].name; i++)
			known = known || strcmp(all_long_options[i].name, name) == 0;
		if (!known)
			print_error("option --%s is new: add it to all_long_options\n", name);
		assert_true(known);
		found++;
		p += 2 + len;
	}
	assert_int_equal(found, MG_ARRAY_SIZE(all_long_options) - 1);
	free(help);
	free(code);
}

static void every_listed_option_is_accepted(void **state)
{
	for (size_t i = 0; all_long_options[i].name; i++) {
		char opt[64], err[256];
		const char *list[7] = {"memguard", opt};
		struct mg_options o;
		struct args a;
		size_t n = 2;
		int r;

		if (strcmp(all_long_options[i].name, "help") == 0 ||
		    strcmp(all_long_options[i].name, "version") == 0)
			continue; /* they write to out: tested on their own */
		snprintf(opt, sizeof(opt), "--%s", all_long_options[i].name);
		if (all_long_options[i].arg)
			list[n++] = all_long_options[i].arg;
		/* a resume reads the joblog */
		if (strncmp(all_long_options[i].name, "resume", 6) == 0)
			list[n++] = "--joblog=j.log";
		list[n++] = "cmd";
		/* GNU parallel's own options want its inputs */
		list[n++] = "{}";
		list[n] = NULL;
		args_set(&a, list);
		r = parse(&a, &o, err, sizeof(err), stdout);
		if (r != MG_PARSE_RUN)
			print_error("%s: %d (%s)\n", opt, r, err);
		assert_int_equal(r, MG_PARSE_RUN);
	}
}

static void version_prints_the_version(void **state)
{
	static const char *const list[] = {"memguard", "--version", NULL};
	char *text = run_for_text(list, MG_PARSE_EXIT_OK);

	assert_string_equal(text, "memguard " MEMGUARD_VERSION "\n");
	free(text);
}

static void help_and_version_end_parsing_early(void **state)
{
	struct order_case {
		const char *argv[MAX_ARGS];
		int want;
	};
	static const struct order_case cases[] = {
	        {{"memguard", "--help", NULL}, MG_PARSE_EXIT_OK},            /* no command needed */
	        {{"memguard", "--help", "--bogus", NULL}, MG_PARSE_EXIT_OK}, /* later junk unseen */
	        {{"memguard", "-n", "4", "--version", "-n", "0", NULL}, MG_PARSE_EXIT_OK},
	        {{"memguard", "--require-cgroups", "--no-cgroups", "-h", NULL}, MG_PARSE_EXIT_OK},
	        {{"memguard", "-qh", NULL}, MG_PARSE_EXIT_OK},
	        {{"memguard", "--bogus", "--help", NULL}, -EINVAL}, /* earlier junk wins */
	        {{"memguard", "-n", "0", "--help", NULL}, -EINVAL},
	        {{"memguard", "--", "--help", NULL}, MG_PARSE_RUN}, /* the command's --help */
	        {{"memguard", "cmd", "--version", NULL}, MG_PARSE_RUN},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		char *text = run_for_text(cases[i].argv, cases[i].want);
		if (cases[i].want == MG_PARSE_EXIT_OK)
			ft_assert_contains(text, "memguard");
		else
			assert_string_equal(text, ""); /* nothing written to out */
		free(text);
	}
}

/* --- GNU parallel's command line --- */

static void parallel_command_line(void **state)
{
	struct mode_case {
		const char *argv[MAX_ARGS];
		bool parallel;
		int command_words; /* the command's, before the separator */
		const char *sep;   /* the first separator, or NULL */
		int inputs;        /* words after it */
	};
	static const struct mode_case cases[] = {
	        {{"memguard", "-j", "4", "echo", "{}", ":::", "a", "b", NULL}, true, 2, ":::", 2},
	        {{"memguard", "echo", ":::", "a", ":::", "b", NULL}, true, 1, ":::", 3},
	        {{"memguard", "--", "echo", "::::", "f", NULL}, true, 1, "::::", 1},
	        {{"memguard", "echo", ":::+", "a", NULL}, true, 1, ":::+", 1},
	        {{"memguard", "echo", "{.}", NULL}, true, 2, NULL, 0},       /* standard input */
	        {{"memguard", "sh", "-c", "x {%}", NULL}, true, 3, NULL, 0}, /* any replacement string */
	        {{"memguard", ":::", "echo a", NULL}, true, 0, ":::", 1},    /* the inputs are commands */
	        {{"memguard", "-a", "f", NULL}, true, 0, NULL, 0},
	        {{"memguard", "-a", "f", "echo", NULL}, true, 1, NULL, 0},
	        {{"memguard", "-n", "2", "--", "pypy3", "sim.py", NULL}, false, 2, NULL, 0}, /* N copies */
	        {{"memguard", "--tasks", "f", "--", "echo", "{}", NULL}, false, 2, NULL, 0},
	        {{"memguard", "echo", "{ }", "{a}", NULL}, false, 3, NULL, 0},
	        {{"memguard", "-k", "--tag", "--quote", "--line-buffer", "echo", "{}", NULL},
	         true,
	         2,
	         NULL,
	         0},
	        {{"memguard", "--quiet", "echo", "{}", NULL}, true, 2, NULL, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_options o;
		struct args a;
		char err[256];
		int r;

		args_set(&a, cases[i].argv);
		r = parse(&a, &o, err, sizeof(err), stdout);
		if (r != MG_PARSE_RUN)
			print_error("case %zu: %d (%s)\n", i, r, err);
		assert_int_equal(r, MG_PARSE_RUN);
		assert_int_equal(o.parallel, cases[i].parallel);
		int n = 0;
		while (o.command[n])
			n++;
		assert_int_equal(n, cases[i].command_words);
		if (!cases[i].sep) {
			assert_null(o.input_sep);
			continue;
		}
		assert_string_equal(o.input_sep, cases[i].sep);
		n = 0;
		while (o.input_words[n])
			n++;
		assert_int_equal(n, cases[i].inputs);
	}

	/* The options' values. */
	static const char *const all[] = {"memguard",    "-j",      "50%", "-k",   "--tag", "--halt",
	                                  "soon,fail=2", "-C",      ",",   "-a",   "x",     "-a",
	                                  "y",           "--quote", "-u",  "echo", NULL};
	struct mg_options o;
	struct args a;
	char err[256];
	args_set(&a, all);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_string_equal(o.jobs, "50%");
	assert_int_equal(o.ntasks, 0);
	assert_true(o.keep_order && o.tag && o.quote);
	assert_int_equal(o.output, MG_OUT_UNGROUP);
	assert_int_equal(o.halt.when, MG_HALT_SOON);
	assert_int_equal(o.halt.value, 2);
	assert_string_equal(o.colsep, ",");
	assert_int_equal(o.narg_files, 2);
	assert_string_equal(o.arg_files[1], "y");

	/* -n and -j: the last one wins. */
	static const char *const nj[] = {"memguard", "-j", "3", "-n", "2", "echo", NULL};
	static const char *const jn[] = {"memguard", "-n", "2", "--jobs=3", "echo", NULL};
	args_set(&a, nj);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_int_equal(o.ntasks, 2);
	assert_null(o.jobs);
	args_set(&a, jn);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_int_equal(o.ntasks, 0);
	assert_string_equal(o.jobs, "3");
}

static void parallel_command_line_errors(void **state)
{
	struct bad_case {
		const char *argv[MAX_ARGS];
		const char *reason;
	};
	static const struct bad_case cases[] = {
	        {{"memguard", "--tasks", "f", "--", "echo", ":::", "a", NULL}, "two lists of tasks"},
	        {{"memguard", "--tasks", "f", "-a", "g", "echo", NULL}, "two lists of tasks"},
	        {{"memguard", "-k", "--", "cmd", NULL}, "-k needs GNU parallel's inputs"},
	        {{"memguard", "--tag", "-n", "2", "cmd", NULL}, "--tag needs GNU parallel's inputs"},
	        {{"memguard", "--halt", "now,fail=1", "--tasks", "f", "cmd", "{}", NULL}, "--halt needs"},
	        {{"memguard", "-u", "cmd", NULL}, "--ungroup needs"},
	        {{"memguard", "--quote", "cmd", NULL}, "--quote needs"},
	        {{"memguard", "-C", ",", "cmd", NULL}, "--colsep needs"},
	        {{"memguard", "-q", "echo", "{}", ":::", "a", NULL}, "-q is memguard's --quiet"},
	        {{"memguard", "-qk", "echo", ":::", "a", NULL}, "-q is memguard's --quiet"},
	        {{"memguard", "-j", "0", "echo", NULL}, "invalid -j 0"},
	        {{"memguard", "-j", "x", "echo", NULL}, "invalid -j \"x\""},
	        {{"memguard", "-j", "1.5", "echo", NULL}, "invalid -j \"1.5\""},
	        {{"memguard", "--halt", "sometimes", "echo", "{}", NULL}, "invalid --halt \"sometimes\""},
	        {{"memguard", "--colsep", "", "echo", "{}", NULL}, "invalid --colsep"},
	        {{"memguard", "-a", NULL}, "option -a needs an argument"},
	        {{"memguard", NULL}, "no command given"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_options o;
		struct args a;
		char err[256];

		args_set(&a, cases[i].argv);
		assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), -EINVAL);
		if (!strstr(err, cases[i].reason))
			print_error("case %zu: \"%s\" does not say \"%s\"\n", i, err, cases[i].reason);
		assert_non_null(strstr(err, cases[i].reason));
		assert_null(strchr(err, '\n'));
	}

	/* At most MG_ARG_FILES_MAX -a. */
	const char *many[2 * MG_ARG_FILES_MAX + 4] = {"memguard"};
	size_t n = 1;
	for (size_t i = 0; i <= MG_ARG_FILES_MAX; i++) {
		many[n++] = "-a";
		many[n++] = "f";
	}
	many[n] = NULL;
	struct mg_options o;
	char err[256];
	char **argv = calloc(n + 1, sizeof(*argv));
	memcpy(argv, many, (n + 1) * sizeof(*argv));
	assert_int_equal(mg_options_parse((int)n, argv, &o, err, sizeof(err), stdout), -EINVAL);
	assert_non_null(strstr(err, "more than 16 -a files"));
	free(argv);
}

static void jobs_resolve_table(void **state)
{
	static const struct {
		const char *spec;
		unsigned cpus, want;
	} cases[] = {
	        {"4", 2, 4},       {"1", 64, 1},   {"1048576", 1, 1 << 20},
	        {"1048577", 1, 0}, {"50%", 2, 1},  {"150%", 2, 3},
	        {"200%", 3, 6},    {"33%", 4, 2},  {"12.5%", 8, 1},
	        {"12.5%", 16, 2},  {"1%", 2, 1},   {"+1", 2, 3},
	        {"-1", 2, 1},      {"-1", 16, 15}, {"-5", 2, 1},
	        {"+0", 4, 4},      {"0", 4, 0},    {"x", 4, 0},
	        {"1.5", 4, 0},     {"+1.5", 4, 0}, {"%", 4, 0},
	        {"+-1", 4, 0},     {"-1%", 4, 0},  {"", 4, 0},
	        {"1.%", 4, 0},     {"4 ", 4, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		unsigned got = mg_jobs_resolve(cases[i].spec, cases[i].cpus);
		if (got != cases[i].want)
			print_error("-j \"%s\" on %u CPUs: %u, want %u\n", cases[i].spec, cases[i].cpus, got,
			            cases[i].want);
		assert_int_equal(got, cases[i].want);
	}
}

/* --- twice in one process --- */

static void parser_runs_twice(void **state)
{
	static const char *const first[] = {"memguard", "-n", "4", "--mem", "2G", "-q", "--", "a", NULL};
	static const char *const second[] = {"memguard", "-v", "--", "b", "c", NULL};
	/* Stops inside a cluster: getopt's state points into "-qhv". */
	static const char *const stops_in_cluster[] = {"memguard", "-qhv", NULL};
	static const char *const third[] = {"memguard", "-n", "3", "x", NULL};
	static const char *const error_first[] = {"memguard", "-q", "--bogus", "-n", "2", "--", "y", NULL};
	struct mg_options o, want, want_first = defaults();
	char err[256], *text;
	struct args a;

	want_first.ntasks = 4, want_first.mem = 2 * GiB, want_first.quiet = true;
	args_set(&a, first);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_options_equal(&o, &want_first, "first");
	assert_string_equal(o.command[0], "a");

	/* Nothing of the first run carries over. */
	args_set(&a, second);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	want = defaults();
	want.verbose = 1;
	assert_options_equal(&o, &want, "second");
	assert_ptr_equal(o.command, &a.argv[3]);

	text = run_for_text(stops_in_cluster, MG_PARSE_EXIT_OK);
	free(text);
	args_set(&a, third);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	want = defaults();
	want.ntasks = 3;
	assert_options_equal(&o, &want, "after a stop inside a cluster");
	assert_ptr_equal(o.command, &a.argv[3]);

	args_set(&a, error_first);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), -EINVAL);
	args_set(&a, first);
	assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
	assert_options_equal(&o, &want_first, "after an error");

	/* And many times over. */
	for (int i = 0; i < 100; i++) {
		args_set(&a, i % 2 ? second : first);
		assert_int_equal(parse(&a, &o, err, sizeof(err), stdout), MG_PARSE_RUN);
		assert_string_equal(o.command[0], i % 2 ? "b" : "a");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(command_after_double_dash),
	        cmocka_unit_test(command_without_double_dash),
	        cmocka_unit_test(options_after_the_command_belong_to_it),
	        cmocka_unit_test(every_option_table),
	        cmocka_unit_test(option_arguments_point_into_argv),
	        cmocka_unit_test(farm_options),
	        cmocka_unit_test(backend_options),
	        cmocka_unit_test(bad_input_is_einval_with_one_line),
	        cmocka_unit_test(bad_input_reasons),
	        cmocka_unit_test(unknown_short_option_in_cluster_is_named),
	        cmocka_unit_test(bad_size_reason_does_not_depend_on_earlier_options),
	        cmocka_unit_test(err_is_truncated_safely),
	        cmocka_unit_test(help_mentions_every_long_option),
	        cmocka_unit_test(help_matches_the_option_table_in_source),
	        cmocka_unit_test(every_listed_option_is_accepted),
	        cmocka_unit_test(version_prints_the_version),
	        cmocka_unit_test(help_and_version_end_parsing_early),
	        cmocka_unit_test(parser_runs_twice),
	        cmocka_unit_test(parallel_command_line),
	        cmocka_unit_test(parallel_command_line_errors),
	        cmocka_unit_test(jobs_resolve_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
