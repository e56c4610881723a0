/*
 * kmer.c - k-mer keys (bfi_hash.h, spec/format.md "k-mer keys"), shared by
 * the writer's sequence input and the reader's k-mer queries so that a
 * k-mer has one key whichever way it comes.
 */
#include <string.h>

#include "bfi_hash.h"

static const char BASES[4] = {'A', 'C', 'G', 'T'};

static int base_code(char c)
{
	switch (c) {
	case 'A': case 'a': return 0;
	case 'C': case 'c': return 1;
	case 'G': case 'g': return 2;
	case 'T': case 't': return 3;
	default: return -1;
	}
}

static inline uint64_t rol(uint64_t x, unsigned r)
{
	r &= 63;
	return r ? x << r | x >> (64 - r) : x;
}

static inline uint64_t ror(uint64_t x, unsigned r)
{
	r &= 63;
	return r ? x >> r | x << (64 - r) : x;
}

/* The seed of base b (0..3): the SplitMix64 finalizer of (b + 1) * 2^64/phi. */
static uint64_t seed(int b)
{
	return bfi_hash_mix(0x9e3779b97f4a7c15ull * (uint64_t)(b + 1));
}

/*
 * The k bases of 2-bit code c (first base in the highest bits) as letters,
 * four at a time from a table of every byte's four: a base at a time took
 * a seventh of the time of threshold queries of 150-bp reads.
 */
#define FOUR1(p) p "A", p "C", p "G", p "T"
#define FOUR2(p) FOUR1(p "A"), FOUR1(p "C"), FOUR1(p "G"), FOUR1(p "T")
#define FOUR3(p) FOUR2(p "A"), FOUR2(p "C"), FOUR2(p "G"), FOUR2(p "T")
static const char FOUR[256][4] = {FOUR3("A"), FOUR3("C"), FOUR3("G"), FOUR3("T")};

static void spell(uint64_t c, unsigned k, char *key)
{
	unsigned j = 0;
	for (; j + 4 <= k; j += 4)
		memcpy(key + j, FOUR[(c >> (2 * (k - 4 - j))) & 0xff], 4);
	for (; j < k; j++)
		key[j] = BASES[(c >> (2 * (k - 1 - j))) & 3];
}

/* k <= 32: 2-bit codes of both strands, the lesser spelled out. */
static int short_keys(const char *seq, size_t len, unsigned k, bfi_kmer_fn fn, void *ctx)
{
	uint64_t mask = k == 32 ? ~0ull : (1ull << (2 * k)) - 1, fw = 0, rv = 0;
	unsigned shift = 2 * (k - 1), run = 0;
	char key[32];
	for (size_t i = 0; i < len; i++) {
		int b = base_code(seq[i]);
		if (b < 0) {
			run = 0;
			continue;
		}
		fw = ((fw << 2) | (uint64_t)b) & mask;
		rv = (rv >> 2) | ((uint64_t)(3 - b) << shift);
		if (++run < k)
			continue;
		uint64_t c = fw < rv ? fw : rv;
		spell(c, k, key);
		int rc = fn(ctx, key, k);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * k > 32: rolling hashes of both strands. For bases x_0 .. x_{k-1},
 *   F = XOR_j rol(s[x_j], k - 1 - j),   R = XOR_j rol(s[3 - x_j], j),
 * and the key is min(F, R). Sliding one base (x_0 out, x_k in):
 *   F' = rol(F, 1) ^ rol(s[x_0], k) ^ s[x_k]
 *   R' = ror(R ^ s[3 - x_0], 1) ^ rol(s[3 - x_k], k - 1)
 */
static int long_keys(const char *seq, size_t len, unsigned k, bfi_kmer_fn fn, void *ctx)
{
	uint64_t s[4] = {seed(0), seed(1), seed(2), seed(3)}, F = 0, R = 0;
	unsigned run = 0;
	for (size_t i = 0; i < len; i++) {
		int b = base_code(seq[i]);
		if (b < 0) {
			run = 0;
			F = R = 0;
			continue;
		}
		if (run < k) { /* filling the first window of a run */
			F = rol(F, 1) ^ s[b];
			R ^= rol(s[3 - b], run);
			run++;
		} else {
			int out = base_code(seq[i - k]); /* inside the run: a base */
			F = rol(F, 1) ^ rol(s[out], k) ^ s[b];
			R = ror(R ^ s[3 - out], 1) ^ rol(s[3 - b], k - 1);
		}
		if (run < k)
			continue;
		uint64_t c = F < R ? F : R;
		char key[8];
		for (int j = 0; j < 8; j++)
			key[j] = (char)(c >> (8 * j));
		int rc = fn(ctx, key, 8);
		if (rc)
			return rc;
	}
	return 0;
}

int bfi_kmer_keys(const char *seq, size_t len, unsigned k, bfi_kmer_fn fn, void *ctx)
{
	if (k < 1 || k > BFI_KMER_MAX || fn == 0 || (seq == 0 && len))
		return BFI_E_INVALID;
	return k <= 32 ? short_keys(seq, len, k, fn, ctx) : long_keys(seq, len, k, fn, ctx);
}

/* Is c one of the twenty amino acids' letters (either case)? Its upper case, else 0. */
static char amino(char c)
{
	char u = (char)(c >= 'a' && c <= 'z' ? c - 32 : c);
	switch (u) {
	case 'A': case 'C': case 'D': case 'E': case 'F': case 'G': case 'H': case 'I': case 'K':
	case 'L': case 'M': case 'N': case 'P': case 'Q': case 'R': case 'S': case 'T': case 'V':
	case 'W': case 'Y': return u;
	default: return 0;
	}
}

int bfi_protein_keys(const char *seq, size_t len, unsigned k, bfi_kmer_fn fn, void *ctx)
{
	if (k < 1 || k > BFI_KMER_MAX || fn == 0 || (seq == 0 && len))
		return BFI_E_INVALID;
	char key[BFI_KMER_MAX];
	unsigned run = 0;
	for (size_t i = 0; i < len; i++) {
		char a = amino(seq[i]);
		if (a == 0) {
			run = 0;
			continue;
		}
		/* the window's letters, the newest last */
		if (run < k) {
			key[run++] = a;
		} else {
			memmove(key, key + 1, k - 1);
			key[k - 1] = a;
		}
		if (run == k) {
			int rc = fn(ctx, key, k);
			if (rc)
				return rc;
		}
	}
	return 0;
}
