/* rambo.c - the RAMBO section (spec/format.md, "RAMBO section"): its descriptor and repetition table, their placing, and their checks. */
#include <stddef.h>
#include <string.h>

#include "bfi_error.h"
#include "fields.h"
#include "format.h"
#include "layouts.h"

static const struct field rambo_fields[] = {
	FIELD(struct bfi_rambo_desc, n_sets, 0),        FIELD(struct bfi_rambo_desc, k, 8),
	FIELD(struct bfi_rambo_desc, hash_id, 12),      FIELD(struct bfi_rambo_desc, reps, 16),
	FIELD(struct bfi_rambo_desc, partition_id, 20), FIELD(struct bfi_rambo_desc, cells, 24),
	FIELD(struct bfi_rambo_desc, shards, 32),       FIELD(struct bfi_rambo_desc, flags, 36),
	FIELD(struct bfi_rambo_desc, table_offset, 40),
};
static const struct field rep_fields[] = {
	FIELD(struct bfi_rep, m, 0),               FIELD(struct bfi_rep, row_bytes, 8),
	FIELD(struct bfi_rep, rows_offset, 16),    FIELD(struct bfi_rep, starts_offset, 24),
	FIELD(struct bfi_rep, members_offset, 32), FIELD(struct bfi_rep, cell_of_offset, 40),
};

void bfi_rambo_desc_encode(uint8_t out[BFI_RAMBO_DESC_SIZE], const struct bfi_rambo_desc *d)
{
	ENCODE(out, BFI_RAMBO_DESC_SIZE, rambo_fields, d);
}

void bfi_rep_encode(uint8_t out[BFI_REP_ENTRY_SIZE], const struct bfi_rep *r)
{
	ENCODE(out, BFI_REP_ENTRY_SIZE, rep_fields, r);
}

static int add_bytes(uint64_t *off, uint64_t n)
{
	return __builtin_add_overflow(*off, bfi_align_up(n, 64), off);
}

/* Rows, cell starts, members and cell-of table of one repetition, in order. */
static int place_rep(struct bfi_rep *r, uint64_t n_sets, uint64_t cells, uint64_t *off)
{
	uint64_t rows;
	if (__builtin_mul_overflow(r->m, r->row_bytes, &rows))
		return -1;
	r->rows_offset = *off;
	if (add_bytes(off, rows))
		return -1;
	r->starts_offset = *off;
	if (add_bytes(off, (cells + 1) * 4))
		return -1;
	r->members_offset = *off;
	if (add_bytes(off, n_sets * 4))
		return -1;
	r->cell_of_offset = *off;
	return add_bytes(off, n_sets * 4);
}

uint64_t bfi_rambo_layout(struct bfi_rep *reps, uint32_t n_reps, uint64_t n_sets, uint64_t cells,
                          unsigned minor)
{
	uint64_t off = BFI_RAMBO_DESC_SIZE + (uint64_t)n_reps * BFI_REP_ENTRY_SIZE;
	for (uint32_t i = 0; i < n_reps; i++) {
		reps[i].row_bytes = bfi_cell_row_bytes(cells, minor);
		if (place_rep(&reps[i], n_sets, cells, &off))
			return 0;
	}
	return off;
}

int bfi_rambo_decode(const uint8_t *in, uint64_t size, unsigned minor, struct bfi_rambo_desc *d,
                     struct bfi_rep *reps, struct bfi_where *where)
{
	*where = (struct bfi_where){0, BFI_RAMBO_DESC_SIZE, "rambo descriptor"};
	if (size < BFI_RAMBO_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	if (!DECODE(in, BFI_RAMBO_DESC_SIZE, rambo_fields, d) || (d->flags & ~BFI_RAMBO_SHARED_PROBES))
		return BFI_E_RESERVED;
	if (d->hash_id != BFI_HASH_XXH3_MIX || d->partition_id != BFI_PARTITION_XXH3)
		return BFI_E_INCOMPAT;
	if (d->n_sets == 0 || d->n_sets > BFI_MAX_SETS || d->k == 0 || d->k > BFI_MAX_K ||
	    d->reps == 0 || d->reps > BFI_MAX_REPS || d->cells < 1 || d->cells > BFI_MAX_CELLS ||
	    d->shards == 0 || d->cells % d->shards != 0 || d->table_offset != BFI_RAMBO_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	uint64_t off = BFI_RAMBO_DESC_SIZE + (uint64_t)d->reps * BFI_REP_ENTRY_SIZE;
	if (off > size)
		return BFI_E_BAD_LAYOUT;
	for (uint32_t i = 0; i < d->reps; i++) {
		const uint8_t *e = in + BFI_RAMBO_DESC_SIZE + (uint64_t)i * BFI_REP_ENTRY_SIZE;
		struct bfi_rep r;
		*where = (struct bfi_where){(uint64_t)(e - in), BFI_REP_ENTRY_SIZE, "rambo repetition entry"};
		if (!DECODE(e, BFI_REP_ENTRY_SIZE, rep_fields, &r))
			return BFI_E_RESERVED;
		if (r.m == 0 || r.m > BFI_MAX_BITS || r.row_bytes != bfi_cell_row_bytes(d->cells, minor))
			return BFI_E_BAD_LAYOUT;
		struct bfi_rep want = r;
		if (place_rep(&want, d->n_sets, d->cells, &off) || off > size ||
		    memcmp(&want, &r, sizeof r) != 0)
			return BFI_E_BAD_LAYOUT;
		if (reps)
			reps[i] = r;
	}
	*where = (struct bfi_where){0, BFI_RAMBO_DESC_SIZE, "rambo descriptor"};
	return off == size ? 0 : BFI_E_BAD_LAYOUT;
}

/* Its descriptor and repetition table: 64 bytes and reps entries. */
uint64_t bfi_rambo_head(const uint8_t desc[64])
{
	return 64 + (uint64_t)bfi_get32(desc + 16) * BFI_REP_ENTRY_SIZE;
}
