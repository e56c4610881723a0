/* query_run.c - bfi query's queries compiled, through the library, and answered one by one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query.h"
#include "tools.h"

/*
 * A term list: text split as the snapshot's documents were, a sequence's
 * k-mers (both by the library, from the catalog), or blank-separated words.
 */
static int make_terms(const struct opts *o, const char *text, size_t len, bfi_expr **out)
{
	if (o->text)
		return bfi_expr_text(o->snap, text, len, BFI_TEXT_TERMS, out);
	if (o->kmer)
		return bfi_expr_kmers(o->snap, text, len, o->kmer, out);
	return bfi_expr_words(text, len, out);
}

/* Make q's expression: 0, SAID (a bad query, reported), or an error code. */
int query_compile(const struct opts *o, struct query *q)
{
	size_t at = 0;
	int rc;
	switch (o->mode) {
	case M_KEY: rc = bfi_expr_key(q->text, q->len, &q->e); break;
	case M_EXPR: rc = bfi_expr_parse(q->text, q->len, &q->e, &at); break;
	case M_TEXT: rc = bfi_expr_text(o->snap, q->text, q->len, BFI_TEXT_ALL, &q->e); break;
	case M_PATH: rc = bfi_expr_path(o->snap, q->text, q->len, &q->e); break;
	default: rc = make_terms(o, q->text, q->len, &q->e); break;
	}
	const char *what = NULL;
	if (rc == BFI_E_SYNTAX)
		what = o->mode == M_PATH ? "not a path" : "syntax error";
	else if (rc == BFI_E_LIMIT)
		what = o->mode == M_PATH                      ? "a path of more than 64 names"
		       : at < q->len && q->text[at] == '('   ? "parentheses nested more than 64 deep"
		       : o->mode == M_EXPR || o->mode == M_KEY ? "more than 65,536 keys"
		                                             : "more than 65,536 terms";
	if (what == NULL)
		return rc;
	if (o->why && o->mode == M_EXPR)
		snprintf(o->why, o->why_cap, "%s at byte %zu", what, at);
	else if (o->why)
		snprintf(o->why, o->why_cap, "%s", what);
	else {
		/* the query shown, but never more than a line of it: it may be megabytes */
		char qb[200];
		if (o->mode == M_EXPR)
			fprintf(stderr, "bfi query: %s at byte %zu of: %s\n", what, at,
			        shown(q->text, q->len, qb, sizeof qb));
		else
			fprintf(stderr, "bfi query: %s: %s\n", what, shown(q->text, q->len, qb, sizeof qb));
	}
	return SAID;
}

int query_run_one(const bfi_snapshot *s, bfi_result *res, const struct opts *o, struct query *q)
{
	if (o->mode == M_KEY) { /* one key: no expression to allocate */
		int rc = bfi_query_key_layout(s, o->layout, q->text, q->len, res);
		if (o->keys_seen)
			*o->keys_seen += 1;
		return rc ? rc : print_answer(s, res, o, q);
	}
	int rc = query_compile(o, q);
	if (rc == 0 && o->keys_seen && q->e)
		*o->keys_seen += bfi_expr_keys(q->e);
	if (rc == 0 && ((o->mode == M_TERMS && bfi_expr_keys(q->e) == 0) ||
	                (o->mode == M_TEXT && q->e == NULL))) {
		/* No terms (say, a sequence shorter than k): no set can score. */
		bfi_expr_free(&q->e);
		if (o->format) {
			out_end_line(); /* no set: nothing to format */
		} else if (o->json) {
			out_str("{\"query\": ");
			print_query(q, 1);
			out_str(o->count              ? ", \"terms\": 0, \"count\": 0}\n"
			        : o->mode == M_TEXT ? ", \"terms\": 0, \"matches\": []}\n"
			                            : ", \"terms\": 0, \"matches\": [], \"scores\": []}\n");
		} else {
			print_query(q, 0);
			out_str(o->count ? "\t0\n" : "\n");
		}
		out_end_line();
		return 0;
	}
	if (rc == 0)
		rc = o->mode == M_TERMS ? bfi_query_threshold(s, o->layout, q->e, o->theta, res)
		                        : bfi_query_expr(s, o->layout, q->e, res);
	if (rc == 0)
		rc = print_answer(s, res, o, q);
	bfi_expr_free(&q->e);
	return rc;
}

