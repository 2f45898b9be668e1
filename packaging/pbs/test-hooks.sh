#!/bin/bash
# Runs the memguard prologue and epilogue against a FAKE cgroup v2 tree in a
# temporary directory: no cgroup of this host is created, changed or moved.
#
# The hooks take no setting from their environment; the harness runs them as
# "prologue --fake-root DIR ..." (a first argument pbs_mom never passes),
# which makes DIR/cgroup their mount and puts DIR/bin first on their PATH.
# Small stand-ins for mkdir, rmdir and logger there give the fake tree what
# cgroupfs does by itself: a new cgroup directory comes with its interface
# files, a cgroup with children or live processes cannot be removed, and
# removing one takes its interface files along. They find the tree from
# where they are, since the hooks pass them no environment. Two of them also
# play an attacker: mkdir makes a new cgroup a symbolic link right after
# creating it (swap-on-mkdir), rmdir moves a process into a cgroup just
# before removing it (place-on-rmdir). Runs as root or as any user (the
# job's user is then the caller, and the ownership checks prove less).
#
#   packaging/pbs/test-hooks.sh            exit 0 when every check passes
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/memguard-hooks.XXXXXX")
bg_pid=
cleanup() {
	if [[ -n $bg_pid ]]; then kill -KILL "$bg_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

prologue=("$here/prologue" --fake-root "$tmp")
epilogue=("$here/epilogue" --fake-root "$tmp")
mount=$tmp/cgroup
bin=$tmp/bin
syslog=$tmp/syslog
rmdir_log=$tmp/rmdir.log
mkdir -p "$mount" "$bin"
: >"$syslog"

if [[ $(id -u) == 0 ]]; then
	juser=nobody
	jgroup=$(id -gn nobody)
else
	juser=$(id -un)
	jgroup=$(id -gn)
fi

# --- the fake cgroupfs --------------------------------------------------------
# The root of the fake hierarchy: memory and pids enabled for its children.
echo "cpuset cpu io memory pids" >"$mount/cgroup.controllers"
echo "memory pids" >"$mount/cgroup.subtree_control"
: >"$mount/cgroup.procs"

cat >"$bin/mkdir" <<'STUB'
#!/bin/bash
# mkdir that populates new directories below the fake cgroup root like cgroupfs.
root=$(cd "$(dirname "$0")/.." && pwd)
/bin/mkdir "$@" || exit
for a in "$@"; do
	[[ $a == -* ]] && continue
	d=$(realpath -m -- "$a")
	[[ $d == "$root/cgroup"/* && ! -e $d/cgroup.procs ]] || continue
	parent=$(dirname "$d")
	: >"$d/cgroup.procs"; : >"$d/cgroup.threads"; : >"$d/cgroup.subtree_control"; : >"$d/cgroup.kill"
	: >"$d/cgroup.freeze" # "0" on cgroupfs; empty here, so that a write shows
	printf 'populated 0\nfrozen 0\n' >"$d/cgroup.events"
	tr -d '+' <"$parent/cgroup.subtree_control" >"$d/cgroup.controllers"
	echo max >"$d/memory.max"; echo 0 >"$d/memory.current"; echo 0 >"$d/memory.peak"
	printf 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n' >"$d/memory.events"
	echo max >"$d/pids.max"
	# The attacker: "CGROUP TARGET" in swap-on-mkdir makes CGROUP (relative to
	# the root), once created, a symbolic link to TARGET.
	if [[ -f $root/swap-on-mkdir ]]; then
		read -r rel target <"$root/swap-on-mkdir"
		if [[ $d == "$root/cgroup/$rel" ]]; then
			rm -f "$root/swap-on-mkdir"
			rm -rf -- "$d" && ln -s -- "$target" "$d"
		fi
	fi
done
STUB
cat >"$bin/rmdir" <<'STUB'
#!/bin/bash
# rmdir with cgroupfs rules below the fake root: EBUSY with child cgroups or
# live processes; the interface files go with the directory.
root=$(cd "$(dirname "$0")/.." && pwd)
for a in "$@"; do
	[[ $a == -* ]] && continue
	d=$(realpath -m -- "$a")
	if [[ $d == "$root/cgroup"/* && -f $d/cgroup.procs ]]; then
		# The attacker: "CGROUP PID" in place-on-rmdir moves PID into CGROUP
		# just before it would go, as memguardd placing a launcher would.
		if [[ -f $root/place-on-rmdir ]]; then
			read -r rel pid <"$root/place-on-rmdir"
			if [[ $d == "$root/cgroup/$rel" ]]; then
				rm -f "$root/place-on-rmdir"
				echo "$pid" >>"$d/cgroup.procs"
			fi
		fi
		if [[ -n $(find "$d" -mindepth 1 -maxdepth 1 -type d) ]]; then
			echo "rmdir: failed to remove '$a': Device or resource busy" >&2; exit 1
		fi
		while read -r pid; do
			if [[ -n $pid && -e /proc/$pid ]] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
				echo "rmdir: failed to remove '$a': Device or resource busy" >&2; exit 1
			fi
		done <"$d/cgroup.procs"
		echo "${d#"$root/cgroup"/} kill=$(cat "$d/cgroup.kill" 2>/dev/null) freeze=$(cat "$d/cgroup.freeze" 2>/dev/null)" >>"$root/rmdir.log"
		echo "${d#"$root/cgroup"/} owner=$(stat -c %u "$d")" >>"$root/rmdir-owner.log"
		find "$d" -mindepth 1 -maxdepth 1 -type f -delete
	fi
	/bin/rmdir -- "$a" || exit
done
STUB
cat >"$bin/logger" <<'STUB'
#!/bin/bash
# logger that appends "tag priority message" to the fake syslog.
root=$(cd "$(dirname "$0")/.." && pwd)
tag=- prio=user.notice
while (($#)); do
	case $1 in
	-t) tag=$2; shift 2 ;;
	-p) prio=$2; shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
echo "$tag $prio $*" >>"$root/syslog"
STUB
chmod +x "$bin/mkdir" "$bin/rmdir" "$bin/logger"
export PATH="$bin:$PATH"

# --- checks -------------------------------------------------------------------
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)) failed=$((failed + 1))
	echo "not ok $n - $1"
	[[ -n ${2:-} ]] && printf '#   %s\n' "$2"
	return 0
}
check() { # description command...
	local what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what" "failed: $*"; fi
}
owner() { stat -c %U:%G "$1"; }
owned_by_user() { [[ $(owner "$1") == "$juser:$jgroup" ]]; }
owned_by_root() { [[ $(stat -c %u "$1") == "$(id -u)" ]]; }
content() { [[ -f $1 && $(<"$1") == "$2" ]]; }
contains() { grep -q -- "$2" "$1"; }
# True when, in the fake rmdir log, no cgroup of the job went before one of its descendants.
children_first() { # jobid
	local -a removed
	local i j
	mapfile -t removed < <(cut -d' ' -f1 "$rmdir_log" | grep -F "memguard.jobs/$1")
	((${#removed[@]} == 5)) || return 1
	for ((i = 0; i < ${#removed[@]}; i++)); do
		for ((j = i + 1; j < ${#removed[@]}; j++)); do
			[[ ${removed[j]} == "${removed[i]}"/* ]] && return 1
		done
	done
	return 0
}
run() { # command... ; status in $rc, output in $tmp/out and $tmp/err
	rc=0
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

jobs_dir=$mount/memguard.jobs
job=123.server
cg=$jobs_dir/$job

# Torque: jobid user group jobname resources queue account script hosts
torque_args=("$job" "$juser" "$jgroup" sim "neednodes=1:ppn=4,nodes=1:ppn=4,mem=2gb,walltime=01:00:00" batch acct /var/spool/torque/mom_priv/jobs/123.server.SC node01)

run "${prologue[@]}" "${torque_args[@]}"
check "prologue exits 0" test "$rc" = 0
check "prologue prints nothing on success" test ! -s "$tmp/out" -a ! -s "$tmp/err"
check "memguard.jobs created" test -d "$jobs_dir"
check "memguard.jobs enables memory and pids for its children" content "$jobs_dir/cgroup.subtree_control" "+memory +pids"
check "job cgroup created" test -d "$cg"
check "job cgroup enables memory and pids for its children" content "$cg/cgroup.subtree_control" "+memory +pids"
check "memory.max from mem=2gb" content "$cg/memory.max" 2147483648
check "memory.max stays root's" owned_by_root "$cg/memory.max"
for f in "" /cgroup.procs /cgroup.threads /cgroup.subtree_control; do
	check "job cgroup$f delegated to $juser:$jgroup" owned_by_user "$cg$f"
done
check "job leaf created" test -f "$cg/job/cgroup.procs"
for f in "" /cgroup.procs /cgroup.threads; do
	check "job leaf$f delegated to $juser:$jgroup" owned_by_user "$cg/job$f"
done
check "memguard.jobs stays root's" owned_by_root "$jobs_dir"
check "prologue logs to syslog" contains "$syslog" "memguard-prologue user.info job $job: cgroup $cg delegated to $juser:$jgroup, memory.max 2147483648"

run "${prologue[@]}" "${torque_args[@]}"
check "prologue twice: exits 0" test "$rc" = 0
check "prologue twice: silent" test ! -s "$tmp/err"
check "prologue twice: subtree_control unchanged" content "$cg/cgroup.subtree_control" "+memory +pids"
check "prologue twice: still delegated" owned_by_user "$cg/cgroup.procs"

# PBS Pro and OpenPBS give the prologue three arguments: no mem request.
run "${prologue[@]}" 77.pbspro "$juser" "$jgroup"
check "PBS Pro arguments: exits 0" test "$rc" = 0
check "PBS Pro arguments: memory.max stays max" content "$jobs_dir/77.pbspro/memory.max" max
check "PBS Pro arguments: delegated" owned_by_user "$jobs_dir/77.pbspro/cgroup.procs"

# Array job ids keep their brackets; sizes in other units.
run "${prologue[@]}" "88[3].server" "$juser" "$jgroup" arr "nodes=1,mem=1536MB" batch ""
check "array job id: exits 0" test "$rc" = 0
check "array job id: memory.max from mem=1536MB" content "$jobs_dir/88[3].server/memory.max" 1610612736

run "${prologue[@]}" 89.server "$juser" "$jgroup" bad "nodes=1,pmem=1gb,mem=lots" batch ""
check "bad mem: exits 0" test "$rc" = 0
check "bad mem: one-line warning" test "$(wc -l <"$tmp/err")" = 1
check "bad mem: says why" contains "$tmp/err" "ignoring mem=lots: not a size"
check "bad mem: pmem is not mem, memory.max stays max" content "$jobs_dir/89.server/memory.max" max

# Refusals: nothing is created, the message is one line.
for bad in "../escape" "a/b" ".hidden" "x..y" ""; do
	run "${prologue[@]}" "$bad" "$juser" "$jgroup"
	check "job id \"$bad\" refused in one line" test "$(wc -l <"$tmp/err")" = 1
	check "job id \"$bad\" refused: says why" contains "$tmp/err" "not a plain name"
done
check "nothing created outside memguard.jobs" test "$(find "$mount" -mindepth 1 -maxdepth 1 -type d | wc -l)" = 1
check "no escape directory" test ! -e "$mount/escape" -a ! -e "$tmp/escape"

run "${prologue[@]}" 90.server no-such-user-memguard "$jgroup"
check "unknown user refused" contains "$tmp/err" "unknown user \"no-such-user-memguard\""
check "unknown user: no cgroup" test ! -e "$jobs_dir/90.server"

run "${prologue[@]}" 91.server
check "usage: too few arguments exits 2" test "$rc" = 2

# No cgroup v2 at the mount (hybrid or v1 layout): a tree without cgroup.controllers.
mkdir -p "$tmp/v1/cgroup"
ln -s ../bin "$tmp/v1/bin"
run "$here/prologue" --fake-root "$tmp/v1" 92.server "$juser" "$jgroup"
check "no cgroup v2: one-line error" test "$(wc -l <"$tmp/err")" = 1
check "no cgroup v2: says so" contains "$tmp/err" "no cgroup v2 hierarchy at $tmp/v1/cgroup"

# A symbolic link where the job's cgroup should be is refused.
ln -s "$tmp" "$jobs_dir/93.server"
run "${prologue[@]}" 93.server "$juser" "$jgroup"
check "symlink refused by prologue" contains "$tmp/err" "is a symbolic link"
run "${epilogue[@]}" 93.server
check "symlink refused by epilogue" contains "$tmp/err" "is a symbolic link"
check "symlink target untouched" test -d "$tmp/bin" -a -f "$tmp/bin/mkdir"
rm "$jobs_dir/93.server"

# A hostile environment (pbs_mom could pass on one the job chose): another
# cgroup mount in MEMGUARD_CGROUP_MOUNT and the hooks' own setting names,
# commands of the job's on PATH, a BASH_ENV, an exported shell function. The
# hooks must use none of it. An attacker's command records that it ran.
hostile=$tmp/hostile
evil=$hostile/ran
mkdir -p "$hostile/cgroup" "$hostile/bin"
cp "$mount/cgroup.controllers" "$mount/cgroup.subtree_control" "$mount/cgroup.procs" "$hostile/cgroup/"
for cmd in chown mkdir rmdir logger id getent stat find cat kill sleep; do
	printf '#!/bin/sh\necho "PATH %s $*" >>"%s"\n' "$cmd" "$evil" >"$hostile/bin/$cmd"
	chmod +x "$hostile/bin/$cmd"
done
printf 'echo BASH_ENV >>"%s"\n' "$evil" >"$hostile/bash_env"
# First the settings: another mount, and the hooks' own setting names.
mount_env=(
	MEMGUARD_CGROUP_MOUNT="$hostile/cgroup" CGROUP_MOUNT="$hostile/cgroup" JOBS_PARENT=.. JOB_LEAF=..
	FAIL_STATUS=0 KILL_WAIT_TENTHS=0
)
run env "${mount_env[@]}" "${prologue[@]}" 98.server "$juser" "$jgroup" sim "mem=1gb" batch acct
check "hostile settings: prologue exits 0" test "$rc" = 0
check "hostile settings: prologue prints nothing" test ! -s "$tmp/out" -a ! -s "$tmp/err"
check "hostile settings: the job cgroup is made in the hooks' own tree" content "$jobs_dir/98.server/memory.max" 1073741824
check "hostile settings: and delegated" owned_by_user "$jobs_dir/98.server/job/cgroup.procs"
check "hostile settings: nothing made where MEMGUARD_CGROUP_MOUNT points" \
	test -z "$(find "$hostile/cgroup" -mindepth 1 -type d)"
run env "${mount_env[@]}" "${epilogue[@]}" 98.server "$juser" "$jgroup"
check "hostile settings: epilogue exits 0" test "$rc" = 0
check "hostile settings: epilogue removes the job's cgroup from the hooks' own tree" test ! -e "$jobs_dir/98.server"
# Then commands: the job's on PATH, a BASH_ENV, exported shell functions.
command_env=(
	PATH="$hostile/bin:$PATH" BASH_ENV="$hostile/bash_env"
	"BASH_FUNC_chown%%=() { echo \"function chown \$*\" >>\"$evil\"; }"
	"BASH_FUNC_rmdir%%=() { echo \"function rmdir \$*\" >>\"$evil\"; }"
)
run env "${command_env[@]}" "${prologue[@]}" 98.server "$juser" "$jgroup" sim "mem=1gb" batch acct
check "hostile commands: prologue exits 0" test "$rc" = 0
check "hostile commands: the job cgroup is made and delegated" owned_by_user "$jobs_dir/98.server/job/cgroup.procs"
run env "${command_env[@]}" "${epilogue[@]}" 98.server "$juser" "$jgroup"
check "hostile commands: epilogue exits 0" test "$rc" = 0
check "hostile commands: epilogue removes the job's cgroup" test ! -e "$jobs_dir/98.server"
check "hostile commands: no command, function or BASH_ENV of the environment ran" test ! -e "$evil"
[[ -e $evil ]] && sed 's/^/#   ran: /' "$evil"

# A symbolic link that takes the place of the job's cgroup between its mkdir
# and the prologue's chown (here the fake mkdir makes it so; on cgroupfs no
# one can create a link): the link is refused, and nothing reaches what it
# points to, a directory dressed as a cgroup.
target=$tmp/target
/bin/mkdir "$target"
for f in cgroup.procs cgroup.threads cgroup.subtree_control cgroup.controllers; do : >"$target/$f"; done
echo max >"$target/memory.max"
target_state() { stat -c '%n %u:%g %a %z' "$target" "$target"/*; cat "$target/memory.max"; }
target_before=$(target_state)
echo "memguard.jobs/99.server $target" >"$tmp/swap-on-mkdir"
run "${prologue[@]}" 99.server "$juser" "$jgroup" sim "mem=1gb" batch acct
check "symlinked job directory: the link was made (the attacker's mkdir ran)" test -L "$jobs_dir/99.server"
check "symlinked job directory: refused in one line" test "$(wc -l <"$tmp/err")" = 1
check "symlinked job directory: says why" contains "$tmp/err" "memguard.jobs/99.server is a symbolic link"
check "symlinked job directory: its target is neither given away, written nor touched" \
	test "$(target_state)" = "$target_before"
run "${epilogue[@]}" 99.server
check "symlinked job directory: refused by the epilogue" contains "$tmp/err" "is a symbolic link"
check "symlinked job directory: its target still untouched" test "$(target_state)" = "$target_before"
rm "$jobs_dir/99.server"

# --- epilogue -----------------------------------------------------------------
# What memguard would leave: task cgroups below a run cgroup, counters filled in.
mkdir "$cg/run-4242" "$cg/run-4242/task-0" "$cg/run-4242/task-1"
printf 'low 0\nhigh 0\nmax 5\noom 2\noom_kill 2\noom_group_kill 1\n' >"$cg/memory.events"
echo 1717986918 >"$cg/memory.peak"
sibling_before=$(find "$jobs_dir/77.pbspro" -type f -exec md5sum {} + | sort | md5sum)

epilogue_args=("$job" "$juser" "$jgroup" sim 31337 "nodes=1:ppn=4,mem=2gb" "cput=00:10:00,mem=1677721kb" batch acct 0)
run "${epilogue[@]}" "${epilogue_args[@]}"
check "epilogue exits 0" test "$rc" = 0
check "epilogue: no errors" test ! -s "$tmp/err"
check "epilogue reports peak, limit and OOM kills in the job's output" \
	content "$tmp/out" "memguard: job $job: memory.peak 1.5 GiB, memory.max 2.0 GiB, oom_kill 2, oom 2, max 5"
check "epilogue logs OOM kills as a warning" contains "$syslog" "memguard-epilogue user.warning job $job: memory.peak 1.5 GiB"
check "epilogue wrote 1 to the job's cgroup.kill, and did not freeze" contains "$rmdir_log" "^memguard.jobs/$job kill=1 freeze=$"
check "job cgroup removed" test ! -e "$cg"
check "children removed before their parents" children_first "$job"
check "memguard.jobs kept" test -d "$jobs_dir"
check "other jobs untouched" test "$(find "$jobs_dir/77.pbspro" -type f -exec md5sum {} + | sort | md5sum)" = "$sibling_before"

run "${epilogue[@]}" "${epilogue_args[@]}"
check "epilogue without a cgroup exits 0" test "$rc" = 0
check "epilogue without a cgroup is silent" test ! -s "$tmp/out" -a ! -s "$tmp/err"

run "${epilogue[@]}" "../memguard.jobs"
check "epilogue refuses a job id that leaves memguard.jobs" contains "$tmp/err" "not a plain name"
check "epilogue refusal exits non-zero" test "$rc" != 0
check "memguard.jobs still there" test -d "$jobs_dir/77.pbspro"

# Whether process $1 is gone (or a zombie nobody reaps yet) within 5 s.
gone_within_5s() {
	local _
	for _ in $(seq 50); do
		if [[ ! -e /proc/$1 ]] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# Leftover processes: without cgroup.kill (kernels before 5.14) the epilogue
# freezes the cgroup, kills what cgroup.procs lists, thaws it, and removes the
# cgroup once they are gone.
# The process is started in a subshell so that init, not this script, reaps it.
run "${prologue[@]}" 94.server "$juser" "$jgroup"
(
	sleep 300 &
	echo $! >"$tmp/bg.pid"
)
bg_pid=$(<"$tmp/bg.pid")
echo "$bg_pid" >"$jobs_dir/94.server/job/cgroup.procs"
check "leftover process runs before the epilogue" test -d "/proc/$bg_pid"
rm "$jobs_dir/94.server/cgroup.kill"
run "${epilogue[@]}" 94.server "$juser" "$jgroup"
check "leftover process: epilogue exits 0" test "$rc" = 0
check "leftover process killed" gone_within_5s "$bg_pid"
check "leftover process: cgroup removed" test ! -e "$jobs_dir/94.server"
check "leftover process: cgroup frozen for the kill, then thawed" \
	test "$(grep -c '^memguard.jobs/94.server kill= freeze=0$' "$rmdir_log")" = 1
check "no OOM kill: logged at info" contains "$syslog" "memguard-epilogue user.info job 94.server: memory.peak 0 B, memory.max max, oom_kill 0"
bg_pid=

# A process that outlives cgroup.kill (in the fake tree, writing to cgroup.kill
# kills nothing): after the wait the epilogue says so and keeps the cgroup.
run "${prologue[@]}" 95.server "$juser" "$jgroup"
(
	sleep 300 &
	echo $! >"$tmp/bg.pid"
)
bg_pid=$(<"$tmp/bg.pid")
echo "$bg_pid" >"$jobs_dir/95.server/job/cgroup.procs"
run "${epilogue[@]}" 95.server
check "survivor: epilogue exits 1" test "$rc" = 1
check "survivor: one-line error naming the process" \
	test "$(wc -l <"$tmp/err")" = 1 -a "$(grep -c "processes still in $jobs_dir/95.server after 10s: $bg_pid: not removing it" "$tmp/err")" = 1
check "survivor: cgroup kept" test -d "$jobs_dir/95.server/job"
check "survivor: still running (the epilogue only writes cgroup.kill when the kernel has it)" test -d "/proc/$bg_pid"
kill -KILL "$bg_pid"
bg_pid=
: >"$jobs_dir/95.server/job/cgroup.procs"

# Kernels before 5.19 have no memory.peak: the epilogue says so, and still
# reports, kills and removes.
run "${prologue[@]}" 96.server "$juser" "$jgroup"
mkdir "$jobs_dir/96.server/run-7/" "$jobs_dir/96.server/run-7/task-0"
rm "$jobs_dir/96.server/memory.peak" "$jobs_dir/96.server/run-7/memory.peak" "$jobs_dir/96.server/run-7/task-0/memory.peak"
run "${epilogue[@]}" 96.server "$juser" "$jgroup"
check "no memory.peak: epilogue exits 0" test "$rc" = 0
check "no memory.peak: no errors" test ! -s "$tmp/err"
check "no memory.peak: the summary says so" \
	content "$tmp/out" "memguard: job 96.server: memory.peak not available (kernel before 5.19), memory.max max, oom_kill 0, oom 0, max 0"
check "no memory.peak: cgroup removed" test ! -e "$jobs_dir/96.server"

# A process placed in the job's leaf while the epilogue runs (memguardd
# serving a "place job=<id>" that asked before the epilogue took the cgroup
# back): here the fake rmdir moves one in just before the leaf would go. The
# epilogue kills it too and removes the cgroup. Without cgroup.kill, so that
# the fake tree's kill is real (freeze, SIGKILL each, thaw).
run "${prologue[@]}" 97.server "$juser" "$jgroup"
rm "$jobs_dir/97.server/cgroup.kill"
(
	sleep 300 &
	echo $! >"$tmp/bg.pid"
)
bg_pid=$(<"$tmp/bg.pid")
echo "memguard.jobs/97.server/job $bg_pid" >"$tmp/place-on-rmdir"
run "${epilogue[@]}" 97.server "$juser" "$jgroup"
check "placed during the epilogue: the process was moved in (the attacker's rmdir ran)" test ! -e "$tmp/place-on-rmdir"
check "placed during the epilogue: exits 0" test "$rc" = 0
check "placed during the epilogue: no errors" test ! -s "$tmp/err"
check "placed during the epilogue: the process is killed" gone_within_5s "$bg_pid"
check "placed during the epilogue: the cgroup is removed" test ! -e "$jobs_dir/97.server"
bg_pid=
# memguardd places only into a job cgroup and leaf the caller owns: the
# epilogue gives them back to its own user (root under pbs_mom) first.
check "the epilogue took the job's cgroup back from the user (owner $(id -u) when removed)" \
	contains "$tmp/rmdir-owner.log" "^memguard.jobs/97.server owner=$(id -u)$"
check "the epilogue took the job's leaf back from the user (owner $(id -u) when removed)" \
	contains "$tmp/rmdir-owner.log" "^memguard.jobs/97.server/job owner=$(id -u)$"

for j in 77.pbspro "88[3].server" 89.server 95.server; do
	run "${epilogue[@]}" "$j"
	check "epilogue $j exits 0" test "$rc" = 0
done
check "all job cgroups gone, memguard.jobs stays" test -z "$(find "$jobs_dir" -mindepth 1 -type d)"

echo
if ((failed)); then
	echo "$failed of $n checks failed"
	exit 1
fi
echo "all $n checks passed"
