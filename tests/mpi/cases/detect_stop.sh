# A rank stopped with SIGSTOP is declared failed after the heartbeat
# timeout; when it is resumed it learns that it was excluded and exits
# (status 75) with a clear message, and the survivors are not disturbed.
prog=$(build detect)
start_job shim 6 FTSHIM_HB_PERIOD=50ms FTSHIM_HB_TIMEOUT=500ms -- "$prog" --kill 2@300 --how stop
wait_for_file survivors.done 30
wait_for_file stopped.2.pid 5
sleep 0.3
kill -CONT "$(cat stopped.2.pid)"
wait_job
expect_all_checks
expect_detected 2 "$(survivors 6 2)"
expect_err_match 'ftshim\[2\] \+[0-9.]+ error: this rank was declared failed by the others \(rank [0-9]+, heartbeat timeout\) .* exits now \(status 75\)$'
expect_err_no_match 'resumed and was not stopped'
note "$(head -n 1 "$OUT")"
expect_no_leftovers detect
