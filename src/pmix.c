/* pmix.c: a rank's last words to Open MPI's PMIx server (see pmix.h). */
#include "ftshim_config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "src/log.h"
#include "src/pmix.h"

/* The little of the PMIx client's ABI used here (pmix_common.h: the same
 * from PMIx 3 to 5), so that ftshim needs no PMIx headers to build. */
#define PMIX_BOOL 1
#define PMIX_JOB_CTRL_KILL "pmix.jctrl.kill"
struct pmix_proc {
	char nspace[256];
	uint32_t rank;
};
struct pmix_info {
	char key[512];
	uint32_t flags;
	struct {
		uint16_t type;
		union {
			bool flag;
			void *ptr[3]; /* the union's size (pmix_envar_t) */
		} data;
	} value;
};

typedef int (*initialized_fn)(void);
typedef int (*finalize_fn)(const struct pmix_info *, size_t);
typedef int (*job_control_fn)(const struct pmix_proc *, size_t, const struct pmix_info *, size_t,
			      struct pmix_info **, size_t *);

/* A function of the PMIx library the process has loaded: Open MPI loads
 * it with its pmix component, in the global scope or not. */
static void *pmix_sym(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);

	if (!f) {
		void *h = dlopen("libpmix.so.2", RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			f = dlsym(h, name);
			dlclose(h);
		}
	}
	return f;
}

/* The PMIx client, if the process has one and it is up. */
static bool pmix_up(void)
{
	initialized_fn initialized = (initialized_fn)pmix_sym("PMIx_Initialized");

	return initialized && initialized();
}

int ft_pmix_kill(const uint32_t *ranks, uint32_t n)
{
	job_control_fn job_control = (job_control_fn)pmix_sym("PMIx_Job_control");
	const char *ns = getenv("PMIX_NAMESPACE");
	struct pmix_info kill = { .key = PMIX_JOB_CTRL_KILL, .value = { .type = PMIX_BOOL, .data.flag = true } };
	struct pmix_info *results = NULL; /* ORTE 4.1 returns none */
	size_t nresults = 0;
	int rc;

	if (!job_control || !ns || strlen(ns) >= sizeof ((struct pmix_proc *)0)->nspace || !pmix_up())
		return -ENOSYS;
	if (n == 0)
		return 0;
	struct pmix_proc *procs = calloc(n, sizeof *procs);
	if (!procs)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		strcpy(procs[i].nspace, ns);
		procs[i].rank = ranks[i];
	}
	/* The server answers at once; the kill goes on there. */
	rc = job_control(procs, n, &kill, 1, &results, &nresults);
	free(procs);
	if (rc != 0) {
		ft_debug("PMIx_Job_control (kill %u rank(s)): PMIx status %d", n, rc);
		return -EPROTO;
	}
	return 0;
}

int ft_pmix_finalize(void)
{
	finalize_fn finalize = (finalize_fn)pmix_sym("PMIx_Finalize");
	int rc;

	if (!finalize || !pmix_up())
		return -ENOSYS;
	if ((rc = finalize(NULL, 0)) != 0) {
		ft_debug("PMIx_Finalize: PMIx status %d", rc);
		return -EPROTO;
	}
	return 0;
}
