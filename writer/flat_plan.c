/*
 * flat_plan.c - the flat layout's plan (spec/format.md, "Choosing m, k, blocks
 * and pre-filters"): sets cut into blocks for space, blocks cut again
 * where queries gain, and each block's pre-filter.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_hash.h"
#include "flat.h"

/*
 * Blocks (spec/format.md, "Choosing blocks"): boundaries between any two
 * sets up to MAX_CANDIDATES sets, at multiples of 512 sets (512 * 2^i)
 * beyond, chosen by dynamic programming to minimise the bytes of rows, as
 * they are stored, plus a cost for each block: every block costs a query
 * k more random loads, while a narrower block saves space. The cost is
 * options.block_cost when given, and DEFAULT_BLOCK_COST beyond
 * MAX_CANDIDATES sets. Up to there, where a block may be as small as one
 * set, the least space blocks reach (cut at DEFAULT_BLOCK_COST each) sets
 * it: a block must save a 32nd of that if it is one of the first blocks
 * whose rows together fit CACHED_BLOCK, which a cache keeps, and half of
 * it otherwise, since its k loads are misses as costly as every other
 * block's; never less than DEFAULT_BLOCK_COST. So a few small sets beside
 * large ones get a block of their own (46 virus genomes beside 19
 * bacteria), while bacteria of widths less than twice apart stay in one
 * block unless --block-cost asks for the space.
 */
#define CACHED_BLOCK (1u << 20)
#define SMALL_SHARE 32u
#define LARGE_SHARE 2u
#define MAX_CANDIDATES 4096u

/* Sets per candidate segment: 1 up to MAX_CANDIDATES sets, else 512 doubled until there are at most MAX_CANDIDATES. */
static uint32_t segment_step(uint32_t n)
{
	if (n <= MAX_CANDIDATES)
		return 1;
	uint32_t step = 512;
	while ((n + step - 1) / step > MAX_CANDIDATES)
		step *= 2;
	return step;
}

/*
 * Bytes of the rows of a block of n_sets sets, m bits wide, as the
 * program counts them (UINT64_MAX: too many): as stored, packed or lined,
 * where blocks may end after any set (step 1); past that, in whole lines,
 * as a query reads them. Counted packed there, a block of many sets of one
 * width would be cut to save a few bits of padding a row, at k loads more
 * for every query for a fraction of a percent of the space.
 */
static uint64_t rows_space(uint32_t step, uint64_t n_sets, uint64_t m)
{
	uint64_t bytes;
	if (step == 1)
		bytes = bfi_block_rows_bytes(m, flat_row_bits(n_sets));
	else if (__builtin_mul_overflow(m, bfi_bits_bytes(n_sets), &bytes))
		bytes = 0;
	return bytes ? bytes : UINT64_MAX;
}

/* Filter width of each segment: that of its largest set (the widest of all, fixed_width). */
static uint64_t *segment_widths(const struct bfi_build_options *o, const struct plan *p,
                                uint32_t step, uint32_t c)
{
	uint64_t *segw = malloc(c * sizeof *segw), widest = 0;
	if (segw == NULL)
		return NULL;
	for (uint32_t j = 0; j < p->n; j++) {
		uint64_t w = width_for(o, p->distinct[p->old_of_new[j]], p->k);
		if (j % step == 0)
			segw[j / step] = 0;
		if (w > segw[j / step])
			segw[j / step] = w;
		if (w > widest)
			widest = w;
	}
	if (o->fixed_width)
		for (uint32_t i = 0; i < c; i++)
			segw[i] = widest;
	return segw;
}

/* Bytes a row of a block of n sets costs a query, in the query model below: whole lines, as it reads them. */
static double row_cost(uint64_t n_sets)
{
	return (double)bfi_bits_bytes(n_sets);
}

/* The widest segment of [a, e). */
static uint64_t widest_of(const uint64_t *segw, uint32_t a, uint32_t e)
{
	uint64_t m = 0;
	for (uint32_t x = a; x < e; x++)
		m = segw[x] > m ? segw[x] : m;
	return m;
}

