/* layouts.c - the format's table of layouts (layouts.h), and their names for callers. */
#include <string.h>

#include "format.h"
#include "layouts.h"
#include "toy.h"

const struct bfi_layout_row bfi_layout_rows[BFI_ROWS] = {
	[BFI_ROW_FLAT] = {BFI_LAYOUT_FLAT, BFI_SEC_FLAT, "flat", NULL, 0, 0, BFI_JOIN_WRITTEN, bfi_flat_head},
	[BFI_ROW_TREE] = {BFI_LAYOUT_TREE, BFI_SEC_TREE, "tree", "bloofi", 2, 1, BFI_JOIN_KEPT, bfi_tree_head},
	[BFI_ROW_RAMBO] = {BFI_LAYOUT_RAMBO, BFI_SEC_RAMBO, "rambo", NULL, 3, 1, BFI_JOIN_KEPT, bfi_rambo_head},
	[BFI_ROW_PLAIN] = {BFI_LAYOUT_PLAIN, BFI_SEC_PLAIN, "plain", NULL, 1, 0, BFI_JOIN_DROPPED, bfi_plain_head},
#ifdef BFI_TOY_LAYOUT
	[BFI_ROW_TOY] = {BFI_LAYOUT_TOY, BFI_SEC_TOY, "toy", NULL, 4, 1, BFI_JOIN_KEPT, bfi_toy_head},
#endif
};

int bfi_layout_row(unsigned flag)
{
	for (int r = 0; r < BFI_ROWS; r++)
		if (bfi_layout_rows[r].flag == flag)
			return r;
	return -1;
}

int bfi_layout_row_of_kind(uint32_t kind)
{
	for (int r = 0; r < BFI_ROWS; r++)
		if (bfi_layout_rows[r].kind == kind)
			return r;
	return -1;
}

const char *bfi_layout_name(unsigned layout)
{
	int r = bfi_layout_row(layout);
	return r < 0 ? NULL : bfi_layout_rows[r].name;
}

static int named(const char *want, const char *name, size_t len)
{
	return want && strlen(want) == len && !memcmp(want, name, len);
}

unsigned bfi_layout_parse(const char *name, size_t len)
{
	for (int r = 0; name && r < BFI_ROWS; r++)
		if (named(bfi_layout_rows[r].name, name, len) || named(bfi_layout_rows[r].alias, name, len))
			return bfi_layout_rows[r].flag;
	return 0;
}

int bfi_layout_join(unsigned layout)
{
	int r = bfi_layout_row(layout);
	return r < 0 ? BFI_JOIN_UNKNOWN : bfi_layout_rows[r].join;
}

unsigned bfi_layout_at(unsigned i)
{
	return i < BFI_ROWS ? bfi_layout_rows[i].flag : 0;
}

uint64_t bfi_section_head(uint32_t kind, const uint8_t desc[64], uint64_t size)
{
	/* a layout's descriptor and tables (its row's head); the chunk checksums whole */
	int r = bfi_layout_row_of_kind(kind);
	uint64_t n = kind == BFI_SEC_CHUNKSUMS ? size : r >= 0 ? bfi_layout_rows[r].head(desc) : 64;
	return n < size ? n : size;
}
