/* internal.h - reader-private state; not installed. */
#ifndef BFI_READER_INTERNAL_H
#define BFI_READER_INTERNAL_H

#include <lmdb.h>
#include <stdlib.h>

#include "bfi_manifest.h"
#include "bfi_pack.h"

#include "bfi.h"
#include "format.h"

/* Layouts a snapshot may hold at most: rows of the layout table (layout.h). */
#define BFI_MAX_LAYOUTS 8

/* What a validated index holds: the result of bfi__check_index(). */
struct bfi_layout {
	struct bfi_header hdr;
	struct bfi_section sec[BFI_MAX_SECTIONS];
	uint32_t n_sec;
	int sec_of[BFI_MAX_LAYOUTS]; /* the section of each row of the layout table, or -1 */
	int sums_idx;
	uint64_t n_sets; /* agreed by every layout */
	uint32_t k;      /* agreed by every layout but those that keep their own */
	uint64_t sums_covered; /* chunk checksums cover [BFI_SECTION_ALIGN, this) */
};

/* Where a check failed, for bfi_verify(). */
struct bfi_bad {
	uint64_t offset, length;
	const char *what;
};
/* Note in *bad where a check failed and why; returns code, for `return bfi__bad(...)`. */
static inline int bfi__bad(struct bfi_bad *bad, int code, uint64_t offset, uint64_t length,
                           const char *what)
{
	bad->offset = offset;
	bad->length = length;
	bad->what = what;
	return code;
}

/*
 * Check the header, the section table and the chunk-checksum descriptor
 * of the index mapped at map (size bytes), and find each layout's
 * section; the layouts' own descriptors are checked as they open
 * (layout.h). Returns 0 or a BFI_E_* code with *bad describing the
 * region at fault.
 */
int bfi__check_index(const uint8_t *map, uint64_t size, struct bfi_layout *lay,
                     struct bfi_bad *bad);

/* What a cheap check compares to tell a file changed in place (bfi_check_files). */
struct bfi_file_id {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
};

/*
 * Map a whole file read-only, with MADV_HUGEPAGE if huge (see
 * BFI_OPEN_SMALL_PAGES), and, if id is not NULL, note what it is now.
 * Returns 0, BFI_E_NOT_REGULAR or -errno; *size may be 0 (then *map is
 * NULL).
 */
int bfi__map_file(int fd, const uint8_t **map, uint64_t *size, int huge, struct bfi_file_id *id);
/* The identity of a file's state, from its stat (map.c). */
struct stat;
void bfi__file_id(const struct stat *st, struct bfi_file_id *id);

struct bfi_snapshot;
struct bfi_expr;
/*
 * What a collection (collection.c) answers in place of a snapshot: the
 * query and catalog calls reach it through these, so that they never call
 * collection.c by name, and it calls them on its segments.
 */
