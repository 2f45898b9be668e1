/* The service guard's line to systemd (PID 1): a unit's load state and
 * cgroup, RestartUnit, and the end of its job. Every call is asynchronous
 * (sd-bus on memguardd's sd-event loop): a PID 1 slowed by the very memory
 * shortage memguardd is there for must not hold up its pressure guard.
 * Replies come to the callbacks with the unit's name, never a pointer of
 * the caller's, so a unit dropped meanwhile (a reload) is simply not found. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

struct mg_svcbus;

/* A job of systemd's ended: JobRemoved(id, job, unit, result); result
 * "done" when it did what it was for. */
typedef void (*mg_svcbus_job_cb)(void *userdata, const char *unit, const char *job, const char *result);

/* A lookup's answer: error 0 with load_state ("loaded", "not-found",
 * "masked", ...) and cgroup (below the cgroup mount, no leading '/'; "" when
 * the unit runs nothing); or -errno with why (systemd's message). */
typedef void (*mg_svcbus_unit_cb)(void *userdata, const char *unit, int error, const char *load_state,
                                  const char *cgroup, const char *why);

/* RestartUnit's answer: error 0 with the job's path, or -errno with why. */
typedef void (*mg_svcbus_restart_cb)(void *userdata, const char *unit, int error, const char *job,
                                     const char *why);

/* Connects to systemd's private socket (root's, answered by PID 1 itself:
 * no D-Bus daemon needed), else to the system bus (then subscribes to
 * systemd's signals), attached to e at priority; on_job hears every
 * JobRemoved. Returns 0, or -errno with both failures in why. */
int mg_svcbus_open(sd_event *e, int priority, mg_svcbus_job_cb on_job, void *userdata, struct mg_svcbus **ret,
                   char *why, size_t size);

/* Whether the connection still stands (systemd's re-execution closes it). */
bool mg_svcbus_usable(struct mg_svcbus *b);

/* Asks for unit's LoadState and, when loaded, its ControlGroup. Returns 0
 * (cb comes later, once) or -errno (cb never comes). */
int mg_svcbus_lookup(struct mg_svcbus *b, const char *unit, mg_svcbus_unit_cb cb, void *userdata);

/* RestartUnit(unit, "replace"). Returns 0 (cb comes later, once: with an
 * error too when the connection is lost meanwhile) or -errno. */
int mg_svcbus_restart(struct mg_svcbus *b, const char *unit, mg_svcbus_restart_cb cb, void *userdata);

/* Closes it; callbacks not yet come never come. NULL is fine. */
void mg_svcbus_free(struct mg_svcbus *b);
