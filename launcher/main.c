/* memguard: run N tasks, each in its own cgroup with an even share of the
 * node's memory, and report what became of each. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "budget.h"
#include "memguard/cgroup.h"
#include "memguard/config.h"
#include "memguard/locate.h"
#include "memguard/log.h"
#include "memguard/meminfo.h"
#include "memguard/paths.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "options.h"
#include "placement.h"
#include "report.h"
#include "runtime.h"
#include "supervisor.h"
#include "tasklist.h"

extern char **environ;

#define WATCHDOG_INTERVAL_USEC 250000ull

static bool env_setting_present(const struct mg_env_setting *env, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(env[i].name, name) == 0)
			return true;
	return false;
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
	if (mountfd < 0 ||
	    mg_cg_ancestor_limit(mountfd, self, m->unified ? "memory.max" : "memory.limit_in_bytes", &limit,
	                         &at) < 0 ||
	    !at)
		return;
	ret->value = limit;
	snprintf(ret->where, sizeof(ret->where), "%s of cgroup %s%s",
	         m->unified ? "memory.max" : "memory.limit_in_bytes", m->path, at);
}

/* True when memguardd runs on this node (its pid file names a live process). */
static bool daemon_running(void)
{
	char buf[32];
	uint64_t pid;

	if (mg_read_small_at(AT_FDCWD, MG_DAEMON_PIDFILE, buf, sizeof(buf)) <= 0)
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	if (mg_parse_u64(buf, &pid) < 0 || pid == 0 || pid > INT32_MAX)
		return false;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

static void explain(const struct mg_budget_input *in, const struct mg_budget *b,
                    const struct mg_sourced *ntasks, unsigned parallel, enum mg_runtime rt,
                    const char *rt_why, const struct mg_env_setting *env, size_t nenv, uint64_t rlimit_as,
                    const char *mode)
{
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
	fprintf(stderr, "memguard: tasks at once            %u  (%s)\n", parallel, ntasks->where);
	fprintf(stderr, "memguard: share per task           %s  (%s)\n", mg_size_format(b->share, s),
	        in->mem_per_task ? "--mem-per-task" : "usable / tasks");
	fprintf(stderr, "memguard: runtime                  %s  (%s)\n", mg_runtime_name(rt), rt_why);
	for (size_t i = 0; i < nenv; i++)
		fprintf(stderr, "memguard: heap flag                %s=%s\n", env[i].name, env[i].value);
	fprintf(stderr, "memguard: RLIMIT_AS                %s\n",
	        rlimit_as ? mg_size_format(rlimit_as, s) : "not set");
	fprintf(stderr, "memguard: mode                     %s\n", mode);
}

int main(int argc, char **argv)
{
	struct mg_options opt;
	struct mg_config cfg;
	struct mg_cgroup_mount mount = {0};
	struct mg_placement placement = MG_PLACEMENT_INIT;
	struct mg_budget_input in = {0};
	struct mg_budget budget;
	struct mg_sourced ntasks;
	struct mg_tasklist list = {0};
	_cleanup_close_ int procfd = -1;
	char err[512], why[512], mode[3 * PATH_MAX];
	const char *proc_path = getenv(MG_PROC_PATH_ENV) ?: MG_PROC_PATH;
	const char *rt_why = "--runtime";
	const char *signal_name = NULL;
	int r, status = MG_EXIT_USAGE;

	mg_log_setup("memguard", MG_LOG_STDERR, LOG_INFO);
	r = mg_options_parse(argc, argv, &opt, err, sizeof(err), stdout);
	if (r < 0) {
		log_err("%s", err);
		return MG_EXIT_USAGE;
	}
	if (r == MG_PARSE_EXIT_OK)
		return MG_EXIT_OK;
	mg_config_defaults(&cfg);
	r = mg_config_load(&cfg, opt.config_path ?: MG_CONFIG_FILE, opt.config_path != NULL,
	                   opt.config_path ? NULL : MG_CONFIG_DROPIN_DIR, err, sizeof(err));
	if (r < 0) {
		log_err("%s", err);
		return MG_EXIT_USAGE;
	}
	mg_log_set_level(opt.verbose ? LOG_DEBUG : cfg.log_level);

	procfd = open(proc_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0) {
		mg_log_errno(LOG_ERR, -errno, "open %s: %m", proc_path);
		return MG_EXIT_USAGE;
	}
	if ((r = mg_meminfo_read(procfd, &in.mem)) < 0) {
		mg_log_errno(LOG_ERR, r, "read %s/meminfo: %m", proc_path);
		return MG_EXIT_USAGE;
	}

	if (opt.tasks_file) {
		r = mg_tasklist_load(opt.tasks_file, &list, err, sizeof(err));
		if (r < 0) {
			log_err("%s", err);
			return MG_EXIT_USAGE;
		}
	}
	mg_default_ntasks(environ, cpus_allowed(), &ntasks);
	if (opt.ntasks) {
		ntasks.value = opt.ntasks;
		snprintf(ntasks.where, sizeof(ntasks.where), "-n");
	}
	unsigned parallel = (unsigned)ntasks.value;
	size_t total = opt.tasks_file ? list.count : parallel;
	if (opt.tasks_file && list.count < parallel)
		parallel = (unsigned)list.count;

	r = mg_cgroup_find_memory_mount(procfd, &mount);
	if (r < 0)
		snprintf(why, sizeof(why), "no cgroup hierarchy carries the memory controller (%s)",
		         strerror(-r));
	find_cgroup_limit(procfd, &mount, &in.cgroup_limit);
	mg_batch_grant_from_env(environ, &in.batch_grant);
	in.mem_option = opt.mem;
	in.reserve = opt.reserve ?: cfg.reserve;
	in.reserve_shmem = cfg.reserve_shmem;
	in.ntasks = parallel;
	in.mem_per_task = opt.mem_per_task;
	in.min_share = cfg.min_share;
	if ((r = mg_budget_compute(&in, &budget, err, sizeof(err))) < 0) {
		log_err("%s", err);
		goto out;
	}

	enum mg_runtime rt = opt.runtime;
	if (!opt.runtime_forced)
		rt = mg_runtime_detect(opt.command, getenv("PATH"), &rt_why);
	struct mg_env_setting heap_env[MG_HEAP_SETTINGS_MAX + 1];
	size_t nheap = 0;
	if (opt.heap_flags != 0 && cfg.heap_flags)
		nheap = (size_t)mg_heap_settings(rt, budget.share, environ, opt.command, heap_env);
	enum mg_rlimit_as_mode as_mode =
	        opt.rlimit_as >= 0 ? (enum mg_rlimit_as_mode)opt.rlimit_as : cfg.rlimit_as;
	uint64_t rlimit_as = 0;
	if (as_mode == MG_RLIMIT_AS_ON || (as_mode == MG_RLIMIT_AS_AUTO && mg_runtime_wants_rlimit_as(rt)))
		rlimit_as = budget.share;
	/* Under RLIMIT_AS every thread's 64 MiB malloc arena counts: a threaded
	 * task would run out of address space long before memory. */
	if (rlimit_as && !getenv("MALLOC_ARENA_MAX") &&
	    !env_setting_present(heap_env, nheap, "MALLOC_ARENA_MAX"))
		heap_env[nheap++] = (struct mg_env_setting){.name = "MALLOC_ARENA_MAX", .value = "2"};

	/* Cgroups, or say once why not and run degraded. */
	bool cgroups = false;
	if (opt.no_cgroups) {
		snprintf(why, sizeof(why), "--no-cgroups");
	} else if (mount.path) {
		r = mg_placement_setup(&placement, procfd, &mount, &cfg, opt.cgroup_parent, why, sizeof(why));
		cgroups = r >= 0;
	}
	if (cgroups)
		snprintf(mode, sizeof(mode), "cgroup %s/%s", placement.mount, placement.run);
	else
		snprintf(mode, sizeof(mode), "degraded: %s", why);
	if (!cgroups && opt.require_cgroups) {
		log_err("cannot guard the tasks with cgroups: %s (--require-cgroups)", why);
		goto out;
	}
	if (!cgroups && !opt.quiet)
		log_warn("running without cgroups (%s): guarding with RLIMIT_AS, heap flags and an RSS "
		         "watchdog",
		         why);
	bool daemon = daemon_running();
	enum mg_share_mode share_mode = opt.mode >= 0 ? (enum mg_share_mode)opt.mode : cfg.mode;
	if (share_mode == MG_SHARE_AUTO)
		share_mode = daemon ? MG_SHARE_ELASTIC : MG_SHARE_STRICT;
	/* The kernel keeps the tasks together inside the budget, unless memguardd
	 * guards elastic tasks: a cap where the daemon acts would race it, and
	 * the kernel would pick the largest process, not the task furthest over
	 * its share. */
	bool cap_run = cgroups && !(share_mode == MG_SHARE_ELASTIC && daemon);
	if (cap_run && (r = mg_placement_limit_run(&placement, budget.usable, cfg.swap_max)) < 0) {
		log_err("cannot cap cgroup %s/%s at the budget (see above)", placement.mount, placement.run);
		goto out;
	}
	if (cgroups)
		snprintf(mode, sizeof(mode), "cgroup %s/%s%s%s, %s shares, %s", placement.mount,
		         placement.run, placement.placed_by[0] ? ", " : "", placement.placed_by,
		         share_mode == MG_SHARE_ELASTIC ? "elastic" : "strict",
		         cap_run ? "the run capped at the usable memory" : "memguardd takes memory back");
	if (opt.explain)
		explain(&in, &budget, &ntasks, parallel, rt, rt_why, heap_env, nheap, rlimit_as,
		        cgroups ? mode : "degraded (rlimits, heap flags and an RSS watchdog)");
	if (opt.dry_run) {
		status = MG_EXIT_OK;
		goto out;
	}

	struct mg_task *tasks = calloc(total, sizeof(*tasks));
	if (!tasks) {
		log_err("out of memory for %zu tasks", total);
		goto out;
	}
	for (size_t i = 0; i < total; i++) {
		tasks[i].index = (unsigned)i;
		tasks[i].param = opt.tasks_file ? list.lines[i] : NULL;
		tasks[i].share = budget.share;
	}
	/* One cgroup fd per running task: 1024 tasks need more than the usual
	 * soft limit of 1024 fds. Tasks get the original limit back. */
	struct rlimit nofile, raised;
	bool nofile_raised = false;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		raised = (struct rlimit){.rlim_cur = nofile.rlim_max, .rlim_max = nofile.rlim_max};
		nofile_raised = setrlimit(RLIMIT_NOFILE, &raised) == 0;
	}
	unsigned high_pct = opt.memory_high >= 0 ? (unsigned)opt.memory_high : cfg.high_percent;
	/* Elastic: a task may use more than its share while the node has room,
	 * up to the whole budget; memguardd takes memory back under pressure. */
	uint64_t task_max = budget.share;
	if (cgroups && share_mode == MG_SHARE_ELASTIC) {
		task_max = budget.usable;
		high_pct = 0;
		if (rlimit_as)
			rlimit_as = task_max;
	}
	struct mg_supervisor_config sc = {
	        .command = opt.command,
	        .tasks = tasks,
	        .ntasks = total,
	        .parallel = parallel,
	        .share = budget.share,
	        .rlimit_as = rlimit_as,
	        .limits = {.share = budget.share,
	                   .max = task_max,
	                   .high = high_pct ? budget.share / 100 * high_pct : 0,
	                   .swap_max = cfg.swap_max,
	                   .oom_group = cfg.oom_group},
	        .heap_env = heap_env,
	        .nheap_env = nheap,
	        .placement = cgroups ? &placement : NULL,
	        .procfd = procfd,
	        .grace_usec = opt.grace_usec != MG_GRACE_UNSET ? opt.grace_usec : cfg.kill_grace_usec,
	        .watchdog_interval_usec = WATCHDOG_INTERVAL_USEC,
	        .nofile = nofile_raised ? &nofile : NULL,
	};
	r = mg_supervise(&sc, &signal_name);

	struct mg_run_info info = {
	        .mode = cgroups ? "cgroup" : "degraded",
	        .shares = cgroups && share_mode == MG_SHARE_ELASTIC ? "elastic" : "strict",
	        .where = cgroups ? placement.run : why,
	        .placed_by = placement.placed_by,
	        .share = budget.share,
	        .budget = budget.usable,
	        .run_capped = cap_run,
	        .runtime = rt,
	        .parallel = parallel,
	        .signal_received = signal_name,
	};
	if (!opt.quiet)
		mg_report_table(stderr, &info, tasks, total);
	if (opt.report_path && (r = mg_report_json(opt.report_path, &info, tasks, total)) < 0)
		mg_log_errno(LOG_ERR, r, "write report %s: %m", opt.report_path);
	status = mg_run_exit_status(tasks, total);
	free(tasks);
out:
	mg_placement_teardown(&placement);
	mg_cgroup_mount_done(&mount);
	mg_tasklist_done(&list);
	return status;
}
