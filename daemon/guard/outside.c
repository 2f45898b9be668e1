/* KILL_OUTSIDER carried out. From the top-level cgroup to blame it descends
 * to where the memory is, the child holding the most outside the guard at
 * each level, so that one user's or job's many small processes do not cost
 * another's single large one. There, past the guarded and the protected
 * cgroups, the process with the highest OOM score is killed, as the kernel's
 * OOM killer would kill it, only sooner; with it its memory.oom.group, as the
 * kernel's would. A unit the service guard watches is restarted instead,
 * through systemd, when the walk comes to it (service/service.h). */
#include "guard/outside.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard/act.h"
#include "guard/guards.h"
#include "memguard/cgroup.h"
#include "memguard/log.h"
#include "memguard/procstat.h"
#include "memguard/util.h"
#include "service/service.h"

struct outside_scan {
	struct mg_guard *d;
	const struct mg_protect *protect;
	pid_t self;
	long page_size;
	char path[512];  /* the cgroup being walked, below the mount, or its deepest ancestor that fits */
	unsigned unheld; /* levels walked below path that did not fit in it */
	bool found;      /* the worst process so far: */
	struct mg_outside_proc worst;
	pid_t pid;
	uint64_t start_time;
	char comm[sizeof(((struct mg_proc *)0)->comm)];
	char cgroup[512];
	bool cgroup_unheld; /* the worst is below cgroup, at a path too long to name */
	bool restart;       /* the walk came to a watched unit, at path: restart it, kill nothing */
};

/* Whether memguardd never kills in the cgroup at path: guarded (within its
 * share, or the verdict would be its own), protected, or a unit the
 * service guard restarts rather than see killed. */
static bool spared(const struct outside_scan *os, const char *path)
{
	return guards_contains(os->d, path) || mg_protect_match_cgroup(os->protect, path) ||
	       mg_services_spares(os->d->services, path);
}

/* Appends name to os->path, or counts a level that does not fit: a path
 * too long to hold is walked all the same, by its fds, under the deepest
 * ancestor that fits. Nothing guarded lies there (a guarded path fits), and
 * every protected ancestor was seen on the way down. Returns whether it
 * appended; leave() undoes either. */
static bool enter(struct outside_scan *os, const char *name)
{
	size_t len = strlen(os->path);

	if (os->unheld || len + 1 + strlen(name) >= sizeof(os->path)) {
		os->unheld++;
		return false;
	}
	snprintf(os->path + len, sizeof(os->path) - len, "/%s", name);
	return true;
}

static void leave(struct outside_scan *os, bool appended)
{
	if (!appended) {
		os->unheld--;
		return;
	}
	char *slash = strrchr(os->path, '/');
	if (slash)
		*slash = '\0';
}

