#!/usr/bin/env python3
"""bench/comm_pool.py: what a pool of K spare duplicates of
MPI_COMM_WORLD made at MPI_Init would cost each job (bench/comm_pool.c),
on each MPI, without ftshim: the slowest rank's time to make K of them
(started together with MPI_Comm_idup and completed with one MPI_Waitall,
and one after another with MPI_Comm_dup), the sizes interleaved, median
of --reps runs each; and how many duplicates the MPI gives before it
refuses one. Asserts nothing.

Usage: bench/comm_pool.py [--flavours mpich,openmpi] [--ranks 8] [--reps 7]
                          [--sizes 1,2,4,8]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPICC = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi"}


def launch(flavour, n, argv):
    if flavour == "mpich":
        cmd = ["mpiexec.hydra", "-n", str(n)] + argv
    else:
        cmd = ["mpirun.openmpi", "--oversubscribe", "-n", str(n)]
        if os.getuid() == 0:
            cmd.append("--allow-run-as-root")
        cmd += argv
    out = subprocess.run(["timeout", "-k", "5", "120"] + cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"comm_pool.py: {' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
    return float(out.stdout.split()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--sizes", default="1,2,4,8")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for flavour in args.flavours.split(","):
            exe = os.path.join(tmp, f"comm_pool_{flavour}")
            subprocess.run([MPICC[flavour], "-O2", "-o", exe, os.path.join(TOP, "bench", "comm_pool.c")],
                           check=True)
            times = {(how, k): [] for how in ("idup", "dup") for k in sizes}
            for _ in range(args.reps):
                for k in sizes:
                    for how in ("idup", "dup"):
                        times[(how, k)].append(launch(flavour, args.ranks, [exe, how, str(k)]))
            contexts = int(launch(flavour, 2, [exe, "contexts", "100000"]))
            print(f"{flavour}, {args.ranks} ranks, median of {args.reps} (us, slowest rank):")
            print(f"  {'K':>3} {'idup+waitall':>13} {'dup x K':>10}")
            for k in sizes:
                print(f"  {k:>3} {statistics.median(times[('idup', k)]):>13.0f} "
                      f"{statistics.median(times[('dup', k)]):>10.0f}")
            print(f"  duplicates of MPI_COMM_WORLD before the MPI refuses one (2 ranks): "
                  f"{contexts}{'+' if contexts >= 100000 else ''}")


if __name__ == "__main__":
    main()
