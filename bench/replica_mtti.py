#!/usr/bin/env python3
"""bench/replica_mtti.py: mean time to interruption (MTTI) of a job
against its replication degree, as PartRePer's Figure 9(b) (seed 001;
issue 16), from real short jobs.

A paced stencil (tests/mpi/progs/replicas.c) of --ranks program ranks
runs under ftshim with FTSHIM_REPLICAS set to each --degrees value (0:
not set). This script is the fault injector, and, like PartRePer's, it
runs beside the job: it draws the times between failures from a Weibull
distribution (--scale, --shape; one stream of failures for the whole
job, as PartRePer's), and at each one SIGKILLs a process drawn at random
among the job's live processes (primaries, replicas and ranks with one
copy alike). A kill is survived when the process's rank still has a
live copy; the job is interrupted when it has none, and the program
then gets the ULFM error (fatal here) and ends. A job's time to
interruption runs from the end of its MPI_Init (a second after its run
directory lists every process: a death inside the MPI's own MPI_Init is
the documented fail-stop, exit status 76, which this does not measure)
to the interrupting kill; a job that finishes first counts its
whole run (censored, as PartRePer's 100% runs were).

For each degree: the mean and median time to interruption over --reps
runs, the number of kills survived per run, and what the same failure
stream gives in a model (Monte Carlo over 100,000 draws: the same
Weibull times, the same random choice of processes, the job's length as
measured without failures). Every run is checked: a job must go on
after each kill its rank survives, and end with the ULFM error naming
the interrupted rank. Asserts nothing; a run that breaks a check is
listed, and its output and log kept (the path is printed).

Usage: bench/replica_mtti.py [--flavours mpich,openmpi] [--reps 10]
       [--ranks 4] [--degrees 0,25%,50%,100%] [--scale 1.5] [--shape 0.7]
       [--seed 1]
"""

import argparse
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

from replica_p2p import launch  # the launch line, under timeout -k

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The stencil: 200 * ROUNDS steps of PACE_US each, about 30 s without
# failures (it must outlast most interruptions).
ROUNDS, PACE_US = "15", "10000"


def replicas_for(degree, n):
    """FTSHIM_REPLICAS's count for a degree ("0", "2", "50%")."""
    if degree.endswith("%"):
        return math.ceil(n * float(degree[:-1]) / 100)
    return int(degree)


def read_ranks(rundir):
    """job rank -> (pid, program rank), from the run directory; None
    until MPI_Init has written it."""
    for job in os.listdir(rundir) if os.path.isdir(rundir) else []:
        path = os.path.join(rundir, job, "ranks")
        if not os.path.exists(path):
            continue
        procs = {}
        for line in open(path):
            f = line.split()
            if len(f) < 3:
                continue
            m = re.search(r"replica-of=(\d+)", line)
            procs[int(f[0])] = (int(f[2]), int(m.group(1)) if m else int(f[0]))
        return procs
    return None


def one_run(flavour, prog, n, degree, args, rng, work):
    """One job, killed until interrupted or finished: (time to
    interruption or None, run time, kills survived, problem or None)."""
    r = replicas_for(degree, n)
    rundir = os.path.join(work, "run")
    shutil.rmtree(rundir, ignore_errors=True)
    env = {"LD_PRELOAD": os.path.join(TOP, "build", flavour, ".libs", "libftshim.so"),
           "FTSHIM_RUNDIR": rundir}
    if r:
        env["FTSHIM_REPLICAS"] = str(r)
    with open(os.path.join(work, "out"), "w") as out, open(os.path.join(work, "err"), "w") as err:
        job = subprocess.Popen(launch(flavour, n + r, env, [prog, "stencil", ROUNDS, PACE_US]),
                               stdout=out, stderr=err)
    try:
        return kill_until_interrupted(job, rundir, n + r, args, rng, err.name)
    finally:
        # A run given up on leaves nothing running (timeout passes SIGTERM on).
        if job.poll() is None:
            job.terminate()
            try:
                job.wait(timeout=10)
            except subprocess.TimeoutExpired:
                job.kill()
                job.wait()


