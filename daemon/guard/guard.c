/* memguardd's guard service: the loop that reads a snapshot, takes the
 * policy's verdict and carries it out, and the events that wake it (guard.h). */
#include "guard/guard.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "guard/act.h"
#include "guard/guards.h"
#include "memguard/cgroup.h"
#include "memguard/event.h"
#include "memguard/log.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "guard/metrics.h"
#include "guard/outside.h"
#include "guard/sense.h"
#include "service/service.h"

/* Carrying out a verdict. */

/* Its fence is lifted: memory.high is what it was. */
static void fence_lifted(struct mg_guard *d, struct watched *w)
{
	w->throttled = w->pushed = w->widened = false;
	w->others_fall = (struct mg_fall_rate){0};
	guards_unwatch_fence(d, w);
}

/* Memory came back: lift every fence. */
static void unfence_all(struct mg_guard *d)
{
	for (size_t i = 0; i < d->nw; i++)
		if (d->w[i].throttled && mg_act_unthrottle(d->mountfd, d->w[i].e.path) >= 0)
			fence_lifted(d, &d->w[i]);
}

/* Memory is not short: a cgroup killed, or whose kill or fence raising failed, may be tried again. */
static void forget_failures(struct mg_guard *d)
{
	for (size_t i = 0; i < d->nw; i++) {
		/* A tracker paused while it was passed over starts again. */
		if (d->w[i].passed_over)
			d->w[i].others_fall = (struct mg_fall_rate){0};
		d->w[i].passed_over = d->w[i].widen_failed = false;
	}
}

/* Sets the victim's fence, and starts what the others take from now (until
 * its own spans end, at most the node's rate); false when it could not be
 * set. */
static bool fence(struct mg_guard *d, struct watched *v, const struct mg_guarded *snap,
                  const struct mg_node_state *node, uint64_t allowance)
{
	if (mg_act_throttle(d->mountfd, v->e.path, snap->current, snap->share, allowance) != 1)
		return false;
	v->throttled = true;
	v->pushed = v->widened = false;
	mg_sense_track_fence(d, v, node->available_fall_bps);
	guards_watch_fence(d, v);
	return true;
}

/* Raises the victim's fence; lifts it when that reaches its old memory.high.
 * A raise that failed is not tried again until memory is calm: while it is
 * short, the others are judged meanwhile. */
static void widen(struct mg_guard *d, struct watched *v, uint64_t allowance, const char *why)
{
	int r = mg_act_widen(d->mountfd, v->e.path, allowance, why);

	if (r == 2)
		fence_lifted(d, v);
	else if (r == 1) {
		guards_widened_fence(d, v);
		v->widened = true;
	} else
		v->widen_failed = true; /* failed, gone, or nothing to raise */
}

static void kill_victim(struct mg_guard *d, struct watched *v, const struct mg_guarded *snap, const char *why,
                        uint64_t now_usec)
{
	struct mg_kill_record rec = {
	        .path = v->e.path,
	        .current = snap->current,
	        .share = snap->share,
	        .why = why,
	        .dry_run = d->policy.dry_run,
	        .decided_usec = now_usec,
	};
	int killed = mg_act_kill(d->mountfd, &rec, d->cfg.kill_log);

	if (killed < 0) {
		/* Already logged; the policy passes it over until memory is back. */
		v->passed_over = true;
		return;
	}
	d->last_kill_usec = now_usec;
	/* Waited on while it exits (not in a dry run, where killed is 0). */
	snprintf(d->last_victim, sizeof(d->last_victim), "%s", killed > 0 ? v->e.path : "");
	d->last_victim_bytes = snap->current;
	v->passed_over = killed > 0;
	/* Killed (or gone): nothing there pushes any more, so nothing to widen as memory comes back. */
	v->pushed = false;
	if (killed > 0 && !rec.dry_run)
		sd_notifyf(false, "STATUS=last kill: %s", rec.path);
}

/* Whether to say again what holds the node back ("" for no one): once per
 * change and settle period, so a long shortage does not flood the journal. */
static bool say_again(struct mg_guard *d, const char *offender, uint64_t now_usec)
{
	if (!mg_policy_blame_due(&d->policy, d->blamed, d->blamed_usec, offender, now_usec))
		return false;
	snprintf(d->blamed, sizeof(d->blamed), "%s", offender);
	d->blamed_usec = now_usec;
	return true;
}

/* Says, once per offender and settle period, that memory is short through a
 * cgroup outside the guard, and that no task within its share pays for it. */
