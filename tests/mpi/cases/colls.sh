# MPI_Allreduce and MPI_Barrier give the same answers with the shim as
# without, for every communicator size up to the job's (on Open MPI the
# small ones run as point-to-point exchanges, pmpi/coll_p2p.c): built-in
# and non-commutative user operations, MPI_IN_PLACE, counts on both sides
# of the size limit, a padded datatype, an intercommunicator, and
# communicators freed and made again; and MPI_Alltoallw of mixed types,
# in place too (MPICH 4.0's in-place MPI_Ialltoallw, which ftshim once ran
# the blocking call as, mixes up the members' block sizes).
prog=$(build colls)
run_job plain 7 -- "$prog"
expect_rc 0
cp "$OUT" plain.out
run_job shim 7 -- "$prog"
expect_rc 0
expect_err_no_match 'CHECK FAILED'
diff -u plain.out "$OUT" >&2 || fail "the program's output differs with the shim"
grep -q '^intercommunicator: right$' "$OUT" || fail "colls did not reach its last check"
# A power of two, where no rank is folded into a neighbour.
run_job shim 4 -- "$prog"
expect_rc 0
expect_err_no_match 'CHECK FAILED'
expect_no_leftovers colls
