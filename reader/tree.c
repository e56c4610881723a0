/*
 * tree.c - queries on the tree (Bloofi) layout (spec/format.md, "Tree
 * section").
 *
 * Test every node of the top stored level with whole rows, then descend:
 * a surviving node's d children sit side by side in one 64-bit word of
 * each row of the level below, so testing the
 * whole child group costs one word load per row, k per key. Only the
 * children of survivors are read. The frontier of surviving nodes is an
 * explicit array per level, kept in ascending order, so the sets at the
 * bottom come out sorted.
 *
 * Each level waits on memory once, so the query asks ahead: the first
 * lines of the top level's rows load while the pre-filter is probed, and
 * the moment a node survives, its child group's word in each row of the
 * level below is requested, while the rest of its level is still being
 * tested.
 */
#include <errno.h>
#include <stdlib.h>

#include "tree.h"

/* This file's own ops, defined at its end: the table (layouts.c) holds them. */
extern const struct bfi_layout_ops bfi__tree_ops;


static int tree_open(bfi_snapshot *s, const uint8_t *sec, uint64_t size, struct bfi_where *at)
{
	struct bfi_level lv[BFI_MAX_LEVELS];
	struct bfi_tree *t = s->view[BFI_ROW_TREE];
	int rc = bfi_tree_decode(sec, size, &t->d, lv, at);
	for (uint32_t l = 0; rc == 0 && l < t->d.levels; l++)
		t->levels[l] = (struct bfi_rlevel){sec + lv[l].rows_offset,
		                                   lv[l].groups_offset ? sec + lv[l].groups_offset : NULL,
		                                   lv[l].nodes, lv[l].m, lv[l].row_bytes};
	t->pre = rc == 0 && t->d.pre_m ? sec + t->d.pre_offset : NULL;
	t->line_pre = (t->d.flags & BFI_TREE_LINE_PRE) != 0;
	return rc;
}

/*
 * Ask for the word of node's child group (level l - 1) in each of the nr
 * rows below. Nodes come from the file: a group out of range is skipped
 * here and reported when the level is tested.
 */
static void ask_children(const struct bfi_tree *t, uint32_t l, uint32_t node, const uint8_t **below,
                         size_t nr)
{
	const uint8_t *g = t->levels[l].groups;
	uint64_t first;
	if (g) {
		if (node >= t->levels[l].nodes)
			return;
		first = bfi_get32(g + (uint64_t)node * 4);
	} else {
		first = (uint64_t)node * t->d.fanout;
	}
	if (first >= t->levels[l - 1].nodes)
		return;
	for (size_t i = 0; i < nr; i++)
		bfi__prefetch(below[i] + first / 64 * 8);
}

