# No failure: ranks enter MPI_Finalize up to 2.5 s apart, five heartbeat
# timeouts; the early ones wait for the late ones without declaring anyone
# failed, and the job ends cleanly. A rank that returns 3 from main after
# its MPI_Finalize is no lost rank: the launcher passes its 3 on (Hydra;
# Open MPI's mpirun --enable-recovery exits 0 whatever happened).
prog=$(build detect)
run_job shim 8 FTSHIM_HB_PERIOD=50ms FTSHIM_HB_TIMEOUT=500ms -- "$prog" --finalize-skew-ms 2500
expect_rc 0
expect_all_checks
expect_err_no_match 'failed'
expect_no_leftovers detect
hello=$(build hello)
run_job shim 4 -- "$hello" --rank1-exits 3
grep -q '^hello from 4 ranks' "$OUT" || { cat "$OUT" "$ERR" >&2; fail "the job did not run"; }
expect_rc "$(launcher_rc 3)"
expect_err_no_match 'failed'
expect_no_leftovers hello
