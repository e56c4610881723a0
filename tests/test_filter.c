/*
 * test_filter.c - single-filter files and the federated build: 1,000
 * filters made independently (bfi_filter_*), indexed with
 * bfi_writer_add_filters, must give the very index a direct build from the
 * same keys gives, byte for byte, and so the same answers; bad filter files
 * get their own error codes; filters that differ are refused by name.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "format.h"
#include "test.h"

enum { SITES = 1000, M = 8192, K = 6 };
static char dir[4200];

static int site_keys(int site, int i, char *key, size_t cap)
{
	/* neighbouring sites share some keys; every site has its own too */
	return snprintf(key, cap, i % 3 ? "site%d-key%d" : "shared%d-key%d", i % 3 ? site : site / 10, i);
}

static int n_keys(int site)
{
	return 20 + site % 50;
}

static void make_filters(void)
{
	snprintf(dir, sizeof dir, "%s/filters", test_tmpdir());
	mkdir(dir, 0755);
	for (int s = 0; s < SITES; s++) {
		bfi_filter *f;
		EXPECT_RC(bfi_filter_create(M, K, &f), 0);
		char key[64], path[4300];
		for (int i = 0; i < n_keys(s); i++)
			EXPECT_RC(bfi_filter_add(f, key, (size_t)site_keys(s, i, key, sizeof key)), 0);
		snprintf(path, sizeof path, "%s/site%04d.bff", dir, s);
		if (s % 3 == 1) /* a third of the sites ship it compressed (file version 2) */
			EXPECT_RC(bfi_filter_set_compression(f, 3), 0);
		EXPECT_RC(bfi_filter_save(f, path), 0);
		bfi_filter_destroy(&f);
	}
}

