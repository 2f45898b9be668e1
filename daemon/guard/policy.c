/* memguardd's decisions: whom to fence or kill and when, when to lift the
 * fences, how fast MemAvailable falls, when to look again, and the
 * settings they follow. */
#include "guard/policy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memguard/config.h"
#include "memguard/psi.h"
#include "memguard/units.h"

uint64_t mg_guarded_percent_of_share(const struct mg_guarded *g)
{
	if (g->share == 0)
		return 0;
	unsigned __int128 pct = (unsigned __int128)g->current * 100 / g->share;

	return pct > UINT64_MAX ? UINT64_MAX : (uint64_t)pct;
}

/* True when a should be killed before b. */
static bool worse(const struct mg_guarded *a, const struct mg_guarded *b)
{
	uint64_t pa = mg_guarded_percent_of_share(a), pb = mg_guarded_percent_of_share(b);

	if (pa != pb)
		return pa > pb;
	if (a->growth_bps != b->growth_bps)
		return a->growth_bps > b->growth_bps;
	return a->current > b->current;
}

/* True when MemAvailable, falling at fall_bps, reaches floor within
 * lead_usec (and is not below it already). */
static bool reaches_within_lead(const struct mg_policy *p, uint64_t avail, uint64_t fall_bps, uint64_t floor)
{
	if (!p->lead_usec || !fall_bps || avail < floor)
		return false;
	return (unsigned __int128)fall_bps * p->lead_usec / 1000000u >= avail - floor;
}

/* The same at MemAvailable's current rate of fall. */
static bool falls_to_within_lead(const struct mg_policy *p, const struct mg_node_state *node, uint64_t floor)
{
	return reaches_within_lead(p, node->mem.mem_available, node->available_fall_bps, floor);
}

/* True when MemAvailable, inside the pressure band, reaches available_min
 * within lead_usec at its current rate of fall. */
static bool floor_ahead(const struct mg_policy *p, const struct mg_node_state *node)
{
	return node->mem.mem_available < p->available_pressure &&
	       falls_to_within_lead(p, node, p->available_min);
}

bool mg_policy_needs_memory(const struct mg_policy *p, const struct mg_node_state *node)
{
	uint64_t avail = node->mem.mem_available;
	bool pressure = node->trigger_fired || node->psi.full.avg10 >= p->full_avg10_max;

	return avail < p->available_min || (pressure && avail < p->available_pressure) ||
	       floor_ahead(p, node);
}

/* What a fence lets its task take: MG_FENCE_SPARE_NUM/DEN of what the node
 * can spare above the hard floor at MemAvailable avail; nothing at or
 * below it (where only the per-CPU lists keep the node above the floor). */
static uint64_t fence_allowance(const struct mg_policy *p, uint64_t avail)
{
	uint64_t hard = mg_policy_hard_floor(p);

	if (avail <= hard)
		return 0;
	return (uint64_t)((unsigned __int128)(avail - hard) * MG_FENCE_SPARE_NUM / MG_FENCE_SPARE_DEN);
}

/* The rate that judges a push against g's fence: until its first raise,
 * what the others take (as a big task reaches its fence, its own last
 * allocations are most of MemAvailable's fall, and the fence has stopped
 * them); after it, MemAvailable's own fall, in which its growth is a trend.
 * *label names it for the journal. */
static uint64_t push_rate(const struct mg_node_state *node, const struct mg_guarded *g, const char **label)
{
	*label = g->widened           ? "MemAvailable falls"
	         : g->others_measured ? "the others take"
	                              : "the others take at most";
	return g->widened ? node->available_fall_bps : g->others_fall_bps;
}

/* Writes ret as WIDEN of victim by allowance (once: the raise of a fence
 * never raised, while memory is short), its reason ending in context (may
 * be "", or ret->why itself). */
static void widen(const struct mg_policy *p, const struct mg_node_state *node, const struct mg_guarded *g,
                  long victim, uint64_t allowance, bool once, const char *context, struct mg_decision *ret)
{
	uint64_t avail = node->mem.mem_available;
	bool short_ = avail < p->available_min;
	const char *rate;
	uint64_t fall = push_rate(node, g, &rate);
	char a[MG_SIZE_STRLEN], m[MG_SIZE_STRLEN], f[MG_SIZE_STRLEN], w[MG_SIZE_STRLEN];
	char why[sizeof(ret->why)];

	snprintf(why, sizeof(why),
	         "it pushed against its fence while MemAvailable %s is %s available_min (%s) and %s %s/s: "
	         "raised by %s%s%s%s",
	         mg_size_format(avail, a), short_ ? "below" : "not below",
	         mg_size_format(p->available_min, m), rate, mg_size_format(fall, f),
	         mg_size_format(allowance, w), once ? ", once" : "", context[0] ? "; " : "", context);
	memcpy(ret->why, why, sizeof(why));
	ret->verdict = MG_VERDICT_WIDEN;
	ret->victim = victim;
	ret->allowance = allowance;
}

