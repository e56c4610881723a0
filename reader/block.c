/*
 * block.c - the flat layout's query of one block: probes, the union
 * pre-filter, the conjunction's rows, and AND and OR nodes as bit
 * vectors of the block, each child evaluated only under the lines its AND
 * siblings left non-zero. Used by queries one at a time (flat.c) and by
 * the pipeline (pipe.c) for queries it does not take itself.
 */
#include <errno.h>
#include <stdlib.h>

#include "flat.h"

/* Room in res->pack for rows copied-out rows of the widest packed block of f. */
static int pack_room(const struct bfi_flat *f, bfi_result *res, size_t rows)
{
	if (f->max_packed_bytes == 0 || rows <= res->pack_cap)
		return 0;
	if (rows > SIZE_MAX / f->max_packed_bytes)
		return -ENOMEM;
	uint8_t *p = aligned_alloc(64, rows * (size_t)f->max_packed_bytes);
	if (p == NULL)
		return -ENOMEM;
	free(res->pack);
	res->pack = p;
	res->pack_cap = rows;
	return 0;
}

int bfi__flat_prepare(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res, int scores)
{
	const struct bfi_flat *f = bfi__flat(s);
	uint32_t k = f->k;
	size_t words = (size_t)(f->max_row_bytes / 8);
	size_t levels = e->nodes[e->root].type == BFI_EXPR_KEYS ? 0 : bfi__expr_depth(e, e->root) + 1;
	int rc = bfi__prepare(s, res, scores);
	if (rc == 0)
		rc = bfi__grow(&res->z, &res->z_cap, (size_t)e->n_keys * k, sizeof *res->z);
	if (rc == 0)
		rc = bfi__grow(&res->rows, &res->rows_cap, (size_t)e->n_keys * k, sizeof *res->rows);
	if (rc == 0)
		rc = pack_room(f, res, (size_t)e->n_keys * k);
	if (rc == 0)
		rc = bfi__grow(&res->vec, &res->vec_cap, levels * words, sizeof *res->vec);
	if (rc == 0 && scores)
		rc = bfi__grow(&res->counts, &res->counts_cap, f->max_block_sets, sizeof *res->counts);
	if (rc)
		return rc;
	for (uint32_t key = 0; key < e->n_keys; key++)
		for (uint32_t i = 0; i < k; i++)
			res->z[(size_t)key * k + i] = bfi_hash_probe(e->keys[key], i);
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
		 * mispredict where a query tests every block. Returns k or 0.
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

int bfi__pre_pass(const struct bfi_rblock *b, const uint64_t *z, uint32_t k, bfi_result *res)
{
	if (b->pre == NULL)
		return 1;
	uint32_t i = pre_probes(b, z, k);
	if (res->count_bytes)
		res->touched += b->line_pre ? 64 : (uint64_t)(i < k ? i + 1 : k) * 64;
	return i == k;
}

/* Does the block's pre-filter rule out some key of the conjunction? */
static int conj_skipped(const struct bfi_flat *f, const struct bfi_expr *e,
                        const struct bfi_enode *n, const struct bfi_rblock *b, bfi_result *res)
{
	if (b->pre == NULL)
		return 0;
	for (uint32_t j = 0; j < n->n_keys; j++)
		if (!bfi__pre_pass(b, res->z + (size_t)e->kidx[n->first_key + j] * f->k, f->k, res))
			return 1;
	return 0;
}

/* Row pointers of the conjunction node in block b; returns their count. */
static size_t conj_rows(const struct bfi_flat *f, const struct bfi_expr *e,
                        const struct bfi_enode *n, const struct bfi_rblock *b, bfi_result *res)
{
	uint32_t k = f->k;
	size_t r = 0;
	for (uint32_t j = 0; j < n->n_keys; j++) {
		const uint64_t *z = res->z + (size_t)e->kidx[n->first_key + j] * k;
		for (uint32_t i = 0; i < k; i++)
			res->rows[r] = bfi__flat_row(b, bfi_reduce(z[i], b->m), res, r), r++;
	}
	return r;
}

/*
 * out = node AND mask on block b (mask NULL: no mask), words long. vec is
 * scratch for the levels below. Lines where mask is zero are not read.
 */
static void eval_block(const struct bfi_flat *f, const struct bfi_expr *e, uint32_t id,
                       const struct bfi_rblock *b, const uint64_t *mask, uint64_t *out,
                       uint64_t *vec, size_t words, bfi_result *res)
{
	const struct bfi_enode *n = &e->nodes[id];
	uint64_t *touched = res->count_bytes ? &res->touched : NULL;
	if (n->type == BFI_EXPR_KEYS) {
		if (conj_skipped(f, e, n, b, res)) {
			memset(out, 0, words * 8);
			return;
		}
		size_t r = conj_rows(f, e, n, b, res);
		bfi__and_rows_mask(res->rows, r, words, mask, out, touched);
		return;
	}
	const uint32_t *kid = e->kids + n->first_kid;
	eval_block(f, e, kid[0], b, mask, out, vec + words, words, res);
	for (uint32_t i = 1; i < n->n_kids; i++) {
		if (n->type == BFI_EXPR_AND) {
			uint64_t any = 0;
			for (size_t w = 0; w < words && !any; w++)
				any = out[w];
			if (!any)
				return;
			eval_block(f, e, kid[i], b, out, vec, vec + words, words, res);
			memcpy(out, vec, words * 8);
		} else {
			eval_block(f, e, kid[i], b, mask, vec, vec + words, words, res);
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

/* Ask for the first probes of block blk's pre-filter for query e. */
static void prefetch_block_probes(const struct bfi_flat *f, const struct bfi_expr *e,
                                  const bfi_result *res, const struct bfi_rblock *blk)
{
	const struct bfi_enode *n = &e->nodes[e->root];
	uint32_t k = f->k, ahead = k < PRE_AHEAD ? k : PRE_AHEAD;
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
static void prefetch_rest(const struct bfi_flat *f, const struct bfi_expr *e, const bfi_result *res,
                          const struct bfi_rblock *blk)
{
	const struct bfi_enode *n = &e->nodes[e->root];
	uint32_t k = f->k;
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

void bfi__flat_prefetch_pre(const struct bfi_flat *f, const struct bfi_expr *e,
                            const bfi_result *res)
{
	for (uint32_t b = 0; b < f->n_blocks; b++)
		if (f->blocks[b].pre)
			prefetch_block_probes(f, e, res, &f->blocks[b]);
	for (uint32_t b = 0; b < f->n_blocks; b++)
		if (f->blocks[b].pre)
			prefetch_rest(f, e, res, &f->blocks[b]);
}

void bfi__flat_block(const bfi_snapshot *s, const struct bfi_expr *e, const struct bfi_rblock *b,
                     bfi_result *res, bfi_and_fn and_rows)
{
	const struct bfi_flat *f = bfi__flat(s);
	const struct bfi_enode *root = &e->nodes[e->root];
	size_t words = b->row_bytes / 8;
	if (root->type == BFI_EXPR_KEYS) {
		size_t r = 0;
		if (b->pre) {
			/* Start the rows' first lines loading while the pre-filter is probed:
			 * a key the block holds then pays for one round trip, not two.
			 * Not with many blocks, where most are skipped: their rows are
			 * neither fetched nor located. */
			if (f->n_blocks <= BFI_MANY_BLOCKS) {
				r = conj_rows(f, e, root, b, res);
				for (size_t i = 0; i < r && i < 16; i++)
					bfi__prefetch(res->rows[i]);
			}
			if (conj_skipped(f, e, root, b, res))
				return;
		}
		if (r == 0)
			r = conj_rows(f, e, root, b, res);
		res->n += and_rows(res->rows, (uint32_t)r, words, b->first, b->n, res->ords + res->n,
		                   res->count_bytes ? &res->touched : NULL);
		return;
	}
	eval_block(f, e, e->root, b, NULL, res->vec, res->vec + words, words, res);
	emit_vec(res->vec, b, res);
}
