/* memguard: run N tasks, each in its own cgroup with an even share of the
 * node's memory, and report what became of each. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "run/budget.h"
#include "farm/farm.h"
#include "farm/joblog.h"
#include "farm/joblogfile.h"
#include "farm/merge.h"
#include "farm/nodes.h"
#include "farm/compose.h"
#include "farm/sweep.h"
#include "memguard/cgroup.h"
#include "memguard/contract.h"
#include "memguard/config.h"
#include "memguard/locate.h"
#include "memguard/log.h"
#include "memguard/meminfo.h"
#include "memguard/paths.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "report/metrics.h"
#include "options.h"
#include "run/placement.h"
#include "run/preflight.h"
#include "report/report.h"
#include "runtime/runtime.h"
#include "run/stepcmd.h"
#include "run/steps.h"
#include "run/supervisor.h"
#include "farm/tasklist.h"

extern char **environ;

#define WATCHDOG_INTERVAL_USEC 250000ull

static bool env_setting_present(const struct mg_env_setting *env, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(env[i].name, name) == 0)
			return true;
	return false;
}

/* A copy of argv (NULL-terminated) with word appended; the strings are
 * borrowed. Returns 0 or -ENOMEM. */
static int append_word(char **argv, char *word, char ***ret)
{
	size_t n = 0;
	char **copy;

	while (argv[n])
		n++;
	copy = calloc(n + 2, sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, argv, n * sizeof(*copy));
	copy[n] = word;
	*ret = copy;
	return 0;
}

