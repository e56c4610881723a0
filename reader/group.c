/*
 * group.c - threshold queries over a grouped run (spec/format.md,
 * "Grouped blocks") a term at a time for all its blocks: each of a term's
 * probes falls in one group of the run, the same for every block, so one
 * line is asked for and every block's row is taken from it with a load
 * and a shift. Answered block by block, as other blocks are, the run
 * would cost a pass over the terms for each of its blocks. Keys likewise:
 * a key's sets in the run from its k lines, one a probe.
 */
#include <string.h>

#include "flat.h"

int bfi__group_fast(const struct bfi_rblock *b0)
{
	if (b0->run_n < 2 || b0->run_n > BFI_GROUP_FAST_BLOCKS)
		return 0;
	for (uint32_t i = 0; i < b0->run_n; i++)
		if (b0[i].n > 57) /* a row in one 8-byte load, whatever its shift */
			return 0;
	return 1;
}

#define AHEAD 24 /* probes whose lines are asked for before they are read: enough to arrive in time */

/*
 * The acc of each block of the run for the k probes z: its rows ANDed.
 * Since every block's m is G q_b, a probe's row within its group, the
 * row floor(z G q_b / 2^64) less g q_b, is floor(lo q_b / 2^64), where g
 * and lo are the high and low halves of z G: one product a block.
 */
static inline void group_rows(const struct bfi_rblock *b0, const uint64_t *z, uint32_t k,
                              uint64_t *acc)
{
	uint32_t nb = b0->run_n;
	uint64_t groups = b0->m / b0->q, gbytes = b0->group_bits / 8;
	for (uint32_t b = 0; b < nb; b++)
		acc[b] = ~UINT64_C(0);
	for (uint32_t i = 0; i < k; i++) {
		unsigned __int128 t = (unsigned __int128)z[i] * groups;
		uint64_t g = (uint64_t)(t >> 64), lo = (uint64_t)t;
		const uint8_t *line = b0->rows + g * gbytes;
		for (uint32_t b = 0; b < nb; b++) {
			const struct bfi_rblock *blk = &b0[b];
			uint64_t bit = blk->seg + bfi_reduce(lo, blk->q) * blk->n, v;
			uint64_t at = bit / 8 < gbytes - 8 ? bit / 8 : gbytes - 8;
			memcpy(&v, line + at, 8);
			acc[b] &= le64toh(v) >> (bit - 8 * at);
		}
	}
}

void bfi__group_ask(const struct bfi_rblock *b0, const uint64_t *z, uint32_t k)
{
	uint64_t groups = b0->m / b0->q, gbytes = b0->group_bits / 8;
	for (uint32_t i = 0; i < k; i++) {
		const uint8_t *at = b0->rows + bfi_reduce(z[i], groups) * gbytes;
		for (uint64_t y = 0; y < gbytes; y += 64)
			bfi__prefetch(at + y);
	}
}

void bfi__group_terms(const struct bfi_rblock *b0, const uint64_t *z, uint32_t terms, uint32_t k,
                      uint32_t *counts)
{
	uint32_t ahead = (AHEAD + k - 1) / k; /* terms */
	for (uint32_t t = 0; t < ahead && t < terms; t++)
		bfi__group_ask(b0, z + (size_t)t * k, k);
	uint64_t acc[BFI_GROUP_FAST_BLOCKS];
	for (uint32_t t = 0; t < terms; t++) {
		if (t + ahead < terms)
			bfi__group_ask(b0, z + (size_t)(t + ahead) * k, k);
		group_rows(b0, z + (size_t)t * k, k, acc);
		for (uint32_t b = 0; b < b0->run_n; b++) {
			uint32_t *c = counts + (b0[b].first - b0->first);
			for (uint64_t v = acc[b] & ((UINT64_C(1) << b0[b].n) - 1); v; v &= v - 1)
				c[__builtin_ctzll(v)]++;
		}
	}
}

size_t bfi__group_key(const struct bfi_rblock *b0, const uint64_t *z, uint32_t k, uint32_t *out)
{
	uint64_t acc[BFI_GROUP_FAST_BLOCKS];
	group_rows(b0, z, k, acc);
	size_t n = 0;
	for (uint32_t b = 0; b < b0->run_n; b++)
		for (uint64_t v = acc[b] & ((UINT64_C(1) << b0[b].n) - 1); v; v &= v - 1)
			out[n++] = b0[b].first + (uint32_t)__builtin_ctzll(v);
	return n;
}
