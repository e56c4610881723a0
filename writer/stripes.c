/*
 * stripes.c - each layout's bytes filled in memory a stripe at a time, from
 * every key of every set, and written in place: the way left when a flat
 * block cannot be built from its sets' own filters (fill.c), nor a tree's
 * levels or RAMBO's repetitions from their columns' (columns.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_hash.h"
#include "internal.h"

/*
 * A stripe is a byte range [lo, hi) of one section, made of whole rows
 * (flat) or whole filters (plain), filled in memory by one pass over the
 * records and written in place.
 */

struct stripe_ctx {
	bfi_writer *w;
	const struct plan *p;
	int fd;
	uint64_t sec_off;
	int kind; /* LK_* */
	uint8_t *buf;
	uint64_t budget;
	uint64_t done, total;
};

static void set_bit(uint8_t *buf, uint64_t lo, uint64_t hi, uint64_t byte, unsigned bit)
{
	if (byte >= lo && byte < hi)
		buf[byte - lo] |= (uint8_t)(1u << bit);
}

/* Prebuilt filters: filter j's bit r is row r of its column, at every level. */
static void fill_filters(struct stripe_ctx *c, uint64_t lo, uint64_t hi)
{
	const struct plan *p = c->p;
	for (uint32_t j = 0; j < p->n; j++) {
		const bfi_filter *f = c->w->filt[p->old_of_new[j]];
		struct bfi_filter_stats fs;
		bfi_filter_stats(f, &fs);
		const uint8_t *bits = bfi_filter_bits(f);
		for (uint64_t byte = 0; byte < (fs.m + 7) / 8; byte++)
			for (unsigned x = bits[byte]; x; x &= x - 1) {
				uint64_t row = byte * 8 + (uint64_t)__builtin_ctz(x);
				if (c->kind == LK_TREE) {
					uint64_t node = j;
					for (uint32_t l = 0; l < p->tree.levels; l++) {
						if (l > 0)
							node = tree_up(p, l - 1, node);
						const struct bfi_level *lv = &p->levels[l];
						set_bit(c->buf, lo, hi, lv->rows_offset + row * lv->row_bytes + node / 8,
						        node % 8);
					}
				} else if (c->kind == LK_FLAT) {
					const struct bfi_block *b = &p->blocks[p->block_of[j]];
					uint64_t bit = b->rows_offset * 8 + row * b->row_bits + (j - b->first_set);
					set_bit(c->buf, lo, hi, bit / 8, bit % 8);
				} else if (c->kind == LK_PLAIN) {
					uint64_t base = p->plain.filters_offset + (uint64_t)j * p->plain.filter_bytes;
					set_bit(c->buf, lo, hi, base + row / 8, row % 8);
				} else if (c->kind == LK_RAMBO) { /* each cell: the OR of its sets' filters */
					for (uint32_t rep = 0; rep < p->rambo.reps; rep++) {
						const struct bfi_rep *rp = &p->reps[rep];
						uint64_t cell = p->cell_of[(size_t)rep * p->n + j];
						set_bit(c->buf, lo, hi, rp->rows_offset + row * rp->row_bytes + cell / 8,
						        cell % 8);
					}
				}
			}
	}
}

/*
 * Add the ones of each column of the m rows of row_bytes at rows_off that
 * lie in [lo, hi), whose bytes are at buf, to ones[column]. A stripe may
 * begin or end inside a row; every bound is a multiple of 8 bytes, or of
 * a narrow row's 1, 2 or 4.
 */
static void count_columns(const uint8_t *buf, uint64_t lo, uint64_t hi, uint64_t rows_off,
                          uint64_t m, uint64_t row_bytes, uint64_t *ones)
{
	uint64_t end = rows_off + m * row_bytes;
	uint64_t a = rows_off > lo ? rows_off : lo, z = end < hi ? end : hi;
	if (a >= z)
		return;
	for (uint64_t ro = rows_off + (a - rows_off) / row_bytes * row_bytes; ro < z; ro += row_bytes) {
		uint64_t from = ro > a ? ro : a, to = ro + row_bytes < z ? ro + row_bytes : z;
		/* a narrow RAMBO row (format 3.1) is fewer than 8 bytes: read it whole */
		for (uint64_t at = from; at < to; at += 8) {
			uint64_t x = 0;
			memcpy(&x, buf + (at - lo), to - at < 8 ? (size_t)(to - at) : 8);
			for (x = le64toh(x); x; x &= x - 1)
				ones[(at - ro) * 8 + (uint64_t)__builtin_ctzll(x)]++;
		}
	}
}

