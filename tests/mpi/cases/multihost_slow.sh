# Several hosts, one of them slow (issue 8): 4 network-namespace hosts ×
# 3 ranks (netns.sh), h4's cable delayed by 200 ms each way (netns-delay:
# this machine's kernel has no netem), default heartbeat settings. A job
# that runs ULFM allreduces and agreements across every host for about 5
# s (tests/mpi/progs/partition.c, nobody cut off) must see no failure at
# all: the heartbeats from h4 arrive late but as often as ever. Skipped
# (exit 77) where namespaces cannot be made.
. "$MPITEST_SRCDIR/netns.sh"
hosts=4 per=3
np=$((hosts * per))
MPITEST_TIMEOUT=60
netns_setup $hosts
netns_slow_link 4 200
# The delay is there: a TCP connection from h1 to h4 (refused: a round
# trip) takes at least 400 ms, and to h2 far less.
rtt_ms() {
	local t=$(date +%s%N)
	netns_reachable "${NETNS_NAMES[0]}" "${NETNS_HOSTS[$1 - 1]}" || fail "h1 cannot reach h$1"
	echo $((($(date +%s%N) - t) / 1000000))
}
slow=$(rtt_ms 4) fast=$(rtt_ms 2)
[ "$slow" -ge 400 ] && [ "$fast" -lt 200 ] || fail "round trips h1-h4 $slow ms, h1-h2 $fast ms: the slow link is not slow"
rundir=$MPITEST_WORKDIR/run
prog=$(build partition)

t0=$(date +%s%N)
run_multihost_job shim $per "FTSHIM_RUNDIR=$rundir" FTSHIM_LOG=debug -- "$prog" --expect "" --seconds 5
expect_rc 0
expect_all_checks
expect_err_no_match "info: rank [0-9]+ failed: "
expect_err_no_match "ftshim\[[0-9]+\] \+[0-9.]+ (error|warn): "
expect_err_match 'ftshim\[0\] \+[0-9.]+ debug: ftshim: no failures; 12 of 12 ranks finished; '
note "h4 200 ms each way (round trip h1-h4 $slow ms, h1-h2 $fast ms), default heartbeats (period 100 ms, timeout 1 s): no failure declared; job $((($(date +%s%N) - t0) / 1000000)) ms"

netns_expect_no_processes
expect_no_leftovers partition
netns_teardown
netns_expect_clean
