/* tree.c - the tree section (spec/format.md, "Tree section"): its descriptor and level table, the tree's shape, and their checks. */
#include <stddef.h>
#include <string.h>

#include "bfi_error.h"
#include "fields.h"
#include "format.h"
#include "layouts.h"

static const struct field tree_fields[] = {
	FIELD(struct bfi_tree_desc, n_sets, 0),          FIELD(struct bfi_tree_desc, k, 8),
	FIELD(struct bfi_tree_desc, hash_id, 12),        FIELD(struct bfi_tree_desc, fanout, 16),
	FIELD(struct bfi_tree_desc, levels, 20),         FIELD(struct bfi_tree_desc, table_offset, 24),
	FIELD(struct bfi_tree_desc, pre_m, 32),          FIELD(struct bfi_tree_desc, pre_offset, 40),
	FIELD(struct bfi_tree_desc, flags, 48),          FIELD(struct bfi_tree_desc, dropped_levels, 52),
	FIELD(struct bfi_tree_desc, dropped_nodes, 56),
};
static const struct field level_fields[] = {
	FIELD(struct bfi_level, nodes, 0),        FIELD(struct bfi_level, m, 8),
	FIELD(struct bfi_level, row_bytes, 16),   FIELD(struct bfi_level, rows_offset, 24),
	FIELD(struct bfi_level, groups_offset, 32),
};

void bfi_tree_desc_encode(uint8_t out[BFI_TREE_DESC_SIZE], const struct bfi_tree_desc *d)
{
	ENCODE(out, BFI_TREE_DESC_SIZE, tree_fields, d);
}

void bfi_level_encode(uint8_t out[BFI_LEVEL_ENTRY_SIZE], const struct bfi_level *l)
{
	ENCODE(out, BFI_LEVEL_ENTRY_SIZE, level_fields, l);
}

uint32_t bfi_tree_shape(uint64_t n_sets, uint32_t fanout, uint64_t nodes[BFI_MAX_LEVELS])
{
	uint32_t n = 0;
	uint64_t at = n_sets;
	for (;;) {
		if (n == BFI_MAX_LEVELS)
			return 0;
		nodes[n++] = at;
		if (at <= fanout)
			return n;
		at = (at + fanout - 1) / fanout;
	}
}

uint64_t bfi_tree_layout(struct bfi_level *levels, uint32_t n_levels, struct bfi_tree_desc *d)
{
	uint64_t off = BFI_TREE_DESC_SIZE + (uint64_t)n_levels * BFI_LEVEL_ENTRY_SIZE, rows;
	for (uint32_t i = 0; i < n_levels; i++) {
		levels[i].row_bytes = bfi_rambo_row_bytes(levels[i].nodes);
		levels[i].rows_offset = off;
		if (__builtin_mul_overflow(levels[i].m, levels[i].row_bytes, &rows) ||
		    __builtin_add_overflow(off, bfi_align_up(rows, 64), &off))
			return 0;
		levels[i].groups_offset = 0;
		if (i > 0 && (d->flags & BFI_TREE_EXPLICIT)) {
			levels[i].groups_offset = off;
			if (__builtin_add_overflow(off, bfi_align_up((levels[i].nodes + 1) * 4, 64), &off))
				return 0;
		}
	}
	d->pre_offset = d->pre_m ? off : 0;
	if (d->pre_m && __builtin_add_overflow(off, bfi_bits_bytes(d->pre_m), &off))
		return 0;
	return off;
}

