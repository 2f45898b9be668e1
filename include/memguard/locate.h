/* Where the memory controller lives: the mount found in /proc/self/mountinfo.
 * Everything after that uses dirfds. */
#pragma once

#include <stdbool.h>

struct mg_cgroup_mount {
	char *path;   /* mount point of the hierarchy that has the memory controller */
	bool unified; /* true when that hierarchy is cgroup v2 */
};

/* The cgroup mounts listed in a mountinfo text: the first cgroup2 mount of
 * the hierarchy's root (else of a subtree, a bind mount), and the first v1
 * mount whose super options include "memory". Either is NULL when there is
 * none; the caller frees both. Pure: tests feed it text. */
struct mg_cgroup_mounts {
	char *v2;
	bool v2_is_root; /* v2 shows the whole hierarchy, not a subtree */
	char *v1_memory;
};
int mg_mountinfo_parse_cgroups(const char *text, struct mg_cgroup_mounts *ret);
void mg_cgroup_mounts_done(struct mg_cgroup_mounts *m);

/* Finds the memory controller's mount from procfd's self/mountinfo: the
 * cgroup2 mount when its cgroup.controllers lists memory, else the v1 memory
 * mount. -ENOENT when no hierarchy carries it. The caller frees ret->path
 * with mg_cgroup_mount_done(). */
int mg_cgroup_find_memory_mount(int procfd, struct mg_cgroup_mount *ret);

void mg_cgroup_mount_done(struct mg_cgroup_mount *m);
