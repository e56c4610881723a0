/* format.c - encode and check the fixed structures of spec/format.md. */
#include <xxhash.h>

#include "bfi_error.h"
#include "format.h"

uint64_t bfi_checksum64(const void *p, size_t len)
{
	return XXH3_64bits(len ? p : "", len);
}

void bfi_digest128(const void *p, size_t len, uint8_t out[16])
{
	XXH128_hash_t h = XXH3_128bits(len ? p : "", len);
	bfi_put64(out, h.low64);
	bfi_put64(out + 8, h.high64);
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

void bfi_header_encode(uint8_t out[BFI_HEADER_SIZE], const struct bfi_header *h)
{
	memset(out, 0, BFI_HEADER_SIZE);
	memcpy(out + BFI_H_MAGIC, BFI_MAGIC, BFI_MAGIC_LEN);
	bfi_put16(out + BFI_H_MAJOR, h->major);
	bfi_put16(out + BFI_H_MINOR, h->minor);
	bfi_put32(out + BFI_H_HEADER_SIZE, BFI_HEADER_SIZE);
	bfi_put64(out + BFI_H_COMPAT, h->compat);
	bfi_put64(out + BFI_H_INCOMPAT, h->incompat);
	bfi_put64(out + BFI_H_FILE_SIZE, h->file_size);
	bfi_put64(out + BFI_H_TABLE_OFFSET, h->table_offset);
	bfi_put32(out + BFI_H_SECTION_COUNT, h->section_count);
	bfi_put32(out + BFI_H_ENTRY_SIZE, BFI_ENTRY_SIZE);
	memcpy(out + BFI_H_SNAPSHOT_ID, h->snapshot_id, 16);
	memcpy(out + BFI_H_CATALOG_DIGEST, h->catalog_digest, 16);
	bfi_put64(out + BFI_H_CATALOG_SIZE, h->catalog_size);
	bfi_put64(out + BFI_H_TABLE_CHECKSUM, h->table_checksum);
	bfi_put64(out + BFI_H_CHECKSUM, bfi_checksum64(out, BFI_H_CHECKSUM));
}

int bfi_header_decode(const uint8_t in[BFI_HEADER_SIZE], struct bfi_header *h)
{
	if (memcmp(in + BFI_H_MAGIC, BFI_MAGIC, BFI_MAGIC_LEN) != 0)
		return BFI_E_BAD_MAGIC;
	/* Version before checksum: a future major may checksum differently. */
	h->major = bfi_get16(in + BFI_H_MAJOR);
	h->minor = bfi_get16(in + BFI_H_MINOR);
	if (h->major != BFI_VERSION_MAJOR || h->minor > BFI_VERSION_MINOR)
		return BFI_E_VERSION;
	if (bfi_get64(in + BFI_H_CHECKSUM) != bfi_checksum64(in, BFI_H_CHECKSUM))
		return BFI_E_HEADER_CHECKSUM;
	if (bfi_get32(in + BFI_H_HEADER_SIZE) != BFI_HEADER_SIZE ||
	    bfi_get32(in + BFI_H_ENTRY_SIZE) != BFI_ENTRY_SIZE)
		return BFI_E_BAD_SECTION;
	h->compat = bfi_get64(in + BFI_H_COMPAT);
	h->incompat = bfi_get64(in + BFI_H_INCOMPAT);
	if (h->incompat & ~BFI_KNOWN_INCOMPAT)
		return BFI_E_INCOMPAT;
	if (!all_zero(in + BFI_H_RESERVED, BFI_H_RESERVED_LEN))
		return BFI_E_RESERVED;
	h->file_size = bfi_get64(in + BFI_H_FILE_SIZE);
	h->table_offset = bfi_get64(in + BFI_H_TABLE_OFFSET);
	h->section_count = bfi_get32(in + BFI_H_SECTION_COUNT);
	memcpy(h->snapshot_id, in + BFI_H_SNAPSHOT_ID, 16);
	memcpy(h->catalog_digest, in + BFI_H_CATALOG_DIGEST, 16);
	h->catalog_size = bfi_get64(in + BFI_H_CATALOG_SIZE);
	h->table_checksum = bfi_get64(in + BFI_H_TABLE_CHECKSUM);
	if (h->table_offset != BFI_HEADER_SIZE || h->section_count == 0 ||
	    h->section_count > BFI_MAX_SECTIONS)
		return BFI_E_BAD_SECTION;
	return 0;
}

void bfi_section_encode(uint8_t out[BFI_ENTRY_SIZE], const struct bfi_section *s)
{
	memset(out, 0, BFI_ENTRY_SIZE);
	bfi_put32(out + 0, s->kind);
	bfi_put16(out + 4, s->encoding);
	bfi_put16(out + 6, s->flags);
	bfi_put64(out + 8, s->offset);
	bfi_put64(out + 16, s->stored_size);
	bfi_put64(out + 24, s->size);
	bfi_put64(out + 32, s->checksum);
}

int bfi_section_decode(const uint8_t in[BFI_ENTRY_SIZE], struct bfi_section *s)
{
	s->kind = bfi_get32(in + 0);
	s->encoding = bfi_get16(in + 4);
	s->flags = bfi_get16(in + 6);
	s->offset = bfi_get64(in + 8);
	s->stored_size = bfi_get64(in + 16);
	s->size = bfi_get64(in + 24);
	s->checksum = bfi_get64(in + 32);
	if (!all_zero(in + 40, BFI_ENTRY_SIZE - 40) || (s->flags & ~BFI_SECF_KNOWN))
		return BFI_E_RESERVED;
	if (s->offset % BFI_SECTION_ALIGN != 0)
		return BFI_E_BAD_SECTION;
	if (s->encoding == BFI_ENC_RAW && s->size != s->stored_size)
		return BFI_E_BAD_SECTION;
	return 0;
}

void bfi_flat_desc_encode(uint8_t out[BFI_FLAT_DESC_SIZE], const struct bfi_flat_desc *d)
{
	memset(out, 0, BFI_FLAT_DESC_SIZE);
	bfi_put64(out + 0, d->n_sets);
	bfi_put32(out + 8, d->k);
	bfi_put32(out + 12, d->hash_id);
	bfi_put32(out + 16, d->n_blocks);
	bfi_put32(out + 20, d->flags);
	bfi_put64(out + 24, d->table_offset);
}

void bfi_block_encode(uint8_t out[BFI_BLOCK_ENTRY_SIZE], const struct bfi_block *b)
{
	memset(out, 0, BFI_BLOCK_ENTRY_SIZE);
	bfi_put64(out + 0, b->first_set);
	bfi_put64(out + 8, b->n_sets);
	bfi_put64(out + 16, b->m);
	bfi_put64(out + 24, b->row_bits);
	bfi_put64(out + 32, b->rows_offset);
	bfi_put64(out + 40, b->pre_m);
	bfi_put64(out + 48, b->pre_offset);
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

uint64_t bfi_flat_layout(struct bfi_block *blocks, uint32_t n_blocks)
{
	uint64_t off = BFI_FLAT_DESC_SIZE + (uint64_t)n_blocks * BFI_BLOCK_ENTRY_SIZE;
	for (uint32_t i = 0; i < n_blocks; i++)
		if (place_block(&blocks[i], &off))
			return 0;
	return off;
}

int bfi_flat_decode(const uint8_t *in, uint64_t size, struct bfi_flat_desc *d,
                    struct bfi_block *blocks, uint64_t *bad_off)
{
	*bad_off = 0;
	if (size < BFI_FLAT_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	d->n_sets = bfi_get64(in + 0);
	d->k = bfi_get32(in + 8);
	d->hash_id = bfi_get32(in + 12);
	d->n_blocks = bfi_get32(in + 16);
	d->flags = bfi_get32(in + 20);
	d->table_offset = bfi_get64(in + 24);
	if (!all_zero(in + 32, BFI_FLAT_DESC_SIZE - 32) || (d->flags & ~BFI_FLATF_KNOWN))
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
	for (uint32_t i = 0; i < d->n_blocks; i++) {
		const uint8_t *e = in + BFI_FLAT_DESC_SIZE + (uint64_t)i * BFI_BLOCK_ENTRY_SIZE;
		struct bfi_block b = {bfi_get64(e), bfi_get64(e + 8), bfi_get64(e + 16),
		                      bfi_get64(e + 24), bfi_get64(e + 32), bfi_get64(e + 40),
		                      bfi_get64(e + 48)};
		*bad_off = (uint64_t)(e - in);
		if (!all_zero(e + 56, BFI_BLOCK_ENTRY_SIZE - 56))
			return BFI_E_RESERVED;
		if (b.first_set != next_set || b.n_sets == 0 || b.n_sets > d->n_sets - next_set ||
		    b.m == 0 || b.m > BFI_MAX_BITS || !bfi_row_bits_ok(b.n_sets, b.row_bits) ||
		    b.pre_m > BFI_MAX_BITS ||
		    ((d->flags & BFI_FLATF_LINE_PRE) && b.pre_m % BFI_PRE_LINE_BITS))
			return BFI_E_BAD_LAYOUT;
		struct bfi_block want = b;
		if (place_block(&want, &off) || want.rows_offset != b.rows_offset ||
		    want.pre_offset != b.pre_offset || off > size)
			return BFI_E_BAD_LAYOUT;
		next_set += b.n_sets;
		if (blocks)
			blocks[i] = b;
	}
	*bad_off = 0;
	if (next_set != d->n_sets || off != size)
		return BFI_E_BAD_LAYOUT;
	return 0;
}

void bfi_plain_desc_encode(uint8_t out[BFI_PLAIN_DESC_SIZE], const struct bfi_plain_desc *d)
{
	memset(out, 0, BFI_PLAIN_DESC_SIZE);
	bfi_put64(out + 0, d->n_sets);
	bfi_put64(out + 8, d->m);
	bfi_put32(out + 16, d->k);
	bfi_put32(out + 20, d->hash_id);
	bfi_put64(out + 24, d->filter_bytes);
	bfi_put64(out + 32, d->filters_offset);
}

int bfi_plain_decode(const uint8_t *in, uint64_t size, struct bfi_plain_desc *d)
{
	if (size < BFI_PLAIN_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	d->n_sets = bfi_get64(in + 0);
	d->m = bfi_get64(in + 8);
	d->k = bfi_get32(in + 16);
	d->hash_id = bfi_get32(in + 20);
	d->filter_bytes = bfi_get64(in + 24);
	d->filters_offset = bfi_get64(in + 32);
	if (!all_zero(in + 40, BFI_PLAIN_DESC_SIZE - 40))
		return BFI_E_RESERVED;
	if (d->hash_id != BFI_HASH_XXH3_MIX)
		return BFI_E_INCOMPAT;
	uint64_t bytes;
	if (d->n_sets == 0 || d->n_sets > BFI_MAX_SETS || d->m == 0 || d->m > BFI_MAX_BITS ||
	    d->k == 0 || d->k > BFI_MAX_K || d->filter_bytes != bfi_word_bytes(d->m) ||
	    d->filters_offset != BFI_PLAIN_DESC_SIZE ||
	    __builtin_mul_overflow(d->n_sets, d->filter_bytes, &bytes) ||
	    size - BFI_PLAIN_DESC_SIZE != bytes)
		return BFI_E_BAD_LAYOUT;
	return 0;
}

void bfi_rambo_desc_encode(uint8_t out[BFI_RAMBO_DESC_SIZE], const struct bfi_rambo_desc *d)
{
	memset(out, 0, BFI_RAMBO_DESC_SIZE);
	bfi_put64(out + 0, d->n_sets);
	bfi_put32(out + 8, d->k);
	bfi_put32(out + 12, d->hash_id);
	bfi_put32(out + 16, d->reps);
	bfi_put32(out + 20, d->partition_id);
	bfi_put64(out + 24, d->cells);
	bfi_put32(out + 32, d->shards);
	bfi_put32(out + 36, d->flags);
	bfi_put64(out + 40, d->table_offset);
}

void bfi_rep_encode(uint8_t out[BFI_REP_ENTRY_SIZE], const struct bfi_rep *r)
{
	memset(out, 0, BFI_REP_ENTRY_SIZE);
	bfi_put64(out + 0, r->m);
	bfi_put64(out + 8, r->row_bytes);
	bfi_put64(out + 16, r->rows_offset);
	bfi_put64(out + 24, r->starts_offset);
	bfi_put64(out + 32, r->members_offset);
	bfi_put64(out + 40, r->cell_of_offset);
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

uint64_t bfi_rambo_layout(struct bfi_rep *reps, uint32_t n_reps, uint64_t n_sets, uint64_t cells)
{
	uint64_t off = BFI_RAMBO_DESC_SIZE + (uint64_t)n_reps * BFI_REP_ENTRY_SIZE;
	for (uint32_t i = 0; i < n_reps; i++) {
		reps[i].row_bytes = bfi_rambo_row_bytes(cells);
		if (place_rep(&reps[i], n_sets, cells, &off))
			return 0;
	}
	return off;
}

int bfi_rambo_decode(const uint8_t *in, uint64_t size, struct bfi_rambo_desc *d,
                     struct bfi_rep *reps, uint64_t *bad_off)
{
	*bad_off = 0;
	if (size < BFI_RAMBO_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	d->n_sets = bfi_get64(in + 0);
	d->k = bfi_get32(in + 8);
	d->hash_id = bfi_get32(in + 12);
	d->reps = bfi_get32(in + 16);
	d->partition_id = bfi_get32(in + 20);
	d->cells = bfi_get64(in + 24);
	d->shards = bfi_get32(in + 32);
	d->table_offset = bfi_get64(in + 40);
	d->flags = bfi_get32(in + 36);
	if ((d->flags & ~BFI_RAMBO_SHARED_PROBES) || !all_zero(in + 48, BFI_RAMBO_DESC_SIZE - 48))
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
		struct bfi_rep r = {bfi_get64(e), bfi_get64(e + 8), bfi_get64(e + 16), bfi_get64(e + 24),
		                    bfi_get64(e + 32), bfi_get64(e + 40)};
		*bad_off = (uint64_t)(e - in);
		if (!all_zero(e + 48, BFI_REP_ENTRY_SIZE - 48))
			return BFI_E_RESERVED;
		if (r.m == 0 || r.m > BFI_MAX_BITS || r.row_bytes != bfi_rambo_row_bytes(d->cells))
			return BFI_E_BAD_LAYOUT;
		struct bfi_rep want = r;
		if (place_rep(&want, d->n_sets, d->cells, &off) || off > size ||
		    memcmp(&want, &r, sizeof r) != 0)
			return BFI_E_BAD_LAYOUT;
		if (reps)
			reps[i] = r;
	}
	*bad_off = 0;
	return off == size ? 0 : BFI_E_BAD_LAYOUT;
}

void bfi_tree_desc_encode(uint8_t out[BFI_TREE_DESC_SIZE], const struct bfi_tree_desc *d)
{
	memset(out, 0, BFI_TREE_DESC_SIZE);
	bfi_put64(out + 0, d->n_sets);
	bfi_put32(out + 8, d->k);
	bfi_put32(out + 12, d->hash_id);
	bfi_put32(out + 16, d->fanout);
	bfi_put32(out + 20, d->levels);
	bfi_put64(out + 24, d->table_offset);
	bfi_put64(out + 32, d->pre_m);
	bfi_put64(out + 40, d->pre_offset);
	bfi_put32(out + 48, d->flags);
	bfi_put32(out + 52, d->dropped_levels);
	bfi_put64(out + 56, d->dropped_nodes);
}

void bfi_level_encode(uint8_t out[BFI_LEVEL_ENTRY_SIZE], const struct bfi_level *l)
{
	memset(out, 0, BFI_LEVEL_ENTRY_SIZE);
	bfi_put64(out + 0, l->nodes);
	bfi_put64(out + 8, l->m);
	bfi_put64(out + 16, l->row_bytes);
	bfi_put64(out + 24, l->rows_offset);
	bfi_put64(out + 32, l->groups_offset);
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
                    struct bfi_level *levels, uint64_t *bad_off)
{
	*bad_off = 0;
	if (size < BFI_TREE_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	d->n_sets = bfi_get64(in + 0);
	d->k = bfi_get32(in + 8);
	d->hash_id = bfi_get32(in + 12);
	d->fanout = bfi_get32(in + 16);
	d->levels = bfi_get32(in + 20);
	d->table_offset = bfi_get64(in + 24);
	d->pre_m = bfi_get64(in + 32);
	d->pre_offset = bfi_get64(in + 40);
	d->flags = bfi_get32(in + 48);
	d->dropped_levels = bfi_get32(in + 52);
	d->dropped_nodes = bfi_get64(in + 56);
	int explicit = (d->flags & BFI_TREE_EXPLICIT) != 0;
	if ((d->flags & ~BFI_TREE_EXPLICIT) || (!explicit && (d->dropped_levels || d->dropped_nodes)))
		return BFI_E_RESERVED;
	if (d->dropped_levels > BFI_MAX_LEVELS || d->dropped_nodes > BFI_MAX_SETS)
		return BFI_E_BAD_LAYOUT;
	if (d->pre_m > BFI_MAX_BITS)
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
		struct bfi_level l = {bfi_get64(e), bfi_get64(e + 8), bfi_get64(e + 16), bfi_get64(e + 24),
		                      bfi_get64(e + 32)};
		*bad_off = (uint64_t)(e - in);
		if (!all_zero(e + 40, BFI_LEVEL_ENTRY_SIZE - 40))
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
	*bad_off = 0;
	if (d->pre_offset != (d->pre_m ? off : 0))
		return BFI_E_BAD_LAYOUT;
	if (d->pre_m && (__builtin_add_overflow(off, bfi_bits_bytes(d->pre_m), &off) || off > size))
		return BFI_E_BAD_LAYOUT;
	return off == size ? 0 : BFI_E_BAD_LAYOUT;
}

/* Filter file header: magic, version (2), reserved (2), hash_id (4), m (8),
 * k (4), reserved (4), keys (8), bits_set (8), bits checksum (8), header
 * checksum (8). */
void bfi_filter_header_encode(uint8_t out[BFI_FILTER_HEADER_SIZE], const struct bfi_filter_header *h)
{
	memset(out, 0, BFI_FILTER_HEADER_SIZE);
	memcpy(out, BFI_FILTER_MAGIC, 8);
	bfi_put16(out + 8, h->version);
	bfi_put32(out + 12, h->hash_id);
	bfi_put64(out + 16, h->m);
	bfi_put32(out + 24, h->k);
	bfi_put64(out + 32, h->keys);
	bfi_put64(out + 40, h->bits_set);
	bfi_put64(out + 48, h->bits_checksum);
	bfi_put64(out + 56, bfi_checksum64(out, 56));
}

int bfi_filter_header_decode(const uint8_t in[BFI_FILTER_HEADER_SIZE], struct bfi_filter_header *h)
{
	if (memcmp(in, BFI_FILTER_MAGIC, 8) != 0)
		return BFI_E_BAD_MAGIC;
	/* the version before the checksum, as for the index: another version may
	 * checksum its header otherwise, and is to be named, not called damaged */
	h->version = bfi_get16(in + 8);
	if (h->version != BFI_FILTER_VERSION)
		return BFI_E_VERSION;
	if (bfi_get64(in + 56) != bfi_checksum64(in, 56))
		return BFI_E_HEADER_CHECKSUM;
	h->hash_id = bfi_get32(in + 12);
	h->m = bfi_get64(in + 16);
	h->k = bfi_get32(in + 24);
	h->keys = bfi_get64(in + 32);
	h->bits_set = bfi_get64(in + 40);
	h->bits_checksum = bfi_get64(in + 48);
	if (bfi_get16(in + 10) != 0 || bfi_get32(in + 28) != 0)
		return BFI_E_RESERVED;
	if (h->hash_id != BFI_HASH_XXH3_MIX)
		return BFI_E_INCOMPAT;
	if (h->m == 0 || h->m > BFI_MAX_BITS || h->k == 0 || h->k > BFI_MAX_K || h->bits_set > h->m)
		return BFI_E_BAD_LAYOUT;
	return 0;
}
