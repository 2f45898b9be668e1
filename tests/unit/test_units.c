/* Sizes and durations: mg_size_parse, mg_size_format, mg_duration_parse. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "memguard/units.h"
#include "memguard/util.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define TiB (1ull << 40)
#define PiB (1ull << 50)

struct size_ok {
	const char *text;
	uint64_t base;
	uint64_t bytes;
};

static void size_parse_accepts(void **state)
{
	static const struct size_ok cases[] = {
	        {"4G", 0, 4 * GiB},
	        {"4GiB", 0, 4 * GiB},
	        {"4gb", 0, 4 * GiB},
	        {"4g", 0, 4 * GiB},
	        {"4GB", 0, 4 * GiB},
	        {"4gib", 0, 4 * GiB},
	        {"512M", 0, 512 * MiB},
	        {"512MiB", 0, 512 * MiB},
	        {"1.5G", 0, 1610612736ull},
	        {"1.5GiB", 0, 1610612736ull},
	        {"0.5K", 0, 512},
	        {"2.25K", 0, 2304},
	        {".5G", 0, GiB / 2},
	        {"1K", 0, KiB},
	        {"1kB", 0, KiB},
	        {"3T", 0, 3 * TiB},
	        {"2P", 0, 2 * PiB},
	        {"16383P", 0, 16383 * PiB}, /* the largest whole number of PiB */
	        {"1536", 0, 1536},
	        {"1536B", 0, 1536},
	        {"0", 0, 0},
	        {"0G", 0, 0},
	        {"007", 0, 7},
	        {"1.5", 0, 1},                               /* fractions of a byte round down */
	        {"0.000000001G", 0, 1},                      /* nine decimals are allowed */
	        {"1.999999999G", 0, 2147483646ull},          /* 1.999999999 * 2^30, rounded down */
	        {"18446744073709551614", 0, UINT64_MAX - 1}, /* plain bytes up to the top */
	        {"80%", 1000, 800},
	        {"80%", 16 * GiB, 13743895347ull}, /* 0.8 * 16 GiB, rounded down */
	        {"12.5%", 1000, 125},
	        {"12.5%", 4 * GiB, 512 * MiB},
	        {"0%", 4 * GiB, 0},
	        {"100%", 4 * GiB, 4 * GiB},
	        {"100.0%", 4 * GiB, 4 * GiB},
	        {"100%", UINT64_MAX - 1, UINT64_MAX - 1}, /* no 64-bit overflow inside */
	        {"33.333333333%", 3, 0},                  /* 0.99999999999 bytes rounds down */
	        {"max", 0, MG_SIZE_UNLIMITED},
	        {"max", 4 * GiB, MG_SIZE_UNLIMITED},
	        {"infinity", 0, MG_SIZE_UNLIMITED},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		uint64_t bytes = 12345;
		const char *why = NULL;
		int r = mg_size_parse(cases[i].text, cases[i].base, &bytes, &why);

		if (r != 0 || bytes != cases[i].bytes)
			print_error("mg_size_parse(\"%s\", %" PRIu64 ") = %d, %" PRIu64 " (%s); want %" PRIu64
			            "\n",
			            cases[i].text, cases[i].base, r, bytes, why ? why : "-", cases[i].bytes);
		assert_int_equal(r, 0);
		assert_true(bytes == cases[i].bytes);
	}
}

struct size_bad {
	const char *text;
	uint64_t base;
	int error;
};

