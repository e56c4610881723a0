/*
 * group.c - threshold queries over a grouped run (spec/format.md,
 * "Grouped blocks") a term at a time for all its blocks: each of a term's
 * probes falls in one group of the run, the same for every block, so one
 * line is asked for and every block's row is taken from it with a load
 * and a shift. Answered block by block, as other blocks are, the run
 * would cost a pass over the terms for each of its blocks. Keys likewise:
 * a key's sets in the run from its k lines, one a probe. A run of at most
 * 8 blocks in one line a group (struct bfi_gvec) takes each line into two
 * AVX2 registers and every block's row from them at once, a lane a block.
 */
#include <string.h>

#include "flat.h"

#if defined(__x86_64__) && BFI_HAVE_AVX2
#include <immintrin.h>
#endif

int bfi__group_fast(const struct bfi_rblock *b0)
{
	if (b0->run_n < 2 || b0->run_n > BFI_GROUP_FAST_BLOCKS)
		return 0;
	for (uint32_t i = 0; i < b0->run_n; i++)
		if (b0[i].n > 57) /* a row in one 8-byte load, whatever its shift */
			return 0;
	return 1;
}

int bfi__group_lanes_fit(const struct bfi_rblock *b0)
{
	if (b0->run_n < 2 || b0->run_n > BFI_GVEC_LANES || b0->group_bits != 512 ||
	    bfi__run_sets(b0) > 64)
		return 0;
	for (uint32_t b = 0; b < b0->run_n; b++)
		if (b0[b].n > 32)
			return 0;
	return 1;
}

void bfi__group_lanes(const struct bfi_rblock *b0, struct bfi_gvec *v)
{
	memset(v, 0, sizeof *v);
	for (uint32_t b = 0; b < b0->run_n; b++) {
		v->q[b] = b0[b].q;
		v->n[b] = b0[b].n;
		v->seg[b] = b0[b].seg;
		v->mask[b] = (UINT64_C(1) << b0[b].n) - 1;
		v->shl[b] = b0[b].first - b0->first;
	}
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
/*
 * Four blocks' rows for one probe, in lanes, from its line in l0 and l1:
 * the row r = floor(lo q / 2^64) from 32-bit products, exact since q <
 * 2^32 (its field's 32 bits): with lo = hi 2^32 + low, floor(lo q / 2^32) = hi q + floor(low q /
 * 2^32), which fits 64 bits, and r is that over 2^32. Then its bit
 * p = seg + r n, then the line's 32-bit words p / 32 and p / 32 + 1 as
 * one lane (a row of at most 32 bits lies in them) shifted by p mod 32.
 * Word 16, past the line, comes back as another word; it only ever
 * holds bits past the row, which the lane's mask clears.
 */
__attribute__((target("avx2"))) static inline __m256i
lanes_rows(__m256i lo, __m256i hi, __m256i l0, __m256i l1, const uint64_t *q, const uint64_t *n,
           const uint64_t *seg)
{
	__m256i vq = _mm256_loadu_si256((const __m256i *)q);
	__m256i low = _mm256_srli_epi64(_mm256_mul_epu32(lo, vq), 32);
	__m256i r = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epu32(hi, vq), low), 32);
	__m256i p = _mm256_add_epi64(_mm256_mul_epu32(r, _mm256_loadu_si256((const __m256i *)n)),
	                             _mm256_loadu_si256((const __m256i *)seg));
	__m256i w = _mm256_srli_epi64(p, 5);
	__m256i idx = _mm256_or_si256(w, _mm256_slli_epi64(_mm256_add_epi64(w, _mm256_set1_epi64x(1)), 32));
	__m256i in_hi = _mm256_cmpgt_epi32(idx, _mm256_set1_epi32(7));
	__m256i words = _mm256_blendv_epi8(_mm256_permutevar8x32_epi32(l0, idx),
	                                   _mm256_permutevar8x32_epi32(l1, idx), in_hi);
	return _mm256_srlv_epi64(words, _mm256_and_si256(p, _mm256_set1_epi64x(31)));
}

