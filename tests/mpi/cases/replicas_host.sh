# Transparent partial replication across hosts (issue 16): 3 network
# namespaces, 2 processes on each, run an unmodified program
# (tests/mpi/progs/replicas.c) with FTSHIM_REPLICAS=2, so 4 program
# ranks, 2 of them replicated. (a) Every replica runs on another host
# than its primary, and the answer is that of 4 ranks alone; (b) a whole
# host holding primaries is lost: their replicas on another host carry
# on and the program notices nothing; (c) the host holding the replicas
# is lost: their ranks go on alone; (d) MPI_Comm_split_type groups the
# program's ranks by their primaries' hosts, replicas included. Skipped (exit 77) where namespaces
# cannot be made.
. "$MPITEST_SRCDIR/netns.sh"
hosts=3 per=2
MPITEST_TIMEOUT=40
np=$((hosts * per))
netns_setup $hosts
prog=$(build replicas)
run=$MPITEST_WORKDIR/run
ROUNDS=8

# The reference: 4 ranks on this machine, without replicas or failures.
for what in stencil colls; do
	run_job shim 4 "FTSHIM_RUNDIR=$run" -- "$prog" "$what" "$ROUNDS"
	expect_rc 0
	sort "$OUT" >"$MPITEST_WORKDIR/ref-$what"
done
rm -rf "$run"

# replicated_job LABEL WORKLOAD [NAME=VALUE...]: run WORKLOAD on the
# hosts with 2 replicas (and the given variables), in the background,
# until its ranks have ended; then its sorted output must be the
# reference's, and its status that of a job that lost a whole host (but
# for LABEL a, which loses none): Hydra keeps the lost processes' status,
# as no process of their host finished.
replicated_job() {
	local label=$1 what=$2
	rm -rf "$run"
	start_multihost_job shim $per "FTSHIM_RUNDIR=$run" FTSHIM_REPLICAS=2 "${@:3}" -- "$prog" "$what" "$ROUNDS"
	wait_job_or_ranks "$prog" 30 "^$what rank 3:" || { tail -n 20 "$ERR" >&2; fail "$label: the job did not end in 30 s"; }
	end_multihost_job "$label"
	case $label in a) expect_rc 0 ;; *) expect_rc "$(lost_rc sigkill)" ;; esac
	# The program's lines only (a launcher may add its own after a death).
	sort "$OUT" | grep -E '^[a-z]+ rank [0-9]+: ' >got.txt || true
	diff -u "$MPITEST_WORKDIR/ref-$what" got.txt >&2 ||
		{ tail -n 30 "$ERR" >&2; fail "$label: not the answer of 4 ranks without replicas or failures"; }
	expect_err_no_match 'ftshim\[[0-9]+\] \+[0-9.]+ (error|warn): '
	expect_err_no_match 'MPI_ERR|PROC_FAILED'
}

# host_of JOBRANK: the host a process ran on, from the run directory.
host_of() {
	sed -n "s/^$1 \([^ ]*\) .*/\1/p" "$run"/*/ranks
}

# (a) Placement: each replica is on another host than its primary.
replicated_job a stencil
replicas=$(echo $(sed -n 's/^\([0-9]*\) .* replica-of=\([0-9]*\)$/\1:\2/p' "$run"/*/ranks))
[ "$(echo "$replicas" | wc -w)" = 2 ] || fail "a: the run directory lists $(echo "$replicas" | wc -w) replicas, not 2"
for pr in $replicas; do
	p=${pr%:*} l=${pr#*:}
	[ "$(host_of "$p")" != "$(host_of "$l")" ] ||
		fail "a: the replica of rank $l (process $p) runs on $(host_of "$p"), its primary's host"
done
note "a: $np processes on $hosts hosts, replicas (process:rank) $replicas each on another host than its primary; same answer"

# The host to lose in (b): one whose every process is a primary with a
# replica elsewhere (placement put both replicas together, on the third
# host, for the primaries of ranks 0 and 1 on h1).
victim_host=
for k in $(seq 1 $hosts); do
	all=yes any=no
	for r in $(seq 0 $((np - 1))); do
		[ "$(host_of $r)" = "h$k" ] || continue
		any=yes
		echo "$replicas" | grep -qw "[0-9]*:$r" || all=no
	done
	[ $any = yes ] && [ $all = yes ] && { victim_host=h$k; break; }
done
[ -n "$victim_host" ] || fail "no host holds only replicated primaries (placement: $replicas)"
primaries=$(for pr in $replicas; do echo "${pr#*:}"; done | paste -sd,)
replica_host=$(host_of "${replicas%%:*}")

# (b) The primaries' host is lost in the halo exchange and, in another
# run, in a collective: the replicas (on another host) carry on, each
# saying so, and the answer is unchanged.
for w in "stencil call:MPI_Sendrecv:50" "colls call:MPI_Allreduce:20"; do
	what=${w% *} at=${w#* }
	replicated_job "b $what" "$what" "FTSHIM_INJECT=rank=host:${primaries%%,*} at=$at"
	for pr in $replicas; do
		p=${pr%:*} l=${pr#*:}
		expect_err_match "ftshim\[$p\] \+[0-9.]+ info: rank $l: primary \(process $l\) lost, replica \(process $p\) promoted, [0-9.]+ ms"
	done
	note "b: $victim_host (the primaries of ranks $primaries) lost at $at in $what: their replicas on $replica_host carried on; same answer"
done

# (c) The replicas' host is lost: both replicated ranks go on alone.
replicated_job "c" stencil "FTSHIM_INJECT=rank=host:${primaries%%,*} copy=replica at=call:MPI_Sendrecv:50"
for pr in $replicas; do
	p=${pr%:*} l=${pr#*:}
	expect_err_match "info: the replica of rank $l \(process $p\) is gone: rank $l goes on alone"
done
note "c: $replica_host (the replicas) lost: ranks $primaries went on alone; same answer"

# (d) MPI_COMM_TYPE_SHARED: ranks 0 and 1 share h1, 2 and 3 h2; the
# replicas (on h3) are grouped as their primaries.
rm -rf "$run"
start_multihost_job shim $per "FTSHIM_RUNDIR=$run" FTSHIM_REPLICAS=2 -- "$prog" node
wait_job_or_ranks "$prog" 30 "^node rank 3:" || { tail -n 20 "$ERR" >&2; fail "d: the job did not end in 30 s"; }
end_multihost_job d
for r in 0 1 2 3; do
	low=$((r / 2 * 2))
	grep -qx "node rank $r: rank $((r % 2)) of 2 on a node from rank $low, sum $((2 * low + 1))" "$OUT" ||
		{ cat "$OUT" >&2; fail "d: rank $r's node is not the one its primary's host makes"; }
done
for f in "$run"/*/replica-*.out; do
	r=${f##*/replica-}
	r=${r%.out}
	grep "^node rank $r: " "$OUT" | diff - "$f" >&2 || fail "d: the replica of rank $r (on $replica_host) has another node than its primary"
done
expect_err_no_match 'ftshim\[[0-9]+\] \+[0-9.]+ (error|warn): '
note "d: MPI_COMM_TYPE_SHARED gives nodes {0,1} and {2,3}, on the replicas (on $replica_host) too"

netns_expect_no_processes
expect_no_leftovers replicas
netns_teardown
netns_expect_clean
