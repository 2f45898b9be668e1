#!/usr/bin/env bash
# B4 of issue 47, end to end: a sweep of CPython tasks under RLIMIT_AS ends
# with sizing advice, and a second run that follows it (its --mem-per-task
# and its -n) succeeds. Before, the advice came from resident memory alone,
# below the address space the interpreter needs under RLIMIT_AS: every task
# of the next run failed with MemoryError; and its -n was the budget's count
# (569 on a 2-core host), not bounded by the CPUs.
# Runs on the host through ctest (degraded: RLIMIT_AS all the same; each task
# holds 40 MiB) and in the VM (cgroup mode), so base.sh: lib.sh insists on cgroup v2.
. "$(dirname "${BASH_SOURCE[0]}")/base.sh"
memguard_here
command -v python3 >/dev/null || fail "python3 is missing"

# Each task holds 40 MiB for a second, and reserves 64 MiB it never touches, as
# a runtime's thread stacks or a library's arenas do: address space that is
# not resident, which RLIMIT_AS counts all the same.
cat >"$work/task.py" <<'PY'
import mmap, time
x = bytearray(40 << 20)
reserved = mmap.mmap(-1, 64 << 20)
time.sleep(1)
PY
printf '1\n2\n3\n' >"$work/list"
"${mg[@]}" --strict --rlimit-as on --mem 1G -n 3 --tasks "$work/list" -- python3 "$work/task.py" {} 2>"$work/err1" ||
	{ cat "$work/err1"; fail "the first run failed"; }
cat "$work/err1"
advice=$(grep '^memguard: sizing:' "$work/err1") || fail "no sizing advice"
share=$(sed -n 's/.*--mem-per-task \([^ ]*\) would fit them all.*/\1/p' <<<"$advice")
n=$(sed -n 's/.*(-n \([0-9]*\).*/\1/p' <<<"$advice")
if [ -z "$share" ] || [ -z "$n" ]; then fail "no --mem-per-task or -n in: $advice"; fi
note "the advice: --mem-per-task $share -n $n"
grep -q "their address space reached .* under RLIMIT_AS, which is the share" <<<"$advice" ||
	fail "the advice does not say it rests on the address space: $advice"
cpus=$(nproc)
[ "$n" -le "$((cpus > 3 ? cpus : 3))" ] || fail "-n $n is more than the $cpus CPUs (and the run's 3)"

status=0
"${mg[@]}" --strict --rlimit-as on --mem-per-task "$share" -n "$n" --tasks "$work/list" -- python3 "$work/task.py" {} \
	2>"$work/err2" || status=$?
cat "$work/err2"
[ "$status" = 0 ] || fail "following the advice, the run failed (exit $status)"
if grep -q MemoryError "$work/err2"; then
	fail "following the advice, a task ran out of address space"
fi
note "all passed"
