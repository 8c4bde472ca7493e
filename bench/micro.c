/* micro.c: the micro-benchmarks of bench/overhead.py. One measurement
 * per run, printed by rank 0 as "NAME VALUE UNIT":
 *
 *   micro pingpong BYTES ITERS   half the round-trip time of ranks 0 and 1, us
 *   micro bandwidth BYTES ITERS  rank 0 streams to rank 1 (window 16), MB/s
 *   micro allreduce ITERS        8-byte MPI_Allreduce over all ranks, us
 *   micro barrier ITERS          MPI_Barrier over all ranks, us
 *   micro putflush ITERS         8-byte MPI_Put and MPI_Win_flush to the
 *                                next rank, in one lock_all epoch, us
 *   micro commdup ITERS          MPI_Comm_dup of MPI_COMM_WORLD and
 *                                MPI_Comm_free, us
 *   micro commsplit ITERS        MPI_Comm_split of MPI_COMM_WORLD in two
 *                                and MPI_Comm_free, us
 *   micro stencil BYTES ITERS    one step of a 1-D stencil: BYTES of halo
 *                                to and from both ring neighbours
 *                                (nonblocking, MPI_Waitall), then an
 *                                8-byte MPI_Allreduce of the residual, us
 *   micro iowrite BYTES ITERS    MPI_File_write_at_all of BYTES per rank
 *                                to a file in $TMPDIR (or /tmp), MB/s of
 *                                all ranks together
 *
 * Each repeats its loop five times after a warm-up and prints the best
 * (the machine is shared and noisy; the script takes medians across runs). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double pingpong(int rank, char *buf, int bytes, int iters)
{
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		if (rank == 0) {
			MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) / iters / 2 * 1e6;
}

static double bandwidth(int rank, char *buf, int bytes, int iters)
{
	enum { WINDOW = 16 };
	MPI_Request r[WINDOW];
	char ack;

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		for (int w = 0; w < WINDOW; w++) {
			if (rank == 0)
				MPI_Isend(buf, bytes, MPI_BYTE, 1, w, MPI_COMM_WORLD, &r[w]);
			else if (rank == 1)
				MPI_Irecv(buf, bytes, MPI_BYTE, 0, w, MPI_COMM_WORLD, &r[w]);
		}
		if (rank < 2)
			MPI_Waitall(WINDOW, r, MPI_STATUSES_IGNORE);
		if (rank == 1)
			MPI_Send(&ack, 1, MPI_BYTE, 0, 99, MPI_COMM_WORLD);
		else if (rank == 0)
			MPI_Recv(&ack, 1, MPI_BYTE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	double secs = MPI_Wtime() - t0;
	return (double)bytes * WINDOW * iters / secs / 1e6;
}

static double allreduce(int iters)
{
	double in = 1, out;

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++)
		MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	return (MPI_Wtime() - t0) / iters * 1e6;
}

static double stencil(int rank, int size, char *buf, int bytes, int iters)
{
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	char *in = malloc(2 * (size_t)bytes + 1);
	double residual = 1, sum;

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		MPI_Request r[4];
		MPI_Irecv(in, bytes, MPI_BYTE, left, 0, MPI_COMM_WORLD, &r[0]);
		MPI_Irecv(in + bytes, bytes, MPI_BYTE, right, 1, MPI_COMM_WORLD, &r[1]);
		MPI_Isend(buf, bytes, MPI_BYTE, right, 0, MPI_COMM_WORLD, &r[2]);
		MPI_Isend(buf, bytes, MPI_BYTE, left, 1, MPI_COMM_WORLD, &r[3]);
		MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
		MPI_Allreduce(&residual, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	free(in);
	return (MPI_Wtime() - t0) / iters * 1e6;
}

static double barrier(int iters)
{
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	return (MPI_Wtime() - t0) / iters * 1e6;
}

/* A creation and its free (split: odd and even ranks). */
static double creation(int split, int rank, int iters)
{
	MPI_Comm c;

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		if (split)
			MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
		else
			MPI_Comm_dup(MPI_COMM_WORLD, &c);
		MPI_Comm_free(&c);
	}
	return (MPI_Wtime() - t0) / iters * 1e6;
}

