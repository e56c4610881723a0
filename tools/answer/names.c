/*
 * names.c - what the answers name: sets by ordinal, each looked up in the
 * catalog once (answer.h, struct names), the query itself, the snapshot an
 * answer is of (several asked at once), and a read's own threshold.
 */
#include <stdio.h>
#include <string.h>

#include "answer.h"
#include "tools.h"

/* Set ord's name, through o's cache when there is one. */
int set_name(const bfi_snapshot *s, const struct ask *o, uint32_t ord, const char **name,
                    size_t *len)
{
	struct names *c = o->names;
	if (c == NULL || c->at == NULL || ord >= c->n)
		return bfi_set_name(s, ord, name, len);
	if (c->at[ord].p == NULL) {
		int rc = bfi_set_name(s, ord, name, len);
		if (rc)
			return rc;
		c->at[ord] = (struct name_ref){*name, *len};
	}
	*name = c->at[ord].p;
	*len = c->at[ord].len;
	return 0;
}

/* The query as the output names it: its text, or its record's id. */
void print_query(const struct query *q, int json)
{
	const char *t = q->label ? q->label : q->text;
	size_t n = q->label ? q->label_len : q->len;
	if (json)
		out_json(t, n);
	else
		out_text(t, n);
}

void print_tag(const struct ask *o)
{
	if (o->tag) {
		out_text(o->tag, strlen(o->tag));
		out_char('\t');
	}
}

void print_needed(const struct query *q, const struct ask *o, int json)
{
	uint32_t terms = (uint32_t)query_terms(q), need = bfi_expr_need(q->e, o->form.theta);
	if (!json) {
		out_uint(need);
		return;
	}
	char b[32];
	snprintf(b, sizeof b, "%.4f", terms ? (double)need / terms : 0.0);
	out_str(", \"needed\": ");
	out_uint(need);
	out_str(", \"threshold\": ");
	out_str(b);
}
