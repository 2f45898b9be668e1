/* Runtime names and detection (argv shapes through wrappers, #! scripts,
 * files that cannot be read). File cases run in a mkdtemp() directory that
 * the group setup creates and the teardown removes. Go ELF binaries are in
 * test_elf_go.c, the heap flags in test_heapflags.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/runtime.h"

static char tmpdir[64];

/* ---------------------------------------------------------------------- */
/* Helpers */

static const char *tmp_path(const char *name)
{
	static char buf[4][PATH_MAX];
	static unsigned next;
	char *p = buf[next++ % 4];

	int n = snprintf(p, PATH_MAX, "%s/%s", tmpdir, name);

	assert_true(n > 0 && n < PATH_MAX);
	return p;
}

static void write_file(const char *name, const void *data, size_t len, mode_t mode)
{
	const char *path = tmp_path(name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(close(fd), 0);
}

static void write_script(const char *name, const char *text)
{
	write_file(name, text, strlen(text), 0755);
}

static enum mg_runtime detect1(const char *prog, const char *path_env, const char **ret_why)
{
	char *argv[] = {(char *)prog, (char *)"input.dat", NULL};

	return mg_runtime_detect(argv, path_env, ret_why);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/mg-test-runtime-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	return nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---------------------------------------------------------------------- */
/* Names */

static void test_name_round_trip(void **state)
{
	(void)state;
	for (int i = 0; i < MG_RUNTIME__COUNT; i++) {
		enum mg_runtime rt = MG_RUNTIME__COUNT;
		assert_int_equal(mg_runtime_from_name(mg_runtime_name((enum mg_runtime)i), &rt), 0);
		assert_int_equal(rt, i);
	}
	assert_string_equal(mg_runtime_name(MG_RUNTIME_GENERIC), "generic");
	assert_string_equal(mg_runtime_name(MG_RUNTIME_CPYTHON), "cpython");
	assert_string_equal(mg_runtime_name(MG_RUNTIME_PYPY), "pypy");
	assert_string_equal(mg_runtime_name(MG_RUNTIME_JVM), "jvm");
	assert_string_equal(mg_runtime_name(MG_RUNTIME_GO), "go");
	assert_string_equal(mg_runtime_name(MG_RUNTIME_NODE), "node");
	assert_string_equal(mg_runtime_name(MG_RUNTIME_DOTNET), "dotnet");
	assert_string_equal(mg_runtime_name(MG_RUNTIME_R), "r");
	assert_string_equal(mg_runtime_name(MG_RUNTIME__COUNT), "invalid");
}

static void test_name_aliases(void **state)
{
	static const struct {
		const char *name;
		int r;
		enum mg_runtime rt;
	} cases[] = {
	        {"python", 0, MG_RUNTIME_CPYTHON},
	        {"java", 0, MG_RUNTIME_JVM},
	        {"golang", 0, MG_RUNTIME_GO},
	        {"nodejs", 0, MG_RUNTIME_NODE},
	        {"JVM", 0, MG_RUNTIME_JVM},
	        {"R", 0, MG_RUNTIME_R},
	        {"PyPy", 0, MG_RUNTIME_PYPY},
	        {"pypy3", 0, MG_RUNTIME_PYPY},
	        {"Rscript", 0, MG_RUNTIME_R},
	        {"", -EINVAL, 0},
	        {"perl", -EINVAL, 0},
	        {"pythonx", -EINVAL, 0},
	        {"go ", -EINVAL, 0},
	        {"invalid", -EINVAL, 0},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum mg_runtime rt = MG_RUNTIME__COUNT;
		int r = mg_runtime_from_name(cases[i].name, &rt);
		if (r != cases[i].r)
			fail_msg("from_name(\"%s\") = %d, want %d", cases[i].name, r, cases[i].r);
		if (r == 0)
			assert_int_equal(rt, cases[i].rt);
		else
			assert_int_equal(rt, MG_RUNTIME__COUNT); /* untouched on failure */
	}
	assert_int_equal(mg_runtime_from_name(NULL, &(enum mg_runtime){0}), -EINVAL);
	assert_int_equal(mg_runtime_from_name("go", NULL), -EINVAL);
}

static void test_program_names(void **state)
{
	static const struct {
		const char *base;
		enum mg_runtime want;
	} cases[] = {
	        {"python", MG_RUNTIME_CPYTHON},
	        {"python3", MG_RUNTIME_CPYTHON},
	        {"python3.11", MG_RUNTIME_CPYTHON},
	        {"python3.11d", MG_RUNTIME_CPYTHON},
	        {"python3.13t", MG_RUNTIME_CPYTHON},
	        {"python3.12-dbg", MG_RUNTIME_CPYTHON},
	        {"python2.7m", MG_RUNTIME_CPYTHON},
	        {"pypy", MG_RUNTIME_PYPY},
	        {"pypy3.9", MG_RUNTIME_PYPY},
	        {"pypy3.9-c", MG_RUNTIME_PYPY},
	        {"java", MG_RUNTIME_JVM},
	        {"go", MG_RUNTIME_GO},
	        {"node", MG_RUNTIME_NODE},
	        {"node18", MG_RUNTIME_NODE},
	        {"nodejs", MG_RUNTIME_NODE},
	        {"R", MG_RUNTIME_R},
	        {"Rscript", MG_RUNTIME_R},
	        {"dotnet", MG_RUNTIME_DOTNET},
	        /* Close, but not a runtime's own name. */
	        {"", MG_RUNTIME_GENERIC},
	        {"python3-config", MG_RUNTIME_GENERIC},
	        {"python.3", MG_RUNTIME_GENERIC},
	        {"python3x", MG_RUNTIME_GENERIC},
	        {"python3.11-c", MG_RUNTIME_GENERIC},
	        {"pypy3d", MG_RUNTIME_GENERIC},
	        {"pythonista", MG_RUNTIME_GENERIC},
	        {"javac", MG_RUNTIME_GENERIC},
	        {"node-gyp", MG_RUNTIME_GENERIC},
	        {"node18a", MG_RUNTIME_GENERIC},
	        {"nodemon", MG_RUNTIME_GENERIC},
	        {"r", MG_RUNTIME_GENERIC},
	        {"Java", MG_RUNTIME_GENERIC},
	        {"gopls", MG_RUNTIME_GENERIC},
	        {"/usr/bin/java", MG_RUNTIME_GENERIC}, /* a path, not a basename */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum mg_runtime rt = mg_runtime_from_program_name(cases[i].base);
		if (rt != cases[i].want)
			fail_msg("\"%s\": got %s, want %s", cases[i].base, mg_runtime_name(rt),
			         mg_runtime_name(cases[i].want));
	}
}

static void test_wants_rlimit_as(void **state)
{
	static const bool want[MG_RUNTIME__COUNT] = {
	        [MG_RUNTIME_GENERIC] = false, [MG_RUNTIME_CPYTHON] = true, [MG_RUNTIME_PYPY] = true,
	        [MG_RUNTIME_JVM] = false,     [MG_RUNTIME_GO] = false,     [MG_RUNTIME_NODE] = false,
	        [MG_RUNTIME_DOTNET] = false,  [MG_RUNTIME_R] = true,
	};
	(void)state;
	for (int i = 0; i < MG_RUNTIME__COUNT; i++)
		if (mg_runtime_wants_rlimit_as((enum mg_runtime)i) != want[i])
			fail_msg("wants_rlimit_as(%s) != %d", mg_runtime_name((enum mg_runtime)i), want[i]);
	assert_false(mg_runtime_wants_rlimit_as(MG_RUNTIME__COUNT));
}

/* ---------------------------------------------------------------------- */
/* Detection from argv alone (no files: path_env NULL) */

struct argv_case {
	const char *argv[24];
	enum mg_runtime want;
	const char *why; /* exact phrase, or NULL for "any" */
};

static const struct argv_case argv_cases[] = {
        /* Versioned and plain names. */
        {{"python3", "sim.py"}, MG_RUNTIME_CPYTHON, "program name python3"},
        {{"python3.11", "-u", "sim.py"}, MG_RUNTIME_CPYTHON, "program name python3.11"},
        {{"/usr/bin/python2.7"}, MG_RUNTIME_CPYTHON, "program name python2.7"},
        {{"python"}, MG_RUNTIME_CPYTHON, NULL},
        {{"python3.13t"}, MG_RUNTIME_CPYTHON, NULL},
        {{"python3.12-dbg"}, MG_RUNTIME_CPYTHON, NULL},
        {{"python3", "pypy_script.py", "java"}, MG_RUNTIME_CPYTHON, "program name python3"},
        {{"pypy"}, MG_RUNTIME_PYPY, "program name pypy"},
        {{"pypy3", "sim.py"}, MG_RUNTIME_PYPY, "program name pypy3"},
        {{"/opt/pypy/bin/pypy3.9", "sim.py"}, MG_RUNTIME_PYPY, "program name pypy3.9"},
        {{"java", "-Xss1m", "-jar", "app.jar"}, MG_RUNTIME_JVM, "program name java"},
        {{"node", "app.js"}, MG_RUNTIME_NODE, "program name node"},
        {{"nodejs"}, MG_RUNTIME_NODE, NULL},
        {{"node20", "app.js"}, MG_RUNTIME_NODE, NULL},
        {{"R", "--vanilla"}, MG_RUNTIME_R, "program name R"},
        {{"Rscript", "fit.R"}, MG_RUNTIME_R, "program name Rscript"},
        {{"dotnet", "app.dll"}, MG_RUNTIME_DOTNET, "program name dotnet"},
        {{"go", "run", "main.go"}, MG_RUNTIME_GO, "program name go"},
        /* Not runtimes, though the names are close. */
        {{"python3-config"}, MG_RUNTIME_GENERIC, NULL},
        {{"pythonista"}, MG_RUNTIME_GENERIC, NULL},
        {{"javac", "A.java"}, MG_RUNTIME_GENERIC, NULL},
        {{"nodemon"}, MG_RUNTIME_GENERIC, NULL},
        {{"r"}, MG_RUNTIME_GENERIC, NULL},
        {{"gopls"}, MG_RUNTIME_GENERIC, NULL},
        /* Wrappers and their options. */
        {{"env", "pypy3", "sim.py"}, MG_RUNTIME_PYPY, "program name pypy3"},
        {{"/usr/bin/env", "-S", "pypy3 -u", "sim.py"}, MG_RUNTIME_PYPY, NULL},
        {{"env", "-Spypy3 -u"}, MG_RUNTIME_PYPY, NULL},
        {{"env", "--split-string=java -jar", "app.jar"}, MG_RUNTIME_JVM, NULL},
        {{"env", "-S", "-i A=1 'node' --expose-gc # comment"}, MG_RUNTIME_NODE, NULL},
        {{"env", "VAR=x", "OTHER=y", "pypy3"}, MG_RUNTIME_PYPY, NULL},
        {{"env", "-i", "-u", "HOME", "--chdir=/tmp", "-C", "/", "java"}, MG_RUNTIME_JVM, NULL},
        {{"env", "-iuHOME", "--unset", "PATH", "java"}, MG_RUNTIME_JVM, NULL},
        {{"env", "-", "node"}, MG_RUNTIME_NODE, NULL},
        {{"env", "--", "Rscript"}, MG_RUNTIME_R, NULL},
        {{"nice", "-n", "5", "python3"}, MG_RUNTIME_CPYTHON, NULL},
        {{"nice", "-n5", "Rscript"}, MG_RUNTIME_R, NULL},
        {{"nice", "-5", "dotnet"}, MG_RUNTIME_DOTNET, NULL},
        {{"nice", "--adjustment", "3", "node"}, MG_RUNTIME_NODE, NULL},
        {{"nice", "--adj=3", "node"}, MG_RUNTIME_NODE, NULL},
        {{"ionice", "-c3", "pypy3"}, MG_RUNTIME_PYPY, NULL},
        {{"ionice", "-c", "2", "-n", "7", "-t", "java"}, MG_RUNTIME_JVM, NULL},
        {{"time", "-f", "%M", "-o", "out.txt", "pypy3"}, MG_RUNTIME_PYPY, NULL},
        {{"/usr/bin/time", "-v", "--format=%e", "java"}, MG_RUNTIME_JVM, NULL},
        {{"stdbuf", "-oL", "-e", "0", "python3"}, MG_RUNTIME_CPYTHON, NULL},
        {{"stdbuf", "--output=L", "--input", "0", "node"}, MG_RUNTIME_NODE, NULL},
        {{"taskset", "-c", "0-3", "pypy3", "sim.py"}, MG_RUNTIME_PYPY, NULL},
        {{"taskset", "0x3", "java"}, MG_RUNTIME_JVM, NULL},
        {{"taskset", "--cpu-list", "1", "go", "run", "."}, MG_RUNTIME_GO, NULL},
        {{"numactl", "--cpunodebind=0", "--membind", "0", "--", "pypy3"}, MG_RUNTIME_PYPY, NULL},
        {{"numactl", "-N", "1", "-l", "-C", "0-7", "java"}, MG_RUNTIME_JVM, NULL},
        {{"numactl", "--interleave=all", "Rscript"}, MG_RUNTIME_R, NULL},
        {{"chrt", "-f", "10", "python3"}, MG_RUNTIME_CPYTHON, NULL},
        {{"chrt", "--idle", "0", "node"}, MG_RUNTIME_NODE, NULL},
        {{"chrt", "-T", "1000", "-P", "2000", "-D", "1500", "-d", "0", "dotnet"}, MG_RUNTIME_DOTNET, NULL},
        {{"nohup", "java", "-jar", "a.jar"}, MG_RUNTIME_JVM, NULL},
        {{"nohup", "--", "R"}, MG_RUNTIME_R, NULL},
        {{"timeout", "-k", "5", "60s", "pypy3"}, MG_RUNTIME_PYPY, NULL},
        {{"timeout", "--signal=TERM", "1h", "node"}, MG_RUNTIME_NODE, NULL},
        {{"setsid", "-w", "python3"}, MG_RUNTIME_CPYTHON, NULL},
        {{"--", "pypy3"}, MG_RUNTIME_PYPY, "program name pypy3"},
        {{"nice", "ionice", "-c3", "env", "X=1", "stdbuf", "-oL", "taskset", "-c", "1", "pypy3"},
         MG_RUNTIME_PYPY,
         "program name pypy3"},
        /* Hostile or empty. */
        {{NULL}, MG_RUNTIME_GENERIC, "no command to run"},
        {{""}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"--"}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"--", "--", "--"}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"env"}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"env", "A=1", "B=2"}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"env", "-u"}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"env", "-S"}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"env", "-S", ""}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"env", "-S", "'unterminated pypy3"}, MG_RUNTIME_GENERIC, NULL},
        {{"nice", "-n"}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"nice", ""}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"taskset", "-p", "1234"}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"taskset", "-c", "0-3"}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"ionice", "-p", "1", "pypy3"}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"numactl", "--show"}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"chrt", "-m"}, MG_RUNTIME_GENERIC, "no command to run"},
        {{"unknown-tool", "pypy3"},
         MG_RUNTIME_GENERIC,
         "unknown-tool not found, no runtime known by that name"},
        {{"nice", "nice", "nice", "nice", "nice", "nice", "nice", "nice", "nice", "nice", "pypy3"},
         MG_RUNTIME_GENERIC,
         "too many levels of wrappers or #! lines"},
        {{"env", "-S", "env -S 'env -S \"env -S \\\"env -S env -S env -S env -S env -S pypy3\\\"\"'"},
         MG_RUNTIME_GENERIC,
         NULL},
        {{"pypy3\n\x1b[2J"}, MG_RUNTIME_GENERIC, "pypy3??[2J not found, no runtime known by that name"},
};

