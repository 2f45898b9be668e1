/* The farm's pure decisions: mg_sched_next (admission by budget),
 * mg_sched_next_pool (and on which node) and mg_retry_share (the share of a
 * retry), as tables. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>

#include "farm/schedule.h"

#define MiB (1ull << 20)
#define MAXP 6

struct sched_case {
	const char *name;
	uint64_t budget, in_use;
	unsigned free_slots;
	size_t npending;
	struct mg_sched_task pending[MAXP];
	int want;          /* 1: starts one, 0: none */
	size_t want_index; /* when want */
	uint64_t want_share;
};

static void sched_table(void **state)
{
	static const struct sched_case cases[] = {
	        {"nothing pending", 400 * MiB, 0, 4, 0, {{0}}, 0, 0, 0},
	        {"no free slot", 400 * MiB, 0, 0, 1, {{1, 100 * MiB}}, 0, 0, 0},
	        {"first fits", 400 * MiB, 300 * MiB, 1, 2, {{1, 100 * MiB}, {1, 100 * MiB}}, 1, 0, 100 * MiB},
	        {"exactly the free budget", 400 * MiB, 300 * MiB, 1, 1, {{1, 100 * MiB}}, 1, 0, 100 * MiB},
	        {"one byte over the free budget", 400 * MiB, 300 * MiB + 1, 1, 1, {{1, 100 * MiB}}, 0, 0, 0},
	        {"a slot but no budget", 400 * MiB, 400 * MiB, 3, 1, {{1, 100 * MiB}}, 0, 0, 0},
	        {"in use above the budget (elastic overshoot) starts nothing",
	         400 * MiB,
	         500 * MiB,
	         2,
	         1,
	         {{1, 100 * MiB}},
	         0,
	         0,
	         0},
	        {"first attempts before a retry that fits",
	         400 * MiB,
	         0,
	         4,
	         2,
	         {{2, 200 * MiB}, {1, 100 * MiB}},
	         1,
	         1,
	         100 * MiB},
	        {"a retry waits for room: 100 MiB free, it needs 200",
	         400 * MiB,
	         300 * MiB,
	         1,
	         1,
	         {{2, 200 * MiB}},
	         0,
	         0,
	         0},
	        {"a retry starts once its share is free",
	         400 * MiB,
	         200 * MiB,
	         2,
	         1,
	         {{2, 200 * MiB}},
	         1,
	         0,
	         200 * MiB},
	        {"a smaller retry that fits goes before a larger one that does not",
	         400 * MiB,
	         200 * MiB,
	         2,
	         2,
	         {{3, 400 * MiB}, {2, 200 * MiB}},
	         1,
	         1,
	         200 * MiB},
	        {"a first attempt that does not fit lets a retry that does go",
	         400 * MiB,
	         350 * MiB,
	         1,
	         2,
	         {{1, 100 * MiB}, {2, 50 * MiB}},
	         1,
	         1,
	         50 * MiB},
	        {"more than the budget with nothing running: the whole budget",
	         400 * MiB,
	         0,
	         1,
	         1,
	         {{2, 800 * MiB}},
	         1,
	         0,
	         400 * MiB},
	        {"more than the budget while others run: waits",
	         400 * MiB,
	         100 * MiB,
	         1,
	         1,
	         {{2, 800 * MiB}},
	         0,
	         0,
	         0},
	        {"zero budget never starts", 0, 0, 1, 1, {{1, 100 * MiB}}, 0, 0, 0},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		const struct sched_case *k = &cases[c];
		struct mg_sched_input in = {.budget = k->budget,
		                            .in_use = k->in_use,
		                            .free_slots = k->free_slots,
		                            .pending = k->pending,
		                            .npending = k->npending};
		size_t index = 99;
		uint64_t share = 0;
		int r = mg_sched_next(&in, &index, &share);
		if (r != k->want || (r && (index != k->want_index || share != k->want_share)))
			print_error("%s: got %d index %zu share %llu\n", k->name, r, index,
			            (unsigned long long)share);
		assert_int_equal(r, k->want);
		if (r) {
			assert_int_equal(index, k->want_index);
			assert_int_equal(share, k->want_share);
		}
	}
}

/* Started one by one until nothing more fits, the shares in use never pass
 * the budget, whatever the mix. */
static void sched_never_overcommits(void **state)
{
	struct mg_sched_task pending[MAXP] = {{1, 100 * MiB}, {2, 300 * MiB}, {1, 100 * MiB},
	                                      {3, 250 * MiB}, {1, 100 * MiB}, {2, 150 * MiB}};
	size_t n = MAXP;
	uint64_t in_use = 0;

	for (;;) {
		struct mg_sched_input in = {.budget = 400 * MiB,
		                            .in_use = in_use,
		                            .free_slots = 8,
		                            .pending = pending,
		                            .npending = n};
		size_t index;
		uint64_t share;
		if (mg_sched_next(&in, &index, &share) == 0)
			break;
		in_use += share;
		assert_true(in_use <= 400 * MiB);
		pending[index] = pending[--n];
	}
	/* 100+100+100 first, then the 50 of room left fits none of the retries */
	assert_int_equal(in_use, 300 * MiB);
	assert_int_equal(n, 3);
}

struct retry_case {
	const char *name;
	struct mg_retry_input in;
	uint64_t want;
};

