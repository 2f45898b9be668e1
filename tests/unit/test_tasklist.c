/* --tasks FILE: mg_tasklist_parse, mg_tasklist_load, mg_tasklist_done. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tree.h"
#include "memguard/util.h"
#include "farm/tasklist.h"

#define MAX_LINES 8
/* A string literal and its length, NULs included. */
#define BYTES(s) s, sizeof(s) - 1

struct parse_case {
	const char *name;
	const char *text;
	size_t count;
	const char *lines[MAX_LINES];
};

static void check_list(const struct mg_tasklist *l, const struct parse_case *c)
{
	if (l->count != c->count)
		print_error("%s: %zu lines; want %zu\n", c->name, l->count, c->count);
	assert_int_equal(l->count, c->count);
	assert_non_null(l->lines);
	assert_non_null(l->text);
	for (size_t i = 0; i < c->count; i++) {
		if (strcmp(l->lines[i], c->lines[i]) != 0)
			print_error("%s: line %zu is \"%s\"; want \"%s\"\n", c->name, i, l->lines[i],
			            c->lines[i]);
		assert_string_equal(l->lines[i], c->lines[i]);
		/* Lines are split in place: they point into text. */
		assert_true(l->lines[i] >= l->text);
	}
}

static void parse_table(void **state)
{
	static const struct parse_case cases[] = {
	        {"single line", "--seed 1\n", 1, {"--seed 1"}},
	        {"single line, no newline", "--seed 1", 1, {"--seed 1"}},
	        {"three lines", "a\nb\nc\n", 3, {"a", "b", "c"}},
	        {"no final newline", "a\nb\nc", 3, {"a", "b", "c"}},
	        {"blank lines", "\n\na\n\n\nb\n\n", 2, {"a", "b"}},
	        {"whitespace-only lines", "  \n\t\na\n \t \nb\n\t", 2, {"a", "b"}},
	        {"CRLF", "a\r\nb\r\nc\r\n", 3, {"a", "b", "c"}},
	        {"CRLF blank lines", "\r\na\r\n\r\n \r\n\t\r\nb\r\n", 2, {"a", "b"}},
	        {"CRLF no final newline", "a\r\nb\r", 2, {"a", "b"}},
	        {"mixed endings", "a\nb\r\nc\n", 3, {"a", "b", "c"}},
	        {"inner spaces kept", "sim.py --n 4  --m 2\n", 1, {"sim.py --n 4  --m 2"}},
	        {"inner CR kept", "a\rb\r\n", 1, {"a\rb"}},
	        {"quotes and backslashes", "\"x y\" 'z' \\n\n", 1, {"\"x y\" 'z' \\n"}},
	        {"braces", "{} {}\n", 1, {"{} {}"}},
	        {"utf-8",
	         "temp=20\xc2\xb0"
	         "C\n\xe6\x97\xa5\n",
	         2,
	         {"temp=20\xc2\xb0"
	          "C",
	          "\xe6\x97\xa5"}},
	        {"latin-1 bytes", "caf\xe9\n", 1, {"caf\xe9"}},
	        {"lone CR line", "\r\na\n", 1, {"a"}},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_tasklist l;
		char *text = strdup(cases[i].text);
		int r;

		assert_non_null(text);
		memset(&l, 0x5a, sizeof(l));
		r = mg_tasklist_parse(text, &l, NULL);
		if (r != 0)
			print_error("%s: %d\n", cases[i].name, r);
		assert_int_equal(r, 0);
		assert_ptr_equal(l.text, text); /* taken over */
		check_list(&l, &cases[i]);
		mg_tasklist_done(&l);
		assert_null(l.text);
		assert_null(l.lines);
		assert_int_equal(l.count, 0);
	}
}

static void parse_all_blank_is_enodata(void **state)
{
	static const char *const texts[] = {
	        "", "\n", "\n\n\n", "   ", "\t\t\n  \n", "\r\n", "\r\n\r\n \r\n", " \t \r\n\n", "\r",
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(texts); i++) {
		struct mg_tasklist l = {.text = (char *)"untouched", .lines = NULL, .count = 7};
		char *text = strdup(texts[i]);

		assert_non_null(text);
		/* The text is freed by the parser on failure: ASan reports a leak
		 * otherwise, and a double free if it were freed twice. */
		assert_int_equal(mg_tasklist_parse(text, &l, NULL), -ENODATA);
		assert_string_equal(l.text, "untouched");
		assert_int_equal(l.count, 7);
	}
}

