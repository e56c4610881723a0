/* internal.h - writer-private parts; not installed. */
#ifndef BFI_WRITER_INTERNAL_H
#define BFI_WRITER_INTERNAL_H

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <zlib.h>

#include "bfi_hash.h"
#include "bfi_writer.h"
#include "format.h"
#include "layouts.h"
#include "zin.h"

/* Set names and their ordinals: an arena plus an open-addressing index. */
struct names {
	char *arena;
	size_t arena_len, arena_cap;
	uint64_t *off; /* off[ord] into arena; name length in len[ord] */
	uint16_t *len;
	uint32_t n, cap;
	uint32_t *slots; /* ordinal + 1, or 0 for empty */
	uint64_t nslots;
};
int names_intern(struct names *t, const char *name, size_t len, uint32_t *ord, int *is_new);
const char *names_get(const struct names *t, uint32_t ord, size_t *len);
void names_free(struct names *t);

/* One key of one set, hashed; the unit the writer sorts and lays out. */
struct rec {
	uint64_t h1, h2;
	uint32_t ord;
	uint32_t pad; /* zero, so records compare and spill byte-for-byte */
};

/*
 * Bounded-memory sort and de-duplication of records (spool.c): a buffer of
 * cap records; when full, sorted and appended to one unlinked spill file
 * in dir as a run of groups, one group per set.
 */
struct spool_group {
	uint32_t ord;
	uint64_t off, n; /* records [off, off + n) of the spill file */
};
struct spool {
	struct rec *buf; /* mapped: buf_bytes */
	size_t n, cap, buf_bytes;
	int fd;                /* the spill file, or -1 before the first spill */
	uint64_t spilled;      /* records in it */
	struct spool_group *groups;
	size_t n_groups, cap_groups;
	char dir[4096];
	uint64_t added;
	unsigned threads; /* sorting a full buffer, one set per item */
	pthread_mutex_t lock; /* spool_add_many's, for readers on several threads */
	pthread_cond_t idle;  /* signalled when no copy into buf is under way */
	unsigned copying;     /* copies into buf under way, outside the lock */
};
int spool_init(struct spool *sp, size_t cap, unsigned threads);
int spool_add(struct spool *sp, const struct rec *r);
/* Add n records; safe to call from several threads at once (not with spool_add). */
int spool_add_many(struct spool *sp, const struct rec *r, size_t n);
/* Sort what is buffered; after this only iteration is allowed. */
int spool_seal(struct spool *sp);
/*
 * The spool's buffered records spilled, sorted as spool_seal sorts them,
 * and the buffer unmapped, so that its half of the budget goes to the
 * sketches or the rows; reading back then reads them all from the spill
 * file, and nothing more may be added.
 */
int spool_release(struct spool *sp);
void spool_free(struct spool *sp);

/* Sort n records of one set by (h1, h2), as the spool sorts them. */
void recs_sort(struct rec *r, size_t n);

/* Iterates the de-duplicated records in (ord, h1, h2) order, set by set. */
struct spool_src;
struct spool_iter {
	struct spool *sp;
	size_t pos;   /* next buffered record of a set not yet reached */
	size_t group; /* next spilled group of a set not yet reached */
	struct spool_src *srcs; /* the groups of the set being merged */
	size_t n_srcs, cap_srcs;
	struct rec last;
	int have_last;
	int one; /* spool_iter_set: this set only */
};
int spool_iter_begin(struct spool_iter *it, struct spool *sp);
/* Iterate set ord's records only (after spool_seal); 0 or -errno. */
int spool_iter_set(struct spool_iter *it, struct spool *sp, uint32_t ord);
/* 1 with *r set, 0 at the end, or -errno. */
int spool_iter_next(struct spool_iter *it, struct rec *r);
void spool_iter_end(struct spool_iter *it);


/*
 * HyperLogLog sketches (summary.c): register i of 2^bits takes the
 * greatest rank of the hashes whose top bits are i.
 */
