/* libFuzzer target: memory.events (mg_memory_events_parse), checked against
 * mg_keyed_u64 key by key. */
#include <errno.h>

#include "fuzz.h"
#include "memguard/cgroup.h"
#include "memguard/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct mg_memory_events ev;
	int r;

	if (!text)
		return 0;
	r = mg_memory_events_parse(text, &ev);
	check(r == 0 || r == -EBADMSG, "mg_memory_events_parse fails with -EBADMSG", text);
	if (r == 0) {
		const struct {
			const char *key;
			uint64_t value;
		} fields[] = {{"low", ev.low},
		              {"high", ev.high},
		              {"max", ev.max},
		              {"oom", ev.oom},
		              {"oom_kill", ev.oom_kill}};
		uint64_t v;

		for (size_t i = 0; i < MG_ARRAY_SIZE(fields); i++)
			check(mg_keyed_u64(text, fields[i].key, &v) == 0 && v == fields[i].value,
			      "each counter is what mg_keyed_u64 finds", text);
		r = mg_keyed_u64(text, "oom_group_kill", &v);
		check(r == 0 ? v == ev.oom_group_kill : r == -ENOENT && ev.oom_group_kill == 0,
		      "oom_group_kill is found or absent and 0", text);
	}
	free(text);
	return 0;
}
