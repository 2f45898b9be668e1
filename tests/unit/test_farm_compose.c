/* GNU parallel's replacement strings, quoting and composition
 * (farm/compose.c) as tables. Every expected line is what parallel
 * 20221122 --dry-run prints for the same arguments. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "farm/compose.h"
#include "memguard/util.h"

static void quote_table(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
	        {"a", "a"},
	        {"a/b-c_d.e+f", "a/b-c_d.e+f"},
	        {"+", "+"},
	        {"-", "-"},
	        {"", "''"},
	        {"b c", "'b c'"},
	        {"d'e", "'d'\"'\"'e'"},
	        {"f\"g", "'f\"g'"},
	        {"$x", "'$x'"},
	        {"h\\i", "'h\\i'"},
	        {"j*", "'j*'"},
	        {"~k", "'~k'"},
	        {"l=m", "'l=m'"},
	        {"a,b", "'a,b'"},
	        {"x:y", "'x:y'"},
	        {"@", "'@'"},
	        {"%", "'%'"},
	        {"\xc3\xa9", "'\xc3\xa9'"},
	        {"t\tu", "'t\tu'"},
	        {"#a", "'#a'"},
	        {"!x", "'!x'"},
	        {"'", "\"'\""},
	        {"'a", "\"'\"'a'"},
	        {"a'", "'a'\"'\""},
	        {"''", "\"'\"''\"'\""},
	        {"a''b", "'a'\"'\"''\"'\"'b'"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		char *got = mg_shell_quote(cases[i].in);
		if (strcmp(got, cases[i].want) != 0)
			print_error("quote \"%s\": got %s, want %s\n", cases[i].in, got, cases[i].want);
		assert_string_equal(got, cases[i].want);
		free(got);
	}
}

static void match_table(void **state)
{
	static const struct {
		const char *s;
		size_t len;
		enum mg_rpl rpl;
		long pos;
	} cases[] = {
	        {"{}", 2, MG_RPL_ARG, 0},
	        {"{}x", 2, MG_RPL_ARG, 0},
	        {"{.}", 3, MG_RPL_NOEXT, 0},
	        {"{/}", 3, MG_RPL_BASE, 0},
	        {"{//}", 4, MG_RPL_DIR, 0},
	        {"{/.}", 4, MG_RPL_BASE_NOEXT, 0},
	        {"{#}", 3, MG_RPL_SEQ, 0},
	        {"{%}", 3, MG_RPL_SLOT, 0},
	        {"{1}", 3, MG_RPL_ARG, 1},
	        {"{12}", 4, MG_RPL_ARG, 12},
	        {"{-1}", 4, MG_RPL_ARG, -1},
	        {"{0}", 3, MG_RPL_ARG, 0},
	        {"{2.}", 4, MG_RPL_NOEXT, 2},
	        {"{2 .}", 5, MG_RPL_NOEXT, 2},
	        {"{3/}", 4, MG_RPL_BASE, 3},
	        {"{3//}", 5, MG_RPL_DIR, 3},
	        {"{3/.}", 5, MG_RPL_BASE_NOEXT, 3},
	        /* not replacement strings: left as they are */
	        {"{", 0, 0, 0},
	        {"{ }", 0, 0, 0},
	        {"{a}", 0, 0, 0},
	        {"{1#}", 0, 0, 0},
	        {"{-0}", 0, 0, 0},
	        {"{=$_=}", 0, 0, 0},
	        {"{..}", 0, 0, 0},
	        {"{ 1}", 0, 0, 0},
	        {"{1234567890}", 0, 0, 0},
	        {"x{}", 0, 0, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		enum mg_rpl rpl = 99;
		long pos = 99;
		size_t len = mg_rpl_match(cases[i].s, &rpl, &pos);
		if (len != cases[i].len)
			print_error("match \"%s\": %zu, want %zu\n", cases[i].s, len, cases[i].len);
		assert_int_equal(len, cases[i].len);
		if (!len)
			continue;
		assert_int_equal(rpl, cases[i].rpl);
		assert_int_equal(pos, cases[i].pos);
	}
}

