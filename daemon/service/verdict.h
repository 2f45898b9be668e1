/* The service guard's judgement of a watched unit (service.h): is it
 * leaking, stuck at its limit, or living normally; when may it be
 * restarted; how often to look. Pure functions of its samples and
 * settings, table-tested without a kernel or systemd. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memguard/config.h"

/* The window is judged in this many parts: its floor must rise across each. */
#define MG_SERVICE_PARTS 4
/* Samples kept per unit: at least two windows (mg_service_merge_usec). */
#define MG_SERVICE_SAMPLES 256
/* Looks per window, within MG_SERVICE_INTERVAL_MIN_USEC..MAX_USEC. */
#define MG_SERVICE_LOOKS_PER_WINDOW 64
#define MG_SERVICE_INTERVAL_MIN_USEC 1000000ull
#define MG_SERVICE_INTERVAL_MAX_USEC 30000000ull
/* At its memory.high or memory.max means within 1/N of it: kernel memory
 * (page tables, slab) counts in memory.current, not in anon and shmem. */
#define MG_SERVICE_LIMIT_SLACK 16
/* A part's floor rises when it is at least this much above the one before,
 * and a 1/MG_SERVICE_STEP_DEN of it: memory.stat's counters lag by up to 64
 * pages per CPU, and an allocator's own churn moves a big heap by more. */
#define MG_SERVICE_STEP_MIN (1ull << 20)
#define MG_SERVICE_STEP_DEN 1024
/* The early rule (mg_service_judge) takes a fall of held by more than 1/N
 * of the most it held before in the window (and 4 steps) for a sawtooth's
 * collection, not a leak. */
#define MG_SERVICE_DROP_DEN 16

/* One look at a unit's cgroup. */
struct mg_service_sample {
	uint64_t usec;        /* monotonic; for looks merged into one, the first's */
	uint64_t held;        /* anon + shmem of its memory.stat: what reclaim cannot give back without
	                         swap (not page cache, which rises and falls with the files it reads);
	                         for looks merged into one, the least */
	uint64_t high_events; /* memory.events "high" and "max"; for looks merged, the latest */
	uint64_t max_events;
};

/* What can limit a unit. */
enum mg_service_limit {
	MG_SERVICE_LIMIT_HIGH, /* its own memory.high (MemoryHigh=): throttled there */
	MG_SERVICE_LIMIT_MAX,  /* its own memory.max (MemoryMax=): the kernel's OOM killer, or ENOMEM */
	MG_SERVICE_LIMIT_NODE, /* the node: at available_min the pressure guard's outsider rule acts */
};

/* The limits at the latest look. */
struct mg_service_bounds {
	uint64_t high, max;     /* its memory.high and memory.max; MG_SIZE_UNLIMITED for none */
	uint64_t mem_available; /* the node's MemAvailable */
	uint64_t available_min; /* memguardd's [daemon] settings, in bytes (mg_policy_from_config) */
	uint64_t available_pressure;
};

enum mg_service_state {
	MG_SERVICE_WARMING, /* not a whole window of looks yet (since memguardd started, or the unit) */
	MG_SERVICE_STEADY,  /* its floor does not rise across the window, or not towards its limit
	                       within the horizon */
	MG_SERVICE_LEAKING,
	MG_SERVICE_STUCK,
};

struct mg_service_verdict {
	enum mg_service_state state;
	bool early;         /* LEAKING on a span shorter than the window: the node is short of memory
	                       (below available_pressure) and would reach available_min sooner than a
	                       whole window could show it */
	uint64_t held;      /* at the latest look */
	uint64_t floor;     /* the least held in the latest part of the span judged */
	double trend_bps;   /* the floor's rise, bytes per second, from the first part to the last (< 0:
	                       it falls); 0 without a span */
	uint64_t span_usec; /* the span the trend was measured over; 0: none */
	uint64_t limit;     /* what limits it: the least of its own limits and the node's */
	enum mg_service_limit limit_kind;
	uint64_t left_usec;    /* until the floor reaches limit at trend_bps; UINT64_MAX: never */
	uint64_t stuck_events; /* STUCK: memory.events high (or max) over stuck_time */
	char why[512];         /* the numbers behind it, in words */
};

