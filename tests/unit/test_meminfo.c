/* /proc/meminfo parsing, and reading it through a fake procfd. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_tree.h"
#include "memguard/meminfo.h"
#include "memguard/util.h"

/* A complete /proc/meminfo from a 6.x kernel with 16 GiB. */
static const char full_meminfo[] = "MemTotal:       16318480 kB\n"
                                   "MemFree:          903452 kB\n"
                                   "MemAvailable:   11473996 kB\n"
                                   "Buffers:          512340 kB\n"
                                   "Cached:        10110268 kB\n"
                                   "SwapCached:         1024 kB\n"
                                   "Active:         5519340 kB\n"
                                   "Inactive:       8219548 kB\n"
                                   "Active(anon):    2048000 kB\n"
                                   "Inactive(anon):  1178480 kB\n"
                                   "Active(file):    3471340 kB\n"
                                   "Inactive(file):  7041068 kB\n"
                                   "Unevictable:       65520 kB\n"
                                   "Mlocked:              48 kB\n"
                                   "SwapTotal:       8388604 kB\n"
                                   "SwapFree:        8123388 kB\n"
                                   "Zswap:                 0 kB\n"
                                   "Zswapped:              0 kB\n"
                                   "Dirty:               740 kB\n"
                                   "Writeback:             0 kB\n"
                                   "AnonPages:       3154392 kB\n"
                                   "Mapped:          1046720 kB\n"
                                   "Shmem:            722508 kB\n"
                                   "KReclaimable:     459420 kB\n"
                                   "Slab:             745908 kB\n"
                                   "SReclaimable:     459420 kB\n"
                                   "SUnreclaim:       286488 kB\n"
                                   "KernelStack:       21520 kB\n"
                                   "PageTables:        45112 kB\n"
                                   "SecPageTables:         0 kB\n"
                                   "NFS_Unstable:          0 kB\n"
                                   "Bounce:                0 kB\n"
                                   "WritebackTmp:          0 kB\n"
                                   "CommitLimit:    16547844 kB\n"
                                   "Committed_AS:   12966180 kB\n"
                                   "VmallocTotal:   34359738367 kB\n"
                                   "VmallocUsed:       95044 kB\n"
                                   "VmallocChunk:          0 kB\n"
                                   "Percpu:            10240 kB\n"
                                   "HardwareCorrupted:     0 kB\n"
                                   "AnonHugePages:         0 kB\n"
                                   "ShmemHugePages:        0 kB\n"
                                   "ShmemPmdMapped:        0 kB\n"
                                   "FileHugePages:         0 kB\n"
                                   "FilePmdMapped:         0 kB\n"
                                   "Unaccepted:            0 kB\n"
                                   "HugePages_Total:       0\n"
                                   "HugePages_Free:        0\n"
                                   "HugePages_Rsvd:        0\n"
                                   "HugePages_Surp:        0\n"
                                   "Hugepagesize:       2048 kB\n"
                                   "Hugetlb:               0 kB\n"
                                   "DirectMap4k:      514944 kB\n"
                                   "DirectMap2M:    12826624 kB\n"
                                   "DirectMap1G:     5242880 kB\n";

static void check_full(const struct mg_meminfo *m)
{
	assert_true(m->mem_total == 16318480ull * 1024);
	assert_true(m->mem_available == 11473996ull * 1024);
	assert_true(m->swap_total == 8388604ull * 1024);
	assert_true(m->swap_free == 8123388ull * 1024);
	assert_true(m->shmem == 722508ull * 1024);
	assert_true(m->has_free);
	assert_true(m->mem_free == 903452ull * 1024);
	assert_true(m->file == (3471340ull + 7041068ull) * 1024);
	assert_true(m->slab_reclaimable == 459420ull * 1024);
	assert_true(mg_meminfo_free_and_reclaimable(m) == (903452ull + 3471340 + 7041068 + 459420) * 1024);
}

static void parse_full(void **state)
{
	struct mg_meminfo m;

	memset(&m, 0xaa, sizeof(m));
	assert_int_equal(mg_meminfo_parse(full_meminfo, &m), 0);
	check_full(&m);
}

