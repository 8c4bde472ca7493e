#!/usr/bin/env python3
"""bench/replica_promote.py: how long a replicated rank is without a
copy that carries it when its primary dies (transparent replication,
FTSHIM_REPLICAS; issue 16). tests/mpi/progs/replicas.c runs paced (a
stencil, a manager/worker or the collectives loop) on 6 processes with
FTSHIM_REPLICAS=2, and the primary of rank 1 is killed at a random time;
from ftshim's own log lines, for each run:

  detect    from the death to the replica knowing of it
            ("known here X ms after it failed"; 0 where it saw it itself)
  promote   from then to the replica carrying on: the others' counts
            heard, its log resent, the teams rebuilt and the collectives
            some member lacked run again ("promoted, Y ms after ...")
  total     detect + promote

The table gives the median and the largest of each over --reps runs per
workload and MPI. Each job's answer is checked against the same job
without a failure. Asserts nothing.

Usage: bench/replica_promote.py [--flavours mpich,openmpi] [--reps 5]
       [--workloads stencil,mw,colls]
"""

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

from replica_p2p import launch  # the launch line, under timeout -k

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACE = {"stencil": "200", "mw": "1000", "colls": "1500"}
ROUNDS = "50"


def run(flavour, what, inject, rundir):
    build = os.path.join(TOP, "build", flavour)
    prog = os.path.join(build, "tests", "mpi", "out", "bin", "replicas")
    if not os.path.exists(prog):
        src = os.path.join(TOP, "tests", "mpi", "progs", "replicas.c")
        prog = os.path.join(rundir, "replicas-" + flavour)
        subprocess.run(["mpicc.%s" % flavour, "-O2", "-o", prog, src], check=True)
    env = {"LD_PRELOAD": os.path.join(build, ".libs", "libftshim.so"),
           "FTSHIM_RUNDIR": os.path.join(rundir, "run"), "FTSHIM_REPLICAS": "2"}
    if inject:
        env["FTSHIM_INJECT"] = inject
    p = subprocess.run(launch(flavour, 6, env, [prog, what, ROUNDS, PACE[what]]),
                       capture_output=True, text=True)
    keep = re.compile(r"^mw rank [1-9]|polls")
    lines = sorted(l for l in p.stdout.splitlines() if not keep.search(l))
    return lines, p.stderr


def one(flavour, what, rundir, answer):
    at = random.randint(600, 1400)
    lines, err = run(flavour, what, "rank=1 copy=primary at=time:%dms" % at, rundir)
    m = re.search(r"ftshim\[(\d+)\] \S+ info: rank 1: primary \(process 1\) lost, replica "
                  r"\(process \d+\) promoted, ([0-9.]+) ms", err)
    if not m:
        return None
    replica, promote = m.group(1), float(m.group(2))
    d = re.search(r"ftshim\[%s\] \S+ info: rank 1 failed: .*?(known here ([0-9.]+) ms after it failed|$)"
                  % replica, err, re.M)
    detect = float(d.group(2)) if d and d.group(2) else 0.0
    return detect, promote, lines == answer


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--workloads", default="stencil,mw,colls")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    random.seed(1)
    print("%-8s %-8s %5s %14s %14s %14s %8s" % ("MPI", "workload", "runs", "detect ms",
                                                 "promote ms", "total ms", "answers"))
    with tempfile.TemporaryDirectory() as rundir:
        for flavour in args.flavours.split(","):
            for what in args.workloads.split(","):
                answer, _ = run(flavour, what, None, rundir)
                got = [one(flavour, what, rundir, answer) for _ in range(args.reps)]
                got = [g for g in got if g]
                if not got:
                    print("%-8s %-8s %5d (no promotion seen)" % (flavour, what, 0))
                    continue
                cols = []
                for i in range(2):
                    v = [g[i] for g in got]
                    cols.append("%6.1f / %5.1f" % (statistics.median(v), max(v)))
                tot = [g[0] + g[1] for g in got]
                cols.append("%6.1f / %5.1f" % (statistics.median(tot), max(tot)))
                ok = sum(1 for g in got if g[2])
                print("%-8s %-8s %5d %14s %14s %14s %5d/%d" % (flavour, what, len(got), cols[0],
                                                              cols[1], cols[2], ok, len(got)))
                sys.stdout.flush()
    print("(median / largest; answers: runs whose output was the failure-free one)")


if __name__ == "__main__":
    main()
