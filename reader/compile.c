/*
 * compile.c - queries made as a snapshot's keys were (spec/format.md, "Text
 * keys", "k-mer keys"): text split by the tokenizer and stop words its
 * catalog records, a sequence cut into its k-mers. One compiler for the
 * command line, the server and the bindings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_text.h"
#include "expr.h"

/* A sequence shorter than a query's keys (BFI__MAX_KEYS) has fewer k-mers. */
#define QUERY_KEYS BFI__MAX_KEYS

/*
 * A text's distinct terms, less the stop words (the catalog's list:
 * sorted, each followed by LF). Both are looked up, not scanned, so a text
 * of many terms costs time in proportion to its length.
 */
struct terms {
	const char *stops;
	size_t stops_len;
	char *buf;     /* the terms, one after another */
	size_t used, room; /* bytes of buf used, and allocated */
	size_t *offs, *lens, n, cap; /* each term's place in buf and length */
	uint32_t *slots; /* open addressing: a term's index + 1, or 0 */
	size_t n_slots;  /* a power of two, at least twice n */
};

/* a vs b as the catalog sorts its stop words (strcmp: bytes, then the shorter first) */
static int term_cmp(const char *a, size_t al, const char *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c ? c : al < bl ? -1 : al > bl;
}

/* A binary search of the sorted stop list, line by line. */
static int is_stop(const struct terms *ts, const char *t, size_t len)
{
	const char *w = ts->stops;
	size_t lo = 0, hi = ts->stops_len; /* whole lines in [lo, hi) */
	while (lo < hi) {
		size_t s = lo + (hi - lo) / 2;
		while (s > lo && w[s - 1] != '\n')
			s--;
		const char *nl = memchr(w + s, '\n', hi - s);
		size_t e = nl ? (size_t)(nl - w) : hi;
		int c = term_cmp(w + s, e - s, t, len);
		if (c == 0)
			return 1;
		if (c < 0)
			lo = e + 1;
		else
			hi = s;
	}
	return 0;
}

