/*
 * query.c - answering queries.
 *
 * Flat layout, block by block: a conjunction of keys ANDs all their rows
 * (kernel.c); AND and OR nodes combine bit vectors of one block, each
 * child evaluated only under the lines its AND siblings left non-zero.
 * Plain layout: every set's filter in turn. A query is prepared once
 * (key probes computed, result reset), run on each block, and finished,
 * which is what lets a batch run every query on a block before the next.
 */
#include <errno.h>
#include <stdlib.h>

#include "expr.h"
#include "line.h"

int bfi_result_create(bfi_result **out)
{
	if (out == NULL)
		return BFI_E_INVALID;
	size_t size = (sizeof **out + 63) / 64 * 64;
	*out = aligned_alloc(64, size);
	if (*out == NULL)
		return -ENOMEM;
	memset(*out, 0, size);
	return 0;
}

void bfi_result_destroy(bfi_result **res)
{
	if (res == NULL || *res == NULL)
		return;
	bfi_result *r = *res;
	free(r->ords);
	free(r->scores);
	free(r->z);
	free(r->rows);
	free(r->vec);
	free(r->counts);
	free(r->rank);
	free(r->frontier);
	free(r->pack);
	bfi_result_destroy(&r->scratch);
	free(r);
	*res = NULL;
}

size_t bfi_result_count(const bfi_result *res)
{
	return res->n;
}

const uint32_t *bfi_result_ordinals(const bfi_result *res)
{
	return res->ords;
}

const uint32_t *bfi_result_scores(const bfi_result *res)
{
	return res->have_scores ? res->scores : NULL;
}

void bfi_result_count_bytes(bfi_result *res, int on)
{
	res->count_bytes = on;
}

uint64_t bfi_result_touched(const bfi_result *res)
{
	return res->touched;
}

uint64_t bfi_result_filter_tests(const bfi_result *res)
{
	return res->tests;
}

int bfi__grow(void *pp, size_t *cap, size_t want, size_t sz)
{
	if (want <= *cap)
		return 0;
	if (want > SIZE_MAX / sz) /* want * sz would wrap to a small block */
		return -ENOMEM;
	void *q = realloc(*(void **)pp, want * sz);
	if (q == NULL)
		return -ENOMEM;
	*(void **)pp = q;
	*cap = want;
	return 0;
}

/* Room in res->pack for rows copied-out rows of the widest packed block of s. */
static int pack_room(const bfi_snapshot *s, bfi_result *res, size_t rows)
{
	if (s->max_packed_bytes == 0 || rows <= res->pack_cap)
		return 0;
	if (rows > SIZE_MAX / s->max_packed_bytes)
		return -ENOMEM;
	uint8_t *p = aligned_alloc(64, rows * (size_t)s->max_packed_bytes);
	if (p == NULL)
		return -ENOMEM;
	free(res->pack);
	res->pack = p;
	res->pack_cap = rows;
	return 0;
}

/*
 * Row r of block b as whole lines: in place, or, for packed rows, copied
 * out to the slot-th row_bytes of res->pack (pack_room made room).
 */
static inline const uint8_t *flat_row(const struct bfi_rblock *b, uint64_t r, bfi_result *res,
                                      size_t slot)
{
	if (!b->packed)
		return b->rows + r * b->row_bytes;
	uint8_t *dst = res->pack + slot * b->row_bytes;
	bfi__unpack_row(b->rows, r * b->row_bits, b->n, (uint64_t *)(void *)dst, b->row_bytes);
	return dst;
}

static uint32_t expr_depth(const struct bfi_expr *e, uint32_t id)
{
	const struct bfi_enode *n = &e->nodes[id];
	uint32_t d = 0;
	for (uint32_t i = 0; i < n->n_kids; i++) {
		uint32_t c = expr_depth(e, e->kids[n->first_kid + i]);
		d = c > d ? c : d;
	}
	return d + 1;
}

static int layout_of(const bfi_snapshot *s, unsigned layout, unsigned *out)
{
	if (layout == 0)
		layout = s->lay.flat_idx >= 0    ? BFI_LAYOUT_FLAT
		         : s->lay.tree_idx >= 0  ? BFI_LAYOUT_TREE
		         : s->lay.rambo_idx >= 0 ? BFI_LAYOUT_RAMBO
		                                 : BFI_LAYOUT_PLAIN;
	if (layout != BFI_LAYOUT_FLAT && layout != BFI_LAYOUT_PLAIN && layout != BFI_LAYOUT_RAMBO &&
	    layout != BFI_LAYOUT_TREE)
		return BFI_E_INVALID;
	if ((layout == BFI_LAYOUT_FLAT && s->lay.flat_idx < 0) ||
	    (layout == BFI_LAYOUT_PLAIN && s->lay.plain_idx < 0) ||
	    (layout == BFI_LAYOUT_RAMBO && s->lay.rambo_idx < 0) ||
	    (layout == BFI_LAYOUT_TREE && s->lay.tree_idx < 0))
		return BFI_E_NO_LAYOUT;
	*out = layout;
	return 0;
}

/* res holds no answer yet. */
static void reset_result(bfi_result *res, int scores)
{
	res->n = 0;
	res->touched = 0;
	res->tests = 0;
	res->have_scores = scores;
}

/* Reset res for a query of e and make room for everything it needs. */
static int prepare(const bfi_snapshot *s, unsigned layout, const struct bfi_expr *e,
                   bfi_result *res, int scores)
{
	uint32_t k = s->lay.k;
	size_t words = (size_t)(s->max_row_bytes / 8);
	size_t levels = e->nodes[e->root].type == BFI_EXPR_KEYS ? 0 : expr_depth(e, e->root) + 1;
	int rc = bfi__grow(&res->ords, &res->cap, s->lay.n_sets, sizeof *res->ords);
	if (rc == 0 && scores)
		rc = bfi__grow(&res->scores, &res->scores_cap, s->lay.n_sets, sizeof *res->scores);
	if (rc == 0 && scores)
		rc = bfi__grow(&res->rank, &res->rank_cap, s->lay.n_sets, sizeof *res->rank);
	if (rc == 0)
		rc = bfi__grow(&res->z, &res->z_cap, (size_t)e->n_keys * k, sizeof *res->z);
	uint32_t kr = s->lay.rambo_idx >= 0 && s->lay.rambo.k > k ? s->lay.rambo.k : k;
	kr = s->lay.tree_idx >= 0 && s->lay.tree.k > kr ? s->lay.tree.k : kr;
	/* the tree keeps two sets: it locates the level below while testing one */
	size_t row_sets = layout == BFI_LAYOUT_TREE ? 2 : 1;
	if (rc == 0)
		rc = bfi__grow(&res->rows, &res->rows_cap, row_sets * e->n_keys * kr, sizeof *res->rows);
	if (rc == 0 && layout == BFI_LAYOUT_FLAT)
		rc = pack_room(s, res, (size_t)e->n_keys * k);
	if (rc == 0 && layout == BFI_LAYOUT_FLAT)
		rc = bfi__grow(&res->vec, &res->vec_cap, levels * words, sizeof *res->vec);
	if (rc == 0 && layout == BFI_LAYOUT_RAMBO) /* one bitmap of cells per repetition */
		rc = bfi__grow(&res->vec, &res->vec_cap,
		               (size_t)s->lay.rambo.reps * (s->reps[0].row_bytes / 8), sizeof *res->vec);
	if (rc == 0 && scores)
		rc = bfi__grow(&res->counts, &res->counts_cap,
		               layout == BFI_LAYOUT_FLAT ? s->max_block_sets : s->lay.n_sets,
		               sizeof *res->counts);
	if (rc)
		return rc;
	/* flat and plain read the probes here; rambo and tree derive their own */
	for (uint32_t key = 0; (layout == BFI_LAYOUT_FLAT || layout == BFI_LAYOUT_PLAIN) &&
	                       key < e->n_keys;
	     key++)
		for (uint32_t i = 0; i < k; i++)
			res->z[(size_t)key * k + i] = bfi_hash_probe(e->keys[key], i);
	reset_result(res, scores);
	return 0;
}

