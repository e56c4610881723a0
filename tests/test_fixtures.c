/*
 * test_fixtures.c - the checked-in corrupt-file corpus (tests/corrupt/).
 * tests/corrupt/good/ is a small valid snapshot (flat, rambo and tree),
 * of format 3.0 with a rambo layout of 4 cells in 3.0's 8-byte rows: it
 * also checks that this reader reads 3.0 files (--write would make it 3.1).
 * Every other file there is a damaged copy of its index.bfi (NAME.index)
 * or catalog.mdb (NAME.catalog), whose name starts with the error code it
 * must produce, e.g. BAD_MAGIC.first-byte.index; a NAME.pair directory
 * holds both files, for a crafted catalog with an index resealed to it. Each is put beside the
 * good other file and opened (and queried); codes that only a deep verify
 * can see are checked with bfi_verify. `test_fixtures --write` rebuilds the
 * corpus from the code below; run it when the format changes.
 */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include <xxhash.h>

#include "bfi_pack.h"
#include "format.h"
#include "test.h"

#define DIR_ "tests/corrupt"

static const struct {
	const char *name;
	int code;
} codes[] = {
	{"TRUNCATED", BFI_E_TRUNCATED},         {"BAD_MAGIC", BFI_E_BAD_MAGIC},
	{"BAD_TRAILER", BFI_E_BAD_TRAILER},     {"VERSION", BFI_E_VERSION},
	{"INCOMPAT", BFI_E_INCOMPAT},           {"RESERVED", BFI_E_RESERVED},
	{"HEADER_CHECKSUM", BFI_E_HEADER_CHECKSUM}, {"TABLE_CHECKSUM", BFI_E_TABLE_CHECKSUM},
	{"BAD_SECTION", BFI_E_BAD_SECTION},     {"BAD_LAYOUT", BFI_E_BAD_LAYOUT},
	{"DATA_CHECKSUM", BFI_E_DATA_CHECKSUM}, {"SIZE", BFI_E_SIZE},
	{"CATALOG_MISMATCH", BFI_E_CATALOG_MISMATCH}, {"CATALOG", BFI_E_CATALOG},
	{"PACK", BFI_E_PACK}, {"PACK_TRUNCATED", BFI_E_PACK_TRUNCATED},
	{"PACK_FRAME", BFI_E_PACK_FRAME},
};

static int code_of(const char *file)
{
	for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
		size_t n = strlen(codes[i].name);
		if (!strncmp(file, codes[i].name, n) && file[n] == '.')
			return codes[i].code;
	}
	return 1; /* unknown: fails every comparison */
}

/* Open a snapshot made of index and catalog bytes; query; deep-verify. */
static int try_files(const uint8_t *idx, size_t il, const uint8_t *cat, size_t cl, int *verify_rc)
{
	char snap[4300], p[4400];
	snprintf(snap, sizeof snap, "%s/try", test_tmpdir());
	mkdir(snap, 0755);
	snprintf(p, sizeof p, "%s/index.bfi", snap);
	if (test_write_file(p, idx, il) != 0)
		return -1;
	snprintf(p, sizeof p, "%s/catalog.mdb", snap);
	if (test_write_file(p, cat, cl) != 0)
		return -1;
	bfi_snapshot *s;
	int rc = bfi_open(snap, 0, &s);
	if (rc == 0) {
		bfi_result *r;
		if (bfi_result_create(&r) == 0) {
			static const unsigned lay[3] = {BFI_LAYOUT_FLAT, BFI_LAYOUT_RAMBO, BFI_LAYOUT_TREE};
			for (int l = 0; l < 3 && rc == 0; l++)
				for (int k = 0; k < 40 && rc == 0; k++) {
					char key[16];
					rc = bfi_query_key_layout(s, lay[l], key, (size_t)snprintf(key, sizeof key, "k%d", k), r);
				}
			bfi_result_destroy(&r);
		}
		bfi_close(&s);
	}
	struct bfi_verify_report rep;
	*verify_rc = bfi_verify(snap, &rep, NULL, NULL);
	return rc;
}

static uint8_t *good_index, *good_catalog;
static size_t good_il, good_cl;

