/* The launcher's command line, parsed into struct mg_options. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "farm/compose.h"
#include "farm/inputs.h"
#include "memguard/units.h"
#include "memguard/util.h"

enum {
	OPT_TASKS = 0x100,
	OPT_MEM_PER_TASK,
	OPT_MEM,
	OPT_RESERVE,
	OPT_RUNTIME,
	OPT_NO_HEAP_FLAGS,
	OPT_RLIMIT_AS,
	OPT_MEMORY_HIGH,
	OPT_REQUIRE_CGROUPS,
	OPT_NO_CGROUPS,
	OPT_EXPLAIN,
	OPT_DRY_RUN,
	OPT_REPORT,
	OPT_CONFIG,
	OPT_CGROUP_PARENT,
	OPT_GRACE,
	OPT_VERSION,
	OPT_ELASTIC,
	OPT_STRICT,
	OPT_METRICS,
	OPT_SHARE_JOB,
	OPT_JOBLOG,
	OPT_RESUME,
	OPT_RESUME_FAILED,
	OPT_RETRIES,
	OPT_RESULTS,
	OPT_PROGRESS,
	OPT_BACKEND,
	OPT_STEP_CPUS,
	OPT_LINE_BUFFER,
	OPT_TAG,
	OPT_HALT,
	OPT_QUOTE,
};

static const struct option long_options[] = {
        {"ntasks", required_argument, NULL, 'n'},
        {"tasks", required_argument, NULL, OPT_TASKS},
        {"mem-per-task", required_argument, NULL, OPT_MEM_PER_TASK},
        {"mem", required_argument, NULL, OPT_MEM},
        {"reserve", required_argument, NULL, OPT_RESERVE},
        {"runtime", required_argument, NULL, OPT_RUNTIME},
        {"no-heap-flags", no_argument, NULL, OPT_NO_HEAP_FLAGS},
        {"rlimit-as", required_argument, NULL, OPT_RLIMIT_AS},
        {"memory-high", required_argument, NULL, OPT_MEMORY_HIGH},
        {"elastic", no_argument, NULL, OPT_ELASTIC},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"require-cgroups", no_argument, NULL, OPT_REQUIRE_CGROUPS},
        {"no-cgroups", no_argument, NULL, OPT_NO_CGROUPS},
        {"share-job", no_argument, NULL, OPT_SHARE_JOB},
        {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"dry-run", no_argument, NULL, OPT_DRY_RUN},
        {"report", required_argument, NULL, OPT_REPORT},
        {"metrics", required_argument, NULL, OPT_METRICS},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"cgroup-parent", required_argument, NULL, OPT_CGROUP_PARENT},
        {"grace", required_argument, NULL, OPT_GRACE},
        {"joblog", required_argument, NULL, OPT_JOBLOG},
        {"resume", no_argument, NULL, OPT_RESUME},
        {"resume-failed", no_argument, NULL, OPT_RESUME_FAILED},
        {"retries", required_argument, NULL, OPT_RETRIES},
        {"results", required_argument, NULL, OPT_RESULTS},
        {"progress", optional_argument, NULL, OPT_PROGRESS},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"step-cpus", required_argument, NULL, OPT_STEP_CPUS},
        /* GNU parallel's, by its names */
        {"jobs", required_argument, NULL, 'j'},
        {"keep-order", no_argument, NULL, 'k'},
        {"arg-file", required_argument, NULL, 'a'},
        {"colsep", required_argument, NULL, 'C'},
        {"line-buffer", no_argument, NULL, OPT_LINE_BUFFER},
        {"ungroup", no_argument, NULL, 'u'},
        {"tag", no_argument, NULL, OPT_TAG},
        {"halt", required_argument, NULL, OPT_HALT},
        {"quote", no_argument, NULL, OPT_QUOTE},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
};

