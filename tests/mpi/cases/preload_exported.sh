# LD_PRELOAD exported to the launcher itself (so also to its helper
# processes, which never call MPI_Init): the launcher works, the shim is
# inert there and active in the ranks.
prog=$(build hello)
launch_cmd plain 4 -- "$prog" --expect-shim
set +e
LD_PRELOAD="$(shim_preload)" FTSHIM_LOG=debug timeout -k 5 60 "${LAUNCH[@]}" >out 2>err </dev/null
rc=$?
set -e
[ $rc = 0 ] || { cat err >&2; fail "exit status $rc with LD_PRELOAD exported"; }
grep -q '^hello from 4 ranks, sum 6$' out || fail "hello did not run"
# Only the four ranks say they are on; the launcher says nothing.
[ "$(grep -c 'debug: on: rank' err)" = 4 ] || { cat err >&2; fail "expected 4 ranks to report the shim on"; }
expect_no_leftovers hello
