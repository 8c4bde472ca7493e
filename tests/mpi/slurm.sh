# slurm.sh: a Slurm cluster of its own for the MPI cases: munged,
# slurmctld and one slurmd per node, with a configuration, ports, keys and
# state in a temporary directory, so that nothing of the machine's own
# Slurm (if any) is used or touched. Sourced by a case after lib.sh:
#
#   . "$MPITEST_SRCDIR/slurm.sh"
#   slurm_setup || exit 77           # skip: the last line says why
#   slurm_launch_cmd shim 4 [NAME=VALUE...] -- PROG ARGS; run_launch
#   slurm_teardown                   # also run by an EXIT trap
#
# One node (ftn1) runs on this machine's own addresses. With the
# network-namespace hosts of netns.sh set up first, slurm_setup NETNS
# runs one node per host instead (ftn1 on h1, ...), each slurmd inside
# its host's namespace, and slurmctld in the root namespace on the
# bridge's address.
#
# After slurm_setup:
#   SLURM_CONF     the configuration (exported: srun, sbatch read it)
#   SLURM_DIR      the directory with everything in it (logs: *.log)
#   SLURM_NODES    the node names, ftn1 .. ftnN
#   SLURM_MPI      the srun --mpi plugin this flavour needs (pmi2, pmix)

SLURM_DIR=
SLURM_NODES=()
SLURM_PIDFILES=()

slurm_skip() {
	echo "skip: $*"
	exit 77
}

case $MPITEST_FLAVOUR in
mpich) SLURM_MPI=pmi2 ;;   # MPICH's PMI-2 client
openmpi) SLURM_MPI=pmix ;; # Debian's Open MPI has no PMI-2 client
*) fail "unknown MPI flavour '$MPITEST_FLAVOUR'" ;;
esac

