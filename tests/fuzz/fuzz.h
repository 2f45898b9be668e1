/* What every libFuzzer target here shares: the entry point's prototype, a
 * NUL-terminated copy of the input, and check(), whose abort() marks a
 * broken property as a finding. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void check(int ok, const char *what, const char *text)
{
	if (!ok) {
		fprintf(stderr, "property violated: %s (input \"%.200s\")\n", what, text);
		abort();
	}
}

/* The input as a C string, or NULL when out of memory (the run then skips
 * it). Text parsers see everything up to the first NUL the input holds. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
	}
	return text;
}
