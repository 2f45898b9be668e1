/* The placed runs' lives: made inside their caller's cgroup, tethered, removed. */
#include "place/placedrun.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/contract.h"
#include "memguard/log.h"
#include "memguard/procstat.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "place/place.h"

#define REMOVE_RETRY_USEC 100000ull
#define REMOVE_TRIES 100
/* After REMOVE_TRIES, a cgroup that will not go is tried this often: the run
 * stays counted as long as its cgroup is there. */
#define REMOVE_SLOW_USEC (10 * 1000000ull)
/* A run needs memory for its tasks; pids where its parent gives it. */
#define CONTROLLERS "memory pids"
/* What an earlier memguardd's systemd backend named its scopes. */
#define SCOPE_PREFIX "memguard-"
/* How deep run_abandon looks for another user's process in a failed run: the
 * user never had the run delegated, so it holds at most the supervisor leaf. */
#define OWNER_CHECK_DEPTH 16
/* Below the pressure sources (priority 0): a run's life never delays a kill. */
#define RUN_PRIORITY 10

struct run {
	struct mg_runs *runs;
	char path[MG_RUN_PATH_MAX];   /* below the mount */
	char tether[MG_RUN_PATH_MAX]; /* its caller's cgroup, "" for none */
	char name[64];                /* its registry file's */
	uid_t uid;
	gid_t gid;
	pid_t pid;
	int pidfd; /* the launcher's; -1 once it is gone */
	uint64_t start;
	uint64_t taken, limit; /* out of the job's limit, for the caller's cgroup (keep_caller) */
	unsigned remove_tries;
	bool starting;      /* done not called yet */
	bool abandoned;     /* failed to start: its cgroup is killed and removed (run_abandon) */
	bool stranger_told; /* run_abandon said it holds another user's process */

	mg_run_done_t done;
	void *userdata;
	sd_event_source *pid_src, *tether_src, *timer;
};

struct mg_runs {
	sd_event *event;
	int mountfd, procfd, registryfd, watch_fd;
	char mount[PATH_MAX];
	uint64_t grace_usec;
	unsigned seq;
	struct run *run[MG_RUNS_MAX];
};

unsigned mg_runs_of_uid(const struct mg_runs *runs, uid_t uid)
{
	unsigned n = 0;

	for (size_t i = 0; i < MG_RUNS_MAX; i++)
		n += runs->run[i] && runs->run[i]->uid == uid;
	return n;
}

size_t mg_runs_paths(const struct mg_runs *runs, const char **ret, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < MG_RUNS_MAX && n < max; i++)
		if (runs->run[i] && !runs->run[i]->starting)
			ret[n++] = runs->run[i]->path;
	return n;
}

void mg_runs_set_grace(struct mg_runs *runs, uint64_t grace_usec)
{
	runs->grace_usec = grace_usec;
}

static struct run *run_new(struct mg_runs *runs)
{
	for (size_t i = 0; i < MG_RUNS_MAX; i++) {
		if (runs->run[i])
			continue;
		struct run *run = calloc(1, sizeof(*run));
		if (run)
			*run = (struct run){.runs = runs, .pidfd = -1};
		return runs->run[i] = run;
	}
	return NULL;
}

/* The runs beside the cgroup at tether that take a part of the job's limit. */
static bool takes_from(const struct run *run, const char *tether)
{
	return run && !run->abandoned && run->taken && run->limit != MG_SIZE_UNLIMITED &&
	       strcmp(run->tether, tether) == 0;
}

bool mg_runs_keep_caller(const struct mg_runs *runs, const char *path)
{
	for (size_t i = 0; i < MG_RUNS_MAX; i++)
		if (takes_from(runs->run[i], path))
			return true;
	return false;
}

/* The caller's cgroup at tether keeps what the runs beside it leave of the
 * job's limit: when the job's own processes grow, the kernel stops them
 * there, not a run's task at the job's limit. "max" again once no run takes
 * any (the caller's own limit was none: memguardd refuses callers with one). */
