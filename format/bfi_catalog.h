/*
 * bfi_catalog.h - rules of the catalog that programs reading it share with
 * the writer (spec/format.md, "Catalog"): the set-name limit, and the keys
 * of the optional meta fields that say how a snapshot's keys were made.
 */
#ifndef BFI_CATALOG_H
#define BFI_CATALOG_H

/* Set names: 1 to BFI_MAX_NAME bytes, without NUL, TAB, CR or LF. */
#define BFI_MAX_NAME 511u

/* Meta keys (bfi_catalog_meta); absent where the default holds. */
#define BFI_META_INPUT "input"                     /* how keys were made: text, fasta, paths */
#define BFI_META_KMER "kmer"                       /* fasta: the k-mer length */
#define BFI_META_TEXT_MAX_TERM "text_max_term"     /* text: the term length limit */
#define BFI_META_TEXT_STOP_WORDS "text_stop_words" /* text: the stop words, sorted, each + LF */
#define BFI_META_PATHS "paths"                     /* paths: the encoding */
#define BFI_META_PATH_MAX "path_max"               /* paths: the sub-path limit */
#define BFI_META_PATH_LEVELS "path_levels"         /* paths: the deepest document's levels */
/*
 * The fields that say how a snapshot's keys were made, its key rules:
 * snapshots joined, stacked or appended together must agree on each.
 */
#define BFI_META_KEY_RULES                                                                         \
	{BFI_META_INPUT, BFI_META_KMER, BFI_META_TEXT_MAX_TERM, BFI_META_TEXT_STOP_WORDS,          \
	 BFI_META_PATHS, BFI_META_PATH_MAX}

#endif
