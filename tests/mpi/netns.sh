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
NETNS_SPLIT=()
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

# netns_wait_reachable K: wait up to 5 s until h1 reaches hK; 1 if not.
netns_wait_reachable() {
	local i
	for i in $(seq 1 50); do
		netns_reachable "${NETNS_NAMES[0]}" "${NETNS_HOSTS[$1 - 1]}" && return 0
		sleep 0.1
	done
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
	# Open MPI's session directories of these host names, left by an
	# earlier case whose processes were killed (netns_teardown): a job of
	# the same job family would start in them (Slurm numbers jobs from 1
	# in every cluster these cases make).
	ompi_session_dirs_remove "$n"
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
		netns_wait_reachable "$k" || fail "host h1 cannot reach h$k (${NETNS_HOSTS[k - 1]}) through $NETNS_BRIDGE"
	done
	note "hosts: $NETNS_MAP; bridge $NETNS_BRIDGE at $NETNS_BRIDGE_ADDR/24"
}

# netns_link_down K / netns_link_up K: host hK's cable, pulled and put
# back (its veth in the root namespace goes down/up): the host and its
# ranks stay up but nothing reaches them, nor leaves them; packets in
# flight are lost, and TCP resends them once the link is back.
netns_link_down() {
	ip link set "${NETNS_VETHS[$1 - 1]}" down
}
netns_link_up() {
	ip link set "${NETNS_VETHS[$1 - 1]}" up
}

# netns_slow_link K MS: host hK's cable gets MS ms of delay each way. No
# netem here (this machine's kernel has no sch_netem), so a namespace of
# its own is put in the middle of the cable: hK's veth moves into it, a
# new veth joins it to the bridge, and netns-delay copies the frames from
# one to the other MS ms late. Removed with the rest by netns_teardown.
netns_slow_link() {
	local k=$1 ms=$2 mid="ftn${NETNS_ID}d$1" up="ftw${NETNS_ID}h$1"
	ip netns add "$mid" || fail "ip netns add $mid"
	NETNS_CREATED+=("ns:$mid")
	ip link set "${NETNS_VETHS[k - 1]}" nomaster
	ip link set "${NETNS_VETHS[k - 1]}" netns "$mid"
	ip link add "$up" type veth peer name up0 netns "$mid" || fail "ip link add $up"
	NETNS_CREATED+=("link:$up")
	ip link set "$up" master "$NETNS_BRIDGE" up
	ip -n "$mid" link set "${NETNS_VETHS[k - 1]}" up
	ip -n "$mid" link set up0 up
	ip netns exec "$mid" timeout -k 5 $((MPITEST_TIMEOUT * 3)) python3 "$MPITEST_SRCDIR/netns-delay" \
		"${NETNS_VETHS[k - 1]}" up0 "$ms" 2>>"$MPITEST_WORKDIR/netns-delay.log" &
	disown $! # netns_teardown kills it; no "Killed" line from bash then
	netns_wait_reachable "$k" || fail "h1 cannot reach h$k through the slow link: $(cat "$MPITEST_WORKDIR/netns-delay.log")"
}