/* Ordinal where segment i (of c, step sets each) starts; i == c: the end. */
static uint64_t segment_start(const struct plan *p, uint32_t step, uint32_t c, uint32_t i)
{
	return i == c ? p->n : (uint64_t)i * step;
}

/* Segments [*a, *e) of block blk, whose bounds fall on segment starts. */
static void block_segments(const struct plan *p, const struct bfi_block *blk, uint32_t step,
                           uint32_t c, uint32_t *a, uint32_t *e)
{
	uint64_t end = blk->first_set + blk->n_sets;
	*a = (uint32_t)(blk->first_set / step);
	*e = end == p->n ? c : (uint32_t)(end / step);
}

/*
 * Part i of q near-equal runs of segments [a, e), cut at multiples of 512
 * sets from a (unit segments, step sets each), so that parts of lined
 * blocks stay whole lines: [*pa, *pe). q is at most units_of(a, e, unit).
 */
static uint32_t units_of(uint32_t a, uint32_t e, uint32_t unit)
{
	return (e - a + unit - 1) / unit;
}

/* Segments of step sets in 512 sets, at least 1. */
static uint32_t split_unit(uint32_t step)
{
	return step >= 512 ? 1 : 512 / step;
}

static uint32_t part_at(uint32_t a, uint32_t e, uint32_t unit, uint32_t q, uint32_t i)
{
	uint64_t at = a + (uint64_t)units_of(a, e, unit) * i / q * unit;
	return i == q || at > e ? e : (uint32_t)at;
}

static void part_of(uint32_t a, uint32_t e, uint32_t unit, uint32_t q, uint32_t i, uint32_t *pa,
                    uint32_t *pe)
{
	*pa = part_at(a, e, unit, q, i);
	*pe = part_at(a, e, unit, q, i + 1);
}

/*
 * The c candidate segments of step sets each, segw[i] wide, cut for space.
 * A block costs large_cost, or small_cost if it belongs to the first
 * blocks, whose rows together fit CACHED_BLOCK (the sets come smallest
 * first): a cache keeps those lines, whatever else a query reads, but not
 * many such blocks beside each other. So the program runs over two states
 * at each candidate boundary e: [0, e) cut into any blocks (0), or into
 * cached blocks only (1). *space: the bytes of the blocks' rows.
 */
struct cut_state {
	uint64_t cost, cached; /* least cost; state 1: the bytes of its rows */
	uint32_t from;         /* where its last block starts */
	uint8_t from_state;    /* and the state there */
};