/*
 * May the block hold the key with probes z? Its union pre-filter answers
 * without reading the rows; a block without one always may.
 */
static uint32_t pre_probes(const struct bfi_rblock *b, const uint64_t *z, uint32_t k)
{
	uint32_t i;
	if (b->line_pre) {
		/*
		 * All k bits lie in the key's one line, loaded once: test them all,
		 * without a branch. Stopping at the first zero saves nothing here,
		 * and where it stops is random, so each block's test would
		 * mispredict; a query tests every block (N = 10^6: 16), and the
		 * branch-free test took its p50 from 2.85 to 2.57 µs (absent keys
		 * 0.87 to 0.72 µs). Returns k or 0.
		 */
		const uint8_t *line = b->pre + bfi_pre_line(z[0], b->pre_m) / 8;
		unsigned all = 1;
		for (i = 0; i < k; i++) {
			uint32_t bit = bfi_pre_bit(z[i]);
			all &= (unsigned)(line[bit / 8] >> (bit % 8));
		}
		return all & 1 ? k : 0;
	}
	for (i = 0; i < k; i++) {
		uint64_t pos = bfi_reduce(z[i], b->pre_m);
		if (!(b->pre[pos / 8] >> (pos % 8) & 1))
			break;
	}
	return i;
}

static int pre_pass(const struct bfi_rblock *b, const uint64_t *z, uint32_t k, bfi_result *res)
{
	if (b->pre == NULL)
		return 1;
	uint32_t i = pre_probes(b, z, k);
	if (res->count_bytes)
		res->touched += b->line_pre ? 64 : (uint64_t)(i < k ? i + 1 : k) * 64;
	return i == k;
}

/* Does the block's pre-filter rule out some key of the conjunction? */
static int conj_skipped(const bfi_snapshot *s, const struct bfi_expr *e, const struct bfi_enode *n,
                        const struct bfi_rblock *b, bfi_result *res)
{
	if (b->pre == NULL)
		return 0;
	for (uint32_t j = 0; j < n->n_keys; j++)
		if (!pre_pass(b, res->z + (size_t)e->kidx[n->first_key + j] * s->lay.k, s->lay.k, res))
			return 1;
	return 0;
}

/* Row pointers of the conjunction node in block b; returns their count. */
static size_t conj_rows(const bfi_snapshot *s, const struct bfi_expr *e, const struct bfi_enode *n,
                        const struct bfi_rblock *b, bfi_result *res)
{
	uint32_t k = s->lay.k;
	size_t r = 0;
	for (uint32_t j = 0; j < n->n_keys; j++) {
		const uint64_t *z = res->z + (size_t)e->kidx[n->first_key + j] * k;
		for (uint32_t i = 0; i < k; i++)
			res->rows[r] = flat_row(b, bfi_reduce(z[i], b->m), res, r), r++;
	}
	return r;
}

/*
 * out = node AND mask on block b (mask NULL: no mask), words long. vec is
 * scratch for the levels below. Lines where mask is zero are not read.
 */
static void eval_flat(const bfi_snapshot *s, const struct bfi_expr *e, uint32_t id,
                      const struct bfi_rblock *b, const uint64_t *mask, uint64_t *out,
                      uint64_t *vec, size_t words, bfi_result *res)
{
	const struct bfi_enode *n = &e->nodes[id];
	uint64_t *touched = res->count_bytes ? &res->touched : NULL;
	if (n->type == BFI_EXPR_KEYS) {
		if (conj_skipped(s, e, n, b, res)) {
			memset(out, 0, words * 8);
			return;
		}
		size_t r = conj_rows(s, e, n, b, res);
		bfi__and_rows_mask(res->rows, r, words, mask, out, touched);
		return;
	}
	const uint32_t *kid = e->kids + n->first_kid;
	eval_flat(s, e, kid[0], b, mask, out, vec + words, words, res);
	for (uint32_t i = 1; i < n->n_kids; i++) {
		if (n->type == BFI_EXPR_AND) {
			uint64_t any = 0;
			for (size_t w = 0; w < words && !any; w++)
				any = out[w];
			if (!any)
				return;
			eval_flat(s, e, kid[i], b, out, vec, vec + words, words, res);
			memcpy(out, vec, words * 8);
		} else {
			eval_flat(s, e, kid[i], b, mask, vec, vec + words, words, res);
			for (size_t w = 0; w < words; w++)
				out[w] |= vec[w];
		}
	}
}

/* Append the ordinals of the set bits of v (block b) to res. */
static void emit_vec(const uint64_t *v, const struct bfi_rblock *b, bfi_result *res)
{
	for (size_t w = 0; w < b->row_bytes / 8; w++)
		for (uint64_t x = le64toh(v[w]); x; x &= x - 1) {
			uint64_t j = w * 64 + (uint64_t)__builtin_ctzll(x);
			if (j < b->n)
				res->ords[res->n++] = b->first + (uint32_t)j;
		}
}

/*
 * Many blocks: ask for the first probes of every block's pre-filter before
 * testing any (a line pre-filter's one line; a classic one's first
 * PRE_AHEAD probes). Each test waits on memory and most end at their first
 * or second probe, so one block after another they would cost a round trip
 * each; asked for together, their loads overlap.
 */
#define PRE_AHEAD 2   /* classic probes per key and block requested ahead */
#define PRE_KEYS 4    /* keys of a conjunction whose probes are requested */
#define MANY_BLOCKS 4 /* above this, blocks' pre-filters are requested ahead */

#define PREP_AHEAD 16  /* queries of a batch whose objects are requested ahead */

/* Ask for the first probes of block blk's pre-filter for query e. */
static void prefetch_block_probes(const bfi_snapshot *s, const struct bfi_expr *e,
                                  const bfi_result *res, const struct bfi_rblock *blk)
{
	const struct bfi_enode *n = &e->nodes[e->root];
	uint32_t k = s->lay.k, ahead = k < PRE_AHEAD ? k : PRE_AHEAD;
	for (uint32_t j = 0; n->type == BFI_EXPR_KEYS && j < n->n_keys && j < PRE_KEYS; j++) {
		const uint64_t *z = res->z + (size_t)e->kidx[n->first_key + j] * k;
		if (blk->line_pre) {
			bfi__prefetch(blk->pre + bfi_pre_line(z[0], blk->pre_m) / 8);
			continue;
		}
		for (uint32_t i = 0; i < ahead; i++)
			bfi__prefetch(blk->pre + bfi_reduce(z[i], blk->pre_m) / 8);
	}
}

/*
 * Second round, once the first probes have arrived: for each block that
 * they let through, ask for the rest. A pre-filter is half ones, so about
 * a quarter of the blocks pass two probes; tested block after block, each
 * would then wait on memory for its third probe, behind a branch that
 * cannot be predicted.
 */
static void prefetch_rest(const bfi_snapshot *s, const struct bfi_expr *e, const bfi_result *res,
                          const struct bfi_rblock *blk)
{
	const struct bfi_enode *n = &e->nodes[e->root];
	uint32_t k = s->lay.k;
	if (k <= PRE_AHEAD || n->type != BFI_EXPR_KEYS || blk->line_pre)
		return;
	for (uint32_t j = 0; j < n->n_keys && j < PRE_KEYS; j++)
		if (pre_probes(blk, res->z + (size_t)e->kidx[n->first_key + j] * k, PRE_AHEAD) <
		    PRE_AHEAD)
			return;
	for (uint32_t j = 0; j < n->n_keys && j < PRE_KEYS; j++) {
		const uint64_t *z = res->z + (size_t)e->kidx[n->first_key + j] * k;
		for (uint32_t i = PRE_AHEAD; i < k; i++)
			bfi__prefetch(blk->pre + bfi_reduce(z[i], blk->pre_m) / 8);
	}
}

