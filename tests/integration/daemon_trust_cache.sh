#!/usr/bin/env bash
# Tested as an attacker would (docs/security.md, "A fence"): a fenced task is
# killed early once what the others take would bring MemAvailable to half of
# available_min within lead_time. memguardd tracks that as the node's free
# and reclaimable memory plus what the fenced cgroup holds beyond its page
# cache and reclaimable slab, not plus its memory.current: page cache is
# counted in both, and anyone who can read a file can drop it from the
# cache, whoever it is charged to.
# The victim's big but finite task, over its share, keeps reading files into
# its page cache and is fenced; the attacker, within their share, drops that
# cache again and again. The victim's task must be held, not killed, and
# finish.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

jobs=$cgroot/mgcache
trap 'stop_daemon; remove_tree "$jobs"; rm -rf "$work"' EXIT
attack_setup /bin/sleep

lib_files 120
note "the victim's cache: ${#files[@]} files, $mib MiB"
# The victim reads them over and over, at about 50 MiB/s (in a guest this
# small, MemAvailable counts only part of a growing page cache, so its own
# reading shows as a fall that nothing adds back); it writes how many passes
# it made.
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
# The attacker drops them from the cache at about 300 MiB/s, over and over,
# once the victim is fenced; it writes how many rounds it made.
cat >"$work/attacker/drop.py" <<-'PY'
	import os, sys, time
	out, files = sys.argv[1], sys.argv[2:]
	rounds = 0
	while True:
	    for path in files:
	        fd = os.open(path, os.O_RDONLY)
	        size = os.fstat(fd).st_size
	        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
	        os.close(fd)
	        time.sleep(size / (300 << 20))
	    rounds += 1
	    with open(out + ".tmp", "w") as f:
	        f.write(f"{rounds}\n")
	    os.replace(out + ".tmp", out)
PY
mkdir "$work/victim"
chown mgvictim "$work/victim"
chown mgattacker "$work/attacker/drop.py"

two_jobs "$jobs" $((1024 << 20)) $((1024 << 20))

# Sizes from this guest's MemAvailable: with both tasks at their peak about
# 220 MiB would be left, below available_min (260 MiB), so the victim,
# furthest over its share, is fenced; the fence lets it keep some of its
# cache, which MemAvailable counts only in part, so it ends nearer 180 MiB,
# still well above the hard floor (130 MiB): nothing but the attack could
# make the others' fall reach it within lead_time. The fence is lifted only
# above available_pressure, out of reach here: the attacker's drops give
# MemAvailable some back.
sync
echo 3 >/proc/sys/vm/drop_caches
avail=$(awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo)
victim_mib=300
attacker_mib=$((avail - 220 - victim_mib))
((attacker_mib >= 100)) || fail "MemAvailable is only $avail MiB: too little for this test"
note "MemAvailable $avail MiB: the attacker holds $attacker_mib MiB, the victim grows to $victim_mib MiB"
set_share "$jobs/job-v/task" $((200 << 20))
set_share "$jobs/job-a/task" $(((attacker_mib + 200) << 20))

start_daemon "guard = mgcache/*/*
available_min = 260M
available_pressure = 600M"

run_in "$jobs/job-v/task" mgvictim python3 "$work/bin/reader.py" "$work/victim/passes" "${files[@]}" &
reader=$!
wait_for 120 test -s "$work/victim/passes" || fail "the victim's reader never finished a pass"
run_in "$jobs/job-a/task" mgattacker "$work/bin/memhog" -H 600000 "$attacker_mib" &
holder=$!
attacker_cg=$jobs/job-a/task
wait_for 120 sh -c '[ "$(cat "$0/memory.current")" -ge $(($1 << 20)) ]' "$attacker_cg" "$attacker_mib" ||
	fail "the attacker's task did not reach $attacker_mib MiB"
# The victim's task: 300 MiB at 25 MiB/s, then held 8 s, then done.
run_in "$jobs/job-v/task" mgvictim "$work/bin/memhog" -d 40 -H 8000 "$victim_mib" &
victim=$!
wait_for 60 grep -q "throttling cgroup mgcache/job-v/task" "$work/daemon.log" ||
	fail "the victim's task was not fenced"
run_in "$jobs/job-a/task" mgattacker python3 "$work/attacker/drop.py" "$work/attacker/rounds" "${files[@]}" &
dropper=$!

victim_status=0
wait "$victim" || victim_status=$?
note "the victim's task ended after ${SECONDS}s"
cp "$work/daemon.log" "$work/daemon.until-end"
rounds=$(cat "$work/attacker/rounds" 2>/dev/null || echo 0)
end_jobs "$jobs"
wait "$reader" "$holder" "$dropper" 2>/dev/null || true

! grep -q 'mgcache/job-v' "$work/kills.jsonl" 2>/dev/null || fail "memguardd killed the victim's task"
assert_eq "$victim_status" 0 "the victim's task status"
# The attack met a fence that stood, unraised, to the end: else there was
# nothing to game.
! grep -q "widening the fence of cgroup mgcache/job-v\|cgroup mgcache/job-v/task: memory.high back" \
	"$work/daemon.until-end" || fail "the victim's fence was raised or lifted before its task ended"
((rounds >= 3)) || fail "the attacker dropped the victim's cache $rounds times: want three or more"
note "the attacker dropped the victim's cache $rounds times; the victim read it $(cat "$work/victim/passes") times"
