// cxx_callsite.cpp: a C++ program's call site in ftshim's error line
// (tests/mpi/cases/callsite_cxx.sh). Rank 1 dies at once; rank 0 then
// receives from it in a member function of a namespaced class, under
// MPI_ERRORS_ARE_FATAL, so ftshim names that call site as it ends the
// job. Built without debug information, the name comes from the symbol
// table, mangled; ftshim shows it demangled. The program uses the C++
// runtime (std::string), as real C++ programs do.
#include <mpi.h>

#include <csignal>
#include <cstdio>
#include <string>

namespace Foam {
struct UPstream {
	static void waitRequests(int n);
};
} // namespace Foam

void Foam::UPstream::waitRequests(int n)
{
	int v = 0;
	std::string what = "waiting on tag " + std::to_string(n);
	std::printf("rank 0: %s\n", what.c_str());
	std::fflush(stdout);
	MPI_Recv(&v, 1, MPI_INT, 1, n, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 1)
		std::raise(SIGKILL);
	if (rank == 0)
		Foam::UPstream::waitRequests(3);
	MPI_Finalize();
	return 0;
}
