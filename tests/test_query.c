/*
 * test_query.c - the query language against exact truth: AND/OR
 * expressions, threshold queries and batches, on flat blocks and on the
 * plain layout, which at one fixed width set the same bits, so their
 * answers must be identical, scores included: that pins the flat kernels
 * to the simplest evaluator. (The parser: test_parse.c.)
 */
#include <errno.h>
#include <string.h>

#include "expr.h"     /* bfi__grow */
#include "internal.h" /* BFI_SHORT_ROW */
#include "test.h"

enum { NSETS = 700, UNIVERSE = 5000 };

static uint8_t member[NSETS][UNIVERSE / 8 + 1]; /* exact truth */
static char blocks_snap[4200], both_snap[4200];

static int has(int j, uint32_t u)
{
	return member[j][u / 8] >> (u % 8) & 1;
}

static int build(const char *path, int layouts, int fixed)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1; /* ordinal j is set j */
	/* varied widths: the fewest blocks of at most 512 sets; one width: one block */
	o.max_block_sets = fixed ? 0 : 512;
	o.block_cost = fixed ? 1 : 1ull << 40;
	o.prefilter = fixed ? BFI_PREFILTER_NEVER : BFI_PREFILTER_ALWAYS;
	o.fixed_width = fixed;
	o.layouts = (unsigned)layouts;
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	uint64_t s = 11;
	for (int j = 0; j < NSETS && rc == 0; j++) {
		char name[16], key[16];
		uint32_t ord;
		snprintf(name, sizeof name, "s%d", j);
		rc = bfi_writer_set(w, name, strlen(name), &ord);
		/* set sizes 10..300; key ids skewed toward small ids */
		uint32_t size = 10 + (uint32_t)(test_rand(&s) % 291);
		for (uint32_t i = 0; i < size && rc == 0; i++) {
			uint64_t r = test_rand(&s);
			uint32_t u = (uint32_t)((r % UNIVERSE) * ((r >> 40) % 3 + 1) / 3);
			member[j][u / 8] |= (uint8_t)(1u << (u % 8));
			rc = bfi_writer_key(w, ord, key, (size_t)snprintf(key, sizeof key, "k%u", u));
		}
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, path, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

/* A number from the pair (a, b), the same every run. */
static uint64_t pick(uint64_t a, uint64_t b)
{
	uint64_t st = a * 0x9E3779B97F4A7C15ull + b;
	return test_rand(&st);
}

/*
 * For batches only (no truth kept): wide sets random over the same keys.
 * kind 0: 700 sets in 512-set blocks of short rows with classic
 * pre-filters, which a batch passes over; kind 1: 2,100 sets in one block,
 * rows of 320 bytes, answered query by query; kind 2: 12,800 small sets
 * in five blocks of 2,560 (rows of 320 bytes) with line pre-filters, where
 * a key is tested against all five lines at once; kind 3: 500 sets in one
 * block of one-line rows without a pre-filter, which has a loop of its own;
 * kind 4: 65 sets in one block of packed rows (65 bits a row), copied out
 * to whole lines for the kernels, as a snapshot of few genomes is.
 */
static int batch_kind;

static uint32_t batch_set_size(uint32_t j)
{
	return batch_kind == 2 ? 5 + (uint32_t)(pick(j, 999) % 20) : 10 + (uint32_t)(pick(j, 999) % 291);
}

/*
 * Key i of set j: set j holds batch_set_size(j) keys, repeated up to per,
 * and "shared", in every set, so that one query of a batch matches more
 * sets than a batch's result first holds (ANSWERS_FIRST in query.c).
 */
static size_t batch_key(uint32_t j, uint32_t i, char *buf, size_t cap)
{
	if (i == 0)
		return (size_t)snprintf(buf, cap, "shared");
	uint32_t u = (uint32_t)(pick(j, i % batch_set_size(j)) % UNIVERSE);
	return (size_t)snprintf(buf, cap, "k%u", u);
}

static int build_batch_snap(const char *path, int kind)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.block_cost = kind == 1 || kind >= 3 ? 1u << 30 : 1;
	o.max_block_sets = kind == 2 ? 4608 : 0; /* rows past BFI_SHORT_ROW: streamed */
	o.prefilter = kind == 1 || kind >= 3 ? BFI_PREFILTER_NEVER : BFI_PREFILTER_ALWAYS;
	o.classic_prefilters = kind == 0;
	batch_kind = kind;
	uint32_t sets = kind == 0 ? NSETS : kind == 1 ? 4200 : kind == 2 ? 12800 : kind == 3 ? 500 : 65;
	return test_build_sets(&o, path, sets, kind == 2 ? 25 : 300, batch_key);
}

