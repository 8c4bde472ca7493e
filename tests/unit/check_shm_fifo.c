/* check_shm_fifo.c: unit tests of src/shm_fifo.c on a queue laid out in
 * plain memory as UCX 1.13 lays it out: a control block is recognised by
 * its owner's pid and a head within one lap of the tail; a slot reserved
 * and never written is found in the first lap and in a later one (where
 * the owner bit flips), behind written ones and ahead of a tail the owner
 * has not stored yet; filling it writes an inline message of the drop id
 * with the lap's owner bit, and the queue then has no unwritten slot; a
 * stall counts only while the same slot stays unwritten. */
#include "ftshim_config.h"

#include <check.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/shm_fifo.h"

static const struct ft_fifo_layout *L = &ft_fifo_ucx_default;
static uint8_t *fifo;

static void set64(size_t off, uint64_t v)
{
	memcpy(fifo + off, &v, sizeof v);
}

static uint8_t *slot(uint64_t i)
{
	return fifo + FT_FIFO_CTL_BYTES + (i % L->size) * L->elem_size;
}

/* A new queue of owner pid: UCX starts every slot with the owner bit set
 * (not written in lap 0). */
static void make(int32_t pid)
{
	free(fifo);
	fifo = calloc(1, ft_fifo_bytes(L));
	ck_assert_ptr_nonnull(fifo);
	memcpy(fifo + FT_FIFO_PID_OFF, &pid, sizeof pid);
	for (uint64_t i = 0; i < L->size; i++)
		*slot(i) = FT_FIFO_FLAG_OWNER;
}

/* Senders reserve [head, head + n) and write all but skip (or none). */
static void send_n(uint64_t *head, uint64_t n, uint64_t skip)
{
	for (uint64_t i = *head; i < *head + n; i++)
		if (i != skip)
			*slot(i) = (uint8_t)(FT_FIFO_FLAG_INLINE | ((i / L->size) & 1 ? FT_FIFO_FLAG_OWNER : 0));
	*head += n;
	set64(FT_FIFO_HEAD_OFF, *head);
}

START_TEST(test_owned_by)
{
	make(1234);
	ck_assert_uint_eq(ft_fifo_bytes(L), 192 + 64 * 128);
	ck_assert(ft_fifo_owned_by(fifo, 1234, L));
	ck_assert(!ft_fifo_owned_by(fifo, 1235, L));
	set64(FT_FIFO_HEAD_OFF, 70 | FT_FIFO_HEAD_ARMED);
	set64(FT_FIFO_TAIL_OFF, 10);
	ck_assert(ft_fifo_owned_by(fifo, 1234, L)); /* the armed bit is no index */
	set64(FT_FIFO_HEAD_OFF, 75);
	ck_assert(!ft_fifo_owned_by(fifo, 1234, L)); /* more than a lap ahead */
	set64(FT_FIFO_HEAD_OFF, 9);
	ck_assert(!ft_fifo_owned_by(fifo, 1234, L)); /* behind the tail */
	make(0);
	ck_assert(!ft_fifo_owned_by(fifo, 0, L));
}
END_TEST

START_TEST(test_unwritten_and_fill)
{
	uint64_t head = 0;

	make(7);
	ck_assert_uint_eq(ft_fifo_unwritten(fifo, L), FT_FIFO_NONE);
	send_n(&head, 5, FT_FIFO_NONE);
	ck_assert_uint_eq(ft_fifo_unwritten(fifo, L), FT_FIFO_NONE);
	/* Slot 6 reserved by a sender that died; 7 and 8 written after it. */
	send_n(&head, 4, 6);
	ck_assert_uint_eq(ft_fifo_unwritten(fifo, L), 6);
	ft_fifo_fill(fifo, L, 6);
	ck_assert_uint_eq(*slot(6), FT_FIFO_FLAG_INLINE); /* lap 0: owner bit clear */
	ck_assert_uint_eq(slot(6)[1], FT_FIFO_DROP_ID);
	ck_assert_uint_eq(slot(6)[2] | slot(6)[3] << 8, 0);
	ck_assert_uint_eq(ft_fifo_unwritten(fifo, L), FT_FIFO_NONE);

	/* The second lap: the owner read up to 60 and stored tail 40. */
	send_n(&head, 60 - head, FT_FIFO_NONE);
	set64(FT_FIFO_TAIL_OFF, 40);
	send_n(&head, 30, 70); /* 60..89, 70 never written */
	ck_assert_uint_eq(ft_fifo_unwritten(fifo, L), 70);
	ft_fifo_fill(fifo, L, 70);
	ck_assert_uint_eq(*slot(70), FT_FIFO_FLAG_INLINE | FT_FIFO_FLAG_OWNER);
	ck_assert_uint_eq(ft_fifo_unwritten(fifo, L), FT_FIFO_NONE);

	/* A tail the owner is storing while the head moved more than a
	 * lap (never in a real queue): nothing is claimed. */
	set64(FT_FIFO_TAIL_OFF, 10);
	ck_assert_uint_eq(ft_fifo_unwritten(fifo, L), FT_FIFO_NONE);
	free(fifo);
	fifo = NULL;
}
END_TEST

START_TEST(test_stalled)
{
	struct ft_fifo_stall s = FT_FIFO_STALL_INIT;
	const uint64_t grace = 1000;

	ck_assert(!ft_fifo_stalled(&s, FT_FIFO_NONE, 0, grace));
	ck_assert(!ft_fifo_stalled(&s, 6, 100, grace));
	ck_assert(!ft_fifo_stalled(&s, 6, 1099, grace));
	ck_assert(ft_fifo_stalled(&s, 6, 1100, grace));
	/* Another slot: a live sender's, or the next dead one's. */
	ck_assert(!ft_fifo_stalled(&s, 7, 1200, grace));
	ck_assert(!ft_fifo_stalled(&s, 7, 2199, grace));
	ck_assert(ft_fifo_stalled(&s, 7, 2200, grace));
	/* Written in between: the clock starts again. */
	ck_assert(!ft_fifo_stalled(&s, FT_FIFO_NONE, 2300, grace));
	ck_assert(!ft_fifo_stalled(&s, 7, 2400, grace));
	ck_assert(!ft_fifo_stalled(&s, 7, 3399, grace));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shm_fifo");
	TCase *tc = tcase_create("shm_fifo");

	tcase_add_test(tc, test_owned_by);
	tcase_add_test(tc, test_unwritten_and_fill);
	tcase_add_test(tc, test_stalled);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
