/*
 * bfi_writer.h - build bfi snapshots offline.
 *
 * A writer collects (set, key) pairs, then bfi_writer_finish() lays them
 * out and publishes the snapshot directory atomically. Keys stream
 * through: each is hashed on arrival and only its 16-byte hash and the
 * set's ordinal are kept, in a buffer bounded by the memory option and
 * spilled to sorted runs in $TMPDIR beyond it; rows are then filled a
 * stripe at a time in the other half of the budget. Memory use is about
 * options.memory, plus about 40 bytes and the name of each set, whatever
 * the number of keys.
 *
 * The output is deterministic: the same sets, keys and options give
 * byte-identical files, whatever the order of keys within a set.
 *
 * A writer is not thread-safe; use one per thread.
 */
#ifndef BFI_WRITER_H
#define BFI_WRITER_H

#include <stdint.h>
#include <stdio.h>

#include "bfi_error.h"
#include "bfi_layout.h"
#include "bfi_memory.h"
#include "bfi_seq.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bfi_writer bfi_writer;

/* Union pre-filters of flat blocks (options.prefilter). */
enum {
	BFI_PREFILTER_AUTO = 0, /* where the cost model says a block gains */
	BFI_PREFILTER_ALWAYS,
	BFI_PREFILTER_NEVER,
};

/* Layouts to write: the BFI_LAYOUT_* flags (bfi_layout.h), also under these names. */
enum {
	BFI_BUILD_FLAT = BFI_LAYOUT_FLAT,
	BFI_BUILD_PLAIN = BFI_LAYOUT_PLAIN,
	BFI_BUILD_RAMBO = BFI_LAYOUT_RAMBO,
	BFI_BUILD_TREE = BFI_LAYOUT_TREE,
	/*
	 * The default, chosen when the sets are known (bfi_writer_finish): the
	 * tree alone from BFI_AUTO_TREE_SETS sets on, when its leaves, every
	 * set at the largest set's width, take at most BFI_AUTO_TREE_SPREAD
	 * times the bits of every set at its own width (sets of like size),
	 * and no flat-only option is set; else flat. Alone, not with others.
	 */
	BFI_BUILD_AUTO = 1u << 30,
};
#define BFI_AUTO_TREE_SETS 65536
#define BFI_AUTO_TREE_SPREAD 1.4

/*
 * The options of a build. Fill them with bfi_build_options_init() before
 * setting any: it sets size, which lets the struct grow at its end in
 * later versions of the library without breaking a caller built against
 * this header (the library takes the first size bytes, and the defaults
 * for any fields after them).
 */
