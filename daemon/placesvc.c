/* memguardd's placement service: the socket, the caller's identity, and the
 * life of each placed run from its creation to its removal. */
#include "placesvc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/log.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "place.h"

#define MAX_CONNS 64
#define MAX_CONNS_PER_UID 8
#define MAX_RUNS 1024
#define MAX_JOBS 256
#define MAX_CHAIN 32
#define REQUEST_MAX 256
#define CONN_TIMEOUT_USEC (2 * 1000000ull)
#define REMOVE_RETRY_USEC 100000ull
#define REMOVE_TRIES 100
/* Below the pressure sources (priority 0): placing never delays a kill. */
#define SVC_PRIORITY 10
#define CONTROLLERS "memory pids"
/* Root's word on a placed run, kept in the tree for the next memguardd. */
#define XATTR_LAUNCHER "trusted.memguard.launcher" /* "pid starttime" of the launcher */
#define XATTR_TETHER "trusted.memguard.tether"     /* the cgroup the run ends with */

struct conn {
	struct mg_placesvc *svc;
	int fd;
	struct ucred cred;
	sd_event_source *io, *timer;
	size_t len;
	char buf[REQUEST_MAX];
};

struct run {
	struct mg_placesvc *svc;
	char name[64];    /* below MG_PLACE_RUNS_PARENT */
	char tether[512]; /* below the mount; "" for none */
	int pidfd;        /* the launcher's; -1 once it is gone */
	unsigned remove_tries;
	sd_event_source *pid_src, *tether_src, *timer;
	uid_t uid;
};

struct mg_placesvc {
	sd_event *event;
	int mountfd, procfd, listen_fd;
	bool own_socket;
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char mount[PATH_MAX];
	uint64_t grace_usec;
	unsigned max_runs_per_uid;
	unsigned seq;
	sd_event_source *listen_src;
	struct conn *conns[MAX_CONNS];
	struct run *runs[MAX_RUNS];
};

static int pidfd_open(pid_t pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : (int)fd;
}

static int pidfd_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 ? -errno : 0;
}

/* Field 22 of /proc/<pid>/stat: when the process started, in clock ticks. */
static int proc_start_time(int procfd, pid_t pid, uint64_t *ret)
{
	char name[32], buf[1024];
	ssize_t n;

	snprintf(name, sizeof(name), "%d/stat", (int)pid);
	if ((n = mg_read_small_at(procfd, name, buf, sizeof(buf))) < 0)
		return (int)n;
	const char *p = strrchr(buf, ')');
	if (!p)
		return -EBADMSG;
	for (int field = 2; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EBADMSG;
	}
	return sscanf(p + 1, "%" SCNu64, ret) == 1 ? 0 : -EBADMSG;
}

/* The real and effective uid of pid, from /proc/<pid>/status. */
static int proc_uids(int procfd, pid_t pid, uid_t *ret_real, uid_t *ret_effective)
{
	_cleanup_free_ char *text = NULL;
	char name[32];
	unsigned real, eff;
	ssize_t n;

	snprintf(name, sizeof(name), "%d/status", (int)pid);
	if ((n = mg_read_file_at(procfd, name, &text)) < 0)
		return (int)n;
	const char *uid = strstr(text, "\nUid:");
	if (!uid || sscanf(uid + strlen("\nUid:"), "%u %u", &real, &eff) != 2)
		return -EBADMSG;
	*ret_real = real;
	*ret_effective = eff;
	return 0;
}

/* Pins the peer: a pidfd for the pid SO_PEERCRED named, checked to be a live
 * process of the peer's uid after its details were read, so a pid recycled
 * by another user's process is refused. */
static int pin_peer(struct mg_placesvc *s, const struct ucred *cred, uint64_t *ret_start)
{
	_cleanup_close_ int pidfd = pidfd_open(cred->pid);
	uid_t real = 0, eff = 0;
	int r;

	if (pidfd < 0)
		return pidfd;
	if ((r = proc_uids(s->procfd, cred->pid, &real, &eff)) < 0 ||
	    (r = proc_start_time(s->procfd, cred->pid, ret_start)) < 0)
		return r;
	if (real != cred->uid || eff != cred->uid)
		return -EPERM;
	/* Alive now, so what we read was this process's. */
	if ((r = pidfd_signal(pidfd, 0)) < 0)
		return r;
	return TAKE_FD(pidfd);
}

