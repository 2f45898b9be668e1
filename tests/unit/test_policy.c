/* memguardd's policy: mg_policy_needs_memory, mg_policy_decide (victim,
 * settling, fence or kill, lifting the fences), mg_guarded_percent_of_share,
 * mg_fall_rate_update and _start, mg_policy_poll_usec and
 * mg_policy_from_config. Pure functions of snapshots and settings: no tree
 * needed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fake_tree.h"
#include "guard/policy.h"
#include "memguard/config.h"
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

/* With the fence on, a fall that reaches the hard floor within the lead kills
 * at once, and the reason says why the fence was skipped, naming the rate
 * once. */
static void decide_why_names_the_skipped_fence(void **state)
{
	static const struct {
		uint64_t available;
		const char *why;
	} cases[] = {
	        {100 * MiB,
	         "300MiB against a 200MiB share while node memory pressure (full avg10) was 0.00% and "
	         "MemAvailable 100MiB, falling 150MiB/s; at that rate it would reach half of "
	         "available_min before a fence could hold"},
	        {60 * MiB,
	         "300MiB against a 200MiB share while node memory pressure (full avg10) was 0.00% and "
	         "MemAvailable 60MiB; falling at 150MiB/s, it would reach half of available_min "
	         "before a fence could hold"},
	};
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_guarded g = task(300 * MiB, 200 * MiB, 0);
	struct mg_decision d;

	p.throttle = true;
	p.lead_kill = true;
	p.lead_usec = SEC / 2;
	node.psi.full.avg10 = 0;
	node.available_fall_bps = 150 * MiB;
	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		node.mem.mem_available = cases[i].available;
		decide(&p, &node, &g, 1, &d);
		assert_int_equal(d.verdict, MG_VERDICT_KILL);
		assert_string_equal(d.why, cases[i].why);
	}
}

/* lead_kill decides whether the fall alone skips the fence: each case runs
 * with it on and off. Off, the victim is fenced in, or held while its fence
 * stands, until it pushes against the fence or MemAvailable is below the
 * hard floor (32 MiB here). */
static void decide_lead_kill_table(void **state)
{
	static const struct {
		const char *what;
		uint64_t available, fall_bps, lead_usec;
		uint64_t avg10; /* hundredths of % */
		bool fenced, pushed;
		enum mg_verdict on, off;
		uint64_t allowance_off;
		bool lead_named_on; /* "before a fence could hold" in the reason, lead_kill on */
	} cases[] = {
	        /* Short by the fall alone (inside the pressure band, no pressure):
	         * 150 MiB/s for 500 ms is 75 MiB, and the hard floor is 68 away. */
	        {"the fall alone", 100 * MiB, 150 * MiB, SEC / 2, 0, false, false, MG_VERDICT_KILL,
	         MG_VERDICT_FENCE, 51 * MiB, true},
	        {"falling to the hard floor within the lead", 56 * MiB, 100 * MiB, SEC / 4, 3800, false,
	         false, MG_VERDICT_KILL, MG_VERDICT_FENCE, 18 * MiB, true},
	        {"fenced, falling to the hard floor within the lead", 40 * MiB, 100 * MiB, SEC / 4, 3800,
	         true, false, MG_VERDICT_KILL, MG_VERDICT_HOLD, 0, true},
	        {"fenced, falling slowly", 40 * MiB, 8 * MiB, SEC / 4, 3800, true, false, MG_VERDICT_HOLD,
	         MG_VERDICT_HOLD, 0, false},
	        {"fenced, raised before, and pushed against it", 40 * MiB, 100 * MiB, SEC / 4, 3800, true,
	         true, MG_VERDICT_KILL, MG_VERDICT_KILL, 0, false},
	        {"below the hard floor", 32 * MiB - 1, 100 * MiB, SEC / 4, 3800, false, false,
	         MG_VERDICT_KILL, MG_VERDICT_KILL, 0, false},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		for (int on = 0; on <= 1; on++) {
			struct mg_policy p = policy();
			struct mg_node_state node = short_node();
			struct mg_guarded g = task(3 * GiB, GiB, 0);
			struct mg_decision d;
			enum mg_verdict want = on ? cases[i].on : cases[i].off;

			p.throttle = true;
			p.lead_kill = on;
			p.lead_usec = cases[i].lead_usec;
			node.available_fall_bps = cases[i].fall_bps;
			node.mem.mem_available = cases[i].available;
			node.psi.full.avg10 = (uint32_t)cases[i].avg10;
			g.fenced = cases[i].fenced;
			g.pushed = cases[i].pushed;
			/* A pushed fence here was raised before: one never raised is raised once first
			 * (decide_widen_table). */
			g.widened = cases[i].pushed;
			decide(&p, &node, &g, 1, &d);
			if (d.verdict != want)
				print_error("case %zu (%s), lead_kill %s: %s, want %s\n", i, cases[i].what,
				            on ? "on" : "off", mg_verdict_name(d.verdict),
				            mg_verdict_name(want));
			assert_int_equal(d.verdict, want);
			assert_true(d.allowance == (on ? 0 : cases[i].allowance_off));
			assert_int_equal(strstr(d.why, "before a fence could hold") != NULL,
			                 on && cases[i].lead_named_on);
		}
	}
	/* Short by the fall alone, the reason names the rate either way. */
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_guarded g = task(3 * GiB, GiB, 0);
	struct mg_decision d;

	p.throttle = true;
	p.lead_usec = SEC / 2;
	node.psi.full.avg10 = 0;
	node.available_fall_bps = 150 * MiB;
	node.mem.mem_available = 100 * MiB;
	decide(&p, &node, &g, 1, &d);
	assert_int_equal(d.verdict, MG_VERDICT_FENCE);
	ft_assert_contains(d.why, "MemAvailable 100MiB, falling 150MiB/s");
}

/* A fence holds its own task, not what the others take: once that fall is
 * measured, and until the fence is first raised, a fenced victim is killed
 * when the others alone would reach the hard floor (32 MiB) within the lead,
 * rather than held until MemAvailable is there. MemAvailable is 40 MiB: 8
 * MiB above it, which 32 MiB/s covers in 250 ms. */
static void decide_hold_by_others_table(void **state)
{
	static const struct {
		const char *what;
		uint64_t available, lead_usec, node_bps, others_bps;
		bool measured, widened, fenced, pushed, lead_kill;
		enum mg_verdict verdict;
		uint64_t allowance;
		const char *named; /* in the reason; NULL: "the others take" is not */
	} cases[] = {
	        {"the others reach the hard floor within the lead: kill", 40 * MiB, SEC / 4, 100 * MiB,
	         40 * MiB, true, false, true, false, false, MG_VERDICT_KILL, 0,
	         "; the others take 40MiB/s, which no fence on it stops: MemAvailable would reach half of "
	         "available_min within lead_time"},
	        {"exactly the lead away: kill", 40 * MiB, SEC / 4, 100 * MiB, 32 * MiB, true, false, true,
	         false, false, MG_VERDICT_KILL, 0, "the others take 32MiB/s"},
	        {"just short of the lead: hold", 40 * MiB, SEC / 4, 100 * MiB, 32 * MiB - 4, true, false,
	         true, false, false, MG_VERDICT_HOLD, 0, NULL},
	        {"the node falls fast by its own growth alone: hold", 40 * MiB, SEC / 4, 200 * MiB, 0, true,
	         false, true, false, false, MG_VERDICT_HOLD, 0, NULL},
	        {"not measured yet, only the node's rate at the fence: hold", 40 * MiB, SEC / 4, 100 * MiB,
	         100 * MiB, false, false, true, false, false, MG_VERDICT_HOLD, 0, NULL},
	        {"raised before: held until it pushes", 40 * MiB, SEC / 4, 100 * MiB, 100 * MiB, true, true,
	         true, false, false, MG_VERDICT_HOLD, 0, NULL},
	        {"lead off: hold", 40 * MiB, 0, 100 * MiB, 100 * MiB, true, false, true, false, false,
	         MG_VERDICT_HOLD, 0, NULL},
	        {"pushed: killed for the push", 40 * MiB, SEC / 4, 100 * MiB, 100 * MiB, true, false, true,
	         true, false, MG_VERDICT_KILL, 0, NULL},
	        {"not fenced yet: fence", 40 * MiB, SEC / 4, 100 * MiB, 100 * MiB, true, false, false, false,
	         false, MG_VERDICT_FENCE, 6 * MiB, NULL},
	        {"lead_kill on: the node's rate decides first", 40 * MiB, SEC / 4, 100 * MiB, 100 * MiB, true,
	         false, true, false, true, MG_VERDICT_KILL, 0, NULL},
	        {"lead_kill on, the node not falling, the others fast: kill", 40 * MiB, SEC / 4, 0, 100 * MiB,
	         true, false, true, false, true, MG_VERDICT_KILL, 0, "the others take 100MiB/s"},
	        {"below the hard floor: kill for that", 32 * MiB - 1, SEC / 4, 100 * MiB, 100 * MiB, true,
	         false, true, false, false, MG_VERDICT_KILL, 0, NULL},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_policy p = policy();
		struct mg_node_state node = short_node();
		struct mg_guarded g[] = {task(GiB, GiB, 0), task(3 * GiB, GiB, 0)};
		struct mg_decision d;

		p.throttle = true;
		p.lead_kill = cases[i].lead_kill;
		p.lead_usec = cases[i].lead_usec;
		node.mem.mem_available = cases[i].available;
		node.available_fall_bps = cases[i].node_bps;
		g[1].fenced = cases[i].fenced;
		g[1].pushed = cases[i].pushed;
		g[1].widened = cases[i].widened;
		g[1].others_fall_bps = cases[i].others_bps;
		g[1].others_measured = cases[i].measured;
		decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
		if (d.verdict != cases[i].verdict)
			print_error("case %zu (%s): %s, want %s\n", i, cases[i].what,
			            mg_verdict_name(d.verdict), mg_verdict_name(cases[i].verdict));
		assert_int_equal(d.verdict, cases[i].verdict);
		assert_int_equal(d.victim, 1);
		assert_true(d.allowance == cases[i].allowance);
		if (cases[i].named)
			ft_assert_contains(d.why, cases[i].named);
		else
			ft_assert_not_contains(d.why, "the others take");
	}
}

/* The hard floor (32 MiB here) is judged by MemAvailable plus the free pages
 * on the per-CPU lists, the fence's size and "memory is short" by
 * MemAvailable alone. The victim is task 1; the lead is 2 s unless 0. */
