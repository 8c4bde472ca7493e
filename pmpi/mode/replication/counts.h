/* counts.h: counts and resends after a death (counts.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_COUNTS_H
#define FTSHIM_PMPI_MODE_REPLICATION_COUNTS_H

#include "pmpi/mode/replication/state.h"

/* Progress the resends (wait: until each is delivered or its peer dead). */
void ftp_repl_resends_progress(bool wait);
/* Tell world rank `to` what this process has of logical rank l's messages. */
void ftp_repl_tell_counts(int32_t l, int32_t to);
/* Give world rank w, in the dead copy's slot, what it lacks; skip what
 * it has. */
void ftp_repl_serve_one(int32_t w, enum ft_copy_slot slot);
/* The primary of a logical rank whose replica `dead` died: serve every
 * other replica. */
void ftp_repl_serve_counts(int32_t dead);

#endif
