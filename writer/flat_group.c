/*
 * flat_group.c - the flat layout's grouped runs (spec/format.md, "Grouped
 * blocks"), planned after its blocks (flat_plan.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flat.h"

/*
 * Grouped runs (spec/format.md, "Grouped blocks"): a block of at most 511
 * sets of widths far apart, without a pre-filter, becomes a run of up to
 * GROUP_PARTS blocks of sets of near widths, whose rows share lines: a
 * probe reads one line for them all, so that the narrower widths cost the
 * queries no more loads. The sets are cut by dynamic programming for the
 * least space in at most GROUP_PARTS parts, taking the fewest parts within
 * 1% of that; the run then has G groups of L lines (the fewest lines, at
 * most GROUP_LINES, within 2% of the least space: a probe reads them
 * all), each block q = ceil(width / G) rows a group, so m = G q. The run
 * is kept when it saves a twentieth of the block's rows and at least
 * DEFAULT_BLOCK_COST, so that a small index, which a cache holds, keeps
 * its one block.
 */
#define GROUP_PARTS 8u
#define GROUP_LINES 4u

/* Bits a group of the run takes at G groups: sum of ceil(w / G) * n over its parts. */
static uint64_t group_used(const uint64_t *w, const uint64_t *n, uint32_t parts, uint64_t g)
{
	uint64_t used = 0;
	for (uint32_t i = 0; i < parts; i++)
		used += (w[i] + g - 1) / g * n[i];
	return used;
}