static int cut_blocks(const struct bfi_build_options *o, struct plan *p, uint32_t step, uint32_t c,
                      const uint64_t *segw, uint64_t small_cost, uint64_t large_cost,
                      uint64_t *space)
{
	struct cut_state *st = malloc(2 * ((size_t)c + 1) * sizeof *st); /* st[2 e + state] */
	int rc = 0;
	free(flat_of(p)->blocks);
	free(flat_of(p)->block_of);
	flat_of(p)->blocks = NULL;
	flat_of(p)->block_of = NULL;
	if (st == NULL)
		return -ENOMEM;
	/* a cap below one segment still allows one segment per block */
	uint64_t cap = o->max_block_sets ? (o->max_block_sets / step) * (uint64_t)step : 0;
	if (o->max_block_sets && cap < step)
		cap = step;
	st[0] = st[1] = (struct cut_state){0, 0, 0, 0};
	for (uint32_t e = 1; e <= c; e++) {
		uint64_t end = e == c ? p->n : (uint64_t)e * step, wmax = 0;
		struct cut_state *any = &st[2 * (size_t)e], *cached = any + 1;
		any->cost = cached->cost = UINT64_MAX;
		for (uint32_t a = e; a-- > 0;) {
			if (cap && end - (uint64_t)a * step > cap)
				break;
			if (segw[a] > wmax)
				wmax = segw[a];
			uint64_t bytes = rows_space(step, end - (uint64_t)a * step, wmax);
			for (uint8_t s = 0; s < 2; s++) {
				const struct cut_state *at = &st[2 * (size_t)a + s];
				uint64_t cost = sat_add(sat_add(at->cost, bytes), large_cost);
				if (cost < any->cost)
					*any = (struct cut_state){cost, 0, a, s};
			}
			const struct cut_state *at = &st[2 * (size_t)a + 1];
			if (at->cost != UINT64_MAX && at->cached + bytes <= CACHED_BLOCK) {
				uint64_t cost = sat_add(sat_add(at->cost, bytes), small_cost);
				if (cost < cached->cost)
					*cached = (struct cut_state){cost, at->cached + bytes, a, 1};
			}
		}
	}
	uint8_t last = st[2 * (size_t)c + 1].cost < st[2 * (size_t)c].cost;
	flat_of(p)->n_blocks = 0;
	for (uint32_t e = c, s = last; e > 0;) {
		const struct cut_state *x = &st[2 * (size_t)e + s];
		flat_of(p)->n_blocks++;
		e = x->from;
		s = x->from_state;
	}
	flat_of(p)->blocks = calloc(flat_of(p)->n_blocks, sizeof *flat_of(p)->blocks);
	flat_of(p)->block_of = malloc(p->n * sizeof *flat_of(p)->block_of);
	if (!flat_of(p)->blocks || !flat_of(p)->block_of) {
		rc = -ENOMEM;
		goto out;
	}
	uint32_t b = flat_of(p)->n_blocks;
	*space = 0;
	for (uint32_t e = c, s = last; e > 0;) {
		const struct cut_state *x = &st[2 * (size_t)e + s];
		set_block(p, --b, segment_start(p, step, c, x->from), segment_start(p, step, c, e),
		          widest_of(segw, x->from, e));
		*space = sat_add(*space, rows_space(step, flat_of(p)->blocks[b].n_sets, flat_of(p)->blocks[b].m));
		e = x->from;
		s = x->from_state;
	}
out:
	free(st);
	return rc;
}

/* At a cost of the shares of space, at least DEFAULT_BLOCK_COST. */
static uint64_t share_cost(uint64_t space, uint32_t share)
{
	return space / share > DEFAULT_BLOCK_COST ? space / share : DEFAULT_BLOCK_COST;
}

/*
 * The blocks for space: at options.block_cost a block when given; else cut
 * once at DEFAULT_BLOCK_COST a block, for the least space the cuts reach,
 * and again at the shares of that space (see above).
 */
static int plan_blocks(const struct bfi_build_options *o, struct plan *p, uint32_t step, uint32_t c,
                       const uint64_t *segw)
{
	uint64_t least = 0, space = 0;
	if (o->block_cost)
		return cut_blocks(o, p, step, c, segw, o->block_cost, o->block_cost, &space);
	int rc = cut_blocks(o, p, step, c, segw, DEFAULT_BLOCK_COST, DEFAULT_BLOCK_COST, &least);
	if (rc == 0 && flat_of(p)->n_blocks > 1 && step == 1)
		rc = cut_blocks(o, p, step, c, segw, share_cost(least, SMALL_SHARE),
		                share_cost(least, LARGE_SHARE), &space);
	return rc;
}

/*
 * A HyperLogLog sketch of each segment's union, c sketches of SET_HLL_REGS
 * registers, from the sets' own. The union of any run of segments is the
 * register-wise maximum of theirs.
 */
static int segment_sketches(bfi_writer *w, const struct plan *p, uint32_t step, uint32_t c,
                            uint8_t **out)
{
	uint8_t *seg = calloc(c, SET_HLL_REGS);
	if (seg == NULL)
		return -ENOMEM;
	for (uint32_t o = 0; o < p->n; o++)
		hll_merge(seg + (size_t)(p->new_of_old[o] / step) * SET_HLL_REGS,
		          w->sums.hll + (size_t)o * SET_HLL_REGS, SET_HLL_REGS);
	*out = seg;
	return 0;
}

/* The estimated distinct keys of segments [a, e); reg is scratch. */
static double union_of(const uint8_t *seg, uint32_t a, uint32_t e, uint8_t *reg)
{
	memset(reg, 0, SET_HLL_REGS);
	for (uint32_t i = a; i < e; i++)
		hll_merge(reg, seg + (size_t)i * SET_HLL_REGS, SET_HLL_REGS);
	return hll_count_bits(reg, SET_HLL_BITS);
}