static double putflush(MPI_Win win, int rank, int size, int iters)
{
	double one = rank;
	int to = (rank + 1) % size;

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		MPI_Put(&one, 1, MPI_DOUBLE, to, 0, 1, MPI_DOUBLE, win);
		MPI_Win_flush(to, win);
	}
	return (MPI_Wtime() - t0) * 1e6 / iters;
}

static double iowrite(MPI_File fh, int rank, int size, char *buf, int bytes, int iters)
{
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++)
		MPI_File_write_at_all(fh, ((MPI_Offset)i * size + rank) * bytes, buf, bytes, MPI_BYTE,
				      MPI_STATUS_IGNORE);
	double t = MPI_Wtime() - t0;
	MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return (double)bytes * iters * size / t / 1e6;
}

int main(int argc, char **argv)
{
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc < 3) {
		if (rank == 0)
			fprintf(stderr, "usage: micro pingpong|bandwidth|iowrite|stencil BYTES ITERS | "
					"allreduce|barrier|putflush|commdup|commsplit ITERS\n");
		MPI_Finalize();
		return 2;
	}
	const char *what = argv[1];
	int two = !strcmp(what, "pingpong") || !strcmp(what, "bandwidth") || !strcmp(what, "iowrite") ||
		  !strcmp(what, "stencil");
	int bytes = two ? atoi(argv[2]) : 8;
	int iters = atoi(argv[two ? 3 : 2]);
	char *buf = calloc(1, bytes > 0 ? (size_t)bytes : 1);
	double best = 0, v = 0;
	int higher_better = !strcmp(what, "bandwidth") || !strcmp(what, "iowrite");
	int size;
	MPI_Win win = MPI_WIN_NULL;
	MPI_File fh = MPI_FILE_NULL;
	char path[4096];

	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!strcmp(what, "putflush")) {
		double *base;
		MPI_Win_allocate(sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
		MPI_Win_lock_all(0, win);
	} else if (!strcmp(what, "iowrite")) {
		const char *dir = getenv("TMPDIR");
		int pid = rank == 0 ? (int)getpid() : 0;
		MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
		snprintf(path, sizeof path, "%s/ftshim-micro-%d.dat", dir ? dir : "/tmp", pid);
		MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
			      MPI_INFO_NULL, &fh);
	}

	for (int round = -1; round < 5; round++) {
		if (!strcmp(what, "pingpong"))
			v = pingpong(rank, buf, bytes, iters);
		else if (!strcmp(what, "bandwidth"))
			v = bandwidth(rank, buf, bytes, iters);
		else if (!strcmp(what, "allreduce"))
			v = allreduce(iters);
		else if (!strcmp(what, "commdup") || !strcmp(what, "commsplit"))
			v = creation(!strcmp(what, "commsplit"), rank, iters);
		else if (!strcmp(what, "putflush"))
			v = putflush(win, rank, size, iters);
		else if (!strcmp(what, "iowrite"))
			v = iowrite(fh, rank, size, buf, bytes, iters);
		else if (!strcmp(what, "stencil"))
			v = stencil(rank, size, buf, bytes, iters);
		else
			v = barrier(iters);
		if (round == 0 || (round > 0 && (higher_better ? v > best : v < best)))
			best = v;
	}
	if (rank == 0)
		printf("%s %.4f %s\n", what, best, higher_better ? "MB/s" : "us");
	if (win != MPI_WIN_NULL) {
		MPI_Win_unlock_all(win);
		MPI_Win_free(&win);
	}
	if (fh != MPI_FILE_NULL)
		MPI_File_close(&fh);
	free(buf);
	MPI_Finalize();
	return 0;
}
