/* Finding the mounted cgroup hierarchy that carries the memory controller, from mountinfo. */
#include "memguard/locate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/util.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape(const char *s, size_t len)
{
	char *out = malloc(len + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
		    s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			*o++ = (char)((s[i + 1] - '0') << 6 | (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
			i += 3;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

/* True when the comma-separated list [opts, opts + len) holds word. */
static bool has_option(const char *opts, size_t len, const char *word)
{
	size_t wlen = strlen(word);

	for (const char *p = opts, *end = opts + len; p < end;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);
		if (n == wlen && memcmp(p, word, n) == 0)
			return true;
		p += n + 1;
	}
	return false;
}

struct field {
	const char *s;
	size_t len;
};

static bool field_is(const struct field *f, const char *word)
{
	return f->len == strlen(word) && memcmp(f->s, word, f->len) == 0;
}

/* One mountinfo line: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS". */
static int parse_line(const char *line, const char *end, struct mg_cgroup_mounts *ret)
{
	struct field f[32];
	size_t n = 0, dash = 0;

	for (const char *p = line; p < end && n < 32;) {
		const char *sp = memchr(p, ' ', (size_t)(end - p));
		f[n] = (struct field){p, sp ? (size_t)(sp - p) : (size_t)(end - p)};
		if (n >= 6 && !dash && field_is(&f[n], "-"))
			dash = n;
		n++;
		p += f[n - 1].len + 1;
	}
	if (!dash || dash + 3 >= n)
		return 0;
	const struct field *root = &f[3], *mnt = &f[4], *fstype = &f[dash + 1], *super = &f[dash + 3];
	char **slot = NULL;
	if (field_is(fstype, "cgroup2")) {
		/* A bind mount of a subtree may lack controllers the root has. */
		bool is_root = field_is(root, "/");
		if (ret->v2 && (ret->v2_is_root || !is_root))
			return 0;
		free(ret->v2);
		ret->v2 = NULL;
		ret->v2_is_root = is_root;
		slot = &ret->v2;
	} else if (field_is(fstype, "cgroup") && has_option(super->s, super->len, "memory")) {
		if (ret->v1_memory)
			return 0;
		slot = &ret->v1_memory;
	}
	if (!slot)
		return 0;
	*slot = unescape(mnt->s, mnt->len);
	return *slot ? 0 : -ENOMEM;
}

int mg_mountinfo_parse_cgroups(const char *text, struct mg_cgroup_mounts *ret)
{
	*ret = (struct mg_cgroup_mounts){0};
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		int r = parse_line(line, end, ret);
		if (r < 0) {
			mg_cgroup_mounts_done(ret);
			return r;
		}
		line = eol ? eol + 1 : NULL;
	}
	return 0;
}

void mg_cgroup_mounts_done(struct mg_cgroup_mounts *m)
{
	free(m->v2);
	free(m->v1_memory);
	*m = (struct mg_cgroup_mounts){0};
}

/* True when the v2 mount's root lists memory among its controllers. */
static bool v2_has_memory(const char *mount)
{
	_cleanup_close_ int fd = mg_cg_open(AT_FDCWD, mount);

	return fd >= 0 && mg_cg_has_controller(fd, "memory") > 0;
}

int mg_cgroup_find_memory_mount(int procfd, struct mg_cgroup_mount *ret)
{
	_cleanup_free_ char *text = NULL;
	struct mg_cgroup_mounts m;
	ssize_t n;
	int r;

	*ret = (struct mg_cgroup_mount){0};
	if ((n = mg_read_file_at(procfd, "self/mountinfo", &text)) < 0)
		return (int)n;
	if ((r = mg_mountinfo_parse_cgroups(text, &m)) < 0)
		return r;
	if (m.v2 && v2_has_memory(m.v2)) {
		ret->path = m.v2;
		ret->unified = true;
		m.v2 = NULL;
	} else if (m.v1_memory) {
		ret->path = m.v1_memory;
		m.v1_memory = NULL;
	}
	mg_cgroup_mounts_done(&m);
	return ret->path ? 0 : -ENOENT;
}

void mg_cgroup_mount_done(struct mg_cgroup_mount *m)
{
	free(m->path);
	m->path = NULL;
}
