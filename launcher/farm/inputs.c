/* parallel's input sources and the jobs they make (inputs.h). */
#include "farm/inputs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memguard/log.h"
#include "memguard/util.h"

enum mg_input_sep mg_input_sep(const char *w)
{
	if (strcmp(w, ":::") == 0)
		return MG_SEP_ARGS;
	if (strcmp(w, "::::") == 0)
		return MG_SEP_FILES;
	if (strcmp(w, ":::+") == 0)
		return MG_SEP_ARGS_LINKED;
	if (strcmp(w, "::::+") == 0)
		return MG_SEP_FILES_LINKED;
	return MG_SEP_NONE;
}

int mg_inputs_add(struct mg_inputs *in, char **values, size_t n, bool linked, const char *name)
{
	struct mg_source *more;
	char *copy;

	if (in->nsrc == MG_INPUT_MAX_SOURCES)
		return -E2BIG;
	more = realloc(in->src, (in->nsrc + 1) * sizeof(*more));
	copy = strdup(name);
	if (!more || !copy) {
		free(copy);
		if (more)
			in->src = more;
		return -ENOMEM;
	}
	in->src = more;
	/* The first source links to nothing: :::+ there is :::, as in parallel. */
	in->src[in->nsrc] =
	        (struct mg_source){.values = values, .n = n, .linked = linked && in->nsrc, .name = copy};
	in->nsrc++;
	return 0;
}

/* Keeps a heap pointer (a text, or a values array) until mg_inputs_done. */
static int keep(struct mg_inputs *in, void *p)
{
	char **more = realloc(in->texts, (in->ntexts + 1) * sizeof(*more));

	if (!more)
		return -ENOMEM;
	in->texts = more;
	in->texts[in->ntexts++] = p;
	return 0;
}

/* Splits s in place at each "\n" into a heap array; keep_last_empty: an
 * empty piece after the last "\n" counts (a ::: word "a\n" is "a" and ""),
 * else it ends the last line (a file). */
static int split_lines(char *s, size_t len, bool keep_last_empty, char ***ret, size_t *ret_n,
                       size_t *ret_line)
{
	size_t n = 0, cap = 0;
	char **v = NULL;

	for (char *p = s, *nl; p <= s + len; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(s + len - p));
		if (!nl && p == s + len && !keep_last_empty)
			break;
		if (!nl)
			nl = s + len;
		if ((size_t)(nl - p) > MG_INPUT_MAX_LINE) {
			free(v);
			if (ret_line)
				*ret_line = n + 1;
			return -EMSGSIZE;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			char **bigger = realloc(v, cap * sizeof(*v));
			if (!bigger) {
				free(v);
				return -ENOMEM;
			}
			v = bigger;
		}
		*nl = '\0';
		v[n++] = p;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int mg_inputs_add_text(struct mg_inputs *in, char *text, size_t len, bool linked, const char *name,
                       size_t *ret_line)
{
	char **v = NULL;
	size_t n = 0;
	int r;

	if (strlen(text) != len) {
		free(text);
		return -EINVAL;
	}
	if ((r = keep(in, text)) < 0) {
		free(text);
		return r;
	}
	if ((r = split_lines(text, len, false, &v, &n, ret_line)) < 0)
		return r;
	if ((r = keep(in, v)) < 0) {
		free(v);
		return r;
	}
	return mg_inputs_add(in, v, n, linked, name);
}

int mg_inputs_add_words(struct mg_inputs *in, char **words, size_t n, bool linked)
{
	size_t total = 0, k = 0;
	char **v;
	int r;

	for (size_t i = 0; i < n; i++) {
		total++;
		for (const char *p = strchr(words[i], '\n'); p; p = strchr(p + 1, '\n'))
			total++;
	}
	if (total == n)
		return mg_inputs_add(in, words, n, linked, ":::");
	/* A word with newlines is one value per line: split copies. */
	if (!(v = calloc(total, sizeof(*v))) || keep(in, v) < 0) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		char *copy, **pieces;
		size_t np;
		if (!strchr(words[i], '\n')) {
			v[k++] = words[i];
			continue;
		}
		if (!(copy = strdup(words[i])) || keep(in, copy) < 0) {
			free(copy);
			return -ENOMEM;
		}
		if ((r = split_lines(copy, strlen(copy), true, &pieces, &np, NULL)) < 0)
			return r;
		memcpy(v + k, pieces, np * sizeof(*pieces));
		k += np;
		free(pieces);
	}
	return mg_inputs_add(in, v, k, linked, ":::");
}

