/*
 * bfi.h - read and query bfi snapshots.
 *
 * A snapshot is a directory holding two files written together by
 * bfi_writer (see bfi_writer.h) and never changed afterwards:
 *   index.bfi     the filters, memory-mapped and queried in place;
 *   catalog.mdb   an LMDB file mapping set names to ordinals and back.
 * The index records the catalog's size and digest. bfi_open() refuses a
 * catalog that does not match, and it hands the catalog to LMDB only after
 * the digest matched, because LMDB is not hardened against crafted files.
 *
 * Threads: a bfi_snapshot is immutable after bfi_open() and may be used by
 * any number of threads at once. A bfi_result is scratch space owned by one
 * thread at a time; give each querying thread its own.
 *
 * Errors: every fallible call returns 0 or a negative code; see
 * bfi_error.h and bfi_strerror().
 *
 * Files changed under a reader. A snapshot is replaced only by publishing
 * a new one at its path (bfi_writer_finish() does it atomically; readers
 * of the old one keep it until they close it). Its files are published
 * read-only (mode 0444) and must never be edited, truncated or copied
 * over in place: the reader maps them, so a file that shrinks makes the
 * next read of a page past its end raise SIGBUS, and one overwritten with
 * other bytes of the same size gives wrong answers, false negatives
 * included, without any error. For long-lived readers:
 *   - bfi_check_files() tells, for two fstat calls and a 128-byte read,
 *     whether either file was changed in place since bfi_open(); call it
 *     now and then (a server: before each batch of requests, or once a
 *     second), and on BFI_E_CHANGED close the snapshot and open it again.
 *   - A host that must survive SIGBUS installs a handler (sigaction with
 *     SA_SIGINFO) and asks bfi_mapped_file(snap, info->si_addr) whether
 *     the fault lies in a snapshot's map. If it does, the query cannot be
 *     finished: the handler may siglongjmp out of it (queries hold no
 *     locks and allocate nothing while they read the map) and the host
 *     then reports the file as changed and reopens it; or it writes what
 *     it must with write(2) and calls _exit(2). The bfi command does the
 *     latter. A fault elsewhere is not bfi's: restore the default action
 *     and return, so that the signal is raised again.
 *   - bfi_verify() reads every byte and so catches any change since the
 *     snapshot was written.
 */
#ifndef BFI_H
#define BFI_H

#include <stddef.h>
#include <stdint.h>

#include "bfi_catalog.h"
#include "bfi_error.h"
#include "bfi_hash.h"
#include "bfi_layout.h"
#include "bfi_memory.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bfi_snapshot bfi_snapshot;
typedef struct bfi_result bfi_result;

/* Flags for bfi_open(). */
enum {
	/*
	 * Trust the catalog: skip the digest check (O(1) open whatever the
	 * catalog's size). Only for files from a source you trust, since LMDB
	 * may crash on a crafted catalog. The size and snapshot id are still
	 * checked.
	 */
	BFI_OPEN_TRUSTED = 1u << 0,
	/*
	 * Do not open the catalog at all. Queries return ordinals; calls that
	 * need names or per-set statistics return BFI_E_NO_CATALOG.
	 */
	BFI_OPEN_NO_CATALOG = 1u << 1,
	/*
	 * Do not ask the kernel for 2 MiB page-cache folios. By default the
	 * index is mapped with MADV_HUGEPAGE: pages not yet cached are read in
	 * 2 MiB at a time, and a process then maps them with one fault per
	 * 2 MiB, which makes a fresh process's queries several times faster
	 * on a large snapshot. Give this flag when the snapshot is much larger
	 * than memory and queries land at random, where reading 2 MiB per cold
	 * fault would read more from disk than the kernel's usual readahead.
	 */
	BFI_OPEN_SMALL_PAGES = 1u << 2,
	/*
	 * Ask the kernel to read the whole index into the page cache now
	 * (MADV_WILLNEED), in the background, so that the first queries do
	 * not wait on the disk: for a server about to swap a new snapshot in.
	 */
	BFI_OPEN_WARM = 1u << 3,
	/*
	 * For a pack: copy only the catalog and the index's header, section
	 * table and layout tables into memory, and leave the rest in the
	 * pack, for bfi_scan() to read frame by frame as its queries need
	 * it, within its memory bound: a packed index larger than memory is
	 * scanned with no unpacked copy anywhere. The other query calls and
	 * the zero-copy row views return BFI_E_SCAN_ONLY on such a snapshot;
	 * the catalog calls work. Ignored for a directory, which is mapped.
	 */
	BFI_OPEN_SCAN = 1u << 4,
};

/*
 * Open the snapshot directory at path (or the collection, or the pack:
 * see below).
 *
 * The index is mapped read-only and its header and section table are
 * validated with overflow-safe bounds checks; no data is scanned, so the
 * index costs O(1) to open whatever its size. Unless BFI_OPEN_TRUSTED or
 * BFI_OPEN_NO_CATALOG is given, the catalog is read once to check its
 * digest, which costs O(catalog size).
 *
 * Corrupt data inside a section is not detected here; bfi_verify() does
 * that. A section that passed bfi_open() can never make a query read
 * outside the mapping.
 *
 * Both files are opened through the directory, so they always come from
 * one snapshot. If a writer swaps a new snapshot in at path while this
 * runs and removes the old one's files under it, bfi_open() starts again
 * on the new one (up to 16 times), so a reader that reopens a live path
 * never sees a spurious -ENOENT.
 *
 * Returns 0 and sets *out, or one of: BFI_E_INVALID (a NULL argument or
 * a flag this library does not know); -errno from open/fstat/mmap;
 * BFI_E_NOT_REGULAR (a file of the snapshot is a directory, FIFO, device
 * or socket: refused without blocking);
 * BFI_E_TRUNCATED, BFI_E_SIZE, BFI_E_BAD_MAGIC, BFI_E_BAD_TRAILER,
 * BFI_E_VERSION, BFI_E_INCOMPAT, BFI_E_RESERVED, BFI_E_HEADER_CHECKSUM,
 * BFI_E_TABLE_CHECKSUM, BFI_E_BAD_SECTION, BFI_E_UNKNOWN_SECTION,
 * BFI_E_ENCODING, BFI_E_BAD_LAYOUT, BFI_E_NO_LAYOUT for the index;
 * BFI_E_CATALOG_MISMATCH, BFI_E_CATALOG, BFI_E_LMDB for the catalog.
 *
 * A regular file at path is read as a pack (spec/format.md, "Packs"; bfi
 * pack): every frame is read and checked, and each snapshot's two files
 * are copied into memory (memfd) and opened from there, which costs
 * O(pack size) and memory for the whole index. A file that is not a
 * pack, or a damaged one, gets BFI_E_PACK, BFI_E_PACK_TRUNCATED,
 * BFI_E_PACK_FRAME (or BFI_E_MANIFEST and the manifest's own codes).
 * bfi_verify() verifies a pack's frames and members, then each snapshot
 * in it as above; its report names the file "pack" for the container.
 */
