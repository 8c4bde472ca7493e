/* complete.c: the request completion calls (MPI_Wait, MPI_Test, their
 * -all, -any and -some forms, MPI_Request_get_status), MPI_Start(all) and
 * MPI_Request_free. A request the request table knows is completed by
 * polling its nonblocking test, and given up on with a ULFM error once
 * what it waits on fails:
 *
 *  - a request on a failed peer, or a collective with a failed member:
 *    MPI_ERR_PROC_FAILED; the request is done with (a receive cancelled,
 *    a send cancelled and freed, a collective left to the library);
 *  - a receive from MPI_ANY_SOURCE while the communicator has a failure
 *    nobody acknowledged: MPI_ERR_PROC_FAILED_PENDING, and the request
 *    stays valid, so that a live sender can still match it later;
 *  - in the multiple forms, MPI_ERR_IN_STATUS with each request's own
 *    error in its status (MPI_ERR_PENDING for those neither done nor
 *    failed), or the first error when statuses are ignored.
 *
 * Requests the table does not know (made on communicators ftshim does not
 * track, or by calls it does not wrap) go straight to the MPI.
 *
 * ftshim's own nonblocking calls (MPIX_Comm_iagree, MPIX_Comm_ishrink)
 * make generalized requests that ftshim completes (pmpi/requests.c): every
 * call here first lets them progress, never gives up on them, and
 * reports their result, once the MPI has completed them, as their error.
 *
 * A process whose completion outcomes a recovery mode decides or follows
 * (pmpi/mode/mode.h: a replicated primary and its replica) completes
 * through the mode's forms, which call the plain ones here
 * (pmpi/complete.h). */
#include "ftshim_config.h"

#include <sched.h>
#include <stdlib.h>

#include "pmpi/complete.h"
#include "pmpi/block.h"
#include "pmpi/ckpt_watch.h"
#include "pmpi/mode/mode.h"
#include "pmpi/mpi_lib.h"
#include "pmpi/persist.h"
#include "pmpi/requests.h"

#define STACK_REQUESTS 16

/* What a completion call knows of one of its requests. */
struct tracked {
	MPI_Request handle; /* as passed in, to forget it once complete */
	bool known;
	bool op_done; /* one of ftshim's own, finished (r.op is then NULL) */
	struct ftp_req r;
};

static void call_for(struct ftp_call *c, const struct ftp_req *r)
{
	ftp_call_on(c, r->comm, r->watch);
	c->obj = r->obj;
	c->obj_bits = r->obj_bits;
}

/* Forget a request the MPI has completed and freed. After the call's
 * error is raised: that may drop the last reference on the request's
 * communicator, which the application may have freed. */
static void forget_if_done(const struct tracked *t, MPI_Request now)
{
	if (t->known && !t->r.persistent && now == MPI_REQUEST_NULL)
		ftp_req_remove(t->handle);
}

/* A persistent request that MPI_Start left unstarted (t->r.unstarted):
 * it completes now with that error and stays, inactive, the caller's. */
static int take_unstarted(struct tracked *t, MPI_Request *request, MPI_Status *status)
{
	int err = t->r.unstarted;

	ftp_req_set_unstarted(t->handle, MPI_SUCCESS);
	t->r.unstarted = MPI_SUCCESS;
	ftp_mpi.PMPI_Wait(request, status); /* inactive: the empty status, at once */
	return err;
}

/* Roles status_out and statuses_out: the status of a tracked request,
 * once complete, in its communicator's ranks as the program numbers them
 * (pmpi/seam.h). Nothing, at the cost of one relaxed load, while no
 * communicator is renumbered; nothing for ftshim's own operations, whose
 * status holds no rank. */
static void status_out(const struct tracked *t, MPI_Status *status)
{
	if (ftp_seam_mapped() && t->known && !t->r.op && !t->op_done && status != MPI_STATUS_IGNORE)
		ftp_status_out(t->r.comm, status);
}

/* A completion call's entry: the mode's form, or the body. Its exported
 * form first swaps each persistent request's shell among requests (N of
 * them) for its running operation (pmpi/persist.h), then CALL (which
 * names the swapped array work_); one relaxed load while the program has
 * no such request. */
#define SWAPPED(FN, N, REQUESTS, CALL)                                                            \
	do {                                                                                      \
		struct ftp_persist_swap s_;                                                       \
		int in_ = ftp_persist_any() ? ftp_persist_swap_in(&s_, (N), (REQUESTS)) : 0;    \
		if (in_ < 0)                                                                      \
			return no_memory(FN);                                                     \
		MPI_Request *work_ = in_ ? s_.work : (REQUESTS);                                  \
		int rc_ = CALL;                                                                   \
		if (in_)                                                                          \
			ftp_persist_swap_out(&s_, (N), (REQUESTS));                               \
		return rc_;                                                                       \
	} while (0)