# netns_split K...: a partition between hosts: the hosts listed and the
# others no longer reach each other, while all still reach the root
# namespace (the launcher), as on a cluster whose launcher talks to the
# hosts on a management network of its own. Each host's neighbour
# entries for the hosts across the cut point to a MAC address that no one
# has: frames are sent and silently lost, and no error tells anyone
# (TCP just resends). netns_heal removes those entries.
NETNS_NOWHERE_MAC=02:00:00:00:00:00
netns_split() {
	local k j
	NETNS_SPLIT=("$@")
	for k in $(seq 1 ${#NETNS_NAMES[@]}); do
		for j in $(seq 1 ${#NETNS_NAMES[@]}); do
			# Only pairs with one host on each side.
			[ "$(netns_in_split "$k")" != "$(netns_in_split "$j")" ] || continue
			ip -n "${NETNS_NAMES[k - 1]}" neigh replace "${NETNS_HOSTS[j - 1]}" \
				lladdr "$NETNS_NOWHERE_MAC" nud permanent dev eth0
		done
	done
}
# netns_in_split K: 1 if host hK is one of those netns_split listed, else 0.
netns_in_split() {
	case " ${NETNS_SPLIT[*]} " in *" $1 "*) echo 1 ;; *) echo 0 ;; esac
}
netns_heal() {
	local k j
	for k in $(seq 1 ${#NETNS_NAMES[@]}); do
		for j in $(seq 1 ${#NETNS_NAMES[@]}); do
			ip -n "${NETNS_NAMES[k - 1]}" neigh show "${NETNS_HOSTS[j - 1]}" dev eth0 |
				grep -qi "$NETNS_NOWHERE_MAC" || continue
			ip -n "${NETNS_NAMES[k - 1]}" neigh del "${NETNS_HOSTS[j - 1]}" dev eth0
		done
	done
	NETNS_SPLIT=()
}

# ompi_session_dirs_remove N: Open MPI's session directories of hosts h1..hN.
ompi_session_dirs_remove() {
	local k
	for k in $(seq 1 "$1"); do
		rm -rf "${TMPDIR:-/tmp}/ompi.h$k".*
	done
}

# netns_teardown: kill every process in our namespaces, delete them, the
# veths and the bridge, and what Open MPI left of them in /tmp.
# Idempotent; runs from the EXIT trap too.
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
	[ "${#NETNS_HOSTNAMES[@]}" = 0 ] || ompi_session_dirs_remove "${#NETNS_HOSTNAMES[@]}"
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
	left=$(ip netns list | grep -E "^ftn${NETNS_ID}[hd][0-9]+" || true)
	[ -z "$left" ] || fail "namespaces left: $left"
	left=$(ip -o link show | grep -E ": (ft[vw]${NETNS_ID}h[0-9]+|ftb${NETNS_ID})[@:]" || true)
	[ -z "$left" ] || fail "interfaces left: $left"
	left=$(ip -4 -o addr show | grep -F " ${NETNS_BRIDGE_ADDR:-none}/" || true)
	[ -z "$left" ] || fail "address left: $left"
}

# launch_multihost_cmd shim|plain PER_HOST [NAME=VALUE...] -- PROG ARGS:
# the launcher's command line for PER_HOST ranks on each of the hosts, in
# LAUNCH. Ranks are placed by host: 0..PER_HOST-1 on h1, and so on.
launch_multihost_cmd() {
	local per=$2 np k h hostfile
	split_launch_args "$1" "${@:3}"
	np=$((per * ${#NETNS_HOSTS[@]}))
	case $MPITEST_FLAVOUR in
	mpich)
		h=
		for k in "${NETNS_HOSTS[@]}"; do h="$h${h:+,}$k:$per"; done
		# -iface: the proxies in the namespaces connect back to mpiexec
		# at the bridge's address (not at this machine's host name).
		# -print-all-exitcodes: each rank's raw wait status, by host, on
		# stdout (hydra_exit_codes reads them).
		LAUNCH=("$MPITEST_MPIEXEC" -disable-auto-cleanup -print-all-exitcodes -launcher rsh
			-launcher-exec "$NETNS_AGENT" -iface "$NETNS_BRIDGE" -hosts "$h" -n "$np")
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
		;;
	*)
		fail "unknown MPI flavour '$MPITEST_FLAVOUR'"
		;;
	esac
	finish_launch
}

# hydra_exit_codes: the raw wait status of every rank of the last Hydra
# job, in rank order (hosts in order, ranks by host), one per line.
hydra_exit_codes() {
	sed -n '/Exit codes: /,$p' "$OUT" | sed -n 's/.*\[[0-9.]*\] \([0-9,]*\)$/\1/p' | tr ',' '\n'
}

# start_multihost_job: as run_multihost_job, in the background; lib.sh's
# wait_job collects it ($JOB_PID, $JOB_T0).
start_multihost_job() {
	LAUNCHER_EXIT_AT=
	launch_multihost_cmd "$@"
	start_launch "NETNS_MAP='$NETNS_MAP'"
}

# wait_job_or_ranks PROG SECONDS [DONE]: until the background job ends,
# or its output matches DONE (an extended regex; ALL CHECKS PASSED if not
# given) and no process runs PROG any more (the ranks' argv[0]; the
# launcher's own command line does not start with it). Returns 1 after
# SECONDS. Sets LAUNCHER_EXIT_AT (see end_multihost_job) if the launcher
# ended.
wait_job_or_ranks() {
	local i done=${3:-ALL CHECKS PASSED}
	for i in $(seq 1 $(($2 * 20))); do
		if ! kill -0 "$JOB_PID" 2>/dev/null; then
			LAUNCHER_EXIT_AT=$(date +%s.%N)
			return 0
		fi
		if grep -qE "$done" "$OUT" && ! pgrep -f "^$1( |\$)" >/dev/null; then
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# end_multihost_job LABEL: once the ranks of a background job have ended,
# the launcher gets 5 s to end too (Open MPI's takes about 2 s after a
# crash: see src/pmix.h); then wait_job. LAUNCHER_EXIT_AT: when it was
# seen gone (Unix seconds, within 10 ms; within 50 ms if
# wait_job_or_ranks saw it).
end_multihost_job() {
	local t0
	t0=$(date +%s%N)
	for _ in $(seq 1 500); do
		kill -0 "$JOB_PID" 2>/dev/null || break
		sleep 0.01
	done
	kill -0 "$JOB_PID" 2>/dev/null && { tail -n 20 "$ERR" >&2; fail "$1: $MPITEST_MPIEXEC did not exit 5 s after its ranks"; }
	[ -n "${LAUNCHER_EXIT_AT:-}" ] || LAUNCHER_EXIT_AT=$(date +%s.%N)
	note "$1: $MPITEST_MPIEXEC ended $((($(date +%s%N) - t0) / 1000000)) ms after its ranks"
	wait_job
}

# run_multihost_job shim|plain PER_HOST [NAME=VALUE...] -- PROG ARGS...:
# as run_job, across the hosts.
run_multihost_job() {
	launch_multihost_cmd "$@"
	run_launch "NETNS_MAP='$NETNS_MAP'"
}
