/* Whom memguardd fences in or kills, and when; when it lifts the fences, how
 * fast MemAvailable falls and when to look again: pure functions of
 * snapshots, so that the whole policy is unit tested without a kernel. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "memguard/meminfo.h"
#include "memguard/psi.h"

struct mg_config;

/* One guarded cgroup, as seen at one moment. The fence state (fenced,
 * pushed, passed_over) is the daemon's own record and always current; the
 * numbers and protected_ are read from the tree only when memory is short. */
struct mg_guarded {
	const char *path;
	uint64_t current;    /* memory.current */
	uint64_t share;      /* its share (launcher's xattr, else memory.max), 0 when unknown */
	uint64_t hint;       /* user.memguard.share, 0 when none: it may lower a share, never make one */
	uid_t owner;         /* of the cgroup's directory */
	bool split;          /* no root-owned record confirms a share: share is mg_policy_split_shares' */
	uint64_t growth_bps; /* bytes per second since the previous reading, 0 when shrinking */
	bool populated;
	bool protected_;   /* holds a protected process: never a victim */
	bool fenced;       /* its memory.high is lowered by us: lift it when memory is back */
	bool pushed;       /* since it was fenced (or its fence last raised), the fence throttles what
	                      reclaim cannot give back (mg_policy_fence_pushed): it stalls against it */
	bool passed_over;  /* killed, or its kill failed, while memory was short: another kill would free
	                      it no sooner, so the next worst goes until memory is calm */
	bool widen_failed; /* raising its fence failed (or did nothing): not tried again until memory is calm,
	                      so the others are judged meanwhile */
	bool widened;      /* its fence was raised since it was set: its own growth is a trend, not the
	                      fence's misjudgement */
	uint64_t others_fall_bps; /* while fenced: what the others take, the fall of the node's free and
	                             reclaimable memory with what it holds added back */
	bool others_measured;     /* others_fall_bps rests on two spans of its own, not on the node's rate
	                             at the fence, which its own growth was part of */
};

/* The largest holder of memory outside the guard: a top-level cgroup of the
 * node (system.slice, user.slice, another batch system's jobs ...), its
 * memory.current less the guarded cgroups below it. Read only when memory
 * is short; path NULL when unknown. */
struct mg_outsider {
	const char *path; /* MG_ROOT_CGROUP for the root cgroup's own */
	uint64_t current;
};

/* The root cgroup as an outsider: what its own processes hold, which none of
 * the top-level cgroups counts (mg_policy_root_own). */
#define MG_ROOT_CGROUP "/"

/* The root cgroup's own memory: what the node uses (MemTotal less MemFree,
 * or less MemAvailable without MemFree) less children, what the top-level
 * cgroups hold, and at most procs_rss, the resident memory of the root's
 * own processes (init and kernel threads left out): the kernel's own memory
 * is in the first, and killing a process frees only what it holds. */
uint64_t mg_policy_root_own(const struct mg_meminfo *mem, uint64_t children, uint64_t procs_rss);

struct mg_node_state {
	struct mg_meminfo mem;
	struct mg_outsider outsider;
	struct mg_psi psi;           /* /proc/pressure/memory */
	bool trigger_fired;          /* a PSI trigger fired since the last decision */
	uint64_t available_fall_bps; /* how fast MemAvailable fell, bytes/s (mg_fall_rate_update) */
	uint64_t lists_free;         /* free pages on the per-CPU lists (mg_zoneinfo_pcp_read), which
	                                MemAvailable leaves out, in bytes; 0 when not read */
	uint64_t now_usec;
	uint64_t last_kill_usec; /* 0: never */
	bool victim_exiting;     /* the cgroup killed last still holds processes and half of what it held:
	                            its memory is not back yet */
};

struct mg_policy {
	uint64_t available_min;      /* below this MemAvailable, act whatever PSI says */
	uint64_t available_pressure; /* under PSI pressure, act below this MemAvailable */
	uint32_t full_avg10_max; /* full avg10 (hundredths of %) that counts as pressure without a trigger */
	uint64_t settle_usec;    /* after a kill, wait this long before the next */
	uint64_t lead_usec;      /* below available_pressure, act when MemAvailable would reach available_min
	                            this soon at its rate of fall; 0 = off */
	uint64_t poll_max_usec;  /* longest sleep between MemAvailable checks */
	bool throttle;           /* fence the victim in with memory.high before killing it */
	bool lead_kill;          /* kill rather than fence when the node (mg_policy_left) would reach the
	                            hard floor within lead_usec at MemAvailable's rate of fall */
	bool dry_run;            /* decide and log, never kill (and so never fence) */
	uint64_t outside_due;    /* what a top-level cgroup outside the guard may hold before it, not a
	                            guarded task within its share, is to blame; 0 = no such rule */
	bool kill_outside;       /* below available_min, kill in that cgroup rather than wait for the
	                            kernel's OOM killer */
};