/* A random expression over keys k<u>, with its text and truth per set. */
struct rexpr {
	char text[2048];
	size_t len;
	uint8_t truth[NSETS];
};

static void gen(uint64_t *s, int depth, char *out, size_t *len, uint8_t *truth)
{
	int kind = depth >= 3 ? 0 : (int)(test_rand(s) % 3);
	if (kind == 0) {
		/* a key: mostly present ids, sometimes absent ones */
		uint32_t u = test_rand(s) % 8 == 0 ? UNIVERSE + (uint32_t)(test_rand(s) % 1000)
		                                   : (uint32_t)(test_rand(s) % (UNIVERSE / 3));
		*len += (size_t)sprintf(out + *len, "k%u", u);
		for (int j = 0; j < NSETS; j++)
			truth[j] = u < UNIVERSE && has(j, u);
		return;
	}
	uint8_t sub[NSETS];
	int n = 2 + (int)(test_rand(s) % 3);
	out[(*len)++] = '(';
	for (int i = 0; i < n; i++) {
		if (i)
			*len += (size_t)sprintf(out + *len, kind == 1 ? (test_rand(s) % 2 ? " AND " : " ")
			                                              : " OR ");
		gen(s, depth + 1, out, len, i ? sub : truth);
		for (int j = 0; i && j < NSETS; j++)
			truth[j] = kind == 1 ? (truth[j] && sub[j]) : (truth[j] || sub[j]);
	}
	out[(*len)++] = ')';
	out[*len] = 0;
}

static void make_exprs(struct rexpr *ex, int n, uint64_t seed)
{
	for (int i = 0; i < n; i++) {
		ex[i].len = 0;
		gen(&seed, 0, ex[i].text, &ex[i].len, ex[i].truth);
	}
}

static int same_answer(const bfi_result *a, const bfi_result *b)
{
	size_t n = bfi_result_count(a);
	if (n != bfi_result_count(b) ||
	    memcmp(bfi_result_ordinals(a), bfi_result_ordinals(b), n * sizeof(uint32_t)) != 0)
		return 0;
	const uint32_t *sa = bfi_result_scores(a), *sb = bfi_result_scores(b);
	if (!sa != !sb)
		return 0;
	return !sa || memcmp(sa, sb, n * sizeof(uint32_t)) == 0;
}

static void test_expressions(void)
{
	enum { N = 400 };
	static struct rexpr ex[N];
	make_exprs(ex, N, 5);
	bfi_snapshot *a, *b;
	bfi_result *ra, *rf, *rp;
	EXPECT_RC(bfi_open(blocks_snap, 0, &a), 0);
	EXPECT_RC(bfi_open(both_snap, 0, &b), 0);
	EXPECT_RC(bfi_result_create(&ra), 0);
	EXPECT_RC(bfi_result_create(&rf), 0);
	EXPECT_RC(bfi_result_create(&rp), 0);
	if (!a || !b)
		return;
	struct bfi_info in;
	bfi_info(a, &in);
	struct bfi_layout_info lf = test_layout(a, BFI_LAYOUT_FLAT);
	EXPECT(lf.u.flat.blocks == 2);
	uint64_t fn = 0, fp = 0, truths = 0, differ = 0;
	for (int i = 0; i < N; i++) {
		bfi_expr *e;
		size_t at;
		EXPECT_RC(bfi_expr_parse(ex[i].text, ex[i].len, &e, &at), 0);
		if (!e)
			continue;
		EXPECT_RC(bfi_query_expr(a, 0, e, ra), 0);
		EXPECT_RC(bfi_query_expr(b, BFI_LAYOUT_FLAT, e, rf), 0);
		EXPECT_RC(bfi_query_expr(b, BFI_LAYOUT_PLAIN, e, rp), 0);
		differ += !same_answer(rf, rp);
		uint8_t got[NSETS] = {0};
		for (size_t r = 0; r < bfi_result_count(ra); r++)
			got[bfi_result_ordinals(ra)[r]] = 1;
		for (int j = 0; j < NSETS; j++) {
			fn += ex[i].truth[j] && !got[j];
			fp += !ex[i].truth[j] && got[j];
			truths += ex[i].truth[j];
		}
		bfi_expr_free(&e);
	}
	printf("expressions: %d, true (set, query) pairs %llu, false negatives %llu, false positives "
	       "%llu; flat vs plain answers differ in %llu\n",
	       N, (unsigned long long)truths, (unsigned long long)fn, (unsigned long long)fp,
	       (unsigned long long)differ);
	EXPECT(truths > 1000);
	EXPECT(fn == 0);
	EXPECT(fp < truths / 10);
	EXPECT(differ == 0);
	bfi_result_destroy(&ra);
	bfi_result_destroy(&rf);
	bfi_result_destroy(&rp);
	bfi_close(&a);
	bfi_close(&b);
}

