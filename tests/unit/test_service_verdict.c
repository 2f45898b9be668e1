/* The service guard's pure judgement (daemon/service/verdict.h): a table of
 * memory shapes over time, judged as memguardd would after each look
 * (sawtooth, warm-up, steady near a limit, slow and fast leaks, a step,
 * stuck at memory.high or memory.max, and the early rule when the node is
 * short), then the samples' merging, the restart pacing and the look
 * interval. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "memguard/config.h"
#include "memguard/units.h"
#include "service/verdict.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define SEC 1000000ull
#define MIN (60 * SEC)
/* Looks start here on the monotonic clock: a node up for a while. */
#define T0 (100000 * SEC)

/* held over time, in MiB, as the sum of the shapes a case sets. */
struct wave {
	double base;             /* at t = 0 */
	double rate;             /* MiB/s: a leak */
	double saw, saw_period;  /* a sawtooth on top: +saw over each period, then back */
	double warm, warm_s;     /* a warm-up: +warm, reached linearly at warm_s, then level */
	double step, step_at;    /* a step up at step_at */
	double jump_to, jump_at; /* from jump_at on, held is jump_to (alternating with dip_to if set) */
	double dip_to;           /* every other look after jump_at */
	double noise;            /* +-noise, a fixed pseudo-random sequence */
	unsigned high_per_look;  /* memory.events high and max per look, */
	unsigned max_per_look;   /* from events_from on */
	double events_from;
};

static uint64_t held_at(const struct wave *w, double t, size_t i)
{
	double v = w->base + w->rate * t;

	if (w->warm_s > 0)
		v += w->warm * (t < w->warm_s ? t / w->warm_s : 1);
	if (w->saw_period > 0)
		v += w->saw * (t / w->saw_period - (double)(long)(t / w->saw_period));
	if (w->step_at > 0 && t >= w->step_at)
		v += w->step;
	if (w->jump_at > 0 && t >= w->jump_at)
		v = w->dip_to > 0 && i % 2 ? w->dip_to : w->jump_to;
	if (w->noise > 0)
		v += w->noise * ((double)((i * 2654435761u) % 1000) / 500.0 - 1.0);
	return (uint64_t)(v * MiB);
}

/* Looks every `every` seconds for `seconds`, kept as memguardd keeps them. */
static size_t look(const struct mg_service_config *c, const struct wave *w, double seconds, double every,
                   struct mg_service_sample *s)
{
	size_t n = 0;
	uint64_t high = 0, max = 0;

	for (size_t i = 0; (double)i * every <= seconds; i++) {
		double t = (double)i * every;
		if (t >= w->events_from) {
			high += w->high_per_look;
			max += w->max_per_look;
		}
		struct mg_service_sample one = {.usec = T0 + (uint64_t)(t * SEC),
		                                .held = held_at(w, t, i),
		                                .high_events = high,
		                                .max_events = max};
		mg_service_samples_add(s, &n, MG_SERVICE_SAMPLES, &one, mg_service_merge_usec(c));
	}
	return n;
}

/* A 16 GiB node with 8 GiB available, memguardd's defaults (5 %, 15 %). */
static struct mg_service_bounds roomy(void)
{
	return (struct mg_service_bounds){
	        .high = MG_SIZE_UNLIMITED,
	        .max = MG_SIZE_UNLIMITED,
	        .mem_available = 8 * GiB,
	        .available_min = 16 * GiB / 20,
	        .available_pressure = 16 * GiB * 15 / 100,
	};
}

/* A 4 GiB node short of memory: 400 MiB available, available_min 200 MiB,
 * available_pressure 600 MiB. */
static struct mg_service_bounds short_node(void)
{
	struct mg_service_bounds b = roomy();

	b.mem_available = 400 * MiB;
	b.available_min = 200 * MiB;
	b.available_pressure = 600 * MiB;
	return b;
}

