/*
 * tree.c - the tree layout's plan (spec/format.md, "Tree section"): its
 * levels' widths, the levels kept, its pre-filter, and an explicit tree's
 * child groups.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_hash.h"
#include "bfi.h"
#include "tree.h"

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

/* Every level's width when the leaves are filters already: --bits, or the given columns' one width. */
static uint64_t leaf_width(const bfi_writer *w)
{
	return w->given ? w->given->blocks[0].m : w->opt.bits;
}

/* The ones of each node of level l: the OR of the prebuilt filters under it. */
static int filter_union_ones(bfi_writer *w, const struct plan *p, uint32_t l, uint64_t nodes,
                             uint64_t *ones)
{
	struct bfi_filter_stats fs;
	bfi_filter_stats(w->filt[0], &fs);
	uint64_t bytes = (fs.m + 7) / 8;
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
	for (uint64_t i = 0; i < nodes; i++)
		for (uint64_t x = 0; x < bytes; x++)
			ones[i] += (uint64_t)__builtin_popcount(u[i * bytes + x]);
	free(u);
	return 0;
}

/*
 * Prebuilt filters (or given columns: bfi compact, bfi merge) have no keys
 * to estimate unions from: OR the leaves' bits under each node of level l
 * and read the union's size off its fill, n = -(m / k) ln(1 - fill), plus
 * the same 15% the HyperLogLog path adds.
 */
static int filter_union_widest(bfi_writer *w, const struct plan *p, uint32_t l, uint64_t nodes,
                               double *widest)
{
	if (l == 0) {
		for (uint32_t j = 0; j < p->n; j++)
			*widest = (double)p->distinct[j] > *widest ? (double)p->distinct[j] : *widest;
		return 0;
	}
	uint64_t *ones = calloc((size_t)nodes, sizeof *ones), m = leaf_width(w);
	if (ones == NULL)
		return -ENOMEM;
	int rc = w->given ? given_level_ones(w, p, l, nodes, ones) : filter_union_ones(w, p, l, nodes, ones);
	for (uint64_t i = 0; rc == 0 && i < nodes; i++) {
		double fill = (double)ones[i] / (double)m;
		double n = fill < 1 ? -(double)m / p->k * log1p(-fill) : 1e18;
		*widest = 1.15 * n > *widest ? 1.15 * n : *widest;
	}
	free(ones);
	return rc;
}

