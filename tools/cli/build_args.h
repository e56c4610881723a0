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
/* The k-mer length of protein sequences when --kmer is not given: the field's practice is 7 to 12. */
#define PROTEIN_K 10

struct args {
	struct bfi_build_options o;
	const char *out, *stop_words, *fof;
	const struct input_kind *in; /* --input's kind (NULL: keys), or --tsv's, or --from-filters' */
	unsigned kinds; /* the kinds asked for, but keys: more than one is an error */
	int quiet, stats, per_record, filters, tsv;
	int protein; /* --alphabet protein: fasta's sequences are proteins (kmer: PROTEIN_K if not given) */
	uint32_t paths, path_max, kmer, max_term;
	char layout_opts[4096]; /* --layout-option's, joined by commas */
};

/*
 * A kind of INPUT (build_inputs.c): --input's name for it (NULL: only
 * --from-filters asks for it), whether it takes several INPUTs, its
 * documents' format for JSON (1) or XML (2), and how one INPUT becomes
 * sets: 0, an error, or 1 when it has said why itself.
 */
struct input_kind {
	const char *name;
	int many, docs;
	int (*add)(bfi_writer *w, const struct args *a, const char *input);
};
extern const struct input_kind input_kinds[];
/* The kind --input names name, or NULL; --from-filters' kind. */
const struct input_kind *input_kind(const char *name);
const struct input_kind *input_filters(void);

/* "bfi build", or "bfi append" when append builds a segment through it: messages say it. */
extern const char *build_me;
/* bfi build's options, its help around them included. */
extern const struct opt_cmd build_cmd;
/* The options that need or exclude one another: 0, or the exit status after saying why. */
int build_check(struct args *a, int argc);

#endif
