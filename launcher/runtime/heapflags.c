/* Heap flags per runtime from a task's share, never overriding the user's own (see runtime.h). */
#include "runtime/runtime.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime/chars.h"
#include "runtime/cmdline.h"
#include "memguard/util.h"

#define MIB (UINT64_C(1) << 20)

/* ---------------------------------------------------------------------- */
/* Heap caps */

struct heap_rule {
	uint64_t reserve;     /* fixed non-heap RSS: interpreter, JIT, young gen ... */
	unsigned headroom;    /* share/headroom more is kept for what grows with the heap */
	uint64_t floor_bytes; /* never below this: less would not start the runtime */
};

/* See docs/runtimes.md for the measurements behind each line. */
static const struct heap_rule heap_rules[MG_RUNTIME__COUNT] = {
        [MG_RUNTIME_PYPY] = {80 * MIB, 16, 16 * MIB},  [MG_RUNTIME_JVM] = {48 * MIB, 4, 16 * MIB},
        [MG_RUNTIME_GO] = {16 * MIB, 10, 16 * MIB},    [MG_RUNTIME_NODE] = {96 * MIB, 4, 16 * MIB},
        [MG_RUNTIME_DOTNET] = {32 * MIB, 4, 20 * MIB}, [MG_RUNTIME_R] = {64 * MIB, 8, 16 * MIB},
};

/* Shares from here up mean "no real limit" (no node has a PiB of memory). */
#define SHARE_NO_LIMIT (UINT64_C(1) << 50)

uint64_t mg_heap_cap(enum mg_runtime rt, uint64_t share_bytes)
{
	const struct heap_rule *rule;
	uint64_t usable, cap, floor_cap;

	if ((unsigned)rt >= MG_RUNTIME__COUNT)
		return 0;
	rule = &heap_rules[rt];
	if (rule->headroom == 0 || share_bytes == 0 || share_bytes >= SHARE_NO_LIMIT)
		return 0;
	usable = share_bytes - share_bytes / rule->headroom;
	cap = usable > rule->reserve ? usable - rule->reserve : 0;
	/* A tiny share: a quarter of it beats a heap of nothing. */
	floor_cap = share_bytes / 4 > rule->floor_bytes ? share_bytes / 4 : rule->floor_bytes;
	if (cap < floor_cap)
		cap = floor_cap;
	if (cap > share_bytes)
		cap = share_bytes;
	return cap / MIB * MIB;
}

/* ---------------------------------------------------------------------- */
/* The user's own settings */

struct user_env {
	char *const *envp;
	const struct mg_cmdline *cmd; /* env wrapper assignments; may be NULL */
};

static const char *assignment_value(const char *entry, const char *name, bool ignore_case)
{
	size_t len = strlen(name);

	if ((ignore_case ? strncasecmp(entry, name, len) : strncmp(entry, name, len)) != 0)
		return NULL;
	return entry[len] == '=' ? entry + len + 1 : NULL;
}

/* The value the task will see for name, or NULL: an env wrapper in the
 * command wins over the inherited environment. *ret_from_wrapper tells which. */
static const char *user_env_get(const struct user_env *u, const char *name, bool *ret_from_wrapper)
{
	const char *v;

	if (ret_from_wrapper)
		*ret_from_wrapper = false;
	for (size_t i = u->cmd ? u->cmd->n_assign : 0; i > 0; i--) {
		v = assignment_value(u->cmd->assign[i - 1], name, false);
		if (v) {
			if (ret_from_wrapper)
				*ret_from_wrapper = true;
			return v;
		}
	}
	for (size_t i = 0; u->envp && u->envp[i]; i++) {
		v = assignment_value(u->envp[i], name, false);
		if (v)
			return v;
	}
	return NULL;
}

/* Whether any variable whose name starts with prefix (any case) is set. */
static bool user_env_has_prefix(const struct user_env *u, const char *prefix)
{
	size_t len = strlen(prefix);

	for (size_t i = 0; u->cmd && i < u->cmd->n_assign; i++)
		if (strncasecmp(u->cmd->assign[i], prefix, len) == 0)
			return true;
	for (size_t i = 0; u->envp && u->envp[i]; i++)
		if (strncasecmp(u->envp[i], prefix, len) == 0)
			return true;
	return false;
}