static void decide_hard_floor_lists_table(void **state)
{
	static const struct {
		const char *what;
		uint64_t available, lists, others_bps, lead_usec, since_kill;
		bool fenced, pushed;
		enum mg_verdict verdict;
		uint64_t allowance;
		const char *named; /* in the reason, or NULL */
	} cases[] = {
	        {"below the floor by MemAvailable, above it with the lists: a fence with nothing to spare",
	         30 * MiB, 8 * MiB, 0, 0, 0, false, false, MG_VERDICT_FENCE, 0,
	         "MemAvailable 30MiB (8MiB more free on the per-CPU lists)"},
	        {"below the floor even with the lists: kill", 20 * MiB, 8 * MiB, 0, 0, 0, false, false,
	         MG_VERDICT_KILL, 0, "(8MiB more free on the per-CPU lists)"},
	        {"exactly at the floor with the lists: fence", 24 * MiB, 8 * MiB, 0, 0, 0, false, false,
	         MG_VERDICT_FENCE, 0, NULL},
	        {"a byte short of the floor with the lists: kill", 24 * MiB - 1, 8 * MiB, 0, 0, 0, false,
	         false, MG_VERDICT_KILL, 0, NULL},
	        {"the fence is sized by MemAvailable alone", 40 * MiB, 100 * MiB, 0, 0, 0, false, false,
	         MG_VERDICT_FENCE, 6 * MiB, NULL},
	        {"fenced, below the floor by MemAvailable alone: hold", 30 * MiB, 8 * MiB, 0, 0, 0, true,
	         false, MG_VERDICT_HOLD, 0, NULL},
	        /* uneven's lost cell: 0.2 MiB above the floor, 29 MiB on the lists, 760 KiB/s. */
	        {"fenced, the others slow, the lists far from the floor: hold", 32 * MiB + 205 * KiB,
	         29 * MiB, 760 * KiB, 2 * SEC, 0, true, false, MG_VERDICT_HOLD, 0, NULL},
	        {"the same without the lists: kill", 32 * MiB + 205 * KiB, 0, 760 * KiB, 2 * SEC, 0, true,
	         false, MG_VERDICT_KILL, 0,
	         "; the others take 760KiB/s, which no fence on it stops: MemAvailable would reach"},
	        {"fenced, the others reach the floor even with the lists: kill", 40 * MiB, 8 * MiB, 10 * MiB,
	         2 * SEC, 0, true, false, MG_VERDICT_KILL, 0,
	         "MemAvailable and those lists would reach half of available_min"},
	        /* pushed below available_min, never raised: the raise is 6 MiB and leaves 42 MiB with
	         * the lists, 10 above the floor (34 without, 2 above); 4 MiB/s for 2 s is 8 MiB. */
	        {"pushed: raised once, the lists keeping the others' fall off the floor", 40 * MiB, 8 * MiB,
	         4 * MiB, 2 * SEC, 0, true, true, MG_VERDICT_WIDEN, 6 * MiB, NULL},
	        {"pushed, the same without the lists: kill", 40 * MiB, 0, 4 * MiB, 2 * SEC, 0, true, true,
	         MG_VERDICT_KILL, 0, "it pushed against its fence"},
	        {"pushed, below the floor by MemAvailable: nothing to raise it by, kill", 30 * MiB, 8 * MiB,
	         0, 2 * SEC, 0, true, true, MG_VERDICT_KILL, 0, "it pushed against its fence"},
	        {"1 s after a kill, above the floor with the lists: settle", 30 * MiB, 8 * MiB, 0, 0, SEC,
	         false, false, MG_VERDICT_SETTLING, 0, NULL},
	        {"1 s after a kill, below it without them: kill", 30 * MiB, 0, 0, 0, SEC, false, false,
	         MG_VERDICT_KILL, 0, NULL},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_policy p = policy();
		struct mg_node_state node = short_node();
		struct mg_guarded g[] = {task(GiB, GiB, 0), task(3 * GiB, GiB, 0)};
		struct mg_decision d;

		p.throttle = true;
		p.lead_usec = cases[i].lead_usec;
		node.mem.mem_available = cases[i].available;
		node.lists_free = cases[i].lists;
		if (cases[i].since_kill)
			node.last_kill_usec = node.now_usec - cases[i].since_kill;
		g[1].fenced = cases[i].fenced;
		g[1].pushed = cases[i].pushed;
		g[1].others_fall_bps = cases[i].others_bps;
		g[1].others_measured = true;
		decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
		if (d.verdict != cases[i].verdict || d.allowance != cases[i].allowance)
			print_error("case %zu (%s): %s allowance %" PRIu64 ", want %s (why: %s)\n", i,
			            cases[i].what, mg_verdict_name(d.verdict), d.allowance,
			            mg_verdict_name(cases[i].verdict), d.why);
		assert_int_equal(d.verdict, cases[i].verdict);
		assert_true(d.allowance == cases[i].allowance);
		assert_int_equal(d.victim, cases[i].verdict == MG_VERDICT_SETTLING ? -1 : 1);
		if (cases[i].named)
			ft_assert_contains(d.why, cases[i].named);
		if (!cases[i].lists)
			ft_assert_not_contains(d.why, "per-CPU lists");
	}
}

/* With lead_kill, the fall that kills rather than fences is MemAvailable's,
 * and it runs to the hard floor from what is left with the lists: 4 MiB/s
 * for 2 s is 8 MiB, and MemAvailable 40 MiB is 8 MiB above the floor, 16
 * with 8 MiB on the lists. */
