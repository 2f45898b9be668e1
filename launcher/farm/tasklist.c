/* Reading a --tasks file: one task per non-blank line. */
#include "farm/tasklist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memguard/util.h"

static bool blank(const char *s)
{
	return s[strspn(s, " \t")] == '\0';
}

int mg_tasklist_parse(char *text, struct mg_tasklist *ret, size_t *ret_line)
{
	size_t cap = 0, n = 0, lineno = 0;
	char **lines = NULL;
	int r = -ENODATA;

	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		size_t len = strlen(line);
		if (len && line[len - 1] == '\r')
			line[--len] = '\0';
		if (blank(line))
			continue;
		if (len > MG_TASKLIST_MAX_LINE) {
			if (ret_line)
				*ret_line = lineno;
			r = -EMSGSIZE;
			goto fail;
		}
		if (n == MG_TASKLIST_MAX_TASKS) {
			r = -E2BIG;
			goto fail;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **bigger = realloc(lines, cap * sizeof(*lines));
			if (!bigger) {
				free(lines);
				free(text);
				return -ENOMEM;
			}
			lines = bigger;
		}
		lines[n++] = line;
	}
	if (n == 0)
		goto fail;
	*ret = (struct mg_tasklist){.text = text, .lines = lines, .count = n};
	return 0;
fail:
	free(lines);
	free(text);
	return r;
}

int mg_tasklist_load(const char *path, struct mg_tasklist *ret, char *err, size_t errsize)
{
	char *text = NULL;
	ssize_t n = mg_read_file_max(path, MG_TASKLIST_MAX_BYTES, &text);
	size_t line = 0;
	int r;

	if (n == -EFBIG) {
		snprintf(err, errsize, "task file %s is larger than 64 MiB", path);
		return (int)n;
	}
	if (n < 0) {
		snprintf(err, errsize, "cannot read task file %s: %s", path, strerror((int)-n));
		return (int)n;
	}
	if (strlen(text) != (size_t)n) {
		free(text);
		snprintf(err, errsize, "task file %s holds a NUL byte: not a text file", path);
		return -EINVAL;
	}
	r = mg_tasklist_parse(text, ret, &line);
	if (r == -ENODATA)
		snprintf(err, errsize, "task file %s is empty: no task to run", path);
	else if (r == -EMSGSIZE)
		snprintf(err, errsize, "task file %s: line %zu is longer than 1 MiB", path, line);
	else if (r == -E2BIG)
		snprintf(err, errsize, "task file %s holds more than %u tasks", path, MG_TASKLIST_MAX_TASKS);
	else if (r < 0)
		snprintf(err, errsize, "task file %s: %s", path, strerror(-r));
	return r;
}

void mg_tasklist_done(struct mg_tasklist *list)
{
	free(list->lines);
	free(list->text);
	*list = (struct mg_tasklist){0};
}
