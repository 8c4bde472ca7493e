# Transparent partial replication (FTSHIM_REPLICAS), failure-free: an
# unmodified program (tests/mpi/progs/replicas.c) run on N + R processes
# sees N ranks and prints what it printed on N without ftshim, wherever
# that does not depend on timing; each replica writes, in the run
# directory, exactly what its primary printed, timing-dependent lines
# (MPI_ANY_SOURCE matches, test and probe outcomes) included. A launch
# size that does not fit the count is refused at MPI_Init with one line,
# and a call replication does not support ends the job with one line
# naming it.
prog=$(build replicas)
run="$MPITEST_WORKDIR/run"

# plain_lines WORKLOAD NP: the lines of a run without ftshim, sorted.
plain_lines() {
	run_job plain "$2" -- "$prog" "$1"
	expect_rc 0
	sort "$OUT" >"$MPITEST_WORKDIR/plain-$1-$2"
}

# replicated WORKLOAD NP REPLICAS [TIMING]: run on NP processes with
# FTSHIM_REPLICAS=REPLICAS and check the lines against the plain run of
# the same logical size (TIMING: a regular expression of lines that
# depend on timing, compared between copies only), and every replica's
# output against its primary's.
replicated() {
	local what=$1 np=$2 replicas=$3 timing=${4:-'^$'}
	rm -rf "$run"
	run_job shim "$np" "FTSHIM_RUNDIR=$run" "FTSHIM_REPLICAS=$replicas" -- "$prog" "$what"
	expect_rc 0
	local n
	n=$(sed -n 's/.* info: replication: \([0-9]*\) logical ranks, \([0-9]*\) of them.*/\1 \2/p' "$ERR")
	[ -n "$n" ] || { tail -n 20 "$ERR" >&2; fail "$what, FTSHIM_REPLICAS=$replicas on $np: no replication line"; }
	local logical=${n% *} nrep=${n#* }
	[ "$((logical + nrep))" = "$np" ] || fail "$what: $logical logical ranks and $nrep replicas on $np processes"
	if [ ! -f "$MPITEST_WORKDIR/plain-$what-$logical" ]; then
		local out=$OUT err=$ERR
		plain_lines "$what" "$logical"
		OUT=$out ERR=$err
	fi
	sort "$OUT" | grep -Ev "$timing" >got.txt || true
	grep -Ev "$timing" "$MPITEST_WORKDIR/plain-$what-$logical" >want.txt || true
	diff -u want.txt got.txt >&2 || fail "$what, FTSHIM_REPLICAS=$replicas on $np: not the answer of $logical ranks without replicas"
	[ "$(grep -c " rank [0-9]*: " "$OUT")" = "$(grep -c " rank [0-9]*: " "$MPITEST_WORKDIR/plain-$what-$logical")" ] ||
		fail "$what: the terminal has a replica's lines, or misses a rank's"
	local files
	files=$(ls "$run"/*/replica-*.out 2>/dev/null | wc -l)
	[ "$files" = "$nrep" ] || fail "$what: $files replica output files for $nrep replicas"
	local f r
	for f in "$run"/*/replica-*.out; do
		r=${f##*/replica-}
		r=${r%.out}
		grep " rank $r: " "$OUT" >primary.txt || true
		diff -u primary.txt "$f" >&2 || fail "$what: the replica of rank $r printed other lines than its primary"
		[ -s "$f" ] || fail "$what: the replica of rank $r printed nothing"
	done
	expect_err_no_match 'ftshim\[[0-9]+\] \+[0-9.]+ (error|warn): '
	note "$what, FTSHIM_REPLICAS=$replicas on $np processes: $logical logical ranks, $nrep replicas, same answer"
}

replicated stencil 6 2
replicated stencil 8 100%
replicated mw 6 50% '^mw rank [1-9]|polls'
replicated mw 7 3 '^mw rank [1-9]|polls'
replicated colls 6 2
replicated colls 5 50%
replicated cart 8 100%
replicated cart 5 2
# Graph topologies (MPI_Graph_create, MPI_Dist_graph_create_adjacent),
# their queries answered by ftshim, exchanges along their edges. Before,
# each was refused with one line.
replicated graph 8 100%
replicated graph 6 2
# MPI_Wtime agrees between the copies of a rank: the step counts (which
# depend on timing) are compared between copies only.
replicated timed 6 2 '^timed'
replicated node 6 2
# Nonblocking collectives, completed by every completion call, one under
# way while a blocking one runs, and the sparse exchange that ends with
# an MPI_Ibarrier (MPI_Iprobe and MPI_Test decided by the primaries).
replicated nbx 6 2
replicated nbx 8 100%
# Persistent requests (point-to-point, and MPI-4's persistent collectives
# on MPICH), each start run as its nonblocking call. Before, MPI_Send_init
# on a replicated communicator was refused with one line.
replicated persist 6 2
replicated persist 8 100%
# Matched probes (MPI_Mprobe, MPI_Improbe and MPI_Mrecv, MPI_Imrecv: what
# mpi4py's lowercase recv makes): the probe, then the message received
# and held for MPI_Mrecv. Before, MPI_Mprobe was refused with one line.
replicated mprobe 6 2
replicated mprobe 8 100%
# MPI-4's large-count calls (MPICH; Open MPI 4.1 has none, and the
# program says so alike with and without replicas): replicated as their
# base calls while their counts fit an int (send-receives, sends and
# receives, nonblocking ones, broadcast, reduction, gathers, a v-form),
# each rank checking what it received.
replicated bigcount 6 2
replicated bigcount 5 50%

# A count beyond INT_MAX: refused with one line, before the buffer is
# read, and MPI_ERR_UNSUPPORTED_OPERATION under MPI_ERRORS_RETURN.
if [ "$MPITEST_FLAVOUR" = mpich ]; then
	rm -rf "$run"
	run_job shim 6 "FTSHIM_RUNDIR=$run" "FTSHIM_REPLICAS=2" -- "$prog" bigrefused
	expect_rc 0
	line='MPI_Bcast_c on a replicated communicator is not supported when a count or displacement does not fit in an int (FTSHIM_REPLICAS=2)'
	# ftshim's own lines reach the terminal from every process, replicas too.
	[ "$(grep -F "$line" "$ERR" | sed 's/ +.*//' | sort -u | wc -l)" = 6 ] &&
		[ "$(grep -cF "$line" "$ERR")" = 6 ] ||
		{ cat "$ERR" >&2; fail "not the one refusal line in each process"; }
	[ "$(grep -c '^bigrefused rank [0-9]*: MPI_ERR_UNSUPPORTED_OPERATION$' "$OUT")" = 4 ] ||
		{ cat "$OUT" >&2; fail "the refused MPI_Bcast_c did not return MPI_ERR_UNSUPPORTED_OPERATION on every logical rank"; }
	note "MPI_Bcast_c beyond INT_MAX on a replicated communicator: refused with one line, error class returned"
fi

# A launch size that does not fit: one line, every rank stops, nothing runs.
run_job shim 5 "FTSHIM_REPLICAS=3" -- "$prog" stencil
expect_rc "$(launcher_rc 78)"
expect_err_line 'ftshim: FTSHIM_REPLICAS=3 with 5 processes launched: 3 replicas need at least 3 logical ranks, so launch 6 processes or more, or ask for at most 2'
[ ! -s "$OUT" ] || fail "the program ran although FTSHIM_REPLICAS=3 does not fit 5 processes"
[ "$(grep -c 'FTSHIM_REPLICAS' "$ERR")" = 1 ] || { cat "$ERR" >&2; fail "the refusal was said more than once"; }

# A value that is neither: refused before MPI starts.
run_job shim 4 "FTSHIM_REPLICAS=half" -- "$prog" stencil
expect_rc "$(launcher_rc 78)"
expect_err_match 'FTSHIM_REPLICAS=half: expected a count of replicas'

# A call replication does not support yet: the job ends, saying which.
run_job shim 6 "FTSHIM_REPLICAS=2" -- "$prog" refused
expect_err_match 'MPI_Win_create on a replicated communicator is not supported yet'
! grep -q 'MPI_Win_create returned' "$OUT" || fail "the program went on after the refused call"

expect_no_leftovers replicas
