/* check_comm_table.c: unit tests of src/comm_table.c, the communicator
 * entries and their job-wide ids. They check the id derivation
 * (ft_comm_child_id is deterministic, changes with each of its inputs and
 * never yields the reserved ids 0 and 1, even for inputs built to hash to
 * them; ft_comm_result_hash and ft_comm_inter_key are the same from both
 * sides of an intercommunicator but follow rank order within a group;
 * ft_comm_group_key and ft_comm_self_id), the creation counters of
 * ft_seq_map (0, 1, 2... per key, growth, use from several threads),
 * ft_comm_new / ft_comm_member / ft_comm_revoke, and the registry (add,
 * find, remove, count, -EEXIST on a duplicate id, growth to 1000 entries,
 * concurrent adds, and destroy freeing what is left). */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/comm_table.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const int32_t g_a[] = { 0, 1, 2 };
static const int32_t g_b[] = { 3, 4 };

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Sort ids and assert that no two are equal. */
static void assert_all_distinct(uint64_t *ids, size_t n)
{
	qsort(ids, n, sizeof *ids, cmp_u64);
	for (size_t i = 1; i < n; i++)
		ck_assert_msg(ids[i] != ids[i - 1], "id %llu appears twice",
			      (unsigned long long)ids[i]);
}

/* --- ids ----------------------------------------------------------------------- */

START_TEST(test_child_id_deterministic)
{
	int32_t members[] = { 4, 2, 9 };
	uint64_t mh = ft_members_hash(members, 3);

	ck_assert_uint_eq(ft_members_hash(members, 3), mh);
	for (uint64_t seq = 0; seq < 10; seq++) {
		uint64_t a = ft_comm_child_id(FT_COMM_WORLD_ID, FT_COMM_KIND_CHILD, 0, seq, mh);
		uint64_t b = ft_comm_child_id(FT_COMM_WORLD_ID, FT_COMM_KIND_CHILD, 0, seq, mh);
		ck_assert_uint_eq(a, b);
	}
	ck_assert_uint_eq(ft_comm_self_id(17), ft_comm_self_id(17));
	ck_assert_uint_eq(ft_comm_group_key(members, 3, 5), ft_comm_group_key(members, 3, 5));
}
END_TEST

START_TEST(test_child_id_depends_on_each_input)
{
	uint64_t mh = ft_members_hash(g_a, 3), mh2 = ft_members_hash(g_b, 2);
	uint64_t base = ft_comm_child_id(1, FT_COMM_KIND_CHILD, 0, 0, mh);

	ck_assert_uint_ne(base, ft_comm_child_id(2, FT_COMM_KIND_CHILD, 0, 0, mh));
	ck_assert_uint_ne(base, ft_comm_child_id(1, FT_COMM_KIND_GROUP, 0, 0, mh));
	ck_assert_uint_ne(base, ft_comm_child_id(1, FT_COMM_KIND_INTER, 0, 0, mh));
	ck_assert_uint_ne(base, ft_comm_child_id(1, FT_COMM_KIND_CHILD, 1, 0, mh));
	ck_assert_uint_ne(base, ft_comm_child_id(1, FT_COMM_KIND_CHILD, 0, 1, mh));
	ck_assert_uint_ne(base, ft_comm_child_id(1, FT_COMM_KIND_CHILD, 0, 0, mh2));

	/* A grid of inputs: all ids distinct, none reserved. Includes inputs
	 * that differ only by where a value sits (key vs seq). */
	static uint64_t ids[3 * 3 * 4 * 12 * 3];
	const uint64_t parents[] = { 0, 1, UINT64_C(0x123456789abcdef0) };
	const enum ft_comm_kind kinds[] = { FT_COMM_KIND_CHILD, FT_COMM_KIND_GROUP,
					    FT_COMM_KIND_INTER };
	const uint64_t keys[] = { 0, 1, 2, UINT64_MAX };
	const uint64_t hashes[] = { 0, mh, mh2 };
	size_t n = 0;

	for (size_t p = 0; p < ARRAY_SIZE(parents); p++)
		for (size_t k = 0; k < ARRAY_SIZE(kinds); k++)
			for (size_t key = 0; key < ARRAY_SIZE(keys); key++)
				for (uint64_t seq = 0; seq < 12; seq++)
					for (size_t h = 0; h < ARRAY_SIZE(hashes); h++) {
						uint64_t id = ft_comm_child_id(parents[p], kinds[k],
									       keys[key], seq,
									       hashes[h]);
						ck_assert_uint_gt(id, FT_COMM_WORLD_ID);
						ids[n++] = id;
					}
	ck_assert_uint_eq(n, ARRAY_SIZE(ids));
	assert_all_distinct(ids, n);
}
END_TEST

