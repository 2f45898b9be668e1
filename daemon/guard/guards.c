/* memguardd's guard list: which cgroups it may act on, found by globs and
 * inotify. A guarded cgroup gets no PSI trigger of its own: the launcher may
 * remove it while the trigger is being written, and Debian 12's kernel then
 * leaks the trigger (its psimon thread polls a freed cgroup). The node's
 * trigger sees the node's stalls; a fenced cgroup's memory.events, its own. */
#include "guard/guards.h"

#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "guard/act.h"
#include "place/placedrun.h"
#include "place/placesvc.h"
#include "memguard/cgroup.h"
#include "memguard/log.h"
#include "memguard/units.h"
#include "memguard/util.h"

/* Room for one more watched cgroup: the list grows on demand up to MAX_GUARDED. */
static struct watched *watch_slot(struct mg_guard *d)
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

static int path_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct watched *)elem)->e.path);
}

static int watched_cmp(const void *a, const void *b)
{
	return strcmp(((const struct watched *)a)->e.path, ((const struct watched *)b)->e.path);
}

bool guards_contains(const struct mg_guard *d, const char *path)
{
	return d->nw && bsearch(path, d->w, d->nw, sizeof(*d->w), path_cmp) != NULL;
}

/* Drops what vanished or left the guard list, keeping the order. */
static void forget_unseen(struct mg_guard *d)
{
	size_t kept = 0;

	for (size_t i = 0; i < d->nw; i++) {
		if (d->w[i].seen) {
			d->w[kept] = d->w[i];
			d->w[kept].e.snap.path = d->w[kept].e.path; /* it moved */
			kept++;
		} else {
			guards_unwatch_fence(d, &d->w[i]);
		}
	}
	d->nw = kept;
}

/* An empty cgroup is not guarded yet. inotify saw it created, but a task
 * moving in (clone3 into it, a write to cgroup.procs) creates nothing: its
 * cgroup.events changing is what brings the rescan that admits it. Each
 * rescan watches the empty ones anew, each owner's within what watches.h
 * allows (the rest are guarded from a later rescan), and drops the watches
 * of those that filled or went. */
static void watch_until_populated(struct mg_guard *d, const struct mg_scope_list *cands)
{
	char file[sizeof(d->mount) + 512 + 32];
	struct mg_pop_watch *now = NULL;
	size_t n = 0, cap = 0, skipped = 0;

	if (d->inotify_fd < 0)
		return;
	for (size_t i = 0; i < d->npop; i++)
		mg_watches_give(&d->watches, d->pop[i].owner, 1);
	for (size_t k = 0; k < cands->n; k++) {
		const struct mg_scope_candidate *c = &cands->c[k];
		if (c->populated || !c->has_memory)
			continue;
		if (n == cap) {
			size_t bigger = cap ? 2 * cap : 64;
			struct mg_pop_watch *p = realloc(now, bigger * sizeof(*p));
			if (!p)
				break;
			now = p;
			cap = bigger;
		}
		if (!mg_watches_take(&d->watches, c->owner, 1)) {
			skipped++;
			continue;
		}
		snprintf(file, sizeof(file), "%s/%s/cgroup.events", d->mount, c->path);
		int wd = inotify_add_watch(d->inotify_fd, file, IN_MODIFY);
		bool known = false;
		for (size_t i = 0; i < n && !known; i++)
			known = now[i].wd == wd;
		if (wd < 0 || known) {
			mg_watches_give(&d->watches, c->owner, 1);
			continue;
		}
		now[n++] = (struct mg_pop_watch){.wd = wd, .owner = c->owner};
	}
	/* The old watches not watched again: their cgroups filled, went, or are over a cap. */
	for (size_t i = 0; i < d->npop; i++) {
		bool kept = false;
		for (size_t j = 0; j < n && !kept; j++)
			kept = now[j].wd == d->pop[i].wd;
		if (!kept)
			(void)inotify_rm_watch(d->inotify_fd, d->pop[i].wd);
	}
	free(d->pop);
	d->pop = now;
	d->npop = n;
	d->pop_cap = cap;
	if (skipped)
		log_debug("guard: %zu empty cgroups not watched until populated: their owners' watches are "
		          "at the cap of %d",
		          skipped, MG_WATCHES_PER_UID);
}

