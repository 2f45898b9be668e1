/* The contract between the launcher and memguardd: every extended attribute
 * they leave on a task cgroup, and the only functions that read or write
 * them. All take a cgroup directory fd and return -errno on failure.
 *
 * Trust. A user who owns a cgroup (a delegated subtree, or a child they made)
 * can set any user.* xattr on it and owns the memory.max of the cgroups they
 * create. So state that decides a kill lives where only root can write it:
 * trusted.* xattrs, which need CAP_SYS_ADMIN to set and to read.
 *
 *  - trusted.memguard.share: the task's share in decimal bytes, written by a
 *    launcher that runs as root.
 *  - user.memguard.share: the same from a launcher that is not root. It is
 *    the owner's word, so it is a hint that may only lower the share (see
 *    mg_contract_share()); lowering it only ever hurts its owner. Alone it
 *    is no share.
 *  - trusted.memguard.fence: the memory.high a cgroup had before memguardd
 *    fenced it in, so that a restarted memguardd lifts its own fences. A
 *    user.memguard.throttled (what older versions wrote) is ignored: set in
 *    advance by a user it would stop the fence from ever applying.
 *  - user.memguard.killed: memguardd's reason, set before it kills, read by
 *    the launcher for its summary. It stays user.*: a launcher that is not
 *    root must read it, and a forged one only misleads its owner's own
 *    report. It decides nothing.
 *  - trusted.memguard.launcher: on a run cgroup (run-<pid>), "<pid> <start
 *    time>" of the launcher that made it, the start time being field 22 of
 *    /proc/<pid>/stat. A launcher that was SIGKILLed never removes its run;
 *    the next one removes a run whose launcher is gone, and the start time
 *    tells a live launcher from a new process on a reused pid. Root only:
 *    without it, a run is judged by its pid alone. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MG_XATTR_SHARE "trusted.memguard.share"
#define MG_XATTR_SHARE_HINT "user.memguard.share"
#define MG_XATTR_FENCE "trusted.memguard.fence"
#define MG_XATTR_KILLED "user.memguard.killed"
#define MG_XATTR_LAUNCHER "trusted.memguard.launcher"

/* Records share (bytes, > 0): trusted.memguard.share when the caller may
 * (root), else user.memguard.share. Returns 1 for the trusted one, 0 for
 * the hint, or -errno when neither could be set. */
int mg_contract_set_share(int cgfd, uint64_t share);

/* trusted.memguard.share and user.memguard.share. Return 0 with the bytes,
 * -ENODATA when missing, 0, or not a number, or -errno. */
int mg_contract_get_share(int cgfd, uint64_t *ret_share);
int mg_contract_get_share_hint(int cgfd, uint64_t *ret_share);

/* The share that a root-owned record confirms, each input 0 when unknown:
 * the trusted share, else the root-owned limit (the tightest memory.max
 * whose file root owns, on the cgroup or an ancestor); the hint may lower
 * that. 0 when neither is known: the hint alone is its owner's word, which
 * confirms nothing (memguardd then judges the task by an even split of the
 * node, mg_policy_split_shares, which the hint may lower too). */
uint64_t mg_contract_share(uint64_t trusted, uint64_t root_limit, uint64_t hint);

/* user.memguard.killed. get copies the reason into buf (terminated, cut to
 * size - 1) and returns its length, -ENODATA when there is none, or -errno. */
int mg_contract_set_killed(int cgfd, const char *why);
int mg_contract_get_killed(int cgfd, char *buf, size_t size);

/* trusted.memguard.fence: the saved memory.high ("max" or decimal bytes).
 * get returns the length as mg_contract_get_killed() does; -ENODATA means
 * not fenced. clear returns 0 when there was none. */
int mg_contract_set_fence(int cgfd, const char *saved_high);
int mg_contract_get_fence(int cgfd, char *buf, size_t size);
int mg_contract_clear_fence(int cgfd);

/* trusted.memguard.launcher: "<pid> <start time>" of the launcher that owns a
 * run cgroup, on the root launcher's run-<pid> (so the next launcher can tell
 * a run whose launcher is gone) and on a run memguardd placed (so a restarted
 * memguardd adopts it); the start time tells that pid from a recycled one.
 * get returns 0 with both, -ENODATA when missing or not "<pid> <start time>"
 * (pid > 0), or -errno.
 * trusted.memguard.tether: on a placed run, the cgroup (below the mount) the
 * run ends with, its caller's; get returns the length as
 * mg_contract_get_killed() does. */
#define MG_XATTR_TETHER "trusted.memguard.tether"
#define MG_XATTR_TAKEN "trusted.memguard.taken"
int mg_contract_set_launcher(int cgfd, pid_t pid, uint64_t start_time);
int mg_contract_get_launcher(int cgfd, pid_t *ret_pid, uint64_t *ret_start_time);
int mg_contract_set_tether(int cgfd, const char *path);
int mg_contract_get_tether(int cgfd, char *buf, size_t size);

/* trusted.memguard.taken: on a placed run, "<taken> <limit>": what the run
 * takes out of the job's limit, and that limit (bytes, both non-zero), so
 * that a restarted memguardd knows what the caller's cgroup keeps
 * (mg_place_caller_limit). get returns 0 with both, -ENODATA when missing
 * or malformed, or -errno. */
int mg_contract_set_taken(int cgfd, uint64_t taken, uint64_t limit);
int mg_contract_get_taken(int cgfd, uint64_t *ret_taken, uint64_t *ret_limit);

/* user.memguard.keeps: on a caller's cgroup whose memory.max memguardd set
 * to what the runs beside it leave of the job (bytes, decimal), so that the
 * launcher of another run from there reads the job's limit, not that one.
 * memguardd sets both only on a job's task cgroup that holds the caller's
 * uid's processes alone, and clears both when no run takes from it any more
 * or memguardd stops. user.*, as the launcher cannot read trusted.*: the
 * cgroup's owner can write it too (Slurm's task_<n> directory is the job
 * user's), and a forged one changes only how that user's own runs from there
 * size themselves, under the same limits. get returns 0 with the value,
 * -ENODATA when none; clear returns 0 when there was none. */
#define MG_XATTR_KEEPS "user.memguard.keeps"
int mg_contract_set_keeps(int cgfd, uint64_t bytes);
int mg_contract_get_keeps(int cgfd, uint64_t *ret_bytes);
int mg_contract_clear_keeps(int cgfd);
