/* manager_worker.c: a bag of tasks that survives the loss of workers,
 * written for ULFM (mpi-ext.h; under ftshim on a stock MPI). Rank 0, the
 * manager, splits the integers below 2,000,000 into T tasks (argv[1],
 * default 100) and hands them out one at a time; each worker finds the
 * primes of its block (a few ms of trial division) and returns their count
 * and sum. When workers die, the manager learns it from the receive it
 * keeps posted for results (MPI_ANY_SOURCE), acknowledges the failures,
 * puts the tasks the dead held back in the queue and carries on with the
 * others, or alone if none is left. It counts a result only from the live
 * worker it gave that task to, so each task counts exactly once, and ends
 * with "manager_worker: T tasks, each completed once, checksum S (N primes
 * below 2000000); workers lost: ...", S and N checked against the known
 * answers (148933 primes, summing to 142913828922). Survivors exit 0. The
 * manager's own loss is out of scope: a worker that sees it fail says so
 * and exits 1.
 *
 * Inject points, for FTSHIM_INJECT="rank=2 at=point:task:3" and the like:
 * a worker calls ftshim_inject_point("task", n) as it starts its nth task
 * (n counts its own tasks from 1, not task numbers: which task a worker
 * gets depends on timing, how many it has started does not), and
 * ftshim_inject_point("idle", n) as it waits for the manager after
 * returning n results (idle:0: before its first task arrives). The point
 * function is found with dlsym, so the program also runs without the shim,
 * and then, as long as nothing fails, without ULFM. */
#include <dlfcn.h>
#include <mpi.h>
#include <mpi-ext.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define LIMIT 2000000L		 /* the tasks cover the integers 0 .. LIMIT-1 */
#define KNOWN_COUNT 148933LL	 /* how many primes are below LIMIT */
#define KNOWN_SUM 142913828922LL /* their sum */
#define DEFAULT_TASKS 100

enum { TAG_TASK = 1, TAG_RESULT, TAG_STOP, TAG_BYE };

/* A result message: three MPI_LONG_LONG. */
enum { RES_TASK, RES_COUNT, RES_SUM, RES_LEN };

#define NO_TASK (-1)

static void (*inject_point)(const char *name, long value);

static void point(const char *name, long value)
{
	if (inject_point)
		inject_point(name, value);
}

/* An error we do not recover from: say which call, and end the job. */
static void fatal(int rank, const char *what, int rc)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof msg, "error %d", rc);
	fprintf(stderr, "manager_worker[%d]: %s: %s\n", rank, what, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1); /* not reached: MPI_Abort does not return */
}

/* Codes may differ from their classes (MPICH encodes details in them), so
 * compare classes. */
static int error_class(int rc)
{
	int cls = MPI_ERR_OTHER;

	MPI_Error_class(rc, &cls);
	return cls;
}

/* The work of one task: the primes in [lo, hi), found by trial division,
 * slow on purpose so that a task takes a few milliseconds. */
static void primes_in(long lo, long hi, long long *count, long long *sum)
{
	long long c = 0, s = 0;

	for (long n = lo < 2 ? 2 : lo; n < hi; n++) {
		bool prime = n == 2 || n % 2 != 0;
		for (long d = 3; prime && d * d <= n; d += 2)
			if (n % d == 0)
				prime = false;
		if (prime) {
			c++;
			s += n;
		}
	}
	*count = c;
	*sum = s;
}

static void do_task(int task, int ntasks, long long res[RES_LEN])
{
	long lo = (long)((long long)LIMIT * task / ntasks);
	long hi = (long)((long long)LIMIT * (task + 1) / ntasks);

	res[RES_TASK] = task;
	primes_in(lo, hi, &res[RES_COUNT], &res[RES_SUM]);
}

/* --- the manager ----------------------------------------------------------- */

struct manager {
	MPI_Comm comm;
	MPI_Group group; /* comm's, to turn failed groups into ranks */
	int size;	 /* of comm: the manager and size-1 workers */
	int ntasks;
	int nalive;   /* workers not known to have failed */
	int *holding; /* per rank: the task it was given and has not returned, or NO_TASK */
	bool *lost;   /* per rank: known to have failed */
	bool *done;   /* per task: its result is recorded */
	int *queue;   /* tasks to hand out, a ring of ntasks slots (a task is
		       * queued, held or done, so it never holds more) */
	int qhead, qlen;
	int ndone;
	long long count, sum; /* over the recorded results */
	int requeued;	      /* tasks put back after their holder failed */
	int late;	      /* results from workers already known lost, ignored */
	int errors;	      /* results refused: duplicates, unexpected senders */
	int by_manager;	      /* tasks done here because no worker was left */
};