def kill_until_interrupted(job, rundir, nprocs, args, rng, errfile):
    """one_run's injector, once job has started."""
    procs = None
    while procs is None or len(procs) < nprocs:
        if job.poll() is not None:
            return None, 0, 0, "ended before MPI_Init was done"
        time.sleep(0.01)
        procs = read_ranks(rundir)
    time.sleep(1.0)  # every process out of MPI_Init
    t0 = time.monotonic()
    live = dict(procs)
    copies = {}
    for w, (_, l) in procs.items():
        copies[l] = copies.get(l, 0) + 1
    survived, next_kill = 0, t0 + rng.weibullvariate(args.scale, args.shape)
    while True:
        if job.poll() is not None:
            # Finished before it was interrupted: cleanly, or it is a
            # problem. (Not by its status: Hydra reports the processes
            # killed, and Open MPI's mpirun exits 0 whatever its ranks did.)
            text = open(errfile).read()
            clean = not re.search(r"ftshim\[\d+\] \S+ error: |MPI_ERR", text)
            return None, time.monotonic() - t0, survived, \
                None if clean else "ended after %d kills, status %d" % (survived, job.returncode)
        now = time.monotonic()
        if now < next_kill:
            time.sleep(min(0.005, next_kill - now))
            continue
        w = rng.choice(sorted(live))
        pid, l = live.pop(w)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return None, now - t0, survived, "process %d (rank %d) was already gone" % (w, l)
        copies[l] -= 1
        if copies[l] > 0:
            survived += 1
            next_kill = now + rng.weibullvariate(args.scale, args.shape)
            continue
        # Interrupted: the job must end by itself, with the ULFM error.
        try:
            job.wait(timeout=30)
        except subprocess.TimeoutExpired:
            job.kill()
            job.wait()
            return now - t0, now - t0, survived, "did not end within 30 s of rank %d's loss" % l
        text = open(errfile).read()
        if not re.search(r"MPI_ERR_PROC_FAILED|MPIX_ERR_PROC_FAILED", text):
            return now - t0, now - t0, survived, "ended without the ULFM error"
        return now - t0, now - t0, survived, None


def model(n, r, length, args, rng, draws=100000):
    """Mean time to interruption (censored at length) by Monte Carlo."""
    total = 0.0
    for _ in range(draws):
        live = [2] * r + [1] * (n - r)  # copies per rank
        procs = [l for l in range(n) for _ in range(live[l])]
        t = 0.0
        while True:
            t += rng.weibullvariate(args.scale, args.shape)
            if t >= length:
                t = length
                break
            l = procs.pop(rng.randrange(len(procs)))
            live[l] -= 1
            if live[l] == 0:
                break
        total += t
    return total / draws


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--degrees", default="0,25%,50%,100%")
    ap.add_argument("--scale", type=float, default=1.5, help="Weibull scale, seconds")
    ap.add_argument("--shape", type=float, default=0.7, help="Weibull shape")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="ftshim-mtti-")
    print("MTTI against replication degree: %d program ranks, a paced stencil of about %d s;"
          % (args.ranks, int(ROUNDS) * 200 * int(PACE_US) // 1000000))
    print("failures: Weibull(scale %.2f s, shape %.2f) between kills of random live processes; "
          "%d runs each" % (args.scale, args.shape, args.reps))
    print("%-8s %-7s %6s %10s %10s %10s %9s %10s %s" % (
        "MPI", "degree", "procs", "MTTI s", "median s", "model s", "survived", "finished", "problems"))
    length = int(ROUNDS) * 200 * int(PACE_US) / 1e6
    for flavour in args.flavours.split(","):
        prog = os.path.join(TOP, "build", flavour, "tests", "mpi", "out", "bin", "replicas")
        if not os.path.exists(prog):
            src = os.path.join(TOP, "tests", "mpi", "progs", "replicas.c")
            prog = os.path.join(work, "replicas-" + flavour)
            subprocess.run(["mpicc.%s" % flavour, "-O2", "-o", prog, src], check=True)
        for degree in args.degrees.split(","):
            r = replicas_for(degree, args.ranks)
            times, kills, finished, problems = [], [], 0, []
            for _ in range(args.reps):
                tti, run_time, survived, problem = one_run(flavour, prog, args.ranks, degree,
                                                           args, rng, work)
                if problem:
                    kept = tempfile.mkdtemp(prefix="ftshim-mtti-problem-")
                    for name in ("out", "err"):
                        shutil.copy(os.path.join(work, name), kept)
                    shutil.copytree(os.path.join(work, "run"), os.path.join(kept, "run"),
                                    dirs_exist_ok=True)
                    problems.append("%s (%s)" % (problem, kept))
                    continue
                if tti is None:
                    finished += 1
                    length = max(length, run_time)
                times.append(tti if tti is not None else run_time)
                kills.append(survived)
            mean = statistics.mean(times) if times else float("nan")
            med = statistics.median(times) if times else float("nan")
            print("%-8s %-7s %6d %10.2f %10.2f %10.2f %9.1f %10d %s" % (
                flavour, degree, args.ranks + r, mean, med,
                model(args.ranks, r, length, args, random.Random(args.seed)),
                statistics.mean(kills) if kills else float("nan"), finished,
                "; ".join(sorted(set(problems))) or "-"), flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
