/* Command-line unwrapping (wrappers, env -S splitting), #! line parsing fed
 * hostile input, and rewriting a command by its #! line: all pure, no files. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cmdline.h"

/* Fails unless c holds exactly the tokens want (NULL-terminated). */
static void assert_tokens(const char *what, const struct mg_cmdline *c, const char *const *want)
{
	size_t n = 0;

	while (want[n])
		n++;
	if (c->n != n)
		fail_msg("%s: %zu tokens, want %zu (first: \"%s\")", what, c->n, n, c->n ? c->tok[0] : "-");
	for (size_t i = 0; i < n; i++)
		if (strcmp(c->tok[i], want[i]) != 0)
			fail_msg("%s: token %zu is \"%s\", want \"%s\"", what, i, c->tok[i], want[i]);
}

/* ---------------------------------------------------------------------- */
/* Unwrapping */

struct unwrap_case {
	const char *argv[16];
	int want;
	const char *tok[8];    /* the command left, when want is 0 */
	const char *assign[4]; /* env's NAME=value operands remembered */
	unsigned hops;         /* wrappers followed, when want is 0 */
};

static const struct unwrap_case unwrap_cases[] = {
        /* No wrapper: nothing changes. */
        {{"pypy3", "sim.py"}, 0, {"pypy3", "sim.py"}, {NULL}, 0},
        {{"/opt/bin/java", "-jar", "a.jar"}, 0, {"/opt/bin/java", "-jar", "a.jar"}, {NULL}, 0},
        {{"--", "--", "java"}, 0, {"java"}, {NULL}, 0},
        /* env: assignments remembered in order, -u's operand is not one. */
        {{"env", "A=1", "B=2", "node", "a.js"}, 0, {"node", "a.js"}, {"A=1", "B=2"}, 1},
        {{"env", "-u", "HOME", "A=1", "x"}, 0, {"x"}, {"A=1"}, 1},
        {{"env", "-", "node"}, 0, {"node"}, {NULL}, 1},
        {{"env", "--spl=pypy3 -u", "x.py"}, 0, {"pypy3", "-u", "x.py"}, {NULL}, 2},
        {{"/usr/bin/env", "-S", "pypy3 -u", "sim.py"}, 0, {"pypy3", "-u", "sim.py"}, {NULL}, 2},
        {{"env", "-S", "A=1 B='x y' R"}, 0, {"R"}, {"A=1", "B=x y"}, 2},
        /* env -S splitting: quotes, escapes, \_ \c, comments, ${VAR} as written. */
        {{"env", "-S", "'a b' \"c\\td\" e\\_f g\\ch i"}, 0, {"a b", "c\td", "e", "f", "g"}, {NULL}, 2},
        {{"env", "-S", "\"a\\_b\" 'c\\_d'"}, 0, {"a b", "c\\_d"}, {NULL}, 2},
        {{"env", "-S", "'it\\'s' \"q\\\"q\""}, 0, {"it's", "q\"q"}, {NULL}, 2},
        {{"env", "-S", "node --x # y z", "a.js"}, 0, {"node", "--x", "a.js"}, {NULL}, 2},
        {{"env", "-S", "${RUNTIME} -u"}, 0, {"${RUNTIME}", "-u"}, {NULL}, 2},
        {{"env", "-S", " \t\n pypy3 \n"}, 0, {"pypy3"}, {NULL}, 2},
        /* Other wrappers and their operands. */
        {{"nice", "-n", "5", "ionice", "-c3", "python3", "-u"}, 0, {"python3", "-u"}, {NULL}, 2},
        {{"chrt", "-o", "0", "x"}, 0, {"x"}, {NULL}, 1},
        {{"chrt", "python3"}, 0, {"python3"}, {NULL}, 1},
        {{"timeout", "-s", "KILL", "10", "node"}, 0, {"node"}, {NULL}, 1},
        {{"taskset", "0x3", "--", "java"}, 0, {"java"}, {NULL}, 1},
        {{"numactl", "--membind=0", "-C", "0-7", "--", "R"}, 0, {"R"}, {NULL}, 1},
        {{"stdbuf", "-oL", "--error", "0", "setsid", "-w", "nohup", "x"}, 0, {"x"}, {NULL}, 3},
        /* No command. */
        {{NULL}, -ENOENT, {NULL}, {NULL}, 0},
        {{""}, -ENOENT, {NULL}, {NULL}, 0},
        {{"--"}, -ENOENT, {NULL}, {NULL}, 0},
        {{"env", "A=1"}, -ENOENT, {NULL}, {NULL}, 0},
        {{"env", "--split-string"}, -ENOENT, {NULL}, {NULL}, 0},
        {{"env", "-S", ""}, -ENOENT, {NULL}, {NULL}, 0},
        {{"env", "-S", "# only a comment"}, -ENOENT, {NULL}, {NULL}, 0},
        {{"env", "-S", "'' x"}, -ENOENT, {NULL}, {NULL}, 0},
        {{"nice", "-n"}, -ENOENT, {NULL}, {NULL}, 0},
        {{"taskset", "-p", "1"}, -ENOENT, {NULL}, {NULL}, 0},
        {{"ionice", "--pid=1", "x"}, -ENOENT, {NULL}, {NULL}, 0},
        {{"numactl", "--hardware"}, -ENOENT, {NULL}, {NULL}, 0},
        {{"timeout", "10"}, -ENOENT, {NULL}, {NULL}, 0},
        /* Hostile. */
        {{"env", "-S", "'unterminated pypy3"}, -EINVAL, {NULL}, {NULL}, 0},
        {{"env", "-S", "\"unterminated"}, -EINVAL, {NULL}, {NULL}, 0},
        {{"nice", "nice", "nice", "nice", "nice", "nice", "nice", "nice", "nice", "pypy3"},
         -ELOOP,
         {NULL},
         {NULL},
         0},
        {{"nice", "nice", "nice", "nice", "nice", "nice", "nice", "nice", "pypy3"}, 0, {"pypy3"}, {NULL}, 8},
};