/* count_columns for a block of packed rows: column of each one, by its bit. */
static void count_packed(const uint8_t *buf, uint64_t lo, uint64_t hi, const struct bfi_block *b,
                         uint64_t *ones)
{
	uint64_t end = b->rows_offset + bfi_block_rows_bytes(b->m, b->row_bits);
	uint64_t a = b->rows_offset > lo ? b->rows_offset : lo, z = end < hi ? end : hi;
	for (uint64_t at = a; at < z; at += 8)
		for (uint64_t x = bfi_get64(buf + (at - lo)); x; x &= x - 1) {
			uint64_t bit = (at - b->rows_offset) * 8 + (uint64_t)__builtin_ctzll(x);
			if (bit / b->row_bits < b->m && bit % b->row_bits < b->n_sets)
				ones[bit % b->row_bits]++;
		}
}

/* One key of input set ord: its bits that fall in the stripe. */
struct stripe_key {
	struct stripe_ctx *c;
	uint64_t lo, hi;
};

static int stripe_key(void *ctx, uint32_t ord, bfi_keyhash h)
{
	const struct stripe_key *sk = ctx;
	const struct stripe_ctx *c = sk->c;
	uint64_t lo = sk->lo, hi = sk->hi;
	const struct plan *p = c->p;
	uint32_t j = p->new_of_old[ord];
	if (c->kind == LK_TREE) {
		for (uint32_t i = 0; p->tree.pre_m && i < p->tree.k; i++) {
			uint64_t pos = bfi_hash_pos(h, i, p->tree.pre_m);
			set_bit(c->buf, lo, hi, p->tree.pre_offset + pos / 8, pos % 8);
		}
		/* level l's node of set j is j / d^l or the shape's; every level ORs its subtree */
		uint64_t node = j;
		for (uint32_t l = 0; l < p->tree.levels; l++) {
			if (l > 0)
				node = tree_up(p, l - 1, node);
			const struct bfi_level *lv = &p->levels[l];
			for (uint32_t i = 0; i < p->tree.k; i++) {
				uint64_t row = bfi_hash_pos(h, i, lv->m);
				set_bit(c->buf, lo, hi, lv->rows_offset + row * lv->row_bytes + node / 8, node % 8);
			}
		}
	} else if (c->kind == LK_RAMBO) {
		for (uint32_t rep = 0; rep < p->rambo.reps; rep++) {
			const struct bfi_rep *rp = &p->reps[rep];
			uint64_t cell = p->cell_of[(size_t)rep * p->n + j];
			/* repetition rep takes probes rep k .. rep k + k - 1: independent filters */
			uint32_t kr = p->rambo.k;
			for (uint32_t i = 0; i < kr; i++) {
				uint64_t row = bfi_hash_pos(h, rep * kr + i, rp->m);
				set_bit(c->buf, lo, hi, rp->rows_offset + row * rp->row_bytes + cell / 8,
				        cell % 8);
			}
		}
	} else if (c->kind == LK_FLAT) {
		const struct bfi_block *b = &p->blocks[p->block_of[j]];
		uint64_t at = b->rows_offset * 8 + (j - b->first_set); /* bit of column j in row 0 */
		uint64_t line = b->pre_m && p->line_pre ? bfi_pre_line(bfi_hash_probe(h, 0), b->pre_m) : 0;
		for (uint32_t i = 0; i < p->k; i++) {
			uint64_t z = bfi_hash_probe(h, i), bit = at + bfi_reduce(z, b->m) * b->row_bits;
			set_bit(c->buf, lo, hi, bit / 8, bit % 8);
			if (b->pre_m) {
				uint64_t pos = p->line_pre ? line + bfi_pre_bit(z) : bfi_reduce(z, b->pre_m);
				set_bit(c->buf, lo, hi, b->pre_offset + pos / 8, pos % 8);
			}
		}
	} else {
		uint64_t base = p->plain.filters_offset + (uint64_t)j * p->plain.filter_bytes;
		for (uint32_t i = 0; i < p->k; i++) {
			uint64_t pos = bfi_hash_pos(h, i, p->plain.m);
			set_bit(c->buf, lo, hi, base + pos / 8, pos % 8);
		}
	}
	return 0;
}

