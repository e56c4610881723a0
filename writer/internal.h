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
#include "spool.h"
#include "stats.h"
#include "summary.h"

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

/* Catalog meta fields an input adds (spec/format.md, "Catalog"). */
#define WRITER_MAX_META 8
struct meta_kv {
	char key[32];
	char *val;
	size_t len;
};

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
	int protein;    /* their sequences are proteins: amino-acid k-mers (bfi_writer_add_protein) */
	pthread_mutex_t err_lock; /* writer_fail_shared's */
	uint64_t keys_in;
	uint64_t held_bytes; /* sets' keys held for the fill (struct held_keys) */
	uint64_t count_spilled; /* --min-count's counts that went through a scratch file, bytes (atomic) */
	int plain_keys; /* keys as given were added (bfi_writer_add_dir, _add_tsv) */
	/* a join's state of each layout it carries from its segments (layout.h, join_check), by row */
	void *carried[BFI_ROWS];
	int finished;
	char errmsg[512];
	char warnings[2048]; /* writer_warn()'s lines */
};

/* A sequence's keys, as bfi_kmer_keys and bfi_protein_keys give them. */
typedef int (*writer_seq_fn)(const char *seq, size_t len, unsigned k, bfi_kmer_fn fn, void *ctx);
/* The keys of w's sequences: amino-acid k-mers' for proteins, else DNA's canonical k-mers'. */
static inline writer_seq_fn writer_seq_keys(const bfi_writer *w)
{
	return w->protein ? bfi_protein_keys : bfi_kmer_keys;
}

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

/* The flags of the layouts a join carries itself (carried): given, as its columns are. */
static inline unsigned writer_carried(const bfi_writer *w)
{
	unsigned f = 0;
	for (int r = 0; r < BFI_ROWS; r++)
		f |= w->carried[r] ? bfi_layout_rows[r].flag : 0;
	return f;
}

/* Tell the caller's progress callback, if any. */
static inline void progress(bfi_writer *w, const char *phase, uint64_t done, uint64_t total)
{
	if (w->opt.progress)
		w->opt.progress(w->opt.progress_ctx, phase, done, total);
}

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

#endif
