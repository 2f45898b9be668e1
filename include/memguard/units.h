/* Sizes ("4G", "1.5GiB", "512M", "80%", "max") and durations ("10s", "500ms"). */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* "max": no limit. Written to cgroup files as "max". */
#define MG_SIZE_UNLIMITED UINT64_MAX
/* Longest string mg_size_format() writes, with its NUL. */
#define MG_SIZE_STRLEN 32

/* Parses a size in bytes. Units are binary (K = KiB = 1024) and may be written
 * K, KB, KiB, k, ...; a plain number is bytes; "P%" is P percent of base
 * (base 0 rejects percentages); "max" gives MG_SIZE_UNLIMITED, and a number
 * that reaches it (2^64-1 bytes or more) is -ERANGE. Returns 0, or -EINVAL /
 * -ERANGE with *ret_why (if given) set to a static reason. */
int mg_size_parse(const char *s, uint64_t base, uint64_t *ret_bytes, const char **ret_why);

/* Formats bytes as mg_size_parse() reads them: "4GiB", "2.3GiB", "512B", "max".
 * Exact multiples print without decimals; others with one, rounded. */
const char *mg_size_format(uint64_t bytes, char buf[MG_SIZE_STRLEN]);

/* Parses a duration into microseconds: "250ms", "10s", "2m", "1h", "1.5s";
 * a plain number means seconds. */
int mg_duration_parse(const char *s, uint64_t *ret_usec, const char **ret_why);
