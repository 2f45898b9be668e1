/* Whom memguardd kills, and when: a pure function of snapshots, so that the
 * whole policy is unit tested without a kernel. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memguard/meminfo.h"
#include "memguard/psi.h"

/* One guarded cgroup, as seen at one moment. */
struct mg_guarded {
	const char *path;
	uint64_t current;    /* memory.current */
	uint64_t share;      /* its share (launcher's xattr, else memory.max), 0 when unknown */
	uint64_t growth_bps; /* bytes per second since the previous snapshot, 0 when shrinking */
	bool populated;
	bool protected_; /* holds a protected process: never a victim */
};

struct mg_node_state {
	struct mg_meminfo mem;
	struct mg_psi psi;           /* /proc/pressure/memory */
	bool trigger_fired;          /* a PSI trigger fired since the last decision */
	uint64_t available_fall_bps; /* how fast MemAvailable fell, bytes/s, over its last two spans (the
	                                slower) */
	uint64_t now_usec;
	uint64_t last_kill_usec; /* 0: never */
};

struct mg_policy {
	uint64_t available_min;      /* below this MemAvailable, act whatever PSI says */
	uint64_t available_pressure; /* under PSI pressure, act below this MemAvailable */
	uint32_t full_avg10_max; /* full avg10 (hundredths of %) that counts as pressure without a trigger */
	uint64_t settle_usec;    /* after a kill, wait this long before the next */
	uint64_t lead_usec;      /* below available_pressure, act when MemAvailable would reach available_min
	                            this soon at its rate of fall; 0 = off */
};

enum mg_verdict {
	MG_VERDICT_CALM,      /* nothing to do */
	MG_VERDICT_SETTLING,  /* pressure, but the last kill is still taking effect */
	MG_VERDICT_NO_VICTIM, /* pressure, and nothing in scope may be killed */
	MG_VERDICT_KILL,
};

struct mg_decision {
	enum mg_verdict verdict;
	long victim;   /* index into the snapshot, -1 unless KILL */
	char why[256]; /* the numbers behind the verdict, in words */
};

/* True when the node needs memory back: MemAvailable < available_min, or
 * pressure (a trigger fired, or full avg10 >= full_avg10_max) with
 * MemAvailable < available_pressure, or MemAvailable < available_pressure
 * falling fast enough to reach available_min within lead_usec (a kill takes
 * time; a fast allocator would overshoot the floor meanwhile). Cheap: no
 * cgroup is read before this. */
bool mg_policy_needs_memory(const struct mg_policy *p, const struct mg_node_state *node);

/* Below this MemAvailable nothing waits: not the settle time after a kill,
 * not a fenced task. */
static inline uint64_t mg_policy_hard_floor(const struct mg_policy *p)
{
	return p->available_min / 2;
}

/* Decides, when mg_policy_needs_memory() says so. The victim is the
 * eligible cgroup furthest over its share (memory.current / share, in 1%
 * steps), then the fastest grower, then the largest. A kill within
 * settle_usec of the last one waits, unless MemAvailable is below half of
 * available_min. */
void mg_policy_decide(const struct mg_policy *p, const struct mg_node_state *node, const struct mg_guarded *g,
                      size_t n, struct mg_decision *ret);

/* memory.current / share in percent (0 when the share is unknown). */
uint64_t mg_guarded_percent_of_share(const struct mg_guarded *g);