struct bfi_coll_ops {
	int (*expr)(const bfi_snapshot *s, unsigned layout, const struct bfi_expr *e, bfi_result *res);
	int (*threshold)(const bfi_snapshot *s, unsigned layout, const struct bfi_expr *e,
	                 double theta, bfi_result *res);
	int (*keys)(const bfi_snapshot *s, unsigned layout, const bfi_keyhash *keys, size_t n,
	            bfi_result *res, size_t *ends);
	int (*scan)(const bfi_snapshot *s, unsigned layout, const struct bfi_expr *const *qs, size_t n,
	            double theta, bfi_result *const *res, uint64_t memory, unsigned threads,
	            struct bfi_scan_stats *st);
	int (*scan_cost)(const bfi_snapshot *s, unsigned layout, struct bfi_scan_cost *out);
	int (*set_name)(const bfi_snapshot *s, uint32_t ord, const char **name, size_t *len);
	int (*set_find)(const bfi_snapshot *s, const char *name, size_t len, uint32_t *ord);
	int (*set_stats)(const bfi_snapshot *s, uint32_t ord, struct bfi_set_stats *out);
	int (*set_seen)(const bfi_snapshot *s, uint32_t ord, uint64_t *seen);
	int (*set_fpr)(const bfi_snapshot *s, uint32_t ord, double *fpr);
	int (*check_files)(const bfi_snapshot *s);
	/* bfi_mapped_file: only compares addresses (a signal handler calls it) */
	const char *(*mapped_file)(const bfi_snapshot *s, const void *addr);
	/* the segment whose catalog speaks for the collection, or NULL if it has none */
	const bfi_snapshot *(*first)(const bfi_snapshot *s);
	void (*info)(const bfi_snapshot *s, struct bfi_info *info);
	void (*close)(bfi_snapshot *s);
};
/* A pack's index left in the pack (BFI_OPEN_SCAN, packed.c). */
struct bfi_lazy {
	struct bfi_pack_frames *f;
	uint64_t data_at; /* the index's first byte in the tar stream */
};
/* len bytes of a lazy pack's index from off into dst: 0, or a BFI_E_PACK* code or -errno. */
static inline int bfi__lazy_read(struct bfi_lazy *lz, uint8_t *dst, uint64_t off, uint64_t len)
{
	struct bfi_pack_error e;
	if (off > UINT64_MAX - lz->data_at)
		return BFI_E_PACK;
	return bfi_pack_frames_read(lz->f, dst, len, lz->data_at + off, &e);
}
static inline void bfi__lazy_free(struct bfi_lazy **lz)
{
	if (*lz == NULL)
		return;
	bfi_pack_frames_close(&(*lz)->f);
	free(*lz);
	*lz = NULL;
}
/* bfi_open() of one snapshot (open.c), also telling where a check failed. */
int bfi__open(const char *path, unsigned flags, struct bfi_snapshot **out, struct bfi_bad *bad);
/*
 * The same, of the index and catalog open as index_fd and catalog_fd
 * (a pack's files in memory, packed.c); the snapshot takes both
 * descriptors, on failure too.
 */
int bfi__open_fds(int index_fd, int catalog_fd, unsigned flags, struct bfi_snapshot **out,
                  struct bfi_bad *bad);

struct bfi_snapshot {
	int dirfd;
	int index_fd;
	int catalog_fd;  /* opened from descriptors (bfi__open_fds): the catalog's; else -1 */
	const uint8_t *map;
	uint64_t size;
	struct bfi_layout lay;
	void *view[BFI_MAX_LAYOUTS]; /* each layout's own view of its section, or NULL (layout.h) */
	/* a collection: its segments and manifest (collection.c), and its calls; else NULL */
	struct bfi_coll *coll;
	const struct bfi_coll_ops *cops;
	/*
	 * A pack opened with BFI_OPEN_SCAN (packed.c): the index's bytes past
	 * its tables are still in the pack, read with bfi__lazy_read; else
	 * NULL. Only bfi_scan reads such a snapshot's rows.
	 */
	struct bfi_lazy *lazy;
	/* catalog; env is NULL when opened with BFI_OPEN_NO_CATALOG */
	MDB_env *env;
	MDB_dbi dbi_sets, dbi_names, dbi_meta;
	MDB_dbi dbi_seen; /* --min-count's distinct keys seen a set, if has_seen */
	int has_seen;
	struct bfi_file_id index_id, catalog_id; /* as opened */
	uint8_t head[BFI_HEADER_SIZE];           /* the index's header, as opened */
	const uint8_t *catalog_map;              /* LMDB's map of the catalog, or NULL */
	uint64_t catalog_map_size;
	/*
	 * The catalog's meta entries, read once at open: pointers into its
	 * map, which never changes while open. Queries read their key rules
	 * here, with no LMDB transaction, so that a fault in a file that shrank
	 * under them leaves nothing of LMDB's half done. meta_all: every entry
	 * is here (else a miss asks LMDB).
	 */
	struct bfi_meta_kv {
		const void *k, *v;
		size_t kl, vl;
	} *meta;
	size_t n_meta;
	int meta_all;
};

