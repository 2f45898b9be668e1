/* libFuzzer target: sizes and durations (mg_size_parse with several bases,
 * mg_size_format round trips, mg_duration_parse). */
#include <errno.h>

#include "fuzz.h"
#include "memguard/units.h"
#include "memguard/util.h"

static void fuzz_size(const char *text)
{
	static const uint64_t bases[] = {0, 1, 1000, 16ull << 30, UINT64_MAX};

	for (size_t i = 0; i < MG_ARRAY_SIZE(bases); i++) {
		uint64_t v = 0, back = 0, again = 0;
		const char *why = NULL;
		char buf[MG_SIZE_STRLEN], buf2[MG_SIZE_STRLEN];
		int r = mg_size_parse(text, bases[i], &v, &why);

		if (r < 0) {
			check(r == -EINVAL || r == -ERANGE, "mg_size_parse error is -EINVAL or -ERANGE",
			      text);
			check(why != NULL, "mg_size_parse sets why on failure", text);
			continue;
		}
		if (bases[i] == 0)
			check(!strchr(text, '%'), "base 0 rejects percentages", text);
		/* What parses formats, and what formats parses back. */
		check(mg_size_format(v, buf) == buf, "mg_size_format returns its buffer", text);
		check(strlen(buf) < MG_SIZE_STRLEN, "mg_size_format fits", text);
		r = mg_size_parse(buf, 0, &back, &why);
		check(r == 0, "mg_size_format output parses", text);
		if (v == MG_SIZE_UNLIMITED)
			check(back == MG_SIZE_UNLIMITED, "max formats and parses as max", text);
		/* Formatting rounds once ("2.0EiB" for 2^61 - 1 reads as 2^61); after
		 * that the value is a fixed point. */
		mg_size_format(back, buf2);
		check(mg_size_parse(buf2, 0, &again, &why) == 0 && again == back,
		      "a formatted size parses to the same value twice", text);
	}
}

static void fuzz_duration(const char *text)
{
	uint64_t usec = 0;
	const char *why = NULL;
	int r = mg_duration_parse(text, &usec, &why);

	if (r < 0)
		check(why != NULL && (r == -EINVAL || r == -ERANGE), "mg_duration_parse error and why", text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);

	if (!text)
		return 0;
	fuzz_size(text);
	fuzz_duration(text);
	free(text);
	return 0;
}
