/* print.c - the answers of bfi query and bfi serve: text, JSON, counts and --format templates. */
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "tools.h"

/*
 * Check a --format template: every {field} known, every brace paired.
 * Returns NULL if good, else what is wrong.
 */
const char *check_format(const char *t)
{
	for (const char *p = t; *p; p++) {
		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}') || (p[0] == '\\' && p[1])) {
			p++;
			continue;
		}
		if (*p == '}')
			return "a '}' without its '{' (write }} for a brace)";
		if (*p != '{')
			continue;
		const char *e = strchr(p, '}');
		if (e == NULL)
			return "a '{' without its '}' (write {{ for a brace)";
		size_t n = (size_t)(e - p - 1);
		if (!((n == 4 && !memcmp(p + 1, "name", 4)) || (n == 7 && !memcmp(p + 1, "ordinal", 7)) ||
		      (n == 5 && !memcmp(p + 1, "score", 5)) || (n == 5 && !memcmp(p + 1, "query", 5))))
			return "an unknown field: use {name}, {ordinal}, {score} or {query}";
		p = e;
	}
	return NULL;
}

/* One matching set through the --format template. */
static int print_format(const bfi_snapshot *s, const struct ask *o, const struct query *q,
                        uint32_t ord, uint32_t score)
{
	for (const char *p = o->format; *p; p++) {
		if (p[0] == '\\' && p[1]) {
			p++;
			out_char(*p == 'n' ? '\n' : *p == 't' ? '\t' : *p);
		} else if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			out_char(*p++);
		} else if (*p == '{') {
			const char *e = strchr(p, '}');
			if (!memcmp(p, "{name}", 6)) {
				const char *name;
				size_t nl;
				int rc = set_name(s, o, ord, &name, &nl);
				if (rc)
					return rc;
				out_text(name, nl);
			} else if (!memcmp(p, "{ordinal}", 9)) {
				out_uint(ord);
			} else if (!memcmp(p, "{score}", 7)) {
				out_uint(score);
			} else {
				print_query(q, 0);
			}
			p = e;
		} else {
			out_char(*p);
		}
	}
	return 0;
}

/*
 * The names of sets ords, separated as JSON, copied from c's JSON forms
 * into room made once. Returns how many were copied: all n, or those
 * before the first set that has no JSON form, which the caller looks up.
 */
static size_t copy_json_names(const struct names *c, const uint32_t *ords, size_t n)
{
	char *w0 = out_room(n * (size_t)c->json_max + JSON_SLACK);
	if (w0 == NULL)
		return n; /* err is set: the answer will not be sent */
	char *w = w0;
	size_t i = 0;
	for (; i < n; i++) {
		uint32_t ord = ords[i];
		if (ord >= c->n || c->json_at[ord] == c->json_at[ord + 1])
			break;
		size_t skip = i ? 0 : 2; /* the first has no ", " before it */
		size_t len = c->json_at[ord + 1] - c->json_at[ord] - skip;
		const char *src = c->json + c->json_at[ord] + skip;
		if (len <= JSON_SLACK)
			memcpy(w, src, JSON_SLACK); /* a fixed size: one load and store, no call */
		else
			memcpy(w, src, len);
		w += len;
	}
	out_wrote((size_t)(w - w0));
	return i;
}

/* Print query q's answer: the n sets ords (with scores, for thresholds). */
int print_sets(const bfi_snapshot *s, const uint32_t *ords, const uint32_t *scores,
                      size_t n, const struct ask *o, const struct query *q)
{
	/* --limit: the first sets (a threshold's best), and in JSON how many more there were */
	size_t more = 0;
	if (o->limit && n > o->limit && !o->count) {
		more = n - (size_t)o->limit;
		n = (size_t)o->limit;
	}
	if (o->table)
		return table_rows(s, ords, scores, n, o, q);
	if (o->format) {
		for (size_t i = 0; i < n; i++) {
			int rc = print_format(s, o, q, ords[i], scores ? scores[i] : 0);
			if (rc)
				return rc;
		}
		out_end_line(); /* the query's answer is committed whole */
		return 0;
	}
	if (o->json) {
		if (o->tag) {
			out_str("{\"snapshot\": ");
			out_json(o->tag, strlen(o->tag));
			out_str(", \"query\": ");
		} else {
			out_str("{\"query\": ");
		}
		print_query(q, 1);
		if (scores || (o->form.form == BFI_FORM_TEXT && o->form.theta == 0 && q->e == NULL)) { /* a text of stop words: 0 */
			out_str(", \"terms\": ");
			out_uint(query_terms(q));
		}
		if (o->errors_given) /* the read's own threshold: the k-mers a set must hold, and their share */
			print_needed(q, o, 1);
	} else {
		print_tag(o);
		print_query(q, 0);
	}
	if (o->count && o->json) {
		out_str(", \"count\": ");
		out_uint(n);
		out_str("}\n");
		out_end_line();
		return 0;
	}
	if (o->count) {
		out_char('\t');
		out_uint(n);
		out_char('\n');
		out_end_line();
		return 0;
	}
	if (o->json)
		out_str(", \"matches\": [");
	size_t i = 0;
	if (o->json && !o->ordinals && o->names && o->names->json_at && n)
		i = copy_json_names(o->names, ords, n);
	for (; i < n; i++) {
		if (o->json && i)
			out_str(", ");
		else if (!o->json)
			out_char('\t');
		if (o->ordinals) {
			out_uint(ords[i]);
		} else {
			const char *name;
			size_t nl;
			int rc = set_name(s, o, ords[i], &name, &nl);
			if (rc)
				return rc;
			if (o->json)
				out_json(name, nl);
			else
				out_text(name, nl);
		}
		if (scores && !o->json) {
			out_char('\t');
			out_uint(scores[i]);
		}
	}
	if (o->json && scores) {
		out_str("], \"scores\": [");
		for (size_t j = 0; j < n; j++) {
			if (j)
				out_str(", ");
			out_uint(scores[j]);
		}
	}
	if (o->json && more) {
		out_str("], \"more\": ");
		out_uint(more);
		out_str("}\n");
	} else {
		out_str(o->json ? "]}\n" : "\n");
	}
	out_end_line();
	return 0;
}

int print_answer(const bfi_snapshot *s, const bfi_result *res, const struct ask *o,
                        const struct query *q)
{
	return print_sets(s, bfi_result_ordinals(res), bfi_result_scores(res), bfi_result_count(res),
	                  o, q);
}
