/* The service guard's judgement: leaking, stuck or living, when to restart,
 * how often to look (verdict.h). */
#include "service/verdict.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "memguard/units.h"

uint64_t mg_service_node_limit(uint64_t held, const struct mg_service_bounds *b)
{
	uint64_t room = b->mem_available > b->available_min ? b->mem_available - b->available_min : 0;

	return held > UINT64_MAX - room ? UINT64_MAX : held + room;
}

/* The least of its own limits and the node's, and which it is (its own
 * first on a tie: that is the one it meets). */
static uint64_t limit_of(uint64_t held, const struct mg_service_bounds *b, enum mg_service_limit *ret_kind)
{
	uint64_t node = mg_service_node_limit(held, b), limit = b->high;

	*ret_kind = MG_SERVICE_LIMIT_HIGH;
	if (b->max < limit) {
		limit = b->max;
		*ret_kind = MG_SERVICE_LIMIT_MAX;
	}
	if (node < limit) {
		limit = node;
		*ret_kind = MG_SERVICE_LIMIT_NODE;
	}
	return limit;
}

/* The floors of the MG_SERVICE_PARTS parts of the span that ends at the
 * latest sample: false when the samples do not reach back to within half a
 * part of its start, or a part holds none. */
static bool part_floors(const struct mg_service_sample *s, size_t n, uint64_t span,
                        uint64_t floors[MG_SERVICE_PARTS])
{
	uint64_t end = s[n - 1].usec, part = span / MG_SERVICE_PARTS, start;

	if (part == 0 || span > end)
		return false;
	start = end - span;
	if (s[0].usec > start + part / 2)
		return false;
	for (size_t k = 0; k < MG_SERVICE_PARTS; k++)
		floors[k] = UINT64_MAX;
	for (size_t i = n; i-- > 0 && s[i].usec >= start;) {
		uint64_t k = (s[i].usec - start) / part;
		if (k >= MG_SERVICE_PARTS)
			k = MG_SERVICE_PARTS - 1;
		if (s[i].held < floors[k])
			floors[k] = s[i].held;
	}
	for (size_t k = 0; k < MG_SERVICE_PARTS; k++)
		if (floors[k] == UINT64_MAX)
			return false;
	return true;
}

/* Whether each part's floor is above the one before by a step. */
static bool rising(const uint64_t floors[MG_SERVICE_PARTS])
{
	for (size_t k = 1; k < MG_SERVICE_PARTS; k++) {
		uint64_t step = floors[k - 1] / MG_SERVICE_STEP_DEN;
		if (step < MG_SERVICE_STEP_MIN)
			step = MG_SERVICE_STEP_MIN;
		if (floors[k] < floors[k - 1] || floors[k] - floors[k - 1] < step)
			return false;
	}
	return true;
}

/* The floor's rise per second over span: from the least of its first half
 * to the least of its second, half a span apart. For a leak that is its
 * rate; a sawtooth whose window holds its cycle has a trough in each half,
 * and shows none (the quarters' floors of a 30 s cycle in a 60 s window
 * alternate, and their first and last could make up any trend). */
static double trend_of(const uint64_t floors[MG_SERVICE_PARTS], uint64_t span)
{
	const size_t half = MG_SERVICE_PARTS / 2;
	uint64_t first = floors[0], second = floors[half];
	double apart = (double)(span / MG_SERVICE_PARTS) * (double)half / 1e6;

	for (size_t k = 1; k < half; k++)
		first = floors[k] < first ? floors[k] : first;
	for (size_t k = half + 1; k < MG_SERVICE_PARTS; k++)
		second = floors[k] < second ? floors[k] : second;
	return ((double)second - (double)first) / apart;
}

/* Until floor reaches limit at trend: 0 when it is there, UINT64_MAX when it never does. */
static uint64_t left_of(uint64_t floor, uint64_t limit, double trend)
{
	if (floor >= limit)
		return 0;
	if (trend <= 0)
		return UINT64_MAX;
	double usec = (double)(limit - floor) / trend * 1e6;
	return usec >= (double)(UINT64_MAX - 1) ? UINT64_MAX - 1 : (uint64_t)usec;
}

/* Whether held stayed at limit (less its slack) for the last stuck_usec and
 * its events (high or max) rose meanwhile, by *ret_events. */