static void keep_caller(struct mg_runs *runs, const char *tether)
{
	uint64_t taken = 0, limit = MG_SIZE_UNLIMITED;
	char err[256] = "", a[MG_SIZE_STRLEN], b[MG_SIZE_STRLEN], c[MG_SIZE_STRLEN];

	for (size_t i = 0; i < MG_RUNS_MAX; i++) {
		const struct run *run = runs->run[i];
		if (!takes_from(run, tether))
			continue;
		taken = run->taken > UINT64_MAX - taken ? UINT64_MAX : taken + run->taken;
		limit = run->limit < limit ? run->limit : limit;
	}
	_cleanup_close_ int cg = mg_cg_open(runs->mountfd, tether);
	uint64_t current = 0;
	if (cg >= 0)
		(void)mg_cg_read_u64(cg, "memory.current", &current);
	uint64_t keep = mg_place_caller_limit(limit, taken, current);
	/* For the launcher of another run from there, which may be reading the
	 * chain now: the record is there whenever the limit is, so it always
	 * looks past a limit of ours to the job's (set before, cleared after). */
	int r = cg < 0 || keep == MG_SIZE_UNLIMITED ? cg : mg_contract_set_keeps(cg, keep);
	if (r >= 0)
		r = mg_cg_write_size(cg, tether, "memory.max", keep, err, sizeof(err));
	else if (r != -ENOENT)
		snprintf(err, sizeof(err), "its record %s", MG_XATTR_KEEPS);
	if (r >= 0 && keep == MG_SIZE_UNLIMITED && (r = mg_contract_clear_keeps(cg)) < 0)
		snprintf(err, sizeof(err), "its record %s", MG_XATTR_KEEPS);
	if (r == -ENOENT)
		return; /* the job is over */
	if (r < 0)
		mg_log_errno(LOG_WARNING, r,
		             "keep the job's own processes in %s within what its runs leave: %s%s%m", tether,
		             err, err[0] ? ": " : "");
	else if (keep != MG_SIZE_UNLIMITED)
		log_info("cgroup %s keeps %s for the job's own processes: the runs beside it take %s of %s",
		         tether, mg_size_format(keep, a), mg_size_format(taken, b), mg_size_format(limit, c));
	else
		log_info("cgroup %s: no run beside it takes a part of the job any more (memory.max max)",
		         tether);
}

static void run_free(struct run *run)
{
	bool took = takes_from(run, run->tether);

	for (size_t i = 0; i < MG_RUNS_MAX; i++)
		if (run->runs->run[i] == run)
			run->runs->run[i] = NULL;
	if (took)
		keep_caller(run->runs, run->tether);
	if (run->starting && run->done)
		run->done(run->userdata, -ECANCELED, NULL);
	if (run->name[0] && run->runs->registryfd >= 0)
		(void)unlinkat(run->runs->registryfd, run->name, 0);
	sd_event_source_disable_unref(run->pid_src);
	sd_event_source_disable_unref(run->tether_src);
	sd_event_source_disable_unref(run->timer);
	if (run->pidfd >= 0)
		close(run->pidfd);
	free(run);
}

/* (Re)arms the run's one timer with cb: waiting for systemd, the grace
 * period, removal retries. */
static int arm(struct run *run, uint64_t usec, sd_event_time_handler_t cb)
{
	run->timer = sd_event_source_disable_unref(run->timer);
	int r = sd_event_add_time_relative(run->runs->event, &run->timer, CLOCK_MONOTONIC, usec, 10000, cb,
	                                   run);
	return r < 0 ? r : sd_event_source_set_priority(run->timer, RUN_PRIORITY);
}

static int run_remove(struct run *run);
static void run_abandon(struct run *run);

static int on_remove_retry(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct run *run = userdata;

	if (run->abandoned)
		run_abandon(run);
	else
		run_remove(run);
	return 0;
}

/* Removes the run's cgroups once they are empty, retrying after a kill,
 * and forgets the run only when they are gone: a run that is still there
 * still counts, and the batch system's own cleanup finds them gone. */
