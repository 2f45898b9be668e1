/* memguardd's kill policy: mg_policy_needs_memory, mg_policy_decide and
 * mg_guarded_percent_of_share. Pure functions of snapshots: no tree needed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fake_tree.h"
#include "policy.h"
#include "memguard/units.h"
#include "memguard/util.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define SEC 1000000ull

#define MAX_G 6

/* The defaults of a small node: act below 64 MiB whatever PSI says, below
 * 256 MiB under pressure; 10.00% full avg10 is pressure; 10 s settle. */
static struct mg_policy policy(void)
{
	return (struct mg_policy){
	        .available_min = 64 * MiB,
	        .available_pressure = 256 * MiB,
	        .full_avg10_max = 1000,
	        .settle_usec = 10 * SEC,
	};
}

/* A node that needs memory: MemAvailable under available_min. */
static struct mg_node_state short_node(void)
{
	return (struct mg_node_state){
	        .mem = {.mem_total = GiB, .mem_available = 32 * MiB},
	        .psi = {.full = {.present = true, .avg10 = 3800}},
	        .now_usec = 1000 * SEC,
	};
}

static struct mg_guarded task(uint64_t current, uint64_t share, uint64_t growth_bps)
{
	return (struct mg_guarded){
	        .path = "memguard/run-1/task",
	        .current = current,
	        .share = share,
	        .growth_bps = growth_bps,
	        .populated = true,
	};
}

static const char *verdict_name(enum mg_verdict v)
{
	switch (v) {
	case MG_VERDICT_CALM:
		return "CALM";
	case MG_VERDICT_SETTLING:
		return "SETTLING";
	case MG_VERDICT_NO_VICTIM:
		return "NO_VICTIM";
	case MG_VERDICT_KILL:
		return "KILL";
	}
	return "?";
}

/* Decides with ret pre-filled with garbage, so every field must be written. */
static void decide(const struct mg_policy *p, const struct mg_node_state *node, const struct mg_guarded *g,
                   size_t n, struct mg_decision *ret)
{
	memset(ret, 0xa5, sizeof(*ret));
	mg_policy_decide(p, node, g, n, ret);
	assert_true(memchr(ret->why, '\0', sizeof(ret->why)) != NULL);
}

/* --- mg_policy_needs_memory --- */

struct needs_case {
	const char *what;
	uint64_t available;
	bool trigger;
	uint32_t full_avg10;
	uint32_t full_avg10_max;
	bool expect;
	uint64_t fall_bps, lead_usec; /* the lead: MemAvailable's rate of fall, and how far ahead to act */
};