BFI_API BFI_MUST_CHECK int bfi_open(const char *path, unsigned flags, bfi_snapshot **out);

/*
 * Close a snapshot and set *snap to NULL. Every pointer obtained from it
 * (names, section views) becomes invalid. Passing NULL or a pointer to
 * NULL is a no-op. No query may be running on it.
 */
BFI_API void bfi_close(bfi_snapshot **snap);

/*
 * Has either file of the open snapshot been changed in place since
 * bfi_open()? Compares each open file's device, inode, size and
 * modification time with what bfi_open() saw, and the index's header
 * (which names the snapshot) with the one read then: an fstat per file
 * and one read of 128 bytes. A change to other bytes within the file
 * system's timestamp granularity (a few milliseconds) of the last write
 * goes unseen; bfi_verify() sees every byte. Returns 0 if neither
 * changed, BFI_E_CHANGED if one did (answers given since then may be
 * wrong: close the snapshot and open it again), or BFI_E_INVALID. A
 * snapshot replaced by publishing a new one at its path is not a change:
 * the open one stays whole.
 */
BFI_API BFI_MUST_CHECK int bfi_check_files(const bfi_snapshot *snap);

/*
 * Which file of snap the address addr lies in the map of: "index.bfi" or
 * "catalog.mdb" (static strings; of any segment, for a collection), or
 * NULL if neither. It only compares addresses, so a SIGBUS handler may
 * call it.
 */
BFI_API const char *bfi_mapped_file(const bfi_snapshot *snap, const void *addr);

/*
 * This library's version ("0.1.0"), and the index format it writes and
 * reads (*major, *minor; either may be NULL).
 */
BFI_API const char *bfi_version(unsigned *format_major, unsigned *format_minor);

/* Layouts a snapshot can hold: BFI_LAYOUT_* bit flags in bfi_info.layouts (bfi_layout.h). */

/*
 * What a snapshot holds; filled by bfi_info(). Facts of one layout come
 * from bfi_layout_info(), so that a new layout does not change this
 * struct.
 */
struct bfi_info {
	uint16_t major, minor;     /* format version of the file */
	uint64_t compat_flags;     /* compatible feature flags as written */
	uint64_t file_size;        /* bytes in index.bfi */
	uint64_t catalog_size;     /* bytes in catalog.mdb */
	uint8_t snapshot_id[16];   /* binds index and catalog */
	uint8_t catalog_digest[16];
	uint64_t n_sets;           /* sets in the snapshot */
	uint64_t bits;             /* the widest filter of any layout, in bits */
	uint32_t hashes;           /* k: bits set per key (RAMBO may keep its own: bfi_layout_info) */
	uint32_t n_sections;
	unsigned layouts;          /* BFI_LAYOUT_* present (a collection: in every segment) */
	int has_catalog;           /* 0 if opened with BFI_OPEN_NO_CATALOG */
	/*
	 * A collection (spec/format.md, "Collections"): its segments and
	 * manifest generation, and ordinals, which run 0 .. ordinals - 1 with
	 * holes where sets were removed (n_sets counts the live ones). A
	 * snapshot: 0, 0, and ordinals == n_sets. A collection's snapshot_id
	 * is its collection id; file sizes are its segments' sums.
	 */
	uint32_t segments;
	uint64_t generation;
	uint64_t ordinals;
};
BFI_API void bfi_info(const bfi_snapshot *snap, struct bfi_info *info);

/* The flat layout (spec/format.md, "Flat section"). */
struct bfi_flat_info {
	uint32_t blocks;     /* see bfi_block() */
	int size_ordered;    /* ordinals follow set size, not input order */
	int line_prefilters; /* pre-filters probe one 512-bit line per key (LINE_PRE) */
};
/* The RAMBO layout (spec/format.md, "RAMBO section"). */
struct bfi_rambo_info {
	uint32_t reps;     /* R */
	uint64_t cells;    /* B, per repetition */
	uint32_t shards;   /* S */
	int shared_probes; /* built from filters: every repetition tests the same probes */
};
/* The tree layout (spec/format.md, "Tree section"); see bfi_tree_level(). */
struct bfi_tree_info {
	uint32_t levels, fanout;  /* stored levels; children per node */
	uint64_t prefilter_bits;  /* width of the union pre-filter, 0 if none */
	int explicit_groups;      /* child groups listed (the incremental build), not implied */
	uint32_t dropped_levels;  /* levels above the top one, too full to prune, not stored */
	uint64_t dropped_nodes;   /* and their nodes */
};
/*
 * What one layout of a snapshot holds: a tagged union. layout says which
 * member of u is filled (plain has none); u is padded to a fixed size, so
 * a new layout's member, or a new field at the end of one, keeps the
 * struct's size and every existing field where it was: callers built
 * against an older bfi.h read what they know.
 */
struct bfi_layout_info {
	unsigned layout;      /* BFI_LAYOUT_*: the tag */
	const char *name;     /* "flat", "tree", "rambo", "plain" */
	uint64_t n_sets;      /* sets it holds: every layout of a snapshot holds them all */
	uint32_t hashes;      /* k of this layout */
	uint64_t bits;        /* its widest filter, in bits */
	uint64_t offset;      /* of its section in index.bfi */
	uint64_t size;        /* bytes of its section */
	union {
		struct bfi_flat_info flat;
		struct bfi_rambo_info rambo;
		struct bfi_tree_info tree;
		uint64_t reserved[16]; /* the union's size, whatever its members */
	} u;
};
/*
 * Facts of layout (one BFI_LAYOUT_* flag) of the snapshot. Returns 0,
 * BFI_E_NO_LAYOUT if the snapshot lacks it, or BFI_E_INVALID.
 */
BFI_API BFI_MUST_CHECK int bfi_layout_info(const bfi_snapshot *snap, unsigned layout,
                                           struct bfi_layout_info *out);
/* One of a layout's own parameters, as its descriptor records it (bfi_layout_params). */
struct bfi_layout_param {
	const char *name; /* as bfi build --layout-option LAYOUT.NAME=VALUE takes it */
	uint64_t value;
};
/*
 * The parameters layout (one BFI_LAYOUT_* flag) of snap records of its
 * own, up to cap of them into out: how many it has (0: none), or
 * BFI_E_NO_LAYOUT if the snapshot lacks it, or BFI_E_INVALID.
 */
BFI_API BFI_MUST_CHECK int bfi_layout_params(const bfi_snapshot *snap, unsigned layout,
                                             struct bfi_layout_param *out, size_t cap);
/*
 * Set ord's own filter as layout (one BFI_LAYOUT_* flag) of snap holds it,
 * in place: *bits (m bits, bit i at byte i / 8, bit i % 8) and *m. For the
 * layouts that keep each set's filter whole, such as plain. 0,
 * BFI_E_NO_LAYOUT, BFI_E_NOT_FOUND (ordinal out of range) or
 * BFI_E_INVALID (a layout whose filters are not kept whole).
 */