/*
 * Open the catalog that sits in dirfd and bind it to the index in snap:
 * size, then (unless trusted) digest, then LMDB, then snapshot id and set
 * count. Returns 0 or BFI_E_CATALOG_MISMATCH, BFI_E_CATALOG, BFI_E_LMDB, -errno.
 */
int bfi__catalog_open(bfi_snapshot *snap, int trusted, struct bfi_bad *bad);
void bfi__catalog_close(bfi_snapshot *snap);
struct bfi_manifest;
/* Read and check the manifest in collection directory dirfd (collection.c): 0, -errno or BFI_E_*. */
int bfi__read_manifest(int dirfd, struct bfi_manifest *m, struct bfi_bad *bad);
/*
 * The collection of manifest m and its segments, opened (packed.c): both
 * are taken, on failure too. Checks each segment against its entry.
 */
int bfi__collection_of(struct bfi_manifest *m, bfi_snapshot **segs, bfi_snapshot **out,
                       struct bfi_bad *bad);
/* Is path a regular file, which of the things bfi_open reads only a pack is? */
int bfi__is_pack(const char *path);
struct bfi_pack_member;
/*
 * Open what is packed at path (packed.c): every frame read and checked,
 * each snapshot's two files copied into memory (memfd) and opened from
 * there: a snapshot into pk->snap, or a collection's manifest and
 * segments into pk->m and pk->segs (collection set), which the caller
 * owns. each, if not NULL, is called with each snapshot opened (a
 * segment's name, or "") before it is put to use, and may fail the open
 * with its return.
 */
struct bfi_packed {
	bfi_snapshot *snap;
	int collection;
	struct bfi_manifest m;
	bfi_snapshot **segs;
};
int bfi__open_pack(const char *path, unsigned flags, struct bfi_packed *pk, struct bfi_bad *bad,
                   int (*each)(void *ctx, const char *segment, bfi_snapshot *s), void *ctx);
/* The snapshot or collection packed at path, opened (collection.c). */
int bfi__open_packed(const char *path, unsigned flags, bfi_snapshot **out, struct bfi_bad *bad,
                     int (*each)(void *ctx, const char *segment, bfi_snapshot *s), void *ctx);
/* Does directory dirfd hold a manifest: is it a collection? */
int bfi__is_collection(int dirfd);
/* The snapshot whose catalog answers for s: s, or a collection's first segment. */
static inline const bfi_snapshot *bfi__catalog_snap(const bfi_snapshot *s)
{
	return s && s->cops ? s->cops->first(s) : s;
}
/* The catalog's meta field key as a decimal number, or dflt when absent or not one. */
unsigned bfi__meta_uint(const bfi_snapshot *snap, const char *key, unsigned dflt);
/* Does bfi_expr_query() form term lists on snap at theta (compile.c)? */
int bfi__query_terms(const bfi_snapshot *snap, double theta);
/*
 * Kernels (kernel.c): AND the k rows of one block, words 64-bit words
 * long, and append base + j for every bit j < limit left set. out must
 * have room for limit ordinals. Returns the count appended. touched, if
 * not NULL, is increased by the bytes of rows read.
 */
typedef size_t (*bfi_and_fn)(const uint8_t *const *rows, uint32_t k, size_t words, uint32_t base,
                             uint32_t limit, uint32_t *out, uint64_t *touched);
size_t bfi__and_rows_portable(const uint8_t *const *rows, uint32_t k, size_t words, uint32_t base,
                              uint32_t limit, uint32_t *out, uint64_t *touched);
size_t bfi__and_rows_avx2(const uint8_t *const *rows, uint32_t k, size_t words, uint32_t base,
                          uint32_t limit, uint32_t *out, uint64_t *touched);
