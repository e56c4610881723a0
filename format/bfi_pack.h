/*
 * bfi_pack.h - a pack (spec/format.md, "Packs"): a snapshot or a collection
 * as one file, a tar stream cut into zstd frames with a seek table in a
 * skippable frame at the end (zstd's seekable format). Shared by the
 * writer, which packs, and the reader, which unpacks, inspects, verifies
 * and scans packs.
 */
#ifndef BFI_PACK_H
#define BFI_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "bfi_manifest.h"

#define BFI_ZSTD_MAGIC 0xFD2FB528u      /* a zstd frame's first four bytes, little-endian */
#define BFI_PACK_TABLE_MAGIC 0x184D2A5Eu /* the seek table's skippable frame */
#define BFI_PACK_FOOTER_MAGIC 0x8F92EAB1u /* the seekable format's last four bytes */
#define BFI_PACK_FOOTER 9u                /* frames, descriptor, magic */
#define BFI_PACK_ENTRY 12u                /* compressed, decompressed, checksum */
#define BFI_PACK_CHECKSUMS 0x80u          /* the descriptor's checksum flag */
#define BFI_PACK_FRAME_MAX (64u << 20)    /* a frame's decompressed bytes at most */
#define BFI_PACK_FRAME_DEFAULT (64u << 10) /* what bfi pack writes: small, for reads in place */
#define BFI_PACK_FRAMES_MAX 0x8000000u    /* the seekable format's own limit */

struct bfi_pack_frame {
	uint64_t at;   /* first byte of the frame in the pack */
	uint64_t from; /* first byte of its decompressed data in the tar stream */
	uint32_t csize, dsize, checksum;
};

struct bfi_pack_table {
	uint32_t n;
	struct bfi_pack_frame *f;
	uint64_t tar_size;   /* the tar stream's bytes: the frames' decompressed bytes */
	uint64_t table_at;   /* where the seek table's skippable frame starts */
};

/* Bytes of the seek table frame for n frames. */
static inline uint64_t bfi_pack_table_size(uint32_t n)
{
	return 8u + (uint64_t)n * BFI_PACK_ENTRY + BFI_PACK_FOOTER;
}
/* Encode t's table into out (bfi_pack_table_size(t->n) bytes). */
void bfi_pack_table_encode(uint8_t *out, const struct bfi_pack_table *t);
/*
 * Decode the seek table that ends a pack of file_size bytes. tail holds
 * the file's last tail_len bytes (at least BFI_PACK_FOOTER; the whole
 * table is needed, *need says how many when tail_len is short and 0 is
 * returned with t->n = 0). Checks the magics, the descriptor, each frame's
 * sizes against the limits, and that the frames and the table exactly
 * fill the file. 0, or BFI_E_PACK / BFI_E_PACK_TRUNCATED with *what
 * saying which check failed. On success t->f is malloc'd: free it.
 */
int bfi_pack_table_decode(const uint8_t *tail, uint64_t tail_len, uint64_t file_size,
                          struct bfi_pack_table *t, uint64_t *need, const char **what);

/*
 * Reading a pack: its frames decompressed and checked in turn, its tar
 * stream walked member by member (libarchive), each member's name, type
 * and place checked against what a pack holds (spec/format.md, "Packs"):
 * a snapshot's catalog.mdb then index.bfi; or a collection's MANIFEST,
 * then each live segment in the manifest's order, its directory, its
 * catalog.mdb and its index.bfi. Memory: one frame and its compressed
 * bytes, and the manifest.
 */
struct bfi_pack_in;
struct bfi_pack_member {
	char name[64];       /* its path in the pack: "index.bfi", "seg-.../catalog.mdb", ... */
	char segment[40];    /* the segment it belongs to, or "" */
	const char *file;    /* BFI_INDEX_NAME, BFI_CATALOG_NAME, "MANIFEST", or NULL for a directory */
	uint64_t size;       /* its bytes (0 for a directory) */
	uint64_t data_at;    /* its header's end in the tar stream: where its data starts, or
	                      * for a member of 8 GiB and more, a pax header's 512-byte blocks
	                      * before that */
};
struct bfi_pack_error {
	const char *what;    /* which check failed */
	uint64_t offset;     /* in the pack file, where known */
	char member[64];     /* the member being read, or "" */
};
/* Open the pack in fd (kept open by the caller): its seek table is read and checked. */
int bfi_pack_in_open(int fd, struct bfi_pack_in **out, struct bfi_pack_error *e);
/* The table of the pack opened (frames, sizes). */
const struct bfi_pack_table *bfi_pack_in_table(const struct bfi_pack_in *p);
/* 1 when the pack is a collection, 0 a snapshot; known once the first member is read. */
int bfi_pack_in_is_collection(const struct bfi_pack_in *p);
/* The collection's manifest, decoded, once its member was read; else NULL. */
const struct bfi_manifest *bfi_pack_in_manifest(const struct bfi_pack_in *p);
/*
 * The next member: 0 with *m set, 1 at the end of a complete pack (every
 * member a pack must hold read, and nothing after them), or a BFI_E_PACK*
 * code / -errno with *e set. A member's unread data is skipped; whole
 * frames are skipped without being decompressed.
 */
int bfi_pack_in_next(struct bfi_pack_in *p, struct bfi_pack_member *m, struct bfi_pack_error *e);
/* Up to len bytes of the current member's data: how many (0 at its end), or an error code. */
int64_t bfi_pack_in_read(struct bfi_pack_in *p, void *buf, size_t len, struct bfi_pack_error *e);
/*
 * Write the rest of the current member's data to fd (write(2), from its
 * offset), through buf of cap bytes, calling progress (if not NULL) with
 * the pack's bytes read so far: 0, or a BFI_E_PACK* code, or -errno (a
 * read of the pack, or a write: *e says which).
 */
int bfi_pack_in_copy(struct bfi_pack_in *p, int fd, uint8_t *buf, size_t cap,
                     void (*progress)(void *ctx, uint64_t read), void *ctx,
                     struct bfi_pack_error *e);
/* Bytes of the pack file read so far (compressed), for progress. */
uint64_t bfi_pack_in_progress(const struct bfi_pack_in *p);
void bfi_pack_in_close(struct bfi_pack_in **p);

/*
 * Random access to a pack's tar stream, to scan a packed index in place
 * (bfi_scan): the frames a read covers are read, checked and decompressed
 * (their checksums, as bfi_pack_in checks them), the last one kept for
 * the next read. Memory: one frame and its compressed bytes. open takes
 * fd, which close closes (on failure too).
 */
struct bfi_pack_frames;
int bfi_pack_frames_open(int fd, struct bfi_pack_frames **out, struct bfi_pack_error *e);
/* len bytes of the tar stream from at into buf: 0, or a BFI_E_PACK* code / -errno with *e set. */
int bfi_pack_frames_read(struct bfi_pack_frames *f, void *buf, uint64_t len, uint64_t at,
                         struct bfi_pack_error *e);
void bfi_pack_frames_close(struct bfi_pack_frames **f);
/* Compressed bytes read and decompressed so far: a frame read twice counts twice. */
uint64_t bfi_pack_frames_bytes(const struct bfi_pack_frames *f);

#endif
