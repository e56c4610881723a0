/*
 * scan_pass.c - a flat block's part of a scan (scan.c) when the batch needs
 * more of the block's rows than the budget holds: one pass over the rows
 * in file order, range by range, instead of rounds of queries that each
 * read their own rows, and so read again the rows they share.
 *
 * Every key of every query of the batch that the block's pre-filter lets
 * through gets an accumulator, a row of the block's width: all ones,
 * ANDed with each of the key's k rows as the pass reaches them. A key the
 * pre-filter rules out, as the mapped query then skips it, reads the one
 * row of zeros; so the rows the state takes are those of the keys the
 * block may hold (on blocks of distinct sets, about a block's share of a
 * batch's keys). The probes (where in the index, which
 * key, which of its k) are sorted by the page they start on; a range
 * takes probes in that order while their pages fit what the budget
 * leaves beside the state, is read (ranges.c), and applied. The
 * pre-filter's probes go first, the same way, so that no row is read of
 * a key it rules out, nor of a query it leaves no answer in the block
 * (a term list with too few terms left, a conjunction missing a key).
 * With every range in, each query is answered from its keys'
 * accumulators: AND and OR nodes as bit vectors, a term list as counts
 * per set, as the block's mapped query answers it.
 *
 * The state is a row a key let through, so a batch whose keys' rows
 * would not fit beside a few of the block's rows is declined once the
 * pre-filter has spoken, and the scan takes the block in rounds of
 * queries instead (reading its shared rows again).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "flat.h"

struct pass {
	const bfi_snapshot *s;
	const struct bfi_rblock *b; /* in the index */
	struct bfi_rblock v;        /* the same, reading the shadow */
	uint32_t k;
	size_t words;               /* of a row in whole lines */
	const bfi_keyhash **key;    /* each key of the batch */
	uint64_t *acc;              /* words an accumulator: the keys let through, then a row of zeros */
	uint8_t *out;               /* ruled out by the pre-filter: a byte a key */
	uint32_t *slot;             /* each key's accumulator */
	uint64_t *row;              /* a packed row copied out */
	const struct bfi_expr *const *qs;
	size_t nq;
	double theta;
	int pre; /* the probes being placed are the pre-filter's */
};

/* May the block hold key g, by its pre-filter (in the shadow)? */
static int pre_holds(const struct pass *p, size_t g)
{
	uint64_t z[BFI_MAX_K];
	bfi_result none = {0};
	for (uint32_t i = 0; i < p->k; i++)
		z[i] = bfi_hash_probe(*p->key[g], i);
	return bfi__pre_pass(&p->v, z, p->k, &none);
}

/* The pre-filter probe pr: may the block hold its key? If not, the key is out. */
static void apply_pre(void *ctx, const struct bfi_probe *pr)
{
	struct pass *p = ctx;
	const struct bfi_rblock *v = &p->v;
	if (v->line_pre) {
		if (!pre_holds(p, pr->key))
			p->out[pr->key] = 1;
		return;
	}
	uint64_t pos = bfi_reduce(bfi_hash_probe(*p->key[pr->key], pr->j), v->pre_m);
	if (!(v->pre[pos / 8] >> (pos % 8) & 1))
		p->out[pr->key] = 1;
}

/*
 * A query that can no longer answer in the block, its keys tested against
 * the pre-filter, has every key put out, so that none of its rows is
 * read: a term list with fewer than need terms left, a conjunction with a
 * key out. (Its answer here is empty either way.)
 */
static void settle(struct pass *p)
{
	size_t base = 0;
	for (size_t q = 0; q < p->nq; base += p->qs[q]->n_keys, q++) {
		const struct bfi_expr *e = p->qs[q];
		int type = e->nodes[e->root].type;
		uint32_t in = 0;
		for (uint32_t t = 0; t < e->n_keys; t++)
			in += !p->out[base + t];
		if ((type == BFI_EXPR_TERMS && in < bfi__need(e, p->theta)) ||
		    (type == BFI_EXPR_KEYS && in < e->n_keys))
			memset(p->out + base, 1, e->n_keys);
	}
}