/*
 * Batches against one query at a time: the same ordinals and the same
 * bytes touched, on short rows (passes over blocks: line pre-filters,
 * none, classic; one block of one-line rows), and long rows (query by
 * query: one block, five blocks with line pre-filters), with bare keys and
 * expressions mixed, half the results counting bytes, with the AVX2 and
 * the portable kernel. A missing query fails the batch with BFI_E_INVALID.
 */
static void test_batches(void)
{
	enum { N = 1500 };
	static struct rexpr ex[N];
	make_exprs(ex, N, 77);
	char classic[4200], wide[4200], many[4200], line[4200], packed[4200];
	snprintf(classic, sizeof classic, "%s/batch-classic", test_tmpdir());
	snprintf(wide, sizeof wide, "%s/batch-wide", test_tmpdir());
	snprintf(many, sizeof many, "%s/batch-many", test_tmpdir());
	snprintf(line, sizeof line, "%s/batch-line", test_tmpdir());
	snprintf(packed, sizeof packed, "%s/batch-packed", test_tmpdir());
	EXPECT_RC(build_batch_snap(packed, 4), 0);
	EXPECT_RC(build_batch_snap(classic, 0), 0);
	EXPECT_RC(build_batch_snap(wide, 1), 0);
	EXPECT_RC(build_batch_snap(many, 2), 0);
	EXPECT_RC(build_batch_snap(line, 3), 0);
	enum { NS = 7 };
	const char *snaps[NS] = {blocks_snap, both_snap, classic, wide, many, line, packed};
	int lean = 0, streamed = 0, one_line = 0, packed_blocks = 0;
	/* each batch path is built for AVX2 and portable: run both where the
	 * machine has AVX2 */
	bfi_and_fn kernels[2] = {bfi__and_rows(), bfi__and_rows_portable};
	for (int run = 0; run < 2 * NS; run++) {
		int sn = run % NS;
		bfi__use_kernel(kernels[run / NS]);
		bfi_snapshot *s;
		EXPECT_RC(bfi_open(snaps[sn], 0, &s), 0);
		if (!s)
			return;
		struct bfi_info in;
		bfi_info(s, &in);
		struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
		uint64_t widest = 0;
		for (uint32_t b = 0; b < lf.u.flat.blocks; b++) {
			struct bfi_block_info bi;
			EXPECT_RC(bfi_block(s, b, &bi), 0);
			uint64_t row_bytes = (bi.n_sets + 511) / 512 * 64; /* in lines, as queries read it */
			widest = row_bytes > widest ? row_bytes : widest;
			one_line += lf.u.flat.blocks == 1 && bi.row_bits == 512 && bi.prefilter_bits == 0;
			packed_blocks += bi.row_bits % 512 != 0;
		}
		if (widest <= BFI_SHORT_ROW)
			lean++;
		else
			streamed++;
		for (unsigned layout = 1; layout <= (sn == 1 ? 2u : 1u); layout++) {
			static bfi_expr *es[N];
			static bfi_result *rs[N];
			bfi_result *one;
			EXPECT_RC(bfi_result_create(&one), 0);
			bfi_result_count_bytes(one, 1);
			for (int i = 0; i < N; i++) {
				/* most queries bare keys, as in a batch of k-mers; the rest
				 * expressions, which take the general path */
				if (i == 3) /* in every set */
					EXPECT_RC(bfi_expr_key("shared", 6, &es[i]), 0);
				else if (i % 4 != 1)
					EXPECT_RC(bfi_expr_key(ex[i].text + 1, strcspn(ex[i].text + 1, " )"), &es[i]), 0);
				else
					EXPECT_RC(bfi_expr_parse(ex[i].text, ex[i].len, &es[i], NULL), 0);
				EXPECT_RC(bfi_result_create(&rs[i]), 0);
				bfi_result_count_bytes(rs[i], i % 2);
			}
			EXPECT_RC(bfi_query_batch(s, layout, (const bfi_expr *const *)es, N, rs), 0);
			int differ = 0, bytes = 0, matched = 0;
			for (int i = 0; i < N; i++) {
				EXPECT_RC(bfi_query_expr(s, layout, es[i], one), 0);
				differ += !same_answer(one, rs[i]);
				bytes += i % 2 && bfi_result_touched(one) != bfi_result_touched(rs[i]);
				matched += bfi_result_count(one) > 0;
			}
			EXPECT(differ == 0);
			EXPECT(bytes == 0);
			EXPECT(matched > N / 10);
			if (sn >= 2) /* built by build_batch_snap: "shared" is in every set */
				EXPECT(bfi_result_count(rs[3]) == in.n_sets);
			/* a batch again into the same results: each starts afresh */
			EXPECT_RC(bfi_query_batch(s, layout, (const bfi_expr *const *)es, N, rs), 0);
			differ = 0;
			for (int i = 0; i < N; i++) {
				EXPECT_RC(bfi_query_expr(s, layout, es[i], one), 0);
				differ += !same_answer(one, rs[i]);
			}
			EXPECT(differ == 0);
			bfi_expr *keep = es[N / 2];
			es[N / 2] = NULL;
			EXPECT_RC(bfi_query_batch(s, layout, (const bfi_expr *const *)es, N, rs),
			          BFI_E_INVALID);
			es[N / 2] = keep;
			for (int i = 0; i < N; i++) {
				bfi_result_destroy(&rs[i]);
				bfi_expr_free(&es[i]);
			}
			bfi_result_destroy(&one);
		}
		bfi_close(&s);
	}
	bfi__use_kernel(NULL);
	printf("batches: %d snapshots of short rows, %d of long, %d packed blocks\n", lean, streamed,
	       packed_blocks);
	EXPECT(lean == 10 && streamed == 4);
	EXPECT(one_line == 2);      /* kind 3, each kernel */
	EXPECT(packed_blocks >= 4); /* kind 4's, and kind 0's last (188 sets), each kernel */
}

