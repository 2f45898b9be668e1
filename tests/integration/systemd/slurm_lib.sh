# A real Slurm (Debian's slurm-wlm, installed on the host by scripts/deps.sh) in the systemd guest:
# one node, slurmctld and slurmd on it, munge auth, cgroup/v2 with ConstrainRAMSpace, and an ordinary
# user who submits the jobs. Sourced after ../lib.sh, not run. What works and why:
# /work/shared/notes/slurm-vm.md. Needs the guest from tests/vm/run-suite.sh --systemd --mem 1536.
# shellcheck shell=bash disable=SC2154 # cgroot, work, fail, note: from ../lib.sh

slurm_user=${SLURM_TEST_USER:-mguser}
slurm_node=slurmvm
slurm_addr=10.10.10.10
slurm_logs=/var/log/slurm
slurm_jobcomp=$slurm_logs/jobcomp.txt
# Bounds of every wait, in seconds (TCG is slow: the node needs about a minute to come up).
SLURM_UP_TIMEOUT=${SLURM_UP_TIMEOUT:-240}
SLURM_JOB_TIMEOUT=${SLURM_JOB_TIMEOUT:-180}

# The daemons' logs and journals, and every job output file of the user: printed on any failure.
slurm_dump() {
	local f
	echo "==== sinfo / squeue"
	timeout 10 sinfo -N -l 2>&1 || true
	timeout 10 squeue -a 2>&1 || true
	for f in "$slurm_logs"/slurmctld.log "$slurm_logs"/slurmd*.log "$slurm_logs"/slurmdbd.log "$slurm_jobcomp"; do
		echo "==== $f"
		tail -n 80 "$f" 2>&1 || true
	done
	echo "==== journal (munge, slurmctld, slurmd, dbus, memguardd)"
	journalctl -b --no-pager -o short-monotonic -u munge -u slurmctld -u slurmd -u dbus -u memguardd 2>&1 |
		tail -n 80 || true
	for f in /home/"$slurm_user"/*.out /root/job-*.out; do
		[ -e "$f" ] || continue
		echo "==== $f"
		cat "$f"
	done
}

# Fails the test with the reason first and every log after it.
slurm_fail() {
	echo "FAIL: $*" >&2
	slurm_dump >&2
	exit 1
}

slurm_assert_eq() { [ "$1" = "$2" ] || slurm_fail "$3: expected '$2', got '$1'"; }

# Brings Slurm up in this guest and creates the job user; fails loudly when the node is not idle
# within SLURM_UP_TIMEOUT.
slurm_up() {
	local mem_mib node i state
	[ -d /run/systemd/system ] || fail "not running under systemd: use tests/vm/run-suite.sh --systemd"
	for cmd in slurmd slurmctld munged sbatch; do
		command -v "$cmd" >/dev/null || fail "no $cmd: Slurm or munge is not installed on the host: run scripts/deps.sh test"
	done

	# The guest has only lo, and Slurm resolves its own name with AI_ADDRCONFIG, which ignores
	# 127.0.0.1: a second address on lo and a host name for it.
	ip link set lo up
	ip addr add "$slurm_addr/32" dev lo 2>/dev/null || ip addr show dev lo | grep -qF " $slurm_addr/32 " ||
		fail "cannot add $slurm_addr to lo"
	hostname "$slurm_node"
	{ echo "$slurm_addr $slurm_node"; grep -v "[[:space:]]$slurm_node\$" /etc/hosts; } >"$work/hosts"
	cat "$work/hosts" >/etc/hosts

	# A key of this guest only, owned by munge and readable by nobody else (munged checks).
	mkdir -p /etc/munge
	dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
	chown munge:munge /etc/munge /etc/munge/munge.key
	chmod 0700 /etc/munge
	chmod 0400 /etc/munge/munge.key

	mkdir -p /var/spool/slurmctld /var/spool/slurmd "$slurm_logs"
	chown slurm:slurm /var/spool/slurmctld "$slurm_logs"

	# RealMemory a little below MemTotal: a node that reports less than RealMemory is drained.
	mem_mib=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) / 1024 - 64))
	node=$(slurmd -C | grep '^NodeName=') || fail "slurmd -C printed no node line"
	# shellcheck disable=SC2001 # a regular expression, which ${//} is not
	node=$(echo "$node" | sed "s/RealMemory=[0-9]*/RealMemory=$mem_mib/")
	# One "GPU" for ConstrainDevices: /dev/full, a device no job step needs.
	node="$node Gres=gpu:1"
	# SLURM_NODES=2: two slurmd as two nodes of one CPU and half the memory each (Debian's slurmd is
	# built for several per host), each with its own spool, pid and log file.
	local spool=/var/spool/slurmd slurmd_pid=/run/slurmd.pid slurmd_log=$slurm_logs/slurmd.log
	local partition=$slurm_node gres_node=$slurm_node
	if [ "${SLURM_NODES:-1}" = 2 ]; then
		node="NodeName=node[1-2] NodeHostname=$slurm_node Port=[17001-17002] CPUs=1 RealMemory=$(((mem_mib - 64) / 2))"
		spool=/var/spool/slurmd/%n slurmd_pid=/run/slurmd-%n.pid slurmd_log=$slurm_logs/slurmd-%n.log
		partition=ALL gres_node=
		mkdir -p /var/spool/slurmd/node1 /var/spool/slurmd/node2
	fi
	mkdir -p /etc/slurm
	cat >/etc/slurm/slurm.conf <<-EOF
		ClusterName=memguard
		SlurmctldHost=$slurm_node
		SlurmUser=slurm
		AuthType=auth/munge
		CryptoType=crypto/munge
		MpiDefault=none
		ProctrackType=proctrack/cgroup
		TaskPlugin=task/cgroup
		SelectType=select/cons_tres
		SelectTypeParameters=CR_Core_Memory
		ReturnToService=2
		KillWait=10
		MinJobAge=3600
		StateSaveLocation=/var/spool/slurmctld
		SlurmdSpoolDir=$spool
		SlurmctldPidFile=/run/slurmctld.pid
		SlurmdPidFile=$slurmd_pid
		SlurmctldLogFile=$slurm_logs/slurmctld.log
		SlurmdLogFile=$slurmd_log
		SlurmctldDebug=info
		SlurmdDebug=info
		$(slurm_accounting_conf)
		JobAcctGatherType=jobacct_gather/cgroup
		JobAcctGatherFrequency=task=1
		GresTypes=gpu
		JobCompType=jobcomp/filetxt
		JobCompLoc=$slurm_jobcomp
		$node
		PartitionName=test Nodes=$partition Default=YES MaxTime=INFINITE State=UP
	EOF
	cat >/etc/slurm/cgroup.conf <<-'EOF'
		CgroupPlugin=cgroup/v2
		ConstrainRAMSpace=yes
		ConstrainSwapSpace=no
		ConstrainCores=yes
		ConstrainDevices=yes
	EOF
	if [ -n "$gres_node" ]; then
		cat >/etc/slurm/gres.conf <<-EOF
			AutoDetect=off
			NodeName=$gres_node Name=gpu File=/dev/full
		EOF
	else
		sed -i '/^GresTypes=/d' /etc/slurm/slurm.conf
		: >/etc/slurm/gres.conf
	fi

	id -u "$slurm_user" >/dev/null 2>&1 || useradd -m -s /bin/bash "$slurm_user"

	# slurmd's cgroup/v2 plugin asks systemd over D-Bus for its scope: dbus first.
	systemctl start dbus munge || slurm_fail "systemctl start dbus munge"
	[ "${SLURM_ACCOUNTING:-0}" = 0 ] || slurm_dbd_up
	if [ "${SLURM_NODES:-1}" = 2 ]; then
		systemctl start slurmctld || slurm_fail "systemctl start slurmctld"
		for n in node1 node2; do
			systemd-run --unit "slurmd-$n" -p Delegate=yes slurmd -D -N "$n" ||
				slurm_fail "systemd-run slurmd -N $n"
		done
	else
		for unit in slurmctld slurmd; do
			systemctl start "$unit" || slurm_fail "systemctl start $unit"
		done
	fi
	state=
	for ((i = 0; i < SLURM_UP_TIMEOUT; i++)); do
		state=$(timeout 10 sinfo -h -o %T 2>/dev/null || true)
		[ "$state" = idle ] && break
		sleep 1
	done
	[ "$state" = idle ] || slurm_fail "node not idle after ${SLURM_UP_TIMEOUT}s (sinfo: '$state')"
	note "[${SECONDS}s] slurm: node $slurm_node idle after ${i}s: $node"
	[ "${SLURM_ACCOUNTING:-0}" = 0 ] || slurm_dbd_users
}

