/*
 * format.c - encode and check the fixed structures of spec/format.md
 * that frame every index: header, section table, chunk checksums, and the
 * filter file's header. Each layout's own live in its file (flat.c,
 * plain.c, rambo.c, tree.c), beside its row in layouts.c.
 */
#include <xxhash.h>

#include "bfi_error.h"
#include <stddef.h>

#include "fields.h"
#include "format.h"

uint64_t bfi_checksum64(const void *p, size_t len)
{
	return XXH3_64bits(len ? p : "", len);
}

static void put_digest(XXH128_hash_t h, uint8_t out[16])
{
	bfi_put64(out, h.low64);
	bfi_put64(out + 8, h.high64);
}

void bfi_digest128(const void *p, size_t len, uint8_t out[16])
{
	put_digest(XXH3_128bits(len ? p : "", len), out);
}

/* The same digest of bytes given in runs: XXH3's streaming state. */
struct bfi_digest *bfi_digest_begin(void)
{
	XXH3_state_t *st = XXH3_createState();
	if (st && XXH3_128bits_reset(st) != XXH_OK) {
		XXH3_freeState(st);
		st = NULL;
	}
	return (struct bfi_digest *)st;
}

void bfi_digest_add(struct bfi_digest *d, const void *p, size_t len)
{
	if (len)
		XXH3_128bits_update((XXH3_state_t *)d, p, len);
}

void bfi_digest_end(struct bfi_digest *d, uint8_t out[16])
{
	put_digest(XXH3_128bits_digest((XXH3_state_t *)d), out);
	XXH3_freeState((XXH3_state_t *)d);
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static const struct field section_fields[] = {
	FIELD(struct bfi_section, kind, 0),         FIELD(struct bfi_section, encoding, 4),
	FIELD(struct bfi_section, flags, 6),        FIELD(struct bfi_section, offset, 8),
	FIELD(struct bfi_section, stored_size, 16), FIELD(struct bfi_section, size, 24),
	FIELD(struct bfi_section, checksum, 32),
};
static const struct field chunksums_fields[] = {
	FIELD(struct bfi_chunksums_desc, chunk_log2, 0), FIELD(struct bfi_chunksums_desc, covered, 8),
};
/* the filter file's header, between its magic (0..8) and its checksum (56..64) */
static const struct field filter_fields[] = {
	FIELD(struct bfi_filter_header, version, 8), FIELD(struct bfi_filter_header, hash_id, 12),
	FIELD(struct bfi_filter_header, m, 16),      FIELD(struct bfi_filter_header, k, 24),
	FIELD(struct bfi_filter_header, keys, 32),   FIELD(struct bfi_filter_header, bits_set, 40),
	FIELD(struct bfi_filter_header, bits_checksum, 48),
};
#define FILTER_CHECKSUM_AT 56u


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
	bfi__get_fields(in, filter_fields, N_FIELDS(filter_fields), h);
	if (h->version != BFI_FILTER_VERSION && h->version != BFI_FILTER_VERSION_ZSTD)
		return BFI_E_VERSION;
	if (bfi_get64(in + FILTER_CHECKSUM_AT) != bfi_checksum64(in, FILTER_CHECKSUM_AT))
		return BFI_E_HEADER_CHECKSUM;
	if (!bfi__unused_zero(in, 8, FILTER_CHECKSUM_AT, filter_fields, N_FIELDS(filter_fields)))
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