/* Key i of set j: 5 to 64 keys of 4,000, repeated up to 64 (test_many_blocks.c's sets). */
static size_t many_key(uint32_t j, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "k%u", (uint32_t)(pick(j, i % (5 + pick(j, 777) % 60)) % 4000));
}

static int build_one_block(const char *path, int pre)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.block_cost = 1u << 30;
	o.prefilter = pre ? BFI_PREFILTER_ALWAYS : BFI_PREFILTER_NEVER;
	o.classic_prefilters = pre == 2;
	batch_kind = 0;
	return test_build_sets(&o, path, NSETS, 300, batch_key);
}

/*
 * bfi_query_keys against one key at a time: for every key the same sets in
 * the same order, and the same bytes in all; on one block of short rows
 * with no, line and classic pre-filters, on one block of one-line rows
 * (450 sets, so the last word is cut), on several blocks of short rows
 * (six with line, classic and no pre-filters; two; three with none),
 * under both kernels, and on plain. A second call, without counting
 * bytes, starts afresh and takes the one-line loop where rows are one
 * line and have no pre-filter; bad arguments fail.
 */
static void test_keys(void)
{
	enum { N = 1200 };
	static char text[N][16];
	static size_t len[N], ends[N];
	static bfi_keyhash h[N];
	uint64_t seed = 4242;
	for (int i = 0; i < N; i++) {
		uint32_t u = test_rand(&seed) % 6 == 0 ? UNIVERSE + (uint32_t)(test_rand(&seed) % 999)
		                                      : (uint32_t)(test_rand(&seed) % UNIVERSE);
		len[i] = (size_t)snprintf(text[i], sizeof text[i], "k%u", u);
		h[i] = bfi_hash_key(text[i], len[i]);
	}
	char one_block[3][4200];
	for (int pre = 0; pre < 3; pre++) {
		snprintf(one_block[pre], sizeof one_block[pre], "%s/keys-one-block-%d", test_tmpdir(), pre);
		EXPECT_RC(build_one_block(one_block[pre], pre), 0);
	}
	char line[4200];
	snprintf(line, sizeof line, "%s/keys-line", test_tmpdir());
	struct bfi_build_options lo;
	bfi_build_options_init(&lo);
	lo.keep_order = 1;
	lo.block_cost = 1u << 30;
	lo.prefilter = BFI_PREFILTER_NEVER;
	batch_kind = 0;
	EXPECT_RC(test_build_sets(&lo, line, 500, 300, batch_key), 0);
	/* packed rows: 65 sets (one word and a bit a row), and 700 (two lines' worth) */
	char packed[2][4200];
	for (int x = 0; x < 2; x++) {
		snprintf(packed[x], sizeof packed[x], "%s/keys-packed-%d", test_tmpdir(), x);
		EXPECT_RC(test_build_sets(&lo, packed[x], x ? 700 : 65, 300, batch_key), 0);
	}
	/* six blocks of 512 sets with line, classic and no pre-filters; three with none */
	char many[4][4200];
	for (int m = 0; m < 4; m++) {
		snprintf(many[m], sizeof many[m], "%s/keys-many-%d", test_tmpdir(), m);
		struct bfi_build_options o;
		bfi_build_options_init(&o);
		o.keep_order = 1;
		o.max_block_sets = 512;
		o.prefilter = m < 2 ? BFI_PREFILTER_ALWAYS : BFI_PREFILTER_NEVER;
		o.classic_prefilters = m == 1;
		EXPECT_RC(test_build_sets(&o, many[m], m == 3 ? 1400 : 3000, 64, many_key), 0);
	}
	enum { NS = 12 };
	const char *snaps[NS] = {one_block[0], one_block[1], one_block[2], line,      blocks_snap,
	                         both_snap,    many[0],      many[1],      many[2],   many[3],
	                         packed[0],    packed[1]};
	bfi_and_fn kernels[2] = {bfi__and_rows(), bfi__and_rows_portable};
	int own_loop = 0, blocks_loop = 0, line_loop = 0, packed_loop = 0;
	for (int run = 0; run < 2 * NS; run++) {
		int sn = run % NS;
		bfi__use_kernel(kernels[run / NS]);
		bfi_snapshot *s;
		EXPECT_RC(bfi_open(snaps[sn], 0, &s), 0);
		if (!s)
			return;
		struct bfi_info in;
		bfi_info(s, &in);
		struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
		struct bfi_block_info bi;
		EXPECT_RC(bfi_block(s, 0, &bi), 0);
		uint64_t row_bytes = (bi.n_sets + 511) / 512 * 64; /* in lines, as queries read it */
		own_loop += lf.u.flat.blocks == 1 && row_bytes <= BFI_SHORT_ROW;
		blocks_loop += lf.u.flat.blocks > 1 && row_bytes <= BFI_SHORT_ROW;
		line_loop += bi.row_bits == 512 && bi.prefilter_bits == 0;
		packed_loop += lf.u.flat.blocks == 1 && bi.row_bits % 512 != 0;
		for (unsigned layout = 1; layout <= (sn == 5 ? 2u : 1u); layout++) {
			bfi_result *all, *one;
			EXPECT_RC(bfi_result_create(&all), 0);
			EXPECT_RC(bfi_result_create(&one), 0);
			bfi_result_count_bytes(all, 1);
			bfi_result_count_bytes(one, 1);
			for (int again = 0; again < 2; again++) {
				bfi_result_count_bytes(all, again == 0);
				EXPECT_RC(bfi_query_keys(s, layout, h, N, all, ends), 0);
				size_t from = 0;
				uint64_t bytes = 0;
				int differ = 0, matched = 0;
				for (int i = 0; i < N; i++) {
					EXPECT_RC(bfi_query_key_layout(s, layout, text[i], len[i], one), 0);
					size_t c = bfi_result_count(one);
					differ += ends[i] < from || ends[i] - from != c ||
					          memcmp(bfi_result_ordinals(all) + from, bfi_result_ordinals(one),
					                 c * sizeof(uint32_t)) != 0;
					matched += c > 0;
					bytes += bfi_result_touched(one);
					from = ends[i];
				}
				EXPECT(differ == 0);
				EXPECT(from == bfi_result_count(all));
				EXPECT(bytes == bfi_result_touched(all) || again);
				EXPECT(matched > N / 2);
			}
			EXPECT_RC(bfi_query_keys(s, layout, h, 0, all, NULL), 0);
			EXPECT(bfi_result_count(all) == 0);
			EXPECT_RC(bfi_query_keys(s, layout, NULL, 1, all, ends), BFI_E_INVALID);
			EXPECT_RC(bfi_query_keys(s, layout, h, 1, all, NULL), BFI_E_INVALID);
			EXPECT_RC(bfi_query_keys(s, layout, h, 1, NULL, ends), BFI_E_INVALID);
			EXPECT_RC(bfi_query_keys(NULL, layout, h, 1, all, ends), BFI_E_INVALID);
			EXPECT_RC(bfi_query_keys(s, BFI_LAYOUT_RAMBO, h, 1, all, ends), BFI_E_NO_LAYOUT);
			bfi_result_destroy(&all);
			bfi_result_destroy(&one);
		}
		bfi_close(&s);
	}
	bfi__use_kernel(NULL);
	EXPECT(own_loop == 14);    /* the seven snapshots of one block, each kernel */
	EXPECT(packed_loop == 12); /* six of one block of packed rows, each kernel */
	EXPECT(blocks_loop == 10); /* the five of several blocks of short rows */
	EXPECT(line_loop == 6);    /* one block and two of several, each kernel */
	/* growing an answer past what size_t can count fails, and keeps it */
	uint32_t *big = NULL;
	size_t cap = 0;
	EXPECT(bfi__grow(&big, &cap, SIZE_MAX / 4 + 2, sizeof *big) == -ENOMEM && big == NULL &&
	       cap == 0);
	free(big);
}