void guards_rescan(struct mg_guard *d)
{
	static struct mg_scope_list cands;
	struct mg_scope_dropped dropped;
	bool protect_changed;
	const struct mg_protect *protect = mg_scope_protect(d->cfg.protect, &protect_changed);
	static const char *runs[MG_RUNS_MAX];
	int n = mg_scope_expand(d->mount, d->cfg.guard, &cands);
	uint64_t now = mg_now_usec();

	/* Guarding follows the placed runs, wherever their jobs are. */
	if (n >= 0)
		n = mg_scope_add_children(d->mountfd, runs, mg_placesvc_runs(d->placesvc, runs, MG_RUNS_MAX),
		                          &cands);

	d->rescanned_usec = now;
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
	watch_until_populated(d, &cands);
	mg_scope_admit(cands.c, cands.n, MAX_GUARDED, MG_SCOPE_MAX_PER_OWNER, &dropped);
	log_dropped(&dropped);
	/* d->w is kept sorted by path: one bsearch per candidate, not a scan. */
	for (size_t i = 0; i < d->nw; i++)
		d->w[i].seen = false;
	size_t known = d->nw;
	for (size_t k = 0; k < cands.n; k++) {
		const char *path = cands.c[k].path;
		if (!cands.c[k].admitted)
			continue;
		struct watched *w = bsearch(path, d->w, known, sizeof(*d->w), path_cmp);
		if (!w) {
			if (!(w = watch_slot(d))) {
				log_warn("guard: no memory for cgroup %s: not guarded", path);
				continue;
			}
			*w = (struct watched){.fence_wd = -1};
			snprintf(w->e.path, sizeof(w->e.path), "%s", path);
			/* A previous daemon may have fenced it. Whether it raised the
			 * fence is not known: judged as raised, by MemAvailable's
			 * whole fall, as no tracker of what the others take runs. */
			w->throttled = w->widened = mg_act_is_throttled(d->mountfd, w->e.path) == 1;
			log_debug("guarding cgroup %s%s", w->e.path, w->throttled ? " (fenced)" : "");
			if (w->throttled)
				guards_watch_fence(d, w);
		}
		w->seen = mg_scope_read(d->mountfd, &w->e, now) == 0;
	}
	forget_unseen(d);
	qsort(d->w, d->nw, sizeof(*d->w), watched_cmp);
	for (size_t i = 0; i < d->nw; i++)
		d->w[i].e.snap.path = d->w[i].e.path; /* it moved */
	d->metrics.rescans++;
	d->metrics.rescan_took_usec = mg_now_usec() - now;
}

void guards_refresh(struct mg_guard *d)
{
	uint64_t now = mg_now_usec();

	for (size_t i = 0; i < d->nw; i++)
		d->w[i].seen = mg_scope_read(d->mountfd, &d->w[i].e, now) == 0;
	forget_unseen(d);
}

/* Watches every directory a guarded cgroup could appear in: for the glob
 * "memguard/ * / *" (without the spaces) that is <mount>/memguard and each
 * <mount>/memguard/run-*. mkdir in cgroupfs raises IN_CREATE like anywhere. */
void guards_watch_parents(struct mg_guard *d)
{
	char word[512], prefix[sizeof(d->mount) + sizeof(word) + 1];

	static const char *runs[MG_RUNS_MAX];
	char run[sizeof(d->mount) + MG_RUN_PATH_MAX];

	/* The mount itself: the glob's first directory may not exist yet. */
	(void)inotify_add_watch(d->inotify_fd, d->mount, IN_CREATE | IN_DELETE | IN_ONLYDIR);
	/* Each placed run, where its tasks' cgroups appear. */
	for (size_t i = 0, n = mg_placesvc_runs(d->placesvc, runs, MG_RUNS_MAX); i < n; i++) {
		snprintf(run, sizeof(run), "%s/%s", d->mount, runs[i]);
		(void)inotify_add_watch(d->inotify_fd, run, IN_CREATE | IN_DELETE | IN_ONLYDIR);
	}

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

/* Counts the fence's throttling from now: memory.events "high" as it is. */
static int rebase_fence(struct mg_guard *d, struct watched *w)
{
	_cleanup_close_ int cg = mg_cg_open(d->mountfd, w->e.path);
	struct mg_memory_events ev = {0};
	int r;

	if (cg < 0)
		return cg;
	if ((r = mg_cg_read_memory_events(cg, &ev)) < 0)
		return r;
	w->fence_high_events = ev.high;
	return 0;
}

void guards_watch_fence(struct mg_guard *d, struct watched *w)
{
	char file[sizeof(d->mount) + sizeof(w->e.path) + 32];

	if (w->fence_wd >= 0 || rebase_fence(d, w) < 0)
		return;
	snprintf(file, sizeof(file), "%s/%s/memory.events", d->mount, w->e.path);
	w->fence_wd = inotify_add_watch(d->fence_fd, file, IN_MODIFY);
	if (w->fence_wd < 0)
		mg_log_errno(LOG_WARNING, -errno, "watch %s: %m; its fence holds until memory is very short",
		             file);
}

void guards_widened_fence(struct mg_guard *d, struct watched *w)
{
	int r = rebase_fence(d, w);

	/* Unread, the old count stands: the raised fence still judges by what it holds.
	 * ENOENT or ENODEV: the cgroup went away meanwhile, nothing to say. */
	if (r < 0 && r != -ENOENT && r != -ENODEV)
		mg_log_errno(LOG_WARNING, r, "read memory.events of %s: %m", w->e.path);
	w->pushed = false;
}

void guards_unwatch_fence(struct mg_guard *d, struct watched *w)
{
	if (w->fence_wd >= 0)
		(void)inotify_rm_watch(d->fence_fd, w->fence_wd);
	w->fence_wd = -1;
}