static void parse_minimal_defaults_optional_to_zero(void **state)
{
	struct mg_meminfo m;

	memset(&m, 0xaa, sizeof(m));
	assert_int_equal(mg_meminfo_parse("MemTotal: 2048 kB\nMemAvailable: 1024 kB\n", &m), 0);
	assert_true(m.mem_total == 2048ull * 1024);
	assert_true(m.mem_available == 1024ull * 1024);
	assert_true(m.swap_total == 0);
	assert_true(m.swap_free == 0);
	assert_true(m.shmem == 0);
	/* Without MemFree, the free and reclaimable memory is MemAvailable. */
	assert_false(m.has_free);
	assert_true(mg_meminfo_free_and_reclaimable(&m) == 1024ull * 1024);

	/* MemFree alone: the file and slab parts count as 0. */
	assert_int_equal(mg_meminfo_parse("MemTotal: 2048 kB\nMemAvailable: 1024 kB\nMemFree: 7 kB\n", &m),
	                 0);
	assert_true(m.has_free);
	assert_true(mg_meminfo_free_and_reclaimable(&m) == 7ull * 1024);

	/* Order does not matter, nor a missing final newline. */
	assert_int_equal(mg_meminfo_parse("Shmem: 3 kB\nMemAvailable: 1 kB\nMemTotal: 2 kB", &m), 0);
	assert_true(m.mem_total == 2048);
	assert_true(m.mem_available == 1024);
	assert_true(m.shmem == 3072);
}

static void parse_does_not_confuse_similar_keys(void **state)
{
	struct mg_meminfo m;

	/* ShmemHugePages before Shmem, SwapCached before SwapTotal. */
	assert_int_equal(mg_meminfo_parse("ShmemHugePages: 99 kB\n"
	                                  "SwapCached: 98 kB\n"
	                                  "MemTotalExtra: 97 kB\n"
	                                  "MemTotal: 10 kB\n"
	                                  "MemAvailable: 5 kB\n"
	                                  "Shmem: 1 kB\n"
	                                  "SwapTotal: 2 kB\n",
	                                  &m),
	                 0);
	assert_true(m.mem_total == 10240);
	assert_true(m.shmem == 1024);
	assert_true(m.swap_total == 2048);
	assert_true(m.swap_free == 0);
}

static void parse_boundary_of_overflow(void **state)
{
	struct mg_meminfo m;

	/* (2^54 - 1) kB is the largest that fits in bytes. */
	assert_int_equal(mg_meminfo_parse("MemTotal: 18014398509481983 kB\nMemAvailable: 0 kB\n", &m), 0);
	assert_true(m.mem_total == 18014398509481983ull * 1024);
	assert_true(m.mem_available == 0);
}

static void parse_rejects(void **state)
{
	static const char *const bad[] = {
	        "",
	        "\n",
	        "garbage",
	        /* A required key missing. */
	        "MemTotal: 1024 kB\nMemFree: 1 kB\n",
	        "MemAvailable: 1024 kB\n",
	        "MemTotal: 1024 kB\nMemAvailableX: 5 kB\n",
	        /* A value without a number. */
	        "MemTotal: kB\nMemAvailable: 1 kB\n",
	        "MemTotal:\nMemAvailable: 1 kB\n",
	        "MemTotal: 1 kB\nMemAvailable:\n",
	        "MemTotal: -1 kB\nMemAvailable: 1 kB\n",
	        "MemTotal: x1 kB\nMemAvailable: 1 kB\n",
	        /* Overflow in the number itself, or when multiplied by 1024. */
	        "MemTotal: 18014398509481984 kB\nMemAvailable: 1 kB\n",
	        "MemTotal: 1 kB\nMemAvailable: 18446744073709551615 kB\n",
	        "MemTotal: 99999999999999999999999 kB\nMemAvailable: 1 kB\n",
	        /* An optional key that is present must be a number too. */
	        "MemTotal: 1 kB\nMemAvailable: 1 kB\nShmem: lots kB\n",
	        "MemTotal: 1 kB\nMemAvailable: 1 kB\nSwapTotal: 18014398509481984 kB\n",
	        "MemTotal: 1 kB\nMemAvailable: 1 kB\nSwapFree:\n",
	        "MemTotal: 1 kB\nMemAvailable: 1 kB\nActive(file): x kB\n",
	        /* The file LRUs together past 2^64 bytes. */
	        "MemTotal: 1 kB\nMemAvailable: 1 kB\nActive(file): 18014398509481983 kB\n"
	        "Inactive(file): 18014398509481983 kB\n",
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(bad); i++) {
		struct mg_meminfo m, before;

		memset(&m, 0x5a, sizeof(m));
		before = m;
		int r = mg_meminfo_parse(bad[i], &m);
		if (r != -EBADMSG)
			print_error("mg_meminfo_parse(\"%s\") = %d\n", bad[i], r);
		assert_int_equal(r, -EBADMSG);
		assert_memory_equal(&m, &before, sizeof(m)); /* untouched on failure */
	}
}

