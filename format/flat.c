/* flat.c - the flat section (spec/format.md, "Flat section"): its descriptor and block table, their packing, and their checks. */
#include <stddef.h>
#include <string.h>

#include "bfi_error.h"
#include "fields.h"
#include "format.h"
#include "layouts.h"

static const struct field flat_fields[] = {
	FIELD(struct bfi_flat_desc, n_sets, 0),   FIELD(struct bfi_flat_desc, k, 8),
	FIELD(struct bfi_flat_desc, hash_id, 12), FIELD(struct bfi_flat_desc, n_blocks, 16),
	FIELD(struct bfi_flat_desc, flags, 20),   FIELD(struct bfi_flat_desc, table_offset, 24),
};
static const struct field block_fields[] = {
	FIELD(struct bfi_block, first_set, 0),    FIELD(struct bfi_block, n_sets, 8),
	FIELD(struct bfi_block, m, 16),           FIELD(struct bfi_block, row_bits, 24),
	FIELD(struct bfi_block, rows_offset, 32), FIELD(struct bfi_block, pre_m, 40),
	FIELD(struct bfi_block, pre_offset, 48),  FIELD(struct bfi_block, group, 56),
};

void bfi_flat_desc_encode(uint8_t out[BFI_FLAT_DESC_SIZE], const struct bfi_flat_desc *d)
{
	ENCODE(out, BFI_FLAT_DESC_SIZE, flat_fields, d);
}

void bfi_block_encode(uint8_t out[BFI_BLOCK_ENTRY_SIZE], const struct bfi_block *b)
{
	ENCODE(out, BFI_BLOCK_ENTRY_SIZE, block_fields, b);
}

/* Can b be a block of a grouped run (whatever the others)? Its q, or 0. */
static uint64_t group_q(const struct bfi_block *b)
{
	uint64_t q = b->group & BFI_GROUP_Q_MASK;
	if ((b->group & ~(BFI_GROUP_FIRST | BFI_GROUP_Q_MASK)) || q == 0 || b->n_sets == 0 ||
	    b->n_sets > BFI_GROUP_MAX_SETS || b->row_bits != b->n_sets || b->pre_m || b->m % q)
		return 0;
	return q;
}

/* A run of groups groups whose blocks' rows take used bits a group: its group_bits and bytes. */
static int run_size(uint64_t groups, uint64_t used, uint64_t *group_bits, uint64_t *bytes)
{
	if (used > UINT64_MAX - 511)
		return -1;
	*group_bits = (used + 511) / 512 * 512;
	return __builtin_mul_overflow(groups, *group_bits / 8, bytes) ||
	       __builtin_add_overflow(*bytes, 64, bytes) ? -1 : 0;
}

int bfi_group_run(const struct bfi_block *blocks, uint32_t n_blocks, uint32_t i, uint32_t *n,
                  uint64_t *groups, uint64_t *group_bits, uint64_t *bytes)
{
	if (i >= n_blocks || !(blocks[i].group & BFI_GROUP_FIRST))
		return -1;
	uint64_t used = 0, g = 0;
	uint32_t e = i;
	for (; e < n_blocks && blocks[e].group && (e == i || !(blocks[e].group & BFI_GROUP_FIRST));
	     e++) {
		const struct bfi_block *b = &blocks[e];
		uint64_t q = group_q(b), rows;
		/* m = G q with one G for the run */
		if (q == 0 || (e > i && b->m / q != g) || __builtin_mul_overflow(q, b->row_bits, &rows) ||
		    __builtin_add_overflow(used, rows, &used))
			return -1;
		g = b->m / q;
	}
	if (run_size(g, used, group_bits, bytes))
		return -1;
	*n = e - i;
	*groups = g;
	return 0;
}

/* rows and pre-filter of block b start where the previous one ended */
static int place_block(struct bfi_block *b, uint64_t *off)
{
	uint64_t rows = bfi_block_rows_bytes(b->m, b->row_bits), pre = bfi_bits_bytes(b->pre_m);
	if (rows == 0)
		return -1;
	b->rows_offset = *off;
	if (__builtin_add_overflow(*off, rows, off))
		return -1;
	b->pre_offset = b->pre_m ? *off : 0;
	if (__builtin_add_overflow(*off, b->pre_m ? pre : 0, off))
		return -1;
	return 0;
}

/*
 * Block i's rows and pre-filter where the previous ended; a grouped run's
 * blocks all at the run's rows, which are placed at its first. *i moves
 * past the blocks placed.
 */
static int place_next(struct bfi_block *blocks, uint32_t n_blocks, uint32_t *i, uint64_t *off)
{
	if (blocks[*i].group == 0)
		return place_block(&blocks[(*i)++], off);
	uint32_t n;
	uint64_t groups, group_bits, bytes, at = *off;
	if (bfi_group_run(blocks, n_blocks, *i, &n, &groups, &group_bits, &bytes) ||
	    __builtin_add_overflow(*off, bytes, off))
		return -1;
	for (uint32_t e = *i + n; *i < e; (*i)++) {
		blocks[*i].rows_offset = at;
		blocks[*i].pre_offset = 0;
	}
	return 0;
}

