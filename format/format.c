/* format.c - encode and check the fixed structures of spec/format.md. */
#include <xxhash.h>

#include "bfi_error.h"
#include <stddef.h>

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

/*
 * One little-endian field of a fixed structure: its byte offset there,
 * and the struct member holding it, which is as wide as the field. Each
 * structure's offsets are written once, in its table below, and both its
 * encoder and its decoder read them from there.
 */
struct field {
	uint8_t at, width;
	uint16_t member;
};
#define FIELD(type, name, offset) {offset, sizeof(((type *)0)->name), offsetof(type, name)}
#define N_FIELDS(t) (sizeof(t) / sizeof(t)[0])

static const struct field section_fields[] = {
	FIELD(struct bfi_section, kind, 0),         FIELD(struct bfi_section, encoding, 4),
	FIELD(struct bfi_section, flags, 6),        FIELD(struct bfi_section, offset, 8),
	FIELD(struct bfi_section, stored_size, 16), FIELD(struct bfi_section, size, 24),
	FIELD(struct bfi_section, checksum, 32),
};
static const struct field chunksums_fields[] = {
	FIELD(struct bfi_chunksums_desc, chunk_log2, 0), FIELD(struct bfi_chunksums_desc, covered, 8),
};
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
static const struct field plain_fields[] = {
	FIELD(struct bfi_plain_desc, n_sets, 0),       FIELD(struct bfi_plain_desc, m, 8),
	FIELD(struct bfi_plain_desc, k, 16),           FIELD(struct bfi_plain_desc, hash_id, 20),
	FIELD(struct bfi_plain_desc, filter_bytes, 24), FIELD(struct bfi_plain_desc, filters_offset, 32),
};
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
/* the filter file's header, between its magic (0..8) and its checksum (56..64) */
static const struct field filter_fields[] = {
	FIELD(struct bfi_filter_header, version, 8), FIELD(struct bfi_filter_header, hash_id, 12),
	FIELD(struct bfi_filter_header, m, 16),      FIELD(struct bfi_filter_header, k, 24),
	FIELD(struct bfi_filter_header, keys, 32),   FIELD(struct bfi_filter_header, bits_set, 40),
	FIELD(struct bfi_filter_header, bits_checksum, 48),
};
#define FILTER_CHECKSUM_AT 56u

/* Write the fields of the struct at from into out, whose other bytes the caller zeroed. */
static void put_fields(uint8_t *out, const struct field *f, size_t n, const void *from)
{
	const uint8_t *src = from;
	for (size_t i = 0; i < n; i++) {
		uint64_t v64 = 0;
		uint32_t v32 = 0;
		uint16_t v16 = 0;
		if (f[i].width == 8)
			memcpy(&v64, src + f[i].member, 8), bfi_put64(out + f[i].at, v64);
		else if (f[i].width == 4)
			memcpy(&v32, src + f[i].member, 4), bfi_put32(out + f[i].at, v32);
		else
			memcpy(&v16, src + f[i].member, 2), bfi_put16(out + f[i].at, v16);
	}
}

static void get_fields(const uint8_t *in, const struct field *f, size_t n, void *to)
{
	uint8_t *dst = to;
	for (size_t i = 0; i < n; i++) {
		uint64_t v64 = f[i].width == 8 ? bfi_get64(in + f[i].at) : 0;
		uint32_t v32 = f[i].width == 4 ? bfi_get32(in + f[i].at) : 0;
		uint16_t v16 = f[i].width == 2 ? bfi_get16(in + f[i].at) : 0;
		if (f[i].width == 8)
			memcpy(dst + f[i].member, &v64, 8);
		else if (f[i].width == 4)
			memcpy(dst + f[i].member, &v32, 4);
		else
			memcpy(dst + f[i].member, &v16, 2);
	}
}

/* Are the bytes of [from, to) of in that no field holds zero (reserved)? */
static int unused_zero(const uint8_t *in, size_t from, size_t to, const struct field *f, size_t n)
{
	for (size_t at = from; at < to; at++) {
		int used = 0;
		for (size_t i = 0; i < n && !used; i++)
			used = at >= f[i].at && at < (size_t)f[i].at + f[i].width;
		if (!used && in[at])
			return 0;
	}
	return 1;
}

/* Encode the struct at from as size bytes at out, by its field table. */
#define ENCODE(out, size, fields, from)                                                            \
	do {                                                                                       \
		memset(out, 0, size);                                                              \
		put_fields(out, fields, N_FIELDS(fields), from);                                   \
	} while (0)
/* Decode into the struct at to, by its field table; 1 if the reserved bytes are zero. */
#define DECODE(in, size, fields, to)                                                               \
	(get_fields(in, fields, N_FIELDS(fields), to), unused_zero(in, 0, size, fields, N_FIELDS(fields)))

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
	ENCODE(out, BFI_ENTRY_SIZE, section_fields, s);
}