static void prefetch_prefilters(const bfi_snapshot *s, const struct bfi_expr *e, const bfi_result *res)
{
	for (uint32_t b = 0; b < s->lay.flat.n_blocks; b++)
		if (s->blocks[b].pre)
			prefetch_block_probes(s, e, res, &s->blocks[b]);
	for (uint32_t b = 0; b < s->lay.flat.n_blocks; b++)
		if (s->blocks[b].pre)
			prefetch_rest(s, e, res, &s->blocks[b]);
}

/* One block of a prepared expression query. */
static void run_block(const bfi_snapshot *s, const struct bfi_expr *e,
                      const struct bfi_rblock *b, bfi_result *res, bfi_and_fn and_rows)
{
	const struct bfi_enode *root = &e->nodes[e->root];
	size_t words = b->row_bytes / 8;
	if (root->type == BFI_EXPR_KEYS) {
		size_t r = 0;
		if (b->pre) {
			/* Start the rows' first lines loading while the pre-filter is probed:
			 * a key the block holds then pays for one round trip, not two.
			 * Not with many blocks, where most are skipped: their rows are
			 * neither fetched nor located. */
			if (s->lay.flat.n_blocks <= MANY_BLOCKS) {
				r = conj_rows(s, e, root, b, res);
				for (size_t i = 0; i < r && i < 16; i++)
					bfi__prefetch(res->rows[i]);
			}
			if (conj_skipped(s, e, root, b, res))
				return;
		}
		if (r == 0)
			r = conj_rows(s, e, root, b, res);
		res->n += and_rows(res->rows, (uint32_t)r, words, b->first, b->n, res->ords + res->n,
		                   res->count_bytes ? &res->touched : NULL);
		return;
	}
	eval_flat(s, e, e->root, b, NULL, res->vec, res->vec + words, words, res);
	emit_vec(res->vec, b, res);
}

/* A query of one key: the usual query (a k-mer, a word). */
static int one_key(const struct bfi_expr *e)
{
	return e->single;
}

/* The probes of prepared query e of one key. */
static const uint64_t *key_probes(const bfi_snapshot *s, const struct bfi_expr *e,
                                  const bfi_result *res)
{
	return res->z + (size_t)e->kidx[e->nodes[e->root].first_key] * s->lay.k;
}

/*
 * One key against many blocks with line pre-filters: the k bits of the key
 * sit at the same offsets in its line of every block's pre-filter (only
 * the line differs), so they become one 512-bit mask, built once, and each
 * block's test asks whether its line holds the whole mask: two AVX2 tests
 * (vptest), or eight word tests, without branches or calls. Each block's
 * line is located once and asked for LINE_AHEAD blocks before its test.
 * At N = 10^6 (16 blocks) this was about 1,300 instructions a key when the
 * test walked the mask's words (about 80 a block) and the lines were
 * located twice; see tests/bench/RESULTS.md, "Eighth session".
 */
#define LINE_AHEAD 16 /* blocks whose pre-filter line is asked for before the test of the first */

