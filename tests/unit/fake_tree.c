#include "fake_tree.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

/* fail() longjmps back into cmocka; abort() only runs outside a test. */
__attribute__((noreturn)) static void ft_fail(const char *what, const char *name, int err)
{
	print_error("fake_tree: %s %s: %s\n", what, name, strerror(err));
	fail();
	abort();
}

void ft_new(struct fake_tree *t)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	t->fd = -1;
	if (snprintf(t->path, sizeof(t->path), "%s/memguard-unit-XXXXXX", tmp) >= (int)sizeof(t->path))
		ft_fail("path too long", tmp, ENAMETOOLONG);
	if (!mkdtemp(t->path))
		ft_fail("mkdtemp", t->path, errno);
	t->fd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->fd < 0)
		ft_fail("open", t->path, errno);
}

void ft_new_xattr(struct fake_tree *t, const char *what)
{
	static const char *const dirs[] = {NULL, "/dev/shm", "/var/tmp"};
	const char *saved = getenv("TMPDIR");
	char *keep = saved ? strdup(saved) : NULL;
	int err = 0;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (dirs[i])
			setenv("TMPDIR", dirs[i], 1);
		ft_new(t);
		if (fsetxattr(t->fd, "user.memguard.probe", "1", 1, 0) == 0) {
			(void)fremovexattr(t->fd, "user.memguard.probe");
			break;
		}
		err = errno;
		print_error("no user xattrs under %s: %s\n", t->path, strerror(err));
		ft_free(t);
	}
	if (keep)
		setenv("TMPDIR", keep, 1);
	else
		unsetenv("TMPDIR");
	free(keep);
	if (t->fd < 0)
		fail_msg("no filesystem here stores user xattrs (%s): %s cannot be tested", strerror(err),
		         what);
}

void ft_require_trusted_xattr(struct fake_tree *t, const char *what)
{
	char v[4];

	if (fsetxattr(t->fd, "trusted.memguard.probe", "1", 1, 0) < 0)
		fail_msg("cannot set trusted xattrs under %s (%s; root on a filesystem with them is needed): "
		         "%s "
		         "cannot be tested",
		         t->path, strerror(errno), what);
	ssize_t n = fgetxattr(t->fd, "trusted.memguard.probe", v, sizeof(v));
	int err = errno;
	(void)fremovexattr(t->fd, "trusted.memguard.probe");
	if (n != 1)
		fail_msg("cannot read trusted xattrs under %s (%s): %s cannot be tested", t->path,
		         strerror(err), what);
}

void ft_chown(int dirfd, const char *relpath, uid_t uid)
{
	if (fchownat(dirfd, relpath, uid, (gid_t)-1, AT_SYMLINK_NOFOLLOW) < 0)
		ft_fail("chown", relpath, errno);
}

void ft_set_xattr(int dirfd, const char *relpath, const char *name, const char *value)
{
	int fd = ft_open_dir(dirfd, relpath);
	int r = value ? fsetxattr(fd, name, value, strlen(value), 0) : fremovexattr(fd, name);
	int err = errno;

	close(fd);
	if (r < 0 && !(value == NULL && err == ENODATA))
		ft_fail(value ? "setxattr" : "removexattr", name, err);
}

/* rm -rf dirfd/name without following symlinks. */
static void remove_at(int dirfd, const char *name, int depth)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (S_ISDIR(st.st_mode) && depth < 64) {
		int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;

		if (dir) {
			struct dirent *de;
			while ((de = readdir(dir)))
				if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
					remove_at(fd, de->d_name, depth + 1);
			closedir(dir);
		} else if (fd >= 0) {
			close(fd);
		}
		(void)unlinkat(dirfd, name, AT_REMOVEDIR);
		return;
	}
	(void)unlinkat(dirfd, name, 0);
}

void ft_free(struct fake_tree *t)
{
	if (t->fd < 0)
		return;
	close(t->fd);
	t->fd = -1;
	remove_at(AT_FDCWD, t->path, 0);
}

int ft_setup(void **state)
{
	struct fake_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	t->fd = -1;
	*state = t;
	ft_new(t);
	return 0;
}

