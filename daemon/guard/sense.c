/* memguardd's signal sources and the snapshot built from them (sense.h). */
#include "guard/sense.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "guard/guards.h"
#include "memguard/cgroup.h"
#include "memguard/log.h"
#include "memguard/procstat.h"
#include "memguard/units.h"
#include "memguard/util.h"

#define PRESSURE_FILE "pressure/memory"

int mg_sense_psi_state(int r)
{
	if (r >= 0)
		return 1;
	return r == -ENOENT || r == -EOPNOTSUPP ? 0 : r;
}

int mg_sense_open(struct mg_sense *s, int procfd)
{
	struct mg_psi psi;
	int r = mg_psi_read(procfd, PRESSURE_FILE, &psi);
	int state = mg_sense_psi_state(r);

	*s = (struct mg_sense)MG_SENSE_INIT;
	s->procfd = procfd;
	if (state < 0)
		return state;
	s->psi = state == 1;
	s->psi_error = s->psi ? 0 : r;
	return 0;
}

int mg_sense_arm(struct mg_sense *s, sd_event *e, uint64_t stall_usec, uint64_t window_usec,
                 sd_event_io_handler_t cb, void *userdata)
{
	sd_event_source *src = NULL;
	int fd, r;

	if (!s->psi)
		return 0;
	fd = mg_psi_trigger_open(s->procfd, PRESSURE_FILE, MG_PSI_SOME, stall_usec, window_usec);
	if (fd < 0)
		return fd;
	if ((r = sd_event_add_io(e, &src, fd, EPOLLPRI, cb, userdata)) < 0) {
		close(fd);
		return r;
	}
	sd_event_source_disable_unref(s->trigger_src);
	if (s->trigger_fd >= 0)
		close(s->trigger_fd);
	s->trigger_src = src;
	s->trigger_fd = fd;
	return 0;
}

int mg_sense_pressure(const struct mg_sense *s, struct mg_psi *ret)
{
	*ret = (struct mg_psi){0};
	return s->psi ? mg_psi_read(s->procfd, PRESSURE_FILE, ret) : 0;
}

const char *mg_sense_psi_note(const struct mg_sense *s)
{
	if (s->psi)
		return "";
	return "PSI is off: memguardd decides on MemAvailable and how fast it falls alone, polling it; "
	       "a node that stalls on reclaim while MemAvailable still looks high (page cache thrashing) "
	       "is not seen until MemAvailable falls, and nothing wakes memguardd between polls. "
	       "Boot with psi=1 (RHEL: grubby --update-kernel=ALL --args=psi=1) to turn it on";
}

void mg_sense_close(struct mg_sense *s)
{
	s->trigger_src = sd_event_source_disable_unref(s->trigger_src);
	if (s->trigger_fd >= 0)
		close(s->trigger_fd);
	s->trigger_fd = -1;
}

/* The keys of memory.stat that probe_fence reads, from one read. */
struct memstat {
	uint64_t anon, shmem;
};

static int read_memstat(int cg, struct memstat *ret)
{
	_cleanup_free_ char *stats = NULL;
	ssize_t r = mg_read_file_at(cg, "memory.stat", &stats);
	int k;

	if (r < 0)
		return (int)r;
	if ((k = mg_keyed_u64(stats, "anon", &ret->anon)) < 0 ||
	    (k = mg_keyed_u64(stats, "shmem", &ret->shmem)) < 0)
		return k;
	return 0;
}

/* memory.stat is flushed only once enough updates are pending (on 6.1, about
 * 64 pages per CPU), so it may lag memory.current by that much. */
/* What the cgroup holds that the node's free and reclaimable memory does not
 * count (mg_memstat_unreclaimable): not its page cache on the LRUs, which
 * anyone who can read a file can drop, whoever it is charged to. */
static int read_held(struct mg_guard *d, const struct watched *w, uint64_t *ret_bytes)
{
	_cleanup_close_ int cg = mg_cg_open(d->mountfd, w->e.path);
	_cleanup_free_ char *stats = NULL;
	uint64_t current;
	ssize_t r;

	if (cg < 0)
		return cg;
	if ((r = mg_read_file_at(cg, "memory.stat", &stats)) < 0 ||
	    (r = mg_cg_read_u64(cg, "memory.current", &current)) < 0)
		return (int)r;
	return mg_memstat_unreclaimable(stats, current, ret_bytes);
}

/* Reads what mg_policy_fence_pushed needs; false when the cgroup is gone.
 * This runs at every throttling event of a fenced cgroup. */
