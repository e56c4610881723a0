/*
 * query.c - single-key queries: on the flat layout, block by block, AND
 * the k rows the key selects (kernel.c); on the plain layout, test the k
 * bits of every set's filter in turn.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

struct bfi_result {
	uint32_t *ords;
	size_t n, cap;
	int count_bytes;
	uint64_t touched;
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

void bfi_result_count_bytes(bfi_result *res, int on)
{
	res->count_bytes = on;
}

uint64_t bfi_result_touched(const bfi_result *res)
{
	return res->touched;
}

/* Room for want ordinals; the result then never reallocates on this snapshot. */
static int reserve(bfi_result *res, size_t want)
{
	if (want <= res->cap)
		return 0;
	uint32_t *p = realloc(res->ords, want * sizeof *p);
	if (p == NULL)
		return -ENOMEM;
	res->ords = p;
	res->cap = want;
	return 0;
}

static int query_flat(const bfi_snapshot *s, bfi_keyhash h, bfi_result *res)
{
	uint32_t k = s->lay.k;
	uint64_t z[BFI_MAX_K];
	const uint8_t *rows[BFI_MAX_K];
	for (uint32_t i = 0; i < k; i++)
		z[i] = bfi_hash_probe(h, i);
	bfi_and_fn and_rows = bfi__and_rows();
	uint64_t *touched = res->count_bytes ? &res->touched : NULL;
	for (uint32_t b = 0; b < s->lay.flat.n_blocks; b++) {
		const struct bfi_rblock *blk = &s->blocks[b];
		for (uint32_t i = 0; i < k; i++)
			rows[i] = blk->rows + bfi_reduce(z[i], blk->m) * blk->row_bytes;
		res->n += and_rows(rows, k, blk->row_bytes / 8, blk->first, blk->n, res->ords + res->n,
		                   touched);
	}
	return 0;
}

static int query_plain(const bfi_snapshot *s, bfi_keyhash h, bfi_result *res)
{
	const struct bfi_plain_desc *p = &s->lay.plain;
	uint64_t pos[BFI_MAX_K];
	for (uint32_t i = 0; i < p->k; i++)
		pos[i] = bfi_hash_pos(h, i, p->m);
	uint64_t lines = 0;
	const uint8_t *f = s->plain;
	for (uint64_t j = 0; j < p->n_sets; j++, f += p->filter_bytes) {
		uint32_t i = 0;
		while (i < p->k && (f[pos[i] / 8] >> (pos[i] % 8) & 1))
			i++;
		lines += i < p->k ? i + 1 : i;
		if (i == p->k)
			res->ords[res->n++] = (uint32_t)j;
	}
	if (res->count_bytes)
		res->touched += lines * 64;
	return 0;
}

int bfi_query_key_layout(const bfi_snapshot *s, unsigned layout, const void *key, size_t len,
                         bfi_result *res)
{
	if (s == NULL || res == NULL || (key == NULL && len != 0))
		return BFI_E_INVALID;
	if ((layout == BFI_LAYOUT_FLAT && s->lay.flat_idx < 0) ||
	    (layout == BFI_LAYOUT_PLAIN && s->lay.plain_idx < 0))
		return BFI_E_NO_LAYOUT;
	if (layout != BFI_LAYOUT_FLAT && layout != BFI_LAYOUT_PLAIN)
		return BFI_E_INVALID;
	int rc = reserve(res, s->lay.n_sets);
	if (rc)
		return rc;
	res->n = 0;
	res->touched = 0;
	bfi_keyhash h = bfi_hash_key(key, len);
	return layout == BFI_LAYOUT_FLAT ? query_flat(s, h, res) : query_plain(s, h, res);
}

int bfi_query_key(const bfi_snapshot *s, const void *key, size_t len, bfi_result *res)
{
	if (s == NULL)
		return BFI_E_INVALID;
	return bfi_query_key_layout(s, s->lay.flat_idx >= 0 ? BFI_LAYOUT_FLAT : BFI_LAYOUT_PLAIN, key,
	                            len, res);
}