/* The test below needs to find inputs whose hash is 0 or 1, which means
 * inverting the hash. It models ft_hash_mix as the splitmix64 finaliser of
 * comm_table.c and ft_comm_child_id as the chain of ft_hash_mix calls over
 * (parent, kind, key, seq, members hash), and first asserts that the model
 * agrees with the library: if the hash changes, update the model. */
#define MIX_C1 UINT64_C(0xbf58476d1ce4e5b9)
#define MIX_C2 UINT64_C(0x94d049bb133111eb)
#define MIX_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

static uint64_t model_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * MIX_C1;
	z = (z ^ (z >> 27)) * MIX_C2;
	return z ^ (z >> 31);
}

static uint64_t odd_inverse(uint64_t c)
{
	uint64_t inv = c; /* right to 3 bits; each Newton step doubles that */

	for (int i = 0; i < 6; i++)
		inv *= 2 - c * inv;
	return inv;
}

static uint64_t undo_xorshift(uint64_t x, unsigned k)
{
	uint64_t y = x;

	for (unsigned i = 0; i < 64 / k + 1; i++)
		y = x ^ (y >> k);
	return y;
}

static uint64_t model_unmix64(uint64_t z)
{
	z = undo_xorshift(z, 31);
	z *= odd_inverse(MIX_C2);
	z = undo_xorshift(z, 27);
	z *= odd_inverse(MIX_C1);
	return undo_xorshift(z, 30);
}

static uint64_t model_hash_mix(uint64_t h, uint64_t v)
{
	return model_mix64(h ^ model_mix64(v + MIX_GOLDEN));
}

/* The value of the child chain before the last step (mixing in the
 * members hash). */
static uint64_t model_chain(uint64_t parent, enum ft_comm_kind kind, uint64_t key, uint64_t seq)
{
	uint64_t h = ft_hash_mix(parent, (uint64_t)kind);

	h = ft_hash_mix(h, key);
	return ft_hash_mix(h, seq);
}

START_TEST(test_child_id_never_reserved)
{
	/* The model agrees with the library. */
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t h = i * UINT64_C(0x9e3779b97f4a7c15), v = ~i * 31;
		ck_assert_uint_eq(model_unmix64(model_mix64(h)), h);
		ck_assert_uint_eq(ft_hash_mix(h, v), model_hash_mix(h, v));
		uint64_t raw = ft_hash_mix(model_chain(h, FT_COMM_KIND_GROUP, v, i), i + 5);
		if (raw > FT_COMM_WORLD_ID)
			ck_assert_uint_eq(ft_comm_child_id(h, FT_COMM_KIND_GROUP, v, i, i + 5),
					  raw);
	}

	/* Members hashes built so that the chain ends exactly at 0 and at 1:
	 * the derived id must still be neither. */
	const uint64_t parents[] = { FT_COMM_WORLD_ID, UINT64_C(0xfeedface), 0 };
	for (size_t i = 0; i < ARRAY_SIZE(parents) * 4 * 2; i++) {
		uint64_t parent = parents[i / 8], seq = i / 2 % 4, target = i % 2;
		uint64_t h = model_chain(parent, FT_COMM_KIND_CHILD, 0, seq);
		uint64_t mh = model_unmix64(model_unmix64(target) ^ h) - MIX_GOLDEN;

		ck_assert_uint_eq(ft_hash_mix(h, mh), target);
		uint64_t id = ft_comm_child_id(parent, FT_COMM_KIND_CHILD, 0, seq, mh);
		ck_assert_uint_ne(id, 0);
		ck_assert_uint_ne(id, FT_COMM_WORLD_ID);
	}
}
END_TEST

