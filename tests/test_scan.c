/*
 * test_scan.c - bfi_scan (reader/scan.c) against the mapped queries: on
 * flat layouts of every row kind (packed rows in blocks of 512, a grouped
 * run of sets of mixed size, one block of lined rows, pre-filters of both
 * kinds, which are part of the answer, --fixed-width), on plain filters,
 * on trees (implied groups, with and without a pre-filter, and the
 * incremental build's explicit groups) and on RAMBO, a batch of single
 * keys present and absent, expressions and threshold term lists is
 * answered by scanning, in one pass and in passes of a few pages, and
 * every answer and score must be what bfi_query_expr / bfi_query_threshold
 * give from the mapping on the same layout. A pass with no bound reads
 * each page at most once; a small budget makes more rounds, each within
 * it but for a query that alone needs more.
 */
#include <string.h>
#include <sys/stat.h>

#include "test.h"

#define QUERIES 240
#define BIG 2 /* mixed: every set of 800 keys, so that a block has many rows */
static char dir[4200];

/* Set j holds keys "w<j>-<i>" for i below its size, which varies from set to set. */
static uint32_t size_of(uint32_t j, int mixed)
{
	if (mixed == BIG)
		return 800;
	return mixed ? (j % 9 == 0 ? 400 : 6 + j % 5) : 40;
}

