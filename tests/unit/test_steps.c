/* The steps backend's pure parts: Slurm's host and count lists, the
 * allocation from a batch script's environment, each node's budget, the
 * srun command line, the helper's records and the stream they are taken
 * out of, and where a step's cgroup is. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "memguard/units.h"
#include "run/stepcmd.h"
#include "run/steps.h"
#include "task.h"

static void hostlists(void **state)
{
	static const struct {
		const char *expr;
		int want; /* count, or -errno */
		const char *joined;
	} cases[] = {
	        {"slurmvm", 1, "slurmvm"},
	        {"node[1-2]", 2, "node1 node2"},
	        {"node[01-03,7],gpu1", 5, "node01 node02 node03 node7 gpu1"},
	        {"n[8-11]", 4, "n8 n9 n10 n11"},
	        {"rack[1-2]-n[1-2]", 4, "rack1-n1 rack1-n2 rack2-n1 rack2-n2"},
	        {"a,b,c", 3, "a b c"},
	        {"n[007-009]x", 3, "n007x n008x n009x"},
	        {"", -EINVAL, NULL},
	        {"node[", -EINVAL, NULL},
	        {"node[]", -EINVAL, NULL},
	        {"node[2-1]", -EINVAL, NULL},
	        {"node[a-b]", -EINVAL, NULL},
	        {"node]1[", -EINVAL, NULL},
	        {"a,,b", -EINVAL, NULL},
	        {"a,", -EINVAL, NULL},
	        {"n[1-70000]", -E2BIG, NULL},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char **names = NULL, joined[256] = "";
		int n = mg_hostlist_expand(cases[i].expr, &names);
		if (n != cases[i].want)
			fail_msg("%s: %d, want %d", cases[i].expr, n, cases[i].want);
		for (int k = 0; k < n; k++)
			snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s",
			         k ? " " : "", names[k]);
		if (n > 0) {
			assert_null(names[n]);
			assert_string_equal(joined, cases[i].joined);
		}
		mg_steps_names_free(names);
	}
}

static void countlists(void **state)
{
	unsigned v[4];

	(void)state;
	assert_int_equal(mg_countlist_expand("2(x3),1", v, 4), 0);
	assert_true(v[0] == 2 && v[1] == 2 && v[2] == 2 && v[3] == 1);
	assert_int_equal(mg_countlist_expand("16", v, 1), 0);
	assert_int_equal(v[0], 16);
	assert_int_equal(mg_countlist_expand("1,2", v, 2), 0);
	assert_true(v[0] == 1 && v[1] == 2);
	assert_int_equal(mg_countlist_expand("2(x3)", v, 2), -EINVAL); /* too many */
	assert_int_equal(mg_countlist_expand("2", v, 2), -EINVAL);     /* too few */
	assert_int_equal(mg_countlist_expand("2(3)", v, 1), -EINVAL);
	assert_int_equal(mg_countlist_expand("x", v, 1), -EINVAL);
	assert_int_equal(mg_countlist_expand("1,", v, 1), -EINVAL);
}

static void available(void **state)
{
	char why[256];
	char *batch[] = {"SLURM_JOB_ID=7", "SLURM_JOB_NODELIST=n1", NULL};
	char *step[] = {"SLURM_JOB_ID=7", "SLURM_STEP_ID=0", NULL};
	char *none[] = {"HOME=/", NULL};

	(void)state;
	assert_int_equal(mg_steps_available(batch, why, sizeof(why)), 1);
	assert_int_equal(mg_steps_available(step, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "inside Slurm step 7.0"));
	assert_int_equal(mg_steps_available(none, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "not in a Slurm job"));
}