/* The parent, at level l + 1, of node i of level l. */
uint64_t tree_up(const struct plan *p, uint32_t l, uint64_t i)
{
	struct tree_plan *tr = tree_of(p);
	return tr->shape.levels ? tr->shape.up[l][i] : i / tr->d.fanout;
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
	if (plan_own(p, BFI_ROW_TREE, sizeof(struct tree_plan)) == NULL)
		return -ENOMEM;
	struct tree_plan *tr = tree_of(p);
	uint32_t d = w->opt.fanout ? w->opt.fanout : w->opt.bloofi_incremental ? 2 : 64;
	uint64_t nodes[BFI_MAX_LEVELS];
	uint32_t levels = tr->shape.levels;
	if (levels)
		memcpy(nodes, tr->shape.nodes, sizeof nodes);
	else
		levels = bfi_tree_shape(p->n, d, nodes);
	if (levels == 0)
		return BFI_E_LIMIT;
	tr->leaf_ones = calloc(bfi_rambo_row_bytes(p->n) * 8, sizeof *tr->leaf_ones);
	/* inner nodes' unions: HyperLogLog, since sets that share keys overlap */
	size_t regs = SET_HLL_REGS, inner = 0, first[BFI_MAX_LEVELS];
	for (uint32_t l = 1; l < levels; l++) {
		first[l] = inner;
		inner += nodes[l];
	}
	uint8_t *reg = inner ? calloc(inner, regs) : NULL;
	if (tr->leaf_ones == NULL || (inner && reg == NULL)) {
		free(reg);
		return -ENOMEM;
	}
	int rc = 0;
	tr->d.fanout = d; /* for tree_up */
	for (uint32_t j = 0; w->given && j < p->n; j++)
		tr->leaf_ones[j] = w->given->ones[j]; /* the leaves are the given columns */
	if (reg)
		tree_sketch(w, p, levels, first, reg);
	uint32_t kept = 0;
	for (uint32_t l = 0; l < levels && rc == 0; l++) {
		double widest = 0;
		int prebuilt = w->n_filt || w->given; /* no keys: unions from the filters' bits */
		for (uint64_t i = 0; !prebuilt && i < nodes[l]; i++) {
			double u = l == 0 ? (double)p->distinct[p->old_of_new[i]]
			                  : 1.15 * hll_count_bits(reg + (first[l] + i) * regs, SET_HLL_BITS);
			widest = u > widest ? u : widest;
		}
		if (prebuilt && (rc = filter_union_widest(w, p, l, nodes[l], &widest)))
			break;
		uint64_t n = ceil_u64(widest), m = w->given ? leaf_width(w) : width_for(&w->opt, n, p->k);
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
		    padding > (double)tr->levels[0].m * (double)bfi_rambo_row_bytes(nodes[0]) / 8)
			break;
		tr->levels[l].nodes = nodes[l];
		tr->levels[l].m = m;
		kept++;
	}
	free(reg);
	if (rc)
		return rc;
	struct bfi_tree_desc t = {p->n,    p->k, BFI_HASH_XXH3_MIX,
	                          d,       kept, BFI_TREE_DESC_SIZE,
	                          0,       0,    tr->shape.levels ? BFI_TREE_EXPLICIT : 0,
	                          0,       0};
	for (uint32_t l = kept; tr->shape.levels && l < levels; l++) {
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
	if (!w->given && (w->opt.prefilter == BFI_PREFILTER_ALWAYS ||
	                  (w->opt.prefilter == BFI_PREFILTER_AUTO && 0.5 * (double)top_bytes > 64))) {
		t.pre_m = width_for(&(struct bfi_build_options){.fpr = w->opt.fpr},
		                    ceil_u64(hll_count_bits(w->sums.all, HLL_BITS) * 1.05),
		                    p->k); /* 0: none */
		/*
		 * One line a key, as flat's (format 3.3): a read's terms are mostly in
		 * the index, so each passes all k probes, k random lines where a line
		 * pre-filter reads one. --classic-prefilters keeps the k-line kind.
		 */
		if (t.pre_m && !w->opt.classic_prefilters) {
			t.pre_m = (t.pre_m + 511) / 512 * 512;
			t.flags |= BFI_TREE_LINE_PRE;
			if (p->minor < 3)
				p->minor = 3;
		}
	}
	tr->d = t;
	tr->size = bfi_tree_layout(tr->levels, kept, &tr->d);
	return tr->size ? 0 : BFI_E_LIMIT;
}
/* An explicit tree's child groups: where each node's children start. */
static int write_groups(int fd, const struct plan *p, uint64_t sec_off)
{
	struct tree_plan *tr = tree_of(p);
	int rc = 0;
	for (uint32_t l = 1; (tr->d.flags & BFI_TREE_EXPLICIT) && l < tr->d.levels && rc == 0;
	     l++) {
		uint64_t below = tr->levels[l - 1].nodes, n = tr->levels[l].nodes;
		uint8_t *g = calloc(n + 1, 4);
		if (g == NULL)
			return -ENOMEM;
		for (uint64_t i = 0; i < below; i++)
			if (i == 0 || tr->shape.up[l - 1][i] != tr->shape.up[l - 1][i - 1])
				bfi_put32(g + (uint64_t)tr->shape.up[l - 1][i] * 4, (uint32_t)i);
		bfi_put32(g + n * 4, (uint32_t)below);
		rc = pwrite_all(fd, g, (size_t)(n + 1) * 4, sec_off + tr->levels[l].groups_offset);
		free(g);
	}
	return rc;
}

/* ---- The tree's levels a stripe at a time (stripes.c) ---- */

