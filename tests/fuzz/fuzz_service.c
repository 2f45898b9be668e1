/* libFuzzer target: memguardd's [service UNIT] sections
 * (mg_config_parse_string), then its verdict on a leaking service
 * (mg_service_judge) over the samples the bytes after the first NUL make,
 * under the first section's settings. */
#include <errno.h>

#include "fuzz.h"
#include "memguard/config.h"
#include "memguard/units.h"
#include "service/verdict.h"

#define SEC 1000000ull

static const char unit_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_.\\@";

static void check_service(const struct mg_service_config *s, const char *text)
{
	size_t len = strnlen(s->unit, sizeof(s->unit));

	check(len < sizeof(s->unit), "unit terminated", text);
	check(len > strlen(".service") && strcmp(s->unit + len - 8, ".service") == 0, "unit is a .service",
	      text);
	check(strspn(s->unit, unit_chars) == len, "unit of a unit name's characters", text);
	check(s->unit[0] != '@' && s->unit[0] != '.' && s->unit[len - 9] != '@', "unit no template", text);
	check(s->action == MG_SERVICE_RESTART || s->action == MG_SERVICE_LOG, "action restart or log", text);
	check(s->window_usec >= 16 * SEC && s->window_usec <= 24 * 3600 * SEC, "window within bounds", text);
	check(s->horizon_usec >= 60 * SEC && s->horizon_usec <= 720 * 3600 * SEC, "horizon within bounds",
	      text);
	check(s->stuck_usec >= 5 * SEC && s->stuck_usec <= 3600 * SEC, "stuck_time within bounds", text);
	check(s->restart_limit >= 1 && s->restart_limit <= MG_SERVICE_RESTARTS_MAX,
	      "restart_limit within bounds", text);
	check(s->restart_limit_interval_usec >= 60 * SEC &&
	              s->restart_limit_interval_usec <= 720 * 3600 * SEC,
	      "restart_limit_interval within bounds", text);
	check(s->restart_backoff_usec <= 24 * 3600 * SEC, "restart_backoff within bounds", text);
}

static uint64_t take(const uint8_t **p, const uint8_t *end, size_t bytes)
{
	uint64_t v = 0;

	for (size_t i = 0; i < bytes && *p < end; i++)
		v = v << 8 | *(*p)++;
	return v;
}

/* The samples: per sample 2 bytes of time since the last (in 10 ms), 3 of
 * held (in 4 KiB pages), 1 each of high and max events added; first the
 * bounds: high, max, MemAvailable (4 bytes each, in 4 KiB pages; 0: none
 * for the first two), available_min and available_pressure (as percent of
 * 16 GiB). */
static void judge(const struct mg_service_config *c, const uint8_t *p, const uint8_t *end, const char *text)
{
	static struct mg_service_sample s[MG_SERVICE_SAMPLES];
	struct mg_service_bounds b;
	struct mg_service_verdict v;
	uint64_t usec = 1000 * SEC, high = 0, max = 0;
	size_t n = 0;

	b.high = take(&p, end, 4) * 4096 ?: MG_SIZE_UNLIMITED;
	b.max = take(&p, end, 4) * 4096 ?: MG_SIZE_UNLIMITED;
	b.mem_available = take(&p, end, 4) * 4096;
	b.available_min = (16ull << 30) / 100 * (take(&p, end, 1) % 50);
	b.available_pressure = b.available_min + (16ull << 30) / 100 * (take(&p, end, 1) % 50);
	while (p < end) {
		usec += take(&p, end, 2) * 10000;
		struct mg_service_sample one = {.usec = usec, .held = take(&p, end, 3) * 4096};
		high += take(&p, end, 1);
		max += take(&p, end, 1);
		one.high_events = high;
		one.max_events = max;
		mg_service_samples_add(s, &n, MG_SERVICE_SAMPLES, &one, mg_service_merge_usec(c));
		check(n >= 1 && n <= MG_SERVICE_SAMPLES, "samples within capacity", text);
	}
	mg_service_judge(c, s, n, &b, &v);
	check(v.state <= MG_SERVICE_STUCK && v.limit_kind <= MG_SERVICE_LIMIT_NODE, "state and limit valid",
	      text);
	check(memchr(v.why, '\0', sizeof(v.why)) && v.why[0], "why said and terminated", text);
	if (v.state == MG_SERVICE_STUCK)
		check(v.left_usec == 0 && v.stuck_events > 0, "stuck: no time left, events rose", text);
	if (v.state == MG_SERVICE_LEAKING)
		check(v.trend_bps > 0 &&
		              (v.early ? v.left_usec <= v.span_usec : v.left_usec <= c->horizon_usec),
		      "leaking: rising, and the limit within the horizon (early: within its span)", text);
	check(!v.early || v.state == MG_SERVICE_LEAKING, "early only for a leak", text);
	/* Stuck, the limit it is stuck at; else the least of its own and the node's. */
	if (v.state != MG_SERVICE_STUCK)
		check(v.limit <= b.high && v.limit <= b.max && v.limit <= mg_service_node_limit(v.held, &b),
		      "the limit is the least", text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct mg_config cfg;
	struct mg_service_config first;
	char err[256];
	int r;

	if (!text)
		return 0;
	mg_config_defaults(&cfg);
	r = mg_config_parse_string(&cfg, text, "fuzz.conf", err, sizeof(err));
	check(r == 0 || r == -EINVAL, "mg_config_parse_string returns 0 or -EINVAL", text);
	check(cfg.n_services <= MG_SERVICE_MAX, "at most MG_SERVICE_MAX services", text);
	check(memchr(cfg.service_error, '\0', sizeof(cfg.service_error)) != NULL, "service_error terminated",
	      text);
	check(!cfg.service_error[0] || strncmp(cfg.service_error, "fuzz.conf:", 10) == 0,
	      "service_error starts with origin:", text);
	if (!strstr(text, "service"))
		check(cfg.n_services == 0 && !cfg.service_error[0], "no [service] section, no service", text);
	for (size_t i = 0; i < cfg.n_services; i++) {
		check_service(&cfg.services[i], text);
		for (size_t j = 0; j < i; j++)
			check(strcmp(cfg.services[i].unit, cfg.services[j].unit) != 0, "each unit once",
			      text);
	}
	if (cfg.n_services)
		first = cfg.services[0];
	else
		mg_service_config_defaults(&first, "fuzz.service");
	size_t text_len = strlen(text);
	if (text_len < size)
		judge(&first, data + text_len + 1, data + size, text);
	free(text);
	return 0;
}