static void test_threshold(void)
{
	bfi_snapshot *a, *b;
	bfi_result *ra, *rf, *rp;
	EXPECT_RC(bfi_open(blocks_snap, 0, &a), 0);
	EXPECT_RC(bfi_open(both_snap, 0, &b), 0);
	EXPECT_RC(bfi_result_create(&ra), 0);
	EXPECT_RC(bfi_result_create(&rf), 0);
	EXPECT_RC(bfi_result_create(&rp), 0);
	if (!a || !b)
		return;
	uint64_t s = 9, fn = 0, low = 0, order = 0, differ = 0, hits = 0;
	for (int q = 0; q < 300; q++) {
		/* terms: most from one set (a "read" of it), the rest random, some repeated */
		int src = (int)(test_rand(&s) % NSETS), nt = 5 + (int)(test_rand(&s) % 40);
		char buf[64][16];
		const void *keys[64];
		size_t lens[64];
		uint32_t ids[64];
		int t = 0;
		while (t < nt) {
			uint32_t u = (uint32_t)(test_rand(&s) % UNIVERSE);
			if (test_rand(&s) % 4 != 0 && !has(src, u))
				continue;
			ids[t] = u;
			lens[t] = (size_t)snprintf(buf[t], sizeof buf[t], "k%u", u);
			keys[t] = buf[t];
			t++;
		}
		if (q % 3 == 0) { /* a repeated term counts once */
			ids[t] = ids[0];
			keys[t] = keys[0];
			lens[t] = lens[0];
			t++;
		}
		uint32_t distinct = 0;
		for (int i = 0; i < t; i++) {
			int dup = 0;
			for (int j = 0; j < i; j++)
				dup |= ids[j] == ids[i];
			distinct += !dup;
		}
		double theta = (double)(1 + test_rand(&s) % 10) / 10;
		bfi_expr *e;
		EXPECT_RC(bfi_expr_terms(keys, lens, (size_t)t, &e), 0);
		if (!e)
			continue;
		EXPECT(bfi_expr_keys(e) == distinct);
		uint32_t need = (uint32_t)(theta * distinct);
		need += (double)need < theta * distinct;
		need = need ? need : 1;
		EXPECT_RC(bfi_query_threshold(a, 0, e, theta, ra), 0);
		EXPECT_RC(bfi_query_threshold(b, BFI_LAYOUT_FLAT, e, theta, rf), 0);
		EXPECT_RC(bfi_query_threshold(b, BFI_LAYOUT_PLAIN, e, theta, rp), 0);
		differ += !same_answer(rf, rp);
		const uint32_t *ord = bfi_result_ordinals(ra), *sc = bfi_result_scores(ra);
		EXPECT(sc != NULL);
		if (!sc)
			continue;
		size_t n = bfi_result_count(ra);
		uint32_t got[NSETS];
		memset(got, 0, sizeof got);
		for (size_t r = 0; r < n; r++) {
			got[ord[r]] = sc[r];
			low += sc[r] < need;
			if (r && (sc[r - 1] < sc[r] || (sc[r - 1] == sc[r] && ord[r - 1] > ord[r])))
				order++;
		}
		for (int j = 0; j < NSETS; j++) {
			uint32_t truth = 0;
			for (int i = 0; i < t; i++) {
				int dup = 0;
				for (int x = 0; x < i; x++)
					dup |= ids[x] == ids[i];
				truth += !dup && has(j, ids[i]);
			}
			/* false positives only raise a score, never lower it */
			if (truth >= need && got[j] < truth)
				fn++;
		}
		hits += n;
		bfi_expr_free(&e);
	}
	printf("threshold: %llu sets returned; %llu missed or under-scored, %llu below the bar, "
	       "%llu out of rank order; flat vs plain differ in %llu\n",
	       (unsigned long long)hits, (unsigned long long)fn, (unsigned long long)low,
	       (unsigned long long)order, (unsigned long long)differ);
	EXPECT(hits > 300);
	EXPECT(fn == 0 && low == 0 && order == 0 && differ == 0);
	bfi_expr *e = NULL;
	EXPECT_RC(bfi_query_threshold(a, 0, e, 0.5, ra), BFI_E_INVALID);
	const void *k1[1] = {"k1"};
	size_t l1[1] = {2};
	EXPECT_RC(bfi_expr_terms(k1, l1, 1, &e), 0);
	EXPECT_RC(bfi_query_threshold(a, 0, e, 0, ra), BFI_E_INVALID);
	EXPECT_RC(bfi_query_threshold(a, 0, e, 1.5, ra), BFI_E_INVALID);
	EXPECT_RC(bfi_query_expr(a, 0, e, ra), BFI_E_INVALID); /* term lists are not expressions */
	EXPECT_RC(bfi_query_threshold(a, BFI_LAYOUT_PLAIN, e, 1, ra), BFI_E_NO_LAYOUT);
	bfi_expr_free(&e);
	bfi_result_destroy(&ra);
	bfi_result_destroy(&rf);
	bfi_result_destroy(&rp);
	bfi_close(&a);
	bfi_close(&b);
}

