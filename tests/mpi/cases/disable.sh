# FTSHIM_DISABLE=1 makes the shim a pure pass-through: it reads no other
# variable (not even a wrong one) and stays inactive.
prog=$(build hello)
run_job shim 3 FTSHIM_DISABLE=1 FTSHIM_NONSENSE=1 FTSHIM_LOG=debug -- "$prog" --expect-no-shim
expect_rc 0
grep -q '^hello from 3 ranks, sum 3$' "$OUT" || fail "hello did not run"
expect_err_no_match '^ftshim'
run_job shim 3 -- "$prog" --expect-shim
expect_rc 0