static void read_through_fake_procfd(void **state)
{
	struct fake_tree *t = *state;
	struct mg_meminfo m;
	int procfd;

	ft_write(t->fd, "meminfo", full_meminfo);
	procfd = ft_open_dir(AT_FDCWD, t->path);
	assert_int_equal(mg_meminfo_read(procfd, &m), 0);
	check_full(&m);

	ft_write(t->fd, "meminfo", "MemTotal: 1 kB\n");
	assert_int_equal(mg_meminfo_read(procfd, &m), -EBADMSG);
	close(procfd);
}

static void read_missing_file(void **state)
{
	struct fake_tree *t = *state;
	struct mg_meminfo m;

	assert_int_equal(mg_meminfo_read(t->fd, &m), -ENOENT);
	assert_int_equal(mg_meminfo_read(-1, &m), -EBADF);
}

/* The running kernel's own files parse: every line read is a number, with
 * meminfo's unit at most. Reading /proc changes nothing. */
static void read_this_kernel(void **state)
{
	struct mg_meminfo m;
	uint64_t lists;
	int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);

	assert_true(procfd >= 0);
	assert_int_equal(mg_meminfo_read(procfd, &m), 0);
	assert_true(m.mem_total > 0 && m.mem_available <= m.mem_total && m.has_free);
	assert_int_equal(mg_zoneinfo_pcp_read(procfd, &lists), 0);
	close(procfd);
}

/* /proc/zoneinfo of a 6.1 kernel, two CPUs, cut to one zone's head and its
 * pagesets, and another zone's pagesets. */
static const char zoneinfo[] = "Node 0, zone    DMA32\n"
                               "  pages free     28969\n"
                               "        boost    0\n"
                               "        min      9546\n"
                               "        low      14124\n"
                               "  pagesets\n"
                               "    cpu: 0\n"
                               "              count: 1512\n"
                               "              high:  3529\n"
                               "              batch: 63\n"
                               "  vm stats threshold: 24\n"
                               "    cpu: 1\n"
                               "              count: 37\n"
                               "              high:  3529\n"
                               "              batch: 63\n"
                               "  vm stats threshold: 24\n"
                               "  node_unreclaimable:  0\n"
                               "Node 0, zone   Normal\n"
                               "  pagesets\n"
                               "    cpu: 0\n"
                               "              count: 0\n"
                               "              high:  0\n"
                               "              batch: 1\n"
                               "    cpu: 1\n"
                               "              count: 512";

static void pcp_parse(void **state)
{
	static const char *const bad[] = {
	        "  pagesets\n    cpu: 0\n              count: x\n",
	        "  pagesets\n    cpu: 0\n              count:\n",
	        "  pagesets\n    cpu: 0\n              count: -1\n",
	        "  pagesets\n    cpu: 0\n              count: 12 pages\n",
	        "count: 99999999999999999999\n",
	        "count: 18446744073709551615\ncount: 1\n",
	};
	uint64_t pages = 7;

	assert_int_equal(mg_zoneinfo_pcp_parse(zoneinfo, &pages), 0);
	assert_true(pages == 1512 + 37 + 0 + 512);
	/* No pagesets: nothing held. */
	assert_int_equal(mg_zoneinfo_pcp_parse("Node 0, zone      DMA\n  pages free 3968\n", &pages), 0);
	assert_true(pages == 0);
	assert_int_equal(mg_zoneinfo_pcp_parse("", &pages), 0);
	assert_true(pages == 0);
	/* Not a count line: "count" inside another key. */
	assert_int_equal(mg_zoneinfo_pcp_parse("    nr_count: 5\n    recount: 6\n", &pages), 0);
	assert_true(pages == 0);
	for (size_t i = 0; i < MG_ARRAY_SIZE(bad); i++) {
		pages = 7;
		if (mg_zoneinfo_pcp_parse(bad[i], &pages) != -EBADMSG)
			print_error("mg_zoneinfo_pcp_parse(\"%s\") accepted\n", bad[i]);
		assert_int_equal(mg_zoneinfo_pcp_parse(bad[i], &pages), -EBADMSG);
		assert_true(pages == 7); /* untouched on failure */
	}
}