/* The least G for which the run's parts fit lines lines a group (0: none). */
static uint64_t group_count(const uint64_t *w, const uint64_t *n, uint32_t parts, uint32_t lines)
{
	uint64_t lo = 1, hi = 0;
	for (uint32_t i = 0; i < parts; i++)
		hi = w[i] > hi ? w[i] : hi;
	if (group_used(w, n, parts, hi) > 512u * lines)
		return 0;
	while (lo < hi) { /* used falls as G grows */
		uint64_t mid = lo + (hi - lo) / 2;
		if (group_used(w, n, parts, mid) <= 512u * lines)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * Block b cut into a run: *parts blocks, ends[i] the ordinal after part i,
 * m[i] its width and q[i] its rows a group. 0 if it pays, 1 if not, or an
 * error.
 */
static int group_plan(const struct bfi_build_options *o, const struct plan *p,
                      const struct bfi_block *b, uint32_t *parts, uint64_t ends[GROUP_PARTS],
                      uint64_t m[GROUP_PARTS], uint64_t q[GROUP_PARTS])
{
	uint32_t n = (uint32_t)b->n_sets;
	uint64_t *w = malloc(n * sizeof *w), *best = malloc((size_t)(GROUP_PARTS + 1) * (n + 1) * 8);
	uint32_t *cut = malloc((size_t)(GROUP_PARTS + 1) * (n + 1) * sizeof *cut);
	if (w == NULL || best == NULL || cut == NULL) {
		free(w), free(best), free(cut);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		w[i] = width_for(o, p->distinct[p->old_of_new[b->first_set + i]], p->k);
	/* best[t][i]: the least bits of the first i sets in t parts, each as wide as its widest */
#define BEST(t, i) best[(size_t)(t) * (n + 1) + (i)]
#define CUT(t, i) cut[(size_t)(t) * (n + 1) + (i)]
	for (uint32_t i = 0; i <= n; i++)
		BEST(0, i) = i ? UINT64_MAX : 0;
	for (uint32_t t = 1; t <= GROUP_PARTS; t++)
		for (uint32_t i = 0; i <= n; i++) {
			BEST(t, i) = i ? UINT64_MAX : 0;
			uint64_t widest = 0;
			for (uint32_t a = i; a-- > 0;) { /* the last part: sets a .. i - 1 */
				widest = w[a] > widest ? w[a] : widest;
				uint64_t before = BEST(t - 1, a);
				if (before == UINT64_MAX)
					continue;
				uint64_t bits = sat_add(before, widest * (i - a));
				if (bits < BEST(t, i)) {
					BEST(t, i) = bits;
					CUT(t, i) = a;
				}
			}
		}
	uint32_t t = 1;
	while (t < GROUP_PARTS && BEST(t, n) > BEST(GROUP_PARTS, n) + BEST(GROUP_PARTS, n) / 100)
		t++;
	*parts = t;
	uint64_t nn[GROUP_PARTS];
	for (uint32_t i = n, x = t; x > 0; x--) {
		uint32_t a = CUT(x, i);
		ends[x - 1] = b->first_set + i;
		nn[x - 1] = i - a;
		m[x - 1] = 0;
		for (uint32_t y = a; y < i; y++)
			m[x - 1] = w[y] > m[x - 1] ? w[y] : m[x - 1];
		i = a;
	}
#undef BEST
#undef CUT
	free(w), free(best), free(cut);
	if (t == 1)
		return 1;
	/* G groups of L lines: the fewest lines within 2% of the least space, as a probe reads them */
	uint64_t gs[GROUP_LINES + 1] = {0}, spaces[GROUP_LINES + 1], least = UINT64_MAX;
	for (uint32_t lines = 1; lines <= GROUP_LINES; lines++) {
		gs[lines] = group_count(m, nn, t, lines);
		if (gs[lines] == 0 || __builtin_mul_overflow(gs[lines], 512u * lines, &spaces[lines]))
			gs[lines] = 0;
		else if (spaces[lines] < least)
			least = spaces[lines];
	}
	uint64_t g = 0, space = UINT64_MAX;
	for (uint32_t lines = 1; lines <= GROUP_LINES && g == 0; lines++)
		if (gs[lines] && spaces[lines] <= least + least / 50)
			g = gs[lines], space = spaces[lines];
	/* it must save a twentieth of the block's rows, and a block's cost: a small index keeps one */
	uint64_t rows = bfi_block_rows_bytes(b->m, b->row_bits), save = rows / 20;
	save = save > DEFAULT_BLOCK_COST ? save : DEFAULT_BLOCK_COST;
	if (g == 0 || rows < save || space / 8 + 64 > rows - save)
		return 1;
	for (uint32_t i = 0; i < t; i++) {
		q[i] = (m[i] + g - 1) / g;
		m[i] = q[i] * g;
	}
	return 0;
}

/* Each block of the plan that pays as a grouped run, made one; the format's minor raised then. */
int group_blocks(bfi_writer *w, struct plan *p)
{
	struct flat_plan *fl = flat_of(p);
	const struct bfi_build_options *o = &w->opt;
	/* the caller's own cuts and widths are kept */
	if (o->fixed_width || o->block_cost || o->max_block_sets)
		return 0;
	for (uint32_t b = 0; b < fl->n_blocks; b++) {
		struct bfi_block *blk = &fl->blocks[b];
		if (blk->pre_m || blk->group || blk->n_sets < 2 || blk->n_sets > BFI_GROUP_MAX_SETS)
			continue;
		uint32_t parts;
		uint64_t ends[GROUP_PARTS], m[GROUP_PARTS], q[GROUP_PARTS];
		int rc = group_plan(o, p, blk, &parts, ends, m, q);
		if (rc < 0)
			return rc;
		if (rc || fl->n_blocks + parts - 1 > BFI_MAX_BLOCKS)
			continue;
		struct bfi_block *nb = realloc(fl->blocks, (fl->n_blocks + parts - 1) * sizeof *nb);
		if (nb == NULL)
			return -ENOMEM;
		fl->blocks = nb;
		memmove(&nb[b + parts], &nb[b + 1], (fl->n_blocks - b - 1) * sizeof *nb);
		fl->n_blocks += parts - 1;
		for (uint32_t i = 0, first = (uint32_t)nb[b].first_set; i < parts; i++) {
			set_block(p, b + i, first, ends[i], m[i]);
			nb[b + i].row_bits = nb[b + i].n_sets; /* packed, whatever its sets */
			nb[b + i].pre_m = 0;
			nb[b + i].group = q[i] | (i == 0 ? BFI_GROUP_FIRST : 0);
			first = (uint32_t)ends[i];
		}
		for (uint32_t x = b + parts; x < fl->n_blocks; x++) /* the blocks after: renumbered */
			for (uint64_t j = nb[x].first_set; j < nb[x].first_set + nb[x].n_sets; j++)
				fl->block_of[j] = x;
		b += parts - 1;
		if (p->minor < 2)
			p->minor = 2;
	}
	return 0;
}

