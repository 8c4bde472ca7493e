"""mpi4py_repl.py: an mpi4py program of lowercase (pickled) calls, for
replication (tests/mpi/cases/replicas_mpi4py.sh). mpi4py receives a
pickled object by MPI_Mprobe and MPI_Mrecv; comm.mprobe and comm.improbe
hand the program the matched message itself. Each round, every rank
sends its right neighbour a dict and a list, receives them by
comm.recv (from its left, then from MPI_ANY_SOURCE and MPI_ANY_TAG), by
comm.mprobe and msg.recv, and by comm.improbe polled and msg.irecv, and
takes part in an allreduce and a bcast of objects. An optional argument
is the number of rounds (default 40), a second one a pause per round in
milliseconds. Each rank prints one line, the same with and without
replicas and failures."""
import sys
import time

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
pause = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.0
right, left = (rank + 1) % size, (rank - 1) % size
total = 0
for it in range(rounds):
    comm.send({"from": rank, "it": it, "data": list(range(rank, rank + 5))}, dest=right, tag=1)
    got = comm.recv(source=left, tag=1)
    total += sum(got["data"]) + got["it"] * (got["from"] + 1)
    comm.send([rank, it, "any"], dest=right, tag=2)
    status = MPI.Status()
    got = comm.recv(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status)
    total += got[0] * 7 + got[1] + status.Get_source() * 11 + status.Get_tag()
    comm.send(("mprobe", rank * it), dest=right, tag=3)
    msg = comm.mprobe(source=left, tag=3)
    total += msg.recv()[1]
    comm.send({"improbe": rank + it}, dest=right, tag=4)
    msg = None
    while msg is None:
        msg = comm.improbe(source=MPI.ANY_SOURCE, tag=4)
    total += msg.irecv().wait()["improbe"]
    total += comm.allreduce(rank + it)
    total += comm.bcast({"it": it * 3} if it % size == rank else None, root=it % size)["it"]
    if pause:
        time.sleep(pause)
print(f"mpi4py rank {rank}: {total}", flush=True)
