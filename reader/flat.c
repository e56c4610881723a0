/*
 * flat.c - the flat layout (spec/format.md, "Flat section"): its view,
 * and queries block by block.
 *
 * A query is prepared once (key probes computed, result reset), run on
 * each block (block.c), and finished, which is what lets a batch run
 * every query on a block before the next. Blocks of short rows answer
 * batches, bare keys and thresholds through the pipeline (pipe.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "flat.h"

/* This file's own ops, defined at its end: the table (layouts.c) holds them. */
extern const struct bfi_layout_ops bfi__flat_ops;

static int flat_open(bfi_snapshot *s, const uint8_t *sec, uint64_t size, struct bfi_where *at)
{
	struct bfi_flat *f = s->view[BFI_ROW_FLAT];
	int rc = bfi_flat_decode(sec, size, &f->d, NULL, at);
	if (rc)
		return rc;
	f->n_blocks = f->d.n_blocks;
	f->k = f->d.k;
	struct bfi_block *table = calloc(f->n_blocks, sizeof *table);
	f->blocks = calloc(f->n_blocks, sizeof *f->blocks);
	/* the same decoder, now keeping the block table it checked */
	rc = table && f->blocks ? bfi_flat_decode(sec, size, &f->d, table, at) : -ENOMEM;
	for (uint32_t i = 0; rc == 0 && i < f->n_blocks; i++) {
		struct bfi_rblock *b = &f->blocks[i];
		b->first = (uint32_t)table[i].first_set;
		b->n = (uint32_t)table[i].n_sets;
		b->m = table[i].m;
		b->row_bits = table[i].row_bits;
		b->row_bytes = bfi_bits_bytes(b->n);
		b->packed = !bfi_rows_lined(b->row_bits);
		b->rows = sec + table[i].rows_offset;
		b->pre_m = table[i].pre_m;
		b->pre = b->pre_m ? sec + table[i].pre_offset : NULL;
		b->line_pre = (f->d.flags & BFI_FLATF_LINE_PRE) != 0;
		if (b->packed && b->row_bytes > f->max_packed_bytes)
			f->max_packed_bytes = b->row_bytes;
		if (b->row_bytes > f->max_row_bytes)
			f->max_row_bytes = b->row_bytes;
		if (b->n > f->max_block_sets)
			f->max_block_sets = b->n;
	}
	/* grouped runs: each block's q, the groups' stride and where its rows start in a group */
	for (uint32_t i = 0; rc == 0 && i < f->n_blocks;) {
		uint32_t n;
		uint64_t groups, group_bits, bytes, seg = 0;
		if (table[i].group == 0) {
			i++;
			continue;
		}
		if (bfi_group_run(table, f->n_blocks, i, &n, &groups, &group_bits, &bytes)) {
			rc = BFI_E_BAD_LAYOUT; /* the decoder took it: never */
			break;
		}
		for (uint32_t e = i + n; i < e; i++) {
			struct bfi_rblock *b = &f->blocks[i];
			b->q = table[i].group & BFI_GROUP_Q_MASK;
			b->group_bits = group_bits;
			b->groups = groups;
			b->seg = seg;
			seg += b->q * b->row_bits;
		}
		f->blocks[i - n].run_used = seg;
		f->blocks[i - n].run_n = n;
		f->runs += n > 1;
	}
	free(table);
	/* the lanes of the runs that take them (group.c), at most one a run */
	if (rc == 0 && f->runs && (f->gvec = calloc(f->runs, sizeof *f->gvec)) == NULL)
		rc = -ENOMEM;
	for (uint32_t i = 0, g = 0; rc == 0 && f->runs && i < f->n_blocks; i++)
		if (bfi__group_lanes_fit(&f->blocks[i])) {
			bfi__group_lanes(&f->blocks[i], &f->gvec[g]);
			f->blocks[i].vec = &f->gvec[g++];
		}
	return rc;
}

static void flat_close(bfi_snapshot *s)
{
	struct bfi_flat *f = s->view[BFI_ROW_FLAT];
	free(f->blocks);
	free(f->gvec);
}