static long tree_conj(const bfi_snapshot *s, const struct bfi_expr *e, const struct bfi_enode *n,
                 bfi_result *res, uint32_t *out)
{
	const struct bfi_tree *t = tree_of(s);
	uint32_t d = t->d.fanout;
	size_t nr = (size_t)n->n_keys * (t->acc ? 1 : t->d.k);
	/* frontier: two halves of N entries each, the current level and the next */
	if (bfi__grow(&res->frontier, &res->frontier_cap, 2 * (size_t)s->lay.n_sets + 64,
	              sizeof *res->frontier))
		return -ENOMEM;
	uint32_t *cur = res->frontier, *next = res->frontier + s->lay.n_sets + 32;
	size_t ncur = 0, nnext;
	uint64_t lines = 0;
	/* rows of the level being tested, and of the level below it */
	const uint8_t **rows = res->rows, **below = res->rows + nr;
	const struct bfi_rlevel *top = &t->levels[t->d.levels - 1];
	conj_rows(t, e, n, t->d.levels - 1, rows);
	for (size_t i = 0; i < nr; i++)
		bfi__prefetch(rows[i]);
	/* A key absent from every set is rejected by the pre-filter alone. */
	for (uint32_t j = 0; t->pre && j < n->n_keys; j++)
		if (!key_in(t, e, e->kidx[n->first_key + j], &lines)) {
			if (res->count_bytes) /* the probes, and the top rows asked for */
				res->touched += (lines + nr) * 64;
			return 0;
		}
	/* The top stored level: every node, with whole rows. */
	uint32_t l = t->d.levels - 1;
	if (l > 0)
		conj_rows(t, e, n, l - 1, below);
	for (uint64_t w = 0; w < top->row_bytes / 8; w++) {
		uint64_t acc = ~0ull;
		for (size_t i = 0; i < nr && acc; i++) {
			acc &= le64toh(((const uint64_t *)rows[i])[w]);
			lines += w % 8 == 0; /* a row's scan reads a cache line per 8 words */
		}
		for (; acc; acc &= acc - 1) {
			uint64_t node = w * 64 + (uint64_t)__builtin_ctzll(acc);
			if (node >= top->nodes)
				return BFI_E_BAD_LAYOUT; /* padding bit set */
			if (l > 0)
				ask_children(t, l, (uint32_t)node, below, nr);
			cur[ncur++] = (uint32_t)node;
		}
	}
	res->tests += top->nodes;
	/* Then down: only the children of the nodes that passed. */
	while (l-- > 0 && ncur) {
		const struct bfi_rlevel *lv = &t->levels[l];
		const uint8_t *g = t->levels[l + 1].groups; /* explicit child groups, or NULL */
		const uint8_t **tmp_rows = rows;
		rows = below;
		below = tmp_rows;
		if (l > 0)
			conj_rows(t, e, n, l - 1, below);
		nnext = 0;
		uint64_t last_end = 0; /* groups of ascending nodes ascend and do not overlap */
		for (size_t c = 0; c < ncur; c++) {
			/* children of node cur[c]: [first, end) of level l */
			uint64_t first, end;
			if (g) {
				first = bfi_get32(g + (uint64_t)cur[c] * 4);
				end = bfi_get32(g + (uint64_t)cur[c] * 4 + 4);
				if (first >= end || end > lv->nodes || first < last_end)
					return BFI_E_BAD_LAYOUT;
				last_end = end;
			} else {
				first = (uint64_t)cur[c] * d;
				if (first >= lv->nodes)
					return BFI_E_BAD_LAYOUT;
				end = lv->nodes - first < d ? lv->nodes : first + d;
			}
			res->tests += end - first;
			/* the group's bits, a 64-bit word at a time: one word when d divides 64 */
			for (uint64_t w = first / 64; w * 64 < end; w++) {
				uint64_t lo = w * 64 > first ? 0 : first % 64;
				uint64_t hi = (w + 1) * 64 < end ? 64 : end - w * 64;
				uint64_t acc = (hi == 64 ? ~0ull : ((1ull << hi) - 1)) & (~0ull << lo);
				for (size_t i = 0; i < nr && acc; i++, lines++)
					acc &= le64toh(((const uint64_t *)rows[i])[w]);
				for (; acc; acc &= acc - 1) {
					uint32_t node = (uint32_t)(w * 64 + (uint64_t)__builtin_ctzll(acc));
					if (l > 0)
						ask_children(t, l, node, below, nr);
					next[nnext++] = node;
				}
			}
		}
		uint32_t *tmp = cur;
		cur = next;
		next = tmp;
		ncur = nnext;
	}
	if (res->count_bytes) /* a group's word of each row: a cache line each */
		res->touched += lines * 64;
	memcpy(out, cur, ncur * sizeof *out);
	return (long)ncur;
}

int bfi_tree_rows(const bfi_snapshot *s, uint32_t l, const uint8_t **rows, uint64_t *m,
                  uint64_t *row_bytes)
{
	const struct bfi_tree *t = s ? tree_of(s) : NULL;
	if (t && s->lazy)
		return BFI_E_SCAN_ONLY;
	if (t == NULL || rows == NULL || m == NULL || row_bytes == NULL || l >= t->d.levels)
		return BFI_E_INVALID;
	*rows = t->levels[l].rows;
	*m = t->levels[l].m;
	*row_bytes = t->levels[l].row_bytes;
	return 0;
}