enum mg_verdict {
	MG_VERDICT_CALM,      /* memory is not short: nothing to do */
	MG_VERDICT_UNFENCE,   /* memory is back: lift every fence (memory is not short, as with CALM) */
	MG_VERDICT_SETTLING,  /* memory is short, but the last kill is still taking effect */
	MG_VERDICT_NO_VICTIM, /* memory is short, and nothing in scope may be killed */
	MG_VERDICT_OUTSIDER,  /* memory is short, every candidate is within its share (or there is none),
	                         and a cgroup outside the guard holds more than its due: no guarded task is
	                         touched, the offender is named */
	MG_VERDICT_HOLD,      /* memory is short, and the victim is fenced in and does not push (nor do
	                         the others take so fast that holding would only wait for the floor) */
	MG_VERDICT_FENCE,     /* fence the victim in: memory.high at its usage plus allowance */
	MG_VERDICT_WIDEN,     /* the victim pushes against its fence while MemAvailable is not below
	                         available_min nor falling to it within lead_usec (at the others' rate
	                         until its first raise), or, once, even then: raise the fence by
	                         allowance (memory short or not) */
	MG_VERDICT_KILL,
	MG_VERDICT_KILL_OUTSIDER, /* as OUTSIDER, but MemAvailable is below available_min (or falls to it
	                             within lead_usec) and kill_outside is on: kill the outsider's worst
	                             process (mg_policy_outside_victim) before the node stalls, as the
	                             kernel would, only later */
};

/* While memory stays short, the guard list is read again from the globs at
 * most this often; in between only the numbers of the cgroups already
 * guarded are read (inotify sees new cgroups, not a task moving into one). */
#define MG_RESCAN_SHORT_USEC 1000000ull

/* Whether a decision under short memory reads the guard list from the globs
 * (a rescan) rather than only the numbers of the cgroups already guarded:
 * when memory has just become short, or the last rescan is
 * MG_RESCAN_SHORT_USEC old and ten times what it took (a user who fills their
 * run with empty cgroups makes each rescan long: the decisions between stay
 * fast). Keeps a decision linear in the guarded cgroups. */
bool mg_policy_rescan_due(bool was_short, uint64_t last_rescan_usec, uint64_t last_took_usec,
                          uint64_t now_usec);

/* A rescan that events cause (inotify on the directories guarded cgroups
 * appear in, which the users who own them can fill with mkdir and rmdir)
 * comes MG_RESCAN_EVENT_GAP_USEC after the last rescan at the soonest, and
 * takes a tenth of the time at most: after a rescan that took t, the next
 * waits 10 t, up to MG_RESCAN_EVENT_GAP_MAX_USEC. */
#define MG_RESCAN_EVENT_GAP_USEC 250000ull
#define MG_RESCAN_EVENT_GAP_MAX_USEC 5000000ull

/* When a rescan that events ask for may run: now, or later (the caller
 * waits for that time, and the events meanwhile ask for nothing more).
 * last_rescan_usec is when the last rescan (for any cause) started, 0 for
 * never; last_took_usec what it took. */
uint64_t mg_policy_event_rescan_at(uint64_t last_rescan_usec, uint64_t last_took_usec, uint64_t now_usec);

/* "calm", "kill", ...: for logs. */
const char *mg_verdict_name(enum mg_verdict v);

struct mg_decision {
	enum mg_verdict verdict;
	long victim;        /* index into the snapshot for HOLD, FENCE, WIDEN and KILL, else -1 */
	uint64_t allowance; /* FENCE and WIDEN: what the node can spare above the hard floor, else 0 */
	char why[512];      /* the numbers behind the verdict, in words; the same for HOLD, FENCE and KILL
	                       of one victim, so a fence that cannot be set becomes a kill as it stands */
};

/* True when the node needs memory back: MemAvailable < available_min, or
 * pressure (a trigger fired, or full avg10 >= full_avg10_max) with
 * MemAvailable < available_pressure, or MemAvailable < available_pressure
 * falling fast enough to reach available_min within lead_usec (a kill takes
 * time; a fast allocator would overshoot the floor meanwhile). Cheap: no
 * cgroup is read before this. */
