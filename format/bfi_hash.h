/*
 * bfi_hash.h - the canonical key hash and bit-position derivation
 * (spec/format.md, "Key hashing"). Writer and reader must agree on every
 * bit of this, so it lives in format/ and nowhere else.
 */
#ifndef BFI_HASH_H
#define BFI_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "bfi_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The 128-bit key hash: XXH3-128 with seed 0 over the key's bytes. */
typedef struct bfi_keyhash {
	uint64_t h1; /* low 64 bits */
	uint64_t h2; /* high 64 bits */
} bfi_keyhash;

/* Hash one key. Keys are byte strings; an empty key is allowed. */
BFI_API bfi_keyhash bfi_hash_key(const void *key, size_t len);

/*
 * Bit position i (0 <= i < k) of a filter m bits wide:
 *   x = (h1 + i * h2) mod 2^64;  pos = floor(x * m / 2^64).
 * Double hashing, then Lemire's multiply-shift range reduction, so any m
 * works and one key hash serves filters of every width.
 */
static inline uint64_t bfi_hash_pos(bfi_keyhash h, uint32_t i, uint64_t m)
{
	uint64_t x = h.h1 + (uint64_t)i * h.h2;
	return (uint64_t)(((unsigned __int128)x * m) >> 64);
}

/*
 * Write the k positions of key for width m into pos[0..k-1].
 * Returns 0, or BFI_E_INVALID if m == 0, k == 0 or pos is NULL.
 */
BFI_API BFI_MUST_CHECK int bfi_key_positions(const void *key, size_t len, uint64_t m,
                                             uint32_t k, uint64_t *pos);

#ifdef __cplusplus
}
#endif
#endif