BFI_API BFI_MUST_CHECK int bfi_layout_set_filter(const bfi_snapshot *snap, unsigned layout,
                                                 uint32_t ord, const uint8_t **bits, uint64_t *m);
/* What a layout's filters, as filled, lead one to expect of false positives (bfi_layout_fpr). */
struct bfi_fpr_model {
	/*
	 * The mean over live sets of the chance that a key no set holds passes
	 * the filters that answer for the set: (fill)^k of its own filter
	 * (flat, plain, the tree's leaves, from the fill the catalog records);
	 * for RAMBO the product over repetitions of its cell's (fill)^k. The
	 * expected share of (key, set) pairs a set answers falsely.
	 */
	double expected;
	/*
	 * RAMBO: p of its paper's Lemma 4.1, a cell's (fill)^k averaged over
	 * the sets in it and the repetitions; the rate for a key V sets hold is
	 * then (p q + 1 - q)^R with q = (1 - 1/B)^V. 0 for other layouts.
	 */
	double cell;
};
/*
 * The false-positive model of layout (one BFI_LAYOUT_* flag) of snap, into
 * *out: 0, BFI_E_NO_LAYOUT, BFI_E_INVALID (RAMBO of a collection, whose
 * segments each have their own), BFI_E_SCAN_ONLY, or an error reading the
 * catalog. Reads every RAMBO row: O(size of the layout).
 */
BFI_API BFI_MUST_CHECK int bfi_layout_fpr(const bfi_snapshot *snap, unsigned layout,
                                          struct bfi_fpr_model *out);

/* One block of the flat layout: sets [first_set, first_set + n_sets). */
struct bfi_block_info {
	uint64_t first_set, n_sets;
	uint64_t bits;           /* filter width of the block's sets */
	uint64_t row_bits;       /* bits from one row to the next: n_sets when packed */
	uint64_t prefilter_bits; /* width of the union pre-filter, 0 if none */
	uint64_t offset;         /* of the block's first row in index.bfi */
};
/* Returns 0, or BFI_E_INVALID if there is no flat layout or i >= its blocks. */
BFI_API BFI_MUST_CHECK int bfi_block(const bfi_snapshot *snap, uint32_t i,
                                     struct bfi_block_info *out);

/*
 * Zero-copy view of flat block i: *rows points at its rows (bit c of row r
 * is bit r * row_bits + c), *bytes of them, and *pre at its pre-filter's
 * ceil(prefilter_bits / 512) * 64 bytes, or NULL; inside the map, valid
 * until bfi_close(), do not modify. For bfi compact and bfi merge.
 * Returns 0 or BFI_E_INVALID (also for a block of a grouped run: see
 * bfi_block_unpack()).
 */
BFI_API BFI_MUST_CHECK int bfi_block_rows(const bfi_snapshot *snap, uint32_t i,
                                          const uint8_t **rows, uint64_t *bytes,
                                          const uint8_t **pre);
/*
 * Flat block i's rows copied into dst, in the form bfi_block_rows() shows
 * (bit c of row r is bit r * row_bits + c, then zeros): bytes must be
 * that form's size, ceil((bits * row_bits + 64) / 512) * 64 for packed
 * rows. A block of a grouped run (spec/format.md, "Grouped blocks")
 * shares its rows' lines with its run's other blocks, so it has no view
 * in place; bfi_block_rows() refuses it, and this copies it out. Returns
 * 0 or BFI_E_INVALID.
 */
BFI_API BFI_MUST_CHECK int bfi_block_unpack(const bfi_snapshot *snap, uint32_t i, uint8_t *dst,
                                            uint64_t bytes);

/*
 * Segment i of a collection (0 .. bfi_info's segments - 1). Its set j is
 * the collection's global ordinal first + j, unless removed (bfi_set_name
 * of the collection then answers BFI_E_NOT_FOUND). A snapshot is its own
 * segment 0, named "". Returns 0 or BFI_E_INVALID.
 */
struct bfi_segment_info {
	const bfi_snapshot *snap; /* the segment, open until bfi_close() of the collection */
	uint64_t first;           /* the global ordinal of its set 0 */
	uint64_t n_sets;          /* sets it holds */
	uint64_t live;            /* of them, those not removed */
	char name[40];            /* its directory in the collection */
};
BFI_API BFI_MUST_CHECK int bfi_segment(const bfi_snapshot *snap, uint32_t i,
                                       struct bfi_segment_info *out);

/* One cell of a RAMBO repetition: how many sets it merges, and its fill. */
struct bfi_rambo_cell_info {
	uint64_t sets;     /* members */
	uint64_t bits_set; /* ones in its filter */
};
/*
 * The width of repetition rep's filters in *m, and, if cells is not NULL,
 * one entry per cell (bfi_layout_info's u.rambo.cells of them). Reads all the
 * repetition's rows: O(m * B / 8) bytes. Returns 0, BFI_E_INVALID (no rambo
 * layout, or rep out of range) or BFI_E_BAD_LAYOUT (a damaged cell table).
 */
BFI_API BFI_MUST_CHECK int bfi_rambo_rep(const bfi_snapshot *snap, uint32_t rep, uint64_t *m,
                                         struct bfi_rambo_cell_info *cells);

/*
 * Zero-copy view of repetition rep's rows: *rows points at m rows of
 * *row_bytes bytes each (bit c of a row is cell c), inside the map; valid
 * until bfi_close(), do not modify. For bfi fold and bfi stack. Returns 0
 * or BFI_E_INVALID.
 */
BFI_API BFI_MUST_CHECK int bfi_rambo_rows(const bfi_snapshot *snap, uint32_t rep,
                                          const uint8_t **rows, uint64_t *m, uint64_t *row_bytes);

/*
 * Zero-copy view of level l's rows of the tree layout: *rows points at m
 * rows of *row_bytes bytes each (bit j of a row is node j; at level 0 the
 * sets in ordinal order), inside the map; valid until bfi_close(), do not
 * modify. For bfi compact and bfi merge. Returns 0 or BFI_E_INVALID.
 */
BFI_API BFI_MUST_CHECK int bfi_tree_rows(const bfi_snapshot *snap, uint32_t l,
                                         const uint8_t **rows, uint64_t *m, uint64_t *row_bytes);

/*
 * Width in bits and node count of level l of the tree layout (0: the sets).
 * If fill is not NULL, it receives the mean fill ratio of the level's nodes
 * and fpr the mean of (fill)^k, their expected false-positive rate; that
 * reads the whole level, O(m * nodes / 8) bytes. Returns 0, -ENOMEM, or
 * BFI_E_INVALID (no tree, or l out of range).
 */
BFI_API BFI_MUST_CHECK int bfi_tree_level(const bfi_snapshot *snap, uint32_t l, uint64_t *nodes,
                                          uint64_t *m, double *fill, double *fpr);

