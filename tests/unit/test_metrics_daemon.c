/* memguardd's metrics (daemon/guard/metrics.c): the reason a fence or kill is
 * counted under, what a verdict came to, when the file is due, and the text. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "guard/metrics.h"
#include "memguard/util.h"

#define MiB (1ull << 20)

struct reason_case {
	const char *what;
	uint64_t avail;
	bool trigger;
	uint32_t full; /* full avg10, hundredths of % */
	enum mg_short_reason want;
};

static void short_reason(void **state)
{
	/* available_min 100M, available_pressure 300M, full avg10 20% counts */
	static const struct reason_case cases[] = {
	        {"below the floor", 50 * MiB, false, 0, MG_SHORT_AVAILABLE_MIN},
	        {"below the floor under pressure too", 50 * MiB, true, 9000, MG_SHORT_AVAILABLE_MIN},
	        {"just below the floor", 100 * MiB - 1, false, 0, MG_SHORT_AVAILABLE_MIN},
	        {"a trigger in the band", 200 * MiB, true, 0, MG_SHORT_PRESSURE},
	        {"full avg10 in the band", 200 * MiB, false, 2000, MG_SHORT_PRESSURE},
	        {"full avg10 just short of it: the fall", 200 * MiB, false, 1999, MG_SHORT_FALLING},
	        {"at the floor, no pressure: the fall", 100 * MiB, false, 0, MG_SHORT_FALLING},
	        {"pressure above the band: the fall", 300 * MiB, true, 0, MG_SHORT_FALLING},
	};
	const struct mg_policy p = {
	        .available_min = 100 * MiB, .available_pressure = 300 * MiB, .full_avg10_max = 2000};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct reason_case *c = &cases[i];
		struct mg_node_state node = {.mem.mem_available = c->avail, .trigger_fired = c->trigger};
		node.psi.full.avg10 = c->full;
		enum mg_short_reason r = mg_short_reason_of(&p, &node);
		if (r != c->want)
			print_error("%s: %s\n", c->what, mg_short_reason_name(r));
		assert_int_equal(r, c->want);
	}
	assert_string_equal(mg_short_reason_name(MG_SHORT_AVAILABLE_MIN), "available_min");
	assert_string_equal(mg_short_reason_name(MG_SHORT_PRESSURE), "pressure");
	assert_string_equal(mg_short_reason_name(MG_SHORT_FALLING), "falling");
	assert_string_equal(mg_short_reason_name(MG_SHORT_COUNT), "unknown");
}

struct action_case {
	enum mg_verdict verdict;
	bool killed, fenced, dry_run;
	enum mg_metric_action want;
};

static void verdict_outcomes(void **state)
{
	static const struct action_case cases[] = {
	        {MG_VERDICT_CALM, false, false, false, MG_ACTION_NONE},
	        {MG_VERDICT_SETTLING, false, true, false, MG_ACTION_NONE},
	        {MG_VERDICT_NO_VICTIM, false, false, false, MG_ACTION_NONE},
	        {MG_VERDICT_OUTSIDER, false, false, false, MG_ACTION_NONE},
	        {MG_VERDICT_HOLD, false, true, false, MG_ACTION_NONE},
	        {MG_VERDICT_UNFENCE, false, false, false, MG_ACTION_UNFENCE},
	        {MG_VERDICT_WIDEN, false, true, false, MG_ACTION_WIDEN},
	        {MG_VERDICT_WIDEN, false, false, false, MG_ACTION_NONE}, /* could not be raised */
	        {MG_VERDICT_FENCE, false, true, false, MG_ACTION_FENCE},
	        {MG_VERDICT_FENCE, true, false, false, MG_ACTION_KILL},         /* no fence: killed */
	        {MG_VERDICT_FENCE, false, false, false, MG_ACTION_KILL_FAILED}, /* neither */
	        {MG_VERDICT_KILL, true, false, false, MG_ACTION_KILL},
	        {MG_VERDICT_KILL, true, true, false, MG_ACTION_KILL}, /* fenced, pushed, killed */
	        {MG_VERDICT_KILL, false, true, false, MG_ACTION_KILL_FAILED},
	        {MG_VERDICT_KILL, true, false, true, MG_ACTION_DRY_RUN_KILL},
	        {MG_VERDICT_KILL, false, false, true, MG_ACTION_KILL_FAILED},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct action_case *c = &cases[i];
		enum mg_metric_action a = mg_metric_action_of(c->verdict, c->killed, c->fenced, c->dry_run);
		if (a != c->want)
			print_error("case %zu: verdict %d -> %d\n", i, c->verdict, a);
		assert_int_equal(a, c->want);
	}
}

struct due_case {
	uint64_t written, now, interval;
	bool acted, want;
};

static void due(void **state)
{
	static const struct due_case cases[] = {
	        {0, 5000000, 60000000, false, true},         /* never written */
	        {1000000, 5000000, 60000000, false, false},  /* 4 s of 60 */
	        {1000000, 5000000, 60000000, true, true},    /* a fence, kill or unfence */
	        {1000000, 61000000, 60000000, false, true},  /* exactly the interval */
	        {1000000, 60999999, 60000000, false, false}, /* a microsecond short */
	        {1000000, 1000000, 0, false, true},          /* interval 0: every decision */
	        {1000000, 900000000, 60000000, false, true}, /* long since */
	        {1000000, 1000000, 60000000, true, true},    /* acted at once after a write */
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct due_case *c = &cases[i];
		if (mg_metrics_due(c->written, c->now, c->interval, c->acted) != c->want)
			print_error("case %zu\n", i);
		assert_int_equal(mg_metrics_due(c->written, c->now, c->interval, c->acted), c->want);
	}
}

