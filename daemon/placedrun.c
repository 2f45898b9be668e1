/* The placed runs' lives: made by cgroupfs or by systemd, tethered, removed. */
#include "placedrun.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/contract.h"
#include "memguard/log.h"
#include "memguard/procstat.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "place.h"

#define REMOVE_RETRY_USEC 100000ull
#define REMOVE_TRIES 100
/* After REMOVE_TRIES, a cgroup that will not go is tried this often: the run
 * stays counted as long as its cgroup is there. */
#define REMOVE_SLOW_USEC (10 * 1000000ull)
/* How long systemd may take to start a scope with the caller in it. */
#define SCOPE_WAIT_USEC (5 * 1000000ull)
#define SCOPE_POLL_USEC 20000ull
#define CONTROLLERS "memory pids"
#define SCOPE_PREFIX "memguard-"
/* How deep run_abandon looks for another user's process in a failed run: the
 * user never had the run delegated, so it holds at most the supervisor leaf. */
#define OWNER_CHECK_DEPTH 16

struct run {
	struct mg_runs *runs;
	char path[160]; /* below the mount */
	char tether[MG_PLACE_PATH_MAX];
	char limit_root[MG_PLACE_PATH_MAX];
	uid_t uid;
	gid_t gid;
	pid_t pid;
	int pidfd; /* the launcher's; -1 once it is gone */
	uint64_t start, limit, waited_usec;
	unsigned remove_tries;
	bool starting;      /* done not called yet */
	bool abandoned;     /* failed to start: its cgroup is killed and removed (run_abandon) */
	bool stranger_told; /* run_abandon said it holds another user's process */
	bool refused;       /* systemd answered StartTransientUnit with an error */
	mg_run_done_t done;
	void *userdata;
	sd_bus_slot *slot;
	sd_event_source *pid_src, *tether_src, *timer;
};

struct mg_runs {
	sd_event *event;
	sd_bus *bus; /* systemd backend only */
	int mountfd, procfd;
	char mount[PATH_MAX];
	uint64_t grace_usec;
	unsigned seq;
	struct run *run[MG_RUNS_MAX];
};

const char *mg_runs_backend(const struct mg_runs *runs)
{
	return runs->bus ? "systemd" : "cgroupfs";
}

