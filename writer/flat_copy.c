/*
 * flat_copy.c - a flat layout made from the rows of existing snapshots, not
 * from keys (bfi compact, bfi merge; spec/format.md, "Compaction and
 * merge"): each new block joins the kept columns of source blocks of one
 * width, row by row, and keeps a pre-filter the caller made from theirs.
 * A set's filter is its source column bit for bit, so every answer is the
 * source's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flat.h"

int bfi_writer_flat_given(bfi_writer *w, const struct bfi_flat_given *g)
{
	/*
	 * RAMBO beside it only as rows given too (bfi_writer_rambo_rows), and a
	 * layout a join carries itself; an implicit tree over the columns when
	 * they are all of one width, with or without the flat layout
	 */
	if (w == NULL || g == NULL || w->finished ||
	    !(w->opt.layouts & (BFI_BUILD_FLAT | BFI_BUILD_TREE)) ||
	    (w->opt.layouts & ~(BFI_BUILD_FLAT | BFI_BUILD_RAMBO | BFI_BUILD_TREE | writer_carried(w))) ||
	    ((w->opt.layouts & BFI_BUILD_TREE) && (w->opt.bloofi_incremental || w->opt.cluster)) ||
	    !w->opt.keep_order || w->keys_in || w->n_filt || g->k == 0 ||
	    g->k > BFI_MAX_K || g->n_blocks == 0 || g->n_blocks > BFI_MAX_BLOCKS ||
	    g->blocks == NULL || g->parts == NULL || g->distinct == NULL || g->ones == NULL)
		return BFI_E_INVALID;
	uint64_t sets = 0;
	for (uint32_t b = 0; b < g->n_blocks; b++) {
		const struct bfi_flat_block_given *blk = &g->blocks[b];
		if (blk->m == 0 || blk->m > BFI_MAX_BITS || blk->n_parts == 0 ||
		    blk->pre_m > BFI_MAX_BITS || (blk->pre_m != 0) != (blk->pre != NULL) ||
		    (g->line_pre && blk->pre_m % 512))
			return BFI_E_INVALID;
		uint64_t n = 0;
		for (uint32_t i = 0; i < blk->n_parts; i++) {
			const struct bfi_flat_part *pt = &g->parts[(uint64_t)blk->first_part + i];
			/* every bit read: row m - 1's last column at most (get_bits reads no further) */
			if (pt->rows == NULL || pt->n_cols == 0 || pt->row_bits < pt->n_cols ||
			    pt->row_bits > UINT64_MAX / blk->m ||
			    pt->bytes < ((blk->m - 1) * pt->row_bits + pt->n_cols + 7) / 8)
				return BFI_E_INVALID;
			for (uint64_t c = 0; c < pt->n_cols; c++)
				n += pt->keep == NULL || (pt->keep[c / 64] >> (c % 64) & 1);
		}
		if (n == 0 || ((w->opt.layouts & BFI_BUILD_TREE) && blk->m != g->blocks[0].m))
			return BFI_E_INVALID; /* a block holds at least one set; a tree's leaves, one width */
		sets += n;
	}
	if (sets > UINT32_MAX)
		return BFI_E_LIMIT;
	w->given = g;
	return 0;
}

/* The kept columns of given block gb. */
static uint64_t kept_columns(const struct bfi_flat_given *g, const struct bfi_flat_block_given *gb)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < gb->n_parts; i++) {
		const struct bfi_flat_part *pt = &g->parts[(uint64_t)gb->first_part + i];
		for (uint64_t c = 0; c < pt->n_cols; c++)
			n += pt->keep == NULL || (pt->keep[c / 64] >> (c % 64) & 1);
	}
	return n;
}

/*
 * The flat plan: the given blocks, each sized by its kept columns, and
 * those of more than 512 sets of packed rows without a pre-filter cut as
 * a fresh build cuts them (flat.c, line_blocks): blocks of 512 sets, then
 * the rest, so that a full compaction is a fresh build's bytes.
 */