/* Every level ORs its subtree: set j's node at level l is j's ancestor there. */
static void tree_filter_bit(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j,
                            uint64_t row)
{
	const struct plan *p = c->p;
	uint64_t node = j;
	for (uint32_t l = 0; l < tree_of(p)->d.levels; l++) {
		if (l > 0)
			node = tree_up(p, l - 1, node);
		const struct bfi_level *lv = &tree_of(p)->levels[l];
		stripe_bit(c->buf, lo, hi, lv->rows_offset + row * lv->row_bytes + node / 8, node % 8);
	}
}

static void tree_key(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j,
                     bfi_keyhash h)
{
	const struct plan *p = c->p;
	int line = (tree_of(p)->d.flags & BFI_TREE_LINE_PRE) != 0;
	for (uint32_t i = 0; tree_of(p)->d.pre_m && i < tree_of(p)->d.k; i++) {
		uint64_t pos = bfi_pre_pos(h, i, tree_of(p)->d.pre_m, line);
		stripe_bit(c->buf, lo, hi, tree_of(p)->d.pre_offset + pos / 8, pos % 8);
	}
	/* level l's node of set j is j / d^l or the shape's; every level ORs its subtree */
	uint64_t node = j;
	for (uint32_t l = 0; l < tree_of(p)->d.levels; l++) {
		if (l > 0)
			node = tree_up(p, l - 1, node);
		const struct bfi_level *lv = &tree_of(p)->levels[l];
		for (uint32_t i = 0; i < tree_of(p)->d.k; i++) {
			uint64_t row = bfi_hash_pos(h, i, lv->m);
			stripe_bit(c->buf, lo, hi, lv->rows_offset + row * lv->row_bytes + node / 8, node % 8);
		}
	}
}

/* The leaves' ones (the sets' own filters): the catalog's, when the tree is first. */
static void tree_count(const struct stripe_ctx *c, uint64_t lo, uint64_t hi)
{
	const struct bfi_level *lv = &tree_of(c->p)->levels[0];
	count_columns(c->buf, lo, hi, lv->rows_offset, lv->m, lv->row_bytes, tree_of(c->p)->leaf_ones);
}

/*
 * The levels (and pre-filter) from their nodes' own filters (unions.c),
 * written at sec_off: 0, 1 if they would not fit in budget bytes or the
 * tree is explicit (nothing done; stripes then), or an error.
 */
static int fill_tree_levels(bfi_writer *w, const struct plan *p, int fd, uint64_t sec_off, uint64_t budget)
{
	struct tree_plan *tr = tree_of(p);
	if (tr->shape.levels)
		return 1; /* explicit shapes: stripes */
	uint64_t pre_bytes = tr->d.pre_m ? (tr->d.pre_m + 7) / 8 : 0;
	for (uint32_t l = 0; l < tr->d.levels; l++) {
		const struct bfi_level *lv = &tr->levels[l];
		uint64_t filt = 64 * ((lv->m + 63) / 64) * 8;
		if (lv->m * lv->row_bytes > budget || filt + 2 * pre_bytes > budget - lv->m * lv->row_bytes)
			return 1; /* decided before a byte is written */
	}
	uint8_t *pre = pre_bytes ? calloc((size_t)pre_bytes, 1) : NULL;
	if (pre_bytes && pre == NULL)
		return -ENOMEM;
	int rc = 0;
	uint64_t span = 1;
	for (uint32_t l = 0; rc == 0 && l < tr->d.levels; l++) {
		const struct bfi_level *lv = &tr->levels[l];
		struct columns c = {.w = w, .p = p, .m = lv->m, .row_bytes = lv->row_bytes, .n = lv->nodes,
		                    .k = tr->d.k, .span = span, .pre = l == 0 ? pre : NULL,
		                    .pre_m = tr->d.pre_m,
		                    .ones = l == 0 ? tr->leaf_ones : NULL,
		                    .pre_line = (tr->d.flags & BFI_TREE_LINE_PRE) != 0};
		rc = fill_columns(&c, fd, sec_off + lv->rows_offset, budget);
		span *= tr->d.fanout;
		progress(w, "tree levels", l + 1, tr->d.levels);
	}
	if (rc == 0 && pre_bytes)
		rc = pwrite_all(fd, pre, (size_t)pre_bytes, sec_off + tr->d.pre_offset);
	free(pre);
	return rc;
}

