/*
 * fuzz_catalog.c - any bytes as catalog.mdb, bound to a small valid index
 * whose header is resealed to the fuzzed catalog's digest and size (as a
 * hostile writer could), so that the catalog is really opened and read:
 * names by ordinal and back, metadata, per-set statistics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "bfi.h"
#include "bfi_writer.h"
#include "format.h"
#include "fuzz.h"

const char *fuzz_name = "catalog";

static uint8_t *index_bytes;
static size_t index_len;

/* A three-set snapshot, built once: its index is the one the fuzzed catalogs bind to. */
static void make_index(void)
{
	char base[600], path[700];
	snprintf(base, sizeof base, "%s/base", fuzz_dir());
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	bfi_writer *w;
	if (bfi_writer_create(&o, &w) != 0)
		abort();
	static const char *const sets[] = {"alpha", "beta", "gamma"};
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t ord;
		if (bfi_writer_set(w, sets[i], strlen(sets[i]), &ord) || bfi_writer_key(w, ord, "k", 1) ||
		    bfi_writer_key(w, ord, sets[i], strlen(sets[i])))
			abort();
	}
	if (bfi_writer_finish(w, base, NULL) != 0)
		abort();
	bfi_writer_destroy(&w);
	snprintf(path, sizeof path, "%s/index.bfi", base);
	FILE *f = fopen(path, "rb");
	if (f == NULL || fseek(f, 0, SEEK_END) != 0)
		abort();
	index_len = (size_t)ftell(f);
	rewind(f);
	index_bytes = malloc(index_len);
	if (index_bytes == NULL || fread(index_bytes, 1, index_len, f) != index_len)
		abort();
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (index_bytes == NULL)
		make_index();
	/* bind the index to these bytes: their digest and size, header resealed */
	uint8_t *idx = malloc(index_len);
	if (idx == NULL)
		return 0;
	memcpy(idx, index_bytes, index_len);
	struct bfi_header h;
	if (bfi_header_decode(idx, &h) != 0)
		abort();
	XXH128_hash_t d = XXH3_128bits(size ? (const void *)data : "", size);
	bfi_put64(h.catalog_digest, d.low64);
	bfi_put64(h.catalog_digest + 8, d.high64);
	h.catalog_size = size;
	bfi_header_encode(idx, &h);
	const char *snap = fuzz_index(idx, index_len);
	free(idx);
	if (snap == NULL || fuzz_file("snap/catalog.mdb", data, size) == NULL)
		return 0;
	bfi_snapshot *s;
	if (bfi_open(snap, 0, &s) != 0)
		return 0;
	if (getenv("BFI_FUZZ_DEBUG"))
		fprintf(stderr, "catalog opened\n");
	struct bfi_info in;
	bfi_info(s, &in);
	for (uint32_t i = 0; i < in.n_sets && i < 8; i++) {
		const char *name;
		size_t len;
		uint32_t back;
		struct bfi_set_stats st;
		double fpr;
		if (bfi_set_name(s, i, &name, &len) == 0)
			TRY(bfi_set_find(s, name, len, &back));
		TRY(bfi_set_stats(s, i, &st));
		TRY(bfi_set_fpr(s, i, &fpr));
	}
	const void *v;
	size_t vl;
	TRY(bfi_catalog_meta(s, "writer", &v, &vl));
	TRY(bfi_catalog_meta(s, "text_stop_words", &v, &vl));
	uint32_t ord;
	TRY(bfi_set_find(s, "beta", 4, &ord));
	bfi_close(&s);
	struct bfi_verify_report rep;
	TRY(bfi_verify(snap, &rep, NULL, NULL));
	return 0;
}
