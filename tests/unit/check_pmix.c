/* check_pmix.c: unit tests of what src/pmix.c says without a PMIx
 * library: the finalize said for a dead client, against a fake PMIx
 * server (the other end of a socketpair), is exactly PMIx 4's message in
 * both buffer types; answers on other tags are skipped; a closed
 * connection and silence are errors, the last after the timeout. And the
 * connection to the server is found among the process's sockets from the
 * URI variables, and never from a malformed one. */
#include "ftshim_config.h"

#include <check.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/common.h"
#include "src/pmix.h"

static int sv[2]; /* sv[0]: the dead client's connection, sv[1]: the server's */

static void pair_open(void)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

static void pair_close(void)
{
	close(sv[0]);
	close(sv[1]);
}

/* The server sends a message: a 16-byte header (index, tag, length,
 * padding; network order) and body_len bytes. */
static void server_says(uint32_t tag, size_t body_len)
{
	uint8_t m[16 + 64] = { 0 };
	uint32_t words[4] = { htonl(0), htonl(tag), htonl((uint32_t)body_len), 0 };

	ck_assert_uint_le(body_len, 64);
	memcpy(m, words, sizeof words);
	ck_assert_int_eq(write(sv[1], m, 16 + body_len), (ssize_t)(16 + body_len));
}

