/* What a sweep tells while and after it runs: the status line of
 * --progress and SIGALRM (mg_farm_status_format), the sizing advice
 * (mg_sizing_advise, mg_report_sizing) and the table of a large run, which
 * leads with the failures and sums up the rest. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "farm/farm.h"
#include "farm/sizing.h"
#include "report/report.h"

#define MiB (1ull << 20)

static void status_lines(void **state)
{
	static const struct {
		struct mg_farm_counts c;
		const char *want;
	} cases[] = {
	        {{.total = 400,
	          .running = 16,
	          .in_use = 1600 * MiB,
	          .budget = 1600 * MiB,
	          .elapsed_usec = 5000000},
	         "0/400 done (0 failed), 16 running, 0 retried, 0 OOM kills, budget 1.6GiB/1.6GiB in use, "
	         "ETA ?"},
	        {{.total = 400,
	          .ok = 98,
	          .failed = 2,
	          .running = 16,
	          .retried = 3,
	          .memory_kills = 1,
	          .in_use = 800 * MiB,
	          .budget = 1600 * MiB,
	          .elapsed_usec = 100 * 1000000ull},
	         "100/400 done (2 failed), 16 running, 3 retried, 1 OOM kill, budget 800MiB/1.6GiB in use, "
	         "ETA "
	         "5m00s"},
	        {{.total = 10, .ok = 1, .elapsed_usec = 2 * 3600 * 1000000ull},
	         "1/10 done (0 failed), 0 running, 0 retried, 0 OOM kills, budget 0B/0B in use, ETA 18h00m"},
	        {{.total = 3, .ok = 2, .failed = 1, .memory_kills = 2, .elapsed_usec = 1},
	         "3/3 done (1 failed), 0 running, 0 retried, 2 OOM kills, budget 0B/0B in use, done"},
	};
	char buf[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		mg_farm_status_format(&cases[i].c, buf, sizeof(buf));
		if (strcmp(buf, cases[i].want) != 0)
			print_error("case %zu: \"%s\"\n", i, buf);
		assert_string_equal(buf, cases[i].want);
	}
}

static void sizing_table(void **state)
{
	uint64_t one[] = {100 * MiB};
	uint64_t ten[] = {10 * MiB, 1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB,
	                  5 * MiB,  6 * MiB, 7 * MiB, 8 * MiB, 9 * MiB};
	uint64_t big[] = {900 * MiB};
	struct mg_sizing z;

	assert_int_equal(mg_sizing_advise(one, 0, 1000 * MiB, 0, &z), -ENODATA);
	assert_int_equal(mg_sizing_advise(one, 1, 1000 * MiB, 0, &z), 0);
	assert_int_equal(z.median, 100 * MiB);
	assert_int_equal(z.p95, 100 * MiB);
	assert_int_equal(z.suggest_share, 120 * MiB);
	assert_int_equal(z.suggest_n, 8);

	assert_int_equal(mg_sizing_advise(ten, 10, 100 * MiB, 0, &z), 0);
	assert_int_equal(z.n, 10);
	assert_int_equal(z.median, 5 * MiB); /* nearest rank: the 5th of 10 */
	assert_int_equal(z.p95, 10 * MiB);   /* the 10th */
	assert_int_equal(z.max, 10 * MiB);
	assert_int_equal(z.suggest_share, 12 * MiB);
	assert_int_equal(z.suggest_n, 8);

	/* more than the budget: the whole budget, one at a time */
	assert_int_equal(mg_sizing_advise(big, 1, 1000 * MiB, 0, &z), 0);
	assert_int_equal(z.suggest_share, 1000 * MiB);
	assert_int_equal(z.suggest_n, 1);

	/* B4: -n at most the CPUs (before: -n 569 on a 2-core host) */
	uint64_t small[] = {28 * MiB};
	assert_int_equal(mg_sizing_advise(small, 1, 20 * 1024 * MiB, 2, &z), 0);
	assert_int_equal(z.suggest_share, 34 * MiB);
	assert_int_equal(z.suggest_fit, 602);
	assert_int_equal(z.suggest_n, 2);
}

/* B4, as the trial found it: CPython tasks peaking at 28 MiB resident but
 * 200 MiB of address space under an RLIMIT_AS that is their share. The
 * advice must fit under that limit (before: --mem-per-task 34MiB, and all 5
 * tasks of the next run failed with MemoryError), say what it rests on and
 * what lifting the limit would allow; its -n stays within the 2 CPUs. */