/* The block holding ordinal ord (which must be < n_sets): a binary search of the blocks. */
static const struct bfi_rblock *block_of(const struct bfi_flat *f, uint32_t ord)
{
	uint32_t lo = 0, hi = f->n_blocks;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (f->blocks[mid].first <= ord)
			lo = mid;
		else
			hi = mid;
	}
	return &f->blocks[lo];
}

static uint64_t flat_set_bits(const bfi_snapshot *s, uint32_t ord)
{
	return block_of(bfi__flat(s), ord)->m;
}

static void flat_info(const bfi_snapshot *s, struct bfi_layout_info *out)
{
	const struct bfi_flat *f = bfi__flat(s);
	out->hashes = f->k;
	out->n_sets = f->d.n_sets;
	out->u.flat = (struct bfi_flat_info){f->n_blocks, (f->d.flags & BFI_FLATF_SIZE_ORDER) != 0,
	                                     (f->d.flags & BFI_FLATF_LINE_PRE) != 0};
	for (uint32_t i = 0; i < f->n_blocks; i++)
		if (f->blocks[i].m > out->bits)
			out->bits = f->blocks[i].m;
}

int bfi_block(const bfi_snapshot *s, uint32_t i, struct bfi_block_info *out)
{
	const struct bfi_flat *f = s ? bfi__flat(s) : NULL;
	if (f == NULL || out == NULL || i >= f->n_blocks)
		return BFI_E_INVALID;
	const struct bfi_rblock *b = &f->blocks[i];
	out->first_set = b->first;
	out->n_sets = b->n;
	out->bits = b->m;
	out->row_bits = b->row_bits;
	out->prefilter_bits = b->pre_m;
	out->offset = (uint64_t)(b->rows - s->map);
	return 0;
}

int bfi_block_rows(const bfi_snapshot *s, uint32_t i, const uint8_t **rows, uint64_t *bytes,
                   const uint8_t **pre)
{
	const struct bfi_flat *f = s ? bfi__flat(s) : NULL;
	if (f && s->lazy)
		return BFI_E_SCAN_ONLY;
	if (f == NULL || rows == NULL || bytes == NULL || pre == NULL || i >= f->n_blocks)
		return BFI_E_INVALID;
	const struct bfi_rblock *b = &f->blocks[i];
	if (b->q) /* rows shared with its run's other blocks: bfi_block_unpack */
		return BFI_E_INVALID;
	*rows = b->rows;
	*bytes = bfi_block_rows_bytes(b->m, b->row_bits);
	*pre = b->pre;
	return 0;
}

int bfi_block_unpack(const bfi_snapshot *s, uint32_t i, uint8_t *dst, uint64_t bytes)
{
	const struct bfi_flat *f = s ? bfi__flat(s) : NULL;
	if (f && s->lazy)
		return BFI_E_SCAN_ONLY;
	if (f == NULL || dst == NULL || i >= f->n_blocks)
		return BFI_E_INVALID;
	const struct bfi_rblock *b = &f->blocks[i];
	uint64_t want = bfi_block_rows_bytes(b->m, b->row_bits);
	if (bytes != want)
		return BFI_E_INVALID;
	if (!b->q) {
		memcpy(dst, b->rows, (size_t)want);
		return 0;
	}
	memset(dst, 0, (size_t)want);
	uint64_t row[8]; /* a grouped block's row: at most 511 bits */
	for (uint64_t r = 0; r < b->m; r++) {
		bfi__unpack_row(b->rows, bfi__row_bit(b, r), b->n, row, sizeof row);
		/* OR it in at bit r * row_bits, a word of it at a time */
		for (uint64_t x = 0, at = r * b->row_bits; x < b->n; x += 64) {
			uint64_t v = le64toh(row[x / 64]), bit = at + x;
			unsigned take = b->n - x < 64 ? (unsigned)(b->n - x) : 64;
			for (unsigned t = 0; t < take; t++, bit++)
				if (v >> t & 1)
					dst[bit / 8] |= (uint8_t)(1u << (bit % 8));
		}
	}
	return 0;
}