static int run_remove(struct run *run)
{
	int r = mg_cg_remove(run->runs->mountfd, run->path);

	if (r < 0) {
		if (++run->remove_tries == REMOVE_TRIES)
			mg_log_errno(LOG_WARNING, r, "remove placed run %s: %m; trying again every %llu s",
			             run->path, REMOVE_SLOW_USEC / 1000000);
		r = arm(run, run->remove_tries < REMOVE_TRIES ? REMOVE_RETRY_USEC : REMOVE_SLOW_USEC,
		        on_remove_retry);
		if (r >= 0)
			return 0;
	}
	if (r < 0)
		mg_log_errno(LOG_ERR, r, "remove placed run %s/%s: %m", run->runs->mount, run->path);
	else
		log_info("placed run %s removed", run->path);
	run_free(run);
	return r;
}

static int on_grace_over(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct run *run = userdata;
	_cleanup_close_ int fd = mg_cg_open(run->runs->mountfd, run->path);
	int r = fd < 0 ? fd : mg_cg_kill(fd);

	if (r < 0 && r != -ENOENT)
		mg_log_errno(LOG_ERR, r, "kill what is left of placed run %s: %m", run->path);
	else
		log_notice("placed run %s: killed what was left after the grace period", run->path);
	return run_remove(run), 0;
}

/* The launcher is gone: its tasks may finish their grace period, then go. */
static int on_launcher_exit(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct run *run = userdata;
	_cleanup_close_ int cg = mg_cg_open(run->runs->mountfd, run->path);
	int populated = cg < 0 ? 0 : mg_cg_populated(cg);

	run->pid_src = sd_event_source_disable_unref(run->pid_src);
	if (run->pidfd >= 0)
		close(run->pidfd);
	run->pidfd = -1;
	if (populated <= 0) {
		log_info("placed run %s: its launcher is gone; nothing is left", run->path);
		return run_remove(run), 0;
	}
	log_notice("placed run %s: its launcher is gone; what is left is killed in %" PRIu64 " s", run->path,
	           run->runs->grace_usec / 1000000);
	if (arm(run, run->runs->grace_usec, on_grace_over) < 0)
		on_grace_over(NULL, 0, run);
	return 0;
}

/* The caller's cgroup emptied: the launcher's first process and the job
 * script are gone, so the job step is over (scancel, the time limit, the
 * batch system's kill). The launcher gets what a SIGTERM to memguard gives,
 * then two grace periods before everything goes. */
static int on_tether(sd_event_source *src, const struct inotify_event *ev, void *userdata)
{
	struct run *run = userdata;
	_cleanup_close_ int fd = mg_cg_open(run->runs->mountfd, run->tether);

	if (fd >= 0 && mg_cg_populated(fd) > 0)
		return 0;
	run->tether_src = sd_event_source_disable_unref(run->tether_src);
	if (run->pidfd < 0)
		return 0;
	log_notice("placed run %s: cgroup %s ended; telling its launcher (SIGTERM)", run->path, run->tether);
	int r = mg_pidfd_signal(run->pidfd, SIGTERM);
	if (r < 0 && r != -ESRCH)
		mg_log_errno(LOG_ERR, r, "signal the launcher of placed run %s: %m", run->path);
	if (arm(run, 2 * run->runs->grace_usec, on_grace_over) < 0)
		on_grace_over(NULL, 0, run);
	return 0;
}

static void watch_tether(struct run *run)
{
	char path[PATH_MAX + MG_RUN_PATH_MAX + 32];
	int r;

	if (!run->tether[0] || run->tether_src)
		return;
	snprintf(path, sizeof(path), "%s/%s/cgroup.events", run->runs->mount, run->tether);
	r = sd_event_add_inotify(run->runs->event, &run->tether_src, path, IN_MODIFY, on_tether, run);
	if (r >= 0)
		r = sd_event_source_set_priority(run->tether_src, RUN_PRIORITY);
	if (r == -ENOENT) {
		/* Gone already (the job ended while no memguardd watched): so is the job. */
		on_tether(NULL, NULL, run);
		return;
	}
	if (r < 0) {
		mg_log_errno(LOG_WARNING, r, "watch %s: %m; placed run %s is not tethered", path, run->path);
		run->tether_src = sd_event_source_disable_unref(run->tether_src);
		return;
	}
	on_tether(run->tether_src, NULL, run); /* it may have ended already */
}

