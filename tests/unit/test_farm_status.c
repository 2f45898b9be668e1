/* The status line of --progress and SIGALRM: mg_farm_status_format. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "farm/farm.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(status_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