START_TEST(test_result_hash_intercomm_symmetric)
{
	static const int32_t c[] = { 7 }, d[] = { 5, 6, 8, 9 };

	ck_assert_uint_eq(ft_comm_result_hash(g_a, 3, g_b, 2), ft_comm_result_hash(g_b, 2, g_a, 3));
	ck_assert_uint_eq(ft_comm_result_hash(c, 1, d, 4), ft_comm_result_hash(d, 4, c, 1));
	/* Different groups, different hashes. */
	ck_assert_uint_ne(ft_comm_result_hash(g_a, 3, g_b, 2), ft_comm_result_hash(c, 1, d, 4));
	/* An intercomm is not the intracomm of its local group. */
	ck_assert_uint_ne(ft_comm_result_hash(g_a, 3, g_b, 2),
			  ft_comm_result_hash(g_a, 3, NULL, 0));
	/* Rank order within a group still counts. */
	static const int32_t b_rev[] = { 4, 3 };
	ck_assert_uint_ne(ft_comm_result_hash(g_a, 3, g_b, 2),
			  ft_comm_result_hash(g_a, 3, b_rev, 2));
	/* Where the split between the groups falls counts. */
	static const int32_t all[] = { 0, 1, 2, 3 };
	ck_assert_uint_ne(ft_comm_result_hash(all, 2, all + 2, 2),
			  ft_comm_result_hash(all, 1, all + 1, 3));
}
END_TEST

START_TEST(test_result_hash_intracomm_ordered)
{
	static const int32_t x[] = { 0, 1 }, y[] = { 1, 0 }, z[] = { 0, 1, 2 };

	ck_assert_uint_ne(ft_comm_result_hash(x, 2, NULL, 0), ft_comm_result_hash(y, 2, NULL, 0));
	ck_assert_uint_eq(ft_comm_result_hash(x, 2, NULL, 0), ft_comm_result_hash(x, 2, NULL, 0));
	ck_assert_uint_ne(ft_comm_result_hash(x, 2, NULL, 0), ft_comm_result_hash(z, 3, NULL, 0));
	/* The size counts, not only the contents: {0,1} vs its prefix {0}. */
	ck_assert_uint_ne(ft_comm_result_hash(z, 1, NULL, 0), ft_comm_result_hash(z, 2, NULL, 0));
	ck_assert_uint_ne(ft_members_hash(z, 0), ft_members_hash(z, 1));

	/* Every permutation of 4 members hashes differently. */
	uint64_t ids[24];
	size_t n = 0;
	for (int32_t a = 0; a < 4; a++)
		for (int32_t b = 0; b < 4; b++)
			for (int32_t c = 0; c < 4; c++)
				for (int32_t d = 0; d < 4; d++) {
					if (a == b || a == c || a == d || b == c || b == d ||
					    c == d)
						continue;
					int32_t m[] = { a, b, c, d };
					ids[n++] = ft_comm_result_hash(m, 4, NULL, 0);
				}
	ck_assert_uint_eq(n, 24);
	assert_all_distinct(ids, n);
}
END_TEST

START_TEST(test_inter_key)
{
	uint64_t k = ft_comm_inter_key(g_a, 3, g_b, 2, 5);

	ck_assert_uint_eq(k, ft_comm_inter_key(g_b, 2, g_a, 3, 5));
	ck_assert_uint_ne(k, ft_comm_inter_key(g_a, 3, g_b, 2, 6));
	ck_assert_uint_ne(k, ft_comm_inter_key(g_a, 3, g_b, 2, 0));
	ck_assert_uint_ne(k, ft_comm_inter_key(g_a, 3, g_b, 2, -5));
	ck_assert_uint_eq(ft_comm_inter_key(g_a, 3, g_b, 2, -1),
			  ft_comm_inter_key(g_b, 2, g_a, 3, -1));
	static const int32_t other[] = { 3, 5 };
	ck_assert_uint_ne(k, ft_comm_inter_key(g_a, 3, other, 2, 5));
}
END_TEST

START_TEST(test_group_key)
{
	static const int32_t rev[] = { 2, 1, 0 };
	uint64_t k = ft_comm_group_key(g_a, 3, 9);

	ck_assert_uint_ne(k, ft_comm_group_key(g_a, 3, 10));
	ck_assert_uint_ne(k, ft_comm_group_key(rev, 3, 9));
	ck_assert_uint_ne(k, ft_comm_group_key(g_a, 2, 9));
	ck_assert_uint_ne(k, ft_comm_group_key(g_b, 2, 9));
}
END_TEST

/* MPI-4 string tags: every byte counts, past the first word too, and
 * the length; NULL is "". */
