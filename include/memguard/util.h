/* Small helpers shared by every part of memguard: cleanup attributes and
 * whole-file I/O relative to a directory fd.
 *
 * Convention for the whole project: functions return 0 (or a positive value)
 * on success and -errno on failure; outputs come last and are named ret_*. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#define MG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void mg_freep(void *p)
{
	free(*(void **)p);
}
static inline void mg_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

#define _cleanup_free_ __attribute__((cleanup(mg_freep)))
#define _cleanup_close_ __attribute__((cleanup(mg_closep)))

/* Hand ownership on: returns the value and leaves the variable empty. */
#define TAKE_PTR(p)                                                                                          \
	({                                                                                                   \
		__typeof__(p) _taken = (p);                                                                  \
		(p) = NULL;                                                                                  \
		_taken;                                                                                      \
	})
#define TAKE_FD(fd)                                                                                          \
	({                                                                                                   \
		int _taken = (fd);                                                                           \
		(fd) = -1;                                                                                   \
		_taken;                                                                                      \
	})

/* Reads the whole of dirfd/name into a NUL-terminated heap buffer.
 * Returns the length, or -errno. */
ssize_t mg_read_file_at(int dirfd, const char *name, char **ret_text);

/* Reads at most size-1 bytes of dirfd/name into buf, NUL-terminated: for the
 * small kernel files that a hot path reads without allocating. Returns the
 * length, or -errno. */
ssize_t mg_read_small_at(int dirfd, const char *name, char *buf, size_t size);
/* The same from an open fd, to its end (a socket: until the peer closes). */
ssize_t mg_read_small_fd(int fd, char *buf, size_t size);

/* One open, exactly one write(), no stdio: the way cgroup files want it. */
int mg_write_file_at(int dirfd, const char *name, const char *value);

/* Finds "key value" in a flat-keyed kernel file (memory.events, memory.stat,
 * cgroup.events) or "Key: value [kB]" (meminfo). Returns 0 and the value,
 * -ENOENT when the key is absent, -EBADMSG when its value is not a number
 * or anything but blanks and meminfo's "kB" follows it. */
int mg_keyed_u64(const char *text, const char *key, uint64_t *ret_value);

/* Strict unsigned decimal parse of the whole of s (no sign, no spaces). */
int mg_parse_u64(const char *s, uint64_t *ret_value);

/* Monotonic clock in microseconds. */
uint64_t mg_now_usec(void);

/* pidfd_open(2) and pidfd_send_signal(2), which glibc 2.36 does not wrap:
 * the fd, or 0 for the signal, else -errno. */
int mg_pidfd_open(pid_t pid);
int mg_pidfd_signal(int pidfd, int sig);

/* Reads a whole file by path (config files, task lists). */
ssize_t mg_read_file(const char *path, char **ret_text);

/* mg_read_file with a bound: -EFBIG when the file holds more than max bytes
 * (max below SIZE_MAX - 1), so that /dev/zero or a huge file cannot hang or
 * exhaust the reader. */
ssize_t mg_read_file_max(const char *path, size_t max, char **ret_text);
/* The same from an open fd (standard input, a pipe), to its end. */
ssize_t mg_read_fd_max(int fd, size_t max, char **ret_text);
