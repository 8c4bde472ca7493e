# A bad FTSHIM_* value stops every rank at MPI_Init with one line naming
# the variable, the value and what is accepted (said by the first rank,
# once for the job), exit status 78, and leaves nothing running. An
# FTSHIM_ name far from every variable's is no typo: one warning, and the
# job runs.
prog=$(build hello)

# The rank's own exit status, without a launcher in between.
run_single FTSHIM_LOG=loud -- "$prog"
expect_rc 78
expect_err_line "ftshim: FTSHIM_LOG=loud: unknown keyword; accepted: error, warn, info, debug or trace (default info)"

run_job shim 3 FTSHIM_LOG=loud -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_line "ftshim: FTSHIM_LOG=loud: unknown keyword; accepted: error, warn, info, debug or trace (default info)"
[ "$(grep -c '^ftshim: ' "$ERR")" = 1 ] || fail "expected the line once for the job, not once per rank"
grep -q '^hello' "$OUT" && fail "the program ran despite the bad value"

run_job shim 2 FTSHIM_LGO=debug -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_line "ftshim: FTSHIM_LGO=debug: unknown variable (did you mean FTSHIM_LOG?); the variables are listed in 'man 7 ftshim'"

run_job shim 3 FTSHIM_ZZZTOP=1 FTSHIM_OTHER_THING=2 -- "$prog"
expect_rc 0
expect_err_line "ftshim: warning: FTSHIM_ZZZTOP, FTSHIM_OTHER_THING are not variables of ftshim's, ignored; the variables are listed in 'man 7 ftshim'"
[ "$(grep -c '^ftshim: warning' "$ERR")" = 1 ] || fail "expected the warning once for the job"
grep -q '^hello' "$OUT" || fail "the program did not run beside an unknown name far from any"

run_job shim 2 FTSHIM_DISABLE=perhaps -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_match '^ftshim: FTSHIM_DISABLE=perhaps: not a boolean; accepted: 0 or 1'

run_job shim 2 FTSHIM_LOG_FILE=/tmp/x.%q -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_match '^ftshim: FTSHIM_LOG_FILE=/tmp/x.%q: unknown %-sequence; accepted: %r'

run_job shim 2 FTSHIM_LOG= -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_match '^ftshim: FTSHIM_LOG=: empty value; accepted'
run_job shim 2 FTSHIM_HB_PERIOD=abc -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_line "ftshim: FTSHIM_HB_PERIOD=abc: not a duration; accepted: a duration from 1ms to 10s, with unit us, ms or s (a bare number is ms) (default 100ms)"

run_job shim 2 FTSHIM_HB_PERIOD=500ms FTSHIM_HB_TIMEOUT=800ms -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_line "ftshim: FTSHIM_HB_TIMEOUT=800ms is less than twice FTSHIM_HB_PERIOD=500ms; accepted: a timeout of at least two periods"

run_job shim 2 FTSHIM_BCAST=gossip -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_line "ftshim: FTSHIM_BCAST=gossip: unknown keyword; accepted: chord, bmg or hypercube (default chord)"

run_job shim 2 FTSHIM_IFACE=nosuch0 -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_line "ftshim: FTSHIM_IFACE=nosuch0: no IPv4 interface or address 'nosuch0' on this host; accepted: an interface name or IPv4 address of this host"
expect_no_leftovers hello
