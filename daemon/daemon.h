/* memguardd's state, shared by main.c (the loop and the verdicts) and
 * guards.c (the list of guarded cgroups and their triggers). Private to
 * the daemon. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "daemon_metrics.h"
#include "memguard/config.h"
#include "memguard/meminfo.h"
#include "placesvc.h"
#include "policy.h"
#include "scope.h"
#include "sense.h"

/* The guard list grows on demand up to this many cgroups (mg_scope_admit()
 * caps each user below it). */
#define MAX_GUARDED MG_SCOPE_MAX
/* New cgroups are seen through inotify; this rescan is only a safety net. */
#define RESCAN_USEC (60 * 1000000ull)
/* The guard list's events (inotify) and the rescans they bring: users cause
 * them, so they run below the pressure sources (priority 0), as the
 * placement service does. */
#define GUARD_EVENT_PRIORITY 10
/* Timer slack: the poll interval is at least 100 ms. */
#define TIMER_ACCURACY_USEC 10000ull
/* Placed runs one ordinary user may have at once. */
#define PLACE_MAX_RUNS_PER_UID 32

struct watched {
	struct mg_scope_entry e;
	bool seen;
	bool throttled;                  /* its memory.high is lowered: undo when memory is back */
	bool pushed;                     /* the fence throttles what reclaim cannot give back */
	bool passed_over;                /* killed, or its kill failed: the next worst goes until calm */
	bool widen_failed;               /* raising its fence failed or did nothing: not again until calm */
	bool widened;                    /* its fence was raised since it was set */
	struct mg_fall_rate others_fall; /* while fenced: free + reclaimable memory + what it holds */
	int fence_wd;                    /* inotify watch on its memory.events while fenced, else -1 */
	uint64_t fence_high_events;      /* memory.events "high" when the fence was set or last raised */
};

struct daemon {
	struct mg_config cfg;
	struct mg_policy policy;
	const char *config_path;
	const char *dropin_dir;
	int procfd, mountfd;
	char mount[4096];
	sd_event *event;
	struct mg_sense sense; /* PSI and its trigger, or their absence */
	sd_event_source *poll_timer, *rescan_timer, *inotify_src;
	sd_event_source *event_rescan_timer; /* a rescan events asked for, held back */
	int inotify_fd;
	int fence_fd; /* inotify on the fenced cgroups' memory.events */
	sd_event_source *fence_src;
	struct watched *w; /* grown by watch_slot() */
	size_t nw, w_cap;
	bool trigger_fired;
	bool was_short;          /* memory was short at the last decision */
	uint64_t rescanned_usec; /* the last guards_rescan started; what it took is in metrics */
	uint64_t decision_usec;  /* what the last check cost, wake-up to verdict */
	uint64_t last_kill_usec;
	char last_victim[sizeof(((struct mg_scope_entry *)0)->path)]; /* killed last, until it is gone */
	uint64_t last_victim_bytes;                                   /* what it held then */
	struct mg_meminfo mem;
	struct mg_fall_rate fall;
	bool cli_dry_run; /* -n and -v outlive a reload */
	int cli_verbose;
	struct mg_placesvc *placesvc;
	char outsider_path[256]; /* read_outsider()'s result */
	char blamed[256];        /* the offender last named, and when */
	uint64_t blamed_usec;
	struct mg_daemon_metrics metrics; /* metrics.c */
};

/* Decides and acts on the node's state now (main.c); triggers call it. */
int daemon_evaluate(struct daemon *d);

/* The guard list (guards.c). guards_rescan finds the guarded cgroups and
 * forgets the gone; guards_watch_parents sets inotify watches on every
 * directory a guarded cgroup could appear in. */
void guards_rescan(struct daemon *d);
/* Reads the numbers of the cgroups already guarded (memory.current, the
 * share), forgetting the gone: what a decision needs, without the globs.
 * Who is guarded changes only through inotify and the rescan timer. */
void guards_refresh(struct daemon *d);
void guards_watch_parents(struct daemon *d);
/* Whether path (below the mount) is a guarded cgroup; d->w is sorted. */
bool guards_contains(const struct daemon *d, const char *path);

/* KILL_OUTSIDER (outside.c): below mountfd/top, in the child that holds the
 * most outside the guard (g, n: the guarded cgroups' snapshots), at each
 * level, kills the process that mg_policy_outside_victim picks (the whole of
 * top when nothing there may be killed), and its memory.oom.group if it has
 * one that holds nothing memguardd never kills. Returns 1 when it acted (killed it,
 * logged it in a dry run, or found it gone), 0 when none may be killed, or
 * -errno. */
int outside_kill(struct daemon *d, const char *top, const struct mg_guarded *g, size_t n, const char *why,
                 uint64_t decided_usec);
int guards_on_inotify(sd_event_source *src, int fd, uint32_t revents, void *userdata);
int guards_on_rescan(sd_event_source *src, uint64_t usec, void *userdata);

/* A fenced cgroup's memory.events is watched: when the fence throttles what
 * reclaim cannot give back, it is marked pushed and the daemon decides at
 * once (mg_policy_fence_pushed). */
void guards_watch_fence(struct daemon *d, struct watched *w);
/* Its fence was raised: it pushes again only once the raised fence throttles it. */
void guards_widened_fence(struct daemon *d, struct watched *w);
void guards_unwatch_fence(struct daemon *d, struct watched *w);
/* What the cgroup holds that the node's free and reclaimable memory does not
 * count (mg_memstat_unreclaimable): not its page cache on the LRUs, which
 * anyone who can read a file can drop, whoever it is charged to. */
int guards_read_held(struct daemon *d, const struct watched *w, uint64_t *ret_bytes);
int guards_on_fence_event(sd_event_source *src, int fd, uint32_t revents, void *userdata);