static uint64_t term_hash(const char *t, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)t[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* The slot of t: where it is, or the empty one where it would go. */
static uint32_t *slot_of(const struct terms *ts, const char *t, size_t len)
{
	size_t mask = ts->n_slots - 1;
	for (size_t i = (size_t)term_hash(t, len) & mask;; i = (i + 1) & mask) {
		uint32_t *sl = &ts->slots[i];
		if (*sl == 0 || (ts->lens[*sl - 1] == len &&
		                 memcmp(ts->buf + ts->offs[*sl - 1], t, len) == 0))
			return sl;
	}
}

static int grow_terms(struct terms *ts)
{
	size_t cap = ts->cap ? ts->cap * 2 : 16, n_slots = cap * 2;
	size_t *no = realloc(ts->offs, cap * sizeof *no);
	if (no == NULL)
		return -ENOMEM;
	ts->offs = no;
	size_t *nl = realloc(ts->lens, cap * sizeof *nl);
	if (nl == NULL)
		return -ENOMEM;
	ts->lens = nl;
	uint32_t *slots = calloc(n_slots, sizeof *slots);
	if (slots == NULL)
		return -ENOMEM;
	free(ts->slots);
	ts->slots = slots;
	ts->n_slots = n_slots;
	ts->cap = cap;
	for (size_t i = 0; i < ts->n; i++) /* rehashed */
		*slot_of(ts, ts->buf + ts->offs[i], ts->lens[i]) = (uint32_t)(i + 1);
	return 0;
}

static int add_term(void *ctx, const char *t, size_t len)
{
	struct terms *ts = ctx;
	if (ts->stops_len && is_stop(ts, t, len))
		return 0;
	if (ts->n && *slot_of(ts, t, len))
		return 0; /* seen */
	if (ts->n == QUERY_KEYS)
		return BFI_E_LIMIT; /* one term too many: stop reading */
	if (ts->n == ts->cap) {
		int rc = grow_terms(ts);
		if (rc)
			return rc;
	}
	if (ts->room - ts->used < len) {
		size_t room = ts->room ? ts->room * 2 : 1024;
		while (room - ts->used < len)
			room *= 2;
		char *nb = realloc(ts->buf, room);
		if (nb == NULL)
			return -ENOMEM;
		ts->buf = nb;
		ts->room = room;
	}
	memcpy(ts->buf + ts->used, t, len);
	ts->offs[ts->n] = ts->used;
	ts->used += len;
	ts->lens[ts->n++] = len;
	*slot_of(ts, t, len) = (uint32_t)ts->n;
	return 0;
}

/*
 * Were snap's keys made from input of another kind than want (the
 * catalog's "input": text, fasta, paths)? Keys made from key files
 * ("keys", or none recorded) take any form: a term or a k-mer is the same
 * key either way.
 */
static int other_input(const bfi_snapshot *snap, const char *want)
{
	const void *v;
	size_t len;
	if (bfi_catalog_meta(snap, BFI_META_INPUT, &v, &len) != 0)
		return 0;
	return !(len == strlen(want) && !memcmp(v, want, len)) && !(len == 4 && !memcmp(v, "keys", 4));
}

int bfi_expr_text(const bfi_snapshot *snap, const char *text, size_t len, int how, bfi_expr **out)
{
	if (snap == NULL || out == NULL || (text == NULL && len) ||
	    (how != BFI_TEXT_ALL && how != BFI_TEXT_TERMS))
		return BFI_E_INVALID;
	*out = NULL;
	if (other_input(snap, "text"))
		return BFI_E_KEY_FORM;
	struct terms ts;
	memset(&ts, 0, sizeof ts);
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
			keys[i] = ts.buf + ts.offs[i];
		if (rc == 0)
			rc = bfi_expr_terms(keys, ts.lens, ts.n, out);
		free(keys);
	} else if (rc == 0 && ts.n) {
		/*
		 * The AND of the terms, as an expression, so that it takes the
		 * conjunction path; the tokenizer's terms hold no blank, quote or
		 * parenthesis and are lower case, so never AND or OR.
		 */
		char *joined = malloc(ts.used + ts.n + 1);
		size_t at = 0;
		rc = joined ? 0 : -ENOMEM;
		for (size_t i = 0; rc == 0 && i < ts.n; i++) {
			memcpy(joined + at, ts.buf + ts.offs[i], ts.lens[i]);
			at += ts.lens[i];
			joined[at++] = ' ';
		}
		if (rc == 0)
			rc = bfi_expr_parse(joined, at, out, NULL);
		free(joined);
	}
	free(ts.buf);
	free(ts.offs);
	free(ts.lens);
	free(ts.slots);
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

/*
 * The term list of n k-mer keys of klen bytes end to end in kmers, the
 * k-mers of length k (kept for bfi_expr_set_errors).
 */
static int kmer_terms(const char *kmers, size_t n, size_t klen, unsigned k, bfi_expr **out)
{
	const void **keys = malloc((n ? n : 1) * sizeof *keys);
	size_t *lens = malloc((n ? n : 1) * sizeof *lens);
	int rc = keys && lens ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		keys[i] = kmers + i * klen;
		lens[i] = klen;
	}
	if (rc == 0)
		rc = bfi_expr_terms(keys, lens, n, out);
	if (rc == 0 && *out)
		(*out)->kmer = k;
	free(keys);
	free(lens);
	return rc;
}

/*
 * A sequence query's arguments checked against snap's key rules (input
 * kind input, and its k): 0 with *k settled (0: the catalog's) and *out
 * NULL, BFI_E_KEY_FORM (keys made otherwise, or of another k: such
 * k-mers would match nothing) or BFI_E_INVALID.
 */
static int seq_args(const bfi_snapshot *snap, const char *seq, size_t len, const char *input,
                    unsigned *k, bfi_expr **out)
{
	if (out == NULL || (seq == NULL && len))
		return BFI_E_INVALID;
	*out = NULL;
	unsigned made = snap ? bfi__meta_uint(snap, BFI_META_KMER, 0) : 0;
	if (snap && other_input(snap, input))
		return BFI_E_KEY_FORM;
	if (*k == 0)
		*k = made;
	if (*k < 1 || *k > BFI_KMER_MAX)
		return BFI_E_INVALID;
	return made && *k != made ? BFI_E_KEY_FORM : 0;
}

int bfi_expr_kmers(const bfi_snapshot *snap, const char *seq, size_t len, unsigned k,
                   bfi_expr **out)
{
	int rc = seq_args(snap, seq, len, "fasta", &k, out);
	if (rc)
		return rc;
	size_t klen = bfi_kmer_key_len(k), n = 0;
	char *kmers = NULL;
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
	if (rc == 0)
		rc = kmer_terms(kmers, n, klen, k, out);
	free(kmers);
	return rc;
}