static void needs_memory_truth_table(void **state)
{
	static const struct needs_case cases[] = {
	        {"plenty, no pressure", 512 * MiB, false, 0, 1000, false, 0, 0},
	        {"below available_min, no pressure at all", 63 * MiB, false, 0, 1000, true, 0, 0},
	        {"just below available_min", 64 * MiB - 1, false, 0, 1000, true, 0, 0},
	        {"exactly available_min is not below it", 64 * MiB, false, 0, 1000, false, 0, 0},
	        {"below available_min, avg10 rule disabled", 10 * MiB, false, 0, UINT32_MAX, true, 0, 0},
	        {"trigger fired, below available_pressure", 200 * MiB, true, 0, 1000, true, 0, 0},
	        {"trigger fired, just below available_pressure", 256 * MiB - 1, true, 0, 1000, true, 0, 0},
	        {"trigger fired, exactly available_pressure", 256 * MiB, true, 0, 1000, false, 0, 0},
	        {"trigger fired, above available_pressure", 300 * MiB, true, 5000, 1000, false, 0, 0},
	        {"avg10 at the threshold, below available_pressure", 200 * MiB, false, 1000, 1000, true, 0,
	         0},
	        {"avg10 over the threshold, below available_pressure", 200 * MiB, false, 3800, 1000, true, 0,
	         0},
	        {"avg10 just under the threshold", 200 * MiB, false, 999, 1000, false, 0, 0},
	        {"avg10 over the threshold, above available_pressure", 300 * MiB, false, 9000, 1000, false, 0,
	         0},
	        {"avg10 100.00% with the rule disabled", 200 * MiB, false, 10000, UINT32_MAX, false, 0, 0},
	        {"trigger with the avg10 rule disabled", 200 * MiB, true, 10000, UINT32_MAX, true, 0, 0},
	        {"no MemAvailable at all, nothing else", 0, false, 0, UINT32_MAX, true, 0, 0},
	        /* Inside the pressure band, act when MemAvailable would reach available_min within the lead.
	         */
	        {"falling, but the floor is far", 200 * MiB, false, 0, 1000, false, 100 * MiB, SEC / 2},
	        {"the floor within the lead", 100 * MiB, false, 0, 1000, true, 100 * MiB, SEC / 2},
	        {"the floor exactly at the lead", 100 * MiB, false, 0, 1000, true, 72 * MiB, SEC / 2},
	        {"the floor just after the lead", 100 * MiB, false, 0, 1000, false, 71 * MiB, SEC / 2},
	        {"above the pressure band, however fast", 256 * MiB, false, 0, 1000, false, 10 * GiB,
	         SEC / 2},
	        {"not falling", 100 * MiB, false, 0, 1000, false, 0, SEC / 2},
	        {"at the floor, not falling", 64 * MiB, false, 0, 1000, false, 0, SEC / 2},
	        {"lead off", 100 * MiB, false, 0, 1000, false, GiB, 0},
	        {"a rate that would overflow", 65 * MiB, false, 0, 1000, true, UINT64_MAX, 10 * SEC},
	};
	struct mg_policy p = policy();

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct needs_case *c = &cases[i];
		struct mg_node_state node = {
		        .mem = {.mem_total = GiB, .mem_available = c->available},
		        .psi = {.full = {.present = true, .avg10 = c->full_avg10}},
		        .trigger_fired = c->trigger,
		        .available_fall_bps = c->fall_bps,
		        .now_usec = 1000 * SEC,
		};
		p.full_avg10_max = c->full_avg10_max;
		p.lead_usec = c->lead_usec;
		bool got = mg_policy_needs_memory(&p, &node);
		if (got != c->expect)
			print_error("case %zu (%s): needs_memory = %d, want %d\n", i, c->what, got,
			            c->expect);
		assert_int_equal(got, c->expect);

		/* decide() agrees: CALM exactly when no memory is needed. */
		struct mg_guarded g = task(GiB, GiB / 2, 0);
		struct mg_decision d;
		decide(&p, &node, &g, 1, &d);
		assert_int_equal(d.verdict, c->expect ? MG_VERDICT_KILL : MG_VERDICT_CALM);
	}
}

/* A kill for the lead says how fast MemAvailable was falling. */
static void decide_why_names_the_fall(void **state)
{
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_guarded g = task(300 * MiB, 200 * MiB, 0);
	struct mg_decision d;

	p.lead_usec = SEC / 2;
	node.mem.mem_available = 100 * MiB;
	node.psi.full.avg10 = 0;
	node.available_fall_bps = 150 * MiB;
	decide(&p, &node, &g, 1, &d);
	assert_int_equal(d.verdict, MG_VERDICT_KILL);
	assert_string_equal(d.why,
	                    "300MiB against a 200MiB share while node memory pressure (full avg10) was "
	                    "0.00% and MemAvailable 100MiB, falling 150MiB/s");
	/* Below the floor the fall is not the reason, and is not named. */
	node.mem.mem_available = 60 * MiB;
	decide(&p, &node, &g, 1, &d);
	ft_assert_not_contains(d.why, "falling");
}

/* --- mg_guarded_percent_of_share --- */

struct percent_case {
	uint64_t current, share, expect;
};

