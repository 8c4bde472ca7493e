/* p2p.c: the blocking point-to-point calls whose nonblocking twin is not
 * a one-to-one rewrite: the probes (polled with their nonblocking forms)
 * and the send-receives (a receive and a send, each watched on its own
 * peer; MPI_Sendrecv_replace sends from a copy of the buffer). */
#include "ftshim_config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/p2p.h"
#include "pmpi/call.h"
#include "pmpi/mode_calls.h"

/* Poll MPI_Iprobe (or MPI_Improbe when message is not NULL). Given up
 * on, a probe takes a last look, as a receive does (ftp_cancel_p2p). */
static int probe_poll(struct ftp_call *c, int source, int tag, MPI_Message *message,
		      MPI_Status *status)
{
	uint64_t seen = 0, polls = 0;
	int flag = 0, rc, err = MPI_SUCCESS;

	for (int last = 0; last < 4; last += err != MPI_SUCCESS) {
		rc = message ? ftp_mpi.PMPI_Improbe(source, tag, c->real, &flag, message, status)
			     : ftp_mpi.PMPI_Iprobe(source, tag, c->real, &flag, status);
		if (rc != MPI_SUCCESS || flag)
			return rc;
		if (err == MPI_SUCCESS)
			err = ftp_poll_step(c, false, &seen, &polls);
	}
	return err;
}

int ftp_probe_on(struct ftp_call *c, int source, int tag, MPI_Status *status)
{
	source = ftp_rank_in(c->comm, source);
	int rc = c->direct ? ftp_mpi.PMPI_Probe(source, tag, c->real, status)
			   : probe_poll(c, source, tag, NULL, status);
	ftp_status_out(c->comm, status);
	return rc;
}

FT_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Probe);
	int rc = ftp_pre_recv(&c, comm, source);

	status = FTP_STATUS(status);
	if (rc == MPI_SUCCESS && ftp_seam_covered(c.comm)) {
		const struct ftp_mode_calls *mode = ftp_cover_calls(c.comm);

		if (mode && mode->MPI_Probe)
			return ftp_post_plain(&c, mode->MPI_Probe(&c, source, tag, status));
		rc = ftp_cover_as_is(&c, FTP_FN_MPI_Probe, FTP_ROLE_P2P);
	}
	if (rc == MPI_SUCCESS)
		rc = ftp_probe_on(&c, source, tag, status);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Probe);

FT_EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
			 MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Mprobe);
	int rc = ftp_pre_recv(&c, comm, source);

	status = FTP_STATUS(status);
	if (rc == MPI_SUCCESS && ftp_seam_covered(c.comm)) {
		const struct ftp_mode_calls *mode = ftp_cover_calls(c.comm);

		if (mode && mode->MPI_Mprobe)
			return ftp_post_plain(&c, mode->MPI_Mprobe(&c, source, tag, message, status));
		rc = ftp_mode_refuse(&c);
	}
	source = ftp_rank_in(c.comm, source);
	if (rc == MPI_SUCCESS)
		rc = c.direct ? ftp_mpi.PMPI_Mprobe(source, tag, c.real, message, status)
			      : probe_poll(&c, source, tag, message, status);
	ftp_status_out(c.comm, status);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Mprobe);

/* The receive (c, watching its source) and the send (sreq, to dest) of a
 * send-receive have both been started (rs, ss: what starting them
 * returned): wait for both, each watched on its own peer. */
static int sendrecv_wait(struct ftp_call *c, int rs, int ss, MPI_Request sreq, int dest,
			 MPI_Status *status)
{
	struct ftp_call s = *c;

	s.watch.kind = FTP_WATCH_PEER;
	s.watch.rank = dest;
	s.watch.recv = false;
	s.req = sreq;
	if (rs != MPI_SUCCESS || ss != MPI_SUCCESS) {
		if (rs == MPI_SUCCESS) {
			ftp_mpi.PMPI_Cancel(&c->req);
			ftp_mpi.PMPI_Wait(&c->req, MPI_STATUS_IGNORE);
		}
		if (ss == MPI_SUCCESS)
			ftp_mpi.PMPI_Request_free(&s.req);
		return rs != MPI_SUCCESS ? rs : ss;
	}
	int rc = ftp_block(c, MPI_SUCCESS, status);
	if (rc != MPI_SUCCESS) {
		ftp_mpi.PMPI_Cancel(&s.req);
		ftp_mpi.PMPI_Request_free(&s.req);
		return rc;
	}
	return ftp_block(&s, MPI_SUCCESS, MPI_STATUS_IGNORE);
}

/* Both peers are checked before anything starts. */
static int pre_sendrecv(struct ftp_call *c, MPI_Comm comm, int dest, int source)
{
	int rc = ftp_pre_send(c, comm, dest);

	if (rc == MPI_SUCCESS && !c->direct)
		rc = ftp_pre_recv(c, comm, source);
	return rc;
}

