#!/usr/bin/env bash
# Tested as an attacker would (docs/security.md, "A fence"): whether a fence
# its task pushes against is raised depends, until its first raise, on what
# the others take, tracked as MemAvailable plus the fenced cgroup's anonymous
# and shared memory. The attacker runs a task that grows without end beside a
# pump that reads files into their own page cache and drops it again, over
# and over (with memory.current in the sum, that would move it), while the
# victim's task is still growing, well within its share. memguardd must
# still fence and kill the attacker's task, raise a fence of theirs by the
# others' rate at most once (after that MemAvailable's own fall judges it),
# and never fence or kill the victim's.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

attack_stage mgfence

# The pump's files: the host's libraries, about 96 MiB of them.
lib_files 96
note "the pump cycles through ${#files[@]} files, $mib MiB"
# Read them all into the cache, hold them a second, drop them, again; it
# writes the MiB read and the drops done so far.
cat >"$work/attacker/pump.py" <<-'PY'
	import os, sys, time
	out, files = sys.argv[1], sys.argv[2:]
	total = drops = 0
	while True:
	    for path in files:
	        with open(path, "rb") as f:
	            while chunk := f.read(1 << 20):
	                total += len(chunk)
	    time.sleep(1)
	    for path in files:
	        fd = os.open(path, os.O_RDONLY)
	        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
	        os.close(fd)
	    drops += 1
	    with open(out + ".tmp", "w") as f:
	        f.write(f"{total >> 20} {drops}\n")
	    os.replace(out + ".tmp", out)
PY
chown mgattacker "$work/attacker/pump.py"

two_jobs "$jobs" $((1024 << 20)) $((800 << 20))
# Each task's share as a launcher running as root records it, well below the
# job's limit, so that a fence stands below memory.max.
set_share "$jobs/job-v/task" $((450 << 20))
set_share "$jobs/job-a/task" $((200 << 20))

start_daemon "guard = mgfence/*/*"

# The victim: 300 MiB at 25 MiB/s, within their 450 MiB share, held to the end.
run_in "$jobs/job-v/task" mgvictim "$work/bin/memhog" -d 40 -H 600000 300 &
victim=$!
sleep 1
# The attacker: the pump, then a task that grows without end at about twice
# the victim's pace.
run_in "$jobs/job-a/task" mgattacker python3 "$work/attacker/pump.py" "$work/attacker/pumped" "${files[@]}" &
pump=$!
# The runaway starts once the pump has dropped its cache, so that the pump
# goes on reading and dropping while the runaway grows to its fence (under
# emulation one round of it can take longer than the runaway lives).
for _ in $(seq 600); do
	[ -s "$work/attacker/pumped" ] && break
	sleep 0.1
done
[ -s "$work/attacker/pumped" ] || fail "the pump did not drop its cache within 60 s"
runaway_then_end "$jobs" "$victim"
wait "$victim" "$pump" 2>/dev/null || true

read -r pumped drops <"$work/attacker/pumped" || fail "the pump never read and dropped its files"
((drops >= 2)) || fail "the pump dropped its cache $drops times: want two or more"
assert_eq "$victim_alive" yes "the victim's task alive"
assert_eq "$attacker_status" 137 "the attacker's runaway status (SIGKILL)"
assert_contains "$work/daemon.log" "throttling cgroup mgfence/job-a/task" "the attacker was fenced"
grep -q '"cgroup":"mgfence/job-a/task"' "$work/kills.jsonl" 2>/dev/null ||
	fail "memguardd did not kill the attacker's task"
# Each fence is raised by the others' rate at most once; after that, by
# MemAvailable's own fall, which page cache does not move.
by_others=$(awk '/throttling cgroup mgfence\/job-a\/task/ { n = 0 }
	/widening the fence of cgroup mgfence\/job-a\/task: .*and the others take/ { if (++n > most) most = n }
	END { print most + 0 }' "$work/daemon.log")
((by_others <= 1)) || fail "one fence of the attacker's was raised $by_others times by the others' rate: at most once"
note "the pump read $pumped MiB and dropped it $drops times; raises of the attacker's fence: $(grep -c "widening the fence of cgroup mgfence/job-a/task" "$work/daemon.log" || true)"
! grep -q "throttling cgroup mgfence/job-v" "$work/daemon.log" || fail "the victim was fenced"
! grep -q 'mgfence/job-v' "$work/kills.jsonl" || fail "memguardd killed the victim's task"
