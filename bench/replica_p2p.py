#!/usr/bin/env python3
"""bench/replica_p2p.py: what transparent replication (FTSHIM_REPLICAS)
costs point-to-point traffic between two replicated logical ranks, on
each MPI built by dev/setup (issue 16). bench/micro.c's ping-pong (8 B,
half round trip) and streaming bandwidth (1 MiB) between program ranks 0
and 1 run four ways, interleaved --reps times:

  plain N      2 processes, no shim
  plain N+R    4 processes, no shim: ranks 2 and 3 only join the
               barriers between rounds, waiting in them as the MPI waits
               (the oversubscription alone, on a host with fewer cores)
  shim N       2 processes under the shim, no replicas
  shim N+R     4 processes under the shim, FTSHIM_REPLICAS=100%: both
               ranks run twice, the primaries log what they send

The table gives medians and each way's ratio to plain N (the median of
back-to-back ratios; above 1 is slower for times, below 1 for
bandwidth). Asserts nothing.

Usage: bench/replica_p2p.py [--flavours mpich,openmpi] [--reps 7]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPICC = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi"}
TESTS = [
    # name, argv, higher is better
    ("pingpong-8B", ["pingpong", "8", "5000"], False),
    ("bandwidth-1MiB", ["bandwidth", str(1 << 20), "20"], True),
]
WAYS = [
    # label, processes, shim, replicas
    ("plain N", 2, False, None),
    ("plain N+R", 4, False, None),
    ("shim N", 2, True, None),
    ("shim N+R", 4, True, "100%"),
]


def launch(flavour, nprocs, env, argv):
    if flavour == "mpich":
        cmd = ["mpiexec.hydra", "-disable-auto-cleanup", "-n", str(nprocs)]
        for k, v in env.items():
            cmd += ["-genv", k, v]
    else:
        cmd = ["mpirun.openmpi", "--oversubscribe", "--enable-recovery", "-n", str(nprocs)]
        if os.getuid() == 0:
            cmd.append("--allow-run-as-root")
        for k, v in env.items():
            cmd += ["-x", "%s=%s" % (k, v)]
    return ["timeout", "-k", "5", "300"] + cmd + argv


def measure(flavour, prog, shim, rundir, way, argv):
    _, nprocs, with_shim, replicas = way
    env = {}
    if with_shim:
        env = {"LD_PRELOAD": shim, "FTSHIM_RUNDIR": rundir, "FTSHIM_LOG": "warn"}
        if replicas:
            env["FTSHIM_REPLICAS"] = replicas
    clean = dict(os.environ)
    clean.pop("LD_PRELOAD", None)
    out = subprocess.run(launch(flavour, nprocs, env, [prog] + argv), capture_output=True,
                         text=True, env=clean).stdout.split()
    return float(out[1]) if len(out) >= 2 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print("replicated point-to-point, program ranks 0 and 1, %d cores, %d interleaved "
              "runs; median (ratio to plain N)" % (os.cpu_count(), a.reps))
        print("%-8s %-15s %-10s %12s %8s" % ("mpi", "test", "way", "value", "ratio"))
        for flavour in a.flavours.split(","):
            shim = os.path.join(TOP, "build", flavour, ".libs", "libftshim.so")
            if not os.path.exists(shim):
                print("%s: no %s (run dev/setup)" % (flavour, shim))
                continue
            prog = os.path.join(tmp, "micro-" + flavour)
            subprocess.run([MPICC[flavour], "-O2", "-o", prog,
                            os.path.join(TOP, "bench", "micro.c")], check=True)
            for name, argv, higher in TESTS:
                runs = {w[0]: [] for w in WAYS}
                for _ in range(a.reps):
                    for way in WAYS:
                        runs[way[0]].append(measure(flavour, prog, shim, tmp, way, argv))
                base = runs[WAYS[0][0]]
                for way in WAYS:
                    vals = [v for v in runs[way[0]] if v is not None]
                    pairs = [v / b for v, b in zip(runs[way[0]], base) if v and b]
                    if not vals:
                        print("%-8s %-15s %-10s %12s" % (flavour, name, way[0], "failed"))
                        continue
                    print("%-8s %-15s %-10s %12.3f %8.3f" % (
                        flavour, name, way[0], statistics.median(vals),
                        statistics.median(pairs) if pairs else float("nan")))
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
