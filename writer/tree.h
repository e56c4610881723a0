/*
 * tree.h - the tree layout's plan, shared by its files: tree.c (plan,
 * levels, stripes), bloofi.c (the insertion build) and given_tree.c (a
 * join's tree over given columns).
 */
#ifndef BFI_WRITER_TREE_H
#define BFI_WRITER_TREE_H

#include "layout.h"

/*
 * A tree's shape (writer/bloofi.c): levels[0] holds the leaves, the last
 * level the root. Leaf j is input set order[j]; node i of level l has
 * parent up[l][i] at level l + 1, and a node's children are consecutive.
 */
struct bloofi_shape {
	uint32_t levels;
	uint64_t nodes[BFI_MAX_LEVELS];
	uint32_t *up[BFI_MAX_LEVELS];
	uint32_t *order; /* n_sets entries, the caller's */
};
/* The tree's plan: its descriptor and levels, its leaves' ones, an insertion build's shape. */
struct tree_plan {
	struct bfi_tree_desc d;
	struct bfi_level levels[BFI_MAX_LEVELS];
	uint64_t size;
	uint64_t *leaf_ones; /* ones of each leaf */
	struct bloofi_shape shape; /* tree built by insertion; shape.levels 0 if not */
};
static inline struct tree_plan *tree_of(const struct plan *p)
{
	return p->own[BFI_ROW_TREE];
}

/* The Bloofi paper's insertion build, order d, over leaf filters of width m. */
int bloofi_incremental(bfi_writer *w, uint32_t n_sets, uint64_t m, uint32_t k, uint32_t d,
                       struct bloofi_shape *out);
void bloofi_shape_free(struct bloofi_shape *s);
/* A tree over given columns (given_tree.c): level l's nodes' ones, and the levels' rows. */
int given_level_ones(bfi_writer *w, const struct plan *p, uint32_t l, uint64_t nodes,
                     uint64_t *ones);
int fill_given_tree(bfi_writer *w, const struct plan *p, int fd, uint64_t sec_off, uint64_t budget);
/* The parent, at level l + 1, of node i of level l (tree.c). */
uint64_t tree_up(const struct plan *p, uint32_t l, uint64_t i);

#endif