static int fill_stripe(struct stripe_ctx *c, uint64_t lo, uint64_t hi)
{
	const struct plan *p = c->p;
	memset(c->buf, 0, (size_t)(hi - lo));
	if (c->w->n_filt)
		fill_filters(c, lo, hi);
	struct stripe_key sk = {c, lo, hi};
	int rc = each_source_key(c->w, stripe_key, &sk);
	if (rc)
		return rc;
	/* Count each set's ones, for the catalog; the first layout's count. */
	if (c->kind == LK_TREE) {
		const struct bfi_level *lv = &p->levels[0]; /* the leaves: the sets' own filters */
		count_columns(c->buf, lo, hi, lv->rows_offset, lv->m, lv->row_bytes, p->tree_ones);
	} else if (c->kind == LK_RAMBO) {
		const struct bfi_rep *rp = &p->reps[0];
		count_columns(c->buf, lo, hi, rp->rows_offset, rp->m, rp->row_bytes, p->cell_ones);
	} else if (c->kind == LK_FLAT) {
		for (uint32_t bi = 0; bi < p->n_blocks; bi++) {
			const struct bfi_block *b = &p->blocks[bi];
			if (bfi_rows_lined(b->row_bits))
				count_columns(c->buf, lo, hi, b->rows_offset, b->m, b->row_bits / 8,
				              p->ones + b->first_set);
			else
				count_packed(c->buf, lo, hi, b, p->ones + b->first_set);
		}
	} else if (!(c->w->opt.layouts & BFI_BUILD_FLAT)) {
		/* plain, and the first layout: a filter's ones, from its part in this stripe */
		uint64_t fb = p->plain.filter_bytes;
		for (uint64_t at = lo; at < hi;) {
			uint64_t j = (at - p->plain.filters_offset) / fb;
			uint64_t end = p->plain.filters_offset + (j + 1) * fb, ones = 0;
			end = end < hi ? end : hi;
			for (; at < end; at += 8)
				ones += (uint64_t)__builtin_popcountll(bfi_get64(c->buf + (at - lo)));
			p->ones[j] += ones;
		}
	}
	c->done += hi - lo;
	progress(c->w,
	         c->kind == LK_FLAT    ? "row stripes"
	         : c->kind == LK_PLAIN ? "plain filters"
	         : c->kind == LK_RAMBO ? "rambo rows"
	                               : "tree levels",
	         c->done, c->total);
	return pwrite_all(c->fd, c->buf, (size_t)(hi - lo), c->sec_off + lo);
}

/*
 * Cut [lo, hi) of a section into stripes at unit boundaries (rows of
 * unit bytes from lo) that fit the budget, and fill each.
 */
static int fill_units(struct stripe_ctx *c, uint64_t *start, uint64_t *end, uint64_t lo,
                      uint64_t hi, uint64_t unit)
{
	/* a unit larger than the budget (a long row, a wide filter) goes in several stripes */
	uint64_t most = c->budget / 64 * 64;
	if (unit > most)
		unit = most;
	for (uint64_t at = lo; at < hi; at += unit) {
		uint64_t to = hi - at < unit ? hi : at + unit;
		/* the stripe would run to `to`, gaps between regions included */
		if (*end > *start && to - *start > c->budget) {
			int rc = fill_stripe(c, *start, *end);
			if (rc)
				return rc;
			*start = at;
		}
		if (*end == *start)
			*start = at;
		*end = to;
	}
	return 0;
}

/*
 * Repetition r of rows given whole (bfi_writer_rambo_rows: ceil(B / 64)
 * words each) as the file's rows, narrower for small B (format 3.1);
 * repetition 0's ones counted per cell.
 */
static int write_raw_rows(bfi_writer *w, const struct plan *p, uint32_t r, int fd, uint64_t sec_off)
{
	const struct bfi_rep *rp = &p->reps[r];
	uint64_t given = bfi_rambo_row_bytes(p->rambo.cells), rb = rp->row_bytes;
	const uint8_t *in = w->raw->rows[r];
	uint8_t *out = rb == given ? NULL : malloc((size_t)(rp->m * rb));
	if (rb != given && out == NULL)
		return -ENOMEM;
	for (uint64_t i = 0; out && i < rp->m; i++)
		memcpy(out + i * rb, in + i * given, (size_t)rb);
	int rc = pwrite_all(fd, out ? out : in, (size_t)(rp->m * rb), sec_off + rp->rows_offset);
	for (uint64_t i = 0; r == 0 && i < rp->m * given / 8; i++)
		for (uint64_t x = bfi_get64(in + i * 8); x; x &= x - 1)
			p->cell_ones[(i % (given / 8)) * 64 + (uint64_t)__builtin_ctzll(x)]++;
	free(out);
	return rc;
}

