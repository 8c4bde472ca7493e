# netns.sh: several "hosts" on this machine for the MPI cases, each a
# network namespace with its own address and host name, joined by a
# bridge in the root namespace; and the launch lines that start a job
# across them through tests/mpi/netns-agent (the launchers' rsh agent).
# Sourced by a case after lib.sh:
#
#   . "$MPITEST_SRCDIR/netns.sh"
#   netns_setup 4 || exit 77     # skip: the last line says why
#   run_multihost_job shim 3 NAME=VALUE... -- PROG ARGS...
#   netns_teardown; netns_expect_clean
#
# Only addresses this file creates are used: 10.77.R.0/24, R chosen from
# the case's pid and checked to be unused on this machine (under a lock,
# for concurrent runs). Everything is removed by netns_teardown, which an
# EXIT trap also runs, so a failing or interrupted case leaves nothing.
#
# After netns_setup:
#   NETNS_HOSTS      the host addresses, 10.77.R.11 .. 10.77.R.(10+N)
#   NETNS_NAMES      the namespaces, ftnPIDh1 .. ftnPIDhN
#   NETNS_HOSTNAMES  the host names inside, h1 .. hN
#   NETNS_BRIDGE     the bridge; NETNS_BRIDGE_ADDR its address (.1)
#   NETNS_SUBNET     10.77.R.0/24
#   NETNS_MAP        "ADDR=NS=HOSTNAME ..." (exported: the agent reads it)

NETNS_AGENT="$MPITEST_SRCDIR/netns-agent"
NETNS_ID=${BASHPID:-$$}
NETNS_NAMES=()
NETNS_HOSTS=()
NETNS_HOSTNAMES=()
NETNS_VETHS=()
NETNS_BRIDGE=
NETNS_CREATED=()

# The reason for a skip is the case's last log line (the driver shows it).
netns_skip() {
	echo "skip: $*"
	exit 77
}

# netns_usable: can this machine make namespaces? Exits 77 if not.
netns_usable() {
	[ "$(id -u)" = 0 ] || netns_skip "network namespaces need root (uid $(id -u))"
	command -v ip >/dev/null || netns_skip "no 'ip' command (Debian package iproute2)"
	command -v unshare >/dev/null || netns_skip "no 'unshare' command (Debian package util-linux)"
	local probe="ftn${NETNS_ID}probe" err
	if ! err=$(ip netns add "$probe" 2>&1); then
		netns_skip "'ip netns add' fails here: ${err//$'\n'/ }"
	fi
	ip netns del "$probe" 2>/dev/null || true
	if ! err=$(ip link add "ftb${NETNS_ID}p" type bridge 2>&1); then
		netns_skip "cannot create a bridge: ${err//$'\n'/ }"
	fi
	ip link del "ftb${NETNS_ID}p" 2>/dev/null || true
}

# A subnet 10.77.R.0/24 that no interface or route of this machine uses.
netns_free_subnet() {
	local r i
	for i in $(seq 0 249); do
		r=$(((NETNS_ID + i) % 250 + 1))
		ip -4 -o addr show | grep -qF " 10.77.$r." && continue
		[ -z "$(ip -4 route show to match "10.77.$r.1" | grep -v '^default')" ] || continue
		echo "$r"
		return 0
	done
	return 1
}

# netns_reachable NS ADDR: a TCP connection from namespace NS to ADDR's
# port 9 (discard, closed) is refused, so ADDR answers (there is no ping
# in a minimal Debian).
netns_reachable() {
	local err
	err=$(ip netns exec "$1" timeout 2 bash -c "exec 3<>/dev/tcp/$2/9" 2>&1) && return 0
	case $err in *refused*) return 0 ;; esac
	return 1
}