/*
 * Union pre-filters (spec/format.md, "Choosing m, k, blocks and
 * pre-filters"): a block gets one when skipping it for keys it does not
 * hold saves more than probing costs. Queries are assumed to be half keys
 * of the index (passing with P, the share of all distinct keys that the
 * block's union holds) and half keys absent from it (which pass only as
 * false positives), so a key passes with about P / 2. A query reads at
 * least two rows of a block and a probe at most k lines, so keep one when
 *   (1 - P / 2) * 2 * row_bytes > k * 64.
 * options.prefilter can force it on or off. The same model gives what a
 * block costs a query, in bytes: k * 64 + P / 2 * 2 * row_bytes with a
 * pre-filter, 2 * row_bytes without; and its size, rows plus pre-filter.
 */
struct block_model {
	int keep;       /* a pre-filter pays */
	uint64_t pre_m; /* its width */
	double query;   /* bytes a query reads, on average */
	double space;   /* bytes of rows and pre-filter */
};

#define PRE_CACHED (256u << 10) /* bytes of a pre-filter a cache keeps while a batch runs */

static struct block_model model_block(const bfi_writer *w, const struct plan *p, uint64_t n_sets,
                                      uint64_t m, double u, double all)
{
	struct block_model b;
	double share = all > 0 ? u / all : 1;
	share = share > 1 ? 1 : share;
	double pass = share / 2, row_bytes = row_cost(n_sets);
	int mode = w->opt.prefilter;
	/* sized like any filter, for the estimated union plus 15%; whole lines; 0: too large for any */
	uint64_t pre_m = width_for(&(struct bfi_build_options){.fpr = w->opt.fpr}, ceil_u64(u * 1.15),
	                           p->k);
	if (flat_of(p)->line_pre)
		pre_m = (pre_m + BFI_PRE_LINE_BITS - 1) / BFI_PRE_LINE_BITS * BFI_PRE_LINE_BITS;
	/*
	 * Also kept: a line pre-filter that a cache keeps, and that costs a
	 * sixteenth of the block's rows at most, probes in one line from cache:
	 * it saves every key the block does not hold k row lines, the most of a
	 * batch's traffic on a block of small sets beside large ones (46 viruses
	 * beside 19 bacteria: a line a key where the rows took seven). Not where
	 * the caller fixed the blocks or widths (--fixed-width, --block-sets,
	 * --bits), whose pre-filters follow the first rule alone.
	 */
	int cached = mode == BFI_PREFILTER_AUTO && flat_of(p)->line_pre && pass < 0.5 && !w->opt.fixed_width &&
	             !w->opt.max_block_sets && !w->opt.bits && bfi_bits_bytes(pre_m) <= PRE_CACHED &&
	             (double)bfi_bits_bytes(pre_m) * 16 <= (double)m * row_bytes;
	b.keep = pre_m > 0 &&
	         (mode == BFI_PREFILTER_ALWAYS || cached ||
	          (mode != BFI_PREFILTER_NEVER && (1 - pass) * 2.0 * row_bytes > (double)p->k * 64));
	b.pre_m = b.keep ? pre_m : 0;
	b.query = b.keep ? (double)p->k * 64 + pass * 2 * row_bytes : 2 * row_bytes;
	b.space = (double)m * row_bytes + (double)bfi_bits_bytes(b.pre_m);
	return b;
}

/*
 * Cutting blocks for queries (spec/format.md, "Choosing m, k, blocks and
 * pre-filters"). plan_blocks cuts only where it saves space, so sets of one
 * width stay in one block, and a key held by a few of them still reads two
 * whole rows. Cut such a block into q near-equal runs of segments, each
 * with the pre-filter the rule above gives it, when by that model the runs
 * cost a query at most SPLIT_GAIN of what the block does and take at most
 * SPLIT_SPACE of its bytes; of those, take the q whose queries cost least.
 */