static void test_detect_argv(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(argv_cases) / sizeof(argv_cases[0]); i++) {
		const struct argv_case *tc = &argv_cases[i];
		const char *why = NULL;
		enum mg_runtime rt = mg_runtime_detect((char *const *)tc->argv, NULL, &why);

		if (rt != tc->want)
			fail_msg("case %zu (%s ...): got %s, want %s (why: %s)", i,
			         tc->argv[0] ? tc->argv[0] : "NULL", mg_runtime_name(rt),
			         mg_runtime_name(tc->want), why ? why : "NULL");
		assert_non_null(why);
		if (tc->why && strcmp(why, tc->why) != 0)
			fail_msg("case %zu (%s ...): why \"%s\", want \"%s\"", i,
			         tc->argv[0] ? tc->argv[0] : "NULL", why, tc->why);
	}
}

static void test_detect_null_and_no_why(void **state)
{
	(void)state;
	assert_int_equal(mg_runtime_detect(NULL, NULL, NULL), MG_RUNTIME_GENERIC);
	assert_int_equal(mg_runtime_detect(NULL, "/usr/bin", &(const char *){NULL}), MG_RUNTIME_GENERIC);
	assert_int_equal(mg_runtime_detect((char *const[]){(char *)"pypy3", NULL}, NULL, NULL),
	                 MG_RUNTIME_PYPY);
}

