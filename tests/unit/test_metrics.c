/* The Prometheus text writer (lib/metrics.c): names, escaping, numbers, and
 * the atomic replacement of the file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_tree.h"
#include "memguard/metrics.h"
#include "memguard/util.h"

struct name_case {
	const char *name;
	bool metric, label; /* valid as a metric name, as a label name */
};

static void names(void **state)
{
	static const struct name_case cases[] = {
	        {"memguard_kills_total", true, true},
	        {"a", true, true},
	        {"_x9", true, true},
	        {"node:memguard:rate", true, false},
	        {":x", true, false},
	        {"__name__", true, false}, /* reserved for labels */
	        {"9lives", false, false},
	        {"", false, false},
	        {"has space", false, false},
	        {"dash-ed", false, false},
	        {"dot.ted", false, false},
	        {"ünicode", false, false},
	        {"x\n", false, false},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		if (mg_metrics_name_valid(cases[i].name, false) != cases[i].metric ||
		    mg_metrics_name_valid(cases[i].name, true) != cases[i].label)
			print_error("\"%s\"\n", cases[i].name);
		assert_int_equal(mg_metrics_name_valid(cases[i].name, false), cases[i].metric);
		assert_int_equal(mg_metrics_name_valid(cases[i].name, true), cases[i].label);
	}
	assert_false(mg_metrics_name_valid(NULL, false));
}

struct label_case {
	const char *value;
	const char *line; /* the sample line for x{v=value} 1 */
};

static void label_values_are_escaped(void **state)
{
	static const struct label_case cases[] = {
	        {"plain", "x{v=\"plain\"} 1\n"},
	        {"", "x{v=\"\"} 1\n"},
	        {"a\"b", "x{v=\"a\\\"b\"} 1\n"},
	        {"a\\b", "x{v=\"a\\\\b\"} 1\n"},
	        {"a\nb", "x{v=\"a\\nb\"} 1\n"},
	        {"\\\"\n", "x{v=\"\\\\\\\"\\n\"} 1\n"},
	        {"trailing\\", "x{v=\"trailing\\\\\"} 1\n"},
	        {"tab\there {} = ,", "x{v=\"tab\there {} = ,\"} 1\n"},
	        {"ünï", "x{v=\"ünï\"} 1\n"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_metrics m = MG_METRICS_INIT;
		const char *labels[] = {"v", cases[i].value, NULL};

		mg_metrics_sample_u64(&m, "x", labels, 1);
		assert_int_equal(m.error, 0);
		assert_string_equal(m.buf, cases[i].line);
		assert_int_equal(m.len, strlen(cases[i].line));
		mg_metrics_done(&m);
	}
}

static void help_escapes_backslash_and_newline_only(void **state)
{
	struct mg_metrics m = MG_METRICS_INIT;

	mg_metrics_family(&m, "x_total", "counter", "kills \"by reason\"\\\nsecond line");
	assert_int_equal(m.error, 0);
	assert_string_equal(m.buf, "# HELP x_total kills \"by reason\"\\\\\\nsecond line\n"
	                           "# TYPE x_total counter\n");
	mg_metrics_done(&m);
}

struct value_case {
	double value;
	const char *text;
};

static void values(void **state)
{
	static const struct value_case cases[] = {
	        {0, "0"},
	        {1, "1"},
	        {0.5, "0.5"},
	        {0.1, "0.1"},
	        {-2.25, "-2.25"},
	        {1e21, "1e+21"},
	        {0.123456789012345678, "0.12345678901234568"}, /* needs 17 digits to read back */
	        {NAN, "NaN"},
	        {INFINITY, "+Inf"},
	        {-INFINITY, "-Inf"},
	};
	char want[64];

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_metrics m = MG_METRICS_INIT;

		mg_metrics_sample(&m, "g", NULL, cases[i].value);
		snprintf(want, sizeof(want), "g %s\n", cases[i].text);
		assert_string_equal(m.buf, want);
		mg_metrics_done(&m);
	}
	struct mg_metrics m = MG_METRICS_INIT;
	mg_metrics_sample_u64(&m, "bytes", NULL, UINT64_MAX);
	assert_string_equal(m.buf, "bytes 18446744073709551615\n");
	mg_metrics_done(&m);
}

