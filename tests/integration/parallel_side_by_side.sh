#!/usr/bin/env bash
# memguard on GNU parallel's command line, side by side with GNU parallel
# itself (Debian's 20221122): every replacement string, input source and
# option memguard takes from parallel, a command string with a pipe and a
# redirection, and parallel's exit statuses. Each case runs the same
# arguments through both, in directories of their own and with the same
# standard input, and must give byte-identical stdout and the same exit
# status. Where the order of the output would depend on timing, -k or -j1
# or sleeps far apart fix it.
#
# Timing: tasks that must overlap overlap by a second or more, so that a
# loaded host does not change the order.
#
# Runs on the host through ctest (degraded mode, --no-cgroups: nothing
# here needs cgroups or uses memory) and in the VM (cgroup mode): without a
# cgroup v2 memory controller the runs are degraded, with one (as root) the
# tasks get their cgroups.
# (base.sh, not lib.sh: lib.sh insists on cgroup v2, and this test runs without it too.)
# shellcheck disable=SC1083,SC2016 # {} and $x are parallel's and the tasks', not this shell's
. "$(dirname "${BASH_SOURCE[0]}")/base.sh"

command -v parallel >/dev/null || fail "GNU parallel is not installed (scripts/deps.sh test)"
parallel --version | head -1 | grep -q 'GNU parallel' || fail "parallel is not GNU parallel"
W=$work
mkdir -p "$W/home/.parallel" "$W/in"
touch "$W/home/.parallel/will-cite" # no citation notice
export PARALLEL_SHELL=/bin/sh       # both run the lines in the same shell
unset PARALLEL                      # no options from the environment
mg_flags=()
if ! grep -qw memory "$cgroot/cgroup.controllers" 2>/dev/null || [ "$(id -u)" -ne 0 ]; then
	mg_flags=(--no-cgroups)
fi
note "memguard ${mg_flags[*]:-(cgroup mode)} against $(parallel --version | head -1)"

# Inputs.
printf 'a\nb c\n\nd\r\n  e  \nlast' >"$W/in/lines"     # a blank line, a CR, blanks, no final newline
printf '1\n2\n' >"$W/in/12"
printf 'x\ny\nz\n' >"$W/in/xyz"
printf 'a,b\n c , d \nx,,\n,y\n' >"$W/in/csv"
printf 'gamma\nalpha\nbeta\n' >"$W/in/stdin"
: >"$W/in/empty"

