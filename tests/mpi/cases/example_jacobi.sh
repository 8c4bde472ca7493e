# examples/jacobi.c, a heat solver that keeps its checkpoints in a
# neighbour's memory: every run that loses ranks must end with the answer
# of a failure-free run. The program computes each cell from the same
# doubles whatever the blocks and sums the checksum in cell order, so the
# answer is exact; the test accepts a relative difference of 1e-12 in the
# checksum (the program's stated tolerance) and wants the residual equal.
#
# Cases: no failure with and without the shim (the reference); one rank
# killed mid-run; rank 0 (the root of the final gather); two at different
# iterations; a failure during the recovery (a rank killed right after
# its first MPIX_Comm_shrink returns, and another during the agreement);
# a rank and its buddy at once before the first checkpoint (recoverable)
# and after it (the program must say it cannot recover, exit 3, and
# leave nothing running); and ranks killed at random times.
prog=$(build example/jacobi)

# jacobi MODE NP ITERATIONS [INJECT]: run; sets RESULT to the result line.
jacobi() {
	local -a env=("FTSHIM_RUNDIR=$MPITEST_WORKDIR/run")
	[ -z "${4:-}" ] || env+=("FTSHIM_INJECT=$4")
	run_job "$1" "$2" "${env[@]}" -- "$prog" "$3"
	RESULT=$(grep '^jacobi: [0-9]* iterations, ' "$OUT" || true)
}

# same_answer WHAT REFERENCE: the result line's checksum within 1e-12
# (relative) of REFERENCE's, and the residual equal.
same_answer() {
	local c r c0 r0
	c=$(echo "$RESULT" | sed -n 's/.*checksum \([^,]*\), residual \([^;]*\);.*/\1/p')
	r=$(echo "$RESULT" | sed -n 's/.*checksum \([^,]*\), residual \([^;]*\);.*/\2/p')
	c0=$(echo "$2" | sed -n 's/.*checksum \([^,]*\), residual \([^;]*\);.*/\1/p')
	r0=$(echo "$2" | sed -n 's/.*checksum \([^,]*\), residual \([^;]*\);.*/\2/p')
	[ -n "$c" ] && [ -n "$r" ] || { cat "$OUT" >&2; grep -v ' info: ' "$ERR" | tail -n 20 >&2; fail "$1: no result line"; }
	awk -v a="$c" -v b="$c0" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-12 * (b < 0 ? -b : b)) }' ||
		fail "$1: checksum $c, a failure-free run gives $c0"
	[ "$r" = "$r0" ] || fail "$1: residual $r, a failure-free run gives $r0"
}

# recovered NP ITERATIONS INJECT LOST REFERENCE: run with INJECT; the
# survivors must report LOST and the reference answer.
recovered() {
	local what="$3 ($1 ranks)"
	jacobi shim "$1" "$2" "$3"
	expect_killed_rc
	same_answer "$what" "$5"
	local nlost
	nlost=$(echo "$4" | tr , '\n' | wc -l)
	echo "$RESULT" | grep -qF "; survivors $(($1 - nlost)) of $1; lost ranks $4" || {
		cat "$OUT" >&2
		fail "$what: lost ranks reported are not $4"
	}
	grep -q '^jacobi: recovery: lost ranks ' "$OUT" || fail "$what: no recovery line"
	expect_err_no_match 'ftshim\[[0-9]+\] \+[0-9.]+ error: '
	note "$what: $(grep '^jacobi: recovery' "$OUT" | tr '\n' ' ')"
}

# The reference: failure-free, with the shim on 6 ranks, and without it
# on 3 (the answer does not depend on the number of ranks).
jacobi shim 6 2000
expect_rc 0
ref=$RESULT
[ -n "$ref" ] || { cat "$OUT" "$ERR" >&2; fail "no result from the failure-free run"; }
note "reference: $ref"
jacobi plain 3 2000
expect_rc 0
same_answer "without the shim, 3 ranks" "$ref"

recovered 6 2000 "rank=2 at=point:iteration:250" 2 "$ref"
recovered 6 2000 "rank=0 at=point:iteration:730" 0 "$ref"
recovered 6 2000 "rank=1 at=point:iteration:120; rank=4 at=point:iteration:1510" 1,4 "$ref"
# During the recovery: rank 4 dies as its second shrink (the first is
# the program's start) returns, and, in another run, rank 5 as its first
# agreement returns. And rank 4 as the start's shrink returns, before it
# did any work: the others find out in the first halo exchange.
recovered 6 2000 "rank=2 at=point:iteration:250; rank=4 at=call:MPIX_Comm_shrink:2" 2,4 "$ref"
recovered 6 2000 "rank=1 at=point:iteration:640; rank=5 at=call:MPIX_Comm_agree:1" 1,5 "$ref"
recovered 6 2000 "rank=4 at=call:MPIX_Comm_shrink:1; rank=2 at=point:iteration:250" 2,4 "$ref"
# A rank and its buddy (the next rank) at once: before the first
# checkpoint, the initial state serves, and the run recovers...
recovered 6 2000 "rank=2-3 at=point:iteration:50" 2,3 "$ref"
# ... after it, the block is gone: the survivors say so and exit 3.
# Hydra's status is then 139: it ORs the statuses, 3 | 137. Open MPI's
# mpirun says 0 whatever happened. Each of the two dies when it reaches
# iteration 450; rank 3 can instead fail its iteration 449, its halo from
# rank 2 not received (seen once in 3 CI runs, under load): then it dies
# only after the survivors recovered rank 2's block from it, a correct
# run of another scenario. Try again then, up to three times.
for try in 1 2 3; do
	jacobi shim 6 2000 "rank=2-3 at=point:iteration:450"
	case $RESULT in
	*"lost ranks 2,3"*) note "rank 3 died after rank 2's recovery (try $try): again" ;;
	*) break ;;
	esac
done
if [ "$MPITEST_FLAVOUR" = openmpi ]; then expect_rc 0; elif [ "$RC" = 0 ]; then fail "the unrecoverable run exited 0"; fi
grep -q '^jacobi: unrecoverable: world rank 2 and its buddy, world rank 3, ' "$OUT" || {
	cat "$OUT" >&2
	fail "the loss of a rank and its buddy was not reported as unrecoverable"
}
[ -z "$RESULT" ] || fail "a run that lost a block printed a result: $RESULT"

# Random times: two ranks of 8, Weibull gaps (scale 1.5 s, shape 1.5),
# seeded, in a run of about 4 s; seed 2 draws ranks 4 and 7 at 1.04 s
# and 2.20 s, well after the start (a death while the start's shrink is
# inside MPI_Comm_create_group would end the job: see BUGS in
# MPIX_Comm_shrink(3)). Whatever died must be what is reported lost,
# with the answer of a failure-free run of that length.
if instrumented; then
	note "random times: skipped in a $MPITEST_SANITIZER-sanitized build (they assume an uninstrumented build's speed)"
else
	jacobi shim 4 100000
	expect_rc 0
	reflong=$RESULT
	inject="rank=random:2 at=weibull:1500ms:1.5 seed=2"
	jacobi shim 8 100000 "$inject"
	same_answer "$inject" "$reflong"
	killed=$(sed -n 's/^.*ftshim\[\([0-9]*\)\] .* info: injecting .*/\1/p' "$ERR" | sort -n | paste -sd, -)
	echo "$RESULT" | grep -qF "lost ranks ${killed:-none}" || { cat "$OUT" >&2; fail "$inject: ranks ${killed:-none} were killed, the result says otherwise"; }
	note "$inject: $RESULT"
fi

expect_no_leftovers jacobi
