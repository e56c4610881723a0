/*
 * table.c - --format tsv and --format matrix: answers as a
 * table with a header, every query a row or rows, unmatched ones included,
 * scores as counts and ratios, ties ordered by name.
 *
 * tsv: "#query set score ratio", one row a matching set, the best first
 * (score, then name); a query that matches nothing gets one row with an
 * empty set. matrix: "#query" and every live set's name, in ordinal order;
 * one row a query, each cell the set's ratio (a term list's share of terms
 * held; 1 or 0 for keys and expressions). A term list's cell for a set not
 * in its answer (below the threshold, or past --limit) is "-": its ratio
 * was not computed, which a 0 would hide. At threshold 0 every set is in
 * the answer, and every cell is its ratio.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "tools.h"

/* The query's terms, for ratios: a term list's count, or 1 for a key or an expression. */
static uint32_t terms_of(const struct query *q, const uint32_t *scores)
{
	return scores && (q->e || q->terms) ? (uint32_t)query_terms(q) : 1;
}

static void ratio(uint32_t score, uint32_t terms)
{
	char b[32];
	snprintf(b, sizeof b, "%.4f", terms ? (double)score / (double)terms : 0.0);
	out_str(b);
}

/* With --errors, a tsv row's last column: the read's own threshold. */
static void needed(const struct query *q, const struct ask *o)
{
	if (!o->errors_given)
		return;
	out_char('\t');
	print_needed(q, o, 0);
}

int table_head(const bfi_snapshot *s, struct ask *o)
{
	if (o->table == TABLE_TSV && o->head_said)
		return 0;
	if (o->table == TABLE_TSV) {
		/* with --errors, each read's own threshold: the k-mers a set must hold */
		out_str(o->tag ? "#snapshot\tquery\tset\tscore\tratio" : "#query\tset\tscore\tratio");
		out_str(o->errors_given ? "\tneeded\n" : "\n");
		return 0;
	}
	/* matrix: the live sets, in ordinal order, named once */
	struct bfi_info in;
	bfi_info(s, &in);
	o->cols = malloc((in.ordinals ? in.ordinals : 1) * sizeof *o->cols);
	if (o->cols == NULL)
		return -ENOMEM;
	o->n_cols = 0;
	out_str("#query");
	for (uint64_t ord = 0; ord < in.ordinals; ord++) {
		const char *name;
		size_t len;
		int rc = bfi_set_name(s, (uint32_t)ord, &name, &len);
		if (rc == BFI_E_NOT_FOUND && in.segments)
			continue; /* a removed set's hole */
		if (rc)
			return rc;
		o->cols[o->n_cols++] = (uint32_t)ord;
		out_char('\t');
		out_text(name, len);
	}
	out_char('\n');
	return 0;
}

/* The order of a tsv answer: score, best first, then name. */
struct ranked {
	const char *name;
	size_t len;
	uint32_t ord, score;
};

static int by_score_name(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int tsv_rows(const bfi_snapshot *s, const uint32_t *ords, const uint32_t *scores, size_t n,
                    const struct ask *o, const struct query *q)
{
	uint32_t terms = terms_of(q, scores);
	if (n == 0) {
		print_tag(o);
		print_query(q, 0);
		out_str("\t\t0\t");
		ratio(0, terms);
		needed(q, o);
		out_char('\n');
		return 0;
	}
	struct ranked *r = malloc(n * sizeof *r);
	if (r == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		r[i] = (struct ranked){NULL, 0, ords[i], scores ? scores[i] : 1};
		int rc = set_name(s, o, ords[i], &r[i].name, &r[i].len);
		if (rc) {
			free(r);
			return rc;
		}
	}
	qsort(r, n, sizeof *r, by_score_name);
	for (size_t i = 0; i < n; i++) {
		print_tag(o);
		print_query(q, 0);
		out_char('\t');
		out_text(r[i].name, r[i].len);
		out_char('\t');
		out_uint(scores ? r[i].score : 1);
		out_char('\t');
		ratio(r[i].score, terms);
		needed(q, o);
		out_char('\n');
	}
	free(r);
	return 0;
}

static int matrix_row(const uint32_t *ords, const uint32_t *scores, size_t n, const struct ask *o,
                      const struct query *q)
{
	uint32_t terms = terms_of(q, scores);
	/* each answer's score by ordinal (a threshold's come ranked, not in ordinal order) */
	size_t span = o->n_cols ? (size_t)o->cols[o->n_cols - 1] + 1 : 1;
	uint32_t *by_ord = malloc(span * sizeof *by_ord);
	if (by_ord == NULL)
		return -ENOMEM;
	memset(by_ord, 0xff, span * sizeof *by_ord); /* not in the answer */
	for (size_t i = 0; i < n; i++)
		if (ords[i] < span)
			by_ord[ords[i]] = scores ? scores[i] : 1;
	print_query(q, 0);
	for (size_t c = 0; c < o->n_cols; c++) {
		uint32_t v = by_ord[o->cols[c]];
		out_char('\t');
		if (scores && v == UINT32_MAX)
			out_char('-');
		else if (scores)
			ratio(v, terms);
		else
			out_char(v != UINT32_MAX ? '1' : '0');
	}
	out_char('\n');
	free(by_ord);
	return 0;
}

int table_rows(const bfi_snapshot *s, const uint32_t *ords, const uint32_t *scores, size_t n,
               const struct ask *o, const struct query *q)
{
	int rc = o->table == TABLE_TSV ? tsv_rows(s, ords, scores, n, o, q)
	                               : matrix_row(ords, scores, n, o, q);
	out_end_line(); /* the query's rows are committed whole */
	return rc;
}
