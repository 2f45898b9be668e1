# Starting and stopping memguardd for the daemon tests. Sourced after lib.sh.

# start_daemon [EXTRA CONFIG LINES]: a config under $work, the kill log in
# $work/kills.jsonl, the daemon's log in $work/daemon.log.
start_daemon() {
	cat >"$work/memguard.conf" <<-CONF
		[daemon]
		kill_log = $work/kills.jsonl
		settle = 1s
		$*
	CONF
	# The log is appended to across restarts: wait for this start's line.
	local started
	started=$(grep -c "watching" "$work/daemon.log" 2>/dev/null || true)
	"$memguardd" -v -c "$work/memguard.conf" >>"$work/daemon.log" 2>&1 &
	daemon_pid=$!
	for _ in $(seq 100); do
		[ "$(grep -c "watching" "$work/daemon.log" 2>/dev/null || true)" -gt "${started:-0}" ] && return 0
		kill -0 "$daemon_pid" 2>/dev/null || { cat "$work/daemon.log"; fail "memguardd exited at start"; }
		sleep 0.05
	done
	cat "$work/daemon.log"
	fail "memguardd did not start"
}

stop_daemon() {
	kill -TERM "$daemon_pid" 2>/dev/null || true
	wait "$daemon_pid" 2>/dev/null || true
}

# The attacker tests' two ordinary users (created once per guest) and the
# binaries they may run, as the build tree may not be theirs to read:
# $work/bin/memhog, and $work/attacker/sshd, the attacker's copy of $1.
attack_setup() {
	local u
	for u in mgvictim mgattacker; do
		id "$u" >/dev/null 2>&1 || useradd -M -N -s /bin/sh "$u"
	done
	chmod 755 "$work"
	mkdir "$work/bin" "$work/attacker"
	cp "$memhog" "$work/bin/memhog"
	cp "$1" "$work/attacker/sshd"
	chown -R mgattacker "$work/attacker"
}

# attack_stage NAME: the trust tests' stage: jobs=$cgroot/NAME, removed with
# $work at exit after memguardd stops, and attack_setup /bin/sleep.
attack_stage() {
	jobs=$cgroot/$1
	trap 'stop_daemon; remove_tree "$jobs"; rm -rf "$work"' EXIT
	attack_setup /bin/sleep
}

# delegate USER CGROUP LIMIT: the batch system's part, as root: a job cgroup
# for USER with a limit only root can change, delegated as systemd delegates
# (the directory, cgroup.procs, cgroup.subtree_control and cgroup.threads;
# memory.max stays root's).
delegate() {
	mkdir "$2"
	echo "$3" >"$2/memory.max"
	chown "$1" "$2" "$2/cgroup.procs" "$2/cgroup.subtree_control" "$2/cgroup.threads"
}

# two_jobs CGROUP VICTIM_LIMIT ATTACKER_LIMIT: the batch system's part, as
# root: CGROUP/job-v for mgvictim and CGROUP/job-a for mgattacker, each with
# its limit, delegated; then each user's part: a task cgroup in their own job.
two_jobs() {
	mkdir "$1"
	echo +memory >"$1/cgroup.subtree_control"
	delegate mgvictim "$1/job-v" "$2"
	delegate mgattacker "$1/job-a" "$3"
	as mgvictim sh -c 'echo +memory >"$0/cgroup.subtree_control" && mkdir "$0/task"' "$1/job-v"
	as mgattacker sh -c 'echo +memory >"$0/cgroup.subtree_control" && mkdir "$0/task"' "$1/job-a"
}

# end_jobs CGROUP: kills what runs in two_jobs' task cgroups, stops memguardd
# and shows its log and kill log.
end_jobs() {
	local cg
	for cg in "$1"/job-*/task; do
		cg_kill "$cg"
	done
	stop_daemon
	sed 's/^/    /' "$work/daemon.log"
	[ ! -s "$work/kills.jsonl" ] || sed 's/^/    kill: /' "$work/kills.jsonl"
}

# runaway_then_end CGROUP VICTIM_PID: the attacker's task that grows without
# end, in two_jobs' CGROUP; once it is gone, and a second later for memory
# to come back, sets attacker_status and victim_alive (yes or no), then
# end_jobs.
runaway_then_end() {
	local pid
	run_in "$1/job-a/task" mgattacker "$work/bin/memhog" -d 20 inf &
	pid=$!
	attacker_status=0
	wait "$pid" || attacker_status=$?
	note "the attacker's runaway ended after ${SECONDS}s"
	sleep 1
	victim_alive=yes
	kill -0 "$2" 2>/dev/null || victim_alive=no
	end_jobs "$1"
}

