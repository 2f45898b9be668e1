/* memguardd's metrics for node_exporter's textfile collector: counters of
 * what the verdicts came to, a few gauges, and the file written when due. */
#include "guard/metrics.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "memguard/log.h"
#include "memguard/util.h"
#include "service/service.h"

static const char *const short_reason_names[MG_SHORT_COUNT] = {
        [MG_SHORT_AVAILABLE_MIN] = "available_min",
        [MG_SHORT_PRESSURE] = "pressure",
        [MG_SHORT_FALLING] = "falling",
};

const char *mg_short_reason_name(enum mg_short_reason r)
{
	return r < MG_SHORT_COUNT ? short_reason_names[r] : "unknown";
}

enum mg_short_reason mg_short_reason_of(const struct mg_policy *p, const struct mg_node_state *node)
{
	uint64_t avail = node->mem.mem_available;
	bool pressure = node->trigger_fired || node->psi.full.avg10 >= p->full_avg10_max;

	if (avail < p->available_min)
		return MG_SHORT_AVAILABLE_MIN;
	if (pressure && avail < p->available_pressure)
		return MG_SHORT_PRESSURE;
	return MG_SHORT_FALLING; /* the one rule left (policy.h) */
}

enum mg_metric_action mg_metric_action_of(enum mg_verdict v, bool killed, bool fenced, bool dry_run)
{
	switch (v) {
	case MG_VERDICT_UNFENCE:
		return MG_ACTION_UNFENCE;
	case MG_VERDICT_WIDEN:
		return fenced ? MG_ACTION_WIDEN : MG_ACTION_NONE;
	case MG_VERDICT_FENCE:
		if (!killed)
			return fenced ? MG_ACTION_FENCE : MG_ACTION_KILL_FAILED;
		/* no fence could be set: the kill it stood in for */
		return dry_run ? MG_ACTION_DRY_RUN_KILL : MG_ACTION_KILL;
	case MG_VERDICT_KILL:
	case MG_VERDICT_KILL_OUTSIDER:
		if (!killed)
			return MG_ACTION_KILL_FAILED;
		return dry_run ? MG_ACTION_DRY_RUN_KILL : MG_ACTION_KILL;
	default:
		return MG_ACTION_NONE;
	}
}

bool mg_metrics_due(uint64_t written_usec, uint64_t now_usec, uint64_t interval_usec, bool acted)
{
	return acted || written_usec == 0 || now_usec - written_usec >= interval_usec;
}

void mg_daemon_metrics_count(struct mg_daemon_metrics *m, enum mg_metric_action action,
                             enum mg_short_reason reason)
{
	if (reason >= MG_SHORT_COUNT)
		reason = MG_SHORT_FALLING;
	switch (action) {
	case MG_ACTION_FENCE:
		m->fences[reason]++;
		break;
	case MG_ACTION_KILL:
		m->kills[reason]++;
		break;
	case MG_ACTION_DRY_RUN_KILL:
		m->dry_run_kills[reason]++;
		break;
	case MG_ACTION_KILL_FAILED:
		m->kill_failures++;
		break;
	case MG_ACTION_UNFENCE:
		m->unfences++;
		break;
	case MG_ACTION_WIDEN:
		m->widenings++;
		break;
	case MG_ACTION_NONE:
		break;
	}
}

static void by_reason(struct mg_metrics *out, const char *name, const char *help, const uint64_t *counts)
{
	mg_metrics_family(out, name, "counter", help);
	for (int r = 0; r < MG_SHORT_COUNT; r++) {
		const char *labels[] = {"reason", short_reason_names[r], NULL};
		mg_metrics_sample_u64(out, name, labels, counts[r]);
	}
}

static void gauge(struct mg_metrics *out, const char *name, const char *help, uint64_t value)
{
	mg_metrics_family(out, name, "gauge", help);
	mg_metrics_sample_u64(out, name, NULL, value);
}

