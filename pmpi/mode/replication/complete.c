/* complete.c: the completion calls of a paired process (pmpi/complete.c
 * calls ftp_repl_wait and the others, and they call its plain forms): a
 * primary tells its replica on the stream which requests each completed
 * and what they matched, and the replica, which starts then the
 * MPI_ANY_SOURCE receives its primary matched (recv.c), completes the
 * same ones; and the record buffers of the stream (struct rec,
 * state.h). Application thread. */
#include "ftshim_config.h"

#include <stdlib.h>

#include "pmpi/mode/replication/complete.h"
#include "pmpi/mode/replication/recv.h"
#include "pmpi/mode/replication/stream.h"

static int rec_open(struct rec *r, int entries)
{
	size_t want = REC_HEAD + 3 * (size_t)(entries > 0 ? entries : 0);

	r->n = REC_HEAD;
	r->v =
	    want <= sizeof r->stack / sizeof r->stack[0] ? r->stack : malloc(want * sizeof *r->v);
	return r->v ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void rec_close(struct rec *r)
{
	if (r->v != r->stack)
		free(r->v);
}

void ftp_repl_rec_add(struct rec *r, int index, const MPI_Status *st)
{
	r->v[r->n++] = index;
	r->v[r->n++] = st ? st->MPI_SOURCE : MPI_ANY_SOURCE;
	r->v[r->n++] = st ? st->MPI_TAG : MPI_ANY_TAG;
}

/* The primary's statuses when the program ignores them. */
static MPI_Status *statuses_for(MPI_Status *given, int count, MPI_Status *stack, MPI_Status **heap)
{
	*heap = NULL;
	if (given != MPI_STATUSES_IGNORE)
		return given;
	if (count <= STACK_ENTRIES)
		return stack;
	*heap = malloc((size_t)count * sizeof **heap);
	return *heap;
}

/* The replica: hear the record of a call with up to `entries`
 * completions into r. */
static int hear_rec(struct rec *r, int entries)
{
	int rc = rec_open(r, entries);

	if (rc == MPI_SUCCESS)
		rc = ftp_repl_hear(r->v, REC_HEAD + 3 * (entries > 0 ? entries : 0), &r->n);
	return rc;
}

/* The replica: start the receive of each MPI_ANY_SOURCE request the
 * record names. */
static void resolve_all(const struct rec *r, int count, MPI_Request requests[])
{
	struct any_recv *a;

	for (int k = REC_HEAD; k + 2 < r->n; k += 3) {
		int i = r->v[k];
		if (i >= 0 && i < count && ftp_repl_is_any(requests[i], &a) && a)
			ftp_repl_any_resolve(a, r->v[k + 1]);
	}
}

/* Wait for count requests, as the program's call would (one: MPI_Wait). */
static int wait_plain_n(int count, MPI_Request requests[], MPI_Status statuses[])
{
	if (count != 1)
		return ftp_waitall_plain(count, requests, statuses);
	return ftp_wait_plain(requests,
			      statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses);
}

static bool any_of(int count, const MPI_Request requests[])
{
	struct any_recv *a;

	for (int i = 0; i < count; i++)
		if (ftp_repl_is_any(requests[i], &a))
			return true;
	return false;
}

int ftp_repl_wait(MPI_Request *request, MPI_Status *status)
{
	return ftp_repl_waitall(1, request,
				status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status);
}

int ftp_repl_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
	MPI_Status stack[STACK_ENTRIES], *heap, *st;
	struct rec r;
	int rc;

	/* Deterministic, unless a receive from MPI_ANY_SOURCE is among them. */
	if (count <= 0 || !any_of(count, requests))
		return wait_plain_n(count, requests, statuses);
	if (ftp_repl_following()) {
		rc = hear_rec(&r, count);
		if (rc == MPI_SUCCESS)
			resolve_all(&r, count, requests);
		rec_close(&r);
		if (rc != MPI_SUCCESS && rc != STREAM_ENDED)
			return rc;
		return wait_plain_n(count, requests, statuses);
	}
	st = statuses_for(statuses, count, stack, &heap);
	if (!st || rec_open(&r, count) != MPI_SUCCESS) {
		free(heap);
		return MPI_ERR_NO_MEM;
	}
	rc = wait_plain_n(count, requests, st);
	r.v[0] = rc;
	r.v[1] = 1;
	for (int i = 0; i < count; i++)
		ftp_repl_rec_add(&r, i, &st[i]);
	ftp_repl_tell(r.v, r.n);
	rec_close(&r);
	free(heap);
	return rc;
}

int ftp_repl_test(MPI_Request *request, int *flag, MPI_Status *status)
{
	return ftp_repl_testall(1, request, flag,
				status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status);
}

