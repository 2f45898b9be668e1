#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Runs inside the guest (bench/run.sh boots it with tests/vm/vm.sh): benchmark cells one after another.
#   guest.sh RUN_DIR CELL...        CELL = VARIANT:REP:SCENARIO (bench/scenarios.sh)
# Per cell: clean the guest (leftover processes, cgroups, caches; wait for memory pressure to settle),
# start the sampler (bench/sampler.c) and the heartbeat (bench/heartbeat.c), start the scenario's tasks
# with the variant's launcher, wait for them up to the scenario's deadline, then write one JSON line to
# RUN_DIR/results.jsonl. The variant's daemon (earlyoom, nohang, memguardd) starts before the first cell
# of that variant and is restarted when it died, as its unit's Restart=always would.
# RUN_DIR/progress gets "start CELL DEADLINE" and "done CELL" lines for the host's watchdog; each cell's
# logs, reports, dmesg and /proc/vmstat (before and after) go to RUN_DIR/raw/CELL/; the daemon's whole
# log of one guest to RUN_DIR/raw/daemon-BOOT.log (and memguardd's kill log to
# RUN_DIR/raw/memguardd-kills-BOOT.jsonl).
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=scenarios.sh
. "$here/scenarios.sh"
# shellcheck source=daemons.sh
. "$here/daemons.sh"