static void families_and_samples_in_order(void **state)
{
	struct mg_metrics m = MG_METRICS_INIT;
	const char *a[] = {"reason", "available_min", NULL}, *b[] = {"task", "3", "outcome", "ok", NULL};

	mg_metrics_family(&m, "mg_kills_total", "counter", "Kills.");
	mg_metrics_sample_u64(&m, "mg_kills_total", a, 2);
	mg_metrics_family(&m, "mg_task", "gauge", "Tasks.");
	mg_metrics_sample(&m, "mg_task", b, 1);
	assert_int_equal(m.error, 0);
	assert_string_equal(m.buf, "# HELP mg_kills_total Kills.\n"
	                           "# TYPE mg_kills_total counter\n"
	                           "mg_kills_total{reason=\"available_min\"} 2\n"
	                           "# HELP mg_task Tasks.\n"
	                           "# TYPE mg_task gauge\n"
	                           "mg_task{task=\"3\",outcome=\"ok\"} 1\n");
	/* reset keeps the memory and starts over */
	char *buf = m.buf;
	mg_metrics_reset(&m);
	assert_int_equal(m.len, 0);
	assert_string_equal(m.buf, "");
	mg_metrics_sample_u64(&m, "y", NULL, 7);
	assert_ptr_equal(m.buf, buf);
	assert_string_equal(m.buf, "y 7\n");
	mg_metrics_done(&m);
	assert_null(m.buf);
}

struct bad_case {
	const char *what;
	const char *family, *type; /* a family to declare, or NULL */
	const char *sample;        /* a sample to write, or NULL */
	const char *label_name;    /* with one label of this name and value "v", or NULL */
};

/* A bad name sticks as -EINVAL, nothing more is added, and nothing is written. */
static void bad_input_is_sticky(void **state)
{
	static const struct bad_case cases[] = {
	        {"metric name with a dash", "a-b", "gauge", NULL, NULL},
	        {"unknown type", "ok", "histogram", NULL, NULL},
	        {"sample name with a space", NULL, NULL, "a b", NULL},
	        {"label name with a colon", NULL, NULL, "ok", "a:b"},
	        {"reserved label name", NULL, NULL, "ok", "__x"},
	        {"empty label name", NULL, NULL, "ok", ""},
	};
	struct fake_tree t;
	char path[PATH_MAX + 16];

	ft_new(&t);
	snprintf(path, sizeof(path), "%s/out.prom", t.path);
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct bad_case *c = &cases[i];
		struct mg_metrics m = MG_METRICS_INIT;
		const char *labels[] = {c->label_name, "v", NULL};

		mg_metrics_sample_u64(&m, "before", NULL, 1);
		if (c->family)
			mg_metrics_family(&m, c->family, c->type, "help");
		if (c->sample)
			mg_metrics_sample_u64(&m, c->sample, c->label_name ? labels : NULL, 1);
		mg_metrics_sample_u64(&m, "after", NULL, 2);
		if (m.error != -EINVAL)
			print_error("%s: %d\n", c->what, m.error);
		assert_int_equal(m.error, -EINVAL);
		assert_string_equal(m.buf, "before 1\n");
		assert_int_equal(mg_metrics_write(&m, path, false), -EINVAL);
		assert_false(ft_exists(t.fd, "out.prom"));
		mg_metrics_done(&m);
	}
	/* A label without a value is an error too. */
	struct mg_metrics m = MG_METRICS_INIT;
	const char *odd[] = {"v", NULL};
	mg_metrics_sample_u64(&m, "x", odd, 1);
	assert_int_equal(m.error, -EINVAL);
	mg_metrics_done(&m);
	ft_free(&t);
}

/* The names in t's directory, so that a left-over temporary file shows. */
static size_t count_entries(const struct fake_tree *t)
{
	DIR *d = opendir(t->path);
	size_t n = 0;
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void atomic_write_replaces_whole(void **state)
{
	struct fake_tree *t = *state;
	struct mg_metrics m = MG_METRICS_INIT;
	char path[PATH_MAX + 16];
	struct stat st;
	mode_t old = umask(077);

	snprintf(path, sizeof(path), "%s/memguard.prom", t->path);
	ft_write(t->fd, "memguard.prom", "old contents that are longer than the new ones\n");
	mg_metrics_family(&m, "x", "gauge", "X.");
	mg_metrics_sample_u64(&m, "x", NULL, 42);
	assert_int_equal(mg_metrics_write(&m, path, true), 0);
	umask(old);
	char *text = ft_read(t->fd, "memguard.prom", NULL);
	assert_string_equal(text, "# HELP x X.\n# TYPE x gauge\nx 42\n");
	free(text);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644); /* readable by a collector, whatever the umask */
	assert_int_equal(count_entries(t), 1);

	/* Again, without fsync: the same. */
	mg_metrics_reset(&m);
	mg_metrics_sample_u64(&m, "x", NULL, 43);
	assert_int_equal(mg_metrics_write(&m, path, false), 0);
	text = ft_read(t->fd, "memguard.prom", NULL);
	assert_string_equal(text, "x 43\n");
	free(text);
	assert_int_equal(count_entries(t), 1);
	mg_metrics_done(&m);
}