int bfi_section_decode(const uint8_t in[BFI_ENTRY_SIZE], struct bfi_section *s)
{
	if (!DECODE(in, BFI_ENTRY_SIZE, section_fields, s) || (s->flags & ~BFI_SECF_KNOWN))
		return BFI_E_RESERVED;
	if (s->offset % BFI_SECTION_ALIGN != 0)
		return BFI_E_BAD_SECTION;
	if (s->encoding == BFI_ENC_RAW && s->size != s->stored_size)
		return BFI_E_BAD_SECTION;
	return 0;
}

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

void bfi_plain_desc_encode(uint8_t out[BFI_PLAIN_DESC_SIZE], const struct bfi_plain_desc *d)
{
	ENCODE(out, BFI_PLAIN_DESC_SIZE, plain_fields, d);
}

int bfi_plain_decode(const uint8_t *in, uint64_t size, struct bfi_plain_desc *d,
                     struct bfi_where *where)
{
	*where = (struct bfi_where){0, BFI_PLAIN_DESC_SIZE, "plain descriptor"};
	if (size < BFI_PLAIN_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	if (!DECODE(in, BFI_PLAIN_DESC_SIZE, plain_fields, d))
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

void bfi_filter_header_encode(uint8_t out[BFI_FILTER_HEADER_SIZE], const struct bfi_filter_header *h)
{
	ENCODE(out, BFI_FILTER_HEADER_SIZE, filter_fields, h);
	memcpy(out, BFI_FILTER_MAGIC, 8);
	bfi_put64(out + FILTER_CHECKSUM_AT, bfi_checksum64(out, FILTER_CHECKSUM_AT));
}

int bfi_filter_header_decode(const uint8_t in[BFI_FILTER_HEADER_SIZE], struct bfi_filter_header *h)
{
	if (memcmp(in, BFI_FILTER_MAGIC, 8) != 0)
		return BFI_E_BAD_MAGIC;
	/* the version before the checksum, as for the index: another version may
	 * checksum its header otherwise, and is to be named, not called damaged */
	get_fields(in, filter_fields, N_FIELDS(filter_fields), h);
	if (h->version != BFI_FILTER_VERSION && h->version != BFI_FILTER_VERSION_ZSTD)
		return BFI_E_VERSION;
	if (bfi_get64(in + FILTER_CHECKSUM_AT) != bfi_checksum64(in, FILTER_CHECKSUM_AT))
		return BFI_E_HEADER_CHECKSUM;
	if (!unused_zero(in, 8, FILTER_CHECKSUM_AT, filter_fields, N_FIELDS(filter_fields)))
		return BFI_E_RESERVED;
	if (h->hash_id != BFI_HASH_XXH3_MIX)
		return BFI_E_INCOMPAT;
	if (h->m == 0 || h->m > BFI_MAX_BITS || h->k == 0 || h->k > BFI_MAX_K || h->bits_set > h->m)
		return BFI_E_BAD_LAYOUT;
	return 0;
}

void bfi_chunksums_encode(uint8_t out[BFI_CHUNKSUMS_DESC_SIZE], const struct bfi_chunksums_desc *d)
{
	ENCODE(out, BFI_CHUNKSUMS_DESC_SIZE, chunksums_fields, d);
}

uint64_t bfi_chunk_count(uint64_t covered)
{
	return (covered - BFI_SECTION_ALIGN + BFI_CHUNK_SIZE - 1) / BFI_CHUNK_SIZE;
}

int bfi_chunksums_decode(const uint8_t *sec, uint64_t size, uint64_t at,
                         struct bfi_chunksums_desc *d)
{
	if (size < BFI_CHUNKSUMS_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	if (!DECODE(sec, BFI_CHUNKSUMS_DESC_SIZE, chunksums_fields, d))
		return BFI_E_RESERVED;
	if (d->chunk_log2 != BFI_CHUNK_LOG2 || d->covered != at ||
	    size != BFI_CHUNKSUMS_DESC_SIZE + bfi_chunk_count(d->covered) * 8)
		return BFI_E_BAD_LAYOUT;
	return 0;
}

uint64_t bfi_section_head(uint32_t kind, const uint8_t desc[64], uint64_t size)
{
	uint64_t n = 64;
	switch (kind) {
	case BFI_SEC_FLAT: /* n_blocks, then the block table */
	case BFI_SEC_RAMBO: /* reps, then the repetition table */
		n += (uint64_t)bfi_get32(desc + 16) * 64;
		break;
	case BFI_SEC_TREE: /* levels, then the level table */
		n += (uint64_t)bfi_get32(desc + 20) * 64;
		break;
	case BFI_SEC_CHUNKSUMS:
		n = size;
		break;
	default:
		break;
	}
	return n < size ? n : size;
}
