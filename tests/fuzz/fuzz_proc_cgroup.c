/* libFuzzer target: /proc/<pid>/cgroup, the v2 line (mg_proc_cgroup_parse)
 * and a v1 controller's line (mg_proc_cgroup_v1_parse). */
#include "fuzz.h"
#include "memguard/cgroup.h"
#include "memguard/util.h"

static void fuzz_v2(const char *text)
{
	char *path = NULL;

	if (mg_proc_cgroup_parse(text, &path) == 0) {
		check(path && path[0] == '/', "a cgroup v2 path is absolute", text);
		check(!strchr(path, '\n'), "a cgroup v2 path is one line", text);
		check(strstr(text, path) != NULL, "a cgroup v2 path is a piece of the text", text);
		free(path);
	}
}

static void fuzz_v1(const char *text)
{
	static const char *const controllers[] = {"memory", "cpu", "name=systemd", ""};

	for (size_t i = 0; i < MG_ARRAY_SIZE(controllers); i++) {
		char *path = NULL;

		if (mg_proc_cgroup_v1_parse(text, controllers[i], &path) == 0) {
			check(path != NULL, "a found v1 path is set", text);
			check(!strchr(path, '\n'), "a cgroup v1 path is one line", text);
			check(strstr(text, path) != NULL, "a cgroup v1 path is a piece of the text", text);
			check(strstr(text, controllers[i]) != NULL, "the controller is named in the text",
			      text);
			free(path);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);

	if (!text)
		return 0;
	fuzz_v2(text);
	fuzz_v1(text);
	free(text);
	return 0;
}
