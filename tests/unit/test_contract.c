/* The launcher-daemon contract: the share rule, and each xattr accessor on a
 * fake cgroup directory (root sets trusted.*; a forked child that gave up
 * root shows what a launcher that is not root writes); and the rule by which
 * a launcher tells a stale run cgroup (its launcher gone) from a live one. */
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
#include "run/placement.h"

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
	        /* The owner's word alone is no share: a forged huge one made its runaway look at 0 %. */
	        {"a hint alone is no share", 0, 0, 512 * MiB, 0},
	        {"a forged huge hint alone is no share", 0, 0, UINT64_MAX, 0},
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

/* A placed run's tether, for a restarted memguardd: root's word only. */
static void tether_record(void **state)
{
	static const struct {
		const char *forged;
		int (*set)(int cgfd, const char *path);
		int (*get)(int cgfd, char *buf, size_t size);
		const char *path;
	} records[] = {
	        {"user.memguard.tether", mg_contract_set_tether, mg_contract_get_tether,
	         "system.slice/x_slurmstepd.scope/job_7/step_0/user/task_0"},
	};
	struct fake_tree *t = *state;
	int cg = ft_open_dir(t->fd, "task");
	char buf[128];

	for (size_t i = 0; i < MG_ARRAY_SIZE(records); i++) {
		assert_int_equal(records[i].get(cg, buf, sizeof(buf)), -ENODATA);
		assert_int_equal(fsetxattr(cg, records[i].forged, "x", 1, 0), 0);
		assert_int_equal(records[i].get(cg, buf, sizeof(buf)), -ENODATA);
		assert_int_equal(records[i].set(cg, records[i].path), 0);
		assert_int_equal(records[i].get(cg, buf, sizeof(buf)), (int)strlen(records[i].path));
		assert_string_equal(buf, records[i].path);
	}
	close(cg);
}

/* What a placed run takes out of its job: root's word, two numbers. */
static void taken_record(void **state)
{
	static const char *const garbled[] = {"", "1", "1 ", " 1", "0 5", "5 0", "x 5", "5 5x", "-1 5"};
	struct fake_tree *t = *state;
	int cg = ft_open_dir(t->fd, "task");
	uint64_t taken = 1, limit = 2;

	assert_string_equal(MG_XATTR_TAKEN, "trusted.memguard.taken");
	assert_int_equal(mg_contract_get_taken(cg, &taken, &limit), -ENODATA);
	assert_int_equal(fsetxattr(cg, "user.memguard.taken", "5 9", 3, 0), 0);
	assert_int_equal(mg_contract_get_taken(cg, &taken, &limit), -ENODATA);
	assert_int_equal(mg_contract_set_taken(cg, 298844160, 314572800), 0);
	assert_int_equal(mg_contract_get_taken(cg, &taken, &limit), 0);
	assert_true(taken == 298844160 && limit == 314572800);
	assert_int_equal(mg_contract_set_taken(cg, 0, 5), -EINVAL);
	assert_int_equal(mg_contract_set_taken(cg, 5, 0), -EINVAL);
	for (size_t i = 0; i < MG_ARRAY_SIZE(garbled); i++) {
		taken = limit = 7;
		assert_int_equal(fsetxattr(cg, MG_XATTR_TAKEN, garbled[i], strlen(garbled[i]), 0), 0);
		assert_int_equal(mg_contract_get_taken(cg, &taken, &limit), -ENODATA);
		assert_true(taken == 7 && limit == 7);
	}
	close(cg);
}

/* What a caller's cgroup keeps beside its runs: memguardd's word, for the launcher. */
static void keeps_record(void **state)
{
	struct fake_tree *t = *state;
	int cg = ft_open_dir(t->fd, "task");
	uint64_t keeps = 3;

	assert_string_equal(MG_XATTR_KEEPS, "user.memguard.keeps");
	assert_int_equal(mg_contract_get_keeps(cg, &keeps), -ENODATA);
	assert_int_equal(mg_contract_clear_keeps(cg), 0);
	assert_int_equal(mg_contract_set_keeps(cg, 0), -EINVAL);
	assert_int_equal(mg_contract_set_keeps(cg, 16777216), 0);
	assert_int_equal(mg_contract_get_keeps(cg, &keeps), 0);
	assert_true(keeps == 16777216);
	assert_int_equal(mg_contract_clear_keeps(cg), 0);
	assert_int_equal(mg_contract_get_keeps(cg, &keeps), -ENODATA);
	assert_int_equal(fsetxattr(cg, MG_XATTR_KEEPS, "16M", 3, 0), 0);
	assert_int_equal(mg_contract_get_keeps(cg, &keeps), -ENODATA);
	close(cg);
}