# cache_reader: $work/bin/reader.py, the victim's reader in the cache attack
# tests: it reads the files it is given over and over at about 50 MiB/s,
# into page cache charged to its cgroup, and writes how many passes it made
# to $work/victim/passes.
cache_reader() {
	mkdir "$work/victim"
	chown mgvictim "$work/victim"
	cat >"$work/bin/reader.py" <<-'PY'
		import os, sys, time
		out, files = sys.argv[1], sys.argv[2:]
		passes = 0
		while True:
		    for path in files:
		        with open(path, "rb") as f:
		            while f.read(1 << 20):
		                time.sleep(1 / 50)
		    passes += 1
		    with open(out + ".tmp", "w") as f:
		        f.write(f"{passes}\n")
		    os.replace(out + ".tmp", out)
		    time.sleep(0.2)
	PY
}

# attacker_holder CGROUP MIB: in two_jobs' CGROUP, the attacker's task that
# holds MIB (sets holder); returns once it does.
attacker_holder() {
	run_in "$1/job-a/task" mgattacker "$work/bin/memhog" -H 600000 "$2" &
	holder=$!
	wait_for 120 sh -c '[ "$(cat "$0/memory.current")" -ge $(($1 << 20)) ]' "$1/job-a/task" "$2" ||
		fail "the attacker's task did not reach $2 MiB"
}

# reader_and_holder CGROUP ATTACKER_MIB: the victim's reader over
# "${files[@]}" (sets reader) and, once it has read them all,
# attacker_holder.
reader_and_holder() {
	run_in "$1/job-v/task" mgvictim python3 "$work/bin/reader.py" "$work/victim/passes" "${files[@]}" &
	reader=$!
	wait_for 120 test -s "$work/victim/passes" || fail "the victim's reader never finished a pass"
	attacker_holder "$1" "$2"
}

# size_attack CGROUP LEFT_MIB: drops the page cache, then sizes two_jobs'
# tasks in CGROUP from MemAvailable so that about LEFT_MIB would be left with
# both at their peak: victim_mib (300), what the victim's task grows to with
# a 200 MiB share, and attacker_mib, what the attacker's task holds within
# its share.
size_attack() {
	local avail
	sync
	echo 3 >/proc/sys/vm/drop_caches
	avail=$(awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo)
	victim_mib=300
	attacker_mib=$((avail - $2 - victim_mib))
	((attacker_mib >= 100)) || fail "MemAvailable is only $avail MiB: too little for this test"
	note "MemAvailable $avail MiB: the attacker holds $attacker_mib MiB, the victim grows to $victim_mib MiB"
	set_share "$1/job-v/task" $((200 << 20))
	set_share "$1/job-a/task" $(((attacker_mib + 200) << 20))
}

# fenced_victim CGROUP: the victim's task in two_jobs' CGROUP, victim_mib at
# 25 MiB/s, then held 8 s, then done (sets victim); returns once memguardd
# has fenced it.
fenced_victim() {
	run_in "$1/job-v/task" mgvictim "$work/bin/memhog" -d 40 -H 8000 "$victim_mib" &
	victim=$!
	wait_for 60 grep -q "throttling cgroup ${1#"$cgroot"/}/job-v/task" "$work/daemon.log" ||
		fail "the victim's task was not fenced"
}

# attack_at_fence: once fenced_victim returns, keeps the daemon's log
# as it stands ($work/daemon.at-attack), starts the attack the attacker's
# script waits for ($work/attacker/go), and waits for the victim's task
# (sets victim_status).
attack_at_fence() {
	cp "$work/daemon.log" "$work/daemon.at-attack"
	touch "$work/attacker/go"
	victim_status=0
	wait "$victim" || victim_status=$?
	note "the victim's task ended after ${SECONDS}s"
}