static void push(struct manager *m, int task)
{
	m->queue[(m->qhead + m->qlen) % m->ntasks] = task;
	m->qlen++;
}

static int pop(struct manager *m)
{
	int task = m->queue[m->qhead];

	m->qhead = (m->qhead + 1) % m->ntasks;
	m->qlen--;
	return task;
}

/* Worker w has failed: whatever it held goes back in the queue. Called
 * for each failure as it is found, possibly more than once. */
static void lose(struct manager *m, int w)
{
	if (m->lost[w])
		return;
	m->lost[w] = true;
	m->nalive--;
	if (m->holding[w] == NO_TASK) {
		printf("manager_worker: worker %d failed while idle\n", w);
	} else {
		printf("manager_worker: worker %d failed holding task %d; re-queued\n", w,
		       m->holding[w]);
		push(m, m->holding[w]);
		m->holding[w] = NO_TASK;
		m->requeued++;
	}
}

/* The MPI reported a process failure on comm: acknowledge what this rank
 * knows (so that MPI_ANY_SOURCE receives work again) and lose the workers
 * concerned. The pair failure_ack / failure_get_acked is race-free: the
 * group is exactly the failures acknowledged, and one learned in between
 * stays unacknowledged, so the next receive reports it. (Every ULFM has
 * this pair; MPICH 4.0.2 declares only it, not MPIX_Comm_get_failed.) */
static void reap(struct manager *m)
{
	MPI_Group failed;
	int n, rc;

	if (!MPIX_Comm_failure_ack || !MPIX_Comm_failure_get_acked)
		fatal(0, "a worker failed, and this MPI lacks ULFM (preload ftshim)",
		      MPIX_ERR_PROC_FAILED);
	rc = MPIX_Comm_failure_ack(m->comm);
	if (rc != MPI_SUCCESS)
		fatal(0, "MPIX_Comm_failure_ack", rc);
	rc = MPIX_Comm_failure_get_acked(m->comm, &failed);
	if (rc != MPI_SUCCESS)
		fatal(0, "MPIX_Comm_failure_get_acked", rc);
	MPI_Group_size(failed, &n);
	for (int i = 0; i < n; i++) {
		int w = MPI_UNDEFINED;
		rc = MPI_Group_translate_ranks(failed, 1, &i, m->group, &w);
		if (rc != MPI_SUCCESS)
			fatal(0, "MPI_Group_translate_ranks", rc);
		if (w > 0 && w < m->size)
			lose(m, w);
	}
	MPI_Group_free(&failed);
}

/* Give queued tasks to the live workers that hold none. */
static void dispatch(struct manager *m)
{
	for (int w = 1; w < m->size && m->qlen > 0; w++) {
		if (m->lost[w] || m->holding[w] != NO_TASK)
			continue;
		int task = pop(m);
		m->holding[w] = task;
		int rc = MPI_Send(&task, 1, MPI_INT, w, TAG_TASK, m->comm);
		if (rc == MPI_SUCCESS)
			continue;
		/* A send names its peer, so its failure says who died. A send
		 * that succeeds proves nothing: the task may sit in a dead
		 * worker's mailbox, and the receive below finds that out. */
		if (error_class(rc) != MPIX_ERR_PROC_FAILED)
			fatal(0, "MPI_Send of a task", rc);
		lose(m, w); /* re-queues the task: a later worker gets it */
	}
}

/* Count a task's result, unless it has been counted already: by
 * construction that cannot happen, and if it does it is an error, never
 * a second count. */
static void accept(struct manager *m, int task, const long long res[RES_LEN], int by)
{
	if (m->done[task]) {
		fprintf(stderr, "manager_worker: ERROR: task %d completed twice (again by rank %d)\n",
			task, by);
		m->errors++;
		return;
	}
	m->done[task] = true;
	m->ndone++;
	m->count += res[RES_COUNT];
	m->sum += res[RES_SUM];
}

/* A result from worker w. It counts only if it comes from the live worker
 * that holds that task: a dead worker's task went back in the queue when
 * its failure was found, and the copy handed out again is the one that
 * counts, whatever of the dead worker's still arrives. */
static void record(struct manager *m, int w, const long long res[RES_LEN])
{
	long long task = res[RES_TASK];

	if (w <= 0 || w >= m->size || task < 0 || task >= m->ntasks) {
		fprintf(stderr, "manager_worker: ERROR: a result for task %lld from rank %d\n",
			task, w);
		m->errors++;
		return;
	}
	if (m->lost[w]) {
		printf("manager_worker: late result of task %lld from lost worker %d: ignored\n",
		       task, w);
		m->late++;
		return;
	}
	if (m->holding[w] != task) {
		fprintf(stderr, "manager_worker: ERROR: worker %d returned task %lld; it holds %d\n",
			w, task, m->holding[w]);
		m->errors++;
		return;
	}
	m->holding[w] = NO_TASK;
	accept(m, (int)task, res, w);
}