usage() {
	echo "usage: guest.sh [-b BUILD_DIR] [-B BENCH_BIN_DIR] [-w WORK_SECONDS] [-d MAX_DEADLINE] [-p] RUN_DIR VARIANT:REP:SCENARIO..." >&2
	exit 2
}
build=$top/build-bench/build
bin=$top/build-bench/bin
max_deadline=
probe=0
while getopts b:B:w:d:p opt; do
	case $opt in
	b) build=$OPTARG ;;
	B) bin=$OPTARG ;;
	w) BENCH_WORK_SECONDS=$OPTARG ;; # read by scenario()
	d) max_deadline=$OPTARG ;;
	p) probe=1 ;; # run.sh --probe
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
(($# >= 2)) || usage
run_dir=$1
shift
memguard=$build/bin/memguard
memguardd=$build/bin/memguardd
memhog=$build/tests/programs/memhog
churn=$top/tests/programs/churn.py
cgroot=/sys/fs/cgroup
state=/tmp/bench
mkdir -p "$state" "$run_dir/raw"
run_dir=$(cd "$run_dir" && pwd)
results=$run_dir/results.jsonl
progress=$run_dir/progress

# The driver must survive whatever the cells do; everything it starts gets the default score back.
echo -1000 >/proc/self/oom_score_adj

# What the cell's programs write goes to the guest's tmpfs and is copied to the share after each cell:
# under load a file operation on the 9p share can take seconds (the host serves it on the cores that
# run the guest's CPUs), and a daemon or launcher blocked on its log would measure the harness, not
# the node. Only the heartbeat and the sampler write to the share while a cell runs, from threads
# of their own, so that a hung guest leaves their records behind.
boot=$(date +%s)-$$
kill_log=$state/memguardd-kills.jsonl
kill_log_share=$run_dir/raw/memguardd-kills-$boot.jsonl
write_memguard_conf "$state/memguard.conf" "$kill_log"
: >"$kill_log"

mem_total_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
kernel=$(uname -r)

now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

json_str() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}

# The pids of processes whose environment holds BENCH_CELL=$1 (any cell when $1 is empty).
tagged_pids() {
	local files
	if [[ -n $1 ]]; then
		files=$(grep -lzx -- "BENCH_CELL=$1" /proc/[0-9]*/environ 2>/dev/null || true)
	else
		files=$(grep -lz -- '^BENCH_CELL=' /proc/[0-9]*/environ 2>/dev/null || true)
	fi
	local f
	for f in $files; do
		f=${f#/proc/}
		echo "${f%/environ}"
	done
}

kill_tagged() {
	local pid
	for pid in $(tagged_pids "${1:-}"); do
		kill -KILL "$pid" 2>/dev/null || true
	done
}

# --- the variant's daemon -------------------------------------------------------------------------

daemon_pid=
daemon_log=$state/daemon.log
daemon_log_share=$run_dir/raw/daemon-$boot.log
daemon_restarts=0
: >"$daemon_log"

start_daemon() {
	daemon_command "$1" "$memguardd" "$state/memguard.conf"
	((${#DAEMON_CMD[@]})) || return 0
	echo "=== $(date +%T) starting ${DAEMON_CMD[*]}" >>"$daemon_log"
	(echo 0 >/proc/self/oom_score_adj && exec "${DAEMON_CMD[@]}") >>"$daemon_log" 2>&1 &
	daemon_pid=$!
	local i
	for ((i = 0; i < 120; i++)); do
		daemon_ready "$1" "$daemon_log" "$daemon_pid" && break
		sleep 0.25
	done
}

stop_daemon() {
	[[ -n $daemon_pid ]] || return 0
	kill -TERM "$daemon_pid" 2>/dev/null || true
	wait "$daemon_pid" 2>/dev/null || true
	daemon_pid=
}

# Restarts the daemon when it died (Restart=always in each unit).
ensure_daemon() {
	if [[ -n $daemon_pid ]] && ! kill -0 "$daemon_pid" 2>/dev/null; then
		wait "$daemon_pid" 2>/dev/null || true
		echo "=== $(date +%T) the daemon died; restarting it" >>"$daemon_log"
		daemon_restarts=$((daemon_restarts + 1))
		daemon_pid=
		start_daemon "$1"
	fi
}

# --- between cells -------------------------------------------------------------------------------

remove_cgroups() {
	local d
	for d in "$cgroot"/careful-*/task-* "$cgroot"/memguard/run-*/task-* "$cgroot"/careful-* \
		"$cgroot"/memguard/run-* "$cgroot"/bench-side; do
		if [[ -d $d ]]; then
			rmdir "$d" 2>/dev/null || true
		fi
	done
}

# Memory pressure of the previous cell must not leak into the next one (memguardd acts on PSI averages).
settle() {
	local i some
	if [[ ! -r /proc/pressure/memory ]]; then
		# No PSI (psi=0): nothing to wait for but the kernel's own reclaim after the drop above.
		sleep 2
		return 0
	fi
	for ((i = 0; i < 30; i++)); do
		some=$(awk '/^some/ { sub("avg10=", "", $2); print $2 }' /proc/pressure/memory)
		awk -v s="$some" 'BEGIN { exit !(s < 1.0) }' && break
		sleep 0.5
	done
}

clean_guest() {
	kill_tagged ""
	sleep 0.3
	remove_cgroups
	sync
	echo 3 >/proc/sys/vm/drop_caches
	settle
}

# --- one cell ------------------------------------------------------------------------------------

# Statuses as a JSON list, in task order; null for a task whose status is unknown.
collect_statuses() {
	local variant=$1 dir=$2 n=$3 i
	local -a st=()
	for ((i = 0; i < n; i++)); do
		st[i]=null
	done
	case $variant in
	strict | elastic)
		if [[ -s $dir/report.json ]]; then
			i=0
			local s
			while read -r s; do
				st[i]=$s
				i=$((i + 1))
			done <<<"$(grep -o '"status":-\?[0-9]*' "$dir/report.json" | cut -d: -f2)"
		fi
		;;
	*)
		if [[ -s $dir/status ]]; then
			local idx s
			while read -r idx s; do
				st[idx]=$s
			done <"$dir/status"
		fi
		;;
	esac
	local IFS=,
	echo "${st[*]}"
}

run_cell() {
	local variant=$1 rep=$2 scen=$3
	local id=$variant-r$rep-$scen
	local dir=$state/cell share_dir=$run_dir/raw/$id
	rm -rf "$dir" "$share_dir"
	mkdir -p "$dir" "$share_dir"
	scenario "$scen" "$bin" "$memhog" "$churn" || { echo "guest: no scenario $scen" >&2; return 1; }
	if [[ -n $max_deadline ]] && ((S_DEADLINE > max_deadline)); then
		S_DEADLINE=$max_deadline
	fi
	local share_kib=$((mem_total_kib * 95 / 100 / S_N))
	printf '%s\n' "${S_PARAMS[@]}" >"$dir/tasks"

	clean_guest
	ensure_daemon "$variant"
	local restarts_before=$daemon_restarts
	local log_off kill_off
	log_off=$(stat -c %s "$daemon_log")
	kill_off=$(stat -c %s "$kill_log")
	dmesg -C
	# The kernel's reclaim, compaction and THP counters around the cell: what a slow guest was doing.
	cat /proc/vmstat >"$dir/vmstat.before"
	echo "start $id $S_DEADLINE" >>"$progress"

	# The guest's clock as the host stamps it: bench/emulator.py lines the host's samples up with it.
	date +%s.%N >"$share_dir/guest-clock"
	# memory.tsv: the node's memory and each task's at every sample, to lay beside a kill's reason.
	"$bin/sampler" "$id" "$S_N" "$share_kib" "$share_dir/sampler.json" 100 "$dir/memory.tsv" &
	local sampler=$!
	(echo 0 >/proc/self/oom_score_adj && exec "$bin/heartbeat" "$share_dir/heartbeat.json") &
	local heartbeat=$!
	local probe_pid='' perf_pid=''
	if ((probe)); then
		"$bin/stallprobe" "$heartbeat" "$dir/stallprobe.txt" &
		probe_pid=$!
		perf record -q -a -F 199 -k realtime -o "$state/perf.data" 2>"$dir/perf.err" &
		perf_pid=$!
	fi
	sleep 1

	local launcher=()
	case $variant in
	kernel | earlyoom | nohang) launcher=("$here/plain.sh" "$dir/status" "$dir/tasks" --) ;;
	careful) launcher=("$here/careful.sh" "$dir/status" "$dir/tasks" --) ;;
	strict | elastic)
		launcher=("$memguard" "--$variant" -n "$S_N" --config "$state/memguard.conf" --tasks "$dir/tasks"
			--report "$dir/report.json" --)
		;;
	*) echo "guest: no variant $variant" >&2; return 1 ;;
	esac
	launcher+=("${S_TEMPLATE[@]}")
	printf '%q ' "${launcher[@]}" >"$dir/command"
	echo >>"$dir/command"

	local t0 t1 deadline_hit=false lstatus=0
	t0=$(now_ms)
	(echo 0 >/proc/self/oom_score_adj && exec env BENCH_CELL="$id" "${launcher[@]}") \
		>"$dir/launcher.out" 2>"$dir/launcher.err" &
	local lpid=$!
	# The side process: its own top-level cgroup, its status and end time into side.status.
	local side_pid=''
	if ((${#S_SIDE[@]})); then
		sleep 1
		mkdir -p "$cgroot/bench-side"
		(
			echo 0 >/proc/self/oom_score_adj
			echo $BASHPID >"$cgroot/bench-side/cgroup.procs"
			side_rc=0
			env BENCH_CELL="$id-side" "${S_SIDE[@]}" >"$dir/side.out" 2>&1 || side_rc=$?
			echo "$side_rc $(now_ms)" >"$dir/side.status"
		) &
		side_pid=$!
	fi
	while kill -0 "$lpid" 2>/dev/null; do
		if (($(now_ms) - t0 > S_DEADLINE * 1000)); then
			deadline_hit=true
			break
		fi
		sleep 0.5
	done
	if $deadline_hit; then
		# As a batch system would: SIGTERM (memguard forwards it and kills after its grace), then SIGKILL.
		kill -TERM "$lpid" 2>/dev/null || true
		local i
		for ((i = 0; i < 30 && $(kill -0 "$lpid" 2>/dev/null && echo 1 || echo 0); i++)); do
			sleep 0.5
		done
		kill -KILL "$lpid" 2>/dev/null || true
		kill_tagged "$id"
	fi
	wait "$lpid" || lstatus=$?
	t1=$(now_ms)
	local side=null
	if [[ -n $side_pid ]]; then
		# Still running once the tasks are done: nobody stopped it; the harness does.
		kill_tagged "$id-side"
		wait "$side_pid" || true
		local side_st side_end
		read -r side_st side_end <"$dir/side.status" 2>/dev/null || side_st=-1 side_end=0
		printf -v side '{"status":%d,"end_ms":%d,"stopped_by_harness":%s}' "$side_st" "$side_end" \
			"$( ((side_end >= t1)) && echo true || echo false)"
	fi
	sleep 1 # the sampler sees the end
	cat /proc/vmstat >"$dir/vmstat.after"

	if [[ -n $probe_pid ]]; then
		kill -INT "$perf_pid" 2>/dev/null || true
		kill -TERM "$probe_pid" 2>/dev/null || true
		wait "$perf_pid" "$probe_pid" || true
	fi
	local hb_killed=false hb_status=0
	kill -0 "$heartbeat" 2>/dev/null || hb_killed=true
	kill -TERM "$heartbeat" "$sampler" 2>/dev/null || true
	wait "$heartbeat" || hb_status=$?
	wait "$sampler" || true
	$hb_killed || ((hb_status == 0)) || hb_killed=true

	cp -a "$dir/." "$share_dir/"
	cp "$daemon_log" "$daemon_log_share"
	cp "$kill_log" "$kill_log_share"
	if [[ -n $perf_pid ]]; then
		perf script -i "$state/perf.data" -F time,cpu,comm,pid,ip,sym >"$share_dir/perf.txt" 2>>"$share_dir/perf.err" || true
		rm -f "$state/perf.data"
	fi
	dmesg >"$share_dir/dmesg"
	local oom_kills
	# Processes the kernel killed (memory.oom.group logs the victim twice).
	oom_kills=$(grep -o 'Killed process [0-9]*' "$share_dir/dmesg" | sort -u | grep -c . || true)
	tail -c +"$((log_off + 1))" "$daemon_log" >"$share_dir/daemon.log"
	tail -c +"$((kill_off + 1))" "$kill_log" >"$share_dir/memguardd-kills.jsonl"
	local daemon_kills=0
	case $variant in
	earlyoom) daemon_kills=$(grep -c 'sending SIG' "$share_dir/daemon.log" || true) ;;
	nohang) daemon_kills=$(grep -c 'Sending SIG[A-Z]* to the victim' "$share_dir/daemon.log" || true) ;;
	elastic) daemon_kills=$(grep -c . "$share_dir/memguardd-kills.jsonl" || true) ;;
	esac
	local daemon_alive=null
	if [[ -n $daemon_pid ]]; then
		daemon_alive=true
		kill -0 "$daemon_pid" 2>/dev/null || daemon_alive=false
	fi
	local statuses hb samp params=
	statuses=$(collect_statuses "$variant" "$share_dir" "$S_N")
	hb=$(head -n 1 "$share_dir/heartbeat.json" 2>/dev/null || true)
	samp=$(head -n 1 "$share_dir/sampler.json" 2>/dev/null || true)
	local a template=
	for a in "${S_TEMPLATE[@]}"; do
		template+=${template:+,}$(json_str "$a")
	done
	if ((S_N <= 8)); then
		for a in "${S_PARAMS[@]}"; do
			params+=${params:+,}$(json_str "$a")
		done
	fi
	printf '{"kind":"cell","variant":"%s","rep":%d,"scenario":"%s","n":%d,"offender":%d,"share_kib":%d,"deadline_s":%d,"deadline_hit":%s,"hung":false,"launch_ms":%d,"end_ms":%d,"launcher_status":%d,"statuses":[%s],"kernel_oom_kills":%d,"daemon_kill_lines":%d,"daemon_restarts":%d,"daemon_alive":%s,"heartbeat_killed":%s,"heartbeat":%s,"sampler":%s,"side":%s,"mem_total_kib":%d,"kernel":%s,"desc":%s,"template":[%s],"params":[%s]}\n' \
		"$variant" "$rep" "$scen" "$S_N" "$S_OFFENDER" "$share_kib" "$S_DEADLINE" "$deadline_hit" \
		"$t0" "$t1" "$lstatus" "$statuses" "$oom_kills" "$daemon_kills" \
		"$((daemon_restarts - restarts_before))" "$daemon_alive" "$hb_killed" "${hb:-null}" "${samp:-null}" "$side" \
		"$mem_total_kib" "$(json_str "$kernel")" "$(json_str "$S_DESC")" "$template" "$params" >>"$results"
	echo "done $id" >>"$progress"
	printf 'bench: %-28s %5.1fs  statuses [%s]%s\n' "$id" "$(((t1 - t0) / 1000)).$((((t1 - t0) % 1000) / 100))" \
		"$statuses" "$($deadline_hit && echo "  (deadline hit)")"
}

current=
for cell in "$@"; do
	IFS=: read -r variant rep scen <<<"$cell"
	if [[ $variant != "$current" ]]; then
		stop_daemon
		clean_guest
		start_daemon "$variant"
		current=$variant
	fi
	run_cell "$variant" "$rep" "$scen"
done
stop_daemon
cp "$daemon_log" "$daemon_log_share"
clean_guest
