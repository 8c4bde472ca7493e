# The hang watch: a member dies while the others are inside the MPI's own
# communicator creation (MPI_Comm_split after the fence, or
# MPI_Comm_create_group), which MPI gives no way to interrupt. Every
# survivor must leave with one line and status 76 within the grace period
# (2 s here), never hang.
prog=$(build stuck)
for what in split create_group; do
	t0=$SECONDS
	run_job shim 4 -- "$prog" "$what"
	! grep -q '^returned$' "$OUT" || fail "$what: a creation returned although a member died"
	for r in 0 1 2; do
		grep -q "^ftshim\[$r\] .* error: stuck in the MPI library's MPI_Comm_$what for 2.0 s after rank 3, a member, failed: MPI cannot be interrupted there, so this rank leaves (fail-stop, exit status 76) rather than hang" "$ERR" ||
			{ tail -n 20 "$ERR" >&2; fail "$what: rank $r did not say it left"; }
	done
	[ $((SECONDS - t0)) -lt 30 ] || fail "$what: took $((SECONDS - t0)) s"
	note "$what: every survivor left with its line after $((SECONDS - t0)) s (job status $RC)"
done
expect_no_leftovers stuck
