/* Which cgroups memguardd guards, what it judges them by, and which it must
 * never kill: only what no user can forge decides. */
#include "guard/scope.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/contract.h"
#include "memguard/procstat.h"
#include "memguard/units.h"
#include "memguard/util.h"

void mg_scope_list_free(struct mg_scope_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->c[i].path);
	free(l->c);
	*l = (struct mg_scope_list){0};
}

static int list_add(struct mg_scope_list *l, const char *path)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct mg_scope_candidate *c = realloc(l->c, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		l->c = c;
		l->cap = cap;
	}
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	l->c[l->n++] = (struct mg_scope_candidate){.path = copy};
	return 0;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct mg_scope_candidate *)a)->path,
	              ((const struct mg_scope_candidate *)b)->path);
}

/* Sorts the list by path and keeps each cgroup once (overlapping globs
 * match one twice). Returns the count. */
static int list_settle(struct mg_scope_list *l)
{
	if (l->n > 1)
		qsort(l->c, l->n, sizeof(l->c[0]), by_path);
	size_t kept = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (kept > 0 && strcmp(l->c[kept - 1].path, l->c[i].path) == 0)
			free(l->c[i].path);
		else
			l->c[kept++] = l->c[i];
	}
	l->n = kept;
	return (int)kept;
}

static bool same_dir(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');

	return sa && sb && sa - a == sb - b && memcmp(a, b, (size_t)(sa - a)) == 0;
}

int mg_scope_expand(const char *mount, const char *globs, struct mg_scope_list *ret)
{
	char pattern[1024], word[512];
	size_t mlen = strlen(mount);

	for (size_t i = 0; i < ret->n; i++)
		free(ret->c[i].path);
	ret->n = 0;
	for (const char *p = globs; *p;) {
		size_t len = strcspn(p, " \t");
		if (len > 0 && len < sizeof(word)) {
			glob_t g;
			memcpy(word, p, len);
			word[len] = '\0';
			snprintf(pattern, sizeof(pattern), "%s/%s", mount, word + strspn(word, "/"));
			int r = glob(pattern, GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g);
			size_t from_dir = 0;
			if (r == GLOB_NOSPACE)
				return -ENOMEM;
			for (size_t i = 0; r == 0 && i < g.gl_pathc; i++) {
				const char *rel = g.gl_pathv[i] + mlen + 1;
				/* Unsorted, glob lists one directory's matches together. */
				from_dir = i > 0 && same_dir(g.gl_pathv[i - 1], g.gl_pathv[i]) ? from_dir + 1
				                                                               : 1;
				if (from_dir > MG_SCOPE_MAX_PER_DIR)
					continue;
				/* glob's ONLYDIR is a hint: keep only real cgroups. */
				char probe[1100];
				snprintf(probe, sizeof(probe), "%s/cgroup.procs", g.gl_pathv[i]);
				if (strlen(rel) < sizeof(((struct mg_scope_entry *)0)->path) &&
				    access(probe, F_OK) == 0 && list_add(ret, rel) < 0) {
					globfree(&g);
					return -ENOMEM;
				}
			}
			if (r == 0)
				globfree(&g);
		}
		p += len;
		p += strspn(p, " \t");
	}
	return list_settle(ret);
}

struct child_scan {
	struct mg_scope_list *list;
	const char *parent;
	size_t taken;
	int r;
};

static int add_child(int fd, const char *name, void *userdata)
{
	struct child_scan *cs = userdata;
	char path[sizeof(((struct mg_scope_entry *)0)->path)];

	(void)fd;
	if (cs->taken == MG_SCOPE_MAX_PER_DIR)
		return 1; /* the rest stays unguarded */
	if (snprintf(path, sizeof(path), "%s/%s", cs->parent, name) < (int)sizeof(path) &&
	    (cs->r = list_add(cs->list, path)) < 0)
		return cs->r;
	cs->taken++;
	return 0;
}

int mg_scope_add_children(int mountfd, const char *const *parents, size_t n, struct mg_scope_list *ret)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_close_ int fd = mg_cg_open(mountfd, parents[i]);
		struct child_scan cs = {.list = ret, .parent = parents[i]};
		if (fd >= 0)
			(void)mg_cg_for_each_child(fd, add_child, &cs);
		if (cs.r < 0)
			return cs.r;
	}
	return list_settle(ret);
}

