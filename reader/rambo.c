/*
 * rambo.c - queries on the RAMBO layout (spec/format.md, "RAMBO section").
 *
 * For a conjunction of keys, each repetition ANDs all the keys' rows into
 * a bitmap of matching cells. A set is a candidate when its cell matches
 * in every repetition: start from the repetition whose matching cells hold
 * the fewest members, and test each of them against the other bitmaps
 * through the cell-of tables. ANDing rows of several keys is exact here
 * too: a set holds a and b as far as RAMBO can tell exactly when its cell
 * holds both in every repetition.
 *
 * The cell tables are checked where they are used (a member below N, a
 * cell below B, starts in order), so a damaged table gives
 * BFI_E_BAD_LAYOUT, never a read outside the map.
 */
#include <errno.h>
#include <stdlib.h>

#include "expr.h"

#define LOOKAHEAD 16 /* members ahead whose cell-of entries are prefetched */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/*
 * map = AND of the n rows, words 64-bit words each. RAMBO rows are B bits
 * in whole words (not 64-byte lines), so this walks words, dropping a word
 * as soon as it is zero.
 */
static void and_words(const uint8_t *const *rows, size_t n, size_t words, uint64_t *map,
                      uint64_t *touched)
{
	uint64_t loads = 0;
	for (size_t w = 0; w < words; w++) {
		uint64_t acc = ~0ull;
		for (size_t i = 0; i < n && acc; i++, loads++)
			acc &= ((const uint64_t *)rows[i])[w];
		map[w] = acc;
	}
	if (touched)
		*touched += loads * 8;
}

static int test_bit(const uint64_t *v, uint64_t i)
{
	return (int)(le64toh(v[i / 64]) >> (i % 64) & 1);
}

/*
 * Sets whose cells match the conjunction node n in every repetition, into
 * out (room for N), ascending. Returns the count, or a negative error.
 */
long bfi__rambo_conj(const bfi_snapshot *s, const struct bfi_expr *e, const struct bfi_enode *n,
                     bfi_result *res, uint32_t *out)
{
	const struct bfi_rambo_desc *d = &s->lay.rambo;
	uint32_t k = d->k; /* rambo sizes its own cells, so its k is its own */
	size_t words = (size_t)(s->reps[0].row_bytes / 8);
	uint64_t *touched = res->count_bytes ? &res->touched : NULL;
	uint64_t best = UINT64_MAX;
	uint32_t best_r = 0;
	for (uint32_t r = 0; r < d->reps; r++) {
		const struct bfi_rrep *rp = &s->reps[r];
		/* repetition r takes the key's probes r k .. r k + k - 1, unless all share 0 .. k - 1 */
		uint32_t base = d->flags & BFI_RAMBO_SHARED_PROBES ? 0 : r * k;
		size_t nr = bfi__conj_rows(e, n, k, base, rp->rows, rp->m, rp->row_bytes, res->rows);
		uint64_t *map = res->vec + (size_t)r * words;
		and_words(res->rows, nr, words, map, touched);
		uint64_t cand = 0;
		for (size_t w = 0; w < words; w++)
			for (uint64_t x = le64toh(map[w]); x; x &= x - 1) {
				uint64_t c = w * 64 + (uint64_t)__builtin_ctzll(x);
				if (c >= d->cells)
					return BFI_E_BAD_LAYOUT; /* padding bit set */
				uint32_t a = bfi_get32(rp->starts + c * 4), b = bfi_get32(rp->starts + c * 4 + 4);
				if (a > b || b > d->n_sets)
					return BFI_E_BAD_LAYOUT;
				cand += b - a;
			}
		if (cand < best) {
			best = cand;
			best_r = r;
		}
		if (cand == 0)
			return 0; /* no cell matches in this repetition: no set can */
	}
	const struct bfi_rrep *rb = &s->reps[best_r];
	const uint64_t *mb = res->vec + (size_t)best_r * words;
	long count = 0;
	for (size_t w = 0; w < words; w++)
		for (uint64_t x = le64toh(mb[w]); x; x &= x - 1) {
			uint64_t c = w * 64 + (uint64_t)__builtin_ctzll(x);
			uint32_t a = bfi_get32(rb->starts + c * 4), b = bfi_get32(rb->starts + c * 4 + 4);
			for (uint32_t at = a; at < b; at++) {
				/* the cell-of lookups are random: start those of a later member now */
				if (at + LOOKAHEAD < b) {
					uint32_t ahead = bfi_get32(rb->members + (size_t)(at + LOOKAHEAD) * 4);
					if (ahead < d->n_sets)
						for (uint32_t r = 0; r < d->reps; r++)
							if (r != best_r)
								bfi__prefetch(s->reps[r].cell_of + (size_t)ahead * 4);
				}
				uint32_t set = bfi_get32(rb->members + (size_t)at * 4);
				if (set >= d->n_sets)
					return BFI_E_BAD_LAYOUT;
				uint32_t r = 0;
				for (; r < d->reps; r++) {
					if (r == best_r)
						continue;
					uint32_t cell = bfi_get32(s->reps[r].cell_of + (size_t)set * 4);
					if (cell >= d->cells)
						return BFI_E_BAD_LAYOUT;
					if (!test_bit(res->vec + (size_t)r * words, cell))
						break;
				}
				if (r == d->reps)
					out[count++] = set;
			}
		}
	if (touched)
		*touched += (uint64_t)best * 4; /* the members read, at least */
	if (count > 1)
		qsort(out, (size_t)count, sizeof *out, cmp_u32);
	return count;
}

