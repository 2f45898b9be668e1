/* memguardd: watches memory pressure (PSI triggers, MemAvailable) and kills
 * the guarded cgroup furthest over its share before the node stalls. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "act.h"
#include "daemon.h"
#include "memguard/cgroup.h"
#include "memguard/config.h"
#include "memguard/event.h"
#include "memguard/locate.h"
#include "memguard/log.h"
#include "memguard/meminfo.h"
#include "memguard/paths.h"
#include "memguard/procstat.h"
#include "memguard/psi.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "placesvc.h"
#include "policy.h"
#include "scope.h"

static int load_config(struct daemon *d, struct mg_config *ret, struct mg_policy *ret_policy)
{
	char err[512];
	int r;

	mg_config_defaults(ret);
	r = mg_config_load(ret, d->config_path, d->dropin_dir == NULL, d->dropin_dir, err, sizeof(err));
	ret->dry_run |= d->cli_dry_run;
	if (r == 0)
		r = mg_policy_from_config(ret, d->mem.mem_total, ret_policy, err, sizeof(err));
	if (r < 0)
		log_err("%s", err);
	return r;
}

/* Whether the cgroup killed last still holds processes and half of what it
 * held: its memory is not back yet. Once it is not (or cannot be read), it is
 * forgotten, so the check costs nothing until the next kill. */
static bool victim_exiting(struct daemon *d)
{
	uint64_t current;

	if (!d->last_victim[0])
		return false;
	_cleanup_close_ int cg = mg_cg_open(d->mountfd, d->last_victim);
	if (cg >= 0 && mg_cg_populated(cg) > 0 && mg_cg_read_u64(cg, "memory.current", &current) == 0 &&
	    current >= d->last_victim_bytes / 2)
		return true;
	d->last_victim[0] = '\0';
	return false;
}

/* The node's free and reclaimable memory for what the others take: mem's
 * (mg_meminfo_free_and_reclaimable) plus lists, the free pages the per-CPU
 * lists hold (read just after mem), which MemFree leaves out: a huge page
 * taken from the buddy allocator brings a second one into a list, and
 * compaction frees the pages it moved into them, moving MemFree by
 * megabytes nobody took. MemAvailable alone without MemFree. */
static uint64_t free_and_reclaimable(const struct mg_meminfo *mem, uint64_t lists)
{
	uint64_t sum = mg_meminfo_free_and_reclaimable(mem);

	if (mem->has_free && __builtin_add_overflow(sum, lists, &sum))
		return UINT64_MAX;
	return sum;
}

/* Feeds a fenced cgroup's tracker of what the others take, starting it at
 * start_bps: the node's free and reclaimable memory (free_and_reclaimable)
 * plus what the cgroup holds that reclaim cannot give back, so that nothing
 * done on its behalf moves the sum: its own allocations, its page cache read,
 * dropped or locked in memory by anyone, its sockets filled. A failed read
 * skips this look. */
static void track_others(struct daemon *d, struct watched *w, uint64_t reclaimable, uint64_t now_usec,
                         uint64_t start_bps)
{
	uint64_t held, sum;

	if (guards_read_held(d, w, &held) < 0 || __builtin_add_overflow(reclaimable, held, &sum))
		return;
	if (!w->others_fall.from_usec)
		mg_fall_rate_start(&w->others_fall, sum, now_usec, start_bps);
	else
		(void)mg_fall_rate_update(&w->others_fall, sum, now_usec);
}

static bool tracked(const struct watched *w)
{
	return w->throttled && !w->widened && !w->passed_over;
}

static bool any_tracked(const struct daemon *d)
{
	for (size_t i = 0; i < d->nw; i++)
		if (tracked(&d->w[i]))
			return true;
	return false;
}

/* At every look, the trackers of the fenced cgroups whose fence has not been
 * raised (fence() starts them): a few cgroups at most. */
static void track_fenced(struct daemon *d, const struct mg_node_state *node)
{
	uint64_t reclaimable = free_and_reclaimable(&node->mem, node->lists_free);

	for (size_t i = 0; i < d->nw; i++)
		if (tracked(&d->w[i]))
			track_others(d, &d->w[i], reclaimable, node->now_usec, node->available_fall_bps);
}