struct verdict_case {
	const char *name;
	struct wave w;
	double seconds, every; /* looks */
	uint64_t window;       /* 0: the default, 10 min */
	uint64_t high, max;    /* its own limits in MiB, 0: none */
	bool node_short;
	uint64_t avail; /* MemAvailable in MiB, 0: the bounds' own */
	enum mg_service_state want;
	bool early;
	enum mg_service_limit limit; /* checked for LEAKING and STUCK */
};

static const struct verdict_case cases[] = {
        /* Normal life. */
        {"steady", {.base = 300, .noise = 0.4}, .seconds = 1200, .every = 9.4, .want = MG_SERVICE_STEADY},
        {"steady near its memory.high, throttled now and then by its page cache",
         {.base = 920, .noise = 0.4, .high_per_look = 1},
         .seconds = 1200,
         .every = 9.4,
         .high = 1024,
         .want = MG_SERVICE_STEADY},
        {"page cache alone at its memory.high",
         {.base = 400, .high_per_look = 3},
         .seconds = 1200,
         .every = 9.4,
         .high = 1024,
         .want = MG_SERVICE_STEADY},
        {"sawtooth: a collected heap, 2-minute cycle",
         {.base = 200, .saw = 240, .saw_period = 120},
         .seconds = 1200,
         .every = 9.4,
         .want = MG_SERVICE_STEADY},
        {"sawtooth near its memory.max",
         {.base = 600, .saw = 350, .saw_period = 120},
         .seconds = 1200,
         .every = 9.4,
         .max = 1024,
         .want = MG_SERVICE_STEADY},
        {"sawtooth while the node is short",
         {.base = 200, .saw = 240, .saw_period = 120},
         .seconds = 1200,
         .every = 9.4,
         .node_short = true,
         .want = MG_SERVICE_STEADY},
        {"sawtooth, its collection due as the node runs short",
         {.base = 200, .saw = 240, .saw_period = 120},
         .seconds = 1190,
         .every = 9.4,
         .node_short = true,
         .avail = 250,
         .want = MG_SERVICE_STEADY},
        {"warm-up that levels off",
         {.base = 100, .warm = 500, .warm_s = 300, .noise = 0.3},
         .seconds = 1200,
         .every = 9.4,
         .want = MG_SERVICE_STEADY},
        {"warm-up that levels off near its memory.max",
         {.base = 100, .warm = 800, .warm_s = 300},
         .seconds = 1200,
         .every = 9.4,
         .max = 1024,
         .want = MG_SERVICE_STEADY},
        {"warm-up, still warming",
         {.base = 100, .warm = 500, .warm_s = 300},
         .seconds = 240,
         .every = 9.4,
         .want = MG_SERVICE_WARMING},
        {"step change",
         {.base = 300, .step = 200, .step_at = 720},
         .seconds = 1200,
         .every = 9.4,
         .want = MG_SERVICE_STEADY},
        {"step change inside the window",
         {.base = 300, .step = 200, .step_at = 1000},
         .seconds = 1200,
         .every = 9.4,
         .want = MG_SERVICE_STEADY},
        {"step change into its memory.high, throttled less than stuck_time",
         {.base = 600, .jump_to = 1022, .jump_at = 1160, .high_per_look = 4, .events_from = 1160},
         .seconds = 1200,
         .every = 9.4,
         .high = 1024,
         .want = MG_SERVICE_STEADY},
        /* Slow leaks: seen from 4 MiB per window (1 MiB per part). */
        {"slow leak far from any limit",
         {.base = 2000, .rate = 60.0 / 3600},
         .seconds = 1200,
         .every = 9.4,
         .want = MG_SERVICE_STEADY},
        {"slow leak within the horizon of its memory.max",
         {.base = 900, .rate = 60.0 / 3600},
         .seconds = 1200,
         .every = 9.4,
         .max = 1024,
         .want = MG_SERVICE_LEAKING,
         .limit = MG_SERVICE_LIMIT_MAX},
        {"slow leak past the horizon of its memory.max",
         {.base = 850, .rate = 60.0 / 3600},
         .seconds = 1200,
         .every = 9.4,
         .max = 1024,
         .want = MG_SERVICE_STEADY},
        {"leak too slow for the window: 20 MiB/h",
         {.base = 990, .rate = 20.0 / 3600},
         .seconds = 1200,
         .every = 9.4,
         .max = 1024,
         .want = MG_SERVICE_STEADY},
        {"slow leak under a collected heap's sawtooth",
         {.base = 300, .rate = 600.0 / 3600, .saw = 60, .saw_period = 90},
         .seconds = 1200,
         .every = 9.4,
         .high = 1024,
         .want = MG_SERVICE_LEAKING,
         .limit = MG_SERVICE_LIMIT_HIGH},
        /* Fast leaks. */
        {"fast leak, one-minute window",
         {.base = 100, .rate = 4},
         .seconds = 120,
         .every = 1,
         .window = MIN,
         .want = MG_SERVICE_LEAKING,
         .limit = MG_SERVICE_LIMIT_NODE},
        {"fast leak, not a window yet",
         {.base = 100, .rate = 8},
         .seconds = 40,
         .every = 9.4,
         .want = MG_SERVICE_WARMING},
        {"fast leak as the node runs short: early",
         {.base = 100, .rate = 8},
         .seconds = 40,
         .every = 9.4,
         .node_short = true,
         .want = MG_SERVICE_LEAKING,
         .early = true,
         .limit = MG_SERVICE_LIMIT_NODE},
        {"fast leak after a long steady time, the node short: early",
         {.base = 300},
         .node_short = true,
         .want = MG_SERVICE_LEAKING,
         .early = true,
         .limit = MG_SERVICE_LIMIT_NODE},
        {"the window must span the cycle: a 10-minute sawtooth in a 2-minute window",
         {.base = 300, .saw = 600, .saw_period = 600},
         .seconds = 1150,
         .every = 2,
         .window = 2 * MIN,
         .max = 1024,
         .want = MG_SERVICE_LEAKING,
         .limit = MG_SERVICE_LIMIT_MAX},
        /* Stuck. */
        {"stuck at its memory.high",
         {.base = 600, .jump_to = 1022, .jump_at = 1000, .high_per_look = 4, .events_from = 1000},
         .seconds = 1200,
         .every = 9.4,
         .high = 1024,
         .want = MG_SERVICE_STUCK,
         .limit = MG_SERVICE_LIMIT_HIGH},
        {"at its memory.high, never throttled",
         {.base = 600, .jump_to = 1022, .jump_at = 1000},
         .seconds = 1200,
         .every = 9.4,
         .high = 1024,
         .want = MG_SERVICE_STEADY},
        {"at its memory.high, reclaim gives back",
         {.base = 600,
          .jump_to = 1022,
          .dip_to = 900,
          .jump_at = 1000,
          .high_per_look = 4,
          .events_from = 1000},
         .seconds = 1200,
         .every = 9.4,
         .high = 1024,
         .want = MG_SERVICE_STEADY},
        {"stuck at its memory.max, its allocations failing",
         {.base = 600, .jump_to = 1020, .jump_at = 1000, .max_per_look = 2, .events_from = 1000},
         .seconds = 1200,
         .every = 9.4,
         .max = 1024,
         .want = MG_SERVICE_STUCK,
         .limit = MG_SERVICE_LIMIT_MAX},
};

