/* libFuzzer target: --tasks files (mg_tasklist_parse). */
#include <errno.h>

#include "fuzz.h"
#include "farm/tasklist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *copy;
	struct mg_tasklist list;
	size_t line = 0;
	int r;

	if (!text)
		return 0;
	copy = strdup(text); /* the parser takes text over and splits it */
	if (!copy) {
		free(text);
		return 0;
	}
	r = mg_tasklist_parse(text, &list, &line);
	check(r == 0 || r == -ENODATA || r == -EMSGSIZE || r == -E2BIG || r == -ENOMEM,
	      "mg_tasklist_parse errors", copy);
	if (r == 0) {
		check(list.count > 0 && list.count <= MG_TASKLIST_MAX_TASKS, "a list holds 1 to max tasks",
		      copy);
		for (size_t i = 0; i < list.count; i++) {
			const char *t = list.lines[i];
			size_t len = strlen(t);
			check(t >= list.text && t + len <= list.text + strlen(copy),
			      "a task points into the text", copy);
			check(t[strspn(t, " \t")] != '\0', "no task is blank", copy);
			check(!strchr(t, '\n'), "a task is one line", copy);
			/* The same bytes in the copy: a whole line, less one \r before its end. */
			size_t at = (size_t)(t - list.text), end = at + len;
			check(at == 0 || copy[at - 1] == '\n', "a task starts a line", copy);
			check(copy[end] == '\0' || copy[end] == '\n' ||
			              (copy[end] == '\r' && (copy[end + 1] == '\0' || copy[end + 1] == '\n')),
			      "a task ends its line, less one \\r", copy);
			check(len <= MG_TASKLIST_MAX_LINE, "a task is at most a line's bound", copy);
			check(i == 0 || t > list.lines[i - 1], "tasks keep their order", copy);
		}
		mg_tasklist_done(&list);
	} else if (r == -EMSGSIZE) {
		check(line > 0, "an overlong line is named", copy);
	}
	free(copy);
	return 0;
}
