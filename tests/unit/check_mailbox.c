/* check_mailbox.c: unit tests of src/mailbox.c: bad arguments and
 * mismatched sizes are refused; messages round-trip in order with their
 * sender, also when they wrap around the ring thousands of times; a full
 * ring refuses and takes again once drained; the name is gone from
 * /dev/shm once everyone opened it, or once a closer sees someone never
 * came; a forked process sleeping on its doorbell is woken by a ring and
 * replies; ring reports whether anyone listens; a corrupt record empties
 * its ring instead of being read; the futex helpers sleep and wake. */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/common.h"
#include "src/log.h"
#include "src/mailbox.h"

/* A name of its own for every segment, so that runs cannot meet. */
static const char *shm_name(void)
{
	static char name[64];
	static unsigned n;

	snprintf(name, sizeof name, "/ftmbx-test-%d-%u", (int)getpid(), n++);
	return name;
}

static bool shm_exists(const char *name)
{
	int fd = shm_open(name, O_RDWR, 0600);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	ck_assert_int_eq(errno, ENOENT);
	return false;
}

/* What a drain took: the messages, one after the other, and their senders. */
struct taken {
	unsigned count;
	uint32_t from[64];
	uint32_t len[64];
	unsigned char bytes[64][256];
};

static void take_copy(void *ctx, uint32_t from, const void *msg, uint32_t len)
{
	struct taken *t = ctx;

	ck_assert_uint_lt(t->count, FT_ARRAY_SIZE(t->from));
	ck_assert_uint_le(len, sizeof t->bytes[0]);
	t->from[t->count] = from;
	t->len[t->count] = len;
	memcpy(t->bytes[t->count], msg, len);
	t->count++;
}

static void open_pair(const char *name, uint32_t ring_bytes, struct ft_mailbox **a,
		      struct ft_mailbox **b)
{
	ck_assert_int_eq(ft_mailbox_open(a, name, 2, 0, ring_bytes), 0);
	ck_assert_int_eq(ft_mailbox_open(b, name, 2, 1, ring_bytes), 0);
}

START_TEST(test_bad_arguments)
{
	struct ft_mailbox *mb = (struct ft_mailbox *)1;
	const char *name = shm_name();

	ck_assert_int_eq(ft_mailbox_open(&mb, name, 0, 0, 4096), -EINVAL);
	ck_assert_ptr_null(mb);
	ck_assert_int_eq(ft_mailbox_open(&mb, name, 2, 2, 4096), -EINVAL);
	ck_assert_int_eq(ft_mailbox_open(&mb, name, 2, 5, 4096), -EINVAL);
	ck_assert_int_eq(ft_mailbox_open(&mb, name, 2, 0, 4000), -EINVAL);
	ck_assert_int_eq(ft_mailbox_open(&mb, name, 2, 0, 128), -EINVAL);
	ck_assert_int_eq(ft_mailbox_open(&mb, name, 2, 0, 0), -EINVAL);
	ck_assert_int_eq(ft_mailbox_open(&mb, name, 2, 0, 2u << 20), -EINVAL);
	ck_assert_int_eq(ft_mailbox_open(&mb, "no-slash", 2, 0, 4096), -EINVAL);
	/* 1024^2 rings of 1 MiB, and more processes than any host has. */
	ck_assert_int_eq(ft_mailbox_open(&mb, name, 1024, 0, 1u << 20), -E2BIG);
	ck_assert_int_eq(ft_mailbox_open(&mb, name, UINT32_MAX, 0, 256), -E2BIG);
	ck_assert(!shm_exists(name)); /* refused before anything was created */

	/* The second opener passes other sizes than the segment has. */
	struct ft_mailbox *first, *second = (struct ft_mailbox *)1;
	ck_assert_int_eq(ft_mailbox_open(&first, name, 2, 0, 4096), 0);
	ck_assert_int_eq(ft_mailbox_open(&second, name, 3, 1, 4096), -EINVAL);
	ck_assert_ptr_null(second);
	ck_assert_int_eq(ft_mailbox_open(&second, name, 2, 1, 8192), -EINVAL);
	ck_assert(shm_exists(name)); /* the refused did not count */
	ck_assert_uint_eq(ft_mailbox_size(first), 2);
	ck_assert_uint_eq(ft_mailbox_self(first), 0);
	ft_mailbox_close(first);
	ck_assert(!shm_exists(name));
	ft_mailbox_close(NULL);
}
END_TEST

