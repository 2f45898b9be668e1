/* memguardd's Prometheus metrics (metrics.c): what it counts, when the file
 * is due, and the text. Pure functions but mg_daemon_metrics_write. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memguard/metrics.h"
#include "guard/policy.h"

struct mg_services;

/* Why memory was short when memguardd acted: the rule of
 * mg_policy_needs_memory that held, in its order. */
enum mg_short_reason {
	MG_SHORT_AVAILABLE_MIN, /* MemAvailable below available_min */
	MG_SHORT_PRESSURE,      /* pressure (a trigger, or full avg10) below available_pressure */
	MG_SHORT_FALLING,       /* falling to available_min within lead_time */
	MG_SHORT_COUNT,
};

/* The label value of each reason: "available_min", "pressure", "falling". */
const char *mg_short_reason_name(enum mg_short_reason r);

/* Which rule made memory short for node under p (call it only when
 * mg_policy_needs_memory is true): below available_min first, then
 * pressure, else the fall. */
enum mg_short_reason mg_short_reason_of(const struct mg_policy *p, const struct mg_node_state *node);

/* What carrying out a verdict came to. */
enum mg_metric_action {
	MG_ACTION_NONE,
	MG_ACTION_FENCE,
	MG_ACTION_KILL,
	MG_ACTION_KILL_FAILED,
	MG_ACTION_DRY_RUN_KILL, /* a kill decided and only logged */
	MG_ACTION_UNFENCE,
	MG_ACTION_WIDEN, /* a fence raised (or lifted, at its old memory.high) */
};

/* From the verdict and what followed it: killed, a kill was carried out (or
 * logged in a dry run) for it; fenced, its victim is fenced now (for WIDEN:
 * no longer held by the fence it pushed against). FENCE becomes a kill when
 * no fence could be set, and a failed kill when that failed too. */
enum mg_metric_action mg_metric_action_of(enum mg_verdict v, bool killed, bool fenced, bool dry_run);

/* Whether the metrics file is due: never written yet (written_usec 0),
 * acted (a fence, kill or unfence just now), or interval_usec since the
 * last write. */
bool mg_metrics_due(uint64_t written_usec, uint64_t now_usec, uint64_t interval_usec, bool acted);

struct mg_daemon_metrics {
	uint64_t kills[MG_SHORT_COUNT], fences[MG_SHORT_COUNT], dry_run_kills[MG_SHORT_COUNT];
	uint64_t kill_failures, unfences, widenings;
	uint64_t rescans;          /* of the guard list, for any cause */
	uint64_t rescan_took_usec; /* the latest */
	uint64_t start_time_sec;   /* realtime */
	uint64_t last_freed_usec;  /* decision to kill done, of the latest kill; 0: none yet */
	uint64_t mem_available;    /* at the latest decision */
	size_t guarded, fenced;
	bool degraded;          /* a fenced cgroup's memory.events is not watched */
	bool psi;               /* the node has PSI */
	uint64_t written_usec;  /* monotonic, the last write (or attempt); 0: never */
	int write_error;        /* of the last attempt, so a failure is said once */
	struct mg_metrics text; /* kept between writes: no allocation after the first */
	/* Each watched unit's families follow (service.h); NULL: none. */
	const struct mg_services *services;
};

/* Counts action at reason. */
void mg_daemon_metrics_count(struct mg_daemon_metrics *m, enum mg_metric_action action,
                             enum mg_short_reason reason);

/* The text of m into out (reset first). out->error says whether it failed. */
void mg_daemon_metrics_format(const struct mg_daemon_metrics *m, struct mg_metrics *out);

/* Writes m to file when it is due (mg_metrics_due at now_usec; acted: a
 * verdict came to something). Logs a failed write once and its recovery. */
void mg_daemon_metrics_write(struct mg_daemon_metrics *m, const char *file, uint64_t now_usec,
                             uint64_t interval_usec, bool acted);