/* The case "fast leak after a long steady time" is built by hand: 20
 * minutes at 300 MiB, then 8 MiB/s for 40 s. */
static size_t steady_then_fast(const struct mg_service_config *c, struct mg_service_sample *s)
{
	size_t n = 0;

	for (size_t i = 0; (double)i * 9.4 <= 1240; i++) {
		double t = (double)i * 9.4;
		double mib = t < 1200 ? 300 : 300 + 8 * (t - 1200);
		struct mg_service_sample one = {.usec = T0 + (uint64_t)(t * SEC),
		                                .held = (uint64_t)(mib * MiB)};
		mg_service_samples_add(s, &n, MG_SERVICE_SAMPLES, &one, mg_service_merge_usec(c));
	}
	return n;
}

static void table(void **state)
{
	static struct mg_service_sample s[MG_SERVICE_SAMPLES];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct verdict_case *k = &cases[i];
		struct mg_service_config c;
		struct mg_service_bounds b = k->node_short ? short_node() : roomy();
		struct mg_service_verdict v;
		char t[MG_SERVICE_TREND_STRLEN], l[MG_SERVICE_DURATION_STRLEN];

		mg_service_config_defaults(&c, "case.service");
		if (k->window)
			c.window_usec = k->window;
		if (k->high)
			b.high = k->high * MiB;
		if (k->max)
			b.max = k->max * MiB;
		if (k->avail)
			b.mem_available = k->avail * MiB;
		size_t n =
		        k->seconds > 0 ? look(&c, &k->w, k->seconds, k->every, s) : steady_then_fast(&c, s);
		mg_service_judge(&c, s, n, &b, &v);
		print_message("%-72s %-10s %s, left %s: %s\n", k->name, mg_service_state_name(v.state),
		              mg_service_format_trend(v.trend_bps, t),
		              mg_service_format_duration(v.left_usec, l), v.why);
		if (v.state != k->want)
			fail_msg("%s: %s, not %s", k->name, mg_service_state_name(v.state),
			         mg_service_state_name(k->want));
		assert_int_equal(v.early, k->early);
		assert_true(v.why[0] != '\0');
		if (k->want == MG_SERVICE_LEAKING || k->want == MG_SERVICE_STUCK)
			assert_int_equal(v.limit_kind, k->limit);
		if (k->want == MG_SERVICE_STUCK)
			assert_true(v.left_usec == 0 && v.stuck_events > 0);
		if (k->want == MG_SERVICE_LEAKING)
			assert_true(v.trend_bps > 0 && v.left_usec <= c.horizon_usec);
	}
}

