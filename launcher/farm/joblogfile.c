/* The joblog's file: its lock, and a cut last line mended (joblogfile.h). */
#include "farm/joblogfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "farm/joblog.h"
#include "memguard/util.h"

int mg_joblog_open(const char *path, bool create, bool lock)
{
	int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOCTTY | (create ? O_CREAT : 0), 0666);

	if (fd < 0)
		return -errno;
	if (lock && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = -errno;
		close(fd);
		return r == -EAGAIN ? -EWOULDBLOCK : r;
	}
	return fd;
}

/* The offset just past the last newline before end, or 0 when there is none. */
static ssize_t after_last_newline(int fd, off_t end)
{
	char buf[4096];

	while (end > 0) {
		size_t want = end < (off_t)sizeof(buf) ? (size_t)end : sizeof(buf);
		ssize_t n = pread(fd, buf, want, end - (off_t)want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if ((size_t)n != want)
			return -EIO;
		const char *nl = memrchr(buf, '\n', want);
		if (nl)
			return (ssize_t)(end - (off_t)want + (nl - buf) + 1);
		end -= (off_t)want;
	}
	return 0;
}

ssize_t mg_joblog_prepare(int fd, bool resume)
{
	struct stat st;
	ssize_t keep = 0;
	char last;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (resume && st.st_size > 0) {
		if (pread(fd, &last, 1, st.st_size - 1) != 1)
			return -EIO;
		keep = last == '\n' ? (ssize_t)st.st_size : after_last_newline(fd, st.st_size);
		if (keep < 0)
			return keep;
	}
	if (keep < st.st_size && ftruncate(fd, keep) < 0)
		return -errno;
	/* One write, as every line of it. */
	if (keep == 0) {
		ssize_t w = write(fd, MG_JOBLOG_HEADER, strlen(MG_JOBLOG_HEADER));
		if (w < 0)
			return -errno;
		if ((size_t)w != strlen(MG_JOBLOG_HEADER))
			return -EIO;
	}
	return (ssize_t)(st.st_size - keep);
}