static void apply_table(void **state)
{
	/* parallel -k --dry-run echo '[{//}]' '[{/}]' '[{.}]' '[{/.}]' ::: ... */
	static const struct {
		const char *arg, *dir, *base, *noext, *base_noext;
	} cases[] = {
	        {"a/b", "a", "b", "a/b", "b"},
	        {"b", ".", "b", "b", "b"},
	        {"/b", "/", "b", "/b", "b"},
	        {"a/b/", "a", "", "a/b/", ""},
	        {"/", "/", "", "/", ""},
	        {"", ".", "", "", ""},
	        {"a//b", "a", "b", "a//b", "b"},
	        {"//a", "/", "a", "//a", "a"},
	        {"a.b.c", ".", "a.b.c", "a.b", "a.b"},
	        {".bashrc", ".", ".bashrc", "", ""},
	        {"a/.x", "a", ".x", "a/", ""},
	        {"a.b/c", "a.b", "c", "a.b/c", "c"},
	        {"a b.c", ".", "a b.c", "a b", "a b"},
	        {"./x.y", ".", "x.y", "./x", "x"},
	        {"x.", ".", "x.", "x", "x"},
	        {".", ".", ".", "", ""},
	        {"..", ".", "..", ".", "."},
	        {"a/", ".", "", "a/", ""},
	        {"a/b.c/", "a", "", "a/b.c/", ""},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const char *want[] = {cases[i].dir, cases[i].base, cases[i].noext, cases[i].base_noext};
		const enum mg_rpl rpl[] = {MG_RPL_DIR, MG_RPL_BASE, MG_RPL_NOEXT, MG_RPL_BASE_NOEXT};
		for (size_t k = 0; k < 4; k++) {
			char *got = mg_rpl_apply(rpl[k], cases[i].arg);
			if (strcmp(got, want[k]) != 0)
				print_error("\"%s\", rpl %d: got \"%s\", want \"%s\"\n", cases[i].arg, rpl[k],
				            got, want[k]);
			assert_string_equal(got, want[k]);
			free(got);
		}
		char *same = mg_rpl_apply(MG_RPL_ARG, cases[i].arg);
		assert_string_equal(same, cases[i].arg);
		free(same);
	}
}

#define MAXW 8
struct compose_case {
	const char *words[MAXW]; /* NULL-terminated */
	bool quote;
	const char *args[4];
	size_t nargs;
	unsigned long seq;
	unsigned slot;
	const char *want;
};

