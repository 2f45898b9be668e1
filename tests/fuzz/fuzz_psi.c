/* libFuzzer target: pressure files (mg_psi_parse). */
#include "fuzz.h"
#include "memguard/psi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct mg_psi psi;

	if (!text)
		return 0;
	if (mg_psi_parse(text, &psi) == 0) {
		check(psi.some.present, "a parsed pressure file has a some line", text);
		check(psi.some.avg10 <= 10000 && psi.some.avg60 <= 10000 && psi.some.avg300 <= 10000,
		      "some averages at most 100.00", text);
		check(psi.full.avg10 <= 10000 && psi.full.avg60 <= 10000 && psi.full.avg300 <= 10000,
		      "full averages at most 100.00", text);
		check(strstr(text, "some") != NULL, "a some line needs the word some", text);
		check(!psi.full.present || strstr(text, "full") != NULL, "a full line needs the word full",
		      text);
	}
	free(text);
	return 0;
}