static void decide_lead_kill_counts_lists(void **state)
{
	static const struct {
		uint64_t lists;
		enum mg_verdict verdict;
		uint64_t allowance;
	} cases[] = {
	        {8 * MiB, MG_VERDICT_FENCE, 6 * MiB},
	        {0, MG_VERDICT_KILL, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_policy p = policy();
		struct mg_node_state node = short_node();
		struct mg_guarded g[] = {task(GiB, GiB, 0), task(3 * GiB, GiB, 0)};
		struct mg_decision d;

		p.throttle = p.lead_kill = true;
		p.lead_usec = 2 * SEC;
		node.mem.mem_available = 40 * MiB;
		node.lists_free = cases[i].lists;
		node.available_fall_bps = 4 * MiB;
		decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
		assert_int_equal(d.verdict, cases[i].verdict);
		assert_true(d.allowance == cases[i].allowance);
		assert_int_equal(d.victim, 1);
	}
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
		            mg_verdict_name(d.verdict), d.victim, mg_verdict_name(c->verdict), expect_victim,
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
	bool victim_exiting;
};

static void decide_settling_table(void **state)
{
	static const struct settle_case cases[] = {
	        {"never killed (last_kill 0), early after boot", 3 * SEC, 0, 40 * MiB, MG_VERDICT_KILL,
	         false},
	        {"never killed, now 0 too", 0, 0, 40 * MiB, MG_VERDICT_KILL, false},
	        {"just killed", 1000 * SEC, 1000 * SEC, 40 * MiB, MG_VERDICT_SETTLING, false},
	        {"1 s after a kill", 1001 * SEC, 1000 * SEC, 40 * MiB, MG_VERDICT_SETTLING, false},
	        {"1 us before settle_usec ends", 1010 * SEC - 1, 1000 * SEC, 40 * MiB, MG_VERDICT_SETTLING,
	         false},
	        {"exactly settle_usec later", 1010 * SEC, 1000 * SEC, 40 * MiB, MG_VERDICT_KILL, false},
	        {"long after", 5000 * SEC, 1000 * SEC, 40 * MiB, MG_VERDICT_KILL, false},
	        {"within settle, at exactly available_min / 2", 1001 * SEC, 1000 * SEC, 32 * MiB,
	         MG_VERDICT_SETTLING, false},
	        {"within settle, below available_min / 2", 1001 * SEC, 1000 * SEC, 32 * MiB - 1,
	         MG_VERDICT_KILL, false},
	        {"within settle, MemAvailable 0", 1001 * SEC, 1000 * SEC, 0, MG_VERDICT_KILL, false},
	        {"below available_min / 2, 60 ms after a kill, the victim exiting", 1000 * SEC + 60000,
	         1000 * SEC, 13 * MiB, MG_VERDICT_SETTLING, true},
	        {"MemAvailable 0, the victim exiting, 1 us before its wait ends",
	         1000 * SEC + MG_VICTIM_EXIT_WAIT_USEC - 1, 1000 * SEC, 0, MG_VERDICT_SETTLING, true},
	        {"MemAvailable 0, the victim still exiting when its wait ends",
	         1000 * SEC + MG_VICTIM_EXIT_WAIT_USEC, 1000 * SEC, 0, MG_VERDICT_KILL, true},
	        {"the victim exiting, above the floor: settle as always", 1001 * SEC, 1000 * SEC, 40 * MiB,
	         MG_VERDICT_SETTLING, true},
	        {"the victim exiting past settle_usec", 1010 * SEC, 1000 * SEC, 40 * MiB, MG_VERDICT_KILL,
	         true},
	        {"exiting, but never killed", 3 * SEC, 0, 13 * MiB, MG_VERDICT_KILL, true},
	        {"within settle but calm", 1001 * SEC, 1000 * SEC, 900 * MiB, MG_VERDICT_CALM, false},
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
		node.victim_exiting = c->victim_exiting;
		decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
		if (d.verdict != c->verdict)
			print_error("case %zu (%s): %s, want %s (why: %s)\n", i, c->what,
			            mg_verdict_name(d.verdict), mg_verdict_name(c->verdict), d.why);
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

/* --- mg_policy_decide: the kill failures --- */

/* A cgroup whose kill failed, or that was killed and is still there, is
 * passed over, so the next worst goes; with nothing else left there is no
 * victim. */
static void decide_passed_over(void **state)
{
	static const struct victim_case cases[] = {
	        {"the worst failed, or was killed and still holds its memory: the next worst",
	         3,
	         {{.current = 3 * GiB, .share = GiB, .populated = true, .passed_over = true},
	          T3(2 * GiB, GiB, 0),
	          T3(GiB, GiB, 0)},
	         MG_VERDICT_KILL,
	         1},
	        {"every one failed",
	         2,
	         {{.current = 3 * GiB, .share = GiB, .populated = true, .passed_over = true},
	          {.current = GiB, .share = GiB, .populated = true, .passed_over = true}},
	         MG_VERDICT_NO_VICTIM,
	         -1},
	};

	check_victim_cases(cases, MG_ARRAY_SIZE(cases));
}

/* --- mg_policy_decide: fence or kill --- */

struct fence_case {
	const char *what;
	bool throttle, dry_run;
	uint64_t available;
	bool trigger;
	bool fenced, pushed; /* the victim's */
	enum mg_verdict verdict;
	uint64_t allowance;
	uint64_t fall_bps, lead_usec; /* MemAvailable's rate of fall, and the lead (0: off) */
};

/* A policy with the fence on: available_min 64 MiB, so the hard floor is
 * 32 MiB; the victim is the second of three. */
static void decide_fence_or_kill_table(void **state)
{
	static const struct fence_case cases[] = {
	        {"throttle off: kill", false, false, 40 * MiB, false, false, false, MG_VERDICT_KILL, 0, 0, 0},
	        {"throttle on: fence with 3/4 of what is left above the hard floor", true, false, 40 * MiB,
	         false, false, false, MG_VERDICT_FENCE, 6 * MiB, 0, 0},
	        {"in the pressure band after a trigger: a wide fence", true, false, 200 * MiB, true, false,
	         false, MG_VERDICT_FENCE, 126 * MiB, 0, 0},
	        {"exactly at the hard floor: a fence with nothing to spare", true, false, 32 * MiB, false,
	         false, false, MG_VERDICT_FENCE, 0, 0, 0},
	        {"just below the hard floor: kill", true, false, 32 * MiB - 1, false, false, false,
	         MG_VERDICT_KILL, 0, 0, 0},
	        {"MemAvailable 0: kill", true, false, 0, false, false, false, MG_VERDICT_KILL, 0, 0, 0},
	        {"dry run: kill (logged only), never a fence", true, true, 40 * MiB, false, false, false,
	         MG_VERDICT_KILL, 0, 0, 0},
	        {"fenced, not pushing: hold", true, false, 40 * MiB, false, true, false, MG_VERDICT_HOLD, 0,
	         0, 0},
	        {"fenced, raised before, and pushed against it: kill", true, false, 40 * MiB, false, true,
	         true, MG_VERDICT_KILL, 0, 0, 0},
	        {"pushed without a fence: kill", true, false, 40 * MiB, false, false, true, MG_VERDICT_KILL,
	         0, 0, 0},
	        {"fenced, but below the hard floor: kill", true, false, 32 * MiB - 1, false, true, false,
	         MG_VERDICT_KILL, 0, 0, 0},
	        {"fenced, throttle turned off by a reload: kill", false, false, 40 * MiB, false, true, false,
	         MG_VERDICT_KILL, 0, 0, 0},
	        {"fenced, dry run: kill", true, true, 40 * MiB, false, true, false, MG_VERDICT_KILL, 0, 0, 0},
	        /* 100 MiB/s for 250 ms is 25 MiB: the hard floor is that close at 57 MiB. */
	        {"falling to the hard floor within the lead: kill, no fence", true, false, 56 * MiB, false,
	         false, false, MG_VERDICT_KILL, 0, 100 * MiB, SEC / 4},
	        {"exactly the lead away: kill", true, false, 57 * MiB, false, false, false, MG_VERDICT_KILL,
	         0, 100 * MiB, SEC / 4},
	        {"just beyond the lead: fence", true, false, 57 * MiB + 1024, false, false, false,
	         MG_VERDICT_FENCE, (25 * MiB + 1024) / 4 * 3, 100 * MiB, SEC / 4},
	        {"falling fast, lead off: fence", true, false, 40 * MiB, false, false, false,
	         MG_VERDICT_FENCE, 6 * MiB, 100 * MiB, 0},
	        {"not falling: fence", true, false, 40 * MiB, false, false, false, MG_VERDICT_FENCE, 6 * MiB,
	         0, SEC / 4},
	        {"fenced, falling to the hard floor within the lead: kill", true, false, 40 * MiB, false,
	         true, false, MG_VERDICT_KILL, 0, 100 * MiB, SEC / 4},
	        {"fenced, falling slowly: hold", true, false, 40 * MiB, false, true, false, MG_VERDICT_HOLD,
	         0, 8 * MiB, SEC / 4},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct fence_case *c = &cases[i];
		struct mg_policy p = policy();
		struct mg_node_state node = short_node();
		struct mg_guarded g[] = {task(GiB, GiB, 0), task(3 * GiB, GiB, 0), task(GiB, 2 * GiB, 0)};
		struct mg_decision d, plain;

		p.throttle = c->throttle;
		p.dry_run = c->dry_run;
		p.lead_usec = c->lead_usec;
		p.lead_kill = true;
		node.available_fall_bps = c->fall_bps;
		node.mem.mem_available = c->available;
		node.trigger_fired = c->trigger;
		g[1].fenced = c->fenced;
		g[1].pushed = c->pushed;
		/* A pushed fence here was raised before: the raise below available_min of one that
		 * never was is decide_widen_table's and decide_fence_lifecycle's. */
		g[1].widened = c->fenced && c->pushed;
		decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
		if (d.verdict != c->verdict || d.allowance != c->allowance)
			print_error("case %zu (%s): %s allowance %" PRIu64 ", want %s allowance %" PRIu64
			            "\n",
			            i, c->what, mg_verdict_name(d.verdict), d.allowance,
			            mg_verdict_name(c->verdict), c->allowance);
		assert_int_equal(d.verdict, c->verdict);
		assert_true(d.allowance == c->allowance);
		assert_int_equal(d.victim, 1);
		assert_int_equal(strstr(d.why, "it pushed against its fence") != NULL,
		                 c->verdict == MG_VERDICT_KILL && c->fenced && c->pushed);
		assert_int_equal(strstr(d.why, "before a fence could hold") != NULL,
		                 c->verdict == MG_VERDICT_KILL && c->fall_bps && c->lead_usec &&
		                         c->throttle && !c->dry_run && !c->pushed &&
		                         c->available >= 32 * MiB);

		/* The fence stands in for the kill: the same victim and reason as
		 * with throttle off, so a fence that cannot be set is that kill. */
		p.throttle = false;
		g[1].pushed = false;
		decide(&p, &node, g, MG_ARRAY_SIZE(g), &plain);
		assert_int_equal(plain.verdict, MG_VERDICT_KILL);
		assert_int_equal(plain.victim, d.victim);
		assert_memory_equal(plain.why, d.why, strlen(plain.why)); /* d.why may say it pushed */
	}
}

/* The fence does not change whom the policy picks: a fenced cgroup that is
 * still the worst is held, not passed over for the next. */
static void decide_fenced_worst_is_held(void **state)
{
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_guarded g[] = {task(2 * GiB, GiB, 0), task(3 * GiB, GiB, 0)};
	struct mg_decision d;

	p.throttle = true;
	node.mem.mem_available = 40 * MiB;
	g[1].fenced = true;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_HOLD);
	assert_int_equal(d.victim, 1);
	ft_assert_contains(d.why, "3GiB against a 1GiB share");
}

/* Settling comes before the fence: no fence within settle_usec of a kill. */
static void decide_settling_before_fence(void **state)
{
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_guarded g = task(3 * GiB, GiB, 0);
	struct mg_decision d;

	p.throttle = true;
	node.mem.mem_available = 40 * MiB;
	node.last_kill_usec = node.now_usec - SEC;
	decide(&p, &node, &g, 1, &d);
	assert_int_equal(d.verdict, MG_VERDICT_SETTLING);
	assert_int_equal(d.victim, -1);
	assert_true(d.allowance == 0);
}

/* A fence pushed against while MemAvailable alone does not say memory is
 * short is raised, memory short or not (not in a dry run, nor one passed
 * over or whose raising failed); below available_min, or falling to it
 * within the lead (at the rate the others take memory until its first
 * raise), the task that pushes is killed, unless it is the victim, its
 * fence was never raised and MemAvailable is above the hard floor: then it
 * is raised once, if the others' part would not bring MemAvailable from what
 * the raise leaves to the hard floor within the lead. available_min 64 MiB,
 * hard floor 32 MiB, available_pressure 256 MiB; task 1 is the worst. */
static void decide_widen_table(void **state)
{
	static const struct {
		const char *what;
		uint64_t available;
		bool pressure;           /* full avg10 38% rather than 0 */
		uint64_t fall_bps, lead; /* MemAvailable's fall, and the lead */
		uint64_t since_kill;     /* 0: never killed */
		unsigned fenced, pushed; /* bit k: task k */
		enum mg_verdict verdict;
		long victim;
		uint64_t allowance;
		unsigned passed_over, widen_failed; /* bit k: task k */
		bool dry_run;
		uint64_t own0, own1; /* task k's own part of fall_bps: its others_fall_bps is the rest */
		unsigned widened;    /* bit k: task k */
	} cases[] = {
	        {"calm in the pressure band, pushed: widen", 200 * MiB, false, 0, 0, 0, 2, 2,
	         MG_VERDICT_WIDEN, 1, 126 * MiB, 0, 0, false, 0, 0, 0},
	        {"under pressure in the band, pushed: widen before anyone is judged", 200 * MiB, true, 0, 0,
	         0, 2, 2, MG_VERDICT_WIDEN, 1, 126 * MiB, 0, 0, false, 0, 0, 0},
	        {"exactly at available_min: widen", 64 * MiB, true, 0, 0, 0, 2, 2, MG_VERDICT_WIDEN, 1,
	         24 * MiB, 0, 0, false, 0, 0, 0},
	        /* Below available_min a fence never raised is raised once, down to the hard floor. */
	        {"just below available_min, never raised: raise it once", 64 * MiB - 1, true, 0, 0, 0, 2, 2,
	         MG_VERDICT_WIDEN, 1, (32 * MiB - 1) * 3 / 4, 0, 0, false, 0, 0, 0},
	        {"just below available_min, raised before: kill", 64 * MiB - 1, true, 0, 0, 0, 2, 2,
	         MG_VERDICT_KILL, 1, 0, 0, 0, false, 0, 0, 2},
	        {"at the hard floor, never raised: kill", 32 * MiB, true, 0, 0, 0, 2, 2, MG_VERDICT_KILL, 1,
	         0, 0, 0, false, 0, 0, 0},
	        {"a byte above the hard floor, nothing to raise it by: kill", 32 * MiB + 1, true, 0, 0, 0, 2,
	         2, MG_VERDICT_KILL, 1, 0, 0, 0, false, 0, 0, 0},
	        {"just below the hard floor, never raised: kill", 32 * MiB - 1, true, 0, 0, 0, 2, 2,
	         MG_VERDICT_KILL, 1, 0, 0, 0, false, 0, 0, 0},
	        /* 6 MiB above available_min, 30 MiB/s for 250 ms is 7.5 MiB: too close to raise it as
	         * memory not short; the raise (28.5 MiB) leaves 9.5 MiB above the hard floor. */
	        {"falling to available_min within the lead by the others, never raised: raise it once",
	         70 * MiB, true, 100 * MiB, SEC / 4, 0, 2, 2, MG_VERDICT_WIDEN, 1, 57 * MiB / 2, 0, 0, false,
	         0, 70 * MiB, 0},
	        {"the same, raised before: kill", 70 * MiB, true, 100 * MiB, SEC / 4, 0, 2, 2,
	         MG_VERDICT_KILL, 1, 0, 0, 0, false, 0, 70 * MiB, 2},
	        /* 16 MiB above the hard floor; the raise (12 MiB) leaves 4: 20 MiB/s for 250 ms is 5 MiB,
	         * 10 MiB/s 2.5 MiB. */
	        {"below available_min, the others' part reaches the hard floor from what the raise leaves: "
	         "kill",
	         48 * MiB, true, 100 * MiB, SEC / 4, 0, 2, 2, MG_VERDICT_KILL, 1, 0, 0, 0, false, 0, 80 * MiB,
	         0},
	        {"below available_min, the others' part does not: raise it once", 48 * MiB, true, 100 * MiB,
	         SEC / 4, 0, 2, 2, MG_VERDICT_WIDEN, 1, 12 * MiB, 0, 0, false, 0, 90 * MiB, 0},
	        {"below available_min, lead off: raise it once", 48 * MiB, true, GiB, 0, 0, 2, 2,
	         MG_VERDICT_WIDEN, 1, 12 * MiB, 0, 0, false, 0, 0, 0},
	        /* Only the victim is raised below available_min: one at a time, and no kill waits. */
	        {"below available_min, two never raised push: the worst is raised", 48 * MiB, true, 0, 0, 0,
	         3, 3, MG_VERDICT_WIDEN, 1, 12 * MiB, 0, 0, false, 0, 0, 0},
	        {"below available_min, the worst raised before and another never raised push: kill the worst",
	         48 * MiB, true, 0, 0, 0, 3, 3, MG_VERDICT_KILL, 1, 0, 0, 0, false, 0, 0, 2},
	        {"below available_min, only another never raised pushes: hold the worst", 48 * MiB, true, 0,
	         0, 0, 3, 1, MG_VERDICT_HOLD, 1, 0, 0, 0, false, 0, 0, 0},
	        {"below available_min, the worst's raising failed: kill", 48 * MiB, true, 0, 0, 0, 2, 2,
	         MG_VERDICT_KILL, 1, 0, 0, 2, false, 0, 0, 0},
	        {"below available_min within the settle time: wait", 48 * MiB, true, 0, 0, SEC, 2, 2,
	         MG_VERDICT_SETTLING, -1, 0, 0, 0, false, 0, 0, 0},
	        {"below available_min, the raise would be a dry run's: kill", 48 * MiB, true, 0, 0, 0, 2, 2,
	         MG_VERDICT_KILL, 1, 0, 0, 0, true, 0, 0, 0},
	        /* 100 MiB/s for 250 ms is 25 MiB. */
	        {"falling to available_min within the lead: kill", 80 * MiB, true, 100 * MiB, SEC / 4, 0, 2,
	         2, MG_VERDICT_KILL, 1, 0, 0, 0, false, 0, 0, 0},
	        {"falling, available_min beyond the lead: widen", 100 * MiB, true, 100 * MiB, SEC / 4, 0, 2,
	         2, MG_VERDICT_WIDEN, 1, 51 * MiB, 0, 0, false, 0, 0, 0},
	        {"falling fast, lead off: widen", 100 * MiB, true, GiB, 0, 0, 2, 2, MG_VERDICT_WIDEN, 1,
	         51 * MiB, 0, 0, false, 0, 0, 0},
	        /* Its own growth stopped at its fence: 40 MiB/s for 250 ms is 10 MiB. */
	        {"falling within the lead, mostly by its own growth: widen", 80 * MiB, true, 100 * MiB,
	         SEC / 4, 0, 2, 2, MG_VERDICT_WIDEN, 1, 36 * MiB, 0, 0, false, 0, 60 * MiB, 0},
	        {"falling within the lead, all by its own growth: widen", 80 * MiB, true, 100 * MiB, SEC / 4,
	         0, 2, 2, MG_VERDICT_WIDEN, 1, 36 * MiB, 0, 0, false, 0, 200 * MiB, 0},
	        /* 70 MiB/s for 250 ms is 17.5 MiB. */
	        {"falling within the lead, the others' part alone too: kill", 80 * MiB, true, 100 * MiB,
	         SEC / 4, 0, 2, 2, MG_VERDICT_KILL, 1, 0, 0, 0, false, 0, 30 * MiB, 0},
	        {"two push, the fall is task 1's: task 0 is not raised for it, task 1 is", 80 * MiB, true,
	         100 * MiB, SEC / 4, 0, 3, 3, MG_VERDICT_WIDEN, 1, 36 * MiB, 0, 0, false, 0, 100 * MiB, 0},
	        /* 64 MiB/s for 250 ms is 16 MiB, all that is left above available_min. */
	        {"the others' part reaches available_min just within the lead: kill", 80 * MiB, true,
	         100 * MiB, SEC / 4, 0, 2, 2, MG_VERDICT_KILL, 1, 0, 0, 0, false, 0, 36 * MiB, 0},
	        /* After a raise, its growth is a trend: the whole fall counts. */
	        {"raised before, falling within the lead mostly by its own growth: kill", 80 * MiB, true,
	         100 * MiB, SEC / 4, 0, 2, 2, MG_VERDICT_KILL, 1, 0, 0, 0, false, 0, 60 * MiB, 2},
	        {"raised before, available_min beyond the lead: widen again", 100 * MiB, true, 100 * MiB,
	         SEC / 4, 0, 2, 2, MG_VERDICT_WIDEN, 1, 51 * MiB, 0, 0, false, 0, 60 * MiB, 2},
	        /* Memory not short (above available_pressure), within the settle time: 2 GiB/s for
	         * 250 ms would reach available_min. */
	        {"back within the settle time, falling fast by its own growth: widen", 300 * MiB, false,
	         2 * GiB, SEC / 4, SEC, 2, 2, MG_VERDICT_WIDEN, 1, 201 * MiB, 0, 0, false, 0, 2 * GiB, 0},
	        {"back within the settle time, raised before, falling fast: nothing", 300 * MiB, false,
	         2 * GiB, SEC / 4, SEC, 2, 2, MG_VERDICT_CALM, -1, 0, 0, 0, false, 0, 2 * GiB, 2},
	        {"fenced, not pushed, under pressure: hold", 200 * MiB, true, 0, 0, 0, 2, 0, MG_VERDICT_HOLD,
	         1, 0, 0, 0, false, 0, 0, 0},
	        {"fenced, not pushed, calm: nothing", 200 * MiB, false, 0, 0, 0, 2, 0, MG_VERDICT_CALM, -1, 0,
	         0, 0, false, 0, 0, 0},
	        {"the worst is held, another pushes: widen that one", 200 * MiB, true, 0, 0, 0, 3, 1,
	         MG_VERDICT_WIDEN, 0, 126 * MiB, 0, 0, false, 0, 0, 0},
	        {"memory back, settle over: lift every fence instead", 300 * MiB, false, 0, 0, 0, 2, 2,
	         MG_VERDICT_UNFENCE, -1, 0, 0, 0, false, 0, 0, 0},
	        {"memory back within the settle time: widen", 300 * MiB, false, 0, 0, SEC, 2, 2,
	         MG_VERDICT_WIDEN, 1, 201 * MiB, 0, 0, false, 0, 0, 0},
	        {"within the settle time, under pressure: widen rather than wait", 200 * MiB, true, 0, 0, SEC,
	         2, 2, MG_VERDICT_WIDEN, 1, 126 * MiB, 0, 0, false, 0, 0, 0},
	        {"pushed without a fence: nothing to widen", 200 * MiB, false, 0, 0, 0, 0, 2, MG_VERDICT_CALM,
	         -1, 0, 0, 0, false, 0, 0, 0},
	        /* No fence is raised in a dry run, nor one passed over or whose raising failed. */
	        {"dry run: nothing", 200 * MiB, false, 0, 0, 0, 2, 2, MG_VERDICT_CALM, -1, 0, 0, 0, true, 0,
	         0, 0},
	        {"its kill failed: nothing", 200 * MiB, false, 0, 0, 0, 2, 2, MG_VERDICT_CALM, -1, 0, 2, 0,
	         false, 0, 0, 0},
	        {"its raising failed: nothing", 200 * MiB, false, 0, 0, 0, 2, 2, MG_VERDICT_CALM, -1, 0, 0, 2,
	         false, 0, 0, 0},
	        {"its raising failed, another pushes: that one", 200 * MiB, false, 0, 0, 0, 3, 3,
	         MG_VERDICT_WIDEN, 0, 126 * MiB, 0, 2, false, 0, 0, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_policy p = policy();
		struct mg_node_state node = short_node();
		struct mg_guarded g[] = {task(GiB, GiB, 0), task(3 * GiB, GiB, 0)};
		struct mg_decision d;

		p.throttle = true;
		p.dry_run = cases[i].dry_run;
		p.lead_usec = cases[i].lead;
		node.mem.mem_available = cases[i].available;
		node.psi.full.avg10 = cases[i].pressure ? 3800 : 0;
		node.available_fall_bps = cases[i].fall_bps;
		node.last_kill_usec = cases[i].since_kill ? node.now_usec - cases[i].since_kill : 0;
		for (unsigned k = 0; k < 2; k++) {
			uint64_t own = k ? cases[i].own1 : cases[i].own0, fall = cases[i].fall_bps;

			g[k].others_fall_bps = fall > own ? fall - own : 0;
			g[k].widened = cases[i].widened >> k & 1;
			g[k].fenced = cases[i].fenced >> k & 1;
			g[k].pushed = cases[i].pushed >> k & 1;
			g[k].passed_over = cases[i].passed_over >> k & 1;
			g[k].widen_failed = cases[i].widen_failed >> k & 1;
		}
		decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
		if (d.verdict != cases[i].verdict || d.victim != cases[i].victim ||
		    d.allowance != cases[i].allowance)
			print_error("case %zu (%s): %s of %ld by %" PRIu64 ", want %s of %ld by %" PRIu64
			            "\n",
			            i, cases[i].what, mg_verdict_name(d.verdict), d.victim, d.allowance,
			            mg_verdict_name(cases[i].verdict), cases[i].victim, cases[i].allowance);
		assert_int_equal(d.verdict, cases[i].verdict);
		assert_int_equal(d.victim, cases[i].victim);
		assert_true(d.allowance == cases[i].allowance);
		assert_int_equal(strstr(d.why, "pushed against its fence while MemAvailable") != NULL,
		                 d.verdict == MG_VERDICT_WIDEN);
		/* Its tracker has no two spans of its own in these rows. */
		if (d.verdict == MG_VERDICT_WIDEN)
			ft_assert_contains(d.why, cases[i].widened >> d.victim & 1
			                                  ? "and MemAvailable falls"
			                                  : "and the others take at most");
		if (d.verdict == MG_VERDICT_KILL)
			ft_assert_contains(d.why, "it pushed against its fence");
	}
}

/* The life of a fence, as memguardd carries the verdicts out. */
static void decide_fence_lifecycle(void **state)
{
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_guarded g[] = {task(GiB, GiB, 0), task(3 * GiB, GiB, 0)};
	struct mg_decision d;

	p.throttle = true;
	node.mem.mem_available = 100 * MiB;
	node.trigger_fired = true;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_FENCE);
	assert_int_equal(d.victim, 1);
	assert_true(d.allowance == 51 * MiB);

	/* Fenced; the trigger fires again, but from another cgroup: hold. */
	g[1].fenced = true;
	node.now_usec += SEC;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_HOLD);
	assert_int_equal(d.victim, 1);

	/* It pushes against the fence with MemAvailable above available_min: the fence is raised. */
	g[1].pushed = true;
	node.now_usec += SEC;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_WIDEN);
	assert_int_equal(d.victim, 1);
	assert_true(d.allowance == 51 * MiB);

	/* It pushes against the raised fence, MemAvailable now below available_min: kill. */
	g[1].widened = true;
	node.mem.mem_available = 50 * MiB;
	node.now_usec += SEC;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_KILL);
	assert_int_equal(d.victim, 1);

	/* The kill failed: the next worst, which is fenced in turn. */
	g[1].passed_over = true;
	node.now_usec += SEC;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_FENCE);
	assert_int_equal(d.victim, 0);
	assert_true(d.allowance == 27 * MiB / 2);

	/* Task 0 pushes against that fence, never raised, MemAvailable still below available_min and
	 * nothing else falling: it is raised once. */
	g[0].fenced = true;
	g[0].pushed = true;
	node.now_usec += SEC;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_WIDEN);
	assert_int_equal(d.victim, 0);
	assert_true(d.allowance == 27 * MiB / 2);
	ft_assert_contains(d.why,
	                   "is below available_min (64MiB) and the others take at most 0B/s: raised by");
	ft_assert_contains(d.why, ", once; ");

	/* It pushes against the raised fence: kill. */
	g[0].widened = true;
	node.now_usec += SEC;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_KILL);
	assert_int_equal(d.victim, 0);
	ft_assert_contains(d.why, "it pushed against its fence");

	/* Memory is back, but tasks 0 and 1 are still fenced: lift the fences. */
	node.mem.mem_available = 600 * MiB;
	node.trigger_fired = false;
	node.psi.full.avg10 = 0;
	decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
	assert_int_equal(d.verdict, MG_VERDICT_UNFENCE);
	assert_int_equal(d.victim, -1);
	ft_assert_contains(d.why, "MemAvailable 600MiB");
	ft_assert_contains(d.why, "2 cgroups fenced");
}