int bfi_tree_level(const bfi_snapshot *s, uint32_t l, uint64_t *nodes, uint64_t *m, double *fill,
                   double *fpr)
{
	const struct bfi_tree *t = s ? tree_of(s) : NULL;
	if (t && s->lazy && (fill || fpr))
		return BFI_E_SCAN_ONLY;
	if (t == NULL || nodes == NULL || m == NULL || l >= t->d.levels)
		return BFI_E_INVALID;
	const struct bfi_rlevel *lv = &t->levels[l];
	*nodes = lv->nodes;
	*m = lv->m;
	if (fill == NULL && fpr == NULL)
		return 0;
	/*
	 * Each node's ones: its bit of every row. Counted bit by bit, a level
	 * of a million nodes took seconds (and bfi serve counts at every open,
	 * for GET /v1/NAME); here each row's words add into bit planes, a
	 * binary counter a node (count.c), read out before they could overflow.
	 */
	size_t words = (size_t)(lv->row_bytes / 8);
	uint64_t *ones = calloc(words * 64 + 1, sizeof *ones);
	uint64_t *planes = calloc(words * BFI_PLANES + 1, sizeof *planes);
	if (ones == NULL || planes == NULL) {
		free(ones);
		free(planes);
		return -ENOMEM;
	}
	for (uint64_t r = 0; r < lv->m; r++) {
		bfi__count_planes(planes, lv->rows + r * lv->row_bytes, words);
		if (r % BFI_PLANES_ROWS == BFI_PLANES_ROWS - 1 || r + 1 == lv->m)
			bfi__planes_out(planes, words, ones);
	}
	free(planes);
	double fsum = 0, psum = 0;
	for (uint64_t j = 0; j < lv->nodes; j++) {
		double f = (double)ones[j] / (double)lv->m, p = 1;
		for (uint32_t i = 0; i < t->d.k; i++)
			p *= f;
		fsum += f;
		psum += p;
	}
	free(ones);
	if (fill)
		*fill = fsum / (double)lv->nodes;
	if (fpr)
		*fpr = psum / (double)lv->nodes;
	return 0;
}

/* Two sets of rows: it locates the level below while testing one. */
static void tree_scratch(const bfi_snapshot *s, size_t *rows, size_t *words)
{
	*rows = 2 * (size_t)tree_of(s)->d.k;
	*words = 0;
}

static void tree_info(const bfi_snapshot *s, struct bfi_layout_info *out)
{
	const struct bfi_tree *t = tree_of(s);
	out->hashes = t->d.k;
	out->n_sets = t->d.n_sets;
	out->u.tree = (struct bfi_tree_info){t->d.levels, t->d.fanout, t->d.pre_m,
	                                     (t->d.flags & BFI_TREE_EXPLICIT) != 0,
	                                     t->d.dropped_levels, t->d.dropped_nodes};
	if (!out->u.tree.explicit_groups) { /* the shape rule tells what was above */
		uint64_t shape[BFI_MAX_LEVELS];
		uint32_t all = bfi_tree_shape(t->d.n_sets, t->d.fanout, shape);
		for (uint32_t l = t->d.levels; l < all; l++) {
			out->u.tree.dropped_levels++;
			out->u.tree.dropped_nodes += shape[l];
		}
	}
	for (uint32_t l = 0; l < t->d.levels; l++)
		if (t->levels[l].m > out->bits)
			out->bits = t->levels[l].m;
}

/* Padding bits of every level and of the pre-filter; explicit child groups in order. */
static int tree_verify(const bfi_snapshot *s, struct bfi_bad *bad)
{
	const struct bfi_tree *t = tree_of(s);
	for (uint32_t l = 0; l < t->d.levels; l++) {
		const struct bfi_rlevel *lv = &t->levels[l];
		if (bfi__rows_padding(s, lv->rows, lv->m, lv->row_bytes, lv->nodes, bad))
			return bfi__bad(bad, BFI_E_BAD_LAYOUT, bad->offset, 1,
			                "padding bit past a tree level's last node is not zero");
		/* from 0, rising, ending at the level below's count */
		for (uint64_t i = 0; lv->groups && i <= lv->nodes; i++) {
			uint32_t g = bfi_get32(lv->groups + i * 4);
			if ((i == 0 && g != 0) || (i > 0 && g <= bfi_get32(lv->groups + i * 4 - 4)) ||
			    (i == lv->nodes && g != t->levels[l - 1].nodes))
				return bfi__bad(bad, BFI_E_BAD_LAYOUT, (uint64_t)(lv->groups - s->map) + i * 4, 4,
				                "tree child groups out of order or out of range");
		}
	}
	uint64_t at = t->pre ? bfi__first_set_bit(t->pre, t->d.pre_m, bfi_bits_bytes(t->d.pre_m) * 8)
	                     : UINT64_MAX;
	if (at != UINT64_MAX)
		return bfi__bad(bad, BFI_E_BAD_LAYOUT, (uint64_t)(t->pre - s->map) + at / 8, 1,
		                "padding bit past the tree pre-filter's width is not zero");
	return 0;
}