static void run_watch(struct run *run)
{
	int r;

	if (run->pidfd >= 0 && ((r = sd_event_add_io(run->runs->event, &run->pid_src, run->pidfd, EPOLLIN,
	                                             on_launcher_exit, run)) < 0 ||
	                        (r = sd_event_source_set_priority(run->pid_src, RUN_PRIORITY)) < 0))
		mg_log_errno(LOG_ERR, r, "watch the launcher of placed run %s: %m", run->path);
	watch_tether(run);
}

/* Gives a cgroup to uid as systemd's Delegate=yes does: the directory and the
 * files that let it manage its own subtree; the limits stay root's. */
static int delegate(int cgfd, uid_t uid, gid_t gid)
{
	static const char *const files[] = {"cgroup.procs", "cgroup.threads", "cgroup.subtree_control"};

	if (fchownat(cgfd, "", uid, gid, AT_EMPTY_PATH) < 0)
		return -errno;
	for (size_t i = 0; i < MG_ARRAY_SIZE(files); i++)
		if (fchownat(cgfd, files[i], uid, gid, 0) < 0)
			return -errno;
	return 0;
}

static void record_failed(const struct run *run, const char *what, int r)
{
	mg_log_errno(LOG_WARNING, r,
	             "record the %s of placed run %s: %m: a restarted memguardd will not know it", what,
	             run->path);
}

static int write_new_file_at(int dirfd, const char *name, const char *text)
{
	_cleanup_close_ int fd =
	        openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, len);
	if (n < 0 || (size_t)n != len) {
		int r = n < 0 ? -errno : -EIO;
		(void)unlinkat(dirfd, name, 0);
		return r;
	}
	return 0;
}

/* The registry's file for the run: its cgroup, then its tether. */
static void register_run(struct run *run)
{
	struct mg_runs *runs = run->runs;
	char text[2 * MG_RUN_PATH_MAX + 4];
	int r;

	snprintf(text, sizeof(text), "%s\n%s\n", run->path, run->tether);
	snprintf(run->name, sizeof(run->name), "%u-%d-%u", (unsigned)run->uid, (int)getpid(), runs->seq);
	r = runs->registryfd < 0 ? runs->registryfd : write_new_file_at(runs->registryfd, run->name, text);
	if (r < 0) {
		record_failed(run, "registry entry", r);
		run->name[0] = '\0';
	}
}

/* With the run's cgroup made: the launcher goes into the supervisor leaf
 * (out of the way of the no-internal-processes rule), the run gets its
 * controllers, its user, its records and its watches. On failure, what
 * failed is in ret_what. */
static int finish(struct run *run, const char **ret_what)
{
	struct mg_runs *runs = run->runs;
	_cleanup_close_ int cg = mg_cg_open(runs->mountfd, run->path), leaf = -1;
	char err[256] = "";
	int r;

	*ret_what = "open its cgroup";
	if (cg < 0)
		return cg;
	*ret_what = "make its " MG_PLACE_SUPERVISOR_LEAF " leaf";
	leaf = mg_cg_open(cg, MG_PLACE_SUPERVISOR_LEAF);
	if (leaf == -ENOENT)
		leaf = mg_cg_create(cg, MG_PLACE_SUPERVISOR_LEAF);
	if (leaf < 0)
		return leaf;
	*ret_what = "move the caller into it";
	if ((r = mg_cg_move_pid(leaf, run->pid)) < 0)
		return r;
	/* Still the process we pinned: a pid recycled meanwhile would have moved a stranger. */
	*ret_what = "find the caller after the move";
	if ((r = mg_pidfd_signal(run->pidfd, 0)) < 0)
		return r;
	*ret_what = "enable its controllers";
	if ((r = mg_cg_enable_controllers(cg, run->path,
	                                  mg_cg_has_controller(cg, "pids") > 0 ? CONTROLLERS : "memory", err,
	                                  sizeof(err))) < 0) {
		log_err("placed run %s: %s", run->path, err);
		return r;
	}
	*ret_what = "delegate it";
	if ((r = delegate(cg, run->uid, run->gid)) < 0 || (r = delegate(leaf, run->uid, run->gid)) < 0)
		return r;
	/* Root's word on the run, kept in the tree and the registry for the next memguardd. */
	if ((r = mg_contract_set_launcher(cg, run->pid, run->start)) < 0)
		record_failed(run, "launcher", r);
	if (run->tether[0] && (r = mg_contract_set_tether(cg, run->tether)) < 0)
		record_failed(run, "tether", r);
	register_run(run);
	return 0;
}

