/* errors.c: raising ftshim's errors through the communicator's error
 * handler, and the wrappers that make MPI_Error_string and
 * MPI_Error_class know the ULFM classes (MPICH 4.0 has the classes but no
 * strings; Open MPI 4.1 has neither). */
#include "ftshim_config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "pmpi/call_record.h"
#include "pmpi/comm_lookup.h"
#include "pmpi/errors.h"
#include "pmpi/ranks.h"
#include "pmpi/cover.h"
#include "pmpi/mode/mode.h"
#include "pmpi/detect.h"
#include "src/callsite.h"
#include "src/log.h"

static const char *error_text(int code)
{
	switch (code) {
	case FTP_ERR_PROC_FAILED:
		return "MPI_ERR_PROC_FAILED: a process involved in the operation has failed";
	case FTP_ERR_PROC_FAILED_PENDING:
		return "MPI_ERR_PROC_FAILED_PENDING: a process that could have matched this receive has "
		       "failed; the request is still pending";
	case FTP_ERR_REVOKED:
		return "MPI_ERR_REVOKED: the communicator was revoked";
	default:
		return NULL;
	}
}

/* Which process's failure this call ran into, for the fatal message. */
static void describe_cause(struct ftp_call *c, char *out, size_t len)
{
	uint32_t n = ft_proc_nfailed(&ftp.procs);
	int32_t peer = c->comm && c->watch.kind == FTP_WATCH_PEER
			       ? ftp_job_at(c->comm, c->watch.rank) : -1;

	if (peer >= 0 && ft_proc_is_failed(&ftp.procs, (uint32_t)peer)) {
		const struct ft_proc *p = &ftp.procs.procs[peer];
		snprintf(out, len, "its peer, rank %d, failed (%s)", ftp_program_of_job(peer),
			 p->how < FT_HOW_COUNT ? ft_fail_how_names[p->how] : "unknown");
		return;
	}
	/* Both copies of a replicated rank are one program rank: named once. */
	char list[256] = "";
	size_t used = 0;
	uint32_t ranks = 0;
	for (uint32_t i = 0; i < n && used + 12 < sizeof list; i++) {
		int32_t r = ftp_program_of_job(ftp.procs.order[i]), j = 0;
		while ((uint32_t)j < i && ftp_program_of_job(ftp.procs.order[j]) != r)
			j++;
		if ((uint32_t)j == i) {
			used += (size_t)snprintf(list + used, sizeof list - used, " %d", r);
			ranks++;
		}
	}
	snprintf(out, len, "failed rank%s:%s", ranks == 1 ? "" : "s", list);
}

const char *ftp_code_name(int code)
{
	switch (code) {
	case MPI_SUCCESS:
		return "MPI_SUCCESS";
	case FTP_ERR_PROC_FAILED:
		return "MPI_ERR_PROC_FAILED";
	case FTP_ERR_PROC_FAILED_PENDING:
		return "MPI_ERR_PROC_FAILED_PENDING";
	case FTP_ERR_REVOKED:
		return "MPI_ERR_REVOKED";
	default:
		return NULL;
	}
}

/* The name for a line: ours, or "an error". */
static const char *code_name(int code)
{
	const char *name = ftp_code_name(code);

	return name ? name : "an error";
}

/* Where the application made the call: the first frame outside this
 * library and the MPI's own (a callback of the MPI's, such as a
 * generalized request's, would otherwise be named); for a Python program,
 * its line first, then that frame (mpi4py's): "main (app.py:12) through
 * PyInit_MPI+0x8b5bc (.../MPI.cpython-311-x86_64-linux-gnu.so)". */
static void ftp_call_site(char *out, size_t len)
{
	static const char *const mpi_libs[] = { "libmpi", "libopen-pal", "libopen-rte", "libucs", "libucp",
						NULL };
	char c_site[256], py_site[256];

	ft_callsite((const void *)ftp_call_site, mpi_libs, c_site, sizeof c_site);
	if (ft_callsite_python(py_site, sizeof py_site) == 0)
		snprintf(out, len, "%s through %s", py_site, c_site);
	else
		snprintf(out, len, "%s", c_site);
}

/* Errors returned to the application are logged up to this many per
 * rank (a program that polls a failed request would repeat them); every
 * one is in the report. Application threads; a count, so relaxed. */
#define LOGGED_ERRORS_MAX 20
/* Call sites are looked up for this many. */
#define SITES_MAX 1000
static _Atomic unsigned raised_errors;

/* The error handler of the call's object: its window or file (c->obj),
 * else its communicator. */
static void get_errhandler(const struct ftp_call *c, MPI_Comm comm, MPI_Errhandler *eh)
{
	switch (c->obj) {
	case FTP_OBJ_WIN:
		ftp_mpi.PMPI_Win_get_errhandler(ftp_win_of(c->obj_bits), eh);
		break;
	case FTP_OBJ_FILE:
		ftp_mpi.PMPI_File_get_errhandler(ftp_file_of(c->obj_bits), eh);
		break;
	default:
		ftp_mpi.PMPI_Comm_get_errhandler(comm, eh);
	}
}