int mg_scope_probe(int mountfd, struct mg_scope_candidate *c)
{
	_cleanup_close_ int fd = mg_cg_open(mountfd, c->path);
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	c->owner = st.st_uid;
	c->populated = mg_cg_populated(fd) > 0;
	c->has_memory = faccessat(fd, "memory.current", F_OK, 0) == 0;
	return 0;
}

struct owner_counts {
	struct {
		uid_t uid;
		size_t n;
	} * o;
	size_t n, cap;
};

/* The count of uid's admitted cgroups, NULL without memory for a new owner.
 * Owners are few (the users with jobs on a node): a linear table will do. */
static size_t *owner_count(struct owner_counts *t, uid_t uid)
{
	size_t k;

	for (k = 0; k < t->n && t->o[k].uid != uid; k++)
		;
	if (k < t->n)
		return &t->o[k].n;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		void *o = realloc(t->o, cap * sizeof(t->o[0]));
		if (!o)
			return NULL;
		t->o = o;
		t->cap = cap;
	}
	t->o[t->n].uid = uid;
	t->o[t->n].n = 0;
	return &t->o[t->n++].n;
}

static void note_dropped(struct mg_scope_dropped *d, uid_t owner)
{
	size_t k;

	d->n++;
	for (k = 0; k < d->n_owners && d->owners[k] != owner; k++)
		;
	if (k < d->n_owners)
		return;
	if (k < MG_ARRAY_SIZE(d->owners))
		d->owners[d->n_owners++] = owner;
	else
		d->more_owners = true;
}

size_t mg_scope_admit(struct mg_scope_candidate *c, size_t n, size_t max, size_t per_owner_max,
                      struct mg_scope_dropped *ret_dropped)
{
	struct owner_counts owners = {0};
	size_t admitted = 0;

	*ret_dropped = (struct mg_scope_dropped){0};
	for (size_t i = 0; i < n; i++) {
		size_t *count = NULL;
		bool over = false;

		c[i].admitted = false;
		if (!c[i].populated || !c[i].has_memory || c[i].protected_)
			continue;
		if (c[i].owner != 0) {
			count = owner_count(&owners, c[i].owner);
			/* Without memory to count with, admit no more strangers. */
			over = !count || *count >= per_owner_max;
		}
		if (!over && admitted >= max)
			over = ret_dropped->global = true;
		if (over) {
			note_dropped(ret_dropped, c[i].owner);
			continue;
		}
		c[i].admitted = true;
		admitted++;
		if (count)
			(*count)++;
	}
	free(owners.o);
	return admitted;
}

