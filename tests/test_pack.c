/*
 * test_pack.c - packs (spec/format.md, "Packs"): the seek table's test
 * vector; a snapshot packed in frames of 4 KiB at 1 and 2 threads (the
 * same bytes) and unpacked byte for byte, over an existing snapshot too;
 * every truncation and a tampered byte at every 7th offset refused with a
 * pack error (or, for a byte zstd never reads, the same files), leaving
 * nothing behind; packs made here with members a pack must not hold
 * (a name with "..", a link, an extra member, a foreign zstd file)
 * refused; --memory below one thread's need refused.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "archive_dl.h"
#include "bfi_pack.h"
#include "format.h"
#include "test.h"

static char snap[512], packf[512], out[512];

static size_t word_key(uint32_t set, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "w%u-%u", set, i * 7 + set % 3);
}

static int same_file(const char *a, const char *b)
{
	size_t la, lb;
	uint8_t *pa = test_read_file(a, &la), *pb = test_read_file(b, &lb);
	int same = pa && pb && la == lb && memcmp(pa, pb, la) == 0;
	free(pa);
	free(pb);
	return same;
}

static int same_snapshot(const char *a, const char *b)
{
	char fa[700], fb[700];
	snprintf(fa, sizeof fa, "%s/" BFI_INDEX_NAME, a);
	snprintf(fb, sizeof fb, "%s/" BFI_INDEX_NAME, b);
	int same = same_file(fa, fb);
	snprintf(fa, sizeof fa, "%s/" BFI_CATALOG_NAME, a);
	snprintf(fb, sizeof fb, "%s/" BFI_CATALOG_NAME, b);
	return same && same_file(fa, fb);
}

static int is_pack_error(int rc)
{
	return rc == BFI_E_PACK || rc == BFI_E_PACK_TRUNCATED || rc == BFI_E_PACK_FRAME;
}

static int unpack(const char *p, const char *o)
{
	char err[4600], warn[4600];
	int rc = bfi_unpack(p, o, NULL, err, sizeof err, warn, sizeof warn);
	if (rc && getenv("BFI_TEST_VERBOSE"))
		fprintf(stderr, "unpack: %s\n", err);
	return rc;
}

static int pack(const char *src, const char *o, unsigned threads, uint32_t frame)
{
	struct bfi_pack_options po;
	bfi_pack_options_init(&po);
	po.threads = threads;
	po.frame = frame;
	char err[4600];
	int rc = bfi_pack(src, o, &po, err, sizeof err);
	if (rc)
		fprintf(stderr, "pack: %s\n", err);
	return rc;
}

/* Nothing but the files the test made in the directory: no output, no staging left. */
static int only_inputs(void)
{
	struct stat st;
	if (lstat(out, &st) == 0)
		return 0;
	char cmd[700];
	snprintf(cmd, sizeof cmd, "ls -a %s | grep -q tmp-", test_tmpdir());
	return system(cmd) != 0;
}

static void test_vector(void)
{
	static const uint8_t want[41] = {
		0x5e, 0x2a, 0x4d, 0x18, 0x21, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x40, 0x00, 0x67, 0x45, 0x23, 0x01, 0x32, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00,
		0xef, 0xcd, 0xab, 0x89, 0x02, 0x00, 0x00, 0x00, 0x80, 0xb1, 0xea, 0x92, 0x8f};
	struct bfi_pack_frame f[2] = {{0, 0, 100, 4194304, 0x01234567}, {0, 0, 50, 1024, 0x89abcdef}};
	struct bfi_pack_table t = {2, f, 0, 0};
	uint8_t got[41];
	EXPECT(bfi_pack_table_size(2) == sizeof got);
	bfi_pack_table_encode(got, &t);
	EXPECT(memcmp(got, want, sizeof want) == 0);
	struct bfi_pack_table d;
	uint64_t need;
	const char *what;
	EXPECT_RC(bfi_pack_table_decode(want, sizeof want, 191, &d, &need, &what), 0);
	EXPECT(d.n == 2 && d.f[1].at == 100 && d.f[1].from == 4194304 && d.tar_size == 4195328 &&
	       d.f[1].checksum == 0x89abcdef && d.table_at == 150);
	free(d.f);
	EXPECT_RC(bfi_pack_table_decode(want, sizeof want, 190, &d, &need, &what),
	          BFI_E_PACK_TRUNCATED);
	EXPECT_RC(bfi_pack_table_decode(want, sizeof want, 192, &d, &need, &what), BFI_E_PACK);
	/* a short tail asks for the whole table */
	EXPECT_RC(bfi_pack_table_decode(want + 32, 9, 191, &d, &need, &what), 0);
	EXPECT(d.n == 0 && need == 41);
	uint8_t bad[41];
	memcpy(bad, want, sizeof bad);
	bad[36] = 0x81; /* a reserved bit of the descriptor */
	EXPECT_RC(bfi_pack_table_decode(bad, sizeof bad, 191, &d, &need, &what), BFI_E_PACK);
	memcpy(bad, want, sizeof bad);
	bad[10] = 0x10; /* a frame of 1 MiB more than 64 MiB of content */
	bad[11] = 0x04;
	EXPECT_RC(bfi_pack_table_decode(bad, sizeof bad, 191, &d, &need, &what), BFI_E_PACK);
}