/*
 * Packed rows: is a bit set between a row's last set and the next row, or
 * in the zeros after the last row? If so, *bad->offset is where.
 */
static int packed_padding(const bfi_snapshot *s, const struct bfi_rblock *b, struct bfi_bad *bad)
{
	uint64_t end = bfi_block_rows_bytes(b->m, b->row_bits) * 8, at = UINT64_MAX;
	if (b->q) {
		/* a run's: past its blocks' rows in each group, and the line after the groups */
		uint64_t groups = b->groups;
		for (uint64_t g = 0; b->run_used && g < groups && at == UINT64_MAX; g++)
			at = bfi__first_set_bit(b->rows, g * b->group_bits + b->run_used,
			                        (g + 1) * b->group_bits);
		if (b->run_used && at == UINT64_MAX)
			at = bfi__first_set_bit(b->rows, groups * b->group_bits, groups * b->group_bits + 512);
		if (at == UINT64_MAX)
			return 0;
		bad->offset = (uint64_t)(b->rows - s->map) + at / 8;
		return 1;
	}
	for (uint64_t r = 0; b->row_bits > b->n && r < b->m && at == UINT64_MAX; r++)
		at = bfi__first_set_bit(b->rows, r * b->row_bits + b->n, (r + 1) * b->row_bits);
	if (at == UINT64_MAX)
		at = bfi__first_set_bit(b->rows, b->m * b->row_bits, end);
	if (at == UINT64_MAX)
		return 0;
	bad->offset = (uint64_t)(b->rows - s->map) + at / 8;
	return 1;
}

/* Set padding bits would be ordinals or positions that do not exist. */
static int flat_verify(const bfi_snapshot *s, struct bfi_bad *bad)
{
	const struct bfi_flat *f = bfi__flat(s);
	for (uint32_t i = 0; i < f->n_blocks; i++) {
		const struct bfi_rblock *b = &f->blocks[i];
		if (b->packed ? packed_padding(s, b, bad)
		              : bfi__rows_padding(s, b->rows, b->m, b->row_bytes, b->n, bad))
			return bfi__bad(bad, BFI_E_BAD_LAYOUT, bad->offset, 1,
			                "padding bit past the block's last set is not zero");
		uint64_t at = b->pre ? bfi__first_set_bit(b->pre, b->pre_m, bfi_bits_bytes(b->pre_m) * 8)
		                     : UINT64_MAX;
		if (at != UINT64_MAX)
			return bfi__bad(bad, BFI_E_BAD_LAYOUT, (uint64_t)(b->pre - s->map) + at / 8, 1,
			                "padding bit past the pre-filter's width is not zero");
	}
	return 0;
}

#define PREP_AHEAD 16 /* queries of a batch whose objects are requested ahead */
#define LINE_AHEAD 16 /* blocks whose pre-filter line is asked for before the test of the first */

/* The line of block b's line pre-filter that probe z0 tests, or NULL if b has none. */
static inline const uint8_t *key_line(const struct bfi_rblock *b, uint64_t z0)
{
	return b->pre ? b->pre + bfi_pre_line(z0, b->pre_m) / 8 : NULL;
}

/* Ask for the line of every block's line pre-filter that probe z0 tests. */
static void prefetch_key_lines(const struct bfi_flat *f, uint64_t z0)
{
	for (uint32_t b = 0; b < f->n_blocks; b++)
		if (f->blocks[b].pre)
			bfi__prefetch(key_line(&f->blocks[b], z0));
}

/*
 * One key against many blocks with line pre-filters: the k bits of the key
 * sit at the same offsets in its line of every block's pre-filter (only
 * the line differs), so they become one 512-bit mask, built once, and each
 * block's test asks whether its line holds the whole mask: two AVX2 tests
 * (vptest), or eight word tests, without branches or calls. Each block's
 * line is located once and asked for LINE_AHEAD blocks before its test.
 */
