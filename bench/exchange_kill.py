#!/usr/bin/env python3
"""bench/exchange_kill.py: does a survivor freeze when a sender dies on
its host? (issue 39, item 2.) Runs bench/exchange_kill.c under the shim
of each MPI built by dev/setup, many times: RANKS ranks on this host
exchange 8-byte messages with every other as fast as they can, one
random rank is SIGKILLed at a random time (FTSHIM_INJECT, 0.2-1.5 s
after the job is up); --bytes and --depth set each message's size and
how many each pair has in flight per round, and the survivors revoke, shrink and exchange
--rounds more rounds. A job ends well when every survivor prints
"survived RANKS-1"; it is frozen when it is still running after --limit
seconds (then killed, with its seed printed to rerun it). With
--reserve the victim kills itself instead, at the same random time, in
the middle of a send to every other rank of the host: it reserves the
next slot of each one's UCX receive queue first and never fills it
(tests/mpi/progs/ucx_reserve.h), which freezes them all unless ftshim
repairs the queues. Prints, per MPI, the jobs that ended well, the
frozen ones and the others, the median time of the good ones, and the
queues ftshim repaired (its "filled the slot" lines). Asserts nothing.

Usage: bench/exchange_kill.py [--flavours mpich,openmpi] [--runs 200]
                              [--ranks 6] [--rounds 2000] [--limit 60]
                              [--bytes 8] [--depth 1] [--seed 1]
                              [--reserve]
"""
import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPICC = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi"}


def command(flavour, nprocs, env, argv):
    """The launch line of flavour's build for nprocs ranks, with the shim
    and the ranks' environment env (a dict)."""
    shim = os.path.join(TOP, "build", flavour, ".libs", "libftshim.so")
    env = dict(env, LD_PRELOAD=shim)
    if flavour == "mpich":
        cmd = ["mpiexec.hydra", "-disable-auto-cleanup", "-n", str(nprocs)]
        for k, v in env.items():
            cmd += ["-genv", k, v]
    else:
        cmd = ["mpirun.openmpi", "--oversubscribe", "--enable-recovery", "-n", str(nprocs)]
        for k, v in env.items():
            cmd += ["-x", f"{k}={v}"]
        if os.getuid() == 0:
            cmd.append("--allow-run-as-root")
    return cmd + argv


def one_job(cmd, cwd, limit):
    """(seconds, stdout, stderr, hung)."""
    t0 = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, start_new_session=True)
        hung = False
        try:
            p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            hung = True
        out.seek(0)
        err.seek(0)
        return time.monotonic() - t0, out.read(), err.read(), hung


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--ranks", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--limit", type=float, default=60)
    ap.add_argument("--bytes", type=int, default=8)
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reserve", action="store_true")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    want = f"survived {args.ranks - 1}"
    with tempfile.TemporaryDirectory() as tmp:
        for flavour in args.flavours.split(","):
            exe = os.path.join(tmp, f"exchange_kill_{flavour}")
            subprocess.run([MPICC[flavour], "-O2", "-I", os.path.join(TOP, "include"), "-o", exe,
                            os.path.join(TOP, "bench", "exchange_kill.c")], check=True)
            good, frozen, other, times, repaired = 0, [], [], [], 0
            for run in range(args.runs):
                victim = rng.randrange(args.ranks)
                at_ms = rng.randint(200, 1500)
                argv = [exe, str(args.rounds), str(args.bytes), str(args.depth)]
                if args.reserve:
                    inject = f"victim {victim} reserves and dies at {at_ms} ms"
                    env = {}
                    argv += [str(victim), str(at_ms)]
                else:
                    inject = f"rank={victim} at=time:{at_ms}ms"
                    env = {"FTSHIM_INJECT": inject}
                secs, out, err, hung = one_job(command(flavour, args.ranks, env, argv), tmp, args.limit)
                repaired += err.count("filled the slot")
                if hung:
                    frozen.append(inject)
                elif out.count(want) == args.ranks - 1:
                    good += 1
                    times.append(secs)
                else:
                    other.append(inject)
            med = f"{statistics.median(times):.1f} s" if times else "-"
            print(f"{flavour}: {args.runs} jobs of {args.ranks} ranks, {args.depth} x {args.bytes} B "
                  f"per pair and round, {args.rounds} rounds after the kill: {good} survived (median {med}), {len(frozen)} frozen, "
                  f"{len(other)} other; {repaired} process(es) repaired their queues")
            for what, runs in (("frozen", frozen), ("other", other)):
                for inject in runs:
                    print(f"  {what}: {inject}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