void mg_options_usage(void *out)
{
	fputs("Usage: memguard [OPTIONS] [--] COMMAND [ARGS...]\n"
	      "       memguard [OPTIONS] [--] [COMMAND...] ::: ARGS... [:::: FILES...]\n"
	      "       memguard report [--svg FILE] JOBLOG...   (merge a sweep's joblogs into one summary)\n"
	      "Run N copies of COMMAND (or one per line of a task file, or one per input as\n"
	      "GNU parallel does), each in its own cgroup with an even share of the node's\n"
	      "memory and heap flags to match.\n"
	      "\n"
	      "  -n, --ntasks N          tasks at once (default: the batch system's tasks per node, else "
	      "CPUs)\n"
	      "      --tasks FILE        one task per line of FILE; {} in COMMAND becomes the line\n"
	      "      --mem-per-task SIZE a fixed share instead of an even split\n"
	      "      --mem SIZE          hand out at most SIZE in all\n"
	      "      --reserve SIZE|P%   keep back for the OS and node daemons (default from config: 5%)\n"
	      "      --runtime NAME      generic, cpython, pypy, jvm, go, node, dotnet or r (default: "
	      "detect)\n"
	      "      --no-heap-flags     do not set PYPY_GC_MAX, -Xmx, GOMEMLIMIT, ...\n"
	      "      --rlimit-as MODE    auto, on or off (default: auto, by runtime)\n"
	      "      --memory-high P%    set memory.high to P% of the share (default: off)\n"
	      "      --strict            memory.max = the share (default when no memguardd runs)\n"
	      "      --elastic           memory.max well above the share; memguardd takes memory back\n"
	      "                          from the tasks furthest over their share under pressure\n"
	      "                          (default when memguardd runs)\n"
	      "      --require-cgroups   fail (exit 125) rather than run without cgroups\n"
	      "      --no-cgroups        run degraded on purpose: rlimits, heap flags, RSS watchdog\n"
	      "                          (the same as --backend=degraded)\n"
	      "      --backend NAME      where the tasks' cgroups come from: auto (default), local\n"
	      "                          (memguard's own, as root or delegated), placed (memguardd),\n"
	      "                          steps (each task a Slurm job step) or degraded (none)\n"
	      "      --step-cpus N       CPUs of each step (default: the node's CPUs of the job split\n"
	      "                          over -n, at least one)\n"
	      "      --share-job         let the job's other processes use the run's budget too; by\n"
	      "                          default they keep what the run leaves of the job's limit\n"
	      "      --grace DURATION    after forwarding SIGTERM, wait this long, then kill (default 10s)\n"
	      "      --joblog FILE       one line per finished attempt, GNU parallel's columns and more\n"
	      "      --resume            run the tasks FILE of --joblog has not finished\n"
	      "      --resume-failed     the same, and run the failed ones again\n"
	      "      --retries N         run a task that failed for memory again, with a larger\n"
	      "                          share, up to N times (default: 2 for a sweep, else 0)\n"
	      "      --results DIR       each attempt's stdout and stderr in DIR/SEQ/ATTEMPT/\n"
	      "      --progress          a status line every second on a terminal, else every\n"
	      "                          minute; --progress=DURATION sets the interval\n"
	      "                          (SIGALRM prints one at any time, with or without it)\n"
	      "      --explain           print where every number came from, then run\n"
	      "      --dry-run           print the plan and exit (with parallel's inputs, each\n"
	      "                          task's command on stdout too)\n"
	      "      --report FILE       write the summary as JSON to FILE\n"
	      "      --metrics FILE      write the run's metrics in Prometheus' text format to FILE\n"
	      "      --config FILE       read FILE instead of " MG_CONFIG_FILE "\n"
	      "      --cgroup-parent P   create task cgroups below P (relative to the cgroup mount)\n"
	      "  -q, --quiet             no summary table\n"
	      "  -v, --verbose           more messages\n"
	      "  -h, --help              this text\n"
	      "      --version           the version\n"
	      "\n"
	      "GNU parallel's inputs, after COMMAND: ::: ARGS, :::: FILES, :::+ and ::::+ (linked\n"
	      "to the one before), -a FILE, or standard input when COMMAND holds a replacement\n"
	      "string. Several give every combination. Each task is COMMAND's words joined and\n"
	      "run by the shell, {} {.} {/} {//} {/.} {#} {%} {1} {2} ... replaced (quoted), or\n"
	      "the input appended:\n"
	      "  -j, --jobs N|N%|+N|-N   another name for -n (N% of the CPUs, or N more or fewer)\n"
	      "  -k, --keep-order        output in the order of the inputs\n"
	      "      --line-buffer       output line by line as it comes (default: each task's\n"
	      "                          whole as it ends)\n"
	      "  -u, --ungroup           output straight through\n"
	      "      --tag               each output line starts with the task's input and a tab\n"
	      "      --halt WHEN,WHY=N   stop early: now or soon, fail, success or done = N or N%\n"
	      "  -C, --colsep REGEXP     split each input into columns: {1} {2} ...\n"
	      "  -a, --arg-file FILE     inputs from FILE, one per line (- for standard input)\n"
	      "      --quote             GNU parallel's -q: COMMAND's words as they are, each quoted\n"
	      "                          (memguard's -q is --quiet)\n"
	      "\n"
	      "Exit status: 0 when every task succeeded; 125 memguard's own error (a report or\n"
	      "metrics file that cannot be written too); 126 when COMMAND cannot be executed,\n"
	      "127 when it is not found (checked before any task starts); 128+N when memguard\n"
	      "was stopped by signal N (SIGTERM, SIGINT, SIGHUP); else the status of the first\n"
	      "task (lowest number) that failed: its exit code, 128+signal when killed, 126\n"
	      "when it could not be executed, 127 when it was not found. With parallel's\n"
	      "inputs, as GNU parallel: the number of tasks that failed (101 for more than\n"
	      "100), or what --halt gives.\n",
	      out);
}

