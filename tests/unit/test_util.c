/* util.h: keyed kernel files, strict number parsing, whole-file I/O. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tree.h"
#include "memguard/util.h"

struct keyed {
	const char *text;
	const char *key;
	int r;
	uint64_t value;
};

static void keyed_u64_table(void **state)
{
	static const struct keyed cases[] = {
	        /* Space-separated (memory.events, memory.stat, cgroup.events). */
	        {"low 1\nhigh 2\nmax 3\n", "high", 0, 2},
	        {"low 1\nhigh 2\nmax 3\n", "low", 0, 1},
	        {"low 1\nhigh 2\nmax 3", "max", 0, 3}, /* last line without a newline */
	        {"populated 1\nfrozen 0\n", "frozen", 0, 0},
	        {"anon\t4096\n", "anon", 0, 4096},
	        {"a    77\n", "a", 0, 77},
	        {"big 18446744073709551615\n", "big", 0, UINT64_MAX},
	        /* Colon forms (meminfo). */
	        {"MemTotal:       16318480 kB\nMemFree: 1 kB\n", "MemTotal", 0, 16318480},
	        {"Key:   123 kB", "Key", 0, 123},
	        {"Key:123", "Key", 0, 123},
	        {"Key:\t\t9 kB\n", "Key", 0, 9},
	        /* A key must not match a longer key that starts with it, either way round. */
	        {"oom_kill 7\noom 1\n", "oom", 0, 1},
	        {"oom 1\noom_kill 7\n", "oom_kill", 0, 7},
	        {"oom_group_kill 3\noom_kill 7\noom 1\n", "oom_kill", 0, 7},
	        {"oom_kill 7\n", "oom", -ENOENT, 0},
	        {"ShmemHugePages: 5 kB\nShmem: 6 kB\n", "Shmem", 0, 6},
	        {"MemTotalX: 5 kB\n", "MemTotal", -ENOENT, 0},
	        /* Only at the start of a line. */
	        {"xa 1\n", "a", -ENOENT, 0},
	        {"b 1 a 2\n", "a", -ENOENT, 0},
	        {"a 1\n", "b", -ENOENT, 0},
	        {"", "a", -ENOENT, 0},
	        {"\n\n\n", "a", -ENOENT, 0},
	        {"a\n", "a", -ENOENT, 0}, /* the bare key, no separator */
	        {"a", "a", -ENOENT, 0},
	        /* Present but not a number. */
	        {"a x\n", "a", -EBADMSG, 0},
	        {"a \n", "a", -EBADMSG, 0},
	        {"a \n5\n", "a", -EBADMSG, 0}, /* the number is not taken from the next line */
	        {"a -1\n", "a", -EBADMSG, 0},
	        {"a +1\n", "a", -EBADMSG, 0},
	        {"Key: kB\n", "Key", -EBADMSG, 0},
	        {"Key:\n", "Key", -EBADMSG, 0},
	        {"a 18446744073709551616\n", "a", -EBADMSG, 0},
	        {"a 99999999999999999999999999999999999999999\n", "a", -EBADMSG, 0},
	        /* Nothing after the number but meminfo's unit. */
	        {"a 12abc\n", "a", -EBADMSG, 0},
	        {"a 12 pages\n", "a", -EBADMSG, 0},
	        {"Key: 12 kBx\n", "Key", -EBADMSG, 0},
	        {"Key: 12 MB\n", "Key", -EBADMSG, 0},
	        {"a 12 \n", "a", 0, 12},
	        {"Key: 12kB\n", "Key", 0, 12},
	        {"a 12 3\n", "a", -EBADMSG, 0},
	        /* The first matching line wins. */
	        {"a 1\na 2\n", "a", 0, 1},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		uint64_t v = 424242;
		int r = mg_keyed_u64(cases[i].text, cases[i].key, &v);

		if (r != cases[i].r || (r == 0 && v != cases[i].value))
			print_error("case %zu: mg_keyed_u64(\"%s\", \"%s\") = %d, %" PRIu64 "\n", i,
			            cases[i].text, cases[i].key, r, v);
		assert_int_equal(r, cases[i].r);
		if (r == 0)
			assert_true(v == cases[i].value);
	}
}

struct u64case {
	const char *text;
	int r;
	uint64_t value;
};