uint64_t bfi_flat_layout(struct bfi_block *blocks, uint32_t n_blocks)
{
	uint64_t off = BFI_FLAT_DESC_SIZE + (uint64_t)n_blocks * BFI_BLOCK_ENTRY_SIZE;
	for (uint32_t i = 0; i < n_blocks;)
		if (place_next(blocks, n_blocks, &i, &off))
			return 0;
	return off;
}

int bfi_flat_decode(const uint8_t *in, uint64_t size, struct bfi_flat_desc *d,
                    struct bfi_block *blocks, struct bfi_where *where)
{
	*where = (struct bfi_where){0, BFI_FLAT_DESC_SIZE, "flat descriptor"};
	if (size < BFI_FLAT_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	if (!DECODE(in, BFI_FLAT_DESC_SIZE, flat_fields, d) || (d->flags & ~BFI_FLATF_KNOWN))
		return BFI_E_RESERVED;
	if (d->hash_id != BFI_HASH_XXH3_MIX)
		return BFI_E_INCOMPAT;
	if (d->n_sets == 0 || d->n_sets > BFI_MAX_SETS || d->k == 0 || d->k > BFI_MAX_K ||
	    d->n_blocks == 0 || d->n_blocks > BFI_MAX_BLOCKS || d->n_blocks > d->n_sets ||
	    d->table_offset != BFI_FLAT_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	uint64_t off = BFI_FLAT_DESC_SIZE + (uint64_t)d->n_blocks * BFI_BLOCK_ENTRY_SIZE;
	if (off > size)
		return BFI_E_BAD_LAYOUT;
	uint64_t next_set = 0;
	/* a grouped run being read: where its rows start, its G, its rows' bits a group */
	uint64_t run_at = 0, run_g = 0, run_used = 0, gb, bytes;
	int in_run = 0;
	for (uint32_t i = 0; i < d->n_blocks; i++) {
		const uint8_t *e = in + BFI_FLAT_DESC_SIZE + (uint64_t)i * BFI_BLOCK_ENTRY_SIZE;
		struct bfi_block b;
		*where = (struct bfi_where){(uint64_t)(e - in), BFI_BLOCK_ENTRY_SIZE, "flat block entry"};
		if (!DECODE(e, BFI_BLOCK_ENTRY_SIZE, block_fields, &b))
			return BFI_E_RESERVED;
		if (b.first_set != next_set || b.n_sets == 0 || b.n_sets > d->n_sets - next_set ||
		    b.m == 0 || b.m > BFI_MAX_BITS || !bfi_row_bits_ok(b.n_sets, b.row_bits) ||
		    b.pre_m > BFI_MAX_BITS ||
		    ((d->flags & BFI_FLATF_LINE_PRE) && b.pre_m % BFI_PRE_LINE_BITS))
			return BFI_E_BAD_LAYOUT;
		/* a run ends where a block begins another or is not grouped: its rows are placed */
		if (in_run && (b.group == 0 || (b.group & BFI_GROUP_FIRST))) {
			if (run_size(run_g, run_used, &gb, &bytes) ||
			    __builtin_add_overflow(run_at, bytes, &off) || off > size)
				return BFI_E_BAD_LAYOUT;
			in_run = 0;
		}
		if (b.group & ~(BFI_GROUP_FIRST | BFI_GROUP_Q_MASK))
			return BFI_E_RESERVED;
		if (b.group) {
			uint64_t q = group_q(&b), rows;
			if (q == 0 || (!in_run && !(b.group & BFI_GROUP_FIRST)))
				return BFI_E_BAD_LAYOUT;
			if (!in_run) {
				in_run = 1;
				run_at = off;
				run_g = b.m / q;
				run_used = 0;
			}
			if (b.m / q != run_g || __builtin_mul_overflow(q, b.row_bits, &rows) ||
			    __builtin_add_overflow(run_used, rows, &run_used) || b.rows_offset != run_at ||
			    b.pre_offset != 0)
				return BFI_E_BAD_LAYOUT;
		} else {
			struct bfi_block want = b;
			if (place_block(&want, &off) || want.rows_offset != b.rows_offset ||
			    want.pre_offset != b.pre_offset || off > size)
				return BFI_E_BAD_LAYOUT;
		}
		next_set += b.n_sets;
		if (blocks)
			blocks[i] = b;
	}
	if (in_run && (run_size(run_g, run_used, &gb, &bytes) ||
	               __builtin_add_overflow(run_at, bytes, &off) || off > size))
		return BFI_E_BAD_LAYOUT;
	*where = (struct bfi_where){0, BFI_FLAT_DESC_SIZE, "flat descriptor"};
	if (next_set != d->n_sets || off != size)
		return BFI_E_BAD_LAYOUT;
	return 0;
}

/* Its descriptor and block table: 64 bytes and n_blocks entries. */
uint64_t bfi_flat_head(const uint8_t desc[64])
{
	return 64 + (uint64_t)bfi_get32(desc + 16) * BFI_BLOCK_ENTRY_SIZE;
}