bool mg_policy_needs_memory(const struct mg_policy *p, const struct mg_node_state *node);

/* What the hard floor is judged by: MemAvailable plus the free pages on the
 * per-CPU lists, which it leaves out. The lists hold megabytes and move by
 * megabytes in a tenth of a second (compaction, huge-page refills), so
 * MemAvailable alone dips with nothing taken. Memory is called short and
 * fences are sized by MemAvailable alone, as the kernel's watermarks leave
 * the lists out too: only the kill, which cannot be taken back, counts
 * them. */
static inline uint64_t mg_policy_left(const struct mg_node_state *node)
{
	uint64_t left;

	return __builtin_add_overflow(node->mem.mem_available, node->lists_free, &left) ? UINT64_MAX : left;
}

/* Below this, in MemAvailable plus the per-CPU lists' free pages
 * (mg_policy_left), nothing waits (not a fenced task, not the settle time
 * after a kill) but a victim that is still exiting, for at most
 * MG_VICTIM_EXIT_WAIT_USEC. */
static inline uint64_t mg_policy_hard_floor(const struct mg_policy *p)
{
	return p->available_min / 2;
}

/* Below the hard floor, how long the last victim may take to exit before the
 * next is killed: tearing down hundreds of MiB takes a tenth of a second or
 * more, and a kill meanwhile costs a second task for memory about to come
 * back. Short, so that a victim stuck in the kernel holds nothing up long. */
#define MG_VICTIM_EXIT_WAIT_USEC (500 * 1000)

/* Decides. Memory not short (mg_policy_needs_memory false): UNFENCE when a
 * cgroup is fenced, MemAvailable >= available_pressure and settle_usec has
 * passed since the last kill (so fences do not flap); else WIDEN as below;
 * else CALM. Only the flags of g and others_fall_bps are read then. A fence
 * pushed against while MemAvailable is at or above available_min and not
 * falling to it within lead_usec is raised, memory short or not, unless in a
 * dry run: WIDEN the first such cgroup not passed over nor whose raising
 * failed, allowance as for FENCE. Until its first raise the fall is
 * others_fall_bps: the cgroup's own last growth, which its fence has
 * stopped, is no trend. Its task is finite or memory would be short by
 * MemAvailable, and its own throttling counts in the node's PSI: judged by
 * pressure, a fence would make its own kill.
 * Memory short: SETTLING within settle_usec of the last kill, unless the
 * node (mg_policy_left) is below the hard floor (and the victim is not still
 * exiting, within MG_VICTIM_EXIT_WAIT_USEC). Else the victim is the eligible
 * cgroup (populated, not protected, not passed over, current > 0) furthest
 * over its share (memory.current / share, in 1% steps), then the fastest
 * grower, then the largest; NO_VICTIM without one. A victim within its known
 * share (current <= share), or none at all, is not touched while the
 * outsider holds more than outside_due: OUTSIDER, which names it, or
 * KILL_OUTSIDER when MemAvailable is below available_min or falls to it
 * within lead_usec, and kill_outside is on; a guard never does worse than no
 * guard.
 * With throttle on, no dry run, the node (mg_policy_left) at or above the
 * hard floor (and, with lead_kill, not falling to it within lead_usec at
 * MemAvailable's rate) and a victim that has not pushed since it was fenced:
 * HOLD when it is fenced already, unless the others' fall, which its fence
 * does not stop, would reach the hard floor within lead_usec
 * (others_fall_bps, once measured and until a raise), else FENCE with
 * allowance = 3/4 of MemAvailable above the hard floor (0 when only the
 * per-CPU lists keep the node above it: fenced at its usage, its next push
 * is a kill). With throttle on, no dry run and the node at or above the hard
 * floor, a victim that pushed against a fence never raised (nor whose
 * raising failed), and was not raised above: WIDEN by that allowance, once,
 * if it is above 0 and others_fall_bps would not bring the node from what it
 * leaves to the hard floor within lead_usec, lead_kill or not (placed while
 * its task still grows, a fence can land a few MiB short of a finite task's
 * need). Else KILL.
 * Every field of ret is written. */
void mg_policy_decide(const struct mg_policy *p, const struct mg_node_state *node, const struct mg_guarded *g,
                      size_t n, struct mg_decision *ret);