static void blame_outsider(struct mg_guard *d, const struct mg_node_state *node, const char *why)
{
	char f_offender[sizeof(d->outsider_path) + 32], f_current[64];

	if (!say_again(d, node->outsider.path, node->now_usec))
		return;
	snprintf(f_offender, sizeof(f_offender), "MEMGUARD_OFFENDER=%s", node->outsider.path);
	snprintf(f_current, sizeof(f_current), "MEMGUARD_OFFENDER_CURRENT=%" PRIu64, node->outsider.current);
	const char *fields[] = {f_offender, f_current, "MEMGUARD_ACTION=none", NULL};
	mg_log_fields(LOG_WARNING, fields,
	              "memory is short through a cgroup outside the guard: %s; "
	              "no task within its share is killed for it",
	              why);
}

/* The node is about to stall through a cgroup outside the guard: do what
 * the kernel's OOM killer would do there, before the stall. */
static void kill_outsider(struct mg_guard *d, const struct mg_node_state *node, const struct mg_guarded *g,
                          size_t n, const char *why)
{
	int r = outside_kill(d, node->outsider.path, g, n, why, node->now_usec);

	/* A watched unit restarted (or restarting) instead: the service guard said so. */
	if (r == 2) {
		d->handed_over_usec = node->now_usec;
		return;
	}
	if (r > 0) {
		d->last_kill_usec = node->now_usec;
		d->last_victim[0] = '\0'; /* outside the guard: not waited on */
		return;
	}
	/* Nothing there may be killed: name it, as for OUTSIDER. */
	blame_outsider(d, node, why);
	if (r < 0)
		mg_log_errno(LOG_ERR, r, "kill in %s, outside the guard: %m", node->outsider.path);
}

/* Carries out the verdict dec on the node and the guarded cgroups (snaps, n)
 * it was taken on. */
static void carry_out(struct mg_guard *d, const struct mg_node_state *node, const struct mg_guarded *snaps,
                      size_t n, const struct mg_decision *dec)
{
	struct watched *v = dec->victim >= 0 ? &d->w[dec->victim] : NULL;

	switch (dec->verdict) {
	case MG_VERDICT_UNFENCE:
		unfence_all(d);
		forget_failures(d);
		break;
	case MG_VERDICT_CALM:
		forget_failures(d);
		break;
	case MG_VERDICT_SETTLING:
	case MG_VERDICT_HOLD: /* fenced in: it may stay while it does not push against the fence */
		break;
	case MG_VERDICT_NO_VICTIM:
		if (say_again(d, "", node->now_usec))
			log_warn("memory is short (%s) but no guarded cgroup may be killed", dec->why);
		break;
	case MG_VERDICT_OUTSIDER:
		blame_outsider(d, node, dec->why);
		break;
	case MG_VERDICT_KILL_OUTSIDER:
		kill_outsider(d, node, snaps, n, dec->why);
		break;
	case MG_VERDICT_FENCE:
		/* No fence could be set: the kill it stood in for. */
		if (!fence(d, v, &snaps[dec->victim], node, dec->allowance))
			kill_victim(d, v, &snaps[dec->victim], dec->why, node->now_usec);
		break;
	case MG_VERDICT_WIDEN:
		widen(d, v, dec->allowance, dec->why);
		break;
	case MG_VERDICT_KILL:
		kill_victim(d, v, &snaps[dec->victim], dec->why, node->now_usec);
		break;
	}
}

static uint64_t realtime_sec(void)
{
	struct timespec ts;

	return clock_gettime(CLOCK_REALTIME, &ts) == 0 ? (uint64_t)ts.tv_sec : 0;
}

/* After each decision: counts what the verdict came to, and writes the
 * metrics file when one is configured and due. */
static void update_metrics(struct mg_guard *d, const struct mg_node_state *node,
                           const struct mg_decision *dec)
{
	struct mg_daemon_metrics *m = &d->metrics;
	/* kill_victim() and kill_outsider() set last_kill_usec to the decision's
	 * time when the kill was carried out (or logged, in a dry run); fence()
	 * sets throttled; widen() clears pushed. */
	bool killed = d->last_kill_usec == node->now_usec;
	const struct watched *v = dec->victim >= 0 && (size_t)dec->victim < d->nw ? &d->w[dec->victim] : NULL;
	bool fenced = v && (dec->verdict == MG_VERDICT_WIDEN ? !v->pushed : v->throttled);
	enum mg_metric_action action = mg_metric_action_of(dec->verdict, killed, fenced, d->policy.dry_run);
	/* A watched unit restarted for the outsider rule: the service guard counts it. */
	if (d->handed_over_usec == node->now_usec)
		action = MG_ACTION_NONE;

	/* Fences and kills come only when memory is short, so one rule held. */
	bool short_ = action != MG_ACTION_NONE && action != MG_ACTION_UNFENCE && action != MG_ACTION_WIDEN;

	mg_daemon_metrics_count(m, action, short_ ? mg_short_reason_of(&d->policy, node) : MG_SHORT_COUNT);
	if (action == MG_ACTION_KILL)
		m->last_freed_usec = mg_now_usec() - node->now_usec;
	if (!m->start_time_sec)
		m->start_time_sec = realtime_sec();
	m->mem_available = node->mem.mem_available;
	m->psi = d->sense.psi;
	m->guarded = d->nw;
	m->fenced = 0;
	m->degraded = false;
	for (size_t i = 0; i < d->nw; i++) {
		m->fenced += d->w[i].throttled;
		m->degraded |= d->w[i].throttled && d->w[i].fence_wd < 0;
	}
	m->services = d->services;
	mg_daemon_metrics_write(m, d->cfg.metrics_file, node->now_usec, d->cfg.metrics_interval_usec,
	                        action != MG_ACTION_NONE || mg_services_take_acted(d->services));
}

