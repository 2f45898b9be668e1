/* Carrying out a decision: tell the owner why, kill the whole cgroup,
 * reclaim its memory at once, and record it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "guard/policy.h"

struct mg_kill_record {
	const char *path; /* below the mount */
	uint64_t current, share;
	const char *why;
	bool dry_run;
	uint64_t decided_usec; /* when the decision was taken (monotonic) */
};

/* How far mg_act_kill walks the victim's tree for pidfds before
 * cgroup.kill: its owner can nest and make cgroups without end, and each
 * level walked holds a directory open (in memory memguardd locks). At most
 * MG_KILL_WALK_DEPTH levels below the victim, and MG_KILL_WALK_CGROUPS
 * cgroups in all; cgroup.kill still kills the whole subtree.
 * mg_act_walk_within says whether a cgroup at depth, after cgroups walked,
 * is walked. */
#define MG_KILL_WALK_DEPTH 16
#define MG_KILL_WALK_CGROUPS 1024
bool mg_act_walk_within(unsigned depth, size_t cgroups);

/* Kills mountfd/rec->path: sets user.memguard.killed to the reason for the
 * launcher, opens pidfds (within the bounds above), cgroup.kill (or
 * freeze-kill-thaw), then process_mrelease on each. Returns the number of processes killed, 0 when
 * the cgroup is gone or empty, or -errno when the kill failed (logged, and
 * recorded in the kill log with "killed":0 and "error"). With dry_run only
 * logs. */
int mg_act_kill(int mountfd, const struct mg_kill_record *rec, const char *kill_log);

/* Kills one process outside the guard, pid as it was when it started at
 * start_time (a reused pid is left alone): pidfd, SIGKILL, process_mrelease,
 * then the same journal entry and kill log line as mg_act_kill, rec->path
 * being its cgroup. Returns 1 when killed (0 in a dry run, or when it is gone
 * or its pid was reused), or -errno. */
int mg_act_kill_process(int procfd, pid_t pid, uint64_t start_time, const char *comm,
                        const struct mg_kill_record *rec, const char *kill_log);

/* The throttle step, a fence rather than a squeeze: memory.high of
 * mountfd/path goes to current + allowance (what the node can still spare),
 * not below share, so the task may grow no further than that, and the xattr
 * trusted.memguard.fence keeps the memory.high it had (in the tree, so a
 * restarted daemon can undo it; trusted, so no user can fake a fence). Returns 1 when fenced, 0 when there is
 * nothing to lower (gone, or memory.high already at or below the fence), or
 * -errno. mg_act_unthrottle restores the saved memory.high ("max" without
 * one). mg_act_is_throttled: 1, 0 or -errno. */
int mg_act_throttle(int mountfd, const char *path, uint64_t current, uint64_t share, uint64_t allowance);
int mg_act_unthrottle(int mountfd, const char *path);
int mg_act_is_throttled(int mountfd, const char *path);

/* Raises the fence of mountfd/path by allowance above what it holds or its
 * memory.high, whichever is more, so a task that pushes against it while
 * the node has memory to spare can go on, and logs why; trusted.memguard.fence keeps the
 * memory.high from before the first fence. Returns 1 when raised, 2 when
 * that reaches the saved memory.high and the fence is lifted instead (as
 * mg_act_unthrottle), 0 when gone or there is nothing to raise, or -errno
 * (logged). */
int mg_act_widen(int mountfd, const char *path, uint64_t allowance, const char *why);

/* Appends one JSON line for rec to path, creating its directory; error < 0
 * adds "error" (a kill that failed). */
int mg_act_log_json(const char *path, const struct mg_kill_record *rec, int killed, uint64_t freed_usec,
                    int error);