struct bfi_build_options {
	size_t size;     /* sizeof(struct bfi_build_options) as the caller was built */
	double fpr;      /* target false-positive rate of each filter (0.01) */
	uint64_t bits;   /* m for every filter; 0 sizes each block for its largest set */
	uint32_t hashes; /* k, bits per key; 0 derives it from fpr (or bits) */
	uint64_t expected_keys; /* size filters for this many keys, not the sets' own counts */
	unsigned layouts;       /* BFI_BUILD_* (default BFI_BUILD_AUTO) */
	int keep_order;         /* ordinals in input order, not by set size */
	int cluster;            /* ordinals by MinHash, so similar sets sit together (for tree);
	                         * the default when the tree is the only layout */
	int fixed_width;        /* one block width for all: the largest set's */
	/*
	 * What one more flat block must save, in bytes of rows, to be worth
	 * its cost to every query (k more random cache-line loads). 0 means
	 * the default, 1 MiB; smaller values give more, narrower blocks.
	 */
	uint64_t block_cost;
	/*
	 * BFI_PREFILTER_*: give each flat block a Bloom filter of the union of
	 * its sets' keys, which lets a query skip the block; AUTO keeps one
	 * only where a skipped block saves more than the probe costs.
	 */
	int prefilter;
	/*
	 * RAMBO: cells per repetition (B), repetitions (R) and shards (S, the
	 * two-level hash's first level); 0 chooses B and R from N and fpr, and
	 * one shard. See spec/format.md, "Choosing the RAMBO parameters".
	 */
	uint64_t cells;
	uint32_t reps;
	uint32_t shards;
	/*
	 * Build one shard of a stack: with route_shards > 0, the directory and
	 * TSV readers keep only the sets that the two-level hash sends to shard
	 * route_shard of route_shards (bfi_rambo_cell(name, 0, route_shards,
	 * route_shards)), and skip the rest.
	 */
	uint32_t route_shard, route_shards;
	/* Tree: children per node, a power of two from 2 to 64 (default 64). */
	uint32_t fanout;
	/* Tree: store every level, even those that do not pay (to compare bf-cost). */
	int all_levels;
	/*
	 * Tree: build by the Bloofi paper's insertion (Hamming distance, nodes of
	 * fanout..2 fanout children, fanout being the order d) instead of offline;
	 * keeps every leaf filter in memory. Default fanout then 2.
	 */
	int bloofi_incremental;
	/*
	 * The build's peak memory, the program's own included (0:
	 * bfi_default_memory(); at least 4 MiB): keys being
	 * read, sketches and rows being filled stay within it; spooled keys
	 * beyond it spill to $TMPDIR.
	 */
	uint64_t memory;
	/* threads for reading key, FASTA, text, JSON and XML files (bfi_writer_add_dir,
	 * _add_fasta, _add_text, _add_paths), sorting and filling (0: one per online core);
	 * the output is the same whatever it is */
	unsigned threads;
	/*
	 * Called now and then during long work; phase is a short word such
	 * as "reading" or "rows", total is 0 when unknown. May be NULL.
	 */
	void (*progress)(void *ctx, const char *phase, uint64_t done, uint64_t total);
	void *progress_ctx;
	/*
	 * At most this many sets per flat block (0: no limit): exactly up to
	 * 4,096 sets, past that rounded down to the step of the block
	 * boundaries (512 * 2^i, spec/format.md). Narrower blocks with union pre-filters let a query
	 * read fewer row bytes at the price of one pre-filter probe per block.
	 */
	uint32_t max_block_sets;
	/*
	 * Flat and tree pre-filters as classic Bloom filters, k cache lines per
	 * probe, instead of one 512-bit line per key (the default, LINE_PRE),
	 * which answers in one load.
	 */
	int classic_prefilters;
	/*
	 * Keep only the keys a set's files give at least this often (0 or 1:
	 * every key): k-mers seen once or twice in raw reads are mostly
	 * sequencing errors (kmindex's --hard-min). The keys of each set read
	 * from files are counted in memory, about 32 bytes a distinct key
	 * plus the key itself, before they are kept.
	 */
	uint32_t min_count;
	/*
	 * A layout's own parameters, "LAYOUT.NAME=VALUE" joined by commas
	 * (bfi_layout_options_check says which there are); each is written
	 * in its layout's descriptor, shown by bfi inspect and kept by a
	 * join. NULL: each its default.
	 */
	const char *layout_options;
};

/* Fill o with the defaults shown above, and its size. */
BFI_API void bfi_build_options_init(struct bfi_build_options *o);

/* What bfi_writer_finish() built. */
struct bfi_build_summary {
	uint64_t n_sets;
	uint64_t keys_in;        /* (set, key) pairs added */
	uint64_t distinct_pairs; /* after removing repeats within a set */
	uint64_t max_set_keys;   /* distinct keys of the largest set */
	uint64_t bits;           /* m of the widest filter */
	uint32_t blocks;         /* flat blocks written (0 without flat) */
	uint32_t hashes;         /* k */
	uint64_t index_bytes, catalog_bytes;
};

/*
 * What one phase of a build took (bfi_writer_phase): its wall time, the
 * CPU time of all its threads, and the CPU time of its busiest thread had
 * each thread a core of its own (its serial work, plus for each parallel
 * step the thread that would finish last, its items' measured CPU times
 * dealt in turn to the thread free first; a block's rows written while
 * the next fills are a lane of their own, begun where the rest stood when
 * it handed them over, and the later lane to end counts), in seconds.
 * cpu / busiest is
 * the speed-up the phase allows on as many cores as it had threads
 * (memory bandwidth aside), measurable on a machine with fewer cores. name is a static string: "reading" (the
 * inputs' first reading: keys hashed, counted and summarised), "checking"
 * (the output path), "sorting"
 * (keys spilled to the spool, sorted), "planning", "filling" (the rows,
 * from each set's keys again), "checksums", "catalog", "publishing".
 */
struct bfi_phase_stats {
	const char *name;
	double wall, cpu, busiest;
};
/*
 * Phase i (from 0, in the order they ran) of the build so far, into *out;
 * valid after bfi_writer_finish too, until bfi_writer_destroy. Returns 0,
 * BFI_E_NOT_FOUND past the last phase, or BFI_E_INVALID.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_phase(const bfi_writer *w, unsigned i,
                                            struct bfi_phase_stats *out);

/*
 * With --min-count (min_count > 1): set i's name (input order, as
 * bfi_writer_set and the adds gave them, from 0), and the distinct keys
 * its files gave (*seen) and kept (*kept: seen min_count times or more,
 * the keys its filter holds); seen - kept were dropped. A set whose keys
 * were given otherwise (bfi_writer_key, TSV) is not counted: seen is
 * kept. Valid after bfi_writer_finish, until bfi_writer_destroy.
 * Returns 0, BFI_E_NOT_FOUND past the last set or without --min-count,
 * or BFI_E_INVALID.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_counted(const bfi_writer *w, uint64_t i, const char **name,
                                              size_t *name_len, uint64_t *seen, uint64_t *kept);

/*
 * A quarter of physical memory, between 256 MiB and 64 GiB, but at most
 * half of what the process may hold (bfi_memory_limits: its cgroup's
 * limit, ulimit -v, MemAvailable), and at least 8 MiB.
 */
