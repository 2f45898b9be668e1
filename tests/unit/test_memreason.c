/* The verdict on a failed task near its memory limits: mg_memreason_judge,
 * mg_memreason_format, mg_task_memory_end and the VmPeak parser. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_tree.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "report/memreason.h"
#include "task.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* A task in its own cgroup (strict: memory.max = share) that exited code. */
static struct mg_task cg_task(int code)
{
	return (struct mg_task){
	        .state = MG_TASK_DONE,
	        .pid = 1000,
	        .cgfd = -1,
	        .in_cgroup = true,
	        .exited = true,
	        .wait_status = W_EXITCODE(code, 0),
	        .share = 200 * MiB,
	        .limit = 200 * MiB,
	        .peak = 50 * MiB,
	        .peak_known = true,
	};
}

/* The same under RLIMIT_AS = 150MiB, with as_peak reached. */
static struct mg_task as_task(int code, uint64_t as_peak)
{
	struct mg_task t = cg_task(code);
	t.rlimit_as = 150 * MiB;
	t.as_peak = as_peak;
	t.as_peak_known = true;
	return t;
}

/* Degraded: no cgroup, peak is the watchdog's largest RSS. */
static struct mg_task degraded_task(int code, uint64_t rss)
{
	struct mg_task t = cg_task(code);
	t.in_cgroup = false;
	t.limit = 0;
	t.peak = rss;
	return t;
}

static struct mg_task with_signal(struct mg_task t, int sig)
{
	t.wait_status = sig; /* as waitpid() reports a death by sig, without a core */
	return t;
}

struct judge_case {
	const char *name;
	struct mg_task task;
	enum mg_near_limit near;
	unsigned percent;
	bool at_least;
	const char *clause; /* exact, from mg_memreason_format */
};

