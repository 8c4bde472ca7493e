# Re-admission (FTSHIM_READMIT=1): a rank stopped past the heartbeat
# timeout is declared failed; resumed, it is not excluded but taken back
# by everyone once (callbacks, ftshim_rank_state, one line each), talks
# point to point again, and finds, like the others, that the communicator
# it was in stays failed; the others shrink it without it. Nobody exits
# early, nothing is left behind.
prog=$(build readmit)
start_job shim 4 FTSHIM_READMIT=1 FTSHIM_HB_PERIOD=50ms FTSHIM_HB_TIMEOUT=500ms -- "$prog"
wait_for_file declared.done 30
wait_for_file stopped.2.pid 5
kill -CONT "$(cat stopped.2.pid)"
wait_job
expect_rc 0
expect_all_checks
expect_detected 2 0,1,3
for r in 0 1 3; do
	n=$(grep -cE "ftshim\[$r\] \+[0-9.]+ info: rank 2 is back: it was declared failed by heartbeat timeout and then heard again by rank [0-9]" "$ERR" || true)
	[ "$n" = 1 ] || fail "rank $r logged rank 2's re-admission $n times, expected once"
done
expect_err_match 'ftshim\[2\] \+[0-9.]+ warn: this rank was declared failed by the others \(rank [0-9], heartbeat timeout\) while it was unreachable or stopped; FTSHIM_READMIT=1: it goes on and waits to be re-admitted$'
expect_err_match 'ftshim\[2\] \+[0-9.]+ warn: this rank is back in the job: re-admitted by rank [0-9] '
expect_err_no_match 'exits now'
expect_err_match '^ftshim: no failures \(re-admitted after a failure: rank 2\); 4 of 4 ranks finished; report: '
expect_no_leftovers readmit
