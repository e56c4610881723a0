/* query_batch.c - bfi query --batch: queries answered together, through the library's batch calls. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "query.h"
#include "tools.h"

/*
 * --batch: up to batch_size queries read at a time, their texts end to end
 * in one buffer, answered together before the next are read; and what
 * answering them needs, made once.
 */

int batcher_init(struct batcher *b, const struct opts *o)
{
	size_t bs = o->batch_size;
	memset(b, 0, sizeof *b);
	b->qs = calloc(bs, sizeof *b->qs);
	b->starts = calloc(bs, sizeof *b->starts);
	b->label_lens = calloc(bs, sizeof *b->label_lens);
	if (b->qs == NULL || b->starts == NULL || b->label_lens == NULL)
		return -ENOMEM;
	if (o->mode == M_KEY && !o->scan) {
		b->hs = calloc(bs, sizeof *b->hs);
		b->ends = calloc(bs, sizeof *b->ends);
		return b->hs && b->ends ? bfi_result_create(&b->all) : -ENOMEM;
	}
	b->es = calloc(bs, sizeof *b->es);
	b->rs = calloc(bs, sizeof *b->rs);
	int rc = b->es && b->rs ? 0 : -ENOMEM;
	for (size_t i = 0; i < bs && rc == 0; i++)
		rc = bfi_result_create(&b->rs[i]);
	return rc;
}

void batcher_free(struct batcher *b, const struct opts *o)
{
	for (size_t i = 0; b->rs && i < o->batch_size; i++)
		bfi_result_destroy(&b->rs[i]);
	bfi_result_destroy(&b->all);
	free(b->qs);
	free(b->starts);
	free(b->label_lens);
	free(b->text);
	free(b->hs);
	free(b->ends);
	free(b->es);
	free(b->rs);
}

/* Keep query text t (len bytes), and its label after it, for the batch. */
int batcher_add_labeled(struct batcher *b, const char *t, size_t len, const char *label,
                        size_t label_len)
{
	size_t need = len + label_len;
	if (b->cap - b->len < need) {
		size_t want = b->len + need > 2 * b->cap ? b->len + need : 2 * b->cap;
		char *p = realloc(b->text, want ? want : 1);
		if (p == NULL)
			return -ENOMEM;
		b->text = p;
		b->cap = want;
	}
	if (len)
		memcpy(b->text + b->len, t, len);
	if (label_len)
		memcpy(b->text + b->len + len, label, label_len);
	b->starts[b->n] = b->len;
	b->label_lens[b->n] = label_len;
	b->qs[b->n] = (struct query){NULL, len, NULL, NULL, 0};
	b->len += need;
	b->n++;
	return 0;
}

int batcher_add(struct batcher *b, const char *t, size_t len)
{
	return batcher_add_labeled(b, t, len, NULL, 0);
}

/*
 * Answer the batch's queries and print the answers, in order; then empty
 * it. Expressions: those before one that does not parse are answered,
 * then that one's error is returned.
 */
/*
 * Once, if a scan read the index more than once over: its queries needed
 * more of a part (a flat block, or a layout scanned whole) than --memory
 * holds, and their state for a pass over its rows did not fit either
 * (or a plain filter wider than --memory), so rounds of them read the
 * same pages again.
 */
static void scan_warn(const bfi_snapshot *s, const struct bfi_scan_stats *st)
{
	static int warned;
	struct bfi_info in;
	bfi_info(s, &in);
	if (warned || (double)st->bytes_read <= 1.5 * (double)in.file_size)
		return;
	warned = 1;
	fprintf(stderr,
	        "bfi query: warning: the scan read %.1f times the index's bytes in %llu rounds: "
	        "its queries need more of a block or layout than --memory holds, and a pass over "
	        "its rows with state for each key does not fit either (more --memory, a smaller "
	        "--batch-size, or a build with smaller --block-sets, reads each byte once)\n",
	        (double)st->bytes_read / (double)in.file_size, (unsigned long long)st->rounds);
}

int run_batch(const bfi_snapshot *s, const struct opts *o, struct batcher *b)
{
	size_t m = b->n, ok = 0;
	struct query *qs = b->qs;
	int rc = 0, bad = 0;
	for (size_t i = 0; i < m; i++) {
		qs[i].text = b->text + b->starts[i];
		if (b->label_lens[i]) {
			qs[i].label = qs[i].text + qs[i].len;
			qs[i].label_len = b->label_lens[i];
		}
	}
	b->n = b->len = 0;
	if (o->mode == M_KEY && !o->scan) {
		for (size_t i = 0; i < m; i++)
			b->hs[i] = bfi_hash_key(qs[i].text, qs[i].len);
		rc = bfi_query_keys(s, o->layout, b->hs, m, b->all, b->ends);
		if (o->keys_seen)
			*o->keys_seen += m;
		/* NULL when no key matched anything: no offset may be added to it then */
		const uint32_t *ords = bfi_result_ordinals(b->all);
		for (size_t i = 0, from = 0; i < m && rc == 0; from = b->ends[i++])
			rc = print_sets(s, ords ? ords + from : NULL, NULL, b->ends[i] - from, o, &qs[i]);
		return rc;
	}
	for (; ok < m && bad == 0; ok++) {
		bad = query_compile(o, &qs[ok]);
		b->es[ok] = qs[ok].e;
		if (bad == 0 && o->keys_seen)
			*o->keys_seen += bfi_expr_keys(qs[ok].e);
	}
	if (bad)
		ok--;
	if (o->scan) {
		struct bfi_scan_stats st;
		rc = bfi_scan(s, o->layout, b->es, ok, o->theta, b->rs, o->memory, &st);
		scan_warn(s, &st);
	} else {
		rc = bfi_query_batch(s, o->layout, b->es, ok, b->rs);
	}
	for (size_t i = 0; i < ok && rc == 0; i++)
		rc = print_answer(s, b->rs[i], o, &qs[i]);
	for (size_t i = 0; i < m; i++)
		bfi_expr_free(&qs[i].e);
	return rc ? rc : bad;
}