static void test_unwrap(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(unwrap_cases) / sizeof(unwrap_cases[0]); i++) {
		const struct unwrap_case *tc = &unwrap_cases[i];
		struct mg_cmdline c;
		char what[64];
		size_t n_assign = 0;
		int r;

		snprintf(what, sizeof(what), "case %zu (%s ...)", i, tc->argv[0] ? tc->argv[0] : "NULL");
		mg_cmdline_init(&c, (char *const *)tc->argv);
		r = mg_cmdline_unwrap(&c);
		if (r != tc->want)
			fail_msg("%s: got %d, want %d", what, r, tc->want);
		if (r < 0)
			continue;
		assert_tokens(what, &c, tc->tok);
		while (tc->assign[n_assign])
			n_assign++;
		if (c.n_assign != n_assign)
			fail_msg("%s: %zu assignments, want %zu", what, c.n_assign, n_assign);
		for (size_t j = 0; j < n_assign; j++)
			assert_string_equal(c.assign[j], tc->assign[j]);
		if (c.hops != tc->hops)
			fail_msg("%s: %u hops, want %u", what, c.hops, tc->hops);
	}
}

static void test_init_bounds(void **state)
{
	enum { N = MG_CMD_TOKENS_MAX + 50 };
	char *argv[N + 1];
	struct mg_cmdline c;

	(void)state;
	mg_cmdline_init(&c, NULL);
	assert_int_equal(c.n, 0);
	assert_int_equal(mg_cmdline_unwrap(&c), -ENOENT);
	/* Only the head of a long command is kept: the strings are borrowed. */
	for (int i = 0; i < N; i++)
		argv[i] = (char *)"-Dx=y";
	argv[0] = (char *)"java";
	argv[N] = NULL;
	mg_cmdline_init(&c, argv);
	assert_int_equal(c.n, MG_CMD_TOKENS_MAX);
	assert_ptr_equal(c.tok[0], argv[0]);
	assert_int_equal(mg_cmdline_unwrap(&c), 0);
	assert_string_equal(c.tok[0], "java");
}

static void test_unwrap_limits(void **state)
{
	size_t len = 2 * MG_CMD_STORE_SIZE;
	char *big = malloc(len + 1);
	struct mg_cmdline c;

	(void)state;
	assert_non_null(big);
	/* An env -S string larger than the store: refused, not cut. */
	memset(big, 'x', len);
	big[len] = '\0';
	mg_cmdline_init(&c, (char *const[]){(char *)"env", (char *)"-S", big, NULL});
	assert_int_equal(mg_cmdline_unwrap(&c), -E2BIG);
	/* More pieces than tokens: refused too. */
	for (size_t i = 0; i < len; i++)
		big[i] = i % 2 ? ' ' : 'a';
	mg_cmdline_init(&c, (char *const[]){(char *)"env", (char *)"-S", big, NULL});
	assert_int_equal(mg_cmdline_unwrap(&c), -E2BIG);
	free(big);

	/* More assignments than we remember: the command is still found. */
	char names[MG_CMD_ASSIGN_MAX + 8][16];
	char *argv[MG_CMD_ASSIGN_MAX + 8 + 3];
	size_t n = 0;
	argv[n++] = (char *)"env";
	for (size_t i = 0; i < MG_CMD_ASSIGN_MAX + 8; i++) {
		snprintf(names[i], sizeof(names[i]), "V%zu=1", i);
		argv[n++] = names[i];
	}
	argv[n++] = (char *)"pypy3";
	argv[n] = NULL;
	mg_cmdline_init(&c, argv);
	assert_int_equal(mg_cmdline_unwrap(&c), 0);
	assert_string_equal(c.tok[0], "pypy3");
	assert_int_equal(c.n_assign, MG_CMD_ASSIGN_MAX);
	assert_string_equal(c.assign[0], "V0=1");
}

