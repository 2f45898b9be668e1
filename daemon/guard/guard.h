/* The guard service: memguardd's loop. Each wake-up (the node's PSI
 * trigger, the poll timer, a fenced cgroup pushing against its fence) reads
 * a snapshot (sense.c), takes the verdict of policy.c and carries it out
 * (act.c, outside.c); inotify and the rescan timer keep the guard list
 * (guards.c). main.c starts it and hands it the configuration. */
#pragma once

#include <stdbool.h>

#include "memguard/config.h"
#include "guard/policy.h"
#include "guard/state.h"

/* d, once main.c has set cfg, policy, procfd, mountfd, mount, event and
 * mem; placesvc may follow, before mg_guard_begin. */
#define MG_GUARD_INIT                                                                                        \
	{                                                                                                    \
		.sense = MG_SENSE_INIT, .inotify_fd = -1, .fence_fd = -1                                     \
	}

/* Arms (or re-arms, keeping the old one on failure) the node's PSI trigger,
 * if it has PSI. Returns 0 or -errno. */
int mg_guard_arm_trigger(struct mg_guard *d);

/* Makes the guard list's inotify fds and their event sources. Returns 0 or
 * -errno (logged). */
int mg_guard_watch(struct mg_guard *d);

/* The first rescan (which arms the periodic one), then the first decision. */
void mg_guard_begin(struct mg_guard *d);

/* Takes a configuration loaded again (a reload): re-arms the trigger if its
 * settings changed. mg_guard_rescan_now then reads the guard list again. */
void mg_guard_configure(struct mg_guard *d, const struct mg_config *cfg, const struct mg_policy *policy);
void mg_guard_rescan_now(struct mg_guard *d);

/* Decides and acts on the node's state now: sense, decide, act; then arms
 * the poll timer. Returns 0. */
int mg_guard_evaluate(struct mg_guard *d);

/* memguardd --status: the node, the policy, the guarded cgroups and the
 * recent kills, on standard output. */
void mg_guard_print_status(struct mg_guard *d);

/* Frees what the guard holds (not cfg's fds: procfd and mountfd are main.c's). */
void mg_guard_done(struct mg_guard *d);
