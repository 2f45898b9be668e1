/* Pressure stall information: parsing pressure files and arming triggers. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* One line of a pressure file. Averages are in hundredths of a percent
 * (0..10000), so "12.34" is 1234; total is in microseconds. */
struct mg_psi_line {
	bool present;
	uint32_t avg10, avg60, avg300;
	uint64_t total_usec;
};

struct mg_psi {
	struct mg_psi_line some, full;
};

enum mg_psi_kind { MG_PSI_SOME, MG_PSI_FULL };

/* Parses the text of /proc/pressure/memory or <cgroup>/memory.pressure.
 * Unknown keys and unknown lines are ignored; a "some" or "full" line without
 * avg10, avg60, avg300 and total is -EBADMSG; no "some" line at all is -EBADMSG. */
int mg_psi_parse(const char *text, struct mg_psi *ret);

/* Reads dirfd/name ("memory.pressure", or "pressure/memory" relative to /proc). */
int mg_psi_read(int dirfd, const char *name, struct mg_psi *ret);

/* The kernel's limits on a trigger: a window of 500 ms to 10 s, and a stall
 * above 0 and no longer than the window. */
bool mg_psi_trigger_valid(uint64_t stall_usec, uint64_t window_usec);

/* Opens dirfd/name O_RDWR|O_NONBLOCK and arms a trigger: an event when tasks
 * stall for stall_usec within any window_usec. Returns the fd to poll for
 * POLLPRI (EPOLLPRI), or -errno; -EINVAL unless mg_psi_trigger_valid(). */
int mg_psi_trigger_open(int dirfd, const char *name, enum mg_psi_kind kind, uint64_t stall_usec,
                        uint64_t window_usec);

/* Waits for a trigger fd: 1 when it fired, 0 on timeout, -ENODEV when the
 * cgroup went away (POLLERR), or -errno. timeout_ms < 0 waits forever. */
int mg_psi_trigger_wait(int fd, int timeout_ms);