/* No worker is left: the manager does the queued tasks itself. */
static void work_alone(struct manager *m)
{
	long long res[RES_LEN];

	printf("manager_worker: no worker left; the manager does the %d remaining task(s)\n",
	       m->qlen);
	while (m->qlen > 0) {
		int task = pop(m);
		do_task(task, m->ntasks, res);
		accept(m, task, res, 0);
		m->by_manager++;
	}
}

/* Hand out every task and collect every result. One receive from
 * MPI_ANY_SOURCE stays posted for results. While a failure on comm is not
 * acknowledged, waiting on it reports MPIX_ERR_PROC_FAILED_PENDING and the
 * request stays valid: the manager acknowledges, re-queues, and waits on
 * the same request again. Nothing can wait forever: every task not done
 * is queued (and then given to an idle live worker) or held by a worker,
 * whose result or failure will come, unless no worker is left. */
static void collect(struct manager *m)
{
	MPI_Request req = MPI_REQUEST_NULL;
	long long res[RES_LEN];
	MPI_Status st;
	int rc;

	while (m->ndone < m->ntasks) {
		dispatch(m);
		if (m->nalive == 0) {
			work_alone(m);
			break;
		}
		if (req == MPI_REQUEST_NULL) {
			rc = MPI_Irecv(res, RES_LEN, MPI_LONG_LONG, MPI_ANY_SOURCE, TAG_RESULT,
				       m->comm, &req);
			if (rc != MPI_SUCCESS)
				fatal(0, "MPI_Irecv of results", rc);
		}
		rc = MPI_Wait(&req, &st);
		if (rc == MPI_SUCCESS) {
			record(m, st.MPI_SOURCE, res);
			continue;
		}
		int cls = error_class(rc);
		/* _PENDING leaves req valid; _PROC_FAILED (another ULFM
		 * may give it) has freed it, and the loop posts a new one. */
		if (cls != MPIX_ERR_PROC_FAILED_PENDING && cls != MPIX_ERR_PROC_FAILED)
			fatal(0, "MPI_Wait for a result", rc);
		reap(m);
	}
	if (req != MPI_REQUEST_NULL) {
		/* Only when the last worker died: every failure is acknowledged
		 * by now, so the cancelled receive completes. */
		MPI_Cancel(&req);
		rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			fatal(0, "MPI_Wait for the cancelled receive", rc);
	}
}

/* Stop the workers, and wait for each to say goodbye: a worker that died
 * idle after its last task may have gone unnoticed (a send to it can
 * still succeed), but a receive that names it cannot. */
static void stop_workers(struct manager *m)
{
	int rc;

	for (int w = 1; w < m->size; w++) {
		if (m->lost[w])
			continue;
		rc = MPI_Send(NULL, 0, MPI_INT, w, TAG_STOP, m->comm);
		if (rc != MPI_SUCCESS && error_class(rc) != MPIX_ERR_PROC_FAILED)
			fatal(0, "MPI_Send of stop", rc);
		if (rc != MPI_SUCCESS)
			lose(m, w);
	}
	for (int w = 1; w < m->size; w++) {
		if (m->lost[w])
			continue;
		rc = MPI_Recv(NULL, 0, MPI_INT, w, TAG_BYE, m->comm, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS && error_class(rc) != MPIX_ERR_PROC_FAILED)
			fatal(0, "MPI_Recv of goodbye", rc);
		if (rc != MPI_SUCCESS)
			lose(m, w);
	}
}

/* The result line, checked against the known answer; 1 if wrong. */
static int report(const struct manager *m)
{
	char lost[256] = "none";
	size_t used = 0;

	for (int w = 1; w < m->size && used + 12 < sizeof lost; w++)
		if (m->lost[w])
			used += (size_t)snprintf(lost + used, sizeof lost - used, "%s%d",
						 used ? "," : "", w);
	printf("manager_worker: %d task(s) re-queued, %d late result(s) ignored, %d done by the manager\n",
	       m->requeued, m->late, m->by_manager);
	if (m->errors || m->ndone != m->ntasks) {
		printf("manager_worker: FAILED: %d of %d tasks done, %d result(s) refused\n",
		       m->ndone, m->ntasks, m->errors);
		return 1;
	}
	if (m->sum != KNOWN_SUM || m->count != KNOWN_COUNT) {
		printf("manager_worker: FAILED: checksum %lld (%lld primes), expected %lld (%lld primes)\n",
		       m->sum, m->count, KNOWN_SUM, KNOWN_COUNT);
		return 1;
	}
	printf("manager_worker: %d tasks, each completed once, checksum %lld (%lld primes below %ld); workers lost: %s\n",
	       m->ntasks, m->sum, m->count, LIMIT, lost);
	return 0;
}

