/* Character and string helpers shared by the launcher's command-line, ELF,
 * runtime and heap-flag code. */
#pragma once

#include <stdbool.h>
#include <string.h>

static inline bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static inline const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static inline bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!is_digit(*s))
			return false;
	return true;
}