#define SPLIT_MAX 32     /* parts one block may be cut into */
#define SPLIT_GAIN 0.75  /* the model's query bytes must fall to this share */
#define SPLIT_SPACE 1.01 /* while the bytes grow by at most 1% */

struct split {
	double query, space; /* sums over the parts */
};

/* Model block [a, e) of segments cut into q parts. */
static struct split model_split(const bfi_writer *w, const struct plan *p, const uint8_t *seg,
                                const uint64_t *segw, uint32_t step, uint32_t c, uint32_t a,
                                uint32_t e, uint32_t q, double all, uint8_t *reg)
{
	struct split s = {0, 0};
	for (uint32_t i = 0; i < q; i++) {
		uint32_t pa, pe;
		part_of(a, e, split_unit(step), q, i, &pa, &pe);
		uint64_t n_sets = segment_start(p, step, c, pe) - segment_start(p, step, c, pa);
		struct block_model b =
		    model_block(w, p, n_sets, widest_of(segw, pa, pe), union_of(seg, pa, pe, reg), all);
		s.query += b.query;
		s.space += b.space;
	}
	return s;
}

/* reg is SET_HLL_REGS bytes of scratch. */
static int split_blocks(bfi_writer *w, struct plan *p, const uint8_t *seg, const uint64_t *segw,
                        uint32_t step, uint32_t c, double all, uint8_t *reg)
{
	uint32_t *parts = calloc(flat_of(p)->n_blocks, sizeof *parts), total = 0;
	struct bfi_block *old = NULL;
	int rc = 0;
	if (parts == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t b = 0; b < flat_of(p)->n_blocks; b++) {
		uint32_t a, e;
		block_segments(p, &flat_of(p)->blocks[b], step, c, &a, &e);
		struct split base = model_split(w, p, seg, segw, step, c, a, e, 1, all, reg), best = base;
		parts[b] = 1;
		for (uint32_t q = 2; q <= units_of(a, e, split_unit(step)) && q <= SPLIT_MAX; q++) {
			if ((double)q * p->k * 64 >= best.query)
				break; /* q probes alone cost more than the best so far */
			struct split s = model_split(w, p, seg, segw, step, c, a, e, q, all, reg);
			if (s.space <= base.space * SPLIT_SPACE && s.query < best.query &&
			    s.query <= base.query * SPLIT_GAIN) {
				best = s;
				parts[b] = q;
			}
		}
		total += parts[b];
	}
	if (total == flat_of(p)->n_blocks)
		goto out;
	old = flat_of(p)->blocks;
	flat_of(p)->blocks = calloc(total, sizeof *flat_of(p)->blocks);
	if (flat_of(p)->blocks == NULL) {
		flat_of(p)->blocks = old;
		old = NULL;
		rc = -ENOMEM;
		goto out;
	}
	uint32_t nb = 0;
	for (uint32_t b = 0; b < flat_of(p)->n_blocks; b++) {
		uint32_t a, e;
		block_segments(p, &old[b], step, c, &a, &e);
		for (uint32_t i = 0; i < parts[b]; i++) {
			uint32_t pa, pe;
			part_of(a, e, split_unit(step), parts[b], i, &pa, &pe);
			set_block(p, nb++, segment_start(p, step, c, pa), segment_start(p, step, c, pe),
			          widest_of(segw, pa, pe));
		}
	}
	flat_of(p)->n_blocks = total;
out:
	free(old);
	free(parts);
	return rc;
}

/*
 * A block of more than 512 sets whose rows would be packed (padding them
 * to whole lines would cost over a twentieth: flat_row_bits) is cut into
 * blocks of 512 sets, whose rows are one line each, read in place, and one
 * block of the rest. The bits are the same, each part as wide as its own
 * widest set, and a key still reads the same lines; but the kernels read
 * lines in place rather than shifting packed words out, which made
 * threshold queries on 2,226 sets one and a half times as slow.
 */
