#!/usr/bin/env bash
# Bad input: every case in TABLE ends with its documented exit status and a
# message of the documented number of lines (one, unless said) on stderr,
# never a hang or a crash. docs/bad-input.md shows the same table.
# In the VM: a case that were valid by mistake would create cgroups.
#
# MEMGUARD_BAD_INPUT_MARKDOWN=FILE also writes the table as docs/bad-input.md shows it.
# shellcheck disable=SC2016 # the table's commands expand in the case, not here
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

# The hooks only ever see a scratch directory as their cgroup mount: --fake-root
# DIR (the harness's own argument, which pbs_mom never passes) makes it DIR/cgroup.
M=$memguard D=$memguardd W=$work
P="$top/packaging/pbs/prologue --fake-root $W" E="$top/packaging/pbs/epilogue --fake-root $W"
export M D P E W

# --- fixtures ----------------------------------------------------------------
setup_start=${EPOCHREALTIME/./}
chmod 755 "$W" # the cases run as nobody reach their files
: >"$W/empty"
printf '  \n\t\n\n' >"$W/blank"
head -c 1048577 /dev/zero | tr '\0' a >"$W/long"      # one line of 2^20 + 1 bytes
(yes x || true) | head -n 1048577 >"$W/many"          # 2^20 + 1 tasks
printf 'a\0b\n' >"$W/nul"
printf 'a\nb\n' >"$W/two"
printf '\xff\xfe\n' >"$W/latin"
echo x >"$W/unreadable"
chmod 000 "$W/unreadable"
mkdir "$W/ro" && chmod 555 "$W/ro"
echo 'echo hi' >"$W/noexec" && chmod 644 "$W/noexec"
mkdir -p "$W/cgroup/memguard.jobs/notcg"
: >"$W/cgroup/memguard.jobs/cgroup.procs" # the jobs' parent is a cgroup, notcg is not
ln -s /tmp "$W/cgroup/memguard.jobs/link"
# conf NAME TEXT: $W/NAME.conf holding TEXT (printf format).
# shellcheck disable=SC2059 # TEXT is a format
conf() { printf "$2" >"$W/$1.conf"; }
conf nul '[task]\nmode = strict\0\n'
conf garbage 'garbage line\n'
conf section '[nosuch]\n'
conf key '[budget]\nbogus = 1\n'
conf nosection 'reserve = 1G\n'
conf size '[budget]\nmin_share = lots\n'
conf reserve '[budget]\nreserve = 150%%\n'
conf bool '[budget]\nreserve_shmem = maybe\n'
conf percent '[task]\nmemory_high = 120%%\n'
conf duration '[task]\nkill_grace = forever\n'
conf mode '[task]\nmode = loose\n'
conf rlimit '[task]\nrlimit_as = sometimes\n'
conf name '[cgroup]\nparent = ../etc\n'
conf path '[daemon]\nkill_log = relative/kills.jsonl\n'
conf level '[log]\nlevel = loud\n'
conf longline "[daemon]\nprotect = $(printf '%0300d' 0)\n"
conf avail '[daemon]\navailable_min = lots\n'
conf order '[daemon]\navailable_min = 50%%\navailable_pressure = 10%%\n'
conf window '[daemon]\ntrigger_window = 100s\n'
conf stall '[daemon]\ntrigger_stall = 2s\n'
conf poll '[daemon]\npoll_max = 1ms\n'
conf ok '[task]\nmode = strict\n'
# Joblogs: GNU parallel's own, one whose task 1 ran "echo c" (two holds a
# and b), one with a line cut short.
printf 'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n1\t:\t1.0\t1.0\t0\t0\t0\t0\techo a\n' >"$W/parallel.log"
jl_header='Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tShare\tPeak\tOOMKills\tOutcome\tAttempt\tCommand\n'
printf "${jl_header}"'1\th\t1.0\t1.0\t0\t0\t0\t0\t1\t-\t0\tok\t1\techo c\n' >"$W/edited.log"
printf "${jl_header}"'1\th\t1.0\n' >"$W/garbled.log"

note "fixtures in $(((${EPOCHREALTIME/./} - setup_start) / 1000)) ms"