/* Calls fn on each blank-separated word of s until it returns true. */
static bool any_word(const char *s, bool (*fn)(const char *word, size_t len, void *data), void *data)
{
	while (s && *s) {
		size_t len;
		while (*s && is_space(*s))
			s++;
		for (len = 0; s[len] && !is_space(s[len]); len++)
			;
		if (len && fn(s, len, data))
			return true;
		s += len;
	}
	return false;
}

static bool word_has_prefix(const char *w, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(w, prefix, n) == 0;
}

/* JVM sizes like -Xmx: digits with an optional k/m/g/t suffix. Pure. */
static bool parse_jvm_size(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0, factor = 1;

	/* k, m, g, t: 2^10, 2^20, 2^30, 2^40, either case. */
	static const char units[] = "kmgt";
	const char *u = len > 0 && s[len - 1] ? strchr(units, s[len - 1] | 0x20) : NULL;
	if (u) {
		factor = UINT64_C(1) << (10 * (u - units + 1));
		len--;
	}
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(s[i]) || __builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
			return false;
	}
	return !__builtin_mul_overflow(v, factor, ret);
}

struct jvm_scan {
	uint64_t share, cap;
	bool conflict; /* the user sized the heap, or asked for more initial heap than our cap */
};

static bool jvm_word(const char *w, size_t len, void *data)
{
	static const char *const max_flags[] = {
	        "-Xmx",        "-XX:MaxHeapSize=",      "-XX:MaxRAMPercentage=", "-XX:MaxRAMFraction=",
	        "-XX:MaxRAM=", "-XX:MinRAMPercentage=", "-XX:MinRAMFraction="};
	struct jvm_scan *s = data;
	uint64_t initial;

	for (size_t i = 0; i < MG_ARRAY_SIZE(max_flags); i++)
		if (word_has_prefix(w, len, max_flags[i]))
			return s->conflict = true;
	/* -Xms above our -Xmx stops the JVM at start ("Initial heap size set to
	 * a larger value than the maximum heap size"): then the user's sizing wins. */
	if (word_has_prefix(w, len, "-Xms") && parse_jvm_size(w + 4, len - 4, &initial) && initial > s->cap)
		return s->conflict = true;
	if (word_has_prefix(w, len, "-XX:InitialHeapSize=") && parse_jvm_size(w + 20, len - 20, &initial) &&
	    initial > s->cap)
		return s->conflict = true;
	if (word_has_prefix(w, len, "-XX:InitialRAMPercentage=")) {
		char num[32];
		size_t n = len - 25 < sizeof(num) - 1 ? len - 25 : sizeof(num) - 1;
		memcpy(num, w + 25, n);
		num[n] = '\0';
		if (strtod(num, NULL) / 100.0 * (double)s->share > (double)s->cap)
			return s->conflict = true;
	}
	return false;
}

/* Java launcher options that take the next word as their value. */
static bool jvm_option_takes_value(const char *t)
{
	static const char *const opts[] = {"-cp",           "-classpath",
	                                   "--class-path",  "-p",
	                                   "--module-path", "--upgrade-module-path",
	                                   "--add-modules", "--limit-modules",
	                                   "--add-reads",   "--add-exports",
	                                   "--add-opens",   "--patch-module",
	                                   "--source",      "--enable-native-access"};
	for (size_t i = 0; i < MG_ARRAY_SIZE(opts); i++)
		if (streq(t, opts[i]))
			return true;
	return false;
}

/* Node options that take the next word as their value. */
static bool node_option_takes_value(const char *t)
{
	static const char *const opts[] = {"-r",
	                                   "--require",
	                                   "-e",
	                                   "--eval",
	                                   "-p",
	                                   "--print",
	                                   "--import",
	                                   "--loader",
	                                   "--experimental-loader",
	                                   "-C",
	                                   "--conditions",
	                                   "--title",
	                                   "--watch-path",
	                                   "--input-type",
	                                   "--redirect-warnings",
	                                   "--env-file",
	                                   "--disable-warning"};
	for (size_t i = 0; i < MG_ARRAY_SIZE(opts); i++)
		if (streq(t, opts[i]))
			return true;
	return false;
}

