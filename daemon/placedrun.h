/* The placed runs' lives: a run's cgroup made by one of two backends
 * (cgroupfs directly, or a transient systemd scope over sd-bus where systemd
 * is PID 1 and so the single writer of the tree), then delegated to its
 * user, tethered to the job it came from, and removed when its launcher is
 * gone. What memguardd must know of a run is kept in trusted.* xattrs on
 * its cgroup, so a restarted memguardd adopts it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

struct mg_runs;

/* The most runs memguardd keeps, of all users. */
#define MG_RUNS_MAX 1024

struct mg_runs_config {
	sd_event *event;
	int mountfd, procfd; /* the caller's; kept open by it */
	const char *mount;
	uint64_t grace_usec;
	bool systemd; /* create runs as transient scopes over sd-bus */
};

/* Sets up (and connects to the system bus for the systemd backend), then
 * adopts the runs a previous memguardd left in either backend's parent. */
int mg_runs_new(const struct mg_runs_config *cfg, struct mg_runs **ret);
void mg_runs_free(struct mg_runs *runs);
void mg_runs_set_grace(struct mg_runs *runs, uint64_t grace_usec);
const char *mg_runs_backend(const struct mg_runs *runs);

/* Runs of uid now, finished or starting; their limit roots (mg_place_decide's,
 * "" for none) in ret_roots (room for MG_RUNS_MAX), valid until the runs
 * change. */
unsigned mg_runs_of_uid(const struct mg_runs *runs, uid_t uid, const char **ret_roots);

/* Called once per mg_runs_create: r < 0 when the run could not be made,
 * else path is the run's cgroup below the mount. */
typedef void (*mg_run_done_t)(void *userdata, int r, const char *path);

/* What a new run is to be, from mg_place_decide's verdict. */
struct mg_run_spec {
	uint64_t start;         /* the caller's start time, for adoption */
	uint64_t limit;         /* memory.max, MG_SIZE_UNLIMITED for none */
	const char *tether;     /* the cgroup the run ends with, below the mount; "" for none */
	const char *limit_root; /* the outermost cgroup whose limit it takes; "" for none */
};

/* Makes a run for the caller (pinned by pidfd, which is taken) as spec says,
 * moves it into the run's supervisor leaf, tethers it and calls done,
 * perhaps before it returns. Returns 0, or -errno when done will not be
 * called. */
int mg_runs_create(struct mg_runs *runs, const struct ucred *cred, int pidfd, const struct mg_run_spec *spec,
                   mg_run_done_t done, void *userdata);