static int no_memory(enum ftp_fn fn)
{
	struct ftp_call c = FTP_CALL_INIT(fn);

	return ftp_post_plain(&c, MPI_ERR_NO_MEM);
}

/* --- one request ---------------------------------------------------------- */

/* One of ftshim's own requests: progress until the MPI sees it complete. */
static int wait_op(MPI_Request *request, const struct tracked *t, MPI_Status *status)
{
	uint64_t polls = 0;
	int flag = 0, rc;

	for (;;) {
		ftp_ops_progress();
		rc = ftp_mpi.PMPI_Test(request, &flag, status);
		if (rc != MPI_SUCCESS)
			return rc;
		if (flag)
			return ftp_op_finish(t->r.op);
		ftp_poll_pause(&polls);
	}
}

static int wait_tracked(struct ftp_call *c, MPI_Request *request, const struct tracked *t,
			MPI_Status *status)
{
	uint64_t seen = 0, polls = 0;
	int flag = 0, rc;

	if (t->r.op)
		return wait_op(request, t, status);
	for (;;) {
		int err = ftp_poll_step(c, true, &seen, &polls);
		if (err == FTP_ERR_PROC_FAILED_PENDING)
			return err; /* the request stays valid */
		if (err != MPI_SUCCESS)
			return ftp_give_up(c, request, t->r.persistent, err, status);
		rc = ftp_mpi.PMPI_Test(request, &flag, status);
		if (rc != MPI_SUCCESS || flag)
			return rc;
	}
}

FTP_HOT int wait_body(MPI_Request *request, MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Wait);
	struct tracked t = { .handle = *request };
	int rc;

	status = FTP_STATUS(status);
	if (!ftp_active() || !(t.known = ftp_req_find(*request, &t.r)))
		return ftp_post_plain(&c, ftp_mpi.PMPI_Wait(request, status));
	call_for(&c, &t.r);
	if (t.r.unstarted != MPI_SUCCESS)
		rc = take_unstarted(&t, request, status);
	else
		rc = wait_tracked(&c, request, &t, status);
	status_out(&t, status);
	rc = ftp_post_plain(&c, rc);
	forget_if_done(&t, *request);
	return rc;
}
int ftp_wait_plain(MPI_Request *request, MPI_Status *status)
{
	return wait_body(request, status);
}

/* A process whose outcomes the recovery mode decides or follows
 * completes through the mode (pmpi/mode/mode.h). */
static int wait_entry(MPI_Request *request, MPI_Status *status)
{
	const struct ftp_mode_completion *m = ftp_mode_completion();
	if (m && ftp_active())
		return m->wait(request, FTP_STATUS(status));
	return wait_body(request, status);
}

FT_EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	SWAPPED(FTP_FN_MPI_Wait, 1, request, wait_entry(work_, status));
}
FTP_ALSO_PMPI(MPI_Wait);

/* After a test found request (tracked as t) not done, once something
 * happened (ftp.events): has what it waits on failed? Gives up on it if
 * so. Returns the error, and sets *flag as a completed-with-error request
 * would. */
static int test_failed(struct ftp_call *c, MPI_Request *request, struct tracked *t, int *flag,
		       MPI_Status *status)
{
	if (!(t->known = ftp_req_find(t->handle, &t->r)) || t->r.op)
		return MPI_SUCCESS;
	call_for(c, &t->r);
	int err = ftp_check(c, true);
	if (err == MPI_SUCCESS || err == FTP_ERR_PROC_FAILED_PENDING)
		return err;
	err = ftp_give_up(c, request, t->r.persistent, err, status);
	*flag = 1;
	return err;
}

/* The MPI testing its own requests (ROMIO's nonblocking collective I/O
 * polls its internal exchanges with MPI_Testall, inside a generalized
 * request's poll function) gets the MPI's answer: had ftshim failed them,
 * MPICH would raise the generalized request's failure on MPI_COMM_WORLD's
 * error handler, fatal by default, instead of the file's. Those requests
 * simply never complete; ftshim watches the program's request, which
 * waits on them. Tests only: a wait of the MPI's own would be a wait on a
 * dead member that only ftshim can end. The caller is looked at only
 * where a test would report a failure, so after one; in the wrapper
 * itself, where the return address is its caller's. */
#define FTP_FROM_MPI() ftp_called_by_mpi(__builtin_return_address(0))

