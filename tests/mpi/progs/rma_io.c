/* rma_io: one-sided communication and MPI-IO with a dead member (issue
 * 22). 4 ranks; rank 2 is killed with SIGKILL once the window or file
 * exists: "before" the operation (the others wait until ftshim knows),
 * or "during" it (300 ms after the others went into it). The survivors
 * check the error class the operation gives (MPIX_ERR_PROC_FAILED where
 * it depends on rank 2, success where it does not), release the window
 * or file, shrink, and show recovery: a new window (fence, put, fence) or
 * file (collective write) over the shrunk communicator.
 *
 *   rma_io OP before|during DIR
 *
 * The collective reads and writes go through a view that interleaves the
 * ranks' ints, so that each needs every member.
 *
 * OP: win_create, fence, lock_dead (every survivor locks rank 2),
 * lock_alive (each locks a live rank), flush_all, pscw (rank 0 exposes
 * to 1, 2, 3), rput (request-based put to rank 2), file_open,
 * write_at_all, read_at_all, write_all_split (begin/end), write_ordered,
 * set_view. DIR: where the files go. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi-ext.h"
#include "testutil.h"

#define VICTIM 2
#define N 64

static MPI_Comm comm;
static int rank;
static char path[1024];

static const char *class_name(int rc)
{
	int cls = rc;

	if (rc == MPI_SUCCESS)
		return "MPI_SUCCESS";
	MPI_Error_class(rc, &cls);
	if (cls == MPIX_ERR_PROC_FAILED)
		return "MPIX_ERR_PROC_FAILED";
	if (cls == MPIX_ERR_REVOKED)
		return "MPIX_ERR_REVOKED";
	static char other[64];
	snprintf(other, sizeof other, "error class %d", cls);
	return other;
}

/* The victim's end: before, right away; during, once the others are in. */
static void victim_schedule(int during)
{
	MPI_Barrier(comm);
	if (rank == VICTIM) {
		if (during)
			tu_nap_ms(300);
		raise(SIGKILL);
	}
	if (!during)
		tu_await_failure(comm);
}

/* want_failed: 1, MPIX_ERR_PROC_FAILED; 0, success; -1, either. */
static void expect(const char *op, int rc, int want_failed)
{
	printf("rank %d: %s: %s\n", rank, op, class_name(rc));
	fflush(stdout);
	if (want_failed < 0)
		TU_CHECK(rc == MPI_SUCCESS || strcmp(class_name(rc), "MPIX_ERR_PROC_FAILED") == 0,
			 "%s gave %s, not MPI_SUCCESS or MPIX_ERR_PROC_FAILED", op, class_name(rc));
	else if (want_failed)
		TU_CHECK(rc != MPI_SUCCESS && strcmp(class_name(rc), "MPIX_ERR_PROC_FAILED") == 0,
			 "%s gave %s, not MPIX_ERR_PROC_FAILED", op, class_name(rc));
	else
		TU_CHECK(rc == MPI_SUCCESS, "%s gave %s, not MPI_SUCCESS", op, class_name(rc));
}

/* The first error of a sequence of calls. */
#define STEP(rc, call) \
	do { \
		if ((rc) == MPI_SUCCESS) \
			(rc) = (call); \
	} while (0)

static MPI_Win make_win(MPI_Comm c, int **base)
{
	MPI_Win win;

	MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, c, base, &win);
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	for (int i = 0; i < N; i++)
		(*base)[i] = -1;
	return win;
}

