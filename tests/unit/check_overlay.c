/* check_overlay.c: unit tests of the pure helpers of src/overlay.c. The
 * host identity has bit 63 clear and is the same on every call. An
 * endpoint packed into a JOINED entry (ft_overlay_join_entry) lands in the
 * fields overlay.h names, as stored (network order), and comes back whole
 * (ft_overlay_join_endpoint), with and without "any", at extreme values,
 * also through a NOTICE encoded and parsed by src/frame.c; a host id with
 * bit 63 set never turns into "any". */
#include "ftshim_config.h"

#include <check.h>

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/frame.h"
#include "src/overlay.h"

#define BIT63 (UINT64_C(1) << 63)

static void assert_ep_eq(const struct ft_endpoint *got, const struct ft_endpoint *want)
{
	ck_assert_uint_eq(got->addr, want->addr);
	ck_assert_uint_eq(got->port, want->port);
	ck_assert_uint_eq(got->any, want->any);
	ck_assert_uint_eq(got->reserved, 0);
	ck_assert_uint_eq(got->host_id, want->host_id);
}

START_TEST(test_host_id)
{
	uint64_t h = ft_overlay_host_id();

	ck_assert_uint_eq(h & BIT63, 0);
	ck_assert_uint_ne(h, 0);
	ck_assert_uint_eq(ft_overlay_host_id(), h);
}
END_TEST

START_TEST(test_join_entry_fields)
{
	struct ft_endpoint ep = { .addr = htonl(0x0a000102), .port = htons(40001), .any = 1,
				  .host_id = UINT64_C(0x0123456789abcdef) };
	struct ft_entry e;

	memset(&e, 0xa5, sizeof e);
	ft_overlay_join_entry(&e, 5, &ep);
	ck_assert_uint_eq(e.rank, 5);
	ck_assert_uint_eq(e.event, FT_EV_JOINED);
	ck_assert_uint_eq(e.detector, ep.addr);
	ck_assert_uint_eq(e.how, ep.port);
	ck_assert_uint_eq(e.at_ns, ep.host_id | BIT63);
	ep.any = 0;
	ft_overlay_join_entry(&e, 5, &ep);
	ck_assert_uint_eq(e.at_ns, ep.host_id);
}
END_TEST

START_TEST(test_join_round_trip)
{
	const struct ft_endpoint eps[] = {
		{ .addr = htonl(0x7f000001), .port = htons(1), .any = 0, .host_id = 1 },
		{ .addr = htonl(0xc0a80001), .port = htons(65535), .any = 1, .host_id = 0 },
		{ .addr = UINT32_MAX, .port = UINT16_MAX, .any = 1, .host_id = BIT63 - 1 },
		{ .addr = 0, .port = htons(2), .any = 0, .host_id = BIT63 - 1 },
		{ .addr = htonl(0x0a000001), .port = htons(5000), .any = 1,
		  .host_id = ft_overlay_host_id() },
	};

	for (size_t i = 0; i < sizeof eps / sizeof eps[0]; i++) {
		struct ft_entry e;
		struct ft_endpoint got;

		memset(&got, 0xa5, sizeof got);
		ft_overlay_join_entry(&e, (uint32_t)i, &eps[i]);
		ft_overlay_join_endpoint(&e, &got);
		assert_ep_eq(&got, &eps[i]);
	}
}
END_TEST

/* A host id with bit 63 set (not one ft_overlay_host_id gives) loses that
 * bit rather than reading back as "any". */
START_TEST(test_join_masks_host_id)
{
	struct ft_endpoint ep = { .addr = 1, .port = 2, .any = 0, .host_id = UINT64_MAX }, got;
	struct ft_entry e;

	ft_overlay_join_entry(&e, 0, &ep);
	ft_overlay_join_endpoint(&e, &got);
	ck_assert_uint_eq(got.any, 0);
	ck_assert_uint_eq(got.host_id, UINT64_MAX & ~BIT63);
}
END_TEST

/* Through the wire: a NOTICE carrying the entry, parsed in a job of 8. */
START_TEST(test_join_through_frame)
{
	static const uint8_t secret[FT_SECRET_LEN] = { 1, 2, 3 };
	struct ft_endpoint ep = { .addr = UINT32_MAX, .port = UINT16_MAX, .any = 1,
				  .host_id = BIT63 - 1 }, got;
	struct ft_entry e, *scratch = malloc(FT_FRAME_MAX_ENTRIES * sizeof *scratch);
	struct ft_msg m = { .type = FT_MSG_NOTICE }, parsed;
	uint8_t buf[128];
	size_t used;

	ck_assert_ptr_nonnull(scratch);
	ft_overlay_join_entry(&e, 7, &ep);
	m.list.count = 1;
	m.list.entries = &e;
	size_t len = ft_frame_encode(&m, 3, secret, buf, sizeof buf);
	ck_assert_uint_gt(len, 0);
	ck_assert_int_eq(ft_frame_parse(buf, len, secret, 8, &parsed, scratch, &used), FT_FRAME_OK);
	ck_assert_uint_eq(parsed.list.count, 1);
	ck_assert_uint_eq(parsed.list.entries[0].rank, 7);
	ck_assert_uint_eq(parsed.list.entries[0].event, FT_EV_JOINED);
	ft_overlay_join_endpoint(&parsed.list.entries[0], &got);
	assert_ep_eq(&got, &ep);
	free(scratch);
}
END_TEST

static Suite *overlay_suite(void)
{
	Suite *s = suite_create("overlay");
	TCase *tc = tcase_create("join");

	tcase_add_test(tc, test_host_id);
	tcase_add_test(tc, test_join_entry_fields);
	tcase_add_test(tc, test_join_round_trip);
	tcase_add_test(tc, test_join_masks_host_id);
	tcase_add_test(tc, test_join_through_frame);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(overlay_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
