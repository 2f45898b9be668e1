/* The joblog as a file: opened under a lock that one memguard holds at a
 * time, emptied for a new run, or for a resume with a cut last line (a
 * node that died while writing it) dropped first, so that the next line
 * starts a line of its own. The lines themselves: joblog.h. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* Opens path to append to (create: make it when missing) and, with lock,
 * takes its lock: flock, which NFS clients turn into a lock on the server,
 * held while the fd is open. Returns the fd; -ENOENT when it is missing and
 * not to be made; -EWOULDBLOCK when another process holds the lock; else
 * -errno. */
int mg_joblog_open(const char *path, bool create, bool lock);

/* Readies an open joblog for this run's lines: emptied unless resume;
 * when resuming, a last line without its newline is cut off (the parser
 * drops it: that attempt counts as never logged). The header goes into an
 * empty joblog. Returns the bytes cut off (0 or more), or -errno. */
ssize_t mg_joblog_prepare(int fd, bool resume);
