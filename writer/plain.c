/*
 * plain.c - the plain layout (spec/format.md, "Plain section"): every
 * set's filter as wide as the largest set's needs, one after another; its
 * plan, and its bytes a stripe at a time.
 */
#include <errno.h>

#include "bfi_hash.h"
#include "layout.h"

/* The plan: the descriptor, and the section's size. */
struct plain_plan {
	struct bfi_plain_desc d;
	uint64_t size;
};
static struct plain_plan *plain_of(const struct plan *p)
{
	return p->own[BFI_ROW_PLAIN];
}

/* The naive layout: every set's filter as wide as the largest set's needs. */
static int plan_plain(bfi_writer *w, struct plan *p)
{
	if (plan_own(p, BFI_ROW_PLAIN, sizeof(struct plain_plan)) == NULL)
		return -ENOMEM;
	struct plain_plan *pl = plain_of(p);
	uint64_t m = width_for(&w->opt, p->max_n, p->k);
	struct bfi_plain_desc d = {p->n, m, p->k, BFI_HASH_XXH3_MIX, bfi_word_bytes(m),
	                           BFI_PLAIN_DESC_SIZE};
	pl->d = d;
	if (__builtin_mul_overflow((uint64_t)p->n, d.filter_bytes, &pl->size) ||
	    __builtin_add_overflow(pl->size, BFI_PLAIN_DESC_SIZE, &pl->size))
		return BFI_E_LIMIT;
	return 0;
}

static void plain_filter_bit(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j,
                             uint64_t row)
{
	const struct plan *p = c->p;
	uint64_t base = plain_of(p)->d.filters_offset + (uint64_t)j * plain_of(p)->d.filter_bytes;
	stripe_bit(c->buf, lo, hi, base + row / 8, row % 8);
}

static void plain_key(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j,
                      bfi_keyhash h)
{
	const struct plan *p = c->p;
	uint64_t base = plain_of(p)->d.filters_offset + (uint64_t)j * plain_of(p)->d.filter_bytes;
	for (uint32_t i = 0; i < p->k; i++) {
		uint64_t pos = bfi_hash_pos(h, i, plain_of(p)->d.m);
		stripe_bit(c->buf, lo, hi, base + pos / 8, pos % 8);
	}
}

/* The catalog's ones, when plain is the first layout (no flat): a filter's, from its part here. */
static void plain_count(const struct stripe_ctx *c, uint64_t lo, uint64_t hi)
{
	const struct plan *p = c->p;
	struct plain_plan *pl = plain_of(p);
	uint64_t fb = pl->d.filter_bytes;
	if (c->w->opt.layouts & BFI_BUILD_FLAT)
		return;
	for (uint64_t at = lo; at < hi;) {
		uint64_t j = (at - pl->d.filters_offset) / fb;
		uint64_t end = pl->d.filters_offset + (j + 1) * fb, ones = 0;
		end = end < hi ? end : hi;
		for (; at < end; at += 8)
			ones += (uint64_t)__builtin_popcountll(bfi_get64(c->buf + (at - lo)));
		p->ones[j] += ones;
	}
}

static int plain_fill(struct stripe_ctx *c)
{
	return stripe_units(c, plain_of(c->p)->d.filters_offset, plain_of(c->p)->size, plain_of(c->p)->d.filter_bytes);
}

static uint64_t plain_size(const struct plan *p)
{
	return plain_of(p)->size;
}

static uint64_t plain_data(const struct plan *p)
{
	return plain_of(p)->d.filters_offset;
}

static int plain_descriptor(int fd, const struct plan *p, uint64_t off)
{
	uint8_t d[BFI_PLAIN_DESC_SIZE];
	bfi_plain_desc_encode(d, &plain_of(p)->d);
	return pwrite_all(fd, d, sizeof d, off);
}

static uint64_t plain_widest(const struct plan *p)
{
	return plain_of(p)->d.m;
}

const struct wlayout plain_layout = {
    .row = BFI_ROW_PLAIN,
    .plan_rank = 3,
    .what = "plain filters",
    .plan = plan_plain,
    .size = plain_size,
    .data = plain_data,
    .filter_bit = plain_filter_bit,
    .key = plain_key,
    .count = plain_count,
    .fill = plain_fill,
    .descriptor = plain_descriptor,
    .widest = plain_widest,
};
