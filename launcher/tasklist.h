/* --tasks FILE: one task per non-blank line. */
#pragma once

#include <stddef.h>

struct mg_tasklist {
	char *text; /* the file, split in place */
	char **lines;
	size_t count;
};

/* Parses text (taken over by the list) into lines; blank lines are skipped
 * and a trailing \r is dropped. -ENODATA when no line remains. */
int mg_tasklist_parse(char *text, struct mg_tasklist *ret);

/* Reads and parses path. On error, a one-line reason in err. */
int mg_tasklist_load(const char *path, struct mg_tasklist *ret, char *err, size_t errsize);

void mg_tasklist_done(struct mg_tasklist *list);