# The accounting lines of slurm.conf: none, or with SLURM_ACCOUNTING=1 slurmdbd on MariaDB, sampling
# each task's memory every 5 s (the default is 30 s, too coarse for a test's short steps).
slurm_accounting_conf() {
	if [ "${SLURM_ACCOUNTING:-0}" = 0 ]; then
		echo AccountingStorageType=accounting_storage/none
		return
	fi
	echo AccountingStorageType=accounting_storage/slurmdbd
	echo AccountingStorageHost=$slurm_node
}

# slurmdbd on MariaDB (SLURM_ACCOUNTING=1; /work/shared/notes/slurm-vm.md): the database and its user,
# then slurmdbd, up when sacctmgr answers. Needs run-suite.sh --mem 2048.
slurm_dbd_up() {
	local pw i
	command -v slurmdbd >/dev/null && command -v mysqld >/dev/null ||
		fail "no slurmdbd or MariaDB: they are not installed on the host: run scripts/deps.sh test"
	systemctl start mariadb || slurm_fail "systemctl start mariadb"
	pw=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
	mysql -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$pw';
		ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$pw';
		GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';" || slurm_fail "cannot create MariaDB's user slurm"
	cat >/etc/slurm/slurmdbd.conf <<-EOF
		AuthType=auth/munge
		DbdHost=$slurm_node
		SlurmUser=slurm
		StorageType=accounting_storage/mysql
		StorageHost=localhost
		StorageUser=slurm
		StoragePass=$pw
		StorageLoc=slurm_acct_db
		LogFile=$slurm_logs/slurmdbd.log
		PidFile=/run/slurmdbd.pid
	EOF
	chown slurm:slurm /etc/slurm/slurmdbd.conf
	chmod 0600 /etc/slurm/slurmdbd.conf
	systemctl start slurmdbd || slurm_fail "systemctl start slurmdbd"
	for ((i = 0; i < SLURM_UP_TIMEOUT; i++)); do
		timeout 10 sacctmgr -n show cluster >/dev/null 2>&1 && break
		sleep 1
	done
	((i < SLURM_UP_TIMEOUT)) || slurm_fail "slurmdbd does not answer sacctmgr after ${SLURM_UP_TIMEOUT}s"
	timeout 30 sacctmgr -i add cluster memguard >/dev/null || slurm_fail "sacctmgr add cluster"
	note "[${SECONDS}s] slurm: slurmdbd on MariaDB answers after ${i}s"
}

