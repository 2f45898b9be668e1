/* memguardd's senses: its signal sources, one interface, and the snapshot
 * of the node and of the guarded cgroups that policy.c decides on, built
 * from them, MemAvailable, memory.events and the cgroup tree.
 *
 * The signal sources: the node's memory pressure
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
#include "guard/policy.h"
#include "guard/state.h"

/* Whether a first read of /proc/pressure/memory that returned r (0 or
 * -errno) means PSI is there (1), off (0: the file is absent, or exists and
 * reads fail with EOPNOTSUPP, as on some kernels with PSI built in and
 * switched off), or an error that is no reason to go without it (-errno). */
int mg_sense_psi_state(int r);

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

/* The snapshot. mg_sense_node reads the node: pressure, MemAvailable and
 * its fall, whether the last victim still exits, the per-CPU lists' free
 * pages and the fenced cgroups' trackers of what the others take when they
 * count. Returns 0 or -errno (logged). */
int mg_sense_node(struct mg_guard *d, struct mg_node_state *ret);

/* The node (mg_sense_node), the guarded cgroups as the policy sees them
 * into ret (MAX_GUARDED; *ret_n of them: the fence state is the guard's own,
 * the numbers and the protected processes are read, the list rescanned
 * when due, only when memory is short) and, when memory is short, who holds
 * the most outside the guard. Returns 1 when memory is short
 * (mg_policy_needs_memory), 0 when not, or -errno (logged). */
int mg_sense_snapshot(struct mg_guard *d, struct mg_node_state *ret_node, struct mg_guarded *ret,
                      size_t *ret_n);

/* Starts what the others take while v is fenced, from now and at most at
 * start_bps until its own spans end. MemAvailable is read again: a look
 * with a rescan takes a while. A failed read leaves it to the next look. */
void mg_sense_track_fence(struct mg_guard *d, struct watched *v, uint64_t start_bps);

/* Drains the fenced cgroups' memory.events watches (d->fence_fd, fd) and
 * marks pushed each fenced cgroup whose fence throttles what reclaim cannot
 * give back (mg_policy_fence_pushed). Returns whether one was marked. */
bool mg_sense_fence_events(struct mg_guard *d, int fd);
