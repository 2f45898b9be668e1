/* KILL_OUTSIDER carried out (outside.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "guard/policy.h"
#include "guard/state.h"

/* Below mountfd/top, in the child that holds the most outside the guard (g,
 * n: the guarded cgroups' snapshots), at each level, kills the process that
 * mg_policy_outside_victim picks (the whole of top when nothing there may be
 * killed), and its memory.oom.group if it has one that holds nothing
 * memguardd never kills. When that child is a unit the service guard
 * watches (mg_services_spares), it is restarted through systemd instead,
 * and nothing in it is killed. Returns 1 when it acted (killed it, logged
 * it in a dry run, or found it gone), 2 when a watched unit's restart was
 * made or is under way, 0 when none may be killed, or -errno. */
int outside_kill(struct mg_guard *d, const char *top, const struct mg_guarded *g, size_t n, const char *why,
                 uint64_t decided_usec);
