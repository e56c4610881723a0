/* sink.c - one thread's first reading of a set's file (sink.h): a table, a sort, or the spool. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_hash.h"
#include "sink.h"

int sink_flush(struct sink *s)
{
	int rc = spool_add_many(&s->w->spool, s->chunk, s->chunked);
	s->chunked = 0;
	return rc;
}

/* h of the sink's set to the spool (ctx: the sink; also counter_emit's callback). */
int sink_spool(void *ctx, bfi_keyhash h)
{
	struct sink *s = ctx;
	s->chunk[s->chunked++] = (struct rec){h.h1, h.h2, s->ord, 0};
	return s->chunked == SPOOL_CHUNK ? sink_flush(s) : 0;
}

/* Put h in the table (which has room); 1 if it was new. */
static int sink_put(bfi_keyhash *t, unsigned bits, bfi_keyhash h)
{
	size_t mask = ((size_t)1 << bits) - 1;
	for (size_t i = (size_t)(h.h1 >> (64 - bits));; i = (i + 1) & mask) {
		if (t[i].h1 == h.h1 && t[i].h2 == h.h2)
			return 0;
		if ((t[i].h1 | t[i].h2) == 0) {
			t[i] = h;
			return 1;
		}
	}
}

/* Twice the slots: 0, or 1 when that would pass TABLE_BITS or memory. */
static int sink_grow(struct sink *s)
{
	if (s->bits >= TABLE_BITS || ((size_t)1 << (s->bits + 1)) > s->most)
		return 1; /* the table too counts against the thread's share */
	size_t slots = (size_t)1 << (s->bits + 1);
	bfi_keyhash *t = calloc(slots, sizeof *t);
	if (t == NULL)
		return 1;
	for (size_t i = 0; i < (size_t)1 << s->bits; i++)
		if ((s->t[i].h1 | s->t[i].h2) != 0)
			sink_put(t, s->bits + 1, s->t[i]);
	free(s->t);
	s->t = t;
	s->bits++;
	return 0;
}

/* Room for one more key in buf: 0, or 1 when that would pass the thread's share. */
static int sink_room(struct sink *s)
{
	if (s->n_buf < s->cap_buf)
		return 0;
	size_t cap = s->cap_buf ? s->cap_buf * 2 : (size_t)1 << TABLE_BITS;
	cap = cap > s->most ? s->most : cap;
	struct rec *b = cap > s->cap_buf ? realloc(s->buf, cap * sizeof *b) : NULL;
	if (b == NULL)
		return 1;
	s->buf = b;
	s->cap_buf = cap;
	return 0;
}

/* Too many keys to hold: this set goes to the spool, what was held first. */
static int sink_give_up(struct sink *s)
{
	s->direct = 0;
	sums_reset(&s->w->sums, s->ord); /* made again from the spool */
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < (size_t)1 << s->bits; i++)
		if ((s->t[i].h1 | s->t[i].h2) != 0)
			rc = sink_spool(s, s->t[i]);
	if (rc == 0 && s->zero)
		rc = sink_spool(s, (bfi_keyhash){0, 0});
	if (rc == 0 && s->n_buf)
		rc = spool_add_many(&s->w->spool, s->buf, s->n_buf);
	s->n_buf = 0;
	return rc;
}

/* The table's keys into buf, and every key after them there too. */
static int sink_sort_from_now(struct sink *s)
{
	for (size_t i = 0; i < (size_t)1 << s->bits; i++)
		if ((s->t[i].h1 | s->t[i].h2) != 0) {
			if (sink_room(s))
				return 1;
			s->buf[s->n_buf++] = (struct rec){s->t[i].h1, s->t[i].h2, s->ord, 0};
			s->t[i] = (bfi_keyhash){0, 0};
		}
	if (s->zero && sink_room(s))
		return 1;
	if (s->zero)
		s->buf[s->n_buf++] = (struct rec){0, 0, s->ord, 0};
	s->n = 0;
	s->zero = 0;
	s->sorting = 1;
	return 0;
}

int sink_key(void *ctx, const char *key, size_t len)
{
	struct sink *s = ctx;
	bfi_keyhash h = bfi_hash_key(key, len);
	s->keys++;
	s->check += h.h1;
	if (!s->direct)
		return sink_spool(s, h);
	if (!s->sorting && (h.h1 | h.h2) != 0 && s->n + 1 > (size_t)1 << (s->bits - 1) &&
	    sink_grow(s) && sink_sort_from_now(s)) {
		int rc = sink_give_up(s);
		return rc ? rc : sink_spool(s, h);
	}
	if (s->sorting) {
		if (sink_room(s)) {
			int rc = sink_give_up(s);
			return rc ? rc : sink_spool(s, h);
		}
		s->buf[s->n_buf++] = (struct rec){h.h1, h.h2, s->ord, 0};
		return 0;
	}
	if ((h.h1 | h.h2) == 0) {
		if (!s->zero)
			sums_add(&s->w->sums, s->ord, 0, s->all);
		s->zero = 1;
	} else if (sink_put(s->t, s->bits, h)) { /* new: into the set's summary */
		s->n++;
		sums_add(&s->w->sums, s->ord, h.h1, s->all);
	}
	return 0;
}

/* The end of a file: its distinct keys counted and summarised. */
uint64_t sink_finish(struct sink *s)
{
	if (!s->sorting)
		return s->n + (uint64_t)s->zero;
	recs_sort(s->buf, s->n_buf); /* the spool's sort: one set's records by hash */
	uint64_t n = 0;
	for (size_t i = 0; i < s->n_buf; i++)
		if (i == 0 || s->buf[i].h1 != s->buf[i - 1].h1 || s->buf[i].h2 != s->buf[i - 1].h2) {
			n++;
			sums_add(&s->w->sums, s->ord, s->buf[i].h1, s->all);
		}
	return n;
}