START_TEST(test_round_trip)
{
	struct ft_mailbox *a, *b;
	struct taken *t = calloc(1, sizeof *t);

	open_pair(shm_name(), 256, &a, &b);
	ck_assert(!ft_mailbox_pending(a));
	ck_assert(!ft_mailbox_pending(b));
	ck_assert(ft_mailbox_put(a, 1, "hello", 5));
	ck_assert(ft_mailbox_put(a, 1, "world!", 6));
	ck_assert(ft_mailbox_put(b, 0, "back", 4));
	ck_assert(ft_mailbox_pending(a));
	ck_assert(ft_mailbox_pending(b));

	ck_assert_uint_eq(ft_mailbox_drain(b, take_copy, t), 2);
	ck_assert_uint_eq(t->from[0], 0);
	ck_assert_uint_eq(t->len[0], 5);
	ck_assert_mem_eq(t->bytes[0], "hello", 5);
	ck_assert_uint_eq(t->from[1], 0);
	ck_assert_uint_eq(t->len[1], 6);
	ck_assert_mem_eq(t->bytes[1], "world!", 6);
	ck_assert(!ft_mailbox_pending(b));
	ck_assert_uint_eq(ft_mailbox_drain(b, take_copy, t), 0);

	t->count = 0;
	ck_assert_uint_eq(ft_mailbox_drain(a, take_copy, t), 1);
	ck_assert_uint_eq(t->from[0], 1);
	ck_assert_mem_eq(t->bytes[0], "back", 4);

	/* Refused: to itself, to no one, empty, longer than a quarter ring. */
	unsigned char big[65] = { 0 };
	ck_assert(!ft_mailbox_put(a, 0, "x", 1));
	ck_assert(!ft_mailbox_put(a, 2, "x", 1));
	ck_assert(!ft_mailbox_put(a, UINT32_MAX, "x", 1));
	ck_assert(!ft_mailbox_put(a, 1, "x", 0));
	ck_assert(!ft_mailbox_put(a, 1, big, 65));
	ck_assert(ft_mailbox_put(a, 1, big, 64));
	ck_assert(!ft_mailbox_ring(a, 2));

	/* Full: 1-byte messages take 8 bytes each, 32 fill 256. */
	t->count = 0;
	ck_assert_uint_eq(ft_mailbox_drain(b, take_copy, t), 1);
	unsigned puts = 0;
	for (unsigned char c = 0; ft_mailbox_put(a, 1, &c, 1); c++)
		puts++;
	ck_assert_uint_eq(puts, 32);
	t->count = 0;
	ck_assert_uint_eq(ft_mailbox_drain(b, take_copy, t), 32);
	for (unsigned i = 0; i < 32; i++)
		ck_assert_uint_eq(t->bytes[i][0], i);
	ck_assert(ft_mailbox_put(a, 1, "again", 5));
	t->count = 0;
	ck_assert_uint_eq(ft_mailbox_drain(b, take_copy, t), 1);
	ck_assert_mem_eq(t->bytes[0], "again", 5);

	ft_mailbox_close(a);
	ft_mailbox_close(b);
	free(t);
}
END_TEST

/* Message k of the stream: its length and its bytes follow from k. */
static uint32_t stream_len(unsigned k, uint32_t max)
{
	return 1 + (uint32_t)((k * 2654435761u) >> 7) % max;
}

static unsigned char stream_byte(unsigned k, uint32_t i)
{
	return (unsigned char)(k * 131u + i * 7u + (i >> 8));
}

struct stream_check {
	unsigned next; /* the k expected next */
	uint32_t from;
	uint32_t max;
	bool ok;
};

static void take_stream(void *ctx, uint32_t from, const void *msg, uint32_t len)
{
	struct stream_check *s = ctx;
	const unsigned char *p = msg;
	unsigned k = s->next++;

	if (from != s->from || len != stream_len(k, s->max))
		s->ok = false;
	for (uint32_t i = 0; s->ok && i < len; i++)
		if (p[i] != stream_byte(k, i))
			s->ok = false;
}

/* 10,000 messages of every length up to a quarter ring, put until the ring
 * is full (or, with batch, batch at a time), drained, checked byte for
 * byte: they wrap around the end of the ring many times, at every offset. */
