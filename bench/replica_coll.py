#!/usr/bin/env python3
"""bench/replica_coll.py: how a replicated job should run its collectives
(issue 16), measured on each MPI without ftshim. bench/replica_coll.c runs
an MPI_DOUBLE sum allreduce three ways over N logical ranks: "plain" (the
N primaries alone; launched with N processes, and again with N + R where
the R replicas sleep), "mirror" (each team, primaries and replicas, runs
its own; unreplicated ranks take part in both) and "forward" (the
primaries run it and send the result to their replicas, as PartRePer
does). All runs of one configuration are interleaved, --reps times; the
table gives medians and each mode's ratio to plain with N processes (the
median of back-to-back ratios). Asserts nothing.

Usage: bench/replica_coll.py [--flavours mpich,openmpi] [--reps 7] [--n 2]
                             [--bytes 8,65536]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPICC = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi"}


def launch(flavour, nprocs, argv):
    if flavour == "mpich":
        cmd = ["mpiexec.hydra", "-n", str(nprocs)]
    else:
        cmd = ["mpirun.openmpi", "--oversubscribe", "-n", str(nprocs)]
        if os.getuid() == 0:
            cmd.append("--allow-run-as-root")
    return ["timeout", "-k", "5", "120"] + cmd + argv


def measure(flavour, prog, nprocs, argv):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    out = subprocess.run(launch(flavour, nprocs, [prog] + argv), capture_output=True, text=True,
                         env=env).stdout.split()
    return float(out[4]) if len(out) == 5 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--n", type=int, default=2)
    ap.add_argument("--bytes", default="8,65536")
    a = ap.parse_args()
    n = a.n
    with tempfile.TemporaryDirectory() as tmp:
        print("replicated allreduce, N = %d logical ranks, %d cores, %d interleaved runs; "
              "us per call, median (ratio to plain N)" % (n, os.cpu_count(), a.reps))
        print("%-8s %8s %-22s %12s %8s" % ("mpi", "bytes", "mode", "us", "ratio"))
        for flavour in a.flavours.split(","):
            prog = os.path.join(tmp, "replica_coll-" + flavour)
            subprocess.run([MPICC[flavour], "-O2", "-o", prog,
                            os.path.join(TOP, "bench", "replica_coll.c")], check=True)
            for nbytes in a.bytes.split(","):
                iters = "500" if int(nbytes) <= 1024 else "100"
                configs = [("plain, N procs", "plain", n)]
                for r in sorted({max(1, n // 2), n}):
                    configs += [("plain, R=%d asleep" % r, "plain", n + r),
                                ("mirror, R=%d" % r, "mirror", n + r),
                                ("forward, R=%d" % r, "forward", n + r)]
                runs = {c[0]: [] for c in configs}
                for _ in range(a.reps):
                    for label, mode, procs in configs:
                        runs[label].append(measure(flavour, prog, procs, [mode, str(n), nbytes, iters]))
                base = runs[configs[0][0]]
                for label, _, _ in configs:
                    vals = [v for v in runs[label] if v is not None]
                    pairs = [v / b for v, b in zip(runs[label], base) if v and b]
                    if not vals:
                        print("%-8s %8s %-22s %12s" % (flavour, nbytes, label, "failed"))
                        continue
                    print("%-8s %8s %-22s %12.2f %8.2f" % (
                        flavour, nbytes, label, statistics.median(vals),
                        statistics.median(pairs) if pairs else float("nan")))
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
