/* --tasks FILE: one task per non-blank line. */
#pragma once

#include <stddef.h>

/* Bounds, so that --tasks /dev/zero or a runaway generator cannot hang the
 * launcher or exhaust memory: the file, one line (a task's parameter; the
 * kernel takes at most 128 KiB per argument anyway), and the tasks, as -n. */
#define MG_TASKLIST_MAX_BYTES (64u << 20)
#define MG_TASKLIST_MAX_LINE (1u << 20)
#define MG_TASKLIST_MAX_TASKS (1u << 20)

struct mg_tasklist {
	char *text; /* the file, split in place */
	char **lines;
	size_t count;
};

/* Parses text (taken over by the list) into lines; blank lines are skipped
 * and a trailing \r is dropped. -ENODATA when no line remains, -EMSGSIZE
 * when a line is longer than MG_TASKLIST_MAX_LINE bytes (ret_line, if
 * given, gets its number from 1), -E2BIG for more than MG_TASKLIST_MAX_TASKS
 * tasks. */
int mg_tasklist_parse(char *text, struct mg_tasklist *ret, size_t *ret_line);

/* Reads and parses path. On error, a one-line reason in err. */
int mg_tasklist_load(const char *path, struct mg_tasklist *ret, char *err, size_t errsize);

void mg_tasklist_done(struct mg_tasklist *list);
