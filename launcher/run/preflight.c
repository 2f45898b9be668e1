/* Checks before a run starts: memguardd's presence and the command's program. */
#include "run/preflight.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memguard/util.h"

int mg_daemon_running_at(int dirfd, const char *path)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* memguardd holds LOCK_EX for its life; a shared lock we get is free. */
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		(void)flock(fd, LOCK_UN);
		return 0;
	}
	return errno == EWOULDBLOCK ? 1 : -errno;
}

/* Whether execve() could run path: 0, or the error it would give (a
 * directory is told apart from a file without permission). */
static int check_program(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EACCES;
	/* The effective ids, as execve() uses them. */
	if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) < 0)
		return -errno;
	return 0;
}

int mg_command_resolve(const char *name, const char *path_env, char *buf, size_t size)
{
	size_t name_len = strlen(name);
	int seen = 0;

	if (name_len == 0)
		return -ENOENT;
	if (strchr(name, '/')) {
		if (name_len >= size)
			return -ENAMETOOLONG;
		memcpy(buf, name, name_len + 1);
		return check_program(buf);
	}
	if (!path_env)
		path_env = "/bin:/usr/bin"; /* glibc's default, confstr(_CS_PATH) */
	for (const char *p = path_env;; p++) {
		const char *colon = strchrnul(p, ':');
		size_t dir_len = (size_t)(colon - p);
		int n = dir_len ? snprintf(buf, size, "%.*s/%s", (int)dir_len, p, name)
		                : snprintf(buf, size, "%s", name);
		int r = n > 0 && (size_t)n < size ? check_program(buf) : -ENAMETOOLONG;

		if (r == 0)
			return 0;
		/* execvp() goes on past a file it may not run, and says so at
		 * the end if nothing better turned up. */
		if ((r == -EACCES || r == -EISDIR) && !seen)
			seen = r;
		if (!*colon)
			break;
		p = colon;
	}
	return seen ?: -ENOENT;
}
