/*
 * test_tree.c - the tree (Bloofi) layout against exact truth, for several
 * fanouts: no false negatives for keys, expressions and thresholds. With
 * one filter width for every node (the Bloofi paper's setting), a leaf's
 * bits are a subset of each ancestor's, so the tree must answer exactly as
 * the flat layout over the same leaves does; bf-cost counts the node
 * filters a descent tests.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "test.h"

enum { NSETS = 1500, UNIVERSE = 6000 };

static uint8_t member[NSETS][UNIVERSE / 8 + 1];
static char snap[4200];

static int has(int j, uint32_t u)
{
	return member[j][u / 8] >> (u % 8) & 1;
}

static int build(const char *path, uint32_t fanout, uint64_t bits, int incremental)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.layouts = BFI_BUILD_TREE | BFI_BUILD_FLAT;
	o.fanout = fanout;
	o.bloofi_incremental = incremental;
	/* keep levels that do not pay, to test the descent through them; fanout 64 tests the rules */
	o.all_levels = fanout != 64;
	o.bits = bits;
	o.hashes = bits ? 7 : 0;
	/* with and without the union pre-filter: it must never hide a set */
	o.prefilter = fanout == 8 ? BFI_PREFILTER_ALWAYS : BFI_PREFILTER_NEVER;
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	uint64_t s = 5;
	memset(member, 0, sizeof member);
	for (int j = 0; j < NSETS && rc == 0; j++) {
		char name[16], key[16];
		uint32_t ord;
		snprintf(name, sizeof name, "s%d", j);
		rc = bfi_writer_set(w, name, strlen(name), &ord);
		/* neighbouring sets share a vocabulary: the tree can prune */
		uint32_t base = (uint32_t)(j / 50) * 200, size = 10 + (uint32_t)(test_rand(&s) % 60);
		for (uint32_t i = 0; i < size && rc == 0; i++) {
			uint32_t u = (base + (uint32_t)(test_rand(&s) % 400)) % UNIVERSE;
			member[j][u / 8] |= (uint8_t)(1u << (u % 8));
			rc = bfi_writer_key(w, ord, key, (size_t)snprintf(key, sizeof key, "k%u", u));
		}
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, path, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

static void check_fanout(uint32_t fanout, uint64_t bits, int incremental)
{
	snprintf(snap, sizeof snap, "%s/tree-%u-%llu-%d", test_tmpdir(), fanout, (unsigned long long)bits,
	         incremental);
	EXPECT_RC(build(snap, fanout, bits, incremental), 0);
	bfi_snapshot *s;
	bfi_result *t, *f;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&t), 0);
	EXPECT_RC(bfi_result_create(&f), 0);
	if (!s || !t || !f)
		return;
	struct bfi_info in;
	bfi_info(s, &in);
	struct bfi_layout_info lt = test_layout(s, BFI_LAYOUT_TREE);
	EXPECT(lt.u.tree.fanout == fanout && lt.u.tree.levels >= 2);
	EXPECT(fanout == 8 ? lt.u.tree.prefilter_bits > 0 : lt.u.tree.prefilter_bits == 0);
	if (incremental) {
		/*
		 * The paper's B-tree shape: below the top, at least d children per
		 * node, and at most 2d unless the node's bits were all ones at the
		 * leaves' width, which stops its splits. With one width of 20,000
		 * bits no node here fills; with leaves sized for their sets (677
		 * bits for the largest) the upper nodes do.
		 */
		EXPECT(in.major == 3 && in.minor == 0 && lt.u.tree.explicit_groups);
		for (uint32_t l = 1; l + 1 < lt.u.tree.levels; l++) {
			uint64_t below, nodes, m;
			EXPECT_RC(bfi_tree_level(s, l - 1, &below, &m, NULL, NULL), 0);
			EXPECT_RC(bfi_tree_level(s, l, &nodes, &m, NULL, NULL), 0);
			EXPECT(nodes * fanout <= below);
			EXPECT(bits == 0 || below <= nodes * 2 * fanout);
		}
	} else {
		/* offline trees imply their groups; a line pre-filter is format 3.3 */
		EXPECT(in.major == 3 && in.minor == (fanout == 8 ? 3u : 0u) && !lt.u.tree.explicit_groups);
	}
	/* each level's fill and rate (counted in bit planes) against its rows' bits one by one */
	for (uint32_t l = 0; l < lt.u.tree.levels; l++) {
		uint64_t nodes, m, rb;
		double fill = -1, fpr = -1;
		const uint8_t *rows;
		EXPECT_RC(bfi_tree_level(s, l, &nodes, &m, &fill, &fpr), 0);
		EXPECT_RC(bfi_tree_rows(s, l, &rows, &m, &rb), 0);
		double fsum = 0, psum = 0;
		for (uint64_t j = 0; j < nodes; j++) {
			uint64_t ones = 0;
			for (uint64_t r = 0; r < m; r++)
				ones += rows[r * rb + j / 8] >> (j % 8) & 1;
			double share = (double)ones / (double)m, p = 1;
			for (uint32_t i = 0; i < lt.hashes; i++)
				p *= share;
			fsum += share;
			psum += p;
		}
		EXPECT(m > 255); /* the planes are read out more than once */
		EXPECT(fabs(fill - fsum / (double)nodes) < 1e-12 && fabs(fpr - psum / (double)nodes) < 1e-12);
	}
	/* the incremental build orders sets as its leaves: map ordinals back to inputs */
	static int input_of[NSETS];
	for (uint32_t ord = 0; ord < NSETS; ord++) {
		const char *name;
		size_t len;
		input_of[ord] = -1;
		if (bfi_set_name(s, ord, &name, &len) == 0)
			input_of[ord] = atoi(name + 1);
	}
	uint64_t fn = 0, differ = 0, tests = 0, keys = 0;
	char key[24];
	for (uint32_t u = 0; u < UNIVERSE + 500; u++) {
		int n = snprintf(key, sizeof key, "k%u", u);
		EXPECT_RC(bfi_query_key_layout(s, BFI_LAYOUT_TREE, key, (size_t)n, t), 0);
		EXPECT_RC(bfi_query_key_layout(s, BFI_LAYOUT_FLAT, key, (size_t)n, f), 0);
		uint8_t got[NSETS] = {0};
		const uint32_t *o = bfi_result_ordinals(t);
		for (size_t x = 0; x < bfi_result_count(t); x++) {
			EXPECT(input_of[o[x]] >= 0);
			if (input_of[o[x]] >= 0)
				got[input_of[o[x]]] = 1;
			if (x)
				EXPECT(o[x - 1] < o[x]);
		}
		for (int j = 0; u < UNIVERSE && j < NSETS; j++)
			fn += has(j, u) && !got[j];
		/* the tree only prunes: never more than flat over the same leaves */
		if (bfi_result_count(t) > bfi_result_count(f))
			differ++;
		else if (bits && (bfi_result_count(t) != bfi_result_count(f) ||
		                  memcmp(o, bfi_result_ordinals(f), bfi_result_count(t) * 4) != 0))
			differ++;
		tests += bfi_result_filter_tests(t);
		keys++;
	}
	printf("%s %u%s: %u levels, %llu false negatives, bf-cost %.1f per key (%d sets)\n",
	       incremental ? "incremental, order" : "fanout", fanout, bits ? ", one width" : "",
	       lt.u.tree.levels, (unsigned long long)fn,
	       (double)tests / (double)keys, NSETS);
	EXPECT(fn == 0);
	EXPECT(differ == 0);
	EXPECT(tests > 0 && (double)tests / (double)keys < NSETS); /* it prunes */
	/* expressions and thresholds through the tree never miss */
	uint64_t seed = 2, missed = 0;
	for (int q = 0; q < 200; q++) {
		int j = (int)(test_rand(&seed) % NSETS);
		uint32_t a = 0, b = 0;
		for (uint32_t u = 0; u < UNIVERSE && (!a || !b); u++)
			if (has(j, u)) {
				if (!a)
					a = u;
				else if (test_rand(&seed) % 3 == 0)
					b = u;
			}
		char text[64];
		snprintf(text, sizeof text, "(k%u AND k%u) OR nothing-%d", a, b ? b : a, q);
		bfi_expr *e;
		EXPECT_RC(bfi_expr_parse(text, strlen(text), &e, NULL), 0);
		if (!e)
			continue;
		EXPECT_RC(bfi_query_expr(s, BFI_LAYOUT_TREE, e, t), 0);
		int found = 0;
		for (size_t x = 0; x < bfi_result_count(t); x++)
			found |= input_of[bfi_result_ordinals(t)[x]] == j;
		missed += !found;
		bfi_expr_free(&e);
		const void *k2[2];
		size_t l2[2];
		char ka[16], kb[16];
		l2[0] = (size_t)snprintf(ka, sizeof ka, "k%u", a);
		l2[1] = (size_t)snprintf(kb, sizeof kb, "absent-%d", q);
		k2[0] = ka;
		k2[1] = kb;
		EXPECT_RC(bfi_expr_terms(k2, l2, 2, &e), 0);
		EXPECT_RC(bfi_query_threshold(s, BFI_LAYOUT_TREE, e, 0.5, t), 0);
		found = 0;
		for (size_t x = 0; x < bfi_result_count(t); x++)
			found |= input_of[bfi_result_ordinals(t)[x]] == j;
		missed += !found;
		bfi_expr_free(&e);
	}
	EXPECT(missed == 0);
	struct bfi_verify_report rep;
	EXPECT_RC(bfi_verify(snap, &rep, NULL, NULL), 0);
	bfi_result_destroy(&t);
	bfi_result_destroy(&f);
	bfi_close(&s);
}