static bool stuck_at(const struct mg_service_sample *s, size_t n, uint64_t stuck_usec, uint64_t limit,
                     bool high, uint64_t *ret_events)
{
	uint64_t end = s[n - 1].usec, line = limit - limit / MG_SERVICE_LIMIT_SLACK;
	size_t i = n - 1;

	if (limit == MG_SIZE_UNLIMITED || n < 2)
		return false;
	for (;; i--) {
		if (s[i].held < line)
			return false;
		if (end - s[i].usec >= stuck_usec)
			break;
		if (i == 0)
			return false;
	}
	uint64_t from = high ? s[i].high_events : s[i].max_events;
	uint64_t to = high ? s[n - 1].high_events : s[n - 1].max_events;
	*ret_events = to > from ? to - from : 0;
	return *ret_events > 0;
}

/* "the node's available_min (1.2GiB more)", or "memory.high (512MiB)". */
static const char *limit_words(const struct mg_service_verdict *v, char *buf, size_t size)
{
	char a[MG_SIZE_STRLEN];

	if (v->limit_kind == MG_SERVICE_LIMIT_NODE)
		snprintf(buf, size, "available_min on the node (%s more)",
		         mg_size_format(v->limit > v->held ? v->limit - v->held : 0, a));
	else
		snprintf(buf, size, "its %s (%s)", mg_service_limit_name(v->limit_kind),
		         mg_size_format(v->limit, a));
	return buf;
}

/* The trend from floors over span into v. */
static void set_trend(struct mg_service_verdict *v, const uint64_t floors[MG_SERVICE_PARTS], uint64_t span)
{
	v->floor = floors[MG_SERVICE_PARTS - 1];
	v->trend_bps = trend_of(floors, span);
	v->span_usec = span;
	v->left_usec = left_of(v->floor, v->limit, v->trend_bps);
}

/* "its floor (the least anon and shmem) rose in each quarter of the last
 * 10min, from 100MiB to 130MiB (+240.0MiB/h)" into buf. */
static void rose_words(const struct mg_service_verdict *v, const uint64_t floors[MG_SERVICE_PARTS], char *buf,
                       size_t size)
{
	char d[MG_SERVICE_DURATION_STRLEN], a[MG_SIZE_STRLEN], b[MG_SIZE_STRLEN], t[MG_SERVICE_TREND_STRLEN];

	snprintf(buf, size,
	         "its floor (the least anon and shmem) rose in each quarter of the last %s, from %s to %s "
	         "(%s)",
	         mg_service_format_duration(v->span_usec, d), mg_size_format(floors[0], a),
	         mg_size_format(floors[MG_SERVICE_PARTS - 1], b), mg_service_format_trend(v->trend_bps, t));
}

/* Whether held fell, within the last span, by more than MG_SERVICE_DROP_DEN
 * of what it had held before (at least 4 steps): a collection, a cache
 * emptied, a restart. */
static bool dropped(const struct mg_service_sample *s, size_t n, uint64_t span)
{
	uint64_t end = s[n - 1].usec, most = 0;

	for (size_t i = 0; i < n; i++) {
		if (end - s[i].usec > span)
			continue;
		uint64_t slack = most / MG_SERVICE_DROP_DEN;
		if (slack < 4 * MG_SERVICE_STEP_MIN)
			slack = 4 * MG_SERVICE_STEP_MIN;
		if (s[i].held + slack < most)
			return true;
		if (s[i].held > most)
			most = s[i].held;
	}
	return false;
}

/* The early rule: the node short, nothing dropped within the window, and
 * over the longest span of window / 2^k whose floors rise, the node's limit
 * reached within that span. */
static bool early_leak(const struct mg_service_config *c, const struct mg_service_sample *s, size_t n,
                       const struct mg_service_bounds *b, struct mg_service_verdict *ret)
{
	uint64_t floors[MG_SERVICE_PARTS];

	if (ret->limit_kind != MG_SERVICE_LIMIT_NODE || b->mem_available >= b->available_pressure ||
	    dropped(s, n, c->window_usec))
		return false;
	for (uint64_t span = c->window_usec; span >= MG_SERVICE_PARTS * MG_SERVICE_INTERVAL_MIN_USEC;
	     span /= 2) {
		if (!part_floors(s, n, span, floors) || !rising(floors) ||
		    left_of(floors[MG_SERVICE_PARTS - 1], ret->limit, trend_of(floors, span)) > span)
			continue;
		char rose[200], l[MG_SERVICE_DURATION_STRLEN], w[MG_SERVICE_DURATION_STRLEN];
		char a[MG_SIZE_STRLEN], p[MG_SIZE_STRLEN];
		set_trend(ret, floors, span);
		rose_words(ret, floors, rose, sizeof(rose));
		snprintf(ret->why, sizeof(ret->why),
		         "%s while MemAvailable %s is below available_pressure (%s): at that rate the node "
		         "reaches "
		         "available_min in %s, sooner than a whole window (%s) could show it",
		         rose, mg_size_format(b->mem_available, a), mg_size_format(b->available_pressure, p),
		         mg_service_format_duration(ret->left_usec, l),
		         mg_service_format_duration(c->window_usec, w));
		ret->state = MG_SERVICE_LEAKING;
		ret->early = true;
		return true;
	}
	return false;
}

