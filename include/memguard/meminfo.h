/* /proc/meminfo, in bytes, and what a cgroup holds beyond its reclaimable part. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct mg_meminfo {
	uint64_t mem_total;
	uint64_t mem_available;
	uint64_t swap_total;
	uint64_t swap_free;
	uint64_t shmem;
	/* Free memory and what reclaim gives back without swap: MemFree,
	 * Active(file), Inactive(file), SReclaimable. */
	uint64_t mem_free, file, slab_reclaimable;
	bool has_free; /* MemFree was there */
};

/* Parses meminfo text. MemTotal and MemAvailable are required (-EBADMSG when
 * missing or malformed); the others default to 0 when absent. */
int mg_meminfo_parse(const char *text, struct mg_meminfo *ret);

/* Free memory plus page cache and reclaimable slab: a sum that neither
 * reading a file nor dropping it from the cache moves. MemAvailable counts
 * only half of a small page cache, and subtracts from a large one the zone
 * watermarks, which the kernel boosts for a while after memory fragments.
 * MemAvailable when MemFree is missing. */
uint64_t mg_meminfo_free_and_reclaimable(const struct mg_meminfo *m);

/* The free pages the per-CPU page lists hold, which MemFree does not count:
 * the sum of the "count:" lines of /proc/zoneinfo's pagesets, in pages.
 * An allocation that finds its CPU's list empty takes a batch from the
 * buddy allocator (two huge pages at a time for a THP), so MemFree falls by
 * more than was used and rises again only when a list is drained.
 * -EBADMSG when a count is not a number. */
int mg_zoneinfo_pcp_parse(const char *text, uint64_t *ret_pages);
/* The same, read from "zoneinfo" relative to procfd, in bytes. */
int mg_zoneinfo_pcp_read(int procfd, uint64_t *ret_bytes);

/* Its counterpart for one cgroup: current (its memory.current) less its file
 * LRUs and reclaimable slab (active_file, inactive_file, slab_reclaimable in
 * stat, its memory.stat), at least 0. That is its anonymous and shared
 * memory, kernel memory, socket buffers and page cache locked in memory:
 * whatever takes memory out of the sum above on the cgroup's behalf, whoever
 * does it (another user locking its cache, or filling its sockets), adds as
 * much here. -EBADMSG when active_file or inactive_file is missing or bad. */
int mg_memstat_unreclaimable(const char *stat, uint64_t current, uint64_t *ret);

/* Reads "meminfo" relative to procfd (an fd for /proc, or a fake tree). */
int mg_meminfo_read(int procfd, struct mg_meminfo *ret);