struct owner_check {
	const struct run *run;
	pid_t stranger;
	unsigned depth;
};

static int stranger_pid(pid_t pid, void *userdata)
{
	struct owner_check *oc = userdata;
	uid_t real, effective;
	int r = mg_proc_uids(oc->run->runs->procfd, pid, &real, &effective);

	if (r == -ENOENT || r == -ESRCH)
		return 0; /* gone meanwhile */
	if (r < 0 || real == oc->run->uid)
		return r;
	oc->stranger = pid;
	return 1;
}

/* 1 with oc->stranger when a process in cgfd's subtree is not the run's
 * user's (by real uid: a setuid program the user ran is still theirs), 0
 * when none is, -errno when that cannot be told. */
static int stranger_in(int cgfd, const char *name, void *userdata)
{
	struct owner_check *oc = userdata;
	int r = -ELOOP;

	(void)name;
	if (++oc->depth <= OWNER_CHECK_DEPTH && (r = mg_cg_for_each_pid(cgfd, stranger_pid, oc)) == 0)
		r = mg_cg_for_each_child(cgfd, stranger_in, oc);
	oc->depth--;
	return r;
}

/* A run that could not be made may hold processes all the same: finish()
 * moved the caller into the leaf, and the caller forked before it went or
 * failed. What the cgroup holds is killed, and the run stays counted until
 * the cgroup is gone. Nothing is killed while the cgroup holds another
 * user's process: the caller is moved by pid, and a pid recycled before the
 * move would have put a stranger there. */
static void run_abandon(struct run *run)
{
	_cleanup_close_ int fd = mg_cg_open(run->runs->mountfd, run->path);
	struct owner_check oc = {.run = run};
	int r;

	run->abandoned = true;
	if (fd == -ENOENT) {
		log_info("placed run %s: its cgroup is gone", run->path);
		run_remove(run);
		return;
	}
	r = fd < 0 ? fd : stranger_in(fd, run->path, &oc);
	if (r != 0) {
		if (r > 0 && !run->stranger_told)
			mg_log(LOG_CRIT,
			       "placed run %s failed to start and holds pid %d, which is not uid %u's: "
			       "left as it is",
			       run->path, (int)oc.stranger, (unsigned)run->uid);
		else if (r < 0 && !run->stranger_told)
			mg_log_errno(LOG_ERR, r, "placed run %s failed to start; whose are its processes: %m",
			             run->path);
		run->stranger_told = true;
		if (arm(run, REMOVE_SLOW_USEC, on_remove_retry) < 0)
			run_free(run);
		return;
	}
	if ((r = mg_cg_kill(fd)) < 0 && r != -ENOENT)
		mg_log_errno(LOG_ERR, r, "kill what placed run %s holds: %m", run->path);
	else if (run->remove_tries == 0)
		log_notice("placed run %s failed to start: killed what it held", run->path);
	run_remove(run);
}

/* The caller's cgroup's pids.max (systemd sets one on every unit) goes with
 * the run, which is beside that cgroup and not below it. */