/* The tree's fill ratios are of the set's leaf. */
static uint64_t tree_set_bits(const bfi_snapshot *s, uint32_t ord)
{
	(void)ord;
	return tree_of(s)->levels[0].m;
}

/*
 * Scan (scan.c): the tree is scanned whole. Its group tables, and for
 * each key the pre-filter's line or bytes and, at every level, each
 * probe's whole row (the walk reads the words of the nodes that survive,
 * which only the answer tells) and the line after it.
 */
static int tree_scan_bytes(const bfi_snapshot *s, uint64_t first, uint64_t n,
                           const struct bfi_expr *e, struct bfi_want *w)
{
	const struct bfi_tree *t = tree_of(s);
	int rc = 0;
	(void)first;
	(void)n;
	if (e == NULL) {
		for (uint32_t l = 1; l < t->d.levels && rc == 0; l++)
			if (t->levels[l].groups) {
				uint64_t at = (uint64_t)(t->levels[l].groups - s->map);
				rc = bfi__want(w, at, at + (t->levels[l].nodes + 1) * 4);
			}
		return rc;
	}
	for (uint32_t x = 0; x < e->n_keys && rc == 0; x++) {
		bfi_keyhash h = e->keys[x];
		for (uint32_t i = 0; i < t->d.k && rc == 0; i++) {
			if (t->pre && (i == 0 || !t->line_pre)) {
				uint64_t at = (uint64_t)(t->pre - s->map) +
				              bfi_pre_pos(h, i, t->d.pre_m, t->line_pre) / 8;
				rc = bfi__want(w, at, at + (t->line_pre ? 64 : 1));
			}
			for (uint32_t l = 0; l < t->d.levels && rc == 0; l++) {
				const struct bfi_rlevel *lv = &t->levels[l];
				uint64_t at = (uint64_t)(lv->rows - s->map) + bfi_hash_pos(h, i, lv->m) * lv->row_bytes;
				rc = bfi__want(w, at, at + lv->row_bytes + 64);
			}
		}
	}
	return rc;
}

static int tree_scan_view(const bfi_snapshot *s, uint64_t first, uint64_t n, const uint8_t *shadow,
                          bfi_snapshot *v, uint32_t *ord0)
{
	const struct bfi_tree *t = tree_of(s);
	struct bfi_tree *part = v->view[BFI_ROW_TREE];
	(void)first;
	(void)n;
	*part = *t;
	for (uint32_t l = 0; l < t->d.levels; l++) {
		part->levels[l].rows = bfi__in_shadow(s, t->levels[l].rows, shadow);
		part->levels[l].groups = bfi__in_shadow(s, t->levels[l].groups, shadow);
	}
	part->pre = bfi__in_shadow(s, t->pre, shadow);
	*ord0 = 0;
	return 0;
}

/*
 * Scan, a pass over the rows (layout.h, scan_rows; ranges.c): when the
 * rows a batch needs pass the budget, each key keeps, a level each, its
 * k rows there ANDed, as the pass reaches them in file order, after the
 * pre-filter's probes have put out the keys it rules out; then the group
 * tables are read, and every query walks the tree as mapped, on those
 * rows in place of its probes' (key_rows, key_in). The state is a row of
 * every level a key; a batch whose state does not fit beside a few rows
 * is declined.
 */