/* Whether to name the outsider of an OUTSIDER verdict now: true for a new
 * offender (not last, the one named at last_usec, or none yet: last NULL or
 * "") or once settle_usec has passed since; the journal stays readable
 * while memory is short for seconds. */
bool mg_policy_blame_due(const struct mg_policy *p, const char *last, uint64_t last_usec,
                         const char *offender, uint64_t now_usec);

/* Judges the cgroups that no root-owned record gives a share (share 0 from
 * mg_contract_share: an unlimited run whose owner wrote their own
 * user.memguard.share) by an even split of what the node can give, MemTotal
 * less available_min: first among the owners of the populated cgroups in g,
 * then among each owner's populated cgroups without a share, so that one
 * owner's many cgroups shrink only their own. The hint may lower the split,
 * never raise it. Sets share and split of those cgroups (share stays 0 when
 * the node gives nothing); scratch holds 2 * n uids. Pure. */
void mg_policy_split_shares(const struct mg_policy *p, uint64_t mem_total, struct mg_guarded *g, size_t n,
                            uid_t *scratch);

/* What the cgroup at path (below the mount), holding current bytes, holds
 * outside the guard: current less the guarded cgroups at or below it. */
uint64_t mg_policy_unguarded(const char *path, uint64_t current, const struct mg_guarded *g, size_t n);

/* A process in the outsider's cgroup (not in a guarded one below it), as
 * the daemon read it before a KILL_OUTSIDER. */
struct mg_outside_proc {
	int oom_score;     /* /proc/PID/oom_score: the kernel's own choice, which its owner can only raise */
	int oom_score_adj; /* -1000: the admin exempted it from OOM kills */
	uint64_t rss;      /* bytes, to break ties */
	bool protected_;   /* its cgroup or executable is in protect */
	bool init_or_kernel; /* pid 1 or a kernel thread: the kernel's OOM killer never takes them */
};

/* Which process to kill for a KILL_OUTSIDER: the highest oom_score, then
 * the largest rss, never one that is protected, has oom_score_adj -1000, or
 * is init or a kernel thread.
 * Neither its name nor any xattr counts. mg_policy_outside_eligible says
 * whether p may be killed at all, mg_policy_outside_worse whether eligible a
 * goes before eligible b (so a scan keeps only the worst so far), and
 * mg_policy_outside_victim returns the index in p[0..n) to kill, or -1. */
bool mg_policy_outside_eligible(const struct mg_outside_proc *p);
/* Whether pid (its parent ppid) is init or a kernel thread: kthreadd (2) is
 * every kernel thread's parent, and no user process's. */
bool mg_policy_init_or_kernel(pid_t pid, pid_t ppid);
bool mg_policy_outside_worse(const struct mg_outside_proc *a, const struct mg_outside_proc *b);
long mg_policy_outside_victim(const struct mg_outside_proc *p, size_t n);

/* Resolves the [daemon] settings of cfg on a node with mem_total bytes
 * into ret: sizes and percentages into bytes, pressure_full_avg10 0 (off)
 * into UINT32_MAX. Returns 0, or -EINVAL with a one-line reason in err when
 * a size does not parse, available_min exceeds available_pressure, either
 * is not below MemTotal, the trigger is outside the kernel's limits, or
 * poll_max is below MG_POLL_MIN_USEC. */
int mg_policy_from_config(const struct mg_config *cfg, uint64_t mem_total, struct mg_policy *ret, char *err,
                          size_t errsize);

/* memory.current / share in percent (0 when the share is unknown). */
uint64_t mg_guarded_percent_of_share(const struct mg_guarded *g);

/* MemAvailable's rate of fall is measured over at least this long: a trigger
 * right after a poll would otherwise turn a few pages into a huge rate. */
#define MG_FALL_SPAN_MIN_USEC 50000ull

/* MemAvailable's rate of fall over spans between readings. Zero it to start. */
struct mg_fall_rate {
	uint64_t from_available, from_usec; /* where the current span began; from_usec 0: not yet */
	uint64_t span_bps;                  /* the rate of fall over the last whole span */
	uint64_t bps;                       /* the slower of the last two spans: what the policy sees */
	unsigned spans;                     /* spans ended since it started, at most 2 */
};

/* Feeds one reading of MemAvailable at now_usec (monotonic). A reading less
 * than MG_FALL_SPAN_MIN_USEC after the span began changes nothing. Else it
 * ends the span: its rate is the fall over it in bytes/s (0 when
 * MemAvailable rose or held), and the rate seen becomes the slower of this
 * span and the one before, so that one burst (a file copied to tmpfs, a heap
 * touched at start) is not a trend. The first reading only starts a span.
 * Returns the rate seen (s->bps), bytes/s. */
