/*
 * query.c - the query calls of bfi.h: check the arguments, choose the
 * layout from the table (layout.h), and hand the query to its row.
 */
#include <errno.h>
#include <stdlib.h>

#include "layout.h"

/*
 * The row answering a query from the mapping (bfi__row_of), which a pack
 * opened to be scanned (BFI_OPEN_SCAN) does not have.
 */
static int query_row(const bfi_snapshot *s, unsigned layout, const struct bfi_layout_ops **out)
{
	return s->lazy ? BFI_E_SCAN_ONLY : bfi__row_of(s, layout, out);
}

int bfi_query_expr(const bfi_snapshot *s, unsigned layout, const bfi_expr *e, bfi_result *res)
{
	const struct bfi_layout_ops *ops = NULL;
	if (s && s->cops && bfi__check_query(e, res) == 0)
		return s->cops->expr(s, layout, e, res);
	int rc = s ? bfi__check_query(e, res) : BFI_E_INVALID;
	if (rc == 0)
		rc = query_row(s, layout, &ops);
	if (rc == 0)
		rc = bfi__prepare(s, res, 0);
	return rc ? rc : bfi__answer(s, ops, e, res);
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

int bfi_query_batch(const bfi_snapshot *s, unsigned layout, const bfi_expr *const *qs, size_t n,
                    bfi_result *const *res)
{
	const struct bfi_layout_ops *ops = NULL;
	if (s == NULL || (n && (qs == NULL || res == NULL)))
		return BFI_E_INVALID;
	if (s->cops) { /* a collection: query by query, each over its segments */
		int rc = 0;
		for (size_t q = 0; q < n && rc == 0; q++)
			rc = bfi_query_expr(s, layout, qs[q], res[q]);
		return rc;
	}
	int rc = query_row(s, layout, &ops);
	if (rc == 0 && ops->batch) /* checks each query itself */
		return ops->batch(s, qs, n, res);
	for (size_t q = 0; q < n && rc == 0; q++) {
		rc = bfi__check_query(qs[q], res[q]);
		if (rc == 0)
			rc = bfi__prepare(s, res[q], 0);
		if (rc == 0)
			rc = bfi__answer(s, ops, qs[q], res[q]);
	}
	return rc;
}

int bfi_query_keys(const bfi_snapshot *s, unsigned layout, const bfi_keyhash *keys, size_t n,
                   bfi_result *res, size_t *ends)
{
	const struct bfi_layout_ops *ops = NULL;
	if (s == NULL || res == NULL || (n && (keys == NULL || ends == NULL)))
		return BFI_E_INVALID;
	if (s->cops)
		return s->cops->keys(s, layout, keys, n, res, ends);
	int rc = query_row(s, layout, &ops);
	if (rc)
		return rc;
	bfi__reset_result(res, 0);
	return ops->keys ? ops->keys(s, keys, n, res, ends)
	                 : bfi__keys_each(s, ops, keys, n, res, ends);
}


int bfi_query_threshold(const bfi_snapshot *s, unsigned layout, const bfi_expr *e, double theta,
                        bfi_result *res)
{
	const struct bfi_layout_ops *ops = NULL;
	if (s == NULL || e == NULL || res == NULL || e->n_keys == 0 || !bfi__theta_ok(theta) ||
	    e->nodes[e->root].type != BFI_EXPR_TERMS)
		return BFI_E_INVALID;
	if (s->cops)
		return s->cops->threshold(s, layout, e, theta, res);
	int rc = query_row(s, layout, &ops);
	if (rc == 0)
		rc = bfi__prepare(s, res, 1);
	if (rc)
		return rc;
	uint32_t need = bfi__need(e, theta);
	rc = bfi__threshold(s, ops, e, need, res);
	if (rc == 0 && bfi__every_set(e, theta))
		return bfi__every(s, res);
	return rc ? rc : bfi__rank(res);
}

int bfi__every(const bfi_snapshot *s, bfi_result *res)
{
	uint32_t n = (uint32_t)s->lay.n_sets;
	uint64_t *seen = calloc(n / 64 + 1, sizeof *seen);
	if (seen == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < res->n; i++)
		if (res->ords[i] < n)
			seen[res->ords[i] / 64] |= UINT64_C(1) << (res->ords[i] % 64);
	size_t more = n >= res->n ? n - res->n : 0;
	int rc = bfi__room(res, more);
	if (rc == 0)
		rc = bfi__grow(&res->scores, &res->scores_cap, res->n + more, sizeof *res->scores);
	res->have_scores = 1;
	for (uint32_t o = 0; rc == 0 && o < n; o++)
		if (!(seen[o / 64] >> (o % 64) & 1)) {
			res->ords[res->n] = o;
			res->scores[res->n++] = 0;
		}
	free(seen);
	return rc ? rc : bfi__rank(res);
}