START_TEST(test_string_key)
{
	uint64_t k = ft_comm_group_key(g_a, 3, 0);
	uint64_t a = ft_comm_string_key(k, "org.example.solver");

	ck_assert_uint_eq(a, ft_comm_string_key(k, "org.example.solver"));
	ck_assert_uint_ne(a, ft_comm_string_key(k, "org.example.solveR"));
	ck_assert_uint_ne(a, ft_comm_string_key(k, "org.example.solve"));
	ck_assert_uint_ne(a, ft_comm_string_key(ft_comm_group_key(g_b, 2, 0), "org.example.solver"));
	ck_assert_uint_ne(ft_comm_string_key(k, "123456789"), ft_comm_string_key(k, "12345678X"));
	ck_assert_uint_eq(ft_comm_string_key(k, NULL), ft_comm_string_key(k, ""));
	ck_assert_uint_ne(ft_comm_string_key(k, ""), k);
}
END_TEST

START_TEST(test_self_id)
{
	static uint64_t ids[4096];

	for (uint32_t r = 0; r < ARRAY_SIZE(ids); r++) {
		ids[r] = ft_comm_self_id(r);
		ck_assert_uint_ne(ids[r], 0);
		ck_assert_uint_ne(ids[r], FT_COMM_WORLD_ID);
	}
	assert_all_distinct(ids, ARRAY_SIZE(ids));
	ck_assert_uint_ne(ft_comm_self_id(UINT32_MAX), ft_comm_self_id(0));
}
END_TEST

/* --- ft_seq_map -------------------------------------------------------------- */

START_TEST(test_seq_map_counts)
{
	struct ft_seq_map m;

	ck_assert_int_eq(ft_seq_map_init(&m), 0);
	ck_assert_uint_eq(ft_seq_next(&m, 42), 0);
	ck_assert_uint_eq(ft_seq_next(&m, 42), 1);
	ck_assert_uint_eq(ft_seq_next(&m, 42), 2);
	ck_assert_uint_eq(ft_seq_next(&m, 7), 0);
	ck_assert_uint_eq(ft_seq_next(&m, 42), 3);
	ck_assert_uint_eq(ft_seq_next(&m, 7), 1);
	ck_assert_uint_eq(ft_seq_next(&m, 0), 0);
	ck_assert_uint_eq(ft_seq_next(&m, UINT64_MAX), 0);
	ck_assert_uint_eq(ft_seq_next(&m, 0), 1);
	ck_assert_uint_eq(ft_seq_next(&m, UINT64_MAX), 1);
	ft_seq_map_destroy(&m);
}
END_TEST

START_TEST(test_seq_map_many_keys)
{
	struct ft_seq_map m;

	ck_assert_int_eq(ft_seq_map_init(&m), 0);
	/* Key k is used k % 5 + 1 times, interleaved across keys. */
	for (uint64_t pass = 0; pass < 5; pass++)
		for (uint64_t k = 0; k < 100; k++)
			if (pass <= k % 5)
				ck_assert_uint_eq(ft_seq_next(&m, k * UINT64_C(0x10001) + 3), pass);
	for (uint64_t k = 0; k < 100; k++)
		ck_assert_uint_eq(ft_seq_next(&m, k * UINT64_C(0x10001) + 3), k % 5 + 1);
	/* A key never used starts at 0 even with 100 others around. */
	ck_assert_uint_eq(ft_seq_next(&m, 1), 0);
	ft_seq_map_destroy(&m);
}
END_TEST

#define SEQ_THREADS 4
#define SEQ_CALLS 1000

struct seq_arg {
	struct ft_seq_map *m;
	pthread_barrier_t *start;
	int id;
	uint64_t shared[SEQ_CALLS];
	uint64_t own[SEQ_CALLS];
};

static void *seq_worker(void *p)
{
	struct seq_arg *a = p;

	pthread_barrier_wait(a->start);
	for (int i = 0; i < SEQ_CALLS; i++) {
		a->shared[i] = ft_seq_next(a->m, 99);
		/* Several keys per thread so that the map grows while shared. */
		uint64_t own_key = UINT64_C(1000) + (uint64_t)a->id * 64 + (uint64_t)i % 50;
		a->own[i] = ft_seq_next(a->m, own_key);
	}
	return NULL;
}

