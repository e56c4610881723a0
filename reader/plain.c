/*
 * plain.c - the plain layout (spec/format.md, "Plain section"): one
 * filter per set, side by side, each tested in turn. The baseline the
 * other layouts are measured against, and the one that needs nothing but
 * the filters.
 */
#include <errno.h>
#include <stdlib.h>

#include "layout.h"

struct bfi_plain {
	struct bfi_plain_desc d;
	const uint8_t *filters; /* set j's filter at filters + j * d.filter_bytes */
};

#define plain_of(s) BFI_VIEW(s, BFI_ROW_PLAIN, struct bfi_plain)

static int plain_open(bfi_snapshot *s, const uint8_t *sec, uint64_t size, struct bfi_where *at)
{
	struct bfi_plain *p = s->view[BFI_ROW_PLAIN];
	int rc = bfi_plain_decode(sec, size, &p->d, at);
	p->filters = sec + p->d.filters_offset;
	return rc;
}

/* Every key's k positions in the filters, into res->z. */
static int positions(const struct bfi_plain *p, const struct bfi_expr *e, bfi_result *res)
{
	uint32_t k = p->d.k;
	if (bfi__grow(&res->z, &res->z_cap, (size_t)e->n_keys * k, sizeof *res->z))
		return -ENOMEM;
	for (uint32_t key = 0; key < e->n_keys; key++)
		for (uint32_t i = 0; i < k; i++)
			res->z[(size_t)key * k + i] = bfi_reduce(bfi_hash_probe(e->keys[key], i), p->d.m);
	return 0;
}

/* Does filter f hold key j's positions pos? Counts the probes in *lines. */
static int holds(const uint8_t *f, const uint64_t *pos, uint32_t k, uint64_t *lines)
{
	for (uint32_t i = 0; i < k; i++) {
		++*lines;
		if (!(f[pos[i] / 8] >> (pos[i] % 8) & 1))
			return 0;
	}
	return 1;
}

/* Does filter f satisfy node id of e? */
static int eval(const struct bfi_plain *p, const struct bfi_expr *e, uint32_t id, const uint8_t *f,
                const uint64_t *pos, uint64_t *lines)
{
	const struct bfi_enode *n = &e->nodes[id];
	uint32_t k = p->d.k;
	if (n->type == BFI_EXPR_KEYS) {
		for (uint32_t j = 0; j < n->n_keys; j++)
			if (!holds(f, pos + (size_t)e->kidx[n->first_key + j] * k, k, lines))
				return 0;
		return 1;
	}
	for (uint32_t i = 0; i < n->n_kids; i++) {
		int v = eval(p, e, e->kids[n->first_kid + i], f, pos, lines);
		if (n->type == BFI_EXPR_AND && !v)
			return 0;
		if (n->type == BFI_EXPR_OR && v)
			return 1;
	}
	return n->type == BFI_EXPR_AND;
}

static int plain_expr(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res)
{
	const struct bfi_plain *p = plain_of(s);
	int rc = positions(p, e, res);
	if (rc)
		return rc;
	uint64_t lines = 0;
	const uint8_t *f = p->filters;
	for (uint64_t j = 0; j < p->d.n_sets; j++, f += p->d.filter_bytes) {
		if ((j & 63) == 63 && e->n_keys > 1 && bfi__late(res))
			return BFI_E_TIMEOUT;
		if (eval(p, e, e->root, f, res->z, &lines))
			res->ords[res->n++] = (uint32_t)j;
	}
	if (res->count_bytes)
		res->touched += lines * 64;
	return 0;
}

static int plain_threshold(const bfi_snapshot *s, const struct bfi_expr *e, uint32_t need,
                           bfi_result *res)
{
	const struct bfi_plain *p = plain_of(s);
	uint32_t k = p->d.k;
	int rc = positions(p, e, res);
	if (rc)
		return rc;
	uint64_t lines = 0;
	const uint8_t *f = p->filters;
	int prune = bfi__pruning();
	for (uint64_t j = 0; j < p->d.n_sets; j++, f += p->d.filter_bytes) {
		if ((j & 63) == 63 && bfi__late(res))
			return BFI_E_TIMEOUT;
		/* pruned, a set is left once its score and the terms left cannot reach need */
		uint32_t score = 0, terms = e->n_keys, give_up = prune ? terms - need : terms;
		for (uint32_t t = 0; t < terms && t - score <= give_up; t++)
			score += (uint32_t)holds(f, res->z + (size_t)t * k, k, &lines);
		if (score >= need) {
			res->ords[res->n] = (uint32_t)j;
			res->scores[res->n++] = score;
		}
	}
	if (res->count_bytes)
		res->touched += lines * 64;
	return 0;
}

