/* The cgroups memguardd may act on: those matching the configured globs
 * below the cgroup mount (by default the launcher's memguard/run-* /task-*),
 * minus any holding a protected process. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "policy.h"

struct mg_scope_entry {
	char path[512];         /* below the mount, e.g. "memguard/run-42/task-3" */
	struct mg_guarded snap; /* snap.path points at path */
	uint64_t prev_current, prev_usec;
};

/* Expands the space-separated globs (relative to mount) into cgroup paths.
 * Returns the count written into ret (at most max), or -errno. */
int mg_scope_expand(const char *mount, const char *globs, char (*ret)[512], size_t max);

/* Reads one guarded cgroup: memory.current, populated, the share (xattr
 * user.memguard.share, else memory.max when set). growth is computed from
 * the entry's previous reading. */
int mg_scope_read(int mountfd, struct mg_scope_entry *e, uint64_t now_usec);

/* 1 when a process in the cgroup subtree has a comm in the space-separated
 * names list, 0 when none, -errno. procfd is an fd for /proc. */
int mg_scope_holds_protected(int cgfd, int procfd, const char *names);
