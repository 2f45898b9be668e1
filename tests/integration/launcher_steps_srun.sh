#!/usr/bin/env bash
# Steps mode where srun starts no step at all (a site's srun wrapper that
# refuses, a Slurm too old for --exact, a partition that takes no steps):
# memguard stops at the first such step while none has started, says why
# and what to do (--backend=local), starts no more sruns, and reports the
# rest as not started, so that --resume-failed runs them later. Before, it
# ran every task through the failing srun, each one "failed".
# A fake srun and a fake Slurm job's environment: runs on the host through
# ctest (degraded) and in the VM (cgroup mode), so base.sh: lib.sh insists
# on cgroup v2.
. "$(dirname "${BASH_SOURCE[0]}")/base.sh"
W=$work

mkdir "$W/bin"
cat >"$W/bin/srun" <<SH
#!/bin/sh
echo x >>"$W/sruns"
echo "srun: error: Unable to create step for job 5: Requested node configuration is not available" >&2
exit 1
SH
chmod +x "$W/bin/srun"
job=(PATH="$W/bin:$PATH" SLURM_JOB_ID=5 SLURM_JOB_NODELIST=node1 SLURM_JOB_CPUS_PER_NODE=2
	SLURMD_NODENAME=node1 SLURM_MEM_PER_NODE=1024)
seq 8 >"$W/tasks"

set +e
env "${job[@]}" "$memguard" --backend=steps -n 2 --joblog "$W/joblog" --tasks "$W/tasks" -- echo {} \
	>"$W/out" 2>"$W/err"
rc=$?
set -e
note "exit $rc; $(grep -m1 'started no step' "$W/err")"
[ "$rc" -ne 0 ] || fail "memguard exited 0 though no task ran"
assert_contains "$W/err" "srun started no step (srun: exit 1; see srun's words above), and no step has started" \
	"the reason"
assert_contains "$W/err" "--backend=local runs them without Slurm steps" "what to do"
assert_contains "$W/err" "Unable to create step" "srun's own words"
sruns=$(wc -l <"$W/sruns")
((sruns <= 2)) || fail "$sruns sruns for -n 2: memguard went on starting steps"
awk -F'\t' 'NR > 1 { n[$12]++ } END { for (o in n) print o, n[o] }' "$W/joblog" | sort >"$W/outcomes"
note "sruns $sruns; joblog outcomes: $(tr '\n' ' ' <"$W/outcomes")"
started=$(awk -F'\t' 'NR > 1' "$W/joblog" | wc -l)
((started == sruns)) || fail "the joblog has $started attempts for $sruns sruns"
report_not_started=$(grep -c "not started: the run was stopped" "$W/err")
((report_not_started == 8 - sruns)) || fail "$report_not_started tasks reported not started, expected $((8 - sruns))"

# As it says: --resume-failed --backend=local runs every task, none lost.
env "${job[@]}" "$memguard" --backend=local -n 2 --joblog "$W/joblog" --resume-failed --tasks "$W/tasks" -- echo {} \
	>"$W/out2" 2>"$W/err2" || { cat "$W/err2" >&2; fail "the resumed run failed"; }
[ "$(sort -n "$W/out2" | tr '\n' ' ')" = "1 2 3 4 5 6 7 8 " ] || fail "the resumed run printed: $(tr '\n' ' ' <"$W/out2")"
[ "$(wc -l <"$W/sruns")" -eq "$sruns" ] || fail "the local backend ran srun"
note "resumed with --backend=local: all 8 ran"
echo PASS
