/* Command-line unwrapping: env [-S] and other wrappers, and "#!" lines (see cmdline.h). */
#include "runtime/cmdline.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime/chars.h"
#include "memguard/util.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* ---------------------------------------------------------------------- */
/* The token list */

void mg_cmdline_init(struct mg_cmdline *c, char *const argv[])
{
	c->n = 0;
	c->store_used = 0;
	c->n_assign = 0;
	c->hops = 0;
	for (; argv && argv[c->n] && c->n < MG_CMD_TOKENS_MAX; c->n++)
		c->tok[c->n] = argv[c->n];
}

/* Copies len bytes of s into the store, NUL-terminated; NULL when full. */
static char *cmdline_strndup(struct mg_cmdline *c, const char *s, size_t len)
{
	char *p;

	if (len >= MG_CMD_STORE_SIZE - c->store_used)
		return NULL;
	p = c->store + c->store_used;
	memcpy(p, s, len);
	p[len] = '\0';
	c->store_used += len + 1;
	return p;
}

/* Replaces the first `drop` tokens with ins[0..n_ins); what no longer fits
 * at the end is dropped (only leading tokens matter to us). */
static void cmdline_replace_head(struct mg_cmdline *c, size_t drop, const char *const *ins, size_t n_ins)
{
	const char *rest[MG_CMD_TOKENS_MAX];
	size_t n_rest = c->n > drop ? c->n - drop : 0;

	memcpy(rest, c->tok + (c->n - n_rest), n_rest * sizeof(rest[0]));
	c->n = 0;
	for (size_t i = 0; i < n_ins && c->n < MG_CMD_TOKENS_MAX; i++)
		c->tok[c->n++] = ins[i];
	for (size_t i = 0; i < n_rest && c->n < MG_CMD_TOKENS_MAX; i++)
		c->tok[c->n++] = rest[i];
}

/* Splits s the way GNU env -S does: blanks separate; '...' is literal;
 * "..." and bare text take backslash escapes (\_ is a blank outside quotes
 * and a space inside, \c ends the string); a token starting with # starts a
 * comment. ${VAR} is kept as written: we do not know the task's values.
 * The pieces go to c's store. Returns the count, or -E2BIG / -EINVAL. */
static int split_string(struct mg_cmdline *c, const char *s, const char **ret_tok, size_t tok_max)
{
	size_t n = 0;
	char *out = c->store + c->store_used;
	size_t room = MG_CMD_STORE_SIZE - c->store_used, used = 0;

	for (;;) {
		char quote = 0;
		bool any = false, stop = false;
		size_t start = used;

		while (*s && is_space(*s))
			s++;
		if (!*s || *s == '#')
			break;
		for (; *s; s++) {
			char ch = *s;
			if (!quote && is_space(ch))
				break;
			if (ch == '\'' || ch == '"') {
				if (!quote) {
					quote = ch;
					any = true;
					continue;
				}
				if (quote == ch) {
					quote = 0;
					continue;
				}
			}
			if (ch == '\\' && quote != '\'' && s[1]) {
				s++;
				switch (*s) {
				case '_':
					if (!quote) {
						s++;
						goto token_end;
					}
					ch = ' ';
					break;
				case 'c':
					stop = true;
					goto token_end;
				case 't':
					ch = '\t';
					break;
				case 'n':
					ch = '\n';
					break;
				default:
					ch = *s;
					break;
				}
			} else if (ch == '\\' && quote == '\'' && (s[1] == '\\' || s[1] == '\'')) {
				ch = *++s;
			}
			if (used + 1 >= room)
				return -E2BIG;
			out[used++] = ch;
			any = true;
		}
	token_end:
		if (quote)
			return -EINVAL;
		if (any || used > start) {
			if (n >= tok_max || used + 1 >= room)
				return -E2BIG;
			out[used++] = '\0';
			ret_tok[n++] = out + start;
		}
		if (stop)
			break;
	}
	c->store_used += used;
	return (int)n;
}

/* ---------------------------------------------------------------------- */
/* Wrappers: programs that run another program after their own options */

enum wrapper_kind {
	WRAPPER_PLAIN,
	WRAPPER_ENV,        /* NAME=value assignments, -S splitting, a lone "-" */
	WRAPPER_POSITIONAL, /* one operand before the command: taskset's mask, timeout's duration */
	WRAPPER_PRIORITY,   /* chrt: a numeric priority before the command */
};

struct wrapper {
	const char *name;
	enum wrapper_kind kind;
	const char *short_with_arg;        /* short options that take a value */
	const char *const *long_with_arg;  /* long options that take a value */
	const char *short_without_command; /* options after which no command follows */
	const char *const *long_without_command;
};

