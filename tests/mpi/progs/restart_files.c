/* restart_files.c: a program that resumes from its own restart file, as
 * most HPC codes do, and knows nothing of ftshim: rank 0 writes DIR/ckpt
 * atomically (a temporary file renamed over it) every 10 steps, after a
 * barrier, with the next step and the running sum; every rank reads it
 * at start when it is there. Each step adds an allreduce of rank + 1
 * over MPI_COMM_WORLD. Every entry into main after MPI_Init says "in
 * main: rank R of N from step S" on stdout; rank 0 ends with "result:
 * SUM (expected X)".
 *
 * Usage: restart_files DIR STEPS [--nap-ms MS] (MS: a nap per step). */
#include <errno.h>
#include <unistd.h>

#include "testutil.h"

static void read_ckpt(const char *path, long *step, long *sum)
{
	FILE *f = fopen(path, "r");

	*step = 0;
	*sum = 0;
	if (!f)
		return;
	if (fscanf(f, "%ld %ld", step, sum) != 2)
		*step = *sum = 0;
	fclose(f);
}

static void write_ckpt(const char *path, long step, long sum)
{
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%ld %ld\n", step, sum);
	fflush(f);
	fsync(fileno(f));
	fclose(f);
	rename(tmp, path);
}

int main(int argc, char **argv)
{
	int rank, size;

	if (argc < 3) {
		fprintf(stderr, "usage: restart_files DIR STEPS [--nap-ms MS]\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	char path[4096];
	snprintf(path, sizeof path, "%s/ckpt", argv[1]);
	long steps = atol(argv[2]), nap = 0, step, sum;
	for (int i = 3; i + 1 < argc; i++)
		if (strcmp(argv[i], "--nap-ms") == 0)
			nap = atol(argv[i + 1]);
	read_ckpt(path, &step, &sum);
	printf("in main: rank %d of %d from step %ld\n", rank, size, step);
	fflush(stdout);
	MPI_Comm work;
	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	for (; step < steps; step++) {
		int mine = rank + 1, all = 0;
		MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, work);
		sum += all;
		if (nap)
			tu_nap_ms(nap);
		if ((step + 1) % 10 == 0) {
			MPI_Barrier(work);
			if (rank == 0)
				write_ckpt(path, step + 1, sum);
		}
	}
	MPI_Comm_free(&work);
	if (rank == 0)
		printf("result: %ld (expected %ld)\n", sum, steps * (long)size * (size + 1) / 2);
	MPI_Finalize();
	return 0;
}
