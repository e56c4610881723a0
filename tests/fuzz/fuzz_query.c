/*
 * fuzz_query.c - any bytes as index.bfi, opened without a catalog, then
 * queried on every layout it holds: single keys, an expression, a
 * threshold query and a batch. A query may fail with an error code; it
 * may not crash or read outside the file.
 */
#include <string.h>

#include "bfi.h"
#include "fuzz.h"

const char *fuzz_name = "query";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *snap = fuzz_index(data, size);
	if (snap == NULL)
		return 0;
	bfi_snapshot *s;
	if (bfi_open(snap, BFI_OPEN_NO_CATALOG, &s) != 0)
		return 0;
	bfi_result *r;
	if (bfi_result_create(&r) != 0) {
		bfi_close(&s);
		return 0;
	}
	static const char *const keys[] = {"apple", "lmdb", "k1", "k2", "shared3-key0", "", "x"};
	static const unsigned layouts[] = {BFI_LAYOUT_FLAT, BFI_LAYOUT_PLAIN, BFI_LAYOUT_RAMBO,
	                                   BFI_LAYOUT_TREE};
	struct bfi_info in;
	bfi_info(s, &in);
	bfi_expr *e = NULL, *t = NULL;
	const char *text = "(apple AND k1) OR lmdb OR (x AND NOT_A_KEY)";
	TRY(bfi_expr_parse(text, strlen(text), &e, NULL));
	const void *tk[3] = {"apple", "k2", "x"};
	size_t tl[3] = {5, 2, 1};
	TRY(bfi_expr_terms(tk, tl, 3, &t));
	bfi_keyhash hs[sizeof keys / sizeof *keys];
	size_t ends[sizeof keys / sizeof *keys];
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		hs[i] = bfi_hash_key(keys[i], strlen(keys[i]));
	for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++) {
		if (!(in.layouts & layouts[l]))
			continue;
		for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
			TRY(bfi_query_key_layout(s, layouts[l], keys[i], strlen(keys[i]), r));
		/* every key in one call: its own loop on one block of short rows */
		TRY(bfi_query_keys(s, layouts[l], hs, sizeof keys / sizeof *keys, r, ends));
		if (e)
			TRY(bfi_query_expr(s, layouts[l], e, r));
		if (t)
			TRY(bfi_query_threshold(s, layouts[l], t, 0.5, r));
	}
	if (e && (in.layouts & BFI_LAYOUT_FLAT)) {
		/* keys and an expression in one batch: both batch paths */
		enum { NB = 5 };
		bfi_expr *k[NB - 1] = {NULL};
		const bfi_expr *es[NB];
		bfi_result *rs[NB] = {NULL};
		int ok = 1;
		for (int i = 0; i < NB - 1 && ok; i++)
			ok = bfi_expr_key(keys[i], strlen(keys[i]), &k[i]) == 0;
		for (int i = 0; i < NB && ok; i++) {
			es[i] = i == 2 ? e : k[i < 2 ? i : i - 1];
			ok = bfi_result_create(&rs[i]) == 0;
		}
		if (ok)
			TRY(bfi_query_batch(s, BFI_LAYOUT_FLAT, es, NB, rs));
		for (int i = 0; i < NB; i++) {
			bfi_result_destroy(&rs[i]);
			if (i < NB - 1)
				bfi_expr_free(&k[i]);
		}
	}
	bfi_expr_free(&e);
	bfi_expr_free(&t);
	bfi_result_destroy(&r);
	bfi_close(&s);
	return 0;
}
