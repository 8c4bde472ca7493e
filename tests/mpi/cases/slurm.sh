# Under Slurm (issue 24), on a one-node cluster of the test's own
# (slurm.sh): (a) srun launches 4 ranks directly, as the README says
# (--mpi=pmi2 for MPICH, --mpi=pmix for Open MPI); rank 2 dies by SIGKILL
# while the others wait on it; the survivors shrink and go on for about
# 2 s (a job step that Slurm cancels after a death is over in tens of
# milliseconds) and finish, and srun exits 0 (the victim's supervisor waits
# for them and sees the program completed). Under
# srun --mpi=pmix without ftshim's supervisor, Slurm cancels the step and
# kills every survivor the moment rank 2 dies. (b) The same from an
# sbatch script, the README's. (c) srun with the other --mpi plugin does
# not start this MPI as one job: task 0 says, in one line, which launch
# line works. (d) On Open MPI, the same death in a Python program
# (mpi4py) under srun. Skipped (exit 77) where Slurm cannot run here.
. "$MPITEST_SRCDIR/slurm.sh"
MPITEST_TIMEOUT=40
slurm_setup
prog=$(build launched)

# expect_survived LABEL: rank 2 died and the others finished.
expect_survived() {
	expect_all_checks "$1"
	grep -qx 'survivors finished 2000 iterations' "$OUT" || { cat "$OUT" >&2; fail "$1: the survivors did not finish"; }
	expect_err_no_match 'CANCELLED'
	expect_err_match '^ftshim: 1 failure \(rank 2 SIGKILL at [0-9.]+ s\); .*; 3 of 4 ranks finished; report: '
	expect_detected 2 0,1,3
}

# (a)
cd "$MPITEST_WORKDIR"
slurm_launch_cmd shim 4 -- "$prog"
run_launch
expect_survived "srun --mpi=$SLURM_MPI"
# srun's status is the worst task's: the victim's supervisor exits 0 once
# the others have finished.
expect_rc 0
expect_no_leftovers launched

# (b) The README's sbatch script as written, with this build's library
# for /opt/ftshim/lib/ftshim/mpich/libftshim.so, this MPI's --mpi, this
# program for ./app and its output file here; the job is polled for
# (sbatch --wait polls every few seconds).
rm -f ready.*
readme=$FT_SRCDIR/README.md
sed -n '/^In a batch script/,/^Give `FTSHIM_RUNDIR`/p' "$readme" | sed -n 's/^    //p' >job.readme
[ "$(head -n 1 job.readme)" = '#!/bin/bash' ] && grep -q '^srun .* \./app$' job.readme ||
	{ cat job.readme >&2; fail "no sbatch script in the README's quick start"; }
sed -e "s|/opt/ftshim/lib/ftshim/mpich/libftshim.so|$(shim_preload)|" -e "s|--mpi=pmi2|--mpi=$SLURM_MPI|" \
	-e "s|\./app\$|$prog|" -e "s|^#SBATCH --output=.*|#SBATCH --output=$MPITEST_WORKDIR/job.out|" \
	job.readme >job.sh
grep -q "^srun --mpi=$SLURM_MPI .*LD_PRELOAD=$(shim_preload),.* $prog\$" job.sh ||
	{ cat job.sh >&2; fail "the README's sbatch script does not launch as this test expects"; }
job=$(timeout -k 2 10 sbatch --parsable job.sh) || fail "sbatch refused the job"
note "sbatch job $job"
for i in $(seq 1 150); do
	[ -z "$(timeout -k 2 5 squeue -h -j "$job" 2>/dev/null)" ] && break
	sleep 0.2
done
[ -z "$(timeout -k 2 5 squeue -h -j "$job" 2>/dev/null)" ] || fail "the sbatch job $job still runs after 30 s"
OUT=$MPITEST_WORKDIR/job.out ERR=$MPITEST_WORKDIR/job.out
expect_survived sbatch
expect_no_leftovers launched

# (c) The other plugin: a line from task 0 that names the right one.
hello=$(build hello)
slurm_launch_cmd shim 2 -- "$hello"
if [ "$MPITEST_FLAVOUR" = mpich ]; then
	LAUNCH=(srun --mpi=pmix "${LAUNCH[@]:2}")
	run_launch
	expect_err_match '^ftshim\[0\] \+[0-9.]+ warn: srun started 2 tasks, but each is an MPI job of one rank: .*launch MPICH with srun --mpi=pmi2, Open MPI with srun --mpi=pmix$'
else
	LAUNCH=(srun --mpi=pmi2 "${LAUNCH[@]:2}")
	run_launch
	expect_err_line "ftshim: srun --mpi=pmi2 started this Open MPI program, which may have no PMI-2 client (Debian's Open MPI 4.1 has none: its MPI_Init fails); launch it with srun --mpi=pmix"
fi
[ "$(grep -c '^ftshim.*srun --mpi=p' "$ERR")" = 1 ] || fail "(c): not one line about the launch"
expect_no_leftovers hello

# (d) Open MPI: a Python program under srun (Debian's mpi4py).
if [ "$MPITEST_FLAVOUR" = openmpi ] && timeout -k 5 30 /usr/bin/python3 -c 'import mpi4py' 2>/dev/null; then
	slurm_launch_cmd shim 4 -- /usr/bin/python3 "$MPITEST_SRCDIR/progs/mpi4py_lose.py"
	run_launch
	expect_all_checks "mpi4py under srun"
	expect_err_no_match 'CANCELLED'
	expect_detected 2 0,1,3
fi
