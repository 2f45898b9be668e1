/* libFuzzer target: /proc/<pid>/stat lines (mg_proc_stat_parse and
 * mg_proc_stat_start_time_parse). */
#include <errno.h>

#include "fuzz.h"
#include "memguard/procstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct mg_proc p;
	uint64_t start;
	int r;

	if (!text)
		return 0;
	r = mg_proc_stat_parse(text, &p);
	check(r == 0 || r == -EBADMSG, "mg_proc_stat_parse fails with -EBADMSG", text);
	if (r == 0) {
		check(p.pid > 0 && p.ppid >= 0 && p.pgrp >= 0, "pids are in range", text);
		check(memchr(p.comm, '\0', sizeof(p.comm)) != NULL, "comm is terminated", text);
		check(strchr(text, '(') && strrchr(text, ')'), "comm sits between parentheses", text);
	}
	r = mg_proc_stat_start_time_parse(text, &start);
	check(r == 0 || r == -EBADMSG, "mg_proc_stat_start_time_parse fails with -EBADMSG", text);
	if (r == 0)
		check(strrchr(text, ')') != NULL, "a start time follows comm", text);
	free(text);
	return 0;
}