#define HLL_BITS 12 /* the union of all keys: about 1.6% error */
#define HLL_REGS (1u << HLL_BITS)
#define SET_HLL_BITS 8 /* each set's, and so any union of sets: about 6.5% */
#define SET_HLL_REGS (1u << SET_HLL_BITS)
#define MINHASHES 4
void hll_add_bits(uint8_t *reg, uint64_t h, unsigned bits);
double hll_count_bits(const uint8_t *reg, unsigned bits);
void hll_merge(uint8_t *into, const uint8_t *from, size_t regs);

/*
 * What the planner knows of each set, by input ordinal (summary.c),
 * gathered from its distinct keys once: the sketches are kept only when a
 * layout asked for them will use them.
 */
struct set_sums {
	uint64_t *distinct;
	uint64_t *seen;    /* --min-count: 1 + the distinct keys its files gave; 0 not counted; or NULL */
	uint8_t *hll;      /* SET_HLL_REGS a set, or NULL */
	uint64_t *minhash; /* MINHASHES a set (clustered order), or NULL */
	uint8_t *all;      /* HLL_REGS: the union of every set (the tree's pre-filter), or NULL */
	size_t cap;
	int want_hll, want_minhash, want_seen;
};
/* The summaries of the sets a layout's plan reads (layout.h, wants), as bits. */
#define WANT_HLL 1u     /* each set's HyperLogLog */
#define WANT_MINHASH 2u /* each set's MinHashes: the sets are clustered */
#define WANT_ALL 4u     /* the union's HyperLogLog */

/* wants: what the layouts' plans read (WANT_*, wlayouts_wants). */
int sums_init(struct set_sums *s, const struct bfi_build_options *o, unsigned wants);
/*
 * Is there room in the budget for the counts and sketches of n sets?
 * finishing: no key comes any more, so the spool's buffer may be spilled
 * to make it. 0, or BFI_E_LIMIT saying what --memory would do.
 */
int writer_room_for_sets(bfi_writer *w, size_t n, int finishing);
/* The per-set sketches, which only planning reads, freed: the rows get their memory. */
void sums_drop_sketches(struct set_sums *s);
/* Room for sets 0 .. n - 1, the new ones empty. */
int sums_grow(struct set_sums *s, size_t n);
/*
 * One distinct key of set ord into its sketches, h1 its hash's low half;
 * all: the union's sketch to add it to, or NULL. The caller counts it in
 * distinct[ord] (threads reading neighbouring sets would share its line).
 */
void sums_add(struct set_sums *s, uint32_t ord, uint64_t h1, uint8_t *all);
/* Forget set ord's keys (they will be added again). */
void sums_reset(struct set_sums *s, uint32_t ord);
void sums_free(struct set_sums *s);
/*
 * A join's sets' distinct keys before a --min-count cut (set_sums' seen:
 * 1 + the count, 0 not recorded), n of them by input ordinal, for the
 * catalog: 0 or -ENOMEM.
 */
int writer_carry_seen(bfi_writer *w, const uint64_t *seen, size_t n);

/*
 * How sources.c reads one kind of file, a set a file: every key of file to
 * emit, as the kind makes them (k: the k-mer length; *deepest, if not
 * NULL, raised to a document's depth), 0 or an error with err set; and the
 * set's name from the file's (*name points into file; its length). Each
 * kind's own file defines its: key files in sources.c, FASTA in seq.c,
 * text in text.c, JSON and XML in paths.c.
 */
struct source_kind {
	int (*file_keys)(const bfi_writer *w, const char *file, unsigned k,
	                 int (*emit)(void *ctx, const char *key, size_t len), void *ctx,
	                 unsigned *deepest, char *err, size_t errlen);
	size_t (*set_name)(const char *file, const char **name); /* NULL: a key file's (gzip aside) */
	/*
	 * At most how many keys the decompressed bytes buf (a file's start, len
	 * bytes, cut anywhere) give, to size the reading (sources.c); NULL:
	 * len, a key a byte at most.
	 */
	uint64_t (*sample_keys)(const char *buf, size_t len, unsigned k);
	int splits; /* FASTA or FASTQ: one large file may be read on every thread (split.c) */
};

/*
 * Where a set's keys are read from for the second time (sources.c): the
 * spool, or the file that gave them, which must give them again.
 */
/*
 * A set's distinct keys held in memory since its first reading (split.c),
 * in parts: what the fill reads, with no sort and no second reading.
 */
