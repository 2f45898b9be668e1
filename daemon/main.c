/* memguardd: watches memory pressure (PSI triggers, MemAvailable) and kills
 * the guarded cgroup furthest over its share before the node stalls. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
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
#include "memguard/cgroup.h"
#include "memguard/config.h"
#include "memguard/event.h"
#include "memguard/locate.h"
#include "memguard/log.h"
#include "memguard/meminfo.h"
#include "memguard/paths.h"
#include "memguard/psi.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "placesvc.h"
#include "policy.h"
#include "scope.h"

/* The guard list grows on demand up to this many cgroups (mg_scope_admit()
 * caps each user below it). */
#define MAX_GUARDED MG_SCOPE_MAX
/* New cgroups are seen through inotify; this rescan is only a safety net. */
#define RESCAN_USEC (60 * 1000000ull)
/* Timer slack: the poll interval is at least 100 ms. */
#define TIMER_ACCURACY_USEC 10000ull
/* Placed runs one ordinary user may have at once. */
#define PLACE_MAX_RUNS_PER_UID 32

struct watched {
	struct mg_scope_entry e;
	int trigger_fd;
	sd_event_source *src;
	bool seen;
	bool throttled;   /* its memory.high is lowered: undo when memory is back */
	bool pushed;      /* its PSI trigger fired since: it stalls against that limit */
	bool kill_failed; /* a kill failed: pass it over, so the next worst can go */
};

struct daemon {
	struct mg_config cfg;
	struct mg_policy policy;
	const char *config_path;
	const char *dropin_dir;
	int procfd, mountfd;
	char mount[4096];
	sd_event *event;
	sd_event_source *node_src, *poll_timer, *rescan_timer, *inotify_src;
	int inotify_fd;
	int node_trigger_fd;
	struct watched *w; /* grown by watch_slot() */
	size_t nw, w_cap;
	bool trigger_fired;
	uint64_t last_kill_usec;
	struct mg_meminfo mem;
	struct mg_fall_rate fall;
	bool cli_dry_run; /* -n and -v outlive a reload */
	int cli_verbose;
	struct mg_placesvc *placesvc;
};

static int evaluate(struct daemon *d);

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

static void unwatch(struct watched *w)
{
	sd_event_source_disable_unref(w->src);
	w->src = NULL;
	if (w->trigger_fd >= 0)
		close(w->trigger_fd);
	w->trigger_fd = -1;
}

static int on_cgroup_trigger(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;

	if (revents & EPOLLERR) {
		/* The cgroup is gone; the next rescan forgets it. */
		sd_event_source_set_enabled(src, SD_EVENT_OFF);
		return 0;
	}
	for (size_t i = 0; i < d->nw; i++)
		if (d->w[i].trigger_fd == fd)
			d->w[i].pushed = d->w[i].throttled;
	d->trigger_fired = true;
	return evaluate(d);
}

static void arm_cgroup_trigger(struct daemon *d, struct watched *w)
{
	_cleanup_close_ int cg = mg_cg_open(d->mountfd, w->e.path);

	if (cg >= 0)
		w->trigger_fd = mg_psi_trigger_open(cg, "memory.pressure", MG_PSI_SOME,
		                                    d->cfg.trigger_stall_usec, d->cfg.trigger_window_usec);
	if (w->trigger_fd >= 0 &&
	    sd_event_add_io(d->event, &w->src, w->trigger_fd, EPOLLPRI, on_cgroup_trigger, d) < 0)
		unwatch(w);
	log_debug("guarding cgroup %s (PSI trigger %s)", w->e.path,
	          w->trigger_fd >= 0 ? "armed" : "not armed");
}

/* Room for one more watched cgroup: the list grows on demand up to MAX_GUARDED. */
static struct watched *watch_slot(struct daemon *d)
{
	if (d->nw == d->w_cap) {
		size_t cap = d->w_cap ? d->w_cap * 2 : 64;
		struct watched *w = cap <= MAX_GUARDED ? realloc(d->w, cap * sizeof(*w)) : NULL;
		if (!w)
			return NULL;
		d->w = w;
		d->w_cap = cap;
	}
	return &d->w[d->nw++];
}

/* Says once per change which cgroups a cap left unguarded, and whose. */
static void log_dropped(const struct mg_scope_dropped *dr)
{
	static size_t last_n;
	char owners[128] = "";
	size_t len = 0;

	if (dr->n == last_n)
		return;
	last_n = dr->n;
	if (dr->n == 0) {
		log_notice("guard: every guarded cgroup fits the caps again");
		return;
	}
	for (size_t i = 0; i < dr->n_owners && len < sizeof(owners); i++)
		len += (size_t)snprintf(owners + len, sizeof(owners) - len, "%s%u", i ? ", " : "",
		                        (unsigned)dr->owners[i]);
	log_warn("guard: %zu cgroup%s of uid %s%s left unguarded: over the cap of %d per user%s", dr->n,
	         dr->n == 1 ? "" : "s", owners, dr->more_owners ? " and others" : "", MG_SCOPE_MAX_PER_OWNER,
	         dr->global ? " or the cap of " MG_SCOPE_MAX_TEXT " in all" : "");
}

