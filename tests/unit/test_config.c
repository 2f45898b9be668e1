/* memguard.conf: defaults, every key, error messages with origin:line,
 * atomicity of a failed parse, and main file plus conf.d drop-ins. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "fake_tree.h"
#include "memguard/config.h"
#include "memguard/util.h"

/* Field by field, so that padding never matters. */
static void assert_config_equal(const struct mg_config *a, const struct mg_config *b)
{
	assert_string_equal(a->reserve, b->reserve);
	assert_int_equal(a->reserve_shmem, b->reserve_shmem);
	assert_true(a->min_share == b->min_share);
	assert_int_equal(a->high_percent, b->high_percent);
	assert_true(a->swap_max == b->swap_max);
	assert_int_equal(a->oom_group, b->oom_group);
	assert_int_equal(a->rlimit_as, b->rlimit_as);
	assert_int_equal(a->heap_flags, b->heap_flags);
	assert_true(a->kill_grace_usec == b->kill_grace_usec);
	assert_int_equal(a->mode, b->mode);
	assert_string_equal(a->parent, b->parent);
	assert_int_equal(a->log_level, b->log_level);
	assert_string_equal(a->guard, b->guard);
	assert_string_equal(a->place_beside, b->place_beside);
	assert_string_equal(a->protect, b->protect);
	assert_string_equal(a->available_min, b->available_min);
	assert_string_equal(a->available_pressure, b->available_pressure);
	assert_int_equal(a->pressure_full_avg10, b->pressure_full_avg10);
	assert_true(a->trigger_stall_usec == b->trigger_stall_usec);
	assert_true(a->trigger_window_usec == b->trigger_window_usec);
	assert_true(a->settle_usec == b->settle_usec);
	assert_true(a->poll_max_usec == b->poll_max_usec);
	assert_true(a->lead_usec == b->lead_usec);
	assert_int_equal(a->dry_run, b->dry_run);
	assert_int_equal(a->throttle, b->throttle);
	assert_int_equal(a->lead_kill, b->lead_kill);
	assert_int_equal(a->kill_outside, b->kill_outside);
	assert_string_equal(a->kill_log, b->kill_log);
	assert_string_equal(a->metrics_file, b->metrics_file);
	assert_true(a->metrics_interval_usec == b->metrics_interval_usec);
	assert_int_equal(a->n_services, b->n_services);
	for (size_t i = 0; i < a->n_services; i++) {
		const struct mg_service_config *x = &a->services[i], *y = &b->services[i];
		assert_string_equal(x->unit, y->unit);
		assert_int_equal(x->action, y->action);
		assert_true(x->window_usec == y->window_usec);
		assert_true(x->horizon_usec == y->horizon_usec);
		assert_true(x->stuck_usec == y->stuck_usec);
		assert_int_equal(x->restart_limit, y->restart_limit);
		assert_true(x->restart_limit_interval_usec == y->restart_limit_interval_usec);
		assert_true(x->restart_backoff_usec == y->restart_backoff_usec);
	}
	assert_string_equal(a->service_error, b->service_error);
}

static void defaults(void **state)
{
	struct mg_config c;

	memset(&c, 0xaa, sizeof(c));
	mg_config_defaults(&c);
	assert_string_equal(c.reserve, "5%");
	assert_true(c.reserve_shmem);
	assert_true(c.min_share == 32ull << 20);
	assert_int_equal(c.high_percent, 0);
	assert_true(c.swap_max == 0);
	assert_true(c.oom_group);
	assert_int_equal(c.rlimit_as, MG_RLIMIT_AS_AUTO);
	assert_true(c.heap_flags);
	assert_true(c.kill_grace_usec == 10000000);
	assert_int_equal(c.mode, MG_SHARE_AUTO);
	assert_string_equal(c.parent, "memguard");
	assert_int_equal(c.log_level, LOG_INFO);
	assert_string_equal(c.guard, "memguard/*/* memguard.slice/*/*");
	assert_string_equal(c.place_beside, "system.slice/*slurmstepd.scope/job_*/step_*/user/task_*");
	assert_string_equal(c.protect,
	                    "init.scope system.slice/ssh.service system.slice/systemd-journald.service "
	                    "system.slice/slurmd.service system.slice/pbs_mom.service "
	                    "system.slice/memguardd.service /usr/sbin/sshd /usr/lib/openssh/sshd-session "
	                    "/usr/sbin/slurmd /usr/sbin/slurmstepd /usr/sbin/pbs_mom /opt/pbs/sbin/pbs_mom "
	                    "/usr/sbin/memguardd");
	assert_string_equal(c.available_min, "5%");
	assert_string_equal(c.available_pressure, "15%");
	assert_int_equal(c.pressure_full_avg10, 20);
	assert_true(c.trigger_stall_usec == 100000);
	assert_true(c.trigger_window_usec == 1000000);
	assert_true(c.settle_usec == 2000000);
	assert_true(c.poll_max_usec == 30000000);
	assert_true(c.lead_usec == 250000);
	assert_false(c.dry_run);
	assert_true(c.throttle);
	assert_false(c.lead_kill);
	assert_true(c.kill_outside);
	assert_string_equal(c.kill_log, "/var/log/memguard/kills.jsonl");
	assert_string_equal(c.metrics_file, "");
	assert_true(c.metrics_interval_usec == 60000000);
}