static inline __attribute__((always_inline)) void
key_blocks_loop(const struct bfi_flat *f, const struct bfi_expr *e, bfi_result *res,
                bfi_and_fn and_rows, int avx2)
{
	uint32_t k = f->k, nb = f->n_blocks;
	const uint64_t *z = res->z + (size_t)e->kidx[e->nodes[e->root].first_key] * k;
	uint64_t mask[BFI_LINE_WORDS] = {0};
	const uint8_t *ahead[LINE_AHEAD];
	for (uint32_t i = 0; i < k; i++) {
		uint32_t bit = bfi_pre_bit(z[i]);
		mask[bit / 64] |= htole64(UINT64_C(1) << (bit % 64));
	}
	for (uint32_t b = 0; b < nb && b < LINE_AHEAD; b++)
		if ((ahead[b] = key_line(&f->blocks[b], z[0])) != NULL)
			bfi__prefetch(ahead[b]);
	for (uint32_t b = 0; b < nb; b++) {
		const struct bfi_rblock *blk = &f->blocks[b];
		const uint8_t *line = ahead[b % LINE_AHEAD];
		if (b + LINE_AHEAD < nb &&
		    (ahead[b % LINE_AHEAD] = key_line(&f->blocks[b + LINE_AHEAD], z[0])) != NULL)
			bfi__prefetch(ahead[b % LINE_AHEAD]);
		if (line) {
			int holds = avx2 ? bfi__line_holds_avx2(line, mask) : bfi__line_holds(line, mask);
			if (res->count_bytes)
				res->touched += 64;
			if (!holds)
				continue;
		}
		for (uint32_t i = 0; i < k; i++)
			res->rows[i] = bfi__flat_row(blk, bfi_reduce(z[i], blk->m), res, i);
		res->n += and_rows(res->rows, k, blk->row_bytes / 8, blk->first, blk->n,
		                   res->ords + res->n, res->count_bytes ? &res->touched : NULL);
	}
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
__attribute__((target("avx2"))) static void
key_blocks_avx2(const struct bfi_flat *f, const struct bfi_expr *e, bfi_result *res,
                bfi_and_fn and_rows)
{
	key_blocks_loop(f, e, res, and_rows, 1);
}
#else
#define key_blocks_avx2(f, e, res, and_rows) key_blocks_loop(f, e, res, and_rows, 0)
#endif

/* Is e one key, on enough blocks with line pre-filters for key_blocks_loop? */
static int key_mask_path(const struct bfi_flat *f, const struct bfi_expr *e)
{
	return f->n_blocks > BFI_MANY_BLOCKS && (f->d.flags & BFI_FLATF_LINE_PRE) && e->single;
}

/* Blocks of a query of many keys answered between checks of the deadline. */
#define BLOCKS_CHECKED 16

/* Answer a prepared query e, every block: 0, or BFI_E_TIMEOUT past res's deadline. */
static int answer(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res,
                  bfi_and_fn and_rows)
{
	const struct bfi_flat *f = bfi__flat(s);
	if (f->runs && e->single && !res->count_bytes) {
		/* one key, grouped runs: each run's sets at once, from a line a probe */
		for (uint32_t b = 0; b < f->n_blocks; b++) {
			const struct bfi_rblock *blk = &f->blocks[b];
			if (bfi__group_fast(blk)) {
				bfi__group_ask(blk, res->z, f->k);
				res->n += bfi__group_key(blk, res->z, f->k, res->ords + res->n);
				b += blk->run_n - 1;
			} else {
				bfi__flat_block(s, e, blk, res, and_rows);
			}
		}
		return 0;
	}
	if (key_mask_path(f, e)) { /* one key: a line or a row a block, never long */
		if (and_rows == bfi__and_rows_avx2)
			key_blocks_avx2(f, e, res, and_rows);
		else
			key_blocks_loop(f, e, res, and_rows, 0);
		return 0;
	}
	if (f->n_blocks > BFI_MANY_BLOCKS)
		bfi__flat_prefetch_pre(f, e, res);
	int check = res->deadline && e->n_keys > 1;
	for (uint32_t b = 0; b < f->n_blocks; b++) {
		if (check && b % BLOCKS_CHECKED == 0 && bfi__late(res))
			return BFI_E_TIMEOUT;
		bfi__flat_block(s, e, &f->blocks[b], res, and_rows);
	}
	return 0;
}

static int flat_expr(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res)
{
	int rc = bfi__flat_prepare(s, e, res, 0);
	return rc ? rc : answer(s, e, res, bfi__and_rows());
}

/* Copy the answer of the query just answered in scratch w into res. */
static int hand_over(const bfi_result *w, bfi_result *res)
{
	/* at least one slot, so that the ordinals are never a null pointer */
	int rc = bfi__grow(&res->ords, &res->cap, w->n ? w->n : 1, sizeof *res->ords);
	if (rc)
		return rc;
	bfi__reset_result(res, 0);
	if (w->n)
		memcpy(res->ords, w->ords, w->n * sizeof *res->ords);
	res->n = w->n;
	res->touched = w->touched;
	return 0;
}

/*
 * Some block has long rows: query by query. A long row is streamed by the
 * kernel whole, and no two queries of a batch share one, so passes over
 * each block would fetch nothing once for many.
 *
 * Each query is answered in one scratch result, as one query at a time
 * is, and its answer copied out: answered in their own results, a batch's
 * queries would meet that many results' probes, row pointers and answer
 * arrays (each sized for every set) out of cache and TLB. While a query
 * of one key is answered, the pre-filter lines of the next are asked for.
 */
static int flat_batch(const bfi_snapshot *s, const struct bfi_expr *const *qs, size_t n,
                      bfi_result *const *res)
{
	const struct bfi_flat *f = bfi__flat(s);
	if (bfi__flat_short(f))
		return bfi__pipe_batch(s, qs, n, res);
	int rc = 0;
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
		rc = bfi__check_query(qs[q], res[q]);
	}
	bfi_and_fn and_rows = bfi__and_rows();
	if (rc == 0 && n && res[0]->scratch == NULL)
		rc = bfi_result_create(&res[0]->scratch);
	bfi_result *w = n ? res[0]->scratch : NULL;
	for (size_t q = 0; q < n && rc == 0; q++) {
		if (q + 1 < n && key_mask_path(f, qs[q + 1]))
			prefetch_key_lines(f, bfi_hash_probe(qs[q + 1]->keys[0], 0));
		w->count_bytes = res[q]->count_bytes;
		rc = bfi__flat_prepare(s, qs[q], w, 0);
		if (rc == 0) {
			rc = answer(s, qs[q], w, and_rows);
			if (rc)
				break;
			rc = hand_over(w, res[q]);
		}
	}
	return rc;
}

