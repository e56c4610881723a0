/*
 * toy.c - the test build's toy layout (format/toy.h): every set's filter
 * as wide as the largest set's needs (times its own parameter, scale),
 * the last set first. It shows what a layout takes in the writer: this
 * file (its plan, its bytes a stripe at a time, its descriptor, its
 * parameter, a join's copy of its filters: struct wlayout, layout.h) and
 * its row in layouts.c.
 */
#ifdef BFI_TOY_LAYOUT
#include <errno.h>
#include <stdlib.h>

#include "bfi.h"
#include "bfi_hash.h"
#include "layout.h"
#include "toy.h"

extern const struct wlayout toy_layout;

/*
 * A join carrying the toy (join.c, through the ops below): every
 * segment's toy filters of one width, k and scale, and each of the
 * join's sets' filter, in the segment's mapping.
 */
struct toy_carry {
	uint64_t m;
	uint32_t k, scale;
	const uint8_t **filters; /* by the join's input ordinal */
	size_t n, cap;
};
#define carried(w) ((const struct toy_carry *)(w)->carried[BFI_ROW_TOY])

/* The plan: the descriptor, and the section's size. */
struct toy_plan {
	struct bfi_toy_desc d;
	uint64_t size;
};
#define toy_plan(p) ((const struct toy_plan *)(p)->own[BFI_ROW_TOY])

static int plan_toy(bfi_writer *w, struct plan *p)
{
	struct toy_plan *t = plan_own(p, BFI_ROW_TOY, sizeof *t);
	if (t == NULL)
		return -ENOMEM;
	const struct toy_carry *jc = carried(w);
	uint32_t scale = (uint32_t)wlayout_param(w, &toy_layout, "scale");
	/* a join's: the segments' one width */
	uint64_t m = jc ? jc->m : width_for(&w->opt, p->max_n, p->k) * scale;
	if (jc && (jc->k != p->k || jc->n != p->n))
		return writer_fail(w, BFI_E_INVALID, "the toy filters given differ from the join's sets");
	if (m > BFI_MAX_BITS)
		return writer_fail(w, BFI_E_LIMIT, "toy.scale=%u makes filters past 2^40 bits", scale);
	t->d = (struct bfi_toy_desc){p->n, m, p->k, BFI_HASH_XXH3_MIX, bfi_word_bytes(m),
	                             BFI_TOY_DESC_SIZE, scale};
	if (__builtin_mul_overflow((uint64_t)p->n, t->d.filter_bytes, &t->size) ||
	    __builtin_add_overflow(t->size, BFI_TOY_DESC_SIZE, &t->size))
		return BFI_E_LIMIT;
	return 0;
}

/* Where set j's filter starts in the section: the last set's first. */
static uint64_t base(const struct toy_plan *t, uint32_t j)
{
	return t->d.filters_offset + (t->d.n_sets - 1 - j) * t->d.filter_bytes;
}

static void toy_filter_bit(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j,
                           uint64_t row)
{
	stripe_bit(c->buf, lo, hi, base(toy_plan(c->p), j) + row / 8, row % 8);
}

static void toy_key(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j, bfi_keyhash h)
{
	const struct toy_plan *t = toy_plan(c->p);
	for (uint32_t i = 0; i < t->d.k; i++) {
		uint64_t pos = bfi_hash_pos(h, i, t->d.m);
		stripe_bit(c->buf, lo, hi, base(t, j) + pos / 8, pos % 8);
	}
}

/* The catalog's ones, when the toy is the only layout: a filter's, from its part here. */
static void toy_count(const struct stripe_ctx *c, uint64_t lo, uint64_t hi)
{
	const struct toy_plan *t = toy_plan(c->p);
	uint64_t fb = t->d.filter_bytes;
	if (c->w->opt.layouts != BFI_LAYOUT_TOY)
		return;
	for (uint64_t at = lo; at < hi;) {
		uint64_t x = (at - t->d.filters_offset) / fb; /* the x-th filter: set n - 1 - x */
		uint64_t end = t->d.filters_offset + (x + 1) * fb, ones = 0;
		end = end < hi ? end : hi;
		for (; at < end; at += 8)
			ones += (uint64_t)__builtin_popcountll(bfi_get64(c->buf + (at - lo)));
		c->p->ones[t->d.n_sets - 1 - x] += ones;
	}
}