# held_through_attack CGROUP: memguardd did not kill the victim's task, it
# exited 0, and its fence stood, unraised, until the attack began (else
# there was no tracker to game).
held_through_attack() {
	local name=${1#"$cgroot"/}
	! grep -q "$name/job-v" "$work/kills.jsonl" 2>/dev/null || fail "memguardd killed the victim's task"
	assert_eq "$victim_status" 0 "the victim's task status"
	! grep -q "widening the fence of cgroup $name/job-v\|cgroup $name/job-v/task: memory.high back" \
		"$work/daemon.at-attack" || fail "the victim's fence was raised or lifted before the attack"
}

# set_share CGROUP BYTES: the task's share as a launcher running as root
# records it (trusted.*: its owner cannot change it).
set_share() {
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "trusted.memguard.share", sys.argv[2].encode())' "$@"
}

# lib_files MIB: sets files to host libraries of at least MIB MiB together,
# readable by anyone, for tests that fill the page cache (the guest's root is
# the host's over 9p with cache=loose); fails when there are not enough.
lib_files() {
	local size path
	files=() mib=0
	while read -r size path; do
		files+=("$path") mib=$((mib + (size >> 20)))
		((mib < $1)) || return 0
	done < <(find /usr/lib/x86_64-linux-gnu -maxdepth 1 -type f -perm -o+r -size +2M -printf '%s %p\n')
	fail "only $mib MiB of readable libraries for the page cache: want $1"
}

# remove_tree CGROUP: kills what is left below it, then removes it.
remove_tree() {
	local cg
	for cg in $(find "$1" -mindepth 1 -type d 2>/dev/null); do
		cg_kill "$cg" 2>/dev/null || true
	done
	sleep 0.3
	find "$1" -depth -type d -exec rmdir {} + 2>/dev/null || true
}

# as USER CMD...: CMD as USER, as a job's processes run.
as() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups -- "$@"
}

# run_in CGROUP USER CMD...: CMD as USER in CGROUP (placed there by root, as
# a batch system places a job's processes).
run_in() {
	local cg=$1 u=$2
	shift 2
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" \
		setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups -- "$@"
}

# assert_kill_path CGROUP: memguardd's kill of CGROUP (below the mount, as the kill log names it) went
# the way this kernel allows, by $work/daemon.log (memguardd -v): cgroup.kill where the kernel has it,
# else freeze, SIGKILL each process, thaw (lib/cgroup.c's debug line); and process_mrelease answered
# for every process killed where the kernel has it (reaped it, or found it gone), else reaped none.
# memguardd SIGKILLs through pidfds first, so the fallback may find the processes dying or gone.
assert_kill_path() {
	local cg=$1 line how counts killed reaped exited
	# The path may end in " (deleted)": the launcher removes a task's cgroup once its processes are
	# gone, which the fallback's wait for the freeze can outlast.
	line=$(grep -E "^memguardd: debug: kill $cgroot/$cg( \(deleted\))?: " "$work/daemon.log" | head -n 1)
	[ -n "$line" ] || { sed 's/^/    /' "$work/daemon.log"; fail "no kill path logged for $cg"; }
	note "kill path: ${line#*debug: }"
	how=${line#*"$cg"}
	how=${how#" (deleted)"}
	[ "$how" != ": gone already" ] || fail "$cg was removed before memguardd's kill reached it: no path to assert"
	if kernel_has cgroup.kill; then
		[ "$how" = ": cgroup.kill" ] || fail "$kernel_has_why, but memguardd's kill of $cg went otherwise: $line"
	else
		[[ $how == ": no cgroup.kill: froze it ("*"), SIGKILLed "*" one by one, thawed it" ]] ||
			fail "$kernel_has_why, but memguardd's kill of $cg did not freeze, kill each and thaw: $line"
	fi
	counts=$(sed -n "s|^memguardd: cgroup $cg: \(at least \)\{0,1\}\([0-9]*\) process[es]* killed (\([0-9]*\) reaped at once, \([0-9]*\) exited before).*|\2 \3 \4|p" \
		"$work/daemon.log" | head -n 1)
	[ -n "$counts" ] || { sed 's/^/    /' "$work/daemon.log"; fail "no kill summary for $cg"; }
	read -r killed reaped exited <<<"$counts"
	note "process_mrelease: $killed killed, $reaped reaped at once, $exited exited before"
	((killed > 0)) || fail "memguardd's kill of $cg killed nothing"
	if kernel_has process_mrelease; then
		((reaped + exited == killed)) ||
			fail "$kernel_has_why, but it answered for $((reaped + exited)) of the $killed processes killed"
	else
		((reaped == 0 && exited == 0)) ||
			fail "$kernel_has_why, yet $reaped processes reaped at once and $exited found gone"
	fi
}