int bfi_expr_protein(const bfi_snapshot *snap, const char *seq, size_t len, unsigned k,
                     bfi_expr **out)
{
	int rc = seq_args(snap, seq, len, "protein", &k, out);
	if (rc)
		return rc;
	/* every k-mer, repeats too: the term list drops repeated hashes */
	struct kmer_list kl = {malloc(len * k + 1), 0, k};
	rc = kl.buf ? bfi_protein_keys(seq ? seq : "", len, k, add_kmer, &kl) : -ENOMEM;
	if (rc == 0)
		rc = kmer_terms(kl.buf, kl.n, k, k, out);
	free(kl.buf);
	return rc;
}

int bfi__seq_form(const bfi_snapshot *snap, unsigned k, struct bfi_form *f)
{
	if (bfi_query_form(snap, BFI_FORM_AUTO, k, 1.0, f) == 0 && f->form == BFI_FORM_PROTEIN)
		return 0;
	return bfi_query_form(snap, BFI_FORM_KMERS, k, 1.0, f);
}

int bfi_expr_words(const char *text, size_t len, bfi_expr **out)
{
	if (out == NULL || (text == NULL && len))
		return BFI_E_INVALID;
	*out = NULL;
	const void **keys = malloc((len / 2 + 1) * sizeof *keys);
	size_t *lens = malloc((len / 2 + 1) * sizeof *lens), n = 0;
	int rc = keys && lens ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < len;) {
		while (i < len && (text[i] == ' ' || text[i] == '\t'))
			i++;
		size_t j = i;
		while (j < len && text[j] != ' ' && text[j] != '\t')
			j++;
		if (j > i) {
			keys[n] = text + i;
			lens[n++] = j - i;
		}
		i = j;
	}
	if (rc == 0)
		rc = bfi_expr_terms(keys, lens, n, out);
	free(keys);
	free(lens);
	return rc;
}

/* Does the catalog record input of kind want? */
static int input_is(const bfi_snapshot *snap, const char *want)
{
	const void *v;
	size_t len;
	return bfi_catalog_meta(snap, BFI_META_INPUT, &v, &len) == 0 && len == strlen(want) &&
	       !memcmp(v, want, len);
}

int bfi__query_terms(const bfi_snapshot *snap, double theta)
{
	struct bfi_form f;
	return bfi_query_form(snap, BFI_FORM_AUTO, 0, theta, &f) == 0 &&
	       (f.form == BFI_FORM_KMERS || f.form == BFI_FORM_PROTEIN || f.form == BFI_FORM_WORDS ||
	        (f.form == BFI_FORM_TEXT && f.theta != 0));
}

/*
 * The catalog's key rules (spec/format.md, "Catalog": "input" and "kmer"):
 * a form asked for is refused where it would match nothing, and AUTO takes
 * the one the keys were made by. A snapshot opened without its catalog
 * has no rules: AUTO is a key, and any form may be asked for.
 */
int bfi_query_form(const bfi_snapshot *snap, int form, unsigned k, double theta,
                   struct bfi_form *out)
{
	if (snap == NULL || out == NULL || !(theta == 0 || bfi__theta_ok(theta)) || form < BFI_FORM_AUTO ||
	    form > BFI_FORM_PROTEIN || k > BFI_KMER_MAX)
		return BFI_E_INVALID;
	const void *v;
	size_t len;
	int rules = bfi_catalog_meta(snap, BFI_META_INPUT, &v, &len) != BFI_E_NO_CATALOG;
	int fasta = input_is(snap, "fasta"), text = input_is(snap, "text"),
	    paths = input_is(snap, "paths"), protein = input_is(snap, "protein");
	unsigned made = rules ? bfi__meta_uint(snap, BFI_META_KMER, 0) : 0;
	int seqs = form == BFI_FORM_KMERS || form == BFI_FORM_PROTEIN;
	if (form == BFI_FORM_AUTO)
		form = fasta && made     ? BFI_FORM_KMERS
		       : protein && made ? BFI_FORM_PROTEIN
		       : text            ? BFI_FORM_TEXT
		       : paths && theta == 0 ? BFI_FORM_PATH
		                             : BFI_FORM_KEY;
	else if (rules && (((fasta || paths || protein) && form == BFI_FORM_TEXT) ||
	                   ((text || paths) && seqs) ||
	                   (protein && form == BFI_FORM_KMERS) || (fasta && form == BFI_FORM_PROTEIN) ||
	                   (!paths && form == BFI_FORM_PATH) ||
	                   ((fasta || protein) && seqs && k && made && k != made)))
		return BFI_E_KEY_FORM;
	if (theta != 0 && (form == BFI_FORM_EXPR || form == BFI_FORM_PATH))
		return BFI_E_INVALID;
	if (theta != 0 && form == BFI_FORM_KEY)
		form = BFI_FORM_WORDS;
	seqs = form == BFI_FORM_KMERS || form == BFI_FORM_PROTEIN;
	if (seqs && (k = k ? k : made) == 0)
		return BFI_E_INVALID; /* no k given, and none recorded */
	*out = (struct bfi_form){form, seqs ? k : 0,
	                         seqs || form == BFI_FORM_WORDS
	                             ? (theta != 0 ? theta : 1.0)
	                             : theta};
	return 0;
}

