/* result.c - the result object: answers, scores, and the scratch queries reuse. */
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

void bfi__reset_result(bfi_result *res, int scores)
{
	res->n = 0;
	res->touched = 0;
	res->tests = 0;
	res->have_scores = scores;
}

int bfi__prepare(const bfi_snapshot *s, bfi_result *res, int scores)
{
	size_t n = s->lay.n_sets;
	int rc = bfi__grow(&res->ords, &res->cap, n, sizeof *res->ords);
	if (rc == 0 && scores)
		rc = bfi__grow(&res->scores, &res->scores_cap, n, sizeof *res->scores);
	if (rc == 0 && scores)
		rc = bfi__grow(&res->rank, &res->rank_cap, n, sizeof *res->rank);
	if (rc == 0)
		bfi__reset_result(res, scores);
	return rc;
}