START_TEST(test_seq_map_threads)
{
	struct ft_seq_map m;
	pthread_barrier_t start;
	pthread_t t[SEQ_THREADS];
	static struct seq_arg args[SEQ_THREADS];
	static bool seen[SEQ_THREADS * SEQ_CALLS];

	ck_assert_int_eq(ft_seq_map_init(&m), 0);
	ck_assert_int_eq(pthread_barrier_init(&start, NULL, SEQ_THREADS), 0);
	for (int i = 0; i < SEQ_THREADS; i++) {
		args[i].m = &m;
		args[i].start = &start;
		args[i].id = i;
		ck_assert_int_eq(pthread_create(&t[i], NULL, seq_worker, &args[i]), 0);
	}
	for (int i = 0; i < SEQ_THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&start);

	/* The shared key handed out 0..3999, each value once. */
	memset(seen, 0, sizeof seen);
	for (int i = 0; i < SEQ_THREADS; i++) {
		uint64_t prev = 0;
		for (int j = 0; j < SEQ_CALLS; j++) {
			uint64_t v = args[i].shared[j];
			ck_assert_uint_lt(v, SEQ_THREADS * SEQ_CALLS);
			ck_assert_msg(!seen[v], "value %llu handed out twice",
				      (unsigned long long)v);
			seen[v] = true;
			/* Increasing within one thread. */
			if (j)
				ck_assert_uint_gt(v, prev);
			prev = v;
		}
		/* Each thread's own keys counted only its own calls. */
		for (int j = 0; j < SEQ_CALLS; j++)
			ck_assert_uint_eq(args[i].own[j], (uint64_t)(j / 50));
	}
	ck_assert_uint_eq(ft_seq_next(&m, 99), SEQ_THREADS * SEQ_CALLS);
	ft_seq_map_destroy(&m);
}
END_TEST

/* --- entries ---------------------------------------------------------------- */

START_TEST(test_comm_new_intercomm)
{
	int32_t local[] = { 5, 3, 9 }, remote[] = { 1, 2 };
	struct ft_comm *c = ft_comm_new(UINT64_C(0xabcdef), local, 3, remote, 2);

	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->id, UINT64_C(0xabcdef));
	ck_assert_uint_eq(c->local_size, 3);
	ck_assert_uint_eq(c->remote_size, 2);
	ck_assert(!ft_comm_is_revoked(c));
	/* Local then remote, copied: changing the sources changes nothing. */
	local[0] = 100;
	remote[1] = 200;
	const int32_t expect[] = { 5, 3, 9, 1, 2 };
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(c->members[i], expect[i]);
	ck_assert_int_eq(ft_comm_member(c, 0), 5);
	ck_assert_int_eq(ft_comm_member(c, 2), 9);
	/* ft_comm_member is about the local group only. */
	ck_assert_int_eq(ft_comm_member(c, 3), -1);
	ck_assert_int_eq(ft_comm_member(c, UINT32_MAX), -1);
	/* Its creation counters work from the start. */
	ck_assert_uint_eq(ft_seq_next(&c->seqs, 0), 0);
	ck_assert_uint_eq(ft_seq_next(&c->seqs, 0), 1);
	ft_comm_free(c);
}
END_TEST

START_TEST(test_comm_new_intracomm)
{
	int32_t local[] = { 4, 0, 2, 6 };
	struct ft_comm *c = ft_comm_new(77, local, 4, NULL, 0);

	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->local_size, 4);
	ck_assert_uint_eq(c->remote_size, 0);
	for (uint32_t r = 0; r < 4; r++)
		ck_assert_int_eq(ft_comm_member(c, r), local[r]);
	ck_assert_int_eq(ft_comm_member(c, 4), -1);
	ck_assert(!ft_comm_is_revoked(c));
	ft_comm_free(c);
	ft_comm_free(NULL);
}
END_TEST

START_TEST(test_revoke_once)
{
	int32_t local[] = { 0 };
	struct ft_comm *c = ft_comm_new(5, local, 1, NULL, 0);

	ck_assert_ptr_nonnull(c);
	ck_assert(!ft_comm_is_revoked(c));
	ck_assert(ft_comm_revoke(c));
	ck_assert(ft_comm_is_revoked(c));
	ck_assert(!ft_comm_revoke(c));
	ck_assert(!ft_comm_revoke(c));
	ck_assert(ft_comm_is_revoked(c));
	ft_comm_free(c);
}
END_TEST

struct revoke_arg {
	struct ft_comm *c;
	pthread_barrier_t *start;
	int wins;
};