static void allocation(void **state)
{
	struct mg_steps_alloc a;
	char err[256];

	(void)state;
	/* sbatch --mem=600M -c 2: one Slurm task; its CPUs are the run's to share. */
	char *one[] = {"SLURM_JOB_ID=1",
	               "SLURM_JOB_NODELIST=slurmvm",
	               "SLURM_JOB_CPUS_PER_NODE=2",
	               "SLURM_MEM_PER_NODE=600",
	               "SLURM_CPUS_PER_TASK=2",
	               "SLURMD_NODENAME=slurmvm",
	               "SLURM_TASKS_PER_NODE=1",
	               NULL};
	assert_int_equal(mg_steps_alloc_from_env(one, &a, err, sizeof(err)), 0);
	assert_int_equal(a.nnodes, 1);
	assert_string_equal(a.nodes[0].name, "slurmvm");
	assert_int_equal(a.nodes[0].cpus, 2);
	assert_int_equal(a.nodes[0].mem, 600ull << 20);
	assert_int_equal(a.self, 0);
	assert_string_equal(a.job_id, "1");
	mg_steps_alloc_done(&a);

	/* sbatch -N2 --ntasks-per-node=2 -c 2 --mem-per-cpu=100M: several Slurm
	 * tasks, each sized by -c; memory per CPU; we run on node2. */
	char *two[] = {"SLURM_JOB_ID=9",
	               "SLURM_JOB_NODELIST=node[1-2]",
	               "SLURM_JOB_CPUS_PER_NODE=4(x2)",
	               "SLURM_MEM_PER_CPU=100",
	               "SLURM_CPUS_PER_TASK=2",
	               "SLURM_NTASKS=4",
	               "SLURMD_NODENAME=node2",
	               NULL};
	assert_int_equal(mg_steps_alloc_from_env(two, &a, err, sizeof(err)), 0);
	assert_int_equal(a.nnodes, 2);
	assert_string_equal(a.nodes[1].name, "node2");
	assert_int_equal(a.nodes[1].cpus, 4);
	assert_int_equal(a.nodes[1].mem, 400ull << 20);
	assert_int_equal(a.self, 1);
	mg_steps_alloc_done(&a);

	/* salloc's shell on a login node: none of the nodes is ours; --mem=0. */
	char *login[] = {"SLURM_JOB_ID=3", "SLURM_NODELIST=c[1-3]", "SLURM_JOB_CPUS_PER_NODE=8(x3)",
	                 "SLURM_MEM_PER_NODE=0", NULL};
	assert_int_equal(mg_steps_alloc_from_env(login, &a, err, sizeof(err)), 0);
	assert_int_equal(a.self, SIZE_MAX);
	assert_int_equal(a.nodes[2].mem, MG_SIZE_UNLIMITED);
	mg_steps_alloc_done(&a);

	char *mismatch[] = {"SLURM_JOB_ID=3", "SLURM_JOB_NODELIST=c[1-3]", "SLURM_JOB_CPUS_PER_NODE=8(x2)",
	                    NULL};
	assert_int_equal(mg_steps_alloc_from_env(mismatch, &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "does not match the 3 nodes"));
	char *nolist[] = {"SLURM_JOB_ID=3", NULL};
	assert_int_equal(mg_steps_alloc_from_env(nolist, &a, err, sizeof(err)), -EINVAL);
	char *badmem[] = {"SLURM_JOB_ID=3", "SLURM_JOB_NODELIST=c1", "SLURM_MEM_PER_NODE=lots", NULL};
	assert_int_equal(mg_steps_alloc_from_env(badmem, &a, err, sizeof(err)), -EINVAL);
}

static void node_budgets(void **state)
{
	(void)state;
	/* 600 MiB, 6 MiB held, 2 steps at 8 MiB each: 578 MiB. */
	assert_int_equal(mg_steps_node_budget(600ull << 20, 6ull << 20, 2), 578ull << 20);
	/* Rounded down to whole MiB. */
	assert_int_equal(mg_steps_node_budget((600ull << 20) + 4096, 0, 1), 592ull << 20);
	assert_int_equal(mg_steps_node_budget(16ull << 20, 8ull << 20, 1), 0);
	assert_int_equal(mg_steps_node_budget(16ull << 20, 20ull << 20, 1), 0);
	assert_int_equal(mg_steps_node_budget(MG_SIZE_UNLIMITED, 0, 1), 0);
	assert_int_equal(mg_steps_share((100ull << 20) + 12345), 100ull << 20);
}

#define MiB (1ull << 20)

