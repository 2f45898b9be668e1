/* Small shared helpers: whole-file I/O relative to a directory fd, keyed-file lookups, number parsing. */
#include "memguard/util.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

/* Reads until EOF or until room bytes are in: fewer than room means EOF. */
static ssize_t read_upto(int fd, char *buf, size_t room)
{
	size_t len = 0;

	while (len < room) {
		ssize_t n = read(fd, buf + len, room - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return (ssize_t)len;
}

/* Reads to EOF, or -EFBIG past max bytes (/dev/zero ends there too). */
ssize_t mg_read_fd_max(int fd, size_t max, char **ret_text)
{
	size_t cap = 4096, len = 0;
	_cleanup_free_ char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		size_t room = cap - len - 1;
		ssize_t n = read_upto(fd, buf + len, room);
		if (n < 0)
			return n;
		len += (size_t)n;
		if (len > max)
			return -EFBIG;
		if ((size_t)n < room)
			break;
		/* Room for max + 1 bytes is enough to tell. */
		size_t bigger_cap = cap > max / 2 ? max + 2 : cap * 2;
		char *bigger = realloc(buf, bigger_cap);
		if (!bigger)
			return -ENOMEM;
		buf = bigger;
		cap = bigger_cap;
	}
	buf[len] = '\0';
	*ret_text = TAKE_PTR(buf);
	return (ssize_t)len;
}

ssize_t mg_read_file_at(int dirfd, const char *name, char **ret_text)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return mg_read_fd_max(fd, SIZE_MAX - 2, ret_text);
}

ssize_t mg_read_file(const char *path, char **ret_text)
{
	return mg_read_file_at(AT_FDCWD, path, ret_text);
}

ssize_t mg_read_file_max(const char *path, size_t max, char **ret_text)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return mg_read_fd_max(fd, max, ret_text);
}

ssize_t mg_read_small_fd(int fd, char *buf, size_t size)
{
	ssize_t n;

	if (size == 0)
		return -EINVAL;
	n = read_upto(fd, buf, size - 1);
	if (n < 0)
		return n;
	buf[n] = '\0';
	return n;
}

ssize_t mg_read_small_at(int dirfd, const char *name, char *buf, size_t size)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : mg_read_small_fd(fd, buf, size);
}

int mg_write_file_at(int dirfd, const char *name, const char *value)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(value);

	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, value, len);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	return 0;
}

int mg_parse_u64(const char *s, uint64_t *ret_value)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			return -ERANGE;
	}
	*ret_value = v;
	return 0;
}

int mg_keyed_u64(const char *text, const char *key, uint64_t *ret_value)
{
	size_t klen = strlen(key);

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t llen = eol ? (size_t)(eol - line) : strlen(line);

		if (llen > klen && strncmp(line, key, klen) == 0 &&
		    (line[klen] == ' ' || line[klen] == ':' || line[klen] == '\t')) {
			const char *p = line + klen;
			char num[32];
			size_t n = 0;

			if (*p == ':')
				p++;
			while (*p == ' ' || *p == '\t')
				p++;
			while (p < line + llen && *p >= '0' && *p <= '9' && n < sizeof(num) - 1)
				num[n++] = *p++;
			num[n] = '\0';
			while (p < line + llen && (*p == ' ' || *p == '\t'))
				p++;
			/* Nothing after the number but meminfo's unit: "12abc" is not 12. */
			if (p < line + llen && !(line + llen - p == 2 && strncmp(p, "kB", 2) == 0))
				return -EBADMSG;
			return mg_parse_u64(num, ret_value) < 0 ? -EBADMSG : 0;
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

uint64_t mg_now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int mg_pidfd_open(pid_t pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : (int)fd;
}

int mg_pidfd_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 ? -errno : 0;
}
