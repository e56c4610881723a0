/*
 * text.c - text documents as sets of terms (spec/format.md, "Text keys"):
 * one file per document, plain or gzip, split by the tokenizer that
 * queries use too (format/bfi_text.h), less the stop words.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "bfi_text.h"
#include "internal.h"
#include "sources.h"

struct stops {
	char **w; /* sorted, distinct */
	size_t n, cap;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int stop_add(void *ctx, const char *term, size_t len)
{
	struct stops *s = ctx;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **nw = realloc(s->w, cap * sizeof *nw);
		if (nw == NULL)
			return -ENOMEM;
		s->w = nw;
		s->cap = cap;
	}
	if ((s->w[s->n] = strndup(term, len)) == NULL)
		return -ENOMEM;
	s->n++;
	return 0;
}

static void stops_free(struct stops *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->w[i]);
	free(s->w);
}

/* The stop words: every term of the file, by the same tokenizer. */
static int load_stops(bfi_writer *w, const char *path, unsigned max_term, struct stops *s)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return writer_fail(w, -errno, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		return writer_fail(w, -EISDIR, "%s: %s", path, strerror(EISDIR));
	}
	struct bfi_tokenizer t;
	bfi_tokenizer_init(&t, max_term);
	char buf[4096];
	size_t got;
	int rc = 0;
	while (rc == 0 && (got = fread(buf, 1, sizeof buf, f)) > 0)
		rc = bfi_tokenize(&t, buf, got, stop_add, s);
	if (rc == 0)
		rc = bfi_tokenize_end(&t, stop_add, s);
	if (rc == 0 && ferror(f))
		rc = writer_fail(w, -EIO, "%s: read error", path);
	fclose(f);
	if (rc)
		return rc;
	if (s->n) /* an empty list has no array to sort */
		qsort(s->w, s->n, sizeof *s->w, cmp_str);
	size_t m = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (m && !strcmp(s->w[m - 1], s->w[i])) {
			free(s->w[i]);
			continue;
		}
		s->w[m++] = s->w[i];
	}
	s->n = m;
	return 0;
}

/* A document's terms, less the stop words, to emit. */
struct doc {
	const struct stops *stops;
	int (*emit)(void *ctx, const char *key, size_t len);
	void *ctx;
	char term[BFI_TERM_MAX + 1];
};

static int doc_term(void *ctx, const char *term, size_t len)
{
	struct doc *d = ctx;
	if (d->stops && d->stops->n) {
		memcpy(d->term, term, len);
		d->term[len] = '\0';
		const char *key = d->term;
		if (bsearch(&key, d->stops->w, d->stops->n, sizeof *d->stops->w, cmp_str))
			return 0;
	}
	return d->emit(d->ctx, term, len);
}

/* Every term of a text document, less the stop words, as this writer's text input splits them. */
static int text_file_keys(const bfi_writer *w, const char *file, unsigned k,
                          int (*emit)(void *ctx, const char *key, size_t len), void *ctx,
                          unsigned *deepest, char *err, size_t errlen)
{
	(void)k, (void)deepest;
	struct doc *d = malloc(sizeof *d);
	if (d == NULL) {
		snprintf(err, errlen, "%s: %s", file, strerror(ENOMEM));
		return -ENOMEM;
	}
	*d = (struct doc){w->text_stop_list, emit, ctx, {0}};
	struct zin z;
	int rc = zin_open(&z, file, err, errlen);
	if (rc) {
		free(d);
		return rc;
	}
	struct bfi_tokenizer t;
	bfi_tokenizer_init(&t, w->text_max);
	char buf[1 << 16];
	for (;;) {
		ssize_t got = zin_read(&z, buf, sizeof buf, err, errlen);
		if (got < 0) {
			rc = (int)got;
			break;
		}
		if (got == 0)
			break;
		if ((rc = bfi_tokenize(&t, buf, (size_t)got, doc_term, d)))
			break;
	}
	if (rc == 0)
		rc = bfi_tokenize_end(&t, doc_term, d);
	zin_close(&z);
	free(d);
	return rc;
}

static const struct source_kind text_source = {"text", NULL, text_file_keys, writer_doc_name, NULL, 0};

void text_free(bfi_writer *w)
{
	if (w->text_stop_list)
		stops_free(w->text_stop_list);
	free(w->text_stop_list);
	w->text_stop_list = NULL;
}

int bfi_writer_add_text(bfi_writer *w, const char *path, unsigned max_term, const char *stop_words)
{
	if (w == NULL || path == NULL)
		return BFI_E_INVALID;
	if (max_term == 0)
		max_term = BFI_TERM_DEFAULT;
	if (max_term > BFI_TERM_MAX)
		return writer_fail(w, BFI_E_INVALID, "term length limit %u: must be 1 to %u", max_term,
		                   BFI_TERM_MAX);
	struct stops stops = {NULL, 0, 0};
	/* how the keys were made, for queries to split text the same way (spec, "Catalog") */
	int rc = writer_input(w, "text");
	if (rc == 0 && stop_words)
		rc = load_stops(w, stop_words, max_term, &stops);
	/* the stop words as the catalog holds them: sorted, each ending in '\n' */
	size_t len = 0;
	for (size_t i = 0; i < stops.n; i++)
		len += strlen(stops.w[i]) + 1;
	char *v = malloc(len ? len : 1);
	if (rc == 0 && v == NULL)
		rc = -ENOMEM;
	for (size_t i = 0, at = 0; rc == 0 && i < stops.n; i++) {
		size_t l = strlen(stops.w[i]);
		memcpy(v + at, stops.w[i], l);
		v[at + l] = '\n';
		at += l + 1;
	}
	/* one snapshot, one tokenizer: every text input must split as the first did */
	if (rc == 0 && w->text_seen &&
	    (w->text_max != max_term || w->text_stops_len != len || (len && memcmp(w->text_stops, v, len))))
		rc = writer_fail(w, BFI_E_INPUT, "%s: another text input used a different %s", path,
		                 w->text_max != max_term ? "term length limit" : "stop word list");
	if (rc == 0 && !w->text_seen) {
		w->text_seen = 1;
		w->text_max = max_term;
		w->text_stops = v;
		w->text_stops_len = len;
		v = NULL;
		/* every later text input has the same list: this one filters them all */
		if ((w->text_stop_list = malloc(sizeof stops)) == NULL)
			rc = -ENOMEM;
		else {
			*w->text_stop_list = stops;
			stops = (struct stops){NULL, 0, 0};
		}
		/*
		 * Queries must split text as the documents were: a tokenizer that
		 * is not the default is recorded in the catalog (spec, "Text keys").
		 */
		char num[16];
		if (max_term != BFI_TERM_DEFAULT)
			rc = writer_meta(w, BFI_META_TEXT_MAX_TERM, num,
			                 (size_t)snprintf(num, sizeof num, "%u", max_term), "the term length limit");
		if (rc == 0 && len)
			rc = writer_meta(w, BFI_META_TEXT_STOP_WORDS, w->text_stops, len, "the stop words");
	}
	free(v);
	stops_free(&stops);
	/* a document a set, read on threads, and again to fill */
	return rc ? rc : sources_add(w, path, &text_source, 0);
}
