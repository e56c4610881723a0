/* layouts.c - the reader's table of layouts (layout.h): one row each, as the format's rows. */
#include "layout.h"

extern const struct bfi_layout_ops bfi__flat_ops, bfi__tree_ops, bfi__rambo_ops, bfi__plain_ops;
#ifdef BFI_TOY_LAYOUT
extern const struct bfi_layout_ops bfi__toy_ops; /* the test build's (toy.c) */
#endif

_Static_assert(BFI_ROWS <= BFI_MAX_LAYOUTS, "the snapshot keeps a view per row");

const struct bfi_layout_ops *const bfi__layouts[BFI_ROWS] = {
	[BFI_ROW_FLAT] = &bfi__flat_ops,
	[BFI_ROW_TREE] = &bfi__tree_ops,
	[BFI_ROW_RAMBO] = &bfi__rambo_ops,
	[BFI_ROW_PLAIN] = &bfi__plain_ops,
#ifdef BFI_TOY_LAYOUT
	[BFI_ROW_TOY] = &bfi__toy_ops,
#endif
};

int bfi__row_of(const bfi_snapshot *s, unsigned layout, const struct bfi_layout_ops **out)
{
	for (int r = 0; layout == 0 && r < BFI_ROWS; r++)
		if (s->view[r]) {
			*out = bfi__layouts[r];
			return 0;
		}
	int r = bfi_layout_row(layout);
	if (r < 0)
		return BFI_E_INVALID;
	if (s->view[r] == NULL)
		return BFI_E_NO_LAYOUT;
	*out = bfi__layouts[r];
	return 0;
}

int bfi_layout_info(const bfi_snapshot *s, unsigned layout, struct bfi_layout_info *out)
{
	int r = bfi_layout_row(layout);
	if (s == NULL || out == NULL || r < 0)
		return BFI_E_INVALID;
	if (s->view[r] == NULL)
		return BFI_E_NO_LAYOUT;
	memset(out, 0, sizeof *out);
	out->layout = layout;
	out->name = bfi_layout_rows[r].name;
	const struct bfi_section *e = &s->lay.sec[s->lay.sec_of[r]];
	out->offset = e->offset;
	out->size = e->stored_size;
	bfi__layouts[r]->info(s, out);
	return 0;
}

int bfi_layout_set_filter(const bfi_snapshot *s, unsigned layout, uint32_t ord,
                          const uint8_t **bits, uint64_t *m)
{
	int r = bfi_layout_row(layout);
	if (s == NULL || bits == NULL || m == NULL || r < 0)
		return BFI_E_INVALID;
	if (s->view[r] == NULL)
		return BFI_E_NO_LAYOUT;
	if (bfi__layouts[r]->set_filter == NULL)
		return BFI_E_INVALID;
	struct bfi_layout_info li;
	bfi__layouts[r]->info(s, &li);
	if (ord >= li.n_sets)
		return BFI_E_NOT_FOUND;
	bfi__layouts[r]->set_filter(s, ord, bits, m);
	return 0;
}

int bfi_layout_params(const bfi_snapshot *s, unsigned layout, struct bfi_layout_param *out,
                      size_t cap)
{
	int r = bfi_layout_row(layout);
	if (s == NULL || (out == NULL && cap) || r < 0)
		return BFI_E_INVALID;
	if (s->view[r] == NULL)
		return BFI_E_NO_LAYOUT;
	return bfi__layouts[r]->params ? bfi__layouts[r]->params(s, out, cap) : 0;
}