static void percent_of_share_table(void **state)
{
	static const struct percent_case cases[] = {
	        {0, 0, 0},
	        {5 * GiB, 0, 0}, /* unknown share */
	        {0, GiB, 0},
	        {GiB, GiB, 100},
	        {3, 2, 150},
	        {1, 3, 33}, /* whole percent, rounded down */
	        {2, 3, 66},
	        {GiB - 1, GiB, 99},
	        {2 * GiB, GiB, 200},
	        {UINT64_MAX, UINT64_MAX, 100},
	        {UINT64_MAX / 2, UINT64_MAX, 49},
	        {UINT64_MAX / 100, 1, UINT64_MAX / 100 * 100}, /* the largest exact value */
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_guarded g = task(cases[i].current, cases[i].share, 0);
		uint64_t got = mg_guarded_percent_of_share(&g);
		if (got != cases[i].expect)
			print_error("percent(%" PRIu64 ", %" PRIu64 ") = %" PRIu64 ", want %" PRIu64 "\n",
			            cases[i].current, cases[i].share, got, cases[i].expect);
		assert_true(got == cases[i].expect);
	}
}

/* current * 100 / share above UINT64_MAX: the percentage must not wrap round
 * to a small number; it saturates, so the order of cgroups stays right. */
static void percent_of_share_saturates(void **state)
{
	static const struct percent_case cases[] = {
	        {UINT64_MAX, 1, UINT64_MAX},      {UINT64_MAX - 1, 1, UINT64_MAX},
	        {UINT64_MAX, 2, UINT64_MAX},      {UINT64_MAX / 100 + 1, 1, UINT64_MAX},
	        {UINT64_MAX / 50, 1, UINT64_MAX},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_guarded g = task(cases[i].current, cases[i].share, 0);
		uint64_t got = mg_guarded_percent_of_share(&g);
		if (got != cases[i].expect)
			print_error("percent(%" PRIu64 ", %" PRIu64 ") = %" PRIu64
			            " (wrapped round), want %" PRIu64 " (saturated)\n",
			            cases[i].current, cases[i].share, got, cases[i].expect);
		assert_true(got == cases[i].expect);
	}
}

/* --- mg_policy_decide: the victim --- */

struct victim_case {
	const char *what;
	size_t n;
	struct mg_guarded g[MAX_G];
	enum mg_verdict verdict;
	long victim;
};

#define T3(cur_, share_, growth_)                                                                            \
	{                                                                                                    \
		.current = (cur_), .share = (share_), .growth_bps = (growth_), .populated = true             \
	}

static void check_victim_case(const struct victim_case *c, const struct mg_guarded *g, long expect_victim,
                              const char *order)
{
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_decision d;

	decide(&p, &node, g, c->n, &d);
	if (d.verdict != c->verdict || d.victim != expect_victim)
		print_error("%s (%s): %s victim %ld, want %s victim %ld (why: %s)\n", c->what, order,
		            verdict_name(d.verdict), d.victim, verdict_name(c->verdict), expect_victim,
		            d.why);
	assert_int_equal(d.verdict, c->verdict);
	assert_int_equal(d.victim, expect_victim);
	if (d.verdict == MG_VERDICT_KILL) {
		const struct mg_guarded *v = &g[d.victim];
		assert_true(v->populated && !v->protected_ && v->current > 0);
	}
}

/* Each case as listed and reversed: the order of the snapshot does not matter. */
static void check_victim_cases(const struct victim_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct victim_case *c = &cases[i];
		struct mg_guarded rev[MAX_G];

		check_victim_case(c, c->g, c->victim, "as listed");
		for (size_t k = 0; k < c->n; k++)
			rev[k] = c->g[c->n - 1 - k];
		check_victim_case(c, rev, c->victim < 0 ? -1 : (long)c->n - 1 - c->victim, "reversed");
	}
}

