/*
 * line.h - the kernels' work on one 64-byte line of a flat block's rows:
 * AND the k rows' lines and list the bits left set. kernel.c streams long
 * rows through these; the pipeline over short rows (pipe.c) inlines them,
 * since a call per query measurably slows a batch of k-mers.
 */
#ifndef BFI_READER_LINE_H
#define BFI_READER_LINE_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BFI_LINE_WORDS 8

/* List the set bits of w (bits bit0 .. bit0 + 63 of a row) below limit, as base + bit. */
static inline size_t bfi__emit(uint64_t w, uint64_t bit0, uint32_t base, uint32_t limit,
                               uint32_t *out, size_t n)
{
	while (w) {
		uint64_t j = bit0 + (uint64_t)__builtin_ctzll(w);
		/* Padding bits are zero in a good file; never report them anyway. */
		if (j < limit)
			out[n++] = base + (uint32_t)j;
		w &= w - 1;
	}
	return n;
}

/*
 * Copy a packed row (spec/format.md, "Flat section"): the n bits from bit
 * `bit` of rows, to the words bytes / 8 at dst (whole lines, which the
 * kernels read), the words past the row's last bit zero. Reads whole
 * words up to 8 bytes past the row's last bit, which a packed block's
 * trailing 64 zero bits keep inside the block.
 */
static inline void bfi__unpack_row(const uint8_t *rows, uint64_t bit, uint32_t n, uint64_t *dst,
                                   size_t bytes)
{
	const uint8_t *p = rows + bit / 8;
	unsigned sh = (unsigned)(bit % 8);
	size_t words = (n + 63) / 64;
	for (size_t w = 0; w < words; w++) {
		uint64_t lo;
		memcpy(&lo, p + 8 * w, 8);
		/* the next byte's bits fill the top sh bits; none when sh is 0 */
		uint64_t v = le64toh(lo) >> sh | (uint64_t)p[8 * w + 8] << 1 << (63 - sh);
		if (w + 1 == words && n % 64)
			v &= (UINT64_C(1) << (n % 64)) - 1;
		dst[w] = htole64(v);
	}
	for (size_t w = words; w < bytes / 8; w++)
		dst[w] = 0;
}

/* Does the 64-byte line hold every bit of mask (in file order)? */
static inline int bfi__line_holds(const uint8_t *line, const uint64_t *mask)
{
	uint64_t miss = 0;
	for (uint32_t j = 0; j < BFI_LINE_WORDS; j++) {
		uint64_t v;
		memcpy(&v, line + 8 * j, 8);
		miss |= ~v & mask[j];
	}
	return miss == 0;
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
#include <immintrin.h>

/* AND of rows 0 and 1 (or row 0 alone) at line off, in a and b. */
#define BFI_AND01(off)                                                                             \
	do {                                                                                        \
		a = _mm256_and_si256(_mm256_load_si256((const __m256i *)(r0 + (off))),              \
		                     _mm256_load_si256((const __m256i *)(r1 + (off))));             \
		b = _mm256_and_si256(_mm256_load_si256((const __m256i *)(r0 + (off) + 32)),         \
		                     _mm256_load_si256((const __m256i *)(r1 + (off) + 32)));        \
	} while (0)

/*
 * Finish the line at byte at: AND rows 0 and 1, then row 2 alone, which a
 * sparse line rarely survives, and after it two rows per test (a line
 * that survived three rows is dense), stopping once it is zero; then list
 * its bits. Adds the lines of rows 2.. read to *lines (rows 0 and 1 are
 * the caller's to count); returns the new count n.
 */
__attribute__((target("avx2,bmi"), always_inline)) static inline size_t
bfi__finish_line(const uint8_t *const *rows, uint32_t k, uint32_t first, size_t at, uint32_t base,
                 uint32_t limit, uint32_t *out, size_t n, uint64_t *lines)
{
	const uint8_t *r0 = rows[0], *r1 = rows[first - 1];
	__m256i a, b;
	BFI_AND01(at);
	for (uint32_t i = first; i < k; i += 1 + (i > first)) {
		if (_mm256_testz_si256(_mm256_or_si256(a, b), _mm256_or_si256(a, b)))
			break;
		a = _mm256_and_si256(a, _mm256_load_si256((const __m256i *)(rows[i] + at)));
		b = _mm256_and_si256(b, _mm256_load_si256((const __m256i *)(rows[i] + at + 32)));
		++*lines;
		if (i > first && i + 1 < k) {
			a = _mm256_and_si256(a, _mm256_load_si256((const __m256i *)(rows[i + 1] + at)));
			b = _mm256_and_si256(b, _mm256_load_si256((const __m256i *)(rows[i + 1] + at + 32)));
			++*lines;
		}
	}
	__m256i ab = _mm256_or_si256(a, b);
	if (_mm256_testz_si256(ab, ab))
		return n;
	uint64_t acc[BFI_LINE_WORDS];
	_mm256_storeu_si256((__m256i *)acc, a);
	_mm256_storeu_si256((__m256i *)(acc + 4), b);
	/* words past the block's last set hold only padding */
	uint64_t used = limit > at * 8 ? (limit - at * 8 + 63) / 64 : 0;
	for (uint64_t j = 0; j < BFI_LINE_WORDS && j < used; j++)
		n = bfi__emit(le64toh(acc[j]), at * 8 + j * 64, base, limit, out, n);
	return n;
}

/*
 * The words of a one-line row (a block of at most 512 sets) that may hold
 * sets, as they lie in the file: all ones below bit limit, zeros above,
 * where only padding lies.
 */
static inline void bfi__line_mask(uint32_t limit, uint64_t mask[BFI_LINE_WORDS])
{
	for (uint32_t j = 0; j < BFI_LINE_WORDS; j++)
		mask[j] = htole64(limit >= 64 * (j + 1) ? ~UINT64_C(0)
		                  : limit > 64 * j     ? (UINT64_C(1) << (limit - 64 * j)) - 1
		                                       : 0);
}

/*
 * The line at byte at of k short rows, when no bytes are counted: AND all
 * k lines and mask (bfi__line_mask: the words that may hold sets) without
 * testing between rows, since a batch asked for every line ahead and an
 * early exit would save no memory, then list the bits of the words left
 * non-zero, numbered from base (the set of the line's first bit). Same
 * sets as bfi__finish_line, in fewer instructions: nothing is decided
 * between rows.
 */
__attribute__((target("avx2,bmi"))) static inline size_t
bfi__and_line_avx2(const uint8_t *const *rows, uint32_t k, size_t at, uint32_t base,
                   const uint64_t *mask, uint32_t *out, size_t n)
{
	__m256i a = _mm256_and_si256(_mm256_load_si256((const __m256i *)(rows[0] + at)),
	                             _mm256_loadu_si256((const __m256i *)mask));
	__m256i b = _mm256_and_si256(_mm256_load_si256((const __m256i *)(rows[0] + at + 32)),
	                             _mm256_loadu_si256((const __m256i *)(mask + 4)));
	uint32_t i = 1;
	for (; i + 1 < k; i += 2) {
		a = _mm256_and_si256(
		    a, _mm256_and_si256(_mm256_load_si256((const __m256i *)(rows[i] + at)),
		                        _mm256_load_si256((const __m256i *)(rows[i + 1] + at))));
		b = _mm256_and_si256(
		    b, _mm256_and_si256(_mm256_load_si256((const __m256i *)(rows[i] + at + 32)),
		                        _mm256_load_si256((const __m256i *)(rows[i + 1] + at + 32))));
	}
	if (i < k) {
		a = _mm256_and_si256(a, _mm256_load_si256((const __m256i *)(rows[i] + at)));
		b = _mm256_and_si256(b, _mm256_load_si256((const __m256i *)(rows[i] + at + 32)));
	}
	if (_mm256_testz_si256(_mm256_or_si256(a, b), _mm256_or_si256(a, b)))
		return n;
	uint64_t acc[BFI_LINE_WORDS];
	_mm256_storeu_si256((__m256i *)acc, a);
	_mm256_storeu_si256((__m256i *)(acc + 4), b);
	__m256i zero = _mm256_setzero_si256();
	unsigned za = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(a, zero)));
	unsigned zb = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(b, zero)));
	for (unsigned words = ~(za | zb << 4) & 0xffu; words; words &= words - 1) {
		unsigned j = (unsigned)__builtin_ctz(words);
		uint64_t w = le64toh(acc[j]);
		uint32_t first = base + 64 * j;
		do
			out[n++] = first + (uint32_t)__builtin_ctzll(w);
		while (w &= w - 1);
	}
	return n;
}

