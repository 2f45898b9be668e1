/* parallel's replacement strings, quoting and composition (compose.h). */
#include "farm/compose.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/budget.h"

/* A growing string; oom once an allocation failed. */
struct buf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *bigger = realloc(b->s, cap);
		if (!bigger) {
			b->oom = true;
			return;
		}
		b->s = bigger;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* The string, or NULL when an allocation failed (freed then). */
static char *take(struct buf *b)
{
	if (b->oom) {
		free(b->s);
		return NULL;
	}
	if (!b->s)
		put(b, "", 0);
	return b->oom ? NULL : b->s;
}

static const struct {
	const char *suffix; /* after "{" or "{N" */
	enum mg_rpl rpl;
	bool positional; /* also as {N...} */
} rpls[] = {
        /* The longer first: "/." before "/". */
        {"//}", MG_RPL_DIR, true},  {"/.}", MG_RPL_BASE_NOEXT, true}, {"/}", MG_RPL_BASE, true},
        {".}", MG_RPL_NOEXT, true}, {"#}", MG_RPL_SEQ, false},        {"%}", MG_RPL_SLOT, false},
        {"}", MG_RPL_ARG, true},
};

size_t mg_rpl_match(const char *s, enum mg_rpl *ret_rpl, long *ret_pos)
{
	const char *p = s + 1, *digits;
	long pos = 0;

	if (s[0] != '{')
		return 0;
	/* {N...}: parallel's positional form, blanks allowed before the rest. */
	digits = p + (*p == '-');
	if (*digits >= '0' && *digits <= '9') {
		size_t nd = strspn(digits, "0123456789");
		if (nd > 9)
			return 0;
		pos = strtol(p, NULL, 10);
		/* {-0} would be past the last argument: leave it alone. */
		if (*p == '-' && pos == 0)
			return 0;
		p = digits + nd;
		p += strspn(p, " \t\n\r\f\v");
	} else {
		digits = NULL;
	}
	for (size_t i = 0; i < sizeof(rpls) / sizeof(*rpls); i++) {
		size_t n = strlen(rpls[i].suffix);
		if (strncmp(p, rpls[i].suffix, n) != 0 || (digits && !rpls[i].positional))
			continue;
		*ret_rpl = rpls[i].rpl;
		*ret_pos = pos; /* {0} is {}, as in parallel */
		return (size_t)(p + n - s);
	}
	return 0;
}

/* The first replacement string in s at or after it, or NULL. */
static const char *find_rpl(const char *s, size_t *ret_len, enum mg_rpl *ret_rpl, long *ret_pos)
{
	for (const char *p = strchr(s, '{'); p; p = strchr(p + 1, '{'))
		if ((*ret_len = mg_rpl_match(p, ret_rpl, ret_pos)))
			return p;
	return NULL;
}

/* Whether a word holds a replacement string (of kind want, or any when
 * want is negative). */
static bool holds(char *const *words, int want)
{
	size_t len;
	enum mg_rpl rpl;
	long pos;

	for (size_t i = 0; words[i]; i++)
		for (const char *p = words[i]; (p = find_rpl(p, &len, &rpl, &pos)); p += len)
			if (want < 0 || (int)rpl == want)
				return true;
	return false;
}

bool mg_compose_has_rpl(char *const *words)
{
	return holds(words, -1);
}

bool mg_compose_has_slot(char *const *words)
{
	return holds(words, MG_RPL_SLOT);
}

/* Perl's s:\.[^/.]*$:: */
static void drop_ext(char *s)
{
	char *dot = strrchr(s, '.');

	if (dot && !strchr(dot, '/'))
		*dot = '\0';
}

/* File::Basename's _strip_trailing_sep: trailing slashes go, one character stays. */
static void strip_trailing_slashes(char *s)
{
	size_t n = strlen(s);

	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
}

/* File::Basename::fileparse into a dir (with its "/", or "./") and a base. */
static int fileparse(const char *path, char **ret_dir, const char **ret_base)
{
	const char *slash = strrchr(path, '/');

	*ret_base = slash ? slash + 1 : path;
	*ret_dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup("./");
	return *ret_dir ? 0 : -ENOMEM;
}

/* File::Basename::dirname on Unix. */
static char *dirname_perl(const char *path)
{
	const char *base;
	char *dir, *again;

	if (fileparse(path, &dir, &base) < 0)
		return NULL;
	strip_trailing_slashes(dir);
	if (*base)
		return dir;
	if (fileparse(dir, &again, &base) < 0) {
		free(dir);
		return NULL;
	}
	free(dir);
	strip_trailing_slashes(again);
	return again;
}