static void retry_table(void **state)
{
	static const struct retry_case cases[] = {
	        {"not for memory", {false, 2, 0, 100 * MiB, 100 * MiB, true, 400 * MiB, 4096}, 0},
	        {"twice the share when the peak is low",
	         {true, 2, 0, 100 * MiB, 100 * MiB, true, 400 * MiB, 4096},
	         200 * MiB},
	        {"1.5 x the peak when that is more",
	         {true, 2, 0, 100 * MiB, 160 * MiB, true, 400 * MiB, 4096},
	         240 * MiB},
	        {"peak unknown: twice the share",
	         {true, 2, 0, 100 * MiB, 0, false, 400 * MiB, 4096},
	         200 * MiB},
	        {"capped at the budget",
	         {true, 2, 1, 300 * MiB, 300 * MiB, true, 400 * MiB, 4096},
	         400 * MiB},
	        {"the old share was the budget: nothing larger to give",
	         {true, 5, 1, 400 * MiB, 400 * MiB, true, 400 * MiB, 4096},
	         0},
	        {"retries used up", {true, 2, 2, 100 * MiB, 100 * MiB, true, 400 * MiB, 4096}, 0},
	        {"no retries asked for", {true, 0, 0, 100 * MiB, 100 * MiB, true, 400 * MiB, 4096}, 0},
	        {"rounded up to a page", {true, 1, 0, 1000, 1001, true, 400 * MiB, 4096}, 4096},
	        {"a page-rounded retry is capped at an unaligned budget",
	         {true, 1, 0, 3000, 3000, true, 5000, 4096},
	         5000},
	        {"huge peak does not overflow",
	         {true, 1, 0, 100 * MiB, UINT64_MAX, true, 400 * MiB, 4096},
	         200 * MiB},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		uint64_t got = mg_retry_share(&cases[c].in);
		if (got != cases[c].want)
			print_error("%s: got %llu, want %llu\n", cases[c].name, (unsigned long long)got,
			            (unsigned long long)cases[c].want);
		assert_int_equal(got, cases[c].want);
	}
}

/* A task that grows without end: each retry doubles until the budget, then
 * stops, within --retries and without looping. */
static void retry_runaway_stops(void **state)
{
	struct mg_retry_input in = {.for_memory = true,
	                            .retries = 10,
	                            .share = 100 * MiB,
	                            .budget = 700 * MiB,
	                            .page_size = 4096};
	uint64_t shares[12];
	size_t n = 0;

	for (uint64_t s; (s = mg_retry_share(&in)) != 0; n++) {
		assert_true(n < 12);
		shares[n] = s;
		in.share = s;
		in.peak = s; /* killed at it */
		in.peak_known = true;
		in.retried++;
	}
	assert_int_equal(n, 3);
	assert_int_equal(shares[0], 200 * MiB);
	assert_int_equal(shares[1], 400 * MiB);
	assert_int_equal(shares[2], 700 * MiB);
}

struct pool_case {
	const char *name;
	size_t npools;
	struct mg_sched_pool pools[3];
	size_t npending;
	struct mg_sched_task pending[3];
	int want;
	size_t want_pool, want_index;
	uint64_t want_share;
};

static void pool_table(void **state)
{
	static const struct pool_case cases[] = {
	        {"one pool: a first attempt takes the pool's share",
	         1,
	         {{400 * MiB, 0, 4, 100 * MiB}},
	         1,
	         {{1, 0}},
	         1,
	         0,
	         0,
	         100 * MiB},
	        {"the node with the most free slots first",
	         2,
	         {{400 * MiB, 100 * MiB, 1, 100 * MiB}, {400 * MiB, 0, 2, 80 * MiB}},
	         1,
	         {{1, 0}},
	         1,
	         1,
	         0,
	         80 * MiB},
	        {"ties go to the lower index",
	         2,
	         {{400 * MiB, 0, 2, 100 * MiB}, {400 * MiB, 0, 2, 100 * MiB}},
	         1,
	         {{1, 0}},
	         1,
	         0,
	         0,
	         100 * MiB},
	        {"no CPU free anywhere (free_slots 0): nothing",
	         2,
	         {{400 * MiB, 0, 0, 100 * MiB}, {400 * MiB, 0, 0, 100 * MiB}},
	         1,
	         {{1, 0}},
	         0,
	         0,
	         0,
	         0},
	        {"a retry goes where its share fits",
	         2,
	         {{400 * MiB, 300 * MiB, 1, 100 * MiB}, {400 * MiB, 100 * MiB, 1, 100 * MiB}},
	         1,
	         {{2, 250 * MiB}},
	         1,
	         1,
	         0,
	         250 * MiB},
	        {"a resumed first attempt keeps its own share",
	         1,
	         {{400 * MiB, 0, 1, 100 * MiB}},
	         1,
	         {{1, 300 * MiB}},
	         1,
	         0,
	         0,
	         300 * MiB},
	        {"the stall rule on the idle node with the largest budget",
	         2,
	         {{300 * MiB, 0, 1, 100 * MiB}, {500 * MiB, 0, 1, 100 * MiB}},
	         1,
	         {{2, 800 * MiB}},
	         1,
	         1,
	         0,
	         500 * MiB},
	        {"no stall rule while something runs everywhere",
	         2,
	         {{300 * MiB, 100 * MiB, 1, 100 * MiB}, {500 * MiB, 100 * MiB, 1, 100 * MiB}},
	         1,
	         {{2, 800 * MiB}},
	         0,
	         0,
	         0,
	         0},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct pool_case *c = &cases[i];
		size_t pool = 99, index = 99;
		uint64_t share = 0;
		int got = mg_sched_next_pool(c->pools, c->npools, c->pending, c->npending, &pool, &index,
		                             &share);
		if (got != c->want ||
		    (got && (pool != c->want_pool || index != c->want_index || share != c->want_share)))
			fail_msg("%s: got %d pool %zu index %zu share %llu", c->name, got, pool, index,
			         (unsigned long long)share);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(sched_table),         cmocka_unit_test(sched_never_overcommits),
	        cmocka_unit_test(retry_table),         cmocka_unit_test(pool_table),
	        cmocka_unit_test(retry_runaway_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