/* Every key at its default value changes nothing. */
static void explicit_defaults_change_nothing(void **state)
{
	static const char text[] =
	        "# memguard.conf with every key at its default\n"
	        "[budget]\n"
	        "reserve = 5%\n"
	        "reserve_shmem = yes\n"
	        "min_share = 32M\n"
	        "\n"
	        "[task]\n"
	        "memory_high = off\n"
	        "swap_max = 0\n"
	        "oom_group = yes\n"
	        "rlimit_as = auto\n"
	        "heap_flags = yes\n"
	        "kill_grace = 10s\n"
	        "mode = auto\n"
	        "\n"
	        "[cgroup]\n"
	        "parent = memguard\n"
	        "\n"
	        "[log]\n"
	        "level = info\n"
	        "\n"
	        "[daemon]\n"
	        "guard = memguard/*/* memguard.slice/*/*\n"
	        "place_beside = system.slice/*slurmstepd.scope/job_*/step_*/user/task_*\n"
	        "protect = init.scope system.slice/ssh.service system.slice/systemd-journald.service\n"
	        "  system.slice/slurmd.service system.slice/pbs_mom.service system.slice/memguardd.service\n"
	        "  /usr/sbin/sshd /usr/lib/openssh/sshd-session /usr/sbin/slurmd /usr/sbin/slurmstepd\n"
	        "  /usr/sbin/pbs_mom /opt/pbs/sbin/pbs_mom /usr/sbin/memguardd\n"
	        "available_min = 5%\n"
	        "available_pressure = 15%\n"
	        "pressure_full_avg10 = 20%\n"
	        "trigger_stall = 100ms\n"
	        "trigger_window = 1s\n"
	        "settle = 2s\n"
	        "poll_max = 30s\n"
	        "lead_time = 250ms\n"
	        "kill_outside = yes\n"
	        "dry_run = no\n"
	        "throttle = yes\n"
	        "lead_kill = no\n"
	        "kill_log = /var/log/memguard/kills.jsonl\n"
	        "metrics_file =\n"
	        "metrics_interval = 60s\n";
	struct mg_config c, d;
	char err[256] = "";

	mg_config_defaults(&c);
	mg_config_defaults(&d);
	assert_int_equal(mg_config_parse_string(&c, text, "defaults.conf", err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_config_equal(&c, &d);
}

static void every_key_parses(void **state)
{
	static const char text[] = "[budget]\n"
	                           "reserve = 2G\n"
	                           "reserve_shmem = no\n"
	                           "min_share = 64MiB\n"
	                           "[task]\n"
	                           "memory_high = 90%\n"
	                           "swap_max = 1.5G\n"
	                           "oom_group = false\n"
	                           "rlimit_as = on\n"
	                           "heap_flags = off\n"
	                           "kill_grace = 2500ms\n"
	                           "mode = elastic\n"
	                           "[daemon]\n"
	                           "guard = jobs/* batch/*/step-*\n"
	                           "protect = sshd\n"
	                           "available_min = 512M\n"
	                           "available_pressure = 12.5%\n"
	                           "pressure_full_avg10 = 35%\n"
	                           "trigger_stall = 150ms\n"
	                           "trigger_window = 2s\n"
	                           "settle = 500ms\n"
	                           "poll_max = 250ms\n"
	                           "lead_time = 0\n"
	                           "lead_kill = yes\n"
	                           "kill_outside = no\n"
	                           "dry_run = yes\n"
	                           "kill_log = /run/memguard/kills.jsonl\n"
	                           "metrics_file = /var/lib/prometheus/node-exporter/memguard.prom\n"
	                           "metrics_interval = 15s\n"
	                           "[cgroup]\n"
	                           "parent = mg-jobs.v2_x\n"
	                           "[log]\n"
	                           "level = debug\n";
	struct mg_config c;
	char err[256] = "";

	mg_config_defaults(&c);
	assert_int_equal(mg_config_parse_string(&c, text, "all.conf", err, sizeof(err)), 0);
	assert_string_equal(c.reserve, "2G");
	assert_false(c.reserve_shmem);
	assert_true(c.min_share == 64ull << 20);
	assert_int_equal(c.high_percent, 90);
	assert_true(c.swap_max == 1610612736ull);
	assert_false(c.oom_group);
	assert_int_equal(c.rlimit_as, MG_RLIMIT_AS_ON);
	assert_false(c.heap_flags);
	assert_true(c.kill_grace_usec == 2500000);
	assert_int_equal(c.mode, MG_SHARE_ELASTIC);
	assert_string_equal(c.parent, "mg-jobs.v2_x");
	assert_int_equal(c.log_level, LOG_DEBUG);
	assert_string_equal(c.guard, "jobs/* batch/*/step-*");
	assert_string_equal(c.protect, "sshd");
	assert_string_equal(c.available_min, "512M");
	assert_string_equal(c.available_pressure, "12.5%");
	assert_int_equal(c.pressure_full_avg10, 35);
	assert_true(c.trigger_stall_usec == 150000);
	assert_true(c.trigger_window_usec == 2000000);
	assert_true(c.settle_usec == 500000);
	assert_true(c.poll_max_usec == 250000);
	assert_true(c.lead_usec == 0);
	assert_true(c.lead_kill);
	assert_false(c.kill_outside);
	assert_true(c.dry_run);
	assert_string_equal(c.kill_log, "/run/memguard/kills.jsonl");
	assert_string_equal(c.metrics_file, "/var/lib/prometheus/node-exporter/memguard.prom");
	assert_true(c.metrics_interval_usec == 15000000);
}

struct value_case {
	const char *text;
	void (*check)(const struct mg_config *c);
};

static void check_reserve_pct(const struct mg_config *c)
{
	assert_string_equal(c->reserve, "12.5%");
}
static void check_reserve_max(const struct mg_config *c)
{
	assert_string_equal(c->reserve, "max");
}
static void check_shmem_false(const struct mg_config *c)
{
	assert_false(c->reserve_shmem);
}
static void check_oom_false(const struct mg_config *c)
{
	assert_false(c->oom_group);
}
static void check_oom_true(const struct mg_config *c)
{
	assert_true(c->oom_group);
}
static void check_high_0(const struct mg_config *c)
{
	assert_int_equal(c->high_percent, 0);
}
static void check_high_100(const struct mg_config *c)
{
	assert_int_equal(c->high_percent, 100);
}
static void check_swap_max(const struct mg_config *c)
{
	assert_true(c->swap_max == UINT64_MAX);
}
static void check_rlimit_off(const struct mg_config *c)
{
	assert_int_equal(c->rlimit_as, MG_RLIMIT_AS_OFF);
}
static void check_rlimit_on(const struct mg_config *c)
{
	assert_int_equal(c->rlimit_as, MG_RLIMIT_AS_ON);
}
static void check_rlimit_auto(const struct mg_config *c)
{
	assert_int_equal(c->rlimit_as, MG_RLIMIT_AS_AUTO);
}
static void check_grace_2s(const struct mg_config *c)
{
	assert_true(c->kill_grace_usec == 2000000);
}
static void check_grace_0(const struct mg_config *c)
{
	assert_true(c->kill_grace_usec == 0);
}
static void check_level_err(const struct mg_config *c)
{
	assert_int_equal(c->log_level, LOG_ERR);
}
static void check_level_warning(const struct mg_config *c)
{
	assert_int_equal(c->log_level, LOG_WARNING);
}
static void check_level_notice(const struct mg_config *c)
{
	assert_int_equal(c->log_level, LOG_NOTICE);
}
static void check_parent_long(const struct mg_config *c)
{
	assert_int_equal(strlen(c->parent), 63);
}
static void check_min_share(const struct mg_config *c)
{
	assert_true(c->min_share == 1);
}
static void check_mode_strict(const struct mg_config *c)
{
	assert_int_equal(c->mode, MG_SHARE_STRICT);
}
static void check_mode_auto(const struct mg_config *c)
{
	assert_int_equal(c->mode, MG_SHARE_AUTO);
}
static void check_pressure_off(const struct mg_config *c)
{
	assert_int_equal(c->pressure_full_avg10, 0);
}
static void check_guard_empty(const struct mg_config *c)
{
	assert_string_equal(c->guard, "");
}
static void check_untouched(const struct mg_config *c)
{
	struct mg_config d;

	mg_config_defaults(&d);
	assert_config_equal(c, &d);
}

static void value_forms(void **state)
{
	static const struct value_case cases[] = {
	        {"[budget]\nreserve = 12.5%\n", check_reserve_pct},
	        {"[budget]\nreserve = max\n", check_reserve_max},
	        {"[budget]\nreserve_shmem = OFF\n", check_shmem_false},
	        {"[task]\noom_group = 0\n", check_oom_false},
	        {"[task]\noom_group = No\n", check_oom_false},
	        {"[task]\noom_group = TRUE\n", check_oom_true},
	        {"[task]\noom_group = on\n", check_oom_true},
	        {"[task]\noom_group = 1\n", check_oom_true},
	        {"[task]\nmemory_high = 0%\n", check_high_0},
	        {"[task]\nmemory_high = OFF\n", check_high_0},
	        {"[task]\nmemory_high = 100%\n", check_high_100},
	        {"[task]\nswap_max = max\n", check_swap_max},
	        {"[task]\nrlimit_as = no\n", check_rlimit_off},
	        {"[task]\nrlimit_as = off\n", check_rlimit_off},
	        {"[task]\nrlimit_as = yes\n", check_rlimit_on},
	        {"[task]\nrlimit_as = AUTO\n", check_rlimit_auto},
	        {"[task]\nkill_grace = 2\n", check_grace_2s},
	        {"[task]\nkill_grace = 0\n", check_grace_0},
	        {"[log]\nlevel = err\n", check_level_err},
	        {"[log]\nlevel = Warning\n", check_level_warning},
	        {"[log]\nlevel = notice\n", check_level_notice},
	        {"[cgroup]\nparent = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
	         check_parent_long},
	        {"[budget]\nmin_share = 1\n", check_min_share},
	        {"[task]\nmode = STRICT\n", check_mode_strict},
	        {"[task]\nmode = auto\n", check_mode_auto},
	        {"[daemon]\npressure_full_avg10 = off\n", check_pressure_off},
	        {"[daemon]\nguard =\n", check_guard_empty},
	        /* Spacing, comments, and the last value of a repeated key. */
	        {"  [task]  \n  oom_group=no  \n", check_oom_false},
	        {"; comment\n# comment\n[task]\noom_group = yes ; inline comment\n", check_oom_true},
	        {"[task]\noom_group = yes\noom_group = no\n", check_oom_false},
	        {"[task]\noom_group: no\n", check_oom_false},
	        /* Empty texts and empty sections. */
	        {"", check_untouched},
	        {"\n\n# only comments\n", check_untouched},
	        {"[budget]\n[task]\n", check_untouched},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_config c;
		char err[256] = "";
		int r;

		mg_config_defaults(&c);
		r = mg_config_parse_string(&c, cases[i].text, "v.conf", err, sizeof(err));
		if (r != 0)
			print_error("case %zu: \"%s\": %d %s\n", i, cases[i].text, r, err);
		assert_int_equal(r, 0);
		cases[i].check(&c);
	}
}

static void unknown_section_and_key(void **state)
{
	struct mg_config c, d;
	char err[256] = "";

	mg_config_defaults(&c);
	mg_config_defaults(&d);
	assert_int_equal(mg_config_parse_string(&c, "# x\n[x]\nfoo = 1\n", "origin", err, sizeof(err)),
	                 -EINVAL);
	ft_assert_contains(err, "unknown section [x]");
	ft_assert_contains(err, "origin:2"); /* the section's own line, even with no key */
	assert_config_equal(&c, &d);

	err[0] = '\0';
	assert_int_equal(
	        mg_config_parse_string(&c, "[task]\noom_group = no\nbogus = 1\n", "origin", err, sizeof(err)),
	        -EINVAL);
	ft_assert_contains(err, "unknown key");
	ft_assert_contains(err, "bogus");
	ft_assert_contains(err, "[task]");
	ft_assert_contains(err, "origin:3");
	assert_config_equal(&c, &d); /* oom_group = no on line 2 was not applied */

	/* A key of one section in another is unknown there. */
	err[0] = '\0';
	assert_int_equal(mg_config_parse_string(&c, "[budget]\noom_group = no\n", "origin", err, sizeof(err)),
	                 -EINVAL);
	ft_assert_contains(err, "origin:2");
	ft_assert_contains(err, "unknown key");

	/* Keys are case-sensitive, and a key before any section is an error. */
	err[0] = '\0';
	assert_int_equal(mg_config_parse_string(&c, "[task]\nOOM_GROUP = no\n", "origin", err, sizeof(err)),
	                 -EINVAL);
	ft_assert_contains(err, "unknown key");
	err[0] = '\0';
	assert_int_equal(mg_config_parse_string(&c, "reserve = 1G\n", "origin", err, sizeof(err)), -EINVAL);
	ft_assert_contains(err, "origin:1");
	ft_assert_contains(err, "key \"reserve\" outside any section");
	assert_config_equal(&c, &d);
}

struct bad_case {
	const char *line; /* goes on line 3, after a comment and a section header */
	const char *section;
};

static void bad_values(void **state)
{
	static const struct bad_case cases[] = {
	        {"reserve = 4XB", "budget"},
	        {"reserve = 101%", "budget"},
	        {"reserve = -1G", "budget"},
	        {"reserve = ", "budget"},
	        {"reserve = 0000000000000000000000000000004G", "budget"}, /* too long to keep */
	        {"reserve_shmem = sometimes", "budget"},
	        {"min_share = 50%", "budget"}, /* sizes without a base take no percentage */
	        {"min_share = 99999999999P", "budget"},
	        {"oom_group = maybe", "task"},
	        {"oom_group = ", "task"},
	        {"oom_group = yes please", "task"},
	        {"memory_high = 120%", "task"},
	        {"memory_high = 101%", "task"},
	        {"memory_high = 50", "task"},
	        {"memory_high = -5%", "task"},
	        {"memory_high = 5.5%", "task"},
	        {"memory_high = %", "task"},
	        {"memory_high = 99999999%", "task"},
	        {"swap_max = 1.5.5G", "task"},
	        {"rlimit_as = maybe", "task"},
	        {"heap_flags = 2", "task"},
	        {"kill_grace = soon", "task"},
	        {"kill_grace = -1s", "task"},
	        {"kill_grace = 10 s", "task"},
	        {"parent = ../evil", "cgroup"},
	        {"parent = .hidden", "cgroup"},
	        {"parent = a/b", "cgroup"},
	        {"parent = /abs", "cgroup"},
	        {"parent = ", "cgroup"},
	        {"parent = a b", "cgroup"},
	        {"parent = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	         "cgroup"}, /* 64 */
	        {"mode = fast", "task"},
	        {"mode = ", "task"},
	        {"available_min = 4XB", "daemon"},
	        {"available_pressure = 101%", "daemon"},
	        {"available_min = 000000000000000000000000000000001G", "daemon"}, /* too long to keep */
	        {"pressure_full_avg10 = 120%", "daemon"},
	        {"pressure_full_avg10 = 20", "daemon"},
	        {"trigger_stall = soon", "daemon"},
	        {"trigger_window = -1s", "daemon"},
	        {"settle = 1d", "daemon"},
	        {"poll_max = ", "daemon"},
	        {"dry_run = perhaps", "daemon"},
	        {"kill_log = relative/kills.jsonl", "daemon"},
	        {"kill_log = ", "daemon"},
	        {"metrics_file = memguard.prom", "daemon"},
	        {"metrics_interval = often", "daemon"},
	        {"level = verbose", "log"},
	        {"level = 7", "log"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_config c, d;
		char text[256], err[256] = "", where[64];
		int r;

		snprintf(text, sizeof(text), "# bad value on line 3\n[%s]\n%s\n", cases[i].section,
		         cases[i].line);
		snprintf(where, sizeof(where), "/etc/memguard/memguard.conf:3: [%s] ", cases[i].section);
		mg_config_defaults(&c);
		mg_config_defaults(&d);
		r = mg_config_parse_string(&c, text, "/etc/memguard/memguard.conf", err, sizeof(err));
		if (r != -EINVAL || !strstr(err, where))
			print_error("\"%s\": %d \"%s\"\n", cases[i].line, r, err);
		assert_int_equal(r, -EINVAL);
		ft_assert_contains(err, where);
		assert_config_equal(&c, &d);
	}
}

static void failed_parse_leaves_config_unchanged(void **state)
{
	static const char text[] = "[budget]\n"
	                           "reserve = 10%\n"
	                           "min_share = 1G\n"
	                           "[task]\n"
	                           "kill_grace = 1s\n"
	                           "oom_group = maybe\n"
	                           "[log]\n"
	                           "level = debug\n";
	struct mg_config c, before;
	char err[256] = "";

	/* Start from something that is not the defaults. */
	mg_config_defaults(&c);
	assert_int_equal(mg_config_parse_string(&c, "[cgroup]\nparent = custom\n[task]\nswap_max = 1M\n", "a",
	                                        err, sizeof(err)),
	                 0);
	before = c;
	assert_int_equal(mg_config_parse_string(&c, text, "b.conf", err, sizeof(err)), -EINVAL);
	ft_assert_contains(err, "b.conf:6:");
	ft_assert_contains(err, "oom_group");
	ft_assert_contains(err, "maybe");
	assert_config_equal(&c, &before);
	assert_string_equal(c.parent, "custom");
	assert_string_equal(c.reserve, "5%");
}

static void first_error_wins(void **state)
{
	struct mg_config c;
	char err[256] = "";

	mg_config_defaults(&c);
	assert_int_equal(
	        mg_config_parse_string(&c, "[task]\noom_group = maybe\nkill_grace = soon\n[nope]\nx = 1\n",
	                               "o", err, sizeof(err)),
	        -EINVAL);
	ft_assert_contains(err, "o:2:");
	ft_assert_contains(err, "oom_group");
	ft_assert_not_contains(err, "kill_grace");
}

static void syntax_errors(void **state)
{
	static const char *const bad[] = {
	        "[task]\nthis line has no equals sign\n",
	        "[task\noom_group = no\n",
	        "[task]\n= value without a key\n",
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(bad); i++) {
		struct mg_config c, d;
		char err[256] = "";

		mg_config_defaults(&c);
		mg_config_defaults(&d);
		int r = mg_config_parse_string(&c, bad[i], "syn.conf", err, sizeof(err));
		if (r != -EINVAL)
			print_error("\"%s\": %d %s\n", bad[i], r, err);
		assert_int_equal(r, -EINVAL);
		ft_assert_contains(err, "syn.conf:");
		assert_config_equal(&c, &d);
	}
}

/* The message pairs a line number with its own reason: a syntax error on
 * line 1 must not be reported with the reason of a bad key on line 2. */
static void syntax_error_line_matches_reason(void **state)
{
	struct mg_config c;
	char err[256] = "";

	mg_config_defaults(&c);
	assert_int_equal(
	        mg_config_parse_string(&c, "[task\noom_group = maybe\n", "syn.conf", err, sizeof(err)),
	        -EINVAL);
	if (!strstr(err, "syn.conf:1: syntax error"))
		print_error("got \"%s\"\n", err);
	ft_assert_contains(err, "syn.conf:1: syntax error");
}

static void small_error_buffer(void **state)
{
	struct mg_config c;
	char err[16];

	memset(err, 'Z', sizeof(err));
	mg_config_defaults(&c);
	assert_int_equal(
	        mg_config_parse_string(&c, "[task]\noom_group = maybe\n", "a-long-origin-name.conf", err, 12),
	        -EINVAL);
	assert_int_equal(strlen(err), 11); /* truncated and terminated inside the given size */
	assert_true(err[12] == 'Z');
	assert_memory_equal(err, "a-long-orig", 11);
}

/* A comment longer than inih's 200-byte line buffer must stay a comment: its
 * tail must not be read as a line of its own that sets a key. */
static void long_comment_stays_a_comment(void **state)
{
	char text[512], err[256] = "";
	struct mg_config c;
	size_t len;
	int r;

	/* "# " and 197 more bytes fill inih's buffer; "reserve = 77%" follows on
	 * the same line, still inside the comment. */
	strcpy(text, "[budget]\n# ");
	len = strlen(text);
	memset(text + len, 'x', 197);
	strcpy(text + len + 197, "reserve = 77%\n");
	mg_config_defaults(&c);
	r = mg_config_parse_string(&c, text, "long.conf", err, sizeof(err));
	if (r == 0 && strcmp(c.reserve, "5%") != 0)
		print_error("a comment line of %zu bytes set reserve = %s\n", strlen(text) - 10, c.reserve);
	/* Either ignored as a comment or refused as too long, never applied. */
	if (r == 0)
		assert_string_equal(c.reserve, "5%");
	else
		assert_int_equal(r, -EINVAL);
}

/* guard and protect hold up to 511 bytes, but inih hands over at most 199
 * bytes of a line: a longer line is refused with a clear reason, never cut
 * into a key and a stray "line"; a long list goes on over indented lines. */
static void long_list_is_read_whole(void **state)
{
	char text[700], value[301], err[256] = "";
	struct mg_config c, d;
	int r;

	for (size_t i = 0; i < 300; i += 10)
		memcpy(value + i, "procname1 ", 10);
	value[299] = '\0'; /* 299 bytes: 30 names */
	snprintf(text, sizeof(text), "[daemon]\nprotect = %s\n", value);
	mg_config_defaults(&c);
	mg_config_defaults(&d);
	r = mg_config_parse_string(&c, text, "list.conf", err, sizeof(err));
	assert_int_equal(r, -EINVAL);
	ft_assert_contains(err, "list.conf:2: line longer than");
	assert_config_equal(&c, &d);

	/* The same 30 names over three lines, the last two indented. */
	snprintf(text, sizeof(text), "[daemon]\nprotect = %.99s\n  %.99s\n\t%.99s\n[log]\nlevel = debug\n",
	         value, value + 100, value + 200);
	r = mg_config_parse_string(&c, text, "list.conf", err, sizeof(err));
	if (r != 0)
		print_error("continued protect list: %d \"%s\"\n", r, err);
	assert_int_equal(r, 0);
	assert_string_equal(c.protect, value);
	assert_int_equal(c.log_level, LOG_DEBUG);
}

/* --- files and drop-ins --- */

struct files {
	struct fake_tree tree;
	char main[PATH_MAX + 32];
	char dropins[PATH_MAX + 32];
};

static int setup_files(void **state)
{
	struct files *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->tree.fd = -1;
	*state = f;
	ft_new(&f->tree);
	snprintf(f->main, sizeof(f->main), "%s/memguard.conf", f->tree.path);
	snprintf(f->dropins, sizeof(f->dropins), "%s/conf.d", f->tree.path);
	return 0;
}

static int teardown_files(void **state)
{
	struct files *f = *state;

	ft_free(&f->tree);
	free(f);
	return 0;
}

static void load_main_and_dropins_in_order(void **state)
{
	struct files *f = *state;
	struct mg_config c;
	char err[512] = "";

	ft_write(f->tree.fd, "memguard.conf",
	         "[budget]\nreserve = 10%\nmin_share = 1G\n[log]\nlevel = warning\n");
	/* Written out of order: the lexical order of the names is what counts. */
	ft_write(f->tree.fd, "conf.d/20-b.conf", "[budget]\nreserve = 30%\n");
	ft_write(f->tree.fd, "conf.d/10-a.conf",
	         "[budget]\nreserve = 20%\n[task]\noom_group = no\nkill_grace = 1s\n");
	/* Lexical, not numeric: "9-late" sorts after "20-b". */
	ft_write(f->tree.fd, "conf.d/9-late.conf", "[task]\nkill_grace = 9s\n");
	/* Ignored: not NAME.conf, or hidden; all of them would fail to parse. */
	ft_write(f->tree.fd, "conf.d/README", "not = ini [at all\n");
	ft_write(f->tree.fd, "conf.d/30-c.conf.bak", "[nope]\nx = 1\n");
	ft_write(f->tree.fd, "conf.d/30-c.conf~", "[nope]\nx = 1\n");
	ft_write(f->tree.fd, "conf.d/40-d.CONF", "[nope]\nx = 1\n");
	ft_write(f->tree.fd, "conf.d/.hidden.conf", "[nope]\nx = 1\n");
	ft_write(f->tree.fd, "conf.d/.conf", "[nope]\nx = 1\n");

	mg_config_defaults(&c);
	assert_int_equal(mg_config_load(&c, f->main, true, f->dropins, err, sizeof(err)), 0);
	assert_string_equal(c.reserve, "30%");  /* 20-b.conf overrides 10-a.conf */
	assert_false(c.oom_group);              /* from 10-a.conf */
	assert_true(c.min_share == 1ull << 30); /* from the main file */
	assert_int_equal(c.log_level, LOG_WARNING);
	assert_true(c.kill_grace_usec == 9000000); /* 9-late.conf came last */
	assert_true(c.heap_flags);                 /* untouched default */
}

/* [service] sections across conf.d drop-ins, as an administrator writes
 * one per unit: merged key by key; a mistake names its drop-in and fails
 * no load. */
static void load_service_dropins(void **state)
{
	struct files *f = *state;
	struct mg_config c;
	char err[512] = "";

	ft_write(f->tree.fd, "memguard.conf", "[service slurmctld]\nwindow = 20min\n");
	ft_write(f->tree.fd, "conf.d/10-slurmctld.conf", "[service slurmctld.service]\nhorizon = 1h\n");
	ft_write(f->tree.fd, "conf.d/20-munge.conf", "[service munge]\n");
	ft_write(f->tree.fd, "conf.d/30-typo.conf", "[service pbs_mom]\nhorizion = 1h\n");
	ft_write(f->tree.fd, "conf.d/40-task.conf", "[task]\nkill_grace = 3s\n");
	mg_config_defaults(&c);
	assert_int_equal(mg_config_load(&c, f->main, true, f->dropins, err, sizeof(err)), 0);
	assert_int_equal(c.n_services, 3);
	assert_string_equal(c.services[0].unit, "slurmctld.service");
	assert_true(c.services[0].window_usec == 1200000000ull);
	assert_true(c.services[0].horizon_usec == 3600000000ull);
	assert_string_equal(c.services[1].unit, "munge.service");
	assert_string_equal(c.services[2].unit, "pbs_mom.service");
	ft_assert_contains(c.service_error, "conf.d/30-typo.conf:2: unknown key \"horizion\"");
	assert_true(c.kill_grace_usec == 3000000); /* the drop-in after it applied */
}

static void load_missing_main(void **state)
{
	struct files *f = *state;
	struct mg_config c, d;
	char err[512] = "";

	mg_config_defaults(&c);
	mg_config_defaults(&d);
	/* Not required: fine, and the drop-ins still apply. */
	ft_write(f->tree.fd, "conf.d/50-x.conf", "[task]\nheap_flags = no\n");
	assert_int_equal(mg_config_load(&c, f->main, false, f->dropins, err, sizeof(err)), 0);
	assert_false(c.heap_flags);

	/* Required: an error naming the file, and nothing applied. */
	mg_config_defaults(&c);
	assert_int_equal(mg_config_load(&c, f->main, true, f->dropins, err, sizeof(err)), -ENOENT);
	ft_assert_contains(err, f->main);
	ft_assert_contains(err, "cannot read");
	assert_config_equal(&c, &d);
}

static void load_without_dropins(void **state)
{
	struct files *f = *state;
	struct mg_config c, d;
	char err[512] = "";
	char missing[PATH_MAX + 32];

	mg_config_defaults(&c);
	mg_config_defaults(&d);
	assert_int_equal(mg_config_load(&c, NULL, false, NULL, err, sizeof(err)), 0);
	assert_int_equal(mg_config_load(&c, NULL, true, NULL, err, sizeof(err)), 0);
	assert_config_equal(&c, &d);

	ft_write(f->tree.fd, "memguard.conf", "[task]\nkill_grace = 3s\n");
	snprintf(missing, sizeof(missing), "%s/no-such-dir", f->tree.path);
	assert_int_equal(mg_config_load(&c, f->main, true, missing, err, sizeof(err)), 0);
	assert_true(c.kill_grace_usec == 3000000);

	/* conf.d exists but is empty. */
	ft_mkdir(f->tree.fd, "conf.d");
	mg_config_defaults(&c);
	assert_int_equal(mg_config_load(&c, NULL, false, f->dropins, err, sizeof(err)), 0);
	assert_config_equal(&c, &d);
}

static void load_bad_dropin_names_itself(void **state)
{
	struct files *f = *state;
	struct mg_config c, d;
	char err[PATH_MAX + 256] = "", where[PATH_MAX + 64];

	ft_write(f->tree.fd, "memguard.conf", "[budget]\nreserve = 10%\n");
	ft_write(f->tree.fd, "conf.d/10-a.conf", "[task]\noom_group = no\n");
	ft_write(f->tree.fd, "conf.d/20-b.conf", "# broken\n[task]\nkill_grace = soon\n");
	ft_write(f->tree.fd, "conf.d/30-c.conf", "[task]\nheap_flags = no\n");

	mg_config_defaults(&c);
	mg_config_defaults(&d);
	assert_int_equal(mg_config_load(&c, f->main, true, f->dropins, err, sizeof(err)), -EINVAL);
	snprintf(where, sizeof(where), "%s/20-b.conf:3:", f->dropins);
	ft_assert_contains(err, where);
	ft_assert_contains(err, "kill_grace");
	/* Nothing applied: not the main file, not 10-a.conf before it, not 30-c.conf after. */
	assert_config_equal(&c, &d);
}

static void load_bad_main_names_itself(void **state)
{
	struct files *f = *state;
	struct mg_config c, d;
	char err[PATH_MAX + 256] = "", where[PATH_MAX + 64];

	ft_write(f->tree.fd, "memguard.conf", "[budget]\n\nreserve = lots\n");
	ft_write(f->tree.fd, "conf.d/10-a.conf", "[task]\noom_group = no\n");
	mg_config_defaults(&c);
	mg_config_defaults(&d);
	assert_int_equal(mg_config_load(&c, f->main, false, f->dropins, err, sizeof(err)), -EINVAL);
	snprintf(where, sizeof(where), "%s:3:", f->main);
	ft_assert_contains(err, where);
	assert_config_equal(&c, &d);
}

static void load_dropin_dir_not_a_directory(void **state)
{
	struct files *f = *state;
	struct mg_config c;
	char err[PATH_MAX + 256] = "";
	char path[PATH_MAX + 32];

	ft_write(f->tree.fd, "not-a-dir", "[task]\noom_group = no\n");
	snprintf(path, sizeof(path), "%s/not-a-dir", f->tree.path);
	mg_config_defaults(&c);
	assert_int_equal(mg_config_load(&c, NULL, false, path, err, sizeof(err)), -ENOTDIR);
	ft_assert_contains(err, path);
	assert_true(c.oom_group);
}

/* [service UNIT]: a section with no keys gets the defaults, every key
 * parses, and a unit named without a type is a service. */
static void service_sections(void **state)
{
	struct mg_config c, d;
	struct mg_service_config want;
	char err[256] = "";

	mg_config_defaults(&c);
	assert_int_equal(c.n_services, 0);
	assert_string_equal(c.service_error, "");
	assert_int_equal(mg_config_parse_string(&c,
	                                        "[service slurmctld]\n"
	                                        "[service  munge.service ]\n"
	                                        "[service pbs_server.service]\n"
	                                        "action = log\n"
	                                        "window = 20min\n"
	                                        "horizon = 6h\n"
	                                        "stuck_time = 30s\n"
	                                        "restart_limit = 5\n"
	                                        "restart_limit_interval = 12h\n"
	                                        "restart_backoff = 0\n"
	                                        "[task]\n"
	                                        "oom_group = no\n",
	                                        "origin", err, sizeof(err)),
	                 0);
	assert_string_equal(c.service_error, "");
	assert_false(c.oom_group);
	assert_int_equal(c.n_services, 3);
	mg_service_config_defaults(&want, "slurmctld.service");
	assert_string_equal(c.services[0].unit, "slurmctld.service");
	assert_int_equal(c.services[0].action, MG_SERVICE_RESTART);
	assert_true(c.services[0].window_usec == 600000000ull && want.window_usec == 600000000ull);
	assert_true(c.services[0].horizon_usec == 7200000000ull);
	assert_true(c.services[0].stuck_usec == 60000000ull);
	assert_int_equal(c.services[0].restart_limit, 3);
	assert_true(c.services[0].restart_limit_interval_usec == 86400000000ull);
	assert_true(c.services[0].restart_backoff_usec == 600000000ull);
	assert_string_equal(c.services[1].unit, "munge.service");
	const struct mg_service_config *p = &c.services[2];
	assert_string_equal(p->unit, "pbs_server.service");
	assert_int_equal(p->action, MG_SERVICE_LOG);
	assert_true(p->window_usec == 1200000000ull);
	assert_true(p->horizon_usec == 21600000000ull);
	assert_true(p->stuck_usec == 30000000ull);
	assert_int_equal(p->restart_limit, 5);
	assert_true(p->restart_limit_interval_usec == 43200000000ull);
	assert_true(p->restart_backoff_usec == 0);

	/* A later section for the same unit changes it key by key; an instance is a unit. */
	d = c;
	assert_int_equal(mg_config_parse_string(&c,
	                                        "[service slurmctld.service]\nhorizon = 1h\n"
	                                        "[service pbs_server]\naction = restart\n"
	                                        "[service getty@tty1.service]\n",
	                                        "again", err, sizeof(err)),
	                 0);
	assert_int_equal(c.n_services, 4);
	assert_true(c.services[0].horizon_usec == 3600000000ull);
	assert_true(c.services[0].window_usec == d.services[0].window_usec);
	assert_int_equal(c.services[2].action, MG_SERVICE_RESTART);
	assert_true(c.services[2].window_usec == 1200000000ull);
	assert_string_equal(c.services[3].unit, "getty@tty1.service");

	/* A name longer than inih keeps of a section's: the keys still reach it. */
	static const char long_unit[] = "a-unit-whose-name-is-longer-than-fifty-bytes-as-some-are.service";
	char text[256];
	snprintf(text, sizeof(text), "[service %s]\nhorizon = 3h\n[service b]\nhorizon = 4h\n", long_unit);
	mg_config_defaults(&c);
	assert_int_equal(mg_config_parse_string(&c, text, "long", err, sizeof(err)), 0);
	assert_int_equal(c.n_services, 2);
	assert_string_equal(c.services[0].unit, long_unit);
	assert_true(c.services[0].horizon_usec == 3ull * 3600000000ull);
	assert_true(c.services[1].horizon_usec == 4ull * 3600000000ull);
}

/* A mistake in a [service] section fails no parse: the launcher never reads
 * these sections, and no job may fail for one. It is kept, the first one,
 * with its file and line, for memguardd to refuse. */
static void service_mistakes_kept(void **state)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
	        {"[service]\n", "origin:1: [service]: expected [service UNIT]"},
	        {"[service   ]\n", "expected [service UNIT]"},
	        {"[service foo bar]\n", "letters, digits"},
	        {"[service foo/bar]\n", "letters, digits"},
	        {"[service getty@.service]\n", "a template"},
	        {"[service @x.service]\n", "a template"},
	        {"[service .service]\n", "a template"},
	        {"[service foo.socket]\n", "only a .service unit can be restarted"},
	        {"[service foo.scope]\n", "only a .service unit"},
	        {"[service a]\nwindow = 10s\n",
	         "origin:2: [service a.service] window = \"10s\": expected 16s to 24h"},
	        {"[service a]\nwindow = soon\n", "[service a.service] window = \"soon\""},
	        {"[service a]\nhorizon = 10s\n", "expected 1min to 720h"},
	        {"[service a]\nstuck_time = 2h\n", "expected 5s to 1h"},
	        {"[service a]\naction = kill\n", "expected restart or log"},
	        {"[service a]\nrestart_limit = 0\n", "expected 1 to 16"},
	        {"[service a]\nrestart_limit = -1\n", "expected a whole number"},
	        {"[service a]\nrestart_limit = 99999999999\n", "expected a whole number"},
	        {"[service a]\nbogus = 1\n",
	         "origin:2: unknown key \"bogus\" in section [service a.service]"},
	        {"[service a]\nguard = x\n", "unknown key \"guard\" in section [service a.service]"},
	        /* the first mistake wins; the keys of a section in error are not looked at */
	        {"[service a]\nbogus = 1\naction = kill\n", "origin:2: unknown key \"bogus\""},
	        {"[service x/y]\nbogus = 1\n", "origin:1: [service x/y]"},
	};
	char err[256];

	for (size_t i = 0; i < MG_ARRAY_SIZE(bad); i++) {
		struct mg_config c;
		char text[256];

		/* A key of the launcher after it still applies. */
		snprintf(text, sizeof(text), "%s[task]\noom_group = no\n", bad[i].text);
		mg_config_defaults(&c);
		strcpy(err, "untouched");
		int r = mg_config_parse_string(&c, text, "origin", err, sizeof(err));
		if (r != 0 || !strstr(c.service_error, bad[i].want))
			print_error("%s: %d, \"%s\": want \"%s\"\n", bad[i].text, r, c.service_error,
			            bad[i].want);
		assert_int_equal(r, 0);
		assert_string_equal(err, "untouched");
		assert_non_null(strstr(c.service_error, bad[i].want));
		assert_false(c.oom_group);
	}

	/* More sections than memguardd keeps. */
	struct mg_config c;
	char *text = calloc(MG_SERVICE_MAX + 1, 32);
	assert_non_null(text);
	for (int i = 0; i <= MG_SERVICE_MAX; i++)
		sprintf(text + strlen(text), "[service s%d]\n", i);
	mg_config_defaults(&c);
	assert_int_equal(mg_config_parse_string(&c, text, "many", err, sizeof(err)), 0);
	assert_int_equal(c.n_services, MG_SERVICE_MAX);
	ft_assert_contains(c.service_error, "many:33: [service s32]: more than 32 [service] sections");
	free(text);

	/* Not a [service] section: unknown, for both programs. */
	mg_config_defaults(&c);
	assert_int_equal(mg_config_parse_string(&c, "[services]\n", "origin", err, sizeof(err)), -EINVAL);
	ft_assert_contains(err, "unknown section [services]");
	assert_int_equal(mg_config_parse_string(&c, "[servicea]\n", "origin", err, sizeof(err)), -EINVAL);
	ft_assert_contains(err, "unknown section [servicea]");

	/* A real error after a [service] section: nothing of the file applies, its services neither. */
	struct mg_config d;
	mg_config_defaults(&c);
	mg_config_defaults(&d);
	assert_int_equal(mg_config_parse_string(&c, "[service a]\nwindow = 20min\n[task]\nbogus = 1\n",
	                                        "origin", err, sizeof(err)),
	                 -EINVAL);
	ft_assert_contains(err, "origin:4: unknown key");
	assert_config_equal(&c, &d);
}

/* conf/memguard.conf shows every key with its default, commented out: as
 * shipped it changes nothing, and with every key uncommented it still
 * changes nothing, so the documented defaults are the code's. */
static void shipped_config_documents_the_defaults(void **state)
{
	const char *src = getenv("MEMGUARD_SOURCE_DIR");
	char path[4096], err[512] = "", *text = NULL;
	struct mg_config c, d;
	size_t keys = 0;

	if (!src || !*src)
		fail_msg("MEMGUARD_SOURCE_DIR is not set: run this test through ctest");
	snprintf(path, sizeof(path), "%s/conf/memguard.conf", src);
	mg_config_defaults(&d);
	mg_config_defaults(&c);
	assert_int_equal(mg_config_load(&c, path, true, NULL, err, sizeof(err)), 0);
	assert_config_equal(&c, &d);

	assert_true(mg_read_file(path, &text) > 0);
	/* "#key = value" becomes "key = value"; prose comments have no " = ". A
	 * list goes on over "#<tab>more" lines right after it. "#[service"
	 * starts the example service, whose keys are counted apart. */
	char *out = text;
	bool in_key = false, in_service = false;
	size_t service_keys = 0;
	for (const char *line = text; *line;) {
		size_t word = strspn(line + 1, "abcdefghijklmnopqrstuvwxyz_0123456789");
		size_t len = strcspn(line, "\n") + (line[strcspn(line, "\n")] == '\n');
		/* "#key =" alone: a key whose default is nothing */
		bool key =
		        line[0] == '#' && word > 0 &&
		        (strncmp(line + 1 + word, " = ", 3) == 0 || strncmp(line + 1 + word, " =\n", 3) == 0);
		in_key = key || (in_key && strncmp(line, "#\t", 2) == 0);
		if (strncmp(line, "#[service ", 10) == 0) {
			in_service = true;
			line++, len--;
		} else if (in_key) {
			line++, len--;
			*(in_service ? &service_keys : &keys) += key;
		}
		memmove(out, line, len);
		out += len;
		line += len;
	}
	*out = '\0';
	print_message("%zu keys documented, and %zu of a [service] section\n", keys, service_keys);
	assert_int_equal(keys, 31);        /* every key of lib/config.c's table */
	assert_int_equal(service_keys, 7); /* and of its service_keys */
	int r = mg_config_parse_string(&c, text, path, err, sizeof(err));
	if (r != 0)
		print_error("uncommented %s: %s\n", path, err);
	assert_int_equal(r, 0);
	if (c.service_error[0])
		print_error("uncommented %s: %s\n", path, c.service_error);
	/* The example service, at the defaults. */
	d.n_services = 1;
	mg_service_config_defaults(&d.services[0], "example.service");
	assert_config_equal(&c, &d);
	free(text);
}

/* --config /dev/zero used to read forever: a configuration file is at most
 * MG_CONFIG_MAX_BYTES. */
static void load_bounds(void **state)
{
	struct mg_config c;
	char err[PATH_MAX + 256] = "", dir[] = "/tmp/memguard-config-XXXXXX", path[PATH_MAX];
	size_t size = MG_CONFIG_MAX_BYTES;
	char *text = malloc(size + 1);

	mg_config_defaults(&c);
	assert_int_equal(mg_config_load(&c, "/dev/zero", true, NULL, err, sizeof(err)), -EFBIG);
	ft_assert_contains(err, "/dev/zero: larger than 1 MiB");
	assert_null(strchr(err, '\n'));

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/big.conf", dir);
	assert_non_null(text);
	/* comment lines, 64 bytes each: exactly the bound, then one byte more */
	for (size_t i = 0; i < size; i += 64) {
		memset(text + i, ' ', 64);
		text[i] = '#';
		text[i + 63] = '\n';
	}
	text[size] = '\n';
	for (size_t extra = 0; extra <= 1; extra++) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(text, 1, size + extra, f), size + extra);
		assert_int_equal(fclose(f), 0);
		err[0] = '\0';
		int r = mg_config_load(&c, path, true, NULL, err, sizeof(err));
		if (r != (extra ? -EFBIG : 0))
			print_error("%zu bytes: %d (%s)\n", size + extra, r, err);
		assert_int_equal(r, extra ? -EFBIG : 0);
		if (extra)
			ft_assert_contains(err, "larger than 1 MiB");
	}
	free(text);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
#define F(fn) cmocka_unit_test_setup_teardown(fn, setup_files, teardown_files)
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(defaults),
	        cmocka_unit_test(load_bounds),
	        cmocka_unit_test(explicit_defaults_change_nothing),
	        cmocka_unit_test(every_key_parses),
	        cmocka_unit_test(value_forms),
	        cmocka_unit_test(unknown_section_and_key),
	        cmocka_unit_test(bad_values),
	        cmocka_unit_test(failed_parse_leaves_config_unchanged),
	        cmocka_unit_test(first_error_wins),
	        cmocka_unit_test(syntax_errors),
	        cmocka_unit_test(syntax_error_line_matches_reason),
	        cmocka_unit_test(small_error_buffer),
	        cmocka_unit_test(long_comment_stays_a_comment),
	        cmocka_unit_test(long_list_is_read_whole),
	        cmocka_unit_test(shipped_config_documents_the_defaults),
	        cmocka_unit_test(service_sections),
	        cmocka_unit_test(service_mistakes_kept),
	        F(load_main_and_dropins_in_order),
	        F(load_service_dropins),
	        F(load_missing_main),
	        F(load_without_dropins),
	        F(load_bad_dropin_names_itself),
	        F(load_bad_main_names_itself),
	        F(load_dropin_dir_not_a_directory),
	};
#undef F

	return cmocka_run_group_tests(tests, NULL, NULL);
}
