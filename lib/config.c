#include "memguard/config.h"

#include <dirent.h>
#include <errno.h>
#include <ini.h>
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
	        .parent = "memguard",
	        .log_level = LOG_INFO,
	};
}

enum key_type { KEY_SIZE, KEY_RESERVE, KEY_BOOL, KEY_PERCENT, KEY_DURATION, KEY_NAME, KEY_RLIMIT, KEY_LEVEL };

struct key {
	const char *section, *name;
	enum key_type type;
	size_t offset;
};

#define KEY(s, n, t, field)                                                                                  \
	{                                                                                                    \
		s, n, t, offsetof(struct mg_config, field)                                                   \
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
        KEY("cgroup", "parent", KEY_NAME, parent),
        KEY("log", "level", KEY_LEVEL, log_level),
};

struct parse_state {
	struct mg_config *cfg;
	char *err;
	size_t errsize;
	bool failed;
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
		if (strlen(v) >= sizeof(((struct mg_config *)0)->reserve))
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
		if (!*v || strlen(v) >= sizeof(((struct mg_config *)0)->parent) || v[0] == '.' ||
		    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
		            strlen(v))
			return -EINVAL;
		strcpy(dst, v);
		return 0;
	case KEY_RLIMIT:
		*why = "expected auto, on or off";
		if (strcasecmp(v, "auto") == 0)
			return *(enum mg_rlimit_as_mode *)dst = MG_RLIMIT_AS_AUTO, 0;
		bool b;
		if (parse_bool(v, &b) < 0)
			return -EINVAL;
		*(enum mg_rlimit_as_mode *)dst = b ? MG_RLIMIT_AS_ON : MG_RLIMIT_AS_OFF;
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

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *st = user;
	const char *why = "invalid value";

	if (st->failed)
		return 1; /* keep the first error only */
	for (size_t i = 0; i < MG_ARRAY_SIZE(keys); i++) {
		const struct key *k = &keys[i];
		if (strcmp(section, k->section) != 0 || strcmp(name, k->name) != 0)
			continue;
		if (parse_value(k, value, (char *)st->cfg + k->offset, &why) < 0) {
			snprintf(st->err, st->errsize, "[%s] %s = \"%s\": %s", section, name, value, why);
			st->failed = true;
			return 0;
		}
		return 1;
	}
	bool known_section = false;
	for (size_t i = 0; i < MG_ARRAY_SIZE(keys); i++)
		known_section |= strcmp(section, keys[i].section) == 0;
	if (known_section)
		snprintf(st->err, st->errsize, "unknown key \"%s\" in section [%s]", name, section);
	else
		snprintf(st->err, st->errsize, "unknown section [%s]", section);
	st->failed = true;
	return 0;
}

/* Parses into a copy so that a bad file leaves cfg as it was. */
static int parse_with(struct mg_config *cfg, const char *origin, char *err, size_t errsize,
                      int (*parse)(const void *src, ini_handler, void *), const void *src)
{
	struct mg_config tmp = *cfg;
	char why[256] = "";
	struct parse_state st = {.cfg = &tmp, .err = why, .errsize = sizeof(why)};
	int line = parse(src, on_key, &st);

	if (line == -1) {
		snprintf(err, errsize, "%s: cannot open: %s", origin, strerror(errno));
		return -errno ? -errno : -EIO;
	}
	if (line != 0) {
		snprintf(err, errsize, "%s:%d: %s", origin, line, st.failed ? why : "syntax error");
		return -EINVAL;
	}
	*cfg = tmp;
	return 0;
}

static int parse_string_adapter(const void *src, ini_handler h, void *user)
{
	return ini_parse_string(src, h, user);
}

static int parse_file_adapter(const void *src, ini_handler h, void *user)
{
	return ini_parse(src, h, user);
}

int mg_config_parse_string(struct mg_config *cfg, const char *text, const char *origin, char *err,
                           size_t errsize)
{
	return parse_with(cfg, origin, err, errsize, parse_string_adapter, text);
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
		r = parse_with(&tmp, path, err, errsize, parse_file_adapter, path);
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
			r = parse_with(&tmp, file, err, errsize, parse_file_adapter, file);
		free(list[i]);
	}
	free(list);
	if (r < 0)
		return r;
done:
	*cfg = tmp;
	return 0;
}
