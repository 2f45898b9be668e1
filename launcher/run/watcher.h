/* Degraded mode: a watcher process that kills the run's processes when the
 * launcher is SIGKILLed, finding them by MEMGUARD_RUN in their environment. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Degraded mode: every task's environment carries MEMGUARD_RUN=<token>. */
#define MG_RUN_ENV "MEMGUARD_RUN"

struct mg_watcher {
	pid_t pid; /* -1: none */
	int fd;    /* our end of the socket pair; -1: none */
};

/* Formats the run token, <pid>-<start time in clock ticks>: with the pid the
 * start time names this launcher process uniquely since boot. Returns 0 or
 * -errno. */
int mg_watcher_token(int procfd, pid_t pid, char *buf, size_t size);

/* The pids (sorted, heap) of the processes under procfd owned by uid, not
 * self, not zombies, whose environ holds MEMGUARD_RUN exactly token. Returns
 * the count, or -errno (-ENOMEM only: an unreadable process is skipped). */
int mg_watcher_find(int procfd, const char *token, uid_t uid, pid_t self, pid_t **ret_pids);

/* Forks the watcher. It keeps only procfd and its end of a socket pair, ignores
 * the terminating signals, and blocks. On the byte mg_watcher_stop writes it
 * exits; on EOF alone (the launcher died) it SIGTERMs the run's processes,
 * waits up to delay_usec for them, then SIGKILLs what is left, and exits.
 * Returns 0 with *ret, or -errno. */
int mg_watcher_start(int procfd, const char *token, uint64_t delay_usec, struct mg_watcher *ret);

/* The run ended normally: tells the watcher, and reaps it. */
void mg_watcher_stop(struct mg_watcher *w);
