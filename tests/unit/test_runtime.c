/* Runtime detection (argv shapes, #! scripts, Go ELF binaries) and the heap
 * settings each runtime gets for a share. File cases run in a mkdtemp()
 * directory that the group setup creates and the teardown removes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)

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

/* ---------------------------------------------------------------------- */
/* ELF: fake Go binaries written byte by byte */

struct fake_elf {
	bool is64, big_endian;
	bool sections;   /* a section table with .go.buildinfo (or without, see go_section) */
	bool go_section; /* the table names .go.buildinfo */
	bool segment;    /* a writable PT_LOAD over the data */
	bool magic;      /* the data starts with the Go build info magic */
	uint64_t data_off;
	uint64_t magic_at; /* offset of the magic inside the data */
};

static void put(uint8_t *p, uint64_t v, unsigned size, bool big_endian)
{
	for (unsigned i = 0; i < size; i++)
		p[big_endian ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static void pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	assert_int_equal(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
}

static void write_fake_elf(const char *name, const struct fake_elf *f)
{
	static const char shstrtab[] = "\0.shstrtab\0.go.buildinfo\0.text\0.data";
	const bool be = f->big_endian;
	const unsigned ehsize = f->is64 ? 64 : 52, phentsize = f->is64 ? 56 : 32,
	               shentsize = f->is64 ? 64 : 40;
	const uint64_t phoff = ehsize, strtab_off = f->data_off + 0x1000, shoff = f->data_off + 0x1100;
	const uint32_t data_name = f->go_section ? 11 : 31; /* ".go.buildinfo" or ".data" */
	uint8_t eh[64] = {0}, ph[56] = {0}, sh[4][64] = {{0}}, data[256] = {0};
	int fd = open(tmp_path(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	assert_true(fd >= 0);
	memcpy(eh,
	       "\x7f"
	       "ELF",
	       4);
	eh[4] = f->is64 ? 2 : 1;
	eh[5] = be ? 2 : 1;
	eh[6] = 1;
	put(eh + 16, 2, 2, be); /* ET_EXEC */
	put(eh + 18, f->is64 ? 62 : 3, 2, be);
	put(eh + 20, 1, 4, be);
	if (f->is64) {
		put(eh + 32, f->segment ? phoff : 0, 8, be);
		put(eh + 40, f->sections ? shoff : 0, 8, be);
		put(eh + 52, ehsize, 2, be);
		put(eh + 54, phentsize, 2, be);
		put(eh + 56, f->segment ? 1 : 0, 2, be);
		put(eh + 58, shentsize, 2, be);
		put(eh + 60, f->sections ? 4 : 0, 2, be);
		put(eh + 62, f->sections ? 3 : 0, 2, be);
	} else {
		put(eh + 28, f->segment ? phoff : 0, 4, be);
		put(eh + 32, f->sections ? shoff : 0, 4, be);
		put(eh + 40, ehsize, 2, be);
		put(eh + 42, phentsize, 2, be);
		put(eh + 44, f->segment ? 1 : 0, 2, be);
		put(eh + 46, shentsize, 2, be);
		put(eh + 48, f->sections ? 4 : 0, 2, be);
		put(eh + 50, f->sections ? 3 : 0, 2, be);
	}
	pwrite_all(fd, eh, ehsize, 0);

	if (f->segment) {
		if (f->is64) {
			put(ph, 1, 4, be);     /* PT_LOAD */
			put(ph + 4, 6, 4, be); /* PF_R | PF_W */
			put(ph + 8, f->data_off, 8, be);
			put(ph + 32, sizeof(data), 8, be);
			put(ph + 40, sizeof(data), 8, be);
		} else {
			put(ph, 1, 4, be);
			put(ph + 4, f->data_off, 4, be);
			put(ph + 16, sizeof(data), 4, be);
			put(ph + 20, sizeof(data), 4, be);
			put(ph + 24, 6, 4, be);
		}
		pwrite_all(fd, ph, phentsize, phoff);
	}

	memcpy(data + 100, "filler, not the magic", 21);
	if (f->magic)
		memcpy(data + f->magic_at, "\xff Go buildinf:", 14);
	pwrite_all(fd, data, sizeof(data), f->data_off);

	if (f->sections) {
		/* [0] null, [1] .text, [2] .go.buildinfo or .data, [3] .shstrtab */
		const struct {
			uint32_t name, type;
			uint64_t off, size;
		} s[4] = {{0, 0, 0, 0},
		          {25, 1, ehsize, 16},
		          {data_name, 1, f->data_off, sizeof(data)},
		          {1, 3, strtab_off, sizeof(shstrtab)}};
		for (int i = 0; i < 4; i++) {
			put(sh[i], s[i].name, 4, be);
			put(sh[i] + 4, s[i].type, 4, be);
			if (f->is64) {
				put(sh[i] + 24, s[i].off, 8, be);
				put(sh[i] + 32, s[i].size, 8, be);
			} else {
				put(sh[i] + 16, s[i].off, 4, be);
				put(sh[i] + 20, s[i].size, 4, be);
			}
			pwrite_all(fd, sh[i], shentsize, shoff + (uint64_t)i * shentsize);
		}
		pwrite_all(fd, shstrtab, sizeof(shstrtab), strtab_off);
	}
	assert_int_equal(close(fd), 0);
}

static void test_detect_go_elf(void **state)
{
	static const struct {
		const char *name;
		struct fake_elf elf;
		enum mg_runtime want;
	} cases[] = {
	        {"go64", {true, false, true, true, false, true, 0x2000, 0}, MG_RUNTIME_GO},
	        {"go32be", {false, true, true, true, false, true, 0x2000, 0}, MG_RUNTIME_GO},
	        /* 8 MiB in (a sparse file): past any fixed-size prefix scan. */
	        {"go-far", {true, false, true, true, false, true, 8 * MIB, 0}, MG_RUNTIME_GO},
	        /* No section table (sstrip): the data segment is searched at 16-byte steps. */
	        {"go-nosections", {true, false, false, false, true, true, 0x2000, 48}, MG_RUNTIME_GO},
	        {"go-nosections32", {false, false, false, false, true, true, 0x2000, 32}, MG_RUNTIME_GO},
	        /* Not Go: the section is there but holds something else. */
	        {"fake-section", {true, false, true, true, false, false, 0x2000, 0}, MG_RUNTIME_GENERIC},
	        /* Old layout: no .go.buildinfo section, the blob opens the data segment. */
	        {"go-old-layout", {true, false, true, false, true, true, 0x2000, 0}, MG_RUNTIME_GO},
	        /* Not Go: sections and a data segment, no magic anywhere. */
	        {"c-program", {true, false, true, false, true, false, 0x2000, 0}, MG_RUNTIME_GENERIC},
	        /* Not Go: magic off the 16-byte alignment Go uses. */
	        {"misaligned", {true, false, false, false, true, true, 0x2000, 40}, MG_RUNTIME_GENERIC},
	        /* Not Go: no sections, no segments. */
	        {"bare-elf", {true, false, false, false, false, true, 0x2000, 0}, MG_RUNTIME_GENERIC},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = NULL;
		enum mg_runtime rt;

		write_fake_elf(cases[i].name, &cases[i].elf);
		rt = detect1(tmp_path(cases[i].name), NULL, &why);
		if (rt != cases[i].want)
			fail_msg("%s: got %s, want %s (%s)", cases[i].name, mg_runtime_name(rt),
			         mg_runtime_name(cases[i].want), why);
		if (rt == MG_RUNTIME_GO)
			assert_non_null(strstr(why, "Go build info in "));
	}
}

static void test_detect_broken_elf(void **state)
{
	uint8_t buf[128] = {0};
	const char *why = NULL;

	(void)state;
	/* Just the ident. */
	write_file("elf-ident",
	           "\x7f"
	           "ELF\x02\x01\x01",
	           7, 0755);
	assert_int_equal(detect1(tmp_path("elf-ident"), NULL, &why), MG_RUNTIME_GENERIC);
	/* A header whose tables point far past the end of the file. */
	memcpy(buf,
	       "\x7f"
	       "ELF\x02\x01\x01",
	       7);
	put(buf + 32, UINT64_C(0x7fffffffffff0000), 8, false); /* phoff */
	put(buf + 40, UINT64_MAX - 10, 8, false);              /* shoff */
	put(buf + 54, 56, 2, false);
	put(buf + 56, 1, 2, false);
	put(buf + 58, 64, 2, false);
	put(buf + 60, 0xffff, 2, false);
	put(buf + 62, 0xfffe, 2, false);
	write_file("elf-wild", buf, sizeof(buf), 0755);
	assert_int_equal(detect1(tmp_path("elf-wild"), NULL, &why), MG_RUNTIME_GENERIC);
	/* Extended numbering (shnum 0, shstrndx in section 0) with a table
	 * that runs past the end of the file. */
	put(buf + 32, 0, 8, false);
	put(buf + 40, 64, 8, false);
	put(buf + 60, 0, 2, false);
	put(buf + 62, 0xffff, 2, false);
	put(buf + 64 + 32, 3, 8, false); /* section 0 sh_size: 3 sections */
	put(buf + 64 + 40, 2, 4, false); /* section 0 sh_link: shstrndx 2 */
	write_file("elf-xnum", buf, sizeof(buf), 0755);
	assert_int_equal(detect1(tmp_path("elf-xnum"), NULL, &why), MG_RUNTIME_GENERIC);
	/* A bad class byte. */
	buf[4] = 9;
	write_file("elf-class", buf, sizeof(buf), 0755);
	assert_int_equal(detect1(tmp_path("elf-class"), NULL, &why), MG_RUNTIME_GENERIC);
}

static void test_detect_real_binaries(void **state)
{
	static const char *const go_binaries[] = {"/usr/lib/go/bin/gofmt", "/usr/lib/go/bin/go",
	                                          "/usr/local/go/bin/gofmt"};
	const char *why = NULL;

	(void)state;
	/* /bin/true: a real ELF, not Go. */
	assert_int_equal(detect1("/bin/true", NULL, &why), MG_RUNTIME_GENERIC);
	assert_string_equal(why, "no runtime known for true");
	assert_int_equal(detect1("true", "/nonexistent:/usr/bin:/bin", &why), MG_RUNTIME_GENERIC);
	assert_string_equal(why, "no runtime known for true");

	for (size_t i = 0; i < sizeof(go_binaries) / sizeof(go_binaries[0]); i++) {
		if (access(go_binaries[i], X_OK) != 0)
			continue;
		assert_int_equal(detect1(go_binaries[i], NULL, &why), MG_RUNTIME_GO);
		assert_non_null(strstr(why, "Go build info in "));
		return;
	}
	fail_msg("no Go binary found (golang-go, a test dependency, ships gofmt)");
}

/* ---------------------------------------------------------------------- */
/* Heap caps and settings */

static void test_heap_cap(void **state)
{
	static const struct {
		enum mg_runtime rt;
		uint64_t share, want;
	} cases[] = {
	        /* The two reference shares (see docs/runtimes.md). */
	        {MG_RUNTIME_PYPY, 256 * MIB, 160 * MIB},
	        {MG_RUNTIME_PYPY, 4 * GIB, 3760 * MIB},
	        {MG_RUNTIME_JVM, 256 * MIB, 144 * MIB},
	        {MG_RUNTIME_JVM, 4 * GIB, 3024 * MIB},
	        {MG_RUNTIME_GO, 256 * MIB, 214 * MIB},
	        {MG_RUNTIME_GO, 4 * GIB, 3670 * MIB},
	        {MG_RUNTIME_NODE, 256 * MIB, 96 * MIB},
	        {MG_RUNTIME_NODE, 4 * GIB, 2976 * MIB},
	        {MG_RUNTIME_DOTNET, 256 * MIB, 160 * MIB},
	        {MG_RUNTIME_DOTNET, 4 * GIB, 3040 * MIB},
	        {MG_RUNTIME_R, 256 * MIB, 160 * MIB},
	        {MG_RUNTIME_R, 4 * GIB, 3520 * MIB},
	        /* Small VM shares: the floor (a quarter of the share) takes over. */
	        {MG_RUNTIME_PYPY, 128 * MIB, 40 * MIB},
	        {MG_RUNTIME_PYPY, 200 * MIB, 107 * MIB},
	        {MG_RUNTIME_NODE, 128 * MIB, 32 * MIB},
	        {MG_RUNTIME_JVM, 100 * MIB, 27 * MIB},
	        {MG_RUNTIME_JVM, 64 * MIB, 16 * MIB},
	        {MG_RUNTIME_R, 64 * MIB, 16 * MIB},
	        /* Below the runtime's minimum the share itself is the cap. */
	        {MG_RUNTIME_GO, 8 * MIB, 8 * MIB},
	        {MG_RUNTIME_DOTNET, 16 * MIB, 16 * MIB},
	        {MG_RUNTIME_DOTNET, 40 * MIB, 20 * MIB},
	        {MG_RUNTIME_JVM, 512 * 1024, 0},
	        /* Big shares stay exact. */
	        {MG_RUNTIME_JVM, 1024 * GIB, 786384 * MIB},
	        /* No cap: runtimes without a heap flag, no share, no real limit. */
	        {MG_RUNTIME_GENERIC, 4 * GIB, 0},
	        {MG_RUNTIME_CPYTHON, 4 * GIB, 0},
	        {MG_RUNTIME_JVM, 0, 0},
	        {MG_RUNTIME_JVM, UINT64_MAX, 0},
	        {MG_RUNTIME_PYPY, UINT64_C(1) << 50, 0},
	        {MG_RUNTIME__COUNT, 4 * GIB, 0},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t cap = mg_heap_cap(cases[i].rt, cases[i].share);
		if (cap != cases[i].want)
			fail_msg("cap(%s, %" PRIu64 ") = %" PRIu64 ", want %" PRIu64,
			         mg_runtime_name(cases[i].rt), cases[i].share, cap, cases[i].want);
		/* Whole MiB, never above the share. */
		assert_int_equal(cap % MIB, 0);
		assert_true(cap <= cases[i].share);
	}
}

static void test_heap_cap_monotonic(void **state)
{
	(void)state;
	for (int rt = MG_RUNTIME_PYPY; rt < MG_RUNTIME__COUNT; rt++) {
		uint64_t prev = 0;
		for (uint64_t share = 1 * MIB; share <= 64 * GIB; share += share / 8 + MIB) {
			uint64_t cap = mg_heap_cap((enum mg_runtime)rt, share);
			if (share / 4 >= MIB)
				assert_true(cap >= share / 4 - MIB);
			if (cap < prev)
				fail_msg("%s: cap drops at share %" PRIu64,
				         mg_runtime_name((enum mg_runtime)rt), share);
			assert_true(cap <= share);
			prev = cap;
		}
	}
}

struct heap_case {
	const char *what;
	enum mg_runtime rt;
	uint64_t share;
	const char *envp[8];
	const char *argv[12];
	struct {
		const char *name, *value;
	} want[MG_HEAP_SETTINGS_MAX];
};

static const struct heap_case heap_cases[] = {
        /* Each runtime at both reference shares, nothing set by the user. */
        {"pypy 256M",
         MG_RUNTIME_PYPY,
         256 * MIB,
         {"HOME=/root"},
         {"pypy3", "sim.py"},
         {{"PYPY_GC_MAX", "160MB"}}},
        {"pypy 4G", MG_RUNTIME_PYPY, 4 * GIB, {NULL}, {"pypy3"}, {{"PYPY_GC_MAX", "3760MB"}}},
        {"jvm 256M",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"java", "-jar", "a.jar"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm 4G",
         MG_RUNTIME_JVM,
         4 * GIB,
         {NULL},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx3024m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"go 256M", MG_RUNTIME_GO, 256 * MIB, {NULL}, {"./sim"}, {{"GOMEMLIMIT", "214MiB"}}},
        {"go 4G", MG_RUNTIME_GO, 4 * GIB, {NULL}, {"go", "run", "."}, {{"GOMEMLIMIT", "3670MiB"}}},
        {"node 256M",
         MG_RUNTIME_NODE,
         256 * MIB,
         {NULL},
         {"node", "app.js"},
         {{"NODE_OPTIONS", "--max-old-space-size=96"}}},
        {"node 4G",
         MG_RUNTIME_NODE,
         4 * GIB,
         {NULL},
         {"node", "app.js"},
         {{"NODE_OPTIONS", "--max-old-space-size=2976"}}},
        {"dotnet 256M",
         MG_RUNTIME_DOTNET,
         256 * MIB,
         {NULL},
         {"dotnet", "a.dll"},
         {{"DOTNET_GCHeapHardLimit", "0xA000000"}}},
        {"dotnet 4G",
         MG_RUNTIME_DOTNET,
         4 * GIB,
         {NULL},
         {"dotnet", "a.dll"},
         {{"DOTNET_GCHeapHardLimit", "0xBE000000"}}},
        {"r 256M", MG_RUNTIME_R, 256 * MIB, {NULL}, {"Rscript", "fit.R"}, {{"R_MAX_VSIZE", "160M"}}},
        {"r 4G", MG_RUNTIME_R, 4 * GIB, {NULL}, {"R"}, {{"R_MAX_VSIZE", "3520M"}}},
        {"cpython", MG_RUNTIME_CPYTHON, 4 * GIB, {NULL}, {"python3"}, {{NULL, NULL}}},
        {"generic", MG_RUNTIME_GENERIC, 4 * GIB, {NULL}, {"./a.out"}, {{NULL, NULL}}},
        {"no share", MG_RUNTIME_JVM, 0, {NULL}, {"java"}, {{NULL, NULL}}},

        /* The user's own settings win: set, even empty, means theirs. */
        {"pypy user", MG_RUNTIME_PYPY, 4 * GIB, {"PYPY_GC_MAX=1GB"}, {"pypy3"}, {{NULL, NULL}}},
        {"pypy empty", MG_RUNTIME_PYPY, 4 * GIB, {"PYPY_GC_MAX="}, {"pypy3"}, {{NULL, NULL}}},
        {"pypy other var",
         MG_RUNTIME_PYPY,
         4 * GIB,
         {"PYPY_GC_MAXX=1", "XPYPY_GC_MAX=1"},
         {"pypy3"},
         {{"PYPY_GC_MAX", "3760MB"}}},
        {"pypy env wrapper",
         MG_RUNTIME_PYPY,
         4 * GIB,
         {NULL},
         {"env", "PYPY_GC_MAX=2GB", "pypy3"},
         {{NULL, NULL}}},
        {"pypy env -S wrapper",
         MG_RUNTIME_PYPY,
         4 * GIB,
         {NULL},
         {"nice", "env", "-S", "PYPY_GC_MAX=2GB pypy3 -u", "x.py"},
         {{NULL, NULL}}},
        {"go user", MG_RUNTIME_GO, 4 * GIB, {"GOMEMLIMIT=1GiB"}, {"./sim"}, {{NULL, NULL}}},
        {"go empty", MG_RUNTIME_GO, 4 * GIB, {"GOMEMLIMIT="}, {"./sim"}, {{NULL, NULL}}},
        {"r user", MG_RUNTIME_R, 4 * GIB, {"R_MAX_VSIZE=1G"}, {"R"}, {{NULL, NULL}}},
        {"dotnet user",
         MG_RUNTIME_DOTNET,
         4 * GIB,
         {"DOTNET_GCHeapHardLimit=0x10000000"},
         {"dotnet"},
         {{NULL, NULL}}},
        {"dotnet percent",
         MG_RUNTIME_DOTNET,
         4 * GIB,
         {"DOTNET_GCHeapHardLimitPercent=0x32"},
         {"dotnet"},
         {{NULL, NULL}}},
        {"dotnet complus",
         MG_RUNTIME_DOTNET,
         4 * GIB,
         {"COMPlus_GCHeapHardLimitSOH=0x10000000"},
         {"dotnet"},
         {{NULL, NULL}}},
        {"dotnet case",
         MG_RUNTIME_DOTNET,
         4 * GIB,
         {"dotnet_gcheaphardlimit=0x10000000"},
         {"dotnet"},
         {{NULL, NULL}}},
        {"dotnet other",
         MG_RUNTIME_DOTNET,
         4 * GIB,
         {"DOTNET_gcServer=1"},
         {"dotnet"},
         {{"DOTNET_GCHeapHardLimit", "0xBE000000"}}},

        /* JVM: append to the user's options; theirs for the heap win. */
        {"jvm append",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JAVA_TOOL_OPTIONS=-Dfile.encoding=UTF-8"},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Dfile.encoding=UTF-8 -Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm empty list",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JAVA_TOOL_OPTIONS="},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm xmx in tool options",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JAVA_TOOL_OPTIONS=-Dx=1  -Xmx1g"},
         {"java", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm percentage",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"_JAVA_OPTIONS=-XX:MaxRAMPercentage=50"},
         {"java", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm jdk options",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JDK_JAVA_OPTIONS=-XX:MaxRAM=1g"},
         {"java", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm argv xmx",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"java", "-cp", "lib/*", "-Xmx2g", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm argv heapsize",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"taskset", "-c", "0", "java", "@opts", "-XX:MaxHeapSize=1g", "-jar", "a.jar"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm program arg",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"java", "-jar", "a.jar", "-Xmx2g"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm main class arg",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"java", "Main", "-Xmx2g"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm script arg",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"./run-java.sh", "-Xmx2g"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm big xms",
         MG_RUNTIME_JVM,
         256 * MIB,
         {NULL},
         {"java", "-Xms4g", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm small xms",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JAVA_TOOL_OPTIONS=-Xms64m"},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Xms64m -Xmx144m"}, {"MALLOC_ARENA_MAX", "4"}}},
        {"jvm big initial percent",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JAVA_TOOL_OPTIONS=-XX:InitialRAMPercentage=90"},
         {"java", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},
        {"jvm arena user",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"MALLOC_ARENA_MAX=8"},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}}},
        {"jvm arena empty",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"MALLOC_ARENA_MAX="},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}}},
        {"jvm arena tunable",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"GLIBC_TUNABLES=glibc.malloc.arena_max=2"},
         {"java", "Main"},
         {{"JAVA_TOOL_OPTIONS", "-Xmx144m"}}},
        {"jvm wrapper replaces list",
         MG_RUNTIME_JVM,
         256 * MIB,
         {"JAVA_TOOL_OPTIONS=-Da=1"},
         {"env", "JAVA_TOOL_OPTIONS=-Db=2", "java", "Main"},
         {{"MALLOC_ARENA_MAX", "4"}}},

        /* Node: the same, with V8's '-'/'_' spellings. */
        {"node append",
         MG_RUNTIME_NODE,
         256 * MIB,
         {"NODE_OPTIONS=--enable-source-maps"},
         {"node", "a.js"},
         {{"NODE_OPTIONS", "--enable-source-maps --max-old-space-size=96"}}},
        {"node user options",
         MG_RUNTIME_NODE,
         256 * MIB,
         {"NODE_OPTIONS=--max-old-space-size=512"},
         {"node", "a.js"},
         {{NULL, NULL}}},
        {"node user underscore",
         MG_RUNTIME_NODE,
         256 * MIB,
         {"NODE_OPTIONS=-r x --max_old_space_size=512"},
         {"node", "a.js"},
         {{NULL, NULL}}},
        {"node argv",
         MG_RUNTIME_NODE,
         256 * MIB,
         {NULL},
         {"node", "-r", "ts-node/register", "--max_old-space_size=100", "a.js"},
         {{NULL, NULL}}},
        {"node argv heap",
         MG_RUNTIME_NODE,
         256 * MIB,
         {NULL},
         {"node", "--max-heap-size=100", "a.js"},
         {{NULL, NULL}}},
        {"node script arg",
         MG_RUNTIME_NODE,
         256 * MIB,
         {NULL},
         {"node", "a.js", "--max-old-space-size=100"},
         {{"NODE_OPTIONS", "--max-old-space-size=96"}}},

};

static void test_heap_settings(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(heap_cases) / sizeof(heap_cases[0]); i++) {
		const struct heap_case *tc = &heap_cases[i];
		struct mg_env_setting out[MG_HEAP_SETTINGS_MAX];
		int want_n = 0, n;

		memset(out, 0x5a, sizeof(out));
		while (want_n < MG_HEAP_SETTINGS_MAX && tc->want[want_n].name)
			want_n++;
		n = mg_heap_settings(tc->rt, tc->share, (char *const *)tc->envp, (char *const *)tc->argv,
		                     out);
		if (n != want_n)
			fail_msg("%s: %d settings, want %d (first: %s=%s)", tc->what, n, want_n,
			         n > 0 ? out[0].name : "-", n > 0 ? out[0].value : "-");
		for (int j = 0; j < n; j++) {
			if (strcmp(out[j].name, tc->want[j].name) != 0 ||
			    strcmp(out[j].value, tc->want[j].value) != 0)
				fail_msg("%s: setting %d is %s=%s, want %s=%s", tc->what, j, out[j].name,
				         out[j].value, tc->want[j].name, tc->want[j].value);
		}
	}
}

static void test_heap_settings_long_value_boundary(void **state)
{
	/* The user's value plus " -Xmx144m" (9 bytes) must fit in 255 chars. */
	char env[300], *envp[] = {env, NULL};
	char *argv[] = {(char *)"java", (char *)"Main", NULL};
	struct mg_env_setting out[MG_HEAP_SETTINGS_MAX];
	const size_t prefix = strlen("JAVA_TOOL_OPTIONS=");

	(void)state;
	for (size_t user_len = 240; user_len <= 250; user_len++) {
		memcpy(env, "JAVA_TOOL_OPTIONS=", prefix);
		memset(env + prefix, 'd', user_len);
		env[prefix] = '-';
		env[prefix + user_len] = '\0';
		int n = mg_heap_settings(MG_RUNTIME_JVM, 256 * MIB, envp, argv, out);
		bool fits = user_len + 9 <= 255;
		assert_int_equal(n, fits ? 2 : 1);
		if (fits) {
			assert_string_equal(out[0].name, "JAVA_TOOL_OPTIONS");
			assert_int_equal(strlen(out[0].value), user_len + 9);
			assert_string_equal(out[0].value + user_len, " -Xmx144m");
		} else {
			assert_string_equal(out[0].name, "MALLOC_ARENA_MAX");
		}
	}
}

static void test_heap_settings_null_inputs(void **state)
{
	struct mg_env_setting out[MG_HEAP_SETTINGS_MAX];

	(void)state;
	assert_int_equal(mg_heap_settings(MG_RUNTIME_GO, 4 * GIB, NULL, NULL, out), 1);
	assert_string_equal(out[0].value, "3670MiB");
	assert_int_equal(mg_heap_settings(MG_RUNTIME_GO, 4 * GIB, NULL, NULL, NULL), 0);
	assert_int_equal(mg_heap_settings(MG_RUNTIME__COUNT, 4 * GIB, NULL, NULL, out), 0);
	/* An argv that is only a wrapper still lets the environment decide. */
	char *argv[] = {(char *)"env", (char *)"GOMEMLIMIT=1GiB", NULL};
	assert_int_equal(mg_heap_settings(MG_RUNTIME_GO, 4 * GIB, NULL, argv, out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_name_round_trip),
	        cmocka_unit_test(test_name_aliases),
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
	        cmocka_unit_test(test_detect_go_elf),
	        cmocka_unit_test(test_detect_broken_elf),
	        cmocka_unit_test(test_detect_real_binaries),
	        cmocka_unit_test(test_heap_cap),
	        cmocka_unit_test(test_heap_cap_monotonic),
	        cmocka_unit_test(test_heap_settings),
	        cmocka_unit_test(test_heap_settings_long_value_boundary),
	        cmocka_unit_test(test_heap_settings_null_inputs),
	};

	return cmocka_run_group_tests_name("runtime", tests, group_setup, group_teardown);
}