uint64_t mg_fall_rate_update(struct mg_fall_rate *s, uint64_t available, uint64_t now_usec);

/* Whether s rests on two spans of its own since it started: one burst is
 * not a trend, and until then it sees at most the rate it started from. */
bool mg_fall_rate_measured(const struct mg_fall_rate *s);

/* Starts s at a reading of available at now_usec, seeing at most bps
 * (another tracker's rate) until two spans of its own have ended: a
 * cgroup's others_fall_bps starts from the node's rate when it is fenced. */
void mg_fall_rate_start(struct mg_fall_rate *s, uint64_t available, uint64_t now_usec, uint64_t bps);

/* A fenced cgroup's memory.events changed (the kernel notifies every change).
 * What the daemon read then, and when it set the fence. */
struct mg_fence_probe {
	uint64_t high_events_at_fence; /* memory.events "high" when the fence was set */
	uint64_t high_events;          /* and now */
	uint64_t anon;                 /* memory.stat "anon" now */
	uint64_t shmem;                /* memory.stat "shmem" now: tmpfs and shared memory */
	uint64_t fence;                /* its memory.high now */
};

/* Whether a fenced cgroup pushes against its fence: the fence has throttled
 * it since it was set ("high" rose) and what it holds there is memory that
 * reclaim cannot give back without swap (anon and shmem together within
 * MG_FENCE_HELD_SLACK of the fence).
 * Page cache read past the fence is reclaimed at no one's cost, so a task
 * that only reads files is not pushing; one that allocates without end is,
 * and is judged at once rather than after a PSI window: its fence raised
 * (WIDEN) unless MemAvailable says memory is short, then killed, or raised
 * once if the fence never was and the others leave room. */
bool mg_policy_fence_pushed(const struct mg_fence_probe *p);
/* A fence (and each raising of it) lets the victim take this fraction of
 * what the node can spare above the hard floor: a runaway meets it with the
 * rest still free, so it is killed through the event (or its fence raised,
 * while MemAvailable is not below available_min, or once below it) before
 * the node reaches the hard floor. */
#define MG_FENCE_SPARE_NUM 3
#define MG_FENCE_SPARE_DEN 4

/* The slack below the fence, as a fraction 1/N of it, within which what a
 * fenced cgroup holds (anon and shmem) counts as pushing: kernel memory
 * (page tables, slab) that memory.current counts but memory.stat's anon and
 * shmem do not. */
#define MG_FENCE_HELD_SLACK 16

/* The shortest sleep between checks of MemAvailable. */
#define MG_POLL_MIN_USEC 100000ull
/* The allocation rate the poll interval assumes when MemAvailable is not
 * falling faster: the headroom above available_min lasts about one interval
 * at this rate. A faster burst is met by the PSI triggers and the fence's
 * memory.events; the poll is the net for a fall that stalls nothing. */
#define MG_ASSUMED_ALLOC_BPS (512ull << 20)
/* A measured fall counts this many times over: the next check comes while
 * half the headroom is still there. */
#define MG_POLL_FALL_MARGIN 2

/* A check that took this long is followed by a sleep at least this many
 * times as long: with thousands of guarded cgroups a decision under short
 * memory reads them all, and back to back it would take a core. */
#define MG_POLL_COST_FACTOR 4

/* How long to sleep before the next check, given MemAvailable, how fast it
 * falls (mg_fall_rate_update) and what the last check cost: the time the
 * headroom above available_min lasts at MG_ASSUMED_ALLOC_BPS, or at
 * MG_POLL_FALL_MARGIN times the measured fall when that is faster. A calm
 * node with gigabytes of headroom is looked at every poll_max; one that runs
 * out is looked at every MG_POLL_MIN_USEC, or MG_POLL_COST_FACTOR times the
 * last check's cost when that is longer (PSI triggers still wake it at
 * once). Returns that clamped to [MG_POLL_MIN_USEC, poll_max_usec] (memguardd
 * refuses a poll_max below MG_POLL_MIN_USEC). */
uint64_t mg_policy_poll_usec(const struct mg_policy *p, uint64_t available, uint64_t fall_bps,
                             uint64_t cost_usec);

/* When memguardd acts under p, in words, into buf. Returns buf. */
const char *mg_policy_describe(const struct mg_policy *p, char *buf, size_t size);