static void pcp_read_through_fake_procfd(void **state)
{
	struct fake_tree *t = *state;
	uint64_t bytes = 0;

	ft_write(t->fd, "zoneinfo", zoneinfo);
	assert_int_equal(mg_zoneinfo_pcp_read(t->fd, &bytes), 0);
	assert_true(bytes == (1512ull + 37 + 512) * (uint64_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(mg_zoneinfo_pcp_read(-1, &bytes), -EBADF);
}

static void unreclaimable_table(void **state)
{
	/* A cgroup's memory.stat (the keys that matter; the real file has more
	 * between them) and memory.current, in bytes. */
	static const struct {
		const char *stat;
		uint64_t current;
		int r;
		uint64_t want;
	} rows[] = {
	        /* 100 anon, 300 of page cache, 20 of reclaimable slab: 100 left. */
	        {"anon 100\nfile 300\nactive_file 120\ninactive_file 180\nslab_reclaimable 20\n", 420, 0,
	         100},
	        /* Another user drops 200 of that cache: current and the LRUs fall alike. */
	        {"anon 100\nfile 100\nactive_file 40\ninactive_file 60\nslab_reclaimable 20\n", 220, 0, 100},
	        /* Or locks 200 of it in memory: off the LRUs, still charged here. */
	        {"anon 100\nfile 300\nactive_file 40\ninactive_file 60\nunevictable 200\n"
	         "slab_reclaimable 20\n",
	         420, 0, 300},
	        /* Or fills its sockets with 50: charged, on no LRU. */
	        {"anon 100\nfile 300\nsock 50\nactive_file 120\ninactive_file 180\nslab_reclaimable 20\n",
	         470, 0, 150},
	        /* Without slab_reclaimable (older kernels), slab counts as held. */
	        {"anon 100\nactive_file 120\ninactive_file 180\n", 420, 0, 120},
	        /* current read a moment after the LRUs grew past it: 0, not a wrap. */
	        {"active_file 400\ninactive_file 100\nslab_reclaimable 20\n", 480, 0, 0},
	        /* The same-prefixed keys are not taken for the file LRUs. */
	        {"active_file_x 1\nactive_file 10\ninactive_file 10\nslab_reclaimable_x 5\n", 50, 0, 30},
	        /* The file LRUs are required, and numbers. */
	        {"anon 100\ninactive_file 180\n", 420, -EBADMSG, 0},
	        {"active_file 120\n", 420, -EBADMSG, 0},
	        {"active_file x\ninactive_file 180\n", 420, -EBADMSG, 0},
	        {"active_file 1\ninactive_file 1\nslab_reclaimable lots\n", 420, -EBADMSG, 0},
	        {"", 420, -EBADMSG, 0},
	        /* Past 2^64 together. */
	        {"active_file 18446744073709551615\ninactive_file 1\n", 420, -EBADMSG, 0},
	};

	for (size_t i = 0; i < MG_ARRAY_SIZE(rows); i++) {
		uint64_t got = 12345;
		int r = mg_memstat_unreclaimable(rows[i].stat, rows[i].current, &got);

		if (r != rows[i].r || (r == 0 && got != rows[i].want))
			print_error("row %zu: r %d (want %d), %" PRIu64 " (want %" PRIu64 ")\n", i, r,
			            rows[i].r, got, rows[i].want);
		assert_int_equal(r, rows[i].r);
		assert_true(r == 0 ? got == rows[i].want : got == 12345); /* untouched on failure */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(parse_full),
	        cmocka_unit_test(parse_minimal_defaults_optional_to_zero),
	        cmocka_unit_test(parse_does_not_confuse_similar_keys),
	        cmocka_unit_test(parse_boundary_of_overflow),
	        cmocka_unit_test(parse_rejects),
	        cmocka_unit_test(unreclaimable_table),
	        cmocka_unit_test(pcp_parse),
	        cmocka_unit_test_setup_teardown(pcp_read_through_fake_procfd, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(read_through_fake_procfd, ft_setup, ft_teardown),
	        cmocka_unit_test_setup_teardown(read_missing_file, ft_setup, ft_teardown),
	        cmocka_unit_test(read_this_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
