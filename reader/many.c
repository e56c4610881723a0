/*
 * many.c - bfi_query_many: sequences, texts or queries given end to end,
 * each compiled and answered in one working result, the answers appended
 * to the caller's result with their ends; bfi_query_text and
 * bfi_query_as, one query formed and answered; and bfi_query_compiled,
 * where all of them answer, an empty term list included. Made for callers
 * that pay for every call into the library (the Python module releases its lock for
 * the length of one call), so that a batch costs one call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

/* Append what w answered to res (scores too if scored). */
static int append(bfi_result *res, const bfi_result *w, int scored)
{
	int rc = bfi__room(res, w->n);
	if (rc == 0 && scored)
		rc = bfi__grow(&res->scores, &res->scores_cap, res->cap, sizeof *res->scores);
	if (rc || w->n == 0)
		return rc;
	memcpy(res->ords + res->n, w->ords, w->n * sizeof *w->ords);
	if (scored)
		memcpy(res->scores + res->n, w->scores, w->n * sizeof *w->scores);
	res->n += w->n;
	res->touched += w->touched;
	return 0;
}

int bfi_query_compiled(const bfi_snapshot *s, unsigned layout, const bfi_expr *e, double theta,
                       bfi_result *res)
{
	if (s == NULL || res == NULL || !(theta >= 0 && theta <= 1))
		return BFI_E_INVALID;
	int terms = theta > 0 || (e && e->nodes[e->root].type == BFI_EXPR_TERMS);
	if (e == NULL || bfi_expr_keys(e) == 0) { /* stop words, a short sequence: no set */
		bfi__reset_result(res, terms);
		return 0;
	}
	return e->nodes[e->root].type == BFI_EXPR_TERMS ? bfi_query_threshold(s, layout, e, theta > 0 ? theta : 1.0, res)
	             : bfi_query_expr(s, layout, e, res);
}

int bfi_query_many(const bfi_snapshot *s, unsigned layout, int what, unsigned k, double theta,
                   const char *buf, const size_t *ends, size_t n, bfi_result *res,
                   size_t *answer_ends, size_t *done)
{
	if (done)
		*done = 0;
	if (s == NULL || res == NULL || done == NULL ||
	    (n && (buf == NULL || ends == NULL || answer_ends == NULL)))
		return BFI_E_INVALID;
	if (what != BFI_MANY_SEQUENCES && what != BFI_MANY_TEXTS && what != BFI_MANY_QUERIES)
		return BFI_E_INVALID;
	/* theta in (0, 1]; texts and queries may ask for every term with 0 */
	int scored = what == BFI_MANY_QUERIES ? bfi__query_terms(s, theta) : theta != 0;
	if (!(theta >= 0 && theta <= 1) || (what == BFI_MANY_SEQUENCES && !scored))
		return BFI_E_INVALID;
	int rc = res->scratch ? 0 : bfi_result_create(&res->scratch);
	if (rc)
		return rc;
	bfi_result *w = res->scratch;
	w->deadline = res->deadline;
	w->count_bytes = res->count_bytes;
	bfi__reset_result(res, scored);
	size_t from = 0, i = 0;
	for (; i < n && rc == 0; i++) {
		if (ends[i] < from) {
			rc = BFI_E_INVALID;
			break;
		}
		const char *q = buf + from;
		size_t len = ends[i] - from;
		bfi_expr *e = NULL;
		if (what == BFI_MANY_QUERIES)
			rc = bfi_expr_query(s, q, len, theta, &e);
		else if (what == BFI_MANY_SEQUENCES)
			rc = bfi_expr_kmers(s, q, len, k, &e);
		else
			rc = bfi_expr_text(s, q, len, scored ? BFI_TEXT_TERMS : BFI_TEXT_ALL, &e);
		if (rc == 0)
			rc = bfi_query_compiled(s, layout, e, theta, w);
		bfi_expr_free(&e);
		if (rc == 0)
			rc = append(res, w, scored);
		if (rc)
			break;
		answer_ends[i] = res->n;
		from = ends[i];
	}
	*done = i;
	return rc;
}

int bfi_query_text(const bfi_snapshot *s, unsigned layout, const char *text, size_t len,
                   double theta, bfi_result *res)
{
	struct bfi_form f;
	int rc = bfi_query_form(s, BFI_FORM_AUTO, 0, theta, &f);
	return rc ? rc : bfi_query_as(s, layout, &f, text, len, res);
}

int bfi_query_as(const bfi_snapshot *s, unsigned layout, const struct bfi_form *f,
                 const char *text, size_t len, bfi_result *res)
{
	if (s == NULL || f == NULL || res == NULL)
		return BFI_E_INVALID;
	bfi_expr *e = NULL;
	int rc = bfi_expr_form(s, f, text, len, &e, NULL);
	if (rc == 0)
		rc = bfi_query_compiled(s, layout, e, f->theta, res);
	bfi_expr_free(&e);
	return rc;
}