static void check_n_lines(size_t n, bool crlf, bool final_newline)
{
	size_t cap = n * 16 + 16, len = 0;
	char *text = malloc(cap);
	struct mg_tasklist l;

	assert_non_null(text);
	for (size_t i = 0; i < n; i++) {
		bool last = i + 1 == n;
		const char *end = last && !final_newline ? "" : crlf ? "\r\n" : "\n";
		len += (size_t)snprintf(text + len, cap - len, "--seed %zu%s", i, end);
		/* Blank lines in between must not count towards anything. */
		if (i % 7 == 3 && !last)
			len += (size_t)snprintf(text + len, cap - len, crlf ? " \r\n" : "\t\n");
	}
	assert_true(len < cap);
	assert_int_equal(mg_tasklist_parse(text, &l, NULL), 0);
	assert_int_equal(l.count, n);
	for (size_t i = 0; i < n; i++) {
		char want[32];
		snprintf(want, sizeof(want), "--seed %zu", i);
		assert_string_equal(l.lines[i], want);
	}
	mg_tasklist_done(&l);
}

static void parse_many_lines(void **state)
{
	/* 64 fills the first allocation exactly; 65 grows it; more grow again. */
	static const size_t counts[] = {1, 2, 63, 64, 65, 127, 128, 129, 1000, 10000};

	for (size_t i = 0; i < MG_ARRAY_SIZE(counts); i++) {
		check_n_lines(counts[i], false, true);
		check_n_lines(counts[i], true, true);
		check_n_lines(counts[i], false, false);
		check_n_lines(counts[i], true, false);
	}
}

static void done_is_idempotent(void **state)
{
	struct mg_tasklist l = {0};
	char *text = strdup("a\nb\n");

	mg_tasklist_done(&l); /* an empty list */
	assert_non_null(text);
	assert_int_equal(mg_tasklist_parse(text, &l, NULL), 0);
	mg_tasklist_done(&l);
	mg_tasklist_done(&l); /* twice: no double free */
	assert_null(l.text);
}

/* --- loading files --- */

static void load_good_file(void **state)
{
	struct fake_tree t;
	struct mg_tasklist l;
	char path[PATH_MAX + 16], err[512] = "";
	static const struct parse_case want = {
	        "good file", NULL, 4, {"--seed 1 --out a.dat", "--seed 2 --out b.dat", "--seed 3", "{} x"}};

	ft_new(&t);
	ft_write(t.fd, "params.txt",
	         "# not a comment: a task\n"
	         "\n"
	         "--seed 1 --out a.dat\r\n"
	         "   \n"
	         "--seed 2 --out b.dat\n"
	         "--seed 3\n"
	         "{} x");
	snprintf(path, sizeof(path), "%s/params.txt", t.path);
	assert_int_equal(mg_tasklist_load(path, &l, err, sizeof(err)), 0);
	assert_int_equal(l.count, 5);
	assert_string_equal(l.lines[0], "# not a comment: a task");
	struct mg_tasklist rest = {.text = l.text, .lines = l.lines + 1, .count = l.count - 1};
	check_list(&rest, &want);
	mg_tasklist_done(&l);
	ft_free(&t);
}

static void load_single_line_file(void **state)
{
	struct fake_tree t;
	struct mg_tasklist l;
	char path[PATH_MAX + 16], err[512] = "";

	ft_new(&t);
	ft_write(t.fd, "one", "only");
	snprintf(path, sizeof(path), "%s/one", t.path);
	assert_int_equal(mg_tasklist_load(path, &l, err, sizeof(err)), 0);
	assert_int_equal(l.count, 1);
	assert_string_equal(l.lines[0], "only");
	mg_tasklist_done(&l);
	ft_free(&t);
}

struct load_fail {
	const char *name;
	const char *file;    /* created below the tree with content, unless NULL */
	const char *content; /* with content_len bytes */
	size_t content_len;
	const char *open_as; /* the path to load, below the tree */
	int want;
	const char *needle;
};