int plan_given(bfi_writer *w, struct plan *p)
{
	struct flat_plan *fl = flat_of(p);
	const struct bfi_flat_given *g = w->given;
	uint64_t total = 0;
	for (uint32_t b = 0; b < g->n_blocks; b++) {
		/* a block with a pre-filter (ORed from its pieces) is not cut */
		total += g->blocks[b].pre_m ? 1 : line_parts(kept_columns(g, &g->blocks[b]));
	}
	if (total > BFI_MAX_BLOCKS)
		return writer_fail(w, BFI_E_LIMIT, "the given blocks make more than %u blocks",
		                   BFI_MAX_BLOCKS);
	fl->blocks = calloc(total, sizeof *fl->blocks);
	fl->given_block = calloc(total, sizeof *fl->given_block);
	fl->given_skip = calloc(total, sizeof *fl->given_skip);
	fl->block_of = malloc((p->n ? p->n : 1) * sizeof *fl->block_of);
	if (!fl->blocks || !fl->given_block || !fl->given_skip || !fl->block_of)
		return -ENOMEM;
	fl->n_blocks = (uint32_t)total;
	fl->line_pre = g->line_pre;
	uint64_t first = 0;
	uint32_t nb = 0;
	for (uint32_t b = 0; b < g->n_blocks; b++) {
		const struct bfi_flat_block_given *gb = &g->blocks[b];
		uint64_t n = kept_columns(g, gb);
		if (first + n > p->n)
			return writer_fail(w, BFI_E_INVALID, "the given blocks hold more sets than declared");
		int cut = gb->pre_m == 0 && line_parts(n) > 1;
		for (uint64_t skip = 0; skip < n; nb++) {
			uint64_t take = cut && n - skip > 512 ? 512 : n - skip;
			struct bfi_block *blk = &fl->blocks[nb];
			blk->first_set = first + skip;
			blk->n_sets = take;
			blk->m = gb->m;
			blk->row_bits = flat_row_bits(take);
			blk->pre_m = gb->pre_m;
			fl->given_block[nb] = b;
			fl->given_skip[nb] = skip;
			for (uint64_t j = first + skip; j < first + skip + take; j++)
				fl->block_of[j] = nb;
			skip += take;
		}
		first += n;
	}
	if (first != p->n)
		return writer_fail(w, BFI_E_INVALID, "the given blocks hold %llu sets, not the %u declared",
		                   (unsigned long long)first, p->n);
	for (uint32_t j = 0; j < p->n; j++)
		p->ones[j] = g->ones[j];
	if ((fl->size = bfi_flat_layout(fl->blocks, fl->n_blocks)) == 0)
		return BFI_E_LIMIT;
	return flat_rowmaps(p);
}

#define GIVEN_BATCH (4u << 20) /* bytes of rows joined before they are written */

/* n (at most 57) bits of src from bit at, of a region of size bytes: never read past it. */
static inline uint64_t get_bits(const uint8_t *src, uint64_t size, uint64_t at, unsigned n)
{
	uint64_t x = 0, byte = at / 8;
	size_t len = size - byte < 8 ? (size_t)(size - byte) : 8;
	memcpy(&x, src + byte, len);
	return (le64toh(x) >> (at % 8)) & ((UINT64_C(1) << n) - 1);
}

/* OR n (at most 57) bits v into dst (64-bit words) at bit at. */
static inline void put_bits(uint64_t *dst, uint64_t at, uint64_t v, unsigned n)
{
	unsigned s = (unsigned)(at % 64);
	dst[at / 64] |= v << s;
	if (s + n > 64)
		dst[at / 64 + 1] |= v >> (64 - s);
}

/* Copy n bits of src from bit from to dst at bit to. */
static void copy_bits(uint64_t *dst, uint64_t to, const uint8_t *src, uint64_t size,
                      uint64_t from, uint64_t n)
{
	while (n) {
		unsigned take = n < 57 ? (unsigned)n : 57;
		put_bits(dst, to, get_bits(src, size, from, take), take);
		to += take;
		from += take;
		n -= take;
	}
}