/* A fence pushed against while MemAvailable alone does not say memory is
 * short is raised rather than judged: WIDEN the first such cgroup. Short
 * means below available_min, or falling to it within the lead, at
 * push_rate. Not one passed over (killed, or its kill failed) or whose
 * raising failed, and not in a dry run (which writes no fence). Returns
 * whether it did; context (may be "") ends the reason. */
static bool widen_pushed(const struct mg_policy *p, const struct mg_node_state *node,
                         const struct mg_guarded *g, size_t n, const char *context, struct mg_decision *ret)
{
	uint64_t avail = node->mem.mem_available;

	if (p->dry_run || avail < p->available_min)
		return false;
	for (size_t i = 0; i < n; i++) {
		const char *rate;

		if (!g[i].fenced || !g[i].pushed || g[i].passed_over || g[i].widen_failed ||
		    reaches_within_lead(p, avail, push_rate(node, &g[i], &rate), p->available_min))
			continue;
		widen(p, node, &g[i], (long)i, fence_allowance(p, avail), false, context, ret);
		return true;
	}
	return false;
}

/* Memory is not short: lift the fences once MemAvailable is well above the
 * floors and the settle time is over, so they do not flap; before that,
 * raise one a task pushes against. */
static void decide_calm(const struct mg_policy *p, const struct mg_node_state *node,
                        const struct mg_guarded *g, size_t n, struct mg_decision *ret)
{
	uint64_t avail = node->mem.mem_available;
	char a[MG_SIZE_STRLEN];
	size_t fenced = 0;

	if (avail < p->available_pressure || node->now_usec - node->last_kill_usec < p->settle_usec) {
		(void)widen_pushed(p, node, g, n, "", ret);
		return;
	}
	for (size_t i = 0; i < n; i++)
		fenced += g[i].fenced;
	if (!fenced)
		return;
	ret->verdict = MG_VERDICT_UNFENCE;
	snprintf(ret->why, sizeof(ret->why), "MemAvailable %s is back (%zu cgroup%s fenced)",
	         mg_size_format(avail, a), fenced, fenced == 1 ? "" : "s");
}

/* Why fence_or_kill chose a kill for the fall alone. */
enum lead {
	LEAD_NONE,
	LEAD_NODE,   /* lead_kill: MemAvailable's fall */
	LEAD_OTHERS, /* a fence holds the victim, not what the others take */
};

/* throttle = yes: rather than kill the victim, fence it in with memory.high
 * at its usage plus most of what the node can spare above the hard floor. A task
 * that was only going to grow a little more (a big but finite job) then
 * finishes; one that keeps growing meets the fence while the node still has
 * the rest of its spare, is seen pushing (its memory.events), and is killed
 * (once memory is short, below available_min or falling to it within the
 * lead: before, widen_pushed raises the fence). A fence never raised is
 * raised once even then, if what the others take would not bring
 * MemAvailable from what the raise leaves to the hard floor within the
 * lead: placed while its task still grows, a fence can land a few MiB short
 * of a finite task's need, which then finishes as it would without a guard;
 * a runaway meets the raised fence with a quarter of the spare left. Only
 * the victim, so that such raises come one at a time and none delays a
 * kill.
 * The hard floor is judged by mg_policy_left (MemAvailable and the per-CPU
 * lists), the fence's size by MemAvailable.
 * Unless lead_kill is on and MemAvailable would reach the hard floor within
 * the lead: the others go on taking memory while a fence holds one, so it
 * would be met too late. A fence already set is held only while what it
 * cannot stop, the others' fall, would not reach the hard floor within the
 * lead: else the kill that is coming anyway comes now. Not before that fall
 * is measured: at the fence, the node's rate still holds the victim's own
 * growth, and a big finite task fenced near its end would die for it. Nor
 * after a raise, when it is no longer tracked: the raised fence still stops
 * the task's own growth, and its push is judged instead.
 * *ret_lead says that the fall alone made it a kill. */
