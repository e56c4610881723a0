/*
 * fuzz_parsers.c - any bytes through bfi's input parsers; the first byte
 * picks one: set<TAB>key lines, text documents, FASTA/FASTQ (plain or
 * gzip), JSON, XML, a filter file, a query expression, k-mers of a query
 * sequence, text documents through the writer. Each may refuse its input
 * with an error; none may crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfi.h"
#include "bfi_text.h"
#include "bfi_writer.h"
#include "fuzz.h"

const char *fuzz_name = "parsers";

static int count_term(void *ctx, const char *t, size_t n)
{
	(void)t;
	*(size_t *)ctx += n;
	return 0;
}

static int count_record(void *ctx, const char *id, size_t idl, const char *seq, size_t n)
{
	(void)id;
	(void)seq;
	*(size_t *)ctx += idl + n;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned which = data[0] % 9;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.memory = 16u << 20; /* the least: a writer per input must be cheap */
	bfi_writer *w = NULL;
	size_t sink = 0;
	const char *path;
	switch (which) {
	case 0: { /* set<TAB>key lines */
		FILE *f = fmemopen((void *)(n ? p : (const uint8_t *)"\n"), n ? n : 1, "r");
		if (f && bfi_writer_create(&o, &w) == 0)
			TRY(bfi_writer_add_tsv(w, f, "fuzz"));
		if (f)
			fclose(f);
		break;
	}
	case 1: { /* text, split in two calls */
		struct bfi_tokenizer t;
		bfi_tokenizer_init(&t, 1 + (n ? p[0] % 64 : 0));
		TRY(bfi_tokenize(&t, p, n / 2, count_term, &sink));
		TRY(bfi_tokenize(&t, p + n / 2, n - n / 2, count_term, &sink));
		TRY(bfi_tokenize_end(&t, count_term, &sink));
		break;
	}
	case 2: /* FASTA/FASTQ, plain or gzip by its magic */
		if ((path = fuzz_file("seq.fa", p, n)) != NULL) {
			char err[256];
			TRY(bfi_seq_read(path, count_record, &sink, err, sizeof err));
			if (bfi_writer_create(&o, &w) == 0)
				TRY(bfi_writer_add_fasta(w, path, 1 + (n ? p[n - 1] % 40 : 0), n % 2));
		}
		break;
	case 3: /* JSON */
	case 4: /* XML */
		if ((path = fuzz_file("doc", p, n)) != NULL && bfi_writer_create(&o, &w) == 0)
			TRY(bfi_writer_add_paths(w, path, which == 4, 3, 0));
		break;
	case 5: /* a filter file */
		if ((path = fuzz_file("f.bff", p, n)) != NULL) {
			bfi_filter *f;
			if (bfi_filter_load(path, &f) == 0) {
				TRY(bfi_filter_contains(f, "x", 1));
				bfi_filter_destroy(&f);
			}
		}
		break;
	case 6: { /* a query expression */
		bfi_expr *e;
		size_t at;
		if (bfi_expr_parse((const char *)p, n, &e, &at) == 0)
			bfi_expr_free(&e);
		break;
	}
	case 7: { /* k-mers of a query sequence */
		char *out;
		size_t c;
		if (bfi_kmers((const char *)p, n, 1 + (n ? p[0] % 64 : 0), &out, &c) == 0)
			free(out);
		break;
	}
	case 8: /* text documents, through the writer */
		if ((path = fuzz_file("doc.txt", p, n)) != NULL && bfi_writer_create(&o, &w) == 0)
			TRY(bfi_writer_add_text(w, path, 0, NULL));
		break;
	}
	bfi_writer_destroy(&w);
	return 0;
}
