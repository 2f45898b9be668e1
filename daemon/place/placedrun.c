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
#include "place/watches.h"

#define REMOVE_RETRY_USEC 100000ull
#define REMOVE_TRIES 100
/* After REMOVE_TRIES, a cgroup that will not go is tried this often: the run
 * stays counted as long as its cgroup is there. */
#define REMOVE_SLOW_USEC (10 * 1000000ull)
/* A run needs memory for its tasks; pids where its parent gives it. */
#define CONTROLLERS "memory pids"
/* What an earlier memguardd's systemd backend named its scopes. */
#define SCOPE_PREFIX "memguard-"
/* How deep and how wide memguardd looks for another uid's process below a
 * cgroup (mg_runs_find_stranger): the user may nest their own cgroups in
 * their task cgroup or run without end, and a look cut short tells nothing. */
#define OWNER_CHECK_DEPTH 16
#define OWNER_CHECK_CGROUPS 1024
#define OWNER_CHECK_PIDS 4096
/* The watches a run holds for its user (watches.h): its tether's and its
 * directory's. */
#define RUN_WATCHES 2
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
	unsigned watches;   /* counted for uid in runs->watches */
	bool starting;      /* done not called yet */
	bool froze;         /* memguardd froze it, its tether being frozen (a suspended job) */
	bool abandoned;     /* failed to start: its cgroup is killed and removed (run_end) */
	bool ending;        /* run_end is under way */
	bool unsure;        /* may hold a process moved in by mistake: run_end looks first */
	bool stranger_told; /* run_end said it holds another user's process */

	mg_run_done_t done;
	void *userdata;
	sd_event_source *pid_src, *tether_src, *timer;
};