/*
 * The pre-filter's pages all in one range: each query's keys tested in
 * turn, as the mapped query tests them, a term list only until too few
 * terms are left to reach need (then every key of it is out).
 */
static void pre_by_query(void *ctx)
{
	struct pass *p = ctx;
	size_t base = 0;
	for (size_t q = 0; q < p->nq; base += p->qs[q]->n_keys, q++) {
		const struct bfi_expr *e = p->qs[q];
		uint32_t n = e->n_keys, pass = 0;
		uint32_t need = e->nodes[e->root].type == BFI_EXPR_TERMS ? bfi__need(e, p->theta) : 0;
		for (uint32_t t = 0; p->v.line_pre && t < n; t++)
			bfi__prefetch(bfi__pre_line_of(&p->v, bfi_hash_probe(*p->key[base + t], 0)));
		uint32_t t = 0;
		for (; t < n && pass + (n - t) >= need; t++) {
			if (pre_holds(p, base + t))
				pass++;
			else
				p->out[base + t] = 1;
		}
		if (t < n) /* too few left */
			memset(p->out + base, 1, n);
	}
	settle(p);
}

/* The row probe pr: its key's accumulator ANDed with the row. */
static void apply_row(void *ctx, const struct bfi_probe *pr)
{
	struct pass *p = ctx;
	const struct bfi_rblock *v = &p->v;
	uint64_t r = bfi_reduce(bfi_hash_probe(*p->key[pr->key], pr->j), v->m);
	const uint8_t *row = v->rows + r * v->row_bytes;
	if (v->packed) {
		bfi__unpack_row(v->rows, bfi__row_bit(v, r), v->n, p->row, v->row_bytes);
		row = (const uint8_t *)p->row;
	}
	uint64_t *a = p->acc + (size_t)p->slot[pr->key] * p->words;
	for (size_t w = 0; w < p->words; w++) {
		uint64_t x;
		memcpy(&x, row + w * 8, 8);
		a[w] &= x;
	}
}

/* out = node id of e, on the accumulators of e's keys (the batch's from base); vec is scratch. */
static void eval(const struct pass *p, const struct bfi_expr *e, uint32_t id, size_t base,
                 uint64_t *out, uint64_t *vec)
{
	const struct bfi_enode *nd = &e->nodes[id];
	size_t words = p->words;
	if (nd->type == BFI_EXPR_KEYS) {
		memset(out, 0xff, words * 8);
		for (uint32_t j = 0; j < nd->n_keys; j++) {
			const uint64_t *a = p->acc + (size_t)p->slot[base + e->kidx[nd->first_key + j]] * words;
			for (size_t w = 0; w < words; w++)
				out[w] &= a[w];
		}
		return;
	}
	const uint32_t *kid = e->kids + nd->first_kid;
	eval(p, e, kid[0], base, out, vec + words);
	for (uint32_t i = 1; i < nd->n_kids; i++) {
		eval(p, e, kid[i], base, vec, vec + words);
		for (size_t w = 0; w < words; w++)
			out[w] = nd->type == BFI_EXPR_AND ? out[w] & vec[w] : out[w] | vec[w];
	}
}