static void test_detect_long_names(void **state)
{
	size_t len = 100000;
	char *junk = malloc(len + 1), *path = malloc(len + 16);
	const char *why = NULL;

	(void)state;
	assert_non_null(junk);
	assert_non_null(path);
	memset(junk, 'a', len);
	junk[len] = '\0';
	/* A huge unknown name: generic, and the phrase is cut, not overflowed. */
	assert_int_equal(detect1(junk, "/nonexistent", &why), MG_RUNTIME_GENERIC);
	assert_true(strlen(why) < 256);
	/* A huge directory part does not hide a runtime's basename. */
	memset(path, '/', len);
	strcpy(path + len, "bin/pypy3");
	assert_int_equal(detect1(path, NULL, &why), MG_RUNTIME_PYPY);
	assert_string_equal(why, "program name pypy3");
	/* An env -S string too big to hold is refused (generic), not cut into
	 * pieces that could name the wrong program. */
	char *split = malloc(len + 16);
	assert_non_null(split);
	memcpy(split, "A=", 2);
	memset(split + 2, 'x', len);
	strcpy(split + len, " pypy3");
	char *argv[] = {(char *)"env", (char *)"-S", split, NULL};
	assert_int_equal(mg_runtime_detect(argv, NULL, &why), MG_RUNTIME_GENERIC);
	assert_string_equal(why, "no command to run");
	free(split);
	free(junk);
	free(path);
}