static void conn_free(struct conn *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < MAX_CONNS; i++)
		if (c->svc->conns[i] == c)
			c->svc->conns[i] = NULL;
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->timer);
	close(c->fd);
	free(c);
}

static void reply(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(struct conn *c, const char *fmt, ...)
{
	char line[PATH_MAX + 128];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* A client that does not read gets nothing more: the reply fits the socket buffer. */
	(void)send(c->fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* The caller's cgroup chain, deepest first, with each memory.max. */
static int read_chain(struct mg_placesvc *s, pid_t pid, char (*paths)[512], struct mg_place_origin *chain,
                      size_t *ret_n)
{
	_cleanup_free_ char *self = NULL;
	size_t n = 0;
	int r = mg_cg_pid_path(s->procfd, pid, &self);

	if (r < 0)
		return r;
	const char *rel = self + strspn(self, "/");
	if (strlen(rel) >= sizeof(paths[0]))
		return -ENAMETOOLONG;
	snprintf(paths[0], sizeof(paths[0]), "%s", rel);
	while (n < MAX_CHAIN && paths[n][0]) {
		_cleanup_close_ int fd = mg_cg_open(s->mountfd, paths[n]);
		uint64_t max = MG_SIZE_UNLIMITED;
		if (fd >= 0 && mg_cg_read_u64(fd, "memory.max", &max) < 0)
			max = MG_SIZE_UNLIMITED;
		chain[n] = (struct mg_place_origin){
		        .path = paths[n],
		        .limit = max,
		        .in_placed = strncmp(paths[n], MG_PLACE_RUNS_PARENT "/",
		                             strlen(MG_PLACE_RUNS_PARENT) + 1) == 0 ||
		                     strncmp(paths[n], MG_PLACE_JOBS_PARENT "/",
		                             strlen(MG_PLACE_JOBS_PARENT) + 1) == 0,
		};
		if (n + 1 < MAX_CHAIN) {
			memcpy(paths[n + 1], paths[n], sizeof(paths[0]));
			char *slash = strrchr(paths[n + 1], '/');
			if (slash)
				*slash = '\0';
			else
				paths[n + 1][0] = '\0';
		}
		n++;
	}
	*ret_n = n;
	return 0;
}

struct job_scan {
	struct mg_place_job *jobs;
	char (*names)[72];
	size_t n;
};

static int add_job(int fd, const char *name, void *userdata)
{
	struct job_scan *js = userdata;
	struct stat st;

	size_t len = strlen(name);

	if (js->n == MAX_JOBS || len >= sizeof(js->names[0]) || fstat(fd, &st) < 0)
		return 0;
	memcpy(js->names[js->n], name, len + 1);
	js->jobs[js->n] = (struct mg_place_job){
	        .name = js->names[js->n],
	        .owner = st.st_uid,
	        .has_leaf = faccessat(fd, MG_PLACE_JOB_LEAF "/cgroup.procs", F_OK, 0) == 0,
	};
	js->n++;
	return 0;
}

static unsigned runs_of(const struct mg_placesvc *s, uid_t uid)
{
	unsigned n = 0;

	for (size_t i = 0; i < MAX_RUNS; i++)
		n += s->runs[i] && s->runs[i]->uid == uid;
	return n;
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

static int run_remove(struct run *run);
static void run_watch(struct run *run, bool fresh);

static struct run *run_new(struct mg_placesvc *s, const char *name, uid_t uid, int pidfd, const char *tether)
{
	for (size_t i = 0; i < MAX_RUNS; i++) {
		if (s->runs[i])
			continue;
		struct run *run = calloc(1, sizeof(*run));
		if (!run)
			return NULL;
		*run = (struct run){.svc = s, .uid = uid, .pidfd = pidfd};
		snprintf(run->name, sizeof(run->name), "%s", name);
		snprintf(run->tether, sizeof(run->tether), "%s", tether);
		s->runs[i] = run;
		return run;
	}
	return NULL;
}

static void run_free(struct run *run)
{
	for (size_t i = 0; i < MAX_RUNS; i++)
		if (run->svc->runs[i] == run)
			run->svc->runs[i] = NULL;
	sd_event_source_disable_unref(run->pid_src);
	sd_event_source_disable_unref(run->tether_src);
	sd_event_source_disable_unref(run->timer);
	if (run->pidfd >= 0)
		close(run->pidfd);
	free(run);
}

/* (Re)arms the run's one timer with cb: the grace period, then removal retries. */
static int arm(struct run *run, uint64_t usec, sd_event_time_handler_t cb)
{
	run->timer = sd_event_source_disable_unref(run->timer);
	return sd_event_add_time_relative(run->svc->event, &run->timer, CLOCK_MONOTONIC, usec, 10000, cb,
	                                  run);
}

static int open_run(struct run *run)
{
	char path[sizeof(run->name) + 16];

	snprintf(path, sizeof(path), "%s/%s", MG_PLACE_RUNS_PARENT, run->name);
	return mg_cg_open(run->svc->mountfd, path);
}

static int on_remove_retry(sd_event_source *src, uint64_t usec, void *userdata)
{
	return run_remove(userdata), 0;
}

/* Removes the run's cgroups once they are empty, retrying a while after a kill. */
static int run_remove(struct run *run)
{
	_cleanup_close_ int parent = mg_cg_open(run->svc->mountfd, MG_PLACE_RUNS_PARENT);
	int r = parent < 0 ? parent : mg_cg_remove(parent, run->name);

	if (r == -EBUSY && ++run->remove_tries < REMOVE_TRIES) {
		if ((r = arm(run, REMOVE_RETRY_USEC, on_remove_retry)) >= 0)
			return 0;
	}
	if (r < 0)
		mg_log_errno(LOG_ERR, r, "remove placed run %s/%s/%s: %m", run->svc->mount,
		             MG_PLACE_RUNS_PARENT, run->name);
	else
		log_info("placed run %s/%s removed", MG_PLACE_RUNS_PARENT, run->name);
	run_free(run);
	return r;
}

static int on_grace_over(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct run *run = userdata;
	_cleanup_close_ int fd = open_run(run);
	int r = fd < 0 ? fd : mg_cg_kill(fd);

	if (r < 0 && r != -ENOENT)
		mg_log_errno(LOG_ERR, r, "kill what is left of placed run %s/%s: %m", MG_PLACE_RUNS_PARENT,
		             run->name);
	else
		log_notice("placed run %s/%s: killed what was left after the grace period",
		           MG_PLACE_RUNS_PARENT, run->name);
	return run_remove(run), 0;
}

/* The launcher is gone: its tasks may finish their grace period, then go. */
static int on_launcher_exit(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct run *run = userdata;
	_cleanup_close_ int cg = open_run(run);
	int populated = cg < 0 ? 0 : mg_cg_populated(cg);

	run->pid_src = sd_event_source_disable_unref(run->pid_src);
	if (run->pidfd >= 0)
		close(run->pidfd);
	run->pidfd = -1;
	if (populated <= 0)
		return run_remove(run), 0;
	log_notice("placed run %s/%s: its launcher is gone; what is left is killed in %" PRIu64 " s",
	           MG_PLACE_RUNS_PARENT, run->name, run->svc->grace_usec / 1000000);
	if (arm(run, run->svc->grace_usec, on_grace_over) < 0)
		on_grace_over(NULL, 0, run);
	return 0;
}

/* The job the run came from ended (scancel, qdel, walltime): the launcher
 * gets what a SIGTERM to memguard gives, then two grace periods before
 * everything goes. */
static int on_tether(sd_event_source *src, const struct inotify_event *ev, void *userdata)
{
	struct run *run = userdata;
	_cleanup_close_ int fd = mg_cg_open(run->svc->mountfd, run->tether);

	if (fd >= 0 && mg_cg_populated(fd) > 0)
		return 0;
	run->tether_src = sd_event_source_disable_unref(run->tether_src);
	if (run->pidfd < 0)
		return 0;
	log_notice("placed run %s/%s: cgroup %s ended; telling its launcher (SIGTERM)", MG_PLACE_RUNS_PARENT,
	           run->name, run->tether);
	int r = pidfd_signal(run->pidfd, SIGTERM);
	if (r < 0 && r != -ESRCH)
		mg_log_errno(LOG_ERR, r, "signal the launcher of placed run %s: %m", run->name);
	if (arm(run, 2 * run->svc->grace_usec, on_grace_over) < 0)
		on_grace_over(NULL, 0, run);
	return 0;
}

/* fresh: just placed. A tether that is already empty then held nothing but
 * the launcher (exec'd by a job script that was alone there): no tether. For
 * an adopted run, an empty tether means the job ended meanwhile. */
static void run_watch(struct run *run, bool fresh)
{
	struct mg_placesvc *s = run->svc;
	char path[sizeof(s->mount) + sizeof(run->tether) + 32];
	int r;

	if (run->pidfd >= 0 &&
	    (r = sd_event_add_io(s->event, &run->pid_src, run->pidfd, EPOLLIN, on_launcher_exit, run)) < 0)
		mg_log_errno(LOG_ERR, r, "watch the launcher of placed run %s: %m", run->name);
	if (!run->tether[0])
		return;
	if (fresh) {
		_cleanup_close_ int fd = mg_cg_open(s->mountfd, run->tether);
		if (fd < 0 || mg_cg_populated(fd) <= 0) {
			log_info("placed run %s/%s: cgroup %s held only its launcher: not tethered",
			         MG_PLACE_RUNS_PARENT, run->name, run->tether);
			return;
		}
	}
	snprintf(path, sizeof(path), "%s/%s/cgroup.events", s->mount, run->tether);
	r = sd_event_add_inotify(s->event, &run->tether_src, path, IN_MODIFY, on_tether, run);
	if (r < 0) {
		mg_log_errno(LOG_WARNING, r, "watch %s: %m; placed run %s is not tethered", path, run->name);
		return;
	}
	on_tether(run->tether_src, NULL, run); /* it may have ended already */
}

/* Creates MG_PLACE_RUNS_PARENT/user-<uid>-<n> with memory.max, delegated to
 * the caller, and its supervisor leaf; returns an fd for the run's parent
 * and the name in ret_name. */
static int create_run(struct mg_placesvc *s, const struct ucred *cred, uint64_t limit, char *ret_name,
                      size_t size, int *ret_runfd)
{
	_cleanup_close_ int parent = -1, run = -1, leaf = -1;
	char path[PATH_MAX + 96];
	int r;

	if ((r = mg_cg_enable_controllers(s->mountfd, s->mount, CONTROLLERS, NULL, 0)) < 0)
		return r;
	parent = mg_cg_open(s->mountfd, MG_PLACE_RUNS_PARENT);
	if (parent == -ENOENT)
		parent = mg_cg_create(s->mountfd, MG_PLACE_RUNS_PARENT);
	if (parent < 0)
		return parent;
	snprintf(path, sizeof(path), "%s/%s", s->mount, MG_PLACE_RUNS_PARENT);
	if ((r = mg_cg_enable_controllers(parent, path, CONTROLLERS, NULL, 0)) < 0)
		return r;
	for (unsigned tries = 0; tries < 1000; tries++) {
		snprintf(ret_name, size, MG_PLACE_RUN_PREFIX "%u-%u", (unsigned)cred->uid, ++s->seq);
		run = mg_cg_create(parent, ret_name);
		if (run != -EEXIST)
			break;
	}
	if (run < 0)
		return run;
	snprintf(path, sizeof(path), "%s/%s/%s", s->mount, MG_PLACE_RUNS_PARENT, ret_name);
	if ((limit != MG_SIZE_UNLIMITED && (r = mg_cg_write_size(run, path, "memory.max", limit, NULL, 0)) < 0) ||
	    (r = mg_cg_enable_controllers(run, path, CONTROLLERS, NULL, 0)) < 0 ||
	    (r = leaf = mg_cg_create(run, MG_PLACE_SUPERVISOR_LEAF)) < 0 ||
	    (r = delegate(run, cred->uid, cred->gid)) < 0 || (r = delegate(leaf, cred->uid, cred->gid)) < 0) {
		(void)mg_cg_remove(parent, ret_name);
		return r;
	}
	*ret_runfd = TAKE_FD(run);
	return TAKE_FD(parent);
}

static void place_in_run(struct conn *c, const struct mg_place_verdict *v,
                         const struct mg_place_origin *chain, int pidfd, uint64_t start)
{
	struct mg_placesvc *s = c->svc;
	_cleanup_close_ int parent = -1, runfd = -1, leaf = -1;
	char name[64], value[64], limit[MG_SIZE_STRLEN];
	const char *tether = v->tether >= 0 ? chain[v->tether].path : "";
	int r;

	parent = create_run(s, &c->cred, v->limit, name, sizeof(name), &runfd);
	if (parent < 0) {
		mg_log_errno(LOG_ERR, parent, "create a placed run for uid %u: %m", (unsigned)c->cred.uid);
		return reply(c, "err cannot create a cgroup for the run: %s", strerror(-parent));
	}
	snprintf(value, sizeof(value), "%d %" PRIu64, (int)c->cred.pid, start);
	if (fsetxattr(runfd, XATTR_LAUNCHER, value, strlen(value), 0) < 0 ||
	    (tether[0] && fsetxattr(runfd, XATTR_TETHER, tether, strlen(tether), 0) < 0))
		log_warn("set trusted xattrs on %s/%s: %s: a restarted memguardd will not know its launcher",
		         MG_PLACE_RUNS_PARENT, name, strerror(errno));
	leaf = mg_cg_open(runfd, MG_PLACE_SUPERVISOR_LEAF);
	r = leaf < 0 ? leaf : mg_cg_move_pid(leaf, c->cred.pid);
	/* Still the process we pinned: a pid recycled meanwhile would have moved a stranger. */
	if (r >= 0)
		r = pidfd_signal(pidfd, 0);
	if (r < 0) {
		(void)mg_cg_remove(parent, name);
		return reply(c, "err cannot move the caller into its run: %s", strerror(-r));
	}
	struct run *run = run_new(s, name, c->cred.uid, pidfd, tether);
	if (!run) {
		log_err("placed run %s: no room to track it; it is not tethered", name);
		close(pidfd);
	} else {
		run_watch(run, true);
	}
	log_info("placed pid %d of uid %u in %s/%s (limit: %s)", (int)c->cred.pid, (unsigned)c->cred.uid,
	         MG_PLACE_RUNS_PARENT, name, v->why);
	if (v->limit == MG_SIZE_UNLIMITED)
		snprintf(limit, sizeof(limit), "max");
	else
		snprintf(limit, sizeof(limit), "%" PRIu64, v->limit);
	reply(c, "ok run %s/%s %s %s", MG_PLACE_RUNS_PARENT, name, limit,
	      v->limit_from >= 0 ? chain[v->limit_from].path : "-");
}

static void place_in_job(struct conn *c, const char *job)
{
	char path[128];
	_cleanup_close_ int leaf = -1;
	struct stat st;
	int r;

	snprintf(path, sizeof(path), "%s/%s/%s", MG_PLACE_JOBS_PARENT, job, MG_PLACE_JOB_LEAF);
	leaf = mg_cg_open(c->svc->mountfd, path);
	r = leaf < 0 ? leaf : fstat(leaf, &st) < 0 ? -errno : st.st_uid != c->cred.uid ? -EPERM : 0;
	if (r >= 0)
		r = mg_cg_move_pid(leaf, c->cred.pid);
	if (r < 0)
		return reply(c, "err cannot move the caller into %s: %s", path, strerror(-r));
	log_info("placed pid %d of uid %u in %s", (int)c->cred.pid, (unsigned)c->cred.uid, path);
	reply(c, "ok job %s/%s", MG_PLACE_JOBS_PARENT, job);
}

static void handle(struct conn *c)
{
	static char chain_paths[MAX_CHAIN][512], job_names[MAX_JOBS][72];
	static struct mg_place_origin chain[MAX_CHAIN];
	static struct mg_place_job jobs[MAX_JOBS];
	struct mg_placesvc *s = c->svc;
	struct mg_place_request req = {.uid = c->cred.uid, .max_runs_per_uid = s->max_runs_per_uid};
	struct mg_place_verdict v;
	uint64_t start;
	size_t n;
	int r;

	if (mg_place_parse_request(c->buf, &req.job_hint) < 0)
		return reply(c, "err bad request: expected \"place\" or \"place job=ID\"");
	_cleanup_close_ int pidfd = pin_peer(s, &c->cred, &start);
	if (pidfd < 0)
		return reply(c, "err cannot identify the caller (pid %d): %s", (int)c->cred.pid,
		             strerror(-pidfd));
	if ((r = read_chain(s, c->cred.pid, chain_paths, chain, &n)) < 0)
		return reply(c, "err cannot read the caller's cgroup: %s", strerror(-r));
	struct job_scan js = {.jobs = jobs, .names = job_names};
	_cleanup_close_ int jobsfd = mg_cg_open(s->mountfd, MG_PLACE_JOBS_PARENT);
	if (jobsfd >= 0)
		(void)mg_cg_for_each_child(jobsfd, add_job, &js);
	req.runs_of_uid = runs_of(s, c->cred.uid);
	switch (mg_place_decide(&req, chain, n, jobs, js.n, &v)) {
	case MG_PLACE_REFUSE:
		log_info("placement for pid %d of uid %u refused: %s", (int)c->cred.pid,
		         (unsigned)c->cred.uid, v.why);
		return reply(c, "err %s", v.why);
	case MG_PLACE_JOB:
		return place_in_job(c, jobs[v.job].name);
	case MG_PLACE_RUN:
		return place_in_run(c, &v, chain, TAKE_FD(pidfd), start);
	}
}

static int on_conn_timeout(sd_event_source *src, uint64_t usec, void *userdata)
{
	conn_free(userdata);
	return 0;
}

static int on_conn_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct conn *c = userdata;
	ssize_t n = recv(fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		conn_free(c);
		return 0;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	if (memchr(c->buf, '\n', c->len))
		handle(c);
	else if (c->len == sizeof(c->buf) - 1)
		reply(c, "err request too long");
	else
		return 0;
	conn_free(c);
	return 0;
}

static int accept_one(struct mg_placesvc *s)
{
	_cleanup_close_ int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct ucred cred;
	socklen_t len = sizeof(cred);
	size_t slot = MAX_CONNS, of_uid = 0;
	int r;

	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return 0;
	for (size_t i = 0; i < MAX_CONNS; i++) {
		if (!s->conns[i])
			slot = slot == MAX_CONNS ? i : slot;
		else
			of_uid += s->conns[i]->cred.uid == cred.uid;
	}
	if (slot == MAX_CONNS || of_uid >= MAX_CONNS_PER_UID) {
		log_debug("placement: dropping a connection of uid %u (too many at once)",
		          (unsigned)cred.uid);
		return 0;
	}
	struct conn *c = calloc(1, sizeof(*c));
	if (!c)
		return 0;
	*c = (struct conn){.svc = s, .fd = TAKE_FD(fd), .cred = cred};
	if ((r = sd_event_add_io(s->event, &c->io, c->fd, EPOLLIN, on_conn_io, c)) < 0 ||
	    (r = sd_event_source_set_priority(c->io, SVC_PRIORITY)) < 0 ||
	    (r = sd_event_add_time_relative(s->event, &c->timer, CLOCK_MONOTONIC, CONN_TIMEOUT_USEC, 10000,
	                                    on_conn_timeout, c)) < 0) {
		mg_log_errno(LOG_ERR, r, "placement: watch a connection: %m");
		s->conns[slot] = c;
		conn_free(c);
		return 0;
	}
	s->conns[slot] = c;
	return 0;
}

static int on_accept(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct mg_placesvc *s = userdata;
	int r;

	/* A bounded batch, so a flood of connections cannot hold the loop. */
	for (int i = 0; i < 16 && (r = accept_one(s)) >= 0; i++)
		;
	return 0;
}

static int listen_socket(struct mg_placesvc *s, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int n = sd_listen_fds(1);

	if (n == 1 && sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) > 0) {
		if (fcntl(SD_LISTEN_FDS_START, F_SETFL, O_NONBLOCK) < 0)
			return -errno;
		return SD_LISTEN_FDS_START;
	}
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A socket left by an earlier memguardd: nothing else may be replaced. */
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		(void)unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0666) < 0 || listen(fd, 64) < 0)
		return -errno;
	s->own_socket = true;
	snprintf(s->socket_path, sizeof(s->socket_path), "%s", path);
	return TAKE_FD(fd);
}

struct adopt_scan {
	struct mg_placesvc *svc;
};

/* A placed run a previous memguardd left: watch it again, or end it when
 * its launcher is gone. */
static int adopt(int fd, const char *name, void *userdata)
{
	struct mg_placesvc *s = ((struct adopt_scan *)userdata)->svc;
	char value[64] = "", tether[512] = "";
	struct stat st;
	uint64_t start = 0, now_start;
	int pid = 0, pidfd = -1;

	if (strncmp(name, MG_PLACE_RUN_PREFIX, strlen(MG_PLACE_RUN_PREFIX)) != 0 || fstat(fd, &st) < 0)
		return 0;
	ssize_t n = fgetxattr(fd, XATTR_LAUNCHER, value, sizeof(value) - 1);
	if (n > 0 && sscanf(value, "%d %" SCNu64, &pid, &start) == 2 && pid > 0) {
		pidfd = pidfd_open(pid);
		if (pidfd >= 0 && (proc_start_time(s->procfd, pid, &now_start) < 0 || now_start != start)) {
			close(pidfd);
			pidfd = -1;
		}
	}
	n = fgetxattr(fd, XATTR_TETHER, tether, sizeof(tether) - 1);
	tether[n > 0 ? n : 0] = '\0';
	struct run *run = run_new(s, name, st.st_uid, pidfd, tether);
	if (!run) {
		if (pidfd >= 0)
			close(pidfd);
		return 0;
	}
	log_info("placed run %s/%s: adopted (launcher %s)", MG_PLACE_RUNS_PARENT, name,
	         pidfd >= 0 ? "running" : "gone");
	if (pidfd < 0)
		on_launcher_exit(NULL, -1, 0, run);
	else
		run_watch(run, false);
	return 0;
}

int mg_placesvc_start(sd_event *event, int mountfd, int procfd, const struct mg_placesvc_config *cfg,
                      struct mg_placesvc **ret)
{
	struct mg_placesvc *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	*s = (struct mg_placesvc){.event = sd_event_ref(event), .mountfd = mountfd, .procfd = procfd};
	snprintf(s->mount, sizeof(s->mount), "%s", cfg->mount);
	mg_placesvc_configure(s, cfg->grace_usec, cfg->max_runs_per_uid);
	s->listen_fd = listen_socket(s, cfg->socket_path);
	if (s->listen_fd < 0) {
		r = s->listen_fd;
		mg_placesvc_free(s);
		return r;
	}
	if ((r = sd_event_add_io(event, &s->listen_src, s->listen_fd, EPOLLIN, on_accept, s)) < 0 ||
	    (r = sd_event_source_set_priority(s->listen_src, SVC_PRIORITY)) < 0) {
		mg_placesvc_free(s);
		return r;
	}
	_cleanup_close_ int parent = mg_cg_open(mountfd, MG_PLACE_RUNS_PARENT);
	struct adopt_scan as = {.svc = s};
	if (parent >= 0)
		(void)mg_cg_for_each_child(parent, adopt, &as);
	*ret = s;
	return 0;
}

void mg_placesvc_configure(struct mg_placesvc *s, uint64_t grace_usec, unsigned max_runs_per_uid)
{
	s->grace_usec = grace_usec;
	s->max_runs_per_uid = max_runs_per_uid;
}

void mg_placesvc_free(struct mg_placesvc *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < MAX_CONNS; i++)
		conn_free(s->conns[i]);
	for (size_t i = 0; i < MAX_RUNS; i++)
		if (s->runs[i])
			run_free(s->runs[i]);
	sd_event_source_disable_unref(s->listen_src);
	if (s->listen_fd >= 0 && s->listen_fd != SD_LISTEN_FDS_START)
		close(s->listen_fd);
	if (s->own_socket)
		(void)unlink(s->socket_path);
	sd_event_unref(s->event);
	free(s);
}