int ft_teardown(void **state)
{
	struct fake_tree *t = *state;

	if (t) {
		ft_free(t);
		free(t);
	}
	*state = NULL;
	return 0;
}

void ft_mkdir(int dirfd, const char *relpath)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", relpath) >= (int)sizeof(buf))
		ft_fail("path too long", relpath, ENAMETOOLONG);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdirat(dirfd, buf, 0755) < 0 && errno != EEXIST)
			ft_fail("mkdir", buf, errno);
		*p = '/';
	}
	if (mkdirat(dirfd, buf, 0755) < 0 && errno != EEXIST)
		ft_fail("mkdir", buf, errno);
}

static void mkdir_parents(int dirfd, const char *relpath)
{
	char buf[PATH_MAX];
	char *slash;

	if (snprintf(buf, sizeof(buf), "%s", relpath) >= (int)sizeof(buf))
		ft_fail("path too long", relpath, ENAMETOOLONG);
	slash = strrchr(buf, '/');
	if (slash && slash != buf) {
		*slash = '\0';
		ft_mkdir(dirfd, buf);
	}
}

void ft_write_bytes(int dirfd, const char *relpath, const void *data, size_t len)
{
	const char *p = data;
	int fd;

	mkdir_parents(dirfd, relpath);
	fd = openat(dirfd, relpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		ft_fail("create", relpath, errno);
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : EIO;
			close(fd);
			ft_fail("write", relpath, err);
		}
		p += n;
		len -= (size_t)n;
	}
	close(fd);
}

void ft_write(int dirfd, const char *relpath, const char *content)
{
	ft_write_bytes(dirfd, relpath, content, strlen(content));
}