static int build(const char *path, uint32_t sets, int mixed, struct bfi_build_options *o)
{
	bfi_writer *w = NULL;
	int rc = bfi_writer_create(o, &w);
	for (uint32_t j = 0; rc == 0 && j < sets; j++) {
		char name[32], key[48];
		uint32_t ord;
		rc = bfi_writer_set(w, name, (size_t)snprintf(name, sizeof name, "s%u", j), &ord);
		for (uint32_t i = 0; rc == 0 && i < size_of(j, mixed); i++)
			rc = bfi_writer_key(w, ord, key, (size_t)snprintf(key, sizeof key, "w%u-%u", j, i));
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, path, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

/* Query q of the batch: a key, an expression or a term list, over sets of the snapshot. */
static int make_query(uint32_t q, uint32_t sets, int mixed, bfi_expr **e)
{
	uint64_t st = q * 7919u + 1;
	uint32_t j = (uint32_t)(test_rand(&st) % sets), i = (uint32_t)(test_rand(&st) % size_of(j, mixed));
	char text[256];
	int n;
	switch (q % 4) {
	case 0: /* a key the set holds */
		n = snprintf(text, sizeof text, "w%u-%u", j, i);
		return bfi_expr_key(text, (size_t)n, e);
	case 1: /* one no set holds */
		n = snprintf(text, sizeof text, "absent-%u", q);
		return bfi_expr_key(text, (size_t)n, e);
	case 2: /* an expression: two keys of the set, or a key of another */
		n = snprintf(text, sizeof text, "(w%u-%u w%u-0) OR w%u-0", j, i, j, (j + 1) % sets);
		return bfi_expr_parse(text, (size_t)n, e, NULL);
	default: { /* a term list: most of the set's keys and a few absent */
		const void *keys[12];
		size_t lens[12];
		char buf[12][32];
		for (int t = 0; t < 12; t++) {
			lens[t] = (size_t)(t < 9 ? snprintf(buf[t], 32, "w%u-%u", j, (i + t) % size_of(j, mixed))
			                         : snprintf(buf[t], 32, "none-%u-%d", q, t));
			keys[t] = buf[t];
		}
		return bfi_expr_terms(keys, lens, 12, e);
	}
	}
}

/*
 * The batch: QUERIES queries over sets (mixed: of mixed size), each a
 * result for its scan, and in want the answers s's mapping gives on layout.
 */
static void batch(const bfi_snapshot *s, unsigned layout, uint32_t sets, int mixed, bfi_expr **qs,
                  bfi_result **want, bfi_result **got)
{
	for (uint32_t q = 0; q < QUERIES; q++) {
		EXPECT_RC(make_query(q, sets, mixed, &qs[q]), 0);
		EXPECT_RC(bfi_result_create(&want[q]), 0);
		EXPECT_RC(bfi_result_create(&got[q]), 0);
		EXPECT_RC(q % 4 == 3 ? bfi_query_threshold(s, layout, qs[q], 0.7, want[q])
		                     : bfi_query_expr(s, layout, qs[q], want[q]),
		          0);
	}
}

static int same(const bfi_result *a, const bfi_result *b)
{
	size_t n = bfi_result_count(a);
	if (n != bfi_result_count(b))
		return 0;
	if (n && memcmp(bfi_result_ordinals(a), bfi_result_ordinals(b), n * sizeof(uint32_t)))
		return 0;
	const uint32_t *sa = bfi_result_scores(a), *sb = bfi_result_scores(b);
	return (sa == NULL) == (sb == NULL) && (!sa || !n || !memcmp(sa, sb, n * sizeof(uint32_t)));
}

/* Parts a scan of the layout takes with no bound on memory: a flat block or run each, else one. */
static uint64_t parts(const bfi_snapshot *s, unsigned layout)
{
	if (layout != BFI_LAYOUT_FLAT)
		return 1;
	uint64_t n = 0;
	struct bfi_layout_info li = test_layout(s, BFI_LAYOUT_FLAT);
	for (uint32_t b = 0; b < li.u.flat.blocks; b++) {
		struct bfi_block_info bi;
		if (bfi_block(s, b, &bi) == 0)
			n++;
	}
	return n;
}

/* The snapshot name, built in dir from sets (of mixed size) with o, and opened; NULL on failure. */
static bfi_snapshot *built(const char *name, uint32_t sets, int mixed, struct bfi_build_options *o)
{
	char path[4300];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	EXPECT_RC(build(path, sets, mixed, o), 0);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(path, 0, &s), 0);
	return s;
}

/* A batch's queries and results freed. */
static void release(bfi_expr **qs, bfi_result **want, bfi_result **got)
{
	for (uint32_t q = 0; q < QUERIES; q++) {
		bfi_expr_free(&qs[q]);
		bfi_result_destroy(&want[q]);
		bfi_result_destroy(&got[q]);
	}
}

static void check_layout(const char *name, uint32_t sets, int mixed, struct bfi_build_options *o,
                         unsigned layout)
{
	bfi_snapshot *s = built(name, sets, mixed, o);
	if (s == NULL)
		return;
	bfi_expr *qs[QUERIES];
	bfi_result *want[QUERIES], *got[QUERIES];
	batch(s, layout, sets, mixed, qs, want, got);
	struct bfi_info in;
	bfi_info(s, &in);
	uint64_t budgets[3] = {0, 64u << 10, 4096};
	uint32_t nonempty = 0;
	for (int bu = 0; bu < 3; bu++) {
		struct bfi_scan_stats st;
		EXPECT_RC(bfi_scan(s, layout, (const bfi_expr *const *)qs, QUERIES, 0.7, got, budgets[bu],
		                   &st),
		          0);
		int diff = 0;
		for (uint32_t q = 0; q < QUERIES; q++) {
			diff += !same(want[q], got[q]);
			nonempty += bu == 0 && bfi_result_count(want[q]) > 0;
		}
		if (diff)
			fprintf(stderr, "%s, budget %llu: %d answers differ\n", name,
			        (unsigned long long)budgets[bu], diff);
		EXPECT(diff == 0);
		uint64_t np = parts(s, layout);
		EXPECT(st.passes == 1 && st.bytes_read > 0);
		if (bu == 0) /* no bound: a round a part, every page read once at most */
			EXPECT(st.rounds <= np && st.bytes_read <= in.file_size);
		else if (layout == BFI_LAYOUT_PLAIN && o->bits == 0) /* parts of filters that fit the
		                                                       budget: read once still */
			EXPECT(st.rounds > np && st.peak <= budgets[bu] + 8192 && st.bytes_read <= in.file_size);
		else /* more rounds, each within the budget but for a query that alone needs more */
			EXPECT(st.rounds > np &&
			       (st.peak <= budgets[bu] + 512 * 1024 || st.rounds >= QUERIES));
		printf("%s: budget %llu: %llu rounds over %llu parts, %llu bytes read of %llu, at most "
		       "%llu held\n",
		       name, (unsigned long long)budgets[bu], (unsigned long long)st.rounds,
		       (unsigned long long)np, (unsigned long long)st.bytes_read,
		       (unsigned long long)in.file_size, (unsigned long long)st.peak);
	}
	EXPECT(nonempty >= QUERIES / 2); /* the comparison is not of empty answers */
	release(qs, want, got);
	bfi_close(&s);
}

static void check(const char *name, uint32_t sets, int mixed, struct bfi_build_options *o)
{
	check_layout(name, sets, mixed, o, BFI_LAYOUT_FLAT);
}

static void test_shapes(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	check("packed-512", 1500, 0, &o); /* blocks of 512 sets of packed rows */
	bfi_build_options_init(&o);
	check("mixed", 400, 1, &o); /* sets of mixed size: grouped runs, blocks by width */
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.max_block_sets = 4608;
	check("one-block", 3000, 0, &o);
	bfi_build_options_init(&o);
	o.max_block_sets = 256;
	o.prefilter = BFI_PREFILTER_ALWAYS;
	check("prefilters", 1500, 1, &o); /* small blocks, whose pre-filters rule keys out */
	o.classic_prefilters = 1;
	check("classic-prefilters", 1500, 1, &o);
	bfi_build_options_init(&o);
	o.fixed_width = 1;
	check("fixed-width", 300, 1, &o);
}

/*
 * One block of many rows, more of which the batch needs than the budget
 * holds, while a row per key of the batch fits: answered in one pass over
 * the rows, range by range, each page read once and no more held than the
 * budget, as mapped; and with a budget too small for that state, in rounds.
 */
/* Runs of check_rows whose reads three threads shared, none reading three quarters. */
static int spread;

static void check_rows(const char *name, uint32_t sets, struct bfi_build_options *o, int narrow,
                       unsigned layout)
{
	bfi_snapshot *s = built(name, sets, BIG, o);
	if (s == NULL)
		return;
	bfi_expr *qs[QUERIES];
	bfi_result *want[QUERIES], *got[QUERIES];
	batch(s, layout, sets, BIG, qs, want, got);
	struct bfi_info in;
	bfi_info(s, &in);
	struct bfi_scan_stats all;
	EXPECT_RC(bfi_scan(s, layout, (const bfi_expr *const *)qs, QUERIES, 0.7, got, 0, &all),
	          0);
	/* half the pages; a quarter, where the pre-filter then takes several ranges; too little */
	uint64_t budgets[3] = {all.peak / 2, narrow ? all.peak / 4 : all.peak / 2, 64u << 10};
	for (int bu = 0; bu < 3; bu++) {
		struct bfi_scan_stats st = {.busiest = 7}; /* bfi_scan leaves what it did not know */
		EXPECT_RC(bfi_scan(s, layout, (const bfi_expr *const *)qs, QUERIES, 0.7, got,
		                   budgets[bu], &st),
		          0);
		int diff = 0, nonempty = 0;
		for (uint32_t q = 0; q < QUERIES; q++) {
			diff += !same(want[q], got[q]);
			nonempty += bfi_result_count(want[q]) > 0;
		}
		if (diff)
			fprintf(stderr, "%s, budget %llu: %d answers differ\n", name,
			        (unsigned long long)budgets[bu], diff);
		EXPECT(diff == 0 && nonempty >= QUERIES / 2);
		printf("%s: budget %llu of the %llu the batch needs: %llu ranges, %llu rounds, %llu bytes "
		       "read of %llu, at most %llu held\n",
		       name, (unsigned long long)budgets[bu], (unsigned long long)all.peak,
		       (unsigned long long)st.ranges, (unsigned long long)st.rounds,
		       (unsigned long long)st.bytes_read, (unsigned long long)in.file_size,
		       (unsigned long long)st.peak);
		if (bu < 2) /* ranges, each page read once (but the one where the pre-filter and the
		                rows meet, read by the pre-filter's ranges and the rows'), within the
		                budget */
			EXPECT(st.ranges >= 2 && st.rounds == 0 &&
			       st.bytes_read <= all.bytes_read + (o->prefilter ? 4096 : 0) +
			                                (layout != BFI_LAYOUT_FLAT ? 8 * 4096 : 0) &&
			       st.peak <= budgets[bu]);
		else /* the state does not fit: rounds, which read shared pages again */
			EXPECT(st.ranges == 0 && st.rounds > 1 && st.bytes_read > all.bytes_read);
		/*
		 * The reads split over three threads: the same answers from the
		 * same bytes, the most any one thread read less than all of them
		 * where a round or range wants enough pages to share out.
		 */
		struct bfi_scan_stats par;
		EXPECT_RC(bfi_scan_parallel(s, layout, (const bfi_expr *const *)qs, QUERIES, 0.7, got,
		                            budgets[bu], 3, &par),
		          0);
		diff = 0;
		for (uint32_t q = 0; q < QUERIES; q++)
			diff += !same(want[q], got[q]);
		printf("%s: budget %llu on 3 threads: %d answers differ, %llu bytes read, the busiest "
		       "thread %llu\n",
		       name, (unsigned long long)budgets[bu], diff, (unsigned long long)par.bytes_read,
		       (unsigned long long)par.busiest);
		EXPECT(diff == 0 && par.bytes_read == st.bytes_read && st.busiest == 7 &&
		       par.busiest <= par.bytes_read && par.busiest > 0);
		spread += par.busiest < par.bytes_read * 3 / 4;
	}
	struct bfi_scan_stats bad;
	EXPECT_RC(bfi_scan_parallel(s, layout, (const bfi_expr *const *)qs, QUERIES, 0.7, got, 0, 0,
	                            &bad),
	          BFI_E_INVALID);
	EXPECT_RC(bfi_scan_parallel(s, layout, (const bfi_expr *const *)qs, QUERIES, 0.7, got, 0,
	                            BFI_SCAN_THREADS_MAX + 1, &bad),
	          BFI_E_INVALID);
	release(qs, want, got);
	bfi_close(&s);
}

static void test_rows(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.max_block_sets = 1024;
	o.keep_order = 1;
	check_rows("rows-lined", 1024, &o, 0, BFI_LAYOUT_FLAT);
	check_rows("rows-packed", 700, &o, 0, BFI_LAYOUT_FLAT);
	o.prefilter = BFI_PREFILTER_ALWAYS;
	check_rows("rows-prefilter", 1024, &o, 1, BFI_LAYOUT_FLAT);
	o.classic_prefilters = 1;
	check_rows("rows-classic-prefilter", 700, &o, 1, BFI_LAYOUT_FLAT);
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_RAMBO; /* rows of B = 32 cells, 4 bytes; R repetitions */
	check_rows("rows-rambo", 1024, &o, 0, BFI_LAYOUT_RAMBO);
	o.cells = 130; /* rows of three words */
	check_rows("rows-rambo-wide", 1040, &o, 0, BFI_LAYOUT_RAMBO);
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_TREE;
	o.fanout = 8;
	o.all_levels = 1;
	check_rows("rows-tree", 1024, &o, 0, BFI_LAYOUT_TREE);
	o.prefilter = BFI_PREFILTER_ALWAYS;
	check_rows("rows-tree-prefilter", 1024, &o, 0, BFI_LAYOUT_TREE);
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_TREE;
	o.bloofi_incremental = 1; /* explicit groups: their tables read after the rows */
	check_rows("rows-tree-explicit", 600, &o, 0, BFI_LAYOUT_TREE);
	EXPECT(spread >= 4); /* the reads of a round or range of more than a few MiB were shared */
}

/*
 * Four flat blocks of 1,024 sets, each block's pre-filter on: 2,000 keys,
 * each of one set (so of one block) or of none. A range pass keeps a row
 * only for the keys a block's pre-filter lets through, so a budget below
 * what a row for every key would take (bfi_scan_cost's key_state a key)
 * still reads each block's rows in one pass, not in rounds; the state a
 * key took, as bfi_scan_parallel reports it, holds less than half a row;
 * and the answers are the mapping's.
 */
#define SPLIT_KEYS 2000
static void test_prefiltered_state(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.max_block_sets = 1024;
	o.keep_order = 1;
	o.prefilter = BFI_PREFILTER_ALWAYS;
	bfi_snapshot *s = built("split-blocks", 4096, BIG, &o);
	if (s == NULL)
		return;
	EXPECT(parts(s, BFI_LAYOUT_FLAT) == 4);
	static bfi_expr *qs[SPLIT_KEYS];
	static bfi_result *want[SPLIT_KEYS], *got[SPLIT_KEYS];
	uint64_t seed = 99;
	for (uint32_t q = 0; q < SPLIT_KEYS; q++) {
		char text[48];
		uint32_t j = (uint32_t)(test_rand(&seed) % 4096), i = (uint32_t)(test_rand(&seed) % 800);
		int n = q % 5 == 4 ? snprintf(text, sizeof text, "none-%u", q)
		                   : snprintf(text, sizeof text, "w%u-%u", j, i);
		EXPECT_RC(bfi_expr_key(text, (size_t)n, &qs[q]), 0);
		EXPECT_RC(bfi_result_create(&want[q]), 0);
		EXPECT_RC(bfi_result_create(&got[q]), 0);
		EXPECT_RC(bfi_query_expr(s, BFI_LAYOUT_FLAT, qs[q], want[q]), 0);
	}
	struct bfi_scan_cost cost;
	EXPECT_RC(bfi_scan_cost(s, BFI_LAYOUT_FLAT, &cost), 0);
	/* less than a row for every key and the least range of rows beside it */
	uint64_t budget = (uint64_t)SPLIT_KEYS * cost.key_state;
	struct bfi_scan_stats st;
	EXPECT_RC(bfi_scan_parallel(s, BFI_LAYOUT_FLAT, (const bfi_expr *const *)qs, SPLIT_KEYS, 0.7,
	                            got, budget, 2, &st),
	          0);
	int diff = 0, nonempty = 0;
	for (uint32_t q = 0; q < SPLIT_KEYS; q++) {
		diff += !same(want[q], got[q]);
		nonempty += bfi_result_count(want[q]) > 0;
	}
	printf("4 blocks, %u keys, budget %llu (a row for every key: %llu a key): %d answers differ, "
	       "%llu ranges, %llu rounds, %llu bytes of state a key, at most %llu held\n",
	       SPLIT_KEYS, (unsigned long long)budget, (unsigned long long)cost.key_state, diff,
	       (unsigned long long)st.ranges, (unsigned long long)st.rounds,
	       (unsigned long long)st.key_state, (unsigned long long)st.peak);
	EXPECT(diff == 0 && nonempty >= SPLIT_KEYS * 3 / 4);
	EXPECT(st.ranges >= 4 && st.rounds == 0 && st.peak <= budget);
	EXPECT(st.key_state > 0 && st.key_state < cost.key_state - 128 / 2); /* rows of 128 bytes */
	/* bfi_scan leaves key_state as it was: a caller built before it has no room for it */
	struct bfi_scan_stats old = {.key_state = 7};
	EXPECT_RC(bfi_scan(s, BFI_LAYOUT_FLAT, (const bfi_expr *const *)qs, SPLIT_KEYS, 0.7, got,
	                   budget, &old),
	          0);
	EXPECT(old.key_state == 7 && old.rounds == 0 && old.bytes_read == st.bytes_read);
	for (uint32_t q = 0; q < SPLIT_KEYS; q++) {
		bfi_expr_free(&qs[q]);
		bfi_result_destroy(&want[q]);
		bfi_result_destroy(&got[q]);
	}
	bfi_close(&s);
}

/* A collection of two segments, a set of each removed: scanned segment by segment, as mapped. */
static void test_collection(void)
{
	char coll[4300], seg[4400];
	snprintf(coll, sizeof coll, "%s/coll", dir);
	char err[4600];
	bfi_collection *c = NULL;
	EXPECT_RC(bfi_collection_begin(coll, BFI_COLL_CREATE, &c, err, sizeof err), 0);
	for (int part = 0; c && part < 2; part++) {
		snprintf(seg, sizeof seg, "%s", bfi_collection_segment_path(c));
		struct bfi_build_options o;
		bfi_build_options_init(&o);
		bfi_writer *w = NULL;
		int rc = bfi_writer_create(&o, &w);
		for (uint32_t j = (uint32_t)part * 300; rc == 0 && j < (uint32_t)part * 300 + 300; j++) {
			char name[32], key[48];
			uint32_t ord;
			rc = bfi_writer_set(w, name, (size_t)snprintf(name, sizeof name, "s%u", j), &ord);
			for (uint32_t i = 0; rc == 0 && i < size_of(j, 1); i++)
				rc = bfi_writer_key(w, ord, key, (size_t)snprintf(key, sizeof key, "w%u-%u", j, i));
		}
		EXPECT_RC(rc ? rc : bfi_writer_finish(w, seg, NULL), 0);
		bfi_writer_destroy(&w);
		bfi_snapshot *one = NULL;
		struct bfi_info in;
		EXPECT_RC(bfi_open(seg, BFI_OPEN_NO_CATALOG, &one), 0);
		if (one == NULL)
			break;
		bfi_info(one, &in);
		bfi_close(&one);
		EXPECT_RC(bfi_collection_add(c, in.n_sets, in.snapshot_id), 0);
	}
	EXPECT_RC(bfi_collection_remove(c, 5), 0);
	EXPECT_RC(bfi_collection_remove(c, 400), 0);
	EXPECT_RC(bfi_collection_commit(c), 0);
	bfi_collection_end(&c);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(coll, 0, &s), 0);
	if (s == NULL)
		return;
	bfi_expr *qs[QUERIES];
	bfi_result *want[QUERIES], *got[QUERIES];
	batch(s, BFI_LAYOUT_FLAT, 600, 1, qs, want, got);
	struct bfi_scan_stats st;
	EXPECT_RC(bfi_scan(s, 0, (const bfi_expr *const *)qs, QUERIES, 0.7, got, 8192, &st), 0);
	int diff = 0, removed = 0;
	for (uint32_t q = 0; q < QUERIES; q++) {
		diff += !same(want[q], got[q]);
		for (size_t x = 0; x < bfi_result_count(got[q]); x++)
			removed += bfi_result_ordinals(got[q])[x] == 5 || bfi_result_ordinals(got[q])[x] == 400;
	}
	printf("collection: %d answers differ, %d removed sets answered; %llu passes\n", diff, removed,
	       (unsigned long long)st.passes);
	EXPECT(diff == 0 && removed == 0 && st.passes == 2);
	release(qs, want, got);
	bfi_close(&s);
}