static void *revoke_worker(void *p)
{
	struct revoke_arg *a = p;

	pthread_barrier_wait(a->start);
	a->wins = ft_comm_revoke(a->c);
	return NULL;
}

START_TEST(test_revoke_race)
{
	int32_t local[] = { 0, 1 };

	for (int round = 0; round < 50; round++) {
		struct ft_comm *c = ft_comm_new(9, local, 2, NULL, 0);
		pthread_barrier_t start;
		struct revoke_arg a[4];
		pthread_t t[4];
		int wins = 0;

		ck_assert_ptr_nonnull(c);
		ck_assert_int_eq(pthread_barrier_init(&start, NULL, 4), 0);
		for (int i = 0; i < 4; i++) {
			a[i] = (struct revoke_arg){ .c = c, .start = &start, .wins = 0 };
			ck_assert_int_eq(pthread_create(&t[i], NULL, revoke_worker, &a[i]), 0);
		}
		for (int i = 0; i < 4; i++) {
			ck_assert_int_eq(pthread_join(t[i], NULL), 0);
			wins += a[i].wins;
		}
		pthread_barrier_destroy(&start);
		ck_assert_int_eq(wins, 1);
		ck_assert(ft_comm_is_revoked(c));
		ft_comm_free(c);
	}
}
END_TEST

/* --- the registry ------------------------------------------------------------- */

static struct ft_comm *new_entry(uint64_t id)
{
	int32_t m[] = { (int32_t)(id & 0x7fffffff) };
	struct ft_comm *c = ft_comm_new(id, m, 1, NULL, 0);

	ck_assert_ptr_nonnull(c);
	return c;
}

START_TEST(test_registry_basic)
{
	struct ft_comm_registry reg;

	ck_assert_int_eq(ft_comm_registry_init(&reg), 0);
	ck_assert_uint_eq(ft_comm_registry_count(&reg), 0);
	ck_assert_ptr_null(ft_comm_registry_find(&reg, 100));
	ck_assert_ptr_null(ft_comm_registry_find(&reg, FT_COMM_WORLD_ID));

	struct ft_comm *c1 = new_entry(100), *c2 = new_entry(200);
	ck_assert_int_eq(ft_comm_registry_add(&reg, c1), 0);
	ck_assert_uint_eq(ft_comm_registry_count(&reg), 1);
	ck_assert_ptr_eq(ft_comm_registry_find(&reg, 100), c1);
	ck_assert_ptr_null(ft_comm_registry_find(&reg, 200));
	ck_assert_int_eq(ft_comm_registry_add(&reg, c2), 0);
	ck_assert_uint_eq(ft_comm_registry_count(&reg), 2);
	ck_assert_ptr_eq(ft_comm_registry_find(&reg, 200), c2);
	ck_assert_ptr_eq(ft_comm_registry_find(&reg, 100), c1);

	ft_comm_registry_remove(&reg, c1);
	ck_assert_uint_eq(ft_comm_registry_count(&reg), 1);
	ck_assert_ptr_null(ft_comm_registry_find(&reg, 100));
	ck_assert_ptr_eq(ft_comm_registry_find(&reg, 200), c2);
	/* Removing what is not registered changes nothing. */
	ft_comm_registry_remove(&reg, c1);
	ck_assert_uint_eq(ft_comm_registry_count(&reg), 1);
	ft_comm_free(c1);

	ft_comm_registry_remove(&reg, c2);
	ck_assert_uint_eq(ft_comm_registry_count(&reg), 0);
	ck_assert_ptr_null(ft_comm_registry_find(&reg, 200));
	ft_comm_free(c2);
	ft_comm_registry_destroy(&reg);
}
END_TEST

START_TEST(test_registry_duplicate)
{
	struct ft_comm_registry reg;
	struct ft_comm *c1 = new_entry(555), *dup = new_entry(555);

	ck_assert_int_eq(ft_comm_registry_init(&reg), 0);
	ck_assert_int_eq(ft_comm_registry_add(&reg, c1), 0);
	ck_assert_int_eq(ft_comm_registry_add(&reg, dup), -EEXIST);
	ck_assert_uint_eq(ft_comm_registry_count(&reg), 1);
	ck_assert_ptr_eq(ft_comm_registry_find(&reg, 555), c1);
	/* Adding the same entry twice is a duplicate too. */
	ck_assert_int_eq(ft_comm_registry_add(&reg, c1), -EEXIST);
	ck_assert_uint_eq(ft_comm_registry_count(&reg), 1);
	/* Once the first is gone the id is free again. */
	ft_comm_registry_remove(&reg, c1);
	ft_comm_free(c1);
	ck_assert_int_eq(ft_comm_registry_add(&reg, dup), 0);
	ck_assert_ptr_eq(ft_comm_registry_find(&reg, 555), dup);
	ft_comm_registry_destroy(&reg); /* frees dup */
}
END_TEST