static void run_stream(uint32_t ring_bytes, unsigned batch)
{
	struct ft_mailbox *a, *b;
	struct stream_check s = { .from = 1, .max = ring_bytes / 4, .ok = true };
	unsigned char *msg = malloc(ring_bytes / 4);
	const unsigned total = 10000;
	unsigned k = 0, drains = 0;

	open_pair(shm_name(), ring_bytes, &a, &b);
	while (s.next < total) {
		for (unsigned n = 0; k < total && (batch == 0 || n < batch); n++, k++) {
			uint32_t len = stream_len(k, s.max);
			for (uint32_t i = 0; i < len; i++)
				msg[i] = stream_byte(k, i);
			if (!ft_mailbox_put(b, 0, msg, len))
				break;
		}
		ck_assert(ft_mailbox_pending(a));
		ft_mailbox_drain(a, take_stream, &s);
		ck_assert_msg(s.ok, "message %u arrived wrong", s.next - 1);
		ck_assert_uint_eq(s.next, k);
		ck_assert(!ft_mailbox_pending(a));
		drains++;
	}
	/* Wrapped many times: far more bytes went through than the ring holds. */
	ck_assert_uint_gt(drains, 20);
	ft_mailbox_close(a);
	ft_mailbox_close(b);
	free(msg);
}

START_TEST(test_stream_wraps)
{
	run_stream(256, 0);
	run_stream(4096, 0);
	run_stream(4096, 7);
	run_stream(1u << 16, 0);
}
END_TEST

START_TEST(test_unlinked)
{
	struct ft_mailbox *a, *b, *c;
	const char *name = shm_name();

	ck_assert_int_eq(ft_mailbox_open(&a, name, 2, 0, 4096), 0);
	ck_assert(shm_exists(name));
	ck_assert_int_eq(ft_mailbox_open(&b, name, 2, 1, 4096), 0);
	ck_assert(!shm_exists(name)); /* the last opener unlinked it */
	/* Still one segment for both: the name went, the mapping did not. */
	ck_assert(ft_mailbox_put(a, 1, "still", 5));
	ck_assert(ft_mailbox_pending(b));
	ft_mailbox_close(a); /* everyone came: nothing to unlink, ENOENT ignored */
	ft_mailbox_close(b);

	/* Three expected, two came: a closer unlinks it. */
	name = shm_name();
	ck_assert_int_eq(ft_mailbox_open(&a, name, 3, 0, 256), 0);
	ck_assert_int_eq(ft_mailbox_open(&c, name, 3, 2, 256), 0);
	ck_assert(shm_exists(name));
	ft_mailbox_close(c);
	ck_assert(!shm_exists(name));
	ft_mailbox_close(a); /* ENOENT: already gone */
	ck_assert(!shm_exists(name));
}
END_TEST

/* The child of test_across_processes: exits 0 if all went right, else a
 * status saying which step failed. */
static void child_side(const char *name)
{
	struct ft_mailbox *mb;
	struct taken *t = calloc(1, sizeof *t);

	alarm(10); /* whatever happens, it does not outlive the test */
	if (t == NULL || ft_mailbox_open(&mb, name, 2, 1, 4096) != 0)
		_exit(10);
	ft_mailbox_listen(mb, true);
	if (!ft_mailbox_put(mb, 0, "ready", 5))
		_exit(11);
	ft_mailbox_ring(mb, 0);

	struct ft_doorbell *doorbell = ft_mailbox_doorbell(mb);
	uint64_t t0 = ft_clock_now();
	for (;;) {
		uint32_t seen = ft_doorbell_read(doorbell);
		if (ft_mailbox_pending(mb))
			break;
		if (ft_clock_now() - t0 > 5 * FT_NSEC_PER_SEC)
			_exit(12);
		ft_doorbell_sleep(doorbell, seen, 5 * FT_NSEC_PER_SEC, true);
	}
	/* Woken by the ring, well before the sleep's own timeout. */
	if (ft_clock_now() - t0 > 2 * FT_NSEC_PER_SEC)
		_exit(13);
	if (ft_mailbox_drain(mb, take_copy, t) != 1 || t->from[0] != 0 || t->len[0] != 4 ||
	    memcmp(t->bytes[0], "ping", 4) != 0)
		_exit(14);
	if (!ft_mailbox_put(mb, 0, "pong", 4))
		_exit(15);
	ft_mailbox_ring(mb, 0);
	/* Still listening until the parent says it is done: its ring after
	 * "ping" must see the count above zero, however fast this was. */
	t0 = ft_clock_now();
	while (!ft_mailbox_pending(mb)) {
		uint32_t seen = ft_doorbell_read(doorbell);
		if (ft_mailbox_pending(mb))
			break;
		if (ft_clock_now() - t0 > 5 * FT_NSEC_PER_SEC)
			_exit(16);
		ft_doorbell_sleep(doorbell, seen, 100 * FT_NSEC_PER_MSEC, true);
	}
	ft_mailbox_listen(mb, false);
	t->count = 0;
	if (ft_mailbox_drain(mb, take_copy, t) != 1 || memcmp(t->bytes[0], "bye", 3) != 0)
		_exit(17);
	ft_mailbox_close(mb);
	free(t);
	_exit(0);
}

