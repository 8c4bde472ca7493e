# Communicators made every way get the same job-wide id on every member,
# distinct ids otherwise, and the program sees exactly what it sees
# without the shim.
prog=$(build comm_ids)
run_job plain 6 -- "$prog" --expect-no-shim
expect_rc 0
cp "$OUT" plain.out
run_job shim 6 -- "$prog" --expect-shim
expect_rc 0
diff -u plain.out "$OUT" >&2 || fail "the program's output differs with the shim"
[ "$(wc -l <"$OUT")" -gt 100 ] || fail "comm_ids printed too little: $(wc -l <"$OUT") lines"
expect_err_no_match 'CHECK FAILED'
# The same with 4 ranks (a different split and cart shape).
run_job shim 4 -- "$prog" --expect-shim
expect_rc 0
expect_no_leftovers comm_ids
