/* libFuzzer target: flat-keyed files (mg_keyed_u64); the input's first line
 * names the key to look up in the rest. */
#include <errno.h>

#include "fuzz.h"
#include "memguard/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	const char *nl;
	char key[64];
	uint64_t v = 0, u = 0;
	int r;

	if (!text)
		return 0;
	nl = strchr(text, '\n');
	if (!nl || (size_t)(nl - text) >= sizeof(key)) {
		free(text);
		return 0;
	}
	memcpy(key, text, (size_t)(nl - text));
	key[nl - text] = '\0';
	r = mg_keyed_u64(nl + 1, key, &v);
	check(r == 0 || r == -ENOENT || r == -EBADMSG, "mg_keyed_u64 errors", text);
	if (r == 0) {
		char digits[24];
		snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
		check(strstr(nl + 1, digits) != NULL, "the value's digits are in the text", text);
		check(mg_parse_u64(digits, &u) == 0 && u == v, "mg_parse_u64 reads what it printed", text);
	}
	free(text);
	return 0;
}