static void launcher_record(void **state)
{
	struct fake_tree *t = *state;
	int cg = ft_open_dir(t->fd, "task");
	pid_t pid = 0;
	uint64_t start = 0;

	assert_string_equal(MG_XATTR_LAUNCHER, "trusted.memguard.launcher");
	assert_int_equal(mg_contract_get_launcher(cg, &pid, &start), -ENODATA);
	assert_int_equal(mg_contract_set_launcher(cg, 4194304, 8589934597ull), 0);
	assert_int_equal(mg_contract_get_launcher(cg, &pid, &start), 0);
	assert_int_equal(pid, 4194304);
	assert_true(start == 8589934597ull);
	assert_int_equal(mg_contract_set_launcher(cg, 0, 1), -EINVAL);
	assert_int_equal(mg_contract_set_launcher(cg, -3, 1), -EINVAL);

	/* Garbled values read as none, and leave the outputs alone. */
	static const char *const garbled[] = {
	        "",
	        "12",
	        "12 ",
	        " 12 5",
	        "0 5",
	        "-1 5",
	        "12 -5",
	        "12 5x",
	        "12  5",
	        "2147483648 5",
	        "12 99999999999999999999",
	        "12 5 7",
	};
	for (size_t i = 0; i < MG_ARRAY_SIZE(garbled); i++) {
		ft_set_xattr(t->fd, "task", MG_XATTR_LAUNCHER, garbled[i]);
		pid = 77;
		start = 77;
		int r = mg_contract_get_launcher(cg, &pid, &start);
		if (r != -ENODATA)
			print_error("\"%s\": %d\n", garbled[i], r);
		assert_int_equal(r, -ENODATA);
		assert_int_equal(pid, 77);
		assert_true(start == 77);
	}
	/* A user's word is no record. */
	ft_set_xattr(t->fd, "task", MG_XATTR_LAUNCHER, NULL);
	assert_int_equal(fsetxattr(cg, "user.memguard.launcher", "12 5", 4, 0), 0);
	assert_int_equal(mg_contract_get_launcher(cg, &pid, &start), -ENODATA);
	close(cg);
}

struct stale_case {
	const char *what;
	struct mg_run_owner o;
	bool want;
};

static void run_stale_table(void **state)
{
	static const struct stale_case cases[] = {
	        {"launcher gone, recorded", {100, true, 100, 5000, false, 0}, true},
	        {"launcher gone, nothing recorded", {100, false, 0, 0, false, 0}, true},
	        {"launcher alive, same start", {100, true, 100, 5000, true, 5000}, false},
	        {"pid reused by a later process", {100, true, 100, 5000, true, 9000}, true},
	        {"pid reused by an earlier one (clock ticks wrap? no: other boot)",
	         {100, true, 100, 5000, true, 10},
	         true},
	        {"alive, nothing recorded (not root, older memguard, being set up)",
	         {100, false, 0, 0, true, 5000},
	         false},
	        {"record names another pid: not ours to judge", {100, true, 101, 5000, true, 9000}, false},
	        {"no pid", {0, false, 0, 0, false, 0}, false},
	        {"negative pid", {-1, true, -1, 1, false, 0}, false},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		bool got = mg_placement_run_stale(&cases[i].o);
		if (got != cases[i].want)
			print_error("%s: %d\n", cases[i].what, got);
		assert_int_equal(got, cases[i].want);
	}
}

struct run_name_case {
	const char *name;
	int want_r;
	pid_t want;
};

static void run_name_table(void **state)
{
	static const struct run_name_case cases[] = {
	        {"run-1", 0, 1},
	        {"run-4194304", 0, 4194304},
	        {"run-2147483647", 0, 2147483647},
	        {"run-2147483648", -EINVAL, 0},
	        {"run-0", -EINVAL, 0},
	        {"run-012", -EINVAL, 0},
	        {"run-", -EINVAL, 0},
	        {"run--1", -EINVAL, 0},
	        {"run-12x", -EINVAL, 0},
	        {"run-12 ", -EINVAL, 0},
	        {"Run-12", -EINVAL, 0},
	        {"job", -EINVAL, 0},
	        {"probe", -EINVAL, 0},
	        {"task-1", -EINVAL, 0},
	        {"", -EINVAL, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		pid_t pid = -7;
		int r = mg_placement_run_pid(cases[i].name, &pid);
		if (r != cases[i].want_r)
			print_error("\"%s\": %d\n", cases[i].name, r);
		assert_int_equal(r, cases[i].want_r);
		assert_int_equal(pid, r == 0 ? cases[i].want : -7);
	}
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
	assert_int_equal(mg_contract_set_launcher(-1, 1, 1), -EBADF);
	pid_t pid;
	assert_int_equal(mg_contract_get_launcher(-1, &pid, &v), -EBADF);
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
	        T(tether_record),
	        T(taken_record),
	        T(keeps_record),
	        T(launcher_record),
	        cmocka_unit_test(run_stale_table),
	        cmocka_unit_test(run_name_table),
	        cmocka_unit_test(bad_fd),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