static void size_parse_rejects(void **state)
{
	static const struct size_bad cases[] = {
	        {"", 0, -EINVAL},
	        {"4XB", 0, -EINVAL},
	        {"4X", 0, -EINVAL},
	        {"4GG", 0, -EINVAL},
	        {"4GiBs", 0, -EINVAL},
	        {"4KiBB", 0, -EINVAL},
	        {"-1G", 0, -EINVAL},
	        {"-0", 0, -EINVAL},
	        {"+4G", 0, -EINVAL},
	        {"1.5.5G", 0, -EINVAL},
	        {"1..5G", 0, -EINVAL},
	        {"G", 0, -EINVAL},
	        {"GiB", 0, -EINVAL},
	        {".", 0, -EINVAL},
	        {".G", 0, -EINVAL},
	        {"%", 0, -EINVAL},
	        {"%", 1000, -EINVAL},
	        {"50%", 0, -EINVAL}, /* a percentage needs a base */
	        {"101%", 1000, -ERANGE},
	        {"100.01%", 1000, -ERANGE},
	        {"1000%", 1000, -ERANGE},
	        {"99999999999999999999%", 1000, -ERANGE},
	        {"50%%", 1000, -EINVAL},
	        {"50 %", 1000, -EINVAL},
	        {"99999999999P", 0, -ERANGE},
	        {"16384P", 0, -ERANGE}, /* exactly 2^64 */
	        {"18446744073709551616", 0, -ERANGE},
	        {"18446744073709551615", 0, -ERANGE}, /* 2^64-1 would be "max" */
	        {"18446744073709551615B", 0, -ERANGE},
	        {"100%", UINT64_MAX, -ERANGE},
	        {"99999999999999999999999999999999", 0, -ERANGE},
	        {" 4G", 0, -EINVAL},
	        {"4 G", 0, -EINVAL},
	        {"4G ", 0, -EINVAL},
	        {"4G\n", 0, -EINVAL},
	        {"\t4G", 0, -EINVAL},
	        {"1.0000000001G", 0, -EINVAL}, /* ten decimals: too many */
	        {"0.1234567890", 0, -EINVAL},
	        {"0x10", 0, -EINVAL},
	        {"1e9", 0, -EINVAL},
	        {"MAX", 0, -EINVAL},
	        {"max ", 0, -EINVAL},
	        {"maxG", 0, -EINVAL},
	        {"4,5G", 0, -EINVAL},
	        {"4Gi", 0, -EINVAL},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		uint64_t bytes = 12345;
		const char *why = NULL;
		int r = mg_size_parse(cases[i].text, cases[i].base, &bytes, &why);

		if (r != cases[i].error || !why)
			print_error("mg_size_parse(\"%s\", %" PRIu64 ") = %d (%s); want %d\n", cases[i].text,
			            cases[i].base, r, why ? why : "(why not set)", cases[i].error);
		assert_int_equal(r, cases[i].error);
		assert_non_null(why);
		assert_true(strlen(why) > 0);
		/* A NULL ret_why is allowed and gives the same answer. */
		assert_int_equal(mg_size_parse(cases[i].text, cases[i].base, &bytes, NULL), cases[i].error);
	}
}

static void size_parse_rejects_null(void **state)
{
	uint64_t bytes = 7;
	const char *why = NULL;

	assert_int_equal(mg_size_parse(NULL, 0, &bytes, &why), -EINVAL);
	assert_non_null(why);
	assert_true(bytes == 7);
}

static void size_parse_rejects_embedded_nul(void **state)
{
	/* The parser sees only up to the NUL: "4G" then garbage is just "4G". */
	static const char text[] = "4G\0XB";
	uint64_t bytes = 0;

	assert_int_equal(mg_size_parse(text, 0, &bytes, NULL), 0);
	assert_true(bytes == 4 * GiB);
}

struct size_fmt {
	uint64_t bytes;
	const char *text;
};