void mg_service_judge(const struct mg_service_config *c, const struct mg_service_sample *s, size_t n,
                      const struct mg_service_bounds *b, struct mg_service_verdict *ret)
{
	uint64_t floors[MG_SERVICE_PARTS];
	char lim[96], rose[256], d[MG_SERVICE_DURATION_STRLEN], h[MG_SERVICE_DURATION_STRLEN];
	char a[MG_SIZE_STRLEN], m[MG_SIZE_STRLEN];

	*ret = (struct mg_service_verdict){.state = MG_SERVICE_WARMING, .left_usec = UINT64_MAX};
	ret->held = n ? s[n - 1].held : 0;
	ret->limit = limit_of(ret->held, b, &ret->limit_kind);
	if (n == 0) {
		snprintf(ret->why, sizeof(ret->why), "not looked at yet");
		return;
	}
	ret->floor = ret->held;
	for (size_t i = 0; i < n; i++)
		if (s[i].held < ret->floor)
			ret->floor = s[i].held;

	/* Stuck: at its memory.high, then at its memory.max. */
	for (int high = 1; high >= 0; high--) {
		uint64_t limit = high ? b->high : b->max;
		if (!stuck_at(s, n, c->stuck_usec, limit, high, &ret->stuck_events))
			continue;
		ret->state = MG_SERVICE_STUCK;
		ret->limit = limit;
		ret->limit_kind = high ? MG_SERVICE_LIMIT_HIGH : MG_SERVICE_LIMIT_MAX;
		ret->left_usec = 0;
		snprintf(ret->why, sizeof(ret->why),
		         "its anon and shmem (%s) have been at its %s (%s) for %s, which %s %" PRIu64
		         " times meanwhile: reclaim does not bring them down",
		         mg_size_format(ret->held, a), mg_service_limit_name(ret->limit_kind),
		         mg_size_format(limit, m), mg_service_format_duration(c->stuck_usec, d),
		         high ? "throttled it" : "it met", ret->stuck_events);
		return;
	}

	if (part_floors(s, n, c->window_usec, floors)) {
		set_trend(ret, floors, c->window_usec);
		ret->state = MG_SERVICE_STEADY;
		if (rising(floors) && ret->left_usec <= c->horizon_usec) {
			ret->state = MG_SERVICE_LEAKING;
			rose_words(ret, floors, rose, sizeof(rose));
			snprintf(ret->why, sizeof(ret->why),
			         "%s: at that rate it reaches %s in %s, within the horizon (%s)", rose,
			         limit_words(ret, lim, sizeof(lim)),
			         mg_service_format_duration(ret->left_usec, d),
			         mg_service_format_duration(c->horizon_usec, h));
			return;
		}
	} else if (n >= MG_SERVICE_PARTS && part_floors(s, n, s[n - 1].usec - s[0].usec, floors)) {
		/* Not a window yet: the trend over what there is, for --status. */
		set_trend(ret, floors, s[n - 1].usec - s[0].usec);
	}
	if (early_leak(c, s, n, b, ret))
		return;
	if (ret->state == MG_SERVICE_WARMING)
		snprintf(ret->why, sizeof(ret->why), "%s of looks so far, of a %s window",
		         mg_service_format_duration(s[n - 1].usec - s[0].usec, d),
		         mg_service_format_duration(c->window_usec, h));
	else if (rising(floors))
		snprintf(ret->why, sizeof(ret->why),
		         "its floor rises (%s over %s), but reaches %s only in %s, past the horizon (%s)",
		         mg_service_format_trend(ret->trend_bps, rose),
		         mg_service_format_duration(c->window_usec, d), limit_words(ret, lim, sizeof(lim)),
		         mg_service_format_duration(ret->left_usec, a),
		         mg_service_format_duration(c->horizon_usec, h));
	else
		snprintf(ret->why, sizeof(ret->why), "its floor did not rise in each quarter of the last %s",
		         mg_service_format_duration(c->window_usec, d));
}

