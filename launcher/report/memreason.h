/* Whether a task that failed by itself had come near one of its memory
 * limits, so that its reason says so: a CPython task stopped by RLIMIT_AS
 * exits 1 with a MemoryError, which on its own says nothing of the limit. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "task.h"

/* Near: at least this percentage of the limit reached. */
#define MG_NEAR_PERCENT 90u

enum mg_near_limit {
	MG_NEAR_NONE,
	MG_NEAR_RLIMIT_AS,  /* its address-space limit */
	MG_NEAR_MEMORY_MAX, /* its cgroup's memory.max (the share, or the budget when elastic) */
	MG_NEAR_SHARE_RSS,  /* degraded mode: its share, against the watchdog's RSS */
};

struct mg_memreason {
	enum mg_near_limit near;
	uint64_t limit;      /* the limit it came near */
	uint64_t peak;       /* what it reached, when peak_known */
	bool peak_known;     /* false: only memory.max events tell (kernel < 5.19, no memory.peak) */
	unsigned percent;    /* peak * 100 / limit, rounded down (at most 999) */
	bool at_least;       /* sampled: the true peak may have been higher */
	uint64_t max_events; /* MG_NEAR_MEMORY_MAX: times the task hit memory.max */
	/* Memory is the likely cause: false near memory.max, whose memory.peak
	 * and events count page cache, which a task that only reads files fills
	 * up to the limit. */
	bool likely;
};

/* How a task's end relates to memory. */
enum mg_memory_end {
	MG_MEMORY_END_NONE,     /* not for memory, as far as we know */
	MG_MEMORY_END_KILLED,   /* killed for memory: the kernel's OOM killer, the watchdog, memguardd */
	MG_MEMORY_END_LIKELY,   /* failed by itself near a limit (mg_memreason_judge), likely for it */
	MG_MEMORY_END_POSSIBLE, /* the same, near memory.max: possibly for it */
};

/* The verdict, pure: true, with ret filled, when t failed by itself (a
 * non-zero exit, or a signal that no OOM kill, memguard or memguardd
 * explains) after reaching at least MG_NEAR_PERCENT of its RLIMIT_AS
 * (as_peak), else of its memory.max (memory.peak, or any memory.max event),
 * else in degraded mode of its share (the watchdog's RSS). RLIMIT_AS comes
 * first: allocations fail there, while memory.max makes the kernel reclaim
 * or kill. false, and ret->near = MG_NEAR_NONE, otherwise. */
bool mg_memreason_judge(const struct mg_task *t, struct mg_memreason *ret);

/* The clause a reason ends with, e.g. " after reaching at least 94% of its
 * 150MiB address-space limit (RLIMIT_AS): likely out of address space (a
 * MemoryError in Python)", or "...: possibly out of memory" when not likely;
 * "" for MG_NEAR_NONE. share is the task's share,
 * named when memory.max is larger. Writes into buf and returns it. */
const char *mg_memreason_format(const struct mg_memreason *v, uint64_t share, char *buf, size_t size);

/* The limit's name for the JSON report: "RLIMIT_AS", "memory.max", "share",
 * or NULL for MG_NEAR_NONE. */
const char *mg_near_limit_name(enum mg_near_limit near);

/* How t's end relates to memory, pure. */
enum mg_memory_end mg_task_memory_end(const struct mg_task *t);

/* The log's words for it: "ran out of memory", "likely ran out of memory",
 * "may have run out of memory"; NULL for MG_MEMORY_END_NONE. Each holds "out
 * of memory", what a user greps a job's output for. */
const char *mg_memory_end_words(enum mg_memory_end end);

/* Parses the VmPeak line of a /proc/<pid>/status text into bytes. -ENODATA
 * when there is none (a zombie has no mm, nor a kernel thread), -EBADMSG
 * when it is garbled. Pure. */
int mg_status_vmpeak_parse(const char *text, uint64_t *ret);

/* Parses VmPeak, and the part of the address space not resident (VmSize -
 * VmRSS), of a /proc/<pid>/status text into bytes: -ENODATA or -EBADMSG as
 * mg_status_vmpeak_parse. Pure. */
int mg_status_as_parse(const char *text, uint64_t *ret_peak, uint64_t *ret_gap);

/* Reads <procfd>/<pid>/status and parses its VmPeak (and the part not
 * resident). Returns 0 or -errno. */
int mg_proc_read_vmpeak(int procfd, pid_t pid, uint64_t *ret);
int mg_proc_read_as(int procfd, pid_t pid, uint64_t *ret_peak, uint64_t *ret_gap);