static void decide_victim_table(void **state)
{
	static const struct victim_case cases[] = {
	        {"furthest over its share",
	         3,
	         {T3(GiB, GiB, 0), T3(3 * GiB, 2 * GiB, 0), T3(GiB + GiB / 5, GiB, 0)},
	         MG_VERDICT_KILL,
	         1},
	        {"relative, not absolute: the small task at 300% before the big one at 150%",
	         2,
	         {T3(6 * GiB, 4 * GiB, 0), T3(300 * MiB, 100 * MiB, 0)},
	         MG_VERDICT_KILL,
	         1},
	        {"under its share still ranks",
	         2,
	         {T3(100 * MiB, GiB, 0), T3(900 * MiB, GiB, 0)},
	         MG_VERDICT_KILL,
	         1},
	        {"same percent: the faster grower",
	         3,
	         {T3(2 * GiB, GiB, 10 * MiB), T3(4 * GiB, 2 * GiB, 50 * MiB), T3(GiB, GiB / 2, 20 * MiB)},
	         MG_VERDICT_KILL,
	         1},
	        {"whole percent steps: 100.9% ties with 100.0%, and growth decides",
	         2,
	         {T3(1009, 1000, 0), T3(1000, 1000, 1)},
	         MG_VERDICT_KILL,
	         1},
	        {"101% beats 100.9% whatever the growth",
	         2,
	         {T3(1009, 1000, 1000 * MiB), T3(1010, 1000, 0)},
	         MG_VERDICT_KILL,
	         1},
	        {"same percent and growth: the larger",
	         3,
	         {T3(GiB, GiB / 2, 5), T3(4 * GiB, 2 * GiB, 5), T3(2 * GiB, GiB, 5)},
	         MG_VERDICT_KILL,
	         1},
	        {"unpopulated is never chosen",
	         2,
	         {{.current = 10 * GiB, .share = GiB, .growth_bps = GiB, .populated = false},
	          T3(GiB, GiB, 0)},
	         MG_VERDICT_KILL,
	         1},
	        {"protected is never chosen",
	         2,
	         {{.current = 10 * GiB,
	           .share = GiB,
	           .growth_bps = GiB,
	           .populated = true,
	           .protected_ = true},
	          T3(GiB, GiB, 0)},
	         MG_VERDICT_KILL,
	         1},
	        {"zero current is never chosen, even with a zero share",
	         3,
	         {T3(0, 0, GiB), T3(0, 1, GiB), T3(1, GiB, 0)},
	         MG_VERDICT_KILL,
	         2},
	        {"unknown share ranks after any known share over 0%",
	         2,
	         {T3(50 * GiB, 0, GiB), T3(11 * MiB, GiB, 0)},
	         MG_VERDICT_KILL,
	         1},
	        {"unknown share ties at 0% with a known share under 1%: growth decides",
	         2,
	         {T3(5 * MiB, GiB, 0), T3(5 * GiB, 0, 1)},
	         MG_VERDICT_KILL,
	         1},
	        {"only unknown shares, same growth: the largest",
	         2,
	         {T3(8 * GiB, 0, 10), T3(9 * GiB, 0, 10)},
	         MG_VERDICT_KILL,
	         1},
	        {"only unknown shares: the fastest grower",
	         3,
	         {T3(8 * GiB, 0, 10), T3(GiB, 0, 20), T3(9 * GiB, 0, 10)},
	         MG_VERDICT_KILL,
	         1},
	        {"a single eligible cgroup is the victim", 1, {T3(1, 0, 0)}, MG_VERDICT_KILL, 0},
	        {"nothing eligible",
	         4,
	         {{.current = 10 * GiB, .share = GiB, .populated = false},
	          {.current = 10 * GiB, .share = GiB, .populated = true, .protected_ = true},
	          T3(0, GiB, GiB),
	          {.current = 0, .share = 0, .populated = false, .protected_ = true}},
	         MG_VERDICT_NO_VICTIM,
	         -1},
	};

	check_victim_cases(cases, MG_ARRAY_SIZE(cases));
}

