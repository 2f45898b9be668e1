/* memguard.conf: defaults, parsing of the INI file and its conf.d drop-ins, and validation. */
#include "memguard/config.h"

#include <dirent.h>
#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include "memguard/units.h"
#include "memguard/util.h"

void mg_config_defaults(struct mg_config *cfg)
{
	*cfg = (struct mg_config){
	        .reserve = "5%",
	        .reserve_shmem = true,
	        .min_share = 32ull << 20,
	        .high_percent = 0,
	        .swap_max = 0,
	        .oom_group = true,
	        .rlimit_as = MG_RLIMIT_AS_AUTO,
	        .heap_flags = true,
	        .kill_grace_usec = 10 * 1000000ull,
	        .mode = MG_SHARE_AUTO,
	        .parent = "memguard",
	        .log_level = LOG_INFO,
	        .guard = "memguard/*/* memguard.slice/*/*",
	        .place_beside = "system.slice/*slurmstepd.scope/job_*/step_*/user/task_*",
	        .protect = "init.scope system.slice/ssh.service system.slice/systemd-journald.service "
	                   "system.slice/slurmd.service system.slice/pbs_mom.service "
	                   "system.slice/memguardd.service /usr/sbin/sshd /usr/lib/openssh/sshd-session "
	                   "/usr/sbin/slurmd /usr/sbin/slurmstepd /usr/sbin/pbs_mom /opt/pbs/sbin/pbs_mom "
	                   "/usr/sbin/memguardd",
	        .available_min = "5%",
	        .available_pressure = "15%",
	        .pressure_full_avg10 = 20,
	        .trigger_stall_usec = 100000,
	        .trigger_window_usec = 1000000,
	        .settle_usec = 2000000,
	        .poll_max_usec = 30000000,
	        .lead_usec = 250000,
	        .outside_due = "10%",
	        .kill_outside = true,
	        .dry_run = false,
	        .throttle = true,
	        .lead_kill = false,
	        .kill_log = "/var/log/memguard/kills.jsonl",
	        .metrics_file = "",
	        .metrics_interval_usec = 60 * 1000000ull,
	};
}

void mg_service_config_defaults(struct mg_service_config *svc, const char *unit)
{
	*svc = (struct mg_service_config){
	        .action = MG_SERVICE_RESTART,
	        .window_usec = 10 * 60 * 1000000ull,
	        .horizon_usec = 2 * 3600 * 1000000ull,
	        .stuck_usec = 60 * 1000000ull,
	        .restart_limit = 3,
	        .restart_limit_interval_usec = 24 * 3600 * 1000000ull,
	        .restart_backoff_usec = 10 * 60 * 1000000ull,
	};
	snprintf(svc->unit, sizeof(svc->unit), "%s", unit);
}

enum key_type {
	KEY_SIZE,
	KEY_RESERVE, /* a size, or a percentage resolved later against MemTotal */
	KEY_BOOL,
	KEY_PERCENT,
	KEY_DURATION,
	KEY_NAME,        /* a plain name: letters, digits, . _ - */
	KEY_LIST,        /* words separated by spaces */
	KEY_PATH,        /* an absolute path */
	KEY_PATH_OR_OFF, /* an absolute path, or nothing: off */
	KEY_RLIMIT,
	KEY_MODE,
	KEY_LEVEL,
	KEY_ACTION, /* restart or log */
	KEY_COUNT,  /* a whole number */
};

struct key {
	const char *section, *name;
	enum key_type type;
	size_t offset;
	size_t size; /* of the field, for strings */
};

#define KEY(s, n, t, field)                                                                                  \
	{                                                                                                    \
		s, n, t, offsetof(struct mg_config, field), sizeof(((struct mg_config *)0)->field)           \
	}
