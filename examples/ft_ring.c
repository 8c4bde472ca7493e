/* ft_ring.c: the fault-tolerant ring of Hursey and Graham ("Building a
 * Fault Tolerant MPI Application: A Ring Communication Example", 2011),
 * written against the ULFM API as a ULFM user would: MPI_ERRORS_RETURN,
 * every return code checked, MPIX_Comm_revoke, MPIX_Comm_agree and
 * MPIX_Comm_shrink to recover. The root (the lowest live rank) sends a
 * message around the ring once per iteration; every other process
 * receives it from its left, adds one to it and passes it to its right.
 * The ring runs through the failure of any process, the root included,
 * and completes every iteration exactly once; the root that finishes
 * prints one line, e.g.
 *
 *     ft_ring: 50 iterations completed, each once; survivors 4 of 5; lost ranks 2; root world rank 0; 1 recovery, 3 duplicates dropped
 *
 * and every survivor exits 0. Usage: ft_ring [ITERATIONS] (default 50).
 * Each process marks each iteration it handles with
 * ftshim_inject_point("iteration", i), so that a test can kill a rank at a
 * chosen iteration (FTSHIM_INJECT="rank=2 at=point:iteration:20"), and
 * holds the message a few milliseconds, so that failures land mid-run.
 *
 * Recovery. The paper repairs the ring locally (a process skips a failed
 * neighbour and resends) and detects termination with a nonblocking
 * agreement (MPIX_Comm_iagree) that runs while the ring still repairs
 * itself. That needs every process to resend and poll the agreement at
 * once; this ring repairs globally instead, which is simpler to follow
 * and uses the same messages:
 *
 *   - Any process whose operation fails (a dead neighbour:
 *     MPIX_ERR_PROC_FAILED; or MPIX_ERR_REVOKED) revokes the ring's
 *     communicator, which interrupts every survivor's pending receive.
 *     Every failure is seen by someone: every live process is always
 *     waiting on its left neighbour, so the first survivor to the right of
 *     a dead one gets MPIX_ERR_PROC_FAILED.
 *   - The survivors agree (MPIX_Comm_agree) on whether the ring finished,
 *     and shrink the communicator (MPIX_Comm_shrink: same order, so the
 *     new rank 0, the new root, is the lowest live rank).
 *   - Each survivor resends, on the new communicator, the last message it
 *     sent. A message in flight is always its sender's last (a process
 *     sends iteration i+1 only after i came round), so this recreates any
 *     message lost with the revoked communicator or a dead process.
 *   - Duplicates, which the resends make, are dropped with the iteration
 *     marker the message carries: a process that already passed on
 *     iteration i drops i again (the paper's figure 9, lines 24-28).
 *   - A new root takes over as the paper describes: it waits for the last
 *     message it passed on to come back round (its left neighbour resends
 *     it), counts that iteration complete and starts the next.
 *
 * Termination uses the same path: the root that sees the last iteration
 * come back revokes the communicator; in the agreement it says "finished"
 * and everyone stops. Should it die before the agreement, nobody alive
 * says "finished": the survivors shrink and go on, and the new root sees
 * the last iteration come back and finishes instead.
 *
 * It finds ftshim_inject_point with dlsym, so it also builds and runs
 * without the shim, given an MPI that has the ULFM calls. */
#include <dlfcn.h>
#include <mpi.h>
#include <mpi-ext.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DEFAULT_ITERATIONS 50
#define HOLD_MS 3 /* how long each process holds the message */
#define TAG_RING 1

/* The message: the paper's ring_msg_t, whose value is here the count
 * that lets the root check that no iteration completed twice or never. */
struct ring_msg {
	int marker; /* the iteration: tells duplicates from news */
	int done;   /* iterations completed before the root started this one */
};
#define RING_MSG_INTS ((int)(sizeof(struct ring_msg) / sizeof(int)))

/* The bits of the agreement after every failure: a bitwise AND, so each
 * bit is 0 when any survivor says so. */
#define AGREE_UNFINISHED 1 /* 0: a root saw the last iteration complete */
#define AGREE_CLEAN 2      /* 0: a process saw what a correct ring never does */

