/* registry.c: the recovery modes ftshim is built with, and the choice of
 * the active one at MPI_Init (pmpi/mode/mode.h). A new
 * mode is one more entry of `modes`, and a folder beside replication/.
 * Called by pmpi/init.c (ftp_mode_select) only: it sits above every mode
 * it names, and the core reaches the active one through ftp_mode_active
 * (pmpi/mode/mode.c). */
#include "ftshim_config.h"

#include <errno.h>
#include <stdio.h>

#include "pmpi/mode/registry.h"
#include "pmpi/mode/mode.h"
#include "pmpi/mode/replication/hooks.h"
#include "pmpi/mode/spares/spares.h"
#include "src/log.h"

static const struct ftp_mode *const modes[] = {&ftp_replication_mode, &ftp_spares_mode};

int ftp_mode_select(char *err, size_t errlen)
{
	const struct ftp_mode *chosen = NULL;

	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		int rc = modes[i]->parse(err, errlen);
		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		if (chosen) {
			snprintf(err, errlen,
				 "%s=%s and %s=%s ask for two recovery modes; accepted: one of them",
				 chosen->variable, *chosen->setting, modes[i]->variable,
				 *modes[i]->setting);
			return -EINVAL;
		}
		chosen = modes[i];
	}
	ftp_mode_active = chosen;
	return 0;
}