static const struct key keys[] = {
        KEY("budget", "reserve", KEY_RESERVE, reserve),
        KEY("budget", "reserve_shmem", KEY_BOOL, reserve_shmem),
        KEY("budget", "min_share", KEY_SIZE, min_share),
        KEY("task", "memory_high", KEY_PERCENT, high_percent),
        KEY("task", "swap_max", KEY_SIZE, swap_max),
        KEY("task", "oom_group", KEY_BOOL, oom_group),
        KEY("task", "rlimit_as", KEY_RLIMIT, rlimit_as),
        KEY("task", "heap_flags", KEY_BOOL, heap_flags),
        KEY("task", "kill_grace", KEY_DURATION, kill_grace_usec),
        KEY("task", "mode", KEY_MODE, mode),
        KEY("cgroup", "parent", KEY_NAME, parent),
        KEY("daemon", "guard", KEY_LIST, guard),
        KEY("daemon", "place_beside", KEY_LIST, place_beside),
        KEY("daemon", "protect", KEY_LIST, protect),
        KEY("daemon", "available_min", KEY_RESERVE, available_min),
        KEY("daemon", "available_pressure", KEY_RESERVE, available_pressure),
        KEY("daemon", "pressure_full_avg10", KEY_PERCENT, pressure_full_avg10),
        KEY("daemon", "trigger_stall", KEY_DURATION, trigger_stall_usec),
        KEY("daemon", "trigger_window", KEY_DURATION, trigger_window_usec),
        KEY("daemon", "settle", KEY_DURATION, settle_usec),
        KEY("daemon", "poll_max", KEY_DURATION, poll_max_usec),
        KEY("daemon", "lead_time", KEY_DURATION, lead_usec),
        KEY("daemon", "outside_due", KEY_RESERVE, outside_due),
        KEY("daemon", "kill_outside", KEY_BOOL, kill_outside),
        KEY("daemon", "dry_run", KEY_BOOL, dry_run),
        KEY("daemon", "throttle", KEY_BOOL, throttle),
        KEY("daemon", "lead_kill", KEY_BOOL, lead_kill),
        KEY("daemon", "kill_log", KEY_PATH, kill_log),
        KEY("daemon", "metrics_file", KEY_PATH_OR_OFF, metrics_file),
        KEY("daemon", "metrics_interval", KEY_DURATION, metrics_interval_usec),
        KEY("log", "level", KEY_LEVEL, log_level),
};

/* The keys of a [service UNIT] section, with their bounds (inclusive). */
struct service_key {
	const char *name;
	enum key_type type;
	size_t offset;
	uint64_t min, max;
};

#define SEC 1000000ull
#define SERVICE_KEY(n, t, field, lo, hi)                                                                     \
	{                                                                                                    \
		n, t, offsetof(struct mg_service_config, field), lo, hi                                      \
	}
static const struct service_key service_keys[] = {
        SERVICE_KEY("action", KEY_ACTION, action, 0, 0),
        /* four parts of at least 4 s, each several looks at one a second at most */
        SERVICE_KEY("window", KEY_DURATION, window_usec, 16 * SEC, 24 * 3600 * SEC),
        SERVICE_KEY("horizon", KEY_DURATION, horizon_usec, 60 * SEC, 30 * 24 * 3600 * SEC),
        SERVICE_KEY("stuck_time", KEY_DURATION, stuck_usec, 5 * SEC, 3600 * SEC),
        SERVICE_KEY("restart_limit", KEY_COUNT, restart_limit, 1, MG_SERVICE_RESTARTS_MAX),
        SERVICE_KEY("restart_limit_interval", KEY_DURATION, restart_limit_interval_usec, 60 * SEC,
                    30 * 24 * 3600 * SEC),
        SERVICE_KEY("restart_backoff", KEY_DURATION, restart_backoff_usec, 0, 24 * 3600 * SEC),
};

static int parse_bool(const char *v, bool *ret)
{
	static const char *const yes[] = {"yes", "true", "on", "1"}, *const no[] = {"no", "false", "off",
	                                                                            "0"};

	for (size_t i = 0; i < MG_ARRAY_SIZE(yes); i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return *ret = true, 0;
		if (strcasecmp(v, no[i]) == 0)
			return *ret = false, 0;
	}
	return -EINVAL;
}