/* The numbers behind a leak: floor, trend, limit and time left. */
static void leak_numbers(void **state)
{
	static struct mg_service_sample s[MG_SERVICE_SAMPLES];
	struct mg_service_config c;
	struct mg_service_bounds b = roomy();
	struct mg_service_verdict v;
	/* 2 MiB/s for 20 minutes from 100 MiB, looked at every 10 s. */
	struct wave w = {.base = 100, .rate = 2};

	mg_service_config_defaults(&c, "leak.service");
	size_t n = look(&c, &w, 1200, 10, s);
	mg_service_judge(&c, s, n, &b, &v);
	assert_int_equal(v.state, MG_SERVICE_LEAKING);
	/* The last part's floor is its first look, 150 s before the end. */
	assert_true(v.floor == (100 + 2 * 1050) * MiB);
	assert_true(v.trend_bps > 1.98 * MiB && v.trend_bps < 2.02 * MiB);
	assert_true(v.span_usec == c.window_usec);
	assert_int_equal(v.limit_kind, MG_SERVICE_LIMIT_NODE);
	/* The node lets it hold what it holds now plus MemAvailable above available_min. */
	assert_true(v.limit == v.held + b.mem_available - b.available_min);
	double left = (double)(v.limit - v.floor) / v.trend_bps;
	assert_true((double)v.left_usec / SEC > left - 1 && (double)v.left_usec / SEC < left + 1);
	assert_non_null(strstr(v.why, "within the horizon (2.0h)"));

	/* No looks: nothing to say but that. */
	mg_service_judge(&c, s, 0, &b, &v);
	assert_int_equal(v.state, MG_SERVICE_WARMING);
	assert_true(v.left_usec == UINT64_MAX);
}