int bfi_tree_decode(const uint8_t *in, uint64_t size, struct bfi_tree_desc *d,
                    struct bfi_level *levels, struct bfi_where *where)
{
	*where = (struct bfi_where){0, BFI_TREE_DESC_SIZE, "tree descriptor"};
	if (size < BFI_TREE_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	int reserved_zero = DECODE(in, BFI_TREE_DESC_SIZE, tree_fields, d);
	int explicit = (d->flags & BFI_TREE_EXPLICIT) != 0;
	if (!reserved_zero || (d->flags & ~(BFI_TREE_EXPLICIT | BFI_TREE_LINE_PRE)) ||
	    (!explicit && (d->dropped_levels || d->dropped_nodes)))
		return BFI_E_RESERVED;
	if (d->dropped_levels > BFI_MAX_LEVELS || d->dropped_nodes > BFI_MAX_SETS)
		return BFI_E_BAD_LAYOUT;
	if (d->pre_m > BFI_MAX_BITS ||
	    ((d->flags & BFI_TREE_LINE_PRE) && (d->pre_m == 0 || d->pre_m % 512)))
		return BFI_E_BAD_LAYOUT;
	if (d->hash_id != BFI_HASH_XXH3_MIX)
		return BFI_E_INCOMPAT;
	uint64_t shape[BFI_MAX_LEVELS];
	if (d->n_sets == 0 || d->n_sets > BFI_MAX_SETS || d->k == 0 || d->k > BFI_MAX_K ||
	    d->fanout < 2 || d->fanout > 64 ||
	    d->table_offset != BFI_TREE_DESC_SIZE || d->levels == 0 || d->levels > BFI_MAX_LEVELS)
		return BFI_E_BAD_LAYOUT;
	if (!explicit && ((d->fanout & (d->fanout - 1)) ||
	                  bfi_tree_shape(d->n_sets, d->fanout, shape) < d->levels))
		return BFI_E_BAD_LAYOUT;
	uint64_t off = BFI_TREE_DESC_SIZE + (uint64_t)d->levels * BFI_LEVEL_ENTRY_SIZE, rows, prev = 0;
	if (off > size)
		return BFI_E_BAD_LAYOUT;
	for (uint32_t i = 0; i < d->levels; i++) {
		const uint8_t *e = in + BFI_TREE_DESC_SIZE + (uint64_t)i * BFI_LEVEL_ENTRY_SIZE;
		struct bfi_level l;
		*where = (struct bfi_where){(uint64_t)(e - in), BFI_LEVEL_ENTRY_SIZE, "tree level entry"};
		if (!DECODE(e, BFI_LEVEL_ENTRY_SIZE, level_fields, &l))
			return BFI_E_RESERVED;
		/* explicit: N leaves, then any count from 1 to the level below's */
		uint64_t want = explicit ? (i == 0 ? d->n_sets : l.nodes) : shape[i];
		if (l.nodes != want || l.nodes == 0 || (i > 0 && l.nodes > prev) || l.m == 0 ||
		    l.m > BFI_MAX_BITS || l.row_bytes != bfi_rambo_row_bytes(l.nodes) ||
		    l.rows_offset != off || __builtin_mul_overflow(l.m, l.row_bytes, &rows) ||
		    __builtin_add_overflow(off, bfi_align_up(rows, 64), &off) || off > size)
			return BFI_E_BAD_LAYOUT;
		if (explicit && i > 0) {
			/* nodes + 1 u32 child-group starts; their values are checked where read */
			if (l.groups_offset != off ||
			    __builtin_add_overflow(off, bfi_align_up((l.nodes + 1) * 4, 64), &off) ||
			    off > size)
				return BFI_E_BAD_LAYOUT;
		} else if (l.groups_offset != 0) {
			return BFI_E_BAD_LAYOUT;
		}
		prev = l.nodes;
		if (levels)
			levels[i] = l;
	}
	*where = (struct bfi_where){0, BFI_TREE_DESC_SIZE, "tree descriptor"};
	if (d->pre_offset != (d->pre_m ? off : 0))
		return BFI_E_BAD_LAYOUT;
	if (d->pre_m && (__builtin_add_overflow(off, bfi_bits_bytes(d->pre_m), &off) || off > size))
		return BFI_E_BAD_LAYOUT;
	return off == size ? 0 : BFI_E_BAD_LAYOUT;
}

/* Its descriptor and level table: 64 bytes and levels entries. */
uint64_t bfi_tree_head(const uint8_t desc[64])
{
	return 64 + (uint64_t)bfi_get32(desc + 20) * BFI_LEVEL_ENTRY_SIZE;
}