/* The per-CPU lists' free pages into *ret; 0 when they cannot be read,
 * which leaves the hard floor to MemAvailable alone, as before they
 * counted. */
static int read_lists(struct daemon *d, uint64_t *ret)
{
	int r = mg_zoneinfo_pcp_read(d->procfd, ret);

	if (r < 0) {
		*ret = 0;
		log_debug("read zoneinfo: %s: the per-CPU lists are not counted", strerror(-r));
	}
	return r;
}

static int read_node(struct daemon *d, struct mg_node_state *node)
{
	bool tracking = any_tracked(d);
	int r;

	*node = (struct mg_node_state){.now_usec = mg_now_usec(), .last_kill_usec = d->last_kill_usec};
	if ((r = mg_sense_pressure(&d->sense, &node->psi)) < 0)
		return mg_log_errno(LOG_ERR, r, "read pressure/memory: %m");
	/* Before meminfo: what a victim seen gone gave back shows in it. */
	node->victim_exiting = victim_exiting(d);
	if ((r = mg_meminfo_read(d->procfd, &node->mem)) < 0)
		return mg_log_errno(LOG_ERR, r, "read meminfo: %m");
	node->trigger_fired = d->trigger_fired;
	d->mem = node->mem;
	node->available_fall_bps = mg_fall_rate_update(&d->fall, node->mem.mem_available, node->now_usec);
	/* Right after meminfo, to be added to it, and only when they count: for
	 * the hard floor, once memory is short, and in what the others take.
	 * zoneinfo grows with the CPUs, and the kernel prints each zone's lists
	 * under its lock. Without them this look skips the trackers: a sum
	 * without them would not compare with one with them. */
	if (!tracking && !mg_policy_needs_memory(&d->policy, node))
		return 0;
	if (read_lists(d, &node->lists_free) == 0 && tracking)
		track_fenced(d, node);
	return 0;
}

static int on_poll(sd_event_source *src, uint64_t usec, void *userdata)
{
	return daemon_evaluate(userdata);
}

/* The cgroups as the policy sees them. The fence state is ours; the numbers
 * and the protected processes are read only when memory is short. */
static size_t snapshot(struct daemon *d, bool memory_short, struct mg_guarded *ret)
{
	static uid_t scratch[2 * MAX_GUARDED];
	size_t walk_budget = MG_PROTECT_WALK_BUDGET;
	size_t unwalked = 0;

	if (memory_short &&
	    mg_policy_rescan_due(d->was_short, d->rescanned_usec, d->metrics.rescan_took_usec, mg_now_usec()))
		guards_rescan(d);
	else if (memory_short)
		guards_refresh(d);
	d->was_short = memory_short;
	for (size_t i = 0; i < d->nw; i++) {
		ret[i] = d->w[i].e.snap;
		ret[i].fenced = d->w[i].throttled;
		ret[i].pushed = d->w[i].pushed;
		ret[i].passed_over = d->w[i].passed_over;
		ret[i].widen_failed = d->w[i].widen_failed;
		ret[i].widened = d->w[i].widened;
		/* Until its tracker starts, the node's rate: the most it could be. */
		ret[i].others_fall_bps =
		        d->w[i].others_fall.from_usec ? d->w[i].others_fall.bps : d->fall.bps;
		ret[i].others_measured = mg_fall_rate_measured(&d->w[i].others_fall);
		if (memory_short) {
			_cleanup_close_ int cg = mg_cg_open(d->mountfd, d->w[i].e.path);
			int r = cg < 0 ? cg
			               : mg_scope_holds_protected(cg, d->procfd, d->cfg.protect,
			                                          &walk_budget);
			/* A walk its owner made too long protects nothing. */
			unwalked += r == -E2BIG;
			ret[i].protected_ = r != 0 && r != -E2BIG;
		}
	}
	if (unwalked)
		log_debug("protect: %zu guarded cgroup%s too large to look through for protected processes "
		          "(%d cgroups each, %d in all): not protected",
		          unwalked, unwalked == 1 ? "" : "s", MG_PROTECT_WALK_CGROUPS,
		          MG_PROTECT_WALK_BUDGET);
	/* A share no root-owned record gives is the node's even split. */
	if (memory_short)
		mg_policy_split_shares(&d->policy, d->mem.mem_total, ret, d->nw, scratch);
	return d->nw;
}

