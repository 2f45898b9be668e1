/* The placed runs' lives: a run's cgroup made beside its caller's own
 * cgroup (place.h says where), delegated to its user, tethered to the
 * caller's cgroup (frozen with it, ended with it), and removed when its
 * launcher is gone. What memguardd
 * must know of a run is kept in trusted.* xattrs on its cgroup and in a
 * registry file of root's, so a restarted memguardd finds and adopts it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "place/watches.h"

struct mg_runs;

/* The most runs memguardd keeps, of all users. */
#define MG_RUNS_MAX 1024
/* The longest path below the mount a run's cgroup may have, with its NUL. */
#define MG_RUN_PATH_MAX 640

struct mg_runs_config {
	sd_event *event;
	int mountfd, procfd; /* the caller's; kept open by it */
	const char *mount;
	const char *registry;       /* a directory of root's: one file per run, for the next memguardd */
	int watch_fd;               /* the guard's inotify: a new run's directory is watched there */
	struct mg_watches *watches; /* memguardd's inotify watches per uid: a run holds two */
	uint64_t grace_usec;
};

/* Sets up, then adopts the runs a previous memguardd left: those in the
 * registry, and those below MG_PLACE_RUNS_PARENT and MG_PLACE_SLICE. */
int mg_runs_new(const struct mg_runs_config *cfg, struct mg_runs **ret);
void mg_runs_free(struct mg_runs *runs);
void mg_runs_set_grace(struct mg_runs *runs, uint64_t grace_usec);

/* Runs of uid now, starting or running. */
unsigned mg_runs_of_uid(const struct mg_runs *runs, uid_t uid);

/* Runs now whose tether is the cgroup at tether (below the mount). */
unsigned mg_runs_of_tether(const struct mg_runs *runs, const char *tether);

/* Looks below cgfd (16 levels, 1,024 cgroups and 4,096 processes at most: a
 * user can make their own without end) for a process whose real uid, or with
 * effective its effective uid too, is not uid. Returns 1 with its pid, 0 when
 * there is none, -errno when that cannot be told (-E2BIG past the bounds). */
int mg_runs_find_stranger(int procfd, int cgfd, uid_t uid, bool effective, pid_t *ret_pid);

/* Where the process at a pid was just before memguardd moved that pid, as
 * /proc said: its cgroup (below the mount, NULL when unknown) and its start
 * time. */
struct mg_run_origin {
	const char *path;
	uint64_t start;
};

/* After memguardd moved pid into leaf (a cgroup fd below mountfd) and the
 * caller's pidfd said the caller was gone: a process still at pid in leaf
 * is a stranger that took the caller's pid. It goes back where it was:
 * before->path when it is the process that was there then (the same start
 * time), else its parent's cgroup, where it started. Returns 1 with that
 * cgroup in ret_where, 0 when leaf holds no such process, or -errno. */
int mg_runs_move_back(int mountfd, int procfd, int leaf, pid_t pid, const struct mg_run_origin *before,
                      char *ret_where, size_t size);

/* The cgroups (below the mount) of the runs now, at most max of them in
 * ret, valid until the runs change. Returns how many. */
size_t mg_runs_paths(const struct mg_runs *runs, const char **ret, size_t max);

/* Whether memguardd set the memory.max of the cgroup at path (below the
 * mount): a run beside it takes a part of the job's limit, and the caller's
 * cgroup keeps the rest (mg_place_caller_limit). Such a limit is memguardd's,
 * not the caller's own. */
bool mg_runs_keep_caller(const struct mg_runs *runs, const char *path);

/* Called once per mg_runs_create: r < 0 when the run could not be made,
 * else path is the run's cgroup below the mount. */
typedef void (*mg_run_done_t)(void *userdata, int r, const char *path);

/* What a new run is to be, from mg_place_decide's verdict. */
struct mg_run_spec {
	uint64_t start;     /* the caller's start time, for adoption */
	const char *parent; /* the cgroup the run goes in, below the mount */
	const char *tether; /* the cgroup the run ends with (the caller's), below the mount */
	uint64_t taken;     /* what the run hands its tasks in all (the launcher's word), 0 if not said */
	uint64_t limit;     /* the job's limit above the run and its tether, MG_SIZE_UNLIMITED if none */
};

/* Makes a run for the caller (pinned by pidfd, which is taken) as spec says:
 * tethers it (a tether that cannot be watched refuses the run), records it,
 * moves the caller into the run's supervisor leaf and calls done before it
 * returns. Returns 0, or -errno with the reason in why when done will not be
 * called (nothing was moved then). */
int mg_runs_create(struct mg_runs *runs, const struct ucred *cred, int pidfd, const struct mg_run_spec *spec,
                   mg_run_done_t done, void *userdata, char *why, size_t whysize);
