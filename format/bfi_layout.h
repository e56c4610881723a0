/*
 * bfi_layout.h - the layouts an index file can hold, as bit flags: what a
 * snapshot holds (bfi_info.layouts) and what a build writes
 * (bfi_build_options.layouts) are one set of names.
 */
#ifndef BFI_LAYOUT_H
#define BFI_LAYOUT_H

enum {
	BFI_LAYOUT_FLAT = 1u << 0,  /* bit-sliced rows in blocks (spec: "Flat section") */
	BFI_LAYOUT_PLAIN = 1u << 1, /* N filters one after another, the naive baseline */
	BFI_LAYOUT_RAMBO = 1u << 2, /* repeated and merged filters (spec: "RAMBO section") */
	BFI_LAYOUT_TREE = 1u << 3,  /* Bloofi: a tree of OR-aggregated filters (spec: "Tree section") */
};

#endif
