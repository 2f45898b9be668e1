#!/bin/bash
# Variants kernel, earlyoom and nohang: the tasks started the plain way a job script does, all at once
# with & and then wait. Whatever guards the node (the kernel's OOM killer, or a daemon) does so on its own.
#   plain.sh STATUS_OUT TASK_FILE -- CMD [ARGS...]
# "{}" in CMD and ARGS becomes the task's line of TASK_FILE, as with memguard --tasks. Each task gets
# MEMGUARD_TASK (its index) and MEMGUARD_NTASKS, as memguard would set them. STATUS_OUT gets one line
# "INDEX STATUS" per task (STATUS as from wait: 128 + signal when killed).
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true

if (($# < 4)) || [[ $3 != -- ]]; then
	echo "usage: plain.sh STATUS_OUT TASK_FILE -- CMD [ARGS...]" >&2
	exit 2
fi
out=$1 tasks=$2
shift 3
mapfile -t lines <"$tasks"
n=${#lines[@]}

pids=()
for i in "${!lines[@]}"; do
	argv=()
	for a in "$@"; do
		argv+=("${a//\{\}/${lines[i]}}")
	done
	MEMGUARD_TASK=$i MEMGUARD_NTASKS=$n "${argv[@]}" &
	pids+=("$!")
done
: >"$out"
for i in "${!pids[@]}"; do
	status=0
	wait "${pids[i]}" || status=$?
	echo "$i $status" >>"$out"
done
