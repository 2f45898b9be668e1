/* memguardd's placement service: a Unix socket where an ordinary user's
 * launcher asks to be put into a real cgroup. The caller is known only by
 * what the kernel says (SO_PEERCRED, a pidfd); its run is made beside the
 * caller's own cgroup, a job's task cgroup, so it stays inside the job, and
 * is removed when its launcher is gone. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "place/watches.h"

struct mg_placesvc_config {
	const char *socket_path;    /* bound here unless systemd passed a listening socket */
	const char *mount;          /* the cgroup2 mount, for inotify paths and messages */
	uint64_t grace_usec;        /* from a launcher's end (or its job's) to the kill of what is left */
	unsigned max_runs_per_uid;  /* placed runs one user may have at once */
	const char *registry;       /* placedrun.h's registry directory */
	int watch_fd;               /* the guard's inotify fd, told of each new run's directory */
	struct mg_watches *watches; /* memguardd's inotify watches per uid (watches.h), the guard's */
	const char *beside;         /* [daemon] place_beside: the task cgroups a run is made beside */
};

struct mg_placesvc;

/* Starts listening and adopts the placed runs a previous memguardd left
 * (the registry names them; their launcher and tether are kept in trusted.*
 * xattrs); runs whose launcher is gone are killed and removed. mountfd and procfd stay the
 * caller's. Returns 0 or -errno. */
int mg_placesvc_start(sd_event *event, int mountfd, int procfd, const struct mg_placesvc_config *cfg,
                      struct mg_placesvc **ret);

/* Updates the limits on reload (the socket stays). */
void mg_placesvc_configure(struct mg_placesvc *s, uint64_t grace_usec, unsigned max_runs_per_uid,
                           const char *beside);

/* The cgroups of the placed runs now (mg_runs_paths). */
size_t mg_placesvc_runs(const struct mg_placesvc *s, const char **ret, size_t max);

/* Stops listening; placed runs are left to the next memguardd, and the
 * memory.max memguardd set on their callers' cgroups is lifted until it
 * adopts them. NULL is fine. */
void mg_placesvc_free(struct mg_placesvc *s);