FT_EXPORT int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
			   int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
			   int recvtag, MPI_Comm comm, MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Sendrecv);
	MPI_Request sreq = MPI_REQUEST_NULL;
	int rc = pre_sendrecv(&c, comm, dest, source);

	status = FTP_STATUS(status);
	if (rc == MPI_SUCCESS && ftp_seam_covered(c.comm)) {
		const struct ftp_mode_calls *mode = ftp_cover_calls(c.comm);

		if (mode && mode->MPI_Sendrecv)
			return ftp_post_plain(&c, mode->MPI_Sendrecv(&c, sendbuf, sendcount, sendtype, dest,
								     sendtag, recvbuf, recvcount, recvtype,
								     source, recvtag, status));
		rc = ftp_cover_as_is(&c, FTP_FN_MPI_Sendrecv, FTP_ROLE_P2P);
	}
	dest = ftp_rank_in(c.comm, dest);
	source = ftp_rank_in(c.comm, source);
	if (rc == MPI_SUCCESS && c.direct)
		rc = ftp_mpi.PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
				   recvtype, source, recvtag, c.real, status);
	else if (rc == MPI_SUCCESS) {
		int rs = ftp_mpi.PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, c.real, &c.req);
		int ss = ftp_mpi.PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, c.real, &sreq);
		rc = sendrecv_wait(&c, rs, ss, sreq, dest, status);
	}
	ftp_status_out(c.comm, status);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Sendrecv);

/* The span of count elements of datatype: where it starts relative to
 * buf, and how many bytes it covers. */
static int type_span(MPI_Datatype datatype, MPI_Count count, MPI_Aint *lb, size_t *bytes)
{
	MPI_Aint tlb, textent, xlb, xextent;

	if (ftp_mpi.PMPI_Type_get_true_extent(datatype, &tlb, &textent) != MPI_SUCCESS ||
	    ftp_mpi.PMPI_Type_get_extent(datatype, &xlb, &xextent) != MPI_SUCCESS)
		return -1;
	*lb = tlb;
	*bytes = count > 0 ? (size_t)textent + (size_t)(count - 1) * (size_t)xextent : 0;
	return 0;
}

/* A copy of count elements of datatype at buf, to send from: *copy is
 * where buf would be, the copy's bytes starting at the type's lower
 * bound; copy_free frees it. */
static int copy_of(const void *buf, MPI_Count count, MPI_Datatype datatype, char **copy)
{
	MPI_Aint lb;
	size_t bytes;

	if (type_span(datatype, count, &lb, &bytes) != 0)
		return MPI_ERR_TYPE;
	char *span = malloc(bytes ? bytes : 1);
	if (!span)
		return MPI_ERR_NO_MEM;
	memcpy(span, (const char *)buf + lb, bytes);
	*copy = span - lb;
	return MPI_SUCCESS;
}

static void copy_free(char *copy, MPI_Datatype datatype)
{
	MPI_Aint lb;
	size_t bytes;

	type_span(datatype, 0, &lb, &bytes);
	free(copy + lb);
}

/* MPI_Sendrecv_replace as a receive into buf and a send from a copy. */
static int sendrecv_replace(struct ftp_call *c, void *buf, MPI_Count count, MPI_Datatype datatype,
			    int dest, int sendtag, int source, int recvtag, MPI_Status *status,
			    int (*isend)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *),
			    int (*irecv)(void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))
{
	MPI_Request sreq = MPI_REQUEST_NULL;
	char *copy;
	int rc = copy_of(buf, count, datatype, &copy);

	if (rc != MPI_SUCCESS)
		return rc;
	int rs = irecv(buf, count, datatype, source, recvtag, c->real, &c->req);
	int ss = isend(copy, count, datatype, dest, sendtag, c->real, &sreq);
	rc = sendrecv_wait(c, rs, ss, sreq, dest, status);
	/* A send given up on was freed, not finished: the MPI may still read
	 * the copy, so it is kept (a small leak on a failure path). */
	if (rc == MPI_SUCCESS || ss != MPI_SUCCESS)
		copy_free(copy, datatype);
	return rc;
}

/* On a covered communicator whose mode has an MPI_Sendrecv form: that
 * form, sending from a copy. */
static int covered_sendrecv_replace(struct ftp_call *c, void *buf, int count, MPI_Datatype datatype,
				    int dest, int sendtag, int source, int recvtag, MPI_Status *status)
{
	char *copy;
	int rc = copy_of(buf, count, datatype, &copy);

	if (rc != MPI_SUCCESS)
		return rc;
	rc = ftp_cover_calls(c->comm)->MPI_Sendrecv(c, copy, count, datatype, dest, sendtag, buf, count, datatype,
					    source, recvtag, status);
	copy_free(copy, datatype);
	return rc;
}

static int isend_int(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
		     MPI_Comm comm, MPI_Request *req)
{
	return ftp_mpi.PMPI_Isend(buf, (int)count, dt, dest, tag, comm, req);
}

static int irecv_int(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
		     MPI_Comm comm, MPI_Request *req)
{
	return ftp_mpi.PMPI_Irecv(buf, (int)count, dt, source, tag, comm, req);
}

