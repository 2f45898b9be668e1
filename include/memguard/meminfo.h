/* /proc/meminfo, in bytes. */
#pragma once

#include <stdint.h>

struct mg_meminfo {
	uint64_t mem_total;
	uint64_t mem_available;
	uint64_t swap_total;
	uint64_t swap_free;
	uint64_t shmem;
};

/* Parses meminfo text. MemTotal and MemAvailable are required (-EBADMSG when
 * missing or malformed); the others default to 0 when absent. */
int mg_meminfo_parse(const char *text, struct mg_meminfo *ret);

/* Reads "meminfo" relative to procfd (an fd for /proc, or a fake tree). */
int mg_meminfo_read(int procfd, struct mg_meminfo *ret);
