/*
 * bfi_layout.h - the layouts an index file can hold, as bit flags: what a
 * snapshot holds (bfi_info.layouts) and what a build writes
 * (bfi_build_options.layouts) are one set of names. Their names, as
 * --layout and inspect spell them, come from the library (format/layouts.c),
 * never from a caller's own list.
 */
#ifndef BFI_LAYOUT_H
#define BFI_LAYOUT_H

#include <stddef.h>

#include "bfi_error.h"

enum {
	BFI_LAYOUT_FLAT = 1u << 0,  /* bit-sliced rows in blocks (spec: "Flat section") */
	BFI_LAYOUT_PLAIN = 1u << 1, /* N filters one after another, the naive baseline */
	BFI_LAYOUT_RAMBO = 1u << 2, /* repeated and merged filters (spec: "RAMBO section") */
	BFI_LAYOUT_TREE = 1u << 3,  /* Bloofi: a tree of OR-aggregated filters (spec: "Tree section") */
};

/* How bfi compact and bfi merge carry a layout their inputs hold (bfi_layout_join). */
enum {
	BFI_JOIN_UNKNOWN = 0, /* not a layout this library knows: a join refuses it */
	BFI_JOIN_WRITTEN = 1, /* written from the sets' columns (flat) */
	BFI_JOIN_KEPT = 2,    /* kept when every input allows it (tree, RAMBO), else said */
	BFI_JOIN_DROPPED = 3, /* not written (it needs the keys), and said so */
};
BFI_API int bfi_layout_join(unsigned layout);

/* The name of layout flag (one BFI_LAYOUT_*), such as "flat"; NULL if it is none. */
BFI_API const char *bfi_layout_name(unsigned layout);
/*
 * The flag of the layout named name[0 .. len) (as bfi_layout_name gives
 * it, or an alias such as "bloofi" for the tree), or 0 if none is.
 */
BFI_API unsigned bfi_layout_parse(const char *name, size_t len);
/*
 * The i-th layout this library knows, in the order of their rows (flat,
 * plain, rambo, tree, ...): its flag, or 0 past the last. For listing
 * them in messages, menus and completions.
 */
BFI_API unsigned bfi_layout_at(unsigned i);

#endif