/* Wait (listening) until a message comes for mb, at most 5 s. */
static bool wait_for_message(struct ft_mailbox *mb)
{
	struct ft_doorbell *doorbell = ft_mailbox_doorbell(mb);
	uint64_t end = ft_clock_now() + 5 * FT_NSEC_PER_SEC;
	bool came = false;

	ft_mailbox_listen(mb, true);
	while (ft_clock_now() < end) {
		uint32_t seen = ft_doorbell_read(doorbell);
		if ((came = ft_mailbox_pending(mb)))
			break;
		ft_doorbell_sleep(doorbell, seen, 100 * FT_NSEC_PER_MSEC, true);
	}
	ft_mailbox_listen(mb, false);
	return came || ft_mailbox_pending(mb);
}

START_TEST(test_across_processes)
{
	const char *name = shm_name();
	struct ft_mailbox *mb;
	struct taken *t = calloc(1, sizeof *t);

	/* Both open at about the same time: either may create it. */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		child_side(name);
	ck_assert_int_eq(ft_mailbox_open(&mb, name, 2, 0, 4096), 0);

	ck_assert(wait_for_message(mb));
	ck_assert_uint_eq(ft_mailbox_drain(mb, take_copy, t), 1);
	ck_assert_mem_eq(t->bytes[0], "ready", 5);
	/* Give the child time to fall asleep, so the ring has to wake it. */
	usleep(50000);
	ck_assert(ft_mailbox_put(mb, 1, "ping", 4));
	ck_assert(ft_mailbox_ring(mb, 1)); /* the child listens */

	ck_assert(wait_for_message(mb));
	t->count = 0;
	ck_assert_uint_eq(ft_mailbox_drain(mb, take_copy, t), 1);
	ck_assert_uint_eq(t->from[0], 1);
	ck_assert_mem_eq(t->bytes[0], "pong", 4);
	/* Let the child go; whether it still listens as this rings is a race. */
	ck_assert(ft_mailbox_put(mb, 1, "bye", 3));
	ft_mailbox_ring(mb, 1);

	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child: status %#x (exit 1x: the step that failed)", status);
	ck_assert(!shm_exists(name));
	ft_mailbox_close(mb);
	free(t);
}
END_TEST

START_TEST(test_listeners)
{
	struct ft_mailbox *a, *b;

	open_pair(shm_name(), 256, &a, &b);
	struct ft_doorbell *bell = ft_mailbox_doorbell(b);
	uint32_t before = ft_doorbell_read(bell);
	ck_assert(!ft_mailbox_ring(a, 1));
	ck_assert_uint_eq(ft_doorbell_read(bell), before + 1);
	ft_mailbox_listen(b, true);
	ck_assert(ft_mailbox_ring(a, 1));
	ft_mailbox_listen(b, true);
	ft_mailbox_listen(b, false);
	ck_assert(ft_mailbox_ring(a, 1)); /* one still listens */
	ft_mailbox_listen(b, false);
	ck_assert(!ft_mailbox_ring(a, 1));
	ck_assert_uint_eq(ft_doorbell_read(bell), before + 4);
	/* a's own inbox was never rung or listened to. */
	ck_assert(!ft_mailbox_ring(b, 0));
	ft_mailbox_close(a);
	ft_mailbox_close(b);
}
END_TEST

static void take_nothing(void *ctx, uint32_t from, const void *msg, uint32_t len)
{
	ck_abort_msg("a corrupt record was taken");
}

/* The record format is public (a uint32_t length, then the payload): find
 * a message's bytes in a second mapping of the segment and overwrite the
 * length in front of them. */