static const char *const backend_names[] = {
        [MG_BACKEND_AUTO] = "auto",   [MG_BACKEND_LOCAL] = "local",       [MG_BACKEND_PLACED] = "placed",
        [MG_BACKEND_STEPS] = "steps", [MG_BACKEND_DEGRADED] = "degraded",
};

const char *mg_backend_name(enum mg_backend b)
{
	return (size_t)b < MG_ARRAY_SIZE(backend_names) ? backend_names[b] : "?";
}

int mg_backend_from_name(const char *name, enum mg_backend *ret)
{
	for (size_t i = 0; i < MG_ARRAY_SIZE(backend_names); i++)
		if (strcmp(name, backend_names[i]) == 0) {
			*ret = (enum mg_backend)i;
			return 0;
		}
	return -EINVAL;
}

static int bad(char *err, size_t errsize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Names the option getopt stopped at: a long one as written (without its
 * value), a short one by its letter, which may sit inside a cluster (-qZv). */
static const char *bad_option(char **argv, int opt, char buf[64])
{
	const char *arg = argv[optind - 1];

	if (strncmp(arg, "--", 2) == 0)
		snprintf(buf, 64, "%.*s", (int)strcspn(arg, "="), arg);
	else if (opt > 0 && opt < 0x100)
		snprintf(buf, 64, "-%c", opt);
	else
		snprintf(buf, 64, "%s", arg);
	return buf;
}

int mg_options_parse(int argc, char **argv, struct mg_options *ret, char *err, size_t errsize, void *out)
{
	char tmp[64];
	struct mg_options o = {.mem = MG_SIZE_UNLIMITED,
	                       .heap_flags = -1,
	                       .rlimit_as = -1,
	                       .memory_high = -1,
	                       .mode = -1,
	                       .grace_usec = MG_GRACE_UNSET,
	                       .retries = -1};
	const char *why = "", *parallel_only = NULL;
	bool short_q = false;
	uint64_t v;
	int c;

	optind = 0; /* full reinitialisation: the parser may run more than once (tests) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:n:qvhj:ka:uC:", long_options, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (mg_parse_u64(optarg, &v) < 0 || v == 0 || v > 1u << 20)
				return bad(err, errsize, "invalid task count \"%s\": expected 1 to 1048576",
				           optarg);
			o.ntasks = (unsigned)v;
			o.jobs = NULL; /* the last of -n and -j wins */
			break;
		case 'j':
			if (strcmp(optarg, "0") == 0)
				return bad(err, errsize,
				           "invalid -j 0: parallel's \"as many as possible\" leaves no share "
				           "to give "
				           "each task; give a number, N%% of the CPUs, +N or -N");
			if (mg_jobs_resolve(optarg, 1) == 0)
				return bad(err, errsize,
				           "invalid -j \"%s\": expected a number of tasks at once (1 to "
				           "1048576), "
				           "N%% of the CPUs, or +N or -N of them",
				           optarg);
			o.jobs = optarg;
			o.ntasks = 0;
			break;
		case 'k':
			o.keep_order = true;
			parallel_only = parallel_only ?: "-k";
			break;
		case OPT_LINE_BUFFER:
		case 'u':
			o.output = c == 'u' ? MG_OUT_UNGROUP : MG_OUT_LINE_BUFFER;
			parallel_only = parallel_only ?: c == 'u' ? "--ungroup" : "--line-buffer";
			break;
		case OPT_TAG:
			o.tag = true;
			parallel_only = parallel_only ?: "--tag";
			break;
		case OPT_HALT:
			if (mg_halt_parse(optarg, &o.halt, err, errsize) < 0)
				return -EINVAL;
			parallel_only = parallel_only ?: "--halt";
			break;
		case 'C':
			if (!*optarg)
				return bad(err, errsize, "invalid --colsep \"\": expected a separator");
			o.colsep = optarg;
			parallel_only = parallel_only ?: "--colsep";
			break;
		case OPT_QUOTE:
			o.quote = true;
			parallel_only = parallel_only ?: "--quote";
			break;
		case 'a':
			if (o.narg_files == MG_ARG_FILES_MAX)
				return bad(err, errsize, "more than %u -a files", MG_ARG_FILES_MAX);
			o.arg_files[o.narg_files++] = optarg;
			break;
		case OPT_TASKS:
			o.tasks_file = optarg;
			break;
		case OPT_MEM_PER_TASK:
		case OPT_MEM:
			if (mg_size_parse(optarg, 0, &v, &why) < 0)
				return bad(err, errsize, "invalid size \"%s\": %s", optarg, why);
			if (v == 0)
				return bad(err, errsize, "invalid size \"%s\": zero", optarg);
			*(c == OPT_MEM ? &o.mem : &o.mem_per_task) = v;
			break;
		case OPT_RESERVE:
			if (mg_size_parse(optarg, 1ull << 30, &v, &why) < 0)
				return bad(err, errsize, "invalid reserve \"%s\": %s", optarg, why);
			o.reserve = optarg;
			break;
		case OPT_RUNTIME:
			if (mg_runtime_from_name(optarg, &o.runtime) < 0)
				return bad(err, errsize,
				           "unknown runtime \"%s\": expected generic, cpython, pypy, jvm, "
				           "go, node, "
				           "dotnet or r",
				           optarg);
			o.runtime_forced = true;
			break;
		case OPT_NO_HEAP_FLAGS:
			o.heap_flags = 0;
			break;
		case OPT_SHARE_JOB:
			o.share_job = true;
			break;
		case OPT_RLIMIT_AS:
			if (strcmp(optarg, "auto") == 0)
				o.rlimit_as = MG_RLIMIT_AS_AUTO;
			else if (strcmp(optarg, "on") == 0)
				o.rlimit_as = MG_RLIMIT_AS_ON;
			else if (strcmp(optarg, "off") == 0)
				o.rlimit_as = MG_RLIMIT_AS_OFF;
			else
				return bad(err, errsize,
				           "invalid --rlimit-as \"%s\": expected auto, on or off", optarg);
			break;
		case OPT_MEMORY_HIGH: {
			size_t len = strlen(optarg);
			char num[8];
			if (len < 2 || len > sizeof(num) || optarg[len - 1] != '%')
				return bad(err, errsize,
				           "invalid --memory-high \"%s\": expected a percentage", optarg);
			memcpy(num, optarg, len - 1);
			num[len - 1] = '\0';
			if (mg_parse_u64(num, &v) < 0 || v == 0 || v > 100)
				return bad(err, errsize,
				           "invalid --memory-high \"%s\": expected 1%% to 100%%", optarg);
			o.memory_high = (int)v;
			break;
		}
		case OPT_ELASTIC:
			o.mode = MG_SHARE_ELASTIC;
			break;
		case OPT_STRICT:
			o.mode = MG_SHARE_STRICT;
			break;
		case OPT_REQUIRE_CGROUPS:
			o.require_cgroups = true;
			break;
		case OPT_NO_CGROUPS:
			o.no_cgroups = true;
			break;
		case OPT_EXPLAIN:
			o.explain = true;
			break;
		case OPT_DRY_RUN:
			o.dry_run = o.explain = true;
			break;
		case OPT_REPORT:
			o.report_path = optarg;
			break;
		case OPT_METRICS:
			o.metrics_path = optarg;
			break;
		case OPT_CONFIG:
			o.config_path = optarg;
			break;
		case OPT_CGROUP_PARENT:
			if (strstr(optarg, "..") || !*optarg)
				return bad(err, errsize, "invalid --cgroup-parent \"%s\": %s", optarg,
				           "must name a path below the cgroup mount, without ..");
			o.cgroup_parent = optarg;
			break;
		case OPT_GRACE:
			if (mg_duration_parse(optarg, &o.grace_usec, &why) < 0)
				return bad(err, errsize, "invalid --grace \"%s\": %s", optarg, why);
			break;
		case OPT_JOBLOG:
			if (!*optarg)
				return bad(err, errsize, "invalid --joblog \"\": expected a file name");
			o.joblog_path = optarg;
			break;
		case OPT_RESUME:
		case OPT_RESUME_FAILED:
			if (o.resume && o.resume != (c == OPT_RESUME ? 1 : 2))
				return bad(err, errsize,
				           "--resume and --resume-failed contradict each other: "
				           "--resume-failed also skips what is done");
			o.resume = c == OPT_RESUME ? 1 : 2;
			break;
		case OPT_RETRIES:
			if (mg_parse_u64(optarg, &v) < 0 || v > MG_RETRIES_MAX)
				return bad(err, errsize, "invalid --retries \"%s\": expected 0 to %u", optarg,
				           MG_RETRIES_MAX);
			o.retries = (int)v;
			break;
		case OPT_RESULTS:
			if (!*optarg)
				return bad(err, errsize, "invalid --results \"\": expected a directory");
			o.results_dir = optarg;
			break;
		case OPT_PROGRESS:
			o.progress = true;
			if (optarg &&
			    (mg_duration_parse(optarg, &o.progress_usec, &why) < 0 || o.progress_usec == 0))
				return bad(err, errsize, "invalid --progress \"%s\": %s", optarg,
				           o.progress_usec == 0 && !*why ? "zero" : why);
			break;
		case OPT_BACKEND:
			if (mg_backend_from_name(optarg, &o.backend) < 0)
				return bad(err, errsize,
				           "unknown backend \"%s\": expected auto, local, placed, steps or "
				           "degraded",
				           optarg);
			break;
		case OPT_STEP_CPUS:
			if (mg_parse_u64(optarg, &v) < 0 || v == 0 || v > 4096)
				return bad(err, errsize, "invalid --step-cpus \"%s\": expected 1 to 4096",
				           optarg);
			o.step_cpus = (unsigned)v;
			break;
		case 'q':
			o.quiet = true;
			short_q |= strncmp(argv[optind - 1], "--", 2) != 0;
			break;
		case 'v':
			o.verbose++;
			break;
		case 'h':
			mg_options_usage(out);
			return MG_PARSE_EXIT_OK;
		case OPT_VERSION:
			fputs("memguard " MEMGUARD_VERSION "\n", out);
			return MG_PARSE_EXIT_OK;
		case ':':
			return bad(err, errsize, "option %s needs an argument",
			           bad_option(argv, optopt, tmp));
		default:
			return bad(err, errsize, "unknown option %s (see memguard --help)",
			           bad_option(argv, optopt, tmp));
		}
	}
	/* The command runs to the first input separator; parallel's inputs follow it. */
	o.command = argv + optind;
	for (int i = optind; i < argc; i++)
		if (mg_input_sep(argv[i]) != MG_SEP_NONE) {
			o.input_sep = argv[i];
			o.input_words = argv + i + 1;
			argv[i] = NULL;
			break;
		}
	if (!o.command[0] && !o.input_sep && !o.narg_files)
		return bad(err, errsize,
		           "no command given: put the command after --, e.g. memguard -n 4 -- %s",
		           "python3 sim.py");
	if (o.tasks_file && (o.input_sep || o.narg_files))
		return bad(
		        err, errsize,
		        "--tasks FILE and %s are two lists of tasks: give one (:::: FILE reads FILE as GNU "
		        "parallel does)",
		        o.input_sep ? o.input_sep : "-a");
	o.parallel = o.input_sep || o.narg_files || (!o.tasks_file && mg_compose_has_rpl(o.command));
	o.stdin_only = o.parallel && !o.input_sep && !o.narg_files && !parallel_only;
	if (parallel_only && !o.parallel)
		return bad(err, errsize,
		           "%s needs GNU parallel's inputs: ::: ARGS, :::: FILES, -a FILE, or a replacement "
		           "string such as {} in the command (then standard input)",
		           parallel_only);
	o.short_q = short_q;
	/* With stdin alone, main knows only later whether it is a sweep. */
	if (short_q && o.parallel && !o.stdin_only)
		return bad(err, errsize,
		           "-q is memguard's --quiet, not GNU parallel's -q: with parallel's inputs write "
		           "--quiet, or --quote for parallel's -q");
	if (o.resume && !o.joblog_path)
		return bad(err, errsize, "%s needs --joblog FILE: the joblog says what is done",
		           o.resume == 1 ? "--resume" : "--resume-failed");
	if (o.require_cgroups && o.no_cgroups)
		return bad(err, errsize, "--require-cgroups and --no-cgroups contradict each other");
	if (o.no_cgroups && o.backend != MG_BACKEND_AUTO && o.backend != MG_BACKEND_DEGRADED)
		return bad(err, errsize, "--no-cgroups and --backend=%s contradict each other",
		           mg_backend_name(o.backend));
	if (o.no_cgroups)
		o.backend = MG_BACKEND_DEGRADED;
	if (o.require_cgroups && o.backend == MG_BACKEND_DEGRADED)
		return bad(err, errsize, "--require-cgroups and --backend=degraded contradict each other");
	if (o.cgroup_parent && (o.backend == MG_BACKEND_PLACED || o.backend == MG_BACKEND_DEGRADED))
		return bad(err, errsize,
		           "--cgroup-parent and --backend=%s contradict each other: the run's "
		           "cgroup is memguard's own there",
		           mg_backend_name(o.backend));
	/* A step's cgroup is Slurm's, root's: nothing of it is memguard's to set. */
	const char *owned = o.mode == MG_SHARE_ELASTIC ? "--elastic"
	                    : o.memory_high >= 0       ? "--memory-high"
	                    : o.share_job              ? "--share-job"
	                    : o.cgroup_parent          ? "--cgroup-parent"
	                                               : NULL;
	if (o.backend == MG_BACKEND_STEPS && owned)
		return bad(err, errsize,
		           "%s needs a cgroup memguard owns; with --backend=steps each task's cgroup is "
		           "its Slurm step's, whose only limit is --mem at the share",
		           owned);
	if (o.step_cpus && o.backend != MG_BACKEND_AUTO && o.backend != MG_BACKEND_STEPS)
		return bad(err, errsize, "--step-cpus is for Slurm steps, not --backend=%s",
		           mg_backend_name(o.backend));
	*ret = o;
	return MG_PARSE_RUN;
}

unsigned mg_jobs_resolve(const char *spec, unsigned cpus)
{
	size_t len = strlen(spec), digits;
	bool sign = *spec == '+' || *spec == '-', percent = len > 1 && spec[len - 1] == '%';
	const char *num = spec + sign;
	double v;

	digits = strspn(num, "0123456789");
	if (digits == 0 || digits > 9)
		return 0;
	if (percent) {
		/* parallel's N% and N.M% */
		size_t frac = num[digits] == '.' ? strspn(num + digits + 1, "0123456789") : 0;
		if (sign || (num[digits] == '.' && !frac) ||
		    num + digits + (frac ? frac + 1 : 0) != spec + len - 1)
			return 0;
		v = strtod(num, NULL) * cpus / 100.0;
	} else {
		if (num[digits])
			return 0;
		v = strtod(num, NULL);
		if (*spec == '+')
			v = cpus + v;
		else if (*spec == '-')
			v = (double)cpus - v;
		else if (v == 0)
			return 0;
	}
	/* parallel rounds up; memguard runs at least one. */
	if (v <= 1)
		return 1;
	if (v > (double)(1u << 20))
		return 0;
	unsigned whole = (unsigned)v;
	return (double)whole < v ? whole + 1 : whole;
}