/* Query e's answer in the block, into ans (room for the block's sets), from its keys' at base. */
static void answer(const struct pass *p, const struct bfi_expr *e, size_t base, double theta,
                   uint64_t *vec, uint32_t *counts, bfi_result *ans)
{
	const struct bfi_rblock *b = p->b;
	int terms = e->nodes[e->root].type == BFI_EXPR_TERMS;
	bfi__reset_result(ans, terms);
	uint32_t in = 0;
	for (uint32_t t = 0; t < e->n_keys; t++)
		in += !p->out[base + t];
	if (in == 0) /* every key ruled out: no set of the block answers */
		return;
	if (!terms) {
		eval(p, e, e->root, base, vec, vec + p->words);
		for (size_t w = 0; w < p->words; w++)
			for (uint64_t x = le64toh(vec[w]); x; x &= x - 1) {
				uint64_t j = w * 64 + (uint64_t)__builtin_ctzll(x);
				if (j < b->n)
					ans->ords[ans->n++] = b->first + (uint32_t)j;
			}
		return;
	}
	/*
	 * Counts of the sets some term hits, found by the terms' union (vec),
	 * which is then walked in order; counts, zero on entry, are left zero.
	 */
	uint32_t need = bfi__need(e, theta);
	memset(vec, 0, p->words * 8);
	for (uint32_t t = 0; t < e->n_keys; t++) {
		if (p->out[base + t])
			continue;
		const uint64_t *a = p->acc + (size_t)p->slot[base + t] * p->words;
		for (size_t w = 0; w < p->words; w++) {
			vec[w] |= a[w];
			for (uint64_t x = le64toh(a[w]); x; x &= x - 1)
				counts[w * 64 + (uint64_t)__builtin_ctzll(x)]++;
		}
	}
	for (size_t w = 0; w < p->words; w++)
		for (uint64_t x = le64toh(vec[w]); x; x &= x - 1) {
			uint64_t j = w * 64 + (uint64_t)__builtin_ctzll(x);
			if (j < b->n && counts[j] >= need) {
				ans->ords[ans->n] = b->first + (uint32_t)j;
				ans->scores[ans->n++] = counts[j];
			}
			counts[j] = 0;
		}
}

/*
 * What a pass holds, kept from block to block of a scan (io->keep) so that
 * each block's pass does not fault its pages in afresh.
 */
struct kept {
	struct bfi_probes probes;
	uint64_t *vec, *acc;
	size_t vec_cap;
	size_t acc_bytes; /* acc: a mapping of its own, resized to each block's keys let through */
	uint32_t *counts;
	size_t counts_cap;
	const bfi_keyhash **key;
	size_t key_cap;
	uint8_t *out;
	size_t out_cap;
	uint32_t *slot;
	size_t slot_cap;
	bfi_result *ans;
};

/* Bytes k holds. */
static uint64_t held(const struct kept *k)
{
	uint64_t n = k->probes.cap * sizeof *k->probes.pr + k->probes.at_cap * sizeof *k->probes.at +
	             k->vec_cap * 8 + k->acc_bytes + k->counts_cap * sizeof *k->counts +
	             k->key_cap * sizeof *k->key + k->out_cap + k->slot_cap * sizeof *k->slot;
	return k->ans ? n + (k->ans->cap + k->ans->scores_cap) * 4 : n;
}

static void drop(void *keep)
{
	struct kept *k = keep;
	if (k == NULL)
		return;
	free(k->probes.pr);
	free(k->probes.at);
	free(k->vec);
	if (k->acc)
		munmap(k->acc, k->acc_bytes);
	free(k->counts);
	free(k->key);
	free(k->out);
	free(k->slot);
	bfi_result_destroy(&k->ans);
	free(k);
}

/* k's accumulators resized to bytes (whole pages): 0 or -ENOMEM. */
static int acc_resize(struct kept *k, size_t bytes)
{
	size_t page = BFI_SCAN_PAGE;
	bytes = (bytes + page - 1) / page * page;
	if (bytes == k->acc_bytes)
		return 0;
	void *p = k->acc ? mremap(k->acc, k->acc_bytes, bytes, MREMAP_MAYMOVE)
	                 : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	k->acc = p;
	k->acc_bytes = bytes;
	return 0;
}

/*
 * Key g's probe j (layout.h, bfi__probes_by_page): in the pre-filter when
 * placing its probes (its line, or its byte), else in the rows; none for
 * a row of a key that is out.
 */
static int flat_probe(void *ctx, size_t g, uint32_t j, uint64_t *off)
{
	const struct pass *p = ctx;
	const struct bfi_rblock *b = p->b;
	uint64_t z = bfi_hash_probe(*p->key[g], j), to;
	if (p->pre) {
		const uint8_t *at = b->line_pre ? bfi__pre_line_of(b, z) : b->pre + bfi_reduce(z, b->pre_m) / 8;
		*off = (uint64_t)(at - p->s->map);
		return 1;
	}
	if (p->out[g])
		return 0;
	bfi__flat_row_span(p->s, b, z, off, &to);
	return 1;
}