#define REG_N 1000

static uint64_t reg_id(uint32_t i, int set)
{
	/* Two sets of ids: small consecutive numbers, and derived ids. */
	return set == 0 ? 2 + (uint64_t)i
			: ft_comm_child_id(FT_COMM_WORLD_ID, FT_COMM_KIND_CHILD, 0, i, 0);
}

START_TEST(test_registry_growth)
{
	for (int set = 0; set < 2; set++) {
		struct ft_comm_registry reg;
		static struct ft_comm *c[REG_N];

		ck_assert_int_eq(ft_comm_registry_init(&reg), 0);
		for (uint32_t i = 0; i < REG_N; i++) {
			c[i] = new_entry(reg_id(i, set));
			ck_assert_int_eq(ft_comm_registry_add(&reg, c[i]), 0);
			/* Every earlier entry survives each growth. */
			for (uint32_t j = 0; i % 97 == 0 && j <= i; j++) {
				struct ft_comm *f = ft_comm_registry_find(&reg, reg_id(j, set));
				ck_assert_ptr_eq(f, c[j]);
			}
		}
		ck_assert_uint_eq(ft_comm_registry_count(&reg), REG_N);
		for (uint32_t i = 0; i < REG_N; i++)
			ck_assert_ptr_eq(ft_comm_registry_find(&reg, reg_id(i, set)), c[i]);
		/* Duplicates are still caught after growth. */
		struct ft_comm *dup = new_entry(reg_id(REG_N / 2, set));
		ck_assert_int_eq(ft_comm_registry_add(&reg, dup), -EEXIST);
		ft_comm_free(dup);

		/* Remove every other one. */
		for (uint32_t i = 0; i < REG_N; i += 2) {
			ft_comm_registry_remove(&reg, c[i]);
			ft_comm_free(c[i]);
			c[i] = NULL;
		}
		ck_assert_uint_eq(ft_comm_registry_count(&reg), REG_N / 2);
		for (uint32_t i = 0; i < REG_N; i++) {
			if (i % 2)
				ck_assert_ptr_eq(ft_comm_registry_find(&reg, reg_id(i, set)), c[i]);
			else
				ck_assert_ptr_null(ft_comm_registry_find(&reg, reg_id(i, set)));
		}
		/* Ids never added are not found. */
		ck_assert_ptr_null(ft_comm_registry_find(&reg, reg_id(REG_N, set)));
		ck_assert_ptr_null(ft_comm_registry_find(&reg, 0));

		/* Add the removed ones back. */
		for (uint32_t i = 0; i < REG_N; i += 2) {
			c[i] = new_entry(reg_id(i, set));
			ck_assert_int_eq(ft_comm_registry_add(&reg, c[i]), 0);
		}
		ck_assert_uint_eq(ft_comm_registry_count(&reg), REG_N);
		for (uint32_t i = 0; i < REG_N; i++)
			ck_assert_ptr_eq(ft_comm_registry_find(&reg, reg_id(i, set)), c[i]);

		/* Destroy frees all that is registered (checked by valgrind / ASan). */
		ft_comm_registry_destroy(&reg);
		ck_assert_ptr_null(reg.buckets);
		ck_assert_uint_eq(reg.count, 0);
	}
}
END_TEST

#define REG_THREADS 4

struct reg_arg {
	struct ft_comm_registry *reg;
	pthread_barrier_t *start;
	uint32_t id;
	struct ft_comm *c[REG_N / REG_THREADS];
	int add_fail, find_fail;
};

static void *reg_worker(void *p)
{
	struct reg_arg *a = p;
	const uint32_t n = REG_N / REG_THREADS;

	pthread_barrier_wait(a->start);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t id = reg_id(a->id * n + i, 1);
		if (ft_comm_registry_add(a->reg, a->c[i]) != 0)
			a->add_fail++;
		if (ft_comm_registry_find(a->reg, id) != a->c[i])
			a->find_fail++;
	}
	/* Remove the first half of ours while the others still add. */
	for (uint32_t i = 0; i < n / 2; i++)
		ft_comm_registry_remove(a->reg, a->c[i]);
	return NULL;
}