static void load_failures(void **state)
{
	static const struct load_fail cases[] = {
	        {"missing", NULL, NULL, 0, "nope.txt", -ENOENT, "nope.txt"},
	        {"missing dir", NULL, NULL, 0, "no/such/dir.txt", -ENOENT, "no/such/dir.txt"},
	        {"empty", "empty.txt", BYTES(""), "empty.txt", -ENODATA, "empty"},
	        {"only blank lines", "blank.txt", BYTES("\n \n\t\r\n"), "blank.txt", -ENODATA, "empty"},
	        {"NUL byte", "nul.txt", BYTES("a\nb\0c\n"), "nul.txt", -EINVAL, "NUL"},
	        {"leading NUL", "nul0.txt", BYTES("\0a\n"), "nul0.txt", -EINVAL, "NUL"},
	        {"trailing NUL", "nul1.txt", BYTES("a\n\0"), "nul1.txt", -EINVAL, "NUL"},
	        {"directory", "sub/x", BYTES("x"), "sub", -EISDIR, "sub"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct fake_tree t;
		struct mg_tasklist l = {0};
		char path[PATH_MAX + 64], err[PATH_MAX + 256];
		int r;

		ft_new(&t);
		if (cases[i].file)
			ft_write_bytes(t.fd, cases[i].file, cases[i].content, cases[i].content_len);
		snprintf(path, sizeof(path), "%s/%s", t.path, cases[i].open_as);
		memset(err, 0, sizeof(err));
		r = mg_tasklist_load(path, &l, err, sizeof(err));
		if (r != cases[i].want)
			print_error("%s: %d (%s); want %d\n", cases[i].name, r, err, cases[i].want);
		assert_int_equal(r, cases[i].want);
		/* One line, naming the file by its full path. */
		ft_assert_contains(err, path);
		ft_assert_contains(err, cases[i].needle);
		assert_null(strchr(err, '\n'));
		assert_null(l.text);
		assert_null(l.lines);
		ft_free(&t);
	}
}

static void load_error_message_truncates(void **state)
{
	struct mg_tasklist l = {0};
	char err[16];

	memset(err, 'X', sizeof(err));
	assert_int_equal(mg_tasklist_load("/nonexistent/memguard/tasks.txt", &l, err, sizeof(err)), -ENOENT);
	assert_int_equal(strlen(err), sizeof(err) - 1);
}

static void load_large_file(void **state)
{
	struct fake_tree t;
	struct mg_tasklist l;
	char path[PATH_MAX + 16], err[512] = "";
	size_t n = 20000, cap = n * 24, len = 0;
	char *text = malloc(cap);

	assert_non_null(text);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "--case %zu\n", i);
	ft_new(&t);
	ft_write_bytes(t.fd, "big.txt", text, len);
	free(text);
	snprintf(path, sizeof(path), "%s/big.txt", t.path);
	assert_int_equal(mg_tasklist_load(path, &l, err, sizeof(err)), 0);
	assert_int_equal(l.count, n);
	assert_string_equal(l.lines[0], "--case 0");
	assert_string_equal(l.lines[n - 1], "--case 19999");
	mg_tasklist_done(&l);
	ft_free(&t);
}

/* A file of size bytes of fill (and newline every `every` bytes, 0: none). */
static void write_generated(int dirfd, const char *name, size_t size, char fill, size_t every)
{
	char *buf = malloc(size);

	assert_non_null(buf);
	memset(buf, fill, size);
	for (size_t i = every; every && i <= size; i += every)
		buf[i - 1] = '\n';
	ft_write_bytes(dirfd, name, buf, size);
	free(buf);
}

static void expect_load_error(const char *path, int want, const char *needle)
{
	struct mg_tasklist l = {0};
	char err[PATH_MAX + 256] = "";
	int r = mg_tasklist_load(path, &l, err, sizeof(err));

	if (r != want)
		print_error("%s: %d (%s); want %d\n", path, r, err, want);
	assert_int_equal(r, want);
	ft_assert_contains(err, path);
	ft_assert_contains(err, needle);
	assert_null(strchr(err, '\n'));
	assert_null(l.text);
	assert_null(l.lines);
}