/* The state a pass keeps for every key on block b: its key, flag and slot, its k probes. */
static uint64_t key_base(uint32_t k)
{
	return sizeof(bfi_keyhash *) + 1 + sizeof(uint32_t) + (uint64_t)k * sizeof(struct bfi_probe);
}

/* ... and for a key the pre-filter lets through: its row besides. */
static uint64_t key_state(const struct bfi_rblock *b, uint32_t k)
{
	return b->row_bytes + key_base(k);
}

uint64_t bfi__flat_scan_key_state(const bfi_snapshot *s)
{
	const struct bfi_flat *f = bfi__flat(s);
	uint64_t most = 0;
	for (uint32_t i = 0; i < f->n_blocks; i++)
		if (!f->blocks[i].q && key_state(&f->blocks[i], f->k) > most)
			most = key_state(&f->blocks[i], f->k);
	return most;
}

int bfi__flat_scan_rows(const bfi_snapshot *s, uint64_t first, uint64_t n,
                        const struct bfi_expr *const *qs, size_t nq, double theta,
                        bfi_result *const *res, struct bfi_scan_io *io)
{
	const struct bfi_flat *f = bfi__flat(s);
	if (n != 1 || f->blocks[first].q || f->k > BFI_MAX_K)
		return BFI_SCAN_DECLINE; /* a grouped run's rows are lines of its groups */
	struct pass p = {.s = s, .b = &f->blocks[first], .k = f->k, .qs = qs, .nq = nq,
	                 .theta = theta};
	const struct bfi_rblock *b = p.b;
	p.words = (size_t)(b->row_bytes / 8);
	uint64_t keys = 0, levels = 2;
	for (size_t q = 0; q < nq; q++) {
		keys += qs[q]->n_keys;
		if (qs[q]->nodes[qs[q]->root].type != BFI_EXPR_TERMS &&
		    bfi__expr_depth(qs[q], qs[q]->root) + 2 > levels)
			levels = bfi__expr_depth(qs[q], qs[q]->root) + 2;
	}
	uint64_t n_probes = keys * f->k, span = b->packed ? (b->row_bits + 7) / 8 + 10 : b->row_bytes;
	uint64_t pages = (bfi_block_rows_bytes(b->m, b->row_bits) > bfi_bits_bytes(b->pre_m)
	                          ? bfi_block_rows_bytes(b->m, b->row_bits)
	                          : bfi_bits_bytes(b->pre_m)) / BFI_SCAN_PAGE + 3;
	/*
	 * The state: keys, flags, slots and probes, their count a page,
	 * vectors, counts, an answer, the row of zeros; and, once the
	 * pre-filter has ruled keys out, the accumulators of the rest.
	 */
	uint64_t state = bfi__mul_add(keys, key_base(f->k), 0);
	state = bfi__mul_add(pages + 1, sizeof(uint32_t), state);
	state = bfi__mul_add(levels + 2, b->row_bytes, state);
	state = bfi__mul_add(b->row_bytes * 8 + 2 * (uint64_t)b->n, sizeof(uint32_t), state);
	uint64_t base_state = state;
	if (bfi__pass_fits(io, state, 0, span, n_probes))
		return BFI_SCAN_DECLINE;

	struct kept *k = io->keep;
	if (k && held(k) > bfi__mul_add(keys, b->row_bytes, base_state)) {
		/* kept for a block of wider rows: more than this one may hold */
		drop(k);
		k = io->keep = NULL;
	}
	if (k == NULL && (k = io->keep = calloc(1, sizeof *k)) != NULL)
		io->drop = drop;
	size_t nk = keys ? (size_t)keys : 1;
	int rc = k == NULL ? -ENOMEM : 0;
	if (rc == 0 && ((rc = bfi__grow(&k->vec, &k->vec_cap, (levels + 1) * p.words, 8)) ||
	                (rc = bfi__grow(&k->counts, &k->counts_cap, b->row_bytes * 8, 4)) ||
	                (rc = bfi__grow(&k->key, &k->key_cap, nk, sizeof *k->key)) ||
	                (rc = bfi__grow(&k->out, &k->out_cap, nk, 1)) ||
	                (rc = bfi__grow(&k->slot, &k->slot_cap, nk, sizeof *k->slot)) ||
	                (k->ans == NULL && (rc = bfi_result_create(&k->ans))) ||
	                (rc = bfi__grow(&k->ans->ords, &k->ans->cap, b->n ? b->n : 1, 4)) ||
	                (rc = bfi__grow(&k->ans->scores, &k->ans->scores_cap, b->n ? b->n : 1, 4))))
		rc = rc < 0 ? rc : -ENOMEM;
	if (rc)
		return rc;
	memset(k->counts, 0, (size_t)b->row_bytes * 8 * sizeof *k->counts);
	memset(k->out, 0, nk);
	p.key = k->key;
	p.out = k->out;
	p.slot = k->slot;
	p.row = k->vec + levels * p.words;
	p.v = *b;
	p.v.rows = bfi__in_shadow(s, b->rows, io->shadow);
	p.v.pre = bfi__in_shadow(s, b->pre, io->shadow);
	bfi__pass_keys(qs, nq, p.key);

	if (b->pre) { /* the pre-filter first: a line a key, or a byte a probe */
		p.pre = 1;
		rc = bfi__probes_by_page(&k->probes, (uint64_t)(b->pre - s->map) / BFI_SCAN_PAGE,
		                         (size_t)pages, keys, b->line_pre ? 1 : f->k, flat_probe, &p);
		if (rc == 0)
			rc = bfi__probe_ranges(io, &k->probes, b->line_pre ? 64 : 1, NULL, apply_pre,
			                       pre_by_query, &p);
		if (rc == 0) /* taken range by range: the queries left no answer put out */
			settle(&p);
		rc = rc == 1 ? 0 : rc;
		p.pre = 0;
	}
	/* each key let through its accumulator, in key order; the rest the row of zeros after them */
	uint32_t live = 0;
	for (size_t g = 0; g < keys; g++)
		live += !p.out[g];
	for (size_t g = 0, at = 0; g < keys; g++)
		p.slot[g] = p.out[g] ? live : (uint32_t)at++;
	if (rc == 0) { /* the rows of the keys let through (without a pre-filter, every key) */
		uint64_t need = bfi__mul_add(live, b->row_bytes, keys * key_base(f->k));
		if (io->key_state < need)
			io->key_state = need;
		state = bfi__mul_add(live, b->row_bytes, base_state);
		if (bfi__pass_fits(io, state, 0, span, n_probes))
			return BFI_SCAN_DECLINE; /* the keys let through do not fit: rounds of queries */
	}
	/*
	 * As many as this block needs: a block before may have let more
	 * through, in more room. A mapping, resized, gives back what a block
	 * no longer needs at once; the heap, reallocated block after block,
	 * kept the freed rows and passed the budget by as much again.
	 */
	if (rc == 0)
		rc = acc_resize(k, ((size_t)live + 1) * (size_t)b->row_bytes);
	if (rc)
		return rc;
	p.acc = k->acc;
	memset(p.acc, 0xff, (size_t)live * (size_t)b->row_bytes);
	memset(p.acc + (size_t)live * p.words, 0, (size_t)b->row_bytes);
	rc = bfi__probes_by_page(&k->probes, (uint64_t)(b->rows - s->map) / BFI_SCAN_PAGE,
	                         (size_t)pages, keys, f->k, flat_probe, &p);
	if (rc == 0)
		rc = bfi__probe_ranges(io, &k->probes, span, NULL, apply_row, NULL, &p);
	for (size_t q = 0, g = 0; q < nq && rc == 0; q++) {
		answer(&p, qs[q], g, theta, k->vec, k->counts, k->ans);
		rc = io->append(io, k->ans, 0, res[q]);
		g += qs[q]->n_keys;
	}
	return rc;
}
