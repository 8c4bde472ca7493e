/* check_ckpt_store.c: unit tests for src/ckpt_store.c: regions, a
 * checkpoint's blob, the copies kept for others, the buddy, and the
 * choice of the checkpoint a restore goes back to. */
#include "ftshim_config.h"

#include <check.h>
#include <errno.h>
#include <string.h>

#include "src/ckpt_store.h"

static char err[256];

START_TEST(test_protect)
{
	static struct ft_ckpt_regions rs;
	char a[64], b[64];

	rs.n = 0;
	ck_assert_int_eq(ft_ckpt_protect(&rs, 3, a, sizeof a, err, sizeof err), 0);
	ck_assert_int_eq(ft_ckpt_protect(&rs, 1, b, sizeof b, err, sizeof err), 0);
	ck_assert_uint_eq(rs.n, 2);
	ck_assert_int_eq(rs.r[0].id, 1); /* in id order */
	/* Moved and grown: the same id, replaced. */
	ck_assert_int_eq(ft_ckpt_protect(&rs, 3, a + 8, 32, err, sizeof err), 0);
	ck_assert_uint_eq(rs.n, 2);
	ck_assert_ptr_eq(rs.r[1].base, a + 8);
	/* Overlapping another region: refused, with both named. */
	ck_assert_int_eq(ft_ckpt_protect(&rs, 4, b + 63, 2, err, sizeof err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "overlaps region 1"));
	ck_assert_int_eq(ft_ckpt_protect(&rs, -1, a, 1, err, sizeof err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "0 or more"));
	ck_assert_int_eq(ft_ckpt_protect(&rs, 5, NULL, 8, err, sizeof err), -EINVAL);
	/* NULL and 0: unregistered. */
	ck_assert_int_eq(ft_ckpt_protect(&rs, 1, NULL, 0, err, sizeof err), 0);
	ck_assert_uint_eq(rs.n, 1);
	ck_assert_int_eq(rs.r[0].id, 3);
}
END_TEST

START_TEST(test_snapshot)
{
	static struct ft_ckpt_regions rs;
	char a[13] = "hello, world";
	long v[3] = { 7, 8, 9 };
	const char *why = NULL;

	rs.n = 0;
	ft_ckpt_protect(&rs, 0, a, sizeof a, err, sizeof err);
	ft_ckpt_protect(&rs, 9, v, sizeof v, err, sizeof err);
	struct ft_ckpt_blob *b = ft_ckpt_blob_new(ft_ckpt_snapshot_len(&rs));
	ft_ckpt_snapshot_fill(b, &rs, 42, 3, 12345);
	ck_assert_int_eq(ft_ckpt_snapshot_check(b, &why), 0);
	ck_assert_int_eq(ft_ckpt_snapshot_version(b), 42);
	ck_assert_uint_eq(ft_ckpt_snapshot_owner(b), 3);
	ck_assert_uint_eq(ft_ckpt_snapshot_taken(b), 12345);
	uint64_t bytes = 0;
	const void *p = ft_ckpt_snapshot_region(b, 9, &bytes);
	ck_assert_uint_eq(bytes, sizeof v);
	ck_assert_int_eq(memcmp(p, v, sizeof v), 0);
	p = ft_ckpt_snapshot_region(b, 0, &bytes);
	ck_assert_str_eq(p, "hello, world");
	ck_assert_ptr_null(ft_ckpt_snapshot_region(b, 5, &bytes));
	/* Cut short, or the magic changed: refused with a reason. */
	uint64_t len = b->len;
	b->len = len - 8;
	ck_assert_int_eq(ft_ckpt_snapshot_check(b, &why), -EPROTO);
	ck_assert_ptr_nonnull(why);
	b->len = len;
	b->data[0] ^= 1;
	ck_assert_int_eq(ft_ckpt_snapshot_check(b, &why), -EPROTO);
	ft_ckpt_blob_unref(b);
}
END_TEST

static struct ft_ckpt_blob *blob_of(uint64_t len)
{
	struct ft_ckpt_blob *b = ft_ckpt_blob_new(len);

	memset(b->data, 0, len);
	return b;
}