/* current * 100 overflows 64 bits: the ranking must still hold. */
static void decide_huge_values(void **state)
{
	static const struct victim_case cases[] = {
	        {"huge over-share beats an ordinary over-share",
	         2,
	         {T3(3 * GiB, GiB, GiB), T3(UINT64_MAX / 100 + 1, 1, 0)},
	         MG_VERDICT_KILL,
	         1},
	        {"both beyond any percentage: the faster grower",
	         2,
	         {T3(UINT64_MAX, 2, 0), T3(UINT64_MAX - 1, 1, 5)},
	         MG_VERDICT_KILL,
	         1},
	        {"near UINT64_MAX with equal shares: the fuller",
	         2,
	         {T3(UINT64_MAX, UINT64_MAX, 0), T3(UINT64_MAX - 1, UINT64_MAX, 0)},
	         MG_VERDICT_KILL,
	         0},
	};

	check_victim_cases(cases, MG_ARRAY_SIZE(cases));
}

static void decide_nothing_in_scope(void **state)
{
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_decision d;

	decide(&p, &node, NULL, 0, &d);
	assert_int_equal(d.verdict, MG_VERDICT_NO_VICTIM);
	assert_int_equal(d.victim, -1);
	/* The reason still gives the node's numbers. */
	ft_assert_contains(d.why, "MemAvailable 32MiB");

	node.mem.mem_available = GiB;
	decide(&p, &node, NULL, 0, &d);
	assert_int_equal(d.verdict, MG_VERDICT_CALM);
	assert_int_equal(d.victim, -1);
	assert_string_equal(d.why, "");
}

static void decide_calm_when_not_needed(void **state)
{
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_guarded g[] = {task(10 * GiB, GiB, GiB), task(5 * GiB, 0, 0)};
	struct mg_decision d;

	node.mem.mem_available = 300 * MiB; /* above both thresholds */
	node.psi.full.avg10 = 10000;
	node.trigger_fired = true;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_CALM);
	assert_int_equal(d.victim, -1);
	assert_string_equal(d.why, "");
}

/* --- mg_policy_decide: settling after a kill --- */

struct settle_case {
	const char *what;
	uint64_t now, last_kill, available;
	enum mg_verdict verdict;
};

static void decide_settling_table(void **state)
{
	static const struct settle_case cases[] = {
	        {"never killed (last_kill 0), early after boot", 3 * SEC, 0, 40 * MiB, MG_VERDICT_KILL},
	        {"never killed, now 0 too", 0, 0, 40 * MiB, MG_VERDICT_KILL},
	        {"just killed", 1000 * SEC, 1000 * SEC, 40 * MiB, MG_VERDICT_SETTLING},
	        {"1 s after a kill", 1001 * SEC, 1000 * SEC, 40 * MiB, MG_VERDICT_SETTLING},
	        {"1 us before settle_usec ends", 1010 * SEC - 1, 1000 * SEC, 40 * MiB, MG_VERDICT_SETTLING},
	        {"exactly settle_usec later", 1010 * SEC, 1000 * SEC, 40 * MiB, MG_VERDICT_KILL},
	        {"long after", 5000 * SEC, 1000 * SEC, 40 * MiB, MG_VERDICT_KILL},
	        {"within settle, at exactly available_min / 2", 1001 * SEC, 1000 * SEC, 32 * MiB,
	         MG_VERDICT_SETTLING},
	        {"within settle, below available_min / 2", 1001 * SEC, 1000 * SEC, 32 * MiB - 1,
	         MG_VERDICT_KILL},
	        {"within settle, MemAvailable 0", 1001 * SEC, 1000 * SEC, 0, MG_VERDICT_KILL},
	        {"within settle but calm", 1001 * SEC, 1000 * SEC, 900 * MiB, MG_VERDICT_CALM},
	};
	struct mg_policy p = policy();
	struct mg_guarded g[] = {task(GiB, GiB / 2, 0), task(GiB, GiB, 0)};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct settle_case *c = &cases[i];
		struct mg_node_state node = short_node();
		struct mg_decision d;

		node.now_usec = c->now;
		node.last_kill_usec = c->last_kill;
		node.mem.mem_available = c->available;
		decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
		if (d.verdict != c->verdict)
			print_error("case %zu (%s): %s, want %s (why: %s)\n", i, c->what,
			            verdict_name(d.verdict), verdict_name(c->verdict), d.why);
		assert_int_equal(d.verdict, c->verdict);
		assert_int_equal(d.victim, c->verdict == MG_VERDICT_KILL ? 0 : -1);
		if (c->verdict == MG_VERDICT_SETTLING)
			ft_assert_contains(d.why, "MemAvailable");
	}
}