static void call_errhandler(const struct ftp_call *c, MPI_Comm comm, int code)
{
	switch (c->obj) {
	case FTP_OBJ_WIN:
		ftp_mpi.PMPI_Win_call_errhandler(ftp_win_of(c->obj_bits), code);
		break;
	case FTP_OBJ_FILE:
		ftp_mpi.PMPI_File_call_errhandler(ftp_file_of(c->obj_bits), code);
		break;
	default:
		ftp_mpi.PMPI_Comm_call_errhandler(comm, code);
	}
}

const char *ftp_fn_name(enum ftp_fn fn)
{
	static const char *const names[] = FTP_FN_NAMES;

	return fn < FTP_FN_COUNT ? names[fn] : "an MPI call";
}

int ftp_raise(struct ftp_call *c, int code)
{
	MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
	MPI_Comm comm = c->real;
	const char *fn = ftp_fn_name(c->fn);
	const char *object = ftp_obj_noun(c->obj);
	char site[512], cause[256], e_site[1024];

	/* A recovery mode that repairs what failed (spares: restart in
	 * place) does so here rather than let the program see the error;
	 * then this call never returns. */
	if (ftp_is_ft_error(code))
		ftp_mode_error(code);
	if (comm == MPI_COMM_NULL)
		comm = ftp.world;
	get_errhandler(c, comm, &eh);
	bool fatal = eh == MPI_ERRORS_ARE_FATAL;
#ifdef MPI_ERRORS_ABORT
	fatal |= eh == MPI_ERRORS_ABORT;
#endif
	if (eh != MPI_ERRHANDLER_NULL && eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_RETURN)
		ftp_mpi.PMPI_Errhandler_free(&eh);
	/* Finding the call site takes a fraction of a millisecond: not for a
	 * program that polls a failed request in a loop. */
	unsigned n = atomic_fetch_add_explicit(&raised_errors, 1, memory_order_relaxed);
	if (n < SITES_MAX || fatal)
		ftp_call_site(site, sizeof site);
	else
		snprintf(site, sizeof site, "(call site not looked up after %d errors)", SITES_MAX);
	if (code == FTP_ERR_REVOKED)
		snprintf(cause, sizeof cause, "the communicator was revoked");
	else
		describe_cause(c, cause, sizeof cause);
	ft_events_add(ftp_wall_now(), "error", ",\"call\":\"%s\",\"error\":\"%s\",\"site\":\"%s\"", fn,
		      code_name(code), ft_json_escape(site, e_site, sizeof e_site));
	if (fatal) {
		ft_error("%s failed in %s: %s; %s. The %s's error handler is MPI_ERRORS_ARE_FATAL, so "
			 "the job ends; set MPI_ERRORS_RETURN (or a handler) and use the ULFM API to survive",
			 fn, site, error_text(code), cause, object);
		ftp_detect_abort(code);
		ftp_mpi.PMPI_Abort(comm, code);
	}
	if (n < LOGGED_ERRORS_MAX)
		ft_info("%s returned %s to %s: %s", fn, code_name(code), site, cause);
	else if (n == LOGGED_ERRORS_MAX)
		ft_info("%s returned %s to %s: %s (further errors are in the job report only)", fn,
			code_name(code), site, cause);
	call_errhandler(c, comm, code);
	return code;
}

FT_EXPORT int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
	const char *text = error_text(errorcode);

	if (!text)
		return ftp_mpi.PMPI_Error_string(errorcode, string, resultlen);
	snprintf(string, MPI_MAX_ERROR_STRING, "%s", text);
	*resultlen = (int)strlen(string);
	return MPI_SUCCESS;
}
FTP_ALSO_PMPI(MPI_Error_string);

FT_EXPORT int MPI_Error_class(int errorcode, int *errorclass)
{
	if (error_text(errorcode)) {
		*errorclass = errorcode;
		return MPI_SUCCESS;
	}
	return ftp_mpi.PMPI_Error_class(errorcode, errorclass);
}
FTP_ALSO_PMPI(MPI_Error_class);

/* --- refusals of the active recovery mode (pmpi/mode/mode.h) ----------- */

int ftp_mode_refuse_because(struct ftp_call *c, const char *why)
{
	const struct ftp_cover_kind *k = c->comm->cover->kind;
	const struct ftp_mode *m = k ? k->mode : NULL;

	if (m)
		ft_error("%s on a %s communicator is not supported%s (%s=%s); run without %s, or see "
			 "'man 7 ftshim' (%s) for what is",
			 ftp_fn_name(c->fn), k->covered_as, why, m->variable, *m->setting, m->variable,
			 m->man_section);
	else
		ft_error("%s on a %s communicator is not supported%s; see 'man 7 ftshim' for what is",
			 ftp_fn_name(c->fn), k ? k->covered_as : "covered", why);
	ftp_mpi.PMPI_Comm_call_errhandler(c->comm->handle, MPI_ERR_UNSUPPORTED_OPERATION);
	return MPI_ERR_UNSUPPORTED_OPERATION;
}

int ftp_refuse_call(struct ftp_call *c, int code, const char *what)
{
	ft_error("%s %s is erroneous", ftp_fn_name(c->fn), what);
	if (c->comm)
		ftp_mpi.PMPI_Comm_call_errhandler(c->comm->handle, code);
	return code;
}

int ftp_mode_refuse(struct ftp_call *c)
{
	return ftp_mode_refuse_because(c, " yet");
}