/* What the node lets the unit hold before MemAvailable falls to
 * available_min: what it holds (held) plus MemAvailable above
 * available_min. */
uint64_t mg_service_node_limit(uint64_t held, const struct mg_service_bounds *b);

/* Judges a unit by its samples s[0..n) (oldest first, as
 * mg_service_samples_add keeps them), under c (window, horizon, stuck_time)
 * and the bounds at the latest look. Every field of ret is written.
 *   STUCK: for the last stuck_time (samples reaching back that far), held
 *     never below its memory.high (or memory.max) less 1/16, and that
 *     limit's memory.events count rose: throttled (or failing) there, and
 *     reclaim does not bring it down. Page cache pressing on a limit is not
 *     held: not stuck.
 *   LEAKING: over the latest window (the samples reach back to within half a
 *     part of its start), the floor of each of its four parts is above the
 *     floor of the part before by MG_SERVICE_STEP_MIN and 1/1024 at least,
 *     and at the rise from the first part's floor to the last's it reaches
 *     what limits it within horizon. A sawtooth whose troughs fall in the
 *     window (a garbage-collected heap: window at least 4/3 of its cycle), a
 *     cache that warms up and levels off, a step, a service steady near its
 *     limit: no part's floor rises past the one before it in every part.
 *     Or, early: the node limits it, MemAvailable is below
 *     available_pressure, held did not fall within the window (by
 *     1/MG_SERVICE_DROP_DEN of the most it held before, as a collection
 *     does), and over the latest span of window / 2^k (k >= 0,
 *     the longest first, each part holding a sample) the floors rise so and
 *     reach the node's limit within that span itself: the limit is as near
 *     as what that span showed it take.
 *   Else STEADY, or WARMING without a whole window (the trend then over what
 *     there is, for --status). */
void mg_service_judge(const struct mg_service_config *c, const struct mg_service_sample *s, size_t n,
                      const struct mg_service_bounds *b, struct mg_service_verdict *ret);

/* How often memguardd looks at the unit: MG_SERVICE_LOOKS_PER_WINDOW per
 * window, and six per stuck_time, within
 * [MG_SERVICE_INTERVAL_MIN_USEC, MG_SERVICE_INTERVAL_MAX_USEC]. */
uint64_t mg_service_interval_usec(const struct mg_service_config *c);

/* Looks that come within this of the last kept sample's start are merged
 * into it, so MG_SERVICE_SAMPLES hold two windows however often it looks:
 * window / (MG_SERVICE_SAMPLES / 2). */
uint64_t mg_service_merge_usec(const struct mg_service_config *c);

/* Adds look to s[0..*n) (capacity cap, oldest first): merged into the last
 * sample when it started less than merge_usec before look (the least held,
 * the latest events), else appended, the oldest dropped when full. A look
 * from before the last one (the clock went back) starts over. */
void mg_service_samples_add(struct mg_service_sample *s, size_t *n, size_t cap,
                            const struct mg_service_sample *look, uint64_t merge_usec);

/* When memguardd may restart the unit next, given when it did before
 * (times[0..n), monotonic, oldest first): now_usec when nothing holds it
 * back; else the time the back-off ends (restart_backoff, doubled for each
 * restart within restart_limit_interval but the first), or, with
 * *ret_limited set, the time the oldest of the last restart_limit restarts
 * leaves restart_limit_interval. */
uint64_t mg_service_restart_at(const struct mg_service_config *c, const uint64_t *times, size_t n,
                               uint64_t now_usec, bool *ret_limited);

/* "leaking", "stuck", ... for logs and --status. */
const char *mg_service_state_name(enum mg_service_state s);
/* "memory.high", "memory.max", "the node". */
const char *mg_service_limit_name(enum mg_service_limit l);

/* A duration for people: "45s", "12min", "3.2h", "9.5d", "never" (UINT64_MAX). */
#define MG_SERVICE_DURATION_STRLEN 16
const char *mg_service_format_duration(uint64_t usec, char buf[MG_SERVICE_DURATION_STRLEN]);
/* A trend as MiB per hour: "+12.0MiB/h", "-0.4MiB/h". */
#define MG_SERVICE_TREND_STRLEN 24
const char *mg_service_format_trend(double bps, char buf[MG_SERVICE_TREND_STRLEN]);