static void plain_info(const bfi_snapshot *s, struct bfi_layout_info *out)
{
	out->hashes = plain_of(s)->d.k;
	out->n_sets = plain_of(s)->d.n_sets;
	out->bits = plain_of(s)->d.m;
}

static int plain_verify(const bfi_snapshot *s, struct bfi_bad *bad)
{
	const struct bfi_plain *p = plain_of(s);
	for (uint64_t j = 0; j < p->d.n_sets; j++) {
		const uint8_t *f = p->filters + j * p->d.filter_bytes;
		uint64_t at = bfi__first_set_bit(f, p->d.m, p->d.filter_bytes * 8);
		if (at != UINT64_MAX)
			return bfi__bad(bad, BFI_E_BAD_LAYOUT, (uint64_t)(f - s->map) + at / 8, 1,
			                "padding bit past a plain filter's width is not zero");
	}
	return 0;
}

static uint64_t plain_set_bits(const bfi_snapshot *s, uint32_t ord)
{
	(void)ord;
	return plain_of(s)->d.m;
}

/*
 * Scan (scan.c): a part is a run of sets whose filters fit the budget. A
 * filter of a page or less is read whole, as any probe of it reads its
 * page; a wider one, a byte a probe.
 */
static uint64_t plain_scan_part(const bfi_snapshot *s, uint64_t first, uint64_t budget)
{
	const struct bfi_plain *p = plain_of(s);
	if (first >= p->d.n_sets)
		return 0;
	uint64_t n = budget / p->d.filter_bytes;
	return n == 0 ? 1 : n < p->d.n_sets - first ? n : p->d.n_sets - first;
}

static int plain_scan_bytes(const bfi_snapshot *s, uint64_t first, uint64_t n,
                            const struct bfi_expr *e, struct bfi_want *w)
{
	const struct bfi_plain *p = plain_of(s);
	uint64_t fb = p->d.filter_bytes, base = (uint64_t)(p->filters - s->map) + first * fb;
	if (e == NULL)
		return 0;
	if (fb <= BFI_SCAN_PAGE)
		return bfi__want(w, base, base + n * fb);
	int rc = 0;
	for (uint32_t key = 0; key < e->n_keys && rc == 0; key++)
		for (uint32_t i = 0; i < p->d.k && rc == 0; i++) {
			uint64_t at = bfi_reduce(bfi_hash_probe(e->keys[key], i), p->d.m) / 8;
			for (uint64_t j = 0; j < n && rc == 0; j++)
				rc = bfi__want(w, base + j * fb + at, base + j * fb + at + 1);
		}
	return rc;
}

/* Sets [first, first + n) as a plain layout of their own, numbered from 0. */
static int plain_scan_view(const bfi_snapshot *s, uint64_t first, uint64_t n, const uint8_t *shadow,
                           bfi_snapshot *v, uint32_t *ord0)
{
	const struct bfi_plain *p = plain_of(s);
	struct bfi_plain *part = v->view[BFI_ROW_PLAIN];
	*part = *p;
	part->d.n_sets = n;
	part->filters = bfi__in_shadow(s, p->filters + first * p->d.filter_bytes, shadow);
	*ord0 = (uint32_t)first;
	return 0;
}

static void plain_set_filter(const bfi_snapshot *s, uint32_t ord, const uint8_t **bits,
                             uint64_t *m)
{
	*bits = plain_of(s)->filters + (uint64_t)ord * plain_of(s)->d.filter_bytes;
	*m = plain_of(s)->d.m;
}

const struct bfi_layout_ops bfi__plain_ops = {
	.view_size = sizeof(struct bfi_plain), .open = plain_open,
	.info = plain_info, .verify = plain_verify, .set_bits = plain_set_bits,
	.expr = plain_expr, .threshold = plain_threshold,
	.scan_part = plain_scan_part, .scan_bytes = plain_scan_bytes, .scan_view = plain_scan_view,
	.set_filter = plain_set_filter,
};
