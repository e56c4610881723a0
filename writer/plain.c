/*
 * plain.c - the plain layout (spec/format.md, "Plain section"): every
 * set's filter as wide as the largest set's needs, one after another; its
 * plan, and its bytes a stripe at a time.
 */
#include "bfi_hash.h"
#include "internal.h"

/* The naive layout: every set's filter as wide as the largest set's needs. */
int plan_plain(bfi_writer *w, struct plan *p)
{
	uint64_t m = width_for(&w->opt, p->max_n, p->k);
	struct bfi_plain_desc d = {p->n, m, p->k, BFI_HASH_XXH3_MIX, bfi_word_bytes(m),
	                           BFI_PLAIN_DESC_SIZE};
	p->plain = d;
	if (__builtin_mul_overflow((uint64_t)p->n, d.filter_bytes, &p->plain_size) ||
	    __builtin_add_overflow(p->plain_size, BFI_PLAIN_DESC_SIZE, &p->plain_size))
		return BFI_E_LIMIT;
	return 0;
}

static void plain_filter_bit(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j,
                             uint64_t row)
{
	const struct plan *p = c->p;
	uint64_t base = p->plain.filters_offset + (uint64_t)j * p->plain.filter_bytes;
	stripe_bit(c->buf, lo, hi, base + row / 8, row % 8);
}

static void plain_key(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j,
                      bfi_keyhash h)
{
	const struct plan *p = c->p;
	uint64_t base = p->plain.filters_offset + (uint64_t)j * p->plain.filter_bytes;
	for (uint32_t i = 0; i < p->k; i++) {
		uint64_t pos = bfi_hash_pos(h, i, p->plain.m);
		stripe_bit(c->buf, lo, hi, base + pos / 8, pos % 8);
	}
}

/* The catalog's ones, when plain is the first layout (no flat): a filter's, from its part here. */
static void plain_count(const struct stripe_ctx *c, uint64_t lo, uint64_t hi)
{
	const struct plan *p = c->p;
	uint64_t fb = p->plain.filter_bytes;
	if (c->w->opt.layouts & BFI_BUILD_FLAT)
		return;
	for (uint64_t at = lo; at < hi;) {
		uint64_t j = (at - p->plain.filters_offset) / fb;
		uint64_t end = p->plain.filters_offset + (j + 1) * fb, ones = 0;
		end = end < hi ? end : hi;
		for (; at < end; at += 8)
			ones += (uint64_t)__builtin_popcountll(bfi_get64(c->buf + (at - lo)));
		p->ones[j] += ones;
	}
}

static int plain_fill(struct stripe_ctx *c)
{
	return stripe_units(c, c->p->plain.filters_offset, c->p->plain_size, c->p->plain.filter_bytes);
}

static uint64_t plain_size(const struct plan *p)
{
	return p->plain_size;
}

static uint64_t plain_data(const struct plan *p)
{
	return p->plain.filters_offset;
}

const struct stripe_layout plain_stripes = {"plain filters", plain_size,  plain_data,
                                            plain_filter_bit, plain_key,  plain_count,
                                            plain_fill};
