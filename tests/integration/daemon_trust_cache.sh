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

attack_stage mgcache

lib_files 120
note "the victim's cache: ${#files[@]} files, $mib MiB"
# The victim reads them over and over (in a guest this small, MemAvailable
# counts only part of a growing page cache, so its own reading shows as a
# fall that nothing adds back).
cache_reader
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
size_attack "$jobs" 220

start_daemon "guard = mgcache/*/*
available_min = 260M
available_pressure = 600M"

reader_and_holder "$jobs" "$attacker_mib"
fenced_victim "$jobs"
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
