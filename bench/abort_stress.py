#!/usr/bin/env python3
"""bench/abort_stress.py: MPI_Abort must end every rank, every time. Runs
tests/mpi/progs/errh.c in its abort-spin modes many times with each MPI
built by dev/setup (build/mpich, build/openmpi): rank 0 calls MPI_Abort
(right after MPI_Init, or after a barrier) while the other ranks compute
without calling MPI for 30 s. Prints, per MPI and mode, how many jobs
ended by the abort, how many hung (still running after --limit seconds,
then killed) and the median and worst time to the end of the job. Asserts
nothing (the errhandler case runs a short loop of the same in make check).

Usage: bench/abort_stress.py [--flavours mpich,openmpi] [--runs 100]
                             [--ranks 2] [--limit 15]
                             [--modes abort-spin-early,abort-spin]
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG_SRC = os.path.join(TOP, "tests", "mpi", "progs", "errh.c")
MPICC = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi"}


def launch(flavour, nprocs, argv):
    shim = os.path.join(TOP, "build", flavour, ".libs", "libftshim.so")
    if flavour == "mpich":
        cmd = ["mpiexec.hydra", "-disable-auto-cleanup", "-n", str(nprocs),
               "-genv", "LD_PRELOAD", shim]
    else:
        cmd = ["mpirun.openmpi", "--oversubscribe", "--enable-recovery", "-n", str(nprocs),
               "-x", "LD_PRELOAD=" + shim]
        if os.getuid() == 0:
            cmd.append("--allow-run-as-root")
    return cmd + argv


def one_job(cmd, cwd, limit):
    """(seconds, hung): run cmd in its own process group, killed after limit."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        p.wait(timeout=limit)
        return time.monotonic() - t0, False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        return time.monotonic() - t0, True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--limit", type=float, default=15.0)
    ap.add_argument("--modes", default="abort-spin-early,abort-spin")
    args = ap.parse_args()
    if args.runs < 1 or args.ranks < 2 or args.limit <= 0:
        sys.exit("abort_stress: --runs >= 1, --ranks >= 2 and --limit > 0, please")
    modes = args.modes.split(",")
    for m in modes:
        if m not in ("abort-spin-early", "abort-spin"):
            sys.exit("abort_stress: --modes: %s is not one of abort-spin-early, abort-spin" % m)
    print("| MPI | mode | ranks | jobs | ended | hung | median s | worst s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for flavour in args.flavours.split(","):
            if flavour not in MPICC:
                sys.exit("abort_stress: --flavours: %s is not mpich or openmpi" % flavour)
            prog = os.path.join(tmp, "errh-" + flavour)
            subprocess.run([MPICC[flavour], "-std=gnu11", "-O1", "-o", prog, PROG_SRC, "-ldl"],
                           check=True)
            for mode in modes:
                times, hung = [], 0
                for _ in range(args.runs):
                    secs, h = one_job(launch(flavour, args.ranks, [prog, mode]), tmp, args.limit)
                    hung += h
                    if not h:
                        times.append(secs)
                med = "%.2f" % statistics.median(times) if times else "-"
                worst = "%.2f" % max(times) if times else "-"
                print("| %s | %s | %d | %d | %d | %d | %s | %s |" % (
                    flavour, mode, args.ranks, args.runs, len(times), hung, med, worst),
                    flush=True)


if __name__ == "__main__":
    main()
