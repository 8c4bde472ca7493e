# examples/ft_ring.c, the fault-tolerant ring of Hursey and Graham: with no
# failure, a non-root rank killed, the root killed, the root killed as it
# starts the last iteration (the termination path), several killed at
# different iterations, two ranks chosen at random with a seed, and ranks
# killed at random times. Each time the root that finishes must report
# every iteration completed exactly once and exactly the ranks lost, and
# every other survivor must exit without complaint.
#
# Kills use the program's inject point "iteration:N" (the Nth iteration
# the rank handles), so where a rank dies does not depend on load; only
# the last case uses times.
prog=$(build example/ft_ring)
iters=50

# ring NP INJECT LOST ROOT RECOVERIES: run and check. LOST: the world
# ranks that must be reported lost ("none", or 0,2); ROOT: the world rank
# of the root that finishes; RECOVERIES: how many repairs it must report
# (a number, or "any").
ring() {
	local np=$1 inject=$2 lost=$3 root=$4 recov=$5
	local what="${inject:-no failure} ($np ranks)"
	local -a env=("FTSHIM_RUNDIR=$MPITEST_WORKDIR/run")
	[ -z "$inject" ] || env+=("FTSHIM_INJECT=$inject")
	run_job shim "$np" "${env[@]}" -- "$prog" "$iters"
	if [ "$lost" = none ]; then expect_rc 0; else expect_killed_rc; fi
	local nlost=0
	[ "$lost" = none ] || nlost=$(echo "$lost" | tr , '\n' | wc -l)
	local re="ft_ring: $iters iterations completed, each once; survivors $((np - nlost)) of $np; lost ranks $lost; root world rank $root; "
	[ "$recov" = any ] && re="$re[0-9]+" || re="$re$recov"
	re="$re recover(y|ies), [0-9]+ duplicates? dropped"
	grep -qxE "$re" "$OUT" || {
		cat "$OUT" >&2
		grep -v ' info: ' "$ERR" | tail -n 20 >&2
		fail "$what: not the expected result line (lost $lost, root $root)"
	}
	[ "$(grep -c '^ft_ring: ' "$OUT")" = 1 ] || { cat "$OUT" >&2; fail "$what: more than one result line"; }
	if grep -E '^ft_ring\[[0-9]+\]: ([^r]|r[^e])' "$ERR" >&2 ||
		grep -E 'ftshim\[[0-9]+\] \+[0-9.]+ error: ' "$ERR" >&2; then
		fail "$what: errors reported"
	fi
	note "$what: $(cat "$OUT")"
}

ring 5 "" none 0 0
# A non-root rank, mid-run.
ring 5 "rank=2 at=point:iteration:20" 2 0 1
# The root, mid-run: rank 1 becomes the root.
ring 5 "rank=0 at=point:iteration:10" 0 1 1
# The root as it starts the last iteration: the survivors go on, the new
# root sees the last iteration come back and finishes.
ring 4 "rank=0 at=point:iteration:$((iters - 1))" 0 1 1
# A non-root rank passing on the last iteration.
ring 4 "rank=3 at=point:iteration:$((iters - 1))" 3 0 1
# Several, the root among them, at different iterations; and two
# neighbours at the same iteration.
ring 6 "rank=0 at=point:iteration:5; rank=3 at=point:iteration:15; rank=1 at=point:iteration:30" 0,1,3 2 any
ring 6 "rank=2-3 at=point:iteration:25" 2,3 0 any

# Two ranks chosen with a seed, at the 12th iteration: the expected list
# is the plan rank 0 logs (it may include rank 0, the root).
inject="rank=random:2 at=point:iteration:12 seed=5"
run_job shim 6 "FTSHIM_RUNDIR=$MPITEST_WORKDIR/run" "FTSHIM_INJECT=$inject" -- "$prog" "$iters"
plan=$(sed -n "s/.* info: FTSHIM_INJECT \"$inject\": SIGKILL for ranks \([0-9,]*\)$/\1/p" "$ERR" | head -n 1)
plan=$(echo "$plan" | tr , '\n' | sort -n | paste -sd, -)
[ -n "$plan" ] || { tail -n 20 "$ERR" >&2; fail "rank 0 did not log the plan of $inject"; }
root=$(survivors 6 "$plan" | cut -d, -f1)
ring 6 "$inject" "$plan" "$root" any

# Random times: two ranks of 6, exponential with mean 0.3 s, seeded, so
# they may die anywhere in the ring (or after it finished). Whatever
# died must be exactly what the root reports lost.
if instrumented; then
	note "random times: skipped in a $MPITEST_SANITIZER-sanitized build (they assume an uninstrumented build's speed)"
else
	inject="rank=random:2 at=exp:300ms seed=11"
	run_job shim 6 "FTSHIM_RUNDIR=$MPITEST_WORKDIR/run" "FTSHIM_INJECT=$inject" -- "$prog" 200
	# The second death can land inside the recovery's shrink, in the
	# MPI's own communicator creation: the documented window (BUGS in
	# MPIX_Comm_shrink(3)), where the survivors leave (status 76) rather
	# than hang. That outcome is accepted, and noted.
	if ! grep -q "^ft_ring: 200 iterations" "$OUT" &&
		grep -qE "error: stuck in the MPI library's MPIX_Comm_shrink for [0-9.]+ s after rank [0-9]+, a member, failed: .*exit status 76" "$ERR"; then
		note "$inject: the second death fell inside the recovery's MPIX_Comm_shrink: the survivors left with status 76 (the documented window)"
		expect_no_leftovers ft_ring
		exit 0
	fi
	grep -qE "^ft_ring: 200 iterations completed, each once; survivors [0-9] of 6; lost ranks [0-9,none]*; " "$OUT" || {
		cat "$OUT" >&2
		grep -v ' info: ' "$ERR" | tail -n 20 >&2
		fail "$inject: the ring did not complete every iteration once"
	}
	lost=$(sed -n 's/.*lost ranks \([0-9,none]*\);.*/\1/p' "$OUT")
	killed=$(sed -n 's/^.*ftshim\[\([0-9]*\)\] .* info: injecting .*/\1/p' "$ERR" | sort -n | paste -sd, -)
	[ "$lost" = "${killed:-none}" ] || { cat "$OUT" >&2; fail "$inject: ranks ${killed:-none} were killed, the root reports $lost lost"; }
	note "$inject: $(cat "$OUT")"
fi

expect_no_leftovers ft_ring