/*
 * Short rows, when no bytes are counted: each line through
 * bfi__and_line_avx2, whole but for the last, whose words that may hold
 * sets are last (bfi__line_mask).
 */
__attribute__((target("avx2,bmi"))) static inline size_t
bfi__and_short_all_avx2(const uint8_t *const *rows, uint32_t k, size_t bytes, uint32_t base,
                        const uint64_t *last, uint32_t *out, size_t n)
{
	static const uint64_t whole[BFI_LINE_WORDS] = {~0ull, ~0ull, ~0ull, ~0ull,
	                                               ~0ull, ~0ull, ~0ull, ~0ull};
	for (size_t at = 0; at < bytes; at += 64)
		n = bfi__and_line_avx2(rows, k, at, base + (uint32_t)(at * 8),
		                       at + 64 < bytes ? whole : last, out, n);
	return n;
}

/*
 * Short rows (BFI_SHORT_ROW): the whole row is one or two of a stream's
 * look-ahead, and a batch has asked for every line already, so the long
 * rows' two passes and prefetches are bookkeeping with nothing to
 * overlap. Each line is finished at once, with the same early exit (and
 * so the same byte count). Appends to out from n; returns the new count.
 */
__attribute__((target("avx2,bmi"))) static inline size_t
bfi__and_short_avx2(const uint8_t *const *rows, uint32_t k, size_t bytes, uint32_t base,
                    uint32_t limit, uint32_t *out, size_t n, uint64_t *touched)
{
	uint64_t lines = 0;
	uint32_t first = k > 1 ? 2 : 1;
	for (size_t at = 0; at < bytes; at += 64) {
		lines += first;
		n = bfi__finish_line(rows, k, first, at, base, limit, out, n, &lines);
	}
	if (touched)
		*touched += lines * 64;
	return n;
}

/* Does the 64-byte line hold every bit of mask (in file order)? vptest's carry, twice. */
__attribute__((target("avx2"))) static inline int bfi__line_holds_avx2(const uint8_t *line,
                                                                        const uint64_t *mask)
{
	return _mm256_testc_si256(_mm256_loadu_si256((const __m256i *)line),
	                          _mm256_loadu_si256((const __m256i *)mask)) &
	       _mm256_testc_si256(_mm256_loadu_si256((const __m256i *)(line + 32)),
	                          _mm256_loadu_si256((const __m256i *)(mask + 4)));
}
#else
#define bfi__line_holds_avx2 bfi__line_holds
#endif

#endif
