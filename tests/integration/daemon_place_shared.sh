#!/usr/bin/env bash
# The shared-unit attack (docs/security.md): alice's cron job shares a cgroup with bob's cron job and
# root's cron daemon, under a slice with a memory limit, as system.slice/cron.service does. She asks
# memguardd for a run with a budget of the slice's limit, so that memguardd would cap the shared cgroup
# at what her run leaves: the kernel would then kill bob's job there. memguardd must refuse her and
# write nothing on that cgroup: a run is made only beside a job's own task cgroup ([daemon]
# place_beside), and only when every process below it has her real and effective uid. A site that
# lists such units all the same gets the same refusal for bob's and root's processes there; alice alone
# in one of them is placed. Before (a1c1d0c), memguardd made shared.slice/memguard-run-... and wrote
# memory.max on cron.service.
. "$(dirname "$0")/lib.sh"
enable_root_controllers
. "$(dirname "$0")/daemon_lib.sh"
. "$(dirname "$0")/place_lib.sh"
slice=$cgroot/shared.slice
trap 'remove_tree "$cgroot/job8"; cleanup; remove_tree "$slice"' EXIT

# untouched CGROUP: no limit of memguardd's on it, and no record of one.
untouched() {
	assert_eq "$(cat "$1/memory.max")" max "memory.max of ${1#"$cgroot"/}"
	assert_eq "$(keeps_of "$1")" none "user.memguard.keeps of ${1#"$cgroot"/}"
}
# in CGROUP USER CMD...: CMD as USER (uid and gid, real and effective) in CGROUP, in the background.
in_cgroup() {
	local cg=$1 u=$2
	shift 2
	sh -c 'u=$1; shift; echo $$ >"$0/cgroup.procs" && exec setpriv --reuid="$u" --regid="$u" --clear-groups -- "$@"' \
		"$cg" "$u" "$@" &
}

echo "setup: shared.slice (540 MiB) holds cron.service: root's cron daemon, bob's cron job, alice's"
mkdir "$slice"
echo 540M >"$slice/memory.max"
echo "+memory +pids" >"$slice/cgroup.subtree_control"
mkdir "$slice/cron.service"
in_cgroup "$slice/cron.service" root sleep 600
in_cgroup "$slice/cron.service" bob sleep 600
bob_job=$!
wait_for 10 sh -c '[ "$(wc -l <"$0/cgroup.procs")" -eq 2 ]' "$slice/cron.service" ||
	fail "the cron daemon and bob's job did not start"

echo "alice asks for a run from cron.service, her budget the slice's limit: refused, nothing written"
reply=$(client alice shared.slice/cron.service/ line "place budget=$((540 << 20))")
note "$reply"
case $reply in
"err cgroup shared.slice/cron.service is not a job's task cgroup"*) ;;
*) fail "alice asking from the shared cron.service got: $reply" ;;
esac
untouched "$slice/cron.service"
no_placed_runs || fail "a run was made beside the shared cron.service: $(run_dirs)"

echo "a site that lists its services in place_beside: refused all the same, for bob's and root's processes"
stop_daemon
place_daemon_conf="place_beside = job*/task shared.slice/*.service"
place_start
reply=$(client alice shared.slice/cron.service/ line "place budget=$((540 << 20))")
note "$reply"
case $reply in
"err cgroup shared.slice/cron.service holds pid "*" of another uid"*) ;;
*) fail "alice asking from a listed cron.service that holds others' processes got: $reply" ;;
esac
untouched "$slice/cron.service"
no_placed_runs || fail "a run was made beside cron.service: $(run_dirs)"

echo "a process of alice's that runs as root (a setuid program) counts as another uid's"
job job8 300M
mkdir "$cgroot/job8/task"
sh -c 'echo $$ >"$0/cgroup.procs" && exec setpriv --ruid=alice --euid=0 -- sleep 600' "$cgroot/job8/task" &
wait_for 10 sh -c '[ -n "$(cat "$0/cgroup.procs")" ]' "$cgroot/job8/task" || fail "the setuid stand-in did not start"
reply=$(client alice job8 line "place budget=$((300 << 20))")
note "$reply"
case $reply in "err cgroup job8/task holds pid "*) ;; *) fail "alice beside her own euid-0 process got: $reply" ;; esac
untouched "$cgroot/job8/task"
cg_kill "$cgroot/job8/task"

echo "alice alone in a listed service of her own: placed beside it, and it keeps what her run leaves"
mkdir "$slice/alice.service"
reply=$(client alice shared.slice/alice.service/ line "place budget=$((500 << 20))")
note "$reply"
case $reply in "ok run shared.slice/memguard-run-$(id -u alice)-"*) ;; *) fail "alice alone got: $reply" ;; esac
wait_for 10 no_placed_runs || fail "alice's run outlived her client"

kill -0 "$bob_job" || fail "bob's cron job died"
untouched "$slice/cron.service"
stop_daemon
grep -i "placement for\|placed pid\|keeps" "$work/daemon.log" | sed 's/^/    /' || true
echo "PASS: no run beside a shared cgroup, and no limit written on it"