START_TEST(test_held)
{
	struct ft_ckpt_held h;
	struct ft_ckpt_tag t1 = { 1, 0 }, t2 = { 2, 0 }, t3 = { 3, 0 }, t2b = { 2, 1 };

	ft_ckpt_held_init(&h);
	ck_assert(ft_ckpt_held_put(&h, 5, t1, blob_of(10)));
	ck_assert(ft_ckpt_held_put(&h, 5, t2, blob_of(20)));
	ck_assert(ft_ckpt_held_put(&h, 6, t1, blob_of(30)));
	/* A third copy of owner 5 pushes out its oldest. */
	ck_assert(ft_ckpt_held_put(&h, 5, t3, blob_of(40)));
	ck_assert_ptr_null(ft_ckpt_held_get(&h, 5, t1));
	struct ft_ckpt_blob *b = ft_ckpt_held_get(&h, 5, t2);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(b->len, 20);
	ft_ckpt_blob_unref(b);
	ck_assert_uint_eq(h.bytes, 90);
	/* Older than the last complete: gone. */
	ft_ckpt_held_drop_older(&h, 2);
	ck_assert_ptr_null(ft_ckpt_held_get(&h, 6, t1));
	ck_assert_uint_eq(h.n, 2);
	/* A restore to (2, epoch 1): 3 is abandoned, and so is (2, epoch 0). */
	ft_ckpt_held_drop_abandoned(&h, t2b);
	ck_assert_uint_eq(h.n, 0);
	ck_assert_uint_eq(h.bytes, 0);
	ft_ckpt_held_fini(&h);
}
END_TEST

/* 4 program ranks run by job ranks 0, 5, 2, 3 (5: a spare that took rank
 * 1, whose process 1 died); each rank's buddy is the next rank. */
START_TEST(test_choose)
{
	struct ft_ckpt_held none;
	int32_t holder[4] = { 0, 5, 2, 3 }, src[4];
	struct ft_ckpt_tag c7 = { 7, 0 }, c8 = { 8, 0 }, got;
	struct ft_ckpt_report reps[4];

	ft_ckpt_held_init(&none);
	/* Ranks 0, 2, 3 took 8 and have 7; rank 1's buddy (2) got its 7
	 * only: 8 is not whole, 7 is. */
	struct ft_ckpt_tag both[2] = { c8, c7 };
	ft_ckpt_report_fill(&reps[0], 0, 0, both, 2, NULL, 0, &none);
	ft_ckpt_report_fill(&reps[1], 5, 1, NULL, 0, NULL, 0, &none);
	ft_ckpt_report_fill(&reps[2], 2, 2, both, 2, NULL, 0, &none);
	reps[2].have[reps[2].nhave++] = (struct ft_ckpt_have){ .owner = 1, .tag = c7 };
	ft_ckpt_report_fill(&reps[3], 3, 3, both, 2, NULL, 0, &none);
	ck_assert(ft_ckpt_choose(reps, 4, holder, 4, &got, src));
	ck_assert(ft_ckpt_tag_eq(got, c7));
	ck_assert_int_eq(src[0], 0);
	ck_assert_int_eq(src[1], 2);
	ck_assert_int_eq(src[2], 2);
	ck_assert_int_eq(src[3], 3);
	/* Once rank 1's 8 is kept too, 8 is whole. */
	reps[2].have[reps[2].nhave++] = (struct ft_ckpt_have){ .owner = 1, .tag = c8 };
	ck_assert(ft_ckpt_choose(reps, 4, holder, 4, &got, src));
	ck_assert(ft_ckpt_tag_eq(got, c8));
	/* A copy of the same number from another epoch does not count. */
	reps[2].have[reps[2].nhave - 1].tag.epoch = 1;
	reps[2].have[reps[2].nhave - 2].tag.epoch = 1;
	ck_assert(!ft_ckpt_choose(reps, 4, holder, 4, &got, src));
	/* No checkpoint taken yet: none. */
	for (int i = 0; i < 4; i++)
		ft_ckpt_report_fill(&reps[i], holder[i], (uint32_t)i, NULL, 0, NULL, 0, &none);
	ck_assert(!ft_ckpt_choose(reps, 4, holder, 4, &got, src));
	ck_assert(!ft_ckpt_reported(reps, 4, 2, 1, c7));
	ft_ckpt_held_fini(&none);
}
END_TEST