/* Does the 64-byte line hold every bit of mask (in file order)? */
static inline int line_holds(const uint8_t *line, const uint64_t *mask)
{
	uint64_t miss = 0;
	for (uint32_t j = 0; j < BFI_LINE_WORDS; j++) {
		uint64_t v;
		memcpy(&v, line + 8 * j, 8);
		miss |= ~v & mask[j];
	}
	return miss == 0;
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
__attribute__((target("avx2"))) static inline int line_holds_avx2(const uint8_t *line,
                                                                   const uint64_t *mask)
{
	/* vptest's carry: no bit of the mask is missing from the line */
	return _mm256_testc_si256(_mm256_loadu_si256((const __m256i *)line),
	                          _mm256_loadu_si256((const __m256i *)mask)) &
	       _mm256_testc_si256(_mm256_loadu_si256((const __m256i *)(line + 32)),
	                          _mm256_loadu_si256((const __m256i *)(mask + 4)));
}
#endif

/* The line of block b's line pre-filter that probe z0 tests, or NULL if b has none. */
static inline const uint8_t *key_line(const struct bfi_rblock *b, uint64_t z0)
{
	return b->pre ? b->pre + bfi_pre_line(z0, b->pre_m) / 8 : NULL;
}

/* Ask for the line of every block's line pre-filter that probes z test. */
static void prefetch_key_lines(const bfi_snapshot *s, const uint64_t *z)
{
	for (uint32_t b = 0; b < s->lay.flat.n_blocks; b++)
		if (s->blocks[b].pre)
			bfi__prefetch(key_line(&s->blocks[b], z[0]));
}

static inline __attribute__((always_inline)) void
key_blocks_loop(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res,
                bfi_and_fn and_rows, int avx2)
{
	uint32_t k = s->lay.k, nb = s->lay.flat.n_blocks;
	const uint64_t *z = key_probes(s, e, res);
	uint64_t mask[BFI_LINE_WORDS] = {0};
	const uint8_t *ahead[LINE_AHEAD];
	for (uint32_t i = 0; i < k; i++) {
		uint32_t bit = bfi_pre_bit(z[i]);
		mask[bit / 64] |= htole64(UINT64_C(1) << (bit % 64));
	}
	for (uint32_t b = 0; b < nb && b < LINE_AHEAD; b++)
		if ((ahead[b] = key_line(&s->blocks[b], z[0])) != NULL)
			bfi__prefetch(ahead[b]);
	for (uint32_t b = 0; b < nb; b++) {
		const struct bfi_rblock *blk = &s->blocks[b];
		const uint8_t *line = ahead[b % LINE_AHEAD];
		if (b + LINE_AHEAD < nb &&
		    (ahead[b % LINE_AHEAD] = key_line(&s->blocks[b + LINE_AHEAD], z[0])) != NULL)
			bfi__prefetch(ahead[b % LINE_AHEAD]);
		if (line) {
			int holds;
#if defined(__x86_64__) && BFI_HAVE_AVX2
			holds = avx2 ? line_holds_avx2(line, mask) : line_holds(line, mask);
#else
			(void)avx2;
			holds = line_holds(line, mask);
#endif
			if (res->count_bytes)
				res->touched += 64;
			if (!holds)
				continue;
		}
		for (uint32_t i = 0; i < k; i++)
			res->rows[i] = flat_row(blk, bfi_reduce(z[i], blk->m), res, i);
		res->n += and_rows(res->rows, k, blk->row_bytes / 8, blk->first, blk->n,
		                   res->ords + res->n, res->count_bytes ? &res->touched : NULL);
	}
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
__attribute__((target("avx2"))) static void
key_blocks_avx2(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res,
                bfi_and_fn and_rows)
{
	key_blocks_loop(s, e, res, and_rows, 1);
}
#endif

static void one_key_blocks(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res,
                           bfi_and_fn and_rows)
{
#if defined(__x86_64__) && BFI_HAVE_AVX2
	if (and_rows == bfi__and_rows_avx2) {
		key_blocks_avx2(s, e, res, and_rows);
		return;
	}
#endif
	key_blocks_loop(s, e, res, and_rows, 0);
}

/* Plain layout: does set j's filter satisfy node id? */
static int eval_plain(const bfi_snapshot *s, const struct bfi_expr *e, uint32_t id,
                      const uint8_t *f, const uint64_t *pos, uint64_t *lines)
{
	const struct bfi_enode *n = &e->nodes[id];
	uint32_t k = s->lay.k;
	if (n->type == BFI_EXPR_KEYS || n->type == BFI_EXPR_TERMS) {
		for (uint32_t j = 0; j < n->n_keys; j++) {
			const uint64_t *p = pos + (size_t)e->kidx[n->first_key + j] * k;
			for (uint32_t i = 0; i < k; i++) {
				++*lines;
				if (!(f[p[i] / 8] >> (p[i] % 8) & 1))
					return 0;
			}
		}
		return 1;
	}
	for (uint32_t i = 0; i < n->n_kids; i++) {
		int v = eval_plain(s, e, e->kids[n->first_kid + i], f, pos, lines);
		if (n->type == BFI_EXPR_AND && !v)
			return 0;
		if (n->type == BFI_EXPR_OR && v)
			return 1;
	}
	return n->type == BFI_EXPR_AND;
}

/* Positions on the plain layout, in place of the probes. */
static void plain_positions(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res)
{
	size_t n = (size_t)e->n_keys * s->lay.k;
	for (size_t i = 0; i < n; i++)
		res->z[i] = bfi_reduce(res->z[i], s->lay.plain.m);
}

static void run_plain(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res)
{
	const struct bfi_plain_desc *p = &s->lay.plain;
	uint64_t lines = 0;
	const uint8_t *f = s->plain;
	for (uint64_t j = 0; j < p->n_sets; j++, f += p->filter_bytes)
		if (eval_plain(s, e, e->root, f, res->z, &lines))
			res->ords[res->n++] = (uint32_t)j;
	if (res->count_bytes)
		res->touched += lines * 64;
}

static int check_args(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res)
{
	if (s == NULL || e == NULL || res == NULL || e->n_keys == 0)
		return BFI_E_INVALID;
	return 0;
}

/* Does one_key_blocks answer e on s? */
static int key_mask_path(const bfi_snapshot *s, const struct bfi_expr *e)
{
	return s->lay.flat.n_blocks > MANY_BLOCKS && (s->lay.flat.flags & BFI_FLATF_LINE_PRE) &&
	       one_key(e);
}

/* Answer a prepared query e on the flat layout, every block. */
static void answer_flat(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res,
                        bfi_and_fn and_rows)
{
	if (key_mask_path(s, e)) {
		one_key_blocks(s, e, res, and_rows);
		return;
	}
	if (s->lay.flat.n_blocks > MANY_BLOCKS)
		prefetch_prefilters(s, e, res);
	for (uint32_t b = 0; b < s->lay.flat.n_blocks; b++)
		run_block(s, e, &s->blocks[b], res, and_rows);
}

int bfi_query_expr(const bfi_snapshot *s, unsigned layout, const bfi_expr *e, bfi_result *res)
{
	int rc = check_args(s, e, res);
	if (rc == 0)
		rc = layout_of(s, layout, &layout);
	if (rc == 0 && e->nodes[e->root].type == BFI_EXPR_TERMS)
		rc = BFI_E_INVALID; /* term lists are for bfi_query_threshold */
	if (rc == 0)
		rc = prepare(s, layout, e, res, 0);
	if (rc)
		return rc;
	if (layout == BFI_LAYOUT_PLAIN) {
		plain_positions(s, e, res);
		run_plain(s, e, res);
		return 0;
	}
	if (layout == BFI_LAYOUT_RAMBO)
		return bfi__list_expr(s, e, res, bfi__rambo_conj);
	if (layout == BFI_LAYOUT_TREE)
		return bfi__list_expr(s, e, res, bfi__tree_conj);
	answer_flat(s, e, res, bfi__and_rows());
	return 0;
}

/*
 * Batches on blocks of short rows, for queries of one key (others are
 * answered as in a batch of long rows). A query of one key on a row of a
 * few lines is a handful of cache misses and little work, and on this
 * project's test machine the batch's work and its misses add up rather
 * than overlap: every instruction in the loop below shows in its time. So
 * one pass a block, in one loop, each query met at most three times:
 *   - if the block has a pre-filter, STAGE_AHEAD steps before the next
 *     meeting: ask for the key's line of it;
 *   - in the first block, check the query and reset its result; hash the
 *     key, test the pre-filter, locate the k rows in a small ring on the
 *     stack (not in the result) and ask for every line of them;
 *   - STAGE_AHEAD steps later, its turn: AND the rows into its ordinals.
 * The loop is built for AVX2 with the line AND inlined (line.h), again
 * for one block of one-line rows without a pre-filter (the AND of one
 * line, line.h), and portable. Genome k-mers, bfi bench alternating builds:
 * 2.11-2.35x one query at a time before the AVX2 build, 2.53-2.64x after,
 * 2.33-3.05x with the one-line build. Measured and not kept: a
 * separate pass to check the queries first, a stage asking for each
 * query's expression and result, locating in a function call, and a call
 * to the kernel per query each cost a batch 5-15%.
 */
#define STAGE_AHEAD 16 /* steps between a batch's meetings with a query */
#define RING 32        /* > STAGE_AHEAD: row sets in flight */
#define ANSWERS_FIRST 64 /* a batch's result holds this many sets before it grows */

struct lean_slot {
	const uint8_t *rows[BFI_MAX_K]; /* packed rows: the byte of each row's first bit */
	uint8_t shift[BFI_MAX_K];       /* packed rows: that bit within its byte */
	int state; /* -1: not one key; 0: turned away by the pre-filter; 1: rows located */
};

static const bfi_keyhash *lean_key(const struct bfi_expr *e)
{
	return &e->keys[0]; /* a query of one key has one */
}

/* Where the pre-filter of block b holds the first probe z0 of a key (its line, for line ones). */
static const uint8_t *pre_line_of(const struct bfi_rblock *b, uint64_t z0)
{
	return b->pre + (b->line_pre ? bfi_pre_line(z0, b->pre_m) : bfi_reduce(z0, b->pre_m)) / 8;
}

/* First meeting, in blocks with a pre-filter: ask for the key's line. */
static void lean_ask(const struct bfi_rblock *b, const struct bfi_expr *e, const uint64_t *z)
{
	if (e == NULL || !one_key(e))
		return;
	bfi__prefetch(pre_line_of(b, z ? z[0] : bfi_hash_probe(*lean_key(e), 0)));
}

/*
 * Key h in short-row block b: test the pre-filter (counting its bytes in r)
 * and, if it may hold the key, locate its k rows in slot and ask for every
 * line of them (slot->state 1, else 0). z holds the key's probes, or is
 * NULL to hash them here: a block without a pre-filter hashes, locates and
 * asks in one loop. line: the caller knows b has no pre-filter and rows of
 * one line.
 */
/* Locate row r of block b as slot's row i and ask for its first line (line: see lean_rows). */
static inline __attribute__((always_inline)) void
lean_place(const struct bfi_rblock *b, struct lean_slot *slot, uint32_t i, uint64_t r,
           uint64_t row_bytes, int line)
{
	if (!line && b->packed) {
		uint64_t bit = r * b->row_bits;
		slot->rows[i] = b->rows + bit / 8;
		slot->shift[i] = (uint8_t)(bit % 8);
		/* a packed row may end on the next line */
		bfi__prefetch(slot->rows[i] + (b->n + 7) / 8);
	} else {
		slot->rows[i] = b->rows + r * row_bytes;
	}
	bfi__prefetch(slot->rows[i]);
}

static inline __attribute__((always_inline)) void
lean_rows(const struct bfi_rblock *b, bfi_keyhash h, const uint64_t *z, uint32_t k, bfi_result *r,
          struct lean_slot *slot, int line)
{
	uint64_t zbuf[BFI_MAX_K];
	slot->state = 1;
	if (z == NULL && (line || b->pre == NULL)) {
		/* probe i mixes h1 + i * (h2 | 1) (bfi_hash_probe): one add a probe */
		uint64_t x = h.h1, step = h.h2 | 1, m = b->m, row_bytes = line ? 64 : b->row_bytes;
		for (uint32_t i = 0; i < k; i++, x += step)
			lean_place(b, slot, i, bfi_reduce(bfi_hash_mix(x), m), row_bytes, line);
	} else {
		for (uint32_t i = 0; z == NULL && i < k; i++)
			zbuf[i] = bfi_hash_probe(h, i);
		z = z ? z : zbuf;
		slot->state = pre_pass(b, z, k, r);
		if (slot->state == 0)
			return;
		for (uint32_t i = 0; i < k; i++)
			lean_place(b, slot, i, bfi_reduce(z[i], b->m), b->row_bytes, 0);
	}
	for (uint64_t at = 64; !line && at < b->row_bytes; at += 64) /* at most BFI_SHORT_ROW / 64 lines */
		for (uint32_t i = 0; i < k; i++)
			bfi__prefetch(slot->rows[i] + at);
}

/*
 * The words of the last line of block b's rows that may hold sets
 * (bfi__line_mask): the whole row's, for rows of one line.
 */
static void last_line_mask(const struct bfi_rblock *b, uint64_t mask[BFI_LINE_WORDS])
{
	uint64_t before = b->row_bytes > 64 ? (b->row_bytes / 64 - 1) * 512 : 0; /* sets */
	bfi__line_mask(b->n > before ? (uint32_t)(b->n - before) : 0, mask);
}

/*
 * Its turn: AND a slot's k short rows of block b and append the sets left
 * to out from n, numbered from base (b->first, or 0 for the block's own
 * numbers). last: last_line_mask(b).
 */
static inline __attribute__((always_inline)) size_t
lean_and(const struct lean_slot *slot, uint32_t k, const struct bfi_rblock *b, uint32_t base,
         const uint64_t *last, uint32_t *out, size_t n, uint64_t *touched, bfi_and_fn and_rows,
         int avx2)
{
	const uint8_t *const *rows = slot->rows;
	if (b->packed && touched == NULL) {
		/*
		 * Packed rows, where their lines have arrived: ANDed a 64-bit word
		 * at a time as each row's word is shifted out, in registers.
		 * Copying each row out to a whole line first, then ANDing the
		 * lines, cost a genome batch (65 sets) a fifth of its speed.
		 */
		size_t words = (b->n + 63) / 64;
		for (size_t w = 0; w < words; w++) {
			uint64_t acc = ~UINT64_C(0);
			for (uint32_t i = 0; i < k; i++) {
				const uint8_t *p = rows[i] + 8 * w;
				unsigned sh = slot->shift[i];
				uint64_t lo;
				memcpy(&lo, p, 8);
				acc &= le64toh(lo) >> sh | (uint64_t)p[8] << 1 << (63 - sh);
			}
			if (w + 1 == words && b->n % 64)
				acc &= (UINT64_C(1) << (b->n % 64)) - 1;
			for (; acc; acc &= acc - 1)
				out[n++] = base + (uint32_t)(w * 64) + (uint32_t)__builtin_ctzll(acc);
		}
		(void)last;
		(void)and_rows;
		(void)avx2;
		return n;
	}
	/* packed rows, counting bytes: copied out to whole lines */
	_Alignas(64) uint8_t lines[BFI_MAX_K * BFI_SHORT_ROW];
	const uint8_t *copied[BFI_MAX_K];
	if (b->packed) {
		for (uint32_t i = 0; i < k; i++) {
			copied[i] = lines + i * b->row_bytes;
			bfi__unpack_row(slot->rows[i], slot->shift[i], b->n,
			                (uint64_t *)(void *)(lines + i * b->row_bytes), b->row_bytes);
		}
		rows = copied;
	}
#if defined(__x86_64__) && BFI_HAVE_AVX2
	/* one line: the line's AND itself, which the compiler then inlines
	 * here (through bfi__and_short_all_avx2 a genome batch took 405
	 * instructions a key, not 344) */
	if (avx2 && touched == NULL && b->row_bytes == 64)
		return bfi__and_line_avx2(rows, k, 0, base, last, out, n);
	if (avx2 && touched == NULL)
		return bfi__and_short_all_avx2(rows, k, b->row_bytes, base, last, out, n);
	if (avx2)
		return bfi__and_short_avx2(rows, k, b->row_bytes, base, b->n, out, n, touched);
#else
	(void)avx2;
	(void)last;
#endif
	return n + and_rows(rows, k, b->row_bytes / 8, base, b->n, out + n, touched);
}

/* Room in res for more sets after its n. */
static inline int room(bfi_result *res, size_t more)
{
	if (res->cap - res->n >= more)
		return 0;
	size_t want = res->n + more > 2 * res->cap ? res->n + more : 2 * res->cap;
	return bfi__grow(&res->ords, &res->cap, want, sizeof *res->ords);
}

/*
 * Second meeting: in block 0 check query e and reset r; then hash the key,
 * test the pre-filter and locate and ask for the rows.
 */
static inline __attribute__((always_inline)) int
lean_locate(const bfi_snapshot *s, uint32_t bi, const struct bfi_expr *e, bfi_result *r,
            struct lean_slot *slot, uint64_t *zq, int line)
{
	const struct bfi_rblock *b = &s->blocks[bi];
	uint32_t k = s->lay.k;
	if (bi == 0) {
		int rc = check_args(s, e, r);
		if (rc == 0 && !one_key(e) && e->nodes[e->root].type == BFI_EXPR_TERMS)
			rc = BFI_E_INVALID;
		if (rc == 0 && one_key(e)) {
			/* the answer array grows by blocks (room, at its turn), not to
			 * every set of the snapshot in each of a batch's results */
			reset_result(r, 0);
			rc = room(r, ANSWERS_FIRST);
		} else if (rc == 0) {
			rc = prepare(s, BFI_LAYOUT_FLAT, e, r, 0);
		}
		if (rc)
			return rc;
	}
	slot->state = -1;
	if (!one_key(e))
		return 0;
	/* zq: the key's probes, hashed in block 0 and kept for the others */
	for (uint32_t i = 0; zq && bi == 0 && i < k; i++)
		zq[i] = bfi_hash_probe(*lean_key(e), i);
	lean_rows(b, *lean_key(e), zq, k, r, slot, line);
	return 0;
}

/*
 * many: several blocks, so a probe table; line: one block, without a
 * pre-filter, of one-line rows (line_block), built with those decided.
 */
static inline __attribute__((always_inline)) int
short_rows_loop(const bfi_snapshot *s, const bfi_expr *const *qs, size_t n, bfi_result *const *res,
                int avx2, int many, int line)
{
	struct lean_slot ring[RING];
	bfi_and_fn and_rows = bfi__and_rows();
	uint32_t k = s->lay.k, nb = line ? 1 : s->lay.flat.n_blocks;
	const size_t d = STAGE_AHEAD;
	/* with several blocks (many) each key is hashed once, in block 0, not once a block */
	uint64_t *zt = many && n <= SIZE_MAX / k / sizeof *zt ? malloc(n * k * sizeof *zt) : NULL;
	int rc = many && n && zt == NULL ? -ENOMEM : 0;
	for (uint32_t bi = 0; bi < nb && rc == 0; bi++) {
		const struct bfi_rblock *b = &s->blocks[bi];
		size_t p = !line && b->pre ? STAGE_AHEAD : 0; /* steps from asking to locating */
		uint64_t mask[BFI_LINE_WORDS];
		last_line_mask(b, mask);
		for (size_t i = 0; i < n + p + d && rc == 0; i++) {
			if (p && i < n)
				lean_ask(b, qs[i], zt && bi ? zt + i * k : NULL);
			if (i >= p && i - p < n)
				rc = lean_locate(s, bi, qs[i - p], res[i - p], &ring[(i - p) % RING],
				                 zt ? zt + (i - p) * k : NULL, line);
			if (rc)
				break;
			if (i < p + d || i - p - d >= n)
				continue;
			size_t t = i - p - d;
			const struct lean_slot *slot = &ring[t % RING];
			bfi_result *r = res[t];
			if (slot->state < 0)
				run_block(s, qs[t], b, r, and_rows);
			else if (slot->state > 0 && (rc = room(r, b->n)) == 0)
				r->n = lean_and(slot, k, b, b->first, mask, r->ords, r->n,
				                r->count_bytes ? &r->touched : NULL, and_rows, avx2);
		}
	}
	free(zt);
	return rc;
}

/* One flat block, without a pre-filter, of one-line rows (at most 512 sets)? */
static int line_block(const bfi_snapshot *s)
{
	return s->lay.flat.n_blocks == 1 && s->blocks[0].pre == NULL && s->blocks[0].row_bytes == 64 &&
	       !s->blocks[0].packed;
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
__attribute__((target("avx2,bmi"))) static int
short_rows_avx2(const bfi_snapshot *s, const bfi_expr *const *qs, size_t n, bfi_result *const *res)
{
	/* one block: built without the probe table, whose checks it does not need */
	if (line_block(s))
		return short_rows_loop(s, qs, n, res, 1, 0, 1);
	return s->lay.flat.n_blocks > 1 ? short_rows_loop(s, qs, n, res, 1, 1, 0)
	                                : short_rows_loop(s, qs, n, res, 1, 0, 0);
}
#endif

static int short_rows_portable(const bfi_snapshot *s, const bfi_expr *const *qs, size_t n,
                               bfi_result *const *res)
{
	return short_rows_loop(s, qs, n, res, 0, s->lay.flat.n_blocks > 1, 0);
}

/* Do queries on layout of s meet only short rows (flat, every block)? */
static int short_rows(const bfi_snapshot *s, unsigned layout)
{
	return layout == BFI_LAYOUT_FLAT && s->max_row_bytes <= BFI_SHORT_ROW;
}

static int batch_short_rows(const bfi_snapshot *s, const bfi_expr *const *qs, size_t n,
                            bfi_result *const *res)
{
#if defined(__x86_64__) && BFI_HAVE_AVX2
	if (bfi__and_rows() == bfi__and_rows_avx2)
		return short_rows_avx2(s, qs, n, res);
#endif
	return short_rows_portable(s, qs, n, res);
}

/* Which key each answer of block-by-block passes belongs to. */
struct key_tags {
	size_t *key;
	size_t cap;
};

/*
 * Key t's sets are res's from before on: close them in ends, or, with
 * tags, tag each with t. 0 or -ENOMEM.
 */
static inline __attribute__((always_inline)) int
key_answered(bfi_result *res, size_t before, size_t t, size_t *ends, struct key_tags *tags)
{
	if (tags == NULL) {
		ends[t] = res->n;
		return 0;
	}
	if (tags->cap < res->cap && bfi__grow(&tags->key, &tags->cap, res->cap, sizeof *tags->key))
		return -ENOMEM;
	for (size_t x = before; x < res->n; x++)
		tags->key[x] = t;
	return 0;
}

/*
 * bfi_query_keys on flat block bi of short rows: the short-row batch's
 * loop for bare key hashes, whose answers are appended to one result,
 * with ends[key] set or, with tags, each answer's key noted.
 * Reading the keys from one array and writing the answers one after
 * another spares a batch of expressions and results the line of each
 * query's expression and of its result: measured with scratch loops over
 * the genome index, about 20 ns of 150 a key.
 */
static inline __attribute__((always_inline)) int
keys_short_loop(const bfi_snapshot *s, uint32_t bi, const bfi_keyhash *keys, const uint64_t *zt,
                size_t n, bfi_result *res, size_t *ends, struct key_tags *tags, int avx2)
{
	struct lean_slot ring[RING];
	const struct bfi_rblock *b = &s->blocks[bi];
	bfi_and_fn and_rows = bfi__and_rows();
	uint32_t k = s->lay.k;
	uint64_t *touched = res->count_bytes ? &res->touched : NULL;
	const size_t d = STAGE_AHEAD, p = b->pre ? STAGE_AHEAD : 0;
	uint64_t mask[BFI_LINE_WORDS];
	last_line_mask(b, mask);
	for (size_t i = 0; i < n + p + d; i++) {
		if (p && i < n)
			bfi__prefetch(pre_line_of(b, zt ? zt[i * k] : bfi_hash_probe(keys[i], 0)));
		if (i >= p && i - p < n)
			lean_rows(b, keys[i - p], zt ? zt + (i - p) * k : NULL, k, res,
			          &ring[(i - p) % RING], 0);
		if (i < p + d || i - p - d >= n)
			continue;
		size_t t = i - p - d;
		const struct lean_slot *slot = &ring[t % RING];
		size_t before = res->n;
		if (slot->state && room(res, b->n))
			return -ENOMEM;
		if (slot->state)
			res->n = lean_and(slot, k, b, b->first, mask, res->ords, res->n, touched, and_rows,
			                  avx2);
		if (key_answered(res, before, t, ends, tags))
			return -ENOMEM;
	}
	return 0;
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
__attribute__((target("avx2,bmi"))) static int
keys_short_avx2(const bfi_snapshot *s, uint32_t bi, const bfi_keyhash *keys, const uint64_t *zt,
                size_t n, bfi_result *res, size_t *ends, struct key_tags *tags)
{
	return keys_short_loop(s, bi, keys, zt, n, res, ends, tags, 1);
}

/* One block: the loop built without the table and the tags, whose checks it does not need. */
__attribute__((target("avx2,bmi"))) static int
keys_one_avx2(const bfi_snapshot *s, const bfi_keyhash *keys, size_t n, bfi_result *res,
              size_t *ends)
{
	return keys_short_loop(s, 0, keys, NULL, n, res, ends, NULL, 1);
}
#endif

static int keys_short_portable(const bfi_snapshot *s, uint32_t bi, const bfi_keyhash *keys,
                               const uint64_t *zt, size_t n, bfi_result *res, size_t *ends,
                               struct key_tags *tags)
{
	return keys_short_loop(s, bi, keys, zt, n, res, ends, tags, 0);
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
/*
 * keys_short_loop on a block of one-line rows (at most 512 sets) without
 * a pre-filter, bytes not counted: the keys loop with nothing left to
 * decide per key. Key t + STAGE_AHEAD is located while key t is ANDed.
 * Genome k-mers: about 300 instructions a key against 430 through the
 * general loop (callgrind), and 3.07-3.44x one at a time against
 * 2.39-3.15x (bfi bench, alternating builds; tests/bench/RESULTS.md).
 */
__attribute__((target("avx2,bmi"), always_inline)) static inline int
keys_line_loop(const struct bfi_rblock *b, uint32_t k, const bfi_keyhash *keys,
               const uint64_t *zt, size_t n, bfi_result *res, size_t *ends, struct key_tags *tags)
{
	const size_t d = STAGE_AHEAD;
	const bfi_keyhash none = {0, 0}; /* lean_rows hashes nothing when given probes */
	struct lean_slot ring[RING];
	uint64_t mask[BFI_LINE_WORDS];
	last_line_mask(b, mask);
	for (size_t i = 0; i < n && i < d; i++)
		lean_rows(b, zt ? none : keys[i], zt ? zt + i * k : NULL, k, res, &ring[i % RING], 1);
	for (size_t t = 0; t < n; t++) {
		size_t i = t + d;
		if (i < n)
			lean_rows(b, zt ? none : keys[i], zt ? zt + i * k : NULL, k, res, &ring[i % RING], 1);
		if (room(res, b->n))
			return -ENOMEM;
		size_t before = res->n;
		res->n = bfi__and_line_avx2(ring[t % RING].rows, k, 0, b->first, mask, res->ords, res->n);
		if (key_answered(res, before, t, ends, tags))
			return -ENOMEM;
	}
	return 0;
}

__attribute__((target("avx2,bmi"))) static int
keys_line_avx2(const struct bfi_rblock *b, uint32_t k, const bfi_keyhash *keys, size_t n,
               bfi_result *res, size_t *ends)
{
	return keys_line_loop(b, k, keys, NULL, n, res, ends, NULL);
}

/* Several blocks (keys_by_block): the keys' probes from zt, answers tagged. */
__attribute__((target("avx2,bmi"))) static int
keys_line_tags_avx2(const struct bfi_rblock *b, uint32_t k, const uint64_t *zt, size_t n,
                    bfi_result *res, struct key_tags *tags)
{
	return keys_line_loop(b, k, NULL, zt, n, res, NULL, tags);
}
#endif

/* zt: the keys' k probes each, or NULL to hash them in the loop */
static int keys_short(const bfi_snapshot *s, uint32_t bi, const bfi_keyhash *keys,
                      const uint64_t *zt, size_t n, bfi_result *res, size_t *ends,
                      struct key_tags *tags)
{
#if defined(__x86_64__) && BFI_HAVE_AVX2
	if (bfi__and_rows() == bfi__and_rows_avx2) {
		const struct bfi_rblock *b = &s->blocks[bi];
		int line = b->pre == NULL && b->row_bytes == 64 && !b->packed && !res->count_bytes;
		if (line && zt == NULL && tags == NULL)
			return keys_line_avx2(b, s->lay.k, keys, n, res, ends);
		if (line && zt && tags)
			return keys_line_tags_avx2(b, s->lay.k, zt, n, res, tags);
		if (zt == NULL && tags == NULL)
			return keys_one_avx2(s, keys, n, res, ends);
		return keys_short_avx2(s, bi, keys, zt, n, res, ends, tags);
	}
#endif
	return keys_short_portable(s, bi, keys, zt, n, res, ends, tags);
}

/*
 * Several blocks of short rows, block by block: each block's pass appends
 * its answers tagged with their keys, and a counting sort by key then puts
 * every key's sets together, in block order.
 */
static int keys_by_block(const bfi_snapshot *s, const bfi_keyhash *keys, size_t n,
                         bfi_result *res, size_t *ends)
{
	struct key_tags tags = {NULL, 0};
	uint32_t k = s->lay.k;
	/* hashed once, not once a block: at 49 blocks the hashing outweighed the rest */
	uint64_t *zt = n && n <= SIZE_MAX / k / sizeof *zt ? malloc(n * k * sizeof *zt) : NULL;
	int rc = n && zt == NULL ? -ENOMEM : 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		for (uint32_t j = 0; j < k; j++)
			zt[i * k + j] = bfi_hash_probe(keys[i], j);
	for (uint32_t b = 0; b < s->lay.flat.n_blocks && rc == 0; b++)
		rc = keys_short(s, b, keys, zt, n, res, NULL, &tags);
	free(zt);
	uint32_t *out = rc == 0 && res->n ? malloc(res->n * sizeof *out) : NULL;
	if (rc == 0 && res->n && out == NULL)
		rc = -ENOMEM;
	if (rc == 0 && n) { /* n == 0: ends may be NULL, and there is nothing to sort */
		memset(ends, 0, n * sizeof *ends);
		for (size_t x = 0; x < res->n; x++)
			ends[tags.key[x]]++;
		for (size_t i = 0, at = 0; i < n; i++) {
			size_t c = ends[i];
			ends[i] = at;
			at += c;
		}
		for (size_t x = 0; x < res->n; x++)
			out[ends[tags.key[x]]++] = res->ords[x];
		if (out) {
			free(res->ords);
			res->ords = out;
			res->cap = res->n;
		}
	}
	free(tags.key);
	return rc;
}

/* Answer key h alone, through *one (made when first needed), and append it to res. */
static int append_key(const bfi_snapshot *s, unsigned layout, const bfi_keyhash *h,
                      bfi_result **one, bfi_result *res)
{
	int rc = *one ? 0 : bfi_result_create(one);
	if (rc)
		return rc;
	bfi_result_count_bytes(*one, res->count_bytes);
	struct bfi_expr e;
	bfi__expr_one_key(&e, *h);
	rc = bfi_query_expr(s, layout, &e, *one);
	if (rc == 0)
		rc = room(res, (*one)->n);
	if (rc)
		return rc;
	if ((*one)->n)
		memcpy(res->ords + res->n, (*one)->ords, (*one)->n * sizeof *(*one)->ords);
	res->n += (*one)->n;
	res->touched += (*one)->touched;
	return 0;
}

int bfi_query_keys(const bfi_snapshot *s, unsigned layout, const bfi_keyhash *keys, size_t n,
                   bfi_result *res, size_t *ends)
{
	if (s == NULL || res == NULL || (n && (keys == NULL || ends == NULL)))
		return BFI_E_INVALID;
	int rc = layout_of(s, layout, &layout);
	if (rc)
		return rc;
	reset_result(res, 0);
	if (short_rows(s, layout) && s->lay.flat.n_blocks == 1)
		return keys_short(s, 0, keys, NULL, n, res, ends, NULL);
	if (short_rows(s, layout))
		return keys_by_block(s, keys, n, res, ends);
	/* Otherwise one key at a time, through a result of its own. */
	bfi_result *one = NULL;
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = append_key(s, layout, &keys[i], &one, res);
		ends[i] = res->n;
	}
	bfi_result_destroy(&one);
	return rc;
}

/* Copy the answer of the query just answered in scratch w into res. */
static int hand_over(const bfi_result *w, bfi_result *res)
{
	/* at least one slot, so that the ordinals are never a null pointer */
	int rc = bfi__grow(&res->ords, &res->cap, w->n ? w->n : 1, sizeof *res->ords);
	if (rc)
		return rc;
	reset_result(res, 0);
	if (w->n)
		memcpy(res->ords, w->ords, w->n * sizeof *res->ords);
	res->n = w->n;
	res->touched = w->touched;
	return 0;
}

int bfi_query_batch(const bfi_snapshot *s, unsigned layout, const bfi_expr *const *qs, size_t n,
                    bfi_result *const *res)
{
	if (s == NULL || (n && (qs == NULL || res == NULL)))
		return BFI_E_INVALID;
	int rc = layout_of(s, layout, &layout);
	if (rc == 0 && short_rows(s, layout))
		return batch_short_rows(s, qs, n, res);
	for (size_t q = 0; q < n && rc == 0; q++) {
		/* The queries' own objects are cold in a large batch: ask for them
		 * ahead, the struct first and then the arrays it points to. */
		if (q + 2 * PREP_AHEAD < n)
			bfi__prefetch(qs[q + 2 * PREP_AHEAD]);
		if (q + PREP_AHEAD < n && qs[q + PREP_AHEAD]) {
			const struct bfi_expr *a = qs[q + PREP_AHEAD];
			bfi__prefetch(a->nodes);
			bfi__prefetch(a->keys);
			bfi__prefetch(a->kidx);
			bfi__prefetch(res[q + PREP_AHEAD]);
		}
		rc = check_args(s, qs[q], res[q]);
		if (rc == 0 && qs[q]->nodes[qs[q]->root].type == BFI_EXPR_TERMS)
			rc = BFI_E_INVALID;
		/* flat: each query is prepared at its turn, below */
		if (rc == 0 && layout != BFI_LAYOUT_FLAT)
			rc = prepare(s, layout, qs[q], res[q], 0);
	}
	if (rc)
		return rc;
	if (layout == BFI_LAYOUT_PLAIN) {
		for (size_t q = 0; q < n; q++) {
			plain_positions(s, qs[q], res[q]);
			run_plain(s, qs[q], res[q]);
		}
		return 0;
	}
	/* rambo and tree answer one query at a time */
	for (size_t q = 0; layout == BFI_LAYOUT_RAMBO && q < n && rc == 0; q++)
		rc = bfi__list_expr(s, qs[q], res[q], bfi__rambo_conj);
	for (size_t q = 0; layout == BFI_LAYOUT_TREE && q < n && rc == 0; q++)
		rc = bfi__list_expr(s, qs[q], res[q], bfi__tree_conj);
	if (layout == BFI_LAYOUT_RAMBO || layout == BFI_LAYOUT_TREE)
		return rc;
	/*
	 * Some block has long rows: query by query. A long row is streamed by
	 * the kernel whole, and no two queries of a batch share one (7,000 row
	 * picks among 100,989 rows in a synthetic block), so passes over each
	 * block fetched nothing once for many; they measured 0.76-0.85x of
	 * one query at a time on the synthetic workload (N = 10^4 to 10^6),
	 * query by query 0.97-1.04x, and alike on the text workload.
	 *
	 * Each query is answered in one scratch result, as one query at a time
	 * is, and its answer copied out. Answered in their own results, 1,000
	 * queries met 1,000 results' probes, row pointers and answer arrays
	 * (each sized for every set: 40 KB at N = 10^4, its own pages from
	 * 10^5), out of cache and TLB: 0.86-0.95x of one at a time at N = 10^4.
	 * While a query of one key is answered, the pre-filter lines of the
	 * next are asked for.
	 */
	bfi_and_fn and_rows = bfi__and_rows();
	if (n && res[0]->scratch == NULL)
		rc = bfi_result_create(&res[0]->scratch);
	bfi_result *w = n ? res[0]->scratch : NULL;
	for (size_t q = 0; q < n && rc == 0; q++) {
		if (q + 1 < n && key_mask_path(s, qs[q + 1])) {
			uint64_t z0 = bfi_hash_probe(*lean_key(qs[q + 1]), 0);
			prefetch_key_lines(s, &z0);
		}
		w->count_bytes = res[q]->count_bytes;
		rc = prepare(s, layout, qs[q], w, 0);
		if (rc == 0) {
			answer_flat(s, qs[q], w, and_rows);
			rc = hand_over(w, res[q]);
		}
	}
	return rc;
}

int bfi_query_key_layout(const bfi_snapshot *s, unsigned layout, const void *key, size_t len,
                         bfi_result *res)
{
	if (s == NULL || res == NULL || (key == NULL && len != 0))
		return BFI_E_INVALID;
	/* A one-key expression on the stack: no allocation per query. */
	struct bfi_expr e;
	bfi__expr_one_key(&e, bfi_hash_key(key, len));
	return bfi_query_expr(s, layout, &e, res);
}

int bfi_query_key(const bfi_snapshot *s, const void *key, size_t len, bfi_result *res)
{
	return bfi_query_key_layout(s, 0, key, len, res);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Highest score first, then by ordinal: sort (~score, ord) packed in 64 bits. */
static void rank(bfi_result *res)
{
	for (size_t i = 0; i < res->n; i++)
		res->rank[i] = (uint64_t)(UINT32_MAX - res->scores[i]) << 32 | res->ords[i];
	if (res->n > 1) /* no array to sort, maybe, when there is nothing to rank */
		qsort(res->rank, res->n, sizeof *res->rank, cmp_u64);
	for (size_t i = 0; i < res->n; i++) {
		res->ords[i] = (uint32_t)res->rank[i];
		res->scores[i] = UINT32_MAX - (uint32_t)(res->rank[i] >> 32);
	}
}

/*
 * A threshold query's terms in block b of short rows, counted per set into
 * res->counts: pipelined as a batch's keys are (STAGE_AHEAD terms between
 * asking for a term's lines and ANDing them, and as many again for the
 * pre-filter's line first), where one term after another waited on its
 * rows' lines in turn. z: the terms' k probes each; hits: scratch for one
 * term's sets.
 */
static inline __attribute__((always_inline)) void
terms_short_loop(const struct bfi_rblock *b, const uint64_t *z, uint32_t terms, uint32_t k,
                 bfi_result *res, uint32_t *hits, uint64_t *touched, bfi_and_fn and_rows, int avx2)
{
	struct lean_slot ring[RING];
	const bfi_keyhash none = {0, 0}; /* lean_rows hashes nothing when given probes */
	const size_t d = STAGE_AHEAD, p = b->pre ? STAGE_AHEAD : 0;
	uint64_t mask[BFI_LINE_WORDS];
	last_line_mask(b, mask);
	for (size_t i = 0; i < terms + p + d; i++) {
		if (p && i < terms)
			bfi__prefetch(pre_line_of(b, z[i * k]));
		if (i >= p && i - p < terms)
			lean_rows(b, none, z + (i - p) * k, k, res, &ring[(i - p) % RING], 0);
		if (i < p + d || i - p - d >= terms)
			continue;
		const struct lean_slot *slot = &ring[(i - p - d) % RING];
		if (slot->state == 0)
			continue;
		/* hits are the block's own set numbers, from 0 */
		size_t h = lean_and(slot, k, b, 0, mask, hits, 0, touched,
		                    and_rows, avx2);
		for (size_t j = 0; j < h; j++)
			res->counts[hits[j]]++;
	}
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
__attribute__((target("avx2,bmi"))) static void
terms_short_avx2(const struct bfi_rblock *b, const uint64_t *z, uint32_t terms, uint32_t k,
                 bfi_result *res, uint32_t *hits, uint64_t *touched, bfi_and_fn and_rows)
{
	terms_short_loop(b, z, terms, k, res, hits, touched, and_rows, 1);
}
#endif

static void terms_short(const struct bfi_rblock *b, const uint64_t *z, uint32_t terms, uint32_t k,
                        bfi_result *res, uint32_t *hits, uint64_t *touched, bfi_and_fn and_rows)
{
#if defined(__x86_64__) && BFI_HAVE_AVX2
	if (and_rows == bfi__and_rows_avx2) {
		terms_short_avx2(b, z, terms, k, res, hits, touched, and_rows);
		return;
	}
#endif
	terms_short_loop(b, z, terms, k, res, hits, touched, and_rows, 0);
}

/* The same in a block of long rows: term by term, each row streamed by the kernel. */
static void terms_long(const struct bfi_rblock *b, const uint64_t *z, uint32_t terms, uint32_t k,
                       bfi_result *res, uint32_t *hits, uint64_t *touched, bfi_and_fn and_rows)
{
	for (uint32_t t = 0; t < terms; t++) {
		const uint64_t *zt = z + (size_t)t * k;
		if (!pre_pass(b, zt, k, res))
			continue;
		for (uint32_t i = 0; i < k; i++)
			res->rows[i] = flat_row(b, bfi_reduce(zt[i], b->m), res, i);
		size_t h = and_rows(res->rows, k, b->row_bytes / 8, 0, b->n, hits, touched);
		for (size_t i = 0; i < h; i++)
			res->counts[hits[i]]++;
	}
}

int bfi_query_threshold(const bfi_snapshot *s, unsigned layout, const bfi_expr *e, double theta,
                        bfi_result *res)
{
	int rc = check_args(s, e, res);
	if (rc == 0 && (!(theta > 0 && theta <= 1) || e->nodes[e->root].type != BFI_EXPR_TERMS))
		rc = BFI_E_INVALID;
	if (rc == 0)
		rc = layout_of(s, layout, &layout);
	if (rc == 0)
		rc = prepare(s, layout, e, res, 1);
	if (rc)
		return rc;
	uint32_t terms = e->n_keys, k = s->lay.k;
	uint32_t need = (uint32_t)(theta * terms);
	if ((double)need < theta * terms)
		need++;
	if (need == 0)
		need = 1;
	uint64_t *touched = res->count_bytes ? &res->touched : NULL;
	if (layout == BFI_LAYOUT_RAMBO) {
		rc = bfi__list_threshold(s, e, need, res, bfi__rambo_conj);
		if (rc)
			return rc;
	} else if (layout == BFI_LAYOUT_TREE) {
		rc = bfi__list_threshold(s, e, need, res, bfi__tree_conj);
		if (rc)
			return rc;
	} else if (layout == BFI_LAYOUT_PLAIN) {
		plain_positions(s, e, res);
		uint64_t lines = 0;
		const uint8_t *f = s->plain;
		for (uint64_t j = 0; j < s->lay.n_sets; j++, f += s->lay.plain.filter_bytes) {
			uint32_t score = 0;
			for (uint32_t t = 0; t < terms; t++) {
				const uint64_t *p = res->z + (size_t)t * k;
				uint32_t i = 0;
				while (i < k && (f[p[i] / 8] >> (p[i] % 8) & 1))
					i++;
				lines += i < k ? i + 1 : i;
				score += i == k;
			}
			if (score >= need) {
				res->ords[res->n] = (uint32_t)j;
				res->scores[res->n++] = score;
			}
		}
		if (touched)
			*touched += lines * 64;
	} else {
		bfi_and_fn and_rows = bfi__and_rows();
		for (uint32_t bi = 0; bi < s->lay.flat.n_blocks; bi++) {
			const struct bfi_rblock *b = &s->blocks[bi];
			memset(res->counts, 0, b->n * sizeof *res->counts);
			/* ords past res->n are free: use them for each term's hits */
			uint32_t *hits = res->ords + res->n;
			if (b->row_bytes <= BFI_SHORT_ROW)
				terms_short(b, res->z, terms, k, res, hits, touched, and_rows);
			else
				terms_long(b, res->z, terms, k, res, hits, touched, and_rows);
			for (uint32_t j = 0; j < b->n; j++)
				if (res->counts[j] >= need) {
					res->ords[res->n] = b->first + j;
					res->scores[res->n++] = res->counts[j];
				}
		}
	}
	rank(res);
	return 0;
}
