/*
 * lists.c - expressions and thresholds over sorted lists of sets, for the
 * layouts that answer a conjunction of keys with one (rambo.c, tree.c):
 * AND and OR merge their children's lists; a threshold counts each
 * term's list per set.
 */
#include <errno.h>
#include <stdlib.h>

#include "layout.h"

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
                 uint32_t *out, const struct bfi_layout_ops *ops)
{
	const struct bfi_enode *n = &e->nodes[id];
	if (n->type == BFI_EXPR_KEYS)
		return ops->conj(s, e, n, res, out);
	size_t cap = (size_t)s->lay.n_sets;
	uint32_t *kid = malloc(cap * sizeof *kid), *tmp = malloc(cap * sizeof *tmp);
	long count = -ENOMEM;
	if (kid && tmp) {
		count = eval(s, e, e->kids[n->first_kid], res, out, ops);
		for (uint32_t i = 1; i < n->n_kids && count >= 0; i++) {
			if (n->type == BFI_EXPR_AND && count == 0)
				break;
			if (i % 64 == 0 && bfi__late(res)) {
				count = BFI_E_TIMEOUT;
				break;
			}
			long m = eval(s, e, e->kids[n->first_kid + i], res, kid, ops);
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

/* Room in res for what ops->conj needs for e, and counts per set for scores. */
static int scratch(const bfi_snapshot *s, const struct bfi_layout_ops *ops,
                   const struct bfi_expr *e, bfi_result *res, int scores)
{
	size_t rows, words;
	ops->scratch(s, &rows, &words);
	int rc = bfi__grow(&res->rows, &res->rows_cap, (size_t)e->n_keys * rows, sizeof *res->rows);
	if (rc == 0)
		rc = bfi__grow(&res->vec, &res->vec_cap, words, sizeof *res->vec);
	if (rc == 0 && scores)
		rc = bfi__grow(&res->counts, &res->counts_cap, s->lay.n_sets, sizeof *res->counts);
	return rc;
}

int bfi__list_expr(const bfi_snapshot *s, const struct bfi_layout_ops *ops,
                   const struct bfi_expr *e, bfi_result *res)
{
	int rc = scratch(s, ops, e, res, 0);
	long n = rc ? rc : eval(s, e, e->root, res, res->ords, ops);
	if (n < 0)
		return (int)n;
	res->n = (size_t)n;
	return 0;
}

int bfi__list_threshold(const bfi_snapshot *s, const struct bfi_layout_ops *ops,
                        const struct bfi_expr *e, uint32_t need, bfi_result *res)
{
	int rc = scratch(s, ops, e, res, 1);
	if (rc)
		return rc;
	/* counts: one per set; hits: one term's sets (ords past res->n are free) */
	memset(res->counts, 0, (size_t)s->lay.n_sets * sizeof *res->counts);
	uint32_t *hits = res->ords;
	for (uint32_t t = 0; t < e->n_keys; t++) {
		if (t % 64 == 63 && bfi__late(res))
			return BFI_E_TIMEOUT;
		struct bfi_enode leaf = {BFI_EXPR_KEYS, t, 1, 0, 0};
		long h = ops->conj(s, e, &leaf, res, hits);
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