/* Finds the guarded cgroups, arms a trigger on each new one, forgets the gone. */
static void rescan(struct daemon *d)
{
	static struct mg_scope_list cands;
	struct mg_scope_dropped dropped;
	bool protect_changed;
	const struct mg_protect *protect = mg_scope_protect(d->cfg.protect, &protect_changed);
	int n = mg_scope_expand(d->mount, d->cfg.guard, &cands);
	uint64_t now = mg_now_usec();

	if (protect_changed)
		for (size_t i = 0; i < protect->n; i++)
			if (protect->e[i].kind == MG_PROTECT_IGNORED)
				log_warn("protect: '%s' %s", protect->e[i].text, protect->e[i].why);
	if (n < 0) {
		mg_log_errno(LOG_WARNING, n, "expand guard globs \"%s\": %m", d->cfg.guard);
		return;
	}
	for (size_t k = 0; k < cands.n; k++) {
		struct mg_scope_candidate *c = &cands.c[k];
		if (mg_scope_probe(d->mountfd, c) < 0)
			c->populated = c->has_memory = false; /* gone: not guarded */
		c->protected_ = mg_protect_match_cgroup(protect, c->path);
	}
	mg_scope_admit(cands.c, cands.n, MAX_GUARDED, MG_SCOPE_MAX_PER_OWNER, &dropped);
	log_dropped(&dropped);
	for (size_t i = 0; i < d->nw; i++)
		d->w[i].seen = false;
	for (size_t k = 0; k < cands.n; k++) {
		const char *path = cands.c[k].path;
		size_t i;
		if (!cands.c[k].admitted)
			continue;
		for (i = 0; i < d->nw && strcmp(d->w[i].e.path, path) != 0; i++)
			;
		if (i == d->nw) {
			struct watched *w = watch_slot(d);
			if (!w) {
				log_warn("guard: no memory for cgroup %s: not guarded", path);
				continue;
			}
			*w = (struct watched){.trigger_fd = -1};
			snprintf(w->e.path, sizeof(w->e.path), "%s", path);
			/* A previous daemon may have fenced it. */
			w->throttled = mg_act_is_throttled(d->mountfd, w->e.path) == 1;
			arm_cgroup_trigger(d, w);
		}
		d->w[i].seen = mg_scope_read(d->mountfd, &d->w[i].e, now) == 0;
	}
	/* Compact: drop what vanished or left the guard list. */
	size_t kept = 0;
	for (size_t i = 0; i < d->nw; i++) {
		if (d->w[i].seen) {
			d->w[kept] = d->w[i];
			d->w[kept].e.snap.path = d->w[kept].e.path; /* it moved */
			kept++;
		} else {
			unwatch(&d->w[i]);
		}
	}
	d->nw = kept;
}

/* Watches every directory a guarded cgroup could appear in: for the glob
 * "memguard/ * / *" (without the spaces) that is <mount>/memguard and each
 * <mount>/memguard/run-*. mkdir in cgroupfs raises IN_CREATE like anywhere. */
static void watch_parents(struct daemon *d)
{
	char word[512], prefix[sizeof(d->mount) + sizeof(word) + 1];

	/* The mount itself: the glob's first directory may not exist yet. */
	(void)inotify_add_watch(d->inotify_fd, d->mount, IN_CREATE | IN_DELETE | IN_ONLYDIR);

	for (const char *p = d->cfg.guard; *p;) {
		size_t len = strcspn(p, " \t");
		if (len > 0 && len < sizeof(word)) {
			memcpy(word, p, len);
			word[len] = '\0';
			/* Each proper prefix of the glob, by components: "memguard", "memguard/ *". */
			for (char *slash = strchr(word, '/'); slash; slash = strchr(slash + 1, '/')) {
				snprintf(prefix, sizeof(prefix), "%s/%.*s", d->mount, (int)(slash - word),
				         word);
				glob_t g;
				if (glob(prefix, GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g) != 0)
					continue;
				for (size_t i = 0; i < g.gl_pathc; i++)
					(void)inotify_add_watch(d->inotify_fd, g.gl_pathv[i],
					                        IN_CREATE | IN_DELETE | IN_ONLYDIR);
				globfree(&g);
			}
		}
		p += len;
		p += strspn(p, " \t");
	}
}

