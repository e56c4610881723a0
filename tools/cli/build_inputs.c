/*
 * build_inputs.c - bfi build's kinds of INPUT, a row each (build_args.h,
 * struct input_kind): the writer's source kinds (keys, FASTA, text, JSON
 * and XML) and its other ways in (set<TAB>key lines, prebuilt filters),
 * each with what it takes and how its INPUTs become sets.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bfi_paths.h"
#include "build_args.h"
#include "tools.h"

/* "bfi build", or "bfi append" when append builds a segment through here */
const char *build_me = "bfi build";

static int add_keys(bfi_writer *w, const struct args *a, const char *input)
{
	(void)a;
	return bfi_writer_add_dir(w, input);
}

static int add_tsv(bfi_writer *w, const struct args *a, const char *input)
{
	(void)a;
	FILE *f = strcmp(input, "-") ? fopen(input, "r") : stdin;
	if (f == NULL) {
		fprintf(stderr, "%s: %s: %s\n", build_me, input, strerror(errno));
		return 1; /* said */
	}
	int rc = bfi_writer_add_tsv(w, f, strcmp(input, "-") ? input : "(stdin)");
	if (f != stdin)
		fclose(f);
	return rc;
}

static int add_fasta(bfi_writer *w, const struct args *a, const char *input)
{
	if (a->protein)
		return bfi_writer_add_protein(w, input, a->kmer, a->per_record);
	return bfi_writer_add_fasta(w, input, a->kmer, a->per_record);
}

static int add_text(bfi_writer *w, const struct args *a, const char *input)
{
	return bfi_writer_add_text(w, input, a->max_term, a->stop_words);
}

static int add_paths(bfi_writer *w, const struct args *a, const char *input)
{
	return bfi_writer_add_paths(w, input, a->in->docs == 2,
	                            a->paths ? a->paths : BFI_PATHS_BREADTH | BFI_PATHS_DEPTH,
	                            a->path_max);
}

static int add_filters(bfi_writer *w, const struct args *a, const char *input)
{
	(void)a;
	return bfi_writer_add_filters(w, input);
}

/* --input's kinds, keys first (the default); then --from-filters', which --input does not name. */
const struct input_kind input_kinds[] = {
    {"keys", 0, 0, add_keys},   {"tsv", 0, 0, add_tsv},      {"text", 1, 0, add_text},
    {"fasta", 1, 0, add_fasta}, {"json", 1, 1, add_paths},   {"xml", 1, 2, add_paths},
    {NULL, 0, 0, add_filters},
};

const struct input_kind *input_kind(const char *name)
{
	for (const struct input_kind *k = input_kinds; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

const struct input_kind *input_filters(void)
{
	const struct input_kind *k = input_kinds;
	while (k->name)
		k++;
	return k;
}
