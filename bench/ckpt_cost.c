/* ckpt_cost.c: what ftshim's in-memory checkpoints cost, for
 * bench/ckpt.py (which runs it and prints the tables).
 *
 * ckpt_cost ckpt MIB CALLS
 *   Each rank fills MIB MiB of state, then, every rank at once (after a
 *   barrier, so that the copies contend as a checkpoint's do):
 *   - memcpy of the state into memory already touched, 3 times;
 *   - memcpy into fresh memory (mmap'ed for the purpose, so that every
 *     page faults in, whatever malloc would have reused), 2 times;
 *   - a copy of the state over a loopback TCP connection to itself (a
 *     thread sends in 1 MiB writes, the rank receives into touched
 *     memory), 3 times: the plain socket rate beside the checkpoint's;
 *   then protects the state (ftshim_protect) and calls
 *   ftshim_checkpoint CALLS times back to back, each call timed
 *   (MPI_Wtime). Rank 0 prints, for every rank r:
 *     memcpy-touched r MS / memcpy-fresh r MS / socket r MS   (each time)
 *     call r I MS                                             (each call)
 *     faults r X      (pages faulted in during the calls, in units of
 *                      MIB MiB: the local copies and those received)
 *     hwm r KIB                                               (peak RSS)
 *   The checkpoint's own split (wait for the previous copy, the local
 *   copy) is in the job's report.json.
 *
 * ckpt_cost relaunch PREFIX MIB
 *   Each rank reads its state, MIB MiB, from the file PREFIX.RANK into
 *   fresh memory (what a relaunch from a checkpoint on a file does), a
 *   barrier, and rank 0 prints "ready UNIX_SECONDS" (the host's clock);
 *   then MPI_Finalize. */
#include <ftshim.h>
#include <mpi.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REPS 3
#define FRESH_REPS 2
#define SOCK_CHUNK ((size_t)1 << 20)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "ckpt_cost: %s: %s\n", what, strerror(errno));
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static void *map_fresh(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/* --- the loopback copy ------------------------------------------------------ */

struct sender {
	struct sockaddr_in to;
	const char *buf;
	size_t len;
};

static void *send_all(void *arg)
{
	struct sender *s = arg;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&s->to, sizeof s->to) != 0)
		die("connect");
	for (size_t off = 0; off < s->len;) {
		size_t n = s->len - off < SOCK_CHUNK ? s->len - off : SOCK_CHUNK;
		ssize_t w = send(fd, s->buf + off, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("send");
		off += (size_t)w;
	}
	close(fd);
	return NULL;
}

/* Seconds to copy len bytes of src into dst over a loopback connection. */
static double socket_copy(const char *src, char *dst, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof a;
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 1) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) != 0)
		die("listen");
	struct sender s = { .to = a, .buf = src, .len = len };
	pthread_t th;
	double t0 = now_s();
	if (pthread_create(&th, NULL, send_all, &s) != 0)
		die("pthread_create");
	int fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	for (size_t off = 0; off < len;) {
		size_t n = len - off < SOCK_CHUNK ? len - off : SOCK_CHUNK;
		ssize_t r = recv(fd, dst + off, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("recv");
		off += (size_t)r;
	}
	pthread_join(th, NULL);
	double t = now_s() - t0;
	close(fd);
	close(lfd);
	return t;
}

/* --- reporting -------------------------------------------------------------- */

/* Rank 0 prints "NAME r MS" (or "NAME r I MS" when indexed) for every
 * rank's n values. */
static void print_all(const char *name, const double *ms, int n, int indexed, int rank, int size)
{
	double *all = rank == 0 ? malloc((size_t)n * (size_t)size * sizeof *all) : NULL;

	MPI_Gather(ms, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (rank != 0)
		return;
	for (int r = 0; r < size; r++)
		for (int i = 0; i < n; i++) {
			if (indexed)
				printf("%s %d %d %.3f\n", name, r, i + 1, all[r * n + i]);
			else
				printf("%s %d %.3f\n", name, r, all[r * n + i]);
		}
	free(all);
}

static double hwm_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kib = -1;

	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			kib = atof(line + 6);
	if (f)
		fclose(f);
	return kib;
}