static int manager(MPI_Comm comm, int size, int ntasks)
{
	struct manager m = { .comm = comm, .size = size, .ntasks = ntasks, .nalive = size - 1 };
	int rc, bad;

	m.holding = malloc((size_t)size * sizeof *m.holding);
	m.lost = calloc((size_t)size, sizeof *m.lost);
	m.done = calloc((size_t)ntasks, sizeof *m.done);
	m.queue = malloc((size_t)ntasks * sizeof *m.queue);
	if (!m.holding || !m.lost || !m.done || !m.queue)
		fatal(0, "out of memory", MPI_ERR_NO_MEM);
	for (int w = 0; w < size; w++)
		m.holding[w] = NO_TASK;
	for (int t = 0; t < ntasks; t++)
		push(&m, t);
	rc = MPI_Comm_group(comm, &m.group);
	if (rc != MPI_SUCCESS)
		fatal(0, "MPI_Comm_group", rc);

	collect(&m);
	stop_workers(&m);
	bad = report(&m);

	MPI_Group_free(&m.group);
	free(m.holding);
	free(m.lost);
	free(m.done);
	free(m.queue);
	return bad;
}

/* --- a worker ---------------------------------------------------------------- */

static int worker(MPI_Comm comm, int rank, int ntasks)
{
	long long res[RES_LEN];
	int started = 0, finished = 0, task, rc;
	MPI_Status st;

	for (;;) {
		point("idle", finished);
		/* From the manager by name: only its failure can stop this. */
		rc = MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, comm, &st);
		if (rc != MPI_SUCCESS)
			goto manager_lost;
		if (st.MPI_TAG == TAG_STOP)
			break;
		if (task < 0 || task >= ntasks)
			fatal(rank, "a task number out of range", MPI_ERR_ARG);
		point("task", ++started);
		do_task(task, ntasks, res);
		rc = MPI_Send(res, RES_LEN, MPI_LONG_LONG, 0, TAG_RESULT, comm);
		if (rc != MPI_SUCCESS)
			goto manager_lost;
		finished++;
	}
	rc = MPI_Send(NULL, 0, MPI_INT, 0, TAG_BYE, comm);
	if (rc != MPI_SUCCESS)
		goto manager_lost;
	printf("manager_worker: worker %d stopped after %d task(s)\n", rank, finished);
	return 0;

manager_lost:
	/* Surviving the manager would need another to take over its queue
	 * and its record of what is done: out of scope here. */
	if (error_class(rc) != MPIX_ERR_PROC_FAILED)
		fatal(rank, "talking to the manager", rc);
	fprintf(stderr, "manager_worker: worker %d: the manager failed; giving up\n", rank);
	return 1;
}

int main(int argc, char **argv)
{
	int rank, size, rc, status;
	long ntasks = DEFAULT_TASKS;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1) {
		char *end;
		ntasks = strtol(argv[1], &end, 10);
		if (*end || ntasks < 1 || ntasks > LIMIT) {
			if (rank == 0)
				fprintf(stderr, "usage: manager_worker [TASKS (1 to %ld)]\n",
					LIMIT);
			MPI_Finalize();
			return 2;
		}
	}
	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "manager_worker: needs a manager and a worker (2 ranks)\n");
		MPI_Finalize();
		return 2;
	}
	inject_point =
		(void (*)(const char *, long))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_inject_point");

	/* Errors on MPI_COMM_WORLD come back as return codes: with the
	 * default MPI_ERRORS_ARE_FATAL a failure ends the job. The work runs
	 * on MPI_COMM_WORLD itself, not on a dup: a dup is a collective, and
	 * a worker that dies while a slow rank is still in it can make it
	 * fail there and succeed elsewhere (ULFM allows that of every
	 * collective but agree and shrink), leaving the ranks disagreeing on
	 * whether the communicator exists. */
	rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rc != MPI_SUCCESS)
		fatal(rank, "MPI_Comm_set_errhandler", rc);

	status = rank == 0 ? manager(MPI_COMM_WORLD, size, (int)ntasks)
			   : worker(MPI_COMM_WORLD, rank, (int)ntasks);

	fflush(stdout);
	MPI_Finalize();
	return status;
}
