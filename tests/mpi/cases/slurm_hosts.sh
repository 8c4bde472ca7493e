# Slurm across hosts (issue 24): 3 network-namespace hosts (netns.sh),
# one Slurm node each (slurm.sh), 2 ranks per node from an sbatch script
# that launches with srun (--mpi=pmi2 for MPICH, pmix for Open MPI).
# (a) Rank 3, on the second node, dies by SIGKILL while the others wait
# on it: the survivors on all three nodes go on for 2 s and finish.
# (b) The third node is lost: its link goes down and everything on it
# (slurmd, the step's daemon, ranks 4 and 5) is killed. The survivors on
# the other two nodes go on working until Slurm has marked the node down
# (sbatch and srun --no-kill), then finish, and the job ends. Skipped (exit 77) where namespaces or Slurm cannot be had.
. "$MPITEST_SRCDIR/netns.sh"
. "$MPITEST_SRCDIR/slurm.sh"
MPITEST_TIMEOUT=60
netns_setup 3
slurm_setup NETNS
prog=$(build launched)
cd "$MPITEST_WORKDIR"

# submit NAME OPTIONS... -- PROG_ARGS...: an sbatch job of 6 ranks on
# the 3 nodes, with OPTIONS for both sbatch and its srun; its job id in
# JOB, its output in NAME.out.
submit() {
	local name=$1 opts=()
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	cat >"$name.sh" <<EOS
#!/bin/bash
#SBATCH --nodes=3 --ntasks-per-node=2
#SBATCH --output=$MPITEST_WORKDIR/$name.out
srun ${opts[*]} --mpi=$SLURM_MPI --export=ALL,LD_PRELOAD=$(shim_preload),OMPI_MCA_btl_tcp_if_include=$NETNS_SUBNET $prog $*
EOS
	echo "\$ sbatch ${opts[*]} $name.sh  # $(tail -n 1 "$name.sh")" >>commands
	JOB=$(timeout -k 2 10 sbatch --parsable "${opts[@]}" "$name.sh") || fail "$name: sbatch refused the job"
}

# wait_done SECONDS: until the job has left the queue.
wait_done() {
	local i
	for i in $(seq 1 $(($1 * 5))); do
		[ -z "$(timeout -k 2 5 squeue -h -j "$JOB" 2>/dev/null)" ] && return 0
		sleep 0.2
	done
	timeout -k 2 5 squeue -j "$JOB" >&2 || true
	fail "job $JOB still in the queue after $1 s"
}

# expect_survived NAME: the job's output says the survivors finished.
expect_survived() {
	OUT=$MPITEST_WORKDIR/$1.out ERR=$MPITEST_WORKDIR/$1.out RC=
	expect_all_checks "$1"
	grep -qE '^survivors finished [0-9]+ iterations$' "$OUT" || { cat "$OUT" >&2; fail "$1: the survivors did not finish"; }
	expect_err_no_match 'CANCELLED'
}

# (a)
submit rank -- --victims 3
wait_done 30
expect_survived rank
expect_detected 3 0,1,2,4,5
expect_err_match "info: rank 3 failed: .*; it ran on h2, pid [0-9]+"

# (b) The survivors keep working until Slurm has marked the lost node
# down, then stop. --no-kill for srun too: sbatch's keeps the job, but a
# step on a node marked down is killed unless its own srun says so.
rm -f ready.* finish
submit node --no-kill -- --victims 4,5 --external --until "$MPITEST_WORKDIR/finish"
for r in 0 1 2 3 4 5; do wait_for_file "ready.$r" 20 || fail "node: rank $r never started"; done
netns_link_down 3
for pid in $(ip netns pids "${NETNS_NAMES[2]}"); do kill -9 "$pid" 2>/dev/null || true; done
lost_at=$SECONDS
for i in $(seq 1 300); do
	case $(timeout -k 2 5 sinfo -h -n ftn3 -o %T 2>/dev/null) in down*) break ;; esac
	sleep 0.2
done
case $(timeout -k 2 5 sinfo -h -n ftn3 -o %T 2>/dev/null) in down*) ;; *) fail "node: Slurm did not mark ftn3 down in 60 s" ;; esac
note "node: ftn3 marked down $((SECONDS - lost_at)) s after it was lost"
sleep 1
touch finish
wait_done 30
expect_survived node
expect_detected 4 0,1,2,3
expect_detected 5 0,1,2,3
expect_err_match '^ftshim: 2 failures \(host h3 lost \(ranks 4, 5 '
expect_no_leftovers launched
