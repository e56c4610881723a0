/*
 * toy.c - the test build's toy layout (format/toy.h): every set's filter,
 * the last set first, each tested in turn. It shows what a layout takes
 * in the reader: this file and its row in layouts.c.
 */
#ifdef BFI_TOY_LAYOUT
#include <errno.h>
#include <stdlib.h>

#include "layout.h"
#include "toy.h"

struct bfi_toy {
	struct bfi_toy_desc d;
	const uint8_t *filters;
};

#define toy_of(s) BFI_VIEW(s, BFI_ROW_TOY, struct bfi_toy)

/* Set j's filter: the last set's comes first. */
static const uint8_t *filter(const struct bfi_toy *t, uint64_t j)
{
	return t->filters + (t->d.n_sets - 1 - j) * t->d.filter_bytes;
}

static int toy_open(bfi_snapshot *s, const uint8_t *sec, uint64_t size, struct bfi_where *at)
{
	struct bfi_toy *t = s->view[BFI_ROW_TOY];
	int rc = bfi_toy_decode(sec, size, &t->d, at);
	t->filters = sec + t->d.filters_offset;
	return rc;
}

/* Does filter f hold the key of hash h? */
static int holds(const struct bfi_toy *t, const uint8_t *f, bfi_keyhash h)
{
	for (uint32_t i = 0; i < t->d.k; i++) {
		uint64_t pos = bfi_reduce(bfi_hash_probe(h, i), t->d.m);
		if (!(f[pos / 8] >> (pos % 8) & 1))
			return 0;
	}
	return 1;
}

/* Does filter f satisfy node id of e? */
static int eval(const struct bfi_toy *t, const struct bfi_expr *e, uint32_t id, const uint8_t *f)
{
	const struct bfi_enode *n = &e->nodes[id];
	if (n->type == BFI_EXPR_KEYS) {
		for (uint32_t j = 0; j < n->n_keys; j++)
			if (!holds(t, f, e->keys[e->kidx[n->first_key + j]]))
				return 0;
		return 1;
	}
	for (uint32_t i = 0; i < n->n_kids; i++) {
		int v = eval(t, e, e->kids[n->first_kid + i], f);
		if (n->type == BFI_EXPR_AND && !v)
			return 0;
		if (n->type == BFI_EXPR_OR && v)
			return 1;
	}
	return n->type == BFI_EXPR_AND;
}

static int toy_expr(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res)
{
	const struct bfi_toy *t = toy_of(s);
	for (uint64_t j = 0; j < t->d.n_sets; j++) {
		if ((j & 63) == 63 && bfi__late(res))
			return BFI_E_TIMEOUT;
		if (eval(t, e, e->root, filter(t, j)))
			res->ords[res->n++] = (uint32_t)j;
	}
	if (res->count_bytes)
		res->touched += t->d.n_sets * e->n_keys * t->d.k * 64;
	return 0;
}

static int toy_threshold(const bfi_snapshot *s, const struct bfi_expr *e, uint32_t need,
                         bfi_result *res)
{
	const struct bfi_toy *t = toy_of(s);
	for (uint64_t j = 0; j < t->d.n_sets; j++) {
		if ((j & 63) == 63 && bfi__late(res))
			return BFI_E_TIMEOUT;
		uint32_t score = 0;
		for (uint32_t x = 0; x < e->n_keys; x++)
			score += (uint32_t)holds(t, filter(t, j), e->keys[x]);
		if (score >= need) {
			res->ords[res->n] = (uint32_t)j;
			res->scores[res->n++] = score;
		}
	}
	return 0;
}

static void toy_info(const bfi_snapshot *s, struct bfi_layout_info *out)
{
	out->hashes = toy_of(s)->d.k;
	out->n_sets = toy_of(s)->d.n_sets;
	out->bits = toy_of(s)->d.m;
}

static int toy_verify(const bfi_snapshot *s, struct bfi_bad *bad)
{
	const struct bfi_toy *t = toy_of(s);
	for (uint64_t j = 0; j < t->d.n_sets; j++) {
		const uint8_t *f = filter(t, j);
		uint64_t at = bfi__first_set_bit(f, t->d.m, t->d.filter_bytes * 8);
		if (at != UINT64_MAX)
			return bfi__bad(bad, BFI_E_BAD_LAYOUT, (uint64_t)(f - s->map) + at / 8, 1,
			                "padding bit past a toy filter's width is not zero");
	}
	return 0;
}

static uint64_t toy_set_bits(const bfi_snapshot *s, uint32_t ord)
{
	(void)ord;
	return toy_of(s)->d.m;
}

/* Scan: the layout is read whole, in one part. */
static int toy_scan_bytes(const bfi_snapshot *s, uint64_t first, uint64_t n,
                          const struct bfi_expr *e, struct bfi_want *w)
{
	(void)first;
	(void)n;
	const struct bfi_toy *t = toy_of(s);
	uint64_t base = (uint64_t)(t->filters - s->map);
	return e ? bfi__want(w, base, base + t->d.n_sets * t->d.filter_bytes) : 0;
}

static int toy_scan_view(const bfi_snapshot *s, uint64_t first, uint64_t n, const uint8_t *shadow,
                         bfi_snapshot *v, uint32_t *ord0)
{
	(void)first;
	(void)n;
	const struct bfi_toy *t = toy_of(s);
	struct bfi_toy *part = v->view[BFI_ROW_TOY];
	*part = *t;
	part->filters = bfi__in_shadow(s, t->filters, shadow);
	*ord0 = 0;
	return 0;
}

static void toy_set_filter(const bfi_snapshot *s, uint32_t ord, const uint8_t **bits,
                           uint64_t *m)
{
	*bits = filter(toy_of(s), ord);
	*m = toy_of(s)->d.m;
}

static int toy_params(const bfi_snapshot *s, struct bfi_layout_param *out, size_t cap)
{
	if (cap)
		out[0] = (struct bfi_layout_param){"scale", toy_of(s)->d.scale};
	return 1;
}

const struct bfi_layout_ops bfi__toy_ops = {
	.view_size = sizeof(struct bfi_toy), .open = toy_open,
	.info = toy_info, .verify = toy_verify, .set_bits = toy_set_bits,
	.expr = toy_expr, .threshold = toy_threshold,
	.scan_part = bfi__scan_whole, .scan_bytes = toy_scan_bytes, .scan_view = toy_scan_view,
	.params = toy_params, .set_filter = toy_set_filter,
};
#endif
