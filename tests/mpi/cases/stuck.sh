# The hang watch: a member dies while the others are inside the MPI's own
# communicator creation (MPI_Comm_split or MPI_Win_create after the fence,
# MPI_Comm_create_group, MPI_Intercomm_create), which MPI gives no way to
# interrupt. Every survivor must leave with one line and status 76 within
# the grace period (2 s here), never hang.
prog=$(build stuck)
for what in split create_group win_create intercomm; do
	case $what in
	win_create) fn=MPI_Win_create dead=3 ;;
	intercomm) fn=MPI_Intercomm_create dead=2 ;;
	*) fn=MPI_Comm_$what dead=3 ;;
	esac
	t0=$SECONDS
	run_job shim 4 -- "$prog" "$what"
	! grep -q '^returned$' "$OUT" || fail "$what: a creation returned although a member died"
	# MPICH's MPI_Intercomm_create talks to Hydra (PMI); once the first
	# survivor has left, Hydra may end the others before their grace
	# runs out ("unable to forward PMI response"): then one line is all
	# there is, and the job still ended. Every other case: one each.
	left=$(grep -cE "ftshim\[[0-9]\] .* error: stuck in the MPI library's $fn " "$ERR" || true)
	if [ "$what" = intercomm ] && [ "$MPITEST_FLAVOUR" = mpich ] && [ "$left" -ge 1 ] &&
		grep -q 'unable to forward PMI response' "$ERR"; then
		[ $((SECONDS - t0)) -lt 30 ] || fail "$what: took $((SECONDS - t0)) s"
		note "$what: $left survivor(s) left with the line; Hydra ended the rest"
		continue
	fi
	for r in $(survivors 4 $dead | tr , ' '); do
		# Rank 3 of the intercomm case may have left for its leader
		# (rank 2) or, in a chain, for another who left stuck.
		grep -qE "ftshim\[$r\] .* error: stuck in the MPI library's $fn for 2.0 s after rank [0-9], a member, failed: MPI cannot be interrupted there, so this rank leaves \(fail-stop, exit status 76\) rather than hang" "$ERR" ||
			{ tail -n 20 "$ERR" >&2; fail "$what: rank $r did not say it left"; }
	done
	[ $((SECONDS - t0)) -lt 30 ] || fail "$what: took $((SECONDS - t0)) s"
	note "$what: every survivor left with its line after $((SECONDS - t0)) s (job status $RC)"
done
# Nobody dies; the others wait 300 ms inside MPI_Comm_create_group for
# the last rank. On MPICH the wait is MPICH's own loop, which ftshim makes
# yield the CPU after its spin (pmpi/ucx_yield.c): each waiting rank says
# so at its end. Open MPI yields by itself; ftshim leaves it be.
run_job shim 4 FTSHIM_LOG=debug -- "$prog" late
expect_rc 0
# (Hydra may interleave the four lines' pieces.)
[ "$(grep -o returned "$OUT" | wc -l)" = 4 ] || fail "late: the creation did not return on every rank"
if [ "$MPITEST_FLAVOUR" = mpich ]; then
	for r in 0 1 2; do
		grep -qE "ftshim\[$r\] .* debug: the MPI's own waits yielded the CPU [0-9]+ time\(s\) \(ucp_worker_progress\)$" "$ERR" ||
			{ tail -n 20 "$ERR" >&2; fail "late: rank $r did not yield inside MPICH's MPI_Comm_create_group"; }
	done
	note "late: the waiting ranks yielded inside MPICH"
else
	expect_err_no_match "the MPI's own waits yielded"
	note "late: Open MPI left to yield by itself"
fi
expect_no_leftovers stuck
