/*
 * count.c - how often each key of one set occurs, for --min-count.
 *
 * Keys are counted by their 128-bit hash, which is all the index keeps of
 * them: open addressing with linear probing, the hashes in one array and
 * their counts beside it, at most three quarters full. A raw read set
 * has millions of distinct k-mers (its errors'), so nearly every key is a
 * cache miss: keys are hashed a batch at a time and their slots fetched
 * ahead before any is probed, which overlaps the misses. Counts stop at
 * the least count kept, so they never overflow.
 *
 * The table grows to its share of --memory and no further. Full there,
 * its entries are sorted by hash and appended to a scratch file as a run,
 * and the table starts again empty; at the end the runs are merged, each
 * hash's counts summed, so a set with more distinct keys than memory
 * holds is counted exactly, in a sequential write and read of its runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bfi_hash.h"
#include "count.h"
#include "internal.h"

/* records a run gives the merge at a time: its share of the table's memory, within these */
#define MERGE_LEAST 64
#define MERGE_MOST 4096

static size_t slot_of(const struct counter *c, bfi_keyhash h)
{
	return (size_t)(h.h1 >> (64 - c->bits));
}

static void put(struct counter *c, bfi_keyhash h, uint32_t n)
{
	size_t mask = ((size_t)1 << c->bits) - 1;
	for (size_t i = slot_of(c, h);; i = (i + 1) & mask) {
		if (c->n[i] == 0) {
			c->t[i] = h;
			c->n[i] = n;
			c->used++;
			return;
		}
		if (c->t[i].h1 == h.h1 && c->t[i].h2 == h.h2) {
			c->n[i] += c->n[i] < c->least;
			return;
		}
	}
}

/* Twice the slots, every counted key moved over. */
static int grow(struct counter *c)
{
	unsigned bits = c->bits ? c->bits + 1 : COUNT_FIRST_BITS;
	if (bits >= 63)
		return -ENOMEM;
	size_t slots = (size_t)1 << bits;
	bfi_keyhash *t = malloc(slots * sizeof *t);
	uint32_t *n = writer_zalloc(slots * sizeof *n); /* probed before written */
	if (t == NULL || n == NULL) {
		free(t);
		free(n);
		return -ENOMEM;
	}
	struct counter old = *c;
	c->t = t;
	c->n = n;
	c->bits = bits;
	c->used = 0;
	for (size_t i = 0; old.bits && i < (size_t)1 << old.bits; i++)
		if (old.n[i])
			put(c, old.t[i], old.n[i]);
	free(old.t);
	free(old.n);
	return 0;
}

static int by_hash(const void *a, const void *b)
{
	const struct count_rec *x = a, *y = b;
	if (x->h1 != y->h1)
		return x->h1 < y->h1 ? -1 : 1;
	return (x->h2 > y->h2) - (x->h2 < y->h2);
}

/* The table's entries, sorted, appended to the scratch file as a run; the table emptied. */
static int spill(struct counter *c)
{
	if (c->fd < 0 && (c->fd = scratch_open(c->dir, "count")) < 0) {
		c->scratch_rc = c->fd;
		c->fd = -1;
		return c->scratch_rc;
	}
	if (c->n_runs == c->cap_runs) {
		size_t cap = c->cap_runs ? 2 * c->cap_runs : 16;
		uint64_t *r = realloc(c->runs, cap * sizeof *r);
		if (r == NULL)
			return -ENOMEM;
		c->runs = r;
		c->cap_runs = cap;
	}
	struct count_rec *r = malloc((c->used ? c->used : 1) * sizeof *r);
	if (r == NULL)
		return -ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < (size_t)1 << c->bits; i++)
		if (c->n[i])
			r[m++] = (struct count_rec){c->t[i].h1, c->t[i].h2, c->n[i]};
	qsort(r, m, sizeof *r, by_hash);
	int rc = pwrite_all(c->fd, r, m * sizeof *r, c->spilled * sizeof *r);
	free(r);
	if (rc)
		return c->scratch_rc = rc;
	c->runs[c->n_runs++] = c->spilled;
	c->spilled += m;
	memset(c->n, 0, ((size_t)1 << c->bits) * sizeof *c->n);
	c->used = 0;
	return 0;
}

/* The batch into the table. */
static int drain(struct counter *c)
{
	/* room for the whole batch first, so that no slot moves under it */
	while (c->bits == 0 || 4 * (c->used + c->n_batch) > 3 * ((size_t)1 << c->bits)) {
		int rc = c->bits && c->bits >= c->most_bits ? spill(c) : grow(c);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < c->n_batch; i++)
		put(c, c->batch[i], 1);
	c->n_batch = 0;
	return 0;
}

void counter_init(struct counter *c, uint32_t least, uint64_t most, const char *dir)
{
	memset(c, 0, sizeof *c);
	c->least = least;
	c->most = most;
	c->dir = dir;
	c->fd = -1;
	/* the largest table of 20-byte slots, its spill's sorted copy (at most 18 bytes a slot) beside it */
	c->most_bits = COUNT_FIRST_BITS;
	while (c->most_bits < 40 && ((uint64_t)38 << (c->most_bits + 1)) <= most)
		c->most_bits++;
}

