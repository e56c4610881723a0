/*
 * build_args.h - bfi build's options (build_args.c): their rows, what
 * they ask, and the checks of those that need or exclude one another.
 */
#ifndef BFI_TOOLS_BUILD_ARGS_H
#define BFI_TOOLS_BUILD_ARGS_H

#include <stdint.h>

#include "bfi_writer.h"
#include "opts.h"

/* What the options ask. */
struct args {
	struct bfi_build_options o;
	const char *out, *stop_words, *fof;
	int tsv, quiet, stats, fasta, per_record, text, filters, docs;
	uint32_t paths, path_max, kmer, max_term;
	char layout_opts[4096]; /* --layout-option's, joined by commas */
};

/* "bfi build", or "bfi append" when append builds a segment through it: messages say it. */
extern const char *build_me;
/* bfi build's options, its help around them included. */
extern const struct opt_cmd build_cmd;
/* The options that need or exclude one another: 0, or the exit status after saying why. */
int build_check(struct args *a, int argc);

#endif