static int on_inotify(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	/* Drain; what changed does not matter, the rescan reads the tree. */
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	watch_parents(d);
	rescan(d);
	return 0;
}

static int on_rescan(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;

	watch_parents(d);
	rescan(d);
	int r = mg_event_arm_timer(d->event, &d->rescan_timer, RESCAN_USEC, TIMER_ACCURACY_USEC, on_rescan,
	                           d);

	if (r < 0)
		mg_log_errno(LOG_ERR, r, "arm the rescan timer: %m");
	return 0;
}

static int read_node(struct daemon *d, struct mg_node_state *node)
{
	int r;

	*node = (struct mg_node_state){.now_usec = mg_now_usec(), .last_kill_usec = d->last_kill_usec};
	if ((r = mg_meminfo_read(d->procfd, &node->mem)) < 0)
		return mg_log_errno(LOG_ERR, r, "read meminfo: %m");
	if ((r = mg_psi_read(d->procfd, "pressure/memory", &node->psi)) < 0)
		return mg_log_errno(LOG_ERR, r, "read pressure/memory: %m");
	node->trigger_fired = d->trigger_fired;
	d->mem = node->mem;
	node->available_fall_bps = mg_fall_rate_update(&d->fall, node->mem.mem_available, node->now_usec);
	return 0;
}

static int on_poll(sd_event_source *src, uint64_t usec, void *userdata)
{
	return evaluate(userdata);
}

/* The cgroups as the policy sees them. The fence state is ours; the tree is
 * read (rescan, protected processes) only when memory is short. */
static size_t snapshot(struct daemon *d, bool memory_short, struct mg_guarded *ret)
{
	if (memory_short)
		rescan(d);
	for (size_t i = 0; i < d->nw; i++) {
		ret[i] = d->w[i].e.snap;
		ret[i].fenced = d->w[i].throttled;
		ret[i].pushed = d->w[i].pushed;
		ret[i].kill_failed = d->w[i].kill_failed;
		if (memory_short) {
			_cleanup_close_ int cg = mg_cg_open(d->mountfd, d->w[i].e.path);
			ret[i].protected_ =
			        cg < 0 || mg_scope_holds_protected(cg, d->procfd, d->cfg.protect) != 0;
		}
	}
	return d->nw;
}

/* Memory came back: lift every fence. */
static void unfence_all(struct daemon *d)
{
	for (size_t i = 0; i < d->nw; i++)
		if (d->w[i].throttled && mg_act_unthrottle(d->mountfd, d->w[i].e.path) >= 0)
			d->w[i].throttled = d->w[i].pushed = false;
}

/* Memory is not short: a cgroup whose kill failed may be tried again. */
static void forget_failed_kills(struct daemon *d)
{
	for (size_t i = 0; i < d->nw; i++)
		d->w[i].kill_failed = false;
}

/* Sets the victim's fence; false when it could not be set. */
static bool fence(struct daemon *d, struct watched *v, const struct mg_guarded *snap, uint64_t allowance)
{
	if (mg_act_throttle(d->mountfd, v->e.path, snap->current, snap->share, allowance) != 1)
		return false;
	v->throttled = true;
	v->pushed = false;
	return true;
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
		v->kill_failed = true;
		return;
	}
	d->last_kill_usec = now_usec;
	if (killed > 0 && !rec.dry_run)
		sd_notifyf(false, "STATUS=last kill: %s", rec.path);
}

static int evaluate(struct daemon *d)
{
	static struct mg_guarded snaps[MAX_GUARDED];
	struct mg_node_state node;
	struct mg_decision dec;
	int r;

	if (read_node(d, &node) == 0) {
		size_t n = snapshot(d, mg_policy_needs_memory(&d->policy, &node), snaps);
		mg_policy_decide(&d->policy, &node, snaps, n, &dec);
		struct watched *v = dec.victim >= 0 ? &d->w[dec.victim] : NULL;
		switch (dec.verdict) {
		case MG_VERDICT_UNFENCE:
			unfence_all(d);
			forget_failed_kills(d);
			break;
		case MG_VERDICT_CALM:
			forget_failed_kills(d);
			break;
		case MG_VERDICT_SETTLING:
		case MG_VERDICT_HOLD: /* fenced in: it may stay while it does not push against the fence */
			break;
		case MG_VERDICT_NO_VICTIM:
			log_warn("memory is short (%s) but no guarded cgroup may be killed", dec.why);
			break;
		case MG_VERDICT_FENCE:
			/* No fence could be set: the kill it stood in for. */
			if (!fence(d, v, &snaps[dec.victim], dec.allowance))
				kill_victim(d, v, &snaps[dec.victim], dec.why, node.now_usec);
			break;
		case MG_VERDICT_KILL:
			kill_victim(d, v, &snaps[dec.victim], dec.why, node.now_usec);
			break;
		}
	}
	d->trigger_fired = false;
	r = mg_event_arm_timer(d->event, &d->poll_timer,
	                       mg_policy_poll_usec(&d->policy, d->mem.mem_available), TIMER_ACCURACY_USEC,
	                       on_poll, d);
	if (r < 0)
		mg_log_errno(LOG_ERR, r, "arm the poll timer: %m");
	return 0;
}

