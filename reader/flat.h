/*
 * flat.h - the flat layout's view of its section, shared by its query
 * engine (flat.c) and its batch pipeline (pipe.c).
 */
#ifndef BFI_READER_FLAT_H
#define BFI_READER_FLAT_H

#include "layout.h"
#include "line.h"

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
	/* a grouped run's block (q > 0): rows at bfi_group_row_bit from the run's rows */
	uint64_t q, group_bits, seg, groups; /* groups: the run's G */
	uint64_t run_used;   /* the run's first block: the bits its blocks take a group, else 0 */
	uint32_t run_n;      /* the run's first block: its blocks, else 0 */
	uint32_t first, n;
	const struct bfi_gvec *vec; /* the run's first block: its lanes for group.c's AVX2 key path, or NULL */
};

/*
 * A grouped run of at most 8 blocks in one line a group, rows of at most
 * 32 bits and 64 sets in all, as AVX2 lanes (group.c): lane b holds block
 * b's q, n and seg, the mask of its n bits and the place of its first set
 * among the run's; lanes past the run are zero. Its sets' answers then
 * come as the bits of one word.
 */
#define BFI_GVEC_LANES 8
struct bfi_gvec {
	uint64_t q[BFI_GVEC_LANES], n[BFI_GVEC_LANES], seg[BFI_GVEC_LANES];
	uint64_t mask[BFI_GVEC_LANES], shl[BFI_GVEC_LANES];
};

struct bfi_flat {
	struct bfi_flat_desc d;
	struct bfi_gvec *gvec;     /* the lanes of runs that take them, owned (NULL in a scan's view) */
	uint32_t n_blocks, k;
	struct bfi_rblock *blocks;
	uint64_t max_row_bytes;    /* of all blocks: sizes a query's scratch */
	uint64_t max_packed_bytes; /* row_bytes of the widest packed block, 0 if none */
	uint32_t max_block_sets;
	uint32_t runs;             /* grouped runs of more than one block */
};

#define bfi__flat(s) BFI_VIEW(s, BFI_ROW_FLAT, struct bfi_flat)

/* Do every block's rows count as short, so that the pipeline (pipe.c) answers batches? */
static inline int bfi__flat_short(const struct bfi_flat *f)
{
	return f->max_row_bytes <= BFI_SHORT_ROW;
}

#define BFI_MANY_BLOCKS 4 /* above this, blocks' pre-filters are requested ahead */

/* Where the pre-filter of block b holds the first probe z0 of a key (its line, for line ones). */
static inline const uint8_t *bfi__pre_line_of(const struct bfi_rblock *b, uint64_t z0)
{
	return b->pre + (b->line_pre ? bfi_pre_line(z0, b->pre_m) : bfi_reduce(z0, b->pre_m)) / 8;
}

/*
 * The 64 bits of packed rows from byte p, bit sh (below 8): packed rows
 * are followed by 64 zero bits, so the ninth byte is always there.
 */
static inline uint64_t bfi__packed_word(const uint8_t *p, unsigned sh)
{
	uint64_t lo;
	memcpy(&lo, p, 8);
	return le64toh(lo) >> sh | (uint64_t)p[8] << 1 << (63 - sh);
}

/* The first bit of packed row r of block b, from b->rows. */
static inline uint64_t bfi__row_bit(const struct bfi_rblock *b, uint64_t r)
{
	return b->q ? bfi_group_row_bit(r, b->q, b->group_bits, b->seg, b->row_bits) : r * b->row_bits;
}

/*
 * Row r of block b as whole lines: in place, or, for packed rows, copied
 * out to the slot-th row_bytes of res->pack (pack_room made room).
 */
static inline const uint8_t *bfi__flat_row(const struct bfi_rblock *b, uint64_t r, bfi_result *res,
                                      size_t slot)
{
	if (!b->packed)
		return b->rows + r * b->row_bytes;
	uint8_t *dst = res->pack + slot * b->row_bytes;
	bfi__unpack_row(b->rows, bfi__row_bit(b, r), b->n, (uint64_t *)(void *)dst, b->row_bytes);
	return dst;
}

/*
 * The index bytes [*from, *to) a query reads of block b's row for probe z:
 * a row in whole lines, a packed row and the 9 bytes its last word load
 * may reach, or a grouped run's whole group line and the line after.
 */
static inline void bfi__flat_row_span(const bfi_snapshot *s, const struct bfi_rblock *b, uint64_t z,
                                      uint64_t *from, uint64_t *to)
{
	uint64_t base = (uint64_t)(b->rows - s->map);
	if (b->q) {
		uint64_t groups = b->m / b->q, gbytes = b->group_bits / 8, g = bfi_reduce(z, groups);
		*from = base + g * gbytes;
		*to = base + (g + 1) * gbytes + 64;
	} else if (b->packed) {
		uint64_t bit = bfi_reduce(z, b->m) * b->row_bits;
		*from = base + bit / 8;
		*to = base + (bit + b->row_bits + 7) / 8 + 9;
	} else {
		*from = base + bfi_reduce(z, b->m) * b->row_bytes;
		*to = *from + b->row_bytes;
	}
}