static void plans(void **state)
{
	struct mg_step_node nodes[] = {
	        {"n1", 2, 600 * MiB},
	        {"n2", 4, 1000 * MiB},
	        {"n3", 1, MG_SIZE_UNLIMITED},
	};
	struct mg_steps_alloc a = {.nodes = nodes, .nnodes = 3, .self = 0};
	struct mg_node_pool pools[3];
	char err[256];
	struct mg_steps_plan_input in = {
	        .alloc = &a,
	        .everywhere = true,
	        .parallel = 2,
	        .usable_here = 580 * MiB,
	        .held_here = 10 * MiB,
	        .mem_option = MG_SIZE_UNLIMITED,
	};

	(void)state;
	/* Here: 580 - 10 - 8 × 6 sruns = 522; n2: its grant 1000 - 16; n3: the whole node, so ours. */
	assert_int_equal(mg_steps_plan(&in, pools, err, sizeof(err)), 3);
	assert_string_equal(pools[0].name, "n1");
	assert_int_equal(pools[0].budget, 522 * MiB);
	assert_int_equal(pools[0].share, 261 * MiB);
	assert_int_equal(pools[0].cpus, 2);
	/* The node's CPUs split over -n 2: 1 on n1 and n3, 2 on n2. */
	assert_int_equal(pools[0].step_cpus, 1);
	assert_int_equal(pools[1].step_cpus, 2);
	assert_int_equal(pools[2].step_cpus, 1);
	assert_int_equal(pools[1].budget, 984 * MiB);
	assert_int_equal(pools[1].share, 492 * MiB);
	assert_int_equal(pools[2].budget, 564 * MiB);
	assert_int_equal(pools[2].parallel, 2);
	/* --mem caps the other nodes too. */
	in.mem_option = 400 * MiB;
	assert_int_equal(mg_steps_plan(&in, pools, err, sizeof(err)), 3);
	assert_int_equal(pools[1].budget, 384 * MiB);
	/* N copies stay on memguard's node: one pool, with only its own sruns. */
	in.everywhere = false;
	in.mem_option = MG_SIZE_UNLIMITED;
	a.self = 1;
	in.usable_here = 900 * MiB;
	assert_int_equal(mg_steps_plan(&in, pools, err, sizeof(err)), 1);
	assert_string_equal(pools[0].name, "n2");
	assert_int_equal(pools[0].budget, (900 - 10 - 16) * MiB);
	/* memguard on none of them (an salloc shell on a login node): the first. */
	a.self = SIZE_MAX;
	assert_int_equal(mg_steps_plan(&in, pools, err, sizeof(err)), 1);
	assert_string_equal(pools[0].name, "n1");
	assert_int_equal(pools[0].budget, (600 - 16) * MiB);
	/* A share that does not fit is said. */
	in.mem_per_task = 400 * MiB;
	assert_int_equal(mg_steps_plan(&in, pools, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "node n1"));
	assert_non_null(strstr(err, "8 MiB beside its share"));
	in.mem_per_task = 0;
	in.min_share = 300 * MiB;
	assert_int_equal(mg_steps_plan(&in, pools, err, sizeof(err)), -ERANGE);
	/* --mem-per-task in whole MiB. */
	in.min_share = 0;
	in.mem_per_task = 100 * MiB + 7;
	assert_int_equal(mg_steps_plan(&in, pools, err, sizeof(err)), 1);
	assert_int_equal(pools[0].share, 100 * MiB);

	/* sbatch -c 8: -n 1 gets all 8, -n 3 two each (three do not fit at once), -n 16 one each. */
	struct mg_step_node eight[] = {{"c1", 8, 4000 * MiB}};
	struct mg_steps_alloc b = {.nodes = eight, .nnodes = 1, .self = 0};
	struct mg_steps_plan_input c = {
	        .alloc = &b, .parallel = 1, .usable_here = 3000 * MiB, .mem_option = MG_SIZE_UNLIMITED};
	static const unsigned n_at_once[] = {1, 3, 16}, want_cpus[] = {8, 2, 1};
	for (size_t k = 0; k < 3; k++) {
		c.parallel = n_at_once[k];
		assert_int_equal(mg_steps_plan(&c, pools, err, sizeof(err)), 1);
		assert_int_equal(pools[0].step_cpus, want_cpus[k]);
	}
	/* --step-cpus wins, and must fit the node. */
	c.cpus_option = 4;
	assert_int_equal(mg_steps_plan(&c, pools, err, sizeof(err)), 1);
	assert_int_equal(pools[0].step_cpus, 4);
	c.cpus_option = 9;
	assert_int_equal(mg_steps_plan(&c, pools, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "a step of 9 CPUs does not fit in the job's 8"));
}