static void test_fanout_2(void)
{
	check_fanout(2, 0, 0);
}
static void test_fanout_8(void)
{
	check_fanout(8, 0, 0);
}
static void test_fanout_64(void)
{
	check_fanout(64, 0, 0);
}
static void test_one_width(void)
{
	check_fanout(16, 20000, 0);
}
static void test_incremental(void)
{
	check_fanout(2, 20000, 1); /* one width: answers exactly as flat */
	check_fanout(3, 0, 1);     /* an order that is not a power of two */
}

/*
 * The paper's synthetic workload at N = 10,000 (set i holds the integers
 * 100 i .. 100 i + 99; m = 100,989, k = 7, order 2): the incremental build
 * must land in the range the authors' Java reproduces, 96-106 node filters
 * tested per present key (the paper: 104.29), and miss no set. Descending
 * strictly to the nearest child gave 106.58 here.
 */
static size_t paper_key(uint32_t set, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "%u", 100 * set + i);
}

static void test_incremental_bf_cost(void)
{
	enum { SETS = 10000, QUERIES = 4000 };
	char path[4300];
	snprintf(path, sizeof path, "%s/paper", test_tmpdir());
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.layouts = BFI_BUILD_TREE;
	o.fanout = 2;
	o.bloofi_incremental = 1;
	o.all_levels = 1;
	o.bits = 100989;
	o.hashes = 7;
	EXPECT_RC(test_build_sets(&o, path, SETS, 100, paper_key), 0);
	char name[24], key[24];
	bfi_snapshot *s = NULL;
	bfi_result *res = NULL;
	EXPECT_RC(bfi_open(path, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&res), 0);
	if (s == NULL || res == NULL)
		return;
	uint64_t seed = 11, tests = 0, fn = 0;
	for (int q = 0; q < QUERIES; q++) {
		uint32_t v = (uint32_t)(test_rand(&seed) % (100u * SETS)), want;
		EXPECT_RC(bfi_set_find(s, name, (size_t)snprintf(name, sizeof name, "s%u", v / 100), &want), 0);
		EXPECT_RC(bfi_query_key_layout(s, BFI_LAYOUT_TREE, key,
		                               (size_t)snprintf(key, sizeof key, "%u", v), res),
		          0);
		tests += bfi_result_filter_tests(res);
		int found = 0;
		for (size_t i = 0; i < bfi_result_count(res); i++)
			found |= bfi_result_ordinals(res)[i] == want;
		fn += !found;
	}
	double cost = (double)tests / QUERIES;
	printf("paper's workload, N = %d, incremental: bf-cost %.2f (paper 104.29, reproduced 96-106), "
	       "%llu false negatives\n",
	       SETS, cost, (unsigned long long)fn);
	EXPECT(fn == 0);
	EXPECT(cost >= 96 && cost <= 106);
	bfi_result_destroy(&res);
	bfi_close(&s);
}

