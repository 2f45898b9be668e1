/* libFuzzer target: memguard.conf (mg_config_parse_string). */
#include <errno.h>

#include "fuzz.h"
#include "memguard/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct mg_config cfg, before;
	char err[256];
	int r;

	if (!text)
		return 0;
	mg_config_defaults(&cfg);
	memcpy(&before, &cfg, sizeof(cfg));
	memset(err, 'Z', sizeof(err));
	r = mg_config_parse_string(&cfg, text, "fuzz.conf", err, sizeof(err));
	if (r < 0) {
		check(r == -EINVAL, "mg_config_parse_string fails with -EINVAL", text);
		check(memchr(err, '\0', sizeof(err)) != NULL, "error message terminated", text);
		check(strncmp(err, "fuzz.conf:", 10) == 0, "error message starts with origin:", text);
		check(memcmp(&cfg, &before, sizeof(cfg)) == 0, "a failed parse leaves the config unchanged",
		      text);
	} else {
		check(memchr(cfg.reserve, '\0', sizeof(cfg.reserve)) != NULL, "reserve terminated", text);
		check(memchr(cfg.parent, '\0', sizeof(cfg.parent)) != NULL, "parent terminated", text);
		check(cfg.parent[0] != '.' && !strchr(cfg.parent, '/'), "parent is a plain name", text);
		check(cfg.high_percent <= 100, "memory_high at most 100%", text);
	}
	free(text);
	return 0;
}