static void sizing_under_rlimit_as(void **state)
{
	struct mg_task tasks[5];
	struct mg_run_info info = {.mode = "cgroup",
	                           .where = "run",
	                           .share = 4096 * MiB,
	                           .budget = 20 * 1024 * MiB,
	                           .parallel = 2,
	                           .cpus = 2,
	                           .advise = true};
	char buf[768];

	for (unsigned i = 0; i < 5; i++)
		tasks[i] = (struct mg_task){.index = i,
		                            .state = MG_TASK_DONE,
		                            .exited = true,
		                            .share = 4096 * MiB,
		                            .rlimit_as = 4096 * MiB,
		                            .peak = (24 + i) * MiB,
		                            .peak_known = true,
		                            .as_peak = (180 + 5 * i) * MiB,
		                            .as_peak_known = true};
	mg_report_sizing(&info, tasks, 5, buf, sizeof(buf));
	print_message("%s\n", buf);
	assert_non_null(strstr(buf,
	                       "max 28MiB, against a 4GiB share; their address space reached 200MiB under "
	                       "RLIMIT_AS, which is the share; --mem-per-task 240MiB would fit them all "
	                       "with 20% to spare (34MiB with --rlimit-as off), and 85 such tasks fit the "
	                       "20GiB budget (-n 2, as many as the 2 CPUs)"));

	/* Elastic: RLIMIT_AS is the budget, not the share: resident memory decides. */
	for (unsigned i = 0; i < 5; i++)
		tasks[i].rlimit_as = 20 * 1024 * MiB;
	mg_report_sizing(&info, tasks, 5, buf, sizeof(buf));
	assert_non_null(
	        strstr(buf, "--mem-per-task 34MiB would fit them all with 20% to spare, and 602 such"));
	assert_null(strstr(buf, "address space"));
}

static char *table(const struct mg_run_info *info, const struct mg_task *tasks, size_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	mg_report_table(out, info, tasks, n);
	assert_int_equal(fclose(out), 0);
	return text;
}

static size_t count(const char *text, const char *needle)
{
	size_t k = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		k++;
	return k;
}

/* 400 tasks, 2 failed: two rows, the rest summed up, and the advice. */
static void large_table_leads_with_failures(void **state)
{
	static struct mg_task tasks[400];
	struct mg_run_info info = {.mode = "cgroup",
	                           .where = "run",
	                           .share = 100 * MiB,
	                           .budget = 1600 * MiB,
	                           .parallel = 16,
	                           .advise = true};

	for (unsigned i = 0; i < 400; i++)
		tasks[i] = (struct mg_task){.index = i,
		                            .state = MG_TASK_DONE,
		                            .exited = true,
		                            .param = "p",
		                            .share = 100 * MiB,
		                            .peak = (uint64_t)(i % 50 + 1) * MiB,
		                            .peak_known = true};
	tasks[17].wait_status = 3 << 8;
	tasks[301].wait_status = 9; /* SIGKILL */
	char *text = table(&info, tasks, 400);

	assert_int_equal(count(text, "  | p"), 2);
	assert_non_null(strstr(text, "    18  exit 3")); /* tasks[17], numbered from 1 */
	assert_non_null(strstr(text, "   302  SIGKILL"));
	assert_non_null(strstr(
	        text,
	        "memguard: 398 tasks that succeeded not shown (every row is in --report and --joblog)\n"));
	assert_non_null(strstr(text, "memguard: 398 succeeded, 2 failed\n"));
	assert_non_null(strstr(text,
	                       "memguard: sizing: the peaks of the 398 tasks that succeeded: median 26MiB, "
	                       "95th percentile 48MiB, max 50MiB, against a 100MiB share; --mem-per-task "
	                       "60MiB would fit them all with 20% to spare, and 26 such tasks fit the "
	                       "1.6GiB budget (-n 26)\n"));
	free(text);

	/* 40 tasks: every row, as before */
	text = table(&info, tasks, 40);
	assert_int_equal(count(text, "  | p"), 40);
	assert_null(strstr(text, "not shown"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(status_lines),
	        cmocka_unit_test(sizing_table),
	        cmocka_unit_test(sizing_under_rlimit_as),
	        cmocka_unit_test(large_table_leads_with_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
