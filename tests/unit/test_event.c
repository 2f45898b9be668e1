/* mg_event_arm_timer: arming, re-arming and its errors, on a real sd-event
 * loop (timers need no privilege). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <unistd.h>

#include "memguard/event.h"

struct fired {
	int count;
	sd_event_source *src; /* the source the last call came from */
};

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct fired *f = userdata;

	f->count++;
	f->src = src;
	return 0;
}

/* Runs one iteration of e, waiting at most 5 s; the number of events run. */
static int run_once(sd_event *e)
{
	return sd_event_run(e, 5 * 1000000ull);
}

/* A new timer fires once, with our userdata; re-arming reuses the source
 * and fires it once more. */
static void arm_then_rearm(void **state)
{
	sd_event *e = NULL;
	sd_event_source *src = NULL;
	struct fired f = {0};

	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(mg_event_arm_timer(e, &src, 0, 1000, on_timer, &f), 0);
	assert_non_null(src);
	assert_int_equal(run_once(e), 1);
	assert_int_equal(f.count, 1);
	assert_ptr_equal(f.src, src);
	/* One-shot: nothing is left to run. */
	assert_int_equal(sd_event_run(e, 0), 0);
	assert_int_equal(f.count, 1);

	sd_event_source *first = src;
	assert_int_equal(mg_event_arm_timer(e, &src, 1000, 1000, on_timer, &f), 0);
	assert_ptr_equal(src, first);
	assert_int_equal(run_once(e), 1);
	assert_int_equal(f.count, 2);

	sd_event_source_unref(src);
	sd_event_unref(e);
}

/* Re-arming before it fired moves the time: it fires once, not twice. */
static void rearm_before_firing(void **state)
{
	sd_event *e = NULL;
	sd_event_source *src = NULL;
	struct fired f = {0};
	uint64_t t0, t1;

	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(mg_event_arm_timer(e, &src, 60 * 1000000ull, 1000, on_timer, &f), 0);
	assert_int_equal(mg_event_arm_timer(e, &src, 1000, 1000, on_timer, &f), 0);
	assert_int_equal(sd_event_now(e, CLOCK_MONOTONIC, &t0) >= 0, 1);
	assert_int_equal(run_once(e), 1);
	assert_int_equal(f.count, 1);
	assert_int_equal(sd_event_now(e, CLOCK_MONOTONIC, &t1) >= 0, 1);
	assert_true(t1 - t0 < 5 * 1000000ull);
	assert_int_equal(sd_event_run(e, 0), 0);
	assert_int_equal(f.count, 1);

	sd_event_source_unref(src);
	sd_event_unref(e);
}

/* A source that is no timer cannot be re-armed: -errno, nothing armed. */
static void rearm_not_a_timer(void **state)
{
	sd_event *e = NULL;
	sd_event_source *src = NULL;
	struct fired f = {0};
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(sd_event_new(&e), 0);
	assert_true(sd_event_add_io(e, &src, fds[0], EPOLLIN, NULL, NULL) >= 0);
	int r = mg_event_arm_timer(e, &src, 0, 1000, on_timer, &f);
	assert_true(r < 0);
	assert_int_equal(r, -EDOM);
	assert_int_equal(sd_event_run(e, 0), 0);
	assert_int_equal(f.count, 0);

	sd_event_source_unref(src);
	sd_event_unref(e);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(arm_then_rearm),
	        cmocka_unit_test(rearm_before_firing),
	        cmocka_unit_test(rearm_not_a_timer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
