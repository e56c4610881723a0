/*
 * test_manifest.c - a collection's manifest (spec/format.md, "Collections"):
 * what is encoded decodes the same; every truncation and every flipped
 * byte gets the error its place calls for; each rule checked after the
 * checksum, broken in a resealed manifest, gets BFI_E_MANIFEST or its own
 * code.
 */
#include <string.h>

#include "bfi_manifest.h"
#include "format.h"
#include "test.h"

static struct bfi_segment segs[3] = {
	{"seg-0000000000000001-0000", 10, 0, {1}},
	{"seg-0000000000000002-0000", 5, 10, {2}},
	{"seg-000000000000000a-0003", 7, 15, {3}},
};
static uint64_t removed[4] = {(uint64_t)0 << 32 | 3, (uint64_t)0 << 32 | 9, (uint64_t)2 << 32 | 0,
                              (uint64_t)2 << 32 | 6};

static struct bfi_manifest sample(void)
{
	struct bfi_manifest m = {BFI_MANIFEST_MAJOR, BFI_MANIFEST_MINOR, 7, 22 - 4, {0}, 3, 4,
	                         segs, removed};
	for (int i = 0; i < 16; i++)
		m.collection_id[i] = (uint8_t)(0xa0 + i);
	return m;
}

/* The sample encoded, in a buffer of its size (the caller frees it). */
static uint8_t *encoded(uint64_t *size)
{
	struct bfi_manifest m = sample();
	*size = bfi_manifest_size(&m);
	uint8_t *b = malloc((size_t)*size);
	if (b)
		bfi_manifest_encode(b, &m);
	return b;
}

static void test_round_trip(void)
{
	uint64_t size;
	uint8_t *b = encoded(&size);
	EXPECT(b && size == 64 + 3 * 64 + 4 * 8 + 8);
	struct bfi_manifest d;
	const char *what = NULL;
	EXPECT_RC(bfi_manifest_decode(b, size, &d, &what), 0);
	struct bfi_manifest m = sample();
	EXPECT(d.generation == 7 && d.n_sets == 18 && d.n_segments == 3 && d.n_removed == 4);
	EXPECT(memcmp(d.collection_id, m.collection_id, 16) == 0);
	for (uint32_t i = 0; i < 3 && d.segs; i++)
		EXPECT(strcmp(d.segs[i].name, segs[i].name) == 0 && d.segs[i].n_sets == segs[i].n_sets &&
		       d.segs[i].first == segs[i].first &&
		       memcmp(d.segs[i].snapshot_id, segs[i].snapshot_id, 16) == 0);
	for (uint32_t i = 0; i < 4 && d.removed; i++)
		EXPECT(d.removed[i] == removed[i]);
	bfi_manifest_free(&d);
	free(b);
}

static void test_truncations(void)
{
	uint64_t size;
	uint8_t *b = encoded(&size);
	int wrong = 0;
	for (uint64_t len = 0; b && len < size; len++) {
		struct bfi_manifest d;
		wrong += bfi_manifest_decode(b, len, &d, NULL) != BFI_E_TRUNCATED;
	}
	EXPECT(wrong == 0);
	/* a longer file: its size field says less */
	uint8_t *longer = calloc(1, (size_t)size + 8);
	if (longer && b) {
		memcpy(longer, b, (size_t)size);
		struct bfi_manifest d;
		EXPECT_RC(bfi_manifest_decode(longer, size + 8, &d, NULL), BFI_E_SIZE);
	}
	free(longer);
	free(b);
}

/* The error a flip of byte at calls for: magic, version, size field, else the checksum's. */
static int expected(uint64_t at, const uint8_t *b)
{
	if (at < 8)
		return BFI_E_BAD_MAGIC;
	if (at < 12)
		return BFI_E_VERSION;
	if (at >= 16 && at < 24) /* the size field: larger than the file, or smaller */
		return bfi_get64(b + 16) > 64 + 3 * 64 + 4 * 8 + 8 ? BFI_E_TRUNCATED : BFI_E_SIZE;
	return BFI_E_MANIFEST;
}

