# Several hosts, cut apart (issue 8): 4 network-namespace hosts × 3 ranks
# (netns.sh) run tests/mpi/progs/partition.c, a ULFM loop of allreduces
# that revokes and shrinks on failure, with the default heartbeat
# settings. (a) Host h1's cable is pulled (its veth goes down): its ranks
# 0-2 are alive but unreachable, and hold rank 0. (b) An even split:
# h1+h2 (ranks 0-5) and h3+h4 (ranks 6-11) can no longer reach each other,
# though all still reach the launcher (netns_split). Each time the side with the strict majority, or
# the half holding the lowest rank, must declare exactly the other side
# failed by heartbeat timeout, shrink and finish its checks; every rank
# of the other side must leave with one clear line (fail-stop: a lost
# quorum round, or "declared failed by the others" when it hears the
# winners again) and declare no one; the link is healed while the
# winners still run, and nobody comes back. Nothing is left afterwards.
# Skipped (exit 77) where namespaces cannot be made.
. "$MPITEST_SRCDIR/netns.sh"
hosts=4 per=3
np=$((hosts * per))
MPITEST_TIMEOUT=45
netns_setup $hosts
rundir=$MPITEST_WORKDIR/run
prog=$(build partition)

# ms since $1 (date +%s%N)
ms_since() {
	echo $((($(date +%s%N) - $1) / 1000000))
}

# partition_run LABEL CUT HEAL VICTIMS: start the job; once every rank is
# ready, run CUT; once every survivor knows every victim failed, run
# HEAL; then check everything.
partition_run() {
	local label=$1 cut=$2 heal=$3 victims=$4 rest rest_re v i n t_cut t_known npart=0 nexcl=0
	rest=$(survivors $np "$victims")
	rest_re=${rest//,/|}
	start_multihost_job shim $per "FTSHIM_RUNDIR=$rundir" -- "$prog" --expect "$victims" --seconds 8
	for i in $(seq 1 150); do
		[ "$(grep -c '^rank [0-9]* ready$' "$OUT" || true)" = "$np" ] && break
		kill -0 "$JOB_PID" 2>/dev/null || break
		sleep 0.1
	done
	[ "$(grep -c '^rank [0-9]* ready$' "$OUT" || true)" = "$np" ] ||
		{ tail -n 20 "$ERR" >&2; fail "$label: the ranks were not all ready in 15 s"; }
	sleep 0.3
	t_cut=$(date +%s%N)
	$cut
	# Until every survivor has logged every victim's failure (one line
	# each: the count is survivors x victims).
	local want=$(($(echo "$victims" | tr , '\n' | wc -l) * $(echo "$rest" | tr , '\n' | wc -l)))
	for i in $(seq 1 100); do
		[ "$(grep -cE "ftshim\[($rest_re)\] \+[0-9.]+ info: rank (${victims//,/|}) failed: " "$ERR" || true)" -ge "$want" ] && break
		sleep 0.1
	done
	t_known=$(ms_since "$t_cut")
	$heal
	wait_job_or_ranks "$prog" 25 || { tail -n 20 "$ERR" >&2; fail "$label: the job did not end in 25 s"; }
	end_multihost_job "$label"
	# Hydra ORs its ranks' statuses: 74 (lost quorum) and 75 (excluded)
	# give 74 or 75.
	if [ "$MPITEST_FLAVOUR" = mpich ]; then
		case $RC in 74 | 75) ;; *) expect_rc "74 or 75" ;; esac
	fi

	expect_all_checks
	grep -q "still runs" "$OUT" && { cat "$OUT" >&2; fail "$label: a cut-off rank still ran"; }
	for v in ${victims//,/ }; do
		# The winners declared it, by heartbeat timeout, once each.
		expect_detected "$v" "$rest"
		grep -qE "ftshim\[($rest_re)\] \+[0-9.]+ info: rank $v failed: heartbeat timeout, seen by this rank" "$ERR" ||
			fail "$label: no survivor saw rank $v's heartbeat time out"
		# It left with one line, one of the two fail-stop messages.
		n=$(grep -cE "ftshim\[$v\] \+[0-9.]+ error: (network partition: |this rank was declared failed by the others)" "$ERR" || true)
		[ "$n" = 1 ] || { grep -E "ftshim\[$v\]" "$ERR" | tail -n 5 >&2; fail "$label: rank $v logged $n fail-stop lines, expected 1"; }
		if grep -qE "ftshim\[$v\] \+[0-9.]+ error: network partition: " "$ERR"; then
			npart=$((npart + 1))
		else
			nexcl=$((nexcl + 1))
		fi
		# It declared none of the winners failed: no second job. (It
		# may see a rank of its own side leave before it.)
		expect_err_no_match "ftshim\[$v\] \+[0-9.]+ info: rank ($rest_re) failed: "
	done
	# No survivor was declared failed, left, or was told it lost.
	expect_err_no_match "ftshim\[[0-9]+\] \+[0-9.]+ info: rank ($rest_re) failed: "
	expect_err_no_match "ftshim\[($rest_re)\] \+[0-9.]+ error: "
	note "$label: every survivor knew $t_known ms after the cut (timeout 1 s); the cut-off ranks left:" \
		"$npart on a lost quorum round, $nexcl excluded after the heal; job $(ms_since "$JOB_T0_NS") ms"
}

cut_h1() { netns_link_down 1; }
heal_h1() { netns_link_up 1; }
JOB_T0_NS=$(date +%s%N)
partition_run "a (h1 unplugged: 9 ranks against 3 holding rank 0)" cut_h1 heal_h1 0,1,2

split_h34() { netns_split 3 4; }
JOB_T0_NS=$(date +%s%N)
partition_run "b (even split h1+h2 | h3+h4: the half with rank 0 wins)" split_h34 netns_heal 6,7,8,9,10,11

netns_expect_no_processes
expect_no_leftovers partition
netns_teardown
netns_expect_clean
