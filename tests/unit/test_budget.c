/* The launcher's budget: mg_budget_compute, mg_batch_grant_from_env,
 * mg_default_ntasks, mg_env_get, and the limits made of it: mg_limits_compute. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "run/budget.h"
#include "fake_tree.h"
#include "memguard/units.h"
#include "memguard/util.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* A 64 GiB node as the kernel reports it: MemTotal is a little below 64 GiB,
 * and 1.1 GiB of Shmem (a RAM-resident OS image and /dev/shm). */
#define NODE64_TOTAL (65842796ull * KiB)
#define NODE64_SHMEM (1153024ull * KiB)
/* A "1 GiB" VM. */
#define VM1_TOTAL (1008340ull * KiB)
#define VM1_SHMEM (9876ull * KiB)

/* An input with nothing but MemTotal limiting, like a plain idle node without
 * a batch system (all of MemTotal available): the defaults of memguard.conf
 * (5%, reserve_shmem, 32 MiB). */
static struct mg_budget_input plain_input(uint64_t mem_total, uint64_t shmem, unsigned ntasks)
{
	struct mg_budget_input in = {
	        .mem = {.mem_total = mem_total, .mem_available = mem_total, .shmem = shmem},
	        .cgroup_limit = {.value = MG_SIZE_UNLIMITED, .where = "memory.max of /user.slice"},
	        .batch_grant = {.value = MG_SIZE_UNLIMITED, .where = ""},
	        .mem_option = MG_SIZE_UNLIMITED,
	        .reserve = "5%",
	        .reserve_shmem = true,
	        .ntasks = ntasks,
	        .mem_per_task = 0,
	        .min_share = 32 * MiB,
	};
	return in;
}

/* Runs mg_budget_compute expecting success, and checks the invariants every
 * successful budget must keep. */
static struct mg_budget compute_ok(const struct mg_budget_input *in)
{
	struct mg_budget b;
	char err[256] = "";
	int r;

	memset(&b, 0xaa, sizeof(b));
	r = mg_budget_compute(in, &b, err, sizeof(err));
	if (r != 0)
		print_error("mg_budget_compute = %d (%s)\n", r, err);
	assert_int_equal(r, 0);
	assert_non_null(b.limit_from);
	assert_true(b.share % 4096 == 0);
	assert_true(b.share >= in->min_share);
	assert_true(b.usable <= b.limit);
	assert_true(b.usable <= b.room);
	assert_true(b.usable <= in->mem.mem_total);
	assert_true(b.usable + b.reserve <= in->mem.mem_available);
	assert_non_null(b.room_from);
	assert_true(b.share * in->ntasks <= b.usable);
	return b;
}

/* Runs mg_budget_compute expecting error want, with every needle in err. */
static void compute_fails(const struct mg_budget_input *in, int want, const char *const needles[])
{
	struct mg_budget b;
	char err[256];
	int r;

	memset(&b, 0x5a, sizeof(b));
	memset(err, 0, sizeof(err));
	r = mg_budget_compute(in, &b, err, sizeof(err));
	if (r != want)
		print_error("mg_budget_compute = %d (%s); want %d\n", r, err, want);
	assert_int_equal(r, want);
	assert_true(strlen(err) > 0);
	assert_null(strchr(err, '\n')); /* one line */
	for (size_t i = 0; needles && needles[i]; i++)
		ft_assert_contains(err, needles[i]);
}

/* --- the limit: smallest of MemTotal, cgroup, grant, --mem --- */

struct limit_case {
	const char *name;
	uint64_t cgroup, grant, mem;
	uint64_t want_limit;
	const char *want_from;
};