/* A 30 s cycle in a one-minute window (the VM test's sawtooth): the
 * quarters' floors alternate, and the trend --status shows is none. */
static void sawtooth_shows_no_trend(void **state)
{
	static struct mg_service_sample s[MG_SERVICE_SAMPLES];
	struct mg_service_config c;
	struct mg_service_bounds b = roomy();
	struct mg_service_verdict v;
	struct wave w = {.base = 40, .saw = 160, .saw_period = 30};

	mg_service_config_defaults(&c, "sawtooth.service");
	c.window_usec = MIN;
	for (double end = 61; end < 240; end += 7) {
		size_t n = look(&c, &w, end, 1, s);
		mg_service_judge(&c, s, n, &b, &v);
		assert_int_equal(v.state, MG_SERVICE_STEADY);
		if (v.trend_bps > 1024 || v.trend_bps < -1024)
			fail_msg("after %.0f s: a trend of %.0f B/s", end, v.trend_bps);
		assert_true(v.left_usec == UINT64_MAX);
	}
}

static void node_limit(void **state)
{
	struct mg_service_bounds b = roomy();

	assert_true(mg_service_node_limit(GiB, &b) == GiB + b.mem_available - b.available_min);
	b.mem_available = b.available_min / 2;
	assert_true(mg_service_node_limit(GiB, &b) == GiB);
	b.mem_available = UINT64_MAX;
	b.available_min = 0;
	assert_true(mg_service_node_limit(GiB, &b) == UINT64_MAX);
}

static void samples_merge_and_roll(void **state)
{
	struct mg_service_sample s[4];
	size_t n = 0;

	struct mg_service_sample a = {.usec = 10 * SEC, .held = 100, .high_events = 1};
	mg_service_samples_add(s, &n, 4, &a, 2 * SEC);
	/* Within 2 s of the last one's start: merged, the least held, the latest events. */
	struct mg_service_sample b = {.usec = 11 * SEC, .held = 90, .high_events = 3};
	mg_service_samples_add(s, &n, 4, &b, 2 * SEC);
	struct mg_service_sample c = {.usec = 11900000, .held = 120, .high_events = 4};
	mg_service_samples_add(s, &n, 4, &c, 2 * SEC);
	assert_int_equal(n, 1);
	assert_true(s[0].usec == 10 * SEC && s[0].held == 90 && s[0].high_events == 4);
	/* 2 s after its start: a sample of its own. */
	for (uint64_t t = 12; t <= 18; t += 2) {
		struct mg_service_sample d = {.usec = t * SEC, .held = t};
		mg_service_samples_add(s, &n, 4, &d, 2 * SEC);
	}
	/* Full: the oldest went. */
	assert_int_equal(n, 4);
	assert_true(s[0].usec == 12 * SEC && s[3].usec == 18 * SEC);
	/* The clock went back: start over. */
	struct mg_service_sample e = {.usec = 5 * SEC, .held = 7};
	mg_service_samples_add(s, &n, 4, &e, 2 * SEC);
	assert_int_equal(n, 1);
	assert_true(s[0].held == 7);
}