static void test_detect_many_args(void **state)
{
	/* Thousands of program arguments: only the head matters. */
	enum { N = 5000 };
	char **argv = calloc(N + 1, sizeof(*argv));

	(void)state;
	assert_non_null(argv);
	argv[0] = (char *)"taskset";
	argv[1] = (char *)"-c";
	argv[2] = (char *)"0";
	argv[3] = (char *)"java";
	for (int i = 4; i < N; i++)
		argv[i] = (char *)"-Dx=y";
	assert_int_equal(mg_runtime_detect(argv, NULL, NULL), MG_RUNTIME_JVM);
	free(argv);
}

/* ---------------------------------------------------------------------- */
/* #! scripts */

struct script_case {
	const char *name;
	const char *text;
	enum mg_runtime want;
	bool why_is_shebang; /* the phrase must be "#! line of <path>" */
};

static const struct script_case script_cases[] = {
        {"env-pypy.py", "#!/usr/bin/env pypy3\nprint(1)\n", MG_RUNTIME_PYPY, true},
        {"python-u.py", "#!/usr/bin/python3 -u\nprint(1)\n", MG_RUNTIME_CPYTHON, true},
        {"env-S-java", "#!/usr/bin/env -S java -jar\n", MG_RUNTIME_JVM, true},
        {"env-S-pypy.py", "#!/usr/bin/env -S pypy3 -u -O\n", MG_RUNTIME_PYPY, true},
        {"crlf.py", "#!/usr/bin/env pypy3\r\nprint(1)\r\n", MG_RUNTIME_PYPY, true},
        {"blanks.js", "#!  \t/usr/bin/node   \t\nconsole.log(1)\n", MG_RUNTIME_NODE, true},
        {"no-newline.R", "#!/usr/bin/Rscript", MG_RUNTIME_R, true},
        {"env-var.py", "#!/usr/bin/env PYTHONUNBUFFERED=1 python3\n", MG_RUNTIME_GENERIC, false},
        {"env-S-var.py", "#!/usr/bin/env -S PYTHONUNBUFFERED=1 python3\n", MG_RUNTIME_CPYTHON, true},
        {"missing-known.py", "#!/nonexistent/bin/pypy3\n", MG_RUNTIME_PYPY, true},
        {"missing-unknown", "#!/nonexistent/bin/interp\n", MG_RUNTIME_GENERIC, false},
        /* Linux hands "pypy3 -u" to env as one name: no such program. */
        {"env-two-words.py", "#!/usr/bin/env pypy3 -u\n", MG_RUNTIME_GENERIC, false},
        {"no-shebang.py", "import sys\nprint(sys.argv)\n", MG_RUNTIME_GENERIC, false},
        {"empty", "", MG_RUNTIME_GENERIC, false},
        {"bare-bang", "#!\n", MG_RUNTIME_GENERIC, false},
        {"blank-bang", "#!   \n", MG_RUNTIME_GENERIC, false},
        {"shell.sh", "#!/bin/sh\nexec pypy3 sim.py\n", MG_RUNTIME_GENERIC, false},
        {"env-alone", "#!/usr/bin/env\n", MG_RUNTIME_GENERIC, false},
        {"nice-wrapper", "#!/usr/bin/nice -n5\n", MG_RUNTIME_GENERIC, false},
};