static enum mg_verdict fence_or_kill(const struct mg_policy *p, const struct mg_node_state *node,
                                     const struct mg_guarded *v, uint64_t *ret_allowance, enum lead *ret_lead)
{
	uint64_t avail = node->mem.mem_available, left = mg_policy_left(node), hard = mg_policy_hard_floor(p);

	*ret_allowance = 0;
	*ret_lead = LEAD_NONE;
	if (!p->throttle || p->dry_run || left < hard)
		return MG_VERDICT_KILL;
	if (v->pushed) {
		uint64_t raise = fence_allowance(p, avail);

		if (!v->fenced || v->widened || v->widen_failed || raise == 0 ||
		    reaches_within_lead(p, left - raise, v->others_fall_bps, hard))
			return MG_VERDICT_KILL;
		*ret_allowance = raise;
		return MG_VERDICT_WIDEN;
	}
	if (p->lead_kill && reaches_within_lead(p, left, node->available_fall_bps, hard)) {
		*ret_lead = LEAD_NODE;
		return MG_VERDICT_KILL;
	}
	if (v->fenced && !v->widened && v->others_measured &&
	    reaches_within_lead(p, left, v->others_fall_bps, hard)) {
		*ret_lead = LEAD_OTHERS;
		return MG_VERDICT_KILL;
	}
	if (v->fenced)
		return MG_VERDICT_HOLD;
	*ret_allowance = fence_allowance(p, avail);
	return MG_VERDICT_FENCE;
}

/* The rule that a guard never does worse than none: a task within its share
 * (or no task at all) is not killed while something outside the guard holds
 * more than its due. */
static bool outsider_to_blame(const struct mg_policy *p, const struct mg_node_state *node,
                              const struct mg_guarded *v)
{
	if (!p->outside_due || !node->outsider.path || node->outsider.current <= p->outside_due)
		return false;
	return !v || (v->share && v->current <= v->share);
}

uint64_t mg_policy_unguarded(const char *path, uint64_t current, const struct mg_guarded *g, size_t n)
{
	size_t len = strlen(path);

	for (size_t i = 0; i < n; i++)
		if (strncmp(g[i].path, path, len) == 0 && (g[i].path[len] == '/' || g[i].path[len] == '\0'))
			current -= g[i].current < current ? g[i].current : current;
	return current;
}

static int by_uid(const void *a, const void *b)
{
	uid_t x = *(const uid_t *)a, y = *(const uid_t *)b;

	return (x > y) - (x < y);
}

/* How many of the sorted u[0..n) are uid. */
static size_t count_uid(const uid_t *u, size_t n, uid_t uid)
{
	size_t lo = 0, hi = n, first;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u[mid] < uid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (first = lo; lo < n && u[lo] == uid; lo++)
		;
	return lo - first;
}

void mg_policy_split_shares(const struct mg_policy *p, uint64_t mem_total, struct mg_guarded *g, size_t n,
                            uid_t *scratch)
{
	uid_t *all = scratch, *unshared = scratch + n;
	size_t n_all = 0, n_unshared = 0, owners = 0;
	uint64_t gives = mem_total > p->available_min ? mem_total - p->available_min : 0;

	for (size_t i = 0; i < n; i++) {
		if (!g[i].populated)
			continue;
		all[n_all++] = g[i].owner;
		if (g[i].share == 0 || g[i].split)
			unshared[n_unshared++] = g[i].owner;
	}
	qsort(all, n_all, sizeof(*all), by_uid);
	qsort(unshared, n_unshared, sizeof(*unshared), by_uid);
	for (size_t i = 0; i < n_all; i++)
		owners += i == 0 || all[i] != all[i - 1];
	for (size_t i = 0; i < n; i++) {
		if (g[i].share != 0 && !g[i].split)
			continue;
		size_t mine = count_uid(unshared, n_unshared, g[i].owner);
		uint64_t split = owners && mine ? gives / owners / mine : gives;
		g[i].share = g[i].hint && g[i].hint < split ? g[i].hint : split;
		g[i].split = true;
	}
}

bool mg_policy_outside_eligible(const struct mg_outside_proc *p)
{
	return !p->protected_ && !p->init_or_kernel && p->oom_score_adj > -1000;
}

bool mg_policy_init_or_kernel(pid_t pid, pid_t ppid)
{
	return pid == 1 || pid == 2 || ppid == 2;
}