static int parse_value(const struct key *k, const char *v, void *dst, const char **why)
{
	uint64_t n;
	int r;

	switch (k->type) {
	case KEY_SIZE:
		return mg_size_parse(v, 0, dst, why);
	case KEY_RESERVE:
		/* Validated against a stand-in base; resolved against MemTotal later. */
		if ((r = mg_size_parse(v, 1ull << 30, &n, why)) < 0)
			return r;
		if (strlen(v) >= k->size)
			return *why = "too long", -EINVAL;
		strcpy(dst, v);
		return 0;
	case KEY_BOOL:
		*why = "expected yes or no";
		return parse_bool(v, dst);
	case KEY_PERCENT:
		*why = "expected a percentage from 0% to 100%";
		if (strcasecmp(v, "off") == 0)
			return *(unsigned *)dst = 0, 0;
		size_t len = strlen(v);
		char num[8];
		if (len < 2 || len > sizeof(num) || v[len - 1] != '%')
			return -EINVAL;
		memcpy(num, v, len - 1);
		num[len - 1] = '\0';
		if (mg_parse_u64(num, &n) < 0 || n > 100)
			return -EINVAL;
		*(unsigned *)dst = (unsigned)n;
		return 0;
	case KEY_DURATION:
		return mg_duration_parse(v, dst, why);
	case KEY_NAME:
		*why = "expected a plain name (letters, digits, . _ -)";
		if (!*v || strlen(v) >= k->size || v[0] == '.' ||
		    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
		            strlen(v))
			return -EINVAL;
		strcpy(dst, v);
		return 0;
	case KEY_LIST:
		*why = "too long";
		if (strlen(v) >= k->size)
			return -EINVAL;
		strcpy(dst, v);
		return 0;
	case KEY_PATH:
	case KEY_PATH_OR_OFF:
		*why = k->type == KEY_PATH ? "expected an absolute path"
		                           : "expected an absolute path or nothing";
		if ((v[0] != '/' && (k->type == KEY_PATH || *v)) || strlen(v) >= k->size)
			return -EINVAL;
		strcpy(dst, v);
		return 0;
	case KEY_MODE:
		*why = "expected auto, strict or elastic";
		if (strcasecmp(v, "auto") == 0)
			return *(enum mg_share_mode *)dst = MG_SHARE_AUTO, 0;
		if (strcasecmp(v, "strict") == 0)
			return *(enum mg_share_mode *)dst = MG_SHARE_STRICT, 0;
		if (strcasecmp(v, "elastic") == 0)
			return *(enum mg_share_mode *)dst = MG_SHARE_ELASTIC, 0;
		return -EINVAL;
	case KEY_RLIMIT:
		*why = "expected auto, on or off";
		if (strcasecmp(v, "auto") == 0)
			return *(enum mg_rlimit_as_mode *)dst = MG_RLIMIT_AS_AUTO, 0;
		bool b;
		if (parse_bool(v, &b) < 0)
			return -EINVAL;
		*(enum mg_rlimit_as_mode *)dst = b ? MG_RLIMIT_AS_ON : MG_RLIMIT_AS_OFF;
		return 0;
	case KEY_ACTION:
		*why = "expected restart or log";
		if (strcasecmp(v, "restart") == 0)
			return *(enum mg_service_action *)dst = MG_SERVICE_RESTART, 0;
		if (strcasecmp(v, "log") == 0)
			return *(enum mg_service_action *)dst = MG_SERVICE_LOG, 0;
		return -EINVAL;
	case KEY_COUNT:
		*why = "expected a whole number";
		if (mg_parse_u64(v, &n) < 0 || n > UINT32_MAX)
			return -EINVAL;
		*(unsigned *)dst = (unsigned)n;
		return 0;
	case KEY_LEVEL: {
		static const char *const levels[] = {"emerg",   "alert",  "crit", "err",
		                                     "warning", "notice", "info", "debug"};
		*why = "expected err, warning, notice, info or debug";
		for (size_t i = 0; i < MG_ARRAY_SIZE(levels); i++)
			if (strcasecmp(v, levels[i]) == 0)
				return *(int *)dst = (int)i, 0;
		return -EINVAL;
	}
	}
	return -EINVAL;
}

/* Feeds inih one line at a time, so that every message carries the line it
 * is about, a line too long for inih is an error rather than two lines, and
 * an unknown section is caught even when it holds no key. */
struct reader {
	const char *next;
	int line;
	bool indented;   /* an indented line after a key: inih hands it over as a continuation */
	bool in_key;     /* a key was seen since the last section header */
	bool in_service; /* the section is a [service UNIT] one: its keys go to service */
	long service;    /* into cfg->services, -1 for a [service] section in error */
};