static int flat_keys(const bfi_snapshot *s, const bfi_keyhash *keys, size_t n, bfi_result *res,
                     size_t *ends)
{
	if (bfi__flat_short(bfi__flat(s)))
		return bfi__pipe_keys(s, keys, n, res, ends);
	return bfi__keys_each(s, &bfi__flat_ops, keys, n, res, ends);
}

/* Terms between checks of the deadline (bfi_result_deadline). */
#define TERMS_CHECKED 64

/* A threshold query's terms in a block of long rows: term by term, each row streamed whole. */
static int terms_long(const struct bfi_rblock *b, const uint64_t *z, uint32_t terms, uint32_t k,
                      bfi_result *res, uint32_t *hits, bfi_and_fn and_rows)
{
	uint64_t *touched = res->count_bytes ? &res->touched : NULL;
	for (uint32_t t = 0; t < terms; t++) {
		if (t % TERMS_CHECKED == TERMS_CHECKED - 1 && bfi__late(res))
			return BFI_E_TIMEOUT;
		const uint64_t *zt = z + (size_t)t * k;
		if (!bfi__pre_pass(b, zt, k, res))
			continue;
		for (uint32_t i = 0; i < k; i++)
			res->rows[i] = bfi__flat_row(b, bfi_reduce(zt[i], b->m), res, i);
		size_t h = and_rows(res->rows, k, b->row_bytes / 8, 0, b->n, hits, touched);
		for (size_t i = 0; i < h; i++)
			res->counts[hits[i]]++;
	}
	return 0;
}