static void rma_op(const char *op, int during)
{
	int *base, one = rank, rc = MPI_SUCCESS, want = 1;
	MPI_Win win = MPI_WIN_NULL;

	if (strcmp(op, "win_create") == 0) {
		victim_schedule(during);
		rc = MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &base, &win);
		expect(op, rc, 1);
		if (rc == MPI_SUCCESS)
			MPI_Win_free(&win);
		return;
	}
	win = make_win(comm, &base);
	MPI_Win_fence(0, win);
	victim_schedule(during);
	if (strcmp(op, "fence") == 0) {
		/* Not to rank 2 (see BUGS in ftshim(7)). */
		if ((rank + 1) % 4 != VICTIM)
			STEP(rc, MPI_Put(&one, 1, MPI_INT, (rank + 1) % 4, rank, 1, MPI_INT, win));
		STEP(rc, MPI_Win_fence(0, win));
	} else if (strcmp(op, "lock_dead") == 0 || strcmp(op, "rput") == 0) {
		/* During: again and again until rank 2's death stops it. */
		double end = tu_now_s() + 3;
		do {
			MPI_Request req;
			STEP(rc, MPI_Win_lock(MPI_LOCK_SHARED, VICTIM, 0, win));
			if (op[0] == 'r') {
				STEP(rc, MPI_Rput(&one, 1, MPI_INT, VICTIM, rank, 1, MPI_INT, win, &req));
				STEP(rc, MPI_Wait(&req, MPI_STATUS_IGNORE));
			} else {
				STEP(rc, MPI_Put(&one, 1, MPI_INT, VICTIM, rank, 1, MPI_INT, win));
			}
			STEP(rc, MPI_Win_unlock(VICTIM, win));
		} while (rc == MPI_SUCCESS && tu_now_s() < end);
	} else if (strcmp(op, "lock_alive") == 0) {
		int target = rank == 0 ? 1 : rank == 1 ? 3 : 0;
		for (int i = 0; i < 20 && rc == MPI_SUCCESS; i++) {
			STEP(rc, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
			STEP(rc, MPI_Put(&one, 1, MPI_INT, target, rank, 1, MPI_INT, win));
			STEP(rc, MPI_Win_unlock(target, win));
			tu_nap_ms(25);
		}
		want = 0;
	} else if (strcmp(op, "flush_all") == 0) {
		STEP(rc, MPI_Win_lock_all(0, win));
		STEP(rc, MPI_Put(&one, 1, MPI_INT, (rank + 1) % 4, rank, 1, MPI_INT, win));
		STEP(rc, MPI_Win_flush_all(win));
		if (rc == MPI_SUCCESS)
			tu_nap_ms(during ? 600 : 0);
		STEP(rc, MPI_Win_flush_all(win));
		MPI_Win_unlock_all(win);
	} else if (strcmp(op, "pscw") == 0) {
		MPI_Group world, g;
		MPI_Comm_group(comm, &world);
		if (rank == 0) {
			int others[] = { 1, 2, 3 };
			MPI_Group_incl(world, 3, others, &g);
			STEP(rc, MPI_Win_post(g, 0, win));
			STEP(rc, MPI_Win_wait(win));
		} else {
			int zero = 0;
			MPI_Group_incl(world, 1, &zero, &g);
			STEP(rc, MPI_Win_start(g, 0, win));
			STEP(rc, MPI_Put(&one, 1, MPI_INT, 0, rank, 1, MPI_INT, win));
			STEP(rc, MPI_Win_complete(win));
			want = 0; /* its epoch is with rank 0 only */
		}
		MPI_Group_free(&g);
		MPI_Group_free(&world);
	} else {
		fprintf(stderr, "rma_io: unknown operation %s\n", op);
		exit(2);
	}
	expect(op, rc, want);
	rc = MPI_Win_free(&win);
	TU_CHECK(rc == MPI_SUCCESS && win == MPI_WIN_NULL, "MPI_Win_free: %s", class_name(rc));
}

