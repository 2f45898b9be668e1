/* memguardd's signal sources, one interface: the node's memory pressure
 * (PSI: a trigger that wakes memguardd, and the averages), MemAvailable.
 * Where the kernel has no PSI (booted with psi=0, or built with
 * CONFIG_PSI_DEFAULT_DISABLED as RHEL's kernels are), the same interface
 * reports no pressure and arms no trigger: memguardd then decides on
 * MemAvailable and its fall alone, polled as often as the policy asks
 * (mg_policy_poll_usec), as earlyoom does. No caller asks which it is but
 * to say so. */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "memguard/meminfo.h"
#include "memguard/psi.h"

/* Whether a first read of /proc/pressure/memory that returned r (0 or
 * -errno) means PSI is there (1), off (0: the file is absent, or exists and
 * reads fail with EOPNOTSUPP, as on some kernels with PSI built in and
 * switched off), or an error that is no reason to go without it (-errno). */
int mg_sense_psi_state(int r);

struct mg_sense {
	int procfd;
	bool psi;      /* /proc/pressure/memory is there */
	int psi_error; /* when not: why, -errno (-ENOENT, -EOPNOTSUPP) */
	int trigger_fd;
	sd_event_source *trigger_src;
};

#define MG_SENSE_INIT                                                                                        \
	{                                                                                                    \
		.procfd = -1, .trigger_fd = -1                                                               \
	}

/* Finds out whether PSI is there. Returns 0, or -errno when /proc cannot
 * be read as expected. */
int mg_sense_open(struct mg_sense *s, int procfd);

/* Arms (or re-arms, keeping the old one on failure) the node's trigger:
 * cb runs when tasks stall stall_usec within window_usec. Without PSI,
 * nothing to arm: 0. Returns 0 or -errno. */
int mg_sense_arm(struct mg_sense *s, sd_event *e, uint64_t stall_usec, uint64_t window_usec,
                 sd_event_io_handler_t cb, void *userdata);

/* The node's pressure now; all zeros without PSI. Returns 0 or -errno. */
int mg_sense_pressure(const struct mg_sense *s, struct mg_psi *ret);

/* What going without PSI costs, in a sentence, for the journal, --status
 * and the docs; "" with PSI. */
const char *mg_sense_psi_note(const struct mg_sense *s);

void mg_sense_close(struct mg_sense *s);