static void srun_command_line(void **state)
{
	char *cmd[] = {"python3", "sim.py", "--x", "a b", NULL};
	struct mg_step_request req = {
	        .self = "/usr/bin/memguard",
	        .node = "node2",
	        .cpus = 1,
	        .share = 181ull << 20,
	        .seq = 7,
	        .nonce = "0123456789abcdef",
	        .rlimit_as = 190000000,
	        .grace_usec = 10000000,
	        .command = cmd,
	};
	static const char *const want[] = {
	        "srun",
	        "--exact",
	        "--nodes=1",
	        "--ntasks=1",
	        "--cpus-per-task=1",
	        "--mem=181M",
	        "--nodelist=node2",
	        "--job-name=task-7",
	        "/usr/bin/memguard",
	        "step",
	        "--nonce=0123456789abcdef",
	        "--share=189792256",
	        "--rlimit-as=190000000",
	        "--grace=10000000us",
	        "--",
	        "python3",
	        "sim.py",
	        "--x",
	        "a b",
	        NULL,
	};
	char **argv = mg_steps_srun_argv(&req);

	(void)state;
	assert_non_null(argv);
	for (size_t i = 0; want[i]; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[sizeof(want) / sizeof(*want) - 1]);
	mg_steps_names_free(argv);
	req.node = NULL;
	argv = mg_steps_srun_argv(&req);
	for (size_t i = 0; argv[i]; i++)
		assert_null(strstr(argv[i], "--nodelist"));
	mg_steps_names_free(argv);
}

static void records(void **state)
{
	struct mg_step_record in = {.limit = 104857600}, out = {0};
	char buf[1024];
	const char *nonce = "00112233aabbccdd";
	size_t skip = strlen(MG_STEP_MARK) + 1 + strlen(nonce) + 1;

	(void)state;
	snprintf(in.step, sizeof(in.step), "1.4");
	snprintf(in.node, sizeof(in.node), "slurmvm");
	mg_step_record_format_start(nonce, &in, buf, sizeof(buf));
	assert_int_equal(buf[strlen(buf) - 1], '\n');
	buf[strlen(buf) - 1] = '\0';
	assert_int_equal(mg_step_record_parse(buf + skip, &out), 0);
	assert_true(out.started && !out.ended);
	assert_string_equal(out.step, "1.4");
	assert_string_equal(out.node, "slurmvm");
	assert_int_equal(out.limit, 104857600);

	in.limit = MG_SIZE_UNLIMITED;
	mg_step_record_format_start(nonce, &in, buf, sizeof(buf));
	buf[strlen(buf) - 1] = '\0';
	assert_int_equal(mg_step_record_parse(buf + skip, &out), 0);
	assert_int_equal(out.limit, MG_SIZE_UNLIMITED);

	in = (struct mg_step_record){.status = 9,
	                             .peak = 104853504,
	                             .peak_known = true,
	                             .as_peak = 5,
	                             .as_peak_known = true,
	                             .watchdog = true,
	                             .events = {.oom = 1, .oom_kill = 1, .max = 42, .high = 3}};
	mg_step_record_format_end(nonce, &in, buf, sizeof(buf));
	buf[strlen(buf) - 1] = '\0';
	assert_int_equal(mg_step_record_parse(buf + skip, &out), 0);
	assert_true(out.ended);
	assert_int_equal(out.status, 9);
	assert_int_equal(out.peak, 104853504);
	assert_true(out.peak_known && !out.peak_sampled && out.watchdog && out.as_peak_known);
	assert_int_equal(out.as_peak, 5);
	assert_int_equal(out.events.oom_kill, 1);
	assert_int_equal(out.events.max, 42);
	assert_int_equal(out.events.high, 3);

	/* A newer helper's keys are skipped; bad values are not. */
	assert_int_equal(mg_step_record_parse("end status=0 future=1", &out), 0);
	assert_int_equal(mg_step_record_parse("end status=x", &out), -EINVAL);
	assert_int_equal(mg_step_record_parse("end status", &out), -EINVAL);
	assert_int_equal(mg_step_record_parse("middle", &out), -EINVAL);
	assert_int_equal(mg_step_record_parse("end watchdog=2", &out), -EINVAL);
}