/* The most state a pass over a block's rows keeps for one key (layout.h, scan_key_state). */
uint64_t bfi__flat_scan_key_state(const bfi_snapshot *s);
/* A block's queries in one pass over its rows, range by range (scan_pass.c; layout.h, scan_rows). */
int bfi__flat_scan_rows(const bfi_snapshot *s, uint64_t first, uint64_t n,
                        const struct bfi_expr *const *qs, size_t nq, double theta,
                        bfi_result *const *res, struct bfi_scan_io *io);

/*
 * Make room for, and reset, everything flat query e needs in res, and
 * compute its keys' probes into res->z. 0 or -ENOMEM.
 */
int bfi__flat_prepare(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res, int scores);
/* Ask ahead for the first probes of every block's pre-filter, for query e (block.c). */
void bfi__flat_prefetch_pre(const struct bfi_flat *f, const struct bfi_expr *e,
                            const bfi_result *res);
/* One block of a prepared query (block.c). */
void bfi__flat_block(const bfi_snapshot *s, const struct bfi_expr *e, const struct bfi_rblock *b,
                     bfi_result *res, bfi_and_fn and_rows);
/* May block b hold the key of probes z, by its pre-filter? Counts the bytes read in res. */
int bfi__pre_pass(const struct bfi_rblock *b, const uint64_t *z, uint32_t k, bfi_result *res);

/*
 * The pipeline (pipe.c): batches of one-key queries, bare keys and a
 * threshold query's terms over blocks of short rows.
 */
int bfi__pipe_batch(const bfi_snapshot *s, const struct bfi_expr *const *qs, size_t n,
                    bfi_result *const *res);
int bfi__pipe_keys(const bfi_snapshot *s, const bfi_keyhash *keys, size_t n, bfi_result *res,
                   size_t *ends);
/* Count in res->counts the sets of block b holding each of terms terms of probes z. */
void bfi__pipe_terms(const struct bfi_rblock *b, const uint64_t *z, uint32_t terms, uint32_t k,
                     bfi_result *res, uint32_t *hits);

/*
 * A threshold query's terms [from, terms) of probes z on block b, where
 * counts[j] holds set j's hits of the terms before from: a set is dropped
 * once its hits and the terms left cannot reach need, and each term reads
 * only the words of its rows that hold sets not dropped (flat_survivors.c).
 * alive and live_words: room for the block's words of sets. 0 or
 * BFI_E_TIMEOUT.
 */
int bfi__survivors(const struct bfi_rblock *b, const uint64_t *z, uint32_t from, uint32_t terms,
                   uint32_t k, uint32_t need, uint32_t *counts, uint64_t *alive,
                   uint32_t *live_words, bfi_result *res);

/*
 * Grouped runs (group.c): can the run beginning at b0 be counted a term at
 * a time for all its blocks (at most BFI_GROUP_FAST_BLOCKS blocks, rows of
 * at most 57 bits)? Then bfi__group_terms adds to counts[j], j counted
 * from b0->first, each set's terms found.
 */
#define BFI_GROUP_FAST_BLOCKS 16
int bfi__group_fast(const struct bfi_rblock *b0);
/* The sets of the run beginning at b0: its blocks' together. */
static inline uint32_t bfi__run_sets(const struct bfi_rblock *b0)
{
	const struct bfi_rblock *last = b0 + b0->run_n - 1;
	return last->first + last->n - b0->first;
}
void bfi__group_terms(const struct bfi_rblock *b0, const uint64_t *z, uint32_t terms, uint32_t k,
                      uint32_t *counts);
/* Ask for the lines of the k probes z in the run beginning at b0. */
void bfi__group_ask(const struct bfi_rblock *b0, const uint64_t *z, uint32_t k);
/*
 * The sets of the run beginning at b0 that may hold the key of probes z,
 * ascending, into out; its lines asked for before (bfi__group_ask), all k
 * at once, since read probe by probe a probe's work for every block would
 * leave the later probes' loads waiting for the earlier ones.
 */
size_t bfi__group_key(const struct bfi_rblock *b0, const uint64_t *z, uint32_t k, uint32_t *out);
/* Does the run beginning at b0 fit struct bfi_gvec? Then bfi__group_lanes fills v. */
int bfi__group_lanes_fit(const struct bfi_rblock *b0);
void bfi__group_lanes(const struct bfi_rblock *b0, struct bfi_gvec *v);

#endif