/* V8 spells flags with '-' or '_' interchangeably. */
static bool node_word(const char *w, size_t len, void *data)
{
	static const char *const flags[] = {"--max-old-space-size", "--max-heap-size"};
	char norm[64];
	size_t n = len < sizeof(norm) - 1 ? len : sizeof(norm) - 1;

	(void)data;
	for (size_t i = 0; i < n; i++)
		norm[i] = (char)(w[i] == '_' ? '-' : w[i]);
	norm[n] = '\0';
	for (size_t i = 0; i < MG_ARRAY_SIZE(flags); i++)
		if (word_has_prefix(norm, n, flags[i]))
			return true;
	return false;
}

/* Runs fn over the runtime's own options in the command (those before the
 * main class, jar, module or script), only when the program is the
 * runtime's launcher itself: after a script's name they are the script's. */
static bool scan_runtime_args(const struct mg_cmdline *c, enum mg_runtime rt,
                              bool (*fn)(const char *word, size_t len, void *data), void *data)
{
	if (c->n == 0 || mg_runtime_from_program_name(base_name(c->tok[0])) != rt)
		return false;
	for (size_t i = 1; i < c->n; i++) {
		const char *t = c->tok[i];

		if (rt == MG_RUNTIME_JVM && t[0] == '@')
			continue; /* an argument file: its options, if any, win over ours anyway */
		if (t[0] != '-' || streq(t, "--") || streq(t, "-"))
			return false;
		if (fn(t, strlen(t), data))
			return true;
		if (rt == MG_RUNTIME_JVM) {
			if (streq(t, "-jar") || streq(t, "-m") || streq(t, "--module") ||
			    strncmp(t, "--module=", 9) == 0)
				return false;
			if (jvm_option_takes_value(t))
				i++;
		} else if (node_option_takes_value(t)) {
			i++;
		}
	}
	return false;
}

/* ---------------------------------------------------------------------- */
/* Settings */

__attribute__((format(printf, 4, 5))) static void add_setting(struct mg_env_setting *ret, int *n,
                                                              const char *name, const char *fmt, ...)
{
	struct mg_env_setting *s;
	va_list ap;
	int len;

	if (*n >= MG_HEAP_SETTINGS_MAX || strlen(name) >= sizeof(s->name))
		return;
	s = &ret[*n];
	va_start(ap, fmt);
	len = vsnprintf(s->value, sizeof(s->value), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(s->value))
		return; /* never a cut-off value */
	snprintf(s->name, sizeof(s->name), "%s", name);
	(*n)++;
}

/* Appends word to a list-valued variable (JAVA_TOOL_OPTIONS, NODE_OPTIONS),
 * keeping the user's value in front; skipped when a wrapper in the command
 * replaces the variable anyway. */
static void append_setting(struct mg_env_setting *ret, int *n, const struct user_env *u, const char *name,
                           const char *word)
{
	bool from_wrapper;
	const char *old = user_env_get(u, name, &from_wrapper);

	if (from_wrapper)
		return;
	if (old && *old)
		add_setting(ret, n, name, "%s %s", old, word);
	else
		add_setting(ret, n, name, "%s", word);
}

static bool user_env_set(const struct user_env *u, const char *name)
{
	return user_env_get(u, name, NULL) != NULL;
}