/*
 * out = AND of the n rows, and of mask unless it is NULL, words long. Lines
 * (8 words) where mask is zero are not read; lines are abandoned as soon
 * as they are zero. For the bit vectors of expression queries.
 */
void bfi__and_rows_mask(const uint8_t *const *rows, size_t n, size_t words, const uint64_t *mask,
                        uint64_t *out, uint64_t *touched);
/* The fastest kernel this CPU runs (AVX2 when present), chosen once. */
bfi_and_fn bfi__and_rows(void);
/* Tests: make f the kernel of every query and batch after (NULL: choose again). */
void bfi__use_kernel(bfi_and_fn f);
/*
 * Do threshold queries prune: drop a set once its hits and the terms left
 * cannot reach the threshold, and on the tree a subtree whose node holds
 * too few of the terms? Yes, unless the environment has BFI_PRUNE=off or
 * a test said otherwise. The answers and scores are the same either way;
 * the tests compare them.
 */
int bfi__pruning(void);
/*
 * How, from BFI_PRUNE: off (count every term on every set), the default
 * (prune; a tree whose top level leaves most nodes reads its levels' rows
 * whole), "walk" (a tree always descends), "leaves" (a tree always reads
 * its levels' rows whole). A tree gives the same sets and scores by every
 * path (spec/format.md, "Tree section").
 */
enum { BFI_PRUNE_OFF, BFI_PRUNE_AUTO, BFI_PRUNE_WALK, BFI_PRUNE_LEAVES };
int bfi__prune_mode(void);
/* Tests: a BFI_PRUNE_* mode (1 prunes as by default, 0 does not), or -1: read BFI_PRUNE again. */
void bfi__use_pruning(int mode);
/*
 * Rows of at most this many bytes (eight lines: a block of up to 4,096
 * sets) are short: the AVX2 kernel finishes them line by line, without its
 * two passes, and a batch or a threshold query passes over blocks of them,
 * asking for every line of later items' rows. Answered row after row
 * instead, without that look-ahead, the 320-byte rows of 2,226 documents
 * took a threshold query three times as long.
 */
#define BFI_SHORT_ROW 512

/*
 * Ask for the cache line holding p. GCC counts __builtin_prefetch as free
 * of side effects, so it finds a helper whose only work is prefetching
 * "const" and deletes every call to it; the empty volatile asm is a side
 * effect, and keeps both. tests/prefetch.sh checks the instructions stay.
 */
static inline void bfi__prefetch(const void *p)
{
	__builtin_prefetch(p);
	__asm__ volatile("" : : "r"(p));
}

/* The first set bit in [from, to) of p, or UINT64_MAX (padding.c). */
uint64_t bfi__first_set_bit(const uint8_t *p, uint64_t from, uint64_t to);
/* Is a bit at or past valid set in any of m rows? If so, bad->offset is where. */
int bfi__rows_padding(const bfi_snapshot *s, const uint8_t *rows, uint64_t m, uint64_t row_bytes,
                      uint64_t valid, struct bfi_bad *bad);

/* Deep check of catalog contents against the index (for bfi_verify). */
int bfi__catalog_check_all(bfi_snapshot *snap, struct bfi_bad *bad);

/*
 * Check an LMDB file's pages (reader/lmdbcheck.c) before LMDB reads it, in
 * the same pass as its digest (bfi_digest128) is taken: 0, or
 * BFI_E_CATALOG with *what saying why, and digest filled either way; or
 * -ENOMEM, digest not filled.
 */
int bfi__lmdb_check(const uint8_t *map, uint64_t size, uint8_t digest[16], const char **what);

/* A theta bfi_query_threshold takes: in (0, 1], or BFI_THETA_EVERY. */
static inline int bfi__theta_ok(double theta)
{
	return (theta > 0 && theta <= 1) || theta == BFI_THETA_EVERY;
}

#endif