static const char *const env_long[] = {"unset", "chdir", "split-string", NULL};
static const char *const nice_long[] = {"adjustment", NULL};
static const char *const ionice_long[] = {"class", "classdata", "pid", "pgid", "uid", NULL};
static const char *const ionice_nocmd[] = {"pid", "pgid", "uid", NULL};
static const char *const time_long[] = {"format", "output", NULL};
static const char *const stdbuf_long[] = {"input", "output", "error", NULL};
static const char *const taskset_nocmd[] = {"pid", NULL};
static const char *const numactl_long[] = {"interleave",
                                           "preferred",
                                           "preferred-many",
                                           "cpubind",
                                           "cpunodebind",
                                           "physcpubind",
                                           "membind",
                                           "shm",
                                           "file",
                                           "offset",
                                           "length",
                                           "shmmode",
                                           "shmid",
                                           "weighted-interleave",
                                           NULL};
static const char *const numactl_nocmd[] = {"show", "hardware", NULL};
static const char *const chrt_long[] = {"sched-runtime", "sched-period", "sched-deadline", NULL};
static const char *const chrt_nocmd[] = {"pid", "max", NULL};
static const char *const timeout_long[] = {"kill-after", "signal", NULL};

static const struct wrapper wrappers[] = {
        {"env", WRAPPER_ENV, "uCS", env_long, "", NULL},
        {"nice", WRAPPER_PLAIN, "n", nice_long, "", NULL},
        {"ionice", WRAPPER_PLAIN, "cnpPu", ionice_long, "pPu", ionice_nocmd},
        {"time", WRAPPER_PLAIN, "fo", time_long, "", NULL},
        {"stdbuf", WRAPPER_PLAIN, "ioe", stdbuf_long, "", NULL},
        {"taskset", WRAPPER_POSITIONAL, "", NULL, "p", taskset_nocmd},
        {"numactl", WRAPPER_PLAIN, "ipcNCmSfoLMIPw", numactl_long, "sH", numactl_nocmd},
        {"chrt", WRAPPER_PRIORITY, "TPD", chrt_long, "pm", chrt_nocmd},
        {"nohup", WRAPPER_PLAIN, "", NULL, "", NULL},
        {"timeout", WRAPPER_POSITIONAL, "ks", timeout_long, "", NULL},
        {"setsid", WRAPPER_PLAIN, "", NULL, "", NULL},
};

static const struct wrapper *find_wrapper(const char *base)
{
	for (size_t i = 0; i < MG_ARRAY_SIZE(wrappers); i++)
		if (streq(base, wrappers[i].name))
			return &wrappers[i];
	return NULL;
}

/* getopt_long accepts any unambiguous prefix of a long option. */
static bool long_option_in(const char *name, size_t len, const char *const *list)
{
	if (len == 0)
		return false;
	for (; list && *list; list++)
		if (strncmp(*list, name, len) == 0)
			return true;
	return false;
}

/* An env operand NAME=value (GNU env takes anything with '=' before the
 * command as an assignment). */
static bool is_assignment(const char *t)
{
	return t[0] != '=' && strchr(t, '=') != NULL;
}

/* Walks a wrapper's options. On return *ret_next is the index of its
 * command; for env -S, *ret_split is the string to split and *ret_next the
 * index after it. Returns 0, or -ENOENT when no command follows. Pure. */
static int skip_wrapper(struct mg_cmdline *c, const struct wrapper *w, size_t *ret_next,
                        const char **ret_split)
{
	size_t i = 1;

	*ret_split = NULL;
	while (i < c->n) {
		const char *t = c->tok[i];

		if (streq(t, "--")) {
			i++;
			break;
		}
		if (w->kind == WRAPPER_ENV && streq(t, "-")) { /* env's old spelling of -i */
			i++;
			continue;
		}
		if (t[0] != '-' || t[1] == '\0')
			break;
		if (t[1] == '-') {
			const char *name = t + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);

			if (long_option_in(name, len, w->long_without_command))
				return -ENOENT;
			if (w->kind == WRAPPER_ENV &&
			    long_option_in(name, len, (const char *const[]){"split-string", NULL})) {
				if (eq) {
					*ret_split = eq + 1;
					*ret_next = i + 1;
				} else {
					if (i + 1 >= c->n)
						return -ENOENT;
					*ret_split = c->tok[i + 1];
					*ret_next = i + 2;
				}
				return 0;
			}
			i += (!eq && long_option_in(name, len, w->long_with_arg)) ? 2 : 1;
			continue;
		}
		/* A cluster of short options: -iu NAME, -c3, -oL ... */
		bool took_next = false;
		for (const char *o = t + 1; *o; o++) {
			if (strchr(w->short_without_command, *o))
				return -ENOENT;
			if (!strchr(w->short_with_arg, *o))
				continue;
			const char *value = o[1] ? o + 1 : (i + 1 < c->n ? c->tok[i + 1] : NULL);
			if (!value)
				return -ENOENT;
			took_next = !o[1];
			if (w->kind == WRAPPER_ENV && *o == 'S') {
				*ret_split = value;
				*ret_next = i + (took_next ? 2 : 1);
				return 0;
			}
			break;
		}
		i += took_next ? 2 : 1;
	}

	if (w->kind == WRAPPER_ENV)
		for (; i < c->n && is_assignment(c->tok[i]); i++)
			if (c->n_assign < MG_CMD_ASSIGN_MAX)
				c->assign[c->n_assign++] = c->tok[i];
	if (w->kind == WRAPPER_POSITIONAL && i < c->n)
		i++;
	if (w->kind == WRAPPER_PRIORITY && i < c->n && all_digits(c->tok[i]))
		i++;
	if (i >= c->n || c->tok[i][0] == '\0')
		return -ENOENT;
	*ret_next = i;
	return 0;
}

