/* hash.c - the canonical key hash (spec/format.md, "Key hashing"). */
/* libxxhash's header, its functions inlined here: a key of a k-mer's length
 * hashes in a third less time than through the shared library's call */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bfi_hash.h"

bfi_keyhash bfi_hash_key(const void *key, size_t len)
{
	XXH128_hash_t h = XXH3_128bits(len ? key : "", len);
	bfi_keyhash out = {h.low64, h.high64};
	return out;
}

int bfi_hash_keys(const void *buf, const size_t *ends, size_t n, bfi_keyhash *out)
{
	if (n && (ends == NULL || out == NULL || (buf == NULL && ends[n - 1] != 0)))
		return BFI_E_INVALID;
	const char *p = buf ? buf : "";
	size_t from = 0;
	for (size_t i = 0; i < n; i++) {
		if (ends[i] < from)
			return BFI_E_INVALID;
		out[i] = bfi_hash_key(p + from, ends[i] - from);
		from = ends[i];
	}
	return 0;
}

int bfi_key_positions(const void *key, size_t len, uint64_t m, uint32_t k, uint64_t *pos)
{
	if (m == 0 || k == 0 || pos == NULL || (key == NULL && len != 0))
		return BFI_E_INVALID;
	bfi_keyhash h = bfi_hash_key(key, len);
	for (uint32_t i = 0; i < k; i++)
		pos[i] = bfi_hash_pos(h, i, m);
	return 0;
}

uint32_t bfi_rambo_cell(const void *name, size_t len, uint32_t r, uint64_t cells, uint32_t shards)
{
	const void *p = len ? name : "";
	uint64_t per = cells / shards;
	uint64_t shard = XXH3_64bits_withSeed(p, len, 0x52414d42ull) % shards;
	return (uint32_t)(shard * per + XXH3_64bits_withSeed(p, len, (uint64_t)r + 1) % per);
}