static void test_roundtrip(void)
{
	EXPECT_RC(pack(snap, packf, 1, 4096), 0);
	char two[600];
	snprintf(two, sizeof two, "%s/two.pack", test_tmpdir());
	EXPECT_RC(pack(snap, two, 2, 4096), 0);
	EXPECT(same_file(packf, two)); /* the same bytes at any thread count */
	size_t len;
	uint8_t *p = test_read_file(packf, &len);
	EXPECT(p && len > 41 && bfi_get32(p) == BFI_ZSTD_MAGIC);
	free(p);
	EXPECT_RC(unpack(packf, out), 0);
	EXPECT(same_snapshot(snap, out));
	struct stat st;
	char f[700];
	snprintf(f, sizeof f, "%s/" BFI_INDEX_NAME, out);
	EXPECT(stat(f, &st) == 0 && (st.st_mode & 0777) == 0444);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(out, 0, &s), 0);
	bfi_close(&s);
	/* over a snapshot already there: swapped in; a pack replaces a pack, never another file */
	EXPECT_RC(unpack(two, out), 0);
	EXPECT(same_snapshot(snap, out));
	EXPECT_RC(pack(snap, two, 1, 1u << 20), 0);
	EXPECT_RC(pack(snap, f, 1, 4096), BFI_E_EXISTS);
	EXPECT(same_file(f, packf) == 0);
	test_rm_rf(out);
	test_rm_rf(two);
}

static void test_truncations(void)
{
	size_t len;
	uint8_t *p = test_read_file(packf, &len);
	EXPECT(p != NULL);
	char cut[600];
	snprintf(cut, sizeof cut, "%s/cut.pack", test_tmpdir());
	int bad = 0;
	for (size_t n = 0; p && n < len; n++) {
		test_write_file(cut, p, n);
		int rc = unpack(cut, out);
		struct bfi_verify_report rep;
		int vrc = bfi_verify(cut, &rep, NULL, NULL);
		if (!is_pack_error(rc) || !only_inputs() || !is_pack_error(vrc)) {
			if (bad++ < 5)
				fprintf(stderr, "truncated to %zu: %d (%s)\n", n, rc, bfi_strerror(rc));
			test_rm_rf(out);
		}
	}
	EXPECT(bad == 0);
	test_rm_rf(cut);
	free(p);
}

static void test_tampered(void)
{
	size_t len;
	uint8_t *p = test_read_file(packf, &len);
	EXPECT(p != NULL);
	char dam[600];
	snprintf(dam, sizeof dam, "%s/dam.pack", test_tmpdir());
	int bad = 0, refused = 0;
	for (size_t i = 0; p && i < len; i += 7) {
		p[i] ^= 0x10;
		test_write_file(dam, p, len);
		p[i] ^= 0x10;
		int rc = unpack(dam, out);
		if (rc == 0 && same_snapshot(snap, out)) {
			test_rm_rf(out); /* a bit zstd never reads: the same files */
			continue;
		}
		refused++;
		if (!is_pack_error(rc) || !only_inputs()) {
			if (bad++ < 5)
				fprintf(stderr, "byte %zu flipped: %d (%s)\n", i, rc, bfi_strerror(rc));
			test_rm_rf(out);
		}
	}
	EXPECT(bad == 0);
	EXPECT(refused > (int)(len / 7) * 9 / 10);
	test_rm_rf(dam);
	free(p);
}

/* Snapshot a's answers to every key of word_key, from b: the same sets, in order? */
static int same_answers(bfi_snapshot *a, bfi_snapshot *b)
{
	bfi_result *ra = NULL, *rb = NULL;
	int same = bfi_result_create(&ra) == 0 && bfi_result_create(&rb) == 0;
	for (uint32_t set = 0; same && set < 26; set++)
		for (uint32_t i = 0; same && i < 62; i++) {
			char k[64];
			size_t n = word_key(set, i, k, sizeof k);
			same = bfi_query_key(a, k, n, ra) == 0 && bfi_query_key(b, k, n, rb) == 0 &&
			       bfi_result_count(ra) == bfi_result_count(rb) &&
			       !memcmp(bfi_result_ordinals(ra), bfi_result_ordinals(rb),
			               bfi_result_count(ra) * sizeof(uint32_t));
		}
	bfi_result_destroy(&ra);
	bfi_result_destroy(&rb);
	return same;
}