# pause SECONDS: sleep without starting a process (TCG makes each one slow).
mkfifo "$W/never"
exec 9<>"$W/never"
pause() { read -r -t "$1" -u 9 || true; }

# signal_run SIGNALS MEMGUARD-ARGS...: starts memguard, waits until a task
# has touched $W/ready, sends each of SIGNALS (comma-separated), each after
# memguard said it received the one before, and exits with memguard's status.
signal_run() {
	local sigs=$1 pid s first=1
	shift
	set +m # memguard and its tasks stay in the case's process group
	rm -f "$W/ready"
	# A background job of a script starts with SIGINT ignored; a batch
	# system's signal reaches memguard with its default disposition.
	env --default-signal=INT "$M" "$@" &
	pid=$!
	for _ in {1..300}; do
		[ -e "$W/ready" ] && break
		pause 0.05
	done
	for s in ${sigs//,/ }; do
		# After the first: once memguard said it received it (signals of one
		# kind that arrive together count once).
		for _ in {1..300}; do
			[ "$first" ] || [[ $(<"$W/err") == *received* ]] && break
			pause 0.05
		done
		kill -s "$s" "$pid"
		first=
	done
	wait "$pid"
}
# A task that says it runs, then sleeps; one that also ignores SIGTERM.
task='sh -c '\''touch "$0"; exec sleep 60'\'' $W/ready'
deaf='sh -c '\''trap "" TERM; touch "$0"; exec sleep 60'\'' $W/ready'
nobody='setpriv --reuid=65534 --regid=65534 --clear-groups --'

# --- the table ---------------------------------------------------------------
# name | exit status | lines on stderr (* any) | text in the message (- none, !text: not there) | command
TABLE=$(
	cat <<EOF
unknown long option            | 125 | 1 | unknown option --bogus          | \$M --bogus -- true
unknown short option in a cluster | 125 | 1 | unknown option -Z            | \$M -qZv -- true
option without its argument    | 125 | 1 | option -n needs an argument     | \$M -n
no command                     | 125 | 1 | no command given                | \$M -n 2
nothing after --               | 125 | 1 | no command given                | \$M -n 2 --
-n 0                           | 125 | 1 | expected 1 to 1048576           | \$M -n 0 -- true
-n -1                          | 125 | 1 | expected 1 to 1048576           | \$M -n -1 -- true
-n above the bound             | 125 | 1 | expected 1 to 1048576           | \$M -n 1048577 -- true
-n beyond 64 bits              | 125 | 1 | expected 1 to 1048576           | \$M -n 99999999999999999999999 -- true
-n abc                         | 125 | 1 | invalid task count "abc"        | \$M -n abc -- true
-n with a newline              | 125 | 1 | invalid task count "1?2"        | \$M -n \$'1\n2' -- true
--mem garbage                  | 125 | 1 | not a number                    | \$M --mem garbage -- true
--mem 0                        | 125 | 1 | zero                            | \$M --mem 0 -- true
--mem negative                 | 125 | 1 | negative                        | \$M --mem -5G -- true
--mem 2^64-1 bytes             | 125 | 1 | too large                       | \$M --mem 18446744073709551615 -- true
--mem 1e99                     | 125 | 1 | unknown unit                    | \$M --mem 1e99 -- true
--mem a percentage             | 125 | 1 | a percentage needs a base       | \$M --mem 50% -- true
--mem-per-task unknown unit    | 125 | 1 | unknown unit                    | \$M --mem-per-task 12Q -- true
--mem-per-task below min_share | 125 | 1 | below the minimum 32MiB         | \$M --dry-run -n 2 --mem-per-task 1M -- true
--mem-per-task over the budget | 125 | 1 | exceeds the usable              | \$M --dry-run -n 2 --mem-per-task 1P -- true
--mem leaves a tiny share      | 125 | 1 | below the minimum 32MiB         | \$M --dry-run -n 1 --mem 1K -- true
--reserve garbage              | 125 | 1 | invalid reserve "x"             | \$M --reserve x -- true
--reserve above 100%           | 125 | 1 | percentage above 100            | \$M --reserve 200% -- true
--reserve 100%                 | 125 | 1 | leaves nothing of MemTotal      | \$M --dry-run -n 1 --reserve 100% -- true
--memory-high without %        | 125 | 1 | expected a percentage           | \$M --memory-high 50 -- true
--memory-high 101%             | 125 | 1 | expected 1% to 100%             | \$M --memory-high 101% -- true
--grace garbage                | 125 | 1 | invalid --grace "soon"          | \$M --grace soon -- true
--grace negative               | 125 | 1 | negative                        | \$M --grace -1s -- true
--runtime unknown              | 125 | 1 | unknown runtime "cobol"         | \$M --runtime cobol -- true
--rlimit-as unknown            | 125 | 1 | expected auto, on or off        | \$M --rlimit-as maybe -- true
--cgroup-parent with ..        | 125 | 1 | without ..                      | \$M --cgroup-parent ../x -- true
--require-cgroups --no-cgroups | 125 | 1 | contradict each other           | \$M --require-cgroups --no-cgroups -- true
command not found              | 127 | 1 | no-such-cmd: command not found  | \$M --dry-run -- no-such-cmd
empty command                  | 127 | 1 | command not found               | \$M --dry-run -- ''
command is a directory         | 126 | 1 | Is a directory                  | \$M --dry-run -- /tmp
command not executable         | 126 | 1 | Permission denied               | \$M --dry-run -- \$W/noexec
--report into a missing directory | 125 | 1 | No such file or directory    | \$M --dry-run --report /nonexistent/r.json -- true
--report is a directory        | 125 | 1 | Is a directory                  | \$M --dry-run --report /tmp -- true
--report not writable          | 125 | 1 | Permission denied               | $nobody \$M --dry-run --report \$W/ro/r.json -- true
--metrics into a missing directory | 125 | 1 | cannot write the metrics file | \$M --dry-run --metrics /nonexistent/m.prom -- true
--metrics not writable         | 125 | 1 | Permission denied               | $nobody \$M --dry-run --metrics \$W/ro/m.prom -- true
--tasks missing                | 125 | 1 | No such file or directory       | \$M --tasks /nonexistent -- echo {}
--tasks a directory            | 125 | 1 | Is a directory                  | \$M --tasks /tmp -- echo {}
--tasks unreadable             | 125 | 1 | Permission denied               | $nobody \$M --tasks \$W/unreadable -- echo {}
--tasks /dev/zero              | 125 | 1 | larger than 64 MiB              | \$M --tasks /dev/zero -- echo {}
--tasks empty file             | 125 | 1 | is empty: no task to run        | \$M --tasks \$W/empty -- echo {}
--tasks a line over 1 MiB      | 125 | 1 | line 1 is longer than 1 MiB     | \$M --tasks \$W/long -- echo {}
--tasks over 1048576 tasks     | 125 | 1 | more than 1048576 tasks         | \$M --tasks \$W/many -- echo {}
--tasks a NUL byte             | 125 | 1 | NUL byte                        | \$M --tasks \$W/nul -- echo {}
--tasks not UTF-8 (accepted)   | 0   | * | tasks at once                   | \$M --dry-run --tasks \$W/latin -- echo {}
--resume without --joblog      | 125 | 1 | needs --joblog FILE             | \$M --resume -- true
--resume and --resume-failed   | 125 | 1 | contradict each other           | \$M --joblog \$W/j.log --resume --resume-failed -- true
--retries above the bound      | 125 | 1 | expected 0 to 100               | \$M --retries 101 -- true
--progress zero                | 125 | 1 | invalid --progress "0"          | \$M --progress=0 -- true
--joblog GNU parallel's        | 125 | 1 | not memguard's header           | \$M --dry-run --tasks \$W/two --joblog \$W/parallel.log --resume -- echo {}
--joblog line cut short        | 125 | 1 | line 2: fewer columns           | \$M --dry-run --tasks \$W/two --joblog \$W/garbled.log --resume -- echo {}
--joblog of an edited task file | 125 | 1 | the task file changed          | \$M --dry-run --tasks \$W/two --joblog \$W/edited.log --resume -- echo {}
--joblog in a missing directory | 125 | 1 | cannot open the joblog         | \$M --joblog /nonexistent/j.log -- true
--results in a missing directory | 125 | 1 | cannot create the results folder | \$M --results /nonexistent/out -- true
--results not writable         | 125 | 1 | cannot write into the results folder | $nobody \$M -q --tasks \$W/two --results \$W/ro -- echo {}
-q with parallel's inputs      | 125 | 1 | -q is memguard's --quiet        | \$M -q echo {} ::: a
-k without parallel's inputs   | 125 | 1 | -k needs GNU parallel's inputs  | \$M -k -- true
--tasks and :::                | 125 | 1 | two lists of tasks              | \$M --tasks \$W/two -- echo {} ::: a
-j 0                           | 125 | 1 | invalid -j 0                    | \$M -j 0 -- true
-j garbage                     | 125 | 1 | invalid -j "many"               | \$M -j many -- true
--halt garbage                 | 125 | 1 | invalid --halt "sometimes"      | \$M --halt sometimes echo {} ::: a
--colsep not a regexp          | 125 | 1 | invalid --colsep "("            | \$M --colsep '(' echo {} ::: a
:::: missing                   | 125 | 1 | cannot read the input /nonexistent | \$M echo {} :::: /nonexistent
:::: a NUL byte                | 125 | 1 | NUL byte                        | \$M echo {} :::: \$W/nul
:::: a line over 1 MiB         | 125 | 1 | line 1 is longer than 1 MiB     | \$M echo {} :::: \$W/long
:::: empty: nothing to run     | 0   | 1 | no input: nothing to run        | \$M echo {} :::: \$W/empty
report --svg without a file    | 125 | 1 | --svg needs a file name         | \$M report --svg
--config missing               | 125 | 1 | cannot read: No such file       | \$M --config /nonexistent -- true
--config a directory           | 125 | 1 | Is a directory                  | \$M --config /tmp -- true
--config unreadable            | 125 | 1 | Permission denied               | $nobody \$M --config \$W/unreadable -- true
--config /dev/zero             | 125 | 1 | larger than 1 MiB               | \$M --config /dev/zero -- true
config with a NUL byte         | 125 | 1 | NUL byte                        | \$M --config \$W/nul.conf -- true
config garbage line            | 125 | 1 | garbage.conf:1: syntax error    | \$M --config \$W/garbage.conf -- true
config unknown section         | 125 | 1 | unknown section [nosuch]        | \$M --config \$W/section.conf -- true
config unknown key             | 125 | 1 | unknown key "bogus" in section [budget] | \$M --config \$W/key.conf -- true
config key before any section  | 125 | 1 | outside any section             | \$M --config \$W/nosection.conf -- true
config bad size                | 125 | 1 | min_share = "lots": not a number | \$M --config \$W/size.conf -- true
config reserve above 100%      | 125 | 1 | percentage above 100            | \$M --config \$W/reserve.conf -- true
config bad bool                | 125 | 1 | expected yes or no              | \$M --config \$W/bool.conf -- true
config bad percent             | 125 | 1 | expected a percentage           | \$M --config \$W/percent.conf -- true
config bad duration            | 125 | 1 | kill_grace = "forever"          | \$M --config \$W/duration.conf -- true
config bad mode                | 125 | 1 | expected auto, strict or elastic | \$M --config \$W/mode.conf -- true
config bad rlimit_as           | 125 | 1 | expected auto, on or off        | \$M --config \$W/rlimit.conf -- true
config parent with ..          | 125 | 1 | expected a plain name           | \$M --config \$W/name.conf -- true
config relative kill_log       | 125 | 1 | expected an absolute path       | \$M --config \$W/path.conf -- true
config bad log level           | 125 | 1 | expected err, warning           | \$M --config \$W/level.conf -- true
config line too long           | 125 | 1 | line longer than                | \$M --config \$W/longline.conf -- true
MEMGUARD_PROC missing          | 125 | 1 | open /nonexistent               | MEMGUARD_PROC=/nonexistent \$M -- true
MEMGUARD_PROC without meminfo  | 125 | 1 | meminfo: No such file           | MEMGUARD_PROC=\$W \$M -- true
SLURM_MEM_PER_NODE too small   | 125 | 1 | below the minimum 32MiB         | SLURM_MEM_PER_NODE=1 \$M --dry-run -n 1 -- true
SLURM_MEM_PER_NODE garbage     | 0   | * | !batch grant                    | SLURM_MEM_PER_NODE=lots \$M --dry-run -n 1 -- true
SLURM_MEM_PER_CPU garbage      | 0   | * | !batch grant                    | SLURM_MEM_PER_CPU=x SLURM_CPUS_ON_NODE=4 \$M --dry-run -n 1 -- true
PBS_NUM_PPN garbage            | 0   | * | !PBS_NUM_PPN                    | PBS_NUM_PPN=abc \$M --dry-run -- true
memguardd unknown option       | 2   | 1 | unknown option --bogus          | \$D --bogus
memguardd -c without argument  | 2   | 1 | option -c needs an argument     | \$D -c
memguardd stray argument       | 2   | 1 | unexpected argument "start"     | \$D start -c \$W/ok.conf
memguardd -c missing file      | 1   | 1 | cannot read: No such file       | \$D -c /nonexistent
memguardd bad available_min    | 1   | 1 | available_min = "lots"          | \$D -c \$W/avail.conf
memguardd available_min above available_pressure | 1 | 1 | must not exceed available_pressure | \$D -c \$W/order.conf
memguardd trigger_window out of range | 1 | 1 | trigger_window must be 500ms to 10s | \$D -c \$W/window.conf
memguardd trigger_stall above the window | 1 | 1 | trigger_stall above 0 and within it | \$D -c \$W/stall.conf
memguardd poll_max too small   | 1   | 1 | poll_max must be at least 100 ms | \$D -c \$W/poll.conf
memguardd MEMGUARD_PROC missing | 1  | 1 | open /nonexistent               | MEMGUARD_PROC=/nonexistent \$D -c \$W/ok.conf
prologue without arguments     | 2   | 1 | usage: prologue JOBID USER GROUP | \$P
prologue job id ../x           | 0   | 1 | refusing job id "../x"          | \$P ../x root root
prologue empty job id          | 0   | 1 | refusing job id ""              | \$P '' root root
prologue job id with a newline | 0   | 1 | refusing job id "1?x"           | \$P \$'1\nx' root root
prologue unknown user          | 0   | 1 | unknown user "nosuchuser"       | \$P 1.srv nosuchuser root
prologue unknown group         | 0   | 1 | unknown group "nosuchgroup"     | \$P 1.srv root nosuchgroup
prologue no cgroup v2 at the mount | 0 | 1 | no cgroup v2 hierarchy        | \$P 1.srv root root
epilogue without arguments     | 2   | 1 | usage: epilogue JOBID           | \$E
epilogue job id ../x           | 1   | 1 | refusing job id "../x"          | \$E ../x
epilogue not a cgroup          | 1   | 1 | is not a cgroup                 | \$E notcg
epilogue a symbolic link       | 1   | 1 | is a symbolic link              | \$E link
epilogue no such job           | 0   | 0 | -                               | \$E 1.srv
SIGTERM while a task runs      | 143 | 1 | received SIGTERM                | signal_run TERM -q -n 1 --grace 5s -- $task
SIGTERM before queued tasks start | 143 | 1 | received SIGTERM             | signal_run TERM -q -n 1 --tasks \$W/two -- $task
SIGINT while a task runs       | 130 | 1 | received SIGINT                 | signal_run INT -q -n 1 --grace 5s -- $task
SIGTERM ignored by the task    | 143 | 1 | received SIGTERM                | signal_run TERM -q -n 1 --grace 1s -- $deaf
second SIGTERM                 | 143 | 2 | second SIGTERM: killing the tasks now | signal_run TERM,TERM -q -n 1 --grace 60s -- $deaf
EOF
)

# Cases whose current behaviour is a known problem: still asserted as it is,
# so that a change shows, and shown as such in docs/bad-input.md.
declare -A known=(
	["SLURM_MEM_PER_NODE garbage"]="ignored without a word: the grant is not applied"
	["SLURM_MEM_PER_CPU garbage"]="ignored without a word: the grant is not applied"
)

# --- the runner --------------------------------------------------------------
# trim VAR: strips the blanks around VAR's value (no subshell: each costs under TCG).
trim() {
	local -n v=$1
	v=${v#"${v%%[![:space:]]*}"}
	v=${v%"${v##*[![:space:]]}"}
}
# readable VAR: the value as a user reads it: the programs by name, the
# fixtures by file name.
readable() {
	local -n v=$1
	v=${v//"$nobody "/(as nobody) } v=${v//"$task"/TASK} v=${v//"$deaf"/TASK-IGNORING-SIGTERM}
	v=${v//\$M/memguard} v=${v//\$D/memguardd} v=${v//\$P/prologue} v=${v//\$E/epilogue}
	v=${v//\$W\//} v=${v//\$W/DIR} v=${v//"$W/"/} v=${v//"$W"/DIR} v=${v//"$top/"/}
	v=${v//|/\\|}
}

failures=() n=0
set -m # each case in a process group of its own
md=${MEMGUARD_BAD_INPUT_MARKDOWN:-}
[ -z "$md" ] || printf '| input | exit status | message on stderr |\n|---|---|---|\n' >"$md"
while IFS='|' read -r name status lines expect cmd; do
	for f in name status lines expect cmd; do trim $f; done
	[ -n "$name" ] || continue
	n=$((n + 1))
	start=${EPOCHREALTIME/./}
	# The case in its own process group, killed whole after 30 s.
	set +e
	# (An asynchronous subshell keeps lib.sh's EXIT trap, which removes $W.)
	(trap - EXIT && eval "$cmd") >"$W/out" 2>"$W/err" </dev/null &
	pid=$!
	(trap - EXIT && pause 30 && kill -KILL -- -"$pid") 2>/dev/null &
	watchdog=$!
	wait "$pid"
	got=$?
	kill -KILL "$watchdog" 2>/dev/null # not TERM: it may not have dropped the EXIT trap yet
	wait "$watchdog" 2>/dev/null
	set -e
	ms=$(((${EPOCHREALTIME/./} - start) / 1000))
	IFS= read -r -d '' err <"$W/err" || true
	mapfile -t errlines <<<"${err%$'\n'}"
	[ -n "$err" ] || errlines=()
	why=()
	[ "$got" = "$status" ] || why+=("exit $got, expected $status")
	if [ "$lines" != '*' ]; then
		[ "${#errlines[@]}" = "$lines" ] || why+=("${#errlines[@]} lines on stderr, expected $lines")
		[ -z "$err" ] || [[ $err == *$'\n' ]] || why+=("stderr does not end with a newline")
		[ ! -s "$W/out" ] || why+=("output on stdout")
	fi
	case $expect in
	-) ;;
	!*) [[ $err != *"${expect#!}"* ]] || why+=("'${expect#!}' in the message") ;;
	*) [[ $err == *"$expect"* ]] || why+=("'$expect' not in the message") ;;
	esac
	if [ ${#why[@]} -eq 0 ]; then
		printf 'ok   %3s %6d ms  %s\n' "$status" "$ms" "$name"
	else
		echo "FAIL $name: ${why[*]}"
		printf '       | %s\n' "${errlines[@]:0:20}"
		failures+=("$name")
	fi
	if [ -n "$md" ]; then
		if [ "$lines" = '*' ]; then
			msg="(the plan, as with --explain)"
		else
			msg=
			for l in "${errlines[@]}"; do msg+="${msg:+ }\`$l\`"; done
			readable msg
		fi
		[ -z "${known[$name]:-}" ] || msg="$msg **known problem:** ${known[$name]}"
		[ -n "$msg" ] || msg="(none)"
		readable cmd
		printf '| `%s` | %s | %s |\n' "$cmd" "$status" "$msg" >>"$md"
	fi
done <<<"$TABLE"

note "$n cases, ${#failures[@]} failed"
assert_no_leftover
[ ${#failures[@]} -eq 0 ] || fail "bad input not handled as documented: ${failures[*]}"
[ "$n" -ge 60 ] || fail "only $n cases"