char *mg_rpl_apply(enum mg_rpl rpl, const char *arg)
{
	const char *slash = strrchr(arg, '/');
	char *s;

	switch (rpl) {
	case MG_RPL_DIR:
		return dirname_perl(arg);
	case MG_RPL_BASE:
	case MG_RPL_BASE_NOEXT:
		s = strdup(slash ? slash + 1 : arg);
		break;
	default:
		s = strdup(arg);
		break;
	}
	if (s && (rpl == MG_RPL_NOEXT || rpl == MG_RPL_BASE_NOEXT))
		drop_ext(s);
	return s;
}

static bool plain(const char *s)
{
	for (; *s; s++)
		if (!isascii((unsigned char)*s) || !(isalnum((unsigned char)*s) || *s == '-' || *s == '_' ||
		                                     *s == '.' || *s == '+' || *s == '/'))
			return false;
	return true;
}

static void put_quoted(struct buf *b, const char *s)
{
	if (!*s) {
		puts_(b, "''");
		return;
	}
	if (plain(s)) {
		puts_(b, s);
		return;
	}
	/* parallel: s/'/'"'"'/g; $_ = "'$_'"; s/^''//; s/''$//; */
	size_t start = b->len;
	put(b, "'", 1);
	for (const char *p = s; *p; p++)
		if (*p == '\'')
			puts_(b, "'\"'\"'");
		else
			put(b, p, 1);
	put(b, "'", 1);
	if (b->oom)
		return;
	if (strncmp(b->s + start, "''", 2) == 0) {
		memmove(b->s + start, b->s + start + 2, b->len - start - 1);
		b->len -= 2;
	}
	if (b->len - start >= 2 && strcmp(b->s + b->len - 2, "''") == 0)
		b->len -= 2, b->s[b->len] = '\0';
}

char *mg_shell_quote(const char *s)
{
	struct buf b = {0};

	put_quoted(&b, s);
	return take(&b);
}

/* The line being made: groups of text split by unquoted spaces. Each
 * group is quoted as a whole under --quote; an empty group counts (as "")
 * once anything went into it. */
struct line {
	struct buf out, group;
	bool quote;
	bool group_used;
	size_t ngroups;
};

static void end_group(struct line *l)
{
	if (!l->quote || l->group_used) {
		if (l->ngroups++)
			put(&l->out, " ", 1);
		if (l->quote)
			put_quoted(&l->out, l->group.s ? l->group.s : "");
		else
			put(&l->out, l->group.s ? l->group.s : "", l->group.len);
	}
	l->out.oom |= l->group.oom;
	l->group.len = 0;
	if (l->group.s)
		l->group.s[0] = '\0';
	l->group_used = false;
}

static void put_group(struct line *l, const char *s, size_t n)
{
	put(&l->group, s, n);
	l->group_used = true;
}

/* One value into the group: quoted unless told not to. */
static void put_value(struct line *l, const char *v, bool quote_arg)
{
	if (quote_arg) {
		struct buf q = {0};
		put_quoted(&q, v);
		l->out.oom |= q.oom;
		put_group(l, q.s ? q.s : "", q.len);
		free(q.s);
	} else {
		put_group(l, v, strlen(v));
	}
}

static void put_rpl(struct line *l, enum mg_rpl rpl, long pos, const struct mg_compose_job *job,
                    bool quote_arg)
{
	char num[24];

	if (rpl == MG_RPL_SEQ || rpl == MG_RPL_SLOT) {
		snprintf(num, sizeof(num), "%lu", rpl == MG_RPL_SEQ ? job->seq : (unsigned long)job->slot);
		put_value(l, num, quote_arg);
		return;
	}
	if (pos != 0) {
		/* Perl's $args[N-1], or $args[n+N] from the end, where an index
		 * still negative counts from the end once more. */
		long n = (long)job->nargs, i = pos > 0 ? pos - 1 : n + pos;
		if (i < 0)
			i += n;
		if (i < 0 || i >= n) {
			put_group(l, "", 0);
			return;
		}
		char *v = mg_rpl_apply(rpl, job->args[i]);
		if (!v)
			l->out.oom = true;
		else
			put_value(l, v, quote_arg);
		free(v);
		return;
	}
	for (size_t k = 0; k < job->nargs; k++) {
		char *v = mg_rpl_apply(rpl, job->args[k]);
		if (k)
			end_group(l);
		if (!v)
			l->out.oom = true;
		else
			put_value(l, v, quote_arg);
		free(v);
	}
}

/* parallel leaves the arguments unquoted when the command's first word
 * (up to a blank or "=") holds a replacement string: they name the program. */
