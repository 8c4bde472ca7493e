/* inject.h: failure injection's MPI side (pmpi/inject.c). */
#ifndef FTSHIM_PMPI_INJECT_H
#define FTSHIM_PMPI_INJECT_H

#include "pmpi/state.h"

/* Injection: parse FTSHIM_INJECT before PMPI_Init (0, or
 * -EINVAL with one line in err), then carry out this rank's plan: its
 * call and point triggers from ftp_inject_start on, its time triggers
 * from ftp_inject_arm on (once the whole job is up, ftp_job_up). */
int ftp_inject_parse(char *err, size_t errlen);
void ftp_inject_start(void);
void ftp_inject_arm(void);
void ftp_inject_after_call(enum ftp_fn fn);
/* ftshim's own injection points (FTSHIM_INJECT's at=point:NAME:N): as the
 * program's ftshim_inject_point, but in ftshim's end too, where that one
 * no longer fires. */
void ftp_inject_point(const char *name, long value);

/* Set while this rank has a call-count trigger (read by every wrapper). */
extern _Atomic bool ftp_inject_counting;

#endif