static int on_poll(sd_event_source *src, uint64_t usec, void *userdata)
{
	return mg_guard_evaluate(userdata);
}

int mg_guard_evaluate(struct mg_guard *d)
{
	static struct mg_guarded snaps[MAX_GUARDED];
	struct mg_node_state node;
	struct mg_decision dec;
	size_t n;
	int r;

	/* Sense, */
	if ((r = mg_sense_snapshot(d, &node, snaps, &n)) >= 0) {
		bool memory_short = r > 0;
		/* decide, */
		mg_policy_decide(&d->policy, &node, snaps, n, &dec);
		/* bench/scale.sh reads this line: the decision's cost against the guard's size. */
		d->decision_usec = mg_now_usec() - node.now_usec;
		if (memory_short)
			log_debug("decided: %s in %.3f ms over %zu guarded cgroups",
			          mg_verdict_name(dec.verdict),
			          (double)(mg_now_usec() - node.now_usec) / 1000.0, n);
		/* act. */
		carry_out(d, &node, snaps, n, &dec);
		update_metrics(d, &node, &dec);
	}
	d->trigger_fired = false;
	r = mg_event_arm_timer(
	        d->event, &d->poll_timer,
	        mg_policy_poll_usec(&d->policy, d->mem.mem_available, d->fall.bps, d->decision_usec),
	        TIMER_ACCURACY_USEC, on_poll, d);
	if (r < 0)
		mg_log_errno(LOG_ERR, r, "arm the poll timer: %m");
	return 0;
}

static int on_node_trigger(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct mg_guard *d = userdata;

	d->trigger_fired = true;
	return mg_guard_evaluate(d);
}

int mg_guard_arm_trigger(struct mg_guard *d)
{
	return mg_sense_arm(&d->sense, d->event, d->cfg.trigger_stall_usec, d->cfg.trigger_window_usec,
	                    on_node_trigger, d);
}

/* A fenced cgroup's memory.events changed: decide at once when it pushes
 * against its fence. */
static int on_fence_event(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct mg_guard *d = userdata;

	return mg_sense_fence_events(d, fd) ? mg_guard_evaluate(d) : 0;
}

static int on_inotify(sd_event_source *src, int fd, uint32_t revents, void *userdata);

static int on_event_rescan(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct mg_guard *d = userdata;
	int r = sd_event_source_set_enabled(d->inotify_src, SD_EVENT_ON);

	if (r < 0)
		mg_log_errno(LOG_ERR, r,
		             "watch the guarded tree again: %m; new cgroups are guarded from the "
		             "next periodic rescan");
	return on_inotify(d->inotify_src, d->inotify_fd, EPOLLIN, d);
}

/* Holds back the rescan that events ask for, usec from now: nothing from inotify wakes
 * memguardd until then (what comes meanwhile waits in the queue, or
 * overflows it: the rescan reads the tree anyway). */
static int hold_rescan(struct mg_guard *d, uint64_t usec)
{
	bool made = !d->event_rescan_timer;
	int r = mg_event_arm_timer(d->event, &d->event_rescan_timer, usec, TIMER_ACCURACY_USEC,
	                           on_event_rescan, d);

	/* Below the pressure sources, as the inotify source it stands in for. */
	if (r >= 0 && made)
		r = sd_event_source_set_priority(d->event_rescan_timer, GUARD_EVENT_PRIORITY);
	if (r >= 0)
		r = sd_event_source_set_enabled(d->inotify_src, SD_EVENT_OFF);
	return r;
}

static int on_inotify(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct mg_guard *d = userdata;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	uint64_t now = mg_now_usec();
	uint64_t at = mg_policy_event_rescan_at(d->rescanned_usec, d->metrics.rescan_took_usec, now);

	/* Drain; what changed does not matter, the rescan reads the tree. */
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	/* A user's mkdir and rmdir must not make memguardd read the tree
	 * again and again: it waits ten times what the last rescan took. */
	if (at > now && d->inotify_src && hold_rescan(d, at - now) >= 0)
		return 0;
	guards_watch_parents(d);
	guards_rescan(d);
	return 0;
}