uint64_t mg_policy_root_own(const struct mg_meminfo *mem, uint64_t children, uint64_t procs_rss)
{
	uint64_t left = mem->has_free ? mem->mem_free : mem->mem_available;
	uint64_t used = mem->mem_total > left ? mem->mem_total - left : 0;
	uint64_t own = used > children ? used - children : 0;

	return own < procs_rss ? own : procs_rss;
}

bool mg_policy_outside_worse(const struct mg_outside_proc *a, const struct mg_outside_proc *b)
{
	if (a->oom_score != b->oom_score)
		return a->oom_score > b->oom_score;
	return a->rss > b->rss;
}

long mg_policy_outside_victim(const struct mg_outside_proc *p, size_t n)
{
	long best = -1;

	for (size_t i = 0; i < n; i++)
		if (mg_policy_outside_eligible(&p[i]) &&
		    (best < 0 || mg_policy_outside_worse(&p[i], &p[best])))
			best = (long)i;
	return best;
}

bool mg_policy_rescan_due(bool was_short, uint64_t last_rescan_usec, uint64_t last_took_usec,
                          uint64_t now_usec)
{
	uint64_t gap =
	        last_took_usec > MG_RESCAN_SHORT_USEC / 10 ? 10 * last_took_usec : MG_RESCAN_SHORT_USEC;

	if (last_took_usec > UINT64_MAX / 10)
		gap = UINT64_MAX;
	return !was_short || now_usec < last_rescan_usec || now_usec - last_rescan_usec >= gap;
}

uint64_t mg_policy_event_rescan_at(uint64_t last_rescan_usec, uint64_t last_took_usec, uint64_t now_usec)
{
	uint64_t gap = last_took_usec > MG_RESCAN_EVENT_GAP_MAX_USEC / 10 ? MG_RESCAN_EVENT_GAP_MAX_USEC
	                                                                  : 10 * last_took_usec;

	if (gap < MG_RESCAN_EVENT_GAP_USEC)
		gap = MG_RESCAN_EVENT_GAP_USEC;
	/* Never, or the clock went back: now. */
	if (last_rescan_usec == 0 || now_usec < last_rescan_usec || now_usec - last_rescan_usec >= gap)
		return now_usec;
	return last_rescan_usec + gap;
}

const char *mg_verdict_name(enum mg_verdict v)
{
	/* clang-format off */
	static const char *const names[] = {
	        [MG_VERDICT_CALM] = "calm",
	        [MG_VERDICT_UNFENCE] = "unfence",
	        [MG_VERDICT_SETTLING] = "settling",
	        [MG_VERDICT_NO_VICTIM] = "no victim",
	        [MG_VERDICT_OUTSIDER] = "outsider",
	        [MG_VERDICT_HOLD] = "hold",
	        [MG_VERDICT_FENCE] = "fence",
	        [MG_VERDICT_WIDEN] = "widen",
	        [MG_VERDICT_KILL] = "kill",
	        [MG_VERDICT_KILL_OUTSIDER] = "kill outsider",
	};
	/* clang-format on */

	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "invalid";
}

bool mg_policy_fence_pushed(const struct mg_fence_probe *p)
{
	if (p->fence == 0 || p->high_events <= p->high_events_at_fence)
		return false;
	uint64_t held = p->anon > UINT64_MAX - p->shmem ? UINT64_MAX : p->anon + p->shmem;

	return held >= p->fence - p->fence / MG_FENCE_HELD_SLACK;
}

bool mg_policy_blame_due(const struct mg_policy *p, const char *last, uint64_t last_usec,
                         const char *offender, uint64_t now_usec)
{
	return !last || strcmp(last, offender) != 0 || now_usec - last_usec >= p->settle_usec;
}