struct held_keys {
	unsigned parts;
	size_t *n;
	bfi_keyhash **h;
	uint64_t bytes;
};
void held_free(struct held_keys *k);
/*
 * The keys to fn, n at a time, on up to threads threads, thread t's with
 * ctxs[t] (the same ctx on every thread when fn may be called on them at once).
 */
int held_keys_on(const struct held_keys *k, unsigned threads,
                 int (*fn)(void *ctx, const bfi_keyhash *h, size_t n), void *const *ctxs);

struct set_src {
	char *path;  /* the file, unless the spool */
	uint64_t keys, check; /* keys the first reading gave, repeats counted, and the sum of their h1 */
	const struct source_kind *how; /* NULL: the spool (or held) */
	struct held_keys *held;        /* or the keys themselves, held */
};

/* Catalog meta fields an input adds (spec/format.md, "Catalog"). */
#define WRITER_MAX_META 8
struct meta_kv {
	char key[32];
	char *val;
	size_t len;
};

#define POOL_MAX_THREADS 256u /* pool_run's threads at most */

/*
 * stats.c: each phase's wall, CPU and busiest thread (bfi_writer_phase).
 * stats_begin ends the running phase and starts name (a static string);
 * stats_end ends it. While a phase runs, stats_now is its stats on the
 * thread that runs it, and each pool_run it calls there adds the busiest
 * thread of its items' schedule (stats_pool).
 */
#define STATS_PHASES 12
struct stats {
	struct bfi_phase_stats phase[STATS_PHASES];
	unsigned n;
	int running;
	double wall0, cpu0, main0;
	double in_pools; /* the calling thread's CPU time inside pool_run */
	double critical; /* the pools' busiest threads, summed */
	double side;     /* background writes (bg_write): where their lane ends, each begun
	                  * where the main thread's lane stood when it was handed the write */
};
extern _Thread_local struct stats *stats_now;
/*
 * Within a pool's item: the critical path of threads the item ran beside
 * its own (split.c) less its own part, added to the item's time.
 */
extern _Thread_local double stats_nested;
extern _Thread_local int stats_timed; /* running an item of a pool that times its items */
void stats_begin(bfi_writer *w, const char *name);
void stats_end(bfi_writer *w);
double stats_thread_cpu(void);
/* Where the running phase's critical path stands now: serial CPU so far and its pools'. */
double stats_lane_now(void);
/*
 * The threads a library starts on its own (liblzma's decoders), told
 * from ours by being new since stats_tasks: their CPU time, read from
 * /proc before the library ends them. stats_tasks_new: the busiest's
 * seconds (0 when /proc cannot say); it frees before's list.
 */
struct stats_tasks {
	unsigned n;
	long *tid;
};
void stats_tasks(struct stats_tasks *t);
double stats_tasks_new(struct stats_tasks *before);

struct bfi_writer {
	struct bfi_build_options opt;
	uint64_t program; /* the process's own memory, counted in the budget (bfi_writer_create) */
	uint64_t plan_bytes; /* the plan's arrays, once laid out (lay_out), counted in it too */
	struct stats stats;
	/*
	 * Files of one kind given one call at a time (a shell glob's), read
	 * together, on the threads, when a set is next declared another way or
	 * the build finishes (sources_flush): the same ordinals as one call a
	 * file, the speed of one call for them all.
	 */
	struct pending {
		char **files;
		size_t n, cap;
		const struct source_kind *how;
		unsigned k;
		int flushing;
	} pend;
	struct meta_kv meta[WRITER_MAX_META];
	int n_meta;
	/* prebuilt filters (bfi_writer_add_filters), by input ordinal; then no keys */
	bfi_filter **filt;
	size_t n_filt, cap_filt;
	unsigned path_levels; /* JSON/XML input: the deepest document's levels */
	unsigned path_enc, path_max; /* JSON/XML input: the encoding, the same for every call */
	/* text input: the tokenizer of the first call, which every later one must match */
	int text_seen;
	unsigned text_max;
	char *text_stops; /* sorted stop words, each followed by '\n' */
	struct stops *text_stop_list; /* the same, as text.c looks them up */
	size_t text_stops_len;
	const struct bfi_rambo_rows *raw; /* fold/stack: rows given, no keys */
	/* or made as they are written (bfi_writer_rambo_rows_made), where raw's rows are NULL */
	int (*raw_row)(void *ctx, uint32_t r, uint64_t first, uint64_t n, uint8_t *dst);
	void *raw_ctx;
	const struct bfi_flat_given *given; /* compact/merge: flat blocks given, no keys */
	struct names names;
	struct spool spool;
	struct set_sums sums;
	struct set_src *src; /* by input ordinal, cap_src of them; zero: spooled */
	size_t cap_src;
	int direct;     /* sets read from files are read again, not spooled */
	int auto_layout; /* BFI_BUILD_AUTO: opt.layouts is flat until lay_out chooses */
	unsigned kmer;  /* FASTA sources: the k-mer length */
	pthread_mutex_t err_lock; /* writer_fail_shared's */
	uint64_t keys_in;
	uint64_t held_bytes; /* sets' keys held for the fill (struct held_keys) */
	uint64_t count_spilled; /* --min-count's counts that went through a scratch file, bytes (atomic) */
	int plain_keys; /* keys as given were added (bfi_writer_add_dir, _add_tsv) */
	int finished;
	char errmsg[512];
	char warnings[2048]; /* writer_warn()'s lines */
};