int write_layout(bfi_writer *w, const struct plan *p, int fd, uint64_t sec_off, int kind)
{
	/*
	 * The rows get what the process does not hold yet: the spool's half,
	 * where sets read from files left it untouched, included. fill_units
	 * cuts units larger than this.
	 */
	uint64_t budget = writer_budget(w);
	/* the tree's levels and RAMBO's repetitions from their columns' own filters, where they fit */
	int cols = kind == LK_TREE    ? fill_tree_levels(w, p, fd, sec_off, budget)
	           : kind == LK_RAMBO ? fill_rambo_reps(w, p, fd, sec_off, budget)
	                              : 1;
	if (cols <= 0)
		return cols;
	uint64_t size = kind == LK_FLAT    ? p->flat_size
	                : kind == LK_PLAIN ? p->plain_size
	                : kind == LK_RAMBO ? p->rambo_size
	                                   : p->tree_size;
	uint64_t data = kind == LK_FLAT    ? p->blocks[0].rows_offset
	                : kind == LK_PLAIN ? p->plain.filters_offset
	                : kind == LK_RAMBO ? p->reps[0].rows_offset
	                                   : p->levels[0].rows_offset;
	struct stripe_ctx c = {w, p, fd, sec_off, kind, NULL, budget, 0, size - data};
	c.buf = malloc((size_t)(budget < size - data ? budget : size - data));
	if (c.buf == NULL)
		return writer_fail(w, -ENOMEM, "cannot allocate a row stripe");
	uint64_t start = data, end = data;
	int rc = 0;
	if (kind == LK_FLAT)
		for (uint32_t b = 0; b < p->n_blocks && rc == 0; b++) {
			const struct bfi_block *blk = &p->blocks[b];
			/* from the sets' own filters when the block fits */
			if (end > start)
				rc = fill_stripe(&c, start, end);
			start = end = blk->rows_offset;
			if (rc == 0)
				rc = fill_block(w, p, b, fd, sec_off, budget);
			int sliced = rc == 1;
			if (sliced)
				rc = fill_block_sliced(w, p, b, fd, sec_off, budget);
			if (rc == 0) {
				c.done += bfi_block_rows_bytes(blk->m, blk->row_bits) +
				          (blk->pre_m ? bfi_bits_bytes(blk->pre_m) : 0);
				progress(w, sliced ? "rows from slices" : "rows", c.done, c.total);
				continue;
			}
			if (rc < 0)
				break;
			rc = 0; /* 1: too large for the budget, so in stripes */
			/* packed rows run on: any line may end a stripe */
			uint64_t rows = bfi_block_rows_bytes(blk->m, blk->row_bits);
			rc = fill_units(&c, &start, &end, blk->rows_offset, blk->rows_offset + rows,
			                bfi_rows_lined(blk->row_bits) ? blk->row_bits / 8 : 64);
			if (rc == 0 && blk->pre_m) /* the pre-filter is one unit */
				rc = fill_units(&c, &start, &end, blk->pre_offset,
				                blk->pre_offset + bfi_bits_bytes(blk->pre_m),
				                bfi_bits_bytes(blk->pre_m));
		}
	else if (kind == LK_PLAIN)
		rc = fill_units(&c, &start, &end, data, size, p->plain.filter_bytes);
	else if (kind == LK_TREE) {
		for (uint32_t l = 0; l < p->tree.levels && rc == 0; l++) {
			const struct bfi_level *lv = &p->levels[l];
			rc = fill_units(&c, &start, &end, lv->rows_offset,
			                lv->rows_offset + lv->m * lv->row_bytes, lv->row_bytes);
		}
		if (rc == 0 && p->tree.pre_m) /* the pre-filter is one unit */
			rc = fill_units(&c, &start, &end, p->tree.pre_offset,
			                p->tree.pre_offset + bfi_bits_bytes(p->tree.pre_m),
			                bfi_bits_bytes(p->tree.pre_m));
	}
	else if (w->raw) /* given rows: copy them, counting repetition 0's cells */
		for (uint32_t r = 0; r < p->rambo.reps && rc == 0; r++)
			rc = write_raw_rows(w, p, r, fd, sec_off);
	else /* rambo: the rows of each repetition; its tables are written after */
		for (uint32_t r = 0; r < p->rambo.reps && rc == 0; r++) {
			const struct bfi_rep *rp = &p->reps[r];
			rc = fill_units(&c, &start, &end, rp->rows_offset,
			                rp->rows_offset + rp->m * rp->row_bytes, rp->row_bytes);
		}
	if (rc == 0 && end > start)
		rc = fill_stripe(&c, start, end);
	free(c.buf);
	return rc;
}