static void judge_table(void **state)
{
	struct mg_task as_and_max = as_task(1, 149 * MiB);
	as_and_max.peak = 199 * MiB;
	struct mg_task max_89 = cg_task(1);
	max_89.peak = 178 * MiB; /* 89% */
	struct mg_task max_90 = cg_task(1);
	max_90.peak = 180 * MiB;
	struct mg_task max_events = cg_task(1);
	max_events.events.max = 3;
	struct mg_task max_no_peak = cg_task(1);
	max_no_peak.peak_known = false;
	max_no_peak.peak = 0;
	max_no_peak.events.max = 1;
	struct mg_task elastic = cg_task(2);
	elastic.limit = 1 * GiB;
	elastic.peak = 1000 * MiB;
	elastic.events.max = 2;
	struct mg_task elastic_at_share = cg_task(2);
	elastic_at_share.limit = 1 * GiB;
	elastic_at_share.peak = 200 * MiB; /* the whole share, a fifth of memory.max */
	struct mg_task oom_child = cg_task(1);
	oom_child.peak = 199 * MiB;
	oom_child.events.oom_kill = 1; /* said as an OOM kill already */
	struct mg_task oom_group = with_signal(cg_task(0), SIGKILL);
	oom_group.peak = 200 * MiB;
	oom_group.events.oom_group_kill = 1;
	struct mg_task grace = with_signal(as_task(0, 149 * MiB), SIGKILL);
	grace.killed_by = MG_KILL_GRACE;
	struct mg_task daemon = with_signal(cg_task(0), SIGKILL);
	daemon.killed_by = MG_KILL_DAEMON;
	daemon.peak = 199 * MiB;
	struct mg_task watchdog = with_signal(degraded_task(0, 300 * MiB), SIGKILL);
	watchdog.killed_by = MG_KILL_WATCHDOG;
	struct mg_task as_unknown = as_task(1, 0);
	as_unknown.as_peak_known = false;
	struct mg_task no_rlimit = as_task(1, 149 * MiB);
	no_rlimit.rlimit_as = 0;
	struct mg_task exec_failed = as_task(127, 149 * MiB);
	exec_failed.exec_errno = ENOENT;
	struct mg_task never_ran = as_task(0, 149 * MiB);
	never_ran.exited = false;
	struct mg_task unlimited = cg_task(1);
	unlimited.limit = MG_SIZE_UNLIMITED;
	unlimited.peak = 100 * GiB;
	struct mg_task huge = as_task(1, UINT64_MAX);
	huge.rlimit_as = UINT64_MAX - 1;
	struct mg_task degraded_as = degraded_task(1, 10 * MiB);
	degraded_as.rlimit_as = 200 * MiB;
	degraded_as.as_peak = 195 * MiB;
	degraded_as.as_peak_known = true;

	const struct judge_case cases[] = {
	        {"AS 97%, exit 1", as_task(1, 146 * MiB), MG_NEAR_RLIMIT_AS, 97, true,
	         " after reaching at least 97% of its 150MiB address-space limit (RLIMIT_AS): likely out of "
	         "address space (a MemoryError in Python)"},
	        {"AS exactly 90%", as_task(1, 135 * MiB), MG_NEAR_RLIMIT_AS, 90, true, NULL},
	        {"AS just below 90%", as_task(1, 135 * MiB - 1), MG_NEAR_NONE, 0, false, ""},
	        {"AS 97%, exit 0", as_task(0, 146 * MiB), MG_NEAR_NONE, 0, false, ""},
	        {"AS 97%, SIGABRT", with_signal(as_task(0, 146 * MiB), SIGABRT), MG_NEAR_RLIMIT_AS, 97, true,
	         NULL},
	        {"AS first, memory.max near too", as_and_max, MG_NEAR_RLIMIT_AS, 99, true, NULL},
	        {"AS peak unknown", as_unknown, MG_NEAR_NONE, 0, false, ""},
	        {"no RLIMIT_AS", no_rlimit, MG_NEAR_NONE, 0, false, ""},
	        {"far below everything", cg_task(1), MG_NEAR_NONE, 0, false, ""},
	        {"memory.max 89%", max_89, MG_NEAR_NONE, 0, false, ""},
	        {"memory.max 90%", max_90, MG_NEAR_MEMORY_MAX, 90, false,
	         " after reaching 90% of its 200MiB share (memory.max): possibly out of memory"},
	        {"memory.max events, peak low", max_events, MG_NEAR_MEMORY_MAX, 25, false,
	         " after reaching 25% of its 200MiB share (memory.max), hit 3 times: possibly out of memory"},
	        {"memory.max event, no memory.peak", max_no_peak, MG_NEAR_MEMORY_MAX, 0, false,
	         " after reaching its 200MiB share (memory.max), hit 1 time: possibly out of memory"},
	        {"elastic: the budget", elastic, MG_NEAR_MEMORY_MAX, 97, false,
	         " after reaching 97% of its 1GiB limit (memory.max; a 200MiB share), hit 2 times: "
	         "possibly out of memory"},
	        {"elastic: at the share only", elastic_at_share, MG_NEAR_NONE, 0, false, ""},
	        {"memory.max unlimited", unlimited, MG_NEAR_NONE, 0, false, ""},
	        {"OOM kill of a child", oom_child, MG_NEAR_NONE, 0, false, ""},
	        {"OOM group kill", oom_group, MG_NEAR_NONE, 0, false, ""},
	        {"memguard's grace kill", grace, MG_NEAR_NONE, 0, false, ""},
	        {"memguardd's kill", daemon, MG_NEAR_NONE, 0, false, ""},
	        {"watchdog kill", watchdog, MG_NEAR_NONE, 0, false, ""},
	        {"exec failed", exec_failed, MG_NEAR_NONE, 0, false, ""},
	        {"never ran", never_ran, MG_NEAR_NONE, 0, false, ""},
	        {"degraded: RSS 95% of the share", degraded_task(1, 190 * MiB), MG_NEAR_SHARE_RSS, 95, true,
	         " after reaching at least 95% of its 200MiB share (RSS): likely out of memory"},
	        {"degraded: SIGSEGV at RSS 95%", with_signal(degraded_task(0, 190 * MiB), SIGSEGV),
	         MG_NEAR_SHARE_RSS, 95, true, NULL},
	        {"degraded: RSS 50%", degraded_task(1, 100 * MiB), MG_NEAR_NONE, 0, false, ""},
	        {"degraded: RLIMIT_AS first", degraded_as, MG_NEAR_RLIMIT_AS, 97, true, NULL},
	        {"no overflow near UINT64_MAX", huge, MG_NEAR_RLIMIT_AS, 100, true, NULL},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct judge_case *c = &cases[i];
		struct mg_memreason v;
		char buf[256];
		bool got = mg_memreason_judge(&c->task, &v);

		if (v.near != c->near || v.percent != c->percent || v.at_least != c->at_least)
			print_error("%s: near %d %u%% at_least %d; want %d %u%% %d\n", c->name, v.near,
			            v.percent, v.at_least, c->near, c->percent, c->at_least);
		assert_int_equal(got, c->near != MG_NEAR_NONE);
		assert_int_equal(v.near, c->near);
		assert_int_equal(v.percent, c->percent);
		assert_int_equal(v.at_least, c->at_least);
		memset(buf, 'X', sizeof(buf));
		assert_ptr_equal(mg_memreason_format(&v, c->task.share, buf, sizeof(buf)), buf);
		if (c->clause && strcmp(buf, c->clause) != 0)
			print_error("%s: \"%s\"; want \"%s\"\n", c->name, buf, c->clause);
		if (c->clause)
			assert_string_equal(buf, c->clause);
		/* "at least" exactly when sampled. */
		assert_int_equal(strstr(buf, "at least") != NULL, c->at_least);
		/* Likely but near memory.max, which page cache fills too. */
		assert_int_equal(v.likely, got && c->near != MG_NEAR_MEMORY_MAX);
		enum mg_memory_end end = mg_task_memory_end(&c->task);
		if (got)
			assert_int_equal(end, v.likely ? MG_MEMORY_END_LIKELY : MG_MEMORY_END_POSSIBLE);
		else /* none, or killed for memory (memory_end_table) */
			assert_true(end == MG_MEMORY_END_NONE || end == MG_MEMORY_END_KILLED);
	}
}