int ftp_repl_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	MPI_Status stack[STACK_ENTRIES], *heap, *st;
	struct rec r;
	int rc;

	if (ftp_repl_following()) {
		rc = hear_rec(&r, count);
		int told = rc == MPI_SUCCESS ? r.v[0] : rc, done = rc == MPI_SUCCESS && r.v[1];
		if (done)
			resolve_all(&r, count, requests);
		rec_close(&r);
		if (rc != STREAM_ENDED) {
			*flag = done;
			if (!done)
				return told;
			return wait_plain_n(count, requests, statuses);
		}
	}
	st = statuses_for(statuses, count, stack, &heap);
	if (!st || rec_open(&r, count) != MPI_SUCCESS) {
		free(heap);
		return MPI_ERR_NO_MEM;
	}
	rc = count == 1 ? ftp_test_plain(requests, flag, st)
			: ftp_testall_plain(count, requests, flag, st);
	r.v[0] = rc;
	r.v[1] = *flag;
	for (int i = 0; *flag && i < count; i++)
		ftp_repl_rec_add(&r, i, &st[i]);
	ftp_repl_tell(r.v, r.n);
	rec_close(&r);
	free(heap);
	return rc;
}

/* Waitany and Testany (test: flag is not NULL). */
static int repl_any(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
	MPI_Status mine;
	struct rec r;
	int rc;

	if (ftp_repl_following()) {
		rc = hear_rec(&r, 1);
		int told = rc == MPI_SUCCESS ? r.v[0] : rc, done = rc == MPI_SUCCESS && r.v[1];
		int i = done && r.n >= REC_HEAD + 3 ? r.v[REC_HEAD] : MPI_UNDEFINED;
		if (done)
			resolve_all(&r, count, requests);
		rec_close(&r);
		if (rc != STREAM_ENDED) {
			if (flag)
				*flag = done;
			*index = i;
			if (!done || i == MPI_UNDEFINED || i < 0 || i >= count)
				return told;
			return ftp_wait_plain(&requests[i], status);
		}
	}
	if (status == MPI_STATUS_IGNORE)
		status = &mine;
	rc = flag ? ftp_testany_plain(count, requests, index, flag, status)
		  : ftp_waitany_plain(count, requests, index, status);
	rec_open(&r, 1);
	r.v[0] = rc;
	r.v[1] = flag ? *flag : 1;
	if (r.v[1])
		ftp_repl_rec_add(&r, *index, *index == MPI_UNDEFINED ? NULL : status);
	ftp_repl_tell(r.v, r.n);
	rec_close(&r);
	return rc;
}

int ftp_repl_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	return repl_any(count, requests, index, NULL, status);
}

int ftp_repl_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
	return repl_any(count, requests, index, flag, status);
}

/* Waitsome and Testsome. */
static int repl_some(bool test, int incount, MPI_Request requests[], int *outcount, int indices[],
		     MPI_Status statuses[])
{
	MPI_Status stack[STACK_ENTRIES], *heap, *st;
	struct rec r;
	int rc;

	bool heard = ftp_repl_following();
	rc = heard ? hear_rec(&r, incount) : STREAM_ENDED;
	if (rc == STREAM_ENDED && heard)
		rec_close(&r);
	if (rc != STREAM_ENDED) {
		int told = rc == MPI_SUCCESS ? r.v[0] : rc;
		*outcount = rc == MPI_SUCCESS ? r.v[1] : 0;
		if (rc == MPI_SUCCESS)
			resolve_all(&r, incount, requests);
		for (int k = 0; rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && k < *outcount;
		     k++) {
			int i = r.v[REC_HEAD + 3 * k];
			indices[k] = i;
			int rw = ftp_wait_plain(&requests[i], statuses == MPI_STATUSES_IGNORE
								  ? MPI_STATUS_IGNORE
								  : &statuses[k]);
			if (told == MPI_SUCCESS)
				told = rw;
		}
		rec_close(&r);
		return told;
	}
	st = statuses_for(statuses, incount, stack, &heap);
	if (!st || rec_open(&r, incount) != MPI_SUCCESS) {
		free(heap);
		return MPI_ERR_NO_MEM;
	}
	rc = test ? ftp_testsome_plain(incount, requests, outcount, indices, st)
		  : ftp_waitsome_plain(incount, requests, outcount, indices, st);
	r.v[0] = rc;
	r.v[1] = *outcount;
	for (int k = 0; *outcount != MPI_UNDEFINED && k < *outcount; k++)
		ftp_repl_rec_add(&r, indices[k], &st[k]);
	ftp_repl_tell(r.v, r.n);
	rec_close(&r);
	free(heap);
	return rc;
}

int ftp_repl_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
		      MPI_Status statuses[])
{
	return repl_some(false, incount, requests, outcount, indices, statuses);
}

int ftp_repl_testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
		      MPI_Status statuses[])
{
	return repl_some(true, incount, requests, outcount, indices, statuses);
}