static int load_good(void)
{
	good_index = test_read_file(DIR_ "/good/index.bfi", &good_il);
	good_catalog = test_read_file(DIR_ "/good/catalog.mdb", &good_cl);
	return good_index && good_catalog ? 0 : -1;
}

static void test_good(void)
{
	EXPECT_RC(load_good(), 0);
	if (!good_index)
		return;
	int vrc;
	EXPECT_RC(try_files(good_index, good_il, good_catalog, good_cl, &vrc), 0);
	EXPECT_RC(vrc, 0);
}

static void test_bad(void)
{
	if (!good_index)
		return;
	DIR *d = opendir(DIR_);
	EXPECT(d != NULL);
	if (!d)
		return;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		const char *dot = strrchr(e->d_name, '.');
		if (e->d_name[0] == '.' || !dot || (strcmp(dot, ".index") && strcmp(dot, ".catalog")))
			continue;
		char p[4300];
		snprintf(p, sizeof p, DIR_ "/%s", e->d_name);
		size_t len;
		uint8_t *b = test_read_file(p, &len);
		EXPECT(b != NULL);
		if (!b)
			continue;
		int is_index = !strcmp(dot, ".index"), vrc;
		int rc = is_index ? try_files(b, len, good_catalog, good_cl, &vrc)
		                  : try_files(good_index, good_il, b, len, &vrc);
		int want = code_of(e->d_name);
		/* open (or a query) must refuse it with its code, or, for damage only
		 * a deep verify can see, verify must */
		int ok = want == BFI_E_DATA_CHECKSUM ? rc == 0 && vrc == want : rc == want && vrc != 0;
		if (!ok)
			fprintf(stderr, "%s: open/query gave %d (%s), verify %d; want %d\n", e->d_name, rc,
			        bfi_strerror(rc), vrc, want);
		EXPECT(ok);
		free(b);
		n++;
	}
	closedir(d);
	/* pairs: a crafted catalog with an index resealed to match it */
	d = opendir(DIR_);
	while (d && (e = readdir(d)) != NULL) {
		const char *dot = strrchr(e->d_name, '.');
		if (e->d_name[0] == '.' || !dot || strcmp(dot, ".pair"))
			continue;
		char pi[4300], pc[4300];
		snprintf(pi, sizeof pi, DIR_ "/%s/index.bfi", e->d_name);
		snprintf(pc, sizeof pc, DIR_ "/%s/catalog.mdb", e->d_name);
		size_t il, cl;
		uint8_t *bi = test_read_file(pi, &il), *bc = test_read_file(pc, &cl);
		EXPECT(bi && bc);
		int vrc, rc = bi && bc ? try_files(bi, il, bc, cl, &vrc) : 0;
		if (rc != code_of(e->d_name))
			fprintf(stderr, "%s: open gave %d (%s)\n", e->d_name, rc, bfi_strerror(rc));
		EXPECT_RC(rc, code_of(e->d_name));
		free(bi);
		free(bc);
		n++;
	}
	if (d)
		closedir(d);
	printf("%d corrupt fixtures, each refused with the code its name gives\n", n);
	EXPECT(n >= 20);
}

/* --write: the corpus, from a deterministic build and the damage below. */
static int put(const char *name, const uint8_t *b, size_t len)
{
	char p[4300];
	snprintf(p, sizeof p, DIR_ "/%s", name);
	return test_write_file(p, b, len);
}

static void reseal(uint8_t *b)
{
	bfi_put64(b + BFI_H_TABLE_CHECKSUM,
	          bfi_checksum64(b + BFI_HEADER_SIZE, (size_t)bfi_get32(b + BFI_H_SECTION_COUNT) * 64));
	bfi_put64(b + BFI_H_CHECKSUM, bfi_checksum64(b, BFI_H_CHECKSUM));
}

