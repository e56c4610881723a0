/*
 * flat.h - the flat layout's plan and filling, shared by its files:
 * flat.c (plan, stripes), fill.c (blocks from the sets' own filters),
 * rowmap.c, and flat_copy.c (a join's given columns).
 */
#ifndef BFI_WRITER_FLAT_H
#define BFI_WRITER_FLAT_H

#include "layout.h"


/* The flat layout's plan: its blocks, where each set and row goes. */
struct flat_plan {
	uint32_t *block_of;       /* by ordinal */
	struct bfi_block *blocks;
	uint32_t n_blocks;
	struct rowmap *rowmap;    /* by block: where its rows go (grouped runs: flat_group) */
	/* compaction and merge: each block's given block, and its kept columns skipped there */
	uint32_t *given_block;
	uint64_t *given_skip;
	uint64_t size;
	int line_pre;   /* pre-filters take one 512-bit line per key */
};
static inline struct flat_plan *flat_of(const struct plan *p)
{
	return p->own[BFI_ROW_FLAT];
}
/* The blocks and pre-filters (flat_plan.c), from the sets' summaries or a join's given blocks. */
int plan_flat(bfi_writer *w, struct plan *p);
/* Each block of the plan that pays as a grouped run, made one (flat_group.c). */
int group_blocks(bfi_writer *w, struct plan *p);
/* a + b, or UINT64_MAX when it would not fit: a cost in the planners' sums. */
static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}
/* A block's cost to queries, in bytes, when neither the caller nor the sets set one. */
#define DEFAULT_BLOCK_COST (1u << 20)

/*
 * A block's rows written on a thread of their own while the next block
 * fills (fill.c): the kernel's copy of them into the page cache, and any
 * wait for the disk, then overlap the filling. bg_held() is the memory
 * the write holds until it ends; bg_wait() joins it, frees that memory
 * and returns its error, its CPU time added to the phase's side lane from
 * where the main thread's lane stood when it was handed over.
 */
struct bg_write {
	pthread_t t;
	int active;
	int fd;
	uint8_t *buf;
	size_t len;
	uint64_t off;
	int rc;
	double cpu;   /* the write's CPU time */
	double start; /* stats_lane_now() when it was handed over */
};
uint64_t bg_held(const struct bg_write *g);
int bg_wait(struct bg_write *g);
/* Write len bytes of buf (malloc'd, now g's) at off: on g's thread, or at once if none starts. */
int bg_start(struct bg_write *g, int fd, uint8_t *buf, size_t len, uint64_t off);
/*
 * Fill flat block bi in memory from its sets' own filters (fill.c) and
 * write its rows and pre-filter at sec_off: through bg when it is not
 * NULL (after the write it holds ends), else at once; or, for a block of
 * a grouped run, into run, the run's rows, which the caller writes. 0, or
 * 1 if they would not fit in budget bytes (nothing done), or an error.
 */
/* Each flat block's struct rowmap, once the blocks are laid out (rowmap.c). 0 or an error. */
int flat_rowmaps(struct plan *p);
int fill_block(bfi_writer *w, const struct plan *p, uint32_t bi, int fd, uint64_t sec_off,
               uint64_t budget, struct bg_write *bg, uint8_t *run);
/*
 * The same for a block whose rows do not fit: through a scratch file of
 * slices (fill.c). 0, or 1 if even 64 filters, the pre-filter or 64 rows
 * would not fit in budget bytes (nothing done), or an error.
 */
int fill_block_sliced(bfi_writer *w, const struct plan *p, uint32_t bi, int fd, uint64_t sec_off,
                      uint64_t budget);
/*
 * A flat block's row stride for n sets (spec/format.md, "Flat section"):
 * whole lines, which queries read in place, unless that padding would add
 * more than a twentieth to the block; then packed, n bits a row, which a
 * query copies out (a one-set block is then a plain Bloom filter). Inline,
 * since both the planner (flat.c) and compaction (flat_copy.c) lay out blocks.
 */
static inline uint64_t flat_row_bits(uint64_t n_sets)
{
	uint64_t lined = bfi_bits_bytes(n_sets) * 8;
	return (lined - n_sets) * 20 <= n_sets ? lined : n_sets;
}
/*
 * The blocks a block of n_sets sets is cut into, a fresh build's and a
 * join's alike (spec/format.md, "Choosing m, k, blocks and pre-filters"):
 * past 512 sets, packed rows become blocks of 512 sets and one of the
 * rest; else 1.
 */
static inline uint64_t line_parts(uint64_t n_sets)
{
	return n_sets > 512 && !bfi_rows_lined(flat_row_bits(n_sets)) ? (n_sets + 511) / 512 : 1;
}
/* Compaction and merge (flat_copy.c): the flat plan from the given blocks, and their rows. */
int plan_given(bfi_writer *w, struct plan *p);
int fill_given(bfi_writer *w, const struct plan *p, int fd, uint64_t sec_off, uint64_t budget);
/*
 * Row r of every kept given column (n of them), in set order, ORed into
 * dst (flat_copy.c); one width only.
 */
struct given_cols {
	const struct bfi_flat_given *g;
	uint32_t n_parts;
	const struct bfi_flat_part **parts;
	struct run **runs;
	uint64_t *n_runs;
};
int given_cols_open(const struct bfi_flat_given *g, uint64_t n, struct given_cols *c);
void given_cols_row(const struct given_cols *c, uint64_t r, uint64_t *dst);
void given_cols_close(struct given_cols *c);

/* Block b: ordinals [first, end), m bits wide. */
static inline void set_block(struct plan *p, uint32_t b, uint64_t first, uint64_t end, uint64_t m)
{
	struct bfi_block *blk = &flat_of(p)->blocks[b];
	blk->first_set = first;
	blk->n_sets = end - first;
	blk->row_bits = flat_row_bits(blk->n_sets);
	blk->m = m;
	for (uint64_t j = first; j < end; j++)
		flat_of(p)->block_of[j] = b;
}

#endif