# netns_setup N: N hosts. Installs the cleanup trap first.
netns_setup() {
	local n=$1 k ns veth addr r
	netns_usable
	trap netns_teardown EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	NETNS_BRIDGE="ftb${NETNS_ID}"
	# Choosing the subnet and claiming it with the bridge's address is one
	# step under a lock, so that two concurrent cases take two subnets.
	exec {lockfd}>/run/ftshim-netns.lock
	flock -w 30 "$lockfd" || netns_skip "cannot lock /run/ftshim-netns.lock"
	r=$(netns_free_subnet) || { exec {lockfd}>&-; netns_skip "every subnet 10.77.1-250.0/24 is in use here"; }
	NETNS_SUBNET="10.77.$r.0/24"
	NETNS_BRIDGE_ADDR="10.77.$r.1"
	ip link add "$NETNS_BRIDGE" type bridge || { exec {lockfd}>&-; fail "ip link add $NETNS_BRIDGE type bridge"; }
	NETNS_CREATED+=("link:$NETNS_BRIDGE")
	ip addr add "$NETNS_BRIDGE_ADDR/24" dev "$NETNS_BRIDGE"
	exec {lockfd}>&-
	ip link set "$NETNS_BRIDGE" up
	NETNS_MAP=
	for k in $(seq 1 "$n"); do
		ns="ftn${NETNS_ID}h$k"
		veth="ftv${NETNS_ID}h$k"
		addr="10.77.$r.$((10 + k))"
		ip netns add "$ns" || fail "ip netns add $ns"
		NETNS_CREATED+=("ns:$ns")
		ip link add "$veth" type veth peer name eth0 netns "$ns" || fail "ip link add $veth"
		NETNS_CREATED+=("link:$veth")
		ip link set "$veth" master "$NETNS_BRIDGE" up
		ip -n "$ns" addr add "$addr/24" dev eth0
		ip -n "$ns" link set eth0 up
		ip -n "$ns" link set lo up
		NETNS_NAMES+=("$ns")
		NETNS_HOSTS+=("$addr")
		NETNS_HOSTNAMES+=("h$k")
		NETNS_VETHS+=("$veth")
		NETNS_MAP="$NETNS_MAP${NETNS_MAP:+ }$addr=$ns=h$k"
	done
	export NETNS_MAP
	# The bridge must forward before the hosts can talk: wait until every
	# host answers the first (the bridge ports come up in
	# forwarding state at once, with STP off, the default).
	for k in $(seq 2 "$n"); do
		local ok=
		for _ in $(seq 1 50); do
			if netns_reachable "${NETNS_NAMES[0]}" "${NETNS_HOSTS[k - 1]}"; then
				ok=1
				break
			fi
			sleep 0.1
		done
		[ -n "$ok" ] || fail "host h1 cannot reach h$k (${NETNS_HOSTS[k - 1]}) through $NETNS_BRIDGE"
	done
	note "hosts: $NETNS_MAP; bridge $NETNS_BRIDGE at $NETNS_BRIDGE_ADDR/24"
}

# netns_teardown: kill every process in our namespaces, delete them, the
# veths and the bridge. Idempotent; runs from the EXIT trap too.
netns_teardown() {
	local item ns pids i
	for item in "${NETNS_CREATED[@]}"; do
		[ "${item%%:*}" = ns ] || continue
		ns=${item#ns:}
		# Twice: a process may fork while we kill (a supervisor's child).
		for i in 1 2 3; do
			pids=$(ip netns pids "$ns" 2>/dev/null || true)
			[ -n "$pids" ] || break
			kill -9 $pids 2>/dev/null || true
			sleep 0.1
		done
	done
	for item in "${NETNS_CREATED[@]}"; do
		case $item in
		ns:*) ip netns del "${item#ns:}" 2>/dev/null || true ;;
		esac
	done
	for item in "${NETNS_CREATED[@]}"; do
		case $item in
		link:*) ip link del "${item#link:}" 2>/dev/null || true ;;
		esac
	done
	NETNS_CREATED=()
}

# netns_expect_no_processes: no process is left in our namespaces (the
# launcher's daemons and the ranks all ended by themselves); waits up to
# 3 s for stragglers.
netns_expect_no_processes() {
	local ns pids left= i pid
	for i in $(seq 1 30); do
		left=
		for ns in "${NETNS_NAMES[@]}"; do
			pids=$(ip netns pids "$ns" 2>/dev/null || true)
			[ -z "$pids" ] || left="$left $ns:$(echo $pids | tr ' ' ,)"
		done
		[ -n "$left" ] || return 0
		sleep 0.1
	done
	for ns in "${NETNS_NAMES[@]}"; do
		for pid in $(ip netns pids "$ns" 2>/dev/null || true); do
			echo "$ns: $(ps -o pid=,args= -p "$pid")" >&2
		done
	done
	fail "processes left in the hosts' namespaces:$left"
}

