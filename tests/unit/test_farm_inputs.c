/* GNU parallel's input sources (farm/inputs.c): lines as parallel reads
 * them, the cross product and linked sources, --colsep, and the bounds.
 * The expected jobs are what parallel 20221122 makes of the same inputs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "farm/inputs.h"
#include "memguard/util.h"

/* Every job's arguments, each joined by "|", jobs by ";". */
static char *jobs_of(const struct mg_inputs *in)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	long n = mg_inputs_count(in);

	assert_non_null(f);
	for (long k = 0; k < n; k++) {
		char **args;
		size_t nargs;
		assert_int_equal(mg_inputs_args(in, (size_t)k, &args, &nargs), 0);
		for (size_t i = 0; i < nargs; i++)
			fprintf(f, "%s%s", i ? "|" : "", args[i]);
		fputs(";", f);
		mg_inputs_args_free(args, nargs);
	}
	fclose(f);
	return out;
}

static void add_text(struct mg_inputs *in, const char *text, bool linked)
{
	char *copy = strdup(text);
	assert_int_equal(mg_inputs_add_text(in, copy, strlen(copy), linked, "f", NULL), 0);
}

static void assert_jobs(struct mg_inputs *in, const char *want)
{
	char *got = jobs_of(in);
	if (strcmp(got, want) != 0)
		print_error("jobs: got [%s], want [%s]\n", got, want);
	assert_string_equal(got, want);
	free(got);
	mg_inputs_done(in);
}

static void lines_as_parallel_reads_them(void **state)
{
	struct mg_inputs in = {0};

	/* blank lines and CR kept, a last line without newline counted, no empty line after the last newline
	 */
	add_text(&in, "a\nb c\n\nd\r\n  e  \nlast", false);
	assert_int_equal(mg_inputs_count(&in), 6);
	assert_jobs(&in, "a;b c;;d\r;  e  ;last;");

	add_text(&in, "a\n\n", false);
	assert_jobs(&in, "a;;");
	add_text(&in, "\n", false);
	assert_jobs(&in, ";");
	add_text(&in, "", false);
	assert_int_equal(mg_inputs_count(&in), 0);
	mg_inputs_done(&in);
}

static void words_with_newlines(void **state)
{
	struct mg_inputs in = {0};
	char *words[] = {"a\n", "b\n\nc", "", "x"};

	/* parallel ::: a$'\n' ... gives a, "", b, "", c, "", x */
	assert_int_equal(mg_inputs_add_words(&in, words, 4, false), 0);
	assert_jobs(&in, "a;;b;;c;;x;");
}

static void cross_product(void **state)
{
	struct mg_inputs in = {0};
	char *ab[] = {"a", "b"}, *n12[] = {"1", "2"}, *xy[] = {"x", "y"};

	assert_int_equal(mg_inputs_add(&in, ab, 2, false, ":::"), 0);
	assert_int_equal(mg_inputs_add(&in, n12, 2, false, ":::"), 0);
	assert_int_equal(mg_inputs_add(&in, xy, 2, false, ":::"), 0);
	assert_int_equal(mg_inputs_count(&in), 8);
	assert_jobs(&in, "a|1|x;a|1|y;a|2|x;a|2|y;b|1|x;b|1|y;b|2|x;b|2|y;");

	/* unequal lengths: the last varies fastest */
	char *p[] = {"p"}, *xyz[] = {"x", "y", "z"};
	assert_int_equal(mg_inputs_add(&in, p, 1, false, ":::"), 0);
	assert_int_equal(mg_inputs_add(&in, xyz, 3, false, ":::"), 0);
	assert_jobs(&in, "p|x;p|y;p|z;");
}

static void linked_sources(void **state)
{
	struct mg_inputs in = {0};
	char *abc[] = {"a", "b", "c"}, *n12[] = {"1", "2"}, *xy[] = {"x", "y"}, *w[] = {"X", "Y", "Z", "W"};

	/* ::: a b c :::+ 1 2 ::: x y: linked to the shortest */
	assert_int_equal(mg_inputs_add(&in, abc, 3, false, ":::"), 0);
	assert_int_equal(mg_inputs_add(&in, n12, 2, true, ":::"), 0);
	assert_int_equal(mg_inputs_add(&in, xy, 2, false, ":::"), 0);
	assert_jobs(&in, "a|1|x;a|1|y;b|2|x;b|2|y;");

	/* ::: a b c :::+ 1 2 :::+ X Y Z W */
	assert_int_equal(mg_inputs_add(&in, abc, 3, false, ":::"), 0);
	assert_int_equal(mg_inputs_add(&in, n12, 2, true, ":::"), 0);
	assert_int_equal(mg_inputs_add(&in, w, 4, true, ":::"), 0);
	assert_jobs(&in, "a|1|X;b|2|Y;");

	/* :::+ first is ::: */
	assert_int_equal(mg_inputs_add(&in, abc, 2, true, ":::"), 0);
	assert_int_equal(mg_inputs_add(&in, n12, 2, false, ":::"), 0);
	assert_jobs(&in, "a|1;a|2;b|1;b|2;");
}

static void empty_sources(void **state)
{
	struct mg_inputs in = {0};
	char *ab[] = {"a", "b"};

	/* ::: a b :::: /dev/null: the empty one gives "" */
	assert_int_equal(mg_inputs_add(&in, ab, 2, false, ":::"), 0);
	add_text(&in, "", false);
	assert_jobs(&in, "a|;b|;");

	/* all empty: no job */
	add_text(&in, "", false);
	assert_int_equal(mg_inputs_add(&in, NULL, 0, false, ":::"), 0);
	assert_int_equal(mg_inputs_count(&in), 0);
	mg_inputs_done(&in);
}