/* A join's: each set's filter copied from its segment, its ones counted when the toy is alone. */
static int toy_copy(struct stripe_ctx *c, const struct toy_carry *jc)
{
	const struct toy_plan *t = toy_plan(c->p);
	int rc = 0;
	for (uint32_t j = 0; rc == 0 && j < t->d.n_sets; j++) {
		const uint8_t *f = jc->filters[c->p->old_of_new[j]];
		rc = pwrite_all(c->fd, f, (size_t)t->d.filter_bytes, c->sec_off + base(t, j));
		for (uint64_t at = 0; c->w->opt.layouts == BFI_LAYOUT_TOY && at < t->d.filter_bytes; at += 8)
			c->p->ones[j] += (uint64_t)__builtin_popcountll(bfi_get64(f + at));
	}
	return rc;
}

static int toy_fill(struct stripe_ctx *c)
{
	const struct toy_plan *t = toy_plan(c->p);
	if (carried(c->w))
		return toy_copy(c, carried(c->w));
	return stripe_units(c, t->d.filters_offset, t->size, t->d.filter_bytes);
}

static uint64_t toy_size(const struct plan *p)
{
	return toy_plan(p)->size;
}

static uint64_t toy_data(const struct plan *p)
{
	return toy_plan(p)->d.filters_offset;
}

static int toy_descriptor(int fd, const struct plan *p, uint64_t off)
{
	uint8_t d[BFI_TOY_DESC_SIZE];
	bfi_toy_desc_encode(d, &toy_plan(p)->d);
	return pwrite_all(fd, d, sizeof d, off);
}

static uint64_t toy_widest(const struct plan *p)
{
	return toy_plan(p)->d.m;
}
static int toy_given(const bfi_writer *w)
{
	return carried(w) != NULL;
}

/* Every segment must hold toy filters of one width, k and scale. */
static int toy_join_check(void **state, const struct join_view *v, char *why, size_t whylen)
{
	const bfi_snapshot *seg = v->seg;
	const char *label = v->label;
	struct bfi_layout_info li;
	struct bfi_layout_param par[1];
	if (bfi_layout_info(seg, BFI_LAYOUT_TOY, &li) != 0 ||
	    bfi_layout_params(seg, BFI_LAYOUT_TOY, par, 1) != 1) {
		snprintf(why, whylen, "%s has no toy layout", label);
		return 0;
	}
	struct toy_carry *jc = *state;
	if (jc == NULL) {
		if ((jc = *state = calloc(1, sizeof *jc)) == NULL) {
			snprintf(why, whylen, "out of memory");
			return 0;
		}
		*jc = (struct toy_carry){li.bits, li.hashes, (uint32_t)par[0].value, NULL, 0, 0};
		return 1;
	}
	if (li.bits == jc->m && li.hashes == jc->k && par[0].value == jc->scale)
		return 1;
	snprintf(why, whylen, "%s holds toy filters of %llu bits at scale %llu, others of %llu bits "
	         "at scale %u (a join copies them, so they must be of one width)", label,
	         (unsigned long long)li.bits, (unsigned long long)par[0].value,
	         (unsigned long long)jc->m, jc->scale);
	return 0;
}

static int toy_join_set(void *state, const bfi_snapshot *seg, uint32_t ord)
{
	struct toy_carry *jc = state;
	uint64_t m;
	if (jc->n == jc->cap) {
		size_t cap = jc->cap ? jc->cap * 2 : 256;
		const uint8_t **f = realloc(jc->filters, cap * sizeof *f);
		if (f == NULL)
			return -ENOMEM;
		jc->filters = f;
		jc->cap = cap;
	}
	int rc = bfi_layout_set_filter(seg, BFI_LAYOUT_TOY, ord, &jc->filters[jc->n], &m);
	if (rc == 0 && m != jc->m)
		rc = BFI_E_INVALID;
	jc->n += rc == 0;
	return rc;
}

static void toy_join_options(const void *state, char *opts, size_t len)
{
	snprintf(opts, len, "toy.scale=%u", ((const struct toy_carry *)state)->scale);
}

static void toy_join_free(void *state)
{
	struct toy_carry *jc = state;
	free(jc->filters);
	free(jc);
}

static const struct wparam toy_params[] = {
    {"scale", 1, BFI_TOY_MAX_SCALE, 1, "filters this many times as wide as the largest set needs"},
    {NULL, 0, 0, 0, NULL},
};

const struct wlayout toy_layout = {
    .row = BFI_ROW_TOY,
    .params = toy_params,
    .plan_rank = 4,
    .what = "toy filters",
    .plan = plan_toy,
    .size = toy_size,
    .data = toy_data,
    .filter_bit = toy_filter_bit,
    .key = toy_key,
    .count = toy_count,
    .fill = toy_fill,
    .descriptor = toy_descriptor,
    .widest = toy_widest,
    .given = toy_given,
    .join_check = toy_join_check,
    .join_set = toy_join_set,
    .join_options = toy_join_options,
    .join_free = toy_join_free,
};
#endif
