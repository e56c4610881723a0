/*
 * format.h - the on-disk layout of a bfi index file, shared by writer and
 * reader. spec/format.md is normative; every constant here cites its
 * section there. Integers are decoded with memcpy + leNNtoh, never by
 * casting file bytes to a struct.
 */
#ifndef BFI_FORMAT_H
#define BFI_FORMAT_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bfi_catalog.h"

#define BFI_VERSION_STRING "0.1.0"

/* spec: "Conventions" */
#define BFI_SECTION_ALIGN 4096u
#define BFI_ROW_ALIGN 64u

/* spec: "Header" */
#define BFI_MAGIC "\x89" "BFI\r\n\x1a\n"
#define BFI_MAGIC_LEN 8u
#define BFI_VERSION_MAJOR 3u
#define BFI_VERSION_MINOR 4u
#define BFI_HEADER_SIZE 128u
#define BFI_TRAILER_SIZE 8u
#define BFI_KNOWN_INCOMPAT 0ull /* no incompatible features in 3.0 */

/* Header field offsets. */
#define BFI_H_MAGIC 0
#define BFI_H_MAJOR 8
#define BFI_H_MINOR 10
#define BFI_H_HEADER_SIZE 12
#define BFI_H_COMPAT 16
#define BFI_H_INCOMPAT 24
#define BFI_H_FILE_SIZE 32
#define BFI_H_TABLE_OFFSET 40
#define BFI_H_SECTION_COUNT 48
#define BFI_H_ENTRY_SIZE 52
#define BFI_H_SNAPSHOT_ID 56
#define BFI_H_CATALOG_DIGEST 72
#define BFI_H_CATALOG_SIZE 88
#define BFI_H_TABLE_CHECKSUM 96
#define BFI_H_RESERVED 104
#define BFI_H_RESERVED_LEN 16
#define BFI_H_CHECKSUM 120

/* spec: "Section table" */
#define BFI_ENTRY_SIZE 64u
#define BFI_MAX_SECTIONS ((BFI_SECTION_ALIGN - BFI_HEADER_SIZE) / BFI_ENTRY_SIZE)
#define BFI_SEC_FLAT 1u
#define BFI_SEC_CHUNKSUMS 2u
#define BFI_SEC_PLAIN 3u
#define BFI_SEC_RAMBO 4u
#define BFI_SEC_TREE 5u
#define BFI_ENC_RAW 0u
#define BFI_ENC_ZSTD 1u
#define BFI_SECF_REQUIRED 1u
#define BFI_SECF_KNOWN BFI_SECF_REQUIRED

/* spec: "Flat section" */
#define BFI_FLAT_DESC_SIZE 64u
#define BFI_BLOCK_ENTRY_SIZE 64u
#define BFI_MAX_BLOCKS 65536u
#define BFI_FLATF_SIZE_ORDER 1u /* sets are ordered by distinct keys */
#define BFI_FLATF_LINE_PRE 2u   /* pre-filters probe one 512-bit line per key (format 2.2) */
#define BFI_FLATF_KNOWN (BFI_FLATF_SIZE_ORDER | BFI_FLATF_LINE_PRE)
#define BFI_PRE_LINE_BITS 512u
#define BFI_HASH_XXH3_MIX 1u
#define BFI_MAX_K 32u
#define BFI_MAX_BITS (1ull << 40)
#define BFI_MAX_SETS 0xffffffffull

/* spec: "RAMBO section" */
#define BFI_RAMBO_DESC_SIZE 64u
#define BFI_REP_ENTRY_SIZE 64u
#define BFI_MAX_REPS 64u
#define BFI_MAX_CELLS (1u << 24)
#define BFI_PARTITION_XXH3 1u

/* spec: "Tree section" */
#define BFI_TREE_DESC_SIZE 64u
#define BFI_LEVEL_ENTRY_SIZE 64u
#define BFI_MAX_LEVELS 32u

/* spec: "Plain section" */
#define BFI_PLAIN_DESC_SIZE 64u

/* spec: "Chunk checksums section" */
#define BFI_CHUNK_LOG2 16u
#define BFI_CHUNK_SIZE (1u << BFI_CHUNK_LOG2)
#define BFI_CHUNKSUMS_DESC_SIZE 16u

