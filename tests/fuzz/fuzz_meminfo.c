/* libFuzzer target: /proc/meminfo (mg_meminfo_parse). */
#include "fuzz.h"
#include "memguard/meminfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct mg_meminfo m;

	if (!text)
		return 0;
	if (mg_meminfo_parse(text, &m) == 0) {
		check(m.mem_total % 1024 == 0 && m.mem_available % 1024 == 0 && m.swap_total % 1024 == 0 &&
		              m.swap_free % 1024 == 0 && m.shmem % 1024 == 0,
		      "meminfo values are whole kB", text);
		check(strstr(text, "MemTotal") && strstr(text, "MemAvailable"),
		      "MemTotal and MemAvailable are required", text);
	}
	free(text);
	return 0;
}