struct sink {
	char text[8192];
	size_t len;
	unsigned calls;
};

static void sink_out(void *ctx, const char *data, size_t len)
{
	struct sink *k = ctx;

	assert_true(k->len + len < sizeof(k->text));
	memcpy(k->text + k->len, data, len);
	k->len += len;
	k->text[k->len] = '\0';
	k->calls++;
}

/* Feeds text in pieces of `piece` bytes. */
static void feed(struct mg_step_stream *st, const char *text, size_t piece, struct sink *k)
{
	for (size_t at = 0, len = strlen(text); at < len; at += piece)
		mg_step_stream_feed(st, text + at, len - at < piece ? len - at : piece, sink_out, k);
	mg_step_stream_finish(st, sink_out, k);
}

static void stream(void **state)
{
	const char *nonce = "feedfacecafebeef";
	char start[256], end[512], text[2048];
	struct mg_step_record s = {.limit = 1 << 20}, e = {.status = 3 << 8, .peak = 7, .peak_known = true};

	(void)state;
	snprintf(s.step, sizeof(s.step), "5.2");
	mg_step_record_format_start(nonce, &s, start, sizeof(start));
	mg_step_record_format_end(nonce, &e, end, sizeof(end));
	/* The task's words, a partial last line, srun's own error line. */
	snprintf(text, sizeof(text), "%serr1\nsrun: error: node1: task 0: Exited with exit code 3\npartial%s",
	         start, end);
	for (size_t piece = 1; piece <= strlen(text); piece *= 3) {
		struct mg_step_stream st = {0};
		struct sink k = {0};
		snprintf(st.nonce, sizeof(st.nonce), "%s", nonce);
		feed(&st, text, piece, &k);
		assert_string_equal(k.text,
		                    "err1\nsrun: error: node1: task 0: Exited with exit code 3\npartial");
		assert_true(st.rec.started && st.rec.ended && !st.bad && !st.rec.srun_oom);
		assert_string_equal(st.rec.step, "5.2");
		assert_int_equal(st.rec.status, 3 << 8);
	}
	/* srun's verdict, passed on and noted. */
	{
		struct mg_step_stream o = {0};
		struct sink ko = {0};
		const char *said = "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=2.1.\n"
		                   "srun: error: slurmvm: task 0: Out Of Memory\n";
		snprintf(o.nonce, sizeof(o.nonce), "%s", nonce);
		feed(&o, said, 10, &ko);
		assert_string_equal(ko.text, said);
		assert_true(o.rec.srun_oom);
	}
	/* The same words from the task itself, before the helper's end, are no OOM kill;
	 * srun's after it are. */
	{
		char both[1024];
		const char *line = "srun: error: slurmvm: task 0: Out Of Memory\n";
		snprintf(both, sizeof(both), "%s%s%s", start, line, end);
		struct mg_step_stream o = {0};
		struct sink ko = {0};
		snprintf(o.nonce, sizeof(o.nonce), "%s", nonce);
		feed(&o, both, 5, &ko);
		assert_true(o.rec.ended);
		assert_false(o.rec.srun_oom);
		feed(&o, line, 5, &ko);
		assert_true(o.rec.srun_oom);
	}
	/* Another run's nonce, or a forged mark without one, is text. */
	struct mg_step_stream st = {0};
	struct sink k = {0};
	snprintf(st.nonce, sizeof(st.nonce), "%s", "0000000000000000");
	feed(&st, end, 7, &k);
	assert_string_equal(k.text, end);
	assert_false(st.rec.ended);
	/* Output with no newline and no mark goes out at once, not held. */
	st = (struct mg_step_stream){0};
	k = (struct sink){0};
	snprintf(st.nonce, sizeof(st.nonce), "%s", nonce);
	mg_step_stream_feed(&st, "progress 10%", 12, sink_out, &k);
	assert_string_equal(k.text, "progress 10%");
	assert_int_equal(st.nheld, 0);
	/* A line longer than the buffer still goes out whole. */
	char big[9000];
	memset(big, 'x', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	st = (struct mg_step_stream){0};
	struct sink *kk = calloc(1, sizeof(*kk) + 4096);
	snprintf(st.nonce, sizeof(st.nonce), "%s", nonce);
	mg_step_stream_feed(&st, big, 4000, sink_out, kk);
	mg_step_stream_feed(&st, big + 4000, 4000, sink_out, kk);
	assert_int_equal(kk->len, 8000);
	free(kk);
	/* A record with our nonce that does not parse is said. */
	st = (struct mg_step_stream){0};
	k = (struct sink){0};
	snprintf(st.nonce, sizeof(st.nonce), "%s", nonce);
	snprintf(text, sizeof(text), "%s %s end status=oops\n", MG_STEP_MARK, nonce);
	feed(&st, text, 5, &k);
	assert_true(st.bad);
	assert_string_equal(k.text, "");
}

static void apply(void **state)
{
	struct mg_task t = {.index = 2};
	struct mg_step_record rec = {.ended = true,
	                             .status = 9,
	                             .peak = 200,
	                             .peak_known = true,
	                             .events = {.oom_kill = 1, .max = 5}};

	(void)state;
	/* srun says 1 for "Out Of Memory"; the task was SIGKILLed by the kernel. */
	mg_step_apply(&rec, 1 << 8, &t);
	assert_true(WIFSIGNALED(t.wait_status));
	assert_int_equal(WTERMSIG(t.wait_status), 9);
	assert_int_equal(t.events.oom_kill, 1);
	assert_int_equal(t.peak, 200);
	assert_true(t.peak_known && !t.peak_sampled);
	assert_int_equal(t.killed_by, MG_KILL_NONE);
	/* The helper guarded it without a limit on the step. */
	rec.watchdog = true;
	mg_step_apply(&rec, 1 << 8, &t);
	assert_int_equal(t.killed_by, MG_KILL_WATCHDOG);
	/* No end record: srun's status is all there is. */
	struct mg_task u = {0};
	mg_step_apply(&(struct mg_step_record){.started = true}, 127 << 8, &u);
	assert_int_equal(u.wait_status, 127 << 8);
	assert_false(u.peak_known);
	assert_int_equal(u.events.oom_kill, 0);
	/* ... and srun's "Out Of Memory" is an OOM kill, never a plain exit 1. */
	struct mg_task v = {0};
	mg_step_apply(&(struct mg_step_record){.started = true, .srun_oom = true}, 1 << 8, &v);
	assert_int_equal(v.events.oom_kill, 1);
}

static void step_cgroups(void **state)
{
	static const char *const cases[][2] = {
	        {"/system.slice/slurmvm_slurmstepd.scope/job_1/step_0/user/task_0",
	         "/system.slice/slurmvm_slurmstepd.scope/job_1/step_0/user"},
	        {"/system.slice/node1_slurmstepd.scope/job_12/step_3/user/task_0/sub",
	         "/system.slice/node1_slurmstepd.scope/job_12/step_3/user"},
	        {"/slurm/uid_1000/job_5/step_batch/user/task_0", "/slurm/uid_1000/job_5/step_batch/user"},
	        {"/job_1/step_0/task_0", "/job_1/step_0/task_0"},
	        {"/user.slice/user-1000.slice/session-3.scope",
	         "/user.slice/user-1000.slice/session-3.scope"},
	        {"/step_1/username/x", "/step_1/username/x"},
	};
	char out[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		mg_step_cgroup_of(cases[i][0], out, sizeof(out));
		assert_string_equal(out, cases[i][1]);
	}
}

static void nonces(void **state)
{
	char a[MG_STEP_NONCE_LEN + 1], b[MG_STEP_NONCE_LEN + 1];

	(void)state;
	assert_int_equal(mg_steps_nonce(a), 0);
	assert_int_equal(mg_steps_nonce(b), 0);
	assert_int_equal(strlen(a), MG_STEP_NONCE_LEN);
	assert_int_equal(strspn(a, "0123456789abcdef"), MG_STEP_NONCE_LEN);
	assert_string_not_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(hostlists),
	        cmocka_unit_test(countlists),
	        cmocka_unit_test(available),
	        cmocka_unit_test(allocation),
	        cmocka_unit_test(node_budgets),
	        cmocka_unit_test(plans),
	        cmocka_unit_test(srun_command_line),
	        cmocka_unit_test(records),
	        cmocka_unit_test(stream),
	        cmocka_unit_test(apply),
	        cmocka_unit_test(step_cgroups),
	        cmocka_unit_test(nonces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