/* memory.max of the cgroup at dirfd when root owns the file, else 0. */
static uint64_t root_owned_max(int dirfd)
{
	struct stat st;
	uint64_t max;

	if (fstatat(dirfd, "memory.max", &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_uid != 0)
		return 0;
	if (mg_cg_read_u64(dirfd, "memory.max", &max) < 0 || max == MG_SIZE_UNLIMITED)
		return 0;
	return max;
}

int mg_scope_root_limit(int mountfd, const char *path, uint64_t *ret_limit)
{
	char prefix[512];
	uint64_t tightest = 0;

	if (snprintf(prefix, sizeof(prefix), "%s", path) >= (int)sizeof(prefix))
		return -ENAMETOOLONG;
	/* The cgroup, then each ancestor below the mount (the root has no memory.max). */
	for (;;) {
		_cleanup_close_ int fd = mg_cg_open(mountfd, prefix);
		if (fd < 0 && fd != -ENOENT)
			return fd;
		uint64_t max = fd >= 0 ? root_owned_max(fd) : 0;
		if (max && (tightest == 0 || max < tightest))
			tightest = max;
		char *slash = strrchr(prefix, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	*ret_limit = tightest;
	return 0;
}

int mg_scope_read(int mountfd, struct mg_scope_entry *e, uint64_t now_usec)
{
	_cleanup_close_ int fd = mg_cg_open(mountfd, e->path);
	struct mg_guarded *g = &e->snap;
	uint64_t current, trusted = 0, root_limit = 0, hint = 0;
	struct stat st;
	int r;

	if (fd < 0)
		return fd;
	if ((r = mg_cg_read_u64(fd, "memory.current", &current)) < 0)
		return r;
	if (fstat(fd, &st) < 0)
		return -errno;
	r = mg_cg_populated(fd);
	g->path = e->path;
	g->populated = r > 0;
	g->current = current;
	/* Each read that fails counts as unknown: the share only decides the order. */
	if (mg_contract_get_share(fd, &trusted) < 0)
		trusted = 0;
	if (trusted == 0 && mg_scope_root_limit(mountfd, e->path, &root_limit) < 0)
		root_limit = 0;
	if (mg_contract_get_share_hint(fd, &hint) < 0)
		hint = 0;
	g->share = mg_contract_share(trusted, root_limit, hint);
	g->hint = hint;
	g->owner = st.st_uid;
	g->split = false;
	g->growth_bps = 0;
	if (e->prev_usec && now_usec > e->prev_usec && current > e->prev_current)
		g->growth_bps = (uint64_t)((unsigned __int128)(current - e->prev_current) * 1000000u /
		                           (now_usec - e->prev_usec));
	e->prev_current = current;
	e->prev_usec = now_usec;
	return 0;
}

/* --- protect --- */

static bool has_suffix(const char *s, size_t len, const char *suffix)
{
	size_t slen = strlen(suffix);

	return len >= slen && memcmp(s + len - slen, suffix, slen) == 0;
}

static bool is_unit_name(const char *s, size_t len)
{
	return has_suffix(s, len, ".service") || has_suffix(s, len, ".scope") || has_suffix(s, len, ".slice");
}

/* uid of spec, a user name or a number. */
static int parse_user(const char *spec, uid_t *ret)
{
	uint64_t v;

	if (mg_parse_u64(spec, &v) == 0)
		return v < (uid_t)-1 ? (*ret = (uid_t)v, 0) : -ERANGE;
	if (!*spec)
		return -EINVAL;
	struct passwd pw, *found = NULL;
	char buf[1024];
	if (getpwnam_r(spec, &pw, buf, sizeof(buf), &found) != 0 || !found)
		return -ENOENT;
	*ret = found->pw_uid;
	return 0;
}

static void parse_word(const char *word, struct mg_protect_entry *e)
{
	size_t len = strlen(word);
	const char *last = strrchr(word, '/');

	snprintf(e->text, sizeof(e->text), "%.255s", word);
	e->kind = MG_PROTECT_IGNORED;
	if (len >= sizeof(e->text)) {
		e->why = "is too long; ignored";
	} else if (word[0] == '/' && !strchr(last, ':') && is_unit_name(word, len)) {
		/* "/system.slice/ssh.service": a cgroup, however it is written. */
		e->kind = MG_PROTECT_CGROUP;
		snprintf(e->text, sizeof(e->text), "%.255s", word + strspn(word, "/"));
	} else if (word[0] == '/') {
		char *colon = strchr(e->text + (last - word), ':');
		e->uid = 0;
		if (colon) {
			*colon = '\0';
			if (parse_user(colon + 1, &e->uid) < 0) {
				e->why = "names an unknown user; ignored";
				snprintf(e->text, sizeof(e->text), "%.255s", word);
				return;
			}
		}
		e->kind = MG_PROTECT_EXE;
	} else if (last || is_unit_name(word, len)) {
		e->kind = MG_PROTECT_CGROUP;
	} else {
		e->why = "is a process name, which any user can take; ignored: name its unit's cgroup or its "
		         "executable";
	}
	if (e->kind == MG_PROTECT_CGROUP) {
		/* "system.slice/" is "system.slice". */
		size_t n = strlen(e->text);
		while (n > 1 && e->text[n - 1] == '/')
			e->text[--n] = '\0';
	}
}

size_t mg_protect_parse(const char *list, struct mg_protect *ret)
{
	char word[512];

	ret->n = 0;
	for (const char *p = list + strspn(list, " \t"); *p && ret->n < MG_PROTECT_MAX;) {
		size_t len = strcspn(p, " \t");
		snprintf(word, sizeof(word), "%.*s", (int)(len < sizeof(word) ? len : sizeof(word) - 1), p);
		parse_word(word, &ret->e[ret->n++]);
		p += len;
		p += strspn(p, " \t");
	}
	return ret->n;
}

bool mg_protect_match_cgroup(const struct mg_protect *p, const char *path)
{
	char prefix[512];

	path += strspn(path, "/");
	if (snprintf(prefix, sizeof(prefix), "%s", path) >= (int)sizeof(prefix))
		return false;
	/* The path itself, then each ancestor: "at or below". */
	for (;;) {
		for (size_t i = 0; i < p->n; i++)
			if (p->e[i].kind == MG_PROTECT_CGROUP &&
			    fnmatch(p->e[i].text, prefix, FNM_PATHNAME) == 0)
				return true;
		char *slash = strrchr(prefix, '/');
		if (!slash)
			return false;
		*slash = '\0';
	}
}

bool mg_protect_wants_uid(const struct mg_protect *p, uid_t uid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].kind == MG_PROTECT_EXE && p->e[i].uid == uid)
			return true;
	return false;
}

bool mg_protect_match_exe(const struct mg_protect *p, const char *exe, uid_t uid)
{
	/* An exact match only: "/usr/sbin/sshd (deleted)" is not sshd. */
	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].kind == MG_PROTECT_EXE && p->e[i].uid == uid && strcmp(p->e[i].text, exe) == 0)
			return true;
	return false;
}