/* bfi__group_key over a run with lanes (b0->vec): its sets as bits of one word, by first. */
__attribute__((target("avx2"))) static uint64_t key_word_avx2(const struct bfi_rblock *b0,
                                                               const uint64_t *z, uint32_t k)
{
	const struct bfi_gvec *v = b0->vec;
	uint64_t groups = b0->groups;
	__m256i a0 = _mm256_set1_epi64x(-1), a1 = a0;
	for (uint32_t i = 0; i < k; i++) {
		unsigned __int128 t = (unsigned __int128)z[i] * groups;
		const uint8_t *line = b0->rows + (uint64_t)(t >> 64) * 64;
		uint64_t lo = (uint64_t)t;
		__m256i l0 = _mm256_loadu_si256((const __m256i *)line);
		__m256i l1 = _mm256_loadu_si256((const __m256i *)(line + 32));
		__m256i vlo = _mm256_set1_epi64x((long long)lo);
		__m256i vhi = _mm256_set1_epi64x((long long)(lo >> 32));
		a0 = _mm256_and_si256(a0, lanes_rows(vlo, vhi, l0, l1, v->q, v->n, v->seg));
		a1 = _mm256_and_si256(a1, lanes_rows(vlo, vhi, l0, l1, v->q + 4, v->n + 4, v->seg + 4));
	}
	a0 = _mm256_sllv_epi64(_mm256_and_si256(a0, _mm256_loadu_si256((const __m256i *)v->mask)),
	                       _mm256_loadu_si256((const __m256i *)v->shl));
	a1 = _mm256_sllv_epi64(_mm256_and_si256(a1, _mm256_loadu_si256((const __m256i *)(v->mask + 4))),
	                       _mm256_loadu_si256((const __m256i *)(v->shl + 4)));
	__m256i o = _mm256_or_si256(a0, a1);
	__m128i h = _mm_or_si128(_mm256_castsi256_si128(o), _mm256_extracti128_si256(o, 1));
	return (uint64_t)_mm_cvtsi128_si64(_mm_or_si128(h, _mm_unpackhi_epi64(h, h)));
}

/* Does the run beginning at b0 take its lanes here? Not with the portable kernel chosen. */
static inline int lanes_on(const struct bfi_rblock *b0)
{
	return b0->vec && bfi__and_rows() == bfi__and_rows_avx2;
}

#define key_word key_word_avx2
#else
static inline int lanes_on(const struct bfi_rblock *b0)
{
	(void)b0;
	return 0;
}

/* never called: no run takes lanes without AVX2 */
static inline uint64_t key_word(const struct bfi_rblock *b0, const uint64_t *z, uint32_t k)
{
	(void)b0, (void)z, (void)k;
	return 0;
}
#endif

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
	uint64_t groups = b0->groups, gbytes = b0->group_bits / 8;
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
	uint64_t groups = b0->groups, gbytes = b0->group_bits / 8;
	if (gbytes == 64) { /* a line a group, the common case: one request a probe */
		for (uint32_t i = 0; i < k; i++)
			bfi__prefetch(b0->rows + bfi_reduce(z[i], groups) * 64);
		return;
	}
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
	int lanes = lanes_on(b0);
	for (uint32_t t = 0; t < terms; t++) {
		if (t + ahead < terms)
			bfi__group_ask(b0, z + (size_t)(t + ahead) * k, k);
		if (lanes) {
			for (uint64_t w = key_word(b0, z + (size_t)t * k, k); w; w &= w - 1)
				counts[__builtin_ctzll(w)]++;
			continue;
		}
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
	if (lanes_on(b0)) {
		size_t n = 0;
		for (uint64_t w = key_word(b0, z, k); w; w &= w - 1)
			out[n++] = b0->first + (uint32_t)__builtin_ctzll(w);
		return n;
	}
	uint64_t acc[BFI_GROUP_FAST_BLOCKS];
	group_rows(b0, z, k, acc);
	size_t n = 0;
	for (uint32_t b = 0; b < b0->run_n; b++)
		for (uint64_t v = acc[b] & ((UINT64_C(1) << b0[b].n) - 1); v; v &= v - 1)
			out[n++] = b0[b].first + (uint32_t)__builtin_ctzll(v);
	return n;
}
