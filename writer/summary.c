/*
 * summary.c - what the planner knows of each set, gathered while its keys
 * go by once (spec/format.md, "Choosing m, k, blocks and pre-filters"):
 * its distinct count, a HyperLogLog sketch of SET_HLL_REGS registers, its
 * MinHash minima, and a finer sketch of the union of every set. A union of
 * sets is then the register-wise maximum of their sketches: the very
 * registers a sketch of the union's keys would get, so no later pass over
 * the keys is needed to plan blocks, pre-filters, tree levels or cells.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_hash.h"
#include "internal.h"

void hll_add_bits(uint8_t *reg, uint64_t h, unsigned bits)
{
	uint32_t i = (uint32_t)(h >> (64 - bits));
	uint64_t rest = h << bits | (1ull << (bits - 1));
	uint8_t rank = (uint8_t)(__builtin_clzll(rest) + 1);
	if (rank > reg[i])
		reg[i] = rank;
}

double hll_count_bits(const uint8_t *reg, unsigned bits)
{
	double sum = 0, zeros = 0, m = (double)(1u << bits);
	for (uint32_t i = 0; i < (1u << bits); i++) {
		sum += ldexp(1.0, -reg[i]);
		zeros += reg[i] == 0;
	}
	double alpha = bits >= 7 ? 0.7213 / (1 + 1.079 / m) : 0.709;
	double est = alpha * m * m / sum;
	if (est <= 2.5 * m && zeros > 0)
		est = m * log(m / zeros); /* linear counting for small unions */
	return est;
}

void hll_merge(uint8_t *into, const uint8_t *from, size_t regs)
{
	for (size_t x = 0; x < regs; x++)
		into[x] = from[x] > into[x] ? from[x] : into[x];
}

int sums_init(struct set_sums *s, const struct bfi_build_options *o, unsigned wants)
{
	memset(s, 0, sizeof *s);
	s->want_hll = (wants & WANT_HLL) != 0;
	s->want_seen = o->min_count > 1;
	s->want_minhash = o->cluster || (wants & WANT_MINHASH);
	if ((wants & WANT_ALL) && (s->all = calloc(1, HLL_REGS)) == NULL)
		return -ENOMEM;
	return 0;
}

int sums_grow(struct set_sums *s, size_t n)
{
	if (n <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap : 64;
	while (cap < n)
		cap *= 2;
	uint64_t *d = realloc(s->distinct, cap * sizeof *d);
	if (d == NULL)
		return -ENOMEM;
	s->distinct = d;
	memset(d + s->cap, 0, (cap - s->cap) * sizeof *d);
	if (s->want_seen) {
		uint64_t *e = realloc(s->seen, cap * sizeof *e);
		if (e == NULL)
			return -ENOMEM;
		s->seen = e;
		memset(e + s->cap, 0, (cap - s->cap) * sizeof *e);
	}
	if (s->want_hll) {
		uint8_t *h = realloc(s->hll, cap * SET_HLL_REGS);
		if (h == NULL)
			return -ENOMEM;
		s->hll = h;
		memset(h + s->cap * SET_HLL_REGS, 0, (cap - s->cap) * SET_HLL_REGS);
	}
	if (s->want_minhash) {
		uint64_t *m = realloc(s->minhash, cap * MINHASHES * sizeof *m);
		if (m == NULL)
			return -ENOMEM;
		s->minhash = m;
		memset(m + s->cap * MINHASHES, 0xff, (cap - s->cap) * MINHASHES * sizeof *m);
	}
	s->cap = cap;
	return 0;
}

void sums_add(struct set_sums *s, uint32_t ord, uint64_t h1, uint8_t *all)
{
	if (s->hll)
		hll_add_bits(s->hll + (size_t)ord * SET_HLL_REGS, h1, SET_HLL_BITS);
	if (s->minhash) {
		uint64_t *m = s->minhash + (size_t)ord * MINHASHES;
		for (int i = 0; i < MINHASHES; i++) {
			uint64_t v = bfi_hash_mix(h1 ^ (0x9e3779b97f4a7c15ull * (uint64_t)(i + 1)));
			m[i] = v < m[i] ? v : m[i];
		}
	}
	if (all)
		hll_add_bits(all, h1, HLL_BITS);
}

void sums_reset(struct set_sums *s, uint32_t ord)
{
	s->distinct[ord] = 0;
	if (s->hll)
		memset(s->hll + (size_t)ord * SET_HLL_REGS, 0, SET_HLL_REGS);
	if (s->minhash)
		memset(s->minhash + (size_t)ord * MINHASHES, 0xff, MINHASHES * sizeof *s->minhash);
}

void sums_drop_sketches(struct set_sums *s)
{
	free(s->hll);
	free(s->minhash);
	s->hll = NULL;
	s->minhash = NULL;
	s->want_hll = s->want_minhash = 0;
}

int writer_carry_seen(bfi_writer *w, const uint64_t *seen, size_t n)
{
	uint64_t *c = malloc((n ? n : 1) * sizeof *c);
	if (c == NULL)
		return -ENOMEM;
	memcpy(c, seen, n * sizeof *c);
	free(w->sums.seen);
	w->sums.seen = c;
	return 0;
}

void sums_free(struct set_sums *s)
{
	free(s->distinct);
	free(s->seen);
	free(s->hll);
	free(s->minhash);
	free(s->all);
	memset(s, 0, sizeof *s);
}

/* The summaries of the sets whose keys were spooled: one pass over their distinct keys. */
int sums_from_spool(bfi_writer *w)
{
	struct spool_iter it;
	struct rec r;
	uint64_t seen = 0;
	int rc = spool_iter_begin(&it, &w->spool);
	while (rc == 0 && (rc = spool_iter_next(&it, &r)) == 1) {
		sums_add(&w->sums, r.ord, r.h1, w->sums.all);
		w->sums.distinct[r.ord]++;
		if ((++seen & 0xfffff) == 0)
			progress(w, "counting", seen, w->spool.added);
		rc = 0;
	}
	spool_iter_end(&it);
	return rc;
}
