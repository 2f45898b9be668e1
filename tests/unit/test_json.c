/* JSON strings from arbitrary bytes: mg_utf8_len, mg_json_escape and
 * mg_json_string. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tree.h"
#include "memguard/json.h"

static char *escaped(const char *s, bool quoted)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	if (quoted)
		mg_json_string(f, s);
	else
		mg_json_escape(f, s);
	assert_int_equal(fclose(f), 0);
	return text;
}

/* Every class of lead byte and the edges of each continuation range
 * (RFC 3629, table 3-7 of Unicode). */
static void utf8_len_table(void **state)
{
	static const struct {
		const char *bytes;
		size_t len;
	} cases[] = {
	        {"a", 1},
	        {"", 1}, /* the NUL itself is ASCII */
	        {"\x7f", 1},
	        {"\x80", 0}, /* a lone continuation byte */
	        {"\xbf", 0},
	        {"\xc0\x80", 0},         /* overlong NUL */
	        {"\xc1\xbf", 0},         /* overlong */
	        {"\xc2\x80", 2},         /* U+0080 */
	        {"\xdf\xbf", 2},         /* U+07FF */
	        {"\xc3\xa9", 2},         /* é */
	        {"\xc3", 0},             /* cut before the NUL */
	        {"\xc3\x41", 0},         /* not a continuation */
	        {"\xe0\x9f\xbf", 0},     /* overlong 3-byte */
	        {"\xe0\xa0\x80", 3},     /* U+0800 */
	        {"\xe2\x82\xac", 3},     /* € */
	        {"\xed\x9f\xbf", 3},     /* U+D7FF */
	        {"\xed\xa0\x80", 0},     /* U+D800, a surrogate */
	        {"\xed\xbf\xbf", 0},     /* U+DFFF */
	        {"\xee\x80\x80", 3},     /* U+E000 */
	        {"\xef\xbf\xbf", 3},     /* U+FFFF */
	        {"\xe6\x97", 0},         /* cut */
	        {"\xe6\x97\x41", 0},     /* third byte not a continuation */
	        {"\xf0\x8f\xbf\xbf", 0}, /* overlong 4-byte */
	        {"\xf0\x90\x80\x80", 4}, /* U+10000 */
	        {"\xf0\x9f\x98\x80", 4}, /* 😀 */
	        {"\xf4\x8f\xbf\xbf", 4}, /* U+10FFFF */
	        {"\xf4\x90\x80\x80", 0}, /* above U+10FFFF */
	        {"\xf5\x80\x80\x80", 0}, /* no such lead byte */
	        {"\xff", 0},
	        {"\xf0\x9f\x98", 0}, /* cut */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t got = mg_utf8_len(cases[i].bytes);
		if (got != cases[i].len) {
			char hex[64];
			ft_hex(cases[i].bytes, hex, sizeof(hex));
			print_error("case %zu (%s): %zu, want %zu\n", i, hex, got, cases[i].len);
		}
		assert_int_equal(got, cases[i].len);
	}
}

/* A cut sequence at the end of a buffer: the NUL stops the read (ASan would
 * see a read past it, the buffer being exactly as long as the string). */
static void utf8_len_never_reads_past_the_nul(void **state)
{
	static const char leads[] = {'\xc3', '\xe2', '\xf0'};

	for (size_t i = 0; i < sizeof(leads); i++) {
		char *p = malloc(2);
		assert_non_null(p);
		p[0] = leads[i];
		p[1] = '\0';
		assert_int_equal(mg_utf8_len(p), 0);
		free(p);
	}
	char *q = malloc(3);
	assert_non_null(q);
	memcpy(q, "\xf0\x9f", 3);
	assert_int_equal(mg_utf8_len(q), 0);
	free(q);
}

static void escape_table(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	        {"", ""},
	        {"plain text", "plain text"},
	        {"say \"hi\"", "say \\\"hi\\\""},
	        {"back\\slash", "back\\\\slash"},
	        {"tab\there\nnew\rline", "tab\\u0009here\\u000anew\\u000dline"},
	        {"\x01\x1f\x7f", "\\u0001\\u001f\x7f"}, /* DEL is allowed as it is */
	        {"/slash/", "/slash/"},
	        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
	        {"caf\xe9", "caf\\ufffd"},                   /* Latin-1 */
	        {"cut \xe6\x97", "cut \\ufffd\\ufffd"},      /* each stray byte on its own */
	        {"\xed\xa0\x80x", "\\ufffd\\ufffd\\ufffdx"}, /* a surrogate */
	        {"\xc0\xaf", "\\ufffd\\ufffd"},              /* overlong '/' */
	        {"\xff\xfe", "\\ufffd\\ufffd"},
	        {"\xe6\x97\"", "\\ufffd\\ufffd\\\""}, /* a quote right after a cut sequence */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = escaped(cases[i].in, false);
		if (strcmp(got, cases[i].out) != 0)
			print_error("case %zu: \"%s\", want \"%s\"\n", i, got, cases[i].out);
		assert_string_equal(got, cases[i].out);
		free(got);
	}
}

static void string_is_quoted(void **state)
{
	char *got = escaped("a\"b\xff", true);
	assert_string_equal(got, "\"a\\\"b\\ufffd\"");
	free(got);
	got = escaped("", true);
	assert_string_equal(got, "\"\"");
	free(got);
}

/* Every byte value after an ASCII prefix, checked by Python's strict JSON
 * and UTF-8 decoder: whatever the input, the output parses. */
static const char checker_py[] = "import json, sys\n"
                                 "data = open(sys.argv[1], 'rb').read().decode('utf-8')\n"
                                 "v = json.loads(data)\n"
                                 "assert isinstance(v, list) and len(v) == 256, len(v)\n"
                                 "print('ok')\n";

static void every_byte_gives_valid_json(void **state)
{
	struct fake_tree t;
	char path[PATH_MAX + 16], s[8];
	int status;

	ft_require_python();
	ft_new(&t);
	snprintf(path, sizeof(path), "%s/bytes.json", t.path);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputc('[', f);
	for (unsigned b = 0; b < 256; b++) {
		/* b = 0 is the empty string; others sit between text and a lead byte. */
		snprintf(s, sizeof(s), "x%c\xe2y", (char)b);
		if (b == 0)
			s[0] = '\0';
		fputs(b ? "," : "", f);
		mg_json_string(f, s);
	}
	fputs("]\n", f);
	assert_int_equal(fclose(f), 0);
	char *out = ft_run_python(checker_py, path, &status);
	ft_free(&t);
	if (status != 0)
		print_error("not valid JSON:\n%s\n", out);
	assert_int_equal(status, 0);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(utf8_len_table),
	        cmocka_unit_test(utf8_len_never_reads_past_the_nul),
	        cmocka_unit_test(escape_table),
	        cmocka_unit_test(string_is_quoted),
	        cmocka_unit_test(every_byte_gives_valid_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
