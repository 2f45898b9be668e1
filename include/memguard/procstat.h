/* Process table snapshots from /proc/<pid>/stat, for the RSS watchdog that
 * guards tasks when no cgroup can. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mg_proc {
	pid_t pid, ppid, pgrp;
	char state;
	uint64_t rss_pages;
	char comm[16];
	uint64_t start_time; /* clock ticks since boot: with pid, names a process */
	uint32_t task_tag;   /* 1 + MEMGUARD_TASK from its environ, 0 when not read */
};

/* A process the watchdog saw inside a task's tree, remembered so that it
 * stays with that task once its ppid chain is cut (a double fork re-parents
 * it to the launcher, a subreaper). */
struct mg_proc_seen {
	pid_t pid;
	uint64_t start_time;
	uint32_t task;
};

/* Parses one stat line. comm may hold spaces and ')' ("foo) Z "): the last
 * ')' ends it. Returns -EBADMSG on truncated or garbled text. */
int mg_proc_stat_parse(const char *text, struct mg_proc *ret);

/* The value of the field key ("Uid", "VmPeak") in a /proc/PID/status text: a
 * pointer past "key:" and its blanks, up to the end of the text; NULL when no
 * line starts with "key:". */
const char *mg_status_field(const char *text, const char *key);

/* Reads every numeric entry of procfd into a heap array sorted by pid.
 * Processes that vanish meanwhile are skipped. Returns the count, or -errno. */
int mg_proc_scan(int procfd, struct mg_proc **ret_procs);

/* The index in roots of the nearest root at or above pid, following ppid
 * links, or -1. procs must be sorted by pid. Pure. */
long mg_proc_root_of(const struct mg_proc *procs, size_t nprocs, const pid_t *roots, size_t nroots,
                     pid_t pid);

/* For each root pid, sums the RSS (pages) of the root and all its
 * descendants (by ppid) into ret_pages[i]. A process counts once, for the
 * nearest root above it. procs must be sorted by pid. Pure. */
void mg_proc_tree_rss(const struct mg_proc *procs, size_t nprocs, const pid_t *roots, size_t nroots,
                      uint64_t *ret_pages);

/* The task each process belongs to, into ret_task[i] for procs[i]: the index
 * of a root, or -1. Walking up from the process, the first that is a root,
 * or is in seen with the same start time, decides. A process whose parent is
 * reaper (the launcher) and that is not a root was orphaned out of some
 * task's tree: unless seen, its task_tag decides, and when only one root is
 * running (non-zero) it can only be that one's. seen must be sorted by pid
 * (mg_proc_seen_sort), procs by pid. Pure. */
void mg_proc_attribute(const struct mg_proc *procs, size_t nprocs, const pid_t *roots, size_t nroots,
                       pid_t reaper, const struct mg_proc_seen *seen, size_t nseen, long *ret_task);

/* Sorts seen by pid for mg_proc_attribute; find looks a pid up in the sorted
 * array (NULL when absent). */
void mg_proc_seen_sort(struct mg_proc_seen *seen, size_t nseen);
const struct mg_proc_seen *mg_proc_seen_find(const struct mg_proc_seen *seen, size_t nseen, pid_t pid);

/* Finds the first NAME=value in a NUL-separated environ block of size bytes
 * (as getenv; the last entry may lack its NUL): 0 with the value and its
 * length (not NUL-terminated), -ENODATA when absent. Pure. */
int mg_proc_environ_find(const char *block, size_t size, const char *name, const char **ret_value,
                         size_t *ret_len);

/* Whether the block's NAME is exactly value (not a prefix of it). Pure. */
bool mg_proc_environ_has(const char *block, size_t size, const char *name, const char *value);

/* Parses the value of MEMGUARD_TASK out of a NUL-separated environ block of
 * size bytes: 0 with the index, -ENODATA when absent or not a number. */
int mg_proc_environ_task(const char *block, size_t size, uint32_t *ret_task);

/* Field 22 of a stat line: when the process started, in clock ticks since
 * boot. With its pid it names a process across pid reuse. */
int mg_proc_stat_start_time_parse(const char *text, uint64_t *ret);

/* Reads <procfd>/<pid>/stat and parses its start time. */
int mg_proc_start_time(int procfd, pid_t pid, uint64_t *ret);

/* Reads <procfd>/<pid>/status: the real and effective uid. */
int mg_proc_uids(int procfd, pid_t pid, uid_t *ret_real, uid_t *ret_effective);

/* Reads <procfd>/<pid>/environ into *ret_block (heap, NUL-terminated):
 * returns its size, or -errno (-EACCES for another user's process). */
ssize_t mg_proc_read_environ(int procfd, pid_t pid, char **ret_block);

/* Reads <procfd>/<pid>/environ into ret_tag as a task_tag (1 + MEMGUARD_TASK).
 * -ENODATA without one; -EACCES for another user's process. */
int mg_proc_read_task_tag(int procfd, pid_t pid, uint32_t *ret_tag);