static int take_pids_max(struct run *run, int cg)
{
	_cleanup_close_ int from = run->tether[0] ? mg_cg_open(run->runs->mountfd, run->tether) : -ENOENT;
	char value[32], err[256] = "";
	ssize_t n;
	int r;

	if (from < 0 || (n = mg_read_small_at(from, "pids.max", value, sizeof(value))) <= 0 ||
	    faccessat(cg, "pids.max", F_OK, 0) < 0)
		return 0; /* no limit there, or none to set here */
	value[strcspn(value, "\n")] = '\0';
	if (strcmp(value, "max") == 0 ||
	    (r = mg_cg_write(cg, run->path, "pids.max", value, err, sizeof(err))) >= 0)
		return 0;
	mg_log_errno(LOG_ERR, r, "placed run %s: %s: %m", run->path, err);
	return r;
}

/* The run's cgroup: parent/MG_PLACE_RUN_PREFIX<uid>-<n>, or for a caller in
 * the root cgroup MG_PLACE_RUNS_PARENT/MG_PLACE_ROOT_RUN_PREFIX<uid>-<n>.
 * A parent that cannot give its children the controllers is refused before
 * anything moves. */
static int create_run(struct run *run, const char *parent)
{
	struct mg_runs *runs = run->runs;
	_cleanup_close_ int parentfd = -1, cg = -1;
	char name[64], err[256] = "";
	const char *where = parent[0] ? parent : MG_PLACE_RUNS_PARENT;
	int r;

	if (!parent[0]) {
		if ((r = mg_cg_enable_controllers(runs->mountfd, runs->mount, CONTROLLERS, err,
		                                  sizeof(err))) < 0)
			goto fail;
		parentfd = mg_cg_open(runs->mountfd, MG_PLACE_RUNS_PARENT);
		if (parentfd == -ENOENT)
			parentfd = mg_cg_create(runs->mountfd, MG_PLACE_RUNS_PARENT);
		if ((r = parentfd) < 0 || (r = mg_cg_enable_controllers(parentfd, MG_PLACE_RUNS_PARENT,
		                                                        CONTROLLERS, err, sizeof(err))) < 0)
			goto fail;
	} else {
		parentfd = mg_cg_open(runs->mountfd, parent);
		if ((r = parentfd) < 0)
			goto fail;
	}
	for (unsigned tries = 0; tries < 1000; tries++) {
		snprintf(name, sizeof(name), "%s%u-%u",
		         parent[0] ? MG_PLACE_RUN_PREFIX : MG_PLACE_ROOT_RUN_PREFIX, (unsigned)run->uid,
		         ++runs->seq);
		if ((cg = mg_cg_create(parentfd, name)) != -EEXIST)
			break;
	}
	if ((r = cg) < 0)
		goto fail;
	/* Its children get memory only where the parent hands it down: not ours to change. */
	int len = snprintf(run->path, sizeof(run->path), "%s/%s", where, name);
	if ((r = mg_cg_has_controller(cg, "memory")) <= 0 || len >= (int)sizeof(run->path)) {
		if (r == 0)
			snprintf(err, sizeof(err), "cgroup %s gives its children no memory controller",
			         where);
		r = r < 0 ? r : r == 0 ? -EOPNOTSUPP : -ENAMETOOLONG;
		(void)mg_cg_remove(parentfd, name);
		goto fail;
	}
	if ((r = take_pids_max(run, cg)) < 0)
		(void)mg_cg_remove(parentfd, name);
	return r;
fail:
	mg_log_errno(LOG_ERR, r, "make a cgroup for a run of uid %u in %s: %s%s%m", (unsigned)run->uid, where,
	             err, err[0] ? ": " : "");
	return r;
}