/* Reads one file (or standard input) as a source. */
static int load_file(struct mg_inputs *in, const char *path, bool linked, char *err, size_t errsize)
{
	bool is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? "standard input" : path;
	char *text = NULL;
	ssize_t len;
	size_t line = 0;
	int r;

	if (is_stdin && in->stdin_text) {
		text = strdup(in->stdin_text);
		len = text ? (ssize_t)strlen(text) : -ENOMEM;
	} else {
		if (is_stdin && isatty(STDIN_FILENO))
			log_notice("reading the arguments from the terminal: end them with Ctrl-D");
		len = is_stdin ? mg_read_fd_max(STDIN_FILENO, MG_INPUT_MAX_BYTES, &text)
		               : mg_read_file_max(path, MG_INPUT_MAX_BYTES, &text);
		if (is_stdin && len >= 0 && !(in->stdin_text = strdup(text)))
			len = -ENOMEM;
	}
	if (len == -EFBIG) {
		snprintf(err, errsize, "input %s is larger than 64 MiB", name);
		return (int)len;
	}
	if (len < 0) {
		free(text);
		snprintf(err, errsize, "cannot read the input %s: %s", name, strerror((int)-len));
		return (int)len;
	}
	r = mg_inputs_add_text(in, text, (size_t)len, linked, name, &line);
	if (r == -EINVAL)
		snprintf(err, errsize, "input %s holds a NUL byte: not a text file", name);
	else if (r == -EMSGSIZE)
		snprintf(err, errsize, "input %s: line %zu is longer than 1 MiB", name, line);
	else if (r == -E2BIG)
		snprintf(err, errsize, "more than %u input sources", MG_INPUT_MAX_SOURCES);
	else if (r < 0)
		snprintf(err, errsize, "input %s: %s", name, strerror(-r));
	return r;
}

int mg_inputs_load(struct mg_inputs *in, const char *const *arg_files, size_t narg_files, const char *first,
                   char **words, bool use_stdin, char *err, size_t errsize)
{
	enum mg_input_sep sep = first ? mg_input_sep(first) : MG_SEP_NONE;
	int r = 0;

	for (size_t i = 0; i < narg_files && r >= 0; i++)
		r = load_file(in, arg_files[i], false, err, errsize);
	while (r >= 0 && sep != MG_SEP_NONE) {
		size_t n = 0;
		bool linked = sep == MG_SEP_ARGS_LINKED || sep == MG_SEP_FILES_LINKED;
		while (words[n] && mg_input_sep(words[n]) == MG_SEP_NONE)
			n++;
		if (sep == MG_SEP_ARGS || sep == MG_SEP_ARGS_LINKED)
			r = mg_inputs_add_words(in, words, n, linked);
		else
			for (size_t i = 0; i < n && r >= 0; i++)
				r = load_file(in, words[i], linked, err, errsize);
		if (r == -ENOMEM)
			snprintf(err, errsize, "out of memory reading the inputs");
		else if (r == -E2BIG)
			snprintf(err, errsize, "more than %u input sources", MG_INPUT_MAX_SOURCES);
		sep = words[n] ? mg_input_sep(words[n]) : MG_SEP_NONE;
		words += n + (words[n] != NULL);
	}
	if (r >= 0 && use_stdin)
		r = load_file(in, "-", false, err, errsize);
	if (r >= 0 && mg_inputs_count(in) == -E2BIG) {
		snprintf(err, errsize, "the inputs make more than %u jobs", MG_INPUT_MAX_JOBS);
		r = -E2BIG;
	}
	return r;
}

/* A separator glibc's regcomp compiles in little time and memory: it copies
 * the expression of a bounded repetition once per count, so {n,m} nested or
 * repeated grows without end (a fuzzed "a+++...{1}" took 2 GiB). Perl itself
 * rejects a quantifier after a quantifier. NULL, or why not. */
