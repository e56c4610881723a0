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
 * Hash n keys laid end to end in buf: key i is bytes ends[i - 1] ..
 * ends[i] of it (from 0 for key 0), its hash out[i]. For callers that
 * cross into the library once for many keys (the Python module). Returns
 * 0, or BFI_E_INVALID if ends descend or an argument is NULL.
 */
BFI_API BFI_MUST_CHECK int bfi_hash_keys(const void *buf, const size_t *ends, size_t n,
                                         bfi_keyhash *out);

/*
 * Bit position i (0 <= i < k) of a filter m bits wide:
 *   x = (h1 + i * (h2 | 1)) mod 2^64
 *   z = mix(x)          (the SplitMix64 finalizer, below)
 *   pos = floor(z * m / 2^64)
 * Plain double hashing h1 + i*h2 reduced to m collapses the k positions
 * whenever h2 is within 2^64/m of a multiple of 2^64/j for small j, and
 * such keys then match a large share of all sets; mixing each x_i makes
 * the k positions behave as independent. Lemire's multiply-shift range
 * reduction then works for any m, so one key hash serves every width.
 */
static inline uint64_t bfi_hash_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Probe i of a key, before range reduction; the same for every width. */
static inline uint64_t bfi_hash_probe(bfi_keyhash h, uint32_t i)
{
	return bfi_hash_mix(h.h1 + (uint64_t)i * (h.h2 | 1));
}

/* Lemire's multiply-shift: floor(z * m / 2^64), a position in [0, m). */
static inline uint64_t bfi_reduce(uint64_t z, uint64_t m)
{
	return (uint64_t)(((unsigned __int128)z * m) >> 64);
}

static inline uint64_t bfi_hash_pos(bfi_keyhash h, uint32_t i, uint64_t m)
{
	return bfi_reduce(bfi_hash_probe(h, i), m);
}

/*
 * Line pre-filters (spec/format.md, "Flat section", flags bit 1): a key's
 * k bits lie in one 512-bit cache line, so a probe is one load. Its line is
 * probe 0 reduced to the pre_m / 512 lines; bit i of the line is the low 9
 * bits of probe i (the reduction takes the high bits, so the two agree
 * with nothing). Returns the key's first bit: line * 512.
 */
static inline uint64_t bfi_pre_line(uint64_t z0, uint64_t pre_m)
{
	return bfi_reduce(z0, pre_m / 512) * 512;
}

static inline uint32_t bfi_pre_bit(uint64_t zi)
{
	return (uint32_t)(zi & 511);
}

/* Bit i of key h in a pre-filter of pre_m bits: in its line if line, else pos_i(pre_m). */
static inline uint64_t bfi_pre_pos(bfi_keyhash h, uint32_t i, uint64_t pre_m, int line)
{
	if (line)
		return bfi_pre_line(bfi_hash_probe(h, 0), pre_m) + bfi_pre_bit(bfi_hash_probe(h, i));
	return bfi_hash_pos(h, i, pre_m);
}

/*
 * The RAMBO partition (spec/format.md, "RAMBO section"): the cell of the
 * set called name in repetition r, of cells cells cut into shards shards
 * (the paper's two-level hash): shard XXH3-64(name, seed 0x52414d42) mod
 * shards, then XXH3-64(name, seed r + 1) mod (cells / shards) within it.
 */
BFI_API uint32_t bfi_rambo_cell(const void *name, size_t len, uint32_t r, uint64_t cells,
                                uint32_t shards);

/*
 * Write the k positions of key for width m into pos[0..k-1].
 * Returns 0, or BFI_E_INVALID if m == 0, k == 0 or pos is NULL.
 */
BFI_API BFI_MUST_CHECK int bfi_key_positions(const void *key, size_t len, uint64_t m,
                                             uint32_t k, uint64_t *pos);

/*
 * k-mer keys (spec/format.md, "k-mer keys"). For 1 <= k <= 32 a k-mer's key
 * is its canonical form spelled in k upper-case letters; for 33 <= k <=
 * BFI_KMER_MAX it is the 8 little-endian bytes of the lesser of two rolling
 * hashes, the k-mer's and its reverse complement's.
 */
#define BFI_KMER_MAX 255u
static inline unsigned bfi_kmer_key_len(unsigned k)
{
	return k <= 32 ? k : 8;
}
/* Called with each k-mer's key; a nonzero return stops and is returned. */
typedef int (*bfi_kmer_fn)(void *ctx, const char *key, size_t len);
/*
 * Every k-mer key of one record's sequence, in order, repeats included:
 * runs of A, C, G, T (either case); any other byte ends a run. Returns 0,
 * BFI_E_INVALID (k) or what fn returned.
 */
BFI_API int bfi_kmer_keys(const char *seq, size_t len, unsigned k, bfi_kmer_fn fn, void *ctx);
/*
 * Protein k-mer keys (spec/format.md, "Protein k-mer keys"), 1 <= k <=
 * BFI_KMER_MAX: every window of k amino-acid letters of one record's
 * sequence, in order, repeats included: runs of the twenty letters
 * ACDEFGHIKLMNPQRSTVWY (either case); any other byte (X, B, Z, J, U, O,
 * *, -) ends a run. A key is its k letters in upper case: a protein has
 * one strand. Returns 0, BFI_E_INVALID (k) or what fn returned.
 */
BFI_API int bfi_protein_keys(const char *seq, size_t len, unsigned k, bfi_kmer_fn fn,
                             void *ctx);

#ifdef __cplusplus
}
#endif
#endif