/* One entry of the section table (spec/format.md, "Section table"). */
struct bfi_section_info {
	uint32_t kind;       /* 1 flat, 2 chunk checksums, 3 plain, 4 rambo, 5 tree */
	uint16_t encoding;   /* 0 raw; 1 (zstd) is reserved for later kinds, refused in these */
	uint16_t flags;
	uint64_t offset;     /* absolute, in index.bfi */
	uint64_t stored_size;
	uint64_t size;       /* uncompressed */
	uint64_t checksum;   /* XXH3-64 of the stored bytes */
};
/* Returns 0, or BFI_E_INVALID if i >= n_sections. */
BFI_API BFI_MUST_CHECK int bfi_section(const bfi_snapshot *snap, uint32_t i,
                                       struct bfi_section_info *out);
/* A short name for a section kind, such as "flat"; never NULL. */
BFI_API const char *bfi_section_kind_name(uint32_t kind);

/*
 * Results. A bfi_result holds the ordinals matched by the last query run
 * into it, in ascending order, plus scratch space so that queries do not
 * allocate once it has grown. Reuse one per thread.
 */
BFI_API BFI_MUST_CHECK int bfi_result_create(bfi_result **out);
/* Free a result and set *res to NULL; NULL-safe. */
BFI_API void bfi_result_destroy(bfi_result **res);
BFI_API size_t bfi_result_count(const bfi_result *res);
/*
 * The matched ordinals. Valid until the next query into res or
 * bfi_result_destroy(). Do not modify or free them.
 */
BFI_API const uint32_t *bfi_result_ordinals(const bfi_result *res);

/*
 * Which sets may contain key? Never misses a set that holds the key;
 * may return sets that do not (false positives, at the rate that
 * bfi_set_fpr() estimates). Uses the flat layout when the snapshot has
 * one, else the tree, else RAMBO, else plain. Returns 0 or -ENOMEM,
 * BFI_E_INVALID.
 */
BFI_API BFI_MUST_CHECK int bfi_query_key(const bfi_snapshot *snap, const void *key,
                                         size_t len, bfi_result *res);
/* The same on one given layout (any BFI_LAYOUT_*, or 0 for the default,
 * as bfi_query_expr takes it), without allocating; BFI_E_NO_LAYOUT if the
 * snapshot lacks it. */
BFI_API BFI_MUST_CHECK int bfi_query_key_layout(const bfi_snapshot *snap, unsigned layout,
                                                const void *key, size_t len, bfi_result *res);

/*
 * Query expressions: keys combined with AND, OR and parentheses.
 *
 * Syntax: a key is a run of bytes other than blanks, '(', ')' and '"', or
 * a "quoted string" in which \" and \\ stand for " and \. The words AND
 * and OR (upper case) are operators; quote them to search for them. Keys
 * side by side are ANDed, so `a b c` is `a AND b AND c`; AND binds tighter
 * than OR. Nesting is limited to 64 levels and a query to 65,536 keys.
 * A bfi_expr is immutable once made and may be shared by threads.
 */
typedef struct bfi_expr bfi_expr;
/*
 * Parse text. Returns 0, BFI_E_SYNTAX (with *err_at, if not NULL, set to
 * the byte offset of the problem), BFI_E_LIMIT (more than 64 levels of
 * parentheses, *err_at at the '(' too many, or more than 65,536 keys) or
 * -ENOMEM.
 */
BFI_API BFI_MUST_CHECK int bfi_expr_parse(const char *text, size_t len, bfi_expr **out,
                                          size_t *err_at);
/* An expression of exactly one key (any bytes, no syntax). */
BFI_API BFI_MUST_CHECK int bfi_expr_key(const void *key, size_t len, bfi_expr **out);
/*
 * A list of terms for bfi_query_threshold(), from n keys; repeated keys
 * count once.
 */
BFI_API BFI_MUST_CHECK int bfi_expr_terms(const void *const *keys, const size_t *lens, size_t n,
                                          bfi_expr **out);
/* Keys in the expression (terms, for a term list). */
BFI_API size_t bfi_expr_keys(const bfi_expr *e);
/*
 * A term list's own threshold: the sets holding at least need of its terms
 * answer it in every threshold query (bfi_query_threshold, bfi_scan, ...),
 * whatever theta the call is given; need 0 answers every set with its
 * score, as BFI_THETA_EVERY does. For thresholds that differ query by
 * query in one batch or scan. Returns 0, or BFI_E_INVALID (e not a term
 * list, or need above its terms).
 */
BFI_API BFI_MUST_CHECK int bfi_expr_set_need(bfi_expr *terms, uint32_t need);
/*
 * The k-mer lemma as terms's threshold (bfi_expr_set_need): a read with
 * errors substitutions, insertions or deletions against its source has at
 * most errors * k of its k-mer positions touched by one, so the source
 * holds all but at most errors * k of the read's distinct k-mers. need is
 * terms - errors * k, or 0 (every set) when that is not positive: no
 * true set is left out. terms: a sequence's k-mers of length k
 * (bfi_expr_kmers; k 0: the length they were made with). Returns 0 or
 * BFI_E_INVALID.
 */
BFI_API BFI_MUST_CHECK int bfi_expr_set_errors(bfi_expr *terms, unsigned k, unsigned errors);
/*
 * The terms a set must hold to answer the term list terms at theta: its
 * own need if set, else ceil(theta * terms) and at least 1 (0 at
 * BFI_THETA_EVERY); 0 for anything else.
 */
BFI_API uint32_t bfi_expr_need(const bfi_expr *terms, double theta);
/*
 * A path query over a snapshot of JSON or XML documents (spec/format.md,
 * "Path keys"): "/a/b" from the root, "a/b" anywhere, a "*" step for one or
 * more elements, a backslash escaping a '/' or '*' in a name. Rewritten into an
 * expression over the keys of the encoding the snapshot records. Returns 0,
 * BFI_E_SYNTAX, BFI_E_LIMIT (more than 64 names), BFI_E_INVALID (the
 * snapshot holds no path keys, or no catalog) or -ENOMEM.
 */
BFI_API BFI_MUST_CHECK int bfi_expr_path(const bfi_snapshot *snap, const char *path, size_t len,
                                         bfi_expr **out);
/* What bfi_expr_text() makes of a text. */
enum {
	BFI_TEXT_ALL = 0,   /* the AND of its terms: the documents holding every one */
	BFI_TEXT_TERMS = 1, /* a term list, for bfi_query_threshold() */
};
/*
 * A text query over a snapshot of text documents (spec/format.md, "Text
 * keys"): its distinct terms, split by the tokenizer the catalog records
 * (term length limit, stop words; the defaults where it records none), as
 * how says. With BFI_TEXT_ALL and no terms left, *out is NULL and 0 is
 * returned: such a query matches no set. Returns 0, BFI_E_LIMIT (more than
 * 65,536 terms: it stops reading there), BFI_E_KEY_FORM (the catalog
 * records that the keys were made from input other than text, such as
 * k-mers, so text queries would match nothing), BFI_E_INVALID or -ENOMEM.
 * The time it takes grows with the text's length, not with its terms
 * squared.
 */
BFI_API BFI_MUST_CHECK int bfi_expr_text(const bfi_snapshot *snap, const char *text, size_t len,
                                         int how, bfi_expr **out);