static void file_op(const char *op, int during)
{
	int buf[N], rc = MPI_SUCCESS;
	MPI_File fh = MPI_FILE_NULL;
	MPI_Offset at = (MPI_Offset)rank * sizeof buf;

	for (int i = 0; i < N; i++)
		buf[i] = rank * N + i;
	if (strcmp(op, "file_open") == 0) {
		victim_schedule(during);
		rc = MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
		expect(op, rc, 1);
		if (rc == MPI_SUCCESS)
			MPI_File_close(&fh);
		return;
	}
	rc = MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
	TU_CHECK(rc == MPI_SUCCESS, "MPI_File_open: %s", class_name(rc));
	if (strstr(op, "all")) {
		/* The ranks' ints interleaved: a collective that needs them all. */
		MPI_Datatype every4;
		MPI_Type_vector(N, 1, 4, MPI_INT, &every4);
		MPI_Type_commit(&every4);
		MPI_File_set_view(fh, rank * sizeof(int), MPI_INT, every4, "native", MPI_INFO_NULL);
		MPI_Type_free(&every4);
		at = 0;
	}
	MPI_File_write_at_all(fh, at, buf, N, MPI_INT, MPI_STATUS_IGNORE);
	victim_schedule(during);
	if (strcmp(op, "write_at_all") == 0) {
		rc = MPI_File_write_at_all(fh, at, buf, N, MPI_INT, MPI_STATUS_IGNORE);
	} else if (strcmp(op, "iwrite_at_all") == 0) {
		MPI_Request req;
		STEP(rc, MPI_File_iwrite_at_all(fh, at, buf, N, MPI_INT, &req));
		STEP(rc, MPI_Wait(&req, MPI_STATUS_IGNORE));
	} else if (strcmp(op, "read_at_all") == 0) {
		rc = MPI_File_read_at_all(fh, at, buf, N, MPI_INT, MPI_STATUS_IGNORE);
	} else if (strcmp(op, "write_all_split") == 0) {
		STEP(rc, MPI_File_write_all_begin(fh, buf, N, MPI_INT));
		STEP(rc, MPI_File_write_all_end(fh, buf, MPI_STATUS_IGNORE));
	} else if (strcmp(op, "write_ordered") == 0) {
		rc = MPI_File_write_ordered(fh, buf, N, MPI_INT, MPI_STATUS_IGNORE);
	} else if (strcmp(op, "set_view") == 0) {
		rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
	} else {
		fprintf(stderr, "rma_io: unknown operation %s\n", op);
		exit(2);
	}
	/* Begun before rank 2 dies, a collective that needs nothing more of
	 * it may complete (Open MPI's does; ULFM reports errors per process). */
	expect(op, rc, during && strstr(op, "all") ? -1 : 1);
	rc = MPI_File_close(&fh);
	TU_CHECK(rc == MPI_SUCCESS && fh == MPI_FILE_NULL, "MPI_File_close: %s", class_name(rc));
}

static int is_file_op(const char *op)
{
	static const char *const ops[] = { "file_open", "write_at_all", "iwrite_at_all", "read_at_all", "write_all_split",
					   "write_ordered", "set_view" };

	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strcmp(op, ops[i]) == 0)
			return 1;
	return 0;
}

/* Recovery over the shrunk communicator s: a window and a file work. */
static void recover(MPI_Comm s)
{
	int srank, ssize, *base, one, buf[N], back[N];
	MPI_Win win;
	MPI_File fh;
	char again[1100];

	MPI_Comm_rank(s, &srank);
	MPI_Comm_size(s, &ssize);
	win = make_win(s, &base);
	one = 1000 + srank;
	MPI_Win_fence(0, win);
	MPI_Put(&one, 1, MPI_INT, (srank + 1) % ssize, srank, 1, MPI_INT, win);
	int rc = MPI_Win_fence(0, win);
	int from = (srank + ssize - 1) % ssize;
	TU_CHECK(rc == MPI_SUCCESS && base[from] == 1000 + from, "new window: %s, got %d", class_name(rc),
		 base[from]);
	MPI_Win_free(&win);

	snprintf(again, sizeof again, "%s.again", path);
	for (int i = 0; i < N; i++)
		buf[i] = srank * N + i;
	rc = MPI_File_open(s, again, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
	TU_CHECK(rc == MPI_SUCCESS, "new file: %s", class_name(rc));
	if (rc != MPI_SUCCESS)
		return;
	MPI_Offset at = (MPI_Offset)srank * sizeof buf;
	rc = MPI_File_write_at_all(fh, at, buf, N, MPI_INT, MPI_STATUS_IGNORE);
	TU_CHECK(rc == MPI_SUCCESS, "new file write: %s", class_name(rc));
	rc = MPI_File_read_at_all(fh, at, back, N, MPI_INT, MPI_STATUS_IGNORE);
	TU_CHECK(rc == MPI_SUCCESS && memcmp(buf, back, sizeof buf) == 0, "new file read back: %s",
		 class_name(rc));
	MPI_File_close(&fh);
}

int main(int argc, char **argv)
{
	MPI_Comm s;

	rank = tu_init(&argc, &argv, 4, 1, "4 ranks and the shim");
	if (argc != 4) {
		if (rank == 0)
			fprintf(stderr, "usage: rma_io OP before|during DIR\n");
		MPI_Finalize();
		return 2;
	}
	const char *op = argv[1];
	int during = strcmp(argv[2], "during") == 0;
	snprintf(path, sizeof path, "%s/%s-%s.dat", argv[3], op, argv[2]);
	MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
	if (is_file_op(op))
		file_op(op, during);
	else
		rma_op(op, during);
	int rc = MPIX_Comm_shrink(comm, &s);
	if (rc == MPI_SUCCESS)
		recover(s);
	MPI_Comm_free(&comm);
	return tu_survivors_finish(rc, s, 3);
}