void mg_policy_decide(const struct mg_policy *p, const struct mg_node_state *node, const struct mg_guarded *g,
                      size_t n, struct mg_decision *ret)
{
	uint64_t avail = node->mem.mem_available;
	uint32_t full = node->psi.full.avg10;
	char a[MG_SIZE_STRLEN], c[MG_SIZE_STRLEN], s[MG_SIZE_STRLEN], f[MG_SIZE_STRLEN];
	long victim = -1;
	char falling[64] = "", lists[64] = "";
	char context[224];

	*ret = (struct mg_decision){.verdict = MG_VERDICT_CALM, .victim = -1};
	if (!mg_policy_needs_memory(p, node)) {
		decide_calm(p, node, g, n, ret);
		return;
	}
	if (floor_ahead(p, node))
		snprintf(falling, sizeof(falling), ", falling %s/s",
		         mg_size_format(node->available_fall_bps, f));
	if (node->lists_free)
		snprintf(lists, sizeof(lists), " (%s more free on the per-CPU lists)",
		         mg_size_format(node->lists_free, f));
	snprintf(context, sizeof(context),
	         "node memory pressure (full avg10) was %u.%02u%%%s and MemAvailable %s%s%s", full / 100,
	         full % 100, node->trigger_fired ? " (PSI trigger fired)" : "", mg_size_format(avail, a),
	         lists, falling);
	snprintf(ret->why, sizeof(ret->why), "%s", context);
	/* Before anyone is judged: the pressure may be that fence's own throttling. */
	if (widen_pushed(p, node, g, n, context, ret))
		return;
	/* Below the hard floor a kill that did not free enough is followed by the
	 * next at once, but not while its victim's memory is still coming back. */
	uint64_t since_kill = node->now_usec - node->last_kill_usec;
	if (node->last_kill_usec && since_kill < p->settle_usec &&
	    (mg_policy_left(node) >= mg_policy_hard_floor(p) ||
	     (node->victim_exiting && since_kill < MG_VICTIM_EXIT_WAIT_USEC))) {
		ret->verdict = MG_VERDICT_SETTLING;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (!g[i].populated || g[i].protected_ || g[i].passed_over || g[i].current == 0)
			continue;
		if (victim < 0 || worse(&g[i], &g[victim]))
			victim = (long)i;
	}
	const struct mg_guarded *v = victim >= 0 ? &g[victim] : NULL;
	if (outsider_to_blame(p, node, v)) {
		char worst[320] = "none may be killed";

		if (v)
			snprintf(worst, sizeof(worst), "the worst, %s, %s of %s", v->path,
			         mg_size_format(v->current, c), mg_size_format(v->share, s));
		snprintf(ret->why, sizeof(ret->why),
		         "%s, outside the guard, holds %s (its due is %s) while every guarded task is within "
		         "its share (%s) and %s",
		         node->outsider.path, mg_size_format(node->outsider.current, a),
		         mg_size_format(p->outside_due, f), worst, context);
		/* Nothing fences an outsider in: wait no longer than for a guarded task. */
		bool floor = avail < p->available_min || floor_ahead(p, node);
		ret->verdict = p->kill_outside && floor ? MG_VERDICT_KILL_OUTSIDER : MG_VERDICT_OUTSIDER;
		return;
	}
	if (!v) {
		ret->verdict = MG_VERDICT_NO_VICTIM;
		return;
	}
	if (v->share)
		snprintf(ret->why, sizeof(ret->why), "%s against a %s share%s while %s",
		         mg_size_format(v->current, c), mg_size_format(v->share, s),
		         v->split ? " (the node's even split: no root-owned record gives it one)" : "",
		         context);
	else
		snprintf(ret->why, sizeof(ret->why), "%s (no share known) while %s",
		         mg_size_format(v->current, c), context);
	enum lead lead;
	ret->verdict = fence_or_kill(p, node, v, &ret->allowance, &lead);
	ret->victim = victim;
	if (ret->verdict == MG_VERDICT_WIDEN) {
		widen(p, node, v, victim, ret->allowance, true, ret->why, ret);
		return;
	}
	size_t len = strlen(ret->why);
	if (ret->verdict == MG_VERDICT_KILL && v->fenced && v->pushed)
		snprintf(ret->why + len, sizeof(ret->why) - len, "; it pushed against its fence");
	else if (lead == LEAD_OTHERS)
		snprintf(ret->why + len, sizeof(ret->why) - len,
		         "; the others take %s/s, which no fence on it stops: MemAvailable%s would reach "
		         "half of available_min within lead_time",
		         mg_size_format(v->others_fall_bps, f), lists[0] ? " and those lists" : "");
	else if (lead == LEAD_NODE && falling[0])
		snprintf(ret->why + len, sizeof(ret->why) - len,
		         "; at that rate it would reach half of available_min before a fence could hold");
	else if (lead == LEAD_NODE)
		snprintf(ret->why + len, sizeof(ret->why) - len,
		         "; falling at %s/s, it would reach half of available_min before a fence could hold",
		         mg_size_format(node->available_fall_bps, f));
}

