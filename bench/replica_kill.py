#!/usr/bin/env python3
"""bench/replica_kill.py: kills under transparent replication, at random
(issue 39, items 2 and 4). Runs tests/mpi/progs/replicas.c under the
shim of each MPI built by dev/setup with FTSHIM_REPLICAS=2 on 6
processes (4 program ranks, ranks 0 and 1 with a replica), many times;
each job loses processes in one of four ways drawn at random: the
primaries of ranks 0 and 1 after the same call, one after the other a
few calls apart, a primary and the other rank's replica, or one
primary at a random time (50-450 ms after the job is up, wherever
that falls, a send included). The workload (colls, stencil, mw, cart)
and the call are drawn too. A job is good when the program's lines are
those of 4 ranks without replicas or failures and no ftshim error was
logged; frozen when a survivor said it heard nothing from a live
process (the MPI's on-host queue frozen by the dead sender) or the job
was still running after --limit seconds; corrupt on a heap or
segmentation fault; other otherwise. Prints the counts per MPI and the
injections of the bad jobs, to rerun them. Asserts nothing.

Usage: bench/replica_kill.py [--flavours mpich,openmpi] [--runs 100]
                             [--limit 60] [--seed 1]
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exchange_kill import MPICC, TOP, command, one_job  # noqa: E402

CALLS = {
    "colls": ["MPI_Allreduce", "MPI_Alltoallv", "MPI_Alltoall", "MPI_Allgather", "MPI_Reduce_scatter",
              "MPI_Scan", "MPI_Bcast", "MPI_Barrier", "MPI_Gatherv", "MPI_Comm_split", "MPI_Comm_dup"],
    "stencil": ["MPI_Sendrecv", "MPI_Waitall", "MPI_Allreduce"],
    "mw": ["MPI_Recv", "MPI_Send"],
    "cart": ["MPI_Sendrecv", "MPI_Allreduce"],
}
ROUNDS = "8"
# The manager/worker workload's lines of workers and its poll counts
# depend on timing.
TIMING = re.compile(r"^mw rank [1-9]|polls")


def program_lines(out):
    return sorted(l for l in out.splitlines()
                  if re.match(r"^[a-z]+ rank [0-9]+: ", l) and not TIMING.search(l))


def injection(rng, work):
    call, n = rng.choice(CALLS[work]), rng.randint(1, 40)
    kind = rng.randrange(4)
    if kind == 0:
        return f"rank=0,1 copy=primary at=call:{call}:{n}"
    if kind == 1:
        return (f"rank=0 copy=primary at=call:{call}:{n}; "
                f"rank=1 copy=primary at=call:{call}:{n + rng.randint(1, 3)}")
    if kind == 2:
        return (f"rank=1 copy=primary at=call:{call}:{n}; "
                f"rank=0 copy=replica at=call:{call}:{n + rng.randint(0, 2)}")
    return f"rank={rng.randrange(2)} copy=primary at=time:{rng.randint(50, 450)}ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--limit", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        for flavour in args.flavours.split(","):
            exe = os.path.join(tmp, f"replicas_{flavour}")
            subprocess.run([MPICC[flavour], "-O2", "-o", exe,
                            os.path.join(TOP, "tests", "mpi", "progs", "replicas.c")], check=True)
            ref = {}
            for work in CALLS:
                _, out, _, _ = one_job(command(flavour, 4, {}, [exe, work, ROUNDS]), tmp, args.limit)
                ref[work] = program_lines(out)
            counts = {"good": 0, "frozen": [], "corrupt": [], "other": []}
            for _ in range(args.runs):
                work = rng.choice(sorted(CALLS))
                inject = injection(rng, work)
                _, out, err, hung = one_job(
                    command(flavour, 6, {"FTSHIM_REPLICAS": "2", "FTSHIM_INJECT": inject}, [exe, work, ROUNDS]),
                    tmp, args.limit)
                if hung or "heard nothing from process" in err:
                    counts["frozen"].append((work, inject))
                elif re.search(r"tcache|corrupt|double free|Segmentation fault", err):
                    counts["corrupt"].append((work, inject))
                elif program_lines(out) != ref[work] or re.search(r"ftshim\[[0-9]+\] \+[0-9.]+ error:", err):
                    counts["other"].append((work, inject))
                else:
                    counts["good"] += 1
            print(f"{flavour}: {args.runs} replicated jobs (6 processes, 4 ranks): {counts['good']} good, "
                  f"{len(counts['frozen'])} frozen, {len(counts['corrupt'])} corrupt, {len(counts['other'])} other")
            for what in ("frozen", "corrupt", "other"):
                for work, inject in counts[what]:
                    print(f"  {what}: {work}, FTSHIM_INJECT='{inject}'")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