int mg_runs_create(struct mg_runs *runs, const struct ucred *cred, int pidfd, const struct mg_run_spec *spec,
                   mg_run_done_t done, void *userdata)
{
	struct run *run = run_new(runs);
	int r;

	if (!run) {
		close(pidfd);
		return -ENOMEM;
	}
	run->uid = cred->uid;
	run->gid = cred->gid;
	run->pid = cred->pid;
	run->pidfd = pidfd;
	run->start = spec->start;
	snprintf(run->tether, sizeof(run->tether), "%s", spec->tether);
	if ((r = create_run(run, spec->parent)) < 0) {
		run_free(run);
		return r;
	}
	/* Only a run beside its caller, inside a job with a limit, takes a part of it. */
	if (spec->parent[0] && spec->tether[0] && spec->limit != MG_SIZE_UNLIMITED) {
		run->taken = spec->taken;
		run->limit = spec->limit;
	}
	const char *what;
	if ((r = finish(run, &what)) < 0) {
		mg_log_errno(LOG_ERR, r, "placed run %s for pid %d of uid %u failed to start: %s: %m",
		             run->path, (int)run->pid, (unsigned)run->uid, what);
		done(userdata, r, NULL);
		run_abandon(run);
		return 0;
	}
	if (run->taken) {
		_cleanup_close_ int cg = mg_cg_open(runs->mountfd, run->path);
		if ((r = cg < 0 ? cg : mg_contract_set_taken(cg, run->taken, run->limit)) < 0)
			record_failed(run, "taken", r);
		keep_caller(runs, run->tether);
	}
	done(userdata, 0, run->path);
	run_watch(run);
	/* The guard hears of the tasks' cgroups as the launcher makes them. */
	char dir[PATH_MAX + MG_RUN_PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/%s", runs->mount, run->path);
	if (runs->watch_fd >= 0 &&
	    inotify_add_watch(runs->watch_fd, dir, IN_CREATE | IN_DELETE | IN_ONLYDIR) < 0)
		mg_log_errno(LOG_WARNING, -errno, "watch %s: %m; its tasks are guarded from the next rescan",
		             dir);
	return 0;
}

/* A placed run a previous memguardd left at path: watch it again, or end it
 * when its launcher is gone. Only a cgroup with root's launcher record is
 * one; tether is the registry's word, or "" to read the record. */
static void adopt(struct mg_runs *runs, int fd, const char *path, const char *tether, const char *name)
{
	struct stat st;
	uint64_t now_start;
	pid_t pid = 0;
	struct run *run;

	if (fstat(fd, &st) < 0 || !(run = run_new(runs)))
		return;
	snprintf(run->path, sizeof(run->path), "%s", path);
	snprintf(run->name, sizeof(run->name), "%s", name);
	run->uid = st.st_uid;
	if (mg_contract_get_launcher(fd, &pid, &run->start) == 0) {
		run->pid = pid;
		run->pidfd = mg_pidfd_open(pid);
		/* The same process only if it started when the launcher did. */
		if (run->pidfd >= 0 &&
		    (mg_proc_start_time(runs->procfd, pid, &now_start) < 0 || now_start != run->start)) {
			close(run->pidfd);
			run->pidfd = -1;
		}
	}
	if (tether[0])
		snprintf(run->tether, sizeof(run->tether), "%s", tether);
	else
		(void)mg_contract_get_tether(fd, run->tether, sizeof(run->tether));
	if (run->tether[0] && mg_contract_get_taken(fd, &run->taken, &run->limit) < 0)
		run->taken = 0;
	log_info("placed run %s: adopted (launcher %s)", run->path, run->pidfd >= 0 ? "running" : "gone");
	if (run->pidfd < 0) {
		on_launcher_exit(NULL, -1, 0, run);
	} else {
		run_watch(run);
		if (takes_from(run, run->tether))
			keep_caller(runs, run->tether);
	}
}

struct adopt_scan {
	struct mg_runs *runs;
	const char *parent, *prefix;
};

/* A run of the old places: MG_PLACE_RUNS_PARENT and an earlier memguardd's scopes. */
static int adopt_old(int fd, const char *name, void *userdata)
{
	const struct adopt_scan *as = userdata;
	char path[MG_RUN_PATH_MAX];

	if (strncmp(name, as->prefix, strlen(as->prefix)) != 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", as->parent, name);
	/* A run below the root is in the registry too: adopted once. */
	for (size_t i = 0; i < MG_RUNS_MAX; i++)
		if (as->runs->run[i] && strcmp(as->runs->run[i]->path, path) == 0)
			return 0;
	adopt(as->runs, fd, path, "", "");
	return 0;
}

/* The registry's runs: each file names a run's cgroup and its tether. */
static void adopt_registered(struct mg_runs *runs)
{
	_cleanup_close_ int dirfd = fcntl(runs->registryfd, F_DUPFD_CLOEXEC, 3);
	DIR *dir = dirfd >= 0 ? fdopendir(dirfd) : NULL;
	struct dirent *de;

	if (!dir)
		return;
	dirfd = -1; /* closedir closes it */
	while ((de = readdir(dir))) {
		char text[2 * MG_RUN_PATH_MAX + 4];
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(((struct run *)0)->name) ||
		    mg_read_small_at(runs->registryfd, de->d_name, text, sizeof(text)) <= 0)
			continue;
		char *tether = strchr(text, '\n');
		if (!tether)
			continue;
		*tether++ = '\0';
		tether[strcspn(tether, "\n")] = '\0';
		_cleanup_close_ int fd = mg_cg_open(runs->mountfd, text);
		pid_t pid;
		uint64_t start;
		if (fd >= 0 && mg_contract_get_launcher(fd, &pid, &start) == 0)
			adopt(runs, fd, text, tether, de->d_name);
		else
			(void)unlinkat(runs->registryfd, de->d_name, 0);
	}
	closedir(dir);
}

int mg_runs_new(const struct mg_runs_config *cfg, struct mg_runs **ret)
{
	struct mg_runs *runs = calloc(1, sizeof(*runs));

	if (!runs)
		return -ENOMEM;
	*runs = (struct mg_runs){.event = sd_event_ref(cfg->event),
	                         .mountfd = cfg->mountfd,
	                         .procfd = cfg->procfd,
	                         .registryfd = -1,
	                         .watch_fd = cfg->watch_fd,
	                         .grace_usec = cfg->grace_usec};
	snprintf(runs->mount, sizeof(runs->mount), "%s", cfg->mount);
	if (mkdir(cfg->registry, 0700) < 0 && errno != EEXIST)
		mg_log_errno(LOG_WARNING, -errno, "make %s: %m; a restarted memguardd will not find the runs",
		             cfg->registry);
	runs->registryfd = open(cfg->registry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (runs->registryfd < 0)
		mg_log_errno(LOG_WARNING, -errno, "open %s: %m; a restarted memguardd will not find the runs",
		             cfg->registry);
	else
		adopt_registered(runs);
	static const struct {
		const char *parent, *prefix;
	} places[] = {{MG_PLACE_RUNS_PARENT, MG_PLACE_ROOT_RUN_PREFIX},
	              {MG_PLACE_SLICE, SCOPE_PREFIX MG_PLACE_ROOT_RUN_PREFIX}};
	for (size_t i = 0; i < MG_ARRAY_SIZE(places); i++) {
		struct adopt_scan as = {.runs = runs, .parent = places[i].parent, .prefix = places[i].prefix};
		_cleanup_close_ int parent = mg_cg_open(cfg->mountfd, places[i].parent);
		if (parent >= 0)
			(void)mg_cg_for_each_child(parent, adopt_old, &as);
	}
	*ret = runs;
	return 0;
}

void mg_runs_free(struct mg_runs *runs)
{
	if (!runs)
		return;
	for (size_t i = 0; i < MG_RUNS_MAX; i++)
		if (runs->run[i]) {
			runs->run[i]->starting = false; /* no callbacks into a service going away */
			runs->run[i]->name[0] = '\0';   /* its registry entry is for the next memguardd */
			runs->run[i]->taken = 0;        /* and its caller's limit, which it adopts */
			run_free(runs->run[i]);
		}
	if (runs->registryfd >= 0)
		close(runs->registryfd);
	sd_event_unref(runs->event);
	free(runs);
}
