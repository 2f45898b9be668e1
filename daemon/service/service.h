/* memguardd's service guard: the systemd units named in [service UNIT]
 * sections, watched for a leak or for being stuck at their limit
 * (verdict.h), and restarted through systemd (bus.h) before they stall or
 * starve the node; when a restart fails, SIGTERM to the unit's processes,
 * then SIGKILL. Restarts back off and are limited. One journal entry per
 * action, under MG_SERVICE_MESSAGE_ID; --status and the metrics show each
 * unit. main.c starts it; the pressure guard asks it (mg_services_spares,
 * mg_services_restart_for) before its outsider rule would kill in a
 * watched unit. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-event.h>

#include "memguard/config.h"
#include "memguard/metrics.h"

/* The journal's MESSAGE_ID of each action on a watched unit: a restart, a
 * verdict only logged, a restart held back, the SIGTERM and SIGKILL after a
 * restart failed (MEMGUARD_ACTION says which). */
#define MG_SERVICE_MESSAGE_ID "fb9ec08b963847259d68cb0727df92fd"

/* Where memguardd keeps the watched units' state for memguardd --status. */
#define MG_SERVICE_STATUS_FILE "/run/memguard/services"

/* What the service guard takes from the rest of the configuration. */
struct mg_services_rules {
	uint64_t available_min, available_pressure; /* [daemon], in bytes (mg_policy_from_config) */
	uint64_t kill_grace_usec;                   /* [task] kill_grace: from SIGTERM to SIGKILL */
	bool dry_run;                               /* say, never restart or kill */
};

struct mg_services;

/* Starts watching cfg's [service] sections: looks each unit up, then looks
 * at it every mg_service_interval_usec. With no sections, or on a node
 * whose init is not systemd (said, once, with the units' names), *ret is
 * NULL. A unit not loaded is said, not an error, and looked for again;
 * systemd not answering is said and tried again. mountfd and procfd stay
 * the caller's. Returns 0 or -errno (out of memory). */
int mg_services_start(sd_event *e, int mountfd, int procfd, const struct mg_config *cfg,
                      const struct mg_services_rules *rules, struct mg_services **ret);

/* A reload: units still named keep what memguardd knows of them (their
 * looks, their restarts); new ones are looked up; the others are dropped. */
void mg_services_configure(struct mg_services *s, const struct mg_config *cfg,
                           const struct mg_services_rules *rules);

/* The ordering rule with the outsider rule (daemon/guard/outside.c): whether
 * the cgroup at path (below the mount) lies in a watched unit that the
 * service guard restarts rather than let be killed: its action is restart,
 * systemd answers, its last restart did not fail, and a restart is under
 * way or due (back-off and limit allow it). NULL s: false. */
bool mg_services_spares(const struct mg_services *s, const char *path);

/* Restarts the unit at or above path for the pressure guard, why being its
 * reason (memory short through it); one under way counts. Returns 1 when a
 * restart was made or is under way, 0 when the unit is not spared
 * (mg_services_spares). */
int mg_services_restart_for(struct mg_services *s, const char *path, const char *why);

/* Whether the service guard acted (a restart, a SIGTERM or SIGKILL) since
 * the last call: the metrics file is then written at once. */
bool mg_services_take_acted(struct mg_services *s);

/* Each unit's families (memguardd_service_*) appended to out. NULL s:
 * nothing. */
void mg_services_metrics(const struct mg_services *s, struct mg_metrics *out);

/* memguardd --status: the watched units, from MG_SERVICE_STATUS_FILE as the
 * running memguardd last wrote it, else what cfg names and why no more is
 * known. Nothing without [service] sections. */
void mg_services_print_status(const struct mg_config *cfg, FILE *out);

/* Stops watching; a restart under way is left to systemd. NULL is fine. */
void mg_services_free(struct mg_services *s);