/* --tasks /dev/zero used to read until memory ran out. */
static void load_bounds(void **state)
{
	struct fake_tree t;
	struct mg_tasklist l;
	char path[PATH_MAX + 16], err[512] = "";

	expect_load_error("/dev/zero", -EFBIG, "larger than 64 MiB");

	ft_new(&t);
	/* the file: 64 MiB is read, one byte more is not */
	write_generated(t.fd, "huge.txt", MG_TASKLIST_MAX_BYTES + 1, 'a', 1000);
	snprintf(path, sizeof(path), "%s/huge.txt", t.path);
	expect_load_error(path, -EFBIG, "larger than 64 MiB");
	write_generated(t.fd, "max.txt", MG_TASKLIST_MAX_BYTES, 'a', 64);
	snprintf(path, sizeof(path), "%s/max.txt", t.path);
	assert_int_equal(mg_tasklist_load(path, &l, err, sizeof(err)), 0);
	assert_int_equal(l.count, MG_TASKLIST_MAX_BYTES / 64);
	assert_int_equal(strlen(l.lines[0]), 63);
	mg_tasklist_done(&l);

	/* one line: 1 MiB is a task, one byte more an error naming the line */
	write_generated(t.fd, "line.txt", MG_TASKLIST_MAX_LINE + 1, 'b', MG_TASKLIST_MAX_LINE + 1);
	snprintf(path, sizeof(path), "%s/line.txt", t.path);
	assert_int_equal(mg_tasklist_load(path, &l, err, sizeof(err)), 0);
	assert_int_equal(l.count, 1);
	assert_int_equal(strlen(l.lines[0]), MG_TASKLIST_MAX_LINE);
	mg_tasklist_done(&l);
	write_generated(t.fd, "line.txt", MG_TASKLIST_MAX_LINE + 1, 'b', 0); /* no newline */
	expect_load_error(path, -EMSGSIZE, "line 1 is longer than 1 MiB");
	/* a \r does not count, and the line number counts blank lines */
	char *text = malloc(MG_TASKLIST_MAX_LINE + 16);
	assert_non_null(text);
	memcpy(text, "a\n\n", 3);
	memset(text + 3, 'c', MG_TASKLIST_MAX_LINE);
	memcpy(text + 3 + MG_TASKLIST_MAX_LINE, "\r\nd\n", 4);
	ft_write_bytes(t.fd, "crlf.txt", text, MG_TASKLIST_MAX_LINE + 7);
	snprintf(path, sizeof(path), "%s/crlf.txt", t.path);
	assert_int_equal(mg_tasklist_load(path, &l, err, sizeof(err)), 0);
	assert_int_equal(l.count, 3);
	mg_tasklist_done(&l);
	text[3 + MG_TASKLIST_MAX_LINE] = 'c';
	ft_write_bytes(t.fd, "crlf.txt", text, MG_TASKLIST_MAX_LINE + 7);
	expect_load_error(path, -EMSGSIZE, "line 3 is longer than 1 MiB");
	free(text);

	/* the tasks: as many as -n allows */
	write_generated(t.fd, "many.txt", 2 * (size_t)MG_TASKLIST_MAX_TASKS, 'e', 2);
	snprintf(path, sizeof(path), "%s/many.txt", t.path);
	assert_int_equal(mg_tasklist_load(path, &l, err, sizeof(err)), 0);
	assert_int_equal(l.count, MG_TASKLIST_MAX_TASKS);
	mg_tasklist_done(&l);
	write_generated(t.fd, "many.txt", 2 * (size_t)MG_TASKLIST_MAX_TASKS + 2, 'e', 2);
	expect_load_error(path, -E2BIG, "more than 1048576 tasks");
	ft_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(parse_table),      cmocka_unit_test(parse_all_blank_is_enodata),
	        cmocka_unit_test(parse_many_lines), cmocka_unit_test(done_is_idempotent),
	        cmocka_unit_test(load_good_file),   cmocka_unit_test(load_single_line_file),
	        cmocka_unit_test(load_failures),    cmocka_unit_test(load_error_message_truncates),
	        cmocka_unit_test(load_large_file),  cmocka_unit_test(load_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
