/*
 * names.c - what the answers name: sets by ordinal, each looked up in the
 * catalog once (query.h, struct names), and the query itself.
 */
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