struct tpass {
	const bfi_snapshot *s;
	const struct bfi_tree *t;   /* in the index */
	struct bfi_tree v;          /* the same, reading the shadow */
	const uint8_t *shadow;
	const bfi_keyhash **key;
	uint64_t *acc;
	size_t stride;
	uint8_t *out;
	int pre;                    /* placing the pre-filter's probes */
};

/* Key g's probe j: the pre-filter's j-th (a line pre-filter's line), or level j / k's. */
static int tree_probe(void *ctx, size_t g, uint32_t j, uint64_t *off)
{
	const struct tpass *p = ctx;
	const struct bfi_tree *t = p->t;
	if (p->pre) {
		uint64_t pos = bfi_pre_pos(*p->key[g], j, t->d.pre_m, t->line_pre);
		*off = (uint64_t)(t->pre - p->s->map) + (t->line_pre ? pos / 512 * 64 : pos / 8);
		return 1;
	}
	if (p->out[g])
		return 0;
	const struct bfi_rlevel *lv = &t->levels[j / t->d.k];
	*off = (uint64_t)(lv->rows - p->s->map) +
	       bfi_hash_pos(*p->key[g], j % t->d.k, lv->m) * lv->row_bytes;
	return 1;
}

static void tree_apply_pre(void *ctx, const struct bfi_probe *pr)
{
	struct tpass *p = ctx;
	uint64_t lines = 0;
	if (p->v.line_pre) {
		if (!pre_holds(&p->v, *p->key[pr->key], &lines))
			p->out[pr->key] = 1;
		return;
	}
	uint64_t pos = bfi_pre_pos(*p->key[pr->key], pr->j, p->v.d.pre_m, 0);
	if (!(p->v.pre[pos / 8] >> (pos % 8) & 1))
		p->out[pr->key] = 1;
}

/* A row probe's bytes: a row of its level. */
static uint64_t tree_row_len(void *ctx, uint32_t j)
{
	const struct tpass *p = ctx;
	return p->t->levels[j / p->t->d.k].row_bytes;
}

static void tree_apply_row(void *ctx, const struct bfi_probe *pr)
{
	const struct tpass *p = ctx;
	uint32_t l = pr->j / p->t->d.k;
	uint64_t *a = p->acc + (size_t)pr->key * p->stride + p->v.acc_at[l];
	for (uint64_t w = 0; w < p->t->levels[l].row_bytes / 8; w++) {
		uint64_t x;
		memcpy(&x, p->shadow + pr->off + w * 8, 8);
		a[w] &= x;
	}
}

/* The pass's rows, for the view's walks (bfi__pass_answer). */
static size_t *tree_attach(void *ctx, void *view)
{
	const struct tpass *p = ctx;
	struct bfi_tree *part = view;
	part->acc = p->acc;
	part->acc_stride = p->stride;
	memcpy(part->acc_at, p->v.acc_at, sizeof part->acc_at);
	part->acc_out = p->out;
	return &part->acc_key0;
}

/* The state a pass keeps for a key: a row of every level, its key and flag, its probes. */
static uint64_t tree_key_state(const bfi_snapshot *s)
{
	const struct bfi_tree *t = tree_of(s);
	uint64_t words = 0;
	for (uint32_t l = 0; l < t->d.levels; l++)
		words += t->levels[l].row_bytes / 8;
	return words * 8 + sizeof(bfi_keyhash *) + 1 +
	       (uint64_t)t->d.levels * t->d.k * sizeof(struct bfi_probe);
}

