#!/usr/bin/env python3
"""bench/shrink_view.py: what a communicator made by MPIX_Comm_shrink
costs the program once it is a view on a spare context (pmpi/spare_view.c)
beside the MPI's own communicator that shrink made before
(FTSHIM_RECOVERY_CONTEXTS=0), on each MPI built by dev/setup. Each job
(bench/shrink_view.c) loses its last rank, shrinks, and times blocking
collectives and an 8-byte ping-pong on the survivors' communicator (mean
per call at the slowest survivor). The two kinds of job alternate, --jobs
of each per size; the table gives each one's medians and their ratio
(view / MPI's: above 1 is slower). A third kind of job does not shrink:
MPI_Comm_validate_all (run-through stabilization, ftshim-rts.h)
recognizes the failure, and the same operations run on the validated
communicator among the live ranks (rts / MPI's). Asserts nothing.

Usage: bench/shrink_view.py [--flavours mpich,openmpi] [--sizes 5,9]
                            [--jobs 5] [--reps 1000]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "bench"))
from detector import MPICC, launch  # noqa: E402  (the same launch lines)
KINDS = (("view", "2", []), ("rts", "2", ["rts"]), ("mpi", "0", []))


def timed(flavour, n, contexts, argv):
    """One job's figures: operation -> microseconds."""
    cmd = launch(flavour, n, {"FTSHIM_RECOVERY_CONTEXTS": contexts}, argv)
    out = subprocess.run(["timeout", "-k", "5", "300"] + cmd, capture_output=True, text=True)
    times = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            times[parts[0]] = float(parts[1])
    if not times:
        sys.exit(f"shrink_view.py: {' '.join(cmd)} printed nothing ({out.returncode}): "
                 f"{out.stderr.strip()[-400:]}")
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--sizes", default="5,9")
    ap.add_argument("--jobs", type=int, default=5)
    ap.add_argument("--reps", type=int, default=1000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for flavour in args.flavours.split(","):
            exe = os.path.join(tmp, f"shrink_view_{flavour}")
            subprocess.run([MPICC[flavour], "-O2", "-I", os.path.join(TOP, "include"), "-o", exe,
                            os.path.join(TOP, "bench", "shrink_view.c")], check=True)
            for n in [int(s) for s in args.sizes.split(",")]:
                got = {kind: {} for kind, _, _ in KINDS}
                for j in range(args.jobs):
                    order = KINDS if j % 2 == 0 else KINDS[::-1]
                    for kind, contexts, extra in order:
                        for op, t in timed(flavour, n, contexts, [exe, str(args.reps)] + extra).items():
                            got[kind].setdefault(op, []).append(t)
                print(f"{flavour}, {n} ranks, the last killed, {n - 1} survivors; median of "
                      f"{args.jobs} jobs (us per call, slowest survivor):")
                print(f"  {'operation':<14} {'view':>9} {'rts':>9} {'MPI':>9} {'view/MPI':>9} {'rts/MPI':>9}")
                for op in got["view"]:
                    v, r, m = (statistics.median(got[k][op]) for k in ("view", "rts", "mpi"))
                    print(f"  {op:<14} {v:>9.1f} {r:>9.1f} {m:>9.1f} {v / m:>9.2f} {r / m:>9.2f}")


if __name__ == "__main__":
    main()