FTP_HOT int test_body(MPI_Request *request, int *flag, MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Test);
	struct tracked t = { .handle = *request };
	int rc;

	status = FTP_STATUS(status);
	ftp_ops_progress();
	rc = ftp_mpi.PMPI_Test(request, flag, status);
	if (!ftp_active() || !ftp_req_any() || rc != MPI_SUCCESS)
		return ftp_post_plain(&c, rc);
	/* An inactive persistent request tests complete at once: one that
	 * MPI_Start left unstarted (only after a failure) has its error. */
	if (*flag && *request != MPI_REQUEST_NULL && ftp_events() != 0 &&
	    (t.known = ftp_req_find(*request, &t.r)) && t.r.unstarted != MPI_SUCCESS) {
		call_for(&c, &t.r);
		return ftp_post_plain(&c, take_unstarted(&t, request, status));
	}
	if (!*flag && ftp_events() != 0 && !FTP_FROM_MPI())
		rc = test_failed(&c, request, &t, flag, status);
	bool taken = *flag && *request == MPI_REQUEST_NULL && ftp_req_take(t.handle, &t.r);
	if (*flag && ftp_seam_mapped()) {
		/* Taken, or a persistent request, which stays. */
		t.known = taken || (*request != MPI_REQUEST_NULL && ftp_req_find(*request, &t.r));
		status_out(&t, status);
	}
	if (taken && t.r.op) {
		call_for(&c, &t.r);
		rc = ftp_op_finish(t.r.op);
	}
	rc = ftp_post_plain(&c, rc);
	if (taken)
		ftp_req_release(&t.r);
	return rc;
}
int ftp_test_plain(MPI_Request *request, int *flag, MPI_Status *status)
{
	return test_body(request, flag, status);
}

/* A process whose outcomes the recovery mode decides or follows
 * completes through the mode (pmpi/mode/mode.h). */
static int test_entry(MPI_Request *request, int *flag, MPI_Status *status)
{
	const struct ftp_mode_completion *m = ftp_mode_completion();
	if (m && ftp_active())
		return m->test(request, flag, FTP_STATUS(status));
	return test_body(request, flag, status);
}

FT_EXPORT int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	SWAPPED(FTP_FN_MPI_Test, 1, request, test_entry(work_, flag, status));
}
FTP_ALSO_PMPI(MPI_Test);

FT_EXPORT int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Request_get_status);
	struct ftp_persist *p = ftp_persist_of(request);
	struct ftp_req r;
	int rc;

	status = FTP_STATUS(status);
	/* A shell: its running operation's, or (inactive) the MPI's answer
	 * for the shell, done with an empty status. */
	if (p && p->active != MPI_REQUEST_NULL)
		request = p->active;
	ftp_ops_progress();
	rc = ftp_mpi.PMPI_Request_get_status(request, flag, status);
	if (rc == MPI_SUCCESS && *flag && ftp_seam_mapped() && ftp_req_find(request, &r) && !r.op)
		ftp_status_out(r.comm, status);
	/* It must not free the request, so a failure is only reported. */
	if (rc == MPI_SUCCESS && !*flag && ftp_active() && ftp_events() != 0 &&
	    ftp_req_find(request, &r) && !r.op) {
		call_for(&c, &r);
		rc = ftp_check(&c, true);
	}
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Request_get_status);

static int request_free_body(MPI_Request *request)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Request_free);
	MPI_Request handle = *request;
	struct ftp_req r;
	int rc = ftp_mpi.PMPI_Request_free(request);

	if (rc == MPI_SUCCESS && ftp_active() && ftp_req_take(handle, &r)) {
		if (r.op)
			ftp_op_orphan(r.op);
		ftp_req_release(&r);
	}
	return ftp_post_plain(&c, rc);
}

FT_EXPORT int MPI_Request_free(MPI_Request *request)
{
	struct ftp_persist *p = ftp_persist_of(*request);
	int rc = MPI_SUCCESS;

	if (!p)
		return request_free_body(request);
	if (p->active != MPI_REQUEST_NULL)
		rc = request_free_body(&p->active);
	ftp_persist_free(request, p);
	return rc;
}
FTP_ALSO_PMPI(MPI_Request_free);

/* A shell's cancel is its running operation's. */
FT_EXPORT int MPI_Cancel(MPI_Request *request)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Cancel);
	struct ftp_persist *p = ftp_persist_of(*request);

	return ftp_post_plain(&c, p ? ftp_persist_cancel(p) : ftp_mpi.PMPI_Cancel(request));
}
FTP_ALSO_PMPI(MPI_Cancel);

/* --- starting persistent requests ------------------------------------------ */

/* A persistent request whose peer has failed (or whose communicator was
 * revoked) is not started: MPI_Start succeeds, and its completion call
 * reports the error, as for the other nonblocking calls (ULFM programs
 * check errors at completion). True if request may start. */
static bool check_start(struct ftp_call *c, MPI_Request request)
{
	struct ftp_req r;

	if (!ftp_active() || ftp_events() == 0 || !ftp_req_find(request, &r))
		return true;
	call_for(c, &r);
	int err = ftp_check(c, true);
	if (err == MPI_SUCCESS || err == FTP_ERR_PROC_FAILED_PENDING)
		return true;
	ftp_req_set_unstarted(request, err);
	return false;
}

