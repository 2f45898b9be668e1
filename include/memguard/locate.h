/* Where the cgroup v2 memory controller lives. libcgroup finds the mounts
 * across v1, v2 and hybrid layouts; everything after that uses dirfds. */
#pragma once

#include <stdbool.h>

struct mg_cgroup_mount {
	char *path;   /* mount point of the hierarchy that has the memory controller */
	bool unified; /* true when that hierarchy is cgroup v2 */
};

/* Finds the memory controller's mount. -ENOENT when no hierarchy carries it
 * (reason logged by the caller from the return). The caller frees ret->path. */
int mg_cgroup_find_memory_mount(struct mg_cgroup_mount *ret);

void mg_cgroup_mount_done(struct mg_cgroup_mount *m);
