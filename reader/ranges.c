/*
 * ranges.c - a layout's pass over one part's rows range by range, for a
 * batch whose pages there pass the budget (layout.h, scan_rows; flat
 * blocks in scan_pass.c, RAMBO in rambo.c). Its probes, each the bytes one
 * key reads at one place, are put in the order of the pages they start
 * on, then read range after range of them whose pages fit what the
 * budget leaves beside the layout's state (io->fill), and applied.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

int bfi__probes_by_page(struct bfi_probes *p, uint64_t base, size_t pages, size_t keys,
                        uint32_t per, int (*probe)(void *ctx, size_t g, uint32_t j, uint64_t *off),
                        void *ctx)
{
	if (bfi__grow(&p->at, &p->at_cap, pages + 1, sizeof *p->at))
		return -ENOMEM;
	memset(p->at, 0, (pages + 1) * sizeof *p->at);
	/* counted a page first, then placed: no second copy of them */
	for (int place = 0; place < 2; place++) {
		for (size_t g = 0; g < keys; g++)
			for (uint32_t j = 0; j < per; j++) {
				uint64_t off;
				if (!probe(ctx, g, j, &off))
					break; /* the key is out */
				uint64_t page = off / BFI_SCAN_PAGE - base;
				if (page >= pages) /* never: the layout's bounds were checked at open */
					return BFI_E_BAD_LAYOUT;
				if (place)
					p->pr[p->at[page]++] = (struct bfi_probe){off, (uint32_t)g, j};
				else
					p->at[page + 1]++;
			}
		if (place == 0) {
			for (size_t x = 1; x <= pages; x++)
				p->at[x] += p->at[x - 1];
			p->n = p->at[pages];
			if (bfi__grow(&p->pr, &p->cap, p->n ? p->n : 1, sizeof *p->pr))
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The pages of the range that starts at probe i, asked of the disk
 * (io->ahead) while the range before is applied, so that reading and
 * computing overlap: as many as a range holds, in runs of whole pages.
 */
static void read_ahead(struct bfi_scan_io *io, const struct bfi_probes *p, size_t i, uint64_t span,
                       uint64_t (*len)(void *ctx, uint32_t j), void *ctx)
{
	uint64_t pages = 0, lo = 0, hi = 0;
	for (; i < p->n && pages < io->pages; i++) {
		const struct bfi_probe *pr = &p->pr[i];
		uint64_t a = pr->off / BFI_SCAN_PAGE;
		uint64_t b = (pr->off + (len ? len(ctx, pr->j) : span) + BFI_SCAN_PAGE - 1) / BFI_SCAN_PAGE;
		if (hi > lo && a <= hi) { /* probes come in the order of their pages: runs grow */
			pages += b > hi ? b - hi : 0;
			hi = b > hi ? b : hi;
			continue;
		}
		if (hi > lo)
			io->ahead(io, lo * BFI_SCAN_PAGE, (hi - lo) * BFI_SCAN_PAGE);
		lo = a;
		hi = b;
		pages += b - a;
	}
	if (hi > lo)
		io->ahead(io, lo * BFI_SCAN_PAGE, (hi - lo) * BFI_SCAN_PAGE);
}

int bfi__probe_ranges(struct bfi_scan_io *io, const struct bfi_probes *p, uint64_t span,
                      uint64_t (*len)(void *ctx, uint32_t j),
                      void (*apply)(void *ctx, const struct bfi_probe *pr),
                      void (*all)(void *ctx), void *ctx)
{
	struct bfi_want *w = io->w;
	const struct bfi_probe *pr = p->pr;
	for (size_t i = 0; i < p->n;) {
		size_t from = i;
		for (; i < p->n; i++) {
			w->n_fresh = 0;
			int rc = bfi__want(w, pr[i].off, pr[i].off + (len ? len(ctx, pr[i].j) : span));
			if (rc)
				return rc;
			if (i > from && io->n_want + w->n_fresh > io->pages) {
				bfi__unwant_fresh(w); /* the range is full: this probe starts the next */
				break;
			}
			io->n_want += w->n_fresh;
		}
		int rc = io->fill(io);
		if (rc)
			return rc;
		if (io->ahead && i < p->n)
			read_ahead(io, p, i, span, len, ctx);
		if (all && from == 0 && i == p->n) { /* one range holds them all */
			all(ctx);
			return 1;
		}
		for (size_t x = from; x < i; x++)
			apply(ctx, &pr[x]);
	}
	return 0;
}

int bfi__pass_fits(struct bfi_scan_io *io, uint64_t state, uint64_t tables, uint64_t span,
                   uint64_t n_probes)
{
	uint64_t all = bfi__mul_add(tables, BFI_SCAN_PAGE, state);
	uint64_t range = bfi__mul_add(span / BFI_SCAN_PAGE + 2, 8 * BFI_SCAN_PAGE, 0); /* 8 probes' */
	if (all > io->budget || io->budget - all < range || n_probes > UINT32_MAX || all > SIZE_MAX)
		return BFI_SCAN_DECLINE;
	io->state = state; /* the tables' pages count as pages when they are read */
	io->pages = (io->budget - all) / BFI_SCAN_PAGE;
	return 0;
}

void bfi__pass_keys(const struct bfi_expr *const *qs, size_t nq, const bfi_keyhash **key)
{
	size_t g = 0;
	for (size_t q = 0; q < nq; q++)
		for (uint32_t i = 0; i < qs[q]->n_keys; i++)
			key[g++] = &qs[q]->keys[i];
}

int bfi__view_answer(struct bfi_scan_io *io, const bfi_snapshot *s,
                     const struct bfi_layout_ops *ops, int row, uint64_t first, uint64_t n,
                     size_t *(*attach)(void *ctx, void *view), void *ctx,
                     const struct bfi_expr *const *qs, size_t from, size_t to, double theta,
                     bfi_result *w, bfi_result *const *res)
{
	bfi_snapshot v = *s;
	memset(v.view, 0, sizeof v.view);
	v.lazy = NULL; /* the view reads the shadow, which holds what it needs */
	uint32_t ord0 = 0;
	int rc = (v.view[row] = calloc(1, ops->view_size)) ? 0 : -ENOMEM;
	if (rc == 0)
		rc = ops->scan_view(s, first, n, io->shadow, &v, &ord0);
	size_t *key0 = rc == 0 && attach ? attach(ctx, v.view[row]) : NULL, g = 0;
	for (size_t q = 0; q < from; q++)
		g += qs[q]->n_keys;
	for (size_t q = from; q < to && rc == 0; q++) {
		const struct bfi_expr *e = qs[q];
		int terms = e->nodes[e->root].type == BFI_EXPR_TERMS;
		if (key0)
			*key0 = g;
		bfi_result_count_bytes(w, res[q]->count_bytes);
		w->deadline = res[q]->deadline;
		rc = bfi__prepare(&v, w, terms);
		if (rc == 0)
			rc = terms ? bfi__threshold(&v, ops, e, bfi__need(e, theta), w)
			           : bfi__answer(&v, ops, e, w);
		if (rc == 0)
			rc = io->append(io, w, ord0, res[q]);
		g += e->n_keys;
	}
	if (v.view[row] && ops->close)
		ops->close(&v);
	free(v.view[row]);
	return rc;
}

int bfi__pass_answer(struct bfi_scan_io *io, const bfi_snapshot *s,
                     const struct bfi_layout_ops *ops, int row,
                     size_t *(*attach)(void *ctx, void *view), void *ctx,
                     const struct bfi_expr *const *qs, size_t nq, double theta,
                     bfi_result *const *res)
{
	bfi_result *w = NULL;
	io->w->n_fresh = 0;
	int rc = ops->scan_bytes(s, 0, 1, NULL, io->w);
	io->n_want += io->w->n_fresh;
	if (rc == 0)
		rc = io->fill(io);
	if (rc == 0)
		rc = bfi_result_create(&w);
	if (rc == 0)
		rc = bfi__view_answer(io, s, ops, row, 0, 1, attach, ctx, qs, 0, nq, theta, w, res);
	bfi_result_destroy(&w);
	return rc;
}