BFI_API uint64_t bfi_default_memory(void);

/*
 * Check layout_options for a build of layouts (BFI_BUILD_* flags; 0:
 * any): each item names a layout of the build and one of its parameters,
 * with a whole number in its range. 0, or BFI_E_INVALID with err (errlen
 * bytes) saying which item is wrong and what the layout takes.
 */
BFI_API BFI_MUST_CHECK int bfi_layout_options_check(const char *layout_options, unsigned layouts,
                                                    char *err, size_t errlen);

/* Returns 0, -ENOMEM or BFI_E_INVALID (for options out of range). */
BFI_API BFI_MUST_CHECK int bfi_writer_create(const struct bfi_build_options *o, bfi_writer **out);
/* Discard a writer (finished or not) and set *w to NULL; NULL-safe. */
BFI_API void bfi_writer_destroy(bfi_writer **w);

/*
 * Declare a set, giving it the next ordinal if it is new, and return its
 * ordinal. Names are 1 to 511 bytes without NUL, TAB, CR or LF.
 * Returns 0, BFI_E_INPUT (bad name), BFI_E_LIMIT or -ENOMEM.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_set(bfi_writer *w, const char *name, size_t len,
                                          uint32_t *ord);
/* Add a key to a declared set. Any bytes. Returns 0, BFI_E_INVALID, -errno. */
BFI_API BFI_MUST_CHECK int bfi_writer_key(bfi_writer *w, uint32_t ord, const void *key,
                                          size_t len);

/*
 * Add every regular file of dir as one set, in byte order of file names;
 * the set name is the file name and each non-empty line is a key (a
 * trailing CR is dropped). Names starting with '.' are skipped; any other
 * entry that is not a regular file is an error, so that nothing is
 * silently left out. The files are read now, and read again by
 * bfi_writer_finish, which fails [BFI_E_INPUT] if one changed in between.
 * Returns 0, BFI_E_INPUT, BFI_E_DUP_SET or -errno; bfi_writer_errmsg()
 * says where.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_add_dir(bfi_writer *w, const char *dir);

/* Reading FASTA and FASTQ records: bfi_seq_read() (bfi_seq.h). */