/*
 * Everything decided before a byte is written: the sets' order and what
 * every layout shares; each layout's own plan is in its slot of own,
 * where its file keeps it (layout.h, plan_own).
 */
struct plan {
	uint32_t n, k;
	unsigned minor;           /* the index's format minor version: the newest feature it uses */
	uint64_t max_n;           /* the largest set's distinct keys */
	const uint64_t *distinct; /* by input ordinal */
	uint32_t *new_of_old;     /* input ordinal -> ordinal in the snapshot */
	uint32_t *old_of_new;
	uint64_t *ones; /* by ordinal: ones in the set's filter of the first layout */
	void *own[BFI_ROWS]; /* by row; freed with the plan */
};

/*
 * Record a catalog meta field for the inputs: 0 if new or equal to the
 * value already recorded, BFI_E_INPUT (with a message naming what) if it
 * differs, so that one snapshot's keys are all made one way.
 */
int writer_meta(bfi_writer *w, const char *key, const void *val, size_t len, const char *what);

/*
 * The set name an input file gives: its base name, less a trailing ".gz"
 * and then the first of the n_ext extensions it ends in (any case). *name
 * points into path; returns the name's length.
 */
size_t writer_file_name(const char *path, const char *const *exts, size_t n_ext,
                        const char **name);

/*
 * bfi_writer_set and bfi_writer_add_tsv less the reading of queued files
 * (sources.c does that, then calls these): the name checked and declared;
 * the lines of f added.
 */
int writer_set(bfi_writer *w, const char *name, size_t len, uint32_t *ord);
int writer_add_tsv(bfi_writer *w, FILE *f, const char *label);

/*
 * Declare the set name (len bytes) for the input what: BFI_E_DUP_SET, with
 * a message naming what and the set, if the name was declared before.
 */
int writer_new_set(bfi_writer *w, const char *what, const char *name, size_t len, uint32_t *ord);

/*
 * Call fn(w, file, ctx) for path if it is a file, or else for every file in
 * the directory path (names not starting with '.', in byte order), each
 * checked to be a regular file; phase names the progress. Stops at the
 * first nonzero return.
 */
int writer_each_file(bfi_writer *w, const char *path, const char *phase,
                     int (*fn)(bfi_writer *w, const char *file, void *ctx), void *ctx);
/*
 * The files of directory path (names not starting with '.', in byte
 * order, each checked to be a regular file), malloc'd: 0, or an error
 * with the message set and nothing to free.
 */
int writer_list_files(bfi_writer *w, const char *path, char ***files, size_t *count);