/* Settling comes before looking for a victim: no victim is settling too. */
static void decide_settling_without_victim(void **state)
{
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_decision d;

	node.last_kill_usec = node.now_usec - SEC;
	decide(&p, &node, NULL, 0, &d);
	assert_int_equal(d.verdict, MG_VERDICT_SETTLING);
	assert_int_equal(d.victim, -1);
}

/* --- mg_policy_decide: the reason --- */

struct why_case {
	const char *what;
	uint64_t current, share, available;
	uint32_t full_avg10;
	bool trigger;
	const char *expect;
};

static void decide_why_text(void **state)
{
	static const struct why_case cases[] = {
	        {"the example", 2040109466ull /* 1.9 GiB */, GiB + 4 * KiB, 200 * MiB, 3800, false,
	         "1.9GiB against a 1.0GiB share while node memory pressure (full avg10) was 38.00% and "
	         "MemAvailable 200MiB"},
	        {"exact sizes print without decimals", 2 * GiB, GiB, 40 * MiB, 0, false,
	         "2GiB against a 1GiB share while node memory pressure (full avg10) was 0.00% and "
	         "MemAvailable 40MiB"},
	        {"a fired trigger is named", 768 * MiB, 512 * MiB, 100 * MiB, 5, true,
	         "768MiB against a 512MiB share while node memory pressure (full avg10) was 0.05% (PSI "
	         "trigger fired) and MemAvailable 100MiB"},
	        {"no share known", 3 * GiB + GiB / 2, 0, 60 * MiB + 512 * KiB, 10000, false,
	         "3.5GiB (no share known) while node memory pressure (full avg10) was 100.00% and "
	         "MemAvailable 60.5MiB"},
	};
	struct mg_policy p = policy();

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct why_case *c = &cases[i];
		struct mg_node_state node = short_node();
		struct mg_guarded g = task(c->current, c->share, 0);
		struct mg_decision d;

		node.mem.mem_available = c->available;
		node.psi.full.avg10 = c->full_avg10;
		node.trigger_fired = c->trigger;
		decide(&p, &node, &g, 1, &d);
		assert_int_equal(d.verdict, MG_VERDICT_KILL);
		if (strcmp(d.why, c->expect) != 0)
			print_error("case %zu (%s):\n got  \"%s\"\n want \"%s\"\n", i, c->what, d.why,
			            c->expect);
		assert_string_equal(d.why, c->expect);
	}
}

