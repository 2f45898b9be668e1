/* --halt and parallel's exit statuses (farm/halt.c) as tables: the jobs
 * end in order (as with -j1) and each case's halt and status are what GNU
 * parallel 20221122 gives for the same statuses
 * (tests/integration/parallel_side_by_side.sh runs the same cases). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "farm/halt.h"
#include "memguard/util.h"

static void parse_table(void **state)
{
	static const struct {
		const char *s;
		enum mg_halt_when when;
		enum mg_halt_why why;
		bool percent;
		unsigned value;
	} good[] = {
	        {"now,fail=1", MG_HALT_NOW, MG_HALT_FAIL, false, 1},
	        {"soon,fail=3", MG_HALT_SOON, MG_HALT_FAIL, false, 3},
	        {"soon,fail=3%", MG_HALT_SOON, MG_HALT_FAIL, true, 3},
	        {"now,success=1", MG_HALT_NOW, MG_HALT_SUCCESS, false, 1},
	        {"soon,success=20%", MG_HALT_SOON, MG_HALT_SUCCESS, true, 20},
	        {"now,done=3", MG_HALT_NOW, MG_HALT_DONE, false, 3},
	        {"never", MG_HALT_NEVER, 0, false, 0},
	        {"0", MG_HALT_NEVER, 0, false, 0},
	        {"1", MG_HALT_SOON, MG_HALT_FAIL, false, 1},
	        {"2", MG_HALT_NOW, MG_HALT_FAIL, false, 1},
	        {"-1", MG_HALT_SOON, MG_HALT_SUCCESS, false, 1},
	        {"-2", MG_HALT_NOW, MG_HALT_SUCCESS, false, 1},
	        {"5%", MG_HALT_SOON, MG_HALT_FAIL, true, 5},
	        {"now,fail=100%", MG_HALT_NOW, MG_HALT_FAIL, true, 100},
	};
	static const char *const bad[] = {
	        "",           "sometimes",   "now",           "now,fail",     "now,fail=",   "now,fail=0",
	        "now,fail=x", "now,oops=1",  "now,fail=101%", "later,fail=1", "now,fail=1x", "3",
	        "now,fail=%", "soon,fail=-1"};
	char err[256];

	for (size_t i = 0; i < MG_ARRAY_SIZE(good); i++) {
		struct mg_halt h;
		if (mg_halt_parse(good[i].s, &h, err, sizeof(err)) != 0)
			print_error("\"%s\": %s\n", good[i].s, err);
		assert_int_equal(mg_halt_parse(good[i].s, &h, err, sizeof(err)), 0);
		assert_true(h.given);
		assert_int_equal(h.when, good[i].when);
		if (h.when == MG_HALT_NEVER)
			continue;
		assert_int_equal(h.why, good[i].why);
		assert_int_equal(h.percent, good[i].percent);
		assert_int_equal(h.value, good[i].value);
	}
	for (size_t i = 0; i < MG_ARRAY_SIZE(bad); i++) {
		struct mg_halt h;
		err[0] = '\0';
		if (mg_halt_parse(bad[i], &h, err, sizeof(err)) != -EINVAL)
			print_error("\"%s\" was accepted\n", bad[i]);
		assert_int_equal(mg_halt_parse(bad[i], &h, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "invalid --halt"));
	}
}

struct run_case {
	const char *halt; /* NULL: none */
	int statuses[128];
	size_t n;
	size_t halted_after; /* the job whose end halts (from 1); 0: none */
	enum mg_halt_when when;
	int want;
};

