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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_hash.h"
#include "internal.h"

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
	uint32_t *n = calloc(slots, sizeof *n);
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

/* The batch into the table. */
static int drain(struct counter *c)
{
	/* room for the whole batch first, so that no slot moves under it */
	while (4 * (c->used + c->n_batch) > 3 * ((size_t)1 << c->bits) || c->bits == 0) {
		int rc = grow(c);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < c->n_batch; i++)
		put(c, c->batch[i], 1);
	c->n_batch = 0;
	return 0;
}

void counter_init(struct counter *c, uint32_t least)
{
	memset(c, 0, sizeof *c);
	c->least = least;
}

int counter_key(void *ctx, const char *key, size_t len)
{
	struct counter *c = ctx;
	bfi_keyhash h = bfi_hash_key(key, len);
	c->keys++;
	if (c->bits) {
		size_t i = slot_of(c, h);
		__builtin_prefetch(&c->t[i], 1);
		__builtin_prefetch(&c->n[i], 1);
	}
	c->batch[c->n_batch++] = h;
	return c->n_batch == COUNT_BATCH ? drain(c) : 0;
}

int counter_emit(struct counter *c, int (*emit)(void *ctx, bfi_keyhash h), void *ctx)
{
	int rc = c->n_batch ? drain(c) : 0;
	for (size_t i = 0; rc == 0 && c->bits && i < (size_t)1 << c->bits; i++)
		if (c->n[i] >= c->least)
			rc = emit(ctx, c->t[i]);
	return rc;
}

void counter_free(struct counter *c)
{
	free(c->t);
	free(c->n);
	memset(c, 0, sizeof *c);
}
