/*
 * findere.c - bfi_query_findere: a sequence's (k+z)-mers answered from an
 * index of its k-mers (Robidou and Peterlongo, "findere", 2021). A
 * (k+z)-mer counts for a set when each of its z+1 k-mers is found there,
 * so a set must show z+1 false k-mers in a row to gain a false one: the
 * false-positive rate of a (k+z)-mer falls as the z+1-th power of a
 * k-mer's. The terms are the sequence's distinct canonical (k+z)-mers, as
 * a threshold query's are its distinct k-mers, so z = 0 is that query.
 *
 * Each distinct k-mer is asked once (bfi_query_keys); then, walking the
 * sequence's k-mers in order, each set keeps how many k-mers in a row it
 * has held: a window of z+1 closes on a (k+z)-mer, which counts for the
 * set at the first place the (k+z)-mer occurs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_hash.h"
#include "layout.h"

/* The sequence's k-mer keys, in order, with where each run of bases ends. */
struct walk {
	char *keys;     /* key i at keys + i * klen */
	size_t n, cap, klen;
	uint32_t *run;  /* the run (of A, C, G, T) key i is in */
	uint32_t runs;
};

static int take_key(void *ctx, const char *key, size_t len)
{
	struct walk *w = ctx;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;
		char *k = realloc(w->keys, cap * w->klen);
		if (k)
			w->keys = k;
		uint32_t *r = k ? realloc(w->run, cap * sizeof *r) : NULL;
		if (r)
			w->run = r;
		if (!k || !r)
			return -ENOMEM;
		w->cap = cap;
	}
	memcpy(w->keys + w->n * w->klen, key, len);
	w->run[w->n++] = w->runs;
	return 0;
}

static int is_base(char c)
{
	switch (c) {
	case 'A': case 'C': case 'G': case 'T': case 'a': case 'c': case 'g': case 't': return 1;
	default: return 0;
	}
}

/* One of the twenty amino acids' letters (either case)? As bfi_protein_keys reads them. */
static int is_amino(char c)
{
	return c != 0 && strchr("ACDEFGHIKLMNPQRSTVWYacdefghiklmnpqrstvwy", c) != NULL;
}

static char upper_base(char c)
{
	return (char)(c >= 'a' ? c - 32 : c);
}

static char complement(char c)
{
	c = upper_base(c);
	return c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
}

/*
 * The next run of bases (of amino acids, for a protein) at or after *at:
 * [*from, *at) with *at moved to its end; 0 when there is none.
 */
static int next_run(const char *seq, size_t len, int protein, size_t *from, size_t *at)
{
	int (*in)(char) = protein ? is_amino : is_base;
	size_t i = *at;
	while (i < len && !in(seq[i]))
		i++;
	size_t j = i;
	while (j < len && in(seq[j]))
		j++;
	*from = i;
	*at = j;
	return j > i;
}

/* A (k+z)-mer: where it starts in the sequence, and whether its reverse complement is its canonical form. */
struct window {
	const char *at;
	uint32_t key; /* its first k-mer's index in the walk */
	int rc;
};

/* Compare two windows' canonical spellings, of *(size_t *)len bases. */
static int same_spelling(const struct window *a, const struct window *b, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char x = a->rc ? complement(a->at[len - 1 - i]) : upper_base(a->at[i]);
		char y = b->rc ? complement(b->at[len - 1 - i]) : upper_base(b->at[i]);
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* By spelling, then the first place it occurs first. */
static int cmp_window(const void *pa, const void *pb, void *len)
{
	const struct window *a = pa, *b = pb;
	int c = same_spelling(a, b, *(size_t *)len);
	return c ? c : (a->key > b->key) - (a->key < b->key);
}

/* Is the reverse complement of the len bases at p less than them? */
static int rc_less(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char f = upper_base(p[i]), r = complement(p[len - 1 - i]);
		if (f != r)
			return r < f;
	}
	return 0;
}

/*
 * The windows of the walk: one per (k+z)-mer, where its z+1 k-mers are
 * keys i .. i+z of one run. first[i] is set for the window at key i when it
 * is its (k+z)-mer's first place. Returns the distinct (k+z)-mers.
 */