static int on_rescan(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct mg_guard *d = userdata;

	guards_watch_parents(d);
	guards_rescan(d);
	int r = mg_event_arm_timer(d->event, &d->rescan_timer, RESCAN_USEC, TIMER_ACCURACY_USEC, on_rescan,
	                           d);

	if (r < 0)
		mg_log_errno(LOG_ERR, r, "arm the rescan timer: %m");
	return 0;
}

int mg_guard_watch(struct mg_guard *d)
{
	int r;

	d->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	d->fence_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (d->inotify_fd < 0 || d->fence_fd < 0)
		return mg_log_errno(LOG_ERR, -errno, "inotify_init1: %m");
	if ((r = sd_event_add_io(d->event, &d->inotify_src, d->inotify_fd, EPOLLIN, on_inotify, d)) < 0 ||
	    (r = sd_event_source_set_priority(d->inotify_src, GUARD_EVENT_PRIORITY)) < 0 ||
	    (r = sd_event_add_io(d->event, &d->fence_src, d->fence_fd, EPOLLIN, on_fence_event, d)) < 0)
		return mg_log_errno(LOG_ERR, r, "set up the event loop: %m");
	return 0;
}

void mg_guard_begin(struct mg_guard *d)
{
	on_rescan(NULL, 0, d);
	mg_guard_evaluate(d);
}

void mg_guard_configure(struct mg_guard *d, const struct mg_config *cfg, const struct mg_policy *policy)
{
	bool triggers_changed = cfg->trigger_stall_usec != d->cfg.trigger_stall_usec ||
	                        cfg->trigger_window_usec != d->cfg.trigger_window_usec;
	int r;

	d->cfg = *cfg;
	d->policy = *policy;
	if (triggers_changed && (r = mg_guard_arm_trigger(d)) < 0)
		mg_log_errno(LOG_ERR, r, "re-arm the PSI trigger on pressure/memory: %m");
}

void mg_guard_rescan_now(struct mg_guard *d)
{
	guards_watch_parents(d);
	guards_rescan(d);
}

void mg_guard_done(struct mg_guard *d)
{
	mg_sense_close(&d->sense);
	sd_event_source_unref(d->poll_timer);
	sd_event_source_unref(d->rescan_timer);
	sd_event_source_unref(d->inotify_src);
	sd_event_source_unref(d->event_rescan_timer);
	sd_event_source_unref(d->fence_src);
	if (d->inotify_fd >= 0)
		close(d->inotify_fd);
	if (d->fence_fd >= 0)
		close(d->fence_fd);
	free(d->w);
	free(d->pop);
	mg_watches_done(&d->watches);
	mg_metrics_done(&d->metrics.text);
}

void mg_guard_print_status(struct mg_guard *d)
{
	struct mg_node_state node;
	char a[MG_SIZE_STRLEN], b[MG_SIZE_STRLEN], policy[256];

	if (mg_sense_node(d, &node) < 0)
		return;
	printf("node: MemTotal %s, MemAvailable %s", mg_size_format(node.mem.mem_total, a),
	       mg_size_format(node.mem.mem_available, b));
	if (d->sense.psi)
		printf(", pressure some avg10 %u.%02u%%, full avg10 %u.%02u%%\n", node.psi.some.avg10 / 100,
		       node.psi.some.avg10 % 100, node.psi.full.avg10 / 100, node.psi.full.avg10 % 100);
	else
		printf(", no pressure (%s)\n%s\n", strerror(-d->sense.psi_error),
		       mg_sense_psi_note(&d->sense));
	printf("policy: %s\n", mg_policy_describe(&d->policy, policy, sizeof(policy)));
	guards_rescan(d);
	printf("%zu guarded cgroup%s (%s):\n", d->nw, d->nw == 1 ? "" : "s", d->cfg.guard);
	for (size_t i = 0; i < d->nw; i++) {
		const struct mg_guarded *g = &d->w[i].e.snap;
		printf("  %-48s %10s of %-10s %4" PRIu64 "%%\n", d->w[i].e.path,
		       mg_size_format(g->current, a), g->share ? mg_size_format(g->share, b) : "?",
		       mg_guarded_percent_of_share(g));
	}
	_cleanup_free_ char *log = NULL;
	if (mg_read_file(d->cfg.kill_log, &log) >= 0) {
		const char *start = log + strlen(log);
		for (int lines = 0; start > log && lines <= 10; start--)
			if (start[-1] == '\n' && ++lines > 10)
				break;
		printf("recent kills (%s):\n%s", d->cfg.kill_log, start);
	} else {
		printf("no kills recorded (%s)\n", d->cfg.kill_log);
	}
}
