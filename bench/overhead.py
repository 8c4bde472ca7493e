#!/usr/bin/env python3
"""bench/overhead.py: what the shim costs a failure-free program, on each
MPI built by dev/setup. Each measurement (bench/micro.c) runs alternately
without and with the shim, --reps times, in one session; the table shows
the median of each and their ratio (shim / plain: above 1 is slower for
times, below 1 is slower for bandwidth), the ratio being the median of
the back-to-back pairs' ratios. Asserts nothing.

  pingpong 8 B      half round trip, 2 ranks                  target ratio <= 1.05
  bandwidth 1 MiB   streaming, 2 ranks                        target ratio >= 0.97
  allreduce 8 B     8 ranks (oversubscribed on small hosts)   target ratio <= 1.10
  barrier           8 ranks                                   target ratio <= 1.10

With --parts, it also runs bench/pingpong_parts.c under the shim, which
splits the ping-pong cost in one process: the MPI alone (PMPI_Send/Recv),
the same through nonblocking calls polled as the shim does (what the
design costs), and the shim's wrappers.

Usage: bench/overhead.py [--flavours mpich,openmpi] [--reps 11] [--only NAMES] [--parts]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPICC = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi"}
TESTS = [
    # name, ranks, argv, higher is better, target
    ("pingpong-8B", 2, ["pingpong", "8", "20000"], False, 1.05),
    ("bandwidth-1MiB", 2, ["bandwidth", str(1 << 20), "20"], True, 0.97),
    ("allreduce-8B", 8, ["allreduce", "300"], False, 1.10),
    ("barrier", 8, ["barrier", "300"], False, 1.10),
]


def launch(flavour, nprocs, shim, argv):
    env = {"LD_PRELOAD": os.path.join(TOP, "build", flavour, ".libs", "libftshim.so")} if shim else {}
    if flavour == "mpich":
        cmd = ["mpiexec.hydra", "-n", str(nprocs)]
        for k, v in env.items():
            cmd += ["-genv", k, v]
    else:
        cmd = ["mpirun.openmpi", "--oversubscribe", "-n", str(nprocs)]
        if os.getuid() == 0:
            cmd.append("--allow-run-as-root")
        for k, v in env.items():
            cmd += ["-x", "%s=%s" % (k, v)]
    return cmd + argv


def measure(flavour, prog, nprocs, shim, argv):
    try:
        out = subprocess.run(launch(flavour, nprocs, shim, [prog] + argv), capture_output=True,
                             text=True, timeout=300).stdout
    except subprocess.TimeoutExpired:
        return None
    m = re.search(r"^\S+ ([0-9.]+) ", out, re.M)
    return float(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--only", default="")
    ap.add_argument("--parts", action="store_true")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    work = tempfile.mkdtemp(prefix="ftshim-overhead-")
    print("ftshim overhead, %d cores, %d interleaved runs each; medians" % (os.cpu_count() or 0, a.reps))
    print("%-8s %-15s %12s %12s %7s %s" % ("mpi", "test", "plain", "shim", "ratio", "target"))
    for flavour in a.flavours.split(","):
        if flavour not in MPICC:
            ap.error("--flavours %s: accepted: mpich, openmpi" % flavour)
        prog = os.path.join(work, "micro-" + flavour)
        subprocess.check_call([MPICC[flavour], "-O2", "-Wno-stringop-overflow", "-o", prog,
                               os.path.join(TOP, "bench", "micro.c")])
        for name, nprocs, argv, higher, target in TESTS:
            if only and name not in only:
                continue
            plain, shim, pairs = [], [], []
            for rep in range(a.reps):
                # Alternate which goes first, so that drifts hit both alike.
                order = [False, True] if rep % 2 == 0 else [True, False]
                got = {}
                for s in order:
                    v = measure(flavour, prog, nprocs, s, argv)
                    if v is not None:
                        (shim if s else plain).append(v)
                        got[s] = v
                if len(got) == 2:
                    pairs.append(got[True] / got[False])
            if not pairs:
                print("%-8s %-15s no data" % (flavour, name))
                continue
            p, s = statistics.median(plain), statistics.median(shim)
            # The ratio is the median of each back-to-back pair's: this
            # machine switches between fast and slow spells (Open MPI's
            # ping-pong is 0.15 or 0.38 us from one run to the next), and
            # medians taken apart can land in different spells.
            ratio = statistics.median(pairs)
            ok = ratio >= target if higher else ratio <= target
            unit = "MB/s" if higher else "us"
            print("%-8s %-15s %9.3f %-2s %9.3f %-2s %7.3f %s %s" % (
                flavour, name, p, unit, s, unit, ratio, (">= " if higher else "<= ") + str(target),
                "ok" if ok else "MISSED"))
            sys.stdout.flush()
        if a.parts:
            parts = os.path.join(work, "parts-" + flavour)
            subprocess.check_call([MPICC[flavour], "-O2", "-o", parts,
                                   os.path.join(TOP, "bench", "pingpong_parts.c")])
            try:
                out = subprocess.run(launch(flavour, 2, True, [parts]), capture_output=True,
                                     text=True, timeout=300).stdout
            except subprocess.TimeoutExpired:
                out = ""
            for line in out.splitlines():
                way, us, _, ratio = line.split()
                print("%-8s parts: %-4s %9.4f us %7s (of the MPI alone, in one process)" % (
                    flavour, way, float(us), ratio))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