static void colsep(void **state)
{
	static const struct {
		const char *re, *line, *want;
	} cases[] = {
	        {",", "a,b", "a|b;"},          {",", " c , d ", "c|d;"},
	        {",", "x,,", "x||;"},          {",", ",y", "|y;"},
	        {",", "a,,b,", "a||b|;"},      {",", "", ";"},
	        {"\\s+", " a   b ", "|a|b|;"}, {"\\t", "a\tb", "a|b;"},
	        {"[,;]", "a;b,c", "a|b|c;"},   {"\\|", "a|b", "a|b;"},
	        {"::", "a::b:c", "a|b:c;"},    {"\\d", "a1b22c", "a|b||c;"},
	        {"[\\s,]", "a b,c", "a|b|c;"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_inputs in = {0};
		char err[256];
		char *lines[] = {(char *)cases[i].line};

		assert_int_equal(mg_inputs_set_colsep(&in, cases[i].re, err, sizeof(err)), 0);
		assert_int_equal(mg_inputs_add(&in, lines, 1, false, ":::"), 0);
		char *got = jobs_of(&in);
		if (strcmp(got, cases[i].want) != 0)
			print_error("--colsep '%s' on \"%s\": got [%s], want [%s]\n", cases[i].re,
			            cases[i].line, got, cases[i].want);
		assert_string_equal(got, cases[i].want);
		free(got);
		mg_inputs_done(&in);
	}

	/* Two sources: their columns one after the other. */
	struct mg_inputs in = {0};
	char err[256], *a[] = {"a,b"}, *c[] = {"c"};
	assert_int_equal(mg_inputs_set_colsep(&in, ",", err, sizeof(err)), 0);
	assert_int_equal(mg_inputs_add(&in, a, 1, false, ":::"), 0);
	assert_int_equal(mg_inputs_add(&in, c, 1, false, ":::"), 0);
	assert_jobs(&in, "a|b|c;");

	static const char *const bad[] = {"(",       "a*",           "",         "[\\S]", "a++", "a{2}{3}",
	                                  "a{1,40}", "a{2}b{2}c{2}", "'+++{1}'", "x?*"};
	for (size_t i = 0; i < MG_ARRAY_SIZE(bad); i++) {
		memset(err, 0, sizeof(err));
		assert_int_equal(mg_inputs_set_colsep(&in, bad[i], err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "invalid --colsep"));
		mg_inputs_done(&in);
	}
}

static void bounds(void **state)
{
	struct mg_inputs in = {0};
	char **many = calloc(1025, sizeof(*many)), *nul = malloc(4), *err_text;
	size_t line = 0;

	for (size_t i = 0; i < 1025; i++)
		many[i] = "v";
	/* 1025 x 1025 jobs: above the bound */
	assert_int_equal(mg_inputs_add(&in, many, 1025, false, ":::"), 0);
	assert_int_equal(mg_inputs_add(&in, many, 1025, false, ":::"), 0);
	assert_int_equal(mg_inputs_count(&in), -E2BIG);
	mg_inputs_done(&in);
	/* 1024 x 1024 is the bound itself */
	assert_int_equal(mg_inputs_add(&in, many, 1024, false, ":::"), 0);
	assert_int_equal(mg_inputs_add(&in, many, 1024, false, ":::"), 0);
	assert_int_equal(mg_inputs_count(&in), 1 << 20);
	mg_inputs_done(&in);
	for (size_t i = 0; i < MG_INPUT_MAX_SOURCES; i++)
		assert_int_equal(mg_inputs_add(&in, many, 1, false, ":::"), 0);
	assert_int_equal(mg_inputs_add(&in, many, 1, false, ":::"), -E2BIG);
	mg_inputs_done(&in);
	free(many);

	memcpy(nul, "a\0b", 4);
	assert_int_equal(mg_inputs_add_text(&in, nul, 3, false, "f", NULL), -EINVAL);
	/* "ok", then a line one byte over the bound */
	err_text = malloc(MG_INPUT_MAX_LINE + 5);
	memset(err_text, 'x', MG_INPUT_MAX_LINE + 4);
	memcpy(err_text, "ok\n", 3);
	err_text[MG_INPUT_MAX_LINE + 4] = '\0';
	assert_int_equal(mg_inputs_add_text(&in, err_text, MG_INPUT_MAX_LINE + 4, false, "f", &line),
	                 -EMSGSIZE);
	assert_int_equal(line, 2);
	mg_inputs_done(&in);
}

static void load_files(void **state)
{
	char dir[] = "/tmp/mgtest-inputs.XXXXXX", path[64], err[256];
	struct mg_inputs in = {0};
	char *words[] = {"x", "::::", path, ":::", "y", NULL};
	const char *arg_files[] = {path};

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("1\n2\n", f);
	fclose(f);

	/* -a f ::: x :::: f ::: y */
	assert_int_equal(mg_inputs_load(&in, arg_files, 1, ":::", words, false, err, sizeof(err)), 0);
	assert_int_equal(in.nsrc, 4);
	assert_jobs(&in, "1|x|1|y;1|x|2|y;2|x|1|y;2|x|2|y;");

	char *missing[] = {"/nonexistent/f", NULL};
	assert_int_equal(mg_inputs_load(&in, NULL, 0, "::::", missing, false, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot read the input /nonexistent/f: No such file"));
	mg_inputs_done(&in);

	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(lines_as_parallel_reads_them),
	        cmocka_unit_test(words_with_newlines),
	        cmocka_unit_test(cross_product),
	        cmocka_unit_test(linked_sources),
	        cmocka_unit_test(empty_sources),
	        cmocka_unit_test(colsep),
	        cmocka_unit_test(bounds),
	        cmocka_unit_test(load_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