START_TEST(test_corrupt_ring)
{
	const char *name = shm_name();
	const uint32_t ring_bytes = 4096;
	const char marker[] = "corrupt-me-0123456789", marker2[] = "corrupt-me-too-012345";
	struct ft_mailbox *a, *b;
	struct taken *t = calloc(1, sizeof *t);

	ft_log_set_level(FT_LOG_ERROR); /* the warning is expected */
	ck_assert_int_eq(ft_mailbox_open(&b, name, 2, 1, ring_bytes), 0);
	int fd = shm_open(name, O_RDWR, 0600);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	size_t size = (size_t)st.st_size;
	unsigned char *raw = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(raw, MAP_FAILED);
	close(fd);
	ck_assert_int_eq(ft_mailbox_open(&a, name, 2, 0, ring_bytes), 0);

	ck_assert(ft_mailbox_put(b, 0, "before", 6));
	ck_assert_uint_eq(ft_mailbox_drain(a, take_copy, t), 1);
	ck_assert(ft_mailbox_put(b, 0, marker, sizeof marker));
	ck_assert(ft_mailbox_put(b, 0, "after", 5));
	unsigned char *at = memmem(raw, size, marker, sizeof marker);
	ck_assert_ptr_nonnull(at);
	uint32_t len;
	memcpy(&len, at - sizeof len, sizeof len);
	ck_assert_uint_eq(len, sizeof marker);

	/* Longer than any message can be, then longer than what waits. */
	len = ring_bytes;
	memcpy(at - sizeof len, &len, sizeof len);
	ck_assert(ft_mailbox_pending(a));
	ck_assert_uint_eq(ft_mailbox_drain(a, take_nothing, NULL), 0);
	ck_assert(!ft_mailbox_pending(a));

	ck_assert(ft_mailbox_put(b, 0, marker2, sizeof marker2));
	at = memmem(raw, size, marker2, sizeof marker2);
	ck_assert_ptr_nonnull(at);
	len = 200; /* a possible length, but only one 32-byte record waits */
	memcpy(at - sizeof len, &len, sizeof len);
	ck_assert_uint_eq(ft_mailbox_drain(a, take_nothing, NULL), 0);
	ck_assert(!ft_mailbox_pending(a));

	/* The ring works again. */
	ck_assert(ft_mailbox_put(b, 0, "fine", 4));
	t->count = 0;
	ck_assert_uint_eq(ft_mailbox_drain(a, take_copy, t), 1);
	ck_assert_mem_eq(t->bytes[0], "fine", 4);

	munmap(raw, size);
	ft_mailbox_close(a);
	ft_mailbox_close(b);
	free(t);
}
END_TEST

static void *sleep_on(void *arg)
{
	struct ft_doorbell *bell = arg;
	uint64_t t0 = ft_clock_now();

	ft_doorbell_sleep(bell, ft_doorbell_read(bell), 5 * FT_NSEC_PER_SEC, false);
	return (void *)(uintptr_t)(ft_clock_now() - t0);
}

START_TEST(test_doorbell)
{
	struct ft_doorbell bell = { 0 };

	/* Not the value seen: back at once. The value seen: the timeout. */
	uint64_t t0 = ft_clock_now();
	ft_doorbell_sleep(&bell, 1, 5 * FT_NSEC_PER_SEC, false);
	ck_assert_uint_lt(ft_clock_now() - t0, 2 * FT_NSEC_PER_SEC);
	t0 = ft_clock_now();
	ft_doorbell_sleep(&bell, 0, 20 * FT_NSEC_PER_MSEC, false);
	ck_assert_uint_ge(ft_clock_now() - t0, 10 * FT_NSEC_PER_MSEC);
	ck_assert_uint_lt(ft_clock_now() - t0, 2 * FT_NSEC_PER_SEC);
	ck_assert_uint_eq(atomic_load(&bell.sleepers), 0);

	/* Nobody asleep: ringing moves the word only. */
	ft_doorbell_ring(&bell, false);
	ck_assert_uint_eq(ft_doorbell_read(&bell), 1);

	/* A thread asleep on a private doorbell is woken by the ring. */
	pthread_t th;
	void *slept;
	ck_assert_int_eq(pthread_create(&th, NULL, sleep_on, (void *)&bell), 0);
	while (atomic_load(&bell.sleepers) == 0)
		usleep(1000);
	ft_doorbell_ring(&bell, false);
	ck_assert_int_eq(pthread_join(th, &slept), 0);
	ck_assert_uint_eq(ft_doorbell_read(&bell), 2);
	ck_assert_uint_eq(atomic_load(&bell.sleepers), 0);
	ck_assert_uint_lt((uint64_t)(uintptr_t)slept, 2 * FT_NSEC_PER_SEC);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mailbox");
	TCase *tc = tcase_create("mailbox");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_bad_arguments);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_stream_wraps);
	tcase_add_test(tc, test_unlinked);
	tcase_add_test(tc, test_across_processes);
	tcase_add_test(tc, test_listeners);
	tcase_add_test(tc, test_corrupt_ring);
	tcase_add_test(tc, test_doorbell);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