# netns_expect_clean: nothing of ours is left (after netns_teardown).
netns_expect_clean() {
	local left
	left=$(ip netns list | grep -E "^ftn${NETNS_ID}h[0-9]+" || true)
	[ -z "$left" ] || fail "namespaces left: $left"
	left=$(ip -o link show | grep -E ": (ftv${NETNS_ID}h[0-9]+|ftb${NETNS_ID})[@:]" || true)
	[ -z "$left" ] || fail "interfaces left: $left"
	left=$(ip -4 -o addr show | grep -F " ${NETNS_BRIDGE_ADDR:-none}/" || true)
	[ -z "$left" ] || fail "address left: $left"
}

# launch_multihost_cmd shim|plain PER_HOST [NAME=VALUE...] -- PROG ARGS:
# the launcher's command line for PER_HOST ranks on each of the hosts, in
# LAUNCH. Ranks are placed by host: 0..PER_HOST-1 on h1, and so on.
launch_multihost_cmd() {
	local mode=$1 per=$2 np k h hostfile
	shift 2
	local -a env=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	[ "$mode" = shim ] && env=("LD_PRELOAD=$MPITEST_SHIM" "${env[@]}")
	np=$((per * ${#NETNS_HOSTS[@]}))
	case $MPITEST_FLAVOUR in
	mpich)
		h=
		for k in "${NETNS_HOSTS[@]}"; do h="$h${h:+,}$k:$per"; done
		# -iface: the proxies in the namespaces connect back to mpiexec
		# at the bridge's address (not at this machine's host name).
		LAUNCH=("$MPITEST_MPIEXEC" -disable-auto-cleanup -launcher rsh -launcher-exec "$NETNS_AGENT"
			-iface "$NETNS_BRIDGE" -hosts "$h" -n "$np")
		for kv in "${env[@]}"; do LAUNCH+=(-genv "${kv%%=*}" "${kv#*=}"); done
		;;
	openmpi)
		# Every orted is started from mpirun (no tree spawn): an orted
		# inside a namespace has no NETNS_MAP (the agent clears the
		# environment, as ssh would). oob/btl_tcp_if_include: the daemons
		# reach mpirun, and the ranks each other, on the bridge's subnet
		# only (mpirun's other interfaces are unreachable from the hosts).
		hostfile="$MPITEST_WORKDIR/hostfile"
		: >"$hostfile"
		for k in "${NETNS_HOSTS[@]}"; do echo "$k slots=$per" >>"$hostfile"; done
		LAUNCH=("$MPITEST_MPIEXEC" --enable-recovery --oversubscribe --allow-run-as-root
			--hostfile "$hostfile" --map-by slot -n "$np"
			--mca plm_rsh_agent "$NETNS_AGENT" --mca plm_rsh_no_tree_spawn 1
			--mca oob_tcp_if_include "$NETNS_SUBNET" --mca btl_tcp_if_include "$NETNS_SUBNET")
		for kv in "${env[@]}"; do LAUNCH+=(-x "$kv"); done
		;;
	*)
		fail "unknown MPI flavour '$MPITEST_FLAVOUR'"
		;;
	esac
	LAUNCH+=("$@")
}

# start_multihost_job: as run_multihost_job, in the background; lib.sh's
# wait_job collects it ($JOB_PID, $JOB_T0).
start_multihost_job() {
	launch_multihost_cmd "$@"
	start_launch "NETNS_MAP='$NETNS_MAP'"
}

# wait_job_or_ranks PROG SECONDS: until the background job ends, or its
# output says ALL CHECKS PASSED and no process runs PROG any more (the
# ranks' argv[0]; the launcher's own command line does not start with
# it). Returns 1 after SECONDS.
wait_job_or_ranks() {
	local i
	for i in $(seq 1 $(($2 * 10))); do
		kill -0 "$JOB_PID" 2>/dev/null || return 0
		if grep -qx 'ALL CHECKS PASSED' "$OUT" && ! pgrep -f "^$1( |\$)" >/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# run_multihost_job shim|plain PER_HOST [NAME=VALUE...] -- PROG ARGS...:
# as run_job, across the hosts.
run_multihost_job() {
	launch_multihost_cmd "$@"
	run_launch "NETNS_MAP='$NETNS_MAP'"
}
