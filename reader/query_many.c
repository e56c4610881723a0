/*
 * query_many.c - bfi_query_many: sequences, texts or queries given end to end,
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
	if (s == NULL || res == NULL || !(theta == 0 || bfi__theta_ok(theta)))
		return BFI_E_INVALID;
	int terms = theta != 0 || (e && e->nodes[e->root].type == BFI_EXPR_TERMS);
	if (e == NULL || bfi_expr_keys(e) == 0) { /* stop words, a short sequence: no set */
		bfi__reset_result(res, terms);
		return 0;
	}
	return e->nodes[e->root].type == BFI_EXPR_TERMS ? bfi_query_threshold(s, layout, e, theta != 0 ? theta : 1.0, res)
	             : bfi_query_expr(s, layout, e, res);
}

/*
 * The arguments of bfi_query_many and bfi_scan_many checked: 0 with
 * *scored (the answers carry scores), or BFI_E_INVALID; *done is 0.
 */
static int many_args(const bfi_snapshot *s, int what, double theta, const char *buf,
                     const size_t *ends, size_t n, const bfi_result *res,
                     const size_t *answer_ends, size_t *done, int *scored)
{
	if (done)
		*done = 0;
	if (s == NULL || res == NULL || done == NULL ||
	    (n && (buf == NULL || ends == NULL || answer_ends == NULL)))
		return BFI_E_INVALID;
	int errors = what >> 8;
	what &= 0xff;
	if (what != BFI_MANY_SEQUENCES && what != BFI_MANY_TEXTS && what != BFI_MANY_QUERIES)
		return BFI_E_INVALID;
	if (errors && what != BFI_MANY_SEQUENCES)
		return BFI_E_INVALID; /* the k-mer lemma's errors are a sequence's */
	/* theta in (0, 1]; texts and queries may ask for every term with 0 */
	*scored = what == BFI_MANY_QUERIES ? bfi__query_terms(s, theta) : theta != 0;
	if (!(theta == 0 || bfi__theta_ok(theta)) || (what == BFI_MANY_SEQUENCES && !*scored))
		return BFI_E_INVALID;
	return 0;
}

/* Does what ask for sequences of a snapshot of proteins? Then their k-mers are amino acids'. */
static int is_protein(const bfi_snapshot *s, int what)
{
	struct bfi_form f;
	return (what & 0xff) == BFI_MANY_SEQUENCES && bfi__seq_form(s, 0, &f) == 0 &&
	       f.form == BFI_FORM_PROTEIN;
}

/*
 * A query of buf, compiled as the many calls compile it (NULL: no terms);
 * a sequence's threshold by the k-mer lemma when what asks for errors
 * (BFI_MANY_ERRORS).
 */
static int compile(const bfi_snapshot *s, int what, unsigned k, double theta, int scored,
                   int protein, const char *q, size_t len, bfi_expr **e)
{
	*e = NULL;
	int errors = what >> 8;
	what &= 0xff;
	if (what == BFI_MANY_QUERIES)
		return bfi_expr_query(s, q, len, theta, e);
	if (what == BFI_MANY_SEQUENCES) {
		int rc = (protein ? bfi_expr_protein : bfi_expr_kmers)(s, q, len, k, e);
		if (rc == 0 && errors && *e)
			rc = bfi_expr_set_errors(*e, 0, (unsigned)errors);
		return rc;
	}
	return bfi_expr_text(s, q, len, scored ? BFI_TEXT_TERMS : BFI_TEXT_ALL, e);
}

