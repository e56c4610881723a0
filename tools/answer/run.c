/* run.c - queries formed and compiled through the library, and answered one by one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "tools.h"

/* Make q's expression: 0, SAID (a bad query, reported), or an error code. */
int query_compile(const struct ask *o, struct query *q)
{
	size_t at = 0;
	int rc = bfi_expr_form(o->snap, &o->form, q->text, q->len, &q->e, &at);
	if (rc == 0 && o->errors_given && q->e) /* the read's own threshold, by the k-mer lemma */
		rc = bfi_expr_set_errors(q->e, o->form.k, o->errors);
	const char *what = NULL;
	if (rc == BFI_E_SYNTAX)
		what = o->form.form == BFI_FORM_PATH ? "not a path" : "syntax error";
	else if (rc == BFI_E_LIMIT)
		what = o->form.form == BFI_FORM_PATH                      ? "a path of more than 64 names"
		       : at < q->len && q->text[at] == '('   ? "parentheses nested more than 64 deep"
		       : o->form.form == BFI_FORM_EXPR || o->form.form == BFI_FORM_KEY ? "more than 65,536 keys"
		                                             : "more than 65,536 terms";
	if (what == NULL)
		return rc;
	if (o->why && o->form.form == BFI_FORM_EXPR)
		snprintf(o->why, o->why_cap, "%s at byte %zu", what, at);
	else if (o->why)
		snprintf(o->why, o->why_cap, "%s", what);
	else {
		/* the query shown, but never more than a line of it: it may be megabytes */
		char qb[200];
		if (o->form.form == BFI_FORM_EXPR)
			fprintf(stderr, "bfi query: %s at byte %zu of: %s\n", what, at,
			        shown(q->text, q->len, qb, sizeof qb));
		else
			fprintf(stderr, "bfi query: %s: %s\n", what, shown(q->text, q->len, qb, sizeof qb));
	}
	return SAID;
}

int query_run_one(const bfi_snapshot *s, bfi_result *res, const struct ask *o, struct query *q)
{
	if (o->form.form == BFI_FORM_KEY) { /* one key: no expression to allocate */
		int rc = bfi_query_key_layout(s, o->layout, q->text, q->len, res);
		if (o->keys_seen)
			*o->keys_seen += 1;
		return rc ? rc : print_answer(s, res, o, q);
	}
	if (o->findere_given || o->whole) { /* (k+z)-mers, or records together: no expression */
		q->e = NULL;
		int rc = o->whole ? bfi_query_whole(s, o->layout, q->text, q->len, o->form.k,
		                                    o->form.theta, res, &q->terms)
		                  : bfi_query_findere(s, o->layout, q->text, q->len, o->form.k,
		                                      o->findere, o->form.theta, res, &q->terms);
		if (rc == 0 && o->keys_seen)
			*o->keys_seen += q->terms;
		if (rc == 0 && o->no_terms && q->terms == 0)
			atomic_fetch_add(o->no_terms, 1);
		return rc ? rc : print_answer(s, res, o, q);
	}
	int rc = query_compile(o, q);
	if (rc == 0 && o->keys_seen && q->e)
		*o->keys_seen += bfi_expr_keys(q->e);
	if (rc == 0 && o->no_terms && form_terms(&o->form) &&
	    (q->e == NULL || bfi_expr_keys(q->e) == 0))
		atomic_fetch_add(o->no_terms, 1);
	if (rc == 0)
		rc = bfi_query_compiled(s, o->layout, q->e, o->form.theta, res);
	if (rc == 0)
		rc = print_answer(s, res, o, q);
	bfi_expr_free(&q->e);
	return rc;
}

int query_form(const bfi_snapshot *s, struct ask *o, int fasta, const char *path, char *why,
               size_t cap)
{
	int rc = bfi_query_form(s, o->asked, o->kmer, o->theta, &o->form);
	char refused[200];
	if (rc == BFI_E_KEY_FORM && bfi_form_refused(s, o->asked, o->kmer, refused, sizeof refused) == 0) {
		snprintf(why, cap, "%s: %s (--keys takes each query as one key, byte for byte)", path,
		         refused);
		return -1;
	}
	if (rc) {
		snprintf(why, cap, "%s", o->asked == BFI_FORM_EXPR ? "--expr does not combine with --threshold"
		                         : o->asked == BFI_FORM_PATH ? "--path does not combine with --threshold"
		                                                     : bfi_strerror(rc));
		return -1;
	}
	const struct bfi_form *f = &o->form;
	o->theta = f->theta;
	if (o->whole && (!form_seq(f) || o->errors_given || o->findere_given || o->scan)) {
		snprintf(why, cap, !form_seq(f)
		                       ? "a whole query is all the k-mers of its records: it takes "
		                         "k-mer queries, not %s queries"
		                       : "a whole query takes a threshold, not errors nor findere, and "
		                         "answers from the mapping, not in a scan",
		         bfi_form_name(f->form));
		return -1;
	}
	if (o->findere_given && (!form_seq(f) || o->errors_given || o->scan)) {
		snprintf(why, cap, !form_seq(f)
		                       ? "findere answers a sequence's (k+z)-mers from an index of its "
		                         "k-mers: it takes k-mer queries, not %s queries"
		                       : "findere takes a threshold, not errors, and answers from the "
		                         "mapping, not in a scan",
		         bfi_form_name(f->form));
		return -1;
	}
	if (o->errors_given && !form_seq(f)) {
		snprintf(why, cap, "errors set a read's threshold from its k-mers, so they take k-mer "
		                   "queries (a sequence's k-mers), not %s queries",
		         bfi_form_name(f->form));
		return -1;
	}
	if (fasta && (!form_seq(f) || (o->batch && !o->scan))) {
		snprintf(why, cap, "--fasta needs --kmer K (this snapshot records no k-mer "
		                   "length), and does not combine with --batch (but does with --scan)");
		return -1;
	}
	if (o->batch && !o->scan && form_terms(f)) {
		snprintf(why, cap, f->form == BFI_FORM_TEXT && f->theta == 0
		                       ? "--batch answers keys and expressions, not --text"
		                       : "--batch answers keys and expressions, not threshold queries");
		return -1;
	}
	return 0;
}