/*
 * A DNA sequence over a snapshot of genomes (spec/format.md, "k-mer
 * keys"): the term list of its k-mers, for bfi_query_threshold(); k is the
 * k-mer length, or 0 for the one the catalog records. Returns 0,
 * BFI_E_KEY_FORM (the catalog records another k-mer length, or keys made
 * from input other than sequences: such k-mers would match nothing),
 * BFI_E_LIMIT (more than 65,536 distinct k-mers), BFI_E_INVALID (no k, or k
 * out of 1..BFI_KMER_MAX) or -ENOMEM.
 */
BFI_API BFI_MUST_CHECK int bfi_expr_kmers(const bfi_snapshot *snap, const char *seq, size_t len,
                                          unsigned k, bfi_expr **out);
/*
 * A protein sequence over a snapshot of proteins (spec/format.md,
 * "Protein k-mer keys"): the term list of its amino-acid k-mers, as
 * bfi_expr_kmers makes a DNA sequence's; k 0 for the catalog's. Returns 0,
 * BFI_E_KEY_FORM (a snapshot of DNA, text or paths, or of another k),
 * BFI_E_INVALID, BFI_E_LIMIT (more than 65,536 k-mers) or -ENOMEM.
 */
BFI_API BFI_MUST_CHECK int bfi_expr_protein(const bfi_snapshot *snap, const char *seq,
                                            size_t len, unsigned k, bfi_expr **out);
/* Free an expression and set *e to NULL; NULL-safe. */
BFI_API void bfi_expr_free(bfi_expr **e);

/*
 * Which sets may satisfy e? layout is BFI_LAYOUT_FLAT, BFI_LAYOUT_PLAIN,
 * BFI_LAYOUT_RAMBO, BFI_LAYOUT_TREE or 0 for the best the snapshot holds
 * (flat, else tree, else rambo, else plain). No false negatives: a set holding the
 * keys the expression needs is always returned. Returns 0, BFI_E_NO_LAYOUT,
 * BFI_E_INVALID or -ENOMEM.
 */
BFI_API BFI_MUST_CHECK int bfi_query_expr(const bfi_snapshot *snap, unsigned layout,
                                          const bfi_expr *e, bfi_result *res);

/*
 * Threshold query: score every set by how many of the terms it may hold
 * and return those with score >= ceil(theta * terms), theta in (0, 1],
 * ranked by score (highest first, then by ordinal). bfi_result_scores()
 * gives the scores. terms must come from bfi_expr_terms(). theta
 * BFI_THETA_EVERY returns every live set with its score, 0 included (a
 * threshold of no terms): every ratio, as a matrix of all sets shows it.
 *
 * A set is dropped as soon as it can no longer reach the threshold, and on
 * the tree a subtree whose node holds too few of the terms is skipped:
 * the answer and scores are those of counting every term on every set
 * (which BFI_PRUNE=off in the environment does). res is the query's
 * scratch as well as its answer: what the pruning needs grows in it and is
 * kept, so a thread that answers query after query in one result
 * allocates nothing once it has grown.
 */
#define BFI_THETA_EVERY (-1.0)
BFI_API BFI_MUST_CHECK int bfi_query_threshold(const bfi_snapshot *snap, unsigned layout,
                                               const bfi_expr *terms, double theta,
                                               bfi_result *res);
/*
 * Scan: answer n queries in one pass over the index instead of from its
 * mapping, for an index larger than memory (bfi query --scan). The pass
 * takes layout (0: the first the snapshot holds, as bfi_query_expr
 * chooses) part by part: a flat block or grouped run, a run of plain
 * filters that fits memory, a tree or RAMBO whole. For each part it reads
 * the pages the queries need there once, with pread, dropping them from
 * the page cache as it goes, and answers every query on that part; the
 * mapping's pages are never touched. At most memory bytes (0: no bound)
 * of those pages are held at once. A part whose pages pass it is read
 * once still, range of rows by range, if a row per key of the batch (for
 * RAMBO one a repetition, for a tree one a level) fits in memory beside a
 * few of its rows; if not, in rounds of queries, which read again the
 * pages they share. (Plain filters are taken in runs that fit memory: only
 * one filter wider than memory goes in rounds.) Query i's answer goes to res[i]: the same sets (and
 * scores) bfi_query_expr() or, for a term list, bfi_query_threshold() at
 * theta gives on that layout. A collection is scanned segment by segment,
 * its answers in global ordinals as bfi_query_expr() gives them. st, if
 * not NULL, counts what was read. memory bounds the answers too: once
 * they pass seven eighths of it, the scan stops with BFI_E_LIMIT, and the
 * caller answers the batch in smaller ones (bfi query halves it).
 */
struct bfi_scan_stats {
	uint64_t bytes_read; /* of the index, by pread */
	uint64_t reads;      /* preads of coalesced runs */
	uint64_t passes;     /* passes over the index: 1 */
	uint64_t rounds;     /* rounds of queries over a part */
	uint64_t peak;       /* the most bytes one round or range held: pages, and state */
	uint64_t ranges;     /* ranges read by passes over a part's rows */
	uint64_t answers;    /* the most bytes the answers held at a part's start */
	uint64_t packed;     /* a pack read in place: its compressed bytes decompressed */
	/*
	 * Of bytes_read, what the thread that read the most read, summed over
	 * the rounds and ranges (bfi_scan_parallel): bytes_read / busiest is
	 * how far the reads spread over the threads. bfi_scan leaves it as
	 * it was, for a caller built when this struct ended at packed.
	 */
	uint64_t busiest;
	/*
	 * The state a pass over a part's rows held (or needed, and so was
	 * declined) for each key of the batch, in bytes: the most over the
	 * parts, a key's share; 0 if no part took such a pass. A key that a
	 * flat block's pre-filter rules out holds no row there, so on blocks
	 * of distinct sets this is well below bfi_scan_cost's key_state, which
	 * counts a key every part may hold. A caller sizing later batches by
	 * it (bfi query does) fits more keys in each (bfi_scan_parallel only;
	 * bfi_scan, like busiest, leaves it as it was).
	 */
	uint64_t key_state;
};
BFI_API BFI_MUST_CHECK int bfi_scan(const bfi_snapshot *snap, unsigned layout,
                                    const bfi_expr *const *qs, size_t n, double theta,
                                    bfi_result *const *res, uint64_t memory,
                                    struct bfi_scan_stats *st);
/*
 * bfi_scan with the reads of each round or range of rows split over up to
 * threads threads (1 to BFI_SCAN_THREADS_MAX), each a share of the pages
 * in file order: the reads' work in the kernel, most of a scan's, then
 * takes as many cores. The answers are bfi_scan's. A pack scanned in
 * place is read on one thread.
 */
#define BFI_SCAN_THREADS_MAX 64
BFI_API BFI_MUST_CHECK int bfi_scan_parallel(const bfi_snapshot *snap, unsigned layout,
                                             const bfi_expr *const *qs, size_t n, double theta,
                                             bfi_result *const *res, uint64_t memory,
                                             unsigned threads, struct bfi_scan_stats *st);