static size_t distinct_windows(const char *seq, size_t len, unsigned k, unsigned z, int protein,
                               const struct walk *w, uint8_t *first, struct window *win)
{
	size_t n = 0;
	/* where each key starts: the runs of bases, k-mers at every place in them */
	size_t key = 0;
	for (size_t i, j = 0; key < w->n && next_run(seq, len, protein, &i, &j);) {
		if (j - i >= k) {
			size_t kmers = j - i - k + 1;
			for (size_t p = 0; p + z < kmers; p++) {
				/* a protein's one strand is its spelling; DNA's the lesser of two */
				win[n] = (struct window){seq + i + p, (uint32_t)(key + p), 0};
				win[n].rc = !protein && rc_less(win[n].at, k + z);
				n++;
			}
			key += kmers;
		}
	}
	size_t wlen = k + z;
	qsort_r(win, n, sizeof *win, cmp_window, &wlen);
	size_t d = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || same_spelling(&win[i - 1], &win[i], wlen) != 0) {
			first[win[i].key] = 1;
			d++;
		}
	return d;
}

int bfi_query_findere(const bfi_snapshot *s, unsigned layout, const char *seq, size_t len,
                      unsigned k, unsigned z, double theta, bfi_result *res, size_t *terms)
{
	struct bfi_form f;
	if (s == NULL || res == NULL || terms == NULL || (seq == NULL && len) || z > 64 ||
	    !bfi__theta_ok(theta))
		return BFI_E_INVALID;
	*terms = 0;
	int rc = bfi__seq_form(s, k, &f); /* the snapshot's own sequences: proteins', else DNA's */
	if (rc)
		return rc;
	int protein = f.form == BFI_FORM_PROTEIN;
	k = f.k;
	struct walk w = {.klen = protein ? k : bfi_kmer_key_len(k)};
	/* the keys of each run, in order (the key functions end a run at any other byte) */
	for (size_t i, j = 0; rc == 0 && next_run(seq, len, protein, &i, &j);) {
		if (j - i >= k) {
			rc = bfi__seq_keys(&f, seq + i, j - i, take_key, &w);
			w.runs++;
		}
	}
	struct bfi_info in;
	bfi_info(s, &in);
	uint64_t n_ords = in.ordinals;
	bfi_keyhash *h = rc == 0 ? malloc((w.n ? w.n : 1) * sizeof *h) : NULL;
	size_t *ends = h ? malloc((w.n ? w.n : 1) * sizeof *ends) : NULL;
	uint8_t *first = ends ? calloc(w.n ? w.n : 1, 1) : NULL;
	struct window *win = first ? malloc((w.n ? w.n : 1) * sizeof *win) : NULL;
	uint32_t *streak = win ? calloc(n_ords ? n_ords : 1, sizeof *streak) : NULL;
	uint32_t *last = streak ? calloc(n_ords ? n_ords : 1, sizeof *last) : NULL;
	uint32_t *score = last ? calloc(n_ords ? n_ords : 1, sizeof *score) : NULL;
	if (rc == 0 && score == NULL)
		rc = -ENOMEM;
	if (rc == 0)
		rc = res->scratch ? 0 : bfi_result_create(&res->scratch);
	bfi_result *lists = rc == 0 ? res->scratch : NULL;
	if (rc == 0) {
		for (size_t i = 0; i < w.n; i++)
			h[i] = bfi_hash_key(w.keys + i * w.klen, w.klen);
		rc = bfi_query_keys(s, layout, h, w.n, lists, ends);
	}
	size_t d = rc == 0 ? distinct_windows(seq, len, k, z, protein, &w, first, win) : 0;
	if (rc == 0) {
		/*
		 * each set's k-mers held in a row, and 1 + the last key it held (0:
		 * none), zero to begin with: only the pages of sets that answer are touched
		 */
		const uint32_t *ords = bfi_result_ordinals(lists);
		for (size_t i = 0, from = 0; i < w.n; from = ends[i], i++) {
			int joined = i > 0 && w.run[i - 1] == w.run[i];
			for (size_t x = from; x < ends[i]; x++) {
				uint32_t o = ords[x];
				if (o >= n_ords)
					continue;
				streak[o] = joined && last[o] == i ? streak[o] + 1 : 1;
				last[o] = (uint32_t)i + 1;
				/* the window of keys i - z .. i, where its (k+z)-mer first occurs */
				if (streak[o] > z && first[i - z])
					score[o]++;
			}
		}
	}
	/* the sets at or over the threshold (every set at BFI_THETA_EVERY), ranked */
	if (rc == 0)
		rc = bfi__answer_scores(s, score, n_ords, d, theta, res);
	if (rc == 0)
		*terms = d;
	free(w.keys);
	free(w.run);
	free(h);
	free(ends);
	free(first);
	free(win);
	free(streak);
	free(last);
	free(score);
	return rc;
}