# The accounts of the test's users, once slurmctld runs.
slurm_dbd_users() {
	local u
	timeout 30 sacctmgr -i add account research >/dev/null || slurm_fail "sacctmgr add account"
	for u in "$slurm_user" mgother root; do
		id -u "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u"
		timeout 30 sacctmgr -i add user "$u" account=research >/dev/null || slurm_fail "sacctmgr add user $u"
	done
}

# slurm_sacct ID FIELDS: sacct's parsable lines (no header) for the job and each of its steps.
slurm_sacct() {
	timeout 30 sacct -j "$1" -P -n -o "$2" 2>/dev/null
}

slurm_down() {
	systemctl stop slurmd slurmd-node1 slurmd-node2 slurmctld slurmdbd mariadb munge 2>/dev/null || true
}

# slurm_submit SCRIPT [SBATCH-ARGS...]: submits SCRIPT (its text is copied into the user's home) as
# the job user, output to ~/job-<id>.out; prints the job id.
slurm_submit() {
	local script=$1 home id
	shift
	home=$(getent passwd "$slurm_user" | cut -d: -f6)
	install -o "$slurm_user" -m 0755 "$script" "$home/${script##*/}"
	id=$(cd "$home" && runuser -u "$slurm_user" -- sbatch --parsable --chdir="$home" \
		--output="$home/job-%j.out" "$@" "$home/${script##*/}") || slurm_fail "sbatch $script failed"
	echo "${id%%;*}"
}

# slurm_field ID KEY: a field of `scontrol show job` (JobState, ExitCode, ...).
slurm_field() {
	timeout 10 scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# slurm_wait_state ID STATE...: waits (bounded) until the job is in one of the states.
slurm_wait_state() {
	local id=$1 i state=
	shift
	for ((i = 0; i < SLURM_JOB_TIMEOUT; i++)); do
		state=$(slurm_field "$id" JobState)
		for s in "$@"; do
			[ "$state" = "$s" ] && return 0
		done
		sleep 1
	done
	slurm_fail "job $id not in state $* after ${SLURM_JOB_TIMEOUT}s (state: '$state')"
}

# slurm_wait_end ID: waits (bounded) until the job has ended, and until the jobcomp file has its line.
slurm_wait_end() {
	local id=$1 i
	slurm_wait_state "$id" COMPLETED FAILED CANCELLED TIMEOUT OUT_OF_MEMORY NODE_FAIL PREEMPTED BOOT_FAIL DEADLINE
	for ((i = 0; i < 30; i++)); do
		slurm_jobcomp_field "$id" JobState | grep -q . && return 0
		sleep 1
	done
	slurm_fail "job $id ended, but the jobcomp file $slurm_jobcomp has no line for it after 30s"
}

# slurm_jobcomp_field ID KEY: a field of the job's line in the jobcomp file.
slurm_jobcomp_field() {
	grep "^JobId=$1 " "$slurm_jobcomp" 2>/dev/null | tail -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# slurm_job_out ID: the job's output file.
slurm_job_out() {
	echo "$(getent passwd "$slurm_user" | cut -d: -f6)/job-$1.out"
}

# slurm_assert_gone ID: no process of the job's user and no cgroup of the job outlives it (bounded:
# Slurm's SIGKILL of the step follows the batch shell's exit, and it removes the cgroups after).
slurm_assert_gone() {
	local id=$1 uid i left
	uid=$(id -u "$slurm_user")
	for ((i = 0; i < 30; i++)); do
		pgrep -u "$uid" >/dev/null || [ -n "$(slurm_job_cgroups "$id")" ] || break
		sleep 1
	done
	left=$(pgrep -a -u "$uid" || true)
	[ -z "$left" ] || slurm_fail "processes of $slurm_user outlived job $id: $left"
	left=$(slurm_job_cgroups "$id")
	[ -z "$left" ] || slurm_fail "job $id's cgroup is left behind: $left"
}

# slurm_job_cgroups ID: the cgroup directories Slurm made for the job (none once it has cleaned up).
slurm_job_cgroups() {
	find "$cgroot" -maxdepth 3 -type d -path "*slurmstepd.scope/job_$1" 2>/dev/null
}