int bfi_query_many(const bfi_snapshot *s, unsigned layout, int what, unsigned k, double theta,
                   const char *buf, const size_t *ends, size_t n, bfi_result *res,
                   size_t *answer_ends, size_t *done)
{
	int scored, rc = many_args(s, what, theta, buf, ends, n, res, answer_ends, done, &scored);
	if (rc)
		return rc;
	int protein = is_protein(s, what);
	rc = res->scratch ? 0 : bfi_result_create(&res->scratch);
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
		rc = compile(s, what, k, theta, scored, protein, q, len, &e);
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

/* A scan's batch: queries [from, to) of es, their answers appended to res in order. */
struct scan_batch {
	const bfi_snapshot *s;
	unsigned layout;
	double theta;
	uint64_t memory;
	bfi_expr **es;
	bfi_result **rs;
	const bfi_expr **live; /* the batch's queries with terms, for bfi_scan */
	bfi_result **live_rs;
	/*
	 * the cost batches are sized by: bfi_scan_cost's, its keys' matches
	 * and state set to what batches matched and held (the most seen)
	 */
	struct bfi_scan_cost cost;
	int matched, held;
};

static int scan_batch(struct scan_batch *b, size_t from, size_t to)
{
	size_t m = 0;
	int rc = 0;
	for (size_t i = from; i < to && rc == 0; i++)
		if (b->es[i] && bfi_expr_keys(b->es[i])) {
			rc = b->rs[i] ? 0 : bfi_result_create(&b->rs[i]);
			b->live[m] = b->es[i];
			b->live_rs[m++] = b->rs[i];
		}
	double theta = b->theta != 0 ? b->theta : 1.0;
	struct bfi_scan_stats st;
	if (rc == 0 && m)
		rc = bfi_scan_parallel(b->s, b->layout, b->live, m, theta, b->live_rs, b->memory, 1, &st);
	if (rc == BFI_E_LIMIT && m > 1) { /* the answers passed memory: each half a pass of its own */
		size_t mid = from, seen = 0;
		while (seen < m / 2)
			seen += b->es[mid] && bfi_expr_keys(b->es[mid]), mid++;
		rc = scan_batch(b, from, mid);
		return rc ? rc : scan_batch(b, mid, to);
	}
	uint64_t keys = 0, sets = 0;
	for (size_t i = 0; i < m && rc == 0; i++) {
		keys += bfi_expr_keys(b->live[i]);
		sets += bfi_result_count(b->live_rs[i]);
	}
	/* the model's matches and state are bounds: later batches are sized by what these took */
	if (keys && (!b->matched || (double)sets / (double)keys > b->cost.key_matches)) {
		b->cost.key_matches = (double)sets / (double)keys;
		b->matched = 1;
	}
	if (m && (double)sets / (double)m > b->cost.answer_sets)
		b->cost.answer_sets = (double)sets / (double)m;
	if (rc == 0 && m && st.key_state && (!b->held || st.key_state > b->cost.key_state)) {
		b->cost.key_state = st.key_state;
		b->held = 1;
	}
	return rc;
}

int bfi_scan_many(const bfi_snapshot *s, unsigned layout, int what, unsigned k, double theta,
                  const char *buf, const size_t *ends, size_t n, bfi_result *res,
                  size_t *answer_ends, size_t *done, uint64_t memory)
{
	int scored, rc = many_args(s, what, theta, buf, ends, n, res, answer_ends, done, &scored);
	if (rc == 0 && memory == 0)
		rc = BFI_E_INVALID;
	int protein = rc == 0 && is_protein(s, what);
	struct scan_batch b = {.s = s, .layout = layout, .theta = theta, .memory = memory};
	if (rc == 0)
		rc = bfi_scan_cost(s, layout, &b.cost);
	if (rc)
		return rc;
	if (theta == BFI_THETA_EVERY) /* every set answers every query */
		b.cost.answer_sets = (double)b.cost.sets;
	bfi__reset_result(res, scored);
	size_t cap = n ? n : 1;
	b.es = calloc(cap, sizeof *b.es);
	b.rs = calloc(cap, sizeof *b.rs);
	b.live = calloc(cap, sizeof *b.live);
	b.live_rs = calloc(cap, sizeof *b.live_rs);
	if (b.es == NULL || b.rs == NULL || b.live == NULL || b.live_rs == NULL)
		rc = -ENOMEM;
	/*
	 * Queries compiled and held while their expected memory (their keys'
	 * state in a pass and their answers, bfi_scan_cost, then as batches
	 * took) fits half of what memory leaves beside the scan's fixed cost;
	 * then scanned, their answers appended in order, and let go.
	 */
	uint64_t room = memory > 2 * b.cost.fixed ? memory - b.cost.fixed : memory / 2, held = 0;
	size_t from = 0, i = 0, bad = n;
	for (; i <= n && rc == 0; i++) {
		uint64_t need = 0;
		if (i < n) {
			if (ends[i] < (i ? ends[i - 1] : 0)) {
				bad = i;
				rc = BFI_E_INVALID;
			} else {
				size_t at = i ? ends[i - 1] : 0;
				rc = compile(s, what, k, theta, scored, protein, buf + at, ends[i] - at,
				             &b.es[i]);
				if (rc)
					bad = i;
			}
			uint64_t keys = rc == 0 && b.es[i] ? bfi_expr_keys(b.es[i]) : 0;
			need = bfi_scan_query_bytes(&b.cost, keys, scored);
		}
		/* the batch so far answered: at the end, before a failure, or where this one passes room */
		if (i == n || rc || (i > from && held + need > room / 2)) {
			int brc = scan_batch(&b, from, i);
			for (size_t x = from; x < i && brc == 0; x++) {
				brc = b.rs[x] ? append(res, b.rs[x], scored) : 0;
				answer_ends[x] = res->n;
			}
			for (size_t x = from; x < i; x++) {
				bfi_expr_free(&b.es[x]);
				bfi_result_destroy(&b.rs[x]);
			}
			if (brc) {
				rc = brc;
				bad = from; /* which query of the batch failed is not known: its first */
				break;
			}
			from = i;
			held = 0;
		}
		held += need;
	}
	for (size_t x = from; x < n && b.es; x++) {
		bfi_expr_free(&b.es[x]);
		if (b.rs)
			bfi_result_destroy(&b.rs[x]);
	}
	*done = rc ? bad : n;
	free(b.es);
	free(b.rs);
	free(b.live);
	free(b.live_rs);
	return rc;
}