/* A shell's start runs its operation, whose own call raises its errors. */
FT_EXPORT int MPI_Start(MPI_Request *request)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Start);
	struct ftp_persist *p = ftp_persist_of(*request);
	int rc = MPI_SUCCESS;

	if (p)
		return ftp_persist_start(p);
	if (check_start(&c, *request))
		rc = ftp_mpi.PMPI_Start(request);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Start);

FT_EXPORT int MPI_Startall(int count, MPI_Request requests[])
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Startall);
	int rc = MPI_SUCCESS;
	bool all = true;

	for (int i = 0; i < count; i++)
		all &= !ftp_persist_of(requests[i]) && check_start(&c, requests[i]);
	if (all)
		return ftp_post_plain(&c, ftp_mpi.PMPI_Startall(count, requests));
	/* Some stay unstarted, or are shells: start them one by one. */
	for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
		struct ftp_req r;
		if (ftp_req_find(requests[i], &r) && r.persist) {
			rc = ftp_persist_start(r.persist);
			if (rc != MPI_SUCCESS)
				return rc; /* raised by its operation's call */
		} else if (!ftp_req_find(requests[i], &r) || r.unstarted == MPI_SUCCESS) {
			rc = ftp_mpi.PMPI_Start(&requests[i]);
		}
	}
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Startall);

/* --- many requests ---------------------------------------------------------- */

struct many {
	int count;
	struct tracked *t;
	int *errs; /* per request: the failure found, or MPI_SUCCESS */
	struct tracked t_stack[STACK_REQUESTS];
	int errs_stack[STACK_REQUESTS];
	bool any_known;
};

/* While a rank waits in a checkpoint this one has not entered
 * (pmpi/ckpt_watch.h): whether call c waits on such a rank through its
 * pending requests (needs_all: the call waits for every request, so one
 * such is enough; else every pending one must be such, as any other may
 * complete). After a second the job ends with one line. */
static void many_ckpt_check(const struct many *m, const MPI_Request requests[], const struct ftp_call *c,
			    bool needs_all)
{
	int32_t j = -1;

	for (int i = 0; i < m->count; i++) {
		const struct tracked *t = &m->t[i];
		if (requests[i] == MPI_REQUEST_NULL)
			continue;
		int32_t k = -1;
		if (t->known && !t->r.op) {
			struct ftp_call one = *c;
			call_for(&one, &t->r);
			k = ftp_ckpt_waited_on(&one);
		}
		if (needs_all && k >= 0) {
			j = k;
			break;
		}
		if (!needs_all && k < 0) {
			j = -1;
			break;
		}
		if (j < 0)
			j = k;
	}
	ftp_ckpt_check_waiting(c, j);
}

/* Look every request up. false if none is tracked (or out of memory):
 * then the MPI's own call does. */
static bool many_init(struct many *m, int count, const MPI_Request requests[])
{
	m->count = count;
	m->any_known = false;
	m->t = m->t_stack;
	m->errs = m->errs_stack;
	if (!ftp_active() || !ftp_req_any() || count <= 0)
		return false;
	if (count > STACK_REQUESTS) {
		m->t = malloc((size_t)count * sizeof *m->t);
		m->errs = malloc((size_t)count * sizeof *m->errs);
		if (!m->t || !m->errs) {
			free(m->t);
			free(m->errs);
			return false;
		}
	}
	for (int i = 0; i < count; i++) {
		m->t[i].handle = requests[i];
		m->t[i].op_done = false;
		m->t[i].known = ftp_req_find(requests[i], &m->t[i].r);
		m->any_known |= m->t[i].known;
	}
	if (!m->any_known && count > STACK_REQUESTS) {
		free(m->t);
		free(m->errs);
	}
	return m->any_known;
}

static void many_fini(struct many *m, const MPI_Request requests[])
{
	for (int i = 0; i < m->count; i++)
		forget_if_done(&m->t[i], requests[i]);
	if (m->t != m->t_stack) {
		free(m->t);
		free(m->errs);
	}
}

/* statuses_out for the requests an -all call completed, and for those
 * (indices[0..n)) a -some call did. */
static void statuses_all_out(const struct many *m, MPI_Status statuses[])
{
	if (ftp_seam_mapped() && statuses != MPI_STATUSES_IGNORE)
		for (int i = 0; i < m->count; i++)
			status_out(&m->t[i], &statuses[i]);
}

static void statuses_some_out(const struct many *m, int n, const int indices[], MPI_Status statuses[])
{
	if (ftp_seam_mapped() && statuses != MPI_STATUSES_IGNORE && n != MPI_UNDEFINED)
		for (int k = 0; k < n; k++)
			status_out(&m->t[indices[k]], &statuses[k]);
}