static void test_detect_scripts(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(script_cases) / sizeof(script_cases[0]); i++) {
		const struct script_case *tc = &script_cases[i];
		const char *why = NULL, *path = tmp_path(tc->name);
		char want_why[PATH_MAX + 32];
		enum mg_runtime rt;

		write_script(tc->name, tc->text);
		rt = detect1(path, NULL, &why);
		if (rt != tc->want)
			fail_msg("script %s: got %s, want %s (why: %s)", tc->name, mg_runtime_name(rt),
			         mg_runtime_name(tc->want), why);
		assert_non_null(why);
		snprintf(want_why, sizeof(want_why), "#! line of %s", path);
		if (tc->why_is_shebang)
			assert_string_equal(why, want_why);
	}
}

static void test_detect_script_cut_interpreter(void **state)
{
	/* No newline within the 256 bytes the kernel reads, and the interpreter
	 * name runs past them: the kernel refuses it, so do we. */
	char text[400];
	const char *why = NULL;

	(void)state;
	memcpy(text, "#!/", 3);
	memset(text + 3, 'd', sizeof(text) - 3 - 1);
	text[sizeof(text) - 1] = '\0';
	write_script("cut", text);
	assert_int_equal(detect1(tmp_path("cut"), NULL, &why), MG_RUNTIME_GENERIC);
	assert_non_null(strstr(why, "unusable #! line"));

	/* A long argument after a complete name is fine (it is only cut). */
	memcpy(text, "#!/usr/bin/python3 ", 19);
	memset(text + 19, 'x', sizeof(text) - 19 - 1);
	write_script("long-arg", text);
	assert_int_equal(detect1(tmp_path("long-arg"), NULL, &why), MG_RUNTIME_CPYTHON);
}