/* The largest numbers still fit the why buffer, NUL-terminated. */
static void decide_why_huge_values(void **state)
{
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_guarded g[] = {task(UINT64_MAX - 1, UINT64_MAX - 2, UINT64_MAX)};
	struct mg_decision d;
	char want[MG_SIZE_STRLEN];

	node.trigger_fired = true;
	node.psi.full.avg10 = UINT32_MAX;
	p.available_min = UINT64_MAX;
	node.mem.mem_available = UINT64_MAX - 1;
	decide(&p, &node, g, 1, &d);
	assert_int_equal(d.verdict, MG_VERDICT_KILL);
	assert_int_equal(d.victim, 0);
	assert_true(strlen(d.why) < sizeof(d.why));
	ft_assert_contains(d.why, mg_size_format(UINT64_MAX - 1, want));
	ft_assert_contains(d.why, "42949672.95%");
	ft_assert_contains(d.why, "(PSI trigger fired)");
	/* The sentence is whole: truncation would cut the MemAvailable off. */
	char tail[64];
	snprintf(tail, sizeof(tail), "and MemAvailable %s", mg_size_format(UINT64_MAX - 1, want));
	size_t wl = strlen(d.why), tl = strlen(tail);
	assert_true(wl >= tl && strcmp(d.why + wl - tl, tail) == 0);
}

/* --- a realistic scenario --- */

static void decide_four_elastic_tasks(void **state)
{
	/* A 1 GiB node, four tasks of a 256 MiB share each; task 1 is at 2x its
	 * share and grows fastest. The PSI trigger fires with 90 MiB left. */
	struct mg_policy p = policy();
	struct mg_node_state node = {
	        .mem = {.mem_total = GiB, .mem_available = 90 * MiB},
	        .psi = {.some = {.present = true, .avg10 = 4000}, .full = {.present = true, .avg10 = 1250}},
	        .trigger_fired = true,
	        .now_usec = 7200 * SEC,
	};
	struct mg_guarded g[] = {
	        {"memguard/run-7/task-0", 200 * MiB, 256 * MiB, 1 * MiB, true, false},
	        {"memguard/run-7/task-1", 512 * MiB, 256 * MiB, 50 * MiB, true, false},
	        {"memguard/run-7/task-2", 240 * MiB, 256 * MiB, 0, true, false},
	        {"memguard/run-7/task-3", 180 * MiB, 256 * MiB, 5 * MiB, true, false},
	};
	struct mg_decision d;

	assert_true(mg_policy_needs_memory(&p, &node));
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_KILL);
	assert_int_equal(d.victim, 1);
	assert_string_equal(g[d.victim].path, "memguard/run-7/task-1");
	assert_string_equal(d.why,
	                    "512MiB against a 256MiB share while node memory pressure (full avg10) was "
	                    "12.50% (PSI trigger fired) and MemAvailable 90MiB");

	/* 2 s later the kill is still taking effect. */
	node.last_kill_usec = node.now_usec;
	node.now_usec += 2 * SEC;
	node.trigger_fired = false;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_SETTLING);
	assert_int_equal(d.victim, -1);

	/* Task 1 is gone and memory is back: calm. */
	g[1].populated = false;
	g[1].current = 0;
	node.mem.mem_available = 600 * MiB;
	node.psi.full.avg10 = 200;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_CALM);

	/* 11 s after the kill the others grew and pressure is back: task 2 at 93%. */
	node.now_usec = node.last_kill_usec + 11 * SEC;
	node.mem.mem_available = 50 * MiB;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_KILL);
	assert_int_equal(d.victim, 2);
	ft_assert_contains(d.why, "240MiB against a 256MiB share");
	ft_assert_contains(d.why, "MemAvailable 50MiB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(needs_memory_truth_table),  cmocka_unit_test(decide_why_names_the_fall),
	        cmocka_unit_test(percent_of_share_table),    cmocka_unit_test(percent_of_share_saturates),
	        cmocka_unit_test(decide_victim_table),       cmocka_unit_test(decide_huge_values),
	        cmocka_unit_test(decide_nothing_in_scope),   cmocka_unit_test(decide_calm_when_not_needed),
	        cmocka_unit_test(decide_settling_table),     cmocka_unit_test(decide_settling_without_victim),
	        cmocka_unit_test(decide_why_text),           cmocka_unit_test(decide_why_huge_values),
	        cmocka_unit_test(decide_four_elastic_tasks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