static int tree_scan_rows(const bfi_snapshot *s, uint64_t first, uint64_t n,
                          const struct bfi_expr *const *qs, size_t nq, double theta,
                          bfi_result *const *res, struct bfi_scan_io *io)
{
	const struct bfi_tree *t = tree_of(s);
	struct tpass p = {.s = s, .t = t, .v = *t, .shadow = io->shadow};
	(void)first;
	(void)n;
	uint64_t keys = 0, lo = UINT64_MAX, hi = 0, span = 0, tables = 0;
	for (size_t q = 0; q < nq; q++)
		keys += qs[q]->n_keys;
	for (uint32_t l = 0; l < t->d.levels; l++) {
		const struct bfi_rlevel *lv = &t->levels[l];
		uint64_t at = (uint64_t)(lv->rows - s->map);
		lo = at < lo ? at : lo;
		hi = at + lv->m * lv->row_bytes > hi ? at + lv->m * lv->row_bytes : hi;
		span = lv->row_bytes > span ? lv->row_bytes : span;
		p.v.acc_at[l] = p.stride;
		p.stride += (size_t)(lv->row_bytes / 8);
		if (lv->groups) /* the group tables' pages, read once the rows are in */
			tables += (lv->nodes + 1) * 4 / BFI_SCAN_PAGE + 2;
	}
	size_t pages = (size_t)(hi / BFI_SCAN_PAGE - lo / BFI_SCAN_PAGE + 2);
	size_t pre_pages = (size_t)((t->pre ? (t->d.pre_m + 7) / 8 : 0) / BFI_SCAN_PAGE + 2);
	pages = pre_pages > pages ? pre_pages : pages;
	uint64_t n_probes = keys * t->d.levels * t->d.k;
	/* the state: the rows, the keys and their flags, the probes and their count a page */
	uint64_t state = bfi__mul_add(keys, tree_key_state(s), 0);
	state = bfi__mul_add(pages + 1, sizeof(uint32_t), state);
	if (bfi__pass_fits(io, state, tables, span, n_probes))
		return BFI_SCAN_DECLINE;
	struct bfi_probes pb = {0};
	p.v.pre = bfi__in_shadow(s, t->pre, io->shadow);
	int rc = (p.key = malloc((size_t)(keys ? keys : 1) * sizeof *p.key)) ? 0 : -ENOMEM;
	if (rc == 0)
		bfi__pass_keys(qs, nq, p.key);
	if (rc == 0 && ((p.acc = malloc((size_t)(keys ? keys : 1) * p.stride * 8)) == NULL ||
	                (p.out = calloc((size_t)(keys ? keys : 1), 1)) == NULL))
		rc = -ENOMEM;
	if (rc == 0 && t->pre) { /* the pre-filter first: a line a key, or a byte a probe */
		p.pre = 1;
		rc = bfi__probes_by_page(&pb, (uint64_t)(t->pre - s->map) / BFI_SCAN_PAGE, pre_pages,
		                         (size_t)keys, t->line_pre ? 1 : t->d.k, tree_probe, &p);
		if (rc == 0)
			rc = bfi__probe_ranges(io, &pb, t->line_pre ? 64 : 1, NULL, tree_apply_pre, NULL,
			                       &p);
		p.pre = 0;
	}
	if (rc == 0) {
		memset(p.acc, 0xff, (size_t)keys * p.stride * 8);
		rc = bfi__probes_by_page(&pb, lo / BFI_SCAN_PAGE, pages, (size_t)keys,
		                         t->d.levels * t->d.k, tree_probe, &p);
	}
	if (rc == 0)
		rc = bfi__probe_ranges(io, &pb, span, tree_row_len, tree_apply_row, NULL, &p);
	if (rc == 0)
		rc = bfi__pass_answer(io, s, &bfi__tree_ops, BFI_ROW_TREE, tree_attach, &p, qs, nq, theta,
		                      res);
	free(pb.pr);
	free(pb.at);
	free(p.key);
	free(p.acc);
	free(p.out);
	return rc;
}

static int tree_threshold(const bfi_snapshot *s, const struct bfi_expr *e, uint32_t need,
                          bfi_result *res)
{
	if (!bfi__pruning())
		return bfi__list_threshold(s, &bfi__tree_ops, e, need, res);
	return bfi__tree_walk(s, e, need, res);
}

const struct bfi_layout_ops bfi__tree_ops = {
	.view_size = sizeof(struct bfi_tree), .open = tree_open,
	.info = tree_info, .verify = tree_verify, .set_bits = tree_set_bits,
	.conj = tree_conj, .scratch = tree_scratch, .threshold = tree_threshold,
	.scan_part = bfi__scan_whole, .scan_bytes = tree_scan_bytes, .scan_view = tree_scan_view,
	.scan_rows = tree_scan_rows, .scan_key_state = tree_key_state,
};