/*
 * Add sequences as sets of canonical k-mers (spec/format.md, "k-mer
 * keys"), 1 <= k <= BFI_KMER_MAX (255; past 32 a k-mer's key is its
 * rolling hash): path is a FASTA or FASTQ file, plain or gzip, or a
 * directory of them (every file not starting with '.', in name order). A
 * file is one set, named after the file less ".gz" and a sequence
 * extension (.fa, .fasta, .fna, .ffn, .fq, .fastq, .seq); with per_record,
 * each record is a set named by its id (the header up to the first blank).
 * As with bfi_writer_add_dir, files that are one set each are read again
 * by bfi_writer_finish and must not change in between. A directory is
 * read by this call. A file named on its own waits for the files named
 * after it, so that many are read together on the writer's threads: they
 * are read by the next call that adds sets another way (or another k), or
 * by bfi_writer_finish, and a file's error is returned by that call. The
 * ordinals are those of reading each file at once. Returns 0, BFI_E_INPUT
 * (not FASTA/FASTQ, corrupt gzip, truncated FASTQ), BFI_E_DUP_SET,
 * BFI_E_INVALID (k) or -errno; bfi_writer_errmsg() says where.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_add_fasta(bfi_writer *w, const char *path, unsigned k,
                                                int per_record);
/*
 * Protein sequences, as bfi_writer_add_fasta reads DNA: FASTA or FASTQ
 * files whose keys are amino-acid k-mers (bfi_protein_keys, spec/format.md
 * "Protein k-mer keys"), 1 <= k <= 255, one set a file or a record. The
 * catalog records input "protein" and k, so that queries are split the
 * same way and DNA k-mers are refused on it; the file is of format minor
 * 4, which older readers refuse rather than misread. Returns as
 * bfi_writer_add_fasta; both in one snapshot are BFI_E_INPUT.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_add_protein(bfi_writer *w, const char *path, unsigned k,
                                                  int per_record);

/*
 * Add text documents as sets of terms (spec/format.md, "Text keys"): path
 * is a document file, plain or gzip, or a directory of them (every file not
 * starting with '.', in name order). Each document is one set, named after
 * its file less ".gz"; its keys are its distinct terms by the tokenizer of
 * bfi_text.h with terms of at most max_term bytes (0: the default, 32),
 * less the terms of the file stop_words (NULL: none). A limit or stop list
 * other than the default is recorded in the catalog, so that queries split
 * text the same way; two calls that disagree on them fail [BFI_E_INPUT].
 * As with bfi_writer_add_dir, the documents are read again by
 * bfi_writer_finish and must not change in between; as with
 * bfi_writer_add_fasta, a file named on its own is read with those named
 * after it, and its errors may come from a later call.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_add_text(bfi_writer *w, const char *path, unsigned max_term,
                                               const char *stop_words);

/*
 * Add JSON (xml 0) or XML (xml 1) documents as sets of path keys
 * (spec/format.md, "Path keys"): path is a document, plain or gzip, or a
 * directory of them; each is a set named after its file less ".gz". enc is
 * BFI_PATHS_BREADTH, BFI_PATHS_DEPTH or both (bfi_paths.h); path_max (0:
 * 8) bounds the depth encoding's sub-paths. The encoding is recorded in the
 * catalog for path queries (bfi_expr_path). Returns 0, BFI_E_INPUT (not
 * well-formed, naming the file and line), BFI_E_LIMIT (deeper than 64
 * levels), BFI_E_DUP_SET, BFI_E_INVALID or -errno. As with
 * bfi_writer_add_dir, the documents are read again by bfi_writer_finish
 * and must not change in between; as with bfi_writer_add_fasta, a file
 * named on its own is read with those named after it, and its errors may
 * come from a later call.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_add_paths(bfi_writer *w, const char *path, int xml,
                                                unsigned enc, unsigned path_max);

/*
 * Add "set<TAB>key" lines from f (label names it in messages). The key is
 * everything after the first TAB, less a trailing CR. "set<TAB>" with an
 * empty key declares the set without adding a key. Empty lines are
 * skipped. Sets get ordinals in order of first appearance.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_add_tsv(bfi_writer *w, FILE *f, const char *label);
/*
 * One set named name[0 .. len) made of the files paths[0 .. n), read one
 * after another as one (kmindex's file of files, COBS's document lists: a
 * sample's several read files): input "fasta" (FASTA or FASTQ, by their
 * canonical k-mers of length k) or "keys" (a key a line), each file plain
 * or compressed. Queued and read on threads as bfi_writer_add_fasta's
 * files are; the sets come in the order of the calls. Returns 0,
 * BFI_E_INVALID (no file, a path holding a newline or naming a directory,
 * another input) or an error of reading; errmsg says more.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_add_group(bfi_writer *w, const char *name, size_t len,
                                                const char *const *paths, size_t n,
                                                const char *input, unsigned k);

/*
 * Lay out and write the snapshot directory at path, publishing it
 * atomically: files are written in a temporary directory beside path,
 * fsynced, and then swapped in with one rename, so a crash leaves either
 * the old snapshot or the new one. An existing snapshot at path is
 * replaced; any other existing file or directory gives BFI_E_EXISTS.
 * summary may be NULL. The writer can only be destroyed afterwards.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_finish(bfi_writer *w, const char *path,
                                             struct bfi_build_summary *summary);

/*
 * Snapshot algebra (bfi fold, bfi stack): a snapshot whose RAMBO layout is
 * given as finished rows instead of keys. Create the writer with layouts
 * BFI_BUILD_RAMBO and keep_order, declare the sets with bfi_writer_set()
 * in the ordinal order wanted, add no keys, pass the rows here, then call
 * bfi_writer_finish(). Cells are assigned by the partition of bfi_hash.h
 * from the set names, so the rows must have been built the same way.
 */