char *ft_read(int dirfd, const char *relpath, size_t *ret_len)
{
	size_t cap = 256, len = 0;
	char *buf = malloc(cap);
	int fd = openat(dirfd, relpath, O_RDONLY | O_CLOEXEC);

	if (!buf)
		ft_fail("malloc for", relpath, ENOMEM);
	if (fd < 0) {
		int err = errno;
		free(buf);
		ft_fail("open", relpath, err);
	}
	for (;;) {
		if (len + 1 >= cap) {
			char *bigger = realloc(buf, cap * 2);
			if (!bigger) {
				free(buf);
				close(fd);
				ft_fail("realloc for", relpath, ENOMEM);
			}
			buf = bigger;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			free(buf);
			close(fd);
			ft_fail("read", relpath, err);
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	if (ret_len)
		*ret_len = len;
	return buf;
}

bool ft_exists(int dirfd, const char *relpath)
{
	struct stat st;

	return fstatat(dirfd, relpath, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int ft_open_dir(int dirfd, const char *relpath)
{
	int fd = openat(dirfd, relpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		ft_fail("open directory", relpath, errno);
	return fd;
}

void ft_capture_begin(struct ft_capture *c)
{
	char path[PATH_MAX];
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(path, sizeof(path), "%s/memguard-stderr-XXXXXX", tmp);
	fflush(stderr);
	c->file_fd = mkostemp(path, O_CLOEXEC);
	if (c->file_fd < 0)
		ft_fail("mkostemp", path, errno);
	(void)unlink(path);
	c->saved_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (c->saved_fd < 0 || dup2(c->file_fd, STDERR_FILENO) < 0)
		ft_fail("redirect", "stderr", errno);
}

char *ft_capture_end(struct ft_capture *c)
{
	struct stat st;
	char *text;
	size_t len = 0;

	fflush(stderr);
	if (dup2(c->saved_fd, STDERR_FILENO) < 0)
		ft_fail("restore", "stderr", errno);
	close(c->saved_fd);
	if (fstat(c->file_fd, &st) < 0)
		ft_fail("fstat", "captured stderr", errno);
	text = malloc((size_t)st.st_size + 1);
	if (!text)
		ft_fail("malloc for", "captured stderr", ENOMEM);
	while (len < (size_t)st.st_size) {
		ssize_t n = pread(c->file_fd, text + len, (size_t)st.st_size - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	text[len] = '\0';
	close(c->file_fd);
	c->file_fd = c->saved_fd = -1;
	return text;
}

pid_t ft_fork_paused_child(void)
{
	pid_t pid;

	pid_t parent = getpid();

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		ft_fail("fork", "child", errno);
	if (pid == 0) {
		/* Never outlive the test, even when it crashes before reaping. */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		alarm(120);
		for (;;)
			pause();
	}
	return pid;
}

int ft_reap_child(pid_t pid, int timeout_ms)
{
	struct timespec nap = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
	int status = 0;

	for (int waited = 0;; waited += 5) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			ft_fail("waitpid", "child", errno);
		if (waited >= timeout_ms)
			break;
		nanosleep(&nap, NULL);
	}
	/* Still alive: never leave our own child behind. */
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return -1;
}

static pid_t *children_slot(struct ft_children *c)
{
	assert_true(c->n < FT_MAX_CHILDREN);
	return &c->pid[c->n++];
}

pid_t ft_children_fork(struct ft_children *c)
{
	pid_t *slot = children_slot(c);

	*slot = ft_fork_paused_child();
	return *slot;
}

void ft_children_add(struct ft_children *c, pid_t pid)
{
	*children_slot(c) = pid;
}

int ft_children_reap(struct ft_children *c, pid_t pid, int timeout_ms)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->pid[i] == pid)
			c->pid[i] = 0;
	return ft_reap_child(pid, timeout_ms);
}

void ft_children_cleanup(struct ft_children *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->pid[i] > 0)
			(void)ft_reap_child(c->pid[i], 0);
	c->n = 0;
}

void ft_require_python(void)
{
	static bool found; /* asked once per test program */

	if (found)
		return;
	if (system("python3 -c 'import json' >/dev/null 2>&1") != 0)
		fail_msg("python3 is needed to check the JSON (scripts/deps.sh test installs it)");
	found = true;
}

#define FT_PYTHON_OUT (1 << 16)

char *ft_run_python(const char *script, const char *arg, int *ret_status)
{
	struct fake_tree scripts;
	char cmd[2 * PATH_MAX + 64], *out;
	size_t len = 0;
	FILE *p;

	ft_require_python();
	out = malloc(FT_PYTHON_OUT);
	assert_non_null(out);
	ft_new(&scripts);
	ft_write(scripts.fd, "script.py", script);
	snprintf(cmd, sizeof(cmd), "python3 '%s/script.py' '%s' 2>&1", scripts.path, arg);
	p = popen(cmd, "r");
	if (!p) {
		int err = errno;
		ft_free(&scripts);
		free(out);
		fail_msg("popen %s: %s", cmd, strerror(err));
	}
	while (len + 1 < FT_PYTHON_OUT) {
		size_t got = fread(out + len, 1, FT_PYTHON_OUT - 1 - len, p);
		if (got == 0)
			break;
		len += got;
	}
	out[len] = '\0';
	*ret_status = pclose(p);
	ft_free(&scripts);
	return out;
}

char *ft_check_python(const char *script, const char *path)
{
	int status;
	char *out = ft_run_python(script, path, &status);

	if (status != 0)
		print_error("Python check of %s failed (%#x):\n%s\n", path, (unsigned)status, out);
	assert_int_equal(status, 0);
	return out;
}

void ft_hex(const char *s, char *out, size_t size)
{
	size_t n = 0;

	out[0] = '\0';
	for (const unsigned char *p = (const unsigned char *)s; *p && n + 3 < size; p++)
		n += (size_t)snprintf(out + n, size - n, "%02x", *p);
}

void ft_assert_contains_at(const char *haystack, const char *needle, const char *file, int line)
{
	if (haystack && needle && strstr(haystack, needle))
		return;
	print_error("\"%s\" does not contain \"%s\"\n", haystack ? haystack : "(null)",
	            needle ? needle : "(null)");
	_fail(file, line);
}

void ft_assert_not_contains_at(const char *haystack, const char *needle, const char *file, int line)
{
	if (haystack && needle && !strstr(haystack, needle))
		return;
	print_error("\"%s\" contains \"%s\"\n", haystack ? haystack : "(null)", needle ? needle : "(null)");
	_fail(file, line);
}
