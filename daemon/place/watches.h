/* memguardd's inotify watches, counted per uid: the kernel's table of them
 * (fs.inotify.max_user_watches) is root's, shared with systemd and every
 * other root daemon, and memguardd adds watches for what users make (a
 * placed run's directory and tether, an empty task cgroup until a process
 * moves in). Each uid but root gets MG_WATCHES_PER_UID at most, so one
 * user's cgroups cannot use up root's table: a full count costs that user
 * a watch (an empty cgroup is guarded from the next rescan instead) or a
 * placement, never anyone else. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define MG_WATCHES_PER_UID 256

struct mg_watches {
	struct mg_watches_uid {
		uid_t uid;
		unsigned n;
	} * e;
	size_t n, cap;
};

#define MG_WATCHES_INIT                                                                                      \
	{                                                                                                    \
		0                                                                                            \
	}

/* Counts n more watches for uid: true, or false (nothing counted) when
 * that would pass MG_WATCHES_PER_UID (root: never) or there is no memory. */
bool mg_watches_take(struct mg_watches *w, uid_t uid, unsigned n);

/* Gives back n watches of uid. */
void mg_watches_give(struct mg_watches *w, uid_t uid, unsigned n);

/* How many watches uid holds now. */
unsigned mg_watches_of(const struct mg_watches *w, uid_t uid);

void mg_watches_done(struct mg_watches *w);
