/* toy.c - the toy layout's descriptor (toy.h), encoded and checked. */
#ifdef BFI_TOY_LAYOUT
#include <string.h>

#include "bfi_error.h"
#include "toy.h"

void bfi_toy_desc_encode(uint8_t out[BFI_TOY_DESC_SIZE], const struct bfi_toy_desc *d)
{
	memset(out, 0, BFI_TOY_DESC_SIZE);
	bfi_put64(out, d->n_sets);
	bfi_put64(out + 8, d->m);
	bfi_put32(out + 16, d->k);
	bfi_put32(out + 20, d->hash_id);
	bfi_put64(out + 24, d->filter_bytes);
	bfi_put64(out + 32, d->filters_offset);
	bfi_put32(out + 40, d->scale);
}

int bfi_toy_decode(const uint8_t *in, uint64_t size, struct bfi_toy_desc *d,
                   struct bfi_where *where)
{
	*where = (struct bfi_where){0, BFI_TOY_DESC_SIZE, "toy descriptor"};
	if (size < BFI_TOY_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	for (unsigned i = 44; i < BFI_TOY_DESC_SIZE; i++)
		if (in[i])
			return BFI_E_RESERVED;
	*d = (struct bfi_toy_desc){bfi_get64(in), bfi_get64(in + 8), bfi_get32(in + 16),
	                           bfi_get32(in + 20), bfi_get64(in + 24), bfi_get64(in + 32),
	                           bfi_get32(in + 40)};
	if (d->hash_id != BFI_HASH_XXH3_MIX)
		return BFI_E_INCOMPAT;
	uint64_t bytes;
	if (d->n_sets == 0 || d->n_sets > BFI_MAX_SETS || d->m == 0 || d->m > BFI_MAX_BITS ||
	    d->k == 0 || d->k > BFI_MAX_K || d->filter_bytes != bfi_word_bytes(d->m) ||
	    d->filters_offset != BFI_TOY_DESC_SIZE || d->scale == 0 || d->scale > BFI_TOY_MAX_SCALE ||
	    __builtin_mul_overflow(d->n_sets, d->filter_bytes, &bytes) ||
	    size - BFI_TOY_DESC_SIZE != bytes)
		return BFI_E_BAD_LAYOUT;
	return 0;
}

uint64_t bfi_toy_head(const uint8_t desc[64])
{
	(void)desc;
	return BFI_TOY_DESC_SIZE;
}
#endif