/* ---------------------------------------------------------------------- */
/* #! lines */

struct shebang_case {
	const char *what;
	const char *buf;
	size_t len; /* 0: strlen(buf) */
	int want;
	const char *interp, *arg;
};

static const struct shebang_case shebang_cases[] = {
        {"plain", "#!/bin/sh\n", 0, 0, "/bin/sh", ""},
        {"env", "#!/usr/bin/env pypy3\nprint(1)\n", 0, 0, "/usr/bin/env", "pypy3"},
        {"one argument", "#!/usr/bin/env pypy3 -u  \n", 0, 0, "/usr/bin/env", "pypy3 -u"},
        {"tabs", "#!\t/bin/sh\targ\twith\ttabs\t\n", 0, 0, "/bin/sh", "arg\twith\ttabs"},
        {"blanks", "#!  \t/usr/bin/node   \t\n", 0, 0, "/usr/bin/node", ""},
        {"crlf", "#!/usr/bin/env pypy3\r\n", 0, 0, "/usr/bin/env", "pypy3"},
        {"crlf bare", "#!/usr/bin/python3\r\n", 0, 0, "/usr/bin/python3", ""},
        {"no newline", "#!/usr/bin/Rscript", 0, 0, "/usr/bin/Rscript", ""},
        {"second line", "#!/bin/sh\n-x y\n", 0, 0, "/bin/sh", ""},
        {"relative", "#!pypy3", 0, 0, "pypy3", ""},
        {"nul ends the line", "#!/bin/sh\0/evil arg\n", 20, 0, "/bin/sh", ""},
        {"control bytes kept", "#!/bin/sh\x1b[2J x\n", 0, 0, "/bin/sh\x1b[2J", "x"},
        /* Not a usable #! line. */
        {"empty", "", 0, -ENOEXEC, NULL, NULL},
        {"hash", "#", 0, -ENOEXEC, NULL, NULL},
        {"bang only", "#!", 0, -ENOEXEC, NULL, NULL},
        {"bang newline", "#!\n/bin/sh\n", 0, -ENOEXEC, NULL, NULL},
        {"blanks only", "#!   \t \n", 0, -ENOEXEC, NULL, NULL},
        {"cr only", "#! \r\n", 0, -ENOEXEC, NULL, NULL},
        {"nul first", "#!\0/bin/sh\n", 11, -ENOEXEC, NULL, NULL},
        {"reversed", "!#/bin/sh\n", 0, -ENOEXEC, NULL, NULL},
        {"leading blank", " #!/bin/sh\n", 0, -ENOEXEC, NULL, NULL},
        {"elf",
         "\x7f"
         "ELF\x02\x01\x01",
         0, -ENOEXEC, NULL, NULL},
};

static void assert_span(const char *what, struct mg_span s, const char *want)
{
	if (s.len != strlen(want) || memcmp(s.p, want, s.len) != 0)
		fail_msg("%s: \"%.*s\", want \"%s\"", what, (int)s.len, s.p, want);
}

static void test_shebang_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(shebang_cases) / sizeof(shebang_cases[0]); i++) {
		const struct shebang_case *tc = &shebang_cases[i];
		size_t len = tc->len ? tc->len : strlen(tc->buf);
		struct mg_span interp = {NULL, 0}, arg = {NULL, 0};
		int r = mg_shebang_parse(tc->buf, len, &interp, &arg);

		if (r != tc->want)
			fail_msg("%s: got %d, want %d", tc->what, r, tc->want);
		if (r < 0)
			continue;
		assert_span(tc->what, interp, tc->interp);
		assert_span(tc->what, arg, tc->arg);
		/* Spans point into the buffer, never past what was handed in. */
		assert_true(interp.p >= tc->buf && interp.p + interp.len <= tc->buf + len);
		assert_true(arg.p >= tc->buf && arg.p + arg.len <= tc->buf + len);
	}
}

