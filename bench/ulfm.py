#!/usr/bin/env python3
"""bench/ulfm.py: what the ULFM recovery calls cost under ftshim, measured
with real jobs on this machine at several sizes, for each MPI built by
dev/setup (build/mpich, build/openmpi). Prints a table of medians and
99th percentiles (microseconds, the slowest rank of each repetition);
asserts nothing (the tests do that).

  agree          MPIX_Comm_agree, no failure
  allreduce      MPI_Allreduce(MPI_BAND) of one int: the MPI's own
                 collective beside it (not fault tolerant)
  shrink         MPIX_Comm_shrink, no failure
  create         MPI_Comm_create_group of all ranks: the MPI call inside
                 shrink
  shrink_failed  MPIX_Comm_shrink of MPI_COMM_WORLD after one rank was
                 killed and every survivor knows
  agree_failed   MPIX_Comm_agree on it, after the failure was acknowledged
  revoke         MPIX_Comm_revoke at one rank to the last other rank's
                 pending receive failing with MPIX_ERR_REVOKED

No ULFM MPI (Open MPI 5) is installed here, so there is no native figure
to compare with; allreduce and create are the MPI's own operations of the
same shape. Jobs larger than the core count are oversubscribed, which
dominates their times.

Usage: bench/ulfm.py [--flavours mpich,openmpi] [--sizes 4,8,16] [--reps 50]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG_SRC = os.path.join(TOP, "bench", "ulfm.c")
MPICC = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi"}
ORDER = ["agree", "allreduce", "shrink", "create", "shrink_failed", "agree_failed", "revoke"]

sys.path.insert(0, os.path.join(TOP, "bench"))
from detector import launch, run  # noqa: E402  (same launch lines)


def percentile(xs, p):
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return xs[k]


def one_job(flavour, prog, work, size, reps):
    """{what: [us...]} from one job of size ranks, or None."""
    rc, out, err = run(launch(flavour, size, {}, [prog, str(reps)]), work, 300)
    got = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] in ORDER:
            got.setdefault(parts[0], []).append(float(parts[2]))
    if not got.get("agree_failed"):
        print("  %s, %d ranks: the job failed (rc %s): %s" % (flavour, size, rc, err[-400:]),
              file=sys.stderr)
        return None
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--sizes", default="4,8,16")
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args()
    sizes = []
    for s in a.sizes.split(","):
        if not s.isdigit() or int(s) < 3:
            ap.error("--sizes %s: accepted: numbers of ranks, 3 or more, comma-separated" % s)
        sizes.append(int(s))
    if a.reps < 1:
        ap.error("--reps %d: accepted: 1 or more" % a.reps)
    work = tempfile.mkdtemp(prefix="ftshim-bench-")
    print("ftshim ULFM benchmark: %d cores, %s; microseconds, slowest rank, %d repetitions"
          % (os.cpu_count() or 0, time.strftime("%Y-%m-%d %H:%M"), a.reps))
    for flavour in a.flavours.split(","):
        if flavour not in MPICC:
            ap.error("--flavours %s: accepted: mpich, openmpi" % flavour)
        prog = os.path.join(work, "ulfm-" + flavour)
        subprocess.check_call([MPICC[flavour], "-std=gnu11", "-O2", "-I", os.path.join(TOP, "include"),
                               "-o", prog, PROG_SRC, "-ldl"])
        print("\n%s" % flavour)
        print("  %-14s" % "" + "".join("%22s" % ("%d ranks: median p99" % n) for n in sizes))
        results = {n: one_job(flavour, prog, work, n, a.reps) for n in sizes}
        for what in ORDER:
            cells = []
            for n in sizes:
                xs = (results[n] or {}).get(what)
                cells.append("%22s" % ("%.0f %.0f" % (statistics.median(xs), percentile(xs, 99))
                                       if xs else "no data"))
            print("  %-14s" % what + "".join(cells))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
