# A collective that could complete is not failed (issue 39, item 5): rank
# 2 dies right after its MPI_Comm_dup or MPI_Allgather returned, while rank
# 1 has not yet seen its own call finish (hold_done.so, preloaded after
# the shim, makes its tests say "pending" until ftshim knows of the
# death). Before, rank 1 got MPIX_ERR_PROC_FAILED at once, as a slow rank
# of the ULFM tutorial's respawn examples did; now a collective given up
# on is tested for a while first, and a creation's outcome is agreed, so
# every survivor gets MPI_SUCCESS.
MPITEST_TIMEOUT=30
prog=$(build done_race)
lib=$(build_lib hold_done)
for op in dup allgather; do
	t0=$(date +%s%N)
	run_job plain 4 "LD_PRELOAD=$(shim_preload) $lib" HOLD_RANK=1 -- "$prog" "$op"
	for r in 0 1 3; do
		grep -qx "rank $r: $op: MPI_SUCCESS" "$OUT" || {
			cat "$OUT" >&2
			grep -v 'info: rank' "$ERR" | tail -n 20 >&2
			fail "$op: rank $r did not get MPI_SUCCESS"
		}
	done
	expect_all_checks "$op"
	expect_killed_rc
	note "$op: every survivor's call succeeded; $((($(date +%s%N) - t0) / 1000000)) ms"
done
expect_no_leftovers done_race
