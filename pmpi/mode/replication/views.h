/* views.h: applying failures to the views (views.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_VIEWS_H
#define FTSHIM_PMPI_MODE_REPLICATION_VIEWS_H

#include "pmpi/mode/replication/state.h"

/* w, a world rank known failed here: if it is one copy of a replicated
 * rank, return once this process's view has applied its death (the
 * process table shows a death before its list of deaths, which the view
 * reads, does), so that a call's peer can be looked up again. Not while
 * a view is applied. */
void ftp_repl_await_view(int32_t w);

/* Apply the failures learned since the last call to the view: a dead
 * replica is dropped, a dead primary's replica promoted. The mode's
 * failures hook (the core's ftp_check, and this folder's files through
 * ftp_mode_failures, before a replicated call picks its peers); does
 * nothing while one runs, or without replication. */
void ftp_repl_views(void);

#endif
