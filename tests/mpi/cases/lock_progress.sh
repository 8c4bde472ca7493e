# A process that waits inside ftshim still grants the passive-target
# locks that others ask of it (issue 39, item 1): rank 2 of 4 dies once a
# window exists; rank 1 then waits in MPI_Finalize (ftshim's wait for the
# other ranks) or in a blocking MPI_Probe (which ftshim polls), while rank
# 0 locks, puts to and unlocks rank 1's window 200 times, and rank 3 does
# the same to rank 0's (which ends in the same wait). Every survivor must
# finish its loop and the job must end. MPICH grants a lock only in the
# target's own progress; before ftshim drove it there, rank 0 waited for
# ever in the finalize variant.
MPITEST_TIMEOUT=30
prog=$(build lock_progress)
for wait in finalize probe; do
	t0=$(date +%s%N)
	run_job shim 4 -- "$prog" "$wait"
	for r in 0 3; do
		grep -qx "rank $r: done 200" "$OUT" || {
			cat "$OUT" >&2
			tail -n 20 "$ERR" >&2
			fail "$wait: rank $r did not complete its 200 locks (status $RC)"
		}
	done
	grep -qE "^rank 1: done (0|200)$" "$OUT" || fail "$wait: rank 1 did not finish"
	expect_err_no_match 'CHECK FAILED|stuck in the MPI library'
	expect_killed_rc
	note "$wait: every survivor finished in $((($(date +%s%N) - t0) / 1000000)) ms"
done
expect_no_leftovers lock_progress