/* Sorted intersection or union of a (na) and b (nb) into out; returns the count. */
static size_t merge(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, int both,
                    uint32_t *out)
{
	size_t i = 0, j = 0, n = 0;
	while (i < na && j < nb) {
		if (a[i] == b[j]) {
			out[n++] = a[i];
			i++, j++;
		} else if (a[i] < b[j]) {
			if (!both)
				out[n++] = a[i];
			i++;
		} else {
			if (!both)
				out[n++] = b[j];
			j++;
		}
	}
	for (; !both && i < na; i++)
		out[n++] = a[i];
	for (; !both && j < nb; j++)
		out[n++] = b[j];
	return n;
}

/* Evaluate node id into out (room for N): sets ascending; count or error. */
static long eval(const bfi_snapshot *s, const struct bfi_expr *e, uint32_t id, bfi_result *res,
                 uint32_t *out, bfi_conj_fn conj)
{
	const struct bfi_enode *n = &e->nodes[id];
	if (n->type == BFI_EXPR_KEYS)
		return conj(s, e, n, res, out);
	size_t cap = (size_t)s->lay.n_sets;
	uint32_t *kid = malloc(cap * sizeof *kid), *tmp = malloc(cap * sizeof *tmp);
	long count = -ENOMEM;
	if (kid && tmp) {
		count = eval(s, e, e->kids[n->first_kid], res, out, conj);
		for (uint32_t i = 1; i < n->n_kids && count >= 0; i++) {
			if (n->type == BFI_EXPR_AND && count == 0)
				break;
			long m = eval(s, e, e->kids[n->first_kid + i], res, kid, conj);
			if (m < 0) {
				count = m;
				break;
			}
			count = (long)merge(out, (size_t)count, kid, (size_t)m, n->type == BFI_EXPR_AND, tmp);
			memcpy(out, tmp, (size_t)count * sizeof *out);
		}
	}
	free(kid);
	free(tmp);
	return count;
}

int bfi__list_expr(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res,
                   bfi_conj_fn conj)
{
	long n = eval(s, e, e->root, res, res->ords, conj);
	if (n < 0)
		return (int)n;
	res->n = (size_t)n;
	return 0;
}

int bfi__list_threshold(const bfi_snapshot *s, const struct bfi_expr *e, uint32_t need,
                        bfi_result *res, bfi_conj_fn conj)
{
	/* counts: one per set; hits: one term's sets (ords past res->n are free) */
	memset(res->counts, 0, (size_t)s->lay.n_sets * sizeof *res->counts);
	uint32_t *hits = res->ords;
	for (uint32_t t = 0; t < e->n_keys; t++) {
		struct bfi_enode leaf = {BFI_EXPR_KEYS, t, 1, 0, 0};
		long h = conj(s, e, &leaf, res, hits);
		if (h < 0)
			return (int)h;
		for (long i = 0; i < h; i++)
			res->counts[hits[i]]++;
	}
	res->n = 0;
	for (uint32_t j = 0; j < s->lay.n_sets; j++)
		if (res->counts[j] >= need) {
			res->ords[res->n] = j;
			res->scores[res->n++] = res->counts[j];
		}
	return 0;
}

int bfi_rambo_rep(const bfi_snapshot *s, uint32_t rep, uint64_t *m, struct bfi_rambo_cell_info *cells)
{
	if (s == NULL || m == NULL || s->lay.rambo_idx < 0 || rep >= s->lay.rambo.reps)
		return BFI_E_INVALID;
	const struct bfi_rrep *rp = &s->reps[rep];
	*m = rp->m;
	if (cells == NULL)
		return 0;
	uint64_t B = s->lay.rambo.cells;
	for (uint64_t c = 0; c < B; c++) {
		uint32_t a = bfi_get32(rp->starts + c * 4), b = bfi_get32(rp->starts + c * 4 + 4);
		if (a > b || b > s->lay.n_sets)
			return BFI_E_BAD_LAYOUT;
		cells[c].sets = b - a;
		cells[c].bits_set = 0;
	}
	for (uint64_t r = 0; r < rp->m; r++) {
		const uint8_t *row = rp->rows + r * rp->row_bytes;
		for (uint64_t w = 0; w < rp->row_bytes / 8; w++)
			for (uint64_t x = bfi_get64(row + w * 8); x; x &= x - 1) {
				uint64_t c = w * 64 + (uint64_t)__builtin_ctzll(x);
				if (c < B)
					cells[c].bits_set++;
			}
	}
	return 0;
}

int bfi_rambo_rows(const bfi_snapshot *s, uint32_t rep, const uint8_t **rows, uint64_t *m,
                   uint64_t *row_bytes)
{
	if (s == NULL || rows == NULL || m == NULL || row_bytes == NULL || s->lay.rambo_idx < 0 ||
	    rep >= s->lay.rambo.reps)
		return BFI_E_INVALID;
	*rows = s->reps[rep].rows;
	*m = s->reps[rep].m;
	*row_bytes = s->reps[rep].row_bytes;
	return 0;
}

size_t bfi__conj_rows(const struct bfi_expr *e, const struct bfi_enode *n, uint32_t k,
                      uint32_t probe0, const uint8_t *rows, uint64_t m, uint64_t row_bytes,
                      const uint8_t **out)
{
	size_t r = 0;
	for (uint32_t j = 0; j < n->n_keys; j++) {
		bfi_keyhash h = e->keys[e->kidx[n->first_key + j]];
		for (uint32_t i = 0; i < k; i++)
			out[r++] = rows + bfi_hash_pos(h, probe0 + i, m) * row_bytes;
	}
	return r;
}