/* Adds one runtime's settings for cap (> 0) unless the user made their own. */
static void runtime_settings(enum mg_runtime rt, uint64_t share_bytes, uint64_t cap, const struct user_env *u,
                             const struct mg_cmdline *cmd, struct mg_env_setting *ret, int *n)
{
	uint64_t cap_mib = cap / MIB;
	char word[64];

	switch (rt) {
	case MG_RUNTIME_PYPY:
		/* PyPy reads K/M/G with an optional B, binary; "1GiB" is silently ignored. */
		if (!user_env_set(u, "PYPY_GC_MAX"))
			add_setting(ret, n, "PYPY_GC_MAX", "%" PRIu64 "MB", cap_mib);
		break;
	case MG_RUNTIME_JVM: {
		static const char *const lists[] = {"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"};
		struct jvm_scan scan = {.share = share_bytes, .cap = cap};

		for (size_t i = 0; i < MG_ARRAY_SIZE(lists) && !scan.conflict; i++)
			any_word(user_env_get(u, lists[i], NULL), jvm_word, &scan);
		if (!scan.conflict)
			scan_runtime_args(cmd, rt, jvm_word, &scan);
		if (!scan.conflict) {
			snprintf(word, sizeof(word), "-Xmx%" PRIu64 "m", cap_mib);
			append_setting(ret, n, u, "JAVA_TOOL_OPTIONS", word);
		}
		/* JIT and GC threads each get a glibc arena of their own; 4 bounds the
		 * off-heap growth that many-core nodes otherwise see. */
		const char *tunables = user_env_get(u, "GLIBC_TUNABLES", NULL);
		if (!user_env_set(u, "MALLOC_ARENA_MAX") &&
		    !(tunables && strstr(tunables, "glibc.malloc.arena_max")))
			add_setting(ret, n, "MALLOC_ARENA_MAX", "4");
		break;
	}
	case MG_RUNTIME_GO:
		/* Go wants an IEC unit: "1536MB" makes the runtime throw at start. */
		if (!user_env_set(u, "GOMEMLIMIT"))
			add_setting(ret, n, "GOMEMLIMIT", "%" PRIu64 "MiB", cap_mib);
		break;
	case MG_RUNTIME_NODE:
		if (!any_word(user_env_get(u, "NODE_OPTIONS", NULL), node_word, NULL) &&
		    !scan_runtime_args(cmd, rt, node_word, NULL)) {
			snprintf(word, sizeof(word), "--max-old-space-size=%" PRIu64, cap_mib);
			append_setting(ret, n, u, "NODE_OPTIONS", word);
		}
		break;
	case MG_RUNTIME_DOTNET:
		/* Any GCHeapHardLimit* (Percent, SOH/LOH/POH) means the user sized it. */
		if (!user_env_has_prefix(u, "DOTNET_GCHeapHardLimit") &&
		    !user_env_has_prefix(u, "COMPlus_GCHeapHardLimit"))
			add_setting(ret, n, "DOTNET_GCHeapHardLimit", "0x%" PRIX64, cap);
		break;
	case MG_RUNTIME_R:
		/* R reads an integer with a K/M/G suffix; a decimal point is rejected. */
		if (!user_env_set(u, "R_MAX_VSIZE"))
			add_setting(ret, n, "R_MAX_VSIZE", "%" PRIu64 "M", cap_mib);
		break;
	default:
		break;
	}
}

/* What a generic task (a shell, a wrapper script) gets: the variables that
 * only their own runtime reads, each from that runtime's cap, for whatever
 * runtime the task starts. Not MALLOC_ARENA_MAX (every glibc program reads
 * it), nor the JVM's -Xmx: JAVA_TOOL_OPTIONS would beat a script's own
 * -Xms (the JVM then refuses to start) or -XX:MaxRAMPercentage unseen. */
static const struct {
	enum mg_runtime rt;
	const char *name;
} generic_vars[] = {
        {MG_RUNTIME_PYPY, "PYPY_GC_MAX"},  {MG_RUNTIME_GO, "GOMEMLIMIT"},
        {MG_RUNTIME_NODE, "NODE_OPTIONS"}, {MG_RUNTIME_DOTNET, "DOTNET_GCHeapHardLimit"},
        {MG_RUNTIME_R, "R_MAX_VSIZE"},
};

int mg_heap_settings(enum mg_runtime rt, uint64_t share_bytes, char *const envp[], char *const argv[],
                     struct mg_env_setting ret[MG_HEAP_SETTINGS_MAX])
{
	struct mg_cmdline cmd;
	struct user_env u = {.envp = envp, .cmd = &cmd};
	int n = 0;

	if (!ret || (unsigned)rt >= MG_RUNTIME__COUNT)
		return 0;
	mg_cmdline_init(&cmd, argv);
	if (mg_cmdline_unwrap(&cmd) < 0)
		cmd.n = 0; /* keep the wrapper assignments seen so far, scan no options */
	if (rt != MG_RUNTIME_GENERIC) {
		uint64_t cap = mg_heap_cap(rt, share_bytes);
		if (cap)
			runtime_settings(rt, share_bytes, cap, &u, &cmd, ret, &n);
		return n;
	}
	for (size_t i = 0; i < MG_ARRAY_SIZE(generic_vars); i++) {
		uint64_t cap = mg_heap_cap(generic_vars[i].rt, share_bytes);
		if (cap)
			runtime_settings(generic_vars[i].rt, share_bytes, cap, &u, &cmd, ret, &n);
	}
	return n;
}