static void test_detect_script_nested_and_loops(void **state)
{
	char text[PATH_MAX + 16];
	const char *why = NULL;

	(void)state;
	/* A script whose interpreter is another script (Linux allows a few). */
	write_script("inner", "#!/usr/bin/env node\n");
	snprintf(text, sizeof(text), "#!%s\n", tmp_path("inner"));
	write_script("outer", text);
	assert_int_equal(detect1(tmp_path("outer"), NULL, &why), MG_RUNTIME_NODE);
	snprintf(text, sizeof(text), "#! line of %s", tmp_path("inner"));
	assert_string_equal(why, text);

	/* A script that names itself: the loop guard ends it. */
	snprintf(text, sizeof(text), "#!%s\n", tmp_path("self"));
	write_script("self", text);
	assert_int_equal(detect1(tmp_path("self"), NULL, &why), MG_RUNTIME_GENERIC);
	assert_string_equal(why, "too many levels of wrappers or #! lines");

	/* Two scripts naming each other through env. */
	snprintf(text, sizeof(text), "#!/usr/bin/env %s\n", tmp_path("ping"));
	write_script("pong", text);
	snprintf(text, sizeof(text), "#!/usr/bin/env %s\n", tmp_path("pong"));
	write_script("ping", text);
	assert_int_equal(detect1(tmp_path("ping"), NULL, &why), MG_RUNTIME_GENERIC);
	assert_string_equal(why, "too many levels of wrappers or #! lines");

	/* A bare #! name is relative to the cwd, never looked up in PATH. */
	write_script("relative", "#!pypy3\n");
	assert_int_equal(detect1(tmp_path("relative"), NULL, &why), MG_RUNTIME_PYPY);
	write_script("interp", "#!/usr/bin/env pypy3\n"); /* in PATH, not in the cwd */
	write_script("relative-unknown", "#!interp\n");
	assert_int_equal(detect1(tmp_path("relative-unknown"), tmpdir, &why), MG_RUNTIME_GENERIC);
}