/*
 * A corrupt child-group table: queries that reach it fail with
 * BFI_E_BAD_LAYOUT, never crash or answer, and verify names it.
 */
/* Set j's key i for test_line_prefilter. */
static size_t key_of(uint32_t j, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "set%u-key%u", j, i);
}

/* The tree's section in index image b (*size bytes), or NULL. */
static uint8_t *tree_desc(uint8_t *b, uint64_t *size)
{
	struct bfi_header h;
	if (bfi_header_decode(b, &h) != 0)
		return NULL;
	for (uint32_t i = 0; i < h.section_count; i++) {
		struct bfi_section sec;
		bfi_section_decode(b + h.table_offset + i * BFI_ENTRY_SIZE, &sec);
		if (sec.kind == BFI_SEC_TREE) {
			*size = sec.size;
			return b + sec.offset;
		}
	}
	return NULL;
}

/*
 * The union pre-filter takes one line a key (format 3.3), or k lines
 * with --classic-prefilters (minor 0, as 3.0 readers read); both hide no
 * set. A LINE_PRE pre-filter not of whole lines, and an unknown flag, are
 * refused.
 */
static void test_line_prefilter(void)
{
	char path[4300], idx[4400];
	for (int classic = 0; classic < 2; classic++) {
		struct bfi_build_options o;
		bfi_build_options_init(&o);
		o.layouts = BFI_BUILD_TREE;
		o.fanout = 8;
		o.prefilter = BFI_PREFILTER_ALWAYS;
		o.classic_prefilters = classic;
		snprintf(path, sizeof path, "%s/tree-pre-%d", test_tmpdir(), classic);
		EXPECT_RC(test_build_sets(&o, path, 300, 40, key_of), 0);
		bfi_snapshot *s = NULL;
		bfi_result *r = NULL;
		EXPECT_RC(bfi_open(path, 0, &s), 0);
		EXPECT_RC(bfi_result_create(&r), 0);
		if (!s || !r)
			return;
		struct bfi_info in;
		bfi_info(s, &in);
		EXPECT(in.minor == (classic ? 0u : 3u));
		uint64_t missed = 0, absent = 0;
		char key[32];
		for (uint32_t j = 0; j < 300; j++)
			for (uint32_t i = 0; i < 40; i += 7) {
				size_t n = key_of(j, i, key, sizeof key);
				EXPECT_RC(bfi_query_key_layout(s, BFI_LAYOUT_TREE, key, n, r), 0);
				int found = 0;
				for (size_t x = 0; x < bfi_result_count(r); x++) {
					const char *name;
					size_t len;
					char want[16];
					snprintf(want, sizeof want, "s%u", j);
					found |= bfi_set_name(s, bfi_result_ordinals(r)[x], &name, &len) == 0 &&
					         len == strlen(want) && memcmp(name, want, len) == 0;
				}
				missed += !found;
			}
		for (uint32_t u = 0; u < 20000; u++) {
			int n = snprintf(key, sizeof key, "nowhere-%u", u);
			EXPECT_RC(bfi_query_key_layout(s, BFI_LAYOUT_TREE, key, (size_t)n, r), 0);
			absent += bfi_result_count(r) > 0;
		}
		printf("tree pre-filter, %s: %llu present keys missed, %llu of 20000 absent keys answered\n",
		       classic ? "classic" : "one line a key", (unsigned long long)missed,
		       (unsigned long long)absent);
		EXPECT(missed == 0);
		EXPECT(absent < 20000 / 50); /* the leaves' rate 0.01, the pre-filter's before it */
		bfi_result_destroy(&r);
		bfi_close(&s);
		snprintf(idx, sizeof idx, "%s/index.bfi", path);
		size_t len;
		uint64_t size = 0;
		uint8_t *b = test_read_file(idx, &len), *d = b ? tree_desc(b, &size) : NULL;
		EXPECT(d != NULL);
		if (!d) {
			free(b);
			continue;
		}
		struct bfi_tree_desc td;
		struct bfi_where at;
		EXPECT_RC(bfi_tree_decode(d, size, &td, NULL, &at), 0);
		uint32_t flags = bfi_get32(d + 48);
		EXPECT(flags == (classic ? 0u : BFI_TREE_LINE_PRE) && td.pre_m > 0);
		EXPECT(classic || td.pre_m % 512 == 0);
		static const struct {
			unsigned add_flags;
			uint64_t pre_delta;
			int want;
		} cases[] = {{4, 0, BFI_E_RESERVED}, {BFI_TREE_LINE_PRE, 1, BFI_E_BAD_LAYOUT}};
		for (size_t c = 0; c < 2; c++) {
			uint8_t *x = malloc(len);
			if (!x)
				break;
			memcpy(x, b, len);
			uint8_t *xd = x + (d - b);
			bfi_put32(xd + 48, flags | cases[c].add_flags);
			bfi_put64(xd + 32, td.pre_m - cases[c].pre_delta);
			test_reseal_index(x, len);
			EXPECT(test_write_file(idx, x, len) == 0);
			bfi_snapshot *bad = NULL;
			EXPECT_RC(bfi_open(path, BFI_OPEN_NO_CATALOG, &bad), cases[c].want);
			bfi_close(&bad);
			free(x);
		}
		free(b);
	}
}

