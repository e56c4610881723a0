/*
 * result.c - the result object: answers, scores, and the scratch queries
 * reuse; and answering into results through a layout's operations, for
 * the query calls (query.c) and the layouts that answer key by key.
 */
#include <errno.h>
#include <stdlib.h>

#include "layout.h"

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
	free(r->alive);
	free(r->live_words);
	free(r->terms);
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
	static const uint32_t none[1]; /* an empty scored answer has scores all the same */
	return !res->have_scores ? NULL : res->scores ? res->scores : none;
}

void bfi_result_count_bytes(bfi_result *res, int on)
{
	res->count_bytes = on;
}

void bfi_result_deadline(bfi_result *res, uint64_t monotonic_ns)
{
	if (res)
		res->deadline = monotonic_ns;
}


uint64_t bfi_result_touched(const bfi_result *res)
{
	return res->touched;
}

uint64_t bfi_result_filter_tests(const bfi_result *res)
{
	return res->tests;
}



/* Answer e on ops's layout into res, prepared. */
int bfi__answer(const bfi_snapshot *s, const struct bfi_layout_ops *ops,
                  const struct bfi_expr *e, bfi_result *res)
{
	return ops->expr ? ops->expr(s, e, res) : bfi__list_expr(s, ops, e, res);
}

int bfi__threshold(const bfi_snapshot *s, const struct bfi_layout_ops *ops,
                   const struct bfi_expr *e, uint32_t need, bfi_result *res)
{
	return ops->threshold ? ops->threshold(s, e, need, res)
	                      : bfi__list_threshold(s, ops, e, need, res);
}

int bfi__check_query(const struct bfi_expr *e, const bfi_result *res)
{
	/* term lists are for bfi_query_threshold */
	if (e == NULL || res == NULL || e->n_keys == 0 || e->nodes[e->root].type == BFI_EXPR_TERMS)
		return BFI_E_INVALID;
	return 0;
}

int bfi__keys_each(const bfi_snapshot *s, const struct bfi_layout_ops *ops,
                   const bfi_keyhash *keys, size_t n, bfi_result *res, size_t *ends)
{
	bfi_result *one = NULL;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct bfi_expr e;
		bfi__expr_one_key(&e, keys[i]);
		rc = one ? 0 : bfi_result_create(&one);
		if (rc == 0) {
			bfi_result_count_bytes(one, res->count_bytes);
			rc = bfi__prepare(s, one, 0);
		}
		if (rc == 0)
			rc = bfi__answer(s, ops, &e, one);
		if (rc == 0)
			rc = bfi__room(res, one->n);
		if (rc == 0 && one->n)
			memcpy(res->ords + res->n, one->ords, one->n * sizeof *one->ords);
		if (rc == 0) {
			res->n += one->n;
			res->touched += one->touched;
			ends[i] = res->n;
		}
	}
	bfi_result_destroy(&one);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Highest score first, then by ordinal: sort (~score, ord) packed in 64 bits. */
int bfi__rank(bfi_result *res)
{
	if (!res->have_scores || res->n < 2)
		return 0;
	int rc = bfi__grow(&res->rank, &res->rank_cap, res->n, sizeof *res->rank);
	if (rc)
		return rc;
	for (size_t i = 0; i < res->n; i++)
		res->rank[i] = (uint64_t)(UINT32_MAX - res->scores[i]) << 32 | res->ords[i];
	qsort(res->rank, res->n, sizeof *res->rank, cmp_u64);
	for (size_t i = 0; i < res->n; i++) {
		res->ords[i] = (uint32_t)res->rank[i];
		res->scores[i] = UINT32_MAX - (uint32_t)(res->rank[i] >> 32);
	}
	return 0;
}