#define BFI_RAMBO_MAX_REPS 64
struct bfi_rambo_rows {
	uint64_t cells;  /* B */
	uint32_t reps;   /* R */
	uint32_t shards; /* S */
	uint32_t k;
	uint64_t m[BFI_RAMBO_MAX_REPS];            /* rows of each repetition */
	const uint8_t *rows[BFI_RAMBO_MAX_REPS];   /* m[r] rows of ceil(B / 64) * 8 bytes */
	const uint64_t *distinct;                  /* per declared set: distinct keys */
	int shared_probes; /* the rows were made with probes 0 .. k - 1 in every repetition */
};
/* Returns 0 or BFI_E_INVALID. The rows must stay valid until finish. */
BFI_API BFI_MUST_CHECK int bfi_writer_rambo_rows(bfi_writer *w, const struct bfi_rambo_rows *rows);
/*
 * The same with the rows made as the file is written, not held, so that
 * a result larger than memory is written within the writer's --memory
 * (bfi stack, bfi fold): rows->rows[r] are not read (NULL), and
 * row(ctx, r, first, n, dst) writes rows [first, first + n) of
 * repetition r, ceil(B / 64) * 8 bytes each, into dst (zeroed), and
 * returns 0, or an error that stops the build. Rows are asked for in
 * order, repetition after repetition, as many at a time as a share of
 * --memory holds, from bfi_writer_finish(). Returns 0 or BFI_E_INVALID.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_rambo_rows_made(bfi_writer *w,
                                                      const struct bfi_rambo_rows *rows,
                                                      int (*row)(void *ctx, uint32_t r,
                                                                 uint64_t first, uint64_t n,
                                                                 uint8_t *dst),
                                                      void *ctx);

/*
 * Compaction and merge (bfi compact, bfi merge; spec/format.md,
 * "Compaction and merge"): a flat layout given as blocks joined from the
 * columns of existing flat blocks of one width, row by row, without keys.
 * Create the writer with layouts BFI_BUILD_FLAT and keep_order, declare
 * the sets with bfi_writer_set() in the order of the blocks' kept columns,
 * add no keys, pass the blocks here, then call bfi_writer_finish(). The
 * layouts may add BFI_BUILD_RAMBO, whose rows bfi_writer_rambo_rows()
 * then gives, and BFI_BUILD_TREE when every block has one width: an
 * implicit tree (no cluster, no bloofi_incremental) whose leaves are the
 * columns and whose upper levels OR them, without a pre-filter. With a
 * tree, BFI_BUILD_FLAT may be left out: the blocks are then its leaves only.
 */
struct bfi_flat_part {
	const uint8_t *rows;  /* a source block's rows: bit c of row r is bit r * row_bits + c */
	uint64_t bytes;       /* readable bytes at rows: at least the block's rows */
	uint64_t row_bits;
	uint64_t n_cols;      /* the source block's sets */
	const uint64_t *keep; /* bit c set: column c is kept; NULL: every column */
};
struct bfi_flat_block_given {
	uint64_t m;                   /* the width of every part */
	uint64_t pre_m;               /* width of pre, or 0 for no pre-filter */
	const uint8_t *pre;           /* ceil(pre_m / 512) * 64 bytes: a filter of every part's keys */
	uint32_t first_part, n_parts; /* its parts: parts[first_part ..] */
};
struct bfi_flat_given {
	uint32_t k;
	int line_pre; /* the pre-filters are line pre-filters (spec: LINE_PRE) */
	uint32_t n_blocks;
	const struct bfi_flat_block_given *blocks;
	const struct bfi_flat_part *parts;
	const uint64_t *distinct, *ones; /* per declared set: its distinct keys and filter's ones */
};
/* Returns 0, BFI_E_INVALID or BFI_E_LIMIT. g and all it points to must stay valid until finish. */
BFI_API BFI_MUST_CHECK int bfi_writer_flat_given(bfi_writer *w, const struct bfi_flat_given *g);
/*
 * Record a catalog field that says how the keys were made (BFI_META_INPUT,
 * _KMER, _TEXT_*, _PATHS, _PATH_MAX, _PATH_LEVELS of bfi_catalog.h), as
 * an input would: for compaction and merge, which carry their sources'.
 * 0, BFI_E_INVALID (another key) or BFI_E_INPUT (a different value given).
 */
BFI_API BFI_MUST_CHECK int bfi_writer_meta(bfi_writer *w, const char *key, const void *val,
                                           size_t len);

/*
 * Single Bloom filters in their own file (spec/format.md, "Filter file"),
 * for the federated case: each site makes its filter, and bfi build
 * --from-filters indexes them. m bits, k hashes, the snapshot's own key
 * hash and positions, so a filter made for m and k is row for row the
 * set's filter in a flat or tree layout of width m.
 */
typedef struct bfi_filter bfi_filter;
struct bfi_filter_stats {
	uint64_t m, keys, bits_set; /* keys: added, counting repeats */
	uint32_t k;
};
/*
 * The width m and hash count k of a filter for n keys at rate fpr (spec/
 * format.md, "Choosing m and k"): k = ceil(log2(1/fpr)), and m = ceil(-n k
 * / ln(1 - fpr^(1/k))), at least 64, at which n keys give rate fpr
 * exactly. Returns 0; 1 if k was capped at 32, so that the
 * filter's rate is about 2^-32, not fpr; BFI_E_LIMIT if m would pass
 * 2^40 bits; BFI_E_INVALID if fpr is not in (0, 1).
 */
