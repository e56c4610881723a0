/* plain.c - the plain section (spec/format.md, "Plain section"): its descriptor, and its check. */
#include <stddef.h>
#include <string.h>

#include "bfi_error.h"
#include "fields.h"
#include "format.h"
#include "layouts.h"

static const struct field plain_fields[] = {
	FIELD(struct bfi_plain_desc, n_sets, 0),       FIELD(struct bfi_plain_desc, m, 8),
	FIELD(struct bfi_plain_desc, k, 16),           FIELD(struct bfi_plain_desc, hash_id, 20),
	FIELD(struct bfi_plain_desc, filter_bytes, 24), FIELD(struct bfi_plain_desc, filters_offset, 32),
};

void bfi_plain_desc_encode(uint8_t out[BFI_PLAIN_DESC_SIZE], const struct bfi_plain_desc *d)
{
	ENCODE(out, BFI_PLAIN_DESC_SIZE, plain_fields, d);
}

int bfi_plain_decode(const uint8_t *in, uint64_t size, struct bfi_plain_desc *d,
                     struct bfi_where *where)
{
	*where = (struct bfi_where){0, BFI_PLAIN_DESC_SIZE, "plain descriptor"};
	if (size < BFI_PLAIN_DESC_SIZE)
		return BFI_E_BAD_LAYOUT;
	if (!DECODE(in, BFI_PLAIN_DESC_SIZE, plain_fields, d))
		return BFI_E_RESERVED;
	if (d->hash_id != BFI_HASH_XXH3_MIX)
		return BFI_E_INCOMPAT;
	uint64_t bytes;
	if (d->n_sets == 0 || d->n_sets > BFI_MAX_SETS || d->m == 0 || d->m > BFI_MAX_BITS ||
	    d->k == 0 || d->k > BFI_MAX_K || d->filter_bytes != bfi_word_bytes(d->m) ||
	    d->filters_offset != BFI_PLAIN_DESC_SIZE ||
	    __builtin_mul_overflow(d->n_sets, d->filter_bytes, &bytes) ||
	    size - BFI_PLAIN_DESC_SIZE != bytes)
		return BFI_E_BAD_LAYOUT;
	return 0;
}

/* Its descriptor: 64 bytes. */
uint64_t bfi_plain_head(const uint8_t desc[64])
{
	(void)desc;
	return BFI_PLAIN_DESC_SIZE;
}