/* Which pending requests have failed? Fills m->errs; returns how many.
 * c is left describing the first of them. */
static int many_check(struct many *m, const MPI_Request requests[], struct ftp_call *c)
{
	int nfailed = 0;

	for (int i = 0; i < m->count; i++) {
		struct ftp_call ci = *c;
		m->errs[i] = MPI_SUCCESS;
		if (!m->t[i].known || m->t[i].r.op || requests[i] == MPI_REQUEST_NULL)
			continue;
		call_for(&ci, &m->t[i].r);
		m->errs[i] = m->t[i].r.unstarted != MPI_SUCCESS ? m->t[i].r.unstarted
								  : ftp_check(&ci, true);
		if (m->errs[i] != MPI_SUCCESS && nfailed++ == 0)
			*c = ci;
	}
	return nfailed;
}

/* Give up on request i (which failed with m->errs[i]); its error, or
 * MPI_SUCCESS if it completed after all. A PENDING request stays. */
static int many_give_up(struct many *m, int i, MPI_Request requests[], struct ftp_call *c,
			MPI_Status *status)
{
	struct ftp_call ci = *c;

	if (m->errs[i] == FTP_ERR_PROC_FAILED_PENDING)
		return m->errs[i];
	if (m->t[i].r.unstarted != MPI_SUCCESS)
		return take_unstarted(&m->t[i], &requests[i], status);
	call_for(&ci, &m->t[i].r);
	return ftp_give_up(&ci, &requests[i], m->t[i].r.persistent, m->errs[i], status);
}

/* Request i has just been completed by the MPI: if it is one of ftshim's
 * own, its result (c then describes it), else MPI_SUCCESS. */
static int op_result(struct many *m, int i, struct ftp_call *c)
{
	struct ftp_op *op = m->t[i].known ? m->t[i].r.op : NULL;

	if (!op)
		return MPI_SUCCESS;
	m->t[i].r.op = NULL;
	m->t[i].op_done = true;
	int err = ftp_op_finish(op);
	if (err != MPI_SUCCESS)
		call_for(c, &m->t[i].r);
	return err;
}

/* After an -all call completed every request: the results of ftshim's
 * own among them, in the statuses as for errors, and the call's code. */
static int all_ops_results(struct many *m, MPI_Request requests[], struct ftp_call *c,
			   MPI_Status statuses[], int rc)
{
	int first = MPI_SUCCESS, err[m->count];

	for (int i = 0; i < m->count; i++) {
		err[i] = MPI_SUCCESS;
		if (m->t[i].known && m->t[i].r.op && requests[i] == MPI_REQUEST_NULL)
			err[i] = op_result(m, i, c);
		else if (m->t[i].known && m->t[i].r.unstarted != MPI_SUCCESS)
			err[i] = take_unstarted(&m->t[i], &requests[i], MPI_STATUS_IGNORE);
		if (first == MPI_SUCCESS)
			first = err[i];
	}
	if (first == MPI_SUCCESS)
		return rc;
	if (statuses == MPI_STATUSES_IGNORE)
		return first;
	for (int i = 0; i < m->count; i++)
		statuses[i].MPI_ERROR = err[i];
	return MPI_ERR_IN_STATUS;
}

/* After a -some call completed outcount requests: likewise. */
static int some_ops_results(struct many *m, int outcount, const int indices[],
			    struct ftp_call *c, MPI_Status statuses[], int rc)
{
	int first = MPI_SUCCESS, err[outcount > 0 ? outcount : 1];

	for (int k = 0; k < outcount; k++) {
		err[k] = op_result(m, indices[k], c);
		if (first == MPI_SUCCESS)
			first = err[k];
	}
	if (first == MPI_SUCCESS)
		return rc;
	if (statuses == MPI_STATUSES_IGNORE)
		return first;
	for (int k = 0; k < outcount; k++)
		statuses[k].MPI_ERROR = err[k];
	return MPI_ERR_IN_STATUS;
}

/* Finish an -all call that ran into failures: every request gets its
 * fate in its status. */
static int all_with_errors(struct many *m, MPI_Request requests[], struct ftp_call *c,
			   MPI_Status statuses[])
{
	int first = MPI_SUCCESS;

	for (int i = 0; i < m->count; i++) {
		MPI_Status st;
		int err, flag = 0;
		bool inactive = requests[i] == MPI_REQUEST_NULL;
		if (inactive) {
			err = MPI_SUCCESS;
		} else if (m->errs[i] != MPI_SUCCESS) {
			err = many_give_up(m, i, requests, c, &st);
		} else {
			err = ftp_mpi.PMPI_Test(&requests[i], &flag, &st);
			if (err == MPI_SUCCESS && !flag)
				err = MPI_ERR_PENDING;
			else if (err == MPI_SUCCESS)
				err = op_result(m, i, c);
		}
		if (statuses != MPI_STATUSES_IGNORE) {
			if (!inactive)
				statuses[i] = st;
			statuses[i].MPI_ERROR = err;
		}
		if (first == MPI_SUCCESS && err != MPI_SUCCESS && err != MPI_ERR_PENDING)
			first = err;
	}
	return statuses == MPI_STATUSES_IGNORE ? first : MPI_ERR_IN_STATUS;
}