static void parse_u64_table(void **state)
{
	static const struct u64case cases[] = {
	        {"0", 0, 0},
	        {"1", 0, 1},
	        {"00012", 0, 12},
	        {"4294967296", 0, 4294967296ull},
	        {"18446744073709551615", 0, UINT64_MAX},
	        {"18446744073709551616", -ERANGE, 0},
	        {"18446744073709551620", -ERANGE, 0},
	        {"99999999999999999999", -ERANGE, 0},
	        {"", -EINVAL, 0},
	        {"-1", -EINVAL, 0},
	        {"-0", -EINVAL, 0},
	        {"+1", -EINVAL, 0},
	        {" 1", -EINVAL, 0},
	        {"1 ", -EINVAL, 0},
	        {"1\n", -EINVAL, 0},
	        {"0x10", -EINVAL, 0},
	        {"1.0", -EINVAL, 0},
	        {"1e3", -EINVAL, 0},
	        {"abc", -EINVAL, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		uint64_t v = 99;
		int r = mg_parse_u64(cases[i].text, &v);

		if (r != cases[i].r)
			print_error("mg_parse_u64(\"%s\") = %d\n", cases[i].text, r);
		assert_int_equal(r, cases[i].r);
		if (r == 0)
			assert_true(v == cases[i].value);
		else
			assert_true(v == 99); /* untouched on failure */
	}
	assert_int_equal(mg_parse_u64(NULL, &(uint64_t){0}), -EINVAL);
}

static char *pattern(size_t len)
{
	char *p = malloc(len + 1);

	assert_non_null(p);
	for (size_t i = 0; i < len; i++)
		p[i] = (char)('a' + (char)(i % 26));
	if (len > 0)
		p[len - 1] = '\n';
	p[len] = '\0';
	return p;
}

static void read_file_at_sizes(void **state)
{
	struct fake_tree *t = *state;
	/* Around the 4096-byte first buffer and well past it (the growth path). */
	static const size_t sizes[] = {0, 1, 4094, 4095, 4096, 4097, 8191, 8192, 8193, 100000};

	for (size_t i = 0; i < MG_ARRAY_SIZE(sizes); i++) {
		char *want = pattern(sizes[i]);
		char *got = NULL;
		ssize_t n;

		ft_write(t->fd, "file", want);
		n = mg_read_file_at(t->fd, "file", &got);
		assert_int_equal(n, (ssize_t)sizes[i]);
		assert_non_null(got);
		assert_int_equal(strlen(got), sizes[i]); /* NUL-terminated at the end */
		assert_memory_equal(got, want, sizes[i] + 1);
		free(got);
		free(want);
	}
}

static void read_file_at_errors(void **state)
{
	struct fake_tree *t = *state;
	char *got = (char *)"untouched";

	assert_int_equal(mg_read_file_at(t->fd, "missing", &got), -ENOENT);
	assert_string_equal(got, "untouched");
	ft_mkdir(t->fd, "dir");
	assert_int_equal(mg_read_file_at(t->fd, "dir", &got), -EISDIR);
	assert_int_equal(mg_read_file_at(-1, "file", &got), -EBADF);
	assert_string_equal(got, "untouched");
}

static void read_file_by_path(void **state)
{
	struct fake_tree *t = *state;
	char path[PATH_MAX + 16];
	char *got = NULL;

	ft_write(t->fd, "sub/conf", "hello\n");
	snprintf(path, sizeof(path), "%s/sub/conf", t->path);
	assert_int_equal(mg_read_file(path, &got), 6);
	assert_string_equal(got, "hello\n");
	free(got);
	snprintf(path, sizeof(path), "%s/sub/none", t->path);
	assert_int_equal(mg_read_file(path, &got), -ENOENT);
}

static void read_small_at_truncates(void **state)
{
	struct fake_tree *t = *state;
	char buf[16];

	ft_write(t->fd, "f", "hello world");
	memset(buf, 'X', sizeof(buf));
	assert_int_equal(mg_read_small_at(t->fd, "f", buf, 6), 5);
	assert_string_equal(buf, "hello");
	assert_true(buf[6] == 'X'); /* nothing written past size */

	memset(buf, 'X', sizeof(buf));
	assert_int_equal(mg_read_small_at(t->fd, "f", buf, 1), 0);
	assert_string_equal(buf, "");
	assert_true(buf[1] == 'X');

	assert_int_equal(mg_read_small_at(t->fd, "f", buf, sizeof(buf)), 11);
	assert_string_equal(buf, "hello world");

	/* Exactly size-1 bytes fit whole. */
	ft_write(t->fd, "g", "0123456789abcde");
	assert_int_equal(mg_read_small_at(t->fd, "g", buf, sizeof(buf)), 15);
	assert_string_equal(buf, "0123456789abcde");

	ft_write(t->fd, "empty", "");
	assert_int_equal(mg_read_small_at(t->fd, "empty", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

static void read_small_at_errors(void **state)
{
	struct fake_tree *t = *state;
	char buf[8] = "keep";

	assert_int_equal(mg_read_small_at(t->fd, "missing", buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "keep");
	ft_write(t->fd, "f", "x");
	assert_int_equal(mg_read_small_at(t->fd, "f", buf, 0), -EINVAL);
	assert_string_equal(buf, "keep");
}

static void write_file_at(void **state)
{
	struct fake_tree *t = *state;
	char *got;

	/* Never creates: cgroup files exist or the controller is missing. */
	assert_int_equal(mg_write_file_at(t->fd, "memory.max", "100"), -ENOENT);
	assert_false(ft_exists(t->fd, "memory.max"));

	ft_write(t->fd, "memory.max", "");
	assert_int_equal(mg_write_file_at(t->fd, "memory.max", "1073741824"), 0);
	got = ft_read(t->fd, "memory.max", NULL);
	assert_string_equal(got, "1073741824");
	free(got);

	ft_mkdir(t->fd, "d");
	assert_int_equal(mg_write_file_at(t->fd, "d", "1"), -EISDIR);
	assert_int_equal(mg_write_file_at(-1, "memory.max", "1"), -EBADF);
}

static void now_usec_is_monotonic(void **state)
{
	uint64_t a = mg_now_usec();
	uint64_t b = mg_now_usec();

	assert_true(a > 0);
	assert_true(b >= a);
	usleep(20000);
	assert_true(mg_now_usec() - b >= 19000);
}

static void cleanup_macros(void **state)
{
	int fd;
	char *p;

	{
		_cleanup_close_ int owned = open("/dev/null", O_RDONLY | O_CLOEXEC);
		assert_true(owned >= 0);
		fd = TAKE_FD(owned);
		assert_int_equal(owned, -1);
	}
	assert_true(fcntl(fd, F_GETFD) >= 0); /* TAKE_FD kept it open */
	close(fd);
	{
		_cleanup_free_ char *owned = strdup("x");
		assert_non_null(owned);
		p = TAKE_PTR(owned);
		assert_null(owned);
	}
	assert_string_equal(p, "x");
	free(p);
}

/* The bound: max bytes are read, one more is -EFBIG, and /dev/zero ends. */
static void read_file_max_bounds(void **state)
{
	struct fake_tree *t = *state;
	char path[PATH_MAX + 16];
	char *got = NULL;

	ft_write(t->fd, "ten", "0123456789");
	snprintf(path, sizeof(path), "%s/ten", t->path);
	assert_int_equal(mg_read_file_max(path, 10, &got), 10);
	assert_string_equal(got, "0123456789");
	free(got);
	got = NULL;
	assert_int_equal(mg_read_file_max(path, 9, &got), -EFBIG);
	assert_null(got);
	assert_int_equal(mg_read_file_max(path, 0, &got), -EFBIG);
	/* past the first buffer, and exactly at a doubling */
	for (size_t size = 4095; size <= 8193; size += 2049) {
		char *buf = malloc(size);
		assert_non_null(buf);
		memset(buf, 'x', size);
		ft_write_bytes(t->fd, "big", buf, size);
		free(buf);
		snprintf(path, sizeof(path), "%s/big", t->path);
		assert_int_equal(mg_read_file_max(path, size, &got), (ssize_t)size);
		assert_int_equal(strlen(got), size);
		free(got);
		got = NULL;
		assert_int_equal(mg_read_file_max(path, size - 1, &got), -EFBIG);
		assert_null(got);
	}
	assert_int_equal(mg_read_file_max("/dev/zero", 1 << 20, &got), -EFBIG);
	assert_null(got);
	snprintf(path, sizeof(path), "%s/none", t->path);
	assert_int_equal(mg_read_file_max(path, 10, &got), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(keyed_u64_table),
	        cmocka_unit_test(parse_u64_table),
	        cmocka_unit_test_setup_teardown(read_file_at_sizes, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(read_file_at_errors, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(read_file_by_path, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(read_file_max_bounds, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(read_small_at_truncates, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(read_small_at_errors, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(write_file_at, ft_setup, ft_teardown),
	        cmocka_unit_test(now_usec_is_monotonic),
	        cmocka_unit_test(cleanup_macros),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
