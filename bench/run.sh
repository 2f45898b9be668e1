#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# memguard's benchmark: every scenario under every variant, side by side in throwaway 1 GiB swapless
# guests (tests/vm/vm.sh), then the programs' own costs; renders docs/benchmarks.md from the results.
# See docs/benchmarks.md for what is measured and how.
set -euo pipefail

usage() {
	cat >&2 <<-'EOF'
		usage: bench/run.sh [--smoke] [OPTIONS]
		  --smoke              one scenario (runaway), variants kernel and strict, one repetition, short
		                       work and deadlines, no program costs; renders into the run directory only
		  --reps N             repetitions of every cell (default 3)
		  --guest-per-variant  one guest for each variant and repetition, its scenarios one after the
		                       other, as earlier full runs did; by default every cell gets a
		                       fresh guest: under TCG the emulator holds a guest the longer, the more it
		                       has run before (docs/benchmarks.md), at the cost of a guest's start per cell
		  --guest-per-cell     the default, above
		  --scenarios "A B"    scenarios to run (default: all; see bench/scenarios.sh)
		  --variants "A B"     variants to run (default: all)
		  --no-costs           skip the start-up costs (a systemd guest)
		  --no-idle            skip the daemons' idle costs (a full run keeps those of the results it
		                       replaces, marked with the run that measured them: bench/carry.py)
		  --idle-minutes M     how long the daemons idle (default 10)
		  --idle-mem "MIB..."  guest sizes the daemons idle in, one guest each (default "1024 8192")
		  --scale              also measure memguardd's decision time against the guard's size (without
		                       it, a full run keeps the scale records it replaces, as for --no-idle)
		  --scale-n "N..."     guarded cgroup counts for --scale (default "1 64 1024 4096")
		  --scale-mem MIB      the scale guest's memory (default 3072)
		  --scale-seconds S    how long memguardd decides at each count (default 20)
		  --scale-share "B..." one scale guest per value: "none" (memguardd falls back to memory.max for
		                       each cgroup's share) or bytes in the launcher's share xattr (default "none")
		  --only "PART..."     run only these parts: cells, costs, idle, scale (e.g. "scale idle");
		                       without cells the report goes into the run directory only
		  --costs-n "N..."     task counts for the start-up costs (default "16 256 1024")
		  --costs-reps N       repetitions of the start-up costs (default 3)
		  --calibrate          only calibrate lazygc's LIVE_MIB in a guest and print the measurements
		  --live "MIB..."      live sizes for --calibrate (default "72 80 88 96")
		  --out DIR            build and result directory (default build-bench/ in the repo)
		  --no-render          do not write the report
		  --probe              diagnose late heartbeats: bench/stallprobe.c follows each cell's heartbeat
		                       and perf samples the guest's CPUs (raw/CELL/stallprobe.txt, perf.txt); it
		                       adds a real-time process and perf's load, so keep such a run out of the tables
		  --no-emulator-profile  do not sample QEMU. By default (TCG only) perf samples it on the host at
		                       97 Hz and bench/emulator.py gives each cell the share of the emulator's CPU that
		                       ran the guest's code (raw/CELL/emulator.json, "emulator" lines in results.jsonl):
		                       a cell the emulator slowed shows a small share, whatever the guard did
		  --doc FILE           where the report goes (default docs/benchmarks.md; --smoke: the run dir)
		  --kernel SERIES      every guest boots this kernel (tests/vm/vm.sh --kernel: 5.10, 6.1, 6.12);
		                       a series other than 6.1 keeps its results apart, in
		                       bench/results/kernel-SERIES[-ARGS]/, with the section that bench/kernels.py
		                       writes for docs/benchmarks.md there; it never renders docs/benchmarks.md
		  --append ARGS        extra kernel parameters for every guest, e.g. 'psi=0'
	EOF
	exit 2
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
top=$(cd "$here/.." && pwd -P)
# shellcheck source=scenarios.sh
. "$here/scenarios.sh"

smoke=0 reps=3 costs=1 idle=1 idle_minutes=10 costs_n="16 256 1024" costs_reps=3 calibrate=0
live="72 80 88 96" out=$top/build-bench render=1 doc='' cells=1 idle_mem="1024 8192"
scale=0 scale_n="1 64 1024 4096" scale_mem=3072 scale_seconds=20 scale_share=none only=
probe=0 emulator_profile=1 emulator_failed=0 guest_per_cell=1 series=6.1 append=
scenarios="${BENCH_SCENARIOS[*]}" variants="${BENCH_VARIANTS[*]}"
while (($#)); do
	case $1 in
	--smoke) smoke=1 reps=1 costs=0 idle=0 scale=0 scenarios=runaway variants="kernel strict"; shift ;;
	--reps) reps=${2:-}; shift 2 || usage ;;
	--guest-per-cell) guest_per_cell=1; shift ;;
	--guest-per-variant) guest_per_cell=0; shift ;;
	--scenarios) scenarios=${2:-}; shift 2 || usage ;;
	--variants) variants=${2:-}; shift 2 || usage ;;
	--no-costs) costs=0; shift ;;
	--no-idle) idle=0; shift ;;
	--idle-minutes) idle_minutes=${2:-}; shift 2 || usage ;;
	--idle-mem) idle_mem=${2:-}; shift 2 || usage ;;
	--scale) scale=1; shift ;;
	--scale-n) scale_n=${2:-}; shift 2 || usage ;;
	--scale-mem) scale_mem=${2:-}; shift 2 || usage ;;
	--scale-seconds) scale_seconds=${2:-}; shift 2 || usage ;;
	--scale-share) scale_share=${2:-}; shift 2 || usage ;;
	--only) only=${2:-}; shift 2 || usage ;;
	--costs-n) costs_n=${2:-}; shift 2 || usage ;;
	--costs-reps) costs_reps=${2:-}; shift 2 || usage ;;
	--calibrate) calibrate=1; shift ;;
	--live) live=${2:-}; shift 2 || usage ;;
	--out) out=${2:-}; shift 2 || usage ;;
	--probe) probe=1; shift ;;
	--no-emulator-profile) emulator_profile=0; shift ;;
	--no-render) render=0; shift ;;
	--doc) doc=${2:-}; shift 2 || usage ;;
	--kernel) series=${2:-}; shift 2 || usage ;;
	--append) append=${2:-}; shift 2 || usage ;;
	*) usage ;;
	esac
