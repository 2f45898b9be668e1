/* The launcher-daemon contract: the share rule, and each xattr accessor on a
 * fake cgroup directory (root sets trusted.*; a forked child that gave up
 * root shows what a launcher that is not root writes). */
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
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fake_tree.h"
#include "memguard/contract.h"
#include "memguard/util.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static int setup(void **state)
{
	struct fake_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	t->fd = -1;
	*state = t;
	ft_new_xattr(t, "mg_contract_*");
	ft_require_trusted_xattr(t, "mg_contract_*");
	ft_mkdir(t->fd, "task");
	return 0;
}

struct share_rule_case {
	const char *what;
	uint64_t trusted, root_limit, hint, want;
};

static void share_rule_table(void **state)
{
	static const struct share_rule_case cases[] = {
	        {"nothing known", 0, 0, 0, 0},
	        {"trusted alone", GiB, 0, 0, GiB},
	        {"trusted over the root limit", GiB, 4 * GiB, 0, GiB},
	        {"trusted even above the root limit", 8 * GiB, 4 * GiB, 0, 8 * GiB},
	        {"root limit alone", 0, 4 * GiB, 0, 4 * GiB},
	        {"a hint lowers the trusted share", GiB, 0, 512 * MiB, 512 * MiB},
	        {"a hint cannot raise the trusted share", GiB, 0, UINT64_MAX, GiB},
	        {"a hint lowers the root limit", 0, 4 * GiB, GiB, GiB},
	        {"a hint cannot raise the root limit", 0, 4 * GiB, UINT64_MAX, 4 * GiB},
	        {"a hint equal to the share", GiB, 0, GiB, GiB},
	        {"a hint alone stands", 0, 0, 512 * MiB, 512 * MiB},
	        {"a huge hint alone stands (it only makes its task look smaller than unknown)", 0, 0,
	         UINT64_MAX, UINT64_MAX},
	        {"all three: the least", 2 * GiB, GiB, 3 * GiB, 2 * GiB},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct share_rule_case *c = &cases[i];
		uint64_t got = mg_contract_share(c->trusted, c->root_limit, c->hint);
		if (got != c->want)
			print_error("case %zu (%s): %" PRIu64 ", want %" PRIu64 "\n", i, c->what, got,
			            c->want);
		assert_true(got == c->want);
	}
}

static void share_as_root_is_trusted(void **state)
{
	struct fake_tree *t = *state;
	int cg = ft_open_dir(t->fd, "task");
	uint64_t v = 0;
	char raw[32];

	assert_int_equal(mg_contract_set_share(cg, 0), -EINVAL);
	assert_int_equal(mg_contract_get_share(cg, &v), -ENODATA);
	assert_int_equal(mg_contract_set_share(cg, 3 * GiB), 1);
	assert_int_equal(mg_contract_get_share(cg, &v), 0);
	assert_true(v == 3 * GiB);
	ssize_t n = fgetxattr(cg, "trusted.memguard.share", raw, sizeof(raw) - 1);
	assert_int_equal(n, 10);
	raw[n] = '\0';
	assert_string_equal(raw, "3221225472");
	/* No hint beside it. */
	assert_int_equal(mg_contract_get_share_hint(cg, &v), -ENODATA);
	close(cg);
}

/* A launcher that is not root cannot write trusted.*: it leaves the hint. */
static void share_as_user_is_a_hint(void **state)
{
	struct fake_tree *t = *state;
	uint64_t v = 0;

	ft_chown(t->fd, "task", 65534);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int cg = ft_open_dir(t->fd, "task");
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(100);
		int r = mg_contract_set_share(cg, 512 * MiB);
		/* Nor can it read or forge the trusted share. */
		if (fsetxattr(cg, "trusted.memguard.share", "1", 1, 0) == 0)
			_exit(101);
		_exit(r == 0 ? 0 : 102);
	}
	int status = ft_reap_child(pid, 5000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	int cg = ft_open_dir(t->fd, "task");
	assert_int_equal(mg_contract_get_share(cg, &v), -ENODATA);
	assert_int_equal(mg_contract_get_share_hint(cg, &v), 0);
	assert_true(v == 512 * MiB);
	close(cg);
}

static void share_garbage_reads_as_none(void **state)
{
	static const char *const garbage[] = {"", "0", "-1", "lots", "12 34", "99999999999999999999", "0x10"};
	struct fake_tree *t = *state;
	int cg = ft_open_dir(t->fd, "task");
	uint64_t v = 7;

	for (size_t i = 0; i < MG_ARRAY_SIZE(garbage); i++) {
		assert_int_equal(fsetxattr(cg, MG_XATTR_SHARE, garbage[i], strlen(garbage[i]), 0), 0);
		assert_int_equal(fsetxattr(cg, MG_XATTR_SHARE_HINT, garbage[i], strlen(garbage[i]), 0), 0);
		assert_int_equal(mg_contract_get_share(cg, &v), -ENODATA);
		assert_int_equal(mg_contract_get_share_hint(cg, &v), -ENODATA);
		assert_true(v == 7);
	}
	/* Longer than any number: none either, not an error. */
	char big[100];
	memset(big, '9', sizeof(big));
	assert_int_equal(fsetxattr(cg, MG_XATTR_SHARE, big, sizeof(big), 0), 0);
	assert_int_equal(mg_contract_get_share(cg, &v), -ENODATA);
	close(cg);
}

