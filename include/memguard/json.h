/* JSON strings from arbitrary bytes: the launcher's report and memguardd's
 * kill log both write task-file lines and cgroup paths, which may be in any
 * encoding, and must stay valid JSON (RFC 8259: JSON text is UTF-8). */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at the start of the NUL-terminated p:
 * 1 to 4, or 0 when it is not one (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF; ASCII, NUL included, is 1). Never
 * reads past a NUL. */
size_t mg_utf8_len(const char *p);

/* Writes s escaped for the inside of a JSON string, without the quotes:
 * '"' and '\\' are escaped, control characters become \u00XX, and every
 * byte that is not part of valid UTF-8 becomes \ufffd. */
void mg_json_escape(FILE *f, const char *s);

/* Writes s as a JSON string: the escaped text between quotes. */
void mg_json_string(FILE *f, const char *s);
