/*
 * whole.c - bfi_query_whole: a whole sequence file (an assembly, a
 * sample's reads) as one query of all its distinct k-mers, however many:
 * more than a term list holds (65,536) are answered a list at a time,
 * each set's score summed over the lists, so that every set's score is
 * what one term list of them all would give.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_hash.h"
#include "layout.h"

#define LIST BFI__MAX_KEYS /* the terms of one list */

struct hashes {
	bfi_keyhash *h;
	size_t n, cap;
};

static int take_hash(void *ctx, const char *key, size_t len)
{
	struct hashes *hs = ctx;
	if (hs->n == hs->cap) {
		size_t cap = hs->cap ? 2 * hs->cap : 4096;
		bfi_keyhash *h = realloc(hs->h, cap * sizeof *h);
		if (h == NULL)
			return -ENOMEM;
		hs->h = h;
		hs->cap = cap;
	}
	hs->h[hs->n++] = bfi_hash_key(key, len);
	return 0;
}

static int cmp_hash(const void *pa, const void *pb)
{
	const bfi_keyhash *a = pa, *b = pb;
	if (a->h1 != b->h1)
		return a->h1 < b->h1 ? -1 : 1;
	return (a->h2 > b->h2) - (a->h2 < b->h2);
}

int bfi_query_whole(const bfi_snapshot *s, unsigned layout, const char *seq, size_t len,
                    unsigned k, double theta, bfi_result *res, size_t *terms)
{
	struct bfi_form f;
	if (s == NULL || res == NULL || terms == NULL || (seq == NULL && len) ||
	    !bfi__theta_ok(theta))
		return BFI_E_INVALID;
	*terms = 0;
	int rc = bfi__seq_form(s, k, &f); /* the snapshot's own sequences: proteins', else DNA's */
	if (rc)
		return rc;
	struct hashes hs = {0};
	rc = bfi__seq_keys(&f, seq ? seq : "", len, take_hash, &hs);
	/* distinct, as a term list's repeats count once */
	size_t d = 0;
	if (rc == 0 && hs.n) {
		qsort(hs.h, hs.n, sizeof *hs.h, cmp_hash);
		for (size_t i = 0; i < hs.n; i++)
			if (d == 0 || cmp_hash(&hs.h[d - 1], &hs.h[i]) != 0)
				hs.h[d++] = hs.h[i];
	}
	struct bfi_info in;
	bfi_info(s, &in);
	uint32_t *score = rc == 0 ? calloc(in.ordinals ? in.ordinals : 1, sizeof *score) : NULL;
	if (rc == 0 && score == NULL)
		rc = -ENOMEM;
	if (rc == 0)
		rc = res->scratch ? 0 : bfi_result_create(&res->scratch);
	/* each list's sets holding one of its terms or more, with how many */
	for (size_t at = 0; rc == 0 && at < d; at += LIST) {
		bfi_expr *e = NULL;
		uint32_t n = d - at < LIST ? (uint32_t)(d - at) : LIST;
		rc = bfi__expr_hashes(hs.h + at, n, &e);
		if (rc == 0)
			rc = bfi_expr_set_need(e, 1);
		if (rc == 0)
			rc = bfi_query_threshold(s, layout, e, 1.0, res->scratch);
		const uint32_t *o = rc == 0 ? bfi_result_ordinals(res->scratch) : NULL;
		const uint32_t *sc = rc == 0 ? bfi_result_scores(res->scratch) : NULL;
		for (size_t i = 0; o && sc && i < bfi_result_count(res->scratch); i++)
			if (o[i] < in.ordinals)
				score[o[i]] += sc[i];
		bfi_expr_free(&e);
	}
	if (rc == 0)
		rc = bfi__answer_scores(s, score, in.ordinals, d, theta, res);
	if (rc == 0)
		*terms = d;
	free(hs.h);
	free(score);
	return rc;
}
