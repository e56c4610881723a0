/*
 * test_kernel.c - the AVX2 and portable kernels give identical answers and
 * byte counts on rows of every density, length and k, including padding
 * bits that a damaged file might set. Rows of one to four lines, which the
 * AVX2 kernel finishes without its two passes, get cases of their own.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "test.h"

static void test_kernels_agree(void)
{
	uint64_t s = 3;
	enum { MAXW = 1024 };
	uint8_t *mem = aligned_alloc(64, BFI_MAX_K * MAXW * 8);
	uint32_t *a = malloc(MAXW * 64 * sizeof *a), *b = malloc(MAXW * 64 * sizeof *b);
	int cases = 0;
	for (int t = 0; t < 4500; t++) {
		uint32_t k = 1 + (uint32_t)(test_rand(&s) % BFI_MAX_K);
		size_t words = 8 * (1 + (size_t)(test_rand(&s) % (t < 1500 ? 4 : MAXW / 8)));
		/* density of ones: from all-ones to about 1 in 2^12 */
		int sparsity = (int)(test_rand(&s) % 13);
		const uint8_t *rows[BFI_MAX_K];
		for (uint32_t i = 0; i < k; i++) {
			uint64_t *r = (uint64_t *)(mem + (size_t)i * MAXW * 8);
			for (size_t w = 0; w < words; w++) {
				uint64_t x = ~0ull;
				for (int d = 0; d < sparsity; d++)
					x &= test_rand(&s);
				r[w] = x;
			}
			rows[i] = (const uint8_t *)r;
		}
		uint32_t limit = (uint32_t)(words * 64 - test_rand(&s) % 64 * (t % 2));
		uint32_t base = (uint32_t)(test_rand(&s) % 1000000);
		uint64_t ta = 0, tb = 0;
		size_t na = bfi__and_rows_portable(rows, k, words, base, limit, a, &ta);
		size_t nb = bfi__and_rows_avx2(rows, k, words, base, limit, b, &tb);
		EXPECT(na == nb);
		EXPECT(ta == tb);
		if (na == nb)
			EXPECT(memcmp(a, b, na * sizeof *a) == 0);
		/* Against a bit-by-bit reference. */
		size_t nr = 0, bad = 0;
		for (uint32_t j = 0; j < limit; j++) {
			int all = 1;
			for (uint32_t i = 0; i < k && all; i++)
				all = rows[i][j / 8] >> (j % 8) & 1;
			if (all && (nr >= na || a[nr++] != base + j))
				bad++;
		}
		EXPECT(bad == 0 && nr == na);
		EXPECT(ta >= words * 8 && ta <= (uint64_t)k * words * 8);
		cases++;
	}
	EXPECT(cases == 4500);
	free(mem);
	free(a);
	free(b);
}

int main(void)
{
	test_run("kernel: AVX2 and portable agree with a bitwise reference", test_kernels_agree);
	return test_exit();
}
