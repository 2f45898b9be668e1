/* Cgroup v2 operations on directory fds (create, remove, controllers, files, kill) and /proc/PID/cgroup. */
#include "memguard/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "memguard/log.h"
#include "memguard/units.h"
#include "memguard/util.h"

int mg_cg_open(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int mg_cg_create(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0755) < 0)
		return -errno;
	return mg_cg_open(dirfd, name);
}

int mg_cg_for_each_child(int cgfd, int (*fn)(int childfd, const char *name, void *userdata), void *userdata)
{
	_cleanup_close_ int dupfd = openat(cgfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *dir;
	int r = 0;

	if (dupfd < 0)
		return -errno;
	dir = fdopendir(dupfd);
	if (!dir)
		return -errno;
	dupfd = -1; /* owned by dir now */
	while (r == 0 && (de = readdir(dir))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		_cleanup_close_ int child = mg_cg_open(cgfd, de->d_name);
		if (child >= 0)
			r = fn(child, de->d_name, userdata);
	}
	closedir(dir);
	return r;
}

int mg_cg_for_each_pid(int cgfd, int (*fn)(pid_t pid, void *userdata), void *userdata)
{
	_cleanup_free_ char *procs = NULL;
	ssize_t n = mg_read_file_at(cgfd, "cgroup.procs", &procs);
	int r = 0;

	if (n < 0)
		return (int)n;
	for (char *line = procs, *next; r == 0 && line && *line; line = next) {
		uint64_t pid;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (mg_parse_u64(line, &pid) == 0 && pid > 0 && pid <= INT32_MAX)
			r = fn((pid_t)pid, userdata);
	}
	return r;
}

struct remove_state {
	int parentfd;
	int depth;
};

/* Children first: rmdir of a cgroup with child cgroups fails with EBUSY. */
static int remove_tree(int childfd, const char *name, void *userdata)
{
	const struct remove_state *up = userdata;
	struct remove_state st = {.parentfd = childfd, .depth = up->depth + 1};
	int r;

	if (st.depth > 64)
		return -ELOOP;
	r = mg_cg_for_each_child(childfd, remove_tree, &st);
	if (r < 0)
		return r;
	if (unlinkat(up->parentfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int mg_cg_remove(int dirfd, const char *name)
{
	_cleanup_close_ int cgfd = mg_cg_open(dirfd, name);
	int r;

	if (cgfd == -ENOENT)
		return 0;
	if (cgfd < 0)
		return cgfd;
	struct remove_state st = {.parentfd = cgfd, .depth = 0};
	r = mg_cg_for_each_child(cgfd, remove_tree, &st);
	if (r < 0)
		return r;
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static bool word_in_list(const char *list, const char *word)
{
	size_t wlen = strlen(word);

	if (wlen == 0)
		return false;
	for (const char *p = list; (p = strstr(p, word)); p += wlen) {
		bool starts = p == list || p[-1] == ' ' || p[-1] == '\n';
		char after = p[wlen];
		if (starts && (after == '\0' || after == ' ' || after == '\n'))
			return true;
	}
	return false;
}

int mg_cg_has_controller(int cgfd, const char *controller)
{
	char buf[512];
	ssize_t n = mg_read_small_at(cgfd, "cgroup.controllers", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return word_in_list(buf, controller);
}

/* Writes the reason for a failure into err (when given) and returns r. */
__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errsize, int r, const char *fmt, ...)
{
	va_list ap;

	if (err && errsize > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errsize, fmt, ap);
		va_end(ap);
	}
	return r;
}

int mg_cg_enable_controllers(int cgfd, const char *cgpath, const char *controllers, char *err, size_t errsize)
{
	char spec[256] = "", name[32];
	const char *p = controllers;
	int r;

	while (*p) {
		size_t len = strcspn(p, " ");
		if (len >= sizeof(name) || strlen(spec) + len + 3 >= sizeof(spec))
			return fail(err, errsize, -EINVAL, "enable controllers \"%s\" in %s: name too long",
			            controllers, cgpath);
		if (len > 0) {
			memcpy(name, p, len);
			name[len] = '\0';
			r = mg_cg_has_controller(cgfd, name);
			if (r < 0)
				return fail(err, errsize, r, "read %s/cgroup.controllers: %s", cgpath,
				            strerror(-r));
			if (r == 0)
				return fail(err, errsize, -ENOENT, "controller %s not enabled in %s", name,
				            cgpath);
			strcat(spec, spec[0] ? " +" : "+");
			strcat(spec, name);
		}
		p += len;
		while (*p == ' ')
			p++;
	}
	r = mg_write_file_at(cgfd, "cgroup.subtree_control", spec);
	if (r == -EBUSY)
		return fail(err, errsize, r,
		            "cannot enable %s for children of %s: it holds processes "
		            "(cgroup v2 allows no internal processes)",
		            controllers, cgpath);
	if (r < 0)
		return fail(err, errsize, r, "write \"%s\" to %s/cgroup.subtree_control: %s", spec, cgpath,
		            strerror(-r));
	return 0;
}

/* "memory.max" -> "memory". */
static bool controller_of(const char *file, char *buf, size_t size)
{
	size_t len = strcspn(file, ".");

	if (file[len] != '.' || len == 0 || len >= size || strncmp(file, "cgroup", len) == 0)
		return false;
	memcpy(buf, file, len);
	buf[len] = '\0';
	return true;
}

int mg_cg_write(int cgfd, const char *cgpath, const char *file, const char *value, char *err, size_t errsize)
{
	char controller[32];
	int r = mg_write_file_at(cgfd, file, value);

	if (r >= 0)
		return 0;
	if ((r == -ENOENT || r == -EACCES || r == -EPERM) &&
	    controller_of(file, controller, sizeof(controller))) {
		_cleanup_close_ int parent = openat(cgfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		char sub[512];

		if (parent >= 0 &&
		    mg_read_small_at(parent, "cgroup.subtree_control", sub, sizeof(sub)) >= 0 &&
		    !word_in_list(sub, controller))
			return fail(err, errsize, r, "controller %s not enabled in the parent of %s",
			            controller, cgpath);
	}
	return fail(err, errsize, r, "write \"%s\" to %s/%s: %s", value, cgpath, file, strerror(-r));
}

int mg_cg_write_size(int cgfd, const char *cgpath, const char *file, uint64_t bytes, char *err,
                     size_t errsize)
{
	char buf[32];

	if (bytes == MG_SIZE_UNLIMITED)
		snprintf(buf, sizeof(buf), "max");
	else
		snprintf(buf, sizeof(buf), "%" PRIu64, bytes);
	return mg_cg_write(cgfd, cgpath, file, buf, err, errsize);
}

int mg_cg_read_u64(int cgfd, const char *file, uint64_t *ret)
{
	char buf[64];
	ssize_t n = mg_read_small_at(cgfd, file, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = '\0';
	if (strcmp(buf, "max") == 0) {
		*ret = MG_SIZE_UNLIMITED;
		return 0;
	}
	return mg_parse_u64(buf, ret) < 0 ? -EBADMSG : 0;
}

int mg_cg_read_key(int cgfd, const char *file, const char *key, uint64_t *ret)
{
	_cleanup_free_ char *text = NULL;
	ssize_t n = mg_read_file_at(cgfd, file, &text);

	if (n < 0)
		return (int)n;
	return mg_keyed_u64(text, key, ret);
}

int mg_memory_events_parse(const char *text, struct mg_memory_events *ret)
{
	struct {
		const char *key;
		uint64_t *dst;
	} fields[] = {
	        {"low", &ret->low}, {"high", &ret->high},         {"max", &ret->max},
	        {"oom", &ret->oom}, {"oom_kill", &ret->oom_kill}, {"oom_group_kill", &ret->oom_group_kill},
	};
	struct mg_memory_events ev = {0};

	*ret = ev;
	for (size_t i = 0; i < MG_ARRAY_SIZE(fields); i++) {
		int r = mg_keyed_u64(text, fields[i].key, fields[i].dst);
		/* oom_group_kill arrived in 5.17; older kernels lack it. */
		if (r == -ENOENT && strcmp(fields[i].key, "oom_group_kill") == 0)
			continue;
		if (r < 0)
			return -EBADMSG;
	}
	return 0;
}

int mg_cg_read_memory_events(int cgfd, struct mg_memory_events *ret)
{
	char buf[512];
	ssize_t n = mg_read_small_at(cgfd, "memory.events", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return mg_memory_events_parse(buf, ret);
}

int mg_cg_populated(int cgfd)
{
	uint64_t v;
	int r = mg_cg_read_key(cgfd, "cgroup.events", "populated", &v);

	return r < 0 ? r : v != 0;
}

int mg_cg_move_pid(int cgfd, pid_t pid)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	return mg_write_file_at(cgfd, "cgroup.procs", buf);
}

/* Signals a pid through a pidfd, so a recycled pid is never hit; before
 * 5.3 there are no pidfds, and a frozen cgroup keeps the pid from exiting
 * and being reused meanwhile anyway. */
static int kill_pid(pid_t pid)
{
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (pidfd < 0 && errno == ENOSYS)
		return kill(pid, SIGKILL) == 0 ? 1 : errno == ESRCH ? 0 : -errno;
	if (pidfd < 0)
		return errno == ESRCH ? 0 : -errno;
	if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0)
		return errno == ESRCH ? 0 : -errno;
	return 1;
}

static int kill_one(pid_t pid, void *userdata)
{
	int *killed = userdata;

	if (kill_pid(pid) > 0)
		(*killed)++;
	return 0;
}

static int kill_procs_recursive(int cgfd, const char *name, void *userdata)
{
	(void)mg_cg_for_each_pid(cgfd, kill_one, userdata);
	(void)mg_cg_for_each_child(cgfd, kill_procs_recursive, userdata);
	return 0;
}

/* Waits up to timeout_ms for cgroup.events to say "frozen 1". Returns how
 * that went, in words for the log. */
static const char *wait_frozen(int cgfd, int timeout_ms)
{
	uint64_t deadline = mg_now_usec() + (uint64_t)timeout_ms * 1000u;

	while (mg_now_usec() < deadline) {
		uint64_t frozen = 0;
		if (mg_cg_read_key(cgfd, "cgroup.events", "frozen", &frozen) < 0)
			return "cgroup.events unreadable";
		if (frozen)
			return "frozen";
		usleep(5000);
	}
	return "not frozen in time";
}

/* The path of directory fd for a debug line, in buf; "?" when unknown. */
static const char *fd_path(int fd, char *buf, size_t size)
{
	char link[40];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	return n > 0 ? buf : "?";
}

int mg_cg_kill(int cgfd)
{
	int r = mg_write_file_at(cgfd, "cgroup.kill", "1");
	bool debug = mg_log_get_level() >= LOG_DEBUG;
	char path[PATH_MAX];

	/* The debug lines say which way the kill went: the kernel tests assert it. */
	if (r == 0 && debug)
		log_debug("kill %s: cgroup.kill", fd_path(cgfd, path, sizeof(path)));
	if (r == 0 || r == -ENODEV)
		return 0;
	if (r != -ENOENT)
		return r;
	/* A cgroup removed meanwhile has no files at all: gone, not an old kernel. */
	if (faccessat(cgfd, "cgroup.procs", F_OK, 0) < 0 && (errno == ENOENT || errno == ENODEV)) {
		if (debug)
			log_debug("kill %s: gone already", fd_path(cgfd, path, sizeof(path)));
		return 0;
	}
	/* Before 5.14: freeze so no process forks away, kill each, always thaw. */
	r = mg_write_file_at(cgfd, "cgroup.freeze", "1");
	const char *frozen = r == 0 ? wait_frozen(cgfd, 1000) : NULL;
	int killed = 0;
	kill_procs_recursive(cgfd, ".", &killed);
	if (r == 0)
		(void)mg_write_file_at(cgfd, "cgroup.freeze", "0");
	if (debug && r < 0)
		log_debug(
		        "kill %s: no cgroup.kill, and cgroup.freeze failed (%s): SIGKILLed %d process%s one "
		        "by one, unfrozen",
		        fd_path(cgfd, path, sizeof(path)), strerror(-r), killed, killed == 1 ? "" : "es");
	else if (debug)
		log_debug("kill %s: no cgroup.kill: froze it (%s), SIGKILLed %d process%s one by one, thawed "
		          "it",
		          fd_path(cgfd, path, sizeof(path)), frozen, killed, killed == 1 ? "" : "es");
	return killed;
}

int mg_proc_cgroup_parse(const char *text, char **ret_path)
{
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);

		if (len >= 4 && strncmp(line, "0::/", 4) == 0) {
			char *path = strndup(line + 3, len - 3);
			if (!path)
				return -ENOMEM;
			*ret_path = path;
			return 0;
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

int mg_cg_pid_path(int procfd, pid_t pid, char **ret_path)
{
	_cleanup_free_ char *text = NULL;
	char name[40];
	ssize_t n;

	if (pid == 0)
		snprintf(name, sizeof(name), "self/cgroup");
	else
		snprintf(name, sizeof(name), "%d/cgroup", (int)pid);
	n = mg_read_file_at(procfd, name, &text);
	if (n < 0)
		return (int)n;
	return mg_proc_cgroup_parse(text, ret_path);
}

int mg_proc_cgroup_v1_parse(const char *text, const char *controller, char **ret_path)
{
	size_t clen = strlen(controller);

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;

		/* The controller list is comma separated: "cpu,cpuacct". */
		for (const char *p = c1 ? c1 + 1 : NULL; c2 && p < c2;) {
			const char *comma = memchr(p, ',', (size_t)(c2 - p));
			const char *stop = comma ? comma : c2;
			if ((size_t)(stop - p) == clen && memcmp(p, controller, clen) == 0) {
				char *path = strndup(c2 + 1, (size_t)(end - c2 - 1));
				if (!path)
					return -ENOMEM;
				*ret_path = path;
				return 0;
			}
			p = stop + 1;
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

#define MG_LIMIT_HUGE (1ull << 62)

int mg_cg_ancestor_limit(int mountfd, const char *path, const char *file, uint64_t *ret_limit, char **ret_at)
{
	_cleanup_free_ char *walk = strdup(path);
	uint64_t best = MG_SIZE_UNLIMITED;
	char *best_at = NULL;

	if (!walk)
		return -ENOMEM;
	for (;;) {
		const char *rel = walk + strspn(walk, "/");
		_cleanup_close_ int fd = mg_cg_open(mountfd, *rel ? rel : ".");
		uint64_t v;

		/* v1 says "no limit" with a huge page-aligned number. */
		if (fd >= 0 && mg_cg_read_u64(fd, file, &v) == 0 && v < best && v < MG_LIMIT_HUGE) {
			char *at = strdup(*walk ? walk : "/");
			if (!at) {
				free(best_at);
				return -ENOMEM;
			}
			free(best_at);
			best_at = at;
			best = v;
		}
		char *slash = strrchr(walk, '/');
		if (!slash || !*rel)
			break;
		*slash = '\0';
	}
	*ret_limit = best;
	*ret_at = best_at;
	return 0;
}