#define SURVIVE_AFTER 2 /* terms counted whole past the first that can drop a set */

/* Append block-relative sets [0, n) of counts at or over need as first + j, with their scores. */
static void collect(bfi_result *res, const uint32_t *counts, uint32_t first, uint32_t n,
                    uint32_t need)
{
	for (uint32_t j = 0; j < n; j++)
		if (counts[j] >= need) {
			res->ords[res->n] = first + j;
			res->scores[res->n++] = counts[j];
		}
}

/*
 * Counts of the n blocks from b (res->counts, from b's first set: a run's
 * blocks, or one), already holding terms [0, from), to the end, each
 * block keeping only the sets that can still reach need (flat_survivors.c).
 */
static int survive(const struct bfi_flat *f, const struct bfi_rblock *b, uint32_t n,
                   const struct bfi_expr *e, uint32_t from, uint32_t need, bfi_result *res)
{
	int rc = 0;
	for (uint32_t x = 0; x < n && rc == 0; x++)
		rc = bfi__survivors(&b[x], res->z, from, e->n_keys, f->k, need,
		                    res->counts + (b[x].first - b->first), res->alive, res->live_words,
		                    res);
	return rc;
}

/*
 * Do at least need of the terms pass block b's pre-filter? If not, none of
 * its sets can reach need, and its rows are not read. The terms' lines are
 * asked for first, so that their misses overlap.
 */
static int pre_reaches(const struct bfi_rblock *b, const uint64_t *z, uint32_t terms, uint32_t k,
                       uint32_t need, bfi_result *res)
{
	for (uint32_t t = 0; t < terms; t++)
		bfi__prefetch(bfi__pre_line_of(b, z[(size_t)t * k]));
	uint32_t pass = 0;
	for (uint32_t t = 0; t < terms && pass < need && pass + (terms - t) >= need; t++)
		pass += (uint32_t)bfi__pre_pass(b, z + (size_t)t * k, k, res);
	return pass >= need;
}

static int flat_threshold(const bfi_snapshot *s, const struct bfi_expr *e, uint32_t need,
                          bfi_result *res)
{
	const struct bfi_flat *f = bfi__flat(s);
	int rc = bfi__flat_prepare(s, e, res, 1);
	if (rc)
		return rc;
	/*
	 * Pruned, the first terms - need + 1 terms are counted on every set:
	 * after them, a set with no hit cannot reach need. The rest are
	 * counted on the sets that still can (survive). Past that first
	 * chance, a set needs a hit every term, but those with one false
	 * positive among the first terms (a fifth of them at 25 terms and a
	 * rate of 0.01) are still in; SURVIVE_AFTER more terms counted whole
	 * leave few but the sets that match, which the kernels' whole rows
	 * find faster than survive's words would.
	 */
	uint32_t terms = e->n_keys, full = terms;
	if (bfi__pruning() && need >= 1 && need <= terms) {
		full = terms - need + 1 + SURVIVE_AFTER < terms ? terms - need + 1 + SURVIVE_AFTER : terms;
		size_t words = (f->max_block_sets + (size_t)63) / 64;
		if ((rc = bfi__grow(&res->alive, &res->alive_cap, words, sizeof *res->alive)) != 0 ||
		    (rc = bfi__grow(&res->live_words, &res->live_words_cap, words,
		                    sizeof *res->live_words)) != 0)
			return rc;
	}
	bfi_and_fn and_rows = bfi__and_rows();
	for (uint32_t bi = 0; bi < f->n_blocks; bi++) {
		const struct bfi_rblock *b = &f->blocks[bi];
		if (bfi__late(res))
			return BFI_E_TIMEOUT;
		if (bfi__group_fast(b)) { /* a grouped run: its blocks together */
			uint32_t sets = bfi__run_sets(b);
			if ((rc = bfi__grow(&res->counts, &res->counts_cap, sets, sizeof *res->counts)) != 0)
				return rc;
			memset(res->counts, 0, sets * sizeof *res->counts);
			bfi__group_terms(b, res->z, full, f->k, res->counts);
			if (full < terms && (rc = survive(f, b, b->run_n, e, full, need, res)) != 0)
				return rc;
			collect(res, res->counts, b->first, sets, need);
			bi += b->run_n - 1;
			continue;
		}
		if (full < terms && b->pre && !pre_reaches(b, res->z, terms, f->k, need, res))
			continue;
		memset(res->counts, 0, b->n * sizeof *res->counts);
		/* ords past res->n are free: use them for each term's hits */
		uint32_t *hits = res->ords + res->n;
		if (b->row_bytes <= BFI_SHORT_ROW)
			bfi__pipe_terms(b, res->z, full, f->k, res, hits);
		else if ((rc = terms_long(b, res->z, full, f->k, res, hits, and_rows)) != 0)
			return rc;
		if (full < terms && (rc = survive(f, b, 1, e, full, need, res)) != 0)
			return rc;
		collect(res, res->counts, b->first, b->n, need);
	}
	return 0;
}