/* By BFI_FORM_*: the names bfi_form_name() gives. */
static const char *const form_names[] = {"auto", "key", "expr", "path", "text", "kmers", "words",
                                         "protein"};
#define N_FORMS (sizeof form_names / sizeof *form_names)

const char *bfi_form_name(int form)
{
	return form >= 0 && (size_t)form < N_FORMS ? form_names[form] : NULL;
}

int bfi_form_parse(const char *name, size_t len)
{
	for (size_t i = 0; name && i < N_FORMS; i++)
		if (strlen(form_names[i]) == len && !memcmp(form_names[i], name, len))
			return (int)i;
	return -1;
}

/* The queries a form makes, for a refusal's message. */
static const char *made_of(int form)
{
	return form == BFI_FORM_TEXT      ? "text queries"
	       : form == BFI_FORM_KMERS   ? "DNA k-mer queries"
	       : form == BFI_FORM_PROTEIN ? "protein k-mer queries"
	       : form == BFI_FORM_PATH    ? "path queries"
	                                  : "such queries";
}

int bfi_form_refused(const bfi_snapshot *snap, int form, unsigned k, char *why, size_t cap)
{
	struct bfi_form f;
	if (snap == NULL || why == NULL || cap == 0 ||
	    bfi_query_form(snap, form, k, 0, &f) != BFI_E_KEY_FORM)
		return BFI_E_INVALID;
	char input[16] = "keys"; /* absent: keys as given */
	const void *v;
	size_t len;
	if (bfi_catalog_meta(snap, BFI_META_INPUT, &v, &len) == 0 && len < sizeof input) {
		memcpy(input, v, len);
		input[len] = 0;
	}
	unsigned made = bfi__meta_uint(snap, BFI_META_KMER, 0);
	int dna = input_is(snap, "fasta"), protein = input_is(snap, "protein");
	int seqs = made && (dna || protein) && (form == BFI_FORM_KMERS || form == BFI_FORM_PROTEIN);
	if (seqs && (form == BFI_FORM_PROTEIN) == protein) /* the alphabet right, k not */
		snprintf(why, cap, "its keys are %s%u-mers, so %u-mers would match nothing",
		         protein ? "protein " : "", made, k);
	else if (seqs)
		snprintf(why, cap, "its keys are %s %u-mers, so %s would match nothing",
		         protein ? "protein" : "DNA", made, made_of(form));
	else
		snprintf(why, cap, "it was built from %s input, so %s would match nothing", input,
		         made_of(form));
	return 0;
}

int bfi_expr_form(const bfi_snapshot *snap, const struct bfi_form *f, const char *text,
                  size_t len, bfi_expr **out, size_t *err_at)
{
	if (snap == NULL || f == NULL || out == NULL || (text == NULL && len))
		return BFI_E_INVALID;
	*out = NULL;
	text = text ? text : "";
	switch (f->form) {
	case BFI_FORM_KEY: return bfi_expr_key(text, len, out);
	case BFI_FORM_EXPR: return bfi_expr_parse(text, len, out, err_at);
	case BFI_FORM_PATH: return bfi_expr_path(snap, text, len, out);
	case BFI_FORM_TEXT:
		return bfi_expr_text(snap, text, len, f->theta != 0 ? BFI_TEXT_TERMS : BFI_TEXT_ALL, out);
	case BFI_FORM_KMERS: return bfi_expr_kmers(snap, text, len, f->k, out);
	case BFI_FORM_PROTEIN: return bfi_expr_protein(snap, text, len, f->k, out);
	case BFI_FORM_WORDS: return bfi_expr_words(text, len, out);
	default: return BFI_E_INVALID;
	}
}

int bfi_expr_query(const bfi_snapshot *snap, const char *text, size_t len, double theta,
                   bfi_expr **out)
{
	if (out)
		*out = NULL;
	struct bfi_form f;
	int rc = bfi_query_form(snap, BFI_FORM_AUTO, 0, theta, &f);
	return rc ? rc : bfi_expr_form(snap, &f, text, len, out, NULL);
}