static void test_shebang_parse_cut(void **state)
{
	char buf[MG_SHEBANG_MAX];
	struct mg_span interp, arg;

	(void)state;
	/* The kernel's whole buffer with no newline, the name running to its
	 * end: the name may be cut short, so the kernel refuses it. */
	memcpy(buf, "#!/", 3);
	memset(buf + 3, 'd', sizeof(buf) - 3);
	assert_int_equal(mg_shebang_parse(buf, sizeof(buf), &interp, &arg), -ENOEXEC);
	/* The same bytes as a whole (shorter) file: the name is complete. */
	assert_int_equal(mg_shebang_parse(buf, sizeof(buf) - 1, &interp, &arg), 0);
	assert_int_equal(interp.len, sizeof(buf) - 3);
	/* A complete name and an argument that runs to the end: cut, not refused. */
	memcpy(buf, "#!/usr/bin/python3 ", 19);
	memset(buf + 19, 'x', sizeof(buf) - 19);
	assert_int_equal(mg_shebang_parse(buf, sizeof(buf), &interp, &arg), 0);
	assert_span("long argument", interp, "/usr/bin/python3");
	assert_int_equal(arg.len, sizeof(buf) - 19);
	/* Trailing blanks up to the end of the buffer. */
	memcpy(buf, "#!/bin/sh", 9);
	memset(buf + 9, ' ', sizeof(buf) - 9);
	assert_int_equal(mg_shebang_parse(buf, sizeof(buf), &interp, &arg), 0);
	assert_span("trailing blanks", interp, "/bin/sh");
	assert_int_equal(arg.len, 0);
}

static void test_apply_shebang(void **state)
{
	static const struct {
		const char *head;
		int want;
		const char *tok[6];
	} cases[] = {
	        {"#!/usr/bin/env pypy3\n", 0, {"/usr/bin/env", "pypy3", "/s/sim.py", "a", "b"}},
	        {"#!/usr/bin/python3\n", 0, {"/usr/bin/python3", "/s/sim.py", "a", "b"}},
	        /* A bare name is relative to the cwd, as the kernel opens it. */
	        {"#!pypy3 -u\n", 0, {"./pypy3", "-u", "/s/sim.py", "a", "b"}},
	        {"#!sub/interp\n", 0, {"sub/interp", "/s/sim.py", "a", "b"}},
	        /* Not a #! line: the command stays as it was. */
	        {"import sys\n", -ENOEXEC, {"./sim.py", "a", "b"}},
	        {"#!\n", -ENOEXEC, {"./sim.py", "a", "b"}},
	};
	char *argv[] = {(char *)"./sim.py", (char *)"a", (char *)"b", NULL};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mg_cmdline c;
		int r;

		mg_cmdline_init(&c, argv);
		r = mg_cmdline_apply_shebang(&c, "/s/sim.py", cases[i].head, strlen(cases[i].head));
		if (r != cases[i].want)
			fail_msg("\"%s\": got %d, want %d", cases[i].head, r, cases[i].want);
		assert_tokens(cases[i].head, &c, cases[i].tok);
	}
}

static void test_apply_shebang_limits(void **state)
{
	size_t len = MG_CMD_STORE_SIZE;
	char *path = malloc(len + 1);
	const char *argv[MG_CMD_TOKENS_MAX + 1];
	struct mg_cmdline c;

	(void)state;
	assert_non_null(path);
	/* A script path that does not fit the store. */
	memset(path, 'p', len);
	path[len] = '\0';
	mg_cmdline_init(&c, (char *const[]){path, NULL});
	assert_int_equal(mg_cmdline_apply_shebang(&c, path, "#!/bin/sh\n", 10), -E2BIG);
	free(path);

	/* A full token list: the interpreter and script come first, the
	 * program's last arguments make room. */
	for (size_t i = 0; i < MG_CMD_TOKENS_MAX; i++)
		argv[i] = "arg";
	argv[0] = "./sim.py";
	argv[MG_CMD_TOKENS_MAX] = NULL;
	mg_cmdline_init(&c, (char *const *)argv);
	assert_int_equal(mg_cmdline_apply_shebang(&c, "./sim.py", "#!/usr/bin/env node\n", 20), 0);
	assert_int_equal(c.n, MG_CMD_TOKENS_MAX);
	assert_string_equal(c.tok[0], "/usr/bin/env");
	assert_string_equal(c.tok[1], "node");
	assert_string_equal(c.tok[2], "./sim.py");
	assert_string_equal(c.tok[3], "arg");
	/* And unwrapping goes on from there, as detection does. */
	assert_int_equal(mg_cmdline_unwrap(&c), 0);
	assert_string_equal(c.tok[0], "node");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_unwrap),
	        cmocka_unit_test(test_init_bounds),
	        cmocka_unit_test(test_unwrap_limits),
	        cmocka_unit_test(test_shebang_parse),
	        cmocka_unit_test(test_shebang_parse_cut),
	        cmocka_unit_test(test_apply_shebang),
	        cmocka_unit_test(test_apply_shebang_limits),
	};

	return cmocka_run_group_tests_name("cmdline", tests, NULL, NULL);
}