/*
 * What bfi_scan holds beside the index pages it reads, for a caller that
 * sizes its batches to fit a memory bound (bfi query): memory counts
 * the batch's answers as they grow, and the pages a pass may hold are
 * what is left. A pass over a part's rows that reads each page once
 * keeps key_state bytes for each key of the batch; if the batch's state
 * does not fit beside a range of rows, the part is answered in rounds
 * of queries that read shared pages again. fixed is what a scan holds
 * whatever its batch (a query's scratch, sized for the sets, and the
 * least range of rows it reads). A key no set holds is expected to name
 * key_matches of the sets (the layout's false-positive model); a term
 * list of more than two terms, whose false matches must pass its
 * threshold, answer_sets (64). A caller that has seen what batches
 * really match and hold (bfi_scan_stats: key_state) may set them in its
 * copy (bfi_scan_query_bytes reads them).
 */
struct bfi_scan_cost {
	uint64_t key_state;
	uint64_t fixed;
	uint64_t sets;
	double key_matches;
	double answer_sets;
};
BFI_API BFI_MUST_CHECK int bfi_scan_cost(const bfi_snapshot *snap, unsigned layout,
                                         struct bfi_scan_cost *out);
/*
 * The bytes a query of keys keys (term_list: a term list) is expected to
 * hold in a scan, by c: its keys' state in a pass, its answer (a 4-byte
 * ordinal a set, and a 4-byte score for a term list, and half again for
 * the allocator; at most every set), and its compiled expression (48 bytes a key, 320 a
 * query).
 */
BFI_API uint64_t bfi_scan_query_bytes(const struct bfi_scan_cost *c, uint64_t keys, int term_list);

/*
 * Scores of the last query into res, parallel to bfi_result_ordinals(), or
 * NULL if it was not a threshold query. Same lifetime as the ordinals.
 */
BFI_API const uint32_t *bfi_result_scores(const bfi_result *res);

/*
 * Answer n expressions together. On a flat layout whose blocks all have
 * short rows (at most 512 bytes: a few genomes' k-mers, a small
 * collection), the batch passes over each block once, answering every
 * query in it while the rows of later queries are already on their way.
 * Otherwise queries are answered one after another, with the pre-filter
 * lines of the next asked for ahead: a long row is streamed whole and no
 * two queries share one, so passes over blocks gain nothing there. Each is
 * then answered in one working result that res[0] keeps (freed with it)
 * and its answer copied to its own result, which so holds only what it
 * needs.
 * res[i] receives exactly what bfi_query_expr(snap, layout, qs[i], res[i])
 * would; the n results must be distinct objects. Returns 0 or the first
 * error; after an error the results are unspecified (some queries may
 * have been answered).
 */
BFI_API BFI_MUST_CHECK int bfi_query_batch(const bfi_snapshot *snap, unsigned layout,
                                           const bfi_expr *const *qs, size_t n,
                                           bfi_result *const *res);

/*
 * Answer n queries of one key each, given as key hashes (bfi_hash_key), all
 * into res: the sets of key i are bfi_result_ordinals(res)[from .. ends[i]),
 * where from is 0 for key 0 and ends[i - 1] after it, ascending, exactly
 * those bfi_query_key_layout would give; ends holds n entries. With bytes
 * counted, bfi_result_touched gives the sum over the keys. On a flat
 * layout whose blocks all have short rows (a few genomes' k-mers, a small
 * collection), the keys run through one loop a block that asks for later
 * keys' rows while answering earlier ones, reading the keys from one
 * array and writing the answers one after another: the cheapest way to
 * answer many keys. Elsewhere the keys are answered one at a time.
 * Returns 0, BFI_E_INVALID, BFI_E_NO_LAYOUT or -ENOMEM; after an error res
 * and ends are unspecified.
 */
BFI_API BFI_MUST_CHECK int bfi_query_keys(const bfi_snapshot *snap, unsigned layout,
                                          const bfi_keyhash *keys, size_t n, bfi_result *res,
                                          size_t *ends);

/*
 * Blank-separated words (spaces and tabs) as a term list, each word a key
 * as given: the form of a threshold query on a snapshot of keys. Returns
 * 0, BFI_E_LIMIT (more than 65,536 words), BFI_E_INVALID or -ENOMEM.
 */
BFI_API BFI_MUST_CHECK int bfi_expr_words(const char *text, size_t len, bfi_expr **out);
/* How a query's text is made into keys (struct bfi_form). */
enum {
	BFI_FORM_AUTO = 0,  /* as the snapshot's keys were made (its catalog's "input" and "kmer") */
	BFI_FORM_KEY = 1,   /* the text as one key, byte for byte (bfi_expr_key) */
	BFI_FORM_EXPR = 2,  /* an expression of keys (bfi_expr_parse) */
	BFI_FORM_PATH = 3,  /* a path (bfi_expr_path), on a snapshot of paths */
	BFI_FORM_TEXT = 4,  /* a text's terms (bfi_expr_text) */
	BFI_FORM_KMERS = 5, /* a DNA sequence's k-mers (bfi_expr_kmers) */
	BFI_FORM_WORDS = 6, /* blank-separated words, each a key as given (bfi_expr_words) */
	BFI_FORM_PROTEIN = 7, /* a protein sequence's amino-acid k-mers (bfi_expr_protein) */
};
/* A query form, as bfi_query_form() settles it. */
struct bfi_form {
	int form;     /* BFI_FORM_*, never AUTO */
	unsigned k;   /* KMERS: the k-mer length; else 0 */
	double theta; /* a term list's share of terms a set must hold (KMERS, WORDS, and TEXT
	               * when above 0); 0 for the rest, TEXT then asking for every term */
};
/*
 * Settle the form of queries on snap, as `bfi query` does with the same
 * options: form (BFI_FORM_AUTO for none given), k for BFI_FORM_KMERS (0:
 * the catalog's) and theta (0: none; else in (0, 1], or BFI_THETA_EVERY:
 * every set's score) into *out.
 * - AUTO takes the catalog's key rules: a sequence's k-mers where the
 *   keys were k-mers of a recorded k, a text's terms on text, a path on
 *   paths, else the text as one key.
 * - With theta > 0 a key becomes blank-separated words, a term list.
 *   KMERS and WORDS are always term lists (theta 1 if 0 is given).
 * - A form that would match nothing given how the keys were made (text
 *   or paths on k-mers, another k, a path on keys) is BFI_E_KEY_FORM.
 * A snapshot opened without its catalog has no rules: AUTO is a key, and
 * any form may be asked for. Returns 0, BFI_E_KEY_FORM, or BFI_E_INVALID
 * (theta out of range or with EXPR or PATH, KMERS with no k given or
 * recorded, k above BFI_KMER_MAX, an unknown form).
 */
BFI_API BFI_MUST_CHECK int bfi_query_form(const bfi_snapshot *snap, int form, unsigned k,
                                          double theta, struct bfi_form *out);
