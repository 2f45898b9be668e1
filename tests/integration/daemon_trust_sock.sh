#!/usr/bin/env bash
# Tested as an attacker would (docs/security.md, "A fence"): a fenced task is
# killed early once what the others take would bring MemAvailable to half of
# available_min within lead_time. memguardd tracks that as the node's free
# and reclaimable memory plus what the fenced cgroup holds beyond its own
# reclaimable part. A socket's receive buffers are charged to the cgroup of
# the task that accepted it: anyone who can connect to a task's listening
# socket can fill them with data it has not read yet, memory that leaves the
# node without a byte charged to the sender. The victim's big but finite
# task, over its share, runs a server that accepts connections (as a Dask
# worker or any service does) and is fenced; the attacker, within their
# share, fills the buffers of its connections at a steady pace. The
# victim's task must be held, not killed, and finish.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"

attack_stage mgsock
port=7419
conns=512
ip link set lo up

# The victim's server accepts connections on PORT and never reads from
# them; it writes how many it holds.
mkdir "$work/victim"
chown mgvictim "$work/victim"
cat >"$work/bin/server.py" <<-'PY'
	import os, socket, sys
	out, port = sys.argv[1], int(sys.argv[2])
	listener = socket.socket()
	listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	listener.bind(("127.0.0.1", port))
	listener.listen(1024)
	held = []
	while True:
	    held.append(listener.accept()[0])
	    with open(out + ".tmp", "w") as f:
	        f.write(f"{len(held)}\n")
	    os.replace(out + ".tmp", out)
PY
# The attacker opens CONNS connections to it at once and, once the file GO
# appears, sends up to 128 KiB on each, as much as the receiver's window
# takes, at RATE MiB/s, then holds them; it writes how many MiB the kernel
# took (-1 when connected).
cat >"$work/attacker/fill.py" <<-'PY'
	import os, socket, sys, time
	out, go, port, conns, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])

	def report(n):
	    with open(out + ".tmp", "w") as f:
	        f.write(f"{n}\n")
	    os.replace(out + ".tmp", out)

	socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(conns)]
	for s in socks:
	    s.setblocking(False)
	report(-1)
	while not os.path.exists(go):
	    time.sleep(0.02)
	chunk, sent, start = b"x" * (128 << 10), 0, time.monotonic()
	for s in socks:
	    try:
	        sent += s.send(chunk)
	    except BlockingIOError:
	        pass
	    ahead = sent / (rate << 20) - (time.monotonic() - start)
	    if ahead > 0:
	        time.sleep(ahead)
	report(sent >> 20)
	while True:
	    time.sleep(3600)
PY
chown mgattacker "$work/attacker/fill.py"

two_jobs "$jobs" $((1024 << 20)) $((1024 << 20))
run_in "$jobs/job-v/task" mgvictim python3 "$work/bin/server.py" "$work/victim/held" "$port" &
server=$!
wait_for 60 sh -c 'ss -Hltn "sport = :$0" | grep -q .' "$port" || fail "the victim's server is not listening"
run_in "$jobs/job-a/task" mgattacker python3 "$work/attacker/fill.py" "$work/attacker/sent" "$work/attacker/go" \
	"$port" "$conns" 120 &
filler=$!
wait_for 60 sh -c '[ "$(cat "$0/victim/held" 2>/dev/null)" = "$1" ] && [ -s "$0/attacker/sent" ]' \
	"$work" "$conns" || fail "the attacker's $conns connections were not all accepted"

# Sizes from this guest's MemAvailable, the server and the connections
# counted: with both tasks at their peak about 285 MiB would be left, so the
# victim, furthest over its share and growing at 25 MiB/s, is fenced as
# MemAvailable falls toward available_min (260 MiB) within lead_time; above
# the hard floor (130 MiB) by more than the attack takes, so only the
# others' rate could kill it. lead_time is long here, 2 s: read
# as the others taking, the attacker's 120 MiB/s would bring MemAvailable
# to the hard floor within it.
size_attack "$jobs" 285

start_daemon "guard = mgsock/*/*
available_min = 260M
available_pressure = 600M
lead_time = 2s"

attacker_holder "$jobs" "$attacker_mib"
fenced_victim "$jobs"
attack_at_fence
sent=$(cat "$work/attacker/sent" 2>/dev/null || echo -1)
sock=$(awk '$1 == "sock" { print int($2 / 1048576) }' "$jobs/job-v/task/memory.stat")
note "the attacker sent $sent MiB over $conns connections; sock in the victim's cgroup: $sock MiB"
end_jobs "$jobs"
wait "$server" "$holder" "$filler" 2>/dev/null || true

held_through_attack "$jobs"
((sock >= 24)) || fail "the victim's cgroup has $sock MiB in socket buffers: want 24 or more"
