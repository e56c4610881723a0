/*
 * tree.h - the tree layout's view of a snapshot (tree.c opens it) and
 * what its walk (tree_walk.c) shares with the rest of its queries.
 */
#ifndef BFI_READER_TREE_H
#define BFI_READER_TREE_H

#include "layout.h"

struct bfi_tree {
	struct bfi_tree_desc d;
	struct bfi_rlevel {
		const uint8_t *rows;   /* row r at rows + r * row_bytes; bit j is node j */
		const uint8_t *groups; /* explicit trees, levels >= 1: nodes + 1 LE u32, else NULL */
		uint64_t nodes, m, row_bytes;
	} levels[BFI_MAX_LEVELS];
	const uint8_t *pre; /* the union pre-filter, or NULL */
	int line_pre;       /* a line pre-filter (BFI_TREE_LINE_PRE): one line a key */
	/*
	 * A scan's pass (tree_scan_rows): each key's rows at each level ANDed
	 * already, key g of the batch's level l at acc + g stride + at[l]
	 * words; out[g], the pre-filter ruled key g out; the query being
	 * answered has its keys from key0. NULL: read the rows.
	 */
	const uint64_t *acc;
	size_t acc_stride, acc_at[BFI_MAX_LEVELS], acc_key0;
	const uint8_t *acc_out;
};

/* Key x of query e's rows at level l, into rows: its k probes' rows, or its one accumulator. */
static inline size_t key_rows(const struct bfi_tree *t, const struct bfi_expr *e, uint32_t x, uint32_t l,
                       const uint8_t **rows)
{
	const struct bfi_rlevel *lv = &t->levels[l];
	if (t->acc) {
		rows[0] = (const uint8_t *)(t->acc + (t->acc_key0 + x) * t->acc_stride + t->acc_at[l]);
		return 1;
	}
	for (uint32_t i = 0; i < t->d.k; i++)
		rows[i] = lv->rows + bfi_hash_pos(e->keys[x], i, lv->m) * lv->row_bytes;
	return t->d.k;
}

/* The rows of conjunction n's keys at level l, into rows; their count. */
static inline size_t conj_rows(const struct bfi_tree *t, const struct bfi_expr *e,
                        const struct bfi_enode *n, uint32_t l, const uint8_t **rows)
{
	size_t r = 0;
	for (uint32_t j = 0; j < n->n_keys; j++)
		r += key_rows(t, e, e->kidx[n->first_key + j], l, rows + r);
	return r;
}

/*
 * Does the tree's union pre-filter (if any) hold key h? Adds the lines it
 * read to *lines: one for a line pre-filter, else one a probe tested.
 */
static inline int pre_holds(const struct bfi_tree *t, bfi_keyhash h, uint64_t *lines)
{
	for (uint32_t i = 0; t->pre && i < t->d.k; i++) {
		uint64_t pos = bfi_pre_pos(h, i, t->d.pre_m, t->line_pre);
		*lines += !t->line_pre || i == 0;
		if (!(t->pre[pos / 8] >> (pos % 8) & 1))
			return 0;
	}
	return 1;
}

/* Does the pre-filter let key x of query e through (as a scan's pass found, or read now)? */
static inline int key_in(const struct bfi_tree *t, const struct bfi_expr *e, uint32_t x, uint64_t *lines)
{
	if (t->acc)
		return !t->acc_out[t->acc_key0 + x];
	return pre_holds(t, e->keys[x], lines);
}

#define tree_of(s) BFI_VIEW(s, BFI_ROW_TREE, struct bfi_tree)

/*
 * The threshold query e (need terms of it) by walking the tree down from
 * its top stored level (tree_walk.c): 0 or an error.
 */
int bfi__tree_walk(const bfi_snapshot *s, const struct bfi_expr *e, uint32_t need,
                   bfi_result *res);

#endif