static int on_node_trigger(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;

	d->trigger_fired = true;
	return evaluate(d);
}

/* Arms (or re-arms, keeping the old one on failure) the node's PSI trigger. */
static int arm_node_trigger(struct daemon *d)
{
	sd_event_source *src = NULL;
	int fd = mg_psi_trigger_open(d->procfd, "pressure/memory", MG_PSI_SOME, d->cfg.trigger_stall_usec,
	                             d->cfg.trigger_window_usec);
	int r;

	if (fd < 0)
		return fd;
	if ((r = sd_event_add_io(d->event, &src, fd, EPOLLPRI, on_node_trigger, d)) < 0) {
		close(fd);
		return r;
	}
	sd_event_source_disable_unref(d->node_src);
	if (d->node_trigger_fd >= 0)
		close(d->node_trigger_fd);
	d->node_src = src;
	d->node_trigger_fd = fd;
	return 0;
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
		if (triggers_changed) {
			if ((r = arm_node_trigger(d)) < 0)
				mg_log_errno(LOG_ERR, r, "re-arm the PSI trigger on pressure/memory: %m");
			for (size_t i = 0; i < d->nw; i++) {
				unwatch(&d->w[i]);
				arm_cgroup_trigger(d, &d->w[i]);
			}
		}
		if (d->placesvc)
			mg_placesvc_configure(d->placesvc, cfg.kill_grace_usec, PLACE_MAX_RUNS_PER_UID);
		log_notice("configuration reloaded");
		watch_parents(d);
		rescan(d);
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

	if (mg_read_file_at(procfd, "self/status", &text) < 0 || !(cap = strstr(text, "\nCapEff:")))
		return true;
	return strtoull(cap + strlen("\nCapEff:"), NULL, 16) & (1ull << 5);
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
	/* A PSI trigger per guarded cgroup and a pidfd per process of a victim:
	 * more than the usual soft limit of 1024 descriptors. */
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
	int fd = open(MG_DAEMON_PIDFILE, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

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
	printf(", pressure some avg10 %u.%02u%%, full avg10 %u.%02u%%\n", node.psi.some.avg10 / 100,
	       node.psi.some.avg10 % 100, node.psi.full.avg10 / 100, node.psi.full.avg10 % 100);
	printf("policy: %s\n", describe_policy(&d->policy, policy, sizeof(policy)));
	rescan(d);
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
	                   .node_trigger_fd = -1,
	                   .inotify_fd = -1};
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
			        "%s",
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
	if (status) {
		print_status(&d);
		return 0;
	}

	protect_self(d.procfd);
	if ((r = arm_node_trigger(&d)) < 0)
		return mg_log_errno(LOG_ERR, r, "arm a PSI trigger on %s/pressure/memory: %m", proc_path), 1;
	d.inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (d.inotify_fd < 0)
		return mg_log_errno(LOG_ERR, -errno, "inotify_init1: %m"), 1;
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if ((r = sd_event_add_io(d.event, &d.inotify_src, d.inotify_fd, EPOLLIN, on_inotify, &d)) < 0 ||
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
		        .systemd = sd_booted() > 0,
		};
		if ((r = mg_placesvc_start(d.event, d.mountfd, d.procfd, &pc, &d.placesvc)) < 0)
			mg_log_errno(LOG_WARNING, r,
			             "placement service on %s: %m; ordinary users' runs stay degraded",
			             pc.socket_path);
		else
			log_info("placing ordinary users' runs on request at %s (%s)", pc.socket_path,
			         mg_placesvc_backend(d.placesvc));
	}
	on_rescan(NULL, 0, &d);
	evaluate(&d);
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
	for (size_t i = 0; i < d.nw; i++)
		unwatch(&d.w[i]);
	sd_event_source_unref(d.node_src);
	sd_event_source_unref(d.poll_timer);
	sd_event_source_unref(d.rescan_timer);
	sd_event_source_unref(d.inotify_src);
	close(d.inotify_fd);
	sd_event_unref(d.event);
	free(d.w);
	return r < 0 ? 1 : 0;
}