static void test_detect_script_via_path_and_cwd(void **state)
{
	char path_env[PATH_MAX + 64];
	const char *why = NULL;
	int cwd;

	(void)state;
	write_script("sim-bare.py", "#!/usr/bin/env pypy3\n");
	snprintf(path_env, sizeof(path_env), "/nonexistent::%s:/usr/bin", tmpdir);
	assert_int_equal(detect1("sim-bare.py", path_env, &why), MG_RUNTIME_PYPY);
	assert_string_equal(why, "#! line of sim-bare.py");
	/* Without a PATH a bare unknown name is not searched for. */
	assert_int_equal(detect1("sim-bare.py", NULL, &why), MG_RUNTIME_GENERIC);
	/* Not executable: execvp would skip it, so do we. */
	write_file("noexec.py", "#!/usr/bin/env pypy3\n", 21, 0644);
	snprintf(path_env, sizeof(path_env), "%s", tmpdir);
	assert_int_equal(detect1("noexec.py", path_env, &why), MG_RUNTIME_GENERIC);

	/* ./sim.py is relative to the current directory. */
	write_script("sim.py", "#!/usr/bin/env -S pypy3 -u\n");
	cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(cwd >= 0);
	assert_int_equal(chdir(tmpdir), 0);
	enum mg_runtime rt = detect1("./sim.py", NULL, &why);
	assert_int_equal(fchdir(cwd), 0);
	close(cwd);
	assert_int_equal(rt, MG_RUNTIME_PYPY);
	assert_string_equal(why, "#! line of ./sim.py");

	/* Through wrappers. */
	char *argv[] = {(char *)"nice",
	                (char *)"-n",
	                (char *)"3",
	                (char *)"env",
	                (char *)"A=1",
	                (char *)tmp_path("sim.py"),
	                NULL};
	assert_int_equal(mg_runtime_detect(argv, NULL, &why), MG_RUNTIME_PYPY);
}

