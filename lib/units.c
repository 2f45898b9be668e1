/* Parsing and formatting sizes ("4G", "80%", "max") and durations ("10s"). */
#include "memguard/units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct unit {
	const char *name;
	uint64_t factor;
};

static const struct unit size_units[] = {
        {"", 1},
        {"B", 1},
        {"K", 1ull << 10},
        {"KB", 1ull << 10},
        {"KiB", 1ull << 10},
        {"M", 1ull << 20},
        {"MB", 1ull << 20},
        {"MiB", 1ull << 20},
        {"G", 1ull << 30},
        {"GB", 1ull << 30},
        {"GiB", 1ull << 30},
        {"T", 1ull << 40},
        {"TB", 1ull << 40},
        {"TiB", 1ull << 40},
        {"P", 1ull << 50},
        {"PB", 1ull << 50},
        {"PiB", 1ull << 50},
        {"E", 1ull << 60},
        {"EB", 1ull << 60},
        {"EiB", 1ull << 60},
};

static const struct unit time_units[] = {
        {"", 1000000},    {"us", 1},       {"ms", 1000},      {"s", 1000000},
        {"sec", 1000000}, {"m", 60000000}, {"min", 60000000}, {"h", 3600000000ull},
};

static int fail(const char **ret_why, const char *why, int r)
{
	if (ret_why)
		*ret_why = why;
	return r;
}

/* Splits "12.5XY" into integer part, fraction (as numerator over 10^digits)
 * and the unit suffix. At most 9 fraction digits keep the arithmetic exact. */
static int parse_decimal(const char *s, uint64_t *ret_int, uint64_t *ret_frac, uint64_t *ret_scale,
                         const char **ret_suffix, const char **ret_why)
{
	uint64_t iv = 0, fv = 0, scale = 1;
	const char *p = s;
	bool digits = false;

	if (*p == '-')
		return fail(ret_why, "negative", -EINVAL);
	for (; *p >= '0' && *p <= '9'; p++, digits = true)
		if (__builtin_mul_overflow(iv, 10, &iv) ||
		    __builtin_add_overflow(iv, (uint64_t)(*p - '0'), &iv))
			return fail(ret_why, "too large", -ERANGE);
	if (*p == '.') {
		p++;
		for (; *p >= '0' && *p <= '9'; p++, digits = true) {
			if (scale >= 1000000000u)
				return fail(ret_why, "too many decimals", -EINVAL);
			fv = fv * 10 + (uint64_t)(*p - '0');
			scale *= 10;
		}
	}
	if (!digits)
		return fail(ret_why, "not a number", -EINVAL);
	*ret_int = iv;
	*ret_frac = fv;
	*ret_scale = scale;
	*ret_suffix = p;
	return 0;
}

/* value * factor exactly, rejecting overflow; the fraction rounds down. */
static int scale_by(uint64_t iv, uint64_t fv, uint64_t scale, uint64_t factor, uint64_t *ret,
                    const char **ret_why)
{
	uint64_t whole;
	/* fv < scale <= 1e9 times factor <= 2^50 needs more than 64 bits. */
	uint64_t part = (uint64_t)((unsigned __int128)fv * factor / scale);

	if (__builtin_mul_overflow(iv, factor, &whole))
		return fail(ret_why, "too large", -ERANGE);
	if (__builtin_add_overflow(whole, part, ret))
		return fail(ret_why, "too large", -ERANGE);
	return 0;
}

int mg_size_parse(const char *s, uint64_t base, uint64_t *ret_bytes, const char **ret_why)
{
	uint64_t iv, fv, scale;
	const char *suffix;
	int r;

	if (!s || !*s)
		return fail(ret_why, "empty", -EINVAL);
	if (strcmp(s, "max") == 0 || strcmp(s, "infinity") == 0) {
		*ret_bytes = MG_SIZE_UNLIMITED;
		return 0;
	}
	r = parse_decimal(s, &iv, &fv, &scale, &suffix, ret_why);
	if (r < 0)
		return r;
	if (strcmp(suffix, "%") == 0) {
		if (base == 0)
			return fail(ret_why, "a percentage needs a base", -EINVAL);
		if (iv > 100 || (iv == 100 && fv > 0))
			return fail(ret_why, "percentage above 100", -ERANGE);
		/* base * (iv + fv/scale) / 100, computed in 128 bits to stay exact. */
		unsigned __int128 num = (unsigned __int128)base * (iv * scale + fv);
		*ret_bytes = (uint64_t)(num / ((unsigned __int128)scale * 100));
		return 0;
	}
	for (size_t i = 0; i < sizeof(size_units) / sizeof(size_units[0]); i++)
		if (strcasecmp(suffix, size_units[i].name) == 0)
			return scale_by(iv, fv, scale, size_units[i].factor, ret_bytes, ret_why);
	return fail(ret_why, "unknown unit", -EINVAL);
}

const char *mg_size_format(uint64_t bytes, char buf[MG_SIZE_STRLEN])
{
	static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	size_t u = 0;
	uint64_t factor = 1;

	if (bytes == MG_SIZE_UNLIMITED) {
		snprintf(buf, MG_SIZE_STRLEN, "max");
		return buf;
	}
	while (u + 1 < sizeof(names) / sizeof(names[0]) && bytes / factor >= 1024) {
		factor <<= 10;
		u++;
	}
	if (bytes % factor == 0) {
		snprintf(buf, MG_SIZE_STRLEN, "%" PRIu64 "%s", bytes / factor, names[u]);
		return buf;
	}
	/* One decimal, rounded half up; 1023.96 KiB rounds to 1024.0KiB, still exact to read back. */
	uint64_t tenths = (uint64_t)(((unsigned __int128)bytes * 10 + factor / 2) / factor);
	/* Just below 2^64, "16.0EiB" would not parse back: give the bytes. */
	if (tenths >= 160 && u + 1 == sizeof(names) / sizeof(names[0])) {
		snprintf(buf, MG_SIZE_STRLEN, "%" PRIu64 "B", bytes);
		return buf;
	}
	snprintf(buf, MG_SIZE_STRLEN, "%" PRIu64 ".%" PRIu64 "%s", tenths / 10, tenths % 10, names[u]);
	return buf;
}

int mg_duration_parse(const char *s, uint64_t *ret_usec, const char **ret_why)
{
	uint64_t iv, fv, scale;
	const char *suffix;
	int r;

	if (!s || !*s)
		return fail(ret_why, "empty", -EINVAL);
	r = parse_decimal(s, &iv, &fv, &scale, &suffix, ret_why);
	if (r < 0)
		return r;
	for (size_t i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++)
		if (strcmp(suffix, time_units[i].name) == 0)
			return scale_by(iv, fv, scale, time_units[i].factor, ret_usec, ret_why);
	return fail(ret_why, "unknown unit", -EINVAL);
}