int mg_policy_from_config(const struct mg_config *cfg, uint64_t mem_total, struct mg_policy *ret, char *err,
                          size_t errsize)
{
	const char *why;

	if (mg_size_parse(cfg->available_min, mem_total, &ret->available_min, &why) < 0 ||
	    mg_size_parse(cfg->available_pressure, mem_total, &ret->available_pressure, &why) < 0) {
		snprintf(err, errsize, "invalid available_min or available_pressure: %s", why);
		return -EINVAL;
	}
	/* Either at MemTotal would mean memory is always short: a kill every settle. */
	if (ret->available_pressure >= mem_total || ret->available_min > ret->available_pressure) {
		snprintf(err, errsize,
		         "available_min (%s) must not exceed available_pressure (%s), and both must be below "
		         "MemTotal",
		         cfg->available_min, cfg->available_pressure);
		return -EINVAL;
	}
	if (!mg_psi_trigger_valid(cfg->trigger_stall_usec, cfg->trigger_window_usec)) {
		snprintf(err, errsize,
		         "trigger_window must be 500ms to 10s and trigger_stall above 0 and within it");
		return -EINVAL;
	}
	if (cfg->poll_max_usec < MG_POLL_MIN_USEC) {
		snprintf(err, errsize, "poll_max must be at least %llu ms", MG_POLL_MIN_USEC / 1000);
		return -EINVAL;
	}
	/* 0% turns the avg10 rule off; the triggers and MemAvailable remain. */
	ret->full_avg10_max = cfg->pressure_full_avg10 ? cfg->pressure_full_avg10 * 100 : UINT32_MAX;
	ret->settle_usec = cfg->settle_usec;
	ret->lead_usec = cfg->lead_usec;
	if (mg_size_parse(cfg->outside_due, mem_total, &ret->outside_due, &why) < 0) {
		snprintf(err, errsize, "invalid outside_due: %s", why);
		return -EINVAL;
	}
	ret->poll_max_usec = cfg->poll_max_usec;
	ret->throttle = cfg->throttle;
	ret->lead_kill = cfg->lead_kill;
	ret->kill_outside = cfg->kill_outside;
	ret->dry_run = cfg->dry_run;
	return 0;
}

uint64_t mg_fall_rate_update(struct mg_fall_rate *s, uint64_t available, uint64_t now_usec)
{
	uint64_t span = now_usec - s->from_usec, bps = 0;

	if (s->from_usec && span < MG_FALL_SPAN_MIN_USEC)
		return s->bps;
	if (s->from_usec && s->from_available > available)
		bps = (uint64_t)((unsigned __int128)(s->from_available - available) * 1000000u / span);
	s->spans += s->from_usec && s->spans < 2;
	s->bps = bps < s->span_bps ? bps : s->span_bps;
	s->span_bps = bps;
	s->from_available = available;
	s->from_usec = now_usec;
	return s->bps;
}

bool mg_fall_rate_measured(const struct mg_fall_rate *s)
{
	return s->spans >= 2;
}

void mg_fall_rate_start(struct mg_fall_rate *s, uint64_t available, uint64_t now_usec, uint64_t bps)
{
	*s = (struct mg_fall_rate){
	        .from_available = available, .from_usec = now_usec, .span_bps = bps, .bps = bps};
}

uint64_t mg_policy_poll_usec(const struct mg_policy *p, uint64_t available, uint64_t fall_bps,
                             uint64_t cost_usec)
{
	uint64_t headroom = available > p->available_min ? available - p->available_min : 0;
	unsigned __int128 rate = (unsigned __int128)fall_bps * MG_POLL_FALL_MARGIN;
	unsigned __int128 usec;
	unsigned __int128 floor_usec = (unsigned __int128)cost_usec * MG_POLL_COST_FACTOR;

	if (rate < MG_ASSUMED_ALLOC_BPS)
		rate = MG_ASSUMED_ALLOC_BPS;
	usec = (unsigned __int128)headroom * 1000000u / rate;
	if (usec < floor_usec)
		usec = floor_usec;
	if (usec < MG_POLL_MIN_USEC)
		return MG_POLL_MIN_USEC;
	return usec > p->poll_max_usec ? p->poll_max_usec : (uint64_t)usec;
}

const char *mg_policy_describe(const struct mg_policy *p, char *buf, size_t size)
{
	char amin[MG_SIZE_STRLEN], apress[MG_SIZE_STRLEN];
	int n = snprintf(buf, size, "act below MemAvailable %s; below %s under pressure",
	                 mg_size_format(p->available_min, amin),
	                 mg_size_format(p->available_pressure, apress));

	if (p->lead_usec && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " or when falling to %s within %" PRIu64 " ms", amin,
		         (p->lead_usec + 999) / 1000);
	return buf;
}