static void test_layouts(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_PLAIN;
	check_layout("plain", 600, 1, &o, BFI_LAYOUT_PLAIN);
	o.bits = 40000; /* filters wider than a page: a byte a probe */
	check_layout("plain-wide", 120, 1, &o, BFI_LAYOUT_PLAIN);
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_TREE;
	o.fanout = 8;
	o.all_levels = 1;
	check_layout("tree", 700, 1, &o, BFI_LAYOUT_TREE);
	o.prefilter = BFI_PREFILTER_ALWAYS;
	check_layout("tree-prefilter", 700, 1, &o, BFI_LAYOUT_TREE);
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_TREE;
	o.bloofi_incremental = 1;
	check_layout("tree-explicit", 300, 1, &o, BFI_LAYOUT_TREE);
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_RAMBO | BFI_BUILD_FLAT;
	check_layout("rambo", 900, 1, &o, BFI_LAYOUT_RAMBO);
}

/* Pack src into path in frames of 16 KiB, so a scan decompresses a few of many. */
static int pack_small(const char *src, const char *path)
{
	struct bfi_pack_options po;
	bfi_pack_options_init(&po);
	po.frame = 16384;
	po.threads = 1;
	char err[4600];
	int rc = bfi_pack(src, path, &po, err, sizeof err);
	if (rc)
		fprintf(stderr, "pack: %s\n", err);
	return rc;
}

