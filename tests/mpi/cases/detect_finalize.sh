# No failure: ranks enter MPI_Finalize up to 2.5 s apart, five heartbeat
# timeouts; the early ones wait for the late ones without declaring anyone
# failed, and the job ends cleanly.
prog=$(build detect)
run_job shim 8 FTSHIM_HB_PERIOD=50ms FTSHIM_HB_TIMEOUT=500ms -- "$prog" --finalize-skew-ms 2500
expect_rc 0
expect_all_checks
expect_err_no_match 'failed'
expect_no_leftovers detect
