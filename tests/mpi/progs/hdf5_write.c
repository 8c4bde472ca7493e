/* hdf5_write: a checkpoint written the way applications write one, with
 * Debian's parallel HDF5, while a rank dies (issue 22). 4 ranks write
 * one dataset, a step at a time: step s of rank r is a slab of ELEMS
 * doubles, written collectively (H5FD_MPIO_COLLECTIVE, so ROMIO's
 * collective write underneath). The program uses no ULFM call and sets
 * no error handler: HDF5 duplicates MPI_COMM_WORLD for the file.
 *
 *   hdf5_write FILE STEPS [KILLSTEP]
 *
 * Without KILLSTEP every step is written, the file is closed, reopened
 * and read back, and every rank checks its slabs. With KILLSTEP, rank 2
 * dies at that step (SIGKILL, 300 ms after the others went into the
 * write): each survivor must get an error from H5Dwrite, say at which
 * step, close what it opened without waiting on the dead rank (the
 * H5Fclose fails: its flush is collective), and exit with status 1.
 *
 * It leaves with exit(), not MPI_Finalize, and turns HDF5's atexit
 * termination off, because HDF5 1.10 cannot terminate after a failed
 * H5Fclose: it frees the file but keeps its id, and the termination
 * (MPI_Finalize runs it, through an attribute on MPI_COMM_SELF, and so
 * does exit) closes that id again and crashes. */
#include <hdf5.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define VICTIM 2
#define ELEMS (64 * 1024)

static double value(int step, int rank, int i)
{
	return step * 1e6 + rank * 1e5 + i;
}

/* The hyperslab of (step, rank) in the file's STEPS x size x ELEMS. */
static hid_t slab(hid_t space, int step, int rank)
{
	hsize_t start[3] = { (hsize_t)step, (hsize_t)rank, 0 };
	hsize_t count[3] = { 1, 1, ELEMS };

	H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
	return space;
}

int main(int argc, char **argv)
{
	int rank, size, steps, killstep = -1, failed_step = -1, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 3 || size != 4) {
		if (rank == 0)
			fprintf(stderr, "usage: hdf5_write FILE STEPS [KILLSTEP], on 4 ranks\n");
		MPI_Finalize();
		return 2;
	}
	steps = atoi(argv[2]);
	if (argc > 3)
		killstep = atoi(argv[3]);
	/* Before the first HDF5 call, which registers the atexit handler. */
	H5dont_atexit();
	/* The survivors' own line says what failed; HDF5's error stack for
	 * each of the calls that follow would bury it. */
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
	hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	if (file < 0) {
		fprintf(stderr, "rank %d: H5Fcreate %s failed\n", rank, argv[1]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	hsize_t dims[3] = { (hsize_t)steps, (hsize_t)size, ELEMS };
	hsize_t mdims[1] = { ELEMS };
	hid_t fspace = H5Screate_simple(3, dims, NULL);
	hid_t mspace = H5Screate_simple(1, mdims, NULL);
	hid_t dset = H5Dcreate2(file, "checkpoint", H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT,
				H5P_DEFAULT, H5P_DEFAULT);
	hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
	H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
	double *buf = malloc(ELEMS * sizeof *buf);

	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < ELEMS; i++)
			buf[i] = value(s, rank, i);
		if (s == killstep && rank == VICTIM) {
			struct timespec ts = { 0, 300 * 1000000L };

			nanosleep(&ts, NULL);
			raise(SIGKILL);
		}
		if (H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, slab(fspace, s, rank), dxpl, buf) < 0) {
			failed_step = s;
			break;
		}
	}
	if (failed_step >= 0) {
		/* What a program that checks H5Dwrite does: report, close,
		 * leave. None of the closes may wait on the dead rank. */
		printf("rank %d: H5Dwrite failed at step %d\n", rank, failed_step);
		fflush(stdout);
		H5Pclose(dxpl);
		H5Dclose(dset);
		H5Sclose(mspace);
		H5Sclose(fspace);
		herr_t rc = H5Fclose(file);
		H5Pclose(fapl);
		printf("rank %d: H5Fclose %s; exiting\n", rank, rc < 0 ? "failed" : "succeeded");
		fflush(stdout);
		free(buf);
		exit(1);
	}
	if (killstep >= 0)
		fprintf(stderr, "CHECK FAILED rank %d: every write succeeded although rank %d died\n",
			rank, VICTIM);

	/* No failure: read every slab of this rank back from a fresh open. */
	H5Pclose(dxpl);
	H5Dclose(dset);
	H5Fclose(file);
	file = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
	dset = H5Dopen2(file, "checkpoint", H5P_DEFAULT);
	dxpl = H5Pcreate(H5P_DATASET_XFER);
	H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
	for (int s = 0; s < steps; s++) {
		if (H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, slab(fspace, s, rank), dxpl, buf) < 0) {
			fprintf(stderr, "CHECK FAILED rank %d: H5Dread of step %d failed\n", rank, s);
			bad++;
			continue;
		}
		for (int i = 0; i < ELEMS; i++)
			if (buf[i] != value(s, rank, i)) {
				fprintf(stderr, "CHECK FAILED rank %d: step %d element %d is %g, wrote %g\n",
					rank, s, i, buf[i], value(s, rank, i));
				bad++;
				break;
			}
	}
	H5Pclose(dxpl);
	H5Dclose(dset);
	H5Sclose(mspace);
	H5Sclose(fspace);
	H5Fclose(file);
	H5Pclose(fapl);
	free(buf);
	int total = 0;
	MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0 && total == 0 && killstep < 0)
		printf("ALL CHECKS PASSED\n");
	MPI_Finalize();
	return 0;
}