/* From the nodes' own filters where they fit, else level by level in stripes. */
static int tree_fill(struct stripe_ctx *c)
{
	const struct plan *p = c->p;
	struct tree_plan *tr = tree_of(p);
	if (c->w->given) /* compaction and merge: the leaves are columns joined from other snapshots */
		return fill_given_tree(c->w, p, c->fd, c->sec_off, c->budget);
	int rc = fill_tree_levels(c->w, p, c->fd, c->sec_off, c->budget);
	if (rc != 1)
		return rc;
	rc = 0;
	for (uint32_t l = 0; l < tr->d.levels && rc == 0; l++) {
		const struct bfi_level *lv = &tr->levels[l];
		rc = stripe_units(c, lv->rows_offset, lv->rows_offset + lv->m * lv->row_bytes, lv->row_bytes);
	}
	if (rc == 0 && tr->d.pre_m) /* the pre-filter is one unit */
		rc = stripe_units(c, tr->d.pre_offset, tr->d.pre_offset + bfi_bits_bytes(tr->d.pre_m),
		                  bfi_bits_bytes(tr->d.pre_m));
	return rc;
}

static uint64_t tree_size(const struct plan *p)
{
	return tree_of(p)->size;
}

static uint64_t tree_data(const struct plan *p)
{
	return tree_of(p)->levels[0].rows_offset;
}

static int tree_descriptor(int fd, const struct plan *p, uint64_t off)
{
	struct tree_plan *tr = tree_of(p);
	uint8_t d[BFI_TREE_DESC_SIZE + BFI_MAX_LEVELS * BFI_LEVEL_ENTRY_SIZE];
	bfi_tree_desc_encode(d, &tr->d);
	for (uint32_t l = 0; l < tr->d.levels; l++)
		bfi_level_encode(d + BFI_TREE_DESC_SIZE + (uint64_t)l * BFI_LEVEL_ENTRY_SIZE, &tr->levels[l]);
	return pwrite_all(fd, d, BFI_TREE_DESC_SIZE + (size_t)tr->d.levels * BFI_LEVEL_ENTRY_SIZE, off);
}

/* The catalog's ones of a set: its leaf (level 0 of the tree). */
static void tree_ones(struct plan *p)
{
	for (uint32_t j = 0; j < p->n; j++)
		p->ones[j] = tree_of(p)->leaf_ones[j];
}

static uint64_t tree_widest(const struct plan *p)
{
	struct tree_plan *tr = tree_of(p);
	uint64_t m = 0;
	for (uint32_t l = 0; l < tr->d.levels; l++)
		m = tr->levels[l].m > m ? tr->levels[l].m : m;
	return m;
}

/*
 * Every node's width from its union's count; alone, the sets clustered so
 * that similar ones share a parent and prune together; the pre-filter's
 * width from the union of all.
 */
static unsigned tree_wants(const struct bfi_build_options *o, int alone)
{
	return WANT_HLL | (alone && !o->keep_order && !o->bloofi_incremental ? WANT_MINHASH : 0) |
	       (o->prefilter != BFI_PREFILTER_NEVER ? WANT_ALL : 0);
}

/* The insertion build (--bloofi-build incremental) sets the leaves' order: the snapshot's. */
static int tree_order(bfi_writer *w, struct plan *p)
{
	const struct bfi_build_options *o = &w->opt;
	if (!o->bloofi_incremental)
		return 0;
	struct tree_plan *t = plan_own(p, BFI_ROW_TREE, sizeof *t);
	if (t == NULL)
		return -ENOMEM;
	/* leaves as wide as level 0 will be */
	t->shape.order = p->old_of_new;
	return bloofi_incremental(w, p->n, width_for(o, p->max_n, p->k), p->k,
	                          o->fanout ? o->fanout : 2, &t->shape);
}

static void tree_free(void *own)
{
	struct tree_plan *t = own;
	free(t->leaf_ones);
	bloofi_shape_free(&t->shape);
}

/* The leaves' ones. */
static uint64_t tree_held(const struct plan *p)
{
	return tree_of(p)->leaf_ones ? p->n * sizeof(uint64_t) : 0;
}

