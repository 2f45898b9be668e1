/* The guard's state: what sense.c reads into, what guards.c keeps (the
 * list of guarded cgroups and their fences' watches), what guard.c (the
 * loop and the verdicts carried out) and outside.c act on. A header of its
 * own, below all of them, so that none calls back into another through it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "memguard/config.h"
#include "memguard/meminfo.h"
#include "guard/metrics.h"
#include "place/placesvc.h"
#include "place/watches.h"
#include "guard/policy.h"
#include "guard/scope.h"

struct mg_services;

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

/* memguardd's signal sources (sense.h): PSI and its trigger, or their absence. */
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

struct mg_guard {
	struct mg_config cfg;
	struct mg_policy policy;
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
	uint64_t handed_over_usec; /* the outsider rule restarted a watched unit instead (outside.c) */
	char last_victim[sizeof(((struct mg_scope_entry *)0)->path)]; /* killed last, until it is gone */
	uint64_t last_victim_bytes;                                   /* what it held then */
	struct mg_meminfo mem;
	struct mg_fall_rate fall;
	struct mg_placesvc *placesvc; /* main.c's: the guard follows its placed runs */
	struct mg_watches watches;    /* memguardd's inotify watches per uid (the runs count theirs too) */
	struct mg_pop_watch {         /* an empty guarded cgroup's cgroup.events, until it is populated */
		int wd;
		uid_t owner;
	} * pop;
	size_t npop, pop_cap;
	struct mg_services *services; /* main.c's: the outsider rule restarts a watched unit (outside.c) */
	char outsider_path[256];      /* read_outsider()'s result */
	char blamed[256];             /* the offender last named, and when */
	uint64_t blamed_usec;
	struct mg_daemon_metrics metrics; /* metrics.h */
};