FTP_HOT int waitall_body(int count, MPI_Request requests[], MPI_Status statuses[])
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Waitall);
	struct many m;
	uint64_t seen = 0, polls = 0;
	int flag = 0, rc;

	statuses = FTP_STATUSES(statuses);
	if (!many_init(&m, count, requests))
		return ftp_post_plain(&c, ftp_mpi.PMPI_Waitall(count, requests, statuses));
	for (;;) {
		uint64_t events = ftp_events();
		if (events != seen) {
			seen = events;
			if (many_check(&m, requests, &c)) {
				rc = all_with_errors(&m, requests, &c, statuses);
				break;
			}
		}
		ftp_ops_progress();
		if (ftp_ckpt_behind())
			many_ckpt_check(&m, requests, &c, true);
		rc = ftp_mpi.PMPI_Testall(count, requests, &flag, statuses);
		if (rc == MPI_SUCCESS && flag)
			rc = all_ops_results(&m, requests, &c, statuses, rc);
		if (rc != MPI_SUCCESS || flag)
			break;
		ftp_poll_pause(&polls);
	}
	if (flag || rc == MPI_ERR_IN_STATUS)
		statuses_all_out(&m, statuses);
	rc = ftp_post_plain(&c, rc);
	many_fini(&m, requests);
	return rc;
}
int ftp_waitall_plain(int count, MPI_Request requests[], MPI_Status statuses[])
{
	return waitall_body(count, requests, statuses);
}

/* A process whose outcomes the recovery mode decides or follows
 * completes through the mode (pmpi/mode/mode.h). */
static int waitall_entry(int count, MPI_Request requests[], MPI_Status statuses[])
{
	const struct ftp_mode_completion *m = ftp_mode_completion();
	if (m && ftp_active())
		return m->waitall(count, requests, FTP_STATUSES(statuses));
	return waitall_body(count, requests, statuses);
}

FT_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
	SWAPPED(FTP_FN_MPI_Waitall, count, requests, waitall_entry(count, work_, statuses));
}
FTP_ALSO_PMPI(MPI_Waitall);

FTP_HOT int testall_body(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Testall);
	struct many m;
	int rc;

	statuses = FTP_STATUSES(statuses);
	if (!many_init(&m, count, requests))
		return ftp_post_plain(&c, ftp_mpi.PMPI_Testall(count, requests, flag, statuses));
	ftp_ops_progress();
	rc = ftp_mpi.PMPI_Testall(count, requests, flag, statuses);
	if (rc == MPI_SUCCESS && *flag)
		rc = all_ops_results(&m, requests, &c, statuses, rc);
	else if (rc == MPI_SUCCESS && ftp_events() != 0 && !FTP_FROM_MPI() && many_check(&m, requests, &c)) {
		rc = all_with_errors(&m, requests, &c, statuses);
		*flag = 1;
	}
	if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *flag)
		statuses_all_out(&m, statuses);
	rc = ftp_post_plain(&c, rc);
	many_fini(&m, requests);
	return rc;
}
int ftp_testall_plain(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	return testall_body(count, requests, flag, statuses);
}

/* A process whose outcomes the recovery mode decides or follows
 * completes through the mode (pmpi/mode/mode.h). */
static int testall_entry(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	const struct ftp_mode_completion *m = ftp_mode_completion();
	if (m && ftp_active())
		return m->testall(count, requests, flag, FTP_STATUSES(statuses));
	return testall_body(count, requests, flag, statuses);
}

FT_EXPORT int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	SWAPPED(FTP_FN_MPI_Testall, count, requests, testall_entry(count, work_, flag, statuses));
}
FTP_ALSO_PMPI(MPI_Testall);

/* An -any call that ran into failures: the first failed request is the
 * one completed (with its error). */
static int any_with_error(struct many *m, MPI_Request requests[], struct ftp_call *c, int *index,
			  MPI_Status *status)
{
	for (int i = 0; i < m->count; i++) {
		if (m->errs[i] == MPI_SUCCESS)
			continue;
		*index = i;
		return many_give_up(m, i, requests, c, status);
	}
	return MPI_SUCCESS;
}