static int read_int_at(int procfd, pid_t pid, const char *file, int *ret)
{
	char path[64], buf[32];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/%s", (int)pid, file);
	if ((n = mg_read_small_at(procfd, path, buf, sizeof(buf))) <= 0)
		return n < 0 ? (int)n : -ENODATA;
	char *end;
	errno = 0;
	long v = strtol(buf, &end, 10);
	if (end == buf || errno)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

static int weigh_process(pid_t pid, void *userdata)
{
	struct outside_scan *os = userdata;
	int procfd = os->d->procfd;
	char path[32], stat[1024];
	struct mg_proc proc;
	struct mg_outside_proc p = {0};

	if (pid == os->self)
		return 0;
	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	if (mg_read_small_at(procfd, path, stat, sizeof(stat)) <= 0 || mg_proc_stat_parse(stat, &proc) < 0 ||
	    read_int_at(procfd, pid, "oom_score", &p.oom_score) < 0 ||
	    read_int_at(procfd, pid, "oom_score_adj", &p.oom_score_adj) < 0)
		return 0; /* gone */
	p.rss = proc.rss_pages * (uint64_t)os->page_size;
	p.init_or_kernel = mg_policy_init_or_kernel(pid, proc.ppid);
	if (!mg_policy_outside_eligible(&p) || (os->found && !mg_policy_outside_worse(&p, &os->worst)))
		return 0;
	/* Only a candidate pays for the exe check. */
	p.protected_ = mg_scope_pid_protected(procfd, os->protect, pid);
	if (!mg_policy_outside_eligible(&p))
		return 0;
	os->found = true;
	os->worst = p;
	os->pid = pid;
	os->start_time = proc.start_time;
	snprintf(os->comm, sizeof(os->comm), "%s", proc.comm);
	snprintf(os->cgroup, sizeof(os->cgroup), "%s", os->path);
	os->cgroup_unheld = os->unheld > 0;
	return 0;
}

static int weigh_cgroup(int cgfd, const char *name, void *userdata)
{
	struct outside_scan *os = userdata;
	bool appended = enter(os, name);

	/* Guarded cgroups are within their share (else the verdict would be
	 * theirs); protected ones are never touched, watched units restarted. */
	if (!appended || !spared(os, os->path)) {
		(void)mg_cg_for_each_pid(cgfd, weigh_process, os);
		(void)mg_cg_for_each_child(cgfd, weigh_cgroup, os);
	}
	leave(os, appended);
	return 0;
}

struct heaviest {
	const struct outside_scan *os;
	const struct mg_guarded *g;
	size_t n;
	char name[256]; /* the heaviest child so far, "" for none */
	uint64_t current;
	bool restart; /* it is a unit the service guard restarts */
};

static int weigh_child(int cgfd, const char *name, void *userdata)
{
	struct heaviest *h = userdata;
	char path[sizeof(h->os->path)];
	uint64_t current;
	/* A path that does not fit holds nothing guarded (enter()). */
	bool held = !h->os->unheld &&
	            snprintf(path, sizeof(path), "%s/%s", h->os->path, name) < (int)sizeof(path);

	if (strlen(name) >= sizeof(h->name) ||
	    (held && (guards_contains(h->os->d, path) || mg_protect_match_cgroup(h->os->protect, path))) ||
	    mg_cg_read_u64(cgfd, "memory.current", &current) < 0)
		return 0; /* without a memory controller it accounts nothing of its own */
	if (held)
		current = mg_policy_unguarded(path, current, h->g, h->n);
	if (current > h->current) {
		snprintf(h->name, sizeof(h->name), "%s", name);
		h->current = current;
		h->restart = held && mg_services_spares(h->os->d->services, path);
	}
	return 0;
}

/* Walks the subtree at os->path (open as cgfd) for the worst process. */
static void weigh_subtree(struct outside_scan *os, int cgfd)
{
	(void)mg_cg_for_each_pid(cgfd, weigh_process, os);
	(void)mg_cg_for_each_child(cgfd, weigh_cgroup, os);
}

/* Down from os->path (open as *cgfd) through the heaviest child while there
 * is one, leaving os->path and *cgfd there. A cgroup with children that
 * account memory holds no process itself (cgroup v2's rule outside the root).
 * A heaviest child that is a watched unit ends the walk there, with
 * os->restart set. */
static void descend(struct outside_scan *os, int *cgfd, const struct mg_guarded *g, size_t n)
{
	for (;;) {
		struct heaviest h = {.os = os, .g = g, .n = n};
		(void)mg_cg_for_each_child(*cgfd, weigh_child, &h);
		if (!h.name[0])
			return;
		int fd = mg_cg_open(*cgfd, h.name);
		if (fd < 0)
			return; /* gone: its parent's walk covers the rest */
		close(*cgfd);
		*cgfd = fd;
		(void)enter(os, h.name);
		if ((os->restart = h.restart))
			return;
	}
}

/* The kernel's OOM killer takes a victim's whole group when its cgroup or an
 * ancestor below the root sets memory.oom.group: the highest such one. Sets
 * group (below the mount) and returns 1 for one at or below top, else 0. */
static int oom_group_of(int mountfd, const char *top, const char *cgroup, char *group, size_t size)
{
	char path[sizeof(((struct outside_scan *)0)->path)];
	size_t len = strlen(top);
	int found = 0;
	uint64_t set;

	snprintf(path, sizeof(path), "%s", cgroup);
	for (;;) {
		_cleanup_close_ int fd = mg_cg_open(mountfd, path);
		if (fd >= 0 && mg_cg_read_u64(fd, "memory.oom.group", &set) == 0 && set &&
		    size > strlen(path)) {
			snprintf(group, size, "%s", path); /* and on up: the highest one counts */
			found = 1;
		}
		char *slash = strrchr(path, '/');
		if (!slash || (size_t)(slash - path) < len)
			return found;
		*slash = '\0';
	}
}

/* 0 for a process that may die with its group, -ECANCELED for one memguardd
 * never kills (protected, oom_score_adj -1000, itself), or -errno. */
static int check_process(pid_t pid, void *userdata)
{
	const struct outside_scan *os = userdata;
	struct mg_outside_proc p = {0};
	int r;

	if (pid == os->self)
		return -ECANCELED;
	if ((r = read_int_at(os->d->procfd, pid, "oom_score_adj", &p.oom_score_adj)) < 0)
		return r == -ENOENT || r == -ESRCH ? 0 : r; /* gone: nothing to spare */
	p.protected_ = mg_scope_pid_protected(os->d->procfd, os->protect, pid);
	return mg_policy_outside_eligible(&p) ? 0 : -ECANCELED;
}

/* The same for a cgroup in the group: itself (guarded, protected), its
 * processes and its children. */
static int check_cgroup(int cgfd, const char *name, void *userdata)
{
	struct outside_scan *os = userdata;
	size_t len = strlen(os->path);
	int r;

	if (len + 1 + strlen(name) >= sizeof(os->path))
		return -ENAMETOOLONG;
	snprintf(os->path + len, sizeof(os->path) - len, "/%s", name);
	if (spared(os, os->path))
		r = -ECANCELED;
	else if ((r = mg_cg_for_each_pid(cgfd, check_process, os)) == 0)
		r = mg_cg_for_each_child(cgfd, check_cgroup, os);
	os->path[len] = '\0';
	return r;
}

/* Whether group may be killed whole: nothing in it is what memguardd never
 * kills, as far as it can tell. */
static bool group_killable(const struct outside_scan *os, int mountfd, const char *group)
{
	struct outside_scan check = {.d = os->d, .protect = os->protect, .self = os->self};
	_cleanup_close_ int fd = mg_cg_open(mountfd, group);

	if (fd < 0)
		return false;
	snprintf(check.path, sizeof(check.path), "%s", group);
	return mg_cg_for_each_pid(fd, check_process, &check) == 0 &&
	       mg_cg_for_each_child(fd, check_cgroup, &check) == 0;
}

/* What snprintf's result len left in a buffer of size bytes. */
static size_t written(int len, size_t size)
{
	return len < 0 ? 0 : (size_t)len < size ? (size_t)len : size - 1;
}

int outside_kill(struct mg_guard *d, const char *top, const struct mg_guarded *g, size_t n, const char *why,
                 uint64_t decided_usec)
{
	static struct outside_scan os;
	/* The root's own processes: its children are outsiders of their own. */
	bool root = strcmp(top, MG_ROOT_CGROUP) == 0;
	_cleanup_close_ int cgfd = mg_cg_open(d->mountfd, root ? "." : top);

	if (cgfd < 0)
		return cgfd == -ENOENT ? 0 : cgfd;
	os = (struct outside_scan){
	        .d = d,
	        .protect = mg_scope_protect(d->cfg.protect, NULL),
	        .self = getpid(),
	        .page_size = sysconf(_SC_PAGESIZE),
	};
	snprintf(os.path, sizeof(os.path), "%s", top);
	if (mg_protect_match_cgroup(os.protect, top))
		return 0;
	if (root) {
		(void)mg_cg_for_each_pid(cgfd, weigh_process, &os);
	} else {
		os.restart = mg_services_spares(d->services, top);
		if (!os.restart)
			descend(&os, &cgfd, g, n);
		/* A watched unit is restarted, not killed in (unless it no longer may be). */
		if (os.restart && mg_services_restart_for(d->services, os.path, why) > 0)
			return 2;
		weigh_subtree(&os, cgfd);
	}
	if (!os.found && (os.unheld || strcmp(os.path, top) != 0)) {
		/* Nothing there may be killed: the worst of the whole top. */
		close(cgfd);
		if ((cgfd = mg_cg_open(d->mountfd, top)) < 0)
			return cgfd == -ENOENT ? 0 : cgfd;
		snprintf(os.path, sizeof(os.path), "%s", top);
		os.unheld = 0;
		weigh_subtree(&os, cgfd);
	}
	if (!os.found)
		return 0;

	char reason[1024];
	int len = snprintf(reason, sizeof(reason),
	                   "%s; its process %d (%s) has the highest OOM score there (%d)", why, (int)os.pid,
	                   os.comm, os.worst.oom_score);
	size_t used = written(len, sizeof(reason));
	if (os.cgroup_unheld)
		used += written(snprintf(reason + used, sizeof(reason) - used,
		                         ", in a cgroup below %s too deep to name", os.cgroup),
		                sizeof(reason) - used);
	struct mg_kill_record rec = {
	        .path = os.cgroup,
	        .current = os.worst.rss,
	        .why = reason,
	        .dry_run = d->policy.dry_run,
	        .decided_usec = decided_usec,
	};
	static char group[sizeof(os.path)];
	if (!root && oom_group_of(d->mountfd, top, os.cgroup, group, sizeof(group)) > 0) {
		if (group_killable(&os, d->mountfd, group)) {
			_cleanup_close_ int fd = mg_cg_open(d->mountfd, group);
			if (fd >= 0)
				(void)mg_cg_read_u64(fd, "memory.current", &rec.current);
			snprintf(reason + used, sizeof(reason) - used,
			         ", and %s, which sets memory.oom.group, dies whole as with the kernel",
			         group);
			rec.path = group;
			int r = mg_act_kill(d->mountfd, &rec, d->cfg.kill_log);
			return r < 0 ? r : 1;
		}
		snprintf(
		        reason + used, sizeof(reason) - used,
		        " (%s sets memory.oom.group but holds what memguardd never kills: this process only)",
		        group);
	}
	int r = mg_act_kill_process(d->procfd, os.pid, os.start_time, os.comm, &rec, d->cfg.kill_log);
	return r < 0 ? r : 1;
}