static void test_read_in_place(void)
{
	bfi_snapshot *a = NULL, *b = NULL;
	EXPECT_RC(bfi_open(snap, 0, &a), 0);
	EXPECT_RC(bfi_open(packf, 0, &b), 0);
	EXPECT(a && b && same_answers(a, b));
	const char *name = NULL;
	size_t len = 0;
	EXPECT(b && bfi_set_name(b, 3, &name, &len) == 0 && len == 2 && !memcmp(name, "s3", 2));
	bfi_close(&a);
	bfi_close(&b);
	struct bfi_verify_report rep;
	EXPECT_RC(bfi_verify(packf, &rep, NULL, NULL), 0);
	/* a damaged frame: refused by open and by verify, which names the pack */
	size_t plen;
	uint8_t *p = test_read_file(packf, &plen);
	char dam[600];
	snprintf(dam, sizeof dam, "%s/frame.pack", test_tmpdir());
	p[plen / 3] ^= 0x40;
	test_write_file(dam, p, plen);
	free(p);
	int rc = bfi_open(dam, 0, &b);
	EXPECT(is_pack_error(rc));
	rc = bfi_verify(dam, &rep, NULL, NULL);
	EXPECT(is_pack_error(rc) && rep.file && !strcmp(rep.file, "pack"));
	/* a good container around a damaged index: verify finds the row bit it changed */
	char bad[600], idx[700];
	snprintf(bad, sizeof bad, "%s/bad", test_tmpdir());
	EXPECT_RC(test_build_sets(NULL, bad, 24, 60, word_key), 0);
	snprintf(idx, sizeof idx, "%s/" BFI_INDEX_NAME, bad);
	uint8_t *ib = test_read_file(idx, &plen);
	struct bfi_section sec;
	EXPECT(ib && bfi_section_decode(ib + BFI_HEADER_SIZE, &sec) == 0);
	ib[sec.offset + sec.stored_size - 8] ^= 0x01; /* a bit of the last rows, past every descriptor */
	chmod(idx, 0644);
	test_write_file(idx, ib, plen);
	free(ib);
	EXPECT_RC(pack(bad, dam, 1, 4096), 0);
	EXPECT_RC(bfi_verify(dam, &rep, NULL, NULL), BFI_E_DATA_CHECKSUM);
	EXPECT(rep.file && !strcmp(rep.file, BFI_INDEX_NAME));
	test_rm_rf(dam);
	test_rm_rf(bad);
}

struct member {
	const char *name;
	int type; /* AE_IFREG, AE_IFDIR, AE_IFLNK */
	const char *data;
};

static la_ssize_t to_buf(struct archive *a, void *ctx, const void *b, size_t n)
{
	(void)a;
	struct {
		uint8_t *p;
		size_t len;
	} *t = ctx;
	memcpy(t->p + t->len, b, n);
	t->len += n;
	return (la_ssize_t)n;
}

/* Write a pack of these members by hand: one frame, and the seek table. */
static void make_pack(const char *path, const struct member *m, int n)
{
	struct {
		uint8_t *p;
		size_t len;
	} t = {malloc(1 << 20), 0};
	EXPECT_RC(bfi_archive_load(NULL), 0);
	struct archive *a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	archive_write_set_bytes_per_block(a, 512);
	archive_write_open(a, &t, NULL, to_buf, NULL);
	for (int i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, m[i].name);
		archive_entry_set_filetype(e, (unsigned)m[i].type);
		archive_entry_set_perm(e, 0644);
		if (m[i].type == AE_IFLNK)
			archive_entry_set_symlink(e, "/etc/passwd");
		size_t len = m[i].data ? strlen(m[i].data) : 0;
		archive_entry_set_size(e, (la_int64_t)len);
		archive_write_header(a, e);
		if (len)
			archive_write_data(a, m[i].data, len);
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
	size_t cap = ZSTD_compressBound(t.len);
	uint8_t *z = malloc(cap + 64);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	size_t zl = ZSTD_compress2(c, z, cap, t.p, t.len);
	ZSTD_freeCCtx(c);
	struct bfi_pack_frame f = {0, 0, (uint32_t)zl, (uint32_t)t.len,
	                           (uint32_t)XXH64(t.p, t.len, 0)};
	struct bfi_pack_table tab = {1, &f, t.len, zl};
	bfi_pack_table_encode(z + zl, &tab);
	test_write_file(path, z, zl + bfi_pack_table_size(1));
	free(z);
	free(t.p);
}

