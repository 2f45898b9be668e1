/* libFuzzer target: GNU parallel's command line (farm/compose.c,
 * farm/inputs.c, farm/halt.c). The input's first line is the command's
 * words, tab-separated (a first byte of 'q' means --quote); its second a
 * --colsep and a --halt, tab-separated; the rest an input file. Properties:
 * nothing crashes; the shell quote of any string reads back as the string
 * (a POSIX shell's single and double quotes, parsed here); a job's line
 * holds each argument quoted when the command has {} and quotes them. */
#include <errno.h>

#include "farm/compose.h"
#include "farm/halt.h"
#include "farm/inputs.h"
#include "fuzz.h"

/* s as a POSIX shell reads a word of '...', "..." (only \" \\ \$ \` escaped
 * inside, as mg_shell_quote never needs more) and plain characters. NULL
 * when it is not one such word. */
static char *unquote(const char *s)
{
	char *out = malloc(strlen(s) + 1), *w = out;

	if (!out)
		return NULL;
	while (*s) {
		if (*s == '\'') {
			const char *end = strchr(s + 1, '\'');
			if (!end)
				goto bad;
			memcpy(w, s + 1, (size_t)(end - s - 1));
			w += end - s - 1;
			s = end + 1;
		} else if (*s == '"') {
			for (s++; *s && *s != '"'; s++) {
				if (*s == '\\' && strchr("\"\\$`", s[1]))
					s++;
				*w++ = *s;
			}
			if (*s++ != '"')
				goto bad;
		} else {
			if (strchr(" \t\n$`\\|&;<>()*?[~#", *s))
				goto bad;
			*w++ = *s++;
		}
	}
	*w = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *words[16], *line2, *rest, *q;
	size_t nwords = 0;
	bool quote;

	if (!text)
		return 0;
	/* Any string quoted reads back as itself. */
	if ((q = mg_shell_quote(text))) {
		char *back = unquote(q);
		check(back && strcmp(back, text) == 0, "the shell quote reads back", text);
		free(back);
		free(q);
	}
	quote = text[0] == 'q';
	line2 = strchr(text, '\n');
	if (line2)
		*line2++ = '\0';
	rest = line2 ? strchr(line2, '\n') : NULL;
	if (rest)
		*rest++ = '\0';
	for (char *p = text + quote, *tab; p && nwords < 15; p = tab ? tab + 1 : NULL) {
		tab = strchr(p, '\t');
		if (tab)
			*tab = '\0';
		words[nwords++] = p;
	}
	words[nwords] = NULL;

	struct mg_inputs in = {0};
	char err[256], *colsep = line2, *halt = line2 ? strchr(line2, '\t') : NULL;
	if (halt)
		*halt++ = '\0';
	if (colsep && *colsep)
		(void)mg_inputs_set_colsep(&in, colsep, err, sizeof(err));
	struct mg_halt h;
	if (halt && mg_halt_parse(halt, &h, err, sizeof(err)) == 0 && h.when != MG_HALT_NEVER) {
		struct mg_halt_state st = {.started = 3};
		for (int i = 0; i < 3; i++)
			(void)mg_halt_job_ended(&h, &st, 3, i);
		int status = mg_halt_exit_status(&h, &st);
		check(status >= 0 && status <= 255, "an exit status", halt);
	}
	char *input = strdup(rest ? rest : "");
	int r = input ? mg_inputs_add_text(&in, input, strlen(input), false, "f", NULL) : -ENOMEM;
	long n = r == 0 ? mg_inputs_count(&in) : 0;
	check(n >= 0 || n == -E2BIG, "a count or too many", text);
	bool plain_rpl = !quote && nwords == 2 && strcmp(words[1], "{}") == 0 && !strchr(words[0], '{') &&
	                 !strpbrk(words[0], " \t\n=");
	for (long k = 0; k < n && k < 64; k++) {
		char **args;
		size_t nargs;
		if (mg_inputs_args(&in, (size_t)k, &args, &nargs) < 0)
			break;
		struct mg_compose_job job = {.args = (const char *const *)args,
		                             .nargs = nargs,
		                             .seq = (unsigned long)k + 1,
		                             .slot = 1};
		char *l = mg_compose(words, quote, &job);
		check(l != NULL, "a line", text);
		/* "cmd {}": cmd, a space, each argument quoted, spaces between. */
		if (plain_rpl && l) {
			check(strncmp(l, words[0], strlen(words[0])) == 0, "the line starts with the command",
			      text);
			for (size_t i = 0; i < nargs; i++) {
				char *qa = mg_shell_quote(args[i]);
				check(qa && strstr(l, qa), "each argument quoted in the line", text);
				free(qa);
			}
		}
		free(l);
		mg_inputs_args_free(args, nargs);
	}
	mg_inputs_done(&in);
	free(text);
	return 0;
}
