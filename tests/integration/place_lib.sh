# The placement tests' setup: two ordinary users, alice and bob, a running memguardd,
# and helpers to act as them from a root-made cgroup standing in for a batch job's.
# Sourced after lib.sh and daemon_lib.sh.

for u in alice bob; do id "$u" >/dev/null 2>&1 || useradd -M -s /bin/sh "$u"; done
share=$work/share
mkdir -m 1777 "$share"
chmod 755 "$work"
socket=/run/memguard/place.sock

# The job's removal as the batch system does it, which fails while anything of a run is left inside.
# Defined before the trap below: a memguardd that fails to start runs cleanup at once.
remove_job() { find "$cgroot/$1" -depth -type d -exec rmdir {} + 2>/dev/null; [ ! -e "$cgroot/$1" ]; }

cleanup() {
	pkill -KILL -u alice 2>/dev/null || true
	pkill -KILL -u bob 2>/dev/null || true
	stop_daemon
	for cg in job1 job2 job3 job4 job5 job6 job7 job8; do remove_job "$cg" || true; done
	rm -rf "$work"
}
trap cleanup EXIT

# place_start: memguardd for the placement tests. place_daemon_conf: more [daemon] lines; place_kill_grace:
# the grace period from a launcher's end to the kill of what it left (2s). The jobs' task cgroups here
# are jobN/task (job() and as() below), not Slurm's: memguardd places beside those (place_beside).
place_start() {
	start_daemon "$(printf 'protect =\nplace_beside = job*/task\n%s\n[task]\nkill_grace = %s' \
		"${place_daemon_conf:-}" "${place_kill_grace:-2s}")"
	for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.05; done
	[ -S "$socket" ] || { cat "$work/daemon.log"; fail "no placement socket at $socket"; }
}
place_start

# job CGROUP [LIMIT]: a root-owned cgroup standing in for a batch job's, its
# limit set on itself and handed to its children as Slurm's job and step
# cgroups do; the job script runs in its "task" child, as in Slurm's task_0.
job() {
	mkdir -p "$cgroot/$1"
	[ -z "${2:-}" ] || echo "$2" >"$cgroot/$1/memory.max"
	echo "+memory +pids" >"$cgroot/$1/cgroup.subtree_control"
}
# as USER CGROUP CMD...: runs CMD as USER from CGROUP/task (CGROUP itself
# when it is the root's "." or ends in /), as a job script would.
as() {
	local user=$1 cg=$2
	shift 2
	case $cg in . | */) ;; *) mkdir -p "$cgroot/$cg/task" && cg=$cg/task ;; esac
	sh -c 'u=$1; shift; echo $$ >"$0/cgroup.procs" && exec setpriv --reuid="$u" --regid="$u" --init-groups -- "$@"' \
		"$cgroot/$cg" "$user" env -u MEMGUARD_PLACE_SOCKET "$@"
}
# The placed runs: beside their callers' cgroups, or below the root's memguard/.
run_dirs() {
	find "$cgroot" -mindepth 1 -type d \( -name 'memguard-run-*' -o -path "$cgroot/memguard/user-*" \) \
		-prune 2>/dev/null
}
placed_runs() { run_dirs | wc -l; }
no_placed_runs() { [ "$(placed_runs)" -eq 0 ]; }
placed_tasks() { [ "$(run_dirs | while read -r r; do find "$r" -mindepth 1 -maxdepth 1 -type d -name 'task-*' 2>/dev/null; done | wc -l)" -eq "$1" ]; }
no_procs_of() { ! pgrep -u "$1" >/dev/null; }
# client USER CGROUP PAYLOAD...: talks to the socket directly, as an attacker would.
client() {
	local user=$1 cg=$2
	shift 2
	# Not exec'd: the shell stays in the job's cgroup, as a job script does, so
	# the job is not over (and the run's tether not cut) once the client is placed.
	as "$user" "$cg" sh -c 'python3 "$@"; :' client "$work/client.py" "$socket" "$@"
}
cat >"$work/client.py" <<'PY'
import socket, sys, time
path, mode = sys.argv[1], sys.argv[2]
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s
if mode == "line":  # one request line, print the reply
    s = conn(); s.sendall(sys.argv[3].encode() + b"\n"); print(s.recv(4096).decode().strip())
elif mode == "junk":  # megabytes without a newline
    s = conn(); sent = 0
    try:
        while sent < 5 << 20:
            sent += s.send(b"x" * 65536)
    except OSError:
        pass
    s.settimeout(5)
    try:
        print(s.recv(4096).decode().strip() or "closed")
    except OSError as e:
        print("closed", e)
elif mode == "idle":  # one connection that sends nothing: seconds until the service closes it
    s = conn(); start = time.monotonic(); s.settimeout(30)
    try:
        s.recv(4096)
    except OSError:
        pass
    print(f"{time.monotonic() - start:.2f}")
elif mode == "hold":  # many idle connections that never read or write
    held = []
    for _ in range(int(sys.argv[3])):
        try:
            held.append(conn())
        except OSError:
            break
    print(len(held), flush=True)
    time.sleep(float(sys.argv[4]))
PY
chmod 644 "$work/client.py"