/* Appends to buf what fits of s; *len counts what did not fit too. */
static void append_str(char *buf, size_t size, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len < size - 1) {
		size_t room = size - 1 - *len;
		memcpy(buf + *len, s, n < room ? n : room);
		buf[*len + (n < room ? n : room)] = '\0';
	}
	*len += n;
}

size_t mg_heap_describe(enum mg_runtime rt, char *const argv[], const struct mg_env_setting *set, size_t n,
                        char *buf, size_t size)
{
	struct mg_cmdline cmd;
	size_t len = 0, named = 0;

	if (!buf || size == 0)
		return 0;
	buf[0] = '\0';
	if (rt != MG_RUNTIME_GENERIC)
		return 0;
	mg_cmdline_init(&cmd, argv);
	append_str(buf, size, &len, mg_cmdline_unwrap(&cmd) >= 0 ? base_name(cmd.tok[0]) : "?");
	/* The user's command: no control character reaches a terminal. */
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	/* Only the generic set: MALLOC_ARENA_MAX under RLIMIT_AS and a pool's
	 * variable have lines of their own in --explain. */
	for (size_t i = 0; i < MG_ARRAY_SIZE(generic_vars); i++)
		for (size_t j = 0; set && j < n; j++)
			if (streq(set[j].name, generic_vars[i].name)) {
				append_str(buf, size, &len, named++ ? ", " : ": ");
				append_str(buf, size, &len, set[j].name);
			}
	append_str(buf, size, &len, named ? " set for any runtime the task starts" : ": no heap flag");
	if (len >= size && size > 4) /* cut: say so rather than end mid-name */
		memcpy(buf + size - 4, "...", 4);
	return len < size ? len : size - 1;
}

/* ---------------------------------------------------------------------- */
/* Worker pools */

/* A Celery prefork worker's main process (measured: 49 MB RSS idle with
 * Debian's celery 5.2.6) stays in the task's cgroup beside its children. */
#define CELERY_MAIN_RESERVE (64 * MIB)
/* And 1/8 of the share for what a child grows during the task that pushes
 * it over: billiard checks the limit only after each task. */
#define CELERY_HEADROOM 8

/* A positive count that fits an unsigned: "4". Pure. */
static bool parse_count(const char *s, unsigned *ret)
{
	uint64_t v = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!is_digit(*s) || __builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v) || v > UINT32_MAX)
			return false;
	if (v == 0)
		return false;
	*ret = (unsigned)v;
	return true;
}

/* The value of option long_name (or short_name, may be NULL) at c->tok[*i]:
 * "--long=v", "--long v", "-sv", "-s v". NULL when the token is not the
 * option; *found tells a missing value from another option. */
static const char *option_value(const struct mg_cmdline *c, size_t *i, const char *long_name,
                                const char *short_name, bool *found)
{
	const char *t = c->tok[*i];
	size_t len = strlen(long_name);

	if (strncmp(t, long_name, len) == 0 && (t[len] == '=' || t[len] == '\0')) {
		*found = true;
		if (t[len] == '=')
			return t + len + 1;
		return ++*i < c->n ? c->tok[*i] : NULL;
	}
	if (short_name && strncmp(t, short_name, 2) == 0) {
		*found = true;
		if (t[2])
			return t + 2;
		return ++*i < c->n ? c->tok[*i] : NULL;
	}
	return NULL;
}

static size_t argv_count(char *const argv[])
{
	size_t n = 0;

	while (argv && argv[n])
		n++;
	return n;
}

/* dask worker: --memory-limit per worker process. */
static int dask_settings(const struct mg_cmdline *c, size_t first, uint64_t share,
                         struct mg_pool_settings *ret)
{
	unsigned nworkers = 1;

