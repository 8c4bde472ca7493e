/* mpi_lib.c: the MPI library below ftshim, found once as the library
 * loads: its entry points (ftp_mpi, filled by the generated
 * ftp_mpi_resolve) and the address range of its code, by which a
 * completion call tells the MPI's own calls from the program's
 * (ftp_called_by_mpi); and one pass of its whole progress engine
 * (ftp_mpi_progress). Written once, by whichever comes first: the
 * library's constructor, or a call that can come before it (another
 * library's constructor may call MPI_Initialized: Open MPI's C++
 * bindings do, before ftshim's constructor has run); read-only after. */
#include "ftshim_config.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>

#include "pmpi/state.h"
#include "pmpi/mpi_entry.h"
#include "pmpi/mpi_lib.h"
#include "pmpi/shm_repair.h"

/* How many functions of mpi.h the MPI library below ftshim does not
 * export (ftp_mpi has NULL for them). Written once, at load. */
static int entries_missing;

/* The executable code of the MPI library (the object that defines
 * PMPI_Init). Written once, at load; [0, 0) if not found. */
static uintptr_t mpi_text_start, mpi_text_end;

static int find_mpi_text(struct dl_phdr_info *info, size_t size, void *base)
{
	(void)size;
	if ((void *)info->dlpi_addr != base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
		if (!mpi_text_end || start < mpi_text_start)
			mpi_text_start = start;
		if (end > mpi_text_end)
			mpi_text_end = end;
	}
	return 1;
}

bool ftp_called_by_mpi(const void *return_address)
{
	uintptr_t a = (uintptr_t)return_address;

	return a >= mpi_text_start && a < mpi_text_end;
}

static pthread_once_t entries_found = PTHREAD_ONCE_INIT;

static void find_mpi_entries(void)
{
	Dl_info info;

	entries_missing = ftp_mpi_resolve();
	if (ftp_mpi.PMPI_Init && dladdr((void *)(uintptr_t)ftp_mpi.PMPI_Init, &info) && info.dli_fbase)
		dl_iterate_phdr(find_mpi_text, info.dli_fbase);
}

void ftp_mpi_ready(void)
{
	pthread_once(&entries_found, find_mpi_entries);
}

/* Find the MPI's own entry points before anything can call one: a
 * program may call MPI (MPI_Initialized, MPI_Get_version) before MPI_Init. */
__attribute__((constructor)) static void find_mpi_entries_at_load(void)
{
	ftp_mpi_ready();
}

/* Open MPI exports its MPI_COMM_WORLD object; MPICH and its kin do
 * not. Asked of the library whose PMPI_Init ftshim calls: the MPI this
 * library was linked with is loaded too, after the program's. */
const char *ftp_mpi_foreign(void)
{
	Dl_info info;
	void *lib = NULL;

	if (ftp_mpi.PMPI_Init && dladdr((void *)(uintptr_t)ftp_mpi.PMPI_Init, &info) && info.dli_fname)
		lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!lib)
		return NULL;
	bool open_mpi = dlsym(lib, "ompi_mpi_comm_world") != NULL;
	dlclose(lib);

#ifdef OPEN_MPI
	return open_mpi || !ftp_mpi.PMPI_Init ? NULL : "an MPI other than Open MPI";
#else
	return open_mpi ? "Open MPI" : NULL;
#endif
}

int ftp_mpi_entries_missing(void)
{
	return entries_missing;
}

void ftp_mpi_progress(void)
{
	MPI_Request req = MPI_REQUEST_NULL;
	int flag = 0;

	ftp_shm_repair_poll();
	if (ftp_mpi.PMPI_Initialized(&flag) != MPI_SUCCESS || !flag) {
		/* Sessions only: no MPI_COMM_SELF; a probe of ftshim's world
		 * (which returns its errors) is the most there is. */
		if (ftp.world != MPI_COMM_NULL)
			ftp_mpi.PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ftp.world, &flag, MPI_STATUS_IGNORE);
		return;
	}
	flag = 0;
	if (ftp_mpi.PMPI_Irecv(NULL, 0, MPI_BYTE, 0, ftp.coll_tag_ub, MPI_COMM_SELF, &req) != MPI_SUCCESS)
		return;
	ftp_mpi.PMPI_Test(&req, &flag, MPI_STATUS_IGNORE);
	if (!flag) {
		ftp_mpi.PMPI_Cancel(&req);
		ftp_mpi.PMPI_Wait(&req, MPI_STATUS_IGNORE);
	}
}
