/* demo.c: the ftshim demo, an ordinary MPI program (built with plain
 * mpicc) that loses a rank and survives. Every rank works through ten
 * steps; dev/demo has ftshim kill rank 2 at step 3 (FTSHIM_INJECT). The
 * others keep working, learn of the death from the shim, build a
 * communicator of the survivors (MPI_Comm_create_group, which needs none
 * of the dead), and finish with a reduction over it.
 *
 * It finds the shim's API with dlsym, so it also runs without the shim
 * (and then, without a failure, over all ranks). */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	void (*point)(const char *, long) =
		(void (*)(const char *, long))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_inject_point");
	int (*failed_ranks)(int *, int) =
		(int (*)(int *, int))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_failed_ranks");

	/* The work: ten steps of local computation. */
	double partial = 0;
	for (int step = 1; step <= 10; step++) {
		if (point)
			point("step", step); /* where FTSHIM_INJECT may strike */
		for (int i = 0; i < 1000; i++)
			partial += 1.0 / (1.0 + rank * 1000 + i + step);
		nap_ms(100);
	}

	/* Who is still here? The shim knows; every survivor knows the same. */
	int *failed = calloc(size, sizeof *failed), nfailed = 0;
	if (failed_ranks)
		nfailed = failed_ranks(failed, size);
	int *alive = malloc(size * sizeof *alive), nalive = 0;
	for (int r = 0, f = 0; r < size; r++) {
		if (f < nfailed && failed[f] == r)
			f++;
		else
			alive[nalive++] = r;
	}
	MPI_Group world, living;
	MPI_Comm survivors;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, nalive, alive, &living);
	MPI_Comm_create_group(MPI_COMM_WORLD, living, 1, &survivors);

	double total = 0;
	int srank;
	MPI_Allreduce(&partial, &total, 1, MPI_DOUBLE, MPI_SUM, survivors);
	MPI_Comm_rank(survivors, &srank);
	if (srank == 0) {
		printf("demo: %d of %d ranks finished", nalive, size);
		for (int i = 0; i < nfailed; i++)
			printf("%s%d", i ? "," : "; lost rank(s) ", failed[i]);
		printf("; the survivors' sum is %.6f\n", total);
	}
	MPI_Comm_free(&survivors);
	MPI_Group_free(&living);
	MPI_Group_free(&world);
	MPI_Finalize();
	return 0;
}