/*
 * The batch scanned from the pack at packed, opened with BFI_OPEN_SCAN,
 * on layout within budget, against the answers mapped from the directory
 * at dir_path. Returns bfi_scan's code; *diff counts answers that differ.
 */
static int scan_pack(const char *dir_path, const char *packed, unsigned layout, uint64_t budget,
                     int *diff, struct bfi_scan_stats *st)
{
	bfi_snapshot *s = NULL, *p = NULL;
	EXPECT_RC(bfi_open(dir_path, 0, &s), 0);
	int rc = bfi_open(packed, BFI_OPEN_SCAN, &p);
	if (s == NULL || rc) {
		bfi_close(&s);
		return rc;
	}
	bfi_expr *qs[QUERIES];
	bfi_result *want[QUERIES], *got[QUERIES];
	batch(s, layout, 600, 1, qs, want, got);
	/* the pack's rows are not in memory: only a scan may answer */
	EXPECT_RC(bfi_query_expr(p, layout, qs[0], got[0]), BFI_E_SCAN_ONLY);
	rc = bfi_scan(p, layout, (const bfi_expr *const *)qs, QUERIES, 0.7, got, budget, st);
	*diff = 0;
	for (uint32_t q = 0; rc == 0 && q < QUERIES; q++)
		*diff += !same(want[q], got[q]);
	for (uint32_t q = 0; q < QUERIES; q++) {
		bfi_expr_free(&qs[q]);
		bfi_result_destroy(&want[q]);
		bfi_result_destroy(&got[q]);
	}
	bfi_close(&s);
	bfi_close(&p);
	return rc;
}

