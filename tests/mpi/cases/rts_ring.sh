# examples/rts_ring.c, the fault-tolerant ring of Hursey and Graham as
# the paper writes it, against run-through stabilization (ftshim-rts.h):
# non-root ranks killed at chosen iterations (one, several at different
# iterations, two neighbours at once, one passing on the last iteration)
# and at random times, with the paper's two terminations (figure 13's
# MPI_Icomm_validate_all, figure 11's message from the root). The root
# must report every iteration completed exactly once and exactly the
# ranks lost; every survivor must exit without complaint.
prog=$(build example/rts_ring)
iters=50

# ring NP INJECT LOST [fig11]: run and check; LOST: "none" or 2,3.
ring() {
	local np=$1 inject=$2 lost=$3 term=${4:-fig13} n=${5:-$iters}
	local what="${inject:-no failure} ($np ranks, $term)"
	local -a env=()
	[ -z "$inject" ] || env+=("FTSHIM_INJECT=$inject")
	run_job shim "$np" "${env[@]}" -- "$prog" "$n" "$term"
	if [ "$lost" = none ]; then expect_rc 0; else expect_killed_rc; fi
	local nlost=0
	[ "$lost" = none ] || nlost=$(echo "$lost" | tr , '\n' | wc -l)
	local re="rts_ring: $n iterations completed, each once; survivors $((np - nlost)) of $np; lost ranks $lost; "
	if [ "$term" = fig11 ]; then re="${re}root's termination message"; else re="${re}validate_all agreed $nlost failed"; fi
	grep -qxE "$re" "$OUT" || {
		cat "$OUT" >&2
		grep -v ' info: ' "$ERR" | tail -n 20 >&2
		fail "$what: not the expected result line: $re"
	}
	[ "$(grep -c '^rts_ring: ' "$OUT")" = 1 ] || { cat "$OUT" >&2; fail "$what: more than one result line"; }
	if grep -E '^rts_ring\[[0-9]+\]: ' "$ERR" >&2 || grep -E 'ftshim\[[0-9]+\] \+[0-9.]+ error: ' "$ERR" >&2; then
		fail "$what: errors reported"
	fi
	note "$what: $(cat "$OUT")"
}

ring 5 "" none
ring 5 "rank=2 at=point:iteration:20" 2
ring 6 "rank=1 at=point:iteration:5; rank=3 at=point:iteration:15; rank=4 at=point:iteration:30" 1,3,4
ring 6 "rank=2-3 at=point:iteration:25" 2,3
ring 4 "rank=3 at=point:iteration:$((iters - 1))" 3
ring 5 "rank=1 at=point:iteration:10; rank=4 at=point:iteration:40" 1,4 fig11
ring 5 "" none fig11
# A death inside the termination's MPI_Icomm_validate_all, right after
# it started there: the agreement may or may not count it (the root may
# even finish before it learns of it), and the survivors finish.
inject="rank=2 at=call:MPI_Icomm_validate_all:1"
run_job shim 5 "FTSHIM_INJECT=$inject" -- "$prog" "$iters"
expect_killed_rc
grep -qxE "rts_ring: $iters iterations completed, each once; survivors (4 of 5; lost ranks 2|5 of 5; lost ranks none); validate_all agreed [01] failed" "$OUT" || {
	cat "$OUT" >&2
	grep -v ' info: ' "$ERR" | tail -n 20 >&2
	fail "$inject: not the expected result line"
}
if grep -E '^rts_ring\[[0-9]+\]: ' "$ERR" >&2; then fail "$inject: errors reported"; fi
note "$inject: $(cat "$OUT")"

# Random times: three non-root ranks, exponentially spaced (mean 200 ms,
# while the ring of 400 iterations runs some 2 s), with a few seeds;
# whatever died must be what the root reports lost.
if instrumented; then
	note "random times: skipped in a $MPITEST_SANITIZER-sanitized build (they assume an uninstrumented build's speed)"
else
	for seed in 1 2 3 4; do
		inject="rank=1,2,4 at=exp:200ms seed=$seed"
		run_job shim 6 "FTSHIM_INJECT=$inject" -- "$prog" 400
		grep -qE "^rts_ring: 400 iterations completed, each once; survivors [0-9] of 6; lost ranks [0-9,none]*; validate_all agreed [0-9] failed$" "$OUT" || {
			cat "$OUT" >&2
			grep -v ' info: ' "$ERR" | tail -n 20 >&2
			fail "$inject: the ring did not complete every iteration once"
		}
		lost=$(sed -n 's/.*lost ranks \([0-9,none]*\);.*/\1/p' "$OUT")
		killed=$(sed -n 's/^.*ftshim\[\([0-9]*\)\] .* info: injecting .*/\1/p' "$ERR" | sort -n | paste -sd, -)
		[ "$lost" = "${killed:-none}" ] || { cat "$OUT" >&2; fail "$inject: ranks ${killed:-none} were killed, the root reports $lost lost"; }
		if grep -E '^rts_ring\[[0-9]+\]: ' "$ERR" >&2; then fail "$inject: errors reported"; fi
		note "$inject: $(cat "$OUT")"
	done
fi
expect_no_leftovers rts_ring