uint64_t mg_service_interval_usec(const struct mg_service_config *c)
{
	uint64_t usec = c->window_usec / MG_SERVICE_LOOKS_PER_WINDOW;

	if (c->stuck_usec / 6 < usec)
		usec = c->stuck_usec / 6;
	if (usec < MG_SERVICE_INTERVAL_MIN_USEC)
		return MG_SERVICE_INTERVAL_MIN_USEC;
	return usec > MG_SERVICE_INTERVAL_MAX_USEC ? MG_SERVICE_INTERVAL_MAX_USEC : usec;
}

uint64_t mg_service_merge_usec(const struct mg_service_config *c)
{
	return c->window_usec / (MG_SERVICE_SAMPLES / 2);
}

void mg_service_samples_add(struct mg_service_sample *s, size_t *n, size_t cap,
                            const struct mg_service_sample *look, uint64_t merge_usec)
{
	if (*n && look->usec < s[*n - 1].usec)
		*n = 0;
	if (*n && look->usec - s[*n - 1].usec < merge_usec) {
		struct mg_service_sample *last = &s[*n - 1];
		if (look->held < last->held)
			last->held = look->held;
		last->high_events = look->high_events;
		last->max_events = look->max_events;
		return;
	}
	if (*n == cap) {
		memmove(s, s + 1, (cap - 1) * sizeof(*s));
		(*n)--;
	}
	s[(*n)++] = *look;
}

uint64_t mg_service_restart_at(const struct mg_service_config *c, const uint64_t *times, size_t n,
                               uint64_t now_usec, bool *ret_limited)
{
	size_t recent = 0;

	*ret_limited = false;
	for (size_t i = 0; i < n; i++)
		recent += now_usec - times[i] < c->restart_limit_interval_usec;
	if (recent == 0)
		return now_usec;
	if (recent >= c->restart_limit) {
		*ret_limited = true;
		return times[n - c->restart_limit] + c->restart_limit_interval_usec;
	}
	uint64_t backoff = c->restart_backoff_usec;
	for (size_t i = 1; i < recent && backoff < c->restart_limit_interval_usec; i++)
		backoff *= 2;
	uint64_t at = times[n - 1] + backoff;
	return at > now_usec ? at : now_usec;
}

const char *mg_service_state_name(enum mg_service_state s)
{
	switch (s) {
	case MG_SERVICE_WARMING:
		return "warming up";
	case MG_SERVICE_STEADY:
		return "steady";
	case MG_SERVICE_LEAKING:
		return "leaking";
	case MG_SERVICE_STUCK:
		return "stuck";
	}
	return "invalid";
}

const char *mg_service_limit_name(enum mg_service_limit l)
{
	switch (l) {
	case MG_SERVICE_LIMIT_HIGH:
		return "memory.high";
	case MG_SERVICE_LIMIT_MAX:
		return "memory.max";
	case MG_SERVICE_LIMIT_NODE:
		return "the node";
	}
	return "invalid";
}

const char *mg_service_format_duration(uint64_t usec, char buf[MG_SERVICE_DURATION_STRLEN])
{
	uint64_t sec = usec / 1000000;

	if (usec == UINT64_MAX)
		snprintf(buf, MG_SERVICE_DURATION_STRLEN, "never");
	else if (sec < 120)
		snprintf(buf, MG_SERVICE_DURATION_STRLEN, "%" PRIu64 "s", sec);
	else if (sec < 120 * 60)
		snprintf(buf, MG_SERVICE_DURATION_STRLEN, "%" PRIu64 "min", sec / 60);
	else if (sec < 48 * 3600)
		snprintf(buf, MG_SERVICE_DURATION_STRLEN, "%.1fh", (double)sec / 3600);
	else
		snprintf(buf, MG_SERVICE_DURATION_STRLEN, "%.1fd", (double)sec / 86400);
	return buf;
}

const char *mg_service_format_trend(double bps, char buf[MG_SERVICE_TREND_STRLEN])
{
	snprintf(buf, MG_SERVICE_TREND_STRLEN, "%+.1fMiB/h", bps * 3600 / (1 << 20));
	return buf;
}