static void size_format_table(void **state)
{
	static const struct size_fmt cases[] = {
	        {0, "0B"},
	        {1, "1B"},
	        {512, "512B"},
	        {1023, "1023B"},
	        {KiB, "1KiB"},
	        {1025, "1.0KiB"}, /* 1.00098 KiB */
	        {1126, "1.1KiB"}, /* 1.0996 KiB rounds up */
	        {1536, "1.5KiB"},
	        {2304, "2.3KiB"},       /* 2.25 rounds half up */
	        {2252, "2.2KiB"},       /* 2.199 */
	        {MiB - 1, "1024.0KiB"}, /* rounding may reach 1024 of the unit */
	        {MiB, "1MiB"},
	        {512 * MiB, "512MiB"},
	        {4 * GiB, "4GiB"},
	        {1610612736ull, "1.5GiB"},
	        {3 * GiB + GiB / 10, "3.1GiB"},
	        {5 * TiB, "5TiB"},
	        {PiB, "1PiB"},
	        {1023 * PiB, "1023PiB"},
	        {MG_SIZE_UNLIMITED, "max"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		char buf[MG_SIZE_STRLEN];
		const char *s = mg_size_format(cases[i].bytes, buf);

		assert_ptr_equal(s, buf);
		if (strcmp(s, cases[i].text) != 0)
			print_error("mg_size_format(%" PRIu64 ")\n", cases[i].bytes);
		assert_string_equal(s, cases[i].text);
	}
}

static void size_format_fits_buffer(void **state)
{
	static const uint64_t values[] = {UINT64_MAX - 1, UINT64_MAX / 3, 1ull << 63, (1ull << 60) - 1};

	for (size_t i = 0; i < MG_ARRAY_SIZE(values); i++) {
		char buf[MG_SIZE_STRLEN + 8];

		memset(buf, 'Z', sizeof(buf));
		mg_size_format(values[i], buf);
		assert_true(strlen(buf) < MG_SIZE_STRLEN);
		assert_true(buf[MG_SIZE_STRLEN] == 'Z'); /* nothing written past the documented size */
	}
}

/* The largest power of 1024 not above v (the unit mg_size_format picks). */
static uint64_t unit_of(uint64_t v)
{
	uint64_t f = 1;

	while (f < (1ull << 60) && v / f >= 1024)
		f <<= 10;
	return f;
}

static uint64_t next_random(uint64_t *s)
{
	/* xorshift64: a fixed sequence, so a failure reproduces. */
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void check_roundtrip(uint64_t v)
{
	char buf[MG_SIZE_STRLEN];
	uint64_t back = 0, f = unit_of(v), diff;
	const char *why = NULL;
	int r;

	mg_size_format(v, buf);
	r = mg_size_parse(buf, 0, &back, &why);
	if (r != 0)
		print_error("format(%" PRIu64 ") = \"%s\" does not parse: %s\n", v, buf, why ? why : "?");
	assert_int_equal(r, 0);
	diff = back > v ? back - v : v - back;
	/* One decimal rounded half up is off by at most 1/20 of the unit, and
	 * parsing rounds the fraction down by less than one byte more. */
	if (diff > f / 20 + 1)
		print_error("format(%" PRIu64 ") = \"%s\" parses back as %" PRIu64 "\n", v, buf, back);
	assert_true(diff <= f / 20 + 1);
	if (v % f == 0)
		assert_true(back == v); /* exact multiples are exact */
}

static void size_format_parse_roundtrip(void **state)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	/* Every power of two and its neighbours below 1 EiB. */
	for (unsigned shift = 0; shift < 60; shift++) {
		uint64_t p = 1ull << shift;
		check_roundtrip(p);
		check_roundtrip(p - 1);
		check_roundtrip(p + 1);
		check_roundtrip(p + p / 2);
	}
	/* Random values of every magnitude below 1 EiB. */
	for (int i = 0; i < 20000; i++) {
		uint64_t v = next_random(&seed) >> (4 + (unsigned)(i % 60));
		check_roundtrip(v);
	}
}

/* mg_size_format() promises output that mg_size_parse() reads back: from
 * 1 EiB on too, where it prints an "EiB" unit. */
static void size_format_parse_roundtrip_exbibytes(void **state)
{
	check_roundtrip(1ull << 60);
	check_roundtrip(5ull << 60);
	check_roundtrip((5ull << 60) + (1ull << 59));
	check_roundtrip(9223372036854771712ull); /* cgroup v1's "no limit" */
	check_roundtrip(15ull << 60);
}

/* The very top of the range: rounding to one decimal must not print a value
 * the parser rejects as too large ("16.0EiB" is 2^64). */
static void size_format_parse_roundtrip_top_of_range(void **state)
{
	check_roundtrip((16ull << 60) - (1ull << 55)); /* 15.97 EiB */
	check_roundtrip(UINT64_MAX - 1);
}

struct dur_ok {
	const char *text;
	uint64_t usec;
};

static void duration_parse_accepts(void **state)
{
	static const struct dur_ok cases[] = {
	        {"250ms", 250000},
	        {"10s", 10000000},
	        {"2m", 120000000},
	        {"1h", 3600000000ull},
	        {"1.5s", 1500000},
	        {"10", 10000000}, /* a plain number is seconds */
	        {"0", 0},
	        {"0s", 0},
	        {"1.5", 1500000},
	        {"100us", 100},
	        {"0.5ms", 500},
	        {"1sec", 1000000},
	        {"2min", 120000000},
	        {"1.5h", 5400000000ull},
	        {"0.000001s", 1},
	        {"0.0000001s", 0}, /* below a microsecond rounds down */
	        {"5124095576h", 18446744073600000000ull},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		uint64_t usec = 777;
		const char *why = NULL;
		int r = mg_duration_parse(cases[i].text, &usec, &why);

		if (r != 0 || usec != cases[i].usec)
			print_error("mg_duration_parse(\"%s\") = %d, %" PRIu64 " (%s)\n", cases[i].text, r,
			            usec, why ? why : "-");
		assert_int_equal(r, 0);
		assert_true(usec == cases[i].usec);
	}
}

struct dur_bad {
	const char *text;
	int error;
};

static void duration_parse_rejects(void **state)
{
	static const struct dur_bad cases[] = {
	        {"", -EINVAL},
	        {"us", -EINVAL},
	        {"ms", -EINVAL},
	        {"s", -EINVAL},
	        {"soon", -EINVAL},
	        {"10x", -EINVAL},
	        {"10 s", -EINVAL},
	        {" 10s", -EINVAL},
	        {"10s ", -EINVAL},
	        {"10s\n", -EINVAL},
	        {"-1s", -EINVAL},
	        {"+1s", -EINVAL},
	        {"1.5.5s", -EINVAL},
	        {"1.0000000001s", -EINVAL},
	        {"10ss", -EINVAL},
	        {"10%", -EINVAL},
	        {"10G", -EINVAL},
	        {"1d", -EINVAL},
	        {"max", -EINVAL},
	        {"5124095577h", -ERANGE},
	        {"18446744073709551616us", -ERANGE},
	        {"18446744073709551615", -ERANGE}, /* seconds: times 10^6 overflows */
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		uint64_t usec = 777;
		const char *why = NULL;
		int r = mg_duration_parse(cases[i].text, &usec, &why);

		if (r != cases[i].error || !why)
			print_error("mg_duration_parse(\"%s\") = %d (%s); want %d\n", cases[i].text, r,
			            why ? why : "(why not set)", cases[i].error);
		assert_int_equal(r, cases[i].error);
		assert_non_null(why);
		assert_true(strlen(why) > 0);
	}
	assert_int_equal(mg_duration_parse(NULL, &(uint64_t){0}, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(size_parse_accepts),
	        cmocka_unit_test(size_parse_rejects),
	        cmocka_unit_test(size_parse_rejects_null),
	        cmocka_unit_test(size_parse_rejects_embedded_nul),
	        cmocka_unit_test(size_format_table),
	        cmocka_unit_test(size_format_fits_buffer),
	        cmocka_unit_test(size_format_parse_roundtrip),
	        cmocka_unit_test(size_format_parse_roundtrip_exbibytes),
	        cmocka_unit_test(size_format_parse_roundtrip_top_of_range),
	        cmocka_unit_test(duration_parse_accepts),
	        cmocka_unit_test(duration_parse_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