/* A part's kept columns as runs [start, start + len). */
struct run {
	uint64_t start, len;
};

static struct run *part_runs(const struct bfi_flat_part *pt, uint64_t *n_runs)
{
	struct run *r = malloc((pt->n_cols / 2 + 1) * sizeof *r);
	uint64_t n = 0;
	for (uint64_t c = 0; r && c < pt->n_cols;) {
		while (c < pt->n_cols && pt->keep && !(pt->keep[c / 64] >> (c % 64) & 1))
			c++;
		uint64_t s = c;
		while (c < pt->n_cols && (pt->keep == NULL || (pt->keep[c / 64] >> (c % 64) & 1)))
			c++;
		if (c > s)
			r[n++] = (struct run){s, c - s};
	}
	*n_runs = n;
	return r;
}

/*
 * Block bi's rows, a batch of rows at a time (a multiple of 64, so that a
 * packed batch starts on a word), then its pre-filter.
 */
static int write_block(bfi_writer *w, const struct plan *p, uint32_t bi, int fd, uint64_t sec_off,
                       uint64_t budget)
{
	const struct bfi_flat_given *g = w->given;
	const struct bfi_flat_block_given *gb = &g->blocks[flat_of(p)->given_block[bi]];
	const struct bfi_block *blk = &flat_of(p)->blocks[bi];
	/* this block's kept columns of its given block: [skip, skip + n_sets) */
	uint64_t skip = flat_of(p)->given_skip[bi], end = skip + blk->n_sets;
	const struct bfi_flat_part *parts = &g->parts[gb->first_part];
	struct run **runs = calloc(gb->n_parts, sizeof *runs);
	uint64_t *n_runs = calloc(gb->n_parts, sizeof *n_runs);
	int rc = runs && n_runs ? 0 : -ENOMEM;
	for (uint32_t i = 0; rc == 0 && i < gb->n_parts; i++)
		if ((runs[i] = part_runs(&parts[i], &n_runs[i])) == NULL)
			rc = -ENOMEM;
	uint64_t total = bfi_block_rows_bytes(blk->m, blk->row_bits);
	/* a batch that stays in cache, and within the budget: written rows are the page cache's */
	uint64_t most = budget / 2 < GIVEN_BATCH ? budget / 2 : GIVEN_BATCH;
	uint64_t batch = most / (blk->row_bits / 8 + 1) / 64 * 64;
	batch = batch < 64 ? 64 : batch > blk->m ? (blk->m + 63) / 64 * 64 : batch;
	uint64_t words = (batch * blk->row_bits + 63) / 64 + 1;
	uint64_t *buf = rc == 0 ? malloc((size_t)words * 8) : NULL;
	if (rc == 0 && buf == NULL)
		rc = -ENOMEM;
	for (uint64_t r0 = 0; rc == 0 && r0 < blk->m; r0 += batch) {
		uint64_t r1 = r0 + batch < blk->m ? r0 + batch : blk->m;
		uint64_t lo = r0 * blk->row_bits / 8;
		uint64_t hi = r1 == blk->m ? total : r1 * blk->row_bits / 8;
		/* the zero tail of packed rows past the buffer is the file's own zeros */
		uint64_t len = hi - lo < words * 8 ? hi - lo : words * 8;
		uint64_t used = ((r1 - r0) * blk->row_bits + 63) / 64 + 1;
		memset(buf, 0, (size_t)(used * 8 > len ? used * 8 : len)); /* what is filled or written */
		for (uint64_t r = r0; r < r1; r++) {
			uint64_t to = (r - r0) * blk->row_bits, at = 0; /* at: kept columns passed */
			for (uint32_t i = 0; i < gb->n_parts && at < end; i++) {
				const struct bfi_flat_part *pt = &parts[i];
				for (uint64_t x = 0; x < n_runs[i] && at < end; x++) {
					/* the run's columns within [skip, end) */
					uint64_t a = at > skip ? at : skip, run = runs[i][x].len;
					uint64_t e = at + run < end ? at + run : end;
					if (e > a) {
						copy_bits(buf, to, pt->rows, pt->bytes,
						          r * pt->row_bits + runs[i][x].start + (a - at), e - a);
						to += e - a;
					}
					at += run;
				}
			}
		}
		for (uint64_t x = 0; x < words; x++)
			buf[x] = htole64(buf[x]);
		rc = pwrite_all(fd, buf, (size_t)len, sec_off + blk->rows_offset + lo);
		progress(w, "rows", r1, blk->m);
	}
	if (rc == 0 && blk->pre_m)
		rc = pwrite_all(fd, gb->pre, (size_t)bfi_bits_bytes(blk->pre_m), sec_off + blk->pre_offset);
	free(buf);
	for (uint32_t i = 0; runs && i < gb->n_parts; i++)
		free(runs[i]);
	free(runs);
	free(n_runs);
	return rc;
}

