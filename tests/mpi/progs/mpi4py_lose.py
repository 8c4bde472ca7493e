"""mpi4py_lose.py: a Python job (mpi4py) that loses a rank and goes on.

Usage: python3 mpi4py_lose.py [--iters N]

On 4 ranks: rank 2 kills itself (SIGKILL) after a barrier, while the
others wait for a message from it in Comm.Recv, which must raise
MPI.Exception with MPI_ERR_PROC_FAILED. Each survivor prints "recv line N"
(the line of that Recv) and "rank R caught MPI_ERR_PROC_FAILED (class C)";
the survivors shrink MPI_COMM_WORLD through the ULFM calls of ftshim, as
docs/python.md shows them (ctypes: Debian's mpi4py has no ULFM methods), run
N allreduces on what is left (default 200), and rank 0 of it prints ALL
CHECKS PASSED. Exit status 1 if a check failed here.
"""
import array
import ctypes
import inspect
import os
import signal
import sys
import time

from mpi4py import MPI

# --- The ULFM calls through ftshim, as docs/python.md gives them. ---
_lib = ctypes.CDLL(None)  # the process's symbols: ftshim's MPIX_* among them
_Handle = ctypes.c_void_p if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_void_p) else ctypes.c_int


def _handle(comm):
    return _Handle(MPI._handleof(comm))


def _check(rc):
    if rc != MPI.SUCCESS:
        raise MPI.Exception(rc)


def comm_failure_ack(comm):
    _check(_lib.MPIX_Comm_failure_ack(_handle(comm)))


def comm_revoke(comm):
    _check(_lib.MPIX_Comm_revoke(_handle(comm)))


def comm_agree(comm, flag):
    value = ctypes.c_int(flag)
    _check(_lib.MPIX_Comm_agree(_handle(comm), ctypes.byref(value)))
    return value.value


def comm_shrink(comm):
    shrunk = MPI.Intracomm()
    _check(_lib.MPIX_Comm_shrink(_handle(comm), ctypes.c_void_p(MPI._addressof(shrunk))))
    return shrunk
# --- end of docs/python.md's part ---


def main():
    iters = int(sys.argv[sys.argv.index("--iters") + 1]) if "--iters" in sys.argv else 200
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    failures = 0
    if size != 4:
        print("mpi4py_lose.py: needs 4 ranks", file=sys.stderr)
        return 2
    world.Barrier()
    if rank == 2:
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)
    buf = array.array("i", [0])
    print("recv line %d" % (inspect.currentframe().f_lineno + 2), flush=True)
    try:
        world.Recv([buf, MPI.INT], source=2, tag=5)
        print("CHECK FAILED rank %d: the receive from the dead rank returned" % rank, file=sys.stderr)
        failures += 1
    except MPI.Exception as e:
        name = e.Get_error_string().split(":")[0]
        print("rank %d caught %s (class %d)" % (rank, name, e.Get_error_class()), flush=True)
        if name != "MPI_ERR_PROC_FAILED":
            print("CHECK FAILED rank %d: %s" % (rank, e), file=sys.stderr)
            failures += 1
    comm_failure_ack(world)
    live = comm_shrink(world)
    if live.Get_size() != 3:
        print("CHECK FAILED rank %d: shrunk to %d" % (rank, live.Get_size()), file=sys.stderr)
        failures += 1
    for i in range(iters):
        total = live.allreduce(rank)
        if total != 0 + 1 + 3:
            print("CHECK FAILED rank %d: allreduce %d gave %d" % (rank, i, total), file=sys.stderr)
            failures += 1
            break
    # Everyone agrees on whether all checks passed here (agree: AND).
    ok = comm_agree(live, 1 if failures == 0 else 0)
    if live.Get_rank() == 0:
        print("ALL CHECKS PASSED" if ok else "CHECKS FAILED", flush=True)
    live.Free()
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