static void test_semantics(void)
{
	bfi_snapshot *s;
	bfi_result *r1, *r2;
	EXPECT_RC(bfi_open(both_snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r1), 0);
	EXPECT_RC(bfi_result_create(&r2), 0);
	if (!s)
		return;
	const char *pairs[][2] = {
		{"k1 OR k2 k3", "k1 OR (k2 AND k3)"},
		{"k1 k2 OR k3", "(k1 AND k2) OR k3"},
		{"\"k1\" AND \"k2\"", "k1 k2"},
		{"k5 AND (k6 OR k7)", "(k5 AND k6) OR (k5 AND k7)"},
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		bfi_expr *a, *b;
		EXPECT_RC(bfi_expr_parse(pairs[i][0], strlen(pairs[i][0]), &a, NULL), 0);
		EXPECT_RC(bfi_expr_parse(pairs[i][1], strlen(pairs[i][1]), &b, NULL), 0);
		EXPECT_RC(bfi_query_expr(s, BFI_LAYOUT_PLAIN, a, r1), 0);
		EXPECT_RC(bfi_query_expr(s, BFI_LAYOUT_PLAIN, b, r2), 0);
		EXPECT(same_answer(r1, r2));
		bfi_expr_free(&a);
		bfi_expr_free(&b);
	}
	bfi_result_destroy(&r1);
	bfi_result_destroy(&r2);
	bfi_close(&s);
}