failures=() n=0 all=0
# In cgroup mode (the VM, under TCG, where parallel itself takes seconds to
# start) only the cases marked "+" run: those where running the tasks in
# cgroups could matter (spawning, the output's pipes, exit statuses, --halt's
# kills); the composition and the inputs are the same code in both modes and
# run in full on the host. MG_SIDE_ALL=1 runs every case anywhere.
subset=0
[ ${#mg_flags[@]} -gt 0 ] || [ -n "${MG_SIDE_ALL:-}" ] || subset=1
# check NAME STDIN ARGS...: runs `parallel ARGS` and `memguard ARGS` and compares.
check() {
	local name=$1 stdin=$2 ps ms start=${EPOCHREALTIME/./}
	shift 2
	all=$((all + 1))
	[[ $subset == 0 || $name == +* ]] || return 0
	name=${name#+}
	n=$((n + 1))
	rm -rf "$W/p" "$W/m"
	mkdir "$W/p" "$W/m"
	# Both at once: the cases that fix the order by sleeps then cost their sleeps once.
	set +e
	(cd "$W/p" && HOME=$W/home exec parallel "$@" <"$stdin" >"$W/p.out" 2>"$W/p.err") &
	local pid=$!
	(cd "$W/m" && HOME=$W/home exec "$memguard" "${mg_flags[@]}" "$@" <"$stdin" >"$W/m.out" 2>"$W/m.err")
	ms=$?
	wait "$pid"
	ps=$?
	set -e
	if [ "$ps" = "$ms" ] && cmp -s "$W/p.out" "$W/m.out"; then
		printf 'ok   %3s %6d ms  %s\n' "$ms" $(((${EPOCHREALTIME/./} - start) / 1000)) "$name"
		# MG_SIDE_SHOW=1: what both printed, to see that a case shows something.
		[ -z "${MG_SIDE_SHOW:-}" ] || sed 's/^/       | /' "$W/m.out"
		return
	fi
	echo "FAIL $name: exit parallel $ps, memguard $ms"
	diff <(od -c "$W/p.out") <(od -c "$W/m.out") | head -20 | sed 's/^/       | /'
	sed 's/^/       memguard: /' "$W/m.err" | head -20
	failures+=("$name")
}

# --- replacement strings ------------------------------------------------------
check "+{} quoted for the shell" /dev/null -k echo {} ::: a 'b c' "d'e" '$HOME' '' 'f"g' 'h\i' 'é' '*' '~' "'"
check "{.}" /dev/null -k echo {.} ::: a.b a/b.c 'a b.tar.gz' .x x. . .. a.b/c
check "{/}" /dev/null -k echo {/} ::: a/b /b b a/b/ '' x/y.z
check "{//}" /dev/null -k echo {//} ::: a/b b /b a/b/ / '' a//b //a 'p q/r'
check "{/.}" /dev/null -k echo {/.} ::: a/b.c x/.y 'p q/r.s' b
check "{#}" /dev/null -k echo {#} {} ::: a b c d e f g h i j k
check "{%} with -j1" /dev/null -k -j1 echo {%} {} ::: a b c
check "+{%}: the lowest free slot" /dev/null -k -j2 'sleep {}; echo {%} {}' ::: 1.5 0.1 0.1
check "{1} {2} of two sources" /dev/null -k echo {2} {1} ::: a b ::: c d
check "{-1} and {3} past the last" /dev/null -k echo '[{-1}]' '[{3}]' '[{1}]' ::: a b ::: c d
check "{N.} {N/} {N//} {N/.}" /dev/null -k echo {1.} {2/} {1//} {2/.} ::: a/b.c ::: d/e.f
check "{} of several sources" /dev/null -k echo x{}y ::: a b ::: c
check "no replacement string: appended" /dev/null -k echo ::: a 'b c'
check "no replacement string, two sources" /dev/null -k echo ::: a b ::: 'c d'
check "replacement string in the program's word" /dev/null -k {} ::: 'echo a' 'echo b  c'
check "no command: the inputs are commands" /dev/null -k ::: 'echo x' 'echo "y z"'
check "--colsep" /dev/null -k --colsep , echo '[{2}]' '[{1}]' '[{3}]' :::: "$W/in/csv"
check "--colsep with a regexp" /dev/null -k --colsep '\s+' echo '[{1}]' '[{2}]' ::: ' a   b ' 'c d'
check "--colsep with {}" /dev/null -k --colsep , echo {} ::: 'a,b' ' c , d '
check "--quote" /dev/null -k --quote sh -c 'echo "$0|$1|{}"' {} 'x y' ::: 'a b' "c'd" '$e'
check "+a pipe and a redirection" /dev/null -k 'echo {} | tr a-z A-Z > out.{#}; cat out.{#}' ::: ab 'c d' ef
check "PARALLEL_SEQ and PARALLEL_JOBSLOT" /dev/null -k -j1 'echo $PARALLEL_SEQ $PARALLEL_JOBSLOT {}' ::: a b c
check "a line of the shell's own" /dev/null -k 'for i in 1 2; do echo {}$i; done; test {} != b' ::: a b c

# --- input sources -----------------------------------------------------------
check ":::: FILE: blank lines, CR and a last line without newline" /dev/null -k echo '[{}]' :::: "$W/in/lines"
check "-a FILE" /dev/null -k -a "$W/in/lines" echo '[{}]'
check "-a twice: the cross product" /dev/null -k -a "$W/in/12" -a "$W/in/xyz" echo
check "-a then :::" /dev/null -k -a "$W/in/12" echo ::: p q
check ":::: FILE FILE" /dev/null -k echo :::: "$W/in/12" "$W/in/xyz"
check "three sources: the cross product" /dev/null -k echo ::: a b :::: "$W/in/12" ::: x y
check ":::+ links to the one before" /dev/null -k echo ::: a b c :::+ 1 2 ::: x y
check "::::+ links files" /dev/null -k echo :::: "$W/in/xyz" ::::+ "$W/in/12"
check "an empty source beside others" /dev/null -k echo ::: a b :::: "$W/in/empty"
check "an empty source alone: no task" /dev/null -k echo {} :::: "$W/in/empty"
check "::: values with newlines" /dev/null -k echo '[{}]' ::: $'a\nb' $'c\n' x
check "+standard input when the command has {}" "$W/in/stdin" -k echo '[{}]'
check "standard input, no input" /dev/null -k echo '[{}]'
check ":::: - is standard input" "$W/in/stdin" -k echo :::: - ::: 1
check "-a - is standard input" "$W/in/stdin" -k -a - echo {#} {}
check "standard input of a file with blank lines" "$W/in/lines" -k echo '[{}]'
check "+the tasks' own standard input is empty" "$W/in/stdin" -k 'cat; echo {}' ::: a b
check "the tasks' standard input, the inputs read from it" "$W/in/stdin" -k 'cat; echo {}'

# --- options -----------------------------------------------------------------
check "-j 1" /dev/null -j 1 echo ::: a b c
check "-j 50%" /dev/null -k -j 50% echo ::: a b c
check "-j +1" /dev/null -k -j +1 echo ::: a b c
check "--jobs=2" /dev/null -k --jobs=2 echo ::: a b c
check "+-k: the inputs' order, not the finishing order" /dev/null -k -j3 'sleep {}; echo {}' ::: 1.5 0.1 0.8
check "+grouped: each task's output whole" /dev/null -j2 \
	'if [ {} = a ]; then echo a1; sleep 2; echo a2; else sleep 1; echo b1; sleep 2.5; echo b2; fi' ::: a b
check "grouped: stdout whole, in finishing order" /dev/null -j2 'sleep {}; echo {}; echo {} again' ::: 1.5 0.2
check "+--line-buffer: lines as they come" /dev/null --line-buffer -j2 \
	'if [ {} = a ]; then echo a1; sleep 2; echo a2; else sleep 1; echo b1; sleep 2.5; echo b2; fi' ::: a b
check "--line-buffer -k" /dev/null --line-buffer -k -j2 'sleep {}; echo {}; echo {} done' ::: 1 0.2 0.5
check "+--ungroup" /dev/null -u -j2 \
	'if [ {} = a ]; then echo a1; sleep 2; echo a2; else sleep 1; echo b1; sleep 2.5; echo b2; fi' ::: a b
check "--tag" /dev/null -k --tag echo {} ::: a 'b c'
check "--tag of two sources" /dev/null -k --tag echo ::: a b ::: 'c d'
check "--tag with --colsep" /dev/null -k --tag --colsep , echo {2} :::: "$W/in/csv"
check "+--tag, a last line without its newline" /dev/null -k --tag printf "'x\ny'" ::: a b
check "--tag, no output" /dev/null -k --tag true ::: a b
check "--tag --line-buffer" /dev/null --tag --line-buffer -j1 printf "'1\n2\n'" ::: a b
check "+--dry-run" /dev/null --dry-run -k echo {} {.} ::: a.b 'c d'
check "--dry-run --tag" /dev/null --dry-run --tag -k echo {#} ::: a b
check "--dry-run, standard input" "$W/in/stdin" --dry-run -k echo {}

# --- exit statuses -----------------------------------------------------------
check "+exit status: the number that failed" /dev/null -k 'echo {}; exit {}' ::: 0 1 2 0 3
check "+exit status: a signal counts as a failure" /dev/null -k 'echo {}; kill -9 $$' ::: a b
check "exit status: at most 101" /dev/null -j2 'exit 1' ::: $(seq 102)
check "--halt now,fail=1: the failing task's status" /dev/null -k -j1 --halt now,fail=1 'echo {}; exit {}' ::: 0 7 0 0
check "+--halt now,fail=1 kills what runs" /dev/null -j2 --halt now,fail=1 \
	'echo start {}; sleep {}; echo end {}; exit 3' ::: 0.3 4
check "+--halt soon,fail=1 lets it finish" /dev/null -k -j2 --halt soon,fail=1 \
	'echo {}; sleep {}; exit 1' ::: 1 2.5 0.1 0.1
check "--halt now,fail=2" /dev/null -k -j1 --halt now,fail=2 'echo {}; exit {}' ::: 1 0 3 4
check "+--halt now,fail=50%" /dev/null -k -j1 --halt now,fail=50% 'echo {}; exit {}' ::: 1 0 3 4
check "--halt now,fail=25%: one task is the limit" /dev/null -k -j1 --halt now,fail=25% 'exit {}' ::: 0 5 3 4
check "--halt soon,fail=30% never reached" /dev/null -k -j1 --halt soon,fail=30% 'exit {}' ::: 0 5 0 0 0 0
check "--halt now,success=1" /dev/null -k -j1 --halt now,success=1 'echo {}; exit {}' ::: 1 0 3 4
check "--halt now,success=2 never reached" /dev/null -k -j1 --halt now,success=2 'exit {}' ::: 1 3 4
check "--halt now,done=1" /dev/null -k -j1 --halt now,done=1 'exit {}' ::: 7 0 3
check "--halt soon,done=2" /dev/null -k -j1 --halt soon,done=2 'echo {}; exit {}' ::: 6 0 3
check "--halt 2 (now,fail=1)" /dev/null -k -j1 --halt 2 'echo {}; exit {}' ::: 0 4 0
check "+--halt now,fail=1 and a signal" /dev/null -k -j1 --halt now,fail=1 'kill -9 $$' ::: a b
check "--halt never" /dev/null -k --halt never 'exit {}' ::: 0 1 1

# --- a bash function exported with export -f, run by bash ----------------------
greet() { echo "hi $1"; }
export -f greet
PARALLEL_SHELL=/bin/bash check "+an exported bash function" /dev/null -k greet {} ::: a 'b c'
export -nf greet

note "$n of $all cases run, ${#failures[@]} failed"
((subset == 0)) || note "cgroup mode: the cases marked + (MG_SIDE_ALL=1 runs all $all)"
[ ${#failures[@]} -eq 0 ] || fail "memguard differs from GNU parallel: ${failures[*]}"
((n >= (subset ? 16 : 70))) || fail "only $n cases"