done
# Under KVM the guest's code runs outside qemu's user space: there is no emulator to profile.
[[ ${MEMGUARD_VM_ACCEL:-tcg} == tcg ]] || emulator_profile=0
[[ $reps =~ ^[1-9][0-9]*$ && $idle_minutes =~ ^[0-9]+$ && $costs_reps =~ ^[1-9][0-9]*$ ]] || usage
[[ $scale_mem =~ ^[1-9][0-9]*$ && $scale_seconds =~ ^[1-9][0-9]*$ ]] || usage
for m in $idle_mem; do
	[[ $m =~ ^[1-9][0-9]*$ ]] || usage
done
for n in $scale_n; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || usage
done
for b in $scale_share; do
	[[ $b == none || $b =~ ^[1-9][0-9]*$ ]] || usage
done
if [[ -n $only ]]; then
	cells=0 costs=0 idle=0 scale=0
	for part in ${only//,/ }; do
		case $part in
		cells) cells=1 ;;
		costs) costs=1 ;;
		idle) idle=1 ;;
		scale) scale=1 ;;
		*) echo "bench: no part $part (cells, costs, idle, scale)" >&2; exit 2 ;;
		esac
	done
fi
for s in $scenarios; do
	[[ " ${BENCH_SCENARIOS[*]} " == *" $s "* ]] || { echo "bench: no scenario $s" >&2; exit 2; }
