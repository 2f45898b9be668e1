/* The guard list (guards.c): which cgroups memguardd may act on, found by
 * the globs, the placed runs and inotify, and the watches on the fenced
 * ones' memory.events. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "guard/state.h"

/* Finds the guarded cgroups and forgets the gone. */
void guards_rescan(struct mg_guard *d);
/* Reads the numbers of the cgroups already guarded (memory.current, the
 * share), forgetting the gone: what a decision needs, without the globs.
 * Who is guarded changes only through inotify and the rescan timer. */
void guards_refresh(struct mg_guard *d);
/* Sets inotify watches on every directory a guarded cgroup could appear in. */
void guards_watch_parents(struct mg_guard *d);
/* Whether path (below the mount) is a guarded cgroup; d->w is sorted. */
bool guards_contains(const struct mg_guard *d, const char *path);

/* A fenced cgroup's memory.events is watched on d->fence_fd: when the fence
 * throttles what reclaim cannot give back, the loop marks it pushed and
 * decides at once (mg_sense_fence_events, mg_policy_fence_pushed). */
void guards_watch_fence(struct mg_guard *d, struct watched *w);
/* Its fence was raised: it pushes again only once the raised fence throttles it. */
void guards_widened_fence(struct mg_guard *d, struct watched *w);
void guards_unwatch_fence(struct mg_guard *d, struct watched *w);