FTP_HOT int waitany_body(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Waitany);
	struct many m;
	uint64_t seen = 0, polls = 0;
	int flag = 0, rc;

	status = FTP_STATUS(status);
	if (!many_init(&m, count, requests))
		return ftp_post_plain(&c, ftp_mpi.PMPI_Waitany(count, requests, index, status));
	for (;;) {
		uint64_t events = ftp_events();
		if (events != seen) {
			seen = events;
			if (many_check(&m, requests, &c)) {
				rc = any_with_error(&m, requests, &c, index, status);
				break;
			}
		}
		ftp_ops_progress();
		if (ftp_ckpt_behind())
			many_ckpt_check(&m, requests, &c, false);
		rc = ftp_mpi.PMPI_Testany(count, requests, index, &flag, status);
		if (rc == MPI_SUCCESS && flag && *index != MPI_UNDEFINED)
			rc = op_result(&m, *index, &c);
		if (rc != MPI_SUCCESS || flag)
			break;
		ftp_poll_pause(&polls);
	}
	if (rc == MPI_SUCCESS && flag && *index >= 0 && *index < count)
		status_out(&m.t[*index], status);
	rc = ftp_post_plain(&c, rc);
	many_fini(&m, requests);
	return rc;
}
int ftp_waitany_plain(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	return waitany_body(count, requests, index, status);
}

/* A process whose outcomes the recovery mode decides or follows
 * completes through the mode (pmpi/mode/mode.h). */
static int waitany_entry(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	const struct ftp_mode_completion *m = ftp_mode_completion();
	if (m && ftp_active())
		return m->waitany(count, requests, index, FTP_STATUS(status));
	return waitany_body(count, requests, index, status);
}

FT_EXPORT int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	SWAPPED(FTP_FN_MPI_Waitany, count, requests, waitany_entry(count, work_, index, status));
}
FTP_ALSO_PMPI(MPI_Waitany);

FTP_HOT int testany_body(int count, MPI_Request requests[], int *index, int *flag,
			  MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Testany);
	struct many m;
	int rc;

	status = FTP_STATUS(status);
	if (!many_init(&m, count, requests))
		return ftp_post_plain(&c, ftp_mpi.PMPI_Testany(count, requests, index, flag, status));
	ftp_ops_progress();
	rc = ftp_mpi.PMPI_Testany(count, requests, index, flag, status);
	if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
		rc = op_result(&m, *index, &c);
	else if (rc == MPI_SUCCESS && ftp_events() != 0 && !FTP_FROM_MPI() && many_check(&m, requests, &c)) {
		/* Nothing completed (or only inactive requests: unstarted ones). */
		rc = any_with_error(&m, requests, &c, index, status);
		*flag = rc != FTP_ERR_PROC_FAILED_PENDING;
	}
	if (rc == MPI_SUCCESS && *flag && *index >= 0 && *index < count)
		status_out(&m.t[*index], status);
	rc = ftp_post_plain(&c, rc);
	many_fini(&m, requests);
	return rc;
}
int ftp_testany_plain(int count, MPI_Request requests[], int *index, int *flag,
			  MPI_Status *status)
{
	return testany_body(count, requests, index, flag, status);
}

/* A process whose outcomes the recovery mode decides or follows
 * completes through the mode (pmpi/mode/mode.h). */
static int testany_entry(int count, MPI_Request requests[], int *index, int *flag,
			MPI_Status *status)
{
	const struct ftp_mode_completion *m = ftp_mode_completion();
	if (m && ftp_active())
		return m->testany(count, requests, index, flag, FTP_STATUS(status));
	return testany_body(count, requests, index, flag, status);
}

FT_EXPORT int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag,
			  MPI_Status *status)
{
	SWAPPED(FTP_FN_MPI_Testany, count, requests, testany_entry(count, work_, index, flag, status));
}
FTP_ALSO_PMPI(MPI_Testany);

/* A -some call that ran into failures: the failed requests are among
 * those completed, each with its error. */
static int some_with_errors(struct many *m, MPI_Request requests[], struct ftp_call *c,
			    int *outcount, int indices[], MPI_Status statuses[])
{
	int n = 0, first = MPI_SUCCESS;

	for (int i = 0; i < m->count; i++) {
		MPI_Status st;
		if (m->errs[i] == MPI_SUCCESS)
			continue;
		int err = many_give_up(m, i, requests, c, &st);
		indices[n] = i;
		if (statuses != MPI_STATUSES_IGNORE) {
			statuses[n] = st;
			statuses[n].MPI_ERROR = err;
		}
		if (first == MPI_SUCCESS)
			first = err;
		n++;
	}
	*outcount = n;
	return statuses == MPI_STATUSES_IGNORE ? first : MPI_ERR_IN_STATUS;
}

