/*
 * flat.c - the flat layout (spec/format.md, "Flat section"): its ops, its
 * descriptor, and its bytes: each block from its sets' own filters where
 * it fits (fill.c), else a stripe at a time (stripes.c). Its plan is in
 * flat_plan.c and flat_group.c, a join's in flat_copy.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi.h"
#include "bfi_hash.h"
#include "flat.h"

static void flat_filter_bit(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j,
                            uint64_t row)
{
	const struct plan *p = c->p;
	const struct bfi_block *b = &flat_of(p)->blocks[flat_of(p)->block_of[j]];
	uint64_t bit = b->rows_offset * 8 + rowmap_bit(&flat_of(p)->rowmap[flat_of(p)->block_of[j]], row) +
	               (j - b->first_set);
	stripe_bit(c->buf, lo, hi, bit / 8, bit % 8);
}

/* A key of set j: a bit in k rows of its block, and in the block's pre-filter. */
static void flat_key(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j,
                     bfi_keyhash h)
{
	const struct plan *p = c->p;
	const struct bfi_block *b = &flat_of(p)->blocks[flat_of(p)->block_of[j]];
	const struct rowmap *rm = &flat_of(p)->rowmap[flat_of(p)->block_of[j]];
	uint64_t at = b->rows_offset * 8 + (j - b->first_set); /* bit of column j in row 0 */
	uint64_t line = b->pre_m && flat_of(p)->line_pre ? bfi_pre_line(bfi_hash_probe(h, 0), b->pre_m) : 0;
	for (uint32_t i = 0; i < p->k; i++) {
		uint64_t z = bfi_hash_probe(h, i), bit = at + rowmap_bit(rm, bfi_reduce(z, b->m));
		stripe_bit(c->buf, lo, hi, bit / 8, bit % 8);
		if (b->pre_m) {
			uint64_t pos = flat_of(p)->line_pre ? line + bfi_pre_bit(z) : bfi_reduce(z, b->pre_m);
			stripe_bit(c->buf, lo, hi, b->pre_offset + pos / 8, pos % 8);
		}
	}
}