/* --- mg_policy_decide: lifting the fences --- */

struct unfence_case {
	const char *what;
	uint64_t available, now, last_kill;
	bool trigger;
	size_t fenced; /* how many of the three are fenced */
	enum mg_verdict verdict;
};

static void decide_unfence_table(void **state)
{
	static const struct unfence_case cases[] = {
	        {"back above available_pressure, settled", 300 * MiB, 1000 * SEC, 900 * SEC, false, 1,
	         MG_VERDICT_UNFENCE},
	        {"exactly available_pressure", 256 * MiB, 1000 * SEC, 900 * SEC, false, 1,
	         MG_VERDICT_UNFENCE},
	        {"just below available_pressure: not short, but not back either", 256 * MiB - 1, 1000 * SEC,
	         900 * SEC, false, 1, MG_VERDICT_CALM},
	        {"nothing fenced", 300 * MiB, 1000 * SEC, 900 * SEC, false, 0, MG_VERDICT_CALM},
	        {"all three fenced", 300 * MiB, 1000 * SEC, 900 * SEC, false, 3, MG_VERDICT_UNFENCE},
	        {"never killed", 300 * MiB, 1000 * SEC, 0, false, 1, MG_VERDICT_UNFENCE},
	        {"1 s after a kill", 300 * MiB, 1001 * SEC, 1000 * SEC, false, 1, MG_VERDICT_CALM},
	        {"1 us before settle_usec ends", 300 * MiB, 1010 * SEC - 1, 1000 * SEC, false, 1,
	         MG_VERDICT_CALM},
	        {"exactly settle_usec after the kill", 300 * MiB, 1010 * SEC, 1000 * SEC, false, 1,
	         MG_VERDICT_UNFENCE},
	        {"a trigger above the pressure band is no shortage", 300 * MiB, 1000 * SEC, 900 * SEC, true,
	         1, MG_VERDICT_UNFENCE},
	        {"short: the fence holds", 40 * MiB, 1000 * SEC, 900 * SEC, false, 1, MG_VERDICT_HOLD},
	        {"a trigger in the pressure band is short: the fence holds", 256 * MiB - 1, 1000 * SEC,
	         900 * SEC, true, 1, MG_VERDICT_HOLD},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct unfence_case *c = &cases[i];
		struct mg_policy p = policy();
		struct mg_node_state node = short_node();
		/* The worst first, so that a fenced victim is held when memory is short. */
		struct mg_guarded g[] = {task(3 * GiB, GiB, 0), task(GiB, GiB, 0), task(GiB, 2 * GiB, 0)};
		struct mg_decision d;

		p.throttle = true;
		node.psi.full.avg10 = 0; /* only the trigger is pressure here */
		node.mem.mem_available = c->available;
		node.now_usec = c->now;
		node.last_kill_usec = c->last_kill;
		node.trigger_fired = c->trigger;
		for (size_t k = 0; k < c->fenced; k++)
			g[k].fenced = true;
		decide(&p, &node, g, MG_ARRAY_SIZE(g), &d);
		if (d.verdict != c->verdict)
			print_error("case %zu (%s): %s, want %s (why: %s)\n", i, c->what,
			            mg_verdict_name(d.verdict), mg_verdict_name(c->verdict), d.why);
		assert_int_equal(d.verdict, c->verdict);
		assert_true(d.allowance == 0);
		if (c->verdict == MG_VERDICT_UNFENCE || c->verdict == MG_VERDICT_CALM)
			assert_int_equal(d.victim, -1);
		if (c->verdict == MG_VERDICT_CALM)
			assert_string_equal(d.why, "");
	}
}

