/*
 * compile.c - queries made as a snapshot's keys were (spec/format.md, "Text
 * keys", "k-mer keys"): text split by the tokenizer and stop words its
 * catalog records, a sequence cut into its k-mers. One compiler for the
 * command line, the server and the bindings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_text.h"
#include "internal.h"

/* A query may hold 65,536 keys (bfi_expr_parse); a sequence shorter than this has fewer k-mers. */
#define QUERY_KEYS 65536u

/* A text's distinct terms, less the stop words (sorted, each followed by LF). */
struct terms {
	const char *stops;
	size_t stops_len;
	char *buf; /* terms, each BFI_TERM_MAX bytes apart */
	size_t *lens, n, cap;
};

static int is_stop(const struct terms *ts, const char *t, size_t len)
{
	for (size_t i = 0; i < ts->stops_len;) { /* short lists: a scan will do */
		const char *nl = memchr(ts->stops + i, '\n', ts->stops_len - i);
		size_t l = nl ? (size_t)(nl - (ts->stops + i)) : ts->stops_len - i;
		if (l == len && memcmp(ts->stops + i, t, len) == 0)
			return 1;
		i += l + 1;
	}
	return 0;
}

static int add_term(void *ctx, const char *t, size_t len)
{
	struct terms *ts = ctx;
	if (is_stop(ts, t, len))
		return 0;
	for (size_t i = 0; i < ts->n; i++)
		if (ts->lens[i] == len && memcmp(ts->buf + i * BFI_TERM_MAX, t, len) == 0)
			return 0;
	if (ts->n == ts->cap) {
		size_t cap = ts->cap ? ts->cap * 2 : 16;
		char *nb = realloc(ts->buf, cap * BFI_TERM_MAX);
		if (nb == NULL)
			return -ENOMEM;
		ts->buf = nb;
		size_t *nl = realloc(ts->lens, cap * sizeof *nl);
		if (nl == NULL)
			return -ENOMEM;
		ts->lens = nl;
		ts->cap = cap;
	}
	memcpy(ts->buf + ts->n * BFI_TERM_MAX, t, len);
	ts->lens[ts->n++] = len;
	return 0;
}

int bfi_expr_text(const bfi_snapshot *snap, const char *text, size_t len, int how, bfi_expr **out)
{
	if (snap == NULL || out == NULL || (text == NULL && len) ||
	    (how != BFI_TEXT_ALL && how != BFI_TEXT_TERMS))
		return BFI_E_INVALID;
	*out = NULL;
	struct terms ts = {NULL, 0, NULL, NULL, 0, 0};
	unsigned max_term = bfi__meta_uint(snap, BFI_META_TEXT_MAX_TERM, BFI_TERM_DEFAULT);
	if (max_term < 1 || max_term > BFI_TERM_MAX)
		max_term = BFI_TERM_DEFAULT;
	const void *sv;
	if (bfi_catalog_meta(snap, BFI_META_TEXT_STOP_WORDS, &sv, &ts.stops_len) == 0)
		ts.stops = sv;
	else
		ts.stops_len = 0;
	struct bfi_tokenizer t;
	bfi_tokenizer_init(&t, max_term);
	int rc = bfi_tokenize(&t, text ? text : "", len, add_term, &ts);
	if (rc == 0)
		rc = bfi_tokenize_end(&t, add_term, &ts);
	if (rc == 0 && how == BFI_TEXT_TERMS) {
		const void **keys = malloc((ts.n ? ts.n : 1) * sizeof *keys);
		rc = keys ? 0 : -ENOMEM;
		for (size_t i = 0; rc == 0 && i < ts.n; i++)
			keys[i] = ts.buf + i * BFI_TERM_MAX;
		if (rc == 0)
			rc = bfi_expr_terms(keys, ts.lens, ts.n, out);
		free(keys);
	} else if (rc == 0 && ts.n) {
		/*
		 * The AND of the terms, as an expression, so that it takes the
		 * conjunction path; the tokenizer's terms hold no blank, quote or
		 * parenthesis and are lower case, so never AND or OR.
		 */
		char *joined = malloc(ts.n * (BFI_TERM_MAX + 1) + 1);
		size_t at = 0;
		rc = joined ? 0 : -ENOMEM;
		for (size_t i = 0; rc == 0 && i < ts.n; i++) {
			memcpy(joined + at, ts.buf + i * BFI_TERM_MAX, ts.lens[i]);
			at += ts.lens[i];
			joined[at++] = ' ';
		}
		if (rc == 0)
			rc = bfi_expr_parse(joined, at, out, NULL);
		free(joined);
	}
	free(ts.buf);
	free(ts.lens);
	return rc;
}

/* A sequence's k-mer keys, end to end, repeats included. */
struct kmer_list {
	char *buf;
	size_t n, klen;
};

static int add_kmer(void *ctx, const char *key, size_t len)
{
	struct kmer_list *kl = ctx;
	memcpy(kl->buf + kl->n++ * kl->klen, key, len);
	return 0;
}

int bfi_expr_kmers(const bfi_snapshot *snap, const char *seq, size_t len, unsigned k,
                   bfi_expr **out)
{
	if (out == NULL || (seq == NULL && len))
		return BFI_E_INVALID;
	*out = NULL;
	if (k == 0 && snap)
		k = bfi__meta_uint(snap, BFI_META_KMER, 0);
	if (k < 1 || k > BFI_KMER_MAX)
		return BFI_E_INVALID;
	size_t klen = bfi_kmer_key_len(k), n = 0;
	char *kmers = NULL;
	int rc;
	if (len < QUERY_KEYS) {
		/* every k-mer, repeats too: the expression drops repeated hashes, so a
		 * set of the keys made here would hash each twice */
		struct kmer_list kl = {malloc(len * klen + 1), 0, klen};
		rc = kl.buf ? bfi_kmer_keys(seq ? seq : "", len, k, add_kmer, &kl) : -ENOMEM;
		kmers = kl.buf;
		n = kl.n;
	} else { /* repeats dropped first, or they would count against the limit */
		rc = bfi_kmers(seq, len, k, &kmers, &n);
	}
	const void **keys = NULL;
	size_t *lens = NULL;
	if (rc == 0) {
		keys = malloc((n ? n : 1) * sizeof *keys);
		lens = malloc((n ? n : 1) * sizeof *lens);
		rc = keys && lens ? 0 : -ENOMEM;
		for (size_t i = 0; rc == 0 && i < n; i++) {
			keys[i] = kmers + i * klen;
			lens[i] = klen;
		}
	}
	if (rc == 0)
		rc = bfi_expr_terms(keys, lens, n, out);
	free(keys);
	free(lens);
	free(kmers);
	return rc;
}