static void compose_table(void **state)
{
	static const struct compose_case cases[] = {
	        {{"echo", "{}"}, false, {"a"}, 1, 1, 1, "echo a"},
	        {{"echo", "{}"}, false, {"b c"}, 1, 1, 1, "echo 'b c'"},
	        {{"echo"}, false, {"b c"}, 1, 1, 1, "echo 'b c'"},
	        {{"echo"}, false, {"a", "b"}, 2, 1, 1, "echo a b"},
	        {{"echo", "x{}y"}, false, {"a b"}, 1, 1, 1, "echo x'a b'y"},
	        {{"echo", "x{}y"}, false, {"a", "c"}, 2, 1, 1, "echo xa cy"},
	        {{"echo", "{}{}"}, false, {"a", "b"}, 2, 1, 1, "echo a ba b"},
	        {{"echo", "{1}", "{2}", "{1.}"}, false, {"a.x", "c"}, 2, 1, 1, "echo a.x c a"},
	        {{"echo", "[{1}]", "[{2}]", "[{3}]"}, false, {"a", "b"}, 2, 1, 1, "echo [a] [b] []"},
	        {{"echo", "[{1}]", "[{2}]", "[{3}]", "{3}"},
	         false,
	         {"x", "", ""},
	         3,
	         1,
	         1,
	         "echo [x] [''] [''] ''"},
	        {{"echo", "{3}"}, false, {"a", "b"}, 2, 1, 1, "echo "},
	        {{"echo", "{-1}", "{-3}"}, false, {"a", "b"}, 2, 1, 1, "echo b b"},
	        {{"echo", "{}", "{1}"}, false, {""}, 1, 1, 1, "echo '' ''"},
	        {{"echo", "{0}", "{1}"}, false, {"a b"}, 1, 1, 1, "echo 'a b' 'a b'"},
	        {{"echo", "{#}", "{%}"}, false, {"a", "b"}, 2, 12, 3, "echo 12 3"},
	        {{"echo", "{}", "|", "wc", "-c", ">", "{.}.n"},
	         false,
	         {"g h.gz"},
	         1,
	         1,
	         1,
	         "echo 'g h.gz' | wc -c > 'g h'.n"},
	        {{"echo {} | wc -c > {.}.n"}, false, {"f.gz"}, 1, 1, 1, "echo f.gz | wc -c > f.n"},
	        {{"echo", "", "{}"}, false, {"a b"}, 1, 1, 1, "echo  'a b'"},
	        /* the arguments name the program: nothing quoted */
	        {{"{}"}, false, {"echo a b"}, 1, 1, 1, "echo a b"},
	        {{NULL}, false, {"echo a b"}, 1, 1, 1, "echo a b"},
	        {{"my_{}", "{}"}, false, {"x y"}, 1, 1, 1, "my_x y x y"},
	        {{"V={}", "cmd", "{}"}, false, {"x y"}, 1, 1, 1, "V='x y' cmd 'x y'"},
	        {{"echo {}"}, false, {"x y"}, 1, 1, 1, "echo 'x y'"},
	        /* --quote: each word quoted, the argument inside it as it is */
	        {{"perl", "-e", "print \"{}\\n\""}, true, {"a b"}, 1, 1, 1, "perl -e 'print \"a b\\n\"'"},
	        {{"perl", "-e", "print \"{}\\n\""},
	         true,
	         {"c'd"},
	         1,
	         1,
	         1,
	         "perl -e 'print \"c'\"'\"'d\\n\"'"},
	        {{"echo", "x{}y"}, true, {"a b"}, 1, 1, 1, "echo 'xa by'"},
	        {{"echo", "x{}y", ""}, true, {"a b"}, 1, 1, 1, "echo 'xa by' ''"},
	        {{"echo", "x{}y"}, true, {"a", "c"}, 2, 1, 1, "echo xa cy"},
	        {{"echo"}, true, {"a b"}, 1, 1, 1, "echo 'a b'"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct compose_case *c = &cases[i];
		struct mg_compose_job job = {
		        .args = c->args, .nargs = c->nargs, .seq = c->seq, .slot = c->slot};
		char *got = mg_compose((char *const *)c->words, c->quote, &job);
		if (strcmp(got, c->want) != 0)
			print_error("case %zu: got [%s], want [%s]\n", i, got, c->want);
		assert_string_equal(got, c->want);
		free(got);
	}
}

static void has_rpl(void **state)
{
	char *plain[] = {"echo", "{ }", "{a}", "a{", NULL};
	char *some[] = {"echo", "x{/.}y", NULL};
	char *slot[] = {"echo", "{#}-{%}", NULL};
	char *none[] = {NULL};

	assert_false(mg_compose_has_rpl(plain));
	assert_true(mg_compose_has_rpl(some));
	assert_false(mg_compose_has_slot(some));
	assert_true(mg_compose_has_slot(slot));
	assert_false(mg_compose_has_rpl(none));
}

static void tag_joins(void **state)
{
	const char *args[] = {"a b", "", "c"};
	char *tag = mg_compose_tag(args, 3);

	assert_string_equal(tag, "a b  c");
	free(tag);
}

static void shell_table(void **state)
{
	char *parallel_shell[] = {"PARALLEL_SHELL=/bin/bash", "SHELL=/bin/zsh", NULL};
	char *bash[] = {"SHELL=/usr/bin/bash", NULL};
	char *csh[] = {"SHELL=/bin/tcsh", NULL};
	char *fish[] = {"SHELL=/usr/bin/fish", NULL};
	char *relative[] = {"SHELL=bash", NULL};
	char *none[] = {NULL};

	assert_string_equal(mg_compose_shell(parallel_shell), "/bin/bash");
	assert_string_equal(mg_compose_shell(bash), "/usr/bin/bash");
	assert_string_equal(mg_compose_shell(csh), "/bin/sh");
	assert_string_equal(mg_compose_shell(fish), "/bin/sh");
	assert_string_equal(mg_compose_shell(relative), "/bin/sh");
	assert_string_equal(mg_compose_shell(none), "/bin/sh");
}

static void program_and_split(void **state)
{
	static const struct {
		const char *words[4];
		const char *program;
	} cases[] = {
	        {{"python3", "sim.py", "{}"}, "python3"},
	        {{"python3 sim.py {}"}, "python3"},
	        {{"./run_one.sh {}"}, "./run_one.sh"},
	        {{"zcat {} | wc -l > {.}.n"}, "zcat"},
	        {{"{}"}, NULL},
	        {{"{} x"}, NULL},
	        {{NULL}, NULL},
	        {{"cd /tmp && make"}, NULL},
	        {{"for i in 1 2; do echo {}; done"}, NULL},
	        {{"V=1 cmd {}"}, NULL},
	        {{"$HOME/bin/x {}"}, NULL},
	        {{"exec", "x"}, NULL},
	        {{" echo {}"}, NULL},
	};
	char buf[64];

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const char *got = mg_compose_program((char *const *)cases[i].words, buf, sizeof(buf));
		if (!cases[i].program) {
			if (got)
				print_error("case %zu: program %s, want none\n", i, got);
			assert_null(got);
		} else {
			assert_non_null(got);
			assert_string_equal(got, cases[i].program);
		}
	}

	char *one[] = {"  python3\tsim.py  {} ", NULL}, *several[] = {"python3", "sim.py", NULL},
	     *word[] = {"python3", NULL};
	char **split = mg_compose_split(one);
	assert_non_null(split);
	assert_string_equal(split[0], "python3");
	assert_string_equal(split[1], "sim.py");
	assert_string_equal(split[2], "{}");
	assert_null(split[3]);
	for (size_t i = 0; split[i]; i++)
		free(split[i]);
	free(split);
	assert_null(mg_compose_split(several));
	assert_null(mg_compose_split(word));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(quote_table), cmocka_unit_test(match_table),
	        cmocka_unit_test(apply_table), cmocka_unit_test(compose_table),
	        cmocka_unit_test(has_rpl),     cmocka_unit_test(tag_joins),
	        cmocka_unit_test(shell_table), cmocka_unit_test(program_and_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