static bool known_section(const char *name, size_t len)
{
	for (size_t i = 0; i < MG_ARRAY_SIZE(keys); i++)
		if (strlen(keys[i].section) == len && strncmp(keys[i].section, name, len) == 0)
			return true;
	return false;
}

struct parse_state {
	struct mg_config *cfg;
	const char *origin;
	struct reader rd;
	char *err;
	size_t errsize;
	bool failed;
	int err_line;
};

static void parse_error(struct parse_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void parse_error(struct parse_state *st, const char *fmt, ...)
{
	char why[384];
	va_list ap;

	if (st->failed)
		return; /* keep the first error only */
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(st->err, st->errsize, "%d: %s", st->rd.line, why);
	st->failed = true;
	st->err_line = st->rd.line;
}

/* A mistake in a [service] section: kept, the first only, and the parse goes
 * on (struct mg_config's service_error says why). */
static void service_error(struct parse_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void service_error(struct parse_state *st, const char *fmt, ...)
{
	char why[384];
	va_list ap;

	if (st->cfg->service_error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(st->cfg->service_error, sizeof(st->cfg->service_error), "%s:%d: %s", st->origin, st->rd.line,
	         why);
}

/* The unit types systemd knows besides services: none of them can be restarted as a service is. */
static const char *const other_unit_types[] = {".socket", ".target", ".device", ".mount", ".automount",
                                               ".swap",   ".timer",  ".path",   ".slice", ".scope"};

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* Whether the section named name (len bytes, between the brackets) is a
 * [service UNIT] one: 0 when not, 1 with the unit's name in unit (".service"
 * added when it names no type, as systemctl does), -EINVAL with a reason in
 * *why when its unit cannot be a service's name. */
static int service_section(const char *name, size_t len, char unit[MG_SERVICE_UNIT_MAX], const char **why)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_.\\@";
	const char *u;
	size_t n;

	if (len < 7 || strncmp(name, "service", 7) != 0 || (len > 7 && name[7] != ' ' && name[7] != '\t'))
		return 0;
	for (u = name + 7, n = len - 7; n && (*u == ' ' || *u == '\t'); u++, n--)
		;
	while (n && (u[n - 1] == ' ' || u[n - 1] == '\t'))
		n--;
	*why = "expected [service UNIT], with the name of a systemd service";
	if (n == 0)
		return -EINVAL;
	*why = "a unit's name has letters, digits and : - _ . \\ @ only, and at most 255 of them";
	if (strspn(u, chars) < n || n + sizeof(".service") > MG_SERVICE_UNIT_MAX)
		return -EINVAL;
	for (size_t i = 0; i < MG_ARRAY_SIZE(other_unit_types); i++)
		if (ends_with(u, n, other_unit_types[i]))
			return *why = "only a .service unit can be restarted", -EINVAL;
	snprintf(unit, MG_SERVICE_UNIT_MAX, "%.*s%s", (int)n, u,
	         ends_with(u, n, ".service") ? "" : ".service");
	/* A template ("getty@.service") is no unit; an instance ("getty@tty1.service") is. */
	*why = "a template or an empty name is no unit: name an instance (\"name@instance\")";
	n = strlen(unit) - strlen(".service");
	if (n == 0 || unit[0] == '@' || unit[n - 1] == '@' || unit[0] == '.')
		return -EINVAL;
	return 1;
}

/* A section header: for [service UNIT], the unit found or added, its keys
 * to come at their defaults; else an unknown section is an error. */
static void begin_section(struct parse_state *st, const char *name, size_t len)
{
	struct mg_config *cfg = st->cfg;
	char unit[MG_SERVICE_UNIT_MAX];
	const char *why = "";
	int r = service_section(name, len, unit, &why);

	st->rd.in_service = r != 0;
	st->rd.service = -1;
	if (r == 0) {
		if (!known_section(name, len))
			parse_error(st, "unknown section [%.*s]", (int)len, name);
		return;
	}
	if (r < 0) {
		service_error(st, "[%.*s]: %s", (int)len, name, why);
		return;
	}
	for (size_t i = 0; i < cfg->n_services; i++)
		if (strcmp(cfg->services[i].unit, unit) == 0)
			return (void)(st->rd.service = (long)i);
	if (cfg->n_services == MG_SERVICE_MAX) {
		service_error(st, "[%.*s]: more than %d [service] sections", (int)len, name, MG_SERVICE_MAX);
		return;
	}
	mg_service_config_defaults(&cfg->services[cfg->n_services], unit);
	st->rd.service = (long)cfg->n_services++;
}

/* A bound of a duration in its largest whole unit: "16s", "1min", "24h". */
static void format_bound(uint64_t usec, char *buf, size_t size)
{
	uint64_t sec = usec / SEC;

	if (sec && sec % 3600 == 0)
		snprintf(buf, size, "%" PRIu64 "h", sec / 3600);
	else if (sec && sec % 60 == 0)
		snprintf(buf, size, "%" PRIu64 "min", sec / 60);
	else
		snprintf(buf, size, "%" PRIu64 "s", sec);
}

/* A key of a [service] section: a mistake is kept, not failed on. */
static void service_key(struct parse_state *st, const char *name, const char *value)
{
	struct mg_service_config *svc = &st->cfg->services[st->rd.service];
	const char *why = "invalid value";

	for (size_t i = 0; i < MG_ARRAY_SIZE(service_keys); i++) {
		const struct service_key *sk = &service_keys[i];
		if (strcmp(name, sk->name) != 0)
			continue;
		struct key k = {"service", sk->name, sk->type, sk->offset, 0};
		union {
			uint64_t u64;
			unsigned u;
			enum mg_service_action action;
		} v;
		if (parse_value(&k, value, &v, &why) < 0) {
			service_error(st, "[service %s] %s = \"%s\": %s", svc->unit, name, value, why);
			return;
		}
		uint64_t n = sk->type == KEY_DURATION ? v.u64 : sk->type == KEY_COUNT ? v.u : 0;
		if (sk->type != KEY_ACTION && (n < sk->min || n > sk->max)) {
			char lo[32], hi[32];
			if (sk->type == KEY_DURATION) {
				format_bound(sk->min, lo, sizeof(lo));
				format_bound(sk->max, hi, sizeof(hi));
			} else {
				snprintf(lo, sizeof(lo), "%" PRIu64, sk->min);
				snprintf(hi, sizeof(hi), "%" PRIu64, sk->max);
			}
			service_error(st, "[service %s] %s = \"%s\": expected %s to %s", svc->unit, name,
			              value, lo, hi);
			return;
		}
		if (sk->type == KEY_DURATION)
			memcpy((char *)svc + sk->offset, &v.u64, sizeof(v.u64));
		else if (sk->type == KEY_COUNT)
			memcpy((char *)svc + sk->offset, &v.u, sizeof(v.u));
		else
			memcpy((char *)svc + sk->offset, &v.action, sizeof(v.action));
		return;
	}
	service_error(st, "unknown key \"%s\" in section [service %s]", name, svc->unit);
}

static char *read_line(char *str, int num, void *stream)
{
	struct parse_state *st = stream;
	const char *p = st->rd.next;
	size_t len;

	if (st->failed || !p || !*p)
		return NULL;
	len = strcspn(p, "\n");
	st->rd.line++;
	if (len + 1 >= (size_t)num) {
		parse_error(st, "line longer than %d characters", num - 2);
		return NULL;
	}
	memcpy(str, p, len);
	str[len] = '\n';
	str[len + 1] = '\0';
	st->rd.next = p[len] ? p + len + 1 : p + len;

	const char *t = str + strspn(str, " \t");
	bool blank = *t == '\n' || *t == '#' || *t == ';';
	st->rd.indented = t != str && !blank && st->rd.in_key;
	if (*t == '[' && !st->rd.indented)
		st->rd.in_key = false;
	else if (!blank)
		st->rd.in_key = true;
	size_t close = strcspn(t, "]");
	/* inih takes an indented line after a key for more of its value. */
	if (*t == '[' && t[close] == ']' && !st->rd.indented)
		begin_section(st, t + 1, close - 1);
	else if (*t == '[' && t[close] == ']' && !known_section(t + 1, close - 1))
		parse_error(st, "unknown section [%.*s]", (int)(close - 1), t + 1);
	return st->failed ? NULL : str;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *st = user;
	const char *why = "invalid value";

	/* Only the daemon reads these; a mistake there is kept for it, and the parse goes on. */
	if (st->rd.in_service) {
		if (st->rd.service >= 0)
			service_key(st, name, value);
		return 1;
	}
	for (size_t i = 0; i < MG_ARRAY_SIZE(keys); i++) {
		const struct key *k = &keys[i];
		if (strcmp(section, k->section) != 0 || strcmp(name, k->name) != 0)
			continue;
		char joined[1024];
		/* A list may go on over indented lines, which inih hands over one by one. */
		if (k->type == KEY_LIST && st->rd.indented) {
			snprintf(joined, sizeof(joined), "%s %s", (char *)st->cfg + k->offset, value);
			value = joined;
		}
		if (parse_value(k, value, (char *)st->cfg + k->offset, &why) < 0) {
			parse_error(st, "[%s] %s = \"%s\": %s", section, name, value, why);
			return 0;
		}
		return 1;
	}
	if (!*section)
		parse_error(st, "key \"%s\" outside any section", name);
	else if (known_section(section, strlen(section)))
		parse_error(st, "unknown key \"%s\" in section [%s]", name, section);
	else
		parse_error(st, "unknown section [%s]", section);
	return 0;
}

int mg_config_parse_string(struct mg_config *cfg, const char *text, const char *origin, char *err,
                           size_t errsize)
{
	struct mg_config tmp = *cfg;
	char why[448] = "";
	struct parse_state st = {.cfg = &tmp,
	                         .origin = origin,
	                         .rd = {.next = text, .service = -1},
	                         .err = why,
	                         .errsize = sizeof(why)};
	int line = ini_parse_stream(read_line, &st, on_key, &st);

	/* inih's own complaints (no '=', an unclosed '[') come back as a line number. */
	if (line > 0 && (!st.failed || line < st.err_line)) {
		snprintf(err, errsize, "%s:%d: syntax error", origin, line);
		return -EINVAL;
	}
	if (st.failed || line != 0) {
		snprintf(err, errsize, "%s:%s", origin, why);
		return -EINVAL;
	}
	*cfg = tmp; /* a bad file leaves cfg as it was */
	return 0;
}

static int parse_file(struct mg_config *cfg, const char *path, char *err, size_t errsize)
{
	_cleanup_free_ char *text = NULL;
	ssize_t n = mg_read_file_max(path, MG_CONFIG_MAX_BYTES, &text);

	if (n == -EFBIG) {
		snprintf(err, errsize, "%s: larger than 1 MiB: not a configuration file", path);
		return (int)n;
	}
	if (n < 0) {
		snprintf(err, errsize, "%s: cannot read: %s", path, strerror((int)-n));
		return (int)n;
	}
	if (strlen(text) != (size_t)n) {
		snprintf(err, errsize, "%s: holds a NUL byte: not a text file", path);
		return -EINVAL;
	}
	return mg_config_parse_string(cfg, text, path, err, errsize);
}

static int has_conf_suffix(const struct dirent *de)
{
	size_t len = strlen(de->d_name);
	return de->d_name[0] != '.' && len > 5 && strcmp(de->d_name + len - 5, ".conf") == 0;
}

int mg_config_load(struct mg_config *cfg, const char *path, bool required, const char *dropin_dir, char *err,
                   size_t errsize)
{
	struct mg_config tmp = *cfg;
	struct dirent **list = NULL;
	int r = 0, n;

	if (path && (required || access(path, F_OK) == 0)) {
		r = parse_file(&tmp, path, err, errsize);
		if (r < 0)
			return r;
	}
	if (!dropin_dir)
		goto done;
	n = scandir(dropin_dir, &list, has_conf_suffix, alphasort);
	if (n < 0) {
		if (errno == ENOENT)
			goto done;
		snprintf(err, errsize, "%s: cannot list: %s", dropin_dir, strerror(errno));
		return -errno;
	}
	for (int i = 0; i < n; i++) {
		char file[4096];
		snprintf(file, sizeof(file), "%s/%s", dropin_dir, list[i]->d_name);
		if (r == 0)
			r = parse_file(&tmp, file, err, errsize);
		free(list[i]);
	}
	free(list);
	if (r < 0)
		return r;
done:
	*cfg = tmp;
	return 0;
}
