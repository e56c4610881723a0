/*
 * kernel.c - AND the k rows of a flat block and list the bits left set.
 *
 * Rows are 64-byte aligned and a multiple of 64 bytes long, so both
 * kernels walk them a cache line at a time: AND row 0 with row 1 (a line
 * of one row alone is rarely zero, so no test between them), then each
 * further row only while the line is not yet zero, and move on as soon as
 * it is. On sparse filters most lines of rows 2..k-1 are never
 * loaded. Bits are listed with tzcnt. The AVX2 kernel also prefetches the
 * lines of rows 0 and 1 that it reads next, since those two streams are
 * always read in full, and finishes the lines that survive them in a second
 * pass, after asking for their other rows (below).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "line.h"

#define LINE_WORDS BFI_LINE_WORDS
#define PREFETCH_LINES 16 /* how far ahead rows 0 and 1 are prefetched */

size_t bfi__and_rows_portable(const uint8_t *const *rows, uint32_t k, size_t words, uint32_t base,
                              uint32_t limit, uint32_t *out, uint64_t *touched)
{
	size_t n = 0;
	uint64_t lines = 0;
	/* Rows 0 and 1 are always ANDed (a line of one row alone is rarely
	 * zero), then each further row only while the line is not zero. */
	uint32_t first = k > 1 ? 2 : 1;
	const uint64_t *r0 = (const uint64_t *)rows[0], *r1 = (const uint64_t *)rows[first - 1];
	for (size_t w0 = 0; w0 < words; w0 += LINE_WORDS) {
		uint64_t acc[LINE_WORDS], any = 0;
		for (int j = 0; j < LINE_WORDS; j++)
			any |= acc[j] = r0[w0 + j] & r1[w0 + j];
		lines += first;
		for (uint32_t i = first; i < k && any; i++) {
			const uint64_t *ri = (const uint64_t *)rows[i] + w0;
			any = 0;
			for (int j = 0; j < LINE_WORDS; j++)
				any |= acc[j] &= ri[j];
			lines++;
			/* as in the AVX2 kernel: row 2 alone, then one test per two rows */
			if (i > first && ++i < k) {
				ri = (const uint64_t *)rows[i] + w0;
				any = 0;
				for (int j = 0; j < LINE_WORDS; j++)
					any |= acc[j] &= ri[j];
				lines++;
			}
		}
		if (!any)
			continue;
		for (int j = 0; j < LINE_WORDS; j++)
			n = bfi__emit(le64toh(acc[j]), (w0 + (uint64_t)j) * 64, base, limit, out, n);
	}
	if (touched)
		*touched += lines * 64;
	return n;
}

void bfi__and_rows_mask(const uint8_t *const *rows, size_t n, size_t words, const uint64_t *mask,
                        uint64_t *out, uint64_t *touched)
{
	uint64_t lines = 0;
	for (size_t w0 = 0; w0 < words; w0 += LINE_WORDS) {
		uint64_t acc[LINE_WORDS], any = 0;
		for (int j = 0; j < LINE_WORDS; j++)
			any |= acc[j] = mask ? mask[w0 + j] : ~0ull;
		for (size_t i = 0; i < n && any; i++) {
			const uint64_t *ri = (const uint64_t *)rows[i] + w0;
			any = 0;
			for (int j = 0; j < LINE_WORDS; j++)
				any |= acc[j] &= ri[j];
			lines++;
		}
		memcpy(out + w0, acc, sizeof acc);
	}
	if (touched)
		*touched += lines * 64;
}

static bfi_and_fn chosen; /* by bfi__and_rows, or a test */

void bfi__use_kernel(bfi_and_fn f)
{
	__atomic_store_n(&chosen, f, __ATOMIC_RELAXED);
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
/*
 * Two passes over a stretch of the rows. The first streams rows 0 and 1
 * and notes the lines whose AND is not zero (CANDIDATES at most), asking
 * at once for those lines of rows 2 .. k - 1; the second finishes only
 * the noted lines (bfi__finish_line, line.h). In one pass, a line that
 * survives rows 0 and 1 loads row 2 from memory and the stream waits on
 * it: on sparse rows a few such lines per row, and the line of the set
 * that holds the key, each cost a round trip. Noted early, their loads
 * overlap the stream.
 */
#define CANDIDATES 64
#define REST_AHEAD 6 /* rows after the first two asked for, per noted line */

__attribute__((target("avx2,bmi")))
size_t bfi__and_rows_avx2(const uint8_t *const *rows, uint32_t k, size_t words, uint32_t base,
                          uint32_t limit, uint32_t *out, uint64_t *touched)
{
	size_t n = 0;
	uint64_t lines = 0;
	uint32_t first = k > 1 ? 2 : 1;
	uint32_t rest = k - first < REST_AHEAD ? k - first : REST_AHEAD;
	const uint8_t *r0 = rows[0], *r1 = rows[first - 1];
	size_t bytes = words * 8;
	if (bytes <= BFI_SHORT_ROW)
		return bfi__and_short_avx2(rows, k, bytes, base, limit, out, 0, touched);
	__m256i a, b;
	/* Ramp up: ask for the first lines of both streams at once. */
	for (size_t off = 0; off < bytes && off < PREFETCH_LINES * 64; off += 64) {
		_mm_prefetch((const char *)r0 + off, _MM_HINT_T0);
		_mm_prefetch((const char *)r1 + off, _MM_HINT_T0);
	}
	for (size_t from = 0; from < bytes;) {
		uint32_t cand[CANDIDATES], nc = 0;
		size_t off = from;
		for (; off < bytes && nc < CANDIDATES; off += 64) {
			if (off + PREFETCH_LINES * 64 < bytes) {
				_mm_prefetch((const char *)r0 + off + PREFETCH_LINES * 64, _MM_HINT_T0);
				_mm_prefetch((const char *)r1 + off + PREFETCH_LINES * 64, _MM_HINT_T0);
			}
			BFI_AND01(off);
			lines += first;
			__m256i ab = _mm256_or_si256(a, b);
			if (_mm256_testz_si256(ab, ab))
				continue;
			cand[nc++] = (uint32_t)((off - from) / 64);
			for (uint32_t i = first; i < first + rest; i++)
				_mm_prefetch((const char *)rows[i] + off, _MM_HINT_T0);
		}
		for (uint32_t c = 0; c < nc; c++)
			n = bfi__finish_line(rows, k, first, from + (size_t)cand[c] * 64, base, limit, out, n,
			                &lines);
		from = off;
	}
	if (touched)
		*touched += lines * 64;
	return n;
}

/* BFI_KERNEL=portable forces the portable kernel, to compare the two; any other value, the default. */
static int force_portable(void)
{
	const char *e = getenv("BFI_KERNEL");
	return e && strcmp(e, "portable") == 0;
}

bfi_and_fn bfi__and_rows(void)
{
	bfi_and_fn f = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
	if (f == NULL) {
		__builtin_cpu_init();
		f = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
		            !force_portable()
		        ? bfi__and_rows_avx2
		        : bfi__and_rows_portable;
		__atomic_store_n(&chosen, f, __ATOMIC_RELAXED);
	}
	return f;
}
#else
size_t bfi__and_rows_avx2(const uint8_t *const *rows, uint32_t k, size_t words, uint32_t base,
                          uint32_t limit, uint32_t *out, uint64_t *touched)
{
	return bfi__and_rows_portable(rows, k, words, base, limit, out, touched);
}

bfi_and_fn bfi__and_rows(void)
{
	bfi_and_fn f = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
	return f ? f : bfi__and_rows_portable;
}
#endif
