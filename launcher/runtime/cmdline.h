/* A task's command as a list of tokens we can rewrite: wrappers stripped
 * (env [-S], nice, taskset ...), "#!" lines applied the way the kernel does.
 * Everything here is pure: no file is read. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Wrappers and #! levels followed before giving up: the kernel itself allows
 * only a handful of nested interpreters, and a loop must end. */
#define MG_CMD_HOPS_MAX 8
/* Leading tokens of a command we look at: wrappers and runtime options come
 * first; anything past this is the program's own arguments. */
#define MG_CMD_TOKENS_MAX 128
/* Room for strings we make: env -S pieces, #! interpreters, resolved paths. */
#define MG_CMD_STORE_SIZE 8192
/* NAME=value assignments made by env wrappers that we remember. */
#define MG_CMD_ASSIGN_MAX 32
/* The kernel reads this much of a script for its #! line (BINPRM_BUF_SIZE). */
#define MG_SHEBANG_MAX 256

struct mg_cmdline {
	const char *tok[MG_CMD_TOKENS_MAX];
	size_t n;
	char store[MG_CMD_STORE_SIZE];
	size_t store_used;
	const char *assign[MG_CMD_ASSIGN_MAX]; /* NAME=value from env wrappers, in order */
	size_t n_assign;
	unsigned hops; /* wrappers and #! lines followed so far */
};

/* Takes the first MG_CMD_TOKENS_MAX tokens of argv (NULL-terminated, may be
 * NULL); the strings are borrowed, not copied. */
void mg_cmdline_init(struct mg_cmdline *c, char *const argv[]);

/* Strips leading wrappers (and an exec-style "--") until tok[0] is the
 * program that really runs; env's NAME=value operands go to assign[].
 * Returns 0, -ENOENT (no command), -ELOOP (more than MG_CMD_HOPS_MAX levels)
 * or -E2BIG (an env -S string we cannot hold); -EINVAL for an env -S string
 * with an unterminated quote. */
int mg_cmdline_unwrap(struct mg_cmdline *c);

/* A piece of a buffer: not NUL-terminated. */
struct mg_span {
	const char *p;
	size_t len;
};

/* Splits a #! line the way the kernel does (fs/binfmt_script.c): blanks,
 * the interpreter up to a blank, blanks, then the rest of the line as ONE
 * optional argument with trailing blanks dropped. One difference: a '\r'
 * before the newline is dropped too, so a CRLF script names its real
 * interpreter (the kernel would fail to find "pypy3\r"). buf is what the
 * kernel would read: the file's first MG_SHEBANG_MAX bytes at most. Returns
 * 0 and spans into buf, or -ENOEXEC when buf is not a usable #! line. */
int mg_shebang_parse(const char *buf, size_t len, struct mg_span *ret_interp, struct mg_span *ret_arg);

/* Replaces the script at tok[0], whose file is at path and starts with
 * head, by its #! interpreter: "interp [arg] path args...", as the kernel
 * runs it (a bare interpreter name becomes "./name": relative to the cwd,
 * never looked up in PATH). Returns 0, -ENOEXEC (no usable #! line) or
 * -E2BIG (no room left in the store). */
int mg_cmdline_apply_shebang(struct mg_cmdline *c, const char *path, const char *head, size_t head_len);