static bool rpl_names_program(char *const *words)
{
	size_t len;
	enum mg_rpl rpl;
	long pos;

	if (!words[0])
		return true; /* no command: {} */
	const char *end = words[0] + strcspn(words[0], " \t\n=");
	for (const char *p = words[0]; (p = find_rpl(p, &len, &rpl, &pos)); p += len)
		if (p < end)
			return true;
	return false;
}

char *mg_compose(char *const *words, bool quote, const struct mg_compose_job *job)
{
	struct line l = {.quote = quote};
	bool quote_arg = !quote && !rpl_names_program(words), any = false;
	enum mg_rpl rpl;
	size_t len;
	long pos;

	for (size_t w = 0; words[w]; w++) {
		const char *p = words[w], *at;
		if (w)
			end_group(&l);
		if (!*p)
			put_group(&l, "", 0);
		while ((at = find_rpl(p, &len, &rpl, &pos))) {
			if (at > p)
				put_group(&l, p, (size_t)(at - p));
			put_rpl(&l, rpl, pos, job, quote_arg);
			any = true;
			p = at + len;
		}
		if (*p)
			put_group(&l, p, strlen(p));
	}
	/* No replacement string: the arguments are appended, as {} would be. */
	if (!any) {
		if (words[0])
			end_group(&l);
		put_rpl(&l, MG_RPL_ARG, 0, job, quote_arg);
	}
	end_group(&l);
	free(l.group.s);
	return take(&l.out);
}

char *mg_compose_tag(const char *const *args, size_t nargs)
{
	struct buf b = {0};

	for (size_t k = 0; k < nargs; k++) {
		if (k)
			put(&b, " ", 1);
		puts_(&b, args[k]);
	}
	return take(&b);
}

const char *mg_compose_shell(char *const envp[])
{
	static const char *const bourne[] = {"sh",   "bash", "dash", "ksh",  "ksh93",
	                                     "mksh", "zsh",  "ash",  "yash", "posh"};
	const char *sh = mg_env_get(envp, "PARALLEL_SHELL"), *base;

	if (sh && *sh)
		return sh;
	sh = mg_env_get(envp, "SHELL");
	if (sh && *sh == '/') {
		base = strrchr(sh, '/') + 1;
		for (size_t i = 0; i < sizeof(bourne) / sizeof(*bourne); i++)
			if (strcmp(base, bourne[i]) == 0)
				return sh;
	}
	return "/bin/sh";
}

const char *mg_compose_program(char *const *words, char *buf, size_t size)
{
	static const char *const shell_words[] = {
	        "!",      "{",      "}",        "[[",      "((",      "case",    "coproc",   "do",
	        "done",   "elif",   "else",     "esac",    "fi",      "for",     "function", "if",
	        "in",     "select", "then",     "time",    "until",   "while",   ".",        ":",
	        "alias",  "bg",     "break",    "builtin", "cd",      "command", "continue", "declare",
	        "eval",   "exec",   "exit",     "export",  "fg",      "getopts", "hash",     "jobs",
	        "let",    "local",  "readonly", "read",    "return",  "set",     "shift",    "shopt",
	        "source", "times",  "trap",     "type",    "typeset", "ulimit",  "umask",    "unalias",
	        "unset",  "wait",
	};
	const char *w = words[0];
	size_t len;

	if (!w)
		return NULL;
	len = strcspn(w, " \t\n");
	if (len == 0 || len >= size)
		return NULL;
	memcpy(buf, w, len);
	buf[len] = '\0';
	for (const char *p = buf; *p; p++)
		if (!isascii((unsigned char)*p) || !(isalnum((unsigned char)*p) || strchr("-_.+/,@%", *p)))
			return NULL;
	for (size_t i = 0; i < sizeof(shell_words) / sizeof(*shell_words); i++)
		if (strcmp(buf, shell_words[i]) == 0)
			return NULL;
	return buf;
}

char **mg_compose_split(char *const *words)
{
	static const char blanks[] = " \t\n";
	size_t n = 0, k = 0;
	char **v;

	if (!words[0] || words[1] || !strpbrk(words[0], blanks))
		return NULL;
	for (const char *p = words[0] + strspn(words[0], blanks); *p; p += strspn(p, blanks)) {
		n++;
		p += strcspn(p, blanks);
	}
	if (!(v = calloc(n + 1, sizeof(*v))))
		return NULL;
	for (const char *p = words[0] + strspn(words[0], blanks); *p; p += strspn(p, blanks)) {
		size_t len = strcspn(p, blanks);
		if (!(v[k++] = strndup(p, len))) {
			for (size_t i = 0; i + 1 < k; i++)
				free(v[i]);
			free(v);
			return NULL;
		}
		p += len;
	}
	return v;
}