static void test_bad_groups(void)
{
	char bad[4300];
	snprintf(bad, sizeof bad, "%s/tree-bad", test_tmpdir());
	EXPECT_RC(build(bad, 2, 0, 1), 0);
	char idx[4400];
	snprintf(idx, sizeof idx, "%s/index.bfi", bad);
	size_t len;
	uint8_t *b = test_read_file(idx, &len);
	if (!b)
		return;
	struct bfi_header h;
	EXPECT_RC(bfi_header_decode(b, &h), 0);
	int found = 0;
	for (uint32_t i = 0; i < h.section_count; i++) {
		struct bfi_section sec;
		bfi_section_decode(b + h.table_offset + i * BFI_ENTRY_SIZE, &sec);
		if (sec.kind != BFI_SEC_TREE)
			continue;
		struct bfi_tree_desc d;
		struct bfi_level lv[BFI_MAX_LEVELS];
		struct bfi_where at;
		EXPECT_RC(bfi_tree_decode(b + sec.offset, sec.size, &d, lv, &at), 0);
		EXPECT(d.flags & BFI_TREE_EXPLICIT);
		/* every group of level 1 starts at 0: they overlap */
		for (uint64_t j = 0; j < lv[1].nodes; j++)
			bfi_put32(b + sec.offset + lv[1].groups_offset + j * 4, 0);
		found = 1;
	}
	EXPECT(found);
	EXPECT_RC(test_write_file(idx, b, len), 0);
	free(b);
	bfi_snapshot *s;
	bfi_result *r;
	EXPECT_RC(bfi_open(bad, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	if (!s || !r)
		return;
	int refused = 0, answered = 0;
	char key[24];
	for (uint32_t u = 0; u < UNIVERSE; u++) {
		int n = snprintf(key, sizeof key, "k%u", u);
		int rc = bfi_query_key_layout(s, BFI_LAYOUT_TREE, key, (size_t)n, r);
		EXPECT(rc == 0 || rc == BFI_E_BAD_LAYOUT);
		refused += rc == BFI_E_BAD_LAYOUT;
		answered += rc == 0 && bfi_result_count(r) > 0;
	}
	EXPECT(refused > 0 && answered == 0);
	struct bfi_verify_report rep;
	EXPECT(bfi_verify(bad, &rep, NULL, NULL) != 0);
	bfi_result_destroy(&r);
	bfi_close(&s);
}

/* Of the n sets of the snapshot at path, named f<family>-<i>: how many follow one of their family. */
static int family_neighbours(const char *path, uint32_t n)
{
	bfi_snapshot *snp;
	EXPECT_RC(bfi_open(path, 0, &snp), 0);
	if (!snp)
		return -1;
	int same = 0, prev = -1;
	for (uint32_t ord = 0; ord < n; ord++) {
		const char *name;
		size_t len;
		EXPECT_RC(bfi_set_name(snp, ord, &name, &len), 0);
		int f = atoi(name + 1);
		same += f == prev;
		prev = f;
	}
	bfi_close(&snp);
	return same;
}

/* MinHash order: sets of one family (sharing most keys) end up side by side. */
static void check_cluster(int explicit_flag)
{
	enum { FAMILIES = 40, PER = 25 };
	char path[4300];
	snprintf(path, sizeof path, "%s/clustered", test_tmpdir());
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_TREE;
	o.cluster = explicit_flag; /* a tree alone is clustered by default too */
	o.fanout = 8;
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	uint64_t s = 21;
	for (int j = 0; j < FAMILIES * PER; j++) { /* interleaved: family j % FAMILIES */
		int f = j % FAMILIES;
		char name[24], key[24];
		uint32_t ord;
		snprintf(name, sizeof name, "f%d-%d", f, j / FAMILIES);
		EXPECT_RC(bfi_writer_set(w, name, strlen(name), &ord), 0);
		for (int i = 0; i < 60; i++) {
			int n = test_rand(&s) % 10 ? snprintf(key, sizeof key, "fam%d-%d", f, (int)(test_rand(&s) % 80))
			                          : snprintf(key, sizeof key, "noise%d", (int)(test_rand(&s) % 100000));
			EXPECT_RC(bfi_writer_key(w, ord, key, (size_t)n), 0);
		}
	}
	EXPECT_RC(bfi_writer_finish(w, path, NULL), 0);
	bfi_writer_destroy(&w);
	int same = family_neighbours(path, FAMILIES * PER);
	printf("clustered order%s: %d of %d neighbours share a family (interleaved input: 0)\n",
	       explicit_flag ? " (--cluster)" : " (default)", same, FAMILIES * PER - 1);
	EXPECT(same > FAMILIES * PER * 85 / 100); /* 916 grouped; 722 by the sketches alone */
}

/*
 * Strains: families whose sets share a third of their keys (a family's 40
 * and 80 of their own). Each of a set's MinHashes is the family's with
 * probability 1/3, so sorting by the sketches alone kept a third of each
 * family together (323 of 999 neighbours); sets agreeing on any MinHash
 * are grouped, which keeps together all but the fifth whose four MinHashes
 * all fall in their own keys (about 740).
 */
static void test_cluster_strains(void)
{
	enum { FAMILIES = 50, PER = 20 };
	char path[4300];
	snprintf(path, sizeof path, "%s/strains", test_tmpdir());
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_TREE;
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	for (int j = 0; j < FAMILIES * PER; j++) { /* interleaved: family j % FAMILIES */
		int f = j % FAMILIES;
		char name[24], key[32];
		uint32_t ord;
		snprintf(name, sizeof name, "f%d-%d", f, j / FAMILIES);
		EXPECT_RC(bfi_writer_set(w, name, strlen(name), &ord), 0);
		for (int i = 0; i < 120; i++) {
			int n = i < 40 ? snprintf(key, sizeof key, "core%d-%d", f, i)
			               : snprintf(key, sizeof key, "own%d-%d", j, i);
			EXPECT_RC(bfi_writer_key(w, ord, key, (size_t)n), 0);
		}
	}
	EXPECT_RC(bfi_writer_finish(w, path, NULL), 0);
	bfi_writer_destroy(&w);
	int same = family_neighbours(path, FAMILIES * PER);
	printf("strains: %d of %d neighbours share a family\n", same, FAMILIES * PER - 1);
	EXPECT(same > FAMILIES * PER * 6 / 10);
}

static void test_cluster(void)
{
	check_cluster(1);
	check_cluster(0);
}

int main(void)
{
	test_run("tree: fanout 2, against exact truth", test_fanout_2);
	test_run("tree: fanout 8, against exact truth", test_fanout_8);
	test_run("tree: fanout 64, against exact truth", test_fanout_64);
	test_run("tree: strains sharing a third of their keys stay side by side", test_cluster_strains);
	test_run("tree: one width for every node answers exactly as flat", test_one_width);
	test_run("tree: the paper's incremental build, against exact truth and flat", test_incremental);
	test_run("tree: the incremental build's bf-cost is in the paper's range", test_incremental_bf_cost);
	test_run("tree: corrupt child groups are refused, not followed", test_bad_groups);
	test_run("tree: the union pre-filter takes one line a key, or k with --classic-prefilters",
	         test_line_prefilter);
	test_run("tree: --cluster, and a tree alone by default, put similar sets side by side", test_cluster);
	return test_exit();
}