struct mg_runs {
	sd_event *event;
	int mountfd, procfd, registryfd, watch_fd;
	struct mg_watches *watches;
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

unsigned mg_runs_of_tether(const struct mg_runs *runs, const char *tether)
{
	unsigned n = 0;

	for (size_t i = 0; i < MG_RUNS_MAX; i++)
		n += runs->run[i] && strcmp(runs->run[i]->tether, tether) == 0;
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

struct owner_check {
	int procfd;
	uid_t uid;
	bool effective;
	pid_t stranger;
	unsigned depth, cgroups, pids;
};

static int stranger_pid(pid_t pid, void *userdata)
{
	struct owner_check *oc = userdata;
	uid_t real, effective;
	int r = ++oc->pids > OWNER_CHECK_PIDS ? -E2BIG : mg_proc_uids(oc->procfd, pid, &real, &effective);

	if (r == -ENOENT || r == -ESRCH)
		return 0; /* gone meanwhile */
	if (r < 0)
		return r;
	if (real == oc->uid && (!oc->effective || effective == oc->uid))
		return 0;
	oc->stranger = pid;
	return 1;
}

static int stranger_in(int cgfd, const char *name, void *userdata)
{
	struct owner_check *oc = userdata;
	int r = -E2BIG;

	(void)name;
	if (++oc->depth <= OWNER_CHECK_DEPTH && ++oc->cgroups <= OWNER_CHECK_CGROUPS &&
	    (r = mg_cg_for_each_pid(cgfd, stranger_pid, oc)) == 0)
		r = mg_cg_for_each_child(cgfd, stranger_in, oc);
	oc->depth--;
	return r == -ENOENT || r == -ENODEV ? 0 : r; /* a child removed meanwhile holds nobody */
}

int mg_runs_find_stranger(int procfd, int cgfd, uid_t uid, bool effective, pid_t *ret_pid)
{
	struct owner_check oc = {.procfd = procfd, .uid = uid, .effective = effective};
	int r = stranger_in(cgfd, "", &oc);

	if (r > 0)
		*ret_pid = oc.stranger;
	return r;
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
 * any (the caller's own limit was none: memguardd refuses callers with one),
 * and while memguardd stops (stopping): a memguardd that adopts the runs
 * sets it again. */
static void keep_caller(struct mg_runs *runs, const char *tether, bool stopping)
{
	uint64_t taken = 0, limit = MG_SIZE_UNLIMITED;
	uid_t uid = 0;
	char err[256] = "", a[MG_SIZE_STRLEN], b[MG_SIZE_STRLEN], c[MG_SIZE_STRLEN];

	for (size_t i = 0; i < MG_RUNS_MAX; i++) {
		const struct run *run = runs->run[i];
		if (!takes_from(run, tether))
			continue;
		taken = run->taken > UINT64_MAX - taken ? UINT64_MAX : taken + run->taken;
		limit = run->limit < limit ? run->limit : limit;
		uid = run->uid;
	}
	_cleanup_close_ int cg = mg_cg_open(runs->mountfd, tether);
	uint64_t current = 0;
	pid_t stranger = 0;
	if (cg >= 0)
		(void)mg_cg_read_u64(cg, "memory.current", &current);
	uint64_t keep = stopping ? MG_SIZE_UNLIMITED : mg_place_caller_limit(limit, taken, current);
	/* Never a limit on a cgroup that holds another uid's process (a setuid
	 * program the user started there since): none until the runs change. */
	int found = keep == MG_SIZE_UNLIMITED || cg < 0
	                    ? 0
	                    : mg_runs_find_stranger(runs->procfd, cg, uid, true, &stranger);
	if (found != 0) {
		if (found > 0)
			log_warn("cgroup %s holds pid %d of another uid than %u: memguardd sets no limit on "
			         "it",
			         tether, (int)stranger, (unsigned)uid);
		else
			mg_log_errno(LOG_WARNING, found,
			             "cgroup %s: whose are its processes: %m; memguardd sets no limit on it",
			             tether);
		keep = MG_SIZE_UNLIMITED;
	}
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
	else if (stopping)
		log_info("cgroup %s: memory.max max while no memguardd runs (the next one sets it again)",
		         tether);
	else if (found == 0)
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
		keep_caller(run->runs, run->tether, false);
	if (run->starting && run->done)
		run->done(run->userdata, -ECANCELED, NULL);
	if (run->name[0] && run->runs->registryfd >= 0)
		(void)unlinkat(run->runs->registryfd, run->name, 0);
	if (run->runs->watches)
		mg_watches_give(run->runs->watches, run->uid, run->watches);
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
static void run_end(struct run *run);

static int on_remove_retry(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct run *run = userdata;

	if (run->ending)
		run_end(run);
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

/* Kills what the run holds and removes it: a run that failed to start
 * (finish() may have moved the caller in, and the caller forked), or whose
 * launcher's grace period is over. Where a process may have been moved in by
 * mistake and not moved back (a run that failed to start, now or under an
 * earlier memguardd), nothing is killed while it holds another uid's process
 * (by real uid: a setuid program the user ran is still theirs), or while
 * that cannot be told: the run then stays, counted, and is looked at again
 * every REMOVE_SLOW_USEC. */
static void run_end(struct run *run)
{
	_cleanup_close_ int fd = mg_cg_open(run->runs->mountfd, run->path);
	pid_t stranger = 0;
	int r;

	run->ending = true;
	if (fd == -ENOENT) {
		log_info("placed run %s: its cgroup is gone", run->path);
		run_remove(run);
		return;
	}
	r = fd < 0        ? fd
	    : run->unsure ? mg_runs_find_stranger(run->runs->procfd, fd, run->uid, false, &stranger)
	                  : 0;
	if (r != 0) {
		if (r > 0 && !run->stranger_told)
			mg_log(LOG_CRIT, "placed run %s holds pid %d, which is not uid %u's: left as it is",
			       run->path, (int)stranger, (unsigned)run->uid);
		else if (r < 0 && !run->stranger_told)
			mg_log_errno(LOG_ERR, r, "placed run %s: whose are its processes: %m; left as it is",
			             run->path);
		run->stranger_told = true;
		if (arm(run, REMOVE_SLOW_USEC, on_remove_retry) < 0)
			run_free(run);
		return;
	}
	int populated = mg_cg_populated(fd);
	if ((r = mg_cg_kill(fd)) < 0 && r != -ENOENT)
		mg_log_errno(LOG_ERR, r, "kill what placed run %s holds: %m", run->path);
	else if (run->remove_tries == 0 && populated > 0)
		log_notice("placed run %s: killed what it held (%s)", run->path,
		           run->abandoned ? "it failed to start" : "after the grace period");
	run_remove(run);
}

static int on_grace_over(sd_event_source *src, uint64_t usec, void *userdata)
{
	run_end(userdata);
	return 0;
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
		run_end(run);
	return 0;
}

/* Freezes or thaws the run, as memguardd's own doing (run->froze). */
static int freeze_run(struct run *run, bool frozen)
{
	_cleanup_close_ int cg = mg_cg_open(run->runs->mountfd, run->path);
	int r = cg < 0 ? cg : mg_write_file_at(cg, "cgroup.freeze", frozen ? "1" : "0");

	if (r < 0 && r != -ENOENT)
		return mg_log_errno(LOG_WARNING, r, "%s placed run %s with its job: %m",
		                    frozen ? "freeze" : "thaw", run->path);
	run->froze = frozen;
	return 0;
}

/* The job is over: the launcher gets what a SIGTERM to memguard gives, then
 * two grace periods before everything goes. */
static void end_with_job(struct run *run)
{
	run->tether_src = sd_event_source_disable_unref(run->tether_src);
	if (run->froze)
		(void)freeze_run(run, false); /* the launcher must hear of it */
	if (run->pidfd < 0)
		return;
	int r = mg_pidfd_signal(run->pidfd, SIGTERM);
	if (r < 0 && r != -ESRCH)
		mg_log_errno(LOG_ERR, r, "signal the launcher of placed run %s: %m", run->path);
	if (arm(run, 2 * run->runs->grace_usec, on_grace_over) < 0)
		run_end(run);
}

/* A frozen tether (a suspended job: the batch system froze the job's task
 * cgroup or one above it) freezes the run, and thawed, thaws it: the run is
 * not below the tether, and its first process, stopped, relays nothing. */
static void follow_freeze(struct run *run, int tetherfd)
{
	uint64_t frozen = 0;
	int r = mg_cg_read_key(tetherfd, "cgroup.events", "frozen", &frozen);

	if (r < 0 || (frozen != 0) == run->froze || freeze_run(run, frozen != 0) < 0)
		return;
	log_info("placed run %s %s: cgroup %s is %s", run->path, frozen ? "frozen" : "thawed", run->tether,
	         frozen ? "frozen (its job is suspended)" : "thawed");
}

/* The caller's cgroup changed: frozen or thawed (follow_freeze), or
 * emptied: the launcher's first process and the job script are gone, so the
 * job step is over (scancel, the time limit, the batch system's kill). */
static int on_tether(sd_event_source *src, const struct inotify_event *ev, void *userdata)
{
	struct run *run = userdata;
	_cleanup_close_ int fd = mg_cg_open(run->runs->mountfd, run->tether);

	if (fd >= 0 && mg_cg_populated(fd) > 0) {
		follow_freeze(run, fd);
		return 0;
	}
	if (run->pidfd >= 0)
		log_notice("placed run %s: cgroup %s ended; telling its launcher (SIGTERM)", run->path,
		           run->tether);
	end_with_job(run);
	return 0;
}

/* Watches the run's tether: 0, or -errno when it cannot be watched (the run
 * is then refused, or ended as if its job had ended: never untethered).
 * A tether gone already means the job ended while no memguardd watched. */
static int watch_tether(struct run *run)
{
	char path[PATH_MAX + MG_RUN_PATH_MAX + 32];
	int r;

	if (run->tether_src)
		return 0;
	snprintf(path, sizeof(path), "%s/%s/cgroup.events", run->runs->mount, run->tether);
	r = sd_event_add_inotify(run->runs->event, &run->tether_src, path, IN_MODIFY, on_tether, run);
	if (r >= 0)
		r = sd_event_source_set_priority(run->tether_src, RUN_PRIORITY);
	if (r < 0)
		run->tether_src = sd_event_source_disable_unref(run->tether_src);
	return r;
}

/* Watches the launcher's pidfd and, for an adopted run, its tether. */
static void run_watch(struct run *run, bool adopted)
{
	int r;

	if (run->pidfd >= 0 && ((r = sd_event_add_io(run->runs->event, &run->pid_src, run->pidfd, EPOLLIN,
	                                             on_launcher_exit, run)) < 0 ||
	                        (r = sd_event_source_set_priority(run->pid_src, RUN_PRIORITY)) < 0))
		mg_log_errno(LOG_ERR, r, "watch the launcher of placed run %s: %m", run->path);
	if (!adopted)
		return;
	if ((r = watch_tether(run)) < 0) {
		if (r != -ENOENT)
			mg_log_errno(LOG_ERR, r,
			             "watch cgroup %s: %m; placed run %s ends as if its job had ended",
			             run->tether, run->path);
		end_with_job(run);
		return;
	}
	on_tether(run->tether_src, NULL, run); /* it may have ended, or frozen, meanwhile */
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

static int is_pid(pid_t pid, void *userdata)
{
	return pid == *(const pid_t *)userdata;
}

int mg_runs_move_back(int mountfd, int procfd, int leaf, pid_t pid, const struct mg_run_origin *before,
                      char *ret_where, size_t size)
{
	_cleanup_free_ char *where = NULL, *status = NULL;
	char num[32];
	uint64_t start = 0;
	int r;

	if ((r = mg_cg_for_each_pid(leaf, is_pid, &pid)) <= 0)
		return r; /* nothing was moved, or it went on already */
	if ((r = mg_proc_start_time(procfd, pid, &start)) < 0)
		return r == -ENOENT || r == -ESRCH ? 0 : r;
	if (before->path && start == before->start) {
		/* The same process was at the pid before the move: that is where it was. */
		if (!(where = strdup(before->path)))
			return -ENOMEM;
	} else {
		/* Born after: it started in its parent's cgroup (a fork starts there). */
		unsigned long ppid = 0;
		const char *field;
		char *end = NULL;
		snprintf(num, sizeof(num), "%d/status", (int)pid);
		if ((r = (int)mg_read_file_at(procfd, num, &status)) < 0)
			return r;
		if ((field = mg_status_field(status, "PPid")))
			ppid = strtoul(field, &end, 10);
		if (!field || end == field || (*end && *end != '\n') || ppid == 0 || ppid > INT32_MAX)
			return -ESRCH;
		if ((r = mg_cg_pid_path(procfd, (pid_t)ppid, &where)) < 0)
			return r;
	}
	const char *rel = where + strspn(where, "/");
	_cleanup_close_ int to = mg_cg_open(mountfd, *rel ? rel : ".");
	if (to < 0)
		return to;
	if ((r = mg_cg_move_pid(to, pid)) < 0)
		return r;
	snprintf(ret_where, size, "%s", *rel ? rel : "/");
	return 1;
}

/* With the run's cgroup made: the launcher goes into the supervisor leaf
 * (out of the way of the no-internal-processes rule), the run gets its
 * controllers and its user. The caller is moved by pid: when its pidfd says
 * it died meanwhile, the process moved may be another that took its pid
 * (a stranger), which goes back where it was. On failure, what failed is in
 * ret_what. */
static int finish(struct run *run, const char **ret_what)
{
	struct mg_runs *runs = run->runs;
	_cleanup_close_ int cg = mg_cg_open(runs->mountfd, run->path), leaf = -1;
	_cleanup_free_ char *origin = NULL;
	struct mg_run_origin before = {0};
	char err[256] = "", where[MG_RUN_PATH_MAX];
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
	/* Where the process at the caller's pid is now, and since when. */
	if (mg_cg_pid_path(runs->procfd, run->pid, &origin) == 0 &&
	    mg_proc_start_time(runs->procfd, run->pid, &before.start) == 0)
		before.path = origin;
	*ret_what = "move the caller into it";
	if ((r = mg_cg_move_pid(leaf, run->pid)) < 0)
		return r;
	/* Still the process we pinned: a pid recycled meanwhile would have moved a stranger. */
	if ((r = mg_pidfd_signal(run->pidfd, 0)) < 0) {
		*ret_what = "find the caller after the move";
		int moved = mg_runs_move_back(runs->mountfd, runs->procfd, leaf, run->pid, &before, where,
		                              sizeof(where));
		if (moved > 0)
			mg_log(LOG_CRIT,
			       "placed run %s: its caller, pid %d of uid %u, exited before the move, and pid "
			       "%d, "
			       "another process that took its pid, was moved in: moved back to %s",
			       run->path, (int)run->pid, (unsigned)run->uid, (int)run->pid, where);
		else if (moved < 0)
			mg_log_errno(
			        LOG_CRIT, moved,
			        "placed run %s: its caller, pid %d of uid %u, exited before the move, and "
			        "pid %d, another process that took its pid, was moved in; moving it back "
			        "failed: %m",
			        run->path, (int)run->pid, (unsigned)run->uid, (int)run->pid);
		return r;
	}
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
	return 0;
}

/* Root's word on the run, kept in the tree and the registry for the next
 * memguardd before anything moves: a run that fails to start is known to a
 * restarted memguardd too. */
static void record(struct run *run)
{
	_cleanup_close_ int cg = mg_cg_open(run->runs->mountfd, run->path);
	int r;

	if ((r = cg < 0 ? cg : mg_contract_set_launcher(cg, run->pid, run->start)) < 0)
		record_failed(run, "launcher", r);
	if (cg >= 0 && (r = mg_contract_set_tether(cg, run->tether)) < 0)
		record_failed(run, "tether", r);
	if (cg >= 0 && run->taken && (r = mg_contract_set_taken(cg, run->taken, run->limit)) < 0)
		record_failed(run, "taken", r);
	register_run(run);
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

/* The run's cgroup, parent/MG_PLACE_RUN_PREFIX<uid>-<n>. A parent that
 * cannot give its children the controllers is refused before anything
 * moves. On failure, why says what failed. */
static int create_run(struct run *run, const char *parent, char *why, size_t whysize)
{
	struct mg_runs *runs = run->runs;
	_cleanup_close_ int parentfd = mg_cg_open(runs->mountfd, parent), cg = -1;
	char name[64], err[256] = "";
	int r = parentfd;

	if (r < 0)
		goto fail;
	for (unsigned tries = 0; tries < 1000; tries++) {
		snprintf(name, sizeof(name), "%s%u-%u", MG_PLACE_RUN_PREFIX, (unsigned)run->uid, ++runs->seq);
		if ((cg = mg_cg_create(parentfd, name)) != -EEXIST)
			break;
	}
	if ((r = cg) < 0)
		goto fail;
	/* Its children get memory only where the parent hands it down: not ours to change. */
	int len = snprintf(run->path, sizeof(run->path), "%s/%s", parent, name);
	if ((r = mg_cg_has_controller(cg, "memory")) <= 0 || len >= (int)sizeof(run->path)) {
		if (r == 0)
			snprintf(err, sizeof(err), "cgroup %s gives its children no memory controller",
			         parent);
		r = r < 0 ? r : r == 0 ? -EOPNOTSUPP : -ENAMETOOLONG;
		(void)mg_cg_remove(parentfd, name);
		goto fail;
	}
	if ((r = take_pids_max(run, cg)) < 0) {
		(void)mg_cg_remove(parentfd, name);
		snprintf(err, sizeof(err), "cannot give it the pids.max of its tether");
	}
	if (r >= 0)
		return r;
fail:
	mg_log_errno(LOG_ERR, r, "make a cgroup for a run of uid %u in %s: %s%s%m", (unsigned)run->uid,
	             parent, err, err[0] ? ": " : "");
	snprintf(why, whysize, "cannot make a cgroup for the run in %s: %s%s%s", parent, err,
	         err[0] ? ": " : "", strerror(-r));
	return r;
}

int mg_runs_create(struct mg_runs *runs, const struct ucred *cred, int pidfd, const struct mg_run_spec *spec,
                   mg_run_done_t done, void *userdata, char *why, size_t whysize)
{
	struct run *run = run_new(runs);
	int r;

	if (!run) {
		close(pidfd);
		snprintf(why, whysize, "memguardd keeps %d runs already", MG_RUNS_MAX);
		return -ENOMEM;
	}
	run->uid = cred->uid;
	run->gid = cred->gid;
	run->pid = cred->pid;
	run->pidfd = pidfd;
	run->start = spec->start;
	snprintf(run->tether, sizeof(run->tether), "%s", spec->tether);
	if (runs->watches && !mg_watches_take(runs->watches, run->uid, RUN_WATCHES)) {
		snprintf(why, whysize,
		         "this user's runs and cgroups hold %u of memguardd's inotify watches already",
		         mg_watches_of(runs->watches, run->uid));
		run_free(run);
		return -ENOSPC;
	}
	run->watches = runs->watches ? RUN_WATCHES : 0;
	if ((r = create_run(run, spec->parent, why, whysize)) < 0) {
		run_free(run);
		return r;
	}
	/* A run inside a job with a limit takes a part of it. */
	if (spec->limit != MG_SIZE_UNLIMITED) {
		run->taken = spec->taken;
		run->limit = spec->limit;
	}
	/* Tethered before anything moves, or not made at all. */
	if ((r = watch_tether(run)) < 0) {
		mg_log_errno(LOG_ERR, r,
		             "watch cgroup %s, the tether of a run of uid %u: %m; the run is refused",
		             run->tether, (unsigned)run->uid);
		snprintf(why, whysize, "memguardd cannot watch cgroup %s, which the run would end with: %s",
		         run->tether, strerror(-r));
		(void)mg_cg_remove(runs->mountfd, run->path);
		run_free(run);
		return r;
	}
	record(run);
	const char *what;
	if ((r = finish(run, &what)) < 0) {
		mg_log_errno(LOG_ERR, r, "placed run %s for pid %d of uid %u failed to start: %s: %m",
		             run->path, (int)run->pid, (unsigned)run->uid, what);
		done(userdata, r, NULL);
		run->abandoned = run->unsure = true;
		run_end(run);
		return 0;
	}
	if (run->taken)
		keep_caller(runs, run->tether, false);
	done(userdata, 0, run->path);
	run_watch(run, false);
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
 * one; tether is the registry's word, or "" to read the record; uid is the
 * run's user (from the registry's name), or -1 for its directory's owner. */
static void adopt(struct mg_runs *runs, int fd, const char *path, const char *tether, const char *name,
                  long long uid)
{
	struct stat st;
	uint64_t now_start, frozen = 0;
	pid_t pid = 0;
	struct run *run;

	if (fstat(fd, &st) < 0 || !(run = run_new(runs)))
		return;
	snprintf(run->path, sizeof(run->path), "%s", path);
	snprintf(run->name, sizeof(run->name), "%s", name);
	run->uid = uid >= 0 ? (uid_t)uid : st.st_uid;
	if (runs->watches && mg_watches_take(runs->watches, run->uid, RUN_WATCHES))
		run->watches = RUN_WATCHES;
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
	/* Only memguardd writes a run's cgroup.freeze (it stays root's): frozen, it was us. */
	run->froze = mg_cg_read_u64(fd, "cgroup.freeze", &frozen) == 0 && frozen == 1;
	log_info("placed run %s: adopted (launcher %s)", run->path, run->pidfd >= 0 ? "running" : "gone");
	if (run->pidfd < 0) {
		run->unsure = true; /* it may be a run that failed to start */
		on_launcher_exit(NULL, -1, 0, run);
		return;
	}
	if (!run->tether[0]) {
		log_notice("placed run %s has no tether (an older memguardd's run below the root): it ends "
		           "as if "
		           "its job had ended",
		           run->path);
		end_with_job(run);
		return;
	}
	if (takes_from(run, run->tether))
		keep_caller(runs, run->tether, false);
	run_watch(run, true);
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
	adopt(as->runs, fd, path, "", "", -1);
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
		/* Its name is "<uid>-<memguardd's pid>-<n>". */
		uint64_t uid;
		char uid_text[16];
		snprintf(uid_text, sizeof(uid_text), "%.*s", (int)strcspn(de->d_name, "-"), de->d_name);
		if (fd >= 0 && mg_contract_get_launcher(fd, &pid, &start) == 0)
			adopt(runs, fd, text, tether, de->d_name,
			      mg_parse_u64(uid_text, &uid) == 0 && uid <= UINT32_MAX ? (long long)uid : -1);
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
	                         .watches = cfg->watches,
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
	/* No limit of memguardd's outlives it: the callers' cgroups get theirs
	 * back from the memguardd that adopts the runs. */
	for (size_t i = 0; i < MG_RUNS_MAX; i++) {
		if (!takes_from(runs->run[i], runs->run[i] ? runs->run[i]->tether : ""))
			continue;
		size_t first = 0;
		while (!takes_from(runs->run[first], runs->run[i]->tether))
			first++;
		if (first == i)
			keep_caller(runs, runs->run[i]->tether, true);
	}
	for (size_t i = 0; i < MG_RUNS_MAX; i++)
		if (runs->run[i]) {
			if (runs->run[i]->froze) /* the next memguardd freezes it again if its job is */
				(void)freeze_run(runs->run[i], false);
			runs->run[i]->starting = false; /* no callbacks into a service going away */
			runs->run[i]->name[0] = '\0';   /* its registry entry is for the next memguardd */
			runs->run[i]->taken = 0;        /* its caller's limit was lifted above */
			run_free(runs->run[i]);
		}
	if (runs->registryfd >= 0)
		close(runs->registryfd);
	sd_event_unref(runs->event);
	free(runs);
}