done
for v in $variants; do
	[[ " ${BENCH_VARIANTS[*]} " == *" $v "* ]] || { echo "bench: no variant $v" >&2; exit 2; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
[[ $out == "$top"/* ]] || { echo "bench: --out must be inside the repo (the guest shares only it)" >&2; exit 2; }

# Every guest of the run boots the same kernel with the same parameters.
vm=("$top/tests/vm/vm.sh" --kernel "$series")
[[ -n $append ]] && vm+=(--append "$append")
# Results of another kernel, or other parameters, live beside the main ones, not over them.
results_dir=$here/results
if [[ $series != 6.1 || -n $append ]]; then
	results_dir=$here/results/kernel-$series${append:+-${append//[^a-zA-Z0-9=.]/_}}
fi
build=$out/build
bin=$out/bin
began=$SECONDS

say() { echo "bench: $*" >&2; }

elapsed() {
	local s=$((SECONDS - ${1:-$began}))
	printf '%dm%02ds' $((s / 60)) $((s % 60))
}

# --- dependencies and build ----------------------------------------------------------------------

ensure_deps() {
	local want=(cmake gcc pkg-config libsystemd-dev libinih-dev python3) need=() p
	((smoke)) || want+=(earlyoom nohang pypy3)
	((emulator_profile)) && want+=(linux-perf)
	for p in "${want[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
	done
	((${#need[@]})) || return 0
	[[ $(id -u) == 0 ]] || { say "missing ${need[*]}: run as root or apt-get install them"; exit 1; }
	say "installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends "${need[@]}" >&2 ||
		{ apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "${need[@]}" >&2; }
	# The benchmark runs earlyoom and nohang only inside guests; on a systemd host the packages would
	# start them right here, guarding (and killing on) the build host.
	if [[ -d /run/systemd/system ]]; then
		for p in earlyoom nohang nohang-desktop; do
			if [[ " ${need[*]} " == *" ${p%-desktop} "* ]]; then
				systemctl disable --now "$p.service" >&2 2>/dev/null || true
			fi
		done
	fi
}

build_all() {
	say "building memguard in $build and the bench programs in $bin"
	cmake -S "$top" -B "$build" -DMEMGUARD_TESTS=OFF >"$out/cmake.log" 2>&1 ||
		{ cat "$out/cmake.log" >&2; exit 1; }
	cmake --build "$build" -j2 >>"$out/cmake.log" 2>&1 || { tail -n 40 "$out/cmake.log" >&2; exit 1; }
	mkdir -p "$bin"
	local c
	for c in heartbeat sampler spawn worker stallprobe; do
		cc -O2 -Wall -Wextra -pthread -o "$bin/$c" "$here/$c.c"
	done
	# Thousands of copies of it sleep in the scale guest: static, so each maps only its own few pages.
	cc -O2 -Wall -Wextra -static -o "$bin/sleepers" "$here/sleepers.c"
	# shellcheck disable=SC2046 # pkg-config prints one flag per word
	cc -O2 -Wall -Wextra -o "$bin/sdfloor" "$here/sdfloor.c" $(pkg-config --cflags --libs libsystemd)
}

# --- guests --------------------------------------------------------------------------------------

descendants() {
	local p
	for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		echo "$p"
		descendants "$p"
	done
}

# The qemu processes under vm.sh (pid $1): its guest, once started.
qemu_of() {
	local p
	for p in $(descendants "$1"); do
		if [[ $(ps -o comm= -p "$p" 2>/dev/null) == qemu-system* ]]; then
			echo "$p"
		fi
	done
}

# The qemu process of the guest that vm.sh (pid $1) runs, once it has started (vm.sh may first build
# the guest's initramfs); empty if vm.sh ended without one.
guest_qemu() {
	local q
	while kill -0 "$1" 2>/dev/null; do
		q=$(qemu_of "$1")
		[[ -z $q ]] || { echo "${q%%$'\n'*}"; return; }
		sleep 0.2
	done
}

# Samples the guest's qemu (vm.sh's pid $1) into $2 until it exits.
profile_emulator() {
	local q
	q=$(guest_qemu "$1")
	[[ -n $q ]] || { say "no qemu process under $1 to profile"; return 1; }
	perf record -q -F 97 -k realtime -p "$q" -o "$2" 2>>"$run_dir/console.log"
}

# Waits for profile_emulator (pid $1) and writes the emulator's shares of the cells "${@:3}" from its
# samples ($2); fails when there are none.
profile_cells() {
	local pid=$1 data=$2 ids=() c v r s
	shift 2
	if ! wait "$pid" || [[ ! -s $data ]]; then
		say "perf could not sample the emulator (see console.log)"
		return 1
	fi
	for c in "$@"; do
		IFS=: read -r v r s <<<"$c"
		[[ ! -d $run_dir/raw/$v-r$r-$s ]] || ids+=("$v-r$r-$s")
	done
	((${#ids[@]} == 0)) || python3 "$here/emulator.py" "$run_dir" "$data" "${ids[@]}" \
		>>"$run_dir/results.jsonl" ||
		{ say "bench/emulator.py failed on $data"; return 1; }
}

# Stops the guest that vm.sh (pid $1) runs: its qemu process, by pid. vm.sh then reports the guest as
# crashed and cleans up after itself.
kill_guest() {
	local p
	for p in $(qemu_of "$1"); do
		kill -TERM "$p" 2>/dev/null || true
	done
}

# Deadline of a scenario, as guest.sh will use it.
scenario_deadline() {
	scenario "$1" x x x
	if ((smoke && S_DEADLINE > smoke_deadline)); then
		S_DEADLINE=$smoke_deadline
	fi
	echo "$S_DEADLINE"
}

smoke_deadline=60
smoke_work=6

# Boots one guest for the cells "$@" (VARIANT:REP:SCENARIO) and watches it: a cell that runs longer
# than its deadline plus a margin means the guest hung; the guest is stopped and the cell recorded as
# hung (with what its heartbeat and sampler wrote before). Sets $left to the cells that did not start.
run_group() {
	local cells=("$@") total=120 c v r s
	for c in "${cells[@]}"; do
		IFS=: read -r v r s <<<"$c"
		total=$((total + $(scenario_deadline "$s") + 90))
	done
	local gargs=(-b "$build" -B "$bin")
	((smoke)) && gargs+=(-w "$smoke_work" -d "$smoke_deadline")
	((probe)) && gargs+=(-p)
	: >"$run_dir/progress"
	"${vm[@]}" --timeout "$total" -- "$here/guest.sh" "${gargs[@]}" "$run_dir" "${cells[@]}" \
		>>"$run_dir/console.log" 2>&1 &
	local vmpid=$! cur='' cur_since=0 cur_deadline=0 hung='' line rc=0 emu_pid='' emu_data=''
	if ((emulator_profile)); then
		mkdir -p "$run_dir/raw" # the guest makes it too, but only once it has booted
		emu_data=$run_dir/raw/emulator-$vmpid.perf.data
		profile_emulator "$vmpid" "$emu_data" &
		emu_pid=$!
	fi
	while kill -0 "$vmpid" 2>/dev/null; do
		sleep 2
		line=$(tail -n 1 "$run_dir/progress" 2>/dev/null || true)
		case $line in
		start\ *)
			read -r _ c s <<<"$line"
			if [[ $c != "$cur" ]]; then
				cur=$c cur_since=$SECONDS cur_deadline=$s
			elif ((SECONDS - cur_since > cur_deadline + 90)); then
				say "$cur: no end $((SECONDS - cur_since)) s after its start: the guest hung; stopping it"
				hung=$cur
				kill_guest "$vmpid"
				break
			fi
			;;
		esac
	done
	wait "$vmpid" || rc=$?
	if [[ -n $emu_pid ]]; then
		profile_cells "$emu_pid" "$emu_data" "${cells[@]}" || emulator_failed=1
	fi
	left=()
	for c in "${cells[@]}"; do
		IFS=: read -r v r s <<<"$c"
		local id=$v-r$r-$s
		grep -qx "done $id" "$run_dir/progress" && continue
		if grep -qx "start $id .*" "$run_dir/progress" || [[ $id == "$hung" ]]; then
			record_hung "$v" "$r" "$s" "$rc"
		else
			left+=("$c")
		fi
	done
	((rc == 0)) || say "the guest exited with $rc (124: timed out, 125: crashed or stopped)"
}

record_hung() {
	local v=$1 r=$2 s=$3 rc=$4 id=$1-r$2-$3 hb sp
	scenario "$s" x x x
	hb=$(head -n 1 "$run_dir/raw/$id/heartbeat.json" 2>/dev/null || true)
	sp=$(head -n 1 "$run_dir/raw/$id/sampler.json" 2>/dev/null || true)
	say "$id: recorded as hung"
	printf '{"kind":"cell","variant":"%s","rep":%d,"scenario":"%s","n":%d,"offender":%d,"hung":true,"vm_status":%d,"deadline_s":%d,"heartbeat":%s,"sampler":%s}\n' \
		"$v" "$r" "$s" "$S_N" "$S_OFFENDER" "$rc" "$(scenario_deadline "$s")" "${hb:-null}" "${sp:-null}" \
		>>"$run_dir/results.jsonl"
}

# Adds one guest's worth of cells "$@" (a variant's repetition, or the whole smoke run) to the caller's
# groups: a group per cell with a guest per cell, else one group for them all.
add_cells() {
	if (($# == 0)); then
		return 0
	elif ((guest_per_cell)); then
		groups+=("$@")
	else
		groups+=("$*")
	fi
}

run_cells() {
	local groups=() cells=() v r s
	if ((smoke)); then
		for v in $variants; do
			for s in $scenarios; do
				cells+=("$v:1:$s")
			done
		done
		add_cells "${cells[@]}"
	else
		for ((r = 1; r <= reps; r++)); do
			for v in $variants; do
				cells=()
				for s in $scenarios; do
					cells+=("$v:$r:$s")
				done
				add_cells "${cells[@]}"
			done
		done
	fi
	local g i=0 t
	for g in "${groups[@]}"; do
		i=$((i + 1))
		t=$SECONDS
		# shellcheck disable=SC2086 # the cells are words
		set -- $g
		say "guest $i/${#groups[@]}: $*"
		local tries=0
		while (($#)) && ((tries < 3)); do
			run_group "$@"
			tries=$((tries + 1))
			if ((${#left[@]} == $#)); then
				say "the guest ran none of its cells (see $run_dir/console.log)"
				tries=3
				continue
			fi
			set -- "${left[@]}"
		done
		for c in "$@"; do
			say "$c: never ran"
		done
		say "guest $i done in $(elapsed "$t"), $(elapsed) so far"
	done
}

run_costs() {
	local t=$SECONDS rc=0
	say "start-up costs (systemd guest): N = $costs_n, $costs_reps repetitions"
	# shellcheck disable=SC2086 # the task counts are words
	"${vm[@]}" --systemd --timeout 3600 -- "$here/costs.sh" -b "$build" -B "$bin" -r "$costs_reps" "$run_dir" \
		$costs_n >>"$run_dir/console.log" 2>&1 || rc=$?
	((rc == 0)) || say "the costs guest exited with $rc"
	say "costs done in $(elapsed "$t")"
}

# One guest per size in $idle_mem: the idle interval follows MemAvailable, so the guest's size matters.
run_idle() {
	local t=$SECONDS rc m
	for m in $idle_mem; do
		rc=0
		say "idle daemons in a $m MiB guest: $idle_minutes minutes"
		"${vm[@]}" --mem "$m" --timeout $((idle_minutes * 60 + 900)) -- "$here/idle.sh" -b "$build" -g "$m" \
			"$run_dir" "$idle_minutes" >>"$run_dir/console.log" 2>&1 || rc=$?
		((rc == 0)) || say "the $m MiB idle guest exited with $rc"
	done
	say "idle done in $(elapsed "$t")"
}

run_scale() {
	local t=$SECONDS rc b sargs
	for b in $scale_share; do
		rc=0 sargs=()
		[[ $b == none ]] || sargs=(-S "$b")
		say "decision time against the guard's size: N = $scale_n in a $scale_mem MiB guest, share xattr $b"
		# shellcheck disable=SC2086 # the counts are words
		"${vm[@]}" --mem "$scale_mem" --timeout 5400 -- "$here/scale.sh" -b "$build" -B "$bin" -s "$scale_seconds" \
			"${sargs[@]}" "$run_dir" $scale_n >>"$run_dir/console.log" 2>&1 || rc=$?
		((rc == 0)) || say "the scale guest exited with $rc"
	done
	say "scale done in $(elapsed "$t")"
}

write_meta() {
	local cpu qemu git dirty parts='' p
	for p in cells costs idle scale; do
		if ((${!p})); then
			parts+="$p "
		fi
	done
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	qemu=$(qemu-system-x86_64 --version 2>/dev/null | head -n 1 || true)
	git=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
	dirty=$(git -C "$top" status --porcelain 2>/dev/null | grep -c . || true)
	ver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo none; }
	# The daemon's extra config lines, inside a JSON string: one line of results.jsonl.
	json_escape() {
		local v=${1//\\/\\\\}
		v=${v//\"/\\\"}
		v=${v//$'\t'/\\t}
		printf '%s' "${v//$'\n'/\\n}"
	}
	printf '{"kind":"meta","run":"%s","date":"%s","smoke":%s,"reps":%d,"host_cpu":"%s","host_cores":%d,"host_kernel":"%s","qemu":"%s","accel":"%s","guest_mem_mib":1024,"host_loadavg":"%s","host_mem_free_mib":%d,"parts":"%s","git":"%s","dirty_files":%d,"earlyoom":"%s","nohang":"%s","pypy3":"%s","churn_live_mib":%d,"churn_seconds":%d,"work_seconds":%d,"daemon_conf":"%s","earlyoom_args":%s,"guest_per_cell":%s,"kernel_series":"%s","kernel_append":"%s"}\n' \
		"$run_id" "$(date -u +%FT%TZ)" "$( ((smoke)) && echo true || echo false)" "$reps" "$cpu" "$(nproc)" \
		"$(uname -r)" "$qemu" "${MEMGUARD_VM_ACCEL:-tcg}" "$(cut -d' ' -f1-3 /proc/loadavg)" \
		"$(awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo)" \
		"${parts% }" "$git" "$dirty" "$(ver earlyoom)" "$(ver nohang)" \
		"$(ver pypy3)" "$BENCH_CHURN_LIVE" "$BENCH_CHURN_SECONDS" \
		"$( ((smoke)) && echo "$smoke_work" || echo "$BENCH_WORK_SECONDS")" \
		"$(json_escape "${MEMGUARD_BENCH_DAEMON_CONF:-}")" \
		"$([[ -v MEMGUARD_BENCH_EARLYOOM_ARGS ]] && printf '"%s"' "$(json_escape "$MEMGUARD_BENCH_EARLYOOM_ARGS")" || echo null)" \
		"$( ((guest_per_cell)) && echo true || echo false)" "$series" "$(json_escape "$append")" \
		>>"$run_dir/results.jsonl"
}

# --- main ----------------------------------------------------------------------------------------

ensure_deps
build_all
run_id=$(date +%Y%m%d-%H%M%S)
((smoke)) && run_id+=-smoke
((calibrate)) && run_id+=-calibrate
run_dir=$out/runs/$run_id
mkdir -p "$run_dir"
ln -sfn "runs/$run_id" "$out/latest"
say "run $run_id: results in $run_dir"

if ((calibrate)); then
	# shellcheck disable=SC2086 # the sizes are words
	"${vm[@]}" --timeout 1800 -- "$here/calibrate.sh" "$run_dir/calibrate.jsonl" "$build" "$BENCH_CHURN_SECONDS" \
		$live
	mkdir -p "$here/results"
	cp "$run_dir/calibrate.jsonl" "$here/results/calibrate.jsonl"
	say "calibration done in $(elapsed); bench/results/calibrate.jsonl goes into the report;" \
		"set BENCH_CHURN_LIVE in bench/scenarios.sh"
	exit 0
fi

write_meta
((cells)) && run_cells
((costs)) && run_costs
((idle && idle_minutes > 0)) && run_idle
((scale)) && run_scale
printf '{"kind":"end","seconds":%d}\n' $((SECONDS - began)) >>"$run_dir/results.jsonl"
say "measured in $(elapsed)"

status=0
if ((render)); then
	if ((smoke || !cells)); then
		# Without the cells the report would lose its main part: it goes into the run directory.
		python3 "$here/render.py" --results "$run_dir/results.jsonl" --md "${doc:-$run_dir/benchmarks.md}" \
			--svg "$run_dir/benchmarks.svg" --svg-link benchmarks.svg || status=$?
		if ((smoke)); then
			sed -n '/^| scenario | variant | finished/,/^$/p' "${doc:-$run_dir/benchmarks.md}"
		fi
	else
		if [[ $results_dir != "$here/results" ]]; then
			# Another kernel: its results and their page stay beside the main run's.
			mkdir -p "$results_dir"
			cp "$run_dir/results.jsonl" "$results_dir/results.jsonl"
			python3 "$here/render.py" --results "$results_dir/results.jsonl" --md "${doc:-$results_dir/benchmarks.md}" \
				--svg "$results_dir/benchmarks.svg" --svg-link benchmarks.svg || status=$?
			# Its section of docs/benchmarks.md: memguardd and earlyoom on this kernel, beside the main run.
			python3 "$here/kernels.py" --results "$results_dir/results.jsonl" --main "$here/results/results.jsonl" \
				--md "$results_dir/section.md" || status=$?
		else
			mkdir -p "$here/results"
			# The idle and scale records this run did not measure stay, marked with the run that did.
			carry=()
			((idle && idle_minutes > 0)) || carry+=(idle)
			((scale)) || carry+=(scale)
			python3 "$here/carry.py" --new "$run_dir/results.jsonl" --old "$here/results/results.jsonl" \
				--kinds "${carry[*]}" >"$here/results/results.jsonl.new" &&
				mv "$here/results/results.jsonl.new" "$here/results/results.jsonl" || status=$?
			python3 "$here/render.py" --results "$here/results/results.jsonl" --md "${doc:-$top/docs/benchmarks.md}" \
				--svg "$here/results/benchmarks.svg" --svg-link ../bench/results/benchmarks.svg \
				--scale-svg "$here/results/benchmarks-scale.svg" --scale-svg-link ../bench/results/benchmarks-scale.svg \
				--calibration "$here/results/calibrate.jsonl" --notes "$here/results/notes.md" || status=$?
		fi
	fi
fi
# The harness worked when every cell left a record (a hung guest is a result, a missing record is not).
expected=0
((cells)) || scenarios=
for s in $scenarios; do
	for v in $variants; do
		expected=$((expected + reps))
	done
done
got=$(grep -c '"kind":"cell"' "$run_dir/results.jsonl" || true)
if ((got != expected)); then
	say "only $got of $expected cells have a result"
	status=1
fi
if ((emulator_failed)); then
	say "some guests have no emulator profile (above; --no-emulator-profile runs without)"
	status=1
fi
say "done in $(elapsed)"
exit "$status"