/* --- the modes -------------------------------------------------------------- */

static int ckpt(size_t len, int calls, int rank, int size)
{
	char *state = malloc(len), *touched = malloc(len);
	double ms[REPS], *call_ms = malloc((size_t)calls * sizeof *call_ms);

	if (!state || !touched || !call_ms)
		die("malloc");
	for (size_t i = 0; i < len; i++)
		state[i] = (char)(i * 7 + (size_t)rank);
	memset(touched, 1, len);

	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < REPS; i++) {
		double t0 = now_s();
		memcpy(touched, state, len);
		ms[i] = (now_s() - t0) * 1e3;
	}
	print_all("memcpy-touched", ms, REPS, 0, rank, size);

	/* Twice only: on a VM, page faults can make this the longest part. */
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < FRESH_REPS; i++) {
		char *fresh = map_fresh(len);
		double t0 = now_s();
		memcpy(fresh, state, len);
		ms[i] = (now_s() - t0) * 1e3;
		munmap(fresh, len);
	}
	print_all("memcpy-fresh", ms, FRESH_REPS, 0, rank, size);

	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < REPS; i++)
		ms[i] = socket_copy(state, touched, len) * 1e3;
	print_all("socket", ms, REPS, 0, rank, size);
	free(touched);

	if (!ftshim_protect || !ftshim_checkpoint) {
		if (rank == 0)
			fprintf(stderr, "ckpt_cost: run under ftshim (LD_PRELOAD=libftshim.so)\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (ftshim_protect(0, state, len) != 0)
		die("ftshim_protect");
	MPI_Barrier(MPI_COMM_WORLD);
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	for (int i = 0; i < calls; i++) {
		double t0 = MPI_Wtime();
		int rc = ftshim_checkpoint(i + 1);
		call_ms[i] = (MPI_Wtime() - t0) * 1e3;
		if (rc != 0)
			printf("rank %d: checkpoint %d: %d\n", rank, i + 1, rc);
	}
	/* Pages faulted in by the process (its threads too) during the
	 * calls, in units of the state's size. */
	getrusage(RUSAGE_SELF, &ru1);
	double faults = (double)(ru1.ru_minflt - ru0.ru_minflt) * (double)sysconf(_SC_PAGESIZE) / (double)len;
	print_all("call", call_ms, calls, 1, rank, size);
	print_all("faults", &faults, 1, 0, rank, size);
	double hwm = hwm_kib();
	print_all("hwm", &hwm, 1, 0, rank, size);
	free(call_ms);
	free(state);
	return 0;
}

static int relaunch(const char *prefix, size_t len, int rank)
{
	char path[4096];
	snprintf(path, sizeof path, "%s.%d", prefix, rank);
	int fd = open(path, O_RDONLY);
	char *state = malloc(len);

	if (fd < 0)
		die(path);
	if (!state)
		die("malloc");
	for (size_t off = 0; off < len;) {
		ssize_t r = read(fd, state + off, len - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("read");
		off += (size_t)r;
	}
	close(fd);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		printf("ready %.6f\n", (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
		fflush(stdout);
	}
	free(state);
	return 0;
}

int main(int argc, char **argv)
{
	int rank, size, rc = 2;

	if (argc < 4 || (strcmp(argv[1], "ckpt") != 0 && strcmp(argv[1], "relaunch") != 0)) {
		fprintf(stderr, "usage: ckpt_cost ckpt MIB CALLS | ckpt_cost relaunch PREFIX MIB\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (strcmp(argv[1], "ckpt") == 0)
		rc = ckpt((size_t)atol(argv[2]) << 20, atoi(argv[3]), rank, size);
	else
		rc = relaunch(argv[2], (size_t)atol(argv[3]) << 20, rank);
	fflush(stdout);
	MPI_Finalize();
	return rc;
}
