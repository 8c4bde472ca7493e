# Deaths at awkward places of the heartbeat ring (unshuffled, so that rank
# r+1 watches rank r): the middle of the ring; the observer first and then
# the rank it watched (the next one along must take over watching); two
# neighbours at the same moment.
prog=$(build detect)
run_job shim 8 FTSHIM_RING_SHUFFLE=0 -- "$prog" --kill 4@300 --how sigkill
expect_all_checks
expect_detected 4 "$(survivors 8 4)"

run_job shim 8 FTSHIM_RING_SHUFFLE=0 FTSHIM_HB_PERIOD=20ms FTSHIM_HB_TIMEOUT=400ms -- \
	"$prog" --kill 5@300,4@1000 --how sigkill
expect_all_checks
expect_detected 5 "$(survivors 8 4,5)"
expect_detected 4 "$(survivors 8 4,5)"
note "observer first: $(head -n 1 "$OUT")"

run_job shim 8 FTSHIM_RING_SHUFFLE=0 -- "$prog" --kill 3@300,4@300 --how sigkill
expect_all_checks
expect_detected 3 "$(survivors 8 3,4)"
expect_detected 4 "$(survivors 8 3,4)"
expect_no_leftovers detect