static void test_packs(void)
{
	char snap[4300], packed[4400], coll[4300];
	snprintf(snap, sizeof snap, "%s/packed-src", dir);
	snprintf(packed, sizeof packed, "%s/packed-src.pack", dir);
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_FLAT | BFI_BUILD_TREE;
	EXPECT_RC(build(snap, 600, 1, &o), 0);
	EXPECT_RC(pack_small(snap, packed), 0);
	struct bfi_info in;
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(packed, BFI_OPEN_SCAN, &s), 0);
	if (s == NULL)
		return;
	bfi_info(s, &in);
	struct stat pst;
	uint64_t pack_size = stat(packed, &pst) == 0 ? (uint64_t)pst.st_size : 0;
	const uint8_t *rows, *pre;
	uint64_t bytes;
	EXPECT_RC(bfi_block_rows(s, 0, &rows, &bytes, &pre), BFI_E_SCAN_ONLY);
	bfi_close(&s);
	unsigned layouts[2] = {BFI_LAYOUT_FLAT, BFI_LAYOUT_TREE};
	uint64_t budgets[2] = {0, 8192};
	for (int l = 0; l < 2; l++)
		for (int b = 0; b < 2; b++) {
			int diff = -1;
			struct bfi_scan_stats st;
			EXPECT_RC(scan_pack(snap, packed, layouts[l], budgets[b], &diff, &st), 0);
			printf("pack, %s, budget %llu: %d answers differ; %llu rounds, %llu bytes of %llu, "
			       "%llu of the pack's %llu decompressed\n",
			       l ? "tree" : "flat", (unsigned long long)budgets[b], diff,
			       (unsigned long long)st.rounds, (unsigned long long)st.bytes_read,
			       (unsigned long long)in.file_size, (unsigned long long)st.packed,
			       (unsigned long long)pack_size);
			EXPECT(diff == 0 && st.bytes_read > 0 && st.packed > 0);
			/* in one round, no frame is decompressed twice: the frames kept are read again */
			if (b == 0)
				EXPECT(st.bytes_read <= in.file_size && st.packed <= pack_size);
		}
	/* the collection of test_collection, packed: segment by segment, as mapped */
	snprintf(coll, sizeof coll, "%s/coll", dir);
	snprintf(packed, sizeof packed, "%s/coll.pack", dir);
	EXPECT_RC(pack_small(coll, packed), 0);
	int diff = -1;
	struct bfi_scan_stats st;
	EXPECT_RC(scan_pack(coll, packed, BFI_LAYOUT_FLAT, 8192, &diff, &st), 0);
	printf("packed collection: %d answers differ, %llu passes\n", diff,
	       (unsigned long long)st.passes);
	EXPECT(diff == 0 && st.passes == 2);
	/*
	 * A byte changed in the frame holding the middle of the index: the
	 * tree's rows there are read, so the scan (or the open, should the
	 * frame hold a table) fails on that frame, never answers from it.
	 */
	snprintf(packed, sizeof packed, "%s/packed-src.pack", dir);
	size_t len = 0;
	uint8_t *b = test_read_file(packed, &len);
	EXPECT(b != NULL && len > 100000);
	if (b == NULL)
		return;
	/* the index follows the catalog: the frame at 3/4 of the pack's bytes is within it */
	b[len * 3 / 4] ^= 0x40;
	char bad[4500];
	snprintf(bad, sizeof bad, "%s/damaged.pack", dir);
	FILE *f = fopen(bad, "wb");
	EXPECT(f && fwrite(b, 1, len, f) == len);
	if (f)
		fclose(f);
	free(b);
	int rc = scan_pack(snap, bad, BFI_LAYOUT_TREE, 0, &diff, &st);
	printf("damaged pack: %s\n", bfi_strerror(rc));
	EXPECT(rc == BFI_E_PACK_FRAME);
}