FTP_HOT int waitsome_body(int incount, MPI_Request requests[], int *outcount, int indices[],
			   MPI_Status statuses[])
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Waitsome);
	struct many m;
	uint64_t seen = 0, polls = 0;
	int rc;

	statuses = FTP_STATUSES(statuses);
	if (!many_init(&m, incount, requests))
		return ftp_post_plain(&c, ftp_mpi.PMPI_Waitsome(incount, requests, outcount, indices, statuses));
	for (;;) {
		uint64_t events = ftp_events();
		if (events != seen) {
			seen = events;
			if (many_check(&m, requests, &c)) {
				rc = some_with_errors(&m, requests, &c, outcount, indices, statuses);
				break;
			}
		}
		ftp_ops_progress();
		if (ftp_ckpt_behind())
			many_ckpt_check(&m, requests, &c, false);
		rc = ftp_mpi.PMPI_Testsome(incount, requests, outcount, indices, statuses);
		if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
			rc = some_ops_results(&m, *outcount, indices, &c, statuses, rc);
		if (rc != MPI_SUCCESS || *outcount != 0)
			break;
		ftp_poll_pause(&polls);
	}
	if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
		statuses_some_out(&m, *outcount, indices, statuses);
	rc = ftp_post_plain(&c, rc);
	many_fini(&m, requests);
	return rc;
}
int ftp_waitsome_plain(int incount, MPI_Request requests[], int *outcount, int indices[],
			   MPI_Status statuses[])
{
	return waitsome_body(incount, requests, outcount, indices, statuses);
}

/* A process whose outcomes the recovery mode decides or follows
 * completes through the mode (pmpi/mode/mode.h). */
static int waitsome_entry(int incount, MPI_Request requests[], int *outcount, int indices[],
			 MPI_Status statuses[])
{
	const struct ftp_mode_completion *m = ftp_mode_completion();
	if (m && ftp_active())
		return m->waitsome(incount, requests, outcount, indices,
					 FTP_STATUSES(statuses));
	return waitsome_body(incount, requests, outcount, indices, statuses);
}

FT_EXPORT int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
			   MPI_Status statuses[])
{
	SWAPPED(FTP_FN_MPI_Waitsome, incount, requests, waitsome_entry(incount, work_, outcount, indices, statuses));
}
FTP_ALSO_PMPI(MPI_Waitsome);

FTP_HOT int testsome_body(int incount, MPI_Request requests[], int *outcount, int indices[],
			   MPI_Status statuses[])
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Testsome);
	struct many m;
	int rc;

	statuses = FTP_STATUSES(statuses);
	if (!many_init(&m, incount, requests))
		return ftp_post_plain(&c, ftp_mpi.PMPI_Testsome(incount, requests, outcount, indices, statuses));
	ftp_ops_progress();
	rc = ftp_mpi.PMPI_Testsome(incount, requests, outcount, indices, statuses);
	if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && *outcount > 0)
		rc = some_ops_results(&m, *outcount, indices, &c, statuses, rc);
	else if (rc == MPI_SUCCESS && (*outcount == 0 || *outcount == MPI_UNDEFINED) && ftp_events() != 0 &&
		 !FTP_FROM_MPI() && many_check(&m, requests, &c))
		rc = some_with_errors(&m, requests, &c, outcount, indices, statuses);
	if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
		statuses_some_out(&m, *outcount, indices, statuses);
	rc = ftp_post_plain(&c, rc);
	many_fini(&m, requests);
	return rc;
}
int ftp_testsome_plain(int incount, MPI_Request requests[], int *outcount, int indices[],
			   MPI_Status statuses[])
{
	return testsome_body(incount, requests, outcount, indices, statuses);
}

/* A process whose outcomes the recovery mode decides or follows
 * completes through the mode (pmpi/mode/mode.h). */
static int testsome_entry(int incount, MPI_Request requests[], int *outcount, int indices[],
			 MPI_Status statuses[])
{
	const struct ftp_mode_completion *m = ftp_mode_completion();
	if (m && ftp_active())
		return m->testsome(incount, requests, outcount, indices,
					 FTP_STATUSES(statuses));
	return testsome_body(incount, requests, outcount, indices, statuses);
}

FT_EXPORT int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
			   MPI_Status statuses[])
{
	SWAPPED(FTP_FN_MPI_Testsome, incount, requests, testsome_entry(incount, work_, outcount, indices, statuses));
}
FTP_ALSO_PMPI(MPI_Testsome);

#if MPI_VERSION >= 4
/* A partition that has not arrived from a peer that failed never will: a
 * program polling MPI_Parrived would poll for ever. The request keeps its
 * error for MPI_Wait. */
FT_EXPORT int MPI_Parrived(MPI_Request request, int partition, int *flag)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Parrived);
	struct ftp_req r;
	int rc = ftp_mpi.PMPI_Parrived(request, partition, flag);

	if (rc == MPI_SUCCESS && !*flag && ftp_active() && ftp_events() != 0 && ftp_req_find(request, &r) &&
	    !r.op) {
		call_for(&c, &r);
		rc = ftp_check(&c, false);
	}
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Parrived);
#endif
