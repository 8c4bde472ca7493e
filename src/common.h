/* common.h: small definitions shared by every module of ftshim's core:
 * symbol visibility, array sizes, the printf format check. The core is
 * MPI-free: nothing under src/ includes mpi.h. */
#ifndef FTSHIM_COMMON_H
#define FTSHIM_COMMON_H

#include <stddef.h>

/* The library is built with -fvisibility=hidden; only what is marked
 * FT_EXPORT (MPI_*, MPIX_*, ftshim_*) leaves it. */
#define FT_EXPORT __attribute__((visibility("default")))

#define FT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define FT_UNUSED __attribute__((unused))

/* Exit statuses of a rank that ftshim stops. */
#define FT_EXIT_CONFIG 78   /* a bad FTSHIM_* variable (EX_CONFIG) */
#define FT_EXIT_EXCLUDED 75 /* declared failed by the others, so it leaves (fail-stop) */
#define FT_EXIT_STUCK 76    /* stuck in an MPI call a failure blocks for ever (pmpi/hangwatch.c) */
#define FT_EXIT_PARTITIONED 74 /* on the losing side of a network partition (fail-stop) */

#define FT_NSEC_PER_USEC 1000ull
#define FT_NSEC_PER_MSEC 1000000ull
#define FT_NSEC_PER_SEC 1000000000ull

#endif
