# A program on MPI-4 sessions alone, with no MPI_Init (issue 22): ftshim
# starts in its first MPI_Session_init, over a communicator of the
# mpi://WORLD process set, and ends in its last MPI_Session_finalize. A
# rank that dies while the others reduce is detected and the reduction
# fails; the survivors shrink, go on and end their session. MPICH only:
# Open MPI 4.1 has no sessions.
[ "$MPITEST_FLAVOUR" = mpich ] || { echo "skip: Open MPI 4.1 has no sessions"; exit 77; }
prog=$(build sessions_only)

run_job shim 4 -- "$prog"
expect_rc 0
expect_all_checks "no failure"
[ "$(grep -o 'session finalized' "$OUT" | wc -l)" = 4 ] || fail "not every rank finalized its session"
expect_err_no_match 'failed'
note "no failure: 4 ranks reduced and finalized their session"

run_job shim 4 -- "$prog" kill
expect_killed_rc
expect_detected 2 0,1,3
expect_all_checks "rank 2 killed"
[ "$(grep -o 'session finalized' "$OUT" | wc -l)" = 3 ] || fail "not every survivor finalized its session"
expect_err_match '^ftshim: 1 failure \(rank 2 '
note "rank 2 killed: detected, the reduction failed, the 3 survivors shrank and ended their session"
expect_no_leftovers sessions_only
