/* Process table snapshots from /proc/<pid>/stat, for the RSS watchdog that
 * guards tasks when no cgroup can. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mg_proc {
	pid_t pid, ppid, pgrp;
	char state;
	uint64_t rss_pages;
	char comm[16];
};

/* Parses one stat line. comm may hold spaces and ')' ("foo) Z "): the last
 * ')' ends it. Returns -EBADMSG on truncated or garbled text. */
int mg_proc_stat_parse(const char *text, struct mg_proc *ret);

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

/* Field 22 of a stat line: when the process started, in clock ticks since
 * boot. With its pid it names a process across pid reuse. */
int mg_proc_stat_start_time_parse(const char *text, uint64_t *ret);

/* Reads <procfd>/<pid>/stat and parses its start time. */
int mg_proc_start_time(int procfd, pid_t pid, uint64_t *ret);