static const char *colsep_untamed(const char *re)
{
	bool bracket = false, quantified = false;
	unsigned bounded = 0;

	if (strlen(re) > 256)
		return "longer than 256 characters";
	for (const char *p = re; *p; p++) {
		bool quantifier = false;
		if (bracket) {
			bracket = *p != ']';
			continue;
		}
		if (*p == '\\' && p[1]) {
			p++;
		} else if (*p == '[') {
			bracket = true;
			if (p[1] == '^')
				p++;
			if (p[1] == ']')
				p++;
		} else if (*p == '*' || *p == '+' || *p == '?') {
			quantifier = true;
		} else if (*p == '{' && p[1] >= '0' && p[1] <= '9') {
			char *end;
			unsigned long lo = strtoul(p + 1, &end, 10), hi = lo;
			if (*end == ',')
				hi = end[1] == '}' ? 33 : strtoul(end + 1, &end, 10);
			if (*end == ',')
				end++;
			if (*end != '}')
				continue;
			if (lo > 32 || hi > 32 || ++bounded > 2)
				return "at most two bounded repetitions, of at most 32";
			quantifier = true;
			p = end;
		}
		if (quantifier && quantified)
			return "a quantifier after a quantifier";
		quantified = quantifier;
	}
	return NULL;
}

int mg_inputs_set_colsep(struct mg_inputs *in, const char *re, char *err, size_t errsize)
{
	size_t len = strlen(re);
	const char *untamed = colsep_untamed(re);
	_cleanup_free_ char *ere = NULL;
	char *w;
	bool bracket = false;
	int r;

	if (untamed) {
		snprintf(err, errsize, "invalid --colsep \"%.64s\": %s", re, untamed);
		return -EINVAL;
	}
	if (!(ere = malloc(len * 16 + 1)))
		return -ENOMEM;
	w = ere;
	for (const char *p = re; *p; p++) {
		const char *add = NULL;
		char one[3] = {0};
		if (*p == '[' && !bracket) {
			bracket = true;
			*w++ = *p;
			if (p[1] == '^')
				*w++ = *++p;
			if (p[1] == ']')
				*w++ = *++p;
			continue;
		}
		if (*p == ']' && bracket) {
			bracket = false;
			*w++ = *p;
			continue;
		}
		if (*p != '\\' || !p[1]) {
			*w++ = *p;
			continue;
		}
		switch (*++p) {
		case 't':
			add = "\t";
			break;
		case 'n':
			add = "\n";
			break;
		case 'r':
			add = "\r";
			break;
		case 's':
			add = bracket ? "[:space:]" : "[[:space:]]";
			break;
		case 'S':
			add = bracket ? NULL : "[^[:space:]]";
			break;
		case 'd':
			add = bracket ? "0-9" : "[0-9]";
			break;
		case 'D':
			add = bracket ? NULL : "[^0-9]";
			break;
		case 'w':
			add = bracket ? "[:alnum:]_" : "[[:alnum:]_]";
			break;
		case 'W':
			add = bracket ? NULL : "[^[:alnum:]_]";
			break;
		default:
			/* An escaped character stands for itself. */
			if (!bracket && strchr(".[]()*+?{}|^$\\", *p))
				one[0] = '\\', one[1] = *p;
			else
				one[0] = *p;
			add = one;
			break;
		}
		if (!add) {
			snprintf(err, errsize, "invalid --colsep \"%s\": \\%c inside [...] is not supported",
			         re, *p);
			return -EINVAL;
		}
		w = stpcpy(w, add);
	}
	*w = '\0';
	if (in->has_colsep)
		regfree(&in->colsep);
	in->has_colsep = false;
	if (!*ere) {
		snprintf(err, errsize, "invalid --colsep \"\": expected a separator");
		return -EINVAL;
	}
	if ((r = regcomp(&in->colsep, ere, REG_EXTENDED)) != 0) {
		char why[128];
		regerror(r, &in->colsep, why, sizeof(why));
		regfree(&in->colsep);
		snprintf(err, errsize, "invalid --colsep \"%s\": %s", re, why);
		return -EINVAL;
	}
	/* A separator that matches nothing would split between characters. */
	regmatch_t m;
	if (regexec(&in->colsep, "", 1, &m, 0) == 0) {
		regfree(&in->colsep);
		snprintf(err, errsize, "invalid --colsep \"%s\": it matches the empty string", re);
		return -EINVAL;
	}
	in->has_colsep = true;
	return 0;
}

/* The length of the group of linked sources that starts at i, and where the next begins. */
static size_t group_at(const struct mg_inputs *in, size_t i, size_t *ret_next)
{
	size_t len = in->src[i].n ? in->src[i].n : 1, j = i + 1;

	for (; j < in->nsrc && in->src[j].linked; j++)
		if ((in->src[j].n ? in->src[j].n : 1) < len)
			len = in->src[j].n ? in->src[j].n : 1;
	*ret_next = j;
	return len;
}