static void memory_end_table(void **state)
{
	struct mg_task oom = with_signal(cg_task(0), SIGKILL);
	oom.events.oom_kill = 1;
	struct mg_task watchdog = with_signal(degraded_task(0, 300 * MiB), SIGKILL);
	watchdog.killed_by = MG_KILL_WATCHDOG;
	struct mg_task daemon = with_signal(cg_task(0), SIGKILL);
	daemon.killed_by = MG_KILL_DAEMON;
	struct mg_task grace_after_oom = with_signal(cg_task(0), SIGKILL);
	grace_after_oom.killed_by = MG_KILL_GRACE;
	grace_after_oom.events.oom_kill = 1; /* the reason says the grace kill */
	struct mg_task near_max = cg_task(1);
	near_max.peak = 199 * MiB;
	struct mg_task spawn_failed = cg_task(0);
	spawn_failed.spawn_errno = EAGAIN;
	spawn_failed.exited = false;
	const struct {
		const char *name;
		struct mg_task task;
		enum mg_memory_end want;
	} cases[] = {
	        {"ok", cg_task(0), MG_MEMORY_END_NONE},
	        {"exit 1 far below", cg_task(1), MG_MEMORY_END_NONE},
	        {"SIGSEGV far below", with_signal(cg_task(0), SIGSEGV), MG_MEMORY_END_NONE},
	        {"kernel OOM kill", oom, MG_MEMORY_END_KILLED},
	        {"watchdog", watchdog, MG_MEMORY_END_KILLED},
	        {"memguardd", daemon, MG_MEMORY_END_KILLED},
	        {"grace kill", grace_after_oom, MG_MEMORY_END_NONE},
	        {"not started", spawn_failed, MG_MEMORY_END_NONE},
	        {"near RLIMIT_AS", as_task(1, 149 * MiB), MG_MEMORY_END_LIKELY},
	        {"near its share, degraded", degraded_task(1, 199 * MiB), MG_MEMORY_END_LIKELY},
	        {"near memory.max", near_max, MG_MEMORY_END_POSSIBLE},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		if (mg_task_memory_end(&cases[i].task) != cases[i].want)
			print_error("%s: %d; want %d\n", cases[i].name, mg_task_memory_end(&cases[i].task),
			            cases[i].want);
		assert_int_equal(mg_task_memory_end(&cases[i].task), cases[i].want);
	}
	assert_null(mg_memory_end_words(MG_MEMORY_END_NONE));
	assert_string_equal(mg_memory_end_words(MG_MEMORY_END_KILLED), "ran out of memory");
	assert_string_equal(mg_memory_end_words(MG_MEMORY_END_LIKELY), "likely ran out of memory");
	assert_string_equal(mg_memory_end_words(MG_MEMORY_END_POSSIBLE), "may have run out of memory");
}

