#!/usr/bin/env bash
# Inside the systemd guest (bench/steps.sh boots it): a real Slurm, one job of 2 CPUs and 600 MiB, and
# in it the same list of short tasks run REPS times by each variant, in an order that turns each time:
#   steps          memguard --backend=steps -n 2 --tasks FILE -- CMD {}   (each task a job step)
#   parallel-srun  parallel -j 2 srun --exact -n1 -c1 --mem=SHARE CMD :::: FILE   (the sites' idiom)
#   local          memguard --backend=degraded -n 2 --tasks FILE -- CMD {}   (the tasks started by memguard)
# and five single steps (srun --exact true) for the cost of one. Writes OUT/timings.tsv (variant, rep,
# tasks, seconds, exit status), OUT/step.tsv and each run's output under OUT/.
#   bench/steps-guest.sh OUT REPS NTASKS BUILD
export MEMGUARD_BUILD=$4
# shellcheck source-path=SCRIPTDIR source=../tests/integration/lib.sh
. "$(dirname "$0")/../tests/integration/lib.sh"
# shellcheck source=../tests/integration/systemd/slurm_lib.sh
. "$(dirname "$0")/../tests/integration/systemd/slurm_lib.sh"
out=$1 reps=$2 ntasks=$3
install -m 0755 "$memguard" /usr/local/bin/memguard
slurm_up
trap 'slurm_down' EXIT
home=$(getent passwd "$slurm_user" | cut -d: -f6)
seq 1 "$ntasks" | sed 's/^/task-/' >"$home/list"
chown "$slurm_user" "$home/list"
cat >"$work/job.sh" <<JOB
#!/bin/bash
cd "\$HOME"
variants=(steps parallel-srun local)
for ((rep = 1; rep <= $reps; rep++)); do
	for ((k = 0; k < 3; k++)); do
		v=\${variants[(rep + k) % 3]}
		start=\$EPOCHREALTIME
		case \$v in
		steps) memguard --backend=steps -n 2 --tasks list -q -- true {} >"\$v.\$rep.out" 2>&1 ;;
		parallel-srun) parallel -j 2 srun --exact -n1 -c1 --mem=280M true :::: list >"\$v.\$rep.out" 2>&1 ;;
		local) memguard --backend=degraded -n 2 --tasks list -q -- true {} >"\$v.\$rep.out" 2>&1 ;;
		esac
		rc=\$?
		echo "\$v	\$rep	$ntasks	\$(awk -v a="\$start" -v b="\$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')	\$rc" >>timings.tsv
	done
done
for i in 1 2 3 4 5; do
	start=\$EPOCHREALTIME
	srun --exact -n1 -c1 --mem=50M true
	echo "srun	\$i	\$(awk -v a="\$start" -v b="\$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')" >>step.tsv
done
JOB
rm -f "$home/timings.tsv" "$home/step.tsv"
id=$(slurm_submit "$work/job.sh" --mem=600M -c 2)
SLURM_JOB_TIMEOUT=3600 slurm_wait_end "$id"
cp "$home"/timings.tsv "$home"/step.tsv "$home"/*.out "$(slurm_job_out "$id")" "$out/"
slurm_assert_eq "$(slurm_field "$id" JobState)" COMPLETED "the bench job's state"
