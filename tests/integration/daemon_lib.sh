# Starting and stopping memguardd for the daemon tests. Sourced after lib.sh.

# start_daemon [EXTRA CONFIG LINES]: a config under $work, the kill log in
# $work/kills.jsonl, the daemon's log in $work/daemon.log.
start_daemon() {
	cat >"$work/memguard.conf" <<-CONF
		[daemon]
		kill_log = $work/kills.jsonl
		settle = 1s
		$*
	CONF
	# The log is appended to across restarts: wait for this start's line.
	local started
	started=$(grep -c "watching" "$work/daemon.log" 2>/dev/null || true)
	"$memguardd" -v -c "$work/memguard.conf" >>"$work/daemon.log" 2>&1 &
	daemon_pid=$!
	for _ in $(seq 100); do
		[ "$(grep -c "watching" "$work/daemon.log" 2>/dev/null || true)" -gt "${started:-0}" ] && return 0
		kill -0 "$daemon_pid" 2>/dev/null || { cat "$work/daemon.log"; fail "memguardd exited at start"; }
		sleep 0.05
	done
	cat "$work/daemon.log"
	fail "memguardd did not start"
}

stop_daemon() {
	kill -TERM "$daemon_pid" 2>/dev/null || true
	wait "$daemon_pid" 2>/dev/null || true
}