int writer_fail(bfi_writer *w, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The least budget a build is given, whatever it asks (writer.c, input.c). */
#define WRITER_MIN_MEMORY (4ull << 20)
/* the program and its libraries, resident, at the least: inside the budget (bfi_writer_create) */
#define WRITER_PROGRAM (3ull << 20)
/*
 * The bytes the writer may yet fill: --memory less what it holds (the
 * spool's pages touched so far, the sets' names, sources and sketches),
 * the program's own 3 MiB and a slack of 1 MiB for buffers it does not
 * count; at least 2 MiB. Counted, not measured, so that the paths a build
 * takes depend on its input and options only.
 */
uint64_t writer_budget(const bfi_writer *w);
/* writer_fail from any thread: the first message stays. */
int writer_fail_shared(bfi_writer *w, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Does the routing option send this set to the shard being built? */
int writer_routed(const bfi_writer *w, const char *name, size_t len);
/* n less a line end (LF or CRLF) at the end of line (input.c). */
size_t writer_chomp(const char *line, size_t n);
/*
 * The keys of a key file, one a line, less its line end, empty lines
 * skipped: each passed to emit. buf (*cap bytes, grown as a line needs)
 * holds the first got bytes already read. 0, or an error with err set.
 */
int writer_key_lines(struct zin *z, const char *file, char **bufp, size_t *capp, ssize_t got,
                     char *err, size_t errlen,
                     int (*emit)(void *ctx, const char *key, size_t len), void *ctx);
/* The name a key file gives its set: its base name, less ".gz" if it is gzip. */
size_t writer_key_file_name(const char *file, int compressed, const char **name);
void text_free(bfi_writer *w);
/* The name a document (text, JSON, XML) gives its set: its base name less its extension. */
size_t writer_doc_name(const char *file, const char **name);

/*
 * Add the sets of path, a file or a directory of files, each file one set
 * read as how says (k: the k-mer length), on threads.
 */
int sources_add(bfi_writer *w, const char *path, const struct source_kind *how, unsigned k);
/* FASTA/FASTQ files as sets (seq.c): their kind, and the catalog's key rules for k. */
const struct source_kind *writer_fasta_source(void);
int writer_fasta_setup(bfi_writer *w, unsigned k);
/* Key files as sets (sources.c): their kind. */
const struct source_kind *writer_key_source(void);
/*
 * Queue one set named name[0 .. len) of the files paths[0 .. n) of kind
 * how, read one after another as one (sources.c; bfi_writer_add_group).
 */
int sources_add_group(bfi_writer *w, const char *name, size_t len, const char *const *paths,
                      size_t n, const struct source_kind *how, unsigned k);
/*
 * How often each key of one set occurs (count.c), for --min-count: keys
 * given to counter_key (an emit callback), then counter_emit gives each
 * distinct key hash seen least times or more, in no set order. The table
 * stays within most bytes: when full there, its counts go to a scratch
 * file in dir as a sorted run, and counter_emit merges the runs.
 */
struct count_rec { /* a counted hash in a run of the scratch file */
	uint64_t h1, h2, n;
};
#define COUNT_BATCH 32      /* keys hashed and fetched ahead before any is probed */
#define COUNT_FIRST_BITS 12 /* the table starts with 2^12 slots */
struct counter {
	bfi_keyhash *t; /* 2^bits slots; a slot is empty while its count is 0 */
	uint32_t *n;    /* each slot's count, up to least */
	unsigned bits, most_bits; /* most_bits: the most the table may have */
	uint64_t most;            /* bytes the counting may hold */
	size_t used;
	uint32_t least;
	uint64_t keys; /* given, repeats and all */
	uint64_t distinct; /* keys counted, by counter_emit, of any count */
	bfi_keyhash batch[COUNT_BATCH];
	size_t n_batch;
	const char *dir; /* for the scratch file */
	int fd;          /* the scratch file, or -1 */
	int scratch_rc;  /* why writing or reading it failed, or 0 */
	uint64_t spilled; /* records in it */
	uint64_t *runs;   /* where each run starts in it, in records */
	size_t n_runs, cap_runs;
};
void counter_init(struct counter *c, uint32_t least, uint64_t most, const char *dir);
int counter_key(void *ctx, const char *key, size_t len);
int counter_add(struct counter *c, bfi_keyhash h); /* a key already hashed */
int counter_emit(struct counter *c, int (*emit)(void *ctx, bfi_keyhash h), void *ctx);
void counter_free(struct counter *c);
/*
 * bytes of zeroed memory written through at once (malloc and memset),
 * for memory whose every word is read before it is written: calloc's
 * fresh pages would be mapped to the zero page on that first read and
 * copied on the write after, each copy a fault and, with threads, a TLB
 * flush on every other core. NULL when out of memory.
 */
void *writer_zalloc(size_t bytes);
/* The same, the pages written through on up to threads threads (pool_run): for large ones. */
void *writer_zalloc_on(size_t bytes, unsigned threads);
/* Read the files sources_add has queued: 0, or the first error (writer_fail'd). */
int sources_flush(bfi_writer *w);
void sources_free(bfi_writer *w);
/*
 * Each key of input set ord, hashed, to fn, n at a time: from the spool, de-duplicated,
 * or from its file again, repeats and all. Safe on several threads for
 * different sets. 0, or an error with the writer's message set.
 */
int set_keys(bfi_writer *w, uint32_t ord, int (*fn)(void *ctx, const bfi_keyhash *h, size_t n),
             void *ctx);
/*
 * set_keys, on up to threads threads when the set's keys are held, or
 * are one large FASTA or FASTQ file (split.c): thread t calls fn with
 * ctxs[t], at once with the others.
 */
int set_keys_on(bfi_writer *w, uint32_t ord, unsigned threads,
                int (*fn)(void *ctx, const bfi_keyhash *h, size_t n), void *const *ctxs);
/*
 * One large FASTA or FASTQ file read on threads threads (split.c), or
 * in parts on the calling thread alone. split_wanted: is file worth it,
 * 1 MiB and at least share bytes (a compressed file's counted 4 times)?
 * split_first: the first reading of set ord's file, its keys counted; the
 * kept ones held for the fill when the counts fit in memory, else spooled
 * (--min-count, or a layout that reads every set's keys in one pass),
 * else the fill reads the file again: split_again, its keys to fn from
 * every thread. Both give the keys read, repeats and all, and the sum of
 * their h1; 0, or an error with err set.
 */
int split_wanted(const bfi_writer *w, const char *file, uint64_t share);
/*
 * A compressed file made of members decompressed apart (BGZF, zstd in
 * many frames) decompressed on threads decoding threads (frames.c), read
 * in order, its jobs within about memory bytes. frames_open: 1 and *g
 * when path is such a file (and threads > 1), 0 when it is not (zin.c
 * reads it), or -errno with err set. frames_read as zin_read.
 * frames_close: the busiest decoder's CPU seconds.
 */
struct frames;
int frames_open(struct frames **g, const char *path, unsigned threads, uint64_t memory,
                char *err, size_t errlen);
ssize_t frames_read(struct frames *g, void *buf, size_t n, char *err, size_t errlen);
uint64_t frames_offset(const struct frames *g);
double frames_close(struct frames *g);
struct split_result {
	uint64_t keys, check;
	struct held_keys *held; /* the kept keys, held for the fill; or NULL */
	int reread;             /* the fill reads the file again (else the spool has the keys) */
};
int split_first(bfi_writer *w, const char *path, uint32_t ord, unsigned k, unsigned threads,
                struct split_result *res, char *err, size_t errlen);
int split_again(bfi_writer *w, const char *path, unsigned k, unsigned threads,
                int (*fn)(void *ctx, const bfi_keyhash *h, size_t n), void *const *ctxs,
                uint64_t *keys, uint64_t *check, char *err, size_t errlen);
/* Every key of every set, to fn, as set_keys gives them. */
int each_source_key(bfi_writer *w, int (*fn)(void *ctx, uint32_t ord, bfi_keyhash h), void *ctx);
/*
 * The sizing rule (spec/format.md, "Choosing m and k"; writer/filter.c):
 * k = ceil(log2(1/fpr)) within 1..BFI_MAX_K, *capped (if not NULL) set
 * when fpr asks for more; m = ceil(-n k / ln(1 - q^(1/k))), q = max(fpr,
 * 2^-k), the width at which n keys give rate q; at least 64, or 0 when it
 * would pass BFI_MAX_BITS.
 */
uint32_t filter_k(double fpr, int *capped);
uint64_t filter_m(uint64_t n, uint32_t k, double fpr);

/*
 * Record how the keys are made (catalog meta "input"): "keys" (as given:
 * recorded by absence), "text", "fasta" or "paths" (JSON or XML). BFI_E_INPUT if
 * an earlier input made them another way.
 */
int writer_input(bfi_writer *w, const char *kind);
/* Note something the caller should hear of, though the build goes on. */
void writer_warn(bfi_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The ones of a filter of words 64-bit words: a set's count for the catalog. */
static inline uint64_t filter_ones(const uint64_t *f, uint64_t words)
{
	uint64_t ones = 0;
	for (uint64_t x = 0; x < words; x++)
		ones += (uint64_t)__builtin_popcountll(f[x]);
	return ones;
}

/*
 * Threads (pool.c). pool_run calls fn(ctx, item, thread) for items 0 .. n - 1
 * on up to threads threads (thread < threads), and returns the first
 * nonzero return, after which no new item starts. pool_threads: the count
 * to use when asked for `asked` (0: the online cores).
 */
int pool_run(unsigned threads, uint64_t n, int (*fn)(void *ctx, uint64_t item, unsigned thread),
             void *ctx);
unsigned pool_threads(unsigned asked);



/*
 * pwrite or pread all len bytes at off, through short transfers and EINTR:
 * 0 or -errno (-EIO when the file ends first).
 */
int pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
int pread_all(int fd, void *buf, size_t len, uint64_t off);
/*
 * Bytes [off, off + len) of fd, which read as zeros, mapped to be written
 * in place by many threads at once (buffered writes to one file take its
 * lock in turn), the file's blocks allocated first so that a full disk is
 * an error here rather than a SIGBUS at a store: 0 and *map (out_unmap
 * with the same len and off), 1 when the file cannot be so mapped (write
 * it), or -errno.
 */
int out_map(int fd, uint64_t off, size_t len, uint8_t **map);
void out_unmap(uint8_t *map, size_t len, uint64_t off);
/* A scratch file in dir, named bfi-NAME-XXXXXX and unlinked at once: its fd, or -errno. */
int scratch_open(const char *dir, const char *name);
/* x rounded up to an integer, or UINT64_MAX when it would not fit (or is NaN). */
static inline uint64_t ceil_u64(double x)
{
	x = ceil(x);
	if (!(x < 18446744073709551616.0))
		return UINT64_MAX;
	return x < 0 ? 0 : (uint64_t)x;
}

/* Tell the caller's progress callback, if any. */
static inline void progress(bfi_writer *w, const char *phase, uint64_t done, uint64_t total)
{
	if (w->opt.progress)
		w->opt.progress(w->opt.progress_ctx, phase, done, total);
}

/* The summaries of the sets whose keys were spooled (summary.c): one pass over them. */
int sums_from_spool(bfi_writer *w);

/*
 * The plan (plan.c): k, the order of the sets, then each asked-for
 * layout's plan (its ops in its own file, layout.h) from the sets'
 * summaries; max_n is the largest distinct count. plan_free frees
 * what it allocated.
 */
int make_plan(bfi_writer *w, struct plan *p, uint64_t max_n);
/*
 * BFI_BUILD_AUTO's choice for n sets, the largest of max_n keys (spec/
 * format.md, "Choosing the layout"): BFI_BUILD_TREE or BFI_BUILD_FLAT.
 */
unsigned auto_layout(const bfi_writer *w, uint64_t n, uint64_t max_n);
#define AUTO_LAYOUTS (BFI_BUILD_FLAT | BFI_BUILD_TREE) /* what auto_layout may choose */
void plan_free(struct plan *p);
/* m for a filter holding n distinct keys at the rate o asks (filter_m), or --bits. */
uint64_t width_for(const struct bfi_build_options *o, uint64_t n, uint32_t k);
/*
 * Options from a caller built against another header: the caller's first
 * size bytes (the size_t every options struct begins with) over the
 * defaults already in out, ours bytes long, whose size is then ours. 0, or
 * BFI_E_INVALID for a size under least (never initialised) or past ours
 * (a later header's fields, which this library cannot honour).
 */
int bfi__sized(const void *o, void *out, size_t ours, size_t least);
/*
 * The options o as this library's struct (bfi_build_options_init, then
 * the caller's first o->size bytes): 0, or BFI_E_INVALID for a size that
 * is none of ours (o never initialised, or from a later header).
 */
int bfi__build_options(const struct bfi_build_options *o, struct bfi_build_options *out);
/* The same for pack options (pack.c); o not NULL. */
int bfi__pack_options(const struct bfi_pack_options *o, struct bfi_pack_options *out);

/*
 * Sealing (seal.c): the chunk checksums of
 * [4096, sums_at) into table and each section's checksum, read back from
 * fd; a file's XXH3-128 digest and size; the snapshot id.
 */
int checksum_back(bfi_writer *w, int fd, uint64_t sums_at, struct bfi_section *sec,
                  uint32_t n_sec, uint8_t *table);
int digest_file(const char *path, uint8_t digest[16], uint64_t *size);
void snapshot_id(const struct names *names, const uint32_t *old_of_new, const uint8_t *sums,
                 size_t sums_len, uint32_t k, uint8_t id[16]);

/* Write the LMDB catalog file at path (spec/format.md, "Catalog"). */
/* Set j of the snapshot is input set old_of_new[j]; distinct is by input
 * ordinal, ones by snapshot ordinal; seen (--min-count, by input ordinal,
 * set_sums': 1 + the distinct keys its files gave, 0 not counted) or NULL. */
int catalog_write(const char *path, const struct names *names, const struct meta_kv *extra,
                  int n_extra, const uint32_t *old_of_new, const uint64_t *distinct,
                  const uint64_t *seen, const uint64_t *ones, uint32_t k, double fpr,
                  const uint8_t snapshot_id[16], char *err, size_t errlen);

/*
 * Staging (publish.c): a snapshot is written into a directory beside its
 * path, proven bfi's by a marker file that stays locked while the build
 * runs, then swapped into place atomically.
 */
struct staging {
	char dir[4300]; /* PATH.tmp-XXXXXX, or "" once it is gone or published */
	int dfd;        /* the directory, or -1 */
	int mark;       /* the marker, locked, or -1 */
};
/* Make and mark a staging directory beside path. */
int staging_begin(struct staging *st, const char *path, char *err, size_t errlen);
/*
 * Swap the staged directory and the directory at path at once
 * (RENAME_EXCHANGE), made durable: path is then what was staged, and old
 * (oldlen bytes) names where path's directory went, for the caller to
 * remove. st is done with.
 */
int staging_exchange(struct staging *st, const char *path, char *old, size_t oldlen, char *err,
                     size_t errlen);
/*
 * Replace the collection at path by the one staged in st (bfi unpack;
 * collection.c), holding path's lock so that no writer commits into it
 * meanwhile. 0, or BFI_E_BUSY, BFI_E_EXISTS (path is not a collection, or
 * holds what a collection's writer does not make), -errno; err says why,
 * warn (else "") what of the old collection could not be removed.
 */
int collection_replace(struct staging *st, const char *path, char *err, size_t errlen, char *warn,
                       size_t warnlen);
/*
 * Swap the staged snapshot in at path. *warn is set (else "") when the
 * snapshot replaced held a file bfi did not write, and so was kept.
 */
int staging_publish(struct staging *st, const char *path, char *err, size_t errlen, char *warn,
                    size_t warnlen);
/* fsync the directory path is in, so that a rename into it lasts: 0 or -errno. */
int fsync_parent(const char *path);
/*
 * path's directory and last component, each at most len bytes ("." when
 * it has no directory; "a/b/" names b): 0, or BFI_E_INVALID for "/", an
 * empty or too long path, or a last component "." or "..".
 */
int split_path(const char *path, char *parent, char *base, size_t len);
/* Publish it at path, which must not exist (BFI_E_EXISTS): a collection unpacked whole. */
int staging_rename(struct staging *st, const char *path, char *err, size_t errlen);
/* Remove what is left of the staging directory (bfi's files only); unlock. */
void staging_end(struct staging *st);
/* Remove the staging directories beside path that killed builds left. */
void staging_sweep(const char *path);
/*
 * Remove the published snapshot name in directory pfd: bfi's own files in
 * it (and a stray marker), then the directory, which fails if anything
 * else is there. 0 or -errno, or BFI_E_EXISTS if it is not our directory.
 */
int snapshot_remove(int pfd, const char *name);

#endif
