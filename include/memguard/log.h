/* Logging: to stderr with a level, or to the journal with structured fields
 * when stderr is connected to it (systemd sets JOURNAL_STREAM). */
#pragma once

#include <stdbool.h>
#include <syslog.h>

enum mg_log_target {
	MG_LOG_AUTO, /* the journal if JOURNAL_STREAM names our stderr, else stderr */
	MG_LOG_STDERR,
	MG_LOG_JOURNAL,
};

/* ident prefixes stderr lines and becomes SYSLOG_IDENTIFIER in the journal. */
void mg_log_setup(const char *ident, enum mg_log_target target, int max_level);
void mg_log_set_level(int max_level);
int mg_log_get_level(void);
bool mg_log_is_journal(void);

void mg_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs with errno set from r so that %m names the error; returns -|r| so that
 * callers can write: return mg_log_errno(LOG_ERR, r, "write %s: %m", name); */
int mg_log_errno(int level, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Structured entry: fields is a NULL-terminated list of "KEY=value" strings
 * that go to the journal as fields; on stderr only the message is printed. */
void mg_log_fields(int level, const char *const *fields, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#define log_err(...) mg_log(LOG_ERR, __VA_ARGS__)
#define log_warn(...) mg_log(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) mg_log(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) mg_log(LOG_INFO, __VA_ARGS__)
#define log_debug(...) mg_log(LOG_DEBUG, __VA_ARGS__)