START_TEST(test_registry_threads)
{
	struct ft_comm_registry reg;
	pthread_barrier_t start;
	pthread_t t[REG_THREADS];
	static struct reg_arg args[REG_THREADS];
	const uint32_t n = REG_N / REG_THREADS;

	ck_assert_int_eq(ft_comm_registry_init(&reg), 0);
	ck_assert_int_eq(pthread_barrier_init(&start, NULL, REG_THREADS), 0);
	for (uint32_t k = 0; k < REG_THREADS; k++) {
		args[k] = (struct reg_arg){ .reg = &reg, .start = &start, .id = k };
		for (uint32_t i = 0; i < n; i++)
			args[k].c[i] = new_entry(reg_id(k * n + i, 1));
		ck_assert_int_eq(pthread_create(&t[k], NULL, reg_worker, &args[k]), 0);
	}
	for (uint32_t k = 0; k < REG_THREADS; k++)
		ck_assert_int_eq(pthread_join(t[k], NULL), 0);
	pthread_barrier_destroy(&start);

	ck_assert_uint_eq(ft_comm_registry_count(&reg), REG_N / 2);
	for (uint32_t k = 0; k < REG_THREADS; k++) {
		ck_assert_int_eq(args[k].add_fail, 0);
		ck_assert_int_eq(args[k].find_fail, 0);
		for (uint32_t i = 0; i < n; i++) {
			struct ft_comm *f = ft_comm_registry_find(&reg, reg_id(k * n + i, 1));
			if (i < n / 2) {
				ck_assert_ptr_null(f);
				ft_comm_free(args[k].c[i]);
			} else {
				ck_assert_ptr_eq(f, args[k].c[i]);
			}
		}
	}
	ft_comm_registry_destroy(&reg);
}
END_TEST

START_TEST(test_registry_destroy_empty)
{
	struct ft_comm_registry reg;

	ck_assert_int_eq(ft_comm_registry_init(&reg), 0);
	ck_assert_uint_eq(ft_seq_next(&reg.inter_seqs, 12), 0);
	ck_assert_uint_eq(ft_seq_next(&reg.inter_seqs, 12), 1);
	ft_comm_registry_destroy(&reg);
	ck_assert_ptr_null(reg.buckets);
}
END_TEST

static Suite *comm_table_suite(void)
{
	Suite *s = suite_create("comm_table");
	TCase *tc_ids = tcase_create("ids");
	TCase *tc_seq = tcase_create("seq_map");
	TCase *tc_comm = tcase_create("entries");
	TCase *tc_reg = tcase_create("registry");

	tcase_add_test(tc_ids, test_child_id_deterministic);
	tcase_add_test(tc_ids, test_child_id_depends_on_each_input);
	tcase_add_test(tc_ids, test_child_id_never_reserved);
	tcase_add_test(tc_ids, test_result_hash_intercomm_symmetric);
	tcase_add_test(tc_ids, test_result_hash_intracomm_ordered);
	tcase_add_test(tc_ids, test_inter_key);
	tcase_add_test(tc_ids, test_group_key);
	tcase_add_test(tc_ids, test_string_key);
	tcase_add_test(tc_ids, test_self_id);
	suite_add_tcase(s, tc_ids);

	tcase_add_test(tc_seq, test_seq_map_counts);
	tcase_add_test(tc_seq, test_seq_map_many_keys);
	tcase_add_test(tc_seq, test_seq_map_threads);
	suite_add_tcase(s, tc_seq);

	tcase_add_test(tc_comm, test_comm_new_intercomm);
	tcase_add_test(tc_comm, test_comm_new_intracomm);
	tcase_add_test(tc_comm, test_revoke_once);
	tcase_add_test(tc_comm, test_revoke_race);
	suite_add_tcase(s, tc_comm);

	tcase_add_test(tc_reg, test_registry_basic);
	tcase_add_test(tc_reg, test_registry_duplicate);
	tcase_add_test(tc_reg, test_registry_growth);
	tcase_add_test(tc_reg, test_registry_threads);
	tcase_add_test(tc_reg, test_registry_destroy_empty);
	tcase_set_timeout(tc_reg, 60);
	suite_add_tcase(s, tc_reg);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(comm_table_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