int fill_given(bfi_writer *w, const struct plan *p, int fd, uint64_t sec_off, uint64_t budget)
{
	int rc = 0;
	for (uint32_t b = 0; rc == 0 && b < flat_of(p)->n_blocks; b++)
		rc = write_block(w, p, b, fd, sec_off, budget);
	return rc ? writer_fail(w, rc, "writing joined rows: %s", bfi_strerror(rc)) : 0;
}

/*
 * Every kept column of every given block, in set order: row r of them all
 * is row r of level 0 of a tree over the sets (given_tree.c). Only when
 * every block has one width, so that row r means the same bit in all.
 */
int given_cols_open(const struct bfi_flat_given *g, uint64_t n, struct given_cols *c)
{
	uint64_t kept = 0;
	*c = (struct given_cols){g, 0, NULL, NULL, NULL};
	for (uint32_t b = 0; b < g->n_blocks; b++)
		c->n_parts += g->blocks[b].n_parts;
	c->parts = calloc(c->n_parts, sizeof *c->parts);
	c->runs = calloc(c->n_parts, sizeof *c->runs);
	c->n_runs = calloc(c->n_parts, sizeof *c->n_runs);
	if (c->parts == NULL || c->runs == NULL || c->n_runs == NULL)
		return -ENOMEM;
	uint32_t x = 0;
	for (uint32_t b = 0; b < g->n_blocks; b++)
		for (uint32_t i = 0; i < g->blocks[b].n_parts; i++, x++) {
			c->parts[x] = &g->parts[(uint64_t)g->blocks[b].first_part + i];
			if ((c->runs[x] = part_runs(c->parts[x], &c->n_runs[x])) == NULL)
				return -ENOMEM;
			for (uint64_t r = 0; r < c->n_runs[x]; r++)
				kept += c->runs[x][r].len;
		}
	return kept == n ? 0 : BFI_E_INVALID; /* row r fills exactly n bits */
}

void given_cols_row(const struct given_cols *c, uint64_t r, uint64_t *dst)
{
	uint64_t to = 0;
	for (uint32_t i = 0; i < c->n_parts; i++) {
		const struct bfi_flat_part *pt = c->parts[i];
		for (uint64_t x = 0; x < c->n_runs[i]; x++) {
			copy_bits(dst, to, pt->rows, pt->bytes, r * pt->row_bits + c->runs[i][x].start,
			          c->runs[i][x].len);
			to += c->runs[i][x].len;
		}
	}
}

void given_cols_close(struct given_cols *c)
{
	for (uint32_t i = 0; c->runs && i < c->n_parts; i++)
		free(c->runs[i]);
	free(c->runs);
	free(c->n_runs);
	free(c->parts);
	*c = (struct given_cols){0};
}