	for (size_t i = first; i < c->n; i++) {
		const char *t = c->tok[i], *v;
		bool found = false;

		if (streq(t, "--"))
			return 0; /* a word appended now would be an argument, not an option */
		v = option_value(c, &i, "--memory-limit", NULL, &found);
		if (found)
			return 0; /* the user's, whatever its value */
		v = option_value(c, &i, "--nworkers", NULL, &found);
		if (!found)
			v = option_value(c, &i, "--nprocs", NULL, &found);
		if (found && !parse_count(v, &nworkers))
			return 0; /* "auto", negative: the split is Dask's to guess */
	}
	snprintf(ret->arg, sizeof(ret->arg), "--memory-limit=%" PRIu64, share / nworkers);
	return 1;
}

/* The option's value from the worker's arguments, else from click's
 * CELERY_WORKER_* variable, else NULL. */
static const char *celery_option(const struct mg_cmdline *c, size_t first, const struct user_env *u,
                                 const char *long_name, const char *short_name, const char *env_name)
{
	const char *v = NULL;
	bool any = false;

	for (size_t i = first; i < c->n; i++) {
		bool found = false;
		const char *w = option_value(c, &i, long_name, short_name, &found);
		if (found) {
			v = w; /* click: the last one wins */
			any = true;
		}
	}
	return any ? v : user_env_get(u, env_name, NULL);
}

/* celery worker (prefork): CELERY_WORKER_MAX_MEMORY_PER_CHILD in KiB. */
static int celery_settings(const struct mg_cmdline *c, size_t first, const struct user_env *u, uint64_t share,
                           struct mg_pool_settings *ret)
{
	const char *pool, *limit_env = "CELERY_WORKER_MAX_MEMORY_PER_CHILD";
	uint64_t usable, child;
	unsigned children;
	bool found = false;

	if (user_env_set(u, limit_env))
		return 0; /* set, even empty: the user decided */
	for (size_t i = first; i < c->n; i++) {
		option_value(c, &i, "--max-memory-per-child", NULL, &found);
		if (found)
			return 0;
		option_value(c, &i, "--autoscale", NULL, &found);
		if (found)
			return 0; /* the number of children varies */
	}
	/* Only prefork recycles children; solo and threads run tasks in the
	 * main process, eventlet and gevent in greenlets. */
	pool = celery_option(c, first, u, "--pool", "-P", "CELERY_WORKER_POOL");
	if (pool && !streq(pool, "prefork") && !streq(pool, "processes"))
		return 0;
	/* Without --concurrency Celery starts one child per CPU of the node,
	 * which memguard cannot split a share among. */
	if (!parse_count(celery_option(c, first, u, "--concurrency", "-c", "CELERY_WORKER_CONCURRENCY"),
	                 &children))
		return 0;
	usable = share - share / CELERY_HEADROOM;
	child = usable > CELERY_MAIN_RESERVE ? usable - CELERY_MAIN_RESERVE : 0;
	if (child < share / 4)
		child = share / 4;
	child /= children;
	if (child < 1024)
		return 0;
	add_setting(&ret->env, &(int){0}, limit_env, "%" PRIu64, child / 1024);
	return ret->env.name[0] ? 1 : 0;
}

int mg_pool_settings(enum mg_pool pool, uint64_t share_bytes, char *const envp[], char *const argv[],
                     struct mg_pool_settings *ret)
{
	struct mg_cmdline cmd;
	struct user_env u = {.envp = envp, .cmd = &cmd};
	size_t first;

	if (!ret)
		return 0;
	*ret = (struct mg_pool_settings){0};
	if (share_bytes == 0 || share_bytes >= SHARE_NO_LIMIT || argv_count(argv) > MG_CMD_TOKENS_MAX)
		return 0; /* past MG_CMD_TOKENS_MAX we would not see the user's own setting */
	mg_cmdline_init(&cmd, argv);
	if (mg_cmdline_unwrap(&cmd) < 0 || mg_pool_locate(&cmd, &first) != pool)
		return 0;
	switch (pool) {
	case MG_POOL_DASK:
		return dask_settings(&cmd, first, share_bytes, ret);
	case MG_POOL_CELERY:
		return celery_settings(&cmd, first, &u, share_bytes, ret);
	default:
		return 0;
	}
}
