/* The cgroups memguardd may act on: those matching the configured globs
 * below the cgroup mount (by default the launcher's memguard/run-* /task-*),
 * admitted so that no user can crowd out another's, minus the protected. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "guard/policy.h"

struct mg_scope_entry {
	char path[512];         /* below the mount, e.g. "memguard/run-42/task-3" */
	struct mg_guarded snap; /* snap.path points at path */
	uint64_t prev_current, prev_usec;
};

/* A cgroup the globs matched, before admission. */
struct mg_scope_candidate {
	char *path;      /* below the mount; owned by the list */
	uid_t owner;     /* st_uid of the cgroup directory */
	bool populated;  /* cgroup.events: populated 1 */
	bool has_memory; /* memory.current exists: the memory controller is on */
	bool protected_; /* at or below a protected cgroup path */
	bool admitted;   /* set by mg_scope_admit() */
};

struct mg_scope_list {
	struct mg_scope_candidate *c;
	size_t n, cap;
};

void mg_scope_list_free(struct mg_scope_list *l);

/* Children taken from one directory at most, by a glob or a placed run:
 * the user who owns it can fill it, and as many are never guarded for one
 * user (MG_SCOPE_MAX_PER_OWNER). What is past it stays unguarded, and the
 * rule for what is outside the guard weighs it. */
#define MG_SCOPE_MAX_PER_DIR 1024

/* Expands the space-separated globs (relative to mount) into the cgroups
 * they match, sorted by path, each once, MG_SCOPE_MAX_PER_DIR from a
 * directory at most. The list is emptied first.
 * Returns the count, or -errno (-ENOMEM only). */
int mg_scope_expand(const char *mount, const char *globs, struct mg_scope_list *ret);

/* Adds the child cgroups of each of parents (below the mount; the placed
 * runs, wherever their callers were), MG_SCOPE_MAX_PER_DIR of each at most,
 * to the list, keeping it sorted and each once. Returns the count, or
 * -errno (-ENOMEM only). */
int mg_scope_add_children(int mountfd, const char *const *parents, size_t n, struct mg_scope_list *ret);

/* Fills in owner, populated and has_memory of c from mountfd/c->path.
 * Returns 0, or -errno (-ENOENT: gone). */
int mg_scope_probe(int mountfd, struct mg_scope_candidate *c);

/* Who may crowd whom out of the guard list. */
#define MG_SCOPE_MAX 16384 /* all owners together */
#define MG_SCOPE_MAX_TEXT "16384"
#define MG_SCOPE_MAX_PER_OWNER 1024 /* each uid but root's */

struct mg_scope_dropped {
	size_t n;         /* candidates left unguarded by a cap */
	size_t n_owners;  /* owners[] in use */
	uid_t owners[8];  /* the first few owners among them */
	bool more_owners; /* and others beyond those */
	bool global;      /* MG_SCOPE_MAX was reached */
};

/* The admission rule, pure: marks c[i].admitted. Unpopulated cgroups, those
 * without the memory controller and protected ones are not admitted and
 * count against no cap (an empty cgroup cannot be a victim, and a flood of
 * them must not crowd out a runaway). Each non-root owner gets at most
 * per_owner_max, in list order, so one user flooding their subtree only
 * drops their own; then at most max in all. What a cap left out goes into
 * *ret_dropped. Returns the number admitted. */
size_t mg_scope_admit(struct mg_scope_candidate *c, size_t n, size_t max, size_t per_owner_max,
                      struct mg_scope_dropped *ret_dropped);

/* Reads one guarded cgroup: memory.current, populated, its owner, and the
 * share by mg_contract_share(): trusted.memguard.share, else the tightest
 * memory.max owned by root on the cgroup or an ancestor, lowered by a
 * user.memguard.share hint (kept in hint); 0 when neither is known, however
 * the hint reads (mg_policy_split_shares decides then). growth is computed
 * from the entry's previous reading. */