/* A symlink at the target is replaced, never followed: what it pointed to
 * stays as it was. */
static void atomic_write_replaces_a_symlink(void **state)
{
	struct fake_tree *t = *state;
	char path[PATH_MAX + 16];
	struct stat st;

	ft_write(t->fd, "victim", "precious\n");
	assert_int_equal(symlinkat("victim", t->fd, "m.prom"), 0);
	snprintf(path, sizeof(path), "%s/m.prom", t->path);
	assert_int_equal(mg_atomic_write(path, "x 1\n", 4, 0644, false), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	char *text = ft_read(t->fd, "victim", NULL);
	assert_string_equal(text, "precious\n");
	free(text);
	assert_int_equal(count_entries(t), 2);
}

struct fail_case {
	const char *what;
	const char *path; /* relative to the tree unless absolute */
	int error;
};

/* A write that cannot be done returns -errno and leaves no file behind. */
static void atomic_write_failures(void **state)
{
	static const struct fail_case cases[] = {
	        {"missing directory", "nodir/m.prom", -ENOENT},
	        {"parent is a file", "file/m.prom", -ENOTDIR},
	        {"target is a directory", "dir", -EISDIR},
	        {"sysfs takes no new files (even from root)", "/sys/memguard-test.prom", -EACCES},
	};
	struct fake_tree *t = *state;

	ft_write(t->fd, "file", "x");
	ft_mkdir(t->fd, "dir");
	ft_write(t->fd, "dir/inside", "x"); /* rename(2) over a non-empty directory fails */
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		char path[PATH_MAX + 32];
		if (cases[i].path[0] == '/')
			snprintf(path, sizeof(path), "%s", cases[i].path);
		else
			snprintf(path, sizeof(path), "%s/%s", t->path, cases[i].path);
		int r = mg_atomic_write(path, "x 1\n", 4, 0644, true);
		if (r != cases[i].error)
			print_error("%s: %d (%s)\n", cases[i].what, r, strerror(-r));
		assert_int_equal(r, cases[i].error);
		assert_int_equal(count_entries(t), 2); /* file and dir, no temporary file */
	}
	char *text = ft_read(t->fd, "dir/inside", NULL);
	assert_string_equal(text, "x");
	free(text);
	/* A name too long for the temporary file's suffix. */
	char longpath[PATH_MAX + 8];
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	char tmp[PATH_MAX];
	assert_int_equal(mg_atomic_open(longpath, 0644, tmp, sizeof(tmp)), -ENAMETOOLONG);
}

/* Two writers never meet at one temporary name: each gets its own. */
static void atomic_open_names_differ(void **state)
{
	struct fake_tree *t = *state;
	char path[PATH_MAX + 16], a[PATH_MAX + 48], b[PATH_MAX + 48];

	snprintf(path, sizeof(path), "%s/m.prom", t->path);
	int fa = mg_atomic_open(path, 0600, a, sizeof(a));
	int fb = mg_atomic_open(path, 0600, b, sizeof(b));
	assert_true(fa >= 0 && fb >= 0);
	assert_string_not_equal(a, b);
	assert_int_equal(strncmp(a, path, strlen(path)), 0);
	assert_non_null(strstr(a, ".tmp-"));
	close(fa);
	close(fb);
	unlink(a);
	unlink(b);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, ft_setup, ft_teardown)
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(names),
	        cmocka_unit_test(label_values_are_escaped),
	        cmocka_unit_test(help_escapes_backslash_and_newline_only),
	        cmocka_unit_test(values),
	        cmocka_unit_test(families_and_samples_in_order),
	        cmocka_unit_test(bad_input_is_sticky),
	        T(atomic_write_replaces_whole),
	        T(atomic_write_replaces_a_symlink),
	        T(atomic_write_failures),
	        T(atomic_open_names_differ),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