BFI_API BFI_MUST_CHECK int bfi_filter_size(uint64_t n, double fpr, uint64_t *m, uint32_t *k);
/* The width m at which n keys and k hashes give rate fpr: 0, BFI_E_INVALID or BFI_E_LIMIT. */
BFI_API BFI_MUST_CHECK int bfi_filter_size_k(uint64_t n, uint32_t k, double fpr, uint64_t *m);
/* m bits (1..2^40), k hashes (1..32). Returns 0, BFI_E_INVALID or -ENOMEM. */
BFI_API BFI_MUST_CHECK int bfi_filter_create(uint64_t m, uint32_t k, bfi_filter **out);
BFI_API void bfi_filter_destroy(bfi_filter **f);
BFI_API BFI_MUST_CHECK int bfi_filter_add(bfi_filter *f, const void *key, size_t len);
/* 1 if key may be in the filter, 0 if it surely is not, or BFI_E_INVALID. */
BFI_API int bfi_filter_contains(const bfi_filter *f, const void *key, size_t len);
BFI_API void bfi_filter_stats(const bfi_filter *f, struct bfi_filter_stats *st);
/* The m bits, bit i at byte i / 8, bit i % 8. */
BFI_API const uint8_t *bfi_filter_bits(const bfi_filter *f);
/*
 * Write atomically: a new file beside path (path.tmpXXXXXX, locked while
 * it is written), fsynced, renamed over path, and the rename made durable.
 * A path that is a symbolic link is followed: the file it names is
 * replaced. Temporary files that killed saves left beside it are removed
 * first (only those: unlocked, this user's, holding the start of a filter).
 * Returns 0, BFI_E_NOT_REGULAR (path is a directory, FIFO, device or
 * socket), BFI_E_INVALID or -errno.
 */
BFI_API BFI_MUST_CHECK int bfi_filter_save(const bfi_filter *f, const char *path);
/*
 * Save f's bits as one zstd frame at level (1..19; file version 2, which
 * readers before it refuse), or as they are (0, version 1, the default).
 * A filter loaded from a compressed file is saved compressed (level 19).
 * A sparse filter (large m, few hashes) compresses; one sized for its rate
 * with the usual k is half ones and does not (spec/format.md, "Filter file").
 */
BFI_API BFI_MUST_CHECK int bfi_filter_set_compression(bfi_filter *f, int level);
BFI_API int bfi_filter_compression(const bfi_filter *f);
/* The bytes f's file would take saved at level (0: as they are). */
BFI_API BFI_MUST_CHECK int bfi_filter_file_size(const bfi_filter *f, int level, uint64_t *bytes);
/*
 * Hold path's filter file for a change (load, add, save) against every
 * other holder: an exclusive flock(2) on the file, which a save replaces,
 * so the lock follows the file a save leaves at path. wait: block until
 * the holder is done, rather than fail with BFI_E_BUSY. *lock is released
 * by bfi_filter_unlock. Returns 0, BFI_E_BUSY, BFI_E_NOT_REGULAR,
 * BFI_E_INVALID or -errno (-ENOENT: no file there).
 */
BFI_API BFI_MUST_CHECK int bfi_filter_lock(const char *path, int wait, int *lock);
BFI_API void bfi_filter_unlock(int *lock);
/*
 * Read and check a filter file: BFI_E_BAD_MAGIC, BFI_E_VERSION,
 * BFI_E_INCOMPAT (another hash), BFI_E_RESERVED, BFI_E_HEADER_CHECKSUM,
 * BFI_E_TRUNCATED, BFI_E_SIZE, BFI_E_DATA_CHECKSUM, BFI_E_BAD_LAYOUT, or
 * -errno.
 */
BFI_API BFI_MUST_CHECK int bfi_filter_load(const char *path, bfi_filter **out);

/*
 * Index prebuilt filters instead of keys: path is a filter file or a
 * directory of them (every file not starting with '.', in name order), each
 * a set named after its file less ".bff". All must share m, k and the hash
 * [BFI_E_FILTER_MISMATCH, naming the file]. Such a build takes no keys, and
 * makes flat, plain, tree and rambo layouts at width m;
 * the sets' distinct counts are the filters' key counts. A rambo layout
 * ORs each cell's filters, and, since a filter has only probes 0 .. k - 1,
 * every repetition tests those (SHARED_PROBES): no key is missed, but the
 * repetitions are less independent than from keys.
 */
BFI_API BFI_MUST_CHECK int bfi_writer_add_filters(bfi_writer *w, const char *path);