static void test_refusals(void)
{
	char path[4300];
	snprintf(path, sizeof path, "%s/tree-only", dir);
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_TREE;
	EXPECT_RC(build(path, 50, 0, &o), 0);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(path, 0, &s), 0);
	bfi_expr *e = NULL;
	bfi_result *r = NULL;
	EXPECT_RC(bfi_expr_key("w1-1", 4, &e), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	EXPECT_RC(bfi_scan(s, BFI_LAYOUT_FLAT, (const bfi_expr *const *)&e, 1, 0, &r, 0, NULL),
	          BFI_E_NO_LAYOUT);
	EXPECT_RC(bfi_scan(s, 3, (const bfi_expr *const *)&e, 1, 0, &r, 0, NULL), BFI_E_INVALID);
	EXPECT_RC(bfi_scan(NULL, 0, (const bfi_expr *const *)&e, 1, 0, &r, 0, NULL), BFI_E_INVALID);
	bfi_expr_free(&e);
	bfi_result_destroy(&r);
	bfi_close(&s);
}

int main(void)
{
	snprintf(dir, sizeof dir, "%s", test_tmpdir());
	test_run("scan: keys, expressions and term lists scanned as the mapping answers them, on "
	         "every kind of flat block, in one pass and in many",
	         test_shapes);
	test_run("scan: a block the batch needs more of than memory holds, read once range by range "
	         "with a row of state a key, as mapped; rounds when that state does not fit; the "
	         "same answers and bytes with the reads shared by three threads",
	         test_rows);
	test_run("scan: blocks with pre-filters, a row of state only for the keys each lets "
	         "through: one range pass in a budget a row for every key would not fit",
	         test_prefiltered_state);
	test_run("scan: a collection with removed sets, segment by segment, as mapped",
	         test_collection);
	test_run("scan: plain, tree and RAMBO layouts scanned as the mapping answers them",
	         test_layouts);
	test_run("scan: a pack opened with BFI_OPEN_SCAN, flat and tree, a snapshot and a collection, "
	         "read frame by frame as mapped; a damaged frame read is an error, and nothing "
	         "but the scan answers",
	         test_packs);
	test_run("scan: a layout the snapshot lacks, or no snapshot, refused", test_refusals);
	test_cleanup();
	return test_exit();
}
