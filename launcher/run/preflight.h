/* What the launcher asks before it starts anything: does memguardd run on
 * this node, and can the command be executed at all. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether memguardd runs, asked of the lock it holds on its pid file
 * (dirfd/path, e.g. AT_FDCWD and MG_DAEMON_PIDFILE) for its whole life: a pid
 * in the file may be stale or reused, the lock dies with its holder. Returns
 * 1 when the lock is held, 0 when it is free or there is no file, -errno
 * when the file cannot be opened (a symlink is refused) or locked. */
int mg_daemon_running_at(int dirfd, const char *path);

/* Finds the program of a command as execvp() would: name itself when it
 * holds a '/', else the first entry of path_env (NULL: "/bin:/usr/bin"; an
 * empty entry is the current directory) that holds an executable file of
 * that name. Returns 0 with its path in buf, or:
 *   -ENOENT  found nowhere (exit status 127);
 *   -EACCES  only a file that may not be executed was found (126);
 *   -EISDIR  only a directory was found (126);
 *   -ENOTDIR, -ELOOP, -ENAMETOOLONG ... for a name with a '/' (126). */
int mg_command_resolve(const char *name, const char *path_env, char *buf, size_t size);