/* Its fence is lifted: memory.high is what it was. */
static void fence_lifted(struct daemon *d, struct watched *w)
{
	w->throttled = w->pushed = w->widened = false;
	w->others_fall = (struct mg_fall_rate){0};
	guards_unwatch_fence(d, w);
}

/* Memory came back: lift every fence. */
static void unfence_all(struct daemon *d)
{
	for (size_t i = 0; i < d->nw; i++)
		if (d->w[i].throttled && mg_act_unthrottle(d->mountfd, d->w[i].e.path) >= 0)
			fence_lifted(d, &d->w[i]);
}

/* Memory is not short: a cgroup killed, or whose kill or fence raising failed, may be tried again. */
static void forget_failures(struct daemon *d)
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
 * set. MemAvailable is read again: a look with a rescan takes a while. */
static bool fence(struct daemon *d, struct watched *v, const struct mg_guarded *snap,
                  const struct mg_node_state *node, uint64_t allowance)
{
	struct mg_meminfo mem;
	uint64_t lists;

	if (mg_act_throttle(d->mountfd, v->e.path, snap->current, snap->share, allowance) != 1)
		return false;
	v->throttled = true;
	v->pushed = v->widened = false;
	v->others_fall = (struct mg_fall_rate){0};
	if (mg_meminfo_read(d->procfd, &mem) == 0 && read_lists(d, &lists) == 0)
		track_others(d, v, free_and_reclaimable(&mem, lists), mg_now_usec(),
		             node->available_fall_bps);
	guards_watch_fence(d, v);
	return true;
}

/* Raises the victim's fence; lifts it when that reaches its old memory.high.
 * A raise that failed is not tried again until memory is calm: while it is
 * short, the others are judged meanwhile. */
static void widen(struct daemon *d, struct watched *v, uint64_t allowance, const char *why)
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

