/*
 * query.c - single-key queries on the flat layout (spec/format.md, "Flat
 * section"): AND the k rows the key selects, then list the set bits.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

struct bfi_result {
	uint32_t *ords;
	size_t n, cap;
};

int bfi_result_create(bfi_result **out)
{
	if (out == NULL)
		return BFI_E_INVALID;
	*out = calloc(1, sizeof **out);
	return *out ? 0 : -ENOMEM;
}

void bfi_result_destroy(bfi_result **res)
{
	if (res == NULL || *res == NULL)
		return;
	free((*res)->ords);
	free(*res);
	*res = NULL;
}

size_t bfi_result_count(const bfi_result *res)
{
	return res->n;
}

const uint32_t *bfi_result_ordinals(const bfi_result *res)
{
	return res->ords;
}

static int reserve(bfi_result *res, size_t want)
{
	if (want <= res->cap)
		return 0;
	size_t cap = res->cap ? res->cap : 64;
	while (cap < want)
		cap *= 2;
	uint32_t *p = realloc(res->ords, cap * sizeof *p);
	if (p == NULL)
		return -ENOMEM;
	res->ords = p;
	res->cap = cap;
	return 0;
}

int bfi_query_key(const bfi_snapshot *s, const void *key, size_t len, bfi_result *res)
{
	if (s == NULL || res == NULL || (key == NULL && len != 0))
		return BFI_E_INVALID;
	const struct bfi_flat_desc *f = &s->lay.flat;
	const uint64_t *row[BFI_MAX_K];
	bfi_keyhash h = bfi_hash_key(key, len);
	for (uint32_t i = 0; i < f->k; i++)
		row[i] = (const uint64_t *)(s->rows + bfi_hash_pos(h, i, f->m) * f->row_bytes);
	res->n = 0;
	/*
	 * Rows are 64-byte aligned and a multiple of 64 bytes long, so walk
	 * them a cache line (8 words) at a time and stop ANDing a line as
	 * soon as it is all zero: most lines of most rows never get read.
	 */
	size_t words = f->row_bytes / 8;
	for (size_t w0 = 0; w0 < words; w0 += 8) {
		uint64_t acc[8], any = 0;
		for (int j = 0; j < 8; j++)
			any |= acc[j] = le64toh(row[0][w0 + j]);
		for (uint32_t i = 1; i < f->k && any; i++) {
			any = 0;
			for (int j = 0; j < 8; j++)
				any |= acc[j] &= le64toh(row[i][w0 + j]);
		}
		if (!any)
			continue;
		for (int j = 0; j < 8; j++) {
			uint64_t w = acc[j];
			if (!w)
				continue;
			int rc = reserve(res, res->n + (size_t)__builtin_popcountll(w));
			if (rc)
				return rc;
			while (w) {
				uint64_t ord = (w0 + (uint64_t)j) * 64 + (uint64_t)__builtin_ctzll(w);
				/* Padding bits past n_sets are zero in a good file; a
				 * damaged one must not yield an ordinal that does not exist. */
				if (ord < f->n_sets)
					res->ords[res->n++] = (uint32_t)ord;
				w &= w - 1;
			}
		}
	}
	return 0;
}