/* Form's name ("auto", "key", "expr", "path", "text", "kmers", "words", "protein"), or NULL. */
BFI_API const char *bfi_form_name(int form);
/* The BFI_FORM_* named name (len bytes), as bfi_form_name() spells it, or -1. */
BFI_API int bfi_form_parse(const char *name, size_t len);
/*
 * Why bfi_query_form() refuses form (with k, for BFI_FORM_KMERS) on snap,
 * from the catalog's key rules, into why (cap bytes): how the keys were
 * made and what the form would match, such as "its keys are 31-mers, so
 * 21-mers would match nothing". Returns 0, or BFI_E_INVALID when the form
 * is not refused.
 */
BFI_API BFI_MUST_CHECK int bfi_form_refused(const bfi_snapshot *snap, int form, unsigned k,
                                            char *why, size_t cap);
/*
 * Compile text as form f says, by the call its BFI_FORM_* names. *out may
 * be NULL with 0 returned (a text of stop words): no set matches. err_at,
 * if not NULL, receives bfi_expr_parse's offset of a syntax error.
 * Returns 0, BFI_E_INVALID, or an error of the compiler it calls.
 */
BFI_API BFI_MUST_CHECK int bfi_expr_form(const bfi_snapshot *snap, const struct bfi_form *f,
                                         const char *text, size_t len, bfi_expr **out,
                                         size_t *err_at);
/*
 * Answer a compiled query e into res: a term list with
 * bfi_query_threshold() at theta (1 when 0: every term), anything else
 * with bfi_query_expr(). A query with no keys or terms (e NULL, or an
 * empty term list) has no sets, and scores (though none) if it is a term
 * list or theta is above 0, a term list's form (bfi_query_form).
 * The one place where every query form of the library and the tools is
 * answered. Returns 0 or an error of those calls.
 */
BFI_API BFI_MUST_CHECK int bfi_query_compiled(const bfi_snapshot *snap, unsigned layout,
                                              const bfi_expr *e, double theta, bfi_result *res);
/* Compile text by form f (bfi_expr_form) and answer it (bfi_query_compiled). */
BFI_API BFI_MUST_CHECK int bfi_query_as(const bfi_snapshot *snap, unsigned layout,
                                        const struct bfi_form *f, const char *text, size_t len,
                                        bfi_result *res);
/*
 * A query as the snapshot's keys were made, as `bfi query` forms it given
 * no query options: bfi_query_form() with BFI_FORM_AUTO, then
 * bfi_expr_form(). *out may be NULL with 0 returned (a text of stop
 * words): no set matches.
 */
BFI_API BFI_MUST_CHECK int bfi_expr_query(const bfi_snapshot *snap, const char *text,
                                          size_t len, double theta, bfi_expr **out);
/* Form text as bfi_expr_query() does and answer it (bfi_query_as). */
BFI_API BFI_MUST_CHECK int bfi_query_text(const bfi_snapshot *snap, unsigned layout,
                                          const char *text, size_t len, double theta,
                                          bfi_result *res);

/*
 * findere (Robidou and Peterlongo, 2021): the sequence seq's (k+z)-mers
 * answered from an index of its k-mers (k: the catalog's, or 0; a
 * snapshot of proteins takes amino-acid k-mers, as bfi_expr_protein). A
 * (k+z)-mer counts for a set when each of its z+1 k-mers is found there,
 * so false k-mers must come z+1 in a row to make a false (k+z)-mer. The
 * terms are seq's distinct canonical (k+z)-mers (*terms: how many); the
 * answer, with scores, the sets holding at least ceil(theta * terms) of
 * them (every set at BFI_THETA_EVERY), ranked as bfi_query_threshold
 * ranks. z = 0 is bfi_query_threshold on bfi_expr_kmers' term list. z at
 * most 64. Returns 0, BFI_E_KEY_FORM (a snapshot not of k-mers, or of
 * another k), BFI_E_INVALID or -ENOMEM.
 */
BFI_API BFI_MUST_CHECK int bfi_query_findere(const bfi_snapshot *snap, unsigned layout,
                                             const char *seq, size_t len, unsigned k,
                                             unsigned z, double theta, bfi_result *res,
                                             size_t *terms);

/*
 * A whole sequence file as one query (kmindex's --single-query): the
 * distinct k-mers of seq (k: the catalog's, or 0; records joined by any
 * byte other than a base, which breaks k-mers), however many: past a
 * term list's 65,536 they are asked a list at a time and each set's score
 * summed, so the answer, with scores, is that of one term list of them
 * all: the sets holding at least ceil(theta * terms) of them (every set
 * at BFI_THETA_EVERY), ranked. *terms: the distinct k-mers. Returns 0,
 * BFI_E_KEY_FORM, BFI_E_INVALID or -ENOMEM.
 */
BFI_API BFI_MUST_CHECK int bfi_query_whole(const bfi_snapshot *snap, unsigned layout,
                                           const char *seq, size_t len, unsigned k, double theta,
                                           bfi_result *res, size_t *terms);

/* What bfi_query_many() answers. */
enum {
	BFI_MANY_SEQUENCES = 1, /* sequences, each by its k-mers: DNA's, or a protein snapshot's amino acids' */
	BFI_MANY_TEXTS = 2,     /* texts, each by its terms (bfi_expr_text) */
	BFI_MANY_QUERIES = 3,   /* queries, each as the snapshot's keys were made (bfi_query_text) */
};
/*
 * BFI_MANY_SEQUENCES | BFI_MANY_ERRORS(e): each sequence's threshold by
 * the k-mer lemma for e errors (bfi_expr_set_errors), theta unused; e in
 * 1 .. 0x7fffff. A library older than it refuses the call (BFI_E_INVALID).
 */
#define BFI_MANY_ERRORS(e) ((int)(e) << 8)
/*
 * Answer n sequences or texts, given end to end in buf (query i is
 * buf[from .. ends[i]), from being 0 for query 0 and ends[i - 1] after it),
 * all into res as bfi_query_keys() does: the answer of query i is
 * bfi_result_ordinals(res)[from .. answer_ends[i]), and with scores its
 * bfi_result_scores() alongside. Each answer is exactly what compiling
 * that query (bfi_expr_kmers() with k, or bfi_expr_text()) and asking
 * bfi_query_threshold() with theta gives (BFI_THETA_EVERY too), ranked; a texts' theta of 0 asks
 * for the documents holding every term instead (BFI_TEXT_ALL and
 * bfi_query_expr(), no scores). A query with no terms (a sequence shorter
 * than k, a text of stop words) has an empty answer. res's deadline and
 * byte counting apply to each query; bfi_result_touched() gives the sum.
 * One call answers many queries with no object per query, so that a
 * caller paying for each call (a language binding) pays it once per
 * batch. *done receives the queries answered: n, or on an error the one
 * that failed. Returns 0, BFI_E_INVALID (ends descending, theta out of
 * range), or any error of the calls named, for query *done.
 */