/* spec: "Catalog" */
#define BFI_INDEX_NAME "index.bfi"
#define BFI_CATALOG_NAME "catalog.mdb"
#define BFI_CATALOG_FORMAT "bfi-catalog 2"

static inline uint16_t bfi_get16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof v);
	return le16toh(v);
}
static inline uint32_t bfi_get32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return le32toh(v);
}
static inline uint64_t bfi_get64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return le64toh(v);
}
static inline void bfi_put16(void *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof v);
}
static inline void bfi_put32(void *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof v);
}
static inline void bfi_put64(void *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof v);
}

/* Overflow-safe "does [off, off+len) fit in size?" (tinycdb style). */
static inline int bfi_range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && size - off >= len;
}

static inline uint64_t bfi_align_up(uint64_t v, uint64_t a)
{
	return (v + (a - 1)) / a * a;
}

/* Bytes of a row of n nodes of a tree level (and of a 3.0 RAMBO row): whole 64-bit words. */
static inline uint64_t bfi_rambo_row_bytes(uint64_t cells)
{
	return (cells + 63) / 64 * 8;
}

/*
 * Bytes of a RAMBO row of B cells in a file of format minor version minor
 * (spec/format.md, "RAMBO section"): from 3.1, the smallest of 1, 2, 4 and
 * 8 bytes that holds B bits when B is at most 64, so that folding B to
 * B / 2 halves a small repetition's rows too; whole 64-bit words above
 * that, and always in 3.0.
 */
static inline uint64_t bfi_cell_row_bytes(uint64_t cells, unsigned minor)
{
	uint64_t b = 1;
	if (minor == 0 || cells > 64)
		return bfi_rambo_row_bytes(cells);
	while (b * 8 < cells)
		b *= 2;
	return b;
}

/* Bytes holding n bits, padded to whole 64-byte lines (512 bits). */
static inline uint64_t bfi_bits_bytes(uint64_t n)
{
	return (n + 511) / 512 * 64;
}

/* Bytes holding n bits, padded to whole 64-bit words. */
static inline uint64_t bfi_word_bytes(uint64_t n)
{
	return (n + 63) / 64 * 8;
}

/*
 * spec: "Flat section". A block of n sets strides row_bits bits from one
 * row to the next: n (packed) up to n rounded up to whole lines.
 */
static inline int bfi_row_bits_ok(uint64_t n_sets, uint64_t row_bits)
{
	return row_bits >= n_sets && row_bits <= bfi_bits_bytes(n_sets) * 8;
}

/* Are the rows whole 64-byte lines (else packed: they run on bit after bit)? */
static inline int bfi_rows_lined(uint64_t row_bits)
{
	return row_bits % 512 == 0;
}

/*
 * Bytes of a flat block's m rows: m * row_bits / 8 for whole lines; packed
 * rows are followed by 64 zero bits, so that a reader may load whole words
 * from any row, and rounded up to a line. 0 on overflow.
 */
static inline uint64_t bfi_block_rows_bytes(uint64_t m, uint64_t row_bits)
{
	uint64_t bits;
	if (__builtin_mul_overflow(m, row_bits, &bits) || bits > UINT64_MAX - 512 - 64)
		return 0;
	return bfi_rows_lined(row_bits) ? bits / 8 : bfi_bits_bytes(bits + 64);
}

struct bfi_header {
	uint16_t major, minor;
	uint64_t compat, incompat;
	uint64_t file_size;
	uint64_t table_offset;
	uint32_t section_count;
	uint8_t snapshot_id[16];
	uint8_t catalog_digest[16];
	uint64_t catalog_size;
	uint64_t table_checksum;
};

struct bfi_section {
	uint32_t kind;
	uint16_t encoding;
	uint16_t flags;
	uint64_t offset;
	uint64_t stored_size;
	uint64_t size;
	uint64_t checksum;
};

/*
 * A single-filter file (spec/format.md, "Filter file"): a 64-byte header,
 * then the m bits, bit i at byte i / 8, bit i % 8.
 */