int mg_scope_read(int mountfd, struct mg_scope_entry *e, uint64_t now_usec);

/* The tightest memory.max of mountfd/path and its ancestors (below the
 * mount) whose file root owns: a limit a user set on a cgroup they own is
 * their own word. 0 when there is none. Returns 0 or -errno. */
int mg_scope_root_limit(int mountfd, const char *path, uint64_t *ret_limit);

/* The protect list of memguard.conf, parsed. Each word is one of:
 *  - a cgroup path relative to the mount (it contains '/' or ends in
 *    .service, .scope or .slice; a glob): a cgroup at or below it is
 *    protected;
 *  - an absolute executable path, optionally ":USER" or ":UID" (default
 *    root): a cgroup holding a process whose /proc/PID/exe is that path and
 *    whose real uid is that uid is protected;
 *  - anything else, such as a bare process name, which any user can take:
 *    ignored, with the reason in why. */
enum mg_protect_kind {
	MG_PROTECT_CGROUP,
	MG_PROTECT_EXE,
	MG_PROTECT_IGNORED,
};

struct mg_protect_entry {
	enum mg_protect_kind kind;
	char text[256];  /* the cgroup glob or executable path; the word as written when ignored */
	uid_t uid;       /* MG_PROTECT_EXE */
	const char *why; /* MG_PROTECT_IGNORED */
};

#define MG_PROTECT_MAX 64

struct mg_protect {
	struct mg_protect_entry e[MG_PROTECT_MAX];
	size_t n;
};

/* Parses list. ":USER" is looked up in the user database (getpwnam); an
 * unknown user makes the entry ignored. Returns the number of entries
 * (words beyond MG_PROTECT_MAX are dropped). */
size_t mg_protect_parse(const char *list, struct mg_protect *ret);

/* Whether the cgroup path (below the mount) is at or below a protected
 * cgroup path of p. */
bool mg_protect_match_cgroup(const struct mg_protect *p, const char *path);

/* Whether a process of real uid uid must be looked at further (some
 * executable entry is for uid), and whether exe (the readlink of
 * /proc/PID/exe) with that uid is protected. */
bool mg_protect_wants_uid(const struct mg_protect *p, uid_t uid);
bool mg_protect_match_exe(const struct mg_protect *p, const char *exe, uid_t uid);

/* mg_protect_parse() of list, parsed again only when list changed since the
 * last call; *ret_changed (may be NULL) says whether it did, so the caller
 * can warn about ignored entries once. Never NULL. */
const struct mg_protect *mg_scope_protect(const char *list, bool *ret_changed);

/* Whether process pid runs an executable that protect names, as its user. */
bool mg_scope_pid_protected(int procfd, const struct mg_protect *protect, pid_t pid);

/* How many levels below a guarded cgroup mg_scope_holds_protected looks:
 * its owner can nest cgroups without end, and only root can move another
 * user's process into them. */
#define MG_PROTECT_WALK_DEPTH 16
/* How many cgroups one walk reads at most, and all walks of one decision
 * together: the owner can also make children without end, side by side. */
#define MG_PROTECT_WALK_CGROUPS 1024
#define MG_PROTECT_WALK_BUDGET (16 * MG_PROTECT_WALK_CGROUPS)

/* 1 when a process in the cgroup subtree (MG_PROTECT_WALK_DEPTH deep) runs a
 * protected executable as its uid (protect being the protect list of
 * memguard.conf), 0 when none, -errno. Threaded cgroups below it, and those
 * removed meanwhile, are passed over rather than failing the walk: a caller
 * that counts a failed walk as protected must not let the owner fail it.
 * Each cgroup read takes one from *budget; -E2BIG when the walk found none
 * within MG_PROTECT_WALK_CGROUPS cgroups or the budget: the owner can make
 * any walk that long, so the caller must count it as not protected. procfd
 * is an fd for /proc. */
int mg_scope_holds_protected(int cgfd, int procfd, const char *protect, size_t *budget);