int mg_cmdline_unwrap(struct mg_cmdline *c)
{
	for (;;) {
		const struct wrapper *w;
		const char *split;
		size_t next;
		int r;

		if (c->n > 0 && streq(c->tok[0], "--")) {
			cmdline_replace_head(c, 1, NULL, 0);
			continue;
		}
		if (c->n == 0 || c->tok[0][0] == '\0')
			return -ENOENT;
		w = find_wrapper(base_name(c->tok[0]));
		if (!w)
			return 0;
		if (++c->hops > MG_CMD_HOPS_MAX)
			return -ELOOP;
		r = skip_wrapper(c, w, &next, &split);
		if (r < 0)
			return r;
		if (split) {
			/* env -S "a b" rest → env a b rest: env goes on parsing the pieces. */
			const char *ins[MG_CMD_TOKENS_MAX];
			ins[0] = c->tok[0];
			r = split_string(c, split, ins + 1, MG_CMD_TOKENS_MAX - 1);
			if (r < 0)
				return r;
			cmdline_replace_head(c, next, ins, (size_t)r + 1);
			continue;
		}
		cmdline_replace_head(c, next, NULL, 0);
	}
}

/* ---------------------------------------------------------------------- */
/* "#!" lines */

int mg_shebang_parse(const char *buf, size_t len, struct mg_span *ret_interp, struct mg_span *ret_arg)
{
	size_t i = 2, end, raw_end;
	bool complete;

	if (len < 2 || buf[0] != '#' || buf[1] != '!')
		return -ENOEXEC;
	for (end = 2; end < len && buf[end] != '\n' && buf[end] != '\0'; end++)
		;
	/* The line ended, or the file did, within what the kernel reads. */
	complete = end < len || len < MG_SHEBANG_MAX;
	raw_end = end;
	while (end > i && (is_blank(buf[end - 1]) || buf[end - 1] == '\r'))
		end--;
	while (i < end && is_blank(buf[i]))
		i++;
	ret_interp->p = buf + i;
	while (i < end && !is_blank(buf[i]))
		i++;
	ret_interp->len = (size_t)(buf + i - ret_interp->p);
	if (ret_interp->len == 0)
		return -ENOEXEC;
	if (!complete && i == raw_end)
		return -ENOEXEC; /* the kernel refuses an interpreter name cut short */
	while (i < end && is_blank(buf[i]))
		i++;
	ret_arg->p = buf + i;
	ret_arg->len = end - i;
	return 0;
}

int mg_cmdline_apply_shebang(struct mg_cmdline *c, const char *path, const char *head, size_t head_len)
{
	struct mg_span interp, arg;
	const char *ins[3];
	size_t n_ins = 0;
	char *s;
	int r;

	r = mg_shebang_parse(head, head_len, &interp, &arg);
	if (r < 0)
		return r;
	if (memchr(interp.p, '/', interp.len)) {
		s = cmdline_strndup(c, interp.p, interp.len);
	} else {
		/* The kernel opens a bare #! name relative to the cwd, never via PATH. */
		char rel[MG_SHEBANG_MAX + 3];
		int n = snprintf(rel, sizeof(rel), "./%.*s", (int)interp.len, interp.p);
		s = n > 0 ? cmdline_strndup(c, rel, (size_t)n) : NULL;
	}
	if (!s)
		return -E2BIG;
	ins[n_ins++] = s;
	if (arg.len > 0) {
		s = cmdline_strndup(c, arg.p, arg.len);
		if (!s)
			return -E2BIG;
		ins[n_ins++] = s;
	}
	s = cmdline_strndup(c, path, strlen(path));
	if (!s)
		return -E2BIG;
	ins[n_ins++] = s;
	cmdline_replace_head(c, 1, ins, n_ins);
	return 0;
}