static unsigned cpus_allowed(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/* The smallest memory limit of our own cgroup and its ancestors, on v2 or v1. */
static void find_cgroup_limit(int procfd, const struct mg_cgroup_mount *m, struct mg_sourced *ret)
{
	_cleanup_free_ char *text = NULL, *self = NULL, *at = NULL;
	_cleanup_close_ int mountfd = -1;
	uint64_t limit;

	*ret = (struct mg_sourced){.value = MG_SIZE_UNLIMITED};
	if (!m->path || mg_read_file_at(procfd, "self/cgroup", &text) < 0)
		return;
	if ((m->unified ? mg_proc_cgroup_parse(text, &self)
	                : mg_proc_cgroup_v1_parse(text, "memory", &self)) < 0)
		return;
	mountfd = mg_cg_open(AT_FDCWD, m->path);
	/* A memory.max memguardd set for the runs beside us is the rest of the
	 * job's: this run's budget comes from the job's limit above it. */
	if (m->unified && mountfd >= 0) {
		_cleanup_close_ int own = mg_cg_open(mountfd, self + strspn(self, "/"));
		uint64_t kept;
		char *slash = strrchr(self, '/');
		if (own >= 0 && mg_contract_get_keeps(own, &kept) == 0 && slash && slash != self)
			*slash = '\0';
	}
	if (mountfd < 0 ||
	    mg_cg_ancestor_limit(mountfd, self, m->unified ? "memory.max" : "memory.limit_in_bytes", &limit,
	                         &at) < 0 ||
	    !at)
		return;
	ret->value = limit;
	snprintf(ret->where, sizeof(ret->where), "%s of cgroup %s%s",
	         m->unified ? "memory.max" : "memory.limit_in_bytes", m->path, at);
}

/* True when memguardd runs on this node: it holds the lock on its pid file. */
static bool daemon_running(void)
{
	int r = mg_daemon_running_at(AT_FDCWD, MG_DAEMON_PIDFILE);

	if (r < 0)
		mg_log_errno(LOG_DEBUG, r, "%s: %m: taking memguardd as not running", MG_DAEMON_PIDFILE);
	return r > 0;
}

/* What one launch decides, step by step, in the order of docs/design.md
 * ("The launcher's life cycle"): budget, placement, limits, supervise, report. */
struct launch {
	struct mg_options opt;
	struct mg_config cfg;
	int procfd;
	/* budget */
	struct mg_tasklist list;
	struct mg_sourced ntasks;
	unsigned parallel; /* tasks at once */
	size_t total;      /* tasks in the run */
	struct mg_budget_input in;
	struct mg_budget budget;
	/* placement */
	struct mg_cgroup_mount mount;
	struct mg_placement placement;
	bool cgroups;
	char why[512]; /* why the run is degraded */
	/* the steps backend: each task a Slurm step */
	bool steps;
	struct mg_steps_alloc alloc;
	struct mg_node_pool *pools; /* the nodes tasks go to */
	size_t npools;
	uint64_t held; /* what the batch step holds besides the steps (ours) */
	char self_exe[PATH_MAX];
	char nonce[MG_STEP_NONCE_LEN + 1];
	struct mg_steps_config steps_cfg;
	char steps_where[512]; /* the steps in words, for the mode line and the report */
	/* limits */
	enum mg_runtime rt;
	const char *rt_why;
	struct mg_env_setting heap_env[MG_HEAP_ENV_MAX];
	size_t nheap;
	char rt_note[512]; /* what a generic task got, for --explain and the summary */
	enum mg_pool pool;
	struct mg_pool_settings pool_set;
	char **command; /* opt.command, or a copy with the pool's word appended */
	struct mg_limits limits;
	struct mg_limits_input limits_in; /* to size a retry's limits */
	char mode[3 * PATH_MAX];          /* the mode in words, for --explain */
	/* the farm */
	unsigned retries;
	struct mg_resume_plan *plans; /* per task of the list; NULL: run them all from attempt 1 */
	size_t torun;                 /* tasks this run starts */
	struct mg_farm farm;
	struct mg_farm_node node;
	char joblog[PATH_MAX]; /* this node's: --joblog FILE, or FILE.<rank> across nodes */
	char claims[PATH_MAX]; /* across nodes: FILE.claims/<run> */
	char **texts;          /* the joblogs read, kept while their entries are */
	size_t ntexts;
	/* GNU parallel's inputs (opt.parallel) */
	struct mg_sweep sweep;
	char **written; /* the command as written, each task's template; opt.command may be its words split */
	char **split;   /* that split (heap), or NULL */
};

/* Options and configuration. Returns MG_PARSE_RUN, MG_PARSE_EXIT_OK after
 * --help or --version, or -errno (said). */
static int configure(struct launch *l, int argc, char **argv)
{
	const char *proc_path = getenv(MG_PROC_PATH_ENV) ?: MG_PROC_PATH;
	char err[512];
	int r;

	r = mg_options_parse(argc, argv, &l->opt, err, sizeof(err), stdout);
	if (r < 0)
		return log_err("%s", err), r;
	if (r == MG_PARSE_EXIT_OK)
		return r;
	mg_config_defaults(&l->cfg);
	r = mg_config_load(&l->cfg, l->opt.config_path ?: MG_CONFIG_FILE, l->opt.config_path != NULL,
	                   l->opt.config_path ? NULL : MG_CONFIG_DROPIN_DIR, err, sizeof(err));
	if (r < 0)
		return log_err("%s", err), r;
	mg_log_set_level(l->opt.verbose ? LOG_DEBUG : l->cfg.log_level);

	l->procfd = open(proc_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l->procfd < 0)
		return mg_log_errno(LOG_ERR, -errno, "open %s: %m", proc_path);
	if ((r = mg_meminfo_read(l->procfd, &l->in.mem)) < 0)
		return mg_log_errno(LOG_ERR, r, "read %s/meminfo: %m", proc_path);
	return MG_PARSE_RUN;
}

/* Before anything starts, as env, timeout and srun do: a command that cannot
 * run would otherwise fail once per task, and a report that cannot be written
 * would be lost at the end. A program named by a task line ({} in it) is only
 * known per task. Returns 0, or the exit status (said). */
static int preflight(const struct launch *l)
{
	const char *name = l->opt.command[0];
	char path[PATH_MAX], program[PATH_MAX];
	int r;

	if (l->opt.report_path && (r = mg_report_check(l->opt.report_path)) < 0) {
		mg_log_errno(LOG_ERR, r, "cannot write the report %s: %m", l->opt.report_path);
		return MG_EXIT_USAGE;
	}
	if (l->opt.metrics_path && (r = mg_report_check(l->opt.metrics_path)) < 0) {
		mg_log_errno(LOG_ERR, r, "cannot write the metrics file %s: %m", l->opt.metrics_path);
		return MG_EXIT_USAGE;
	}
	if (l->opt.tasks_file && strstr(name, "{}"))
		return 0;
	/* A line for the shell: its program, when the line names one itself. */
	if (l->opt.parallel && !(name = mg_compose_program(l->written, program, sizeof(program))))
		return 0;
	/* A bash function exported with export -f: the shell of each task has it. */
	char fn[PATH_MAX + 16];
	snprintf(fn, sizeof(fn), "BASH_FUNC_%s%%%%", name);
	if (l->opt.parallel && mg_env_get(environ, fn))
		return 0;
	r = mg_command_resolve(name, getenv("PATH"), path, sizeof(path));
	if (r == -ENOENT) {
		log_err("%s: command not found", name);
		return MG_EXIT_NOTFOUND;
	}
	if (r < 0) {
		mg_log_errno(LOG_ERR, r, "%s: cannot execute: %m", name);
		return MG_EXIT_NOEXEC;
	}
	return 0;
}

/* 1. Budget: how many tasks, how much memory they may use together, and
 * each one's share (budget.c). */
static int plan_budget(struct launch *l)
{
	char err[512];
	long njobs = 0;
	int r;

	if (l->opt.tasks_file && (r = mg_tasklist_load(l->opt.tasks_file, &l->list, err, sizeof(err))) < 0)
		return log_err("%s", err), r;
	if (l->opt.parallel &&
	    (njobs = mg_sweep_plan(&l->sweep, &l->opt, l->written, environ, err, sizeof(err))) < 0)
		return log_err("%s", err), (int)njobs;
	mg_default_ntasks(environ, cpus_allowed(), &l->ntasks);
	if (l->opt.ntasks) {
		l->ntasks.value = l->opt.ntasks;
		snprintf(l->ntasks.where, sizeof(l->ntasks.where), "-n");
	} else if (l->opt.jobs) {
		l->ntasks.value = mg_jobs_resolve(l->opt.jobs, cpus_allowed());
		snprintf(l->ntasks.where, sizeof(l->ntasks.where), "-j %s of %u CPUs", l->opt.jobs,
		         cpus_allowed());
	}
	l->parallel = (unsigned)l->ntasks.value;
	l->total = l->opt.tasks_file ? l->list.count : l->opt.parallel ? (size_t)njobs : l->parallel;
	if ((l->opt.tasks_file || l->opt.parallel) && l->total < l->parallel)
		l->parallel =
		        l->total ? (unsigned)l->total : 1; /* no input: nothing runs, the plan still holds */

	r = mg_cgroup_find_memory_mount(l->procfd, &l->mount);
	if (r < 0)
		snprintf(l->why, sizeof(l->why), "no cgroup hierarchy carries the memory controller (%s)",
		         strerror(-r));
	find_cgroup_limit(l->procfd, &l->mount, &l->in.cgroup_limit);
	mg_batch_grant_from_env(environ, &l->in.batch_grant);
	l->in.mem_option = l->opt.mem;
	l->in.reserve = l->opt.reserve ?: l->cfg.reserve;
	l->in.reserve_shmem = l->cfg.reserve_shmem;
	l->in.ntasks = l->parallel;
	l->in.mem_per_task = l->opt.mem_per_task;
	l->in.min_share = l->cfg.min_share;
	if ((r = mg_budget_compute(&l->in, &l->budget, err, sizeof(err))) < 0)
		return log_err("%s", err), r;
	return 0;
}

/* Whether auto may take Slurm steps here: in a batch script (no step of its
 * own), with srun, and no option that needs a cgroup memguard owns. 1, or 0
 * with the reason in why. */
static int steps_usable(const struct launch *l, char *why, size_t whysize)
{
	const struct mg_options *o = &l->opt;
	char path[PATH_MAX];

	if (!mg_steps_available(environ, why, whysize))
		return 0;
	const char *owned = o->mode == MG_SHARE_ELASTIC ? "--elastic"
	                    : o->memory_high >= 0       ? "--memory-high"
	                    : o->share_job              ? "--share-job"
	                    : o->cgroup_parent          ? "--cgroup-parent"
	                                                : NULL;
	if (owned) {
		snprintf(why, whysize, "%s needs a cgroup memguard owns, which a Slurm step is not", owned);
		return 0;
	}
	if (mg_command_resolve("srun", getenv("PATH"), path, sizeof(path)) < 0) {
		snprintf(why, whysize, "srun is not on PATH");
		return 0;
	}
	return 1;
}

/* What the batch step holds now, besides the steps: the job script and us. */
static uint64_t held_here(const struct launch *l)
{
	_cleanup_free_ char *self = NULL;
	_cleanup_close_ int mountfd = -1, own = -1;
	uint64_t v = 0;

	if (!l->mount.path || !l->mount.unified || mg_cg_pid_path(l->procfd, 0, &self) < 0 ||
	    (mountfd = mg_cg_open(AT_FDCWD, l->mount.path)) < 0 ||
	    (own = mg_cg_open(mountfd, self[1] ? self + 1 : ".")) < 0 ||
	    mg_cg_read_u64(own, "memory.current", &v) < 0)
		return 0;
	return v;
}

/* Each task a Slurm step: the allocation's nodes (a task list goes to all
 * of them, N copies stay on ours), each node's budget and share. Returns 0,
 * or -errno with the reason in err. */
static int plan_steps(struct launch *l, char *err, size_t errsize)
{
	struct mg_steps_alloc *a = &l->alloc;
	ssize_t n;
	int r;

	if ((r = mg_steps_alloc_from_env(environ, a, err, errsize)) < 0)
		return r == -ENOMEM ? (snprintf(err, errsize, "out of memory"), r) : r;
	if ((n = readlink("/proc/self/exe", l->self_exe, sizeof(l->self_exe) - 1)) <= 0)
		return snprintf(err, errsize, "cannot find memguard's own path for its steps: %s",
		                strerror(errno)),
		       -ENOENT;
	l->self_exe[n] = '\0';
	/* A task list or a GNU parallel sweep goes to every node. */
	bool everywhere = (l->opt.tasks_file || l->opt.parallel) && a->nnodes > 1;
	size_t here = a->self < a->nnodes ? a->self : 0;
	if (!(l->pools = calloc(a->nnodes, sizeof(*l->pools))))
		return snprintf(err, errsize, "out of memory"), -ENOMEM;
	l->held = a->self < a->nnodes ? held_here(l) : 0;
	struct mg_steps_plan_input in = {
	        .alloc = a,
	        .everywhere = everywhere,
	        .parallel = l->parallel,
	        .usable_here = l->budget.usable,
	        .held_here = l->held,
	        .mem_option = l->opt.mem,
	        .mem_per_task = l->opt.mem_per_task,
	        .min_share = l->cfg.min_share,
	        .cpus_option = l->opt.step_cpus,
	};
	if ((r = mg_steps_plan(&in, l->pools, err, errsize)) < 0)
		return r;
	l->npools = (size_t)r;
	uint64_t most = 0;
	for (size_t p = 0; p < l->npools; p++)
		most = l->pools[p].budget > most ? l->pools[p].budget : most;
	/* The run's share is our node's (or the first's); retries may grow up
	 * to the largest node's budget. */
	l->budget.share = l->pools[everywhere ? here : 0].share;
	l->budget.usable = most;
	if ((r = mg_steps_nonce(l->nonce)) < 0)
		return snprintf(err, errsize, "cannot make the steps' nonce: %s", strerror(-r)), r;
	l->steps_cfg = (struct mg_steps_config){.self = l->self_exe, .nonce = l->nonce};
	unsigned cpus = l->pools[everywhere ? here : 0].step_cpus;
	snprintf(l->steps_where, sizeof(l->steps_where),
	         "Slurm job %s, each task a job step of %u CPU%s with --mem at its share, on %s%s", a->job_id,
	         cpus, cpus == 1 ? "" : "s", l->npools == 1 ? a->nodes[here].name : "",
	         l->npools == 1 ? "" : "every node of the job");
	return 0;
}

/* 2. Placement: the run's cgroup (placement.c), Slurm steps, or say once
 * why neither and run degraded. */
static int place_run(struct launch *l)
{
	enum mg_backend want = l->opt.backend;
	static const enum mg_place_how how[] = {
	        [MG_BACKEND_AUTO] = MG_PLACE_ANY,      [MG_BACKEND_LOCAL] = MG_PLACE_OWN,
	        [MG_BACKEND_PLACED] = MG_PLACE_DAEMON, [MG_BACKEND_STEPS] = MG_PLACE_ANY,
	        [MG_BACKEND_DEGRADED] = MG_PLACE_ANY,
	};
	char steps_why[512] = "";
	int r;

	/* Told to memguardd, which holds the job's own processes to the rest. */
	l->placement.budget = l->opt.share_job ? 0 : l->budget.usable;
	if (want == MG_BACKEND_DEGRADED)
		snprintf(l->why, sizeof(l->why), "%s",
		         l->opt.no_cgroups ? "--no-cgroups" : "--backend=degraded");
	else if (want != MG_BACKEND_STEPS && l->mount.path)
		l->cgroups = mg_placement_setup(&l->placement, l->procfd, &l->mount, &l->cfg,
		                                l->opt.cgroup_parent, how[want], l->why, sizeof(l->why)) >= 0;
	if (want == MG_BACKEND_STEPS && !steps_usable(l, steps_why, sizeof(steps_why)))
		return log_err("cannot run the tasks as Slurm steps: %s (--backend=steps)", steps_why),
		       -EPERM;
	if (want == MG_BACKEND_STEPS ||
	    (want == MG_BACKEND_AUTO && !l->cgroups && steps_usable(l, steps_why, sizeof(steps_why)))) {
		if ((r = plan_steps(l, steps_why, sizeof(steps_why))) >= 0) {
			l->steps = true;
			return 0;
		}
		if (want == MG_BACKEND_STEPS || l->opt.require_cgroups)
			return log_err("cannot run the tasks as Slurm steps: %s", steps_why), r;
		mg_steps_alloc_done(&l->alloc);
		free(l->pools);
		l->pools = NULL;
		l->npools = 0;
	}
	if (!l->cgroups && l->opt.require_cgroups)
		return log_err("cannot guard the tasks with cgroups: %s (--require-cgroups)", l->why), -EPERM;
	/* Under Slurm, why not its steps either. */
	if (!l->cgroups && want == MG_BACKEND_AUTO && steps_why[0] && getenv("SLURM_JOB_ID")) {
		size_t len = strlen(l->why);
		snprintf(l->why + len, sizeof(l->why) - len, "; no Slurm steps: %s", steps_why);
	}
	if (!l->cgroups && !l->opt.quiet)
		log_warn("running without cgroups (%s): guarding with RLIMIT_AS, heap flags and an RSS "
		         "watchdog",
		         l->why);
	return 0;
}

/* 3. Limits: how the share becomes each task's memory.max, memory.high and
 * RLIMIT_AS (mg_limits_compute), its heap flags such as PYPY_GC_MAX or -Xmx
 * (mg_heap_settings), and the run's cap. */
static int set_limits(struct launch *l)
{
	const struct mg_options *opt = &l->opt;
	const struct mg_config *cfg = &l->cfg;
	int r;

	l->rt = opt->runtime;
	l->rt_why = "--runtime";
	if (!opt->runtime_forced)
		l->rt = mg_runtime_detect(opt->command, getenv("PATH"), &l->rt_why);
	if (opt->heap_flags != 0 && cfg->heap_flags)
		l->nheap =
		        (size_t)mg_heap_settings(l->rt, l->budget.share, environ, opt->command, l->heap_env);
	l->pool = mg_pool_detect(opt->command);
	l->command = opt->command;
	if (l->pool != MG_POOL_NONE && opt->heap_flags != 0 && cfg->heap_flags &&
	    mg_pool_settings(l->pool, l->budget.share, environ, opt->command, &l->pool_set) > 0) {
		if (l->pool_set.env.name[0])
			l->heap_env[l->nheap++] = l->pool_set.env;
		if (l->pool_set.arg[0] && (r = append_word(opt->command, l->pool_set.arg, &l->command)) < 0)
			return mg_log_errno(LOG_ERR, r, "cannot add %s to the command: %m", l->pool_set.arg);
	}

	bool daemon = daemon_running();
	struct mg_limits_input in = {
	        /* A step's one limit is its --mem: strict. */
	        .mode = l->steps         ? MG_SHARE_STRICT
	                : opt->mode >= 0 ? (enum mg_share_mode)opt->mode
	                                 : cfg->mode,
	        .daemon = daemon,
	        .cgroups = l->cgroups || l->steps,
	        .share = l->budget.share,
	        .usable = l->budget.usable,
	        .high_percent = opt->memory_high >= 0 ? (unsigned)opt->memory_high : cfg->high_percent,
	        .rlimit_as = opt->rlimit_as >= 0 ? (enum mg_rlimit_as_mode)opt->rlimit_as : cfg->rlimit_as,
	        /* A pool worker is a server: its threads, children and their
	         * reservations are no runaway (Dask idles at 350 MB of address
	         * space), and the pool's own limit acts first. */
	        .runtime_wants_rlimit_as = mg_runtime_wants_rlimit_as(l->rt) && l->pool == MG_POOL_NONE,
	        .swap_max = cfg->swap_max,
	        .oom_group = cfg->oom_group,
	};
	mg_limits_compute(&in, &l->limits);
	l->limits_in = in;
	/* Under RLIMIT_AS every thread's 64 MiB malloc arena counts: a threaded
	 * task would run out of address space long before memory. */
	if (l->limits.rlimit_as && !getenv("MALLOC_ARENA_MAX") &&
	    !env_setting_present(l->heap_env, l->nheap, "MALLOC_ARENA_MAX"))
		l->heap_env[l->nheap++] = (struct mg_env_setting){.name = "MALLOC_ARENA_MAX", .value = "2"};
	mg_heap_describe(l->rt, opt->command, l->heap_env, l->nheap, l->rt_note, sizeof(l->rt_note));

	if (l->steps) {
		snprintf(l->mode, sizeof(l->mode), "steps: %s", l->steps_where);
		return 0;
	}
	if (!l->cgroups) {
		snprintf(l->mode, sizeof(l->mode), "degraded (rlimits, heap flags and an RSS watchdog)");
		return 0;
	}
	if (l->limits.run_capped &&
	    (r = mg_placement_limit_run(&l->placement, l->limits.run_max, l->limits.run_swap_max)) < 0) {
		log_err("cannot cap cgroup %s/%s at the budget (see above)", l->placement.mount,
		        l->placement.run);
		return r;
	}
	snprintf(l->mode, sizeof(l->mode), "cgroup %s/%s%s%s, %s shares, %s", l->placement.mount,
	         l->placement.run, l->placement.placed_by[0] ? ", " : "", l->placement.placed_by,
	         l->limits.mode == MG_SHARE_ELASTIC ? "elastic" : "strict",
	         l->limits.run_capped ? "the run capped at the usable memory"
	                              : "memguardd takes memory back");
	return 0;
}

/* A pool's word (set_limits) goes into a sweep's lines too. Returns 0, or
 * -errno (said). */
static int pool_word(struct launch *l)
{
	char **words;
	int r;

	if (!l->opt.parallel || !l->pool_set.arg[0] || l->command == l->opt.command)
		return 0;
	if ((r = append_word(l->written, l->pool_set.arg, &words)) < 0)
		return mg_log_errno(LOG_ERR, r, "cannot add %s to the command: %m", l->pool_set.arg);
	l->sweep.words = words;
	return 0;
}

/* One joblog's lines, appended to *entries; its text is kept in l->texts
 * while they point into it. Returns 0, or -errno (said). */
static int read_joblog(struct launch *l, const char *path, struct mg_joblog_entry **entries, size_t *n)
{
	char err[512], *text = NULL, *name = NULL, **more;
	ssize_t len = mg_read_file_max(path, (size_t)1 << 30, &text);
	int r;

	if (len == -ENOENT)
		return 0; /* nothing ran yet: everything runs */
	if (len < 0)
		return mg_log_errno(LOG_ERR, (int)len, "cannot read the joblog %s: %m", path);
	if (!(more = realloc(l->texts, (l->ntexts + 2) * sizeof(*more))) || !(name = strdup(path))) {
		free(text);
		if (more)
			l->texts = more;
		return log_err("out of memory reading the joblog %s", path), -ENOMEM;
	}
	l->texts = more;
	l->texts[l->ntexts++] = text;
	l->texts[l->ntexts++] = name;
	path = name;
	if (strlen(text) != (size_t)len)
		return log_err("the joblog %s holds a NUL byte: not a joblog", path), -EBADMSG;
	if ((r = mg_joblog_parse(text, path, entries, n, err, sizeof(err))) < 0)
		return log_err("%s", r == -ENOMEM ? "out of memory reading the joblog" : err), r;
	return 0;
}

/* FILE and every node's FILE.<rank> beside it: a sweep run across nodes
 * resumes on one node or many. Returns 0, or -errno (said). */
static int read_joblogs(struct launch *l, struct mg_joblog_entry **entries, size_t *n)
{
	const char *path = l->opt.joblog_path, *slash = strrchr(path, '/');
	char dir[PATH_MAX], file[PATH_MAX];
	struct dirent *d;
	DIR *dp;
	int r = read_joblog(l, path, entries, n);

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
	if (r < 0 || !(dp = opendir(dir)))
		return r < 0 ? r
		             : mg_log_errno(LOG_ERR, -errno, "cannot read the folder of the joblog %s: %m",
		                            path);
	while (r >= 0 && (d = readdir(dp)))
		if (mg_farm_is_node_joblog(slash ? slash + 1 : path, d->d_name)) {
			if ((size_t)snprintf(file, sizeof(file), "%s%s", slash ? dir : "", d->d_name) <
			    sizeof(file))
				r = read_joblog(l, file, entries, n);
		}
	closedir(dp);
	return r;
}

/* Opens the joblog (create: make it when missing) under its lock into
 * l->farm.joblog_fd. Returns 0 (also when it is missing and not to be
 * made), or -errno (said). */
static int lock_joblog(struct launch *l, bool create)
{
	int fd;

	if (l->farm.joblog_fd >= 0)
		return 0;
	fd = mg_joblog_open(l->joblog, create, !l->node.multi);
	if (fd == -ENOENT && !create)
		return 0;
	if (fd == -EWOULDBLOCK) {
		log_err("the joblog %s is in use by another memguard: two runs on one joblog would run every "
		        "task twice; wait for that run to end, or give this one a joblog of its own",
		        l->joblog);
		return fd;
	}
	if (fd < 0)
		return mg_log_errno(LOG_ERR, fd, "cannot open the joblog %s: %m", l->joblog);
	l->farm.joblog_fd = fd;
	return 0;
}

/* The farm: each task's command text for the joblog, what a resume runs
 * (farm/joblog.c), the retries. Returns 0, or -errno (said). */
static int plan_farm(struct launch *l)
{
	const struct mg_options *opt = &l->opt;
	_cleanup_free_ struct mg_joblog_entry *entries = NULL;
	size_t nentries = 0;
	char err[1024];
	int r;

	l->retries = opt->retries >= 0                  ? (unsigned)opt->retries
	             : opt->tasks_file || opt->parallel ? MG_RETRIES_DEFAULT
	                                                : 0;
	l->torun = l->total;
	/* One of several nodes with a task list but no joblog: every node runs
	 * every line, which is rarely what was meant. */
	if (!opt->joblog_path && (opt->tasks_file || opt->parallel) && !opt->quiet &&
	    mg_farm_node_from_env(environ, &l->node, err, sizeof(err)) != 0)
		log_warn("started as node %lu of %lu (%s) with a task list but no --joblog: every node runs "
		         "every line; "
		         "--joblog FILE shares the list among them",
		         l->node.rank, l->node.size, l->node.rank_from);
	l->node = (struct mg_farm_node){0};
	if (!opt->joblog_path)
		return 0;
	/* Across nodes: a joblog of our own and this run's claim folder. */
	if ((r = mg_farm_node_from_env(environ, &l->node, err, sizeof(err))) < 0)
		return log_err("%s", err), r;
	snprintf(l->joblog, sizeof(l->joblog), "%s", opt->joblog_path);
	if (l->node.multi) {
		snprintf(l->joblog, sizeof(l->joblog), "%s.%lu", opt->joblog_path, l->node.rank);
		snprintf(l->claims, sizeof(l->claims), "%s.claims/%s", opt->joblog_path, l->node.run_id);
		if (!opt->quiet)
			log_notice("node %lu of %lu (%s): joblog %s, lines claimed in %s", l->node.rank,
			           l->node.size, l->node.rank_from, l->joblog, l->claims);
	}
	/* A joblog of one memguard's own is locked before it is read: a second
	 * memguard on it would run every task again. Across nodes each has its own. */
	if ((r = lock_joblog(l, false)) < 0)
		return r;
	if (!(l->farm.commands = calloc(l->total, sizeof(char *))))
		return log_err("out of memory for %zu tasks' commands", l->total), -ENOMEM;
	for (size_t i = 0; i < l->total; i++) {
		char **argv = opt->tasks_file ? mg_expand_command(l->command, l->list.lines[i]) : NULL;
		/* A sweep's: its line for the shell, as parallel's joblog has it. */
		char *line = opt->parallel ? mg_sweep_line(&l->sweep, i, 1) : NULL, *words[] = {line, NULL};
		l->farm.commands[i] = mg_joblog_command(line ? words : argv ? argv : l->command);
		mg_free_argv(argv);
		free(line);
		if (!l->farm.commands[i])
			return log_err("out of memory for %zu tasks' commands", l->total), -ENOMEM;
	}
	if (!opt->resume)
		return 0;
	if ((r = read_joblogs(l, &entries, &nentries)) < 0)
		return r;
	if (!(l->plans = calloc(l->total, sizeof(*l->plans))))
		return log_err("out of memory for %zu tasks", l->total), -ENOMEM;
	struct mg_resume_input in = {
	        .mode = (enum mg_resume_mode)opt->resume,
	        .commands = l->farm.commands,
	        .ntasks = l->total,
	        .entries = entries,
	        .nentries = nentries,
	        .retries = l->retries,
	        .budget = l->budget.usable,
	        .page_size = (uint64_t)sysconf(_SC_PAGESIZE),
	        /* {%} is the slot a task ran in, which the next run need not give it. */
	        .seq_only = opt->parallel && l->sweep.has_slot,
	        .list = opt->parallel ? "inputs" : NULL,
	};
	if ((r = mg_resume_decide(&in, l->plans, err, sizeof(err))) < 0)
		return log_err("%s", r == -ENOMEM ? "out of memory" : err), r;
	size_t done = 0, failed = 0, retry = 0;
	l->torun = 0;
	for (size_t i = 0; i < l->total; i++) {
		l->torun += l->plans[i].run;
		done += !l->plans[i].run && !l->plans[i].failed_before;
		failed += l->plans[i].failed_before;
		retry += l->plans[i].run && l->plans[i].share && !l->plans[i].failed_before;
	}
	if (!opt->quiet)
		log_notice("resuming from %s: %zu of %zu tasks done, %zu failed before (%s), %zu to retry, "
		           "%zu to "
		           "run",
		           opt->joblog_path, done, l->total, failed,
		           opt->resume == MG_RESUME_FAILED ? "run again" : "skipped", retry, l->torun);
	return 0;
}

/* Opens the joblog to append to (created, and emptied unless resuming, as
 * GNU parallel does), with its header when new, and the results folder.
 * Returns 0, or -errno (said). */
static int open_farm(struct launch *l)
{
	const struct mg_options *opt = &l->opt;
	char *dot;
	int r;

	if (opt->results_dir) {
		if (mkdir(opt->results_dir, 0777) < 0 && errno != EEXIST)
			return mg_log_errno(LOG_ERR, -errno, "cannot create the results folder %s: %m",
			                    opt->results_dir);
		l->farm.results_fd = open(opt->results_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (l->farm.results_fd < 0)
			return mg_log_errno(LOG_ERR, -errno, "cannot open the results folder %s: %m",
			                    opt->results_dir);
		/* Else every task would fail to start, one after the other. */
		if (faccessat(l->farm.results_fd, ".", W_OK | X_OK, AT_EACCESS) < 0)
			return mg_log_errno(LOG_ERR, -errno, "cannot write into the results folder %s: %m",
			                    opt->results_dir);
		l->farm.results_path = opt->results_dir;
	}
	if (opt->progress) {
		l->farm.progress_tty = isatty(STDERR_FILENO);
		l->farm.progress_usec = opt->progress_usec ?: l->farm.progress_tty ? 1000000u : 60000000u;
	}
	if (!opt->joblog_path)
		return 0;
	if (gethostname(l->farm.host, sizeof(l->farm.host) - 1) < 0 || !l->farm.host[0])
		snprintf(l->farm.host, sizeof(l->farm.host), ":");
	if ((dot = strchr(l->farm.host, '.')))
		*dot = '\0';
	if (l->node.multi) {
		char parent[PATH_MAX];
		snprintf(parent, sizeof(parent), "%s.claims", opt->joblog_path);
		if ((mkdir(parent, 0777) < 0 && errno != EEXIST) ||
		    (mkdir(l->claims, 0777) < 0 && errno != EEXIST) ||
		    (l->farm.claims_fd = open(l->claims, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			return mg_log_errno(LOG_ERR, -errno, "cannot make the claim folder %s: %m",
			                    l->claims);
		l->farm.claims_path = l->claims;
	}
	l->farm.joblog_path = l->joblog;
	if ((r = lock_joblog(l, true)) < 0)
		return r;
	/* Emptied (as GNU parallel does), or a line cut off mended before the
	 * next is appended to it. */
	ssize_t cut = mg_joblog_prepare(l->farm.joblog_fd, opt->resume);
	if (cut < 0)
		return mg_log_errno(LOG_ERR, (int)cut, "cannot write the joblog %s: %m", l->joblog);
	if (cut > 0 && !opt->quiet)
		log_notice("the joblog %s ended in a line cut off (%zd bytes, a run died while writing it): "
		           "removed; that attempt runs again",
		           l->joblog, cut);
	return 0;
}

static void explain(const struct launch *l)
{
	const struct mg_budget_input *in = &l->in;
	const struct mg_budget *b = &l->budget;
	char s[MG_SIZE_STRLEN];

	fprintf(stderr, "memguard: MemTotal                 %s\n", mg_size_format(in->mem.mem_total, s));
	fprintf(stderr, "memguard: MemAvailable             %s\n", mg_size_format(in->mem.mem_available, s));
	if (in->cgroup_limit.value != MG_SIZE_UNLIMITED)
		fprintf(stderr, "memguard: cgroup limit             %s  (%s)\n",
		        mg_size_format(in->cgroup_limit.value, s), in->cgroup_limit.where);
	if (in->batch_grant.value != MG_SIZE_UNLIMITED)
		fprintf(stderr, "memguard: batch grant              %s  (%s)\n",
		        mg_size_format(in->batch_grant.value, s), in->batch_grant.where);
	fprintf(stderr, "memguard: limit                    %s  (from %s)\n", mg_size_format(b->limit, s),
	        b->limit_from);
	fprintf(stderr, "memguard: reserve                  %s  (reserve = %s of MemTotal)\n",
	        mg_size_format(b->reserve, s), in->reserve);
	fprintf(stderr, "memguard: Shmem kept back          %s\n", mg_size_format(b->shmem, s));
	fprintf(stderr, "memguard: MemAvailable - reserve   %s\n", mg_size_format(b->available, s));
	fprintf(stderr, "memguard: the node can give        %s  (%s)\n", mg_size_format(b->room, s),
	        b->room_from);
	fprintf(stderr,
	        "memguard: usable                   %s  (the smaller of limit and what the node can give)\n",
	        mg_size_format(b->usable, s));
	fprintf(stderr, "memguard: tasks at once            %u  (%s)\n", l->parallel, l->ntasks.where);
	fprintf(stderr, "memguard: share per task           %s  (%s)\n", mg_size_format(b->share, s),
	        in->mem_per_task ? "--mem-per-task" : "usable / tasks");
	fprintf(stderr, "memguard: runtime                  %s  (%s)\n", mg_runtime_name(l->rt), l->rt_why);
	for (size_t i = 0; i < l->nheap; i++)
		fprintf(stderr, "memguard: heap flag                %s=%s\n", l->heap_env[i].name,
		        l->heap_env[i].value);
	/* MALLOC_ARENA_MAX may still come with RLIMIT_AS: its own line says so. */
	if (l->rt_note[0])
		fprintf(stderr, "memguard: generic task             %s; no -Xmx (a JVM: --runtime jvm)\n",
		        l->rt_note);
	if (l->pool != MG_POOL_NONE)
		fprintf(stderr, "memguard: worker pool              %s%s%s\n", mg_pool_name(l->pool),
		        l->pool_set.arg[0] ? ", appended " : "", l->pool_set.arg);
	fprintf(stderr, "memguard: RLIMIT_AS                %s\n",
	        l->limits.rlimit_as ? mg_size_format(l->limits.rlimit_as, s) : "not set");
	for (size_t p = 0; l->steps && p < l->npools; p++) {
		char mem[MG_SIZE_STRLEN], budget[MG_SIZE_STRLEN], share[MG_SIZE_STRLEN];
		const struct mg_node_pool *pool = &l->pools[p];
		const struct mg_step_node *node = NULL;
		for (size_t i = 0; i < l->alloc.nnodes && !node; i++)
			if (strcmp(l->alloc.nodes[i].name, pool->name) == 0)
				node = &l->alloc.nodes[i];
		fprintf(stderr,
		        "memguard: step node                %s: %u CPUs (%u a step), job's memory %s, %s for "
		        "steps, "
		        "share %s%s\n",
		        pool->name, pool->cpus, pool->step_cpus,
		        node && node->mem != MG_SIZE_UNLIMITED ? mg_size_format(node->mem, mem)
		                                               : "the whole node",
		        mg_size_format(pool->budget, budget), mg_size_format(pool->share, share),
		        node && (size_t)(node - l->alloc.nodes) == l->alloc.self
		                ? " (this node: the srun clients run here)"
		                : "");
	}
	if (l->steps) {
		char held[MG_SIZE_STRLEN];
		fprintf(stderr, "memguard: steps, since             %s\n",
		        l->opt.backend == MG_BACKEND_STEPS ? "--backend=steps asks" : l->why);
		fprintf(stderr, "memguard: step CPUs                %s\n",
		        l->opt.step_cpus ? "--step-cpus" : "the node's CPUs split over -n, at least one");
		fprintf(stderr,
		        "memguard: kept out of steps        %s held by the batch step, %llu MiB per step for "
		        "its srun "
		        "and slurmstepd\n",
		        mg_size_format(l->held, held), (unsigned long long)(MG_STEP_OVERHEAD >> 20));
	}
	fprintf(stderr, "memguard: mode                     %s\n", l->mode);
}

/* 4. Supervise: start the tasks, at most `parallel` at once, and follow them
 * to the end (supervisor.c). Returns the tasks, or NULL (said). */
static struct mg_task *supervise(struct launch *l, const char **ret_signal)
{
	struct mg_task *tasks = calloc(l->torun ? l->torun : 1, sizeof(*tasks));
	size_t n = 0;

	if (!tasks) {
		log_err("out of memory for %zu tasks", l->total);
		return NULL;
	}
	for (size_t i = 0; i < l->total; i++) {
		const struct mg_resume_plan *p = l->plans ? &l->plans[i] : NULL;
		if (p && !p->run)
			continue;
		struct mg_task *t = &tasks[n++];
		t->index = (unsigned)i;
		t->param = l->opt.tasks_file ? l->list.lines[i] : l->opt.parallel ? l->sweep.params[i] : NULL;
		t->share = p && p->share ? p->share : l->budget.share;
		t->attempt = p ? p->attempt : 1;
		/* A retry the last run planned counts on from the memory failures
		 * before it; a task run again by --resume-failed gets its retries
		 * afresh. */
		t->first_attempt = p ? t->attempt - p->retried : 1;
	}
	if (l->opt.parallel) {
		_cleanup_free_ size_t *indices = calloc(n ? n : 1, sizeof(*indices));
		for (size_t i = 0; indices && i < n; i++)
			indices[i] = tasks[i].index;
		if (!indices ||
		    mg_sweep_start(&l->sweep, &l->opt, indices, n, l->parallel, l->farm.commands) < 0) {
			log_err("out of memory for %zu tasks' output", n);
			free(tasks);
			return NULL;
		}
		l->farm.sweep = &l->sweep;
	}
	/* One cgroup fd per running task: 1024 tasks need more than the usual
	 * soft limit of 1024 fds. Tasks get the original limit back. */
	struct rlimit nofile, raised;
	bool nofile_raised = false;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		raised = (struct rlimit){.rlim_cur = nofile.rlim_max, .rlim_max = nofile.rlim_max};
		nofile_raised = setrlimit(RLIMIT_NOFILE, &raised) == 0;
	}
	struct mg_supervisor_config sc = {
	        .command = l->command,
	        .tasks = tasks,
	        .ntasks = l->torun,
	        .list_size = l->total,
	        .parallel = l->parallel,
	        .share = l->budget.share,
	        .rlimit_as = l->limits.rlimit_as,
	        .limits = l->limits.task,
	        .heap_env = l->heap_env,
	        .nheap_env = l->nheap,
	        .placement = l->cgroups ? &l->placement : NULL,
	        .procfd = l->procfd,
	        .grace_usec =
	                l->opt.grace_usec != MG_GRACE_UNSET ? l->opt.grace_usec : l->cfg.kill_grace_usec,
	        .watchdog_interval_usec = WATCHDOG_INTERVAL_USEC,
	        .nofile = nofile_raised ? &nofile : NULL,
	        .budget = l->budget.usable,
	        .retries = l->retries,
	        .limits_in = &l->limits_in,
	        .runtime = l->rt,
	        .heap_flags = l->opt.heap_flags != 0 && l->cfg.heap_flags,
	        .farm = &l->farm,
	        .pools = l->pools,
	        .npools = l->npools,
	        .steps = l->steps ? &l->steps_cfg : NULL,
	};
	(void)mg_supervise(&sc, ret_signal);
	/* Lines other nodes ran are in their joblogs and reports, not ours; a
	 * line no node claimed before a stop is nobody's yet, and a resume
	 * runs it. */
	size_t kept = 0, unclaimed = 0;
	for (size_t i = 0; i < l->torun; i++) {
		bool nobodys = l->node.multi && tasks[i].state == MG_TASK_PENDING && !tasks[i].claimed;
		unclaimed += nobodys;
		if (!tasks[i].elsewhere && !nobodys)
			tasks[kept++] = tasks[i];
	}
	if (kept + unclaimed < l->torun && !l->opt.quiet)
		log_notice("%zu of the %zu tasks ran on other nodes (their joblogs %s.<rank>)",
		           l->torun - kept - unclaimed, l->torun, l->opt.joblog_path);
	if (unclaimed && !l->opt.quiet)
		log_notice("%zu tasks were claimed by no node before the run was stopped: a resume runs them",
		           unclaimed);
	l->torun = kept;
	return tasks;
}

/* Tasks at once: -n, or with steps what the nodes' CPUs hold of it. */
static unsigned steps_at_once(const struct launch *l)
{
	unsigned n = 0;

	if (!l->steps)
		return l->parallel;
	for (size_t p = 0; p < l->npools; p++) {
		unsigned cpus = l->pools[p].cpus / (l->pools[p].step_cpus ? l->pools[p].step_cpus : 1);
		n += cpus < l->pools[p].parallel ? cpus : l->pools[p].parallel;
	}
	return n;
}

/* 5. Report: the summary table, the JSON report, and the exit status. */
static int report(const struct launch *l, const struct mg_task *tasks, const char *signal_name)
{
	struct mg_run_info info = {
	        .mode = l->steps     ? "steps"
	                : l->cgroups ? "cgroup"
	                             : "degraded",
	        .shares = l->limits.mode == MG_SHARE_ELASTIC ? "elastic" : "strict",
	        .where = l->steps     ? l->steps_where
	                 : l->cgroups ? l->placement.run
	                              : l->why,
	        .placed_by = l->cgroups ? l->placement.placed_by : NULL,
	        .share = l->budget.share,
	        .budget = l->budget.usable,
	        .run_capped = l->limits.run_capped,
	        .runtime = l->rt,
	        .runtime_note = l->rt_note,
	        .parallel = steps_at_once(l),
	        .signal_received = signal_name,
	        .advise = l->opt.tasks_file != NULL || l->opt.parallel,
	        .cpus = cpus_allowed(),
	};
	/* A run that was stopped says so, whatever its tasks did; with GNU
	 * parallel's inputs, parallel's status. */
	info.status_set = true;
	info.exit_status =
	        mg_run_final_status(mg_stop_signal(signal_name), l->opt.parallel,
	                            l->opt.parallel ? mg_sweep_exit_status(&l->sweep) : 0, tasks, l->torun);

	int status = mg_run_metrics_finish(
	        l->opt.metrics_path, &info, tasks, l->torun,
	        mg_report_finish(l->opt.quiet ? NULL : stderr, l->opt.report_path, &info, tasks, l->torun));
	if (l->farm.joblog_failed) {
		log_err("the joblog %s misses attempts (see above)", l->joblog);
		return MG_EXIT_USAGE;
	}
	return status;
}

int main(int argc, char **argv)
{
	struct launch l = {.procfd = -1,
	                   .placement = MG_PLACEMENT_INIT,
	                   .farm = MG_FARM_INIT,
	                   .sweep = {.output = {.spool = -1}}};
	const char *signal_name = NULL;
	struct mg_task *tasks;
	int r, status = MG_EXIT_USAGE;

	/* A standard fd the caller closed is /dev/null here: else the first file
	 * memguard opens would take its place (standard input read as inputs). */
	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			return MG_EXIT_USAGE;
	mg_log_setup("memguard", MG_LOG_STDERR, LOG_INFO);
	/* A subcommand; a program named report runs as memguard -- report. */
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return mg_report_joblogs_main(argc - 1, argv + 1, stdout);
	if (argc > 1 && strcmp(argv[1], MG_STEP_SUBCOMMAND) == 0)
		return mg_step_main(argc - 1, argv + 1);
	r = configure(&l, argc, argv);
	if (r != MG_PARSE_RUN) {
		status = r == MG_PARSE_EXIT_OK ? MG_EXIT_OK : MG_EXIT_USAGE;
		goto out;
	}
	/* A {} in the command alone makes a sweep over standard input, as in
	 * parallel; but a batch job's stdin is /dev/null, and a {} that is no
	 * replacement string (a Python dict, find -exec) would make that a
	 * sweep of nothing. There the command runs as written, N copies. */
	struct stat in;
	if (l.opt.stdin_only && fstat(STDIN_FILENO, &in) == 0 && S_ISCHR(in.st_mode) &&
	    in.st_rdev == makedev(1, 3)) {
		log_warn("the command holds {} but standard input is /dev/null: running it as written, as N "
		         "copies; a sweep takes its inputs from ::: ARGS, :::: FILE or -a FILE");
		l.opt.parallel = l.opt.stdin_only = false;
	}
	if (l.opt.parallel && l.opt.short_q) {
		log_err("-q is memguard's --quiet, not GNU parallel's -q: with parallel's inputs write "
		        "--quiet, "
		        "or --quote for parallel's -q");
		goto out;
	}
	/* A command in one string ('python3 sim.py {}') is known by its words. */
	l.written = l.opt.command;
	if (l.opt.parallel && (l.split = mg_compose_split(l.opt.command)))
		l.opt.command = l.split;
	if ((r = preflight(&l)) > 0) {
		status = r;
		goto out;
	}
	if (plan_budget(&l) < 0)
		goto out;
	/* The tasks get no standard input, as parallel's jobs: what was there
	 * were the inputs, or belongs to nobody. */
	if (l.opt.parallel && (r = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) {
		if (r != STDIN_FILENO)
			dup2(r, STDIN_FILENO), close(r);
	}
	if (l.opt.parallel && l.total == 0) {
		if (!l.opt.quiet)
			log_notice("no input: nothing to run");
		status = MG_EXIT_OK;
		goto out;
	}
	if (place_run(&l) < 0 || set_limits(&l) < 0 || pool_word(&l) < 0 || plan_farm(&l) < 0)
		goto out;
	if (l.opt.explain)
		explain(&l);
	if (l.opt.dry_run) {
		status = MG_EXIT_OK;
		/* Each task's line, on stdout, as parallel --dry-run prints them. */
		if (l.opt.parallel && (r = mg_sweep_print(&l.sweep, l.opt.tag, stdout)) < 0) {
			mg_log_errno(LOG_ERR, r, "cannot print the tasks' commands: %m");
			status = MG_EXIT_USAGE;
		}
		goto out;
	}
	if (open_farm(&l) < 0)
		goto out;
	if (l.torun == 0) {
		if (!l.opt.quiet)
			log_notice("nothing to run: the joblog %s has every task done%s", l.opt.joblog_path,
			           l.opt.resume == MG_RESUME
			                   ? " or failed (--resume-failed runs the failed ones again)"
			                   : "");
		status = l.farm.joblog_failed ? MG_EXIT_USAGE : MG_EXIT_OK;
		goto out;
	}
	if ((tasks = supervise(&l, &signal_name))) {
		/* The tasks' output that waited (-k), before memguard's summary. */
		if (l.opt.parallel)
			mg_output_done(&l.sweep.output);
		status = report(&l, tasks, signal_name);
		free(tasks);
	}
out:
	if (l.command != l.opt.command)
		free(l.command);
	if (l.sweep.words != l.written)
		free((char **)l.sweep.words);
	if (l.opt.parallel)
		mg_sweep_done(&l.sweep);
	mg_free_argv(l.split);
	mg_placement_teardown(&l.placement);
	mg_cgroup_mount_done(&l.mount);
	mg_farm_done(&l.farm, l.total);
	for (size_t i = 0; i < l.ntexts; i++)
		free(l.texts[i]);
	free(l.texts);
	free(l.plans);
	mg_tasklist_done(&l.list);
	mg_steps_alloc_done(&l.alloc);
	free(l.pools);
	if (l.procfd >= 0)
		close(l.procfd);
	return status;
}
