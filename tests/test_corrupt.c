/*
 * test_corrupt.c - damaged files must give a specific error, never a crash:
 * truncation at every length, every header and table byte flipped, random
 * spans overwritten (caught by open or by verify), catalogs damaged or
 * swapped. Run under ASan+UBSan by `./configure --mode=sanitize`.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "format.h"
#include "test.h"

static char good[4200], work[4200], work_index[4300], work_catalog[4300];
static uint8_t *index_bytes, *catalog_bytes;
static size_t index_len, catalog_len;

static int rich; /* 0: one small block; 1: two blocks, pre-filters and a plain layout */

static int build_small(const char *path, const char *prefix, int nsets)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	if (rich) {
		o.max_block_sets = 512; /* the fewest blocks of at most 512 sets: two */
		o.block_cost = 1ull << 40;
		o.prefilter = BFI_PREFILTER_ALWAYS;
		o.layouts = BFI_BUILD_FLAT | BFI_BUILD_PLAIN | BFI_BUILD_RAMBO | BFI_BUILD_TREE;
		o.fanout = 8;
		o.keep_order = 1;
	} else {
		o.bits = 700; /* many 64 KiB chunks are not needed; keep every-length loops fast */
	}
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	char buf[64];
	for (int j = 0; j < nsets && rc == 0; j++) {
		uint32_t ord;
		snprintf(buf, sizeof buf, "%s%d", prefix, j);
		rc = bfi_writer_set(w, buf, strlen(buf), &ord);
		for (int i = 0; i < (rich ? 1 + j / 15 : 40) && rc == 0; i++) {
			int n = snprintf(buf, sizeof buf, "key%d", i * (j + 1));
			rc = bfi_writer_key(w, ord, buf, (size_t)n);
		}
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, path, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

/* Put the work snapshot back to the good bytes. */
static void restore(void)
{
	EXPECT(test_write_file(work_index, index_bytes, index_len) == 0);
	EXPECT(test_write_file(work_catalog, catalog_bytes, catalog_len) == 0);
}

static int is_format_code(int rc)
{
	return rc >= BFI_E_TRUNCATED && rc <= BFI_E_UNKNOWN_SECTION;
}

/* Open, and if that works, query a few keys: nothing may crash. */
static int open_and_query(unsigned flags)
{
	bfi_snapshot *s;
	int rc = bfi_open(work, flags, &s);
	if (rc)
		return rc;
	bfi_result *res;
	if (bfi_result_create(&res) == 0) {
		char key[16];
		for (int i = 0; i < 50; i++) {
			int n = snprintf(key, sizeof key, "key%d", i);
			/* a damaged rambo table must give an error, not a crash */
			int rr = bfi_query_key_layout(s, BFI_LAYOUT_RAMBO, key, (size_t)n, res);
			EXPECT(rr == 0 || rr == BFI_E_NO_LAYOUT || rr == BFI_E_BAD_LAYOUT);
			rr = bfi_query_key_layout(s, BFI_LAYOUT_TREE, key, (size_t)n, res);
			EXPECT(rr == 0 || rr == BFI_E_NO_LAYOUT || rr == BFI_E_BAD_LAYOUT);
			for (size_t j = 0; rr == 0 && j < bfi_result_count(res); j++)
				EXPECT(bfi_result_ordinals(res)[j] < (rich ? 600u : 8u));
			if (bfi_query_key(s, key, (size_t)n, res) == 0) {
				const uint32_t *o = bfi_result_ordinals(res);
				for (size_t j = 0; j < bfi_result_count(res); j++)
					EXPECT(o[j] < (rich ? 600u : 8u));
			}
		}
		bfi_result_destroy(&res);
	}
	bfi_close(&s);
	return 0;
}

static void test_truncate_every_length(void)
{
	int bad = 0;
	for (size_t len = 0; len < index_len; len += rich && len > 4200 && len + 100 < index_len ? 97 : 1) {
		EXPECT(test_write_file(work_index, index_bytes, len) == 0);
		int rc = open_and_query(0);
		if (rc != BFI_E_TRUNCATED && bad++ < 5)
			fprintf(stderr, "truncated to %zu: got %d (%s)\n", len, rc, bfi_strerror(rc));
		struct bfi_verify_report rep;
		int vrc = bfi_verify(work, &rep, NULL, NULL);
		if (vrc != BFI_E_TRUNCATED && bad++ < 5)
			fprintf(stderr, "verify of truncated %zu: got %d\n", len, vrc);
	}
	EXPECT(bad == 0);
	/* One byte too many is an error too. */
	uint8_t *longer = malloc(index_len + 1);
	memcpy(longer, index_bytes, index_len);
	longer[index_len] = 0;
	EXPECT(test_write_file(work_index, longer, index_len + 1) == 0);
	EXPECT_RC(open_and_query(0), BFI_E_SIZE);
	free(longer);
	restore();
	EXPECT_RC(open_and_query(0), 0);
}

static void test_flip_header_and_table(void)
{
	int bad = 0;
	/* Header, section table and the padding up to the first section. */
	for (size_t off = 0; off < BFI_SECTION_ALIGN; off++) {
		for (int pat = 0; pat < 2; pat++) {
			uint8_t x = pat ? 0xff : 0x01;
			index_bytes[off] ^= x;
			EXPECT(test_write_file(work_index, index_bytes, index_len) == 0);
			index_bytes[off] ^= x;
			int rc = open_and_query(0);
			if (!is_format_code(rc) && bad++ < 5)
				fprintf(stderr, "flip 0x%02x at %zu: got %d (%s)\n", x, off, rc,
				        bfi_strerror(rc));
			struct bfi_verify_report rep;
			int vrc = bfi_verify(work, &rep, NULL, NULL);
			if ((vrc != rc || rep.offset > off || off - rep.offset >= (rep.length ? rep.length : 1)) &&
			    off < BFI_HEADER_SIZE + 2 * BFI_ENTRY_SIZE && bad++ < 5)
				fprintf(stderr, "verify flip at %zu: rc %d, region %llu+%llu\n", off, vrc,
				        (unsigned long long)rep.offset, (unsigned long long)rep.length);
		}
	}
	EXPECT(bad == 0);
	/* Specific codes for specific fields. */
	index_bytes[0] ^= 1;
	EXPECT(test_write_file(work_index, index_bytes, index_len) == 0);
	index_bytes[0] ^= 1;
	EXPECT_RC(open_and_query(0), BFI_E_BAD_MAGIC);
	index_bytes[index_len - 1] ^= 1;
	EXPECT(test_write_file(work_index, index_bytes, index_len) == 0);
	index_bytes[index_len - 1] ^= 1;
	EXPECT_RC(open_and_query(0), BFI_E_BAD_TRAILER);
	index_bytes[BFI_HEADER_SIZE + 3] ^= 1;
	EXPECT(test_write_file(work_index, index_bytes, index_len) == 0);
	index_bytes[BFI_HEADER_SIZE + 3] ^= 1;
	EXPECT_RC(open_and_query(0), BFI_E_TABLE_CHECKSUM);
	index_bytes[BFI_SECTION_ALIGN - 1] ^= 1;
	EXPECT(test_write_file(work_index, index_bytes, index_len) == 0);
	index_bytes[BFI_SECTION_ALIGN - 1] ^= 1;
	EXPECT_RC(open_and_query(0), BFI_E_RESERVED);
	restore();
}

/* Re-seal a header after editing it, to reach the checks behind the checksum. */
static void reseal_and_write(uint8_t *b)
{
	bfi_put64(b + BFI_H_TABLE_CHECKSUM,
	          bfi_checksum64(b + BFI_HEADER_SIZE, (size_t)bfi_get32(b + BFI_H_SECTION_COUNT) * 64));
	bfi_put64(b + BFI_H_CHECKSUM, bfi_checksum64(b, BFI_H_CHECKSUM));
	EXPECT(test_write_file(work_index, b, index_len) == 0);
}

static void test_resealed_fields(void)
{
	uint8_t *b = malloc(index_len);
	struct {
		size_t off;
		int width;
		uint64_t value;
		int want;
	} cases[] = {
		{BFI_H_MAJOR, 2, BFI_VERSION_MAJOR + 1, BFI_E_VERSION},
		{BFI_H_MAJOR, 2, BFI_VERSION_MAJOR - 1, BFI_E_VERSION},
		{BFI_H_MINOR, 2, BFI_VERSION_MINOR + 1, BFI_E_VERSION},
		{BFI_H_INCOMPAT, 8, 1, BFI_E_INCOMPAT},
		{BFI_H_RESERVED, 8, 1, BFI_E_RESERVED},
		{BFI_H_SECTION_COUNT, 4, 0, BFI_E_BAD_SECTION},
		{BFI_H_SECTION_COUNT, 4, 63, BFI_E_BAD_SECTION},
		{BFI_H_SECTION_COUNT, 4, 1, BFI_E_RESERVED}, /* entry 1 is now nonzero padding */
		{BFI_H_TABLE_OFFSET, 8, 256, BFI_E_BAD_SECTION},
		{BFI_H_COMPAT, 8, 1ull << 40, 0}, /* unknown compatible flags are fine */
		/* table entry 0 (flat) */
		{BFI_HEADER_SIZE + 0, 4, 99, BFI_E_NO_LAYOUT},   /* unknown kind, REQUIRED */
		{BFI_HEADER_SIZE + 4, 2, 1, BFI_E_BAD_SECTION},  /* zstd with size == stored? */
		{BFI_HEADER_SIZE + 6, 2, 2, BFI_E_RESERVED},
		{BFI_HEADER_SIZE + 8, 8, 4097, BFI_E_BAD_SECTION},
		{BFI_HEADER_SIZE + 8, 8, ~0ull & ~4095ull, BFI_E_BAD_SECTION},
		{BFI_HEADER_SIZE + 16, 8, ~0ull, BFI_E_BAD_SECTION},
		{BFI_HEADER_SIZE + 40, 8, 1, BFI_E_RESERVED},
		/* table entry 1 (chunk sums) */
		{BFI_HEADER_SIZE + 64 + 8, 8, 4096, BFI_E_BAD_SECTION},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memcpy(b, index_bytes, index_len);
		uint8_t *p = b + cases[i].off;
		if (cases[i].width == 2)
			bfi_put16(p, (uint16_t)cases[i].value);
		else if (cases[i].width == 4)
			bfi_put32(p, (uint32_t)cases[i].value);
		else
			bfi_put64(p, cases[i].value);
		reseal_and_write(b);
		int rc = open_and_query(0);
		if (cases[i].off == BFI_HEADER_SIZE + 0) /* unknown required kind */
			EXPECT(rc == BFI_E_UNKNOWN_SECTION);
		else if (cases[i].off == BFI_HEADER_SIZE + 4)
			EXPECT(rc == BFI_E_ENCODING || rc == BFI_E_BAD_SECTION);
		else
			EXPECT_RC(rc, cases[i].want);
	}
	/* Unknown kind without REQUIRED is skipped, leaving no flat section. */
	memcpy(b, index_bytes, index_len);
	bfi_put32(b + BFI_HEADER_SIZE, 99);
	bfi_put16(b + BFI_HEADER_SIZE + 6, 0);
	reseal_and_write(b);
	EXPECT_RC(open_and_query(0), BFI_E_NO_LAYOUT);
	/* Flat descriptor fields: past every checksum that open checks. */
	uint64_t flat = bfi_get64(index_bytes + BFI_HEADER_SIZE + 8);
	struct {
		size_t off;
		int width;
		uint64_t value;
		int want;
	} desc[] = {
		/* descriptor */
		{0, 8, 0, BFI_E_BAD_LAYOUT},   {0, 8, 1ull << 33, BFI_E_BAD_LAYOUT},
		{0, 8, 9, BFI_E_BAD_LAYOUT},   {8, 4, 0, BFI_E_BAD_LAYOUT},
		{8, 4, 33, BFI_E_BAD_LAYOUT},  {12, 4, 2, BFI_E_INCOMPAT},
		{16, 4, 0, BFI_E_BAD_LAYOUT},  {16, 4, 2, BFI_E_BAD_LAYOUT},
		{16, 4, 1u << 30, BFI_E_BAD_LAYOUT}, {20, 4, 4, BFI_E_RESERVED},
		{24, 8, 128, BFI_E_BAD_LAYOUT}, {32, 8, 1, BFI_E_RESERVED},
		/* block entry 0 */
		{64 + 0, 8, 1, BFI_E_BAD_LAYOUT},   {64 + 8, 8, 7, BFI_E_BAD_LAYOUT},
		{64 + 8, 8, 0, BFI_E_BAD_LAYOUT},   {64 + 16, 8, 0, BFI_E_BAD_LAYOUT},
		/* m: rows past the section (a packed block's last line may hide a few more rows) */
		{64 + 16, 8, 1ull << 20, BFI_E_BAD_LAYOUT}, {64 + 16, 8, ~0ull, BFI_E_BAD_LAYOUT},
		/* row_bits: below the block's 8 sets, past whole lines, or a stride the size denies */
		{64 + 24, 8, 7, BFI_E_BAD_LAYOUT}, {64 + 24, 8, 1024, BFI_E_BAD_LAYOUT},
		{64 + 24, 8, 512, BFI_E_BAD_LAYOUT}, {64 + 32, 8, 256, BFI_E_BAD_LAYOUT},
		{64 + 40, 8, 64, BFI_E_BAD_LAYOUT},  {64 + 48, 8, 4096, BFI_E_BAD_LAYOUT},
		/* group: a run's block without the run's first, reserved bits */
		{64 + 56, 8, 1, BFI_E_BAD_LAYOUT}, {64 + 56, 8, 1ull << 40, BFI_E_RESERVED},
	};
	for (size_t i = 0; i < sizeof desc / sizeof desc[0]; i++) {
		memcpy(b, index_bytes, index_len);
		uint8_t *p = b + flat + desc[i].off;
		if (desc[i].width == 4)
			bfi_put32(p, (uint32_t)desc[i].value);
		else
			bfi_put64(p, desc[i].value);
		EXPECT(test_write_file(work_index, b, index_len) == 0);
		EXPECT_RC(open_and_query(0), desc[i].want);
		struct bfi_verify_report rep;
		EXPECT_RC(bfi_verify(work, &rep, NULL, NULL), desc[i].want);
	}
	free(b);
	restore();
}

static void test_random_spans(void)
{
	uint64_t s = 99;
	uint8_t *b = malloc(index_len);
	int missed = 0, opened = 0;
	for (int t = 0; t < 400; t++) {
		memcpy(b, index_bytes, index_len);
		size_t off = BFI_SECTION_ALIGN + (size_t)(test_rand(&s) % (index_len - BFI_SECTION_ALIGN));
		size_t len = 1 + (size_t)(test_rand(&s) % (t % 4 == 0 ? 4096 : 16));
		if (off + len > index_len)
			len = index_len - off;
		size_t first = SIZE_MAX;
		for (size_t i = 0; i < len; i++) {
			b[off + i] = (uint8_t)test_rand(&s);
			if (b[off + i] != index_bytes[off + i] && first == SIZE_MAX)
				first = off + i;
		}
		if (first == SIZE_MAX)
			continue; /* the random bytes happened to equal the old ones */
		EXPECT(test_write_file(work_index, b, index_len) == 0);
		int rc = open_and_query(0);
		EXPECT(rc == 0 || is_format_code(rc));
		opened += rc == 0;
		struct bfi_verify_report rep;
		int vrc = bfi_verify(work, &rep, NULL, NULL);
		if (!is_format_code(vrc)) {
			missed++;
			fprintf(stderr, "span %zu+%zu not caught by verify: %d\n", off, len, vrc);
			continue;
		}
		/* The region verify names must hold a changed byte. */
		int hit = 0;
		for (uint64_t i = rep.offset; i < rep.offset + (rep.length ? rep.length : 1) && i < index_len; i++)
			hit |= b[i] != index_bytes[i];
		if (!hit) {
			missed++;
			fprintf(stderr, "span %zu+%zu: verify named %llu+%llu, which is intact\n", off,
			        len, (unsigned long long)rep.offset, (unsigned long long)rep.length);
		}
	}
	printf("random spans: %d of 400 still opened (data damage), all caught by verify\n", opened);
	EXPECT(missed == 0);
	EXPECT(opened > 0);
	free(b);
	restore();
}

static void test_catalog_damage(void)
{
	uint64_t s = 5;
	uint8_t *c = malloc(catalog_len);
	for (int t = 0; t < 200; t++) {
		memcpy(c, catalog_bytes, catalog_len);
		size_t off = (size_t)(test_rand(&s) % catalog_len);
		c[off] ^= (uint8_t)(1 + test_rand(&s) % 255);
		EXPECT(test_write_file(work_catalog, c, catalog_len) == 0);
		EXPECT_RC(open_and_query(0), BFI_E_CATALOG_MISMATCH);
		EXPECT_RC(open_and_query(BFI_OPEN_NO_CATALOG), 0);
		struct bfi_verify_report rep;
		EXPECT_RC(bfi_verify(work, &rep, NULL, NULL), BFI_E_CATALOG_MISMATCH);
		EXPECT(rep.file && strcmp(rep.file, "catalog.mdb") == 0);
	}
	EXPECT(test_write_file(work_catalog, catalog_bytes, catalog_len / 2) == 0);
	EXPECT_RC(open_and_query(0), BFI_E_CATALOG_MISMATCH);
	free(c);
	restore();
}

static void test_foreign_catalog(void)
{
	char other[4200], p[4300];
	snprintf(other, sizeof other, "%s/other", test_tmpdir());
	EXPECT_RC(build_small(other, "other", 8), 0);
	snprintf(p, sizeof p, "%s/catalog.mdb", other);
	size_t len;
	uint8_t *c = test_read_file(p, &len);
	EXPECT(c != NULL);
	EXPECT(test_write_file(work_catalog, c, len) == 0);
	EXPECT_RC(open_and_query(0), BFI_E_CATALOG_MISMATCH);
	/* Even trusted, the snapshot id must match. */
	EXPECT_RC(open_and_query(BFI_OPEN_TRUSTED), BFI_E_CATALOG_MISMATCH);
	free(c);
	unlink(work_catalog);
	EXPECT_RC(open_and_query(0), -ENOENT);
	EXPECT_RC(open_and_query(BFI_OPEN_NO_CATALOG), 0);
	restore();
	EXPECT_RC(open_and_query(0), 0);
	struct bfi_verify_report rep;
	EXPECT_RC(bfi_verify(work, &rep, NULL, NULL), 0);
}

static void test_not_a_snapshot(void)
{
	bfi_snapshot *s = NULL;
	char p[4300];
	EXPECT_RC(bfi_open("/nonexistent/bfi", 0, &s), -ENOENT);
	EXPECT(s == NULL);
	snprintf(p, sizeof p, "%s/plainfile", test_tmpdir());
	EXPECT(test_write_file(p, "hello", 5) == 0);
	EXPECT_RC(bfi_open(p, 0, &s), BFI_E_PACK); /* a file: only a pack could be one */
	EXPECT_RC(bfi_open(NULL, 0, &s), BFI_E_INVALID);
	/* A directory whose index.bfi is some other file. */
	uint8_t junk[8192];
	memset(junk, 'x', sizeof junk);
	EXPECT(test_write_file(work_index, junk, sizeof junk) == 0);
	EXPECT_RC(open_and_query(0), BFI_E_BAD_MAGIC);
	restore();
}

/* The plain section's descriptor fields, past every check behind a checksum. */
static void test_plain_fields(void)
{
	uint8_t *b = malloc(index_len);
	uint64_t plain = bfi_get64(index_bytes + BFI_HEADER_SIZE + BFI_ENTRY_SIZE + 8);
	EXPECT(bfi_get32(index_bytes + BFI_HEADER_SIZE + BFI_ENTRY_SIZE) == BFI_SEC_PLAIN);
	struct {
		size_t off;
		int width;
		uint64_t value;
		int want;
	} desc[] = {
		{0, 8, 601, BFI_E_BAD_LAYOUT}, /* disagrees with flat's N */
		{8, 8, 0, BFI_E_BAD_LAYOUT},   {8, 8, 1ull << 41, BFI_E_BAD_LAYOUT},
		{16, 4, 6, BFI_E_BAD_LAYOUT},  {20, 4, 7, BFI_E_INCOMPAT},
		{24, 8, 0, BFI_E_BAD_LAYOUT},  {32, 8, 0, BFI_E_BAD_LAYOUT},
		{40, 8, 1, BFI_E_RESERVED},
	};
	for (size_t i = 0; i < sizeof desc / sizeof desc[0]; i++) {
		memcpy(b, index_bytes, index_len);
		if (desc[i].width == 4)
			bfi_put32(b + plain + desc[i].off, (uint32_t)desc[i].value);
		else
			bfi_put64(b + plain + desc[i].off, desc[i].value);
		EXPECT(test_write_file(work_index, b, index_len) == 0);
		EXPECT_RC(open_and_query(0), desc[i].want);
	}
	free(b);
	restore();
	EXPECT_RC(open_and_query(0), 0);
}

/*
 * A set bit in a packed block's trailing zeros (after its last row),
 * resealed so that every checksum passes: open answers, and verify names
 * the byte.
 */
static void test_packed_padding(void)
{
	uint8_t *b = malloc(index_len);
	if (b == NULL)
		return;
	memcpy(b, index_bytes, index_len);
	uint64_t flat = bfi_get64(index_bytes + BFI_HEADER_SIZE + 8);
	const uint8_t *e = index_bytes + flat + BFI_FLAT_DESC_SIZE; /* block 0 */
	uint64_t m = bfi_get64(e + 16), row_bits = bfi_get64(e + 24);
	uint64_t rows = flat + bfi_get64(e + 32), bit = m * row_bits + 3;
	EXPECT(!bfi_rows_lined(row_bits) && bfi_get64(e + 8) == row_bits);
	b[rows + bit / 8] |= (uint8_t)(1u << (bit % 8));
	test_reseal_index(b, index_len);
	EXPECT(test_write_file(work_index, b, index_len) == 0);
	EXPECT_RC(open_and_query(0), 0);
	struct bfi_verify_report rep;
	EXPECT_RC(bfi_verify(work, &rep, NULL, NULL), BFI_E_BAD_LAYOUT);
	EXPECT(rep.offset == rows + bit / 8);
	free(b);
	restore();
}

static void test_rich_shape(void)
{
	struct bfi_verify_report rep;
	EXPECT_RC(bfi_verify(good, &rep, NULL, NULL), 0);
	bfi_snapshot *s;
	EXPECT_RC(bfi_open(good, 0, &s), 0);
	if (s) {
		struct bfi_info in;
		struct bfi_block_info b1;
		bfi_info(s, &in);
		struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
		EXPECT(lf.u.flat.blocks == 2 && in.layouts == (BFI_LAYOUT_FLAT | BFI_LAYOUT_PLAIN | BFI_LAYOUT_RAMBO | BFI_LAYOUT_TREE));
		EXPECT_RC(bfi_block(s, 1, &b1), 0);
		EXPECT(b1.prefilter_bits > 0);
		/* line pre-filters, the default, whole lines; block 1's sets packed;
		 * minor 3 with the tree's line pre-filter, else 1 exactly when
		 * rambo's rows are narrow (32 cells or fewer) */
		struct bfi_layout_info lr = test_layout(s, BFI_LAYOUT_RAMBO);
		struct bfi_layout_info lt = test_layout(s, BFI_LAYOUT_TREE);
		unsigned minor = lt.u.tree.prefilter_bits ? 3u : lr.u.rambo.cells <= 32 ? 1u : 0u;
		EXPECT(in.major == 3 && in.minor == minor && lf.u.flat.line_prefilters &&
		       b1.prefilter_bits % 512 == 0 && b1.n_sets >= 88 && b1.n_sets < 512 && b1.row_bits == b1.n_sets);
		bfi_close(&s);
	}
}

/*
 * A line pre-filter must be whole lines: one a bit short would put a key's
 * line past the end. Without the flag the same width is a classic filter.
 */
static void test_line_prefilter(void)
{
	uint8_t *b = malloc(index_len);
	uint64_t flat = bfi_get64(index_bytes + BFI_HEADER_SIZE + 8);
	uint8_t *e = b + flat + BFI_FLAT_DESC_SIZE + BFI_BLOCK_ENTRY_SIZE; /* block 1 */
	for (int flag = 1; flag >= 0; flag--) {
		memcpy(b, index_bytes, index_len);
		EXPECT(bfi_get32(b + flat + 20) & BFI_FLATF_LINE_PRE);
		if (!flag)
			bfi_put32(b + flat + 20, bfi_get32(b + flat + 20) & ~BFI_FLATF_LINE_PRE);
		bfi_put64(e + 40, bfi_get64(e + 40) - 1);
		EXPECT(test_write_file(work_index, b, index_len) == 0);
		EXPECT_RC(open_and_query(0), flag ? BFI_E_BAD_LAYOUT : 0);
	}
	free(b);
	restore();
}

static int load(void)
{
	if (build_small(good, "set", rich ? 600 : 8) || build_small(work, "set", rich ? 600 : 8))
		return -1;
	char p[4300];
	free(index_bytes);
	free(catalog_bytes);
	snprintf(p, sizeof p, "%s/index.bfi", good);
	index_bytes = test_read_file(p, &index_len);
	snprintf(p, sizeof p, "%s/catalog.mdb", good);
	catalog_bytes = test_read_file(p, &catalog_len);
	return index_bytes && catalog_bytes ? 0 : -1;
}

int main(void)
{
	snprintf(good, sizeof good, "%s/good", test_tmpdir());
	snprintf(work, sizeof work, "%s/work", test_tmpdir());
	snprintf(work_index, sizeof work_index, "%s/index.bfi", work);
	snprintf(work_catalog, sizeof work_catalog, "%s/catalog.mdb", work);
	if (load()) {
		printf("FAIL corrupt: build\n");
		return 1;
	}
	test_run("corrupt: truncation at every length", test_truncate_every_length);
	test_run("corrupt: every header, table and padding byte flipped", test_flip_header_and_table);
	test_run("corrupt: resealed header, table and descriptor fields", test_resealed_fields);
	test_run("corrupt: a packed block's trailing bits, set and resealed, caught by verify",
	         test_packed_padding);
	test_run("corrupt: random spans in the data caught by verify", test_random_spans);
	test_run("corrupt: damaged catalog refused", test_catalog_damage);
	test_run("corrupt: catalog of another snapshot refused", test_foreign_catalog);
	test_run("corrupt: paths that are not snapshots", test_not_a_snapshot);
	rich = 1;
	if (load()) {
		printf("FAIL corrupt: build (blocks, pre-filters, plain)\n");
		return 1;
	}
	test_run("corrupt (blocks, pre-filters, plain, rambo): the good file has them all",
	         test_rich_shape);
	test_run("corrupt (blocks, pre-filters, plain): truncation", test_truncate_every_length);
	test_run("corrupt (blocks, pre-filters, plain): header, table and padding flips",
	         test_flip_header_and_table);
	test_run("corrupt (blocks, pre-filters, plain): plain descriptor fields", test_plain_fields);
	test_run("corrupt (blocks, pre-filters, plain): a line pre-filter short of a line",
	         test_line_prefilter);
	test_run("corrupt (blocks, pre-filters, plain): random spans caught by verify",
	         test_random_spans);
	free(index_bytes);
	free(catalog_bytes);
	return test_exit();
}
