/*
 * unions.c - the tree's levels and RAMBO's repetitions built as flat's
 * blocks are (fill.c): each column of a level or repetition (a tree node,
 * a RAMBO cell) is the union of some sets, so its filter is filled from
 * those sets' keys while it is in cache, and 64 finished filters are
 * transposed into the rows at once. The rows are held in memory and
 * written once; where they do not fit the budget, stripes.c fills them a
 * stripe at a time from every key instead.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_hash.h"
#include "layout.h"
#include "sources.h"


struct column_fill {
	const struct columns *c;
	uint64_t *filt;
	uint8_t *pre;
};

static int column_keys(void *ctx, const bfi_keyhash *h, size_t n)
{
	const struct column_fill *f = ctx;
	const struct columns *c = f->c;
	uint64_t m = c->m, *filt = f->filt, pre_m = c->pre_m;
	uint32_t k = c->k, first = c->first_probe;
	for (size_t x = 0; x < n; x++) {
		for (uint32_t i = 0; i < k; i++) {
			uint64_t row = bfi_hash_pos(h[x], first + i, m);
			filt[row / 64] |= UINT64_C(1) << (row % 64);
		}
		for (uint32_t i = 0; f->pre && i < k; i++) {
			uint64_t pos = bfi_pre_pos(h[x], i, pre_m, c->pre_line);
			f->pre[pos / 8] |= (uint8_t)(1u << (pos % 8));
		}
	}
	return 0;
}

/* Group g: its up to 64 columns' filters, then into the rows. */
static int column_group(void *ctx, uint64_t g, unsigned thread)
{
	const struct columns *c = ctx;
	const struct plan *p = c->p;
	uint32_t n = c->n - g * 64 < 64 ? (uint32_t)(c->n - g * 64) : 64;
	uint64_t *filt = c->filt[thread];
	memset(filt, 0, (size_t)(n * c->words * 8));
	for (uint32_t x = 0; x < n; x++) {
		uint64_t col = g * 64 + x, a, e;
		if (c->list) {
			a = c->starts[col];
			e = c->starts[col + 1];
		} else {
			a = col * c->span;
			e = a + c->span < p->n ? a + c->span : p->n;
		}
		struct column_fill f = {c, filt + x * c->words, c->pres ? c->pres[thread] : NULL};
		for (uint64_t j = a; j < e; j++) {
			uint32_t set = c->list ? c->list[j] : (uint32_t)j;
			/* prebuilt filters, all of the column's width: the column's is their OR */
			int rc = c->w->n_filt ? prebuilt_into(c->w, p->old_of_new[set], c->m, f.filt)
			                      : set_keys(c->w, p->old_of_new[set], column_keys, &f);
			if (rc)
				return rc;
		}
		if (c->ones)
			c->ones[col] = filter_ones(f.filt, c->words);
	}
	/* whole 64-bit words a row, and 64 columns a group: no word is shared */
	struct rowmap rm = {c->row_bytes * 8, 0, 0, 0, 0, 0};
	transpose_filters(filt, c->words, n, c->m, c->rows, &rm, g * 64, 0);
	return 0;
}

int fill_columns(struct columns *c, int fd, uint64_t off, uint64_t budget)
{
	uint64_t rows_bytes = c->m * c->row_bytes, filt_bytes, groups = (c->n + 63) / 64;
	c->words = (c->m + 63) / 64;
	filt_bytes = 64 * c->words * 8;
	uint64_t pre_bytes = c->pre ? (c->pre_m + 7) / 8 : 0;
	if (rows_bytes > budget || rows_bytes > SIZE_MAX || filt_bytes + pre_bytes > budget - rows_bytes)
		return 1;
	unsigned threads = pool_threads(c->w->opt.threads);
	threads = groups < threads ? (unsigned)(groups ? groups : 1) : threads;
	while (threads > 1 && (filt_bytes + pre_bytes) * threads > budget - rows_bytes)
		threads--;
	/* whole words: the transpose ORs words, and narrow RAMBO rows share them */
	c->rows = calloc((size_t)bfi_align_up(rows_bytes ? rows_bytes : 1, 8), 1);
	c->filt = calloc(threads, sizeof *c->filt);
	c->pres = c->pre ? calloc(threads, sizeof *c->pres) : NULL;
	int rc = c->rows && c->filt && (!c->pre || c->pres) ? 0 : -ENOMEM;
	for (unsigned t = 0; rc == 0 && t < threads; t++) {
		c->filt[t] = malloc((size_t)filt_bytes);
		if (c->filt[t] == NULL || (c->pre && (c->pres[t] = calloc((size_t)pre_bytes, 1)) == NULL))
			rc = -ENOMEM;
	}
	if (rc == 0)
		rc = pool_run(threads, groups, column_group, c);
	for (unsigned t = 0; rc == 0 && c->pre && t < threads; t++)
		for (uint64_t x = 0; x < pre_bytes; x++)
			c->pre[x] |= c->pres[t][x];
	if (rc == 0)
		rc = pwrite_all(fd, c->rows, (size_t)rows_bytes, off);
	for (unsigned t = 0; c->filt && t < threads; t++) {
		free(c->filt[t]);
		if (c->pres)
			free(c->pres[t]);
	}
	free(c->filt);
	free(c->pres);
	free(c->rows);
	return rc;
}
