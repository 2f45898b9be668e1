/* memguardd's placement service: the socket, the caller's identity, and the
 * life of each placed run from its creation to its removal. */
#include "place/placesvc.h"

#include <dirent.h>
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
#include <sys/un.h>
#include <sys/xattr.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/devprog.h"
#include "memguard/log.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "memguard/procstat.h"
#include "place/place.h"
#include "place/placedrun.h"
#include "place/watches.h"

#define MAX_CONNS 64
#define MAX_CONNS_PER_UID 8
#define MAX_JOBS 256
#define REQUEST_MAX 256
#define CONN_TIMEOUT_USEC (2 * 1000000ull)
/* Below the pressure sources (priority 0): placing never delays a kill. */
#define SVC_PRIORITY 10

struct conn {
	struct mg_placesvc *svc;
	int fd;
	struct ucred cred;
	sd_event_source *io, *timer;
	size_t len;
	char buf[REQUEST_MAX];
	struct {
		struct mg_place_verdict v;
		char limit_from[MG_PLACE_PATH_MAX];
		uint64_t taken; /* the budget the launcher said the run hands out */
	} pending;              /* while a run is made for it */
	bool awaiting;          /* handed to the runs: they call on_run_made once */
	bool handling;          /* inside on_conn_io, which frees it afterwards */
};

struct mg_placesvc {
	sd_event *event;
	int mountfd, procfd, listen_fd;
	bool own_socket;
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char mount[PATH_MAX];
	unsigned max_runs_per_uid;
	char beside[512];           /* [daemon] place_beside */
	struct mg_watches *watches; /* the guard's: memguardd's inotify watches per uid */
	sd_event_source *listen_src;
	struct conn *conns[MAX_CONNS];
	struct mg_runs *runs;
};

/* Pins the peer: a pidfd for the pid SO_PEERCRED named, checked to be a live
 * process of the peer's uid after its details were read, so a pid recycled
 * by another user's process is refused. */