int counter_key(void *ctx, const char *key, size_t len)
{
	return counter_add(ctx, bfi_hash_key(key, len));
}

int counter_add(struct counter *c, bfi_keyhash h)
{
	c->keys++;
	if (c->bits) {
		size_t i = slot_of(c, h);
		__builtin_prefetch(&c->t[i], 1);
		__builtin_prefetch(&c->n[i], 1);
	}
	c->batch[c->n_batch++] = h;
	return c->n_batch == COUNT_BATCH ? drain(c) : 0;
}

/* One run being merged: its records [at, end) of the scratch file, buf[i, n) read. */
struct run_in {
	uint64_t at, end;
	struct count_rec *buf;
	size_t i, n;
};

/* The run's next records into its buffer of cap, if it is used up: 1, 0 at its end, or -errno. */
static int run_fill(const struct counter *c, struct run_in *r, size_t cap)
{
	if (r->i < r->n)
		return 1;
	if (r->at == r->end)
		return 0;
	size_t n = r->end - r->at < cap ? (size_t)(r->end - r->at) : cap;
	int rc = pread_all(c->fd, r->buf, n * sizeof *r->buf, r->at * sizeof *r->buf);
	if (rc)
		return rc;
	r->at += n;
	r->i = 0;
	r->n = n;
	return 1;
}

static const struct count_rec *head(const struct run_in *in, size_t r)
{
	return &in[r].buf[in[r].i];
}

/* Heap h[0, n) of runs by their head record, least first: h[at] moved down to its place. */
static void sift(const struct run_in *in, size_t *h, size_t n, size_t at)
{
	for (;;) {
		size_t l = 2 * at + 1, least = at;
		if (l < n && by_hash(head(in, h[l]), head(in, h[least])) < 0)
			least = l;
		if (l + 1 < n && by_hash(head(in, h[l + 1]), head(in, h[least])) < 0)
			least = l + 1;
		if (least == at)
			return;
		size_t t = h[at];
		h[at] = h[least];
		h[least] = t;
		at = least;
	}
}

/*
 * The runs merged through a heap of their heads, each hash's counts
 * summed, those reaching least to emit. Each run reads a buffer at a
 * time, the buffers together within the table's share of memory.
 */
static int merge(struct counter *c, int (*emit)(void *ctx, bfi_keyhash h), void *ctx)
{
	size_t runs = c->n_runs;
	uint64_t per = c->most / sizeof(struct count_rec) / (runs ? runs : 1);
	size_t cap = per < MERGE_LEAST ? MERGE_LEAST : per > MERGE_MOST ? MERGE_MOST : (size_t)per;
	struct run_in *in = calloc(runs, sizeof *in);
	size_t *h = malloc(runs * sizeof *h);
	struct count_rec *bufs = malloc(runs * cap * sizeof *bufs);
	int rc = in && h && bufs ? 0 : -ENOMEM;
	size_t n = 0;
	for (size_t r = 0; rc == 0 && r < runs; r++) {
		in[r].at = c->runs[r];
		in[r].end = r + 1 < runs ? c->runs[r + 1] : c->spilled;
		in[r].buf = bufs + r * cap;
		int more = run_fill(c, &in[r], cap);
		if (more < 0)
			rc = c->scratch_rc = more;
		else if (more)
			h[n++] = r;
	}
	for (size_t at = n / 2; rc == 0 && at-- > 0;)
		sift(in, h, n, at);
	while (rc == 0 && n) {
		struct count_rec x = *head(in, h[0]);
		uint64_t count = 0;
		/* every run's record of this hash (a run holds a hash once) */
		while (rc == 0 && n && by_hash(head(in, h[0]), &x) == 0) {
			count += in[h[0]].buf[in[h[0]].i++].n;
			int more = run_fill(c, &in[h[0]], cap);
			if (more < 0)
				rc = c->scratch_rc = more;
			else if (more == 0)
				h[0] = h[--n];
			if (rc == 0 && n)
				sift(in, h, n, 0);
		}
		c->distinct++;
		if (rc == 0 && count >= c->least)
			rc = emit(ctx, (bfi_keyhash){x.h1, x.h2});
	}
	free(bufs);
	free(h);
	free(in);
	return rc;
}

int counter_emit(struct counter *c, int (*emit)(void *ctx, bfi_keyhash h), void *ctx)
{
	int rc = c->n_batch ? drain(c) : 0;
	if (rc == 0 && c->fd >= 0) {
		rc = c->used ? spill(c) : 0;
		/* the table's memory to the merge's buffers */
		free(c->t);
		free(c->n);
		c->t = NULL;
		c->n = NULL;
		c->bits = 0;
		c->used = 0;
		return rc ? rc : merge(c, emit, ctx);
	}
	for (size_t i = 0; rc == 0 && c->bits && i < (size_t)1 << c->bits; i++) {
		c->distinct += c->n[i] != 0;
		if (c->n[i] >= c->least)
			rc = emit(ctx, c->t[i]);
	}
	return rc;
}

void counter_free(struct counter *c)
{
	free(c->t);
	free(c->n);
	free(c->runs);
	if (c->fd >= 0)
		close(c->fd);
	memset(c, 0, sizeof *c);
	c->fd = -1;
}
