# MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still
# works, in the reverse order of setting, also once a rank has failed and
# ftshim skips the MPI's own finalize: libraries finalize there (parallel
# HDF5 closes its files). Without ftshim's deletion, a survivor's
# callbacks never ran.
prog=$(build self_attrs)

# expect_deletes RANKS: each rank printed, in this order, its explicit
# deletion, the two left for MPI_Finalize (last set, first deleted), all
# before MPI was finalized and with MPI working, then its end.
expect_deletes() {
	local r want got
	for r in ${1//,/ }; do
		want="rank $r: delete dropped (finalized 0, MPI_Comm_size works)
rank $r: delete second (finalized 0, MPI_Comm_size works)
rank $r: delete first (finalized 0, MPI_Comm_size works)
rank $r: after MPI_Finalize"
		got=$(grep "^rank $r: " "$OUT" || true)
		[ "$got" = "$want" ] || {
			printf 'rank %s printed:\n%s\nexpected:\n%s\n' "$r" "$got" "$want" >&2
			tail -n 20 "$ERR" >&2
			fail "rank $r: MPI_COMM_SELF's attributes not deleted as MPI_Finalize must"
		}
	done
}

run_job shim 4 -- "$prog"
expect_rc 0
expect_deletes 0,1,2,3
note "no failure: every rank's callbacks ran in MPI_Finalize, last set first"

run_job shim 4 -- "$prog" kill
expect_killed_rc
expect_detected 2 0,1,3
expect_deletes 0,1,3
expect_err_no_match 'CHECK FAILED'
note "rank 2 killed: the survivors' callbacks ran in MPI_Finalize all the same"
expect_no_leftovers self_attrs