/* Memory short by available_min alone (a policy with available_min above
 * available_pressure): shortness is decided first, so no fence is lifted. */
static void decide_unfence_only_when_not_short(void **state)
{
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_guarded g = task(3 * GiB, GiB, 0);
	struct mg_decision d;

	p.available_min = 512 * MiB;
	node.mem.mem_available = 300 * MiB;
	g.fenced = true;
	decide(&p, &node, &g, 1, &d);
	assert_int_equal(d.verdict, MG_VERDICT_KILL);
}

/* --- mg_fall_rate_update --- */

struct fall_step {
	uint64_t available, now;
	uint64_t expect_bps; /* what the policy sees after this reading */
};

struct fall_case {
	const char *what;
	size_t n;
	struct fall_step steps[6];
};

static void fall_rate_table(void **state)
{
	static const struct fall_case cases[] = {
	        {"the first reading only starts a span", 1, {{GiB, 10 * SEC, 0}}},
	        {"one falling span is not a trend: the span before was flat",
	         2,
	         {{GiB, 10 * SEC, 0}, {GiB - 100 * MiB, 11 * SEC, 0}}},
	        {"two falling spans: the slower",
	         3,
	         {{GiB, 10 * SEC, 0}, {GiB - 100 * MiB, 11 * SEC, 0}, {GiB - 150 * MiB, 12 * SEC, 50 * MiB}}},
	        {"the slower when the later is faster",
	         4,
	         {{GiB, 10 * SEC, 0},
	          {GiB - 100 * MiB, 11 * SEC, 0},
	          {GiB - 150 * MiB, 12 * SEC, 50 * MiB},
	          {GiB - 350 * MiB, 13 * SEC, 50 * MiB}}},
	        {"a burst between flat spans never shows",
	         4,
	         {{GiB, 10 * SEC, 0},
	          {GiB, 11 * SEC, 0},
	          {GiB - 500 * MiB, 12 * SEC, 0},
	          {GiB - 500 * MiB, 13 * SEC, 0}}},
	        {"a rise is no fall",
	         3,
	         {{GiB, 10 * SEC, 0}, {GiB - 100 * MiB, 11 * SEC, 0}, {GiB, 12 * SEC, 0}}},
	        {"rate per second over the span's real length",
	         3,
	         {{GiB, 10 * SEC, 0},
	          {GiB - 10 * MiB, 10 * SEC + SEC / 10, 0},
	          {GiB - 20 * MiB, 10 * SEC + SEC / 5, 100 * MiB}}},
	        {"a span shorter than MG_FALL_SPAN_MIN_USEC is ignored, however steep",
	         4,
	         {{GiB, 10 * SEC, 0},
	          {GiB - 100 * MiB, 11 * SEC, 0},
	          {GiB - 200 * MiB, 12 * SEC, 100 * MiB},
	          {100 * MiB, 12 * SEC + MG_FALL_SPAN_MIN_USEC - 1, 100 * MiB}}},
	        {"the ignored reading does not end the span: the next one measures from before it",
	         4,
	         {{GiB, 10 * SEC, 0},
	          {GiB - 100 * MiB, 11 * SEC, 0},
	          {GiB - 110 * MiB, 11 * SEC + 10000, 0},
	          {GiB - 200 * MiB, 12 * SEC, 100 * MiB}}},
	        {"a span of exactly MG_FALL_SPAN_MIN_USEC counts",
	         3,
	         {{GiB, 10 * SEC, 0},
	          {GiB - 5 * MiB, 10 * SEC + MG_FALL_SPAN_MIN_USEC, 0},
	          {GiB - 10 * MiB, 10 * SEC + 2 * MG_FALL_SPAN_MIN_USEC, 100 * MiB}}},
	        {"a first reading at time 0 starts nothing: the next is a first too",
	         3,
	         {{GiB, 0, 0}, {GiB - 100 * MiB, 10, 0}, {GiB - 200 * MiB, SEC + 10, 0}}},
	        {"terabytes a second do not overflow",
	         3,
	         {{8192 * GiB, 10 * SEC, 0}, {4096 * GiB, 11 * SEC, 0}, {0, 12 * SEC, 4096 * GiB}}},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct fall_case *c = &cases[i];
		struct mg_fall_rate s = {0};

		for (size_t k = 0; k < c->n; k++) {
			const struct fall_step *st = &c->steps[k];
			uint64_t got = mg_fall_rate_update(&s, st->available, st->now);
			if (got != st->expect_bps || s.bps != got)
				print_error("case %zu (%s), reading %zu: %" PRIu64 " B/s (state %" PRIu64
				            "), want %" PRIu64 "\n",
				            i, c->what, k, got, s.bps, st->expect_bps);
			assert_true(got == st->expect_bps);
			assert_true(s.bps == got);
		}
	}
}

/* mg_fall_rate_start: the first step starts the tracker (its expect_bps is
 * the rate it starts from), the others are readings. */
static void fall_rate_start_table(void **state)
{
	static const struct fall_case cases[] = {
	        {"started: the rate it starts from is seen at once, and a short span changes nothing",
	         2,
	         {{GiB, 10 * SEC, 80 * MiB}, {GiB - 100 * MiB, 10 * SEC + 1000, 80 * MiB}}},
	        {"one span of its own, slower: that span",
	         2,
	         {{GiB, 10 * SEC, 80 * MiB}, {GiB - 10 * MiB, 11 * SEC, 10 * MiB}}},
	        {"one span of its own, faster: still the rate it started from",
	         2,
	         {{GiB, 10 * SEC, 80 * MiB}, {GiB - 200 * MiB, 11 * SEC, 80 * MiB}}},
	        {"two spans of its own: the rate it started from is gone",
	         3,
	         {{GiB, 10 * SEC, 80 * MiB},
	          {GiB - 100 * MiB, 11 * SEC, 80 * MiB},
	          {GiB - 300 * MiB, 12 * SEC, 100 * MiB}}},
	        {"started at 0 B/s: a fall shows only after two spans",
	         3,
	         {{GiB, 10 * SEC, 0},
	          {GiB - 100 * MiB, 11 * SEC, 0},
	          {GiB - 200 * MiB, 12 * SEC, 100 * MiB}}},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct fall_case *c = &cases[i];
		struct mg_fall_rate s;

		mg_fall_rate_start(&s, c->steps[0].available, c->steps[0].now, c->steps[0].expect_bps);
		assert_true(s.bps == c->steps[0].expect_bps);
		for (size_t k = 1; k < c->n; k++) {
			const struct fall_step *st = &c->steps[k];
			uint64_t got = mg_fall_rate_update(&s, st->available, st->now);
			if (got != st->expect_bps)
				print_error("case %zu (%s), reading %zu: %" PRIu64 " B/s, want %" PRIu64 "\n",
				            i, c->what, k, got, st->expect_bps);
			assert_true(got == st->expect_bps);
		}
	}
}

/* A tracker counts the spans it has ended, up to two: a reading too soon
 * after the span began ends none, and a zeroed tracker's first reading only
 * starts one. Starting it again starts the count again. */
static void fall_rate_spans(void **state)
{
	static const struct {
		uint64_t now;
		unsigned spans;
	} steps[] = {{10 * SEC + 1000, 0}, {11 * SEC, 1}, {12 * SEC, 2}, {13 * SEC, 2}};
	struct mg_fall_rate s = {0};

	(void)mg_fall_rate_update(&s, GiB, 9 * SEC);
	assert_int_equal(s.spans, 0);
	(void)mg_fall_rate_update(&s, GiB, 10 * SEC);
	assert_int_equal(s.spans, 1);
	mg_fall_rate_start(&s, GiB, 10 * SEC, 80 * MiB);
	assert_int_equal(s.spans, 0);
	for (size_t k = 0; k < MG_ARRAY_SIZE(steps); k++) {
		(void)mg_fall_rate_update(&s, GiB - k * MiB, steps[k].now);
		assert_int_equal(s.spans, steps[k].spans);
		assert_int_equal(mg_fall_rate_measured(&s), steps[k].spans >= 2);
	}
}

/* A fence raised by a measured rate of the others says so, without "at
 * most". */
static void decide_widen_names_measured_rate(void **state)
{
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_guarded g = task(3 * GiB, GiB, 0);
	struct mg_decision d;

	p.throttle = true;
	p.lead_usec = SEC / 4;
	node.mem.mem_available = 100 * MiB;
	node.available_fall_bps = 500 * MiB;
	g.fenced = g.pushed = g.others_measured = true;
	g.others_fall_bps = 8 * MiB;
	decide(&p, &node, &g, 1, &d);
	assert_int_equal(d.verdict, MG_VERDICT_WIDEN);
	ft_assert_contains(d.why, "and the others take 8MiB/s: raised by");
}