static void killed_reason(void **state)
{
	struct fake_tree *t = *state;
	int cg = ft_open_dir(t->fd, "task");
	char buf[16], big[300];

	assert_string_equal(MG_XATTR_KILLED, "user.memguard.killed");
	assert_int_equal(mg_contract_get_killed(cg, buf, sizeof(buf)), -ENODATA);
	assert_int_equal(mg_contract_set_killed(cg, "over its share"), 0);
	assert_int_equal(mg_contract_get_killed(cg, buf, sizeof(buf)), 14);
	assert_string_equal(buf, "over its share");
	/* Longer than the buffer: cut, terminated. */
	assert_int_equal(mg_contract_set_killed(cg, "2GiB against a 1GiB share"), 0);
	assert_int_equal(mg_contract_get_killed(cg, buf, sizeof(buf)), 15);
	assert_string_equal(buf, "2GiB against a ");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(mg_contract_set_killed(cg, big), 0);
	assert_int_equal(mg_contract_get_killed(cg, big, 200), 199);
	assert_int_equal(strlen(big), 199);
	assert_int_equal(mg_contract_get_killed(cg, buf, 0), -EINVAL);
	close(cg);
}

static void fence_saved_high(void **state)
{
	struct fake_tree *t = *state;
	int cg = ft_open_dir(t->fd, "task");
	char buf[32];

	assert_int_equal(mg_contract_get_fence(cg, buf, sizeof(buf)), -ENODATA);
	assert_int_equal(mg_contract_clear_fence(cg), 0);
	assert_int_equal(mg_contract_set_fence(cg, "1900000000"), 0);
	assert_int_equal(mg_contract_get_fence(cg, buf, sizeof(buf)), 10);
	assert_string_equal(buf, "1900000000");
	assert_int_equal(mg_contract_set_fence(cg, "max"), 0);
	assert_int_equal(mg_contract_get_fence(cg, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "max");
	assert_int_equal(mg_contract_clear_fence(cg), 0);
	assert_int_equal(mg_contract_get_fence(cg, buf, sizeof(buf)), -ENODATA);
	/* What a user can write is no fence. */
	assert_int_equal(fsetxattr(cg, "user.memguard.throttled", "max", 3, 0), 0);
	assert_int_equal(fsetxattr(cg, "user.memguard.fence", "max", 3, 0), 0);
	assert_int_equal(mg_contract_get_fence(cg, buf, sizeof(buf)), -ENODATA);
	close(cg);
}

/* A placed run's launcher and tether, for a restarted memguardd; a user's
 * look-alike in user.* is no record. */
static void placed_run_record(void **state)
{
	struct fake_tree *t = *state;
	int cg = ft_open_dir(t->fd, "task");
	char buf[64];
	pid_t pid = 0;
	uint64_t start = 0;

	assert_int_equal(mg_contract_get_launcher(cg, &pid, &start), -ENODATA);
	assert_int_equal(fsetxattr(cg, "user.memguard.launcher", "1 1", 3, 0), 0);
	assert_int_equal(mg_contract_get_launcher(cg, &pid, &start), -ENODATA);
	assert_int_equal(mg_contract_set_launcher(cg, 4242, 123456789012ull), 0);
	assert_int_equal(mg_contract_get_launcher(cg, &pid, &start), 0);
	assert_int_equal(pid, 4242);
	assert_int_equal(start, 123456789012ull);
	static const char *const garbage[] = {"", "x", "12", "0 5", "-3 5", "4242 x"};
	for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		assert_int_equal(fsetxattr(cg, MG_XATTR_LAUNCHER, garbage[i], strlen(garbage[i]), 0), 0);
		assert_int_equal(mg_contract_get_launcher(cg, &pid, &start), -ENODATA);
	}
	assert_int_equal(mg_contract_get_tether(cg, buf, sizeof(buf)), -ENODATA);
	assert_int_equal(mg_contract_set_tether(cg, "system.slice/x_slurmstepd.scope/job_7"), 0);
	assert_int_equal(mg_contract_get_tether(cg, buf, sizeof(buf)), 37);
	assert_string_equal(buf, "system.slice/x_slurmstepd.scope/job_7");
	close(cg);
}

/* A directory that is gone, or an fd that is no directory. */
static void bad_fd(void **state)
{
	char buf[8];
	uint64_t v;

	assert_int_equal(mg_contract_get_share(-1, &v), -EBADF);
	assert_int_equal(mg_contract_set_share(-1, GiB), -EBADF);
	assert_int_equal(mg_contract_get_killed(-1, buf, sizeof(buf)), -EBADF);
	assert_int_equal(mg_contract_set_fence(-1, "max"), -EBADF);
	assert_int_equal(mg_contract_clear_fence(-1), -EBADF);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, ft_teardown)
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(share_rule_table),
	        T(share_as_root_is_trusted),
	        T(share_as_user_is_a_hint),
	        T(share_garbage_reads_as_none),
	        T(killed_reason),
	        T(fence_saved_high),
	        T(placed_run_record),
	        cmocka_unit_test(bad_fd),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