/* count_packed for a grouped run's block: its q rows of each group, by their bits. */
static void count_grouped(const uint8_t *buf, uint64_t lo, uint64_t hi, const struct bfi_block *b,
                          const struct rowmap *rm, uint64_t *ones)
{
	/* from the first row of the group the stripe begins in: those before end before it */
	uint64_t from = lo > b->rows_offset ? (lo - b->rows_offset) * 8 / rm->group_bits * rm->q : 0;
	for (uint64_t r = from; r < b->m; r++) {
		uint64_t bit = b->rows_offset * 8 + rowmap_bit(rm, r);
		if (bit / 8 + (b->n_sets + 7) / 8 + 1 <= lo)
			continue;
		if (bit / 8 >= hi)
			break; /* rows run forward through the groups */
		for (uint64_t x = 0; x < b->n_sets; x++, bit++)
			if (bit / 8 >= lo && bit / 8 < hi && (buf[bit / 8 - lo] >> (bit % 8) & 1))
				ones[x]++;
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

/* Each set's ones: flat counts them for the catalog whenever it is built. */
static void flat_count(const struct stripe_ctx *c, uint64_t lo, uint64_t hi)
{
	const struct plan *p = c->p;
	struct flat_plan *fl = flat_of(p);
	for (uint32_t bi = 0; bi < fl->n_blocks; bi++) {
		const struct bfi_block *b = &fl->blocks[bi];
		if (b->group)
			count_grouped(c->buf, lo, hi, b, &fl->rowmap[bi], p->ones + b->first_set);
		else if (bfi_rows_lined(b->row_bits))
			count_columns(c->buf, lo, hi, b->rows_offset, b->m, b->row_bits / 8,
			              p->ones + b->first_set);
		else
			count_packed(c->buf, lo, hi, b, p->ones + b->first_set);
	}
}

/*
 * The grouped run beginning at block b, *n blocks: each block filled into
 * the run's rows in memory, then written (through bg), when the budget
 * holds them: 0; else the run's rows in stripes: 1 once done. Or an error.
 */
static int fill_run(struct stripe_ctx *c, uint32_t b, struct bg_write *bg, uint32_t *n)
{
	const struct plan *p = c->p;
	struct flat_plan *fl = flat_of(p);
	uint64_t bytes = fl->rowmap[b].run_bytes;
	*n = fl->rowmap[b].run_n;
	int rc = bg_wait(bg);
	uint8_t *run = rc == 0 && bytes <= c->budget && bytes <= SIZE_MAX ? calloc((size_t)bytes, 1)
	                                                                  : NULL;
	for (uint32_t i = 0; run && rc == 0 && i < *n; i++)
		rc = fill_block(c->w, p, b + i, c->fd, c->sec_off, c->budget - bytes, NULL, run);
	c->done += bytes;
	if (run && rc == 0) {
		progress(c->w, "rows", c->done, c->total);
		return bg_start(bg, c->fd, run, (size_t)bytes, c->sec_off + fl->blocks[b].rows_offset);
	}
	free(run);
	if (rc < 0)
		return rc;
	/* too large for the budget: in stripes, a pass over the run's sets' keys each, which
	 * count the sets' ones again (blocks filled before one did not fit counted theirs) */
	const struct bfi_block *last = &fl->blocks[b + *n - 1];
	for (uint64_t j = fl->blocks[b].first_set; j < last->first_set + last->n_sets; j++)
		p->ones[j] = 0;
	rc = stripe_units(c, fl->blocks[b].rows_offset, fl->blocks[b].rows_offset + bytes, 64);
	return rc ? rc : 1;
}

/* Block by block: from its sets' own filters when it fits, else in stripes. */
static int flat_fill(struct stripe_ctx *c)
{
	const struct plan *p = c->p;
	struct flat_plan *fl = flat_of(p);
	if (c->w->given) /* compaction and merge: rows joined from other snapshots' */
		return fill_given(c->w, p, c->fd, c->sec_off, c->budget);
	int rc = 0;
	uint32_t n_sliced = 0, n_striped = 0;
	uint64_t largest = 0; /* of the blocks the budget could not hold */
	/* a block's rows written while the next fills, when the budget holds both */
	struct bg_write bg = {0};
	for (uint32_t b = 0; b < fl->n_blocks && rc == 0; b++) {
		const struct bfi_block *blk = &fl->blocks[b];
		rc = stripe_flush(c);
		c->start = c->end = blk->rows_offset;
		if (rc == 0 && blk->group) { /* a grouped run, whole: its first block */
			uint32_t n = 0;
			rc = fill_run(c, b, &bg, &n);
			if (rc == 1) { /* in stripes: said below, as a block's are */
				n_striped++;
				largest = fl->rowmap[b].run_bytes > largest ? fl->rowmap[b].run_bytes : largest;
				rc = 0;
			}
			b += n - 1;
			continue;
		}
		uint64_t held = bg_held(&bg);
		if (rc == 0)
			rc = held < c->budget
			         ? fill_block(c->w, p, b, c->fd, c->sec_off, c->budget - held, &bg, NULL)
			         : 1;
		if (rc == 1 && held) { /* not beside the write: after it, with the whole budget */
			rc = bg_wait(&bg);
			if (rc == 0)
				rc = fill_block(c->w, p, b, c->fd, c->sec_off, c->budget, &bg, NULL);
		}
		int sliced = rc == 1;
		if (sliced)
			rc = fill_block_sliced(c->w, p, b, c->fd, c->sec_off, c->budget);
		uint64_t rows = bfi_block_rows_bytes(blk->m, blk->row_bits);
		if (rc >= 0 && (sliced || rc == 1)) {
			n_sliced += rc == 0;
			n_striped += rc == 1;
			largest = rows > largest ? rows : largest;
		}
		if (rc == 0) {
			c->done += rows + (blk->pre_m ? bfi_bits_bytes(blk->pre_m) : 0);
			progress(c->w, sliced ? "rows from slices" : "rows", c->done, c->total);
			continue;
		}
		if (rc < 0)
			break;
		/* 1: too large for the budget, so in stripes; packed rows run on: any line may end one */
		rc = stripe_units(c, blk->rows_offset, blk->rows_offset + rows,
		                  bfi_rows_lined(blk->row_bits) ? blk->row_bits / 8 : 64);
		if (rc == 0 && blk->pre_m) /* the pre-filter is one unit */
			rc = stripe_units(c, blk->pre_offset, blk->pre_offset + bfi_bits_bytes(blk->pre_m),
			                  bfi_bits_bytes(blk->pre_m));
	}
	int rc2 = bg_wait(&bg);
	rc = rc ? rc : rc2;
	if (rc == 0 && (n_sliced || n_striped))
		writer_warn(c->w, "--memory %llu MiB cannot hold the rows of %u block%s (the largest "
		            "%llu MiB): %u filled from 64-set slices through a scratch file, %u in "
		            "stripes (a pass over the keys a stripe); a larger --memory fills them in "
		            "memory",
		            (unsigned long long)(c->w->opt.memory >> 20), n_sliced + n_striped,
		            n_sliced + n_striped == 1 ? "" : "s",
		            (unsigned long long)((largest + (1u << 20) - 1) >> 20), n_sliced, n_striped);
	return rc;
}

static uint64_t flat_size(const struct plan *p)
{
	return flat_of(p)->size;
}

static uint64_t flat_data(const struct plan *p)
{
	return flat_of(p)->blocks[0].rows_offset;
}

/* Does any flat block have a line pre-filter (format 2.2)? */
static int line_prefilters(const struct plan *p)
{
	struct flat_plan *fl = flat_of(p);
	for (uint32_t b = 0; fl->line_pre && b < fl->n_blocks; b++)
		if (fl->blocks[b].pre_m)
			return 1;
	return 0;
}

static int flat_descriptor(int fd, const struct plan *p, uint64_t off)
{
	struct flat_plan *fl = flat_of(p);
	uint64_t len = BFI_FLAT_DESC_SIZE + (uint64_t)fl->n_blocks * BFI_BLOCK_ENTRY_SIZE;
	uint8_t *d = calloc(1, (size_t)len);
	if (d == NULL)
		return -ENOMEM;
	struct bfi_flat_desc fd_ = {p->n, p->k, BFI_HASH_XXH3_MIX, fl->n_blocks, 0, BFI_FLAT_DESC_SIZE};
	fd_.flags = line_prefilters(p) ? BFI_FLATF_LINE_PRE : 0;
	for (uint32_t j = 0; j < p->n && !(fd_.flags & BFI_FLATF_SIZE_ORDER); j++)
		fd_.flags |= p->old_of_new[j] != j ? BFI_FLATF_SIZE_ORDER : 0;
	bfi_flat_desc_encode(d, &fd_);
	for (uint32_t b = 0; b < fl->n_blocks; b++)
		bfi_block_encode(d + BFI_FLAT_DESC_SIZE + (uint64_t)b * BFI_BLOCK_ENTRY_SIZE, &fl->blocks[b]);
	int rc = pwrite_all(fd, d, (size_t)len, off);
	free(d);
	return rc;
}

static uint64_t flat_widest(const struct plan *p)
{
	struct flat_plan *fl = flat_of(p);
	uint64_t m = 0;
	for (uint32_t b = 0; b < fl->n_blocks; b++)
		m = fl->blocks[b].m > m ? fl->blocks[b].m : m;
	return m;
}

/* Each block's pre-filter's width, from the union of its sets. */
static unsigned flat_wants(const struct bfi_build_options *o, int alone)
{
	(void)alone;
	return o->prefilter != BFI_PREFILTER_NEVER ? WANT_HLL : 0;
}

static void flat_free(void *own)
{
	struct flat_plan *f = own;
	free(f->block_of);
	free(f->blocks);
	free(f->given_block);
	free(f->given_skip);
	free(f->rowmap);
}

/* The blocks (block_of is counted with the plan's orders). */
static uint64_t flat_held(const struct plan *p)
{
	return flat_of(p)->n_blocks * sizeof(struct bfi_block);
}

/*
 * The largest block's rows, pre-filter and 64 filters: what fill_block
 * holds, which the spool gives back its half of the budget for; else a
 * small budget left the rows 2 MiB, and a block was filled in stripes,
 * each a pass over every key.
 */
static uint64_t flat_need(const struct plan *p)
{
	struct flat_plan *fl = flat_of(p);
	uint64_t need = 0;
	for (uint32_t b = 0; b < fl->n_blocks; b++) {
		const struct bfi_block *blk = &fl->blocks[b];
		uint64_t bytes = bfi_block_rows_bytes(blk->m, blk->row_bits) +
		                 (blk->pre_m ? bfi_bits_bytes(blk->pre_m) : 0) + 64 * ((blk->m + 63) / 64) * 8;
		need = bytes > need ? bytes : need;
	}
	return need;
}

static void flat_summary(const struct plan *p, struct bfi_build_summary *s)
{
	s->blocks = flat_of(p)->n_blocks;
}

/* A join's columns (flat_copy.c). */
static int flat_given(const bfi_writer *w)
{
	return w->given != NULL;
}

/* A join's columns from a segment's flat blocks (layout.h). */
static int flat_columns(const bfi_snapshot *seg, struct join_columns *c)
{
	struct bfi_layout_info li;
	int rc = bfi_layout_info(seg, BFI_LAYOUT_FLAT, &li);
	if (rc == 0)
		*c = (struct join_columns){li.u.flat.blocks, li.hashes, li.u.flat.line_prefilters};
	return rc;
}

static int flat_column_block(const bfi_snapshot *seg, uint32_t b, struct bfi_block_info *bi,
                             const uint8_t **rows, uint64_t *bytes, const uint8_t **pre,
                             uint8_t **owned)
{
	if (owned)
		*owned = NULL;
	int rc = bfi_block(seg, b, bi);
	if (rc || rows == NULL)
		return rc;
	if (bfi_block_rows(seg, b, rows, bytes, pre) == 0)
		return 0;
	/* a block of a grouped run has no view in place: its rows as bfi_block_rows would show them */
	uint64_t bits = bi->bits * bi->row_bits + 64;
	*bytes = (bits + 511) / 512 * 64;
	if ((*owned = malloc((size_t)*bytes)) == NULL)
		return -ENOMEM;
	*rows = *owned;
	*pre = NULL;
	return bfi_block_unpack(seg, b, *owned, *bytes);
}

const struct wlayout flat_layout = {
    .row = BFI_ROW_FLAT,
    .plan_rank = 0,
    .what = "row stripes",
    .wants = flat_wants,
    .plan = plan_flat,
    .free = flat_free,
    .held = flat_held,
    .need = flat_need,
    .size = flat_size,
    .data = flat_data,
    .filter_bit = flat_filter_bit,
    .key = flat_key,
    .count = flat_count,
    .fill = flat_fill,
    .descriptor = flat_descriptor,
    .widest = flat_widest,
    .summary = flat_summary,
    .given = flat_given,
    .columns = flat_columns,
    .column_block = flat_column_block,
};
