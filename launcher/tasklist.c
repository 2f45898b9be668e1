#include "tasklist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memguard/util.h"

static bool blank(const char *s)
{
	return s[strspn(s, " \t")] == '\0';
}

int mg_tasklist_parse(char *text, struct mg_tasklist *ret)
{
	size_t cap = 0, n = 0;
	char **lines = NULL;

	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		size_t len = strlen(line);
		if (len && line[len - 1] == '\r')
			line[len - 1] = '\0';
		if (blank(line))
			continue;
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
	if (n == 0) {
		free(lines);
		free(text);
		return -ENODATA;
	}
	*ret = (struct mg_tasklist){.text = text, .lines = lines, .count = n};
	return 0;
}

int mg_tasklist_load(const char *path, struct mg_tasklist *ret, char *err, size_t errsize)
{
	char *text = NULL;
	ssize_t n = mg_read_file(path, &text);
	int r;

	if (n < 0) {
		snprintf(err, errsize, "cannot read task file %s: %s", path, strerror((int)-n));
		return (int)n;
	}
	if (strlen(text) != (size_t)n) {
		free(text);
		snprintf(err, errsize, "task file %s holds a NUL byte: not a text file", path);
		return -EINVAL;
	}
	r = mg_tasklist_parse(text, ret);
	if (r == -ENODATA)
		snprintf(err, errsize, "task file %s is empty: no task to run", path);
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
