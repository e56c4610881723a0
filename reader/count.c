/*
 * count.c - threshold counting on dense words: add a word's bits to its 64
 * sets' (or nodes') counts, and find which of 64 counts are below a floor,
 * eight lanes at a time with AVX2 where the CPU has it.
 *
 * A read shared by many sets (a plasmid in a third of a pan-genome) sets
 * most bits of every word, and adding them one bit at a time costs a
 * dependent load and store a bit; the lanes cost the same for any number.
 * The callers (layout.h, bfi__count_bits and bfi__still_alive64) take this
 * path only for words with many bits set.
 *
 * And a level's ones a node (bfi_tree_level, for inspect and bfi serve):
 * a row's words added into eight bit planes, a binary counter a bit.
 */
#include "internal.h"
#include "layout.h"

static void count_word_portable(uint32_t *count, uint64_t acc)
{
	for (; acc; acc &= acc - 1)
		count[__builtin_ctzll(acc)]++;
}

static uint64_t below_portable(const uint32_t *count, uint32_t floor)
{
	uint64_t below = 0;
	for (unsigned b = 0; b < 64; b++)
		below |= (uint64_t)(count[b] < floor) << b;
	return below;
}

/* Add word c into plane i of word w's counters (planes[i * words + w]), carries upward. */
static inline void plane_add(uint64_t *planes, size_t words, size_t w, uint64_t c)
{
	for (unsigned i = 0; c && i < BFI_PLANES; i++) {
		uint64_t carry = planes[i * words + w] & c;
		planes[i * words + w] ^= c;
		c = carry;
	}
}

static void planes_portable(uint64_t *planes, const uint8_t *row, size_t words)
{
	for (size_t w = 0; w < words; w++)
		plane_add(planes, words, w, bfi_get64(row + w * 8));
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
#include <immintrin.h>

static int lanes = -1; /* 1: AVX2, 0: portable, -1: not yet asked */

/*
 * The lanes are used where the AVX2 kernel is (bfi__and_rows: the CPU has
 * it, and BFI_KERNEL=portable does not say otherwise), asked once: a dense
 * word's count is too short a job to ask each time.
 */
static int use_lanes(void)
{
	int on = __atomic_load_n(&lanes, __ATOMIC_RELAXED);
	if (on < 0) {
		on = bfi__and_rows() == bfi__and_rows_avx2;
		__atomic_store_n(&lanes, on, __ATOMIC_RELAXED);
	}
	return on;
}

/* planes_portable, four words at a time, every plane (no branch on the carry) */
__attribute__((target("avx2"))) static void planes_avx2(uint64_t *planes, const uint8_t *row,
                                                         size_t words)
{
	size_t w = 0;
	for (; w + 4 <= words; w += 4) {
		__m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(row + w * 8));
		for (unsigned i = 0; i < BFI_PLANES; i++) {
			__m256i *p = (__m256i *)(void *)(planes + i * words + w);
			__m256i v = _mm256_loadu_si256(p);
			_mm256_storeu_si256(p, _mm256_xor_si256(v, c));
			c = _mm256_and_si256(v, c);
		}
	}
	for (; w < words; w++) /* the last words */
		plane_add(planes, words, w, bfi_get64(row + w * 8));
}

__attribute__((target("avx2"))) static void count_word_avx2(uint32_t *count, uint64_t acc)
{
	const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
	for (unsigned b = 0; b < 8; b++, acc >>= 8) {
		if ((acc & 0xff) == 0)
			continue;
		__m256i v = _mm256_set1_epi32((int)(acc & 0xff));
		__m256i on = _mm256_cmpeq_epi32(_mm256_and_si256(v, bit), bit); /* -1 where set */
		__m256i *c = (__m256i *)(void *)(count + 8 * b);
		_mm256_storeu_si256(c, _mm256_sub_epi32(_mm256_loadu_si256(c), on));
	}
}

__attribute__((target("avx2"))) static uint64_t below_avx2(const uint32_t *count, uint32_t floor)
{
	/* counts and floors are at most a query's terms, far below 2^31: a signed compare */
	const __m256i f = _mm256_set1_epi32((int)floor);
	uint64_t below = 0;
	for (unsigned b = 0; b < 8; b++) {
		__m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(count + 8 * b));
		unsigned m = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(f, c)));
		below |= (uint64_t)m << (8 * b);
	}
	return below;
}

void bfi__count_word(uint32_t *count, uint64_t acc)
{
	if (use_lanes())
		count_word_avx2(count, acc);
	else
		count_word_portable(count, acc);
}

uint64_t bfi__count_below(const uint32_t *count, uint32_t floor)
{
	return use_lanes() ? below_avx2(count, floor) : below_portable(count, floor);
}

void bfi__count_planes(uint64_t *planes, const uint8_t *row, size_t words)
{
	if (use_lanes())
		planes_avx2(planes, row, words);
	else
		planes_portable(planes, row, words);
}
#else
void bfi__count_word(uint32_t *count, uint64_t acc)
{
	count_word_portable(count, acc);
}

uint64_t bfi__count_below(const uint32_t *count, uint32_t floor)
{
	return below_portable(count, floor);
}

void bfi__count_planes(uint64_t *planes, const uint8_t *row, size_t words)
{
	planes_portable(planes, row, words);
}
#endif

void bfi__planes_out(uint64_t *planes, size_t words, uint64_t *ones)
{
	for (unsigned i = 0; i < BFI_PLANES; i++)
		for (size_t w = 0; w < words; w++) {
			for (uint64_t x = planes[i * words + w]; x; x &= x - 1)
				ones[w * 64 + (size_t)__builtin_ctzll(x)] += UINT64_C(1) << i;
			planes[i * words + w] = 0;
		}
}