static int build(const char *out, int from_filters, unsigned layouts)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = layouts;
	o.keep_order = 1;
	o.bits = M;
	o.hashes = K;
	o.prefilter = BFI_PREFILTER_NEVER;
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	if (rc == 0 && from_filters)
		rc = bfi_writer_add_filters(w, dir);
	for (int s = 0; rc == 0 && !from_filters && s < SITES; s++) {
		char name[32], key[64];
		uint32_t ord;
		snprintf(name, sizeof name, "site%04d", s);
		rc = bfi_writer_set(w, name, strlen(name), &ord);
		for (int i = 0; rc == 0 && i < n_keys(s); i++)
			rc = bfi_writer_key(w, ord, key, (size_t)site_keys(s, i, key, sizeof key));
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, out, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

static int same_file(const char *a, const char *b)
{
	size_t la, lb;
	uint8_t *x = test_read_file(a, &la), *y = test_read_file(b, &lb);
	int same = x && y && la == lb && memcmp(x, y, la) == 0;
	free(x);
	free(y);
	return same;
}

static void test_federated(void)
{
	make_filters();
	char a[4300], b[4300], ia[4400], ib[4400];
	snprintf(a, sizeof a, "%s/from-filters", test_tmpdir());
	snprintf(b, sizeof b, "%s/from-keys", test_tmpdir());
	unsigned layouts = BFI_BUILD_FLAT | BFI_BUILD_PLAIN | BFI_BUILD_TREE;
	EXPECT_RC(build(a, 1, layouts), 0);
	EXPECT_RC(build(b, 0, layouts), 0);
	snprintf(ia, sizeof ia, "%s/index.bfi", a);
	snprintf(ib, sizeof ib, "%s/index.bfi", b);
	EXPECT(same_file(ia, ib));
	snprintf(ia, sizeof ia, "%s/catalog.mdb", a);
	snprintf(ib, sizeof ib, "%s/catalog.mdb", b);
	EXPECT(same_file(ia, ib));
	/* and every site's keys find it, on every layout */
	bfi_snapshot *s;
	bfi_result *r;
	EXPECT_RC(bfi_open(a, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	if (!s || !r)
		return;
	uint64_t fn = 0;
	static const unsigned lay[3] = {BFI_LAYOUT_FLAT, BFI_LAYOUT_PLAIN, BFI_LAYOUT_TREE};
	for (int site = 0; site < SITES; site += 7)
		for (int i = 0; i < n_keys(site); i++)
			for (int l = 0; l < 3; l++) {
				char key[64];
				int n = site_keys(site, i, key, sizeof key);
				EXPECT_RC(bfi_query_key_layout(s, lay[l], key, (size_t)n, r), 0);
				int found = 0;
				for (size_t x = 0; x < bfi_result_count(r); x++)
					found |= bfi_result_ordinals(r)[x] == (uint32_t)site;
				fn += !found;
			}
	printf("%d filters indexed: index and catalog equal the direct build's; %llu false negatives\n",
	       SITES, (unsigned long long)fn);
	EXPECT(fn == 0);
	bfi_result_destroy(&r);
	bfi_close(&s);
}

/*
 * RAMBO from filters: each cell the OR of its sets' filters, every
 * repetition testing the filters' own probes (SHARED_PROBES). No key missed.
 */
static void test_rambo(void)
{
	char snap[4300];
	snprintf(snap, sizeof snap, "%s/rambo-from-filters", test_tmpdir());
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_RAMBO;
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	EXPECT_RC(bfi_writer_add_filters(w, dir), 0);
	EXPECT_RC(bfi_writer_finish(w, snap, NULL), 0);
	bfi_writer_destroy(&w);
	bfi_snapshot *s;
	bfi_result *r;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	if (!s || !r)
		return;
	struct bfi_info in;
	bfi_info(s, &in);
	struct bfi_layout_info lr = test_layout(s, BFI_LAYOUT_RAMBO);
	EXPECT(lr.u.rambo.shared_probes && lr.u.rambo.reps >= 2);
	uint64_t fn = 0, extra = 0, asked = 0;
	for (int site = 0; site < SITES; site += 3)
		for (int i = 0; i < n_keys(site); i++) {
			char key[64];
			int n = site_keys(site, i, key, sizeof key);
			EXPECT_RC(bfi_query_key_layout(s, BFI_LAYOUT_RAMBO, key, (size_t)n, r), 0);
			int found = 0;
			for (size_t x = 0; x < bfi_result_count(r); x++) {
				const char *name;
				size_t nl;
				char want[16];
				snprintf(want, sizeof want, "site%04d", site);
				if (bfi_set_name(s, bfi_result_ordinals(r)[x], &name, &nl) == 0 && nl == 8 &&
				    memcmp(name, want, 8) == 0)
					found = 1;
			}
			fn += !found;
			extra += bfi_result_count(r);
			asked++;
		}
	printf("rambo from %d filters: B = %llu, R = %u, shared probes; %llu false negatives, "
	       "%.1f sets per key\n", SITES, (unsigned long long)lr.u.rambo.cells, lr.u.rambo.reps,
	       (unsigned long long)fn, (double)extra / (double)asked);
	EXPECT(fn == 0);
	EXPECT_RC(bfi_verify(snap, &(struct bfi_verify_report){0}, NULL, NULL), 0);
	bfi_result_destroy(&r);
	bfi_close(&s);
}

/* Filters that differ, and builds a filter cannot make. */
static void test_refusals(void)
{
	char other[4300], snap[4300], path[4400];
	snprintf(other, sizeof other, "%s/mixed", test_tmpdir());
	snprintf(snap, sizeof snap, "%s/refused", test_tmpdir());
	mkdir(other, 0755);
	bfi_filter *f;
	EXPECT_RC(bfi_filter_create(M, K, &f), 0);
	snprintf(path, sizeof path, "%s/a.bff", other);
	EXPECT_RC(bfi_filter_save(f, path), 0);
	bfi_filter_destroy(&f);
	EXPECT_RC(bfi_filter_create(M, K + 1, &f), 0);
	snprintf(path, sizeof path, "%s/b.bff", other);
	EXPECT_RC(bfi_filter_save(f, path), 0);
	bfi_filter_destroy(&f);
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	EXPECT_RC(bfi_writer_add_filters(w, other), BFI_E_FILTER_MISMATCH);
	EXPECT(strstr(bfi_writer_errmsg(w), "b.bff") != NULL);
	bfi_writer_destroy(&w);
	/* filters and keys do not mix */
	o.layouts = BFI_BUILD_FLAT;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	EXPECT_RC(bfi_writer_add_filters(w, path), 0);
	uint32_t ord;
	EXPECT_RC(bfi_writer_set(w, "x", 1, &ord), 0);
	EXPECT_RC(bfi_writer_key(w, ord, "k", 1), BFI_E_INPUT);
	bfi_writer_destroy(&w);
	struct stat st;
	EXPECT(stat(snap, &st) != 0);
}

/* Each kind of damage to a filter file, its own error. */
static void test_corrupt(void)
{
	char good[4300], bad[4300];
	snprintf(good, sizeof good, "%s/site0003.bff", dir);
	snprintf(bad, sizeof bad, "%s/bad.bff", test_tmpdir());
	size_t len;
	uint8_t *b = test_read_file(good, &len);
	EXPECT(b && len == BFI_FILTER_HEADER_SIZE + M / 8);
	if (!b)
		return;
	struct {
		const char *what;
		size_t at, cut;
		uint8_t xor_;
		int want;
	} cases[] = {
		{"magic", 1, 0, 0x20, BFI_E_BAD_MAGIC},
		{"header byte", 20, 0, 0x01, BFI_E_HEADER_CHECKSUM},
		{"data byte", BFI_FILTER_HEADER_SIZE + 100, 0, 0x10, BFI_E_DATA_CHECKSUM},
		{"truncated bits", 0, BFI_FILTER_HEADER_SIZE + 10, 0, BFI_E_TRUNCATED},
		{"truncated header", 0, 30, 0, BFI_E_TRUNCATED},
		{"empty", 0, 1, 0, BFI_E_BAD_MAGIC}, /* no magic: not a filter, not a short one */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		uint8_t *c = malloc(len);
		memcpy(c, b, len);
		c[cases[i].at] ^= cases[i].xor_;
		EXPECT_RC(test_write_file(bad, c, cases[i].cut ? cases[i].cut - (cases[i].cut == 1) : len), 0);
		bfi_filter *f = NULL;
		int rc = bfi_filter_load(bad, &f);
		if (rc != cases[i].want)
			fprintf(stderr, "%s: got %d, want %d\n", cases[i].what, rc, cases[i].want);
		EXPECT_RC(rc, cases[i].want);
		EXPECT(f == NULL);
		free(c);
	}
	/* a byte past the end */
	uint8_t *c = malloc(len + 1);
	memcpy(c, b, len);
	c[len] = 0;
	EXPECT_RC(test_write_file(bad, c, len + 1), 0);
	bfi_filter *f = NULL;
	EXPECT_RC(bfi_filter_load(bad, &f), BFI_E_SIZE);
	/* another version, resealed: refused as a version, not misread */
	memcpy(c, b, len);
	struct bfi_filter_header h;
	EXPECT_RC(bfi_filter_header_decode(c, &h), 0);
	h.version = 3;
	bfi_filter_header_encode(c, &h);
	EXPECT_RC(test_write_file(bad, c, len), 0);
	EXPECT_RC(bfi_filter_load(bad, &f), BFI_E_VERSION);
	/* another version whose header checksums otherwise: named as a version, as an index is */
	memcpy(c, b, len);
	c[8] = 3;
	EXPECT_RC(test_write_file(bad, c, len), 0);
	EXPECT_RC(bfi_filter_load(bad, &f), BFI_E_VERSION);
	/* another hash function, resealed: refused, and an index build names the file */
	memcpy(c, b, len);
	h.version = BFI_FILTER_VERSION;
	h.hash_id = 2;
	bfi_filter_header_encode(c, &h);
	EXPECT_RC(test_write_file(bad, c, len), 0);
	EXPECT_RC(bfi_filter_load(bad, &f), BFI_E_INCOMPAT);
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	EXPECT_RC(bfi_writer_add_filters(w, bad), BFI_E_INCOMPAT);
	EXPECT(strstr(bfi_writer_errmsg(w), "bad.bff") != NULL);
	bfi_writer_destroy(&w);
	h.hash_id = 1;
	/* a claimed width beyond the file, resealed */
	memcpy(c, b, len);
	h.version = BFI_FILTER_VERSION;
	h.m = (uint64_t)1 << 40;
	bfi_filter_header_encode(c, &h);
	EXPECT_RC(test_write_file(bad, c, len), 0);
	EXPECT_RC(bfi_filter_load(bad, &f), BFI_E_TRUNCATED);
	EXPECT(bfi_filter_load("/nonexistent/x.bff", &f) == -ENOENT);
	free(c);
	free(b);
}

/*
 * Compressed filter files (version 2): the same bits back; a sparse
 * filter (k = 1, wide) takes fewer bytes than its raw bits, a half-full
 * one about as many; damage to the frame, a truncation, bytes after it and
 * a frame that would expand past the bound get their codes; a wide empty
 * filter is saved raw, so that no reader refuses what bfi wrote.
 */
static void test_compressed(void)
{
	char p[4300], q[4300];
	snprintf(p, sizeof p, "%s/z.bff", test_tmpdir());
	snprintf(q, sizeof q, "%s/z2.bff", test_tmpdir());
	bfi_filter *f, *g = NULL;
	EXPECT_RC(bfi_filter_create(1u << 20, 1, &f), 0);
	char key[64];
	for (int i = 0; i < 5000; i++)
		EXPECT_RC(bfi_filter_add(f, key, (size_t)snprintf(key, sizeof key, "k%d", i)), 0);
	uint64_t raw, z;
	EXPECT_RC(bfi_filter_file_size(f, 0, &raw), 0);
	EXPECT_RC(bfi_filter_file_size(f, 19, &z), 0);
	EXPECT(raw == 64 + (1u << 17) && z < raw / 4);
	EXPECT_RC(bfi_filter_set_compression(f, 19), 0);
	EXPECT_RC(bfi_filter_save(f, p), 0);
	size_t len;
	uint8_t *b = test_read_file(p, &len);
	EXPECT(b && len == z && bfi_get16(b + 8) == BFI_FILTER_VERSION_ZSTD);
	EXPECT_RC(bfi_filter_load(p, &g), 0);
	EXPECT(g && bfi_filter_compression(g) != 0 &&
	       !memcmp(bfi_filter_bits(f), bfi_filter_bits(g), 1u << 17));
	bfi_filter_destroy(&g);
	/* the frame's bytes damaged, cut, or followed by more */
	b[len - 20] ^= 0x5a;
	test_write_file(q, b, len);
	int rc = bfi_filter_load(q, &g);
	EXPECT(rc == BFI_E_DATA_CHECKSUM || rc == BFI_E_TRUNCATED || rc == BFI_E_SIZE ||
	       rc == BFI_E_BAD_LAYOUT);
	b[len - 20] ^= 0x5a;
	test_write_file(q, b, len - 1);
	EXPECT_RC(bfi_filter_load(q, &g), BFI_E_TRUNCATED);
	uint8_t *longer = malloc(len + 1);
	memcpy(longer, b, len);
	longer[len] = 0;
	test_write_file(q, longer, len + 1);
	EXPECT_RC(bfi_filter_load(q, &g), BFI_E_SIZE);
	free(longer);
	free(b);
	bfi_filter_destroy(&f);
	/* an empty filter of 2^36 bits: a frame of a few KiB for 8 GiB, saved raw instead */
	EXPECT_RC(bfi_filter_create(1u << 24, 3, &f), 0);
	EXPECT_RC(bfi_filter_set_compression(f, 1), 0);
	EXPECT_RC(bfi_filter_save(f, p), 0);
	b = test_read_file(p, &len);
	EXPECT(b && bfi_get16(b + 8) == BFI_FILTER_VERSION && len == 64 + (1u << 21));
	free(b);
	bfi_filter_destroy(&f);
	/* a hand-made version 2 file whose tiny frame claims 2^33 bytes of bits: refused unread */
	EXPECT_RC(bfi_filter_create(64, 3, &f), 0);
	EXPECT_RC(bfi_filter_set_compression(f, 1), 0);
	EXPECT_RC(bfi_filter_save(f, p), 0);
	bfi_filter_destroy(&f);
	b = test_read_file(p, &len);
	struct bfi_filter_header h;
	EXPECT(b && bfi_filter_header_decode(b, &h) == 0 && h.version == BFI_FILTER_VERSION_ZSTD);
	h.m = 1ull << 36;
	bfi_filter_header_encode(b, &h);
	test_write_file(q, b, len);
	EXPECT_RC(bfi_filter_load(q, &g), BFI_E_LIMIT);
	free(b);
}

int main(void)
{
	test_run("filter: 1,000 site filters, a third compressed, index as the direct build does",
	         test_federated);
	test_run("filter: rambo from filters misses nothing", test_rambo);
	test_run("filter: differing filters and mixed inputs are refused", test_refusals);
	test_run("filter: damaged filter files get their own errors", test_corrupt);
	test_run("filter: compressed files: the same bits, fewer bytes when sparse, damage refused",
	         test_compressed);
	test_cleanup();
	return test_exit();
}