static bool probe_fence(struct mg_guard *d, const struct watched *w, struct mg_fence_probe *ret)
{
	_cleanup_close_ int cg = mg_cg_open(d->mountfd, w->e.path);
	struct mg_memory_events ev = {0};
	struct memstat st;

	*ret = (struct mg_fence_probe){.high_events_at_fence = w->fence_high_events};
	if (cg < 0 || mg_cg_read_memory_events(cg, &ev) < 0 || read_memstat(cg, &st) < 0 ||
	    mg_cg_read_u64(cg, "memory.high", &ret->fence) < 0)
		return false;
	ret->anon = st.anon;
	ret->shmem = st.shmem;
	ret->high_events = ev.high;
	return true;
}

/* Whether the cgroup killed last still holds processes and half of what it
 * held: its memory is not back yet. Once it is not (or cannot be read), it is
 * forgotten, so the check costs nothing until the next kill. */
static bool victim_exiting(struct mg_guard *d)
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
static void track_others(struct mg_guard *d, struct watched *w, uint64_t reclaimable, uint64_t now_usec,
                         uint64_t start_bps)
{
	uint64_t held, sum;

	if (read_held(d, w, &held) < 0 || __builtin_add_overflow(reclaimable, held, &sum))
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

static bool any_tracked(const struct mg_guard *d)
{
	for (size_t i = 0; i < d->nw; i++)
		if (tracked(&d->w[i]))
			return true;
	return false;
}

/* At every look, the trackers of the fenced cgroups whose fence has not been
 * raised (mg_sense_track_fence starts them): a few cgroups at most. */
static void track_fenced(struct mg_guard *d, const struct mg_node_state *node)
{
	uint64_t reclaimable = free_and_reclaimable(&node->mem, node->lists_free);

	for (size_t i = 0; i < d->nw; i++)
		if (tracked(&d->w[i]))
			track_others(d, &d->w[i], reclaimable, node->now_usec, node->available_fall_bps);
}

/* The per-CPU lists' free pages into *ret; 0 when they cannot be read,
 * which leaves the hard floor to MemAvailable alone, as before they
 * counted. */
static int read_lists(struct mg_guard *d, uint64_t *ret)
{
	int r = mg_zoneinfo_pcp_read(d->procfd, ret);

	if (r < 0) {
		*ret = 0;
		log_debug("read zoneinfo: %s: the per-CPU lists are not counted", strerror(-r));
	}
	return r;
}

int mg_sense_node(struct mg_guard *d, struct mg_node_state *node)
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

void mg_sense_track_fence(struct mg_guard *d, struct watched *v, uint64_t start_bps)
{
	struct mg_meminfo mem;
	uint64_t lists;

	v->others_fall = (struct mg_fall_rate){0};
	if (mg_meminfo_read(d->procfd, &mem) == 0 && read_lists(d, &lists) == 0)
		track_others(d, v, free_and_reclaimable(&mem, lists), mg_now_usec(), start_bps);
}

bool mg_sense_fence_events(struct mg_guard *d, int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool pushed = false;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof(*ev) + ev->len;
			for (size_t i = 0; i < d->nw; i++) {
				struct watched *w = &d->w[i];
				struct mg_fence_probe probe;
				char a[MG_SIZE_STRLEN], f[MG_SIZE_STRLEN];
				if (w->fence_wd != ev->wd || !w->throttled || w->pushed ||
				    !probe_fence(d, w, &probe) || !mg_policy_fence_pushed(&probe))
					continue;
				/* Debug only: the kill's reason says it, and nothing may be written before
				 * the kill at the default level. */
				log_debug("cgroup %s pushes against its fence: memory.events high %" PRIu64
				          " since it was set, anon and shmem %s of a %s fence",
				          w->e.path, probe.high_events - probe.high_events_at_fence,
				          mg_size_format(probe.anon + probe.shmem, a),
				          mg_size_format(probe.fence, f));
				w->pushed = pushed = true;
			}
		}
	}
	return pushed;
}

/* The cgroups as the policy sees them. The fence state is ours; the numbers
 * and the protected processes are read only when memory is short. */
static size_t read_guarded(struct mg_guard *d, bool memory_short, struct mg_guarded *ret)
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
static void read_outsider(struct mg_guard *d, const struct mg_guarded *g, size_t n, struct mg_outsider *ret)
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

int mg_sense_snapshot(struct mg_guard *d, struct mg_node_state *ret_node, struct mg_guarded *ret,
                      size_t *ret_n)
{
	int r = mg_sense_node(d, ret_node);
	bool memory_short;

	if (r < 0)
		return r;
	memory_short = mg_policy_needs_memory(&d->policy, ret_node);
	*ret_n = read_guarded(d, memory_short, ret);
	if (memory_short)
		read_outsider(d, ret, *ret_n, &ret_node->outsider);
	return memory_short;
}
