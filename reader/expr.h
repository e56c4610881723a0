/* expr.h - the parsed form of query expressions (expr.c), read by the layouts. */
#ifndef BFI_READER_EXPR_H
#define BFI_READER_EXPR_H

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"

enum {
	BFI_EXPR_KEYS = 1, /* a conjunction of keys: kidx[first_key .. first_key + n_keys) */
	BFI_EXPR_AND,      /* all children: kids[first_kid .. first_kid + n_kids) */
	BFI_EXPR_OR,       /* any child */
	BFI_EXPR_TERMS,    /* a term list for threshold queries (keys, as KEYS) */
};

struct bfi_enode {
	int type;
	uint32_t first_key, n_keys;
	uint32_t first_kid, n_kids;
};

struct bfi_expr {
	/*
	 * First, what a batch reads of a query of one key, in 32 bytes, so
	 * that such a query costs one cache line (bfi_expr_key allocates on a
	 * line): the keys, and whether the expression is exactly one key.
	 */
	bfi_keyhash *keys; /* one hash per key, in parse order */
	uint32_t n_keys;
	uint32_t single;   /* the root is a KEYS node of one key */
	/*
	 * bfi_expr_key's one key, node and key index: its arrays point here, so
	 * a key query is one allocation. bfi_expr_free frees only arrays that
	 * are not these.
	 */
	bfi_keyhash key1;
	struct bfi_enode *nodes;
	uint32_t n_nodes, cap_nodes, root;
	uint32_t *kids; /* child node ids of AND and OR nodes */
	uint32_t n_kids, cap_kids;
	uint32_t *kidx; /* key indices of KEYS and TERMS nodes */
	uint32_t n_kidx, cap_kidx;
	uint32_t cap_keys;
	struct bfi_enode node1;
	uint32_t kidx1;
	/* a term list's own threshold (bfi_expr_set_need), if has_need; else theta's */
	uint32_t need;
	int has_need;
	unsigned kmer; /* a sequence's term list (bfi_expr_kmers): its k; else 0 */
};

/* A query's answer and scratch space; see bfi.h. */
struct bfi_result {
	/*
	 * First, what every query resets and a batch writes, in 64 bytes: a
	 * result is allocated on a cache line (bfi_result_create), so a query
	 * of a batch touches one line of it besides its ordinals.
	 */
	uint32_t *ords;
	uint32_t *scores; /* threshold queries only */
	size_t n, cap, scores_cap;
	int have_scores;
	int count_bytes;
	uint64_t touched;
	uint64_t tests;        /* tree: node filters tested */
	/* scratch, grown as needed and kept for the next query */
	uint64_t *z;           /* k probes per key */
	size_t z_cap;
	const uint8_t **rows;  /* row pointers of one conjunction */
	size_t rows_cap;
	uint64_t *vec;         /* bit vectors, one per expression level */
	size_t vec_cap;
	uint32_t *counts;      /* threshold scores of one block */
	size_t counts_cap;
	uint64_t *rank;        /* threshold ranking keys */
	size_t rank_cap;
	uint32_t *frontier;    /* tree: surviving nodes of two levels */
	size_t frontier_cap;
	uint64_t *alive;       /* flat thresholds: a block's sets still in the running */
	size_t alive_cap;
	uint32_t *live_words;  /*   and the words of alive that are not zero */
	size_t live_words_cap;
	uint32_t *terms;       /* tree thresholds: each level's terms and their child masks */
	size_t terms_cap;
	uint8_t *pack;         /* packed rows copied out as whole lines; 64-byte aligned */
	size_t pack_cap;
	/* bfi_query_batch on long rows: the one result every query of a batch
	 * is answered in before its answer is copied out; kept by the batch's
	 * first result for the next batch */
	struct bfi_result *scratch;
	uint64_t deadline; /* CLOCK_MONOTONIC ns after which long queries stop, or 0 */
};

/*
 * Has res's deadline passed? A clock read, so asked a block or some terms
 * at a time, never a key at a time.
 */