/* A message about the last error, with file and line where known. */
BFI_API const char *bfi_writer_errmsg(const bfi_writer *w);
/*
 * What the writer adjusted or noticed without failing (an option clamped
 * to its limit, a file kept), one line each, each ending in a newline;
 * "" if nothing. Valid until the writer is destroyed.
 */
BFI_API const char *bfi_writer_warnings(const bfi_writer *w);

/*
 * Can bfi_writer_finish() publish at path? Call it before a long build to
 * fail at once. 0 if path is absent (its directory writable), or is a
 * snapshot directory holding only bfi's own files; else BFI_E_INVALID
 * (an empty path, "/", "."), BFI_E_EXISTS (another file or directory, a
 * symbolic link, or a snapshot holding files bfi did not write) or -errno,
 * and err (errlen bytes) says why.
 */
BFI_API BFI_MUST_CHECK int bfi_output_check(const char *path, char *err, size_t errlen);

/*
 * Collections (spec/format.md, "Collections"): a writer's hold on one,
 * for adding segments (snapshots built with bfi_writer_finish at the path
 * bfi_collection_segment_path gives) and removing sets, committed whole.
 * bfi_collection_begin takes the collection's lock (BFI_COLL_WAIT: waits
 * for it; else another writer's hold is BFI_E_BUSY, err naming its pid),
 * reads the manifest (BFI_COLL_CREATE: the directory is made, and one
 * without a manifest starts empty), and removes what killed writers left.
 * Changes stay in memory until bfi_collection_commit writes the next
 * generation and renames it into place; bfi_collection_end releases the
 * lock and removes segments built but not committed. err (errlen bytes)
 * says what failed.
 */
typedef struct bfi_collection bfi_collection;
#define BFI_COLL_CREATE 1u
#define BFI_COLL_WAIT 2u
BFI_API BFI_MUST_CHECK int bfi_collection_begin(const char *path, unsigned flags,
                                                bfi_collection **out, char *err, size_t errlen);
/* The generation committed last (0: none yet). */
BFI_API uint64_t bfi_collection_generation(const bfi_collection *c);
/* Where to build the next segment; valid until the next call on c. */
BFI_API const char *bfi_collection_segment_path(bfi_collection *c);
/* Add the snapshot built there, of n_sets sets and that snapshot id. 0, BFI_E_LIMIT or -ENOMEM. */
BFI_API BFI_MUST_CHECK int bfi_collection_add(bfi_collection *c, uint64_t n_sets,
                                              const uint8_t snapshot_id[16]);
/* Remove the set at global ordinal g. 0, BFI_E_NOT_FOUND (none there, or removed) or -ENOMEM. */
BFI_API BFI_MUST_CHECK int bfi_collection_remove(bfi_collection *c, uint64_t g);
/*
 * Compaction: segments [first, first + count) of the committed manifest
 * give way to the one built at bfi_collection_segment_path(), which holds
 * exactly their live sets, n_sets of them, in their order (none: the run
 * is dropped), and their removed sets are forgotten. Call it once before
 * a commit, and before any add. 0 or BFI_E_INVALID.
 */
BFI_API BFI_MUST_CHECK int bfi_collection_replace(bfi_collection *c, uint32_t first,
                                                  uint32_t count, uint64_t n_sets,
                                                  const uint8_t snapshot_id[16]);
/*
 * Commit: the next generation, whole. 0 or -errno, BFI_E_LIMIT;
 * bfi_collection_errmsg says more. Once the new manifest is renamed into
 * place it is committed: if syncing the directory then fails, the commit
 * returns 0 and bfi_collection_errmsg holds a warning.
 */
BFI_API BFI_MUST_CHECK int bfi_collection_commit(bfi_collection *c);
BFI_API const char *bfi_collection_errmsg(const bfi_collection *c);
BFI_API void bfi_collection_end(bfi_collection **c);

/*
 * Joining snapshots without their keys (spec/format.md, "Compaction and
 * merge"): every live set keeps its filter bit for bit, so the result
 * answers every query as its sources did. bfi merge and bfi compact are
 * their command line.
 */
