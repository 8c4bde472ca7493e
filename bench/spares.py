#!/usr/bin/env python3
"""bench/spares.py: what having spare processes (FTSHIM_SPARES) costs a
failure-free program, on each MPI built by dev/setup. Each measurement of
bench/micro.c runs under the shim on N processes, and under the shim with
FTSHIM_SPARES=K on N + K processes (the program again sees N), alternately,
--reps times, in one session; the table shows the median of each and their
ratio (spares / none: above 1 is slower), the median of the back-to-back
pairs' ratios. Asserts nothing. The spares wait inside MPI_Init, waking
every 10 ms. Open MPI's processes yield the CPU in every wait when their
host has more processes than slots (mpirun --oversubscribe); a job with
spares is given N + K slots, so on a host with fewer cores than that both
ways run with mpi_yield_when_idle 0, as they would in such an allocation.

  pingpong 8 B      half round trip, 2 program ranks            target <= 1.02
  stencil 1 KiB     halo exchange with both ring neighbours
                    and an 8-byte allreduce, 4 program ranks    target <= 1.02
  allreduce 8 B     4 program ranks                             target <= 1.02

Usage: bench/spares.py [--flavours mpich,openmpi] [--reps 11] [--spares 1]
"""

import argparse
import os
import statistics
import subprocess
import tempfile

from overhead import MPICC, TOP, launch_env, measure_cmd
TESTS = [
    # name, program ranks, argv, target
    ("pingpong-8B", 2, ["pingpong", "8", "20000"], 1.02),
    ("stencil-1KiB", 4, ["stencil", "1024", "2000"], 1.02),
    ("allreduce-8B", 4, ["allreduce", "2000"], 1.02),
]


def measure(flavour, nprocs, env, argv, no_yield):
    mca = [("mpi_yield_when_idle", "0")] if no_yield else []
    return measure_cmd(launch_env(flavour, nprocs, env, argv, mca))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--spares", type=int, default=1)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ftshim-spares-")
    print("spares' failure-free cost, %d cores, FTSHIM_SPARES=%d, %d interleaved runs each; medians" %
          (os.cpu_count() or 0, a.spares, a.reps))
    print("%-8s %-14s %12s %12s %7s  target" % ("mpi", "test", "no spares", "spares", "ratio"))
    for flavour in a.flavours.split(","):
        if flavour not in MPICC:
            ap.error("--flavours %s: accepted: mpich, openmpi" % flavour)
        shim = os.path.join(TOP, "build", flavour, ".libs", "libftshim.so")
        prog = os.path.join(work, "micro-" + flavour)
        subprocess.check_call([MPICC[flavour], "-O2", "-Wno-stringop-overflow", "-o", prog,
                               os.path.join(TOP, "bench", "micro.c")])
        for name, n, argv, target in TESTS:
            ways = {"none": (n, {"LD_PRELOAD": shim}),
                    "spares": (n + a.spares, {"LD_PRELOAD": shim, "FTSHIM_SPARES": str(a.spares)})}
            cores = os.cpu_count() or 1
            no_yield = n <= cores < n + a.spares
            runs = {w: [] for w in ways}
            pairs = []
            for rep in range(a.reps):
                order = ["none", "spares"] if rep % 2 == 0 else ["spares", "none"]
                got = {}
                for w in order:
                    v = measure(flavour, ways[w][0], ways[w][1], [prog] + argv, no_yield)
                    if v is not None:
                        runs[w].append(v)
                        got[w] = v
                if len(got) == 2:
                    pairs.append(got["spares"] / got["none"])
            if not pairs:
                print("%-8s %-14s no data" % (flavour, name))
                continue
            ratio = statistics.median(pairs)
            print("%-8s %-14s %9.3f us %9.3f us %7.3f  <= %s %s" % (
                flavour, name, statistics.median(runs["none"]), statistics.median(runs["spares"]),
                ratio, target, "ok" if ratio <= target else "MISSED"), flush=True)


if __name__ == "__main__":
    main()