long mg_inputs_count(const struct mg_inputs *in)
{
	size_t jobs = 1, next;
	bool any = false;

	for (size_t i = 0; i < in->nsrc; i++)
		any |= in->src[i].n > 0;
	if (!any)
		return 0;
	for (size_t i = 0; i < in->nsrc; i = next) {
		size_t len = group_at(in, i, &next);
		if (jobs > MG_INPUT_MAX_JOBS / len)
			return -E2BIG;
		jobs *= len;
	}
	return (long)jobs;
}

void mg_inputs_job(const struct mg_inputs *in, size_t k, const char **ret)
{
	size_t starts[MG_INPUT_MAX_SOURCES] = {0}, lens[MG_INPUT_MAX_SOURCES] = {0}, ngroups = 0, next;

	/* Mixed radix over the groups, the last varying fastest. */
	for (size_t i = 0; i < in->nsrc; i = next) {
		lens[ngroups] = group_at(in, i, &next);
		starts[ngroups++] = i;
	}
	for (size_t g = ngroups; g-- > 0;) {
		size_t idx = k % lens[g], end = g + 1 < ngroups ? starts[g + 1] : in->nsrc;
		k /= lens[g];
		for (size_t s = starts[g]; s < end; s++)
			ret[s] = in->src[s].n ? in->src[s].values[idx] : "";
	}
}

static char *trimmed(const char *s, size_t len)
{
	static const char blanks[] = " \t\n\r\f\v";

	while (len && strchr(blanks, *s))
		s++, len--;
	while (len && strchr(blanks, s[len - 1]))
		len--;
	return strndup(s, len);
}

static int push(char ***args, size_t *n, size_t *cap, char *s)
{
	if (!s)
		return -ENOMEM;
	if (*n == *cap) {
		size_t bigger_cap = *cap ? *cap * 2 : 8;
		char **bigger = realloc(*args, bigger_cap * sizeof(**args));
		if (!bigger) {
			free(s);
			return -ENOMEM;
		}
		*args = bigger;
		*cap = bigger_cap;
	}
	(*args)[(*n)++] = s;
	return 0;
}

/* Appends the columns of value (Perl's split with a limit of -1: empty
 * fields kept, a separator at the end gives one more) to *args, trimmed. */
static int split_columns(const struct mg_inputs *in, const char *value, char ***args, size_t *n, size_t *cap)
{
	const char *p = value;
	regmatch_t m;
	int r;

	for (;;) {
		bool found =
		        regexec(&in->colsep, p, 1, &m, p > value ? REG_NOTBOL : 0) == 0 && m.rm_eo > m.rm_so;
		size_t len = found ? (size_t)m.rm_so : strlen(p);
		if ((r = push(args, n, cap, trimmed(p, len))) < 0 || !found)
			return r;
		p += m.rm_eo;
	}
}

int mg_inputs_args(const struct mg_inputs *in, size_t k, char ***ret, size_t *ret_n)
{
	_cleanup_free_ const char **values = calloc(in->nsrc ? in->nsrc : 1, sizeof(*values));
	char **args = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	if (!values)
		return -ENOMEM;
	mg_inputs_job(in, k, values);
	for (size_t s = 0; s < in->nsrc && r >= 0; s++) {
		if (in->has_colsep && *values[s])
			r = split_columns(in, values[s], &args, &n, &cap);
		else
			r = push(&args, &n, &cap,
			         in->has_colsep ? trimmed(values[s], strlen(values[s])) : strdup(values[s]));
	}
	if (r < 0) {
		mg_inputs_args_free(args, n);
		return r;
	}
	*ret = args;
	*ret_n = n;
	return 0;
}

void mg_inputs_args_free(char **args, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(args[i]);
	free(args);
}

void mg_inputs_done(struct mg_inputs *in)
{
	for (size_t i = 0; i < in->nsrc; i++)
		free(in->src[i].name);
	free(in->src);
	for (size_t i = 0; i < in->ntexts; i++)
		free(in->texts[i]);
	free(in->texts);
	free(in->stdin_text);
	if (in->has_colsep)
		regfree(&in->colsep);
	*in = (struct mg_inputs){0};
}