# A block of 100 ports that nothing on this machine listens on or uses:
# slurmctld's, each slurmd's (base+1+k), and srun's own (base+50..99).
slurm_free_ports() {
	local i base used
	used=$(ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' | sort -u)
	for i in $(seq 0 99); do
		base=$((20000 + ((${BASHPID:-$$} + i * 37) % 300) * 100))
		if ! echo "$used" | awk -v b="$base" '$1 >= b && $1 < b + 100 { found = 1 } END { exit !found }'; then
			echo "$base"
			return 0
		fi
	done
	return 1
}

# slurm_setup [NETNS]: write the configuration, start the daemons and wait
# (at most 20 s) until every node is idle. Exits 77 with the reason where
# Slurm cannot run here.
slurm_setup() {
	local c ctl_addr host short base k
	[ "$(id -u)" = 0 ] || slurm_skip "the test's own Slurm needs root (uid $(id -u))"
	for c in munged slurmctld slurmd srun sbatch sinfo ss; do
		command -v $c >/dev/null || slurm_skip "no '$c' command (Debian packages slurm-wlm, munge, iproute2)"
	done
	short=$(hostname -s)
	base=$(slurm_free_ports) || slurm_skip "no free block of 100 ports in 20000-50000"
	# Its own directory under /tmp, which munged accepts (its socket's
	# directories must be searchable by all); the case's scratch
	# directory may lie under a private one.
	SLURM_DIR=$(mktemp -d /tmp/ftslurm.XXXXXX)
	chmod 755 "$SLURM_DIR"
	if [ "${1:-}" = NETNS ]; then
		trap 'slurm_teardown; netns_teardown' EXIT
	else
		trap slurm_teardown EXIT
	fi
	local d=$SLURM_DIR
	mkdir -m 700 "$d/state" "$d/spool" "$d/tmp"
	head -c 1024 /dev/urandom >"$d/munge.key"
	chmod 400 "$d/munge.key"
	if ! timeout -k 2 10 munged --key-file="$d/munge.key" --socket="$d/munge.sock" \
		--pid-file="$d/munged.pid" --log-file="$d/munged.log" --seed-file="$d/munged.seed" 2>"$d/munged.err"; then
		slurm_skip "munged does not start: $(tail -n 1 "$d/munged.err")"
	fi
	SLURM_PIDFILES+=("$d/munged.pid")
	if [ "${1:-}" = NETNS ]; then
		ctl_addr=$NETNS_BRIDGE_ADDR
		for k in $(seq 1 ${#NETNS_HOSTS[@]}); do
			SLURM_NODES+=("ftn$k")
		done
	else
		ctl_addr=127.0.0.1
		SLURM_NODES=(ftn1)
	fi
	for k in "${SLURM_NODES[@]}"; do
		mkdir -m 1777 "$d/tmp/$k"
	done
	{
		echo "ClusterName=ftshimtest"
		echo "SlurmctldHost=$short($ctl_addr)"
		echo "SlurmctldPort=$base"
		echo "SlurmdPort=$((base + 1))"
		echo "SrunPortRange=$((base + 50))-$((base + 99))"
		echo "AuthType=auth/munge"
		echo "AuthInfo=socket=$d/munge.sock"
		echo "CredType=cred/munge"
		echo "SlurmUser=root"
		echo "SlurmdUser=root"
		echo "StateSaveLocation=$d/state"
		echo "SlurmdSpoolDir=$d/spool/%n"
		# Each node's own: the nodes share this machine's /tmp, where
		# Slurm's PMIx plugin makes per-step directories of one name.
		echo "TmpFS=$d/tmp/%n"
		echo "SlurmctldPidFile=$d/slurmctld.pid"
		echo "SlurmdPidFile=$d/slurmd.%n.pid"
		echo "SlurmctldLogFile=$d/slurmctld.log"
		echo "SlurmdLogFile=$d/slurmd.%n.log"
		# No cgroups: the test machine may have none to give.
		echo "ProctrackType=proctrack/linuxproc"
		echo "TaskPlugin=task/none"
		echo "JobAcctGatherType=jobacct_gather/none"
		echo "AccountingStorageType=accounting_storage/none"
		echo "JobCompType=jobcomp/none"
		echo "SchedulerType=sched/builtin"
		echo "SelectType=select/cons_tres"
		echo "SelectTypeParameters=CR_Core"
		# Nodes as configured, not as their hardware is (2 cores here).
		echo "SlurmdParameters=config_overrides"
		echo "ReturnToService=2"
		echo "MpiDefault=none"
		[ -n "${SLURM_DEBUG:-}" ] && echo "SlurmdDebug=debug2"
		echo "KillWait=2"
		echo "InactiveLimit=0"
		# A lost node is marked down within seconds (the defaults,
		# 300 s and 10 s, take minutes).
		echo "SlurmdTimeout=5"
		echo "MessageTimeout=3"
		echo "MinJobAge=10"
		if [ "${1:-}" = NETNS ]; then
			for k in $(seq 1 ${#NETNS_HOSTS[@]}); do
				echo "NodeName=ftn$k NodeHostname=${NETNS_HOSTNAMES[$((k - 1))]} NodeAddr=${NETNS_HOSTS[$((k - 1))]} Port=$((base + 1)) CPUs=16 State=UNKNOWN"
			done
		else
			echo "NodeName=ftn1 NodeHostname=$short NodeAddr=127.0.0.1 CPUs=16 State=UNKNOWN"
		fi
		echo "PartitionName=ft Nodes=ALL Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:16"
	} >"$d/slurm.conf"
	export SLURM_CONF=$d/slurm.conf
	if ! timeout -k 2 10 slurmctld -f "$SLURM_CONF" -i 2>"$d/slurmctld.err"; then
		slurm_skip "slurmctld does not start: $(tail -n 1 "$d/slurmctld.err" "$d/slurmctld.log" 2>/dev/null | tail -n 1)"
	fi
	SLURM_PIDFILES+=("$d/slurmctld.pid")
	for k in $(seq 1 ${#SLURM_NODES[@]}); do
		local node=${SLURM_NODES[$((k - 1))]} wrap=()
		# In a host's network namespace, with its host name; not through
		# 'ip netns exec' (netns-agent), whose fresh /sys has no cgroup
		# hierarchies, without which slurmd does not start.
		[ "${1:-}" = NETNS ] && wrap=(nsenter "--net=/run/netns/${NETNS_NAMES[$((k - 1))]}" unshare --uts
			sh -c 'hostname "$0" && exec "$@"' "${NETNS_HOSTNAMES[$((k - 1))]}")
		if ! timeout -k 2 10 "${wrap[@]}" slurmd -f "$SLURM_CONF" -N "$node" 2>"$d/slurmd.$node.err"; then
			slurm_skip "slurmd ($node) does not start: $(tail -n 1 "$d/slurmd.$node.err" "$d/slurmd.$node.log" 2>/dev/null | tail -n 1)"
		fi
		SLURM_PIDFILES+=("$d/slurmd.$node.pid")
	done
	local i states
	for i in $(seq 1 100); do
		states=$(timeout -k 2 5 sinfo -h -N -o '%N %T' 2>/dev/null || true)
		[ "$(echo "$states" | grep -c ' idle$')" = ${#SLURM_NODES[@]} ] && return 0
		sleep 0.2
	done
	slurm_skip "the test's Slurm nodes are not idle after 20 s: ${states//$'\n'/, }; $(tail -n 1 "$d/slurmctld.log")"
}

# slurm_launch_cmd shim|plain NP [NAME=VALUE...] -- PROG ARGS: LAUNCH for
# a direct launch by srun, as the README gives it: the shim and the
# ranks' environment through --export (no commas in the values).
slurm_launch_cmd() {
	local np=$2 kv export=ALL
	split_launch_args "$1" "${@:3}"
	for kv in "${LAUNCH_ENV[@]}"; do
		case $kv in *,*) fail "slurm_launch_cmd: a comma in '$kv' (srun --export splits on them)" ;; esac
		export="$export,$kv"
	done
	LAUNCH=(srun --mpi="$SLURM_MPI" -n "$np" --export="$export" "${LAUNCH_PROG[@]}")
}

# slurm_teardown: cancel what runs, stop the daemons, remove everything.
slurm_teardown() {
	local f pid
	[ -n "$SLURM_DIR" ] || return 0
	timeout -k 2 5 scancel --quiet --full --user=root 2>/dev/null || true
	# The pids are read once: a daemon removes its pid file as it begins
	# to stop, and slurmctld can take longer than the grace below.
	local pids=()
	for f in "${SLURM_PIDFILES[@]}"; do
		pid=$(cat "$f" 2>/dev/null) && pids+=("$pid")
	done
	for pid in ${pids[@]+"${pids[@]}"}; do
		kill "$pid" 2>/dev/null || true
	done
	sleep 0.3
	for pid in ${pids[@]+"${pids[@]}"}; do
		kill -9 "$pid" 2>/dev/null || true
	done
	# The steps' own daemons, if a job was still running: those of this
	# cluster have its SLURM_CONF in their environment, from slurmd's.
	for pid in $(pgrep -x slurmstepd 2>/dev/null); do
		grep -qzx "SLURM_CONF=$SLURM_CONF" "/proc/$pid/environ" 2>/dev/null && kill -9 "$pid" 2>/dev/null
	done
	[ -n "${SLURM_KEEP:-}" ] || rm -rf "$SLURM_DIR"
	SLURM_DIR=
}
