/* The only place that names kernel filesystems. Logic receives directory fds
 * opened from these (or from a fake tree in tests). */
#pragma once

#define MG_PROC_PATH "/proc"
/* Overrides for tests and unusual layouts; unset on real nodes. */
#define MG_PROC_PATH_ENV "MEMGUARD_PROC"

/* memguardd's pid file: the launcher reads it to know whether a daemon guards
 * the node (systemd's RuntimeDirectory=memguard creates the directory). */
#define MG_DAEMON_PIDFILE "/run/memguard/memguardd.pid"

/* memguardd's placement service (a systemd socket unit binds it on systemd
 * nodes, memguardd itself elsewhere). The variable overrides it, for tests:
 * for the launcher it only ever changes the caller's own run. */
#define MG_PLACE_SOCKET "/run/memguard/place.sock"
#define MG_PLACE_SOCKET_ENV "MEMGUARD_PLACE_SOCKET"
/* memguardd's record of the runs it placed, for the next memguardd. */
#define MG_PLACE_REGISTRY "/run/memguard/runs"

/* The xattrs on task cgroups, the launcher-daemon contract, are named in
 * memguard/contract.h. */
