/* internal.h - reader-private state; not installed. */
#ifndef BFI_READER_INTERNAL_H
#define BFI_READER_INTERNAL_H

#include <lmdb.h>

#include "bfi.h"
#include "format.h"

/* What a validated index holds: the result of bfi__check_index(). */
struct bfi_layout {
	struct bfi_header hdr;
	struct bfi_section sec[BFI_MAX_SECTIONS];
	uint32_t n_sec;
	int flat_idx;  /* index into sec[], or -1 */
	int plain_idx; /* index into sec[], or -1 */
	int rambo_idx; /* index into sec[], or -1 */
	int tree_idx;  /* index into sec[], or -1 */
	int sums_idx;
	struct bfi_flat_desc flat;
	struct bfi_plain_desc plain;
	struct bfi_rambo_desc rambo;
	struct bfi_tree_desc tree;
	uint64_t n_sets; /* agreed by every layout */
	uint32_t k;
	uint64_t sums_covered; /* chunk checksums cover [BFI_SECTION_ALIGN, this) */
};

/*
 * A flat block, ready to query (spec/format.md, "Flat section"). Rows of
 * whole lines are read in place: row r at rows + r * row_bytes. Packed
 * rows (row_bits not a multiple of 512) run on bit after bit, row r from
 * bit r * row_bits, and a query copies each out to row_bytes bytes of
 * scratch (bfi__unpack_row) before the kernels, which read whole lines.
 */
struct bfi_rblock {
	const uint8_t *rows;
	const uint8_t *pre;  /* union pre-filter bits, or NULL */
	uint64_t m, pre_m;
	int line_pre;        /* the pre-filter takes one 512-bit line per key */
	int packed;
	uint64_t row_bytes;  /* bfi_bits_bytes(n): a row in whole lines, in place or copied out */
	uint64_t row_bits;   /* the stride in the file */
	uint32_t first, n;
};

/* Where a check failed, for bfi_verify(). */
struct bfi_bad {
	uint64_t offset, length;
	const char *what;
};

/*
 * Check the header, the section table and every descriptor of the index
 * mapped at map (size bytes): all of bfi_open()'s O(1) checks. Returns 0
 * or a BFI_E_* code with *bad describing the region at fault.
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

/* A RAMBO repetition, ready to query (spec/format.md, "RAMBO section"). */
struct bfi_rrep {
	const uint8_t *rows; /* row r at rows + r * row_bytes; bit c is cell c */
	uint64_t m, row_bytes;
	const uint8_t *starts;  /* cells + 1 u32 */
	const uint8_t *members; /* n_sets u32 */
	const uint8_t *cell_of; /* n_sets u32 */
};

struct bfi_snapshot;
/* bfi_open(), also telling where a check failed. */
int bfi__open(const char *path, unsigned flags, struct bfi_snapshot **out, struct bfi_bad *bad);

struct bfi_snapshot {
	int dirfd;
	int index_fd;
	const uint8_t *map;
	uint64_t size;
	struct bfi_layout lay;
	struct bfi_rblock *blocks; /* lay.flat.n_blocks of them, if flat */
	uint64_t max_row_bytes;    /* of all blocks: sizes a query's scratch */
	uint64_t max_packed_bytes; /* row_bytes of the widest packed block, 0 if none */
	uint32_t max_block_sets;
	const uint8_t *plain;      /* first plain filter, if plain */
	struct bfi_rrep reps[BFI_MAX_REPS]; /* lay.rambo.reps of them, if rambo */
	struct bfi_rlevel {
		const uint8_t *rows; /* row r at rows + r * row_bytes; bit j is node j */
		const uint8_t *groups; /* explicit trees, levels >= 1: nodes + 1 LE u32, else NULL */
		uint64_t nodes, m, row_bytes;
	} levels[BFI_MAX_LEVELS]; /* lay.tree.levels of them, if tree */
	const uint8_t *tree_pre;  /* the tree's union pre-filter, or NULL */
	/* catalog; env is NULL when opened with BFI_OPEN_NO_CATALOG */
	MDB_env *env;
	MDB_dbi dbi_sets, dbi_names, dbi_meta;
	struct bfi_file_id index_id, catalog_id; /* as opened */
	uint8_t head[BFI_HEADER_SIZE];           /* the index's header, as opened */
	const uint8_t *catalog_map;              /* LMDB's map of the catalog, or NULL */
	uint64_t catalog_map_size;
};

/*
 * Open the catalog that sits in dirfd and bind it to the index in snap:
 * size, then (unless trusted) digest, then LMDB, then snapshot id and set
 * count. Returns 0 or BFI_E_CATALOG_MISMATCH, BFI_E_CATALOG, BFI_E_LMDB, -errno.
 */
int bfi__catalog_open(bfi_snapshot *snap, int trusted, struct bfi_bad *bad);
void bfi__catalog_close(bfi_snapshot *snap);
/* The catalog's meta field key as a decimal number, or dflt when absent or not one. */
unsigned bfi__meta_uint(const bfi_snapshot *snap, const char *key, unsigned dflt);
/* The block holding ordinal ord (which must be < n_sets): a binary search of the blocks. */
static inline const struct bfi_rblock *bfi__block_of(const bfi_snapshot *s, uint32_t ord)
{
	uint32_t lo = 0, hi = s->lay.flat.n_blocks;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->blocks[mid].first <= ord)
			lo = mid;
		else
			hi = mid;
	}
	return &s->blocks[lo];
}

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
 * Rows of at most this many bytes (four lines) are short: the AVX2 kernel
 * finishes them line by line, without its two passes, and a batch passes
 * over blocks of them, asking for every line of later queries' rows.
 */
#define BFI_SHORT_ROW 256

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

/* Deep check of catalog contents against the index (for bfi_verify). */
int bfi__catalog_check_all(bfi_snapshot *snap, struct bfi_bad *bad);

/*
 * Walk an LMDB file's pages (reader/lmdbcheck.c) before LMDB reads it:
 * 0, or BFI_E_CATALOG with *what saying why.
 */
int bfi__lmdb_check(const uint8_t *map, uint64_t size, const char **what);

#endif