FT_EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest,
				   int sendtag, int source, int recvtag, MPI_Comm comm,
				   MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Sendrecv_replace);
	int rc = pre_sendrecv(&c, comm, dest, source);

	status = FTP_STATUS(status);
	if (rc == MPI_SUCCESS && ftp_seam_covered(c.comm)) {
		const struct ftp_mode_calls *mode = ftp_cover_calls(c.comm);

		if (mode && mode->MPI_Sendrecv)
			return ftp_post_plain(&c, covered_sendrecv_replace(&c, buf, count, datatype, dest,
									   sendtag, source, recvtag, status));
		rc = ftp_cover_as_is(&c, FTP_FN_MPI_Sendrecv_replace, FTP_ROLE_P2P);
	}
	dest = ftp_rank_in(c.comm, dest);
	source = ftp_rank_in(c.comm, source);
	if (rc == MPI_SUCCESS && c.direct)
		rc = ftp_mpi.PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag,
					   c.real, status);
	else if (rc == MPI_SUCCESS)
		rc = sendrecv_replace(&c, buf, count, datatype, dest, sendtag, source, recvtag, status,
				      isend_int, irecv_int);
	ftp_status_out(c.comm, status);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Sendrecv_replace);

#if MPI_VERSION >= 4
static int isend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		   MPI_Request *req)
{
	return ftp_mpi.PMPI_Isend_c(buf, count, dt, dest, tag, comm, req);
}

static int irecv_c(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
		   MPI_Request *req)
{
	return ftp_mpi.PMPI_Irecv_c(buf, count, dt, source, tag, comm, req);
}

/* On a covered communicator a large-count send-receive goes through the
 * mode's form of its base call while its counts fit an int, as the
 * generated large-count wrappers do; beyond that it is refused. */
FT_EXPORT int MPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
			     int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
			     MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
			     MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Sendrecv_c);
	MPI_Request sreq = MPI_REQUEST_NULL;
	int rc = pre_sendrecv(&c, comm, dest, source);

	status = FTP_STATUS(status);
	if (rc == MPI_SUCCESS && ftp_seam_covered(c.comm)) {
		const struct ftp_mode_calls *mode = ftp_cover_calls(c.comm);

		if (mode && mode->MPI_Sendrecv)
			return ftp_post_plain(
				&c, ftp_mode_count_fits(sendcount) && ftp_mode_count_fits(recvcount)
					    ? mode->MPI_Sendrecv(&c, sendbuf, (int)sendcount, sendtype, dest,
								 sendtag, recvbuf, (int)recvcount, recvtype,
								 source, recvtag, status)
					    : ftp_mode_refuse_because(&c, FTP_MODE_COUNT_TOO_BIG));
		rc = ftp_cover_as_is(&c, FTP_FN_MPI_Sendrecv, FTP_ROLE_P2P);
	}
	dest = ftp_rank_in(c.comm, dest);
	source = ftp_rank_in(c.comm, source);
	if (rc == MPI_SUCCESS && c.direct)
		rc = ftp_mpi.PMPI_Sendrecv_c(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
				     recvtype, source, recvtag, c.real, status);
	else if (rc == MPI_SUCCESS) {
		int rs = ftp_mpi.PMPI_Irecv_c(recvbuf, recvcount, recvtype, source, recvtag, c.real, &c.req);
		int ss = ftp_mpi.PMPI_Isend_c(sendbuf, sendcount, sendtype, dest, sendtag, c.real, &sreq);
		rc = sendrecv_wait(&c, rs, ss, sreq, dest, status);
	}
	ftp_status_out(c.comm, status);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Sendrecv_c);

FT_EXPORT int MPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
				     int sendtag, int source, int recvtag, MPI_Comm comm,
				     MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Sendrecv_replace_c);
	int rc = pre_sendrecv(&c, comm, dest, source);

	status = FTP_STATUS(status);
	if (rc == MPI_SUCCESS && ftp_seam_covered(c.comm)) {
		const struct ftp_mode_calls *mode = ftp_cover_calls(c.comm);

		if (mode && mode->MPI_Sendrecv)
			return ftp_post_plain(&c, ftp_mode_count_fits(count)
							  ? covered_sendrecv_replace(&c, buf, (int)count, datatype,
										     dest, sendtag, source, recvtag,
										     status)
							  : ftp_mode_refuse_because(&c, FTP_MODE_COUNT_TOO_BIG));
		rc = ftp_cover_as_is(&c, FTP_FN_MPI_Sendrecv_replace, FTP_ROLE_P2P);
	}
	dest = ftp_rank_in(c.comm, dest);
	source = ftp_rank_in(c.comm, source);
	if (rc == MPI_SUCCESS && c.direct)
		rc = ftp_mpi.PMPI_Sendrecv_replace_c(buf, count, datatype, dest, sendtag, source, recvtag,
					     c.real, status);
	else if (rc == MPI_SUCCESS)
		rc = sendrecv_replace(&c, buf, count, datatype, dest, sendtag, source, recvtag, status,
				      isend_c, irecv_c);
	ftp_status_out(c.comm, status);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Sendrecv_replace_c);
#endif
