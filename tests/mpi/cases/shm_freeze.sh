# A sender that dies between reserving a slot of a neighbour's on-host
# receive queue and filling it does not freeze that neighbour (issue 39,
# item 2): rank 2 reserves the next slot of rank 1's UCX queue itself and
# SIGKILLs itself (progs/shm_freeze.c), then ranks 0 and 3 send rank 1
# 100 messages each. Under UCX's shared memory (MPICH's ch4:ucx) rank 1
# must fill the dead sender's slot, say so in one line, and receive them
# all; before the repair it never received another message. Where the
# MPI does not use UCX's queues (Open MPI's ob1) the victim finds none
# and the survivors must finish all the same. Then a short loop of
# bench/exchange_kill.py --reserve: 6 ranks exchanging with every other
# as fast as they can, a random victim taking the next slot of every
# other rank's queue at a random time and dying; the survivors revoke,
# shrink and finish 500 more rounds, each having filled its slot.
MPITEST_TIMEOUT=40
prog=$(build shm_freeze)
run_job shim 4 -- "$prog"
grep -qE '^rank 2: reserved [0-9]+$' "$OUT" || {
	cat "$OUT" >&2
	tail -n 20 "$ERR" >&2
	fail "the victim did not get as far as its reservation (status $RC)"
}
reserved=$(sed -n 's/^rank 2: reserved //p' "$OUT")
for r in 0 1 3; do
	grep -qx "rank $r: done 100" "$OUT" || {
		cat "$OUT" >&2
		tail -n 20 "$ERR" >&2
		fail "rank $r did not finish its 100 rounds (status $RC; $reserved slot(s) reserved)"
	}
done
if [ "$MPITEST_FLAVOUR" = mpich ]; then
	[ "$reserved" -ge 1 ] || fail "MPICH: the victim found no queue of rank 1's to reserve a slot in"
fi
if [ "$reserved" -ge 1 ]; then
	expect_err_match 'in the middle of a send to this one.*ftshim filled the slot'
	note "$reserved slot(s) reserved by the victim, filled by rank 1"
else
	note "no UCX queue here (the MPI does not use UCX's shared memory): nothing to repair"
fi
expect_err_no_match 'CHECK FAILED|stuck in the MPI library'
expect_killed_rc
expect_no_leftovers shm_freeze
xk=$MPITEST_BINDIR/exchange_kill
top=$MPITEST_SRCDIR/../..
timeout -k 5 60 "$MPITEST_MPICC" -O2 -I "$top/include" -o "$xk" "$top/bench/exchange_kill.c" ||
	fail "cannot build bench/exchange_kill.c"
for i in 1 2 3 4; do
	victim=$((RANDOM % 6)) at=$((200 + RANDOM % 600))
	run_job shim 6 -- "$xk" 500 8 1 "$victim" "$at"
	[ "$(grep -c '^survived 5$' "$OUT")" = 5 ] || {
		cat "$OUT" >&2
		tail -n 20 "$ERR" >&2
		fail "exchange_kill, victim $victim at $at ms: not every survivor finished (status $RC)"
	}
	filled=$(grep -oE 'ftshim\[[0-9]+\] .*ftshim filled the slot' "$ERR" | sed 's/\].*//' | sort -u | grep -c . || true)
	[ "$MPITEST_FLAVOUR" != mpich ] || [ "$filled" = 5 ] ||
		{ tail -n 20 "$ERR" >&2; fail "exchange_kill, victim $victim at $at ms: $filled survivors filled a slot, not 5"; }
	expect_killed_rc
done
note "exchange_kill --reserve: 4 jobs of 6 ranks survived ($MPITEST_FLAVOUR)"
expect_no_leftovers exchange_kill