static void test_foreign(void)
{
	char f[600];
	snprintf(f, sizeof f, "%s/foreign.pack", test_tmpdir());
	const struct member ok[] = {{"catalog.mdb", AE_IFREG, "c"}, {"index.bfi", AE_IFREG, "i"}};
	make_pack(f, ok, 2);
	EXPECT_RC(unpack(f, out), 0); /* the container is right; the files are not a snapshot */
	test_rm_rf(out);
	const struct member dots[] = {{"../catalog.mdb", AE_IFREG, "c"}, {"index.bfi", AE_IFREG, "i"}};
	const struct member link[] = {{"catalog.mdb", AE_IFLNK, NULL}, {"index.bfi", AE_IFREG, "i"}};
	const struct member extra[] = {{"catalog.mdb", AE_IFREG, "c"},
	                               {"index.bfi", AE_IFREG, "i"},
	                               {"evil", AE_IFREG, "x"}};
	const struct member order[] = {{"index.bfi", AE_IFREG, "i"}, {"catalog.mdb", AE_IFREG, "c"}};
	const struct member bad_manifest[] = {{"MANIFEST", AE_IFREG, "not a manifest"}};
	const struct member *cases[] = {dots, link, extra, order, bad_manifest};
	int counts[] = {2, 2, 3, 2, 1};
	for (int i = 0; i < 5; i++) {
		make_pack(f, cases[i], counts[i]);
		int rc = unpack(f, out);
		/* BFI_E_PACK, or the manifest's own format error */
		if (rc != BFI_E_PACK && (i != 4 || rc > -31800 || rc < -31899))
			fprintf(stderr, "case %d: %d (%s)\n", i, rc, bfi_strerror(rc));
		EXPECT(rc == BFI_E_PACK || (i == 4 && rc <= -31800 && rc >= -31899));
		EXPECT(only_inputs());
	}
	char up[600];
	snprintf(up, sizeof up, "%s/catalog.mdb", test_tmpdir());
	struct stat st;
	EXPECT(lstat(up, &st) != 0); /* "../catalog.mdb" wrote nothing beside the output */
	/* a zstd file that is not seekable: no seek table */
	uint8_t z[256];
	size_t zl = ZSTD_compress(z, sizeof z, "hello", 5, 3);
	test_write_file(f, z, zl);
	EXPECT_RC(unpack(f, out), BFI_E_PACK);
	test_write_file(f, "not zstd at all", 15);
	EXPECT_RC(unpack(f, out), BFI_E_PACK);
	test_rm_rf(f);
}

static void test_memory(void)
{
	struct bfi_pack_options po;
	bfi_pack_options_init(&po);
	po.level = 19;
	po.frame = 4u << 20;
	po.memory = 8u << 20; /* one thread at level 19 on frames of 4 MiB takes far more */
	char err[4600], p[600];
	snprintf(p, sizeof p, "%s/mem.pack", test_tmpdir());
	EXPECT_RC(bfi_pack(snap, p, &po, err, sizeof err), BFI_E_LIMIT);
	EXPECT(strstr(err, "--memory") != NULL);
	struct stat st;
	EXPECT(lstat(p, &st) != 0);
	po.level = 3;
	po.frame = 4096;
	po.memory = 4u << 20;
	po.threads = 64; /* dropped to what fits */
	EXPECT_RC(bfi_pack(snap, p, &po, err, sizeof err), 0);
	EXPECT(same_file(p, packf));
	test_rm_rf(p);
}

int main(void)
{
	snprintf(snap, sizeof snap, "%s/snap", test_tmpdir());
	snprintf(packf, sizeof packf, "%s/snap.pack", test_tmpdir());
	snprintf(out, sizeof out, "%s/out", test_tmpdir());
	if (test_build_sets(NULL, snap, 24, 60, word_key) != 0) {
		fprintf(stderr, "cannot build the snapshot\n");
		return 1;
	}
	test_run("pack: the seek table's test vector, encoded and decoded; bad tables refused",
	         test_vector);
	test_run("pack: a snapshot in 4 KiB frames, the same bytes at 1 and 2 threads, unpacked "
	         "byte for byte, over a snapshot too",
	         test_roundtrip);
	test_run("pack: opened, queried and verified in place, as the snapshot; a damaged frame "
	         "and a damaged index inside refused",
	         test_read_in_place);
	test_run("pack: every truncation refused with a pack error, nothing left behind",
	         test_truncations);
	test_run("pack: a byte flipped at every 7th offset refused, or the same files",
	         test_tampered);
	test_run("pack: members a pack must not hold, and foreign files, refused", test_foreign);
	test_run("pack: --memory below one thread refused; threads dropped to fit", test_memory);
	test_cleanup();
	return test_exit();
}
