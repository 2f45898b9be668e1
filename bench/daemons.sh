# How the benchmark starts each variant's node daemon, as its packaged systemd unit would. Sourced.
# shellcheck shell=bash
# shellcheck disable=SC2034 # DAEMON_CMD is read by the scripts that source this file

# daemon_command VARIANT MEMGUARDD CONFIG: sets DAEMON_CMD (empty when the variant has no daemon).
#   earlyoom  earlyoom.service: EnvironmentFile=-/etc/default/earlyoom, ExecStart=/usr/bin/earlyoom $EARLYOOM_ARGS
#   nohang    nohang.service: ExecStart=/usr/sbin/nohang --monitor --config /etc/nohang/nohang.conf
#   elastic   memguardd -c CONFIG; /run/memguard is what RuntimeDirectory=memguard would create (the pid
#             file there tells the launcher that a daemon runs)
daemon_command() {
	local EARLYOOM_ARGS=
	DAEMON_CMD=()
	case $1 in
	earlyoom)
		# shellcheck source=/dev/null
		if [[ -r /etc/default/earlyoom ]]; then
			. /etc/default/earlyoom
		fi
		local args=()
		# systemd splits an unbraced $VAR on whitespace.
		# For side runs, MEMGUARD_BENCH_EARLYOOM_ARGS replaces the packaged arguments (e.g. "--dryrun").
		read -ra args <<<"${MEMGUARD_BENCH_EARLYOOM_ARGS-$EARLYOOM_ARGS}"
		DAEMON_CMD=(/usr/bin/earlyoom "${args[@]}")
		;;
	nohang)
		DAEMON_CMD=(/usr/sbin/nohang --monitor --config /etc/nohang/nohang.conf)
		;;
	elastic)
		mkdir -p /run/memguard
		rm -f /run/memguard/memguardd.pid
		DAEMON_CMD=("$2" -c "$3")
		;;
	esac
}

# daemon_ready VARIANT LOG PID: true once the daemon is up (or gone: the caller checks that).
daemon_ready() {
	kill -0 "$3" 2>/dev/null || return 0
	case $1 in
	elastic) [[ -s /run/memguard/memguardd.pid ]] ;;
	nohang) grep -q 'Monitoring has started' "$2" ;;
	earlyoom) grep -q 'mem avail' "$2" ;;
	*) return 0 ;;
	esac
}

# The launcher's and memguardd's configuration in the benchmark: every key at its default except the
# kill log (under /tmp) and min_share, whose 32 MiB default refuses 256 tasks in a 1 GiB guest. For side
# runs, MEMGUARD_BENCH_DAEMON_CONF adds lines to [daemon] (e.g. "throttle = yes"; the run's meta line
# records it).
# write_memguard_conf FILE KILL_LOG
write_memguard_conf() {
	cat >"$1" <<-CONF
		[budget]
		min_share = 256K

		[daemon]
		kill_log = $2
		${MEMGUARD_BENCH_DAEMON_CONF:-}
	CONF
}