/* --- mg_policy_poll_usec --- */

struct poll_case {
	const char *what;
	uint64_t available, fall_bps, poll_max, expect;
	uint64_t cost_usec; /* the last check's; 0 when not given */
};

/* available_min is 64 MiB; the assumed rate 512 MiB/s. */
static void poll_interval_table(void **state)
{
	static const struct poll_case cases[] = {
	        {"below available_min: the shortest", 10 * MiB, 0, 2 * SEC, MG_POLL_MIN_USEC, 0},
	        {"MemAvailable 0", 0, 0, 2 * SEC, MG_POLL_MIN_USEC, 0},
	        {"exactly available_min", 64 * MiB, 0, 2 * SEC, MG_POLL_MIN_USEC, 0},
	        {"1 MiB headroom lasts 2 ms: the shortest", 65 * MiB, 0, 2 * SEC, MG_POLL_MIN_USEC, 0},
	        {"just under the shortest", 64 * MiB + MG_ASSUMED_ALLOC_BPS / 10 - MiB, 0, 2 * SEC,
	         MG_POLL_MIN_USEC, 0},
	        {"128 MiB headroom: 250 ms", 192 * MiB, 0, 2 * SEC, SEC / 4, 0},
	        {"512 MiB headroom: 1 s", 576 * MiB, 0, 2 * SEC, SEC, 0},
	        {"exactly poll_max", 64 * MiB + GiB, 0, 2 * SEC, 2 * SEC, 0},
	        {"beyond poll_max", 64 * MiB + 4 * GiB, 0, 2 * SEC, 2 * SEC, 0},
	        {"poll_max at the shortest", 64 * MiB + 4 * GiB, 0, MG_POLL_MIN_USEC, MG_POLL_MIN_USEC, 0},
	        {"7 GiB headroom, calm: 14 s", 64 * MiB + 7 * GiB, 0, 30 * SEC, 14 * SEC, 0},
	        {"a slow fall changes nothing", 64 * MiB + 7 * GiB, 100 * MiB, 30 * SEC, 14 * SEC, 0},
	        {"falling at 1 GiB/s: 3.5 s", 64 * MiB + 7 * GiB, GiB, 30 * SEC, 7 * SEC / 2, 0},
	        {"falling at 1 GiB/s, 512 MiB left: 250 ms", 576 * MiB, GiB, 30 * SEC, SEC / 4, 0},
	        {"a huge fall: the shortest", 64 * MiB + 7 * GiB, UINT64_MAX, 30 * SEC, MG_POLL_MIN_USEC, 0},
	        {"huge MemAvailable does not overflow", UINT64_MAX, 0, 60 * SEC, 60 * SEC, 0},
	        {"a cheap check changes nothing", 10 * MiB, 0, 30 * SEC, MG_POLL_MIN_USEC, 1000},
	        {"a 50 ms check, memory short: 200 ms", 10 * MiB, 0, 30 * SEC, SEC / 5, SEC / 20},
	        {"a 2 s check: 8 s", 10 * MiB, 0, 30 * SEC, 8 * SEC, 2 * SEC},
	        {"a slow check is capped at poll_max", 10 * MiB, 0, 30 * SEC, 30 * SEC, 60 * SEC},
	        {"the headroom's interval is longer than the cost's", 64 * MiB + 7 * GiB, 0, 30 * SEC,
	         14 * SEC, SEC},
	        {"a huge cost does not overflow", 10 * MiB, 0, 30 * SEC, 30 * SEC, UINT64_MAX},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct poll_case *c = &cases[i];
		struct mg_policy p = policy();

		p.poll_max_usec = c->poll_max;
		uint64_t got = mg_policy_poll_usec(&p, c->available, c->fall_bps, c->cost_usec);
		if (got != c->expect)
			print_error("case %zu (%s): %" PRIu64 " us, want %" PRIu64 "\n", i, c->what, got,
			            c->expect);
		assert_true(got == c->expect);
	}
}

/* --- mg_policy_from_config --- */

/* The defaults on a 16 GiB node, and every setting carried over. */
/* A guard never does worse than none: a task within its share is not killed
 * while a cgroup outside the guard holds more than its due. */
struct outsider_case {
	const char *what;
	uint64_t current, share; /* the only guarded task */
	bool protected_;         /* ... and it may not be killed */
	const char *outsider;    /* NULL: unknown */
	uint64_t outsider_current;
	uint64_t due;            /* the policy's outside_due; 0 = rule off */
	uint64_t last_kill_usec; /* 0: never */
	bool kill_outside;       /* the policy's kill_outside */
	uint64_t available;      /* MemAvailable (available_min is 64 MiB, available_pressure 256 MiB) */
	enum mg_verdict want;
};

static void decide_outsider_table(void **state)
{
	static const struct outsider_case cases[] = {
	        {"within its share, the hog outside over its due", 60 * MiB, 200 * MiB, false, "outside",
	         700 * MiB, 96 * MiB, 0, false, 32 * MiB, MG_VERDICT_OUTSIDER},
	        {"exactly at its share counts as within", 200 * MiB, 200 * MiB, false, "outside", 700 * MiB,
	         96 * MiB, 0, false, 32 * MiB, MG_VERDICT_OUTSIDER},
	        {"over its share: it still goes first", 260 * MiB, 200 * MiB, false, "outside", 700 * MiB,
	         96 * MiB, 0, true, 32 * MiB, MG_VERDICT_KILL},
	        {"the outsider within its due", 60 * MiB, 200 * MiB, false, "system.slice", 90 * MiB,
	         96 * MiB, 0, true, 32 * MiB, MG_VERDICT_KILL},
	        {"no outsider known", 60 * MiB, 200 * MiB, false, NULL, 0, 96 * MiB, 0, true, 32 * MiB,
	         MG_VERDICT_KILL},
	        {"no share known: not within one", 60 * MiB, 0, false, "outside", 700 * MiB, 96 * MiB, 0,
	         true, 32 * MiB, MG_VERDICT_KILL},
	        {"the rule off", 60 * MiB, 200 * MiB, false, "outside", 700 * MiB, 0, 0, true, 32 * MiB,
	         MG_VERDICT_KILL},
	        {"nothing guarded may be killed: the outsider is still named", 60 * MiB, 200 * MiB, true,
	         "outside", 700 * MiB, 96 * MiB, 0, false, 32 * MiB, MG_VERDICT_OUTSIDER},
	        {"nothing guarded may be killed and no outsider over its due", 60 * MiB, 200 * MiB, true,
	         "outside", 90 * MiB, 96 * MiB, 0, true, 32 * MiB, MG_VERDICT_NO_VICTIM},
	        {"settling comes first", 60 * MiB, 200 * MiB, false, "outside", 700 * MiB, 96 * MiB,
	         999 * SEC, true, 32 * MiB, MG_VERDICT_SETTLING},
	        {"kill_outside below available_min: the outsider pays", 60 * MiB, 200 * MiB, false, "outside",
	         700 * MiB, 96 * MiB, 0, true, 32 * MiB, MG_VERDICT_KILL_OUTSIDER},
	        {"kill_outside with nothing guarded to kill", 60 * MiB, 200 * MiB, true, "outside", 700 * MiB,
	         96 * MiB, 0, true, 32 * MiB, MG_VERDICT_KILL_OUTSIDER},
	        {"kill_outside, but only under pressure, above available_min: named only", 60 * MiB,
	         200 * MiB, false, "outside", 700 * MiB, 96 * MiB, 0, true, 100 * MiB, MG_VERDICT_OUTSIDER},
	        {"kill_outside, exactly at available_min: named only", 60 * MiB, 200 * MiB, false, "outside",
	         700 * MiB, 96 * MiB, 0, true, 64 * MiB, MG_VERDICT_OUTSIDER},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct outsider_case *c = &cases[i];
		struct mg_policy p = policy();
		struct mg_node_state node = short_node();
		struct mg_guarded g = task(c->current, c->share, 0);
		struct mg_decision d;

		print_message("case: %s\n", c->what);
		p.outside_due = c->due;
		p.kill_outside = c->kill_outside;
		g.protected_ = c->protected_;
		node.mem.mem_available = c->available;
		node.outsider = (struct mg_outsider){.path = c->outsider, .current = c->outsider_current};
		node.last_kill_usec = c->last_kill_usec;
		decide(&p, &node, &g, 1, &d);
		assert_string_equal(mg_verdict_name(d.verdict), mg_verdict_name(c->want));
		if (c->want == MG_VERDICT_OUTSIDER || c->want == MG_VERDICT_KILL_OUTSIDER) {
			assert_int_equal(d.victim, -1);
			if (!strstr(d.why, "outside, outside the guard, holds 700MiB (its due is 96MiB)"))
				fail_msg("why: %s", d.why);
			assert_non_null(strstr(d.why, c->protected_ ? "(none may be killed)"
			                                            : "memguard/run-1/task"));
		}
	}
}

/* Nothing fences an outsider in, so the lead that acts for guarded tasks
 * (MemAvailable falling to available_min within lead_usec) kills it too. */
static void decide_outsider_lead(void **state)
{
	static const struct {
		const char *what;
		uint64_t available, fall_bps;
		enum mg_verdict want;
	} cases[] = {
	        {"falls to available_min within the lead", 100 * MiB, 150 * MiB, MG_VERDICT_KILL_OUTSIDER},
	        {"falls, but not within the lead: named only", 200 * MiB, 150 * MiB, MG_VERDICT_OUTSIDER},
	        {"not falling: named only", 100 * MiB, 0, MG_VERDICT_OUTSIDER},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mg_policy p = policy();
		struct mg_node_state node = short_node(); /* under pressure: full avg10 38% */
		struct mg_guarded g = task(60 * MiB, 200 * MiB, 0);
		struct mg_decision d;

		print_message("case: %s\n", cases[i].what);
		p.outside_due = 96 * MiB;
		p.kill_outside = true;
		p.lead_usec = SEC / 2;
		node.mem.mem_available = cases[i].available;
		node.available_fall_bps = cases[i].fall_bps;
		node.outsider = (struct mg_outsider){.path = "user.slice", .current = 700 * MiB};
		decide(&p, &node, &g, 1, &d);
		assert_string_equal(mg_verdict_name(d.verdict), mg_verdict_name(cases[i].want));
	}
}

/* Whom KILL_OUTSIDER kills: the kernel's own badness, never what a user
 * can name. */
