#!/bin/bash
# Variant careful: what a careful user writes without memguard. One cgroup per task with
# memory.max = (MemTotal - reserve) / N and memory.swap.max = 0, made with mkdir and echo; the tasks
# start all at once, each in its cgroup; the cgroups are removed at the end.
#   careful.sh STATUS_OUT TASK_FILE -- CMD [ARGS...]
# Same interface and STATUS_OUT as plain.sh. The reserve is 5% of MemTotal, as memguard's default.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true

if (($# < 4)) || [[ $3 != -- ]]; then
	echo "usage: careful.sh STATUS_OUT TASK_FILE -- CMD [ARGS...]" >&2
	exit 2
fi
out=$1 tasks=$2
shift 3
mapfile -t lines <"$tasks"
n=${#lines[@]}

total_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
reserve_kib=$((total_kib * 5 / 100))
max=$(((total_kib - reserve_kib) * 1024 / n))

root=/sys/fs/cgroup
job=$root/careful-$$
echo +memory >"$root/cgroup.subtree_control"
mkdir "$job"
echo +memory >"$job/cgroup.subtree_control"

pids=()
for i in "${!lines[@]}"; do
	cg=$job/task-$i
	mkdir "$cg"
	echo "$max" >"$cg/memory.max"
	echo 0 >"$cg/memory.swap.max"
	argv=()
	for a in "$@"; do
		argv+=("${a//\{\}/${lines[i]}}")
	done
	(
		echo "$BASHPID" >"$cg/cgroup.procs"
		export MEMGUARD_TASK=$i MEMGUARD_NTASKS=$n
		exec "${argv[@]}"
	) &
	pids+=("$!")
done
: >"$out"
for i in "${!pids[@]}"; do
	status=0
	wait "${pids[i]}" || status=$?
	echo "$i $status" >>"$out"
done
for i in "${!lines[@]}"; do
	rmdir "$job/task-$i" 2>/dev/null || echo "careful: $job/task-$i still has processes" >&2
done
rmdir "$job" 2>/dev/null || true
