/* cgroup v2 through directory fds.
 *
 * Every function takes an fd for a cgroup directory (opened once by the
 * caller, from the real mount or from a fake tree in tests) and names files
 * relative to it. No path to the cgroup mount is written here. Where a path
 * argument exists it is only used in messages. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct mg_memory_events {
	uint64_t low, high, max, oom, oom_kill, oom_group_kill;
};

/* Calls fn for each child cgroup of cgfd with an fd for it (closed after the
 * call). Stops at the first fn result != 0 and returns it; children that
 * vanish meanwhile are skipped. */
int mg_cg_for_each_child(int cgfd, int (*fn)(int childfd, const char *name, void *userdata), void *userdata);

/* Calls fn for each pid in cgfd's cgroup.procs (this cgroup only). Stops at
 * the first fn result != 0 and returns it. */
int mg_cg_for_each_pid(int cgfd, int (*fn)(pid_t pid, void *userdata), void *userdata);

/* Opens a cgroup directory (O_RDONLY|O_DIRECTORY) relative to dirfd. */
int mg_cg_open(int dirfd, const char *path);

/* Creates dirfd/name and returns an fd for it. An existing one is -EEXIST. */
int mg_cg_create(int dirfd, const char *name);

/* Removes dirfd/name and every child cgroup below it, deepest first. A
 * missing cgroup counts as removed. -EBUSY while processes remain. */
int mg_cg_remove(int dirfd, const char *name);

/* True when cgfd's cgroup.controllers lists controller. */
int mg_cg_has_controller(int cgfd, const char *controller);

/* Enables controllers ("memory pids") for cgfd's children. Returns 0, or
 * -ENOENT for a controller missing from cgfd/cgroup.controllers, -EBUSY when
 * cgfd itself holds processes (no internal processes rule), -EINVAL for a
 * name too long, or the -errno of a failed read or write. On failure a
 * one-line reason goes to err (when err is not NULL); nothing is logged:
 * the caller decides how loud it is. cgpath is only for messages. */
int mg_cg_enable_controllers(int cgfd, const char *cgpath, const char *controllers, char *err,
                             size_t errsize);

/* Writes one cgroup file in one write(). Returns 0 or -errno; on failure a
 * one-line reason goes to err (when not NULL), naming what is really missing
 * for ENOENT/EACCES/EPERM on a controller file ("controller memory not
 * enabled in the parent of ..."). Logs nothing. cgpath is for messages. */
int mg_cg_write(int cgfd, const char *cgpath, const char *file, const char *value, char *err, size_t errsize);

/* Writes a size, as "max" for MG_SIZE_UNLIMITED: mg_cg_write() otherwise. */
int mg_cg_write_size(int cgfd, const char *cgpath, const char *file, uint64_t bytes, char *err,
                     size_t errsize);

/* Reads a one-number file such as memory.current; "max" is MG_SIZE_UNLIMITED. */
int mg_cg_read_u64(int cgfd, const char *file, uint64_t *ret);

/* Reads one key of a flat-keyed file (memory.stat, cgroup.events). */
int mg_cg_read_key(int cgfd, const char *file, const char *key, uint64_t *ret);

int mg_memory_events_parse(const char *text, struct mg_memory_events *ret);
int mg_cg_read_memory_events(int cgfd, struct mg_memory_events *ret);

/* 1 when processes remain anywhere below cgfd, 0 when empty. */
int mg_cg_populated(int cgfd);

/* Moves pid into cgfd's cgroup. */
int mg_cg_move_pid(int cgfd, pid_t pid);

/* SIGKILLs every process in the subtree: cgroup.kill where the kernel has it
 * (5.14+), else freeze, kill each pid, and always thaw (a freeze that fails
 * leaves the kill unfrozen). Returns the number of processes signalled by the
 * fallback, or 0; an empty or vanished cgroup is 0. Says at debug level which
 * way it went ("kill: ..."). */
int mg_cg_kill(int cgfd);

/* Parses /proc/<pid>/cgroup text and returns the cgroup v2 ("0::") path. */
int mg_proc_cgroup_parse(const char *text, char **ret_path);

/* Reads <procfd>/<pid>/cgroup and returns the v2 path of pid (0 = self). */
int mg_cg_pid_path(int procfd, pid_t pid, char **ret_path);

/* Parses /proc/<pid>/cgroup text for a cgroup v1 controller's path
 * ("4:memory:/job/1" -> "/job/1"; "2:cpu,cpuacct:/x" matches "cpu"). */
int mg_proc_cgroup_v1_parse(const char *text, const char *controller, char **ret_path);

/* The smallest limit in file (memory.max, or memory.limit_in_bytes on v1) of
 * path and each of its ancestors below mountfd. ret_at gets the path of the
 * cgroup that sets it (heap string) or NULL when none is limited; the
 * limit is MG_SIZE_UNLIMITED then. */
int mg_cg_ancestor_limit(int mountfd, const char *path, const char *file, uint64_t *ret_limit, char **ret_at);