BFI_API BFI_MUST_CHECK int bfi_query_many(const bfi_snapshot *snap, unsigned layout, int what,
                                          unsigned k, double theta, const char *buf,
                                          const size_t *ends, size_t n, bfi_result *res,
                                          size_t *answer_ends, size_t *done);
/*
 * The same answers, byte for byte, through bfi_scan(): for an index
 * larger than memory. The queries are compiled and scanned in batches
 * whose keys' state and expected answers (bfi_scan_cost) fit half of
 * memory, each batch one pass over the index within memory; a batch
 * whose answers pass it is answered in halves. res holds every answer,
 * as bfi_query_many() leaves it. On an error *done is the query that
 * failed to compile, or the first of the batch whose scan failed.
 */
BFI_API BFI_MUST_CHECK int bfi_scan_many(const bfi_snapshot *snap, unsigned layout, int what,
                                         unsigned k, double theta, const char *buf,
                                         const size_t *ends, size_t n, bfi_result *res,
                                         size_t *answer_ends, size_t *done, uint64_t memory);

/*
 * The k-mer keys of a DNA sequence, for genome queries (spec/format.md,
 * "k-mer keys"): for k <= 32 every run of k letters from ACGT (either
 * case) gives the lesser, in ACGT order, of the k-mer and its reverse
 * complement, in upper case; for 33 <= k <= BFI_KMER_MAX (255) the 8-byte
 * canonical rolling hash. Any other byte breaks k-mers and is skipped.
 * Distinct keys only, in order of first appearance. *out receives count *
 * bfi_kmer_key_len(k) bytes, to be released with free(). Returns 0,
 * BFI_E_INVALID or -ENOMEM.
 */
BFI_API BFI_MUST_CHECK int bfi_kmers(const char *seq, size_t len, unsigned k, char **out,
                                     size_t *count);

/*
 * Count the bytes of index each query into res reads (slightly slower
 * queries); bfi_result_touched() then returns the last query's count.
 * Layouts that read scattered words (rambo, tree) count each 64-byte
 * cache line they touch, since memory moves whole lines.
 */
BFI_API void bfi_result_count_bytes(bfi_result *res, int on);
/*
 * A deadline for the queries into res: once the CLOCK_MONOTONIC clock
 * (clock_gettime) passes monotonic_ns, a threshold or expression query
 * stops and returns BFI_E_TIMEOUT, its answer incomplete. It is checked
 * between blocks of sets, between segments, and every few dozen terms, so
 * a query overruns it by at most that much work. 0 (the default): none.
 */
BFI_API void bfi_result_deadline(bfi_result *res, uint64_t monotonic_ns);
BFI_API uint64_t bfi_result_touched(const bfi_result *res);
/*
 * Node filters the last query into res tested on the tree layout: the
 * Bloofi paper's bf-cost (each child of a surviving node counts one).
 * 0 for other layouts.
 */
BFI_API uint64_t bfi_result_filter_tests(const bfi_result *res);

/*
 * The name of set ord. On success *name points into the catalog's
 * read-only map and is valid until bfi_close() of this snapshot. Do not
 * modify or free it. Names are not NUL-terminated; *len is their length.
 * Returns 0, BFI_E_NOT_FOUND, BFI_E_NO_CATALOG, BFI_E_CATALOG or BFI_E_LMDB.
 */
BFI_API BFI_MUST_CHECK int bfi_set_name(const bfi_snapshot *snap, uint32_t ord,
                                        const char **name, size_t *len);
/* The ordinal of the set called name. Same errors as bfi_set_name(). */
BFI_API BFI_MUST_CHECK int bfi_set_find(const bfi_snapshot *snap, const char *name,
                                        size_t len, uint32_t *ord);

/* Per-set statistics, recorded by the writer in the catalog. */
struct bfi_set_stats {
	uint64_t distinct_keys; /* distinct keys the writer saw for this set */
	uint64_t bits_set;      /* ones in its filter */
	uint64_t bits;          /* width of its filter; fill ratio = bits_set / bits */
};
/* Same errors as bfi_set_name(). */
BFI_API BFI_MUST_CHECK int bfi_set_stats(const bfi_snapshot *snap, uint32_t ord,
                                         struct bfi_set_stats *out);

/*
 * The distinct keys set ord's files gave before a build with --min-count
 * dropped those seen fewer times (distinct_keys, bfi_set_stats, are those
 * kept; a merge or a compaction carries them over). Returns 0,
 * BFI_E_NOT_FOUND (ord past the last, or a snapshot built without
 * --min-count), or bfi_set_name()'s errors;
 * BFI_E_CATALOG for a record that is missing, malformed or below the
 * keys the set kept.
 */
BFI_API BFI_MUST_CHECK int bfi_set_seen(const bfi_snapshot *snap, uint32_t ord, uint64_t *seen);

/*
 * A snapshot metadata value from the catalog (spec/format.md, "Catalog"),
 * such as "fpr" or "writer". *val points into the catalog's read-only map
 * and is valid until bfi_close(); do not modify or free it. Returns 0,
 * BFI_E_NOT_FOUND, BFI_E_NO_CATALOG or BFI_E_LMDB.
 */
BFI_API BFI_MUST_CHECK int bfi_catalog_meta(const bfi_snapshot *snap, const char *key,
                                            const void **val, size_t *len);
/*
 * The key rule (a catalog field of BFI_META_KEY_RULES: input kind, k-mer
 * length, tokenizer, path encoding) in which snapshots a and b differ,
 * such that their keys were made in different ways and they cannot be
 * joined; NULL if they agree on all.
 */
BFI_API const char *bfi_key_rules_differ(const bfi_snapshot *a, const bfi_snapshot *b);

/*
 * Expected false-positive rate of one set's filter for an absent key,
 * from its recorded fill ratio: (bits_set / bits)^k. Same errors as
 * bfi_set_name().
 */
BFI_API BFI_MUST_CHECK int bfi_set_fpr(const bfi_snapshot *snap, uint32_t ord, double *fpr);

/*
 * Deep verification of the snapshot at path: everything bfi_open()
 * checks, then every checksum of the index, the zero padding of every
 * row, then the catalog's digest and contents. A collection: its
 * manifest, then each segment so, and that each is the snapshot listed.
 */
struct bfi_verify_report {
	const char *file;  /* "index.bfi", "catalog.mdb", or a collection's "MANIFEST" */
	char segment[40];  /* in a collection: the segment at fault (its directory), or "" */
	uint64_t offset;   /* first byte of the first bad region */
	uint64_t length;   /* its length in bytes */
	char what[160];    /* what was wrong there */
};
/*
 * Returns 0 if every check passed; a BFI_E_* format or catalog code if
 * the snapshot is damaged, with *rep describing the first bad region;
 * or -errno if a file could not be read (rep->file says which).
 * progress, if not NULL, is called with bytes checked so far and total.
 */
BFI_API BFI_MUST_CHECK int bfi_verify(const char *path, struct bfi_verify_report *rep,
                                      void (*progress)(void *ctx, uint64_t done, uint64_t total),
                                      void *ctx);

#ifdef __cplusplus
}
#endif
#endif
