/* query_in.c - bfi query's input: lines of queries, batches of them, FASTA records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "query.h"
#include "tools.h"

#define CHECK_NS 50000000 /* a record that waited longer than this is checked for */

int on_fasta_query(void *ctx, const char *id, size_t id_len, const char *seq, size_t len)
{
	struct fasta_ctx *fc = ctx;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - fc->checked.tv_sec) * 1000000000ll + (now.tv_nsec - fc->checked.tv_nsec) >
	    CHECK_NS) { /* records may come slowly, through a pipe: were the files changed meanwhile? */
		int rc = bfi_check_files(fc->s);
		if (rc)
			return rc;
		fc->checked = now;
	}
	if (fc->qp)
		return qpool_add(fc->qp, seq, len, id, id_len);
	struct query q = {(char *)seq, len, NULL, id, id_len};
	return query_run_one(fc->s, fc->res, fc->o, &q);
}

/*
 * Lines of a file descriptor, read a block at a time: getline took a
 * sixth of a batch of genome keys. read(2), not fread, so that a line
 * typed at a terminal is answered as it is typed, not once a block has
 * filled. A line is valid until the next call.
 */

/*
 * The next line of fd, without its newline and a carriage return before
 * it: 1 with *line and *len, 0 at the end, -errno on a read error or
 * -ENOMEM. A last line without a newline counts.
 */
int next_line(struct lines *r, int fd, char **line, size_t *len)
{
	for (;;) {
		char *at = r->buf + r->start;
		char *nl = r->end > r->start ? memchr(at, '\n', r->end - r->start) : NULL;
		if (nl || (r->eof && r->end > r->start)) {
			size_t l = nl ? (size_t)(nl - at) : r->end - r->start;
			r->start += l + (nl != NULL);
			if (l && at[l - 1] == '\r')
				l--;
			*line = at;
			*len = l;
			return 1;
		}
		if (r->eof)
			return 0;
		if (r->start) { /* keep the part line at the front */
			memmove(r->buf, r->buf + r->start, r->end - r->start);
			r->end -= r->start;
			r->start = 0;
		}
		if (r->end == r->cap) {
			size_t want = r->cap ? 2 * r->cap : (size_t)1 << 16;
			char *p = want > r->cap ? realloc(r->buf, want) : NULL;
			if (p == NULL)
				return -ENOMEM;
			r->buf = p;
			r->cap = want;
		}
		/* every answer made so far goes out before the read, which may wait for
		 * the next query: one write per block of input, not per answer, yet a
		 * program that writes a query and waits for its answer gets it */
		if (r->drain) {
			/* a failure stops the input here: the pool keeps it for qpool_end */
			if (qpool_drain(r->drain) != 0)
				return 0;
		} else {
			(void)out_flush();
		}
		ssize_t got = read(fd, r->buf + r->end, r->cap - r->end);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		/* a read may wait for hours (a pipe, a terminal): before the lines
		 * it brought are answered, the files must be as they were opened */
		int changed = r->watch ? bfi_check_files(r->watch) : 0;
		if (changed)
			return changed;
		r->end += (size_t)got;
		r->eof = got == 0;
	}
}

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
	if (b->qs == NULL || b->starts == NULL)
		return -ENOMEM;
	if (o->mode == M_KEY) {
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
	free(b->text);
	free(b->hs);
	free(b->ends);
	free(b->es);
	free(b->rs);
}

/* Keep query text t (len bytes) for the batch. */
int batcher_add(struct batcher *b, const char *t, size_t len)
{
	if (b->cap - b->len < len) {
		size_t want = b->len + len > 2 * b->cap ? b->len + len : 2 * b->cap;
		char *p = realloc(b->text, want ? want : 1);
		if (p == NULL)
			return -ENOMEM;
		b->text = p;
		b->cap = want;
	}
	if (len)
		memcpy(b->text + b->len, t, len);
	b->starts[b->n] = b->len;
	b->qs[b->n] = (struct query){NULL, len, NULL, NULL, 0};
	b->len += len;
	b->n++;
	return 0;
}

/*
 * Answer the batch's queries and print the answers, in order; then empty
 * it. Expressions: those before one that does not parse are answered,
 * then that one's error is returned.
 */
int run_batch(const bfi_snapshot *s, const struct opts *o, struct batcher *b)
{
	size_t m = b->n, ok = 0;
	struct query *qs = b->qs;
	int rc = 0, bad = 0;
	for (size_t i = 0; i < m; i++)
		qs[i].text = b->text + b->starts[i];
	b->n = b->len = 0;
	if (o->mode == M_KEY) {
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
	rc = bfi_query_batch(s, o->layout, b->es, ok, b->rs);
	for (size_t i = 0; i < ok && rc == 0; i++)
		rc = print_answer(s, b->rs[i], o, &qs[i]);
	for (size_t i = 0; i < m; i++)
		bfi_expr_free(&qs[i].e);
	return rc ? rc : bad;
}