static void test_detect_unreadable(void **state)
{
	const char *why = NULL;

	(void)state;
	/* A FIFO must not block the launcher; a directory, a dangling link or a
	 * missing file are no runtime either. */
	assert_int_equal(mkfifo(tmp_path("fifo"), 0755), 0);
	alarm(10); /* a blocking open would hang here: let SIGALRM fail the run instead */
	assert_int_equal(detect1(tmp_path("fifo"), NULL, &why), MG_RUNTIME_GENERIC);
	alarm(0);
	assert_non_null(strstr(why, "cannot read"));
	assert_int_equal(mkdir(tmp_path("adir"), 0755), 0);
	assert_int_equal(detect1(tmp_path("adir"), NULL, &why), MG_RUNTIME_GENERIC);
	assert_int_equal(symlink("/nonexistent/target", tmp_path("dangling")), 0);
	assert_int_equal(detect1(tmp_path("dangling"), NULL, &why), MG_RUNTIME_GENERIC);
	assert_int_equal(detect1(tmp_path("no-such-file"), NULL, &why), MG_RUNTIME_GENERIC);
	assert_non_null(strstr(why, "cannot read"));

	/* Mode 000: root reads it anyway, so only a non-root run can check. */
	write_file("noread.py", "#!/usr/bin/env pypy3\n", 21, 0);
	if (geteuid() != 0) {
		assert_int_equal(detect1(tmp_path("noread.py"), NULL, &why), MG_RUNTIME_GENERIC);
		assert_non_null(strstr(why, "cannot read"));
	} else {
		assert_int_equal(detect1(tmp_path("noread.py"), NULL, &why), MG_RUNTIME_PYPY);
	}
}

static void test_detect_symlink_to_runtime(void **state)
{
	const char *why = NULL;

	(void)state;
	assert_int_equal(mkdir(tmp_path("jdk"), 0755), 0);
	write_script("jdk/java", "not really java");
	assert_int_equal(symlink(tmp_path("jdk/java"), tmp_path("mytool")), 0);
	assert_int_equal(detect1(tmp_path("mytool"), NULL, &why), MG_RUNTIME_JVM);
	assert_non_null(strstr(why, "link target"));
}

/* The issue's wrappers: a script that execs PyPy and sh -c are generic, so
 * detection cannot reach the PyPy; the generic set still gives it its cap
 * (the full table is in test_heapflags.c). */
static void test_detect_wrapper_is_generic(void **state)
{
	const char *script = tmp_path("run_one.sh");
	char *shc[] = {(char *)"sh", (char *)"-c", (char *)"cd case_$MEMGUARD_TASK && exec pypy3 sim.py",
	               NULL};
	char *file[] = {(char *)script, NULL};
	char *const *cmds[] = {shc, file};
	struct mg_env_setting set[MG_HEAP_SETTINGS_MAX];
	const char *why = NULL;
	char note[256];

	(void)state;
	write_script("run_one.sh", "#!/bin/sh\ncd case_$MEMGUARD_TASK\nexec pypy3 sim.py\n");
	for (size_t i = 0; i < 2; i++) {
		enum mg_runtime rt = mg_runtime_detect(cmds[i], "/usr/bin:/bin", &why);
		assert_int_equal(rt, MG_RUNTIME_GENERIC);
		assert_string_equal(why, "no runtime known for sh");
		int n = mg_heap_settings(rt, 256u << 20, NULL, cmds[i], set);
		assert_int_equal(n, 5);
		assert_string_equal(set[0].name, "PYPY_GC_MAX");
		assert_string_equal(set[0].value, "160MB");
		mg_heap_describe(rt, cmds[i], set, (size_t)n, note, sizeof(note));
		assert_true(strncmp(note, i == 0 ? "sh: PYPY_GC_MAX, " : "run_one.sh: PYPY_GC_MAX, ",
		                    i == 0 ? 17 : 25) == 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_name_round_trip),
	        cmocka_unit_test(test_name_aliases),
	        cmocka_unit_test(test_program_names),
	        cmocka_unit_test(test_wants_rlimit_as),
	        cmocka_unit_test(test_detect_argv),
	        cmocka_unit_test(test_detect_null_and_no_why),
	        cmocka_unit_test(test_detect_long_names),
	        cmocka_unit_test(test_detect_many_args),
	        cmocka_unit_test(test_detect_scripts),
	        cmocka_unit_test(test_detect_script_cut_interpreter),
	        cmocka_unit_test(test_detect_script_nested_and_loops),
	        cmocka_unit_test(test_detect_script_via_path_and_cwd),
	        cmocka_unit_test(test_detect_unreadable),
	        cmocka_unit_test(test_detect_symlink_to_runtime),
	        cmocka_unit_test(test_detect_wrapper_is_generic),
	};

	return cmocka_run_group_tests_name("runtime", tests, group_setup, group_teardown);
}
