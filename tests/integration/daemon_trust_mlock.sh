#!/usr/bin/env bash
# Tested as an attacker would (docs/security.md, "A fence"): a fenced task is
# killed early once what the others take would bring MemAvailable to half of
# available_min within lead_time. memguardd tracks that as the node's free
# and reclaimable memory plus what the fenced cgroup holds beyond its own
# reclaimable part. Page cache stays charged to the cgroup that read it in,
# and anyone who can read a file can lock it in memory (mlock, within
# RLIMIT_MEMLOCK per process, in as many processes as they like): that takes
# it off the file LRUs, out of the node's reclaimable memory, without a byte
# charged to the one who locks it. The victim's big but finite task, over its
# share, keeps its page cache warm and is fenced; the attacker, within their
# share, locks that cache at a steady pace. The victim's task must be held,
# not killed, and finish.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

attack_stage mgmlock

lib_files 120
note "the victim's cache: ${#files[@]} files, $mib MiB"
# The victim reads them over and over, so that its fence reclaims other
# memory than this cache.
cache_reader
# The attacker locks TOTAL MiB of those files in memory, a MiB at a time at
# RATE MiB/s, each process up to its RLIMIT_MEMLOCK and then holding it while
# the next one goes on. The processes start and map their part at once, and
# lock only once the file GO appears, so that the attack takes no memory of
# its own; it writes how many MiB are locked (0 when ready), then waits.
cat >"$work/attacker/lock.py" <<-'PY'
	import ctypes, os, resource, signal, sys, time
	out, go, total, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]) << 20, int(sys.argv[4])
	files = sys.argv[5:]
	libc = ctypes.CDLL(None, use_errno=True)
	libc.mmap.restype = ctypes.c_void_p
	libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
	libc.mlock.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
	limit = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]
	per_process = max(1, (total if limit == resource.RLIM_INFINITY else limit) >> 20)
	chunks = []  # (path, offset) of each MiB
	for path in files:
	    chunks += [(path, off) for off in range(0, os.path.getsize(path) - (1 << 20), 1 << 20)]
	chunks = chunks[: total >> 20]
	groups = [chunks[i : i + per_process] for i in range(0, len(chunks), per_process)]

	def report(mib):
	    with open(out + ".tmp", "w") as f:
	        f.write(f"{mib}\n")
	    os.replace(out + ".tmp", out)

	children = []  # (pipe to it, pipe from it)
	for mine in groups:
	    down, up = os.pipe(), os.pipe()
	    if os.fork() == 0:
	        maps = []
	        for path, off in mine:
	            fd = os.open(path, os.O_RDONLY)
	            addr = libc.mmap(None, 1 << 20, 1, 1, fd, off)  # PROT_READ, MAP_SHARED
	            os.close(fd)
	            if addr in (None, ctypes.c_void_p(-1).value):
	                os._exit(1)
	            maps.append(addr)
	        os.write(up[1], b"r")
	        os.read(down[0], 1)
	        for addr in maps:
	            if libc.mlock(addr, 1 << 20) != 0:
	                os._exit(1)
	            time.sleep(1 / rate)
	        os.write(up[1], b"x")
	        os.read(down[0], 1)  # holds its locks until killed
	        os._exit(0)
	    children.append((down[1], up[0]))
	if any(os.read(r, 1) != b"r" for _, r in children):
	    sys.exit("a locking process could not map its part")
	report(0)
	while not os.path.exists(go):
	    time.sleep(0.02)
	locked = 0
	for (w, r), mine in zip(children, groups):
	    os.write(w, b"g")
	    if os.read(r, 1) != b"x":
	        sys.exit("a locking process failed")
	    locked += len(mine)
	    report(locked)
	signal.pause()
PY
chown mgattacker "$work/attacker/lock.py"

two_jobs "$jobs" $((1024 << 20)) $((1024 << 20))
# The attacker's lockers first, so that the sizes below count their memory.
# An ordinary user's RLIMIT_MEMLOCK (systemd's default): the attack takes
# several processes.
(
	ulimit -l 8192
	run_in "$jobs/job-a/task" mgattacker python3 "$work/attacker/lock.py" "$work/attacker/locked" \
		"$work/attacker/go" 48 80 "${files[@]}"
) &
locker=$!
wait_for 60 test -s "$work/attacker/locked" || fail "the attacker's lockers did not get ready"

# Sizes from this guest's MemAvailable: with both tasks at their peak about
# 285 MiB would be left, and about 230 once the victim's cache is in
# (MemAvailable counts part of it), below available_min (260 MiB), so the
# victim, furthest over its share, is fenced; above the hard floor (130 MiB) by more than the attack
# takes from MemAvailable when it locks 48 MiB of that cache, so only the
# others' rate could kill it. lead_time is long here, 2 s: read as the
# others taking, the attacker's 80 MiB/s would bring MemAvailable to the
# hard floor within it.
size_attack "$jobs" 285

start_daemon "guard = mgmlock/*/*
available_min = 260M
available_pressure = 600M
lead_time = 2s"

reader_and_holder "$jobs" "$attacker_mib"
fenced_victim "$jobs"
attack_at_fence
locked=$(cat "$work/attacker/locked" 2>/dev/null || echo 0)
unevictable=$(awk '$1 == "unevictable" { print int($2 / 1048576) }' "$jobs/job-v/task/memory.stat")
note "the attacker locked $locked MiB of the victim's cache; unevictable in the victim's cgroup: $unevictable MiB"
# Short of the attack: where each of the attacker's processes waits, before
# end_jobs kills them.
if ((locked < 40)); then
	for pid in $(cat "$jobs/job-a/task/cgroup.procs"); do
		note "attacker process $pid: $({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | cut -c1-60)," \
			"$(awk '/^State:|^VmLck:/ { printf "%s %s ", $1, $2 }' "/proc/$pid/status" 2>/dev/null)" \
			"wchan $(cat "/proc/$pid/wchan" 2>/dev/null)"
	done
	[ -e "$work/attacker/go" ] || note "the go file is missing"
fi
end_jobs "$jobs"
wait "$reader" "$holder" "$locker" 2>/dev/null || true

held_through_attack "$jobs"
((locked >= 40)) || fail "the attacker locked $locked MiB of the victim's cache: want 40 or more"
((unevictable >= 40)) || fail "the victim's cgroup has $unevictable MiB unevictable: the locked cache is not its"