static void outside_victim_table(void **state)
{
	static const struct {
		const char *what;
		struct mg_outside_proc p[4];
		size_t n;
		long want;
	} cases[] = {
	        {"none", {{0, 0, 0, false, false}}, 0, -1},
	        {"the highest oom_score",
	         {{100, 0, 10 * MiB, false, false},
	          {900, 0, 5 * MiB, false, false},
	          {300, 0, 50 * MiB, false, false}},
	         3,
	         1},
	        {"a tie goes to the largest",
	         {{500, 0, 10 * MiB, false, false},
	          {500, 0, 30 * MiB, false, false},
	          {500, 0, 20 * MiB, false, false}},
	         3,
	         1},
	        {"oom_score_adj -1000 is never killed",
	         {{900, -1000, 500 * MiB, false, false}, {10, 0, MiB, false, false}},
	         2,
	         1},
	        {"protected is never killed",
	         {{900, 0, 500 * MiB, true, false}, {10, 0, MiB, false, false}},
	         2,
	         1},
	        {"-999 may be", {{2, -999, 500 * MiB, false, false}}, 1, 0},
	        {"only exempt ones",
	         {{900, -1000, 500 * MiB, false, false}, {800, 0, 400 * MiB, true, false}},
	         2,
	         -1},
	        {"init and kernel threads are never killed",
	         {{900, 0, 500 * MiB, false, true}, {10, 0, MiB, false, false}},
	         2,
	         1},
	        {"a raised score cannot hide a bigger one",
	         {{1000, 1000, MiB, false, false}, {600, 0, 600 * MiB, false, false}},
	         2,
	         0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case: %s\n", cases[i].what);
		assert_int_equal(mg_policy_outside_victim(cases[i].p, cases[i].n), cases[i].want);
	}
}

/* The root cgroup's own memory (issue 36, hole 8): what the node uses less
 * what its children hold, at most what its own processes map. */
static void root_own_table(void **state)
{
	static const struct {
		const char *what;
		struct mg_meminfo mem;
		uint64_t children, procs_rss, want;
	} cases[] = {
	        {"a hog in the root",
	         {.mem_total = GiB, .mem_free = 40 * MiB, .has_free = true},
	         300 * MiB,
	         600 * MiB,
	         600 * MiB},
	        {"kernel memory is no process's",
	         {.mem_total = GiB, .mem_free = 500 * MiB, .has_free = true},
	         300 * MiB,
	         8 * MiB,
	         8 * MiB},
	        {"processes map more than the node has left over (shared pages)",
	         {.mem_total = GiB, .mem_free = 500 * MiB, .has_free = true},
	         300 * MiB,
	         900 * MiB,
	         GiB - 800 * MiB},
	        {"children read at another moment: never below 0",
	         {.mem_total = GiB, .mem_free = 500 * MiB, .has_free = true},
	         700 * MiB,
	         100 * MiB,
	         0},
	        {"without MemFree, MemAvailable",
	         {.mem_total = GiB, .mem_available = 100 * MiB},
	         300 * MiB,
	         GiB,
	         GiB - 400 * MiB},
	        {"no processes", {.mem_total = GiB, .mem_free = 10 * MiB, .has_free = true}, 0, 0, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		print_message("case: %s\n", cases[i].what);
		assert_true(mg_policy_root_own(&cases[i].mem, cases[i].children, cases[i].procs_rss) ==
		            cases[i].want);
	}
	assert_true(mg_policy_init_or_kernel(1, 0));
	assert_true(mg_policy_init_or_kernel(2, 0));
	assert_true(mg_policy_init_or_kernel(57, 2));
	assert_false(mg_policy_init_or_kernel(57, 1));
	assert_false(mg_policy_init_or_kernel(3000, 2999));
}

static void unguarded_table(void **state)
{
	static const struct mg_guarded g[] = {
	        {.path = "memguard/run-1/task-0", .current = 100 * MiB},
	        {.path = "memguard/run-1/task-1", .current = 50 * MiB},
	        {.path = "memguard/run-10/task-0", .current = 30 * MiB},
	        {.path = "system.slice/slurmstepd.scope/job_7/memguard", .current = 200 * MiB},
	};
	static const struct {
		const char *path;
		uint64_t current, want;
	} cases[] = {
	        {"memguard", 400 * MiB, 220 * MiB},      /* all three runs below it */
	        {"memguard/run-1", 160 * MiB, 10 * MiB}, /* not run-10: a name, not a prefix */
	        {"memguard/run-1/task-0", 100 * MiB, 0}, /* itself guarded */
	        {"system.slice", 900 * MiB, 700 * MiB},  /* deep below */
	        {"system.slice/slurmstepd.scope/job_8", 90 * MiB, 90 * MiB}, /* none below */
	        {"user.slice", 300 * MiB, 300 * MiB},
	        {"memguard/run-1", 120 * MiB, 0}, /* read at another moment: never below 0 */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case: %s\n", cases[i].path);
		assert_int_equal(
		        mg_policy_unguarded(cases[i].path, cases[i].current, g, sizeof(g) / sizeof(g[0])),
		        cases[i].want);
	}
}

static void blame_due_table(void **state)
{
	static const struct {
		const char *last;
		uint64_t last_usec, now_usec;
		const char *offender;
		bool want;
	} cases[] = {
	        {NULL, 0, 5 * SEC, "user.slice", true},                 /* none named yet */
	        {"", 0, 5 * SEC, "user.slice", true},                   /* the same */
	        {"user.slice", 4 * SEC, 5 * SEC, "user.slice", false},  /* named a second ago */
	        {"user.slice", 4 * SEC, 5 * SEC, "system.slice", true}, /* another offender */
	        {"user.slice", 4 * SEC, 14 * SEC - 1, "user.slice", false},
	        {"user.slice", 4 * SEC, 14 * SEC, "user.slice", true}, /* settle (10 s) has passed */
	};
	struct mg_policy p = policy();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(mg_policy_blame_due(&p, cases[i].last, cases[i].last_usec, cases[i].offender,
		                                     cases[i].now_usec),
		                 cases[i].want);
}

static void fence_pushed_table(void **state)
{
	static const struct {
		struct mg_fence_probe probe;
		bool want;
		const char *what;
	} cases[] = {
#define PROBE(at, now, anon_, shmem_, fence_)                                                                \
	{.high_events_at_fence = (at),                                                                       \
	 .high_events = (now),                                                                               \
	 .anon = (anon_),                                                                                    \
	 .shmem = (shmem_),                                                                                  \
	 .fence = (fence_)}
	        {PROBE(0, 0, 0, 0, 0), false, "no fence"},
	        {PROBE(3, 3, 512 * MiB, 0, 512 * MiB), false, "not throttled since the fence was set"},
	        {PROBE(3, 2, 512 * MiB, 0, 512 * MiB), false, "the counter went back (a new cgroup)"},
	        {PROBE(3, 4, 512 * MiB, 0, 512 * MiB), true, "throttled, all of it anon"},
	        {PROBE(0, 1, 480 * MiB, 0, 512 * MiB), true, "anon exactly at the slack (512 - 512/16)"},
	        {PROBE(0, 1, 480 * MiB - 1, 0, 512 * MiB), false, "just below the slack"},
	        {PROBE(0, 9, 100 * MiB, 0, 512 * MiB), false, "page cache read past the fence"},
	        {PROBE(0, 1, 600 * MiB, 0, 512 * MiB), true, "anon above the fence (raised since)"},
	        {PROBE(0, 1, 0, 500 * MiB, 512 * MiB), true, "a tmpfs filled up to the fence"},
	        {PROBE(0, 1, 240 * MiB, 240 * MiB, 512 * MiB), true, "anon and shmem together at the slack"},
	        {PROBE(0, 1, 240 * MiB, 240 * MiB - 1, 512 * MiB), false, "together just below the slack"},
	        {PROBE(0, 1, 15, 0, 16), true, "tiny fence: slack of one byte"},
	        {PROBE(0, 1, UINT64_MAX, 0, UINT64_MAX), true, "huge values do not wrap"},
	        {PROBE(0, 1, UINT64_MAX, UINT64_MAX, UINT64_MAX), true, "huge anon and shmem do not wrap"},
	        {PROBE(0, 1, UINT64_MAX, 1, 512 * MiB), true, "a sum past the top still counts"},
#undef PROBE
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool got = mg_policy_fence_pushed(&cases[i].probe);
		if (got != cases[i].want)
			fail_msg("case %zu (%s): got %d", i, cases[i].what, got);
	}
}

static void rescan_due_table(void **state)
{
	static const struct {
		bool was_short;
		uint64_t last, took, now;
		bool want;
	} cases[] = {
	        {false, 5 * SEC, 0, 5 * SEC, true},       /* memory just became short */
	        {false, 5 * SEC, 9 * SEC, 5 * SEC, true}, /* just became short, however long it takes */
	        {true, 5 * SEC, 0, 5 * SEC + 1, false},   /* short, rescanned a moment ago */
	        {true, 5 * SEC, 0, 6 * SEC - 1, false},   /* just under a second */
	        {true, 5 * SEC, 0, 6 * SEC, true},        /* a second: read the globs again */
	        {true, 5 * SEC, SEC / 10, 6 * SEC, true}, /* took 100 ms: still a second */
	        {true, 5 * SEC, SEC / 2, 6 * SEC, false}, /* took 500 ms (a storm's run): 5 s */
	        {true, 5 * SEC, SEC / 2, 10 * SEC, true},
	        {true, 0, 0, 5 * SEC, true},                  /* never rescanned */
	        {true, 6 * SEC, 0, 5 * SEC, true},            /* clock went back: rescan */
	        {true, UINT64_MAX - 1, 0, UINT64_MAX, false}, /* no overflow */
	        {true, 1, UINT64_MAX, UINT64_MAX, false},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++)
		assert_int_equal(
		        mg_policy_rescan_due(cases[i].was_short, cases[i].last, cases[i].took, cases[i].now),
		        cases[i].want);
}

static void event_rescan_at_table(void **state)
{
	static const uint64_t MS = SEC / 1000;
	static const struct {
		uint64_t last, took, now, want;
	} cases[] = {
	        {0, 0, 5 * SEC, 5 * SEC}, /* never rescanned: now */
	        {5 * SEC, 2 * MS, 5 * SEC + 1 * MS,
	         5 * SEC + 250 * MS}, /* a burst right after one: 250 ms on */
	        {5 * SEC, 2 * MS, 5 * SEC + 249 * MS, 5 * SEC + 250 * MS},
	        {5 * SEC, 2 * MS, 5 * SEC + 250 * MS, 5 * SEC + 250 * MS},  /* due: now */
	        {5 * SEC, 2 * MS, 9 * SEC, 9 * SEC},                        /* long calm: now */
	        {5 * SEC, 40 * MS, 5 * SEC + 300 * MS, 5 * SEC + 400 * MS}, /* a slow one: ten times it */
	        {5 * SEC, 274 * MS, 6 * SEC, 5 * SEC + 2740 * MS},          /* 20,000 children measured */
	        {5 * SEC, 3 * SEC, 6 * SEC, 10 * SEC},                      /* capped at 5 s */
	        {5 * SEC, UINT64_MAX, 6 * SEC, 10 * SEC},                   /* no overflow */
	        {6 * SEC, 2 * MS, 5 * SEC, 5 * SEC},                        /* clock went back: now */
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		uint64_t got = mg_policy_event_rescan_at(cases[i].last, cases[i].took, cases[i].now);
		if (got != cases[i].want)
			print_error("case %zu: %" PRIu64 ", want %" PRIu64 "\n", i, got, cases[i].want);
		assert_true(got == cases[i].want);
	}
}

static void from_config_defaults(void **state)
{
	struct mg_config cfg;
	struct mg_policy p;
	char err[256] = "";

	mg_config_defaults(&cfg);
	memset(&p, 0xa5, sizeof(p));
	assert_int_equal(mg_policy_from_config(&cfg, 16 * GiB, &p, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_true(p.available_min == 16 * GiB / 20);            /* 5% */
	assert_true(p.available_pressure == 16 * GiB * 15 / 100); /* 15% */
	assert_int_equal(p.full_avg10_max, cfg.pressure_full_avg10 * 100);
	assert_true(p.settle_usec == cfg.settle_usec);
	assert_true(p.lead_usec == cfg.lead_usec);
	assert_true(p.poll_max_usec == cfg.poll_max_usec);
	assert_int_equal(p.throttle, cfg.throttle);
	assert_false(p.lead_kill);
	assert_int_equal(p.dry_run, cfg.dry_run);
	assert_true(p.outside_due == 16 * GiB / 10); /* 10% */
	assert_true(p.kill_outside);

	strcpy(cfg.outside_due, "lots");
	assert_int_equal(mg_policy_from_config(&cfg, 16 * GiB, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "outside_due"));
	strcpy(cfg.outside_due, "0");
	assert_int_equal(mg_policy_from_config(&cfg, 16 * GiB, &p, err, sizeof(err)), 0);
	assert_true(p.outside_due == 0);

	cfg.throttle = !cfg.throttle;
	cfg.lead_kill = !cfg.lead_kill;
	cfg.kill_outside = !cfg.kill_outside;
	cfg.dry_run = !cfg.dry_run;
	cfg.pressure_full_avg10 = 0; /* the avg10 rule off */
	strcpy(cfg.available_min, "512M");
	strcpy(cfg.available_pressure, "1G");
	assert_int_equal(mg_policy_from_config(&cfg, 16 * GiB, &p, err, sizeof(err)), 0);
	assert_int_equal(p.throttle, cfg.throttle);
	assert_int_equal(p.lead_kill, cfg.lead_kill);
	assert_int_equal(p.kill_outside, cfg.kill_outside);
	assert_int_equal(p.dry_run, cfg.dry_run);
	assert_int_equal(p.full_avg10_max, UINT32_MAX);
	assert_true(p.available_min == 512 * MiB);
	assert_true(p.available_pressure == GiB);
}

struct from_config_case {
	const char *what;
	const char *available_min, *available_pressure;
	uint64_t stall, window, poll_max;
	int expect;
	const char *err; /* part of the message, when refused */
};

static void from_config_table(void **state)
{
	static const struct from_config_case cases[] = {
	        {"sizes", "512M", "1G", 100000, SEC, SEC, 0, NULL},
	        {"equal floors", "1G", "1G", 100000, SEC, SEC, 0, NULL},
	        {"available_min above available_pressure", "2G", "1G", 100000, SEC, SEC, -EINVAL,
	         "must not exceed available_pressure"},
	        {"available_pressure at MemTotal", "5%", "100%", 100000, SEC, SEC, -EINVAL, "below MemTotal"},
	        {"available_pressure just below MemTotal", "5%", "4095M", 100000, SEC, SEC, 0, NULL},
	        {"available_min does not parse", "lots", "1G", 100000, SEC, SEC, -EINVAL,
	         "invalid available_min or available_pressure"},
	        {"available_pressure does not parse", "512M", "", 100000, SEC, SEC, -EINVAL,
	         "invalid available_min or available_pressure"},
	        {"window too short for the kernel", "512M", "1G", 100000, SEC / 2 - 1, SEC, -EINVAL,
	         "trigger_window"},
	        {"stall longer than the window", "512M", "1G", 2 * SEC, SEC, SEC, -EINVAL, "trigger_stall"},
	        {"poll_max just below the shortest poll", "512M", "1G", 100000, SEC, MG_POLL_MIN_USEC - 1,
	         -EINVAL, "poll_max must be at least 100 ms"},
	        {"poll_max at the shortest poll", "512M", "1G", 100000, SEC, MG_POLL_MIN_USEC, 0, NULL},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct from_config_case *c = &cases[i];
		struct mg_config cfg;
		struct mg_policy p;
		char err[256] = "";

		mg_config_defaults(&cfg);
		snprintf(cfg.available_min, sizeof(cfg.available_min), "%s", c->available_min);
		snprintf(cfg.available_pressure, sizeof(cfg.available_pressure), "%s", c->available_pressure);
		cfg.trigger_stall_usec = c->stall;
		cfg.trigger_window_usec = c->window;
		cfg.poll_max_usec = c->poll_max;
		int r = mg_policy_from_config(&cfg, 4 * GiB, &p, err, sizeof(err));
		if (r != c->expect)
			print_error("case %zu (%s): %d (%s), want %d\n", i, c->what, r, err, c->expect);
		assert_int_equal(r, c->expect);
		if (c->err)
			ft_assert_contains(err, c->err);
		else
			assert_true(p.available_min <= p.available_pressure &&
			            p.available_pressure < 4 * GiB);
	}
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
	        {.path = "memguard/run-7/task-0", 200 * MiB, 256 * MiB, 1 * MiB, .populated = true},
	        {.path = "memguard/run-7/task-1", 512 * MiB, 256 * MiB, 50 * MiB, .populated = true},
	        {.path = "memguard/run-7/task-2", 240 * MiB, 256 * MiB, 0, .populated = true},
	        {.path = "memguard/run-7/task-3", 180 * MiB, 256 * MiB, 5 * MiB, .populated = true},
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

/* --- mg_policy_split_shares --- */

#define ALICE 1001
#define BOB 1002

static struct mg_guarded owned(uid_t owner, uint64_t current, uint64_t share, uint64_t hint)
{
	struct mg_guarded g = task(current, share, 0);

	g.owner = owner;
	g.hint = hint;
	return g;
}

struct split_case {
	const char *what;
	uint64_t mem_total;
	size_t n;
	struct mg_guarded g[MAX_G];
	uint64_t want[MAX_G]; /* the shares after */
};

static void split_shares_table(void **state)
{
	const uint64_t gives = 64 * GiB - 64 * MiB; /* MemTotal less available_min */
	struct mg_guarded empty = owned(ALICE, 0, 0, 0);

	empty.populated = false;
	const struct split_case cases[] = {
	        {"a forged huge hint is lowered to the split of two owners",
	         64 * GiB,
	         2,
	         {owned(ALICE, 40 * GiB, 0, UINT64_MAX), owned(BOB, 2 * GiB, 4 * GiB, 0)},
	         {gives / 2, 4 * GiB}},
	        {"a hint lowers the split",
	         64 * GiB,
	         2,
	         {owned(ALICE, GiB, 0, GiB), owned(BOB, 2 * GiB, 4 * GiB, 0)},
	         {GiB, 4 * GiB}},
	        {"one owner's many cgroups shrink only their own split",
	         64 * GiB,
	         4,
	         {owned(ALICE, GiB, 0, 0), owned(ALICE, GiB, 0, 0), owned(ALICE, GiB, 0, 0),
	          owned(BOB, GiB, 0, 0)},
	         {gives / 2 / 3, gives / 2 / 3, gives / 2 / 3, gives / 2}},
	        {"root's runs count as one owner",
	         64 * GiB,
	         3,
	         {owned(0, GiB, 4 * GiB, 0), owned(0, GiB, 4 * GiB, 0), owned(ALICE, GiB, 0, 0)},
	         {4 * GiB, 4 * GiB, gives / 2}},
	        {"an empty cgroup counts for no owner",
	         64 * GiB,
	         2,
	         {owned(ALICE, GiB, 0, 0), empty},
	         {gives, gives}},
	        {"alone: the whole node", 64 * GiB, 1, {owned(ALICE, GiB, 0, UINT64_MAX)}, {gives}},
	        {"a node that gives nothing: unknown",
	         32 * MiB,
	         2,
	         {owned(ALICE, GiB, 0, UINT64_MAX), owned(BOB, GiB, 4 * GiB, 0)},
	         {0, 4 * GiB}},
	};
	struct mg_policy p = policy();
	uid_t scratch[2 * MAX_G];

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_guarded g[MAX_G];
		memcpy(g, cases[i].g, sizeof(g));
		for (int pass = 0; pass < 2; pass++) { /* a second pass changes nothing */
			mg_policy_split_shares(&p, cases[i].mem_total, g, cases[i].n, scratch);
			for (size_t k = 0; k < cases[i].n; k++) {
				if (g[k].share != cases[i].want[k])
					print_error("case %zu (%s), cgroup %zu: share %" PRIu64
					            ", want %" PRIu64 "\n",
					            i, cases[i].what, k, g[k].share, cases[i].want[k]);
				assert_true(g[k].share == cases[i].want[k]);
				assert_true(g[k].split == (cases[i].g[k].share == 0));
			}
		}
	}
}

/* The numbers through the decision: before, the forged share made
 * alice's 40 GiB 0 % and bob's 2 GiB of 4 GiB the victim. */
static void decide_forged_share_victim(void **state)
{
	struct mg_policy p = policy();
	struct mg_node_state node = short_node();
	struct mg_guarded g[2] = {owned(BOB, 2 * GiB, 4 * GiB, 0), owned(ALICE, 40 * GiB, 0, UINT64_MAX)};
	uid_t scratch[4];
	struct mg_decision dec;

	node.mem.mem_total = 64 * GiB;
	mg_policy_split_shares(&p, node.mem.mem_total, g, 2, scratch);
	decide(&p, &node, g, 2, &dec);
	assert_int_equal(dec.verdict, MG_VERDICT_KILL);
	assert_int_equal(dec.victim, 1);
	ft_assert_contains(dec.why, "even split");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(needs_memory_truth_table),
	        cmocka_unit_test(decide_why_names_the_fall),
	        cmocka_unit_test(decide_why_names_the_skipped_fence),
	        cmocka_unit_test(percent_of_share_table),
	        cmocka_unit_test(percent_of_share_saturates),
	        cmocka_unit_test(decide_victim_table),
	        cmocka_unit_test(decide_huge_values),
	        cmocka_unit_test(decide_nothing_in_scope),
	        cmocka_unit_test(decide_calm_when_not_needed),
	        cmocka_unit_test(decide_settling_table),
	        cmocka_unit_test(decide_settling_without_victim),
	        cmocka_unit_test(decide_why_text),
	        cmocka_unit_test(decide_why_huge_values),
	        cmocka_unit_test(decide_four_elastic_tasks),
	        cmocka_unit_test(decide_passed_over),
	        cmocka_unit_test(decide_fence_or_kill_table),
	        cmocka_unit_test(decide_widen_table),
	        cmocka_unit_test(decide_fenced_worst_is_held),
	        cmocka_unit_test(decide_settling_before_fence),
	        cmocka_unit_test(decide_fence_lifecycle),
	        cmocka_unit_test(decide_unfence_table),
	        cmocka_unit_test(decide_unfence_only_when_not_short),
	        cmocka_unit_test(fall_rate_table),
	        cmocka_unit_test(fall_rate_start_table),
	        cmocka_unit_test(split_shares_table),
	        cmocka_unit_test(root_own_table),
	        cmocka_unit_test(decide_forged_share_victim),
	        cmocka_unit_test(fall_rate_spans),
	        cmocka_unit_test(decide_widen_names_measured_rate),
	        cmocka_unit_test(poll_interval_table),
	        cmocka_unit_test(decide_outsider_table),
	        cmocka_unit_test(outside_victim_table),
	        cmocka_unit_test(decide_outsider_lead),
	        cmocka_unit_test(decide_lead_kill_table),
	        cmocka_unit_test(decide_hold_by_others_table),
	        cmocka_unit_test(decide_hard_floor_lists_table),
	        cmocka_unit_test(decide_lead_kill_counts_lists),
	        cmocka_unit_test(unguarded_table),
	        cmocka_unit_test(blame_due_table),
	        cmocka_unit_test(fence_pushed_table),
	        cmocka_unit_test(rescan_due_table),
	        cmocka_unit_test(event_rescan_at_table),
	        cmocka_unit_test(from_config_defaults),
	        cmocka_unit_test(from_config_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