/* Scan (scan.c): a part is a block, or a grouped run's blocks together. */
static uint64_t flat_scan_part(const bfi_snapshot *s, uint64_t first, uint64_t budget)
{
	const struct bfi_flat *f = bfi__flat(s);
	(void)budget;
	if (first >= f->n_blocks)
		return 0;
	return f->blocks[first].run_n > 1 ? f->blocks[first].run_n : 1;
}

/* Every probe's rows, and each block's pre-filter line or bytes, which are part of the answer. */
static int flat_scan_bytes(const bfi_snapshot *s, uint64_t first, uint64_t n,
                           const struct bfi_expr *e, struct bfi_want *w)
{
	const struct bfi_flat *f = bfi__flat(s);
	int rc = 0;
	for (uint32_t i = 0; e && i < e->n_keys && rc == 0; i++)
		for (uint32_t j = 0; j < f->k && rc == 0; j++) {
			uint64_t z = bfi_hash_probe(e->keys[i], j);
			for (uint64_t b = first; b < first + n && rc == 0; b++) {
				const struct bfi_rblock *blk = &f->blocks[b];
				uint64_t from, to;
				bfi__flat_row_span(s, blk, z, &from, &to);
				rc = bfi__want(w, from, to);
				if (rc || blk->pre == NULL || (blk->line_pre && j))
					continue;
				from = (uint64_t)(bfi__pre_line_of(blk, z) - s->map);
				rc = bfi__want(w, from, from + 64);
			}
		}
	return rc;
}

/* The part's blocks, their rows and pre-filters in shadow; the view numbers sets as s does. */
static int flat_scan_view(const bfi_snapshot *s, uint64_t first, uint64_t n, const uint8_t *shadow,
                          bfi_snapshot *v, uint32_t *ord0)
{
	const struct bfi_flat *f = bfi__flat(s);
	struct bfi_flat *part = v->view[BFI_ROW_FLAT];
	*part = *f;
	part->gvec = NULL; /* its blocks' lanes are s's, which outlives the view */
	part->blocks = malloc((size_t)n * sizeof *part->blocks);
	if (part->blocks == NULL)
		return -ENOMEM;
	part->n_blocks = (uint32_t)n;
	for (uint64_t b = 0; b < n; b++) {
		part->blocks[b] = f->blocks[first + b];
		part->blocks[b].rows = bfi__in_shadow(s, f->blocks[first + b].rows, shadow);
		part->blocks[b].pre = bfi__in_shadow(s, f->blocks[first + b].pre, shadow);
	}
	*ord0 = 0;
	return 0;
}

const struct bfi_layout_ops bfi__flat_ops = {
	.view_size = sizeof(struct bfi_flat), .open = flat_open, .close = flat_close,
	.info = flat_info, .verify = flat_verify, .set_bits = flat_set_bits,
	.expr = flat_expr, .batch = flat_batch, .keys = flat_keys, .threshold = flat_threshold,
	.scan_part = flat_scan_part, .scan_bytes = flat_scan_bytes, .scan_view = flat_scan_view,
	.scan_rows = bfi__flat_scan_rows, .scan_key_state = bfi__flat_scan_key_state,
};
