/* Prometheus text exposition format into a buffer, and atomic file replacement. */
#include "memguard/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memguard/util.h"

void mg_metrics_reset(struct mg_metrics *m)
{
	m->len = 0;
	m->error = 0;
	if (m->buf)
		m->buf[0] = '\0';
}

void mg_metrics_done(struct mg_metrics *m)
{
	free(m->buf);
	*m = MG_METRICS_INIT;
}

/* Room for n more bytes and a NUL; false (error set) when there is none. */
static bool reserve(struct mg_metrics *m, size_t n)
{
	if (m->error)
		return false;
	if (n > SIZE_MAX / 2 - m->len - 1) {
		m->error = -ENOMEM;
		return false;
	}
	if (m->len + n + 1 <= m->cap)
		return true;
	size_t cap = m->cap ? m->cap : 4096;
	while (cap < m->len + n + 1)
		cap *= 2;
	char *buf = realloc(m->buf, cap);
	if (!buf) {
		m->error = -ENOMEM;
		return false;
	}
	m->buf = buf;
	m->cap = cap;
	return true;
}

static void put(struct mg_metrics *m, const char *s, size_t n)
{
	if (!reserve(m, n))
		return;
	memcpy(m->buf + m->len, s, n);
	m->len += n;
	m->buf[m->len] = '\0';
}

static void puts_(struct mg_metrics *m, const char *s)
{
	put(m, s, strlen(s));
}

/* s with backslash and newline escaped, and the double quote too when quote
 * is set (label values; help text keeps it). */
static void put_escaped(struct mg_metrics *m, const char *s, bool quote)
{
	for (; *s; s++) {
		size_t plain = strcspn(s, quote ? "\\\n\"" : "\\\n");
		put(m, s, plain);
		s += plain;
		if (!*s)
			break;
		put(m, *s == '\n' ? "\\n" : *s == '"' ? "\\\"" : "\\\\", 2);
	}
}

bool mg_metrics_name_valid(const char *name, bool label)
{
	static const char first[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:";
	const char *allowed = label ? "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789"
	                            : "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:0123456789";

	if (!name || !*name || !strchr(first, *name) || (label && (*name == ':' || !strncmp(name, "__", 2))))
		return false;
	return strspn(name, allowed) == strlen(name);
}

static bool check_name(struct mg_metrics *m, const char *name, bool label)
{
	if (m->error)
		return false;
	if (!mg_metrics_name_valid(name, label)) {
		m->error = -EINVAL;
		return false;
	}
	return true;
}

void mg_metrics_family(struct mg_metrics *m, const char *name, const char *type, const char *help)
{
	if (!check_name(m, name, false))
		return;
	if (strcmp(type, "gauge") != 0 && strcmp(type, "counter") != 0 && strcmp(type, "untyped") != 0) {
		m->error = -EINVAL;
		return;
	}
	puts_(m, "# HELP ");
	puts_(m, name);
	puts_(m, " ");
	put_escaped(m, help, false);
	puts_(m, "\n# TYPE ");
	puts_(m, name);
	puts_(m, " ");
	puts_(m, type);
	puts_(m, "\n");
}

/* name{labels} and a space: everything of a sample but its value. */
static bool put_series(struct mg_metrics *m, const char *name, const char *const *labels)
{
	if (!check_name(m, name, false))
		return false;
	for (size_t i = 0; labels && labels[i]; i += 2)
		if (!check_name(m, labels[i], true) || !labels[i + 1]) {
			m->error = -EINVAL;
			return false;
		}
	puts_(m, name);
	for (size_t i = 0; labels && labels[i]; i += 2) {
		puts_(m, i ? "," : "{");
		puts_(m, labels[i]);
		puts_(m, "=\"");
		put_escaped(m, labels[i + 1], true);
		puts_(m, "\"");
	}
	puts_(m, labels && labels[0] ? "} " : " ");
	return !m->error;
}

void mg_metrics_sample(struct mg_metrics *m, const char *name, const char *const *labels, double value)
{
	char num[64];

	if (!put_series(m, name, labels))
		return;
	if (isnan(value))
		snprintf(num, sizeof(num), "NaN");
	else if (isinf(value))
		snprintf(num, sizeof(num), "%cInf", value > 0 ? '+' : '-');
	else {
		/* The shortest of 15 or 17 digits that reads back as the same double. */
		snprintf(num, sizeof(num), "%.15g", value);
		if (strtod(num, NULL) != value)
			snprintf(num, sizeof(num), "%.17g", value);
	}
	puts_(m, num);
	puts_(m, "\n");
}

void mg_metrics_sample_u64(struct mg_metrics *m, const char *name, const char *const *labels, uint64_t value)
{
	char num[32];

	if (!put_series(m, name, labels))
		return;
	snprintf(num, sizeof(num), "%" PRIu64 "\n", value);
	puts_(m, num);
}

int mg_atomic_open(const char *path, mode_t mode, char *ret_tmp, size_t size)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		uint64_t rnd;
		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
			rnd = (mg_now_usec() + (uint64_t)attempt) * UINT64_C(0x9e3779b97f4a7c15) +
			      (uint64_t)getpid();
		int len = snprintf(ret_tmp, size, "%s.tmp-%016" PRIx64, path, rnd);
		if (len < 0 || (size_t)len >= size)
			return -ENAMETOOLONG;
		int fd = open(ret_tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int mg_atomic_write(const char *path, const void *buf, size_t len, mode_t mode, bool sync)
{
	char tmp[PATH_MAX + 32];
	int fd = mg_atomic_open(path, mode, tmp, sizeof(tmp)), r;

	if (fd < 0)
		return fd;
	r = fchmod(fd, mode) < 0 ? -errno : 0;
	if (r == 0)
		r = write_all(fd, buf, len);
	if (r == 0 && sync && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

int mg_metrics_write(const struct mg_metrics *m, const char *path, bool sync)
{
	if (m->error)
		return m->error;
	return mg_atomic_write(path, m->buf ? m->buf : "", m->len, 0644, sync);
}