static inline int bfi__late(const struct bfi_result *res)
{
	if (res->deadline == 0)
		return 0;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec > res->deadline;
}

/*
 * Make e the query of key hash h alone, in e's own storage (key1, node1,
 * kidx1): what bfi_expr_key allocates, or an expression on the stack.
 */
void bfi__expr_one_key(struct bfi_expr *e, bfi_keyhash h);
/* The keys an expression or term list may hold (bfi_expr_parse, bfi_expr_terms). */
#define BFI__MAX_KEYS 65536u
/* A term list of n distinct key hashes h (at most BFI__MAX_KEYS): 0, BFI_E_LIMIT or -ENOMEM. */
int bfi__expr_hashes(const bfi_keyhash *h, uint32_t n, bfi_expr **out);

/* Depth of node id of e: 1 for a leaf. */
uint32_t bfi__expr_depth(const struct bfi_expr *e, uint32_t id);

/* ceil(theta * n), at least 1: the terms of n a threshold at theta in (0, 1] needs. */
static inline uint32_t bfi__share(uint32_t n, double theta)
{
	uint32_t need = (uint32_t)(theta * n);
	if ((double)need < theta * n)
		need++;
	return need ? need : 1;
}

/* The realloc behind bfi__grow (expr.c): queries meet it rarely, so it stays out of line. */
int bfi__grow_to(void *pp, size_t *cap, size_t want, size_t sz);
/* Grow *pp (an array) to hold want elements of size sz; 0 or -ENOMEM. */
static inline int bfi__grow(void *pp, size_t *cap, size_t want, size_t sz)
{
	return want <= *cap ? 0 : bfi__grow_to(pp, cap, want, sz);
}

/*
 * Row pointers of every key of conjunction n in a bit-sliced matrix of m
 * rows of row_bytes bytes at rows: key probes probe0 .. probe0 + k - 1.
 * Writes n_keys * k pointers to out and returns their count.
 */
size_t bfi__conj_rows(const struct bfi_expr *e, const struct bfi_enode *n, uint32_t k,
                      uint32_t probe0, const uint8_t *rows, uint64_t m, uint64_t row_bytes,
                      const uint8_t **out);

/*
 * The form a sequence query of snap takes, into *f: BFI_FORM_PROTEIN on a
 * snapshot of proteins, else BFI_FORM_KMERS (with k, 0: the catalog's),
 * as bfi_query_form settles it. 0, or bfi_query_form's refusal.
 */
int bfi__seq_form(const bfi_snapshot *snap, unsigned k, struct bfi_form *f);
/* The keys of a sequence of form f's alphabet (format/kmer.c). */
static inline int bfi__seq_keys(const struct bfi_form *f, const char *seq, size_t len,
                                bfi_kmer_fn fn, void *ctx)
{
	return (f->form == BFI_FORM_PROTEIN ? bfi_protein_keys : bfi_kmer_keys)(seq, len, f->k, fn,
	                                                                       ctx);
}
/* Is e at theta answered with every set (BFI_THETA_EVERY, or its own need of 0)? */
static inline int bfi__every_set(const struct bfi_expr *e, double theta)
{
	return e->has_need ? e->need == 0 : theta == BFI_THETA_EVERY;
}
/*
 * BFI_THETA_EVERY on a snapshot (not a collection, whose segments each do
 * it): every set res, answered as a threshold of one term, lacks joins it
 * with score 0; then res is ranked. 0 or -ENOMEM.
 */
int bfi__every(const bfi_snapshot *s, bfi_result *res);
/*
 * res: the ordinals o in [0, n) whose score[o] of terms reaches theta
 * (every live one at BFI_THETA_EVERY), with their scores, ranked; none
 * when there are no terms. 0 or -ENOMEM.
 */
int bfi__answer_scores(const bfi_snapshot *s, const uint32_t *score, uint64_t n, size_t terms,
                       double theta, bfi_result *res);

#endif