void mg_daemon_metrics_format(const struct mg_daemon_metrics *m, struct mg_metrics *out)
{
	const char *version[] = {"version", MEMGUARD_VERSION, NULL};

	mg_metrics_reset(out);
	mg_metrics_family(out, "memguardd_build_info", "gauge", "memguardd's version, in the label.");
	mg_metrics_sample_u64(out, "memguardd_build_info", version, 1);
	gauge(out, "memguardd_start_time_seconds", "When memguardd started, seconds since the epoch.",
	      m->start_time_sec);
	gauge(out, "memguardd_guarded_cgroups", "Guarded cgroups (those memguardd may fence and kill).",
	      m->guarded);
	gauge(out, "memguardd_fenced_cgroups", "Guarded cgroups fenced in with memory.high now.", m->fenced);
	gauge(out, "memguardd_degraded",
	      "1 when a fenced cgroup's memory.events is not watched (memguardd sees it push against "
	      "its fence only through MemAvailable), else 0.",
	      m->degraded);
	gauge(out, "memguardd_mem_available_bytes", "MemAvailable at the latest decision.", m->mem_available);
	gauge(out, "memguardd_psi",
	      "1 when the node has PSI (/proc/pressure/memory), else 0: memguardd then decides on "
	      "MemAvailable and its fall alone; boot with psi=1 to turn PSI on.",
	      m->psi);
	by_reason(out, "memguardd_kills_total",
	          "Guarded cgroups killed, by the rule that made memory short "
	          "(available_min, pressure, falling).",
	          m->kills);
	by_reason(out, "memguardd_fences_total",
	          "Guarded cgroups fenced in with memory.high, by the rule that made memory short.",
	          m->fences);
	by_reason(out, "memguardd_dry_run_kills_total", "Kills decided and only logged (dry_run = yes).",
	          m->dry_run_kills);
	mg_metrics_family(out, "memguardd_kill_failures_total", "counter", "Kills that failed.");
	mg_metrics_sample_u64(out, "memguardd_kill_failures_total", NULL, m->kill_failures);
	mg_metrics_family(out, "memguardd_unfences_total", "counter",
	                  "Times memory was back and every fence was lifted.");
	mg_metrics_sample_u64(out, "memguardd_unfences_total", NULL, m->unfences);
	mg_metrics_family(out, "memguardd_fence_widenings_total", "counter",
	                  "Fences raised (or lifted, at the memory.high they replaced) because their task "
	                  "pushed against them while MemAvailable was not below available_min (or, once for "
	                  "the victim's fence never raised, above half of it).");
	mg_metrics_sample_u64(out, "memguardd_fence_widenings_total", NULL, m->widenings);
	mg_metrics_family(out, "memguardd_guard_rescans_total", "counter",
	                  "Times the guard list was read again from the guard globs and the placed runs "
	                  "(new cgroups, memory short, or the periodic rescan).");
	mg_metrics_sample_u64(out, "memguardd_guard_rescans_total", NULL, m->rescans);
	mg_metrics_family(out, "memguardd_guard_rescan_seconds", "gauge", "What the latest rescan took.");
	mg_metrics_sample(out, "memguardd_guard_rescan_seconds", NULL, (double)m->rescan_took_usec / 1e6);
	if (m->last_freed_usec) {
		mg_metrics_family(out, "memguardd_last_kill_seconds", "gauge",
		                  "Time from the decision to the latest kill carried out, its memory "
		                  "released.");
		mg_metrics_sample(out, "memguardd_last_kill_seconds", NULL, (double)m->last_freed_usec / 1e6);
	}
	mg_services_metrics(m->services, out);
}

void mg_daemon_metrics_write(struct mg_daemon_metrics *m, const char *file, uint64_t now_usec,
                             uint64_t interval_usec, bool acted)
{
	if (!file[0] || !mg_metrics_due(m->written_usec, now_usec, interval_usec, acted))
		return;
	mg_daemon_metrics_format(m, &m->text);
	int r = mg_metrics_write(&m->text, file, false);
	if (r < 0 && r != m->write_error)
		mg_log_errno(LOG_WARNING, r, "write the metrics file %s: %m", file);
	else if (r == 0 && m->write_error)
		log_notice("the metrics file %s is written again", file);
	m->write_error = r;
	m->written_usec = now_usec;
}