static int pin_peer(struct mg_placesvc *s, const struct ucred *cred, uint64_t *ret_start)
{
	_cleanup_close_ int pidfd = mg_pidfd_open(cred->pid);
	uid_t real = 0, eff = 0;
	int r;

	if (pidfd < 0)
		return pidfd;
	if ((r = mg_proc_uids(s->procfd, cred->pid, &real, &eff)) < 0 ||
	    (r = mg_proc_start_time(s->procfd, cred->pid, ret_start)) < 0)
		return r;
	if (real != cred->uid || eff != cred->uid)
		return -EPERM;
	/* Alive now, so what we read was this process's. */
	if ((r = mg_pidfd_signal(pidfd, 0)) < 0)
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

/* Whether the device programs on the caller's cgroup itself are all
 * among those its parent applies, so that a run beside it is held by the
 * same rules: Slurm attaches its program to the job (and, for a step with
 * GPUs bound per task, to each task cgroup too), systemd to each unit with
 * DeviceAllow=. Returns 0 when they are, or a reason in buf. */
static int own_device_program(int cgfd, int parentfd, char *buf, size_t size)
{
	struct mg_devprog_tag own[MG_DEVPROG_MAX], applied[MG_DEVPROG_MAX];
	int n_own = mg_devprog_tags(cgfd, false, own, MG_DEVPROG_MAX);
	int n_applied = n_own > 0 ? mg_devprog_tags(parentfd, true, applied, MG_DEVPROG_MAX) : 0;

	if (n_own < 0 || n_applied < 0) {
		snprintf(buf, size, "a device program (its programs cannot be read: %s)",
		         strerror(-(n_own < 0 ? n_own : n_applied)));
		return -1;
	}
	if (mg_devprog_covered(own, (size_t)n_own, applied, (size_t)n_applied))
		return 0;
	snprintf(buf, size, "a device program its parent does not apply");
	return -1;
}

/* The first limit set on the cgroup itself into buf, or "": what a run
 * beside it would escape. Every limit file of its controllers counts
 * (mg_place_limit_file), and a device program its parent does not apply.
 * Not pids.max, which the run takes along (placedrun.c), and not the
 * memory.max memguardd set for the runs beside the cgroup already
 * (mg_runs_keep_caller). What cannot be read counts as set. */
static void own_limit(int cgfd, int parentfd, bool memory_max_ours, char *buf, size_t size)
{
	char controllers[256], value[4096];
	ssize_t n = mg_read_small_at(cgfd, "cgroup.controllers", controllers, sizeof(controllers));
	int dupfd = n < 0 ? -1 : fcntl(cgfd, F_DUPFD_CLOEXEC, 3);
	DIR *dir = dupfd < 0 ? NULL : fdopendir(dupfd);
	struct dirent *de;

	buf[0] = '\0';
	if (!dir) {
		if (dupfd >= 0)
			close(dupfd);
		snprintf(buf, size, "limits that cannot be read (%s)", strerror(n < 0 ? (int)-n : errno));
		return;
	}
	while (!buf[0] && (de = readdir(dir))) {
		if (!mg_place_limit_file(de->d_name, controllers) ||
		    (memory_max_ours && strcmp(de->d_name, "memory.max") == 0))
			continue;
		n = mg_read_small_at(cgfd, de->d_name, value, sizeof(value));
		if (n == -ENOENT)
			continue;
		/* Unreadable, or too long to read whole, counts as set. */
		if (n < 0 || (size_t)n == sizeof(value) - 1 || mg_place_limit_set(de->d_name, value))
			snprintf(buf, size, "%s", de->d_name);
	}
	closedir(dir);
	if (!buf[0])
		(void)own_device_program(cgfd, parentfd, buf, size);
}

/* What a run beside the caller's cgroup (cgfd, at path) depends on: whose
 * processes it holds, its own pids.max, the runs beside it, and the
 * watches the user's runs and cgroups hold. */
static void read_caller(struct mg_placesvc *s, int cgfd, const char *path, uid_t uid,
                        struct mg_place_caller *ret)
{
	char pids[32];
	ssize_t n = mg_read_small_at(cgfd, "pids.max", pids, sizeof(pids));
	int r = mg_runs_find_stranger(s->procfd, cgfd, uid, true, &ret->stranger);

	if (r < 0)
		ret->stranger = -1;
	else if (r == 0)
		ret->stranger = 0;
	ret->own_pids_max = n > 0 && strncmp(pids, "max", 3) != 0;
	ret->runs = mg_runs_of_tether(s->runs, path);
	ret->watches = mg_watches_of(s->watches, uid);
	ret->max_watches = uid == 0 ? UINT32_MAX : MG_WATCHES_PER_UID;
}

/* The caller's cgroup chain (mg_place_chain_paths, MG_PLACE_CHAIN_MAX deep at most),
 * with each memory.max, the caller's own cgroup's own limit, and what a run
 * beside that cgroup depends on. */
static int read_chain(struct mg_placesvc *s, pid_t pid, uid_t uid, char (*paths)[MG_PLACE_PATH_MAX],
                      struct mg_place_origin *chain, size_t *ret_n, char *own, size_t ownsize,
                      struct mg_place_caller *ret_caller)
{
	_cleanup_free_ char *self = NULL;
	_cleanup_close_ int first = -1;
	int r = mg_cg_pid_path(s->procfd, pid, &self);
	long n;

	if (r < 0)
		return r;
	if ((n = mg_place_chain_paths(self + strspn(self, "/"), paths, MG_PLACE_CHAIN_MAX)) < 0)
		return (int)n;
	for (long i = 0; i < n; i++) {
		_cleanup_close_ int fd = mg_cg_open(s->mountfd, paths[i]);
		uint64_t max = MG_SIZE_UNLIMITED;

		if (fd < 0)
			return fd;
		/* No memory.max (its parent gives it no memory controller) is no
		 * limit; a limit that cannot be read is no reason to drop it. */
		bool ours = i == 0 && mg_runs_keep_caller(s->runs, paths[i]);
		if (!ours && (r = mg_cg_read_u64(fd, "memory.max", &max)) < 0 && r != -ENOENT)
			return r;
		if (i == 1)
			own_limit(first, fd, mg_runs_keep_caller(s->runs, paths[0]), own, ownsize);
		chain[i] = (struct mg_place_origin){
		        .path = paths[i], .limit = max, .own_limit = i == 0 ? own : ""};
		if (i == 0)
			first = TAKE_FD(fd);
	}
	/* A top-level cgroup: its parent is the mount's root. */
	if (n == 1)
		own_limit(first, s->mountfd, mg_runs_keep_caller(s->runs, paths[0]), own, ownsize);
	if (n > 0)
		read_caller(s, first, paths[0], uid, ret_caller);
	*ret_n = (size_t)n;
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

static void on_run_made(void *userdata, int r, const char *path)
{
	struct conn *c = userdata;
	const struct mg_place_verdict *v = &c->pending.v;
	char limit[MG_SIZE_STRLEN];

	if (r < 0) {
		reply(c, "err cannot make a cgroup for the run: %s", strerror(-r));
	} else {
		log_info("placed pid %d of uid %u in %s (limit: %s)", (int)c->cred.pid, (unsigned)c->cred.uid,
		         path, v->why);
		if (v->limit == MG_SIZE_UNLIMITED)
			snprintf(limit, sizeof(limit), "max");
		else
			snprintf(limit, sizeof(limit), "%" PRIu64, v->limit);
		reply(c, "ok run %s %s %s", path, limit,
		      c->pending.limit_from[0] ? c->pending.limit_from : "-");
	}
	c->awaiting = false;
	if (!c->handling)
		conn_free(c);
}

/* Hands the caller to the runs, which answer through on_run_made. */
static void place_in_run(struct conn *c, const struct mg_place_verdict *v,
                         const struct mg_place_origin *chain, int pidfd, uint64_t start)
{
	char why[512];
	int r;

	c->pending.v = *v;
	snprintf(c->pending.limit_from, sizeof(c->pending.limit_from), "%s",
	         v->limit_from >= 0 ? chain[v->limit_from].path : "");
	c->awaiting = true;
	r = mg_runs_create(c->svc->runs, &c->cred, pidfd,
	                   &(struct mg_run_spec){
	                           .start = start,
	                           .parent = chain[v->parent].path,
	                           .tether = chain[0].path,
	                           .taken = c->pending.taken,
	                           .limit = v->limit,
	                   },
	                   on_run_made, c, why, sizeof(why));
	if (r < 0) {
		c->awaiting = false;
		log_info("placement for pid %d of uid %u refused: %s", (int)c->cred.pid,
		         (unsigned)c->cred.uid, why);
		reply(c, "err %s", why);
	}
}

static void place_in_job(struct conn *c, const char *job, int pidfd)
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
	/* Still the process we pinned: a pid recycled meanwhile would have moved a stranger. */
	if ((r = mg_pidfd_signal(pidfd, 0)) < 0) {
		mg_log(LOG_CRIT,
		       "placing pid %d of uid %u in %s: the caller exited, and pid %d, now in that job's "
		       "cgroup, may be another process's: %s",
		       (int)c->cred.pid, (unsigned)c->cred.uid, path, (int)c->cred.pid, strerror(-r));
		return reply(c, "err the caller exited while it was placed");
	}
	log_info("placed pid %d of uid %u in %s", (int)c->cred.pid, (unsigned)c->cred.uid, path);
	reply(c, "ok job %s/%s", MG_PLACE_JOBS_PARENT, job);
}

static void handle(struct conn *c)
{
	static char chain_paths[MG_PLACE_CHAIN_MAX][MG_PLACE_PATH_MAX], job_names[MAX_JOBS][72];
	static struct mg_place_origin chain[MG_PLACE_CHAIN_MAX];
	static struct mg_place_job jobs[MAX_JOBS];
	static char own[256];
	struct mg_placesvc *s = c->svc;
	struct mg_place_request req = {
	        .uid = c->cred.uid, .max_runs_per_uid = s->max_runs_per_uid, .beside = s->beside};
	struct mg_place_verdict v;
	uint64_t start;
	size_t n = 0;
	int r;

	own[0] = '\0';
	if (mg_place_parse_request(c->buf, &req.job_hint, &c->pending.taken) < 0)
		return reply(c, "err bad request: expected \"place[ job=ID][ budget=BYTES]\"");
	_cleanup_close_ int pidfd = pin_peer(s, &c->cred, &start);
	if (pidfd < 0)
		return reply(c, "err cannot identify the caller (pid %d): %s", (int)c->cred.pid,
		             strerror(-pidfd));
	if ((r = read_chain(s, c->cred.pid, c->cred.uid, chain_paths, chain, &n, own, sizeof(own),
	                    &req.who)) < 0)
		return reply(c, "err cannot read the caller's cgroup: %s", strerror(-r));
	struct job_scan js = {.jobs = jobs, .names = job_names};
	_cleanup_close_ int jobsfd = mg_cg_open(s->mountfd, MG_PLACE_JOBS_PARENT);
	if (jobsfd >= 0)
		(void)mg_cg_for_each_child(jobsfd, add_job, &js);
	req.runs_of_uid = mg_runs_of_uid(s->runs, c->cred.uid);
	switch (mg_place_decide(&req, chain, n, jobs, js.n, &v)) {
	case MG_PLACE_REFUSE:
		log_info("placement for pid %d of uid %u refused: %s", (int)c->cred.pid,
		         (unsigned)c->cred.uid, v.why);
		return reply(c, "err %s", v.why);
	case MG_PLACE_JOB:
		return place_in_job(c, jobs[v.job].name, pidfd);
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
	if (memchr(c->buf, '\n', c->len)) {
		c->handling = true;
		handle(c);
		c->handling = false;
		if (c->awaiting)
			return 0; /* the runs answer it later */
	} else if (c->len == sizeof(c->buf) - 1)
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
	                                    on_conn_timeout, c)) < 0 ||
	    (r = sd_event_source_set_priority(c->timer, SVC_PRIORITY)) < 0) {
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

int mg_placesvc_start(sd_event *event, int mountfd, int procfd, const struct mg_placesvc_config *cfg,
                      struct mg_placesvc **ret)
{
	struct mg_placesvc *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	*s = (struct mg_placesvc){.event = sd_event_ref(event), .mountfd = mountfd, .procfd = procfd};
	snprintf(s->mount, sizeof(s->mount), "%s", cfg->mount);
	snprintf(s->beside, sizeof(s->beside), "%s", cfg->beside);
	s->max_runs_per_uid = cfg->max_runs_per_uid;
	s->watches = cfg->watches;
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
	struct mg_runs_config rc = {.event = event,
	                            .mountfd = mountfd,
	                            .procfd = procfd,
	                            .mount = cfg->mount,
	                            .registry = cfg->registry,
	                            .watch_fd = cfg->watch_fd,
	                            .watches = cfg->watches,
	                            .grace_usec = cfg->grace_usec};
	if ((r = mg_runs_new(&rc, &s->runs)) < 0) {
		mg_placesvc_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void mg_placesvc_configure(struct mg_placesvc *s, uint64_t grace_usec, unsigned max_runs_per_uid,
                           const char *beside)
{
	if (s->runs)
		mg_runs_set_grace(s->runs, grace_usec);
	s->max_runs_per_uid = max_runs_per_uid;
	snprintf(s->beside, sizeof(s->beside), "%s", beside);
}

size_t mg_placesvc_runs(const struct mg_placesvc *s, const char **ret, size_t max)
{
	return s && s->runs ? mg_runs_paths(s->runs, ret, max) : 0;
}

void mg_placesvc_free(struct mg_placesvc *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < MAX_CONNS; i++)
		conn_free(s->conns[i]);
	mg_runs_free(s->runs);
	sd_event_source_disable_unref(s->listen_src);
	if (s->listen_fd >= 0 && s->listen_fd != SD_LISTEN_FDS_START)
		close(s->listen_fd);
	if (s->own_socket)
		(void)unlink(s->socket_path);
	sd_event_unref(s->event);
	free(s);
}
