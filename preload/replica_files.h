/* replica_files.h: a replica's own copies of the program's files
 * (replica_files.c): begun when a process learns at MPI_Init that it is
 * a replica, made the files when it is promoted. Application thread. */
#ifndef FTSHIM_REPLICA_FILES_H
#define FTSHIM_REPLICA_FILES_H

/* This process is the replica of logical_rank: from now on the program's
 * files are its copies, deleted at exit unless a promotion comes first. */
void ftp_repl_files_begin(int logical_rank);
/* The replica now stands for its rank: its copies replace the files, and
 * the program's calls reach the real paths from now on. */
void ftp_repl_files_promote(void);

#endif
