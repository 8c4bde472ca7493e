# The behaviour matrix: every operation x the failed process's role
# (peer, root, non-root member, not involved) x before / during the
# operation. Zero hangs (each job is bounded), zero crashed survivors,
# and the documented error class in every cell. The table is written to
# matrix.md in the case's directory (and to the build tree's
# tests/mpi/matrix-FLAVOUR.md) for the docs.
prog=$(build matrix)
cells="$MPITEST_WORKDIR/cells"
: >"$cells"

# The documented result of a cell: a regular expression.
expected() { # op mode role
	case "$2/$3/$1" in
	*/uninvolved/*) echo 'MPI_SUCCESS' ;;
	before/peer/MPI_Irecv\(ANY_SOURCE\)+Wait) echo 'MPI_ERR_PROC_FAILED_PENDING' ;;
	during/peer/MPI_Irecv\(ANY_SOURCE\)+Wait) echo 'MPI_ERR_PROC_FAILED_PENDING' ;;
	during/member/MPI_Comm_create_group) echo 'NOT_RUN' ;;
	# A non-root's part of a fan-in (reduce, gather) needs nothing from the
	# root: it may complete before the root's death is known.
	during/root/MPI_Reduce | during/root/MPI_Gather | during/root/MPI_Gatherv | \
		during/root/MPI_Ireduce+Wait | during/root/MPI_Igather+Wait | during/root/MPI_Igatherv+Wait)
		echo 'MPI_SUCCESS|MPI_ERR_PROC_FAILED' ;;
	# A prefix reduction on ranks 0 and 1 needs nothing from rank 2.
	during/member/MPI_Scan | during/member/MPI_Exscan | during/member/MPI_Iscan+Wait | \
		during/member/MPI_Iexscan+Wait)
		echo 'MPI_SUCCESS|MPI_ERR_PROC_FAILED' ;;
	# An eager send can complete before its receiver dies: either is right.
	during/peer/MPI_Send | during/peer/MPI_Bsend | during/peer/MPI_Isend+Wait | \
		during/peer/MPI_Ibsend+Wait | during/peer/MPI_Send_init+Start)
		echo 'MPI_SUCCESS|MPI_ERR_PROC_FAILED' ;;
	*) echo 'MPI_ERR_PROC_FAILED' ;;
	esac
}

for role in peer member root uninvolved; do
	run_job shim 5 -- "$prog" --mode before --role "$role"
	grep -q '^matrix: done$' "$OUT" || { tail -n 5 "$ERR" >&2; fail "before/$role did not finish (rc $RC)"; }
	grep '^cell ' "$OUT" >>"$cells"
done

nops=$(run_job shim 1 -- "$prog" --mode list >/dev/null; grep -c '^op ' "$OUT")
[ "$nops" -gt 50 ] || fail "the matrix lists only $nops operations"
for first in $(seq 0 4 $((nops - 1))); do
	run_job shim 6 -- "$prog" --mode during --first "$first" --count 4
	grep -q '^matrix: done$' "$OUT" || {
		tail -n 8 "$ERR" >&2
		fail "during, operations $first..: did not finish (rc $RC); last started: $(grep ' start ' "$ERR" | tail -n 1)"
	}
	grep '^cell ' "$OUT" >>"$cells"
done

bad=0 n=0
while read -r _ op mode role result ms; do
	op=${op#op=} mode=${mode#mode=} role=${role#role=} result=${result#result=}
	want=$(expected "$op" "$mode" "$role")
	n=$((n + 1))
	if ! echo "$result" | grep -qxE "$want"; then
		echo "cell $op $mode/$role: $result, expected $want" >&2
		bad=$((bad + 1))
	fi
done <"$cells"
[ "$n" -gt 150 ] || fail "only $n cells ran"
note "$n cells, $bad unexpected"

# The table for the docs.
{
	echo "| operation | before: peer | before: member | before: root | before: not involved | during |"
	echo "|---|---|---|---|---|---|"
	cut -d' ' -f2 "$cells" | sort -u | while read -r opf; do
		op=${opf#op=}
		row="| \`$op\`"
		for col in before/peer before/member before/root before/uninvolved during/; do
			m=${col%%/*} r=${col#*/}
			if [ -n "$r" ]; then
				v=$(grep -F " op=$op mode=$m role=$r " "$cells" | head -n 1 | sed 's/.*result=\([^ ]*\).*/\1/' || true)
			else
				v=$(grep -F " op=$op mode=$m " "$cells" | head -n 1 | sed 's/.*role=\([^ ]*\) result=\([^ ]*\).*/\2 (\1)/' || true)
			fi
			row="$row | ${v:--}"
		done
		echo "$row |"
	done
} >"$MPITEST_WORKDIR/matrix.md"
cp "$MPITEST_WORKDIR/matrix.md" "$MPITEST_OUTDIR/../matrix-$MPITEST_FLAVOUR.md" 2>/dev/null || true
[ "$bad" = 0 ] || fail "$bad cells with an unexpected result"
expect_no_leftovers matrix