static int build(const char *out, const char *prefix)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_FLAT | BFI_BUILD_PLAIN | BFI_BUILD_RAMBO | BFI_BUILD_TREE;
	o.fanout = 4;
	o.all_levels = 1;
	o.cells = 4;
	o.reps = 2;
	o.memory = 16u << 20;
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	for (int s = 0; rc == 0 && s < 12; s++) {
		char name[32], key[16];
		uint32_t ord;
		snprintf(name, sizeof name, "%s%d", prefix, s);
		rc = bfi_writer_set(w, name, strlen(name), &ord);
		for (int k = s; rc == 0 && k < s + 8; k++)
			rc = bfi_writer_key(w, ord, key, (size_t)snprintf(key, sizeof key, "k%d", k));
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, out, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

static int write_corpus(void)
{
	mkdir(DIR_, 0755);
	if (build(DIR_ "/good", "set") != 0 || load_good() != 0)
		return 1;
	uint8_t *b = malloc(good_il + 64);
	size_t L = good_il;
	struct bfi_section sec[8];
	uint32_t ns = bfi_get32(good_index + BFI_H_SECTION_COUNT);
	for (uint32_t i = 0; i < ns && i < 8; i++)
		bfi_section_decode(good_index + BFI_HEADER_SIZE + i * BFI_ENTRY_SIZE, &sec[i]);
	int rc = 0;
#define FRESH() memcpy(b, good_index, L)
	/* truncation inside each structure */
	rc |= put("TRUNCATED.inside-header.index", good_index, 100);
	rc |= put("TRUNCATED.inside-section-table.index", good_index, BFI_HEADER_SIZE + 40);
	for (uint32_t i = 0; i < ns && i < 8; i++) {
		static const char *const kinds[] = {"", "flat", "chunksums", "plain", "rambo", "tree"};
		char name[64];
		snprintf(name, sizeof name, "TRUNCATED.inside-section-%u-%s.index", i,
		         sec[i].kind < 6 ? kinds[sec[i].kind] : "unknown");
		rc |= put(name, good_index, (size_t)(sec[i].offset + sec[i].size / 2));
	}
	rc |= put("TRUNCATED.one-byte-short.index", good_index, L - 1);
	FRESH();
	b[0] ^= 0x20;
	rc |= put("BAD_MAGIC.first-byte.index", b, L);
	FRESH();
	b[L - 1] ^= 0x20;
	rc |= put("BAD_TRAILER.last-byte.index", b, L);
	FRESH();
	bfi_put16(b + BFI_H_MAJOR, BFI_VERSION_MAJOR + 1);
	reseal(b);
	rc |= put("VERSION.major-plus-one.index", b, L);
	FRESH();
	bfi_put16(b + BFI_H_MAJOR, 2); /* format 2 padded every row to whole lines */
	bfi_put16(b + BFI_H_MINOR, 2);
	reseal(b);
	rc |= put("VERSION.format-2.2.index", b, L);
	FRESH();
	bfi_put64(b + BFI_H_INCOMPAT, 1ull << 33);
	reseal(b);
	rc |= put("INCOMPAT.unknown-flag.index", b, L);
	FRESH();
	b[BFI_H_RESERVED + 3] = 1;
	reseal(b);
	rc |= put("RESERVED.header-reserved-byte.index", b, L);
	FRESH();
	b[BFI_H_FILE_SIZE] ^= 1;
	rc |= put("HEADER_CHECKSUM.file-size-not-resealed.index", b, L);
	FRESH();
	b[BFI_HEADER_SIZE + 16] ^= 1; /* section 0's size, table checksum left */
	bfi_put64(b + BFI_H_CHECKSUM, bfi_checksum64(b, BFI_H_CHECKSUM));
	rc |= put("TABLE_CHECKSUM.section-size-not-resealed.index", b, L);
	FRESH();
	bfi_put64(b + BFI_HEADER_SIZE + BFI_ENTRY_SIZE + 8, sec[0].offset); /* 1 overlaps 0 */
	reseal(b);
	rc |= put("BAD_SECTION.overlapping.index", b, L);
	FRESH();
	bfi_put64(b + BFI_HEADER_SIZE + 8, (uint64_t)L * 4096); /* past the end */
	reseal(b);
	rc |= put("BAD_SECTION.out-of-range.index", b, L);
	FRESH();
	bfi_put64(b + BFI_HEADER_SIZE + 16, UINT64_MAX - 4095); /* offset + size overflows */
	reseal(b);
	rc |= put("BAD_SECTION.size-overflows.index", b, L);
	/* flat descriptor: block 0's rows past the file, or a stride that is not allowed */
	uint64_t flat = sec[0].offset; /* the flat section comes first */
	uint64_t table = flat + bfi_get64(good_index + flat + 24); /* its block table */
	uint64_t sets0 = bfi_get64(good_index + table + 8);
	FRESH();
	bfi_put64(b + table + 16, (uint64_t)1 << 40); /* block 0's m: m x row_bits past the file */
	reseal(b);
	rc |= put("BAD_LAYOUT.block-m-times-row-bits.index", b, L);
	FRESH();
	bfi_put64(b + table + 24, sets0 - 1); /* rows narrower than the block's sets */
	reseal(b);
	rc |= put("BAD_LAYOUT.block-row-bits-below-sets.index", b, L);
	FRESH();
	bfi_put64(b + table + 24, bfi_bits_bytes(sets0) * 8 + 512); /* padded past whole lines */
	reseal(b);
	rc |= put("BAD_LAYOUT.block-row-bits-past-lines.index", b, L);
	FRESH();
	b[flat + bfi_get64(good_index + table + 32) + 3] ^= 0x01; /* a bit of block 0's first row */
	rc |= put("DATA_CHECKSUM.a-row-bit.index", b, L);
	FRESH();
	memset(b + L, 0, 64);
	rc |= put("SIZE.bytes-after-the-trailer.index", b, L + 64);
	/* catalogs: damaged, from another snapshot, and crafted past the digest */
	uint8_t *c = malloc(good_cl);
	memcpy(c, good_catalog, good_cl);
	c[good_cl / 2] ^= 0x40;
	rc |= put("CATALOG_MISMATCH.flipped-byte.catalog", c, good_cl);
	rc |= put("CATALOG_MISMATCH.shorter.catalog", good_catalog, good_cl - 4096);
	free(c);
	char other[4300], p[4400];
	snprintf(other, sizeof other, "%s/other", test_tmpdir());
	if (build(other, "other") == 0) {
		snprintf(p, sizeof p, "%s/catalog.mdb", other);
		size_t ol;
		uint8_t *oc = test_read_file(p, &ol);
		if (oc)
			rc |= put("CATALOG_MISMATCH.another-snapshot.catalog", oc, ol);
		free(oc);
	}
	/* a catalog that crashed LMDB (found by fuzz_catalog), index resealed to it */
	size_t cl;
	uint8_t *crafted = test_read_file("tests/fuzz/corpus/catalog/regress-sigbus-page-past-end.mdb", &cl);
	if (crafted) {
		FRESH();
		XXH128_hash_t h = XXH3_128bits(crafted, cl);
		bfi_put64(b + BFI_H_CATALOG_DIGEST, h.low64);
		bfi_put64(b + BFI_H_CATALOG_DIGEST + 8, h.high64);
		bfi_put64(b + BFI_H_CATALOG_SIZE, cl);
		reseal(b);
		mkdir(DIR_ "/CATALOG.pages-past-the-end.pair", 0755);
		rc |= put("CATALOG.pages-past-the-end.pair/index.bfi", b, L);
		rc |= put("CATALOG.pages-past-the-end.pair/catalog.mdb", crafted, cl);
		free(crafted);
	} else {
		rc = 1;
	}
	free(b);
	return rc ? 1 : 0;
}


/*
 * Packs (spec/format.md, "Packs"): good.pack is the good snapshot packed
 * in frames of 4 KiB; every other NAME.pack is a damaged copy, refused by
 * bfi_unpack with the code its name gives, leaving nothing behind.
 * `test_fixtures --write-packs` rewrites them from good/.
 */
#define GOOD_PACK DIR_ "/good.pack"

static int unpack_to(const char *pack, char *out, size_t len)
{
	snprintf(out, len, "%s/unpacked", test_tmpdir());
	char err[4600], warn[4600];
	return bfi_unpack(pack, out, NULL, err, sizeof err, warn, sizeof warn);
}

static void test_packs(void)
{
	char out[4300], p[4400];
	EXPECT_RC(unpack_to(GOOD_PACK, out, sizeof out), 0);
	size_t il, cl;
	snprintf(p, sizeof p, "%s/index.bfi", out);
	uint8_t *bi = test_read_file(p, &il);
	snprintf(p, sizeof p, "%s/catalog.mdb", out);
	uint8_t *bc = test_read_file(p, &cl);
	EXPECT(bi && bc && il == good_il && cl == good_cl && !memcmp(bi, good_index, il) &&
	       !memcmp(bc, good_catalog, cl));
	free(bi);
	free(bc);
	test_rm_rf(out);
	DIR *d = opendir(DIR_);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)) != NULL) {
		const char *dot = strrchr(e->d_name, '.');
		if (e->d_name[0] == '.' || !dot || strcmp(dot, ".pack") || !strcmp(e->d_name, "good.pack"))
			continue;
		snprintf(p, sizeof p, DIR_ "/%s", e->d_name);
		int rc = unpack_to(p, out, sizeof out);
		struct stat st;
		if (rc != code_of(e->d_name) || lstat(out, &st) == 0)
			fprintf(stderr, "%s: unpack gave %d (%s)\n", e->d_name, rc, bfi_strerror(rc));
		EXPECT_RC(rc, code_of(e->d_name));
		struct bfi_verify_report rep;
		EXPECT_RC(bfi_verify(p, &rep, NULL, NULL), code_of(e->d_name));
		EXPECT(lstat(out, &st) != 0);
		n++;
	}
	if (d)
		closedir(d);
	printf("%d damaged packs, each refused with the code its name gives\n", n);
	EXPECT(n >= 6);
}

