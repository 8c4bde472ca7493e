/* ucx_reserve.h: what a sender killed in the middle of a send leaves in a
 * neighbour's on-host receive queue of UCX's, made on purpose (issue 39,
 * item 2): the next slot of the queue reserved, as a sender reserves it
 * before writing its message, and never written. For tests/mpi/progs/
 * shm_freeze.c and bench/exchange_kill.c. The layout is UCX 1.13's (see
 * src/shm_fifo.h): the queues this process has mapped are the shared,
 * writable mappings whose control block (192 bytes: head at 0, tail at
 * 128, the owner's pid at 136) names another process. */
#ifndef FTSHIM_TESTS_UCX_RESERVE_H
#define FTSHIM_TESTS_UCX_RESERVE_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define UCX_RESERVE_CTL_BYTES 192
#define UCX_RESERVE_SLOTS 64

/* Reserve the next slot of every queue of owner's (every other
 * process's: owner 0) that this process has mapped. Returns how many. */
static inline int ucx_reserve_slots(int owner)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	int mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	char line[512];
	int reserved = 0;
	int32_t self = (int32_t)getpid();

	while (maps && mem >= 0 && fgets(line, sizeof line, maps)) {
		unsigned long lo, hi;
		char perms[5];
		unsigned char ctl[UCX_RESERVE_CTL_BYTES];
		int32_t pid;
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 || strcmp(perms, "rw-s") != 0 ||
		    hi - lo < UCX_RESERVE_CTL_BYTES + UCX_RESERVE_SLOTS * 128 ||
		    pread(mem, ctl, sizeof ctl, (off_t)lo) != (ssize_t)sizeof ctl)
			continue;
		memcpy(&pid, ctl + 136, sizeof pid);
		if (pid <= 0 || pid == self || (owner && pid != owner))
			continue;
		uint64_t *head = (uint64_t *)lo, *tail = (uint64_t *)(lo + 128);
		uint64_t h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
		for (;;) {
			uint64_t index = h & ~(UINT64_C(1) << 63);
			if (index - __atomic_load_n(tail, __ATOMIC_ACQUIRE) >= UCX_RESERVE_SLOTS)
				break; /* full: nothing to reserve */
			if (__atomic_compare_exchange_n(head, &h, h + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				reserved++;
				break;
			}
		}
	}
	if (maps)
		fclose(maps);
	if (mem >= 0)
		close(mem);
	return reserved;
}

#endif