static void restart_pacing(void **state)
{
	struct mg_service_config c;
	uint64_t now = 100 * 3600 * SEC, t[MG_SERVICE_RESTARTS_MAX];
	bool limited;

	mg_service_config_defaults(&c, "x.service"); /* 3 a day, 10 min back-off */
	assert_true(mg_service_restart_at(&c, t, 0, now, &limited) == now && !limited);
	/* One an hour ago: past its 10 min back-off. */
	t[0] = now - 3600 * SEC;
	assert_true(mg_service_restart_at(&c, t, 1, now, &limited) == now && !limited);
	/* One 5 min ago: 5 min more. */
	t[0] = now - 5 * MIN;
	assert_true(mg_service_restart_at(&c, t, 1, now, &limited) == now + 5 * MIN && !limited);
	/* Two within the day, the last 15 min ago: the back-off doubles to 20 min. */
	t[0] = now - 3 * 3600 * SEC;
	t[1] = now - 15 * MIN;
	assert_true(mg_service_restart_at(&c, t, 2, now, &limited) == now + 5 * MIN && !limited);
	/* Three within the day: the limit, until the oldest is a day old. */
	t[2] = now - 2 * 3600 * SEC;
	t[1] = now - 4 * 3600 * SEC;
	t[0] = now - 5 * 3600 * SEC;
	assert_true(mg_service_restart_at(&c, t, 3, now, &limited) == now + 19 * 3600 * SEC && limited);
	/* An older one beyond the day does not count. */
	uint64_t u[4] = {now - 30 * 3600 * SEC, now - 5 * 3600 * SEC, now - 4 * 3600 * SEC,
	                 now - 2 * 3600 * SEC};
	assert_true(mg_service_restart_at(&c, u, 4, now, &limited) == now + 19 * 3600 * SEC && limited);
	u[1] = now - 25 * 3600 * SEC;
	assert_true(mg_service_restart_at(&c, u, 4, now, &limited) == now && !limited);
	/* No back-off at all. */
	c.restart_backoff_usec = 0;
	t[0] = now - SEC;
	assert_true(mg_service_restart_at(&c, t, 1, now, &limited) == now && !limited);
	/* A limit of one. */
	c.restart_limit = 1;
	assert_true(mg_service_restart_at(&c, t, 1, now, &limited) == t[0] + c.restart_limit_interval_usec &&
	            limited);
}

static void look_interval(void **state)
{
	struct mg_service_config c;

	mg_service_config_defaults(&c, "x.service");
	assert_true(mg_service_interval_usec(&c) == 600 * SEC / 64);
	assert_true(mg_service_merge_usec(&c) == 600 * SEC / 128);
	c.window_usec = MIN;
	assert_true(mg_service_interval_usec(&c) == SEC);
	c.window_usec = 24 * 3600 * SEC;
	assert_true(mg_service_interval_usec(&c) == 10 * SEC); /* six per stuck_time */
	c.stuck_usec = 3600 * SEC;
	assert_true(mg_service_interval_usec(&c) == 30 * SEC);
	c.stuck_usec = 5 * SEC;
	assert_true(mg_service_interval_usec(&c) == SEC);
}

static void words(void **state)
{
	char d[MG_SERVICE_DURATION_STRLEN], t[MG_SERVICE_TREND_STRLEN];

	assert_string_equal(mg_service_format_duration(45 * SEC, d), "45s");
	assert_string_equal(mg_service_format_duration(12 * MIN, d), "12min");
	assert_string_equal(mg_service_format_duration(3 * 3600 * SEC, d), "3.0h");
	assert_string_equal(mg_service_format_duration(UINT64_MAX, d), "never");
	assert_string_equal(mg_service_format_duration(UINT64_MAX - 1, d), "213503982.3d");
	assert_string_equal(mg_service_format_trend((double)MiB / 3600 * 12, t), "+12.0MiB/h");
	assert_string_equal(mg_service_format_trend(-(double)MiB / 3600 * 0.4, t), "-0.4MiB/h");
	assert_string_equal(mg_service_state_name(MG_SERVICE_STUCK), "stuck");
	assert_string_equal(mg_service_limit_name(MG_SERVICE_LIMIT_NODE), "the node");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(table),
	        cmocka_unit_test(leak_numbers),
	        cmocka_unit_test(sawtooth_shows_no_trend),
	        cmocka_unit_test(node_limit),
	        cmocka_unit_test(samples_merge_and_roll),
	        cmocka_unit_test(restart_pacing),
	        cmocka_unit_test(look_interval),
	        cmocka_unit_test(words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