static void run_table(void **state)
{
	static const struct run_case cases[] = {
	        {NULL, {0, 1, 2, 0, 3}, 5, 0, MG_HALT_NEVER, 3},
	        {NULL, {0, 0}, 2, 0, MG_HALT_NEVER, 0},
	        {NULL, {137, 143}, 2, 0, MG_HALT_NEVER, 2},
	        {"now,fail=1", {0, 7, 0, 0}, 4, 2, MG_HALT_NOW, 7},
	        {"now,fail=1", {137, 0}, 2, 1, MG_HALT_NOW, 137},
	        {"2", {0, 4, 0}, 3, 2, MG_HALT_NOW, 4},
	        {"soon,fail=1", {0, 1, 1}, 3, 2, MG_HALT_SOON, 1},
	        {"now,fail=2", {1, 0, 3, 4}, 4, 3, MG_HALT_NOW, 2},
	        {"now,fail=50%", {1, 0, 3, 4}, 4, 3, MG_HALT_NOW, 50},
	        {"now,fail=25%", {0, 5, 3, 4}, 4, 2, MG_HALT_NOW, 5},
	        {"soon,fail=30%", {0, 5, 0, 0, 0, 0}, 6, 0, MG_HALT_NEVER, 17},
	        {"now,success=1", {1, 0, 3, 4}, 4, 2, MG_HALT_NOW, 0},
	        {"now,success=2", {1, 3, 4}, 3, 0, MG_HALT_NEVER, 3},
	        {"now,done=1", {7, 0, 3}, 3, 1, MG_HALT_NOW, 7},
	        {"soon,done=2", {6, 0, 3}, 3, 2, MG_HALT_SOON, 1},
	        {"never", {0, 1, 1}, 3, 0, MG_HALT_NEVER, 2},
	};

	for (size_t c = 0; c < MG_ARRAY_SIZE(cases); c++) {
		const struct run_case *k = &cases[c];
		struct mg_halt h = {0};
		struct mg_halt_state st = {0};
		char err[256];
		size_t halted_after = 0;
		enum mg_halt_when when = MG_HALT_NEVER;

		if (k->halt)
			assert_int_equal(mg_halt_parse(k->halt, &h, err, sizeof(err)), 0);
		for (size_t i = 0; i < k->n; i++) {
			st.started++;
			when = mg_halt_job_ended(&h, &st, k->n, k->statuses[i]);
			if (when != MG_HALT_NEVER) {
				halted_after = i + 1;
				break;
			}
		}
		int got = mg_halt_exit_status(&h, &st);
		if (halted_after != k->halted_after || got != k->want)
			print_error("case %zu (--halt %s): halted after %zu, status %d; want %zu, %d\n", c,
			            k->halt ? k->halt : "none", halted_after, got, k->halted_after, k->want);
		assert_int_equal(halted_after, k->halted_after);
		assert_int_equal(when, k->when);
		assert_int_equal(got, k->want);
	}
}

static void at_most_101(void **state)
{
	struct mg_halt none = {0}, count;
	struct mg_halt_state st = {0};
	char err[256];

	for (int i = 0; i < 102; i++) {
		st.started++;
		assert_int_equal(mg_halt_job_ended(&none, &st, 102, 1), MG_HALT_NEVER);
	}
	assert_int_equal(mg_halt_exit_status(&none, &st), 101);

	/* --halt soon,fail=102 reached: min(failed, 101) */
	assert_int_equal(mg_halt_parse("soon,fail=102", &count, err, sizeof(err)), 0);
	st = (struct mg_halt_state){0};
	for (int i = 0; i < 102; i++) {
		st.started++;
		(void)mg_halt_job_ended(&count, &st, 200, 1);
	}
	assert_true(st.halted);
	assert_int_equal(mg_halt_exit_status(&count, &st), 101);
}

/* Jobs that end after the halt (soon: the ones running) count, but the
 * status stays the one fixed when it halted. */
static void status_fixed_once(void **state)
{
	struct mg_halt h;
	struct mg_halt_state st = {0};
	char err[256];

	assert_int_equal(mg_halt_parse("soon,fail=1", &h, err, sizeof(err)), 0);
	st.started = 3;
	assert_int_equal(mg_halt_job_ended(&h, &st, 4, 3), MG_HALT_SOON);
	assert_int_equal(mg_halt_job_ended(&h, &st, 4, 9), MG_HALT_SOON);
	assert_int_equal(mg_halt_job_ended(&h, &st, 4, 0), MG_HALT_NEVER);
	assert_int_equal(st.failed, 2);
	assert_int_equal(mg_halt_exit_status(&h, &st), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(parse_table),
	        cmocka_unit_test(run_table),
	        cmocka_unit_test(at_most_101),
	        cmocka_unit_test(status_fixed_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