#define BFI_FILTER_MAGIC "\x89" "BFF\r\n\x1a\n"
#define BFI_FILTER_HEADER_SIZE 64u
#define BFI_FILTER_VERSION 1u            /* the bits as they are */
#define BFI_FILTER_VERSION_ZSTD 2u       /* the bits as one zstd frame (spec: "Filter file") */
struct bfi_filter_header {
	uint16_t version;
	uint32_t hash_id;
	uint64_t m;
	uint32_t k;
	uint64_t keys;     /* keys added, counting repeats */
	uint64_t bits_set; /* ones in the bits */
	uint64_t bits_checksum;
};
void bfi_filter_header_encode(uint8_t out[BFI_FILTER_HEADER_SIZE], const struct bfi_filter_header *h);
/* Checks magic, version (1 or 2), hash, m, k, reserved bytes and the header checksum. */
int bfi_filter_header_decode(const uint8_t in[BFI_FILTER_HEADER_SIZE], struct bfi_filter_header *h);

/* Encoders write every byte of their buffer, reserved bytes as zero. */
void bfi_header_encode(uint8_t out[BFI_HEADER_SIZE], const struct bfi_header *h);
void bfi_section_encode(uint8_t out[BFI_ENTRY_SIZE], const struct bfi_section *s);

/*
 * Decoders check one structure on its own and return 0 or a BFI_E_* code.
 * bfi_header_decode checks magic, version, flags, reserved bytes and the
 * header checksum; the caller checks file_size against the real size.
 */
int bfi_header_decode(const uint8_t in[BFI_HEADER_SIZE], struct bfi_header *h);
int bfi_section_decode(const uint8_t in[BFI_ENTRY_SIZE], struct bfi_section *s);
/*
 * Where a layout's decoder found its section at fault: the structure
 * (a descriptor or one table entry), relative to the section's start.
 */
struct bfi_where {
	uint64_t offset, length;
	const char *what; /* such as "flat block entry" */
};

/*
 * The chunk-checksum section (spec/format.md, "Chunk checksums"): this
 * descriptor, then one XXH3-64 per BFI_CHUNK_SIZE bytes of
 * [BFI_SECTION_ALIGN, covered), the last chunk short.
 */
struct bfi_chunksums_desc {
	uint32_t chunk_log2; /* BFI_CHUNK_LOG2 */
	uint64_t covered;    /* the end of what the checksums cover: the section's own offset */
};
void bfi_chunksums_encode(uint8_t out[BFI_CHUNKSUMS_DESC_SIZE], const struct bfi_chunksums_desc *d);
/* Chunks that checksums covering [BFI_SECTION_ALIGN, covered) have. */
uint64_t bfi_chunk_count(uint64_t covered);
/*
 * Check a chunk-checksum section of size bytes at sec, which sits at
 * offset at: reserved bytes, chunk size, that it covers everything before
 * itself, and its size for that many chunks.
 */
int bfi_chunksums_decode(const uint8_t *sec, uint64_t size, uint64_t at,
                         struct bfi_chunksums_desc *d);

/*
 * Bytes at the start of a section of kind, size bytes long, whose first
 * 64 bytes (or fewer, zero-filled) are desc, that opening it reads: its
 * descriptor and tables of blocks, levels or repetitions; the whole of a
 * chunk-checksum section; 64 for a kind not known. At most size. A pack
 * scanned in place (bfi_scan) fills these first, then only what queries
 * read.
 */
uint64_t bfi_section_head(uint32_t kind, const uint8_t desc[64], uint64_t size);

uint64_t bfi_checksum64(const void *p, size_t len);
void bfi_digest128(const void *p, size_t len, uint8_t out[16]);
/* bfi_digest128 of bytes given in runs, in order: begin (NULL: no memory), add each, end frees. */
struct bfi_digest;
struct bfi_digest *bfi_digest_begin(void);
void bfi_digest_add(struct bfi_digest *d, const void *p, size_t len);
void bfi_digest_end(struct bfi_digest *d, uint8_t out[16]);

/* bfi_memory_limits (memory.c), reading /proc and /sys under root, RLIMIT_AS given (0: none). */
struct bfi_memory_limits;
void bfi__memory_limits_at(const char *root, uint64_t rlimit_as, struct bfi_memory_limits *out);

#include "sections.h"

#endif
