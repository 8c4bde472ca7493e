# A rank that dies by SIGKILL, by SIGSEGV, or by exit(1) without
# MPI_Finalize is seen at once; all 7 survivors hold exactly it as failed,
# their callbacks ran, and they go on (a collective among them, then
# MPI_Finalize that returns).
prog=$(build detect)
for how in sigkill sigsegv exit; do
	run_job shim 8 -- "$prog" --kill 4@300 --how $how
	expect_all_checks
	expect_detected 4 "$(survivors 8 4)"
	expect_rc "$(death_rc $how)"
	note "$how: $(head -n 1 "$OUT")"
done
expect_no_leftovers detect