/*
 * The query form once the snapshot's key rules are applied: fix o->mode
 * from --text, --kmer and --threshold. 0, or -1 with why.
 */
static int decide_mode(struct opts *o, int fasta, char *why, size_t cap)
{
	if (fasta && (!o->kmer || (o->batch && !o->scan))) {
		snprintf(why, cap, "--fasta needs --kmer K (this snapshot records no k-mer "
		                   "length), and does not combine with --batch (but does with --scan)");
		return -1;
	}
	if (o->text && o->theta == 0) { /* all terms must match: one conjunction */
		if (o->mode == M_EXPR) {
			snprintf(why, cap, "--expr does not combine with --text");
			return -1;
		}
		o->mode = M_TEXT;
		if (o->batch && !o->scan) {
			snprintf(why, cap, "--batch answers keys and expressions, not --text");
			return -1;
		}
	} else if (o->theta > 0 || o->kmer || o->text) {
		if (o->mode == M_EXPR) {
			snprintf(why, cap, "--expr does not combine with --threshold, --kmer or "
			                "--text");
			return -1;
		}
		o->mode = M_TERMS;
		if (o->theta == 0)
			o->theta = 1.0;
		if (o->batch && !o->scan) {
			snprintf(why, cap, "--batch answers keys and expressions, not "
			                "threshold queries");
			return -1;
		}
	}
	return 0;
}

/*
 * The snapshot's key rules (catalog "input" and "kmer": how its keys were
 * made): with no query form given, they choose it, so that a query is
 * split as the sets were; a form that contradicts them, and would match
 * nothing, is refused. Without a catalog there is nothing to check.
 */
static int key_rules(const bfi_snapshot *s, struct opts *o, int keys, const char *path, char *why,
                     size_t cap)
{
	char input[16] = "keys"; /* absent: keys as given */
	meta_str(s, BFI_META_INPUT, input, sizeof input);
	unsigned k = meta_uint(s, BFI_META_KMER, 0);
	int given = keys || o->mode == M_EXPR || o->mode == M_PATH || o->text || o->kmer;
	const char *bad = NULL;
	if (!strcmp(input, "fasta")) {
		if (o->text || o->mode == M_PATH)
			bad = o->text ? "--text" : "--path";
		else if (o->kmer && k && o->kmer != k) {
			snprintf(why, cap, "%s holds %u-mers; --kmer %u would match nothing", path, k,
			         o->kmer);
			return -1;
		} else if (!given && k)
			o->kmer = k;
	} else if (!strcmp(input, "text")) {
		if (o->kmer || o->mode == M_PATH)
			bad = o->kmer ? "--kmer" : "--path";
		else if (!given)
			o->text = 1;
	} else if (!strcmp(input, "paths")) {
		if (o->kmer || o->text)
			bad = o->kmer ? "--kmer" : "--text";
		else if (!given && o->theta == 0)
			o->mode = M_PATH;
	} else if (o->mode == M_PATH) {
		bad = "--path";
	}
	if (bad) {
		snprintf(why, cap, "%s was built from %s input; %s queries would match nothing "
		                   "(--keys takes each query as one key, byte for byte)",
		         path, input, bad);
		return -1;
	}
	return 0;
}

int query_form(const bfi_snapshot *s, struct opts *o, int keys, int catalog, int fasta,
               const char *path, char *why, size_t cap)
{
	if (catalog && key_rules(s, o, keys, path, why, cap) != 0)
		return -1;
	return decide_mode(o, fasta, why, cap);
}