struct bfi_join_options {
	size_t size;     /* sizeof(struct bfi_join_options) as the caller was built (_init) */
	uint64_t memory; /* the rows being joined stay within it (0: bfi_default_memory()) */
	int full;        /* bfi_compact: every segment into one, not the size-tiered policy's runs */
	int wait;        /* bfi_compact: wait for another writer's lock rather than fail */
	/* Called now and then during long work, as bfi_build_options.progress; may be NULL. */
	void (*progress)(void *ctx, const char *phase, uint64_t done, uint64_t total);
	void *progress_ctx;
	/*
	 * Called with each line the join has to say besides an error: a layout
	 * not kept and why, a compaction's commit. May be NULL.
	 */
	void (*note)(void *ctx, const char *line);
	void *note_ctx;
};
BFI_API void bfi_join_options_init(struct bfi_join_options *o);
/*
 * One snapshot at out of the live sets of the snapshots and collections
 * at paths[0 .. n), in their order, written and published as a build is.
 * out must not be one of them. *n_sets receives the sets written.
 * Returns 0, BFI_E_JOIN (they cannot be joined: they differ in k or key
 * rules, hold a set name twice, a layout or section a join cannot carry,
 * or neither a flat layout nor a tree), BFI_E_NO_SETS (no set lives:
 * nothing written), BFI_E_INVALID, or an error of opening or writing;
 * err (errlen bytes) says which input and why.
 */
BFI_API BFI_MUST_CHECK int bfi_merge(const char *const *paths, size_t n, const char *out,
                                     const struct bfi_join_options *o, uint64_t *n_sets,
                                     char *err, size_t errlen);
/*
 * Compact the collection at coll: join runs of its segments, each run one
 * commit, chosen by a size-tiered policy (the newest segments while the
 * one before them is no larger than all of them together, and a segment
 * that has lost half its sets), or all of them with o->full. *joins
 * receives the runs joined (0: nothing to do). Returns 0, BFI_E_BUSY
 * (another writer's lock, without o->wait), BFI_E_JOIN, BFI_E_INVALID
 * (coll is a snapshot), or an error of reading or writing, after which
 * the collection is as the last commit left it; err says why.
 */
BFI_API BFI_MUST_CHECK int bfi_compact(const char *coll, const struct bfi_join_options *o,
                                       unsigned *joins, char *err, size_t errlen);

/*
 * Packs (spec/format.md, "Packs"): a snapshot or a collection as one
 * file, a tar stream in zstd frames with a seek table, which
 * `zstd -d < PACK | tar -x` also unpacks.
 */
/* Fill them with bfi_pack_options_init() first; size as in struct bfi_build_options. */
struct bfi_pack_options {
	size_t size;      /* sizeof(struct bfi_pack_options) as the caller was built */
	int level;        /* zstd level, 1..19 (3) */
	unsigned threads; /* frames compressed at once (0: the online cores) */
	uint64_t memory;  /* bytes packing may take (0: no bound); threads drop to fit */
	uint32_t frame;   /* bytes of the tar stream a frame, 4 KiB..64 MiB (4 MiB) */
	/* called with bytes done and their total as the work goes */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	/* if not NULL, bfi_pack fills it: where its CPU went (bfi pack --stats) */
	struct bfi_pack_stats *stats;
};
struct bfi_pack_stats {
	double serial;     /* CPU seconds of the calling thread outside the frames: files, tar, writes */
	double compress;   /* CPU seconds compressing frames, all threads */
	double critical16; /* the least time at 16 threads: batches of 16 frames, each read while
	                    * the one before compresses and is written */
	uint32_t frames;
};
BFI_API void bfi_pack_options_init(struct bfi_pack_options *o);
/*
 * Pack the snapshot or collection src into the file out, written beside
 * it (unnamed, O_TMPFILE, where the file system allows: a pack killed
 * midway leaves nothing) and renamed into place. out may exist only as a
 * bfi pack, which is
 * replaced. 0, or BFI_E_INVALID, BFI_E_LIMIT (--memory too small),
 * BFI_E_EXISTS, BFI_E_NOT_REGULAR, BFI_E_MANIFEST, -errno; err says why.
 */
BFI_API BFI_MUST_CHECK int bfi_pack(const char *src, const char *out,
                                    const struct bfi_pack_options *o, char *err, size_t errlen);
/*
 * Unpack the pack at path into out: every frame decompressed and checked,
 * the files written byte for byte as packed, then published as
 * bfi_writer_finish publishes (a snapshot: swapped in atomically at out,
 * which may be a snapshot already; a collection: renamed into place at
 * out, or, if out is a collection, swapped with it at once under its
 * lock, the old one then removed). o: threads, memory and progress. 0,
 * or a BFI_E_PACK* code, BFI_E_EXISTS, BFI_E_BUSY (a writer holds out's
 * lock), -errno; err says why, warn (else "") what was kept.
 */
BFI_API BFI_MUST_CHECK int bfi_unpack(const char *path, const char *out,
                                      const struct bfi_pack_options *o, char *err, size_t errlen,
                                      char *warn, size_t warnlen);

#ifdef __cplusplus
}
#endif
#endif
