/* Where the launcher's cgroups go: under memguard's own cgroup as root, or
 * inside a delegated subtree as any user. Everything after the mount lookup
 * works on directory fds. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "memguard/config.h"
#include "memguard/locate.h"

struct mg_placement {
	int mountfd;             /* the cgroup2 mount */
	int runfd;               /* this run's cgroup, holding one child per task */
	char mount[PATH_MAX];    /* for messages */
	char run[PATH_MAX + 80]; /* path of runfd below the mount, for messages and the report */
	char run_name[64];       /* basename of run */
	int basefd;              /* parent of run */
	bool placed;             /* the run is a cgroup memguardd made for us: it removes it */
	char placed_by[640];     /* "placed by memguardd ...", or "" */
	uint64_t budget;         /* set before setup: what the run hands out in all, for memguardd */
};

#define MG_PLACEMENT_INIT                                                                                    \
	{                                                                                                    \
		.mountfd = -1, .runfd = -1, .basefd = -1                                                     \
	}

/* Who may make the run's cgroup: memguard itself (as root, or inside a
 * delegated subtree), memguardd's placement service, or whichever applies
 * (memguardd where systemd is PID 1 or nothing is delegated to us). */
enum mg_place_how { MG_PLACE_ANY, MG_PLACE_OWN, MG_PLACE_DAEMON };

/* Sets up this run's cgroup on the memory controller's mount m. procfd is
 * an fd for /proc; cgroup_parent (may be NULL) overrides where it goes.
 * Returns 0, or -errno with a one-line reason in why (the caller then runs
 * degraded or fails). */
int mg_placement_setup(struct mg_placement *pl, int procfd, const struct mg_cgroup_mount *m,
                       const struct mg_config *cfg, const char *cgroup_parent, enum mg_place_how how,
                       char *why, size_t whysize);

/* Caps what the run's tasks may use together (memory.max and
 * memory.swap.max of the run's cgroup): whatever share mode the tasks have,
 * the kernel keeps them inside the budget, and an OOM kill stays inside the
 * run. */
int mg_placement_limit_run(struct mg_placement *pl, uint64_t max, uint64_t swap_max);

/* Creates the cgroup of one task with its limits and returns its fd. */
struct mg_task_limits {
	uint64_t share; /* recorded for memguardd as an xattr */
	uint64_t max, high, swap_max;
	bool oom_group;
};
int mg_placement_task_create(struct mg_placement *pl, const char *name, const struct mg_task_limits *lim);

/* What the next launcher knows of the launcher behind a run-<pid> cgroup. */
struct mg_run_owner {
	pid_t pid;          /* from the name run-<pid> */
	bool recorded;      /* trusted.memguard.launcher was read */
	pid_t recorded_pid; /* ... and what it says */
	uint64_t recorded_start;
	bool alive;     /* a process has that pid now */
	uint64_t start; /* its start time, when alive */
};

/* Whether the run's launcher is gone, so its cgroup is stale: no process
 * has the pid, or one does that is not the launcher which made the run (a
 * start time other than the recorded one). Alive with nothing recorded
 * (another user's launcher, an older memguard, a run being set up) is kept.
 * Pure. */
bool mg_placement_run_stale(const struct mg_run_owner *o);

/* The pid in a run cgroup's name, "run-<pid>": 0 with it, -EINVAL for any
 * other name. */
int mg_placement_run_pid(const char *name, pid_t *ret_pid);

/* Removes this run's cgroup (tasks' cgroups must be gone or empty). */
void mg_placement_teardown(struct mg_placement *pl);
