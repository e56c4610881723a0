/*
 * layouts.h - the format's table of layouts (layouts.c): one row each,
 * what the reader's and the writer's tables and every tool take a
 * layout's flag, section kind, name and ranks from. A new layout is a
 * new row here, its section's spec, and its files in reader/ and writer/.
 */
#ifndef BFI_FORMAT_LAYOUTS_H
#define BFI_FORMAT_LAYOUTS_H

#include <stdint.h>

#include "bfi_layout.h"

struct bfi_layout_row {
	unsigned flag;     /* BFI_LAYOUT_* */
	uint32_t kind;     /* BFI_SEC_* of its section */
	const char *name;  /* as --layout, inspect and the server spell it */
	const char *alias; /* another name --layout takes, or NULL */
	/*
	 * The catalog's fill ratios (bits_set) are of the present layout of
	 * lowest fill_rank (spec/format.md, "Catalog").
	 */
	int fill_rank;
	/*
	 * A reader that lacks it may answer from flat or plain: its section is
	 * marked required only when neither is present (spec, "Section table").
	 */
	int optional;
	int join; /* BFI_JOIN_*: how a join of snapshots carries it */
	/* Bytes of its section's head: the descriptor desc (64 bytes) and the tables it names. */
	uint64_t (*head)(const uint8_t desc[64]);
};

/*
 * The rows, in the reader's order of preference: a query that names no
 * layout is answered by the first present (flat, tree, RAMBO, plain).
 */
enum {
	BFI_ROW_FLAT,
	BFI_ROW_TREE,
	BFI_ROW_RAMBO,
	BFI_ROW_PLAIN,
#ifdef BFI_TOY_LAYOUT
	BFI_ROW_TOY, /* the test build's toy layout (toy.h) */
#endif
	BFI_ROWS
};
extern const struct bfi_layout_row bfi_layout_rows[BFI_ROWS];

/* Each layout's head (its own file: flat.c, plain.c, rambo.c, tree.c). */
uint64_t bfi_flat_head(const uint8_t desc[64]);
uint64_t bfi_plain_head(const uint8_t desc[64]);
uint64_t bfi_rambo_head(const uint8_t desc[64]);
uint64_t bfi_tree_head(const uint8_t desc[64]);

/* The row of layout flag, or of section kind; -1 if none. */
int bfi_layout_row(unsigned flag);
int bfi_layout_row_of_kind(uint32_t kind);

#endif