static int line_blocks(const struct bfi_build_options *o, struct plan *p, uint32_t step)
{
	struct flat_plan *fl = flat_of(p);
	uint32_t total = 0;
	if (step != 1) /* past MAX_CANDIDATES sets, blocks end at multiples of 512 already */
		return 0;
	for (uint32_t b = 0; b < fl->n_blocks; b++)
		total += (uint32_t)line_parts(fl->blocks[b].n_sets);
	if (total == fl->n_blocks)
		return 0;
	if (total > BFI_MAX_BLOCKS)
		return 0; /* kept as they are: still a valid plan */
	struct bfi_block *old = fl->blocks;
	fl->blocks = calloc(total, sizeof *fl->blocks);
	if (fl->blocks == NULL) {
		fl->blocks = old;
		return -ENOMEM;
	}
	uint32_t nb = 0;
	for (uint32_t b = 0; b < fl->n_blocks; b++) {
		uint64_t first = old[b].first_set, end = first + old[b].n_sets;
		if (line_parts(old[b].n_sets) == 1) {
			set_block(p, nb++, first, end, old[b].m);
			continue;
		}
		for (uint64_t a = first; a < end; a += 512) {
			uint64_t e = end - a > 512 ? a + 512 : end, m = 0;
			for (uint64_t j = a; j < e; j++) {
				uint64_t wj = o->fixed_width ? old[b].m
				                             : width_for(o, p->distinct[p->old_of_new[j]], p->k);
				m = wj > m ? wj : m;
			}
			set_block(p, nb++, a, e, m < old[b].m ? m : old[b].m);
		}
	}
	fl->n_blocks = total;
	free(old);
	return 0;
}

/*
 * The flat layout's blocks and pre-filters: plan_blocks for space, then,
 * unless pre-filters are off or the caller capped the block size, the cuts
 * that pay for queries, then each block's pre-filter.
 */
int plan_flat(bfi_writer *w, struct plan *p)
{
	if (plan_own(p, BFI_ROW_FLAT, sizeof(struct flat_plan)) == NULL)
		return -ENOMEM;
	struct flat_plan *fl = flat_of(p);
	if (w->given) /* compaction and merge: the blocks are given */
		return plan_given(w, p);
	const struct bfi_build_options *o = &w->opt;
	uint32_t step = segment_step(p->n), c = (p->n + step - 1) / step; /* candidate segments */
	fl->line_pre = !o->classic_prefilters;
	uint64_t *segw = segment_widths(o, p, step, c);
	int rc = segw ? plan_blocks(o, p, step, c, segw) : -ENOMEM;
	if (rc || o->prefilter == BFI_PREFILTER_NEVER) {
		free(segw);
		if (rc == 0 && !o->max_block_sets && !o->block_cost && !o->fixed_width)
			rc = line_blocks(o, p, step);
		if (rc == 0)
			rc = group_blocks(w, p);
		if (rc == 0 && (fl->size = bfi_flat_layout(fl->blocks, fl->n_blocks)) == 0)
			rc = BFI_E_LIMIT;
		return rc ? rc : flat_rowmaps(p);
	}
	uint8_t *seg = NULL, *reg = malloc(SET_HLL_REGS);
	rc = reg ? segment_sketches(w, p, step, c, &seg) : -ENOMEM;
	double all = rc == 0 ? union_of(seg, 0, c, reg) : 0;
	if (rc == 0 && o->max_block_sets == 0)
		rc = split_blocks(w, p, seg, segw, step, c, all, reg);
	if (rc == 0 && !o->max_block_sets && !o->block_cost && !o->fixed_width)
		rc = line_blocks(o, p, step);
	for (uint32_t b = 0; rc == 0 && b < fl->n_blocks; b++) {
		struct bfi_block *blk = &fl->blocks[b];
		uint32_t a, e;
		block_segments(p, blk, step, c, &a, &e);
		blk->pre_m = model_block(w, p, blk->n_sets, blk->m, union_of(seg, a, e, reg), all).pre_m;
	}
	free(seg);
	free(segw);
	free(reg);
	if (rc == 0)
		rc = group_blocks(w, p);
	if (rc == 0 && (fl->size = bfi_flat_layout(fl->blocks, fl->n_blocks)) == 0)
		rc = BFI_E_LIMIT;
	return rc ? rc : flat_rowmaps(p);
}

