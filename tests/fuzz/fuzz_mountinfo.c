/* libFuzzer target: /proc/self/mountinfo (mg_mountinfo_parse_cgroups). */
#include "fuzz.h"
#include "memguard/locate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct mg_cgroup_mounts m;

	if (!text)
		return 0;
	if (mg_mountinfo_parse_cgroups(text, &m) == 0) {
		/* \012 may make a newline; unescaping never makes a path longer. */
		check(!m.v2 || strlen(m.v2) <= strlen(text), "a mount point is no longer than its line",
		      text);
		check(!m.v1_memory || strlen(m.v1_memory) <= strlen(text),
		      "a mount point is no longer than its line", text);
		check(!m.v2 || strstr(text, "cgroup2") != NULL, "a v2 mount needs a cgroup2 line", text);
		check(!m.v1_memory || strstr(text, "memory") != NULL, "a v1 mount needs the memory option",
		      text);
		check(m.v2 || !m.v2_is_root, "v2_is_root only with a v2 mount", text);
		mg_cgroup_mounts_done(&m);
		check(!m.v2 && !m.v1_memory, "mg_cgroup_mounts_done clears", text);
	}
	free(text);
	return 0;
}