/*
 * Threshold queries on long rows (answered term by term) against short
 * rows (pipelined): 4,200 sets of one filter width, in one block of
 * 525-byte rows (past BFI_SHORT_ROW) and in blocks of 512 sets, give
 * every query the same sets with the same scores, in the same order.
 */
static void test_threshold_long(void)
{
	char one[4200], cut[4200];
	snprintf(one, sizeof one, "%s/threshold-long", test_tmpdir());
	snprintf(cut, sizeof cut, "%s/threshold-short", test_tmpdir());
	for (int i = 0; i < 2; i++) {
		struct bfi_build_options o;
		bfi_build_options_init(&o);
		o.keep_order = 1;
		o.fixed_width = 1; /* the same filters in both */
		o.prefilter = BFI_PREFILTER_NEVER;
		o.block_cost = i == 0 ? 1u << 30 : 1;
		o.max_block_sets = i == 0 ? 0 : 512;
		batch_kind = 1;
		EXPECT_RC(test_build_sets(&o, i == 0 ? one : cut, 4200, 300, batch_key), 0);
	}
	bfi_snapshot *a, *b;
	bfi_result *ra, *rb;
	EXPECT_RC(bfi_open(one, 0, &a), 0);
	EXPECT_RC(bfi_open(cut, 0, &b), 0);
	EXPECT_RC(bfi_result_create(&ra), 0);
	EXPECT_RC(bfi_result_create(&rb), 0);
	if (!a || !b || !ra || !rb)
		return;
	struct bfi_block_info ba, bb;
	EXPECT_RC(bfi_block(a, 0, &ba), 0);
	EXPECT_RC(bfi_block(b, 0, &bb), 0);
	EXPECT(ba.row_bits / 8 > BFI_SHORT_ROW && bb.row_bits / 8 <= BFI_SHORT_ROW);
	uint64_t seed = 31, differ = 0, found = 0;
	for (int q = 0; q < 200; q++) {
		/* most terms from one set, the rest random */
		uint32_t src = (uint32_t)(test_rand(&seed) % 4200);
		char buf[40][16];
		const void *keys[40];
		size_t lens[40];
		for (int t = 0; t < 40; t++) {
			lens[t] = t < 25 ? batch_key(src, (uint32_t)t, buf[t], sizeof buf[t])
			                 : (size_t)snprintf(buf[t], sizeof buf[t], "k%u",
			                                    (uint32_t)(test_rand(&seed) % UNIVERSE));
			keys[t] = buf[t];
		}
		bfi_expr *e;
		EXPECT_RC(bfi_expr_terms(keys, lens, 40, &e), 0);
		if (!e)
			continue;
		EXPECT_RC(bfi_query_threshold(a, 0, e, 0.4, ra), 0);
		EXPECT_RC(bfi_query_threshold(b, 0, e, 0.4, rb), 0);
		size_t n = bfi_result_count(ra);
		differ += n != bfi_result_count(rb) ||
		          memcmp(bfi_result_ordinals(ra), bfi_result_ordinals(rb), n * 4) != 0 ||
		          memcmp(bfi_result_scores(ra), bfi_result_scores(rb), n * 4) != 0;
		for (size_t i = 0; i < n; i++)
			found += bfi_result_ordinals(ra)[i] == src;
		bfi_expr_free(&e);
	}
	EXPECT(differ == 0);
	EXPECT(found > 150); /* a set holding most terms is found */
	bfi_result_destroy(&ra);
	bfi_result_destroy(&rb);
	bfi_close(&a);
	bfi_close(&b);
}

int main(void)
{
	snprintf(blocks_snap, sizeof blocks_snap, "%s/blocks", test_tmpdir());
	snprintf(both_snap, sizeof both_snap, "%s/flat-and-plain", test_tmpdir());
	if (build(blocks_snap, BFI_BUILD_FLAT, 0) || build(both_snap, BFI_BUILD_FLAT | BFI_BUILD_PLAIN, 1)) {
		printf("FAIL query: build\n");
		return 1;
	}
	test_run("query: expressions against exact truth; flat equals plain", test_expressions);
	test_run("query: batches answer exactly as one at a time", test_batches);
	test_run("query: keys in one call answer exactly as one at a time", test_keys);
	test_run("query: threshold scores, bar and ranking against truth", test_threshold);
	test_run("query: threshold on long rows equals short rows", test_threshold_long);
	test_run("query: precedence and quoting", test_semantics);
	return test_exit();
}
