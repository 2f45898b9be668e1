/* libFuzzer target: the Prometheus text writer (mg_metrics_*). The input,
 * up to its first NUL, is a label value and a help text. */
#include <errno.h>

#include "fuzz.h"
#include "memguard/metrics.h"

/* Undoes the label value escapes from s (just after the opening quote) up to
 * the closing quote into out; returns where it stopped (the quote), or NULL
 * when an escape is not one of \\ \" \n or a raw newline shows. */
static const char *unescape(const char *s, char *out)
{
	for (; *s && *s != '"'; s++) {
		if (*s == '\n')
			return NULL;
		if (*s != '\\') {
			*out++ = *s;
			continue;
		}
		s++;
		if (*s != '\\' && *s != '"' && *s != 'n')
			return NULL;
		*out++ = *s == 'n' ? '\n' : *s;
	}
	*out = '\0';
	return *s == '"' ? s : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct mg_metrics m = MG_METRICS_INIT;

	if (!text)
		return 0;
	const char *labels[] = {"v", text, NULL};
	mg_metrics_family(&m, "x", "gauge", text);
	mg_metrics_sample_u64(&m, "x", labels, 7);
	check(m.error == 0 || m.error == -ENOMEM, "any text is a valid label value and help", text);
	if (m.error == 0) {
		/* Three lines: HELP and TYPE, then the sample, each ending in the only newlines. */
		size_t lines = 0;
		for (const char *p = m.buf; *p; p++)
			lines += *p == '\n';
		check(lines == 3 && m.buf[m.len - 1] == '\n', "three whole lines", text);
		const char *sample = strstr(m.buf, "\nx{v=\"");
		check(sample != NULL, "the sample line is there", text);
		char *back = malloc(strlen(text) + 1);
		if (back) {
			const char *end = unescape(sample + strlen("\nx{v=\""), back);
			check(end != NULL, "only \\\\ \\\" \\n escapes, no raw newline", text);
			check(strcmp(back, text) == 0, "the label value reads back as it was", text);
			check(strcmp(end, "\"} 7\n") == 0, "the sample ends after the value", text);
			free(back);
		}
	}
	mg_metrics_done(&m);
	free(text);
	return 0;
}