/* What one process knows of the ring. */
struct ring {
	MPI_Comm comm;           /* the live processes, in world-rank order */
	int rank, size;          /* in comm; rank 0 is the root */
	int left, right;         /* neighbours in comm */
	int iterations;          /* how many the ring must complete */
	struct ring_msg last;    /* the last message this process sent on */
	bool have_last;          /* it sent one */
	bool finished;           /* as root, it saw the last iteration complete */
	bool anomaly;            /* it saw a message from the future, or a miscount */
	bool clean;              /* the last agreement said nobody saw an anomaly */
	int dropped;             /* duplicates dropped here */
	int recoveries;          /* repairs after failures (not the final one) */
	void (*point)(const char *, long); /* ftshim_inject_point, or NULL */
};

static void hold(void)
{
	struct timespec ts = { 0, HOLD_MS * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static int world_rank(void)
{
	int r;

	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	return r;
}

/* An error no recovery can help: say which call, and end the job. */
static void die(const char *call, int rc)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;

	MPI_Error_string(rc, text, &len);
	fprintf(stderr, "ft_ring[%d]: %s: %s\n", world_rank(), call, text);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

/* The errors the ring recovers from: a failed peer, or a communicator
 * revoked by a survivor that saw one (or by the root that finished). */
static bool recoverable(int rc)
{
	int cls = rc;

	MPI_Error_class(rc, &cls);
	return cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED;
}

static void set_comm(struct ring *r, MPI_Comm comm)
{
	r->comm = comm;
	MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
	MPI_Comm_rank(comm, &r->rank);
	MPI_Comm_size(comm, &r->size);
	r->left = (r->rank + r->size - 1) % r->size;
	r->right = (r->rank + 1) % r->size;
}

/* Alone, a process is its own neighbour, and the message goes round at
 * once without MPI: an MPI_Send to oneself may wait for the receive that
 * would follow it. */
static int send_right(struct ring *r, const struct ring_msg *m)
{
	r->last = *m;
	r->have_last = true;
	if (r->size == 1)
		return MPI_SUCCESS;
	return MPI_Send(m, RING_MSG_INTS, MPI_INT, r->right, TAG_RING, r->comm);
}

static int recv_left(struct ring *r, struct ring_msg *m)
{
	if (r->size == 1) {
		*m = r->last;
		return MPI_SUCCESS;
	}
	return MPI_Recv(m, RING_MSG_INTS, MPI_INT, r->left, TAG_RING, r->comm, MPI_STATUS_IGNORE);
}

/* Handle iteration i here: the test's injection point, then the work
 * (holding the message a moment). */
static void handle(struct ring *r, int i)
{
	if (r->point)
		r->point("iteration", i);
	hold();
}

/* The root starts iteration i, done iterations having completed. */
static int start(struct ring *r, int i, int done)
{
	struct ring_msg m = { .marker = i, .done = done };

	handle(r, i);
	return send_right(r, &m);
}

/* Run the ring on r->comm until this process, as root, sees the last
 * iteration complete (MPI_SUCCESS), or an operation fails (its error). */
static int ring_run(struct ring *r)
{
	struct ring_msg m;
	int rc;

	/* After a repair, recreate whatever the failure lost (above). The
	 * first time, only the root has something to send. */
	if (r->have_last)
		rc = send_right(r, &r->last);
	else if (r->rank == 0)
		rc = start(r, 0, 0);
	else
		rc = MPI_SUCCESS;
	if (rc != MPI_SUCCESS)
		return rc;

	for (;;) {
		rc = recv_left(r, &m);
		if (rc != MPI_SUCCESS)
			return rc;
		if (r->rank == 0) {
			/* The root waits for what it sent last to come back. A
			 * new root waits for what it passed on last: iterations
			 * after it died with the old root, and the ones before it
			 * completed (they went through this process and on). */
			if (m.marker < r->last.marker) {
				r->dropped++; /* an earlier iteration, resent after a failure */
				continue;
			}
			/* Iteration m.marker is complete: every iteration
			 * before it must have completed exactly once. */
			if (m.marker > r->last.marker || m.done != m.marker)
				r->anomaly = true;
			if (m.marker + 1 >= r->iterations) {
				r->finished = true;
				return MPI_SUCCESS;
			}
			rc = start(r, m.marker + 1, m.done + 1);
		} else {
			int expect = r->have_last ? r->last.marker + 1 : 0;
			if (m.marker < expect) {
				r->dropped++; /* passed on already: a resend */
				continue;
			}
			/* Later than expected cannot happen: iteration i+1
			 * starts only after i went round through here. Flag
			 * it, and pass it on so that the ring never stalls. */
			if (m.marker > expect)
				r->anomaly = true;
			handle(r, m.marker);
			rc = send_right(r, &m);
		}
		if (rc != MPI_SUCCESS)
			return rc;
	}
}

/* Print the world ranks of a group, comma-separated ("none" if empty). */
static void print_world_ranks(FILE *f, MPI_Group g)
{
	MPI_Group world;
	int n = 0;

	MPI_Group_size(g, &n);
	if (n == 0) {
		fputs("none", f);
		return;
	}
	int *in = malloc(2 * n * sizeof *in);
	if (!in) {
		fputs("?", f);
		return;
	}
	for (int i = 0; i < n; i++)
		in[i] = i;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_translate_ranks(g, n, in, world, in + n);
	MPI_Group_free(&world);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", in[n + i]);
	free(in);
}

/* After an operation on r->comm failed, or the root finished: stop the
 * ring everywhere, agree whether it finished, and move to a communicator
 * of the survivors. Returns true if the ring finished. */
static bool repair(struct ring *r)
{
	MPI_Comm next;
	int flag, rc;

	/* Interrupt everyone: a process blocked on a live neighbour would
	 * otherwise never learn that the ring must be rebuilt (or is done).
	 * Revoking twice is harmless; several processes may revoke at once. */
	rc = MPIX_Comm_revoke(r->comm);
	if (rc != MPI_SUCCESS)
		die("MPIX_Comm_revoke", rc);
	/* The failures known here are expected: the agreement need not
	 * report them. It may still raise MPIX_ERR_PROC_FAILED for others
	 * (uniformly), and its flag is agreed even then. */
	MPIX_Comm_failure_ack(r->comm);
	flag = (r->finished ? 0 : AGREE_UNFINISHED) | (r->anomaly ? 0 : AGREE_CLEAN);
	rc = MPIX_Comm_agree(r->comm, &flag);
	if (rc != MPI_SUCCESS && !recoverable(rc))
		die("MPIX_Comm_agree", rc);
	rc = MPIX_Comm_shrink(r->comm, &next);
	if (rc != MPI_SUCCESS)
		die("MPIX_Comm_shrink", rc);

	bool finished = !(flag & AGREE_UNFINISHED);
	r->clean = flag & AGREE_CLEAN;
	if (!finished)
		r->recoveries++;
	int newrank = -1;
	MPI_Comm_rank(next, &newrank);
	if (newrank == 0 && !finished) {
		/* One line per recovery, from the new root: who was lost. */
		MPI_Group old, now, lost;
		int n = 0;
		MPI_Comm_group(r->comm, &old);
		MPI_Comm_group(next, &now);
		MPI_Group_difference(old, now, &lost);
		MPI_Group_size(now, &n);
		fprintf(stderr, "ft_ring[%d]: recovery %d: lost rank(s) ", world_rank(), r->recoveries);
		print_world_ranks(stderr, lost);
		fprintf(stderr, "; %d go on, root world rank %d, iteration %d under way\n", n, world_rank(),
			r->have_last ? r->last.marker : 0);
		MPI_Group_free(&lost);
		MPI_Group_free(&now);
		MPI_Group_free(&old);
	}
	MPI_Comm_free(&r->comm);
	set_comm(r, next);
	return finished;
}

/* The result, from the new root of the survivors once the ring finished. */
static int report(struct ring *r)
{
	int world_size, total = 0, rc;

	MPI_Comm_size(MPI_COMM_WORLD, &world_size);
	/* Every survivor passed on the last iteration, and its message says
	 * how many completed before it. */
	bool once = r->clean && r->have_last && r->last.marker == r->iterations - 1 &&
		    r->last.done == r->iterations - 1;
	rc = MPI_Reduce(&r->dropped, &total, 1, MPI_INT, MPI_SUM, 0, r->comm);
	if (r->rank != 0) {
		if (!once)
			fprintf(stderr, "ft_ring[%d]: FAILED: the last iteration seen here is %d, after %d completed%s\n",
				world_rank(), r->have_last ? r->last.marker : -1, r->have_last ? r->last.done : 0,
				r->clean ? "" : "; an anomaly was seen");
		return once ? 0 : 1;
	}

	MPI_Group world, now, lost;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Comm_group(r->comm, &now);
	MPI_Group_difference(world, now, &lost);
	if (once)
		printf("ft_ring: %d iterations completed, each once; ", r->iterations);
	else
		printf("ft_ring: FAILED: %d iterations, last seen %d after %d completed%s; ", r->iterations,
		       r->have_last ? r->last.marker : -1, r->have_last ? r->last.done : 0,
		       r->clean ? "" : ", an anomaly was seen");
	printf("survivors %d of %d; lost ranks ", r->size, world_size);
	print_world_ranks(stdout, lost);
	printf("; root world rank %d; %d recover%s, ", world_rank(), r->recoveries,
	       r->recoveries == 1 ? "y" : "ies");
	if (rc == MPI_SUCCESS)
		printf("%d duplicate%s dropped\n", total, total == 1 ? "" : "s");
	else
		printf("duplicates dropped unknown (a survivor died)\n");
	fflush(stdout);
	MPI_Group_free(&lost);
	MPI_Group_free(&now);
	MPI_Group_free(&world);
	return once ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct ring r = { .iterations = DEFAULT_ITERATIONS, .clean = true };
	MPI_Comm comm;
	int rc;

	MPI_Init(&argc, &argv);
	if (argc > 1) {
		char *end;
		long n = strtol(argv[1], &end, 10);
		if (*end || n < 1 || n > 1000000) {
			if (world_rank() == 0)
				fprintf(stderr, "usage: ft_ring [ITERATIONS] (1 to 1000000; default %d)\n",
					DEFAULT_ITERATIONS);
			MPI_Finalize();
			return 2;
		}
		r.iterations = (int)n;
	}
	if (!MPIX_Comm_revoke || !MPIX_Comm_agree || !MPIX_Comm_shrink || !MPIX_Comm_failure_ack) {
		if (world_rank() == 0)
			fprintf(stderr, "ft_ring: this MPI has no ULFM calls; run it under ftshim (LD_PRELOAD=libftshim.so)\n");
		MPI_Finalize();
		return 2;
	}
	r.point = (void (*)(const char *, long))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_inject_point");

	/* A communicator of the ring's own: revoking it leaves
	 * MPI_COMM_WORLD usable. Errors are returned, never fatal. A process
	 * may die before the ring starts, in this very dup, which then fails
	 * on some processes only: they agree whether it worked everywhere,
	 * and if not, the ring starts on MPI_COMM_WORLD's survivors. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	if (rc != MPI_SUCCESS && !recoverable(rc))
		die("MPI_Comm_dup", rc);
	int made = rc == MPI_SUCCESS;
	if (!made)
		comm = MPI_COMM_NULL;
	MPIX_Comm_failure_ack(MPI_COMM_WORLD);
	rc = MPIX_Comm_agree(MPI_COMM_WORLD, &made);
	if (rc != MPI_SUCCESS && !recoverable(rc))
		die("MPIX_Comm_agree", rc);
	if (!made) {
		if (comm != MPI_COMM_NULL)
			MPI_Comm_free(&comm);
		rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &comm);
		if (rc != MPI_SUCCESS)
			die("MPIX_Comm_shrink", rc);
	}
	set_comm(&r, comm);

	for (;;) {
		rc = ring_run(&r);
		if (rc != MPI_SUCCESS && !recoverable(rc))
			die("the ring", rc);
		if (repair(&r))
			break;
	}
	rc = report(&r);
	MPI_Comm_free(&r.comm);
	MPI_Finalize();
	return rc;
}
