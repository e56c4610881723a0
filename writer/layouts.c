/* layouts.c - the writer's table of layouts (internal.h, struct wlayout): one row each. */
#include "internal.h"

/* The catalog's ones of a set: its leaf (level 0 of the tree). */
static void tree_ones(struct plan *p)
{
	for (uint32_t j = 0; j < p->n; j++)
		p->ones[j] = p->tree_ones[j];
}

/* The catalog's ones of a set: its cell's filter in repetition 0. */
static void rambo_ones(struct plan *p)
{
	for (uint32_t j = 0; j < p->n; j++)
		p->ones[j] = p->cell_ones[p->cell_of[j]];
}

static uint64_t flat_widest(const struct plan *p)
{
	uint64_t m = 0;
	for (uint32_t b = 0; b < p->n_blocks; b++)
		m = p->blocks[b].m > m ? p->blocks[b].m : m;
	return m;
}

static uint64_t plain_widest(const struct plan *p)
{
	return p->plain.m;
}

static uint64_t rambo_widest(const struct plan *p)
{
	uint64_t m = 0;
	for (uint32_t r = 0; r < p->rambo.reps; r++)
		m = p->reps[r].m > m ? p->reps[r].m : m;
	return m;
}

static uint64_t tree_widest(const struct plan *p)
{
	uint64_t m = 0;
	for (uint32_t l = 0; l < p->tree.levels; l++)
		m = p->levels[l].m > m ? p->levels[l].m : m;
	return m;
}

const struct wlayout wlayouts[N_WLAYOUTS] = {
    {BFI_ROW_FLAT, 0, plan_flat, &flat_stripes, write_flat_desc, NULL, NULL, flat_widest},
    {BFI_ROW_PLAIN, 3, plan_plain, &plain_stripes, write_plain_desc, NULL, NULL, plain_widest},
    {BFI_ROW_RAMBO, 1, plan_rambo, &rambo_stripes, write_rambo_desc, write_rambo_tables,
     rambo_ones, rambo_widest},
    /* the groups after the rows: their stripes span the gaps */
    {BFI_ROW_TREE, 2, plan_tree, &tree_stripes, write_tree_desc, write_groups, tree_ones,
     tree_widest},
#ifdef BFI_TOY_LAYOUT
    {BFI_ROW_TOY, 4, plan_toy, &toy_stripes, write_toy_desc, NULL, NULL, toy_widest},
#endif
};

unsigned wlayouts_all(void)
{
	unsigned all = 0;
	for (int i = 0; i < N_WLAYOUTS; i++)
		all |= bfi_layout_rows[wlayouts[i].row].flag;
	return all;
}