static void counts_land_under_their_reason(void **state)
{
	struct mg_daemon_metrics m = {0};

	mg_daemon_metrics_count(&m, MG_ACTION_KILL, MG_SHORT_PRESSURE);
	mg_daemon_metrics_count(&m, MG_ACTION_KILL, MG_SHORT_PRESSURE);
	mg_daemon_metrics_count(&m, MG_ACTION_KILL, MG_SHORT_AVAILABLE_MIN);
	mg_daemon_metrics_count(&m, MG_ACTION_FENCE, MG_SHORT_FALLING);
	mg_daemon_metrics_count(&m, MG_ACTION_DRY_RUN_KILL, MG_SHORT_AVAILABLE_MIN);
	mg_daemon_metrics_count(&m, MG_ACTION_KILL_FAILED, MG_SHORT_PRESSURE);
	mg_daemon_metrics_count(&m, MG_ACTION_UNFENCE, MG_SHORT_COUNT);
	mg_daemon_metrics_count(&m, MG_ACTION_WIDEN, MG_SHORT_COUNT);
	mg_daemon_metrics_count(&m, MG_ACTION_NONE, MG_SHORT_COUNT);
	assert_true(m.kills[MG_SHORT_PRESSURE] == 2);
	assert_true(m.kills[MG_SHORT_AVAILABLE_MIN] == 1);
	assert_true(m.kills[MG_SHORT_FALLING] == 0);
	assert_true(m.fences[MG_SHORT_FALLING] == 1);
	assert_true(m.fences[MG_SHORT_PRESSURE] == 0);
	assert_true(m.dry_run_kills[MG_SHORT_AVAILABLE_MIN] == 1);
	assert_true(m.kill_failures == 1);
	assert_true(m.unfences == 1);
	assert_true(m.widenings == 1);
}

/* Each line of want is in text, whole. */
static void assert_lines(const char *text, const char *const *want)
{
	for (size_t i = 0; want[i]; i++) {
		char line[256];
		snprintf(line, sizeof(line), "\n%s\n", want[i]);
		if (!strstr(text, line) && strncmp(text, line + 1, strlen(line + 1)) != 0) {
			print_error("missing \"%s\" in:\n%s", want[i], text);
			fail();
		}
	}
}

static void the_text(void **state)
{
	struct mg_daemon_metrics m = {
	        .start_time_sec = 1795000000,
	        .guarded = 4,
	        .fenced = 1,
	        .degraded = true,
	        .mem_available = 123456789,
	        .kill_failures = 2,
	        .unfences = 3,
	        .widenings = 7,
	};
	struct mg_metrics out = MG_METRICS_INIT;
	static const char *const want[] = {
	        "# TYPE memguardd_build_info gauge",
	        "memguardd_build_info{version=\"" MEMGUARD_VERSION "\"} 1",
	        "memguardd_start_time_seconds 1795000000",
	        "# TYPE memguardd_guarded_cgroups gauge",
	        "memguardd_guarded_cgroups 4",
	        "memguardd_fenced_cgroups 1",
	        "memguardd_degraded 1",
	        "memguardd_mem_available_bytes 123456789",
	        "# TYPE memguardd_kills_total counter",
	        "memguardd_kills_total{reason=\"available_min\"} 1",
	        "memguardd_kills_total{reason=\"pressure\"} 0",
	        "memguardd_kills_total{reason=\"falling\"} 0",
	        "memguardd_fences_total{reason=\"pressure\"} 5",
	        "memguardd_dry_run_kills_total{reason=\"falling\"} 0",
	        "memguardd_kill_failures_total 2",
	        "memguardd_unfences_total 3",
	        "# TYPE memguardd_fence_widenings_total counter",
	        "memguardd_fence_widenings_total 7",
	        NULL,
	};

	m.kills[MG_SHORT_AVAILABLE_MIN] = 1;
	m.fences[MG_SHORT_PRESSURE] = 5;
	mg_daemon_metrics_format(&m, &out);
	assert_int_equal(out.error, 0);
	assert_lines(out.buf, want);
	/* No kill yet: no decision-to-kill time. */
	assert_null(strstr(out.buf, "memguardd_last_kill_seconds"));

	m.last_freed_usec = 12500;
	mg_daemon_metrics_format(&m, &out);
	static const char *const kill_time[] = {"# TYPE memguardd_last_kill_seconds gauge",
	                                        "memguardd_last_kill_seconds 0.0125", NULL};
	assert_lines(out.buf, kill_time);
	/* Formatting again starts over: every family once. */
	const char *first = strstr(out.buf, "# TYPE memguardd_kills_total");
	assert_non_null(first);
	assert_null(strstr(first + 1, "# TYPE memguardd_kills_total"));
	mg_metrics_done(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(short_reason), cmocka_unit_test(verdict_outcomes),
	        cmocka_unit_test(due),          cmocka_unit_test(counts_land_under_their_reason),
	        cmocka_unit_test(the_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
