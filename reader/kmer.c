/*
 * kmer.c - canonical k-mers of a DNA sequence, for genome queries: the
 * lesser of each k-mer and its reverse complement, in ACGT order, the
 * same convention as ../shared/data/kmers.c so that queries meet the keys
 * genome sets were built from.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi.h"

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

int bfi_kmers(const char *seq, size_t len, unsigned k, char **out, size_t *count)
{
	if (out == NULL || count == NULL || k < 1 || k > 32 || (seq == NULL && len))
		return BFI_E_INVALID;
	*out = NULL;
	*count = 0;
	uint64_t mask = k == 32 ? ~0ull : (1ull << (2 * k)) - 1;
	unsigned shift = 2 * (k - 1);
	size_t cap = len >= k ? len - k + 1 : 0;
	uint64_t *codes = malloc((cap ? cap : 1) * sizeof *codes);
	if (codes == NULL)
		return -ENOMEM;
	size_t n = 0;
	uint64_t fw = 0, rv = 0;
	unsigned run = 0;
	for (size_t i = 0; i < len; i++) {
		int c = base_code(seq[i]);
		if (c < 0) {
			run = 0; /* any other byte breaks k-mers */
			continue;
		}
		fw = ((fw << 2) | (uint64_t)c) & mask;
		rv = (rv >> 2) | ((uint64_t)(3 - c) << shift);
		if (++run >= k)
			codes[n++] = fw < rv ? fw : rv;
	}
	/* Keep the first appearance of each: a small open-addressing set. */
	size_t slots = 16;
	while (slots < 2 * n)
		slots *= 2;
	uint64_t *set = calloc(slots, sizeof *set);
	char *o = malloc(n * k + 1);
	if (set == NULL || o == NULL) {
		free(codes);
		free(set);
		free(o);
		return -ENOMEM;
	}
	static const char B[4] = {'A', 'C', 'G', 'T'};
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t key = codes[i] + 1; /* 0 marks an empty slot */
		size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 7) & (slots - 1);
		while (set[h] && set[h] != key)
			h = (h + 1) & (slots - 1);
		if (set[h])
			continue;
		set[h] = key;
		for (unsigned j = 0; j < k; j++)
			o[m * k + j] = B[(codes[i] >> (2 * (k - 1 - j))) & 3];
		m++;
	}
	free(codes);
	free(set);
	*out = o;
	*count = m;
	return 0;
}