static void kill_victim(struct daemon *d, struct watched *v, const struct mg_guarded *snap, const char *why,
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

struct outsider_scan {
	const struct mg_guarded *g;
	size_t n;
	struct mg_outsider *best;
	char *path; /* the best one's, d->outsider_path */
	size_t size;
	uint64_t children; /* what the top-level cgroups hold, guarded or not */
};

/* A top-level cgroup's memory less what the guarded cgroups below it hold. */
static int weigh_top_level(int fd, const char *name, void *userdata)
{
	struct outsider_scan *os = userdata;
	size_t len = strlen(name);
	uint64_t current;

	if (mg_cg_read_u64(fd, "memory.current", &current) < 0)
		return 0;
	os->children += current;
	current = mg_policy_unguarded(name, current, os->g, os->n);
	if (current > os->best->current && len < os->size) {
		memcpy(os->path, name, len + 1);
		*os->best = (struct mg_outsider){.path = os->path, .current = current};
	}
	return 0;
}

struct root_rss {
	int procfd;
	pid_t self;
	uint64_t page_size, sum;
};

/* The resident memory of a process in the root cgroup but init's, kernel
 * threads' and memguardd's. */
static int add_root_rss(pid_t pid, void *userdata)
{
	struct root_rss *rr = userdata;
	char path[32], stat[1024];
	struct mg_proc proc;

	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	if (pid != rr->self && mg_read_small_at(rr->procfd, path, stat, sizeof(stat)) > 0 &&
	    mg_proc_stat_parse(stat, &proc) == 0 && !mg_policy_init_or_kernel(pid, proc.ppid))
		rr->sum += proc.rss_pages * rr->page_size;
	return 0;
}

/* Who holds the most outside the guard: read only when memory is short. */
static void read_outsider(struct daemon *d, const struct mg_guarded *g, size_t n, struct mg_outsider *ret)
{
	struct outsider_scan os = {
	        .g = g, .n = n, .best = ret, .path = d->outsider_path, .size = sizeof(d->outsider_path)};

	struct root_rss rr = {
	        .procfd = d->procfd, .self = getpid(), .page_size = (uint64_t)sysconf(_SC_PAGESIZE)};

	*ret = (struct mg_outsider){0};
	(void)mg_cg_for_each_child(d->mountfd, weigh_top_level, &os);
	/* The root's own processes, which no top-level cgroup counts (not on a
	 * node whose init is not systemd): an outsider like the others. */
	(void)mg_cg_for_each_pid(d->mountfd, add_root_rss, &rr);
	uint64_t own = mg_policy_root_own(&d->mem, os.children, rr.sum);
	if (own > ret->current) {
		snprintf(d->outsider_path, sizeof(d->outsider_path), "%s", MG_ROOT_CGROUP);
		*ret = (struct mg_outsider){.path = d->outsider_path, .current = own};
	}
}

/* Whether to say again what holds the node back ("" for no one): once per
 * change and settle period, so a long shortage does not flood the journal. */
static bool say_again(struct daemon *d, const char *offender, uint64_t now_usec)
{
	if (!mg_policy_blame_due(&d->policy, d->blamed, d->blamed_usec, offender, now_usec))
		return false;
	snprintf(d->blamed, sizeof(d->blamed), "%s", offender);
	d->blamed_usec = now_usec;
	return true;
}

/* Says, once per offender and settle period, that memory is short through a
 * cgroup outside the guard, and that no task within its share pays for it. */
static void blame_outsider(struct daemon *d, const struct mg_node_state *node, const char *why)
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
static void kill_outsider(struct daemon *d, const struct mg_node_state *node, const struct mg_guarded *g,
                          size_t n, const char *why)
{
	int r = outside_kill(d, node->outsider.path, g, n, why, node->now_usec);

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

int daemon_evaluate(struct daemon *d)
{
	static struct mg_guarded snaps[MAX_GUARDED];
	struct mg_node_state node;
	struct mg_decision dec;
	int r;

	if (read_node(d, &node) == 0) {
		bool memory_short = mg_policy_needs_memory(&d->policy, &node);
		size_t n = snapshot(d, memory_short, snaps);
		if (memory_short)
			read_outsider(d, snaps, n, &node.outsider);
		mg_policy_decide(&d->policy, &node, snaps, n, &dec);
		/* bench/scale.sh reads this line: the decision's cost against the guard's size. */
		d->decision_usec = mg_now_usec() - node.now_usec;
		if (memory_short)
			log_debug("decided: %s in %.3f ms over %zu guarded cgroups",
			          mg_verdict_name(dec.verdict),
			          (double)(mg_now_usec() - node.now_usec) / 1000.0, n);
		struct watched *v = dec.victim >= 0 ? &d->w[dec.victim] : NULL;
		switch (dec.verdict) {
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
			if (say_again(d, "", node.now_usec))
				log_warn("memory is short (%s) but no guarded cgroup may be killed", dec.why);
			break;
		case MG_VERDICT_OUTSIDER:
			blame_outsider(d, &node, dec.why);
			break;
		case MG_VERDICT_KILL_OUTSIDER:
			kill_outsider(d, &node, snaps, n, dec.why);
			break;
		case MG_VERDICT_FENCE:
			/* No fence could be set: the kill it stood in for. */
			if (!fence(d, v, &snaps[dec.victim], &node, dec.allowance))
				kill_victim(d, v, &snaps[dec.victim], dec.why, node.now_usec);
			break;
		case MG_VERDICT_WIDEN:
			widen(d, v, dec.allowance, dec.why);
			break;
		case MG_VERDICT_KILL:
			kill_victim(d, v, &snaps[dec.victim], dec.why, node.now_usec);
			break;
		}
		daemon_metrics_update(d, &node, &dec);
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
	struct daemon *d = userdata;

	d->trigger_fired = true;
	return daemon_evaluate(d);
}

/* Arms (or re-arms, keeping the old one on failure) the node's PSI trigger, if it has PSI. */
static int arm_node_trigger(struct daemon *d)
{
	return mg_sense_arm(&d->sense, d->event, d->cfg.trigger_stall_usec, d->cfg.trigger_window_usec,
	                    on_node_trigger, d);
}

static int on_reload(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;
	struct mg_config cfg;
	struct mg_policy policy;
	int r;

	sd_notify(false, "RELOADING=1");
	if (load_config(d, &cfg, &policy) < 0) {
		log_err("reload failed: keeping the running configuration");
	} else {
		bool triggers_changed = cfg.trigger_stall_usec != d->cfg.trigger_stall_usec ||
		                        cfg.trigger_window_usec != d->cfg.trigger_window_usec;
		d->cfg = cfg;
		d->policy = policy;
		mg_log_set_level(d->cli_verbose ? LOG_DEBUG : cfg.log_level);
		if (triggers_changed && (r = arm_node_trigger(d)) < 0)
			mg_log_errno(LOG_ERR, r, "re-arm the PSI trigger on pressure/memory: %m");
		if (d->placesvc)
			mg_placesvc_configure(d->placesvc, cfg.kill_grace_usec, PLACE_MAX_RUNS_PER_UID);
		log_notice("configuration reloaded");
		guards_watch_parents(d);
		guards_rescan(d);
	}
	sd_notify(false, "READY=1");
	return 0;
}

/* Whether CapEff in procfd/self/status has CAP_KILL (bit 5); true when it
 * cannot tell. Root without it may only signal its own uid's processes. */
static bool has_cap_kill(int procfd)
{
	_cleanup_free_ char *text = NULL;
	const char *cap;

	if (mg_read_file_at(procfd, "self/status", &text) < 0 || !(cap = mg_status_field(text, "CapEff")))
		return true;
	return strtoull(cap, NULL, 16) & (1ull << 5);
}

/* Protect the guard itself: no paging out, never the OOM killer's choice. */
static void protect_self(int procfd)
{
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0 && mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		log_warn("mlockall: %s: memguardd may be paged out under pressure", strerror(errno));
	if (mg_write_file_at(procfd, "self/oom_score_adj", "-1000") < 0)
		log_warn("cannot set oom_score_adj to -1000: the kernel might kill memguardd");
	if (!has_cap_kill(procfd))
		log_warn("no CAP_KILL: kills of other users' tasks will fail");
	/* A pidfd per process of a victim, and a fork bomb has thousands: more
	 * than the usual soft limit of 1024 descriptors. */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
			log_debug("raise RLIMIT_NOFILE: %s", strerror(errno));
	}
}

/* Writes our pid for the launcher and holds a lock on the file for life, so
 * a second memguardd (say memguardd -n by hand) neither overwrites nor
 * removes the running one's. Returns the locked fd, or -1. */
static int write_pidfile(void)
{
	char buf[32], dir[] = MG_DAEMON_PIDFILE;

	/* systemd's RuntimeDirectory= makes it; without systemd we do. */
	*strrchr(dir, '/') = '\0';
	(void)mkdir(dir, 0755);
	int fd = open(MG_DAEMON_PIDFILE, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

	if (fd < 0) {
		log_debug("write %s: %s", MG_DAEMON_PIDFILE, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		log_warn("%s is held by another memguardd: not writing it", MG_DAEMON_PIDFILE);
		close(fd);
		return -1;
	}
	int len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || write(fd, buf, (size_t)len) != len)
		log_debug("write %s: %s", MG_DAEMON_PIDFILE, strerror(errno));
	return fd;
}

/* When memguardd acts, in words. */
static const char *describe_policy(const struct mg_policy *p, char *buf, size_t size)
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

static void print_status(struct daemon *d)
{
	struct mg_node_state node;
	char a[MG_SIZE_STRLEN], b[MG_SIZE_STRLEN], policy[256];

	if (read_node(d, &node) < 0)
		return;
	printf("node: MemTotal %s, MemAvailable %s", mg_size_format(node.mem.mem_total, a),
	       mg_size_format(node.mem.mem_available, b));
	if (d->sense.psi)
		printf(", pressure some avg10 %u.%02u%%, full avg10 %u.%02u%%\n", node.psi.some.avg10 / 100,
		       node.psi.some.avg10 % 100, node.psi.full.avg10 / 100, node.psi.full.avg10 % 100);
	else
		printf(", no pressure (%s)\n%s\n", strerror(-d->sense.psi_error),
		       mg_sense_psi_note(&d->sense));
	printf("policy: %s\n", describe_policy(&d->policy, policy, sizeof(policy)));
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

static void usage(void)
{
	puts("Usage: memguardd [OPTIONS]\n"
	     "Watches memory pressure and, before the node stalls, fences in the guarded\n"
	     "cgroup furthest over its share and kills it if it keeps growing.\n\n"
	     "  -c, --config FILE   read FILE instead of " MG_CONFIG_FILE " and conf.d\n"
	     "  -n, --dry-run       decide and log, never kill\n"
	     "  -s, --status        print node pressure, guarded cgroups and recent kills, then exit\n"
	     "  -v, --verbose       debug messages\n"
	     "  -h, --help          this text");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"config", required_argument, NULL, 'c'}, {"dry-run", no_argument, NULL, 'n'},
	        {"status", no_argument, NULL, 's'},       {"verbose", no_argument, NULL, 'v'},
	        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	struct daemon d = {.config_path = MG_CONFIG_FILE,
	                   .dropin_dir = MG_CONFIG_DROPIN_DIR,
	                   .sense = MG_SENSE_INIT,
	                   .inotify_fd = -1,
	                   .fence_fd = -1};
	struct mg_cgroup_mount m = {0};
	bool status = false, dry_run = false;
	int verbose = 0, c, r;

	mg_log_setup("memguardd", MG_LOG_AUTO, LOG_INFO);
	opterr = 0; /* one message of our own, naming the option */
	while ((c = getopt_long(argc, argv, ":c:nsvh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			d.config_path = optarg;
			d.dropin_dir = NULL;
			break;
		case 'n':
			dry_run = true;
			break;
		case 's':
			status = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage();
			return 0;
		case ':':
			log_err("option %s needs an argument", argv[optind - 1]);
			return 2;
		default:
			if (optopt)
				log_err("unknown option -%c (see memguardd --help)", optopt);
			else
				log_err("unknown option %s (see memguardd --help)", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		log_err("unexpected argument \"%s\": memguardd takes options only (see memguardd --help)",
		        argv[optind]);
		return 2;
	}
	const char *proc_path = getenv(MG_PROC_PATH_ENV) ?: MG_PROC_PATH;
	d.procfd = open(proc_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.procfd < 0)
		return mg_log_errno(LOG_ERR, -errno, "open %s: %m", proc_path), 1;
	if ((r = mg_meminfo_read(d.procfd, &d.mem)) < 0)
		return mg_log_errno(LOG_ERR, r, "read %s/meminfo: %m", proc_path), 1;
	d.cli_dry_run = dry_run;
	d.cli_verbose = verbose;
	if (load_config(&d, &d.cfg, &d.policy) < 0)
		return 1;
	mg_log_set_level(verbose ? LOG_DEBUG : d.cfg.log_level);

	r = mg_cgroup_find_memory_mount(d.procfd, &m);
	if (r < 0 || !m.unified) {
		if (r < 0)
			log_err("memguardd needs the memory controller on cgroup v2: no hierarchy carries it "
			        "(%s)",
			        strerror(-r));
		else
			log_err("memguardd needs the memory controller on cgroup v2: it is on cgroup v1 at "
			        "%s (boot with systemd.unified_cgroup_hierarchy=1 to switch the node to v2)",
			        m.path);
		return 1;
	}
	snprintf(d.mount, sizeof(d.mount), "%s", m.path);
	mg_cgroup_mount_done(&m);
	d.mountfd = mg_cg_open(AT_FDCWD, d.mount);
	if (d.mountfd < 0)
		return log_err("open %s: %s", d.mount, strerror(-d.mountfd)), 1;
	if (sd_event_new(&d.event) < 0)
		return 1;
	if ((r = mg_sense_open(&d.sense, d.procfd)) < 0)
		return mg_log_errno(LOG_ERR, r, "read %s/pressure/memory: %m", proc_path), 1;
	if (status) {
		print_status(&d);
		return 0;
	}

	protect_self(d.procfd);
	if ((r = arm_node_trigger(&d)) < 0)
		return mg_log_errno(LOG_ERR, r, "arm a PSI trigger on %s/pressure/memory: %m", proc_path), 1;
	if (!d.sense.psi)
		mg_log_errno(LOG_WARNING, d.sense.psi_error, "%s/pressure/memory: %m. %s", proc_path,
		             mg_sense_psi_note(&d.sense));
	d.inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	d.fence_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (d.inotify_fd < 0 || d.fence_fd < 0)
		return mg_log_errno(LOG_ERR, -errno, "inotify_init1: %m"), 1;
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if ((r = sd_event_add_io(d.event, &d.inotify_src, d.inotify_fd, EPOLLIN, guards_on_inotify, &d)) <
	            0 ||
	    (r = sd_event_source_set_priority(d.inotify_src, GUARD_EVENT_PRIORITY)) < 0 ||
	    (r = sd_event_add_io(d.event, &d.fence_src, d.fence_fd, EPOLLIN, guards_on_fence_event, &d)) <
	            0 ||
	    (r = sd_event_add_signal(d.event, NULL, SIGHUP, on_reload, &d)) < 0 ||
	    (r = sd_event_add_signal(d.event, NULL, SIGTERM, NULL, NULL)) < 0 ||
	    (r = sd_event_add_signal(d.event, NULL, SIGINT, NULL, NULL)) < 0 ||
	    (r = sd_event_set_watchdog(d.event, true)) < 0)
		return mg_log_errno(LOG_ERR, r, "set up the event loop: %m"), 1;

	int pidfile = write_pidfile();
	/* Only the node's memguardd (the pid file's holder) serves placements. */
	if (pidfile >= 0) {
		struct mg_placesvc_config pc = {
		        .socket_path = getenv(MG_PLACE_SOCKET_ENV) ?: MG_PLACE_SOCKET,
		        .mount = d.mount,
		        .grace_usec = d.cfg.kill_grace_usec,
		        .max_runs_per_uid = PLACE_MAX_RUNS_PER_UID,
		        .registry = MG_PLACE_REGISTRY,
		        .watch_fd = d.inotify_fd,
		};
		if ((r = mg_placesvc_start(d.event, d.mountfd, d.procfd, &pc, &d.placesvc)) < 0)
			mg_log_errno(LOG_WARNING, r,
			             "placement service on %s: %m; ordinary users' runs stay degraded",
			             pc.socket_path);
		else
			log_info("placing ordinary users' runs on request at %s, each inside its caller's "
			         "cgroup",
			         pc.socket_path);
	}
	guards_on_rescan(NULL, 0, &d);
	daemon_evaluate(&d);
	char policy[256];
	log_notice("watching %s and %zu guarded cgroups (%s); %s%s", proc_path, d.nw, d.cfg.guard,
	           describe_policy(&d.policy, policy, sizeof(policy)), d.cfg.dry_run ? " (dry run)" : "");
	sd_notify(false, "READY=1\nSTATUS=watching memory pressure");
	r = sd_event_loop(d.event);
	sd_notify(false, "STOPPING=1");
	mg_placesvc_free(d.placesvc);
	if (pidfile >= 0) {
		unlink(MG_DAEMON_PIDFILE);
		close(pidfile);
	}
	mg_sense_close(&d.sense);
	sd_event_source_unref(d.poll_timer);
	sd_event_source_unref(d.rescan_timer);
	sd_event_source_unref(d.inotify_src);
	sd_event_source_unref(d.event_rescan_timer);
	sd_event_source_unref(d.fence_src);
	close(d.inotify_fd);
	close(d.fence_fd);
	sd_event_unref(d.event);
	free(d.w);
	mg_metrics_done(&d.metrics.text);
	return r < 0 ? 1 : 0;
}