unsigned mg_runs_of_uid(const struct mg_runs *runs, uid_t uid, const char **ret_roots)
{
	unsigned n = 0;

	for (size_t i = 0; i < MG_RUNS_MAX; i++)
		if (runs->run[i] && runs->run[i]->uid == uid)
			ret_roots[n++] = runs->run[i]->limit_root;
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

static void run_free(struct run *run)
{
	for (size_t i = 0; i < MG_RUNS_MAX; i++)
		if (run->runs->run[i] == run)
			run->runs->run[i] = NULL;
	if (run->starting && run->done)
		run->done(run->userdata, -ECANCELED, NULL);
	sd_bus_slot_unref(run->slot);
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
	return sd_event_add_time_relative(run->runs->event, &run->timer, CLOCK_MONOTONIC, usec, 10000, cb,
	                                  run);
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
 * still holds its limit. systemd may have removed a scope's already. */
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

/* The job the run came from ended (scancel, qdel, walltime): the launcher
 * gets what a SIGTERM to memguard gives, then two grace periods before
 * everything goes. */
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

/* fresh: just placed. A tether that is already empty then held nothing but
 * the launcher (exec'd by a job script that was alone there): no tether. For
 * an adopted run, an empty tether means the job ended meanwhile. */
static void run_watch(struct run *run, bool fresh)
{
	struct mg_runs *runs = run->runs;
	char path[sizeof(runs->mount) + sizeof(run->tether) + 32];
	int r;

	if (run->pidfd >= 0 &&
	    (r = sd_event_add_io(runs->event, &run->pid_src, run->pidfd, EPOLLIN, on_launcher_exit, run)) < 0)
		mg_log_errno(LOG_ERR, r, "watch the launcher of placed run %s: %m", run->path);
	if (!run->tether[0])
		return;
	if (fresh) {
		_cleanup_close_ int fd = mg_cg_open(runs->mountfd, run->tether);
		if (fd < 0 || mg_cg_populated(fd) <= 0) {
			log_info("placed run %s: cgroup %s held only its launcher: not tethered", run->path,
			         run->tether);
			run->tether[0] = '\0';
			return;
		}
	}
	snprintf(path, sizeof(path), "%s/%s/cgroup.events", runs->mount, run->tether);
	r = sd_event_add_inotify(runs->event, &run->tether_src, path, IN_MODIFY, on_tether, run);
	if (r < 0) {
		mg_log_errno(LOG_WARNING, r, "watch %s: %m; placed run %s is not tethered", path, run->path);
		return;
	}
	on_tether(run->tether_src, NULL, run); /* it may have ended already */
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

/* Both backends end here, with the run's cgroup made: the launcher goes into
 * the supervisor leaf (out of the way of the no-internal-processes rule),
 * the run gets its controllers, its user, its xattrs and its watches. */
static int finish(struct run *run)
{
	struct mg_runs *runs = run->runs;
	_cleanup_close_ int cg = mg_cg_open(runs->mountfd, run->path), leaf = -1;
	char err[256] = "";
	int r;

	if (cg < 0)
		return cg;
	leaf = mg_cg_open(cg, MG_PLACE_SUPERVISOR_LEAF);
	if (leaf == -ENOENT)
		leaf = mg_cg_create(cg, MG_PLACE_SUPERVISOR_LEAF);
	if (leaf < 0)
		return leaf;
	if ((r = mg_cg_move_pid(leaf, run->pid)) < 0)
		return r;
	/* Still the process we pinned: a pid recycled meanwhile would have moved a stranger. */
	if ((r = mg_pidfd_signal(run->pidfd, 0)) < 0)
		return r;
	if ((r = mg_cg_enable_controllers(cg, run->path, CONTROLLERS, err, sizeof(err))) < 0) {
		log_err("placed run %s: %s", run->path, err);
		return r;
	}
	if ((r = delegate(cg, run->uid, run->gid)) < 0 || (r = delegate(leaf, run->uid, run->gid)) < 0)
		return r;
	/* Root's word on the run, kept in the tree for the next memguardd; each
	 * record on its own, so one that fails costs only itself. */
	if ((r = mg_contract_set_launcher(cg, run->pid, run->start)) < 0)
		record_failed(run, "launcher", r);
	if (run->tether[0] && (r = mg_contract_set_tether(cg, run->tether)) < 0)
		record_failed(run, "tether", r);
	if (run->limit_root[0] && (r = mg_contract_set_limit_root(cg, run->limit_root)) < 0)
		record_failed(run, "limit root", r);
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

/* A run that could not be made may hold processes all the same: systemd
 * moved the caller into its scope (or finish() did, into the leaf), and the
 * caller forked before it went or failed. Those must not keep the job's
 * limit outside the job: what the cgroup holds is killed, and the run stays
 * counted until the cgroup is gone. A scope systemd has not made yet may
 * come late (a timeout), so an absent one is looked for again for a while.
 * Nothing is killed while the cgroup holds another user's process: systemd
 * moves the caller by pid, and a pid recycled before the move would have put
 * a stranger there. */
static void run_abandon(struct run *run)
{
	_cleanup_close_ int fd = mg_cg_open(run->runs->mountfd, run->path);
	struct owner_check oc = {.run = run};
	int r;

	run->abandoned = true;
	if (fd == -ENOENT) {
		if (++run->remove_tries < REMOVE_TRIES && arm(run, REMOVE_RETRY_USEC, on_remove_retry) >= 0)
			return;
		log_info("placed run %s: its cgroup was never made, or is gone", run->path);
		run_free(run);
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

static void finished(struct run *run, int r)
{
	mg_run_done_t done = run->done;

	run->starting = false;
	run->slot = sd_bus_slot_unref(run->slot);
	run->timer = sd_event_source_disable_unref(run->timer);
	if (r >= 0)
		r = finish(run);
	if (r < 0) {
		done(run->userdata, r, NULL);
		if (run->refused)
			run_free(run); /* systemd made nothing */
		else
			run_abandon(run);
		return;
	}
	done(run->userdata, 0, run->path);
	run_watch(run, true);
}

/* cgroupfs: MG_PLACE_RUNS_PARENT/user-<uid>-<n> with memory.max, made here. */
static int create_cgroupfs(struct run *run)
{
	struct mg_runs *runs = run->runs;
	_cleanup_close_ int parent = -1, cg = -1;
	char name[64], err[256] = "";
	int r;

	if ((r = mg_cg_enable_controllers(runs->mountfd, runs->mount, CONTROLLERS, err, sizeof(err))) < 0)
		goto fail;
	parent = mg_cg_open(runs->mountfd, MG_PLACE_RUNS_PARENT);
	if (parent == -ENOENT)
		parent = mg_cg_create(runs->mountfd, MG_PLACE_RUNS_PARENT);
	if ((r = parent) < 0 ||
	    (r = mg_cg_enable_controllers(parent, MG_PLACE_RUNS_PARENT, CONTROLLERS, err, sizeof(err))) < 0)
		goto fail;
	for (unsigned tries = 0; tries < 1000; tries++) {
		snprintf(name, sizeof(name), MG_PLACE_RUN_PREFIX "%u-%u", (unsigned)run->uid, ++runs->seq);
		if ((cg = mg_cg_create(parent, name)) != -EEXIST)
			break;
	}
	if ((r = cg) < 0)
		goto fail;
	snprintf(run->path, sizeof(run->path), "%s/%s", MG_PLACE_RUNS_PARENT, name);
	if (run->limit != MG_SIZE_UNLIMITED &&
	    (r = mg_cg_write_size(cg, run->path, "memory.max", run->limit, err, sizeof(err))) < 0) {
		(void)mg_cg_remove(parent, name);
		goto fail;
	}
	return 0;
fail:
	mg_log_errno(LOG_ERR, r, "make a cgroup for a run of uid %u: %s%s%m", (unsigned)run->uid, err,
	             err[0] ? ": " : "");
	return r;
}

/* Polls until systemd has the caller in the new scope (its job runs after
 * the method returns). */
static int on_scope_poll(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct run *run = userdata;
	_cleanup_free_ char *now = NULL;
	int r = mg_cg_pid_path(run->runs->procfd, run->pid, &now);

	if (r >= 0 && strcmp(now + strspn(now, "/"), run->path) == 0)
		return finished(run, 0), 0;
	run->waited_usec += SCOPE_POLL_USEC;
	if (r < 0 || run->waited_usec >= SCOPE_WAIT_USEC) {
		log_err("placed run %s: systemd did not start the scope with pid %d in it", run->path,
		        (int)run->pid);
		return finished(run, r < 0 ? r : -ETIMEDOUT), 0;
	}
	if ((r = arm(run, SCOPE_POLL_USEC, on_scope_poll)) < 0)
		finished(run, r);
	return 0;
}

static int on_scope_started(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct run *run = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	int r;

	if (e) {
		log_err("placed run %s: StartTransientUnit: %s", run->path, e->message ?: e->name);
		/* An answer from systemd, not our own timeout: no scope is coming
		 * (and one of the name, perhaps an adopted run, is not this one). */
		run->refused = !sd_bus_error_has_name(e, SD_BUS_ERROR_NO_REPLY) &&
		               !sd_bus_error_has_name(e, SD_BUS_ERROR_TIMEOUT);
		return finished(run, -sd_bus_error_get_errno(e) ?: -EIO), 0;
	}
	if ((r = arm(run, SCOPE_POLL_USEC, on_scope_poll)) < 0)
		finished(run, r);
	return 0;
}

/* systemd: a transient scope memguard-user-<uid>-<n>.scope in memguard.slice,
 * Delegate=yes, the caller moved in by systemd itself, which stays the only
 * writer of the tree above it. */
static int create_scope(struct run *run)
{
	struct mg_runs *runs = run->runs;
	__attribute__((cleanup(sd_bus_message_unrefp))) sd_bus_message *m = NULL;
	char unit[96], desc[96];
	int r;

	snprintf(unit, sizeof(unit), SCOPE_PREFIX MG_PLACE_RUN_PREFIX "%u-%u-%u.scope", (unsigned)run->uid,
	         (unsigned)getpid(), ++runs->seq);
	snprintf(run->path, sizeof(run->path), MG_PLACE_SLICE "/%s", unit);
	snprintf(desc, sizeof(desc), "memguard run of uid %u (pid %d)", (unsigned)run->uid, (int)run->pid);
	if ((r = sd_bus_message_new_method_call(
	             runs->bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
	             "org.freedesktop.systemd1.Manager", "StartTransientUnit")) < 0 ||
	    (r = sd_bus_message_append(m, "ss", unit, "fail")) < 0 ||
	    (r = sd_bus_message_open_container(m, 'a', "(sv)")) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)", "Slice", "s", MG_PLACE_SLICE, "Description",
	                               "s", desc, "Delegate", "b", 1, "MemoryAccounting", "b", 1, "PIDs",
	                               "au", 1, (uint32_t)run->pid)) < 0 ||
	    (run->limit != MG_SIZE_UNLIMITED &&
	     (r = sd_bus_message_append(m, "(sv)", "MemoryMax", "t", run->limit)) < 0) ||
	    (r = sd_bus_message_close_container(m)) < 0 ||
	    (r = sd_bus_message_append(m, "a(sa(sv))", 0)) < 0 ||
	    (r = sd_bus_call_async(runs->bus, &run->slot, m, on_scope_started, run, SCOPE_WAIT_USEC)) < 0) {
		mg_log_errno(LOG_ERR, r, "ask systemd for scope %s: %m", unit);
		return r;
	}
	return 0;
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
	run->limit = spec->limit;
	snprintf(run->tether, sizeof(run->tether), "%s", spec->tether);
	snprintf(run->limit_root, sizeof(run->limit_root), "%s", spec->limit_root);
	if ((r = runs->bus ? create_scope(run) : create_cgroupfs(run)) < 0) {
		run_free(run);
		return r;
	}
	run->done = done;
	run->userdata = userdata;
	run->starting = true;
	if (!runs->bus)
		finished(run, 0);
	return 0;
}

struct adopt_scan {
	struct mg_runs *runs;
	const char *parent, *prefix;
};

/* A placed run a previous memguardd left: watch it again, or end it when
 * its launcher is gone. */
static int adopt(int fd, const char *name, void *userdata)
{
	const struct adopt_scan *as = userdata;
	struct stat st;
	uint64_t now_start;
	pid_t pid = 0;
	struct run *run;

	if (strncmp(name, as->prefix, strlen(as->prefix)) != 0 || fstat(fd, &st) < 0 ||
	    !(run = run_new(as->runs)))
		return 0;
	snprintf(run->path, sizeof(run->path), "%s/%s", as->parent, name);
	run->uid = st.st_uid;
	if (mg_contract_get_launcher(fd, &pid, &run->start) == 0) {
		run->pid = pid;
		run->pidfd = mg_pidfd_open(pid);
		/* The same process only if it started when the launcher did. */
		if (run->pidfd >= 0 &&
		    (mg_proc_start_time(as->runs->procfd, pid, &now_start) < 0 || now_start != run->start)) {
			close(run->pidfd);
			run->pidfd = -1;
		}
	}
	(void)mg_contract_get_tether(fd, run->tether, sizeof(run->tether));
	(void)mg_contract_get_limit_root(fd, run->limit_root, sizeof(run->limit_root));
	log_info("placed run %s: adopted (launcher %s)", run->path, run->pidfd >= 0 ? "running" : "gone");
	if (run->pidfd < 0)
		on_launcher_exit(NULL, -1, 0, run);
	else
		run_watch(run, false);
	return 0;
}

/* systemd's own socket, as systemctl does as root: no D-Bus daemon needed;
 * else the system bus. */
static int connect_systemd(struct mg_runs *runs, sd_event *event)
{
	sd_bus *bus = NULL;
	int r;

	if ((r = sd_bus_new(&bus)) >= 0 &&
	    (r = sd_bus_set_address(bus, "unix:path=/run/systemd/private")) >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		bus = sd_bus_unref(bus);
		r = sd_bus_open_system(&bus);
	}
	if (r >= 0)
		r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL + 10);
	if (r < 0) {
		sd_bus_unref(bus);
		return r;
	}
	runs->bus = bus;
	return 0;
}

int mg_runs_new(const struct mg_runs_config *cfg, struct mg_runs **ret)
{
	struct mg_runs *runs = calloc(1, sizeof(*runs));
	int r;

	if (!runs)
		return -ENOMEM;
	*runs = (struct mg_runs){.event = sd_event_ref(cfg->event),
	                         .mountfd = cfg->mountfd,
	                         .procfd = cfg->procfd,
	                         .grace_usec = cfg->grace_usec};
	snprintf(runs->mount, sizeof(runs->mount), "%s", cfg->mount);
	if (cfg->systemd && (r = connect_systemd(runs, cfg->event)) < 0)
		mg_log_errno(LOG_WARNING, r,
		             "connect to systemd: %m; making placed runs on cgroupfs directly");
	static const struct {
		const char *parent, *prefix;
	} places[] = {{MG_PLACE_RUNS_PARENT, MG_PLACE_RUN_PREFIX},
	              {MG_PLACE_SLICE, SCOPE_PREFIX MG_PLACE_RUN_PREFIX}};
	for (size_t i = 0; i < MG_ARRAY_SIZE(places); i++) {
		struct adopt_scan as = {.runs = runs, .parent = places[i].parent, .prefix = places[i].prefix};
		_cleanup_close_ int parent = mg_cg_open(cfg->mountfd, places[i].parent);
		if (parent >= 0)
			(void)mg_cg_for_each_child(parent, adopt, &as);
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
			run_free(runs->run[i]);
		}
	sd_bus_flush_close_unref(runs->bus);
	sd_event_unref(runs->event);
	free(runs);
}
