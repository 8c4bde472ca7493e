/* fuzz_frame.c: a libFuzzer target for the frame parser of src/frame.c.
 * tests/fuzz.sh builds and runs it under `make check`; by hand, from the
 * source tree with a configured build directory B:
 *   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -I. -IB \
 *     src/frame.c tests/fuzz/fuzz_frame.c -o /tmp/fuzz_frame
 *   mkdir -p /tmp/corpus && /tmp/fuzz_frame -max_total_time=60 -max_len=4096 /tmp/corpus
 * (add UBSAN_OPTIONS=halt_on_error=1 to make undefined behaviour fatal).
 * The input is treated as the bytes of one connection: frames are parsed
 * from the start while they are accepted, and each accepted frame must
 * re-encode to exactly the bytes it was parsed from, and parse again from
 * a buffer of exactly its length (but not one byte shorter). Since random
 * bytes almost never carry the secret, a copy of the input with a valid
 * magic, version and reserved field (its type byte kept) and the secret
 * written in is parsed too. Any broken invariant abort()s. */
#include "ftshim_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/frame.h"

#define FUZZ_NPROCS 64

/* Also written by tests/fuzz.sh into the seed corpus: keep them equal. */
static const uint8_t fuzz_secret[FT_SECRET_LEN] = { 'f', 't', 's', 'h', 'i', 'm', ' ', 'f',
						    'u', 'z', 'z', ' ', 'k', 'e', 'y', '!' };

static struct ft_entry scratch[FT_FRAME_MAX_ENTRIES];
static uint8_t reencoded[FT_FRAME_MAX_LEN];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A copy of buf[0..len) in a heap block of exactly len bytes, so that ASan
 * reports any read past the end. */
static uint8_t *exact_copy(const uint8_t *buf, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);

	if (!b)
		abort();
	if (len)
		memcpy(b, buf, len);
	return b;
}

/* The checks on one accepted frame buf[0..n). */
static void check_frame(const uint8_t *buf, size_t n, const struct ft_msg *m)
{
	if (n < FT_FRAME_HEADER_LEN || n > FT_FRAME_MAX_LEN)
		abort();
	if (m->from >= FUZZ_NPROCS || m->type < FT_MSG_HEARTBEAT || m->type >= FT_MSG_TYPE_END)
		abort();
	if ((m->type == FT_MSG_NOTICE || m->type == FT_MSG_SYNC) &&
	    (m->list.count > FT_FRAME_MAX_ENTRIES || m->list.entries != scratch))
		abort();
	if (ft_frame_length(m) != n)
		abort();
	if (ft_frame_encode(m, m->from, fuzz_secret, reencoded, sizeof reencoded) != n)
		abort();
	if (memcmp(reencoded, buf, n) != 0)
		abort();

	/* The frame alone parses the same; one byte less is only a wait. */
	uint8_t *b = exact_copy(buf, n);
	struct ft_msg again;
	size_t consumed = 0;

	if (ft_frame_parse(b, n, fuzz_secret, FUZZ_NPROCS, &again, scratch, &consumed) !=
		    FT_FRAME_OK ||
	    consumed != n)
		abort();
	if (ft_frame_parse(b, n - 1, fuzz_secret, FUZZ_NPROCS, &again, scratch, &consumed) !=
	    FT_FRAME_INCOMPLETE)
		abort();
	free(b);
}

/* Parse buf[0..len) as a stream until it runs out or breaks. */
static void parse_stream(const uint8_t *buf, size_t len)
{
	size_t off = 0;

	for (;;) {
		struct ft_msg m;
		size_t consumed = 0;
		enum ft_frame_error err = ft_frame_parse(buf + off, len - off, fuzz_secret,
							 FUZZ_NPROCS, &m, scratch, &consumed);

		if ((unsigned)err >= FT_FRAME_ERR_COUNT || !ft_frame_error_names[err])
			abort();
		if (err != FT_FRAME_OK)
			return;
		if (consumed > len - off)
			abort();
		check_frame(buf + off, consumed, &m);
		off += consumed;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b = exact_copy(data, size);

	parse_stream(b, size);
	if (size >= FT_FRAME_HEADER_LEN) {
		/* Past the checks that random bytes cannot pass. */
		uint8_t type = b[5];

		b[0] = (uint8_t)FT_FRAME_MAGIC;
		b[1] = (uint8_t)(FT_FRAME_MAGIC >> 8);
		b[2] = (uint8_t)(FT_FRAME_MAGIC >> 16);
		b[3] = (uint8_t)(FT_FRAME_MAGIC >> 24);
		b[4] = FT_FRAME_VERSION;
		b[5] = type;
		b[6] = 0;
		b[7] = 0;
		memcpy(b + 16, fuzz_secret, FT_SECRET_LEN);
		parse_stream(b, size);
	}
	free(b);
	return 0;
}