/* What the server received: the whole message, into m; its length. */
static size_t server_got(uint8_t *m, size_t max)
{
	ssize_t n = recv(sv[1], m, max, MSG_DONTWAIT);

	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

static uint32_t be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/* The finalize said on a connection the server never answers: the call
 * times out; the message it sent (into m) and its length. */
static size_t unanswered_goodbye(uint8_t *m, size_t max)
{
	ck_assert_int_eq(ft_pmix_goodbye(sv[0], 30), -ETIMEDOUT);
	return server_got(m, max);
}

/* PMIx 4 (and unset): integers squashed, as Open MPI's client (libpmix
 * 4.2.2) sends them: one value is 0x02. */
START_TEST(test_non_described)
{
	uint8_t m[64];
	static const uint8_t body[] = { 2, 5 }; /* one value; PMIX_FINALIZE_CMD */

	unsetenv("PMIX_BFROP_BUFFER_TYPE");
	unsetenv("PMIX_VERSION");
	pair_open();
	size_t n = unanswered_goodbye(m, sizeof m);
	ck_assert_uint_eq(n, 16 + sizeof body);
	ck_assert_uint_eq(be32(m + 8), sizeof body);
	ck_assert_mem_eq(m + 16, body, sizeof body);
	/* Far above the tags a client allocates itself (from 100 up). */
	ck_assert_uint_ge(be32(m + 4), 1u << 24);
	pair_close();
}
END_TEST

START_TEST(test_fully_described)
{
	uint8_t m[64];
	/* PMIX_INT32, one value, PMIX_COMMAND, PMIX_FINALIZE_CMD */
	static const uint8_t body[] = { 9, 2, 34, 5 };

	setenv("PMIX_BFROP_BUFFER_TYPE", "PMIX_BFROP_BUFFER_FULLY_DESC", 1);
	setenv("PMIX_VERSION", "4.2.2rc2", 1);
	pair_open();
	size_t n = unanswered_goodbye(m, sizeof m);
	ck_assert_uint_eq(n, 16 + sizeof body);
	ck_assert_uint_eq(be32(m + 8), sizeof body);
	ck_assert_mem_eq(m + 16, body, sizeof body);
	pair_close();
	unsetenv("PMIX_BFROP_BUFFER_TYPE");
	unsetenv("PMIX_VERSION");
}
END_TEST

/* PMIx 3: integers whole, in network order. */
START_TEST(test_pmix3)
{
	uint8_t m[64];
	static const uint8_t plain[] = { 0, 0, 0, 1, 5 };
	static const uint8_t described[] = { 0, 9, 0, 0, 0, 1, 0, 34, 5 };

	setenv("PMIX_VERSION", "3.2.3", 1);
	pair_open();
	ck_assert_uint_eq(unanswered_goodbye(m, sizeof m), 16 + sizeof plain);
	ck_assert_mem_eq(m + 16, plain, sizeof plain);
	setenv("PMIX_BFROP_BUFFER_TYPE", "PMIX_BFROP_BUFFER_FULLY_DESC", 1);
	ck_assert_uint_eq(unanswered_goodbye(m, sizeof m), 16 + sizeof described);
	ck_assert_mem_eq(m + 16, described, sizeof described);
	pair_close();
	unsetenv("PMIX_BFROP_BUFFER_TYPE");
	unsetenv("PMIX_VERSION");
}
END_TEST

/* Answers still owed to the dead client come first and are skipped; the
 * call returns with the answer on its own tag. */
START_TEST(test_answered)
{
	uint8_t m[64];

	unsetenv("PMIX_BFROP_BUFFER_TYPE");
	pair_open();
	unanswered_goodbye(m, sizeof m);
	uint32_t tag = be32(m + 4);
	server_says(101, 40);
	server_says(tag + 1, 0);
	server_says(tag, 4);
	server_says(102, 8); /* after the answer: left unread */
	ck_assert_int_eq(ft_pmix_goodbye(sv[0], 2000), 0);
	server_got(m, sizeof m);
	char rest[64];
	ck_assert_int_eq(recv(sv[0], rest, sizeof rest, MSG_DONTWAIT), 16 + 8);
	pair_close();
}
END_TEST

START_TEST(test_closed)
{
	pair_open();
	server_says(101, 4);
	shutdown(sv[1], SHUT_WR);
	ck_assert_int_eq(ft_pmix_goodbye(sv[0], 2000), -EPROTO);
	pair_close();
	ck_assert_int_eq(ft_pmix_goodbye(-1, 10), -EBADF);
}
END_TEST

START_TEST(test_silence)
{
	pair_open();
	uint64_t t0 = ft_clock_now();
	ck_assert_int_eq(ft_pmix_goodbye(sv[0], 100), -ETIMEDOUT);
	ck_assert_uint_ge(ft_clock_now() - t0, 100 * FT_NSEC_PER_MSEC);
	pair_close();
}
END_TEST

static void clear_uris(void)
{
	const char *vars[] = { "PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3", "PMIX_SERVER_URI21",
			       "PMIX_SERVER_URI2" };
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
		unsetenv(vars[i]);
}

/* A listening server on 127.0.0.1 and a connected client: the client's
 * descriptor is the one found; an older URI variable serves as well. */
START_TEST(test_server_socket)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	int listener = socket(AF_INET, SOCK_STREAM, 0), other = socket(AF_INET, SOCK_STREAM, 0);
	char uri[128];

	clear_uris();
	ck_assert_int_eq(ft_pmix_server_socket(), -1);
	ck_assert_int_eq(bind(listener, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(listen(listener, 4), 0);
	ck_assert_int_eq(getsockname(listener, (struct sockaddr *)&a, &len), 0);
	int client = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(client, (struct sockaddr *)&a, sizeof a), 0);
	snprintf(uri, sizeof uri, "pmix-server.42;tcp4://127.0.0.1:%u", ntohs(a.sin_port));
	setenv("PMIX_SERVER_URI41", uri, 1);
	ck_assert_int_eq(ft_pmix_server_socket(), client);
	clear_uris();
	setenv("PMIX_SERVER_URI2", uri, 1);
	ck_assert_int_eq(ft_pmix_server_socket(), client);
	clear_uris();
	/* Another port, or malformed URIs: nothing. */
	const char *bad[] = { "pmix-server.42;tcp4://127.0.0.1:1", "tcp4://127.0.0.1:80", "x;tcp4://127.0.0.1",
			      "x;tcp4://127.0.0.1:99999", "x;tcp4://127.0.0.1:80x", "x;tcp6://::1:80",
			      "x;usock://tmp/s", "x;tcp4://localhost:80", "" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		setenv("PMIX_SERVER_URI41", bad[i], 1);
		ck_assert_msg(ft_pmix_server_socket() == -1, "found a socket for \"%s\"", bad[i]);
	}
	clear_uris();
	close(client);
	close(other);
	close(listener);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pmix");
	TCase *tc = tcase_create("goodbye");

	tcase_add_test(tc, test_non_described);
	tcase_add_test(tc, test_fully_described);
	tcase_add_test(tc, test_pmix3);
	tcase_add_test(tc, test_answered);
	tcase_add_test(tc, test_closed);
	tcase_add_test(tc, test_silence);
	tcase_add_test(tc, test_server_socket);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
