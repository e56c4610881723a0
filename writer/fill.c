/*
 * fill.c - a flat block built from its sets' own filters (spec/format.md,
 * "Flat section"). Each set's keys set its k bits in a filter of the
 * block's width, which for the widths bfi picks stays in cache while it
 * fills; 64 finished filters are then transposed into the block's rows a
 * 64 x 64 tile at a time (transpose.c). The rows and the pre-filter are
 * held in memory and written once, in order. The alternative, setting
 * each key's bits straight into the rows, touches a random line of the
 * whole block per bit.
 */
#include <errno.h>
#include <stdlib.h>

#include "bfi_hash.h"
#include "internal.h"

/* Set the k bits of every key of input set ord in filt (m bits), and in the pre-filter. */
static int fill_filter(bfi_writer *w, const struct plan *p, const struct bfi_block *b, uint32_t ord,
                       uint64_t *filt, uint8_t *pre)
{
	struct spool_iter it;
	struct rec r;
	int rc = spool_iter_set(&it, &w->spool, ord);
	while (rc == 0 && (rc = spool_iter_next(&it, &r)) == 1) {
		rc = 0;
		bfi_keyhash h = {r.h1, r.h2};
		uint64_t line = b->pre_m && p->line_pre ? bfi_pre_line(bfi_hash_probe(h, 0), b->pre_m) : 0;
		for (uint32_t i = 0; i < p->k; i++) {
			uint64_t z = bfi_hash_probe(h, i), row = bfi_reduce(z, b->m);
			filt[row / 64] |= UINT64_C(1) << (row % 64);
			if (b->pre_m) {
				uint64_t pos = p->line_pre ? line + bfi_pre_bit(z) : bfi_reduce(z, b->pre_m);
				pre[pos / 8] |= (uint8_t)(1u << (pos % 8));
			}
		}
	}
	spool_iter_end(&it);
	return rc;
}

/* What the threads of one block share (fill_group). */
struct fill_job {
	bfi_writer *w;
	const struct plan *p;
	const struct bfi_block *b;
	uint64_t words, rows_bytes, pre_bytes;
	uint8_t *out;     /* the rows, then the pre-filter */
	uint64_t **filt;  /* per thread: 64 filters */
	uint8_t **pre;    /* per thread: its own pre-filter, ORed into out's at the end */
	int shared_words; /* packed rows: a row word may hold two groups' columns */
};

/* Group g of the block: its up to 64 sets' filters, transposed into the rows. */
static int fill_group(void *ctx, uint64_t g, unsigned thread)
{
	struct fill_job *j = ctx;
	const struct bfi_block *b = j->b;
	uint64_t first = g * 64, words = j->words, *filt = j->filt[thread];
	uint32_t n = b->n_sets - first < 64 ? (uint32_t)(b->n_sets - first) : 64;
	memset(filt, 0, (size_t)(n * words * 8));
	for (uint32_t c = 0; c < n; c++) {
		uint64_t set = b->first_set + first + c, ones = 0, *f = filt + (uint64_t)c * words;
		int rc = fill_filter(j->w, j->p, b, j->p->old_of_new[set], f, j->pre[thread]);
		if (rc)
			return rc;
		for (uint64_t x = 0; x < words; x++)
			ones += (uint64_t)__builtin_popcountll(f[x]);
		j->p->ones[set] = ones;
	}
	transpose_filters(filt, words, n, b->m, j->out, b->row_bits, first, j->shared_words);
	return 0;
}

int fill_block(bfi_writer *w, const struct plan *p, uint32_t bi, int fd, uint64_t sec_off,
               uint64_t budget)
{
	const struct bfi_block *b = &p->blocks[bi];
	struct fill_job j = {w, p, b, (b->m + 63) / 64, bfi_block_rows_bytes(b->m, b->row_bits),
	                     b->pre_m ? bfi_bits_bytes(b->pre_m) : 0, NULL, NULL, NULL,
	                     !bfi_rows_lined(b->row_bits)};
	uint64_t shared = j.rows_bytes + j.pre_bytes, filt_bytes = 64 * j.words * 8;
	uint64_t groups = (b->n_sets + 63) / 64;
	/* the rows and pre-filter lie together (pre_offset follows the rows); each
	 * thread has 64 filters and, past the first, its own pre-filter */
	if (shared > budget || shared > SIZE_MAX || filt_bytes > budget - shared)
		return 1;
	unsigned threads = pool_threads(w->opt.threads);
	threads = groups < threads ? (unsigned)groups : threads;
	while (threads > 1 && (filt_bytes + j.pre_bytes) * (threads - 1) > budget - shared - filt_bytes)
		threads--;
	j.out = calloc((size_t)shared, 1);
	j.filt = calloc(threads, sizeof *j.filt);
	j.pre = calloc(threads, sizeof *j.pre);
	int rc = j.out && j.filt && j.pre ? 0 : -ENOMEM;
	for (unsigned t = 0; rc == 0 && t < threads; t++) {
		j.filt[t] = malloc((size_t)filt_bytes);
		j.pre[t] = t == 0 || !j.pre_bytes ? j.out + j.rows_bytes : calloc((size_t)j.pre_bytes, 1);
		if (j.filt[t] == NULL || j.pre[t] == NULL)
			rc = -ENOMEM;
	}
	if (rc == 0)
		rc = pool_run(threads, groups, fill_group, &j);
	for (unsigned t = 1; rc == 0 && j.pre_bytes && t < threads; t++)
		for (uint64_t x = 0; x < j.pre_bytes; x++)
			j.out[j.rows_bytes + x] |= j.pre[t][x];
	if (rc == 0)
		rc = pwrite_all(fd, j.out, (size_t)shared, sec_off + b->rows_offset);
	for (unsigned t = 0; j.filt && t < threads; t++) {
		free(j.filt[t]);
		if (t > 0 && j.pre_bytes && j.pre)
			free(j.pre[t]);
	}
	free(j.filt);
	free(j.pre);
	free(j.out);
	return rc;
}