static void format_small_buffer_and_names(void **state)
{
	struct mg_task t = as_task(1, 146 * MiB);
	struct mg_memreason v, none = {.near = MG_NEAR_NONE};
	char small[16], buf[8] = "XXXXXXX";

	assert_true(mg_memreason_judge(&t, &v));
	mg_memreason_format(&v, t.share, small, sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_string_equal(small, " after reaching");
	assert_string_equal(mg_memreason_format(&none, 0, buf, sizeof(buf)), "");
	assert_string_equal(mg_near_limit_name(MG_NEAR_RLIMIT_AS), "RLIMIT_AS");
	assert_string_equal(mg_near_limit_name(MG_NEAR_MEMORY_MAX), "memory.max");
	assert_string_equal(mg_near_limit_name(MG_NEAR_SHARE_RSS), "share");
	assert_null(mg_near_limit_name(MG_NEAR_NONE));
}

static void vmpeak_parse_table(void **state)
{
	const struct {
		const char *name, *text;
		int want;
		uint64_t bytes;
	} cases[] = {
	        {"status", "Name:\tpython3\nState:\tR (running)\nVmPeak:\t  153600 kB\nVmSize:\t  100 kB\n",
	         0, 153600ull * 1024},
	        {"first line", "VmPeak:\t1 kB\n", 0, 1024},
	        {"no newline at the end", "Name:\tx\nVmPeak:\t42 kB", 0, 42 * 1024},
	        {"zombie: no Vm lines", "Name:\tx\nState:\tZ (zombie)\nThreads:\t1\n", -ENODATA, 0},
	        {"empty", "", -ENODATA, 0},
	        {"a name that looks like it", "Name:\tVmPeak: 5 kB\nVmPeak:\t7 kB\n", 0, 7 * 1024},
	        {"no number", "VmPeak:\t kB\n", -EBADMSG, 0},
	        {"negative", "VmPeak:\t-5 kB\n", -EBADMSG, 0},
	        {"no unit", "VmPeak:\t5\n", -EBADMSG, 0},
	        {"truncated unit", "VmPeak:\t5 k", -EBADMSG, 0},
	        {"overflow in bytes", "VmPeak:\t18446744073709551615 kB\n", -EBADMSG, 0},
	        {"overflow of the number", "VmPeak:\t99999999999999999999999 kB\n", -EBADMSG, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		uint64_t got = 12345;
		int r = mg_status_vmpeak_parse(cases[i].text, &got);
		if (r != cases[i].want)
			print_error("%s: %d; want %d\n", cases[i].name, r, cases[i].want);
		assert_int_equal(r, cases[i].want);
		assert_int_equal(got, r == 0 ? cases[i].bytes : 12345);
	}
}

/* VmPeak and the part of the address space not resident, VmSize - VmRSS. */
static void as_parse_table(void **state)
{
	static const struct {
		const char *text;
		int want;
		uint64_t peak, gap;
	} cases[] = {
	        {"VmPeak:\t 40000 kB\nVmSize:\t 38156 kB\nVmHWM:\t 35144 kB\nVmRSS:\t 35144 kB\n", 0,
	         40000 * 1024, 3012 * 1024},
	        {"VmPeak:\t 4 kB\nVmSize:\t 4 kB\nVmRSS:\t 8 kB\n", 0, 4096, 0}, /* never below 0 */
	        {"VmPeak:\t 4 kB\nVmSize:\t 4 kB\n", -ENODATA, 0, 0},
	        {"Name:\tx\nState:\tZ (zombie)\n", -ENODATA, 0, 0},
	        {"VmPeak:\t 4 kB\nVmSize:\t x kB\nVmRSS:\t 1 kB\n", -EBADMSG, 0, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		uint64_t peak = 0, gap = 0;
		assert_int_equal(mg_status_as_parse(cases[i].text, &peak, &gap), cases[i].want);
		if (cases[i].want)
			continue;
		assert_int_equal(peak, cases[i].peak);
		assert_int_equal(gap, cases[i].gap);
	}
}

static void vmpeak_read_fake_and_real_proc(void **state)
{
	struct fake_tree t;
	uint64_t bytes = 0;

	ft_new(&t);
	ft_write(t.fd, "77/status", "Name:\tpython3\nVmPeak:\t   2048 kB\nVmSize:\t1024 kB\n");
	ft_write(t.fd, "78/status", "Name:\tzombie\nState:\tZ (zombie)\n");
	assert_int_equal(mg_proc_read_vmpeak(t.fd, 77, &bytes), 0);
	assert_int_equal(bytes, 2048 * 1024);
	assert_int_equal(mg_proc_read_vmpeak(t.fd, 78, &bytes), -ENODATA);
	assert_int_equal(mg_proc_read_vmpeak(t.fd, 79, &bytes), -ENOENT);
	ft_free(&t);

	/* The real /proc: our own VmPeak is at least our VmSize, and not nothing. */
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(procfd >= 0);
	assert_int_equal(mg_proc_read_vmpeak(procfd, getpid(), &bytes), 0);
	assert_true(bytes >= 1 * MiB);
	close(procfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(judge_table),
	        cmocka_unit_test(memory_end_table),
	        cmocka_unit_test(format_small_buffer_and_names),
	        cmocka_unit_test(vmpeak_parse_table),
	        cmocka_unit_test(vmpeak_read_fake_and_real_proc),
	        cmocka_unit_test(as_parse_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
