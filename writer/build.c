/*
 * build.c - lay out and write a snapshot (spec/format.md, "File layout").
 *
 * 1. Sort and de-duplicate the (ord, key hash) records; count distinct
 *    keys per set and choose m and k.
 * 2. Fill the flat rows a stripe at a time (as many rows as half the
 *    memory budget holds), one pass over the records per stripe, and
 *    write each stripe in place. Count each set's ones as we go.
 * 3. Read the index back to compute the chunk and section checksums.
 * 4. Derive the snapshot id from the content, write the catalog, then the
 *    header that binds them, fsync, and publish.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "bfi_hash.h"
#include "internal.h"

int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* x rounded up to an integer, or UINT64_MAX when it would not fit (or is NaN). */
static uint64_t ceil_u64(double x)
{
	x = ceil(x);
	if (!(x < 18446744073709551616.0))
		return UINT64_MAX;
	return x < 0 ? 0 : (uint64_t)x;
}

/*
 * k (spec/format.md, "Choosing m and k"): ceil(log2(1/p)) unless given,
 * or m/n ln 2 from --bits; at most BFI_MAX_K (bfi_writer_create warns).
 */
static uint32_t choose_k(const struct bfi_build_options *o, uint64_t n)
{
	if (o->hashes)
		return o->hashes;
	if (!o->bits)
		return filter_k(o->fpr, NULL);
	double dn = o->expected_keys ? (double)o->expected_keys : n ? (double)n : 1.0;
	double kd = round((double)o->bits / dn * M_LN2);
	return kd < 1 ? 1 : kd > BFI_MAX_K ? BFI_MAX_K : (uint32_t)kd;
}

/*
 * m for a filter holding n distinct keys at rate o->fpr (filter_m), at
 * least 64; 0 if that passes BFI_MAX_BITS.
 */
static uint64_t width_for(const struct bfi_build_options *o, uint64_t n, uint32_t k)
{
	if (o->bits)
		return o->bits;
	return filter_m(o->expected_keys ? o->expected_keys : n, k, o->fpr);
}

static void progress(bfi_writer *w, const char *phase, uint64_t done, uint64_t total)
{
	if (w->opt.progress)
		w->opt.progress(w->opt.progress_ctx, phase, done, total);
}

/* The summaries of the sets whose keys were spooled: one pass over their distinct keys. */
static int summarize_spool(bfi_writer *w)
{
	struct spool_iter it;
	struct rec r;
	uint64_t seen = 0;
	int rc = spool_iter_begin(&it, &w->spool);
	while (rc == 0 && (rc = spool_iter_next(&it, &r)) == 1) {
		sums_add(&w->sums, r.ord, r.h1, w->sums.all);
		w->sums.distinct[r.ord]++;
		if ((++seen & 0xfffff) == 0)
			progress(w, "counting", seen, w->spool.added);
		rc = 0;
	}
	spool_iter_end(&it);
	return rc;
}

/* Does any flat block have a line pre-filter (format 2.2)? */
static int line_prefilters(const struct plan *p)
{
	for (uint32_t b = 0; p->line_pre && b < p->n_blocks; b++)
		if (p->blocks[b].pre_m)
			return 1;
	return 0;
}

static int cmp_by_size(const void *a, const void *b, void *ctx)
{
	const uint64_t *sizes = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (sizes[x] != sizes[y])
		return sizes[x] < sizes[y] ? -1 : 1;
	return (x > y) - (x < y); /* stable: input order among equals */
}

/*
 * Blocks (spec/format.md, "Choosing blocks"): boundaries at multiples of
 * 512 sets in ordinal order, chosen by dynamic programming to minimise
 * the bytes of rows plus a cost per block (options.block_cost), since every block costs a
 * query k more random cache-line loads while a narrower block saves space.
 */
#define DEFAULT_BLOCK_COST (1u << 20)
#define MAX_CANDIDATES 4096u