/* A join's columns are the leaves (given_tree.c). */
static int tree_given(const bfi_writer *w)
{
	return w->given != NULL;
}

/*
 * A join (join.c) keeps the tree by rebuilding it over the live sets'
 * columns, level 0 their filters and each level above the OR of its
 * children: so every segment must have a tree, and every live set one
 * filter width. The first segment's fanout is the join's.
 */
struct tree_carry {
	uint32_t fanout;
	uint64_t m; /* the live sets' width, 0 until one is seen */
};

static int tree_join_check(void **state, const struct join_view *v, char *why, size_t whylen)
{
	struct bfi_layout_info ti;
	int has = bfi_layout_info(v->seg, BFI_LAYOUT_TREE, &ti) == 0;
	struct tree_carry *jc = *state;
	why[0] = 0;
	if (jc == NULL) { /* the first segment: its fanout, or quietly none */
		if (!has || (jc = *state = calloc(1, sizeof *jc)) == NULL)
			return 0;
		jc->fanout = ti.u.tree.fanout;
	}
	if (!has) {
		snprintf(why, whylen, "%s has no tree layout", v->label);
		return 0;
	}
	for (uint32_t b = 0; b < v->blocks; b++) {
		uint64_t first, n, bits;
		int lives = 0;
		if (v->block(v, b, &first, &n, &bits) != 0 || bits == jc->m)
			continue;
		for (uint64_t c = 0; c < n && !lives; c++)
			lives = v->lives(v, first + c);
		if (!lives)
			continue;
		if (jc->m == 0) {
			jc->m = bits;
			continue;
		}
		snprintf(why, whylen,
		         "%s holds filters of %llu bits, others of %llu (a tree's filters are of one width)",
		         v->label, (unsigned long long)bits, (unsigned long long)jc->m);
		return 0;
	}
	return 1;
}

static void tree_join_build(const void *state, struct bfi_build_options *o)
{
	o->fanout = ((const struct tree_carry *)state)->fanout;
}

static void tree_join_free(void *state)
{
	free(state);
}

/* A join's columns from a segment's tree: its leaves, the sets in ordinal order at one width, as one block. */
static int tree_columns(const bfi_snapshot *seg, struct join_columns *c)
{
	struct bfi_layout_info li;
	int rc = bfi_layout_info(seg, BFI_LAYOUT_TREE, &li);
	if (rc == 0)
		*c = (struct join_columns){1, li.hashes, 0};
	return rc;
}

static int tree_column_block(const bfi_snapshot *seg, uint32_t b, struct bfi_block_info *bi,
                             const uint8_t **rows, uint64_t *bytes, const uint8_t **pre,
                             uint8_t **owned)
{
	uint64_t m, row_bytes, nodes;
	const uint8_t *r;
	if (owned)
		*owned = NULL;
	if (b != 0)
		return BFI_E_INVALID;
	int rc = bfi_tree_rows(seg, 0, &r, &m, &row_bytes);
	if (rc == 0)
		rc = bfi_tree_level(seg, 0, &nodes, &m, NULL, NULL);
	if (rc)
		return rc;
	*bi = (struct bfi_block_info){0, nodes, m, row_bytes * 8, 0, 0};
	if (rows) {
		*rows = r;
		*bytes = m * row_bytes;
		*pre = NULL;
	}
	return 0;
}

const struct wlayout tree_layout = {
    .row = BFI_ROW_TREE,
    .plan_rank = 2,
    .what = "tree levels",
    .wants = tree_wants,
    .order = tree_order,
    .plan = plan_tree,
    .free = tree_free,
    .held = tree_held,
    .size = tree_size,
    .data = tree_data,
    .filter_bit = tree_filter_bit,
    .key = tree_key,
    .count = tree_count,
    .fill = tree_fill,
    .descriptor = tree_descriptor,
    .after = write_groups, /* the groups after the rows: their stripes span the gaps */
    .ones = tree_ones,
    .widest = tree_widest,
    .given = tree_given,
    .join_check = tree_join_check,
    .join_build = tree_join_build,
    .join_free = tree_join_free,
    .from_columns = 1,
    .columns = tree_columns,
    .column_block = tree_column_block,
};