static void test_flips(void)
{
	uint64_t size;
	uint8_t *b = encoded(&size);
	int wrong = 0;
	for (uint64_t at = 0; b && at < size; at++)
		for (unsigned bit = 0; bit < 8; bit++) {
			b[at] ^= (uint8_t)(1u << bit);
			struct bfi_manifest d;
			int rc = bfi_manifest_decode(b, size, &d, NULL);
			if (rc != expected(at, b)) {
				fprintf(stderr, "byte %llu bit %u: %s\n", (unsigned long long)at, bit,
				        bfi_strerror(rc));
				wrong++;
			}
			b[at] ^= (uint8_t)(1u << bit);
		}
	EXPECT(wrong == 0);
	free(b);
}

/* Change the sample through fn, reseal it, and expect code. */
static void broken(void (*fn)(uint8_t *b), int code)
{
	uint64_t size;
	uint8_t *b = encoded(&size);
	if (b == NULL)
		return;
	fn(b);
	bfi_put64(b + size - 8, bfi_checksum64(b, (size_t)(size - 8)));
	struct bfi_manifest d;
	const char *what = NULL;
	EXPECT_RC(bfi_manifest_decode(b, size, &d, &what), code);
	EXPECT(what != NULL);
	free(b);
}

static void reserved(uint8_t *b) { b[12] = 1; }
static void gen0(uint8_t *b) { bfi_put64(b + 24, 0); }
static void bad_name(uint8_t *b) { b[64 + 5] = 'G'; }
static void unpadded(uint8_t *b) { b[64 + 30] = 'x'; }
static void twice(uint8_t *b) { memcpy(b + 64 + 64, b + 64, 32); }
static void gap(uint8_t *b) { bfi_put64(b + 64 + 64 + 40, 11); }
static void empty_seg(uint8_t *b) { bfi_put64(b + 64 + 32, 0); }
static void out_of_order(uint8_t *b) { bfi_put32(b + 64 + 192 + 4, 9), bfi_put32(b + 64 + 192 + 12, 3); }
static void past_set(uint8_t *b) { bfi_put32(b + 64 + 192 + 28, 7); }
static void past_seg(uint8_t *b) { bfi_put32(b + 64 + 192 + 24, 3); }
static void miscount(uint8_t *b) { bfi_put64(b + 40, 17); }

static void test_rules(void)
{
	broken(reserved, BFI_E_RESERVED);
	broken(gen0, BFI_E_MANIFEST);
	broken(bad_name, BFI_E_MANIFEST);
	broken(unpadded, BFI_E_MANIFEST);
	broken(twice, BFI_E_MANIFEST);
	broken(gap, BFI_E_MANIFEST);
	broken(empty_seg, BFI_E_MANIFEST);
	broken(out_of_order, BFI_E_MANIFEST);
	broken(past_set, BFI_E_MANIFEST);
	broken(past_seg, BFI_E_MANIFEST);
	broken(miscount, BFI_E_MANIFEST);
	EXPECT(bfi_segment_name_ok("seg-0123456789abcdef-00ff"));
	EXPECT(!bfi_segment_name_ok("seg-0123456789abcdef-00f"));
	EXPECT(!bfi_segment_name_ok("seg-0123456789ABCDEF-00ff"));
	EXPECT(!bfi_segment_name_ok("../0123456789abcdef-00ff"));
}

int main(void)
{
	test_run("manifest: encoded, decoded the same", test_round_trip);
	test_run("manifest: every truncation is BFI_E_TRUNCATED, a longer file BFI_E_SIZE",
	         test_truncations);
	test_run("manifest: every flipped bit gets the error its place calls for", test_flips);
	test_run("manifest: each rule after the checksum, broken and resealed, is refused", test_rules);
	return test_exit();
}