/* Sets per candidate segment: 512, doubled until there are at most MAX_CANDIDATES. */
static uint32_t segment_step(uint32_t n)
{
	uint32_t step = 512;
	while ((n + step - 1) / step > MAX_CANDIDATES)
		step *= 2;
	return step;
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

/*
 * A block's row stride (spec/format.md, "Flat section"): whole lines,
 * which queries read in place, unless that padding would add more than a
 * twentieth to the block; then packed, n bits a row, which a query copies
 * out (a one-set block is then a plain Bloom filter).
 */
static uint64_t row_bits_for(uint64_t n_sets)
{
	uint64_t lined = bfi_bits_bytes(n_sets) * 8;
	return (lined - n_sets) * 20 <= n_sets ? lined : n_sets;
}

/*
 * Bytes a row of a block of n sets costs, as the planner counts them: in
 * whole lines, as a query reads it, whatever the file stores. Counting
 * packed bytes instead made the planner cut a small packed block from a
 * large one to save its padding (N = 10^5: 160 sets apart, without a
 * pre-filter), which added k random loads to every query: p50 0.9 to 1.4 us.
 */
static double row_cost(uint64_t n_sets)
{
	return (double)bfi_bits_bytes(n_sets);
}

/* Block b: ordinals [first, end), m bits wide. */
static void set_block(struct plan *p, uint32_t b, uint64_t first, uint64_t end, uint64_t m)
{
	struct bfi_block *blk = &p->blocks[b];
	blk->first_set = first;
	blk->n_sets = end - first;
	blk->row_bits = row_bits_for(blk->n_sets);
	blk->m = m;
	for (uint64_t j = first; j < end; j++)
		p->block_of[j] = b;
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

/* Part i of q near-equal runs of segments [a, e): [*pa, *pe). */
static void part_of(uint32_t a, uint32_t e, uint32_t q, uint32_t i, uint32_t *pa, uint32_t *pe)
{
	*pa = a + (uint32_t)((uint64_t)(e - a) * i / q);
	*pe = a + (uint32_t)((uint64_t)(e - a) * (i + 1) / q);
}

/* The c candidate segments of step sets each, segw[i] wide, cut for space. */
static int plan_blocks(const struct bfi_build_options *o, struct plan *p, uint32_t step, uint32_t c,
                       const uint64_t *segw)
{
	uint64_t *best = malloc((c + 1) * sizeof *best);
	uint32_t *from = malloc((c + 1) * sizeof *from);
	int rc = 0;
	if (!best || !from) {
		rc = -ENOMEM;
		goto out;
	}
	uint64_t block_cost = o->block_cost ? o->block_cost : DEFAULT_BLOCK_COST;
	/* a cap below one segment still allows one segment per block */
	uint64_t cap = o->max_block_sets ? (o->max_block_sets / step) * (uint64_t)step : 0;
	if (o->max_block_sets && cap < step)
		cap = step;
	best[0] = 0;
	for (uint32_t e = 1; e <= c; e++) {
		uint64_t end = e == c ? p->n : (uint64_t)e * step, wmax = 0;
		best[e] = UINT64_MAX;
		for (uint32_t a = e; a-- > 0;) {
			if (cap && end - (uint64_t)a * step > cap)
				break;
			if (segw[a] > wmax)
				wmax = segw[a];
			uint64_t cost = best[a] +
			                (uint64_t)((double)wmax * row_cost(end - (uint64_t)a * step)) +
			                block_cost;
			if (cost < best[e]) {
				best[e] = cost;
				from[e] = a;
			}
		}
	}
	p->n_blocks = 0;
	for (uint32_t e = c; e > 0; e = from[e])
		p->n_blocks++;
	p->blocks = calloc(p->n_blocks, sizeof *p->blocks);
	p->block_of = malloc(p->n * sizeof *p->block_of);
	if (!p->blocks || !p->block_of) {
		rc = -ENOMEM;
		goto out;
	}
	uint32_t b = p->n_blocks;
	for (uint32_t e = c; e > 0; e = from[e])
		set_block(p, --b, segment_start(p, step, c, from[e]), segment_start(p, step, c, e),
		          widest_of(segw, from[e], e));
out:
	free(best);
	free(from);
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

static struct block_model model_block(const bfi_writer *w, const struct plan *p, uint64_t n_sets,
                                      uint64_t m, double u, double all)
{
	struct block_model b;
	double share = all > 0 ? u / all : 1;
	share = share > 1 ? 1 : share;
	double pass = share / 2, row_bytes = row_cost(n_sets);
	int mode = w->opt.prefilter;
	b.keep = mode == BFI_PREFILTER_ALWAYS ||
	         (mode != BFI_PREFILTER_NEVER && (1 - pass) * 2.0 * row_bytes > (double)p->k * 64);
	/* sized like any filter, for the estimated union plus 15%; whole lines */
	b.pre_m = b.keep ? width_for(&(struct bfi_build_options){.fpr = w->opt.fpr},
	                             ceil_u64(u * 1.15), p->k)
	                 : 0;
	b.keep = b.pre_m > 0; /* a union too large for any filter: no pre-filter */
	if (p->line_pre)
		b.pre_m = (b.pre_m + BFI_PRE_LINE_BITS - 1) / BFI_PRE_LINE_BITS * BFI_PRE_LINE_BITS;
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
		part_of(a, e, q, i, &pa, &pe);
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
	uint32_t *parts = calloc(p->n_blocks, sizeof *parts), total = 0;
	struct bfi_block *old = NULL;
	int rc = 0;
	if (parts == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t b = 0; b < p->n_blocks; b++) {
		uint32_t a, e;
		block_segments(p, &p->blocks[b], step, c, &a, &e);
		struct split base = model_split(w, p, seg, segw, step, c, a, e, 1, all, reg), best = base;
		parts[b] = 1;
		for (uint32_t q = 2; q <= e - a && q <= SPLIT_MAX; q++) {
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
	if (total == p->n_blocks)
		goto out;
	old = p->blocks;
	p->blocks = calloc(total, sizeof *p->blocks);
	if (p->blocks == NULL) {
		p->blocks = old;
		old = NULL;
		rc = -ENOMEM;
		goto out;
	}
	uint32_t nb = 0;
	for (uint32_t b = 0; b < p->n_blocks; b++) {
		uint32_t a, e;
		block_segments(p, &old[b], step, c, &a, &e);
		for (uint32_t i = 0; i < parts[b]; i++) {
			uint32_t pa, pe;
			part_of(a, e, parts[b], i, &pa, &pe);
			set_block(p, nb++, segment_start(p, step, c, pa), segment_start(p, step, c, pe),
			          widest_of(segw, pa, pe));
		}
	}
	p->n_blocks = total;
out:
	free(old);
	free(parts);
	return rc;
}

/*
 * The flat layout's blocks and pre-filters: plan_blocks for space, then,
 * unless pre-filters are off or the caller capped the block size, the cuts
 * that pay for queries, then each block's pre-filter.
 */
static int plan_flat(bfi_writer *w, struct plan *p)
{
	const struct bfi_build_options *o = &w->opt;
	uint32_t step = segment_step(p->n), c = (p->n + step - 1) / step; /* candidate segments */
	p->line_pre = !o->classic_prefilters;
	uint64_t *segw = segment_widths(o, p, step, c);
	int rc = segw ? plan_blocks(o, p, step, c, segw) : -ENOMEM;
	if (rc || o->prefilter == BFI_PREFILTER_NEVER) {
		free(segw);
		return rc;
	}
	uint8_t *seg = NULL, *reg = malloc(SET_HLL_REGS);
	rc = reg ? segment_sketches(w, p, step, c, &seg) : -ENOMEM;
	double all = rc == 0 ? union_of(seg, 0, c, reg) : 0;
	if (rc == 0 && o->max_block_sets == 0)
		rc = split_blocks(w, p, seg, segw, step, c, all, reg);
	for (uint32_t b = 0; rc == 0 && b < p->n_blocks; b++) {
		struct bfi_block *blk = &p->blocks[b];
		uint32_t a, e;
		block_segments(p, blk, step, c, &a, &e);
		blk->pre_m = model_block(w, p, blk->n_sets, blk->m, union_of(seg, a, e, reg), all).pre_m;
	}
	free(seg);
	free(segw);
	free(reg);
	return rc;
}

/*
 * RAMBO parameters (spec/format.md, "Choosing the RAMBO parameters"):
 * B, the cells per repetition, is the power of two at or above sqrt(N);
 * R, the repetitions, the least (at least 2) that brings Lemma 4.1's rate
 * for a key of one set, (p (1 - 1/B) + 1/B)^R, down to p. Each repetition's
 * filters are as wide as its largest cell union needs (HyperLogLog with
 * 2^8 registers, plus 15%).
 */
static int plan_rambo(bfi_writer *w, struct plan *p)
{
	const struct bfi_build_options *o = &w->opt;
	uint64_t cells = w->raw ? w->raw->cells : o->cells;
	uint64_t shards = w->raw ? w->raw->shards : o->shards ? o->shards : 1;
	if (cells == 0) { /* the even number at or above sqrt(N), a multiple of S */
		cells = ceil_u64(sqrt((double)p->n));
		cells += cells % 2;
		cells = cells < 2 ? 2 : cells;
		cells = (cells + shards - 1) / shards * shards;
	}
	/* cells at rate min(p, 1/B): a key then matches about one wrong cell per
	 * repetition, so candidates grow as N/B, not as N p */
	double pc = o->fpr < 1.0 / (double)cells ? o->fpr : 1.0 / (double)cells;
	double base = pc * (1 - 1.0 / (double)cells) + 1.0 / (double)cells;
	uint32_t kr = w->raw ? w->raw->k : o->hashes ? o->hashes : filter_k(pc, NULL);
	uint32_t reps = w->raw ? w->raw->reps : o->reps;
	if (reps == 0) {
		double rd = ceil(log(o->fpr) / log(base));
		reps = !(rd >= 2) ? 2 : rd > BFI_MAX_REPS ? BFI_MAX_REPS : (uint32_t)rd;
	}
	if (cells > BFI_MAX_CELLS || cells % shards || reps > BFI_MAX_REPS)
		return writer_fail(w, BFI_E_INVALID,
		                   "rambo: %llu cells, %llu shards, %u repetitions: cells must be at most "
		                   "2^24 and a multiple of the shards, repetitions at most 64",
		                   (unsigned long long)cells, (unsigned long long)shards, reps);
	/* prebuilt filters hold probes 0 .. k - 1 only: every repetition tests those */
	uint32_t shared = w->n_filt || (w->raw && w->raw->shared_probes) ? BFI_RAMBO_SHARED_PROBES : 0;
	struct bfi_rambo_desc d = {p->n,  kr,    BFI_HASH_XXH3_MIX, reps, BFI_PARTITION_XXH3,
	                           cells, (uint32_t)shards, BFI_RAMBO_DESC_SIZE, shared};
	p->rambo = d;
	p->cell_of = malloc((size_t)reps * p->n * sizeof *p->cell_of);
	p->cell_ones = calloc((size_t)cells, sizeof *p->cell_ones);
	size_t regs = SET_HLL_REGS;
	int sized = o->bits || w->raw; /* widths given: no need to estimate unions */
	uint8_t *reg = sized ? NULL : calloc((size_t)reps * cells, regs);
	if (!p->cell_of || !p->cell_ones || (!sized && !reg)) {
		free(reg);
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < reps; r++)
		for (uint32_t j = 0; j < p->n; j++) {
			size_t len;
			const char *name = names_get(&w->names, p->old_of_new[j], &len);
			p->cell_of[(size_t)r * p->n + j] = bfi_rambo_cell(name, len, r, cells, (uint32_t)shards);
		}
	int rc = 0;
	for (uint32_t in = 0; reg && in < p->n; in++) {
		uint32_t j = p->new_of_old[in];
		for (uint32_t r = 0; r < reps; r++) {
			uint64_t c = p->cell_of[(size_t)r * p->n + j];
			hll_merge(reg + ((size_t)r * cells + c) * regs, w->sums.hll + (size_t)in * regs, regs);
		}
	}
	for (uint32_t r = 0; r < reps && rc == 0; r++) {
		double widest = 0;
		for (uint64_t c = 0; reg && c < cells; c++) {
			double u = hll_count_bits(reg + ((size_t)r * cells + c) * regs, SET_HLL_BITS);
			widest = u > widest ? u : widest;
		}
		p->reps[r].m = w->raw ? w->raw->m[r]
		                      : width_for(&(struct bfi_build_options){.fpr = pc, .bits = o->bits},
		                                  ceil_u64(widest * 1.15), kr);
		if (p->reps[r].m == 0)
			rc = writer_fail(w, BFI_E_LIMIT,
			                 "rambo: a cell of about %.0f keys needs a filter wider than 2^40 "
			                 "bits; use more --cells",
			                 widest);
	}
	free(reg);
	if (rc)
		return rc;
	p->rambo_size = bfi_rambo_layout(p->reps, reps, p->n, cells);
	return p->rambo_size ? 0 : BFI_E_LIMIT;
}

/*
 * The tree (spec/format.md, "Tree section"): level 0 holds the sets in
 * ordinal order, and node j of level l + 1 ORs nodes j d .. j d + d - 1 of
 * level l. Each level's filters are as wide as its largest node needs: the
 * sets' own distinct counts at level 0, HyperLogLog estimates of the
 * unions above (plus 15%). Levels stop below
 * the first that does not pay for itself. Without level l + 1 a query
 * scans level l's whole rows, k * nodes_l / 8 bytes; with it, k * nodes_l /
 * (8 d) bytes of level l + 1 plus k random word loads (a cache line, worth
 * about 640 bytes of streaming) for each parent that passes, nodes_l / d
 * times its rate F = (1 - e^(-k n / m))^k. It pays when F <= (d - 1) / 5120.
 */
#define TREE_LINE_COST 640.0 /* bytes of streaming one random cache line costs */
#define TREE_PADDING_FLOOR 1048576.0 /* row padding below this never drops a level */

/*
 * Prebuilt filters have no keys to estimate unions from: OR the leaves'
 * bits under each node of level l and read the union's size off its fill,
 * n = -(m / k) ln(1 - fill), plus the same 15% the HyperLogLog path adds.
 */
static uint64_t tree_up(const struct plan *p, uint32_t l, uint64_t i);

static int filter_union_widest(bfi_writer *w, const struct plan *p, uint32_t l, uint64_t nodes,
                               double *widest)
{
	struct bfi_filter_stats fs;
	bfi_filter_stats(w->filt[0], &fs);
	uint64_t bytes = (fs.m + 7) / 8;
	if (l == 0) {
		for (uint32_t j = 0; j < p->n; j++)
			*widest = (double)p->distinct[j] > *widest ? (double)p->distinct[j] : *widest;
		return 0;
	}
	uint8_t *u = calloc((size_t)nodes, (size_t)bytes);
	if (u == NULL)
		return -ENOMEM;
	for (uint32_t j = 0; j < p->n; j++) {
		uint64_t node = j;
		for (uint32_t a = 0; a < l; a++)
			node = tree_up(p, a, node);
		const uint8_t *b = bfi_filter_bits(w->filt[p->old_of_new[j]]);
		for (uint64_t x = 0; x < bytes; x++)
			u[node * bytes + x] |= b[x];
	}
	for (uint64_t i = 0; i < nodes; i++) {
		uint64_t ones = 0;
		for (uint64_t x = 0; x < bytes; x++)
			ones += (uint64_t)__builtin_popcount(u[i * bytes + x]);
		double fill = (double)ones / (double)fs.m;
		double n = fill < 1 ? -(double)fs.m / fs.k * log1p(-fill) : 1e18;
		*widest = 1.15 * n > *widest ? 1.15 * n : *widest;
	}
	free(u);
	return 0;
}

/* The parent, at level l + 1, of node i of level l. */
static uint64_t tree_up(const struct plan *p, uint32_t l, uint64_t i)
{
	return p->shape.levels ? p->shape.up[l][i] : i / p->tree.fanout;
}

/* The tree's inner nodes' unions into reg (node i of level l at first[l] + i). */
static void tree_sketch(bfi_writer *w, const struct plan *p, uint32_t levels, const size_t *first,
                        uint8_t *reg)
{
	for (uint32_t o = 0; o < p->n; o++) {
		uint64_t node = p->new_of_old[o];
		for (uint32_t l = 1; l < levels; l++) {
			node = tree_up(p, l - 1, node);
			hll_merge(reg + (first[l] + node) * SET_HLL_REGS,
			          w->sums.hll + (size_t)o * SET_HLL_REGS, SET_HLL_REGS);
		}
	}
}

static int plan_tree(bfi_writer *w, struct plan *p)
{
	uint32_t d = w->opt.fanout ? w->opt.fanout : w->opt.bloofi_incremental ? 2 : 64;
	uint64_t nodes[BFI_MAX_LEVELS];
	uint32_t levels = p->shape.levels;
	if (levels)
		memcpy(nodes, p->shape.nodes, sizeof nodes);
	else
		levels = bfi_tree_shape(p->n, d, nodes);
	if (levels == 0)
		return BFI_E_LIMIT;
	p->tree_ones = calloc(bfi_rambo_row_bytes(p->n) * 8, sizeof *p->tree_ones);
	/* inner nodes' unions: HyperLogLog, since sets that share keys overlap */
	size_t regs = SET_HLL_REGS, inner = 0, first[BFI_MAX_LEVELS];
	for (uint32_t l = 1; l < levels; l++) {
		first[l] = inner;
		inner += nodes[l];
	}
	uint8_t *reg = inner ? calloc(inner, regs) : NULL;
	if (p->tree_ones == NULL || (inner && reg == NULL)) {
		free(reg);
		return -ENOMEM;
	}
	int rc = 0;
	p->tree.fanout = d; /* for tree_up */
	if (reg)
		tree_sketch(w, p, levels, first, reg);
	uint32_t kept = 0;
	for (uint32_t l = 0; l < levels && rc == 0; l++) {
		double widest = 0;
		for (uint64_t i = 0; !w->n_filt && i < nodes[l]; i++) {
			double u = l == 0 ? (double)p->distinct[p->old_of_new[i]]
			                  : 1.15 * hll_count_bits(reg + (first[l] + i) * regs, SET_HLL_BITS);
			widest = u > widest ? u : widest;
		}
		if (w->n_filt && (rc = filter_union_widest(w, p, l, nodes[l], &widest)))
			break;
		uint64_t n = ceil_u64(widest), m = width_for(&w->opt, n, p->k);
		if (l > 0 && !w->opt.bits && w->opt.expected_keys && n > w->opt.expected_keys) {
			/*
			 * --expected-keys sizes every set's filter for that many keys
			 * (the Bloofi paper's n_expected); an inner node holding more is
			 * sized for its union instead, at the same rate, so it still
			 * prunes. The paper's fixed m is --bits.
			 */
			m = width_for(&(struct bfi_build_options){.fpr = w->opt.fpr}, n, p->k);
		}
		if (m == 0 && l > 0)
			break; /* a union too large for any filter: no level here or above */
		if (m == 0) {
			rc = BFI_E_LIMIT;
			break;
		}
		double fpr = pow(1 - exp(-(double)p->k * (double)n / (double)m), p->k);
		if (l > 0 && !w->opt.all_levels && fpr > (double)(d - 1) / (8 * TREE_LINE_COST))
			break; /* too full to pay: this level and all above are not stored */
		/*
		 * Nor a level whose padding alone would add more than an eighth of
		 * the leaves' bytes: a few nodes over many keys still take a whole
		 * 64-bit word per row (16 times the space their bits need at 4
		 * nodes), and the union pre-filter does most of their work for less.
		 */
		double padding = (double)m * ((double)bfi_rambo_row_bytes(nodes[l]) - (double)nodes[l] / 8);
		if (l > 0 && !w->opt.all_levels && padding > TREE_PADDING_FLOOR &&
		    padding > (double)p->levels[0].m * (double)bfi_rambo_row_bytes(nodes[0]) / 8)
			break;
		p->levels[l].nodes = nodes[l];
		p->levels[l].m = m;
		kept++;
	}
	free(reg);
	if (rc)
		return rc;
	struct bfi_tree_desc t = {p->n,    p->k, BFI_HASH_XXH3_MIX,
	                          d,       kept, BFI_TREE_DESC_SIZE,
	                          0,       0,    p->shape.levels ? BFI_TREE_EXPLICIT : 0,
	                          0,       0};
	for (uint32_t l = kept; p->shape.levels && l < levels; l++) {
		t.dropped_levels++;
		t.dropped_nodes += nodes[l];
	}
	/*
	 * A pre-filter over all the sets' keys rejects keys absent from the
	 * index before the top level is scanned. With flat's cost model and
	 * P = 1 (it holds every key), a key passes with about 1/2, so keep it
	 * when half a scan of the top level, k rows, outweighs k probe lines.
	 */
	uint64_t top_bytes = bfi_rambo_row_bytes(nodes[kept - 1]);
	if (w->opt.prefilter == BFI_PREFILTER_ALWAYS ||
	    (w->opt.prefilter == BFI_PREFILTER_AUTO && 0.5 * (double)top_bytes > 64)) {
		t.pre_m = width_for(&(struct bfi_build_options){.fpr = w->opt.fpr},
		                    ceil_u64(hll_count_bits(w->sums.all, HLL_BITS) * 1.05),
		                    p->k); /* 0: none */
	}
	p->tree = t;
	p->tree_size = bfi_tree_layout(p->levels, kept, &p->tree);
	return p->tree_size ? 0 : BFI_E_LIMIT;
}

/*
 * Clustered order (spec/format.md, "Ordering sets"): each set's MinHash
 * sketch, the least of MINHASHES independent hashes of its keys, and the
 * sets sorted by their sketches: two sets agree on a MinHash with
 * probability their Jaccard similarity, so similar sets land side by side,
 * under the same tree nodes. O(keys + N log N).
 */
static int cmp_sketch(const void *a, const void *b, void *ctx)
{
	const uint64_t *sk = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	for (int i = 0; i < MINHASHES; i++) {
		uint64_t u = sk[(size_t)x * MINHASHES + i], v = sk[(size_t)y * MINHASHES + i];
		if (u != v)
			return u < v ? -1 : 1;
	}
	return (x > y) - (x < y);
}

static int cluster_order(bfi_writer *w, struct plan *p)
{
	qsort_r(p->old_of_new, p->n, sizeof *p->old_of_new, cmp_sketch, w->sums.minhash);
	return 0;
}

static int make_plan(bfi_writer *w, struct plan *p, uint64_t max_n)
{
	const struct bfi_build_options *o = &w->opt;
	p->k = w->raw ? w->raw->k : choose_k(o, max_n);
	if (!w->raw && !w->n_filt && width_for(o, max_n, p->k) == 0)
		return writer_fail(w, BFI_E_LIMIT,
		                   "a filter for %llu keys at %u hashes needs more than 2^40 bits",
		                   (unsigned long long)(o->expected_keys ? o->expected_keys : max_n),
		                   p->k);
	p->new_of_old = malloc(p->n * sizeof *p->new_of_old);
	p->old_of_new = malloc(p->n * sizeof *p->old_of_new);
	p->ones = calloc(p->n, sizeof *p->ones);
	if (!p->new_of_old || !p->old_of_new || !p->ones)
		return -ENOMEM;
	for (uint32_t j = 0; j < p->n; j++)
		p->old_of_new[j] = j;
	/* A tree alone clusters by default: similar sets under one parent prune together. */
	if (o->cluster || (o->layouts == BFI_BUILD_TREE && !o->keep_order && !o->bloofi_incremental)) {
		int rc = cluster_order(w, p);
		if (rc)
			return rc;
	} else if (!o->keep_order) {
		qsort_r(p->old_of_new, p->n, sizeof *p->old_of_new, cmp_by_size, (void *)p->distinct);
	}
	if ((o->layouts & BFI_BUILD_TREE) && o->bloofi_incremental) {
		/* the tree's leaf order is the snapshot's; leaves as wide as level 0 will be */
		p->shape.order = p->old_of_new;
		int rc = bloofi_incremental(w, p->n, width_for(o, max_n, p->k), p->k,
		                            o->fanout ? o->fanout : 2, &p->shape);
		if (rc)
			return rc;
	}
	for (uint32_t j = 0; j < p->n; j++)
		p->new_of_old[p->old_of_new[j]] = j;
	if (o->layouts & BFI_BUILD_FLAT) {
		int rc = plan_flat(w, p);
		if (rc)
			return rc;
		p->flat_size = bfi_flat_layout(p->blocks, p->n_blocks);
		if (p->flat_size == 0)
			return BFI_E_LIMIT;
	}
	if (o->layouts & BFI_BUILD_RAMBO) {
		int rc = plan_rambo(w, p);
		if (rc)
			return rc;
		if (!(o->layouts & (BFI_BUILD_FLAT | BFI_BUILD_PLAIN)))
			p->k = p->rambo.k; /* the catalog's k: that of the first layout */
	}
	if (o->layouts & BFI_BUILD_TREE) {
		int rc = plan_tree(w, p);
		if (rc)
			return rc;
	}
	if (o->layouts & BFI_BUILD_PLAIN) {
		uint64_t m = width_for(o, max_n, p->k);
		struct bfi_plain_desc d = {p->n, m, p->k, BFI_HASH_XXH3_MIX, bfi_word_bytes(m),
		                           BFI_PLAIN_DESC_SIZE};
		p->plain = d;
		if (__builtin_mul_overflow((uint64_t)p->n, d.filter_bytes, &p->plain_size) ||
		    __builtin_add_overflow(p->plain_size, BFI_PLAIN_DESC_SIZE, &p->plain_size))
			return BFI_E_LIMIT;
	}
	return 0;
}

/*
 * A stripe is a byte range [lo, hi) of one section, made of whole rows
 * (flat) or whole filters (plain), filled in memory by one pass over the
 * records and written in place.
 */
enum { LK_FLAT, LK_PLAIN, LK_RAMBO, LK_TREE };

struct stripe_ctx {
	bfi_writer *w;
	const struct plan *p;
	int fd;
	uint64_t sec_off;
	int kind; /* LK_* */
	uint8_t *buf;
	uint64_t budget;
	uint64_t done, total;
};

static void set_bit(uint8_t *buf, uint64_t lo, uint64_t hi, uint64_t byte, unsigned bit)
{
	if (byte >= lo && byte < hi)
		buf[byte - lo] |= (uint8_t)(1u << bit);
}

/* Prebuilt filters: filter j's bit r is row r of its column, at every level. */
static void fill_filters(struct stripe_ctx *c, uint64_t lo, uint64_t hi)
{
	const struct plan *p = c->p;
	for (uint32_t j = 0; j < p->n; j++) {
		const bfi_filter *f = c->w->filt[p->old_of_new[j]];
		struct bfi_filter_stats fs;
		bfi_filter_stats(f, &fs);
		const uint8_t *bits = bfi_filter_bits(f);
		for (uint64_t byte = 0; byte < (fs.m + 7) / 8; byte++)
			for (unsigned x = bits[byte]; x; x &= x - 1) {
				uint64_t row = byte * 8 + (uint64_t)__builtin_ctz(x);
				if (c->kind == LK_TREE) {
					uint64_t node = j;
					for (uint32_t l = 0; l < p->tree.levels; l++) {
						if (l > 0)
							node = tree_up(p, l - 1, node);
						const struct bfi_level *lv = &p->levels[l];
						set_bit(c->buf, lo, hi, lv->rows_offset + row * lv->row_bytes + node / 8,
						        node % 8);
					}
				} else if (c->kind == LK_FLAT) {
					const struct bfi_block *b = &p->blocks[p->block_of[j]];
					uint64_t bit = b->rows_offset * 8 + row * b->row_bits + (j - b->first_set);
					set_bit(c->buf, lo, hi, bit / 8, bit % 8);
				} else if (c->kind == LK_PLAIN) {
					uint64_t base = p->plain.filters_offset + (uint64_t)j * p->plain.filter_bytes;
					set_bit(c->buf, lo, hi, base + row / 8, row % 8);
				} else if (c->kind == LK_RAMBO) { /* each cell: the OR of its sets' filters */
					for (uint32_t rep = 0; rep < p->rambo.reps; rep++) {
						const struct bfi_rep *rp = &p->reps[rep];
						uint64_t cell = p->cell_of[(size_t)rep * p->n + j];
						set_bit(c->buf, lo, hi, rp->rows_offset + row * rp->row_bytes + cell / 8,
						        cell % 8);
					}
				}
			}
	}
}

/*
 * Add the ones of each column of the m rows of row_bytes at rows_off that
 * lie in [lo, hi), whose bytes are at buf, to ones[column]. A stripe may
 * begin or end inside a row; every bound is a multiple of 8 bytes.
 */
static void count_columns(const uint8_t *buf, uint64_t lo, uint64_t hi, uint64_t rows_off,
                          uint64_t m, uint64_t row_bytes, uint64_t *ones)
{
	uint64_t end = rows_off + m * row_bytes;
	uint64_t a = rows_off > lo ? rows_off : lo, z = end < hi ? end : hi;
	if (a >= z)
		return;
	for (uint64_t ro = rows_off + (a - rows_off) / row_bytes * row_bytes; ro < z; ro += row_bytes) {
		uint64_t from = ro > a ? ro : a, to = ro + row_bytes < z ? ro + row_bytes : z;
		for (uint64_t at = from; at < to; at += 8)
			for (uint64_t x = bfi_get64(buf + (at - lo)); x; x &= x - 1)
				ones[(at - ro) * 8 + (uint64_t)__builtin_ctzll(x)]++;
	}
}

/* count_columns for a block of packed rows: column of each one, by its bit. */
static void count_packed(const uint8_t *buf, uint64_t lo, uint64_t hi, const struct bfi_block *b,
                         uint64_t *ones)
{
	uint64_t end = b->rows_offset + bfi_block_rows_bytes(b->m, b->row_bits);
	uint64_t a = b->rows_offset > lo ? b->rows_offset : lo, z = end < hi ? end : hi;
	for (uint64_t at = a; at < z; at += 8)
		for (uint64_t x = bfi_get64(buf + (at - lo)); x; x &= x - 1) {
			uint64_t bit = (at - b->rows_offset) * 8 + (uint64_t)__builtin_ctzll(x);
			if (bit / b->row_bits < b->m && bit % b->row_bits < b->n_sets)
				ones[bit % b->row_bits]++;
		}
}

/* One key of input set ord: its bits that fall in the stripe. */
struct stripe_key {
	struct stripe_ctx *c;
	uint64_t lo, hi;
};

static int stripe_key(void *ctx, uint32_t ord, bfi_keyhash h)
{
	const struct stripe_key *sk = ctx;
	const struct stripe_ctx *c = sk->c;
	uint64_t lo = sk->lo, hi = sk->hi;
	const struct plan *p = c->p;
	uint32_t j = p->new_of_old[ord];
	if (c->kind == LK_TREE) {
		for (uint32_t i = 0; p->tree.pre_m && i < p->tree.k; i++) {
			uint64_t pos = bfi_hash_pos(h, i, p->tree.pre_m);
			set_bit(c->buf, lo, hi, p->tree.pre_offset + pos / 8, pos % 8);
		}
		/* level l's node of set j is j / d^l or the shape's; every level ORs its subtree */
		uint64_t node = j;
		for (uint32_t l = 0; l < p->tree.levels; l++) {
			if (l > 0)
				node = tree_up(p, l - 1, node);
			const struct bfi_level *lv = &p->levels[l];
			for (uint32_t i = 0; i < p->tree.k; i++) {
				uint64_t row = bfi_hash_pos(h, i, lv->m);
				set_bit(c->buf, lo, hi, lv->rows_offset + row * lv->row_bytes + node / 8, node % 8);
			}
		}
	} else if (c->kind == LK_RAMBO) {
		for (uint32_t rep = 0; rep < p->rambo.reps; rep++) {
			const struct bfi_rep *rp = &p->reps[rep];
			uint64_t cell = p->cell_of[(size_t)rep * p->n + j];
			/* repetition rep takes probes rep k .. rep k + k - 1: independent filters */
			uint32_t kr = p->rambo.k;
			for (uint32_t i = 0; i < kr; i++) {
				uint64_t row = bfi_hash_pos(h, rep * kr + i, rp->m);
				set_bit(c->buf, lo, hi, rp->rows_offset + row * rp->row_bytes + cell / 8,
				        cell % 8);
			}
		}
	} else if (c->kind == LK_FLAT) {
		const struct bfi_block *b = &p->blocks[p->block_of[j]];
		uint64_t at = b->rows_offset * 8 + (j - b->first_set); /* bit of column j in row 0 */
		uint64_t line = b->pre_m && p->line_pre ? bfi_pre_line(bfi_hash_probe(h, 0), b->pre_m) : 0;
		for (uint32_t i = 0; i < p->k; i++) {
			uint64_t z = bfi_hash_probe(h, i), bit = at + bfi_reduce(z, b->m) * b->row_bits;
			set_bit(c->buf, lo, hi, bit / 8, bit % 8);
			if (b->pre_m) {
				uint64_t pos = p->line_pre ? line + bfi_pre_bit(z) : bfi_reduce(z, b->pre_m);
				set_bit(c->buf, lo, hi, b->pre_offset + pos / 8, pos % 8);
			}
		}
	} else {
		uint64_t base = p->plain.filters_offset + (uint64_t)j * p->plain.filter_bytes;
		for (uint32_t i = 0; i < p->k; i++) {
			uint64_t pos = bfi_hash_pos(h, i, p->plain.m);
			set_bit(c->buf, lo, hi, base + pos / 8, pos % 8);
		}
	}
	return 0;
}

static int fill_stripe(struct stripe_ctx *c, uint64_t lo, uint64_t hi)
{
	const struct plan *p = c->p;
	memset(c->buf, 0, (size_t)(hi - lo));
	if (c->w->n_filt)
		fill_filters(c, lo, hi);
	struct stripe_key sk = {c, lo, hi};
	int rc = each_source_key(c->w, stripe_key, &sk);
	if (rc)
		return rc;
	/* Count each set's ones, for the catalog; the first layout's count. */
	if (c->kind == LK_TREE) {
		const struct bfi_level *lv = &p->levels[0]; /* the leaves: the sets' own filters */
		count_columns(c->buf, lo, hi, lv->rows_offset, lv->m, lv->row_bytes, p->tree_ones);
	} else if (c->kind == LK_RAMBO) {
		const struct bfi_rep *rp = &p->reps[0];
		count_columns(c->buf, lo, hi, rp->rows_offset, rp->m, rp->row_bytes, p->cell_ones);
	} else if (c->kind == LK_FLAT) {
		for (uint32_t bi = 0; bi < p->n_blocks; bi++) {
			const struct bfi_block *b = &p->blocks[bi];
			if (bfi_rows_lined(b->row_bits))
				count_columns(c->buf, lo, hi, b->rows_offset, b->m, b->row_bits / 8,
				              p->ones + b->first_set);
			else
				count_packed(c->buf, lo, hi, b, p->ones + b->first_set);
		}
	} else if (!(c->w->opt.layouts & BFI_BUILD_FLAT)) {
		/* plain, and the first layout: a filter's ones, from its part in this stripe */
		uint64_t fb = p->plain.filter_bytes;
		for (uint64_t at = lo; at < hi;) {
			uint64_t j = (at - p->plain.filters_offset) / fb;
			uint64_t end = p->plain.filters_offset + (j + 1) * fb, ones = 0;
			end = end < hi ? end : hi;
			for (; at < end; at += 8)
				ones += (uint64_t)__builtin_popcountll(bfi_get64(c->buf + (at - lo)));
			p->ones[j] += ones;
		}
	}
	c->done += hi - lo;
	progress(c->w,
	         c->kind == LK_FLAT    ? "row stripes"
	         : c->kind == LK_PLAIN ? "plain filters"
	         : c->kind == LK_RAMBO ? "rambo rows"
	                               : "tree levels",
	         c->done, c->total);
	return pwrite_all(c->fd, c->buf, (size_t)(hi - lo), c->sec_off + lo);
}

/*
 * Cut [lo, hi) of a section into stripes at unit boundaries (rows of
 * unit bytes from lo) that fit the budget, and fill each.
 */
static int fill_units(struct stripe_ctx *c, uint64_t *start, uint64_t *end, uint64_t lo,
                      uint64_t hi, uint64_t unit)
{
	/* a unit larger than the budget (a long row, a wide filter) goes in several stripes */
	uint64_t most = c->budget / 64 * 64;
	if (unit > most)
		unit = most;
	for (uint64_t at = lo; at < hi; at += unit) {
		uint64_t to = hi - at < unit ? hi : at + unit;
		/* the stripe would run to `to`, gaps between regions included */
		if (*end > *start && to - *start > c->budget) {
			int rc = fill_stripe(c, *start, *end);
			if (rc)
				return rc;
			*start = at;
		}
		if (*end == *start)
			*start = at;
		*end = to;
	}
	return 0;
}

static int write_layout(bfi_writer *w, const struct plan *p, int fd, uint64_t sec_off, int kind)
{
	/*
	 * The rows get what the process does not hold yet: the spool's half,
	 * where sets read from files left it untouched, included. fill_units
	 * cuts units larger than this.
	 */
	uint64_t budget = writer_budget(w);
	uint64_t size = kind == LK_FLAT    ? p->flat_size
	                : kind == LK_PLAIN ? p->plain_size
	                : kind == LK_RAMBO ? p->rambo_size
	                                   : p->tree_size;
	uint64_t data = kind == LK_FLAT    ? p->blocks[0].rows_offset
	                : kind == LK_PLAIN ? p->plain.filters_offset
	                : kind == LK_RAMBO ? p->reps[0].rows_offset
	                                   : p->levels[0].rows_offset;
	struct stripe_ctx c = {w, p, fd, sec_off, kind, NULL, budget, 0, size - data};
	c.buf = malloc((size_t)(budget < size - data ? budget : size - data));
	if (c.buf == NULL)
		return writer_fail(w, -ENOMEM, "cannot allocate a row stripe");
	uint64_t start = data, end = data;
	int rc = 0;
	if (kind == LK_FLAT)
		for (uint32_t b = 0; b < p->n_blocks && rc == 0; b++) {
			const struct bfi_block *blk = &p->blocks[b];
			/* from the sets' own filters when the block fits; prebuilt filters take stripes */
			if (!w->n_filt) {
				if (end > start)
					rc = fill_stripe(&c, start, end);
				start = end = blk->rows_offset;
				if (rc == 0)
					rc = fill_block(w, p, b, fd, sec_off, budget);
				int sliced = rc == 1;
				if (sliced)
					rc = fill_block_sliced(w, p, b, fd, sec_off, budget);
				if (rc == 0) {
					c.done += bfi_block_rows_bytes(blk->m, blk->row_bits) +
					          (blk->pre_m ? bfi_bits_bytes(blk->pre_m) : 0);
					progress(w, sliced ? "rows from slices" : "rows", c.done, c.total);
					continue;
				}
				if (rc < 0)
					break;
				rc = 0; /* 1: too large for the budget, so in stripes */
			}
			/* packed rows run on: any line may end a stripe */
			uint64_t rows = bfi_block_rows_bytes(blk->m, blk->row_bits);
			rc = fill_units(&c, &start, &end, blk->rows_offset, blk->rows_offset + rows,
			                bfi_rows_lined(blk->row_bits) ? blk->row_bits / 8 : 64);
			if (rc == 0 && blk->pre_m) /* the pre-filter is one unit */
				rc = fill_units(&c, &start, &end, blk->pre_offset,
				                blk->pre_offset + bfi_bits_bytes(blk->pre_m),
				                bfi_bits_bytes(blk->pre_m));
		}
	else if (kind == LK_PLAIN)
		rc = fill_units(&c, &start, &end, data, size, p->plain.filter_bytes);
	else if (kind == LK_TREE) {
		for (uint32_t l = 0; l < p->tree.levels && rc == 0; l++) {
			const struct bfi_level *lv = &p->levels[l];
			rc = fill_units(&c, &start, &end, lv->rows_offset,
			                lv->rows_offset + lv->m * lv->row_bytes, lv->row_bytes);
		}
		if (rc == 0 && p->tree.pre_m) /* the pre-filter is one unit */
			rc = fill_units(&c, &start, &end, p->tree.pre_offset,
			                p->tree.pre_offset + bfi_bits_bytes(p->tree.pre_m),
			                bfi_bits_bytes(p->tree.pre_m));
	}
	else if (w->raw) /* given rows: copy them, counting repetition 0's cells */
		for (uint32_t r = 0; r < p->rambo.reps && rc == 0; r++) {
			const struct bfi_rep *rp = &p->reps[r];
			rc = pwrite_all(fd, w->raw->rows[r], (size_t)(rp->m * rp->row_bytes),
			                sec_off + rp->rows_offset);
			for (uint64_t i = 0; r == 0 && i < rp->m * rp->row_bytes / 8; i++)
				for (uint64_t x = bfi_get64(w->raw->rows[0] + i * 8); x; x &= x - 1)
					p->cell_ones[(i % (rp->row_bytes / 8)) * 64 + (uint64_t)__builtin_ctzll(x)]++;
		}
	else /* rambo: the rows of each repetition; its tables are written after */
		for (uint32_t r = 0; r < p->rambo.reps && rc == 0; r++) {
			const struct bfi_rep *rp = &p->reps[r];
			rc = fill_units(&c, &start, &end, rp->rows_offset,
			                rp->rows_offset + rp->m * rp->row_bytes, rp->row_bytes);
		}
	if (rc == 0 && end > start)
		rc = fill_stripe(&c, start, end);
	free(c.buf);
	return rc;
}

/* The cell tables of each repetition: starts, members by cell, cell of each set. */
static int write_rambo_tables(int fd, const struct plan *p, uint64_t sec_off)
{
	uint64_t cells = p->rambo.cells;
	uint8_t *starts = malloc((size_t)(cells + 1) * 4), *members = malloc((size_t)p->n * 4),
	        *cell_of = malloc((size_t)p->n * 4);
	uint32_t *fill = calloc((size_t)cells + 1, sizeof *fill);
	int rc = starts && members && cell_of && fill ? 0 : -ENOMEM;
	for (uint32_t r = 0; r < p->rambo.reps && rc == 0; r++) {
		const uint32_t *co = p->cell_of + (size_t)r * p->n;
		memset(fill, 0, ((size_t)cells + 1) * sizeof *fill);
		for (uint32_t j = 0; j < p->n; j++)
			fill[co[j] + 1]++;
		for (uint64_t c = 0; c < cells; c++)
			fill[c + 1] += fill[c];
		for (uint64_t c = 0; c <= cells; c++)
			bfi_put32(starts + c * 4, fill[c]);
		for (uint32_t j = 0; j < p->n; j++) { /* ascending j: members sorted within a cell */
			bfi_put32(members + (size_t)fill[co[j]]++ * 4, j);
			bfi_put32(cell_of + (size_t)j * 4, co[j]);
		}
		const struct bfi_rep *rp = &p->reps[r];
		rc = pwrite_all(fd, starts, (size_t)(cells + 1) * 4, sec_off + rp->starts_offset);
		if (rc == 0)
			rc = pwrite_all(fd, members, (size_t)p->n * 4, sec_off + rp->members_offset);
		if (rc == 0)
			rc = pwrite_all(fd, cell_of, (size_t)p->n * 4, sec_off + rp->cell_of_offset);
	}
	free(starts);
	free(members);
	free(cell_of);
	free(fill);
	return rc;
}

/* An explicit tree's child groups: where each node's children start. */
static int write_groups(int fd, const struct plan *p, uint64_t sec_off)
{
	int rc = 0;
	for (uint32_t l = 1; (p->tree.flags & BFI_TREE_EXPLICIT) && l < p->tree.levels && rc == 0;
	     l++) {
		uint64_t below = p->levels[l - 1].nodes, n = p->levels[l].nodes;
		uint8_t *g = calloc(n + 1, 4);
		if (g == NULL)
			return -ENOMEM;
		for (uint64_t i = 0; i < below; i++)
			if (i == 0 || p->shape.up[l - 1][i] != p->shape.up[l - 1][i - 1])
				bfi_put32(g + (uint64_t)p->shape.up[l - 1][i] * 4, (uint32_t)i);
		bfi_put32(g + n * 4, (uint32_t)below);
		rc = pwrite_all(fd, g, (size_t)(n + 1) * 4, sec_off + p->levels[l].groups_offset);
		free(g);
	}
	return rc;
}

static int write_descriptors(int fd, const struct plan *p, const struct bfi_section *flat,
                             const struct bfi_section *plain, const struct bfi_section *rambo,
                             const struct bfi_section *tree)
{
	int rc = 0;
	if (tree) {
		uint8_t d[BFI_TREE_DESC_SIZE + BFI_MAX_LEVELS * BFI_LEVEL_ENTRY_SIZE];
		bfi_tree_desc_encode(d, &p->tree);
		for (uint32_t l = 0; l < p->tree.levels; l++)
			bfi_level_encode(d + BFI_TREE_DESC_SIZE + (uint64_t)l * BFI_LEVEL_ENTRY_SIZE,
			                 &p->levels[l]);
		rc = pwrite_all(fd, d, BFI_TREE_DESC_SIZE + (size_t)p->tree.levels * BFI_LEVEL_ENTRY_SIZE,
		                tree->offset);
	}
	if (rc)
		return rc;
	if (rambo) {
		uint64_t len = BFI_RAMBO_DESC_SIZE + (uint64_t)p->rambo.reps * BFI_REP_ENTRY_SIZE;
		uint8_t d[BFI_RAMBO_DESC_SIZE + BFI_MAX_REPS * BFI_REP_ENTRY_SIZE];
		bfi_rambo_desc_encode(d, &p->rambo);
		for (uint32_t r = 0; r < p->rambo.reps; r++)
			bfi_rep_encode(d + BFI_RAMBO_DESC_SIZE + (uint64_t)r * BFI_REP_ENTRY_SIZE, &p->reps[r]);
		rc = pwrite_all(fd, d, (size_t)len, rambo->offset);
	}
	if (flat) {
		uint64_t len = BFI_FLAT_DESC_SIZE + (uint64_t)p->n_blocks * BFI_BLOCK_ENTRY_SIZE;
		uint8_t *d = calloc(1, (size_t)len);
		if (d == NULL)
			return -ENOMEM;
		struct bfi_flat_desc fd_ = {p->n, p->k, BFI_HASH_XXH3_MIX, p->n_blocks, 0,
		                            BFI_FLAT_DESC_SIZE};
		fd_.flags = line_prefilters(p) ? BFI_FLATF_LINE_PRE : 0;
		for (uint32_t j = 0; j < p->n && !(fd_.flags & BFI_FLATF_SIZE_ORDER); j++)
			fd_.flags |= p->old_of_new[j] != j ? BFI_FLATF_SIZE_ORDER : 0;
		bfi_flat_desc_encode(d, &fd_);
		for (uint32_t b = 0; b < p->n_blocks; b++)
			bfi_block_encode(d + BFI_FLAT_DESC_SIZE + (uint64_t)b * BFI_BLOCK_ENTRY_SIZE,
			                 &p->blocks[b]);
		rc = pwrite_all(fd, d, (size_t)len, flat->offset);
		free(d);
	}
	if (rc == 0 && plain) {
		uint8_t d[BFI_PLAIN_DESC_SIZE];
		bfi_plain_desc_encode(d, &p->plain);
		rc = pwrite_all(fd, d, sizeof d, plain->offset);
	}
	return rc;
}

/* Read the index back: checksums of chunks [4096, sums_at) and of each section. */
static int checksum_back(bfi_writer *w, int fd, uint64_t sums_at, struct bfi_section *sec,
                         uint32_t n_sec, uint8_t *table)
{
	/* whole chunks, up to 64, in a quarter of the budget */
	uint64_t chunks = writer_budget(w) / 4 / BFI_CHUNK_SIZE;
	size_t blen = (size_t)(chunks < 1 ? 1 : chunks > 64 ? 64 : chunks) * BFI_CHUNK_SIZE;
	uint8_t *buf = malloc(blen);
	XXH3_state_t *st[BFI_MAX_SECTIONS] = {0};
	int rc = 0;
	for (uint32_t i = 0; i < n_sec && rc == 0; i++)
		if ((st[i] = XXH3_createState()) == NULL || XXH3_64bits_reset(st[i]) != XXH_OK)
			rc = -ENOMEM;
	if (buf == NULL)
		rc = -ENOMEM;
	uint64_t c = 0;
	for (uint64_t off = BFI_SECTION_ALIGN; off < sums_at && rc == 0; off += blen) {
		size_t len = sums_at - off < blen ? (size_t)(sums_at - off) : blen;
		rc = pread_all(fd, buf, len, off);
		for (size_t o = 0; rc == 0 && o < len; o += BFI_CHUNK_SIZE, c++) {
			size_t cl = len - o < BFI_CHUNK_SIZE ? len - o : BFI_CHUNK_SIZE;
			bfi_put64(table + c * 8, bfi_checksum64(buf + o, cl));
		}
		/* Each section is one contiguous span inside the covered bytes. */
		for (uint32_t i = 0; i < n_sec && rc == 0; i++) {
			uint64_t a = off > sec[i].offset ? off : sec[i].offset;
			uint64_t e = sec[i].offset + sec[i].size, b = off + len < e ? off + len : e;
			if (a < b)
				XXH3_64bits_update(st[i], buf + (a - off), (size_t)(b - a));
		}
		progress(w, "checksums", off + len - BFI_SECTION_ALIGN, sums_at - BFI_SECTION_ALIGN);
	}
	for (uint32_t i = 0; i < n_sec; i++) {
		if (rc == 0)
			sec[i].checksum = XXH3_64bits_digest(st[i]);
		XXH3_freeState(st[i]);
	}
	free(buf);
	return rc;
}

static int digest_file(const char *path, uint8_t digest[16], uint64_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	XXH3_state_t *st = XXH3_createState();
	uint8_t *buf = malloc(1 << 20);
	int rc = 0;
	if (st == NULL || buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	XXH3_128bits_reset(st);
	*size = 0;
	for (;;) {
		ssize_t n = read(fd, buf, 1 << 20);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		XXH3_128bits_update(st, buf, (size_t)n);
		*size += (uint64_t)n;
	}
	XXH128_hash_t h = XXH3_128bits_digest(st);
	bfi_put64(digest, h.low64);
	bfi_put64(digest + 8, h.high64);
out:
	free(buf);
	XXH3_freeState(st);
	close(fd);
	return rc;
}

/* Content-derived id: the same input gives the same id, any change a new one. */
static void snapshot_id(const struct names *names, const uint32_t *old_of_new, const uint8_t *sums,
                        size_t sums_len, uint32_t k, uint8_t id[16])
{
	XXH3_state_t *st = XXH3_createState();
	uint8_t params[4];
	bfi_put32(params, k);
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, "bfi snapshot id", 15);
	XXH3_128bits_update(st, params, sizeof params);
	XXH3_128bits_update(st, sums, sums_len);
	for (uint32_t o = 0; o < names->n; o++) {
		size_t len;
		const char *p = names_get(names, old_of_new[o], &len);
		uint8_t l[2];
		bfi_put16(l, (uint16_t)len);
		XXH3_128bits_update(st, l, 2);
		XXH3_128bits_update(st, p, len);
	}
	XXH128_hash_t h = XXH3_128bits_digest(st);
	bfi_put64(id, h.low64);
	bfi_put64(id + 8, h.high64);
	XXH3_freeState(st);
}

static void plan_free(struct plan *p)
{
	free(p->tree_ones);
	bloofi_shape_free(&p->shape);
	free(p->cell_of);
	free(p->cell_ones);
	free(p->new_of_old);
	free(p->old_of_new);
	free(p->block_of);
	free(p->blocks);
	free(p->ones);
}

int bfi_writer_finish(bfi_writer *w, const char *path, struct bfi_build_summary *sum)
{
	if (w == NULL || path == NULL || w->finished)
		return BFI_E_INVALID;
	w->finished = 1;
	uint64_t n = w->names.n;
	if (n == 0)
		return writer_fail(w, BFI_E_NO_SETS, "the input holds no sets");
	int rc = 0, fd = -1;
	struct plan p;
	memset(&p, 0, sizeof p);
	uint64_t *distinct = sums_grow(&w->sums, n) == 0 ? w->sums.distinct : NULL;
	uint8_t *sums = NULL;
	struct staging stage = {"", -1, -1};
	char ipath[4400], cpath[4400], warn[600];
	if (distinct == NULL) {
		rc = writer_fail(w, -ENOMEM, "out of memory for per-set counts");
		goto out;
	}
	if (strlen(path) > 4000) {
		rc = writer_fail(w, BFI_E_INVALID, "output path too long");
		goto out;
	}
	rc = bfi_output_check(path, w->errmsg, sizeof w->errmsg);
	if (rc)
		goto out;

	progress(w, "sorting", 0, 0);
	spool_seal(&w->spool);
	uint64_t pairs = 0, max_n = 0;
	if (w->raw) {
		memcpy(distinct, w->raw->distinct, n * sizeof *distinct);
	} else if (w->n_filt) {
		/* prebuilt filters: their width, k and key counts; no keys to read */
		struct bfi_filter_stats fs;
		for (uint64_t o = 0; o < n; o++) {
			bfi_filter_stats(w->filt[o], &fs);
			distinct[o] = fs.keys;
			pairs += fs.keys;
		}
		bfi_filter_stats(w->filt[0], &fs);
		if ((w->opt.bits && w->opt.bits != fs.m) || (w->opt.hashes && w->opt.hashes != fs.k)) {
			rc = writer_fail(w, BFI_E_FILTER_MISMATCH, "the filters have m = %llu and k = %u, "
			                 "not the --bits or --hashes given", (unsigned long long)fs.m, fs.k);
			goto out;
		}
		if (w->opt.bloofi_incremental) {
			rc = writer_fail(w, BFI_E_INVALID, "--bloofi-build incremental reads the keys; "
			                                   "filters are indexed offline");
			goto out;
		}
		w->opt.bits = fs.m;
		w->opt.hashes = fs.k;
		w->opt.prefilter = BFI_PREFILTER_NEVER; /* a union at another width needs the keys */
	} else {
		rc = summarize_spool(w);
		for (uint64_t o = 0; o < n; o++)
			pairs += distinct[o];
	}
	if (rc) {
		rc = writer_fail(w, rc, "reading spilled keys: %s", bfi_strerror(rc));
		goto out;
	}
	for (uint64_t o = 0; o < n; o++)
		if (distinct[o] > max_n)
			max_n = distinct[o];
	p.n = (uint32_t)n;
	p.distinct = distinct;
	rc = make_plan(w, &p, max_n);
	if (rc) {
		if (!w->errmsg[0])
			writer_fail(w, rc, "laying out %llu sets: %s", (unsigned long long)n,
			            bfi_strerror(rc));
		goto out;
	}

	/* Sections in file order: flat, plain, chunk checksums. */
	struct bfi_section sec[5];
	memset(sec, 0, sizeof sec);
	uint32_t n_sec = 0;
	uint64_t at = BFI_SECTION_ALIGN;
	struct bfi_section *flat = NULL, *plain = NULL, *rambo = NULL, *tree = NULL;
	if (w->opt.layouts & BFI_BUILD_FLAT) {
		flat = &sec[n_sec++];
		flat->kind = BFI_SEC_FLAT;
		flat->size = p.flat_size;
	}
	if (w->opt.layouts & BFI_BUILD_PLAIN) {
		plain = &sec[n_sec++];
		plain->kind = BFI_SEC_PLAIN;
		plain->size = p.plain_size;
	}
	if (w->opt.layouts & BFI_BUILD_RAMBO) {
		rambo = &sec[n_sec++];
		rambo->kind = BFI_SEC_RAMBO;
		rambo->size = p.rambo_size;
	}
	if (w->opt.layouts & BFI_BUILD_TREE) {
		tree = &sec[n_sec++];
		tree->kind = BFI_SEC_TREE;
		tree->size = p.tree_size;
	}
	for (uint32_t i = 0; i < n_sec; i++) {
		/* A reader that does not know rambo may still answer from flat or plain. */
		sec[i].flags = (&sec[i] == rambo || &sec[i] == tree) && (flat || plain) ? 0 : BFI_SECF_REQUIRED;
		sec[i].stored_size = sec[i].size;
		sec[i].offset = at;
		at = bfi_align_up(at + sec[i].size, BFI_SECTION_ALIGN);
	}
	uint64_t sums_at = at;
	uint64_t chunks = (sums_at - BFI_SECTION_ALIGN + BFI_CHUNK_SIZE - 1) / BFI_CHUNK_SIZE;
	struct bfi_section *sumsec = &sec[n_sec++];
	sumsec->kind = BFI_SEC_CHUNKSUMS;
	sumsec->flags = BFI_SECF_REQUIRED;
	sumsec->offset = sums_at;
	sumsec->size = sumsec->stored_size = BFI_CHUNKSUMS_DESC_SIZE + chunks * 8;
	uint64_t file_size = sums_at + sumsec->size + BFI_TRAILER_SIZE;

	staging_sweep(path); /* what killed builds left beside path */
	rc = staging_begin(&stage, path, w->errmsg, sizeof w->errmsg);
	if (rc)
		goto out;
	snprintf(ipath, sizeof ipath, "%s/%s", stage.dir, BFI_INDEX_NAME);
	snprintf(cpath, sizeof cpath, "%s/%s", stage.dir, BFI_CATALOG_NAME);
	fd = openat(stage.dfd, BFI_INDEX_NAME, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	            0644);
	if (fd < 0 || ftruncate(fd, (off_t)file_size) != 0) {
		rc = writer_fail(w, -errno, "%s: %s", ipath, strerror(errno));
		goto out;
	}
	rc = write_descriptors(fd, &p, flat, plain, rambo, tree);
	if (rc == 0 && flat)
		rc = write_layout(w, &p, fd, flat->offset, LK_FLAT);
	if (rc == 0 && plain)
		rc = write_layout(w, &p, fd, plain->offset, LK_PLAIN);
	if (rc == 0 && rambo)
		rc = write_layout(w, &p, fd, rambo->offset, LK_RAMBO);
	if (rc == 0 && rambo)
		rc = write_rambo_tables(fd, &p, rambo->offset);
	if (rc == 0 && tree)
		rc = write_layout(w, &p, fd, tree->offset, LK_TREE);
	if (rc == 0 && tree) /* after the rows: their stripes span the gaps */
		rc = write_groups(fd, &p, tree->offset);
	if (rc == 0 && tree && !flat && !plain) /* the catalog's ones: the set's leaf */
		for (uint32_t j = 0; j < p.n; j++)
			p.ones[j] = p.tree_ones[j];
	else if (rc == 0 && rambo && !flat && !plain) /* the set's cell in repetition 0 */
		for (uint32_t j = 0; j < p.n; j++)
			p.ones[j] = p.cell_ones[p.cell_of[j]];
	if (rc) {
		if (!w->errmsg[0])
			writer_fail(w, rc, "%s: %s", ipath, bfi_strerror(rc));
		goto out;
	}

	sums = calloc(1, (size_t)sumsec->size);
	if (sums == NULL) {
		rc = writer_fail(w, -ENOMEM, "out of memory for chunk checksums");
		goto out;
	}
	bfi_put32(sums, BFI_CHUNK_LOG2);
	bfi_put64(sums + 8, sums_at);
	rc = checksum_back(w, fd, sums_at, sec, n_sec - 1, sums + BFI_CHUNKSUMS_DESC_SIZE);
	if (rc) {
		rc = writer_fail(w, rc, "%s: %s", ipath, bfi_strerror(rc));
		goto out;
	}
	sumsec->checksum = bfi_checksum64(sums, (size_t)sumsec->size);
	rc = pwrite_all(fd, sums, (size_t)sumsec->size, sums_at);
	if (rc == 0)
		rc = pwrite_all(fd, BFI_MAGIC, BFI_MAGIC_LEN, file_size - BFI_TRAILER_SIZE);
	if (rc) {
		rc = writer_fail(w, rc, "%s: %s", ipath, bfi_strerror(rc));
		goto out;
	}

	struct bfi_header h;
	memset(&h, 0, sizeof h);
	uint64_t widest = plain ? p.plain.m : 0;
	for (uint32_t r = 0; rambo && r < p.rambo.reps; r++)
		widest = p.reps[r].m > widest ? p.reps[r].m : widest;
	for (uint32_t l = 0; tree && l < p.tree.levels; l++)
		widest = p.levels[l].m > widest ? p.levels[l].m : widest;
	for (uint32_t b = 0; b < p.n_blocks; b++)
		widest = p.blocks[b].m > widest ? p.blocks[b].m : widest;
	snapshot_id(&w->names, p.old_of_new, sums, (size_t)sumsec->size, p.k, h.snapshot_id);
	progress(w, "catalog", 0, 0);
	if (w->path_levels) { /* known only now: how deep the documents went */
		char lv[16];
		rc = writer_meta(w, "path_levels", lv, (size_t)snprintf(lv, sizeof lv, "%u", w->path_levels),
		                 "the path levels");
		if (rc)
			goto out;
	}
	rc = catalog_write(cpath, &w->names, w->meta, w->n_meta, p.old_of_new, distinct, p.ones, p.k,
	                   w->opt.bits ? 0.0 : w->opt.fpr, h.snapshot_id, w->errmsg,
	                   sizeof w->errmsg);
	if (rc)
		goto out;
	if (fchmodat(stage.dfd, BFI_CATALOG_NAME, 0444, 0) != 0) {
		rc = writer_fail(w, -errno, "%s: %s", cpath, strerror(errno));
		goto out;
	}
	rc = digest_file(cpath, h.catalog_digest, &h.catalog_size);
	if (rc) {
		rc = writer_fail(w, rc, "%s: %s", cpath, bfi_strerror(rc));
		goto out;
	}

	uint8_t head[BFI_SECTION_ALIGN];
	memset(head, 0, sizeof head);
	for (uint32_t i = 0; i < n_sec; i++)
		bfi_section_encode(head + BFI_HEADER_SIZE + i * BFI_ENTRY_SIZE, &sec[i]);
	h.major = BFI_VERSION_MAJOR;
	/* 2.1 or 2.2 only when the file needs it: older readers still read the rest */
	h.minor = BFI_VERSION_MINOR; /* every 3.0 reader reads every feature of 3.0 */
	h.file_size = file_size;
	h.table_offset = BFI_HEADER_SIZE;
	h.section_count = n_sec;
	h.table_checksum = bfi_checksum64(head + BFI_HEADER_SIZE, n_sec * BFI_ENTRY_SIZE);
	bfi_header_encode(head, &h);
	rc = pwrite_all(fd, head, sizeof head, 0);
	/* published files are read-only: a snapshot is replaced, never edited in place */
	if (rc == 0 && fchmod(fd, 0444) != 0)
		rc = -errno;
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (rc == 0 && close(fd) != 0)
		rc = -errno;
	fd = -1;
	if (rc) {
		rc = writer_fail(w, rc, "%s: %s", ipath, bfi_strerror(rc));
		goto out;
	}
	if (fsync(stage.dfd) != 0) {
		rc = writer_fail(w, -errno, "fsync %s: %s", stage.dir, strerror(errno));
		goto out;
	}
	rc = staging_publish(&stage, path, w->errmsg, sizeof w->errmsg, warn, sizeof warn);
	if (rc)
		goto out;
	if (warn[0])
		writer_warn(w, "%s", warn);
	if (sum) {
		sum->n_sets = n;
		sum->keys_in = w->keys_in;
		sum->distinct_pairs = pairs;
		sum->max_set_keys = max_n;
		sum->bits = widest;
		sum->hashes = p.k;
		sum->blocks = p.n_blocks;
		sum->index_bytes = file_size;
		sum->catalog_bytes = h.catalog_size;
	}
out:
	if (fd >= 0)
		close(fd);
	staging_end(&stage);
	plan_free(&p);
	free(sums);
	return rc;
}