const struct mg_protect *mg_scope_protect(const char *list, bool *ret_changed)
{
	/* Parsed once per change of the list: evaluate() asks for every cgroup. */
	static struct mg_protect parsed;
	static char *parsed_list;
	bool changed = !parsed_list || strcmp(parsed_list, list) != 0;

	if (changed) {
		free(parsed_list);
		parsed_list = strdup(list);
		mg_protect_parse(list, &parsed);
	}
	if (ret_changed)
		*ret_changed = changed;
	return &parsed;
}

/* The real uid in a /proc/PID/status text: the first number of "Uid:". */
static int status_uid(const char *status, uid_t *ret)
{
	const char *line = mg_status_field(status, "Uid");
	char *end;

	if (!line)
		return -ENODATA;
	errno = 0;
	unsigned long v = strtoul(line, &end, 10);
	if (end == line || errno || v >= (uid_t)-1)
		return -EINVAL;
	*ret = (uid_t)v;
	return 0;
}

struct protect_scan {
	int procfd;
	const struct mg_protect *protect;
	unsigned depth; /* of the cgroup being looked at, below the guarded one */
	size_t left;    /* cgroups this walk may still read */
};

bool mg_scope_pid_protected(int procfd, const struct mg_protect *protect, pid_t pid)
{
	char path[32], status[2048], exe[512];
	uid_t uid;

	/* The uid first: root reads root's exe links without CAP_SYS_PTRACE. */
	snprintf(path, sizeof(path), "%d/status", (int)pid);
	if (mg_read_small_at(procfd, path, status, sizeof(status)) <= 0 || status_uid(status, &uid) < 0 ||
	    !mg_protect_wants_uid(protect, uid))
		return false; /* gone, or not a uid that matters */
	snprintf(path, sizeof(path), "%d/exe", (int)pid);
	ssize_t n = readlinkat(procfd, path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false; /* gone, or a kernel thread */
	exe[n] = '\0';
	return mg_protect_match_exe(protect, exe, uid);
}

static int pid_is_protected(pid_t pid, void *userdata)
{
	const struct protect_scan *ps = userdata;

	return mg_scope_pid_protected(ps->procfd, ps->protect, pid);
}

static int subtree_is_protected(int cgfd, const char *name, void *userdata)
{
	struct protect_scan *ps = userdata;
	int r;

	(void)name;
	if (ps->left == 0)
		return -E2BIG;
	ps->left--;
	r = mg_cg_for_each_pid(cgfd, pid_is_protected, userdata);
	/* A walk that fails counts as protected, so what the cgroup's owner can
	 * make fail below it must not: a threaded child has no cgroup.procs (its
	 * threaded root lists the processes), one removed meanwhile holds none,
	 * and nesting without end would run out of fds. The guarded cgroup's own
	 * errors still count: threaded, it would have no memory controller and
	 * be no candidate anyway; gone, it is no victim. */
	if (ps->depth > 0 && (r == -EOPNOTSUPP || r == -ENODEV || r == -ENOENT))
		r = 0;
	if (r != 0 || ps->depth == MG_PROTECT_WALK_DEPTH)
		return r;
	ps->depth++;
	r = mg_cg_for_each_child(cgfd, subtree_is_protected, userdata);
	ps->depth--;
	return r;
}

int mg_scope_holds_protected(int cgfd, int procfd, const char *protect, size_t *budget)
{
	struct protect_scan ps = {.procfd = procfd, .protect = mg_scope_protect(protect, NULL)};
	bool any = false;
	int r;

	for (size_t i = 0; i < ps.protect->n && !any; i++)
		any = ps.protect->e[i].kind == MG_PROTECT_EXE;
	if (!any)
		return 0;
	ps.left = *budget < MG_PROTECT_WALK_CGROUPS ? *budget : MG_PROTECT_WALK_CGROUPS;
	size_t granted = ps.left;
	r = subtree_is_protected(cgfd, ".", &ps);
	*budget -= granted - ps.left;
	return r;
}
