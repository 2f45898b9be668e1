/* /proc/meminfo, in bytes. */
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
 * reading a file nor dropping it from the cache moves, and, unlike
 * MemAvailable, not the zone watermarks either, which the kernel boosts for
 * a while after memory fragments (a THP fault falling back). MemAvailable
 * when MemFree is missing. */
uint64_t mg_meminfo_free_and_reclaimable(const struct mg_meminfo *m);

/* Reads "meminfo" relative to procfd (an fd for /proc, or a fake tree). */
int mg_meminfo_read(int procfd, struct mg_meminfo *ret);
