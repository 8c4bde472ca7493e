# Half the job, rank 0 among them, dies at the same moment; with each
# broadcast topology the survivors agree on exactly that half.
prog=$(build detect)
for bcast in chord bmg hypercube; do
	run_job shim 10 FTSHIM_BCAST=$bcast -- "$prog" --kill 0@300,2@300,5@300,7@300,8@300 --how sigkill
	expect_all_checks
	for r in 0 2 5 7 8; do expect_detected $r "$(survivors 10 0,2,5,7,8)"; done
	note "$bcast: $(head -n 1 "$OUT")"
done
expect_no_leftovers detect
