/*
 * transpose.c - turn per-set filters into bit-sliced rows (spec/format.md,
 * "Flat section"): 64 filters at a time, a 64 x 64-bit tile at a time, so
 * that both the filters' words and the rows' words are read and written
 * in order.
 */
#include "layout.h"

void transpose64(uint64_t a[64])
{
	/*
	 * Swap the off-diagonal blocks of each 2j x 2j block (rows k < j with
	 * columns >= j against rows >= j with columns < j, position for
	 * position), for j = 32 down to 1: the blocks' own transposes follow
	 * from the smaller j.
	 */
	uint64_t m = 0x00000000ffffffffull;
	for (unsigned j = 32; j != 0; j >>= 1, m ^= m << j)
		for (unsigned k = 0; k < 64; k = ((k | j) + 1) & ~j) {
			uint64_t t = ((a[k] >> j) ^ a[k | j]) & m;
			a[k] ^= t << j;
			a[k | j] ^= t;
		}
}

void transpose_slice(const uint64_t *filt, uint64_t words, uint32_t n, uint64_t w, uint64_t out[64])
{
	for (uint32_t c = 0; c < 64; c++)
		out[c] = c < n ? filt[(uint64_t)c * words + w] : 0;
	transpose64(out);
}

/*
 * OR the low bits of v into the bit string rows (8-byte aligned) from bit
 * `at`; atomically if another thread may OR into the same words.
 */
static inline void put_bits(uint8_t *rows, uint64_t at, uint64_t v, int shared)
{
	uint64_t *p = (uint64_t *)(void *)(rows + at / 64 * 8);
	unsigned s = (unsigned)(at % 64);
	uint64_t lo = htole64(v << s), hi = s ? htole64(v >> (64 - s)) : 0;
	if (shared) {
		__atomic_fetch_or(p, lo, __ATOMIC_RELAXED);
		if (hi)
			__atomic_fetch_or(p + 1, hi, __ATOMIC_RELAXED);
	} else {
		p[0] |= lo;
		if (hi)
			p[1] |= hi;
	}
}

void transpose_filters(const uint64_t *filt, uint64_t words, uint32_t n, uint64_t m,
                       uint8_t *rows, const struct rowmap *rm, uint64_t col, int shared)
{
	transpose_filters_part(filt, words, n, m, rows, rm, col, shared, 0, words);
}

void transpose_filters_part(const uint64_t *filt, uint64_t words, uint32_t n, uint64_t m,
                            uint8_t *rows, const struct rowmap *rm, uint64_t col, int shared,
                            uint64_t w0, uint64_t w1)
{
	uint64_t tile[64];
	if (n == 1 && col == 0 && rm->q == 0 && rm->row_bits == 1) {
		/* a lone set's rows of one bit: its filter's bits as they are */
		for (uint64_t w = w0; w < w1; w++)
			if (filt[w])
				put_bits(rows, w * 64, filt[w], shared);
		return;
	}
	for (uint64_t w = w0; w < w1; w++) {
		transpose_slice(filt, words, n, w, tile);
		uint64_t r0 = w * 64;
		if (rm->q == 0) {
			for (uint32_t r = 0; r < 64 && r0 + r < m; r++)
				if (tile[r])
					put_bits(rows, (r0 + r) * rm->row_bits + col, tile[r], shared);
			continue;
		}
		/* a grouped run's rows: the group and the row in it counted on, not divided out */
		uint64_t g = r0 / rm->q, j = r0 % rm->q;
		for (uint32_t r = 0; r < 64 && r0 + r < m; r++) {
			if (tile[r])
				put_bits(rows, g * rm->group_bits + rm->seg + j * rm->row_bits + col, tile[r],
				         shared);
			if (++j == rm->q)
				j = 0, g++;
		}
	}
}

void slice_into_rows(const uint64_t *slice, uint64_t count, uint8_t *rows, uint64_t row_bits,
                     uint64_t col)
{
	for (uint64_t r = 0; r < count; r++)
		if (slice[r])
			put_bits(rows, r * row_bits + col, le64toh(slice[r]), 0);
}
