/* callsite.h: where in the application an MPI call was made, for log
 * lines such as "MPI_Recv failed: ... at wait_for_neighbour (report.c:42)".
 * The stack is walked with libunwind; a frame is placed in its shared
 * object with dladdr, named from the symbol table, and given file:line
 * from the DWARF debug information through libdw when ftshim was built
 * with it (HAVE_LIBDW) and the object has debug information (in itself or
 * in /usr/lib/debug/.build-id; debuginfod is never asked).
 *
 * Meant for the rare error path: a call allocates, opens files and takes
 * a few milliseconds (the first one more, while libdw reads the
 * application's line tables). Thread rule: safe to call from any thread,
 * concurrently; never from a signal handler. Nothing here crashes or
 * waits on the network when information is missing: the description gets
 * poorer (no line, then no name) and "unknown" is the floor. */
#ifndef FTSHIM_CALLSITE_H
#define FTSHIM_CALLSITE_H

#include <stdbool.h>
#include <stddef.h>

/* Describe the first frame of the calling thread's stack that lies outside
 * the shared object (or executable) containing the address `inside`,
 * skipping frames in any object whose path contains one of the optional
 * substrings in `also_skip` (NULL-terminated list, may be NULL; used to
 * skip the MPI library's own frames, e.g. "libmpi"). Writes e.g.
 * "wait_for_neighbour (report.c:42)" or, without debug info,
 * "wait_for_neighbour+0x1c (/path/to/prog)" or, without a symbol,
 * "0x401234 (/path/to/prog)". Returns 0, or -1 (out gets "unknown") if no
 * such frame.
 *
 * The search starts at the caller of ft_callsite. If `inside` is NULL or
 * in no object, no frame is skipped for its object. The name is that of
 * the innermost function containing the call, inlined or not, so that it
 * agrees with the line; the address in the last form is the one
 * `addr2line -e /path/to/prog` takes (the return address minus the
 * object's load bias), the offset in the second is from the symbol to the
 * return address. out is always NUL-terminated (truncated if outlen is too
 * small); outlen 0 leaves it untouched. */
int ft_callsite(const void *inside, const char *const *also_skip, char *out, size_t outlen);

/* Describe, as ft_callsite does, the frame skip_frames above the caller:
 * 0 is the function that called ft_callsite_skip, 1 its caller, and so
 * on. Returns 0, or -1 (out gets "unknown") if the stack is not that deep.
 * Frames that the compiler removed (inlined functions, tail calls) are not
 * counted. */
int ft_callsite_skip(unsigned skip_frames, char *out, size_t outlen);

/* When the calling thread runs Python code (a program on mpi4py): the
 * innermost Python frame, "function (file.py:line)", the file as Python
 * names it; returns 0. -1 (out untouched) if the process has no Python
 * interpreter, this thread none of its frames, or the interpreter is
 * ending. Takes the interpreter's lock for the moment it reads the frame
 * (see callsite_python.c): call it only where ftshim holds no lock of its
 * own. */
int ft_callsite_python(char *out, size_t outlen);

/* name as a C++ programmer reads it: a mangled name ("_ZN4Foam8UPstream12
 * waitRequestsEi") demangled ("Foam::UPstream::waitRequests(int)") by the
 * C++ runtime's __cxa_demangle when the process has one loaded (a C++
 * program does; ftshim never loads or links it), into out; anything else,
 * or without the runtime, copied as it is. Returns whether it demangled.
 * out is always NUL-terminated (truncated if outlen is too small); outlen
 * 0 leaves it untouched. Any thread. ft_callsite shows its names so. */
bool ft_demangle(const char *name, char *out, size_t outlen);

#endif