static int write_packs(void)
{
	struct bfi_pack_options o;
	bfi_pack_options_init(&o);
	o.frame = 4096;
	o.threads = 1;
	char err[4600];
	if (load_good() != 0 || bfi_pack(DIR_ "/good", GOOD_PACK, &o, err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	size_t L;
	uint8_t *g = test_read_file(GOOD_PACK, &L), *b = malloc(L + 1);
	if (!g || !b)
		return 1;
	int rc = 0;
	uint32_t n = bfi_get32(g + L - 9);
	size_t table = L - (8 + 12 * (size_t)n + 9), c0 = bfi_get32(g + table + 8);
	memcpy(b, g, L);
	b[L - 1] ^= 0xff;
	rc |= put("PACK.no-seek-table.pack", b, L);
	memcpy(b, g, L);
	b[L - 5] |= 0x01;
	rc |= put("PACK.descriptor-reserved-bit.pack", b, L);
	memcpy(b, g, table);
	b[table] = 0; /* a byte between the frames and the table */
	memcpy(b + table + 1, g + table, L - table);
	rc |= put("PACK.byte-before-the-table.pack", b, L + 1);
	memcpy(b, g, L);
	b[0] = 0;
	rc |= put("PACK.no-zstd-frame-first.pack", b, L);
	memcpy(b, g, c0 / 2); /* a byte of the first frame gone */
	memcpy(b + c0 / 2, g + c0 / 2 + 1, L - c0 / 2 - 1);
	rc |= put("PACK_TRUNCATED.byte-of-a-frame-gone.pack", b, L - 1);
	memcpy(b, g, table - c0); /* the last frame gone with its bytes */
	memcpy(b + table - c0, g + table, L - table);
	rc |= put("PACK_TRUNCATED.last-frame-gone.pack", b, L - c0);
	memcpy(b, g, L);
	b[c0 / 2] ^= 0x55;
	rc |= put("PACK_FRAME.byte-in-the-first-frame.pack", b, L);
	memcpy(b, g, L);
	b[table + 8 + 8] ^= 0x01; /* the first frame's checksum in the table */
	rc |= put("PACK_FRAME.checksum-in-the-table.pack", b, L);
	memcpy(b, g, L);
	b[table + 8 + 4] ^= 0x01; /* its decompressed size */
	rc |= put("PACK_FRAME.size-in-the-table.pack", b, L);
	free(g);
	free(b);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--write-packs")) {
		int rc = write_packs();
		test_cleanup();
		return rc;
	}
	if (argc > 1 && !strcmp(argv[1], "--write")) {
		int rc = write_corpus();
		test_cleanup();
		return rc;
	}
	test_run("fixtures: the good snapshot opens, answers and verifies", test_good);
	test_run("fixtures: every corrupt fixture gets the code its name gives", test_bad);
	test_run("fixtures: the good pack unpacks byte for byte; every damaged one gets its code "
	         "from unpack and verify",
	         test_packs);
	test_cleanup();
	return test_exit();
}