/* Files: rank 1 (job 5, a spare) lost its buddy too, and reads its file
 * of 7; rank 3's 8 is in memory (its own) and on file. */
START_TEST(test_choose_files)
{
	struct ft_ckpt_held none;
	int32_t holder[4] = { 0, 5, 2, 3 }, src[4];
	struct ft_ckpt_tag c7 = { 7, 0 }, c8 = { 8, 0 }, got;
	struct ft_ckpt_tag both[2] = { c8, c7 };
	struct ft_ckpt_report reps[4];

	ft_ckpt_held_init(&none);
	ft_ckpt_report_fill(&reps[0], 0, 0, both, 2, NULL, 0, &none);
	ft_ckpt_report_fill(&reps[1], 5, 1, NULL, 0, &c7, 1, &none);
	ft_ckpt_report_fill(&reps[2], 2, 2, both, 2, NULL, 0, &none);
	ft_ckpt_report_fill(&reps[3], 3, 3, both, 2, both, 2, &none);
	/* Reported once each: the file of a copy in memory is left out. */
	ck_assert_uint_eq(reps[3].nhave, 2);
	ck_assert_uint_eq(reps[1].nhave, 1);
	ck_assert_uint_eq(reps[1].have[0].flags, FT_CKPT_HAVE_FILE);
	ck_assert(ft_ckpt_choose(reps, 4, holder, 4, &got, src));
	ck_assert(ft_ckpt_tag_eq(got, c7));
	ck_assert_int_eq(src[1], 5);
	/* A file is not a copy the buddy keeps: it is sent again. */
	ck_assert(!ft_ckpt_reported(reps, 4, 5, 1, c7));
	/* Another process's memory comes before the rank's own file. */
	reps[2].have[reps[2].nhave++] = (struct ft_ckpt_have){ .owner = 1, .tag = c7 };
	ck_assert(ft_ckpt_choose(reps, 4, holder, 4, &got, src));
	ck_assert(ft_ckpt_tag_eq(got, c7));
	ck_assert_int_eq(src[1], 2);
	ft_ckpt_held_fini(&none);
}
END_TEST

START_TEST(test_report_latest_first)
{
	struct ft_ckpt_held h;
	struct ft_ckpt_report r;

	ft_ckpt_held_init(&h);
	for (uint32_t owner = 0; owner < 20; owner++)
		ft_ckpt_held_put(&h, owner, (struct ft_ckpt_tag){ owner, 0 }, blob_of(8));
	ft_ckpt_report_fill(&r, 9, 9, NULL, 0, NULL, 0, &h);
	ck_assert_uint_eq(r.nhave, FT_CKPT_REPORT_MAX);
	ck_assert_uint_eq(r.have[0].tag.count, 19);
	ck_assert_uint_eq(r.have[FT_CKPT_REPORT_MAX - 1].tag.count, 20 - FT_CKPT_REPORT_MAX);
	ft_ckpt_held_fini(&h);
}
END_TEST

START_TEST(test_buddy)
{
	uint64_t two_hosts[6] = { 1, 1, 1, 2, 2, 2 }, one_host[3] = { 1, 1, 1 };

	ck_assert_int_eq(ft_ckpt_buddy(two_hosts, 6, 0), 3);
	ck_assert_int_eq(ft_ckpt_buddy(two_hosts, 6, 2), 3);
	ck_assert_int_eq(ft_ckpt_buddy(two_hosts, 6, 3), 0);
	ck_assert_int_eq(ft_ckpt_buddy(two_hosts, 6, 5), 0);
	ck_assert_int_eq(ft_ckpt_buddy(one_host, 3, 2), 0);
	ck_assert_int_eq(ft_ckpt_buddy(one_host, 1, 0), -1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ckpt_store");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_protect);
	tcase_add_test(tc, test_snapshot);
	tcase_add_test(tc, test_held);
	tcase_add_test(tc, test_choose);
	tcase_add_test(tc, test_choose_files);
	tcase_add_test(tc, test_report_latest_first);
	tcase_add_test(tc, test_buddy);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
