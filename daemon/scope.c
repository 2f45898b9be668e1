#include "scope.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>

#include "memguard/cgroup.h"
#include "memguard/paths.h"
#include "memguard/units.h"
#include "memguard/util.h"

int mg_scope_expand(const char *mount, const char *globs, char (*ret)[512], size_t max)
{
	char pattern[1024], word[512];
	size_t n = 0, mlen = strlen(mount);

	for (const char *p = globs; *p;) {
		size_t len = strcspn(p, " \t");
		if (len > 0 && len < sizeof(word)) {
			glob_t g;
			memcpy(word, p, len);
			word[len] = '\0';
			snprintf(pattern, sizeof(pattern), "%s/%s", mount, word + strspn(word, "/"));
			int r = glob(pattern, GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g);
			if (r == GLOB_NOSPACE)
				return -ENOMEM;
			for (size_t i = 0; r == 0 && i < g.gl_pathc && n < max; i++) {
				const char *rel = g.gl_pathv[i] + mlen + 1;
				/* glob's ONLYDIR is a hint: keep only real cgroups. */
				char probe[1100];
				snprintf(probe, sizeof(probe), "%s/cgroup.procs", g.gl_pathv[i]);
				if (strlen(rel) < sizeof(ret[0]) && access(probe, F_OK) == 0)
					snprintf(ret[n++], sizeof(ret[0]), "%s", rel);
			}
			if (r == 0)
				globfree(&g);
		}
		p += len;
		p += strspn(p, " \t");
	}
	return (int)n;
}

int mg_scope_read(int mountfd, struct mg_scope_entry *e, uint64_t now_usec)
{
	_cleanup_close_ int fd = mg_cg_open(mountfd, e->path);
	struct mg_guarded *g = &e->snap;
	char buf[32];
	uint64_t current, max;
	int r;

	if (fd < 0)
		return fd;
	if ((r = mg_cg_read_u64(fd, "memory.current", &current)) < 0)
		return r;
	r = mg_cg_populated(fd);
	g->path = e->path;
	g->populated = r > 0;
	g->current = current;
	g->share = 0;
	ssize_t len = fgetxattr(fd, MG_XATTR_SHARE, buf, sizeof(buf) - 1);
	if (len > 0) {
		buf[len] = '\0';
		if (mg_parse_u64(buf, &g->share) < 0)
			g->share = 0;
	}
	if (g->share == 0 && mg_cg_read_u64(fd, "memory.max", &max) == 0 && max != MG_SIZE_UNLIMITED)
		g->share = max;
	g->growth_bps = 0;
	if (e->prev_usec && now_usec > e->prev_usec && current > e->prev_current)
		g->growth_bps = (uint64_t)((unsigned __int128)(current - e->prev_current) * 1000000u /
		                           (now_usec - e->prev_usec));
	e->prev_current = current;
	e->prev_usec = now_usec;
	return 0;
}

static bool name_listed(const char *names, const char *comm)
{
	size_t clen = strlen(comm);

	for (const char *p = names; *p;) {
		size_t len = strcspn(p, " \t");
		if (len > 0 && len == clen && strncmp(p, comm, len) == 0)
			return true;
		p += len;
		p += strspn(p, " \t");
	}
	return false;
}

struct protect_scan {
	int procfd;
	const char *names;
};

static int pid_is_protected(pid_t pid, void *userdata)
{
	const struct protect_scan *ps = userdata;
	char path[32], comm[64];

	snprintf(path, sizeof(path), "%d/comm", (int)pid);
	if (mg_read_small_at(ps->procfd, path, comm, sizeof(comm)) <= 0)
		return 0; /* gone */
	comm[strcspn(comm, "\n")] = '\0';
	return name_listed(ps->names, comm);
}

static int subtree_is_protected(int cgfd, const char *name, void *userdata)
{
	int r = mg_cg_for_each_pid(cgfd, pid_is_protected, userdata);

	return r != 0 ? r : mg_cg_for_each_child(cgfd, subtree_is_protected, userdata);
}

int mg_scope_holds_protected(int cgfd, int procfd, const char *names)
{
	struct protect_scan ps = {.procfd = procfd, .names = names};

	return subtree_is_protected(cgfd, ".", &ps);
}