static void limit_is_smallest_source(void **state)
{
	static const struct limit_case cases[] = {
	        {"nothing set", MG_SIZE_UNLIMITED, MG_SIZE_UNLIMITED, MG_SIZE_UNLIMITED, NODE64_TOTAL,
	         "MemTotal"},
	        {"cgroup smallest", 48 * GiB, MG_SIZE_UNLIMITED, MG_SIZE_UNLIMITED, 48 * GiB,
	         "memory.max of /job"},
	        {"grant smallest", 48 * GiB, 32 * GiB, MG_SIZE_UNLIMITED, 32 * GiB,
	         "SLURM_MEM_PER_NODE=32768 MiB"},
	        {"--mem smallest", 48 * GiB, 32 * GiB, 16 * GiB, 16 * GiB, "--mem"},
	        {"--mem alone", MG_SIZE_UNLIMITED, MG_SIZE_UNLIMITED, 20 * GiB, 20 * GiB, "--mem"},
	        {"cgroup below grant and --mem", 8 * GiB, 32 * GiB, 16 * GiB, 8 * GiB, "memory.max of /job"},
	        {"grant below cgroup", MG_SIZE_UNLIMITED, 12 * GiB, 40 * GiB, 12 * GiB,
	         "SLURM_MEM_PER_NODE=32768 MiB"},
	        {"everything above MemTotal", 128 * GiB, 96 * GiB, 80 * GiB, NODE64_TOTAL, "MemTotal"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_budget_input in = plain_input(NODE64_TOTAL, 0, 4);
		struct mg_budget b;

		in.cgroup_limit.value = cases[i].cgroup;
		snprintf(in.cgroup_limit.where, sizeof(in.cgroup_limit.where), "memory.max of /job");
		in.batch_grant.value = cases[i].grant;
		snprintf(in.batch_grant.where, sizeof(in.batch_grant.where), "SLURM_MEM_PER_NODE=32768 MiB");
		in.mem_option = cases[i].mem;
		in.reserve = "0";
		b = compute_ok(&in);
		if (b.limit != cases[i].want_limit || strcmp(b.limit_from, cases[i].want_from) != 0)
			print_error("%s: limit %" PRIu64 " from \"%s\"; want %" PRIu64 " from \"%s\"\n",
			            cases[i].name, b.limit, b.limit_from, cases[i].want_limit,
			            cases[i].want_from);
		assert_true(b.limit == cases[i].want_limit);
		assert_string_equal(b.limit_from, cases[i].want_from);
		/* Reserve 0, no Shmem kept: the limit is what the tasks get. */
		assert_true(b.usable == cases[i].want_limit);
	}
}

/* --- the reserve --- */

struct reserve_case {
	const char *reserve;
	bool reserve_shmem;
	uint64_t want_reserve, want_shmem, want_usable;
};

static void reserve_size_percent_and_shmem(void **state)
{
	/* MemTotal 16 GiB, Shmem 1 GiB. */
	static const struct reserve_case cases[] = {
	        {"0", false, 0, 0, 16 * GiB},
	        {"0", true, 0, 1 * GiB, 15 * GiB},
	        {"2G", false, 2 * GiB, 0, 14 * GiB},
	        {"2G", true, 2 * GiB, 1 * GiB, 13 * GiB},
	        {"512M", false, 512 * MiB, 0, 16 * GiB - 512 * MiB},
	        {"5%", false, 858993459ull, 0, 16 * GiB - 858993459ull}, /* 5% of 16 GiB, rounded down */
	        {"5%", true, 858993459ull, 1 * GiB, 15 * GiB - 858993459ull},
	        {"25%", false, 4 * GiB, 0, 12 * GiB},
	        {"12.5%", true, 2 * GiB, 1 * GiB, 13 * GiB},
	        {"1.5GiB", false, 1536 * MiB, 0, 16 * GiB - 1536 * MiB},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_budget_input in = plain_input(16 * GiB, 1 * GiB, 1);
		struct mg_budget b;

		in.reserve = cases[i].reserve;
		in.reserve_shmem = cases[i].reserve_shmem;
		b = compute_ok(&in);
		if (b.reserve != cases[i].want_reserve || b.shmem != cases[i].want_shmem ||
		    b.usable != cases[i].want_usable)
			print_error("reserve \"%s\" shmem %d: reserve %" PRIu64 " shmem %" PRIu64
			            " usable %" PRIu64 "\n",
			            cases[i].reserve, cases[i].reserve_shmem, b.reserve, b.shmem, b.usable);
		assert_true(b.reserve == cases[i].want_reserve);
		assert_true(b.shmem == cases[i].want_shmem);
		assert_true(b.usable == cases[i].want_usable);
		assert_true(b.limit == 16 * GiB);
		assert_string_equal(b.limit_from, "MemTotal");
		/* One task: the share is the usable memory, rounded down to a page. */
		assert_true(b.share == cases[i].want_usable - cases[i].want_usable % 4096);
	}
}

static void reserve_does_not_shrink_a_smaller_grant(void **state)
{
	/* The reserve protects the node: a grant well inside what the node has
	 * left is handed out whole. */
	struct mg_budget_input in = plain_input(16 * GiB, 1 * GiB, 2);
	struct mg_budget b;

	in.batch_grant.value = 4 * GiB;
	snprintf(in.batch_grant.where, sizeof(in.batch_grant.where), "SLURM_MEM_PER_NODE=4096 MiB");
	b = compute_ok(&in);
	assert_true(b.limit == 4 * GiB);
	assert_true(b.usable == 4 * GiB);
	assert_true(b.share == 2 * GiB);

	/* A grant larger than what the reserve leaves is cut to the node's room. */
	in.batch_grant.value = 16 * GiB - 1;
	in.reserve = "4G";
	b = compute_ok(&in);
	assert_true(b.limit == 16 * GiB - 1);
	assert_true(b.usable == 11 * GiB);
}

struct reserve_fail_case {
	uint64_t total, shmem;
	const char *reserve;
	bool reserve_shmem;
	const char *needle;
};

static void reserve_leaving_nothing_is_erange(void **state)
{
	static const struct reserve_fail_case cases[] = {
	        {16 * GiB, 0, "16G", false, "16GiB"},       /* exactly MemTotal */
	        {16 * GiB, 0, "100%", false, "16GiB"},      /* all of it */
	        {16 * GiB, 0, "17G", false, "17GiB"},       /* above MemTotal: no wrap-around */
	        {16 * GiB, 0, "max", false, "max"},         /* unlimited reserve */
	        {16 * GiB, 4 * GiB, "12G", true, "4GiB"},   /* reserve + Shmem == MemTotal */
	        {16 * GiB, 10 * GiB, "8G", true, "10GiB"},  /* reserve + Shmem > MemTotal */
	        {16 * GiB, 16 * GiB, "0", true, "16GiB"},   /* Shmem alone fills it */
	        {VM1_TOTAL, VM1_SHMEM, "1G", true, "1GiB"}, /* a 1 GiB reserve on a "1 GiB" VM */
	        {VM1_TOTAL, 0, "18446744073709551614", false,
	         "18446744073709551614B"}, /* largest plain number */
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_budget_input in = plain_input(cases[i].total, cases[i].shmem, 1);
		const char *needles[] = {"leaves nothing", "MemTotal", cases[i].needle, NULL};

		in.reserve = cases[i].reserve;
		in.reserve_shmem = cases[i].reserve_shmem;
		in.min_share = 0;
		compute_fails(&in, -ERANGE, needles);
	}
}

static void reserve_shmem_off_ignores_huge_shmem(void **state)
{
	/* With reserve_shmem off, even Shmem above MemTotal does not count. */
	struct mg_budget_input in = plain_input(16 * GiB, 20 * GiB, 4);
	struct mg_budget b;

	in.reserve_shmem = false;
	in.reserve = "0";
	b = compute_ok(&in);
	assert_true(b.shmem == 0);
	assert_true(b.usable == 16 * GiB);
	assert_true(b.share == 4 * GiB);
}

static void invalid_reserve_is_einval_quoting_it(void **state)
{
	static const char *const bad[] = {
	        "bogus", "", "-5%", "5%%", "5 %", "150%", "1.5.5G", "4XB", "G", "10 G", "0x10", "%",
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(bad); i++) {
		struct mg_budget_input in = plain_input(16 * GiB, 0, 4);
		char quoted[64];
		const char *needles[] = {"reserve", quoted, NULL};

		snprintf(quoted, sizeof(quoted), "\"%s\"", bad[i]);
		in.reserve = bad[i];
		compute_fails(&in, -EINVAL, needles);
	}
}

/* --- the split --- */

static void even_split_is_page_aligned(void **state)
{
	static const unsigned counts[] = {1, 2, 3, 5, 7, 12, 13, 16, 31, 64, 100, 127};
	/* A MemTotal that is not a page multiple, and a reserve that is odd too. */
	static const uint64_t totals[] = {NODE64_TOTAL, VM1_TOTAL, 16 * GiB + 12345, 255 * GiB + 4095};

	for (size_t t = 0; t < MG_ARRAY_SIZE(totals); t++) {
		for (size_t i = 0; i < MG_ARRAY_SIZE(counts); i++) {
			struct mg_budget_input in = plain_input(totals[t], 7777, counts[i]);
			struct mg_budget b;
			uint64_t even;

			in.min_share = 0;
			in.reserve = "3.3%";
			b = compute_ok(&in);
			even = b.usable / counts[i];
			assert_true(b.share % 4096 == 0);
			assert_true(b.share <= even);
			assert_true(even - b.share < 4096); /* rounded down by less than a page */
		}
	}
}

static void mem_per_task_that_fits(void **state)
{
	struct mg_budget_input in = plain_input(16 * GiB, 0, 4);
	struct mg_budget b;

	in.reserve = "0";
	in.mem_per_task = 2 * GiB;
	b = compute_ok(&in);
	assert_true(b.share == 2 * GiB);
	assert_true(b.usable == 16 * GiB);

	/* Exactly all of it. */
	in.mem_per_task = 4 * GiB;
	b = compute_ok(&in);
	assert_true(b.share == 4 * GiB);

	/* Not a page multiple: rounded down. */
	in.mem_per_task = 1536 * MiB + 100;
	b = compute_ok(&in);
	assert_true(b.share == 1536 * MiB);

	/* One byte short of a page above a multiple. */
	in.mem_per_task = 1 * GiB + 4095;
	b = compute_ok(&in);
	assert_true(b.share == 1 * GiB);
}

struct per_task_fail {
	uint64_t per_task;
	unsigned ntasks;
	const char *per_task_text, *ntasks_text;
};

static void mem_per_task_too_large_is_erange(void **state)
{
	static const struct per_task_fail cases[] = {
	        {4 * GiB + 4096, 4, "4.0GiB", "4 tasks"}, /* just above */
	        {5 * GiB, 4, "5GiB", "4 tasks"},
	        {17 * GiB, 1, "17GiB", "x 1 task"},
	        {1ull << 62, 16, "4EiB", "16 tasks"},       /* 2^62 x 16 overflows 64 bits */
	        {UINT64_MAX / 2 + 1, 2, "8EiB", "2 tasks"}, /* product is exactly 2^64 */
	        {UINT64_MAX - 1, 1048576, "18446744073709551614B",
	         "1048576 tasks"}, /* wraps to a small number */
	        {4097, UINT32_MAX, "4.0KiB", "4294967295 tasks"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_budget_input in = plain_input(16 * GiB, 0, cases[i].ntasks);
		const char *needles[] = {"--mem-per-task", cases[i].per_task_text, cases[i].ntasks_text,
		                         "16GiB", NULL};

		in.reserve = "0";
		in.min_share = 0;
		in.mem_per_task = cases[i].per_task;
		compute_fails(&in, -ERANGE, needles);
	}
}

struct min_share_case {
	uint64_t total;
	unsigned ntasks;
	uint64_t min_share;
	const char *share_text, *min_text;
};

static void share_below_minimum_is_erange(void **state)
{
	static const struct min_share_case cases[] = {
	        /* 16 GiB / 1024 = 16 MiB, below 32 MiB. */
	        {16 * GiB, 1024, 32 * MiB, "16MiB", "32MiB"},
	        /* 1 GiB with 64 tasks: 16 MiB each. */
	        {1 * GiB, 64, 32 * MiB, "16MiB", "32MiB"},
	        /* More tasks than pages: the share rounds down to 0. */
	        {1 * GiB, 1048576, 4096, "0B", "4KiB"},
	        /* Just one page short. */
	        {4 * GiB, 4, 1 * GiB + 4096, "1GiB", "1.0GiB"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_budget_input in = plain_input(cases[i].total, 0, cases[i].ntasks);
		char ntasks_text[32];
		const char *needles[] = {"minimum", cases[i].share_text, cases[i].min_text, ntasks_text,
		                         NULL};

		snprintf(ntasks_text, sizeof(ntasks_text), "%u tasks", cases[i].ntasks);
		in.reserve = "0";
		in.min_share = cases[i].min_share;
		compute_fails(&in, -ERANGE, needles);
	}

	/* A --mem-per-task below the minimum is refused the same way. */
	struct mg_budget_input in = plain_input(16 * GiB, 0, 2);
	const char *needles[] = {"minimum", "16MiB", "32MiB", NULL};
	in.mem_per_task = 16 * MiB;
	compute_fails(&in, -ERANGE, needles);

	/* The share exactly at the minimum is fine. */
	in = plain_input(16 * GiB, 0, 4);
	in.reserve = "0";
	in.min_share = 4 * GiB;
	assert_true(compute_ok(&in).share == 4 * GiB);
}

static void zero_tasks_is_einval(void **state)
{
	struct mg_budget_input in = plain_input(16 * GiB, 0, 0);
	const char *needles[] = {"tasks", NULL};

	compute_fails(&in, -EINVAL, needles);
	/* Even with --mem-per-task, which would otherwise multiply by 0. */
	in.mem_per_task = 1 * GiB;
	compute_fails(&in, -EINVAL, needles);
	/* And before looking at a bad reserve. */
	in.reserve = "bogus";
	compute_fails(&in, -EINVAL, needles);
}

static void err_is_truncated_safely(void **state)
{
	struct mg_budget_input in = plain_input(16 * GiB, 0, 1024);
	struct mg_budget b;
	char err[8];

	memset(err, 'X', sizeof(err));
	assert_int_equal(mg_budget_compute(&in, &b, err, sizeof(err)), -ERANGE);
	assert_int_equal(strlen(err), sizeof(err) - 1);
}

/* --- what the node can really give: MemAvailable --- */

struct available_case {
	const char *name;
	uint64_t available, shmem;
	const char *reserve;
	uint64_t want_room;
	const char *want_from;
};

static void room_is_smaller_of_memtotal_and_memavailable(void **state)
{
	/* MemTotal 16 GiB. */
	static const struct available_case cases[] = {
	        {"idle node", 16 * GiB, 0, "1G", 15 * GiB, "MemTotal - reserve - Shmem"},
	        {"kernel and daemons hold 1 GiB", 15 * GiB, 0, "1G", 14 * GiB, "MemAvailable - reserve"},
	        {"Shmem is not available either", 14 * GiB, 2 * GiB, "1G", 13 * GiB,
	         "MemTotal - reserve - Shmem"},
	        {"another job holds 10 GiB", 5 * GiB, 1 * GiB, "1G", 4 * GiB, "MemAvailable - reserve"},
	        {"no reserve", 12 * GiB, 0, "0", 12 * GiB, "MemAvailable - reserve"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_budget_input in = plain_input(16 * GiB, cases[i].shmem, 4);
		struct mg_budget b;

		in.mem.mem_available = cases[i].available;
		in.reserve = cases[i].reserve;
		b = compute_ok(&in);
		if (b.room != cases[i].want_room || strcmp(b.room_from, cases[i].want_from) != 0)
			print_error("%s: room %" PRIu64 " from \"%s\"; want %" PRIu64 " from \"%s\"\n",
			            cases[i].name, b.room, b.room_from, cases[i].want_room,
			            cases[i].want_from);
		assert_true(b.room == cases[i].want_room);
		assert_string_equal(b.room_from, cases[i].want_from);
		assert_true(b.usable == cases[i].want_room);
		assert_true(b.share == cases[i].want_room / 4);
	}
}

static void grant_below_memavailable_is_handed_out_whole(void **state)
{
	struct mg_budget_input in = plain_input(64 * GiB, 0, 8);
	struct mg_budget b;

	in.mem.mem_available = 40 * GiB; /* other jobs run on the node */
	in.batch_grant.value = 16 * GiB;
	snprintf(in.batch_grant.where, sizeof(in.batch_grant.where), "SLURM_MEM_PER_NODE=16384 MiB");
	b = compute_ok(&in);
	assert_true(b.usable == 16 * GiB);
	assert_true(b.share == 2 * GiB);

	/* A grant above what the node has left is cut to it. */
	in.mem.mem_available = 12 * GiB;
	in.reserve = "2G";
	b = compute_ok(&in);
	assert_true(b.available == 10 * GiB);
	assert_true(b.usable == 10 * GiB);
	assert_string_equal(b.room_from, "MemAvailable - reserve");
}

static void memavailable_within_reserve_is_erange(void **state)
{
	static const uint64_t available[] = {0, 1, 512 * MiB, 1 * GiB};

	for (size_t i = 0; i < MG_ARRAY_SIZE(available); i++) {
		struct mg_budget_input in = plain_input(16 * GiB, 0, 1);
		const char *needles[] = {"MemAvailable", "reserve 1GiB", "in use", NULL};

		in.mem.mem_available = available[i];
		in.reserve = "1G";
		in.min_share = 0;
		compute_fails(&in, -ERANGE, needles);
	}
}

/* --- realistic nodes --- */

static void node_64g_16_tasks(void **state)
{
	struct mg_budget_input in = plain_input(NODE64_TOTAL, NODE64_SHMEM, 16);
	struct mg_budget b = compute_ok(&in);

	/* Computed independently: 5% of 67423023104 is 3371151155; minus Shmem
	 * 1180696576 leaves 62871175373; /16 rounded down to a page. */
	assert_true(b.limit == 67423023104ull);
	assert_string_equal(b.limit_from, "MemTotal");
	assert_true(b.reserve == 3371151155ull);
	assert_true(b.shmem == 1180696576ull);
	assert_true(b.usable == 62871175373ull);
	assert_true(b.share == 3929448448ull);

	/* Without keeping Shmem back. */
	in.reserve_shmem = false;
	b = compute_ok(&in);
	assert_true(b.shmem == 0);
	assert_true(b.usable == 64051871949ull);
	assert_true(b.share == 4003241984ull);
}

static void vm_1g_4_tasks(void **state)
{
	struct mg_budget_input in = plain_input(VM1_TOTAL, VM1_SHMEM, 4);
	struct mg_budget b = compute_ok(&in);

	assert_true(b.limit == 1032540160ull);
	assert_true(b.reserve == 51627008ull);
	assert_true(b.shmem == 10113024ull);
	assert_true(b.usable == 970800128ull);
	assert_true(b.share == 242696192ull); /* about 231 MiB */

	/* 32 tasks on that VM fall below the 32 MiB minimum. */
	in.ntasks = 32;
	const char *needles[] = {"minimum", "32MiB", "32 tasks", NULL};
	compute_fails(&in, -ERANGE, needles);
}

/* The 1 GiB benchmark guest as it really is when idle: MemTotal 960.4 MiB,
 * MemAvailable about 850 MiB (the kernel, its caches and the tmpfs root hold
 * the rest). MemTotal - 5% - Shmem would promise 909 MiB. */
static void vm_1g_in_use_4_tasks(void **state)
{
	struct mg_budget_input in = plain_input(983432ull * KiB, 2048ull * KiB, 4);
	struct mg_budget b;

	in.mem.mem_available = 870400ull * KiB; /* 850 MiB */
	b = compute_ok(&in);
	assert_true(b.reserve == 50351718ull); /* 5% of 1007034368 */
	assert_string_equal(b.room_from, "MemAvailable - reserve");
	assert_true(b.usable == 891289600ull - 50351718ull);
	assert_true(b.share == 210231296ull); /* (840937882 / 4) page aligned: 200.5 MiB */
}

static void slurm_8g_job_on_64g_node(void **state)
{
	char *envp[] = {"SLURM_JOB_ID=4242", "SLURM_MEM_PER_NODE=8192", "SLURM_NTASKS_PER_NODE=16",
	                "SLURM_CPUS_ON_NODE=32", NULL};
	struct mg_budget_input in = plain_input(NODE64_TOTAL, NODE64_SHMEM, 0);
	struct mg_sourced ntasks;
	struct mg_budget b;

	mg_batch_grant_from_env(envp, &in.batch_grant);
	assert_true(in.batch_grant.value == 8 * GiB);
	mg_default_ntasks(envp, 64, &ntasks);
	assert_true(ntasks.value == 16);
	assert_string_equal(ntasks.where, "SLURM_NTASKS_PER_NODE=16");
	in.ntasks = (unsigned)ntasks.value;

	b = compute_ok(&in);
	assert_true(b.limit == 8 * GiB);
	ft_assert_contains(b.limit_from, "SLURM_MEM_PER_NODE");
	ft_assert_contains(b.limit_from, "8192");
	assert_true(b.usable == 8 * GiB);
	assert_true(b.share == 512 * MiB);

	/* --mem-per-task 1G x 16 does not fit in the 8 GiB grant. */
	in.mem_per_task = 1 * GiB;
	const char *needles[] = {"--mem-per-task", "1GiB", "16 tasks", "8GiB", NULL};
	compute_fails(&in, -ERANGE, needles);
	/* 512M x 16 does, exactly. */
	in.mem_per_task = 512 * MiB;
	assert_true(compute_ok(&in).share == 512 * MiB);
}

/* --- mg_batch_grant_from_env --- */

struct grant_case {
	const char *name;
	char *env[5];
	uint64_t want;
	const char *where_has;
};

static void batch_grant_table(void **state)
{
	static const struct grant_case cases[] = {
	        {"nothing", {NULL}, MG_SIZE_UNLIMITED, NULL},
	        {"unrelated", {"HOME=/root", "SLURM_JOB_ID=1", NULL}, MG_SIZE_UNLIMITED, NULL},
	        {"per node", {"SLURM_MEM_PER_NODE=8192", NULL}, 8 * GiB, "SLURM_MEM_PER_NODE=8192"},
	        {"per node 1", {"SLURM_MEM_PER_NODE=1", NULL}, 1 * MiB, "SLURM_MEM_PER_NODE=1"},
	        {"per node 0 means whole node", {"SLURM_MEM_PER_NODE=0", NULL}, MG_SIZE_UNLIMITED, NULL},
	        {"per node wins over per cpu",
	         {"SLURM_MEM_PER_CPU=100", "SLURM_CPUS_ON_NODE=4", "SLURM_MEM_PER_NODE=2048", NULL},
	         2 * GiB,
	         "SLURM_MEM_PER_NODE"},
	        {"per cpu",
	         {"SLURM_MEM_PER_CPU=2000", "SLURM_CPUS_ON_NODE=16", NULL},
	         32000 * MiB,
	         "SLURM_MEM_PER_CPU=2000"},
	        {"per cpu names the cpus",
	         {"SLURM_MEM_PER_CPU=1024", "SLURM_CPUS_ON_NODE=8", NULL},
	         8 * GiB,
	         "SLURM_CPUS_ON_NODE=8"},
	        {"per cpu without cpus", {"SLURM_MEM_PER_CPU=2000", NULL}, MG_SIZE_UNLIMITED, NULL},
	        {"cpus without per cpu", {"SLURM_CPUS_ON_NODE=16", NULL}, MG_SIZE_UNLIMITED, NULL},
	        {"per node 0 falls to per cpu",
	         {"SLURM_MEM_PER_NODE=0", "SLURM_MEM_PER_CPU=1024", "SLURM_CPUS_ON_NODE=2", NULL},
	         2 * GiB,
	         "SLURM_MEM_PER_CPU"},
	        {"per cpu 0",
	         {"SLURM_MEM_PER_CPU=0", "SLURM_CPUS_ON_NODE=16", NULL},
	         MG_SIZE_UNLIMITED,
	         NULL},
	        {"cpus 0", {"SLURM_MEM_PER_CPU=100", "SLURM_CPUS_ON_NODE=0", NULL}, MG_SIZE_UNLIMITED, NULL},
	        /* Garbage is ignored, never half-parsed. */
	        {"per node with unit", {"SLURM_MEM_PER_NODE=8G", NULL}, MG_SIZE_UNLIMITED, NULL},
	        {"per node negative", {"SLURM_MEM_PER_NODE=-1", NULL}, MG_SIZE_UNLIMITED, NULL},
	        {"per node empty", {"SLURM_MEM_PER_NODE=", NULL}, MG_SIZE_UNLIMITED, NULL},
	        {"per node spaces", {"SLURM_MEM_PER_NODE= 8192", NULL}, MG_SIZE_UNLIMITED, NULL},
	        {"per node trailing space", {"SLURM_MEM_PER_NODE=8192 ", NULL}, MG_SIZE_UNLIMITED, NULL},
	        {"per node hex", {"SLURM_MEM_PER_NODE=0x100", NULL}, MG_SIZE_UNLIMITED, NULL},
	        {"per node garbage falls to per cpu",
	         {"SLURM_MEM_PER_NODE=lots", "SLURM_MEM_PER_CPU=512", "SLURM_CPUS_ON_NODE=4", NULL},
	         2 * GiB,
	         "SLURM_MEM_PER_CPU"},
	        {"per cpu garbage",
	         {"SLURM_MEM_PER_CPU=2G", "SLURM_CPUS_ON_NODE=4", NULL},
	         MG_SIZE_UNLIMITED,
	         NULL},
	        {"cpus garbage",
	         {"SLURM_MEM_PER_CPU=100", "SLURM_CPUS_ON_NODE=many", NULL},
	         MG_SIZE_UNLIMITED,
	         NULL},
	        /* Overflow: MiB times 2^20 beyond 64 bits. */
	        {"per node 2^44 MiB", {"SLURM_MEM_PER_NODE=17592186044416", NULL}, MG_SIZE_UNLIMITED, NULL},
	        {"per node just fits",
	         {"SLURM_MEM_PER_NODE=17592186044415", NULL},
	         17592186044415ull << 20,
	         "SLURM_MEM_PER_NODE"},
	        {"per node beyond u64",
	         {"SLURM_MEM_PER_NODE=18446744073709551616", NULL},
	         MG_SIZE_UNLIMITED,
	         NULL},
	        {"per node 30 digits",
	         {"SLURM_MEM_PER_NODE=999999999999999999999999999999", NULL},
	         MG_SIZE_UNLIMITED,
	         NULL},
	        {"per cpu times cpus overflows after the MiB",
	         {"SLURM_MEM_PER_CPU=17592186044415", "SLURM_CPUS_ON_NODE=2", NULL},
	         MG_SIZE_UNLIMITED,
	         NULL},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_sourced g;

		memset(&g, 0x77, sizeof(g));
		mg_batch_grant_from_env((char *const *)cases[i].env, &g);
		if (g.value != cases[i].want)
			print_error("%s: grant %" PRIu64 "; want %" PRIu64 "\n", cases[i].name, g.value,
			            cases[i].want);
		assert_true(g.value == cases[i].want);
		if (cases[i].where_has)
			ft_assert_contains(g.where, cases[i].where_has);
	}
}

/* SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE can itself overflow 64 bits before
 * the MiB are turned into bytes: such a grant must be ignored, never wrap
 * around to a tiny (or zero) grant that would starve every task. */
static void batch_grant_per_cpu_product_overflow(void **state)
{
	static const struct grant_case cases[] = {
	        {"per cpu times cpus wraps to 0",
	         {"SLURM_MEM_PER_CPU=17592186044416", "SLURM_CPUS_ON_NODE=1048576", NULL},
	         MG_SIZE_UNLIMITED,
	         NULL},
	        {"per cpu times cpus wraps to 2 MiB",
	         {"SLURM_MEM_PER_CPU=9223372036854775809", "SLURM_CPUS_ON_NODE=2", NULL},
	         MG_SIZE_UNLIMITED,
	         NULL},
	};
	size_t wrong = 0;

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_sourced g;

		mg_batch_grant_from_env((char *const *)cases[i].env, &g);
		if (g.value != cases[i].want) {
			print_error("%s: grant %" PRIu64 " (%s); want %" PRIu64 " (unset)\n", cases[i].name,
			            g.value, g.where, cases[i].want);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

static void batch_grant_null_env(void **state)
{
	struct mg_sourced g = {.value = 1};

	mg_batch_grant_from_env(NULL, &g);
	assert_true(g.value == MG_SIZE_UNLIMITED);
}

/* --- mg_default_ntasks --- */

struct ntasks_case {
	const char *name;
	char *env[7];
	unsigned ncpus;
	uint64_t want;
	const char *where;
};

static void default_ntasks_table(void **state)
{
	static const struct ntasks_case cases[] = {
	        {"nothing", {NULL}, 12, 12, "CPUs this process may run on"},
	        {"no cpus known", {NULL}, 0, 1, "CPUs this process may run on"},
	        {"PBS_NUM_PPN first",
	         {"SLURM_CPUS_ON_NODE=5", "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_NTASKS_PER_NODE=3", "NCPUS=2",
	          "PBS_NUM_PPN=1", NULL},
	         64,
	         1,
	         "PBS_NUM_PPN=1"},
	        {"NCPUS second",
	         {"SLURM_CPUS_ON_NODE=5", "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_NTASKS_PER_NODE=3", "NCPUS=2",
	          NULL},
	         64,
	         2,
	         "NCPUS=2"},
	        {"SLURM_NTASKS_PER_NODE third",
	         {"SLURM_CPUS_ON_NODE=5", "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_NTASKS_PER_NODE=3", NULL},
	         64,
	         3,
	         "SLURM_NTASKS_PER_NODE=3"},
	        {"SLURM_TASKS_PER_NODE fourth",
	         {"SLURM_CPUS_ON_NODE=5", "SLURM_TASKS_PER_NODE=4(x2)", NULL},
	         64,
	         4,
	         "SLURM_TASKS_PER_NODE=4(x2)"},
	        {"SLURM_TASKS_PER_NODE list",
	         {"SLURM_TASKS_PER_NODE=2(x3),1", NULL},
	         64,
	         2,
	         "SLURM_TASKS_PER_NODE=2(x3),1"},
	        {"SLURM_TASKS_PER_NODE plain",
	         {"SLURM_TASKS_PER_NODE=16", NULL},
	         64,
	         16,
	         "SLURM_TASKS_PER_NODE=16"},
	        {"SLURM_CPUS_ON_NODE fifth", {"SLURM_CPUS_ON_NODE=5", NULL}, 64, 5, "SLURM_CPUS_ON_NODE=5"},
	        /* Garbage and 0 are skipped, falling to the next variable. */
	        {"PBS_NUM_PPN 0", {"PBS_NUM_PPN=0", "NCPUS=8", NULL}, 64, 8, "NCPUS=8"},
	        {"PBS_NUM_PPN garbage", {"PBS_NUM_PPN=lots", "NCPUS=8", NULL}, 64, 8, "NCPUS=8"},
	        {"NCPUS empty",
	         {"NCPUS=", "SLURM_NTASKS_PER_NODE=6", NULL},
	         64,
	         6,
	         "SLURM_NTASKS_PER_NODE=6"},
	        {"negative",
	         {"SLURM_NTASKS_PER_NODE=-4", "SLURM_CPUS_ON_NODE=7", NULL},
	         64,
	         7,
	         "SLURM_CPUS_ON_NODE=7"},
	        {"leading space", {"SLURM_NTASKS_PER_NODE= 4", NULL}, 3, 3, "CPUs this process may run on"},
	        {"TASKS_PER_NODE garbage",
	         {"SLURM_TASKS_PER_NODE=(x2)", "SLURM_CPUS_ON_NODE=9", NULL},
	         64,
	         9,
	         "SLURM_CPUS_ON_NODE=9"},
	        {"too many tasks", {"PBS_NUM_PPN=1048577", "NCPUS=4", NULL}, 64, 4, "NCPUS=4"},
	        {"most tasks", {"PBS_NUM_PPN=1048576", NULL}, 64, 1048576, "PBS_NUM_PPN=1048576"},
	        {"20 digits", {"NCPUS=99999999999999999999", NULL}, 2, 2, "CPUs this process may run on"},
	        {"30 digits",
	         {"NCPUS=999999999999999999999999999999", NULL},
	         2,
	         2,
	         "CPUs this process may run on"},
	        {"2^32 + 1 does not wrap", {"NCPUS=4294967297", NULL}, 2, 2, "CPUs this process may run on"},
	        {"all garbage",
	         {"PBS_NUM_PPN=x", "NCPUS=0", "SLURM_NTASKS_PER_NODE=", "SLURM_TASKS_PER_NODE=?",
	          "SLURM_CPUS_ON_NODE=-1", NULL},
	         24,
	         24,
	         "CPUs this process may run on"},
	        {"lookalike names",
	         {"XPBS_NUM_PPN=3", "NCPUS_X=3", "SLURM_CPUS_ON_NODE_X=3", NULL},
	         6,
	         6,
	         "CPUs this process may run on"},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		struct mg_sourced n;

		memset(&n, 0x77, sizeof(n));
		mg_default_ntasks((char *const *)cases[i].env, cases[i].ncpus, &n);
		if (n.value != cases[i].want || strcmp(n.where, cases[i].where) != 0)
			print_error("%s: %" PRIu64 " from \"%.160s\"; want %" PRIu64 " from \"%s\"\n",
			            cases[i].name, n.value, n.where, cases[i].want, cases[i].where);
		assert_true(n.value == cases[i].want);
		assert_string_equal(n.where, cases[i].where);
	}
}

static void default_ntasks_long_value_fits_where(void **state)
{
	/* A long SLURM_TASKS_PER_NODE list must not overflow where[]. */
	char value[600] = "SLURM_TASKS_PER_NODE=8(x2)";
	char *envp[] = {value, NULL};
	struct mg_sourced n;

	while (strlen(value) + 8 < sizeof(value))
		strcat(value, ",8(x2)");
	mg_default_ntasks(envp, 1, &n);
	assert_true(n.value == 8);
	assert_true(strlen(n.where) < sizeof(n.where));
	assert_true(strncmp(n.where, "SLURM_TASKS_PER_NODE=8(x2),8(x2)", 32) == 0);
}

/* --- mg_env_get --- */

static void env_get_exact_names(void **state)
{
	char *envp[] = {"PATHX=/wrong", "XPATH=/wrong", "PATH",  "PAT=/short", "PATH=/usr/bin",
	                "PATH=/second", "EMPTY=",       "A=B=C", NULL};

	assert_string_equal(mg_env_get(envp, "PATH"), "/usr/bin"); /* first exact match */
	assert_string_equal(mg_env_get(envp, "PATHX"), "/wrong");
	assert_string_equal(mg_env_get(envp, "PAT"), "/short");
	assert_null(mg_env_get(envp, "PA"));
	assert_null(mg_env_get(envp, "PATHXY"));
	assert_null(mg_env_get(envp, "ATH"));
	assert_string_equal(mg_env_get(envp, "EMPTY"), "");
	assert_string_equal(mg_env_get(envp, "A"), "B=C");
	assert_null(mg_env_get(envp, "MISSING"));
	assert_null(mg_env_get(NULL, "PATH"));

	char *only_prefix[] = {"PATHX=/x", NULL};
	assert_null(mg_env_get(only_prefix, "PATH"));
	char *shorter[] = {"PATH=/x", NULL};
	assert_null(mg_env_get(shorter, "PATHX"));
	char *empty[] = {NULL};
	assert_null(mg_env_get(empty, "PATH"));
}

/* --- mg_limits_compute: how the share becomes memory.max, memory.high and RLIMIT_AS --- */

#define SHARE (2 * GiB)
#define USABLE (16 * GiB)
#define SWAP (512 * MiB)
#define NONE MG_SIZE_UNLIMITED

enum { AUTO = MG_SHARE_AUTO, STRICT = MG_SHARE_STRICT, ELASTIC = MG_SHARE_ELASTIC };
enum { AS_AUTO = MG_RLIMIT_AS_AUTO, AS_ON = MG_RLIMIT_AS_ON, AS_OFF = MG_RLIMIT_AS_OFF };

struct limits_case {
	const char *name;
	/* input */
	int mode;
	bool daemon, cgroups;
	unsigned high_percent;
	int rlimit_as;
	bool wants_as;
	/* expected */
	int got_mode;
	bool run_capped;
	uint64_t task_max, task_high, rlimit_as_bytes;
};

static struct mg_limits_input limits_input(int mode, bool daemon, bool cgroups, unsigned high, int as,
                                           bool wants)
{
	return (struct mg_limits_input){
	        .mode = (enum mg_share_mode)mode,
	        .daemon = daemon,
	        .cgroups = cgroups,
	        .share = SHARE,
	        .usable = USABLE,
	        .high_percent = high,
	        .rlimit_as = (enum mg_rlimit_as_mode)as,
	        .runtime_wants_rlimit_as = wants,
	        .swap_max = SWAP,
	        .oom_group = true,
	};
}

/* Every mode against daemon and cgroups, and each way RLIMIT_AS and
 * memory.high can go; 90% of 2 GiB is 1843.2 MiB, rounded through
 * share / 100 first. */
static void limits_table(void **state)
{
	const uint64_t high90 = SHARE / 100 * 90, high100 = SHARE / 100 * 100; /* 48 bytes below */
	const struct limits_case cases[] = {
	        /* auto follows the daemon */
	        {"auto, no daemon", AUTO, false, true, 0, AS_AUTO, false, STRICT, true, SHARE, 0, 0},
	        {"auto, daemon", AUTO, true, true, 0, AS_AUTO, false, ELASTIC, false, USABLE, 0, 0},
	        {"auto, no daemon, degraded", AUTO, false, false, 0, AS_AUTO, false, STRICT, false, SHARE, 0,
	         0},
	        {"auto, daemon, degraded", AUTO, true, false, 0, AS_AUTO, false, STRICT, false, SHARE, 0, 0},
	        /* strict: the share, the run capped whenever there are cgroups */
	        {"strict, no daemon", STRICT, false, true, 0, AS_AUTO, false, STRICT, true, SHARE, 0, 0},
	        {"strict, daemon", STRICT, true, true, 0, AS_AUTO, false, STRICT, true, SHARE, 0, 0},
	        {"strict, degraded", STRICT, false, false, 0, AS_AUTO, false, STRICT, false, SHARE, 0, 0},
	        /* elastic: the budget; the run capped only without memguardd */
	        {"elastic, no daemon", ELASTIC, false, true, 0, AS_AUTO, false, ELASTIC, true, USABLE, 0, 0},
	        {"elastic, daemon", ELASTIC, true, true, 0, AS_AUTO, false, ELASTIC, false, USABLE, 0, 0},
	        {"elastic, degraded", ELASTIC, false, false, 0, AS_AUTO, false, STRICT, false, SHARE, 0, 0},
	        {"elastic, daemon, degraded", ELASTIC, true, false, 0, AS_AUTO, false, STRICT, false, SHARE,
	         0, 0},
	        /* memory.high: a part of the share, strict only */
	        {"strict, high 90%", STRICT, false, true, 90, AS_AUTO, false, STRICT, true, SHARE, high90, 0},
	        {"strict, high 100%", STRICT, false, true, 100, AS_AUTO, false, STRICT, true, SHARE, high100,
	         0},
	        {"elastic, high 90%", ELASTIC, true, true, 90, AS_AUTO, false, ELASTIC, false, USABLE, 0, 0},
	        {"auto + daemon, high 90%", AUTO, true, true, 90, AS_AUTO, false, ELASTIC, false, USABLE, 0,
	         0},
	        {"degraded, high 90%", ELASTIC, false, false, 90, AS_AUTO, false, STRICT, false, SHARE,
	         high90, 0},
	        /* RLIMIT_AS: the task's memory.max, when on or wanted by the runtime */
	        {"strict, as auto, cpython", STRICT, false, true, 0, AS_AUTO, true, STRICT, true, SHARE, 0,
	         SHARE},
	        {"strict, as on, generic", STRICT, false, true, 0, AS_ON, false, STRICT, true, SHARE, 0,
	         SHARE},
	        {"strict, as off, cpython", STRICT, false, true, 0, AS_OFF, true, STRICT, true, SHARE, 0, 0},
	        {"elastic, as auto, cpython", ELASTIC, true, true, 0, AS_AUTO, true, ELASTIC, false, USABLE,
	         0, USABLE},
	        {"elastic, as on, generic", ELASTIC, false, true, 0, AS_ON, false, ELASTIC, true, USABLE, 0,
	         USABLE},
	        {"elastic, as off, cpython", ELASTIC, true, true, 0, AS_OFF, true, ELASTIC, false, USABLE, 0,
	         0},
	        {"degraded, as auto, cpython", AUTO, true, false, 0, AS_AUTO, true, STRICT, false, SHARE, 0,
	         SHARE},
	        {"degraded, as on", ELASTIC, false, false, 0, AS_ON, false, STRICT, false, SHARE, 0, SHARE},
	        {"degraded, as off", STRICT, false, false, 0, AS_OFF, true, STRICT, false, SHARE, 0, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(cases); i++) {
		const struct limits_case *c = &cases[i];
		struct mg_limits_input in = limits_input(c->mode, c->daemon, c->cgroups, c->high_percent,
		                                         c->rlimit_as, c->wants_as);
		struct mg_limits l;

		memset(&l, 0xaa, sizeof(l));
		mg_limits_compute(&in, &l);
		if ((int)l.mode != c->got_mode || l.run_capped != c->run_capped ||
		    l.task.max != c->task_max || l.task.high != c->task_high ||
		    l.rlimit_as != c->rlimit_as_bytes)
			print_error("%s: mode %d capped %d max %" PRIu64 " high %" PRIu64 " as %" PRIu64
			            "; want %d %d %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			            c->name, (int)l.mode, l.run_capped, l.task.max, l.task.high, l.rlimit_as,
			            c->got_mode, c->run_capped, c->task_max, c->task_high,
			            c->rlimit_as_bytes);
		assert_int_equal(l.mode, c->got_mode);
		assert_int_equal(l.run_capped, c->run_capped);
		assert_int_equal(l.run_max, c->run_capped ? USABLE : NONE);
		assert_int_equal(l.task.max, c->task_max);
		assert_int_equal(l.task.high, c->task_high);
		assert_int_equal(l.rlimit_as, c->rlimit_as_bytes);
	}
}

/* Over every combination of the inputs, what must always hold. */
static void limits_invariants(void **state)
{
	static const int modes[] = {AUTO, STRICT, ELASTIC};
	static const int as_modes[] = {AS_AUTO, AS_ON, AS_OFF};
	static const unsigned highs[] = {0, 1, 80, 100};
	size_t n = 0;

	for (size_t m = 0; m < MG_ARRAY_SIZE(modes); m++)
		for (unsigned bits = 0; bits < 8; bits++)
			for (size_t a = 0; a < MG_ARRAY_SIZE(as_modes); a++)
				for (size_t h = 0; h < MG_ARRAY_SIZE(highs); h++) {
					bool daemon = bits & 1, cgroups = bits & 2, wants = bits & 4;
					struct mg_limits_input in = limits_input(
					        modes[m], daemon, cgroups, highs[h], as_modes[a], wants);
					struct mg_limits l;

					mg_limits_compute(&in, &l);
					n++;
					/* never auto; elastic only with cgroups */
					assert_true(l.mode == MG_SHARE_STRICT || l.mode == MG_SHARE_ELASTIC);
					if (!cgroups)
						assert_int_equal(l.mode, MG_SHARE_STRICT);
					/* an asked-for mode is kept where cgroups allow it */
					if (cgroups && modes[m] != AUTO)
						assert_int_equal(l.mode, modes[m]);
					/* a run without cgroups has no cap; with them, only
					 * memguardd with elastic tasks lifts it */
					assert_int_equal(l.run_capped,
					                 cgroups && !(l.mode == MG_SHARE_ELASTIC && daemon));
					assert_int_equal(l.run_max, l.run_capped ? USABLE : NONE);
					assert_int_equal(l.run_swap_max, SWAP);
					/* the task's limits */
					assert_int_equal(l.task.share, SHARE);
					assert_int_equal(l.task.max,
					                 l.mode == MG_SHARE_ELASTIC ? USABLE : SHARE);
					assert_true(l.task.high <= l.task.max);
					if (l.mode == MG_SHARE_ELASTIC || highs[h] == 0)
						assert_int_equal(l.task.high, 0);
					else
						assert_true(l.task.high > 0 && l.task.high <= SHARE);
					assert_int_equal(l.task.swap_max, SWAP);
					assert_true(l.task.oom_group);
					/* RLIMIT_AS is the task's memory.max, or unset */
					bool as = as_modes[a] == AS_ON || (as_modes[a] == AS_AUTO && wants);
					assert_int_equal(l.rlimit_as, as ? l.task.max : 0);
				}
	assert_int_equal(n, 3 * 8 * 3 * 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(limit_is_smallest_source),
	        cmocka_unit_test(reserve_size_percent_and_shmem),
	        cmocka_unit_test(reserve_does_not_shrink_a_smaller_grant),
	        cmocka_unit_test(reserve_leaving_nothing_is_erange),
	        cmocka_unit_test(reserve_shmem_off_ignores_huge_shmem),
	        cmocka_unit_test(invalid_reserve_is_einval_quoting_it),
	        cmocka_unit_test(even_split_is_page_aligned),
	        cmocka_unit_test(mem_per_task_that_fits),
	        cmocka_unit_test(mem_per_task_too_large_is_erange),
	        cmocka_unit_test(share_below_minimum_is_erange),
	        cmocka_unit_test(zero_tasks_is_einval),
	        cmocka_unit_test(err_is_truncated_safely),
	        cmocka_unit_test(room_is_smaller_of_memtotal_and_memavailable),
	        cmocka_unit_test(grant_below_memavailable_is_handed_out_whole),
	        cmocka_unit_test(memavailable_within_reserve_is_erange),
	        cmocka_unit_test(node_64g_16_tasks),
	        cmocka_unit_test(vm_1g_in_use_4_tasks),
	        cmocka_unit_test(vm_1g_4_tasks),
	        cmocka_unit_test(slurm_8g_job_on_64g_node),
	        cmocka_unit_test(batch_grant_table),
	        cmocka_unit_test(batch_grant_per_cpu_product_overflow),
	        cmocka_unit_test(batch_grant_null_env),
	        cmocka_unit_test(default_ntasks_table),
	        cmocka_unit_test(default_ntasks_long_value_fits_where),
	        cmocka_unit_test(env_get_exact_names),
	        cmocka_unit_test(limits_table),
	        cmocka_unit_test(limits_invariants),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
