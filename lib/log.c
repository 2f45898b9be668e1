/* Logging to stderr or the journal, with a level and structured fields. */
#include "memguard/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>
#include <sys/uio.h>
#include <unistd.h>

#define MG_LOG_MAX_IOV 32

static const char *log_ident = "memguard";
static bool log_journal;
static int log_level = LOG_INFO;

static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

void mg_log_setup(const char *ident, enum mg_log_target target, int max_level)
{
	log_ident = ident;
	log_level = max_level;
	log_journal = target == MG_LOG_JOURNAL || (target == MG_LOG_AUTO && stderr_is_journal());
}

void mg_log_set_level(int max_level)
{
	log_level = max_level;
}
int mg_log_get_level(void)
{
	return log_level;
}
bool mg_log_is_journal(void)
{
	return log_journal;
}

static const char *level_name(int level)
{
	switch (level) {
	case LOG_EMERG:
	case LOG_ALERT:
	case LOG_CRIT:
	case LOG_ERR:
		return "error: ";
	case LOG_WARNING:
		return "warning: ";
	case LOG_DEBUG:
		return "debug: ";
	default:
		return "";
	}
}

static void log_emit(int level, const char *const *fields, const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));
static void log_emit(int level, const char *const *fields, const char *fmt, va_list ap)
{
	char msg[2048];
	int saved = errno;

	if (level > log_level)
		return;
	errno = saved;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!log_journal) {
		/* One message, one line: a newline or other control character from
		 * the input it quotes (a file name, an option's value) becomes '?'. */
		for (char *p = msg; *p; p++)
			if ((unsigned char)*p < 0x20 ? *p != '\t' : *p == 0x7f)
				*p = '?';
		fprintf(stderr, "%s: %s%s\n", log_ident, level_name(level), msg);
		errno = saved;
		return;
	}

	struct iovec iov[MG_LOG_MAX_IOV];
	char *owned[3] = {NULL, NULL, NULL};
	size_t n = 0;

	if (asprintf(&owned[0], "MESSAGE=%s", msg) < 0 || asprintf(&owned[1], "PRIORITY=%d", level) < 0 ||
	    asprintf(&owned[2], "SYSLOG_IDENTIFIER=%s", log_ident) < 0)
		goto out;
	for (size_t i = 0; i < 3; i++)
		iov[n++] = (struct iovec){owned[i], strlen(owned[i])};
	for (size_t i = 0; fields && fields[i] && n < MG_LOG_MAX_IOV; i++)
		iov[n++] = (struct iovec){(void *)fields[i], strlen(fields[i])};
	sd_journal_sendv(iov, (int)n);
out:
	for (size_t i = 0; i < 3; i++)
		free(owned[i]);
	errno = saved;
}

void mg_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(level, NULL, fmt, ap);
	va_end(ap);
}

int mg_log_errno(int level, int r, const char *fmt, ...)
{
	va_list ap;

	errno = abs(r);
	va_start(ap, fmt);
	log_emit(level, NULL, fmt, ap);
	va_end(ap);
	return -abs(r);
}

void mg_log_fields(int level, const char *const *fields, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(level, fields, fmt, ap);
	va_end(ap);
}
