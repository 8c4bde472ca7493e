/* outcome.c: the job's outcome for scripts, in the file FTSHIM_STATUS_FILE
 * names (none by default). Rank 0 removes it at MPI_Init; at the end,
 * either the reporting rank writes "completed" (the program finished on
 * every rank that did not fail) and the summary line, or a rank that ends
 * the whole job writes "ended" and its exit status; a job that ends
 * otherwise (every process killed from outside) leaves no file. Written
 * whole (a temporary file renamed over it), on the writer's host. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pmpi/outcome.h"
#include "pmpi/state.h"
#include "src/log.h"
#include "src/report.h"

static void write_outcome(const char *text)
{
	if (!ftp.cfg.status_file[0])
		return;
	int rc = ft_write_file_atomically(ftp.cfg.status_file, text, strlen(text));
	if (rc != 0)
		ft_warn("FTSHIM_STATUS_FILE: cannot write %s: %s", ftp.cfg.status_file, strerror(-rc));
}

void ftp_outcome_start(void)
{
	if (ftp.cfg.status_file[0] && ftp.rank == 0 && unlink(ftp.cfg.status_file) != 0 && errno != ENOENT)
		ft_warn("FTSHIM_STATUS_FILE: cannot remove %s: %s", ftp.cfg.status_file, strerror(errno));
}

void ftp_outcome_completed(const char *summary)
{
	char text[1200];

	snprintf(text, sizeof text, "completed\n%s\n", summary);
	write_outcome(text);
}

void ftp_outcome_ended(int status)
{
	char text[64];

	snprintf(text, sizeof text, "ended\nstatus %d\n", status);
	write_outcome(text);
}
