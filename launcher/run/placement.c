/* Where the run's cgroups go, and setting them up. */
#include "run/placement.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/contract.h"
#include "memguard/log.h"
#include "memguard/procstat.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "run/askplace.h"
#include "run/relay.h"
#include "run/spawn.h"

#define CONTROLLERS "memory pids"

/* Writes "what: error text" into why and returns r. */
static int reason(char *why, size_t whysize, int r, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int reason(char *why, size_t whysize, int r, const char *fmt, ...)
{
	char msg[PATH_MAX + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(why, whysize, "%s: %s", msg, strerror(-r));
	return r;
}

/* Opens or creates a cgroup and lets its children have memory and pids. */
static int open_parent(int mountfd, const char *path, const char *mount, char *why, size_t whysize)
{
	_cleanup_close_ int fd = mg_cg_open(mountfd, path);
	char full[2 * PATH_MAX];
	int r;

	snprintf(full, sizeof(full), "%s/%s", mount, path);
	if (fd == -ENOENT) {
		if (mkdirat(mountfd, path, 0755) < 0 && errno != EEXIST)
			return reason(why, whysize, -errno, "create cgroup %s", full);
		fd = mg_cg_open(mountfd, path);
	}
	if (fd < 0)
		return reason(why, whysize, fd, "open cgroup %s", full);
	r = mg_cg_has_controller(fd, "memory");
	if (r == 0) {
		snprintf(why, whysize, "controller memory not enabled in the parent of %s", full);
		return -ENOENT;
	}
	r = mg_cg_enable_controllers(fd, full, CONTROLLERS, why, whysize);
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}

static int move_into(pid_t pid, void *userdata)
{
	int r = mg_cg_move_pid(*(int *)userdata, pid);

	return r == -ESRCH ? 0 : r; /* gone meanwhile */
}

/* A delegated cgroup that holds processes (ours, perhaps the job script's)
 * cannot enable controllers for children: move them all into a leaf first. */
static int vacate_into_leaf(int cgfd, const char *path, char *why, size_t whysize)
{
	_cleanup_close_ int leaf = -1;
	char full[PATH_MAX + 8];
	int r;

	snprintf(full, sizeof(full), "%s/job", path);
	leaf = mg_cg_open(cgfd, "job");
	if (leaf == -ENOENT)
		leaf = mg_cg_create(cgfd, "job");
	if (leaf < 0)
		return reason(why, whysize, leaf, "create leaf cgroup %s", full);
	/* Again while a process forks as its siblings move. */
	for (int round = 0; round < 10; round++) {
		char first[32];
		r = (int)mg_read_small_at(cgfd, "cgroup.procs", first, sizeof(first));
		if (r < 0)
			return reason(why, whysize, r, "read %s/cgroup.procs", path);
		if (r == 0)
			return 0;
		r = mg_cg_for_each_pid(cgfd, move_into, &leaf);
		if (r < 0)
			return reason(why, whysize, r, "move processes into %s", full);
	}
	snprintf(why, whysize, "processes keep appearing in %s", path);
	return -EBUSY;
}

/* Starts one throwaway process in the run's cgroup: creating cgroups is
 * allowed in more places than moving processes into them. */
static int probe_run(struct mg_placement *pl, char *why, size_t whysize)
{
	_cleanup_close_ int probe = mg_cg_create(pl->runfd, "probe");
	int r = probe < 0 ? probe : mg_spawn_probe(probe);

	if (probe >= 0)
		(void)mg_cg_remove(pl->runfd, "probe");
	return r < 0 ? reason(why, whysize, r, "cannot start processes in %s", pl->run) : 0;
}

/* Asks memguardd, the node's trusted process, to place us: an ordinary user
 * whose cgroup is not delegated (context says so), or root on a systemd node
 * (context NULL), where systemd should stay the single writer of the tree.
 * The first process stays where the batch system put it (relay.h); a child
 * asks and goes on. Returns 1 with base set for a job cgroup (the run goes
 * below it as usual), 0 when the run itself was placed (set up here), or
 * -errno with the reason. */
static int ask_daemon(struct mg_placement *pl, const char *context, char *base, size_t basesize, char *why,
                      size_t whysize)
{
	const char *socket_path = getenv(MG_PLACE_SOCKET_ENV) ?: MG_PLACE_SOCKET;
	struct mg_place_answer a;
	char answer[512], limit[MG_SIZE_STRLEN], full[2 * PATH_MAX];
	int relay = access(socket_path, F_OK) == 0 ? mg_relay_fork() : -ENOENT;
	int r = mg_place_ask(socket_path, getenv("PBS_JOBID"), pl->budget, 5000, &a, answer, sizeof(answer));

	if (r < 0 || a.kind != MG_PLACE_ANSWER_RUN) {
		if (relay >= 0)
			close(relay);
	} else {
		snprintf(full, sizeof(full), "%s/%s", pl->mount, a.cgroup);
		mg_relay_tell_run(relay, full);
	}
	if (r < 0) {
		snprintf(why, whysize, "%s%s%s", context ?: "", context ? ", and " : "", answer);
		return r;
	}
	if (a.kind == MG_PLACE_ANSWER_JOB) {
		snprintf(base, basesize, "%s", a.cgroup);
		snprintf(pl->placed_by, sizeof(pl->placed_by), "placed by memguardd in job cgroup %s",
		         a.cgroup);
		return 1;
	}
	snprintf(pl->run, sizeof(pl->run), "%s", a.cgroup);
	pl->runfd = mg_cg_open(pl->mountfd, a.cgroup);
	if (pl->runfd < 0)
		return reason(why, whysize, pl->runfd, "open the cgroup memguardd placed us in, %s/%s",
		              pl->mount, a.cgroup);
	pl->placed = true;
	if (a.limit == MG_SIZE_UNLIMITED)
		snprintf(pl->placed_by, sizeof(pl->placed_by), "placed by memguardd; no limit above it");
	else
		snprintf(pl->placed_by, sizeof(pl->placed_by),
		         "placed by memguardd; its limit %s is memory.max of %s",
		         mg_size_format(a.limit, limit), a.limit_from[0] ? a.limit_from : "?");
	if (a.budget_refused) {
		size_t len = strlen(pl->placed_by);
		snprintf(
		        pl->placed_by + len, sizeof(pl->placed_by) - len,
		        "; this memguardd is older than the launcher and shares the job's limit with the job "
		        "script (restart memguardd)");
	}
	return probe_run(pl, why, whysize);
}

bool mg_placement_run_stale(const struct mg_run_owner *o)
{
	if (o->pid <= 0)
		return false;
	if (!o->alive)
		return true;
	return o->recorded && o->recorded_pid == o->pid && o->recorded_start != o->start;
}

int mg_placement_run_pid(const char *name, pid_t *ret_pid)
{
	uint64_t pid;

	if (strncmp(name, "run-", 4) != 0 || name[4] == '0' || mg_parse_u64(name + 4, &pid) < 0 || pid == 0 ||
	    pid > INT32_MAX)
		return -EINVAL;
	*ret_pid = (pid_t)pid;
	return 0;
}

struct stale_runs {
	int procfd;
	char (*names)[64];
	size_t n, cap;
};

static int collect_stale(int childfd, const char *name, void *userdata)
{
	struct stale_runs *sr = userdata;
	struct mg_run_owner o = {0};
	uint64_t start;

	if (mg_placement_run_pid(name, &o.pid) < 0 || strlen(name) >= sizeof(sr->names[0]))
		return 0;
	o.recorded = mg_contract_get_launcher(childfd, &o.recorded_pid, &o.recorded_start) == 0;
	int r = mg_proc_start_time(sr->procfd, o.pid, &start);
	if (r < 0 && r != -ENOENT && r != -ESRCH)
		return 0; /* cannot tell: keep it */
	o.alive = r == 0;
	o.start = r == 0 ? start : 0;
	if (!mg_placement_run_stale(&o))
		return 0;
	if (sr->n == sr->cap) {
		size_t ncap = sr->cap ? 2 * sr->cap : 8;
		char(*bigger)[64] = realloc(sr->names, ncap * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		sr->names = bigger;
		sr->cap = ncap;
	}
	snprintf(sr->names[sr->n++], sizeof(sr->names[0]), "%s", name);
	return 0;
}

/* A launcher that was SIGKILLed (the OOM killer, a batch system's hard kill)
 * leaves its run-<pid> cgroup, and what still runs in it, behind: kill and
 * remove every run under base whose launcher is gone. One line each. */
static void reap_stale_runs(struct mg_placement *pl, int procfd, const char *base)
{
	struct stale_runs sr = {.procfd = procfd};
	int r = mg_cg_for_each_child(pl->basefd, collect_stale, &sr);

	if (r < 0)
		mg_log_errno(LOG_WARNING, r, "look for stale runs in %s/%s: %m", pl->mount, base);
	for (size_t i = 0; i < sr.n; i++) {
		_cleanup_close_ int fd = mg_cg_open(pl->basefd, sr.names[i]);
		int populated = fd < 0 ? 0 : mg_cg_populated(fd);

		if (populated > 0 && (r = mg_cg_kill(fd)) < 0) {
			mg_log_errno(LOG_WARNING, r, "kill stale run %s/%s/%s: %m", pl->mount, base,
			             sr.names[i]);
			continue;
		}
		/* SIGKILL is not instant: wait (2 s at most) for the cgroup to empty. */
		for (int k = 0; k < 200 && populated > 0 && mg_cg_populated(fd) > 0; k++)
			usleep(10000);
		if ((r = mg_cg_remove(pl->basefd, sr.names[i])) < 0)
			mg_log_errno(LOG_WARNING, r, "remove stale run %s/%s/%s: %m", pl->mount, base,
			             sr.names[i]);
		else
			log_notice("removed stale cgroup %s/%s/%s: its launcher is gone%s", pl->mount, base,
			           sr.names[i], populated > 0 ? "; killed what still ran in it" : "");
	}
	free(sr.names);
}

/* Records who made the run, for reap_stale_runs() of a later launcher. */
static void record_launcher(struct mg_placement *pl, int procfd)
{
	uint64_t start;
	int r = mg_proc_start_time(procfd, getpid(), &start);

	if (r >= 0)
		r = mg_contract_set_launcher(pl->runfd, getpid(), start);
	if (r < 0)
		log_debug("record the launcher of %s: %s", pl->run, strerror(-r));
}

int mg_placement_setup(struct mg_placement *pl, int procfd, const struct mg_cgroup_mount *m,
                       const struct mg_config *cfg, const char *cgroup_parent, enum mg_place_how how,
                       char *why, size_t whysize)
{
	_cleanup_free_ char *self = NULL;
	char base[PATH_MAX];
	int r;

	if (!m->unified) {
		snprintf(why, whysize, "the memory controller is on cgroup v1 at %s, not on cgroup v2",
		         m->path);
		return -EOPNOTSUPP;
	}
	snprintf(pl->mount, sizeof(pl->mount), "%s", m->path);
	pl->mountfd = mg_cg_open(AT_FDCWD, pl->mount);
	if (pl->mountfd < 0)
		return reason(why, whysize, pl->mountfd, "open cgroup mount %s", pl->mount);

	if (cgroup_parent) {
		snprintf(base, sizeof(base), "%s", cgroup_parent + strspn(cgroup_parent, "/"));
	} else if (how == MG_PLACE_DAEMON) {
		r = ask_daemon(pl, NULL, base, sizeof(base), why, whysize);
		if (r <= 0)
			return r; /* a placed run, or no place at all */
	} else if (geteuid() == 0 && sd_booted() > 0 && how == MG_PLACE_ANY &&
	           (r = ask_daemon(pl, NULL, base, sizeof(base), why, whysize)) >= 0) {
		if (r == 0)
			return 0; /* a placed run, tethered to the job we came from */
	} else if (geteuid() == 0) {
		if (sd_booted() > 0)
			log_debug("writing cgroups under %s ourselves: %s", pl->mount, why);
		/* The mount root may hold processes and still enable controllers. */
		r = mg_cg_enable_controllers(pl->mountfd, pl->mount, CONTROLLERS, why, whysize);
		if (r < 0)
			return r;
		snprintf(base, sizeof(base), "%s", cfg->parent);
	} else {
		/* Any other user: only inside a subtree delegated to us. */
		r = mg_cg_pid_path(procfd, 0, &self);
		if (r < 0)
			return reason(why, whysize, r, "find our own cgroup in %s", "/proc/self/cgroup");
		const char *rel = self + strspn(self, "/");
		_cleanup_close_ int own = mg_cg_open(pl->mountfd, *rel ? rel : ".");
		if (own < 0)
			return reason(why, whysize, own, "open our cgroup %s", self);
		if (faccessat(own, "cgroup.subtree_control", W_OK, AT_EACCESS) < 0 ||
		    faccessat(own, "cgroup.procs", W_OK, AT_EACCESS) < 0) {
			char context[PATH_MAX + 64];
			snprintf(context, sizeof(context), "cgroup %s is not delegated to this user", self);
			if (how == MG_PLACE_OWN) {
				snprintf(why, whysize, "%s", context);
				return -EPERM;
			}
			r = ask_daemon(pl, context, base, sizeof(base), why, whysize);
			if (r <= 0)
				return r; /* a placed run, or no place at all */
		} else {
			r = vacate_into_leaf(own, self, why, whysize);
			if (r < 0)
				return r;
			snprintf(base, sizeof(base), "%s", *rel ? rel : ".");
		}
	}

	pl->basefd = open_parent(pl->mountfd, base, pl->mount, why, whysize);
	if (pl->basefd < 0)
		return pl->basefd;
	reap_stale_runs(pl, procfd, base);
	snprintf(pl->run_name, sizeof(pl->run_name), "run-%d", (int)getpid());
	snprintf(pl->run, sizeof(pl->run), "%s/%s", base, pl->run_name);
	pl->runfd = mg_cg_create(pl->basefd, pl->run_name);
	if (pl->runfd == -EEXIST) {
		/* A leftover of a crashed run with our pid: empty cgroups can go. */
		(void)mg_cg_remove(pl->basefd, pl->run_name);
		pl->runfd = mg_cg_create(pl->basefd, pl->run_name);
	}
	if (pl->runfd < 0)
		return reason(why, whysize, pl->runfd, "create cgroup %s", pl->run);
	record_launcher(pl, procfd);
	r = mg_cg_enable_controllers(pl->runfd, pl->run, CONTROLLERS, why, whysize);
	if (r < 0) {
		mg_placement_teardown(pl);
		return r;
	}
	/* Creating cgroups is not enough: the tasks must be allowed in. */
	if ((r = probe_run(pl, why, whysize)) < 0)
		mg_placement_teardown(pl);
	return r;
}

/* memory.swap.max exists only with swap accounting; without it there is nothing to limit. */
static int write_swap_max(int fd, const char *path, uint64_t bytes, char *err, size_t errsize)
{
	if (faccessat(fd, "memory.swap.max", F_OK, 0) < 0)
		return 0;
	return mg_cg_write_size(fd, path, "memory.swap.max", bytes, err, errsize);
}

int mg_placement_limit_run(struct mg_placement *pl, uint64_t max, uint64_t swap_max)
{
	char path[2 * PATH_MAX + 96], err[2 * PATH_MAX + 192];
	int r;

	/* memguardd set a placed run's memory.max, root's, from the job's limit. */
	if (pl->placed)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", pl->mount, pl->run);
	r = mg_cg_write_size(pl->runfd, path, "memory.max", max, err, sizeof(err));
	if (r >= 0)
		r = write_swap_max(pl->runfd, path, swap_max, err, sizeof(err));
	return r < 0 ? mg_log_errno(LOG_ERR, r, "%s", err) : r;
}

int mg_placement_task_create(struct mg_placement *pl, const char *name, const struct mg_task_limits *lim)
{
	char path[2 * PATH_MAX + 160], err[2 * PATH_MAX + 256];
	_cleanup_close_ int fd = -1;
	int r;

	snprintf(path, sizeof(path), "%s/%s/%s", pl->mount, pl->run, name);
	fd = mg_cg_create(pl->runfd, name);
	if (fd < 0)
		return mg_log_errno(LOG_ERR, fd, "create cgroup %s: %m", path);
	if ((r = mg_cg_write_size(fd, path, "memory.max", lim->max, err, sizeof(err))) < 0 ||
	    (lim->high && (r = mg_cg_write_size(fd, path, "memory.high", lim->high, err, sizeof(err))) < 0) ||
	    (r = write_swap_max(fd, path, lim->swap_max, err, sizeof(err))) < 0 ||
	    (lim->oom_group && (r = mg_cg_write(fd, path, "memory.oom.group", "1", err, sizeof(err))) < 0))
		return mg_log_errno(LOG_ERR, r, "%s", err);
	/* memguardd judges a task against its share; in the tree, it survives a daemon restart.
	 * As root, in a trusted xattr; otherwise a hint, which may only lower the share. */
	if (lim->share && (r = mg_contract_set_share(fd, lim->share)) < 0)
		log_debug("record the share of %s: %s", path, strerror(-r));
	return TAKE_FD(fd);
}

void mg_placement_teardown(struct mg_placement *pl)
{
	if (pl->runfd >= 0 && pl->placed) {
		/* memguardd removes a placed run once we are gone. */
		close(pl->runfd);
		pl->runfd = -1;
	} else if (pl->runfd >= 0) {
		close(pl->runfd);
		pl->runfd = -1;
		int r = mg_cg_remove(pl->basefd, pl->run_name);
		if (r < 0)
			mg_log_errno(LOG_WARNING, r, "remove cgroup %s/%s: %m", pl->mount, pl->run);
	}
	if (pl->basefd >= 0)
		close(pl->basefd);
	if (pl->mountfd >= 0)
		close(pl->mountfd);
	pl->basefd = pl->mountfd = -1;
}
